/* A host link's flap damping (controller/ofcd/link_damp.c) as pure logic on
 * a made-up clock: a link down is failed at once and restored only after
 * the hold-down; one flap is not suppressed, two close together are, until
 * the penalty halves below the reuse threshold; a link flapping at 1 Hz
 * for a minute changes the failed set once (failed) and once more when it
 * settles (restored); a link down is never hidden by the damping. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "controller/ofcd/internal.h"

static struct link_damp_opts opts(void)
{
	struct link_damp_opts o = {0};

	link_damp_defaults(&o);
	return o;
}

/* What the caller does: observe, and act (count) on a change. */
static bool step(const struct link_damp_opts *o, struct link_damp *s, bool up, int64_t t,
		 uint32_t *changes)
{
	bool want = link_damp_observe(o, s, up, t);

	if (want != s->failed) {
		s->failed = want;
		(*changes)++;
	}
	return want;
}

static void test_defaults(void **state)
{
	struct link_damp_opts o = opts(), set = {.hold_down_ms = 7, .reuse = 3};

	(void)state;
	assert_int_equal(o.hold_down_ms, OFCD_LINK_HOLD_DOWN_MS);
	assert_int_equal(o.half_life_ms, OFCD_LINK_HALF_LIFE_MS);
	assert_int_equal(o.penalty, OFCD_LINK_PENALTY);
	assert_int_equal(o.suppress, OFCD_LINK_SUPPRESS);
	assert_int_equal(o.reuse, OFCD_LINK_REUSE);
	assert_int_equal(o.max_suppress_ms, OFCD_LINK_MAX_SUPPRESS_MS);
	link_damp_defaults(&set); /* a value given stays */
	assert_int_equal(set.hold_down_ms, 7);
	assert_int_equal(set.reuse, 3);
	/* reuse x 2^(60 s / 15 s) */
	assert_true(fabs(link_damp_ceiling(&o) - 750.0 * 16) < 1e-6);
}

static void test_down_fails_up_restores_after_hold_down(void **state)
{
	struct link_damp_opts o = opts();
	struct link_damp s = {0};
	uint32_t n = 0;

	(void)state;
	assert_false(step(&o, &s, true, 1000, &n)); /* up, never failed: nothing */
	assert_true(step(&o, &s, false, 2000, &n)); /* down: failed at once */
	assert_int_equal(n, 1);
	assert_int_equal(s.flaps, 1);
	assert_false(s.suppressed);		   /* one flap is not suppressed */
	assert_true(step(&o, &s, true, 2500, &n)); /* up: held for the hold-down */
	assert_true(step(&o, &s, true, 2500 + 4999, &n));
	assert_false(step(&o, &s, true, 2500 + 5000, &n)); /* up 5 s: restored */
	assert_int_equal(n, 2);
}

static void test_first_report_down(void **state)
{
	struct link_damp_opts o = opts();
	struct link_damp s = {0};
	uint32_t n = 0;

	(void)state;
	assert_true(step(&o, &s, false, 0, &n)); /* down when first heard of */
	assert_int_equal(s.flaps, 0);		 /* not a flap: never seen up */
	assert_true(step(&o, &s, true, 100, &n));
	assert_false(step(&o, &s, true, 5100, &n));
	assert_int_equal(n, 2);
}

static void test_two_flaps_suppress_until_reuse(void **state)
{
	struct link_damp_opts o = opts();
	struct link_damp s = {0};
	uint32_t n = 0;
	int64_t t;

	(void)state;
	step(&o, &s, true, 0, &n);
	step(&o, &s, false, 1000, &n);
	step(&o, &s, true, 2000, &n);
	step(&o, &s, false, 3000, &n); /* second flap 2 s after the first */
	assert_true(s.suppressed);
	assert_true(s.penalty > o.suppress);
	/* Up from 4 s on: the hold-down passes at 9 s, but the port stays
	 * failed while suppressed, until the penalty (about 1910 at 3 s)
	 * halves below 750: log2(1910/750) x 15 s, about 20 s after. */
	double p3 = s.penalty;
	int64_t reuse_at = 3000 + (int64_t)ceil(log2(p3 / o.reuse) * o.half_life_ms);
	for (t = 4000; t < reuse_at - 100; t += 100)
		assert_true(step(&o, &s, true, t, &n));
	assert_int_equal(n, 1); /* failed once, nothing since */
	for (; step(&o, &s, true, t, &n); t += 100)
		assert_true(t < reuse_at + 200);
	assert_true(t >= reuse_at - 100);
	assert_false(s.suppressed);
	assert_int_equal(n, 2);
}

/* 1 Hz for a minute (down half a second, up half): one change while it
 * flaps, and the restore once it has settled; the penalty never passes
 * the ceiling, so it is restored within max_suppress of settling. */
static void test_flapping_one_replan(void **state)
{
	struct link_damp_opts o = opts();
	struct link_damp s = {0};
	uint32_t n = 0;
	int64_t t = 0;

	(void)state;
	step(&o, &s, true, t, &n);
	for (int i = 0; i < 60; i++) {
		assert_true(step(&o, &s, false, t += 500, &n));
		assert_true(step(&o, &s, true, t += 500, &n)); /* up, but held */
		assert_true(s.penalty <= link_damp_ceiling(&o) + 1e-9);
	}
	assert_int_equal(n, 1);
	assert_int_equal(s.flaps, 60);
	int64_t settled = t;
	while (step(&o, &s, true, t += 250, &n))
		assert_true(t <= settled + (int64_t)o.max_suppress_ms + o.hold_down_ms);
	assert_int_equal(n, 2);
	assert_true(t >= settled + o.hold_down_ms);
}

/* A link that stays down is failed whatever its penalty; one the caller
 * does not hold failed (another's failure) is never asked to be restored. */
static void test_down_never_hidden(void **state)
{
	struct link_damp_opts o = opts();
	struct link_damp s = {0}, other = {0};
	uint32_t n = 0;

	(void)state;
	step(&o, &s, true, 0, &n);
	for (int i = 0; i < 10; i++) {
		step(&o, &s, false, i * 1000 + 300, &n);
		step(&o, &s, true, i * 1000 + 600, &n);
	}
	for (int64_t t = 10000; t < 200000; t += 1000)
		assert_true(step(&o, &s, false, t, &n));
	assert_int_equal(n, 1);
	for (int64_t t = 0; t < 20000; t += 1000)
		assert_false(link_damp_observe(&o, &other, true, t));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_defaults),
	    cmocka_unit_test(test_down_fails_up_restores_after_hold_down),
	    cmocka_unit_test(test_first_report_down),
	    cmocka_unit_test(test_two_flaps_suppress_until_reuse),
	    cmocka_unit_test(test_flapping_one_replan),
	    cmocka_unit_test(test_down_never_hidden),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
