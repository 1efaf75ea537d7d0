/* Theorem 4's period checked (fluid/pipe.c) in parts: the files that
 * share its work see each other here. */
#ifndef OFC_FLUID_PIPE_INTERNAL_H
#define OFC_FLUID_PIPE_INTERNAL_H

#include "fluid/fluid.h"

/* ---- pipe_pattern.c ---- */
/* The pattern, one chunk of the whole of each block, through sched_verify
 * on vn with no capacity: rep is its report. */
int pipe_pattern_check(const struct fluid_pipe *p, const struct verify_network *vn,
		       struct verify_report *rep);

#endif
