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

/* A row being gathered: its columns and their coefficients. */
struct row {
	struct ivec col;
	double *val;
	size_t cap;
};

static void row_put(struct row *r, int col, double v)
{
	ivec_push(&r->col, col);
	GROW(r->val, r->cap, r->col.n);
	r->val[r->col.n - 1] = v;
}

/* Add row r to lp (op, rhs) and free what it held. */
static void row_add(struct lp *lp, struct row *r, enum lp_rel op, double rhs)
{
	lp_add_row(lp, (int)r->col.n, r->col.v, r->val, op, rhs);
	free(r->col.v);
	free(r->val);
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

/* The model's columns: per origin its w columns, per commodity (origin,
 * terminal) its f columns, numbered as they are found; then R. */
struct full_model {
	uint32_t ncomm;
	struct colset *wcols; /* per origin */
	struct colset *fcols; /* per commodity */
	uint32_t *fdest;      /* per commodity: its terminal */
	uint32_t *forig;      /* per commodity: its origin's index */
	int ncols, rcol;
	uint64_t rows, nnz;
};

static void model_free(const struct problem *p, struct full_model *m)
{
	for (uint32_t i = 0; i < p->norig && m->wcols; i++) {
		free(m->wcols[i].arc);
		free(m->wcols[i].col);
	}
	for (uint32_t c = 0; c < m->ncomm; c++) {
		free(m->fcols[c].arc);
		free(m->fcols[c].col);
	}
	free(m->wcols);
	free(m->fcols);
	free(m->fdest);
	free(m->forig);
}

/* Number every column and count the rows and nonzeros they will need,
 * before anything is built: each commodity's arcs are those of its cone. */
static void model_columns(const struct problem *p, const struct texp *x, struct full_model *m)
{
	uint32_t na = tx_narcs(x), words = (tx_nnodes(x) + 63) / 64;
	size_t nc = (size_t)p->norig * p->nterm;
	uint64_t *fw = xmalloc(words * 8), *bw = xmalloc(words * 8), *cone = xmalloc(words * 8);
	uint64_t *wmark = xmalloc(((size_t)na + 63) / 64 * 8);

	m->wcols = xcalloc(p->norig, sizeof(*m->wcols));
	m->fcols = xcalloc(nc, sizeof(*m->fcols));
	m->fdest = xmalloc((nc + 1) * sizeof(uint32_t));
	m->forig = xmalloc((nc + 1) * sizeof(uint32_t));
	for (uint32_t i = 0; i < p->norig; i++) {
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
			struct colset *fc = &m->fcols[m->ncomm];

			m->fdest[m->ncomm] = d;
			m->forig[m->ncomm++] = i;
			for (uint32_t a = 0; a < na; a++)
				if (commodity_arc(x, cone, a, o, d)) {
					colset_add(fc, a, m->ncols++);
					if (p->copy && has_w(p, x, a))
						bit_set(wmark, a);
				}
			m->rows += 2 * (uint64_t)fc->n / 2 + 1; /* FC rows: at most nodes ~ arcs */
			m->nnz += 2 * (uint64_t)fc->n;
			if (p->copy) {
				m->rows += fc->n; /* LINK */
				m->nnz += 2 * (uint64_t)fc->n;
			}
		}
		if (p->copy)
			for (uint32_t a = 0; a < na; a++)
				if (bit_test(wmark, a)) {
					colset_add(&m->wcols[i], a, m->ncols++);
					m->nnz += 3;
				}
	}
	m->rcol = m->ncols++;
	m->rows += p->ncaps;
	free(fw);
	free(bw);
	free(cone);
	free(wmark);
}

/* Refuse a model over the memory limit, with what it would need. */
static int model_fits(const struct problem *p, const struct texp *x, const struct full_model *m,
		      struct fluid_result *r, struct ofc_error *err)
{
	r->model_rows = m->rows;
	r->model_cols = (uint64_t)m->ncols;
	r->model_nonzeros = m->nnz;
	/* lp_solve keeps the matrix by columns and rows with doubles and ints,
	 * plus per-row and per-column arrays: about 40 bytes per nonzero and
	 * 200 per row or column, as measured on these models. */
	r->model_bytes = 40 * m->nnz + 200 * (m->rows + (uint64_t)m->ncols);
	if (r->model_bytes <= p->mem_limit)
		return 0;
	char need[32], max[32];

	fmt_size(need, sizeof(need), r->model_bytes);
	fmt_size(max, sizeof(max), p->mem_limit);
	ofc_error_set(err, OFC_E_RUNTIME,
		      "the full LP at T = %u needs about %s (%llu columns, %llu "
		      "nonzeros), over the memory limit of %s: use --method mirrored or dw",
		      x->T, need, (unsigned long long)m->ncols, (unsigned long long)m->nnz, max);
	return -1;
}

/* Flow conservation of commodity fc from o to d, one row per node of its
 * cone: out - in = +1 at (o, 0), -1 at (d, T), 0 elsewhere. */
static void conservation_rows(const struct texp *x, struct lp *lp, const struct colset *fc,
			      uint32_t o, uint32_t d)
{
	int *rowof = xmalloc(((size_t)tx_nnodes(x) + 1) * sizeof(int));
	uint32_t nnodes = 0, nr = 0;
	uint32_t *nodes = xmalloc((2 * (size_t)fc->n + 2) * sizeof(uint32_t));

	for (uint32_t k = 0; k < fc->n; k++) {
		nodes[nnodes++] = tx_tail(x, fc->arc[k]);
		nodes[nnodes++] = tx_head(x, fc->arc[k]);
	}
	for (uint32_t k = 0; k < nnodes; k++)
		rowof[nodes[k]] = -1;
	for (uint32_t k = 0; k < nnodes; k++)
		if (rowof[nodes[k]] < 0)
			rowof[nodes[k]] = (int)nr++;
	struct row *rows = xcalloc(nr + 1, sizeof(*rows));
	uint32_t *rownode = xmalloc((nr + 1) * sizeof(uint32_t));

	for (uint32_t k = 0; k < nnodes; k++)
		rownode[rowof[nodes[k]]] = nodes[k];
	for (uint32_t k = 0; k < fc->n; k++) {
		row_put(&rows[rowof[tx_tail(x, fc->arc[k])]], fc->col[k], 1);
		row_put(&rows[rowof[tx_head(x, fc->arc[k])]], fc->col[k], -1);
	}
	for (uint32_t k = 0; k < nr; k++) {
		uint32_t node = rownode[k];

		row_add(lp, &rows[k], LP_EQ, node == o ? 1 : node == x->T * x->nv + d ? -1 : 0);
	}
	free(rows);
	free(rownode);
	free(nodes);
	free(rowof);
}

/* Column c's share of the capacity rows of the physical link under G^T arc a. */
static void count_capacity(const struct problem *p, const struct texp *x, uint32_t a, int c,
			   struct ivec *caprow)
{
	uint32_t e = tx_phys(x, a);

	if (e == UINT32_MAX)
		return;
	for (uint32_t j = p->arc_cap_off[e]; j < p->arc_cap_off[e + 1]; j++)
		ivec_push(&caprow[p->arc_caps[j]], c);
}

/* Commodity c's rows: conservation, and LINK f - w <= 0 when the
 * collective copies (its origin's w columns by G^T arc in wcol); an
 * all-to-all counts f in the capacity rows instead. */
static void commodity_rows(const struct problem *p, const struct texp *x, struct lp *lp,
			   const struct full_model *m, uint32_t c, const int *wcol,
			   struct ivec *caprow)
{
	const struct colset *fc = &m->fcols[c];

	conservation_rows(x, lp, fc, p->orig[m->forig[c]], m->fdest[c]);
	for (uint32_t k = 0; k < fc->n; k++) {
		if (!p->copy) {
			count_capacity(p, x, fc->arc[k], fc->col[k], caprow);
			continue;
		}
		int wc = wcol[fc->arc[k]];

		if (wc < 0)
			continue;
		int cols[2] = {fc->col[k], wc};
		double vals[2] = {1, -1};

		lp_add_row(lp, 2, cols, vals, LP_LE, 0);
	}
}

/* An origin's w: counted in the capacity rows, and conserved (3.12) at the
 * nodes of vertices that cannot copy. */
static void origin_rows(const struct problem *p, const struct texp *x, struct lp *lp,
			const struct colset *wc, struct ivec *caprow)
{
	uint32_t nn = tx_nnodes(x);
	int *rowof = xmalloc(((size_t)nn + 1) * sizeof(int));
	struct ivec cons = {0};

	for (uint32_t k = 0; k < wc->n; k++)
		count_capacity(p, x, wc->arc[k], wc->col[k], caprow);
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
	struct row *rows = xcalloc(cons.n + 1, sizeof(*rows));

	for (uint32_t k = 0; k < wc->n; k++) {
		int ends[2] = {rowof[tx_tail(x, wc->arc[k])], rowof[tx_head(x, wc->arc[k])]};

		for (int e = 0; e < 2; e++)
			if (ends[e] >= 0)
				row_put(&rows[ends[e]], wc->col[k], e == 0 ? 1 : -1);
	}
	for (size_t k = 0; k < cons.n; k++)
		row_add(lp, &rows[k], LP_EQ, 0);
	free(rows);
	free(cons.v);
	free(rowof);
}

/* The aggregated capacity rows: sum of the columns - b(L) R <= 0. */
static void capacity_rows(const struct problem *p, struct lp *lp, struct ivec *caprow, int rcol)
{
	double *vals = NULL;
	size_t cap = 0;

	for (uint32_t c = 0; c < p->ncaps; c++) {
		GROW(vals, cap, caprow[c].n + 2);
		for (size_t j = 0; j < caprow[c].n; j++)
			vals[j] = 1;
		ivec_push(&caprow[c], rcol);
		vals[caprow[c].n - 1] = -p->cap_bw[c];
		lp_add_row(lp, (int)caprow[c].n, caprow[c].v, vals, LP_LE, 0);
		free(caprow[c].v);
	}
	free(vals);
}

/* The whole model, R's column minimised (phase 1). */
static struct lp *model_build(const struct problem *p, const struct texp *x,
			      const struct full_model *m, enum lp_solver sv)
{
	uint32_t na = tx_narcs(x);
	struct lp *lp = lp_new_known(m->ncols, sv);
	/* each origin's w column per G^T arc, or -1 */
	int *wcol = xmalloc(((size_t)na + 1) * sizeof(int));
	struct ivec *caprow = xcalloc(p->ncaps, sizeof(*caprow));

	for (uint32_t c = 0; c < m->ncomm; c++) {
		uint32_t i = m->forig[c];

		if (c == 0 || m->forig[c - 1] != i) {
			for (uint32_t a = 0; a < na; a++)
				wcol[a] = -1;
			for (uint32_t k = 0; k < m->wcols[i].n; k++)
				wcol[m->wcols[i].arc[k]] = m->wcols[i].col[k];
		}
		commodity_rows(p, x, lp, m, c, wcol, caprow);
	}
	if (p->copy)
		for (uint32_t i = 0; i < p->norig; i++)
			origin_rows(p, x, lp, &m->wcols[i], caprow);
	capacity_rows(p, lp, caprow, m->rcol);
	free(caprow);
	free(wcol);
	lp_set_obj_coef(lp, m->rcol, 1);
	return lp;
}

/* Solve what lp holds now, within the problem's deadline. */
static int model_solve(const struct problem *p, struct lp *lp, int phase, double *seconds,
		       struct fluid_result *r, struct ofc_error *err)
{
	double t1 = now_seconds();

	if (p->deadline > 0)
		lp_set_time_limit(lp, p->deadline - now_seconds());
	enum lp_result res = lp_solve(lp, err);

	*seconds = now_seconds() - t1;
	if (res == LP_TIMEOUT || res == LP_FEASIBLE) {
		r->stop = FLUID_STOP_TIME;
		ofc_error_set(err, OFC_E_RUNTIME, "the full LP hit the time limit in phase %d",
			      phase);
		return -1;
	}
	if (res != LP_OPTIMAL) {
		r->stop = FLUID_STOP_LP;
		if (res != LP_FAILED)
			ofc_error_set(err, OFC_E_RUNTIME, "the full LP %sis %s",
				      phase == 2 ? "phase 2 " : "", lp_result_str(res));
		return -1;
	}
	return 0;
}

/* Phase 2's objective: the links' costs over w (copies) or f (all-to-all). */
static void cost_objective(const struct problem *p, const struct texp *x,
			   const struct full_model *m, struct lp *lp)
{
	const struct colset *sets = p->copy ? m->wcols : m->fcols;
	uint32_t nsets = p->copy ? p->norig : m->ncomm;

	lp_set_obj_coef(lp, m->rcol, 0);
	for (uint32_t i = 0; i < nsets; i++)
		for (uint32_t k = 0; k < sets[i].n; k++) {
			uint32_t e = tx_phys(x, sets[i].arc[k]);

			if (e != UINT32_MAX && p->net->cost[e] != 0)
				lp_set_obj_coef(lp, sets[i].col[k], p->net->cost[e]);
		}
}

/* The routing of solution xs: per origin, its w and flows, decomposed. */
static void model_routing(const struct problem *p, const struct texp *x, const struct full_model *m,
			  const double *xs, struct fluid_result *r)
{
	uint32_t na = tx_narcs(x);
	struct origin_flow of = {0};
	double deficit = 0;

	of.dest = xmalloc((p->nterm + 1) * sizeof(uint32_t));
	of.f = xcalloc(p->nterm + 1, sizeof(double *));
	if (p->copy)
		of.w = xmalloc(((size_t)na + 1) * sizeof(double));
	for (uint32_t c = 0; c < m->ncomm;) {
		uint32_t i = m->forig[c];

		of.origin = p->orig[i];
		of.ndest = 0;
		if (p->copy) {
			memset(of.w, 0, (size_t)na * sizeof(double));
			for (uint32_t k = 0; k < m->wcols[i].n; k++)
				of.w[m->wcols[i].arc[k]] = xs[m->wcols[i].col[k]];
		}
		for (; c < m->ncomm && m->forig[c] == i; c++) {
			double *f = xcalloc((size_t)na + 1, sizeof(double));

			for (uint32_t k = 0; k < m->fcols[c].n; k++)
				f[m->fcols[c].arc[k]] = xs[m->fcols[c].col[k]];
			if (p->copy) {
				of.dest[of.ndest] = m->fdest[c];
				of.f[of.ndest++] = f;
			} else {
				decompose_pair(x, of.origin, m->fdest[c], f, &r->routing);
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

int full_solve(const struct problem *p, const struct texp *x, bool phase2, struct fluid_result *r,
	       struct ofc_error *err)
{
	struct full_model m = {0};
	struct lp *lp = NULL;
	int rc = -1;

	model_columns(p, x, &m);
	if (model_fits(p, x, &m, r, err) < 0)
		goto out;
	r->lp_full = fluid_lp_solver(p, FLUID_LP_FULL, false, (uint32_t)m.ncols);
	lp = model_build(p, x, &m, r->lp_full);
	report_progress(p, "phase 1", x->T, 0, NAN, NAN, 0);
	if (model_solve(p, lp, 1, &r->seconds[0], r, err) < 0)
		goto out;
	r->rstar = lp_objective(lp);
	r->rstar_lower = r->rstar;
	r->optimal = true;
	r->classes = p->norig;
	r->group_order = 1;
	if (phase2) {
		double rfix = r->rstar * (1 + p->slack);

		lp_set_bounds(lp, m.rcol, rfix, rfix);
		cost_objective(p, x, &m, lp);
		report_progress(p, "phase 2", x->T, 0, r->rstar, r->rstar, 0);
		if (model_solve(p, lp, 2, &r->seconds[1], r, err) < 0)
			goto out;
		r->objective = lp_objective(lp);
		r->objective_lower = r->objective;
		double *xs = xmalloc(((size_t)m.ncols + 1) * sizeof(double));

		lp_solution(lp, xs);
		model_routing(p, x, &m, xs, r);
		free(xs);
	}
	rc = 0;
out:
	lp_free(lp);
	model_free(p, &m);
	return rc;
}
