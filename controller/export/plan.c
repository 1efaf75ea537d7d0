/* A job's plan (controller/jobplan) as ofc.v1.Plan: the one message both
 * `ofc plan --workload --json` prints (through pbjson) and ofcd answers
 * GetPlan with, so the two cannot drift apart. Built in an arena that
 * borrows the result's strings: free the arena before the result. */
#include "controller/export/export.h"
#include "controller/export/internal.h"
#include "controller/jobplan/jobplan.h"

#include <math.h>

static const char *phase_group(const struct jobplan_result *r, uint32_t p)
{
	const struct wl_phase *ph = &r->workload->phases[p];

	return ph->collective ? r->workload->kinds[ph->kind].name : "all";
}

static Ofc__V1__PlanSwitch *switch_msg(struct arena *a, const struct fswitch *sw)
{
	Ofc__V1__PlanSwitch *m = arena_alloc(a, sizeof(*m));
	bool panel = sw->kind == SWITCH_PATCH_PANEL;

	ofc__v1__plan_switch__init(m);
	m->name = sw->name;
	m->type = (char *)(panel ? "patch-panel" : "ocs");
	SET(m, switch_s, panel ? sw->move_time : sw->reconfig_time);
	return m;
}

static Ofc__V1__PlanCandidate *candidate_msg(struct arena *a, const struct jobplan_topo *t)
{
	Ofc__V1__PlanCandidate *m = arena_alloc(a, sizeof(*m));

	ofc__v1__plan_candidate__init(m);
	m->name = (char *)t->name;
	m->spec = t->spec;
	m->origin = (char *)jobplan_origin_name(t->origin);
	SET(m, connected, t->connected);
	SET(m, circuits, t->ncircuits);
	return m;
}

static Ofc__V1__PlanPrice *price_msg(struct arena *a, const struct jobplan_cost *c)
{
	Ofc__V1__PlanPrice *m = arena_alloc(a, sizeof(*m));

	ofc__v1__plan_price__init(m);
	SET(m, ok, c->ok);
	SET(m, seconds, c->seconds);
	if (!c->ok) {
		m->why = (char *)c->why;
		return m;
	}
	SET(m, time_us, c->us);
	SET(m, latency_us, c->lat_us);
	SET(m, bandwidth_us, c->bw_us);
	SET(m, steps, c->steps);
	m->how = (char *)c->how;
	m->algorithm = (char *)c->algo;
	SET(m, verified, c->verified);
	if (c->theta > 0)
		SET(m, theta, c->theta);
	if (c->mcf_s > 0)
		SET(m, mcf_seconds, c->mcf_s);
	return m;
}

/* A phase of the workload and its price on every candidate. */
static Ofc__V1__PlanWorkloadPhase *phase_msg(struct arena *a, const struct jobplan_result *r,
					     uint32_t p)
{
	const struct workload *w = r->workload;
	const struct wl_phase *ph = &w->phases[p];
	Ofc__V1__PlanWorkloadPhase *m = arena_alloc(a, sizeof(*m));

	ofc__v1__plan_workload_phase__init(m);
	m->name = ph->name;
	m->collective = (char *)workload_collective_name(ph->collective);
	m->group = (char *)phase_group(r, p);
	SET(m, groups, w->kinds[ph->kind].ngroups);
	SET(m, group_size, w->kinds[ph->kind].size);
	SET(m, size, ph->size);
	SET(m, count, ph->count);
	m->n_on = r->ntopo;
	m->on = arena_array(a, r->ntopo, sizeof(*m->on));
	for (uint32_t t = 0; t < r->ntopo; t++)
		m->on[t] = price_msg(a, &r->cost[(size_t)p * r->ntopo + t]);
	return m;
}

/* One way to run an iteration: its time and each phase's candidate,
 * time and switching before it. */
static Ofc__V1__PlanWay *way_msg(struct arena *a, const struct jobplan_result *r,
				 enum jobplan_kind k)
{
	const struct jobplan_way *w = &r->way[k];
	Ofc__V1__PlanWay *m = arena_alloc(a, sizeof(*m));
	double iters = r->workload->iterations ? r->workload->iterations : 1;

	ofc__v1__plan_way__init(m);
	m->kind = (char *)jobplan_kind_name(k);
	SET(m, have, w->have);
	if (!w->have) {
		m->why_not = (char *)w->why_not;
		return m;
	}
	SET(m, iteration_us, w->iter_us);
	SET(m, first_switch_us, w->first_us);
	SET(m, job_us, w->first_us + iters * w->iter_us);
	m->n_phases = r->nphases;
	m->phases = arena_array(a, r->nphases, sizeof(*m->phases));
	for (uint32_t p = 0; p < r->nphases; p++) {
		Ofc__V1__PlanPhase *ph = arena_alloc(a, sizeof(*ph));
		const struct jobplan_topo *t = &r->topo[w->topo[p]];

		ofc__v1__plan_phase__init(ph);
		ph->name = r->workload->phases[p].name;
		SET(ph, candidate, w->topo[p]);
		ph->topology = (char *)t->name;
		ph->spec = t->spec;
		SET(ph, time_us, w->phase_us[p]);
		SET(ph, switch_us, w->switch_us[p]);
		SET(ph, switch_full_us, w->switch_full[p]);
		SET(ph, moves, w->changes[p]);
		m->phases[p] = ph;
	}
	return m;
}

/* --plot's points, one panel: each way's time (NAN, written null, where
 * it has none) and the best. */
static void points_msg(struct arena *a, const struct jobplan_series *s, bool by_delay,
		       Ofc__V1__PlanPoint ***out, size_t *n)
{
	*n = JOBPLAN_SWEEP_POINTS;
	*out = arena_array(a, JOBPLAN_SWEEP_POINTS, sizeof(**out));
	for (int i = 0; i < JOBPLAN_SWEEP_POINTS; i++) {
		Ofc__V1__PlanPoint *m = arena_alloc(a, sizeof(*m));

		ofc__v1__plan_point__init(m);
		if (by_delay)
			SET(m, switching_s, s->x[i]);
		else
			SET(m, size_scale, s->x[i]);
		m->n_iteration_us = JOBPLAN_KINDS;
		m->iteration_us = arena_array(a, JOBPLAN_KINDS, sizeof(*m->iteration_us));
		for (int k = 0; k < JOBPLAN_KINDS; k++) {
			Ofc__V1__PlanPoint__IterationUsEntry *e = arena_alloc(a, sizeof(*e));

			ofc__v1__plan_point__iteration_us_entry__init(e);
			e->key = (char *)jobplan_kind_name((enum jobplan_kind)k);
			SET(e, value, s->y[k][i]);
			m->iteration_us[k] = e;
		}
		m->best = (char *)jobplan_kind_name((enum jobplan_kind)s->chosen[i]);
		(*out)[i] = m;
	}
}

static Ofc__V1__PlanSweep *sweep_msg(struct arena *a, const struct jobplan_result *r)
{
	Ofc__V1__PlanSweep *m = arena_alloc(a, sizeof(*m));
	struct jobplan_series *s = arena_alloc(a, sizeof(*s));

	ofc__v1__plan_sweep__init(m);
	jobplan_sweep(r, true, s);
	points_msg(a, s, true, &m->by_switching_s, &m->n_by_switching_s);
	jobplan_sweep(r, false, s);
	points_msg(a, s, false, &m->by_size_scale, &m->n_by_size_scale);
	return m;
}

Ofc__V1__Plan *plan_msg(struct arena *a, const struct jobplan_result *r, bool sweep)
{
	const struct workload *w = r->workload;
	const struct fabric *f = r->fabric;
	Ofc__V1__Plan *m = arena_alloc(a, sizeof(*m));
	Ofc__V1__PlanOverhead *o = arena_alloc(a, sizeof(*o));

	ofc__v1__plan__init(m);
	m->workload = (char *)(w->name ? w->name : "");
	m->fabric = f->name;
	SET(m, hosts, f->nhosts);
	SET(m, ports, r->ports);
	SET(m, iterations, w->iterations ? w->iterations : 1);
	SET(m, seconds, r->seconds);
	m->n_switches = f->nswitches;
	m->switches = arena_array(a, f->nswitches, sizeof(*m->switches));
	for (uint32_t s = 0; s < f->nswitches; s++)
		m->switches[s] = switch_msg(a, &f->switches[s]);
	if (r->notes[0])
		m->notes = (char *)r->notes;
	ofc__v1__plan_overhead__init(o);
	SET(o, transaction_s, r->overhead.txn_s);
	SET(o, change_s, r->overhead.change_s);
	m->switch_overhead = o;
	m->n_candidates = r->ntopo;
	m->candidates = arena_array(a, r->ntopo, sizeof(*m->candidates));
	for (uint32_t t = 0; t < r->ntopo; t++)
		m->candidates[t] = candidate_msg(a, &r->topo[t]);
	m->n_phases = r->nphases;
	m->phases = arena_array(a, r->nphases, sizeof(*m->phases));
	for (uint32_t p = 0; p < r->nphases; p++)
		m->phases[p] = phase_msg(a, r, p);
	m->n_ways = JOBPLAN_KINDS;
	m->ways = arena_array(a, JOBPLAN_KINDS, sizeof(*m->ways));
	for (int k = 0; k < JOBPLAN_KINDS; k++)
		m->ways[k] = way_msg(a, r, (enum jobplan_kind)k);
	m->chosen = (char *)jobplan_kind_name(r->chosen_kind);
	m->why = (char *)r->why;
	if (sweep)
		m->sweep = sweep_msg(a, r);
	return m;
}
