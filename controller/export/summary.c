/* A schedule's summary: the engine's working as ofc.v1.ScheduleDetail
 * (the field `detail` of ofc.v1.Schedule), and the summary's JSON, the one
 * shape `ofc schedule --json` prints whether it computed the schedule here
 * or asked ofcd (docs/json.md): the message's figures and its metrics at
 * the top level, then the detail's fields there too; no steps, links or
 * vertices (those are the schedule, which -o writes). */
#include "controller/export/export.h"
#include "controller/export/internal.h"
#include "fluid/fluid.h"
#include "rwa/rwa.h"

#include <math.h>

/* ---- the summary's JSON ------------------------------------------------------ */

void schedule_summary_json(struct json_writer *w, const Ofc__V1__Schedule *m)
{
	static const char *const schedule_only[] = {"steps", "links", "vertices", "detail", NULL};
	const Ofc__V1__ScheduleDetail *d = m->detail;

	jw_obj_begin(w);
	pb_write_json_flat(w, &m->base, schedule_only);
	if (d && d->fluid)
		pb_write_json_flat(w, &d->fluid->base, NULL);
	if (d && d->direct)
		pb_write_json_flat(w, &d->direct->base, NULL);
	if (d && d->ring)
		pb_write_json_flat(w, &d->ring->base, NULL);
	jw_obj_end(w);
}

/* ---- a server fabric's: LP 4.2 and Theorem 4 ----------------------------------- */

/* One phase's solve and Theorem 4's report into m, a FluidPhase or a
 * FluidDetail (their fields of these names are the same), but for hops,
 * chunks and latency, which a FluidDetail has as the Schedule's metrics. */
#define FLUID_SOLVE(m, r, rep)                                                                     \
	do {                                                                                       \
		SET(m, rstar_s_per_gb, (r)->rstar);                                                \
		SET(m, rstar_lower_s_per_gb, (r)->rstar_lower);                                    \
		if (!isnan((r)->objective))                                                        \
			SET(m, objective, (r)->objective);                                         \
		if (!isnan((r)->objective_any_hops))                                               \
			SET(m, objective_any_hops, (r)->objective_any_hops);                       \
		if ((r)->any_hops_note[0])                                                         \
			(m)->any_hops_note = arena_strdup(a, (r)->any_hops_note);                  \
		SET(m, optimal, (r)->optimal);                                                     \
		SET(m, exact_routing, (r)->routing.exact);                                         \
		SET(m, chose_chunks, (rep)->chose_chunks);                                         \
		SET(m, steps, (rep)->steps);                                                       \
		SET(m, step_time_s_per_gb, (rep)->step_time);                                      \
		SET(m, schedule_cost, (rep)->cost);                                                \
	} while (0)

static Ofc__V1__FluidPhase *fluid_phase_msg(struct arena *a, const char *collective,
					    const struct fluid_result *r,
					    const struct fluid_steps_report *rep)
{
	Ofc__V1__FluidPhase *m = arena_alloc(a, sizeof(*m));

	ofc__v1__fluid_phase__init(m);
	m->collective = (char *)collective;
	SET(m, hops, r->hops);
	SET(m, chunks, rep->chunks);
	SET(m, latency_s_per_gb, rep->latency);
	FLUID_SOLVE(m, r, rep);
	return m;
}

static Ofc__V1__FluidSolvers *fluid_solvers_msg(struct arena *a, const struct fluid_result *r)
{
	Ofc__V1__FluidSolvers *m = arena_alloc(a, sizeof(*m));

	ofc__v1__fluid_solvers__init(m);
	if (r->method == FLUID_FULL) {
		m->full = (char *)lp_solver_name(r->lp_full);
	} else {
		m->master = (char *)lp_solver_name(r->lp_master);
		m->pricing = (char *)lp_solver_name(r->lp_pricing);
	}
	return m;
}

/* An allreduce is solved per phase (per GB of shard, 1/terminals of the
 * data); the whole says its steps, whether both are optimal and its cost. */
static void fluid_allreduce(struct arena *a, const struct fluid_answer *fa, Ofc__V1__FluidDetail *m)
{
	m->phases = arena_array(a, 2, sizeof(*m->phases));
	m->phases[m->n_phases++] = fluid_phase_msg(a, "reduce-scatter", &fa->r, &fa->rep);
	m->phases[m->n_phases++] = fluid_phase_msg(a, "allgather", &fa->r_ag, &fa->rep_ag);
	SET(m, steps, fluid_answer_steps(fa));
	SET(m, optimal, fa->r.optimal && fa->r_ag.optimal);
	SET(m, exact_routing, fa->r.routing.exact && fa->r_ag.routing.exact);
	SET(m, schedule_cost, fa->rep.cost + fa->rep_ag.cost);
}

Ofc__V1__ScheduleDetail *schedule_fluid_detail_msg(struct arena *a, const struct fabric *f,
						   const struct fluid_answer *fa)
{
	const struct fluid_result *r = &fa->r;
	Ofc__V1__ScheduleDetail *d = arena_alloc(a, sizeof(*d));
	Ofc__V1__FluidDetail *m = arena_alloc(a, sizeof(*m));

	ofc__v1__schedule_detail__init(d);
	ofc__v1__fluid_detail__init(m);
	d->fluid = m;
	m->fabric = arena_strdup(a, f->name);
	m->method = (char *)fluid_method_name(r->method);
	m->lp_solver = fluid_solvers_msg(a, r);
	SET(m, terminals, fa->terminals);
	SET(m, vertices, fa->net->nverts);
	SET(m, arcs, fa->net->narcs);
	SET(m, group_order, r->group_order);
	SET(m, pricing_classes, r->classes);
	if (fa->allreduce)
		fluid_allreduce(a, fa, m);
	else
		FLUID_SOLVE(m, r, &fa->rep);
	/* the whole schedule per GB of each GPU's data (an allreduce's vector) */
	SET(m, cut_bound_s_per_gb, fa->lower_bound);
	SET(m, schedule_latency_s_per_gb, fa->latency);
	SET(m, alpha_s, fa->alpha);
	SET(m, predicted_s, fa->predicted);
	SET(m, transfers, fluid_answer_transfers(fa));
	if (!fa->verified) {
		m->verify_error = arena_strdup(a, fa->vr.error);
	} else {
		SET(m, max_utilisation, fa->vr.max_utilisation);
		SET(m, verified_cost, fa->vr.network_cost);
	}
	SET(m, seconds, r->seconds_total + fa->r_ag.seconds_total + fa->seconds_group);
	SET(m, seconds_group, fa->seconds_group);
	return d;
}

static double gap(double a, double b)
{
	return a / b - 1;
}

void schedule_fluid_msccl_msg(struct arena *a, Ofc__V1__ScheduleDetail *d,
			      const struct fluid_net *n, const struct msccl_summary *ms)
{
	Ofc__V1__MscclExport *m = arena_alloc(a, sizeof(*m));
	const struct msccl_price *p = &ms->price;

	ofc__v1__msccl_export__init(m);
	d->fluid->msccl = m;
	m->runtime = ms->runtime == MSCCL_LEGACY ? "legacy" : "executor";
	if (ms->chunks_engine)
		SET(m, chunks_engine, ms->chunks_engine);
	SET(m, chunks_per_block, ms->mi.chunks_per_block);
	SET(m, exact, ms->mi.exact);
	SET(m, channels, ms->mi.channels);
	SET(m, thread_blocks, ms->mi.thread_blocks);
	SET(m, operations, ms->mi.operations);
	SET(m, most_nodes, ms->mi.most_nodes);
	SET(m, forwarded, ms->forwarded);
	if (!isnan(p->price_s) && n->narcs) {
		SET(m, price_s, p->price_s);
		SET(m, critical_path_s, p->critical_s);
		SET(m, critical_path_sends, p->critical_sends);
		if (p->busiest_set) {
			m->busiest = (char *)fluid_set_name(n, p->busiest);
		} else {
			char buf[256];

			snprintf(buf, sizeof(buf), "%s -> %s",
				 fluid_vertex_name(n, n->tail[p->busiest]),
				 fluid_vertex_name(n, n->head[p->busiest]));
			m->busiest = arena_strdup(a, buf);
		}
		SET(m, busiest_gb, p->busiest_gb);
		SET(m, busiest_s, p->busiest_s);
	}
	SET(m, planned_s, ms->planned_s);
	if (m->has_price_s && ms->planned_s > 0)
		SET(m, gap_planned, gap(p->price_s, ms->planned_s));
	if (ms->optimum_s > 0) {
		SET(m, optimum_s, ms->optimum_s);
		if (m->has_price_s)
			SET(m, gap_optimum, gap(p->price_s, ms->optimum_s));
	}
}
