/* ofcd in-process reacting to failures: reported failures and a lost
 * switch re-plan the schedule on the surviving graph, announced, served and
 * verified; a lost port re-wired onto a spare, and every kill point of that
 * re-wiring; the healthy solution kept for warm starts; names with a NUL
 * byte refused; damaged state files refused, never overwritten; a stop
 * while the planner computes leaves no thread behind. */
#include "alltoall/alltoall.h"
#include "tests/unit/ofcd_world.h"

/* ---- failures ---------------------------------------------------------------- */

static Ofc__V1__Response *report(struct ofcd_client *c, uint64_t id, bool restore, bool clear,
				 const char *a, const char *b)
{
	Ofc__V1__Request req = OFC__V1__REQUEST__INIT;
	Ofc__V1__ReportFailure rf = OFC__V1__REPORT_FAILURE__INIT;
	char *items[2] = {(char *)a, (char *)b};

	rf.n_items = (a != NULL) + (b != NULL);
	rf.items = items;
	rf.has_restore = rf.restore = restore;
	rf.has_clear = rf.clear = clear;
	req.body_case = OFC__V1__REQUEST__BODY_REPORT_FAILURE;
	req.report_failure = &rf;
	return call(c, &req, id);
}

/* The next event of that kind (other events skipped); caller frees. */
static Ofc__V1__Response *next_event(struct ofcd_client *c, Ofc__V1__Event__Kind kind)
{
	struct ofc_error err = {0};
	Ofc__V1__Response *r;

	while (ofcd_recv(c, &r, &err) == 0) {
		if (r->body_case == OFC__V1__RESPONSE__BODY_EVENT && r->event->kind == kind)
			return r;
		ofc__v1__response__free_unpacked(r, NULL);
	}
	fail_msg("no event %d: %s", kind, err.msg);
	return NULL;
}

static Ofc__V1__Response *get_schedule(struct ofcd_client *c, const char *coll, uint64_t id)
{
	Ofc__V1__Request req = OFC__V1__REQUEST__INIT;
	Ofc__V1__GetSchedule gs = OFC__V1__GET_SCHEDULE__INIT;

	gs.collective = (char *)coll;
	req.body_case = OFC__V1__REQUEST__BODY_GET_SCHEDULE;
	req.get_schedule = &gs;
	return call(c, &req, id);
}

/* The config's fabric with `failures` added to its YAML (e.g. "failed_links:
 * [[h0, h1]]" under topology): the library's view of what ofcd runs. */
static struct fabric *fabric_with(struct world *w, const char *topology)
{
	char *text = xasprintf(cfg_fmt, topology), path[200];
	struct fabric *f;
	struct ofc_error err = {0};

	snprintf(path, sizeof(path), "%s/lib.yaml", w->dir);
	assert_int_equal(atomic_write(path, text, strlen(text), &err), 0);
	free(text);
	if (fabric_open(path, &f, &err) < 0)
		fail_msg("%s", err.msg);
	return f;
}

static int verify_sent_rc(struct world *w, const Ofc__V1__Schedule *got, const struct graph *g,
			  char *why, size_t n);
static void verify_sent(struct world *w, const Ofc__V1__Schedule *got, const struct graph *g)
{
	char why[400];

	if (verify_sent_rc(w, got, g, why, sizeof(why)) < 0)
		fail_msg("ofcd's schedule fails the verifier on the degraded graph: %s", why);
}

/* What ofcd sent is the library's schedule on f's degraded graph (the same
 * steps, transfers and time), uses no arc between hosts a and b, and passes
 * sched_verify on the degraded graph, read back from the bytes ofcd sent. */
static void check_degraded(struct world *w, const Ofc__V1__Schedule *got, const struct fabric *f,
			   uint32_t a, uint32_t b)
{
	struct schedule_query q = {.fabric = f, .collective = SCHED_ALLREDUCE};
	struct schedule_result sr;
	struct ofc_error err = {0};
	size_t nx = 0;

	assert_true(got->verified);
	assert_non_null(strstr(got->topology, " without "));
	for (size_t t = 0; t < got->n_steps; t++)
		for (size_t k = 0; k < got->steps[t]->n_transfers; k++) {
			const Ofc__V1__Transfer *x = got->steps[t]->transfers[k];

			assert_false((x->src == a && x->dst == b) || (x->src == b && x->dst == a));
			nx++;
		}
	assert_non_null(f->degraded);
	assert_int_equal(schedule_compute(&q, &sr, NULL, &err), 0);
	assert_true(sr.main->s.verified);
	assert_int_equal(got->num_steps, sr.main->s.nsteps);
	assert_int_equal(nx, sr.main->s.nxfers);
	assert_true(got->time_us == sr.main->s.time_us);
	schedule_result_free(&sr);
	verify_sent(w, got, f->degraded);
}

/* sched_verify on the bytes ofcd sent, read back as `ofc` reads a .pb. */
static int verify_sent_rc(struct world *w, const Ofc__V1__Schedule *got, const struct graph *g,
			  char *why, size_t n)
{
	struct ofc_error err = {0};
	char path[200];
	size_t len = protobuf_c_message_get_packed_size(&got->base);
	uint8_t *buf = xmalloc(len);
	struct schedule s;
	struct verify_opts vo = {.graph = g};
	struct verify_report vr;

	protobuf_c_message_pack(&got->base, buf);
	snprintf(path, sizeof(path), "%s/got.pb", w->dir);
	assert_int_equal(atomic_write(path, buf, len, &err), 0);
	free(buf);
	if (schedule_read_pb(path, &s, &err) < 0)
		fail_msg("%s", err.msg);
	int rc = sched_verify(&s, &vo, &vr);
	snprintf(why, n, "%s", rc < 0 ? vr.error : "");
	sched_free(&s);
	return rc;
}

/* The healthy all-to-all run ofcd keeps per config: taken
 * under a byte limit (refused over it), it stands in for the healthy solve
 * of a request with failures on the same graph (warm start, "vs healthy"
 * price; theta as when the healthy graph is solved again), and is ignored
 * on another graph. */
static void test_kept_healthy(void **state)
{
	(void)state;
	struct schedule_query q = {.spec = "torus:4x4",
				   .collective = SCHED_ALLTOALL,
				   .lowering = "paths",
				   .size = 1u << 20,
				   .keep_warm = true};
	struct schedule_result r, d, c;
	struct schedule_kept k, none;
	struct ofc_error err = {0};

	assert_int_equal(schedule_compute(&q, &r, NULL, &err), 0);
	assert_int_equal(schedule_kept_take(&none, &r, 64, &err), -1);
	assert_non_null(strstr(err.msg, "MiB, over the"));
	assert_null(none.warm);
	assert_int_equal(schedule_kept_take(&k, &r, (size_t)1 << 20, &err), 0);
	assert_non_null(k.warm);
	assert_true(k.bytes == mcf_warm_bytes(k.warm) && k.bytes > 64);
	assert_true(k.time_us == r.main->time_us && k.time_us > 0);
	assert_null(r.main->mcf.warm);
	schedule_result_free(&r);

	struct schedule_query qd = q;
	qd.keep_warm = false;
	qd.fail = "0-1";
	qd.kept = &k;
	assert_int_equal(schedule_compute(&qd, &d, NULL, &err), 0);
	assert_true(d.used_kept && d.main->mcf.warm_started && d.main->verified);
	assert_true(d.main->healthy_us == k.time_us);
	qd.kept = NULL;
	assert_int_equal(schedule_compute(&qd, &c, NULL, &err), 0);
	assert_false(c.used_kept);
	assert_true(fabs(d.main->mcf.theta - c.main->mcf.theta) <= 1e-6 * c.main->mcf.theta);
	assert_true(fabs(d.main->healthy_us - c.main->healthy_us) <= 1e-9 * c.main->healthy_us);
	schedule_result_free(&d);
	schedule_result_free(&c);

	qd.spec = "torus:4x8";
	qd.kept = &k;
	assert_int_equal(schedule_compute(&qd, &d, NULL, &err), 0);
	assert_false(d.used_kept);
	schedule_result_free(&d);
	schedule_kept_free(&k);
	assert_null(k.warm);

	/* The planner let go of (schedule_query.cancel set): no schedule,
	 * "cancelled", healthy or with failures (the healthy run and the
	 * degraded one both stop). */
	atomic_bool cancel = true;
	q.cancel = &cancel;
	q.keep_warm = false;
	for (int i = 0; i < 2; i++) {
		q.fail = i ? "0-1" : NULL;
		int rc = schedule_compute(&q, &r, NULL, &err);
		if (rc == 0)
			rc = schedule_check(&r, &err);
		assert_int_equal(rc, -1);
		assert_string_equal(err.msg, "cancelled");
		ofc_error_clear(&err);
	}
}

/* Threads in this process (/proc/self/status). */
static int threads_now(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	int n = -1;

	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, "Threads:", 8) == 0)
			n = atoi(line + 8);
	fclose(f);
	return n;
}

/* Stopping ofcd while its planner computes the workload's MCF:
 * ofcd_close does not wait for the detached thread, and cancels its MCF,
 * so the thread is gone within moments, not when the solve ends (the
 * fluid MCF on genkautz:1024,4 ran on 42 s after the close without the
 * cancel here, 10-50 s elsewhere). */
static void test_stop_planner(void **state)
{
	struct world *w = *state;
	int before = threads_now();
	bool computing = false;

	/* big0: not one of the world's sim twins, so the driver's own. */
	write_config(w, "name: bigfab\n"
			"hosts: {count: 1024, prefix: h, ports: 4}\n"
			"switches:\n"
			"  - {name: big0, type: ocs, ports: 4096, driver: {type: sim}}\n"
			"wiring: {pattern: sequential, switches: [big0]}\n"
			"topology: genkautz:1024,4\n"
			"collectives:\n"
			"  - {op: alltoall, size: 1MiB}\n");
	start(w, 0, 0);
	for (int i = 0; i < 1000 && !computing; i++) {
		pthread_mutex_lock(&w->log_mu);
		computing = w->log.buf && strstr(w->log.buf, "schedule on genkautz:1024,4 in the "
							     "background");
		pthread_mutex_unlock(&w->log_mu);
		if (!computing)
			usleep(10000);
	}
	assert_true(computing);
	sleep(1); /* into the MCF */
	stop(w);
	double t0 = now_seconds();
	while (threads_now() > before && now_seconds() - t0 < 10)
		usleep(10000);
	if (threads_now() > before)
		fail_msg("%d threads 10 s after ofcd_close, %d before ofcd_open", threads_now(),
			 before);
	print_message("stop: the planner gone %.3f s after ofcd_close\n", now_seconds() - t0);
}

/* test_failures' daemon, its clients and what it has seen. */
struct failures {
	struct world *w;
	struct ofcd_client c, wc; /* a client, and one watching events */
	struct fabric *less;	  /* the torus less h0-h1 */
	double healthy_us, degraded_us;
};

/* Start the daemon with a client and a watcher. */
static void failures_start(struct failures *f, uint64_t watch_id)
{
	Ofc__V1__Request req = OFC__V1__REQUEST__INIT;
	Ofc__V1__Watch wa = OFC__V1__WATCH__INIT;
	Ofc__V1__Response *r;

	start(f->w, 30, 0);
	connect_ok(f->w, &f->wc);
	connect_ok(f->w, &f->c);
	req.body_case = OFC__V1__REQUEST__BODY_WATCH;
	req.watch = &wa;
	r = call(&f->wc, &req, watch_id);
	assert_int_equal(r->status, OFC__V1__STATUS__STATUS_OK);
	ofc__v1__response__free_unpacked(r, NULL);
}

static void failures_stop(struct failures *f)
{
	ofcd_disconnect(&f->c);
	ofcd_disconnect(&f->wc);
	stop(f->w);
}

/* The allreduce schedule: on topology, taking time_us (when > 0). */
static void expect_schedule(struct failures *f, uint64_t id, const char *topology, double time_us)
{
	Ofc__V1__Response *r = get_schedule(&f->c, "allreduce", id);

	assert_int_equal(r->status, OFC__V1__STATUS__STATUS_OK);
	assert_string_equal(r->schedule->topology, topology);
	if (time_us > 0)
		assert_true(r->schedule->time_us == time_us);
	ofc__v1__response__free_unpacked(r, NULL);
}

/* Report items (or restore them); expect status and, when given, the
 * message. */
static void expect_report(struct failures *f, uint64_t id, bool restore, const char *a,
			  const char *b, Ofc__V1__Status status, const char *message)
{
	Ofc__V1__Response *r = report(&f->c, id, restore, false, a, b);

	assert_int_equal(r->status, status);
	if (message)
		assert_string_equal(r->message, message);
	ofc__v1__response__free_unpacked(r, NULL);
}

/* A failed link (named either way round): the event carries the
 * re-planned schedule, GetSchedule and the state follow it. */
static void failures_link(struct failures *f)
{
	Ofc__V1__Response *r = report(&f->c, 6, false, false, "h1-h0", NULL), *e;

	assert_int_equal(r->status, OFC__V1__STATUS__STATUS_OK);
	assert_string_equal(r->transaction->kind, "report-failure");
	assert_non_null(strstr(r->message, "1 failure in effect (h0-h1)"));
	assert_non_null(strstr(r->message, "verified"));
	ofc__v1__response__free_unpacked(r, NULL);
	e = next_event(&f->wc, OFC__V1__EVENT__KIND__KIND_SCHEDULE_REPLANNED);
	assert_int_equal(e->event->n_failed, 1);
	assert_string_equal(e->event->failed[0], "h0-h1");
	assert_non_null(e->event->schedule);
	assert_true(e->event->schedule->verified);
	assert_string_equal(e->event->schedule->topology, "torus:8x8 without h0-h1");
	assert_int_equal(e->event->schedule->n_steps, 0); /* summary only */
	assert_true(e->event->schedule->time_us > f->healthy_us);
	f->degraded_us = e->event->schedule->time_us;
	ofc__v1__response__free_unpacked(e, NULL);
	r = get_schedule(&f->c, "allreduce", 7);
	assert_int_equal(r->status, OFC__V1__STATUS__STATUS_OK);
	assert_true(r->schedule->time_us == f->degraded_us);
	check_degraded(f->w, r->schedule, f->less, 0, 1);
	ofc__v1__response__free_unpacked(r, NULL);
	r = get_state(&f->c, 8);
	assert_int_equal(r->state->n_failed, 1);
	assert_string_equal(r->state->failed[0], "h0-h1");
	assert_null(r->state->schedule_error);
	ofc__v1__response__free_unpacked(r, NULL);
}

/* The state's schedule on topology, computed after a commit (off its
 * path): the state once it lands, and its event. */
static void state_schedule_landed(struct failures *f, uint64_t id, const char *topology)
{
	Ofc__V1__Response *r = get_state_settled(&f->c, id), *e;

	assert_non_null(r->state->schedule);
	assert_string_equal(r->state->schedule->topology, topology);
	ofc__v1__response__free_unpacked(r, NULL);
	e = next_event(&f->wc, OFC__V1__EVENT__KIND__KIND_SCHEDULE_REPLANNED);
	assert_non_null(e->event->schedule);
	assert_string_equal(e->event->schedule->topology, topology);
	ofc__v1__response__free_unpacked(e, NULL);
}

/* A Reconfigure keeps the set: on a topology without the link it is out of
 * effect, back on the torus it is in effect again. */
static void failures_reconfigure(struct failures *f)
{
	Ofc__V1__Response *r = reconfigure(&f->c, "circulant:64:3,8", 90);

	assert_int_equal(r->status, OFC__V1__STATUS__STATUS_OK);
	ofc__v1__response__free_unpacked(r, NULL);
	state_schedule_landed(f, 95, "circulant:64:3,8");
	expect_schedule(f, 91, "circulant:64:3,8", 0);
	assert_true(
	    log_count(f->w, "failure h0-h1 is not in effect on topology circulant:64:3,8") >= 1);
	r = reconfigure(&f->c, "torus:8x8", 92);
	assert_int_equal(r->status, OFC__V1__STATUS__STATUS_OK);
	ofc__v1__response__free_unpacked(r, NULL);
	state_schedule_landed(f, 96, "torus:8x8 without h0-h1");
	expect_schedule(f, 93, "torus:8x8 without h0-h1", f->degraded_us);
	r = get_state_settled(&f->c, 94);
	assert_int_equal(r->state->n_failed, 1);
	assert_non_null(r->state->schedule);
	assert_string_equal(r->state->schedule->topology, "torus:8x8 without h0-h1");
	ofc__v1__response__free_unpacked(r, NULL);
}

/* Failures that cut a host off: accepted (they happened), but no schedule
 * survives, and GetSchedule says why. */
static void failures_cut_host(struct failures *f)
{
	Ofc__V1__Request rq = OFC__V1__REQUEST__INIT;
	Ofc__V1__ReportFailure rf = OFC__V1__REPORT_FAILURE__INIT;
	char *more[] = {"h5:2", "h5:3"};
	Ofc__V1__Response *r, *e;

	expect_report(f, 10, false, "h5:0", "h5:1", OFC__V1__STATUS__STATUS_OK, NULL);
	e = next_event(&f->wc, OFC__V1__EVENT__KIND__KIND_SCHEDULE_REPLANNED);
	assert_int_equal(e->event->n_failed, 3);
	ofc__v1__response__free_unpacked(e, NULL);
	rf.n_items = 2;
	rf.items = more;
	rq.body_case = OFC__V1__REQUEST__BODY_REPORT_FAILURE;
	rq.report_failure = &rf;
	r = call(&f->c, &rq, 11);
	assert_int_equal(r->status, OFC__V1__STATUS__STATUS_FAILED);
	assert_non_null(strstr(r->message, "no longer strongly connected"));
	ofc__v1__response__free_unpacked(r, NULL);
	e = next_event(&f->wc, OFC__V1__EVENT__KIND__KIND_SCHEDULE_REPLANNED);
	assert_null(e->event->schedule);
	assert_int_equal(e->event->n_failed, 5);
	ofc__v1__response__free_unpacked(e, NULL);
	r = get_schedule(&f->c, "allreduce", 12);
	assert_int_equal(r->status, OFC__V1__STATUS__STATUS_FAILED);
	assert_non_null(strstr(r->message, "no schedule survives the failures (5 in effect)"));
	ofc__v1__response__free_unpacked(r, NULL);
	r = get_state(&f->c, 13);
	assert_non_null(r->state->schedule_error);
	assert_null(r->state->schedule);
	ofc__v1__response__free_unpacked(r, NULL);
}

/* Restore all: the healthy schedule again, the file at path gone. */
static void failures_restore(struct failures *f, const char *path)
{
	Ofc__V1__Response *r = report(&f->c, 14, true, true, NULL, NULL), *e;

	assert_int_equal(r->status, OFC__V1__STATUS__STATUS_OK);
	assert_non_null(strstr(r->message, "no failure in effect"));
	ofc__v1__response__free_unpacked(r, NULL);
	e = next_event(&f->wc, OFC__V1__EVENT__KIND__KIND_SCHEDULE_REPLANNED);
	assert_int_equal(e->event->n_failed, 0);
	assert_string_equal(e->event->schedule->topology, "torus:8x8");
	assert_true(e->event->schedule->time_us == f->healthy_us);
	ofc__v1__response__free_unpacked(e, NULL);
	expect_schedule(f, 15, "torus:8x8", f->healthy_us);
	assert_int_equal(access(path, F_OK), -1);
}

/* ofcd_open on w's config and state directory: fails, err says why. */
static void open_fails(struct world *w, struct ofc_error *err)
{
	char cwd[1024], cred[1100];
	struct ofcd_opts o = {
	    .config_path = w->cfg,
	    .socket_path = w->sock,
	    .state_dir = w->dir,
	    .log_level = OFCD_LOG_DEBUG,
	    .log = log_line,
	    .log_ctx = w,
	    .sim_lookup = lookup,
	    .sim_ctx = w,
	};
	struct ofcd *d = NULL;

	assert_non_null(getcwd(cwd, sizeof(cwd)));
	snprintf(cred, sizeof(cred), "%s/configs/credentials", cwd);
	o.credentials_dir = cred;
	ofc_error_clear(err);
	assert_int_equal(ofcd_open(&o, &d, err), -1);
	assert_null(d);
}

/* text in the state file at path: ofcd refuses to start, naming the file,
 * the line and why, calling it damaged with the command that moves it
 * aside; the file is left as it was (case i of a table). */
static void refused_as_damaged(struct world *w, const char *path, const char *text, unsigned line,
			       const char *why, size_t i)
{
	struct ofc_error err = {0};
	char buf[1024], *got;
	size_t len;

	assert_int_equal(atomic_write(path, text, strlen(text), &err), 0);
	open_fails(w, &err);
	ofc_error_str(&err, buf, sizeof(buf));
	if (strcmp(err.file, path) != 0 || err.line != line || !strstr(err.msg, why) ||
	    !strstr(err.msg, "the file is damaged") || !strstr(err.msg, "`mv "))
		fail_msg("case %zu: %s", i, buf);
	assert_int_equal(read_file(path, 4096, &got, &len, &err), 0);
	assert_int_equal(len, strlen(text));
	assert_memory_equal(got, text, len);
	free(got);
}


/* A damaged failures file at path stops the start, with the file's line. */
static void failures_damaged_file(struct world *w, const char *path)
{
	struct ofc_error err = {0};

	assert_int_equal(atomic_write(path, "h0-h1\nnot, a failure\n", 21, &err), 0);
	open_fails(w, &err);
	assert_non_null(strstr(err.msg, "the file is damaged"));
	assert_int_equal(err.line, 2);
}

/* The failures file a newer ofcd wrote (a rolling upgrade): a field after
 * an item this ofcd does not know is left out with a note in the log and
 * the failure kept, with the fields it knows ("host"); what is damage
 * still stops the start with the line: a field that is no word, a file
 * cut short (its last line without the newline ofcd ends every line
 * with); the file is left as it was. */
static void test_failed_file_fields(void **state)
{
	struct world *w = *state;
	struct ofc_error err = {0};
	struct ofcd_client c;
	char path[1200];
	const char newer[] = "# failures\nh0-h1 host since=17\nh2:1 shelf\nh3:0\n";

	snprintf(path, sizeof(path), "%s/simfab.failed", w->dir);
	assert_int_equal(atomic_write(path, newer, strlen(newer), &err), 0);
	start(w, 30, 0);
	connect_ok(w, &c);
	Ofc__V1__Response *r = get_state(&c, 1);
	assert_int_equal(r->status, OFC__V1__STATUS__STATUS_OK);
	assert_int_equal(r->state->n_failed, 3);
	assert_string_equal(r->state->failed[0], "h0-h1");
	assert_string_equal(r->state->failed[1], "h2:1");
	assert_string_equal(r->state->failed[2], "h3:0");
	assert_int_equal(r->state->n_failed_by_host, 1);
	assert_string_equal(r->state->failed_by_host[0], "h0-h1");
	ofc__v1__response__free_unpacked(r, NULL);
	assert_int_equal(log_count(w, "failure h0-h1: field 'since=17' is not known"), 1);
	assert_int_equal(log_count(w, "failure h2:1: field 'shelf' is not known"), 1);
	ofcd_disconnect(&c);
	stop(w);

	const struct {
		const char *text;
		unsigned line;
		const char *why;
	} bad[] = {
	    {"h0-h1\nh2:1", 2, "no newline at its end (the file was cut short)"},
	    {"h0-h1 host\nh2:1 ho", 2, "no newline at its end"},
	    {"h0-h1 Host\n", 1, "after the failure, 'Host' (not a field"},
	    {"h0-h1\nh2:1 host,x\n", 2, "after the failure, 'host,x'"},
	    {"h0-h1 \x01\n", 1, "after the failure"},
	};
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		refused_as_damaged(w, path, bad[i].text, bad[i].line, bad[i].why, i);
	}
	unlink(path);
}

static void test_failures(void **state)
{
	struct failures f = {.w = *state};
	const Ofc__V1__Status invalid = OFC__V1__STATUS__STATUS_INVALID;
	Ofc__V1__Response *r;
	char why[400], path[200];

	f.less = fabric_with(f.w, "{spec: torus:8x8, failed_links: [[h0, h1]]}");
	failures_start(&f, 42);
	r = get_schedule(&f.c, "allreduce", 1);
	assert_int_equal(r->status, OFC__V1__STATUS__STATUS_OK);
	assert_null(strstr(r->schedule->topology, "without"));
	f.healthy_us = r->schedule->time_us;
	/* The check below has teeth: the healthy schedule uses h0 -> h1. */
	assert_int_equal(verify_sent_rc(f.w, r->schedule, f.less->degraded, why, sizeof(why)), -1);
	ofc__v1__response__free_unpacked(r, NULL);

	/* Refused: no such link, no such host, bad syntax; nothing changes. */
	expect_report(&f, 2, false, "h0-h9", NULL, invalid,
		      "'h0-h9': topology 'torus:8x8' has no such link");
	expect_report(&f, 3, false, "h0-h1", "h99:0", invalid, "'h99:0': no host 'h99'");
	expect_report(&f, 4, false, "h0 h1", NULL, invalid, NULL);
	expect_report(&f, 5, true, "h2-h3", NULL, invalid, "'h2-h3' was not reported failed");

	failures_link(&f);
	/* The set survives a restart (persisted before the answer). */
	failures_stop(&f);
	failures_start(&f, 43);
	expect_schedule(&f, 9, "torus:8x8 without h0-h1", f.degraded_us);
	failures_reconfigure(&f);
	failures_cut_host(&f);
	snprintf(path, sizeof(path), "%s/simfab.failed", f.w->dir);
	failures_restore(&f, path);

	/* Read-only clients may not report. */
	struct ofcd_client ro;
	struct ofc_error err = {0};

	assert_int_equal(ofcd_connect(&ro, f.w->ro, &err), 0);
	ro.timeout = 30;
	r = report(&ro, 16, false, false, "h0-h1", NULL);
	assert_int_equal(r->status, OFC__V1__STATUS__STATUS_DENIED);
	ofc__v1__response__free_unpacked(r, NULL);
	ofcd_disconnect(&ro);

	failures_stop(&f);
	failures_damaged_file(f.w, path);
	fabric_free(f.less);
}

/* A switch lost: the host ports cabled to it fail with it (port 3 of every
 * host on ocs3: the torus's -y arcs), the schedule is re-planned without
 * them; when it is back, the healthy one returns. */
static void test_failures_lost_switch(void **state)
{
	struct world *w = *state;
	struct ofcd_client wc, c;
	Ofc__V1__Request req = OFC__V1__REQUEST__INIT;
	Ofc__V1__Watch wa = OFC__V1__WATCH__INIT;
	Ofc__V1__Response *r, *e;
	static const char four[] =
	    "name: simfab\n"
	    "hosts: {count: 64, prefix: h, ports: 4}\n"
	    "switches:\n"
	    "  - {name: ocs0, type: ocs, ports: 64, driver: {type: sim}}\n"
	    "  - {name: ocs1, type: ocs, ports: 64, driver: {type: sim}}\n"
	    "  - {name: ocs2, type: ocs, ports: 64, driver: {type: sim}}\n"
	    "  - {name: ocs3, type: ocs, ports: 64, driver: {type: sim}}\n"
	    "wiring: {pattern: per-port, switches: [ocs0, ocs1, ocs2, ocs3]}\n"
	    "topology: torus:8x8\n"
	    "collectives:\n"
	    "  - {op: allreduce, size: 1MiB}\n";

	write_config(w, four);
	start_with(w, 30, 0, (struct limits){.probe_interval = 0.05});
	connect_ok(w, &wc);
	connect_ok(w, &c);
	req.body_case = OFC__V1__REQUEST__BODY_WATCH;
	req.watch = &wa;
	r = call(&wc, &req, 1);
	ofc__v1__response__free_unpacked(r, NULL);
	sim_device_fault(&w->more[2], FAULT_CLOSE, 1, UINT64_MAX / 2);
	e = next_event(&wc, OFC__V1__EVENT__KIND__KIND_SCHEDULE_REPLANNED);
	assert_int_equal(e->event->n_failed, 64);
	for (size_t i = 0; i < e->event->n_failed; i++)
		assert_non_null(strstr(e->event->failed[i], ":3"));
	assert_non_null(e->event->schedule);
	assert_true(e->event->schedule->verified);
	ofc__v1__response__free_unpacked(e, NULL);
	r = get_schedule(&c, "allreduce", 2);
	assert_int_equal(r->status, OFC__V1__STATUS__STATUS_OK);
	{
		/* No transfer on an arc that port 3 carried (its transmit fibre
		 * and the receive fibre of the port that sent to it), and the
		 * verifier passes it on the graph without those arcs. */
		struct fabric *f;
		struct ofc_error err = {0};

		assert_int_equal(fabric_open(w->cfg, &f, &err), 0);
		const struct graph *g = f->graph;
		const uint32_t *to3 = f->ports.to + 3 * (size_t)g->n;
		bool *gone = xcalloc(g->m, sizeof(bool));
		uint32_t ngone = 0;

		for (uint32_t u = 0; u < g->n; u++)
			for (uint32_t a = g->off[u]; a < g->off[u + 1]; a++)
				if (g->adj[a] == to3[u]) {
					gone[a] = true;
					ngone++;
				}
		assert_int_equal(ngone, 64);
		assert_true(r->schedule->verified);
		for (size_t t = 0; t < r->schedule->n_steps; t++)
			for (size_t k = 0; k < r->schedule->steps[t]->n_transfers; k++) {
				const Ofc__V1__Transfer *x = r->schedule->steps[t]->transfers[k];

				assert_true(x->dst != to3[x->src]);
			}
		struct graph *dg = topo_without_arcs(g, gone, "lost ocs3");
		verify_sent(w, r->schedule, dg);
		graph_free(dg);
		free(gone);
		fabric_free(f);
	}
	ofc__v1__response__free_unpacked(r, NULL);
	sim_device_fault(&w->more[2], FAULT_CLOSE, 0, 0);
	e = next_event(&wc, OFC__V1__EVENT__KIND__KIND_SCHEDULE_REPLANNED);
	assert_int_equal(e->event->n_failed, 0);
	assert_string_equal(e->event->schedule->topology, "torus:8x8");
	ofc__v1__response__free_unpacked(e, NULL);
	ofcd_disconnect(&c);
	ofcd_disconnect(&wc);
	stop(w);
}

static const char spare[] = "name: simfab\n"
			    "hosts: {count: 16, prefix: h, ports: 5}\n"
			    "switches:\n"
			    "  - {name: ocs0, type: ocs, ports: 80, driver: {type: sim}}\n"
			    "wiring: {pattern: sequential, switches: [ocs0]}\n"
			    "topology: torus:4x4\n"
			    "collectives:\n"
			    "  - {op: allgather, size: 1MiB}\n";

/* Re-wiring a lost port onto a spare: sixteen hosts with a fifth
 * port, all on ocs0 (sequential: host h's port p on switch port 1 + 5h +
 * p), torus:4x4 on ports 0-3. With ocs0 refusing a command the move's
 * transaction fails and rolls back: the port is a plain failure (the
 * schedule runs without it) and no move is kept. Reported again once the
 * switch works, the port moves onto h5:4 and the schedule runs on the whole
 * torus; the move is in STATE_DIR/simfab.rewired and the switch holds the
 * spare's circuits (30 -> 31 out to h6:0, 21 -> 30 in from h4:0). */
static void test_rewire(void **state)
{
	struct world *w = *state;
	struct ofcd_client c;
	Ofc__V1__Response *r;
	char path[300];

	write_config(w, spare);
	snprintf(path, sizeof(path), "%s/simfab.rewired", w->dir);
	start(w, 30, 0);
	connect_ok(w, &c);
	w->sim.mode = FAULT_DENY;
	w->sim.fail_count = 1;
	w->sim.fail_at = w->sim.commands + 3;
	r = report(&c, 1, false, false, "h5:0", NULL);
	assert_int_equal(r->status, OFC__V1__STATUS__STATUS_OK);
	if (!strstr(r->message, "; moving h5:0 to h5:4 failed: ") ||
	    !strstr(r->message, "bfb allgather on torus:4x4 without h5:0: "))
		fail_msg("%s", r->message);
	ofc__v1__response__free_unpacked(r, NULL);
	assert_int_equal(access(path, F_OK), -1);

	w->sim.fail_at = 0;
	r = report(&c, 2, false, false, "h5:0", NULL);
	assert_int_equal(r->status, OFC__V1__STATUS__STATUS_OK);
	if (!strstr(r->message, "; h5:0 moved to spare port h5:4 on ocs0 (transaction ") ||
	    !strstr(r->message, "bfb allgather on torus:4x4: "))
		fail_msg("%s", r->message);
	ofc__v1__response__free_unpacked(r, NULL);
	char *text = NULL;
	size_t len;
	struct ofc_error err = {0};
	assert_int_equal(read_file(path, 4096, &text, &len, &err), 0);
	assert_non_null(strstr(text, "\nh5 0 4\n"));
	free(text);
	bool out = false, in = false, old = false;
	for (uint32_t i = 0; i < w->sim.state.nxc; i++) {
		const struct xconn *x = &w->sim.state.xc[i];

		out |= x->in == 30 && x->out == 31;
		in |= x->in == 21 && x->out == 30;
		old |= (x->in == 26 && x->out == 31) || (x->in == 21 && x->out == 26);
	}
	assert_true(out && in && !old);
	ofcd_disconnect(&c);
	stop(w);
}

/* ReportFailure items with a NUL byte are refused: protobuf-c cut "h0\0x"
 * at the NUL and the daemon failed h0. So are control
 * characters, and a NUL in any other request's string (a topology spec).
 * Nothing changes: no failure in effect afterwards. */
static void test_nul_in_names(void **state)
{
	struct world *w = *state;
	/* Request{id 1, report_failure{items "h0\0x"}} by hand */
	static const uint8_t nul_item[] = {0x08, 0x01, 0x42, 0x06, 0x0a, 0x04, 'h', '0', 0x00, 'x'};
	/* Request{id 2, reconfigure{topology "torus:8x8\0z"}} */
	static const uint8_t nul_spec[] = {0x08, 0x02, 0x1a, 0x0d, 0x0a, 0x0b, 't',  'o', 'r',
					   'u',	 's',  ':',  '8',  'x',	 '8',  0x00, 'z'};
	struct ofcd_client c;
	Ofc__V1__Response *r;
	int fd;

	start(w, 30, 0);
	fd = raw_connect(w->sock);
	send_frame(fd, nul_item, sizeof(nul_item));
	r = read_answer(fd);
	assert_non_null(r);
	assert_int_equal(r->id, 1);
	assert_int_equal(r->status, OFC__V1__STATUS__STATUS_INVALID);
	assert_string_equal(r->message, "request 1: field 'items' holds a NUL byte; names, specs "
					"and paths are text without one");
	ofc__v1__response__free_unpacked(r, NULL);
	send_frame(fd, nul_spec, sizeof(nul_spec));
	r = read_answer(fd);
	assert_non_null(r);
	assert_int_equal(r->status, OFC__V1__STATUS__STATUS_INVALID);
	assert_non_null(strstr(r->message, "field 'topology' holds a NUL byte"));
	ofc__v1__response__free_unpacked(r, NULL);
	close(fd);

	connect_ok(w, &c);
	r = report(&c, 3, false, false, "h0\x01", NULL);
	assert_int_equal(r->status, OFC__V1__STATUS__STATUS_INVALID);
	ofc__v1__response__free_unpacked(r, NULL);
	r = report(&c, 4, false, false, "h0\n", NULL);
	assert_int_equal(r->status, OFC__V1__STATUS__STATUS_INVALID);
	ofc__v1__response__free_unpacked(r, NULL);
	r = get_state(&c, 5);
	assert_int_equal(r->state->n_failed, 0);
	assert_string_equal(r->state->target_topology, "torus:8x8");
	ofc__v1__response__free_unpacked(r, NULL);
	ofcd_disconnect(&c);
	stop(w);
}

/* ---- damaged state files ---------------------------------------------------- */

/* .rewired lines that are not a move of this config's hosts stop the start
 * with the file, the line and the mv; the file is left as it was (such
 * lines used to be accepted, "h0 -1 4294967295" as port 4294967295, then
 * found not to fit, dropped and the file deleted). A FIFO or a directory
 * in a state file's place is refused with its name (it was "ofcd: is not a
 * regular file"), or, for the record and the journal (which ofcd serves
 * without, refusing changes), logged with it; nothing is removed. */
static void test_damaged_state_files(void **state)
{
	struct world *w = *state;
	struct ofc_error err = {0};
	char path[200], buf[1200], *text;
	size_t len;
	const struct {
		const char *text;
		unsigned line;
		const char *why;
	} bad[] = {
	    {"# moves\nh0 -1 4294967295\n", 2, "not HOST FROM TO"},
	    {"zz 0 2\n", 1, "'zz' is not a host of fabric 'simfab'"},
	    {"h0 0 9\n", 1, "h0 0 -> 9: not two different ports of h0 (0..4)"},
	    {"h0 3 3\n", 1, "h0 3 -> 3: not two different ports of h0 (0..4)"},
	    {"h0 0 4294967296\n", 1, "not HOST FROM TO"},
	    {"h0 0 4 extra\n", 1, "not HOST FROM TO"},
	    {"h1 0 4\nh1 4 3\n", 2, "a port of h1 4 -> 3 is in an earlier move too"},
	    {"h\x01 0 4\n", 1, "not HOST FROM TO"},
	};

	write_config(w, spare);
	snprintf(path, sizeof(path), "%s/simfab.rewired", w->dir);
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		refused_as_damaged(w, path, bad[i].text, bad[i].line, bad[i].why, i);
	}
	/* what ofcd writes is fine */
	assert_int_equal(atomic_write(path, "# moves\nh1 0 4\n", 15, &err), 0);
	start(w, 30, 0);
	stop(w);
	unlink(path);

	/* A FIFO for .rewired, a directory for .failed: refused, named, kept. */
	assert_int_equal(mkfifo(path, 0600), 0);
	open_fails(w, &err);
	ofc_error_str(&err, buf, sizeof(buf));
	if (strcmp(err.file, path) != 0 || !strstr(err.msg, "is not a regular file") ||
	    !strstr(err.msg, "`mv "))
		fail_msg("FIFO: %s", buf);
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	assert_true(S_ISFIFO(st.st_mode));
	unlink(path);
	snprintf(path, sizeof(path), "%s/simfab.failed", w->dir);
	assert_int_equal(mkdir(path, 0700), 0);
	open_fails(w, &err);
	ofc_error_str(&err, buf, sizeof(buf));
	if (strcmp(err.file, path) != 0 || !strstr(err.msg, "is not a regular file (a directory)"))
		fail_msg("directory: %s", buf);
	assert_int_equal(rmdir(path), 0);

	/* The record a directory, the journal a FIFO: ofcd serves (changes
	 * refused) and its log names them. */
	char rec[200], jour[200];
	snprintf(rec, sizeof(rec), "%s/simfab.state", w->dir);
	snprintf(jour, sizeof(jour), "%s/simfab.journal", w->dir);
	assert_int_equal(mkdir(rec, 0700), 0);
	assert_int_equal(mkfifo(jour, 0600), 0);
	start(w, 30, 0);
	stop(w);
	char *want_rec =
		 xasprintf("%s: is not a regular file (a directory); nothing is planned", rec),
	     *want_jour = xasprintf("%s: is not a regular file (a FIFO); nothing is planned", jour);
	pthread_mutex_lock(&w->log_mu);
	bool named = strstr(w->log.buf, want_rec) && strstr(w->log.buf, want_jour);
	pthread_mutex_unlock(&w->log_mu);
	if (!named)
		fail_msg("log: %s", w->log.buf);
	free(want_rec);
	free(want_jour);
	assert_int_equal(stat(rec, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_int_equal(stat(jour, &st), 0);
	assert_true(S_ISFIFO(st.st_mode));
	rmdir(rec);
	unlink(jour);

	/* .held: bytes that are no HeldPartitions stop the start, named with
	 * the mv; an entry the config cannot hold (a host it lacks) is
	 * dropped, logged, and the file written again without it. */
	snprintf(path, sizeof(path), "%s/simfab.held", w->dir);
	assert_int_equal(atomic_write(path, "\xff\xff\xff", 3, &err), 0);
	open_fails(w, &err);
	ofc_error_str(&err, buf, sizeof(buf));
	if (strcmp(err.file, path) != 0 || !strstr(err.msg, "not an ofc.v1.HeldPartitions") ||
	    !strstr(err.msg, ".held.corrupt'"))
		fail_msg(".held: %s", buf);
	char *hosts[] = {"h0", "zz"}, *ok_hosts[] = {"h1"};
	Ofc__V1__HeldPartitions__Held e[2] = {OFC__V1__HELD_PARTITIONS__HELD__INIT,
					      OFC__V1__HELD_PARTITIONS__HELD__INIT},
				      *pe[2] = {&e[0], &e[1]};
	Ofc__V1__HeldPartitions hp = OFC__V1__HELD_PARTITIONS__INIT;
	e[0] = (Ofc__V1__HeldPartitions__Held){
	    .base = e[0].base, .name = "gone", .n_hosts = 2, .hosts = hosts, .topology = "ring:2"};
	e[1] = (Ofc__V1__HeldPartitions__Held){.base = e[1].base,
					       .name = "kept",
					       .n_hosts = 1,
					       .hosts = ok_hosts,
					       .topology = "ring:1",
					       .owner = "uid:7"};
	hp.n_held = 2;
	hp.held = pe;
	uint8_t hb[256];
	size_t hl = ofc__v1__held_partitions__pack(&hp, hb);
	assert_int_equal(atomic_write(path, hb, hl, &err), 0);
	start(w, 30, 0);
	stop(w);
	pthread_mutex_lock(&w->log_mu);
	named = strstr(w->log.buf, "partition gone dropped: the store's entry does not fit the "
				   "config: the config (fabric simfab) has no host zz") != NULL;
	pthread_mutex_unlock(&w->log_mu);
	if (!named)
		fail_msg("log: %s", w->log.buf);
	assert_int_equal(read_file(path, 4096, &text, &len, &err), 0);
	Ofc__V1__HeldPartitions *got =
	    ofc__v1__held_partitions__unpack(NULL, len, (const uint8_t *)text);
	assert_non_null(got);
	assert_int_equal(got->n_held, 1);
	assert_string_equal(got->held[0]->name, "kept");
	assert_string_equal(got->held[0]->owner, "uid:7");
	assert_int_equal(got->n_gone, 1);
	assert_string_equal(got->gone[0]->name, "gone");
	assert_true(got->gone[0]->dropped);
	ofc__v1__held_partitions__free_unpacked(got, NULL);
	free(text);
	unlink(path);
}

/* ---- kill points of a re-wiring ------------------------------------------ */

/* Where ofcd dies in the re-wiring's transaction: before its first change,
 * half-way, before the read-back (every change made), with the journal at
 * committing and the record old or new, after the commit with .rewired
 * not yet saved, and with the journal copied while it ran and put back
 * after the commit. */
enum rewire_kill {
	RK_FIRST_CHANGE,
	RK_MID,
	RK_BEFORE_READBACK,
	RK_COMMITTING,
	RK_RECORDED,
	RK_REWIRED_BEHIND,
	RK_JOURNAL_PUT_BACK,
	RK_POINTS
};
static const char *const rk_names[] = {
    "before the first change", "half-way",
    "before the read-back",    "committing, old record",
    "committing, new record",  "committed, .rewired not saved",
    "journal put back",
};

/* Write the journal of snapshot cp again in phase p (its bytes). */
static void journal_phase_again(struct world *w, const struct crash_point *cp,
				Ofc__V1__Journal__Phase p)
{
	const struct crash_file *jf = crash_file(cp, "simfab.journal");
	struct ofc_error err = {0};
	char path[200];

	assert_non_null(jf);
	Ofc__V1__Journal *j = ofc__v1__journal__unpack(NULL, jf->len, (const uint8_t *)jf->data);
	assert_non_null(j);
	j->phase = p;
	size_t len = ofc__v1__journal__get_packed_size(j);
	uint8_t *buf = xmalloc(len + 1);
	ofc__v1__journal__pack(j, buf);
	snprintf(path, sizeof(path), "%s/simfab.journal", w->dir);
	assert_int_equal(atomic_write(path, buf, len, &err), 0);
	free(buf);
	ofc__v1__journal__free_unpacked(j, NULL);
}

static void remove_state(struct world *w)
{
	static const char *const ext[] = {"state", "journal", "rewired", "failed", "lock"};
	char path[200];

	for (size_t i = 0; i < ARRAY_SIZE(ext); i++) {
		snprintf(path, sizeof(path), "%s/simfab.%s", w->dir, ext[i]);
		unlink(path);
	}
}

/* Reconfigure to circulant:16:1 (ports 0 and 1 of each host; 2..4 spare),
 * then h5:0 fails and is moved onto h5:2 (4 operations); ofcd dies at kill
 * point k of that transaction and starts again with its config file, which
 * says torus:4x4. The restart must serve what the devices hold: the
 * circulant with the move, in the state, the schedule, .rewired and the
 * record; or, killed before the device held the target, the circulant
 * with h5:0 failed and no move. It used to record the config's torus, drop
 * the move and delete .rewired, and serve the torus's schedule. */
static void rewire_killed(struct world *w, enum rewire_kill k)
{
	struct ofcd_client c;
	struct crash_point cp, done;
	struct device_state pre, tgt;
	Ofc__V1__Response *r;
	char path[200], *text = NULL;
	size_t len;
	struct ofc_error err = {0};

	remove_state(w);
	state_clear(&w->sim.state);
	write_config(w, spare);
	start(w, 30, 0);
	connect_ok(w, &c);
	r = reconfigure(&c, "circulant:16:1", 1);
	assert_int_equal(r->status, OFC__V1__STATUS__STATUS_OK);
	ofc__v1__response__free_unpacked(r, NULL);
	state_init(&pre, DEV_SWITCH);
	state_copy(&pre, &w->sim.state);
	/* the re-wiring, on a ctl of its own: open (1), read (2), 4 changes
	 * (3..6), the read-back (7) */
	uint64_t c0 = w->sim.commands;
	crash_arm(&cp, w->dir, &w->sim, c0 + (k == RK_FIRST_CHANGE ? 3 : k == RK_MID ? 5 : 7));
	r = report(&c, 2, false, false, "h5:0", NULL);
	assert_int_equal(r->status, OFC__V1__STATUS__STATUS_OK);
	if (!strstr(r->message, "h5:0 moved to spare port h5:2 on ocs0 (transaction 2, 4 "
				"operations)"))
		fail_msg("%s", r->message);
	ofc__v1__response__free_unpacked(r, NULL);
	assert_true(cp.taken);
	state_init(&tgt, DEV_SWITCH);
	state_copy(&tgt, &w->sim.state);
	/* the points are where they say: the journal written, the device at
	 * neither end half-way */
	assert_non_null(crash_file(&cp, "simfab.journal"));
	assert_int_equal(state_equal(&cp.state, &pre), k == RK_FIRST_CHANGE);
	assert_int_equal(state_equal(&cp.state, &tgt), k >= RK_BEFORE_READBACK);
	ofcd_disconnect(&c);
	stop(w);
	crash_arm(&done, w->dir, &w->sim, 0);
	crash_take(&done);

	/* what a kill -9 there leaves */
	crash_restore(k <= RK_COMMITTING ? &cp : &done);
	if (k == RK_COMMITTING || k == RK_RECORDED)
		journal_phase_again(w, &cp, OFC__V1__JOURNAL__PHASE__PHASE_COMMITTING);
	else if (k == RK_JOURNAL_PUT_BACK)
		journal_phase_again(w, &cp, OFC__V1__JOURNAL__PHASE__PHASE_APPLYING);
	snprintf(path, sizeof(path), "%s/simfab.rewired", w->dir);
	if (k == RK_REWIRED_BEHIND || k == RK_RECORDED || k == RK_JOURNAL_PUT_BACK)
		unlink(path);

	start(w, 30, 0);
	connect_ok(w, &c);
	r = get_state(&c, 3);
	assert_int_equal(r->status, OFC__V1__STATUS__STATUS_OK);
	const Ofc__V1__State *st = r->state;
	assert_null(r->state->transaction); /* no unfinished transaction */
	if (k <= RK_MID) {
		/* undone: the circulant, h5:0 a plain failure */
		assert_true(state_equal(&w->sim.state, &pre));
		assert_int_equal(st->n_moved, 0);
		assert_int_equal(access(path, F_OK), -1);
		assert_int_equal(st->n_failed, 1);
		assert_string_equal(st->failed[0], "h5:0");
		assert_int_equal(st->config_generation, 1);
	} else {
		assert_true(state_equal(&w->sim.state, &tgt));
		if (st->n_moved != 1 || strcmp(st->moved[0], "h5:0>h5:2") != 0 ||
		    !st->target_topology || strcmp(st->target_topology, "circulant:16:1") != 0)
			fail_msg("killed %s: served %s with %zu moved port(s)", rk_names[k],
				 st->target_topology ? st->target_topology : "-", st->n_moved);
		assert_int_equal(st->config_generation, 2);
		assert_true(st->devices[0]->at_target);
		assert_int_equal(read_file(path, 4096, &text, &len, &err), 0);
		assert_non_null(strstr(text, "\nh5 0 2\n"));
		free(text);
	}
	ofc__v1__response__free_unpacked(r, NULL);
	r = get_schedule(&c, "allgather", 4);
	assert_int_equal(r->status, OFC__V1__STATUS__STATUS_OK);
	if (strcmp(r->schedule->topology,
		   k <= RK_MID ? "circulant:16:1 without h5:0" : "circulant:16:1") != 0)
		fail_msg("killed %s: schedule on %s", rk_names[k], r->schedule->topology);
	ofc__v1__response__free_unpacked(r, NULL);
	ofcd_disconnect(&c);
	stop(w);
	crash_free(&cp);
	crash_free(&done);
	state_free(&pre);
	state_free(&tgt);
}

static void test_rewire_kill_points(void **state)
{
	struct world *w = *state;

	for (int k = 0; k < RK_POINTS; k++)
		rewire_killed(w, (enum rewire_kill)k);
}

/* ---- kept as structure ------------------------------------------------------------ */

static Ofc__V1__Response *get_reduced(struct ofcd_client *c, uint64_t id)
{
	Ofc__V1__Request req = OFC__V1__REQUEST__INIT;
	Ofc__V1__GetSchedule gs = OFC__V1__GET_SCHEDULE__INIT;

	gs.collective = "allreduce";
	gs.has_reduced = gs.reduced = 1;
	req.body_case = OFC__V1__REQUEST__BODY_GET_SCHEDULE;
	req.get_schedule = &gs;
	return call(c, &req, id);
}

static bool same_steps(const Ofc__V1__Schedule *a, const Ofc__V1__Schedule *b)
{
	if (a->n_steps != b->n_steps || a->time_us != b->time_us)
		return false;
	for (size_t t = 0; t < a->n_steps; t++) {
		if (a->steps[t]->n_transfers != b->steps[t]->n_transfers)
			return false;
		for (size_t k = 0; k < a->steps[t]->n_transfers; k++) {
			const Ofc__V1__Transfer *x = a->steps[t]->transfers[k],
						*y = b->steps[t]->transfers[k];

			if (x->src != y->src || x->dst != y->dst || x->port != y->port ||
			    x->origin != y->origin || x->offset != y->offset ||
			    x->length != y->length)
				return false;
		}
	}
	return true;
}

/* GetSchedule asking for the structure on a fabric with a failed link:
 * the healthy program and a patch, answered as its expansion (no reduced
 * form in the header), which the verifier passes on the degraded graph
 * read back from the bytes sent, with the transfers its header counts, no
 * arc of the failed link and the library's patched figures; restored, the
 * healthy reduced program comes back bit for bit. */
static void test_failures_patched(void **state)
{
	struct world *w = *state;
	struct fabric *less = fabric_with(w, "{spec: torus:8x8, failed_links: [[h5, h6]]}");
	struct schedule_query q = {
	    .fabric = less, .collective = SCHED_ALLREDUCE, .reduced = SCHEDULE_REDUCED_ALWAYS};
	struct schedule_result lib;
	struct ofc_error err = {0};
	struct ofcd_client c;
	Ofc__V1__Response *r, *healthy;
	size_t nx = 0;

	start(w, 30, 0);
	connect_ok(w, &c);
	healthy = get_reduced(&c, 1);
	assert_int_equal(healthy->status, OFC__V1__STATUS__STATUS_OK);
	assert_non_null(healthy->schedule->reduced);
	r = report(&c, 2, false, false, "h5-h6", NULL);
	assert_int_equal(r->status, OFC__V1__STATUS__STATUS_OK);
	ofc__v1__response__free_unpacked(r, NULL);

	r = get_reduced(&c, 3);
	assert_int_equal(r->status, OFC__V1__STATUS__STATUS_OK);
	assert_true(r->schedule->verified);
	assert_null(r->schedule->reduced);
	for (size_t t = 0; t < r->schedule->n_steps; t++)
		for (size_t k = 0; k < r->schedule->steps[t]->n_transfers; k++) {
			const Ofc__V1__Transfer *x = r->schedule->steps[t]->transfers[k];

			assert_false((x->src == 5 && x->dst == 6) || (x->src == 6 && x->dst == 5));
			nx++;
		}
	assert_int_equal(nx, r->schedule->num_transfers);
	verify_sent(w, r->schedule, less->degraded);
	assert_int_equal(schedule_compute(&q, &lib, NULL, &err), 0);
	assert_true(lib.main->is_patched && lib.main->verified);
	assert_int_equal(nx, lib.main->ntransfers);
	assert_int_equal(r->schedule->num_steps, lib.main->s.nsteps);
	assert_true(r->schedule->time_us == lib.main->s.time_us);
	schedule_result_free(&lib);
	ofc__v1__response__free_unpacked(r, NULL);

	r = report(&c, 4, true, false, "h5-h6", NULL);
	assert_int_equal(r->status, OFC__V1__STATUS__STATUS_OK);
	ofc__v1__response__free_unpacked(r, NULL);
	r = get_reduced(&c, 5);
	assert_int_equal(r->status, OFC__V1__STATUS__STATUS_OK);
	assert_non_null(r->schedule->reduced);
	assert_true(same_steps(r->schedule, healthy->schedule));
	ofc__v1__response__free_unpacked(r, NULL);
	ofc__v1__response__free_unpacked(healthy, NULL);
	ofcd_disconnect(&c);
	stop(w);
	fabric_free(less);
}

static bool crosses(const struct schedule *s, uint32_t a, uint32_t b)
{
	for (size_t i = 0; i < s->nxfers; i++)
		if ((s->xfers[i].src == a && s->xfers[i].dst == b) ||
		    (s->xfers[i].src == b && s->xfers[i].dst == a))
			return true;
	return false;
}

/* The config's failed links and a request's --fail patched together: the
 * arcs gone are both links' four, the expansion passes the verifier on
 * the graph without both and crosses neither. Without --reduced, 64 nodes
 * get the explicit schedule (the structure is the default above 1,024). */
static void test_patch_config_and_request(void **state)
{
	struct world *w = *state;
	struct fabric *less = fabric_with(w, "{spec: torus:8x8, failed_links: [[h5, h6]]}");
	struct schedule_query q = {.fabric = less,
				   .collective = SCHED_ALLREDUCE,
				   .fail = "9-10",
				   .reduced = SCHEDULE_REDUCED_ALWAYS};
	struct schedule_result r;
	struct ofc_error err = {0};
	struct schedule s;
	struct verify_report vr;
	uint32_t ngone = 0;

	assert_int_equal(schedule_compute(&q, &r, NULL, &err), 0);
	assert_int_equal(schedule_check(&r, &err), 0);
	const struct schedule_outcome *o = r.main;
	assert_true(o->is_patched && o->verified);
	for (uint32_t u = 0; u < less->graph->n; u++)
		for (uint32_t a = less->graph->off[u]; a < less->graph->off[u + 1]; a++) {
			uint32_t v = less->graph->adj[a];
			bool named = (u == 5 && v == 6) || (u == 6 && v == 5) ||
				     (u == 9 && v == 10) || (u == 10 && v == 9);

			assert_int_equal(o->gone[a], named);
			ngone += o->gone[a];
		}
	assert_int_equal(ngone, 4);
	struct sched_reduced red = {.group = o->group, .prog = o->s};
	assert_int_equal(sched_patched_expand(&red, &o->patch, o->patch_graph, o->gone, &s, &err),
			 0);
	struct verify_opts vo = {.graph = r.g};
	if (sched_verify(&s, &vo, &vr) < 0)
		fail_msg("the expansion fails the verifier: %s", vr.error);
	assert_false(crosses(&s, 5, 6) || crosses(&s, 9, 10));
	sched_free(&s);
	schedule_result_free(&r);

	q.reduced = SCHEDULE_REDUCED_AUTO;
	assert_int_equal(schedule_compute(&q, &r, NULL, &err), 0);
	assert_false(r.main->is_patched);
	assert_true(r.main->verified);
	assert_false(crosses(&r.main->s, 5, 6) || crosses(&r.main->s, 9, 10));
	schedule_result_free(&r);
	fabric_free(less);
}

/* A config's failed host and a request's failed link, patched together:
 * the host is absent from the patch (named by the whole graph's nodes, not
 * renumbered), its arcs and the link's gone; the expansion passes the
 * verifier with the host absent and crosses neither; the time is priced
 * over the survivors' blocks, within 2% of the explicit survivors' BFB
 * that 64 nodes get without --reduced. */
static void test_patch_failed_host(void **state)
{
	struct world *w = *state;
	struct fabric *less = fabric_with(w, "{spec: torus:8x8, failed_hosts: [h9]}");
	struct schedule_query q = {.fabric = less,
				   .collective = SCHED_ALLREDUCE,
				   .fail = "20-21",
				   .reduced = SCHEDULE_REDUCED_ALWAYS};
	struct schedule_result r;
	struct ofc_error err = {0};
	struct schedule s;
	struct verify_report vr;

	assert_int_equal(schedule_compute(&q, &r, NULL, &err), 0);
	assert_int_equal(schedule_check(&r, &err), 0);
	const struct schedule_outcome *o = r.main;
	assert_true(o->is_patched && o->verified);
	assert_int_equal(o->patch.nabsent, 1);
	assert_int_equal(o->patch.absent[0], 9);
	assert_int_equal(o->s.nodes, 64);
	struct sched_reduced red = {.group = o->group, .prog = o->s};
	assert_int_equal(sched_patched_expand(&red, &o->patch, o->patch_graph, o->gone, &s, &err),
			 0);
	struct verify_opts vo = {.graph = r.whole, .absent = r.absent};
	if (sched_verify(&s, &vo, &vr) < 0)
		fail_msg("the expansion fails the verifier: %s", vr.error);
	assert_false(crosses(&s, 20, 21));
	for (size_t i = 0; i < s.nxfers; i++)
		assert_true(s.xfers[i].src != 9 && s.xfers[i].dst != 9 && s.xfers[i].block != 9);
	sched_free(&s);
	double patched = o->time_us;
	schedule_result_free(&r);

	q.reduced = SCHEDULE_REDUCED_AUTO;
	assert_int_equal(schedule_compute(&q, &r, NULL, &err), 0);
	assert_false(r.main->is_patched);
	assert_true(r.main->verified);
	if (patched < r.main->time_us * (1 - 1e-9) || patched > r.main->time_us * 1.02)
		fail_msg("patched %.3f us, the explicit survivors' %.3f us", patched,
			 r.main->time_us);
	schedule_result_free(&r);
	fabric_free(less);
}

/* A switch carrying port 0 of every host lost (every node's +x arc of a
 * torus gone): the degraded graph is still a Cayley graph of the torus's
 * group, and BFB is symmetry-reduced on it, whose expansion passes the
 * verifier there, uses no +x arc and takes the explicit degraded BFB's
 * time. */
static void test_switch_lost_orbits(void **state)
{
	(void)state;
	struct strbuf fail = STRBUF_INIT;
	struct schedule_result r, x;
	struct ofc_error err = {0};
	struct schedule s;
	struct verify_report vr;

	for (uint32_t v = 0; v < 64; v++)
		sb_printf(&fail, "%s%u>%u", v ? "," : "", v, (v / 8) * 8 + (v % 8 + 1) % 8);
	struct schedule_query q = {.spec = "torus:8x8",
				   .collective = SCHED_ALLREDUCE,
				   .size = 1u << 20,
				   .fail = fail.buf,
				   .reduced = SCHEDULE_REDUCED_ALWAYS};
	assert_int_equal(schedule_compute(&q, &r, NULL, &err), 0);
	assert_int_equal(schedule_check(&r, &err), 0);
	assert_true(r.main->is_reduced && !r.main->is_patched && r.main->verified);
	assert_non_null(strstr(r.note, "BFB symmetry-reduced on the degraded graph"));
	struct sched_reduced red = {.group = r.main->group, .prog = r.main->s};
	assert_int_equal(sched_reduced_expand(&red, &s, &err), 0);
	struct verify_opts vo = {.graph = r.g};
	if (sched_verify(&s, &vo, &vr) < 0)
		fail_msg("the expansion fails the verifier: %s", vr.error);
	for (size_t i = 0; i < s.nxfers; i++)
		assert_false(s.xfers[i].dst ==
			     (s.xfers[i].src / 8) * 8 + (s.xfers[i].src % 8 + 1) % 8);
	q.reduced = SCHEDULE_REDUCED_NEVER;
	assert_int_equal(schedule_compute(&q, &x, NULL, &err), 0);
	assert_false(x.main->is_reduced);
	assert_true(x.main->verified && x.main->s.time_us == r.main->s.time_us);
	sched_free(&s);
	schedule_result_free(&r);
	schedule_result_free(&x);
	sb_free(&fail);
}

int main(int argc, char **argv)
{
	char *copy = xstrdup(argv[0]);

	(void)argc;
	snprintf(build_dir, sizeof(build_dir), "%s/..", dirname(copy));
	free(copy);
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_kept_healthy),
	    cmocka_unit_test_setup_teardown(test_failures, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_failed_file_fields, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_failures_lost_switch, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_rewire, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_rewire_kill_points, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_damaged_state_files, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_nul_in_names, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_stop_planner, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_failures_patched, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_patch_config_and_request, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_patch_failed_host, setup, teardown),
	    cmocka_unit_test(test_switch_lost_orbits),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
