/* A direct-connect schedule's working as ofc.v1.DirectDetail (the field
 * `detail.direct` of its ofc.v1.Schedule): what `ofc schedule --json`
 * says beside the message's figures, built from the pipeline's result so
 * that the summary has one formatter (summary.c) here and through ofcd.
 * A figure the schedule's metrics already say is left out: the summary
 * writes those from the metrics. The messages borrow r's strings. */
#include "alltoall/alltoall.h"
#include "controller/export/export.h"
#include "controller/export/internal.h"
#include "rwa/rwa.h"

#include <math.h>
#include <string.h>

static bool has_metric(const struct schedule *s, const char *name)
{
	for (unsigned i = 0; i < s->nmetrics; i++)
		if (strcmp(s->metrics[i].name, name) == 0)
			return true;
	return false;
}

/* f as "341/256", in a; NULL when it is not a valid fraction. */
static char *fraction(struct arena *a, struct frac f)
{
	char buf[64];

	return frac_valid(f) ? arena_strdup(a, frac_str(f, buf, sizeof(buf))) : NULL;
}

/* With failed links: the healthy topology and how much slower this is
 * (time_us and excess absent when the algorithm does not apply there; a
 * fallback's against the algorithm asked, which algorithm names). */
static Ofc__V1__DirectHealthy *healthy_msg(struct arena *a, const struct schedule_result *r,
					   const struct schedule_outcome *o)
{
	Ofc__V1__DirectHealthy *m;

	if (!r->healthy)
		return NULL;
	m = NEW(a, Ofc__V1__DirectHealthy, OFC__V1__DIRECT_HEALTHY__INIT);
	m->topology = (char *)r->healthy->spec;
	if (o->healthy_us > 0) {
		SET(m, time_us, o->healthy_us);
		SET(m, excess, o->time_us / o->healthy_us - 1);
	}
	m->algorithm = (char *)o->fallback_from;
	return m;
}

static Ofc__V1__DegradedPhase *degraded_phase_msg(struct arena *a, const struct schedule_result *r,
						  const struct degraded_phase *ph)
{
	Ofc__V1__DegradedPhase *m = NEW(a, Ofc__V1__DegradedPhase, OFC__V1__DEGRADED_PHASE__INIT);

	SET(m, node_tau_b, ph->node);
	SET(m, node, r->keep ? r->keep[ph->node_at] : ph->node_at);
	SET(m, node_links, ph->node_links);
	SET(m, cut_tau_b, ph->cut);
	SET(m, cut_nodes, ph->cut_nodes);
	SET(m, cut_links, ph->cut_links);
	SET(m, optimal, ph->exact);
	SET(m, balls, ph->balls);
	SET(m, checked, ph->checked);
	return m;
}

/* With failed links: the degraded graph's own bound and what binds it. */
static Ofc__V1__DirectDegradedBound *degraded_msg(struct arena *a, const struct schedule_result *r,
						  const struct schedule_outcome *o)
{
	const struct degraded_bound *b = &r->degraded;
	Ofc__V1__DirectDegradedBound *m;

	if (!r->have_degraded)
		return NULL;
	m = NEW(a, Ofc__V1__DirectDegradedBound, OFC__V1__DIRECT_DEGRADED_BOUND__INIT);
	SET(m, time_us, r->degraded_us);
	/* against the bound the ratio takes (which is this one or above it) */
	if (o->applies && o->time_us > 0 && o->lb_us > 0)
		SET(m, excess, o->time_us / o->lb_us - 1);
	SET(m, steps, b->steps);
	m->steps_from =
	    (char *)(b->steps > r->lb.steps ? (b->steps_exact ? "diameter" : "eccentricity")
					    : "moore");
	SET(m, tau_b, b->tau_b);
	m->binds = (char *)(degraded_cut_binds(b) ? "cut" : "node");
	if (b->in)
		m->allgather = degraded_phase_msg(a, r, &b->ag);
	if (b->out)
		m->reduce_scatter = degraded_phase_msg(a, r, &b->rs);
	SET(m, healthy_lower_bound_us, r->healthy_lb_us);
	SET(m, max_flows, b->flows);
	return m;
}

/* --reduced: the group, its order, the program's size and how it was
 * checked. */
static Ofc__V1__DirectReduced *reduced_msg(struct arena *a, const struct schedule_outcome *o)
{
	const struct sched_group *G = &o->group;
	Ofc__V1__DirectReduced *m = NEW(a, Ofc__V1__DirectReduced, OFC__V1__DIRECT_REDUCED__INIT);

	m->group = (char *)G->name;
	SET(m, order, G->order);
	m->radix = arena_array(a, G->ndims, sizeof(*m->radix));
	for (uint32_t i = 0; i < G->ndims; i++)
		m->radix[m->n_radix++] = G->radix[i];
	if (G->reps > 1) { /* a subgroup: translations by multiples of step[i] */
		m->step = arena_array(a, G->ndims, sizeof(*m->step));
		for (uint32_t i = 0; i < G->ndims; i++)
			m->step[m->n_step++] = G->step[i];
	}
	SET(m, representatives, G->reps);
	m->program =
	    (char *)(G->reps > 1 ? "the representatives' (coordinates below step)" : "node 0's");
	SET(m, program_transfers, o->s.nxfers);
	SET(m, verified, o->verified);
	m->verification = "by symmetry (the representatives' state, arc orbits)";
	return m;
}

double schedule_thm20_bound(const struct schedule_result *r, const struct schedule_outcome *o)
{
	/* Thm 20: T_B <= T_B^OPT + (M/B) d (d^D - 1) / ((d - 1) P N), per phase. */
	double d = r->degree, D = (double)o->steps / cost_phases(r->collective),
	       P = r->bopts.chunks, N = r->g->n;
	double extra = (d == 1 ? D : d * (pow(d, D) - 1) / (d - 1)) / (P * N);

	return o->bst.tau_b_exact_value + cost_phases(r->collective) * extra;
}

double schedule_theta_bound(const struct schedule_result *r)
{
	/* Thm 2 with unit link capacity: theta <= d / L(N, d). NIC-limited
	 * hosts (injection beta links): host forwarding puts every hop through
	 * a host, theta <= beta / L; NIC forwarding its own N-1 shards. */
	double L = (double)moore_tree_cost(r->g->n, r->degree), b = r->degree / L;

	if (r->theta_cap > 0) /* links of different rates */
		b = r->theta_cap;
	if (r->theta_demand > 0) /* a demand matrix (and the rates, if any) */
		b = r->theta_demand;

	if (r->host_beta > 0)
		b = fmin(b, r->host_beta / (r->g->n - 1));
	if (r->host_beta > 0 && !r->nic_forwarding)
		b = fmin(b, r->host_beta_avg / L);
	return b;
}

/* Re-planning: what the healthy solution gave, what solving it cost (not
 * in seconds), and the healthy flow with the lost links' flow rerouted. */
static void mcf_warm(const struct schedule_outcome *o, Ofc__V1__DirectMcf *m)
{
	SET(m, warm_columns, o->mcf.warm_columns);
	SET(m, repaired, o->mcf.repaired);
	SET(m, repair_objective, isfinite(o->mcf.repair_objective) ? o->mcf.repair_objective : 0);
	SET(m, warm_bound_theta, o->mcf.warm_bound > 0 ? 1 / o->mcf.warm_bound : 0);
	SET(m, healthy_seconds, o->healthy_mcf_s);
	SET(m, solve_seconds, o->mcf.solve_seconds);
}

static Ofc__V1__DirectMcf *mcf_msg(struct arena *a, const struct schedule_outcome *o)
{
	Ofc__V1__DirectMcf *m = NEW(a, Ofc__V1__DirectMcf, OFC__V1__DIRECT_MCF__INIT);

	SET(m, theta, o->theta_mcf);
	m->method = (char *)mcf_method_name(o->mcf.method);
	m->lp_solver = (char *)lp_solver_name(o->mcf.lp_solver);
	SET(m, optimal, o->mcf.optimal);
	SET(m, theta_gap, o->mcf.gap);
	m->stop = (char *)mcf_stop_name(o->mcf.stop);
	if (o->mcf.note[0])
		m->note = (char *)o->mcf.note;
	SET(m, warm_started, o->mcf.warm_started);
	if (o->mcf.warm_started)
		mcf_warm(o, m);
	SET(m, group_order, o->mcf.group_order);
	SET(m, sources_solved, o->mcf.classes);
	SET(m, capacity_rows, o->mcf.rows);
	SET(m, time_stepped, o->mcf.steps > 0);
	SET(m, lower_bound, o->mcf.lower);
	SET(m, objective, o->mcf.objective);
	SET(m, iterations, o->mcf.iterations);
	SET(m, columns, o->mcf.columns);
	SET(m, seconds, o->mcf.seconds);
	if (o->mcf.step_load) {
		m->step_loads = arena_array(a, o->mcf.steps, sizeof(*m->step_loads));
		for (uint32_t t = 0; t < o->mcf.steps; t++)
			m->step_loads[m->n_step_loads++] = o->mcf.step_load[t];
	}
	return m;
}

static void a2a(struct arena *a, const struct schedule_result *r, const struct schedule_outcome *o,
		Ofc__V1__DirectDetail *m)
{
	if (!has_metric(&o->s, "theta"))
		SET(m, theta, o->theta);
	SET(m, theta_bound, schedule_theta_bound(r));
	SET(m, theta_ratio, o->theta / schedule_theta_bound(r));
	m->demand = (char *)(r->demand ? "matrix" : "uniform");
	m->forwarding = (char *)(o->cut_through ? "cut-through routes" : "store-and-forward steps");
	if (r->host_beta > 0) {
		/* NIC-limited hosts: injection in link capacities, who relays */
		SET(m, host_injection_links, r->host_beta);
		m->host_forwarding = (char *)(r->nic_forwarding ? "nic" : "host");
	}
	SET(m, max_link_load, o->max_load);
	SET(m, max_paths_per_pair, o->max_paths);
	if (o->cut_through)
		SET(m, max_hops, o->max_hops);
	if (o->have_mcf) {
		m->lowering = (char *)o->lowering;
		m->mcf = mcf_msg(a, o);
	}
}

static void torus(const struct schedule_result *r, const struct schedule_outcome *o,
		  Ofc__V1__DirectDetail *m)
{
	m->variant = (char *)o->variant;
	if (!has_metric(&o->s, "congestion_deficiency"))
		SET(m, congestion_deficiency, o->tf.xi);
	SET(m, bandwidth_deficiency, o->tf.psi);
	SET(m, instances, o->tf.instances);
	SET(m, hop_latency_us, r->hop_latency * 1e6);
	SET(m, hops, o->tf.hops);
	m->routing = o->reroute ? "minimal, dimension order, ties split; around failed arcs the "
				  "other way round, aside and back, or a searched route"
				: "minimal, dimension order, ties split";
}

static void bfb(struct arena *a, const struct schedule_result *r, const struct schedule_outcome *o,
		Ofc__V1__DirectDetail *m)
{
	SET(m, problems, o->bst.problems);
	SET(m, lps_solved, o->bst.lps);
	if (r->bfb_inject) {
		/* NIC-limited hosts: steps the injection priced, and the
		 * allgather steps solved again for it */
		SET(m, host_limited_steps, o->bst.host_steps);
		SET(m, host_resolved_steps, o->bst.host_solved);
		m->host_forwarding = (char *)(r->nic_forwarding ? "nic" : "host");
	}
	if (r->bopts.chunks) {
		if (!has_metric(&o->s, "chunks"))
			SET(m, chunks, r->bopts.chunks);
		SET(m, tau_b_fractional, o->bst.tau_b_exact_value);
		m->tau_b_fractional_fraction = fraction(a, o->bst.tau_b_exact);
		SET(m, thm20_tau_b_bound, schedule_thm20_bound(r, o));
	}
}

static Ofc__V1__DirectPredicted *predicted_msg(struct arena *a, const struct expand_figures *p)
{
	Ofc__V1__DirectPredicted *m =
	    NEW(a, Ofc__V1__DirectPredicted, OFC__V1__DIRECT_PREDICTED__INIT);

	m->construction = (char *)p->how;
	SET(m, num_steps, p->steps);
	SET(m, tau_b, p->tau_b_value);
	m->tau_b_fraction = fraction(a, p->tau_b);
	SET(m, exact, p->exact);
	return m;
}

/* The expansion construction next to BFB on the expanded graph. */
static Ofc__V1__DirectExpansion *expansion_msg(struct arena *a, const struct schedule_outcome *e)
{
	Ofc__V1__DirectExpansion *m =
	    NEW(a, Ofc__V1__DirectExpansion, OFC__V1__DIRECT_EXPANSION__INIT);
	Ofc__V1__DirectMeasured *k;

	if (!e->applies) {
		m->error = (char *)e->why;
		return m;
	}
	m->construction = (char *)e->pred.how;
	m->predicted = predicted_msg(a, &e->pred);
	m->predicted->construction = NULL; /* (said above) */
	k = NEW(a, Ofc__V1__DirectMeasured, OFC__V1__DIRECT_MEASURED__INIT);
	SET(k, num_steps, e->steps);
	SET(k, tau_b, e->measured);
	SET(k, num_transfers, e->ntransfers);
	SET(k, time_us, e->time_us);
	SET(k, verified, e->verified);
	if (!e->verified)
		k->verify_error = (char *)e->verify_error;
	m->measured = k;
	return m;
}

/* --algo all: the fluid bound beside the comparison. */
static Ofc__V1__DirectFluidBound *fluid_msg(struct arena *a, const struct direct_fluid *df)
{
	Ofc__V1__DirectFluidBound *m =
	    NEW(a, Ofc__V1__DirectFluidBound, OFC__V1__DIRECT_FLUID_BOUND__INIT);

	SET(m, rstar_s_per_gb, df->rstar);
	SET(m, hops, df->hops);
	SET(m, optimal, df->optimal);
	SET(m, any_hops, df->any_hops);
	SET(m, bound_us, df->rstar_lower_us);
	SET(m, cut_bound_us, df->cut_us);
	SET(m, seconds, df->seconds);
	SET(m, time_limit_s, df->time_limit);
	SET(m, lp, df->lp);
	SET(m, mirrored, df->mirrored);
	if (df->lp)
		SET(m, rstar_lower_s_per_gb, df->rstar_lower);
	else
		m->note = (char *)df->why;
	return m;
}

static Ofc__V1__DirectComparison *comparison_msg(struct arena *a, const struct schedule_result *r,
						 const struct schedule_outcome *o, bool best)
{
	Ofc__V1__DirectComparison *m =
	    NEW(a, Ofc__V1__DirectComparison, OFC__V1__DIRECT_COMPARISON__INIT);

	m->algorithm = (char *)o->algo;
	if (!o->applies) {
		m->error = (char *)o->why;
		return m;
	}
	SET(m, num_steps, o->steps);
	SET(m, tau_b, o->tau_b_value);
	m->tau_b_fraction = fraction(a, o->tau_b);
	SET(m, time_us, o->time_us);
	m->healthy = healthy_msg(a, r, o);
	SET(m, ratio, o->ratio);
	m->model = (char *)(const char *[]){"store-and-forward", "routed",
					    "cut-through"}[schedule_outcome_model(o)];
	SET(m, lower_bound_us, o->lb_us);
	SET(m, best, best);
	if (o->store_forward_us > 0)
		SET(m, store_forward_us, o->store_forward_us);
	SET(m, verified, o->verified);
	SET(m, num_transfers, o->ntransfers);
	if (r->fluid.have) {
		SET(m, fluid_bound_us, o->fluid_bound_us);
		SET(m, below_fluid_bound, o->below_fluid);
	}
	if (o->is_torus) {
		m->variant = (char *)o->variant;
		SET(m, congestion_deficiency, o->tf.xi);
	}
	if (o->is_a2a) {
		SET(m, theta, o->theta);
		m->lowering = (char *)o->lowering;
	}
	return m;
}

static void compare(struct arena *a, const struct schedule_result *r, Ofc__V1__DirectDetail *m)
{
	if (r->fluid.have)
		m->fluid = fluid_msg(a, &r->fluid);
	else if (r->fluid.why[0])
		m->fluid_error = (char *)r->fluid.why;
	int best = schedule_best_row(r);

	m->comparison = arena_array(a, r->nout, sizeof(*m->comparison));
	for (unsigned i = 0; i < r->nout; i++)
		m->comparison[m->n_comparison++] = comparison_msg(a, r, &r->out[i], (int)i == best);
}

/* The figures of every direct-connect schedule, unless the metrics say
 * them, and the failed hosts' names. */
static void figures(struct arena *a, const struct schedule_result *r,
		    const struct schedule_outcome *o, Ofc__V1__DirectDetail *m)
{
	const struct schedule *s = &o->s;

	if (r->nabsent && r->fabric && r->fabric->nhosts == r->whole->n) {
		m->failed_hosts = arena_array(a, r->nabsent, sizeof(*m->failed_hosts));
		for (uint32_t v = 0; v < r->whole->n; v++)
			if (r->absent[v])
				m->failed_hosts[m->n_failed_hosts++] = r->fabric->hosts[v].name;
	}
	if (!has_metric(s, "alpha_us"))
		SET(m, alpha_us, r->cost.alpha * 1e6);
	if (!has_metric(s, "bandwidth_bps"))
		SET(m, bandwidth_bps, r->cost.bandwidth);
	if (!has_metric(s, "tau_l"))
		SET(m, tau_l, o->alphas > 0 ? o->alphas : o->steps);
	if (!has_metric(s, "tau_b"))
		SET(m, tau_b, o->tau_b_value);
	if (!has_metric(s, "tau_b_measured"))
		SET(m, tau_b_measured, o->measured);
}

Ofc__V1__ScheduleDetail *schedule_direct_detail_msg(struct arena *a,
						    const struct schedule_result *r)
{
	const struct schedule_outcome *o = r->main;
	Ofc__V1__ScheduleDetail *d =
	    NEW(a, Ofc__V1__ScheduleDetail, OFC__V1__SCHEDULE_DETAIL__INIT);
	Ofc__V1__DirectDetail *m = NEW(a, Ofc__V1__DirectDetail, OFC__V1__DIRECT_DETAIL__INIT);

	d->direct = m;
	figures(a, r, o, m);
	m->healthy = healthy_msg(a, r, o);
	m->degraded_bound = degraded_msg(a, r, o);
	if (o->rebalance_tried) {
		Ofc__V1__DirectRebalanced *b =
		    NEW(a, Ofc__V1__DirectRebalanced, OFC__V1__DIRECT_REBALANCED__INIT);

		SET(b, kept, o->rebalanced);
		SET(b, bfb_tau_b, frac_value(o->tau_bfb));
		SET(b, bfb_steps, o->bfb_steps);
		SET(b, bfb_time_us, cost_time_us(&r->cost, o->bfb_steps, frac_value(o->tau_bfb)));
		SET(b, receivers, o->rebalanced_receivers);
		SET(b, steps_added, o->rebalance_steps_added);
		m->rebalanced = b;
	}
	if (o->fallback_from) {
		m->fallback_from = (char *)o->fallback_from;
		m->fallback_why = (char *)o->fallback_why;
	}
	if (!o->verified)
		m->verify_error = (char *)o->verify_error;
	if (o->is_a2a) /* runs cross several arcs each */
		SET(m, num_hops, o->nhops);
	SET(m, generate_s, o->gen_s);
	SET(m, verify_s, o->verify_s);
	if (o->is_reduced)
		m->reduced = reduced_msg(a, o);
	if (o->is_a2a)
		a2a(a, r, o, m);
	if (o->is_torus)
		torus(r, o, m);
	if (o->is_bfb)
		bfb(a, r, o, m);
	if (o->has_pred)
		m->predicted = predicted_msg(a, &o->pred);
	if (r->nic_ports) {
		m->fabric = NEW(a, Ofc__V1__DirectFabric, OFC__V1__DIRECT_FABRIC__INIT);
		m->fabric->name = r->fabric->name;
		m->fabric->ports = "transfer ports are host NIC ports";
		SET(m->fabric, circuits, r->fabric->ncircuits);
	}
	if (r->construction)
		m->expansion = expansion_msg(a, r->construction);
	if (r->compare)
		compare(a, r, m);
	return d;
}

Ofc__V1__ScheduleDetail *schedule_fallback_detail_msg(struct arena *a,
						      const struct schedule_result *r)
{
	const struct schedule_outcome *o = r->main;

	if (!o || !o->fallback_from)
		return NULL;
	Ofc__V1__ScheduleDetail *d =
	    NEW(a, Ofc__V1__ScheduleDetail, OFC__V1__SCHEDULE_DETAIL__INIT);
	d->direct = NEW(a, Ofc__V1__DirectDetail, OFC__V1__DIRECT_DETAIL__INIT);
	d->direct->fallback_from = arena_strdup(a, o->fallback_from);
	d->direct->fallback_why = arena_strdup(a, o->fallback_why);
	return d;
}
