/* Re-planning the all-to-all MCF by repair: the kept healthy
 * solution less the lost arcs, their flow rerouted.
 *
 * Whatever commodity crosses a lost arc a = (u, v), the flow on a goes from
 * u to v: replacing it by any u -> v flow of the same value in the graph
 * without a keeps every commodity's conservation. So the degraded graph's
 * flow is the healthy one with each lost arc's load f_a rerouted, and the
 * best reroute is a small LP (one commodity per lost arc that carried flow,
 * the healthy loads of the other arcs fixed): minimise T with
 * load_e + sum_a g^a_e <= c_e T. The healthy lengths (the kept bound's
 * dual) restricted to the degraded graph are a feasible dual there, a
 * Lagrangian lower bound; when the rerouted flow meets it, the degraded
 * optimum is proven without a master. Routes are the healthy ones, each
 * path across a lost arc spliced with the reroute's paths (loops cut).
 *
 * The same holds for any run of arcs: a path's maximal run inside a region
 * around the lost arcs goes from its first node u to its last q, and may be
 * replaced by any u -> q flow. With radius r >= 0 the region is every arc
 * at a node within r hops of the lost arcs' ends; the runs' flow, one
 * commodity per run end q with its supply at each run start, is rerouted by
 * the same LP. mcf_solve tries radius -1 (the lost arcs alone); the wider
 * regions are measured by bench/mcf_repair (bench/results/replan.md). */
#include "alltoall/internal.h"

#include "rwa/rwa.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NONE UINT32_MAX
/* A reroute LP of more columns (commodities x arcs) is not tried. */
#define REPAIR_MAX_COLUMNS (1u << 22)
/* Nor a repair whose work passes these: a Dijkstra from every node for
 * the bound (nodes x arcs), every kept tree carried by every element of
 * its group (trees x order x nodes: a one-source solution's group is its n
 * translations). About a second each at the most. */
#define REPAIR_MAX_BOUND  (1u << 26)
#define REPAIR_MAX_SPREAD (1u << 28)

/* (Here rather than in mcf_start.c, whose warm start maps w too: the
 * other mcf files call this one, not the other way.) */
uint32_t *mcf_warm_arc_map(const struct graph *g, const struct mcf_warm *w)
{
	uint32_t *map = xmalloc(((size_t)w->m + 1) * sizeof(uint32_t));

	for (uint32_t u = 0; u < w->n; u++)
		for (uint32_t a = w->off[u]; a < w->off[u + 1]; a++) {
			uint32_t v = w->head[a], k = 0;

			for (uint32_t b = w->off[u]; b < a; b++)
				k += w->head[b] == v;
			map[a] = UINT32_MAX;
			for (uint32_t b = g->off[u]; b < g->off[u + 1]; b++)
				if (g->adj[b] == v && k-- == 0) {
					map[a] = b;
					break;
				}
		}
	return map;
}

/* Subtree sizes of a tree (parent: arc into each node, NONE for the root
 * and nodes outside it) on a graph with arc tails `tail`: sz[v] is what the
 * arc into v carries (the destinations below it, v included). depth, order:
 * n scratch each. */
static void subtree_sizes(uint32_t n, const uint32_t *parent, const uint32_t *tail, double *sz,
			  uint32_t *depth, uint32_t *order)
{
	uint32_t maxd = 0;

	for (uint32_t v = 0; v < n; v++)
		depth[v] = parent[v] == NONE ? 0 : NONE;
	for (uint32_t v = 0; v < n; v++) {
		uint32_t x = v, k = 0;

		while (depth[x] == NONE && k <= n) {
			x = tail[parent[x]];
			k++;
		}
		/* Walk again, writing depths from the known one down. */
		for (uint32_t y = v, d = depth[x] + k; y != x; y = tail[parent[y]], d--)
			depth[y] = d;
		maxd = depth[v] > maxd ? depth[v] : maxd;
	}
	/* Deepest first: counting sort by depth. */
	uint32_t *cnt = xcalloc((size_t)maxd + 2, sizeof(uint32_t));
	for (uint32_t v = 0; v < n; v++)
		cnt[maxd - depth[v] + 1]++;
	for (uint32_t d = 1; d <= maxd + 1; d++)
		cnt[d] += cnt[d - 1];
	for (uint32_t v = 0; v < n; v++)
		order[cnt[maxd - depth[v]]++] = v;
	free(cnt);
	for (uint32_t v = 0; v < n; v++)
		sz[v] = parent[v] == NONE ? 0 : 1;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t v = order[i];

		if (parent[v] != NONE)
			sz[tail[parent[v]]] += sz[v];
	}
}

/* Nodes of w's class k (the sources one of its trees stands for). */
static uint32_t class_size(const struct mcf_warm *w, uint32_t k)
{
	uint32_t size = 0;

	for (uint32_t v = 0; v < w->n; v++)
		size += w->class_of[v] == k;
	return size;
}

/* The kept flow's load on each of w's arcs arcs[0..narcs) (load[i]):
 * every tree carried by every group element, at the weight that spreads it
 * over its class, as healthy_split counts it. */
void mcf_warm_loads(const struct mcf_warm *w, const uint32_t *arcs, uint32_t narcs, double *load)
{
	uint32_t n = w->n, *wtail = xmalloc(((size_t)w->m + 1) * sizeof(uint32_t));
	uint32_t *depth = xmalloc(n * sizeof(uint32_t)), *order = xmalloc(n * sizeof(uint32_t));
	uint32_t *pre = xmalloc(((size_t)w->order * narcs + 1) * sizeof(uint32_t));
	uint32_t *csize = xmalloc(((size_t)w->nclass + 1) * sizeof(uint32_t));
	double *sz = xmalloc(n * sizeof(double));

	for (uint32_t u = 0; u < n; u++)
		for (uint32_t a = w->off[u]; a < w->off[u + 1]; a++)
			wtail[a] = u;
	for (uint32_t k = 0; k < w->nclass; k++)
		csize[k] = class_size(w, k);
	/* pre[h narcs + j]: the arc element h takes onto arcs[j] */
	for (uint32_t h = 0; h < w->order; h++) {
		const uint32_t *ha = w->garc + (size_t)h * w->m;

		for (uint32_t j = 0; j < narcs; j++)
			pre[(size_t)h * narcs + j] = NONE;
		for (uint32_t a = 0; a < w->m; a++)
			for (uint32_t j = 0; j < narcs; j++)
				if (ha[a] == arcs[j])
					pre[(size_t)h * narcs + j] = a;
	}
	for (uint32_t j = 0; j < narcs; j++)
		load[j] = 0;
	for (uint32_t i = 0; i < w->ntrees; i++) {
		const uint32_t *p = w->parent + (size_t)i * n;
		double wt = w->tree_w[i] * csize[w->tree_class[i]] / w->order;

		subtree_sizes(n, p, wtail, sz, depth, order);
		for (size_t hj = 0; hj < (size_t)w->order * narcs; hj++) {
			uint32_t c = pre[hj];

			if (c != NONE && p[w->head[c]] == c)
				load[hj % narcs] += wt * sz[w->head[c]];
		}
	}
	free(wtail);
	free(depth);
	free(order);
	free(pre);
	free(csize);
	free(sz);
}

/* The kept solution split at the region (inr, per arc of w): every tree
 * carried by every group element to its image source, at the weight that
 * spreads it over the class (cg_mirror_routes' average). Each path's maximal
 * runs of region arcs are freed: a run from u to q adds its weight to
 * commodity q's supply at u (b[eidx[q] * n + u]); the rest of the load
 * stays on its arcs (wload, per arc of w; 0 on region arcs). */
static void healthy_split(const struct mcf_warm *w, const uint32_t *wtail, const uint8_t *inr,
			  const uint32_t *eidx, double *wload, double *b)
{
	uint32_t n = w->n;
	double *sz = xmalloc(n * sizeof(double)), *out = xmalloc(n * sizeof(double));
	uint32_t *depth = xmalloc(n * sizeof(uint32_t)), *order = xmalloc(n * sizeof(uint32_t));
	uint32_t *csize = xmalloc(((size_t)w->nclass + 1) * sizeof(uint32_t));
	uint32_t *start = xmalloc(n * sizeof(uint32_t));

	for (uint32_t k = 0; k < w->nclass; k++)
		csize[k] = class_size(w, k);
	memset(wload, 0, ((size_t)w->m + 1) * sizeof(double));
	for (uint32_t i = 0; i < w->ntrees; i++) {
		const uint32_t *p = w->parent + (size_t)i * n;
		uint32_t k = w->tree_class[i];
		double wt = w->tree_w[i] * csize[k] / w->order;

		subtree_sizes(n, p, wtail, sz, depth, order);
		for (uint32_t h = 0; h < w->order; h++) {
			const uint32_t *ha = w->garc + (size_t)h * w->m;
			const uint32_t *hn = w->gnode + (size_t)h * n;

			/* Top down (order is deepest first): where each run
			 * through x began; what leaves x off the region. */
			for (uint32_t j = n; j-- > 0;) {
				uint32_t x = order[j], a = p[x];

				out[x] = 0;
				if (a == NONE)
					continue;
				if (!inr[ha[a]]) {
					wload[ha[a]] += wt * sz[x];
					continue;
				}
				uint32_t pa = p[wtail[a]];
				start[x] = pa != NONE && inr[ha[pa]] ? start[wtail[a]] : wtail[a];
			}
			for (uint32_t x = 0; x < n; x++)
				if (p[x] != NONE && !inr[ha[p[x]]])
					out[wtail[p[x]]] += sz[x];
			for (uint32_t x = 0; x < n; x++)
				if (p[x] != NONE && inr[ha[p[x]]])
					b[(size_t)eidx[hn[x]] * n + hn[start[x]]] +=
					    wt * (1 + out[x]);
		}
	}
	free(sz);
	free(out);
	free(depth);
	free(order);
	free(csize);
	free(start);
}

/* The Lagrangian bound of lengths len (per arc of g) on g's all-to-all:
 * sum over pairs of their distance over sum_e c_e len_e (0 when that is
 * 0). Exact distances (Dijkstra without the pricing's tie-break). */
static double lengths_bound(const struct graph *g, const double *len, const double *cap)
{
	uint32_t n = g->n, m = g->m;
	double *dist = xmalloc(n * sizeof(double)), den = 0, total = 0;
	/* A binary heap of (key, node) with stale entries skipped. */
	size_t hcap = (size_t)m + n + 1, hn;
	double *hk = xmalloc(hcap * sizeof(double));
	uint32_t *hv = xmalloc(hcap * sizeof(uint32_t));

	for (uint32_t a = 0; a < m; a++)
		den += (cap ? cap[a] : 1) * len[a];
	for (uint32_t s = 0; s < n && den > 0; s++) {
		for (uint32_t v = 0; v < n; v++)
			dist[v] = INFINITY;
		dist[s] = 0;
		hk[0] = 0;
		hv[0] = s;
		hn = 1;
		while (hn) {
			double d = hk[0];
			uint32_t u = hv[0];

			/* pop */
			hn--;
			hk[0] = hk[hn];
			hv[0] = hv[hn];
			for (size_t i = 0;;) {
				size_t l = 2 * i + 1, r = l + 1, b = i;

				if (l < hn && hk[l] < hk[b])
					b = l;
				if (r < hn && hk[r] < hk[b])
					b = r;
				if (b == i)
					break;
				double tk = hk[i];
				uint32_t tv = hv[i];
				hk[i] = hk[b], hv[i] = hv[b], hk[b] = tk, hv[b] = tv;
				i = b;
			}
			if (d > dist[u])
				continue;
			for (uint32_t a = g->off[u]; a < g->off[u + 1]; a++) {
				uint32_t v = g->adj[a];
				double nd = d + len[a];

				if (nd >= dist[v] || hn >= hcap)
					continue;
				dist[v] = nd;
				size_t i = hn++;
				hk[i] = nd;
				hv[i] = v;
				while (i > 0 && hk[(i - 1) / 2] > hk[i]) {
					size_t q = (i - 1) / 2;
					double tk = hk[i];
					uint32_t tv = hv[i];
					hk[i] = hk[q], hv[i] = hv[q], hk[q] = tk, hv[q] = tv;
					i = q;
				}
			}
		}
		for (uint32_t v = 0; v < n; v++)
			total += dist[v];
	}
	free(dist);
	free(hk);
	free(hv);
	return den > 0 && isfinite(total) ? total / den : 0;
}

/* The reroute LP: columns x[k * m + e] (commodity k on g's arc e), then T;
 * minimise T subject to load_e + sum_k x_ke <= c_e T and, per commodity,
 * out - in = its supply at every node (the sum of them, negated, at its
 * end). Its solution into x (nk * m + 1 entries). 0, or -1 when the LP
 * solver fails (err) or finds it infeasible. */
static int reroute_lp(const struct mcf_repair *rp, enum lp_solver sv, double *x,
		      struct ofc_error *err)
{
	const struct graph *g = rp->g;
	uint32_t n = g->n, m = g->m, nk = rp->nk;
	int th = (int)((size_t)nk * m);
	struct lp *lp = lp_new_known(th + 1, sv);
	int *cols = xmalloc(((size_t)nk + 2 * (size_t)m + 2) * sizeof(int));
	double *vals = xmalloc(((size_t)nk + 2 * (size_t)m + 2) * sizeof(double));
	struct graph *gt = graph_transpose(g);
	uint32_t *in_arc = xmalloc(((size_t)m + 1) * sizeof(uint32_t));
	uint32_t *fill = xcalloc(n, sizeof(uint32_t));
	int rc = 0;

	lp_set_obj_coef(lp, th, 1);
	lp_set_cancel(lp, rp->cancel);
	for (uint32_t a = 0; a < m; a++)
		in_arc[gt->off[g->adj[a]] + fill[g->adj[a]]++] = a;
	for (uint32_t e = 0; e < m; e++) {
		int q = 0;

		if (g->adj[e] == rp->tail[e]) {
			for (uint32_t k = 0; k < nk; k++)
				lp_set_bounds(lp, (int)((size_t)k * m + e), 0, 0);
			continue;
		}
		for (uint32_t k = 0; k < nk; k++) {
			cols[q] = (int)((size_t)k * m + e);
			vals[q++] = 1;
		}
		cols[q] = th;
		vals[q++] = -(rp->cap ? rp->cap[e] : 1);
		lp_add_row(lp, q, cols, vals, LP_LE, -rp->load[e]);
	}
	for (uint32_t k = 0; k < nk; k++) {
		const double *b = rp->b + (size_t)k * n;
		double total = 0;

		for (uint32_t u = 0; u < n; u++)
			total += b[u];
		for (uint32_t u = 0; u < n; u++) {
			int q = 0;

			for (uint32_t a = g->off[u]; a < g->off[u + 1]; a++)
				if (g->adj[a] != u) {
					cols[q] = (int)((size_t)k * m + a);
					vals[q++] = 1;
				}
			for (uint32_t i = gt->off[u]; i < gt->off[u + 1]; i++)
				if (rp->tail[in_arc[i]] != u) {
					cols[q] = (int)((size_t)k * m + in_arc[i]);
					vals[q++] = -1;
				}
			lp_add_row(lp, q, cols, vals, LP_EQ, u == rp->ends[k] ? -total : b[u]);
		}
	}
	enum lp_result lr = lp_solve(lp, err);
	if (lr == LP_OPTIMAL)
		lp_solution(lp, x);
	else
		rc = lr == LP_FAILED
			 ? -1
			 : ofc_error_set(err, OFC_E_RUNTIME, "reroute LP: %s", lp_result_str(lr));
	lp_free(lp);
	graph_free(gt);
	free(in_arc);
	free(fill);
	free(cols);
	free(vals);
	return rc;
}

/* Add a path (len arcs of g) of weight wt. */
static void add_path(struct mcf_repair *rp, const uint32_t *path, uint32_t len, double wt)
{
	GROW(rp->pw, rp->cap_pw, rp->npaths + 1);
	GROW(rp->poff, rp->cap_poff, rp->npaths + 2);
	GROW(rp->parc, rp->cap_parc, rp->nhops + len);
	memcpy(rp->parc + rp->nhops, path, len * sizeof(uint32_t));
	rp->poff[rp->npaths] = rp->nhops;
	rp->nhops += len;
	rp->poff[rp->npaths + 1] = rp->nhops;
	rp->pw[rp->npaths++] = wt;
}

/* Commodity k's flow x (m entries, consumed) as paths from each node with
 * supply to its end: walk positive arcs, cancel any cycle met, take the
 * bottleneck; each start's weights are scaled to sum to its supply exactly
 * (the LP's tolerance). Paths of (k, u) are rp->ku[k * n + u] ..
 * rp->ku[k * n + u + 1] - 1. false when some supply found no path. */
static bool decompose(struct mcf_repair *rp, uint32_t k, double *x, uint32_t *path, uint32_t *at)
{
	const struct graph *g = rp->g;
	uint32_t n = g->n, m = g->m, t = rp->ends[k];
	const double *b = rp->b + (size_t)k * n;
	double total = 0;

	for (uint32_t u = 0; u < n; u++)
		total += b[u];
	double eps = 1e-12 * total;
	for (uint32_t a = 0; a < m; a++)
		if (x[a] < eps)
			x[a] = 0;
	for (uint32_t s = 0; s < n; s++) {
		size_t first = rp->npaths;
		double left = b[s], sum = 0;

		rp->ku[(size_t)k * n + s] = first;
		for (uint32_t rounds = 0; left > eps && rounds < 4 * m + 4; rounds++) {
			uint32_t len = 0, u = s;

			at[s] = 0;
			while (u != t) {
				uint32_t a = g->off[u];

				while (a < g->off[u + 1] && !(x[a] > 0))
					a++;
				if (a == g->off[u + 1])
					break; /* stuck: what is left is the LP's noise */
				uint32_t v = g->adj[a];

				path[len++] = a;
				if (at[v] != NONE) {
					/* A cycle: cancel it and go on from v. */
					double mn = INFINITY;

					for (uint32_t i = at[v]; i < len; i++)
						mn = fmin(mn, x[path[i]]);
					for (uint32_t i = at[v]; i < len; i++) {
						x[path[i]] -= mn;
						if (x[path[i]] < eps)
							x[path[i]] = 0;
					}
					for (uint32_t i = at[v]; i + 1 < len; i++)
						at[g->adj[path[i]]] = NONE;
					len = at[v];
					u = v;
					continue;
				}
				at[v] = len;
				u = v;
			}
			for (uint32_t i = 0; i < len; i++)
				at[g->adj[path[i]]] = NONE;
			at[s] = NONE;
			if (u != t)
				break;
			double mn = left;
			for (uint32_t i = 0; i < len; i++)
				mn = fmin(mn, x[path[i]]);
			for (uint32_t i = 0; i < len; i++) {
				x[path[i]] -= mn;
				if (x[path[i]] < eps)
					x[path[i]] = 0;
			}
			left -= mn;
			sum += mn;
			add_path(rp, path, len, mn);
		}
		if (b[s] > 0 && !(sum > 0))
			return false;
		for (size_t i = first; i < rp->npaths; i++)
			rp->pw[i] *= b[s] / sum;
	}
	rp->ku[(size_t)k * n + n] = rp->npaths;
	return true;
}

/* The repaired flow's objective: the loads kept plus the paths'. */
static double repaired_objective(const struct mcf_repair *rp)
{
	const struct graph *g = rp->g;
	double *load = xmalloc(((size_t)g->m + 1) * sizeof(double)), most = 0;

	memcpy(load, rp->load, g->m * sizeof(double));
	for (size_t i = 0; i < rp->npaths; i++)
		for (size_t h = rp->poff[i]; h < rp->poff[i + 1]; h++)
			load[rp->parc[h]] += rp->pw[i];
	for (uint32_t e = 0; e < g->m; e++)
		if (g->adj[e] != rp->tail[e])
			most = fmax(most, load[e] / (rp->cap ? rp->cap[e] : 1));
	free(load);
	return most;
}

/* The region of radius r: the arcs of w at nodes within r hops (either
 * way) of a lost arc's ends; r < 0: the lost arcs alone. Its runs' ends
 * numbered (eidx, ends). Returns how many ends. */
static uint32_t region(struct mcf_repair *rp, int r)
{
	const struct mcf_warm *w = rp->w;
	uint32_t n = w->n, *dist = xmalloc(n * sizeof(uint32_t)), *queue = xmalloc(n * 4);
	uint32_t head = 0, tail = 0, nk = 0;

	memset(rp->inr, 0, w->m);
	for (uint32_t v = 0; v < n; v++)
		dist[v] = NONE;
	for (uint32_t a = 0; a < w->m; a++)
		if (rp->map[a] == NONE && w->head[a] != rp->wtail[a]) {
			rp->inr[a] = 1;
			for (int e = 0; e < 2; e++) {
				uint32_t v = e ? w->head[a] : rp->wtail[a];

				if (dist[v] == NONE) {
					dist[v] = 0;
					queue[tail++] = v;
				}
			}
		}
	while (r >= 0 && head < tail) {
		uint32_t u = queue[head++];

		for (uint32_t a = 0; a < w->m; a++) {
			uint32_t x = rp->wtail[a], y = w->head[a], v;

			if (x != u && y != u)
				continue;
			rp->inr[a] = 1;
			v = x == u ? y : x;
			if (dist[v] == NONE && dist[u] < (uint32_t)r) {
				dist[v] = dist[u] + 1;
				queue[tail++] = v;
			}
		}
	}
	for (uint32_t v = 0; v < n; v++)
		rp->eidx[v] = NONE;
	for (uint32_t a = 0; a < w->m; a++)
		if (rp->inr[a] && rp->eidx[w->head[a]] == NONE) {
			rp->eidx[w->head[a]] = nk;
			rp->ends[nk++] = w->head[a];
		}
	free(dist);
	free(queue);
	return nk;
}

/* One try at radius r: the split, the LP, the paths; rp->objective when
 * it found one (INFINITY else). 0, or -1 when cancelled. */
static int repair_at(struct mcf_repair *rp, int r, enum lp_solver sv, struct ofc_error *err)
{
	const struct mcf_warm *w = rp->w;
	const struct graph *g = rp->g;
	uint32_t n = g->n, m = g->m;
	int rc = 0;

	rp->objective = INFINITY;
	rp->npaths = rp->nhops = 0;
	rp->radius = r;
	rp->nk = region(rp, r);
	if ((size_t)rp->nk * m > REPAIR_MAX_COLUMNS || (size_t)rp->nk * n > REPAIR_MAX_COLUMNS) {
		rp->why = "the region's LP would be too large";
		return 0;
	}
	double *wload = xmalloc(((size_t)w->m + 1) * sizeof(double));
	free(rp->b);
	rp->b = xcalloc((size_t)rp->nk * n + 1, sizeof(double));
	healthy_split(w, rp->wtail, rp->inr, rp->eidx, wload, rp->b);
	memset(rp->load, 0, m * sizeof(double));
	for (uint32_t a = 0; a < w->m; a++)
		if (rp->map[a] != NONE)
			rp->load[rp->map[a]] = wload[a];
	free(wload);
	double *x = xmalloc(((size_t)rp->nk * m + 1) * sizeof(double));
	free(rp->ku);
	rp->ku = xcalloc((size_t)rp->nk * n + 1, sizeof(size_t));
	if (reroute_lp(rp, sv, x, err) < 0) {
		rp->why = "the reroute LP failed";
		if (rp->cancel && atomic_load(rp->cancel))
			rc = ofc_error_set(err, OFC_E_RUNTIME, "cancelled");
		else
			ofc_error_clear(err);
	} else {
		uint32_t *path = xmalloc(((size_t)n + 1) * sizeof(uint32_t));
		uint32_t *at = xmalloc(n * sizeof(uint32_t));
		bool ok = true;

		for (uint32_t v = 0; v < n; v++)
			at[v] = NONE;
		for (uint32_t k = 0; ok && k < rp->nk; k++)
			ok = decompose(rp, k, x + (size_t)k * m, path, at);
		if (ok)
			rp->objective = repaired_objective(rp);
		else
			rp->why = "the reroute LP's flow did not decompose";
		free(path);
		free(at);
	}
	free(x);
	return rc;
}

int mcf_repair_solve(const struct graph *g, const struct mcf_opts *o, int radius,
		     struct mcf_repair *rp, struct ofc_error *err)
{
	const struct mcf_warm *w = o->warm;
	double t0 = now_seconds();
	uint32_t m = g->m;
	int rc;

	memset(rp, 0, sizeof(*rp));
	rp->objective = INFINITY;
	if ((double)g->n * g->m > REPAIR_MAX_BOUND ||
	    (double)w->ntrees * w->order * w->n > REPAIR_MAX_SPREAD) {
		rp->why = "too large to repair";
		return 0;
	}
	rp->g = g;
	rp->w = w;
	rp->cap = o->capacity;
	rp->cancel = o->cancel;
	rp->map = mcf_warm_arc_map(g, w);
	rp->tail = graph_arc_tails(g);
	rp->wtail = xmalloc(((size_t)w->m + 1) * sizeof(uint32_t));
	for (uint32_t u = 0; u < w->n; u++)
		for (uint32_t a = w->off[u]; a < w->off[u + 1]; a++)
			rp->wtail[a] = u;
	rp->inr = xmalloc((size_t)w->m + 1);
	rp->eidx = xmalloc(((size_t)w->n + 1) * sizeof(uint32_t));
	rp->ends = xmalloc(((size_t)w->n + 1) * sizeof(uint32_t));
	rp->load = xcalloc((size_t)m + 1, sizeof(double));
	double *len = xcalloc((size_t)m + 1, sizeof(double));
	for (uint32_t a = 0; a < w->m; a++)
		if (rp->map[a] != NONE)
			len[rp->map[a]] = w->price[a];
	rp->lower = lengths_bound(g, len, o->capacity);
	free(len);
	rc = repair_at(rp, radius, lp_solver_or(o->lp_solver, MCF_LP), err);
	rp->seconds = now_seconds() - t0;
	return rc;
}

/* Routes: the healthy solution's paths of every pair (each tree of a
 * source's class carried to it by the group elements that take the class's
 * representative there, as cg_mirror_routes averages them), each path across
 * a lost arc spliced with that arc's reroute paths, weights split by
 * theirs, loops cut. */
struct splice {
	struct mcf_repair *rp;
	struct a2a_routes *rt;
	double *load;	     /* per arc of g: what the routes put there */
	uint32_t *buf, *out; /* arcs of g */
	size_t cap, cap_out;
	uint32_t *mark, stamp; /* node -> stamp of the route being cut */
	uint32_t *pos;	       /* node -> its position on it */
	const uint32_t *A;     /* the healthy path (w's arcs) */
	uint32_t L, v, t;
};

static void splice_finish(struct splice *sp, uint32_t blen, double wt)
{
	const struct graph *g = sp->rp->g;
	uint32_t len = 0;

	/* Cut loops: a node met again drops the arcs since its first visit. */
	sp->stamp++;
	sp->mark[sp->v] = sp->stamp;
	sp->pos[sp->v] = 0;
	for (uint32_t i = 0; i < blen; i++) {
		uint32_t a = sp->buf[i], x = g->adj[a];

		if (sp->mark[x] == sp->stamp) {
			for (uint32_t j = sp->pos[x]; j < len; j++)
				sp->mark[g->adj[sp->out[j]]] = 0;
			len = sp->pos[x];
			continue;
		}
		sp->out[len++] = a;
		sp->mark[x] = sp->stamp;
		sp->pos[x] = len;
	}
	a2a_routes_add(sp->rt, sp->v, sp->t, wt, sp->out, NULL, len);
	for (uint32_t i = 0; i < len; i++)
		sp->load[sp->out[i]] += wt;
}

static void splice_from(struct splice *sp, uint32_t i, uint32_t blen, double wt)
{
	const struct mcf_repair *rp = sp->rp;
	uint32_t n = rp->g->n;

	GROW(sp->buf, sp->cap, (size_t)blen + sp->L + 1);
	for (; i < sp->L && !rp->inr[sp->A[i]]; i++)
		sp->buf[blen++] = rp->map[sp->A[i]];
	if (i == sp->L) {
		GROW(sp->out, sp->cap_out, (size_t)blen + 1);
		splice_finish(sp, blen, wt);
		return;
	}
	/* The run A[i..j] in the region, from u to q: the reroute's paths of
	 * (q, u) instead, at their shares of u's supply. */
	uint32_t u = rp->wtail[sp->A[i]], j = i;
	while (j + 1 < sp->L && rp->inr[sp->A[j + 1]])
		j++;
	size_t ku = (size_t)rp->eidx[rp->w->head[sp->A[j]]] * n + u;
	for (size_t p = rp->ku[ku]; p < rp->ku[ku + 1]; p++) {
		uint32_t plen = (uint32_t)(rp->poff[p + 1] - rp->poff[p]);

		GROW(sp->buf, sp->cap, (size_t)blen + plen + sp->L + 1);
		memcpy(sp->buf + blen, rp->parc + rp->poff[p], plen * sizeof(uint32_t));
		splice_from(sp, j + 1, blen + plen, wt * rp->pw[p] / rp->b[ku]);
	}
}

/* Paths of one source's image trees as a trie: id 0 the empty path, a
 * path (its prefix's id, its last arc) by open addressing, entries of
 * another source told apart by a stamp; pid[i * n + u] is tree i's path to
 * u, tw[i] its weight. */
struct trie {
	size_t cap_key;
	uint64_t *key;
	uint32_t *kval, *kstamp;
	uint32_t *pre, *last, *plen, *seen; /* per path id */
	double *acc;			    /* per path id: a pair's weight on it */
	uint32_t *pid, *stack;
	double *tw;
	/* the trees of each class: ctree[cfirst[k] .. cfirst[k + 1] - 1] */
	size_t *cfirst;
	uint32_t *ctree, *csize;
	size_t maxtrees; /* the most image trees a source has */
};

static uint32_t trie_path(struct trie *tr, uint32_t *npaths, uint32_t stamp, uint32_t pr,
			  uint32_t a)
{
	uint64_t kk = ((uint64_t)pr << 32 | a) + 1;
	size_t s = (kk * 0x9e3779b97f4a7c15ull) >> 20 & (tr->cap_key - 1);

	while (tr->kstamp[s] == stamp && tr->key[s] != kk)
		s = (s + 1) & (tr->cap_key - 1);
	if (tr->kstamp[s] != stamp) {
		uint32_t q = (*npaths)++;

		tr->kstamp[s] = stamp;
		tr->key[s] = kk;
		tr->kval[s] = q;
		tr->pre[q] = pr;
		tr->last[q] = a;
		tr->plen[q] = tr->plen[pr] + 1;
		tr->seen[q] = NONE;
	}
	return tr->kval[s];
}

/* Source v's image trees into the trie; returns how many. */
static uint32_t trie_source(const struct mcf_repair *rp, struct trie *tr, uint32_t v)
{
	const struct mcf_warm *w = rp->w;
	uint32_t n = w->n, k = w->class_of[v], o = w->rep[k], npaths = 1, ntr = 0;
	double images = (double)w->order / tr->csize[k];

	tr->pre[0] = tr->last[0] = tr->plen[0] = 0;
	tr->seen[0] = NONE;
	for (uint32_t h = 0; h < w->order; h++) {
		const uint32_t *hn = w->gnode + (size_t)h * n, *ha = w->garc + (size_t)h * w->m;

		if (hn[o] != v)
			continue;
		for (size_t j = tr->cfirst[k]; j < tr->cfirst[k + 1]; j++) {
			const uint32_t *p = w->parent + (size_t)tr->ctree[j] * n;
			uint32_t *id = tr->pid + (size_t)ntr * n;

			tr->tw[ntr++] = w->tree_w[tr->ctree[j]] / images;
			/* The image tree: node hn[u] hangs from arc ha[p[u]]. */
			for (uint32_t u = 0; u < n; u++)
				id[u] = NONE;
			id[v] = 0;
			for (uint32_t u0 = 0; u0 < n; u0++) {
				uint32_t top = 0, u = u0;

				while (id[hn[u]] == NONE && p[u] != NONE) {
					tr->stack[top++] = u;
					u = rp->wtail[p[u]];
				}
				if (id[hn[u]] == NONE)
					id[hn[u]] = 0; /* not in the tree */
				while (top) {
					uint32_t x = tr->stack[--top], a = ha[p[x]];

					id[hn[x]] =
					    trie_path(tr, &npaths, v + 1, id[rp->wtail[a]], a);
				}
			}
		}
	}
	return ntr;
}

/* Room for every source's trie (the most image trees a source has). */
static void trie_init(struct trie *tr, const struct mcf_warm *w)
{
	uint32_t n = w->n;
	size_t maxtrees = 0;

	tr->csize = xmalloc(((size_t)w->nclass + 1) * sizeof(uint32_t));
	tr->cfirst = xcalloc((size_t)w->nclass + 2, sizeof(size_t));
	tr->ctree = xmalloc(((size_t)w->ntrees + 1) * sizeof(uint32_t));
	for (uint32_t k = 0; k < w->nclass; k++)
		tr->csize[k] = class_size(w, k);
	for (uint32_t i = 0; i < w->ntrees; i++)
		tr->cfirst[w->tree_class[i] + 2]++;
	for (uint32_t k = 0; k <= w->nclass; k++)
		tr->cfirst[k + 1] += tr->cfirst[k];
	for (uint32_t i = 0; i < w->ntrees; i++)
		tr->ctree[tr->cfirst[w->tree_class[i] + 1]++] = i;
	for (uint32_t k = 0; k < w->nclass; k++) {
		size_t imgs = (tr->cfirst[k + 1] - tr->cfirst[k]) *
			      (w->order / (tr->csize[k] ? tr->csize[k] : 1));

		maxtrees = imgs > maxtrees ? imgs : maxtrees;
	}
	size_t maxpaths = maxtrees * n + 1;
	tr->maxtrees = maxtrees;
	tr->cap_key = 1;
	while (tr->cap_key < 2 * maxpaths)
		tr->cap_key <<= 1;
	tr->key = xmalloc(tr->cap_key * sizeof(uint64_t));
	tr->kval = xmalloc(tr->cap_key * sizeof(uint32_t));
	tr->kstamp = xcalloc(tr->cap_key, sizeof(uint32_t));
	tr->pre = xmalloc(maxpaths * sizeof(uint32_t));
	tr->last = xmalloc(maxpaths * sizeof(uint32_t));
	tr->plen = xmalloc(maxpaths * sizeof(uint32_t));
	tr->seen = xmalloc(maxpaths * sizeof(uint32_t));
	tr->acc = xmalloc(maxpaths * sizeof(double));
	tr->pid = xmalloc((maxtrees * n + 1) * sizeof(uint32_t));
	tr->tw = xmalloc((maxtrees + 1) * sizeof(double));
	tr->stack = xmalloc(((size_t)n + 1) * sizeof(uint32_t));
}

static void trie_free(struct trie *tr)
{
	free(tr->csize), free(tr->cfirst), free(tr->ctree), free(tr->key), free(tr->kval);
	free(tr->kstamp), free(tr->pre), free(tr->last), free(tr->plen), free(tr->seen);
	free(tr->acc), free(tr->pid), free(tr->tw), free(tr->stack);
}

int mcf_repair_routes(struct mcf_repair *rp, struct a2a_routes *rt, double *objective,
		      struct ofc_error *err)
{
	const struct graph *g = rp->g;
	uint32_t n = g->n;
	struct trie tr = {0};
	int rc = 0;

	if (!(rp->objective < INFINITY))
		return ofc_error_set(err, OFC_E_RUNTIME, "no repaired flow to route");
	trie_init(&tr, rp->w);
	uint32_t *list = xmalloc((tr.maxtrees + 1) * sizeof(uint32_t));
	uint32_t *A = xmalloc(((size_t)n + 1) * sizeof(uint32_t));
	struct splice sp = {
	    .rp = rp,
	    .rt = rt,
	    .load = xcalloc((size_t)g->m + 1, sizeof(double)),
	    .mark = xcalloc(n, sizeof(uint32_t)),
	    .pos = xmalloc(n * sizeof(uint32_t)),
	    .A = A,
	};

	rt->n = n;
	for (uint32_t v = 0; v < n && rc == 0; v++) {
		uint32_t ntr = trie_source(rp, &tr, v);

		/* Each pair's distinct paths, weights summed, spliced. */
		for (uint32_t t = 0; t < n && rc == 0; t++) {
			uint32_t nl = 0;

			if (t == v)
				continue;
			for (uint32_t i = 0; i < ntr; i++) {
				uint32_t q = tr.pid[(size_t)i * n + t];

				if (tr.seen[q] != t) {
					tr.seen[q] = t;
					tr.acc[q] = 0;
					list[nl++] = q;
				}
				tr.acc[q] += tr.tw[i];
			}
			for (uint32_t j = 0; j < nl; j++) {
				uint32_t q = list[j], L = tr.plen[q];

				if (L == 0) {
					rc = ofc_error_set(err, OFC_E_RUNTIME,
							   "a kept tree misses %u -> %u", v, t);
					break;
				}
				for (uint32_t x = q, i = L; x; x = tr.pre[x])
					A[--i] = tr.last[x];
				sp.L = L;
				sp.v = v;
				sp.t = t;
				splice_from(&sp, 0, 0, tr.acc[q]);
			}
		}
	}
	double most = 0;
	for (uint32_t e = 0; e < g->m; e++)
		most = fmax(most, sp.load[e] / (rp->cap ? rp->cap[e] : 1));
	*objective = most;
	trie_free(&tr);
	free(list), free(A);
	free(sp.load), free(sp.buf), free(sp.out), free(sp.mark), free(sp.pos);
	return rc;
}

void mcf_repair_free(struct mcf_repair *rp)
{
	free(rp->map);
	free(rp->tail);
	free(rp->wtail);
	free(rp->load);
	free(rp->inr);
	free(rp->eidx);
	free(rp->ends);
	free(rp->b);
	free(rp->ku);
	free(rp->poff);
	free(rp->parc);
	free(rp->pw);
	memset(rp, 0, sizeof(*rp));
}
