/* The collectives other than all-gather on a WDM ring.
 *
 * Reduce-scatter is the all-gather read backwards: where the all-gather
 * sends block b from u to v in step t, the reduce-scatter sends v's partial
 * sum of shard b to u in step T-1-t. In an all-gather in which no node
 * receives a block twice, the transfers of block b form a broadcast tree
 * from b; backwards it is a reduction tree into b, and a node sends its
 * partial of b only after every node below it has folded theirs in (they
 * received b later in the all-gather). The same segments carry the light
 * the other way round, on the same fibre and wavelength, so a
 * conflict-free all-gather gives a conflict-free reduce-scatter and the
 * add/drop counts swap. Allreduce is that reduce-scatter followed by the
 * all-gather (node b owns shard b in between). The verifier checks all of
 * it with its reduce semantics; nothing here is trusted.
 *
 * All-to-all: a distinct block for every ordered pair, each on a direct
 * lightpath routed and coloured by rwa_solve (the heuristic, the ILP or the
 * LP rounding); the colours beyond one round become further steps. */
#include "optree/internal.h"

#include <stdlib.h>
#include <string.h>

void result_reverse(struct optree_result *res)
{
	struct schedule *s = &res->sched;
	uint32_t T = s->nsteps;
	struct xfer *x = xmalloc((s->nxfers + 1) * sizeof(*x));
	uint32_t *start = xmalloc(((size_t)T + 1) * sizeof(uint32_t));
	size_t k = 0;

	for (uint32_t t = 0; t < T; t++) {
		uint32_t o = T - 1 - t;

		start[t] = (uint32_t)k;
		for (uint32_t i = s->step_start[o]; i < s->step_start[o + 1]; i++) {
			struct xfer y = s->xfers[i];
			enum ring_dir d = xfer_dir(&y) == DIR_CW ? DIR_CCW : DIR_CW;

			y.src = s->xfers[i].dst;
			y.dst = s->xfers[i].src;
			y.flags = xfer_flags(d, XFER_REDUCE);
			x[k++] = y;
		}
	}
	start[T] = (uint32_t)k;
	memcpy(s->xfers, x, k * sizeof(*x));
	memcpy(s->step_start, start, ((size_t)T + 1) * sizeof(uint32_t));
	free(x);
	free(start);
	s->collective = SCHED_REDUCE_SCATTER;
	res->collective = SCHED_REDUCE_SCATTER;
	for (uint32_t i = 0; i < res->nstages / 2; i++) {
		struct optree_stage tmp = res->stage[i];

		res->stage[i] = res->stage[res->nstages - 1 - i];
		res->stage[res->nstages - 1 - i] = tmp;
	}
	for (uint32_t i = 0; i < res->nstages; i++)
		res->stage[i].first_step = T - (res->stage[i].first_step + res->stage[i].steps);
}

void result_concat(struct optree_result *rs, struct optree_result *ag)
{
	uint32_t T = rs->sched.nsteps;

	rs->sched.collective = SCHED_ALLREDUCE;
	rs->collective = SCHED_ALLREDUCE;
	sched_append(&rs->sched, &ag->sched);
	rs->stage =
	    xreallocarray(rs->stage, (size_t)rs->nstages + ag->nstages + 1, sizeof(*rs->stage));
	for (uint32_t i = 0; i < ag->nstages; i++) {
		rs->stage[rs->nstages + i] = ag->stage[i];
		rs->stage[rs->nstages + i].first_step += T;
	}
	rs->nstages += ag->nstages;
	rs->split_steps += ag->split_steps;
	rs->analytic_steps += ag->analytic_steps;
	optree_result_free(ag);
}

int build_alltoall(const struct optree_ring *r, const struct optree_opts *o,
		   struct optree_result *res, struct ofc_error *err)
{
	uint32_t n = r->nodes, cap = 0;
	struct rwa_ring ring = {n, r->wavelengths, r->fibres};
	struct rwa_opts ro = {.engine = o->rwa_engine ? (enum rwa_engine)o->rwa_engine
						      : RWA_ENGINE_HEURISTIC,
			      .objective = RWA_MIN_WAVELENGTHS,
			      .time_limit = o->time_limit,
			      .lp_solver = o->lp_solver};
	struct rwa_solution sol = {0};
	struct rwa_report rep;
	struct rwa_demand *dem;
	size_t ndem;

	if ((uint64_t)n * (n - 1) > RWA_MAX_DEMANDS)
		return ofc_error_set(
		    err, OFC_E_INPUT,
		    "all-to-all on %u nodes is %llu lightpaths; rwa_solve takes at "
		    "most %u",
		    n, (unsigned long long)n * (n - 1), RWA_MAX_DEMANDS);
	rwa_all_to_all(n, &dem, &ndem);
	if (rwa_solve(&ring, dem, ndem, &ro, &sol, &rep, err) < 0) {
		free(dem);
		return -1;
	}
	res->rwa_engine = ro.engine;
	res->rwa = rep;
	struct ot_arc *arc = xmalloc((ndem + 1) * sizeof(*arc));
	uint32_t *blk = xmalloc((ndem + 1) * sizeof(uint32_t));
	for (size_t i = 0; i < ndem; i++) {
		arc[i] = (struct ot_arc){dem[i].src, dem[i].dst, 1, RWA_CW};
		blk[i] = dem[i].src * n + dem[i].dst;
	}
	for (size_t k = 0; k < sol.nruns; k++)
		arc[sol.runs[k].id].dir = sol.runs[k].dir;

	struct emitter e;
	emitter_init(&e, r, &res->sched);
	sched_reserve(&res->sched, ndem);
	struct optree_stage *st = result_add_stage(res, &cap);
	emit_fixed(&e, arc, &sol, blk, 1, st);
	st->max_load = rwa_solution_max_load(&ring, dem, ndem, &sol);
	st->lower_bound = demands_lower_bound(r, arc, ndem);
	st->transfers = ndem;
	st->groups = 1;
	res->split_steps = e.split_steps;
	emitter_free(&e);
	rwa_solution_free(&sol);
	free(dem);
	free(arc);
	free(blk);
	return 0;
}
