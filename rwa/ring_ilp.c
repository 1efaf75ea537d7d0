/* Ring RWA: the exact ILP (lp_solve: Clp has no branch-and-bound) and its
 * LP relaxation (either solver), through the wrapper in rwa/lp.c, the only
 * place an LP solver is called. */
#include "rwa/internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum lp_result rwa_lp_relax(const struct rwa_ring *ring, const struct rwa_demand *dem, size_t ndem,
			    bool max_served, double time_limit, enum lp_solver sv, double *value,
			    struct ofc_error *err)
{
	uint32_t n = ring->nodes;
	/* Columns: x[d][dir] (two per demand, fixed directions bounded to 0),
	 * then loads l[dir][e], then L (min mode). */
	int nx = (int)(2 * ndem), nl = (int)(2 * n), cL = nx + nl;
	struct ofc_error why = {0};
	/* the default, or lp_solve when Clp's plugin is missing */
	enum lp_solver use = sv != LP_SOLVER_DEFAULT			? sv
			     : lp_solver_available(RWA_LP_SOLVER, &why) ? RWA_LP_SOLVER
									: LP_SOLVER_LPSOLVE;
	struct lp *lp = lp_new_on(nx + nl + (max_served ? 0 : 1), use, err);
	size_t cap = 16;

	if (!lp)
		return LP_FAILED;
	int *cols = xmalloc(cap * sizeof(int));
	double *vals = xmalloc(cap * sizeof(double));
	enum lp_result res;
	int *lists = NULL;
	uint32_t *fill = NULL;

	/* Per direction and segment, the columns of the arcs that start there
	 * and of those that end there (first segment past them), and of the arcs
	 * over segment 0: CSR, so building the rows is O(demands + N). */
	uint32_t *off = xcalloc((size_t)6 * n + 1, sizeof(uint32_t));
	for (int pass = 0; pass < 2; pass++) {
		for (size_t d = 0; d < ndem; d++)
			for (int r = 1; r <= 2; r++) {
				if (!(rwa_dirs(&dem[d]) & (1u << r)))
					continue;
				uint32_t s = rwa_arc_start(n, dem[d].src, dem[d].dst, r);
				uint32_t len = rwa_arc_len(n, dem[d].src, dem[d].dst, r);
				size_t b = (size_t)(r - 1) * 3 * n;
				size_t slot[3] = {b + s, b + n + (s + len) % n, b + 2 * n};
				int c = (int)(2 * d) + r - 1;

				for (int t = 0; t < 3; t++) {
					if (t == 2 && !(s == 0 || s + len > n))
						continue;
					if (pass == 0)
						off[slot[t] + 1]++;
					else
						lists[off[slot[t]] + fill[slot[t]]++] = c;
				}
			}
		if (pass == 0) {
			for (size_t i = 0; i < (size_t)6 * n; i++)
				off[i + 1] += off[i];
			lists = xmalloc(((size_t)off[6 * n] + 1) * sizeof(int));
			fill = xcalloc((size_t)6 * n, sizeof(uint32_t));
		}
	}
	size_t most = 0;
	for (size_t i = 0; i < (size_t)6 * n; i++)
		if (off[i + 1] - off[i] > most)
			most = off[i + 1] - off[i];
	if (2 * most + ndem + 4 > cap) {
		cap = 2 * most + ndem + 4;
		cols = xreallocarray(cols, cap, sizeof(int));
		vals = xreallocarray(vals, cap, sizeof(double));
	}

	for (size_t d = 0; d < ndem; d++) {
		int k = 0;

		for (int r = 1; r <= 2; r++) {
			int c = (int)(2 * d) + r - 1;

			if (rwa_dirs(&dem[d]) & (1u << r)) {
				cols[k] = c;
				vals[k++] = 1;
			} else {
				lp_set_bounds(lp, c, 0, 0);
			}
		}
		lp_add_row(lp, k, cols, vals, max_served ? LP_LE : LP_EQ, dem[d].count);
	}
	for (int r = 1; r <= 2; r++) {
		int lbase = nx + (r - 1) * (int)n;
		size_t b = (size_t)(r - 1) * 3 * n;

		for (uint32_t e = 0; e < n; e++) {
			int k = 0;

			cols[k] = lbase + (int)e;
			vals[k++] = 1;
			if (e == 0) {
				/* l[0] = the arcs over segment 0. */
				for (uint32_t i = off[b + 2 * n]; i < off[b + 2 * n + 1]; i++) {
					cols[k] = lists[i];
					vals[k++] = -1;
				}
			} else {
				/* l[e] - l[e-1] = arcs starting at e - arcs ending at e. */
				cols[k] = lbase + (int)e - 1;
				vals[k++] = -1;
				for (uint32_t i = off[b + e]; i < off[b + e + 1]; i++) {
					cols[k] = lists[i];
					vals[k++] = -1;
				}
				for (uint32_t i = off[b + n + e]; i < off[b + n + e + 1]; i++) {
					cols[k] = lists[i];
					vals[k++] = 1;
				}
			}
			lp_add_row(lp, k, cols, vals, LP_EQ, 0);
			if (max_served) {
				lp_set_bounds(lp, lbase + (int)e, 0,
					      (double)ring->fibres * ring->wavelengths);
			} else {
				int rc[2] = {lbase + (int)e, cL};
				double rv[2] = {1, -1};

				lp_add_row(lp, 2, rc, rv, LP_LE, 0);
			}
		}
	}
	free(off);
	free(lists);
	free(fill);
	if (max_served) {
		lp_maximize(lp, true);
		for (int c = 0; c < nx; c++)
			lp_set_obj_coef(lp, c, 1);
	} else {
		lp_set_obj_coef(lp, cL, 1);
	}
	lp_set_time_limit(lp, time_limit);
	res = lp_solve(lp, err);
	if (res == LP_OPTIMAL || res == LP_FEASIBLE)
		*value = lp_objective(lp);
	lp_free(lp);
	free(cols);
	free(vals);
	return res;
}

/* The shorter way round from dem's source to its destination. */
static uint32_t short_len(uint32_t n, const struct rwa_demand *dem)
{
	uint32_t cw = rwa_arc_len(n, dem->src, dem->dst, RWA_CW);

	return cw < n - cw ? cw : n - cw;
}

/* Capacity: 2N segment-directions x K channels. With every lightpath
 * placed, the routes' total length must fit; a demand whose longer way
 * exceeds the slack left by the shortest routes can only go the short way,
 * and with no slack at all every channel of every segment is used exactly
 * once (equalities propagate much better in branch and bound). Sets each
 * demand's allowed directions; returns the slack. */
static int64_t route_slack(uint32_t n, uint32_t K, const struct rwa_demand *dem, size_t ndem,
			   bool max_served, uint8_t *allow)
{
	int64_t slack = (int64_t)2 * n * K;

	for (size_t d = 0; d < ndem; d++) {
		uint32_t cw = rwa_arc_len(n, dem[d].src, dem[d].dst, RWA_CW);
		uint32_t len = dem[d].dir == RWA_CW    ? cw
			       : dem[d].dir == RWA_CCW ? n - cw
						       : short_len(n, &dem[d]);

		slack -= (int64_t)dem[d].count * len;
		allow[d] = (uint8_t)rwa_dirs(&dem[d]);
	}
	if (max_served || slack < 0)
		return slack;
	for (size_t d = 0; d < ndem; d++) {
		uint32_t cw = rwa_arc_len(n, dem[d].src, dem[d].dst, RWA_CW);
		uint32_t lo = short_len(n, &dem[d]), hi = n - lo;

		if (dem[d].dir == RWA_ANY && (int64_t)(hi - lo) > slack)
			allow[d] = (uint8_t)(1u << (cw < n - cw ? RWA_CW : RWA_CCW));
	}
	return slack;
}

/* Channels are interchangeable in each direction, so relabel them in the
 * order of first use: taking the demands longest first, the lightpaths of
 * the first i demands (P of them) then use channels below P only. This
 * cuts the copies of every solution that differ by a permutation of
 * channels, which otherwise make infeasibility proofs hopeless. prefix[d]:
 * the channels demand d may use. */
static uint64_t *channel_prefix(uint32_t n, const struct rwa_demand *dem, size_t ndem)
{
	size_t *order = xmalloc((ndem + 1) * sizeof(size_t));
	uint64_t *prefix = xmalloc((ndem + 1) * sizeof(uint64_t)), run = 0;

	for (size_t d = 0; d < ndem; d++)
		order[d] = d;
	for (size_t i = 1; i < ndem; i++) {
		size_t t = order[i], j = i;
		uint32_t lt = short_len(n, &dem[t]);

		while (j && short_len(n, &dem[order[j - 1]]) < lt) {
			order[j] = order[j - 1];
			j--;
		}
		order[j] = t;
	}
	for (size_t i = 0; i < ndem; i++) {
		run += dem[order[i]].count;
		prefix[order[i]] = run;
	}
	free(order);
	return prefix;
}

/* Conflicts: at each segment where an arc of direction r starts (at every
 * segment when tight), at most (tight: exactly) one lightpath per channel
 * among the arcs covering it. */
static void conflict_rows(struct lp *lp, uint32_t n, uint32_t K, const struct rwa_demand *dem,
			  size_t ndem, const uint8_t *allow, bool tight, int *cols, double *vals)
{
	bool *starts = xcalloc((size_t)2 * n, sizeof(bool));
	size_t *over = xmalloc((ndem + 1) * sizeof(size_t));

	for (size_t d = 0; d < ndem; d++)
		for (int r = 1; r <= 2; r++)
			if (allow[d] & (1u << r))
				starts[(r - 1) * n + rwa_arc_start(n, dem[d].src, dem[d].dst, r)] =
				    true;
	for (int r = 1; r <= 2; r++)
		for (uint32_t e = 0; e < n; e++) {
			size_t nd = 0;

			if (!starts[(r - 1) * n + e] && !tight)
				continue;
			for (size_t d = 0; d < ndem; d++) {
				if (!(allow[d] & (1u << r)))
					continue;
				uint32_t s = rwa_arc_start(n, dem[d].src, dem[d].dst, r);
				uint32_t len = rwa_arc_len(n, dem[d].src, dem[d].dst, r);

				if ((e + n - s) % n < len)
					over[nd++] = d;
			}
			if (nd < 2 && !tight)
				continue;
			for (uint32_t q = 0; q < K; q++) {
				for (size_t i = 0; i < nd; i++) {
					cols[i] = (int)((2 * over[i] + (size_t)r - 1) * K + q);
					vals[i] = 1;
				}
				lp_add_row(lp, (int)nd, cols, vals, tight ? LP_EQ : LP_LE, 1);
			}
		}
	free(over);
	free(starts);
}

/* The lightpaths of solution x, as runs of one channel each. */
static void read_runs(const double *x, size_t ndem, uint32_t K, struct rwa_solution *sol)
{
	for (size_t d = 0; d < ndem; d++)
		for (int r = 1; r <= 2; r++)
			for (uint32_t q = 0; q < K; q++)
				if (x[(2 * d + (size_t)r - 1) * K + q] > 0.5) {
					GROW(sol->runs, sol->cap, sol->nruns + 1);
					sol->runs[sol->nruns++] =
					    (struct rwa_run){(uint32_t)d, q, 1, (uint8_t)r};
					if (q + 1 > sol->colours[r])
						sol->colours[r] = q + 1;
				}
}

enum lp_result rwa_ilp(const struct rwa_ring *ring, const struct rwa_demand *dem, size_t ndem,
		       uint32_t wavelengths, bool max_served, double time_limit,
		       struct rwa_solution *sol, double *objective, struct ofc_error *err)
{
	uint32_t n = ring->nodes, K = ring->fibres * wavelengths;
	/* Column of z[d][r][k]: (2 * d + r - 1) * K + k. */
	int ncols = (int)(2 * ndem * K);
	uint8_t *allow = xmalloc(ndem + 1);
	int64_t slack = route_slack(n, K, dem, ndem, max_served, allow);

	if (!max_served && slack < 0) {
		free(allow);
		return LP_INFEASIBLE;
	}
	bool tight = !max_served && slack == 0;
	uint64_t *prefix = channel_prefix(n, dem, ndem);
	struct lp *lp = lp_new(ncols);
	int *cols = xmalloc(((size_t)2 * K + ndem + 1) * sizeof(int));
	double *vals = xmalloc(((size_t)2 * K + ndem + 1) * sizeof(double));
	enum lp_result res;

	for (int c = 0; c < ncols; c++)
		lp_set_binary(lp, c);
	/* Each demand's count of lightpaths (at most, when maximising). */
	for (size_t d = 0; d < ndem; d++) {
		int k = 0;

		for (int r = 1; r <= 2; r++)
			for (uint32_t q = 0; q < K; q++) {
				int c = (int)((2 * d + (size_t)r - 1) * K + q);

				if ((allow[d] & (1u << r)) && q < prefix[d]) {
					cols[k] = c;
					vals[k++] = 1;
				} else {
					lp_set_bounds(lp, c, 0, 0);
				}
			}
		lp_add_row(lp, k, cols, vals, max_served ? LP_LE : LP_EQ, dem[d].count);
	}
	conflict_rows(lp, n, K, dem, ndem, allow, tight, cols, vals);
	free(prefix);
	free(allow);
	if (max_served) {
		lp_maximize(lp, true);
		for (int c = 0; c < ncols; c++)
			lp_set_obj_coef(lp, c, 1);
	} else {
		/* Feasibility: any point will do. Small pseudo-random costs make
		 * the LP optima at the nodes break the channels' symmetry, so the
		 * dives reach integer points fast, and the search stops at the
		 * first (N = 10..12 all-to-all: seconds, not past a minute). */
		for (int c = 0; c < ncols; c++)
			lp_set_obj_coef(lp, c,
					(double)(((uint32_t)c * 2654435761u) % 1000) / 1000.0);
		lp_set_break_at_first(lp, true);
	}
	lp_set_time_limit(lp, time_limit);
	res = lp_solve(lp, err);
	if (res == LP_OPTIMAL || res == LP_FEASIBLE) {
		double *x = xmalloc((size_t)ncols * sizeof(double));

		lp_solution(lp, x);
		*objective = lp_objective(lp);
		read_runs(x, ndem, K, sol);
		free(x);
	}
	lp_free(lp);
	free(cols);
	free(vals);
	return res;
}
