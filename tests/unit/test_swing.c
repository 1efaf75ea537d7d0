/* Swing: rho, peers an involution at every step, congestion deficiency
 * (8x8 1.078, 64x64 1.184, recursive doubling 1.219 / 1.465), the
 * schedules verified (reduce semantics) for power-of-two and even
 * non-power-of-two tori, every block reaching every node exactly once in
 * the allgather, and the measured figures matching the formula's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <math.h>

#include "baselines/baselines.h"
#include "baselines/internal.h"

static struct topo_tree *tree(const char *spec)
{
	struct topo_tree *t = NULL;
	struct ofc_error err = {0};

	assert_int_equal(topo_build_tree(spec, NULL, &t, &err), 0);
	return t;
}

static void test_rho_and_peers(void **state)
{
	static const int64_t rho[] = {1, -1, 3, -5, 11, -21, 43, -85, 171, -341};
	static const uint32_t shapes[][3] = {
	    {64, 64, 0}, {8, 8, 8}, {6, 4, 0}, {10, 0, 0}, {2, 4, 0}};
	(void)state;
	for (uint32_t s = 0; s < ARRAY_SIZE(rho); s++)
		assert_true(swing_rho(s) == rho[s]);
	for (size_t i = 0; i < ARRAY_SIZE(shapes); i++) {
		uint32_t D = 0, p = 1, S = 0;

		while (D < 3 && shapes[i][D]) {
			p *= shapes[i][D];
			for (uint32_t k = 1; k < shapes[i][D]; k *= 2)
				S++;
			D++;
		}
		for (uint32_t c = 0; c < 2 * D; c++)
			for (uint32_t s = 0; s < S; s++)
				for (uint32_t r = 0; r < p; r++) {
					uint32_t q = swing_peer(shapes[i], D, c, r, s);

					assert_true(q != r && q < p);
					assert_int_equal(swing_peer(shapes[i], D, c, q, s), r);
				}
	}
	/* Fig. 5: on a 4x4 torus at step 0 node 0 talks to 1, 4, 3, 12. */
	uint32_t d44[2] = {4, 4};
	assert_int_equal(swing_peer(d44, 2, 0, 0, 0), 1);
	assert_int_equal(swing_peer(d44, 2, 1, 0, 0), 4);
	assert_int_equal(swing_peer(d44, 2, 2, 0, 0), 3);
	assert_int_equal(swing_peer(d44, 2, 3, 0, 0), 12);
}

static double xi(const char *spec, enum torus_algo algo, bool build)
{
	struct topo_tree *t = tree(spec);
	struct torus_figures f;
	struct schedule s;
	struct ofc_error err = {0};

	assert_int_equal(
	    torus_allreduce(t, algo, SWING_BANDWIDTH, true, build ? &s : NULL, &f, &err), 0);
	if (build)
		sched_free(&s);
	topo_tree_free(t);
	return f.xi;
}

static void test_congestion_deficiency(void **state)
{
	(void)state;
	assert_true(fabs(xi("torus:8x8", TORUS_SWING, false) - 1.078) < 1e-3);
	assert_true(fabs(xi("torus:64x64", TORUS_SWING, false) - 1.184) < 1e-3);
	assert_true(fabs(xi("torus:8x8x8", TORUS_SWING, false) - 1.0254) < 1e-3);
	assert_true(fabs(xi("torus:8x8", TORUS_RECURSIVE_DOUBLING, false) - 1.219) < 1e-3);
	assert_true(fabs(xi("torus:64x64", TORUS_RECURSIVE_DOUBLING, false) - 1.465) < 1e-3);
	/* The schedule's routed loads give the formula's value. */
	assert_true(fabs(xi("torus:8x8", TORUS_SWING, true) - xi("torus:8x8", TORUS_SWING, false)) <
		    1e-12);
	assert_true(fabs(xi("torus:16x4", TORUS_SWING, true) -
			 xi("torus:16x4", TORUS_SWING, false)) < 1e-12);
}

static void test_schedules_verified(void **state)
{
	static const struct {
		const char *spec;
		enum torus_algo algo;
		enum swing_variant v;
	} t[] = {{"torus:8x8", TORUS_SWING, SWING_BANDWIDTH},
		 {"torus:8x8", TORUS_SWING, SWING_LATENCY},
		 {"torus:16", TORUS_SWING, SWING_BANDWIDTH},
		 {"torus:6x4", TORUS_SWING, SWING_BANDWIDTH},
		 {"torus:10", TORUS_SWING, SWING_BANDWIDTH},
		 {"torus:6x10", TORUS_SWING, SWING_BANDWIDTH},
		 {"torus:4x4x4", TORUS_SWING, SWING_BANDWIDTH},
		 {"torus:8x4", TORUS_RECURSIVE_DOUBLING, SWING_BANDWIDTH},
		 {"torus:2x4", TORUS_SWING, SWING_BANDWIDTH},
		 {"torus:4x4", TORUS_RECURSIVE_DOUBLING, SWING_LATENCY}};
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(t); i++) {
		struct topo_tree *tr = tree(t[i].spec);
		struct torus_figures f;
		struct schedule s;
		struct verify_report r;
		struct ofc_error err = {0};

		assert_int_equal(torus_allreduce(tr, t[i].algo, t[i].v, true, &s, &f, &err), 0);
		if (sched_verify(&s, NULL, &r) < 0)
			fail_msg("%s %s: %s", t[i].spec, torus_algo_name(t[i].algo), r.error);
		if (t[i].v == SWING_BANDWIDTH) {
			/* Allgather half: every (node, shard, part) arrives once. */
			uint32_t n = s.nodes, half = s.nsteps / 2;
			uint32_t *got = xcalloc((size_t)n * n * 64, sizeof(uint32_t));

			for (uint32_t st = half; st < s.nsteps; st++)
				for (uint32_t k = s.step_start[st]; k < s.step_start[st + 1]; k++) {
					const struct xfer *x = &s.xfers[k];
					uint32_t part =
					    (uint32_t)(((uint64_t)x->offset * f.instances +
							SCHED_ONE / 2) /
						       SCHED_ONE);

					got[((size_t)x->dst * n + x->block) * 64 + part]++;
				}
			for (uint32_t u = 0; u < n; u++)
				for (uint32_t b = 0; b < n; b++)
					for (uint32_t c = 0; c < f.instances; c++)
						if (got[((size_t)u * n + b) * 64 + c] !=
						    (u == b ? 0u : 1u))
							fail_msg("%s: node %u shard %u part %u "
								 "arrives %u times",
								 t[i].spec, u, b, c,
								 got[((size_t)u * n + b) * 64 + c]);
			free(got);
		}
		sched_free(&s);
		topo_tree_free(tr);
	}
}

static void test_bad_input(void **state)
{
	struct topo_tree *t = tree("torus:5x4");
	struct torus_figures f;
	struct schedule s;
	struct ofc_error err = {0};
	(void)state;

	assert_int_equal(torus_allreduce(t, TORUS_SWING, SWING_BANDWIDTH, true, &s, &f, &err), -1);
	assert_non_null(strstr(err.msg, "odd"));
	topo_tree_free(t);
	t = tree("torus:6x4");
	assert_int_equal(torus_allreduce(t, TORUS_SWING, SWING_LATENCY, true, &s, &f, &err), -1);
	assert_int_equal(
	    torus_allreduce(t, TORUS_RECURSIVE_DOUBLING, SWING_BANDWIDTH, true, &s, &f, &err), -1);
	topo_tree_free(t);
	t = tree("hypercube:3");
	assert_int_equal(torus_allreduce(t, TORUS_SWING, SWING_BANDWIDTH, true, &s, &f, &err), -1);
	topo_tree_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_rho_and_peers),
	    cmocka_unit_test(test_congestion_deficiency),
	    cmocka_unit_test(test_schedules_verified),
	    cmocka_unit_test(test_bad_input),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
