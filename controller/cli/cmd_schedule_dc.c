/* ofc schedule on a direct-connect topology: BFB (exact or lp_solve), the
 * paper's expansion constructions, the classic baselines, or all of them
 * side by side; every schedule goes through the verifier, and is priced
 * by the alpha-beta model against the Moore / (N-1)/N lower bound.
 *
 * On a fabric config wired through switches the schedule is fabric-aware:
 * transfer ports are the hosts' NIC ports (the port permutations of the
 * wiring, which differ from the topology's arc order for word digraphs
 * such as generalized Kautz), and the export lists, for every link used,
 * the switch ports that carry it. */
#include "controller/cli/internal.h"
#include "controller/export/export.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* One algorithm's outcome. */
struct outcome {
	char algo[32];
	bool applies;
	char why[520]; /* when it does not apply */
	struct schedule s;
	bool have;
	uint32_t steps;
	struct frac tau_b; /* as reported: exact for BFB, else from the measured loads */
	double tau_b_value;
	double measured; /* from the verifier's link loads */
	size_t ntransfers;
	bool verified;
	char verify_error[320];
	double gen_s, verify_s;
	double time_us, ratio;
	bool is_bfb;
	struct bfb_stats bst;
	bool has_pred;
	struct expand_figures pred;
	/* all-to-all */
	bool is_a2a;
	const char *lowering; /* steps, paths, single; NULL for the baselines */
	bool cut_through;     /* routed: every route at once (else store-and-forward steps) */
	double theta;	      /* what the schedule achieves, per unit link capacity */
	double theta_mcf;     /* the max concurrent flow (mcf only) */
	double max_load;      /* shards on the busiest link, all routes */
	uint32_t max_paths;
	struct mcf_result mcf;
	bool have_mcf;
	/* swing and its torus baselines */
	bool is_torus;
	struct torus_figures tf;
	const char *variant;
};

struct dc {
	struct schedule_request *req;
	const struct graph *g;
	struct topo_tree *tree;
	uint32_t d;
	struct sched_cost cost;
	struct cost_bound lb;
	double lb_us;
	struct bfb_opts bopts;
	struct fabric_view fv; /* with nic: transfers run on the fabric's NIC ports */
	bool nic;
};

/* ---- running one algorithm ---------------------------------------------------- */

static void finish(struct dc *c, struct outcome *o)
{
	struct verify_report r;
	struct verify_opts vo = {.graph = c->nic ? c->fv.pg : c->g};
	double t0 = now_seconds();

	if (c->nic)
		fabric_view_to_nic(&c->fv, c->g, &o->s);
	o->have = true;
	o->steps = o->s.nsteps;
	o->ntransfers = o->s.nxfers;
	o->verified = sched_verify(&o->s, &vo, &r) == 0;
	o->verify_s = now_seconds() - t0;
	if (!o->verified)
		snprintf(o->verify_error, sizeof(o->verify_error), "%s", r.error);
	o->measured = r.sum_max_link_load * c->d / c->g->n;
	if (!o->is_bfb) {
		/* Baselines and constructions: tau_B is what the links carry. */
		o->tau_b = frac_from_double(o->measured, 16 * (int64_t)c->g->n, 1e-7);
		o->tau_b_value = o->measured;
		if (o->has_pred && frac_valid(o->pred.tau_b) &&
		    fabs(frac_value(o->pred.tau_b) - o->measured) < 1e-7)
			o->tau_b = o->pred.tau_b;
	}
	o->time_us = cost_time_us(&c->cost, o->steps, o->tau_b_value);
	o->ratio = o->time_us / c->lb_us;

	struct schedule *s = &o->s;
	s->size_bytes = c->cost.size;
	s->time_us = o->time_us;
	s->lower_bound_us = c->lb_us;
	s->verified = o->verified;
	sched_set_metric(s, "tau_l", o->steps);
	sched_set_metric(s, "tau_b", o->tau_b_value);
	sched_set_metric(s, "tau_b_measured", o->measured);
	sched_set_metric(s, "alpha_us", c->cost.alpha * 1e6);
	sched_set_metric(s, "bandwidth_bps", c->cost.bandwidth);
	if (o->is_bfb && c->bopts.chunks)
		sched_set_metric(s, "chunks", c->bopts.chunks);
}

static void run_bfb(struct dc *c, struct outcome *o, bool lp)
{
	struct ofc_error err = {0};
	struct bfb_opts bo = c->bopts;
	double t0 = now_seconds();

	snprintf(o->algo, sizeof(o->algo), "%s", lp ? "bfb-lp" : "bfb");
	if (lp)
		bo.method = BFB_LP;
	o->is_bfb = true;
	if (bfb_schedule(c->g, c->req->collective, &bo, &o->s, &o->bst, &err) < 0) {
		snprintf(o->why, sizeof(o->why), "%s", err.msg);
		return;
	}
	o->gen_s = now_seconds() - t0;
	o->applies = true;
	o->tau_b = o->bst.tau_b;
	o->tau_b_value = o->bst.tau_b_value;
	finish(c, o);
}

static void run_expansion(struct dc *c, struct outcome *o)
{
	struct ofc_error err = {0};
	double t0 = now_seconds();

	snprintf(o->algo, sizeof(o->algo), "expansion");
	if (!expand_applies(c->tree)) {
		snprintf(o->why, sizeof(o->why),
			 "%s is not a line, degree or power expansion (no construction)",
			 c->g->spec);
		return;
	}
	if (expand_schedule(c->tree, c->req->collective, &c->bopts, &o->s, &o->pred, &err) < 0) {
		snprintf(o->why, sizeof(o->why), "%s", err.msg);
		return;
	}
	o->gen_s = now_seconds() - t0;
	o->applies = true;
	o->has_pred = true;
	snprintf(o->s.algorithm, sizeof(o->s.algorithm), "expansion");
	finish(c, o);
}

static void run_baseline(struct dc *c, struct outcome *o, const char *algo)
{
	struct ofc_error err = {0};
	double t0 = now_seconds();

	snprintf(o->algo, sizeof(o->algo), "%s", algo);
	if (baseline_schedule(c->g, c->tree, algo, c->req->collective, &o->s, &err) < 0) {
		snprintf(o->why, sizeof(o->why), "%s", err.msg);
		return;
	}
	o->gen_s = now_seconds() - t0;
	o->applies = true;
	finish(c, o);
}

static void outcome_free(struct outcome *o)
{
	if (o->have)
		sched_free(&o->s);
	o->have = false;
	if (o->have_mcf)
		mcf_result_free(&o->mcf);
	o->have_mcf = false;
}

/* ---- Swing and its baselines on a torus ------------------------------------------ */

/* Verified without a graph (peers are routed, not linked), priced by the
 * routed loads: T = sum_s (alpha + h_s t_hop) + tau_B M/B (notes 4.3). */
static void torus_finish(struct dc *c, struct outcome *o)
{
	struct verify_report r;
	double t0 = now_seconds();

	o->is_torus = true;
	o->have = true;
	o->steps = o->s.nsteps;
	o->ntransfers = o->s.nxfers;
	o->verified = sched_verify(&o->s, NULL, &r) == 0;
	o->verify_s = now_seconds() - t0;
	if (!o->verified)
		snprintf(o->verify_error, sizeof(o->verify_error), "%s", r.error);
	o->measured = o->tf.tau_b;
	o->tau_b_value = o->tf.tau_b;
	o->tau_b = frac_from_double(o->tf.tau_b, 16 * (int64_t)c->g->n, 1e-9);
	o->time_us = cost_time_us(&c->cost, o->steps, o->tau_b_value) +
		     o->tf.hops * c->req->hop_latency * 1e6;
	o->ratio = o->time_us / c->lb_us;
	o->s.size_bytes = c->cost.size;
	o->s.time_us = o->time_us;
	o->s.lower_bound_us = c->lb_us;
	o->s.verified = o->verified;
	sched_set_metric(&o->s, "tau_l", o->steps);
	sched_set_metric(&o->s, "tau_b", o->tau_b_value);
	sched_set_metric(&o->s, "congestion_deficiency", o->tf.xi);
	sched_set_metric(&o->s, "alpha_us", c->cost.alpha * 1e6);
	sched_set_metric(&o->s, "bandwidth_bps", c->cost.bandwidth);
}

static void run_torus(struct dc *c, struct outcome *o, const char *algo, enum swing_variant v)
{
	struct ofc_error err = {0};
	double t0 = now_seconds();

	snprintf(o->algo, sizeof(o->algo), "%s", algo);
	o->variant = v == SWING_LATENCY ? "latency" : "bandwidth";
	if (c->req->collective != SCHED_ALLREDUCE) {
		snprintf(o->why, sizeof(o->why), "%s schedules allreduce", algo);
		return;
	}
	if (torus_allreduce(c->tree, algo, v, true, &o->s, &o->tf, &err) < 0) {
		snprintf(o->why, sizeof(o->why), "%s", err.msg);
		return;
	}
	o->gen_s = now_seconds() - t0;
	o->applies = true;
	torus_finish(c, o);
}

/* The variant the cost model prefers (the paper picks per size). */
static void run_torus_auto(struct dc *c, struct outcome *o, const char *algo)
{
	const char *v = c->req->variant ? c->req->variant : "auto";

	if (strcmp(v, "auto")) {
		run_torus(c, o, algo, strcmp(v, "latency") == 0 ? SWING_LATENCY : SWING_BANDWIDTH);
		return;
	}
	struct outcome lat = {0};
	run_torus(c, o, algo, SWING_BANDWIDTH);
	run_torus(c, &lat, algo, SWING_LATENCY);
	if (lat.applies && (!o->applies || lat.time_us < o->time_us)) {
		outcome_free(o);
		*o = lat;
	} else {
		outcome_free(&lat);
	}
}

/* A classic baseline (ring, bidir-ring, torus-rings = bucket) priced the
 * same way: its transfers are between neighbours, so routed = linked. */
static void run_torus_baseline(struct dc *c, struct outcome *o, const char *algo)
{
	struct ofc_error err = {0};
	double t0 = now_seconds(), d = c->d, k;
	const char *name = strcmp(algo, "bucket") == 0 ? "torus-rings" : algo;

	snprintf(o->algo, sizeof(o->algo), "%s", algo);
	o->variant = "bandwidth";
	if (baseline_schedule(c->g, c->tree, name, c->req->collective, &o->s, &err) < 0) {
		snprintf(o->why, sizeof(o->why), "%s", err.msg);
		return;
	}
	o->gen_s = now_seconds() - t0;
	/* Ports used: one ring, two (both ways), or 2 per dimension. */
	k = strcmp(name, "ring") == 0 ? 1 : strcmp(name, "bidir-ring") == 0 ? 2 : d;
	if (torus_routed_figures(c->tree, &o->s, d / k, &o->tf, &err) < 0) {
		snprintf(o->why, sizeof(o->why), "%s", err.msg);
		sched_free(&o->s);
		return;
	}
	o->tf.instances = (uint32_t)k;
	o->applies = true;
	torus_finish(c, o);
	/* Neighbour-only: the graph check holds too. */
	struct verify_report r;
	struct verify_opts vo = {.graph = c->g};
	if (o->verified && sched_verify(&o->s, &vo, &r) < 0) {
		o->verified = false;
		snprintf(o->verify_error, sizeof(o->verify_error), "%s", r.error);
	}
}

/* ---- all-to-all ------------------------------------------------------------------ */

/* Price an all-to-all schedule: store-and-forward steps by the verifier's
 * per-step loads (finish), or cut-through routes: one step, the busiest
 * link's total load. */
static void a2a_finish(struct dc *c, struct outcome *o, const struct a2a_outcome *a)
{
	o->is_a2a = true;
	o->cut_through = a->cut_through;
	o->max_load = a->max_load;
	o->max_paths = a->max_paths;
	finish(c, o);
	if (o->cut_through) {
		o->tau_b_value = o->max_load * c->d / c->g->n;
		o->tau_b = frac_from_double(o->tau_b_value, 16 * (int64_t)c->g->n, 1e-9);
		o->theta = 1 / o->max_load;
		o->time_us = cost_time_us(&c->cost, 1, o->tau_b_value);
	} else {
		/* tau_B = (d/N) sum_t U_t: the theta of a fluid flow as fast. */
		o->theta = (double)c->d / c->g->n / o->measured;
	}
	o->ratio = o->time_us / c->lb_us;
	o->s.time_us = o->time_us;
	sched_set_metric(&o->s, "tau_b", o->tau_b_value);
	sched_set_metric(&o->s, "theta", o->theta);
}

/* mcf (lowered as asked), direct or sp-balanced, built by a2a_build. */
static void run_a2a(struct dc *c, struct outcome *o, const char *algo, const char *lowering)
{
	struct ofc_error err = {0};
	struct a2a_request q = {
	    .algo = algo,
	    .lowering = lowering,
	    .mcf = {.threads = c->req->threads, .time_limit = c->req->time_limit}};
	struct a2a_outcome a;
	double t0 = now_seconds();

	snprintf(o->algo, sizeof(o->algo), "%s", algo);
	o->lowering = lowering;
	if (a2a_build(c->g, &q, &o->s, &a, &err) < 0) {
		snprintf(o->why, sizeof(o->why), "%s", err.msg);
		return;
	}
	o->gen_s = now_seconds() - t0;
	o->applies = true;
	a2a_finish(c, o, &a);
	if (a.have_mcf) {
		/* The outcome keeps the flow's figures; the routes are spent. */
		o->mcf = a.mcf;
		a2a_routes_free(&o->mcf.routes);
		o->have_mcf = true;
		o->theta_mcf = o->mcf.theta;
		if (o->cut_through) /* the fluid MCF's theta, of which the paths keep this much */
			sched_set_metric(&o->s, "theta_mcf", o->theta_mcf);
		sched_set_metric(&o->s, "theta_optimal", o->mcf.optimal);
		sched_set_metric(&o->s, "theta_gap", o->mcf.gap);
	}
}

/* ---- output ------------------------------------------------------------------ */

static void write_tau_json(struct json_writer *w, const char *key, struct frac f, double v)
{
	char buf[64];
	char k2[64];

	jw_key(w, key);
	jw_double(w, v);
	snprintf(k2, sizeof(k2), "%s_fraction", key);
	jw_key(w, k2);
	if (frac_valid(f))
		jw_str(w, frac_str(f, buf, sizeof(buf)));
	else
		jw_null(w);
}

static double thm20_bound(const struct dc *c, const struct outcome *o)
{
	/* Thm 20: T_B <= T_B^OPT + (M/B) d (d^D - 1) / ((d - 1) P N), per phase. */
	double d = c->d, D = (double)o->steps / cost_phases(c->req->collective),
	       P = c->bopts.chunks, N = c->g->n;
	double extra = (d == 1 ? D : d * (pow(d, D) - 1) / (d - 1)) / (P * N);

	return o->bst.tau_b_exact_value + cost_phases(c->req->collective) * extra;
}

static void write_links_json(const struct dc *c, struct json_writer *w, const struct schedule *s)
{
	const struct fabric *f = c->req->fabric;
	struct schedule_link *links;
	uint32_t nlinks = fabric_view_links(&c->fv, f, s, &links);

	jw_key(w, "links");
	jw_arr_begin(w);
	for (uint32_t i = 0; i < nlinks; i++) {
		const struct schedule_link *k = &links[i];

		jw_obj_begin(w);
		jw_key(w, "src");
		jw_uint(w, k->src);
		jw_key(w, "src_host");
		jw_str(w, f->hosts[k->src].name);
		jw_key(w, "port");
		jw_uint(w, k->port);
		jw_key(w, "dst");
		jw_uint(w, k->dst);
		jw_key(w, "dst_host");
		jw_str(w, f->hosts[k->dst].name);
		if (k->circuit >= 0) {
			const struct circuit *ci = &f->circuits[k->circuit];

			jw_key(w, "switch");
			jw_str(w, f->switches[ci->sw].name);
			jw_key(w, "in_port");
			jw_uint(w, ci->in_port);
			jw_key(w, "out_port");
			jw_uint(w, ci->out_port);
		}
		jw_obj_end(w);
	}
	jw_arr_end(w);
	free(links);
}

static double theta_bound(const struct dc *c)
{
	/* Thm 2 with unit link capacity: theta <= d / L(N, d). */
	return (double)c->d / (double)moore_tree_cost(c->g->n, c->d);
}

static void write_a2a_json(const struct dc *c, const struct outcome *o, struct json_writer *w)
{
	jw_key(w, "theta");
	jw_double(w, o->theta);
	jw_key(w, "theta_bound");
	jw_double(w, theta_bound(c));
	jw_key(w, "theta_ratio");
	jw_double(w, o->theta / theta_bound(c));
	jw_key(w, "forwarding");
	jw_str(w, o->cut_through ? "cut-through routes" : "store-and-forward steps");
	jw_key(w, "max_link_load");
	jw_double(w, o->max_load);
	jw_key(w, "max_paths_per_pair");
	jw_uint(w, o->max_paths);
	if (o->have_mcf) {
		jw_key(w, "lowering");
		jw_str(w, o->lowering);
		jw_key(w, "mcf");
		jw_obj_begin(w);
		jw_key(w, "theta");
		jw_double(w, o->theta_mcf);
		jw_key(w, "method");
		jw_str(w, mcf_method_name(o->mcf.method));
		jw_key(w, "optimal");
		jw_bool(w, o->mcf.optimal);
		jw_key(w, "theta_gap");
		jw_double(w, o->mcf.gap);
		jw_key(w, "stop");
		jw_str(w, mcf_stop_name(o->mcf.stop));
		jw_key(w, "group_order");
		jw_uint(w, o->mcf.group_order);
		jw_key(w, "sources_solved");
		jw_uint(w, o->mcf.classes);
		jw_key(w, "capacity_rows");
		jw_uint(w, o->mcf.rows);
		jw_key(w, "time_stepped");
		jw_bool(w, o->mcf.steps > 0);
		jw_key(w, "lower_bound");
		jw_double(w, o->mcf.lower);
		jw_key(w, "objective");
		jw_double(w, o->mcf.objective);
		jw_key(w, "iterations");
		jw_uint(w, o->mcf.iterations);
		jw_key(w, "columns");
		jw_uint(w, o->mcf.columns);
		jw_key(w, "seconds");
		jw_double(w, o->mcf.seconds);
		if (o->mcf.step_load) {
			jw_key(w, "step_loads");
			jw_arr_begin(w);
			for (uint32_t t = 0; t < o->mcf.steps; t++)
				jw_double(w, o->mcf.step_load[t]);
			jw_arr_end(w);
		}
		jw_obj_end(w);
	}
}

static void write_summary_json(const struct dc *c, const struct outcome *o, struct json_writer *w)
{
	const struct schedule_request *req = c->req;

	jw_key(w, "algorithm");
	jw_str(w, o->algo);
	jw_key(w, "collective");
	jw_str(w, sched_collective_name(req->collective));
	jw_key(w, "topology");
	jw_str(w, c->g->spec);
	jw_key(w, "nodes");
	jw_uint(w, c->g->n);
	jw_key(w, "degree");
	jw_uint(w, c->d);
	jw_key(w, "size_bytes");
	jw_uint(w, c->cost.size);
	jw_key(w, "alpha_us");
	jw_double(w, c->cost.alpha * 1e6);
	jw_key(w, "bandwidth_bps");
	jw_double(w, c->cost.bandwidth);
	jw_key(w, "num_steps");
	jw_uint(w, o->steps);
	jw_key(w, "tau_l");
	jw_uint(w, o->steps);
	write_tau_json(w, "tau_b", o->tau_b, o->tau_b_value);
	jw_key(w, "tau_b_measured");
	jw_double(w, o->measured);
	jw_key(w, "time_us");
	jw_double(w, o->time_us);
	jw_key(w, "lower_bound_us");
	jw_double(w, c->lb_us);
	jw_key(w, "lower_bound_steps");
	jw_uint(w, c->lb.steps);
	write_tau_json(w, "lower_bound_tau_b", c->lb.tau_b, frac_value(c->lb.tau_b));
	jw_key(w, "ratio");
	jw_double(w, o->ratio);
	jw_key(w, "moore_optimal");
	jw_bool(w, o->steps == c->lb.steps);
	jw_key(w, "bw_optimal");
	jw_bool(w, frac_valid(o->tau_b) ? frac_cmp(o->tau_b, c->lb.tau_b) == 0
					: fabs(o->tau_b_value - frac_value(c->lb.tau_b)) < 1e-9);
	jw_key(w, "verified");
	jw_bool(w, o->verified);
	if (!o->verified) {
		jw_key(w, "verify_error");
		jw_str(w, o->verify_error);
	}
	jw_key(w, "num_transfers");
	jw_uint(w, o->ntransfers);
	jw_key(w, "generate_s");
	jw_double(w, o->gen_s);
	jw_key(w, "verify_s");
	jw_double(w, o->verify_s);
	if (o->is_a2a)
		write_a2a_json(c, o, w);
	if (o->is_torus) {
		jw_key(w, "variant");
		jw_str(w, o->variant);
		jw_key(w, "congestion_deficiency");
		jw_double(w, o->tf.xi);
		jw_key(w, "bandwidth_deficiency");
		jw_double(w, o->tf.psi);
		jw_key(w, "instances");
		jw_uint(w, o->tf.instances);
		jw_key(w, "hop_latency_us");
		jw_double(w, c->req->hop_latency * 1e6);
		jw_key(w, "hops");
		jw_double(w, o->tf.hops);
		jw_key(w, "routing");
		jw_str(w, "minimal, dimension order, ties split");
	}
	if (o->is_bfb) {
		jw_key(w, "problems");
		jw_uint(w, o->bst.problems);
		jw_key(w, "lps_solved");
		jw_uint(w, o->bst.lps);
		if (c->bopts.chunks) {
			jw_key(w, "chunks");
			jw_uint(w, c->bopts.chunks);
			write_tau_json(w, "tau_b_fractional", o->bst.tau_b_exact,
				       o->bst.tau_b_exact_value);
			jw_key(w, "thm20_tau_b_bound");
			jw_double(w, thm20_bound(c, o));
		}
	}
	if (o->has_pred) {
		jw_key(w, "predicted");
		jw_obj_begin(w);
		jw_key(w, "construction");
		jw_str(w, o->pred.how);
		jw_key(w, "num_steps");
		jw_uint(w, o->pred.steps);
		write_tau_json(w, "tau_b", o->pred.tau_b, o->pred.tau_b_value);
		jw_key(w, "exact");
		jw_bool(w, o->pred.exact);
		jw_obj_end(w);
	}
	if (c->nic) {
		const struct fabric *f = req->fabric;

		jw_key(w, "fabric");
		jw_obj_begin(w);
		jw_key(w, "name");
		jw_str(w, f->name);
		jw_key(w, "ports");
		jw_str(w, "transfer ports are host NIC ports");
		jw_key(w, "circuits");
		jw_uint(w, f->ncircuits);
		jw_obj_end(w);
	}
}

static void text_tau(FILE *out, struct frac f, double v)
{
	char buf[64];

	if (frac_valid(f) && f.den != 1)
		fprintf(out, "%s = %.9g", frac_str(f, buf, sizeof(buf)), v);
	else
		fprintf(out, "%.9g", v);
}

static void write_summary_text(const struct dc *c, const struct outcome *o, FILE *out)
{
	const struct schedule_request *req = c->req;
	char a[48], b[48], m[48];
	double mb = cost_mb_us(&c->cost);

	fmt_size(m, sizeof(m), c->cost.size);
	fmt_duration(a, sizeof(a), c->cost.alpha);
	fmt_rate(b, sizeof(b), c->cost.bandwidth);
	fprintf(out, "%s %s on %s: %u nodes, degree %u\n", o->algo,
		sched_collective_name(req->collective), c->g->spec, c->g->n, c->d);
	fprintf(out, "  workload     M = %s, alpha = %s, B = %s (M/B = %.6g us)\n", m, a, b, mb);
	fprintf(out, "  steps        %u (T_L = %.6g us)\n", o->steps,
		o->steps * c->cost.alpha * 1e6);
	fprintf(out, "  tau_B        ");
	text_tau(out, o->tau_b, o->tau_b_value);
	fprintf(out, " (T_B = %.6g us)\n", o->tau_b_value * mb);
	if (o->is_bfb && c->bopts.chunks) {
		fprintf(out, "  chunks       %u per shard; fractional optimum ", c->bopts.chunks);
		text_tau(out, o->bst.tau_b_exact, o->bst.tau_b_exact_value);
		fprintf(out, ", Thm 20 bound %.9g\n", thm20_bound(c, o));
	}
	fprintf(out, "  time         %.6g us\n", o->time_us);
	fprintf(out, "  lower bound  %.6g us (%u steps, tau_B* ", c->lb_us, c->lb.steps);
	text_tau(out, c->lb.tau_b, frac_value(c->lb.tau_b));
	fprintf(out, ")\n  ratio        %.4f\n", o->ratio);
	if (o->verified)
		fprintf(out, "  verified     yes: %zu transfers, link loads give tau_B %.9g\n",
			o->ntransfers, o->measured);
	else
		fprintf(out, "  verified     NO: %s\n", o->verify_error);
	if (o->is_a2a) {
		fprintf(out,
			"  theta        %.9g per link capacity (%s); bound d/L(N,d) = %.9g, "
			"ratio %.4f\n",
			o->theta, o->cut_through ? "cut-through routes" : "store-and-forward steps",
			theta_bound(c), o->theta / theta_bound(c));
		if (o->have_mcf) {
			fprintf(out,
				"  mcf          theta %.9g (%s, %u sources of %u, %u iterations, "
				"%.3f s), lowered to %s, at most %u paths per pair\n",
				o->theta_mcf, mcf_method_name(o->mcf.method), o->mcf.classes,
				o->mcf.nodes, o->mcf.iterations, o->mcf.seconds, o->lowering,
				o->max_paths);
			if (o->mcf.optimal)
				fprintf(out,
					"               optimal (the LP bound meets the flow)\n");
			else
				fprintf(out,
					"               NOT proven optimal (%s): the optimum is at "
					"most "
					"%.9g, gap %.3g%%\n",
					mcf_stop_name(o->mcf.stop), 1 / o->mcf.lower,
					100 * o->mcf.gap);
		}
	}
	if (o->has_pred) {
		fprintf(out, "  construction %s\n", o->pred.how);
		fprintf(out, "    predicted  %u steps, tau_B ", o->pred.steps);
		text_tau(out, o->pred.tau_b, o->pred.tau_b_value);
		fprintf(out, "%s\n",
			o->pred.exact ? " (the paper's formulas, exact here)"
				      : " (the paper's upper bound)");
	}
	if (c->nic)
		fprintf(out,
			"  fabric       %s: ports are host NIC ports; %u circuits carry the "
			"links (-o lists them)\n",
			req->fabric->name, req->fabric->ncircuits);
}

/* The expansion construction next to BFB on the expanded graph. */
static void write_construction_text(const struct outcome *e, FILE *out)
{
	if (!e->applies) {
		fprintf(out, "  construction not built: %s\n", e->why);
		return;
	}
	fprintf(out, "  construction %s\n", e->pred.how);
	fprintf(out, "    predicted  %u steps, tau_B ", e->pred.steps);
	text_tau(out, e->pred.tau_b, e->pred.tau_b_value);
	fprintf(out, "%s\n", e->pred.exact ? " (exact)" : " (upper bound)");
	fprintf(out, "    built      %u steps, tau_B %.9g, %zu transfers, verified %s\n", e->steps,
		e->measured, e->ntransfers, e->verified ? "yes" : "NO");
	if (!e->verified)
		fprintf(out, "    verifier: %s\n", e->verify_error);
}

static void write_construction_json(const struct outcome *e, struct json_writer *w)
{
	jw_key(w, "expansion");
	jw_obj_begin(w);
	if (!e->applies) {
		jw_key(w, "error");
		jw_str(w, e->why);
		jw_obj_end(w);
		return;
	}
	jw_key(w, "construction");
	jw_str(w, e->pred.how);
	jw_key(w, "predicted");
	jw_obj_begin(w);
	jw_key(w, "num_steps");
	jw_uint(w, e->pred.steps);
	write_tau_json(w, "tau_b", e->pred.tau_b, e->pred.tau_b_value);
	jw_key(w, "exact");
	jw_bool(w, e->pred.exact);
	jw_obj_end(w);
	jw_key(w, "measured");
	jw_obj_begin(w);
	jw_key(w, "num_steps");
	jw_uint(w, e->steps);
	jw_key(w, "tau_b");
	jw_double(w, e->measured);
	jw_key(w, "num_transfers");
	jw_uint(w, e->ntransfers);
	jw_key(w, "time_us");
	jw_double(w, e->time_us);
	jw_key(w, "verified");
	jw_bool(w, e->verified);
	if (!e->verified) {
		jw_key(w, "verify_error");
		jw_str(w, e->verify_error);
	}
	jw_obj_end(w);
	jw_obj_end(w);
}

/* The whole schedule to -o: the shared shape plus, on a fabric, the links. */
static int write_schedule(const struct dc *c, const struct outcome *o, struct ofc_error *err)
{
	const struct schedule_request *req = c->req;
	struct cli_output out;
	char buf[64];
	int rc = 0;

	if (!req->output)
		return 0;
	if (cli_output_open(&out, req->output, err) < 0)
		return -1;
	if (req->format == FMT_PB) {
		rc = schedule_write_pb(&o->s, out.f, err);
		if (rc == 0) {
			/* One more Schedule message with the direct-connect fields:
			 * protobuf merges concatenated messages. */
			struct schedule_link *links = NULL;
			uint32_t nlinks =
			    c->nic ? fabric_view_links(&c->fv, req->fabric, &o->s, &links) : 0;
			struct arena a = {0};
			Ofc__V1__Schedule *m =
			    schedule_fabric_msg(&a, o->tau_b, req->fabric, links, nlinks);
			uint8_t *pk;
			size_t len;

			len = protobuf_c_message_get_packed_size(&m->base);
			pk = xmalloc(len + 1);
			protobuf_c_message_pack(&m->base, pk);
			if (len && fwrite(pk, 1, len, out.f) != len)
				rc = ofc_error_set(err, OFC_E_RUNTIME, "short write");
			free(pk);
			free(links);
			arena_free(&a);
		}
	} else if (req->format == FMT_TEXT) {
		sched_write_text(out.f, &o->s, UINT32_MAX);
		if (c->nic) {
			const struct fabric *f = req->fabric;

			fprintf(out.f,
				"links (port j of a host transmits to port j of the other):\n");
			for (uint32_t k = 0; k < f->ncircuits; k++) {
				const struct circuit *ci = &f->circuits[k];

				fprintf(out.f, "  %s:%u -> %s:%u  via %s %u -> %u\n",
					f->hosts[ci->src_host].name, ci->src_port,
					f->hosts[ci->dst_host].name, ci->dst_port,
					f->switches[ci->sw].name, ci->in_port, ci->out_port);
			}
		}
	} else {
		struct json_writer w;

		jw_init(&w, out.f, true);
		jw_obj_begin(&w);
		sched_write_json_members(&w, &o->s, true);
		jw_key(&w, "tau_b_fraction");
		if (frac_valid(o->tau_b))
			jw_str(&w, frac_str(o->tau_b, buf, sizeof(buf)));
		else
			jw_null(&w);
		if (c->nic)
			write_links_json(c, &w, &o->s);
		jw_obj_end(&w);
		jw_finish(&w);
	}
	if (rc == 0)
		return cli_output_commit(&out, err);
	cli_output_abort(&out);
	return -1;
}

static void write_table_text(const struct dc *c, struct outcome *all, unsigned n, FILE *out)
{
	fprintf(out, "%s on %s: %u nodes, degree %u; lower bound %.6g us (%u steps, tau_B* %.6g)\n",
		sched_collective_name(c->req->collective), c->g->spec, c->g->n, c->d, c->lb_us,
		c->lb.steps, frac_value(c->lb.tau_b));
	fprintf(out, "  %-12s %7s %14s %12s %8s  %s\n", "algorithm", "steps", "tau_B", "time_us",
		"ratio", "verified");
	for (unsigned i = 0; i < n; i++) {
		const struct outcome *o = &all[i];
		char buf[64];

		if (!o->applies) {
			fprintf(out, "  %-12s n/a: %s\n", o->algo, o->why);
			continue;
		}
		if (frac_valid(o->tau_b) && o->tau_b.den != 1 && o->tau_b.den < 100000)
			frac_str(o->tau_b, buf, sizeof(buf));
		else
			snprintf(buf, sizeof(buf), "%.6g", o->tau_b_value);
		fprintf(out, "  %-12s %7u %14s %12.6g %8.4f  %s", o->algo, o->steps, buf,
			o->time_us, o->ratio, o->verified ? "yes" : "NO");
		if (o->is_torus)
			fprintf(out, "  xi %.6g", o->tf.xi);
		if (o->is_a2a)
			fprintf(out, "  theta %.6g", o->theta);
		fprintf(out, "\n");
	}
}

static void write_table_json(const struct dc *c, struct outcome *all, unsigned n,
			     struct json_writer *w)
{
	jw_key(w, "comparison");
	jw_arr_begin(w);
	for (unsigned i = 0; i < n; i++) {
		const struct outcome *o = &all[i];

		jw_obj_begin(w);
		jw_key(w, "algorithm");
		jw_str(w, o->algo);
		if (!o->applies) {
			jw_key(w, "error");
			jw_str(w, o->why);
		} else {
			jw_key(w, "num_steps");
			jw_uint(w, o->steps);
			write_tau_json(w, "tau_b", o->tau_b, o->tau_b_value);
			jw_key(w, "time_us");
			jw_double(w, o->time_us);
			jw_key(w, "ratio");
			jw_double(w, o->ratio);
			jw_key(w, "verified");
			jw_bool(w, o->verified);
			jw_key(w, "num_transfers");
			jw_uint(w, o->ntransfers);
			if (o->is_torus) {
				jw_key(w, "variant");
				jw_str(w, o->variant);
				jw_key(w, "congestion_deficiency");
				jw_double(w, o->tf.xi);
			}
			if (o->is_a2a) {
				jw_key(w, "theta");
				jw_double(w, o->theta);
				if (o->lowering) {
					jw_key(w, "lowering");
					jw_str(w, o->lowering);
				}
			}
		}
		jw_obj_end(w);
	}
	jw_arr_end(w);
	(void)c;
}

/* ---- the command -------------------------------------------------------------- */

static const char *algos_help =
    "bfb, bfb-lp, expansion, ring, bidir-ring, recursive, torus-rings or all";

static int setup(struct dc *c, struct ofc_error *err)
{
	struct schedule_request *req = c->req;
	const struct graph *g = c->g;

	c->d = graph_outdeg(g, 0);
	if (topo_build_tree(g->spec, NULL, &c->tree, err) < 0)
		return cli_fail(err);
	/* M: --size, else the config's collective of this kind. */
	c->cost.size = req->size;
	if (!c->cost.size && req->fabric && req->fabric->ncollectives) {
		/* the config's collective of this kind, else its first */
		c->cost.size = req->fabric->collectives[0].size;
		for (uint32_t i = 0; i < req->fabric->ncollectives; i++)
			if ((int)req->fabric->collectives[i].op == (int)req->collective) {
				c->cost.size = req->fabric->collectives[i].size;
				break;
			}
	}
	if (!c->cost.size)
		return cli_usage_error(req->cmd, "missing --size (data per node, e.g. 1MiB)");
	c->cost.alpha = req->alpha;
	/* B is a node's egress: d links of the config's link bandwidth, or
	 * 100 Gb/s when nothing says otherwise. */
	if (req->bandwidth_set)
		c->cost.bandwidth = req->bandwidth;
	else if (req->fabric && req->fabric->cost.link_bandwidth > 0)
		c->cost.bandwidth = req->fabric->cost.link_bandwidth * c->d;
	else
		c->cost.bandwidth = 100e9;
	c->bopts.chunks = req->chunks;
	c->bopts.threads = req->threads;
	if (c->d == 0 || cost_lower_bound(req->collective, g->n, c->d, &c->lb) < 0)
		return cli_usage_error(req->cmd, "%s has no links", g->spec);
	c->lb_us = cost_time_us(&c->cost, c->lb.steps, frac_value(c->lb.tau_b));
	c->nic = fabric_view_init(req->fabric, g, &c->fv);
	return 0;
}

int schedule_direct(struct schedule_request *req)
{
	struct dc c = {.req = req, .g = req->graph};
	struct ofc_error err = {0};
	const char *algo = req->algo ? req->algo : "bfb";
	struct outcome *all = NULL, *main_o = NULL, *cons = NULL;
	unsigned nall = 0;
	int rc;

	if (req->collective == SCHED_ALLTOALL) {
		if (!req->algo)
			algo = "mcf";
		if (strcmp(algo, "mcf") && strcmp(algo, "direct") && strcmp(algo, "sp-balanced") &&
		    strcmp(algo, "all"))
			return cli_usage_error(req->cmd,
					       "unknown --algo '%s' for alltoall (mcf, direct, "
					       "sp-balanced or all)",
					       algo);
	} else if (strcmp(algo, "bfb") && strcmp(algo, "bfb-lp") && strcmp(algo, "expansion") &&
		   strcmp(algo, "all") && !baseline_known(algo) && strcmp(algo, "swing") &&
		   strcmp(algo, "recursive-doubling") && strcmp(algo, "bucket") &&
		   strcmp(algo, "swing-all")) {
		return cli_usage_error(req->cmd,
				       "unknown --algo '%s' for a direct-connect topology "
				       "(%s)",
				       algo, algos_help);
	}
	if (req->variant && strcmp(algo, "swing") && strcmp(algo, "recursive-doubling"))
		return cli_usage_error(req->cmd, "--variant goes with --algo swing or "
						 "recursive-doubling");
	if (req->lowering && (req->collective != SCHED_ALLTOALL || strcmp(algo, "mcf")))
		return cli_usage_error(req->cmd, "--lowering goes with --collective alltoall "
						 "--algo mcf");
	rc = setup(&c, &err);
	if (rc)
		goto out;

	unsigned cap = 8;
	all = xcalloc(cap, sizeof(*all));
	if (req->collective == SCHED_ALLTOALL) {
		static const char *const lowerings[] = {"steps", "paths", "single"};

		if (strcmp(algo, "all") == 0) {
			for (unsigned i = 0; i < ARRAY_SIZE(lowerings); i++) {
				run_a2a(&c, &all[nall], "mcf", lowerings[i]);
				snprintf(all[nall].algo, sizeof(all[nall].algo), "mcf/%s",
					 lowerings[i]);
				nall++;
			}
			run_a2a(&c, &all[nall++], "direct", NULL);
			run_a2a(&c, &all[nall++], "sp-balanced", NULL);
			for (unsigned i = 1; i < nall; i++)
				outcome_free(&all[i]);
		} else if (strcmp(algo, "mcf") == 0) {
			run_a2a(&c, &all[nall++], "mcf", req->lowering ? req->lowering : "steps");
		} else {
			run_a2a(&c, &all[nall++], algo, NULL);
		}
		main_o = &all[0];
	} else if (strcmp(algo, "swing") == 0 || strcmp(algo, "recursive-doubling") == 0) {
		run_torus_auto(&c, &all[nall++], algo);
		main_o = &all[0];
	} else if (strcmp(algo, "bucket") == 0) {
		run_torus_baseline(&c, &all[nall++], "bucket");
		main_o = &all[0];
	} else if (strcmp(algo, "swing-all") == 0) {
		run_torus(&c, &all[nall], "swing", SWING_BANDWIDTH);
		snprintf(all[nall++].algo, sizeof(all[0].algo), "swing/B");
		run_torus(&c, &all[nall], "swing", SWING_LATENCY);
		snprintf(all[nall++].algo, sizeof(all[0].algo), "swing/L");
		run_torus(&c, &all[nall], "recursive-doubling", SWING_BANDWIDTH);
		snprintf(all[nall++].algo, sizeof(all[0].algo), "rd/B");
		run_torus(&c, &all[nall], "recursive-doubling", SWING_LATENCY);
		snprintf(all[nall++].algo, sizeof(all[0].algo), "rd/L");
		run_torus_baseline(&c, &all[nall++], "ring");
		run_torus_baseline(&c, &all[nall++], "bidir-ring");
		run_torus_baseline(&c, &all[nall++], "bucket");
		main_o = &all[0];
		for (unsigned i = 1; i < nall; i++)
			outcome_free(&all[i]);
	} else if (strcmp(algo, "all") == 0) {
		run_bfb(&c, &all[nall++], false);
		run_expansion(&c, &all[nall++]);
		for (unsigned i = 0; baseline_name(i); i++)
			run_baseline(&c, &all[nall++], baseline_name(i));
		main_o = &all[0];
		/* Keep only BFB's schedule (the one -o writes). */
		for (unsigned i = 1; i < nall; i++)
			outcome_free(&all[i]);
	} else if (strcmp(algo, "bfb") == 0 || strcmp(algo, "bfb-lp") == 0) {
		run_bfb(&c, &all[nall++], strcmp(algo, "bfb-lp") == 0);
		main_o = &all[0];
		if (expand_applies(c.tree)) {
			cons = &all[nall++];
			run_expansion(&c, cons);
			outcome_free(cons);
		} else if (c.tree->op == TOPO_PRODUCT && main_o->applies) {
			/* No construction: Thm 13 predicts BFB on the product. */
			if (expand_predict(c.tree, req->collective, &c.bopts, &main_o->pred,
					   &err) == 0)
				main_o->has_pred = true;
		}
	} else if (strcmp(algo, "expansion") == 0) {
		run_expansion(&c, &all[nall++]);
		main_o = &all[0];
	} else {
		run_baseline(&c, &all[nall++], algo);
		main_o = &all[0];
	}

	if (!main_o->applies) {
		/* The chosen algorithm cannot run on this topology or input. */
		fprintf(stderr, "ofc schedule: %s: %s\n", main_o->algo, main_o->why);
		rc = 2;
		goto out;
	}
	if (req->json) {
		struct json_writer w;

		jw_init(&w, stdout, true);
		jw_obj_begin(&w);
		write_summary_json(&c, main_o, &w);
		if (cons)
			write_construction_json(cons, &w);
		if (strcmp(algo, "all") == 0 || strcmp(algo, "swing-all") == 0)
			write_table_json(&c, all, nall, &w);
		jw_obj_end(&w);
		jw_finish(&w);
	} else {
		if (strcmp(algo, "all") == 0 || strcmp(algo, "swing-all") == 0)
			write_table_text(&c, all, nall, stdout);
		else
			write_summary_text(&c, main_o, stdout);
		if (cons)
			write_construction_text(cons, stdout);
	}
	if (write_schedule(&c, main_o, &err) < 0) {
		rc = cli_fail(&err);
		goto out;
	}
	rc = 0;
	for (unsigned i = 0; i < nall; i++)
		if (all[i].applies && !all[i].verified) {
			fprintf(stderr, "ofc schedule: the %s schedule is not verified: %s\n",
				all[i].algo, all[i].verify_error);
			rc = 1;
		}
out:
	for (unsigned i = 0; i < nall; i++)
		outcome_free(&all[i]);
	free(all);
	topo_tree_free(c.tree);
	fabric_view_free(&c.fv);
	return rc;
}
