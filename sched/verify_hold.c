/* The verifier's record of what nodes hold, as the checks read and
 * change it: counted interval lists (a general network's vertices), copy
 * mode's bitmap and pieces (whether a node holds a part, at the start of a
 * step), reduce mode's sums and their lists; and verify_fail, the one way
 * every check reports what it found wrong. */
#include "sched/verify_internal.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* ---- errors --------------------------------------------------------------- */

int verify_fail(struct vstate *v, uint32_t step, size_t xi, const char *fmt, ...)
{
	char what[200];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	v->r->ok = false;
	v->r->bad_step = step;
	v->r->bad_xfer = xi;
	if (xi < v->s->nxfers) {
		const struct xfer *x = &v->s->xfers[xi];

		/* a chunk's blocks are its shards from win->base, out of
		 * range ones as they were (verify_chunk.c) */
		uint64_t block =
		    x->block + (v->win && x->block < v->win->nblocks ? v->win->base : 0);

		snprintf(v->r->error, sizeof(v->r->error),
			 "step %u, transfer %u -> %u of block %llu [%.6g, %.6g): %s", step + 1,
			 x->src, x->dst, (unsigned long long)block, sched_frac(x->offset),
			 sched_frac(x->offset) + sched_frac(x->length), what);
	} else {
		snprintf(v->r->error, sizeof(v->r->error), "%s", what);
	}
	return -1;
}

/* ---- interval lists -------------------------------------------------------- */

struct seglist *verify_map_get(struct segmap *m, uint64_t key, bool create)
{
	if (create && (m->used + 1) * 2 > m->cap) {
		struct segmap g = {0};

		g.cap = m->cap ? m->cap * 2 : 1024;
		g.keys = xmalloc(g.cap * sizeof(uint64_t));
		g.vals = xcalloc(g.cap, sizeof(struct seglist));
		memset(g.keys, 0xff, g.cap * sizeof(uint64_t));
		for (size_t i = 0; i < m->cap; i++)
			if (m->keys[i] != EMPTY_KEY) {
				size_t h = (m->keys[i] * 0x9e3779b97f4a7c15ull) >> 20;

				for (h &= g.cap - 1; g.keys[h] != EMPTY_KEY;
				     h = (h + 1) & (g.cap - 1))
					;
				g.keys[h] = m->keys[i];
				g.vals[h] = m->vals[i];
			}
		g.used = m->used;
		free(m->keys);
		free(m->vals);
		*m = g;
	}
	if (!m->cap)
		return NULL;
	size_t h = ((key * 0x9e3779b97f4a7c15ull) >> 20) & (m->cap - 1);
	while (m->keys[h] != EMPTY_KEY) {
		if (m->keys[h] == key)
			return &m->vals[h];
		h = (h + 1) & (m->cap - 1);
	}
	if (!create)
		return NULL;
	m->keys[h] = key;
	m->used++;
	return &m->vals[h];
}

void verify_map_clear(struct segmap *m)
{
	for (size_t i = 0; i < m->cap; i++)
		if (m->keys[i] != EMPTY_KEY) {
			free(m->vals[i].v);
			m->vals[i] = (struct seglist){0};
			m->keys[i] = EMPTY_KEY;
		}
	m->used = 0;
}

void verify_map_free(struct segmap *m)
{
	verify_map_clear(m);
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof(*m));
}

static int cmp_u32v(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

/* Change a counted interval list over [lo, hi): add (dcount, dhash), or
 * (set) place (dcount, dhash) where nothing is. Absent = (0, 0). Returns -1
 * when a count would drop below 0 or set finds something there. */
int verify_seg_apply(struct seglist *l, uint32_t lo, uint32_t hi, int64_t dcount, uint64_t dhash,
		     bool set)
{
	uint32_t *pt = xmalloc((2 * (size_t)l->n + 2) * sizeof(uint32_t)), np = 0;
	struct seglist out = {0};
	int rc = 0;

	pt[np++] = lo;
	pt[np++] = hi;
	for (uint32_t i = 0; i < l->n; i++) {
		pt[np++] = l->v[i].lo;
		pt[np++] = l->v[i].hi;
	}
	qsort(pt, np, sizeof(uint32_t), cmp_u32v);
	uint32_t k = 0;

	for (uint32_t i = 0; i + 1 < np; i++) {
		uint32_t a = pt[i], b = pt[i + 1];

		if (a == b)
			continue;
		while (k < l->n && l->v[k].hi <= a)
			k++;
		int64_t c = 0;
		uint64_t h = 0;

		if (k < l->n && l->v[k].lo <= a) {
			c = l->v[k].count;
			h = l->v[k].hash;
		}
		if (a >= lo && b <= hi) {
			if (set && (c || h))
				rc = -1;
			c = set ? dcount : c + dcount;
			h = set ? dhash : h + dhash;
		}
		if (c < 0)
			rc = -1;
		if (c <= 0 && h == 0)
			continue;
		if (out.n && out.v[out.n - 1].hi == a && out.v[out.n - 1].count == (uint32_t)c &&
		    out.v[out.n - 1].hash == h)
			out.v[out.n - 1].hi = b;
		else
			seglist_push(&out, (struct seg){a, b, (uint32_t)c, h});
	}
	free(pt);
	free(l->v);
	*l = out;
	return rc;
}

/* ---- copy mode -------------------------------------------------------------- */

bool verify_holds(struct vstate *v, uint32_t node, uint64_t block, uint32_t lo, uint32_t hi)
{
	uint64_t key = (uint64_t)node * v->nblocks + block;

	if (v->cgrid)
		return origin_of(v, block) == node || parts_held(v, cell(v, node, block), lo, hi);
	if (origin_of(v, block) == node || bit_get(v, key))
		return true;
	return piece_covers(&v->map, piecemap_get(&v->map, key, false), lo, hi);
}

/* cgrid bits [a, a + k): whether all are set; set them, saying how many
 * were already. */
static bool bits_all(const uint64_t *w, uint64_t a, uint64_t k)
{
	for (; k && (a & 63); a++, k--)
		if (!((w[a >> 6] >> (a & 63)) & 1))
			return false;
	for (; k >= 64; a += 64, k -= 64)
		if (w[a >> 6] != ~0ull)
			return false;
	for (; k; a++, k--)
		if (!((w[a >> 6] >> (a & 63)) & 1))
			return false;
	return true;
}

uint64_t verify_bits_or(uint64_t *w, uint64_t a, uint64_t k)
{
	uint64_t had = 0;

	for (; k && (a & 63); a++, k--) {
		had += (w[a >> 6] >> (a & 63)) & 1;
		w[a >> 6] |= 1ull << (a & 63);
	}
	for (; k >= 64; a += 64, k -= 64) {
		had += popcount64(w[a >> 6]);
		w[a >> 6] = ~0ull;
	}
	for (; k; a++, k--) {
		had += (w[a >> 6] >> (a & 63)) & 1;
		w[a >> 6] |= 1ull << (a & 63);
	}
	return had;
}

/* Whether node holds [lo, hi) of each block of x's span (an all-gather's:
 * a node's own block is its origin's). */
bool verify_holds_span(struct vstate *v, uint32_t node, const struct xfer *x, uint32_t lo,
		       uint32_t hi)
{
	uint64_t b = x->block, nb = xfer_blocks(x), row = (uint64_t)node * v->nblocks;

	if (span_bits(v)) {
		if (node < b || node >= b + nb)
			return bits_all(v->cgrid, row + b, nb);
		return bits_all(v->cgrid, row + b, node - b) &&
		       bits_all(v->cgrid, row + node + 1, b + nb - node - 1);
	}
	for (uint64_t j = 0; j < nb; j++)
		if (!verify_holds(v, node, b + j, lo, hi))
			return false;
	return true;
}

/* ---- reduce mode ------------------------------------------------------------ */

/* The sender's value over [lo, hi) as pieces in v->pieces. */
void verify_reduce_pieces(struct vstate *v, uint64_t key, uint32_t lo, uint32_t hi)
{
	struct seg buf[2];
	uint32_t n;
	const struct seg *p = fold_pieces(&v->fold, &v->fold.e[key], buf, &n);

	v->npieces = 0;
	GROW(v->pieces, v->cap_pieces, n);
	for (uint32_t i = 0; i < n; i++) {
		uint32_t a = p[i].lo > lo ? p[i].lo : lo;
		uint32_t b = p[i].hi < hi ? p[i].hi : hi;

		if (b > a)
			v->pieces[v->npieces++] = (struct seg){a, b, p[i].count, p[i].hash};
	}
}

/* fold_apply on an rw entry: a list while it is in several pieces. */
void verify_rw_apply(struct vstate *v, struct rwhole *e, uint32_t lo, uint32_t hi, bool reduce,
		     uint32_t count, uint64_t hash)
{
	(void)count; /* rw keeps sums alone: its lists' counts are 0 */
	if (!(e->w & RW_LIST)) {
		if (lo == 0 && hi == SCHED_ONE) {
			rw_put(e, reduce, hash);
			return;
		}
		uint32_t slot = foldmap_list(&v->fold);

		seglist_push(&v->fold.lists[slot], (struct seg){0, SCHED_ONE, 0, rw_hash(e)});
		e->w = (uint64_t)slot << RW_SHIFT | RW_LIST | (e->w & RW_MARK);
	}
	uint32_t slot = (uint32_t)rw_hash(e);
	struct seglist *l = &v->fold.lists[slot];

	seglist_fold(l, lo, hi, reduce, 0, hash);
	if (l->n == 1) { /* one piece again */
		e->w = l->v[0].hash << RW_SHIFT | (e->w & RW_MARK);
		foldmap_unlist(&v->fold, slot);
	}
}
