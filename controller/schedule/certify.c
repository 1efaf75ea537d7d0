/* The fluid engine as the certifier of the direct-connect engines (issue
 * 13): `ofc schedule ... --algo all` solves LP 4.2 on the same graph (every
 * node a GPU, every link an arc of B/d) and sets each engine's time beside
 * the least time any schedule can take, so an engine that beats it is a bug
 * the table shows.
 *
 * Which bound holds for which schedule: R*(T) bounds the schedules whose
 * data travels at most T hops (a schedule of S store-and-forward steps is
 * one, T = S); the cut bound holds for any T; and when R*(T) met the cut
 * bound it holds for any T too. A cut-through all-to-all's routes may be
 * longer than its one priced step, so it gets the any-T bound. */
#include "controller/schedule/internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define CERTIFY_MAX_NODES 256
#define CERTIFY_SECONDS	  5.0

static int build_net(const struct graph *g, double arc_gbps, struct fluid_net *n,
		     struct ofc_error *err)
{
	char name[16];

	fluid_net_init(n);
	for (uint32_t u = 0; u < g->n; u++) {
		snprintf(name, sizeof(name), "n%u", u);
		if (fluid_add_vertex(n, name, FLUID_GPU, err) < 0)
			return -1;
	}
	/* Self-loops (generalized Kautz) carry nothing anywhere: left out. */
	for (uint32_t u = 0; u < g->n; u++)
		for (uint32_t a = g->off[u]; a < g->off[u + 1]; a++)
			if (g->adj[a] != u &&
			    fluid_add_arc(n, u, g->adj[a], arc_gbps, 1.0, err) < 0)
				return -1;
	return 0;
}

void direct_certify(struct schedule_result *r, const struct schedule_query *q)
{
	struct direct_fluid *df = &r->fluid;
	const struct graph *g = r->g;
	struct fluid_opts o = {.method = FLUID_DW,
			       .time_limit = CERTIFY_SECONDS,
			       .skip_phase2 = true,
			       .mem_limit = 1ull << 30};
	struct fluid_result fr;
	struct fluid_net n;
	struct ofc_error err = {0};
	double shard_gb, arc_gbps;
	(void)q;

	memset(df, 0, sizeof(*df));
	switch (r->collective) {
	case SCHED_ALLGATHER:
		o.collective = FLUID_ALLGATHER;
		break;
	case SCHED_REDUCE_SCATTER:
		o.collective = FLUID_REDUCE_SCATTER;
		break;
	case SCHED_ALLTOALL:
		o.collective = FLUID_ALLTOALL;
		break;
	default:
		snprintf(df->why, sizeof(df->why), "no fluid bound for %s (not one collective)",
			 sched_collective_name(r->collective));
		return;
	}
	if (g->n > CERTIFY_MAX_NODES) {
		snprintf(df->why, sizeof(df->why), "no fluid bound above %u nodes",
			 CERTIFY_MAX_NODES);
		return;
	}
	/* A node's egress B over its d links; one unit is a shard, M/N bytes. */
	arc_gbps = r->cost.bandwidth / (r->degree ? r->degree : 1) / 8 / 1e9;
	shard_gb = (double)r->cost.size / g->n / 1e9;
	if (build_net(g, arc_gbps, &n, &err) < 0 || fluid_solve(&n, &o, &fr, &err) < 0) {
		snprintf(df->why, sizeof(df->why), "no fluid bound: %.140s", err.msg);
		fluid_net_free(&n);
		return;
	}
	df->have = true;
	df->hops = fr.hops;
	df->optimal = fr.optimal;
	df->rstar = fr.rstar;
	df->seconds = fr.seconds_total;
	df->cut_us = fr.lower_bound * shard_gb * 1e6;
	/* A solve stopped by the time limit may certify less than the cut. */
	df->rstar_lower_us = fmax(fr.rstar_lower, fr.lower_bound) * shard_gb * 1e6;
	/* R*(T) at the cut bound: no T does better, so it holds for any. */
	df->any_hops = fr.rstar <= fr.lower_bound * (1 + 1e-9);
	fluid_result_free(&fr);
	fluid_net_free(&n);
	for (uint32_t i = 0; i < r->nout; i++) {
		struct schedule_outcome *e = &r->out[i];

		if (!e->applies)
			continue;
		e->fluid_bound_us = df->any_hops || (!e->cut_through && e->steps <= df->hops)
					? df->rstar_lower_us
					: df->cut_us;
		/* Beating the bound by more than rounding is a bug somewhere. */
		e->below_fluid = e->time_us < e->fluid_bound_us * (1 - 1e-6);
	}
}
