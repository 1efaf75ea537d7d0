/* The classic baselines (baselines/baseline.c) on the closed forms they must
 * meet, every schedule through the verifier: a one-way ring takes N-1
 * steps each loading one link with a shard (tau_B = (N-1) d/N), a two-way
 * ring halves that, recursive doubling on a hypercube takes log N steps
 * with the same (N-1) d/N, the per-dimension torus schedule is
 * bandwidth-optimal on equal sides in D(a-1) steps; allreduce doubles all of them.
 * Where one does not apply, an OFC_E_INPUT error says why. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "baselines/baselines.h"
#include "sched/sched.h"

struct outcome {
	uint32_t steps;
	struct frac tau_b; /* from the verifier's link loads */
};

static int run(const char *spec, enum baseline_algo algo, enum sched_collective c,
	       struct outcome *o, struct ofc_error *err)
{
	struct graph *g;
	struct topo_tree *t;
	struct schedule s;
	struct verify_report rep;
	int rc;

	assert_int_equal(topo_build_tree(spec, &g, &t, err), 0);
	rc = baseline_schedule(g, t, algo, c, &s, NULL, err);
	if (rc == 0) {
		struct verify_opts vo = {.graph = g};

		if (sched_verify(&s, &vo, &rep) < 0)
			fail_msg("%s on %s: %s", baseline_algo_name(algo), spec, rep.error);
		o->steps = s.nsteps;
		o->tau_b = frac_from_double(rep.sum_max_link_load * graph_outdeg(g, 0) / g->n,
					    16 * (int64_t)g->n, 1e-9);
		sched_free(&s);
	}
	topo_tree_free(t);
	graph_free(g);
	return rc;
}

static void expect(const char *spec, enum baseline_algo algo, enum sched_collective c,
		   uint32_t steps, int64_t num, int64_t den)
{
	struct outcome o;
	struct ofc_error err = {0};

	if (run(spec, algo, c, &o, &err) < 0)
		fail_msg("%s on %s: %s", baseline_algo_name(algo), spec, err.msg);
	if (o.steps != steps || frac_cmp(o.tau_b, frac_make(num, den)) != 0)
		fail_msg("%s %s on %s: %u steps, tau_B %lld/%lld; want %u, %lld/%lld",
			 baseline_algo_name(algo), sched_collective_name(c), spec, o.steps,
			 (long long)o.tau_b.num, (long long)o.tau_b.den, steps, (long long)num,
			 (long long)den);
}

static void test_rings(void **state)
{
	static const struct {
		const char *spec;
		int64_t n, d;
	} g[] = {{"torus:4x4", 16, 4}, {"circulant:12:1,5", 12, 4}, {"biring:9", 9, 2}};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(g); i++) {
		int64_t n = g[i].n, d = g[i].d;

		expect(g[i].spec, BASELINE_RING, SCHED_ALLGATHER, n - 1, (n - 1) * d, n);
		expect(g[i].spec, BASELINE_RING, SCHED_REDUCE_SCATTER, n - 1, (n - 1) * d, n);
		expect(g[i].spec, BASELINE_RING, SCHED_ALLREDUCE, 2 * (n - 1), 2 * (n - 1) * d, n);
		expect(g[i].spec, BASELINE_BIDIR_RING, SCHED_ALLGATHER, n - 1, (n - 1) * d, 2 * n);
		expect(g[i].spec, BASELINE_BIDIR_RING, SCHED_ALLREDUCE, 2 * (n - 1), (n - 1) * d,
		       n);
	}
}

static void test_recursive(void **state)
{
	(void)state;
	/* hypercube: every partner is a neighbour */
	expect("hypercube:4", BASELINE_RECURSIVE, SCHED_ALLGATHER, 4, 15 * 4, 16);
	expect("hypercube:5", BASELINE_RECURSIVE, SCHED_ALLGATHER, 5, 31 * 5, 32);
	expect("hypercube:4", BASELINE_RECURSIVE, SCHED_REDUCE_SCATTER, 4, 15 * 4, 16);
	expect("hypercube:4", BASELINE_RECURSIVE, SCHED_ALLREDUCE, 8, 2 * 15 * 4, 16);
}

static void test_torus_rings(void **state)
{
	(void)state;
	/* two-way rings per dimension, a sub-shard starting at each: on a cube
	 * with sides a that is D(a-1) steps and (N-1)/N, bandwidth-optimal */
	expect("torus:4x4", BASELINE_TORUS_RINGS, SCHED_ALLGATHER, 6, 15, 16);
	expect("torus:6x6", BASELINE_TORUS_RINGS, SCHED_ALLGATHER, 10, 35, 36);
	expect("torus:4x4x4", BASELINE_TORUS_RINGS, SCHED_ALLGATHER, 9, 63, 64);
	expect("torus:4x4", BASELINE_TORUS_RINGS, SCHED_ALLREDUCE, 12, 2 * 15, 16);
	/* A dimension of size 2 has one arc, both ways: its two halves share
	 * it (the lanes are node 0's ports, not 2j and 2j + 1). */
	expect("torus:4x4x2", BASELINE_TORUS_RINGS, SCHED_ALLGATHER, 7, 15, 8);
}

static void test_refusals(void **state)
{
	struct outcome o;
	struct ofc_error err = {0};

	(void)state;
	assert_int_equal(run("circulant:12:1,5", BASELINE_RECURSIVE, SCHED_ALLGATHER, &o, &err),
			 -1);
	assert_int_equal(err.code, OFC_E_INPUT);
	assert_non_null(strstr(err.msg, "power-of-two"));
	assert_int_equal(run("hypercube:4", BASELINE_TORUS_RINGS, SCHED_ALLGATHER, &o, &err), -1);
	assert_int_equal(err.code, OFC_E_INPUT);
	assert_non_null(strstr(err.msg, "torus"));
	/* The names the messages and schedules carry (the engine rows'). */
	assert_string_equal(baseline_algo_name(BASELINE_RING), "ring");
	assert_string_equal(baseline_algo_name(BASELINE_BIDIR_RING), "bidir-ring");
	assert_string_equal(baseline_algo_name(BASELINE_RECURSIVE), "recursive");
	assert_string_equal(baseline_algo_name(BASELINE_TORUS_RINGS), "torus-rings");
}

/* The Hamiltonian search on an irregular digraph (node 0 of out-degree 1,
 * others up to 4): it kept node 0's degree of candidate slots per depth,
 * so a wider node's candidates overwrote the next depth's and backtracking
 * tried wrong nodes: this graph, with the cycle 0 2 4 1 5 3 6, was
 * reported as having none. */
static void test_ring_irregular(void **state)
{
	uint32_t t[] = {0, 1, 1, 1, 2, 2, 3, 3, 4, 4, 4, 4, 5, 5, 6};
	uint32_t h[] = {2, 0, 4, 5, 3, 4, 0, 6, 0, 1, 3, 6, 3, 6, 0};
	struct graph *g = graph_from_arcs(7, ARRAY_SIZE(t), t, h, "irregular7");
	struct schedule s;
	struct verify_report rep;
	struct verify_opts vo = {.graph = g};
	struct ofc_error err = {0};
	(void)state;

	if (baseline_schedule(g, NULL, BASELINE_RING, SCHED_ALLGATHER, &s, NULL, &err) < 0)
		fail_msg("ring: %s", err.msg);
	assert_int_equal(s.nsteps, 6);
	if (sched_verify(&s, &vo, &rep) < 0)
		fail_msg("ring: %s", rep.error);
	sched_free(&s);
	graph_free(g);
}

/* The ring's n (n - 1) transfers are built under the request's clock
 *: past it, nothing is built and the error says so. */
static void test_ring_clock(void **state)
{
	struct graph *g = NULL;
	struct ofc_error err = {0};
	struct schedule s;
	struct ofc_clock past = {
	    .start = now_seconds() - 2, .deadline = now_seconds() - 1, .limit = 1};
	(void)state;

	assert_int_equal(topo_build("hypercube:6", &g, &err), 0);
	assert_int_equal(
	    baseline_schedule(g, NULL, BASELINE_RING, SCHED_ALLREDUCE, &s, &past, &err), -1);
	assert_int_equal(err.code, OFC_E_RUNTIME);
	assert_string_equal(err.msg, "time limit 1 s reached in generation");
	assert_int_equal(s.nxfers, 0);
	assert_int_equal(
	    baseline_schedule(g, NULL, BASELINE_BIDIR_RING, SCHED_ALLGATHER, &s, &past, &err), -1);
	/* Without one, or before it, the schedule is whole. */
	struct ofc_clock later = {.start = now_seconds(), .deadline = now_seconds() + 3600};
	assert_int_equal(
	    baseline_schedule(g, NULL, BASELINE_RING, SCHED_ALLREDUCE, &s, &later, &err), 0);
	assert_int_equal(s.nxfers, 2u * 64 * 63);
	sched_free(&s);
	graph_free(g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_rings),	   cmocka_unit_test(test_recursive),
	    cmocka_unit_test(test_torus_rings),	   cmocka_unit_test(test_refusals),
	    cmocka_unit_test(test_ring_irregular), cmocka_unit_test(test_ring_clock),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
