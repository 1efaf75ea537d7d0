/* What both ways of finding port permutations share (topo_ports in
 * ports.c, topo_ports_prefer in ports_prefer.c): the regularity check they
 * start with, the self-loop list they end with, and freeing the result.
 * Both call down into this file and neither calls the other's rounds, so
 * the calls go one way: ports_prefer.c -> ports.c -> port_map.c. */
#include "topo/internal.h"

#include <stdlib.h>
#include <string.h>

/* Every node's out-degree and in-degree is d (node 0's out-degree). */
int topo_check_regular(const struct graph *g, uint32_t d, struct ofc_error *err)
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
void port_map_list_self_loops(struct port_map *pm)
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

void port_map_free(struct port_map *pm)
{
	free(pm->to);
	free(pm->self_node);
	free(pm->self_port);
	memset(pm, 0, sizeof(*pm));
}
