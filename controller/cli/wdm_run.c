/* All-gather on a WDM ring, shared by `ofc optree` and `ofc schedule` on a
 * config with a ring: build each asked-for algorithm through optree/,
 * verify it with the one verifier, price it, and print the summary (text
 * or JSON) and, with -o, the schedule itself. */
#include "controller/cli/internal.h"
#include "optree/optree.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct wdm_outcome {
	struct optree_result res;
	struct verify_report vr;
	struct optree_time tm;
	struct optree_analytic an;
	bool verified;
	bool built;
	char why[512]; /* when not built */
};

static const enum optree_algo all_algos[] = {OPTREE_RING, OPTREE_NE, OPTREE_ONESTAGE, OPTREE_TREE};

static void fmt_radices(char *buf, size_t n, const struct optree_plan *p)
{
	size_t k = 0;

	buf[0] = 0;
	for (uint32_t i = 0; i < p->depth && k + 12 < n; i++)
		k += (size_t)snprintf(buf + k, n - k, "%s%u", i ? "x" : "", p->radix[i]);
}

static int run_one(const struct wdm_request *q, enum optree_algo a, struct wdm_outcome *o)
{
	struct optree_opts opts = {a, NULL, q->overlap};
	struct optree_plan forced;
	struct ofc_error err = {0};

	memset(o, 0, sizeof(*o));
	optree_analytic(&q->ring, &o->an);
	if (a == OPTREE_TREE && q->depth) {
		if (optree_plan_radices(&q->ring, q->radix, q->depth, &forced, &err) < 0) {
			ofc_error_str(&err, o->why, sizeof(o->why));
			return ofc_error_exit_code(&err);
		}
		opts.plan = &forced;
	}
	if (optree_build(&q->ring, &opts, &o->res, &err) < 0) {
		ofc_error_str(&err, o->why, sizeof(o->why));
		return ofc_error_exit_code(&err);
	}
	o->built = true;
	struct verify_wdm w = optree_verify_wdm(&q->ring);
	struct verify_opts vo = {.wdm = &w};
	o->verified = sched_verify(&o->res.sched, &vo, &o->vr) == 0;
	o->res.sched.verified = o->verified;
	optree_timing(&q->ring, &o->res, q->overlap, &o->tm);
	o->res.sched.time_us = o->tm.time_us;
	o->res.sched.lower_bound_us =
	    o->res.lower_bound_steps * o->tm.step_us; /* the bandwidth term of the bound */
	sched_set_metric(&o->res.sched, "max_wavelengths_used", o->vr.max_wavelengths_used);
	return 0;
}

static void write_json_one(struct json_writer *w, const struct wdm_request *q,
			   const struct wdm_outcome *o, enum optree_algo a)
{
	const struct optree_result *r = &o->res;
	const struct optree_ring *ring = &q->ring;

	jw_obj_begin(w);
	jw_key(w, "algorithm");
	jw_str(w, optree_algo_name(a));
	jw_key(w, "nodes");
	jw_uint(w, ring->nodes);
	jw_key(w, "wavelengths");
	jw_uint(w, ring->wavelengths);
	jw_key(w, "fibres");
	jw_uint(w, ring->fibres);
	if (q->ring_name) {
		jw_key(w, "ring");
		jw_str(w, q->ring_name);
	}
	jw_key(w, "block_bytes");
	jw_uint(w, ring->block_bytes);
	jw_key(w, "max_add");
	jw_uint(w, ring->max_add);
	if (!o->built) {
		jw_key(w, "error");
		jw_str(w, o->why);
		jw_key(w, "verified");
		jw_bool(w, false);
		jw_obj_end(w);
		return;
	}
	jw_key(w, "analytic_depth");
	jw_uint(w, r->analytic_depth);
	jw_key(w, "analytic_steps");
	jw_double(w, r->analytic_steps);
	if (a == OPTREE_TREE) {
		jw_key(w, "analytic_k");
		jw_double(w, o->an.k_real);
		jw_key(w, "analytic_radix");
		jw_double(w, o->an.radix);
		jw_key(w, "analytic_time_us");
		jw_double(w, o->an.time_us);
	}
	jw_key(w, "radices");
	jw_arr_begin(w);
	if (a == OPTREE_TREE || a == OPTREE_ONESTAGE)
		for (uint32_t i = 0; i < r->plan.depth; i++)
			jw_uint(w, r->plan.radix[i]);
	jw_arr_end(w);
	jw_key(w, "uneven");
	jw_bool(w, (a == OPTREE_TREE || a == OPTREE_ONESTAGE) && r->plan.uneven);
	jw_key(w, "stages");
	jw_uint(w, r->nstages);
	jw_key(w, "stage_steps");
	jw_arr_begin(w);
	for (uint32_t i = 0; i < r->nstages; i++)
		jw_uint(w, r->stage[i].steps);
	jw_arr_end(w);
	if (a == OPTREE_TREE || a == OPTREE_ONESTAGE) {
		jw_key(w, "stage_detail");
		jw_arr_begin(w);
		for (uint32_t i = 0; i < r->nstages; i++) {
			const struct optree_stage *s = &r->stage[i];

			jw_obj_begin(w);
			jw_key(w, "radix");
			jw_uint(w, s->radix);
			jw_key(w, "groups");
			jw_uint(w, s->groups);
			jw_key(w, "min_group");
			jw_uint(w, s->min_group);
			jw_key(w, "max_group");
			jw_uint(w, s->max_group);
			jw_key(w, "max_load");
			jw_uint(w, s->max_load);
			jw_key(w, "steps");
			jw_uint(w, s->steps);
			jw_key(w, "colour_steps");
			jw_uint(w, s->colour_steps);
			jw_key(w, "lower_bound");
			jw_uint(w, s->lower_bound);
			jw_key(w, "partial_channels");
			jw_uint(w, s->partial_channels);
			jw_key(w, "transfers");
			jw_uint(w, s->transfers);
			jw_obj_end(w);
		}
		jw_arr_end(w);
	}
	jw_key(w, "num_steps");
	jw_uint(w, r->sched.nsteps);
	jw_key(w, "num_transfers");
	jw_uint(w, r->sched.nxfers);
	jw_key(w, "max_wavelengths_used");
	jw_uint(w, o->vr.max_wavelengths_used);
	jw_key(w, "lower_bound_steps");
	jw_uint(w, r->lower_bound_steps);
	jw_key(w, "gap_steps");
	jw_int(w, (int64_t)r->sched.nsteps - (int64_t)r->lower_bound_steps);
	jw_key(w, "split_steps");
	jw_uint(w, r->split_steps);
	jw_key(w, "step_us");
	jw_double(w, o->tm.step_us);
	jw_key(w, "time_us");
	jw_double(w, o->tm.time_us);
	jw_key(w, "overlap");
	jw_bool(w, q->overlap);
	jw_key(w, "time_plain_us");
	jw_double(w, o->tm.plain_us);
	jw_key(w, "overlap_saved_us");
	jw_double(w, o->tm.saved_us);
	jw_key(w, "stage_retunes");
	jw_uint(w, o->tm.retune_stages);
	jw_key(w, "hidden_stage_retunes");
	jw_uint(w, o->tm.hidden_stages);
	jw_key(w, "mrr_retune_steps");
	jw_uint(w, o->tm.retune_steps);
	jw_key(w, "time_all_retunes_us");
	jw_double(w, o->tm.all_retunes_us);
	jw_key(w, "time_all_retunes_plain_us");
	jw_double(w, o->tm.all_retunes_plain_us);
	jw_key(w, "verified");
	jw_bool(w, o->verified);
	if (!o->verified) {
		jw_key(w, "verify_error");
		jw_str(w, o->vr.error);
	}
	jw_obj_end(w);
}

static void write_text_one(FILE *f, const struct wdm_request *q, const struct wdm_outcome *o,
			   enum optree_algo a)
{
	const struct optree_result *r = &o->res;
	const struct optree_ring *ring = &q->ring;
	char size[32], rate[32], d1[32], d2[32], rad[256];
	static const char *const title[] = {
	    [OPTREE_RING] = "ring all-gather",
	    [OPTREE_NE] = "neighbor exchange",
	    [OPTREE_ONESTAGE] = "one-stage all-to-all broadcast",
	    [OPTREE_TREE] = "OpTree",
	};

	fmt_size(size, sizeof(size), ring->block_bytes);
	fmt_rate(rate, sizeof(rate), ring->rate);
	fmt_duration(d1, sizeof(d1), ring->mrr_delay);
	fmt_duration(d2, sizeof(d2), ring->oeo_delay);
	fprintf(f,
		"%s all-gather on a WDM ring%s%s: %u nodes, %u wavelengths x %u fibre%s per "
		"direction, %s blocks at %s\n",
		title[a], q->ring_name ? " " : "", q->ring_name ? q->ring_name : "", ring->nodes,
		ring->wavelengths, ring->fibres, ring->fibres == 1 ? "" : "s", size, rate);
	if (!o->built) {
		fprintf(f, "  not built: %s\n", o->why);
		return;
	}
	if (a == OPTREE_TREE) {
		fprintf(f,
			"  analytic optimum      depth k* = %u (Theorem 2; stationary point %.2f), "
			"m = N^(1/k) = %.2f\n",
			o->an.depth, o->an.k_real, o->an.radix);
		fprintf(f,
			"                        S = N m (2k-1) / (8W) = %.2f steps "
			"(Theorem 1)\n",
			o->an.steps);
		fmt_radices(rad, sizeof(rad), &r->plan);
		fprintf(f, "  realised plan         radices %s (%u stage%s, %s groups)\n", rad,
			r->plan.depth, r->plan.depth == 1 ? "" : "s",
			r->plan.uneven ? "uneven" : "even");
		fprintf(f, "    stage  radix  groups  group size   max load  lower bound  steps\n");
		for (uint32_t i = 0; i < r->nstages; i++) {
			const struct optree_stage *s = &r->stage[i];
			char gs[32];

			if (s->min_group == s->max_group)
				snprintf(gs, sizeof(gs), "%u", s->min_group);
			else
				snprintf(gs, sizeof(gs), "%u-%u", s->min_group, s->max_group);
			fprintf(f, "    %-5u  %-5u  %-6u  %-11s  %-8llu  %-11u  %u%s\n", i + 1,
				s->radix, s->groups, gs, (unsigned long long)s->max_load,
				s->lower_bound, s->steps,
				s->steps > s->colour_steps ? " (split)" : "");
		}
	} else if (a == OPTREE_ONESTAGE) {
		fprintf(f, "  analytic              N^2 / (8W) = %.2f steps (Lemma 1)\n",
			r->analytic_steps);
	} else {
		fprintf(f, "  analytic              %.0f steps\n", r->analytic_steps);
	}
	int64_t gap = (int64_t)r->sched.nsteps - (int64_t)r->lower_bound_steps;
	fprintf(f, "  total steps           %u (lower bound %u, gap %lld = %.1f %%",
		r->sched.nsteps, r->lower_bound_steps, (long long)gap,
		r->lower_bound_steps ? 100.0 * (double)gap / r->lower_bound_steps : 0.0);
	if (r->analytic_steps > 0)
		fprintf(f, "; analytic %.2f, %+.1f %%", r->analytic_steps,
			100.0 * (r->sched.nsteps - r->analytic_steps) / r->analytic_steps);
	fprintf(f, ")\n");
	fprintf(f, "  max wavelengths used  %u of %u on any fibre in any step\n",
		o->vr.max_wavelengths_used, ring->wavelengths);
	fprintf(f, "  add/drop limit        %u lightpaths per node per step: %s", ring->max_add,
		r->split_steps ? "" : "no step split\n");
	if (r->split_steps)
		fprintf(f, "steps split to respect it, %u more step%s\n", r->split_steps,
			r->split_steps == 1 ? "" : "s");
	fprintf(f,
		"  predicted time        T = %u x %.3f us + %u x %s retune + %u x %s O/E/O = "
		"%.2f us\n",
		r->sched.nsteps, o->tm.step_us, o->tm.retune_stages, d1, r->nstages, d2,
		o->tm.plain_us);
	if (q->overlap)
		fprintf(f,
			"  with --overlap        %.2f us: %u of %u stage retune%s hidden, %.2f us "
			"saved (%.3f %%)\n",
			o->tm.time_us, o->tm.hidden_stages, o->tm.retune_stages,
			o->tm.retune_stages == 1 ? "" : "s", o->tm.saved_us,
			o->tm.plain_us > 0 ? 100.0 * o->tm.saved_us / o->tm.plain_us : 0.0);
	fprintf(f,
		"  MRR retuning          %u of %u steps change some ring; charging every one: "
		"%.2f us\n",
		o->tm.retune_steps, r->sched.nsteps, o->tm.all_retunes_us);
	if (o->verified)
		fprintf(f, "  verified              yes (%zu transfers)\n", r->sched.nxfers);
	else
		fprintf(f, "  verified              NO: %s\n", o->vr.error);
}

static void write_table(FILE *f, const struct wdm_request *q, struct wdm_outcome *o,
			const enum optree_algo *algos, size_t n)
{
	const struct optree_ring *ring = &q->ring;
	char size[32];
	double best = INFINITY;

	fmt_size(size, sizeof(size), ring->block_bytes);
	fprintf(f,
		"all-gather on a WDM ring%s%s: %u nodes, %u wavelengths x %u fibre%s per "
		"direction, %s blocks\n\n",
		q->ring_name ? " " : "", q->ring_name ? q->ring_name : "", ring->nodes,
		ring->wavelengths, ring->fibres, ring->fibres == 1 ? "" : "s", size);
	for (size_t i = 0; i < n; i++)
		if (o[i].built && o[i].tm.time_us < best)
			best = o[i].tm.time_us;
	fprintf(f, "%-9s  %-7s  %-7s  %-9s  %-7s  %-5s  %-6s  %-14s  %-8s  %s\n", "algorithm",
		"stages", "steps", "analytic", "bound", "gap", "max wl", "time (us)", "vs best",
		"verified");
	for (size_t i = 0; i < n; i++) {
		const struct wdm_outcome *x = &o[i];

		if (!x->built) {
			fprintf(f, "%-9s  not built: %s\n", optree_algo_name(algos[i]), x->why);
			continue;
		}
		char ratio[24] = "-";

		if (best > 0)
			snprintf(ratio, sizeof(ratio), "x%.2f", x->tm.time_us / best);
		fprintf(f, "%-9s  %-7u  %-7u  %-9.2f  %-7u  %-5lld  %-6u  %-14.2f  %-8s  %s\n",
			optree_algo_name(algos[i]), x->res.nstages, x->res.sched.nsteps,
			x->res.analytic_steps, x->res.lower_bound_steps,
			(long long)x->res.sched.nsteps - (long long)x->res.lower_bound_steps,
			x->vr.max_wavelengths_used, x->tm.time_us, ratio,
			x->verified ? "yes" : "NO");
	}
	for (size_t i = 0; i < n; i++)
		if (o[i].built && algos[i] == OPTREE_TREE) {
			char rad[256];

			fmt_radices(rad, sizeof(rad), &o[i].res.plan);
			fprintf(f, "\noptree radices %s; analytic depth %u (k = %.2f)\n", rad,
				o[i].an.depth, o[i].an.k_real);
		}
	for (size_t i = 0; i < n; i++)
		if (o[i].built && o[i].tm.time_us > 0 && best > 0 && algos[i] != OPTREE_TREE)
			for (size_t j = 0; j < n; j++)
				if (o[j].built && algos[j] == OPTREE_TREE) {
					double d = 100.0 * (1 - o[j].tm.time_us / o[i].tm.time_us);

					fprintf(f, "optree takes %.2f %% %s time than %s\n",
						fabs(d), d >= 0 ? "less" : "more",
						optree_algo_name(algos[i]));
				}
}

int wdm_run(const struct wdm_request *q)
{
	enum optree_algo one;
	const enum optree_algo *algos = &one;
	size_t n = 1;
	struct ofc_error err = {0};
	int rc = 0;

	if (strcmp(q->algo, "all") == 0) {
		algos = all_algos;
		n = ARRAY_SIZE(all_algos);
		if (q->output)
			return cli_usage_error(q->cmd, "-o writes one schedule: pick one --algo");
	} else if (optree_algo_parse(q->algo, &one) < 0) {
		return cli_usage_error(
		    q->cmd, "unknown --algo '%s' (ring, ne, onestage, optree, all)", q->algo);
	}
	if (q->depth && n == 1 && one != OPTREE_TREE)
		return cli_usage_error(q->cmd, "--radices applies to --algo optree");
	if (optree_ring_check(&q->ring, &err) < 0)
		return cli_fail(&err);
	if (q->depth) {
		struct optree_plan p;

		if (optree_plan_radices(&q->ring, q->radix, q->depth, &p, &err) < 0)
			return cli_usage_error(q->cmd, "%s", err.msg);
	}
	if (q->ring.nodes > OPTREE_MAX_NODES) {
		ofc_error_set(&err, OFC_E_INPUT,
			      "%u nodes: schedules are built for at most %u nodes (the schedule "
			      "holds N(N-1) transfers)",
			      q->ring.nodes, OPTREE_MAX_NODES);
		return cli_fail(&err);
	}

	struct wdm_outcome *o = xcalloc(n, sizeof(*o));
	for (size_t i = 0; i < n; i++) {
		int st = run_one(q, algos[i], &o[i]);

		if (st && n == 1) {
			if (st == 2)
				cli_usage_error(q->cmd, "%s", o[i].why);
			else
				fprintf(stderr, "ofc %s: %s\n", q->cmd->name, o[i].why);
			free(o);
			return st;
		}
		/* Keep only the summary of earlier algorithms: the schedule of
		 * a 4096-node all-gather is 335 MB. */
		if (n > 1 && o[i].built) {
			free(o[i].res.sched.xfers);
			o[i].res.sched.xfers = NULL;
		}
	}

	if (q->json) {
		struct json_writer w;

		jw_init(&w, stdout, true);
		if (n > 1)
			jw_arr_begin(&w);
		for (size_t i = 0; i < n; i++)
			write_json_one(&w, q, &o[i], algos[i]);
		if (n > 1)
			jw_arr_end(&w);
		jw_finish(&w);
	} else if (n > 1) {
		write_table(stdout, q, o, algos, n);
	} else {
		write_text_one(stdout, q, &o[0], algos[0]);
	}
	fflush(stdout);

	if (n == 1 && q->output) {
		struct schedule_request sr = {
		    .cmd = q->cmd, .format = q->format, .output = q->output};

		if (cli_write_schedule(&sr, &o[0].res.sched, &err) < 0)
			rc = cli_fail(&err);
	}
	for (size_t i = 0; i < n; i++) {
		if (o[i].built && !o[i].verified) {
			fprintf(stderr, "ofc %s: the %s schedule failed verification: %s\n",
				q->cmd->name, optree_algo_name(algos[i]), o[i].vr.error);
			rc = 1;
		}
		optree_result_free(&o[i].res);
	}
	free(o);
	return rc;
}
