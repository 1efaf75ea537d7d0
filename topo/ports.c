/* Port permutations: a d-regular digraph as d perfect matchings.
 *
 * Every node has d transmit and d receive ports; an OCS or patch panel
 * connects transmit port j of u to receive port j of v, so one port index is
 * one permutation of the nodes. König's theorem says the bipartite double
 * cover (tails on the left, heads on the right) of a d-regular multigraph
 * splits into d perfect matchings; we peel them off one at a time with
 * Hopcroft-Karp, O(d m sqrt n) in all. Each round starts from the greedy
 * matching "first unused arc of every node, in the family's port order", so
 * topologies whose port j is already a permutation (tori, circulants,
 * hypercubes) keep port j = generator j and need no augmenting at all.
 * topo_ports_prefer first seeds round j with the arcs a switch already
 * carries on port j (and keeps those arcs out of other rounds' greedy
 * starts), so a reconfiguration leaves them in place unless the matching
 * cannot be completed around them. */
#include "topo/topo.h"

#include <stdlib.h>
#include <string.h>

#define NONE UINT32_MAX

struct hk {
	const struct graph *g;
	const uint8_t *used; /* arcs taken by earlier rounds */
	uint32_t *match_l;   /* left node -> arc, NONE if free */
	uint32_t *match_r;   /* right node -> left node, NONE if free */
	uint32_t *dist;
	uint32_t *queue;
	uint32_t *iter; /* next arc to try, per left node */
	uint32_t *stack, *via;
};

static bool hk_bfs(struct hk *h)
{
	const struct graph *g = h->g;
	uint32_t head = 0, tail = 0;
	bool found = false;

	for (uint32_t u = 0; u < g->n; u++) {
		if (h->match_l[u] == NONE) {
			h->dist[u] = 0;
			h->queue[tail++] = u;
		} else {
			h->dist[u] = NONE;
		}
	}
	while (head < tail) {
		uint32_t u = h->queue[head++];

		for (uint32_t a = g->off[u]; a < g->off[u + 1]; a++) {
			if (h->used[a])
				continue;
			uint32_t w = h->match_r[g->adj[a]];
			if (w == NONE)
				found = true;
			else if (h->dist[w] == NONE) {
				h->dist[w] = h->dist[u] + 1;
				h->queue[tail++] = w;
			}
		}
	}
	return found;
}

/* Iterative DFS along the BFS layers from free left node s. */
static bool hk_dfs(struct hk *h, uint32_t s)
{
	const struct graph *g = h->g;
	uint32_t top = 0;

	h->stack[top++] = s;
	while (top) {
		uint32_t u = h->stack[top - 1];

		if (h->iter[u] == g->off[u + 1]) {
			h->dist[u] = NONE; /* dead end: never again this phase */
			top--;
			continue;
		}
		uint32_t a = h->iter[u]++;
		if (h->used[a])
			continue;
		uint32_t v = g->adj[a], w = h->match_r[v];
		if (w == NONE) {
			/* Augment: each stacked node takes the arc it went by. */
			h->match_l[u] = a;
			h->match_r[v] = u;
			for (uint32_t i = top - 1; i-- > 0;) {
				uint32_t x = h->stack[i], b = h->via[i];

				h->match_l[x] = b;
				h->match_r[g->adj[b]] = x;
			}
			return true;
		}
		if (h->dist[w] == h->dist[u] + 1 && h->dist[w] != NONE) {
			h->via[top - 1] = a;
			h->stack[top++] = w;
		}
	}
	return false;
}

/* reserved[a] = j + 1 when prefer asks port j to carry arc a (one arc per
 * preferred entry, parallel arcs taken in order); 0 for the rest. */
static uint32_t *reserve_preferred(const struct graph *g, const struct port_map *prefer)
{
	uint32_t *reserved = xcalloc((size_t)g->m + 1, sizeof(uint32_t));

	if (!prefer || prefer->n != g->n)
		return reserved;
	for (uint32_t j = 0; j < prefer->d; j++)
		for (uint32_t u = 0; u < g->n; u++) {
			uint32_t v = prefer->to[(size_t)j * g->n + u];

			for (uint32_t a = g->off[u]; v != NONE && a < g->off[u + 1]; a++)
				if (g->adj[a] == v && !reserved[a]) {
					reserved[a] = j + 1;
					break;
				}
		}
	return reserved;
}

/* Round j's greedy start: the arcs reserved for port j, then the first
 * free unreserved arc of every node in port order. */
static uint32_t greedy_start(struct hk *h, const uint32_t *reserved, uint32_t j)
{
	const struct graph *g = h->g;
	uint32_t matched = 0;

	for (int pass = 0; pass < 2; pass++)
		for (uint32_t u = 0; u < g->n; u++)
			for (uint32_t a = g->off[u]; h->match_l[u] == NONE && a < g->off[u + 1];
			     a++) {
				bool want = pass == 0 ? reserved[a] == j + 1 : reserved[a] == 0;

				if (want && !h->used[a] && h->match_r[g->adj[a]] == NONE) {
					h->match_l[u] = a;
					h->match_r[g->adj[a]] = u;
					matched++;
				}
			}
	return matched;
}

int topo_ports(const struct graph *g, struct port_map *pm, struct ofc_error *err)
{
	return topo_ports_prefer(g, NULL, pm, err);
}

/* Every node's out-degree and in-degree is d (node 0's out-degree). */
static int check_regular(const struct graph *g, uint32_t d, struct ofc_error *err)
{
	uint32_t *indeg = xcalloc((size_t)g->n + 1, sizeof(uint32_t));

	for (uint32_t u = 0; u < g->n; u++) {
		if (graph_outdeg(g, u) != d) {
			free(indeg);
			return ofc_error_set(err, OFC_E_INPUT,
					     "%s is not regular (node %u has out-degree %u, node 0 "
					     "has %u): no port permutations",
					     g->spec, u, graph_outdeg(g, u), d);
		}
		for (uint32_t a = g->off[u]; a < g->off[u + 1]; a++)
			indeg[g->adj[a]]++;
	}
	for (uint32_t v = 0; v < g->n; v++)
		if (indeg[v] != d) {
			uint32_t bad = indeg[v];

			free(indeg);
			return ofc_error_set(
			    err, OFC_E_INPUT,
			    "%s is not regular (node %u has in-degree %u, out-degree "
			    "is %u): no port permutations",
			    g->spec, v, bad, d);
		}
	free(indeg);
	return 0;
}

/* pm's self-loops listed by node, then port. */
static void list_self_loops(struct port_map *pm)
{
	uint32_t k = 0;

	pm->self_node = xmalloc(pm->nself * sizeof(uint32_t));
	pm->self_port = xmalloc(pm->nself * sizeof(uint32_t));
	for (uint32_t u = 0; u < pm->n; u++)
		for (uint32_t j = 0; j < pm->d; j++)
			if (pm->to[(size_t)j * pm->n + u] == u) {
				pm->self_node[k] = u;
				pm->self_port[k] = j;
				k++;
			}
}

int topo_ports_prefer(const struct graph *g, const struct port_map *prefer, struct port_map *pm,
		      struct ofc_error *err)
{
	uint32_t n = g->n, d = n ? graph_outdeg(g, 0) : 0;

	memset(pm, 0, sizeof(*pm));
	if (check_regular(g, d, err) < 0)
		return -1;

	struct hk h = {.g = g};
	uint8_t *used = xcalloc((size_t)g->m + 1, 1);
	h.used = used;
	h.match_l = xmalloc(((size_t)n + 1) * sizeof(uint32_t));
	h.match_r = xmalloc(((size_t)n + 1) * sizeof(uint32_t));
	h.dist = xmalloc(((size_t)n + 1) * sizeof(uint32_t));
	h.queue = xmalloc(((size_t)n + 1) * sizeof(uint32_t));
	h.iter = xmalloc(((size_t)n + 1) * sizeof(uint32_t));
	h.stack = xmalloc(((size_t)n + 1) * sizeof(uint32_t));
	h.via = xmalloc(((size_t)n + 1) * sizeof(uint32_t));
	pm->n = n;
	pm->d = d;
	pm->to = xmalloc(((size_t)n * d + 1) * sizeof(uint32_t));

	uint32_t *reserved = reserve_preferred(g, prefer);
	int rc = 0;
	for (uint32_t j = 0; j < d && rc == 0; j++) {
		memset(h.match_l, 0xff, (size_t)n * sizeof(uint32_t));
		memset(h.match_r, 0xff, (size_t)n * sizeof(uint32_t));
		uint32_t matched = greedy_start(&h, reserved, j);
		while (matched < n && hk_bfs(&h)) {
			for (uint32_t u = 0; u < n; u++)
				h.iter[u] = g->off[u];
			for (uint32_t u = 0; u < n; u++)
				if (h.match_l[u] == NONE && hk_dfs(&h, u))
					matched++;
		}
		if (matched < n) {
			/* Impossible for a regular multigraph; kept as a guard. */
			rc = ofc_error_set(err, OFC_E_RUNTIME,
					   "port %u: only %u of %u nodes matched", j, matched, n);
			break;
		}
		for (uint32_t u = 0; u < n; u++) {
			uint32_t a = h.match_l[u];

			used[a] = 1;
			pm->to[(size_t)j * n + u] = g->adj[a];
			if (g->adj[a] == u)
				pm->nself++;
		}
	}
	if (rc == 0 && pm->nself)
		list_self_loops(pm);
	free(used);
	free(reserved);
	free(h.match_l);
	free(h.match_r);
	free(h.dist);
	free(h.queue);
	free(h.iter);
	free(h.stack);
	free(h.via);
	if (rc < 0)
		port_map_free(pm);
	return rc;
}

void port_map_free(struct port_map *pm)
{
	free(pm->to);
	free(pm->self_node);
	free(pm->self_port);
	memset(pm, 0, sizeof(*pm));
}
