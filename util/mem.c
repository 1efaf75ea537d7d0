/* Allocation that aborts on failure, and growable strings. */
#include "util/util.h"

#include <fcntl.h>
#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static void (*oom_hook)(size_t asked);

void mem_on_oom(void (*fn)(size_t asked))
{
	oom_hook = fn;
}

void mem_oom(size_t n)
{
	if (oom_hook)
		oom_hook(n); /* does not return */
	fprintf(stderr, "ofc: out of memory allocating %zu bytes\n", n);
	abort();
}

static void oom(size_t n)
{
	mem_oom(n);
}

/* Large blocks (a schedule's transfers, the verifier's tables) on
 * transparent huge pages where the kernel gives them on request (THP
 * "madvise", Debian's default). A fresh 4 KiB page costs a fault, and on
 * a virtual machine a fault is dear: nearly half of `ofc schedule` on
 * hypercube:12 went to them (bench/results/memory.md, "Huge pages"). Only a hint:
 * where THP is off nothing changes, and a block from malloc's heap rather
 * than a mapping of its own lends the hint to its neighbours' pages, which
 * is harmless. The cost: a table touched sparsely holds 2 MiB where it
 * touches a byte, so it stays for blocks of 16 MiB and more, which ofc
 * fills or nearly. */
#define HUGE_MIN ((size_t)16 << 20)

static void *advise_huge_from(void *p, size_t n, size_t from)
{
#ifdef MADV_HUGEPAGE
	/* From the block's first page to its last, as glibc's own
	 * glibc.malloc.hugetlb=1 does: advising only the aligned inside
	 * would split malloc's mapping in three, and realloc, which moves a
	 * mapping by mremap only when it is one, would copy it instead. */
	if (n >= from) {
		uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
		uintptr_t lo = (uintptr_t)p & ~(page - 1);
		uintptr_t hi = ((uintptr_t)p + malloc_usable_size(p) + page - 1) & ~(page - 1);

		(void)madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
	}
#else
	(void)n;
	(void)from;
#endif
	return p;
}

static void *advise_huge(void *p, size_t n)
{
	return advise_huge_from(p, n, HUGE_MIN);
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p)
		oom(n);
	return advise_huge(p, n);
}

void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (!p)
		oom(size && n > SIZE_MAX / size ? SIZE_MAX : n * size);
	return advise_huge(p, n * size);
}

void *xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);

	if (!q)
		oom(n);
	return advise_huge(q, n);
}

void *xreallocarray(void *p, size_t n, size_t size)
{
	if (size && n > SIZE_MAX / size)
		oom(SIZE_MAX);
	return xrealloc(p, n * size);
}

/* A table its owner fills or reads at random (a schedule's transfers, a
 * hash of millions of keys): on huge pages from 2 MiB, one mapping
 * advised whole, so a later realloc still moves it by mremap. An aligned
 * block advised from its aligned start split glibc's mapping, and growing
 * a patch from 109 to 215 MB copied it into 4 KiB faults. Not zeroed. */
void *xmalloc_huge(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p)
		oom(n);
	return advise_huge_from(p, n, (size_t)2 << 20);
}

char *xstrdup(const char *s)
{
	return xstrndup(s, strlen(s));
}

char *xstrndup(const char *s, size_t n)
{
	/* (as strndup: at most n bytes, fewer where s ends first; callers
	 * bound a client's string by the most they keep) */
	n = strnlen(s, n);
	char *p = xmalloc(n + 1);

	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

char *xasprintf(const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	sb_vprintf(&sb, fmt, ap);
	va_end(ap);
	return sb_detach(&sb);
}

void grow_array(void **arr, size_t *cap, size_t need, size_t sz)
{
	size_t ncap;

	if (need <= *cap)
		return;
	ncap = *cap ? *cap : 8;
	while (ncap < need) {
		if (ncap > SIZE_MAX / 2)
			oom(SIZE_MAX);
		ncap *= 2;
	}
	*arr = xreallocarray(*arr, ncap, sz);
	*cap = ncap;
}

static void sb_reserve(struct strbuf *sb, size_t extra)
{
	size_t need = sb->len + extra + 1;

	if (need > sb->cap) {
		size_t ncap = sb->cap ? sb->cap : 64;

		while (ncap < need)
			ncap *= 2;
		sb->buf = xrealloc(sb->buf, ncap);
		sb->cap = ncap;
	}
}

void sb_add(struct strbuf *sb, const char *s, size_t n)
{
	sb_reserve(sb, n);
	memcpy(sb->buf + sb->len, s, n);
	sb->len += n;
	sb->buf[sb->len] = '\0';
}

void sb_puts(struct strbuf *sb, const char *s)
{
	sb_add(sb, s, strlen(s));
}

void sb_putc(struct strbuf *sb, char c)
{
	sb_add(sb, &c, 1);
}

void sb_vprintf(struct strbuf *sb, const char *fmt, va_list ap)
{
	va_list ap2;
	int n;

	va_copy(ap2, ap);
	sb_reserve(sb, 64);
	n = vsnprintf(sb->buf + sb->len, sb->cap - sb->len, fmt, ap);
	if (n < 0) {
		va_end(ap2);
		return;
	}
	if ((size_t)n >= sb->cap - sb->len) {
		sb_reserve(sb, (size_t)n);
		vsnprintf(sb->buf + sb->len, sb->cap - sb->len, fmt, ap2);
	}
	va_end(ap2);
	sb->len += (size_t)n;
}

void sb_printf(struct strbuf *sb, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	sb_vprintf(sb, fmt, ap);
	va_end(ap);
}

void sb_reset(struct strbuf *sb)
{
	sb->len = 0;
	if (sb->buf)
		sb->buf[0] = '\0';
}

void sb_free(struct strbuf *sb)
{
	free(sb->buf);
	sb->buf = NULL;
	sb->len = sb->cap = 0;
}

char *sb_detach(struct strbuf *sb)
{
	char *p = sb->buf ? sb->buf : xstrdup("");

	sb->buf = NULL;
	sb->len = sb->cap = 0;
	return p;
}

uint64_t mem_resident(void)
{
	char buf[128];
	unsigned long pages = 0, res = 0;
	int fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;

	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	if (sscanf(buf, "%lu %lu", &pages, &res) != 2)
		return 0;
	return (uint64_t)res * (uint64_t)sysconf(_SC_PAGESIZE);
}

/* Under AddressSanitizer (make check), LeakSanitizer's check at exit
 * stops every thread and reads each one's dynamic TLS (the netconf
 * plugin's libraries hold some). Up to LLVM 16 and GCC 13 its
 * __tls_get_addr interceptor takes a block that malloc happened to place
 * at one offset in its page for a pre-2.25 glibc header and reads through
 * it; the tracer then dies ("Tracer caught signal 11") and the program
 * exits 1 with no leak found (test_parallel's `ofc apply` of four NETCONF
 * switches, now and then). Without the interceptor the heap is checked as
 * before. ASAN_OPTIONS, where set, still decides. */
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define OFC_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(OFC_ASAN)
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "intercept_tls_get_addr=0";
}
#endif

/* What the program held when it was loaded: its code and its libraries'
 * relocated pages, which differ from one machine's packages to another's.
 * The request-memory limits count what a request holds on top of it, so
 * whether a request fits is the same on every machine. */
static uint64_t mem_base;

__attribute__((constructor)) static void mem_base_init(void)
{
	mem_base = mem_resident();
}

uint64_t mem_held(void)
{
	uint64_t now = mem_resident();

	return now > mem_base ? now - mem_base : 0;
}

uint64_t mem_physical(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);

	return pages > 0 && size > 0 ? (uint64_t)pages * (uint64_t)size : 0;
}

/* The allocator set for the engines' work, by the programs that run them
 * (ofc, ofc-planner). */
void mem_tune_for_engines(void)
{
#ifdef __GLIBC__
	/* Keep freed memory for the next allocation rather than give it back
	 * to the kernel and fault it in again: the LP solvers allocate and
	 * free their factorisation and matrix copies at every re-solve, and
	 * glibc's defaults (blocks past a moving threshold mapped alone, the
	 * heap's top trimmed past twice it) made the 256-GPU model W allgather
	 * fault 76,000 pages in, a third of its CPU time (16,000 so). Blocks
	 * of 4 MiB and more are still mapped alone and given back when freed:
	 * a higher threshold (32 MiB) saved few more faults and raised the
	 * genkautz:1024,4 MCF's peak from 380 to 525 MB. */
	mallopt(M_MMAP_THRESHOLD, 4 << 20);
	mallopt(M_TRIM_THRESHOLD, 256 << 20);
	/* One heap for every thread: the request's worker threads (the
	 * fluid engine's max flows and the period's checks) each got an
	 * arena of their own, whose freed blocks the others cannot reuse,
	 * so the peak depended on which thread ran what: the 1,024-GPU
	 * model W allgather peaked at 210, 242 or 268 MB from one build,
	 * 209-210 MB in every run with one arena, at the same CPU time
	 * (genkautz:1024,4's MCF with 2 threads: 438 -> 372 MB). */
	mallopt(M_ARENA_MAX, 1);
#endif
}
