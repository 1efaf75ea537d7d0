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
 */
#include "sched/internal.h"

#include "rwa/rwa.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NO_PARENT UINT32_MAX
#define HOLD	  (UINT32_MAX - 1)
#define MAX_ITER  20000u
/* A column out of the master's solution this many iterations is dropped
 * (the pricing brings it back when it prices out again; one it brought
 * back is kept from then on, or the master can cycle: see col_back). */
#define KEEP_ITERS 4u
/* Trees of more entries than this (n (T + 1), cg_store_tree) are given room
 * 16 at first rather than 1,024. */
#define CG_TREE_ENTRIES_MANY (1u << 16)
/* Rounds of multiplicative weights before the master (cg_warm_start). The
 * mirrored master, small, is solved once or twice from many; the plain
 * master on n sources with as many columns stalls in lp_solve (genkautz:27,6
 * does with 40), so it starts from fewer and generates the rest. */
#define MW_ROUNDS	40u
#define MW_ROUNDS_PLAIN 12u
/* A master solve taking this many times the slowest one so far (and at
 * least STALL_MIN seconds) has stalled: lp_solve cycles on some of these
 * degenerate masters. */
#define STALL_FACTOR 50.0
#define STALL_MIN    10.0
/* A warm start (a re-plan: its limit is a latency) gives up on a master
 * sooner, and goes on from a smaller one up to WARM_RECOVER times. */
#define STALL_FACTOR_WARM 10.0
#define WARM_RECOVER	  3u
/* Clp keeps its master from one iteration to the next (the new columns
 * added, the primal simplex going on from the last basis) until it holds
 * this many columns per row; lp_solve's is rebuilt every time (cg_rebuild
 * says why). */
#define CLP_KEEP_COLS_PER_ROW 32u
/* The share of a warm start's time limit left for its routes. */
#define ROUTES_SHARE 0.25
/* A re-plan's stand-in (standin_try): tried on graphs of 256 classes of
 * sources and more (genkautz:1024,4 less 0>1023 has 528; on genkautz:512,4
 * less 0>511, 240, the stand-in's optimum is worse than the degraded
 * re-plan's), when the lost arcs' orbits take at most 1% of the arcs and
 * leave at most 1 / STANDIN_FEWER as many classes, and the kept flow loads
 * no lost arc above 95% of its objective; column generation on the
 * degraded graph follows when half the time limit is left
 * (sched/internal.h: tests change them). */
struct mcf_standin_tuning mcf_standin = {
    .min_classes = 256, .arc_share = 0.01, .load = 0.95, .rest = 0.5};
#define STANDIN_FEWER 4u

uint64_t moore_tree_cost(uint64_t n, uint32_t d)
{
	uint64_t L = 0, rem = n ? n - 1 : 0, layer = d;

	if (d == 0)
		return 0;
	for (uint64_t i = 1; rem > 0; i++) {
		uint64_t k = rem < layer ? rem : layer;

		L += i * k;
		rem -= k;
		/* Layers only grow; past n they no longer matter. */
		if (layer <= n)
			layer *= d;
	}
	return L;
}

/* ---- translations -------------------------------------------------------- */

struct trans_ctx {
	const struct graph *g;
	uint32_t *perm;	   /* n * n, or NULL */
	uint32_t *scratch; /* per worker: n map + n queue */
	bool *ok;	   /* per s */
};

/* The map taking 0 to s and port j of u to port j of its image, by BFS;
 * false when two arcs disagree or the map is not a bijection. */
static bool translation(const struct graph *g, uint32_t s, uint32_t *map, uint32_t *queue)
{
	uint32_t n = g->n, head = 0, tail = 0;

	for (uint32_t u = 0; u < n; u++)
		map[u] = UINT32_MAX;
	map[0] = s;
	queue[tail++] = 0;
	while (head < tail) {
		uint32_t u = queue[head++], tu = map[u], d = graph_outdeg(g, u);

		if (graph_outdeg(g, tu) != d)
			return false;
		for (uint32_t j = 0; j < d; j++) {
			uint32_t v = g->adj[g->off[u] + j], w = g->adj[g->off[tu] + j];

			if (map[v] == UINT32_MAX) {
				map[v] = w;
				queue[tail++] = v;
			} else if (map[v] != w) {
				return false;
			}
		}
	}
	if (tail != n)
		return false;
	/* A bijection: queue is free now, reuse it as a seen-mark. */
	for (uint32_t u = 0; u < n; u++)
		queue[u] = 0;
	for (uint32_t u = 0; u < n; u++) {
		if (queue[map[u]])
			return false;
		queue[map[u]] = 1;
	}
	return true;
}

static void trans_one(void *ctx, size_t s, unsigned worker)
{
	struct trans_ctx *c = ctx;
	uint32_t n = c->g->n, *map = c->scratch + (size_t)worker * 2 * n;

	c->ok[s] = translation(c->g, (uint32_t)s, map, map + n);
	if (c->ok[s] && c->perm)
		memcpy(c->perm + s * n, map, n * sizeof(uint32_t));
}

bool mcf_translations(const struct graph *g, uint32_t *perm, unsigned threads)
{
	unsigned nt = threads ? threads : ofc_cpu_count();
	struct trans_ctx c = {.g = g, .perm = perm};
	bool all = true;

	if (g->n < 2)
		return false;
	c.scratch = xmalloc((size_t)nt * 2 * g->n * sizeof(uint32_t));
	c.ok = xcalloc(g->n, sizeof(bool));
	parallel_for(g->n, 16, nt, trans_one, &c);
	for (uint32_t s = 0; s < g->n; s++)
		all &= c.ok[s];
	free(c.scratch);
	free(c.ok);
	return all;
}

/* ---- shortest-path trees (the pricing problem) ---------------------------------- */

struct heap {
	uint32_t *node;
	double *key;
	uint32_t *pos; /* node -> index, UINT32_MAX when out */
	uint32_t n;
};

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

/* The problem the column generation solves: a graph, which arcs are rows
 * (self-loops never are), and how an (arc, step) maps to a link row. */
struct cg {
	const struct graph *g;
	uint32_t n, T;		       /* T = 0: fluid */
	uint32_t slots;		       /* max(T, 1) */
	enum mcf_method method;	       /* COLGEN, SYMMETRIC or MIRRORED */
	const struct graph_group *grp; /* MIRRORED: the automorphisms */
	enum lp_solver solver;	       /* the master's LP solver */
	/* Classes: sources with their own columns, one per orbit of nodes (n
	 * of one node each without symmetry). A class's tree stands for its
	 * src_weight sources; a row for the row_size arcs of an orbit (notes
	 * fluid-mcf-mirrored-dw.md 4.3: the symmetric solution loads every arc
	 * of an orbit alike, so a row holds the load of one of them). */
	uint32_t nsrc;
	uint32_t *src_node; /* nsrc: the class's representative */
	double *src_weight; /* nsrc: nodes in the class */
	uint32_t *arc_tail;
	uint32_t *arc_row; /* arc -> row within a slot, UINT32_MAX for self-loops */
	uint32_t rows_per_slot;
	double *row_size; /* rows_per_slot: arcs in the row's orbit */
	/* Host rows (notes alltoall-mcf.md 2.6, host forwarding):
	 * every hop leaving u costs u's injection and every hop entering v
	 * costs v's ejection, each at most host_cap (in link capacities) times
	 * the slot's U_k. Within a slot the link rows come first
	 * (link_rows), then one injection row per class of nodes (node_row[v];
	 * all n, one under the translations, the node orbits when mirrored),
	 * then as many ejection rows. row_size counts the nodes of a class. */
	double host_cap;    /* 0: no host rows */
	uint32_t link_rows; /* link rows per slot */
	uint32_t node_rows; /* injection rows per slot (as many ejection rows) */
	uint32_t *node_row; /* n: v's class, or NULL */
	double *row_cap;    /* rows_per_slot: 1 for links, host_cap for hosts */
	uint32_t R;	    /* link rows: rows_per_slot * slots */
	unsigned threads;

	struct lp *lp;
	uint32_t nlp_cols; /* U_k first, then the trees */
	/* The difference form (Clp, fluid, link rows only): a column holds
	 * its tree's coefficients less its class's reference tree's (the
	 * hop-shortest one), the references' on the right-hand side, the
	 * convexity rows equalities (weights summing to 1): the same LP with
	 * about half the non-zeros. ref_*: per class, its reference's hops per
	 * row (ref_off: nsrc + 1 offsets); ref_rhs: R, the rows' sides. */
	bool diff;
	size_t *ref_off;
	uint32_t *ref_row;
	double *ref_hops, *ref_rhs;
	double *y;  /* link prices (per row) */
	double *ys; /* per-arc prices: y / row_size */
	double *duals;

	/* columns: source and parent array (n or n * (T + 1) entries each) */
	size_t ncols, cap_cols, psize;
	uint32_t *col_src;
	uint32_t *col_parent;
	uint32_t *col_last; /* last iteration the column was in the LP's solution */
	/* The pricing brought the column back after the master dropped it:
	 * it stays. Dropping columns again and again let the master cycle
	 * (the time-stepped MCF of a demand matrix: 20,000 iterations over
	 * the same 203 columns of a 16-node graph, never optimal); with
	 * every column dropped at most once the column generation ends. */
	uint8_t *col_back;
	uint32_t *live; /* columns in the LP, in LP order (after the U_k) */
	size_t nlive, cap_live;
	uint32_t iter;
	/* the best primal so far: U_k and column weights, its columns */
	double *sol;
	uint32_t *sol_live;
	size_t sol_n;
	double slowest; /* the slowest master solve so far, seconds */
	/* lp_solve's scaling for the master: geometric alone solves the
	 * mirrored masters about twice as fast; the plain ones solve best
	 * (steadiest) with lp_solve's default. */
	enum lp_scaling scaling;

	/* hashes of the trees already columns (open addressing, 0 = empty) */
	uint64_t *seen;	    /* tree hash */
	uint32_t *seen_col; /* its column */
	size_t cap_seen;

	/* per-worker pricing scratch */
	struct cg_scratch *ws;
	/* per-source pricing results */
	double *best;	/* cost of the best tree of s */
	uint32_t *cand; /* nsrc * psize parent arrays */

	/* Re-planning: the solution to start from (or NULL), what it gave,
	 * and the prices of the best bound (kept for mcf_result.warm). */
	const struct mcf_warm *warm;
	uint32_t warm_cols;
	double warm_bound;
	double *best_y;
	const atomic_bool *cancel; /* mcf_opts.cancel */
	/* mcf_opts.demand: what each ordered pair asks for (n x n, relative),
	 * NULL: 1 for every pair. A tree then carries demand[s][t] to t. */
	const double *demand;
};

/* What source node s asks of t (1 without a demand matrix). */
static inline double cg_demand_of(const struct cg *c, uint32_t s, uint32_t t)
{
	return c->demand ? c->demand[(size_t)s * c->n + t] : 1;
}

/* Another thread let go of the solve (mcf_opts.cancel). */
static bool mcf_cancelled(const atomic_bool *cancel)
{
	return cancel && atomic_load_explicit(cancel, memory_order_relaxed);
}

static int mcf_cancel_error(struct ofc_error *err)
{
	return ofc_error_set(err, OFC_E_RUNTIME, "cancelled");
}

struct cg_scratch {
	struct heap h;
	double *dist; /* n * (T + 1) */
	double *cnt;  /* R: column coefficients being built */
	uint32_t *touched;
	uint32_t ntouched;
	/* fluid trees' coefficients in O(n): depth, order by depth, the
	 * depth buckets (n + 1), subtree sizes */
	uint32_t *depth, *order, *bucket;
	double *sub;
};

static uint32_t cg_row_of(const struct cg *c, uint32_t arc, uint32_t step)
{
	uint32_t r = c->arc_row[arc];

	return r == UINT32_MAX ? r : step * c->rows_per_slot + r;
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
static double cg_dijkstra(const struct cg *c, struct cg_scratch *w, uint32_t s, uint32_t *parent)
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
static uint32_t cg_walk(const struct cg *c, const uint32_t *parent, uint32_t t,
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

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
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
static void cg_tree_coefs(const struct cg *c, struct cg_scratch *w, uint32_t s,
			  const uint32_t *parent)
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
static double cg_coef(const struct cg *c, uint32_t s, uint32_t r, double hops)
{
	return hops * c->src_weight[s] / c->row_size[r % c->rows_per_slot];
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

/* The column of a tree: a known one, or a new one (not in the LP yet). */
static uint32_t cg_store_tree(struct cg *c, uint32_t s, const uint32_t *parent)
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

/* Put column k into the LP unless it is there: 1 when it put it. */
static int cg_add_column(struct cg *c, struct cg_scratch *w, uint32_t k, struct ofc_error *err)
{
	for (size_t i = 0; i < c->nlive; i++)
		if (c->live[i] == k)
			return 0;
	if (c->col_last[k] != UINT32_MAX)
		c->col_back[k] = 1; /* dropped once, priced out again */
	return lp_put(c, w, k, err) < 0 ? -1 : 1;
}

static void price_one(void *ctx, size_t s, unsigned worker)
{
	struct cg *c = ctx;
	struct cg_scratch *w = &c->ws[worker];
	uint32_t *parent = c->cand + s * c->psize, v = c->src_node[s];

	c->best[s] =
	    c->src_weight[s] * (c->T ? dag_paths(c, w, v, parent) : cg_dijkstra(c, w, v, parent));
}

static void cg_free(struct cg *c)
{
	unsigned nt = c->threads;

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

static void cg_setup(struct cg *c, const struct graph *g, uint32_t T, enum mcf_method method,
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
	c->ws = xcalloc(c->threads, sizeof(*c->ws));
	for (unsigned i = 0; i < c->threads; i++) {
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
static void cg_master(struct cg *c, enum lp_scaling scaling)
{
	c->lp = lp_new_known((int)c->slots, c->solver);
	lp_set_scaling(c->lp, scaling);
	lp_set_cancel(c->lp, c->cancel);
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
static int cg_rebuild(struct cg *c, bool all, enum lp_scaling scaling, struct ofc_error *err)
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
static bool cg_keeps_master(const struct cg *c)
{
	return c->solver == LP_SOLVER_CLP &&
	       c->nlive <= (size_t)CLP_KEEP_COLS_PER_ROW * (c->R + c->nsrc);
}

/* The difference form: class s's reference tree's cost under prices y
 * (its columns' duals are relative to it). */
static double cg_ref_cost(const struct cg *c, uint32_t s, const double *y)
{
	double cost = 0;

	for (size_t i = c->ref_off[s]; i < c->ref_off[s + 1]; i++)
		cost += cg_coef(c, s, c->ref_row[i], c->ref_hops[i]) * y[c->ref_row[i]];
	return cost;
}

/* The tree's cost under prices y. */
static double cg_tree_cost(const struct cg *c, struct cg_scratch *w, uint32_t s,
			   const uint32_t *parent, const double *y)
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
static double cg_price_all(struct cg *c)
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

/* The objective of a solution given its link loads: sum over slots of the
 * most loaded row (fluid: Z). */
static double cg_objective_of(const struct cg *c, const double *load)
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
static void cg_keep_solution(struct cg *c, const double *x)
{
	c->sol_n = c->nlive;
	c->sol_live = xreallocarray(c->sol_live, c->nlive + 1, sizeof(uint32_t));
	c->sol = xreallocarray(c->sol, c->slots + c->nlive + 1, sizeof(double));
	memcpy(c->sol_live, c->live, c->nlive * sizeof(uint32_t));
	memcpy(c->sol, x, (c->slots + c->nlive) * sizeof(double));
}

/* Columns to start from: a few rounds of multiplicative weights (the
 * Garg-Koenemann idea): every source's shortest-path tree under prices that
 * grow exponentially with the load the trees so far put on each link. The
 * master on these is already close to optimal, so the column generation
 * proper (whose first duals otherwise price a single link) needs few
 * iterations. The trees' average is a feasible flow, the primal to fall
 * back on when the time runs out before the master is solved once (*ub). */
static int cg_warm_start(struct cg *c, double *lb, double **center, double *ub, double until,
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

		for (uint32_t r = 0; r < R; r++) {
			double cap = c->row_cap[r % c->rows_per_slot];

			p.e[r] = exp(bb * (load[r] / cap - u0));
			c->y[r] = p.e[r] / cap;
			c->ys[r] = c->y[r] / c->row_size[r % c->rows_per_slot];
		}
		for (uint32_t s = 0; s < ns && now_seconds() < until && !mcf_cancelled(c->cancel);
		     s++) {
			uint32_t *parent = c->cand + (size_t)s * c->psize, nsup = 0;

			double blen = cg_dijkstra(c, ws, c->src_node[s], parent);
			uint32_t away = UINT32_MAX, ai = 0;
			double worst = blen * (1 + 1e-9), mass;

			/* The class's costliest tree under the prices gives way. */
			for (uint32_t i = 0; i < p.ncol[s]; i++) {
				uint32_t k = p.col[s][i];
				double len;

				if ((*x)[k] <= 0)
					continue;
				len = polish_len(c, p.hops[s][i]);
				if (len > worst) {
					worst = len;
					away = k;
					ai = i;
				}
			}
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
				p.e[r] = exp(bb * (load[r] / cap - u0));
				c->y[r] = p.e[r] / cap;
				c->ys[r] = c->y[r] / c->row_size[r % c->rows_per_slot];
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
	for (uint32_t s = 0; s < ns; s++) {
		for (uint32_t i = 0; i < p.ncol[s]; i++)
			free(p.hops[s][i]);
		free(p.hops[s]);
		free(p.col[s]);
	}
	free(p.hops);
	free(p.col);
	free(p.ncol);
	free(p.capcol);
	free(p.dn);
	free(p.delta);
	free(p.e);
	free(p.sup);
}

static int cg_warm_from(struct cg *c, double *lb, double **center, double *ub, double gap,
			double until, double master_by, struct ofc_error *err)
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
#define COLD_POLISH_CLASSES 256u
static int cg_cold_polish(struct cg *c, double *lb, double **center, double *ub, double gap,
			  double until, struct ofc_error *err)
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

/* Solve the master: 0 when solved, 1 when it stopped (*stop says why), -1
 * on errors. lp_solve can stall (cycle) or fail in LUSOL on these degenerate
 * masters; a stalled or failed solve is tried again on a fresh model with
 * another scaling (changing the scaling of a model lp_solve has scaled
 * already does not help). */
static int master_solve(struct cg *c, double deadline, enum mcf_stop *stop, struct ofc_error *err)
{
	const enum lp_scaling scaling[] = {
	    c->scaling, c->scaling == LP_SCALE_GEOMETRIC ? LP_SCALE_DEFAULT : LP_SCALE_GEOMETRIC,
	    LP_SCALE_NONE};

	for (size_t i = 0; i < ARRAY_SIZE(scaling); i++) {
		double t0 = now_seconds(), limit = 0;
		enum lp_result lr;

		/* The first solve has nothing to compare with: the deadline only. */
		if (c->slowest > 0)
			limit = fmax(STALL_MIN,
				     (c->warm ? STALL_FACTOR_WARM : STALL_FACTOR) * c->slowest);
		if (deadline > 0) {
			if (deadline - t0 <= 0)
				break;
			if (limit == 0 || deadline - t0 < limit)
				limit = deadline - t0;
		}
		if (i && cg_rebuild(c, true, scaling[i], err) < 0)
			return -1;
		lp_set_time_limit(c->lp, limit);
		lr = lp_solve(c->lp, err);
		if (lr == LP_OPTIMAL) {
			c->slowest = fmax(c->slowest, now_seconds() - t0);
			return 0;
		}
		/* Stopped by the callback: not lp_solve's trouble, no retry. */
		if (mcf_cancelled(c->cancel))
			return mcf_cancel_error(err);
		if (lr == LP_INFEASIBLE || lr == LP_UNBOUNDED)
			/* Not lp_solve's trouble: the model's. */
			return ofc_error_set(err, OFC_E_RUNTIME, "master LP: %s",
					     lp_result_str(lr));
		ofc_error_clear(err);
		if (deadline > 0 && now_seconds() >= deadline)
			break;
	}
	*stop = deadline > 0 && now_seconds() >= deadline ? MCF_STOP_TIME : MCF_STOP_LP;
	return 1;
}

/* Column generation with Wentges smoothing: pricing at a mix of the LP's
 * duals and the prices that gave the best bound so far damps the duals'
 * oscillation (the tail of plain column generation); a tree is added only
 * when it prices out against the LP's own duals, and when none does at the
 * mix, the LP's duals are priced directly (no false stop).
 *
 * Every solved master is a feasible flow (ub) and every priced y a
 * Lagrangian bound (lb), so stopping early, at the deadline, still leaves
 * an answer certified within ub / lb - 1 of the optimum. */
static int cg_run(struct cg *c, double gap, double deadline, struct mcf_result *res,
		  struct ofc_error *err)
{
	double ub = INFINITY, lb = 0, alpha = 0.5;
	double *ylp = xmalloc(c->R * sizeof(double)), *center = NULL, *x = NULL;
	uint32_t it, solves = 0, recovered = 0;
	bool lp_optimal = false, shrink = false;
	int rc = -1;

	cg_master(c, c->scaling);
	/* A warm start polishes its flow until that stalls (or the time is
	 * up): on a degraded graph's many classes one master solve can take
	 * longer than the whole time limit (genkautz:1024,4 less one arc). */
	double until = deadline > 0 ? deadline : INFINITY, begin = now_seconds();
	/* Nor is a warm start's master begun in the last tenth of the time:
	 * lp_solve looks at the clock only between pivots (a 10 s limit ran to
	 * 12.6 s at load 5), and putting the polished flow's heaviest trees
	 * into it took 1.1-3.7 s on genkautz:1024,4 less one arc. */
	double master_by = c->warm && deadline > 0 ? deadline - 0.1 * (deadline - begin) : until;
	if (c->warm ? cg_warm_from(c, &lb, &center, &ub, gap, until, master_by, err) < 0
		    : cg_warm_start(c, &lb, &center, &ub, until, err) < 0)
		goto out;
	if (!c->warm && c->demand && c->T == 0 && !c->node_row && c->nsrc >= COLD_POLISH_CLASSES &&
	    ub - lb > gap * ub &&
	    cg_cold_polish(c, &lb, &center, &ub, gap,
			   deadline > 0 ? begin + 0.8 * (deadline - begin) : INFINITY, err) < 0)
		goto out;
	for (it = 1; it <= MAX_ITER && ub - lb > gap * ub; it++) {
		int lr;

		if (mcf_cancelled(c->cancel)) {
			mcf_cancel_error(err);
			goto out;
		}
		if (deadline > 0 && now_seconds() >= deadline) {
			res->stop = MCF_STOP_TIME;
			break;
		}
		if (now_seconds() >= master_by) {
			res->stop = MCF_STOP_TIME;
			break;
		}
		c->iter = it;
		if (it > 1 && (shrink || !cg_keeps_master(c)) &&
		    cg_rebuild(c, false, c->scaling, err) < 0)
			goto out;
		shrink = false;
		lr = master_solve(c, deadline, &res->stop, err);
		if (lr < 0)
			goto out;
		if (lr > 0 && res->stop == MCF_STOP_LP && c->warm && recovered++ < WARM_RECOVER) {
			/* lp_solve gave up on this master in every scaling: a
			 * warm start goes on from a smaller one, the columns of
			 * the last masters and of the best flow (genkautz:64,4
			 * less 0>63,5>40: the next master solved it to the
			 * optimum, where stopping left a 1.2% gap). */
			for (size_t i = 0; i < c->sol_n; i++)
				if (c->sol[c->slots + i] > 0)
					c->col_last[c->sol_live[i]] = it;
			res->stop = MCF_STOP_OPTIMAL; /* not stopped yet */
			shrink = true;
			continue;
		}
		if (lr > 0)
			break; /* out of time, or lp_solve gave up: keep the last master */
		solves++;
		if (lp_duals(c->lp, c->duals) < 0) {
			ofc_error_set(err, OFC_E_RUNTIME, "master LP: no duals");
			goto out;
		}
		for (uint32_t r = 0; r < c->R; r++)
			ylp[r] = c->duals[r] < 0 ? -c->duals[r] : 0;
		x = xreallocarray(x, (size_t)lp_ncols(c->lp), sizeof(double));
		lp_solution(c->lp, x);
		/* The master keeps its optimum's columns, so its value only
		 * falls; the warm start's average may still be better. */
		if (lp_objective(c->lp) < ub) {
			ub = lp_objective(c->lp);
			cg_keep_solution(c, x);
		}
		for (size_t i = 0; i < c->nlive; i++)
			if (x[c->slots + i] > 0)
				c->col_last[c->live[i]] = it;
		uint32_t added = 0;
		for (int pass = center ? 0 : 1; pass < 2 && !added; pass++) {
			double b;

			for (uint32_t r = 0; r < c->R; r++)
				c->y[r] = pass ? ylp[r] : alpha * center[r] + (1 - alpha) * ylp[r];
			b = cg_price_all(c);
			if (b > lb) {
				lb = b;
				if (!center)
					center = xmalloc(c->R * sizeof(double));
				memcpy(center, c->y, c->R * sizeof(double));
			}
			if (ub - lb <= gap * ub)
				break;
			for (uint32_t s = 0; s < c->nsrc; s++) {
				double pi = c->diff ? c->duals[c->R + s] + cg_ref_cost(c, s, ylp)
					    : c->duals[c->R + s] > 0 ? c->duals[c->R + s]
								     : 0;
				const uint32_t *tree = c->cand + s * c->psize;
				double cost =
				    pass ? c->best[s] : cg_tree_cost(c, &c->ws[0], s, tree, ylp);
				/* lp_solve's duals are good to about 1e-9. */
				if (cost < pi - 1e-9 * (1 + pi)) {
					int a = cg_add_column(c, &c->ws[0],
							      cg_store_tree(c, s, tree), err);

					if (a < 0)
						goto out;
					added += (uint32_t)a;
				}
			}
		}
		if (!added) {
			/* Nothing prices out: the master is optimal (lb may
			 * trail ub by the duals' noise). */
			lp_optimal = true;
			break;
		}
	}
	res->iterations = solves;
	res->columns = c->ncols;
	res->objective = ub;
	res->lower = lb < ub ? lb : ub;
	res->theta = 1 / ub;
	res->optimal = lp_optimal || ub - res->lower <= gap * ub;
	res->gap = ub / res->lower - 1;
	if (res->optimal)
		res->stop = MCF_STOP_OPTIMAL;
	else if (res->stop == MCF_STOP_OPTIMAL)
		res->stop = MCF_STOP_ITERATIONS;
	if (c->T) {
		/* The kept solution's U_k come first. */
		res->step_load = xmalloc(c->T * sizeof(double));
		memcpy(res->step_load, c->sol, c->T * sizeof(double));
	}
	rc = 0;
out:
	free(x);
	free(ylp);
	c->best_y = center; /* cg_free frees it */
	return rc;
}

/* The kept solution and the best bound's lengths as a warm start for
 * another graph (fluid, link rows only). Symmetric: one class, the
 * translations (arcs by port); mirrored: the group; plain: each node its
 * own class under the identity. */
static struct mcf_warm *cg_warm_export(const struct cg *c, const uint32_t *perm)
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

/* ---- routes from the trees -------------------------------------------------------- */

struct hopbuf {
	uint32_t arc[64 * 1024], step[64 * 1024];
	uint32_t n;
};

static void push_hop(void *ctx, uint32_t arc, uint32_t step)
{
	struct hopbuf *b = ctx;

	b->arc[b->n] = arc;
	b->step[b->n] = step;
	b->n++;
}

/* A fluid class's routes from its trees by interning their paths: a path
 * is (the path to its last arc's tail, that arc), so each tree names the
 * path to every node with one lookup per node, and a pair's distinct paths
 * are its distinct ids, found without walking or comparing them. The
 * polished warm start's ~35 trees per class share most of their paths
 * (genkautz:1024,4 less one arc: 18,600 trees, 3.1 M distinct paths), and
 * walking every tree for every destination, then comparing, took 2.4 s of
 * the re-plan. Routes come out as cg_routes' loop would give them: per
 * destination, each path at its first tree, the weights summed in tree
 * order. */
struct interned {
	uint32_t *pre, *last, *len; /* per path id; id 0 the empty path */
	size_t npaths, cap;
	uint64_t *key; /* open addressing: (pre << 32 | arc) + 1, 0 = empty */
	uint32_t *val;
	size_t cap_key;
};

static size_t intern_slot(const struct interned *p, uint64_t key)
{
	size_t j = (key * 0x9e3779b97f4a7c15ull) >> 20 & (p->cap_key - 1);

	while (p->key[j] && p->key[j] != key)
		j = (j + 1) & (p->cap_key - 1);
	return j;
}

static uint32_t intern_path(struct interned *p, uint32_t pre, uint32_t arc)
{
	uint64_t key = ((uint64_t)pre << 32 | arc) + 1;
	size_t j;

	if (2 * (p->npaths + 1) > p->cap_key) {
		/* Grown as the paths come: they are far fewer than trees x
		 * nodes, the trees sharing their prefixes. */
		uint64_t *ok = p->key;
		uint32_t *ov = p->val;
		size_t ocap = p->cap_key;

		p->cap_key = ocap ? 2 * ocap : 1024;
		p->key = xcalloc(p->cap_key, sizeof(uint64_t));
		p->val = xmalloc(p->cap_key * sizeof(uint32_t));
		for (size_t i = 0; i < ocap; i++)
			if (ok[i]) {
				size_t k = intern_slot(p, ok[i]);

				p->key[k] = ok[i];
				p->val[k] = ov[i];
			}
		free(ok);
		free(ov);
	}
	j = intern_slot(p, key);
	if (p->key[j])
		return p->val[j];
	if (p->npaths + 1 > p->cap) {
		p->cap = p->cap ? p->cap * 2 : 1024;
		p->pre = xreallocarray(p->pre, p->cap, sizeof(uint32_t));
		p->last = xreallocarray(p->last, p->cap, sizeof(uint32_t));
		p->len = xreallocarray(p->len, p->cap, sizeof(uint32_t));
	}
	p->pre[p->npaths] = pre;
	p->last[p->npaths] = arc;
	p->len[p->npaths] = p->len[pre] + 1;
	p->key[j] = key;
	p->val[j] = (uint32_t)p->npaths;
	return (uint32_t)p->npaths++;
}

static int class_routes_fluid(struct cg *c, uint32_t s, const size_t *cols, const double *w,
			      size_t ntr, struct a2a_routes *rt, struct ofc_error *err)
{
	uint32_t n = c->n, src = c->src_node[s];
	uint32_t *pid = xmalloc(ntr * n * sizeof(uint32_t)), *stack = xmalloc(n * sizeof(uint32_t));
	struct interned p = {0};
	int rc = 0;

	p.cap = 1024;
	p.pre = xmalloc(p.cap * sizeof(uint32_t));
	p.last = xmalloc(p.cap * sizeof(uint32_t));
	p.len = xmalloc(p.cap * sizeof(uint32_t));
	p.pre[0] = p.last[0] = p.len[0] = 0;
	p.npaths = 1;
	for (size_t i = 0; i < ntr; i++) {
		const uint32_t *parent = c->col_parent + cols[i] * c->psize;
		uint32_t *id = pid + i * n;

		for (uint32_t v = 0; v < n; v++)
			id[v] = UINT32_MAX;
		id[src] = 0;
		for (uint32_t v = 0; v < n; v++) {
			uint32_t top = 0, u = v;

			/* Not in the tree: no hops (as walk gives). */
			while (id[u] == UINT32_MAX && parent[u] != NO_PARENT) {
				stack[top++] = u;
				u = c->arc_tail[parent[u]];
			}
			if (id[u] == UINT32_MAX)
				id[u] = 0;
			while (top) {
				uint32_t x = stack[--top];

				id[x] = intern_path(&p, id[c->arc_tail[parent[x]]], parent[x]);
			}
		}
	}
	double *acc = xcalloc(p.npaths, sizeof(double));
	uint32_t *seen = xmalloc(p.npaths * sizeof(uint32_t)),
		 *list = xmalloc(ntr * sizeof(uint32_t));
	uint32_t maxlen = 0;

	for (size_t i = 0; i < p.npaths; i++) {
		seen[i] = UINT32_MAX;
		maxlen = p.len[i] > maxlen ? p.len[i] : maxlen;
	}
	if (maxlen > 32 * 1024)
		rc = ofc_error_set(err, OFC_E_RUNTIME, "route too long");
	/* Two passes over the targets: the routes and hops they add, then
	 * the routes, their arcs written in place from the trie (a copy of
	 * every hop, and the arrays' doublings, were a tenth of the paths
	 * lowering on torus:256x256). */
	for (int pass = 0; pass < 2 && rc == 0; pass++) {
		size_t routes = 0, hops = 0;

		for (uint32_t t = 0; t < n; t++) {
			uint32_t nl = 0;

			if (t == src || !(cg_demand_of(c, src, t) > 0))
				continue;
			for (size_t i = 0; i < ntr; i++) {
				uint32_t id = pid[i * n + t];

				if (seen[id] != t + pass * n) {
					seen[id] = t + pass * n;
					acc[id] = 0;
					list[nl++] = id;
				}
				acc[id] += w[i];
			}
			for (uint32_t j = 0; j < nl; j++) {
				uint32_t id = list[j], len = p.len[id];

				if (!pass) {
					routes++;
					hops += len;
					continue;
				}
				uint32_t *arc = a2a_routes_push(rt, src, t, acc[id], len);
				for (uint32_t q = id, h = len; q; q = p.pre[q])
					arc[--h] = p.last[q];
			}
		}
		if (!pass)
			a2a_routes_reserve(rt, routes, hops);
	}
	free(acc);
	free(seen);
	free(list);
	free(pid);
	free(stack);
	free(p.pre);
	free(p.last);
	free(p.len);
	free(p.key);
	free(p.val);
	return rc;
}

/* Every pair's distinct paths with their weights (identical paths of
 * different trees merged), the weights of a pair summing to 1: from the kept
 * solution, for each class's representative. */
static int cg_routes(struct cg *c, struct a2a_routes *rt, struct ofc_error *err)
{
	const double *x = c->sol + c->slots;
	double *sum = xcalloc(c->nsrc, sizeof(double));
	struct hopbuf *b = xmalloc(sizeof(*b));
	uint64_t *phash = NULL; /* the pair's routes' hashes */
	size_t cap_phash = 0;

	/* The solution's columns by class (a warm start's polish leaves tens
	 * of thousands: scanning them all for every pair took most of the
	 * time on genkautz:1024,4). */
	size_t *first = xcalloc((size_t)c->nsrc + 1, sizeof(size_t));
	size_t *by = xmalloc((c->sol_n + 1) * sizeof(size_t));

	rt->n = c->n;
	for (size_t i = 0; i < c->sol_n; i++) {
		sum[c->col_src[c->sol_live[i]]] += x[i];
		first[c->col_src[c->sol_live[i]] + 1]++;
	}
	for (uint32_t s = 0; s < c->nsrc; s++)
		first[s + 1] += first[s];
	size_t *fill = xmalloc(((size_t)c->nsrc + 1) * sizeof(size_t));
	memcpy(fill, first, c->nsrc * sizeof(size_t));
	for (size_t i = 0; i < c->sol_n; i++)
		by[fill[c->col_src[c->sol_live[i]]]++] = i;
	free(fill);
	size_t *cols = xmalloc((c->sol_n + 1) * sizeof(size_t));
	double *cw = xmalloc((c->sol_n + 1) * sizeof(double));
	for (uint32_t s = 0; s < c->nsrc; s++) {
		uint32_t src = c->src_node[s];

		if (c->T == 0) {
			size_t ntr = 0;

			for (size_t j = first[s]; j < first[s + 1]; j++)
				if (x[by[j]] > 1e-12 * sum[s]) {
					cols[ntr] = c->sol_live[by[j]];
					cw[ntr++] = x[by[j]] / sum[s];
				}
			if (class_routes_fluid(c, s, cols, cw, ntr, rt, err) < 0) {
				free(sum), free(b), free(phash), free(first), free(by);
				free(cols), free(cw);
				return -1;
			}
			continue;
		}
		for (uint32_t t = 0; t < c->n; t++) {
			if (t == src || !(cg_demand_of(c, src, t) > 0))
				continue;
			size_t pair0 = rt->nroutes;

			for (size_t j = first[s]; j < first[s + 1]; j++) {
				size_t i = by[j], k = c->sol_live[i];
				double w = x[i];

				if (w <= 1e-12 * sum[s])
					continue;
				b->n = 0;
				cg_walk(c, c->col_parent + k * c->psize, t, push_hop, b);
				if (b->n > ARRAY_SIZE(b->arc) / 2) {
					free(sum), free(b), free(phash), free(first), free(by);
					free(cols), free(cw);
					return ofc_error_set(err, OFC_E_RUNTIME, "route too long");
				}
				/* The walk goes from the destination back. */
				for (uint32_t q = 0; q < b->n / 2; q++) {
					uint32_t a = b->arc[q], st = b->step[q];

					b->arc[q] = b->arc[b->n - 1 - q];
					b->step[q] = b->step[b->n - 1 - q];
					b->arc[b->n - 1 - q] = a;
					b->step[b->n - 1 - q] = st;
				}
				/* Same path as one of this pair's routes so far? (A
				 * hash first: a polished warm start leaves dozens of
				 * trees per source, and most of their paths agree.) */
				bool merged = false;
				uint64_t hh = 0xcbf29ce484222325ull;
				for (uint32_t q = 0; q < b->n; q++)
					hh = (hh ^ ((uint64_t)b->arc[q] << 8 ^ b->step[q])) *
					     0x100000001b3ull;
				GROW(phash, cap_phash, rt->nroutes - pair0 + 1);
				for (size_t r = pair0; r < rt->nroutes && !merged; r++) {
					size_t len = rt->off[r + 1] - rt->off[r];

					merged = phash[r - pair0] == hh && len == b->n &&
						 !memcmp(rt->arc + rt->off[r], b->arc,
							 len * sizeof(uint32_t)) &&
						 !memcmp(rt->step + rt->off[r], b->step,
							 len * sizeof(uint32_t));
					if (merged)
						rt->w[r] += w / sum[s];
				}
				if (!merged) {
					phash[rt->nroutes - pair0] = hh;
					a2a_routes_add(rt, src, t, w / sum[s], b->arc, b->step,
						       b->n);
				}
			}
		}
	}
	free(sum);
	free(b);
	free(phash);
	free(first);
	free(by);
	free(cols);
	free(cw);
	return 0;
}

/* The representatives' routes mirrored to every source (notes
 * fluid-mcf-mirrored-dw.md 4.3): source v of class k gets, for each group
 * element h with h(o_k) = v, the routes of o_k to h^-1(t) moved by h, with
 * weight 1 / |stabiliser of o_k|. That averages o_k's solution over the
 * whole group, so every arc of an orbit carries the same load: the load the
 * master's orbit row bounds. Identical paths of a pair are merged. */
static void cg_mirror_routes(const struct cg *c, struct a2a_routes *rt)
{
	const struct graph_group *grp = c->grp;
	uint32_t n = c->n, m = c->g->m, H = grp->order;
	struct a2a_routes out = {.n = n};
	/* Routes of (class, t): rt is in class order, then t order. */
	size_t *first = xmalloc(((size_t)c->nsrc * n + 1) * sizeof(size_t));
	uint32_t *inv = xmalloc((size_t)H * n * sizeof(uint32_t));
	uint32_t *arc = NULL;
	size_t cap = 0, cap_phash = 0;
	uint64_t *phash = NULL; /* the pair's routes' hashes, as in cg_routes */

	for (size_t i = 0; i <= (size_t)c->nsrc * n; i++)
		first[i] = SIZE_MAX;
	for (size_t r = rt->nroutes; r-- > 0;)
		first[(size_t)c->grp->orbit[rt->src[r]] * n + rt->dst[r]] = r;
	for (uint32_t h = 0; h < H; h++)
		for (uint32_t u = 0; u < n; u++)
			inv[(size_t)h * n + grp->node[(size_t)h * n + u]] = u;
	for (uint32_t v = 0; v < n; v++) {
		uint32_t k = grp->orbit[v], o = c->src_node[k];
		double stab = H / c->src_weight[k];

		for (uint32_t t = 0; t < n; t++) {
			size_t pair0 = out.nroutes;

			if (t == v)
				continue;
			for (uint32_t h = 0; h < H; h++) {
				const uint32_t *hn = grp->node + (size_t)h * n;
				const uint32_t *ha = grp->arc + (size_t)h * m;
				uint32_t t0 = inv[(size_t)h * n + t];

				if (hn[o] != v)
					continue;
				for (size_t r = first[(size_t)k * n + t0];
				     r < rt->nroutes && rt->src[r] == o && rt->dst[r] == t0; r++) {
					size_t len = rt->off[r + 1] - rt->off[r];
					bool merged = false;

					uint64_t hh = 0xcbf29ce484222325ull;

					/* The images' steps are the route's own (NULL:
					 * hop i at step i, for both). */
					const uint32_t *step = a2a_route_steps(rt, r);

					GROW(arc, cap, len + 1);
					/* One element takes o to v: its images of o's
					 * distinct paths are distinct (most sources of a
					 * degraded graph, whose orbits are pairs). */
					if (stab == 1) {
						for (size_t i = 0; i < len; i++)
							arc[i] = ha[rt->arc[rt->off[r] + i]];
						a2a_routes_add(&out, v, t, rt->w[r], arc, step,
							       len);
						continue;
					}
					for (size_t i = 0; i < len; i++) {
						arc[i] = ha[rt->arc[rt->off[r] + i]];
						hh = (hh ^ ((uint64_t)arc[i] << 8 ^
							    (step ? step[i] : (uint32_t)i))) *
						     0x100000001b3ull;
					}
					GROW(phash, cap_phash, out.nroutes - pair0 + 1);
					for (size_t q = pair0; q < out.nroutes && !merged; q++) {
						if (phash[q - pair0] != hh ||
						    out.off[q + 1] - out.off[q] != len)
							continue;
						merged =
						    !memcmp(out.arc + out.off[q], arc,
							    len * sizeof(uint32_t)) &&
						    (!step || !memcmp(out.step + out.off[q], step,
								      len * sizeof(uint32_t)));
						if (merged)
							out.w[q] += rt->w[r] / stab;
					}
					if (merged)
						continue;
					phash[out.nroutes - pair0] = hh;
					a2a_routes_add(&out, v, t, rt->w[r] / stab, arc, step, len);
				}
			}
		}
	}
	free(first);
	free(inv);
	free(arc);
	free(phash);
	a2a_routes_free(rt);
	*rt = out;
}

/* ---- the plain LPs ---------------------------------------------------------------- */

/* The master LP (6)-(9): g[s][a] for every source and non-loop arc, theta. */
static int mcf_master_lp(const struct graph *g, const double *cap, const double *demand,
			 enum lp_solver sv, struct mcf_result *res, struct ofc_error *err)
{
	uint32_t n = g->n, m = g->m;
	uint32_t *tail = graph_arc_tails(g);
	int ncols = (int)((size_t)n * m + 1), th = ncols - 1;
	struct lp *lp;
	int *cols;
	double *vals;

	if ((size_t)n * m + 1 > (size_t)INT32_MAX / 2) {
		free(tail);
		return ofc_error_set(err, OFC_E_INPUT, "the master LP would be too large");
	}
	lp = lp_new_known(ncols, sv);
	lp_maximize(lp, true);
	lp_set_obj_coef(lp, th, 1);
	cols = xmalloc(((size_t)n + 2 * (size_t)m + 2) * sizeof(int));
	vals = xmalloc(((size_t)n + 2 * (size_t)m + 2) * sizeof(double));
	for (uint32_t a = 0; a < m; a++) {
		if (g->adj[a] == tail[a]) {
			/* A self-loop carries nothing useful. */
			for (uint32_t s = 0; s < n; s++)
				lp_set_bounds(lp, (int)((size_t)s * m + a), 0, 0);
			continue;
		}
		for (uint32_t s = 0; s < n; s++) {
			cols[s] = (int)((size_t)s * m + a);
			vals[s] = 1;
		}
		lp_add_row(lp, (int)n, cols, vals, LP_LE, cap ? cap[a] : 1);
	}
	/* (8): in(u) - out(u) - theta >= 0 for every source s and u != s
	 * (theta x demand[s][u] with a demand matrix). */
	struct graph *gt = graph_transpose(g);
	uint32_t *in_arc = xmalloc(((size_t)m + 1) * sizeof(uint32_t));
	/* Arcs into v, as indices of g: match the transpose's order. */
	uint32_t *fill = xcalloc(n, sizeof(uint32_t));
	for (uint32_t a = 0; a < m; a++) {
		uint32_t v = g->adj[a];

		in_arc[gt->off[v] + fill[v]++] = a;
	}
	free(fill);
	for (uint32_t s = 0; s < n; s++)
		for (uint32_t u = 0; u < n; u++) {
			int k = 0;

			if (u == s)
				continue;
			for (uint32_t i = gt->off[u]; i < gt->off[u + 1]; i++) {
				uint32_t a = in_arc[i];

				if (tail[a] == u)
					continue;
				cols[k] = (int)((size_t)s * m + a);
				vals[k++] = 1;
			}
			for (uint32_t a = g->off[u]; a < g->off[u + 1]; a++) {
				if (g->adj[a] == u)
					continue;
				cols[k] = (int)((size_t)s * m + a);
				vals[k++] = -1;
			}
			cols[k] = th;
			vals[k++] = demand ? -demand[(size_t)s * n + u] : -1;
			lp_add_row(lp, k, cols, vals, LP_GE, 0);
		}
	enum lp_result lr = lp_solve(lp, err);
	int rc = 0;
	if (lr != LP_OPTIMAL) {
		rc = lr == LP_FAILED
			 ? -1
			 : ofc_error_set(err, OFC_E_RUNTIME, "master LP: %s", lp_result_str(lr));
	} else {
		double *x = xmalloc((size_t)ncols * sizeof(double));

		lp_solution(lp, x);
		res->theta = x[th];
		res->objective = 1 / x[th];
		res->lower = res->objective;
		res->flow = xmalloc((size_t)n * m * sizeof(double));
		memcpy(res->flow, x, (size_t)n * m * sizeof(double));
		free(x);
	}
	lp_free(lp);
	graph_free(gt);
	free(in_arc);
	free(cols);
	free(vals);
	free(tail);
	return rc;
}

/* Commodity flows of one source s over every destination t != s, with
 * capacities: the common core of the link LP (1)-(5) (all sources, unit
 * capacity shared) and the child LP (10)-(14) (one source, cap = g^s). The
 * sink constraint counts net inflow (the notes' caveat to (4)). */
static int mcf_commodity_lp(const struct graph *g, const uint32_t *srcs, uint32_t nsrcs,
			    const double *cap, const double *demand, enum lp_solver sv,
			    double *theta, struct ofc_error *err)
{
	uint32_t n = g->n, m = g->m;
	size_t K = (size_t)nsrcs * (n - 1), ncols = K * m + 1;
	int th = (int)(ncols - 1);
	uint32_t *tail = graph_arc_tails(g);
	int *cols;
	double *vals;
	struct lp *lp;

	if (ncols > 4000000)
		return free(tail),
		       ofc_error_set(err, OFC_E_INPUT,
				     "the link LP would have %zu columns (limit 4M)", ncols);
	lp = lp_new_known((int)ncols, sv);
	lp_maximize(lp, true);
	lp_set_obj_coef(lp, th, 1);
	cols = xmalloc((K + 2 * (size_t)m + 2) * sizeof(int));
	vals = xmalloc((K + 2 * (size_t)m + 2) * sizeof(double));
	/* Capacity: all commodities on an arc. */
	for (uint32_t a = 0; a < m; a++) {
		bool loop = g->adj[a] == tail[a];

		for (size_t k = 0; k < K; k++) {
			cols[k] = (int)(k * m + a);
			vals[k] = 1;
			if (loop)
				lp_set_bounds(lp, cols[k], 0, 0);
		}
		if (!loop)
			lp_add_row(lp, (int)K, cols, vals, LP_LE, cap ? cap[a] : 1);
	}
	/* Per commodity (s, t) and node u: net inflow >= 0 (transit), >= theta
	 * (sink; theta x demand[s][t] with a demand matrix); nothing needed at
	 * the source (flow leaves it). */
	struct graph *gt = graph_transpose(g);
	uint32_t *in_arc = xmalloc(((size_t)m + 1) * sizeof(uint32_t));
	uint32_t *fill = xcalloc(n, sizeof(uint32_t));
	for (uint32_t a = 0; a < m; a++)
		in_arc[gt->off[g->adj[a]] + fill[g->adj[a]]++] = a;
	free(fill);
	size_t k = 0;
	for (uint32_t i = 0; i < nsrcs; i++)
		for (uint32_t t = 0; t < n; t++) {
			uint32_t s = srcs[i];

			if (t == s)
				continue;
			for (uint32_t u = 0; u < n; u++) {
				int q = 0;

				if (u == s)
					continue;
				for (uint32_t j = gt->off[u]; j < gt->off[u + 1]; j++) {
					if (tail[in_arc[j]] == u)
						continue;
					cols[q] = (int)(k * m + in_arc[j]);
					vals[q++] = 1;
				}
				for (uint32_t a = g->off[u]; a < g->off[u + 1]; a++) {
					if (g->adj[a] == u)
						continue;
					cols[q] = (int)(k * m + a);
					vals[q++] = -1;
				}
				if (u == t) {
					cols[q] = th;
					vals[q++] = demand ? -demand[(size_t)s * n + t] : -1;
				}
				lp_add_row(lp, q, cols, vals, LP_GE, 0);
			}
			k++;
		}
	enum lp_result lr = lp_solve(lp, err);
	int rc = 0;
	if (lr != LP_OPTIMAL)
		rc = lr == LP_FAILED
			 ? -1
			 : ofc_error_set(err, OFC_E_RUNTIME, "link LP: %s", lp_result_str(lr));
	else
		*theta = lp_objective(lp);
	lp_free(lp);
	graph_free(gt);
	free(in_arc);
	free(cols);
	free(vals);
	free(tail);
	return rc;
}

int mcf_child_lp(const struct graph *g, uint32_t s, const double *cap, double *theta_s,
		 struct ofc_error *err)
{
	if (s >= g->n)
		return ofc_error_set(err, OFC_E_INPUT, "no node %u", s);
	if (!lp_solver_available(MCF_LP, err))
		return -1;
	return mcf_commodity_lp(g, &s, 1, cap, NULL, MCF_LP, theta_s, err);
}

/* ---- capacities and symmetry ------------------------------------------------------ */

/* Every port at one capacity at every node: what the translations (which
 * keep ports) need to load each port's arcs alike. */
static bool mcf_caps_per_port(const struct graph *g, const double *cap)
{
	for (uint32_t u = 1; u < g->n; u++)
		for (uint32_t j = 0; j < graph_outdeg(g, u); j++)
			if (j >= graph_outdeg(g, 0) || cap[g->off[u] + j] != cap[g->off[0] + j])
				return false;
	return true;
}

/* Element h keeps every arc's capacity. */
static bool keeps_capacity(const struct graph_group *grp, uint32_t h, const void *ctx)
{
	const double *cap = ctx;
	const uint32_t *ha = grp->arc + (size_t)h * grp->m;

	for (uint32_t a = 0; a < grp->m; a++)
		if (cap[ha[a]] != cap[a])
			return false;
	return true;
}

/* Element h keeps every pair's demand: D[h(u)][h(v)] = D[u][v]. */
static bool keeps_demand(const struct graph_group *grp, uint32_t h, const void *ctx)
{
	const double *dem = ctx;
	const uint32_t *hn = grp->node + (size_t)h * grp->n;
	uint32_t n = grp->n;

	for (uint32_t u = 0; u < n; u++)
		for (uint32_t v = 0; v < n; v++)
			if (dem[(size_t)hn[u] * n + hn[v]] != dem[(size_t)u * n + v])
				return false;
	return true;
}

/* Keep the elements of grp that keep(...) says keep something (the
 * stabiliser of the capacities, of a demand matrix: a subgroup, so the
 * mirrored master's averaging argument holds for it) and recompute the
 * orbits. */
static void group_keep(struct graph_group *grp,
		       bool (*keeps)(const struct graph_group *, uint32_t, const void *),
		       const void *ctx)
{
	uint32_t n = grp->n, m = grp->m, k = 0;

	for (uint32_t h = 0; h < grp->order; h++) {
		const uint32_t *ha = grp->arc + (size_t)h * m;

		if (!keeps(grp, h, ctx))
			continue;
		if (k != h) {
			memmove(grp->node + (size_t)k * n, grp->node + (size_t)h * n,
				n * sizeof(uint32_t));
			memmove(grp->arc + (size_t)k * m, ha, m * sizeof(uint32_t));
		}
		k++;
	}
	if (k == grp->order)
		return;
	grp->order = k;
	grp->full_order = k;
	grp->complete = false;
	memset(grp->orbit, 0xff, n * sizeof(uint32_t));
	grp->norbits = 0;
	for (uint32_t u = 0; u < n; u++) {
		if (grp->orbit[u] != UINT32_MAX)
			continue;
		for (uint32_t h = 0; h < k; h++)
			grp->orbit[grp->node[(size_t)h * n + u]] = grp->norbits;
		grp->norbits++;
	}
	memset(grp->arc_orbit, 0xff, m * sizeof(uint32_t));
	grp->narc_orbits = 0;
	for (uint32_t a = 0; a < m; a++) {
		if (grp->arc_orbit[a] != UINT32_MAX)
			continue;
		for (uint32_t h = 0; h < k; h++)
			grp->arc_orbit[grp->arc[(size_t)h * m + a]] = grp->narc_orbits;
		grp->narc_orbits++;
	}
}

/* ---- entry ---------------------------------------------------------------------- */

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

/* The most a node sends or receives under a demand matrix. */
static double demand_most(uint32_t n, const double *demand)
{
	double most = 0;

	for (uint32_t u = 0; u < n; u++) {
		double out = 0, in = 0;

		for (uint32_t v = 0; v < n; v++)
			if (v != u) {
				out += demand[(size_t)u * n + v];
				in += demand[(size_t)v * n + u];
			}
		most = fmax(most, fmax(out, in));
	}
	return most;
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

/* The demand is alike under every translation of a Cayley graph: under
 * the ones taking node 0 to its neighbours, which generate them all (the
 * graph is connected). */
static bool mcf_translations_keep(const struct graph *g, const double *dem, unsigned threads)
{
	uint32_t n = g->n, *perm = xmalloc((size_t)n * n * sizeof(uint32_t));
	bool keep = mcf_translations(g, perm, threads);

	for (uint32_t a = g->off[0]; keep && a < g->off[1]; a++) {
		const uint32_t *p = perm + (size_t)g->adj[a] * n;

		for (uint32_t u = 0; keep && u < n; u++)
			for (uint32_t v = 0; keep && v < n; v++)
				keep = dem[(size_t)p[u] * n + p[v]] == dem[(size_t)u * n + v];
	}
	free(perm);
	return keep;
}

/* Column generation's solver when the request names none (bench/RESULTS.md,
 * "LP solvers"): Clp from MCF_CLP_NODES nodes (2-2.6x faster on
 * genkautz:256,4 to 1024,4's masters), lp_solve below and for the
 * one-source master (where Clp's load costs more than it saves); lp_solve
 * too when Clp's plugin cannot be loaded. */
static enum lp_solver mcf_default_solver(const struct graph *g, enum mcf_method m)
{
	struct ofc_error err = {0};

	if (g->n < MCF_CLP_NODES || m == MCF_SYMMETRIC)
		return MCF_LP;
	return lp_solver_available(LP_SOLVER_CLP, &err) ? LP_SOLVER_CLP : MCF_LP;
}

/* The repaired flow as the answer (its routes when asked for): proven
 * when it meets the better of its bound and r's (column generation's, when
 * it ran first). */
static int mcf_repair_take(struct mcf_repair *rp, const struct mcf_opts *o, struct mcf_result *r,
			   struct ofc_error *err)
{
	double gap = o->gap > 0 ? o->gap : 1e-9, obj = rp->objective, t1 = now_seconds();
	double lower = fmax(rp->lower, r->lower);
	bool optimal = obj <= lower * (1 + gap);

	a2a_routes_free(&r->routes);
	if (o->routes && (optimal || !o->routes_if_optimal) &&
	    mcf_repair_routes(rp, &r->routes, &obj, err) < 0)
		return -1;
	r->repair_seconds += now_seconds() - t1;
	r->repaired = true;
	r->warm_started = true;
	r->warm_bound = rp->lower;
	r->objective = obj;
	r->theta = 1 / obj;
	r->lower = fmin(lower, obj);
	r->gap = obj / r->lower - 1;
	r->optimal = optimal;
	if (optimal)
		r->stop = MCF_STOP_OPTIMAL;
	size_t len = strlen(r->note);
	snprintf(r->note + len, sizeof(r->note) - len,
		 "%sthe healthy flow with the lost arcs' flow rerouted%s", len ? "; " : "",
		 optimal ? " meets the healthy lengths' bound" : ", better than the master's");
	return 0;
}

/* A re-plan tries the repair first (sched/mcf_repair.c): the kept healthy
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

/* The automorphisms the mirrored master uses (AUTO where no translation
 * applies, or MIRRORED asked for): *method becomes MIRRORED when some are
 * left, COLGEN when none is (r->note says why), grp the group. */
static void mcf_group(const struct graph *g, const struct mcf_opts *o, double t0,
		      enum mcf_method *methodp, struct graph_group *grp0, struct mcf_result *r)
{
	enum mcf_method method = *methodp;
	struct graph_group grp = {0};

	/* The group listed element by element: within 64 MiB, and
	 * within the solve's time limit (a subgroup found by then
	 * mirrors as well, only into more classes). */
	uint64_t cap = (16u << 20) / ((uint64_t)g->n + g->m);
	struct ofc_clock clk = {.start = t0};
	uint32_t found;

	if (o->time_limit > 0) {
		clk.deadline = t0 + o->time_limit;
		clk.limit = o->time_limit;
	}
	graph_automorphisms(g, cap > 65536 ? 65536 : (uint32_t)cap, &clk, &grp);
	found = grp.order;
	if (o->capacity)
		group_keep(&grp, keeps_capacity, o->capacity);
	uint32_t by_cap = grp.order;
	/* A demand matrix keeps the elements it is alike under; past
	 * 2^28 pair checks none (plain column generation). */
	if (o->demand && (double)grp.order * g->n * g->n > (double)(1u << 28))
		grp.order = 1;
	if (o->demand && grp.order > 1)
		group_keep(&grp, keeps_demand, o->demand);
	/* ... and only where it saves most sources: a mirrored solution
	 * spreads a pair over its images' paths (the paths lowering then
	 * keeps d of more), which a few classes saved do not repay
	 * (torus:4x4 with 0 <-> 5 alone: 4 automorphisms, 9 classes of 16,
	 * theta 1/65.5 lowered where the plain master's is 1/45). */
	uint32_t kept = grp.order;
	if (o->demand && grp.order > 1 && grp.norbits * 4 > g->n)
		grp.order = 1;
	if (grp.order < found) {
		size_t len = strlen(r->note);

		snprintf(r->note + len, sizeof(r->note) - len, "%s%s %u of %u automorphisms%s%s",
			 len ? "; " : "",
			 by_cap < found && kept < by_cap ? "capacities and the demand matrix keep"
			 : by_cap < found		 ? "capacities keep"
							 : "the demand matrix keeps",
			 kept, found, kept > grp.order ? ", too few to mirror" : "",
			 grp.order > 1 ? "" : ": plain column generation");
	}
	if (grp.order > 1) {
		method = MCF_MIRRORED;
	} else if (method == MCF_MIRRORED) {
		/* One orbit per node and per arc: the same LP as plain
		 * column generation, which solves it several times faster
		 * (torus:8x8 less eight links: 2 s, not 15 s; the
		 * mirrored warm start prices every source MW_ROUNDS
		 * times). */
		size_t len = strlen(r->note);

		method = MCF_COLGEN;
		if (found <= 1) /* else the note above says so */
			snprintf(r->note + len, sizeof(r->note) - len,
				 "%sthe automorphism group is trivial: plain column "
				 "generation",
				 len ? "; " : "");
	}
	r->group_order = grp.order;
	*methodp = method;
	*grp0 = grp;
}

/* Column generation (SYMMETRIC, MIRRORED or COLGEN), its warm start, routes
 * and kept solution; the repair's flow (rp, when tried) taken when better. */
static int mcf_colgen_solve(const struct graph *g, const struct mcf_opts *o, enum mcf_method method,
			    struct graph_group *grp, double inj, const double *injs, double t0,
			    struct mcf_repair *rp, struct mcf_result *r, struct ofc_error *err)
{
	struct cg c = {0};
	int rc;

	r->symmetric = method == MCF_SYMMETRIC;
	if (r->symmetric)
		r->group_order = g->n;
	cg_setup(&c, g, o->steps, method, grp, o->threads, o->nic_forwarding ? 0 : inj,
		 o->nic_forwarding ? NULL : injs, o->capacity);
	c.cancel = o->cancel;
	c.demand = o->demand;
	c.solver = lp_solver_or(o->lp_solver, mcf_default_solver(g, method));
	/* The difference form on Clp (cg.diff): debruijn:2,8's MCF (128
	 * classes) in 10.5-10.8 s instead of 19.9-22.0; the degraded
	 * genkautz:1024,4's first master (dumped, each class's first column
	 * its reference) 18 s instead of 53; genkautz:1024,4's healthy solve
	 * level (13-15 s). */
	c.diff = c.solver == LP_SOLVER_CLP && !o->steps && !c.node_row;
	r->lp_solver = c.solver;
	r->classes = c.nsrc;
	r->rows = c.rows_per_slot;
	/* A warm start: fluid, link rows only, the same nodes. */
	bool fluid_links = !o->steps && !c.node_row;
	if (o->warm && fluid_links && o->warm->n == g->n) {
		c.warm = o->warm;
		/* A degraded graph keeps few symmetries, so its master has
		 * many classes, as a plain one: lp_solve's default scaling
		 * solves those steadiest (genkautz:256,4 less one arc: 5
		 * masters in 20 s against none with geometric). */
		c.scaling = LP_SCALE_DEFAULT;
	}
	double t1 = now_seconds(), limit = o->time_limit;
	/* A re-plan's limit is its latency: a warm start's routes (1-2 s
	 * on genkautz:1024,4 less one arc) come out of it. */
	if (c.warm && o->routes)
		limit *= 1 - ROUTES_SHARE;
	rc = cg_run(&c, o->gap > 0 ? o->gap : 1e-9, limit > 0 ? t0 + limit : 0, r, err);
	r->solve_seconds = now_seconds() - t1;
	r->warm_started = c.warm != NULL;
	r->warm_columns = c.warm_cols;
	r->warm_bound = c.warm_bound;
	if (rc == 0 && o->keep_warm && fluid_links) {
		uint32_t *perm = NULL;

		if (method == MCF_SYMMETRIC && o->translations_known) {
			rc = ofc_error_set(err, OFC_E_INPUT,
					   "a kept solution needs every translation");
		} else {
			if (method == MCF_SYMMETRIC) {
				perm = xmalloc((size_t)g->n * g->n * sizeof(uint32_t));
				mcf_translations(g, perm, o->threads);
			}
			r->warm = cg_warm_export(&c, perm);
			free(perm);
		}
	}
	bool nic = inj > 0 && o->nic_forwarding; /* may yet prove it, below */

	if (rc == 0 && o->routes && (r->optimal || nic || !o->routes_if_optimal)) {
		rc = cg_routes(&c, &r->routes, err);
		r->routes.symmetric = r->symmetric;
		if (rc == 0 && r->symmetric && !o->translations_known) {
			r->routes.perm = xmalloc((size_t)g->n * g->n * sizeof(uint32_t));
			mcf_translations(g, r->routes.perm, o->threads);
		}
		if (rc == 0 && method == MCF_MIRRORED)
			cg_mirror_routes(&c, &r->routes);
	}
	cg_free(&c);
	/* The repaired flow, when better than the master's. */
	if (rc == 0 && rp->objective < r->objective * (1 - 1e-9))
		rc = mcf_repair_take(rp, o, r, err);
	if (rc == 0 && nic) {
		/* NIC forwarding: a host's own N-1 shards, whatever the
		 * routes, through its injection (and ejection) link (with
		 * a demand matrix the most any host sends or receives). */
		double z = (o->demand ? demand_most(g->n, o->demand) : g->n - 1) /
			   inj; /* the slowest host's own */

		if (z > r->objective) {
			r->objective = z;
			r->theta = 1 / z;
		}
		if (z > r->lower)
			r->lower = z;
		r->gap = r->objective / r->lower - 1;
		if (r->objective <= r->lower * (1 + (o->gap > 0 ? o->gap : 1e-9))) {
			r->optimal = true;
			r->stop = MCF_STOP_OPTIMAL;
		}
	}
	return rc;
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
	    w->n != g->n || classes < mcf_standin.min_classes || !(left > 0) ||
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
		slack = slack && load[i] <= mcf_standin.load * w->objective;
	free(load);
	free(lost_arc);
	if (!lost || !slack || !gone_n || gone_n > mcf_standin.arc_share * g->m) {
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
	if (sr == 0 || now_seconds() < t0 + mcf_standin.rest * o->time_limit) {
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
	/* Per-host injections: alike, they are one limit; else the plain master. */
	double inj = o->injection, inj_min = 0;
	const double *injs = NULL;
	if (o->injections) {
		inj = inj_min = o->injections[0];
		for (uint32_t v = 1; v < g->n; v++) {
			if (o->injections[v] != inj)
				injs = o->injections;
			inj_min = fmin(inj_min, o->injections[v]);
		}
		if (injs && !(inj_min > 0))
			return ofc_error_set(err, OFC_E_INPUT,
					     "every host needs a positive injection");
		if (injs && (method == MCF_SYMMETRIC || method == MCF_MIRRORED))
			return ofc_error_set(err, OFC_E_INPUT,
					     "hosts of different injection: the %s master does "
					     "not apply (the plain one does)",
					     method == MCF_SYMMETRIC ? "one-source" : "mirrored");
		if (injs && method == MCF_AUTO)
			method = MCF_COLGEN;
		if (injs)
			inj = inj_min;
	}
	/* Node ids are 16 bits: a reduced program (translations known) may
	 * name all 65,536 of them, an explicit schedule one id fewer. */
	uint32_t most = o->translations_known ? SCHED_REDUCED_MAX_NODES : SCHED_MAX_NODES;
	if (g->n < 2 || g->n > most)
		return ofc_error_set(err, OFC_E_INPUT, "%u nodes: all-to-all needs 2..%u", g->n,
				     most);
	if (!f.strongly_connected)
		return ofc_error_set(err, OFC_E_INPUT,
				     "%s is not strongly connected: some pairs have no path",
				     g->spec ? g->spec : "the topology");
	if (o->steps && (!f.diameter_known || o->steps < f.diameter))
		return ofc_error_set(
		    err, OFC_E_INPUT,
		    "a time-stepped schedule needs at least the diameter (%u) steps", f.diameter);
	r->nodes = g->n;
	r->degree = f.degree;
	r->steps = o->steps;
	for (uint32_t a = 0; o->capacity && a < g->m; a++)
		if (!(o->capacity[a] > 0) || !isfinite(o->capacity[a]))
			return ofc_error_set(err, OFC_E_INPUT, "arc %u: capacity %g", a,
					     o->capacity[a]);
	if (o->demand && check_demand(g->n, o, err) < 0)
		return -1;
	if (method == MCF_AUTO || method == MCF_SYMMETRIC) {
		bool sym = o->translations_known || mcf_translations(g, NULL, o->threads);

		if (sym && o->demand && !mcf_translations_keep(g, o->demand, o->threads)) {
			if (method == MCF_SYMMETRIC)
				return ofc_error_set(
				    err, OFC_E_INPUT,
				    "the demand matrix is not alike under the "
				    "translations, so the one-source reduction does "
				    "not apply");
			sym = false;
		}

		if (!sym && method == MCF_SYMMETRIC)
			return ofc_error_set(err, OFC_E_INPUT,
					     "%s: its ports are not translations of one Cayley "
					     "graph, so the one-source reduction does not apply",
					     g->spec ? g->spec : "the topology");
		if (sym && o->capacity && !mcf_caps_per_port(g, o->capacity)) {
			if (method == MCF_SYMMETRIC)
				return ofc_error_set(err, OFC_E_INPUT,
						     "link capacities differ within a port, so "
						     "the one-source reduction does not apply");
			sym = false;
			snprintf(r->note, sizeof(r->note),
				 "capacities differ within a port: no one-source reduction");
		}
		method = sym ? MCF_SYMMETRIC : MCF_COLGEN;
	}
	struct graph_group grp = {0};
	if (!injs && ((o->method == MCF_AUTO && method == MCF_COLGEN) || method == MCF_MIRRORED))
		mcf_group(g, o, t0, &method, &grp, r);
	r->method = method;
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
