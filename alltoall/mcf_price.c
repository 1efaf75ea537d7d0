/* Column generation's pricing (alltoall/mcf.c's comment has the method):
 * each class's shortest-path tree under the link prices (Dijkstra for the
 * fluid MCF, a sweep of the time-expanded graph for the time-stepped one),
 * a tree's coefficients per row, the trees kept as columns (hashed, each
 * once), and the Lagrangian bound every pricing certifies. */
#include "alltoall/mcf_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Trees of more entries than this (n (T + 1), cg_store_tree) are given room
 * 16 at first rather than 1,024. */
#define CG_TREE_ENTRIES_MANY (1u << 16)

static void heap_swap(struct heap *h, uint32_t i, uint32_t j)
{
	uint32_t a = h->node[i], b = h->node[j];
	double k = h->key[i];

	h->node[i] = b;
	h->node[j] = a;
	h->key[i] = h->key[j];
	h->key[j] = k;
	h->pos[b] = i;
	h->pos[a] = j;
}

static void heap_up(struct heap *h, uint32_t i)
{
	while (i > 0 && h->key[(i - 1) / 2] > h->key[i]) {
		heap_swap(h, i, (i - 1) / 2);
		i = (i - 1) / 2;
	}
}

static void heap_push_or_lower(struct heap *h, uint32_t v, double key)
{
	uint32_t i = h->pos[v];

	if (i == UINT32_MAX) {
		i = h->n++;
		h->node[i] = v;
		h->pos[v] = i;
	}
	h->key[i] = key;
	heap_up(h, i);
}

static uint32_t heap_pop(struct heap *h)
{
	uint32_t top = h->node[0];

	heap_swap(h, 0, --h->n);
	h->pos[top] = UINT32_MAX;
	for (uint32_t i = 0;;) {
		uint32_t l = 2 * i + 1, r = l + 1, m = i;

		if (l < h->n && h->key[l] < h->key[m])
			m = l;
		if (r < h->n && h->key[r] < h->key[m])
			m = r;
		if (m == i)
			break;
		heap_swap(h, i, m);
		i = m;
	}
	return top;
}

/* What an arc's hop costs the hosts at its ends (host rows), at prices ys. */
static double host_price(const struct cg *c, uint32_t arc, uint32_t step)
{
	uint32_t base = step * c->rows_per_slot + c->link_rows;

	if (!c->node_row)
		return 0;
	return c->ys[base + c->node_row[c->arc_tail[arc]]] +
	       c->ys[base + c->node_rows + c->node_row[c->g->adj[arc]]];
}

/* Fluid: Dijkstra from s under the link prices; parent[v] is the arc into
 * v. Returns the sum of the distances (the tree's cost). */
double cg_dijkstra(const struct cg *c, struct cg_scratch *w, uint32_t s, uint32_t *parent)
{
	const struct graph *g = c->g;
	double total = 0;

	for (uint32_t v = 0; v < c->n; v++) {
		w->dist[v] = INFINITY;
		parent[v] = NO_PARENT;
	}
	w->dist[s] = 0;
	heap_push_or_lower(&w->h, s, 0);
	while (w->h.n) {
		uint32_t u = heap_pop(&w->h);

		total += c->demand ? cg_demand_of(c, s, u) * w->dist[u] : w->dist[u];
		for (uint32_t a = g->off[u]; a < g->off[u + 1]; a++) {
			uint32_t v = g->adj[a], r = c->arc_row[a];
			double nd;

			if (r == UINT32_MAX)
				continue;
			/* A tiny per-hop term breaks ties towards fewer hops. */
			nd = w->dist[u] + c->ys[r] + host_price(c, a, 0) + 1e-12;
			if (nd < w->dist[v]) {
				w->dist[v] = nd;
				parent[v] = a;
				heap_push_or_lower(&w->h, v, nd);
			}
		}
	}
	return total;
}

/* Time-stepped: shortest paths from (s, 0) to every (v, T) on the
 * time-expanded graph; parent[t * n + v] is HOLD, an arc moved in step t
 * (1-based), or NO_PARENT. */
static double dag_paths(const struct cg *c, struct cg_scratch *w, uint32_t s, uint32_t *parent)
{
	const struct graph *g = c->g;
	uint32_t n = c->n, T = c->T;
	double total = 0;

	for (uint32_t v = 0; v < n; v++) {
		w->dist[v] = v == s ? 0 : INFINITY;
		parent[v] = NO_PARENT;
	}
	for (uint32_t t = 1; t <= T; t++) {
		double *prev = w->dist + (size_t)(t - 1) * n, *cur = prev + n;
		uint32_t *par = parent + (size_t)t * n;

		for (uint32_t v = 0; v < n; v++) {
			cur[v] = prev[v];
			par[v] = HOLD;
		}
		for (uint32_t u = 0; u < n; u++) {
			if (isinf(prev[u]))
				continue;
			for (uint32_t a = g->off[u]; a < g->off[u + 1]; a++) {
				uint32_t r = cg_row_of(c, a, t - 1);
				double nd;

				if (r == UINT32_MAX)
					continue;
				nd = prev[u] + c->ys[r] + host_price(c, a, t - 1) + 1e-12;
				if (nd < cur[g->adj[a]]) {
					cur[g->adj[a]] = nd;
					par[g->adj[a]] = a;
				}
			}
		}
	}
	for (uint32_t v = 0; v < n; v++)
		if (v != s)
			total += cg_demand_of(c, s, v) * w->dist[(size_t)T * n + v];
	return total;
}

/* Walk the route of destination t in a parent array: calls back each hop
 * (arc, step), destination first. Returns the hop count. */
uint32_t cg_walk(const struct cg *c, const uint32_t *parent, uint32_t t,
		 void (*hop)(void *, uint32_t arc, uint32_t step), void *ctx)
{
	uint32_t hops = 0;

	if (c->T == 0) {
		for (uint32_t v = t; parent[v] != NO_PARENT; v = c->arc_tail[parent[v]]) {
			hop(ctx, parent[v], 0);
			hops++;
		}
		return hops;
	}
	uint32_t v = t;
	for (uint32_t st = c->T; st >= 1; st--) {
		uint32_t p = parent[(size_t)st * c->n + v];

		if (p == HOLD || p == NO_PARENT)
			continue;
		hop(ctx, p, st - 1);
		hops++;
		v = c->arc_tail[p];
	}
	return hops;
}

/* Add `hops` hops over arc at step to the column being built in w. */
static void add_hops(const struct cg *c, struct cg_scratch *w, uint32_t arc, uint32_t step,
		     double hops)
{
	uint32_t r = cg_row_of(c, arc, step);

	if (w->cnt[r] == 0)
		w->touched[w->ntouched++] = r;
	w->cnt[r] += hops;
	if (c->node_row) {
		uint32_t base = step * c->rows_per_slot + c->link_rows;
		uint32_t in = base + c->node_row[c->arc_tail[arc]],
			 ej = base + c->node_rows + c->node_row[c->g->adj[arc]];

		if (w->cnt[in] == 0)
			w->touched[w->ntouched++] = in;
		w->cnt[in] += hops;
		if (w->cnt[ej] == 0)
			w->touched[w->ntouched++] = ej;
		w->cnt[ej] += hops;
	}
}

/* A walk's hop, carrying the destination's demand. */
struct hop_count {
	const struct cg *c;
	struct cg_scratch *w;
	double demand;
};

static void count_hop(void *ctx, uint32_t arc, uint32_t step)
{
	struct hop_count *k = ctx;

	add_hops(k->c, k->w, arc, step, k->demand);
}

static uint64_t tree_hash(const struct cg *c, uint32_t s, const uint32_t *parent)
{
	uint64_t h = 0x9e3779b97f4a7c15ull * (s + 1);

	for (size_t i = 0; i < c->psize; i++)
		h = (h ^ parent[i]) * 0x100000001b3ull;
	return h ? h : 1;
}

/* The column of a tree with hash h, or UINT32_MAX (then slot *at is free). */
static uint32_t tree_find(struct cg *c, uint64_t h, size_t *at)
{
	if ((c->ncols + 1) * 2 > c->cap_seen) {
		size_t cap = c->cap_seen ? c->cap_seen * 2 : 1024;
		uint64_t *t = xcalloc(cap, sizeof(uint64_t));
		uint32_t *tc = xmalloc(cap * sizeof(uint32_t));

		for (size_t i = 0; i < c->cap_seen; i++)
			if (c->seen[i]) {
				size_t j = c->seen[i] & (cap - 1);

				while (t[j])
					j = (j + 1) & (cap - 1);
				t[j] = c->seen[i];
				tc[j] = c->seen_col[i];
			}
		free(c->seen);
		free(c->seen_col);
		c->seen = t;
		c->seen_col = tc;
		c->cap_seen = cap;
	}
	size_t j = h & (c->cap_seen - 1);
	while (c->seen[j]) {
		if (c->seen[j] == h)
			return c->seen_col[j];
		j = (j + 1) & (c->cap_seen - 1);
	}
	*at = j;
	return UINT32_MAX;
}

/* A fluid tree's hops per row in O(n), not O(n x depth): an arc carries
 * one hop for every destination below it, its head's subtree. Depths by
 * walking up to the first node with a known one, then the nodes deepest
 * first, each adding its subtree to its parent's. */
static void tree_coefs_fluid(const struct cg *c, struct cg_scratch *w, uint32_t src,
			     const uint32_t *parent)
{
	/* order serves as the walk's stack until the nodes are sorted into it */
	uint32_t n = c->n, *depth = w->depth, *stack = w->order, maxd = 0;

	for (uint32_t v = 0; v < n; v++)
		depth[v] = UINT32_MAX;
	depth[src] = 0;
	for (uint32_t v = 0; v < n; v++) {
		uint32_t top = 0, u = v;

		while (depth[u] == UINT32_MAX) {
			if (parent[u] == NO_PARENT) { /* not in the tree: no hops */
				depth[u] = 0;
				break;
			}
			stack[top++] = u;
			u = c->arc_tail[parent[u]];
		}
		while (top) {
			uint32_t x = stack[--top];

			depth[x] = depth[c->arc_tail[parent[x]]] + 1;
		}
		maxd = depth[v] > maxd ? depth[v] : maxd;
	}
	memset(w->bucket, 0, ((size_t)maxd + 2) * sizeof(uint32_t));
	for (uint32_t v = 0; v < n; v++)
		w->bucket[depth[v] + 1]++;
	for (uint32_t d = 1; d <= maxd + 1; d++)
		w->bucket[d] += w->bucket[d - 1];
	for (uint32_t v = 0; v < n; v++)
		w->order[w->bucket[depth[v]]++] = v;
	for (uint32_t v = 0; v < n; v++)
		w->sub[v] = v != src ? cg_demand_of(c, src, v) : 0;
	for (uint32_t i = n; i-- > 0;) {
		uint32_t v = w->order[i], a = parent[v];
		double hops = w->sub[v];

		if (a == NO_PARENT)
			continue;
		w->sub[c->arc_tail[a]] += hops;
		if (hops > 0) /* (a subtree of pairs that ask for nothing) */
			add_hops(c, w, a, 0, hops);
	}
}

/* The tree's coefficients: per link row, the destinations routed over it
 * (left in w->touched, unsorted: only lp_put needs them in order, and
 * sorting took a tenth of the warm start's polish; and w->cnt; the
 * caller clears cnt).
 * Fluid: an arc into v carries v's subtree, so one pass from the deepest
 * nodes up counts every arc in O(n) (walking each destination's route
 * took O(n * depth) and, with its sort, most of a Frank-Wolfe round of
 * the warm start on genkautz:1024,4). */
void cg_tree_coefs(const struct cg *c, struct cg_scratch *w, uint32_t s, const uint32_t *parent)
{
	struct hop_count k = {c, w, 1};
	uint32_t src = c->src_node[s];

	w->ntouched = 0;
	if (c->T == 0) {
		tree_coefs_fluid(c, w, src, parent);
	} else {
		for (uint32_t t = 0; t < c->n; t++) {
			k.demand = cg_demand_of(c, src, t);
			if (t != src && k.demand > 0)
				cg_walk(c, parent, t, count_hop, &k);
		}
	}
}

/* A class-s tree's coefficient on row r, given the hops over r's arcs: its
 * src_weight sources (mirrored) spread that load over the row_size arcs. */
double cg_coef(const struct cg *c, uint32_t s, uint32_t r, double hops)
{
	return hops * c->src_weight[s] / c->row_size[r % c->rows_per_slot];
}

/* The column of a tree: a known one, or a new one (not in the LP yet). */
uint32_t cg_store_tree(struct cg *c, uint32_t s, const uint32_t *parent)
{
	size_t at = 0;
	uint64_t h = tree_hash(c, s, parent);
	uint32_t k = tree_find(c, h, &at);

	if (k == UINT32_MAX) {
		k = (uint32_t)c->ncols;
		if (c->ncols + 1 > c->cap_cols) {
			/* A tree is psize entries: on the time-expanded graph of
			 * a large fabric tens of MiB (torus:256x256: 67 MB), and
			 * 1,024 of them at once a reservation past the machine. */
			c->cap_cols = c->cap_cols			? c->cap_cols * 2
				      : c->psize > CG_TREE_ENTRIES_MANY ? 16
									: 1024;
			c->col_src = xreallocarray(c->col_src, c->cap_cols, sizeof(uint32_t));
			c->col_last = xreallocarray(c->col_last, c->cap_cols, sizeof(uint32_t));
			c->col_back = xreallocarray(c->col_back, c->cap_cols, 1);
			c->col_parent =
			    xreallocarray(c->col_parent, c->cap_cols, c->psize * sizeof(uint32_t));
		}
		c->col_src[k] = s;
		c->col_last[k] = UINT32_MAX;
		c->col_back[k] = 0;
		memcpy(c->col_parent + (size_t)k * c->psize, parent, c->psize * sizeof(uint32_t));
		c->seen[at] = h;
		c->seen_col[at] = k;
		c->ncols++;
	}
	return k;
}

static void price_one(void *ctx, size_t s, unsigned worker)
{
	struct cg *c = ctx;
	struct cg_scratch *w = &c->ws[worker];
	uint32_t *parent = c->cand + s * c->psize, v = c->src_node[s];

	c->best[s] =
	    c->src_weight[s] * (c->T ? dag_paths(c, w, v, parent) : cg_dijkstra(c, w, v, parent));
}

/* The difference form: class s's reference tree's cost under prices y
 * (its columns' duals are relative to it). */
double cg_ref_cost(const struct cg *c, uint32_t s, const double *y)
{
	double cost = 0;

	for (size_t i = c->ref_off[s]; i < c->ref_off[s + 1]; i++)
		cost += cg_coef(c, s, c->ref_row[i], c->ref_hops[i]) * y[c->ref_row[i]];
	return cost;
}

/* The tree's cost under prices y. */
double cg_tree_cost(const struct cg *c, struct cg_scratch *w, uint32_t s, const uint32_t *parent,
		    const double *y)
{
	double cost = 0;

	cg_tree_coefs(c, w, s, parent);
	for (uint32_t i = 0; i < w->ntouched; i++) {
		uint32_t r = w->touched[i];

		cost += cg_coef(c, s, r, w->cnt[r]) * y[r];
		w->cnt[r] = 0;
	}
	return cost;
}

/* Price every source at c->y; returns the Lagrangian bound those prices
 * certify (0 when they are all zero). */
double cg_price_all(struct cg *c)
{
	double total = 0, ymax = 0;

	for (uint32_t r = 0; r < c->R; r++)
		c->ys[r] = c->y[r] / c->row_size[r % c->rows_per_slot];
	parallel_for(c->nsrc, 1, c->threads, price_one, c);
	for (uint32_t s = 0; s < c->nsrc; s++)
		total += c->best[s];
	for (uint32_t k = 0; k < c->slots; k++) {
		double sum = 0;

		for (uint32_t r = k * c->rows_per_slot; r < (k + 1) * c->rows_per_slot; r++)
			sum += c->y[r] * c->row_cap[r % c->rows_per_slot];
		if (sum > ymax)
			ymax = sum;
	}
	return ymax > 0 ? total / ymax : 0;
}
