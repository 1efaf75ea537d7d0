/* A WDM ring schedule's working as ofc.v1.RingDetail (the field
 * `detail.ring` of its ofc.v1.Schedule): what `ofc schedule --json` and
 * `ofc optree --json` say beside the message's figures, one algorithm's
 * outcome at a time (--algo all prints one summary each), so that the
 * summary has one formatter (summary.c). A figure the schedule's metrics
 * already say is left out. The messages borrow r's strings. */
#include "controller/export/export.h"
#include "controller/export/internal.h"
#include "optree/optree.h"
#include "rwa/rwa.h"

#include <string.h>

static bool has_metric(const Ofc__V1__Schedule *s, const char *name)
{
	for (size_t i = 0; i < s->n_metrics; i++)
		if (strcmp(s->metrics[i]->key, name) == 0)
			return true;
	return false;
}

/* All-to-all: the RWA engine asked for and its figures (--engine ilp that
 * found the heuristic optimal solves no model, and says so). */
static Ofc__V1__RingRwa *rwa_msg(struct arena *a, const struct optree_result *res)
{
	const struct rwa_report *rr = &res->rwa;
	Ofc__V1__RingRwa *m = NEW(a, Ofc__V1__RingRwa, OFC__V1__RING_RWA__INIT);

	m->engine = (char *)rwa_engine_name(res->rwa_engine);
	m->method = (char *)rr->method;
	SET(m, colours, rr->wavelengths_used);
	SET(m, lower_bound, rr->lower_bound);
	SET(m, relaxation, rr->relaxation);
	SET(m, optimal, rr->optimal);
	SET(m, time_limit_hit, rr->time_limit_hit);
	SET(m, ilp_solves, rr->ilp_solves);
	SET(m, seconds, rr->seconds);
	return m;
}

static Ofc__V1__RingStage *stage_msg(struct arena *a, const struct optree_stage *s)
{
	Ofc__V1__RingStage *m = NEW(a, Ofc__V1__RingStage, OFC__V1__RING_STAGE__INIT);

	SET(m, radix, s->radix);
	SET(m, groups, s->groups);
	SET(m, min_group, s->min_group);
	SET(m, max_group, s->max_group);
	SET(m, max_load, s->max_load);
	SET(m, steps, s->steps);
	SET(m, colour_steps, s->colour_steps);
	SET(m, lower_bound, s->lower_bound);
	SET(m, partial_channels, s->partial_channels);
	SET(m, transfers, s->transfers);
	return m;
}

/* The plan: the tree's (and one-stage's) radices and stages. */
static void plan(struct arena *a, const struct optree_result *res, enum optree_algo alg,
		 Ofc__V1__RingDetail *m)
{
	bool tree = alg == OPTREE_TREE || alg == OPTREE_ONESTAGE;

	if (tree) {
		m->radices = arena_array(a, res->plan.depth, sizeof(*m->radices));
		for (uint32_t i = 0; i < res->plan.depth; i++)
			m->radices[m->n_radices++] = res->plan.radix[i];
	}
	SET(m, uneven, tree && res->plan.uneven);
	m->stage_steps = arena_array(a, res->nstages, sizeof(*m->stage_steps));
	for (uint32_t i = 0; i < res->nstages; i++)
		m->stage_steps[m->n_stage_steps++] = res->stage[i].steps;
	if (!tree)
		return;
	m->stage_detail = arena_array(a, res->nstages, sizeof(*m->stage_detail));
	for (uint32_t i = 0; i < res->nstages; i++)
		m->stage_detail[m->n_stage_detail++] = stage_msg(a, &res->stage[i]);
}

/* Per-node MRR tracking needs every node's lightpaths: a reduced schedule
 * says its periods instead. */
static Ofc__V1__RingReduced *reduced_msg(struct arena *a, const struct schedule_outcome *o)
{
	const struct optree_result *res = &o->ring.res;
	Ofc__V1__RingReduced *m = NEW(a, Ofc__V1__RingReduced, OFC__V1__RING_REDUCED__INIT);

	m->group = "rotations, a subgroup per stage";
	SET(m, program_transfers, o->s.nxfers);
	m->stage_periods = arena_array(a, res->nstages, sizeof(*m->stage_periods));
	for (uint32_t i = 0, t = 0; i < res->nstages; t += res->stage[i++].steps)
		m->stage_periods[m->n_stage_periods++] = res->period[t];
	SET(m, generate_s, o->gen_s);
	SET(m, verify_s, o->verify_s);
	return m;
}

/* The timing model's figures (optree_timing). */
static void timing(const struct schedule_result *q, const struct schedule_outcome *o,
		   Ofc__V1__RingDetail *m)
{
	const struct optree_time *tm = &o->ring.tm;

	SET(m, step_us, tm->step_us);
	if (q->compare && q->fluid.have) {
		SET(m, fluid_bound_us, o->fluid_bound_us);
		SET(m, below_fluid_bound, o->below_fluid);
	}
	SET(m, overlap, q->overlap);
	SET(m, time_plain_us, tm->plain_us);
	SET(m, overlap_saved_us, tm->saved_us);
	SET(m, stage_retunes, tm->retune_stages);
	SET(m, hidden_stage_retunes, tm->hidden_stages);
}

static void built(struct arena *a, const struct schedule_result *q,
		  const struct schedule_outcome *o, const Ofc__V1__Schedule *s,
		  Ofc__V1__RingDetail *m)
{
	const struct optree_result *res = &o->ring.res;
	enum optree_algo alg = o->ring.algo;

	SET(m, analytic_depth, res->analytic_depth);
	if (!has_metric(s, "analytic_steps"))
		SET(m, analytic_steps, res->analytic_steps);
	if (alg == OPTREE_TREE) {
		SET(m, analytic_k, o->ring.an.k_real);
		SET(m, analytic_radix, o->ring.an.radix);
		SET(m, analytic_time_us, o->ring.an.time_us);
	}
	if (alg == OPTREE_WRHT)
		SET(m, wrht_group, res->wrht_radix);
	if (res->rwa_engine) {
		m->rwa_method = (char *)res->rwa.method;
		m->rwa = rwa_msg(a, res);
	}
	plan(a, res, alg, m);
	if (!has_metric(s, "stages"))
		SET(m, stages, res->nstages);
	if (!has_metric(s, "max_wavelengths_used"))
		SET(m, max_wavelengths_used, o->ring.vr.max_wavelengths_used);
	if (!has_metric(s, "lower_bound_steps"))
		SET(m, lower_bound_steps, res->lower_bound_steps);
	SET(m, gap_steps, (int64_t)o->steps - (int64_t)res->lower_bound_steps);
	if (!has_metric(s, "split_steps"))
		SET(m, split_steps, res->split_steps);
	timing(q, o, m);
	if (o->is_reduced) {
		m->reduced = reduced_msg(a, o);
	} else {
		SET(m, mrr_retune_steps, o->ring.tm.retune_steps);
		SET(m, time_all_retunes_us, o->ring.tm.all_retunes_us);
		SET(m, time_all_retunes_plain_us, o->ring.tm.all_retunes_plain_us);
	}
	if (!o->verified)
		m->verify_error = (char *)o->verify_error;
}

Ofc__V1__ScheduleDetail *schedule_ring_detail_msg(struct arena *a, const struct schedule_result *q,
						  const struct schedule_outcome *o,
						  const Ofc__V1__Schedule *s)
{
	const struct optree_ring *ring = &q->ring;
	Ofc__V1__ScheduleDetail *d =
	    NEW(a, Ofc__V1__ScheduleDetail, OFC__V1__SCHEDULE_DETAIL__INIT);
	Ofc__V1__RingDetail *m = NEW(a, Ofc__V1__RingDetail, OFC__V1__RING_DETAIL__INIT);

	d->ring = m;
	SET(m, wavelengths, ring->wavelengths);
	SET(m, fibres, ring->fibres);
	if (q->ring_name)
		m->ring = (char *)q->ring_name;
	SET(m, block_bytes, ring->block_bytes);
	SET(m, max_add, ring->max_add);
	if (!o->applies)
		m->error = (char *)o->why;
	else
		built(a, q, o, s, m);
	return d;
}
