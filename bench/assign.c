/* The assignments of the planner's topologies built for traffic:
 * jobplan_assign, the sparse most-weight permutation, on the traffic of a
 * training iteration at N hosts, against the dense Hungarian it replaced
 * (O(N^3), which stopped the planner at 512 hosts).
 *
 *   build/bench/assign [N...]        (default 256 512 1024 2048 4096)
 *
 * The traffic: tensor parallelism 8 (hosts 8i..8i+7), data parallelism
 * N/8 across them (hosts of equal rank mod 8), experts parallel in groups
 * of 8 of those; every pair that trades weighs its bytes, skewed. Three
 * ports' assignments as for_traffic makes them (weights divided by the
 * links a pair already has). The dense Hungarian runs up to DENSE_MAX.
 * ASSIGN_UNIFORM=1: every pair trades (an all-to-all, skewed): the support
 * is everything, the sparse search's worst kind of input. */
#include "controller/jobplan/internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DENSE_MAX 2048

/* The dense Hungarian with potentials (e-maxx), cost -weight, the diagonal
 * forbidden: what candidates.c ran before. */
static void dense(const double *wgt, uint32_t n, uint32_t *to)
{
	size_t N = (size_t)n + 1;
	double *u = calloc(N, sizeof(double)), *v = calloc(N, sizeof(double));
	double *minv = malloc(N * sizeof(double)), big = 1;
	uint32_t *p = calloc(N, sizeof(uint32_t)), *way = calloc(N, sizeof(uint32_t));
	uint8_t *used = malloc(N);

	for (size_t i = 0; i < (size_t)n * n; i++)
		big = fmax(big, fabs(wgt[i]));
	big = big * 4 * n + 1;
	for (uint32_t i = 1; i <= n; i++) {
		uint32_t j0 = 0;

		p[0] = i;
		for (uint32_t j = 0; j <= n; j++)
			minv[j] = INFINITY;
		memset(used, 0, N);
		do {
			uint32_t i0 = p[j0], j1 = 0;
			double delta = INFINITY;

			used[j0] = 1;
			for (uint32_t j = 1; j <= n; j++) {
				if (used[j])
					continue;
				double cost = i0 == j ? big : -wgt[(size_t)(i0 - 1) * n + (j - 1)];
				double cur = cost - u[i0] - v[j];

				if (cur < minv[j]) {
					minv[j] = cur;
					way[j] = j0;
				}
				if (minv[j] < delta) {
					delta = minv[j];
					j1 = j;
				}
			}
			for (uint32_t j = 0; j <= n; j++) {
				if (used[j]) {
					u[p[j]] += delta;
					v[j] -= delta;
				} else {
					minv[j] -= delta;
				}
			}
			j0 = j1;
		} while (p[j0] != 0);
		do {
			uint32_t j1 = way[j0];

			p[j0] = p[j1];
			j0 = j1;
		} while (j0);
	}
	for (uint32_t j = 1; j <= n; j++)
		to[p[j] - 1] = j - 1;
	free(u);
	free(v);
	free(minv);
	free(p);
	free(way);
	free(used);
}

static int uniform; /* ASSIGN_UNIFORM=1: every pair trades, skewed */

static double bytes_of(uint32_t n, uint32_t s, uint32_t t)
{
	double b = 0;

	if (s == t)
		return 0;
	if (uniform)
		return 1048576.0 * (1 + (s * 7 + t * 13) % 17);
	if (s / 8 == t / 8) /* tp */
		b += 64.0 * 1048576 / 8;
	if (s % 8 == t % 8) { /* dp; ep: groups of 8 among them, skewed */
		b += 256.0 * 1048576 / (n / 8);
		if (s / 64 == t / 64)
			b += 32.0 * 1048576 / 8 * (1 + (s * 7 + t * 3) % 5);
	}
	return b;
}

int main(int argc, char **argv)
{
	static const uint32_t def[] = {256, 512, 1024, 2048, 4096};
	uint32_t nn = argc > 1 ? (uint32_t)argc - 1 : 5;

	uniform = getenv("ASSIGN_UNIFORM") && atoi(getenv("ASSIGN_UNIFORM"));

	printf("| hosts | pairs that trade | sparse s (3 ports) | weight | dense s | weight |\n");
	printf("|---:|---:|---:|---:|---:|---:|\n");
	for (uint32_t i = 0; i < nn; i++) {
		uint32_t n = argc > 1 ? (uint32_t)atoi(argv[i + 1]) : def[i];
		struct jobplan_arcs g = {.n = n};
		size_t m = 0;

		g.off = malloc(((size_t)n + 1) * sizeof(uint32_t));
		for (uint32_t u = 0; u < n; u++) {
			g.off[u] = (uint32_t)m;
			for (uint32_t v = 0; v < n; v++)
				m += bytes_of(n, u, v) > 0;
		}
		g.off[n] = (uint32_t)m;
		g.to = malloc((m + 1) * sizeof(uint32_t));
		g.w = malloc((m + 1) * sizeof(double));
		for (uint32_t u = 0, k = 0; u < n; u++)
			for (uint32_t v = 0; v < n; v++)
				if (bytes_of(n, u, v) > 0)
					g.to[k++] = v;
		uint32_t *to = malloc((size_t)n * 4 * sizeof(uint32_t));
		double ws = 0, wd = 0, t0 = now_seconds();

		for (uint32_t j = 0; j < 3; j++) { /* ports 1..3 */
			for (uint32_t u = 0; u < n; u++)
				for (uint32_t a = g.off[u]; a < g.off[u + 1]; a++) {
					uint32_t links = 0;

					for (uint32_t k = 0; k < j; k++)
						links += to[(size_t)k * n + u] == g.to[a];
					g.w[a] = bytes_of(n, u, g.to[a]) / (1 + links);
				}
			jobplan_assign(&g, to + (size_t)j * n, INFINITY);
			for (uint32_t u = 0; u < n; u++) /* the weight it maximised */
				for (uint32_t a = g.off[u]; a < g.off[u + 1]; a++)
					if (g.to[a] == to[(size_t)j * n + u])
						ws += g.w[a];
		}
		double ts = now_seconds() - t0, td = NAN;

		if (n <= DENSE_MAX) {
			double *w = malloc((size_t)n * n * sizeof(double));

			t0 = now_seconds();
			for (uint32_t j = 0; j < 3; j++) {
				for (uint32_t u = 0; u < n; u++)
					for (uint32_t v = 0; v < n; v++) {
						uint32_t links = 0;

						for (uint32_t k = 0; k < j; k++)
							links += to[(size_t)k * n + u] == v;
						w[(size_t)u * n + v] =
						    bytes_of(n, u, v) / (1 + links);
					}
				dense(w, n, to + (size_t)j * n);
				for (uint32_t u = 0; u < n; u++)
					wd += w[(size_t)u * n + to[(size_t)j * n + u]];
			}
			td = now_seconds() - t0;
			free(w);
		}
		printf("| %u | %zu | %.3f | %.6g | ", n, m, ts, ws);
		if (n <= DENSE_MAX)
			printf("%.3f | %.6g |\n", td, wd);
		else
			printf("(not run) | |\n");
		fflush(stdout);
		free(g.off);
		free(g.to);
		free(g.w);
		free(to);
	}
	return 0;
}
