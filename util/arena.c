/* A bump allocator: blocks of at least 64 KiB, freed all at once. */
#include "util/util.h"

#include <stdlib.h>
#include <string.h>

struct arena_block {
	struct arena_block *next;
	size_t used, cap;
	max_align_t data[]; /* aligned for any type */
};

#define ARENA_BLOCK (64u << 10)

void *arena_alloc(struct arena *a, size_t n)
{
	struct arena_block *b = a->head;
	size_t need = (n + sizeof(max_align_t) - 1) & ~(sizeof(max_align_t) - 1);

	if (need < n)
		mem_oom(n);
	if (!b || b->cap - b->used < need) {
		size_t cap = need > ARENA_BLOCK ? need : ARENA_BLOCK;

		b = xmalloc(sizeof(*b) + cap);
		b->used = 0;
		b->cap = cap;
		b->next = a->head;
		a->head = b;
	}
	void *p = (char *)b->data + b->used;
	b->used += need;
	memset(p, 0, n);
	return p;
}

void *arena_array(struct arena *a, size_t n, size_t sz)
{
	if (sz && n > SIZE_MAX / sz)
		mem_oom(SIZE_MAX);
	return arena_alloc(a, n * sz);
}

char *arena_strdup(struct arena *a, const char *s)
{
	size_t n = strlen(s) + 1;
	char *p = arena_alloc(a, n);

	memcpy(p, s, n);
	return p;
}

char *arena_printf(struct arena *a, const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;
	char *p;

	va_start(ap, fmt);
	sb_vprintf(&sb, fmt, ap);
	va_end(ap);
	p = arena_strdup(a, sb.buf ? sb.buf : "");
	sb_free(&sb);
	return p;
}

void arena_free(struct arena *a)
{
	struct arena_block *b = a->head;

	while (b) {
		struct arena_block *next = b->next;

		free(b);
		b = next;
	}
	a->head = NULL;
}
