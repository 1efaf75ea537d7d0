/* The event log (controller/ofcd/event_log.c) of a single ofcd, in process
 * on a sim switch: every logged event numbered one past the last in one
 * log; a watch resumed after an event gets exactly the kept events after
 * it, the same bytes; one naming another log gets all it keeps; the log
 * keeps the last 256; a state read stands at the last event sent
 * (State.event_seq), and a commit's event carries the devices it changed
 * (Event.delta); an event of more failures than it carries lists the first
 * and says how many more. */
#include "tests/unit/ofcd_world.h"

#define KEEP 256 /* event_log.c's EVLOG_KEEP */

struct seen {
	Ofc__V1__Response **r; /* as received, id cleared */
	size_t n, cap;
};

static void seen_free(struct seen *s)
{
	for (size_t i = 0; i < s->n; i++)
		ofc__v1__response__free_unpacked(s->r[i], NULL);
	free(s->r);
	memset(s, 0, sizeof(*s));
}

static void watch_from(struct world *w, struct ofcd_client *c, uint64_t id, bool resume,
		       uint64_t after, uint64_t log)
{
	Ofc__V1__Request req = OFC__V1__REQUEST__INIT;
	Ofc__V1__Watch wa = OFC__V1__WATCH__INIT;
	Ofc__V1__Response *r;

	connect_ok(w, c);
	wa.has_after_seq = wa.has_log = resume;
	wa.after_seq = after;
	wa.log = log;
	req.body_case = OFC__V1__REQUEST__BODY_WATCH;
	req.watch = &wa;
	r = call(c, &req, id);
	assert_non_null(r);
	assert_int_equal(r->status, OFC__V1__STATUS__STATUS_OK);
	ofc__v1__response__free_unpacked(r, NULL);
}

/* Events on c until one numbered `upto` (or, with upto 0, until none for
 * a second); false when the connection ends first. */
static bool read_events(struct ofcd_client *c, struct seen *s, uint64_t upto)
{
	struct ofc_error err = {0};
	Ofc__V1__Response *r;
	double keep = c->timeout;

	if (!upto)
		c->timeout = 1;
	while (ofcd_recv(c, &r, &err) == 0) {
		if (r->body_case != OFC__V1__RESPONSE__BODY_EVENT || !r->event->has_seq) {
			ofc__v1__response__free_unpacked(r, NULL);
			continue;
		}
		r->has_id = 0;
		r->id = 0;
		if (s->n == s->cap) {
			s->cap = s->cap ? 2 * s->cap : 64;
			s->r = xreallocarray(s->r, s->cap, sizeof(*s->r));
		}
		s->r[s->n++] = r;
		if (upto && r->event->seq >= upto) {
			c->timeout = keep;
			return true;
		}
	}
	c->timeout = keep;
	return !upto;
}

static bool same_bytes(const Ofc__V1__Response *a, const Ofc__V1__Response *b)
{
	size_t la = ofc__v1__response__get_packed_size(a),
	       lb = ofc__v1__response__get_packed_size(b);
	uint8_t *ba = xmalloc(la + 1), *bb = xmalloc(lb + 1);
	bool same;

	ofc__v1__response__pack(a, ba);
	ofc__v1__response__pack(b, bb);
	same = la == lb && memcmp(ba, bb, la) == 0;
	free(ba);
	free(bb);
	return same;
}

static Ofc__V1__Response *report(struct ofcd_client *c, uint64_t id, bool restore, const char *a)
{
	Ofc__V1__Request req = OFC__V1__REQUEST__INIT;
	Ofc__V1__ReportFailure rf = OFC__V1__REPORT_FAILURE__INIT;
	char *items[1] = {(char *)a};

	rf.n_items = 1;
	rf.items = items;
	rf.has_restore = rf.restore = restore;
	req.body_case = OFC__V1__REQUEST__BODY_REPORT_FAILURE;
	req.report_failure = &rf;
	return call(c, &req, id);
}

/* Numbered one past the last, in one log; resumed after an event: the
 * events after it, byte for byte; another log's number: all kept. */
static void test_numbers_and_resume(void **state)
{
	struct world *w = *state;
	struct ofcd_client c, wa, wb, wc;
	struct seen a = {0}, b = {0}, o = {0};
	const char *specs[] = {"circulant:64:3,8", "torus:8x8", "circulant:64:1,8", "torus:8x8"};

	start(w, 30, 0);
	connect_ok(w, &c);
	watch_from(w, &wa, 900, false, 0, 0);
	for (uint64_t i = 0; i < 4; i++) {
		Ofc__V1__Response *r = reconfigure(&c, specs[i], 10 + i);

		assert_non_null(r);
		assert_int_equal(r->status, OFC__V1__STATUS__STATUS_OK);
		ofc__v1__response__free_unpacked(r, NULL);
	}
	assert_true(read_events(&wa, &a, 0));
	assert_true(a.n >= 8);
	uint64_t log = a.r[0]->event->log;
	assert_true(log != 0);
	for (size_t i = 0; i < a.n; i++) {
		assert_int_equal(a.r[i]->event->seq, i + 1);
		assert_int_equal(a.r[i]->event->log, log);
	}
	/* a commit's event carries the circuits it changed on its switch */
	size_t carried = 0;
	for (size_t i = 0; i < a.n; i++) {
		const Ofc__V1__StateDelta *dl = a.r[i]->event->delta;

		if (a.r[i]->event->kind != OFC__V1__EVENT__KIND__KIND_TRANSACTION_COMMITTED)
			continue;
		assert_non_null(dl);
		assert_int_equal(dl->n_circuits, 1);
		assert_string_equal(dl->circuits[0]->device, "ocs0");
		assert_true(dl->circuits[0]->n_added + dl->circuits[0]->n_removed > 0);
		carried++;
	}
	assert_int_equal(carried, 4);
	/* a read stands at the last event sent */
	Ofc__V1__Response *st = get_state(&c, 50);
	assert_non_null(st);
	assert_int_equal(st->state->event_seq, a.n);
	assert_int_equal(st->state->event_log, log);
	ofc__v1__response__free_unpacked(st, NULL);

	uint64_t half = a.n / 2;
	watch_from(w, &wb, 901, true, half, log);
	assert_true(read_events(&wb, &b, a.n));
	assert_int_equal(b.n, a.n - half);
	for (size_t i = 0; i < b.n; i++)
		assert_true(same_bytes(b.r[i], a.r[half + i]));
	watch_from(w, &wc, 902, true, half, log + 1);
	assert_true(read_events(&wc, &o, a.n));
	assert_int_equal(o.n, a.n);
	assert_int_equal(o.r[0]->event->seq, 1);

	seen_free(&a);
	seen_free(&b);
	seen_free(&o);
	ofcd_disconnect(&wa);
	ofcd_disconnect(&wb);
	ofcd_disconnect(&wc);
	ofcd_disconnect(&c);
	stop(w);
}

/* Past KEEP events, a watch from the start gets the last KEEP. */
static void test_keeps_the_last(void **state)
{
	struct world *w = *state;
	struct ofcd_client c, wa, wb;
	struct seen a = {0}, b = {0};
	uint64_t id = 10;

	start(w, 30, 0);
	connect_ok(w, &c);
	watch_from(w, &wa, 900, false, 0, 0);
	while (a.n <= KEEP + 20) {
		for (int k = 0; k < 20; k++) {
			Ofc__V1__Response *r = report(&c, id++, k % 2 == 1, "h0-h1");

			assert_non_null(r);
			ofc__v1__response__free_unpacked(r, NULL);
		}
		assert_true(read_events(&wa, &a, 0));
	}
	uint64_t last = a.r[a.n - 1]->event->seq;
	watch_from(w, &wb, 901, true, 0, a.r[0]->event->log);
	assert_true(read_events(&wb, &b, last));
	assert_int_equal(b.n, KEEP);
	assert_int_equal(b.r[0]->event->seq, last - KEEP + 1);
	for (size_t i = 0; i < b.n; i++)
		assert_true(same_bytes(b.r[i], a.r[a.n - KEEP + i]));
	seen_free(&a);
	seen_free(&b);
	ofcd_disconnect(&wa);
	ofcd_disconnect(&wb);
	ofcd_disconnect(&c);
	stop(w);
}

/* A failure report of more names than an event carries (16 KiB but for
 * its delta): its events arrive numbered in turn, failed cut to the first
 * names, failed_left_out and the message saying how many more and where
 * they all are (GetState's failed); a resumed watch gets them the same. */
#define LONG_PREFIX "a-host-whose-name-is-as-long-as-names-go-so-its-ports-fill-e"
static void test_cut_failed(void **state)
{
	struct world *w = *state;
	struct ofcd_client c, wa, wb;
	struct seen a = {0}, b = {0};
	static const char big[] = "name: simfab\n"
				  "hosts: {count: 256, prefix: " LONG_PREFIX ", ports: 4}\n"
				  "switches:\n"
				  "  - {name: ocs0, type: ocs, ports: 1024, driver: {type: sim}}\n"
				  "wiring: {pattern: sequential, switches: [ocs0]}\n"
				  "topology: torus:16x16\n"
				  "collectives:\n"
				  "  - {op: allreduce, size: 1MiB}\n";
	enum { NITEMS = 256 }; /* (port 3 of every host: still connected) */
	char *items[NITEMS];
	size_t names = 0;

	sim_device_free(&w->sim);
	sim_device_init(&w->sim, DEV_SWITCH, 1024);
	write_config(w, big);
	for (int i = 0; i < NITEMS; i++) {
		items[i] = xasprintf(LONG_PREFIX "%d:3", i);
		names += strlen(items[i]) + 2; /* (packed: a tag and a length) */
	}
	assert_true(names > 16 << 10);
	start(w, 60, 0);
	connect_ok(w, &c);
	watch_from(w, &wa, 900, false, 0, 0);

	Ofc__V1__Request req = OFC__V1__REQUEST__INIT;
	Ofc__V1__ReportFailure rf = OFC__V1__REPORT_FAILURE__INIT;
	rf.n_items = NITEMS;
	rf.items = items;
	req.body_case = OFC__V1__REQUEST__BODY_REPORT_FAILURE;
	req.report_failure = &rf;
	Ofc__V1__Response *r = call(&c, &req, 10);
	assert_non_null(r);
	if (r->status != OFC__V1__STATUS__STATUS_OK)
		fail_msg("ReportFailure: %s", r->message);
	ofc__v1__response__free_unpacked(r, NULL);
	assert_true(read_events(&wa, &a, 0));
	assert_true(a.n > 0);

	size_t cut = 0;
	for (size_t i = 0; i < a.n; i++) {
		Ofc__V1__Event *e = a.r[i]->event;

		assert_int_equal(e->seq, a.r[0]->event->seq + i);
		Ofc__V1__StateDelta *dl = e->delta;

		e->delta = NULL; /* (what a delta takes is bounded apart) */
		assert_true(ofc__v1__response__get_packed_size(a.r[i]) <= 16 << 10);
		e->delta = dl;
		if (e->kind != OFC__V1__EVENT__KIND__KIND_FAILURE_REPORTED &&
		    e->kind != OFC__V1__EVENT__KIND__KIND_SCHEDULE_REPLANNED)
			continue;
		/* the first names, in order, and how many more */
		assert_true(e->has_failed_left_out);
		assert_true(e->n_failed > 100);
		assert_int_equal(e->n_failed + e->failed_left_out, NITEMS);
		if (e->kind == OFC__V1__EVENT__KIND__KIND_FAILURE_REPORTED)
			for (size_t k = 0; k < e->n_failed; k++)
				assert_string_equal(e->failed[k], items[k]);
		char says[96];
		snprintf(says, sizeof(says), "failed lists %zu of %d failures (GetState's failed",
			 e->n_failed, NITEMS);
		assert_non_null(e->message);
		assert_non_null(strstr(e->message, says));
		cut++;
	}
	assert_int_equal(cut, 2);
	Ofc__V1__Response *st = get_state(&c, 50);
	assert_non_null(st);
	assert_int_equal(st->state->n_failed, NITEMS);
	ofc__v1__response__free_unpacked(st, NULL);
	/* kept as sent */
	seen_free(&a);
	watch_from(w, &wb, 901, true, 0, 0);
	assert_true(read_events(&wb, &b, 0));
	assert_true(b.n > 0);
	for (size_t i = 0; i < b.n; i++)
		if (b.r[i]->event->has_failed_left_out)
			assert_int_equal(b.r[i]->event->n_failed + b.r[i]->event->failed_left_out,
					 NITEMS);
	seen_free(&b);
	for (int i = 0; i < NITEMS; i++)
		free(items[i]);
	ofcd_disconnect(&wa);
	ofcd_disconnect(&wb);
	ofcd_disconnect(&c);
	stop(w);
}

int main(int argc, char **argv)
{
	char *copy = xstrdup(argv[0]);

	(void)argc;
	snprintf(build_dir, sizeof(build_dir), "%s/..", dirname(copy));
	free(copy);
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_numbers_and_resume, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_keeps_the_last, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_cut_failed, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
