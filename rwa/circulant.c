/* RWA for shift-invariant demand sets on a ring by tilings.
 *
 * Every node u sends one lightpath to u + d for each offset d in a set D
 * (all-to-all: D = {1..N-1}; an OpTree stage on N = m*s nodes:
 * D = {s, 2s, ..., (m-1)s}). Routed shortest-way, each direction holds,
 * for every length l it uses, the whole "orbit" of l: one arc of length l
 * starting at every segment. The load of a segment is the sum of the
 * lengths, and that is what a tiling reaches:
 *
 *  - a bundle of distinct lengths l1..lj whose sum S divides N, laid end to
 *    end and repeated N/S times, tiles the ring exactly; its S rotations are
 *    S colours that contain every arc of those orbits exactly once
 *    (the arc of length l_i at segment x is in rotation
 *    (x - l1 - ... - l_(i-1)) mod S);
 *  - antipodal pairs (offset N/2) form one tiling each (both arcs of the
 *    pair on one colour of one direction), shared out between directions;
 *  - lengths that make no such bundle are bundled all the same (alone, or
 *    merged while that saves colours), and the ring is cut into
 *    q = floor(N / S) blocks of near-equal size (each >= S): a tile starting
 *    at segment y gets the index of y inside its block as its colour, so
 *    ceil(N / q) colours; for one length l that is the chromatic number of
 *    its orbit, the (l-1)-th power of the N-cycle (Prowse and Woodall 2003).
 *
 * Bundles are found greedily: for each divisor of N from the largest, the
 * longest unused lengths that add up to it exactly.
 *
 * For OpTree's even radices every length pairs up (t with m/2 - t sums to
 * m/2, a divisor of m), so stage 1 uses exactly its load: N*m/8 colours per
 * direction, the figure the paper's step count assumes (notes/optree.md).
 * All-to-all on N nodes gets N^2/8 (Lemma 1 of the paper) when 8 | N.
 */
#include "rwa/rwa.h"

#include <stdlib.h>
#include <string.h>

/* A bundle: lengths laid end to end (sum S), cut into q = floor(N/S)
 * blocks of near-equal size >= S. Its colours: ceil(N/q), which is S when S
 * divides N. */
struct bundle {
	uint32_t first, nlen; /* in cplan.len / cplan.ofs */
	uint32_t sum;
	uint32_t base; /* first colour */
	uint32_t colours;
};

struct cplan {
	uint32_t *len, *ofs; /* lengths of all bundles, grouped */
	struct bundle *b[3];
	uint32_t nb[3];
	uint32_t colours[3];
	uint32_t tie_ofs; /* offset index of N/2, or UINT32_MAX */
	uint32_t tie_cw;  /* antipodal pairs u = 0..tie_cw-1 go clockwise */
	uint32_t tie_base[3];
};

static uint32_t bundle_colours(uint32_t n, uint32_t sum)
{
	uint32_t q = n / sum;

	return (n + q - 1) / q;
}

/* Lengths l[0..m) sorted descending, all distinct. Greedy largest-first
 * subset of the unused ones summing to exactly target; marks them in pick. */
static bool subset_sum(const uint32_t *l, const bool *used, uint32_t m, uint32_t target, bool *pick)
{
	uint32_t rem = target;

	memset(pick, 0, m * sizeof(bool));
	for (uint32_t i = 0; i < m && rem; i++) {
		if (!used[i] && l[i] <= rem) {
			pick[i] = true;
			rem -= l[i];
		}
	}
	return rem == 0;
}

static int cmp_desc(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x < y) - (x > y);
}

/* One direction's bundles: lengths (key = length << 32 | offset index,
 * sorted descending) into out. Two greedy orders; plan() keeps the better. */
struct dirplan {
	struct bundle *b;
	uint32_t nb;
	uint32_t *len, *ofs, nall;
	uint32_t colours;
};

static void take(struct dirplan *o, const uint32_t *l, const uint64_t *key, uint32_t i)
{
	o->len[o->nall] = l[i];
	o->ofs[o->nall++] = (uint32_t)key[i];
}

static void bundle_dir(uint32_t n, const uint64_t *key, uint32_t m, bool pairs_first,
		       struct dirplan *o)
{
	uint32_t *l = xmalloc(((size_t)m + 1) * sizeof(uint32_t));
	bool *used = xcalloc((size_t)m + 1, sizeof(bool));
	bool *pick = xcalloc((size_t)m + 1, sizeof(bool));
	uint64_t total = 0;

	o->b = xmalloc(((size_t)m + 1) * sizeof(struct bundle));
	o->len = xmalloc(((size_t)m + 1) * sizeof(uint32_t));
	o->ofs = xmalloc(((size_t)m + 1) * sizeof(uint32_t));
	o->nb = o->nall = o->colours = 0;
	for (uint32_t i = 0; i < m; i++) {
		l[i] = (uint32_t)(key[i] >> 32);
		total += l[i];
	}
	/* Pairs: a length that does not divide n with a partner that makes a
	 * divisor (the longest first, preferring partners that need one too):
	 * OpTree's t and m/2 - t, all-to-all's l and n/2 - l. */
	for (int pass = 0; pairs_first && pass < 2; pass++)
		for (uint32_t i = 0; i < m; i++) {
			uint32_t best = UINT32_MAX;

			if (used[i] || n % l[i] == 0)
				continue;
			for (uint32_t k = 0; k < m; k++) {
				if (k == i || used[k] || n % (l[i] + l[k]) != 0)
					continue;
				if (pass == 0 && n % l[k] == 0)
					continue;
				if (best == UINT32_MAX || l[k] > l[best])
					best = k;
			}
			if (best == UINT32_MAX)
				continue;
			used[i] = used[best] = true;
			o->b[o->nb++] =
			    (struct bundle){o->nall, 2, l[i] + l[best], 0, l[i] + l[best]};
			take(o, l, key, i);
			take(o, l, key, best);
			total -= l[i] + l[best];
		}
	/* Subsets summing to a divisor of n, largest divisors first (they
	 * take the longest lengths); a length dividing n is one by itself. */
	for (uint32_t t = n; t >= 1; t--) {
		if (n % t || t > total)
			continue;
		while (t <= total && subset_sum(l, used, m, t, pick)) {
			o->b[o->nb] = (struct bundle){o->nall, 0, t, 0, t};
			for (uint32_t i = 0; i < m; i++)
				if (pick[i] && !used[i]) {
					used[i] = true;
					take(o, l, key, i);
					o->b[o->nb].nlen++;
				}
			total -= t;
			o->nb++;
		}
	}
	/* The rest alone, then merged while merging saves colours. */
	uint32_t lo = o->nb;
	struct bundle *b = o->b;
	for (uint32_t i = 0; i < m; i++)
		if (!used[i]) {
			b[o->nb++] = (struct bundle){o->nall, 1, l[i], 0, bundle_colours(n, l[i])};
			take(o, l, key, i);
		}
	while (o->nb - lo >= 2 && o->nb - lo <= 256) {
		uint32_t bi = 0, bj = 0, nb = o->nb;
		int64_t save = 0;

		for (uint32_t i = lo; i < nb; i++)
			for (uint32_t j = i + 1; j < nb; j++) {
				uint32_t sum = b[i].sum + b[j].sum;
				int64_t sv;

				if (sum >= n)
					continue;
				sv = (int64_t)b[i].colours + b[j].colours - bundle_colours(n, sum);
				if (sv > save) {
					save = sv;
					bi = i;
					bj = j;
				}
			}
		if (save <= 0)
			break;
		/* Lengths of bundle bj move next to those of bi. */
		uint32_t k = b[bj].nlen, at = b[bi].first + b[bi].nlen;
		uint32_t *tl = xmalloc(((size_t)k + 1) * sizeof(uint32_t));
		uint32_t *to = xmalloc(((size_t)k + 1) * sizeof(uint32_t));
		memcpy(tl, o->len + b[bj].first, k * sizeof(uint32_t));
		memcpy(to, o->ofs + b[bj].first, k * sizeof(uint32_t));
		memmove(o->len + at + k, o->len + at, (b[bj].first - at) * sizeof(uint32_t));
		memmove(o->ofs + at + k, o->ofs + at, (b[bj].first - at) * sizeof(uint32_t));
		for (uint32_t i = bi + 1; i < bj; i++)
			b[i].first += k;
		memcpy(o->len + at, tl, k * sizeof(uint32_t));
		memcpy(o->ofs + at, to, k * sizeof(uint32_t));
		free(tl);
		free(to);
		b[bi].nlen += k;
		b[bi].sum += b[bj].sum;
		b[bi].colours = bundle_colours(n, b[bi].sum);
		memmove(b + bj, b + bj + 1, (nb - bj - 1) * sizeof(*b));
		o->nb--;
	}
	for (uint32_t i = 0; i < o->nb; i++) {
		b[i].base = o->colours;
		o->colours += b[i].colours;
	}
	free(l);
	free(used);
	free(pick);
}

static void dirplan_free(struct dirplan *o)
{
	free(o->b);
	free(o->len);
	free(o->ofs);
}

static void plan(uint32_t n, const uint32_t *ofs, uint32_t nofs, struct cplan *p)
{
	uint64_t *key[3]; /* length << 32 | offset index, sorted descending */
	uint32_t nlen[3] = {0}, nall = 0;

	memset(p, 0, sizeof(*p));
	p->tie_ofs = UINT32_MAX;
	p->len = xmalloc(((size_t)nofs + 1) * sizeof(uint32_t));
	p->ofs = xmalloc(((size_t)nofs + 1) * sizeof(uint32_t));
	for (int d = 1; d <= 2; d++)
		key[d] = xmalloc(((size_t)nofs + 1) * sizeof(uint64_t));
	for (uint32_t j = 0; j < nofs; j++) {
		uint32_t d = ofs[j];

		if (2 * d == n)
			p->tie_ofs = j;
		else if (2 * d < n)
			key[RWA_CW][nlen[RWA_CW]++] = (uint64_t)d << 32 | j;
		else
			key[RWA_CCW][nlen[RWA_CCW]++] = (uint64_t)(n - d) << 32 | j;
	}
	for (int d = 1; d <= 2; d++) {
		struct dirplan a, b, *best;

		qsort(key[d], nlen[d], sizeof(uint64_t), cmp_desc);
		bundle_dir(n, key[d], nlen[d], true, &a);
		bundle_dir(n, key[d], nlen[d], false, &b);
		best = b.colours < a.colours ? &b : &a;
		p->b[d] = best->b;
		best->b = NULL;
		p->nb[d] = best->nb;
		p->colours[d] = best->colours;
		for (uint32_t i = 0; i < best->nb; i++)
			p->b[d][i].first += nall;
		memcpy(p->len + nall, best->len, best->nall * sizeof(uint32_t));
		memcpy(p->ofs + nall, best->ofs, best->nall * sizeof(uint32_t));
		nall += best->nall;
		dirplan_free(&a);
		dirplan_free(&b);
		free(key[d]);
	}
	if (p->tie_ofs != UINT32_MAX) {
		/* n/2 antipodal pairs, one colour each: balance the directions. */
		uint32_t pairs = n / 2, cw = 0;

		for (uint32_t k = 0; k < pairs; k++)
			if (p->colours[RWA_CW] + cw <= p->colours[RWA_CCW] + (k - cw))
				cw++;
		p->tie_cw = cw;
		p->tie_base[RWA_CW] = p->colours[RWA_CW];
		p->tie_base[RWA_CCW] = p->colours[RWA_CCW];
		p->colours[RWA_CW] += cw;
		p->colours[RWA_CCW] += pairs - cw;
	}
}

static void plan_free(struct cplan *p)
{
	free(p->b[1]);
	free(p->b[2]);
	free(p->len);
	free(p->ofs);
}

void rwa_circulant_colours(uint32_t n, const uint32_t *offsets, uint32_t noffsets,
			   uint32_t colours[3])
{
	struct cplan p;

	plan(n, offsets, noffsets, &p);
	memcpy(colours, p.colours, sizeof(p.colours));
	plan_free(&p);
}

/* Index of segment x inside its block when n is cut into q blocks, the
 * first n % q of them one longer. */
static uint32_t block_index(uint32_t n, uint32_t q, uint32_t x)
{
	uint32_t small = n / q, big = small + 1, nbig = n % q;

	if (x < nbig * big)
		return x % big;
	return (x - nbig * big) % small;
}

void rwa_circulant(uint32_t n, const uint32_t *offsets, uint32_t noffsets, struct rwa_solution *sol)
{
	struct cplan p;
	uint32_t *col = xmalloc(((size_t)noffsets + 1) * sizeof(uint32_t));
	uint8_t *dir = xmalloc((size_t)noffsets + 1);
	uint32_t base[3];

	plan(n, offsets, noffsets, &p);
	base[RWA_CW] = sol->colours[RWA_CW];
	base[RWA_CCW] = sol->colours[RWA_CCW];
	GROW(sol->runs, sol->cap, sol->nruns + (size_t)n * noffsets);
	for (uint32_t u = 0; u < n; u++) {
		for (int d = 1; d <= 2; d++)
			for (uint32_t i = 0; i < p.nb[d]; i++) {
				const struct bundle *b = &p.b[d][i];
				uint32_t before = 0, q = n / b->sum;

				for (uint32_t k = b->first; k < b->first + b->nlen; k++) {
					uint32_t l = p.len[k], j = p.ofs[k];
					/* First segment of u's arc of length l, and the
					 * start of the tile it belongs to. */
					uint32_t x = d == RWA_CW ? u : (u + n - l) % n;
					uint32_t y = (x + n - before) % n;

					col[j] = base[d] + b->base + block_index(n, q, y);
					dir[j] = (uint8_t)d;
					before += l;
				}
			}
		if (p.tie_ofs != UINT32_MAX) {
			uint32_t pair = u % (n / 2);

			if (pair < p.tie_cw) {
				dir[p.tie_ofs] = RWA_CW;
				col[p.tie_ofs] = base[RWA_CW] + p.tie_base[RWA_CW] + pair;
			} else {
				dir[p.tie_ofs] = RWA_CCW;
				col[p.tie_ofs] =
				    base[RWA_CCW] + p.tie_base[RWA_CCW] + (pair - p.tie_cw);
			}
		}
		for (uint32_t j = 0; j < noffsets; j++)
			sol->runs[sol->nruns++] =
			    (struct rwa_run){u * noffsets + j, col[j], 1, dir[j]};
	}
	for (int d = 1; d <= 2; d++)
		if (base[d] + p.colours[d] > sol->colours[d])
			sol->colours[d] = base[d] + p.colours[d];
	free(col);
	free(dir);
	plan_free(&p);
}
