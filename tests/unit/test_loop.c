/* ofcd's event loop (controller/ofcd/loop.c): a readable fd calls its
 * callback with the mask that fired, loop_del stops the calls, timers fire
 * in deadline order and repeat or end as their callbacks say, a deleted
 * timer never fires, fds beyond the set size are refused, and loop_stop
 * ends loop_run. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "controller/ofcd/loop.h"

struct rec {
	int reads, writes;
	unsigned last_mask;
	char order[16];
	int norder;
	int repeats;
	int fd;
	bool del_on_read;
};

static void on_file(struct loop *l, int fd, void *ctx, unsigned mask)
{
	struct rec *r = ctx;
	char buf[64];

	r->last_mask = mask;
	if (mask & LOOP_READ) {
		r->reads++;
		assert_true(read(fd, buf, sizeof(buf)) > 0);
		if (r->del_on_read)
			loop_del(l, fd, LOOP_READ);
	}
	if (mask & LOOP_WRITE) {
		r->writes++;
		loop_del(l, fd, LOOP_WRITE);
	}
}

static int64_t stop_timer(struct loop *l, uint64_t id, void *ctx)
{
	(void)id;
	(void)ctx;
	loop_stop(l);
	return LOOP_NOMORE;
}

static int64_t mark_timer(struct loop *l, uint64_t id, void *ctx)
{
	struct rec *r = ctx;

	(void)l;
	r->order[r->norder++] = (char)('a' + id - 1);
	return LOOP_NOMORE;
}

static int64_t repeat_timer(struct loop *l, uint64_t id, void *ctx)
{
	struct rec *r = ctx;

	(void)l;
	(void)id;
	return ++r->repeats < 3 ? 1 : LOOP_NOMORE;
}

static void test_file_events(void **state)
{
	struct ofc_error err = {0};
	struct loop *l = loop_new(1024, &err);
	struct rec r = {0};
	int p[2];

	(void)state;
	assert_non_null(l);
	assert_int_equal(pipe(p), 0);
	assert_int_equal(loop_add(l, p[0], LOOP_READ, on_file, &r), 0);
	assert_int_equal(loop_mask(l, p[0]), LOOP_READ);
	assert_int_equal(write(p[1], "x", 1), 1);
	loop_timer(l, 50, stop_timer, NULL);
	assert_int_equal(loop_run(l, &err), 0);
	assert_int_equal(r.reads, 1);
	assert_int_equal(r.last_mask, LOOP_READ);

	/* Deleted: data waits, the callback is not called. */
	r.del_on_read = true;
	assert_int_equal(write(p[1], "y", 1), 1);
	loop_timer(l, 50, stop_timer, NULL);
	assert_int_equal(loop_run(l, &err), 0);
	assert_int_equal(r.reads, 2);
	assert_int_equal(loop_mask(l, p[0]), 0);
	assert_int_equal(write(p[1], "z", 1), 1);
	loop_timer(l, 30, stop_timer, NULL);
	assert_int_equal(loop_run(l, &err), 0);
	assert_int_equal(r.reads, 2);

	/* A writable pipe end fires LOOP_WRITE once (the callback drops it). */
	assert_int_equal(loop_add(l, p[1], LOOP_WRITE, on_file, &r), 0);
	loop_timer(l, 30, stop_timer, NULL);
	assert_int_equal(loop_run(l, &err), 0);
	assert_int_equal(r.writes, 1);

	/* Beyond the set size. */
	assert_int_equal(loop_add(l, 5000, LOOP_READ, on_file, &r), -1);
	close(p[0]);
	close(p[1]);
	loop_free(l);
}

static void test_timers(void **state)
{
	struct ofc_error err = {0};
	struct loop *l = loop_new(64, &err);
	struct rec r = {0};
	uint64_t a, b, c, d;

	(void)state;
	/* ids 1..4 are a..d; added out of deadline order */
	a = loop_timer(l, 30, mark_timer, &r);
	b = loop_timer(l, 10, mark_timer, &r);
	c = loop_timer(l, 20, mark_timer, &r);
	d = loop_timer(l, 15, mark_timer, &r);
	assert_int_equal(a, 1);
	assert_int_equal(d, 4);
	loop_timer_del(l, c);
	loop_timer(l, 5, repeat_timer, &r);
	loop_timer(l, 80, stop_timer, NULL);
	assert_int_equal(loop_run(l, &err), 0);
	assert_int_equal(r.norder, 3);
	assert_memory_equal(r.order, "bda", 3);
	assert_int_equal(r.repeats, 3);
	(void)b;
	loop_free(l);
}

/* A loop that wakes late (a loaded machine) finds several timers due at
 * once and fires them in the order they were due, not in their slots'. */
static void test_timers_late(void **state)
{
	struct ofc_error err = {0};
	struct loop *l = loop_new(64, &err);
	struct rec r = {0};

	(void)state;
	loop_timer(l, 30, mark_timer, &r); /* a, slot 0 */
	loop_timer(l, 10, mark_timer, &r); /* b */
	loop_timer(l, 20, mark_timer, &r); /* c */
	usleep(50 * 1000);		   /* all three due before the loop runs */
	loop_timer(l, 5, stop_timer, NULL);
	assert_int_equal(loop_run(l, &err), 0);
	assert_int_equal(r.norder, 3);
	assert_memory_equal(r.order, "bca", 3);
	loop_free(l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_file_events),
	    cmocka_unit_test(test_timers),
	    cmocka_unit_test(test_timers_late),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
