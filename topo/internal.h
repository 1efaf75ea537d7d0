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

/* The graph of a "ports:N:ROW.ROW..." spec, s being what follows
 * "ports:" (len bytes; ports_spec.c): arcs in port order. On an error, at
 * is the offset in s where it is. */
struct topo_ports_error {
	size_t at;
	char msg[200];
};
int topo_ports_decode(const char *s, size_t len, struct graph **out, struct topo_ports_error *e);

/* topo_ports, and the work it did: arcs it looked at and nodes it reset,
 * over all rounds (tests hold it near the arc count where parallel arcs
 * made it quadratic). work may be NULL. */
int topo_ports_work(const struct graph *g, struct port_map *pm, uint64_t *work,
		    struct ofc_error *err);

/* Every node's out-degree and in-degree is d, or an error saying which is
 * not (port_map.c). */
int topo_check_regular(const struct graph *g, uint32_t d, struct ofc_error *err);

/* pm's self-loops listed by node, then port (pm->nself counted; port_map.c). */
void port_map_list_self_loops(struct port_map *pm);

/* ---- symmetry through nauty (symmetry.c) ----------------------------------
 * A graph as nauty takes it: a simple digraph without loops whose vertices
 * are split into ordered colour cells. sym_encode keeps g's automorphisms
 * exactly: nodes 0..norig-1 are g's (coloured by colour[u], < 2^31, and
 * their self-loops), the rest stand each for a pair u -> v of parallel
 * arcs of other than the least multiplicity (coloured by it). Isomorphic
 * graphs encode alike, cells in the same order, refined by colour
 * refinement over in- and out-neighbours (cut_short: the deadline,
 * now_seconds(), 0: none, stopped it). Arrays are nauty's types (size_t
 * offsets, int ids); order lists the vertices cell by cell. */
struct sym_graph {
	uint32_t n, norig;
	uint64_t m;
	size_t *off; /* n + 1 */
	int *deg, *adj;
	int *order;	/* n: vertices by cell, then id */
	uint32_t *cell; /* n: cell of each vertex */
	uint32_t ncells;
	uint64_t *cell_key; /* per cell: what it encodes (ordered) */
	uint32_t *cell_end; /* per cell: one past its last place in order */
	bool cut_short;
};
void sym_encode(const struct graph *g, const uint32_t *colour, double deadline,
		struct sym_graph *s);
void sym_graph_free(struct sym_graph *s);

/* Generators of Aut (node maps over the norig nodes): those that move a
 * node keep[] marks (NULL: all; a generating set still, for the action on
 * the marked nodes: generators fixing them all act on them as the identity),
 * as many as max_bytes holds (cut: some left out, a subgroup). order is
 * |Aut| as nauty counts it (0 when timed out). Past the deadline
 * (now_seconds(); 0: none) the search stops: the generators so far, a
 * subgroup's, and timed_out. */
struct sym_gens {
	uint32_t n, ngen, cap;
	uint32_t *perm; /* ngen * n */
	double order;
	bool timed_out, cut;
};
void sym_automorphisms(const struct sym_graph *s, const uint8_t *keep, double deadline,
		       uint64_t max_bytes, struct sym_gens *out);
void sym_gens_free(struct sym_gens *g);
/* An isomorphism from a onto b by their canonical forms: 1 with map[u]
 * (b's node for a's node u, norig entries), 0 when none exists, -1 when
 * the deadline came first. */
int sym_isomorphism(const struct sym_graph *a, const struct sym_graph *b, double deadline,
		    uint32_t *map);

#endif
