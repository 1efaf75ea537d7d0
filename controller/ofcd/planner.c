/* The workload's schedule, off the start path. An all-to-all
 * workload's schedule is the fluid MCF lowered to paths: 52 s on
 * genkautz:1024,4, which ofcd used to compute in its start-up snapshot
 * before it bound its sockets. Now the snapshot leaves it out, the daemon
 * answers at once, and a planner thread has it computed on a reference to
 * the published config; the mutation worker installs the result (JOB_PLANNER:
 * the plan, the kept MCF solution, a snapshot) and watchers get a
 * KIND_SCHEDULE_REPLANNED event. The same query serves the re-plans after
 * a failure (planner_compute, called by ofcd_replan on the mutation worker).
 *
 * Either is computed in a planner process of its own (planner_replan.c),
 * not in the process that holds the lease: an engine that outgrows its
 * estimate costs a planner, and one that ends before it answers a second
 * one, then a message saying why. The healthy MCF run a re-plan starts
 * from crosses packed (a KeptRun): ofcd keeps the bytes with the config.
 *
 * Why a detached thread of its own: a thread the daemon never joins lets a
 * stop or a new config go on at once. Letting go (planner_abandon) kills
 * the thread's planner process, so the solve stops burning a core and
 * holding its memory at once; the thread reaps it and drops its result
 * when it finds the daemon gone (planner_task.d NULL, under
 * planner_task.mu, which the daemon takes to let go, so the thread never
 * posts to a freed daemon). */
#include "controller/ofcd/worker.h"
#include "proto/planner.pb-c.h"

#include <stdlib.h>
#include <string.h>

/* ---- the query, in a planner process ------------------------------------------------- */

/* How long the workload's schedule may take its planner: no request's
 * time limit applies to it (52 s on genkautz:1024,4), so ofcd's longest
 * wait. */
#define REPLAN_PLANNER_WAIT 86400.0
/* The most its answer may hold: GetSchedule's whole answer (at most the
 * frame), the kept run, a summary and the message. */
#define REPLAN_ANSWER_MAX(max_frame) ((size_t)(max_frame) + KEPT_MAX_BYTES + ((size_t)1 << 20))

static bool task_wanted(void *ctx, pid_t pid)
{
	struct planner_task *t = ctx;
	bool on = true;

	if (!t)
		return true;
	pthread_mutex_lock(&t->mu);
	on = t->d != NULL;
	t->pid = on ? pid : 0;
	pthread_mutex_unlock(&t->mu);
	return on;
}

static uint8_t *job_pack(const struct fabcfg *pub, const struct kept_run *kept,
			 const char *kept_why, bool keep, double t0, const char *done,
			 uint32_t max_frame, size_t *len)
{
	Ofc__V1__PlannerJob m = OFC__V1__PLANNER_JOB__INIT;
	uint8_t *buf;

	m.has_fabric = m.has_nfailed = m.has_collective = m.has_size_bytes = 1;
	m.fabric.data = planner_fabric_pack(pub, &m.fabric.len);
	m.nfailed = pub->nfailed;
	m.collective = (uint32_t)pub->coll;
	m.size_bytes = pub->size;
	m.has_max_memory = m.has_max_frame = m.has_replan = m.has_keep = m.has_elapsed = 1;
	m.max_memory = pub->max_memory;
	m.max_frame = max_frame;
	m.replan = true;
	m.keep = keep;
	m.done = (char *)done;
	m.elapsed = now_seconds() - t0;
	if (kept && kept->buf) {
		m.has_kept = 1;
		m.kept.data = kept->buf;
		m.kept.len = kept->len;
	}
	m.kept_why = (char *)(kept_why ? kept_why : "");
	*len = protobuf_c_message_get_packed_size(&m.base);
	buf = xmalloc(*len ? *len : 1);
	protobuf_c_message_pack(&m.base, buf);
	free(m.fabric.data);
	return buf;
}

static uint8_t *copy(const ProtobufCBinaryData *b, size_t *len)
{
	uint8_t *p = xmalloc(b->len + 1);

	memcpy(p, b->data, b->len);
	*len = b->len;
	return p;
}

/* The planner's answer into msg and out; -1 with why when it is not one. */
static int take(const uint8_t *buf, size_t len, struct strbuf *msg, struct planner_out *out,
		char *why, size_t n)
{
	Ofc__V1__PlannerReplan *a = ofc__v1__planner_replan__unpack(NULL, len, buf);

	if (!a || !a->message) {
		if (a)
			ofc__v1__planner_replan__free_unpacked(a, NULL);
		snprintf(why, n, "answered what is not the workload's schedule");
		return -1;
	}
	sb_printf(msg, "%s", a->message);
	if (a->has_schedule)
		out->sched = copy(&a->schedule, &out->sched_len);
	if (a->has_full)
		out->full = copy(&a->full, &out->full_len);
	out->full_why = a->full_why ? xstrdup(a->full_why) : NULL;
	if (a->has_kept) {
		out->kept.buf = copy(&a->kept, &out->kept.len);
		out->kept.bytes = a->kept_bytes;
	}
	snprintf(out->kept_why, sizeof(out->kept_why), "%s", a->kept_why ? a->kept_why : "");
	out->ok = a->ok;
	out->split = (struct planner_split){a->compute_s, a->gen_s, a->verify_s, a->summary_s};
	ofc__v1__planner_replan__free_unpacked(a, NULL);
	return 0;
}

void planner_compute(const struct planner_how *h, struct planner_task *t, const struct fabcfg *pub,
		     const struct kept_run *kept, const char *kept_why, bool keep, double t0,
		     const char *done, uint32_t max_frame, struct strbuf *msg,
		     struct planner_out *out)
{
	char why[200], first[200] = "";
	size_t len, got;
	uint8_t *job = job_pack(pub, kept, kept_why, keep, t0, done, max_frame, &len), *ans;

	/* One that ends before it answers (crashed, out of its memory,
	 * killed from outside) costs one more, and a second the message. */
	for (int attempt = 0; attempt < 2; attempt++) {
		int rc = planner_ask(h, job, len, REPLAN_ANSWER_MAX(max_frame), REPLAN_PLANNER_WAIT,
				     task_wanted, t, &ans, &got, why, sizeof(why));

		if (rc == 0)
			rc = take(ans, got, msg, out, why, sizeof(why));
		free(ans);
		if (rc >= 0)
			break;
		if (attempt == 0) {
			snprintf(first, sizeof(first), "%s", why);
			continue;
		}
		sb_printf(msg,
			  "no schedule: the planner process computing it %s (the one before it "
			  "%s)",
			  why, first);
	}
	free(job);
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

	ofc_thread_name("ofcd-workload");
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
	planner_compute(&t->how, t, c, NULL, NULL, !c->nfailed && !c->f->degraded, t0, "computed",
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
	planner_how(d, &t->how);
	t->how.role = "workload";
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
	} else if (!pub->nfailed && pub->plan && pub->kept.buf) {
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
			    !pub->kept.buf && !atomic_load(&pub->planned);
		bool from = pub != d->w->cfg && pub->coll == d->w->cfg->coll &&
			    pub->size == d->w->cfg->size && d->w->cfg->kept.buf;
		struct planner_out out = {0};

		/* The whole answer is kept for an all-to-all only (GetSchedule
		 * answers the workload from it: is_workload in read_requests.c). */
		double tp = now_seconds();
		struct planner_how h;

		planner_how(d, &h);
		h.role = "workload";
		planner_compute(&h, NULL, pub, from ? &d->w->cfg->kept : NULL, d->w->cfg->kept_why,
				keep, t0, "re-planned",
				pub->coll == SCHED_ALLTOALL ? d->o.max_frame : 0, &msg, &out);
		planner_how_free(&h);
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
	j->snap = snapshot_build(d, d->state_dir, d->w->ctl, pub, why, sizeof(why));
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
	if (t->out.kept.buf) {
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
	j->snap = snapshot_build(d, d->state_dir, d->w->ctl, c, why, sizeof(why));
	held_state(d, j->snap);
	if (why[0])
		ofcd_log(d, OFCD_LOG_WARNING, "%s", why);
	ofcd_post_note(d, ev);
}
