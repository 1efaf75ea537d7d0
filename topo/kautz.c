/* Word digraphs: Kautz, generalized Kautz (Imase-Itoh) and de Bruijn. These
 * reach the lowest diameters known for their degree, and have no port
 * order in which every port is a permutation, so topo_ports matches them. */
#include "topo/internal.h"

#include <stdlib.h>

/* Kautz K(d, len): words x0..x_len over {0..d} with no two equal neighbours;
 * x0..x_len -> x1..x_len y for every y != x_len. N = (d+1) d^len.
 * A word is numbered x0 * d^len + sum c_i d^(len-i), where c_i in [0, d) is
 * x_i with the forbidden symbol x_{i-1} squeezed out: a bijection that keeps
 * lexicographic order. */
static uint32_t kautz_encode(const uint8_t *x, uint32_t len, uint32_t d)
{
	uint32_t idx = x[0];

	for (uint32_t i = 1; i <= len; i++)
		idx = idx * d + (x[i] < x[i - 1] ? x[i] : x[i] - 1u);
	return idx;
}

static void kautz_decode(uint32_t idx, uint8_t *x, uint32_t len, uint32_t d)
{
	uint8_t c[64];

	for (uint32_t i = len; i >= 1; i--) {
		c[i] = (uint8_t)(idx % d);
		idx /= d;
	}
	x[0] = (uint8_t)idx;
	for (uint32_t i = 1; i <= len; i++)
		x[i] = (uint8_t)(c[i] < x[i - 1] ? c[i] : c[i] + 1);
}

struct graph *topo_kautz(uint32_t d, uint32_t len)
{
	uint32_t n = d + 1;

	for (uint32_t i = 0; i < len; i++)
		n *= d;
	struct graph *g = graph_regular(n, d);
	uint8_t x[66], y[66];

	for (uint32_t u = 0; u < n; u++) {
		kautz_decode(u, x, len, d);
		for (uint32_t i = 0; i < len; i++)
			y[i] = x[i + 1];
		for (uint32_t j = 0; j < d; j++) {
			/* Port j appends the j-th symbol after x_len, cyclically. */
			y[len] = (uint8_t)((x[len] + 1 + j) % (d + 1));
			g->adj[(size_t)u * d + j] = kautz_encode(y, len, d);
		}
	}
	return g;
}

struct graph *topo_genkautz(uint32_t n, uint32_t d)
{
	struct graph *g = graph_regular(n, d);

	/* Imase-Itoh: x -> (-d x - a) mod n, a = 1..d (port a - 1). */
	for (uint32_t x = 0; x < n; x++) {
		uint64_t dx = ((uint64_t)d * x) % n;

		for (uint32_t a = 1; a <= d; a++) {
			uint64_t v = (2 * (uint64_t)n - dx - (a % n)) % n;

			g->adj[(size_t)x * d + a - 1] = (uint32_t)v;
		}
	}
	return g;
}

struct graph *topo_debruijn(uint32_t d, uint32_t len)
{
	uint32_t n = 1;

	for (uint32_t i = 0; i < len; i++)
		n *= d;
	struct graph *g = graph_regular(n, d);
	/* Shift left and append a: i -> (d i + a) mod d^len. */
	for (uint32_t u = 0; u < n; u++)
		for (uint32_t a = 0; a < d; a++)
			g->adj[(size_t)u * d + a] = (uint32_t)(((uint64_t)u * d + a) % n);
	return g;
}
