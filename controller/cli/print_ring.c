/* How `ofc optree` and `ofc schedule` on a config with a ring print an
 * all-gather on a WDM ring (controller/schedule): the summary of one
 * algorithm (text or JSON), or the table of all of them, and with -o the
 * schedule itself. */
#include "controller/cli/internal.h"
#include "optree/optree.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void fmt_radices(char *buf, size_t n, const struct optree_plan *p)
{
	size_t k = 0;

	buf[0] = 0;
	for (uint32_t i = 0; i < p->depth && k + 12 < n; i++)
		k += (size_t)snprintf(buf + k, n - k, "%s%u", i ? "x" : "", p->radix[i]);
}

/* One algorithm's summary: the schedule's message when one is held (its
 * figures and metrics, as through ofcd), else (--algo all, or it does not
 * apply) the figures the outcome has; its working the detail. */
static Ofc__V1__Schedule *summary_msg(struct arena *a, const struct schedule_result *q,
				      const struct schedule_outcome *o)
{
	Ofc__V1__Schedule *m;

	if (!q->compare && o->have) {
		m = schedule_header_msg(a, &o->s);
	} else {
		m = arena_alloc(a, sizeof(*m));
		ofc__v1__schedule__init(m);
		m->collective = (char *)sched_collective_name(q->collective);
		m->algorithm = (char *)optree_algo_name(o->ring.algo);
		m->has_nodes = 1;
		m->nodes = q->ring.nodes;
	}
	m->has_verified = 1;
	m->verified = o->applies && o->verified;
	if (o->applies) {
		m->has_num_steps = m->has_time_us = m->has_num_transfers = 1;
		m->num_steps = o->steps;
		m->time_us = o->ring.tm.time_us;
		m->num_transfers = o->ntransfers;
	}
	m->detail = schedule_ring_detail_msg(a, q, o, m);
	return m;
}

/* All-to-all: which RWA engine assigned the lightpaths, and its figures
 * (colours are wavelength-rounds: W of them make one step). */
static void write_rwa_text(FILE *f, const struct optree_result *res)
{
	const struct rwa_report *rr = &res->rwa;

	fprintf(f, "  lightpaths            engine %s: %s\n", rwa_engine_name(res->rwa_engine),
		rr->method);
	fprintf(f, "                        %u colours (lower bound %u", rr->wavelengths_used,
		rr->lower_bound);
	if (!isnan(rr->relaxation))
		fprintf(f, ", LP relaxation %.3f", rr->relaxation);
	fprintf(f, ")%s%s; %u ILP model%s, %.3f s\n", rr->optimal ? ": optimal" : "",
		rr->time_limit_hit ? "; time limit reached" : "", rr->ilp_solves,
		rr->ilp_solves == 1 ? "" : "s", rr->seconds);
}

static void write_text_one(FILE *f, const struct schedule_result *q,
			   const struct schedule_outcome *o, enum optree_algo a)
{
	const struct optree_result *res = &o->ring.res;
	const struct optree_ring *ring = &q->ring;
	char size[32], rate[32], d1[32], d2[32], rad[256];
	static const char *const title[] = {
	    [OPTREE_RING] = "ring",	     [OPTREE_NE] = "neighbor exchange",
	    [OPTREE_ONESTAGE] = "one-stage", [OPTREE_TREE] = "OpTree",
	    [OPTREE_WRHT] = "Wrht",
	};

	fmt_size(size, sizeof(size), ring->block_bytes);
	fmt_rate(rate, sizeof(rate), ring->rate);
	fmt_duration(d1, sizeof(d1), ring->mrr_delay);
	fmt_duration(d2, sizeof(d2), ring->oeo_delay);
	fprintf(f,
		"%s %s on a WDM ring%s%s: %u nodes, %u wavelengths x %u fibre%s per "
		"direction, %s blocks at %s\n",
		title[a], sched_collective_name(q->collective), q->ring_name ? " " : "",
		q->ring_name ? q->ring_name : "", ring->nodes, ring->wavelengths, ring->fibres,
		ring->fibres == 1 ? "" : "s", size, rate);
	if (!o->applies) {
		fprintf(f, "  not built: %s\n", o->why);
		return;
	}
	if (a == OPTREE_TREE) {
		fprintf(f,
			"  analytic optimum      depth k* = %u (Theorem 2; stationary point %.2f), "
			"m = N^(1/k) = %.2f\n",
			o->ring.an.depth, o->ring.an.k_real, o->ring.an.radix);
		fprintf(f,
			"                        S = N m (2k-1) / (8W) = %.2f steps "
			"(Theorem 1)\n",
			o->ring.an.steps);
		fmt_radices(rad, sizeof(rad), &res->plan);
		fprintf(f, "  realised plan         radices %s (%u stage%s, %s groups)\n", rad,
			res->plan.depth, res->plan.depth == 1 ? "" : "s",
			res->plan.uneven ? "uneven" : "even");
		fprintf(f, "    stage  radix  groups  group size   max load  lower bound  steps\n");
		for (uint32_t i = 0; i < res->nstages; i++) {
			const struct optree_stage *s = &res->stage[i];
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
		fprintf(f, "  analytic              N^2 / (8W) = %.2f steps (Lemma 1)%s\n",
			res->analytic_steps, q->collective == SCHED_ALLREDUCE ? ", twice" : "");
		if (res->rwa_engine)
			write_rwa_text(f, res);
	} else if (a == OPTREE_WRHT) {
		fprintf(f,
			"  groups                %u nodes (m-ary tree of %u stages, gather then "
			"broadcast)\n",
			res->wrht_radix, res->nstages);
	} else {
		fprintf(f, "  analytic              %.0f steps\n", res->analytic_steps);
	}
	int64_t gap = (int64_t)o->steps - (int64_t)res->lower_bound_steps;
	fprintf(f, "  total steps           %u (lower bound %u, gap %lld = %.1f %%", o->steps,
		res->lower_bound_steps, (long long)gap,
		res->lower_bound_steps ? 100.0 * (double)gap / res->lower_bound_steps : 0.0);
	if (isfinite(res->analytic_steps) && res->analytic_steps > 0)
		fprintf(f, "; analytic %.2f, %+.1f %%", res->analytic_steps,
			100.0 * (o->steps - res->analytic_steps) / res->analytic_steps);
	fprintf(f, ")\n");
	fprintf(f, "  max wavelengths used  %u of %u on any fibre in any step\n",
		o->ring.vr.max_wavelengths_used, ring->wavelengths);
	fprintf(f, "  add/drop limit        %u lightpaths per node per step: %s", ring->max_add,
		res->split_steps ? "" : "no step split\n");
	if (res->split_steps)
		fprintf(f, "steps split to respect it, %u more step%s\n", res->split_steps,
			res->split_steps == 1 ? "" : "s");
	fprintf(f,
		"  predicted time        T = %u x %.3f us + %u x %s retune + %u x %s O/E/O = "
		"%.2f us\n",
		o->steps, o->ring.tm.step_us, o->ring.tm.retune_stages, d1, res->nstages, d2,
		o->ring.tm.plain_us);
	if (q->overlap)
		fprintf(f,
			"  with --overlap        %.2f us: %u of %u stage retune%s hidden, %.2f us "
			"saved (%.3f %%)\n",
			o->ring.tm.time_us, o->ring.tm.hidden_stages, o->ring.tm.retune_stages,
			o->ring.tm.retune_stages == 1 ? "" : "s", o->ring.tm.saved_us,
			o->ring.tm.plain_us > 0 ? 100.0 * o->ring.tm.saved_us / o->ring.tm.plain_us
						: 0.0);
	if (o->is_reduced)
		fprintf(f,
			"  reduced               %zu program transfers: stage 1 whole, stage i "
			"repeated every n_(i-1) nodes (rotations); built in %.3f s, checked by "
			"symmetry in %.3f s\n",
			o->s.nxfers, o->gen_s, o->verify_s);
	else
		fprintf(f,
			"  MRR retuning          %u of %u steps change some ring; charging every "
			"one: %.2f us\n",
			o->ring.tm.retune_steps, o->steps, o->ring.tm.all_retunes_us);
	if (o->verified)
		fprintf(f, "  verified              yes (%zu transfers)\n", o->ntransfers);
	else
		fprintf(f, "  verified              NO: %s\n", o->verify_error);
}

static void write_table(FILE *f, const struct schedule_result *q)
{
	const struct optree_ring *ring = &q->ring;
	const struct schedule_outcome *o = q->out;
	size_t n = q->nout;
	char size[32];
	double best = INFINITY;

	fmt_size(size, sizeof(size), ring->block_bytes);
	fprintf(f,
		"%s on a WDM ring%s%s: %u nodes, %u wavelengths x %u fibre%s per "
		"direction, %s blocks\n\n",
		sched_collective_name(q->collective), q->ring_name ? " " : "",
		q->ring_name ? q->ring_name : "", ring->nodes, ring->wavelengths, ring->fibres,
		ring->fibres == 1 ? "" : "s", size);
	for (size_t i = 0; i < n; i++)
		if (o[i].applies && o[i].ring.tm.time_us < best)
			best = o[i].ring.tm.time_us;
	fprintf(f, "%-9s  %-7s  %-7s  %-9s  %-7s  %-5s  %-6s  %-14s  %-8s  %s\n", "algorithm",
		"stages", "steps", "analytic", "bound", "gap", "max wl", "time (us)", "vs best",
		"verified");
	for (size_t i = 0; i < n; i++) {
		const struct schedule_outcome *x = &o[i];

		if (!x->applies) {
			fprintf(f, "%-9s  not built: %s\n", optree_algo_name(o[i].ring.algo),
				x->why);
			continue;
		}
		char ratio[24] = "-";

		if (best > 0)
			snprintf(ratio, sizeof(ratio), "x%.2f", x->ring.tm.time_us / best);
		char an[16] = "-";

		if (isfinite(x->ring.res.analytic_steps))
			snprintf(an, sizeof(an), "%.2f", x->ring.res.analytic_steps);
		fprintf(f, "%-9s  %-7u  %-7u  %-9s  %-7u  %-5lld  %-6u  %-14.2f  %-8s  %s\n",
			optree_algo_name(o[i].ring.algo), x->ring.res.nstages, x->steps, an,
			x->ring.res.lower_bound_steps,
			(long long)x->steps - (long long)x->ring.res.lower_bound_steps,
			x->ring.vr.max_wavelengths_used, x->ring.tm.time_us, ratio,
			x->verified ? "yes" : "NO");
	}
	if (q->fluid.have) {
		fprintf(f,
			"\nfluid bound %.2f us (LP 4.2 on the ring at %u x %u x %.3g Gb/s per "
			"segment and direction, any hop count; bandwidth only)\n",
			q->fluid.cut_us > q->fluid.rstar_lower_us || !q->fluid.any_hops
			    ? q->fluid.cut_us
			    : q->fluid.rstar_lower_us,
			ring->fibres, ring->wavelengths, ring->rate / 1e9);
		for (size_t i = 0; i < n; i++)
			if (o[i].applies)
				fprintf(f, "  %-9s x%.3f of it%s\n",
					optree_algo_name(o[i].ring.algo),
					o[i].ring.tm.time_us / o[i].fluid_bound_us,
					o[i].below_fluid ? "  BELOW THE fluid bound: a bug" : "");
	} else if (q->fluid.why[0]) {
		fprintf(f, "\n%s\n", q->fluid.why);
	}
	for (size_t i = 0; i < n; i++)
		if (o[i].applies && o[i].ring.algo == OPTREE_TREE) {
			char rad[256];

			fmt_radices(rad, sizeof(rad), &o[i].ring.res.plan);
			fprintf(f, "\noptree radices %s; analytic depth %u (k = %.2f)\n", rad,
				o[i].ring.an.depth, o[i].ring.an.k_real);
		}
	for (size_t i = 0; i < n; i++)
		if (o[i].applies && o[i].ring.tm.time_us > 0 && best > 0 &&
		    o[i].ring.algo != OPTREE_TREE)
			for (size_t j = 0; j < n; j++)
				if (o[j].applies && o[j].ring.algo == OPTREE_TREE) {
					double d = 100.0 * (1 - o[j].ring.tm.time_us /
								    o[i].ring.tm.time_us);

					fprintf(f, "optree takes %.2f %% %s time than %s\n",
						fabs(d), d >= 0 ? "less" : "more",
						optree_algo_name(o[i].ring.algo));
				}
}

int print_ring(const struct schedule_print *p, const struct schedule_result *r)
{
	struct ofc_error err = {0};
	FILE *out = cli_summary_stream(p);
	int rc = 0;

	if (p->json) {
		/* the summary's one shape (schedule_summary_json), --algo all's
		 * a list of them */
		struct arena a = {0};
		struct json_writer w;

		jw_init(&w, out, true);
		if (r->compare)
			jw_arr_begin(&w);
		for (size_t i = 0; i < r->nout; i++)
			schedule_summary_json(&w, summary_msg(&a, r, &r->out[i]));
		if (r->compare)
			jw_arr_end(&w);
		jw_finish(&w);
		arena_free(&a);
	} else if (r->compare) {
		write_table(out, r);
	} else {
		write_text_one(out, r, r->main, r->main->ring.algo);
	}
	fflush(out);

	if (!r->compare && p->output && r->main->is_reduced) {
		fprintf(stderr,
			"ofc %s: -o: a reduced ring schedule is not written (the program "
			"without its periods would read as the whole schedule)\n",
			p->cmd->name);
		rc = 1;
	} else if (!r->compare && cli_write_schedule(p, &r->main->s, r, &err) < 0)
		rc = cli_fail(&err);
	for (size_t i = 0; i < r->nout; i++)
		if (r->out[i].applies && !r->out[i].verified) {
			fprintf(stderr, "ofc %s: the %s schedule failed verification: %s\n",
				p->cmd->name, optree_algo_name(r->out[i].ring.algo),
				r->out[i].verify_error);
			rc = 1;
		}
	return rc;
}
