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

static int build_net(const struct graph *g, double arc_gbps, const double *cap, struct fluid_net *n,
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
			    fluid_add_arc(n, u, g->adj[a], arc_gbps * (cap ? cap[a] : 1), 1.0,
					  err) < 0)
				return -1;
	return 0;
}

/* LP 4.2 on n (DW, R* only, CERTIFY_SECONDS) for r's collective, in units
 * of shard_gb; each outcome gets the bound that holds for it (any_t: every
 * outcome may move data further than its step count says, as a WDM ring's
 * lightpaths do). */
static void certify(struct schedule_result *r, const struct fluid_net *n, double shard_gb,
		    bool any_t)
{
	struct direct_fluid *df = &r->fluid;
	struct fluid_opts o = {.method = FLUID_DW,
			       .time_limit = CERTIFY_SECONDS,
			       .skip_phase2 = true,
			       .mem_limit = 1ull << 30};
	struct fluid_result fr;
	struct ofc_error err = {0};

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
	if (fluid_solve(n, &o, &fr, &err) < 0) {
		snprintf(df->why, sizeof(df->why), "no fluid bound: %.140s", err.msg);
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
	for (uint32_t i = 0; i < r->nout; i++) {
		struct schedule_outcome *e = &r->out[i];

		if (!e->applies)
			continue;
		e->fluid_bound_us =
		    df->any_hops || (!any_t && !e->cut_through && e->steps <= df->hops)
			? df->rstar_lower_us
			: df->cut_us;
		/* Beating the bound by more than rounding is a bug somewhere. */
		e->below_fluid = e->time_us < e->fluid_bound_us * (1 - 1e-6);
	}
}

void direct_certify(struct schedule_result *r, const struct schedule_query *q)
{
	struct direct_fluid *df = &r->fluid;
	const struct graph *g = r->g;
	struct fluid_net n;
	struct ofc_error err = {0};
	(void)q;

	memset(df, 0, sizeof(*df));
	if (g->n > CERTIFY_MAX_NODES) {
		snprintf(df->why, sizeof(df->why), "no fluid bound above %u nodes",
			 CERTIFY_MAX_NODES);
		return;
	}
	/* A node's egress B over its d links (each at its rate over the slowest
	 * when rates differ: the bound must hold for schedules priced so); one
	 * unit is a shard, M/N bytes. */
	if (build_net(g, r->cost.bandwidth / (r->degree ? r->degree : 1) / 8 / 1e9, r->arc_cap, &n,
		      &err) < 0) {
		snprintf(df->why, sizeof(df->why), "no fluid bound: %.140s", err.msg);
		fluid_net_free(&n);
		return;
	}
	certify(r, &n, (double)r->cost.size / g->n / 1e9, false);
	fluid_net_free(&n);
}

void ring_certify(struct schedule_result *r)
{
	struct direct_fluid *df = &r->fluid;
	const struct optree_ring *ring = &r->ring;
	uint32_t nn = ring->nodes;
	struct fluid_net n;
	struct ofc_error err = {0};
	char name[16];
	/* every segment, each direction: F fibres x W wavelengths x B_lambda */
	double gbps = (double)ring->fibres * ring->wavelengths * ring->rate / 8 / 1e9;
	int rc = 0;

	memset(df, 0, sizeof(*df));
	if (r->collective == SCHED_ALLTOALL || nn > CERTIFY_MAX_NODES) {
		snprintf(df->why, sizeof(df->why), "no fluid bound for %s on %u nodes",
			 sched_collective_name(r->collective), nn);
		return;
	}
	fluid_net_init(&n);
	for (uint32_t u = 0; u < nn && rc >= 0; u++) {
		snprintf(name, sizeof(name), "n%u", u);
		rc = fluid_add_vertex(&n, name, FLUID_GPU, &err);
	}
	for (uint32_t u = 0; u < nn && rc >= 0; u++) {
		rc = fluid_add_arc(&n, u, (u + 1) % nn, gbps, 1.0, &err);
		if (rc >= 0 && nn > 2)
			rc = fluid_add_arc(&n, u, (u + nn - 1) % nn, gbps, 1.0, &err);
	}
	if (rc < 0) {
		snprintf(df->why, sizeof(df->why), "no fluid bound: %.140s", err.msg);
		fluid_net_free(&n);
		return;
	}
	/* One unit is a node's block; a lightpath crosses many segments in one
	 * step, so only the bound for any hop count holds. */
	certify(r, &n, (double)ring->block_bytes / 1e9, true);
	fluid_net_free(&n);
}
