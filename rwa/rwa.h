/* rwa — routing and wavelength assignment, and the one wrapper around
 * lp_solve that every LP and ILP in ofc goes through (BFB, RWA, MCF).
 *
 * The wrapper keeps lp_solve's 1-based columns, its globals-free lprec and
 * its status codes behind a small API with 0-based columns and
 * struct ofc_error. Separate models may be solved on separate threads.
 */
#ifndef OFC_RWA_H
#define OFC_RWA_H

#include "util/util.h"

/* ---- linear programs (rwa/lp.c) ------------------------------------------- */

struct lp;

enum lp_rel { LP_LE = 1, LP_GE = 2, LP_EQ = 3 };

enum lp_result {
	LP_OPTIMAL = 0,	   /* proven optimal */
	LP_FEASIBLE,	   /* stopped (time limit) with a feasible, unproven solution */
	LP_INFEASIBLE,
	LP_UNBOUNDED,
	LP_TIMEOUT,	   /* stopped without a feasible solution */
	LP_FAILED,	   /* numerical trouble or an internal error */
};

/* A model with ncols columns, all >= 0 and continuous, objective 0, minimise. */
struct lp *lp_new(int ncols);
void lp_free(struct lp *lp);
int lp_ncols(const struct lp *lp);
int lp_nrows(const struct lp *lp);
/* Add columns (>= 0, continuous); returns the index of the first. */
int lp_add_cols(struct lp *lp, int n);
/* Add one column (>= 0, continuous) with its objective coefficient and its
 * entries in existing rows (any order); returns its index. Column
 * generation adds columns this way: lp_solve's next solve starts from the
 * last basis (the new column nonbasic), so re-solving is a warm start. */
int lp_add_col(struct lp *lp, double obj, int n, const int *rows, const double *vals);
void lp_maximize(struct lp *lp, bool maximize);
/* Sparse objective: coefficients for the listed columns, 0 elsewhere. */
int lp_set_objective(struct lp *lp, int n, const int *cols, const double *vals);
void lp_set_obj_coef(struct lp *lp, int col, double v);
/* Sparse row: sum vals[i] * x[cols[i]] REL rhs. Returns the row index (0-based). */
int lp_add_row(struct lp *lp, int n, const int *cols, const double *vals, enum lp_rel rel,
	       double rhs);
/* Bounds; use INFINITY / -INFINITY for none. */
void lp_set_bounds(struct lp *lp, int col, double lo, double hi);
void lp_set_integer(struct lp *lp, int col, bool integer);
void lp_set_binary(struct lp *lp, int col);
/* Wall-clock limit for solve (0 = none). */
void lp_set_time_limit(struct lp *lp, double seconds);
/* Solve. err is set (OFC_E_RUNTIME) for LP_FAILED only. */
enum lp_result lp_solve(struct lp *lp, struct ofc_error *err);
/* Forget the last basis: the next solve starts from the slack basis (a
 * cold start, for when a warm start ran into numerical trouble). */
void lp_reset_basis(struct lp *lp);
const char *lp_result_str(enum lp_result r);
double lp_objective(const struct lp *lp);
/* Primal values of all columns into x (ncols entries). */
void lp_solution(const struct lp *lp, double *x);
/* Dual values of all rows into y (nrows entries); LP only. */
int lp_duals(const struct lp *lp, double *y);
/* The model in lp_solve's LP format, for debugging. */
int lp_write(const struct lp *lp, const char *path);

#endif
