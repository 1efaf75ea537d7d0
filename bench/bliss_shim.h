/* bench/bliss_shim.cc's interface (C): a coloured digraph as
 * topo/symmetry.c's struct sym_graph holds it. */
#ifndef OFC_BENCH_BLISS_SHIM_H
#define OFC_BENCH_BLISS_SHIM_H

#include <stddef.h>
#include <stdint.h>

struct bliss_in {
	uint32_t n;
	const size_t *off;
	const int *deg, *adj;
	const uint32_t *cell;
};
struct bliss_out {
	uint32_t ngens;
	double order;
};
void bliss_shim_automorphisms(const struct bliss_in *in, struct bliss_out *out);
/* 1 with map (a's vertex -> b's) when a and b are isomorphic, else 0. */
int bliss_shim_isomorphic(const struct bliss_in *a, const struct bliss_in *b, uint32_t *map);

#endif
