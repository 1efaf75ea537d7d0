/* Swing and its baselines on a torus (recursive doubling, and bucket,
 * ring and bidir-ring priced as routed on the torus), one variant or the
 * one the cost model prefers, and swing-all's table of them; the rows of
 * engines.c name the builds at the end. */
#include "baselines/baselines.h"
#include "controller/schedule/internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The torus algorithms route over every link of a whole torus (dimension
 * order); with failed links they would cross a dead one. */
static bool refuse_degraded(const struct schedule_result *r, struct schedule_outcome *o,
			    const char *algo)
{
	if (!r->healthy)
		return false;
	snprintf(o->why, sizeof(o->why),
		 "%s routes over every link of a whole torus and %s has failed links (swing, "
		 "bfb, mcf and the recursive baseline schedule degraded graphs)",
		 algo, r->g->spec);
	o->why_code = OFC_E_INPUT;
	return true;
}

/* T = sum_s (alpha + h_s t_hop) + tau_B M/B (Swing notes 4.3), with an
 * alpha more for each host that forwards a step's longest route on
 * (routed_alphas): on a circuit fabric a route of h_s circuits is h_s
 * sends where hosts forward. */
static double torus_time_us(const struct schedule_result *r, uint32_t steps,
			    const struct torus_figures *tf)
{
	return cost_time_us(&r->cost, routed_alphas(r, steps, tf->hops), tf->tau_b) +
	       tf->hops * r->hop_latency * 1e6;
}

/* Verified without a graph (peers are routed, not linked), priced by the
 * routed loads (torus_time_us). */
static void torus_finish(struct schedule_result *r, struct schedule_outcome *o)
{
	struct verify_report rep = {0};
	double t0 = now_seconds();

	o->is_torus = true;
	o->have = true;
	o->steps = o->s.nsteps;
	o->ntransfers = o->s.nxfers;
	struct verify_opts vo = {.clock = r->clock,
				 .threads = r->bopts.threads,
				 .reduce_bytes = outcome_verify_bytes(r)};
	outcome_phase(r, o, "verification");
	outcome_verify(o, &vo, &rep);
	o->verify_s = now_seconds() - t0;
	if (outcome_out_of_time(r, o, "verification"))
		return;
	if (!o->verified)
		snprintf(o->verify_error, sizeof(o->verify_error), "%s", rep.error);
	o->measured = o->tf.tau_b;
	o->tau_b_value = o->tf.tau_b;
	o->tau_b = frac_from_double(o->tf.tau_b, 16 * (int64_t)r->g->n, 1e-9);
	o->alphas = routed_alphas(r, o->steps, o->tf.hops);
	o->time_us = torus_time_us(r, o->steps, &o->tf);
	bound_beside_wait(r);
	o->lb_us = r->lb_us;
	/* Where NICs forward, routed peers cross several hops for one alpha,
	 * so a degraded graph's steps (its diameter in circuits) bound them no
	 * more than the healthy Moore steps do: its bandwidth term does (a
	 * node's links in, a cut's, whatever the routes), with the healthy
	 * bound's steps. Where hosts forward, each forward is an alpha and the
	 * whole bound holds. */
	if (r->have_degraded && r->nic_forwarding)
		o->lb_us =
		    fmax(r->healthy_lb_us, cost_time_us(&r->cost, r->lb.steps, r->degraded.tau_b));
	o->lb_steps = r->lb.steps;
	o->ratio = o->time_us / o->lb_us;
	o->s.size_bytes = r->cost.size;
	o->s.time_us = o->time_us;
	o->s.lower_bound_us = o->lb_us;
	o->s.verified = o->verified;
	sched_set_metric(&o->s, "tau_l", o->alphas);
	sched_set_metric(&o->s, "tau_b", o->tau_b_value);
	sched_set_metric(&o->s, "congestion_deficiency", o->tf.xi);
	sched_set_metric(&o->s, "alpha_us", r->cost.alpha * 1e6);
	sched_set_metric(&o->s, "bandwidth_bps", r->cost.bandwidth);
	if (o->is_reduced)
		sched_set_metric(&o->s, "group_order", o->group.order);
}

/* Why Swing on this degraded torus cannot be the healthy program re-routed
 * (then NULL). */
static const char *not_reroutable(const struct schedule_result *r)
{
	if (r->keep)
		return "a failed host takes part in every Swing exchange (Swing keeps its "
		       "structure around failed links and ports, not hosts)";
	if (r->demand || r->link_rate || r->host_betas || r->bfb_inject || r->nic_ports)
		return "Swing re-routes around failed links on a torus whose hosts and links "
		       "are alike";
	return NULL;
}

/* The detours around the failed arcs, planned with hops free (the load
 * alone) and, where hosts forward, planned again weighing each hop more
 * on a step's longest route as the alpha it costs (routed_alphas): the
 * one the cost model prices lower is kept in *p. Neither greedy plan is
 * the cheaper everywhere (torus:16x16 without a link: the weighed one is
 * slower; torus:64x64: faster); swing_reroute_both gives up the one that
 * cannot win before its dearest steps. */
static int reroute_cheaper(const struct schedule_result *r, const struct schedule_query *q,
			   const struct topo_tree *t, const struct sched_reduced *red,
			   const uint32_t *arcs, size_t na, const struct torus_figures *healthy,
			   uint64_t limit, struct swing_reroute *p, struct ofc_error *err)
{
	struct swing_reroute w;

	if (r->nic_forwarding || r->cost.alpha <= 0)
		return swing_reroute(t, red, arcs, na, healthy, limit, q->threads, p, err);
	struct swing_price c = {.hop_us = r->cost.alpha * 1e6 + r->hop_latency * 1e6,
				.tau_us = cost_mb_us(&r->cost),
				.hop_tau = r->cost.alpha * 1e6 / cost_mb_us(&r->cost)};

	if (swing_reroute_both(t, red, arcs, na, healthy, &c, limit, q->threads, p, &w, err) < 0)
		return -1;
	if (!p->step_start || (w.step_start && torus_time_us(r, w.f.steps, &w.f) <
						   torus_time_us(r, p->f.steps, &p->f))) {
		swing_reroute_free(p);
		*p = w;
	} else {
		swing_reroute_free(&w);
	}
	return 0;
}

/* Swing on a torus with failed links and ports: the healthy reduced program
 * (the same exchanges, so the same result) and the detours of the
 * transfers whose routes cross a failed arc (swing_reroute), priced by the
 * detours' link loads and checked without expansion. */
static void run_swing_rerouted(struct schedule_result *r, const struct schedule_query *q,
			       struct schedule_outcome *o, enum swing_variant v)
{
	struct ofc_error err = {0};
	/* r->tree is the degraded graph's (no family): the healthy spec's */
	const struct topo_tree *t = r->healthy_tree;
	struct sched_reduced red;
	uint32_t *arcs = NULL, nreps;
	size_t na = 0;
	double t0 = now_seconds();
	const char *why = not_reroutable(r);
	uint64_t limit = q->max_memory ? q->max_memory : mem_physical() / 2;
	char what[64];

	if (why) {
		snprintf(o->why, sizeof(o->why), "%s", why);
		o->why_code = OFC_E_INPUT;
		return;
	}
	if (!t)
		ofc_error_set(&err, OFC_E_INPUT, "the healthy graph has no spec");
	if (!t || sched_group_of(r->healthy, t, &o->group, &err) < 0 ||
	    swing_failed_arcs(t, r->healthy, r->g, &arcs, &na, &err) < 0) {
		outcome_not_applies(o, &err);
		return;
	}
	snprintf(what, sizeof(what), "%s swing",
		 v == SWING_LATENCY ? "latency-optimal" : "bandwidth-optimal");
	double xfers = torus_allreduce_reduced_transfers(t, TORUS_SWING, v, &nreps);
	if (outcome_reduced_over_limit(r, q, o, what, xfers, nreps,
				       v == SWING_LATENCY ? 0 : r->degree))
		goto out;
	outcome_phase(r, o, "generation");
	if (torus_allreduce_reduced(t, TORUS_SWING, v, &o->group, &red, &o->tf, &err) < 0) {
		outcome_not_applies(o, &err);
		goto out;
	}
	o->reroute = xcalloc(1, sizeof(*o->reroute));
	if (reroute_cheaper(r, q, t, &red, arcs, na, &o->tf, limit, o->reroute, &err) < 0) {
		sched_reduced_free(&red);
		free(o->reroute);
		o->reroute = NULL;
		snprintf(o->why, sizeof(o->why), "%.400s", err.msg);
		o->why_code = err.code;
		goto out;
	}
	/* Explicit where healthy Swing would be (up to
	 * SWING_MAX_SCHEDULE_NODES, or asked): the program's expansion, which
	 * is the explicit schedule; the detours are checked on the program. */
	bool expand = q->reduced == SCHEDULE_REDUCED_NEVER ||
		      (q->reduced == SCHEDULE_REDUCED_AUTO && r->g->n <= SWING_MAX_SCHEDULE_NODES);
	if (expand &&
	    (outcome_over_memory(r, q, o, what, torus_allreduce_transfers(t, TORUS_SWING, v, true),
				 r->degree) ||
	     sched_reduced_expand(&red, &o->s, &err) < 0)) {
		if (!o->why[0])
			outcome_not_applies(o, &err);
		sched_reduced_free(&red);
		goto out;
	}
	if (!expand) {
		o->s = red.prog;
		red.prog = (struct schedule){0};
		o->is_reduced = true;
	}
	/* the schedule's graph is the degraded one (the program the healthy's) */
	snprintf(o->s.topology, sizeof(o->s.topology), "%s", r->g->spec);
	o->group = red.group;
	o->tf = o->reroute->f;
	o->have = true;
	if (outcome_out_of_time(r, o, "generation"))
		goto out_red;
	o->gen_s = now_seconds() - t0;
	o->applies = true;
	if (!strstr(r->note, "Swing kept as structure")) {
		size_t len = strlen(r->note);

		snprintf(r->note + len, sizeof(r->note) - len,
			 "%sSwing kept as structure: the healthy %s%s, %zu transfers re-routed "
			 "around %zu failed arcs",
			 len ? "; " : "", expand ? "schedule" : "program x ",
			 expand ? "" : o->group.name, o->reroute->ndet, o->reroute->nfailed);
	}
	torus_finish(r, o);
	/* The routes: the program's exchanges kept, no failed arc crossed,
	 * the loads the patch's. */
	struct sched_reduced chk = {.group = red.group, .prog = expand ? red.prog : o->s};
	double t1 = now_seconds();
	if (o->verified && swing_reroute_verify(t, &chk, o->reroute, q->threads, &err) < 0) {
		o->verified = false;
		o->s.verified = false;
		snprintf(o->verify_error, sizeof(o->verify_error), "%.300s", err.msg);
	}
	o->verify_s += now_seconds() - t1;
	sched_set_metric(&o->s, "rerouted_transfers", (double)o->reroute->ndet);
out_red:
	sched_reduced_free(&red);
out:
	free(arcs);
}

/* Row e's variant v (ENGINE_SPLIT: Swing's collectives, one a dimension). */
static void run_torus(struct schedule_result *r, const struct schedule_query *q,
		      struct schedule_outcome *o, const struct engine_ops *e, enum swing_variant v)
{
	struct ofc_error err = {0};
	double t0 = now_seconds();
	const char *algo = e->name;
	bool split = e->flags & ENGINE_SPLIT;

	snprintf(o->algo, sizeof(o->algo), "%s", algo);
	o->variant = v == SWING_LATENCY ? "latency" : "bandwidth";
	if (q->collective != SCHED_ALLREDUCE) {
		snprintf(o->why, sizeof(o->why), "%s schedules allreduce", algo);
		o->why_code = OFC_E_INPUT;
		return;
	}
	if (r->healthy && e->torus_algo == TORUS_SWING) {
		run_swing_rerouted(r, q, o, v);
		return;
	}
	if (refuse_degraded(r, o, algo))
		return;
	/* Reduced: asked for, or above the explicit schedules' size. */
	if (q->reduced == SCHEDULE_REDUCED_ALWAYS ||
	    (q->reduced == SCHEDULE_REDUCED_AUTO && r->g->n > SWING_MAX_SCHEDULE_NODES &&
	     !outcome_not_reducible(r, &o->group, &err))) {
		const char *why = outcome_not_reducible(r, &o->group, &err);
		struct sched_reduced red;

		if (why) {
			snprintf(o->why, sizeof(o->why), "--reduced: %.400s", why);
			o->why_code = OFC_E_INPUT;
			return;
		}
		/* A latency-optimal program is reps x steps x collectives
		 * spans of N blocks, every one a reduction of the whole vector,
		 * which the check takes by their sums (a byte a node, no
		 * planes). Swing's 2D collectives each carry 1/2D of every
		 * block. */
		uint32_t nreps;
		double xfers = torus_allreduce_reduced_transfers(r->tree, e->torus_algo, v, &nreps);
		char what[64];
		snprintf(what, sizeof(what), "%s %s",
			 v == SWING_LATENCY ? "latency-optimal" : "bandwidth-optimal", algo);
		if (outcome_reduced_over_limit(r, q, o, what, xfers, nreps,
					       v == SWING_LATENCY ? 0
					       : split		  ? r->degree
								  : 1))
			return;
		outcome_phase(r, o, "generation");
		if (torus_allreduce_reduced(r->tree, e->torus_algo, v, &o->group, &red, &o->tf,
					    &err) < 0) {
			outcome_not_applies(o, &err);
			return;
		}
		o->s = red.prog;
		o->group = red.group;
		o->is_reduced = true;
		if (q->reduced == SCHEDULE_REDUCED_AUTO && split &&
		    !strstr(r->note, "Swing symmetry"))
			snprintf(r->note + strlen(r->note), sizeof(r->note) - strlen(r->note),
				 "%s%u nodes: explicit Swing schedules stop at %u: Swing "
				 "symmetry-reduced instead (%u nodes' programs x %s; --reduced "
				 "asks for it)",
				 r->note[0] ? "; " : "", r->g->n, SWING_MAX_SCHEDULE_NODES,
				 o->group.reps, o->group.name);
		else if (q->reduced == SCHEDULE_REDUCED_AUTO && !split &&
			 strstr(r->note, "symmetry-reduced")) {
			if (!strstr(r->note, algo)) /* swing-all: short */
				snprintf(r->note + strlen(r->note),
					 sizeof(r->note) - strlen(r->note), "; also %s", algo);
		} else if (q->reduced == SCHEDULE_REDUCED_AUTO && !split)
			outcome_note_reduced_above(r, SWING_MAX_SCHEDULE_NODES, algo, &o->group);
	} else {
		char what[64];

		snprintf(what, sizeof(what), "%s %s",
			 v == SWING_LATENCY ? "latency-optimal" : "bandwidth-optimal", algo);
		/* Swing's 2D collectives each carry 1/2D of every block. */
		if (outcome_over_memory(r, q, o, what,
					torus_allreduce_transfers(r->tree, e->torus_algo, v, true),
					split ? r->degree : 1))
			return;
		outcome_phase(r, o, "generation");
		if (torus_allreduce(r->tree, e->torus_algo, v, true, &o->s, &o->tf, &err) < 0) {
			outcome_not_applies(o, &err);
			return;
		}
	}
	o->have = true;
	if (outcome_out_of_time(r, o, "generation"))
		return;
	o->gen_s = now_seconds() - t0;
	o->applies = true;
	torus_finish(r, o);
}

/* Reduced Swing, the latency-optimal program is the whole vector every
 * step (torus:16x16x16x16: 134 M blocks to check),
 * while its price needs only its figures, the built program's: when they
 * price it no lower than the bandwidth-optimal outcome o, it would not be
 * chosen, and is not built. */
static bool latency_loses(const struct schedule_result *r, const struct schedule_outcome *o,
			  const struct engine_ops *e)
{
	struct ofc_error err = {0};
	struct sched_group G;
	struct torus_figures f;
	/* A degraded torus (r->tree has no family): the healthy torus's
	 * figures, which detours only raise (longer routes; a link class's
	 * load, alike on every arc of it, moves onto its surviving arcs). */
	const struct graph *g = r->healthy ? r->healthy : r->g;
	const struct topo_tree *t = r->healthy ? r->healthy_tree : r->tree;

	if (!o->applies || !o->is_reduced || !(e->flags & ENGINE_SPLIT) || !t ||
	    sched_group_of(g, t, &G, &err) < 0 ||
	    torus_allreduce_reduced(t, e->torus_algo, SWING_LATENCY, &G, NULL, &f, &err) < 0)
		return false;
	return !(torus_time_us(r, f.steps, &f) < o->time_us);
}

/* The variant the cost model prefers (the paper picks per size). */
static void run_torus_auto(struct schedule_result *r, const struct schedule_query *q,
			   struct schedule_outcome *o, const struct engine_ops *e)
{
	const char *v = q->variant ? q->variant : "auto";

	if (strcmp(v, "auto")) {
		run_torus(r, q, o, e, strcmp(v, "latency") == 0 ? SWING_LATENCY : SWING_BANDWIDTH);
		return;
	}
	struct schedule_outcome lat = {0};
	run_torus(r, q, o, e, SWING_BANDWIDTH);
	if (latency_loses(r, o, e))
		return;
	run_torus(r, q, &lat, e, SWING_LATENCY);
	if (lat.applies && (!o->applies || lat.time_us < o->time_us)) {
		schedule_outcome_free(o);
		*o = lat;
	} else {
		schedule_outcome_free(&lat);
	}
}

/* A classic baseline (row e: ring, bidir-ring, bucket = torus-rings'
 * schedule) priced the same way: its transfers are between neighbours, so
 * routed = linked. */
static void run_torus_baseline(struct schedule_result *r, const struct schedule_query *q,
			       struct schedule_outcome *o, const struct engine_ops *e)
{
	struct ofc_error err = {0};
	double t0 = now_seconds(), d = r->degree, k;
	const char *algo = e->name, *name = baseline_algo_name(e->baseline);

	snprintf(o->algo, sizeof(o->algo), "%s", algo);
	o->variant = "bandwidth";
	if (refuse_degraded(r, o, algo))
		return;
	/* Ports used: one ring, two (both ways), or 2 per dimension. */
	k = e->torus_ports == ENGINE_PORTS_DEGREE ? d : e->torus_ports;
	/* Reduced: asked for, or above BASELINE_MAX_SCHEDULE_NODES where it
	 * exists (as run_baseline). */
	struct sched_reduced red;
	uint32_t nreps;
	bool reduce =
	    q->reduced == SCHEDULE_REDUCED_ALWAYS ||
	    (q->reduced == SCHEDULE_REDUCED_AUTO && r->g->n > BASELINE_MAX_SCHEDULE_NODES &&
	     baseline_reduced_transfers(r->g, r->tree, e->baseline, q->collective, &nreps) > 0 &&
	     !outcome_not_reducible(r, &o->group, &err));
	if (reduce) {
		const char *why = outcome_not_reducible(r, &o->group, &err);

		if (!why && outcome_reduced_over_memory(r, q, o, name, e->baseline))
			return;
		if (!why && baseline_reduced(r->g, r->tree, e->baseline, q->collective, &o->group,
					     &red, &err) < 0)
			why = err.msg;
		if (why) {
			snprintf(o->why, sizeof(o->why), "--reduced: %.400s", why);
			o->why_code = OFC_E_INPUT;
			return;
		}
	}
	if (reduce) {
		if (q->reduced == SCHEDULE_REDUCED_AUTO && strstr(r->note, "symmetry-reduced"))
			snprintf(r->note + strlen(r->note), sizeof(r->note) - strlen(r->note),
				 "; also %s", algo);
		else if (q->reduced == SCHEDULE_REDUCED_AUTO)
			outcome_note_reduced_above(r, BASELINE_MAX_SCHEDULE_NODES, algo,
						   &red.group);
		o->s = red.prog;
		o->group = red.group;
		o->is_reduced = true;
		o->have = true;
		if (torus_routed_figures_reduced(r->tree, &red, d / k, &o->tf, &err) < 0) {
			outcome_not_applies(o, &err);
			return;
		}
	} else {
		if (!direct_explicit_baseline(r, q, o, algo, e->baseline))
			return;
		if (torus_routed_figures(r->tree, &o->s, d / k, &o->tf, &err) < 0) {
			outcome_not_applies(o, &err);
			sched_free(&o->s);
			o->have = false;
			return;
		}
	}
	o->gen_s = now_seconds() - t0;
	o->tf.instances = (uint32_t)k;
	o->applies = true;
	torus_finish(r, o);
	/* Neighbour-only: the graph check holds too. */
	struct verify_report rep = {0};
	struct verify_opts vo = {.graph = r->g};
	if (o->is_reduced) {
		struct sched_reduced chk = {.group = o->group, .prog = o->s};

		if (o->applies && o->verified && sched_verify_reduced(&chk, &vo, &rep) < 0) {
			o->verified = false;
			o->s.verified = false;
			snprintf(o->verify_error, sizeof(o->verify_error), "%s", rep.error);
		}
		return;
	}
	if (o->applies && o->verified && sched_verify(&o->s, &vo, &rep) < 0) {
		o->verified = false;
		o->s.verified = false;
		snprintf(o->verify_error, sizeof(o->verify_error), "%s", rep.error);
	}
}

/* In swing-all's table: row e both ways (swing/B, swing/L, rd/B, ...). */
void direct_torus_variants(struct schedule_result *r, const struct schedule_query *q,
			   const struct engine_ops *e)
{
	static const struct {
		const char *suffix;
		enum swing_variant v;
	} variants[] = {{"B", SWING_BANDWIDTH}, {"L", SWING_LATENCY}};

	for (unsigned j = 0; j < ARRAY_SIZE(variants); j++) {
		struct schedule_outcome *o = outcome_next(r);

		run_torus(r, q, o, e, variants[j].v);
		snprintf(o->algo, sizeof(o->algo), "%s/%s", e->label ? e->label : e->name,
			 variants[j].suffix);
	}
}

void direct_build_torus(struct schedule_result *r, const struct schedule_query *q,
			const struct engine_ops *e)
{
	run_torus_auto(r, q, outcome_next(r), e);
}

/* bucket alone, and each baseline in swing-all's table. */
void direct_torus_routed(struct schedule_result *r, const struct schedule_query *q,
			 const struct engine_ops *e)
{
	run_torus_baseline(r, q, outcome_next(r), e);
}
