/* The degraded graph's bound computed beside a patch's generation, or
 * where it is first read (controller/schedule/bound_beside.c), is the one
 * degraded_bound gives on the degraded graph, and every outcome is priced
 * against it: a reader that ran before the bound was in would price
 * against the healthy bound alone. Rows: BFB kept as structure (the bound
 * on its own thread), explicit BFB (read first where it is re-balanced),
 * Swing re-routed (read in engine_torus.c; the whole bound where hosts
 * forward, its bandwidth term with the healthy steps where NICs do); a row refused before it is
 * priced has it all the same, and an all-to-all, which has none, leaves
 * nothing behind. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "controller/schedule/internal.h"

static unsigned threads = 2;
static int forwarding; /* the query's: 0 the hosts', 2 NIC */

static void expect_bound(const char *spec, const char *fail, const char *algo,
			 enum sched_collective c, enum schedule_reduce reduced, bool priced)
{
	struct schedule_query q = {.spec = spec,
				   .fail = fail,
				   .collective = c,
				   .algorithm = algo,
				   .size = 64 << 20,
				   .threads = threads,
				   .forwarding = forwarding,
				   .no_certify = true,
				   .reduced = reduced};
	struct schedule_result r;
	struct ofc_error err = {0};
	struct degraded_bound b;

	if (schedule_compute(&q, &r, NULL, &err) < 0)
		fail_msg("%s without %s, %s: %s", spec, fail, algo ? algo : "bfb", err.msg);
	assert_null(r.bound); /* in before the request returned */
	assert_true(r.have_degraded);
	assert_int_equal(degraded_bound(r.g, c, r.degree, 0, &b), 0);
	assert_int_equal(r.degraded.steps, b.steps);
	assert_int_equal(r.degraded.steps_exact, b.steps_exact);
	assert_true(r.degraded.tau_b == b.tau_b);
	assert_true(r.degraded.ag.node == b.ag.node && r.degraded.ag.cut == b.ag.cut);
	assert_int_equal(r.degraded.ag.node_at, b.ag.node_at);
	assert_true(r.degraded_us == cost_time_us(&r.cost, b.steps, b.tau_b));
	/* the failures' bound binds here: above any topology's of the size */
	assert_true(r.degraded_us > r.healthy_lb_us);
	assert_true(r.lb_us == r.degraded_us);
	assert_true(r.main->applies && r.main->verified);
	if (priced)
		assert_true(r.main->lb_us == r.lb_us);
	else /* routed peers NICs forward: the healthy steps, the degraded links
	      * (engine_torus.c) */
		assert_true(r.main->lb_us ==
				fmax(r.healthy_lb_us, cost_time_us(&r.cost, r.lb.steps, b.tau_b)) &&
			    r.main->lb_us > r.healthy_lb_us);
	schedule_result_free(&r);
}

static void test_kept_as_structure(void **state)
{
	(void)state;
	expect_bound("torus:16x16", "5-6,40-41,77>93", NULL, SCHED_ALLREDUCE,
		     SCHEDULE_REDUCED_ALWAYS, true);
	expect_bound("torus:16x16", "5-6,40-41", NULL, SCHED_ALLGATHER, SCHEDULE_REDUCED_ALWAYS,
		     true);
	/* a failed host: the survivors' graph */
	expect_bound("torus:16x16", "5", NULL, SCHED_REDUCE_SCATTER, SCHEDULE_REDUCED_ALWAYS, true);
	/* --threads 1: no thread beside, the same bound where first read */
	threads = 1;
	expect_bound("torus:16x16", "5-6,40-41,77>93", NULL, SCHED_ALLREDUCE,
		     SCHEDULE_REDUCED_ALWAYS, true);
	threads = 2;
}

static void test_explicit_and_routed(void **state)
{
	(void)state;
	expect_bound("torus:8x8", "5-6", NULL, SCHED_ALLREDUCE, SCHEDULE_REDUCED_AUTO, true);
	/* where hosts forward, each forward an alpha: the whole bound */
	expect_bound("torus:8x8", "5-6", "swing", SCHED_ALLREDUCE, SCHEDULE_REDUCED_AUTO, true);
	forwarding = 1 + NIC_FORWARDING;
	expect_bound("torus:8x8", "5-6", "swing", SCHED_ALLREDUCE, SCHEDULE_REDUCED_AUTO, false);
	forwarding = 0;
}

static void test_refused_and_alltoall(void **state)
{
	struct schedule_query q = {.spec = "torus:4x4",
				   .fail = "5-6",
				   .collective = SCHED_ALLTOALL,
				   .size = 1 << 20,
				   .threads = 2,
				   .no_certify = true};
	struct schedule_result r;
	struct ofc_error err = {0};

	(void)state;
	if (schedule_compute(&q, &r, NULL, &err) < 0)
		fail_msg("alltoall without 5-6: %s", err.msg);
	assert_null(r.bound);
	assert_false(r.have_degraded);
	assert_true(r.lb_us == r.healthy_lb_us);
	schedule_result_free(&r);

	/* a row refused before it is priced (over the memory limit): the
	 * bound is in all the same, for what prints the refusal beside it */
	q = (struct schedule_query){.spec = "torus:8x8",
				    .fail = "5-6",
				    .collective = SCHED_ALLREDUCE,
				    .size = 1 << 20,
				    .threads = 2,
				    .max_memory = 1,
				    .no_certify = true};
	if (schedule_compute(&q, &r, NULL, &err) < 0)
		fail_msg("allreduce without 5-6 in 1 byte: %s", err.msg);
	assert_false(r.main->applies);
	assert_non_null(strstr(r.main->why, "over the memory limit"));
	assert_null(r.bound);
	assert_true(r.have_degraded && r.lb_us == r.degraded_us);
	schedule_result_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_kept_as_structure),
	    cmocka_unit_test(test_explicit_and_routed),
	    cmocka_unit_test(test_refused_and_alltoall),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
