/* The workload's schedule, off the start path. An all-to-all
 * workload's schedule is the fluid MCF lowered to paths: 52 s on
 * genkautz:1024,4, which ofcd used to compute in its start-up snapshot
 * before it bound its sockets. Now the snapshot leaves it out, the daemon
 * answers at once, and a planner thread computes it on a reference to the
 * published config; the mutation worker installs the result (JOB_PLANNER: the
 * plan, the kept MCF solution, a snapshot) and watchers get a
 * KIND_SCHEDULE_REPLANNED event. The same query serves the re-plans after
 * a failure (planner_compute, called by ofcd_replan on the mutation worker).
 *
 * Why a detached thread of its own: a thread the daemon never joins lets a
 * stop or a new config go on at once. Letting go (planner_abandon) also sets
 * planner_task.cancel, which the MCF looks at where it looks at its time
 * limit, and lp_solve between pivots (mcf_opts.cancel): the thread stops
 * burning a core and holding the solve's memory within moments instead of
 * at the solve's end (52 s). It is still not joined: what does not look at
 * the flag (the MCF's setup and routes, a lowering or verification under
 * way) may take seconds more on a large fabric. The thread drops its
 * result when it finds the daemon gone (planner_task.d NULL, under
 * planner_task.mu, which the daemon takes to let go, so the thread never
 * posts to a freed daemon); the flag lives in the task, which the thread
 * holds a reference to, so the daemon sets it and goes. */
#include "alltoall/alltoall.h"
#include "controller/ofcd/worker.h"

#include <stdlib.h>
#include <string.h>

/* ---- the query ----------------------------------------------------------------------- */

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
static void full_answer(const struct schedule_result *r, uint32_t max_frame,
			struct planner_out *out)
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

void planner_keep_full(struct fabcfg *cfg, struct planner_out *out)
{
	cfg->plan_full = out->full;
	cfg->plan_full_len = out->full_len;
	cfg->plan_full_why = out->full_why;
	out->full = NULL;
	out->full_len = 0;
	out->full_why = NULL;
}

void planner_compute(const struct fabcfg *pub, const struct schedule_kept *kept,
		     const char *kept_why, bool keep, const atomic_bool *cancel, double t0,
		     const char *done, uint32_t max_frame, struct strbuf *msg,
		     struct planner_out *out)
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
	    .cancel = cancel,
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

	out->split.compute_s = now_seconds() - tc;
	out->split.gen_s = r.main->gen_s;
	out->split.verify_s = r.main->verify_s;
	tc = now_seconds();

	if (keep && schedule_kept_take(&out->kept, &r, KEPT_MAX_BYTES, &err) < 0) {
		snprintf(out->kept_why, sizeof(out->kept_why), "%.200s", err.msg);
		ofc_error_clear(&err);
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
		out->split.summary_s = now_seconds() - tc;
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

bool planner_needed(struct fabcfg *cfg)
{
	return cfg && cfg->coll == SCHED_ALLTOALL && cfg->f->graph && !cfg->f->nrings &&
	       !cfg->no_schedule && !atomic_load_explicit(&cfg->planned, memory_order_acquire);
}

/* ---- the thread ---------------------------------------------------------------------- */

static void *planner_thread(void *arg)
{
	struct planner_task *t = arg;
	struct fabcfg *c = t->cfg;
	double t0 = now_seconds();
	struct strbuf msg = STRBUF_INIT, list = STRBUF_INIT;

	/* The event says what an ofcd_replan event says: the failures in
	 * effect (a restart keeps them), then the schedule. */
	for (uint32_t i = 0; i < c->nfailed && i < 8; i++)
		sb_printf(&list, "%s%s", i ? ", " : "", c->failed[i]);
	if (c->nfailed > 8)
		sb_printf(&list, " and %u more", c->nfailed - 8);
	sb_printf(&msg, "the workload's schedule, computed in the background; ");
	if (c->nfailed)
		sb_printf(&msg, "%u failure%s in effect (%s); ", c->nfailed,
			  c->nfailed == 1 ? "" : "s", list.buf);
	else
		sb_printf(&msg, "no failure in effect; ");
	/* A healthy graph's run is kept for the re-plans; with failures in
	 * effect (from before a restart) the pipeline solves the healthy
	 * graph itself, and nothing is kept until they are restored. */
	planner_compute(c, NULL, NULL, !c->nfailed && !c->f->degraded, &t->cancel, t0, "computed",
			t->max_frame, &msg, &t->out);
	t->out.message = sb_detach(&msg);
	sb_free(&list);

	pthread_mutex_lock(&t->mu);
	if (t->d) {
		/* Posted under mu: the daemon lets go under mu too, so it is
		 * still there. The note holds its own reference. */
		struct note *n = xcalloc(1, sizeof(*n));

		t->refs++;
		n->planner = t;
		ofcd_note(t->d, n);
	}
	pthread_mutex_unlock(&t->mu);
	planner_unref(t);
	return NULL;
}

struct planner_task *planner_start(struct ofcd *d, struct fabcfg *cfg)
{
	struct planner_task *t = xcalloc(1, sizeof(*t));
	pthread_attr_t attr;
	pthread_t th;

	pthread_mutex_init(&t->mu, NULL);
	t->refs = 2; /* the thread's and the daemon's */
	t->d = d;
	t->cfg = fabcfg_ref(cfg);
	t->since_ms = unix_ms();
	t->max_frame = d->o.max_frame;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&th, &attr, planner_thread, t) != 0) {
		pthread_attr_destroy(&attr);
		t->refs = 1;
		planner_unref(t);
		return NULL;
	}
	pthread_attr_destroy(&attr);
	return t;
}

/* ---- re-plans and the planner's result, on the mutation worker ------------------------ */

/* Publish d->w->cfg with the failures now in effect (failures.c): the config
 * and the snapshot travel on j to the loop, followed by a
 * KIND_SCHEDULE_REPLANNED event with the workload's schedule on the
 * surviving graph, verified (summary: GetSchedule has the steps); j->share,
 * the config whose schedule the other replicas are to read from the store
 * (the caller writes it). sentence gets what happened, for the answer. */
void ofcd_replan(struct ofcd *d, struct job *j, const char *cause, char *sentence, size_t n)
{
	double t0 = now_seconds();
	struct fabcfg *pub = failures_publish(d);
	struct note *ev = xcalloc(1, sizeof(*ev));
	struct strbuf list = STRBUF_INIT, msg = STRBUF_INIT;
	char why[400];
	/* where the wall goes, for the debug log */
	double t_pub = now_seconds() - t0, t_plan = 0, t_snap;
	struct planner_split split = {0};

	fabcfg_unref(d->w->pub);
	d->w->pub = pub;
	fabcfg_unref(j->new_cfg);
	j->new_cfg = fabcfg_ref(pub);
	for (uint32_t i = 0; i < pub->nfailed && i < 8; i++)
		sb_printf(&list, "%s%s", i ? ", " : "", pub->failed[i]);
	if (pub->nfailed > 8)
		sb_printf(&list, " and %u more", pub->nfailed - 8);
	sb_printf(&msg, "%s; ", cause);
	if (pub->nfailed)
		sb_printf(&msg, "%u failure%s in effect (%s); ", pub->nfailed,
			  pub->nfailed == 1 ? "" : "s", list.buf);
	else
		sb_printf(&msg, "no failure in effect; ");
	if (pub->no_schedule) {
		sb_printf(&msg, "%s", pub->no_schedule);
	} else if (!pub->f->graph || pub->f->nrings) {
		sb_printf(&msg, "fabric '%s' has no direct-connect topology to re-plan on",
			  pub->f->name);
	} else if (!pub->nfailed && pub->plan && pub->kept.warm) {
		/* Back on the healthy graph: the schedule its snapshot
		 * computed and kept is the answer (not solved again). */
		Ofc__V1__Schedule *h = ofc__v1__schedule__unpack(NULL, pub->plan_len, pub->plan);

		ev->sched = xmalloc(pub->plan_len + 1);
		memcpy(ev->sched, pub->plan, pub->plan_len);
		ev->sched_len = pub->plan_len;
		if (h)
			sb_printf(&msg, "%s %s on %s: %u steps, %.6g us, verified, ", h->algorithm,
				  h->collective, h->topology ? h->topology : "?", h->num_steps,
				  h->time_us);
		sb_printf(&msg, "the kept healthy schedule, re-planned in %.3f s",
			  now_seconds() - t0);
		if (h)
			ofc__v1__schedule__free_unpacked(h, NULL);
	} else {
		/* Back on the healthy graph with nothing kept yet (failures
		 * were in effect since the start): keep this run. */
		bool keep = !pub->nfailed && pub->coll == SCHED_ALLTOALL && !pub->f->degraded &&
			    !pub->kept.warm && !atomic_load(&pub->planned);
		bool from = pub != d->w->cfg && pub->coll == d->w->cfg->coll &&
			    pub->size == d->w->cfg->size && d->w->cfg->kept.warm;
		struct planner_out out = {0};

		/* The whole answer is kept for an all-to-all only (GetSchedule
		 * answers the workload from it: is_workload in read_requests.c). */
		double tp = now_seconds();
		planner_compute(pub, from ? &d->w->cfg->kept : NULL, d->w->cfg->kept_why, keep,
				NULL, t0, "re-planned",
				pub->coll == SCHED_ALLTOALL ? d->o.max_frame : 0, &msg, &out);
		t_plan = now_seconds() - tp;
		split = out.split;
		if (keep) {
			pub->kept = out.kept;
			memset(&out.kept, 0, sizeof(out.kept));
			snprintf(pub->kept_why, sizeof(pub->kept_why), "%s", out.kept_why);
		}
		ev->sched = out.sched;
		ev->sched_len = out.sched_len;
		/* The snapshot's State.schedule is this one (same workload):
		 * not computed twice. */
		if (out.sched && pub->coll && !pub->plan && !atomic_load(&pub->planned)) {
			pub->plan = xmalloc(out.sched_len + 1);
			memcpy(pub->plan, out.sched, out.sched_len);
			pub->plan_len = out.sched_len;
			planner_keep_full(pub, &out);
		}
		out.sched = NULL;
		planner_out_free(&out);
	}
	/* Final for this config: GetSchedule may answer the workload from it,
	 * and a planner still computing it drops its result. */
	atomic_store_explicit(&pub->planned, true, memory_order_release);
	/* The other replicas show this answer instead of computing it again;
	 * written to the store by whoever called once its answer is out (the
	 * loop after a failure report's reply, the probe at once). */
	fabcfg_unref(j->share);
	j->share = fabcfg_ref(pub);
	snprintf(sentence, n, "%s", msg.buf);
	ev->kind = OFC__V1__EVENT__KIND__KIND_SCHEDULE_REPLANNED;
	ev->message = sb_detach(&msg);
	ev->failed = pub->nfailed ? xcalloc(pub->nfailed + 1, sizeof(char *)) : NULL;
	for (uint32_t i = 0; i < pub->nfailed; i++)
		ev->failed[i] = xstrdup(pub->failed[i]);
	ev->nfailed = pub->nfailed;
	ev->time_ms = unix_ms();
	snapshot_free(j->snap);
	t_snap = now_seconds();
	j->snap = snapshot_build(d->state_dir, d->w->ctl, pub, why, sizeof(why));
	held_state(d, j->snap);
	t_snap = now_seconds() - t_snap;
	if (why[0])
		ofcd_log(d, OFCD_LOG_WARNING, "%s", why);
	ofcd_post_note(d, ev);
	sb_free(&list);
	ofcd_log(d, OFCD_LOG_DEBUG,
		 "the re-plan's wall, %.3f s: failures published %.3f s, the schedule %.3f s "
		 "(computed and checked %.3f s: generated %.3f s, verified %.3f s; its summary "
		 "%.3f s), the snapshot %.3f s",
		 now_seconds() - t0, t_pub, t_plan, split.compute_s, split.gen_s, split.verify_s,
		 split.summary_s, t_snap);
}

void ofcd_run_planner(struct ofcd *d, struct job *j)
{
	struct planner_task *t = j->planner;
	struct fabcfg *c = t->cfg;
	char why[400];

	/* A re-plan computed it meanwhile (the hold ran out), or the config
	 * is no longer running: nothing to install. */
	if (atomic_load(&c->planned) || (c != d->w->pub && c != d->w->cfg)) {
		ofcd_log(d, OFCD_LOG_INFO,
			 "the workload's schedule computed in the background is not needed any "
			 "more (%s)",
			 atomic_load(&c->planned) ? "re-planned meanwhile" : "another config runs");
		return;
	}
	if (t->out.kept.warm) {
		c->kept = t->out.kept;
		memset(&t->out.kept, 0, sizeof(t->out.kept));
		ofcd_log(
		    d, OFCD_LOG_NOTICE,
		    "kept the healthy MCF solution (%.1f MiB) for the re-plans after a failure",
		    c->kept.bytes / 1048576.0);
	} else if (t->out.kept_why[0]) {
		ofcd_log(d, OFCD_LOG_NOTICE, "no healthy MCF solution kept: %s", t->out.kept_why);
	}
	snprintf(c->kept_why, sizeof(c->kept_why), "%s", t->out.kept_why);
	if (t->out.sched && !c->plan) {
		c->plan = xmalloc(t->out.sched_len + 1);
		memcpy(c->plan, t->out.sched, t->out.sched_len);
		c->plan_len = t->out.sched_len;
		planner_keep_full(c, &t->out);
	}
	atomic_store_explicit(&c->planned, true, memory_order_release);
	if (c != d->w->pub) {
		/* The healthy config while failures are in effect: kept for the
		 * next re-plan; what is published does not change. */
		ofcd_log(d, OFCD_LOG_NOTICE,
			 "kept the healthy schedule computed in the background");
		return;
	}
	struct note *ev = xcalloc(1, sizeof(*ev));

	ev->kind = OFC__V1__EVENT__KIND__KIND_SCHEDULE_REPLANNED;
	ev->message = xstrdup(t->out.message ? t->out.message : "");
	if (t->out.sched) {
		ev->sched = xmalloc(t->out.sched_len + 1);
		memcpy(ev->sched, t->out.sched, t->out.sched_len);
		ev->sched_len = t->out.sched_len;
	}
	ev->failed = c->nfailed ? xcalloc(c->nfailed + 1, sizeof(char *)) : NULL;
	for (uint32_t i = 0; i < c->nfailed; i++)
		ev->failed[i] = xstrdup(c->failed[i]);
	ev->nfailed = c->nfailed;
	ev->time_ms = unix_ms();
	j->snap = snapshot_build(d->state_dir, d->w->ctl, c, why, sizeof(why));
	held_state(d, j->snap);
	if (why[0])
		ofcd_log(d, OFCD_LOG_WARNING, "%s", why);
	ofcd_post_note(d, ev);
}
