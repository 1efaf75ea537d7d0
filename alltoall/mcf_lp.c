/* The all-to-all MCF as single LPs, theta only (fluid): the master LP
 * (6)-(9) whole, and the link LP (1)-(5) on some sources, which is the
 * child LP (10)-(14) on one (mcf_child_lp). Column generation's answers are
 * checked against them on small graphs. */
#include "alltoall/mcf_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The master LP (6)-(9): g[s][a] for every source and non-loop arc, theta. */
int mcf_master_lp(const struct graph *g, const double *cap, const double *demand, enum lp_solver sv,
		  struct mcf_result *res, struct ofc_error *err)
{
	uint32_t n = g->n, m = g->m;
	uint32_t *tail = graph_arc_tails(g);
	int ncols = (int)((size_t)n * m + 1), th = ncols - 1;
	struct lp *lp;
	int *cols;
	double *vals;

	if ((size_t)n * m + 1 > (size_t)INT32_MAX / 2) {
		free(tail);
		return ofc_error_set(err, OFC_E_INPUT, "the master LP would be too large");
	}
	lp = lp_new_known(ncols, sv);
	lp_maximize(lp, true);
	lp_set_obj_coef(lp, th, 1);
	cols = xmalloc(((size_t)n + 2 * (size_t)m + 2) * sizeof(int));
	vals = xmalloc(((size_t)n + 2 * (size_t)m + 2) * sizeof(double));
	for (uint32_t a = 0; a < m; a++) {
		if (g->adj[a] == tail[a]) {
			/* A self-loop carries nothing useful. */
			for (uint32_t s = 0; s < n; s++)
				lp_set_bounds(lp, (int)((size_t)s * m + a), 0, 0);
			continue;
		}
		for (uint32_t s = 0; s < n; s++) {
			cols[s] = (int)((size_t)s * m + a);
			vals[s] = 1;
		}
		lp_add_row(lp, (int)n, cols, vals, LP_LE, cap ? cap[a] : 1);
	}
	/* (8): in(u) - out(u) - theta >= 0 for every source s and u != s
	 * (theta x demand[s][u] with a demand matrix). */
	struct graph *gt = graph_transpose(g);
	uint32_t *in_arc = xmalloc(((size_t)m + 1) * sizeof(uint32_t));
	/* Arcs into v, as indices of g: match the transpose's order. */
	uint32_t *fill = xcalloc(n, sizeof(uint32_t));
	for (uint32_t a = 0; a < m; a++) {
		uint32_t v = g->adj[a];

		in_arc[gt->off[v] + fill[v]++] = a;
	}
	free(fill);
	for (uint32_t s = 0; s < n; s++)
		for (uint32_t u = 0; u < n; u++) {
			int k = 0;

			if (u == s)
				continue;
			for (uint32_t i = gt->off[u]; i < gt->off[u + 1]; i++) {
				uint32_t a = in_arc[i];

				if (tail[a] == u)
					continue;
				cols[k] = (int)((size_t)s * m + a);
				vals[k++] = 1;
			}
			for (uint32_t a = g->off[u]; a < g->off[u + 1]; a++) {
				if (g->adj[a] == u)
					continue;
				cols[k] = (int)((size_t)s * m + a);
				vals[k++] = -1;
			}
			cols[k] = th;
			vals[k++] = demand ? -demand[(size_t)s * n + u] : -1;
			lp_add_row(lp, k, cols, vals, LP_GE, 0);
		}
	enum lp_result lr = lp_solve(lp, err);
	int rc = 0;
	if (lr != LP_OPTIMAL) {
		rc = lr == LP_FAILED
			 ? -1
			 : ofc_error_set(err, OFC_E_RUNTIME, "master LP: %s", lp_result_str(lr));
	} else {
		double *x = xmalloc((size_t)ncols * sizeof(double));

		lp_solution(lp, x);
		res->theta = x[th];
		res->objective = 1 / x[th];
		res->lower = res->objective;
		res->flow = xmalloc((size_t)n * m * sizeof(double));
		memcpy(res->flow, x, (size_t)n * m * sizeof(double));
		free(x);
	}
	lp_free(lp);
	graph_free(gt);
	free(in_arc);
	free(cols);
	free(vals);
	free(tail);
	return rc;
}

/* Commodity flows of one source s over every destination t != s, with
 * capacities: the common core of the link LP (1)-(5) (all sources, unit
 * capacity shared) and the child LP (10)-(14) (one source, cap = g^s). The
 * sink constraint counts net inflow (the notes' caveat to (4)). */
int mcf_commodity_lp(const struct graph *g, const uint32_t *srcs, uint32_t nsrcs, const double *cap,
		     const double *demand, enum lp_solver sv, double *theta, struct ofc_error *err)
{
	uint32_t n = g->n, m = g->m;
	size_t K = (size_t)nsrcs * (n - 1), ncols = K * m + 1;
	int th = (int)(ncols - 1);
	uint32_t *tail = graph_arc_tails(g);
	int *cols;
	double *vals;
	struct lp *lp;

	if (ncols > 4000000)
		return free(tail),
		       ofc_error_set(err, OFC_E_INPUT,
				     "the link LP would have %zu columns (limit 4M)", ncols);
	lp = lp_new_known((int)ncols, sv);
	lp_maximize(lp, true);
	lp_set_obj_coef(lp, th, 1);
	cols = xmalloc((K + 2 * (size_t)m + 2) * sizeof(int));
	vals = xmalloc((K + 2 * (size_t)m + 2) * sizeof(double));
	/* Capacity: all commodities on an arc. */
	for (uint32_t a = 0; a < m; a++) {
		bool loop = g->adj[a] == tail[a];

		for (size_t k = 0; k < K; k++) {
			cols[k] = (int)(k * m + a);
			vals[k] = 1;
			if (loop)
				lp_set_bounds(lp, cols[k], 0, 0);
		}
		if (!loop)
			lp_add_row(lp, (int)K, cols, vals, LP_LE, cap ? cap[a] : 1);
	}
	/* Per commodity (s, t) and node u: net inflow >= 0 (transit), >= theta
	 * (sink; theta x demand[s][t] with a demand matrix); nothing needed at
	 * the source (flow leaves it). */
	struct graph *gt = graph_transpose(g);
	uint32_t *in_arc = xmalloc(((size_t)m + 1) * sizeof(uint32_t));
	uint32_t *fill = xcalloc(n, sizeof(uint32_t));
	for (uint32_t a = 0; a < m; a++)
		in_arc[gt->off[g->adj[a]] + fill[g->adj[a]]++] = a;
	free(fill);
	size_t k = 0;
	for (uint32_t i = 0; i < nsrcs; i++)
		for (uint32_t t = 0; t < n; t++) {
			uint32_t s = srcs[i];

			if (t == s)
				continue;
			for (uint32_t u = 0; u < n; u++) {
				int q = 0;

				if (u == s)
					continue;
				for (uint32_t j = gt->off[u]; j < gt->off[u + 1]; j++) {
					if (tail[in_arc[j]] == u)
						continue;
					cols[q] = (int)(k * m + in_arc[j]);
					vals[q++] = 1;
				}
				for (uint32_t a = g->off[u]; a < g->off[u + 1]; a++) {
					if (g->adj[a] == u)
						continue;
					cols[q] = (int)(k * m + a);
					vals[q++] = -1;
				}
				if (u == t) {
					cols[q] = th;
					vals[q++] = demand ? -demand[(size_t)s * n + t] : -1;
				}
				lp_add_row(lp, q, cols, vals, LP_GE, 0);
			}
			k++;
		}
	enum lp_result lr = lp_solve(lp, err);
	int rc = 0;
	if (lr != LP_OPTIMAL)
		rc = lr == LP_FAILED
			 ? -1
			 : ofc_error_set(err, OFC_E_RUNTIME, "link LP: %s", lp_result_str(lr));
	else
		*theta = lp_objective(lp);
	lp_free(lp);
	graph_free(gt);
	free(in_arc);
	free(cols);
	free(vals);
	free(tail);
	return rc;
}

int mcf_child_lp(const struct graph *g, uint32_t s, const double *cap, double *theta_s,
		 struct ofc_error *err)
{
	if (s >= g->n)
		return ofc_error_set(err, OFC_E_INPUT, "no node %u", s);
	if (!lp_solver_available(MCF_LP, err))
		return -1;
	return mcf_commodity_lp(g, &s, 1, cap, NULL, MCF_LP, theta_s, err);
}
