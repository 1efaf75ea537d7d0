/* The workload's schedule, in the planner process (planner_serve.c hands
 * it the job ofcd's planner.c sends): computed in the background for a new
 * config, or re-planned after a failure, on the fabric with the failures
 * in effect. An all-to-all's re-plan warm-starts its degraded MCF from the
 * healthy run ofcd kept (a packed KeptRun: ofcd holds the bytes, this
 * process alone unpacks them); a healthy run is kept the same way, packed
 * into the answer. Why serialised rather than a planner that lives as
 * long as the config: the kept solution (1.2 MiB on genkautz:1024,4)
 * costs a copy per re-plan, and in exchange a planner that crashes or is
 * killed loses nothing ofcd keeps, any planner answers any re-plan, and
 * no process waits at rest for a failure that may never come. */
#include "controller/export/export.h"
#include "controller/ofcd/internal.h"
#include "proto/planner.pb-c.h"

#include <stdlib.h>
#include <string.h>

/* What the computation came to, before it is packed as a PlannerReplan. */
struct replan_out {
	uint8_t *sched; /* packed ofc.v1.Schedule summary, NULL: none */
	size_t sched_len;
	uint8_t *full; /* GetSchedule's answer, NULL: full_why says why not */
	size_t full_len;
	char *full_why;
	uint8_t *kept; /* a packed KeptRun, NULL: kept_why says why not */
	size_t kept_len, kept_bytes;
	char kept_why[240];
	bool ok;
	double compute_s, gen_s, verify_s, summary_s;
};

/* What an all-to-all re-plan's MCF started from and took, for the event. */
static void replan_mcf(struct strbuf *msg, const struct schedule_result *r,
		       const struct schedule_kept *kept, const char *kept_why,
		       const struct fabcfg *pub)
{
	const struct schedule_outcome *o = r->main;

	if (!o->have_mcf || !pub->nfailed)
		return;
	if (r->used_kept && o->mcf.warm_started)
		sb_printf(msg, "; warm-started from the kept healthy MCF solution (%.1f MiB)",
			  kept ? kept->bytes / 1048576.0 : 0);
	else if (o->mcf.warm_started)
		sb_printf(msg,
			  "; warm-started from the healthy graph's MCF, solved again "
			  "(%.3f s)",
			  o->healthy_mcf_s);
	else
		sb_printf(msg, "; MCF not warm-started");
	if (o->mcf.repaired)
		sb_printf(msg, "; the healthy flow rerouted around the lost links%s",
			  o->mcf.optimal ? ", proven optimal" : "");
	if (!r->used_kept && kept_why && kept_why[0])
		sb_printf(msg, " (none kept: %s)", kept_why);
	sb_printf(msg, "; degraded MCF %.3f s (column generation %.3f s), theta %.9g",
		  o->mcf.seconds, o->mcf.solve_seconds, o->mcf.theta);
	if (o->mcf.optimal)
		sb_printf(msg, ", optimal");
	else
		sb_printf(msg, ", within %.2f%% of the optimum (%s)", 100 * o->mcf.gap,
			  o->mcf.stop == MCF_STOP_TIME ? "stopped at the time limit"
			  : o->mcf.stop == MCF_STOP_LP ? "the LP solver stalled"
						       : "iteration cap");
}

/* GetSchedule's whole answer for the workload, as ofcd_run_schedule (schedule_job.c)
 * builds it, packed without an id (the loop appends one: protobuf merges
 * concatenated messages, and the schedule appears once), when it fits a
 * frame with room for the id. */
static void full_answer(const struct schedule_result *r, uint32_t max_frame, struct replan_out *out)
{
	const struct schedule *s = &r->main->s;
	Ofc__V1__Response resp = OFC__V1__RESPONSE__INIT;
	struct arena a = {0};
	char lim[32];

	fmt_size(lim, sizeof(lim), max_frame);
	if ((double)s->nxfers * MIN_TRANSFER_BYTES > max_frame) {
		out->full_why =
		    xasprintf("the %s schedule (%zu transfers in %u steps) does not fit "
			      "in a frame of %s: " ASK_SUMMARY ", or run ofcd "
			      "with a larger --max-frame",
			      s->algorithm, s->nxfers, s->nsteps, lim);
		return;
	}
	Ofc__V1__Schedule *h = schedule_header_msg(&a, s), *x = schedule_extra_msg(&a, r);

	schedule_msg_summary(h, x);
	h->n_links = x->n_links;
	h->links = x->links;
	h->n_steps = s->nsteps;
	h->steps = arena_array(&a, s->nsteps, sizeof(*h->steps));
	for (uint32_t t = 0; t < s->nsteps; t++)
		h->steps[t] = schedule_step_msg(&a, s, t)->steps[0];
	resp.has_status = 1;
	resp.status = OFC__V1__STATUS__STATUS_OK;
	resp.message = arena_printf(&a,
				    "%s %s on %s: %u steps, %.6g us, verified (the workload's "
				    "schedule as ofcd keeps it, not computed again)",
				    s->algorithm, sched_collective_name(s->collective), s->topology,
				    s->nsteps, s->time_us);
	resp.body_case = OFC__V1__RESPONSE__BODY_SCHEDULE;
	resp.schedule = h;
	out->full_len = protobuf_c_message_get_packed_size(&resp.base);
	/* 16: a packed Response{id} */
	if (out->full_len + 16 > max_frame) {
		out->full_len = 0;
		out->full_why =
		    xasprintf("the %s schedule does not fit in a frame of %s: " ASK_SUMMARY
			      ", or run ofcd with a larger --max-frame",
			      s->algorithm, lim);
	} else {
		out->full = xmalloc(out->full_len + 1);
		protobuf_c_message_pack(&resp.base, out->full);
	}
	arena_free(&a);
}

static void compute(const struct fabcfg *pub, const struct schedule_kept *kept,
		    const char *kept_why, bool keep, double t0, const char *done,
		    uint32_t max_frame, struct strbuf *msg, struct replan_out *out)
{
	/* The workload's; a config without collectives gets an allgather of
	 * 1 MiB, so watchers still see what survives. */
	struct schedule_query q = {
	    .fabric = pub->f,
	    .collective = pub->coll ? pub->coll : SCHED_ALLGATHER,
	    .size = pub->size		   ? pub->size
		    : pub->f->ncollectives ? 0
					   : 1u << 20,
	    .lowering = workload_lowering(pub->f, NULL, pub->coll),
	    /* The healthy config's kept MCF run (all-to-all): the degraded MCF
	     * starts from it, the healthy graph is not solved again. */
	    .kept = kept && kept->warm ? kept : NULL,
	    .keep_warm = keep,
	    .max_memory = pub->max_memory,
	};
	struct schedule_result r;
	struct ofc_error err = {0};

	/* The degraded MCF within 10 s of the failure; the message
	 * gives the gap it stopped at (the healthy run, when one is solved,
	 * keeps the default limit: pipeline.c). */
	if (pub->nfailed && pub->coll == SCHED_ALLTOALL)
		q.time_limit = REPLAN_MCF_SECONDS;
	/* Any other collective kept as structure where it can be (the
	 * healthy reduced program, and under failures a patch of what they
	 * change), as the state's schedule is: a failed port at 8,192 hosts
	 * is then milliseconds, not 134 M transfers. Else explicit. */
	double tc = now_seconds();
	struct ofc_error serr = {0};
	bool tried = q.collective != SCHED_ALLTOALL;
	bool structured =
	    tried && state_schedule_structured(pub, NULL, q.collective, q.size, &r, &serr) == 0;
	if (!structured &&
	    (schedule_compute(&q, &r, NULL, &err) < 0 || schedule_check(&r, &err) < 0)) {
		/* With failures in effect the structured run is `ofc schedule
		 * FILE`'s, whose refusal says everything tried (BFB's explicit
		 * estimate, why its structure was not kept, Swing's detours);
		 * the explicit one's would give the estimate alone. */
		bool failed = pub->nfailed || pub->f->degraded;
		sb_printf(msg, "no schedule: %s", tried && failed ? serr.msg : err.msg);
		return;
	}
	const struct schedule *s = &r.main->s;
	struct arena a = {0};

	out->compute_s = now_seconds() - tc;
	out->gen_s = r.main->gen_s;
	out->verify_s = r.main->verify_s;
	tc = now_seconds();

	struct schedule_kept taken;

	if (keep && schedule_kept_take(&taken, &r, KEPT_MAX_BYTES, &err) < 0) {
		snprintf(out->kept_why, sizeof(out->kept_why), "%.200s", err.msg);
		ofc_error_clear(&err);
	} else if (keep) {
		out->kept = schedule_kept_pack(&taken, &out->kept_len);
		out->kept_bytes = taken.bytes;
		schedule_kept_free(&taken);
	}
	if (s->verified) {
		/* as the state's schedule summarises it (a reduced one says so) */
		Ofc__V1__Schedule *h = snapshot_schedule_summary(&a, &r);

		out->sched_len = protobuf_c_message_get_packed_size(&h->base);
		out->sched = xmalloc(out->sched_len + 1);
		protobuf_c_message_pack(&h->base, out->sched);
		out->ok = true;
		if (max_frame)
			full_answer(&r, max_frame, out);
		out->summary_s = now_seconds() - tc;
		/* (a long list of failures is in the event's and the state's
		 * failed items; named here too, it left the answer no room for
		 * the schedule) */
		const char *without = strstr(s->topology, " without ");
		int tlen = without && strlen(s->topology) > 120 ? (int)(without - s->topology)
								: (int)strlen(s->topology);
		sb_printf(msg, "%s %s on %.*s", s->algorithm, sched_collective_name(s->collective),
			  tlen, s->topology);
		if (tlen < (int)strlen(s->topology))
			sb_printf(msg, " without the failures in effect");
		sb_printf(msg, ": %u steps, %.6g us", s->nsteps, s->time_us);
		if (r.main->healthy_us > 0 && pub->nfailed)
			sb_printf(msg, " (%+.1f%% vs healthy)",
				  100.0 * (s->time_us / r.main->healthy_us - 1));
		char form[STATE_FORM_LEN];

		state_schedule_form(&r, form, sizeof(form));
		sb_printf(msg, ", verified%s, %s in %.3f s", form, done, now_seconds() - t0);
		replan_mcf(msg, &r, kept, kept_why, pub);
	} else {
		sb_printf(msg, "the %s schedule failed verification: %s", s->algorithm,
			  r.main->verify_error);
	}
	arena_free(&a);
	schedule_result_free(&r);
}

uint8_t *planner_replan_compute(const struct fabcfg *cfg, const Ofc__V1__PlannerJob *m, size_t *len)
{
	Ofc__V1__PlannerReplan a = OFC__V1__PLANNER_REPLAN__INIT;
	struct schedule_kept kept = {0};
	struct ofc_error err = {0};
	struct strbuf msg = STRBUF_INIT;
	struct replan_out out = {0};
	char kept_why[sizeof(out.kept_why) + sizeof(err.msg)];
	double t0 = now_seconds() - (m->elapsed > 0 ? m->elapsed : 0);
	uint8_t *buf;

	snprintf(kept_why, sizeof(kept_why), "%s", m->kept_why ? m->kept_why : "");
	if (m->has_kept && schedule_kept_unpack(m->kept.data, m->kept.len, &kept, &err) < 0)
		snprintf(kept_why, sizeof(kept_why), "%s", err.msg);
	compute(cfg, kept.warm ? &kept : NULL, kept_why, m->keep, t0,
		m->done ? m->done : "computed", m->max_frame, &msg, &out);
	schedule_kept_free(&kept);
	a.has_schedule = out.sched != NULL;
	a.schedule.data = out.sched;
	a.schedule.len = out.sched_len;
	a.has_full = out.full != NULL;
	a.full.data = out.full;
	a.full.len = out.full_len;
	a.full_why = out.full_why;
	a.has_kept = out.kept != NULL;
	a.kept.data = out.kept;
	a.kept.len = out.kept_len;
	a.kept_why = out.kept_why;
	a.has_ok = a.has_kept_bytes = a.has_compute_s = a.has_gen_s = 1;
	a.ok = out.ok;
	a.kept_bytes = out.kept_bytes;
	a.message = msg.buf ? msg.buf : "";
	a.compute_s = out.compute_s;
	a.gen_s = out.gen_s;
	a.has_verify_s = a.has_summary_s = 1;
	a.verify_s = out.verify_s;
	a.summary_s = out.summary_s;
	*len = protobuf_c_message_get_packed_size(&a.base);
	buf = xmalloc(*len ? *len : 1);
	protobuf_c_message_pack(&a.base, buf);
	free(out.sched);
	free(out.full);
	free(out.full_why);
	free(out.kept);
	sb_free(&msg);
	return buf;
}
