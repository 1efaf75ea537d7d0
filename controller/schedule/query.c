/* What a request asks beyond its fields: a leaf of the
 * pipeline's files, which all read it (check-layers: no circle). */
#include "controller/schedule/internal.h"

enum lp_solver schedule_lp_solver(const struct schedule_query *q)
{
	if (q->lp_solver != LP_SOLVER_DEFAULT)
		return q->lp_solver;
	return q->fabric ? q->fabric->lp_solver : LP_SOLVER_DEFAULT;
}
