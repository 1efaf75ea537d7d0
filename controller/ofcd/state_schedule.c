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
 * Computed in a planner process (docs/ofcd.md, "The planner process";
 * the computation is planner_state.c's), not in the process that holds
 * the lease: one started for each computation, killed when the daemon lets
 * go of it; one that ends before it answers costs a second, and a second
 * that ends too, State.schedule_error.
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
 * state goes on at once; the thread waits on its planner process and drops
 * its result when it finds the daemon gone (task.d NULL under task.mu). */
#include "controller/ofcd/conn.h"
#include "proto/planner.pb-c.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>

/* ---- the computation: its thread and its planner process ------------------------------- */

/* How long the state's schedule may take its planner: no request's time
 * limit applies to it, so ofcd's longest wait. */
#define STATE_PLANNER_WAIT 86400.0
/* The most its answer may hold: a summary (a few hundred bytes) and two
 * lines. */
#define STATE_ANSWER_MAX (STATE_SCHED_ANSWER_MAX + 16384)

/* t's computation as the planner reads it. */
static uint8_t *job_pack(const struct state_sched_task *t, size_t *len)
{
	Ofc__V1__PlannerJob m = OFC__V1__PLANNER_JOB__INIT;
	uint8_t *buf;

	m.has_fabric = m.has_nfailed = m.has_collective = m.has_size_bytes = 1;
	m.fabric.data = planner_fabric_pack(t->cfg, &m.fabric.len);
	m.nfailed = t->cfg->nfailed;
	m.collective = (uint32_t)t->cfg->coll;
	m.topology = t->spec;
	m.size_bytes = t->cfg->size;
	m.has_max_memory = m.has_state_schedule = 1;
	m.max_memory = t->cfg->max_memory;
	m.state_schedule = true;
	*len = protobuf_c_message_get_packed_size(&m.base);
	buf = xmalloc(*len ? *len : 1);
	protobuf_c_message_pack(&m.base, buf);
	free(m.fabric.data);
	return buf;
}

/* Whether the daemon still wants t (it let go: d NULL), with pid, t's
 * planner now (0: none), recorded under mu for let_go to kill. */
static bool wanted(void *ctx, pid_t pid)
{
	struct state_sched_task *t = ctx;
	bool on;

	pthread_mutex_lock(&t->mu);
	on = t->d != NULL;
	t->pid = on ? pid : 0;
	pthread_mutex_unlock(&t->mu);
	return on;
}

static void warn(struct state_sched_task *t, const char *msg)
{
	pthread_mutex_lock(&t->mu);
	if (t->d)
		ofcd_log(t->d, OFCD_LOG_WARNING, "%s", msg);
	pthread_mutex_unlock(&t->mu);
}

/* The planner's answer into t; -1 with why when it is not one. */
static int take(struct state_sched_task *t, const uint8_t *buf, size_t len, char *why, size_t n)
{
	Ofc__V1__PlannerStateSchedule *m = ofc__v1__planner_state_schedule__unpack(NULL, len, buf);

	if (!m || !m->line) {
		if (m)
			ofc__v1__planner_state_schedule__free_unpacked(m, NULL);
		snprintf(why, n, "answered what is not a state's schedule");
		return -1;
	}
	if (m->has_schedule) {
		t->sched = xmalloc(m->schedule.len + 1);
		memcpy(t->sched, m->schedule.data, m->schedule.len);
		t->sched_len = m->schedule.len;
	}
	t->verified = m->verified;
	t->why = m->why ? xstrdup(m->why) : NULL;
	t->line = xstrdup(m->line);
	ofc__v1__planner_state_schedule__free_unpacked(m, NULL);
	return 0;
}

/* One planner process asked: 0 with its answer in t, 1 when the daemon
 * let go (the planner killed), -1 with why it gave none. */
static int ask(struct state_sched_task *t, const uint8_t *job, size_t len, char *why, size_t n)
{
	uint8_t *buf;
	size_t got;
	int rc = planner_ask(&t->how, job, len, STATE_ANSWER_MAX, STATE_PLANNER_WAIT, wanted, t,
			     &buf, &got, why, n);

	if (rc == 0)
		rc = take(t, buf, got, why, n);
	free(buf);
	return rc;
}

/* Computed by a planner process of its own; one that ends before it
 * answers (crashed, out of its memory, killed) costs one more, and a
 * second, State.schedule_error saying why. */
static void compute(struct state_sched_task *t)
{
	char why[200], first[200] = "";
	size_t len;
	uint8_t *job = job_pack(t, &len);

	for (int attempt = 0; attempt < 2; attempt++) {
		int rc = ask(t, job, len, why, sizeof(why));

		if (rc >= 0)
			break;
		if (attempt == 0) {
			char *line =
			    xasprintf("the state's schedule: the planner process computing "
				      "it %s; computing it again in another",
				      why);

			warn(t, line);
			free(line);
			snprintf(first, sizeof(first), "%s", why);
			continue;
		}
		t->why = xasprintf("no schedule: the planner process computing it %s (the one "
				   "before it %s)",
				   why, first);
		t->line = xasprintf("the state's schedule: %s", t->why);
	}
	free(job);
}

static void *task_thread(void *arg)
{
	struct state_sched_task *t = arg;

	ofc_thread_name("ofcd-state");
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
	if (t->pid > 0)
		kill(t->pid, SIGKILL); /* (its thread reaps it) */
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
	planner_how(d, &t->how);
	t->how.role = "state";
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
