/* Theorem 4's schedule verified from its period (fluid_pipe_verify, see
 * fluid.h): the one chunk's pattern through the verifier with the
 * capacities lifted, then the capacities of every step as the overlap of
 * the K consecutive chunks it holds, from each chunk's load at each step
 * (the verifier's fixed-point sums, so its figures to the last bit).
 * Model W's 32 servers: 70 chunks over 77 steps are 35 M transfers when
 * expanded; the pattern is 1/70 of them, and the loads and the cost a
 * pass over them that holds none. */
#include "fluid/internal.h"
#include "fluid/pipe_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

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

/* The expansion's load (the verifier's fixed point: the sum of its
 * transfers' lengths) and transfers on each arc at each step, forward step
 * s at [s * narcs]: every chunk of every piece at each hop, as fill_steps
 * lays them out, so that the loads and the figures from them are the
 * verifier's on the expansion to the last bit. */
static void step_loads(const struct fluid_pipe *p, uint64_t *load, uint32_t *count)
{
	const struct fluid_routing *rt = &p->r->routing;
	uint32_t m = p->net->narcs, K = p->chunks, lo, hi;

	for (size_t i = 0; i < rt->npieces; i++) {
		const struct fluid_piece *q = &rt->pieces[i];

		for (uint32_t k = 0; k < K; k++) {
			if (!fluid_chunk_of(q, k, K, &lo, &hi))
				continue;
			for (uint32_t h = 0; h < q->nhops; h++) {
				size_t at = (size_t)(rt->hop_layer[q->first + h] + k) * m +
					    rt->hop_arc[q->first + h];

				load[at] += hi - lo;
				count[at]++;
			}
		}
	}
}

/* Every step's arcs and capacity sets within step time x bandwidth, as the
 * verifier checks them (its tolerances: relative, and 2^-31 a transfer for
 * the fixed point); a reduction runs the same steps backwards. The
 * schedule's steps are p's from step first on (a second phase's). */
static int window_check(const struct fluid_pipe *p, const struct verify_network *vn, uint32_t first,
			struct verify_report *rep)
{
	uint32_t m = vn->narcs, S = p->steps;
	uint64_t *load = xcalloc((size_t)S * m + 1, sizeof(uint64_t));
	uint32_t *count = xcalloc((size_t)S * m + 1, sizeof(uint32_t));
	double tol = vn->tolerance > 0 ? vn->tolerance : 1e-9, ulp = 1.0 / SCHED_ONE;
	double st = vn->step_time;
	char what[96];
	int rc = 0;

	step_loads(p, load, count);
	for (uint32_t s = 0; s < S && rc == 0; s++) {
		const uint64_t *ld = load + (size_t)s * m;
		const uint32_t *ct = count + (size_t)s * m;
		uint32_t step = p->rev ? S - 1 - s : s;

		for (uint32_t a = 0; a < m && rc == 0; a++) {
			if (!ct[a] || isinf(vn->bw[a]))
				continue;
			double l = (double)ld[a] / SCHED_ONE, lim = st * vn->bw[a];

			if (lim > 0 && l / lim > rep->max_utilisation)
				rep->max_utilisation = l / lim;
			if (l > lim * (1 + tol) + ulp * ct[a]) {
				snprintf(what, sizeof(what), "arc %u -> %u", vn->tail[a],
					 vn->head[a]);
				rc = capacity_fail(rep, first + step, what, l, lim);
			}
		}
		for (uint32_t k = 0; k < vn->nsets && rc == 0; k++) {
			uint64_t sl = 0;
			uint32_t sc = 0;

			for (uint32_t j = vn->set_off[k]; j < vn->set_off[k + 1]; j++) {
				sl += ld[vn->set_arc[j]];
				sc += ct[vn->set_arc[j]];
			}
			if (!sc) /* the verifier looks only at sets a transfer loads */
				continue;
			double l = (double)sl / SCHED_ONE, lim = st * vn->set_bw[k];

			if (lim > 0 && l / lim > rep->max_utilisation)
				rep->max_utilisation = l / lim;
			if (l > lim * (1 + tol) + ulp * sc) {
				snprintf(what, sizeof(what), "capacity set %u", k);
				rc = capacity_fail(rep, first + step, what, l, lim);
			}
		}
	}
	free(load);
	free(count);
	return rc;
}

/* The expansion's cost summed as the verifier sums it, from sum (the
 * phases before): step by step, each
 * step's transfers in fluid_pipe_fill_step's order (piece by piece, then chunk k,
 * then hop: p->order), so that it is the verifier's to the last bit. */
static double step_cost(const struct fluid_pipe *p, const double *cost, double sum)
{
	const struct fluid_routing *rt = &p->r->routing;
	uint32_t K = p->chunks, S = p->steps, lo, hi;

	for (uint32_t s = 0; s < S; s++) {
		uint32_t t = p->rev ? S - 1 - s : s;

		for (size_t i = 0; i < rt->npieces; i++) {
			const struct fluid_piece *q = &rt->pieces[i];

			for (uint32_t j = 0; j < q->nhops; j++) {
				uint32_t h = q->first + p->order[q->first + j],
					 l = rt->hop_layer[h];

				if (l > t || t - l >= K || !fluid_chunk_of(q, t - l, K, &lo, &hi))
					continue;
				sum += cost[rt->hop_arc[h]] * sched_frac(hi - lo);
			}
		}
	}
	return sum;
}

int fluid_pipe_verify(const struct fluid_pipe *p, const struct verify_network *vn,
		      struct verify_report *rep)
{
	int rc = pipe_pattern_check(p, vn, rep);

	/* The expansion's figures: its steps and transfers, its loads and its
	 * cost summed as the verifier sums them; the duplicates are the
	 * pattern's, which the chunks share out. */
	rep->nsteps = p->steps;
	rep->ntransfers = p->ntransfers;
	rep->max_utilisation = 0;
	if (rc == 0)
		rc = window_check(p, vn, 0, rep);
	if (rc == 0)
		rep->network_cost = vn->cost ? step_cost(p, vn->cost, 0) : 0;
	rep->ok = rc == 0;
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
	int rc = pipe_pattern_check(rs, vn, rep);

	agn.step_time = ag_step_time;
	agn.step_times = NULL;
	if (rc == 0 && pipe_pattern_check(ag, &agn, &r2) < 0) {
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
		rc = window_check(rs, vn, 0, rep);
	if (rc == 0)
		rc = window_check(ag, &agn, ag_first, rep);
	if (rc == 0 && vn->cost)
		rep->network_cost = step_cost(ag, vn->cost, step_cost(rs, vn->cost, 0));
	else
		rep->network_cost = 0;
	rep->ok = rc == 0;
	return rc;
}
