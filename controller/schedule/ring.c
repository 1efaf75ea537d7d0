/* A config's WDM ring as OpTree's model (optree/optree.h). */
#include "controller/schedule/internal.h"

#include <math.h>
#include <string.h>

struct optree_ring ring_optree_model(const struct fabric *f, const struct ring *ring,
				     enum sched_collective c, uint64_t size)
{
	for (uint32_t i = 0; !size && i < f->ncollectives; i++)
		if (f->collectives[i].op == c)
			size = f->collectives[i].size;
	for (uint32_t i = 0; !size && i < f->ncollectives; i++)
		if (f->collectives[i].op == SCHED_ALLGATHER)
			size = f->collectives[i].size;
	return (struct optree_ring){
	    .nodes = ring->nmembers,
	    .wavelengths = ring->wavelengths,
	    .fibres = ring->fibres,
	    .max_add = ring->interfaces * (ring->mrrs ? ring->mrrs : ring->wavelengths),
	    .rate = ring->rate,
	    .mrr_delay = ring->mrr_delay,
	    .oeo_delay = ring->oeo_delay,
	    .block_bytes = size ? size : 4u << 20,
	};
}

/* ---- collectives on a WDM ring ---------------------------------------------------- */

/* Reduced (OpTree's all-gather above OPTREE_MAX_NODES, or asked for):
 * Eq. 3 with every stage retuning, since the MRR tracking of
 * optree_timing needs every node's lightpaths. */
static void reduced_timing(const struct optree_ring *ring, const struct optree_result *res,
			   struct optree_time *t)
{
	memset(t, 0, sizeof(*t));
	t->step_us = (double)ring->block_bytes * 8.0 / ring->rate * 1e6;
	t->retune_stages = res->nstages;
	t->plain_us = res->sched.nsteps * t->step_us +
		      res->nstages * (ring->mrr_delay + ring->oeo_delay) * 1e6;
	t->time_us = t->plain_us;
}

/* Build one algorithm, verify it with the one verifier against the ring's
 * wavelengths and add/drop limits (reduced: by symmetry), and price it
 * (Eq. 3). */
static void run_one(struct schedule_result *r, const struct schedule_query *q, enum optree_algo a,
		    bool reduce, struct schedule_outcome *o)
{
	struct optree_opts opts = {.algo = a,
				   .reduced = reduce,
				   .overlap = q->overlap,
				   .collective = q->collective,
				   .rwa_engine = q->rwa_engine,
				   .lp_solver = schedule_lp_solver(q),
				   .time_limit = q->time_limit > 0 ? q->time_limit : 0};
	struct optree_plan forced;
	struct ofc_error err = {0};
	struct ring_outcome *w = &o->ring;

	snprintf(o->algo, sizeof(o->algo), "%s", optree_algo_name(a));
	o->is_ring = true;
	w->algo = a;
	optree_analytic(&r->ring, &w->an);
	if (a == OPTREE_TREE && q->depth) {
		if (optree_plan_radices(&r->ring, q->radix, q->depth, &forced, &err) < 0)
			goto fail;
		opts.plan = &forced;
	}
	/* Every algorithm here delivers each of the N(N-1) blocks once per
	 * phase (the all-to-all's lightpaths too): the estimate before
	 * building. */
	double phases = q->collective == SCHED_ALLREDUCE ? 2 : 1;
	/* One stage of direct lightpaths goes through the RWA engine, which
	 * holds each lightpath and its colouring too: 1,155 MiB measured for
	 * the 16.8 M of 4,096 nodes, 72 bytes each. */
	double per = a == OPTREE_ONESTAGE ? 72 : 0;
	if (!reduce && schedule_memory_check(q, optree_algo_name(a), r->ring.nodes,
					     phases * r->ring.nodes * (r->ring.nodes - 1.0), 1, per,
					     o->why, sizeof(o->why)) < 0) {
		o->why_code = OFC_E_RUNTIME;
		return;
	}
	char what[64];
	snprintf(what, sizeof(what), "%s: generation", optree_algo_name(a));
	clock_progress(q->clock, what, -1);
	if (optree_build(&r->ring, &opts, &w->res, &err) < 0)
		goto fail;
	if (clock_check(q->clock, "generation", &err) < 0) {
		optree_result_free(&w->res);
		goto fail;
	}
	struct verify_wdm vw = optree_verify_wdm(&r->ring);
	struct verify_opts vo = {.wdm = &vw, .clock = q->clock};
	struct schedule *s = &w->res.sched;

	snprintf(what, sizeof(what), "%s: verification", optree_algo_name(a));
	clock_progress(q->clock, what, -1);
	if (reduce) {
		struct sched_ring_reduced rr = {w->res.sched, w->res.period};
		double t0 = now_seconds();

		o->verified = sched_verify_ring_reduced(&rr, &vw, &w->vr) == 0;
		o->verify_s = now_seconds() - t0;
		o->is_reduced = true;
		reduced_timing(&r->ring, &w->res, &w->tm);
	} else {
		o->verified = sched_verify(s, &vo, &w->vr) == 0;
		optree_timing(&r->ring, &w->res, q->overlap, &w->tm);
	}
	if (clock_check(q->clock, "verification", &err) < 0) {
		optree_result_free(&w->res);
		goto fail;
	}
	o->applies = true;
	if (!o->verified)
		snprintf(o->verify_error, sizeof(o->verify_error), "%s", w->vr.error);
	s->verified = o->verified;
	o->time_us = w->tm.time_us;
	s->time_us = w->tm.time_us;
	/* the bandwidth term of the bound */
	s->lower_bound_us = w->res.lower_bound_steps * w->tm.step_us;
	o->tau_b = (struct frac){0, 0};
	o->tau_b_value = NAN;
	/* The outcome holds the schedule; the rest of the result stays. */
	o->have = true;
	o->s = *s;
	memset(s, 0, sizeof(*s));
	o->steps = o->s.nsteps;
	o->alphas = o->steps;
	o->ntransfers = reduce ? w->vr.ntransfers : o->s.nxfers;
	sched_set_metric(&o->s, "max_wavelengths_used", w->vr.max_wavelengths_used);
	return;
fail:
	snprintf(o->why, sizeof(o->why), "%s", err.msg);
	o->why_code = err.code;
}

/* The WDM ring's rows of the engine table, at most. */
#define RING_MAX_ENGINES 8

/* The rows a WDM ring request runs: the one named, or (a comparison) every
 * one 'all' compares for the collective; -1 when the name is none of a
 * ring's. */
static int ring_engines(const struct schedule_query *q, const char *algo, enum optree_algo *algos,
			size_t *n, struct ofc_error *err)
{
	const struct engine_ops *e = engine_find(algo, ENGINE_RING), *x;

	*n = 0;
	if (!e) {
		struct strbuf sb = STRBUF_INIT;

		engine_names(&sb, ENGINE_RING, ~0u, 0, ", ");
		ofc_error_set(err, OFC_E_USAGE, "unknown --algo '%s' (%s)", algo, sb.buf);
		sb_free(&sb);
		return -1;
	}
	if (!(e->flags & ENGINE_COMPARE)) {
		algos[(*n)++] = e->wdm;
		return 0;
	}
	for (unsigned i = 0; (x = engine_at(i)) && *n < RING_MAX_ENGINES; i++)
		if ((x->fabrics & ENGINE_RING) && (x->in_all & ENGINE_C(q->collective)))
			algos[(*n)++] = x->wdm;
	if (*n == 0)
		return ofc_error_set(err, OFC_E_USAGE, "no engine on a WDM ring compares %s",
				     sched_collective_name(q->collective));
	return 0;
}

int schedule_ring(struct schedule_result *r, const struct schedule_query *q, const char *algo,
		  struct ofc_error *err)
{
	enum optree_algo algos[RING_MAX_ENGINES], one = 0;
	const struct engine_ops *e;
	size_t n = 1;
	double t_start = now_seconds();

	r->kind = SCHEDULE_RING;
	r->overlap = q->overlap;
	if (q->ring) {
		r->ring = *q->ring;
		r->ring_name = q->ring_name;
	} else {
		const struct fabric *f = q->fabric;
		const struct ring *ring = &f->rings[0];

		if (f->nrings > 1)
			snprintf(r->note, sizeof(r->note),
				 "%s has %u rings; scheduling the first, '%s'", f->file, f->nrings,
				 ring->name);
		if (q->chunks || q->alpha_set || q->bandwidth_set)
			return ofc_error_set(err, OFC_E_USAGE,
					     "--chunks, --alpha and --bandwidth apply to "
					     "direct-connect topologies, not WDM rings");
		r->ring = ring_optree_model(f, ring, q->collective, q->size);
		r->ring_name = ring->name;
	}
	if (ring_engines(q, algo, algos, &n, err) < 0)
		return -1;
	e = engine_find(algo, ENGINE_RING);
	r->compare = e->flags & ENGINE_COMPARE;
	one = algos[0];
	if (q->depth && n == 1 && one != OPTREE_TREE)
		return ofc_error_set(err, OFC_E_USAGE, "--radices applies to --algo optree");
	if (optree_ring_check(&r->ring, err) < 0)
		return -1;
	if (q->depth) {
		struct optree_plan p;

		if (optree_plan_radices(&r->ring, q->radix, q->depth, &p, err) < 0) {
			err->code = OFC_E_USAGE;
			return -1;
		}
	}
	/* OpTree's all-gather reduced by rotations (sched_ring_reduced) when
	 * asked, or by itself where the explicit schedule is refused. */
	bool tree_ag = n == 1 && one == OPTREE_TREE && !q->overlap &&
		       (!q->collective || q->collective == SCHED_ALLGATHER);
	bool reduce =
	    q->reduced == SCHEDULE_REDUCED_ALWAYS ||
	    (q->reduced == SCHEDULE_REDUCED_AUTO && tree_ag && r->ring.nodes > OPTREE_MAX_NODES);
	if (reduce && !tree_ag)
		return ofc_error_set(err, OFC_E_USAGE,
				     "--reduced on a WDM ring: OpTree's all-gather alone (--algo "
				     "optree, no --overlap)");
	if (r->ring.nodes > SCHED_MAX_NODES && !reduce)
		return ofc_error_set(err, OFC_E_INPUT,
				     "%u nodes: schedules are built for at most %u nodes "
				     "(transfers name nodes in 16 bits)",
				     r->ring.nodes, SCHED_MAX_NODES);
	if (reduce && q->reduced == SCHEDULE_REDUCED_AUTO)
		snprintf(r->note, sizeof(r->note),
			 "%u nodes: more than %u, so OpTree's all-gather is the symmetry-reduced "
			 "schedule (an even plan; stage i repeats every n_(i-1) nodes), checked "
			 "by symmetry",
			 r->ring.nodes, OPTREE_MAX_NODES);

	r->out = xcalloc(n, sizeof(*r->out));
	for (size_t i = 0; i < n; i++) {
		struct schedule_outcome *o = &r->out[r->nout++];

		double t0 = now_seconds();

		run_one(r, q, algos[i], reduce, o);
		if (reduce)
			o->gen_s = now_seconds() - t0 - o->verify_s;
		/* Keep only the summary of the algorithms compared: the schedule
		 * of a 4096-node all-gather is 335 MB. */
		if (n > 1 && o->have) {
			sched_free(&o->s);
			o->have = false;
		}
	}
	r->main = &r->out[0];
	if ((e->flags & ENGINE_CERTIFY) && !q->no_certify)
		ring_certify(r, q, now_seconds() - t_start);
	return 0;
}
