/* OpTree and its baselines: the paper's numbers from first principles,
 * every schedule through the verifier, the planner's predictions, the
 * add/drop limit, bounds and the time model. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <math.h>

#include "optree/internal.h"

static struct optree_ring ring(uint32_t n, uint32_t w)
{
	return (struct optree_ring){n, w, 1, 256, 40e9, 25e-6, 10e-9, 4u << 20};
}

/* Build and verify; returns the steps. */
static uint32_t build_ok(const struct optree_ring *r, enum optree_algo a, const uint32_t *radix,
			 uint32_t depth, bool overlap, struct optree_result *res)
{
	struct ofc_error err = {0};
	struct optree_plan plan;
	struct optree_opts o = {a, NULL, overlap};

	if (depth) {
		assert_int_equal(optree_plan_radices(r, radix, depth, &plan, &err), 0);
		o.plan = &plan;
	}
	assert_int_equal(optree_build(r, &o, res, &err), 0);
	struct verify_wdm w = optree_verify_wdm(r);
	struct verify_opts vo = {.wdm = &w};
	struct verify_report rep;
	if (sched_verify(&res->sched, &vo, &rep) != 0)
		fail_msg("%s N=%u W=%u: %s", optree_algo_name(a), r->nodes, r->wavelengths,
			 rep.error);
	assert_true(rep.max_wavelengths_used <= r->wavelengths);
	/* Every stage bound is a bound. */
	assert_true(res->lower_bound_steps <= res->sched.nsteps);
	return res->sched.nsteps;
}

static void test_theorem2_depths(void **state)
{
	static const uint32_t n[] = {512, 1024, 2048, 4096}, want[] = {6, 6, 7, 8};
	(void)state;

	for (size_t i = 0; i < 4; i++) {
		struct optree_ring r = ring(n[i], 64);
		struct optree_analytic a;

		optree_analytic(&r, &a);
		assert_int_equal(a.depth, want[i]);
	}
	/* N = 1024, W = 64: about 70 steps (S(6) = 69.85, S(7) = 69.98). */
	struct optree_ring r = ring(1024, 64);
	struct optree_analytic a;
	optree_analytic(&r, &a);
	assert_true(fabs(a.steps - 69.85) < 0.01);
	assert_true(fabs(optree_analytic_steps(&r, 7) - 69.98) < 0.01);
	/* The worked example: N = 16, W = 2, k = 2, m = 4: 12 steps. */
	r = ring(16, 2);
	optree_analytic(&r, &a);
	assert_int_equal(a.depth, 2);
	assert_true(fabs(a.steps - 12.0) < 1e-9);
	/* Below e^2 nodes one stage is best. */
	r = ring(6, 2);
	optree_analytic(&r, &a);
	assert_int_equal(a.depth, 1);
}

static void test_worked_example(void **state)
{
	struct optree_ring r = ring(16, 2);
	struct optree_result res;
	uint32_t four[2] = {4, 4};
	(void)state;

	/* One-stage: 16 steps; the two-stage 4-ary tree: 4 + 8 = 12. */
	assert_int_equal(build_ok(&r, OPTREE_ONESTAGE, NULL, 0, false, &res), 16);
	optree_result_free(&res);
	assert_int_equal(build_ok(&r, OPTREE_TREE, four, 2, false, &res), 12);
	assert_int_equal(res.nstages, 2);
	assert_int_equal(res.stage[0].steps, 4);
	assert_int_equal(res.stage[1].steps, 8);
	assert_int_equal(res.lower_bound_steps, 12);
	optree_result_free(&res);
	/* The planner finds 12 too, and no plan beats it. */
	assert_int_equal(build_ok(&r, OPTREE_TREE, NULL, 0, false, &res), 12);
	optree_result_free(&res);
	/* The paper's three-stage 3-ary alternative is worse. */
	uint32_t three[3] = {3, 3, 2};
	assert_true(build_ok(&r, OPTREE_TREE, three, 3, false, &res) > 12);
	optree_result_free(&res);
}

static void test_n1024(void **state)
{
	struct optree_ring r = ring(1024, 64);
	struct optree_result res;
	struct optree_analytic a;
	(void)state;

	assert_int_equal(build_ok(&r, OPTREE_RING, NULL, 0, false, &res), 1023);
	optree_result_free(&res);
	assert_int_equal(build_ok(&r, OPTREE_NE, NULL, 0, false, &res), 512);
	optree_result_free(&res);
	optree_analytic(&r, &a);
	uint32_t steps = build_ok(&r, OPTREE_TREE, NULL, 0, false, &res);
	assert_true(steps <= 73);
	assert_true(steps <= a.steps * 1.05);
	assert_int_equal(steps, res.plan.steps); /* the planner predicted it */
	optree_result_free(&res);
}

/* The planner's prediction is what the builder realises, for even, mixed,
 * uneven and odd plans; everything verifies. */
static void test_plans_predict_and_verify(void **state)
{
	static const uint32_t cases[][2] = {{2, 1},  {3, 1},   {5, 2},	  {12, 3},  {27, 4},
					    {37, 4}, {100, 8}, {210, 16}, {256, 7}, {1000, 64}};
	(void)state;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct optree_ring r = ring(cases[i][0], cases[i][1]);
		struct optree_result res;
		struct optree_plan p;
		struct ofc_error err = {0};

		assert_int_equal(optree_plan_best(&r, &p, &err), 0);
		uint32_t steps = build_ok(&r, OPTREE_TREE, p.radix, p.depth, false, &res);
		assert_int_equal(steps, p.steps);
		for (uint32_t k = 0; k < p.depth; k++)
			assert_int_equal(res.stage[k].steps, p.stage_steps[k]);
		optree_result_free(&res);
		/* Forced uneven plans too. */
		uint32_t radix[3] = {3, 3, 3};
		if (cases[i][0] >= 10 && cases[i][0] <= 27) {
			assert_int_equal(optree_plan_radices(&r, radix, 3, &p, &err), 0);
			assert_int_equal(build_ok(&r, OPTREE_TREE, radix, 3, false, &res), p.steps);
			optree_result_free(&res);
		}
		for (enum optree_algo a = OPTREE_RING; a <= OPTREE_ONESTAGE; a++) {
			if (a == OPTREE_NE && cases[i][0] % 2)
				continue;
			build_ok(&r, a, NULL, 0, false, &res);
			optree_result_free(&res);
		}
	}
}

static void test_add_drop_split(void **state)
{
	struct optree_ring r = ring(16, 8);
	struct optree_result res, big;
	struct ofc_error err = {0};
	(void)state;

	/* 8 wavelengths each way: a node may use 16 channels in a step. */
	build_ok(&r, OPTREE_ONESTAGE, NULL, 0, false, &big);
	assert_int_equal(big.split_steps, 0);
	r.max_add = 3;
	/* The unsplit schedule breaks a limit of 3 ... */
	struct verify_wdm w = optree_verify_wdm(&r);
	struct verify_opts vo = {.wdm = &w};
	struct verify_report rep;
	assert_int_equal(sched_verify(&big.sched, &vo, &rep), -1);
	assert_non_null(strstr(rep.error, "more than 3 lightpaths"));
	/* ... so the builder splits steps, and says so, into as few as any
	 * split can: ceil(D / 3) for a step whose busiest node has D. */
	uint32_t steps = build_ok(&r, OPTREE_ONESTAGE, NULL, 0, false, &res);
	assert_true(res.split_steps > 0);
	assert_int_equal(steps, big.sched.nsteps + res.split_steps);
	assert_true(res.stage[0].steps > res.stage[0].colour_steps);
	uint32_t fewest = 0;
	for (uint32_t t = 0; t < big.sched.nsteps; t++) {
		uint32_t add[16] = {0}, drop[16] = {0}, d = 0;

		for (uint32_t k = big.sched.step_start[t]; k < big.sched.step_start[t + 1]; k++) {
			const struct xfer *x = &big.sched.xfers[k];

			if (++add[x->src] > d)
				d = add[x->src];
			if (++drop[x->dst] > d)
				d = drop[x->dst];
		}
		fewest += (d + 2) / 3;
	}
	assert_int_equal(steps, fewest);
	optree_result_free(&res);
	optree_result_free(&big);
	/* The baselines split too (ne sends two blocks a step). */
	r.max_add = 1;
	build_ok(&r, OPTREE_NE, NULL, 0, false, &res);
	assert_int_equal(res.split_steps, 7);
	optree_result_free(&res);
	(void)err;
}

static void test_mutations_fail(void **state)
{
	struct optree_ring r = ring(64, 4);
	struct optree_result res;
	struct verify_wdm w = optree_verify_wdm(&r);
	struct verify_opts vo = {.wdm = &w};
	struct verify_report rep;
	(void)state;

	build_ok(&r, OPTREE_TREE, NULL, 0, false, &res);
	/* Two lightpaths of step 1 on one channel: some pair must clash. */
	struct schedule *s = &res.sched;
	uint32_t a = s->step_start[0], clashes = 0;
	for (uint32_t b = a + 1; b < s->step_start[1] && b < a + 20; b++) {
		struct xfer keep = s->xfers[b];

		s->xfers[b].lane = s->xfers[a].lane;
		s->xfers[b].fibre = s->xfers[a].fibre;
		s->xfers[b].flags = s->xfers[a].flags;
		if (sched_verify(s, &vo, &rep) < 0 && strstr(rep.error, "conflict"))
			clashes++;
		s->xfers[b] = keep;
	}
	assert_true(clashes > 0);
	/* Dropping the last transfer leaves a node without a block. */
	s->nxfers--;
	s->step_start[s->nsteps]--;
	assert_int_equal(sched_verify(s, &vo, &rep), -1);
	assert_non_null(strstr(rep.error, "incomplete"));
	optree_result_free(&res);
}

static void test_time_model(void **state)
{
	struct optree_ring r = ring(16, 2);
	struct optree_result res;
	struct optree_time t;
	uint32_t four[2] = {4, 4};
	(void)state;

	build_ok(&r, OPTREE_TREE, four, 2, false, &res);
	optree_timing(&r, &res, false, &t);
	/* Eq. 3: 12 b / B_lambda + 2 (d_mrr + d_oeo). */
	double tau = 4.0 * 1048576 * 8 / 40e9 * 1e6;
	assert_true(fabs(t.step_us - tau) < 1e-9);
	assert_true(fabs(t.time_us - (12 * tau + 2 * (25 + 0.01))) < 1e-6);
	assert_int_equal(t.retune_stages, 2);
	assert_true(t.retune_steps >= 2 && t.retune_steps <= 12);
	optree_result_free(&res);

	/* The ring baseline keeps one set of lightpaths: one retune only. */
	build_ok(&r, OPTREE_RING, NULL, 0, false, &res);
	optree_timing(&r, &res, false, &t);
	assert_int_equal(t.retune_steps, 1);
	assert_true(fabs(t.time_us - (15 * tau + 25 + 15 * 0.01)) < 1e-6);
	optree_result_free(&res);
}

static void test_overlap_hides_retunes(void **state)
{
	/* W = 3: stage 1 (load 8) ends in a step using 2 channels, stage 2
	 * (load 16) has a step using 1: side by side they fit in 3. */
	struct optree_ring r = ring(16, 3);
	struct optree_result plain, ov;
	struct optree_time tp, to;
	uint32_t four[2] = {4, 4};
	(void)state;

	build_ok(&r, OPTREE_TREE, four, 2, false, &plain);
	build_ok(&r, OPTREE_TREE, four, 2, true, &ov);
	assert_int_equal(plain.sched.nsteps, ov.sched.nsteps);
	assert_int_equal(ov.stage[0].partial_channels, 2);
	assert_int_equal(ov.stage[1].partial_channels, 1);
	assert_true(ov.stage[1].partial_first);
	optree_timing(&r, &plain, false, &tp);
	optree_timing(&r, &ov, true, &to);
	assert_true(fabs(to.plain_us - tp.plain_us) < 1e-6);
	assert_int_equal(to.hidden_stages, 1);
	assert_true(fabs(to.saved_us - 25.0) < 1e-6);
	/* Without the arrangement the same accounting finds nothing idle. */
	optree_timing(&r, &plain, true, &tp);
	assert_int_equal(tp.hidden_stages, 0);
	/* A step shorter than the retune hides only what it lasts. */
	r.block_bytes = 64 * 1024; /* 13.1 us per step */
	optree_timing(&r, &ov, true, &to);
	assert_true(to.saved_us > 13.0 && to.saved_us < 13.2);
	optree_result_free(&plain);
	optree_result_free(&ov);
}

static void test_bad_plans(void **state)
{
	struct optree_ring r = ring(16, 2);
	struct optree_plan p;
	struct ofc_error err = {0};
	struct optree_result res;
	struct optree_opts o = {OPTREE_NE, NULL, false};
	uint32_t small[2] = {2, 4}, extra[3] = {4, 4, 2}, radix[8];
	uint32_t depth;
	(void)state;

	assert_int_equal(optree_plan_radices(&r, small, 2, &p, &err), -1);
	assert_non_null(strstr(err.msg, "multiply to 8, fewer than the 16 nodes"));
	assert_int_equal(optree_plan_radices(&r, extra, 3, &p, &err), -1);
	assert_non_null(strstr(err.msg, "stage 3 has nothing to do"));
	assert_int_equal(optree_parse_radices("4x4,2", radix, &depth, &err), 0);
	assert_int_equal(depth, 3);
	assert_int_equal(optree_parse_radices("4,,2", radix, &depth, &err), -1);
	assert_int_equal(optree_parse_radices("4,1", radix, &depth, &err), -1);
	r.nodes = 15;
	assert_int_equal(optree_build(&r, &o, &res, &err), -1);
	assert_int_equal(err.code, OFC_E_INPUT);
	assert_non_null(strstr(err.msg, "even number of nodes"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_theorem2_depths), cmocka_unit_test(test_worked_example),
	    cmocka_unit_test(test_n1024),	    cmocka_unit_test(test_plans_predict_and_verify),
	    cmocka_unit_test(test_add_drop_split),  cmocka_unit_test(test_mutations_fail),
	    cmocka_unit_test(test_time_model),	    cmocka_unit_test(test_overlap_hides_retunes),
	    cmocka_unit_test(test_bad_plans),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
