/* The only place ofc calls lp_solve. */
#include "rwa/rwa.h"

#include <lpsolve/lp_lib.h>
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

struct lp {
	lprec *m;
	int ncols;
	bool rowmode; /* lp_solve adds rows fast in row mode; leave it to solve */
	/* scratch for 1-based column numbers */
	int *colno;
	double *val;
	size_t cap;
	double deadline; /* now_seconds() clock; 0: none */
	const atomic_bool *cancel; /* lp_set_cancel; NULL: none */
};

/* lp_solve's own timeout counts whole seconds; this stops a solve at the
 * deadline to the millisecond (lp_solve asks between iterations), and when
 * another thread cancels it. */
static int __WINAPI past_deadline_cb(lprec *m, void *h)
{
	const struct lp *lp = h;

	(void)m;
	return (lp->deadline > 0 && now_seconds() >= lp->deadline) ||
	       (lp->cancel && atomic_load_explicit(lp->cancel, memory_order_relaxed));
}

static void scratch(struct lp *lp, int n)
{
	if ((size_t)n > lp->cap) {
		lp->cap = (size_t)n * 2;
		lp->colno = xreallocarray(lp->colno, lp->cap, sizeof(int));
		lp->val = xreallocarray(lp->val, lp->cap, sizeof(double));
	}
}

struct lp *lp_new(int ncols)
{
	struct lp *lp = xcalloc(1, sizeof(*lp));

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
	return get_Nrows(lp->m);
}

static void row_mode(struct lp *lp, bool on)
{
	if (lp->rowmode != on) {
		set_add_rowmode(lp->m, on ? TRUE : FALSE);
		lp->rowmode = on;
	}
}

int lp_add_cols(struct lp *lp, int n)
{
	int first = lp->ncols;

	row_mode(lp, false);
	resize_lp(lp->m, get_Nrows(lp->m), lp->ncols + n);
	for (int i = 0; i < n; i++)
		add_columnex(lp->m, 0, NULL, NULL);
	lp->ncols += n;
	return first;
}

int lp_add_col(struct lp *lp, double obj, int n, const int *rows, const double *vals)
{
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
	if (maximize)
		set_maxim(lp->m);
	else
		set_minim(lp->m);
}

int lp_set_objective(struct lp *lp, int n, const int *cols, const double *vals)
{
	scratch(lp, n);
	for (int i = 0; i < n; i++) {
		lp->colno[i] = cols[i] + 1;
		lp->val[i] = vals[i];
	}
	return set_obj_fnex(lp->m, n, lp->val, lp->colno) ? 0 : -1;
}

void lp_set_obj_coef(struct lp *lp, int col, double v)
{
	row_mode(lp, false);
	set_mat(lp->m, 0, col + 1, v);
}

int lp_add_row(struct lp *lp, int n, const int *cols, const double *vals, enum lp_rel rel,
	       double rhs)
{
	static const int type[] = {[LP_LE] = LE, [LP_GE] = GE, [LP_EQ] = EQ};

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
	row_mode(lp, false);
	set_bounds(lp->m, col + 1, isinf(lo) ? -get_infinite(lp->m) : lo,
		   isinf(hi) ? get_infinite(lp->m) : hi);
}

void lp_set_integer(struct lp *lp, int col, bool integer)
{
	row_mode(lp, false);
	set_int(lp->m, col + 1, integer ? TRUE : FALSE);
}

void lp_set_binary(struct lp *lp, int col)
{
	row_mode(lp, false);
	set_binary(lp->m, col + 1, TRUE);
}

void lp_set_time_limit(struct lp *lp, double seconds)
{
	/* lp_solve takes whole seconds; round up so 0.5 s is not "no limit". */
	set_timeout(lp->m, seconds > 0 ? (long)ceil(seconds) : 0);
	lp->deadline = seconds > 0 ? now_seconds() + seconds : 0;
}

void lp_set_cancel(struct lp *lp, const atomic_bool *cancel)
{
	lp->cancel = cancel;
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

	set_scaling(lp->m, mode[s]);
}

void lp_set_simplex(struct lp *lp, enum lp_simplex s)
{
	static const int type[] = {[LP_SIMPLEX_DEFAULT] = SIMPLEX_DUAL_PRIMAL,
				   [LP_SIMPLEX_DUAL] = SIMPLEX_DUAL_DUAL,
				   [LP_SIMPLEX_PRIMAL] = SIMPLEX_PRIMAL_PRIMAL};

	set_simplextype(lp->m, type[s]);
}

void lp_set_break_at_first(struct lp *lp, bool on)
{
	set_break_at_first(lp->m, on ? TRUE : FALSE);
}

enum lp_result lp_solve(struct lp *lp, struct ofc_error *err)
{
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
	row_mode(lp, false);
	default_basis(lp->m);
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
	return get_objective(lp->m);
}

void lp_solution(const struct lp *lp, double *x)
{
	REAL *v = NULL;

	if (get_ptr_variables(lp->m, &v) && v)
		memcpy(x, v, (size_t)lp->ncols * sizeof(double));
	else
		memset(x, 0, (size_t)lp->ncols * sizeof(double));
}

int lp_duals(const struct lp *lp, double *y)
{
	REAL *d = NULL;
	int rows = get_Nrows(lp->m);

	if (!get_ptr_dual_solution(lp->m, &d) || !d)
		return -1;
	memcpy(y, d + 1, (size_t)rows * sizeof(double));
	return 0;
}

int lp_write(const struct lp *lp, const char *path)
{
	return write_lp(lp->m, (char *)path) ? 0 : -1;
}
