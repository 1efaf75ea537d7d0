/* The event log (controller/ofcd/event_log.c) of a single ofcd, in process
 * on a sim switch: every logged event numbered one past the last in one
 * log; a watch resumed after an event gets exactly the kept events after
 * it, the same bytes; one naming another log gets all it keeps; the log
 * keeps the last 256; a state read stands at the last event sent
 * (State.event_seq), and a commit's event carries the devices it changed
 * (Event.delta). */
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

int main(int argc, char **argv)
{
	char *copy = xstrdup(argv[0]);

	(void)argc;
	snprintf(build_dir, sizeof(build_dir), "%s/..", dirname(copy));
	free(copy);
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_numbers_and_resume, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_keeps_the_last, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
