/* Cayley-type families: rings, tori, hypercubes, complete and complete
 * bipartite graphs, Hamming graphs, circulants. Arcs are emitted in port
 * order: the j-th arc of every node is one generator, so port j of every
 * node already forms a permutation and topo_ports keeps the natural wiring
 * (port 0 = +x, port 1 = -x, ... on a torus). */
#include "topo/internal.h"

struct graph *graph_regular(uint32_t n, uint32_t d)
{
	struct graph *g = xcalloc(1, sizeof(*g));

	g->n = n;
	g->m = n * d;
	g->off = xmalloc(((size_t)n + 1) * sizeof(uint32_t));
	g->adj = xmalloc((size_t)g->m * sizeof(uint32_t));
	for (uint32_t u = 0; u <= n; u++)
		g->off[u] = u * d;
	return g;
}

struct graph *topo_ring(uint32_t n)
{
	struct graph *g = graph_regular(n, 1);

	for (uint32_t u = 0; u < n; u++)
		g->adj[u] = (u + 1) % n;
	g->vertex_transitive = true;
	return g;
}

struct graph *topo_biring(uint32_t n)
{
	uint32_t gen = 1;

	/* Two nodes: one link each way, like the torus dimension of size 2. */
	return n == 2 ? topo_complete(2) : topo_circulant(n, &gen, 1);
}

/* A dimension of size 2 contributes one link each way: its +1 and -1
 * neighbours are the same node, and the torus is the Cartesian product of
 * rings with K_2 for the size-2 ones, as in Zhao et al. (Frontera's 3x3x2
 * torus has degree 5 and BFB reaches (N-1)/N on it). Use circulant:2:1 in a
 * product for a doubled link. */
struct graph *topo_torus(const uint32_t *dims, uint32_t ndims)
{
	uint32_t n = 1, d = 0;

	for (uint32_t i = 0; i < ndims; i++) {
		n *= dims[i];
		d += dims[i] == 2 ? 1 : 2;
	}
	struct graph *g = graph_regular(n, d);
	for (uint32_t u = 0; u < n; u++) {
		uint32_t stride = 1, *a = g->adj + (size_t)u * d;

		/* Node index = x0 + A0 * (x1 + A1 * (x2 + ...)); ports +x0, -x0, +x1, ... */
		for (uint32_t i = 0; i < ndims; i++) {
			uint32_t x = (u / stride) % dims[i];
			uint32_t base = u - x * stride;

			*a++ = base + ((x + 1) % dims[i]) * stride;
			if (dims[i] > 2)
				*a++ = base + ((x + dims[i] - 1) % dims[i]) * stride;
			stride *= dims[i];
		}
	}
	g->vertex_transitive = true;
	return g;
}

struct graph *topo_hypercube(uint32_t dim)
{
	uint32_t n = 1u << dim;
	struct graph *g = graph_regular(n, dim);

	for (uint32_t u = 0; u < n; u++)
		for (uint32_t i = 0; i < dim; i++)
			g->adj[(size_t)u * dim + i] = u ^ (1u << i);
	g->vertex_transitive = true;
	return g;
}

struct graph *topo_complete(uint32_t n)
{
	struct graph *g = graph_regular(n, n - 1);

	/* Port j of u goes to u + j + 1: every port is a rotation. */
	for (uint32_t u = 0; u < n; u++)
		for (uint32_t j = 0; j + 1 < n; j++)
			g->adj[(size_t)u * (n - 1) + j] = (u + j + 1) % n;
	g->vertex_transitive = true;
	return g;
}

struct graph *topo_bipartite(uint32_t d)
{
	struct graph *g = graph_regular(2 * d, d);

	/* Nodes 0..d-1 on one side, d..2d-1 on the other. */
	for (uint32_t u = 0; u < 2 * d; u++) {
		uint32_t side = u < d ? 0 : 1, x = u - side * d;

		for (uint32_t j = 0; j < d; j++)
			g->adj[(size_t)u * d + j] = (1 - side) * d + (x + j) % d;
	}
	g->vertex_transitive = true;
	return g;
}

struct graph *topo_hamming(uint32_t dim, uint32_t q)
{
	uint32_t n = 1, d = dim * (q - 1);

	for (uint32_t i = 0; i < dim; i++)
		n *= q;
	struct graph *g = graph_regular(n, d);
	for (uint32_t u = 0; u < n; u++) {
		uint32_t stride = 1, *a = g->adj + (size_t)u * d;

		for (uint32_t i = 0; i < dim; i++) {
			uint32_t x = (u / stride) % q, base = u - x * stride;

			for (uint32_t s = 1; s < q; s++)
				*a++ = base + ((x + s) % q) * stride;
			stride *= q;
		}
	}
	g->vertex_transitive = true;
	return g;
}

struct graph *topo_circulant(uint32_t n, const uint32_t *gens, uint32_t ngens)
{
	struct graph *g = graph_regular(n, 2 * ngens);

	for (uint32_t u = 0; u < n; u++) {
		uint32_t *a = g->adj + (size_t)u * 2 * ngens;

		for (uint32_t i = 0; i < ngens; i++) {
			uint32_t s = gens[i] % n;

			a[2 * i] = (uint32_t)(((uint64_t)u + s) % n);
			a[2 * i + 1] = (uint32_t)(((uint64_t)u + n - s) % n);
		}
	}
	g->vertex_transitive = true;
	return g;
}
