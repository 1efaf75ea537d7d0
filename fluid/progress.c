/* Progress reports of long solves, called from the solvers (full.c, dw.c)
 * and from fluid_solve: a file of its own so they do not call each other
 * in a circle. */
#include "fluid/internal.h"

void report_progress(const struct problem *p, const char *stage, uint32_t hops, uint32_t it,
		     double value, double bound, size_t columns)
{
	const struct fluid_opts *o = p->opts;

	if (!o->progress)
		return;
	struct fluid_progress pr = {.stage = stage,
				    .hops = hops,
				    .iteration = it,
				    .value = value,
				    .bound = bound,
				    .columns = columns,
				    .seconds = now_seconds() - p->t0};

	o->progress(o->progress_ctx, &pr);
}
