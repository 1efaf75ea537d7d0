/* Theorem 4's schedule verified from its period (fluid_pipe_verify, see
 * fluid.h): the one chunk's pattern through the verifier with the
 * capacities lifted (fluid/pipe_pattern.c), then the capacities of every
 * step as the overlap of the K consecutive chunks it holds, from each
 * chunk's load at each step (the verifier's fixed-point sums, so its
 * figures to the last bit), and the cost summed in the expansion's order.
 * Model W's 32 servers: 70 chunks over 77 steps are 35 M transfers when
 * expanded; the pattern is 1/70 of them, and the loads and the cost
 * passes over them that hold one step's loads. On p->threads: the cost
 * is one serial sum (a floating sum in the verifier's order, ~25 ms
 * there), which runs beside the loads' steps and the pattern's roots. */
#include "fluid/internal.h"
#include "fluid/pipe_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* One step's window check: its largest utilisation up to its first
 * overload (that one's with it), and that overload: bad, an arc or narcs
 * + a set (UINT32_MAX: none), with its load and limit. */
struct step_mark {
	double mu, load, lim;
	uint32_t bad;
};

/* One phase's period walked in the expansion's order (fluid_pipe_fill_
 * step's: step by step, piece by piece, then p->order), each piece's hops
 * laid out once in that order (arcs, layers, costs) and taken a layer at
 * a time (a chunk's part found once per layer, not per hop): its cost
 * from `cost` (the phases before) in that order, so that it is the
 * verifier's sum to the last bit, one serial sum; and each step's loads
 * and transfers on each arc (the verifier's fixed point: integers, any
 * order), checked as the step ends, in ranges of steps a thread each. */
struct sweep {
	const struct fluid_pipe *p;
	const struct verify_network *vn;
	uint32_t *arc; /* by hop in step order: q->first + j */
	/* each piece's layers (p->order keeps a layer's hops together), a
	 * run of hops each: piece i's runs [run_off[i], run_off[i + 1]),
	 * run r's hops [run_at[r], run_at[r + 1]) (q->first + j), layer
	 * run_layer[r] */
	uint32_t *run_off, *run_at, *run_layer;
	/* each run's hops of nonzero cost come first, in their order (the
	 * loads read a run's hops in any order): run_nz[r] of them. The
	 * cost's sum without the hops of cost 0 is the same sum (each added
	 * +0.0 to a sum of costs >= 0). */
	uint32_t *run_nz;
	/* The loads by class (sweep_classes), or ncls 0: pieces of one part
	 * [lo, hi) have one part at each chunk, so a step's loads are, per
	 * class and layer whose chunk is in the step, the part times how many
	 * of the class's hops at that layer use each arc: agg_arc/agg_cnt
	 * [agg_off[c * T + l], agg_off[c * T + l + 1]), cls_piece[c] a piece
	 * of class c. */
	uint32_t ncls, *cls_piece, *agg_off, *agg_arc, *agg_cnt;
	struct step_mark *mark; /* by forward step (the pattern's layer + k) */
	double cost;
	/* The cost in whole units (pipe_cost_exact): units_ok where every
	 * cost is whole units 2^(x - 31) and the phase's total, units, under
	 * 2^53 of them. Then the runs above are laid out only where the
	 * loads go hop by hop (ncls 0) or the start rounds (sweep_cost):
	 * arc alone was 32 MB of fresh pages at 1,024 GPUs. */
	bool units_ok;
	int x;
	unsigned __int128 units;
};

/* Steps a loads item takes: a few, for the threads to share them out. */
#define SWEEP_STEPS 4

/* Every arc and capacity set of a step within step time x bandwidth, as
 * the verifier checks them (its tolerances: relative, and 2^-31 a
 * transfer for the fixed point); only sets a transfer loads. */
static void mark_step(const struct verify_network *vn, const uint64_t *ld, const uint32_t *ct,
		      struct step_mark *mk)
{
	double tol = vn->tolerance > 0 ? vn->tolerance : 1e-9, ulp = 1.0 / SCHED_ONE;
	double st = vn->step_time;

	*mk = (struct step_mark){.bad = UINT32_MAX};
	for (uint32_t a = 0; a < vn->narcs; a++) {
		if (!ct[a] || isinf(vn->bw[a]))
			continue;
		double l = (double)ld[a] / SCHED_ONE, lim = st * vn->bw[a];

		if (lim > 0 && l / lim > mk->mu)
			mk->mu = l / lim;
		if (l > lim * (1 + tol) + ulp * ct[a]) {
			*mk = (struct step_mark){.mu = mk->mu, .load = l, .lim = lim, .bad = a};
			return;
		}
	}
	for (uint32_t k = 0; k < vn->nsets; k++) {
		uint64_t sl = 0;
		uint32_t sc = 0;

		for (uint32_t j = vn->set_off[k]; j < vn->set_off[k + 1]; j++) {
			sl += ld[vn->set_arc[j]];
			sc += ct[vn->set_arc[j]];
		}
		if (!sc)
			continue;
		double l = (double)sl / SCHED_ONE, lim = st * vn->set_bw[k];

		if (lim > 0 && l / lim > mk->mu)
			mk->mu = l / lim;
		if (l > lim * (1 + tol) + ulp * sc) {
			*mk = (struct step_mark){
			    .mu = mk->mu, .load = l, .lim = lim, .bad = vn->narcs + k};
			return;
		}
	}
}

/* Each run's hops of nonzero cost moved first, stably: run_nz. */
static void sweep_nonzero_first(struct sweep *sw, const struct fluid_routing *rt)
{
	const double *cost = sw->vn->cost;
	uint32_t *zero = NULL, cap = 0;

	sw->run_nz = xmalloc(((size_t)sw->run_off[rt->npieces] + 1) * sizeof(uint32_t));
	for (size_t i = 0; i < rt->npieces; i++) {
		const struct fluid_piece *q = &rt->pieces[i];

		for (uint32_t r = sw->run_off[i]; r < sw->run_off[i + 1]; r++) {
			uint32_t at = sw->run_at[r], nz = 0, nzero = 0;
			uint32_t e =
			    r + 1 < sw->run_off[i + 1] ? sw->run_at[r + 1] : q->first + q->nhops;

			if (!cost) {
				sw->run_nz[r] = e - at;
				continue;
			}
			if (e - at > cap) {
				cap = e - at;
				zero = xreallocarray(zero, cap, sizeof(uint32_t));
			}
			for (uint32_t j = at; j < e; j++) {
				if (cost[sw->arc[j]] != 0)
					sw->arc[at + nz++] = sw->arc[j];
				else
					zero[nzero++] = sw->arc[j];
			}
			memcpy(sw->arc + at + nz, zero, (size_t)nzero * sizeof(uint32_t));
			sw->run_nz[r] = nz;
		}
	}
	free(zero);
}

/* Classes of pieces at most: else the loads go hop by hop. */
#define SWEEP_MAX_CLASSES 64

/* Piece i's class: the first piece of its part [lo, hi) (by a scan of
 * the classes so far), or UINT32_MAX when there are too many. */
static uint32_t piece_class(struct sweep *sw, const struct fluid_routing *rt, size_t i)
{
	const struct fluid_piece *q = &rt->pieces[i];

	for (uint32_t c = 0; c < sw->ncls; c++) {
		const struct fluid_piece *r = &rt->pieces[sw->cls_piece[c]];

		if (r->lo == q->lo && r->hi == q->hi)
			return c;
	}
	if (sw->ncls == SWEEP_MAX_CLASSES)
		return UINT32_MAX;
	sw->cls_piece[sw->ncls] = (uint32_t)i;
	return sw->ncls++;
}

/* Class c's hops counted per layer and arc into dense (T x narcs), laid
 * out as the aggregate from at (its arrays grown as they fill, cap
 * entries), dense zeroed again; the aggregate's entries. One pass over
 * the hops, where counting first and laying out after were two (17 ms at
 * 1,024 GPUs). */
static size_t class_entries(struct sweep *sw, const struct fluid_routing *rt, const uint32_t *cls,
			    uint32_t c, uint32_t *dense, size_t at, size_t *cap)
{
	uint32_t T = sw->p->hops, m = sw->vn->narcs;

	for (size_t i = 0; i < rt->npieces; i++) {
		const struct fluid_piece *q = &rt->pieces[i];

		for (uint32_t j = 0; cls[i] == c && j < q->nhops; j++)
			dense[(size_t)rt->hop_layer[q->first + j] * m +
			      rt->hop_arc[q->first + j]]++;
	}
	for (uint32_t l = 0; l < T; l++) {
		uint32_t *d = dense + (size_t)l * m;

		sw->agg_off[c * T + l] = (uint32_t)at;
		for (uint32_t a = 0; a < m; a++) {
			if (!d[a])
				continue;
			if (at == *cap) {
				*cap = *cap ? 2 * *cap : 1024;
				sw->agg_arc = xreallocarray(sw->agg_arc, *cap, sizeof(uint32_t));
				sw->agg_cnt = xreallocarray(sw->agg_cnt, *cap, sizeof(uint32_t));
			}
			sw->agg_arc[at] = a;
			sw->agg_cnt[at] = d[a];
			at++;
			d[a] = 0;
		}
	}
	return at;
}

/* The loads' aggregate by class and layer (at most an entry a hop); none
 * (ncls 0) where the pieces fall in too many classes, or p asks for the
 * loads hop by hop. */
static void sweep_classes(struct sweep *sw, const struct fluid_routing *rt)
{
	uint32_t T = sw->p->hops, m = sw->vn->narcs;
	uint32_t *cls = xmalloc((rt->npieces + 1) * sizeof(uint32_t));
	size_t n = 0, cap = 0;
	bool few = !sw->p->loads_by_hop && rt->npieces && rt->nhops < UINT32_MAX;

	sw->cls_piece = xmalloc(SWEEP_MAX_CLASSES * sizeof(uint32_t));
	for (size_t i = 0; few && i < rt->npieces; i++)
		few = (cls[i] = piece_class(sw, rt, i)) != UINT32_MAX;
	if (!few) {
		sw->ncls = 0;
		free(cls);
		return;
	}
	uint32_t *dense = xcalloc((size_t)T * m + 1, sizeof(uint32_t));

	sw->agg_off = xmalloc(((size_t)sw->ncls * T + 1) * sizeof(uint32_t));
	for (uint32_t c = 0; c < sw->ncls; c++)
		n = class_entries(sw, rt, cls, c, dense, n, &cap);
	sw->agg_off[sw->ncls * T] = (uint32_t)n;
	free(dense);
	free(cls);
}

/* Each piece's hops in the expansion's order in runs of a layer
 * (sw->arc, run_*), nonzero costs first in each: what the loads hop by
 * hop and the cost term by term read. */
static void sweep_runs(struct sweep *sw)
{
	const struct fluid_pipe *p = sw->p;
	const struct fluid_routing *rt = &p->r->routing;
	uint32_t nr = 0, last = 0;

	sw->arc = xmalloc((rt->nhops + 1) * sizeof(uint32_t));
	sw->run_off = xmalloc((rt->npieces + 1) * sizeof(uint32_t));
	sw->run_at = xmalloc((rt->nhops + 1) * sizeof(uint32_t));
	sw->run_layer = xmalloc((rt->nhops + 1) * sizeof(uint32_t));
	for (size_t i = 0; i < rt->npieces; i++) {
		const struct fluid_piece *q = &rt->pieces[i];

		const uint32_t *order = pipe_order(p, q);

		sw->run_off[i] = nr;
		for (uint32_t j = 0; j < q->nhops; j++) {
			uint32_t h = q->first + order[j], l = rt->hop_layer[h];

			sw->arc[q->first + j] = rt->hop_arc[h];
			if (j == 0 || l != last) {
				sw->run_at[nr] = q->first + j;
				sw->run_layer[nr++] = l;
			}
			last = l;
		}
	}
	sw->run_off[rt->npieces] = nr;
	sweep_nonzero_first(sw, rt);
}

/* The phase's cost in whole units where it can be: each piece's hops'
 * costs (their order is no matter to a sum of integers) times its parts
 * over the K steps each of its layers' chunks is in (every chunk once:
 * the steps cover layer + [0, K)). */
static void sweep_units(struct sweep *sw)
{
	const struct fluid_pipe *p = sw->p;
	const struct fluid_routing *rt = &p->r->routing;
	uint64_t *units = xmalloc(((size_t)sw->vn->narcs + 1) * sizeof(uint64_t));

	sw->units = 0;
	sw->units_ok = !p->cost_in_order && sw->vn->cost &&
		       pipe_cost_units(sw->vn->cost, sw->vn->narcs, units, &sw->x);
	for (size_t i = 0; sw->units_ok && i < rt->npieces; i++) {
		const struct fluid_piece *q = &rt->pieces[i];
		unsigned __int128 h = 0;

		for (uint32_t j = 0; j < q->nhops; j++)
			h += units[rt->hop_arc[q->first + j]];
		pipe_cost_add(&sw->units, h, pipe_piece_parts(q, p->chunks));
	}
	sw->units_ok = sw->units_ok && sw->units < (unsigned __int128)1 << 53;
	free(units);
}

/* The phase's tables; prev: the phase whose cost this one's sum goes on
 * from (NULL: from 0), whole units where prev's went by units (then its
 * sum is that exact one). */
static void sweep_prep(struct sweep *sw, const struct fluid_pipe *p,
		       const struct verify_network *vn, const struct sweep *prev)
{
	*sw = (struct sweep){.p = p, .vn = vn};
	sw->mark = xmalloc(((size_t)p->steps + 1) * sizeof(struct step_mark));
	sweep_classes(sw, &p->r->routing);
	sweep_units(sw);
	bool by_units =
	    sw->units_ok && (!prev || (prev->units_ok && prev->x == sw->x &&
				       prev->units + sw->units < (unsigned __int128)1 << 53));

	if (!sw->ncls || (vn->cost && !by_units))
		sweep_runs(sw);
}

static void sweep_free(struct sweep *sw)
{
	free(sw->mark);
	free(sw->arc);
	free(sw->run_off);
	free(sw->run_at);
	free(sw->run_layer);
	free(sw->run_nz);
	free(sw->cls_piece);
	free(sw->agg_off);
	free(sw->agg_arc);
	free(sw->agg_cnt);
}

/* Run r of piece i: its part at forward step t, 0 where none; its hops
 * [*j, *e) (a run ends where the next begins, the last with the piece). */
static uint32_t run_part(const struct sweep *sw, size_t i, uint32_t r, uint32_t t, uint32_t *j,
			 uint32_t *e)
{
	const struct fluid_piece *q = &sw->p->r->routing.pieces[i];
	uint32_t l = sw->run_layer[r], K = sw->p->chunks, lo, hi;

	*j = sw->run_at[r];
	*e = r + 1 < sw->run_off[i + 1] ? sw->run_at[r + 1] : q->first + q->nhops;
	return l <= t && t - l < K && fluid_chunk_of(q, t - l, K, &lo, &hi) ? hi - lo : 0;
}

/* The phase's cost, from sw->cost, in the expansion's order: in whole
 * units where that sum rounds nowhere (sweep_units: the same bits), else
 * term by term, each step reading every hop's arc (2 MB at 256 GPUs), its
 * cost from the arcs' table, which stays in the cache. (sweep_prep lays
 * out the runs wherever the units cannot be the sum; should they be
 * missing, they are laid out here: the loads, on other threads, read them
 * only where sweep_prep did.) */
static void sweep_cost(struct sweep *sw)
{
	const struct fluid_pipe *p = sw->p;
	const struct fluid_routing *rt = &p->r->routing;
	const double *cost = sw->vn->cost;
	uint32_t S = p->steps, j, e;
	double sum = sw->cost;

	if (!cost || (sw->units_ok && pipe_cost_exact(sw->cost, sw->units, sw->x, &sw->cost)))
		return;
	if (!sw->run_off)
		sweep_runs(sw);
	for (uint32_t s = 0; s < S; s++) {
		uint32_t t = p->rev ? S - 1 - s : s;

		for (size_t i = 0; i < rt->npieces; i++) {
			for (uint32_t r = sw->run_off[i]; r < sw->run_off[i + 1]; r++) {
				uint32_t len = run_part(sw, i, r, t, &j, &e);
				double f = sched_frac(len);

				for (e = j + sw->run_nz[r]; len && j < e; j++)
					sum += cost[sw->arc[j]] * f;
			}
		}
	}
	sw->cost = sum;
}

/* Class c's loads at forward step t: at each layer whose chunk is in the
 * step, its part there times each arc's hops (the same integers as hop by
 * hop). */
static void sweep_class_loads(const struct sweep *sw, uint32_t c, uint32_t t, uint64_t *ld,
			      uint32_t *ct)
{
	const struct fluid_piece *q = &sw->p->r->routing.pieces[sw->cls_piece[c]];
	uint32_t T = sw->p->hops, K = sw->p->chunks, lo, hi;

	for (uint32_t l = 0; l < T && l <= t; l++) {
		if (t - l >= K || !fluid_chunk_of(q, t - l, K, &lo, &hi))
			continue;
		uint64_t len = hi - lo;

		for (uint32_t k = sw->agg_off[c * T + l]; k < sw->agg_off[c * T + l + 1]; k++) {
			ld[sw->agg_arc[k]] += len * sw->agg_cnt[k];
			ct[sw->agg_arc[k]] += sw->agg_cnt[k];
		}
	}
}

/* Forward steps [t0, t1): each one's loads, then its mark. */
static void sweep_loads(struct sweep *sw, uint32_t t0, uint32_t t1)
{
	const struct fluid_routing *rt = &sw->p->r->routing;
	uint32_t m = sw->vn->narcs, j, e;
	uint64_t *ld = xcalloc((size_t)m + 1, sizeof(uint64_t));
	uint32_t *ct = xcalloc((size_t)m + 1, sizeof(uint32_t));

	for (uint32_t t = t0; t < t1; t++) {
		for (uint32_t c = 0; c < sw->ncls; c++)
			sweep_class_loads(sw, c, t, ld, ct);
		for (size_t i = 0; !sw->ncls && i < rt->npieces; i++) {
			for (uint32_t r = sw->run_off[i]; r < sw->run_off[i + 1]; r++) {
				uint32_t len = run_part(sw, i, r, t, &j, &e);

				for (; len && j < e; j++) {
					ld[sw->arc[j]] += len;
					ct[sw->arc[j]]++;
				}
			}
		}
		mark_step(sw->vn, ld, ct, &sw->mark[t]);
		memset(ld, 0, (size_t)m * sizeof(uint64_t));
		memset(ct, 0, (size_t)m * sizeof(uint32_t));
	}
	free(ld);
	free(ct);
}

static int capacity_fail(struct verify_report *rep, uint32_t step, const char *what, double load,
			 double lim)
{
	rep->ok = false;
	rep->bad_step = step;
	rep->bad_xfer = SIZE_MAX;
	snprintf(rep->error, sizeof(rep->error),
		 "step %u: %s carries %.9g blocks, over its %.9g (step time x bandwidth)", step + 1,
		 what, load, lim);
	return -1;
}

/* The steps' marks in the verifier's order (forward steps ascending; a
 * reduction's schedule runs them backwards), into rep's utilisation up to
 * the first overload, which fails it; the schedule's steps are p's from
 * step first on (a second phase's). */
static int window_join(const struct sweep *sw, uint32_t first, struct verify_report *rep)
{
	const struct fluid_pipe *p = sw->p;
	const struct verify_network *vn = sw->vn;
	uint32_t S = p->steps;
	char what[96];

	for (uint32_t t = 0; t < S; t++) {
		const struct step_mark *mk = &sw->mark[t];

		if (mk->mu > rep->max_utilisation)
			rep->max_utilisation = mk->mu;
		if (mk->bad == UINT32_MAX)
			continue;
		if (mk->bad < vn->narcs)
			snprintf(what, sizeof(what), "arc %u -> %u", vn->tail[mk->bad],
				 vn->head[mk->bad]);
		else
			snprintf(what, sizeof(what), "capacity set %u", mk->bad - vn->narcs);
		return capacity_fail(rep, first + (p->rev ? S - 1 - t : t), what, mk->load,
				     mk->lim);
	}
	return 0;
}

/* A check's parts on the request's threads: item 0 the phases' costs
 * (one serial sum, the reduce-scatter's then the allgather's), then each
 * phase's loads, SWEEP_STEPS steps an item, then each phase's pattern
 * parts. Every item writes its own slots; the joins after are serial. */
struct period_job {
	struct sweep sw[2];
	struct pipe_pattern pat[2];
	size_t loads[2], items[2]; /* each phase's */
	unsigned nphases;
};

static void period_item(void *ctx, size_t i, unsigned worker)
{
	struct period_job *j = ctx;

	(void)worker;
	if (i == 0) {
		for (unsigned k = 0; k < j->nphases; k++) {
			if (k)
				j->sw[k].cost = j->sw[k - 1].cost;
			sweep_cost(&j->sw[k]);
		}
		return;
	}
	i--;
	for (unsigned k = 0; k < j->nphases; k++) {
		if (i < j->loads[k]) {
			uint32_t t0 = (uint32_t)i * SWEEP_STEPS, S = j->sw[k].p->steps;

			sweep_loads(&j->sw[k], t0, S - t0 < SWEEP_STEPS ? S : t0 + SWEEP_STEPS);
			return;
		}
		i -= j->loads[k];
	}
	for (unsigned k = 0; k < j->nphases; k++) {
		if (i < j->items[k]) {
			pipe_pattern_item(&j->pat[k], i);
			return;
		}
		i -= j->items[k];
	}
}

/* Phase k: p on vn. */
static void period_phase(struct period_job *j, unsigned k, const struct fluid_pipe *p,
			 const struct verify_network *vn)
{
	sweep_prep(&j->sw[k], p, vn, k ? &j->sw[k - 1] : NULL);
	j->loads[k] = ((size_t)p->steps + SWEEP_STEPS - 1) / SWEEP_STEPS;
	j->items[k] = pipe_pattern_start(&j->pat[k], p, vn);
	j->nphases = k + 1;
}

static void period_run(struct period_job *j, unsigned threads)
{
	size_t n = 1;

	for (unsigned k = 0; k < j->nphases; k++)
		n += j->loads[k] + j->items[k];
	parallel_for(n, 1, threads, period_item, j);
}

int fluid_pipe_verify(const struct fluid_pipe *p, const struct verify_network *vn,
		      struct verify_report *rep)
{
	struct period_job j = {0};
	int rc;

	period_phase(&j, 0, p, vn);
	period_run(&j, p->threads);
	rc = pipe_pattern_end(&j.pat[0], rep);
	/* The expansion's figures: its steps and transfers, its loads and its
	 * cost summed as the verifier sums them; the duplicates are the
	 * pattern's, which the chunks share out. */
	rep->nsteps = p->steps;
	rep->ntransfers = p->ntransfers;
	rep->max_utilisation = 0;
	if (rc == 0)
		rc = window_join(&j.sw[0], 0, rep);
	if (rc == 0)
		rep->network_cost = vn->cost ? j.sw[0].cost : 0;
	rep->ok = rc == 0;
	sweep_free(&j.sw[0]);
	return rc;
}

/* The first and the last step at which p, its steps from first on, moves
 * any part of each block (the origins' ids): a piece's chunks run from
 * its first chunk with a part on its lowest layer to its last on its
 * highest (a reduction: backwards). Blocks p never moves keep theirs. */
static void block_span(const struct fluid_pipe *p, uint32_t first, uint32_t *from, uint32_t *to)
{
	const struct fluid_routing *rt = &p->r->routing;
	uint32_t K = p->chunks, S = p->steps, lo, hi;

	for (size_t i = 0; i < rt->npieces; i++) {
		const struct fluid_piece *q = &rt->pieces[i];
		uint32_t k0 = 0, k1 = K, l0 = UINT32_MAX, l1 = 0;

		while (k0 < K && !fluid_chunk_of(q, k0, K, &lo, &hi))
			k0++;
		while (k1 > k0 && !fluid_chunk_of(q, k1 - 1, K, &lo, &hi))
			k1--;
		for (uint32_t h = 0; h < q->nhops; h++) {
			uint32_t l = rt->hop_layer[q->first + h];

			l0 = l < l0 ? l : l0;
			l1 = l > l1 ? l : l1;
		}
		if (k0 == K || !q->nhops)
			continue;
		uint32_t a = l0 + k0, b = l1 + k1 - 1;

		if (p->rev) {
			uint32_t t = S - 1 - b;

			b = S - 1 - a;
			a = t;
		}
		if (first + a < from[q->origin])
			from[q->origin] = first + a;
		if (to[q->origin] == UINT32_MAX || first + b > to[q->origin])
			to[q->origin] = first + b;
	}
}

/* The composition: the allgather's steps come after the reduce-scatter's,
 * and it sends no part of a shard before the reduce-scatter has moved its
 * last part of it (the shard is whole at its owner only then; the
 * reduce-scatter's check proves it is, the allgather's that what its
 * owner holds reaches every GPU). */
static int phases_check(const struct fluid_pipe *rs, const struct fluid_pipe *ag, uint32_t ag_first,
			struct verify_report *rep)
{
	uint32_t nb = rs->net->nverts;
	uint32_t *from = xmalloc(2 * (nb + 1) * sizeof(uint32_t)), *to = from + nb + 1;
	uint32_t *ag_from = xmalloc(2 * (nb + 1) * sizeof(uint32_t)), *ag_to = ag_from + nb + 1;
	int rc = 0;

	for (uint32_t b = 0; b <= nb; b++)
		from[b] = to[b] = ag_from[b] = ag_to[b] = UINT32_MAX;
	block_span(rs, 0, from, to);
	block_span(ag, ag_first, ag_from, ag_to);
	for (uint32_t b = 0; b < nb && rc == 0; b++) {
		if (ag_from[b] == UINT32_MAX || to[b] == UINT32_MAX || ag_from[b] > to[b])
			continue;
		rep->ok = false;
		rep->bad_step = ag_from[b];
		rep->bad_xfer = SIZE_MAX;
		snprintf(rep->error, sizeof(rep->error),
			 "step %u: the allgather sends shard %u before the reduce-scatter "
			 "has reduced it (its last transfer of it at step %u)",
			 ag_from[b] + 1, b, to[b] + 1);
		rc = -1;
	}
	if (rc == 0 && ag_first < rs->steps) {
		rep->ok = false;
		rep->bad_step = ag_first;
		rep->bad_xfer = SIZE_MAX;
		snprintf(rep->error, sizeof(rep->error),
			 "step %u: the allgather starts within the reduce-scatter's %u steps",
			 ag_first + 1, rs->steps);
		rc = -1;
	}
	free(from);
	free(ag_from);
	return rc;
}

int fluid_allreduce_verify(const struct fluid_pipe *rs, const struct fluid_pipe *ag,
			   uint32_t ag_first, const struct verify_network *vn, double ag_step_time,
			   struct verify_report *rep)
{
	struct verify_network agn = *vn;
	struct verify_report r2;
	struct period_job j = {0};
	int rc, rc2;

	agn.step_time = ag_step_time;
	agn.step_times = NULL;
	period_phase(&j, 0, rs, vn);
	period_phase(&j, 1, ag, &agn);
	period_run(&j, rs->threads);
	rc = pipe_pattern_end(&j.pat[0], rep);
	rc2 = pipe_pattern_end(&j.pat[1], &r2);
	if (rc == 0 && rc2 < 0) {
		*rep = r2;
		rc = -1;
	}
	if (rc == 0)
		rep->duplicate_blocks += r2.duplicate_blocks;
	rep->nsteps = ag_first + ag->steps;
	rep->ntransfers = rs->ntransfers + ag->ntransfers;
	rep->max_utilisation = 0;
	if (rc == 0)
		rc = phases_check(rs, ag, ag_first, rep);
	if (rc == 0)
		rc = window_join(&j.sw[0], 0, rep);
	if (rc == 0)
		rc = window_join(&j.sw[1], ag_first, rep);
	/* the allgather's pass went on from the reduce-scatter's sum */
	rep->network_cost = rc == 0 && vn->cost ? j.sw[1].cost : 0;
	rep->ok = rc == 0;
	sweep_free(&j.sw[0]);
	sweep_free(&j.sw[1]);
	return rc;
}
