/* Schedules on a server fabric: the config's servers, rails and
 * capacity sets as fluid's network (fabric/servers.c), LP 4.2 solved by the
 * method asked (Mirrored DW over the automorphisms found by refinement, plain
 * DW or the full LP), Theorem 4 turning the fluid optimum into a step
 * schedule of K chunks, planned, verified on the network (vertex kinds,
 * capacity sets per step) and priced from its period, and made a step at
 * a time for a consumer of every transfer. An allreduce is a
 * reduce-scatter then an allgather: two solves, two periods, one schedule
 * checked as one (fluid_allreduce_verify). */
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
	case SCHED_ALLREDUCE: /* its first phase */
		*out = FLUID_REDUCE_SCATTER;
		return 0;
	case SCHED_ALLTOALL:
		*out = FLUID_ALLTOALL;
		return 0;
	}
	return ofc_error_set(err, OFC_E_INPUT, "the fluid engine has no %s",
			     sched_collective_name(c));
}

/* Servers all from one template come first in fabric_server_net's network:
 * their group of server rotations and one server's symmetries (one pricing
 * class) when it exists; -1 otherwise (then nauty's group, listed), with
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

/* The request's size, else the config's collective of that kind (bytes
 * per GPU; 0: none). */
static uint64_t request_size(const struct schedule_query *q)
{
	for (uint32_t i = 0; !q->size && i < q->fabric->ncollectives; i++)
		if (q->fabric->collectives[i].op == q->collective)
			return q->fabric->collectives[i].size;
	return q->size;
}

/* The network, the collective, the method, the root and (for unrooted
 * collectives by default, or --method mirrored) the group, into o. */
static int prepare(const struct schedule_query *q, const struct fluid_query *x,
		   struct fluid_answer *a, struct fluid_opts *o, struct ofc_error *err)
{
	struct fluid_net *n = a->net;
	struct fluid_group *g = a->group;
	/* The symmetry search may take a quarter of the request's memory and
	 * its time. */
	struct fluid_group_limits lim = {.clock = q->clock,
					 .max_bytes = schedule_memory_limit(q) / 4};
	bool late = false;
	double t0;

	if (!schedule_fluid_fabric(q->fabric))
		return ofc_error_set(err, OFC_E_INPUT,
				     "the fluid engine needs a server fabric (servers:, "
				     "fabric_vertices:, fabric_links: in the config)");
	if (fluid_collective_of(q->collective, &o->collective, err) < 0)
		return -1;
	if (x->method && fluid_method_parse(x->method, &o->method) < 0)
		return ofc_error_set(err, OFC_E_INPUT, "unknown --method '%s' (mirrored, dw, full)",
				     x->method);
	if (fabric_server_net(q->fabric, n, err) < 0)
		return -1;
	a->have_net = true;
	a->terminals = fluid_terminals(n, NULL);
	bool rooted = o->collective == FLUID_BROADCAST || o->collective == FLUID_REDUCE;

	if (rooted) {
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
		o->root = (uint32_t)root;
	}
	if (!x->method && !rooted) {
		/* The default: mirrored where the servers give one pricing
		 * class (a routing of a piece per GPU, as plain DW's), else
		 * plain DW. */
		t0 = now_seconds();
		clock_progress(q->clock, "symmetry search", -1);
		if (server_blocks(q->fabric, n, &lim, g, &late, err) == 0) {
			o->method = FLUID_MIRRORED;
			o->group = g;
			o->group_checked = true; /* fluid_group_blocks checked it on n */
		}
		if (late)
			return -1;
		a->seconds_group = now_seconds() - t0;
	}
	if (o->method == FLUID_MIRRORED && !o->group) {
		uint32_t cap =
		    2 * a->terminals < FLUID_MAX_GROUP ? 2 * a->terminals : FLUID_MAX_GROUP;

		t0 = now_seconds();
		clock_progress(q->clock, "symmetry search", -1);
		if (server_blocks(q->fabric, n, &lim, g, &late, err) == 0)
			o->group_checked = true; /* fluid_group_blocks checked it on n */
		else if (late || fluid_group_detect(n, cap, &lim, g, err) < 0)
			return -1;
		a->seconds_group = now_seconds() - t0;
		o->group = g;
	}
	return 0;
}

/* One collective solved (LP 4.2 within the request's deadline) and laid
 * out by Theorem 4 as its period into pipe, for so's alpha and size, s
 * the schedule's head alone: no transfer is made until a consumer of
 * every transfer asks (fluid_answer_stream, fluid_answer_expand). */
static int solve_phase(const struct schedule_query *q, const struct fluid_net *n,
		       struct fluid_opts o, struct fluid_steps_opts so, struct fluid_result *r,
		       bool *have, struct fluid_steps_report *rep, struct schedule *s,
		       struct fluid_pipe *pipe, struct ofc_error *err)
{
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
	if (fluid_solve(n, &o, r, err) < 0)
		return -1;
	*have = true;
	fluid_routing_merge(&r->routing);
	so.clock = q->clock;
	so.threads = q->threads;
	clock_progress(q->clock, "Theorem 4", -1);
	if (fluid_pipeline(n, r, &so, pipe, rep, err) < 0)
		return -1;
	/* the routing is the group's orbit of each class's: the pattern's
	 * check may take a root's verdict for its images */
	if (o.method == FLUID_MIRRORED)
		pipe->group = o.group;
	fluid_pipe_head(pipe, &so, rep, s);
	return 0;
}

/* An allreduce's head and its steps' counts, from its two periods. */
static void allreduce_head(struct fluid_answer *a)
{
	uint32_t S1 = a->pipe.steps, S2 = a->pipe_ag.steps;

	a->count = xmalloc(((size_t)S1 + S2 + 1) * sizeof(size_t));
	memcpy(a->count, a->pipe.count, S1 * sizeof(size_t));
	memcpy(a->count + S1, a->pipe_ag.count, S2 * sizeof(size_t));
	sched_init(&a->s, SCHED_ALLREDUCE, "fluid", a->net->nverts);
	a->have_schedule = true;
	a->by_period = true;
	sched_set_metric(&a->s, "rstar", a->r.rstar + a->r_ag.rstar);
	sched_set_metric(&a->s, "cost", a->rep.cost + a->rep_ag.cost);
}

/* An allreduce: the reduce-scatter's period, then the allgather's from
 * the step after its last, one schedule of the shared type planned,
 * verified and priced from the two periods; each phase moves one shard
 * per GPU. */
static int allreduce(const struct schedule_query *q, struct fluid_answer *a, struct fluid_opts o,
		     const struct fluid_steps_opts *so, struct ofc_error *err)
{
	struct schedule head;

	if (solve_phase(q, a->net, o, *so, &a->r, &a->have_result, &a->rep, &head, &a->pipe, err) <
	    0)
		return -1;
	sched_free(&head);
	o.collective = FLUID_ALLGATHER;
	if (solve_phase(q, a->net, o, *so, &a->r_ag, &a->have_result_ag, &a->rep_ag, &head,
			&a->pipe_ag, err) < 0)
		return -1;
	sched_free(&head);
	allreduce_head(a);
	return 0;
}

/* The schedule's time and bound for the request's size (else 1 GB per
 * GPU), and the verifier's verdict on the network, each step at its
 * phase's step time (an allreduce's: the reduce-scatter's, then the
 * allgather's). */
static int check(const struct schedule_query *q, struct fluid_answer *a, struct ofc_error *err)
{
	double gb = a->size ? (double)a->size / 1e9 : 1, k = a->terminals;
	struct verify_network vn;

	if (a->allreduce) {
		/* s/GB of shard, and M/k GB of shard per phase */
		a->lower_bound = fluid_allreduce_bound(a->net) / k;
		a->latency = (a->rep.latency + a->rep_ag.latency) / k;
		a->predicted = a->rep.steps * (a->alpha + a->rep.step_time * gb / k) +
			       a->rep_ag.steps * (a->alpha + a->rep_ag.step_time * gb / k);
	} else {
		a->lower_bound = fluid_lower_bound(a->net, a->r.collective, a->s.root);
		a->latency = a->rep.latency;
		a->predicted = a->rep.steps * (a->alpha + a->rep.step_time * gb);
	}
	a->s.size_bytes = a->size ? a->size : 1000000000u;
	a->s.time_us = a->predicted * 1e6;
	a->s.lower_bound_us = a->lower_bound * gb * 1e6; /* bandwidth: no alpha */
	snprintf(a->s.topology, sizeof(a->s.topology), "servers:%s", q->fabric->name);
	fluid_verify_network(a->net, a->rep.step_time, &vn);
	clock_progress(q->clock, "verification", 0);
	if (a->allreduce)
		a->verified = fluid_allreduce_verify(&a->pipe, &a->pipe_ag, a->pipe.steps, &vn,
						     a->rep_ag.step_time, &a->vr) == 0;
	else
		a->verified = fluid_pipe_verify(&a->pipe, &vn, &a->vr) == 0;
	/* past the deadline the verifier stops: no verdict, no answer */
	if (clock_check(q->clock, "verification", err) < 0)
		return -1;
	a->s.verified = a->verified;
	return 0;
}

int schedule_fluid(const struct schedule_query *q, const struct fluid_query *x,
		   struct fluid_answer *a, struct ofc_error *err)
{
	struct fluid_opts o = {.method = FLUID_DW,
			       .hops = x->hops,
			       .time_limit = x->time_limit > 0 ? x->time_limit : 60,
			       /* the models' estimate against --max-memory (ofcd
				* --max-request-memory); unset, fluid's 4 GiB */
			       .mem_limit = q->max_memory,
			       .lp_solver = schedule_lp_solver(q),
			       .threads = q->threads,
			       .bound_any_hops = x->bound_any_hops,
			       .progress = x->progress,
			       .progress_ctx = x->progress_ctx};
	struct fluid_steps_opts so = {.chunks = q->chunks, .epsilon = x->epsilon};

	memset(a, 0, sizeof(*a));
	a->net = xcalloc(1, sizeof(*a->net));
	a->group = xcalloc(1, sizeof(*a->group));
	if (prepare(q, x, a, &o, err) < 0)
		return -1;
	a->allreduce = q->collective == SCHED_ALLREDUCE;
	/* alpha: the request's, else the config's (validation gives every
	 * config one, 10 us by default, as `ofc show` prints). K for it and
	 * the size when there is a size (an allreduce's phases move one
	 * shard of it) or an alpha was asked for (then 1 MiB without one);
	 * else the least K within --epsilon of the fluid latency. */
	a->alpha = q->alpha_set ? q->alpha : q->fabric->cost.alpha;
	a->size = request_size(q);
	a->chunks_for_alpha = !q->chunks && (a->size || q->alpha_set || q->fabric->cost.alpha_set);
	if (a->chunks_for_alpha) {
		so.alpha = a->alpha;
		so.size = (double)(a->size ? a->size : 1u << 20) / 1e9 /
			  (a->allreduce ? a->terminals : 1);
	}
	if (a->allreduce) {
		if (allreduce(q, a, o, &so, err) < 0)
			return -1;
	} else {
		a->by_period = true;
		if (solve_phase(q, a->net, o, so, &a->r, &a->have_result, &a->rep, &a->s, &a->pipe,
				err) < 0)
			return -1;
		a->have_schedule = true;
	}
	return check(q, a, err);
}

int fluid_answer_rechunk(const struct schedule_query *q, struct fluid_answer *a, uint32_t chunks,
			 struct ofc_error *err)
{
	struct fluid_steps_opts so = {.chunks = chunks, .clock = q->clock, .threads = q->threads};

	if (!a->have_result || (a->allreduce && !a->have_result_ag))
		return ofc_error_set(err, OFC_E_RUNTIME, "no solved schedule to lay out again");
	if (a->have_schedule)
		sched_free(&a->s);
	a->have_schedule = false;
	fluid_pipe_free(&a->pipe);
	fluid_pipe_free(&a->pipe_ag);
	free(a->count);
	a->count = NULL;
	if (fluid_pipeline(a->net, &a->r, &so, &a->pipe, &a->rep, err) < 0)
		return -1;
	if (a->allreduce) {
		if (fluid_pipeline(a->net, &a->r_ag, &so, &a->pipe_ag, &a->rep_ag, err) < 0)
			return -1;
		allreduce_head(a);
	} else {
		fluid_pipe_head(&a->pipe, &so, &a->rep, &a->s);
		a->have_schedule = true;
		a->by_period = true;
	}
	a->chunks_for_alpha = false;
	return check(q, a, err);
}

double fluid_answer_time_at(const struct fluid_answer *a, uint32_t chunks)
{
	double gb = a->size ? (double)a->size / 1e9 : 1, k = a->allreduce ? a->terminals : 1;
	double t = 0;

	for (int ph = 0; ph < (a->allreduce ? 2 : 1); ph++) {
		const struct fluid_steps_report *rep = ph ? &a->rep_ag : &a->rep;
		/* Theorem 4: T + K - 1 steps of R / K */
		double steps = (double)rep->steps - rep->chunks + chunks,
		       step = rep->step_time * rep->chunks / chunks;

		t += steps * (a->alpha + step * gb / k);
	}
	return t;
}

/* Step t of the whole schedule from the period: an allreduce's
 * allgather follows its reduce-scatter's steps. */
static void fill_step(const void *ctx, uint32_t t, struct xfer *out)
{
	const struct fluid_answer *a = ctx;

	if (a->allreduce && t >= a->pipe.steps)
		fluid_pipe_fill_step(&a->pipe_ag, t - a->pipe.steps, out);
	else
		fluid_pipe_fill_step(&a->pipe, t, out);
}

bool fluid_answer_stream(const struct fluid_answer *a, struct sched_stream *st)
{
	if (!a->by_period || a->s.nsteps)
		return false;
	*st = (struct sched_stream){.head = &a->s,
				    .nsteps = fluid_answer_steps(a),
				    .count = a->allreduce ? a->count : a->pipe.count,
				    .fill = fill_step,
				    .ctx = a};
	return true;
}

int fluid_answer_expand(const struct schedule_query *q, struct fluid_answer *a,
			struct ofc_error *err)
{
	uint64_t limit = schedule_memory_limit(q), held = mem_held();
	uint64_t left = limit > held ? limit - held : 1;
	double total = (double)fluid_answer_transfers(a);
	struct sched_stream st;
	struct schedule s;

	if (!fluid_answer_stream(a, &st))
		return 0;
	if (total * sizeof(struct xfer) > (double)left) {
		char need_s[32], max_s[32];

		fmt_size(need_s, sizeof(need_s), (uint64_t)(total * sizeof(struct xfer)));
		fmt_size(max_s, sizeof(max_s), left);
		return ofc_error_set(
		    err, OFC_E_RUNTIME,
		    "Theorem 4's schedule (K = %u chunks, %u steps) needs about %s for %.3g "
		    "transfers, over the %s left of the memory limit (ofc --max-memory, ofcd "
		    "--max-request-memory); fewer chunks (--chunks) need proportionally less",
		    a->rep.chunks, st.nsteps, need_s, total, max_s);
	}
	if (sched_stream_expand(&st, &s, err) < 0)
		return -1;
	sched_free(&a->s);
	a->s = s;
	return 0;
}

uint32_t fluid_answer_steps(const struct fluid_answer *a)
{
	if (!a->by_period || a->s.nsteps)
		return a->s.nsteps;
	return a->pipe.steps + (a->allreduce ? a->pipe_ag.steps : 0);
}

size_t fluid_answer_transfers(const struct fluid_answer *a)
{
	if (!a->by_period || a->s.nsteps)
		return a->s.nxfers;
	return a->pipe.ntransfers + (a->allreduce ? a->pipe_ag.ntransfers : 0);
}

void fluid_answer_free(struct fluid_answer *a)
{
	if (a->have_schedule)
		sched_free(&a->s);
	fluid_pipe_free(&a->pipe);
	fluid_pipe_free(&a->pipe_ag);
	free(a->count);
	if (a->have_result)
		fluid_result_free(&a->r);
	if (a->have_result_ag)
		fluid_result_free(&a->r_ag);
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
