/* A small map of 48-bit keys, open addressing (patch_check.h): the
 * patch's check and its expansion key the base's transfers by it. */
#include "sched/patch_check.h"

#include <stdlib.h>

void kmap_init(struct kmap *m, size_t expect)
{
	m->cap = 64;
	while (m->cap < expect * 2)
		m->cap *= 2;
	m->key = xcalloc(m->cap, sizeof(uint64_t));
	m->val = xmalloc(m->cap * sizeof(uint32_t));
	m->used = 0;
}

void kmap_free(struct kmap *m)
{
	free(m->key);
	free(m->val);
}

static size_t kmap_slot(const struct kmap *m, uint64_t key)
{
	size_t i = (size_t)(sched_mix64(key) & (m->cap - 1));

	while (m->key[i] && m->key[i] != key + 1)
		i = (i + 1) & (m->cap - 1);
	return i;
}

uint32_t *kmap_get(const struct kmap *m, uint64_t key)
{
	size_t i = kmap_slot(m, key);

	return m->key[i] ? &m->val[i] : NULL;
}

/* The value of key, made with v when new; grows at half full. */
uint32_t *kmap_put(struct kmap *m, uint64_t key, uint32_t v)
{
	if ((m->used + 1) * 2 > m->cap) {
		struct kmap big;

		kmap_init(&big, m->cap);
		for (size_t i = 0; i < m->cap; i++)
			if (m->key[i]) {
				size_t j = kmap_slot(&big, m->key[i] - 1);

				big.key[j] = m->key[i];
				big.val[j] = m->val[i];
				big.used++;
			}
		kmap_free(m);
		*m = big;
	}
	size_t i = kmap_slot(m, key);
	if (!m->key[i]) {
		m->key[i] = key + 1;
		m->val[i] = v;
		m->used++;
	}
	return &m->val[i];
}
