/* Where column generation starts: multiplicative weights (a cold start),
 * a kept solution of another graph (a re-plan's warm start), the Frank-Wolfe
 * polish of either flow before the master, and a solution kept for another
 * graph's warm start (struct mcf_warm, mcf_opts.keep_warm). */
#include "alltoall/mcf_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Rounds of multiplicative weights before the master (cg_warm_start). The
 * mirrored master, small, is solved once or twice from many; the plain
 * master on n sources with as many columns stalls in lp_solve (genkautz:27,6
 * does with 40), so it starts from fewer and generates the rest. */
#define MW_ROUNDS	40u
#define MW_ROUNDS_PLAIN 12u

/* Columns to start from: a few rounds of multiplicative weights (the
 * Garg-Koenemann idea): every source's shortest-path tree under prices that
 * grow exponentially with the load the trees so far put on each link. The
 * master on these is already close to optimal, so the column generation
 * proper (whose first duals otherwise price a single link) needs few
 * iterations. The trees' average is a feasible flow, the primal to fall
 * back on when the time runs out before the master is solved once (*ub). */
int cg_warm_start(struct cg *c, double *lb, double **center, double *ub, double until,
		  struct ofc_error *err)
{
	double *load = xcalloc(c->R, sizeof(double));
	uint32_t rounds = c->nsrc == 1		      ? 8
			  : c->method == MCF_MIRRORED ? MW_ROUNDS
						      : MW_ROUNDS_PLAIN;
	double *picks = NULL;
	size_t cap_picks = 0;
	uint32_t done;
	int rc = -1;

	for (uint32_t r = 0; r < c->R; r++)
		c->y[r] = 1;
	/* Every round is a pricing of every source (on torus:256x256's
	 * time-expanded graph about a second): past the deadline the rounds
	 * so far make the average, one at least. */
	for (done = 0; done < rounds && (done == 0 || now_seconds() < until); done++) {
		double max = 0, b = cg_price_all(c);

		/* These prices certify a bound too (the first, uniform ones give
		 * the distance bound sum c(e) / sum dist(s, t)). */
		if (b > *lb) {
			*lb = b;
			if (!*center)
				*center = xmalloc(c->R * sizeof(double));
			memcpy(*center, c->y, c->R * sizeof(double));
		}
		for (uint32_t s = 0; s < c->nsrc; s++) {
			const uint32_t *tree = c->cand + s * c->psize;
			struct cg_scratch *w = &c->ws[0];
			uint32_t col = cg_store_tree(c, s, tree);

			if (cg_add_column(c, w, col, err) < 0)
				goto out;
			if (col >= cap_picks) {
				size_t old = cap_picks;

				GROW(picks, cap_picks, (size_t)col + 1);
				memset(picks + old, 0, (cap_picks - old) * sizeof(double));
			}
			picks[col] += 1.0;
			cg_tree_coefs(c, w, s, tree);
			for (uint32_t i = 0; i < w->ntouched; i++) {
				uint32_t r = w->touched[i];

				load[r] += cg_coef(c, s, r, w->cnt[r]);
				w->cnt[r] = 0;
			}
		}
		for (uint32_t r = 0; r < c->R; r++)
			if (load[r] / c->row_cap[r % c->rows_per_slot] > max)
				max = load[r] / c->row_cap[r % c->rows_per_slot];
		for (uint32_t r = 0; r < c->R; r++)
			c->y[r] = exp(8.0 * load[r] / c->row_cap[r % c->rows_per_slot] / max);
	}
	/* The average, a feasible flow: loads / rounds done, each slot's U_k
	 * its busiest row, every tree picked weighted by how often. */
	for (uint32_t r = 0; r < c->R; r++)
		load[r] /= done;
	*ub = cg_objective_of(c, load);
	c->sol_n = 0;
	c->sol_live = xreallocarray(c->sol_live, c->ncols + 1, sizeof(uint32_t));
	c->sol = xreallocarray(c->sol, c->slots + c->ncols + 1, sizeof(double));
	for (uint32_t k = 0; k < c->slots; k++) {
		c->sol[k] = 0;
		for (uint32_t r = k * c->rows_per_slot; r < (k + 1) * c->rows_per_slot; r++)
			c->sol[k] = fmax(c->sol[k], load[r] / c->row_cap[r % c->rows_per_slot]);
	}
	for (size_t k = 0; k < c->ncols; k++)
		if (k < cap_picks && picks[k] > 0) {
			c->sol_live[c->sol_n] = (uint32_t)k;
			c->sol[c->slots + c->sol_n++] = picks[k] / done;
		}
	rc = 0;
out:
	free(picks);
	free(load);
	return rc;
}

/* Re-planning: start from a solution of a graph this one's arcs
 * are a subset of (a healthy fabric, this one less failed links) instead of
 * multiplicative weights. Its lengths, per arc, price every source here: a
 * Lagrangian bound at once (theta <= sum c_e l_e / sum dist_l(s, t), the
 * old optimum's duals being near-optimal lengths) and each source's
 * shortest-path tree around the lost arcs. Its trees, carried to this
 * graph's sources by its group, are columns wherever they avoid the lost
 * arcs; a source's weight on the trees that do not is moved to its new
 * tree, which is the first feasible flow (ub). Fluid, link rows only. */

#define LOST (UINT32_MAX - 2)

/* A tree that lost arcs, mended in place: each node cut off from the root
 * (its parent arc LOST) hangs from the in-neighbour still joined to the
 * root nearest it in hops, so the rest of the tree, and its balance, stays.
 * false when some node has no such neighbour (the caller takes the source's
 * new shortest-path tree instead). depth: n scratch. */
static bool repair_tree(const struct cg *c, uint32_t root, uint32_t *tree, uint32_t *depth)
{
	const struct graph *g = c->g;
	uint32_t n = c->n;

	for (bool progress = true; progress;) {
		bool lost = false;

		progress = false;
		/* Depth of every node still joined to the root (UINT32_MAX
		 * for the cut-off ones): walk up, memoised. */
		for (uint32_t v = 0; v < n; v++)
			depth[v] = v == root ? 0 : UINT32_MAX - 1;
		for (uint32_t v = 0; v < n; v++) {
			uint32_t x = v, hops = 0;

			while (depth[x] == UINT32_MAX - 1 && tree[x] != LOST) {
				x = c->arc_tail[tree[x]];
				hops++;
			}
			uint32_t base =
			    tree[x] == LOST && depth[x] == UINT32_MAX - 1 ? UINT32_MAX : depth[x];
			for (uint32_t y = v, k = hops; y != x; y = c->arc_tail[tree[y]], k--)
				depth[y] = base == UINT32_MAX ? UINT32_MAX : base + k;
			if (depth[x] == UINT32_MAX - 1)
				depth[x] = UINT32_MAX;
		}
		for (uint32_t a = 0; a < g->m; a++) {
			uint32_t x = c->arc_tail[a], v = g->adj[a];

			if (tree[v] != LOST)
				continue;
			lost = true;
			if (x == v || depth[x] == UINT32_MAX)
				continue;
			/* Hang v from the nearest joined in-neighbour. */
			uint32_t best = a;
			for (uint32_t b = a + 1; b < g->m; b++)
				if (g->adj[b] == v && c->arc_tail[b] != v &&
				    depth[c->arc_tail[b]] < depth[c->arc_tail[best]])
					best = b;
			tree[v] = best;
			progress = true;
			break;
		}
		if (!lost)
			return true;
	}
	return false;
}

/* The objective of the flow putting x[k] on column k (load: R scratch). */
static double warm_flow(struct cg *c, const double *x, size_t nx, double *load)
{
	struct cg_scratch *ws = &c->ws[0];

	memset(load, 0, c->R * sizeof(double));
	for (size_t k = 0; k < c->ncols && k < nx; k++) {
		uint32_t s = c->col_src[k];

		if (x[k] <= 0)
			continue;
		cg_tree_coefs(c, ws, s, c->col_parent + k * c->psize);
		for (uint32_t i = 0; i < ws->ntouched; i++) {
			uint32_t r = ws->touched[i];

			load[r] += x[k] * cg_coef(c, s, r, ws->cnt[r]);
			ws->cnt[r] = 0;
		}
	}
	return cg_objective_of(c, load);
}

/* Before the master (lp_solve takes seconds a solve on a degraded graph's
 * many classes, and does not finish one in 10 s on genkautz:1024,4 less
 * one arc): block-coordinate pairwise Frank-Wolfe on the warm flow
 * (Lacoste-Julien et al., ICML 2013; Lacoste-Julien and Jaggi, NIPS 2015).
 * The objective is a smooth maximum of the rows' loads over capacity
 * (log-sum-exp, sharpness beta relative to the busiest row), whose
 * gradient is a price per row. One class at a time moves weight from its
 * costliest tree under the prices so far to its shortest-path tree, as much
 * as a line search on the smooth maximum finds, and the prices follow at
 * once. Each class finds its own step (one common step for all, limited by
 * the class it suited least, stalled at 1.7% on genkautz:1024,4 less one
 * arc), and the pairwise step goes further than moving all of a class's
 * trees towards the new one (genkautz:256,4 less one arc: 249.19 against
 * 249.56); a tree that gives way entirely leaves the flow.
 * After each pass the prices are priced whole, one more Lagrangian bound
 * (while the maximum is still soft: POLISH_BETA_PRICED); a pass that gains
 * under 0.01% sharpens the maximum, and at the sharpest one that gains under
 * 0.0001% ends the polish, as do the gap and `until`. */
#define POLISH_BETA0	   16.0
#define POLISH_BETAMAX	   65536.0
#define POLISH_BETA_PRICED 1024.0

struct polish {
	uint32_t *ncol, **col; /* per class: its columns with weight */
	size_t *capcol;
	/* per class, per column in col: its hops per node (the arc into the
	 * node's row, the destinations below it), so that its cost under new
	 * prices is one pass (walking the tree for it was a third of the
	 * polish on genkautz:512,4 less one arc) */
	struct polish_hop ***hops;
	/* R each: the move's loads (the new tree less the one giving way), the
	 * same over capacity, the rows' exponentials, the rows it changes */
	double *dn, *delta, *e;
	uint32_t *sup;
};

struct polish_hop {
	uint32_t row;
	float hops;
};

/* Column k joins class s's flow; ws->sub holds its subtree sizes (from
 * cg_tree_coefs on it). */
static void polish_add(const struct cg *c, struct polish *p, uint32_t s, uint32_t k,
		       const struct cg_scratch *ws)
{
	const uint32_t *parent = c->col_parent + (size_t)k * c->psize;
	struct polish_hop *h;
	size_t cap = p->capcol[s];

	for (uint32_t i = 0; i < p->ncol[s]; i++)
		if (p->col[s][i] == k)
			return;
	GROW(p->col[s], p->capcol[s], (size_t)p->ncol[s] + 1);
	if (p->capcol[s] != cap)
		p->hops[s] = xreallocarray(p->hops[s], p->capcol[s], sizeof(*p->hops[s]));
	h = p->hops[s][p->ncol[s]] = xmalloc(c->n * sizeof(*h));
	for (uint32_t v = 0; v < c->n; v++) {
		h[v].row = parent[v] == NO_PARENT ? UINT32_MAX : c->arc_row[parent[v]];
		h[v].hops = h[v].row == UINT32_MAX ? 0 : (float)ws->sub[v];
	}
	p->col[s][p->ncol[s]++] = k;
}

/* Class s's i-th column leaves its flow. */
static void polish_drop(struct polish *p, uint32_t s, uint32_t i)
{
	free(p->hops[s][i]);
	p->ncol[s]--;
	p->col[s][i] = p->col[s][p->ncol[s]];
	p->hops[s][i] = p->hops[s][p->ncol[s]];
}

/* A fluid tree's cost under the per-arc prices ys: its hops over each
 * node's arc at that arc's price. */
static double polish_len(const struct cg *c, const struct polish_hop *h)
{
	double total = 0;

	for (uint32_t v = 0; v < c->n; v++)
		if (h[v].row != UINT32_MAX)
			total += h[v].hops * c->ys[h[v].row];
	return total;
}

/* The step in [0, 1] minimising log sum_r e_r exp(bb * t * delta_r) over the
 * rows sup (the rest do not move): the derivative has the sign of
 * N(t) = sum e_r delta_r exp(bb t delta_r), increasing in t; Newton's
 * method kept within a bracket, and the bracket's low end returned (the
 * smooth maximum falls all the way there). */
static double polish_slope(const struct polish *p, uint32_t nsup, double bb, double t, double *der)
{
	double num = 0;

	*der = 0;
	for (uint32_t i = 0; i < nsup; i++) {
		uint32_t r = p->sup[i];
		double v = p->e[r] * p->delta[r] * exp(fmin(bb * t * p->delta[r], 700));

		num += v;
		*der += v * bb * p->delta[r];
	}
	return num;
}

static double polish_step(const struct polish *p, uint32_t nsup, double bb)
{
	double lo = 0, hi = 1, t = 0, der, num = polish_slope(p, nsup, bb, 0, &der);

	if (num >= 0)
		return 0; /* no descent */
	if (polish_slope(p, nsup, bb, 1, &(double){0}) <= 0)
		return 1;
	for (int it = 0; it < 50 && hi - lo > 1e-9; it++) {
		double nt = der > 0 ? t - num / der : (lo + hi) / 2;

		t = nt > lo && nt < hi ? nt : (lo + hi) / 2;
		num = polish_slope(p, nsup, bb, t, &der);
		if (num < 0)
			lo = t;
		else
			hi = t;
	}
	return lo;
}

/* Row r's price at its load: the exponential of its excess over u0 at
 * sharpness bb, per unit of capacity (and of row size, ys). */
static void polish_price(struct cg *c, struct polish *p, uint32_t r, double load, double bb,
			 double u0)
{
	double cap = c->row_cap[r % c->rows_per_slot];

	p->e[r] = exp(bb * (load / cap - u0));
	c->y[r] = p->e[r] / cap;
	c->ys[r] = c->y[r] / c->row_size[r % c->rows_per_slot];
}

/* The class s's costliest tree under the prices that carries flow and
 * costs more than worst: its column (UINT32_MAX: none), *ai its place
 * among the class's. It gives way to the cheapest. */
static uint32_t polish_costliest(const struct cg *c, const struct polish *p, const double *x,
				 uint32_t s, double worst, uint32_t *ai)
{
	uint32_t away = UINT32_MAX;

	for (uint32_t i = 0; i < p->ncol[s]; i++) {
		uint32_t k = p->col[s][i];
		double len;

		if (x[k] <= 0)
			continue;
		len = polish_len(c, p->hops[s][i]);
		if (len > worst) {
			worst = len;
			away = k;
			*ai = i;
		}
	}
	return away;
}

static void polish_free(struct polish *p, uint32_t ns)
{
	for (uint32_t s = 0; s < ns; s++) {
		for (uint32_t i = 0; i < p->ncol[s]; i++)
			free(p->hops[s][i]);
		free(p->hops[s]);
		free(p->col[s]);
	}
	free(p->hops);
	free(p->col);
	free(p->ncol);
	free(p->capcol);
	free(p->dn);
	free(p->delta);
	free(p->e);
	free(p->sup);
}

static void warm_polish(struct cg *c, double **x, size_t *nx, double *load, double *lb,
			double **center, double gap, double until)
{
	struct cg_scratch *ws = &c->ws[0];
	uint32_t R = c->R, ns = c->nsrc;
	struct polish p = {
	    .ncol = xcalloc(ns, sizeof(uint32_t)),
	    .hops = xcalloc(ns, sizeof(struct polish_hop **)),
	    .capcol = xcalloc(ns, sizeof(size_t)),
	    .col = xcalloc(ns, sizeof(uint32_t *)),
	    .dn = xcalloc(R, sizeof(double)),
	    .delta = xmalloc(R * sizeof(double)),
	    .e = xmalloc(R * sizeof(double)),
	    .sup = xmalloc(R * sizeof(uint32_t)),
	};
	double u = cg_objective_of(c, load), beta = POLISH_BETA0;

	for (size_t k = 0; k < *nx && k < c->ncols; k++) {
		if ((*x)[k] <= 0)
			continue;
		cg_tree_coefs(c, ws, c->col_src[k], c->col_parent + k * c->psize);
		for (uint32_t i = 0; i < ws->ntouched; i++)
			ws->cnt[ws->touched[i]] = 0;
		polish_add(c, &p, c->col_src[k], (uint32_t)k, ws);
	}
	while (u - *lb > gap * u && now_seconds() < until && !mcf_cancelled(c->cancel)) {
		double u0 = u, bb = beta / u0;

		for (uint32_t r = 0; r < R; r++)
			polish_price(c, &p, r, load[r], bb, u0);
		for (uint32_t s = 0; s < ns && now_seconds() < until && !mcf_cancelled(c->cancel);
		     s++) {
			uint32_t *parent = c->cand + (size_t)s * c->psize, nsup = 0;

			double blen = cg_dijkstra(c, ws, c->src_node[s], parent);
			uint32_t ai = 0,
				 away = polish_costliest(c, &p, *x, s, blen * (1 + 1e-9), &ai);
			double mass;

			if (away == UINT32_MAX)
				continue;
			mass = (*x)[away];
			cg_tree_coefs(c, ws, s, c->col_parent + (size_t)away * c->psize);
			for (uint32_t i = 0; i < ws->ntouched; i++) {
				uint32_t r = ws->touched[i];

				p.dn[r] -= mass * cg_coef(c, s, r, ws->cnt[r]);
				ws->cnt[r] = 0;
			}
			cg_tree_coefs(c, ws, s, parent);
			for (uint32_t i = 0; i < ws->ntouched; i++) {
				uint32_t r = ws->touched[i];

				p.dn[r] += mass * cg_coef(c, s, r, ws->cnt[r]);
				ws->cnt[r] = 0;
			}
			for (uint32_t r = 0; r < R; r++) {
				double cap = c->row_cap[r % c->rows_per_slot];

				p.delta[r] = p.dn[r] / cap;
				p.dn[r] = 0;
				if (p.delta[r] != 0)
					p.sup[nsup++] = r;
			}
			double t = polish_step(&p, nsup, bb);
			if (t <= 0)
				continue;
			for (uint32_t i = 0; i < nsup; i++) {
				uint32_t r = p.sup[i];
				double cap = c->row_cap[r % c->rows_per_slot];

				load[r] += t * p.delta[r] * cap;
				polish_price(c, &p, r, load[r], bb, u0);
			}
			(*x)[away] = t >= 1 ? 0 : (*x)[away] - t * mass;
			if (t >= 1)
				polish_drop(&p, s, ai);
			uint32_t k = cg_store_tree(c, s, parent);
			if (c->ncols > *nx) {
				size_t grow = c->ncols > 2 * *nx ? c->ncols : 2 * *nx;

				*x = xreallocarray(*x, grow, sizeof(double));
				memset(*x + *nx, 0, (grow - *nx) * sizeof(double));
				*nx = grow;
			}
			(*x)[k] += t * mass;
			polish_add(c, &p, s, k, ws);
		}
		double nu = cg_objective_of(c, load);

		/* Sharper prices crowd onto a few rows and bound worse (measured
		 * on genkautz:256,4 and 1024,4 less one arc), so they are not
		 * priced: a quarter of a pass saved. */
		if (beta <= POLISH_BETA_PRICED) {
			double b = cg_price_all(c);

			if (b > *lb) {
				*lb = b;
				memcpy(*center, c->y, R * sizeof(double));
			}
		}
		if (u - nu < 1e-4 * u) {
			/* At the sharpest, until a pass gains under 1e-6. */
			if (beta >= POLISH_BETAMAX && u - nu < 1e-6 * u)
				break;
			beta = fmin(2 * beta, POLISH_BETAMAX);
		}
		u = nu;
	}
	polish_free(&p, ns);
}

int cg_warm_from(struct cg *c, double *lb, double **center, double *ub, double gap, double until,
		 double master_by, struct ofc_error *err)
{
	const struct mcf_warm *w = c->warm;
	uint32_t n = c->n, *map = mcf_warm_arc_map(c->g, w), *tree = xmalloc(n * sizeof(uint32_t));
	uint32_t *depth = xmalloc(n * sizeof(uint32_t));
	double *load = xcalloc(c->R, sizeof(double)), *picks = NULL, *alt = NULL;
	size_t cap_picks = 0, cap_alt = 0, alt_n = 0;
	int rc = -1;

	/* A row's price: its arcs' lengths (ys = the mean). */
	memset(c->y, 0, c->R * sizeof(double));
	for (uint32_t a = 0; a < w->m; a++)
		if (map[a] != UINT32_MAX && c->arc_row[map[a]] != UINT32_MAX)
			c->y[c->arc_row[map[a]]] += w->price[a];
	*lb = c->warm_bound = cg_price_all(c);
	*center = xmalloc(c->R * sizeof(double));
	memcpy(*center, c->y, c->R * sizeof(double));
	for (uint32_t s = 0; s < c->nsrc; s++) {
		uint32_t v = c->src_node[s], k = w->class_of[v], o = w->rep[k], images = 0;
		double kept = 0, broken = 0;

		for (uint32_t h = 0; h < w->order; h++)
			images += w->gnode[(size_t)h * n + o] == v;
		for (uint32_t h = 0; h < w->order; h++) {
			const uint32_t *hn = w->gnode + (size_t)h * n,
				       *ha = w->garc + (size_t)h * w->m;

			if (hn[o] != v)
				continue;
			for (uint32_t i = 0; i < w->ntrees; i++) {
				const uint32_t *p = w->parent + (size_t)i * n;
				bool whole = true;

				if (w->tree_class[i] != k)
					continue;
				for (uint32_t u = 0; u < n; u++) {
					uint32_t a = p[u] == NO_PARENT ? NO_PARENT : map[ha[p[u]]];

					if (p[u] != NO_PARENT && a == UINT32_MAX) {
						whole = false;
						a = LOST;
					}
					tree[hn[u]] = a;
				}
				if (!whole && !repair_tree(c, v, tree, depth))
					continue;
				if (!whole)
					broken += w->tree_w[i] / images;
				uint32_t col = cg_store_tree(c, s, tree);
				int added = cg_add_column(c, &c->ws[0], col, err);

				if (added < 0)
					goto out;
				c->warm_cols += (uint32_t)added;
				if (col >= cap_picks) {
					size_t old = cap_picks;

					GROW(picks, cap_picks, (size_t)col + 1);
					memset(picks + old, 0, (cap_picks - old) * sizeof(double));
				}
				picks[col] += w->tree_w[i] / images;
				kept += w->tree_w[i] / images;
				if (whole) {
					GROW(alt, cap_alt, (size_t)col + 1);
					while (alt_n < cap_alt)
						alt[alt_n++] = 0;
					alt[col] += w->tree_w[i] / images;
				}
			}
		}
		/* The rest of the source's unit on its tree under the lengths. */
		uint32_t col = cg_store_tree(c, s, c->cand + (size_t)s * c->psize);
		if (cg_add_column(c, &c->ws[0], col, err) < 0)
			goto out;
		if (col >= cap_picks) {
			size_t old = cap_picks;

			GROW(picks, cap_picks, (size_t)col + 1);
			memset(picks + old, 0, (cap_picks - old) * sizeof(double));
		}
		picks[col] += fmax(0, 1 - kept);
		GROW(alt, cap_alt, (size_t)col + 1);
		while (alt_n < cap_alt)
			alt[alt_n++] = 0;
		alt[col] += fmax(0, 1 - kept) + broken;
	}
	/* Two first flows: the mended trees, or the new tree in their stead
	 * (a mended tree moves a whole cut-off subtree onto one arc, which the
	 * new tree may spread better); the better one is the primal. */
	if (warm_flow(c, alt, alt_n, load) < warm_flow(c, picks, cap_picks, load)) {
		free(picks);
		picks = alt;
		cap_picks = alt_n;
		alt = NULL;
	}
	warm_flow(c, picks, cap_picks, load);
	warm_polish(c, &picks, &cap_picks, load, lb, center, gap, until);
	/* The heaviest trees of the flow so far go into the master too, if a
	 * master is to come (genkautz:1024,4 less one arc: 1.1-3.7 s to put
	 * them, and no master finishes there in the time). */
	for (size_t k = 0; k < c->ncols && k < cap_picks && now_seconds() < master_by &&
			   !mcf_cancelled(c->cancel);
	     k++)
		if (picks[k] >= 0.05 && cg_add_column(c, &c->ws[0], (uint32_t)k, err) < 0)
			goto out;
	/* That flow as the primal so far. */
	c->sol_n = 0;
	c->sol_live = xreallocarray(c->sol_live, c->ncols + 1, sizeof(uint32_t));
	c->sol = xreallocarray(c->sol, c->slots + c->ncols + 1, sizeof(double));
	for (size_t k = 0; k < c->ncols && k < cap_picks; k++)
		if (picks[k] > 0) {
			c->sol_live[c->sol_n] = (uint32_t)k;
			c->sol[c->slots + c->sol_n++] = picks[k];
		}
	*ub = c->sol[0] = warm_flow(c, picks, cap_picks, load);
	rc = 0;
out:
	free(alt);
	free(map);
	free(tree);
	free(depth);
	free(load);
	free(picks);
	return rc;
}

/* A cold start of many classes (a demand matrix over 1,024 hosts
 * alike under no symmetry, 1,024 sources): lp_solve does not finish the
 * first master in minutes, so the multiplicative-weights flow is polished
 * first, as a warm start's is (warm_polish), until `until`; the master
 * goes on from its heaviest trees if time is left. Fluid, link rows only,
 * demand matrices only (the uniform all-to-all's cold starts are as they
 * were). */
int cg_cold_polish(struct cg *c, double *lb, double **center, double *ub, double gap, double until,
		   struct ofc_error *err)
{
	size_t nx = c->ncols;
	double *x = xcalloc(nx + 1, sizeof(double)), *load = xcalloc(c->R, sizeof(double));
	int rc = -1;

	for (size_t i = 0; i < c->sol_n; i++)
		x[c->sol_live[i]] += c->sol[c->slots + i];
	if (!*center) {
		*center = xmalloc(c->R * sizeof(double));
		memcpy(*center, c->y, c->R * sizeof(double));
	}
	warm_flow(c, x, nx, load);
	warm_polish(c, &x, &nx, load, lb, center, gap, until);
	for (size_t k = 0; k < c->ncols && k < nx; k++)
		if (x[k] >= 0.05 && cg_add_column(c, &c->ws[0], (uint32_t)k, err) < 0)
			goto out;
	double u = warm_flow(c, x, nx, load);
	if (u < *ub) {
		*ub = u;
		c->sol_n = 0;
		c->sol_live = xreallocarray(c->sol_live, c->ncols + 1, sizeof(uint32_t));
		c->sol = xreallocarray(c->sol, c->slots + c->ncols + 1, sizeof(double));
		c->sol[0] = u;
		for (size_t k = 0; k < c->ncols && k < nx; k++)
			if (x[k] > 0) {
				c->sol_live[c->sol_n] = (uint32_t)k;
				c->sol[c->slots + c->sol_n++] = x[k];
			}
	}
	rc = 0;
out:
	free(x);
	free(load);
	return rc;
}

/* The kept solution and the best bound's lengths as a warm start for
 * another graph (fluid, link rows only). Symmetric: one class, the
 * translations (arcs by port); mirrored: the group; plain: each node its
 * own class under the identity. */
struct mcf_warm *cg_warm_export(const struct cg *c, const uint32_t *perm)
{
	const struct graph *g = c->g;
	uint32_t n = c->n, m = g->m;
	struct mcf_warm *w = xcalloc(1, sizeof(*w));
	double *sum = xcalloc(c->nsrc, sizeof(double));
	const double *x = c->sol + c->slots;

	w->n = n;
	w->m = m;
	w->objective = c->sol[0];
	w->off = xmalloc(((size_t)n + 1) * sizeof(uint32_t));
	w->head = xmalloc(((size_t)m + 1) * sizeof(uint32_t));
	memcpy(w->off, g->off, ((size_t)n + 1) * sizeof(uint32_t));
	memcpy(w->head, g->adj, (size_t)m * sizeof(uint32_t));
	w->nclass = c->nsrc;
	w->class_of = xmalloc(n * sizeof(uint32_t));
	w->rep = xmalloc(c->nsrc * sizeof(uint32_t));
	memcpy(w->rep, c->src_node, c->nsrc * sizeof(uint32_t));
	w->order = c->method == MCF_SYMMETRIC ? n : c->method == MCF_MIRRORED ? c->grp->order : 1;
	w->gnode = xmalloc((size_t)w->order * n * sizeof(uint32_t));
	w->garc = xmalloc((size_t)w->order * m * sizeof(uint32_t) + 1);
	for (uint32_t v = 0; v < n; v++)
		w->class_of[v] = c->method == MCF_SYMMETRIC  ? 0
				 : c->method == MCF_MIRRORED ? c->grp->orbit[v]
							     : v;
	if (c->method == MCF_MIRRORED) {
		memcpy(w->gnode, c->grp->node, (size_t)w->order * n * sizeof(uint32_t));
		memcpy(w->garc, c->grp->arc, (size_t)w->order * m * sizeof(uint32_t));
	} else if (c->method == MCF_SYMMETRIC) {
		memcpy(w->gnode, perm, (size_t)n * n * sizeof(uint32_t));
		for (uint32_t h = 0; h < n; h++)
			for (uint32_t a = 0; a < m; a++) {
				uint32_t u = c->arc_tail[a], hu = perm[(size_t)h * n + u];

				w->garc[(size_t)h * m + a] = g->off[hu] + (a - g->off[u]);
			}
	} else {
		for (uint32_t u = 0; u < n; u++)
			w->gnode[u] = u;
		for (uint32_t a = 0; a < m; a++)
			w->garc[a] = a;
	}
	for (size_t i = 0; i < c->sol_n; i++)
		sum[c->col_src[c->sol_live[i]]] += x[i];
	w->tree_class = xmalloc((c->sol_n + 1) * sizeof(uint32_t));
	w->tree_w = xmalloc((c->sol_n + 1) * sizeof(double));
	w->parent = xmalloc((c->sol_n + 1) * n * sizeof(uint32_t));
	for (size_t i = 0; i < c->sol_n; i++) {
		uint32_t k = c->sol_live[i], s = c->col_src[k];

		if (x[i] <= 1e-12 * sum[s])
			continue;
		w->tree_class[w->ntrees] = s;
		w->tree_w[w->ntrees] = x[i] / sum[s];
		memcpy(w->parent + (size_t)w->ntrees * n, c->col_parent + (size_t)k * c->psize,
		       n * sizeof(uint32_t));
		w->ntrees++;
	}
	w->price = xcalloc((size_t)m + 1, sizeof(double));
	for (uint32_t a = 0; c->best_y && a < m; a++)
		if (c->arc_row[a] != UINT32_MAX)
			w->price[a] = c->best_y[c->arc_row[a]] / c->row_size[c->arc_row[a]];
	free(sum);
	return w;
}

size_t mcf_warm_bytes(const struct mcf_warm *w)
{
	if (!w)
		return 0;
	return sizeof(*w) + ((size_t)w->n + 1 + w->m + 1 + w->n + w->nclass) * sizeof(uint32_t) +
	       (size_t)w->order * ((size_t)w->n + w->m) * sizeof(uint32_t) +
	       (size_t)w->ntrees * ((size_t)w->n + 1) * sizeof(uint32_t) +
	       (size_t)w->ntrees * sizeof(double) + ((size_t)w->m + 1) * sizeof(double);
}

bool mcf_warm_fits(const struct mcf_warm *w, const struct graph *g)
{
	return w && g && w->n == g->n && w->m == g->m &&
	       memcmp(w->off, g->off, ((size_t)g->n + 1) * sizeof(uint32_t)) == 0 &&
	       memcmp(w->head, g->adj, (size_t)g->m * sizeof(uint32_t)) == 0;
}

void mcf_warm_free(struct mcf_warm *w)
{
	if (!w)
		return;
	free(w->off);
	free(w->head);
	free(w->class_of);
	free(w->rep);
	free(w->gnode);
	free(w->garc);
	free(w->tree_class);
	free(w->parent);
	free(w->tree_w);
	free(w->price);
	free(w);
}
