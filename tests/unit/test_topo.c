/* topo: families against known facts, the diameter against plain BFS,
 * expansions, port permutations on structured and random multigraphs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "topo/internal.h"

static struct graph *build(const char *spec)
{
	struct ofc_error err = {0};
	struct graph *g = NULL;

	if (topo_build(spec, &g, &err) < 0)
		fail_msg("%s: %s (column %u)", spec, err.msg, err.col);
	return g;
}

struct known {
	const char *spec;
	uint32_t n, d, diameter;
};

/* Facts from the literature or by hand: torus diameters are the sum of
 * floor(dim/2); Kautz K(d,n) has (d+1)d^n nodes and diameter n+1; de Bruijn
 * d^n nodes and diameter n; C(n,{m,m+1}) with m = ceil((-1+sqrt(2n-1))/2)
 * has diameter m (Boesch-Wang). */
static const struct known known[] = {
    {"ring:7", 7, 1, 6},
    {"biring:7", 7, 2, 3},
    {"biring:8", 8, 2, 4},
    {"torus:8x8", 64, 4, 8},
    {"torus:4x6", 24, 4, 5},
    {"torus:5x7", 35, 4, 5},
    {"torus:3x3x2", 18, 5, 3}, /* a size-2 dimension is one link */
    {"torus:3x3x3x2", 54, 7, 4},
    {"torus:2x2x2", 8, 3, 3}, /* = hypercube:3 */
    {"biring:2", 2, 1, 1},
    {"torus:32x32", 1024, 4, 32},
    {"hypercube:10", 1024, 10, 10},
    {"complete:5", 5, 4, 1},
    {"bipartite:4", 8, 4, 2},
    {"hamming:2,3", 9, 4, 2},
    {"hamming:3,4", 64, 9, 3},
    {"circulant:16:3,4", 16, 4, 3},
    {"circulant:12:2,3", 12, 4, 2},
    {"circulant:7:2,3", 7, 4, 2},
    {"circulant:41:4,5", 41, 4, 4},
    {"kautz:4,4", 1280, 4, 5},
    {"kautz:2,3", 24, 2, 4},
    {"kautz:4,0", 5, 4, 1},
    {"debruijn:2,5", 32, 2, 5},
    {"debruijn:4,3", 64, 4, 3},
    {"genkautz:20,4", 20, 4, 2}, /* = K(4,1) */
    {"genkautz:1024,4", 1024, 4, 5},
    {"line(bipartite:2)", 8, 2, 3},
    {"line^2(bipartite:2)", 16, 2, 4},
    {"line^3(circulant:16:3,4)", 1024, 4, 6},
    {"product(ring:4,ring:8)", 32, 2, 10},
    {"power(complete:3,2)", 9, 4, 2},
    {"degree(ring:4,2)", 8, 2, 4},
};

static void test_known_facts(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
		struct graph *g = build(known[i].spec);
		struct topo_facts f;

		topo_facts(g, &f, 2);
		if (g->n != known[i].n || f.degree != known[i].d || !f.regular ||
		    !f.strongly_connected || f.diameter != known[i].diameter)
			fail_msg("%s: n=%u d=%u regular=%d diameter=%u, want n=%u d=%u diameter=%u",
				 known[i].spec, g->n, f.degree, f.regular, f.diameter, known[i].n,
				 known[i].d, known[i].diameter);
		assert_int_equal(g->m, (uint64_t)known[i].n * known[i].d);
		graph_free(g);
	}
}

static void test_moore(void **state)
{
	(void)state;
	assert_int_equal(moore_diameter(1024, 4), 5); /* 1+4+16+64+256 = 341 < 1024 */
	assert_int_equal(moore_diameter(341, 4), 4);
	assert_int_equal(moore_diameter(342, 4), 5);
	assert_int_equal(moore_diameter(64, 4), 3);
	assert_int_equal(moore_diameter(10, 1), 9);
	assert_int_equal(moore_diameter(1, 3), 0);
	assert_int_equal(moore_diameter(8, 2), 3);
	assert_int_equal(moore_diameter(7, 2), 2);
}

/* Imase-Itoh: D(Pi(d,m)) <= ceil(log_d m), and Thm 21 of Zhao et al.:
 * D = k implies m > 1 + d + ... + d^(k-2): within one of the Moore bound. */
static void test_genkautz_near_moore(void **state)
{
	(void)state;
	for (uint32_t d = 2; d <= 5; d++)
		for (uint32_t m = d + 1; m <= 200; m += 7) {
			char spec[64];
			struct topo_facts f;

			snprintf(spec, sizeof(spec), "genkautz:%u,%u", m, d);
			struct graph *g = build(spec);
			topo_facts(g, &f, 1);
			assert_true(f.strongly_connected);
			assert_true(f.diameter <= f.moore_diameter + 1);
			uint32_t logd = 0;
			for (uint64_t p = 1; p < m; p *= d)
				logd++;
			assert_true(f.diameter <= logd);
			/* Self-loops exactly when d+1 does not divide m. */
			assert_int_equal(f.self_loops > 0, m % (d + 1) != 0);
			graph_free(g);
		}
}

/* Kautz K(d,n) is the generalized Kautz graph on d^(n+1) + d^n nodes. */
static void test_kautz_matches_genkautz(void **state)
{
	struct topo_facts a, b;
	(void)state;

	struct graph *k = build("kautz:3,3"), *gk = build("genkautz:108,3");
	topo_facts(k, &a, 1);
	topo_facts(gk, &b, 1);
	assert_int_equal(k->n, gk->n);
	assert_int_equal(a.diameter, b.diameter);
	assert_int_equal(a.self_loops, 0);
	assert_int_equal(b.self_loops, 0);
	graph_free(k);
	graph_free(gk);
}

/* The bit-parallel diameter agrees with plain BFS distances. */
static void test_diameter_against_bfs(void **state)
{
	static const char *const specs[] = {
	    "genkautz:300,3",	      "kautz:2,5",
	    "debruijn:3,4",	      "line(circulant:16:3,4)",
	    "reverse(genkautz:77,2)", "line^2(complete:4)",
	    "genkautz:513,2",
	};
	(void)state;

	for (size_t i = 0; i < sizeof(specs) / sizeof(specs[0]); i++) {
		struct ofc_error err = {0};
		struct graph *g = build(specs[i]);
		struct topo_facts f;
		uint16_t *dist = topo_distances(g, 2, &err);
		uint32_t max = 0;

		assert_non_null(dist);
		for (size_t k = 0; k < (size_t)g->n * g->n; k++)
			if (dist[k] > max)
				max = dist[k];
		topo_facts(g, &f, 2);
		assert_false(g->vertex_transitive);
		assert_int_equal(f.diameter, max);
		free(dist);
		graph_free(g);
	}
}

/* The 256-at-a-time eccentricities agree with a queue search's for every
 * source, first or last of a batch, on digraphs, a torus less a link and
 * some arcs, and graphs not strongly connected (UINT32_MAX); batches of
 * 1, 130 (a second pair of words) and every node (a batch and a part). */
static void test_eccentricities(void **state)
{
	static const char *const specs[] = {
	    "genkautz:300,3",	    "debruijn:3,4",	"reverse(genkautz:77,2)",
	    "line(circulant:12:4)", "circulant:12:4,6", "torus:16x16",
	};
	(void)state;

	for (size_t i = 0; i < sizeof(specs) / sizeof(specs[0]); i++) {
		struct graph *h = build(specs[i]), *g = h;
		struct ofc_error err = {0};

		if (!strcmp(specs[i], "torus:16x16") &&
		    topo_fail_links(h, "5-6,40>41,41>57,200>216", &g, &err) < 0)
			fail_msg("%s", err.msg);
		struct graph *t = graph_transpose(g);
		uint32_t n = g->n, *src = malloc(n * sizeof(uint32_t)),
			 *ecc = malloc(n * sizeof(uint32_t)), *dist = malloc(n * sizeof(uint32_t)),
			 *queue = malloc(n * sizeof(uint32_t)), far, unreached = 0;
		uint32_t ks[] = {1, n < 130 ? n : 130, n};

		for (uint32_t v = 0; v < n; v++)
			src[v] = (uint32_t)(((uint64_t)v * 7 + 3) % n); /* not in order */
		if (n % 7 == 0)
			for (uint32_t v = 0; v < n; v++)
				src[v] = n - 1 - v;
		for (size_t k = 0; k < 3; k++) {
			topo_eccentricities(t, src, ks[k], ecc);
			for (uint32_t j = 0; j < ks[k]; j++) {
				uint32_t want = topo_eccentricity(g, src[j], dist, queue, &far);

				if (ecc[j] != want)
					fail_msg("%s: source %u (%u of %u): %u, a search %u",
						 specs[i], src[j], j, ks[k], ecc[j], want);
				unreached += want == UINT32_MAX;
			}
		}
		if (i >= 3 && i <= 4)
			assert_true(unreached > 0);
		free(src);
		free(ecc);
		free(dist);
		free(queue);
		graph_free(t);
		if (g != h)
			graph_free(g);
		graph_free(h);
	}
}

static void test_not_connected(void **state)
{
	struct topo_facts f;
	(void)state;

	struct graph *g = build("circulant:12:4,6");
	topo_facts(g, &f, 1);
	assert_false(f.strongly_connected);
	graph_free(g);
	/* A non-vertex-transitive disconnected graph: line graph of a
	 * disconnected circulant. */
	g = build("line(circulant:12:4)");
	topo_facts(g, &f, 1);
	assert_false(f.strongly_connected);
	graph_free(g);
}

/* Strongly connected components: two nodes share one exactly when each
 * reaches the other (all-pairs distances), on random sparse digraphs and
 * on groups placed by product with empty. */
static void test_components(void **state)
{
	uint32_t comp[64];
	(void)state;

	struct graph *g = build("product(ring:4,empty:4)");
	assert_int_equal(topo_components(g, comp), 4);
	for (uint32_t u = 0; u < 16; u++)
		assert_int_equal(comp[u], comp[u / 4 * 4]);
	graph_free(g);
	srand(77);
	for (int round = 0; round < 200; round++) {
		uint32_t n = 1 + (uint32_t)rand() % 40, m = (uint32_t)rand() % (2 * n + 1);
		uint32_t tails[81], heads[81];
		struct ofc_error err = {0};

		for (uint32_t a = 0; a < m; a++)
			tails[a] = (uint32_t)rand() % n, heads[a] = (uint32_t)rand() % n;
		g = graph_from_arcs(n, m, tails, heads, "random");
		uint32_t nc = topo_components(g, comp), seen = 0;
		uint16_t *dist = topo_distances(g, 1, &err);

		assert_non_null(dist);
		for (uint32_t u = 0; u < n; u++) {
			assert_true(comp[u] < nc);
			seen |= comp[u] < 32 ? 1u << comp[u] : 0;
			for (uint32_t v = 0; v < n; v++) {
				bool both = dist[(size_t)u * n + v] != TOPO_UNREACHABLE &&
					    dist[(size_t)v * n + u] != TOPO_UNREACHABLE;
				assert_int_equal(comp[u] == comp[v], both);
			}
		}
		if (nc <= 32)
			assert_int_equal(seen, nc == 32 ? UINT32_MAX : (1u << nc) - 1);
		free(dist);
		graph_free(g);
	}
}

static void test_symmetry(void **state)
{
	struct topo_facts f;
	(void)state;

	struct graph *g = build("torus:4x4");
	topo_facts(g, &f, 1);
	assert_true(f.symmetric);
	graph_free(g);
	g = build("genkautz:30,3");
	topo_facts(g, &f, 1);
	assert_false(f.symmetric);
	graph_free(g);
	g = build("ring:5");
	topo_facts(g, &f, 1);
	assert_false(f.symmetric);
	graph_free(g);
}

/* The arcs of reverse(reverse(G)) are those of G, as multisets per node. */
static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

static void test_reverse_and_transpose(void **state)
{
	(void)state;
	struct graph *g = build("genkautz:50,3"), *rr = build("reverse(reverse(genkautz:50,3))");

	assert_int_equal(g->m, rr->m);
	for (uint32_t u = 0; u < g->n; u++) {
		uint32_t a[8], b[8], k = graph_outdeg(g, u);

		assert_int_equal(k, graph_outdeg(rr, u));
		memcpy(a, graph_out(g, u), k * 4);
		memcpy(b, graph_out(rr, u), k * 4);
		qsort(a, k, 4, cmp_u32);
		qsort(b, k, 4, cmp_u32);
		assert_memory_equal(a, b, k * 4);
	}
	graph_free(g);
	graph_free(rr);
}

/* Every port row is a permutation; self-loops are counted. (Together the
 * rows are the arcs: check_ports_multiset.) */
static void check_ports(const struct graph *g, const struct port_map *pm)
{
	uint32_t n = g->n, d = pm->d, nself = 0;
	uint32_t *seen = calloc(n, sizeof(uint32_t));

	assert_int_equal((uint64_t)n * d, g->m);
	for (uint32_t j = 0; j < d; j++) {
		memset(seen, 0, n * sizeof(uint32_t));
		for (uint32_t u = 0; u < n; u++) {
			uint32_t v = pm->to[(size_t)j * n + u];

			assert_true(v < n);
			assert_int_equal(seen[v], 0);
			seen[v] = 1;
			nself += v == u;
		}
	}
	free(seen);
	assert_int_equal(nself, pm->nself);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

static void check_ports_multiset(const struct graph *g, const struct port_map *pm)
{
	uint64_t *arcs = malloc((size_t)g->m * sizeof(uint64_t));
	uint64_t *pairs = malloc((size_t)g->m * sizeof(uint64_t));

	for (uint32_t u = 0, k = 0; u < g->n; u++)
		for (uint32_t a = g->off[u]; a < g->off[u + 1]; a++)
			arcs[k++] = (uint64_t)u << 32 | g->adj[a];
	for (uint32_t j = 0; j < pm->d; j++)
		for (uint32_t u = 0; u < g->n; u++)
			pairs[(size_t)j * g->n + u] =
			    (uint64_t)u << 32 | pm->to[(size_t)j * g->n + u];
	qsort(arcs, g->m, 8, cmp_u64);
	qsort(pairs, g->m, 8, cmp_u64);
	assert_memory_equal(arcs, pairs, (size_t)g->m * 8);
	free(arcs);
	free(pairs);
}

static void test_ports_families(void **state)
{
	static const char *const specs[] = {
	    "torus:8x8",   "torus:3x3x2",      "genkautz:1024,4", "genkautz:27,6",
	    "kautz:3,3",   "debruijn:2,6",     "hypercube:6",	  "line^2(circulant:16:3,4)",
	    "bipartite:5", "degree(ring:5,3)", "complete:9",	  "biring:2",
	};
	(void)state;

	for (size_t i = 0; i < sizeof(specs) / sizeof(specs[0]); i++) {
		struct ofc_error err = {0};
		struct port_map pm;
		struct graph *g = build(specs[i]);

		assert_int_equal(topo_ports(g, &pm, &err), 0);
		check_ports(g, &pm);
		check_ports_multiset(g, &pm);
		port_map_free(&pm);
		graph_free(g);
	}
}

/* Cayley families keep port j = generator j: torus port 0 is +x. */
static void test_ports_keep_generators(void **state)
{
	struct ofc_error err = {0};
	struct port_map pm;
	(void)state;

	struct graph *g = build("torus:4x4");
	assert_int_equal(topo_ports(g, &pm, &err), 0);
	for (uint32_t u = 0; u < 16; u++) {
		assert_int_equal(pm.to[0 * 16 + u], (u / 4) * 4 + (u % 4 + 1) % 4); /* +x */
		assert_int_equal(pm.to[2 * 16 + u], ((u / 4 + 1) % 4) * 4 + u % 4); /* +y */
	}
	port_map_free(&pm);
	graph_free(g);
}

/* Random d-regular multigraphs with self-loops and parallel arcs, arcs in
 * a random order per node: the matching has real work to do. */
static void test_ports_random_multigraphs(void **state)
{
	(void)state;
	srand(12345);
	for (int round = 0; round < 40; round++) {
		uint32_t n = 2 + (uint32_t)rand() % 200, d = 1 + (uint32_t)rand() % 6;
		uint32_t *tails = malloc((size_t)n * d * 4), *heads = malloc((size_t)n * d * 4);
		uint32_t *perm = malloc(n * 4);
		struct ofc_error err = {0};
		struct port_map pm;

		/* d random permutations make a d-regular multigraph ... */
		for (uint32_t j = 0; j < d; j++) {
			for (uint32_t u = 0; u < n; u++)
				perm[u] = u;
			for (uint32_t u = n - 1; u > 0; u--) {
				uint32_t k = (uint32_t)rand() % (u + 1), t = perm[u];
				perm[u] = perm[k];
				perm[k] = t;
			}
			for (uint32_t u = 0; u < n; u++) {
				tails[(size_t)u * d + j] = u;
				heads[(size_t)u * d + j] = perm[u];
			}
		}
		/* ... whose arcs we shuffle within each node. */
		for (uint32_t u = 0; u < n; u++)
			for (uint32_t j = d - 1; j > 0; j--) {
				uint32_t k = (uint32_t)rand() % (j + 1),
					 t = heads[(size_t)u * d + j];
				heads[(size_t)u * d + j] = heads[(size_t)u * d + k];
				heads[(size_t)u * d + k] = t;
			}
		struct graph *g = graph_from_arcs(n, n * d, tails, heads, "random");
		assert_int_equal(topo_ports(g, &pm, &err), 0);
		check_ports(g, &pm);
		check_ports_multiset(g, &pm);
		port_map_free(&pm);
		graph_free(g);
		free(tails);
		free(heads);
		free(perm);
	}
}

/* "ports:N:..." is the spec of any port permutations: topo_ports_spec
 * writes it, topo_build reads it back with its arcs in port order, and
 * topo_ports gives back the very rows (self-loops and parallel arcs
 * included), one and two digits a node id (64 and 65 nodes). */
static void test_ports_spec_round_trip(void **state)
{
	(void)state;
	srand(4141);
	for (int round = 0; round < 30; round++) {
		uint32_t n = round == 0 ? 64 : round == 1 ? 65 : 1 + (uint32_t)rand() % 300;
		uint32_t d = 1 + (uint32_t)rand() % 5;
		struct port_map pm = {.n = n, .d = d}, back;
		struct ofc_error err = {0};
		struct graph *g = NULL;

		pm.to = malloc((size_t)n * d * sizeof(uint32_t));
		for (uint32_t j = 0; j < d; j++) {
			uint32_t *row = pm.to + (size_t)j * n;

			for (uint32_t u = 0; u < n; u++)
				row[u] = u;
			for (uint32_t u = n - 1; u > 0; u--) {
				uint32_t k = (uint32_t)rand() % (u + 1), t = row[u];
				row[u] = row[k];
				row[k] = t;
			}
		}
		char *spec = topo_ports_spec(&pm);
		size_t width = n > 64 ? 2 : 1;
		char head[32];

		snprintf(head, sizeof(head), "ports:%u:", n);
		assert_int_equal(strlen(spec), strlen(head) + d * n * width + (d - 1));
		if (topo_build(spec, &g, &err) < 0)
			fail_msg("n %u d %u: %s (column %u)", n, d, err.msg, err.col);
		assert_int_equal(g->n, n);
		for (uint32_t u = 0; u < n; u++)
			for (uint32_t j = 0; j < d; j++)
				assert_int_equal(g->adj[g->off[u] + j], pm.to[(size_t)j * n + u]);
		assert_int_equal(topo_ports(g, &back, &err), 0);
		assert_int_equal(back.d, d);
		assert_memory_equal(back.to, pm.to, (size_t)n * d * sizeof(uint32_t));
		port_map_free(&back);
		graph_free(g);
		free(spec);
		free(pm.to);
	}
}

/* empty:N has no links; as a factor of product() it places copies of a
 * topology (consecutive nodes, or every s-th), and union() lays two on the
 * same nodes, the first's ports first: the planner's groups. */
static void test_union_of_placed_groups(void **state)
{
	struct ofc_error err = {0};
	struct port_map pm;
	(void)state;

	struct graph *e = build("empty:5");
	assert_int_equal(e->n, 5);
	assert_int_equal(e->m, 0);
	graph_free(e);
	/* Rings on 0-3, 4-7, ...; complete graphs on {i, i+4, i+8, i+12}. */
	struct graph *g = build("union(product(ring:4,empty:4),product(empty:4,complete:4))");
	assert_int_equal(g->n, 16);
	assert_int_equal(g->m, 16 * 4);
	assert_int_equal(topo_ports(g, &pm, &err), 0);
	assert_int_equal(pm.d, 4);
	for (uint32_t u = 0; u < 16; u++) {
		assert_int_equal(pm.to[u], u / 4 * 4 + (u % 4 + 1) % 4); /* port 0: the ring */
		for (uint32_t j = 1; j < 4; j++) {
			uint32_t v = pm.to[(size_t)j * 16 + u];

			assert_int_equal(v % 4, u % 4); /* ports 1-3: u's column */
			assert_int_not_equal(v, u);
		}
	}
	port_map_free(&pm);
	graph_free(g);
	g = build("union(ring:4,ring:4,reverse(ring:4))");
	assert_int_equal(g->m, 12);
	graph_free(g);
}

/* A switch's current port permutations are kept: asked to prefer a
 * decomposition the graph has (another port order of it), topo_ports_prefer
 * gives back exactly that; with half the entries free it is still a valid
 * decomposition that keeps every preferred entry it can. */
static void test_ports_prefer(void **state)
{
	static const char *const specs[] = {"torus:4x4", "genkautz:64,4",
					    "line^2(circulant:16:3,4)"};
	(void)state;

	for (size_t i = 0; i < sizeof(specs) / sizeof(specs[0]); i++) {
		struct ofc_error err = {0};
		struct port_map pm, want, got;
		struct graph *g = build(specs[i]);

		assert_int_equal(topo_ports(g, &pm, &err), 0);
		uint32_t n = pm.n, d = pm.d, kept = 0, asked = 0;
		want = (struct port_map){.n = n, .d = d, .to = malloc((size_t)n * d * 4)};
		for (uint32_t j = 0; j < d; j++) /* ports in reverse order */
			memcpy(want.to + (size_t)j * n, pm.to + (size_t)(d - 1 - j) * n, n * 4);
		assert_int_equal(topo_ports_prefer(g, &want, &got, &err), 0);
		assert_memory_equal(got.to, want.to, (size_t)n * d * 4);
		port_map_free(&got);

		for (size_t k = 0; k < (size_t)n * d; k += 2)
			want.to[k] = UINT32_MAX;
		assert_int_equal(topo_ports_prefer(g, &want, &got, &err), 0);
		check_ports(g, &got);
		check_ports_multiset(g, &got);
		for (size_t k = 0; k < (size_t)n * d; k++)
			if (want.to[k] != UINT32_MAX) {
				asked++;
				kept += got.to[k] == want.to[k];
			}
		assert_int_equal(kept, asked); /* a decomposition exists that keeps them all */
		port_map_free(&got);
		port_map_free(&want);
		port_map_free(&pm);
		graph_free(g);
	}
}

/* ---- the port decomposition as it scanned every arc ------------------------
 * The old decomposition: each round scanned every arc of a node, used or not, every
 * copy of a parallel arc: the reference the visible-copy rounds are held to
 * (the same ports on every graph below). */
struct ref_hk {
	const struct graph *g;
	const uint8_t *used;
	uint32_t *match_l, *match_r, *dist, *queue, *iter, *stack, *via;
};

static bool ref_bfs(struct ref_hk *h)
{
	const struct graph *g = h->g;
	uint32_t head = 0, tail = 0;
	bool found = false;

	for (uint32_t u = 0; u < g->n; u++) {
		h->dist[u] = h->match_l[u] == UINT32_MAX ? 0 : UINT32_MAX;
		if (!h->dist[u])
			h->queue[tail++] = u;
	}
	while (head < tail) {
		uint32_t u = h->queue[head++];

		for (uint32_t a = g->off[u]; a < g->off[u + 1]; a++) {
			uint32_t w = h->match_r[g->adj[a]];

			if (h->used[a])
				continue;
			if (w == UINT32_MAX)
				found = true;
			else if (h->dist[w] == UINT32_MAX) {
				h->dist[w] = h->dist[u] + 1;
				h->queue[tail++] = w;
			}
		}
	}
	return found;
}

static bool ref_dfs(struct ref_hk *h, uint32_t s)
{
	const struct graph *g = h->g;
	uint32_t top = 0;

	h->stack[top++] = s;
	while (top) {
		uint32_t u = h->stack[top - 1];

		if (h->iter[u] == g->off[u + 1]) {
			h->dist[u] = UINT32_MAX;
			top--;
			continue;
		}
		uint32_t a = h->iter[u]++;
		if (h->used[a])
			continue;
		uint32_t v = g->adj[a], w = h->match_r[v];
		if (w == UINT32_MAX) {
			h->match_l[u] = a;
			h->match_r[v] = u;
			for (uint32_t i = top - 1; i-- > 0;) {
				h->match_l[h->stack[i]] = h->via[i];
				h->match_r[g->adj[h->via[i]]] = h->stack[i];
			}
			return true;
		}
		if (h->dist[w] == h->dist[u] + 1 && h->dist[w] != UINT32_MAX) {
			h->via[top - 1] = a;
			h->stack[top++] = w;
		}
	}
	return false;
}

/* The ports as a row-major n x d array (caller frees). */
static uint32_t *ref_ports(const struct graph *g, const struct port_map *prefer)
{
	uint32_t n = g->n, d = graph_outdeg(g, 0);
	uint8_t *used = calloc(g->m + 1, 1);
	uint32_t *reserved = calloc(g->m + 1, 4), *to = malloc((size_t)n * d * 4 + 4);
	uint32_t *buf = malloc((size_t)n * 7 * 4 + 4);
	struct ref_hk h = {g,		used,	     buf,	  buf + n,    buf + 2 * n,
			   buf + 3 * n, buf + 4 * n, buf + 5 * n, buf + 6 * n};

	for (uint32_t j = 0; prefer && j < prefer->d; j++)
		for (uint32_t u = 0; u < n; u++)
			for (uint32_t a = g->off[u]; a < g->off[u + 1]; a++)
				if (g->adj[a] == prefer->to[(size_t)j * n + u] && !reserved[a]) {
					reserved[a] = j + 1;
					break;
				}
	for (uint32_t j = 0; j < d; j++) {
		uint32_t matched = 0;

		memset(h.match_l, 0xff, n * 4);
		memset(h.match_r, 0xff, n * 4);
		for (int pass = 0; pass < 2; pass++)
			for (uint32_t u = 0; u < n; u++)
				for (uint32_t a = g->off[u];
				     h.match_l[u] == UINT32_MAX && a < g->off[u + 1]; a++)
					if ((pass ? reserved[a] == 0 : reserved[a] == j + 1) &&
					    !used[a] && h.match_r[g->adj[a]] == UINT32_MAX) {
						h.match_l[u] = a;
						h.match_r[g->adj[a]] = u;
						matched++;
					}
		while (matched < n && ref_bfs(&h)) {
			for (uint32_t u = 0; u < n; u++)
				h.iter[u] = g->off[u];
			for (uint32_t u = 0; u < n; u++)
				if (h.match_l[u] == UINT32_MAX && ref_dfs(&h, u))
					matched++;
		}
		assert_int_equal(matched, n);
		for (uint32_t u = 0; u < n; u++) {
			used[h.match_l[u]] = 1;
			to[(size_t)j * n + u] = g->adj[h.match_l[u]];
		}
	}
	free(used);
	free(reserved);
	free(buf);
	return to;
}

/* Entries of want (UINT32_MAX: none) that to (n x d, row-major) keeps. */
static uint32_t count_kept(const struct port_map *want, const uint32_t *to)
{
	uint32_t kept = 0;

	for (size_t k = 0; k < (size_t)want->n * want->d; k++)
		kept += want->to[k] != UINT32_MAX && to[k] == want->to[k];
	return kept;
}

/* topo_ports's ports are the every-arc scan's. With a preference (every
 * other entry of the reverse port order) topo_ports_prefer's are a
 * decomposition; *kept and *kept_ref count the preferred entries it and
 * the scan seeded with the preference keep (that seeding, which
 * topo_ports_prefer did before, lost them along augmenting paths). */
static void check_same_ports(const struct graph *g, uint32_t *kept, uint32_t *kept_ref)
{
	struct ofc_error err = {0};
	struct port_map pm, got, want;
	uint32_t *ref = ref_ports(g, NULL);

	assert_int_equal(topo_ports(g, &pm, &err), 0);
	assert_memory_equal(pm.to, ref, (size_t)g->m * 4);
	free(ref);
	want = (struct port_map){.n = pm.n, .d = pm.d, .to = malloc((size_t)g->m * 4 + 4)};
	for (uint32_t j = 0; j < pm.d; j++)
		for (uint32_t u = 0; u < pm.n; u++)
			want.to[(size_t)j * pm.n + u] =
			    (j + u) % 2 ? UINT32_MAX : pm.to[(size_t)(pm.d - 1 - j) * pm.n + u];
	ref = ref_ports(g, &want);
	assert_int_equal(topo_ports_prefer(g, &want, &got, &err), 0);
	check_ports(g, &got);
	check_ports_multiset(g, &got);
	*kept = count_kept(&want, got.to);
	*kept_ref = count_kept(&want, ref);
	free(ref);
	port_map_free(&got);
	port_map_free(&want);
	port_map_free(&pm);
}

/* Families, with parallel arcs and self-loops among them, and random
 * multigraphs whose parallel copies are spread over a node's ports. With a
 * preference, each family keeps at least what the seeded scan kept, and
 * the random multigraphs more in all (one may keep fewer: rounds that
 * each take the best port for themselves can leave a later port worse
 * off, as the scan's can). */
static void test_ports_as_every_arc_scan(void **state)
{
	static const char *const specs[] = {
	    "torus:8x8",
	    "torus:3x3x2",
	    "torus:2x2x2",
	    "genkautz:1024,4",
	    "genkautz:7,4",
	    "kautz:3,3",
	    "debruijn:3,3",
	    "hypercube:6",
	    "circulant:8:2,4",
	    "circulant:8:4",
	    "complete:9",
	    "degree(ring:5,3)",
	    "line^2(circulant:16:3,4)",
	    "bipartite:5",
	    "biring:2",
	};
	uint64_t sum = 0, sum_ref = 0;
	(void)state;

	for (size_t i = 0; i < sizeof(specs) / sizeof(specs[0]); i++) {
		struct graph *g = build(specs[i]);
		uint32_t kept, kept_ref;

		check_same_ports(g, &kept, &kept_ref);
		if (kept < kept_ref)
			fail_msg("%s: %u preferred ports kept, the seeded scan %u", specs[i], kept,
				 kept_ref);
		graph_free(g);
	}
	srand(34);
	for (int round = 0; round < 300; round++) {
		uint32_t n = 2 + (uint32_t)rand() % 12, d = 1 + (uint32_t)rand() % 16;
		uint32_t *tails = malloc((size_t)n * d * 4), *heads = malloc((size_t)n * d * 4);

		/* d random permutations of few nodes: many parallel arcs */
		for (uint32_t j = 0; j < d; j++) {
			for (uint32_t u = 0; u < n; u++)
				heads[(size_t)u * d + j] = u;
			for (uint32_t u = n - 1; u > 0; u--) {
				uint32_t k = (uint32_t)rand() % (u + 1), t;

				t = heads[(size_t)u * d + j];
				heads[(size_t)u * d + j] = heads[(size_t)k * d + j];
				heads[(size_t)k * d + j] = t;
			}
		}
		for (uint32_t u = 0; u < n; u++)
			for (uint32_t j = 0; j < d; j++) {
				uint32_t k = (uint32_t)rand() % (j + 1),
					 t = heads[(size_t)u * d + j];

				tails[(size_t)u * d + j] = u;
				heads[(size_t)u * d + j] = heads[(size_t)u * d + k];
				heads[(size_t)u * d + k] = t;
			}
		struct graph *g = graph_from_arcs(n, n * d, tails, heads, "random");
		uint32_t kept, kept_ref;

		check_same_ports(g, &kept, &kept_ref);
		sum += kept;
		sum_ref += kept_ref;
		graph_free(g);
		free(tails);
		free(heads);
	}
	if (sum <= sum_ref)
		fail_msg("random multigraphs: %llu preferred ports kept, the seeded scan %llu",
			 (unsigned long long)sum, (unsigned long long)sum_ref);
}

/* Parallel links as an edge list repeats them: side by side (2 nodes) or
 * one topology listed again and again (a triangle: each node's copies
 * alternate between its two neighbours). A round looks at each node and
 * each pair (u, v) a few times, not at every copy: the work stays within a
 * few times the arcs at any k (3 m and 5.2 m here), where a scan of every
 * copy grows with m^2 (15.7 M links did not finish). */
static void test_ports_parallel_links(void **state)
{
	const uint32_t k = 4000;
	uint32_t *tails = malloc(6 * k * 4), *heads = malloc(6 * k * 4);
	(void)state;

	for (int shape = 0; shape < 2; shape++) {
		uint32_t n = shape ? 3 : 2, m = 0;
		struct ofc_error err = {0};
		struct port_map pm;
		uint64_t work = 0;

		for (uint32_t i = 0; i < k; i++)
			for (uint32_t u = 0; u < n; u++) {
				uint32_t v = (u + 1) % n;

				tails[m] = u, heads[m++] = v;
				if (n > 2)
					tails[m] = v, heads[m++] = u;
			}
		struct graph *g = graph_from_arcs(n, m, tails, heads, "parallel");
		assert_int_equal(topo_ports_work(g, &pm, &work, &err), 0);
		check_ports(g, &pm);
		check_ports_multiset(g, &pm);
		assert_true(work <= 8ull * m);
		port_map_free(&pm);
		graph_free(g);
	}
	free(tails);
	free(heads);
}

static void test_ports_not_regular(void **state)
{
	uint32_t tails[] = {0, 0, 1}, heads[] = {1, 2, 2};
	struct ofc_error err = {0};
	struct port_map pm;
	(void)state;

	struct graph *g = graph_from_arcs(3, 3, tails, heads, "odd");
	assert_int_equal(topo_ports(g, &pm, &err), -1);
	assert_non_null(strstr(err.msg, "not regular"));
	graph_free(g);
}

static void test_canonical_specs(void **state)
{
	static const char *const in[][2] = {
	    {"torus:8x8", "torus:8x8"},
	    {"line^1(ring:4)", "line(ring:4)"},
	    {"degree(circulant:16:3,4,2)", "degree(circulant:16:3,4,2)"},
	    {"product( ring:4 , ring:8 )", "product(ring:4,ring:8)"},
	    {"power(complete:3,2)", "power(complete:3,2)"},
	    {"line^2(bipartite:2)", "line^2(bipartite:2)"},
	};
	(void)state;

	for (size_t i = 0; i < sizeof(in) / sizeof(in[0]); i++) {
		struct graph *g = build(in[i][0]);

		assert_string_equal(g->spec, in[i][1]);
		graph_free(g);
	}
}

static void test_spec_errors(void **state)
{
	static const struct {
		const char *spec;
		unsigned col;
		const char *msg;
	} bad[] = {
	    {"torus:8xq", 9, "expected dimensions like 8x8"},
	    {"ring:1", 6, "a ring needs at least 2 nodes"},
	    {"hypercube:0", 11, "hypercube dimension must be 1..22"},
	    {"product(ring:4)", 15, "product needs at least two topologies"},
	    {"line^9(ring:4)", 6, "line^K needs K in 1..8"},
	    {"line(ring:4)x", 13, "unexpected text after ')'"},
	    {"degree(debruijn:2,3,2)", 1,
	     "degree expansion needs a graph without self-loops (node 0 has one)"},
	    {"line^8(complete:50)", 1, "the line graph would have"},
	    {"hamming:2", 9, "hamming takes n,q"},
	    {"kautz:0,3", 7, "kautz degree d must be 1..254"},
	    {"debruijn:1,3", 10, "debruijn degree d must be at least 2"},
	    {"circulant:16", 11, "circulant takes N:a,b,... (at least one offset)"},
	    {"((((", 1, "expected a topology name such as torus:8x8"},
	    {"union(ring:4)", 13, "union needs at least two topologies"},
	    {"union(ring:4,ring:5)", 1, "union needs topologies on the same nodes (4 and 5 nodes)"},
	    {"empty:0", 7, "empty needs at least 1 node"},
	    {"ports:4:BCDA.ABCA", 17, "port 1: node 0 is reached twice"},
	    {"ports:4:BCDA.ABC", 17, "port 1 has 3 of its 4 nodes (each 1 character)"},
	    {"ports:4:BCDE", 12, "port 0 of node 3: node 4 is not below 4"},
	    {"ports:4:BC*A", 11, "port 0: '*' is not a node id's digit"},
	    {"ports:4:BCDAB", 13, "port 0 has more than its 4 nodes"},
	    {"ports:x", 7, "expected the node count after 'ports:'"},
	    {"ports:0:", 7, "ports: the node count must be 1.."},
	    {"ports 4", 6, "expected ':' after 'ports'"},
	};
	(void)state;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct ofc_error err = {0};
		struct graph *g = NULL;

		assert_int_equal(topo_build(bad[i].spec, &g, &err), -1);
		assert_null(g);
		assert_int_equal(err.code, OFC_E_INPUT);
		if (err.col != bad[i].col || !strstr(err.msg, bad[i].msg))
			fail_msg("%s: column %u '%s', want column %u '%s'", bad[i].spec, err.col,
				 err.msg, bad[i].col, bad[i].msg);
	}
}

/* Failed links: U-V takes out both arcs of a bidirectional link,
 * U>V one arc; the rest of the graph is untouched; bad words are refused
 * with the column of the word. */
static void test_fail_links(void **state)
{
	struct graph *g = NULL, *d = NULL;
	struct ofc_error err = {0};
	(void)state;

	assert_int_equal(topo_build("torus:8x8", &g, &err), 0);
	assert_int_equal(topo_fail_links(g, "0-1, 5-6 9>10", &d, &err), 0);
	assert_int_equal(d->n, 64);
	assert_int_equal(d->m, g->m - 5);
	assert_string_equal(d->spec, "torus:8x8 without 0-1,5-6,9>10");
	assert_false(d->vertex_transitive);
	/* arc multiset: g's less exactly those five */
	const uint32_t gone[][2] = {{0, 1}, {1, 0}, {5, 6}, {6, 5}, {9, 10}};
	for (uint32_t u = 0; u < 64; u++)
		for (uint32_t a = g->off[u]; a < g->off[u + 1]; a++) {
			uint32_t v = g->adj[a], in_d = 0;
			bool removed = false;

			for (size_t i = 0; i < ARRAY_SIZE(gone); i++)
				removed |= gone[i][0] == u && gone[i][1] == v;
			for (uint32_t b = d->off[u]; b < d->off[u + 1]; b++)
				in_d += d->adj[b] == v;
			assert_int_equal(in_d, removed ? 0 : 1);
		}
	graph_free(d);

	const struct {
		const char *list;
		unsigned col;
		const char *msg;
	} bad[] = {
	    {"0-1,0-1", 5, "no such link"}, /* named twice */
	    {"0-9", 1, "no such link"},	    {"0-64", 1, "nodes 0..63"},	 {"0-1,x", 5, "not a link"},
	    {"3-3", 1, "two nodes"},	    {"  ", 0, "no failed link"},
	};
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		memset(&err, 0, sizeof(err));
		assert_int_equal(topo_fail_links(g, bad[i].list, &d, &err), -1);
		assert_null(d);
		if (!strstr(err.msg, bad[i].msg))
			fail_msg("'%s': %s", bad[i].list, err.msg);
		if (bad[i].col)
			assert_int_equal(err.col, bad[i].col);
		assert_int_equal(err.code, OFC_E_INPUT);
	}
	graph_free(g);
}

/* A bare node in a failure list fails the whole node: every arc
 * to or from it goes, it stays (so numbers keep their meaning), dead[]
 * marks it; topo_survivors renumbers the others keeping each node's arcs in
 * order (so ports mean the same); topo_fail_links refuses a node. */
static void test_fail_nodes(void **state)
{
	struct graph *g = NULL, *d = NULL, *s;
	struct ofc_error err = {0};
	uint8_t dead[16] = {0};
	uint32_t *keep, nkeep;
	(void)state;

	assert_int_equal(topo_build("torus:4x4", &g, &err), 0);
	assert_int_equal(topo_fail_items(g, "5,0-1", &d, dead, &err), 0);
	assert_string_equal(d->spec, "torus:4x4 without 5,0-1");
	assert_int_equal(d->n, 16);
	/* 8 arcs of node 5 (4 out, 4 in) and the link 0-1 (2 arcs) */
	assert_int_equal(d->m, g->m - 10);
	assert_int_equal(graph_outdeg(d, 5), 0);
	for (uint32_t a = 0; a < d->m; a++)
		assert_int_not_equal(d->adj[a], 5);
	for (uint32_t u = 0; u < 16; u++)
		assert_int_equal(dead[u], u == 5);

	s = topo_survivors(d, dead, d->spec, &keep, &nkeep);
	assert_int_equal(nkeep, 15);
	assert_int_equal(s->n, 15);
	assert_int_equal(s->m, d->m);
	assert_int_equal(keep[4], 4);
	assert_int_equal(keep[5], 6);
	for (uint32_t i = 0; i < s->n; i++) {
		assert_int_equal(graph_outdeg(s, i), graph_outdeg(d, keep[i]));
		for (uint32_t k = 0; k < graph_outdeg(s, i); k++)
			assert_int_equal(keep[graph_out(s, i)[k]], graph_out(d, keep[i])[k]);
	}
	graph_free(s);
	free(keep);
	graph_free(d);

	const struct {
		const char *list;
		unsigned col;
		const char *msg;
	} bad[] = {
	    {"5,5", 3, "failed node 5 is named twice"},
	    {"0-1,16", 5, "failed node 16: torus:4x4 has nodes 0..15"},
	    {"x", 1, "or U for a node"},
	    {"", 0, "no failure given"},
	};
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		memset(&err, 0, sizeof(err));
		memset(dead, 0, sizeof(dead));
		assert_int_equal(topo_fail_items(g, bad[i].list, &d, dead, &err), -1);
		assert_null(d);
		if (!strstr(err.msg, bad[i].msg))
			fail_msg("'%s': %s", bad[i].list, err.msg);
		assert_int_equal(err.col, bad[i].col);
	}
	memset(&err, 0, sizeof(err));
	assert_int_equal(topo_fail_links(g, "0-1,5", &d, &err), -1);
	assert_non_null(strstr(err.msg, "'5' is not a link"));
	assert_int_equal(err.col, 5);
	graph_free(g);
}

/* edges:FILE builds the graph the file lists; errors carry FILE:LINE:COL. */
/* topo_torus_dims: a plain torus gives its dimensions; a product, a line
 * graph of a torus, another family and no tree give 0; and a picture's
 * layout (topo_draw_of) finds the same grid. */
static void test_torus_dims(void **state)
{
	(void)state;
	static const struct {
		const char *spec;
		uint32_t k, d0, d1;
	} c[] = {{"torus:8x4", 2, 8, 4},
		 {"torus:4x4x2", 3, 4, 4},
		 {"hypercube:4", 0, 0, 0},
		 {"line(torus:4x4)", 0, 0, 0},
		 {"product(ring:4,ring:4)", 0, 0, 0},
		 {"circulant:16:1,4", 0, 0, 0}};
	struct ofc_error err = {0};

	assert_int_equal(topo_torus_dims(NULL, NULL), 0);
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		struct topo_tree *t = NULL;
		const uint32_t *dims = NULL;

		struct graph *g = NULL;
		struct topo_draw d;

		assert_int_equal(topo_build_tree(c[i].spec, &g, &t, &err), 0);
		assert_int_equal(topo_torus_dims(t, &dims), c[i].k);
		assert_int_equal(topo_torus_dims(t, NULL), c[i].k);
		/* a picture's grid is the same test's, on the graph's spec */
		topo_draw_of(g, &d);
		assert_int_equal(d.k, c[i].k);
		if (c[i].k) {
			assert_non_null(dims);
			assert_int_equal(dims[0], c[i].d0);
			assert_int_equal(dims[1], c[i].d1);
			assert_int_equal(d.dims[0], c[i].d0);
			assert_int_equal(d.dims[1], c[i].d1);
		}
		graph_free(g);
		topo_tree_free(t);
	}
}

static void test_edges_file(void **state)
{
	char path[] = "/tmp/ofc-edges-XXXXXX";
	int fd = mkstemp(path);
	struct graph *g = NULL;
	struct ofc_error err = {0};
	char spec[64];
	(void)state;

	assert_true(fd >= 0);
	const char text[] = "# a ring of 4 with a chord\nnodes 5\n0-1 1-2\n2-3,3-0\n0>2 4-0\n";
	assert_int_equal(write(fd, text, sizeof(text) - 1), (ssize_t)sizeof(text) - 1);
	close(fd);
	snprintf(spec, sizeof(spec), "edges:%s", path);
	assert_int_equal(topo_build(spec, &g, &err), 0);
	assert_int_equal(g->n, 5);
	assert_int_equal(g->m, 11);
	assert_string_equal(g->spec, spec);
	uint32_t out0[] = {1, 3, 2, 4};
	assert_int_equal(graph_outdeg(g, 0), 4);
	assert_memory_equal(graph_out(g, 0), out0, sizeof(out0));
	graph_free(g);

	fd = open(path, O_WRONLY | O_TRUNC);
	const char badtext[] = "0-1\n1-2 2+3\n";
	assert_int_equal(write(fd, badtext, sizeof(badtext) - 1), (ssize_t)sizeof(badtext) - 1);
	close(fd);
	assert_int_equal(topo_build(spec, &g, &err), -1);
	assert_string_equal(err.file, path);
	assert_int_equal(err.line, 2);
	assert_int_equal(err.col, 5);
	assert_non_null(strstr(err.msg, "'2+3' is not a link"));
	unlink(path);
	assert_int_equal(topo_build(spec, &g, &err), -1);
	assert_int_equal(err.code, OFC_E_INPUT);
}

/* write text into dir/name. */
static void put(const char *dir, const char *name, const char *text)
{
	char path[512];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

/* A spec built under a policy: expect refusal with why in the message,
 * and never a byte of the secret. */
static void refused(const struct topo_files *tf, const char *spec, const char *why)
{
	struct graph *g = NULL;
	struct ofc_error err = {0};

	if (topo_build_in(spec, tf, &g, &err) != -1)
		fail_msg("'%s' was read", spec);
	assert_null(g);
	if (!strstr(err.msg, why))
		fail_msg("'%s': %s (want '%s')", spec, err.msg, why);
	assert_null(strstr(err.msg, "SECRET"));
}

/* topo_build_in: a daemon's client names edge lists only
 * beneath the operator's directory, and errors never show their bytes. */
static void test_edges_policy(void **state)
{
	char root[] = "/tmp/ofc-policy-XXXXXX", dir[600], spec[700];
	struct topo_files none = {.dirfd = -1, .why = "ofcd --topology-dir"};
	struct graph *g = NULL;
	struct ofc_error err = {0};
	(void)state;

	assert_non_null(mkdtemp(root));
	snprintf(dir, sizeof(dir), "%s/topo", root);
	assert_int_equal(mkdir(dir, 0755), 0);
	put(root, "secret", "SECRET-WORD 0-1\n");
	put(dir, "ring.edges", "0-1 1-2 2-0\n");
	put(dir, "bad.edges", "0-1\nSECRET-WORD\n");
	put(dir, "-", "0-1 1-0\n");
	snprintf(spec, sizeof(spec), "%s/secret", root);
	char link[640];
	snprintf(link, sizeof(link), "%s/link.edges", dir);
	assert_int_equal(symlink(spec, link), 0);
	snprintf(link, sizeof(link), "%s/env.edges", dir);
	assert_int_equal(symlink("/proc/self/environ", link), 0);
	snprintf(link, sizeof(link), "%s/fifo.edges", dir);
	assert_int_equal(mkfifo(link, 0600), 0);

	/* No directory: no file at all, and "-" is not stdin. */
	snprintf(spec, sizeof(spec), "edges:%s/secret", root);
	refused(&none, spec,
		"edge-list files are not read here (no ofcd --topology-dir was given)");
	refused(&none, "edges:-", "not read here");
	refused(&none, "product(ring:3,edges:ring.edges)", "not read here");

	struct topo_files tf = {.dirfd = open(dir, O_PATH | O_DIRECTORY), .dir = dir};
	assert_true(tf.dirfd >= 0);
	refused(&tf, spec, "edge-list files are read only from");
	refused(&tf, "edges:../secret", "this name leaves it");
	refused(&tf, "edges:link.edges", "this name leaves it");
	refused(&tf, "edges:env.edges", "this name leaves it");
	refused(&tf, "edges:/proc/self/environ", "read only from");
	refused(&tf, "edges:fifo.edges", "is not a regular file");
	refused(&tf, "edges:.", "is not a regular file");
	snprintf(spec, sizeof(spec), "edges:%s/../secret", dir);
	refused(&tf, spec, "this name leaves it");

	/* An error inside a file: its position, not its bytes. */
	assert_int_equal(topo_build_in("edges:bad.edges", &tf, &g, &err), -1);
	assert_int_equal(err.line, 2);
	assert_int_equal(err.col, 1);
	assert_null(strstr(err.msg, "SECRET"));
	assert_non_null(strstr(err.msg, "is not a link"));

	/* Inside: read, and named by its absolute path from then on, by a
	 * relative name and an absolute one alike; "-" is a file there. */
	char want[700];
	snprintf(want, sizeof(want), "edges:%s/ring.edges", dir);
	assert_int_equal(topo_build_in("edges:ring.edges", &tf, &g, &err), 0);
	assert_int_equal(g->n, 3);
	assert_string_equal(g->spec, want);
	graph_free(g);
	assert_int_equal(topo_build_in(want, &tf, &g, &err), 0);
	assert_string_equal(g->spec, want);
	graph_free(g);
	assert_int_equal(topo_build_in("product(edges:ring.edges,ring:2)", &tf, &g, &err), 0);
	assert_int_equal(g->n, 6);
	snprintf(want, sizeof(want), "product(edges:%s/ring.edges,ring:2)", dir);
	assert_string_equal(g->spec, want);
	graph_free(g);
	assert_int_equal(topo_build_in("edges:-", &tf, &g, &err), 0);
	assert_int_equal(g->n, 2);
	graph_free(g);
	close(tf.dirfd);

	/* Without a policy (a command's own user) errors quote the word, its
	 * control bytes escaped. */
	put(dir, "esc.edges", "0-1 \x1b[2Jx\n");
	snprintf(spec, sizeof(spec), "edges:%s/esc.edges", dir);
	assert_int_equal(topo_build(spec, &g, &err), -1);
	assert_non_null(strstr(err.msg, "'\\x1b[2Jx' is not a link"));
	assert_null(strchr(err.msg, '\x1b'));
	char cmd[700];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_known_facts),
	    cmocka_unit_test(test_moore),
	    cmocka_unit_test(test_genkautz_near_moore),
	    cmocka_unit_test(test_kautz_matches_genkautz),
	    cmocka_unit_test(test_diameter_against_bfs),
	    cmocka_unit_test(test_eccentricities),
	    cmocka_unit_test(test_not_connected),
	    cmocka_unit_test(test_components),
	    cmocka_unit_test(test_symmetry),
	    cmocka_unit_test(test_reverse_and_transpose),
	    cmocka_unit_test(test_ports_families),
	    cmocka_unit_test(test_ports_keep_generators),
	    cmocka_unit_test(test_ports_random_multigraphs),
	    cmocka_unit_test(test_ports_prefer),
	    cmocka_unit_test(test_ports_spec_round_trip),
	    cmocka_unit_test(test_union_of_placed_groups),
	    cmocka_unit_test(test_ports_not_regular),
	    cmocka_unit_test(test_ports_as_every_arc_scan),
	    cmocka_unit_test(test_ports_parallel_links),
	    cmocka_unit_test(test_canonical_specs),
	    cmocka_unit_test(test_spec_errors),
	    cmocka_unit_test(test_fail_links),
	    cmocka_unit_test(test_fail_nodes),
	    cmocka_unit_test(test_torus_dims),
	    cmocka_unit_test(test_edges_file),
	    cmocka_unit_test(test_edges_policy),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
