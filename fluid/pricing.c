/* Pricing (notes Sec. 4.1, LP 5.1 with (3.12)): one origin's cheapest usage
 * under the master's prices, with no capacities.
 *
 * LP 5.1 holds a flow variable per (arc, destination): n times the arcs of
 * G^T, which at 128 GPUs is over a million columns and rows. By max-flow
 * min-cut, "some unit flow f_d <= w reaches d" is "every cut between (o, 0)
 * and (d, T) carries w >= 1", so the subproblem is an LP over w alone with
 * the cuts added as they are found violated (the directed cut relaxation of
 * the Steiner arborescence problem, with (3.12) kept as equalities): solve,
 * run a max flow to each destination on capacities w, add the min cut (and
 * the cut nearest the sink) of every destination short of 1, repeat. Cuts do
 * not depend on the prices, so one model per origin lives through all
 * iterations and both phases, and later pricings start with the cuts found.
 * Where servers other than the origin's may be swapped (orbits.c), the LP
 * has a variable per orbit of arcs under those swaps and the max flows run
 * to one destination per orbit (at 1,024 GPUs of model W: 341 columns and
 * 15 destinations where every column took 7,523 and 1,023).
 *
 * All-to-all needs no LP (notes Sec. 8.5): a destination's cheapest column
 * is a shortest path in the DAG G^T. */
#include "fluid/internal.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* Below this a max flow of 1 is short (and a cut is added). */
#define CUT_TOL 1e-7

static bool column_arc(const struct texp *x, uint32_t a, uint32_t o, const uint64_t *fw,
		       const uint64_t *bany)
{
	if (!bit_test(fw, tx_tail(x, a)) || !bit_test(bany, tx_head(x, a)))
		return false;
	if (tx_is_hold(x, a))
		return true;
	return tx_vertex_to(x, a) != o;
}

/* The max flows of a cut round, one per destination, on the request's
 * threads: each worker has a view of the pricer's max flow (worker 0 the
 * pricer's own) and puts the cuts it finds into an arena of its own; the
 * round then adds them in destination order, so the LP gets the same rows
 * in the same order on any number of threads. The arenas and views live
 * as long as the pricer. */
struct cut_worker {
	struct maxflow mf; /* a view (not worker 0's) */
	uint64_t *side, *side2;
	int *cols;    /* this round's cuts, as LP columns */
	double *vals; /* and their coefficients */
	size_t ncols, cap_cols;
	uint32_t *count; /* nlp: a cut's columns per LP column (orbits) */
};
/* Destination j's outcome in a round. */
struct cut_found {
	bool short_of_one; /* its max flow is short of 1: cuts follow */
	bool second;	   /* the cut nearest the sink is another one */
	uint32_t worker, n1, n2;
	size_t at; /* into the worker's cols and vals: n1 entries, then n2 */
};
/* A destination's max flow takes microseconds (256 GPUs: a round's 255
 * about 0.25 ms on one core), about what starting a thread costs: blocks
 * of CUT_GRAIN destinations, so a round starts at most ndest / CUT_GRAIN
 * threads. */
#define CUT_GRAIN 32
struct cut_par {
	unsigned nworkers;
	struct cut_worker *w;
	struct cut_found *found; /* per destination that finds cuts */
};

/* A cut's columns hashed (FNV-1a): the pool's index of its cuts. */
static uint32_t cut_hash(const int *cols, uint32_t n)
{
	uint64_t h = 1469598103934665603ull ^ n;

	for (uint32_t k = 0; k < n; k++)
		h = (h ^ (uint32_t)cols[k]) * 1099511628211ull;
	return (uint32_t)(h ^ h >> 32);
}

/* The pool's cut of the n columns cols with coefficients vals (both in
 * column order), or UINT32_MAX; *slot: where it is or would go. */
static uint32_t pool_find(const struct pricer *pr, const int *cols, const double *vals, uint32_t n,
			  uint32_t *slot)
{
	uint32_t mask = pr->cap_hash - 1, at = cut_hash(cols, n) & mask;

	for (;; at = (at + 1) & mask) {
		uint32_t i = pr->pool_hash[at];

		*slot = at;
		if (i == 0)
			return UINT32_MAX;
		i--;
		if (pr->pool_off[i + 1] - pr->pool_off[i] == n &&
		    !memcmp(pr->pool_col + pr->pool_off[i], cols, n * sizeof(int)) &&
		    !memcmp(pr->pool_val + pr->pool_off[i], vals, n * sizeof(double)))
			return i;
	}
}

/* The index grown to hold one more cut (rehashed into twice the room). */
static void pool_hash_room(struct pricer *pr)
{
	if (2 * ((size_t)pr->npool + 1) < pr->cap_hash)
		return;
	uint32_t cap = pr->cap_hash ? 2 * pr->cap_hash : 1024, slot;

	free(pr->pool_hash);
	pr->pool_hash = xcalloc(cap, sizeof(uint32_t));
	pr->cap_hash = cap;
	for (uint32_t i = 0; i < pr->npool; i++) {
		uint32_t n = pr->pool_off[i + 1] - pr->pool_off[i];

		pool_find(pr, pr->pool_col + pr->pool_off[i], pr->pool_val + pr->pool_off[i], n,
			  &slot);
		pr->pool_hash[slot] = i + 1;
	}
}

/* A cut of the n columns cols (coefficients vals) into the pool and the
 * LP; with skip_dups, slot is where pool_find (after pool_hash_room) would
 * put it. */
static int pool_put(struct pricer *pr, const int *cols, const double *vals, uint32_t n,
		    uint32_t slot)
{
	if (pr->skip_dups)
		pr->pool_hash[slot] = pr->npool + 1;
	if (pr->npool + 1 >= pr->cap_pool) {
		pr->cap_pool = pr->cap_pool ? 2 * pr->cap_pool : 256;
		pr->pool_off = xreallocarray(pr->pool_off, pr->cap_pool + 1, sizeof(uint32_t));
		pr->pool_slack = xreallocarray(pr->pool_slack, pr->cap_pool, 1);
		pr->pool_in = xreallocarray(pr->pool_in, pr->cap_pool, 1);
		pr->row_pool = xreallocarray(pr->row_pool, pr->cap_pool, sizeof(uint32_t));
		if (pr->npool == 0)
			pr->pool_off[0] = 0;
	}
	size_t at = pr->pool_off[pr->npool];

	if (at + n > pr->cap_pool_col) {
		pr->cap_pool_col = 2 * (at + n);
		pr->pool_col = xreallocarray(pr->pool_col, pr->cap_pool_col, sizeof(int));
		pr->pool_val = xreallocarray(pr->pool_val, pr->cap_pool_col, sizeof(double));
	}
	memcpy(pr->pool_col + at, cols, n * sizeof(int));
	memcpy(pr->pool_val + at, vals, n * sizeof(double));
	pr->pool_off[pr->npool + 1] = (uint32_t)(at + n);
	pr->pool_slack[pr->npool] = 0;
	pr->row_pool[pr->nrow_pool++] = pr->npool;
	pr->pool_in[pr->npool++] = 1;
	return lp_add_row(pr->lp, (int)n, cols, vals, LP_GE, 1) < 0 ? -1 : 0;
}

static int pool_add(struct pricer *pr, const int *cols, const double *vals, uint32_t n)
{
	uint32_t slot = 0;

	if (pr->skip_dups) {
		pool_hash_room(pr);
		pool_find(pr, cols, vals, n, &slot);
	}
	return pool_put(pr, cols, vals, n, slot);
}

/* A fresh LP: the columns and the (3.12) rows, no cuts. */
static void lp_fresh(struct pricer *pr)
{
	lp_free(pr->lp);
	pr->lp = lp_new_known((int)pr->nlp, pr->solver);
	pr->nrow_pool = 0;
	/* Rows are added after solves (the cuts): lp_solve's scaling, fixed
	 * at the first solve, then leaves new rows unscaled and re-solves
	 * stall; the coefficients are all 0 and +-1, so no scaling is needed.
	 * Dual simplex picks up after added rows. */
	lp_set_simplex(pr->lp, LP_SIMPLEX_DUAL);
	lp_set_scaling(pr->lp, LP_SCALE_NONE);
	for (uint32_t r = 0; r < pr->ncons; r++)
		lp_add_row(pr->lp, (int)(pr->cons_off[r + 1] - pr->cons_off[r]),
			   pr->cons_col + pr->cons_off[r], pr->cons_val + pr->cons_off[r], LP_EQ,
			   0);
}

/* The cut LP grows by the cuts each round adds, and a solve costs about
 * its rows times its iterations, while most cuts found under one call's
 * prices are slack under the next ones' (and many under the same call's
 * later rounds). So the cuts live in a pool; the LP holds those tight when
 * last looked at. Every PURGE_ROUNDS rounds of a call, and at the start of
 * a call, when at least PURGE_MIN and a quarter of the LP's cuts are slack
 * they leave the LP (pool_purge: deleted, the basis kept, on Clp; on
 * lp_solve the LP is rebuilt without them and starts from the slack
 * basis), and a pooled cut that the LP's solution violates goes back in
 * before max flows look for new ones. Model W, user CPU: all links
 * at 16 GPUs 0.90 -> 0.33 s, no NVLink at 64 GPUs 7.4 -> 1.3 s
 * (bench/results/fluid.md, "Fluid engine on model W"). */
#define PURGE_ROUNDS 16
#define PURGE_MIN    64

/* Mark the LP's cuts slack at sol; whether rebuilding is worth it. */
static bool pool_mark(struct pricer *pr, const double *sol)
{
	uint32_t in = 0, slack = 0;

	for (uint32_t i = 0; i < pr->npool; i++) {
		double act = 0;

		if (!pr->pool_in[i])
			continue;
		for (uint32_t k = pr->pool_off[i]; k < pr->pool_off[i + 1]; k++)
			act += pr->pool_val[k] * sol[pr->pool_col[k]];
		pr->pool_slack[i] = act > 1 + 1e-6;
		in++;
		slack += pr->pool_slack[i];
	}
	return slack >= PURGE_MIN && 4 * slack >= in;
}

/* The LP again without the cuts marked slack (they stay in the pool). */
static void pool_rebuild(struct pricer *pr)
{
	lp_fresh(pr);
	for (uint32_t i = 0; i < pr->npool; i++) {
		uint32_t n = pr->pool_off[i + 1] - pr->pool_off[i];

		if (!pr->pool_in[i])
			continue;
		if (pr->pool_slack[i]) {
			pr->pool_in[i] = 0;
			pr->purged++;
			continue;
		}
		lp_add_row(pr->lp, (int)n, pr->pool_col + pr->pool_off[i],
			   pr->pool_val + pr->pool_off[i], LP_GE, 1);
		pr->row_pool[pr->nrow_pool++] = i;
	}
}

/* The cuts marked slack out of the LP. A slack cut's row has its slack in
 * the basis (the row is not at its bound), so the rows left keep a basis
 * and the next solve starts warm from it, where a rebuilt LP starts from
 * the slack basis (the thousands of dual iterations the cuts cost again:
 * at 256 GPUs a cold solve after a purge took 1,400 iterations where the
 * rounds around it took tens). Where the solver cannot delete rows
 * (lp_solve) the LP is rebuilt: false, and the caller sets the costs
 * again. */
static bool pool_purge(struct pricer *pr)
{
	int *rows = xmalloc(((size_t)pr->nrow_pool + 1) * sizeof(int));
	uint32_t n = 0, kept = 0;

	for (uint32_t k = 0; k < pr->nrow_pool; k++)
		if (pr->pool_slack[pr->row_pool[k]])
			rows[n++] = (int)(pr->ncons + k);
	if (lp_delete_rows(pr->lp, (int)n, rows) < 0) {
		free(rows);
		pool_rebuild(pr);
		return false;
	}
	free(rows);
	for (uint32_t k = 0; k < pr->nrow_pool; k++) {
		uint32_t i = pr->row_pool[k];

		if (pr->pool_slack[i]) {
			pr->pool_in[i] = 0;
			pr->purged++;
		} else {
			pr->row_pool[kept++] = i;
		}
	}
	pr->nrow_pool = kept;
	return true;
}

/* The pool's cuts out of the LP that sol violates go back in (cheaper
 * than finding them again by max flows, round by round). */
static uint32_t pool_readd(struct pricer *pr, const double *sol)
{
	uint32_t back = 0;

	for (uint32_t i = 0; i < pr->npool; i++) {
		double act = 0;
		uint32_t n = pr->pool_off[i + 1] - pr->pool_off[i];

		if (pr->pool_in[i])
			continue;
		for (uint32_t k = pr->pool_off[i]; k < pr->pool_off[i + 1]; k++)
			act += pr->pool_val[k] * sol[pr->pool_col[k]];
		if (act >= 1 - CUT_TOL)
			continue;
		lp_add_row(pr->lp, (int)n, pr->pool_col + pr->pool_off[i],
			   pr->pool_val + pr->pool_off[i], LP_GE, 1);
		pr->row_pool[pr->nrow_pool++] = i;
		pr->pool_in[i] = 1;
		back++;
	}
	return back;
}

/* The LP column of column c. */
static inline uint32_t lp_of(const struct pricer *pr, uint32_t c)
{
	return pr->col_lp ? pr->col_lp[c] : c;
}

/* The LP columns counted in count (nlp, left zero) as a row's entries,
 * in order, into cols and vals from n; the row's length. */
static uint32_t counted_entries(const struct pricer *pr, uint32_t *count, int *cols, double *vals,
				uint32_t n)
{
	for (uint32_t j = 0; j < pr->nlp; j++)
		if (count[j]) {
			cols[n] = (int)j;
			vals[n++] = count[j];
			count[j] = 0;
		}
	return n;
}

/* The cut of side (the source's side, or with sink_side the sink's) as a
 * row: the LP columns crossing it into cols, in order, and into vals how
 * many of their columns do (1 each without orbits); how many entries.
 * count: nlp zeros, left zero. */
static uint32_t cut_cols(const struct pricer *pr, const uint64_t *side, bool sink_side, int *cols,
			 double *vals, uint32_t *count)
{
	uint32_t n = 0;

	for (uint32_t c = 0; c < pr->ncols; c++) {
		bool t_in = bit_test(side, pr->col_tail[c]), h_in = bit_test(side, pr->col_head[c]);

		if (!(sink_side ? (!t_in && h_in) : (t_in && !h_in)))
			continue;
		if (pr->col_lp) {
			count[pr->col_lp[c]]++;
			continue;
		}
		cols[n] = (int)c;
		vals[n++] = 1;
	}
	return pr->col_lp ? counted_entries(pr, count, cols, vals, n) : n;
}

/* A cut found by a max flow into the LP: 1 added, 0 where it is there
 * already (skip_dups), -1 (err). Destinations of one server often share
 * their origin's side of the cut: at 256 GPUs of model W the seven beside
 * the origin had one in each of 180 rounds, and the LP held it seven
 * times, larger and more degenerate for nothing (the 1,024-GPU allgather
 * 10.0 -> 6.7 s of CPU, 256 GPUs 1.73 -> 1.37 s, the same schedules;
 * bench/results/fluid.md).
 * With skip_dups a cut the pool holds out of the LP goes back in, and
 * one the LP holds is not added again. */
static int add_cut(struct pricer *pr, const int *cols, const double *vals, uint32_t n,
		   struct ofc_error *err)
{
	uint32_t slot = 0, i = UINT32_MAX;

	if (n == 0)
		return ofc_error_set(err, OFC_E_RUNTIME, "pricing: an empty cut (a bug)");
	if (pr->skip_dups) {
		pool_hash_room(pr);
		i = pool_find(pr, cols, vals, n, &slot);
	}
	if (i != UINT32_MAX) {
		if (pr->pool_in[i]) {
			pr->dup_cuts++;
			return 0;
		}
		if (lp_add_row(pr->lp, (int)n, cols, vals, LP_GE, 1) < 0)
			return ofc_error_set(err, OFC_E_RUNTIME, "pricing: lp_solve refused a cut");
		pr->row_pool[pr->nrow_pool++] = i;
		pr->pool_in[i] = 1;
		return 1;
	}
	if (pool_put(pr, cols, vals, n, slot) < 0)
		return ofc_error_set(err, OFC_E_RUNTIME, "pricing: lp_solve refused a cut");
	pr->cuts++;
	return 1;
}

static void cut_par_init(struct pricer *pr)
{
	uint32_t words = (tx_nnodes(pr->x) + 63) / 64;
	unsigned n = parallel_workers(pr->nsep, CUT_GRAIN, pr->p->opts->threads);
	struct cut_par *cp = xcalloc(1, sizeof(*cp));

	cp->nworkers = n;
	cp->w = xcalloc(n, sizeof(*cp->w));
	for (unsigned i = 0; i < n; i++) {
		if (i > 0)
			maxflow_view(&cp->w[i].mf, &pr->mf);
		cp->w[i].side = xmalloc(words * 8);
		cp->w[i].side2 = xmalloc(words * 8);
		if (pr->col_lp)
			cp->w[i].count = xcalloc((size_t)pr->nlp + 1, sizeof(uint32_t));
	}
	cp->found = xcalloc(pr->nsep + 1, sizeof(*cp->found));
	pr->par = cp;
}

static void cut_par_free(struct cut_par *cp)
{
	if (!cp)
		return;
	for (unsigned i = 0; i < cp->nworkers; i++) {
		if (i > 0)
			maxflow_free(&cp->w[i].mf);
		free(cp->w[i].side);
		free(cp->w[i].side2);
		free(cp->w[i].cols);
		free(cp->w[i].vals);
		free(cp->w[i].count);
	}
	free(cp->w);
	free(cp->found);
	free(cp);
}

/* Whether the source's side and the sink's are complements: the same cut. */
static bool same_cut(const uint64_t *side, const uint64_t *side2, uint32_t nn)
{
	uint32_t words = (nn + 63) / 64;

	for (uint32_t k = 0; k < words; k++) {
		uint64_t mask = k + 1 < words || nn % 64 == 0 ? ~0ull : (1ull << (nn % 64)) - 1;

		if (((side[k] ^ ~side2[k]) & mask) != 0)
			return false;
	}
	return true;
}

/* A worker's part of a round: the i-th separating destination's max flow
 * on capacities w and, when it is short of 1, its min cut and the cut
 * nearest the sink. */
static void cut_dest(void *ctx, size_t i, unsigned worker)
{
	struct pricer *pr = ctx;
	const struct texp *x = pr->x;
	struct cut_worker *cw = &pr->par->w[worker];
	struct cut_found *fd = &pr->par->found[i];
	struct maxflow *mf = worker ? &cw->mf : &pr->mf;
	uint32_t sink = x->T * x->nv + pr->dest[pr->sep[i]];

	fd->short_of_one = maxflow_run(mf, pr->origin, sink, 1) < 1 - CUT_TOL;
	if (!fd->short_of_one)
		return;
	size_t cap = cw->cap_cols;

	GROW(cw->cols, cw->cap_cols, cw->ncols + 2 * (size_t)pr->nlp);
	if (cw->cap_cols != cap)
		cw->vals = xreallocarray(cw->vals, cw->cap_cols, sizeof(double));
	fd->worker = worker;
	fd->at = cw->ncols;
	maxflow_source_side(mf, pr->origin, cw->side);
	fd->n1 =
	    cut_cols(pr, cw->side, false, cw->cols + cw->ncols, cw->vals + cw->ncols, cw->count);
	maxflow_sink_side(mf, sink, cw->side2);
	fd->second = !same_cut(cw->side, cw->side2, tx_nnodes(x));
	fd->n2 = fd->second ? cut_cols(pr, cw->side2, true, cw->cols + cw->ncols + fd->n1,
				       cw->vals + cw->ncols + fd->n1, cw->count)
			    : 0;
	cw->ncols += fd->n1 + fd->n2;
}

/* A round's max flows and the cuts they find, added in destination order;
 * how many rows the LP gained, or -1 (err). A short destination whose cuts
 * the LP holds already (short within the solver's tolerance) adds none,
 * and a round that adds none ends the call: the same rows again would
 * give the same solution, round after round. */
static int64_t find_cuts(struct pricer *pr, struct ofc_error *err)
{
	struct cut_par *cp = pr->par;
	int64_t added = 0;

	for (unsigned i = 0; i < cp->nworkers; i++)
		cp->w[i].ncols = 0;
	parallel_for(pr->nsep, CUT_GRAIN, cp->nworkers, cut_dest, pr);
	for (uint32_t i = 0; i < pr->nsep; i++) {
		const struct cut_found *fd = &cp->found[i];

		/* (a worker that found no cut has no cols array: NULL) */
		if (!fd->short_of_one)
			continue;
		const int *cols = cp->w[fd->worker].cols + fd->at;
		const double *vals = cp->w[fd->worker].vals + fd->at;

		int a1 = add_cut(pr, cols, vals, fd->n1, err), a2 = 0;

		if (a1 >= 0 && fd->second)
			a2 = add_cut(pr, cols + fd->n1, vals + fd->n1, fd->n2, err);
		if (a1 < 0 || a2 < 0)
			return -1;
		added += a1 + a2;
	}
	return added;
}

/* (3.12): w in = w out at every node of a vertex that cannot copy, a row
 * per node over the columns. */
static void cons_rows(struct pricer *pr)
{
	const struct problem *p = pr->p;
	const struct texp *x = pr->x;
	uint32_t nn = tx_nnodes(x);
	uint32_t *deg = xcalloc((size_t)nn + 2, sizeof(uint32_t));

	for (uint32_t c = 0; c < pr->ncols; c++) {
		uint32_t a = pr->col_arc[c];

		if (p->conserve[tx_vertex_from(x, a)])
			deg[tx_tail(x, a) + 1]++;
		if (p->conserve[tx_vertex_to(x, a)])
			deg[tx_head(x, a) + 1]++;
	}
	for (uint32_t v = 0; v < nn; v++)
		deg[v + 1] += deg[v];
	int *rc = xmalloc(((size_t)deg[nn] + 1) * sizeof(int));
	double *rv = xmalloc(((size_t)deg[nn] + 1) * sizeof(double));
	uint32_t *fill = xmalloc(((size_t)nn + 1) * sizeof(uint32_t));

	memcpy(fill, deg, (size_t)nn * sizeof(uint32_t));
	for (uint32_t c = 0; c < pr->ncols; c++) {
		uint32_t a = pr->col_arc[c], t = tx_tail(x, a), h = tx_head(x, a);

		if (p->conserve[tx_vertex_from(x, a)]) {
			rc[fill[t]] = (int)c;
			rv[fill[t]++] = -1;
		}
		if (p->conserve[tx_vertex_to(x, a)]) {
			rc[fill[h]] = (int)c;
			rv[fill[h]++] = 1;
		}
	}
	/* Kept to rebuild the LP: a row per node with entries; empty nodes
	 * add nothing between them, so the rows are contiguous in rc. */
	pr->cons_off = xmalloc(((size_t)nn + 1) * sizeof(uint32_t));
	pr->cons_off[0] = 0;
	for (uint32_t v = 0; v < nn; v++)
		if (deg[v + 1] > deg[v])
			pr->cons_off[++pr->ncons] = deg[v + 1];
	pr->cons_col = rc;
	pr->cons_val = rv;
	free(deg);
	free(fill);
}

/* Start with the obvious cuts: the origin uploads a unit, and each
 * destination downloads one (its arrivals at any layer); on the orbits
 * one per orbit of destinations, the others' rows being the same. */
static void first_cuts(struct pricer *pr)
{
	const struct texp *x = pr->x;
	double *vals = xmalloc(((size_t)pr->ncols + 1) * sizeof(double));
	uint32_t *count = pr->col_lp ? xcalloc((size_t)pr->nlp + 1, sizeof(uint32_t)) : NULL;

	for (int side = 0; side < 2; side++)
		for (uint32_t i = 0; i < (side ? pr->nsep : 1); i++) {
			uint32_t v = side ? pr->dest[pr->sep[i]] : pr->origin, n = 0;

			for (uint32_t c = 0; c < pr->ncols; c++) {
				uint32_t a = pr->col_arc[c];

				if (tx_is_hold(x, a))
					continue;
				if (!(side ? tx_vertex_to(x, a) == v : tx_vertex_from(x, a) == v))
					continue;
				if (count) {
					count[pr->col_lp[c]]++;
					continue;
				}
				pr->objc[n] = (int)c;
				vals[n++] = 1;
			}
			if (count)
				n = counted_entries(pr, count, pr->objc, vals, n);
			pool_add(pr, pr->objc, vals, n);
		}
	free(vals);
	free(count);
}

/* The (3.12) rows on the orbits: the row of each node that is its orbit's
 * own (the others' are the same row), its columns' LP columns merged and
 * those that cancel dropped. */
static void cons_on_orbits(struct pricer *pr, const uint32_t *vrep)
{
	uint32_t nv = pr->x->nv;
	uint32_t nrows = 0, at = 0, *count = xcalloc((size_t)pr->nlp + 1, sizeof(uint32_t));
	/* (the rows are rewritten in place, shorter: their old ends read here) */
	uint32_t *off = xmalloc(((size_t)pr->ncons + 1) * sizeof(uint32_t));
	double *sum = xcalloc((size_t)pr->nlp + 1, sizeof(double));
	int *touched = xmalloc(((size_t)pr->nlp + 1) * sizeof(int));

	memcpy(off, pr->cons_off, ((size_t)pr->ncons + 1) * sizeof(uint32_t));
	for (uint32_t r = 0; r < pr->ncons; r++) {
		uint32_t first = off[r], m = 0;
		uint32_t c0 = (uint32_t)pr->cons_col[first], a = pr->col_arc[c0];
		/* the row's node: the end of its first column that conserves */
		uint32_t node = pr->cons_val[first] > 0 ? tx_head(pr->x, a) : tx_tail(pr->x, a);

		if (vrep[node % nv] != node % nv)
			continue;
		for (uint32_t k = first; k < off[r + 1]; k++) {
			uint32_t j = pr->col_lp[pr->cons_col[k]];

			if (!count[j]++)
				touched[m++] = (int)j;
			sum[j] += pr->cons_val[k];
		}
		for (uint32_t i = 1; i < m; i++) /* column order: an insertion sort */
			for (uint32_t q = i; q > 0 && touched[q - 1] > touched[q]; q--) {
				int t = touched[q];

				touched[q] = touched[q - 1];
				touched[q - 1] = t;
			}
		uint32_t start = at;

		for (uint32_t i = 0; i < m; i++) {
			uint32_t j = (uint32_t)touched[i];

			if (sum[j] != 0) {
				pr->cons_col[at] = (int)j;
				pr->cons_val[at++] = sum[j];
			}
			sum[j] = 0;
			count[j] = 0;
		}
		if (at > start)
			pr->cons_off[++nrows] = at;
	}
	pr->ncons = nrows;
	free(off);
	free(count);
	free(sum);
	free(touched);
}

int pricer_init(struct pricer *pr, const struct problem *p, const struct texp *x, uint32_t origin,
		const struct fluid_group *grp, struct ofc_error *err)
{
	bool mirrored = grp != NULL;
	uint32_t na = tx_narcs(x), nn = tx_nnodes(x), words = (nn + 63) / 64;
	uint64_t *fw = xmalloc(words * 8), *bany = xcalloc(words, 8), *b = xmalloc(words * 8);

	memset(pr, 0, sizeof(*pr));
	pr->p = p;
	pr->x = x;
	pr->origin = origin;
	pr->stall_floor =
	    p->opts && p->opts->stall_floor <= INT_MAX ? (int)p->opts->stall_floor : 0;
	pr->dest = xmalloc((p->nterm + 1) * sizeof(uint32_t));
	for (uint32_t j = 0; j < p->nterm; j++)
		if (p->term[j] != origin)
			pr->dest[pr->ndest++] = p->term[j];
	texp_forward(x, origin, fw);
	/* Destinations that can store: reached (the origin in its cone) when
	 * it reaches (d, T), and their cones' union in one pass
	 * (texp_backward_any), not one pass per destination. */
	bool hold_all = true;

	for (uint32_t j = 0; j < pr->ndest; j++)
		hold_all = hold_all && x->hold_of[pr->dest[j]] != UINT32_MAX;
	if (hold_all)
		texp_backward_any(x, pr->dest, pr->ndest, origin, bany);
	for (uint32_t j = 0; j < pr->ndest; j++) {
		if (!hold_all)
			texp_backward(x, pr->dest[j], origin, b);
		if ((!hold_all && !bit_test(b, origin)) ||
		    !bit_test(fw, (size_t)x->T * x->nv + pr->dest[j])) {
			ofc_error_set(err, OFC_E_INPUT,
				      "commodity %s -> %s cannot reach its destination within T = "
				      "%u hops",
				      fluid_vertex_name(p->net, origin),
				      fluid_vertex_name(p->net, pr->dest[j]), x->T);
			free(fw);
			free(bany);
			free(b);
			return -1;
		}
		for (uint32_t k = 0; k < words && !hold_all; k++)
			bany[k] |= b[k];
	}
	pr->arc_col = xmalloc(((size_t)na + 1) * sizeof(uint32_t));
	pr->col_arc = xmalloc(((size_t)na + 1) * sizeof(uint32_t));
	uint32_t *mfarcs = xmalloc(((size_t)na + 1) * sizeof(uint32_t)), nmf = 0;

	for (uint32_t a = 0; a < na; a++) {
		pr->arc_col[a] = UINT32_MAX;
		if (!column_arc(x, a, origin, fw, bany))
			continue;
		mfarcs[nmf++] = a;
		if (p->copy && (!tx_is_hold(x, a) || p->conserve[tx_vertex_from(x, a)])) {
			pr->arc_col[a] = pr->ncols;
			pr->col_arc[pr->ncols++] = a;
		}
	}
	free(fw);
	free(bany);
	free(b);
	pr->cap = xcalloc((size_t)na + 1, sizeof(double));
	pr->objv = xmalloc(((size_t)na + 1) * sizeof(double));
	pr->objc = xmalloc(((size_t)na + 1) * sizeof(int));
	pr->dist = xmalloc(((size_t)nn + 1) * sizeof(double));
	pr->pred = xmalloc(((size_t)nn + 1) * sizeof(uint32_t));
	if (!p->copy) {
		pr->col_arc = xreallocarray(pr->col_arc, nmf + 1, sizeof(uint32_t));
		memcpy(pr->col_arc, mfarcs, nmf * sizeof(uint32_t));
		pr->ncols = nmf; /* the arcs a path may use */
		free(mfarcs);
		return 0;
	}
	maxflow_init(&pr->mf, x, mfarcs, nmf);
	for (uint32_t i = 0; i < nmf; i++)
		pr->cap[mfarcs[i]] = 2; /* free hold-overs: more than any cut needs */
	free(mfarcs);
	cons_rows(pr);
	pr->col_tail = xmalloc(((size_t)pr->ncols + 1) * sizeof(uint32_t));
	pr->col_head = xmalloc(((size_t)pr->ncols + 1) * sizeof(uint32_t));
	for (uint32_t c = 0; c < pr->ncols; c++) {
		pr->col_tail[c] = tx_tail(x, pr->col_arc[c]);
		pr->col_head[c] = tx_head(x, pr->col_arc[c]);
	}
	uint32_t *vrep = NULL;

	if (!pricer_orbits(pr, grp, &vrep)) {
		pr->nlp = pr->ncols;
		pr->sep = xmalloc((pr->ndest + 1) * sizeof(uint32_t));
		for (uint32_t j = 0; j < pr->ndest; j++)
			pr->sep[j] = j;
		pr->nsep = pr->ndest;
	} else {
		cons_on_orbits(pr, vrep);
		free(vrep);
	}
	pr->solver = fluid_lp_solver(p, FLUID_LP_PRICING, mirrored, pr->ncols);
	/* Only where the pricing is mirrored (an origin a class of the
	 * group's): there the answers are the same with the rows fewer (the
	 * corpus; model W at 256 and 1,024 GPUs). On plain DW the LP's path
	 * moved the 8-GPU broadcast's trees to a slower schedule (latency
	 * 5.49 -> 6.83 ms, a degenerate LP's other optimum): there it
	 * stays as it was. */
	pr->skip_dups = mirrored;
	cut_par_init(pr);
	lp_fresh(pr);
	first_cuts(pr);
	return 0;
}

void pricer_release(struct pricer *pr)
{
	lp_free(pr->lp);
	pr->lp = NULL;
	free(pr->pool_off);
	free(pr->pool_slack);
	free(pr->pool_col);
	free(pr->pool_val);
	free(pr->pool_in);
	free(pr->row_pool);
	free(pr->pool_hash);
	pr->pool_hash = NULL;
	pr->cap_hash = 0;
	pr->pool_off = NULL;
	pr->pool_slack = NULL;
	pr->pool_col = NULL;
	pr->pool_val = NULL;
	pr->pool_in = NULL;
	pr->row_pool = NULL;
	pr->npool = pr->cap_pool = pr->nrow_pool = 0;
	pr->cap_pool_col = 0;
	cut_par_free(pr->par);
	pr->par = NULL;
	if (pr->mf.off)
		maxflow_free(&pr->mf);
	memset(&pr->mf, 0, sizeof(pr->mf));
}

void pricer_free(struct pricer *pr)
{
	pricer_release(pr);
	free(pr->cons_off);
	free(pr->cons_col);
	free(pr->cons_val);
	free(pr->dest);
	free(pr->sep);
	free(pr->col_lp);
	free(pr->col_arc);
	free(pr->col_tail);
	free(pr->col_head);
	free(pr->arc_col);
	free(pr->cap);
	free(pr->objv);
	free(pr->objc);
	free(pr->dist);
	free(pr->pred);
	memset(pr, 0, sizeof(*pr));
}

/* The ways of stating a cut LP to lp_solve (see pricer_tree): its scaling,
 * and the costs as they are or each spread by up to rho (relative) in a
 * per-seed pattern. lp_solve is erratic on these LPs: a cut LP of 64-GPU
 * model W, no NVLink (1257 columns, 5850 rows) written out and given to
 * the lp_solve CLI finished in 30 s under no pivoting rule or
 * anti-degeneracy option, nor spread by 1e-7; spread by 1e-6 it took
 * 3.5 s, with geometric scaling 2.1 s. Another (16 GPUs, plain DW,
 * 1160 rows) took 0.05 s with mean scaling and ran out 15 s every other
 * way. The first way is the one that solved model W fastest overall
 * (bench/results/fluid.md, "Fluid engine on model W"). */
static const struct {
	enum lp_scaling scaling;
	double rho;
	uint32_t seed;
} ways[] = {{LP_SCALE_NONE, 1e-6, 0},
	    {LP_SCALE_NONE, 0, 0},
	    {LP_SCALE_GEOMETRIC_DYNAMIC, 0, 0},
	    {LP_SCALE_MEAN_DYNAMIC, 0, 0},
	    {LP_SCALE_GEOMETRIC_DYNAMIC, 1e-6, 2},
	    {LP_SCALE_NONE, 1e-5, 3}};
#define NWAYS (sizeof(ways) / sizeof(ways[0]))
/* A single solve of more simplex iterations than this many times the most
 * any solve of this pricer took (and STALL_FLOOR) is taken for a stall; the
 * next ways get twice as many, and after STALL_TRIES the call gives up (the
 * caller goes on without this bound). Counted in iterations, not seconds,
 * so that where a solve is given up, and so the answer, does not depend on
 * the machine's speed or load. The floor: 20x and more the most any solve
 * that finished took, measured (63 on the corpus, up to 1,505 on model W's
 * 16 GPUs, 400-1,800 on its 256-GPU allgather), about 2 s of this LP. */
#define STALL_FACTOR 20
#define STALL_FLOOR  50000
#define STALL_TRIES  2

/* A fixed spread in [0, 1) per column and seed: the same LP every call. */
static double spread(uint32_t c, uint32_t seed)
{
	return (double)(((c + 1) * 2654435761u ^ seed * 0x9e3779b9u) >> 8 & 0xffff) / 65536.0;
}

/* The LP's costs under per-arc costs chat plus eps each: a column's, or
 * on the orbits the sum over the orbit's columns; into pr->objc/objv. */
static void lp_costs(struct pricer *pr, const double *chat, double eps)
{
	const struct texp *x = pr->x;

	memset(pr->objv, 0, pr->nlp * sizeof(double));
	for (uint32_t c = 0; c < pr->ncols; c++) {
		uint32_t e = tx_phys(x, pr->col_arc[c]);

		pr->objv[lp_of(pr, c)] += (e == UINT32_MAX ? 0 : chat[e]) + eps;
	}
	for (uint32_t j = 0; j < pr->nlp; j++)
		pr->objc[j] = (int)j;
}

/* The costs: chat, a tie-break eps, and the way's spread. */
static void set_costs(struct pricer *pr, const double *chat, uint32_t way)
{
	const struct texp *x = pr->x;
	double scale = 0;

	for (uint32_t c = 0; c < pr->ncols; c++) {
		uint32_t e = tx_phys(x, pr->col_arc[c]);

		if (e != UINT32_MAX && chat[e] > scale)
			scale = chat[e];
	}
	double eps = (scale > 0 ? scale : 1) * 1e-9;

	lp_costs(pr, chat, eps);
	for (uint32_t j = 0; ways[way].rho > 0 && j < pr->nlp; j++)
		pr->objv[j] *= 1 + ways[way].rho * spread(j, ways[way].seed);
	lp_set_objective(pr->lp, (int)pr->nlp, pr->objc, pr->objv);
}

/* Solve, add the violated cuts, repeat until none is (LP_OPTIMAL, sol the
 * usage), or a solve ends otherwise: its result, LP_TIMEOUT past cap
 * simplex iterations for one solve or past the deadline, or LP_FAILED
 * (err) when a cut cannot be added. */
static enum lp_result cut_rounds(struct pricer *pr, double *sol, int cap, const double *chat,
				 uint32_t way, struct ofc_error *err)
{
	for (uint32_t round = 1;; round++) {
		double left = pr->p->deadline > 0 ? pr->p->deadline - now_seconds() : 0;

		/* the user's deadline, the one thing here time decides */
		if (pr->p->deadline > 0 && left <= 0)
			return LP_TIMEOUT;
		lp_set_time_limit(pr->lp, left);
		lp_set_iteration_limit(pr->lp, cap);
		enum lp_result res = lp_solve(pr->lp, err);

		pr->rounds++;
		if (res != LP_OPTIMAL)
			return res;
		if (lp_iterations(pr->lp) > pr->most)
			pr->most = lp_iterations(pr->lp);
		lp_solution(pr->lp, sol);
		for (uint32_t c = 0; c < pr->ncols; c++) {
			double s = sol[lp_of(pr, c)];

			pr->cap[pr->col_arc[c]] = s > 0 ? s : 0;
		}
		maxflow_set_caps(&pr->mf, pr->cap);
		if (round % PURGE_ROUNDS == 0 && pool_mark(pr, sol) && !pool_purge(pr)) {
			set_costs(pr, chat, way);
			lp_set_scaling(pr->lp, ways[way].scaling);
			lp_set_simplex(pr->lp, LP_SIMPLEX_DUAL);
		}
		uint32_t added = pool_readd(pr, sol);
		int64_t found = find_cuts(pr, err);

		if (found < 0)
			return LP_FAILED;
		added += (uint32_t)found;
		if (!added)
			return LP_OPTIMAL;
	}
}

/* The cost under chat of an LP solution (per column). */
static double usage_cost(const struct pricer *pr, const double *chat, const double *sol)
{
	double v = 0;

	for (uint32_t c = 0; c < pr->ncols; c++) {
		uint32_t e = tx_phys(pr->x, pr->col_arc[c]);
		double s = sol[lp_of(pr, c)];

		if (s > 1e-12 && e != UINT32_MAX)
			v += chat[e] * s;
	}
	return v;
}

/* The bound of a call whose costs were spread (way's rho > 0): the same
 * cuts under the true costs (a relaxation of the subproblem, a lower
 * bound whether or not the usage meets every cut), by a capped warm primal
 * re-solve from a basis optimal to within the spread. Every cost grew by
 * at most the factor (1 + rho), so the spread optimum over (1 + rho)
 * bounds it when the re-solve does not finish (up to the tie-break eps,
 * as unperturbed). */
static double true_cost_bound(struct pricer *pr, const double *chat, uint32_t way, int cap)
{
	double p_opt = lp_objective(pr->lp), left = 0;
	struct ofc_error perr = {0};

	lp_costs(pr, chat, 0);
	lp_set_objective(pr->lp, (int)pr->nlp, pr->objc, pr->objv);
	lp_set_simplex(pr->lp, LP_SIMPLEX_PRIMAL);
	if (pr->p->deadline > 0)
		left = pr->p->deadline - now_seconds();
	lp_set_time_limit(pr->lp, left > 0 ? left : 0);
	lp_set_iteration_limit(pr->lp, cap);
	if (lp_solve(pr->lp, &perr) == LP_OPTIMAL)
		return lp_objective(pr->lp);
	return p_opt / (1 + ways[way].rho);
}

int pricer_tree(struct pricer *pr, const double *chat, double known, double *w, double *value,
		double *bound, struct ofc_error *err)
{
	const struct texp *x = pr->x;
	uint32_t na = tx_narcs(x);
	double *sol = xmalloc(((size_t)pr->ncols + 1) * sizeof(double));
	enum lp_result res = LP_FAILED;
	uint32_t way = pr->way;
	int rc = -1;

	/* A tiny cost on every arc (hold-overs too) breaks ties towards fewer
	 * transfers: with zero prices the LP would be free to load arcs no
	 * destination needs, and such columns slow the master down. The
	 * column's value below is its true price.
	 *
	 * Each attempt starts from the slack basis, which is dual feasible
	 * (costs >= 0, cuts >= 1), and runs the dual simplex alone, also after
	 * added cuts. Warm starts after a price change need the primal
	 * simplex, which stalls on these degenerate LPs (16-GPU model W, no
	 * NVLink: minutes in one solve, where cold dual starts take 0.1 s).
	 * But where the caller asks (pr->warm: the master over actual trees,
	 * whose columns are trees, not this LP's usage) and the LP is Clp's,
	 * the first attempt starts from the last call's basis, by Clp's dual
	 * simplex, which takes the dual infeasibilities the new prices made:
	 * at 1,024 GPUs those calls were single cold solves of 5,000-6,800
	 * iterations, about a third of the cut LP's time. Not for the
	 * relaxation's own columns: there a warm start gave the master one
	 * column again and again that never improved it (8 GPUs, all links,
	 * DW broadcast at T = 4: out of its time), where cold starts move on.
	 *
	 * The dual simplex can stall too: the prices of a symmetric fabric
	 * are equal on whole classes of arcs, and on such a dual degenerate
	 * LP lp_solve can cycle for as long as it is given (64-GPU model W,
	 * no NVLink: one cut LP ran out a 600 s limit). Spreading the costs
	 * a little breaks that, but a spread can stall others (8 GPUs, all
	 * links, T = 6 stalls spread and not as it is), and so does lp_solve's
	 * scaling, one way or another on different LPs. So a solve that takes
	 * STALL_FACTOR times more simplex iterations than any before is given
	 * up and the round starts again (the cuts kept) the next way; the way
	 * that worked is kept for the next call. After STALL_TRIES ways this
	 * call gives up: -2, and the caller goes on without the bound. */
	long long lo = pr->stall_floor ? pr->stall_floor : STALL_FLOOR,
		  most = (long long)STALL_FACTOR * pr->most;
	int cap = (int)(most < lo ? lo : most < INT_MAX / 2 ? most : INT_MAX / 2);

	bool warm = pr->warm && pr->solves > 0 && pr->solver == LP_SOLVER_CLP;

	if (pr->rebuild && warm) {
		/* marked again at the LP's basic solution now (the bound's
		 * re-solve moved it), so that the rows deleted are basic */
		lp_solution(pr->lp, sol);
		pool_mark(pr, sol);
		pool_purge(pr);
		pr->rebuild = false;
	} else if (pr->rebuild) {
		pool_rebuild(pr);
		pr->rebuild = false;
	}

	for (uint32_t attempt = 0; attempt < STALL_TRIES; attempt++) {
		set_costs(pr, chat, way);
		lp_set_scaling(pr->lp, ways[way].scaling);
		if (!warm || attempt > 0)
			lp_reset_basis(pr->lp);
		lp_set_simplex(pr->lp, LP_SIMPLEX_DUAL);
		res = cut_rounds(pr, sol, attempt ? 2 * cap : cap, chat, way, err);

		/* A usage that meets every cut costs known: an "optimum" above
		 * it (beyond the spread) is lp_solve gone wrong, as seen with
		 * dynamic scaling (13 times known); it would make a false
		 * bound. Taken as a stall: the next way. */
		if (res == LP_OPTIMAL &&
		    usage_cost(pr, chat, sol) > known * (1 + ways[way].rho + 1e-5) +
						    1e-9 * (fabs(known) > 1 ? fabs(known) : 1)) {
			pr->wrong++;
			res = LP_FAILED;
		}
		if (res == LP_OPTIMAL)
			break;
		if (pr->p->deadline > 0 && now_seconds() >= pr->p->deadline)
			break;
		if (res == LP_FAILED && err->code && !strstr(err->msg, "lp_solve") &&
		    !strstr(err->msg, "Clp"))
			break; /* not the solver's trouble */
		pr->stalls++;
		way = (way + 1) % NWAYS;
		memset(err, 0, sizeof(*err));
	}
	if (res != LP_OPTIMAL) {
		/* out of time (the deadline, or every way stalled): no bound */
		bool stalled = res == LP_TIMEOUT || res == LP_FEASIBLE || !err->code;

		if (res != LP_FAILED || !err->code)
			ofc_error_set(err, OFC_E_RUNTIME, "pricing LP %s",
				      stalled ? "stalled" : lp_result_str(res));
		rc = stalled ? -2 : -1;
		pr->way = way;
		goto out;
	}
	pr->way = way;
	pr->solves++;
	pr->rebuild = pool_mark(pr, sol);
	memset(w, 0, (size_t)na * sizeof(double));
	*value = 0;
	for (uint32_t c = 0; c < pr->ncols; c++) {
		uint32_t a = pr->col_arc[c], e = tx_phys(x, a);
		double s = sol[lp_of(pr, c)];

		if (s <= 1e-12)
			continue;
		w[a] = s;
		if (e != UINT32_MAX)
			*value += chat[e] * s;
	}
	*bound = *value;
	if (ways[way].rho > 0 && (*bound = true_cost_bound(pr, chat, way, cap)) > *value)
		*bound = *value;
	rc = 0;
out:
	free(sol);
	return rc;
}

void pricer_paths(struct pricer *pr, const double *chat, uint32_t *arcs, uint32_t *len,
		  double *cost)
{
	const struct texp *x = pr->x;
	uint32_t nn = tx_nnodes(x), T = x->T, nv = x->nv;
	uint32_t *hops = xmalloc(((size_t)nn + 1) * sizeof(uint32_t));

	for (uint32_t i = 0; i < nn; i++) {
		pr->dist[i] = INFINITY;
		pr->pred[i] = UINT32_MAX;
	}
	pr->dist[pr->origin] = 0;
	hops[pr->origin] = 0;
	/* The DAG in layer order; ties go to fewer transfers. */
	for (uint32_t t = 0; t < T; t++)
		for (uint32_t v = 0; v < nv; v++) {
			uint32_t u = t * nv + v;

			if (isinf(pr->dist[u]))
				continue;
			for (uint32_t k = x->out_off[v]; k < x->out_off[v + 1]; k++) {
				uint32_t e = x->out_arc[k], h = x->net->head[e],
					 y = (t + 1) * nv + h;
				double d = pr->dist[u] + chat[e];

				if (h == pr->origin)
					continue;
				if (d < pr->dist[y] - 1e-15 ||
				    (d <= pr->dist[y] + 1e-15 && hops[u] + 1 < hops[y])) {
					pr->dist[y] = d;
					pr->pred[y] = t * x->ne + e;
					hops[y] = hops[u] + 1;
				}
			}
			if (x->hold_of[v] != UINT32_MAX) {
				uint32_t y = (t + 1) * nv + v;

				if (pr->dist[u] < pr->dist[y] - 1e-15 ||
				    (pr->dist[u] <= pr->dist[y] + 1e-15 && hops[u] < hops[y])) {
					pr->dist[y] = pr->dist[u];
					pr->pred[y] = tx_hold(x, v, t);
					hops[y] = hops[u];
				}
			}
		}
	for (uint32_t j = 0; j < pr->ndest; j++) {
		uint32_t y = T * nv + pr->dest[j], m = 0, *path = arcs + (size_t)j * T;

		cost[j] = pr->dist[y];
		while (y != pr->origin && pr->pred[y] != UINT32_MAX) {
			path[m++] = pr->pred[y];
			y = tx_tail(x, pr->pred[y]);
		}
		/* reverse into time order */
		for (uint32_t i = 0; i < m / 2; i++) {
			uint32_t t = path[i];

			path[i] = path[m - 1 - i];
			path[m - 1 - i] = t;
		}
		len[j] = m;
	}
	free(hops);
}
