/* ofc schedule on a server fabric (--algo fluid): the fluid optimum, the
 * Theorem 4 schedule and the verifier's verdict, as text or JSON, and the
 * whole schedule to -o. */
#include "controller/cli/internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The solve's progress on the request's one progress line (the clock's,
 * which also shows the symmetry search, Theorem 4 and the verifier). */
struct fluid_watch {
	const struct ofc_clock *clock;
};

static void show_progress(void *ctx, const struct fluid_progress *p)
{
	const struct fluid_watch *w = ctx;
	char buf[160];

	snprintf(buf, sizeof(buf), "fluid %s, T = %u, iteration %u, R %.6g (bound %.6g)", p->stage,
		 p->hops, p->iteration, p->value, p->bound);
	clock_progress(w->clock, buf, -1);
}

/* --json: the summary's one shape (schedule_summary_json, as through
 * ofcd), the engine's working its detail. */
static void write_json(FILE *out, const struct schedule_query *q, const struct fluid_answer *a,
		       const struct msccl_summary *ms)
{
	struct arena ar = {0};
	Ofc__V1__Schedule *m = schedule_header_msg(&ar, &a->s);
	struct json_writer w;

	m->num_steps = fluid_answer_steps(a); /* a period's head has none */
	m->detail = schedule_fluid_detail_msg(&ar, q->fabric, a);
	if (ms) /* --format msccl: the program written */
		schedule_fluid_msccl_msg(&ar, m->detail, a->net, ms);
	jw_init(&w, out, true);
	schedule_summary_json(&w, m);
	jw_finish(&w);
	arena_free(&ar);
}

static const char *stop_words(const struct fluid_result *r)
{
	return r->optimal		     ? "optimal"
	       : r->stop == FLUID_STOP_TIME  ? "time limit"
	       : r->stop == FLUID_STOP_STALL ? "not proven: a pricing LP stalled"
					     : "not proven";
}

/* R*, the objective and Theorem 4 of one solve; unit names what one GB is
 * of ("" on its own, " of shard" in an allreduce). */
static void write_phase_text(FILE *out, const struct fluid_answer *a, const struct fluid_result *r,
			     const struct fluid_steps_report *rep, double bound, const char *unit)
{
	fprintf(out, "  R*            %.10g s/GB%s at T = %u hops (%s", r->rstar, unit, r->hops,
		stop_words(r));
	if (bound > 0)
		fprintf(out, "; cut bound %.6g s/GB", bound);
	fprintf(out, ")\n");
	if (!isnan(r->objective))
		fprintf(out, "  objective     %.6f (weighted traffic at R*)\n", r->objective);
	if (!isnan(r->objective_any_hops))
		fprintf(out,
			"  any T         objective >= %.6f at R* for every hop limit (the layers "
			"summed)%s\n",
			r->objective_any_hops,
			r->objective <= r->objective_any_hops * (1 + 1e-6) ? ": T is enough" : "");
	else if (r->any_hops_note[0])
		fprintf(out, "  any T         %s\n", r->any_hops_note);
	fprintf(out,
		"  Theorem 4     K = %u chunks%s, %u steps of %.6g s/GB%s: latency %.6g s/GB%s\n",
		rep->chunks,
		a->chunks_engine    ? " (the most the MSCCL runtime takes)"
		: rep->chose_chunks ? (a->chunks_for_alpha ? " (chosen for alpha and size)"
							   : " (least K within epsilon)")
				    : "",
		rep->steps, rep->step_time, unit, rep->latency, unit);
	/* What this decomposition found, against the relaxation: its trees'
	 * gap, which another method's may close on the same fabric (no proof
	 * that no schedule meets R*), or the time limit left. Without an
	 * objective (stopped before the cost phase) no ratio to it. */
	if (!r->routing.exact) {
		char obj[48] = "";

		if (r->objective > 0)
			snprintf(obj, sizeof(obj), ", x%.4f the objective",
				 r->routing.cost / r->objective);
		fprintf(out,
			"                (%s's trees need R %.6g s/GB, x%.4f R*, cost %.6f%s: "
			"the gap %s left to the relaxation)\n",
			fluid_method_name(r->method), r->routing.r_actual,
			r->rstar > 0 ? r->routing.r_actual / r->rstar : NAN, r->routing.cost, obj,
			r->stop == FLUID_STOP_TIME ? "the time limit" : "its decomposition");
	}
}

static void write_text(FILE *out, const struct schedule_query *q, const struct fluid_answer *a)
{
	const struct fluid_result *r = &a->r;
	char sz[32], al[32];

	fprintf(out, "fabric %s: %s on %u GPUs (%u vertices, %u arcs, %u capacity sets)\n",
		q->fabric->name, sched_collective_name(q->collective), a->terminals, a->net->nverts,
		a->net->narcs, a->net->nsets);
	fprintf(out, "  fluid         %s", fluid_method_name(r->method));
	if (r->method == FLUID_MIRRORED)
		fprintf(out, " over %u automorphisms (found in %.2f s)", r->group_order,
			a->seconds_group);
	fprintf(out, ", %u pricing problems per iteration\n", r->classes);
	if (a->allreduce) {
		fprintf(out,
			"  allreduce     a reduce-scatter then an allgather, one shard (1/%u of "
			"the data) per GPU, one schedule\n",
			a->terminals);
		fprintf(out, "  reduce-scatter\n");
		write_phase_text(out, a, r, &a->rep, 0, " of shard");
		fprintf(out, "  allgather\n");
		write_phase_text(out, a, &a->r_ag, &a->rep_ag, 0, " of shard");
		fprintf(out,
			"  latency       %.6g s/GB, %u steps (any allreduce needs %.6g s/GB: "
			"x%.3f)\n",
			a->latency, fluid_answer_steps(a), a->lower_bound,
			a->latency / a->lower_bound);
	} else {
		write_phase_text(out, a, r, &a->rep, a->lower_bound, "");
	}
	fmt_duration(al, sizeof(al), a->alpha);
	if (a->size) {
		fmt_size(sz, sizeof(sz), a->size);
		fprintf(out, "  predicted     %.6g s for %s per GPU, alpha %s per step\n",
			a->predicted, sz, al);
	} else {
		fprintf(out,
			"  predicted     %.6g s for 1 GB per GPU (--size for yours), alpha %s per "
			"step\n",
			a->predicted, al);
	}
	fprintf(out, "  transfers     %zu\n", fluid_answer_transfers(a));
	if (a->verified)
		fprintf(out, "  verified      yes (cost %.6f, busiest capacity at %.4f)\n",
			a->vr.network_cost, a->vr.max_utilisation);
	else
		fprintf(out, "  verified      NO: %s\n", a->vr.error);
	fprintf(out, "  solved in     %.2f s\n",
		r->seconds_total + a->r_ag.seconds_total + a->seconds_group);
}

/* Where the writer would round g's bounds (no chunk count up to 64 has
 * them exact), the chunks a block, 1 to the most an operation moves, at
 * which the program's own price is lowest (the rounding moves parts
 * between links: only-nvlink-2's allgather is 5.6% over the optimum at
 * 64 and 0.8% at 43); 0 where it writes g exactly. */
static uint32_t cheapest_q(const struct fluid_answer *a, const struct schedule *g,
			   const struct fabric_gpu_info *gi, double block_gb)
{
	uint32_t best = 0;
	double least = INFINITY;

	if (!msccl_rounded_q(g))
		return 0;
	for (uint32_t Q = MSCCL_MOST_Q; Q >= 1; Q--) {
		struct msccl_price pr;
		struct ofc_error e = {0};

		if (msccl_program_price(a->net, g, gi, Q, a->alpha, block_gb, &pr, &e) == 0 &&
		    pr.price_s < least) {
			least = pr.price_s;
			best = Q;
		}
	}
	return best;
}

/* The schedule at a's K as an MSCCL program on its GPUs, written to f:
 * traced to GPU-to-GPU sends (a far server's copies forwarded inside it
 * or not), verified on the GPUs alone. a is expanded. */
static int msccl_variant(const struct schedule_print *p, const struct schedule_query *q,
			 struct fluid_answer *a, bool forward, FILE *f, struct msccl_info *mi,
			 struct fabric_gpu_info *gi, struct msccl_price *price,
			 struct ofc_error *err)
{
	struct schedule g;
	struct verify_report vr;
	struct verify_opts vo = {.threads = q->threads, .clock = q->clock};
	int rc;

	if (fabric_gpu_schedule(a->net, &a->s, a->allreduce ? a->pipe.steps : 0, forward, &g, gi,
				err) < 0)
		return -1;
	if (sched_verify(&g, &vo, &vr) < 0) {
		sched_free(&g);
		fabric_gpu_info_free(gi);
		return ofc_error_set(err, OFC_E_RUNTIME,
				     "the schedule on its GPUs alone does not verify: %s",
				     vr.error);
	}
	rc = cli_export_check(p, schedule_memory_limit(q), &g, err);
	/* its own price: a block is the size a GPU (an allreduce's shard) */
	double block_gb = (a->size ? (double)a->size / 1e9 : 1) / (a->allreduce ? a->terminals : 1);
	uint32_t chunks = rc == 0 && price ? cheapest_q(a, &g, gi, block_gb) : 0;

	if (rc == 0) {
		struct ofc_error e = {0};

		rc = schedule_write_msccl_at(&g, p->msccl_runtime, chunks, f, mi, &e);
		/* over a limit at that Q (nothing written): the writer's own */
		if (rc < 0 && chunks && e.code == OFC_E_INPUT)
			rc = schedule_write_msccl(&g, p->msccl_runtime, f, mi, err);
		else if (rc < 0)
			*err = e;
	}
	/* a program too large to price is written all the same, said unpriced */
	if (rc == 0 && price &&
	    msccl_program_price(a->net, &g, gi, mi->chunks_per_block, a->alpha, block_gb, price,
				&(struct ofc_error){0}) < 0)
		price->price_s = NAN;
	sched_free(&g);
	fabric_gpu_info_free(gi);
	return rc;
}

/* The program of a at its K, written to f. Forwarding a far server's
 * copies inside it sends each across the network once, but adds
 * operations and moves the chunk rounding, so the cost model chooses:
 * priced (price set), both are made and the one whose own price is lower
 * is written (without, on a tie); fitting (price NULL), the first that
 * fits the runtime, forwarded first. */
static int msccl_try(const struct schedule_print *p, const struct schedule_query *q,
		     struct fluid_answer *a, FILE *f, struct msccl_info *mi,
		     struct fabric_gpu_info *gi, struct msccl_price *price, bool fwd_only,
		     bool *fwd_over, struct ofc_error *err)
{
	struct ofc_error e = {0};

	if (fluid_answer_expand(q, a, err) < 0)
		return -1;
	if (!price) {
		if (msccl_variant(p, q, a, true, f, mi, gi, NULL, &e) == 0)
			return 0;
		if (e.code != OFC_E_INPUT || fwd_only) {
			*err = e;
			return -1;
		}
		return msccl_variant(p, q, a, false, f, mi, gi, NULL, err);
	}
	char *buf[2] = {NULL, NULL};
	size_t len[2] = {0, 0};
	struct msccl_info m[2];
	struct fabric_gpu_info g[2];
	struct msccl_price pr[2];
	struct ofc_error er[2] = {{0}, {0}};
	int rc[2];

	for (int i = 0; i < 2; i++) {
		FILE *mem = open_memstream(&buf[i], &len[i]);

		if (!mem) {
			free(buf[0]);
			return ofc_error_set(err, OFC_E_RUNTIME, "out of memory for the program");
		}
		rc[i] = msccl_variant(p, q, a, i == 0, mem, &m[i], &g[i], &pr[i], &er[i]);
		if (fclose(mem) != 0 && rc[i] == 0)
			rc[i] =
			    ofc_error_set(&er[i], OFC_E_RUNTIME, "out of memory for the program");
	}
	/* 0: forwarded, 1: not; an unpriced one (NaN) is not the lower */
	int k = rc[0] == 0 && (rc[1] < 0 || pr[0].price_s < pr[1].price_s) ? 0 : 1;
	int out = rc[k];

	if (fwd_over) /* forwarding over the runtime's limits at this K */
		*fwd_over = rc[0] < 0 && er[0].code == OFC_E_INPUT && rc[1] == 0;

	if (out < 0)
		*err = er[k];
	else if (fwrite(buf[k], 1, len[k], f) != len[k])
		out = ofc_error_set(err, OFC_E_RUNTIME, "writing the program failed");
	*mi = m[k];
	*gi = g[k];
	*price = pr[k];
	free(buf[0]);
	free(buf[1]);
	return out;
}

/* The fluid optimum's time (R*, each phase's, without latency) for a's
 * size: what ForestColl's optimum is for a server fabric. */
static double optimum_time(const struct fluid_answer *a)
{
	double gb = a->size ? (double)a->size / 1e9 : 1;

	if (a->allreduce)
		return (a->r.rstar + a->r_ag.rstar) * gb / a->terminals;
	return a->r.rstar * gb;
}

/* Where the runtime refuses the program at the engine's K (model W's
 * servers from 4 on: the XML nodes a rank grow with K), the most chunks
 * it takes, which the cost model prices lowest of those (Theorem 4's
 * time falls with K up to the engine's): the powers of two down from K
 * until one fits, then bisected above it, each try written to /dev/null,
 * until the K known to fit is within 1% of the time of the most that
 * might (fwd_only: the program forwarding inside servers). a is left laid
 * out at that K; -1 with the runtime's refusal at 1 chunk where none fits. */
static int msccl_fit(const struct schedule_print *p, const struct schedule_query *q,
		     struct fluid_answer *a, bool fwd_only, struct ofc_error *err)
{
	uint32_t lo = 0, hi = a->rep.chunks;
	struct msccl_info mi;
	struct fabric_gpu_info gi;
	FILE *null = fopen("/dev/null", "w");

	if (!null)
		return ofc_error_set(err, OFC_E_RUNTIME, "/dev/null: cannot open");
	a->chunks_engine = a->rep.chunks;
	while (hi - lo > 1 &&
	       !(lo && fluid_answer_time_at(a, lo) <= 1.01 * fluid_answer_time_at(a, hi - 1))) {
		uint32_t mid = lo + (hi - lo) / 2;

		/* none known yet: powers of two first (a block of 2^j chunks
		 * is exact in the program's 64 a block, where K = 35 is
		 * rounded into more operations than K = 64 is) */
		if (!lo)
			for (mid = 1; mid * 2 < hi; mid *= 2)
				;
		struct ofc_error e = {0};

		if (fluid_answer_rechunk(q, a, mid, err) < 0) {
			fclose(null);
			return -1;
		}
		if (msccl_try(p, q, a, null, &mi, &gi, NULL, fwd_only, NULL, &e) == 0) {
			lo = mid;
		} else if (e.code != OFC_E_INPUT || mid <= 1) {
			*err = e;
			fclose(null);
			return -1;
		} else {
			hi = mid;
		}
	}
	fclose(null);
	if (!lo)
		return ofc_error_set(err, OFC_E_INPUT, "no chunk count fits the runtime");
	return fluid_answer_rechunk(q, a, lo, err);
}

/* Where forwarding inside servers was over the runtime's limits at a's K
 * (the program without it written to out, priced *price), the most chunks
 * at which it fits: its program replaces out's where its own price is
 * lower (stderr says so), else a is laid out at its K again. */
static int msccl_forward_lower(const struct schedule_print *p, const struct schedule_query *q,
			       struct fluid_answer *a, struct cli_output *out,
			       struct msccl_info *mi, struct fabric_gpu_info *gi,
			       struct msccl_price *price, struct ofc_error *err)
{
	uint32_t k0 = a->rep.chunks, eng0 = a->chunks_engine;
	struct msccl_info mi2;
	struct fabric_gpu_info gi2;
	struct msccl_price pr2;
	struct ofc_error e = {0};
	char *buf = NULL;
	size_t len = 0;
	FILE *m;
	int rc = -1;

	if (msccl_fit(p, q, a, true, &e) == 0 && (m = open_memstream(&buf, &len)) != NULL) {
		rc = msccl_try(p, q, a, m, &mi2, &gi2, &pr2, false, NULL, &e);
		if (fclose(m) != 0)
			rc = -1;
	}
	if (rc == 0 && pr2.price_s < price->price_s) {
		double before = price->price_s;

		cli_output_abort(out);
		if (cli_output_open(out, p->output, err) < 0) {
			free(buf);
			return -1;
		}
		if (fwrite(buf, 1, len, out->f) != len) {
			free(buf);
			return ofc_error_set(err, OFC_E_RUNTIME, "writing the program failed");
		}
		free(buf);
		*mi = mi2;
		*gi = gi2;
		*price = pr2;
		a->chunks_engine = eng0 ? eng0 : k0;
		fprintf(stderr,
			"ofc schedule: K = %u chunks, the most at which forwarding inside a server "
			"fits %s, its own price lower than at K = %u without: %.6g s against %.6g "
			"s (Theorem 4's time %.6g s against %.6g s)\n",
			a->rep.chunks,
			p->msccl_runtime == MSCCL_LEGACY ? "the legacy MSCCL's limits"
							 : "msccl-executor-nccl's limits",
			k0, pr2.price_s, before, a->predicted, fluid_answer_time_at(a, k0));
		return 0;
	}
	free(buf);
	a->chunks_engine = eng0; /* out's program stands, at k0 */
	return fluid_answer_rechunk(q, a, k0, err);
}

/* The schedule as an MSCCL program on its GPUs (docs/msccl.md, "Server
 * fabrics"), at the engine's K or, where the runtime refuses that and no
 * --chunks was given, the most it takes (msccl_fit); stderr says what it
 * approximates and prices both. */
static int write_msccl(const struct schedule_print *p, const struct schedule_query *q,
		       struct fluid_answer *a, struct msccl_summary *ms, struct ofc_error *err)
{
	struct fabric_gpu_info gi;
	struct msccl_info mi;
	struct msccl_price price;
	struct cli_output out;
	struct ofc_error e = {0};

	if (cli_output_open(&out, p->output, err) < 0)
		return -1;
	bool fwd_over = false;

	if (msccl_try(p, q, a, out.f, &mi, &gi, &price, false, &fwd_over, &e) < 0) {
		cli_output_abort(&out);
		bool fits_some = q->collective == SCHED_ALLGATHER ||
				 q->collective == SCHED_REDUCE_SCATTER ||
				 q->collective == SCHED_ALLREDUCE;

		if (e.code != OFC_E_INPUT || q->chunks || a->rep.chunks <= 1 || !fits_some ||
		    msccl_fit(p, q, a, false, &e) < 0 ||
		    cli_output_open(&out, p->output, err) < 0) {
			if (e.code)
				*err = e;
			return -1;
		}
		if (msccl_try(p, q, a, out.f, &mi, &gi, &price, false, NULL, err) < 0) {
			cli_output_abort(&out);
			return -1;
		}
		fprintf(stderr,
			"ofc schedule: K = %u chunks, the most within %s (the engine's %u are "
			"over them): %.6g s against %.6g s\n",
			a->rep.chunks,
			p->msccl_runtime == MSCCL_LEGACY ? "the legacy MSCCL's limits"
							 : "msccl-executor-nccl's limits",
			a->chunks_engine, a->predicted, fluid_answer_time_at(a, a->chunks_engine));
	} else if (fwd_over && !q->chunks && a->rep.chunks > 1 &&
		   msccl_forward_lower(p, q, a, &out, &mi, &gi, &price, err) < 0) {
		cli_output_abort(&out);
		return -1;
	}
	char fwd[96];

	if (gi.forwarded)
		snprintf(fwd, sizeof(fwd),
			 "but across the network once a server (%zu sends forwarded inside it)",
			 gi.forwarded);
	else
		snprintf(fwd, sizeof(fwd), "from its source (none forwarded inside a server)");
	fprintf(stderr,
		"ofc schedule: MSCCL program on %u GPUs (verified on them): %u chunks per block "
		"(%s), %u channel%s, %u thread blocks, %zu operations, %zu XML nodes a rank at "
		"most (%s)\n"
		"ofc schedule: approximated: the hops through switches, memory and NICs are the "
		"runtime's, a part a relay copied is sent once per GPU, %s (docs/msccl.md)",
		gi.gpus, mi.chunks_per_block, mi.exact ? "exact" : "bounds rounded", mi.channels,
		mi.channels == 1 ? "" : "s", mi.thread_blocks, mi.operations, mi.most_nodes,
		p->msccl_runtime == MSCCL_LEGACY ? "the legacy MSCCL's limits"
						 : "msccl-executor-nccl's limits",
		fwd);
	if (gi.priced)
		fprintf(stderr,
			"; its steps' loads on the fabric take %.6g s/GB of block, the "
			"schedule's %.6g (x%.3f)\n",
			gi.program_s_per_gb, gi.schedule_s_per_gb,
			gi.program_s_per_gb / gi.schedule_s_per_gb);
	else
		fprintf(stderr, "; not priced (over 64 MiB of per-step loads)\n");
	msccl_price_write(stderr, a->net, &price, a->predicted, optimum_time(a));
	*ms = (struct msccl_summary){.runtime = p->msccl_runtime,
				     .chunks_engine = a->chunks_engine,
				     .mi = mi,
				     .forwarded = gi.forwarded,
				     .price = price,
				     .planned_s = a->predicted,
				     .optimum_s = optimum_time(a)};
	return cli_output_commit(&out, err);
}

/* The whole schedule to -o, made a step at a time from its period and
 * written as it is made (model W's 256 GPUs: 35 M transfers, which held
 * whole took 700 MB), or as held when it is whole already. */
static int write_output(const struct schedule_print *p, const struct schedule_query *q,
			struct fluid_answer *a, struct msccl_summary *ms, struct ofc_error *err)
{
	struct cli_output out;
	struct sched_stream st;
	bool made;
	int rc = 0;

	if (!p->output)
		return 0;
	if (p->format == FMT_MSCCL)
		return write_msccl(p, q, a, ms, err);
	if (cli_output_open(&out, p->output, err) < 0)
		return -1;
	made = fluid_answer_stream(a, &st);
	if (p->format == FMT_PB) {
		rc = made ? schedule_stream_write_pb(&st, out.f, err)
			  : schedule_write_pb(&a->s, out.f, err);
		if (rc == 0) {
			/* the vertices the transfers' node numbers stand for */
			struct arena ar = {0};

			rc = schedule_append_pb(schedule_vertices_msg(&ar, a->net), out.f, err);
			arena_free(&ar);
		}
	} else if (p->format == FMT_TEXT) {
		if (made)
			sched_stream_write_text(out.f, &st, UINT32_MAX);
		else
			sched_write_text(out.f, &a->s, UINT32_MAX);
		fprintf(out.f, "vertices:\n");
		for (uint32_t v = 0; v < a->net->nverts; v++)
			fprintf(out.f, "  %u %s\n", v, fluid_vertex_name(a->net, v));
	} else {
		struct json_writer w;

		jw_init(&w, out.f, true);
		jw_obj_begin(&w);
		if (made)
			sched_stream_write_json_members(&w, &st);
		else
			sched_write_json_members(&w, &a->s, true);
		jw_key(&w, "vertices");
		jw_arr_begin(&w);
		for (uint32_t v = 0; v < a->net->nverts; v++)
			jw_str(&w, fluid_vertex_name(a->net, v));
		jw_arr_end(&w);
		jw_obj_end(&w);
		jw_finish(&w);
	}
	if (rc == 0)
		return cli_output_commit(&out, err);
	cli_output_abort(&out);
	return -1;
}

int cli_schedule_fluid(const struct schedule_print *p, const struct schedule_query *q,
		       struct fluid_query *x)
{
	struct fluid_answer a;
	struct ofc_error err = {0};
	struct fluid_watch watch = {q->clock};
	int rc;

	if (q->clock && q->clock->progress) { /* stderr a terminal, not --json */
		x->progress = show_progress;
		x->progress_ctx = &watch;
	}
	rc = schedule_fluid(q, x, &a, &err);
	cli_progress_clear(q->clock);
	if (rc < 0) {
		char buf[1024];

		fluid_answer_free(&a);
		/* FILE:LINE:COL when the error has a place in the config */
		ofc_error_str(&err, buf, sizeof(buf));
		if (err.file[0] && err.line)
			fprintf(stderr, "%s\n", buf);
		else
			fprintf(stderr, "ofc %s: %s\n", p->cmd->name, err.msg);
		return err.code == OFC_E_RUNTIME ? 1 : 2;
	}
	struct msccl_summary ms;

	if (write_output(p, q, &a, &ms, &err) < 0) {
		fluid_answer_free(&a);
		if (err.code == OFC_E_INPUT)
			return cli_usage_error(p->cmd, "%s", err.msg);
		return cli_fail(&err);
	}
	if (p->json)
		write_json(cli_summary_stream(p), q, &a,
			   p->output && p->format == FMT_MSCCL ? &ms : NULL);
	else
		write_text(cli_summary_stream(p), q, &a);
	rc = a.verified ? 0 : 1;
	fluid_answer_free(&a);
	return rc;
}
