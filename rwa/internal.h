/* Private to rwa/: the lp_solve models of ring RWA (ring_ilp.c). */
#ifndef OFC_RWA_INTERNAL_H
#define OFC_RWA_INTERNAL_H

#include "rwa/rwa.h"

/* Directions demand d may take: bit RWA_CW, bit RWA_CCW. */
static inline unsigned rwa_dirs(const struct rwa_demand *d)
{
	return d->dir == RWA_ANY ? (1u << RWA_CW) | (1u << RWA_CCW) : 1u << d->dir;
}

/* The LP relaxation, routing only (the colour dimension aggregates away:
 * any fractional routing with loads <= L spreads evenly over the colours).
 * max_served = false: minimise the largest load of a segment-direction
 * (*value = that load, in lightpaths; wavelengths = load / F).
 * max_served = true: maximise the lightpaths routed with every load <= F*W.
 * Loads are kept as variables chained segment to segment, so the model has
 * O(demands + N) non-zeros however long the arcs are. */
enum lp_result rwa_lp_relax(const struct rwa_ring *ring, const struct rwa_demand *dem, size_t ndem,
			    bool max_served, double time_limit, enum lp_solver sv, double *value,
			    struct ofc_error *err);

/* The exact model with C wavelengths per fibre: binary z[d][dir][channel],
 * at most one lightpath per (dir, channel, segment), written only at the
 * segments where some arc starts (two arcs that overlap always overlap at
 * one of their first segments). max_served = false: every lightpath placed
 * (feasibility); true: maximise the lightpaths placed. On LP_OPTIMAL or
 * LP_FEASIBLE the assignment is appended to sol (colour = channel). */
enum lp_result rwa_ilp(const struct rwa_ring *ring, const struct rwa_demand *dem, size_t ndem,
		       uint32_t wavelengths, bool max_served, double time_limit,
		       struct rwa_solution *sol, double *objective, struct ofc_error *err);

#endif
