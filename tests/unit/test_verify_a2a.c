/* The verifier's all-to-all check (sched/verify_a2a.c): MCF schedules and
 * weighted ones right and broken, the check by sorting alone (white-box
 * sorted_alone) and on 2, 3, 4 and 8 threads against 1, bit for bit. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "alltoall/alltoall.h"
#include "sched/sched.h"
#include "sched/verify_internal.h" /* sorted_alone, white-box */

static struct xfer X(uint32_t src, uint32_t dst, uint32_t block) {
	return (struct xfer){.src = (uint16_t)src,
			     .dst = (uint16_t)dst,
			     .block = block,
			     .offset = 0,
			     .length = SCHED_ONE,
			     .lane = SCHED_NO_LANE};
}

static void
test_alltoall(void **state)
{
	struct schedule s;
	struct verify_report r;
	uint32_t n = 4;
	(void)state;

	sched_init(&s, SCHED_ALLTOALL, "direct", n);
	sched_step(&s);
	for (uint32_t o = 0; o < n; o++)
		for (uint32_t t = 0; t < n; t++)
			if (o != t) {
				struct xfer x = X(o, t, o * n + t);
				sched_add(&s, &x);
			}
	assert_int_equal(sched_verify(&s, NULL, &r), 0);

	/* Relay through node 2 in a second step: still fine. */
	s.xfers[0].dst = 2; /* block 0 -> 1 goes to 2 first */
	sched_step(&s);
	struct xfer relay = X(2, 1, 0 * n + 1);
	sched_add(&s, &relay);
	assert_int_equal(sched_verify(&s, NULL, &r), 0);

	/* Delivered to its target twice. */
	struct xfer again = X(2, 1, 0 * n + 1);
	sched_add(&s, &again);
	assert_int_equal(sched_verify(&s, NULL, &r), -1);
	assert_non_null(strstr(r.error, "twice"));
	sched_free(&s);
}

/* Skewed all-to-all (verify_opts.block_weight): each block loads
 * its link by its weight, a block of weight 0 need not arrive, and weights
 * are refused off all-to-alls. */
static void test_alltoall_weights(void **state)
{
	struct graph *g = NULL;
	struct ofc_error err = {0};
	struct schedule s;
	struct verify_report r;
	uint32_t n = 4;
	double w[16];
	(void)state;

	assert_int_equal(topo_build("complete:4", &g, &err), 0);
	for (uint32_t b = 0; b < n * n; b++)
		w[b] = b / n == b % n ? 0 : 1;
	w[0 * n + 1] = 3;   /* 0 -> 1 weighs 3 */
	w[2 * n + 3] = 0;   /* 2 -> 3 asks for nothing */
	w[1 * n + 2] = 0.5; /* half a shard */
	sched_init(&s, SCHED_ALLTOALL, "direct", n);
	sched_step(&s);
	for (uint32_t o = 0; o < n; o++)
		for (uint32_t t = 0; t < n; t++)
			if (o != t && w[o * n + t] > 0) {
				struct xfer x = X(o, t, o * n + t);
				sched_add(&s, &x);
			}
	struct verify_opts vo = {.graph = g, .block_weight = w};
	assert_int_equal(sched_verify(&s, &vo, &r), 0);
	assert_true(fabs(r.max_link_load - 3) < 1e-9);
	assert_true(fabs(r.max_total_link_load - 3) < 1e-9);
	/* Unweighed, 2 -> 3 is missing. */
	vo.block_weight = NULL;
	assert_int_equal(sched_verify(&s, &vo, &r), -1);
	assert_non_null(strstr(r.error, "incomplete"));
	/* A block asked for and not sent. */
	w[2 * n + 3] = 1;
	vo.block_weight = w;
	assert_int_equal(sched_verify(&s, &vo, &r), -1);
	w[2 * n + 3] = -1;
	assert_int_equal(sched_verify(&s, &vo, &r), -1);
	assert_non_null(strstr(r.error, "weighs"));
	sched_free(&s);
	sched_init(&s, SCHED_ALLGATHER, "x", n);
	assert_int_equal(sched_verify(&s, &vo, &r), -1);
	assert_non_null(strstr(r.error, "block weights"));
	sched_free(&s);
	graph_free(g);
}

/* The check by sorting alone (verify_a2a.c), as sched_verify runs it
 * first: 0 when it proves s right itself. A right schedule's parts joined
 * out of order say no there, and the step loop's way then says yes: only
 * this sees it. */
static int sorted_alone(const struct schedule *s, const struct verify_opts *o)
{
	struct verify_report r = {.ok = true};
	struct vstate v = {.s = s, .o = o, .r = &r, .n = s->nodes, .sorted = true};
	int rc = verify_setup(&v) < 0 ? -1 : verify_a2a_sorted(&v);

	verify_teardown(&v);
	return rc;
}

/* s checked on one thread and on 2, 3, 4 and 8 (at the verifier's own
 * threshold, and from 16 transfers a worker, so that every thread takes
 * a part): the same return, report and step loads (the entries past an
 * error as they were before). */
static void same_on_threads(const struct schedule *s, const struct graph *g, int want,
			    const char *error)
{
	static const unsigned threads[] = {2, 3, 4, 8};
	struct verify_report r1, r2;
	double *l1 = malloc((s->nsteps + 1) * sizeof(double));
	double *l2 = malloc((s->nsteps + 1) * sizeof(double));

	for (uint32_t t = 0; t <= s->nsteps; t++)
		l1[t] = -1;
	struct verify_opts o1 = {.graph = g, .threads = 1, .step_link_load = l1};
	assert_int_equal(sched_verify(s, &o1, &r1), want);
	if (want == 0)
		assert_true(l1[0] > 0);
	else
		assert_non_null(strstr(r1.error, error));
	for (size_t i = 0; i < 2 * ARRAY_SIZE(threads); i++) {
		struct verify_opts o2 = {.graph = g,
					 .threads = threads[i / 2],
					 .step_link_load = l2,
					 .par_min_xfers = i % 2 ? 32 : 0};

		for (uint32_t t = 0; t <= s->nsteps; t++)
			l2[t] = -1;
		assert_int_equal(sched_verify(s, &o2, &r2), want);
		assert_memory_equal(&r1, &r2, sizeof(r1));
		assert_memory_equal(l1, l2, (s->nsteps + 1) * sizeof(double));
		if (want == 0 && s->collective == SCHED_ALLTOALL)
			assert_int_equal(sorted_alone(s, &o2), 0);
	}
	free(l1);
	free(l2);
}

/* An all-to-all past the two threads' threshold (torus:12x12's direct
 * routes, 128 K transfers) is checked on several as on one: right; wrong
 * where the sorting sees it (a hop carries half its block, so the next
 * hop or the target lacks the rest); wrong where only the step loop
 * alongside does (a hop on another port), its step loads past the
 * error left alone. And genkautz:64,4's MCF lowered to paths: blocks in
 * pieces, numbered in each part. */
static void test_alltoall_threads(void **state)
{
	struct graph *g;
	struct ofc_error err = {0};
	struct a2a_request q = {.algo = A2A_DIRECT};
	struct a2a_outcome out = {0};
	struct schedule s;
	(void)state;

	assert_int_equal(topo_build("torus:12x12", &g, &err), 0);
	assert_int_equal(a2a_build(g, &q, &s, &out, &err), 0);
	assert_true(s.nxfers > 100000 && s.nsteps > 2);
	same_on_threads(&s, g, 0, NULL);

	/* a first hop: its next hop reads what it lacks */
	size_t k = s.step_start[0] + 7;
	struct xfer keep = s.xfers[k];
	s.xfers[k].length = SCHED_ONE / 2;
	same_on_threads(&s, g, -1, "does not hold that data");
	s.xfers[k] = keep;

	k = s.step_start[2] + 11;
	keep = s.xfers[k];
	s.xfers[k].lane = (uint16_t)((s.xfers[k].lane + 1) % 4);
	same_on_threads(&s, g, -1, "does not lead to node");
	s.xfers[k] = keep;
	same_on_threads(&s, g, 0, NULL);
	sched_free(&s);
	a2a_outcome_free(&out);
	graph_free(g);

	struct a2a_request mq = {
	    .algo = A2A_MCF, .lowering = a2a_lowering_at(A2A_LOWER_PATHS), .mcf = {.threads = 1}};

	assert_int_equal(topo_build("genkautz:64,4", &g, &err), 0);
	assert_int_equal(a2a_build(g, &mq, &s, &out, &err), 0);
	assert_true(s.nxfers > 1000 && s.nsteps > 2);
	size_t parts = 0;
	for (size_t x = 0; x < s.nxfers; x++)
		parts += s.xfers[x].length != SCHED_ONE;
	assert_true(parts > 100);
	same_on_threads(&s, g, 0, NULL);
	sched_free(&s);
	a2a_outcome_free(&out);
	graph_free(g);
}

/* The all-to-all's holdings are checked by sorting (verify_a2a.c)
 * and, when that finds fault, again the step loop's way: the duplicates of
 * a right schedule (at a relay, back at the origin) as the step loop sums
 * them, and the first failure where the step loop finds it. */
static void test_alltoall_sorted(void **state)
{
	struct schedule s;
	struct verify_report r;
	uint32_t n = 4, half = SCHED_ONE / 2;
	(void)state;

	sched_init(&s, SCHED_ALLTOALL, "direct", n);
	sched_step(&s);
	for (uint32_t o = 0; o < n; o++)
		for (uint32_t t = 0; t < n; t++)
			if (o != t && o * n + t != 1) {
				struct xfer x = X(o, t, o * n + t);
				sched_add(&s, &x);
			}
	/* Block 0 -> 1 in halves, the second through 2, a quarter of it to
	 * 3 twice, and the second half back to its origin. */
	struct xfer a = X(0, 1, 1), b = X(0, 2, 1), c = X(0, 3, 1);
	a.length = b.length = b.offset = half;
	c.length = half;
	sched_add(&s, &a);
	sched_add(&s, &b);
	sched_add(&s, &c);
	sched_step(&s);
	struct xfer d = X(2, 1, 1), e = X(0, 3, 1), f = X(2, 0, 1);
	d.offset = d.length = f.offset = f.length = half;
	e.length = half / 2;
	sched_add(&s, &d);
	sched_add(&s, &e);
	sched_add(&s, &f);
	assert_int_equal(sched_verify(&s, NULL, &r), 0);
	assert_true(r.duplicate_blocks == 0.75);

	/* 3 forwards what it holds, then what it does not. */
	struct xfer g = X(3, 2, 1);
	g.length = half;
	sched_add(&s, &g);
	assert_int_equal(sched_verify(&s, NULL, &r), 0);
	s.xfers[s.nxfers - 1].length = half + 1;
	assert_int_equal(sched_verify(&s, NULL, &r), -1);
	assert_int_equal(r.bad_step, 1);
	assert_int_equal(r.bad_xfer, s.nxfers - 1);
	assert_non_null(strstr(r.error, "node 3 does not hold that data"));
	sched_free(&s);

	/* Many buckets: torus:12x12's direct routes, 128 K transfers. */
	struct graph *gr;
	struct ofc_error err = {0};
	struct a2a_request q = {.algo = A2A_DIRECT};
	struct a2a_outcome out = {0};

	assert_int_equal(topo_build("torus:12x12", &gr, &err), 0);
	assert_int_equal(a2a_build(gr, &q, &s, &out, &err), 0);
	assert_true(s.nxfers > 100000);
	struct verify_opts o = {.graph = gr};
	assert_int_equal(sched_verify(&s, &o, &r), 0);
	assert_true(r.duplicate_blocks == 0);
	/* The last hop sent to its own sender: the step loop's error. */
	s.xfers[s.nxfers - 1].dst = s.xfers[s.nxfers - 1].src; /* a node to itself */
	assert_int_equal(sched_verify(&s, &o, &r), -1);
	assert_non_null(strstr(r.error, "a node sends to itself"));
	sched_free(&s);
	a2a_outcome_free(&out);
	graph_free(gr);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_alltoall),
	    cmocka_unit_test(test_alltoall_threads),
	    cmocka_unit_test(test_alltoall_sorted),
	    cmocka_unit_test(test_alltoall_weights),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
