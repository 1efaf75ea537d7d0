/* The lp_solve wrapper: optimum, duals, integrality, infeasibility. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>
#include <math.h>

#include "rwa/rwa.h"

/* max x + y  s.t.  x + 2y <= 4,  3x + y <= 6. LP optimum (1.6, 1.2) = 2.8
 * with duals (0.4, 0.2); integer optimum 2. */
static struct lp *small(void)
{
	struct lp *lp = lp_new(2);
	int c[2] = {0, 1};
	double one[2] = {1, 1}, r1[2] = {1, 2}, r2[2] = {3, 1};

	lp_maximize(lp, true);
	lp_set_objective(lp, 2, c, one);
	assert_int_equal(lp_add_row(lp, 2, c, r1, LP_LE, 4), 0);
	assert_int_equal(lp_add_row(lp, 2, c, r2, LP_LE, 6), 1);
	return lp;
}

static void test_lp_optimum_and_duals(void **state)
{
	struct ofc_error err = {0};
	struct lp *lp = small();
	double x[2], y[2];
	(void)state;

	assert_int_equal(lp_solve(lp, &err), LP_OPTIMAL);
	assert_true(fabs(lp_objective(lp) - 2.8) < 1e-9);
	lp_solution(lp, x);
	assert_true(fabs(x[0] - 1.6) < 1e-9 && fabs(x[1] - 1.2) < 1e-9);
	assert_int_equal(lp_duals(lp, y), 0);
	assert_true(fabs(y[0] - 0.4) < 1e-9 && fabs(y[1] - 0.2) < 1e-9);
	lp_free(lp);
}

static void test_ilp(void **state)
{
	struct ofc_error err = {0};
	struct lp *lp = small();
	(void)state;

	lp_set_integer(lp, 0, true);
	lp_set_integer(lp, 1, true);
	assert_int_equal(lp_solve(lp, &err), LP_OPTIMAL);
	assert_true(fabs(lp_objective(lp) - 2.0) < 1e-9);
	lp_free(lp);
}

static void test_infeasible_and_added_columns(void **state)
{
	struct ofc_error err = {0};
	struct lp *lp = small();
	int c[1] = {0};
	double v[1] = {1};
	(void)state;

	assert_int_equal(lp_add_row(lp, 1, c, v, LP_GE, 5), 2);
	assert_int_equal(lp_solve(lp, &err), LP_INFEASIBLE);
	lp_free(lp);

	/* A column added after rows: max z with z <= 3 gives 2.8 + 3. */
	lp = small();
	int z = lp_add_cols(lp, 1);
	assert_int_equal(z, 2);
	lp_set_obj_coef(lp, z, 1);
	lp_set_bounds(lp, z, 0, 3);
	assert_int_equal(lp_solve(lp, &err), LP_OPTIMAL);
	assert_true(fabs(lp_objective(lp) - 5.8) < 1e-9);
	lp_free(lp);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_lp_optimum_and_duals),
	    cmocka_unit_test(test_ilp),
	    cmocka_unit_test(test_infeasible_and_added_columns),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
