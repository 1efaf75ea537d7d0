/* Expansions that grow a topology while keeping its good properties
 * (Zhao et al., "Efficient Direct-Connect Topologies for Collective
 * Communications", Sec. 5 and App. C). The schedules that go with them are
 * in sched/; these build only the graphs. */
#include "topo/internal.h"

static int too_big(struct ofc_error *err, const char *what, uint64_t nodes, uint64_t arcs)
{
	if (nodes > TOPO_MAX_NODES)
		return ofc_error_set(err, OFC_E_INPUT, "%s would have %llu nodes (limit %u)", what,
				     (unsigned long long)nodes, TOPO_MAX_NODES);
	if (arcs > TOPO_MAX_ARCS)
		return ofc_error_set(err, OFC_E_INPUT, "%s would have %llu links (limit %u)", what,
				     (unsigned long long)arcs, TOPO_MAX_ARCS);
	return 0;
}

/* Def. 1: every arc uv becomes a node; uv -> vw for every arc vw, including
 * vu (the schedule, not the graph, skips the way back). Node uv keeps the
 * CSR index of arc uv. */
struct graph *topo_line(const struct graph *g, struct ofc_error *err)
{
	uint64_t arcs = 0;

	for (uint32_t i = 0; i < g->m; i++)
		arcs += graph_outdeg(g, g->adj[i]);
	if (too_big(err, "the line graph", g->m, arcs) < 0)
		return NULL;
	struct graph *l = xcalloc(1, sizeof(*l));
	l->n = g->m;
	l->m = (uint32_t)arcs;
	l->off = xmalloc(((size_t)l->n + 1) * sizeof(uint32_t));
	l->adj = xmalloc((size_t)l->m * sizeof(uint32_t));
	uint32_t k = 0;
	for (uint32_t i = 0; i < g->m; i++) {
		uint32_t v = g->adj[i];

		l->off[i] = k;
		for (uint32_t a = g->off[v]; a < g->off[v + 1]; a++)
			l->adj[k++] = a;
	}
	l->off[l->n] = k;
	return l;
}

/* Def. 3: copies v_0..v_{k-1} of every node (index v * k + i) and arcs
 * u_i -> v_j for every arc uv and every i, j. Needs no self-loops. */
struct graph *topo_degree_expand(const struct graph *g, uint32_t k, struct ofc_error *err)
{
	for (uint32_t u = 0; u < g->n; u++)
		for (uint32_t a = g->off[u]; a < g->off[u + 1]; a++)
			if (g->adj[a] == u)
				return ofc_error_set(err, OFC_E_INPUT,
						     "degree expansion needs a graph without "
						     "self-loops (node %u has one)",
						     u),
				       NULL;
	if (too_big(err, "the degree expansion", (uint64_t)g->n * k, (uint64_t)g->m * k * k) < 0)
		return NULL;
	struct graph *x = xcalloc(1, sizeof(*x));
	x->n = g->n * k;
	x->m = g->m * k * k;
	x->off = xmalloc(((size_t)x->n + 1) * sizeof(uint32_t));
	x->adj = xmalloc((size_t)x->m * sizeof(uint32_t));
	uint32_t p = 0;
	for (uint32_t u = 0; u < g->n; u++)
		for (uint32_t i = 0; i < k; i++) {
			x->off[u * k + i] = p;
			for (uint32_t a = g->off[u]; a < g->off[u + 1]; a++)
				for (uint32_t j = 0; j < k; j++)
					x->adj[p++] = g->adj[a] * k + j;
		}
	x->off[x->n] = p;
	x->vertex_transitive = g->vertex_transitive;
	return x;
}

/* Def. 5: (a, b) -> (a', b) for arcs aa' of A, then (a, b) -> (a, b') for
 * arcs bb' of B. Node (a, b) is a + |A| * b, so the first factor varies
 * fastest, as the dimensions of a torus do. */
struct graph *topo_product(const struct graph *a, const struct graph *b, struct ofc_error *err)
{
	uint64_t n = (uint64_t)a->n * b->n;
	uint64_t m = (uint64_t)a->m * b->n + (uint64_t)b->m * a->n;

	if (too_big(err, "the product", n, m) < 0)
		return NULL;
	struct graph *x = xcalloc(1, sizeof(*x));
	x->n = (uint32_t)n;
	x->m = (uint32_t)m;
	x->off = xmalloc(((size_t)x->n + 1) * sizeof(uint32_t));
	x->adj = xmalloc((size_t)x->m * sizeof(uint32_t));
	uint32_t p = 0;
	for (uint32_t vb = 0; vb < b->n; vb++)
		for (uint32_t va = 0; va < a->n; va++) {
			x->off[va + a->n * vb] = p;
			for (uint32_t i = a->off[va]; i < a->off[va + 1]; i++)
				x->adj[p++] = a->adj[i] + a->n * vb;
			for (uint32_t i = b->off[vb]; i < b->off[vb + 1]; i++)
				x->adj[p++] = va + a->n * b->adj[i];
		}
	x->off[x->n] = p;
	x->vertex_transitive = a->vertex_transitive && b->vertex_transitive;
	return x;
}

struct graph *topo_union(const struct graph *a, const struct graph *b, struct ofc_error *err)
{
	if (a->n != b->n) {
		ofc_error_set(err, OFC_E_INPUT,
			      "union needs topologies on the same nodes (%u and %u nodes)", a->n,
			      b->n);
		return NULL;
	}
	if (too_big(err, "the union", a->n, (uint64_t)a->m + b->m) < 0)
		return NULL;
	struct graph *x = xcalloc(1, sizeof(*x));
	uint32_t p = 0;

	x->n = a->n;
	x->m = a->m + b->m;
	x->off = xmalloc(((size_t)x->n + 1) * sizeof(uint32_t));
	x->adj = xmalloc(((size_t)x->m + 1) * sizeof(uint32_t));
	for (uint32_t u = 0; u < x->n; u++) {
		x->off[u] = p;
		for (uint32_t i = a->off[u]; i < a->off[u + 1]; i++)
			x->adj[p++] = a->adj[i];
		for (uint32_t i = b->off[u]; i < b->off[u + 1]; i++)
			x->adj[p++] = b->adj[i];
	}
	x->off[x->n] = p;
	return x;
}
