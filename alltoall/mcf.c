/* All-to-all as a max concurrent multicommodity flow (Basu et al.; notes
 * alltoall-mcf.md): the Moore-tree bound, the port-preserving translations
 * of Cayley graphs, the link LP (1)-(5), the master LP (6)-(9) and its
 * children (10)-(14), and the master solved by column generation, fluid or
 * time-stepped (15)-(20), on all sources or, by symmetry, on one.
 *
 * Column generation (Dantzig-Wolfe on the master). The master's feasible
 * set for one source s is the set of flows that sink one unit at every
 * other node; its vertices are spanning out-trees (each arc carries the
 * number of nodes below it). So the master is
 *
 *   min sum_k U_k   s.t.  sum_c a(r, c) x_c <= U_slot(r)   for every link row r
 *                         sum_{c of s} x_c >= 1             for every source s
 *
 * with a column c per tree. Unit demand and a minimised maximum load Z is the
 * same LP as max theta with unit capacity: theta = 1 / Z. A fluid problem has
 * one slot (Z) and one row per arc; the time-stepped one has a slot per step
 * (U_t) and a row per (arc, step), and its trees live on the time-expanded
 * graph (holding is free). Given the duals y >= 0 of the link rows, the best
 * column of source s is its shortest-path tree under y, and for any y the
 * value sum_s dist_y(s) / max_slot sum_{r in slot} y_r is a lower bound on
 * the optimum (a feasible dual: Lagrangian relaxation), so the loop stops
 * when master and bound meet within the gap. Symmetric problems have a
 * single source and one row per port (per step): the orbit of an arc under
 * the translations is its port (Sec. 2.2 of the notes, [X]).
 *
 * This file is the entry, mcf_solve: the checks, which master applies (one
 * source, mirrored or plain), a re-plan's repair and stand-in, and the
 * single LPs; mcf_internal.h says which mcf_*.c file holds the rest.
 */
#include "alltoall/mcf_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A re-plan's stand-in (standin_try): tried on graphs of 256 classes of
 * sources and more (genkautz:1024,4 less 0>1023 has 528; on genkautz:512,4
 * less 0>511, 240, the stand-in's optimum is worse than the degraded
 * re-plan's), when the lost arcs' orbits take at most 1% of the arcs and
 * leave at most 1 / STANDIN_FEWER as many classes, and the kept flow loads
 * no lost arc above 95% of its objective; column generation on the
 * degraded graph follows when half the time limit is left (mcf_opts.standin
 * replaces them). */
static const struct mcf_standin_tuning standin_default = {
    .min_classes = 256, .arc_share = 0.01, .load = 0.95, .rest = 0.5};

static const struct mcf_standin_tuning *standin_of(const struct mcf_opts *o)
{
	return o->standin ? o->standin : &standin_default;
}
#define STANDIN_FEWER 4u

const char *mcf_method_name(enum mcf_method m)
{
	static const char *const name[] = {
	    [MCF_AUTO] = "auto",
	    [MCF_SYMMETRIC] = "one-source symmetric",
	    [MCF_COLGEN] = "column generation",
	    [MCF_MASTER] = "master LP",
	    [MCF_FULL] = "link LP",
	    [MCF_MIRRORED] = "mirrored column generation",
	};

	return (size_t)m < ARRAY_SIZE(name) && name[m] ? name[m] : "unknown";
}

const char *mcf_stop_name(enum mcf_stop s)
{
	static const char *const name[] = {
	    [MCF_STOP_OPTIMAL] = "optimal",
	    [MCF_STOP_TIME] = "time limit",
	    [MCF_STOP_LP] = "the LP solver gave up",
	    [MCF_STOP_ITERATIONS] = "iteration limit",
	};

	return (size_t)s < ARRAY_SIZE(name) && name[s] ? name[s] : "unknown";
}

/* A demand matrix: finite, not negative, something asked; warm starts
 * keep unit demands. (Whether the symmetric masters apply is whether it is
 * alike under their group: mcf_translations_keep, group_keep.) */
static int check_demand(uint32_t n, const struct mcf_opts *o, struct ofc_error *err)
{
	double sum = 0;

	for (uint32_t s = 0; s < n; s++)
		for (uint32_t t = 0; t < n; t++) {
			double d = o->demand[(size_t)s * n + t];

			if (!(d >= 0) || !isfinite(d))
				return ofc_error_set(err, OFC_E_INPUT, "demand %u -> %u: %g", s, t,
						     d);
			if (s != t)
				sum += d;
		}
	if (!(sum > 0))
		return ofc_error_set(err, OFC_E_INPUT, "the demand matrix asks for nothing");
	if (o->warm || o->keep_warm)
		return ofc_error_set(err, OFC_E_INPUT,
				     "warm starts are for uniform all-to-alls, not a demand "
				     "matrix");
	return 0;
}

/* A re-plan tries the repair first (alltoall/mcf_repair.c): the kept healthy
 * flow with the lost arcs' flow rerouted. true when that settles it: its
 * flow meets the kept lengths' bound on g (r filled, *rc 0), or the solve
 * was cancelled (*rc -1). Else *rp holds what it reached, for column
 * generation's answer to be compared with. */
static bool repair_first(const struct graph *g, const struct mcf_opts *o, bool hosts,
			 struct mcf_repair *rp, struct mcf_result *r, int *rc,
			 struct ofc_error *err)
{
	double gap = o->gap > 0 ? o->gap : 1e-9;

	if (!o->warm || o->steps || hosts || o->demand || o->warm->n != g->n)
		return false;
	if (mcf_repair_solve(g, o, -1, rp, err) < 0) {
		*rc = -1;
		return true;
	}
	r->repair_objective = rp->objective;
	r->repair_seconds = rp->seconds;
	if (!(rp->objective <= rp->lower * (1 + gap)))
		return false;
	r->solve_seconds = rp->seconds;
	*rc = mcf_repair_take(rp, o, r, err);
	return true;
}

static int mcf_solve_at(const struct graph *g, const struct mcf_opts *o, bool replan,
			struct mcf_result *r, struct ofc_error *err);

/* A re-plan whose failures broke the symmetry: g less the lost
 * arcs' whole orbits under the kept solution's group keeps that group, so
 * its master has the healthy graph's few classes of sources where g's has
 * many (genkautz:1024,4 less 0>1023: 51 against 528, whose master takes
 * minutes). Its flow is a flow on g (its arcs are g's; the orbits' others
 * idle), so it stands in for g's when better; the bound stays g's own.
 * Solved warm from the same kept solution, within what is left of the
 * time limit, its routes moved onto g's arcs. 1 when *st holds it, 0 when
 * it does not apply or found nothing, -1 when cancelled. */
static int standin_try(const struct graph *g, const struct mcf_opts *o, uint32_t classes, double t0,
		       struct mcf_result *st, struct ofc_error *err)
{
	const struct mcf_warm *w = o->warm;
	double left = t0 + o->time_limit - now_seconds();
	int rc = 0;

	/* On Clp only: its kept master reaches 1249.50 on genkautz:1024,4
	 * less 0>1023 in the time, where lp_solve's rebuilt ones reached
	 * 1250.90 in two masters, no better than the degraded graph's own. */
	if (!w || o->steps || o->demand || o->capacity || o->keep_warm || !(o->time_limit > 0) ||
	    w->n != g->n || classes < standin_of(o)->min_classes || !(left > 0) ||
	    lp_solver_or(o->lp_solver, mcf_default_solver(g, MCF_MIRRORED)) != LP_SOLVER_CLP)
		return 0;
	uint32_t *map = mcf_warm_arc_map(g, w), lost = 0, gone_n = 0;
	uint32_t *lost_arc = xmalloc(((size_t)w->m + 1) * sizeof(uint32_t));
	bool *gone = xcalloc((size_t)g->m + 1, sizeof(bool));
	for (uint32_t a = 0; a < w->m; a++) {
		if (map[a] != UINT32_MAX)
			continue;
		lost_arc[lost++] = a;
		for (uint32_t h = 0; h < w->order; h++) {
			uint32_t b = map[w->garc[(size_t)h * w->m + a]];

			if (b != UINT32_MAX && !gone[b]) {
				gone[b] = true;
				gone_n++;
			}
		}
	}
	free(map);
	/* Where the kept flow saturates a lost arc, its orbit is needed:
	 * genkautz:1024,4 less 0>1022 or 1>1019 (loaded 1248.34 of 1248.34)
	 * re-planned to 1279.42 and 1274.34 through the stand-in against
	 * 1272.10 and 1268.26 without; 0>1023 carries 1140.97 (91%). */
	double *load = xmalloc(((size_t)lost + 1) * sizeof(double));
	bool slack = true;
	mcf_warm_loads(w, lost_arc, lost, load);
	for (uint32_t i = 0; i < lost; i++)
		slack = slack && load[i] <= standin_of(o)->load * w->objective;
	free(load);
	free(lost_arc);
	if (!lost || !slack || !gone_n || gone_n > standin_of(o)->arc_share * g->m) {
		free(gone);
		return 0;
	}
	struct graph *g2 = topo_without_arcs(g, gone, "the lost arcs' orbits removed");
	struct graph_group grp = {0};
	struct ofc_clock clk = {
	    .start = t0, .deadline = t0 + o->time_limit, .limit = o->time_limit};
	uint64_t cap = (16u << 20) / ((uint64_t)g2->n + g2->m);
	graph_automorphisms(g2, cap > 65536 ? 65536 : (uint32_t)cap, &clk, &grp);
	bool fewer = grp.norbits * STANDIN_FEWER <= classes;
	graph_group_free(&grp);
	struct mcf_opts o2 = *o;
	o2.method = MCF_AUTO;
	o2.time_limit = t0 + o->time_limit - now_seconds();
	if (fewer && o2.time_limit > 0) {
		if (mcf_solve_at(g2, &o2, false, st, err) == 0 && !st->symmetric) {
			/* g2's arcs are g's less the gone ones, in g's order */
			uint32_t *to = xmalloc(((size_t)g2->m + 1) * sizeof(uint32_t)), k = 0;

			for (uint32_t a = 0; a < g->m; a++)
				if (!gone[a])
					to[k++] = a;
			for (size_t i = 0; st->routes.off && i < st->routes.off[st->routes.nroutes];
			     i++)
				st->routes.arc[i] = to[st->routes.arc[i]];
			free(to);
			rc = 1;
		} else if (mcf_cancelled(o->cancel)) {
			rc = -1;
		} else {
			if (st->symmetric) /* (not a Cayley graph's routes: a port may be gone) */
				mcf_result_free(st);
			memset(st, 0, sizeof(*st));
			ofc_error_clear(err);
		}
	}
	graph_free(g2);
	free(gone);
	return rc;
}

/* The stand-in's flow as the answer (st's routes taken), with the best
 * bound on g: the kept lengths' (rp) or column generation's (r, when it
 * ran first). */
static void standin_take(struct mcf_result *st, const struct mcf_repair *rp,
			 const struct mcf_opts *o, bool ran, struct mcf_result *r)
{
	double gap = o->gap > 0 ? o->gap : 1e-9;
	double lower = fmax(rp->lower, ran ? r->lower : 0);

	a2a_routes_free(&r->routes);
	r->routes = st->routes;
	memset(&st->routes, 0, sizeof(st->routes));
	r->method = st->method;
	r->lp_solver = st->lp_solver;
	r->symmetric = false;
	r->classes = st->classes;
	r->rows = st->rows;
	r->group_order = st->group_order;
	r->iterations = st->iterations;
	r->columns = st->columns;
	r->warm_started = true;
	r->warm_columns = st->warm_columns;
	r->warm_bound = rp->lower;
	r->solve_seconds += st->solve_seconds;
	r->objective = st->objective;
	r->theta = 1 / st->objective;
	r->lower = fmin(lower, st->objective);
	r->gap = r->objective / r->lower - 1;
	r->optimal = r->objective <= r->lower * (1 + gap);
	r->stop = r->optimal ? MCF_STOP_OPTIMAL : MCF_STOP_TIME;
	if (o->routes_if_optimal && !r->optimal)
		a2a_routes_free(&r->routes);
	size_t len = strlen(r->note);
	snprintf(r->note + len, sizeof(r->note) - len,
		 "%sthe flow of the graph less the lost arcs' orbits (%u classes), better than "
		 "this graph's",
		 len ? "; " : "", st->classes);
}

/* A re-plan (standin true: fluid, uniform, link rows only) tries the
 * stand-in first; column generation on g runs when none applies or when
 * enough time is left after it, and the better flow is the answer. */
static int replan_solve(const struct graph *g, const struct mcf_opts *o, bool standin,
			enum mcf_method method, uint32_t classes, struct graph_group *grp,
			double inj, const double *injs, double t0, struct mcf_repair *rp,
			struct mcf_result *r, struct ofc_error *err)
{
	struct mcf_result st = {0};
	int sr = standin ? standin_try(g, o, classes, t0, &st, err) : 0, rc = 0;
	bool ran = false;

	if (sr < 0)
		return -1;
	if (sr == 0 || now_seconds() < t0 + standin_of(o)->rest * o->time_limit) {
		rc = mcf_colgen_solve(g, o, method, grp, inj, injs, t0, rp, r, err);
		ran = true;
	}
	if (rc == 0 && sr > 0 && (!ran || st.objective < r->objective * (1 - 1e-9))) {
		standin_take(&st, rp, o, ran, r);
		if (!ran && rp->objective < r->objective * (1 - 1e-9))
			rc = mcf_repair_take(rp, o, r, err);
	}
	mcf_result_free(&st);
	return rc;
}

/* Per-host injections: alike, they are one limit (*inj); else the plain
 * master, at the least of them, with *injs the hosts' own. */
static int host_injections(const struct graph *g, const struct mcf_opts *o, enum mcf_method *method,
			   double *inj, const double **injs, struct ofc_error *err)
{
	double inj_min = 0;

	*inj = o->injection;
	*injs = NULL;
	if (o->injections) {
		*inj = inj_min = o->injections[0];
		for (uint32_t v = 1; v < g->n; v++) {
			if (o->injections[v] != *inj)
				*injs = o->injections;
			inj_min = fmin(inj_min, o->injections[v]);
		}
		if (*injs && !(inj_min > 0))
			return ofc_error_set(err, OFC_E_INPUT,
					     "every host needs a positive injection");
		if (*injs && (*method == MCF_SYMMETRIC || *method == MCF_MIRRORED))
			return ofc_error_set(err, OFC_E_INPUT,
					     "hosts of different injection: the %s master does "
					     "not apply (the plain one does)",
					     *method == MCF_SYMMETRIC ? "one-source" : "mirrored");
		if (*injs && *method == MCF_AUTO)
			*method = MCF_COLGEN;
		if (*injs)
			*inj = inj_min;
	}
	return 0;
}

/* What every method needs of the graph and the options: node count,
 * strong connectivity, enough steps, capacities, the demand matrix (r
 * takes the graph's figures on the way, as before any solve). */
static int check_inputs(const struct graph *g, const struct mcf_opts *o, const struct topo_facts *f,
			struct mcf_result *r, struct ofc_error *err)
{
	/* Node ids are 16 bits: a reduced program (translations known) may
	 * name all 65,536 of them, an explicit schedule one id fewer. */
	uint32_t most = o->translations_known ? SCHED_REDUCED_MAX_NODES : SCHED_MAX_NODES;
	if (g->n < 2 || g->n > most)
		return ofc_error_set(err, OFC_E_INPUT, "%u nodes: all-to-all needs 2..%u", g->n,
				     most);
	if (!f->strongly_connected)
		return ofc_error_set(err, OFC_E_INPUT,
				     "%s is not strongly connected: some pairs have no path",
				     g->spec ? g->spec : "the topology");
	if (o->steps && (!f->diameter_known || o->steps < f->diameter))
		return ofc_error_set(
		    err, OFC_E_INPUT,
		    "a time-stepped schedule needs at least the diameter (%u) steps", f->diameter);
	r->nodes = g->n;
	r->degree = f->degree;
	r->steps = o->steps;
	for (uint32_t a = 0; o->capacity && a < g->m; a++)
		if (!(o->capacity[a] > 0) || !isfinite(o->capacity[a]))
			return ofc_error_set(err, OFC_E_INPUT, "arc %u: capacity %g", a,
					     o->capacity[a]);
	if (o->demand && check_demand(g->n, o, err) < 0)
		return -1;
	return 0;
}

/* AUTO or SYMMETRIC asked for: the one-source master when the graph's
 * ports are translations of a Cayley graph and the capacities and demand
 * are alike under them (SYMMETRIC asked for: an error where not), else
 * plain column generation (r->note says why, where it is the capacities). */
static int pick_symmetric(const struct graph *g, const struct mcf_opts *o, enum mcf_method *method,
			  struct mcf_result *r, struct ofc_error *err)
{
	bool sym = o->translations_known || mcf_translations(g, NULL, o->threads);

	if (sym && o->demand && !mcf_translations_keep(g, o->demand, o->threads)) {
		if (*method == MCF_SYMMETRIC)
			return ofc_error_set(err, OFC_E_INPUT,
					     "the demand matrix is not alike under the "
					     "translations, so the one-source reduction does "
					     "not apply");
		sym = false;
	}

	if (!sym && *method == MCF_SYMMETRIC)
		return ofc_error_set(err, OFC_E_INPUT,
				     "%s: its ports are not translations of one Cayley "
				     "graph, so the one-source reduction does not apply",
				     g->spec ? g->spec : "the topology");
	if (sym && o->capacity && !mcf_caps_per_port(g, o->capacity)) {
		if (*method == MCF_SYMMETRIC)
			return ofc_error_set(err, OFC_E_INPUT,
					     "link capacities differ within a port, so "
					     "the one-source reduction does not apply");
		sym = false;
		snprintf(r->note, sizeof(r->note),
			 "capacities differ within a port: no one-source reduction");
	}
	*method = sym ? MCF_SYMMETRIC : MCF_COLGEN;
	return 0;
}

/* The combinations of method, injection limit and options no master
 * models. */
static int check_method(const struct mcf_opts *o, enum mcf_method method, double inj,
			struct ofc_error *err)
{
	if (inj > 0 && (method == MCF_MASTER || method == MCF_FULL))
		return ofc_error_set(err, OFC_E_INPUT,
				     "the %s LP does not model injection limits; column "
				     "generation does",
				     method == MCF_MASTER ? "master" : "link");
	if (inj > 0 && o->nic_forwarding && o->steps)
		return ofc_error_set(err, OFC_E_INPUT,
				     "the time-stepped MCF does not model NIC forwarding with an "
				     "injection limit yet (host forwarding it does); use a fluid "
				     "lowering (paths or single), which is cut-through as NIC "
				     "forwarding is");
	if ((method == MCF_MASTER || method == MCF_FULL) && (o->steps || o->routes))
		return ofc_error_set(err, OFC_E_INPUT,
				     "the %s LP gives theta only (fluid); routes and time steps "
				     "come from column generation",
				     method == MCF_MASTER ? "master" : "link");
	return 0;
}

static int mcf_solve_at(const struct graph *g, const struct mcf_opts *o, bool replan,
			struct mcf_result *r, struct ofc_error *err)
{
	struct topo_facts f;
	double t0 = now_seconds();
	enum mcf_method method = o->method;
	struct mcf_repair rp = {.objective = INFINITY};
	int rc;

	memset(r, 0, sizeof(*r));
	/* Let go before it began (ofcd's degraded run after a cancelled
	 * healthy one): not even the graph's facts. */
	if (mcf_cancelled(o->cancel))
		return mcf_cancel_error(err);
	r->lp_solver = lp_solver_or(o->lp_solver, MCF_LP);
	if (!lp_solver_available(o->lp_solver, err))
		return -1;
	topo_facts(g, &f, o->threads);
	double inj;
	const double *injs;
	if (host_injections(g, o, &method, &inj, &injs, err) < 0 ||
	    check_inputs(g, o, &f, r, err) < 0)
		return -1;
	if ((method == MCF_AUTO || method == MCF_SYMMETRIC) &&
	    pick_symmetric(g, o, &method, r, err) < 0)
		return -1;
	struct graph_group grp = {0};
	if (!injs && ((o->method == MCF_AUTO && method == MCF_COLGEN) || method == MCF_MIRRORED))
		mcf_group(g, o, t0, &method, &grp, r);
	r->method = method;
	if (check_method(o, method, inj, err) < 0)
		return -1;
	if (method == MCF_MASTER) {
		rc = mcf_master_lp(g, o->capacity, o->demand, lp_solver_or(o->lp_solver, MCF_LP), r,
				   err);
	} else if (method == MCF_FULL) {
		uint32_t *all = xmalloc(g->n * sizeof(uint32_t));

		for (uint32_t s = 0; s < g->n; s++)
			all[s] = s;
		rc = mcf_commodity_lp(g, all, g->n, o->capacity, o->demand,
				      lp_solver_or(o->lp_solver, MCF_LP), &r->theta, err);
		free(all);
		if (rc == 0)
			r->objective = r->lower = 1 / r->theta;
	} else if (replan && repair_first(g, o, inj > 0 || injs, &rp, r, &rc, err)) {
		/* proven by the repaired healthy flow (or cancelled) */
	} else {
		uint32_t classes = method == MCF_SYMMETRIC ? 1 : grp.order > 1 ? grp.norbits : g->n;
		rc = replan_solve(g, o, replan && !(inj > 0) && !injs, method, classes, &grp, inj,
				  injs, t0, &rp, r, err);
	}
	if (method == MCF_MASTER || method == MCF_FULL)
		r->optimal = true;
	/* Let go after the last look (its routes, say, or a whole master or
	 * link LP, which do not look): still no result, so a caller that
	 * cancelled never takes one. */
	if (rc == 0 && mcf_cancelled(o->cancel))
		rc = mcf_cancel_error(err);
	graph_group_free(&grp);
	mcf_repair_free(&rp);
	r->seconds = now_seconds() - t0;
	if (rc < 0)
		mcf_result_free(r);
	return rc;
}

int mcf_solve(const struct graph *g, const struct mcf_opts *o, struct mcf_result *r,
	      struct ofc_error *err)
{
	return mcf_solve_at(g, o, true, r, err);
}

void mcf_result_free(struct mcf_result *r)
{
	free(r->step_load);
	free(r->flow);
	a2a_routes_free(&r->routes);
	mcf_warm_free(r->warm);
	r->step_load = NULL;
	r->flow = NULL;
	r->warm = NULL;
}
