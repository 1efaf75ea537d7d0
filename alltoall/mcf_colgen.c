/* Column generation's loop (alltoall/mcf.c's comment): the master solved
 * (again in other scalings when lp_solve stalls), priced with Wentges
 * smoothing until the master's flow and the bound meet; and
 * mcf_colgen_solve, which sets a problem up, runs it and takes its routes,
 * its kept solution and, when better, the repaired flow. */
#include "alltoall/mcf_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ITER 20000u

/* A master solve taking this many times the slowest one so far (and at
 * least STALL_MIN seconds) has stalled: lp_solve cycles on some of these
 * degenerate masters. */
#define STALL_FACTOR 50.0
#define STALL_MIN    10.0
/* A warm start (a re-plan: its limit is a latency) gives up on a master
 * sooner, and goes on from a smaller one up to WARM_RECOVER times. */
#define STALL_FACTOR_WARM 10.0
#define WARM_RECOVER	  3u

/* The share of a warm start's time limit left for its routes. */
#define ROUTES_SHARE 0.25

/* Solve the master: 0 when solved, 1 when it stopped (*stop says why), -1
 * on errors. lp_solve can stall (cycle) or fail in LUSOL on these degenerate
 * masters; a stalled or failed solve is tried again on a fresh model with
 * another scaling (changing the scaling of a model lp_solve has scaled
 * already does not help). */
static int master_solve(struct cg *c, double deadline, enum mcf_stop *stop, struct ofc_error *err)
{
	const enum lp_scaling scaling[] = {
	    c->scaling, c->scaling == LP_SCALE_GEOMETRIC ? LP_SCALE_DEFAULT : LP_SCALE_GEOMETRIC,
	    LP_SCALE_NONE};

	for (size_t i = 0; i < ARRAY_SIZE(scaling); i++) {
		double t0 = now_seconds(), limit = 0;
		enum lp_result lr;

		/* The first solve has nothing to compare with: the deadline only. */
		if (c->slowest > 0)
			limit = fmax(STALL_MIN,
				     (c->warm ? STALL_FACTOR_WARM : STALL_FACTOR) * c->slowest);
		if (deadline > 0) {
			if (deadline - t0 <= 0)
				break;
			if (limit == 0 || deadline - t0 < limit)
				limit = deadline - t0;
		}
		if (i && cg_rebuild(c, true, scaling[i], err) < 0)
			return -1;
		lp_set_time_limit(c->lp, limit);
		lr = lp_solve(c->lp, err);
		if (lr == LP_OPTIMAL) {
			c->slowest = fmax(c->slowest, now_seconds() - t0);
			return 0;
		}
		/* Stopped by the callback: not lp_solve's trouble, no retry. */
		if (mcf_cancelled(c->cancel))
			return mcf_cancel_error(err);
		if (lr == LP_INFEASIBLE || lr == LP_UNBOUNDED)
			/* Not lp_solve's trouble: the model's. */
			return ofc_error_set(err, OFC_E_RUNTIME, "master LP: %s",
					     lp_result_str(lr));
		ofc_error_clear(err);
		if (deadline > 0 && now_seconds() >= deadline)
			break;
	}
	*stop = deadline > 0 && now_seconds() >= deadline ? MCF_STOP_TIME : MCF_STOP_LP;
	return 1;
}

/* One round of pricing after a master solve (its duals ylp): at the mix
 * of the best bound's prices (*center) and ylp, then, when no tree prices
 * out there, at ylp itself; a better Lagrangian bound moves *lb and
 * *center. The columns added (0: the master is optimal, or the gap is
 * closed), or -1 with err. */
static int cg_price_round(struct cg *c, const double *ylp, double alpha, double ub, double gap,
			  double **center, double *lb, struct ofc_error *err)
{
	uint32_t added = 0;

	for (int pass = *center ? 0 : 1; pass < 2 && !added; pass++) {
		double b;

		for (uint32_t r = 0; r < c->R; r++)
			c->y[r] = pass ? ylp[r] : alpha * (*center)[r] + (1 - alpha) * ylp[r];
		b = cg_price_all(c);
		if (b > *lb) {
			*lb = b;
			if (!*center)
				*center = xmalloc(c->R * sizeof(double));
			memcpy(*center, c->y, c->R * sizeof(double));
		}
		if (ub - *lb <= gap * ub)
			break;
		for (uint32_t s = 0; s < c->nsrc; s++) {
			double pi = c->diff ? c->duals[c->R + s] + cg_ref_cost(c, s, ylp)
				    : c->duals[c->R + s] > 0 ? c->duals[c->R + s]
							     : 0;
			const uint32_t *tree = c->cand + s * c->psize;
			double cost = pass ? c->best[s] : cg_tree_cost(c, &c->ws[0], s, tree, ylp);
			/* lp_solve's duals are good to about 1e-9. */
			if (cost < pi - 1e-9 * (1 + pi)) {
				int a = cg_add_column(c, &c->ws[0], cg_store_tree(c, s, tree), err);

				if (a < 0)
					return -1;
				added += (uint32_t)a;
			}
		}
	}
	return (int)added;
}

/* The answer of a run that ended with flow ub and bound lb: optimal when
 * nothing priced out or the gap closed, else why it stopped. */
static void cg_result(const struct cg *c, double ub, double lb, double gap, bool lp_optimal,
		      struct mcf_result *res)
{
	res->columns = c->ncols;
	res->objective = ub;
	res->lower = lb < ub ? lb : ub;
	res->theta = 1 / ub;
	res->optimal = lp_optimal || ub - res->lower <= gap * ub;
	res->gap = ub / res->lower - 1;
	if (res->optimal)
		res->stop = MCF_STOP_OPTIMAL;
	else if (res->stop == MCF_STOP_OPTIMAL)
		res->stop = MCF_STOP_ITERATIONS;
	if (c->T) {
		/* The kept solution's U_k come first. */
		res->step_load = xmalloc(c->T * sizeof(double));
		memcpy(res->step_load, c->sol, c->T * sizeof(double));
	}
}

/* Column generation with Wentges smoothing: pricing at a mix of the LP's
 * duals and the prices that gave the best bound so far damps the duals'
 * oscillation (the tail of plain column generation); a tree is added only
 * when it prices out against the LP's own duals, and when none does at the
 * mix, the LP's duals are priced directly (no false stop).
 *
 * Every solved master is a feasible flow (ub) and every priced y a
 * Lagrangian bound (lb), so stopping early, at the deadline, still leaves
 * an answer certified within ub / lb - 1 of the optimum. */
static int cg_run(struct cg *c, double gap, double deadline, struct mcf_result *res,
		  struct ofc_error *err)
{
	double ub = INFINITY, lb = 0, alpha = 0.5;
	double *ylp = xmalloc(c->R * sizeof(double)), *center = NULL, *x = NULL;
	uint32_t it, solves = 0, recovered = 0;
	bool lp_optimal = false, shrink = false;
	int rc = -1;

	cg_master(c, c->scaling);
	/* A warm start polishes its flow until that stalls (or the time is
	 * up): on a degraded graph's many classes one master solve can take
	 * longer than the whole time limit (genkautz:1024,4 less one arc). */
	double until = deadline > 0 ? deadline : INFINITY, begin = now_seconds();
	/* Nor is a warm start's master begun in the last tenth of the time:
	 * lp_solve looks at the clock only between pivots (a 10 s limit ran to
	 * 12.6 s at load 5), and putting the polished flow's heaviest trees
	 * into it took 1.1-3.7 s on genkautz:1024,4 less one arc. */
	double master_by = c->warm && deadline > 0 ? deadline - 0.1 * (deadline - begin) : until;
	if (c->warm ? cg_warm_from(c, &lb, &center, &ub, gap, until, master_by, err) < 0
		    : cg_warm_start(c, &lb, &center, &ub, until, err) < 0)
		goto out;
	if (!c->warm && c->demand && c->T == 0 && !c->node_row && c->nsrc >= COLD_POLISH_CLASSES &&
	    ub - lb > gap * ub &&
	    cg_cold_polish(c, &lb, &center, &ub, gap,
			   deadline > 0 ? begin + 0.8 * (deadline - begin) : INFINITY, err) < 0)
		goto out;
	for (it = 1; it <= MAX_ITER && ub - lb > gap * ub; it++) {
		int lr;

		if (mcf_cancelled(c->cancel)) {
			mcf_cancel_error(err);
			goto out;
		}
		if (deadline > 0 && now_seconds() >= deadline) {
			res->stop = MCF_STOP_TIME;
			break;
		}
		if (now_seconds() >= master_by) {
			res->stop = MCF_STOP_TIME;
			break;
		}
		c->iter = it;
		if (it > 1 && (shrink || !cg_keeps_master(c)) &&
		    cg_rebuild(c, false, c->scaling, err) < 0)
			goto out;
		shrink = false;
		lr = master_solve(c, deadline, &res->stop, err);
		if (lr < 0)
			goto out;
		if (lr > 0 && res->stop == MCF_STOP_LP && c->warm && recovered++ < WARM_RECOVER) {
			/* lp_solve gave up on this master in every scaling: a
			 * warm start goes on from a smaller one, the columns of
			 * the last masters and of the best flow (genkautz:64,4
			 * less 0>63,5>40: the next master solved it to the
			 * optimum, where stopping left a 1.2% gap). */
			for (size_t i = 0; i < c->sol_n; i++)
				if (c->sol[c->slots + i] > 0)
					c->col_last[c->sol_live[i]] = it;
			res->stop = MCF_STOP_OPTIMAL; /* not stopped yet */
			shrink = true;
			continue;
		}
		if (lr > 0)
			break; /* out of time, or lp_solve gave up: keep the last master */
		solves++;
		if (lp_duals(c->lp, c->duals) < 0) {
			ofc_error_set(err, OFC_E_RUNTIME, "master LP: no duals");
			goto out;
		}
		for (uint32_t r = 0; r < c->R; r++)
			ylp[r] = c->duals[r] < 0 ? -c->duals[r] : 0;
		x = xreallocarray(x, (size_t)lp_ncols(c->lp), sizeof(double));
		lp_solution(c->lp, x);
		/* The master keeps its optimum's columns, so its value only
		 * falls; the warm start's average may still be better. */
		if (lp_objective(c->lp) < ub) {
			ub = lp_objective(c->lp);
			cg_keep_solution(c, x);
		}
		for (size_t i = 0; i < c->nlive; i++)
			if (x[c->slots + i] > 0)
				c->col_last[c->live[i]] = it;
		int added = cg_price_round(c, ylp, alpha, ub, gap, &center, &lb, err);

		if (added < 0)
			goto out;
		if (!added) {
			/* Nothing prices out: the master is optimal (lb may
			 * trail ub by the duals' noise). */
			lp_optimal = true;
			break;
		}
	}
	res->iterations = solves;
	cg_result(c, ub, lb, gap, lp_optimal, res);
	rc = 0;
out:
	free(x);
	free(ylp);
	c->best_y = center; /* cg_free frees it */
	return rc;
}

/* The most a node sends or receives under a demand matrix. */
static double demand_most(uint32_t n, const double *demand)
{
	double most = 0;

	for (uint32_t u = 0; u < n; u++) {
		double out = 0, in = 0;

		for (uint32_t v = 0; v < n; v++)
			if (v != u) {
				out += demand[(size_t)u * n + v];
				in += demand[(size_t)v * n + u];
			}
		most = fmax(most, fmax(out, in));
	}
	return most;
}

/* Column generation's solver when the request names none (bench/results/lp.md,
 * "LP solvers"): Clp from MCF_CLP_NODES nodes (2-2.6x faster on
 * genkautz:256,4 to 1024,4's masters), lp_solve below and for the
 * one-source master (where Clp's load costs more than it saves); lp_solve
 * too when Clp's plugin cannot be loaded. */
enum lp_solver mcf_default_solver(const struct graph *g, enum mcf_method m)
{
	struct ofc_error err = {0};

	if (g->n < MCF_CLP_NODES || m == MCF_SYMMETRIC)
		return MCF_LP;
	return lp_solver_available(LP_SOLVER_CLP, &err) ? LP_SOLVER_CLP : MCF_LP;
}

/* The repaired flow as the answer (its routes when asked for): proven
 * when it meets the better of its bound and r's (column generation's, when
 * it ran first). */
int mcf_repair_take(struct mcf_repair *rp, const struct mcf_opts *o, struct mcf_result *r,
		    struct ofc_error *err)
{
	double gap = o->gap > 0 ? o->gap : 1e-9, obj = rp->objective, t1 = now_seconds();
	double lower = fmax(rp->lower, r->lower);
	bool optimal = obj <= lower * (1 + gap);

	a2a_routes_free(&r->routes);
	if (o->routes && (optimal || !o->routes_if_optimal) &&
	    mcf_repair_routes(rp, &r->routes, &obj, err) < 0)
		return -1;
	r->repair_seconds += now_seconds() - t1;
	r->repaired = true;
	r->warm_started = true;
	r->warm_bound = rp->lower;
	r->objective = obj;
	r->theta = 1 / obj;
	r->lower = fmin(lower, obj);
	r->gap = obj / r->lower - 1;
	r->optimal = optimal;
	if (optimal)
		r->stop = MCF_STOP_OPTIMAL;
	size_t len = strlen(r->note);
	snprintf(r->note + len, sizeof(r->note) - len,
		 "%sthe healthy flow with the lost arcs' flow rerouted%s", len ? "; " : "",
		 optimal ? " meets the healthy lengths' bound" : ", better than the master's");
	return 0;
}

/* Column generation (SYMMETRIC, MIRRORED or COLGEN), its warm start, routes
 * and kept solution; the repair's flow (rp, when tried) taken when better. */
int mcf_colgen_solve(const struct graph *g, const struct mcf_opts *o, enum mcf_method method,
		     struct graph_group *grp, double inj, const double *injs, double t0,
		     struct mcf_repair *rp, struct mcf_result *r, struct ofc_error *err)
{
	struct cg c = {0};
	int rc;

	r->symmetric = method == MCF_SYMMETRIC;
	if (r->symmetric)
		r->group_order = g->n;
	cg_setup(&c, g, o->steps, method, grp, o->threads, o->nic_forwarding ? 0 : inj,
		 o->nic_forwarding ? NULL : injs, o->capacity);
	c.cancel = o->cancel;
	c.demand = o->demand;
	c.solver = lp_solver_or(o->lp_solver, mcf_default_solver(g, method));
	/* The difference form on Clp (cg.diff): debruijn:2,8's MCF (128
	 * classes) in 10.5-10.8 s instead of 19.9-22.0; the degraded
	 * genkautz:1024,4's first master (dumped, each class's first column
	 * its reference) 18 s instead of 53; genkautz:1024,4's healthy solve
	 * level (13-15 s). */
	c.diff = c.solver == LP_SOLVER_CLP && !o->steps && !c.node_row;
	r->lp_solver = c.solver;
	r->classes = c.nsrc;
	r->rows = c.rows_per_slot;
	/* A warm start: fluid, link rows only, the same nodes. */
	bool fluid_links = !o->steps && !c.node_row;
	if (o->warm && fluid_links && o->warm->n == g->n) {
		c.warm = o->warm;
		/* A degraded graph keeps few symmetries, so its master has
		 * many classes, as a plain one: lp_solve's default scaling
		 * solves those steadiest (genkautz:256,4 less one arc: 5
		 * masters in 20 s against none with geometric). */
		c.scaling = LP_SCALE_DEFAULT;
	}
	double t1 = now_seconds(), limit = o->time_limit;
	/* A re-plan's limit is its latency: a warm start's routes (1-2 s
	 * on genkautz:1024,4 less one arc) come out of it. */
	if (c.warm && o->routes)
		limit *= 1 - ROUTES_SHARE;
	rc = cg_run(&c, o->gap > 0 ? o->gap : 1e-9, limit > 0 ? t0 + limit : 0, r, err);
	r->solve_seconds = now_seconds() - t1;
	r->warm_started = c.warm != NULL;
	r->warm_columns = c.warm_cols;
	r->warm_bound = c.warm_bound;
	if (rc == 0 && o->keep_warm && fluid_links) {
		uint32_t *perm = NULL;

		if (method == MCF_SYMMETRIC && o->translations_known) {
			rc = ofc_error_set(err, OFC_E_INPUT,
					   "a kept solution needs every translation");
		} else {
			if (method == MCF_SYMMETRIC) {
				perm = xmalloc((size_t)g->n * g->n * sizeof(uint32_t));
				mcf_translations(g, perm, o->threads);
			}
			r->warm = cg_warm_export(&c, perm);
			free(perm);
		}
	}
	bool nic = inj > 0 && o->nic_forwarding; /* may yet prove it, below */

	if (rc == 0 && o->routes && (r->optimal || nic || !o->routes_if_optimal)) {
		rc = cg_routes(&c, &r->routes, err);
		r->routes.symmetric = r->symmetric;
		if (rc == 0 && r->symmetric && !o->translations_known) {
			r->routes.perm = xmalloc((size_t)g->n * g->n * sizeof(uint32_t));
			mcf_translations(g, r->routes.perm, o->threads);
		}
		if (rc == 0 && method == MCF_MIRRORED)
			cg_mirror_routes(&c, &r->routes);
	}
	cg_free(&c);
	/* The repaired flow, when better than the master's. */
	if (rc == 0 && rp->objective < r->objective * (1 - 1e-9))
		rc = mcf_repair_take(rp, o, r, err);
	if (rc == 0 && nic) {
		/* NIC forwarding: a host's own N-1 shards, whatever the
		 * routes, through its injection (and ejection) link (with
		 * a demand matrix the most any host sends or receives). */
		double z = (o->demand ? demand_most(g->n, o->demand) : g->n - 1) /
			   inj; /* the slowest host's own */

		if (z > r->objective) {
			r->objective = z;
			r->theta = 1 / z;
		}
		if (z > r->lower)
			r->lower = z;
		r->gap = r->objective / r->lower - 1;
		if (r->objective <= r->lower * (1 + (o->gap > 0 ? o->gap : 1e-9))) {
			r->optimal = true;
			r->stop = MCF_STOP_OPTIMAL;
		}
	}
	return rc;
}
