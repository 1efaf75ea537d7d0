/* Column generation's master LP (6)-(9) (alltoall/mcf.c's comment): the
 * problem's classes of sources and rows (cg_setup), the LP built and
 * rebuilt from the columns kept, a column put in, and the objective of a
 * flow given its loads. */
#include "alltoall/mcf_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A column out of the master's solution this many iterations is dropped
 * (the pricing brings it back when it prices out again; one it brought
 * back is kept from then on, or the master can cycle: see col_back). */
#define KEEP_ITERS 4u

/* Clp keeps its master from one iteration to the next (the new columns
 * added, the primal simplex going on from the last basis) until it holds
 * this many columns per row; lp_solve's is rebuilt every time (cg_rebuild
 * says why). */
#define CLP_KEEP_COLS_PER_ROW 32u

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

/* Put column k into the LP. */
static int lp_put(struct cg *c, struct cg_scratch *w, uint32_t k, struct ofc_error *err)
{
	uint32_t s = c->col_src[k];
	int *rows, col;
	double *vals;

	cg_tree_coefs(c, w, s, c->col_parent + (size_t)k * c->psize);
	for (size_t i = c->diff ? c->ref_off[s] : 0; c->diff && i < c->ref_off[s + 1]; i++) {
		uint32_t r = c->ref_row[i];

		if (w->cnt[r] == 0)
			w->touched[w->ntouched++] = r;
		w->cnt[r] -= c->ref_hops[i];
	}
	qsort(w->touched, w->ntouched, sizeof(uint32_t), cmp_u32);
	rows = xmalloc(((size_t)w->ntouched + 1) * sizeof(int));
	vals = xmalloc(((size_t)w->ntouched + 1) * sizeof(double));
	uint32_t nz = 0;
	for (uint32_t i = 0; i < w->ntouched; i++) {
		uint32_t r = w->touched[i];

		if (w->cnt[r] != 0) { /* (hop counts: a difference is exact) */
			rows[nz] = (int)r;
			vals[nz++] = cg_coef(c, s, r, w->cnt[r]);
		}
		w->cnt[r] = 0;
	}
	rows[nz] = (int)(c->R + s);
	vals[nz] = 1;
	col = lp_add_col(c->lp, 0, (int)nz + 1, rows, vals);
	free(rows);
	free(vals);
	if (col < 0)
		return ofc_error_set(err, OFC_E_RUNTIME, "the LP solver refused a column");
	GROW(c->live, c->cap_live, c->nlive + 1);
	c->live[c->nlive++] = k;
	c->col_last[k] = c->iter;
	return 0;
}

/* Put column k into the LP unless it is there: 1 when it put it. */
int cg_add_column(struct cg *c, struct cg_scratch *w, uint32_t k, struct ofc_error *err)
{
	for (size_t i = 0; i < c->nlive; i++)
		if (c->live[i] == k)
			return 0;
	if (c->col_last[k] != UINT32_MAX)
		c->col_back[k] = 1; /* dropped once, priced out again */
	return lp_put(c, w, k, err) < 0 ? -1 : 1;
}

void cg_free(struct cg *c)
{
	unsigned nt = c->nws;

	lp_free(c->lp);
	free(c->ref_off);
	free(c->ref_row);
	free(c->ref_hops);
	free(c->ref_rhs);
	free(c->arc_tail);
	free(c->arc_row);
	free(c->y);
	free(c->ys);
	free(c->src_node);
	free(c->src_weight);
	free(c->row_size);
	free(c->node_row);
	free(c->row_cap);
	free(c->sol);
	free(c->sol_live);
	free(c->duals);
	free(c->col_src);
	free(c->col_parent);
	free(c->seen);
	free(c->seen_col);
	free(c->col_last);
	free(c->col_back);
	free(c->live);
	free(c->best);
	free(c->cand);
	free(c->best_y);
	for (unsigned i = 0; c->ws && i < nt; i++) {
		free(c->ws[i].h.node);
		free(c->ws[i].h.key);
		free(c->ws[i].h.pos);
		free(c->ws[i].dist);
		free(c->ws[i].cnt);
		free(c->ws[i].touched);
		free(c->ws[i].depth);
		free(c->ws[i].order);
		free(c->ws[i].bucket);
		free(c->ws[i].sub);
	}
	free(c->ws);
}

void cg_setup(struct cg *c, const struct graph *g, uint32_t T, enum mcf_method method,
	      const struct graph_group *grp, unsigned threads, double host_cap,
	      const double *host_caps, const double *cap)
{
	uint32_t n = g->n, d = graph_outdeg(g, 0);

	c->g = g;
	c->n = n;
	c->T = T;
	c->slots = T ? T : 1;
	c->method = method;
	c->grp = grp;
	c->scaling = method == MCF_MIRRORED ? LP_SCALE_GEOMETRIC : LP_SCALE_DEFAULT;
	/* (resolved here for the master LP's pool, which takes a count) */
	c->threads = threads ? threads : ofc_cpu_count();
	c->arc_tail = graph_arc_tails(g);
	c->arc_row = xmalloc(((size_t)g->m + 1) * sizeof(uint32_t));
	/* Classes: every node; one (node 0, standing for all n) under the
	 * translations; the orbits of nodes under the group. */
	c->nsrc = method == MCF_SYMMETRIC ? 1 : method == MCF_MIRRORED ? grp->norbits : n;
	c->src_node = xmalloc(c->nsrc * sizeof(uint32_t));
	c->src_weight = xcalloc(c->nsrc, sizeof(double));
	if (method == MCF_MIRRORED) {
		for (uint32_t u = n; u-- > 0;)
			c->src_node[grp->orbit[u]] = u; /* the smallest */
		for (uint32_t u = 0; u < n; u++)
			c->src_weight[grp->orbit[u]]++;
	} else {
		for (uint32_t s = 0; s < c->nsrc; s++) {
			c->src_node[s] = s;
			c->src_weight[s] = method == MCF_SYMMETRIC ? n : 1;
		}
	}
	/* Rows: every arc but self-loops; under the translations every port;
	 * under the group every orbit of arcs (self-loops map to self-loops). */
	uint32_t rows = 0, *orow = NULL;
	if (method == MCF_MIRRORED) {
		orow = xmalloc(((size_t)grp->narc_orbits + 1) * sizeof(uint32_t));
		memset(orow, 0xff, ((size_t)grp->narc_orbits + 1) * sizeof(uint32_t));
	}
	for (uint32_t a = 0; a < g->m; a++) {
		uint32_t u = c->arc_tail[a];

		if (g->adj[a] == u)
			c->arc_row[a] = UINT32_MAX;
		else if (method == MCF_SYMMETRIC)
			c->arc_row[a] = a - g->off[u];
		else if (method == MCF_MIRRORED)
			c->arc_row[a] = orow[grp->arc_orbit[a]] != UINT32_MAX
					    ? orow[grp->arc_orbit[a]]
					    : (orow[grp->arc_orbit[a]] = rows++);
		else
			c->arc_row[a] = rows++;
	}
	free(orow);
	c->link_rows = method == MCF_SYMMETRIC ? d : rows;
	c->host_cap = host_cap;
	if (host_cap > 0) {
		/* A class of nodes per source class: the translations and the
		 * group load the hosts of a class alike, as they do arcs. */
		c->node_rows = c->nsrc;
		c->node_row = xmalloc(n * sizeof(uint32_t));
		for (uint32_t v = 0; v < n; v++)
			c->node_row[v] = method == MCF_SYMMETRIC  ? 0
					 : method == MCF_MIRRORED ? grp->orbit[v]
								  : v;
	}
	c->rows_per_slot = c->link_rows + 2 * c->node_rows;
	c->row_size = xcalloc(c->rows_per_slot, sizeof(double));
	c->row_cap = xmalloc(c->rows_per_slot * sizeof(double));
	for (uint32_t r = 0; r < c->rows_per_slot; r++)
		c->row_cap[r] = r < c->link_rows ? 1 : host_cap;
	/* A link row's capacity is its arcs' (alike within a row: mcf_solve
	 * picks the method so). */
	for (uint32_t a = 0; cap && a < g->m; a++)
		if (c->arc_row[a] != UINT32_MAX)
			c->row_cap[c->arc_row[a]] = cap[a];
	/* Hosts of their own (plain master only: node_row[v] = v). */
	for (uint32_t v = 0; host_caps && c->node_row && v < n; v++)
		c->row_cap[c->link_rows + v] = c->row_cap[c->link_rows + n + v] = host_caps[v];
	if (method == MCF_SYMMETRIC) {
		for (uint32_t j = 0; j < d; j++)
			c->row_size[j] = n;
	} else {
		for (uint32_t a = 0; a < g->m; a++)
			if (c->arc_row[a] != UINT32_MAX)
				c->row_size[c->arc_row[a]]++;
	}
	for (uint32_t v = 0; c->node_row && v < n; v++) {
		c->row_size[c->link_rows + c->node_row[v]]++;
		c->row_size[c->link_rows + c->node_rows + c->node_row[v]]++;
	}
	c->R = c->rows_per_slot * c->slots;
	c->psize = (size_t)n * (T ? T + 1 : 1);
	c->y = xcalloc(c->R, sizeof(double));
	c->ys = xcalloc(c->R, sizeof(double));
	c->best = xcalloc(c->nsrc, sizeof(double));
	c->cand = xmalloc(c->nsrc * c->psize * sizeof(uint32_t));
	c->nws = parallel_workers(c->nsrc, 1, c->threads);
	c->ws = xcalloc(c->nws, sizeof(*c->ws));
	for (unsigned i = 0; i < c->nws; i++) {
		struct cg_scratch *w = &c->ws[i];

		w->h.node = xmalloc(n * sizeof(uint32_t));
		w->h.key = xmalloc(n * sizeof(double));
		w->h.pos = xmalloc(n * sizeof(uint32_t));
		memset(w->h.pos, 0xff, n * sizeof(uint32_t));
		w->dist = xmalloc(c->psize * sizeof(double));
		w->cnt = xcalloc(c->R, sizeof(double));
		w->touched = xmalloc(c->R * sizeof(uint32_t));
		if (!T) {
			w->depth = xmalloc(n * sizeof(uint32_t));
			w->order = xmalloc(n * sizeof(uint32_t));
			w->bucket = xmalloc(((size_t)n + 1) * sizeof(uint32_t));
			w->sub = xmalloc(n * sizeof(double));
		}
	}
}

/* The difference form's references (cg.diff): each class's hop-shortest
 * tree (Dijkstra at no price, ties to fewer hops), its hops per row, and
 * the rows' right-hand sides, minus their coefficients summed. */
static void cg_refs(struct cg *c)
{
	struct cg_scratch *w = &c->ws[0];
	uint32_t *parent = xmalloc(c->psize * sizeof(uint32_t));
	double *ys = c->ys;
	size_t cap = 0;

	c->ys = xcalloc(c->R, sizeof(double));
	c->ref_off = xcalloc((size_t)c->nsrc + 1, sizeof(size_t));
	c->ref_rhs = xcalloc(c->R, sizeof(double));
	for (uint32_t s = 0; s < c->nsrc; s++) {
		cg_dijkstra(c, w, c->src_node[s], parent);
		cg_tree_coefs(c, w, s, parent);
		GROW(c->ref_row, cap, c->ref_off[s] + w->ntouched + 1);
		c->ref_hops = xreallocarray(c->ref_hops, cap, sizeof(double));
		c->ref_off[s + 1] = c->ref_off[s];
		for (uint32_t i = 0; i < w->ntouched; i++) {
			uint32_t r = w->touched[i];

			c->ref_row[c->ref_off[s + 1]] = r;
			c->ref_hops[c->ref_off[s + 1]++] = w->cnt[r];
			c->ref_rhs[r] -= cg_coef(c, s, r, w->cnt[r]);
			w->cnt[r] = 0;
		}
	}
	free(c->ys);
	c->ys = ys;
	free(parent);
}

/* The master: U_k columns, link rows (<= U_slot), demand rows (>= 1). */
void cg_master(struct cg *c, enum lp_scaling scaling)
{
	c->lp = lp_new_known((int)c->slots, c->solver);
	lp_set_scaling(c->lp, scaling);
	lp_set_cancel(c->lp, c->cancel);
	lp_set_threads(c->lp, c->threads);
	for (uint32_t k = 0; k < c->slots; k++)
		lp_set_obj_coef(c->lp, (int)k, 1);
	if (c->diff && !c->ref_off)
		cg_refs(c);
	for (uint32_t r = 0; r < c->R; r++) {
		int col = (int)(r / c->rows_per_slot);
		double v = -c->row_cap[r % c->rows_per_slot];

		lp_add_row(c->lp, 1, &col, &v, LP_LE, c->diff ? c->ref_rhs[r] : 0);
	}
	for (uint32_t s = 0; s < c->nsrc; s++)
		lp_add_row(c->lp, 0, NULL, NULL, c->diff ? LP_EQ : LP_GE, 1);
	c->duals = xmalloc(((size_t)c->R + c->nsrc) * sizeof(double));
}

/* A new master holding only the columns used in the last KEEP_ITERS
 * iterations (all of them with all): lp_solve then solves a small LP from
 * scratch, which is faster and steadier than its warm starts on a growing
 * one (those run into numerical trouble on the larger instances, and take
 * as many pivots as a cold start). */
int cg_rebuild(struct cg *c, bool all, enum lp_scaling scaling, struct ofc_error *err)
{
	uint32_t *old = c->live;
	size_t nold = c->nlive;

	lp_free(c->lp);
	free(c->duals);
	cg_master(c, scaling);
	c->live = NULL;
	c->nlive = c->cap_live = 0;
	for (size_t i = 0; i < nold; i++) {
		uint32_t k = old[i], last = c->col_last[k];

		if ((all || c->col_back[k] || last + KEEP_ITERS >= c->iter) &&
		    lp_put(c, &c->ws[0], k, err) < 0) {
			free(old);
			return -1;
		}
		c->col_last[k] = last;
	}
	free(old);
	return 0;
}

/* The master goes on as it is, with the columns the pricing added: Clp's
 * primal simplex goes on from the last basis where a rebuilt master starts
 * all slack, and the columns kept make for fewer masters (genkautz:1024,4:
 * the healthy solve in 39 masters and 13.6-14.7 s of CPU, against 91 and
 * 17.8-18.3 s rebuilt). Up to CLP_KEEP_COLS_PER_ROW columns a row; then the
 * stale ones go. */
bool cg_keeps_master(const struct cg *c)
{
	return c->solver == LP_SOLVER_CLP &&
	       c->nlive <= (size_t)CLP_KEEP_COLS_PER_ROW * (c->R + c->nsrc);
}

/* The objective of a solution given its link loads: sum over slots of the
 * most loaded row (fluid: Z). */
double cg_objective_of(const struct cg *c, const double *load)
{
	double total = 0;

	for (uint32_t k = 0; k < c->slots; k++) {
		double max = 0;

		for (uint32_t r = k * c->rows_per_slot; r < (k + 1) * c->rows_per_slot; r++)
			if (load[r] / c->row_cap[r % c->rows_per_slot] > max)
				max = load[r] / c->row_cap[r % c->rows_per_slot];
		total += max;
	}
	return total;
}

/* Keep a master solution (x over the LP's columns, U_k first) as the best
 * primal: it is what the routes and the step loads come from. */
void cg_keep_solution(struct cg *c, const double *x)
{
	c->sol_n = c->nlive;
	c->sol_live = xreallocarray(c->sol_live, c->nlive + 1, sizeof(uint32_t));
	c->sol = xreallocarray(c->sol, c->slots + c->nlive + 1, sizeof(double));
	memcpy(c->sol_live, c->live, c->nlive * sizeof(uint32_t));
	memcpy(c->sol, x, (c->slots + c->nlive) * sizeof(double));
}
