/* CSR digraphs: construction from arc lists, transpose, arc tails, free. */
#include "topo/topo.h"

#include <stdlib.h>
#include <string.h>

struct graph *graph_from_arcs(uint32_t n, uint32_t m, const uint32_t *tails, const uint32_t *heads,
			      const char *spec)
{
	struct graph *g = xcalloc(1, sizeof(*g));

	g->n = n;
	g->m = m;
	g->off = xcalloc((size_t)n + 1, sizeof(uint32_t));
	g->adj = xmalloc((size_t)m * sizeof(uint32_t));
	g->spec = xstrdup(spec ? spec : "");
	for (uint32_t i = 0; i < m; i++)
		g->off[tails[i] + 1]++;
	for (uint32_t u = 0; u < n; u++)
		g->off[u + 1] += g->off[u];
	uint32_t *pos = xmalloc((size_t)n * sizeof(uint32_t));
	memcpy(pos, g->off, (size_t)n * sizeof(uint32_t));
	for (uint32_t i = 0; i < m; i++)
		g->adj[pos[tails[i]]++] = heads[i];
	free(pos);
	return g;
}

struct graph *graph_transpose(const struct graph *g)
{
	struct graph *t = xcalloc(1, sizeof(*t));

	t->n = g->n;
	t->m = g->m;
	t->vertex_transitive = g->vertex_transitive;
	t->spec = xasprintf("reverse(%s)", g->spec);
	t->off = xcalloc((size_t)g->n + 1, sizeof(uint32_t));
	t->adj = xmalloc((size_t)g->m * sizeof(uint32_t));
	for (uint32_t i = 0; i < g->m; i++)
		t->off[g->adj[i] + 1]++;
	for (uint32_t u = 0; u < g->n; u++)
		t->off[u + 1] += t->off[u];
	uint32_t *pos = xmalloc((size_t)g->n * sizeof(uint32_t));
	memcpy(pos, t->off, (size_t)g->n * sizeof(uint32_t));
	for (uint32_t u = 0; u < g->n; u++)
		for (uint32_t i = g->off[u]; i < g->off[u + 1]; i++)
			t->adj[pos[g->adj[i]]++] = u;
	free(pos);
	return t;
}

uint32_t *graph_arc_tails(const struct graph *g)
{
	uint32_t *tail = xmalloc(((size_t)g->m + 1) * sizeof(uint32_t));

	for (uint32_t u = 0; u < g->n; u++)
		for (uint32_t a = g->off[u]; a < g->off[u + 1]; a++)
			tail[a] = u;
	return tail;
}

void graph_free(struct graph *g)
{
	if (!g)
		return;
	free(g->off);
	free(g->adj);
	free(g->spec);
	free(g);
}

uint32_t *graph_arc_twins(const struct graph *g)
{
	uint32_t *twin = xmalloc(((size_t)g->m + 1) * sizeof(uint32_t));

	for (uint32_t u = 0; u < g->n; u++)
		for (uint32_t a = g->off[u]; a < g->off[u + 1]; a++) {
			uint32_t v = g->adj[a], found = 0;

			for (uint32_t b = g->off[u]; b < a; b++)
				if (g->adj[b] == v)
					goto none; /* parallel arcs: no one twin */
			for (uint32_t b = g->off[v]; b < g->off[v + 1]; b++)
				if (g->adj[b] == u) {
					twin[a] = b;
					found++;
				}
			if (found != 1 || v == u)
				goto none;
		}
	return twin;
none:
	free(twin);
	return NULL;
}
