/* The fluid bound beside `ofc schedule --algo all` (controller/schedule/
 * certify.c): found by Mirrored DW from the graph's automorphisms, equal
 * to R* worked out from first principles where that is easy; given as
 * long as the engines took (within 0.25 s and 5 s, half the request's
 * clock); and the cut bound kept when LP 4.2 gives nothing. Why: a
 * plain DW spent 5 of the command's 5.7 s on torus:8x8's all-to-all and
 * certified nothing beyond the cut bound. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "controller/schedule/internal.h"

/* All-to-all on a torus k_1 x ... x k_r, every pair's shard along
 * shortest paths, is as fast as the busiest dimension's links allow: a
 * pair d_i apart in dimension i crosses d_i of its arcs whatever the path,
 * and by symmetry the 2N arcs of a dimension share its N (N / k_i) S_i
 * shard-hops evenly, S_i the sum of a ring of k_i's distances from one
 * node. R* = max_i (N / k_i) S_i / 2 / (an arc's GB/s), in seconds per GB
 * of shard (the bandwidth bound; dimension-ordered routes split evenly
 * meet it). */
static double torus_rstar(const uint32_t *k, uint32_t dims, double arc_gbps)
{
	double n = 1, worst = 0;

	for (uint32_t i = 0; i < dims; i++)
		n *= k[i];
	for (uint32_t i = 0; i < dims; i++) {
		double ring = 0;

		for (uint32_t d = 0; d < k[i]; d++)
			ring += d < k[i] - d ? d : k[i] - d;
		if (n / k[i] * ring / 2 > worst)
			worst = n / k[i] * ring / 2;
	}
	return worst / arc_gbps;
}

static void compute(struct schedule_query *q, struct schedule_result *r)
{
	struct ofc_error err = {0};

	if (schedule_compute(q, r, NULL, &err) < 0)
		fail_msg("%s", err.msg);
}

static void test_torus_alltoall_bound(void **state)
{
	static const struct {
		const char *spec;
		uint32_t dims, k[3];
	} tori[] = {
	    {"torus:8x8", 2, {8, 8}}, {"torus:4x8", 2, {4, 8}}, {"torus:3x5x4", 3, {3, 5, 4}}};
	(void)state;

	for (size_t i = 0; i < sizeof(tori) / sizeof(tori[0]); i++) {
		struct schedule_query q = {.spec = tori[i].spec,
					   .collective = SCHED_ALLTOALL,
					   .algorithm = "all",
					   .size = 1u << 20};
		struct schedule_result r;

		compute(&q, &r);
		const struct direct_fluid *df = &r.fluid;
		double arc_gbps = r.cost.bandwidth / r.degree / 8 / 1e9;
		double want = torus_rstar(tori[i].k, tori[i].dims, arc_gbps),
		       shard_gb = (double)q.size / r.g->n / 1e9;

		if (!df->have || !df->lp || !df->mirrored || !df->optimal)
			fail_msg("%s: have %d lp %d mirrored %d optimal %d (%s)", tori[i].spec,
				 df->have, df->lp, df->mirrored, df->optimal, df->why);
		if (fabs(df->rstar - want) > 1e-9 * want)
			fail_msg("%s: R* %.10g, from first principles %.10g", tori[i].spec,
				 df->rstar, want);
		assert_true(fabs(df->rstar_lower_us - want * shard_gb * 1e6) <=
			    1e-6 * df->rstar_lower_us);
		assert_true(df->cut_us < df->rstar_lower_us);
		for (uint32_t k = 0; k < r.nout; k++) {
			const struct schedule_outcome *o = &r.out[k];

			if (!o->applies)
				continue;
			assert_false(o->below_fluid);
			/* store-and-forward within T hops: R*(T); else the cut */
			if (!o->cut_through && o->steps <= df->hops)
				assert_true(o->fluid_bound_us >= df->rstar_lower_us * (1 - 1e-9));
			else
				assert_true(o->fluid_bound_us == df->cut_us);
		}
		schedule_result_free(&r);
	}
}

/* The solve's budget is what the engines took, within [0.25, 5] s, and at
 * most half of what the request's clock has left. */
static void test_budget(void **state)
{
	struct schedule_query q = {.spec = "torus:4x4",
				   .collective = SCHED_ALLGATHER,
				   .algorithm = "all",
				   .size = 1u << 20};
	struct schedule_result r;
	static const double spent[][2] = {{0.001, 0.25}, {1.5, 1.5}, {100, 5}};
	(void)state;

	compute(&q, &r);
	for (size_t i = 0; i < sizeof(spent) / sizeof(spent[0]); i++) {
		direct_certify(&r, &q, spent[i][0]);
		assert_true(r.fluid.have && r.fluid.lp);
		assert_true(r.fluid.time_limit == spent[i][1]);
	}
	struct ofc_clock clock = {.start = now_seconds(), .deadline = now_seconds() + 1};
	q.clock = &clock;
	direct_certify(&r, &q, 3);
	assert_true(r.fluid.time_limit > 0 && r.fluid.time_limit <= 0.5);
	/* nothing left: no bound, and why */
	clock.deadline = now_seconds() - 1;
	direct_certify(&r, &q, 3);
	assert_false(r.fluid.have);
	assert_non_null(strstr(r.fluid.why, "time is spent"));
	schedule_result_free(&r);
}

/* LP 4.2 refused (its models over the request's memory): the cut bound
 * still stands for every outcome, and the note says why. */
static void test_cut_bound_kept(void **state)
{
	struct schedule_query q = {.spec = "torus:8x8",
				   .collective = SCHED_ALLTOALL,
				   .algorithm = "all",
				   .size = 1u << 20};
	struct schedule_result r;
	(void)state;

	compute(&q, &r);
	double cut = r.fluid.cut_us;
	q.max_memory = 4096;
	direct_certify(&r, &q, 1);
	assert_true(r.fluid.have);
	assert_false(r.fluid.lp);
	assert_true(r.fluid.cut_us == cut && r.fluid.rstar_lower_us == cut && r.fluid.any_hops);
	assert_non_null(strstr(r.fluid.why, "LP 4.2 not solved: "));
	assert_non_null(strstr(r.fluid.why, "memory limit"));
	for (uint32_t k = 0; k < r.nout; k++)
		if (r.out[k].applies)
			assert_true(r.out[k].fluid_bound_us == cut && !r.out[k].below_fluid);
	schedule_result_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_torus_alltoall_bound),
	    cmocka_unit_test(test_budget),
	    cmocka_unit_test(test_cut_bound_kept),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
