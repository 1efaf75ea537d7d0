/* The topology finder (bfb/finder.c), as a library: the frontier is
 * sorted and free of dominated entries, and every exact entry is a
 * topology whose BFB schedule has exactly the entry's figures. The pick
 * for a workload is test_pick.c's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "bfb/bfb.h"
#include "sched/sched.h"

static void check_frontier(const struct finder_result *r)
{
	assert_true(r->n > 0);
	for (size_t i = 0; i < r->n; i++) {
		const struct finder_entry *a = &r->front[i];

		if (i) {
			/* ascending steps, strictly descending tau_B */
			assert_true(a->steps > r->front[i - 1].steps);
			assert_true(a->tau_b_value < r->front[i - 1].tau_b_value);
		}
		for (size_t j = 0; j < r->n; j++) {
			const struct finder_entry *b = &r->front[j];

			if (i != j)
				assert_false(b->steps <= a->steps &&
					     b->tau_b_value <= a->tau_b_value);
		}
	}
}

/* An exact entry is what BFB does on the graph its spec builds. */
static void check_exact_entries(const struct finder_result *r)
{
	for (size_t i = 0; i < r->n; i++) {
		const struct finder_entry *e = &r->front[i];
		struct graph *g;
		struct schedule s;
		struct bfb_stats st;
		struct ofc_error err = {0};

		if (!e->exact)
			continue;
		assert_int_equal(topo_build(e->spec, &g, &err), 0);
		assert_int_equal(g->n, r->nodes);
		assert_int_equal(graph_outdeg(g, 0), r->degree);
		if (bfb_schedule(g, SCHED_ALLGATHER, NULL, &s, &st, &err) < 0)
			fail_msg("%s: %s", e->spec, err.msg);
		if (st.steps != e->steps || frac_cmp(st.tau_b, e->tau_b) != 0)
			fail_msg("%s: BFB %u steps %.9g, finder %u steps %.9g", e->spec, st.steps,
				 st.tau_b_value, e->steps, e->tau_b_value);
		struct verify_report rep;
		struct verify_opts vo = {.graph = g};
		assert_int_equal(sched_verify(&s, &vo, &rep), 0);
		sched_free(&s);
		graph_free(g);
	}
}

static void test_frontier_small(void **state)
{
	struct finder_result r;
	struct ofc_error err = {0};

	(void)state;
	assert_int_equal(finder_run(16, 3, 0, &r, &err), 0);
	assert_int_equal(r.nodes, 16);
	assert_int_equal(r.degree, 3);
	check_frontier(&r);
	check_exact_entries(&r);
	/* The Moore-optimal end: generalized Kautz reaches diameter 3 on 16
	 * nodes of degree 3 (1 + 3 + 9 < 16), BFB gives 21/16. */
	assert_string_equal(r.front[0].spec, "genkautz:16,3");
	assert_int_equal(r.front[0].steps, 3);
	assert_true(frac_cmp(r.front[0].tau_b, frac_make(21, 16)) == 0);
	assert_true(r.front[0].moore_optimal);
	finder_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_frontier_small),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
