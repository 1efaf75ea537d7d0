/* The verifier's sorted WDM path (sched/verify_wdm.c): conflicts including
 * round the wrap, one lightpath carrying parts of blocks, capacity and
 * add/drop limits, busy wavelengths in sparse and dense steps, and the
 * first offending transfer reported as a walk in order finds it, out of
 * range or not. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "sched/sched.h"

static struct xfer L(uint32_t src, uint32_t dst, uint32_t block, enum ring_dir d, uint32_t fibre,
		     uint32_t wl) {
	return (struct xfer){.src = (uint16_t)src,
			     .dst = (uint16_t)dst,
			     .block = block,
			     .offset = 0,
			     .length = SCHED_ONE,
			     .lane = (uint16_t)wl,
			     .fibre = (uint8_t)fibre,
			     .flags = xfer_flags(d, XFER_COPY)};
}

static int
verify(struct schedule *s, uint32_t w, uint32_t f, uint32_t max_add, struct verify_report *r)
{
	struct verify_wdm wdm = {w, f, max_add};
	struct verify_opts o = {.wdm = &wdm};

	return sched_verify(s, &o, r);
}

static void one_step(struct schedule *s, uint32_t n, const struct xfer *x, size_t k)
{
	sched_init(s, SCHED_ALLGATHER, "t", n);
	sched_step(s);
	for (size_t i = 0; i < k; i++)
		sched_add(s, &x[i]);
}

static void test_wrap_conflict(void **state)
{
	struct schedule s;
	struct verify_report r;
	(void)state;

	/* 6 -> 1 clockwise covers segments 6, 7, 0 of an 8-ring; 0 -> 2 covers
	 * 0 and 1: they meet on segment 0, after the wrap. */
	struct xfer x[2] = {L(0, 2, 0, DIR_CW, 0, 0), L(6, 1, 6, DIR_CW, 0, 0)};
	one_step(&s, 8, x, 2);
	assert_int_equal(verify(&s, 1, 1, 8, &r), -1);
	assert_int_equal(r.bad_xfer, 1);
	assert_non_null(strstr(r.error, "conflict on segment 0-1 (cw fibre 0 wavelength 0) with "
					"lightpath 0 -> 2"));
	sched_free(&s);
	/* Ending exactly where the other starts is fine (then incomplete). */
	struct xfer y[2] = {L(0, 2, 0, DIR_CW, 0, 0), L(6, 0, 6, DIR_CW, 0, 0)};
	one_step(&s, 8, y, 2);
	assert_int_equal(verify(&s, 1, 1, 8, &r), -1);
	assert_non_null(strstr(r.error, "incomplete"));
	assert_int_equal(r.max_wavelengths_used, 1);
	sched_free(&s);
	/* Counter-clockwise: 2 -> 0 uses segments 1, 0 and 1 -> 6 uses 0, 7, 6. */
	struct xfer z[2] = {L(2, 0, 2, DIR_CCW, 0, 0), L(1, 6, 1, DIR_CCW, 0, 0)};
	one_step(&s, 8, z, 2);
	assert_int_equal(verify(&s, 1, 1, 8, &r), -1);
	assert_non_null(strstr(r.error, "conflict on segment 0-1 (ccw fibre 0 wavelength 0)"));
	sched_free(&s);
}

static void test_first_offender(void **state)
{
	struct schedule s;
	struct verify_report r;
	(void)state;

	/* Transfer 2 clashes with 0, transfer 3 with 1: a walk in order stops
	 * at 2, and so must the sorted path. */
	struct xfer x[4] = {L(0, 3, 0, DIR_CW, 0, 0), L(10, 13, 10, DIR_CW, 0, 0),
			    L(1, 2, 1, DIR_CW, 0, 0), L(11, 12, 11, DIR_CW, 0, 0)};
	one_step(&s, 16, x, 4);
	assert_int_equal(verify(&s, 1, 1, 16, &r), -1);
	assert_int_equal(r.bad_xfer, 2);
	assert_non_null(strstr(r.error, "with lightpath 0 -> 3"));
	sched_free(&s);
}

static void test_one_lightpath_two_halves(void **state)
{
	struct schedule s;
	struct verify_report r;
	(void)state;

	/* Node 0's block to 1 in two halves on one lightpath: fine. A third
	 * quarter on it is one block and a quarter: over capacity. */
	struct xfer x[3] = {L(0, 1, 0, DIR_CW, 0, 0), L(0, 1, 0, DIR_CW, 0, 0),
			    L(0, 1, 0, DIR_CW, 0, 0)};
	x[0].length = x[1].length = SCHED_ONE / 2;
	x[1].offset = SCHED_ONE / 2;
	x[2].length = SCHED_ONE / 4;
	one_step(&s, 2, x, 2);
	struct xfer back = L(1, 0, 1, DIR_CW, 0, 0);
	sched_add(&s, &back);
	assert_int_equal(verify(&s, 1, 1, 1, &r), 0);
	assert_int_equal(r.max_wavelengths_used, 1);
	sched_add(&s, &x[2]);
	assert_int_equal(verify(&s, 1, 1, 1, &r), -1);
	assert_int_equal(r.bad_xfer, 3);
	assert_non_null(strstr(r.error, "more than one block"));
	sched_free(&s);
}

static void test_drop_limit(void **state)
{
	struct schedule s;
	struct verify_report r;
	(void)state;

	/* Three nodes send to node 4 on three wavelengths: 3 drops there. */
	struct xfer x[3] = {L(1, 4, 1, DIR_CW, 0, 0), L(2, 4, 2, DIR_CW, 0, 1),
			    L(7, 4, 7, DIR_CCW, 0, 0)};
	one_step(&s, 8, x, 3);
	assert_int_equal(verify(&s, 2, 1, 3, &r), -1);
	assert_non_null(strstr(r.error, "incomplete"));
	assert_int_equal(verify(&s, 2, 1, 2, &r), -1);
	assert_int_equal(r.bad_xfer, 2);
	assert_non_null(strstr(r.error, "node 4 drops more than 2"));
	sched_free(&s);
}

static void test_busy_sparse_and_dense(void **state)
{
	struct schedule s;
	struct verify_report r;
	(void)state;

	/* 256 nodes, three lightpaths over segment 100 on fibre 1 (sparse),
	 * one more on fibre 0 elsewhere: 3 busy on one fibre segment. */
	struct xfer x[4] = {L(90, 110, 90, DIR_CW, 1, 0), L(100, 101, 100, DIR_CW, 1, 1),
			    L(95, 120, 95, DIR_CW, 1, 2), L(0, 200, 0, DIR_CW, 0, 3)};
	one_step(&s, 256, x, 4);
	assert_int_equal(verify(&s, 4, 2, 4, &r), -1);
	assert_non_null(strstr(r.error, "incomplete"));
	assert_int_equal(r.max_wavelengths_used, 3);
	sched_free(&s);
	/* A dense step (every node sends to both neighbours on wavelength 0):
	 * one busy per fibre segment each way. */
	sched_init(&s, SCHED_ALLGATHER, "t", 32);
	sched_step(&s);
	for (uint32_t u = 0; u < 32; u++) {
		struct xfer a = L(u, (u + 1) % 32, u, DIR_CW, 0, 0);
		struct xfer b = L(u, (u + 31) % 32, u, DIR_CCW, 0, 0);

		sched_add(&s, &a);
		sched_add(&s, &b);
	}
	assert_int_equal(verify(&s, 2, 1, 2, &r), -1);
	assert_non_null(strstr(r.error, "incomplete"));
	assert_int_equal(r.max_wavelengths_used, 1);
	sched_free(&s);
}

/* A transfer with no direction, or a fibre or wavelength the ring lacks,
 * is refused where it stands, in a step the sorted check clears (it
 * leaves them out) and in one it walks (a conflict after them). */
static void test_out_of_range(void **state)
{
	static const struct {
		struct xfer bad;
		const char *why;
	} cases[] = {
	    {{.src = 3, .dst = 4, .block = 3, .length = SCHED_ONE}, "no ring direction"},
	    {{.src = 3, .dst = 4, .block = 3, .length = SCHED_ONE, .fibre = 2, .flags = DIR_CW},
	     "fibre 2 out of range (2 per direction)"},
	    {{.src = 3, .dst = 4, .block = 3, .length = SCHED_ONE, .lane = 3, .flags = DIR_CCW},
	     "wavelength 3 out of range (3 per fibre)"},
	};
	struct schedule s;
	struct verify_report r;
	(void)state;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		for (int walk = 0; walk < 2; walk++) {
			/* walk: 6 -> 1 and 0 -> 2 meet on segment 0, after the bad one */
			struct xfer x[3] = {L(0, 2, 0, DIR_CW, 0, 0), cases[i].bad,
					    L(6, 1, 6, DIR_CW, 0, 0)};

			one_step(&s, 8, x, walk ? 3 : 2);
			assert_int_equal(verify(&s, 3, 2, 8, &r), -1);
			assert_int_equal(r.bad_xfer, 1);
			assert_non_null(strstr(r.error, cases[i].why));
			sched_free(&s);
		}
}

/* Lightpaths through the verifier's main entry: a segment's conflict, a
 * wavelength out of range, two blocks on one lightpath, the add limit. */
static void test_wdm(void **state)
{
	struct schedule s;
	struct verify_report r;
	struct verify_wdm w = {.wavelengths = 2, .fibres = 1, .max_add = 4};
	struct verify_opts o = {.wdm = &w};
	(void)state;

	/* 0->2 and 1->3 clockwise share segment 1-2: not on one wavelength. */
	sched_init(&s, SCHED_ALLGATHER, "wdm", 4);
	sched_step(&s);
	struct xfer a = L(0, 2, 0, DIR_CW, 0, 0), b = L(1, 3, 1, DIR_CW, 0, 0);
	sched_add(&s, &a);
	sched_add(&s, &b);
	assert_int_equal(sched_verify(&s, &o, &r), -1);
	assert_non_null(strstr(r.error, "conflict on segment 1-2"));

	/* On two wavelengths they coexist; 2 wavelengths busy on segment 1-2. */
	s.xfers[1].lane = 1;
	/* Counter-clockwise 3->1 uses other fibres: no conflict. */
	struct xfer c = L(3, 1, 3, DIR_CCW, 0, 0);
	sched_add(&s, &c);
	r.max_wavelengths_used = 0;
	assert_int_equal(sched_verify(&s, &o, &r), -1); /* incomplete, but ... */
	assert_non_null(strstr(r.error, "incomplete"));
	assert_int_equal(r.max_wavelengths_used, 2);

	/* Wavelength out of range. */
	s.xfers[1].lane = 2;
	assert_int_equal(sched_verify(&s, &o, &r), -1);
	assert_non_null(strstr(r.error, "wavelength 2 out of range"));
	sched_free(&s);

	/* One lightpath, two whole blocks in one step: over capacity. */
	sched_init(&s, SCHED_ALLGATHER, "wdm", 4);
	sched_step(&s);
	a = L(0, 1, 0, DIR_CW, 0, 0);
	sched_add(&s, &a);
	sched_step(&s);
	a = L(1, 2, 0, DIR_CW, 0, 0);
	b = L(1, 2, 1, DIR_CW, 0, 0);
	sched_add(&s, &a);
	sched_add(&s, &b);
	assert_int_equal(sched_verify(&s, &o, &r), -1);
	assert_non_null(strstr(r.error, "more than one block"));

	/* Half of each fits. */
	s.xfers[1].length = SCHED_ONE / 2;
	s.xfers[2].length = SCHED_ONE / 2;
	assert_int_equal(sched_verify(&s, &o, &r), -1);
	assert_non_null(strstr(r.error, "incomplete"));
	sched_free(&s);

	/* Add limit: node 0 adds 3 lightpaths where 2 are allowed. */
	w.max_add = 2;
	w.wavelengths = 4;
	sched_init(&s, SCHED_ALLGATHER, "wdm", 4);
	sched_step(&s);
	for (uint32_t k = 1; k <= 3; k++) {
		struct xfer x = L(0, k, 0, DIR_CW, 0, k);
		sched_add(&s, &x);
	}
	assert_int_equal(sched_verify(&s, &o, &r), -1);
	assert_non_null(strstr(r.error, "adds more than 2"));
	sched_free(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_wrap_conflict),
	    cmocka_unit_test(test_first_offender),
	    cmocka_unit_test(test_one_lightpath_two_halves),
	    cmocka_unit_test(test_drop_limit),
	    cmocka_unit_test(test_busy_sparse_and_dense),
	    cmocka_unit_test(test_out_of_range),
	    cmocka_unit_test(test_wdm),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
