/* All-to-all schedules from routes: the MCF's routes lowered three ways,
 * and the two baselines of Basu et al. (direct exchange over shortest
 * paths, and the load-aware shortest path of App. D), all in the shared
 * schedule type so the verifier checks every one (each ordered pair's
 * block delivered to its target exactly once, relays store-and-forward);
 * and the same as reduced programs on a Cayley graph (a2a_reduced). */
#include "alltoall/internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Where a route's load goes: slot[arc] of nslots (NULL: each arc its
 * own), each slot of capacity cap[slot] (NULL: 1). With few slots (node
 * 0's ports) a route is its hop count per slot, counted once: a 128-hop
 * torus route is then 4 numbers, not 128 lookups per comparison. */
struct load_slots {
	const uint32_t *slot;
	const double *cap;
	uint32_t nslots;
	uint32_t *count; /* per route, nslots hop counts (few slots), or NULL */
	/* What each pair asks for (n x n, a demand matrix), NULL: 1 each: a
	 * route's unit of load. */
	const double *demand;
	uint32_t n;
};

static double route_unit(const struct load_slots *ls, const struct a2a_routes *rt, size_t r)
{
	return ls->demand ? ls->demand[(size_t)rt->src[r] * ls->n + rt->dst[r]] : 1;
}

#define FEW_SLOTS 64u

static uint32_t slot_of(const struct load_slots *ls, uint32_t arc)
{
	return ls->slot ? ls->slot[arc] : arc;
}

/* Loads are doubles: whole numbers without a demand matrix (exact, so the
 * choices are those of counting in integers), each pair's demand with one. */
static double slot_peak(const struct load_slots *ls, uint32_t k, const double *load, double unit)
{
	return (load[k] + unit) / (ls->cap ? ls->cap[k] : 1);
}

/* The most load over capacity on a route's links if it took its pair's
 * unit more. */
static double route_peak(const struct a2a_routes *rt, size_t r, const double *load,
			 const struct load_slots *ls)
{
	double peak = 0, unit = route_unit(ls, rt, r);

	if (ls->count) {
		for (uint32_t k = 0; k < ls->nslots; k++)
			if (ls->count[r * ls->nslots + k])
				peak = fmax(peak, slot_peak(ls, k, load, unit));
		return peak;
	}
	for (size_t h = rt->off[r]; h < rt->off[r + 1]; h++)
		peak = fmax(peak, slot_peak(ls, slot_of(ls, rt->arc[h]), load, unit));
	return peak;
}

static void route_load(const struct a2a_routes *rt, size_t r, double *load, int sign,
		       const struct load_slots *ls)
{
	double unit = sign * route_unit(ls, rt, r);

	if (ls->count) {
		for (uint32_t k = 0; k < ls->nslots; k++)
			load[k] += unit * ls->count[r * ls->nslots + k];
		return;
	}
	for (size_t h = rt->off[r]; h < rt->off[r + 1]; h++)
		load[slot_of(ls, rt->arc[h])] += unit;
}

/* The pair's route of least peak among [first, end), from `best` (ties:
 * the heavier route when `heavier`, else the one held). */
static size_t least_peak(const struct a2a_routes *rt, size_t first, size_t end, size_t best,
			 bool heavier, const double *load, const struct load_slots *ls)
{
	double bp = route_peak(rt, best, load, ls);

	for (size_t q = first; q < end; q++) {
		if (q == best)
			continue;
		double p = route_peak(rt, q, load, ls);

		if (p < bp || (heavier && p == bp && rt->w[q] > rt->w[best])) {
			best = q;
			bp = p;
		}
	}
	return best;
}

/* Single path (App. D's equal-weight routing with one path): among each
 * pair's MCF paths, heaviest-weight first, the one whose busiest link is
 * least loaded; then passes that reroute a pair when that lowers its peak.
 * Loads are counted per slot (a2a_routes_single_slots): per arc, or, for
 * node 0's routes on a Cayley graph, per port, since every arc of port j
 * carries what node 0's routes put on j (the symmetric schedule of the
 * same rule). */
static void routes_single(struct a2a_routes *rt, uint32_t nslots, struct load_slots *ls)
{
	double *load = xcalloc((size_t)nslots + 1, sizeof(double));
	size_t npairs = 0, *first = NULL, *chosen = NULL, cap1 = 0, cap2 = 0;

	ls->nslots = nslots;
	if (ls->slot && nslots <= FEW_SLOTS) {
		ls->count = xcalloc(rt->nroutes * nslots + 1, sizeof(uint32_t));
		for (size_t r = 0; r < rt->nroutes; r++)
			for (size_t h = rt->off[r]; h < rt->off[r + 1]; h++)
				ls->count[r * nslots + slot_of(ls, rt->arc[h])]++;
	}
	for (size_t r = 0; r < rt->nroutes;) {
		size_t e = r, best;

		while (e < rt->nroutes && rt->src[e] == rt->src[r] && rt->dst[e] == rt->dst[r])
			e++;
		best = least_peak(rt, r, e, r, true, load, ls);
		route_load(rt, best, load, 1, ls);
		GROW(first, cap1, npairs + 2);
		GROW(chosen, cap2, npairs + 1);
		first[npairs] = r;
		chosen[npairs++] = best;
		first[npairs] = e;
		r = e;
	}
	for (int pass = 0; pass < 4; pass++) {
		bool moved = false;

		for (size_t p = 0; p < npairs; p++) {
			size_t cur = chosen[p], best;

			route_load(rt, cur, load, -1, ls);
			best = least_peak(rt, first[p], first[p + 1], cur, false, load, ls);
			route_load(rt, best, load, 1, ls);
			moved |= best != cur;
			chosen[p] = best;
		}
		if (!moved)
			break;
	}
	struct a2a_routes out = {.n = rt->n};
	for (size_t p = 0; p < npairs; p++) {
		size_t q = chosen[p];

		a2a_routes_add(&out, rt->src[q], rt->dst[q], 1, rt->arc + rt->off[q],
			       a2a_route_steps(rt, q), (uint32_t)(rt->off[q + 1] - rt->off[q]));
	}
	free(load);
	free(first);
	free(chosen);
	free(ls->count);
	ls->count = NULL;
	a2a_routes_free(rt);
	*rt = out;
}

void a2a_routes_single(const struct graph *g, const double *cap, const double *demand,
		       struct a2a_routes *rt)
{
	struct load_slots ls = {.cap = cap, .demand = demand, .n = g->n};

	routes_single(rt, g->m, &ls);
}

void a2a_routes_single_ports(const struct graph *g, const double *cap, struct a2a_routes *rt)
{
	uint32_t d = graph_outdeg(g, 0), *tail = graph_arc_tails(g);
	uint32_t *slot = xmalloc(((size_t)g->m + 1) * sizeof(uint32_t));
	double *pcap = cap ? xmalloc(((size_t)d + 1) * sizeof(double)) : NULL;

	for (uint32_t a = 0; a < g->m; a++)
		slot[a] = a - g->off[tail[a]];
	for (uint32_t j = 0; pcap && j < d; j++)
		pcap[j] = cap[g->off[0] + j];
	struct load_slots ls = {.slot = slot, .cap = pcap};
	routes_single(rt, d, &ls);
	free(slot);
	free(pcap);
	free(tail);
}

/* ---- baselines ---------------------------------------------------------------- */

static int check_graph(const struct graph *g, struct ofc_error *err)
{
	if (g->n < 2 || g->n > SCHED_MAX_NODES)
		return ofc_error_set(err, OFC_E_INPUT, "%u nodes: all-to-all needs 2..%u", g->n,
				     SCHED_MAX_NODES);
	return 0;
}

/* The path s -> t in a parent-arc array, source first, into arc[]. */
static uint32_t path_of(const uint32_t *tail, const uint32_t *parent, uint32_t s, uint32_t t,
			uint32_t *arc)
{
	uint32_t len = 0;

	for (uint32_t v = t; v != s; v = tail[parent[v]])
		len++;
	for (uint32_t v = t, i = len; v != s; v = tail[parent[v]])
		arc[--i] = parent[v];
	return len;
}

/* BFS from s in port order: parent[v] the arc into v; false when some node
 * is out of reach. */
static bool bfs_parents(const struct graph *g, uint32_t s, uint32_t *parent, uint32_t *queue)
{
	uint32_t n = g->n, head = 0, qt = 0;

	for (uint32_t v = 0; v < n; v++)
		parent[v] = UINT32_MAX;
	queue[qt++] = s;
	parent[s] = 0;
	while (head < qt) {
		uint32_t u = queue[head++];

		for (uint32_t a = g->off[u]; a < g->off[u + 1]; a++)
			if (parent[g->adj[a]] == UINT32_MAX) {
				parent[g->adj[a]] = a;
				queue[qt++] = g->adj[a];
			}
	}
	return qt == n;
}

/* Direct exchange's routes from the sources s0 .. s1 - 1: the BFS tree of
 * each in port order (on a Cayley graph the tree from s is the translate
 * of node 0's, so s = 0 alone is the reduced program). */
static int direct_from(const struct graph *g, uint32_t s0, uint32_t s1, const double *demand,
		       struct a2a_routes *rt, struct ofc_error *err)
{
	uint32_t n = g->n, *tail = graph_arc_tails(g);
	uint32_t *parent = xmalloc(n * sizeof(uint32_t)), *queue = xmalloc(n * sizeof(uint32_t));
	uint32_t *arc = xmalloc(n * sizeof(uint32_t));
	int rc = 0;

	rt->n = n;
	for (uint32_t s = s0; s < s1 && rc == 0; s++) {
		if (!bfs_parents(g, s, parent, queue)) {
			rc = ofc_error_set(err, OFC_E_INPUT, "%s is not strongly connected",
					   g->spec ? g->spec : "the topology");
			break;
		}
		for (uint32_t t = 0; t < n; t++)
			if (t != s && (!demand || demand[(size_t)s * n + t] > 0))
				a2a_routes_add(rt, s, t, 1, arc, NULL,
					       path_of(tail, parent, s, t, arc));
	}
	free(tail);
	free(parent);
	free(queue);
	free(arc);
	if (rc < 0)
		a2a_routes_free(rt);
	return rc;
}

int a2a_direct_routes(const struct graph *g, const double *demand, struct a2a_routes *rt,
		      struct ofc_error *err)
{
	memset(rt, 0, sizeof(*rt));
	if (check_graph(g, err) < 0)
		return -1;
	return direct_from(g, 0, g->n, demand, rt, err);
}

int a2a_direct_routes_0(const struct graph *g, struct a2a_routes *rt, struct ofc_error *err)
{
	memset(rt, 0, sizeof(*rt));
	return direct_from(g, 0, 1, NULL, rt, err);
}

static uint64_t splitmix(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Dijkstra's scratch (a plain binary heap on dist) and its tree. */
struct cheapest {
	uint64_t *dist;
	uint32_t *heapn, *pos, *parent;
};

static void cheapest_init(struct cheapest *c, uint32_t n)
{
	c->dist = xmalloc(n * sizeof(uint64_t));
	c->heapn = xmalloc(n * sizeof(uint32_t));
	c->pos = xmalloc(n * sizeof(uint32_t));
	c->parent = xmalloc(n * sizeof(uint32_t));
}

static void cheapest_free(struct cheapest *c)
{
	free(c->dist);
	free(c->heapn);
	free(c->pos);
	free(c->parent);
}

static void heap_sift_up(struct cheapest *c, uint32_t k)
{
	for (; k > 0 && c->dist[c->heapn[(k - 1) / 2]] > c->dist[c->heapn[k]]; k = (k - 1) / 2) {
		uint32_t x = c->heapn[k], p = (k - 1) / 2;

		c->heapn[k] = c->heapn[p];
		c->heapn[p] = x;
		c->pos[c->heapn[k]] = k;
		c->pos[c->heapn[p]] = p;
	}
}

/* The cheapest path s -> t (Dijkstra, stopping at t) into c->parent, an
 * arc weighing w[a], or, with port_w, its port's port_w[j]; returns the
 * cost, UINT64_MAX when t is out of reach. */
static uint64_t cheapest_path(const struct graph *g, uint32_t s, uint32_t t, const uint64_t *w,
			      const uint64_t *port_w, struct cheapest *c)
{
	uint32_t n = g->n, hn = 0, *heapn = c->heapn, *pos = c->pos;
	uint64_t *dist = c->dist;

	for (uint32_t v = 0; v < n; v++) {
		dist[v] = UINT64_MAX;
		pos[v] = UINT32_MAX;
	}
	dist[s] = 0;
	heapn[hn++] = s;
	pos[s] = 0;
	while (hn) {
		uint32_t u = heapn[0];

		heapn[0] = heapn[--hn];
		pos[heapn[0]] = 0;
		pos[u] = UINT32_MAX - 1;
		for (uint32_t k = 0;;) {
			uint32_t l = 2 * k + 1, r = l + 1, m = k;

			if (l < hn && dist[heapn[l]] < dist[heapn[m]])
				m = l;
			if (r < hn && dist[heapn[r]] < dist[heapn[m]])
				m = r;
			if (m == k)
				break;
			uint32_t x = heapn[k];
			heapn[k] = heapn[m];
			heapn[m] = x;
			pos[heapn[k]] = k;
			pos[heapn[m]] = m;
			k = m;
		}
		if (u == t)
			break;
		for (uint32_t a = g->off[u]; a < g->off[u + 1]; a++) {
			uint32_t v = g->adj[a];
			uint64_t wa = port_w ? port_w[a - g->off[u]] : w[a];

			if (v == u || pos[v] == UINT32_MAX - 1 || dist[u] + wa >= dist[v])
				continue;
			dist[v] = dist[u] + wa;
			c->parent[v] = a;
			if (pos[v] == UINT32_MAX) {
				pos[v] = hn;
				heapn[hn++] = v;
			}
			heap_sift_up(c, pos[v]);
		}
	}
	return dist[t];
}

/* Hops from node v to a pair's target t: a row of the all-pairs table
 * (row[v]), or on a Cayley graph node 0's hops to t - v (d0[t - v], the
 * translation by -v taking v to 0). */
struct hops_to_t {
	const uint16_t *row;
	const uint32_t *d0;
	const struct sched_group *G;
	uint32_t t;
};

static inline uint32_t hops_to_t(const struct hops_to_t *h, uint32_t v)
{
	return h->row ? h->row[v] : h->d0[sched_group_sub(h->G, h->t, v)];
}

/* The least-loaded shortest path s -> t, L hops (its arcs into c->parent,
 * as cheapest_path's): the shortest paths form layers, node v in layer k
 * when k hops from s and L - k from t, so the least load is one pass over
 * them in order, no heap. An arc weighs w[a], or with port_w its port's
 * w[j]; with every weight W0 + load that is also the cheapest path of any
 * length when its load is below W0 (a longer path costs W0 more); returns
 * the load, or UINT64_MAX when it is not (the caller asks Dijkstra). Ties
 * go to the first arc in port order. */
static uint64_t least_loaded_path(const struct graph *g, const struct hops_to_t *h, uint32_t s,
				  uint32_t L, const uint64_t *w, bool port_w, uint64_t W0,
				  uint32_t stamp, uint32_t *seen, uint32_t *layer,
				  struct cheapest *c)
{
	uint32_t lo = 0, hi = 1, *parent = c->parent;
	uint64_t *best = c->dist;

	layer[0] = s;
	best[s] = 0;
	seen[s] = stamp;
	for (uint32_t k = 0; k < L; k++) {
		uint32_t end = hi;

		for (uint32_t i = lo; i < end; i++) {
			uint32_t u = layer[i];

			for (uint32_t a = g->off[u]; a < g->off[u + 1]; a++) {
				uint32_t v = g->adj[a];
				uint64_t load = best[u] + ((port_w ? w[a - g->off[u]] : w[a]) - W0);

				if (hops_to_t(h, v) != L - k - 1)
					continue;
				if (seen[v] != stamp) {
					seen[v] = stamp;
					layer[hi++] = v;
				} else if (load >= best[v]) {
					continue;
				}
				best[v] = load;
				parent[v] = a;
			}
		}
		lo = end;
	}
	return best[h->t] < W0 ? best[h->t] : UINT64_MAX;
}

/* A pair's load in whole units: 1, or under a demand matrix its demand in
 * 64ths (at least one), 0 for a pair that asks for nothing. */
static uint64_t pair_units(const double *demand, uint32_t n, uint32_t s, uint32_t t)
{
	double d = demand ? demand[(size_t)s * n + t] : 1;

	if (!demand)
		return 1;
	if (!(d > 0))
		return 0;
	return d * 64 < 1 ? 1 : (uint64_t)llround(fmin(d * 64, 1e12));
}

/* App. D (after Domke et al.): pairs in random order, each routed on its
 * cheapest path with every arc weighing W0 + the routes already on it,
 * W0 = |K| + 1 so that routes stay shortest and only ties are broken by
 * load (least_loaded_path; Dijkstra where a load would reach W0). Routes
 * come out in pair order. Under a demand matrix a route weighs its pair's
 * units (pair_units), W0 their sum + 1, and pairs that ask for nothing
 * are not routed. */
int a2a_balanced_routes(const struct graph *g, const double *demand, uint64_t seed,
			const struct ofc_clock *clock, struct a2a_routes *rt, struct ofc_error *err)
{
	uint32_t n = g->n, *tail, *arc;
	uint64_t npairs = (uint64_t)n * (n - 1), *order, *w, W0 = npairs + 1;
	struct a2a_routes tmp = {.n = n};
	struct cheapest c;

	memset(rt, 0, sizeof(*rt));
	if (check_graph(g, err) < 0)
		return -1;
	if (demand) {
		W0 = 1;
		for (uint32_t s = 0; s < n; s++)
			for (uint32_t t = 0; t < n; t++)
				W0 += s != t ? pair_units(demand, n, s, t) : 0;
	}
	tail = graph_arc_tails(g);
	arc = xmalloc(n * sizeof(uint32_t));
	cheapest_init(&c, n);
	w = xmalloc(((size_t)g->m + 1) * sizeof(uint64_t));
	order = xmalloc(npairs * sizeof(uint64_t));
	for (uint32_t a = 0; a < g->m; a++)
		w[a] = W0;
	for (uint64_t k = 0, i = 0; k < (uint64_t)n * n; k++)
		if (k / n != k % n)
			order[i++] = k;
	for (uint64_t i = npairs; i > 1; i--) { /* Fisher-Yates */
		uint64_t j = splitmix(&seed) % i, t = order[i - 1];

		order[i - 1] = order[j];
		order[j] = t;
	}
	uint32_t *route_of = xmalloc(npairs * sizeof(uint32_t));
	/* Hops to every node, to[t * n + v] from v to t: the transpose's
	 * all-pairs distances, 2 N^2 bytes (2 MiB at the 1,024 nodes schedules
	 * are built for); past 4,096 nodes Dijkstra alone. */
	struct graph *gt = n <= 4096 ? graph_transpose(g) : NULL;
	struct ofc_error derr = {0};
	uint16_t *to = gt ? topo_distances(gt, 0, &derr) : NULL;
	graph_free(gt);
	uint32_t *seen = xcalloc(n, sizeof(uint32_t)), *layer = xmalloc(n * sizeof(uint32_t));
	uint32_t stamp = 0;
	int rc = 0;
	for (uint64_t p = 0; demand && p < npairs; p++)
		route_of[p] = UINT32_MAX;
	for (uint64_t i = 0; i < npairs; i++) {
		uint32_t s = (uint32_t)(order[i] / n), t = (uint32_t)(order[i] % n);
		uint64_t units = pair_units(demand, n, s, t);

		if (!units)
			continue;
		if (++stamp == 0) {
			memset(seen, 0, n * sizeof(uint32_t));
			stamp = 1;
		}
		if (i % 4096 == 0 && clock_check(clock, "generation", err) < 0) {
			rc = -1;
			break;
		}
		struct hops_to_t ht = {.row = to ? to + (size_t)t * n : NULL, .t = t};
		uint32_t L = to ? ht.row[s] : 0;

		if ((to && L == TOPO_UNREACHABLE) ||
		    ((!to || least_loaded_path(g, &ht, s, L, w, false, W0, stamp, seen, layer,
					       &c) == UINT64_MAX) &&
		     cheapest_path(g, s, t, w, NULL, &c) == UINT64_MAX)) {
			rc = ofc_error_set(err, OFC_E_INPUT, "%s is not strongly connected",
					   g->spec ? g->spec : "the topology");
			break;
		}
		uint32_t len = path_of(tail, c.parent, s, t, arc);
		for (uint32_t h = 0; h < len; h++)
			w[arc[h]] += units;
		route_of[(size_t)s * (n - 1) + (t < s ? t : t - 1)] = (uint32_t)tmp.nroutes;
		a2a_routes_add(&tmp, s, t, 1, arc, NULL, len);
	}
	free(to);
	free(seen);
	free(layer);
	/* Pair order, as every other route set. */
	rt->n = n;
	for (uint64_t p = 0; rc == 0 && p < npairs; p++) {
		size_t q = route_of[p];

		if (q == UINT32_MAX)
			continue;
		a2a_routes_add(rt, tmp.src[q], tmp.dst[q], 1, tmp.arc + tmp.off[q], NULL,
			       (uint32_t)(tmp.off[q + 1] - tmp.off[q]));
	}
	free(route_of);
	a2a_routes_free(&tmp);
	free(tail);
	free(arc);
	cheapest_free(&c);
	free(w);
	free(order);
	return rc;
}

/* sp-balanced by symmetry: the rule above (shortest paths, ties broken by
 * load, pairs in a seeded random order) on node 0's pairs, where an arc's
 * load is its port's: every arc of port j carries each hop that node 0's
 * routes put on port j (one translate each). Not the explicit schedule
 * (that balances all N (N - 1) pairs greedily, in an order no translation
 * keeps), the symmetric one of the same rule. */
int a2a_balanced_routes_0(const struct graph *g, const struct sched_group *G, uint64_t seed,
			  const struct ofc_clock *clock, struct a2a_routes *rt,
			  struct ofc_error *err)
{
	uint32_t n = g->n, d = graph_outdeg(g, 0), *tail = graph_arc_tails(g);
	uint32_t *arc = xmalloc(n * sizeof(uint32_t)), *order = xmalloc(n * sizeof(uint32_t));
	uint64_t *port_w = xmalloc(((size_t)d + 1) * sizeof(uint64_t));
	uint64_t W0 = (uint64_t)n * n + 1; /* above any sum of loads: paths stay shortest */
	struct cheapest c;
	int rc = 0;

	memset(rt, 0, sizeof(*rt));
	rt->n = n;
	cheapest_init(&c, n);
	/* By layers (least_loaded_path) with node 0's hops to every node,
	 * from its BFS in order: hops v -> t are 0's to t - v. */
	uint32_t *d0 = xmalloc(n * sizeof(uint32_t)), *queue = xmalloc(n * sizeof(uint32_t));
	uint32_t *seen = xcalloc(n, sizeof(uint32_t));
	bool layers = G && bfs_parents(g, 0, c.parent, queue);
	for (uint32_t i = 0; layers && i < n; i++)
		d0[queue[i]] = i ? d0[tail[c.parent[queue[i]]]] + 1 : 0;
	for (uint32_t j = 0; j < d; j++)
		port_w[j] = W0;
	for (uint32_t i = 0; i + 1 < n; i++)
		order[i] = i + 1;
	for (uint32_t i = n - 1; i > 1; i--) { /* Fisher-Yates */
		uint32_t j = (uint32_t)(splitmix(&seed) % i), x = order[i - 1];

		order[i - 1] = order[j];
		order[j] = x;
	}
	for (uint32_t i = 0; i + 1 < n; i++) {
		uint32_t t = order[i];
		struct hops_to_t ht = {.d0 = d0, .G = G, .t = t};

		if (i % 1024 == 0 && clock_check(clock, "generation", err) < 0) {
			rc = -1;
			a2a_routes_free(rt);
			break;
		}
		if ((!layers || least_loaded_path(g, &ht, 0, d0[t], port_w, true, W0, i + 1, seen,
						  queue, &c) == UINT64_MAX) &&
		    cheapest_path(g, 0, t, NULL, port_w, &c) == UINT64_MAX) {
			rc = ofc_error_set(err, OFC_E_INPUT, "%s is not strongly connected",
					   g->spec ? g->spec : "the topology");
			a2a_routes_free(rt);
			break;
		}
		uint32_t len = path_of(tail, c.parent, 0, t, arc);
		for (uint32_t h = 0; h < len; h++)
			port_w[arc[h] - g->off[tail[arc[h]]]]++;
		a2a_routes_add(rt, 0, t, 1, arc, NULL, len);
	}
	cheapest_free(&c);
	free(d0);
	free(queue);
	free(seen);
	free(arc);
	free(order);
	free(port_w);
	free(tail);
	return rc;
}

/* ---- the schedule ------------------------------------------------------------- */

/* The port of an arc, its index among its tail's arcs: a mask where every
 * node has the same power-of-two degree (tori, hypercubes, genkautz:N,4:
 * arc a is port a mod d), else a table. The lowerings look it up once a
 * hop: two dependent loads (the tail, its offset) were three quarters of
 * a2a_schedule on torus:256x256. */
struct arc_ports {
	uint32_t mask;
	uint32_t *port; /* NULL: a & mask */
};
static inline uint32_t arc_port(const struct arc_ports *p, uint32_t a)
{
	return p->port ? p->port[a] : a & p->mask;
}

static void arc_ports_init(struct arc_ports *p, const struct graph *g)
{
	uint32_t d = g->n ? graph_outdeg(g, 0) : 0;
	bool regular = d && !(d & (d - 1));

	for (uint32_t u = 0; u <= g->n && regular; u++)
		regular = g->off[u] == (uint64_t)u * d;
	p->mask = regular ? d - 1 : 0;
	p->port = NULL;
	if (regular)
		return;
	p->port = xmalloc(((size_t)g->m + 1) * sizeof(uint32_t));
	for (uint32_t u = 0; u < g->n; u++)
		for (uint32_t a = g->off[u]; a < g->off[u + 1]; a++)
			p->port[a] = a - g->off[u];
}

static void arc_ports_free(struct arc_ports *p)
{
	free(p->port);
	p->port = NULL;
}

/* With runs, each hop that opens one gets the run's arcs less one
 * (xfer.run): a hop continues its route's run when it leaves on the port
 * the hop before it left on. Read once; the passes below jump run to run. */
/* load (d entries, or NULL): what the routes put on each port, summed a
 * run at a time, for a2a_schedule's max_port_load. Routes [r0, r1). */
static void route_runs_of(const struct arc_ports *ports, const struct a2a_routes *rt, size_t r0,
			  size_t r1, uint8_t *run, double *load)
{
	/* The run's length is kept in a register and stored when it ends:
	 * run[start]++ a hop was a chain of dependent stores. */
	for (size_t r = r0; r < r1; r++) {
		size_t start = rt->off[r];
		uint32_t prev = UINT32_MAX;

		for (size_t h = rt->off[r]; h < rt->off[r + 1]; h++) {
			uint32_t port = arc_port(ports, rt->arc[h]);

			if (port != prev || h - start == SCHED_MAX_RUN) {
				if (h > rt->off[r]) {
					run[start] = (uint8_t)(h - start - 1);
					if (load)
						load[prev] += (double)(h - start) * rt->w[r];
				}
				start = h;
			}
			prev = port;
		}
		if (rt->off[r + 1] > rt->off[r]) {
			run[start] = (uint8_t)(rt->off[r + 1] - start - 1);
			if (load)
				load[prev] += (double)(rt->off[r + 1] - start) * rt->w[r];
		}
	}
}

/* The lowering in parts of whole pairs (a2a_lower_cut), side by side on
 * --threads: each part counts its transfers per step, then writes them
 * from where the parts before it end in each step, so that the schedule
 * is the one pass's, byte for byte, on any number of threads. */
struct a2a_lower {
	const struct graph *g;
	const struct a2a_routes *rt;
	const struct arc_ports *ports;
	const uint32_t *tail, *step; /* step NULL: hop i at step i */
	uint8_t *run;
	bool find_runs;	   /* the count pass finds them (else found already) */
	uint32_t *lo, *hi; /* per route: its piece of the pair's block */
	size_t *cut;	   /* part p: routes [cut[p], cut[p + 1]) */
	size_t **count;	   /* part p's transfers per step, then where its next goes */
	size_t *ncount;	   /* its steps */
	struct xfer *out;
};

/* Routes from which a2a_schedule works in parts: below, the one pass
 * takes about what starting a thread costs. */
#define A2A_LOWER_PART_HOPS (1u << 16)

/* Parts of about equal hops, cut where a pair's routes begin. */
static size_t a2a_lower_cut(const struct a2a_routes *rt, unsigned threads, size_t **cut)
{
	size_t hops = rt->nroutes ? rt->off[rt->nroutes] : 0, np = 1;

	if (threads == 0)
		threads = ofc_cpu_count();
	if (threads > 1 && hops >= 2 * (size_t)A2A_LOWER_PART_HOPS) {
		/* a few parts a thread, so a slow one is shared */
		np = (size_t)threads * 4;
		if (np > hops / A2A_LOWER_PART_HOPS)
			np = hops / A2A_LOWER_PART_HOPS;
	}
	*cut = xmalloc((np + 1) * sizeof(size_t));
	(*cut)[0] = 0;
	for (size_t p = 1, r = 0; p < np; p++) {
		size_t at = hops / np * p;

		while (r < rt->nroutes && rt->off[r] < at)
			r++;
		while (r > 0 && r < rt->nroutes && rt->src[r] == rt->src[r - 1] &&
		       rt->dst[r] == rt->dst[r - 1])
			r++;
		(*cut)[p] = r;
	}
	(*cut)[np] = rt->nroutes;
	return np;
}

#define NEXT(h) ((h) + 1 + (j->run ? j->run[h] : 0))

/* Part p's runs (when asked), pieces and transfers per step. */
static void a2a_lower_count(void *ctx, size_t p, unsigned worker)
{
	struct a2a_lower *j = ctx;
	const struct a2a_routes *rt = j->rt;
	size_t r0 = j->cut[p], r1 = j->cut[p + 1], *count = NULL, cap = 0, nsteps = 0;

	(void)worker;
	if (j->find_runs)
		route_runs_of(j->ports, rt, r0, r1, j->run, NULL);
	/* Pieces: a pair's routes split its block [0, 1) in order. */
	for (size_t r = r0; r < r1;) {
		size_t e = r;
		double cum = 0;

		while (e < r1 && rt->src[e] == rt->src[r] && rt->dst[e] == rt->dst[r])
			e++;
		for (size_t q = r; q < e; q++) {
			uint32_t st = 0;

			j->lo[q] = sched_fix(cum);
			cum += rt->w[q];
			j->hi[q] = q + 1 == e ? SCHED_ONE : sched_fix(cum);
			/* (a route of an empty piece sends nothing, but its
			 * steps are the schedule's all the same) */
			for (size_t h = rt->off[q]; h < rt->off[q + 1]; h = NEXT(h), st++) {
				uint32_t at = j->step ? j->step[h] : st;

				if (at >= nsteps) {
					GROW(count, cap, (size_t)at + 1);
					memset(count + nsteps, 0,
					       (at + 1 - nsteps) * sizeof(size_t));
					nsteps = (size_t)at + 1;
				}
				count[at] += j->hi[q] > j->lo[q];
			}
		}
		r = e;
	}
	j->count[p] = count;
	j->ncount[p] = nsteps;
}

/* Part p's transfers, from where the parts before it end in each step. */
static void a2a_lower_write(void *ctx, size_t p, unsigned worker)
{
	struct a2a_lower *j = ctx;
	const struct a2a_routes *rt = j->rt;
	const struct graph *g = j->g;
	size_t *pos = j->count[p];
	uint32_t n = g->n;

	(void)worker;
	for (size_t r = j->cut[p]; r < j->cut[p + 1]; r++) {
		uint32_t st = 0;

		if (j->hi[r] <= j->lo[r])
			continue;
		for (size_t h = rt->off[r]; h < rt->off[r + 1]; h = NEXT(h), st++) {
			uint32_t a = rt->arc[h], u = j->tail[a], k = j->run ? j->run[h] : 0;

			j->out[pos[j->step ? j->step[h] : st]++] =
			    (struct xfer){.src = (uint16_t)u,
					  .dst = (uint16_t)g->adj[rt->arc[h + k]],
					  .block = rt->src[r] * n + rt->dst[r],
					  .offset = j->lo[r],
					  .length = j->hi[r] - j->lo[r],
					  .lane = (uint16_t)(a - g->off[u]),
					  .run = (uint8_t)k,
					  .flags = xfer_flags(DIR_NONE, XFER_COPY)};
		}
	}
}

#undef NEXT

/* The parts' counts joined: the schedule's steps, each part's counts
 * turned into where its transfers go (the parts before it first). */
static void a2a_lower_join(struct a2a_lower *j, size_t np, struct schedule *s)
{
	uint32_t nsteps = 0;

	for (size_t p = 0; p < np; p++)
		nsteps = j->ncount[p] > nsteps ? (uint32_t)j->ncount[p] : nsteps;
	size_t *total = xcalloc((size_t)nsteps + 1, sizeof(size_t));

	for (size_t p = 0; p < np; p++)
		for (size_t t = 0; t < j->ncount[p]; t++)
			total[t] += j->count[p][t];
	j->out = sched_append_steps(s, nsteps, total);
	for (uint32_t t = 0; t < nsteps; t++) {
		size_t at = s->step_start[t];

		for (size_t p = 0; p < np; p++) {
			if (t >= j->ncount[p])
				continue;
			size_t c = j->count[p][t];

			j->count[p][t] = at;
			at += c;
		}
	}
	free(total);
}

int a2a_schedule(const struct graph *g, const struct a2a_routes *rt, bool stepped, bool runs,
		 const char *algorithm, struct schedule *s, double *max_port_load, unsigned threads,
		 struct ofc_error *err)
{
	struct arc_ports ports;
	size_t nhops = rt->nroutes ? rt->off[rt->nroutes] : 0, np;
	struct a2a_lower j = {.g = g, .rt = rt, .ports = &ports};

	memset(s, 0, sizeof(*s));
	if (rt->symmetric)
		return ofc_error_set(err, OFC_E_RUNTIME, "expand symmetric routes first");
	arc_ports_init(&ports, g);
	if (max_port_load || (runs && !stepped))
		j.run = sched_huge_alloc(nhops + 1);
	j.find_runs = j.run && !max_port_load;
	if (max_port_load) { /* the runs' pass sums the ports, in route order */
		uint32_t d = graph_outdeg(g, 0);
		double *load = xcalloc((size_t)d + 1, sizeof(double));

		route_runs_of(&ports, rt, 0, rt->nroutes, j.run, load);
		*max_port_load = 0;
		for (uint32_t k = 0; k < d; k++)
			*max_port_load = load[k] > *max_port_load ? load[k] : *max_port_load;
		free(load);
		if (!runs || stepped) {
			free(j.run);
			j.run = NULL;
		}
	}
	np = a2a_lower_cut(rt, threads, &j.cut);
	/* Steps without a step array: hop i at step i, as unstepped. */
	j.step = stepped ? rt->step : NULL;
	j.tail = graph_arc_tails(g);
	j.lo = xmalloc((rt->nroutes + 1) * sizeof(uint32_t));
	j.hi = xmalloc((rt->nroutes + 1) * sizeof(uint32_t));
	j.count = xcalloc(np, sizeof(*j.count));
	j.ncount = xcalloc(np, sizeof(*j.ncount));
	parallel_for(np, 1, threads, a2a_lower_count, &j);
	sched_init(s, SCHED_ALLTOALL, algorithm, g->n);
	snprintf(s->topology, sizeof(s->topology), "%s", g->spec ? g->spec : "");
	a2a_lower_join(&j, np, s);
	parallel_for(np, 1, threads, a2a_lower_write, &j);
	for (size_t p = 0; p < np; p++)
		free(j.count[p]);
	free(j.count);
	free(j.ncount);
	free(j.cut);
	free(j.lo);
	free(j.hi);
	free((void *)j.tail);
	free(j.run);
	arc_ports_free(&ports);
	return 0;
}

/* What mirroring rt to every node and building the schedule will hold, on
 * top of what the process holds now; true (err set) when over the limit. */
static bool over_budget(const struct graph *g, const struct a2a_routes *rt,
			const struct a2a_request *q, const struct a2a_lowering *low,
			struct ofc_error *err)
{
	double copies = rt->symmetric ? g->n : 1;
	double hops = copies * (double)(rt->nroutes ? rt->off[rt->nroutes] : 0);
	double need =
	    (double)mem_held() + hops * A2A_BYTES_PER_HOP + copies * (double)rt->nroutes * 40.0;
	char need_s[32], max_s[32];

	if (need <= (double)q->max_memory)
		return false;
	fmt_size(need_s, sizeof(need_s), need < 1.8e19 ? (uint64_t)need : UINT64_MAX);
	fmt_size(max_s, sizeof(max_s), q->max_memory);
	ofc_error_set(err, OFC_E_RUNTIME,
		      "all-to-all %s (%s lowering) on %u nodes needs about %s (%.3g routes of "
		      "%.3g hops in all), over the memory limit of %s (ofc --max-memory, ofcd "
		      "--max-request-memory)%s",
		      a2a_algo_name(q->algo), low->name, g->n, need_s, copies * (double)rt->nroutes,
		      hops, max_s,
		      low->kind == A2A_LOWER_STEPS
			  ? "; --lowering paths keeps a pair's few heaviest "
			    "paths and needs far less"
			  : "");
	return true;
}

/* Whether rt, lowered by low, is surely more transfers than q->max_transfers
 * (err set): a stepped route is a transfer a hop, a routed one a transfer
 * a hop unless said in runs (then a route at least). */
static bool over_reply(const struct graph *g, const struct a2a_routes *rt,
		       const struct a2a_request *q, const struct a2a_lowering *low,
		       struct ofc_error *err)
{
	double copies = rt->symmetric ? g->n : 1;
	double hops = copies * (double)(rt->nroutes ? rt->off[rt->nroutes] : 0);
	double least =
	    low->kind != A2A_LOWER_STEPS && q->runs ? copies * (double)rt->nroutes : hops;

	if (!q->max_transfers || least <= (double)q->max_transfers)
		return false;
	ofc_error_set(err, OFC_E_RUNTIME,
		      "%s on %u nodes has about %.3g transfers, more than one reply holds (%llu: "
		      "ofcd's --max-frame): ask for a summary, or for the schedule as a stream",
		      a2a_algo_name(q->algo), g->n, least, (unsigned long long)q->max_transfers);
	return true;
}

int a2a_solve(const struct graph *g, const struct a2a_request *q, const struct topo_facts *f,
	      bool *steps, struct mcf_result *m, struct a2a_outcome *o, struct ofc_error *err)
{
	struct mcf_opts mo = q->mcf;
	bool try = *steps && !q->lowering;
	double limit = q->steps_try > 0 ? q->steps_try : A2A_STEPS_TRY_SECONDS;

	/* Within a request's time limit the try has half of it at most: the
	 * paths lowering after it needs time too (torus:256x256, --time-limit 3:
	 * 4.1 s in all when the try took the whole 3 s). */
	if (try && q->mcf.time_limit > 0 && limit > q->mcf.time_limit / 2)
		limit = q->mcf.time_limit / 2;
	o->lowering = *steps ? a2a_lowering_at(A2A_LOWER_STEPS) : q->lowering;
	mo.steps = *steps ? f->diameter : 0;
	mo.routes = true;
	mo.routes_if_optimal = try;
	if (try && (mo.time_limit <= 0 || mo.time_limit > limit))
		mo.time_limit = limit;
	if (mcf_solve(g, &mo, m, err) < 0)
		return -1;
	if (try && !m->optimal) {
		snprintf(o->fallback, sizeof(o->fallback),
			 "the time-stepped MCF did not prove its optimum in %.3g s (%s, gap "
			 "%.3g%%): lowered to paths instead (--lowering steps waits)",
			 m->seconds, mcf_stop_name(m->stop), 100 * m->gap);
		mcf_result_free(m);
		mo = q->mcf;
		mo.routes = true;
		if (mcf_solve(g, &mo, m, err) < 0)
			return -1;
		*steps = false;
		o->lowering = a2a_lowering_at(A2A_LOWER_PATHS);
	}
	o->cut_through = !*steps;
	return 0;
}

const char *a2a_algo_name(enum a2a_algo a)
{
	switch (a) {
	case A2A_MCF:
		return "mcf";
	case A2A_DIRECT:
		return "direct";
	case A2A_SP_BALANCED:
		return "sp-balanced";
	}
	return "?";
}

int a2a_build(const struct graph *g, const struct a2a_request *q, struct schedule *s,
	      struct a2a_outcome *o, struct ofc_error *err)
{
	const struct a2a_lowering *low = q->lowering ? q->lowering : a2a_lowering_at(0);
	bool mcf = q->algo == A2A_MCF, steps = mcf && low->kind == A2A_LOWER_STEPS;
	struct a2a_routes own = {0}, *rt = &own;
	int rc;

	memset(o, 0, sizeof(*o));
	memset(s, 0, sizeof(*s));
	if (g->n > A2A_MAX_NODES)
		return ofc_error_set(err, OFC_E_INPUT,
				     "%u nodes: all-to-all schedules are built for up to %u nodes",
				     g->n, A2A_MAX_NODES);
	if (mcf) {
		struct mcf_opts mo = q->mcf;
		struct topo_facts f;

		topo_facts(g, &f, mo.threads);
		if (a2a_solve(g, q, &f, &steps, &o->mcf, o, err) < 0)
			return -1;
		low = o->lowering;
		o->have_mcf = true;
		rt = &o->mcf.routes;
		/* A pair's heaviest paths are the same before and after mirroring:
		 * keep them first, so only they are mirrored. */
		if (low->kind == A2A_LOWER_PATHS)
			a2a_routes_limit(rt, graph_outdeg(g, 0), q->mcf.threads);
		if (over_reply(g, rt, q, low, err)) {
			a2a_outcome_free(o);
			return -1;
		}
		if (q->max_memory && over_budget(g, rt, q, low, err)) {
			/* The default's time-stepped schedule may prove its optimum
			 * and still not fit: the paths lowering instead, saying why. */
			if (q->lowering || !steps) {
				a2a_outcome_free(o);
				return -1;
			}
			struct a2a_request paths = *q;

			ofc_error_clear(err);
			a2a_outcome_free(o);
			paths.lowering = a2a_lowering_at(A2A_LOWER_PATHS);
			steps = false;
			if (a2a_solve(g, &paths, &f, &steps, &o->mcf, o, err) < 0)
				return -1;
			snprintf(o->fallback, sizeof(o->fallback),
				 "the time-stepped schedule is over the memory limit: lowered to "
				 "paths instead (--lowering steps says what it needs)");
			low = o->lowering;
			o->have_mcf = true;
			rt = &o->mcf.routes;
			a2a_routes_limit(rt, graph_outdeg(g, 0), q->mcf.threads);
			if (over_budget(g, rt, q, low, err)) {
				a2a_outcome_free(o);
				return -1;
			}
		}
		a2a_routes_expand(g, rt, q->mcf.threads);
		if (low->kind == A2A_LOWER_SINGLE)
			a2a_routes_single(g, q->mcf.capacity, q->mcf.demand, rt);
		rc = 0;
	} else {
		o->cut_through = true;
		rc = q->algo == A2A_DIRECT
			 ? a2a_direct_routes(g, q->mcf.demand, rt, err)
			 : a2a_balanced_routes(g, q->mcf.demand, 0x0fc, q->clock, rt, err);
	}
	if (rc == 0)
		rc = a2a_schedule(g, rt, steps, a2a_runs(q), a2a_algo_name(q->algo), s, NULL,
				  q->mcf.threads, err);
	if (rc == 0) {
		o->max_load = a2a_max_link_load(g, q->mcf.capacity, q->mcf.demand, rt);
		o->max_paths = a2a_max_paths(rt);
		o->max_hops = a2a_max_hops(rt);
	}
	a2a_routes_free(&own);
	if (rc < 0)
		a2a_outcome_free(o);
	return rc;
}

void a2a_outcome_free(struct a2a_outcome *o)
{
	if (o->have_mcf)
		mcf_result_free(&o->mcf);
	memset(o, 0, sizeof(*o));
}

/* ---- the all-to-all baselines, reduced ------------------------------------------ */

/* direct or sp-balanced: node 0's routes, hop i at step i (as a2a_build
 * lowers them), the program. */
static int a2a_baseline_reduced(const struct graph *g, const struct sched_group *G,
				const struct a2a_request *q, struct sched_reduced *r,
				struct a2a_outcome *o, struct ofc_error *err)
{
	struct a2a_routes rt = {.n = g->n};

	if ((q->algo == A2A_DIRECT ? a2a_direct_routes_0(g, &rt, err)
				   : a2a_balanced_routes_0(g, G, 0x0fc, q->clock, &rt, err)) < 0 ||
	    a2a_schedule(g, &rt, false, a2a_runs(q), a2a_algo_name(q->algo), &r->prog, &o->max_load,
			 1, err) < 0) {
		a2a_routes_free(&rt);
		return -1;
	}
	r->group = *G;
	o->cut_through = true;
	o->max_paths = 1;
	o->max_hops = a2a_max_hops(&rt);
	/* o->max_load: unit capacities (links of different rates are not
	 * reduced). */
	a2a_routes_free(&rt);
	return 0;
}

/* ---- the all-to-all MCF, reduced ------------------------------------------------ */

int a2a_reduced(const struct graph *g, const struct sched_group *G, const struct a2a_request *q,
		struct sched_reduced *r, struct a2a_outcome *o, struct ofc_error *err)
{
	const struct a2a_lowering *low = q->lowering ? q->lowering : a2a_lowering_at(0);
	bool steps = low->kind == A2A_LOWER_STEPS;
	struct sched_group grp = *G; /* G may be &r->group */
	struct topo_facts f;

	memset(o, 0, sizeof(*o));
	memset(r, 0, sizeof(*r));
	if (q->mcf.demand)
		return ofc_error_set(err, OFC_E_INPUT,
				     "a demand matrix is not alike at every node: no reduced "
				     "program (the explicit schedule, up to %u nodes)",
				     A2A_MAX_NODES);
	if (q->algo == A2A_DIRECT || q->algo == A2A_SP_BALANCED) {
		if (grp.nodes != g->n || grp.reps != 1)
			return ofc_error_set(err, OFC_E_INPUT,
					     "the group has %u elements, %s %u nodes", grp.order,
					     g->spec ? g->spec : "the topology", g->n);
		/* sp-balanced's rule is a pass per pair over the layers of its
		 * shortest paths: 0.03-0.05 s at 4,096, 0.6 s at 16,384, 5-7 s
		 * at 65,536 (hypercube:16, torus:256x256); direct's BFS is one
		 * search. */
		if (q->algo == A2A_SP_BALANCED && g->n > A2A_SP_REDUCED_MAX_NODES)
			return ofc_error_set(
			    err, OFC_E_INPUT,
			    "%u nodes: sp-balanced searches the graph once per pair, so it "
			    "is built for up to %u nodes (direct and mcf go further)",
			    g->n, A2A_SP_REDUCED_MAX_NODES);
		return a2a_baseline_reduced(g, &grp, q, r, o, err);
	}
	bool single = low->kind == A2A_LOWER_SINGLE;
	if (grp.nodes != g->n || grp.reps != 1)
		return ofc_error_set(err, OFC_E_INPUT, "the group has %u elements, %s %u nodes",
				     grp.order, g->spec ? g->spec : "the topology", g->n);
	topo_facts(g, &f, q->mcf.threads);
	struct a2a_request sym = *q;
	sym.mcf.method = MCF_SYMMETRIC;
	sym.mcf.translations_known = true; /* G is checked port by port */
	/* Time-stepped above the explicit sizes: from the fluid flow where
	 * that proves the optimum (column generation took 3-8 s on
	 * torus:32x32), else by column generation as asked. */
	int by_fluid = 0;
	if (steps && g->n > A2A_STEPS_EXPLICIT_NODES &&
	    (by_fluid = a2a_steps_by_symmetry(g, &grp, &sym, f.diameter, &o->mcf, err)) < 0)
		return -1;
	if (by_fluid) {
		o->lowering = a2a_lowering_at(A2A_LOWER_STEPS);
		o->cut_through = false;
	} else if (a2a_solve(g, &sym, &f, &steps, &o->mcf, o, err) < 0) {
		return -1;
	}
	o->have_mcf = true;
	struct a2a_routes *rt = &o->mcf.routes;
	/* node 0's routes are the program: no mirroring, no routes.perm */
	/* Single path by symmetry: node 0's pairs each on one of their MCF
	 * paths, balanced by port loads (every arc of port j carries node 0's
	 * hops on j): the symmetric schedule of the rule, not the explicit
	 * one, which balances all N (N - 1) pairs by arc. */
	if (single)
		a2a_routes_single_ports(g, q->mcf.capacity, rt);
	else if (!steps)
		a2a_routes_limit(rt, graph_outdeg(g, 0), q->mcf.threads);
	struct a2a_routes own = *rt;
	own.symmetric = false;
	if (a2a_schedule(g, &own, steps, a2a_runs(q), a2a_algo_name(A2A_MCF), &r->prog,
			 &o->max_load, 1, err) < 0) {
		a2a_outcome_free(o);
		return -1;
	}
	r->group = grp;
	o->max_hops = a2a_max_hops(rt);
	o->max_paths = a2a_max_paths(rt);
	return 0;
}
