/* All-to-all on a direct-connect topology: the MCF (lowered to steps,
 * paths or single paths) and its baselines (direct, sp-balanced), explicit
 * or symmetry-reduced, priced store-and-forward or cut-through and host by
 * host under NIC limits; the rows of engines.c name the build at the end. */
#include "alltoall/alltoall.h"
#include "controller/schedule/internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Price an all-to-all schedule: store-and-forward steps by the verifier's
 * per-step loads (finish), or cut-through routes: one step, the busiest
 * link's total load. */
static void a2a_finish(struct schedule_result *r, struct schedule_outcome *o,
		       const struct a2a_outcome *a)
{
	o->is_a2a = true;
	o->cut_through = a->cut_through;
	o->max_load = a->max_load;
	o->max_paths = a->max_paths;
	o->max_hops = a->max_hops;
	outcome_finish(r, o);
	for (size_t k = 0; k < o->s.nxfers; k++)
		o->nhops += xfer_arcs(&o->s.xfers[k]);
	if (o->is_reduced)
		o->nhops *= o->group.order;
	if (o->cut_through) {
		/* (outcome_finish priced it store-and-forward: hop i at step i) */
		if (o->verified)
			o->store_forward_us = o->time_us;
		/* Priced by the schedule as verified: its busiest link over all
		 * steps, which must be what the routes it was lowered from load
		 * (a schedule that failed is priced by its routes, for the
		 * report). */
		double z = o->verified ? o->measured_total : o->max_load;

		if (o->verified && fabs(z - o->max_load) > 1e-6 * o->max_load) {
			o->verified = false;
			o->s.verified = false;
			snprintf(
			    o->verify_error, sizeof(o->verify_error),
			    "the schedule's busiest link carries %.9g blocks, its routes' %.9g", z,
			    o->max_load);
		}
		if (r->host_beta > 0) /* the busiest host may bind instead */
			z = fmax(z, outcome_host_priced(r, &o->s, NULL, true));
		o->tau_b_value = z * r->degree / r->g->n;
		o->tau_b = frac_from_double(o->tau_b_value, 16 * (int64_t)r->g->n, 1e-9);
		o->theta = 1 / z;
		o->measured = o->tau_b_value;
		sched_set_metric(&o->s, "tau_b_measured", o->measured);
		/* One start-up, and where hosts forward an alpha for each
		 * forward on the longest route (routed_alphas). */
		o->alphas = routed_alphas(r, 1, o->max_hops);
		o->time_us = cost_time_us(&r->cost, o->alphas, o->tau_b_value);
		/* Where NICs forward it is priced as one step, so bounded as
		 * one: the result's bound counts the diameter's
		 * store-and-forward steps, which it does not take (it would sit
		 * above it). Where hosts forward, every forward is an alpha and
		 * the result's bound holds. */
		if (r->nic_forwarding) {
			o->lb_steps = 1;
			o->lb_us = cost_time_us(&r->cost, 1, frac_value(r->lb.tau_b));
		}
		o->s.lower_bound_us = o->lb_us;
		sched_set_metric(&o->s, "tau_l", o->alphas);
	} else {
		/* tau_B = (d/N) sum_t U_t: the theta of a fluid flow as fast. */
		o->theta = (double)r->degree / r->g->n / o->measured;
	}
	o->ratio = o->time_us / o->lb_us;
	o->s.time_us = o->time_us;
	sched_set_metric(&o->s, "tau_b", o->tau_b_value);
	sched_set_metric(&o->s, "theta", o->theta);
}

/* Row e (mcf, lowered as asked, NULL: the default; direct or
 * sp-balanced: lowering NULL), built by a2a_build. */
static void run_a2a(struct schedule_result *r, const struct schedule_query *q,
		    struct schedule_outcome *o, const struct engine_ops *e,
		    const struct a2a_lowering *lowering)
{
	struct ofc_error err = {0};
	const char *algo = e->name;
	struct a2a_request aq = {.algo = e->a2a,
				 .lowering = lowering,
				 .max_memory = q->max_memory ? q->max_memory : mem_physical() / 2,
				 .max_transfers = r->demand ? 0 : q->max_transfers,
				 .steps_try = q->steps_try,
				 .mcf = {.threads = q->threads,
					 .injection = r->host_beta,
					 .injections = r->host_betas,
					 .nic_forwarding = r->nic_forwarding,
					 .capacity = r->arc_cap,
					 .demand = r->demand,
					 .keep_warm = q->keep_warm && !r->demand,
					 .warm = r->demand ? NULL : q->warm,
					 .cancel = q->cancel,
					 .lp_solver = schedule_lp_solver(q),
					 .time_limit = q->time_limit == 0  ? 60
						       : q->time_limit < 0 ? 0
									   : q->time_limit}};
	struct a2a_outcome a;
	double t0 = now_seconds();

	/* The whole request's deadline for the baselines (column
	 * generation's is its time_limit). */
	if (!(e->flags & ENGINE_COLGEN))
		aq.clock = r->clock;
	/* Reduced by itself: the baselines, and the MCF by any lowering but
	 * one that does not reduce when named (the default falls back to
	 * paths when steps cannot prove its optimum soon). */
	bool reducible = !lowering || lowering->reduces;

	/* The MCF's default lowering, time-stepped, is reduced above
	 * A2A_STEPS_EXPLICIT_NODES: its explicit schedule is past any memory
	 * limit there (1.6 G transfers on torus:32x32). */
	bool stepped = (e->flags & ENGINE_LOWERING) && !lowering;
	uint32_t explicit_max = stepped ? A2A_STEPS_EXPLICIT_NODES : A2A_MAX_NODES;

	snprintf(o->algo, sizeof(o->algo), "%s", algo);
	o->lowering = lowering ? lowering->name : NULL;
	/* Reduced: asked for, or where the explicit schedule is not built. */
	if (q->reduced == SCHEDULE_REDUCED_ALWAYS ||
	    (q->reduced == SCHEDULE_REDUCED_AUTO && reducible && r->g->n > explicit_max &&
	     !outcome_not_reducible(r, &o->group, &err))) {
		const char *why = outcome_not_reducible(r, &o->group, &err);
		struct sched_reduced red;

		if (why) {
			snprintf(o->why, sizeof(o->why), "--reduced: %.400s", why);
			o->why_code = OFC_E_INPUT;
			return;
		}
		aq.runs = true; /* nothing runs a reduced program hop by hop */
		if (a2a_reduced(r->g, &o->group, &aq, &red, &a, &err) < 0) {
			if (!(aq.clock && outcome_out_of_time(r, o, "generation")))
				outcome_not_applies(o, &err);
			return;
		}
		o->s = red.prog;
		o->is_reduced = true;
		/* By default above A2A_STEPS_EXPLICIT_NODES: -o writes every
		 * transfer, as it did of the explicit schedule. */
		o->expand_on_write =
		    q->reduced == SCHEDULE_REDUCED_AUTO && r->g->n <= A2A_MAX_NODES;
		if (q->reduced == SCHEDULE_REDUCED_AUTO && !o->expand_on_write)
			snprintf(r->note + strlen(r->note), sizeof(r->note) - strlen(r->note),
				 "%s%u nodes: explicit all-to-all schedules stop at %u: symmetry-"
				 "reduced instead (node 0's routes x %s; --reduced asks for it)",
				 r->note[0] ? "; " : "", r->g->n, A2A_MAX_NODES, o->group.name);
		else if (o->expand_on_write)
			snprintf(r->note + strlen(r->note), sizeof(r->note) - strlen(r->note),
				 "%s%u nodes: the default lowering is symmetry-reduced above %u "
				 "(node 0's routes x %s; --reduced asks for it)",
				 r->note[0] ? "; " : "", r->g->n, A2A_STEPS_EXPLICIT_NODES,
				 o->group.name);
	} else if (!r->demand && schedule_reply_check(q, algo, r->g->n, r->g->n * (r->g->n - 1.0),
						      o->why, sizeof(o->why)) < 0) {
		/* (every pair's block is a transfer at least: refused before
		 * the routes are found) */
		o->why_code = OFC_E_RUNTIME;
		return;
	} else if (a2a_build(r->g, &aq, &o->s, &a, &err) < 0) {
		if (aq.clock && outcome_out_of_time(r, o, "generation"))
			return;
		outcome_not_applies(o, &err);
		/* The explicit time-stepped schedule is not reduced by itself (its
		 * MCF runs to its time limit at thousands of nodes): say how. */
		if (r->g->n > A2A_MAX_NODES && q->reduced == SCHEDULE_REDUCED_AUTO &&
		    !outcome_not_reducible(r, &o->group, &err))
			snprintf(o->why + strlen(o->why), sizeof(o->why) - strlen(o->why),
				 "; --reduced builds it by symmetry (the time-stepped MCF then "
				 "runs to --time-limit unless it proves its optimum), and the "
				 "paths and single lowerings are reduced by themselves");
		return;
	}
	o->gen_s = now_seconds() - t0;
	o->applies = true;
	if (a.lowering)
		o->lowering = a.lowering->name;
	if (a.fallback[0]) {
		size_t len = strlen(r->note);

		snprintf(r->note + len, sizeof(r->note) - len, "%s%s", len ? "; " : "", a.fallback);
	}
	a2a_finish(r, o, &a);
	if (a.have_mcf) {
		/* The outcome keeps the flow's figures; the routes are spent. */
		o->mcf = a.mcf;
		a2a_routes_free(&o->mcf.routes);
		o->have_mcf = true;
		o->theta_mcf = o->mcf.theta;
		if (o->mcf.note[0] && !strstr(r->note, o->mcf.note)) {
			size_t len = strlen(r->note);

			snprintf(r->note + len, sizeof(r->note) - len, "%smcf: %s", len ? "; " : "",
				 o->mcf.note);
		}
		if (o->cut_through) /* the fluid MCF's theta, of which the paths keep this much */
			sched_set_metric(&o->s, "theta_mcf", o->theta_mcf);
		sched_set_metric(&o->s, "theta_optimal", o->mcf.optimal);
		sched_set_metric(&o->s, "theta_gap", o->mcf.gap);
	}
}

/* mcf, direct, sp-balanced; in a comparison mcf is a row per lowering. */
void direct_build_alltoall(struct schedule_result *r, const struct schedule_query *q,
			   const struct engine_ops *e)
{
	const struct a2a_lowering *l;

	if (q->collective != SCHED_ALLTOALL) {
		struct schedule_outcome *o = outcome_next(r);

		snprintf(o->algo, sizeof(o->algo), "%s", e->name);
		snprintf(o->why, sizeof(o->why), "%s schedules alltoall", e->name);
		o->why_code = OFC_E_INPUT;
	} else if (r->compare && (e->flags & ENGINE_LOWERING)) {
		for (unsigned i = 0; (l = a2a_lowering_at(i)); i++) {
			struct schedule_outcome *o = outcome_next(r);

			run_a2a(r, q, o, e, l);
			snprintf(o->algo, sizeof(o->algo), "%s/%s", e->name, l->name);
		}
	} else {
		/* (NULL: the default lowering; the name is checked, dispatch.c) */
		run_a2a(r, q, outcome_next(r), e,
			(e->flags & ENGINE_LOWERING) && q->lowering ? a2a_lowering_find(q->lowering)
								    : NULL);
	}
}
