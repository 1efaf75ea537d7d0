/* The layers summed: a bound on LP 4.2's objective at every hop
 * limit T.
 *
 * Take any solution of LP 4.2 at any T and add up, for every physical arc,
 * what each layer carries: w[e, o] = sum_t w[(e, t), o] and the same for
 * every flow f[e, o, d]. The sums keep every constraint of the LP without
 * layers: a flow from o to d (the hold-overs cancel), LINK f <= w, (3.12) at
 * the vertices that cannot copy (each layer's in = out, summed), and each
 * capacity's (4.1) row is already a sum over the layers. The cost is the
 * same. So this static LP at a given R is a relaxation of LP 4.2 at that R
 * for every T, and its optimum bounds the phase-2 objective of every T from
 * below: a T whose objective meets it is enough for every larger one, and
 * an objective below it is out of reach at that R, whatever T.
 *
 * The LP: per class of origins, w[e] and a flow f_d per destination, flow
 * conservation at every vertex, f_d <= w (all-to-all: w = sum_d f_d, no
 * copies), (3.12) on w, and one row per orbit of capacities. With a group
 * under which the origins are one set (allgather, all-to-all), a symmetric
 * solution is as good as any (the LP is the group's and convex: average a
 * solution over the group), so only one origin per orbit has columns, and
 * origin h(o)'s usage is the image of o's: capacity c carries
 * sum_h [h(e) in c] / |stab(o)| of o's w[e]. */
#include "fluid/internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Orbits of the origins under g (NULL, or an image not an origin: each
 * origin alone): rep[k], size[k]; returns the number of classes. */
static uint32_t origin_classes(const struct problem *p, const struct fluid_group *g, uint32_t *rep,
			       uint32_t *size)
{
	uint32_t nv = p->net->nverts, ncls = 0;
	int32_t *idx = xmalloc((nv + 1) * sizeof(int32_t));
	uint32_t *cls = xmalloc((p->norig + 1) * sizeof(uint32_t));

	for (uint32_t v = 0; v < nv; v++)
		idx[v] = -1;
	for (uint32_t i = 0; i < p->norig; i++) {
		idx[p->orig[i]] = (int32_t)i;
		cls[i] = UINT32_MAX;
	}
	for (uint32_t h = 0; g && h < g->order; h++)
		for (uint32_t i = 0; i < p->norig; i++)
			if (idx[g->vert[(size_t)h * nv + p->orig[i]]] < 0)
				g = NULL; /* the origins are not the group's: none */
	for (uint32_t i = 0; i < p->norig; i++) {
		if (cls[i] != UINT32_MAX)
			continue;
		rep[ncls] = p->orig[i];
		size[ncls] = 0;
		for (uint32_t h = 0; h < (g ? g->order : 1); h++) {
			uint32_t j = g ? (uint32_t)idx[g->vert[(size_t)h * nv + p->orig[i]]] : i;

			if (cls[j] == UINT32_MAX) {
				cls[j] = ncls;
				size[ncls]++;
			}
		}
		ncls++;
	}
	free(idx);
	free(cls);
	return ncls;
}

struct hf {
	const struct problem *p;
	const struct fluid_group *g; /* NULL: no symmetry */
	uint32_t ncls, *rep, *size;
	uint32_t ndest; /* destinations per class: the terminals but the origin */
	int *wcol;	/* ncls: the first of its w columns (one per arc) */
	int *fcol;	/* ncls: its first flow column (ndest * narcs) */
	uint32_t *out_off, *out_arc, *in_off, *in_arc; /* arcs by tail, by head */
	struct lp *lp;
	int *ic;
	double *iv;
};

/* The arcs by tail and by head (CSR). */
static void arc_lists(struct hf *h)
{
	const struct fluid_net *n = h->p->net;
	uint32_t nv = n->nverts, ne = n->narcs;

	h->out_off = xcalloc(nv + 2, sizeof(uint32_t));
	h->in_off = xcalloc(nv + 2, sizeof(uint32_t));
	h->out_arc = xmalloc((ne + 1) * sizeof(uint32_t));
	h->in_arc = xmalloc((ne + 1) * sizeof(uint32_t));
	for (uint32_t e = 0; e < ne; e++) {
		h->out_off[n->tail[e] + 2]++;
		h->in_off[n->head[e] + 2]++;
	}
	for (uint32_t v = 0; v < nv; v++) {
		h->out_off[v + 2] += h->out_off[v + 1];
		h->in_off[v + 2] += h->in_off[v + 1];
	}
	for (uint32_t e = 0; e < ne; e++) {
		h->out_arc[h->out_off[n->tail[e] + 1]++] = e;
		h->in_arc[h->in_off[n->head[e] + 1]++] = e;
	}
}

/* The row out - in = rhs at v over the columns base + arc. */
static void balance_row(struct hf *h, uint32_t v, int base, double rhs)
{
	int m = 0;

	for (uint32_t i = h->out_off[v]; i < h->out_off[v + 1]; i++) {
		h->ic[m] = base + (int)h->out_arc[i];
		h->iv[m++] = 1;
	}
	for (uint32_t i = h->in_off[v]; i < h->in_off[v + 1]; i++) {
		h->ic[m] = base + (int)h->in_arc[i];
		h->iv[m++] = -1;
	}
	if (m)
		lp_add_row(h->lp, m, h->ic, h->iv, LP_EQ, rhs);
}

/* Destination j of class k (the terminals in order, the origin left out). */
static uint32_t dest_of(const struct hf *h, uint32_t k, uint32_t j)
{
	uint32_t t = 0;

	for (uint32_t i = 0; i < h->p->nterm; i++)
		if (h->p->term[i] != h->rep[k] && t++ == j)
			return h->p->term[i];
	return UINT32_MAX;
}

/* Columns and the rows of one class: conservation per destination and
 * vertex, LINK (or w = sum f), (3.12). */
static void class_rows(struct hf *h, uint32_t k)
{
	const struct problem *p = h->p;
	const struct fluid_net *n = p->net;
	uint32_t ne = n->narcs, o = h->rep[k];

	/* No arc back into the origin carries anything (as in G^T). */
	for (uint32_t e = 0; e < ne; e++)
		if (n->head[e] == o) {
			lp_set_bounds(h->lp, h->wcol[k] + (int)e, 0, 0);
			for (uint32_t j = 0; j < h->ndest; j++)
				lp_set_bounds(h->lp, h->fcol[k] + (int)(j * ne + e), 0, 0);
		}
	for (uint32_t j = 0; j < h->ndest; j++) {
		uint32_t d = dest_of(h, k, j);
		int base = h->fcol[k] + (int)(j * ne);

		for (uint32_t v = 0; v < n->nverts; v++)
			balance_row(h, v, base, v == o ? 1 : v == d ? -1 : 0);
		if (p->copy)
			for (uint32_t e = 0; e < ne; e++) {
				h->ic[0] = base + (int)e;
				h->iv[0] = 1;
				h->ic[1] = h->wcol[k] + (int)e;
				h->iv[1] = -1;
				lp_add_row(h->lp, 2, h->ic, h->iv, LP_LE, 0);
			}
	}
	if (!p->copy) {
		for (uint32_t e = 0; e < ne; e++) {
			int m = 0;

			h->ic[m] = h->wcol[k] + (int)e;
			h->iv[m++] = 1;
			for (uint32_t j = 0; j < h->ndest; j++) {
				h->ic[m] = h->fcol[k] + (int)(j * ne + e);
				h->iv[m++] = -1;
			}
			lp_add_row(h->lp, m, h->ic, h->iv, LP_EQ, 0);
		}
		return;
	}
	for (uint32_t v = 0; v < n->nverts; v++)
		if (p->conserve[v])
			balance_row(h, v, h->wcol[k], 0);
}

/* One row per orbit of capacities: sum_k sum_e coef(e) / stab_k w_k[e] <=
 * r b(c), coef(e) = #{h : h(e) in c} (1 for e in c without a group). */
static void capacity_rows(struct hf *h, double r)
{
	const struct problem *p = h->p;
	const struct fluid_net *n = p->net;
	const struct fluid_group *g = h->g;
	uint32_t ne = n->narcs, narc_caps = p->ncaps - n->nsets, order = g ? g->order : 1;
	uint32_t *cap_of_arc = xmalloc((ne + 1) * sizeof(uint32_t));
	uint8_t *seen = xcalloc(p->ncaps + 1, 1), *in = xmalloc(ne + 1);
	double *coef = xmalloc((ne + 1) * sizeof(double));

	for (uint32_t e = 0; e < ne; e++)
		cap_of_arc[e] = UINT32_MAX;
	for (uint32_t c = 0; c < narc_caps; c++)
		cap_of_arc[p->cap_arc[p->cap_off[c]]] = c;
	for (uint32_t c = 0; c < p->ncaps; c++) {
		if (seen[c])
			continue;
		for (uint32_t i = 0; g && i < order; i++) {
			uint32_t img =
			    c < narc_caps
				? cap_of_arc[g->arc[(size_t)i * ne + p->cap_arc[p->cap_off[c]]]]
				: narc_caps + g->set[(size_t)i * n->nsets + (c - narc_caps)];

			if (img < p->ncaps)
				seen[img] = 1;
		}
		memset(in, 0, ne);
		memset(coef, 0, ne * sizeof(double));
		for (uint32_t j = p->cap_off[c]; j < p->cap_off[c + 1]; j++)
			in[p->cap_arc[j]] = 1;
		for (uint32_t i = 0; i < order; i++)
			for (uint32_t e = 0; e < ne; e++)
				coef[e] += in[g ? g->arc[(size_t)i * ne + e] : e];
		int m = 0;

		for (uint32_t k = 0; k < h->ncls; k++) {
			double stab = (double)order / h->size[k];

			for (uint32_t e = 0; e < ne; e++)
				if (coef[e] > 0) {
					h->ic[m] = h->wcol[k] + (int)e;
					h->iv[m++] = coef[e] / stab;
				}
		}
		lp_add_row(h->lp, m, h->ic, h->iv, LP_LE, r * p->cap_bw[c]);
	}
	free(cap_of_arc);
	free(seen);
	free(in);
	free(coef);
}

void hopfree_bound(const struct problem *p, const struct fluid_group *g, double r,
		   struct fluid_result *res)
{
	const struct fluid_net *n = p->net;
	uint32_t ne = n->narcs;
	struct hf h = {.p = p};

	res->objective_any_hops = NAN;
	h.rep = xmalloc((p->norig + 1) * sizeof(uint32_t));
	h.size = xmalloc((p->norig + 1) * sizeof(uint32_t));
	h.ncls = origin_classes(p, g, h.rep, h.size);
	h.g = h.ncls < p->norig ? g : NULL;
	/* Each class's origin is a terminal (allgather, all-to-all) or the
	 * root of a broadcast, which no terminal list holds twice. */
	h.ndest = p->nterm;
	for (uint32_t i = 0; i < p->nterm; i++)
		if (p->term[i] == h.rep[0])
			h.ndest--;
	uint64_t cols = (uint64_t)h.ncls * ne * (h.ndest + 1);
	uint64_t rows =
	    (uint64_t)h.ncls * (h.ndest * ((uint64_t)n->nverts + ne) + n->nverts) + p->ncaps;
	uint64_t order = h.g ? h.g->order : 1, in_caps = p->cap_off[p->ncaps];
	uint64_t capnnz =
	    (uint64_t)ne * p->ncaps < order * in_caps ? (uint64_t)ne * p->ncaps : order * in_caps;
	uint64_t nnz = (uint64_t)h.ncls * (ne * (4 * (uint64_t)h.ndest + 4) + capnnz);
	/* As full.c counts a model: about 40 bytes per nonzero and 200 per row
	 * or column. */
	uint64_t bytes = 40 * nnz + 200 * (rows + cols);

	if (bytes > p->mem_limit || cols > INT32_MAX / 2) {
		char need[32], max[32];

		fmt_size(need, sizeof(need), bytes);
		fmt_size(max, sizeof(max), p->mem_limit);
		snprintf(res->any_hops_note, sizeof(res->any_hops_note),
			 "not computed: the LP needs about %s (%llu columns), over %s", need,
			 (unsigned long long)cols, max);
		goto out;
	}
	h.wcol = xmalloc((h.ncls + 1) * sizeof(int));
	h.fcol = xmalloc((h.ncls + 1) * sizeof(int));
	for (uint32_t k = 0, at = 0; k < h.ncls; k++) {
		h.wcol[k] = (int)at;
		h.fcol[k] = (int)(at + ne);
		at += ne * (h.ndest + 1);
	}
	res->lp_any_hops = fluid_lp_solver(p, FLUID_LP_FULL, false, (uint32_t)cols);
	h.lp = lp_new_known((int)cols, res->lp_any_hops);
	arc_lists(&h);
	size_t most = (size_t)(h.ncls + 2) * ne + (size_t)h.ndest + 8;
	h.ic = xmalloc(most * sizeof(int));
	h.iv = xmalloc(most * sizeof(double));
	for (uint32_t k = 0; k < h.ncls; k++) {
		for (uint32_t e = 0; e < ne; e++)
			lp_set_obj_coef(h.lp, h.wcol[k] + (int)e, h.size[k] * n->cost[e]);
		class_rows(&h, k);
	}
	capacity_rows(&h, r);
	if (p->deadline > 0) {
		double left = p->deadline - now_seconds();

		if (left <= 0) {
			snprintf(res->any_hops_note, sizeof(res->any_hops_note),
				 "not computed: the time limit");
			goto out;
		}
		lp_set_time_limit(h.lp, left);
	}
	struct ofc_error lerr = {0};
	enum lp_result lr = lp_solve(h.lp, &lerr);

	/* Not solved is no bound, not a failed solve: the note says why
	 * (infeasible: R below what any T allows, which phase 1 rules out but
	 * for its tolerance). */
	if (lr == LP_OPTIMAL)
		res->objective_any_hops = lp_objective(h.lp);
	else
		snprintf(res->any_hops_note, sizeof(res->any_hops_note), "not computed: %.120s",
			 lr == LP_TIMEOUT      ? "the time limit"
			 : lr == LP_INFEASIBLE ? "the LP is infeasible at R"
					       : lerr.msg);
out:
	lp_free(h.lp);
	free(h.ic);
	free(h.iv);
	free(h.wcol);
	free(h.fcol);
	free(h.rep);
	free(h.size);
	free(h.out_off);
	free(h.out_arc);
	free(h.in_off);
	free(h.in_arc);
}
