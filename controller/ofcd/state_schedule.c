/* The state's schedule: the workload's schedule on the committed topology,
 * verified and priced, as State.schedule shows it (figures only).
 *
 * Off the commit's path: a snapshot leaves it out (snapshot.sched_want) and
 * the loop hands it to a thread of its own once the state is published, so
 * a commit's answer, the state's new generation and a replica's takeover
 * wait for none of it; watchers hear KIND_SCHEDULE_REPLANNED when it lands
 * (GetState shows schedule_computing_since_unix_ms meanwhile). BFB's
 * allreduce at 8,192 hosts is 134 M transfers: built here before the
 * commit's answer it took 21 s and 4 GB on every replica at once.
 *
 * Symmetry-reduced where the topology admits it (node 0's program and the
 * translation group, checked by the same symmetry: a Cayley family, as
 * `ofc schedule --reduced`): its figures are the explicit schedule's at a
 * small part of the cost. With failed links, ports or hosts in effect, BFB
 * keeps that structure: the healthy program and a patch of what the
 * failures change (a failed host's block dropped), checked without
 * expansion (sched_verify_patched): one failed port at 8,192 hosts was
 * 134 M transfers, 18 s and 7 GB in every replica. Else (another family,
 * another engine, a schedule longer than the healthy one) the explicit
 * schedule on the fabric, as before, and why goes to the log line.
 *
 * Who computes it: one ofcd, or the replica that leads, when it publishes
 * a state; a follower only when a client asks it for the state (its
 * state otherwise shows none). One computation at a time: a state
 * published while one runs waits for it (the last result is kept, keyed
 * by config and topology, so a snapshot rebuilt for another reason shows
 * it again without computing it). A schedule the verifier refuses is shown
 * with Schedule.verify_error and logged as a warning; none at all, with
 * State.schedule_error.
 *
 * Why a detached thread: as the planner's (planner.c), a stop or a new
 * state goes on at once; the thread drops its result when it finds the
 * daemon gone (task.d NULL under task.mu). */
#include "controller/export/export.h"
#include "controller/ofcd/conn.h"

#include <stdlib.h>
#include <string.h>

/* ---- the computation (its thread) ----------------------------------------------------- */

static const char *config_algorithm(const struct fabric *f, enum sched_collective coll)
{
	const struct collective *c = schedule_config_collective(f, coll);

	return c ? c->algorithm : NULL;
}

int state_schedule_structured(const struct fabcfg *cfg, const char *spec,
			      enum sched_collective coll, uint64_t size, struct schedule_result *r,
			      struct ofc_error *err)
{
	const struct fabric *f = cfg->f;
	bool failed = !spec && (cfg->nfailed || f->degraded);
	struct schedule_query q = {
	    .fabric = f,
	    /* (the config's graph asked by its spec, which takes no config's
	     * choice: the config's algorithm as `ofc schedule FILE` and the
	     * failures' re-plan take it) */
	    .algorithm = spec ? NULL : config_algorithm(f, coll),
	    .spec = spec		  ? spec
		    : f->graph && !failed ? f->graph->spec
					  : NULL,
	    .files = f->files,
	    .collective = coll,
	    .size = size,
	    .lowering = workload_lowering(f, spec, coll),
	    /* Failures in effect on the config's graph: the fabric's degraded
	     * graph, where BFB keeps the healthy program and patches what the
	     * failures change wherever `ofc schedule FILE` does (above 1,024
	     * nodes, or where the explicit schedule is over the memory limit:
	     * engine_bfb.c), so the state, the re-plan's event and GetSchedule
	     * show the schedule the CLI computes (failed hosts too); other
	     * engines get the explicit schedule there. */
	    .reduced = failed ? SCHEDULE_REDUCED_AUTO : SCHEDULE_REDUCED_ALWAYS,
	    .max_memory = cfg->max_memory,
	};

	if (!f->graph && !spec)
		return ofc_error_set(err, OFC_E_INPUT, "no direct-connect topology");
	if (failed && coll == SCHED_ALLTOALL)
		return ofc_error_set(err, OFC_E_INPUT,
				     "failures in effect are not alike at every node");
	if (schedule_compute(&q, r, NULL, err) < 0)
		return -1;
	return schedule_check(r, err);
}

/* As snapshot_build computed it before: explicit, on the fabric's ports
 * (or the committed topology's spec). */
static int compute_explicit(const struct state_sched_task *t, struct schedule_result *r,
			    struct ofc_error *err)
{
	const struct fabric *f = t->cfg->f;
	struct schedule_query q = {
	    .fabric = f,
	    .spec = t->spec,
	    .collective = t->cfg->coll,
	    .size = t->cfg->size,
	    .lowering = workload_lowering(f, t->spec, t->cfg->coll),
	    .max_memory = t->cfg->max_memory,
	};

	if (schedule_compute(&q, r, NULL, err) < 0)
		return -1;
	return schedule_check(r, err);
}

void state_schedule_form(const struct schedule_result *r, char *buf, size_t n)
{
	const struct schedule_outcome *o = r->main;
	const char *explicit = strstr(r->note, "explicit on the degraded graph: ");

	if (o->fallback_from)
		snprintf(
		    buf, n,
		    ", Swing around the failed links (the healthy %s%s, %zu transfers re-routed "
		    "around %zu failed arcs) instead of %s, refused: %s",
		    o->is_reduced ? "program x " : "schedule", o->is_reduced ? o->group.name : "",
		    o->reroute ? o->reroute->ndet : 0, o->reroute ? o->reroute->nfailed : 0,
		    o->fallback_from, o->fallback_why);
	else if (o->is_patched)
		snprintf(buf, n,
			 ", kept as structure (the healthy program x %s and a patch of %zu "
			 "transfers for the %llu nodes the failures reach)",
			 o->group.name, o->patch.prog.nxfers,
			 (unsigned long long)(o->patch.nregion + o->bst.problems));
	else if (o->is_reduced)
		snprintf(buf, n, ", symmetry-reduced (node 0's program x %s)", o->group.name);
	else if (explicit)
		snprintf(buf, n, " (explicit: %.160s)",
			 explicit + strlen("explicit on the degraded graph: "));
	else
		buf[0] = 0;
}

static void compute(struct state_sched_task *t)
{
	const char *coll = sched_collective_name(t->cfg->coll);
	double t0 = now_seconds();
	struct schedule_result r;
	struct ofc_error err = {0}, rerr = {0};
	struct arena a = {0};
	char reduced_why[200] = "";

	if (state_schedule_structured(t->cfg, t->spec, t->cfg->coll, t->cfg->size, &r, &rerr) < 0) {
		snprintf(reduced_why, sizeof(reduced_why), " (explicit: %.160s)", rerr.msg);
		if (compute_explicit(t, &r, &err) < 0) {
			/* (with failures in effect, the structured refusal is
			 * the CLI's: everything tried, as the re-plan says) */
			bool failed = !t->spec && t->cfg->coll != SCHED_ALLTOALL &&
				      (t->cfg->nfailed || t->cfg->f->degraded);
			t->why =
			    xasprintf("no schedule for %s: %s", coll, failed ? rerr.msg : err.msg);
			t->line = xasprintf("the state's schedule: %s", t->why);
			return;
		}
	}
	if (t->hook)
		t->hook(&r);
	const struct schedule_outcome *o = r.main;
	const struct schedule *s = &o->s;
	Ofc__V1__Schedule *h = snapshot_schedule_summary(&a, &r);
	char form[STATE_FORM_LEN];

	state_schedule_form(&r, form, sizeof(form));
	t->verified = s->verified;
	t->sched_len = protobuf_c_message_get_packed_size(&h->base);
	t->sched = xmalloc(t->sched_len + 1);
	protobuf_c_message_pack(&h->base, t->sched);
	if (!s->verified)
		t->why =
		    xasprintf("the %s schedule failed verification: %s", s->algorithm,
			      o->verify_error[0] ? o->verify_error : "(the verifier said nothing)");
	t->line = xasprintf("the state's schedule: %s %s on %s: %u steps, %.6g us, %s%s%s, "
			    "computed in %.3f s",
			    s->algorithm, coll, s->topology, s->nsteps, s->time_us,
			    s->verified ? "verified" : "NOT verified: ", s->verified ? "" : t->why,
			    form[0] ? form : reduced_why, now_seconds() - t0);
	arena_free(&a);
	schedule_result_free(&r);
}

static void *task_thread(void *arg)
{
	struct state_sched_task *t = arg;

	compute(t);
	pthread_mutex_lock(&t->mu);
	if (t->d) {
		/* Posted under mu: the daemon lets go under mu too. The note
		 * holds its own reference. */
		struct note *n = xcalloc(1, sizeof(*n));

		t->refs++;
		n->state_sched = t;
		ofcd_note(t->d, n);
	}
	pthread_mutex_unlock(&t->mu);
	state_sched_task_unref(t);
	return NULL;
}

/* ---- the loop's side --------------------------------------------------------------------- */

static bool same_key(const struct fabcfg *c1, const char *s1, const struct fabcfg *c2,
		     const char *s2)
{
	return c1 == c2 && (s1 ? s2 && strcmp(s1, s2) == 0 : !s2);
}

/* The kept result into s (the published snapshot). */
static void install(struct ofcd *d, struct snapshot *s)
{
	struct state_sched *k = &d->loop->ss;
	Ofc__V1__State *st = s->state;

	s->sched_want = false;
	if (k->sched) {
		Ofc__V1__Schedule *h = ofc__v1__schedule__unpack(NULL, k->sched_len, k->sched);

		if (h) {
			if (s->plan)
				ofc__v1__schedule__free_unpacked(s->plan, NULL);
			s->plan = h;
			st->schedule = h;
		}
	} else if (k->why && !st->schedule_error) {
		st->schedule_error = arena_strdup(&s->a, k->why);
	}
	changed(d);
}

/* Let go of a computation: its thread drops its result. */
static void let_go(struct state_sched_task *t)
{
	pthread_mutex_lock(&t->mu);
	t->d = NULL;
	pthread_mutex_unlock(&t->mu);
	state_sched_task_unref(t);
}

static void kept_free(struct state_sched *k)
{
	fabcfg_unref(k->cfg);
	free(k->spec);
	free(k->sched);
	free(k->why);
	k->cfg = NULL;
	k->spec = NULL;
	k->sched = NULL;
	k->why = NULL;
	k->sched_len = 0;
}

/* The inputs' fingerprint of s's schedule, hashed once per config and
 * topology (a follower asked again and again while it computes). */
static uint64_t inputs_of(struct state_sched *k, const struct snapshot *s)
{
	if (!k->in_cfg || !same_key(k->in_cfg, k->in_spec, s->cfg, s->sched_spec)) {
		fabcfg_unref(k->in_cfg);
		free(k->in_spec);
		k->in_cfg = fabcfg_ref(s->cfg);
		k->in_spec = s->sched_spec ? xstrdup(s->sched_spec) : NULL;
		k->inputs = state_schedule_inputs(s->cfg, s->sched_spec);
	}
	return k->inputs;
}

/* Replicas: the leader's answer for this very state, from the store, kept
 * and shown instead of computed (a computation under way is let go: its
 * result would be the same). why gets why not. */
static bool from_store(struct ofcd *d, struct snapshot *s, char *why, size_t n)
{
	struct state_sched *k = &d->loop->ss;
	uint8_t *sched;
	size_t len;

	if (!state_schedule_answer(d, s->cfg, inputs_of(k, s), &sched, &len, why, n))
		return false;
	if (k->task) {
		let_go(k->task);
		k->task = NULL;
	}
	kept_free(k);
	k->cfg = fabcfg_ref(s->cfg);
	k->spec = s->sched_spec ? xstrdup(s->sched_spec) : NULL;
	k->sched = sched;
	k->sched_len = len;
	install(d, s);

	const Ofc__V1__Schedule *h = s->plan;
	ofcd_log(d, OFCD_LOG_INFO,
		 "the state's schedule: %s %s on %s: %u steps, %.6g us, %s, %s, not computed here",
		 h && h->algorithm ? h->algorithm : "?", h && h->collective ? h->collective : "?",
		 h && h->topology ? h->topology : "?", h ? h->num_steps : 0, h ? h->time_us : 0,
		 h && h->verified ? "verified" : "NOT verified", why);
	return true;
}

static void start(struct ofcd *d, const struct snapshot *s, const char *why)
{
	struct state_sched_task *t = xcalloc(1, sizeof(*t));
	pthread_attr_t attr;
	pthread_t th;

	pthread_mutex_init(&t->mu, NULL);
	t->refs = 2; /* the thread's and the daemon's */
	t->d = d;
	t->cfg = fabcfg_ref(s->cfg);
	t->spec = s->sched_spec ? xstrdup(s->sched_spec) : NULL;
	t->since_ms = unix_ms();
	t->hook = d->o.state_schedule_hook;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&th, &attr, task_thread, t) != 0) {
		pthread_attr_destroy(&attr);
		t->refs = 1;
		state_sched_task_unref(t);
		ofcd_log(d, OFCD_LOG_ERR,
			 "cannot start a thread for the state's schedule: State.schedule stays "
			 "empty until the next state");
		return;
	}
	pthread_attr_destroy(&attr);
	d->loop->ss.task = t;
	if (d->clustered)
		ofcd_log(d, OFCD_LOG_INFO, "the state's schedule: computing it here (%s)", why);
	changed(d); /* (schedule_computing_since_unix_ms) */
}

void state_schedule_check(struct ofcd *d, bool asked)
{
	struct snapshot *s = d->loop->snap;
	struct state_sched *k = &d->loop->ss;

	if (!s || !s->sched_want || d->loop->stopping)
		return;
	char why[240] = "";

	if (k->cfg && same_key(k->cfg, k->spec, s->cfg, s->sched_spec)) {
		install(d, s);
		return;
	}
	/* (a follower, or a leader that took over: the leader's answer) */
	if (d->clustered && from_store(d, s, why, sizeof(why)))
		return;
	if (k->task)
		return; /* one at a time: this state's when it lands */
	if (d->clustered && !d->loop->leading && !asked)
		return; /* a follower: when a client asks for the state */
	start(d, s, why);
}

uint64_t state_schedule_since(const struct ofcd *d)
{
	const struct state_sched_task *t = d->loop->ss.task;
	const struct snapshot *s = d->loop->snap;

	/* (Another state's running: this one's starts when it lands.) */
	return t && s && s->sched_want ? t->since_ms : 0;
}

void state_schedule_landed(struct ofcd *d, struct state_sched_task *t)
{
	struct state_sched *k = &d->loop->ss;
	struct snapshot *s = d->loop->snap;

	if (t != k->task || d->loop->stopping) {
		state_sched_task_unref(t);
		return;
	}
	state_sched_task_unref(k->task); /* the daemon's reference */
	k->task = NULL;
	kept_free(k);
	k->cfg = fabcfg_ref(t->cfg);
	k->spec = t->spec ? xstrdup(t->spec) : NULL;
	k->sched = t->sched;
	k->sched_len = t->sched_len;
	k->why = t->why;
	t->sched = NULL;
	t->why = NULL;
	if (!k->sched || !t->verified)
		ofcd_log(d, OFCD_LOG_WARNING, "%s", t->line);
	if (s && s->sched_want && same_key(k->cfg, k->spec, s->cfg, s->sched_spec)) {
		struct note *ev = xcalloc(1, sizeof(*ev));

		install(d, s);
		ev->kind = OFC__V1__EVENT__KIND__KIND_SCHEDULE_REPLANNED;
		ev->message = xstrdup(t->line);
		if (k->sched) {
			ev->sched = xmalloc(k->sched_len + 1);
			memcpy(ev->sched, k->sched, k->sched_len);
			ev->sched_len = k->sched_len;
		}
		ev->failed = s->cfg->nfailed ? xcalloc(s->cfg->nfailed + 1, sizeof(char *)) : NULL;
		for (uint32_t i = 0; i < s->cfg->nfailed; i++)
			ev->failed[i] = xstrdup(s->cfg->failed[i]);
		ev->nfailed = s->cfg->nfailed;
		ev->time_ms = unix_ms();
		ofcd_on_event(d, ev);
		note_free(ev);
	} else {
		ofcd_log(d, OFCD_LOG_INFO, "%s (a newer state is published)", t->line);
	}
	state_sched_task_unref(t);
	/* A state published meanwhile waited for it. */
	state_schedule_check(d, false);
}

void state_schedule_stop(struct ofcd *d)
{
	struct state_sched *k = &d->loop->ss;
	struct state_sched_task *t = k->task;

	if (t)
		let_go(t);
	k->task = NULL;
	kept_free(k);
	fabcfg_unref(k->in_cfg);
	free(k->in_spec);
	memset(k, 0, sizeof(*k));
}
