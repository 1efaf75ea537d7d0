/* Private to topo/: the family builders and helpers the spec parser calls. */
#ifndef OFC_TOPO_INTERNAL_H
#define OFC_TOPO_INTERNAL_H

#include "topo/topo.h"

/* An n-node graph with out-degree d everywhere; adj left for the caller. */
struct graph *graph_regular(uint32_t n, uint32_t d);

/* Family builders. Parameters are already range-checked by the parser
 * (sizes within TOPO_MAX_NODES / TOPO_MAX_ARCS). */
struct graph *topo_ring(uint32_t n);
struct graph *topo_biring(uint32_t n);
struct graph *topo_torus(const uint32_t *dims, uint32_t ndims);
struct graph *topo_hypercube(uint32_t dim);
struct graph *topo_complete(uint32_t n);
struct graph *topo_bipartite(uint32_t d);
struct graph *topo_hamming(uint32_t n, uint32_t q);
struct graph *topo_circulant(uint32_t n, const uint32_t *gens, uint32_t ngens);
struct graph *topo_kautz(uint32_t d, uint32_t len);
struct graph *topo_genkautz(uint32_t n, uint32_t d);
struct graph *topo_debruijn(uint32_t d, uint32_t len);

/* topo_ports, and the work it did: arcs it looked at and nodes it reset,
 * over all rounds (tests hold it near the arc count where parallel arcs
 * made it quadratic). work may be NULL. */
int topo_ports_work(const struct graph *g, struct port_map *pm, uint64_t *work,
		    struct ofc_error *err);

/* Every node's out-degree and in-degree is d, or an error saying which is
 * not (ports.c). */
int topo_check_regular(const struct graph *g, uint32_t d, struct ofc_error *err);

/* pm's self-loops listed by node, then port (pm->nself counted). */
void port_map_list_self_loops(struct port_map *pm);

#endif
