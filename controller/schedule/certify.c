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
 * longer than its one priced step, so it gets the any-T bound.
 *
 * What it costs. Plain Dantzig-Wolfe prices one problem per
 * origin: on torus:8x8's all-to-all it ran its 5 s and certified nothing
 * beyond the cut bound, 5 of the command's 5.7 s. The graph's automorphisms
 * (nauty, milliseconds) make it Mirrored DW, one problem
 * per orbit of origins (notes Sec. 4.2): 0.005 s there to the optimum, R*
 * 5.12 s/GB where the cut bound is 1.26. The solve then gets as long as the
 * engines took (at least CERTIFY_MIN_SECONDS, at most CERTIFY_SECONDS);
 * stopped, it keeps what it certified, and the cut bound always stands. */
#include "controller/schedule/internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CERTIFY_MAX_NODES   256
#define CERTIFY_SECONDS	    5.0
#define CERTIFY_MIN_SECONDS 0.25
/* The automorphisms listed for the mirrored master: at most this many, in
 * at most CERTIFY_GROUP_BYTES (the graph's listing and fluid's copy); a
 * larger group is used as the subgroup listed. */
#define CERTIFY_MAX_ORDER   4096u
#define CERTIFY_GROUP_BYTES (64ull << 20)

#define NONE UINT32_MAX

/* The network of g: a GPU per node, an arc of arc_gbps x cap[a] per arc
 * but self-loops (generalized Kautz: they carry nothing anywhere).
 * netarc[a]: g's arc a's index in the network, NONE for a self-loop. */
static int build_net(const struct graph *g, double arc_gbps, const double *cap, struct fluid_net *n,
		     uint32_t *netarc, struct ofc_error *err)
{
	char name[16];

	fluid_net_init(n);
	for (uint32_t u = 0; u < g->n; u++) {
		snprintf(name, sizeof(name), "n%u", u);
		if (fluid_add_vertex(n, name, FLUID_GPU, err) < 0)
			return -1;
	}
	for (uint32_t u = 0; u < g->n; u++)
		for (uint32_t a = g->off[u]; a < g->off[u + 1]; a++) {
			netarc[a] = NONE;
			if (g->adj[a] == u)
				continue;
			netarc[a] = n->narcs;
			if (fluid_add_arc(n, u, g->adj[a], arc_gbps * (cap ? cap[a] : 1), 1.0,
					  err) < 0)
				return -1;
		}
	return 0;
}

/* Aut(g) as a group of the network (vertices and arcs mapped as g's
 * automorphisms map nodes and arcs), within deadline: false when only the
 * identity was found, or the group does not keep the arcs' capacities
 * (links of different rates), and the solve is plain DW. */
static bool net_group(const struct graph *g, const struct fluid_net *n, const uint32_t *netarc,
		      double deadline, struct fluid_group *fg)
{
	struct ofc_clock clock = {.start = now_seconds(), .deadline = deadline};
	uint64_t per = ((uint64_t)g->n + g->m) * sizeof(uint32_t) * 2;
	uint32_t max_order = CERTIFY_GROUP_BYTES / per < CERTIFY_MAX_ORDER
				 ? (uint32_t)(CERTIFY_GROUP_BYTES / per)
				 : CERTIFY_MAX_ORDER;
	struct graph_group gg;
	struct ofc_error err = {0};

	memset(fg, 0, sizeof(*fg));
	if (max_order < 2)
		return false;
	graph_automorphisms(g, max_order, &clock, &gg);
	if (gg.order < 2) {
		graph_group_free(&gg);
		return false;
	}
	*fg = (struct fluid_group){.order = gg.order, .nverts = n->nverts, .narcs = n->narcs};
	fg->vert = xmalloc(((size_t)gg.order * n->nverts + 1) * sizeof(uint32_t));
	fg->arc = xmalloc(((size_t)gg.order * n->narcs + 1) * sizeof(uint32_t));
	fg->set = xmalloc(sizeof(uint32_t));
	memcpy(fg->vert, gg.node, (size_t)gg.order * g->n * sizeof(uint32_t));
	for (uint32_t i = 0; i < gg.order; i++)
		for (uint32_t a = 0; a < g->m; a++)
			if (netarc[a] != NONE)
				fg->arc[(size_t)i * n->narcs + netarc[a]] =
				    netarc[gg.arc[(size_t)i * g->m + a]];
	graph_group_free(&gg);
	if (fluid_group_check(n, fg, &err) < 0) {
		fluid_group_free(fg);
		return false;
	}
	return true;
}

/* The bound on schedules of at most `steps` hops: what the hop search
 * certified at any T >= steps (R*(T) never grows with T), the bound for
 * every T at least (the trials it stopped short of were flat). */
static double hop_bound(const struct fluid_result *fr, uint32_t steps)
{
	double b = fmax(fr->lower_bound, fr->rstar_lower_any_hops);

	for (uint32_t i = 0; i < fr->ntrials; i++)
		if (fr->trials[i].hops >= steps && fr->trials[i].rstar_lower > b)
			b = fr->trials[i].rstar_lower;
	if (fr->hops >= steps && fr->rstar_lower > b)
		b = fr->rstar_lower;
	return b;
}

/* LP 4.2 on n (R* only, Mirrored DW with grp, else plain DW; `seconds`)
 * for r's collective, in units of shard_gb; each outcome gets the bound
 * that holds for it (any_t: every outcome may move data further than its
 * step count says, as a WDM ring's lightpaths do). A solve that fails
 * (out of time before a first solution, over its memory) leaves the cut
 * bound, and why. */
static void certify(struct schedule_result *r, const struct fluid_net *n,
		    const struct fluid_group *grp, double shard_gb, bool any_t, double seconds,
		    uint64_t mem, enum lp_solver sv)
{
	struct direct_fluid *df = &r->fluid;
	struct fluid_opts o = {.method = grp ? FLUID_MIRRORED : FLUID_DW,
			       .group = grp,
			       .time_limit = seconds,
			       .skip_phase2 = true,
			       .mem_limit = mem,
			       .lp_solver = sv};
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
	df->have = true;
	df->cut_us = fluid_lower_bound(n, o.collective, 0) * shard_gb * 1e6;
	if (fluid_solve(n, &o, &fr, &err) < 0) {
		/* the cut bound holds whatever LP 4.2 did */
		df->rstar = NAN;
		df->rstar_lower_us = df->cut_us;
		df->any_hops = true;
		snprintf(df->why, sizeof(df->why), "LP 4.2 not solved: %.120s", err.msg);
	} else {
		df->lp = true;
		df->hops = fr.hops;
		df->optimal = fr.optimal;
		df->mirrored = fr.method == FLUID_MIRRORED;
		df->rstar = fr.rstar;
		df->seconds = fr.seconds_total;
		/* A solve stopped by the time limit may certify less than the cut. */
		df->rstar_lower = fmax(fr.rstar_lower, fr.lower_bound);
		df->rstar_lower_us = df->rstar_lower * shard_gb * 1e6;
		/* What it certified and the feasible value meet: R*(T) found. */
		df->optimal = fr.optimal || fr.rstar <= df->rstar_lower * (1 + 1e-9);
		/* R*(T) at the cut bound: no T does better, so it holds for any. */
		df->any_hops = fr.rstar <= fr.lower_bound * (1 + 1e-9);
	}
	for (uint32_t i = 0; i < r->nout; i++) {
		struct schedule_outcome *e = &r->out[i];

		if (!e->applies)
			continue;
		e->fluid_bound_us = df->any_hops ? df->rstar_lower_us
				    : !any_t && !e->cut_through && df->lp && e->steps <= df->hops
					? hop_bound(&fr, e->steps) * shard_gb * 1e6
					: df->cut_us;
		/* Beating the bound by more than rounding is a bug somewhere. */
		e->below_fluid = e->time_us < e->fluid_bound_us * (1 - 1e-6);
	}
	if (df->lp)
		fluid_result_free(&fr);
}

/* The solve's seconds: as long as the engines took (spent), within
 * [CERTIFY_MIN_SECONDS, CERTIFY_SECONDS], and half of what the request's
 * clock has left. */
static double budget(const struct schedule_query *q, double spent)
{
	double s = spent < CERTIFY_MIN_SECONDS ? CERTIFY_MIN_SECONDS
		   : spent > CERTIFY_SECONDS   ? CERTIFY_SECONDS
					       : spent;

	if (q && q->clock && q->clock->deadline > 0) {
		double left = (q->clock->deadline - now_seconds()) / 2;

		s = left < s ? left : s;
	}
	return s;
}

/* g's network, its group when it has one, and the bound. */
static void certify_graph(struct schedule_result *r, const struct schedule_query *q,
			  const struct graph *g, double arc_gbps, const double *cap,
			  double shard_gb, bool any_t, double spent)
{
	struct direct_fluid *df = &r->fluid;
	uint32_t *netarc = xmalloc(((size_t)g->m + 1) * sizeof(uint32_t));
	double s = budget(q, spent), t0 = now_seconds();
	struct fluid_net n;
	struct fluid_group grp;
	struct ofc_error err = {0};

	if (s <= 0) {
		snprintf(df->why, sizeof(df->why), "no fluid bound: the request's time is spent");
	} else if (build_net(g, arc_gbps, cap, &n, netarc, &err) < 0) {
		snprintf(df->why, sizeof(df->why), "no fluid bound: %.140s", err.msg);
		fluid_net_free(&n);
	} else {
		/* the request's memory (--max-memory), 1 GiB at most */
		uint64_t mem = q ? q->max_memory : 0;

		clock_progress(q ? q->clock : NULL, "fluid bound", -1);
		/* the symmetry search takes a quarter at most */
		bool sym = net_group(g, &n, netarc, t0 + s / 4, &grp);
		double left = s - (now_seconds() - t0);

		certify(r, &n, sym ? &grp : NULL, shard_gb, any_t, left > 0.01 ? left : 0.01,
			mem && mem < (1ull << 30) ? mem : 1ull << 30,
			q ? schedule_lp_solver(q) : LP_SOLVER_DEFAULT);
		df->time_limit = s;
		if (sym)
			fluid_group_free(&grp);
		fluid_net_free(&n);
	}
	free(netarc);
}

void direct_certify(struct schedule_result *r, const struct schedule_query *q, double spent)
{
	const struct graph *g = r->g;

	memset(&r->fluid, 0, sizeof(r->fluid));
	if (g->n > CERTIFY_MAX_NODES) {
		snprintf(r->fluid.why, sizeof(r->fluid.why), "no fluid bound above %u nodes",
			 CERTIFY_MAX_NODES);
		return;
	}
	/* A node's egress B over its d links (each at its rate over the slowest
	 * when rates differ: the bound must hold for schedules priced so); one
	 * unit is a shard, M/N bytes. */
	certify_graph(r, q, g, r->cost.bandwidth / (r->degree ? r->degree : 1) / 8 / 1e9,
		      r->arc_cap, (double)r->cost.size / g->n / 1e9, false, spent);
}

void ring_certify(struct schedule_result *r, const struct schedule_query *q, double spent)
{
	const struct optree_ring *ring = &r->ring;
	uint32_t nn = ring->nodes, m = 0;
	/* every segment, each direction: F fibres x W wavelengths x B_lambda */
	double gbps = (double)ring->fibres * ring->wavelengths * ring->rate / 8 / 1e9;

	memset(&r->fluid, 0, sizeof(r->fluid));
	if (r->collective == SCHED_ALLTOALL || nn > CERTIFY_MAX_NODES || nn < 2) {
		snprintf(r->fluid.why, sizeof(r->fluid.why), "no fluid bound for %s on %u nodes",
			 sched_collective_name(r->collective), nn);
		return;
	}
	uint32_t *tails = xmalloc(2 * (size_t)nn * sizeof(uint32_t));
	uint32_t *heads = xmalloc(2 * (size_t)nn * sizeof(uint32_t));

	for (uint32_t u = 0; u < nn; u++) {
		tails[m] = u;
		heads[m++] = (u + 1) % nn;
		if (nn > 2) {
			tails[m] = u;
			heads[m++] = (u + nn - 1) % nn;
		}
	}
	struct graph *g = graph_from_arcs(nn, m, tails, heads, "wdm-ring");
	/* One unit is a node's block; a lightpath crosses many segments in one
	 * step, so only the bound for any hop count holds. */
	certify_graph(r, q, g, gbps, NULL, (double)ring->block_bytes / 1e9, true, spent);
	graph_free(g);
	free(tails);
	free(heads);
}
