/* Which LP solver a fluid model runs on: a leaf of the files that
 * make models (dw.c, pricing.c, full.c), so none of them calls solve.c.
 * The defaults and why: fluid/internal.h, bench/results/lp.md "LP solvers". */
#include "fluid/internal.h"

enum lp_solver fluid_lp_solver(const struct problem *p, enum fluid_lp_kind kind, bool mirrored,
			       uint32_t size)
{
	struct ofc_error err = {0};
	bool clp = kind == FLUID_LP_FULL ||
		   (kind == FLUID_LP_PRICING && (!mirrored || size >= FLUID_CLP_PRICING_COLS)) ||
		   (kind == FLUID_LP_MASTER && size >= FLUID_CLP_MASTER_ROWS);

	if (p->opts->lp_solver != LP_SOLVER_DEFAULT)
		return p->opts->lp_solver;
	return clp && lp_solver_available(LP_SOLVER_CLP, &err) ? LP_SOLVER_CLP : LP_SOLVER_LPSOLVE;
}
