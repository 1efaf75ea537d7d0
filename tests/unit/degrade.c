/* Links and arcs failed at random (degrade.h). */
#include "degrade.h"

#include <stdbool.h>
#include <stdlib.h>

/* The next draw in [0, 1): Knuth's MMIX LCG, its top 53 bits. */
static double draw(uint64_t *seed)
{
	*seed = *seed * 6364136223846793005ull + 1442695040888963407ull;
	return (double)(*seed >> 11) / 9007199254740992.0;
}

struct graph *degrade_at_random(const struct graph *g, double pl, double pa, uint64_t *seed)
{
	bool *gone = calloc(g->m + 1, sizeof(bool));
	uint32_t *in = calloc(g->n + 1, sizeof(uint32_t)),
		 *out = calloc(g->n + 1, sizeof(uint32_t));

	for (uint32_t u = 0; pl > 0 && u < g->n; u++)
		for (uint32_t a = g->off[u]; a < g->off[u + 1]; a++) {
			uint32_t v = g->adj[a];

			if (draw(seed) >= pl || gone[a] || u >= v)
				continue;
			gone[a] = true;
			for (uint32_t b = g->off[v]; b < g->off[v + 1]; b++)
				if (g->adj[b] == u && !gone[b]) {
					gone[b] = true;
					break;
				}
		}
	for (uint32_t a = 0; pa > 0 && a < g->m; a++)
		if (draw(seed) < pa)
			gone[a] = true;
	struct graph *d = topo_without_arcs(g, gone, "degraded");
	for (uint32_t u = 0; u < d->n; u++) /* a loop brings a node nothing */
		for (uint32_t a = d->off[u]; a < d->off[u + 1]; a++)
			if (d->adj[a] != u) {
				out[u]++;
				in[d->adj[a]]++;
			}
	for (uint32_t u = 0; u < d->n; u++)
		if (!in[u] || !out[u]) {
			graph_free(d);
			d = NULL;
			break;
		}
	free(gone);
	free(in);
	free(out);
	return d;
}
