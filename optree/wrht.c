/* Wrht (Dai et al., "Efficient All-reduce for Distributed DNN Training in
 * Optical Interconnect Systems", arXiv 2207.10982): the wavelength-reused
 * hierarchical tree, extended to all-gather as the OpTree paper compares
 * it. Its text is not available to us; this is the construction as the
 * OpTree paper and the Wrht abstract describe it [R] (see
 * ../shared/notes/optree.md and docs/mrr.md):
 *
 * - nodes form groups of m consecutive nodes; each group's middle node is
 *   its representative, and representatives form the groups of the next
 *   level (a balanced m-ary tree of ceil(log_m N) levels over ring
 *   segments);
 * - gather, bottom level first: every member sends what it holds (its
 *   subtree's blocks) straight to its group's representative on lightpaths
 *   inside the group's segment. Groups are disjoint segments, so every
 *   group reuses the same wavelengths (the "wavelength reuse");
 * - broadcast, top level first: each representative sends every member of
 *   its group the blocks it lacks (all but its own subtree's).
 *
 * The all-reduce version moves one reduced vector per transfer and takes
 * m = 2FW + 1 (a group's busiest segment then carries FW lightpaths a
 * direction). For the all-gather the amount grows up the tree, so the
 * group size is chosen here among 2..2FW+1 for the least predicted time
 * (each stage's busiest segment over F*W channels, and Eq. 3's per-stage
 * delays); m = 2FW + 1 is one of the candidates. Every lightpath is a
 * unicast one and each stage is coloured exactly (its arcs never wrap).
 */
#include "optree/internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct wtree {
	struct levels L;
	uint32_t *rep[OPTREE_MAX_DEPTH + 1]; /* representative of every group */
	uint32_t *mid[OPTREE_MAX_DEPTH + 1]; /* the child it comes from */
};

static void wtree_free(struct wtree *t)
{
	for (uint32_t i = 0; i <= OPTREE_MAX_DEPTH; i++) {
		free(t->rep[i]);
		free(t->mid[i]);
	}
	levels_free(&t->L);
}

/* Levels of radix m down to single nodes, with representatives. */
static int wtree_build(uint32_t n, uint32_t m, struct wtree *t, struct ofc_error *err)
{
	uint32_t radix[OPTREE_MAX_DEPTH], k = 0;
	uint64_t reach = 1;

	memset(t, 0, sizeof(*t));
	while (reach < n && k < OPTREE_MAX_DEPTH) {
		radix[k++] = m;
		reach *= m;
	}
	if (reach < n)
		return ofc_error_set(err, OFC_E_INPUT, "Wrht: group size %u is too small", m);
	if (levels_build(n, radix, k, &t->L, err) < 0)
		return -1;
	for (uint32_t p = 0; p <= k; p++) {
		t->rep[p] = xmalloc(((size_t)t->L.ngroups[p] + 1) * sizeof(uint32_t));
		t->mid[p] = xmalloc(((size_t)t->L.ngroups[p] + 1) * sizeof(uint32_t));
	}
	for (uint32_t g = 0; g < t->L.ngroups[k]; g++)
		t->rep[k][g] = t->L.start[k][g];
	for (uint32_t p = k; p-- > 0;)
		for (uint32_t g = 0; g < t->L.ngroups[p]; g++) {
			uint32_t c0 = t->L.child[p][g], c1 = t->L.child[p][g + 1];

			t->mid[p][g] = c0 + (c1 - c0 - 1) / 2;
			t->rep[p][g] = t->rep[p + 1][t->mid[p][g]];
		}
	return 0;
}

/* A Wrht lightpath bundle: rep to rep, carrying the blocks of [lo, lo+len)
 * (gather) or every block but those (broadcast). */
struct warc {
	uint32_t lo, len;
};

/* The arcs of one stage: gather or broadcast at level p. */
static size_t stage_arcs_w(const struct wtree *t, uint32_t p, bool gather, struct ot_arc *arc,
			   struct warc *wa)
{
	const struct levels *L = &t->L;
	size_t na = 0;

	for (uint32_t g = 0; g < L->ngroups[p]; g++)
		for (uint32_t c = L->child[p][g]; c < L->child[p][g + 1]; c++) {
			if (c == t->mid[p][g])
				continue;
			uint32_t a = t->rep[p + 1][c], b = t->rep[p][g];
			uint32_t sz = L->size[p + 1][c];

			if (!gather) {
				uint32_t x = a;

				a = b;
				b = x;
			}
			arc[na] = (struct ot_arc){a, b, gather ? sz : L->n - sz,
						  (uint8_t)(b > a ? RWA_CW : RWA_CCW)};
			wa[na++] = (struct warc){L->start[p + 1][c], sz};
		}
	return na;
}

static uint64_t stage_load(uint32_t n, const struct ot_arc *arc, size_t na)
{
	struct rwa_load l;
	uint64_t best;

	rwa_load_init(&l, n);
	for (size_t k = 0; k < na; k++)
		rwa_load_add(&l, arc[k].src, arc[k].dst, arc[k].dir, arc[k].count);
	best = rwa_load_max(&l);
	rwa_load_free(&l);
	return best;
}

/* Predicted time of group size m (colours = loads: every stage is a set
 * of line intervals). */
static double predict(const struct optree_ring *r, uint32_t m, struct ot_arc *arc, struct warc *wa,
		      uint32_t *steps)
{
	struct wtree t;
	struct ofc_error err = {0};
	uint32_t FW = ring_channels(r);
	uint64_t total = 0;

	if (wtree_build(r->nodes, m, &t, &err) < 0)
		return INFINITY;
	for (uint32_t p = 0; p < t.L.depth; p++)
		for (int gather = 0; gather <= 1; gather++) {
			size_t na = stage_arcs_w(&t, p, gather, arc, wa);

			total += ceil_div_u64(stage_load(r->nodes, arc, na), FW);
		}
	double us = (double)total * r->block_bytes * 8.0 / r->rate * 1e6 +
		    2.0 * t.L.depth * (r->mrr_delay + r->oeo_delay) * 1e6;
	*steps = (uint32_t)total;
	wtree_free(&t);
	return us;
}

static void emit_stage(struct emitter *e, const struct ot_arc *arc, const struct warc *wa,
		       const struct rwa_solution *sol, bool gather, struct optree_stage *st)
{
	uint32_t FW = ring_channels(e->r), cs = colour_steps(e->r, sol);

	for (uint32_t t = 0; t < cs; t++) {
		for (size_t k = 0, inst = 0; k < sol->nruns; k++) {
			const struct rwa_run *ru = &sol->runs[k];
			const struct warc *w = &wa[ru->id];

			inst = (k && sol->runs[k - 1].id == ru->id) ? inst + sol->runs[k - 1].count
								    : 0;
			for (uint32_t c = 0; c < ru->count; c++) {
				uint32_t i = (uint32_t)inst + c, b;

				if ((ru->colour + c) / FW != t)
					continue;
				b = gather ? w->lo + i : (i < w->lo ? i : i + w->len);
				emit_put(e, arc[ru->id].src, arc[ru->id].dst, b, ru->dir,
					 (ru->colour + c) % FW);
			}
		}
		st->steps += emit_flush(e);
	}
	st->colour_steps = cs;
}

int build_wrht(const struct optree_ring *r, struct optree_result *res, struct ofc_error *err)
{
	uint32_t n = r->nodes, FW = ring_channels(r), best_m = 0, cap = 0, steps;
	uint64_t top = 2ull * FW + 1;
	double best = INFINITY;
	struct ot_arc *arc = xmalloc((size_t)n * sizeof(*arc));
	struct warc *wa = xmalloc((size_t)n * sizeof(*wa));
	struct wtree t;

	if (top > n)
		top = n;
	for (uint32_t m = 2; m <= top; m++) {
		double us = predict(r, m, arc, wa, &steps);

		if (isfinite(us) && (!best_m || us < best - 1e-9 * (best + 1))) {
			best = us;
			best_m = m;
		}
	}
	if (wtree_build(n, best_m, &t, err) < 0) {
		free(arc);
		free(wa);
		return -1;
	}
	res->wrht_radix = best_m;
	sched_reserve(&res->sched, (size_t)n * (n - 1));
	struct emitter e;
	emitter_init(&e, r, &res->sched);
	/* Gather bottom-up, then broadcast top-down. */
	for (uint32_t s = 0; s < 2 * t.L.depth; s++) {
		bool gather = s < t.L.depth;
		uint32_t p = gather ? t.L.depth - 1 - s : s - t.L.depth;
		size_t na = stage_arcs_w(&t, p, gather, arc, wa);
		struct optree_stage *st = result_add_stage(res, &cap);
		struct rwa_solution sol = {0};

		colour_fixed(n, arc, na, &sol);
		emit_stage(&e, arc, wa, &sol, gather, st);
		st->radix = best_m;
		st->groups = 0;
		st->min_group = UINT32_MAX;
		for (uint32_t g = 0; g < t.L.ngroups[p]; g++)
			if (t.L.child[p][g + 1] - t.L.child[p][g] >= 2) {
				st->groups++;
				if (t.L.size[p][g] < st->min_group)
					st->min_group = t.L.size[p][g];
				if (t.L.size[p][g] > st->max_group)
					st->max_group = t.L.size[p][g];
			}
		st->max_load = stage_load(n, arc, na);
		st->lower_bound = demands_lower_bound(r, arc, na);
		st->transfers = res->sched.nxfers - res->sched.step_start[st->first_step];
		rwa_solution_free(&sol);
	}
	res->split_steps = e.split_steps;
	emitter_free(&e);
	wtree_free(&t);
	free(arc);
	free(wa);
	return 0;
}
