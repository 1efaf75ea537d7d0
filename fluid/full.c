/* LP 4.2 as one lp_solve model (notes Sec. 2.3), every commodity pruned to
 * its cone: f[a, o, d] on the arcs of G^T that (o, 0) reaches and that
 * reach (d, T) (never back into o, never out of d but by its hold-over);
 * w[a, o] on the union of an origin's cones; flow conservation per
 * commodity, LINK f <= w, (3.12) at vertices that cannot copy, and one
 * aggregated capacity row per capacity: sum_t sum_{e in L} sum_o w - b(L) R
 * <= 0. Phase 1 minimises R; phase 2 fixes R = R*(1 + slack) and minimises
 * sum c_e w (all-to-all: the same over f, no w). */
#include "fluid/internal.h"

#include <stdlib.h>
#include <string.h>

struct colset {
	uint32_t *arc; /* G^T arc of each column */
	int *col;
	uint32_t n, cap;
};

static void colset_add(struct colset *s, uint32_t arc, int col)
{
	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 64;
		s->arc = xreallocarray(s->arc, s->cap, sizeof(uint32_t));
		s->col = xreallocarray(s->col, s->cap, sizeof(int));
	}
	s->arc[s->n] = arc;
	s->col[s->n++] = col;
}

struct ivec {
	int *v;
	size_t n, cap;
};

static void ivec_push(struct ivec *a, int x)
{
	GROW(a->v, a->cap, a->n + 1);
	a->v[a->n++] = x;
}

/* Is G^T arc a usable by commodity (o, d) whose node cone is `cone`? */
static bool commodity_arc(const struct texp *x, const uint64_t *cone, uint32_t a, uint32_t o,
			  uint32_t d)
{
	if (!bit_test(cone, tx_tail(x, a)) || !bit_test(cone, tx_head(x, a)))
		return false;
	if (tx_is_hold(x, a))
		return true;
	return tx_vertex_to(x, a) != o && tx_vertex_from(x, a) != d;
}

/* Does G^T arc a carry w (copy collectives)? Physical arcs, and hold-overs
 * of store vertices that conserve w (3.12 counts their hold-over). */
static bool has_w(const struct problem *p, const struct texp *x, uint32_t a)
{
	return !tx_is_hold(x, a) || p->conserve[tx_vertex_from(x, a)];
}

int full_solve(const struct problem *p, const struct texp *x, bool phase2, struct fluid_result *r,
	       struct ofc_error *err)
{
	uint32_t na = tx_narcs(x), nn = tx_nnodes(x), words = (nn + 63) / 64;
	uint64_t *fw = xmalloc(words * 8), *bw = xmalloc(words * 8), *cone = xmalloc(words * 8);
	uint64_t *wmark = xmalloc(((size_t)na + 63) / 64 * 8);
	uint32_t norig = p->norig, ncomm = 0;
	/* per origin: w columns; per commodity: f columns and their dest */
	struct colset *wcols = xcalloc(norig, sizeof(*wcols));
	struct colset *fcols = xcalloc((size_t)norig * p->nterm, sizeof(*fcols));
	uint32_t *fdest = xmalloc(((size_t)norig * p->nterm + 1) * sizeof(uint32_t));
	uint32_t *forig = xmalloc(((size_t)norig * p->nterm + 1) * sizeof(uint32_t));
	int ncols = 0, rc = -1;
	uint64_t rows = 0, nnz = 0;
	struct lp *lp = NULL;
	double *xs = NULL;

	/* Columns: count and number them before building anything. */
	for (uint32_t i = 0; i < norig; i++) {
		uint32_t o = p->orig[i];

		texp_forward(x, o, fw);
		memset(wmark, 0, ((size_t)na + 63) / 64 * 8);
		for (uint32_t j = 0; j < p->nterm; j++) {
			uint32_t d = p->term[j];

			if (d == o)
				continue;
			texp_backward(x, d, o, bw);
			for (uint32_t k = 0; k < words; k++)
				cone[k] = fw[k] & bw[k];
			struct colset *fc = &fcols[ncomm];

			fdest[ncomm] = d;
			forig[ncomm] = i;
			ncomm++;
			for (uint32_t a = 0; a < na; a++)
				if (commodity_arc(x, cone, a, o, d)) {
					colset_add(fc, a, ncols++);
					if (p->copy && has_w(p, x, a))
						bit_set(wmark, a);
				}
			rows += 2 * (uint64_t)fc->n / 2 + 1; /* FC rows: at most nodes ~ arcs */
			nnz += 2 * (uint64_t)fc->n;
			if (p->copy) {
				rows += fc->n; /* LINK */
				nnz += 2 * (uint64_t)fc->n;
			}
		}
		if (p->copy)
			for (uint32_t a = 0; a < na; a++)
				if (bit_test(wmark, a)) {
					colset_add(&wcols[i], a, ncols++);
					nnz += 3;
				}
	}
	int rcol = ncols++;

	rows += p->ncaps;
	r->model_rows = rows;
	r->model_cols = (uint64_t)ncols;
	r->model_nonzeros = nnz;
	/* lp_solve keeps the matrix by columns and rows with doubles and ints,
	 * plus per-row and per-column arrays: about 40 bytes per nonzero and
	 * 200 per row or column, as measured on these models. */
	r->model_bytes = 40 * nnz + 200 * (rows + (uint64_t)ncols);
	if (r->model_bytes > p->mem_limit) {
		char need[32], max[32];

		fmt_size(need, sizeof(need), r->model_bytes);
		fmt_size(max, sizeof(max), p->mem_limit);
		ofc_error_set(err, OFC_E_RUNTIME,
			      "the full LP at T = %u needs about %s (%llu columns, %llu "
			      "nonzeros), over the memory limit of %s: use --method mirrored or dw",
			      x->T, need, (unsigned long long)ncols, (unsigned long long)nnz, max);
		goto out;
	}
	r->lp_full = fluid_lp_solver(p, FLUID_LP_FULL, false, (uint32_t)ncols);
	lp = lp_new_known(ncols, r->lp_full);
	struct ivec rcols = {0};
	double *rvals = NULL;
	size_t rvcap = 0;
	/* index of each origin's w column per G^T arc (only while building) */
	int *wcol = xmalloc(((size_t)na + 1) * sizeof(int));
	struct ivec *caprow = xcalloc(p->ncaps, sizeof(*caprow));

	for (uint32_t c = 0; c < ncomm; c++) {
		const struct colset *fc = &fcols[c];
		uint32_t i = forig[c], o = p->orig[i], d = fdest[c];

		if (c == 0 || forig[c - 1] != i) {
			for (uint32_t a = 0; a < na; a++)
				wcol[a] = -1;
			for (uint32_t k = 0; k < wcols[i].n; k++)
				wcol[wcols[i].arc[k]] = wcols[i].col[k];
		}
		/* FC per node of the cone: out - in = +1 at (o,0), -1 at (d,T). */
		int *nodefirst = NULL;
		(void)nodefirst;
		/* group the commodity's arcs by node: out and in lists via sorting
		 * would cost; use a node -> row map built on the fly. */
		int *rowof = xmalloc(((size_t)nn + 1) * sizeof(int));
		struct ivec *nodecols = NULL;
		uint32_t nnodes = 0;
		uint32_t *nodes = xmalloc((2 * (size_t)fc->n + 2) * sizeof(uint32_t));

		for (uint32_t k = 0; k < fc->n; k++) {
			uint32_t ends[2] = {tx_tail(x, fc->arc[k]), tx_head(x, fc->arc[k])};

			for (int e = 0; e < 2; e++)
				nodes[nnodes++] = ends[e];
		}
		for (uint32_t k = 0; k < nnodes; k++)
			rowof[nodes[k]] = -1;
		uint32_t nr = 0;

		for (uint32_t k = 0; k < nnodes; k++)
			if (rowof[nodes[k]] < 0)
				rowof[nodes[k]] = (int)nr++;
		nodecols = xcalloc(nr + 1, sizeof(*nodecols));
		struct {
			double *v;
			size_t n, cap;
		} *nodevals = xcalloc(nr + 1, sizeof(*nodevals));
		uint32_t *rownode = xmalloc((nr + 1) * sizeof(uint32_t));

		for (uint32_t k = 0; k < nnodes; k++)
			rownode[rowof[nodes[k]]] = nodes[k];
		for (uint32_t k = 0; k < fc->n; k++) {
			int rt = rowof[tx_tail(x, fc->arc[k])], rh = rowof[tx_head(x, fc->arc[k])];

			ivec_push(&nodecols[rt], fc->col[k]);
			GROW(nodevals[rt].v, nodevals[rt].cap, nodevals[rt].n + 1);
			nodevals[rt].v[nodevals[rt].n++] = 1;
			ivec_push(&nodecols[rh], fc->col[k]);
			GROW(nodevals[rh].v, nodevals[rh].cap, nodevals[rh].n + 1);
			nodevals[rh].v[nodevals[rh].n++] = -1;
		}
		for (uint32_t k = 0; k < nr; k++) {
			uint32_t node = rownode[k];
			double rhs = node == o ? 1 : node == x->T * x->nv + d ? -1 : 0;

			lp_add_row(lp, (int)nodecols[k].n, nodecols[k].v, nodevals[k].v, LP_EQ,
				   rhs);
			free(nodecols[k].v);
			free(nodevals[k].v);
		}
		free(nodecols);
		free(nodevals);
		free(rownode);
		free(nodes);
		free(rowof);
		/* LINK: f - w <= 0. */
		if (p->copy)
			for (uint32_t k = 0; k < fc->n; k++) {
				int wc = wcol[fc->arc[k]];

				if (wc < 0)
					continue;
				int cols[2] = {fc->col[k], wc};
				double vals[2] = {1, -1};

				lp_add_row(lp, 2, cols, vals, LP_LE, 0);
			}
		/* All-to-all capacities count f. */
		if (!p->copy)
			for (uint32_t k = 0; k < fc->n; k++) {
				uint32_t e = tx_phys(x, fc->arc[k]);

				if (e == UINT32_MAX)
					continue;
				for (uint32_t j = p->arc_cap_off[e]; j < p->arc_cap_off[e + 1]; j++)
					ivec_push(&caprow[p->arc_caps[j]], fc->col[k]);
			}
		(void)o;
	}
	/* (3.12) and capacities over w. */
	if (p->copy)
		for (uint32_t i = 0; i < norig; i++) {
			const struct colset *wc = &wcols[i];
			int *rowof = xmalloc(((size_t)nn + 1) * sizeof(int));
			struct ivec cons = {0};

			for (uint32_t k = 0; k < wc->n; k++) {
				uint32_t e = tx_phys(x, wc->arc[k]);

				if (e != UINT32_MAX)
					for (uint32_t j = p->arc_cap_off[e];
					     j < p->arc_cap_off[e + 1]; j++)
						ivec_push(&caprow[p->arc_caps[j]], wc->col[k]);
			}
			/* conservation rows: per node of a conserving vertex */
			for (uint32_t v = 0; v < nn; v++)
				rowof[v] = -1;
			for (uint32_t k = 0; k < wc->n; k++) {
				uint32_t ends[2] = {tx_tail(x, wc->arc[k]), tx_head(x, wc->arc[k])};

				for (int e = 0; e < 2; e++)
					if (p->conserve[ends[e] % x->nv] && rowof[ends[e]] < 0) {
						rowof[ends[e]] = (int)cons.n;
						ivec_push(&cons, (int)ends[e]);
					}
			}
			struct ivec *rc2 = xcalloc(cons.n + 1, sizeof(*rc2));
			struct ivec *rv2 = xcalloc(cons.n + 1, sizeof(*rv2));

			for (uint32_t k = 0; k < wc->n; k++) {
				int rt = rowof[tx_tail(x, wc->arc[k])],
				    rh = rowof[tx_head(x, wc->arc[k])];

				if (rt >= 0) {
					ivec_push(&rc2[rt], wc->col[k]);
					ivec_push(&rv2[rt], 1);
				}
				if (rh >= 0) {
					ivec_push(&rc2[rh], wc->col[k]);
					ivec_push(&rv2[rh], -1);
				}
			}
			for (size_t k = 0; k < cons.n; k++) {
				GROW(rvals, rvcap, rv2[k].n + 1);
				for (size_t j = 0; j < rv2[k].n; j++)
					rvals[j] = rv2[k].v[j];
				lp_add_row(lp, (int)rc2[k].n, rc2[k].v, rvals, LP_EQ, 0);
				free(rc2[k].v);
				free(rv2[k].v);
			}
			free(rc2);
			free(rv2);
			free(cons.v);
			free(rowof);
		}
	int *caprow0 = xmalloc(sizeof(int));
	(void)caprow0;
	free(caprow0);
	for (uint32_t c = 0; c < p->ncaps; c++) {
		GROW(rvals, rvcap, caprow[c].n + 2);
		for (size_t j = 0; j < caprow[c].n; j++)
			rvals[j] = 1;
		ivec_push(&caprow[c], rcol);
		rvals[caprow[c].n - 1] = -p->cap_bw[c];
		lp_add_row(lp, (int)caprow[c].n, caprow[c].v, rvals, LP_LE, 0);
		free(caprow[c].v);
	}
	free(caprow);
	free(wcol);
	free(rcols.v);
	lp_set_obj_coef(lp, rcol, 1);
	report_progress(p, "phase 1", x->T, 0, NAN, NAN, 0);
	double t1 = now_seconds();

	if (p->deadline > 0)
		lp_set_time_limit(lp, p->deadline - now_seconds());
	enum lp_result res = lp_solve(lp, err);

	r->seconds[0] = now_seconds() - t1;
	if (res == LP_TIMEOUT || res == LP_FEASIBLE) {
		r->stop = FLUID_STOP_TIME;
		ofc_error_set(err, OFC_E_RUNTIME, "the full LP hit the time limit in phase 1");
		goto out_lp;
	}
	if (res != LP_OPTIMAL) {
		r->stop = FLUID_STOP_LP;
		if (res != LP_FAILED)
			ofc_error_set(err, OFC_E_RUNTIME, "the full LP is %s", lp_result_str(res));
		goto out_lp;
	}
	r->rstar = lp_objective(lp);
	r->rstar_lower = r->rstar;
	r->optimal = true;
	r->classes = norig;
	r->group_order = 1;
	if (phase2) {
		double rfix = r->rstar * (1 + p->slack);

		lp_set_bounds(lp, rcol, rfix, rfix);
		lp_set_obj_coef(lp, rcol, 0);
		for (uint32_t i = 0; i < norig && p->copy; i++)
			for (uint32_t k = 0; k < wcols[i].n; k++) {
				uint32_t e = tx_phys(x, wcols[i].arc[k]);

				if (e != UINT32_MAX && p->net->cost[e] != 0)
					lp_set_obj_coef(lp, wcols[i].col[k], p->net->cost[e]);
			}
		for (uint32_t c = 0; c < ncomm && !p->copy; c++)
			for (uint32_t k = 0; k < fcols[c].n; k++) {
				uint32_t e = tx_phys(x, fcols[c].arc[k]);

				if (e != UINT32_MAX && p->net->cost[e] != 0)
					lp_set_obj_coef(lp, fcols[c].col[k], p->net->cost[e]);
			}
		report_progress(p, "phase 2", x->T, 0, r->rstar, r->rstar, 0);
		t1 = now_seconds();
		if (p->deadline > 0)
			lp_set_time_limit(lp, p->deadline - now_seconds());
		res = lp_solve(lp, err);
		r->seconds[1] = now_seconds() - t1;
		if (res == LP_TIMEOUT || res == LP_FEASIBLE) {
			r->stop = FLUID_STOP_TIME;
			ofc_error_set(err, OFC_E_RUNTIME,
				      "the full LP hit the time limit in phase 2");
			goto out_lp;
		}
		if (res != LP_OPTIMAL) {
			r->stop = FLUID_STOP_LP;
			if (res != LP_FAILED)
				ofc_error_set(err, OFC_E_RUNTIME, "the full LP phase 2 is %s",
					      lp_result_str(res));
			goto out_lp;
		}
		r->objective = lp_objective(lp);
		r->objective_lower = r->objective;
		xs = xmalloc(((size_t)ncols + 1) * sizeof(double));
		lp_solution(lp, xs);
		/* The routing: per origin, its w and flows, decomposed. */
		struct origin_flow of = {0};
		double deficit = 0;

		of.dest = xmalloc((p->nterm + 1) * sizeof(uint32_t));
		of.f = xcalloc(p->nterm + 1, sizeof(double *));
		if (p->copy)
			of.w = xmalloc(((size_t)na + 1) * sizeof(double));
		for (uint32_t c = 0; c < ncomm;) {
			uint32_t i = forig[c];

			of.origin = p->orig[i];
			of.ndest = 0;
			if (p->copy) {
				memset(of.w, 0, (size_t)na * sizeof(double));
				for (uint32_t k = 0; k < wcols[i].n; k++)
					of.w[wcols[i].arc[k]] = xs[wcols[i].col[k]];
			}
			for (; c < ncomm && forig[c] == i; c++) {
				double *f = xcalloc((size_t)na + 1, sizeof(double));

				for (uint32_t k = 0; k < fcols[c].n; k++)
					f[fcols[c].arc[k]] = xs[fcols[c].col[k]];
				if (p->copy) {
					of.dest[of.ndest] = fdest[c];
					of.f[of.ndest++] = f;
				} else {
					decompose_pair(x, of.origin, fdest[c], f, &r->routing);
					free(f);
				}
			}
			if (p->copy) {
				decompose_origin(p, x, &of, 1.0, &r->routing, &deficit);
				for (uint32_t k = 0; k < of.ndest; k++)
					free(of.f[k]);
			}
		}
		free(of.w);
		free(of.f);
		free(of.dest);
		r->routing.deficit = deficit;
		r->routing.exact = deficit <= 1e-7;
		routing_measure(p, &r->routing);
	}
	rc = 0;
out_lp:
	free(rvals);
out:
	lp_free(lp);
	free(xs);
	for (uint32_t i = 0; i < norig; i++) {
		free(wcols[i].arc);
		free(wcols[i].col);
	}
	for (uint32_t c = 0; c < ncomm; c++) {
		free(fcols[c].arc);
		free(fcols[c].col);
	}
	free(wcols);
	free(fcols);
	free(fdest);
	free(forig);
	free(fw);
	free(bw);
	free(cone);
	free(wmark);
	return rc;
}
