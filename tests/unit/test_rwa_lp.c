/* The LP wrapper: optimum, duals, integrality, infeasibility, on lp_solve;
 * and the same on Clp, whose answers must agree, with a time
 * limit and a cancellation that stop both alike. */
#include <dlfcn.h>
#include <link.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/* The same model on a given solver; maximise or minimise (min -x - y). */
static struct lp *small_on(enum lp_solver sv, bool max)
{
	struct ofc_error err = {0};
	struct lp *lp = lp_new_on(2, sv, &err);
	int c[2] = {0, 1};
	double one[2] = {1, 1}, neg[2] = {-1, -1}, r1[2] = {1, 2}, r2[2] = {3, 1};

	if (!lp)
		fail_msg("%s: %s", lp_solver_name(sv), err.msg);
	assert_int_equal(lp_solver_of(lp), sv);
	lp_maximize(lp, max);
	lp_set_objective(lp, 2, c, max ? one : neg);
	assert_int_equal(lp_add_row(lp, 2, c, r1, LP_LE, 4), 0);
	assert_int_equal(lp_add_row(lp, 2, c, r2, LP_LE, 6), 1);
	return lp;
}

/* lp_solve and Clp: the same optimum, primal and duals (the change of the
 * objective per unit of each right-hand side, so the minimisation's duals
 * are the maximisation's negated), maximising and minimising; infeasible;
 * a column added after the rows; rows added after a solve (a warm start);
 * Clp refuses integer columns rather than drop them. */
static void test_clp_agrees(void **state)
{
	static const enum lp_solver both[] = {LP_SOLVER_LPSOLVE, LP_SOLVER_CLP};
	struct ofc_error err = {0};
	(void)state;

	for (size_t k = 0; k < 2; k++)
		for (int max = 0; max < 2; max++) {
			struct lp *lp = small_on(both[k], max);
			double x[3], y[3], sign = max ? 1 : -1;
			int c[1] = {0}, z;
			double v[1] = {1};

			assert_int_equal(lp_solve(lp, &err), LP_OPTIMAL);
			assert_true(fabs(lp_objective(lp) - 2.8 * sign) < 1e-9);
			lp_solution(lp, x);
			assert_true(fabs(x[0] - 1.6) < 1e-9 && fabs(x[1] - 1.2) < 1e-9);
			assert_int_equal(lp_duals(lp, y), 0);
			if (fabs(y[0] - 0.4 * sign) > 1e-9 || fabs(y[1] - 0.2 * sign) > 1e-9)
				fail_msg("%s %s: duals %g %g", lp_solver_name(both[k]),
					 max ? "max" : "min", y[0], y[1]);
			/* a cut after the solve: x <= 1 -> x 1, y 1.5, 2.5 */
			assert_int_equal(lp_add_row(lp, 1, c, v, LP_LE, 1), 2);
			assert_int_equal(lp_nrows(lp), 3);
			assert_int_equal(lp_solve(lp, &err), LP_OPTIMAL);
			assert_true(fabs(lp_objective(lp) - 2.5 * sign) < 1e-9);
			/* a column after: +z, z <= 3 */
			z = lp_add_cols(lp, 1);
			assert_int_equal(z, 2);
			lp_set_obj_coef(lp, z, sign);
			lp_set_bounds(lp, z, 0, 3);
			assert_int_equal(lp_solve(lp, &err), LP_OPTIMAL);
			assert_true(fabs(lp_objective(lp) - 5.5 * sign) < 1e-9);
			lp_solution(lp, x);
			assert_true(fabs(x[2] - 3) < 1e-9);
			/* infeasible */
			assert_int_equal(lp_add_row(lp, 1, c, v, LP_GE, 5), 3);
			assert_int_equal(lp_solve(lp, &err), LP_INFEASIBLE);
			lp_free(lp);
		}
	struct lp *lp = small_on(LP_SOLVER_CLP, true);
	lp_set_integer(lp, 0, true);
	assert_int_equal(lp_solve(lp, &err), LP_FAILED);
	assert_non_null(strstr(err.msg, "integer"));
	lp_free(lp);
}

/* A transportation LP of n x n columns: large enough that neither solver
 * finishes it in a millisecond. */
static struct lp *big_on(enum lp_solver sv, int n)
{
	struct ofc_error err = {0};
	struct lp *lp = lp_new_on(n * n, sv, &err);
	int *cols = malloc((size_t)n * sizeof(int));
	double *one = malloc((size_t)n * sizeof(double));
	uint64_t seed = 38;

	assert_non_null(lp);
	for (int i = 0; i < n * n; i++) {
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		lp_set_obj_coef(lp, i, 1 + (double)(seed >> 40) / (1 << 24) * 100);
	}
	for (int i = 0; i < n; i++)
		one[i] = 1;
	for (int r = 0; r < n; r++) {
		for (int j = 0; j < n; j++)
			cols[j] = r * n + j;
		lp_add_row(lp, n, cols, one, LP_GE, 1 + r % 3); /* demand */
		for (int j = 0; j < n; j++)
			cols[j] = j * n + r;
		lp_add_row(lp, n, cols, one, LP_LE, 3); /* supply */
	}
	free(cols);
	free(one);
	return lp;
}

/* Time limits and cancellation stop both solvers alike: LP_TIMEOUT, soon
 * after the limit (a limit of 1 ms on a model that takes far longer), at
 * once when the cancel flag is already set; and without them the same
 * model solves to the same optimum on both. */
static void test_clp_time_limit_cancel(void **state)
{
	static const enum lp_solver both[] = {LP_SOLVER_LPSOLVE, LP_SOLVER_CLP};
	struct ofc_error err = {0};
	double opt[2];
	(void)state;

	for (size_t k = 0; k < 2; k++) {
		struct lp *lp = big_on(both[k], 200);
		atomic_bool stop = true;
		double t0;

		lp_set_time_limit(lp, 0.001);
		t0 = now_seconds();
		assert_int_equal(lp_solve(lp, &err), LP_TIMEOUT);
		assert_true(now_seconds() - t0 < 5);
		lp_free(lp);

		lp = big_on(both[k], 200);
		lp_set_cancel(lp, &stop);
		assert_int_equal(lp_solve(lp, &err), LP_TIMEOUT);
		lp_free(lp);
		/* (a fresh model: lp_solve crashes re-solving a cancelled one) */
		lp = big_on(both[k], 200);
		atomic_store(&stop, false);
		lp_set_cancel(lp, &stop);
		t0 = now_seconds();
		assert_int_equal(lp_solve(lp, &err), LP_OPTIMAL);
		print_message("%s: %.3f s\n", lp_solver_name(both[k]), now_seconds() - t0);
		opt[k] = lp_objective(lp);
		lp_free(lp);
	}
	assert_true(fabs(opt[0] - opt[1]) < 1e-6 * fabs(opt[0]));
}

/* An iteration limit stops both solvers alike at that many iterations,
 * whatever the time: LP_TIMEOUT, lp_iterations at the limit (a few past
 * it at most: Clp counts its clean-up's too), the same count on a second
 * model; the model needs more than the limit when it is lifted. The count
 * is each solve's own (a cut loop re-solves one model hundreds of times). */
static void test_iteration_limit(void **state)
{
	static const enum lp_solver both[] = {LP_SOLVER_LPSOLVE, LP_SOLVER_CLP};
	struct ofc_error err = {0};
	(void)state;

	for (size_t k = 0; k < 2; k++) {
		struct lp *lp = big_on(both[k], 40);
		int full, first;

		assert_int_equal(lp_solve(lp, &err), LP_OPTIMAL);
		full = lp_iterations(lp);
		print_message("%s: %d iterations uncapped\n", lp_solver_name(both[k]), full);
		assert_true(full > 40);
		/* the limit is per solve: a re-solve from the optimal basis
		 * after a cost change gets its own count, not the first's */
		lp_set_iteration_limit(lp, full);
		lp_set_obj_coef(lp, 0, 1000);
		assert_int_equal(lp_solve(lp, &err), LP_OPTIMAL);
		assert_true(lp_iterations(lp) < full);
		lp_free(lp);
		for (int again = 0; again < 2; again++) {
			lp = big_on(both[k], 40);
			lp_set_iteration_limit(lp, 20);
			assert_int_equal(lp_solve(lp, &err), LP_TIMEOUT);
			if (!again)
				first = lp_iterations(lp);
			print_message("%s: %d iterations at a limit of 20\n",
				      lp_solver_name(both[k]), lp_iterations(lp));
			assert_true(lp_iterations(lp) >= 20 && lp_iterations(lp) <= 22);
			assert_int_equal(lp_iterations(lp), first);
			lp_free(lp);
		}
		/* lifted: optimal again, as many iterations as never capped */
		lp = big_on(both[k], 40);
		lp_set_iteration_limit(lp, 20);
		lp_set_iteration_limit(lp, 0);
		assert_int_equal(lp_solve(lp, &err), LP_OPTIMAL);
		assert_int_equal(lp_iterations(lp), full);
		lp_free(lp);
	}
}

/* Deleting rows whose slack is basic keeps the basis of the rest (Clp):
 * the re-solve after a cut loop's purge is warm, no iterations where a
 * cold one takes many, at the same optimum; rows between the deleted ones
 * stay. lp_solve cannot: -1, the model as it was. */
static void test_delete_rows_warm(void **state)
{
	struct ofc_error err = {0};
	struct lp *lp = big_on(LP_SOLVER_CLP, 20);
	int cols[400], rows[] = {40, 42};
	double one[400], opt, x[400];
	(void)state;

	for (int i = 0; i < 400; i++) {
		cols[i] = i;
		one[i] = 1;
	}
	assert_int_equal(lp_solve(lp, &err), LP_OPTIMAL);
	opt = lp_objective(lp);
	/* two rows slack at every solution (the demands sum to 39), one
	 * between them that binds: the total at most its optimum's */
	lp_solution(lp, x);
	double total = 0;

	for (int i = 0; i < 400; i++)
		total += x[i];
	lp_add_row(lp, 400, cols, one, LP_GE, 1);
	lp_add_row(lp, 400, cols, one, LP_LE, total);
	lp_add_row(lp, 400, cols, one, LP_GE, 2);
	assert_int_equal(lp_solve(lp, &err), LP_OPTIMAL);
	assert_true(fabs(lp_objective(lp) - opt) <= 1e-9 * opt);
	assert_int_equal(lp_delete_rows(lp, 2, rows), 0);
	assert_int_equal(lp_nrows(lp), 41);
	assert_int_equal(lp_solve(lp, &err), LP_OPTIMAL);
	assert_int_equal(lp_iterations(lp), 0);
	assert_true(fabs(lp_objective(lp) - opt) <= 1e-9 * opt);
	lp_free(lp);
	lp = big_on(LP_SOLVER_CLP, 20);
	lp_reset_basis(lp);
	assert_int_equal(lp_solve(lp, &err), LP_OPTIMAL);
	assert_true(lp_iterations(lp) > 0); /* what warm saved */
	lp_free(lp);

	lp = big_on(LP_SOLVER_LPSOLVE, 20);
	lp_add_row(lp, 400, cols, one, LP_GE, 1);
	assert_int_equal(lp_delete_rows(lp, 1, rows), -1);
	assert_int_equal(lp_nrows(lp), 41);
	lp_free(lp);
}

/* A column generation master's shape: few rows (covering, >= 1), many
 * long columns (24 elements each) added in two batches, solved by the
 * primal simplex from the last basis as the MCF's master is. Enough
 * elements for Clp's pricing to be split in blocks (rwa/lp_clp_split.h,
 * MIN_PART each): the first solve in 2, the second in up to 5. */
static void master_like(struct lp *lp, int first, int ncols, int nrows)
{
	int rows[24];
	double vals[24];
	uint64_t seed = 52 + (uint64_t)first;

	for (int k = first; k < ncols; k++) {
		int n = 0;

		while (n < 24) {
			seed = seed * 6364136223846793005ull + 1442695040888963407ull;
			int r = (int)((seed >> 33) % (uint64_t)nrows);
			bool dup = false;

			for (int i = 0; i < n; i++)
				dup |= rows[i] == r;
			if (dup)
				continue;
			rows[n] = r;
			vals[n++] = 0.5 + (double)(seed >> 44) / (1 << 20);
		}
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		assert_int_equal(
		    lp_add_col(lp, 1 + (double)(seed >> 40) / (1 << 24), 24, rows, vals), k);
	}
}

/* Clp's pricing split over threads takes the same pivots: the same
 * iterations, and the same optimum, primal and dual, to the bit, on 1, 2
 * and 4 threads, solve after solve. */
static void test_clp_threads_same(void **state)
{
	enum { ROWS = 120, FIRST = 2000, COLS = 4000 };
	static const unsigned threads[] = {1, 2, 4};
	double *x[3], *y[3], obj[3][2];
	int iters[3][2];
	(void)state;

	for (size_t t = 0; t < 3; t++) {
		struct ofc_error err = {0};
		struct lp *lp = lp_new_on(0, LP_SOLVER_CLP, &err);

		assert_non_null(lp);
		lp_set_threads(lp, threads[t]);
		lp_set_simplex(lp, LP_SIMPLEX_PRIMAL);
		for (int r = 0; r < ROWS; r++)
			assert_int_equal(lp_add_row(lp, 0, NULL, NULL, LP_GE, 1), r);
		master_like(lp, 0, FIRST, ROWS);
		assert_int_equal(lp_solve(lp, &err), LP_OPTIMAL);
		iters[t][0] = lp_iterations(lp);
		obj[t][0] = lp_objective(lp);
		master_like(lp, FIRST, COLS, ROWS);
		assert_int_equal(lp_solve(lp, &err), LP_OPTIMAL);
		iters[t][1] = lp_iterations(lp);
		obj[t][1] = lp_objective(lp);
		x[t] = malloc(COLS * sizeof(double));
		y[t] = malloc(ROWS * sizeof(double));
		lp_solution(lp, x[t]);
		assert_int_equal(lp_duals(lp, y[t]), 0);
		lp_free(lp);
	}
	print_message("iterations %d then %d\n", iters[0][0], iters[0][1]);
	assert_true(iters[0][0] > 50 && iters[0][1] > 0);
	for (size_t t = 1; t < 3; t++) {
		assert_int_equal(iters[t][0], iters[0][0]);
		assert_int_equal(iters[t][1], iters[0][1]);
		assert_memory_equal(obj[t], obj[0], sizeof(obj[0]));
		assert_memory_equal(x[t], x[0], COLS * sizeof(double));
		assert_memory_equal(y[t], y[0], ROWS * sizeof(double));
	}
	for (size_t t = 0; t < 3; t++) {
		free(x[t]);
		free(y[t]);
	}
}

/* A cut loop as the fluid pricing's: min cost arcs of a complete digraph
 * on CUT_N nodes such that every node but the root is reached (each cut
 * of the root's side from it >= 1), the cuts found by enumeration and
 * added a few a round, the dual simplex re-solving from the last basis.
 * The arcs' costs tie (1, 2 or 3, broken by 1e-9 a column), so Clp's dual
 * ends by its primal clean-up in some rounds, and the solve that ends so
 * is settled by the primal at a finer tolerance (rwa/lp_clp.cc, settle):
 * every round's optimum must be a cold solve's of the same rows. */
#define CUT_N 8

struct cut_loop {
	int tail[CUT_N * CUT_N], head[CUT_N * CUT_N], na, nrows;
	int row_off[512], row_col[512 * CUT_N * CUT_N];
	double cost[CUT_N * CUT_N];
};

static void cut_row(struct cut_loop *g, struct lp *lp, unsigned side)
{
	int *cols = g->row_col + g->row_off[g->nrows], n = 0;
	double one[CUT_N * CUT_N];

	for (int a = 0; a < g->na; a++)
		if ((side >> g->tail[a] & 1) && !(side >> g->head[a] & 1)) {
			cols[n] = a;
			one[n++] = 1;
		}
	assert_true(lp_add_row(lp, n, cols, one, LP_GE, 1) >= 0);
	g->row_off[g->nrows + 1] = g->row_off[g->nrows] + n;
	g->nrows++;
}

/* The most violated cut separating t from the root under x, or 0. */
static unsigned worst_cut(const struct cut_loop *g, const double *x, int t)
{
	double best = 1 - 1e-7;
	unsigned side = 0;

	for (unsigned s = 1; s < 1u << CUT_N; s += 2) {
		double f = 0;

		if (s >> t & 1)
			continue;
		for (int a = 0; a < g->na; a++)
			if ((s >> g->tail[a] & 1) && !(s >> g->head[a] & 1))
				f += x[a];
		if (f < best) {
			best = f;
			side = s;
		}
	}
	return side;
}

/* The same rows in a fresh model, from the slack basis: its optimum. */
static double cold_optimum(const struct cut_loop *g)
{
	struct ofc_error err = {0};
	struct lp *lp = lp_new_on(g->na, LP_SOLVER_CLP, &err);
	double one[CUT_N * CUT_N], v;

	assert_non_null(lp);
	for (int a = 0; a < g->na; a++) {
		lp_set_obj_coef(lp, a, g->cost[a]);
		one[a] = 1;
	}
	for (int r = 0; r < g->nrows; r++)
		lp_add_row(lp, g->row_off[r + 1] - g->row_off[r], g->row_col + g->row_off[r], one,
			   LP_GE, 1);
	assert_int_equal(lp_solve(lp, &err), LP_OPTIMAL);
	v = lp_objective(lp);
	lp_free(lp);
	return v;
}

static void cut_loop_on(uint64_t seed)
{
	struct ofc_error err = {0};
	struct cut_loop *g = calloc(1, sizeof(*g));
	double x[CUT_N * CUT_N];
	struct lp *lp;

	for (int u = 0; u < CUT_N; u++)
		for (int v = 1; v < CUT_N; v++)
			if (u != v) {
				seed = seed * 6364136223846793005ull + 1442695040888963407ull;
				g->tail[g->na] = u;
				g->head[g->na] = v;
				g->cost[g->na] =
				    1 + (double)(seed >> 62 < 3 ? seed >> 62 : 0) + 1e-9 * g->na;
				g->na++;
			}
	lp = lp_new_on(g->na, LP_SOLVER_CLP, &err);
	assert_non_null(lp);
	for (int a = 0; a < g->na; a++)
		lp_set_obj_coef(lp, a, g->cost[a]);
	lp_set_simplex(lp, LP_SIMPLEX_DUAL);
	cut_row(g, lp, 1); /* the root's own cut: Clp's dual needs a row */
	for (int added = 1; added;) {
		assert_int_equal(lp_solve(lp, &err), LP_OPTIMAL);
		assert_true(lp_iterations(lp) >= 0);
		assert_true(fabs(lp_objective(lp) - cold_optimum(g)) <= 1e-6);
		lp_solution(lp, x);
		added = 0;
		for (int t = 1; t < CUT_N && added < 3 && g->nrows < 500; t++) {
			unsigned side = worst_cut(g, x, t);

			if (side) {
				cut_row(g, lp, side);
				added++;
			}
		}
	}
	lp_free(lp);
	free(g);
}

static void test_clp_cut_loop(void **state)
{
	(void)state;
	for (uint64_t seed = 1; seed <= 40; seed++)
		cut_loop_on(seed);
}

/* The names --lp-solver takes. */
static void test_solver_names(void **state)
{
	enum lp_solver s;
	struct ofc_error err = {0};
	(void)state;

	assert_int_equal(lp_solver_parse("clp", &s), 0);
	assert_int_equal(s, LP_SOLVER_CLP);
	assert_int_equal(lp_solver_parse("lpsolve", &s), 0);
	assert_int_equal(s, LP_SOLVER_LPSOLVE);
	assert_int_equal(lp_solver_parse("gurobi", &s), -1);
	assert_string_equal(lp_solver_name(LP_SOLVER_CLP), "clp");
	assert_true(lp_solver_available(LP_SOLVER_CLP, &err));
	assert_int_equal(lp_solver_or(LP_SOLVER_DEFAULT, LP_SOLVER_CLP), LP_SOLVER_CLP);
	assert_int_equal(lp_solver_or(LP_SOLVER_LPSOLVE, LP_SOLVER_CLP), LP_SOLVER_LPSOLVE);
}

/* libc's path as the loader has it. Not dladdr on one of libc's
 * functions: under AddressSanitizer printf, malloc and most others are
 * the sanitizer's interceptors, linked into the test program, and the
 * program itself, which dlopen refuses outright (a PIE), would be the
 * "library" tried. The loader's own record of libc.so.6 names it always. */
static const char *libc_path(void)
{
	struct link_map *map = NULL;
	void *h = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);

	assert_non_null(h);
	assert_int_equal(dlinfo(h, RTLD_DI_LINKMAP, &map), 0);
	assert_true(map && map->l_name && map->l_name[0] == '/');
	dlclose(h);
	return map->l_name; /* libc is never unloaded */
}

/* A library that loads but is not this build's Clp plugin (here libc,
 * which has no table; an old libofc-clp.so's table of another size takes
 * the same way out) is refused with an error, and said once on stderr:
 * the engines whose default is Clp fall back to lp_solve without one. */
static void test_clp_refused_said(void **state)
{
	struct ofc_error err = {0};
	char said[1024] = "", path[] = "/tmp/test_rwa_lp.XXXXXX";
	int fd = mkstemp(path), saved = dup(2);
	const char *libc = libc_path();
	(void)state;

	assert_true(fd >= 0 && saved >= 0);
	setenv("OFC_CLP_PLUGIN", libc, 1);
	fflush(stderr);
	assert_int_equal(dup2(fd, 2), 2);
	assert_false(lp_solver_available(LP_SOLVER_CLP, &err));
	assert_false(lp_solver_available(LP_SOLVER_CLP, &err));
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	unsetenv("OFC_CLP_PLUGIN");
	ssize_t n = pread(fd, said, sizeof(said) - 1, 0);

	close(fd);
	unlink(path);
	assert_true(n > 0);
	said[n] = 0;
	assert_non_null(strstr(said, "warning: "));
	assert_non_null(strstr(said, libc));
	assert_non_null(strstr(said, "run on lp_solve"));
	assert_null(strstr(strstr(said, "warning: ") + 1, "warning: ")); /* once */
	assert_non_null(strstr(err.msg, "not a Clp plugin"));
	/* and this build's plugin still loads */
	assert_true(lp_solver_available(LP_SOLVER_CLP, &err));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_lp_optimum_and_duals),
	    cmocka_unit_test(test_ilp),
	    cmocka_unit_test(test_infeasible_and_added_columns),
	    cmocka_unit_test(test_clp_agrees),
	    cmocka_unit_test(test_clp_time_limit_cancel),
	    cmocka_unit_test(test_iteration_limit),
	    cmocka_unit_test(test_delete_rows_warm),
	    cmocka_unit_test(test_clp_threads_same),
	    cmocka_unit_test(test_clp_cut_loop),
	    cmocka_unit_test(test_solver_names),
	    cmocka_unit_test(test_clp_refused_said),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
