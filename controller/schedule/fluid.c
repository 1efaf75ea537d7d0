/* Schedules on a server fabric (issue 13): the config's servers, rails and
 * capacity sets as fluid's network (fabric/servers.c), LP 4.2 solved by the
 * method asked (Mirrored DW over the automorphisms found by refinement, plain
 * DW or the full LP), Theorem 4 turning the fluid optimum into a step
 * schedule of K chunks, and the one verifier checking it on the network
 * (vertex kinds, capacity sets per step). */
#include "controller/schedule/schedule.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Automorphisms beyond this many are not listed (a subgroup is used). */
#define FLUID_MAX_GROUP 4096u
/* ... and no more than twice the GPUs: the mirrored routing spreads each
 * origin's unit over the images of its trees, distinct trees that even
 * merged (fluid_routing_merge) make a schedule as large as the group (on
 * 16 GPUs, NVLink only: 26.8 million transfers over 2,880 automorphisms). */

bool schedule_fluid_fabric(const struct fabric *f)
{
	return f && f->nservers > 0;
}

static int fluid_collective_of(enum sched_collective c, enum fluid_collective *out,
			       struct ofc_error *err)
{
	switch (c) {
	case SCHED_ALLGATHER:
		*out = FLUID_ALLGATHER;
		return 0;
	case SCHED_BROADCAST:
		*out = FLUID_BROADCAST;
		return 0;
	case SCHED_REDUCE:
		*out = FLUID_REDUCE;
		return 0;
	case SCHED_REDUCE_SCATTER:
		*out = FLUID_REDUCE_SCATTER;
		return 0;
	case SCHED_ALLTOALL:
		*out = FLUID_ALLTOALL;
		return 0;
	default:
		return ofc_error_set(err, OFC_E_INPUT,
				     "the fluid engine schedules allgather, broadcast, reduce, "
				     "reduce-scatter and alltoall, not %s (an allreduce is a "
				     "reduce-scatter then an allgather)",
				     sched_collective_name(c));
	}
}

/* Servers all from one template come first in fabric_server_net's network:
 * their group of server rotations and one server's symmetries (one pricing
 * class) when it exists; -1 otherwise (then the refinement search's), with
 * *late set when the request's clock ran out (then err says so). */
static int server_blocks(const struct fabric *f, const struct fluid_net *n,
			 const struct fluid_group_limits *lim, struct fluid_group *g, bool *late,
			 struct ofc_error *err)
{
	const char *tmpl = NULL;
	uint32_t blocks = 0, bsize = 0;
	struct ofc_error e = {0};
	int rc;

	for (uint32_t h = 0; h < f->nhosts; h++) {
		if (!f->hosts[h].server)
			continue;
		if (tmpl && strcmp(tmpl, f->hosts[h].server) != 0)
			return -1;
		tmpl = f->hosts[h].server;
		blocks++;
	}
	for (uint32_t i = 0; tmpl && i < f->nservers; i++)
		if (strcmp(f->servers[i].name, tmpl) == 0)
			bsize = f->servers[i].nvertices;
	if (!blocks || !bsize)
		return -1;
	rc = fluid_group_blocks(n, blocks, bsize, lim, g, &e);
	if (rc < 0 && clock_expired(lim->clock)) {
		*late = true;
		*err = e;
	}
	return rc;
}

int schedule_fluid(const struct schedule_query *q, const struct fluid_query *x,
		   struct fluid_answer *a, struct ofc_error *err)
{
	struct fluid_net *n = xcalloc(1, sizeof(*n));
	struct fluid_group *g = xcalloc(1, sizeof(*g));
	struct fluid_opts o = {.method = FLUID_DW,
			       .hops = x->hops,
			       .time_limit = x->time_limit > 0 ? x->time_limit : 60,
			       /* the models' estimate against --max-memory (ofcd
				* --max-request-memory); unset, fluid's 4 GiB */
			       .mem_limit = q->max_memory,
			       .progress = x->progress,
			       .progress_ctx = x->progress_ctx};
	struct fluid_steps_opts so = {.chunks = q->chunks, .epsilon = x->epsilon};
	struct verify_network vn;
	struct verify_opts vo = {.clock = q->clock};
	/* The symmetry search may take a quarter of the request's memory and
	 * its time (issue 34). */
	struct fluid_group_limits lim = {.clock = q->clock,
					 .max_bytes = schedule_memory_limit(q) / 4};
	bool late = false;
	double t0;
	int rc = -1;

	memset(a, 0, sizeof(*a));
	a->net = n;
	a->group = g;
	if (!schedule_fluid_fabric(q->fabric))
		return ofc_error_set(err, OFC_E_INPUT,
				     "the fluid engine needs a server fabric (servers:, "
				     "fabric_vertices:, fabric_links: in the config)");
	if (fluid_collective_of(q->collective, &o.collective, err) < 0)
		return -1;
	if (x->method && fluid_method_parse(x->method, &o.method) < 0)
		return ofc_error_set(err, OFC_E_INPUT, "unknown --method '%s' (mirrored, dw, full)",
				     x->method);
	if (fabric_server_net(q->fabric, n, err) < 0)
		return -1;
	a->have_net = true;
	a->terminals = fluid_terminals(n, NULL);
	if (o.collective == FLUID_BROADCAST || o.collective == FLUID_REDUCE) {
		int root = -1;

		if (x->root) {
			root = fluid_find_vertex(n, x->root);
			if (root < 0)
				return ofc_error_set(err, OFC_E_INPUT,
						     "--root '%s' is not a vertex of %s", x->root,
						     q->fabric->name);
		} else {
			for (uint32_t v = 0; v < n->nverts && root < 0; v++)
				if (n->kind[v] & FLUID_TERMINAL)
					root = (int)v;
		}
		o.root = (uint32_t)root;
	}
	bool rooted = o.collective == FLUID_BROADCAST || o.collective == FLUID_REDUCE;

	if (!x->method && !rooted) {
		/* The default: mirrored where the servers give one pricing
		 * class (a routing of a piece per GPU, as plain DW's), else
		 * plain DW. */
		t0 = now_seconds();
		clock_progress(q->clock, "symmetry search", -1);
		if (server_blocks(q->fabric, n, &lim, g, &late, err) == 0) {
			o.method = FLUID_MIRRORED;
			o.group = g;
		}
		if (late)
			return -1;
		a->seconds_group = now_seconds() - t0;
	}
	if (o.method == FLUID_MIRRORED && !o.group) {
		uint32_t cap =
		    2 * a->terminals < FLUID_MAX_GROUP ? 2 * a->terminals : FLUID_MAX_GROUP;

		t0 = now_seconds();
		clock_progress(q->clock, "symmetry search", -1);
		if (server_blocks(q->fabric, n, &lim, g, &late, err) < 0 &&
		    (late || fluid_group_detect(n, cap, &lim, g, err) < 0))
			return -1;
		a->seconds_group = now_seconds() - t0;
		o.group = g;
	}
	/* The solve stops at its limit with a feasible answer and certified
	 * bounds (docs/fluid.md): within the request's deadline it has half
	 * of what is left, as the all-to-all MCF's try has, for Theorem 4 and
	 * the verifier need time too (model W, 32 servers: 6.5 s for 22.7 M
	 * transfers after a 60 s solve). */
	if (q->clock && q->clock->deadline > 0) {
		double left = q->clock->deadline - now_seconds();

		/* (fluid's time limit 0 is none: never hand it what is gone) */
		if (clock_check(q->clock, o.group ? "symmetry search" : "fluid solve", err) < 0)
			return -1;
		if (left / 2 < o.time_limit)
			o.time_limit = left / 2;
	}
	clock_progress(q->clock, "fluid solve", -1);
	if (fluid_solve(n, &o, &a->r, err) < 0)
		return -1;
	a->have_result = true;
	a->lower_bound = fluid_lower_bound(n, o.collective, o.root);
	/* K: for the request's alpha and size when it has them, else the least
	 * K within --epsilon of the fluid latency. */
	if (!q->chunks && (q->alpha_set || q->fabric->cost.alpha_set)) {
		so.alpha = q->alpha_set ? q->alpha : q->fabric->cost.alpha;
		so.size = (double)(q->size ? q->size : 1u << 20) / 1e9;
		a->alpha = so.alpha;
	}
	fluid_routing_merge(&a->r.routing);
	/* Its transfers within what the request has left (20 bytes each) */
	uint64_t limit = schedule_memory_limit(q), held = mem_resident();

	so.max_bytes = limit > held ? limit - held : 1;
	so.clock = q->clock;
	clock_progress(q->clock, "Theorem 4", -1);
	if (fluid_schedule(n, &a->r, &so, &a->s, &a->rep, err) < 0)
		return -1;
	a->have_schedule = true;
	/* Priced for the request's size (else the unit, 1 GB): Theorem 4's
	 * time, and the cut bound's (a bandwidth bound: no alpha). */
	{
		double gb = q->size ? (double)q->size / 1e9 : 1;

		a->s.size_bytes = q->size ? q->size : 1000000000u;
		a->s.time_us = a->rep.steps * (so.alpha + a->rep.step_time * gb) * 1e6;
		a->s.lower_bound_us = a->lower_bound * gb * 1e6;
		snprintf(a->s.topology, sizeof(a->s.topology), "servers:%s", q->fabric->name);
	}
	fluid_verify_network(n, a->rep.step_time, &vn);
	vo.network = &vn;
	clock_progress(q->clock, "verification", 0);
	a->verified = sched_verify(&a->s, &vo, &a->vr) == 0;
	/* past the deadline the verifier stops: no verdict, no answer */
	if (clock_check(q->clock, "verification", err) < 0)
		return -1;
	a->s.verified = a->verified;
	rc = 0;
	return rc;
}

void fluid_answer_free(struct fluid_answer *a)
{
	if (a->have_schedule)
		sched_free(&a->s);
	if (a->have_result)
		fluid_result_free(&a->r);
	if (a->group) {
		fluid_group_free(a->group);
		free(a->group);
	}
	if (a->net) {
		if (a->have_net)
			fluid_net_free(a->net);
		free(a->net);
	}
	memset(a, 0, sizeof(*a));
}
