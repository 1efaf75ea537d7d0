/* The only place ofc calls an LP solver: lp_solve here, COIN-OR Clp through
 * lp_clp.cc, one struct lp for both. A model is on one solver for
 * its life, chosen at lp_new_on; every call below goes to that one. */
#include "rwa/lp_clp.h"
#include "rwa/rwa.h"

#include <limits.h>
#include <lpsolve/lp_lib.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct lp {
	const struct clp_api *api; /* Clp's plugin (rwa/lp_clp.h) ... */
	struct clp *clp;	   /* ... and its model, or NULL: lp_solve's, m */
	lprec *m;
	int ncols;
	bool rowmode; /* lp_solve adds rows fast in row mode; leave it to solve */
	/* scratch for 1-based column numbers */
	int *colno;
	double *val;
	size_t cap;
	double deadline;	   /* now_seconds() clock; 0: none */
	const atomic_bool *cancel; /* lp_set_cancel; NULL: none */
	int iteration_limit;	   /* lp_set_iteration_limit; 0: none */
};

/* lp_solve's own timeout counts whole seconds; this stops a solve at the
 * deadline to the millisecond, and when another thread cancels it: lp_solve
 * asks between iterations, Clp at every iteration (lp_clp.cc's event
 * handler), so both stop alike. */
static int should_stop(void *h)
{
	const struct lp *lp = h;

	return (lp->deadline > 0 && now_seconds() >= lp->deadline) ||
	       (lp->cancel && atomic_load_explicit(lp->cancel, memory_order_relaxed));
}

/* lp_solve has no iteration limit of its own: it asks here between
 * iterations, where its count so far is get_total_iter's, and stops as at
 * its time limit. Clp takes the limit itself (clp_api.set_iteration_limit). */
static int __WINAPI past_deadline_cb(lprec *m, void *h)
{
	const struct lp *lp = h;

	return should_stop(h) ||
	       (lp->iteration_limit > 0 && get_total_iter(m) >= lp->iteration_limit);
}

static void scratch(struct lp *lp, int n)
{
	if ((size_t)n > lp->cap) {
		lp->cap = (size_t)n * 2;
		lp->colno = xreallocarray(lp->colno, lp->cap, sizeof(int));
		lp->val = xreallocarray(lp->val, lp->cap, sizeof(double));
	}
}

struct lp *lp_new_on(int ncols, enum lp_solver s, struct ofc_error *err)
{
	const struct clp_api *api;
	struct lp *lp;

	if (s != LP_SOLVER_CLP)
		return lp_new(ncols);
	if (!(api = lp_clp_load(err)))
		return NULL;
	lp = xcalloc(1, sizeof(*lp));
	lp->api = api;
	lp->clp = api->create(ncols);
	lp->ncols = ncols;
	return lp;
}

struct lp *lp_new_known(int ncols, enum lp_solver s)
{
	struct ofc_error err = {0};
	struct lp *lp = lp_new_on(ncols, s, &err);

	if (!lp)
		abort(); /* the plugin loaded before: as an allocation failing */
	return lp;
}

enum lp_solver lp_solver_of(const struct lp *lp)
{
	return lp->clp ? LP_SOLVER_CLP : LP_SOLVER_LPSOLVE;
}

/* lp_solve sets its BLAS calls (global function pointers) in its first
 * make_lp, and its compiled code clears the "not set yet" flag before it
 * stores them: two threads making their first models at once, the second
 * could see the flag clear and call a null pointer (a BFB run's workers,
 * about one run in 300). The process's first model is made under a lock,
 * before any other (a mutex, not pthread_once: valgrind's race checker,
 * which sees into lp_solve where ThreadSanitizer cannot, follows mutexes;
 * tests/integration/test_lp_threads.sh). */
static pthread_mutex_t lpsolve_mu = PTHREAD_MUTEX_INITIALIZER;
static bool lpsolve_ready; /* under lpsolve_mu */

static void lpsolve_init(void)
{
	pthread_mutex_lock(&lpsolve_mu);
	if (!lpsolve_ready) {
		lprec *m = make_lp(0, 0);

		if (!m)
			abort(); /* as below */
		delete_lp(m);
		lpsolve_ready = true;
	}
	pthread_mutex_unlock(&lpsolve_mu);
}

struct lp *lp_new(int ncols)
{
	struct lp *lp = xcalloc(1, sizeof(*lp));

	lpsolve_init();
	lp->m = make_lp(0, ncols);
	if (!lp->m)
		abort(); /* lp_solve allocates with malloc; treat like xmalloc */
	lp->ncols = ncols;
	set_verbose(lp->m, NEUTRAL);
	set_minim(lp->m);
	put_abortfunc(lp->m, past_deadline_cb, lp);
	set_add_rowmode(lp->m, TRUE);
	lp->rowmode = true;
	return lp;
}

void lp_free(struct lp *lp)
{
	if (!lp)
		return;
	if (lp->clp)
		lp->api->destroy(lp->clp);
	else
		delete_lp(lp->m);
	free(lp->colno);
	free(lp->val);
	free(lp);
}

int lp_ncols(const struct lp *lp)
{
	return lp->ncols;
}

int lp_nrows(const struct lp *lp)
{
	return lp->clp ? lp->api->nrows(lp->clp) : get_Nrows(lp->m);
}

static void row_mode(struct lp *lp, bool on)
{
	if (!lp->clp && lp->rowmode != on) {
		set_add_rowmode(lp->m, on ? TRUE : FALSE);
		lp->rowmode = on;
	}
}

int lp_add_cols(struct lp *lp, int n)
{
	int first = lp->ncols;

	if (lp->clp) {
		for (int i = 0; i < n; i++)
			lp->api->add_col(lp->clp, 0, 0, NULL, NULL);
		lp->ncols += n;
		return first;
	}
	row_mode(lp, false);
	resize_lp(lp->m, get_Nrows(lp->m), lp->ncols + n);
	for (int i = 0; i < n; i++)
		add_columnex(lp->m, 0, NULL, NULL);
	lp->ncols += n;
	return first;
}

int lp_add_col(struct lp *lp, double obj, int n, const int *rows, const double *vals)
{
	if (lp->clp) {
		lp->ncols++;
		return lp->api->add_col(lp->clp, obj, n, rows, vals);
	}
	row_mode(lp, false);
	scratch(lp, n + 1);
	/* lp_solve wants the row numbers ascending, the objective as row 0. */
	lp->colno[0] = 0;
	lp->val[0] = obj;
	for (int i = 0; i < n; i++) {
		int j = i + 1;

		while (j > 1 && lp->colno[j - 1] > rows[i] + 1) {
			lp->colno[j] = lp->colno[j - 1];
			lp->val[j] = lp->val[j - 1];
			j--;
		}
		lp->colno[j] = rows[i] + 1;
		lp->val[j] = vals[i];
	}
	if (!add_columnex(lp->m, n + 1, lp->val, lp->colno))
		return -1;
	return lp->ncols++;
}

void lp_maximize(struct lp *lp, bool maximize)
{
	if (lp->clp)
		lp->api->maximize(lp->clp, maximize);
	else if (maximize)
		set_maxim(lp->m);
	else
		set_minim(lp->m);
}

int lp_set_objective(struct lp *lp, int n, const int *cols, const double *vals)
{
	if (lp->clp) {
		for (int j = 0; j < lp->ncols; j++)
			lp->api->set_obj(lp->clp, j, 0);
		for (int i = 0; i < n; i++)
			lp->api->set_obj(lp->clp, cols[i], vals[i]);
		return 0;
	}
	scratch(lp, n);
	for (int i = 0; i < n; i++) {
		lp->colno[i] = cols[i] + 1;
		lp->val[i] = vals[i];
	}
	return set_obj_fnex(lp->m, n, lp->val, lp->colno) ? 0 : -1;
}

void lp_set_obj_coef(struct lp *lp, int col, double v)
{
	if (lp->clp) {
		lp->api->set_obj(lp->clp, col, v);
		return;
	}
	row_mode(lp, false);
	set_mat(lp->m, 0, col + 1, v);
}

int lp_add_row(struct lp *lp, int n, const int *cols, const double *vals, enum lp_rel rel,
	       double rhs)
{
	static const int type[] = {[LP_LE] = LE, [LP_GE] = GE, [LP_EQ] = EQ};

	if (lp->clp)
		return lp->api->add_row(lp->clp, n, cols, vals, rel == LP_LE ? -INFINITY : rhs,
					rel == LP_GE ? INFINITY : rhs);
	row_mode(lp, true);
	scratch(lp, n);
	for (int i = 0; i < n; i++) {
		lp->colno[i] = cols[i] + 1;
		lp->val[i] = vals[i];
	}
	if (!add_constraintex(lp->m, n, lp->val, lp->colno, type[rel], rhs))
		return -1;
	return get_Nrows(lp->m) - 1;
}

void lp_set_bounds(struct lp *lp, int col, double lo, double hi)
{
	if (lp->clp) {
		lp->api->set_bounds(lp->clp, col, lo, hi);
		return;
	}
	row_mode(lp, false);
	set_bounds(lp->m, col + 1, isinf(lo) ? -get_infinite(lp->m) : lo,
		   isinf(hi) ? get_infinite(lp->m) : hi);
}

void lp_set_integer(struct lp *lp, int col, bool integer)
{
	if (lp->clp) {
		if (integer)
			lp->api->set_integer(lp->clp);
		return;
	}
	row_mode(lp, false);
	set_int(lp->m, col + 1, integer ? TRUE : FALSE);
}

void lp_set_binary(struct lp *lp, int col)
{
	if (lp->clp) {
		lp->api->set_integer(lp->clp);
		return;
	}
	row_mode(lp, false);
	set_binary(lp->m, col + 1, TRUE);
}

void lp_set_time_limit(struct lp *lp, double seconds)
{
	/* lp_solve takes whole seconds; round up so 0.5 s is not "no limit". */
	if (!lp->clp)
		set_timeout(lp->m, seconds > 0 ? (long)ceil(seconds) : 0);
	lp->deadline = seconds > 0 ? now_seconds() + seconds : 0;
}

void lp_set_iteration_limit(struct lp *lp, int iterations)
{
	lp->iteration_limit = iterations > 0 ? iterations : 0;
	if (lp->clp)
		lp->api->set_iteration_limit(lp->clp, lp->iteration_limit);
}

void lp_set_cancel(struct lp *lp, const atomic_bool *cancel)
{
	lp->cancel = cancel;
}

void lp_set_threads(struct lp *lp, unsigned threads)
{
	if (lp->clp)
		lp->api->set_threads(lp->clp, threads > INT_MAX ? INT_MAX : (int)threads);
}

void lp_set_scaling(struct lp *lp, enum lp_scaling s)
{
	/* 196 = SCALE_GEOMETRIC + SCALE_EQUILIBRATE + SCALE_INTEGERS, what
	 * make_lp sets. */
	static const int mode[] = {[LP_SCALE_DEFAULT] =
				       SCALE_GEOMETRIC + SCALE_EQUILIBRATE + SCALE_INTEGERS,
				   [LP_SCALE_GEOMETRIC] = SCALE_GEOMETRIC,
				   [LP_SCALE_NONE] = SCALE_NONE,
				   [LP_SCALE_GEOMETRIC_DYNAMIC] = SCALE_GEOMETRIC + SCALE_DYNUPDATE,
				   [LP_SCALE_MEAN_DYNAMIC] = SCALE_MEAN + SCALE_DYNUPDATE};
	/* Clp: 3 automatic (its default), 2 geometric, 0 none, 1
	 * equilibrium; it scales the matrix as it is at every solve, so the
	 * dynamic modes are its plain ones */
	static const int clp_mode[] = {[LP_SCALE_DEFAULT] = 3,
				       [LP_SCALE_GEOMETRIC] = 2,
				       [LP_SCALE_NONE] = 0,
				       [LP_SCALE_GEOMETRIC_DYNAMIC] = 2,
				       [LP_SCALE_MEAN_DYNAMIC] = 1};

	if (lp->clp)
		lp->api->set_scaling(lp->clp, clp_mode[s]);
	else
		set_scaling(lp->m, mode[s]);
}

void lp_set_simplex(struct lp *lp, enum lp_simplex s)
{
	static const int type[] = {[LP_SIMPLEX_DEFAULT] = SIMPLEX_DUAL_PRIMAL,
				   [LP_SIMPLEX_DUAL] = SIMPLEX_DUAL_DUAL,
				   [LP_SIMPLEX_PRIMAL] = SIMPLEX_PRIMAL_PRIMAL};

	if (lp->clp)
		lp->api->set_algorithm(lp->clp, s == LP_SIMPLEX_DUAL	 ? 1
						: s == LP_SIMPLEX_PRIMAL ? 2
									 : 0);
	else
		set_simplextype(lp->m, type[s]);
}

void lp_set_break_at_first(struct lp *lp, bool on)
{
	if (lp->clp)
		return; /* a MIP option; Clp solves no MIP */
	set_break_at_first(lp->m, on ? TRUE : FALSE);
}

static enum lp_result solve_clp(struct lp *lp, struct ofc_error *err)
{
	char why[160] = "";

	switch (lp->api->solve(lp->clp, should_stop, lp, why, sizeof(why))) {
	case 0:
		return LP_OPTIMAL;
	case 1:
		return LP_INFEASIBLE;
	case 2:
		return LP_UNBOUNDED;
	case 3:
	case 5:
		return LP_TIMEOUT;
	case CLP_INTEGER:
		ofc_error_set(err, OFC_E_RUNTIME,
			      "Clp solves no integer programs (the ILPs run on lp_solve)");
		return LP_FAILED;
	default:
		ofc_error_set(err, OFC_E_RUNTIME, "Clp failed (%s)", why);
		return LP_FAILED;
	}
}

enum lp_result lp_solve(struct lp *lp, struct ofc_error *err)
{
	if (lp->clp)
		return solve_clp(lp, err);
	row_mode(lp, false);
	switch (solve(lp->m)) {
	case OPTIMAL:
	case PRESOLVED:
		return LP_OPTIMAL;
	case SUBOPTIMAL:
		return LP_FEASIBLE;
	case INFEASIBLE:
		return LP_INFEASIBLE;
	case UNBOUNDED:
		return LP_UNBOUNDED;
	case TIMEOUT:
	case USERABORT:
		return LP_TIMEOUT;
	case NOMEMORY:
		abort();
	default:
		ofc_error_set(err, OFC_E_RUNTIME, "lp_solve failed (numerical trouble)");
		return LP_FAILED;
	}
}

void lp_reset_basis(struct lp *lp)
{
	if (lp->clp) {
		lp->api->reset_basis(lp->clp);
		return;
	}
	row_mode(lp, false);
	default_basis(lp->m);
}

int lp_delete_rows(struct lp *lp, int n, const int *rows)
{
	if (!lp->clp)
		return -1;
	return n > 0 ? lp->api->delete_rows(lp->clp, n, rows) : 0;
}

const char *lp_result_str(enum lp_result r)
{
	static const char *const s[] = {
	    "optimal",	 "feasible (not proven optimal)",	  "infeasible",
	    "unbounded", "time limit reached without a solution", "failed"};

	return (unsigned)r < ARRAY_SIZE(s) ? s[r] : "unknown";
}

double lp_objective(const struct lp *lp)
{
	return lp->clp ? lp->api->objective(lp->clp) : get_objective(lp->m);
}

void lp_solution(const struct lp *lp, double *x)
{
	REAL *v = NULL;

	if (lp->clp) {
		lp->api->solution(lp->clp, x, lp->ncols);
		return;
	}
	if (get_ptr_variables(lp->m, &v) && v)
		memcpy(x, v, (size_t)lp->ncols * sizeof(double));
	else
		memset(x, 0, (size_t)lp->ncols * sizeof(double));
}

int lp_duals(const struct lp *lp, double *y)
{
	REAL *d = NULL;
	int rows;

	if (lp->clp)
		return lp->api->duals(lp->clp, y, lp->api->nrows(lp->clp));
	rows = get_Nrows(lp->m);
	if (!get_ptr_dual_solution(lp->m, &d) || !d)
		return -1;
	memcpy(y, d + 1, (size_t)rows * sizeof(double));
	return 0;
}

int lp_iterations(const struct lp *lp)
{
	long long n = lp->clp ? lp->api->iterations(lp->clp) : get_total_iter(lp->m);

	return n > INT_MAX ? INT_MAX : (int)n;
}

int lp_write(const struct lp *lp, const char *path)
{
	if (lp->clp)
		return lp->api->write(lp->clp, path); /* MPS */
	return write_lp(lp->m, (char *)path) ? 0 : -1;
}
