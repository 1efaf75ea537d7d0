/* ofcd's one-frame GetSchedule answer of a fluid schedule packed a step at
 * a time from its period (schedule_response_pack): byte for byte the
 * Response protobuf-c packs from the expansion's message tree, as ofcd
 * built it before; a step made wrong gives other bytes; a stream whose
 * passes disagree is refused; a frame over the limit is refused before it
 * is made. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "controller/config/config.h"
#include "controller/export/export.h"
#include "controller/schedule/schedule.h"

/* The Response ofcd answers GetSchedule with: its status and words, the
 * schedule's head (every figure, num_steps, the vertices). */
static Ofc__V1__Response *head_msg(struct arena *ar, const struct fluid_answer *a)
{
	Ofc__V1__Response *r = arena_alloc(ar, sizeof(*r));
	Ofc__V1__Schedule *h = schedule_header_msg(ar, &a->s);
	Ofc__V1__Schedule *vx = schedule_vertices_msg(ar, a->net);

	ofc__v1__response__init(r);
	r->has_id = r->has_status = 1;
	r->id = 42;
	r->status = OFC__V1__STATUS__STATUS_OK;
	r->message = "fluid, verified";
	h->num_steps = fluid_answer_steps(a);
	h->n_vertices = vx->n_vertices;
	h->vertices = vx->vertices;
	r->body_case = OFC__V1__RESPONSE__BODY_SCHEDULE;
	r->schedule = h;
	return r;
}

/* The same Response packed as ofcd packed it before: the expansion, a
 * message per transfer, protobuf-c's pack of the whole tree. */
static uint8_t *tree_pack(struct fluid_answer *a, const struct schedule_query *q, size_t *len)
{
	struct arena ar = {0};
	struct ofc_error err = {0};

	if (fluid_answer_expand(q, a, &err) < 0)
		fail_msg("fluid_answer_expand: %s", err.msg);
	Ofc__V1__Response *r = head_msg(&ar, a);
	const struct schedule *s = &a->s;

	r->schedule->n_steps = s->nsteps;
	r->schedule->steps = arena_array(&ar, s->nsteps, sizeof(*r->schedule->steps));
	for (uint32_t t = 0; t < s->nsteps; t++)
		r->schedule->steps[t] = schedule_step_msg(&ar, s, t)->steps[0];
	*len = protobuf_c_message_get_packed_size(&r->base);
	uint8_t *buf = malloc(*len + 1);
	assert_int_equal(protobuf_c_message_pack(&r->base, buf), *len);
	arena_free(&ar);
	return buf;
}

/* A stream whose step `bad` comes out with its first transfer sent
 * elsewhere, or (twice_differs) one whose step is longer the second time
 * it is made: the sizing pass and the packing pass disagree. */
struct wrong {
	const struct sched_stream *st;
	uint32_t bad;
	bool twice_differs;
	uint32_t made;
};

static void wrong_fill(const void *ctx, uint32_t t, struct xfer *out)
{
	struct wrong *w = (struct wrong *)ctx;

	w->st->fill(w->st->ctx, t, out);
	if (t != w->bad || !w->st->count[t])
		return;
	if (!w->twice_differs)
		out[0].dst = out[0].dst == out[0].src + 1u ? out[0].src + 2u : out[0].src + 1u;
	else if (w->made++ > 0)
		out[0].dst = 300; /* a varint of two bytes: the step grew */
}

static void one(const char *coll_name, enum sched_collective coll)
{
	struct fabric *f = NULL;
	struct ofc_error err = {0};
	struct schedule_query q = {.collective = coll};
	struct fluid_query x = {0};
	struct fluid_answer a;
	struct sched_stream st, bad;
	struct arena ar = {0};
	uint8_t *got, *want, *b;
	size_t got_len, want_len, len;

	if (fabric_open("examples/modelw/all-links-1.yaml", &f, &err) < 0)
		fail_msg("%s", err.msg);
	q.fabric = f;
	if (schedule_fluid(&q, &x, &a, &err) < 0)
		fail_msg("schedule_fluid %s: %s", coll_name, err.msg);
	assert_true(a.verified);
	assert_true(fluid_answer_stream(&a, &st));
	assert_true(st.nsteps > 2);
	Ofc__V1__Response *r = head_msg(&ar, &a);

	assert_int_equal(schedule_response_pack(r, &st, SIZE_MAX, 0, &got, &got_len), 0);
	/* with room before it (ofcd's frame length): the same bytes after it */
	assert_int_equal(schedule_response_pack(r, &st, SIZE_MAX, 4, &b, &len), 0);
	assert_int_equal(len, got_len);
	assert_memory_equal(b + 4, got, len);
	free(b);
	/* over the limit: refused with its size, nothing made */
	assert_int_equal(schedule_response_pack(r, &st, got_len - 1, 0, &b, &len), 1);
	assert_int_equal(len, got_len);
	assert_null(b);
	/* a step made wrong: other bytes, the same length (a dst of one byte) */
	struct wrong w = {.st = &st, .bad = st.nsteps / 2};

	bad = st;
	bad.fill = wrong_fill;
	bad.ctx = &w;
	assert_int_equal(schedule_response_pack(r, &bad, SIZE_MAX, 0, &b, &len), 0);
	assert_int_equal(len, got_len);
	assert_true(memcmp(b, got, len) != 0);
	free(b);
	/* made differently when sized and when packed: refused */
	w.twice_differs = true;
	w.bad = st.nsteps - 1;
	assert_int_equal(schedule_response_pack(r, &bad, SIZE_MAX, 0, &b, &len), -1);
	assert_null(b);
	arena_free(&ar);

	want = tree_pack(&a, &q, &want_len);
	assert_int_equal(got_len, want_len);
	assert_memory_equal(got, want, want_len);
	/* and it unpacks to every step of the expansion */
	Ofc__V1__Response *u = ofc__v1__response__unpack(NULL, got_len, got);
	assert_non_null(u);
	assert_int_equal(u->schedule->n_steps, a.s.nsteps);
	assert_int_equal(u->schedule->num_steps, a.s.nsteps);
	size_t k = 0;
	for (uint32_t t = 0; t < a.s.nsteps; t++)
		for (size_t i = 0; i < u->schedule->steps[t]->n_transfers; i++, k++) {
			assert_int_equal(u->schedule->steps[t]->transfers[i]->src,
					 a.s.xfers[k].src);
			assert_int_equal(u->schedule->steps[t]->transfers[i]->dst,
					 a.s.xfers[k].dst);
		}
	assert_int_equal(k, a.s.nxfers);
	ofc__v1__response__free_unpacked(u, NULL);
	free(got);
	free(want);
	fluid_answer_free(&a);
	fabric_free(f);
}

static void test_allgather(void **state)
{
	(void)state;
	one("allgather", SCHED_ALLGATHER);
}

/* two periods, one schedule */
static void test_allreduce(void **state)
{
	(void)state;
	one("allreduce", SCHED_ALLREDUCE);
}

static void test_broadcast(void **state)
{
	(void)state;
	one("broadcast", SCHED_BROADCAST);
}

/* A Response without a stepless schedule is not one to pack this way. */
static void test_needs_stepless(void **state)
{
	Ofc__V1__Response r = OFC__V1__RESPONSE__INIT;
	struct schedule head;
	size_t count[1] = {0};
	struct sched_stream st = {.head = &head, .nsteps = 1, .count = count};
	uint8_t *b;
	size_t len;
	(void)state;

	sched_init(&head, SCHED_ALLGATHER, "x", 2);
	assert_int_equal(schedule_response_pack(&r, &st, SIZE_MAX, 0, &b, &len), -1);
	assert_null(b);
	sched_free(&head);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_allgather),
	    cmocka_unit_test(test_allreduce),
	    cmocka_unit_test(test_broadcast),
	    cmocka_unit_test(test_needs_stepless),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
