/* Dantzig-Wolfe on LP 4.2 and the mirrored master (notes Sec. 4).
 *
 * Only the capacity rows tie origins together, so each origin's block is a
 * pricing problem (pricing.c) and the master mixes their columns. Mirrored
 * (Sec. 4.2-4.3): with a group H of automorphisms, an optimal solution that
 * H leaves unchanged exists (Theorem 7, by averaging), so one
 * representative o_k per orbit of origins is priced and its columns stand
 * for the whole orbit: origin h(o_k) uses the column moved by h, averaged
 * over the |Stab(o_k)| elements that take o_k there. Corrections used
 * (notes Sec. 4.3, [R]): the objective counts each class |P_k| times; the
 * load an origin h(o_k) puts on arc e is w[h^-1(e)] (here as a sum over the
 * whole group, which also makes every capacity row of one H-orbit carry the
 * same load, so the master keeps one row per orbit of capacities); the
 * pricing cost of arc e is
 *
 *     ĉ_e = [phase 2] |P_k| c_e + (1/|Stab|) sum_{h in H} Y[h(e)],
 *     Y[e'] = sum of -y over the representative rows containing e'.
 *
 * Plain DW is the same code with the trivial group (a class per origin, a
 * row per capacity). Each iteration certifies a Lagrangian bound
 * z_RMP + sum_k min(0, z_k - sigma_k); the loop stops at the relative gap
 * opts.gap or the time limit. Phase 1 minimises R, phase 2 the cost at
 * R*(1 + slack). All-to-all columns are single paths with a convexity row
 * per (class, destination). */
#include "fluid/internal.h"

#include <stdlib.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <string.h>

struct column {
	uint32_t cls;
	uint32_t dest; /* all-to-all: the destination's index among the class's */
	double cost;   /* |P_k| times the column's cost */
	uint32_t *rows;
	double *vals;
	uint32_t nrows;
	/* its usage in G^T, for the routing */
	uint32_t *arcs;
	double *w;
	uint32_t narcs;
	bool tree; /* an actual tree (or path): schedulable as it is */
};

struct dw {
	const struct problem *p;
	const struct texp *x;
	enum lp_solver master_solver; /* the last master's */
	uint32_t order;		      /* |H| */
	const uint32_t *harc;	      /* order * ne arc maps */
	uint32_t *identity;
	uint32_t ncls, *rep, *orbit_size;
	uint32_t *cls_of; /* per origin index: class */
	uint32_t nrows;	  /* capacity rows (one per orbit of capacities) */
	uint32_t *row_cap;
	int32_t *cap_row; /* per capacity: its row if it is a representative */
	/* Per arc e, the images h(e) (the elements in order) in a capacity
	 * that has a row: of the group's sums over h (pricing_costs,
	 * column_coefs) the only terms that may not be zero. At 1,024 GPUs of
	 * model W, 9 of each arc's 1,024. held[held_off[e] ..] */
	uint32_t *held_off, *held;
	uint32_t nconv;	      /* convexity rows */
	uint32_t *conv_first; /* per class: its first convexity row */
	struct pricer *pr;
	struct column *cols;
	size_t ncols, cap_cols;
	double *u, *coef, *y, *Y, *chat, *wbuf, *wbuf2, *disc;
	uint32_t *touched;
	uint32_t *patharcs, *pathlen;
	double *pathcost;
	double rfix;
	bool trees_only; /* the master over actual trees alone */
	bool stalled;	 /* a cut LP stalled: some bound was not computed */
};

/* The row coefficients of a usage u (per physical arc, summed over layers)
 * of class k: (1/|Stab|) sum_h sum_{e: h(e) in L_r} u_e, over the images
 * that lie in a row's capacity (held), in the elements' order. */
static void column_coefs(struct dw *d, uint32_t k, const double *u, const uint32_t *supp,
			 uint32_t nsupp, struct column *c)
{
	const struct problem *p = d->p;
	uint32_t nt = 0;
	double inv = (double)d->orbit_size[k] / d->order;

	for (uint32_t i = 0; i < nsupp; i++) {
		uint32_t e = supp[i];

		for (uint32_t h = d->held_off[e]; h < d->held_off[e + 1]; h++) {
			uint32_t e2 = d->held[h];

			for (uint32_t j = p->arc_cap_off[e2]; j < p->arc_cap_off[e2 + 1]; j++) {
				int32_t r = d->cap_row[p->arc_caps[j]];

				if (r < 0)
					continue;
				if (d->coef[r] == 0)
					d->touched[nt++] = (uint32_t)r;
				d->coef[r] += u[e] * inv;
			}
		}
	}
	c->rows = xmalloc((nt + 1) * sizeof(uint32_t));
	c->vals = xmalloc((nt + 1) * sizeof(double));
	c->nrows = 0;
	for (uint32_t i = 0; i < nt; i++) {
		uint32_t r = d->touched[i];

		if (d->coef[r] != 0) {
			c->rows[c->nrows] = r;
			c->vals[c->nrows++] = d->coef[r];
		}
		d->coef[r] = 0;
	}
}

static struct column *new_column(struct dw *d)
{
	GROW(d->cols, d->cap_cols, d->ncols + 1);
	memset(&d->cols[d->ncols], 0, sizeof(struct column));
	return &d->cols[d->ncols++];
}

/* A column of class k from a G^T usage (copy collectives). */
static void add_tree_column(struct dw *d, uint32_t k, const double *w, bool tree)
{
	const struct texp *x = d->x;
	uint32_t na = tx_narcs(x), ne = x->ne, ns = 0, nw = 0;
	uint32_t *supp = xmalloc((ne + 1) * sizeof(uint32_t));
	struct column *c = new_column(d);
	double cost = 0;

	c->cls = k;
	c->tree = tree;
	for (uint32_t a = 0; a < na; a++) {
		if (w[a] <= 1e-12)
			continue;
		nw++;
		uint32_t e = tx_phys(x, a);

		if (e == UINT32_MAX)
			continue;
		if (d->u[e] == 0)
			supp[ns++] = e;
		d->u[e] += w[a];
	}
	c->arcs = xmalloc((nw + 1) * sizeof(uint32_t));
	c->w = xmalloc((nw + 1) * sizeof(double));
	for (uint32_t a = 0; a < na; a++)
		if (w[a] > 1e-12) {
			c->arcs[c->narcs] = a;
			c->w[c->narcs++] = w[a];
		}
	column_coefs(d, k, d->u, supp, ns, c);
	for (uint32_t i = 0; i < ns; i++) {
		cost += d->p->net->cost[supp[i]] * d->u[supp[i]];
		d->u[supp[i]] = 0;
	}
	c->cost = cost * d->orbit_size[k];
	free(supp);
}

/* A path column of class k to its j-th destination (all-to-all). */
static void add_path_column(struct dw *d, uint32_t k, uint32_t j, const uint32_t *path,
			    uint32_t len)
{
	const struct texp *x = d->x;
	uint32_t supp[64] = {0}, ns = 0, *big = NULL, *s = supp;
	struct column *c = new_column(d);
	double cost = 0;

	if (len > 64)
		s = big = xmalloc(len * sizeof(uint32_t));
	c->cls = k;
	c->dest = j;
	c->tree = true;
	c->arcs = xmalloc((len + 1) * sizeof(uint32_t));
	c->w = xmalloc((len + 1) * sizeof(double));
	for (uint32_t i = 0; i < len; i++) {
		c->arcs[c->narcs] = path[i];
		c->w[c->narcs++] = 1;
		uint32_t e = tx_phys(x, path[i]);

		if (e == UINT32_MAX)
			continue;
		if (d->u[e] == 0)
			s[ns++] = e;
		d->u[e] += 1;
	}
	column_coefs(d, k, d->u, s, ns, c);
	for (uint32_t i = 0; i < ns; i++) {
		cost += d->p->net->cost[s[i]] * d->u[s[i]];
		d->u[s[i]] = 0;
	}
	c->cost = cost * d->orbit_size[k];
	free(big);
}

static void column_free(struct column *c)
{
	free(c->rows);
	free(c->vals);
	free(c->arcs);
	free(c->w);
}

/* Classes: orbits of origins under H; rows: orbits of capacities. */
/* d->held: the images of each arc in a capacity with a row, element by
 * element (the maps read in their layout), then grouped by arc keeping
 * the elements' order. */
static void dw_held(struct dw *d)
{
	const struct problem *p = d->p;
	uint32_t ne = p->net->narcs, n = 0, cap = 1024;
	uint8_t *rowed = xcalloc(ne + 1, 1);
	uint32_t *pe = xmalloc(cap * sizeof(uint32_t)), *pimg = xmalloc(cap * sizeof(uint32_t));

	for (uint32_t e = 0; e < ne; e++)
		for (uint32_t j = p->arc_cap_off[e]; j < p->arc_cap_off[e + 1]; j++)
			rowed[e] |= d->cap_row[p->arc_caps[j]] >= 0;
	d->held_off = xcalloc(ne + 2, sizeof(uint32_t));
	for (uint32_t h = 0; h < d->order; h++) {
		const uint32_t *hm = d->harc + (size_t)h * ne;

		for (uint32_t e = 0; e < ne; e++) {
			if (!rowed[hm[e]])
				continue;
			if (n == cap) {
				cap *= 2;
				pe = xreallocarray(pe, cap, sizeof(uint32_t));
				pimg = xreallocarray(pimg, cap, sizeof(uint32_t));
			}
			pe[n] = e;
			pimg[n++] = hm[e];
			d->held_off[e + 2]++;
		}
	}
	for (uint32_t e = 0; e < ne; e++)
		d->held_off[e + 2] += d->held_off[e + 1];
	d->held = xmalloc(((size_t)n + 1) * sizeof(uint32_t));
	for (uint32_t i = 0; i < n; i++)
		d->held[d->held_off[pe[i] + 1]++] = pimg[i];
	free(rowed);
	free(pe);
	free(pimg);
}

static int dw_setup(struct dw *d, const struct fluid_group *g, struct ofc_error *err)
{
	const struct problem *p = d->p;
	const struct fluid_net *n = p->net;
	uint32_t ne = n->narcs, nv = n->nverts;

	if (g) {
		d->order = g->order;
		d->harc = g->arc;
	} else {
		d->order = 1;
		d->identity = xmalloc((ne + 1) * sizeof(uint32_t));
		for (uint32_t e = 0; e < ne; e++)
			d->identity[e] = e;
		d->harc = d->identity;
	}
	d->rep = xmalloc((p->norig + 1) * sizeof(uint32_t));
	d->orbit_size = xcalloc(p->norig + 1, sizeof(uint32_t));
	d->cls_of = xmalloc((p->norig + 1) * sizeof(uint32_t));
	int32_t *idx = xmalloc((nv + 1) * sizeof(int32_t));

	for (uint32_t v = 0; v < nv; v++)
		idx[v] = -1;
	for (uint32_t i = 0; i < p->norig; i++)
		idx[p->orig[i]] = (int32_t)i;
	for (uint32_t i = 0; i < p->norig; i++)
		d->cls_of[i] = UINT32_MAX;
	for (uint32_t i = 0; i < p->norig; i++) {
		if (d->cls_of[i] != UINT32_MAX)
			continue;
		uint32_t k = d->ncls++;

		d->rep[k] = p->orig[i];
		for (uint32_t h = 0; h < d->order; h++) {
			uint32_t img = g ? g->vert[(size_t)h * nv + p->orig[i]] : p->orig[i];

			if (idx[img] < 0) {
				free(idx);
				return ofc_error_set(
				    err, OFC_E_INPUT,
				    "the group takes origin '%s' to '%s', which is "
				    "not an origin",
				    fluid_vertex_name(n, p->orig[i]), fluid_vertex_name(n, img));
			}
			if (d->cls_of[idx[img]] == UINT32_MAX) {
				d->cls_of[idx[img]] = k;
				d->orbit_size[k]++;
			}
		}
	}
	free(idx);
	/* Capacity orbits: the image of capacity c under h is the capacity of
	 * arc h(a) (per-arc ones) or set h(s). */
	uint32_t narc_caps = p->ncaps - n->nsets,
		 *cap_of_arc = xmalloc((ne + 1) * sizeof(uint32_t));

	for (uint32_t e = 0; e < ne; e++)
		cap_of_arc[e] = UINT32_MAX;
	for (uint32_t c = 0; c < narc_caps; c++)
		cap_of_arc[p->cap_arc[p->cap_off[c]]] = c;
	d->cap_row = xmalloc((p->ncaps + 1) * sizeof(int32_t));
	d->row_cap = xmalloc((p->ncaps + 1) * sizeof(uint32_t));
	uint8_t *seen = xcalloc(p->ncaps + 1, 1);

	for (uint32_t c = 0; c < p->ncaps; c++) {
		d->cap_row[c] = -1;
		if (seen[c])
			continue;
		d->cap_row[c] = (int32_t)d->nrows;
		d->row_cap[d->nrows++] = c;
		for (uint32_t h = 0; h < d->order; h++) {
			uint32_t img;

			if (c < narc_caps)
				img =
				    cap_of_arc[d->harc[(size_t)h * ne + p->cap_arc[p->cap_off[c]]]];
			else
				img = narc_caps + g->set[(size_t)h * n->nsets + (c - narc_caps)];
			if (img < p->ncaps)
				seen[img] = 1;
		}
	}
	free(seen);
	free(cap_of_arc);
	dw_held(d);
	return 0;
}

/* Build and solve the restricted master; duals into d->y (rows, then
 * convexity). Returns the objective or NAN on failure. */
static double solve_master(struct dw *d, bool phase2, double *lambda, struct ofc_error *err)
{
	const struct problem *p = d->p;
	uint32_t nr = d->nrows + d->nconv;
	enum lp_solver sv = fluid_lp_solver(p, FLUID_LP_MASTER, false, nr);
	struct lp *lp = lp_new_known(0, sv);

	d->master_solver = sv;
	double z = NAN;

	lp_set_scaling(lp, LP_SCALE_GEOMETRIC);
	for (uint32_t r = 0; r < d->nrows; r++)
		lp_add_row(lp, 0, NULL, NULL, LP_LE,
			   phase2 ? d->rfix * p->cap_bw[d->row_cap[r]] : 0);
	for (uint32_t r = 0; r < d->nconv; r++)
		lp_add_row(lp, 0, NULL, NULL, LP_EQ, 1);
	int *rows = xmalloc((nr + 1) * sizeof(int));
	double *vals = xmalloc((nr + 1) * sizeof(double));

	if (!phase2) {
		for (uint32_t r = 0; r < d->nrows; r++) {
			rows[r] = (int)r;
			vals[r] = -p->cap_bw[d->row_cap[r]];
		}
		lp_add_col(lp, 1, (int)d->nrows, rows, vals);
	}
	uint32_t *colmap = xmalloc((d->ncols + 1) * sizeof(uint32_t)), nused = 0;

	for (size_t j = 0; j < d->ncols; j++) {
		const struct column *c = &d->cols[j];
		uint32_t m = 0;

		if (d->trees_only && !c->tree)
			continue;
		colmap[nused++] = (uint32_t)j;
		for (uint32_t i = 0; i < c->nrows; i++) {
			rows[m] = (int)c->rows[i];
			vals[m++] = c->vals[i];
		}
		rows[m] = (int)(d->nrows + d->conv_first[c->cls] + c->dest);
		vals[m++] = 1;
		lp_add_col(lp, phase2 ? c->cost : 0, (int)m, rows, vals);
	}
	free(rows);
	free(vals);
	if (p->deadline > 0)
		lp_set_time_limit(lp, p->deadline - now_seconds() > 1 ? p->deadline - now_seconds()
								      : 1);
	enum lp_result res = lp_solve(lp, err);

	if (res != LP_OPTIMAL) {
		if (res != LP_FAILED)
			ofc_error_set(err, OFC_E_RUNTIME, "the DW master stopped: %s",
				      lp_result_str(res));
		lp_free(lp);
		free(colmap);
		return NAN;
	}
	z = lp_objective(lp);
	lp_duals(lp, d->y);
	if (lambda) {
		double *xs = xmalloc(((size_t)lp_ncols(lp) + 1) * sizeof(double));

		lp_solution(lp, xs);
		memset(lambda, 0, d->ncols * sizeof(double));
		for (uint32_t i = 0; i < nused; i++)
			lambda[colmap[i]] = xs[i + (phase2 ? 0 : 1)];
		free(xs);
	}
	lp_free(lp);
	free(colmap);
	return z;
}

/* Pricing costs of class k from the duals. */
static void pricing_costs(struct dw *d, uint32_t k, bool phase2)
{
	const struct problem *p = d->p;
	uint32_t ne = d->x->ne;
	double inv = (double)d->orbit_size[k] / d->order;

	for (uint32_t e = 0; e < ne; e++) {
		double s = 0;

		for (uint32_t j = p->arc_cap_off[e]; j < p->arc_cap_off[e + 1]; j++) {
			int32_t r = d->cap_row[p->arc_caps[j]];

			if (r >= 0)
				s -= d->y[r];
		}
		d->Y[e] = s > 0 ? s : 0; /* duals of <= rows of a min problem are <= 0 */
	}
	/* Each arc's sum over the elements, in the elements' order (so the
	 * same doubles as over every element): Y is 0 off the rows'
	 * capacities, so the images held are its only terms. */
	for (uint32_t e = 0; e < ne; e++) {
		double s = 0;

		for (uint32_t h = d->held_off[e]; h < d->held_off[e + 1]; h++)
			s += d->Y[d->held[h]];
		d->chat[e] = s * inv + (phase2 ? d->orbit_size[k] * p->net->cost[e] : 0);
	}
}

/* One class's pricing by actual trees (copy) or shortest paths
 * (all-to-all): adds the improving columns. For all-to-all the pricing is
 * exact, so *lag gets the class's sum of min(0, reduced cost) for the
 * bound. */
static int price_class(struct dw *d, uint32_t k, bool phase2, double tol, uint32_t *added,
		       double *lag)
{
	const struct problem *p = d->p;

	pricing_costs(d, k, phase2);
	*lag = 0;
	if (p->copy) {
		double v, sigma = d->y[d->nrows + d->conv_first[k]];

		pricer_honest(&d->pr[k], d->chat, NULL, d->wbuf, &v);
		if (!isinf(v) && v - sigma < -tol) {
			add_tree_column(d, k, d->wbuf, true);
			(*added)++;
		}
		return 0;
	}
	struct pricer *pr = &d->pr[k];

	pricer_paths(pr, d->chat, d->patharcs, d->pathlen, d->pathcost);
	for (uint32_t j = 0; j < pr->ndest; j++) {
		double rc = d->pathcost[j] - d->y[d->nrows + d->conv_first[k] + j];

		if (rc < 0)
			*lag += rc;
		if (rc < -tol) {
			add_path_column(d, k, j, d->patharcs + (size_t)j * d->x->T, d->pathlen[j]);
			(*added)++;
		}
	}
	return 0;
}

/* The trees inside a usage w (decomp.c) as columns of class k, those that
 * improve the master. The cut LP's optimum often is a mix of trees even
 * where the greedy tree misses them. */
static uint32_t tree_columns(struct dw *d, uint32_t k, const double *w, double sigma, double tol)
{
	const struct problem *p = d->p;
	const struct texp *x = d->x;
	struct pricer *pr = &d->pr[k];
	uint32_t na = tx_narcs(x), added = 0;
	struct origin_flow of = {.origin = d->rep[k], .dest = pr->dest, .ndest = pr->ndest};
	struct fluid_routing tmp = {0};
	double deficit = 0;

	of.w = xmalloc(((size_t)na + 1) * sizeof(double));
	memcpy(of.w, w, (size_t)na * sizeof(double));
	flows_in_usage(p, x, &of);
	decompose_origin(p, x, &of, 1.0, &tmp, &deficit);
	double *tw = xcalloc((size_t)na + 1, sizeof(double));

	uint8_t *got = xcalloc(x->nv + 1, 1);

	for (size_t i = 0; i < tmp.npieces; i++) {
		const struct fluid_piece *q = &tmp.pieces[i];
		double v = 0;
		bool twice = false;

		if (q->target != UINT32_MAX)
			continue; /* a path to one destination is no column */
		/* A tree of the decomposition may bring the data twice to a
		 * vertex that keeps it (two paths that merge): harmless waste
		 * in a broadcast, but its reverse folds that vertex's partial
		 * sum in twice; and the reverse of two paths through a vertex
		 * that stores but cannot fold (memory in a reduction) holds two
		 * partial sums of one part there when they are there at once.
		 * pricer_honest's trees never do either; a decomposed tree that
		 * crosses such a vertex twice, at any layers, is dropped (a
		 * column fewer, never a wrong one). */
		for (uint32_t h = 0; h < q->nhops; h++) {
			uint32_t hv = p->net->head[tmp.hop_arc[q->first + h]];

			if ((p->net->kind[hv] & (FLUID_CAN_COPY | FLUID_CAN_STORE)) ||
			    !p->conserve[hv] || hv == d->rep[k])
				twice |= got[hv]++ > 0 || hv == d->rep[k];
		}
		for (uint32_t h = 0; h < q->nhops; h++)
			got[p->net->head[tmp.hop_arc[q->first + h]]] = 0;
		if (twice)
			continue;
		for (uint32_t h = 0; h < q->nhops; h++) {
			uint32_t e = tmp.hop_arc[q->first + h];

			tw[tmp.hop_layer[q->first + h] * x->ne + e] += 1;
			v += d->chat[e];
		}
		if (v - sigma < -tol) {
			add_tree_column(d, k, tw, true);
			added++;
		}
		for (uint32_t h = 0; h < q->nhops; h++)
			tw[tmp.hop_layer[q->first + h] * x->ne + tmp.hop_arc[q->first + h]] = 0;
	}
	free(tw);
	free(got);
	origin_flow_drop(&of);
	free(of.w);
	free(tmp.pieces);
	free(tmp.hop_arc);
	free(tmp.hop_layer);
	return added;
}

/* The Lagrangian bound of copy collectives: the cut LP (the relaxation the
 * thesis solves, LP 5.1 with (3.12)) prices every class exactly. Returns
 * the sum of min(0, reduced cost), -INFINITY when a class's cut LP stalled
 * (no bound this iteration; d->stalled), or NAN (err); the trees in the
 * LP's solutions that improve the master are added (*added). */
static double lp_bound(struct dw *d, bool phase2, double tol, uint32_t *added,
		       struct ofc_error *err)
{
	double lag = 0;
	bool stalled = false;

	for (uint32_t k = 0; k < d->ncls; k++) {
		double v, lb, sigma = d->y[d->nrows + d->conv_first[k]];

		pricing_costs(d, k, phase2);
		d->pr[k].warm = d->trees_only;
		int prc = pricer_tree(&d->pr[k], d->chat, sigma, d->wbuf, &v, &lb, err);

		if (prc == -2) {
			/* no bound this time: the trees go on alone */
			d->stalled = true;
			stalled = true;
			memset(err, 0, sizeof(*err));
			continue;
		}
		if (prc < 0)
			return NAN;
		if (lb - sigma < 0)
			lag += lb - sigma;
		if (v - sigma < -tol && !d->trees_only) {
			/* the relaxation: the LP's column itself */
			add_tree_column(d, k, d->wbuf, false);
			(*added)++;
		} else if (v - sigma < -tol) {
			uint32_t got = tree_columns(d, k, d->wbuf, sigma, tol);

			/* No tree inside the LP's usage improves: trees steered
			 * towards the arcs it uses, cheaper the more it uses them. */
			for (int s = 0; s < 3 && !got; s++) {
				static const double strength[] = {0.5, 0.9, 0.99};
				uint32_t na = tx_narcs(d->x);
				double hv;

				for (uint32_t a = 0; a < na; a++)
					d->disc[a] =
					    1 - strength[s] * (d->wbuf[a] < 1 ? d->wbuf[a] : 1);
				pricer_honest(&d->pr[k], d->chat, d->disc, d->wbuf2, &hv);
				if (!isinf(hv) && hv - sigma < -tol) {
					add_tree_column(d, k, d->wbuf2, true);
					got++;
				}
			}
			*added += got;
		}
	}
	return stalled ? -INFINITY : lag;
}

/* Run column generation for one phase. Columns come from actual trees
 * while they improve the master; when none does, the cut LP bounds the
 * relaxation: equal (within the gap) proves the trees optimal for LP 4.2
 * itself. Returns 0, or -1 (err). */
static bool gap_closed(const struct problem *p, double z, double lb)
{
	return z - lb <= p->gap * (fabs(z) > 1e-12 ? fabs(z) : 1e-12);
}

/* lb: a bound known before (the relaxation's value when realising trees),
 * or -INFINITY. */
static int run_phase(struct dw *d, bool phase2, double lb, double *zout, double *lbout,
		     uint32_t *iters, bool *timed_out, struct ofc_error *err)
{
	const struct problem *p = d->p;
	double z = NAN;

	*timed_out = false;
	for (uint32_t it = 0;; it++) {
		z = solve_master(d, phase2, NULL, err);
		if (isnan(z))
			return -1;
		double tol = 1e-9 * (fabs(z) > 1 ? fabs(z) : 1), lag = 0;
		uint32_t added = 0;

		for (uint32_t k = 0; k < d->ncls; k++) {
			double l;

			if (price_class(d, k, phase2, tol, &added, &l) < 0)
				return -1;
			lag += l;
		}
		if (!p->copy) {
			if (z + lag > lb)
				lb = z + lag;
		} else if ((!added || !d->trees_only) && !(d->trees_only && gap_closed(p, z, lb))) {
			/* (trees that meet the relaxation's value need no new
			 * bound: the cut LP is where lp_solve can stall) */
			lag = lp_bound(d, phase2, tol, &added, err);
			if (isnan(lag))
				return -1;
			if (z + lag > lb)
				lb = z + lag;
		}
		*iters = it + 1;
		report_progress(p, phase2 ? "phase 2" : "phase 1", d->x->T, it + 1, z, lb,
				d->ncols);
		if (!added || gap_closed(p, z, lb))
			break;
		if (past_deadline(p) || (phase2 && p->opts && p->opts->phase2_iterations &&
					 it + 1 >= p->opts->phase2_iterations)) {
			*timed_out = true;
			break;
		}
	}
	*zout = z;
	*lbout = lb < z ? lb : z;
	return 0;
}

/* Destinations a worker takes at a time in flows_in_usage. */
#define USAGE_GRAIN 4

/* flows_in_usage's destinations on the request's threads: each worker a
 * view of one max flow (worker 0 the max flow itself). */
struct usage_flows {
	const struct texp *x;
	struct maxflow *mf; /* nworkers: [0] the graph's, views after it */
	struct origin_flow *of;
	const uint32_t *arcs; /* the support, of->nat */
	double *value;
};

static void usage_flow(void *ctx, size_t k, unsigned worker)
{
	struct usage_flows *u = ctx;
	struct origin_flow *of = u->of;
	const struct texp *x = u->x;
	struct maxflow *mf = &u->mf[worker];

	u->value[k] = maxflow_run(mf, of->origin, x->T * x->nv + of->dest[k], 1);
	for (size_t i = 0; i < of->nat; i++)
		of->f[k][i] = maxflow_on(mf, u->arcs[i]);
}

/* Every origin's flows inside its usage w (max flow per destination), over
 * w's support: 256 GPUs, 2,800 of G^T's 20,736 arcs, so 255 flows take 5.7
 * MB, where dense ones took 42 MB of pages to fault in. */
double flows_in_usage(const struct problem *p, const struct texp *x, struct origin_flow *of)
{
	uint32_t na = tx_narcs(x), *arcs = xmalloc(((size_t)na + 1) * sizeof(uint32_t)), m = 0;
	double *cap = xcalloc((size_t)na + 1, sizeof(double)), least = INFINITY;
	unsigned nw = parallel_workers(of->ndest, USAGE_GRAIN, p->opts->threads);
	uint32_t ndest = of->ndest;

	of->at = xmalloc(((size_t)na + 1) * sizeof(int32_t));
	for (uint32_t a = 0; a < na; a++) {
		bool free_hold = tx_is_hold(x, a) && !p->conserve[tx_vertex_from(x, a)];

		of->at[a] = -1;
		if (free_hold || of->w[a] > 1e-12) {
			of->at[a] = (int32_t)m;
			arcs[m++] = a;
			cap[a] = free_hold ? 2 : of->w[a];
		}
	}
	of->nat = m;
	of->f = xmalloc((ndest + 1) * sizeof(double *));
	for (uint32_t k = 0; k < ndest; k++)
		of->f[k] = xmalloc(((size_t)m + 1) * sizeof(double));
	struct usage_flows u = {.x = x,
				.mf = xcalloc(nw, sizeof(struct maxflow)),
				.of = of,
				.arcs = arcs,
				.value = xmalloc((ndest + 1) * sizeof(double))};

	maxflow_init(&u.mf[0], x, arcs, m);
	maxflow_set_caps(&u.mf[0], cap);
	for (unsigned i = 1; i < nw; i++)
		maxflow_view(&u.mf[i], &u.mf[0]);
	parallel_for(ndest, USAGE_GRAIN, nw, usage_flow, &u);
	for (uint32_t k = 0; k < ndest; k++)
		if (u.value[k] < least)
			least = u.value[k];
	for (unsigned i = nw; i-- > 0;)
		maxflow_free(&u.mf[i]);
	free(u.mf);
	free(u.value);
	free(arcs);
	free(cap);
	return least;
}

void origin_flow_drop(struct origin_flow *of)
{
	for (uint32_t k = 0; of->f && k < of->ndest; k++)
		free(of->f[k]);
	free(of->f);
	free(of->at);
	of->f = NULL;
	of->at = NULL;
}

/* The routing: each class's columns by weight, decomposed, then moved by
 * every group element to the orbit (weight 1/|Stab| each). */
static void dw_routing(struct dw *d, const double *lambda, const struct fluid_group *g,
		       struct fluid_result *r)
{
	const struct problem *p = d->p;
	const struct texp *x = d->x;
	uint32_t nv = x->nv, ne = x->ne;
	double *acc = xcalloc(nv + 1, sizeof(double)), deficit = 0;
	for (uint32_t k = 0; k < d->ncls; k++) {
		struct fluid_routing tmp = {0};
		struct pricer *pr = &d->pr[k];
		double *cacc = xcalloc(pr->ndest + 1, sizeof(double));

		for (size_t j = 0; j < d->ncols; j++) {
			const struct column *c = &d->cols[j];
			double lam = lambda[j];

			if (c->cls != k || lam <= 1e-12)
				continue;
			size_t first = tmp.npieces;

			if (p->copy) {
				/* an actual tree: every copy on an arc is a transfer */
				uint32_t m = 0;

				for (uint32_t i = 0; i < c->narcs; i++)
					if (!tx_is_hold(x, c->arcs[i]))
						m += (uint32_t)lround(c->w[i]);
				uint32_t *ta = xmalloc((m + 1) * sizeof(uint32_t));
				uint32_t *tl = xmalloc((m + 1) * sizeof(uint32_t));

				m = 0;
				for (uint32_t i = 0; i < c->narcs; i++)
					for (long q = 0;
					     !tx_is_hold(x, c->arcs[i]) && q < lround(c->w[i]);
					     q++) {
						ta[m] = tx_phys(x, c->arcs[i]);
						tl[m++] = tx_layer(x, c->arcs[i]);
					}
				routing_add_piece(&tmp, d->rep[k], UINT32_MAX, cacc[0],
						  cacc[0] + lam, ta, tl, m);
				free(ta);
				free(tl);
				cacc[0] += lam;
				(void)first;
			} else {
				uint32_t ha[256], hl[256], m = 0;

				for (uint32_t i = 0; i < c->narcs && m < 256; i++)
					if (!tx_is_hold(x, c->arcs[i])) {
						ha[m] = tx_phys(x, c->arcs[i]);
						hl[m++] = tx_layer(x, c->arcs[i]);
					}
				routing_add_piece(&tmp, d->rep[k], pr->dest[c->dest], cacc[c->dest],
						  cacc[c->dest] + lam, ha, hl, m);
				cacc[c->dest] += lam;
			}
		}
		/* Normalise each destination's parts to [0, 1) (the master's
		 * weights sum to 1 up to its tolerance). */
		for (size_t i = 0; i < tmp.npieces; i++) {
			struct fluid_piece *q = &tmp.pieces[i];
			double tot = p->copy ? cacc[0] : 0;

			if (!p->copy)
				for (uint32_t j = 0; j < pr->ndest; j++)
					if (pr->dest[j] == q->target)
						tot = cacc[j];
			if (tot > 0) {
				q->lo /= tot;
				q->hi /= tot;
			}
		}
		/* Mirror: every h moves the class's pieces to origin h(o_k). */
		double share = (double)d->orbit_size[k] / d->order;
		uint32_t *ha = xmalloc((tmp.nhops + 1) * sizeof(uint32_t));

		routing_reserve(&r->routing, (size_t)d->order * tmp.npieces,
				(size_t)d->order * tmp.nhops);

		for (uint32_t h = 0; h < d->order; h++) {
			uint32_t o2 = g ? g->vert[(size_t)h * nv + d->rep[k]] : d->rep[k];

			for (size_t i = 0; i < tmp.npieces; i++) {
				const struct fluid_piece *q = &tmp.pieces[i];
				uint32_t tg = q->target;

				if (tg != UINT32_MAX && g)
					tg = g->vert[(size_t)h * nv + tg];
				for (uint32_t s = 0; s < q->nhops; s++)
					ha[s] = d->harc[(size_t)h * ne + tmp.hop_arc[q->first + s]];
				double base = p->copy ? acc[o2] : 0;

				routing_add_piece(&r->routing, o2, tg, base + share * q->lo,
						  base + share * q->hi, ha,
						  tmp.hop_layer + q->first, q->nhops);
			}
			if (p->copy) {
				acc[o2] += share;
			} else {
				/* all-to-all: per pair offsets; shift this h's pieces */
				size_t cnt = tmp.npieces, at = r->routing.npieces - cnt;

				for (size_t i = 0; i < cnt; i++) {
					struct fluid_piece *q = &r->routing.pieces[at + i];
					size_t key = (size_t)o2 * nv + q->target;

					(void)key;
				}
			}
		}
		free(ha);
		free(cacc);
		free(tmp.pieces);
		free(tmp.hop_arc);
		free(tmp.hop_layer);
	}
	if (!p->copy && d->order > 1) {
		/* All-to-all pieces of one pair may come from several h (a
		 * stabiliser larger than 1): lay them end to end per pair. */
		double *pacc = xcalloc((size_t)nv * nv + 1, sizeof(double));
		size_t npc = r->routing.npieces;

		for (size_t i = 0; i < npc; i++) {
			struct fluid_piece *q = &r->routing.pieces[i];
			size_t key = (size_t)q->origin * nv + q->target;
			double len = q->hi - q->lo;

			q->lo = pacc[key];
			q->hi = pacc[key] + len;
			pacc[key] += len;
		}
		free(pacc);
	}
	free(acc);
	r->routing.deficit = deficit;
	r->routing.exact = deficit <= 1e-7;
	routing_measure(p, &r->routing);
}

/* One pricer per class of origins and the convexity rows they need;
 * refuses pricing models over the memory limit, with the estimate. */
static int dw_pricers(struct dw *d, const struct fluid_group *grp, struct fluid_result *r,
		      struct ofc_error *err)
{
	const struct problem *p = d->p;
	uint64_t cols = 0;

	d->pr = xcalloc(d->ncls, sizeof(struct pricer));
	d->conv_first = xmalloc((d->ncls + 1) * sizeof(uint32_t));
	for (uint32_t k = 0; k < d->ncls; k++) {
		if (pricer_init(&d->pr[k], p, d->x, d->rep[k], grp, err) < 0)
			return -1;
		d->conv_first[k] = d->nconv;
		d->nconv += p->copy ? 1 : d->pr[k].ndest;
		cols += d->pr[k].ncols;
	}
	/* The estimate: the pricing models (columns, their rows and cuts). */
	r->model_cols = cols;
	r->model_rows = d->nrows + d->nconv;
	r->model_bytes = 400 * cols + 64ull * tx_narcs(d->x) * (d->ncls + 4);
	if (r->model_bytes <= p->mem_limit)
		return 0;
	char need[32], max[32];

	fmt_size(need, sizeof(need), r->model_bytes);
	fmt_size(max, sizeof(max), p->mem_limit);
	return ofc_error_set(err, OFC_E_RUNTIME,
			     "the pricing models at T = %u need about %s, over the memory limit "
			     "of %s",
			     d->x->T, need, max);
}

static void dw_scratch(struct dw *d)
{
	const struct problem *p = d->p;
	uint32_t ne = d->x->ne, na = tx_narcs(d->x);

	d->u = xcalloc(ne + 1, sizeof(double));
	d->coef = xcalloc(d->nrows + 1, sizeof(double));
	d->touched = xmalloc((d->nrows + 1) * sizeof(uint32_t));
	d->y = xcalloc(d->nrows + d->nconv + 1, sizeof(double));
	d->Y = xcalloc(ne + 1, sizeof(double));
	d->chat = xcalloc(ne + 1, sizeof(double));
	d->wbuf = xcalloc((size_t)na + 1, sizeof(double));
	d->wbuf2 = xcalloc((size_t)na + 1, sizeof(double));
	d->disc = xcalloc((size_t)na + 1, sizeof(double));
	d->patharcs = xmalloc(((size_t)p->nterm * d->x->T + 1) * sizeof(uint32_t));
	d->pathlen = xmalloc((p->nterm + 1) * sizeof(uint32_t));
	d->pathcost = xmalloc((p->nterm + 1) * sizeof(double));
}

/* Initial columns: the fastest routes alone (cost 1/b per arc). -2 (err
 * set) when a class has no tree at this T: a larger T may have one. */
static int dw_first_columns(struct dw *d, struct ofc_error *err)
{
	const struct problem *p = d->p;
	const struct texp *x = d->x;

	for (uint32_t e = 0; e < x->ne; e++)
		d->chat[e] =
		    (isinf(p->net->bw[e]) ? 0 : 1 / p->net->bw[e]) + 1e-3 * p->net->cost[e];
	for (uint32_t k = 0; k < d->ncls; k++) {
		if (!p->copy) {
			pricer_paths(&d->pr[k], d->chat, d->patharcs, d->pathlen, d->pathcost);
			for (uint32_t j = 0; j < d->pr[k].ndest; j++)
				add_path_column(d, k, j, d->patharcs + (size_t)j * x->T,
						d->pathlen[j]);
			continue;
		}
		double v;

		pricer_honest(&d->pr[k], d->chat, NULL, d->wbuf, &v);
		if (isinf(v)) {
			ofc_error_set(err, OFC_E_RUNTIME,
				      "no tree from %s reaches every destination within T = %u "
				      "hops: a larger hop limit (--hops) may have one",
				      fluid_vertex_name(p->net, d->rep[k]), x->T);
			return -2;
		}
		add_tree_column(d, k, d->wbuf, true);
	}
	return 0;
}

/* A phase's outcome: optimal unless out of time or stalled short of the
 * bound (a stalled cut LP leaves the bound short, unless a later one
 * closed it); the stop says which. */
static bool phase_optimal(const struct dw *d, double z, double lb, bool timed,
			  struct fluid_result *r)
{
	bool optimal = !timed && !(d->stalled && !gap_closed(d->p, z, lb));

	if (timed)
		r->stop = FLUID_STOP_TIME;
	else if (!optimal)
		r->stop = FLUID_STOP_STALL;
	return optimal;
}

/* Realise the relaxation: the same two phases over actual trees alone,
 * their columns so far and new ones (notes Sec. 2.1, the "provably optimal
 * procedure": the relaxation bounds them; equal values prove the schedule
 * optimal). */
static int dw_realise(struct dw *d, struct fluid_result *r, bool *timed, struct ofc_error *err)
{
	double zr, lbr, t1 = now_seconds();
	uint32_t it;

	d->trees_only = true;
	if (run_phase(d, false, r->rstar_lower, &zr, &lbr, &it, timed, err) < 0)
		return -1;
	/* Trees at the relaxation's R* keep its objective as a bound (the
	 * same R fixed); slower trees do not. */
	bool same_r = gap_closed(d->p, zr, r->rstar_lower);

	if (!same_r)
		d->rfix = zr * (1 + d->p->slack);
	if (!*timed && run_phase(d, true, same_r ? r->objective_lower : -INFINITY, &zr, &lbr, &it,
				 timed, err) < 0)
		return -1;
	r->seconds_realise = now_seconds() - t1;
	if (*timed)
		r->stop = FLUID_STOP_TIME;
	return 0;
}

/* The master's solution the routing lays out (lambda). Copy collectives
 * route actual trees alone: a relaxation column is a usage, not a tree,
 * and its arcs rounded to copies are no tree either (a vertex sends what
 * it never received, or sends twice what it received once), so a phase 2
 * stopped by its limit before the realisation routes the trees found so
 * far, as does a realisation stopped in its phase 1. Their mix at phase
 * 2's R where they reach it; else (timed: *least_r) their least R, as
 * dw_solve routes a run stopped before phase 2. */
static int dw_route_master(struct dw *d, double *lambda, bool timed, bool *least_r,
			   struct ofc_error *err)
{
	d->trees_only = d->p->copy;
	if (!isnan(solve_master(d, true, lambda, err)))
		return 0;
	if (!timed)
		return -1;
	memset(err, 0, sizeof(*err));
	*least_r = true;
	return isnan(solve_master(d, false, lambda, err)) ? -1 : 0;
}

/* Phase 2 at R = R*(1 + slack), the realisation, and the routing of the
 * master's solution. */
static int dw_phase2(struct dw *d, const struct fluid_group *grp, double **lambda, bool *timed,
		     struct fluid_result *r, struct ofc_error *err)
{
	const struct problem *p = d->p;
	double z, lb, t1 = now_seconds();

	d->rfix = r->rstar * (1 + p->slack);
	d->stalled = false;
	if (run_phase(d, true, -INFINITY, &z, &lb, &r->iterations[1], timed, err) < 0) {
		r->stop = FLUID_STOP_LP;
		return -1;
	}
	r->seconds[1] = now_seconds() - t1;
	r->objective = z;
	r->objective_lower = lb;
	bool optimal = phase_optimal(d, z, lb, *timed, r);

	r->optimal = r->optimal && optimal;
	if (p->copy && !*timed && dw_realise(d, r, timed, err) < 0) {
		r->stop = FLUID_STOP_LP;
		return -1;
	}
	/* No pricing follows: the cut LPs out of memory before the routing
	 * lays out the pieces (at 1,024 GPUs these were the solve's peak),
	 * and their pages back to the kernel: the routing's arrays are
	 * blocks mapped alone (ofc's mallopt), which never reuse the heap's
	 * free ones. The 1,024-GPU allgather's peak RSS: 209-241 MB as the
	 * threads' frees fell, 191-192 MB in every run with the trim. */
	for (uint32_t k = 0; k < d->ncls; k++)
		pricer_release(&d->pr[k]);
#ifdef __GLIBC__
	malloc_trim(0);
#endif
	*lambda = xreallocarray(*lambda, d->ncols + 1, sizeof(double));
	bool least_r = false;

	if (dw_route_master(d, *lambda, *timed, &least_r, err) < 0)
		return -1;
	dw_routing(d, *lambda, grp, r);
	r->routing.exact = !least_r &&
			   r->routing.r_actual <= r->rstar * (1 + 10 * p->slack + p->gap) &&
			   r->routing.cost <= r->objective * (1 + 10 * p->slack + p->gap) + 1e-9;
	return 0;
}

static void dw_free(struct dw *d)
{
	for (uint32_t k = 0; d->pr && k < d->ncls; k++)
		pricer_free(&d->pr[k]);
	for (size_t j = 0; j < d->ncols; j++)
		column_free(&d->cols[j]);
	free(d->cols);
	free(d->pr);
	free(d->conv_first);
	free(d->identity);
	free(d->held_off);
	free(d->held);
	free(d->rep);
	free(d->orbit_size);
	free(d->cls_of);
	free(d->cap_row);
	free(d->row_cap);
	free(d->u);
	free(d->coef);
	free(d->touched);
	free(d->y);
	free(d->Y);
	free(d->chat);
	free(d->wbuf);
	free(d->wbuf2);
	free(d->disc);
	free(d->patharcs);
	free(d->pathlen);
	free(d->pathcost);
}

bool dw_is_answer(const struct problem *p, double z)
{
	return z < p->answer_below && z <= p->answer_at;
}

int dw_solve(const struct problem *p, const struct texp *x, const struct fluid_group *grp,
	     bool phase2, struct fluid_result *r, struct ofc_error *err)
{
	struct dw d = {.p = p, .x = x};
	int rc = -1;
	double *lambda = NULL;

	if (dw_setup(&d, grp, err) < 0)
		goto out;
	r->classes = d.ncls;
	r->group_order = d.order;
	if (dw_pricers(&d, grp, r, err) < 0)
		goto out;
	dw_scratch(&d);
	rc = dw_first_columns(&d, err);
	if (rc < 0)
		goto out;
	rc = -1;
	double t1 = now_seconds(), z, lb;
	bool timed;

	if (run_phase(&d, false, -INFINITY, &z, &lb, &r->iterations[0], &timed, err) < 0) {
		r->stop = FLUID_STOP_LP;
		goto out;
	}
	r->seconds[0] = now_seconds() - t1;
	r->rstar = z;
	r->rstar_lower = lb;
	r->optimal = phase_optimal(&d, z, lb, timed, r);
	/* the search's answer: its phase 2 now, phase 1 not solved again */
	phase2 |= dw_is_answer(p, z);
	if (phase2 && !timed && dw_phase2(&d, grp, &lambda, &timed, r, err) < 0)
		goto out;
	if (phase2 && timed && r->routing.npieces == 0) {
		/* Out of time before a cost phase: still a schedule, from the
		 * trees (or paths) found so far at their least R, marked
		 * inexact; the request's answer says time limit. */
		d.trees_only = p->copy;
		lambda = xreallocarray(lambda, d.ncols + 1, sizeof(double));
		if (!isnan(solve_master(&d, false, lambda, err))) {
			dw_routing(&d, lambda, grp, r);
			r->routing.exact = false;
		} else {
			memset(err, 0, sizeof(*err));
		}
	}
	r->columns = d.ncols;
	for (uint32_t k = 0; k < d.ncls; k++) {
		r->pricing_solves += d.pr[k].solves + d.pr[k].rounds;
		r->cuts += d.pr[k].cuts;
		r->dup_cuts += d.pr[k].dup_cuts;
	}
	rc = 0;
out:
	r->lp_master = d.master_solver;
	if (d.pr && d.ncls)
		r->lp_pricing = d.pr[0].solver;
	dw_free(&d);
	free(lambda);
	return rc;
}
