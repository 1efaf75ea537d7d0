/* Sorted, disjoint lists of pieces [lo, hi) of a block (fixed point,
 * SCHED_ONE = one block), each with a (count, hash) of what was folded
 * into it: what the verifier tracks per (node, block), explicitly
 * (verify*.c) or by symmetry (verify_reduced*.c). */
#include "sched/internal.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

uint64_t sched_mix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

void seglist_push(struct seglist *l, struct seg s)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 4;
		l->v = xreallocarray(l->v, l->cap, sizeof(struct seg));
	}
	l->v[l->n++] = s;
}

bool seglist_covers(const struct seglist *l, uint32_t lo, uint32_t hi)
{
	for (uint32_t i = 0; i < l->n && lo < hi; i++) {
		if (l->v[i].hi <= lo)
			continue;
		if (l->v[i].lo > lo)
			return false;
		lo = l->v[i].hi;
	}
	return lo >= hi;
}

uint64_t seglist_add(struct seglist *l, uint32_t lo, uint32_t hi)
{
	/* Built aside (on the stack when short: an add leaves at most one more
	 * segment) and copied back, so a list is not reallocated on every
	 * delivery. */
	struct seg stack[32];
	struct seglist out = {0, 32, stack};
	uint64_t overlap = 0;
	bool placed = false;

	if (l->n + 1 > out.cap) {
		out.cap = l->n + 1;
		out.v = xreallocarray(NULL, out.cap, sizeof(struct seg));
	}
	for (uint32_t i = 0; i < l->n; i++) {
		struct seg s = l->v[i];

		if (s.hi < lo || s.lo > hi) { /* disjoint, not touching */
			if (!placed && s.lo > hi) {
				out.v[out.n++] = (struct seg){lo, hi, 1, 0};
				placed = true;
			}
			out.v[out.n++] = s;
			continue;
		}
		uint32_t a = s.lo > lo ? s.lo : lo, b = s.hi < hi ? s.hi : hi;
		if (b > a)
			overlap += b - a;
		lo = s.lo < lo ? s.lo : lo;
		hi = s.hi > hi ? s.hi : hi;
	}
	if (!placed)
		out.v[out.n++] = (struct seg){lo, hi, 1, 0};
	if (out.n > l->cap) {
		l->cap = out.n < 4 ? 4 : out.n;
		l->v = xreallocarray(l->v, l->cap, sizeof(struct seg));
	}
	memcpy(l->v, out.v, out.n * sizeof(struct seg));
	l->n = out.n;
	if (out.v != stack)
		free(out.v);
	return overlap;
}

void seglist_fold(struct seglist *l, uint32_t lo, uint32_t hi, bool reduce, uint32_t count,
		  uint64_t hash)
{
	/* The new list is built aside (on the stack when short: one fold
	 * adds at most two segments) and copied over the old one, so a list
	 * is not reallocated on every delivery. */
	struct seg stack[32];
	struct seglist out = {0, 32, stack};

	if (l->n + 2 > out.cap) {
		out.cap = l->n + 2;
		out.v = xreallocarray(NULL, out.cap, sizeof(struct seg));
	}
	for (uint32_t i = 0; i < l->n; i++) {
		struct seg s = l->v[i];
		uint32_t cut[4] = {s.lo, s.hi, s.hi, s.hi};
		unsigned nc = 1;

		/* Split s at lo and hi when they fall inside it. */
		if (lo > s.lo && lo < s.hi)
			cut[nc++] = lo;
		if (hi > s.lo && hi < s.hi)
			cut[nc++] = hi;
		cut[nc++] = s.hi;
		for (unsigned k = 0; k + 1 < nc; k++) {
			struct seg p = {cut[k], cut[k + 1], s.count, s.hash};

			if (p.lo >= p.hi)
				continue;
			if (p.lo >= lo && p.hi <= hi) {
				p.count = reduce ? p.count + count : count;
				p.hash = reduce ? p.hash + hash : hash;
			}
			/* Merge with an equal neighbour to keep lists short. */
			if (out.n && out.v[out.n - 1].hi == p.lo &&
			    out.v[out.n - 1].count == p.count && out.v[out.n - 1].hash == p.hash)
				out.v[out.n - 1].hi = p.hi;
			else
				out.v[out.n++] = p;
		}
	}
	if (out.n > l->cap) {
		l->cap = out.n;
		l->v = xreallocarray(l->v, l->cap, sizeof(struct seg));
	}
	memcpy(l->v, out.v, out.n * sizeof(struct seg));
	l->n = out.n;
	if (out.v != stack)
		free(out.v);
}

/* ---- piece tables ------------------------------------------------------------ */

/* Fibonacci hashing: the product's top bits (the middle ones cluster keys
 * like node N^2 + o N + t when N is a power of two). cap: a power of two. */
static size_t piece_hash(uint64_t key, size_t cap)
{
	return cap > 1 ? (size_t)((key * 0x9e3779b97f4a7c15ull) >> (64 - __builtin_ctzll(cap))) : 0;
}

/* key's first slot in a table of cap. By block (piecemap_blocks): block b
 * of key node * nblocks + b owns slots b * per .. b * per + per - 1 (per =
 * cap / nblocks, a power of two) and the node picks one of them. */
static size_t piece_home(const struct piecemap *m, uint64_t key, size_t cap)
{
	if (!m->nblocks)
		return piece_hash(key, cap);
	uint64_t node = key / m->nblocks, block = key - node * m->nblocks;
	size_t per = cap / m->nblocks;
	uint32_t bits = (uint32_t)__builtin_ctzll(per);

	return (size_t)block * per +
	       (bits ? (size_t)(((uint32_t)node * 0x9e3779b9u) >> (32 - bits)) : 0);
}

/* A table of millions of keys is a cache miss per lookup; on huge pages
 * (THP "madvise") it is rarely a TLB miss as well. Not zeroed; free(). */
void *sched_huge_alloc(size_t bytes)
{
	return xmalloc_huge(bytes);
}

static struct piece_slot *piece_table(size_t cap)
{
	struct piece_slot *e = sched_huge_alloc(cap * sizeof(struct piece_slot));

	for (size_t i = 0; i < cap; i++)
		e[i] = (struct piece_slot){.key = PIECE_KEY_NONE};
	return e;
}

static void piecemap_grow(struct piecemap *m, size_t cap)
{
	struct piece_slot *e = piece_table(cap);

	for (size_t i = 0; i < m->cap; i++)
		if (m->e[i].key != PIECE_KEY_NONE) {
			size_t h = piece_home(m, m->e[i].key, cap);

			while (e[h].key != PIECE_KEY_NONE)
				h = h + 1 < cap ? h + 1 : 0;
			e[h] = m->e[i];
		}
	free(m->e);
	m->e = e;
	m->cap = cap;
}

void piecemap_dense(struct piecemap *m, size_t nkeys)
{
	m->dense = xcalloc(nkeys ? nkeys : 1, sizeof(struct piece));
	m->ndense = nkeys;
}

void piecemap_hashed(struct piecemap *m, size_t nkeys)
{
	size_t cap = 1024;

	while (cap * 3 / 4 < nkeys)
		cap *= 2;
	piecemap_grow(m, cap);
}

void piecemap_blocks(struct piecemap *m, uint64_t nblocks, size_t nkeys)
{
	size_t per = 1;

	while ((double)nblocks * per * 3 / 4 < (double)nkeys)
		per *= 2;
	m->nblocks = nblocks;
	piecemap_grow(m, (size_t)nblocks * per);
}

static bool piece_empty(const struct piece *e)
{
	return e->lo == e->hi;
}

struct piece *piecemap_get(struct piecemap *m, uint64_t key, bool create)
{
	if (m->dense) {
		if (key >= m->ndense || (!create && piece_empty(&m->dense[key])))
			return NULL;
		return &m->dense[key];
	}
	/* Up to 3/4 full: linear probing then looks at about 2.5 slots (one
	 * cache line, two at most) where 1/2 took 1.5, and the table, whose
	 * fresh pages the kernel zeroes slowly here, is a third smaller. */
	if (create && (m->used + 1) * 4 > m->cap * 3)
		piecemap_grow(m, m->cap ? m->cap * 2 : 1024);
	if (!m->cap)
		return NULL;
	size_t h = piece_home(m, key, m->cap);
	while (m->e[h].key != PIECE_KEY_NONE) {
		if (m->e[h].key == key)
			return &m->e[h].p;
		h = h + 1 < m->cap ? h + 1 : 0;
	}
	if (!create)
		return NULL;
	m->e[h] = (struct piece_slot){.key = key};
	m->used++;
	return &m->e[h].p;
}

void piecemap_prefetch(const struct piecemap *m, uint64_t key)
{
	if (m->dense) {
		if (key < m->ndense)
			__builtin_prefetch(&m->dense[key]);
	} else if (m->cap) {
		__builtin_prefetch(&m->e[piece_home(m, key, m->cap)]);
	}
}

bool piece_covers(const struct piecemap *m, const struct piece *e, uint32_t lo, uint32_t hi)
{
	if (!e)
		return false;
	if (e->lo != PIECE_LIST)
		return e->lo <= lo && hi <= e->hi;
	return seglist_covers(&m->lists[e->hi], lo, hi);
}

bool piece_whole(const struct piece *e)
{
	return e->lo == 0 && e->hi == SCHED_ONE;
}

uint64_t piece_add(struct piecemap *m, struct piece *e, uint32_t lo, uint32_t hi)
{
	if (e->lo != PIECE_LIST) {
		if (e->lo == e->hi) { /* empty */
			e->lo = lo;
			e->hi = hi;
			return 0;
		}
		if (!(e->hi < lo || e->lo > hi)) { /* overlapping or touching */
			uint32_t a = e->lo > lo ? e->lo : lo, b = e->hi < hi ? e->hi : hi;

			e->lo = e->lo < lo ? e->lo : lo;
			e->hi = e->hi > hi ? e->hi : hi;
			return b > a ? b - a : 0;
		}
		if (m->nlists == m->cap_lists)
			GROW(m->lists, m->cap_lists, m->nlists + 1);
		struct seglist *l = &m->lists[m->nlists];
		memset(l, 0, sizeof(*l));
		seglist_push(l, (struct seg){e->lo, e->hi, 1, 0});
		e->lo = PIECE_LIST;
		e->hi = (uint32_t)m->nlists++;
	}
	struct seglist *l = &m->lists[e->hi];
	uint64_t ov = seglist_add(l, lo, hi);
	if (l->n == 1) { /* one piece again: back inline (the list slot idles) */
		e->lo = l->v[0].lo;
		e->hi = l->v[0].hi;
		free(l->v);
		memset(l, 0, sizeof(*l));
	}
	return ov;
}

void piece_clear(struct piecemap *m, struct piece *e)
{
	if (e->lo == PIECE_LIST) {
		free(m->lists[e->hi].v);
		memset(&m->lists[e->hi], 0, sizeof(struct seglist));
	}
	*e = (struct piece){0};
}

void piecemap_free(struct piecemap *m)
{
	for (size_t i = 0; i < m->nlists; i++)
		free(m->lists[i].v);
	free(m->lists);
	free(m->e);
	free(m->dense);
	memset(m, 0, sizeof(*m));
}

/* ---- the all-to-all checks by sorting ----------------------------------------------- */

void piece_numbers_init(struct piece_numbers *p, unsigned bits)
{
	p->max = bits >= SCHED_PIECE_BITS - 1 ? SCHED_PIECES : 1u << bits;
	p->n = 0;
	memset(p->slot, 0, sizeof(p->slot));
}

/* The number of the piece [lo, hi), numbered on first sight; when there
 * are more than p->max, pieces go unnumbered (n 0). */
uint64_t piece_number(struct piece_numbers *p, uint32_t lo, uint32_t hi)
{
	uint64_t k = (uint64_t)lo << 32 | hi;
	size_t h = (size_t)((k * 0x9e3779b97f4a7c15ull) >> (64 - SCHED_PIECE_BITS));

	for (; p->slot[h]; h = (h + 1) & (2 * SCHED_PIECES - 1))
		if (p->piece[p->slot[h] - 1].lo == lo && p->piece[p->slot[h] - 1].hi == hi)
			return p->slot[h] - 1;
	if (p->n == p->max) {
		p->n = 0;
		return 0;
	}
	p->piece[p->n] = (struct piece){lo, hi};
	p->slot[h] = (uint16_t)++p->n;
	return p->n - 1;
}

/* Up to 11 bits a pass and no more than n's (counting 2^11 digits to sort
 * a few events would cost more than the events). */
uint64_t *sched_sort_top(uint64_t *ev, uint64_t *tmp, size_t n, unsigned shift)
{
	unsigned most = n > 1 ? 64 - (unsigned)__builtin_clzll(n - 1) : 1;
	most = most < 4 ? 4 : most > 11 ? 11 : most;
	unsigned passes = (shift + most - 1) / most,
		 bits = passes ? (shift + passes - 1) / passes : 0;
	size_t count[(1u << 11) + 1];
	uint64_t *src = ev, *dst = tmp, mask = (1ull << bits) - 1;

	for (unsigned k = 0, at = 64 - shift; k < passes && n > 1; k++, at += bits) {
		memset(count, 0, ((size_t)mask + 2) * sizeof(size_t));
		for (size_t i = 0; i < n; i++)
			count[((src[i] >> at) & mask) + 1]++;
		for (size_t b = 1; b <= mask; b++)
			count[b] += count[b - 1];
		for (size_t i = 0; i < n; i++)
			dst[count[(src[i] >> at) & mask]++] = src[i];
		uint64_t *x = src;
		src = dst;
		dst = x;
	}
	return src;
}

/* ---- fold tables --------------------------------------------------------------- */

void foldmap_init(struct foldmap *m, size_t nkeys)
{
	memset(m, 0, sizeof(*m));
	m->e = sched_huge_alloc(nkeys * sizeof(struct fold));
	m->n = nkeys;
}

const struct seg *fold_pieces(const struct foldmap *m, const struct fold *e, struct seg buf[2],
			      uint32_t *n)
{
	if (e->cut == FOLD_LIST) {
		*n = m->lists[e->count[0]].n;
		return m->lists[e->count[0]].v;
	}
	buf[0] = (struct seg){0, e->cut, e->count[0], e->hash[0]};
	buf[1] = (struct seg){e->cut, SCHED_ONE, e->count[1], e->hash[1]};
	*n = e->cut < SCHED_ONE ? 2 : 1;
	return buf;
}

/* One piece, or two (lo < cut < hi) inline; e->mark stays. */
static void fold_set(struct fold *e, uint32_t cut, uint32_t c0, uint64_t h0, uint32_t c1,
		     uint64_t h1)
{
	e->cut = cut;
	e->count[0] = c0;
	e->count[1] = c1;
	e->hash[0] = h0;
	e->hash[1] = h1;
}

/* l's one or two pieces (it covers [0, SCHED_ONE), as every entry) inline. */
static void fold_inline(struct fold *e, const struct seglist *l)
{
	if (l->n == 1)
		fold_set(e, SCHED_ONE, l->v[0].count, l->v[0].hash, 0, 0);
	else
		fold_set(e, l->v[0].hi, l->v[0].count, l->v[0].hash, l->v[1].count, l->v[1].hash);
}

uint32_t foldmap_list(struct foldmap *m)
{
	if (m->nidle)
		return m->idle[--m->nidle];
	if (m->nlists == m->cap_lists)
		GROW(m->lists, m->cap_lists, m->nlists + 1);
	memset(&m->lists[m->nlists], 0, sizeof(struct seglist));
	return (uint32_t)m->nlists++;
}

void foldmap_unlist(struct foldmap *m, uint32_t slot)
{
	free(m->lists[slot].v);
	memset(&m->lists[slot], 0, sizeof(struct seglist));
	if (m->nidle == m->cap_idle)
		GROW(m->idle, m->cap_idle, m->nidle + 1);
	m->idle[m->nidle++] = slot;
}

void fold_apply(struct foldmap *m, struct fold *e, uint32_t lo, uint32_t hi, bool reduce,
		uint32_t count, uint64_t hash)
{
	if (e->cut != FOLD_LIST) {
		/* The cases nearly every delivery is: the whole shard, or one of
		 * its two pieces (a ring's halves), without a list. */
		if (lo == 0 && hi == SCHED_ONE) {
			if (!reduce) {
				fold_set(e, SCHED_ONE, count, hash, 0, 0);
				return;
			}
			e->count[0] += count;
			e->hash[0] += hash;
			if (e->cut < SCHED_ONE) {
				e->count[1] += count;
				e->hash[1] += hash;
			}
			return;
		}
		if (e->cut < SCHED_ONE &&
		    ((lo == 0 && hi == e->cut) || (lo == e->cut && hi == SCHED_ONE))) {
			unsigned i = lo != 0;

			e->count[i] = reduce ? e->count[i] + count : count;
			e->hash[i] = reduce ? e->hash[i] + hash : hash;
			if (e->count[0] == e->count[1] && e->hash[0] == e->hash[1])
				fold_set(e, SCHED_ONE, e->count[0], e->hash[0], 0, 0);
			return;
		}
		/* One piece cut in two at lo or hi (a bidirectional ring's
		 * first half into a whole shard): as seglist_fold makes it. */
		if (e->cut == SCHED_ONE && (lo == 0) != (hi == SCHED_ONE)) {
			uint32_t c = reduce ? e->count[0] + count : count;
			uint64_t h = reduce ? e->hash[0] + hash : hash;

			if (c == e->count[0] && h == e->hash[0])
				return;
			if (lo == 0)
				fold_set(e, hi, c, h, e->count[0], e->hash[0]);
			else
				fold_set(e, lo, e->count[0], e->hash[0], c, h);
			return;
		}
		/* Else fold on the stack (one fold adds at most two pieces, so
		 * four never reallocate) and keep the result inline when it is
		 * two pieces at most, else as a list. */
		struct seg buf[4];
		struct seglist l = {0, 4, buf};

		fold_pieces(m, e, buf, &l.n); /* inline: written to buf */
		seglist_fold(&l, lo, hi, reduce, count, hash);
		if (l.n <= 2) {
			fold_inline(e, &l);
			return;
		}
		uint32_t slot = foldmap_list(m);
		struct seglist *d = &m->lists[slot];
		d->n = d->cap = l.n;
		d->v = xreallocarray(NULL, l.n, sizeof(struct seg));
		memcpy(d->v, buf, l.n * sizeof(struct seg));
		fold_set(e, FOLD_LIST, slot, 0, 0, 0);
		return;
	}
	uint32_t slot = e->count[0];
	struct seglist *l = &m->lists[slot];

	seglist_fold(l, lo, hi, reduce, count, hash);
	if (l->n <= 2) { /* inline again; the list's slot is free for another */
		fold_inline(e, l);
		foldmap_unlist(m, slot);
	}
}

void foldmap_free(struct foldmap *m)
{
	for (size_t i = 0; i < m->nlists; i++)
		free(m->lists[i].v);
	free(m->lists);
	free(m->idle);
	free(m->e);
	memset(m, 0, sizeof(*m));
}
