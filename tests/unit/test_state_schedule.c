/* The state's schedule off the commit's path (controller/ofcd/state_schedule.c),
 * in a planner process (this program, run as one with a hook): a slow
 * engine delays neither a commit's answer nor the state's new generation;
 * a schedule the verifier refuses is shown and logged with why; a planner
 * killed mid-plan costs a retry, two State.schedule_error; a follower
 * computes none at a commit, only when a client asks it for the state; the
 * schedule kept is symmetry-reduced where the topology admits it, and under
 * a failed link above 1,024 hosts the healthy program and a patch; the key
 * of the leader's answer in the store is its inputs'. */
#include "tests/unit/ofcd_world.h"

#include <sys/eventfd.h>

#include "proto/state.pb-c.h"

/* The loop's half (d->loop) is complete in conn.h alone; its get_state
 * (the request's handler) is another than ofcd_world.h's (a client's
 * call), renamed here. */
#define get_state conn_get_state
#include "controller/ofcd/conn.h"
#undef get_state

/* ---- seams: this program as the planner process --------------------------------- */

/* The state's schedule is computed in a planner process: here this test
 * program itself, run with the planner's options (main), its hook named
 * by OFC_TEST_STATE_HOOK in the environment ofcd passes on. */
static char self_exe[4096];

/* A slow engine: the computation waits while the file $OFC_TEST_HOLD is
 * there, at most 10 s, its planner's pid in HOLD.pid meanwhile (HOLD.gaveup
 * where it gave up: a daemon that waits for it gets its answers only then,
 * and the test fails instead of hanging). */
static void slow_engine(struct schedule_result *r)
{
	const char *hold = getenv("OFC_TEST_HOLD");
	char path[4200], pid[32];
	struct ofc_error err = {0};
	int i;

	(void)r;
	if (!hold)
		return;
	snprintf(path, sizeof(path), "%s.pid", hold);
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	(void)atomic_write(path, pid, strlen(pid), &err);
	for (i = 0; i < 1000 && access(hold, F_OK) == 0; i++)
		usleep(10000);
	if (i == 1000) {
		snprintf(path, sizeof(path), "%s.gaveup", hold);
		(void)atomic_write(path, "", 0, &err);
	}
}

/* A schedule the verifier refuses: the first transfer sent back to its
 * sender (no such link), checked again by the real verifier. */
static void corrupt_schedule(struct schedule_result *r)
{
	struct schedule_outcome *o = r->main;
	struct verify_opts vo = {.graph = r->g};
	struct verify_report rep;

	if (o->s.nxfers == 0)
		return;
	o->s.xfers[0].dst = o->s.xfers[0].src;
	if (o->is_reduced) {
		struct sched_reduced red = {.group = o->group, .prog = o->s};

		o->verified = sched_verify_reduced(&red, &vo, &rep) == 0;
	} else {
		o->verified = sched_verify(&o->s, &vo, &rep) == 0;
	}
	o->s.verified = o->verified;
	snprintf(o->verify_error, sizeof(o->verify_error), "%s", rep.error);
}

/* (main) This program run by ofcd as its planner process. */
static int as_planner(int argc, char **argv)
{
	const char *hook = getenv("OFC_TEST_STATE_HOOK");
	struct planner_serve_opts o = {.fd = 3};
	struct ofc_error err = {0};

	for (int i = 1; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "--max-memory") == 0)
			(void)parse_u64(argv[i + 1], &o.max_memory);
		else if (strcmp(argv[i], "--topology-dir") == 0)
			o.topology_dir = argv[i + 1];
	}
	if (hook && strcmp(hook, "slow") == 0)
		o.state_hook = slow_engine;
	else if (hook && strcmp(hook, "corrupt") == 0)
		o.state_hook = corrupt_schedule;
	signal(SIGPIPE, SIG_IGN);
	if (planner_serve(&o, &err) < 0) {
		fprintf(stderr, "test planner: %s\n", err.msg);
		return 1;
	}
	return 0;
}

/* The next start's state schedule in this program with hook ("slow" with
 * hold: its file, made here). */
static void hooked_planner(struct world *w, const char *hook, char *hold, size_t n)
{
	struct ofc_error err = {0};

	setenv("OFC_TEST_STATE_HOOK", hook, 1);
	if (hold) {
		snprintf(hold, n, "%s/hold", w->dir);
		assert_int_equal(atomic_write(hold, "", 0, &err), 0);
		setenv("OFC_TEST_HOLD", hold, 1);
	}
	w->planner_of_next = self_exe;
}

static void plain_planner(struct world *w)
{
	unsetenv("OFC_TEST_STATE_HOOK");
	unsetenv("OFC_TEST_HOLD");
	w->planner_of_next = NULL;
}

/* The pid of the planner held by hold, other than not (0: any), within
 * 30 s; 0 when none. */
static pid_t held_planner(const char *hold, pid_t not )
{
	char path[4200];

	snprintf(path, sizeof(path), "%s.pid", hold);
	for (int i = 0; i < 3000; i++) {
		struct ofc_error err = {0};
		char *text = NULL;
		size_t len;
		pid_t pid = 0;

		if (read_file(path, 64, &text, &len, &err) == 0) {
			pid = (pid_t)atoi(text);
			free(text);
		}
		if (pid > 0 && pid != not )
			return pid;
		usleep(10000);
	}
	return 0;
}

/* (a daemon driven directly) The build's planner program. */
static const char *build_planner(struct world *w)
{
	char *planner = exe_sibling(NULL, "../ofc-planner");

	snprintf(w->planner, sizeof(w->planner), "%s", planner ? planner : "");
	free(planner);
	return w->planner;
}

static bool gave_up(const char *hold)
{
	char path[4200];

	snprintf(path, sizeof(path), "%s.gaveup", hold);
	return access(path, F_OK) == 0;
}

/* ---- one ofcd ----------------------------------------------------------------- */

static void test_slow_engine(void **state)
{
	struct world *w = *state;
	struct ofcd_client c;
	Ofc__V1__Response *r;
	char hold[200];

	hooked_planner(w, "slow", hold, sizeof(hold));
	start(w, 30, 0);
	connect_ok(w, &c);
	/* The commit answers while the engine is held... */
	r = reconfigure(&c, "torus:8x8", 1);
	assert_non_null(r);
	assert_int_equal(r->status, OFC__V1__STATUS__STATUS_OK);
	ofc__v1__response__free_unpacked(r, NULL);
	/* ... and the state is the new generation, its schedule computing. */
	r = get_state(&c, 2);
	assert_int_equal(r->state->config_generation, 1);
	assert_null(r->state->schedule);
	assert_true(r->state->has_schedule_computing_since_unix_ms);
	ofc__v1__response__free_unpacked(r, NULL);
	assert_true(held_planner(hold, 0) > 0);
	/* Another commit meanwhile answers too (its schedule waits its turn). */
	r = reconfigure(&c, "torus:4x16", 3);
	assert_int_equal(r->status, OFC__V1__STATUS__STATUS_OK);
	ofc__v1__response__free_unpacked(r, NULL);
	r = get_state(&c, 4);
	assert_int_equal(r->state->config_generation, 2);
	assert_true(r->state->has_schedule_computing_since_unix_ms);
	ofc__v1__response__free_unpacked(r, NULL);
	/* all of it answered while the engine was held */
	assert_false(gave_up(hold));
	assert_int_equal(unlink(hold), 0);
	/* Let go: the last state's schedule lands, symmetry-reduced. */
	r = get_state_settled(&c, 5);
	assert_non_null(r->state->schedule);
	assert_string_equal(r->state->schedule->topology, "torus:4x16");
	assert_true(r->state->schedule->verified);
	assert_null(r->state->schedule->verify_error);
	assert_non_null(r->state->schedule->reduced);
	assert_string_equal(r->state->schedule->reduced->name, "Z_4 x Z_16");
	ofc__v1__response__free_unpacked(r, NULL);
	assert_true(log_count(w, "the state's schedule: bfb allreduce on torus:4x16") >= 1);
	ofcd_disconnect(&c);
	stop(w);
	plain_planner(w);
}

static void test_not_verified_says_why(void **state)
{
	struct world *w = *state;
	struct ofcd_client c;
	Ofc__V1__Response *r;

	hooked_planner(w, "corrupt", NULL, 0);
	start(w, 30, 0);
	connect_ok(w, &c);
	r = reconfigure(&c, "torus:8x8", 1);
	assert_int_equal(r->status, OFC__V1__STATUS__STATUS_OK);
	ofc__v1__response__free_unpacked(r, NULL);
	r = get_state_settled(&c, 2);
	assert_non_null(r->state->schedule);
	assert_false(r->state->schedule->verified);
	/* the answer says why ... */
	assert_non_null(r->state->schedule->verify_error);
	assert_true(strlen(r->state->schedule->verify_error) > 0);
	/* ... and the log, as a warning */
	char *line = xasprintf("NOT verified: the bfb schedule failed verification: %s",
			       r->state->schedule->verify_error);
	assert_true(log_count(w, line) >= 1);
	free(line);
	ofc__v1__response__free_unpacked(r, NULL);
	ofcd_disconnect(&c);
	stop(w);
	plain_planner(w);
}

/* The planner process computing the state's schedule killed: one more
 * computes it (and the log says why); both killed, State.schedule_error
 * says why. ofcd meanwhile answers, and the next commit's schedule lands. */
static void test_planner_killed(void **state)
{
	struct world *w = *state;
	struct ofcd_client c;
	Ofc__V1__Response *r;
	char hold[200];
	pid_t p1, p2;

	hooked_planner(w, "slow", hold, sizeof(hold));
	start(w, 30, 0);
	connect_ok(w, &c);
	r = reconfigure(&c, "torus:8x8", 1);
	assert_int_equal(r->status, OFC__V1__STATUS__STATUS_OK);
	ofc__v1__response__free_unpacked(r, NULL);
	/* killed mid-plan: another one computes it */
	p1 = held_planner(hold, 0);
	assert_true(p1 > 0);
	assert_int_equal(kill(p1, SIGKILL), 0);
	p2 = held_planner(hold, p1);
	assert_true(p2 > 0);
	r = get_state(&c, 2);
	assert_int_equal(r->status, OFC__V1__STATUS__STATUS_OK);
	assert_int_equal(r->state->config_generation, 1);
	assert_true(r->state->has_schedule_computing_since_unix_ms);
	ofc__v1__response__free_unpacked(r, NULL);
	assert_int_equal(unlink(hold), 0);
	r = get_state_settled(&c, 3);
	assert_non_null(r->state->schedule);
	assert_string_equal(r->state->schedule->topology, "torus:8x8");
	assert_true(r->state->schedule->verified);
	assert_null(r->state->schedule_error);
	ofc__v1__response__free_unpacked(r, NULL);
	assert_int_equal(log_count(w, "the state's schedule: the planner process computing it "
				      "was killed by SIGKILL"),
			 1);
	assert_int_equal(log_count(w, "computing it again in another"), 1);

	/* both killed: no schedule, and why */
	struct ofc_error err = {0};
	assert_int_equal(atomic_write(hold, "", 0, &err), 0);
	r = reconfigure(&c, "torus:4x16", 4);
	assert_int_equal(r->status, OFC__V1__STATUS__STATUS_OK);
	ofc__v1__response__free_unpacked(r, NULL);
	p1 = held_planner(hold, p2);
	assert_true(p1 > 0);
	assert_int_equal(kill(p1, SIGKILL), 0);
	p2 = held_planner(hold, p1);
	assert_true(p2 > 0);
	assert_int_equal(kill(p2, SIGKILL), 0);
	r = get_state_settled(&c, 5);
	assert_int_equal(r->state->config_generation, 2);
	assert_null(r->state->schedule);
	assert_non_null(r->state->schedule_error);
	assert_non_null(strstr(r->state->schedule_error,
			       "no schedule: the planner process computing it was killed by "
			       "SIGKILL"));
	ofc__v1__response__free_unpacked(r, NULL);

	/* the next commit's lands */
	assert_int_equal(unlink(hold), 0);
	r = reconfigure(&c, "torus:2x32", 6);
	assert_int_equal(r->status, OFC__V1__STATUS__STATUS_OK);
	ofc__v1__response__free_unpacked(r, NULL);
	r = get_state_settled(&c, 7);
	assert_non_null(r->state->schedule);
	assert_string_equal(r->state->schedule->topology, "torus:2x32");
	assert_true(r->state->schedule->verified);
	ofc__v1__response__free_unpacked(r, NULL);
	assert_false(gave_up(hold));
	ofcd_disconnect(&c);
	stop(w);
	plain_planner(w);
}

/* GetSchedule reduced: node 0's program and its group, on the fabric's
 * topology; refused with the reason where the topology has none. */
static void test_get_schedule_reduced(void **state)
{
	struct world *w = *state;
	struct ofcd_client c;
	Ofc__V1__Request req = OFC__V1__REQUEST__INIT;
	Ofc__V1__GetSchedule gs = OFC__V1__GET_SCHEDULE__INIT;
	Ofc__V1__Response *r;
	size_t nx = 0;

	start(w, 30, 0);
	connect_ok(w, &c);
	gs.collective = "allreduce";
	gs.has_reduced = gs.reduced = 1;
	req.body_case = OFC__V1__REQUEST__BODY_GET_SCHEDULE;
	req.get_schedule = &gs;
	r = call(&c, &req, 1);
	assert_int_equal(r->status, OFC__V1__STATUS__STATUS_OK);
	assert_true(r->schedule->verified);
	assert_non_null(r->schedule->reduced);
	assert_int_equal(r->schedule->reduced->order, 64);
	for (size_t t = 0; t < r->schedule->n_steps; t++)
		nx += r->schedule->steps[t]->n_transfers;
	/* node 0's program: a 64th of the whole */
	assert_true(nx > 0 && nx * 32 < r->schedule->num_transfers);
	ofc__v1__response__free_unpacked(r, NULL);
	gs.topology = "genkautz:64,4";
	r = call(&c, &req, 2);
	assert_int_equal(r->status, OFC__V1__STATUS__STATUS_INVALID);
	assert_non_null(strstr(r->message, "no translation group"));
	ofc__v1__response__free_unpacked(r, NULL);
	ofcd_disconnect(&c);
	stop(w);
}

/* ---- a replica, driven directly ------------------------------------------------ */

/* The computation's note, taken off the daemon's list as the loop would. */
static struct state_sched_task *landed_task(struct ofcd *d)
{
	struct note *n = NULL;
	struct state_sched_task *t;

	for (int i = 0; i < 3000 && !n; i++) {
		pthread_mutex_lock(&d->notes.mu);
		n = d->notes.head;
		d->notes.head = d->notes.tail = NULL;
		pthread_mutex_unlock(&d->notes.mu);
		if (!n)
			usleep(10000);
	}
	assert_non_null(n);
	assert_null(n->next);
	t = n->state_sched;
	n->state_sched = NULL;
	note_free(n);
	assert_non_null(t);
	return t;
}

static struct snapshot *wanting(struct fabcfg *cfg, const char *spec)
{
	struct snapshot *s = xcalloc(1, sizeof(*s));

	s->cfg = fabcfg_ref(cfg);
	s->state = arena_alloc(&s->a, sizeof(*s->state));
	ofc__v1__state__init(s->state);
	s->sched_want = true;
	s->sched_spec = spec ? arena_strdup(&s->a, spec) : NULL;
	return s;
}

static void test_follower(void **state)
{
	struct world *w = *state;
	struct ofcd *d = xcalloc(1, sizeof(*d));
	struct ofc_error err = {0};
	struct fabric *f = NULL;
	char *text = xasprintf(cfg_fmt, "torus:8x8");

	assert_int_equal(config_parse("fab.yaml", text, strlen(text), &f, &err), 0);
	assert_int_equal(fabric_validate(f, &err), 0);
	struct fabcfg *cfg = fabcfg_new(f, text, strlen(text), "fab.yaml", NULL);

	d->loop = xcalloc(1, sizeof(*d->loop));
	d->o.log = log_line;
	d->o.log_ctx = w;
	d->o.log_level = OFCD_LOG_DEBUG;
	d->o.planner_path = build_planner(w);
	d->wake_fd = eventfd(0, EFD_CLOEXEC);
	pthread_mutex_init(&d->notes.mu, NULL);
	d->clustered = true;
	d->loop->snap = wanting(cfg, NULL);

	/* A follower publishes the state a sync read: nothing computed. */
	state_schedule_check(d, false);
	assert_null(d->loop->ss.task);
	usleep(50000);
	assert_null(d->notes.head);
	/* A client asks it for the state: computed then. */
	state_schedule_check(d, true);
	assert_non_null(d->loop->ss.task);
	assert_true(state_schedule_since(d) > 0);
	state_schedule_landed(d, landed_task(d));
	assert_null(d->loop->ss.task);
	assert_non_null(d->loop->snap->state->schedule);
	assert_true(d->loop->snap->state->schedule->verified);
	assert_non_null(d->loop->snap->state->schedule->reduced);

	/* The same state again (a snapshot built for another reason): the
	 * kept one, not computed again. */
	snapshot_free(d->loop->snap);
	d->loop->snap = wanting(cfg, NULL);
	state_schedule_check(d, true);
	assert_null(d->loop->ss.task);
	assert_non_null(d->loop->snap->state->schedule);

	/* Leading: a new topology's at once, unasked. */
	d->loop->leading = true;
	snapshot_free(d->loop->snap);
	d->loop->snap = wanting(cfg, "torus:4x16");
	state_schedule_check(d, false);
	assert_non_null(d->loop->ss.task);
	state_schedule_landed(d, landed_task(d));
	assert_string_equal(d->loop->snap->state->schedule->topology, "torus:4x16");

	state_schedule_stop(d);
	event_log_free(d); /* (the landed schedules' events) */
	snapshot_free(d->loop->snap);
	fabcfg_unref(cfg);
	close(d->wake_fd);
	pthread_mutex_destroy(&d->notes.mu);
	free(d->loop);
	free(d);
	free(text);
}

/* The leader's answer in the store (a files store here: the same read as
 * etcd's cache): a replica takes the one whose inputs are its state's
 * and computes nothing; one of other inputs, or damaged, it computes its
 * own and logs why; an answer that lands while it computes replaces the
 * computation. */
static void put_answer(struct ofcd *d, const struct fabcfg *cfg, uint64_t inputs,
		       const char *algorithm)
{
	Ofc__V1__Schedule h = OFC__V1__SCHEDULE__INIT;
	Ofc__V1__StateScheduleAnswer a = OFC__V1__STATE_SCHEDULE_ANSWER__INIT;
	uint8_t hb[256], ab[512];
	struct ofc_error err = {0};

	h.algorithm = (char *)algorithm;
	h.collective = "allreduce";
	h.has_verified = h.has_time_us = 1;
	h.verified = true;
	h.time_us = 123;
	a.has_inputs = a.has_schedule = 1;
	a.inputs = inputs;
	a.replica = "r9";
	a.schedule.len = protobuf_c_message_pack(&h.base, hb);
	a.schedule.data = hb;
	struct store_write wr = {STORE_SCHEDULE, ab, protobuf_c_message_pack(&a.base, ab)};
	assert_int_equal(store_write(d->store, cfg->f->name, &wr, 1, &err), 0);
}

static bool logged(struct world *w, const char *text)
{
	pthread_mutex_lock(&w->log_mu);
	bool has = w->log.buf && strstr(w->log.buf, text);
	pthread_mutex_unlock(&w->log_mu);
	return has;
}

static void test_follower_reads_answer(void **state)
{
	struct world *w = *state;
	struct ofcd *d = xcalloc(1, sizeof(*d));
	struct ofc_error err = {0};
	struct fabric *f = NULL;
	char *text = xasprintf(cfg_fmt, "torus:8x8");

	assert_int_equal(config_parse("fab.yaml", text, strlen(text), &f, &err), 0);
	assert_int_equal(fabric_validate(f, &err), 0);
	struct fabcfg *cfg = fabcfg_new(f, text, strlen(text), "fab.yaml", NULL);

	d->loop = xcalloc(1, sizeof(*d->loop));
	d->o.log = log_line;
	d->o.log_ctx = w;
	d->o.log_level = OFCD_LOG_DEBUG;
	d->o.planner_path = build_planner(w);
	d->wake_fd = eventfd(0, EFD_CLOEXEC);
	pthread_mutex_init(&d->notes.mu, NULL);
	d->clustered = true;
	d->store = store_open_files(w->dir);

	/* The answer for this very state: shown unasked, nothing computed. */
	put_answer(d, cfg, state_schedule_inputs(cfg, NULL), "from-leader");
	d->loop->snap = wanting(cfg, NULL);
	state_schedule_check(d, false);
	assert_null(d->loop->ss.task);
	assert_non_null(d->loop->snap->state->schedule);
	assert_string_equal(d->loop->snap->state->schedule->algorithm, "from-leader");
	assert_true(logged(w, "the answer of replica r9 (epoch 0), read from the store, not "
			      "computed here"));
	state_schedule_check(d, true);
	assert_null(d->loop->ss.task);

	/* Another state's answer (another topology committed): computed here. */
	snapshot_free(d->loop->snap);
	d->loop->snap = wanting(cfg, "torus:4x16");
	state_schedule_check(d, true);
	assert_non_null(d->loop->ss.task);
	assert_true(logged(w, "computing it here (the leader's answer in the store is another "
			      "state's (by r9, 0 failures in effect))"));
	state_schedule_landed(d, landed_task(d));
	assert_string_equal(d->loop->snap->state->schedule->topology, "torus:4x16");
	assert_string_not_equal(d->loop->snap->state->schedule->algorithm, "from-leader");

	/* Damaged: computed here, and said so. */
	struct store_write junk = {STORE_SCHEDULE, "not a protobuf", 14};
	assert_int_equal(store_write(d->store, cfg->f->name, &junk, 1, &err), 0);
	snapshot_free(d->loop->snap);
	d->loop->snap = wanting(cfg, "torus:2x32");
	state_schedule_check(d, true);
	assert_non_null(d->loop->ss.task);
	assert_true(logged(w, "computing it here (the leader's answer in the store is damaged"));

	/* The leader's answer lands while it computes: taken, the computation
	 * let go (its thread drops its result). */
	put_answer(d, cfg, state_schedule_inputs(cfg, "torus:2x32"), "landed-later");
	state_schedule_check(d, false);
	assert_null(d->loop->ss.task);
	assert_string_equal(d->loop->snap->state->schedule->algorithm, "landed-later");

	state_schedule_stop(d);
	event_log_free(d);
	snapshot_free(d->loop->snap);
	fabcfg_unref(cfg);
	store_close(d->store);
	close(d->wake_fd);
	pthread_mutex_destroy(&d->notes.mu);
	free(d->loop);
	free(d);
	free(text);
}

/* Above 1,024 hosts the workload's schedule that the re-plan and the
 * state show (state_schedule_structured) keeps the structure by itself
 * under a failed link, an allgather too (whose explicit schedule the
 * verifier would take at any size): the healthy program and a patch, verified, far
 * fewer transfers held than the schedule has, priced against the healthy
 * one, summarised without a group; restored, the healthy reduced
 * program. */
static void test_structured_large(void **state)
{
	struct world *w = *state;
	const char *fmt = "name: big\n"
			  "hosts: {count: 1056, prefix: h, ports: 4}\n"
			  "switches:\n"
			  "  - {name: ocs0, type: ocs, ports: 4224, driver: {type: sim}}\n"
			  "wiring: {pattern: sequential, switches: [ocs0]}\n"
			  "topology: %s\n"
			  "collectives:\n"
			  "  - {op: allreduce, size: 1MiB}\n";
	const char *tops[2] = {"{spec: torus:32x33, failed_links: [[h5, h6]]}", "torus:32x33"};

	for (int i = 0; i < 2; i++) {
		char *text = xasprintf(fmt, tops[i]), path[200], form[240];
		struct ofc_error err = {0};
		struct fabric *f;
		struct schedule_result r;

		snprintf(path, sizeof(path), "%s/big.yaml", w->dir);
		assert_int_equal(atomic_write(path, text, strlen(text), &err), 0);
		if (fabric_open(path, &f, &err) < 0)
			fail_msg("%s", err.msg);
		struct fabcfg *cfg = fabcfg_new(f, text, strlen(text), path, NULL);
		free(text);
		assert_int_equal(
		    state_schedule_structured(cfg, NULL, SCHED_ALLGATHER, 1u << 20, &r, &err), 0);
		const struct schedule_outcome *o = r.main;
		state_schedule_form(&r, form, sizeof(form));
		assert_true(o->verified && o->is_reduced);
		assert_int_equal(o->is_patched, i == 0);
		if (i == 0) {
			assert_non_null(
			    strstr(form, ", kept as structure (the healthy program x "));
			assert_true(o->ntransfers > 100 * (o->s.nxfers + o->patch.prog.nxfers));
			assert_true(o->healthy_us > 0 && o->time_us > o->healthy_us);
		} else {
			assert_non_null(strstr(form, ", symmetry-reduced (node 0's program x "));
		}
		/* the state's summary names a group only for a reduced one */
		struct arena a = {0};
		Ofc__V1__Schedule *h = snapshot_schedule_summary(&a, &r);
		assert_true(h->verified);
		assert_int_equal(h->reduced != NULL, i == 1);
		arena_free(&a);
		schedule_result_free(&r);
		fabcfg_unref(cfg);
	}
}

/* GetSchedule's expansion of a schedule it did not keep whole
 * (ofcd_patched): of a reduced one (a lost switch's, where the request did
 * not ask for the reduced form), the transfers sched_reduced_expand makes,
 * step by step; the request that asked for it gets the reduced form. */
static void test_expand_reduced(void **state)
{
	(void)state;
	struct strbuf fail = STRBUF_INIT;
	struct schedule_result r;
	struct ofc_error err = {0};
	struct schedule want, got;
	struct ofcd_patched p;
	struct job j = {0};

	for (uint32_t v = 0; v < 64; v++)
		sb_printf(&fail, "%s%u>%u", v ? "," : "", v, (v / 8) * 8 + (v % 8 + 1) % 8);
	struct schedule_query q = {.spec = "torus:8x8",
				   .collective = SCHED_ALLGATHER,
				   .size = 1u << 20,
				   .fail = fail.buf,
				   .reduced = SCHEDULE_REDUCED_ALWAYS};
	assert_int_equal(schedule_compute(&q, &r, NULL, &err), 0);
	assert_true(r.main->is_reduced && !r.main->is_patched && r.main->verified);
	assert_true(ofcd_expanded(&j, &r));
	j.reduced = true;
	assert_false(ofcd_expanded(&j, &r));
	struct sched_reduced red = {.group = r.main->group, .prog = r.main->s};
	assert_int_equal(sched_reduced_expand(&red, &want, &err), 0);
	ofcd_patched_open(&p, r.main);
	assert_int_equal(sched_stream_expand(&p.st, &got, &err), 0);
	ofcd_patched_close(&p);
	assert_int_equal(got.nsteps, want.nsteps);
	assert_int_equal(got.nxfers, want.nxfers);
	assert_int_equal(got.nxfers, r.main->ntransfers);
	for (uint32_t t = 0; t < want.nsteps; t++) {
		assert_int_equal(sched_step_size(&got, t), sched_step_size(&want, t));
		assert_memory_equal(&got.xfers[got.step_start[t]], &want.xfers[want.step_start[t]],
				    sched_step_size(&want, t) * sizeof(struct xfer));
	}
	sched_free(&want);
	sched_free(&got);
	schedule_result_free(&r);
	sb_free(&fail);
}

/* The key of the leader's answer in the store (state_schedule_store.c):
 * the same inputs give the same fingerprint whatever order the failures
 * were reported in; any input that changes the schedule changes it. */
static struct fabcfg *small_cfg(const struct world *w, const char *topology, const char *size)
{
	char *text = xasprintf("name: fp\n"
			       "hosts: {count: 16, prefix: h, ports: 4}\n"
			       "switches:\n"
			       "  - {name: ocs0, type: ocs, ports: 64, driver: {type: sim}}\n"
			       "wiring: {pattern: sequential, switches: [ocs0]}\n"
			       "topology: %s\n"
			       "collectives:\n"
			       "  - {op: allreduce, size: %s}\n",
			       topology, size);
	char path[200];
	struct ofc_error err = {0};
	struct fabric *f;

	snprintf(path, sizeof(path), "%s/fp.yaml", w->dir);
	assert_int_equal(atomic_write(path, text, strlen(text), &err), 0);
	if (fabric_open(path, &f, &err) < 0)
		fail_msg("%s", err.msg);
	struct fabcfg *c = fabcfg_new(f, text, strlen(text), path, NULL);
	free(text);
	c->coll = SCHED_ALLREDUCE;
	c->size = 1u << 20;
	return c;
}

static void set_failed(struct fabcfg *c, const char *a, const char *b)
{
	strv_free(c->failed, c->nfailed);
	c->nfailed = 0;
	c->failed = xcalloc(3, sizeof(char *));
	if (a)
		c->failed[c->nfailed++] = xstrdup(a);
	if (b)
		c->failed[c->nfailed++] = xstrdup(b);
}

static void test_answer_inputs(void **state)
{
	struct world *w = *state;
	struct fabcfg *a = small_cfg(w, "torus:4x4", "1MiB"),
		      *b = small_cfg(w, "torus:4x4", "1MiB");
	struct fabcfg *other = small_cfg(w, "torus:2x8", "1MiB");
	struct fabcfg *size = small_cfg(w, "torus:4x4", "2MiB");
	uint64_t healthy = state_schedule_inputs(a, NULL);

	/* two configs read alike: the same key */
	assert_true(state_schedule_inputs(b, NULL) == healthy);
	/* another topology, config text, committed topology or workload */
	assert_true(state_schedule_inputs(other, NULL) != healthy);
	assert_true(state_schedule_inputs(size, NULL) != healthy);
	assert_true(state_schedule_inputs(a, "torus:2x8") != healthy);
	b->size = 2u << 20;
	assert_true(state_schedule_inputs(b, NULL) != healthy);
	b->size = a->size;
	b->coll = SCHED_ALLGATHER;
	assert_true(state_schedule_inputs(b, NULL) != healthy);
	b->coll = a->coll;
	/* the failures in effect, as a set */
	set_failed(a, "h0-h1", "h5:2");
	set_failed(b, "h5:2", "h0-h1");
	uint64_t two = state_schedule_inputs(a, NULL);
	assert_true(two != healthy);
	assert_true(state_schedule_inputs(b, NULL) == two);
	set_failed(b, "h0-h1", NULL);
	assert_true(state_schedule_inputs(b, NULL) != two);
	assert_true(state_schedule_inputs(b, NULL) != healthy);
	set_failed(b, "h0-h1", "h5:3");
	assert_true(state_schedule_inputs(b, NULL) != two);
	set_failed(b, NULL, NULL);
	assert_true(state_schedule_inputs(b, NULL) == healthy);
	fabcfg_unref(a);
	fabcfg_unref(b);
	fabcfg_unref(other);
	fabcfg_unref(size);
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "--max-memory") == 0)
		return as_planner(argc, argv);
	char *copy = xstrdup(argv[0]);

	if (!realpath("/proc/self/exe", self_exe))
		return 1;
	snprintf(build_dir, sizeof(build_dir), "%s/..", dirname(copy));
	free(copy);
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_slow_engine, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_not_verified_says_why, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_planner_killed, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_get_schedule_reduced, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_follower, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_structured_large, setup, teardown),
	    cmocka_unit_test(test_expand_reduced),
	    cmocka_unit_test_setup_teardown(test_answer_inputs, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_follower_reads_answer, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
