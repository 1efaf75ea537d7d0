/* OpTree's levels and stages: who sends what to whom, routed and coloured.
 *
 * Stage 1 runs on the whole ring (arcs may go either way round); later
 * stages run inside groups of consecutive nodes, which are lines: traffic
 * stays inside its group (going round the ring would cross every other
 * group), forward pairs clockwise and backward pairs counter-clockwise.
 */
#include "optree/internal.h"

#include <stdlib.h>
#include <string.h>

void levels_free(struct levels *L)
{
	for (uint32_t i = 0; i <= OPTREE_MAX_DEPTH; i++) {
		free(L->start[i]);
		free(L->size[i]);
		free(L->child[i]);
	}
	memset(L, 0, sizeof(*L));
}

void levels_init(struct levels *L, uint32_t n, uint32_t depth)
{
	memset(L, 0, sizeof(*L));
	L->n = n;
	L->depth = depth;
	for (uint32_t i = 0; i <= depth && i <= OPTREE_MAX_DEPTH; i++) {
		L->start[i] = xmalloc(((size_t)n + 1) * sizeof(uint32_t));
		L->size[i] = xmalloc(((size_t)n + 1) * sizeof(uint32_t));
		L->child[i] = xmalloc(((size_t)n + 2) * sizeof(uint32_t));
	}
	L->ngroups[0] = 1;
	L->start[0][0] = 0;
	L->size[0][0] = n;
}

int levels_split(struct levels *L, uint32_t p, uint32_t m)
{
	uint32_t ng = 0, busy = 0, i = p + 1;
	bool uneven = false;

	for (uint32_t g = 0; g < L->ngroups[p]; g++) {
		uint32_t sz = L->size[p][g], c = sz < m ? sz : m, at = L->start[p][g];

		busy += sz >= 2;
		L->child[p][g] = ng;
		if (sz % c || sz != L->size[p][0])
			uneven = true;
		for (uint32_t k = 0; k < c; k++) {
			uint32_t s = sz / c + (k < sz % c);

			L->start[i][ng] = at;
			L->size[i][ng++] = s;
			at += s;
		}
	}
	L->child[p][L->ngroups[p]] = ng;
	L->ngroups[i] = ng;
	return busy ? (uneven ? 1 : 0) : -1;
}

int levels_build(uint32_t n, const uint32_t *radix, uint32_t depth, struct levels *L,
		 struct ofc_error *err)
{
	if (depth < 1 || depth > OPTREE_MAX_DEPTH) {
		memset(L, 0, sizeof(*L));
		return ofc_error_set(err, OFC_E_INPUT, "a plan has 1..%u stages", OPTREE_MAX_DEPTH);
	}
	levels_init(L, n, depth);
	for (uint32_t i = 1; i <= depth; i++) {
		int rc;

		if (radix[i - 1] < 2) {
			levels_free(L);
			return ofc_error_set(err, OFC_E_INPUT,
					     "radix %u of stage %u: must be 2 or more",
					     radix[i - 1], i);
		}
		rc = levels_split(L, i - 1, radix[i - 1]);
		if (rc < 0) {
			levels_free(L);
			return ofc_error_set(err, OFC_E_INPUT,
					     "stage %u has nothing to do: the radices before it "
					     "already reach single nodes",
					     i);
		}
		if (rc)
			L->uneven = true;
	}
	for (uint32_t g = 0; g < L->ngroups[depth]; g++)
		if (L->size[depth][g] != 1) {
			uint64_t prod = 1;

			for (uint32_t i = 0; i < depth; i++)
				prod *= radix[i];
			levels_free(L);
			return ofc_error_set(
			    err, OFC_E_INPUT,
			    "the radices multiply to %llu, fewer than the %u nodes",
			    (unsigned long long)prod, n);
		}
	return 0;
}

uint64_t line_stage_load(const struct levels *L, uint32_t i, const uint32_t *cnt, uint32_t *out,
			 int64_t *f, uint64_t *most)
{
	uint32_t n = L->n, p = i - 1;
	int64_t *cw = f, *ccw = f + n + 1, best = 0, a = 0, b = 0;

	*most = 0;

	memset(f, 0, 2 * ((size_t)n + 1) * sizeof(int64_t));
	memcpy(out, cnt, (size_t)n * sizeof(uint32_t));
	for (uint32_t g = 0; g < L->ngroups[p]; g++) {
		uint32_t c0 = L->child[p][g], c1 = L->child[p][g + 1];

		for (uint32_t x = c0; x < c1; x++)
			for (uint32_t j = 0; j < L->size[i][x]; j++) {
				uint32_t v = L->start[i][x] + j;

				for (uint32_t y = c0; y < c1; y++) {
					if (y == x)
						continue;
					uint32_t jj = j < L->size[i][y] ? j : L->size[i][y] - 1;
					uint32_t r = L->start[i][y] + jj;

					if (r > v) {
						cw[v] += cnt[v];
						cw[r] -= cnt[v];
					} else {
						ccw[r] += cnt[v];
						ccw[v] -= cnt[v];
					}
					out[r] += cnt[v];
				}
				/* Blocks v adds: all it holds, to each other child. */
				if ((uint64_t)cnt[v] * (c1 - c0 - 1) > *most)
					*most = (uint64_t)cnt[v] * (c1 - c0 - 1);
			}
	}
	for (uint32_t x = 0; x < n; x++) {
		if (out[x] - cnt[x] > *most)
			*most = out[x] - cnt[x]; /* blocks x drops */
		a += cw[x];
		b += ccw[x];
		if (a > best)
			best = a;
		if (b > best)
			best = b;
	}
	return (uint64_t)best;
}

void stage_rwa_free(struct stage_rwa *st)
{
	free(st->arc);
	rwa_solution_free(&st->sol);
	memset(st, 0, sizeof(*st));
}

/* Equal children in stage 1: u sends to u + t*s for t = 1..m-1. */
static bool stage1_regular(const struct levels *L, uint32_t *m, uint32_t *s)
{
	uint32_t c = L->ngroups[1], sz = L->size[1][0];

	if (c < 2 || (uint64_t)c * sz != L->n)
		return false;
	*m = c;
	*s = sz;
	return true;
}

static uint64_t max_load(uint32_t n, const struct ot_arc *arc, size_t narcs)
{
	struct rwa_load l;
	uint64_t best;

	rwa_load_init(&l, n);
	for (size_t k = 0; k < narcs; k++)
		rwa_load_add(&l, arc[k].src, arc[k].dst, arc[k].dir, arc[k].count);
	best = rwa_load_max(&l);
	rwa_load_free(&l);
	return best;
}

void stage_arcs(const struct levels *L, uint32_t i, const uint32_t *cnt, struct stage_rwa *st)
{
	uint32_t n = L->n, p = i - 1, m, s;
	size_t na = 0;

	memset(st, 0, sizeof(*st));
	st->line = i >= 2;
	for (uint32_t g = 0; g < L->ngroups[p]; g++) {
		uint32_t c0 = L->child[p][g], c1 = L->child[p][g + 1];

		na += (size_t)L->size[p][g] * (c1 - c0 - 1);
	}
	st->arc = xmalloc((na + 1) * sizeof(struct ot_arc));
	st->narcs = na;

	if (i == 1 && stage1_regular(L, &m, &s)) {
		/* Circulant: arcs in (node, offset) order, as rwa_circulant()
		 * numbers them; it also picks their directions. */
		st->m = m;
		st->s = s;
		for (uint32_t u = 0, k = 0; u < n; u++)
			for (uint32_t t = 1; t < m; t++, k++)
				st->arc[k] = (struct ot_arc){u, (u + t * s) % n, cnt[u], RWA_ANY};
		return;
	}

	/* Position j of a child sends to position min(j, size - 1) of every
	 * other child of the same group. */
	size_t k = 0;
	uint64_t ties = 0;
	for (uint32_t g = 0; g < L->ngroups[p]; g++) {
		uint32_t c0 = L->child[p][g], c1 = L->child[p][g + 1];

		for (uint32_t a = c0; a < c1; a++)
			for (uint32_t j = 0; j < L->size[i][a]; j++) {
				uint32_t v = L->start[i][a] + j;

				for (uint32_t b = c0; b < c1; b++) {
					if (b == a)
						continue;
					uint32_t jj = j < L->size[i][b] ? j : L->size[i][b] - 1;
					uint32_t r = L->start[i][b] + jj;
					uint8_t dir;

					if (i >= 2) {
						dir = r > v ? RWA_CW : RWA_CCW;
					} else {
						/* Shortest way; antipodal pairs alternate. */
						uint32_t cw = rwa_arc_len(n, v, r, RWA_CW);

						if (2 * cw != n)
							dir = 2 * cw < n ? RWA_CW : RWA_CCW;
						else
							dir = (ties++ & 1) ? RWA_CCW : RWA_CW;
					}
					st->arc[k++] = (struct ot_arc){v, r, cnt[v], dir};
				}
			}
	}
}

void stage_colour(const struct levels *L, uint32_t i, bool runs, struct stage_rwa *st)
{
	uint32_t n = L->n;
	size_t na = st->narcs;

	(void)i;
	if (st->m) {
		uint32_t *ofs = xmalloc((size_t)st->m * sizeof(uint32_t));

		for (uint32_t t = 1; t < st->m; t++)
			ofs[t - 1] = t * st->s;
		if (runs) {
			/* Stage 1 holds one block per node: one colour per arc. */
			for (size_t k = 0; k < na; k++)
				if (st->arc[k].count != 1)
					abort();
			rwa_circulant(n, ofs, st->m - 1, &st->sol);
			for (size_t r = 0; r < st->sol.nruns; r++)
				st->arc[st->sol.runs[r].id].dir = st->sol.runs[r].dir;
			st->max_load = max_load(n, st->arc, na);
		} else {
			rwa_circulant_colours(n, ofs, st->m - 1, st->sol.colours);
		}
		free(ofs);
	} else {
		st->max_load = max_load(n, st->arc, na);
		if (!runs && st->line) {
			st->colours = (uint32_t)st->max_load; /* interval graphs are perfect */
			return;
		}
		struct rwa_arc *ra = xmalloc((na + 1) * sizeof(*ra));
		for (int d = 1; d <= 2; d++) {
			size_t nr = 0;

			for (size_t x = 0; x < na; x++)
				if (st->arc[x].dir == d)
					ra[nr++] = (struct rwa_arc){
					    rwa_arc_start(n, st->arc[x].src, st->arc[x].dst, d),
					    rwa_arc_len(n, st->arc[x].src, st->arc[x].dst, d),
					    st->arc[x].count, (uint32_t)x};
			if (st->line)
				rwa_color_line(n, ra, nr, d, &st->sol);
			else
				rwa_color_circle(n, ra, nr, d, &st->sol);
		}
		free(ra);
		if (!runs) {
			free(st->sol.runs);
			st->sol.runs = NULL;
			st->sol.nruns = st->sol.cap = 0;
		}
	}
	st->colours = st->sol.colours[RWA_CW] > st->sol.colours[RWA_CCW] ? st->sol.colours[RWA_CW]
									 : st->sol.colours[RWA_CCW];
}

void stage_counts(const struct stage_rwa *st, uint32_t *cnt, uint32_t n)
{
	uint32_t *old = xmalloc((size_t)n * sizeof(uint32_t));

	memcpy(old, cnt, (size_t)n * sizeof(uint32_t));
	for (size_t k = 0; k < st->narcs; k++)
		cnt[st->arc[k].dst] += old[st->arc[k].src];
	free(old);
}

uint32_t demands_lower_bound(const struct optree_ring *r, const struct ot_arc *arc, size_t narcs)
{
	uint32_t n = r->nodes, FW = ring_channels(r);
	uint32_t per_node = r->max_add < 2 * FW ? r->max_add : 2 * FW;
	uint64_t dist = 0, most = 0;
	uint64_t *add = xcalloc(n, sizeof(uint64_t)), *drop = xcalloc(n, sizeof(uint64_t));

	if (!narcs) {
		free(add);
		free(drop);
		return 0;
	}
	for (size_t k = 0; k < narcs; k++) {
		uint32_t cw = rwa_arc_len(n, arc[k].src, arc[k].dst, RWA_CW);

		dist += (uint64_t)arc[k].count * (cw < n - cw ? cw : n - cw);
		add[arc[k].src] += arc[k].count;
		drop[arc[k].dst] += arc[k].count;
	}
	for (uint32_t u = 0; u < n; u++) {
		if (add[u] > most)
			most = add[u];
		if (drop[u] > most)
			most = drop[u];
	}
	free(add);
	free(drop);
	uint32_t lb = (uint32_t)ceil_div_u64(dist, (uint64_t)2 * n * FW);
	if (ceil_div_u64(most, per_node) > lb)
		lb = (uint32_t)ceil_div_u64(most, per_node);
	return lb ? lb : 1;
}

uint32_t stage_lower_bound(const struct optree_ring *r, const struct levels *L, uint32_t i,
			   const struct ot_arc *arc, size_t narcs)
{
	uint32_t lb = demands_lower_bound(r, arc, narcs), p = i - 1, FW = ring_channels(r);

	if (i < 2 || !narcs)
		return lb;
	/* Multi-cut: crossing traffic at each group's busiest internal cut. */
	uint32_t n = r->nodes;
	int64_t *f = xcalloc((size_t)n + 1, sizeof(int64_t));
	uint64_t sum = 0;
	uint32_t cuts = 0;

	for (size_t k = 0; k < narcs; k++) {
		uint32_t a = arc[k].src < arc[k].dst ? arc[k].src : arc[k].dst;
		uint32_t b = arc[k].src ^ arc[k].dst ^ a;

		f[a] += arc[k].count;
		f[b] -= arc[k].count;
	}
	for (uint32_t g = 0; g < L->ngroups[p]; g++) {
		int64_t run = 0, best = 0;

		for (uint32_t x = L->start[p][g]; x + 1 < L->start[p][g] + L->size[p][g]; x++) {
			run += f[x];
			if (run > best)
				best = run;
		}
		if (best > 0) {
			sum += (uint64_t)best;
			cuts++;
		}
	}
	free(f);
	uint32_t mc = cuts >= 2 ? (uint32_t)ceil_div_u64(sum, (uint64_t)2 * cuts * FW)
				: (uint32_t)ceil_div_u64(sum, 4ull * FW);
	return mc > lb ? mc : lb;
}
