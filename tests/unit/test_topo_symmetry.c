/* topo: automorphism groups through nauty, held to brute force on small
 * and rigid graphs, generalized Kautz's known groups, the size cap, the
 * generators under a clock, multigraphs and isomorphisms between shuffled
 * copies, and the request's deadline. */
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

/* A rigid digraph: 2 in, 2 out at every node (so colour refinement alone
 * splits nothing), automorphism group trivial (checked by brute force). */
static struct graph *rigid7(void)
{
	static const uint32_t t[] = {0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6};
	static const uint32_t h[] = {2, 3, 4, 5, 0, 6, 1, 4, 3, 6, 0, 1, 2, 5};

	return graph_from_arcs(7, 14, t, h, "rigid7");
}

/* Arcs u -> v counted (n <= 8). */
static void arc_counts(const struct graph *g, uint32_t *cnt)
{
	memset(cnt, 0, (size_t)g->n * g->n * sizeof(uint32_t));
	for (uint32_t u = 0; u < g->n; u++)
		for (uint32_t a = g->off[u]; a < g->off[u + 1]; a++)
			cnt[u * g->n + g->adj[a]]++;
}

/* |Aut(g)| by trying all n! node permutations (n <= 8). */
static uint32_t brute_order(const struct graph *g)
{
	uint32_t n = g->n, p[8], cnt[64], found = 0;
	bool used[8] = {0};
	uint32_t depth = 0;

	arc_counts(g, cnt);
	/* Iterative permutation walk: p[0..depth) fixed. */
	p[0] = UINT32_MAX;
	while (true) {
		uint32_t v = p[depth] + 1;

		if (depth < n && p[depth] != UINT32_MAX)
			used[p[depth]] = false;
		if (p[depth] == UINT32_MAX)
			v = 0;
		while (v < n && used[v])
			v++;
		if (v == n) {
			if (depth == 0)
				break;
			depth--;
			continue;
		}
		p[depth] = v;
		used[v] = true;
		if (depth + 1 < n) {
			p[++depth] = UINT32_MAX;
			continue;
		}
		bool ok = true;
		for (uint32_t x = 0; x < n * n && ok; x++)
			ok = cnt[x] == cnt[p[x / n] * n + p[x % n]];
		found += ok;
	}
	return found;
}

/* Every listed element maps nodes and arcs consistently; identity first. */
static void check_group(const struct graph *g, const struct graph_group *grp)
{
	uint32_t *tail = malloc(g->m * sizeof(uint32_t));

	for (uint32_t u = 0; u < g->n; u++)
		for (uint32_t a = g->off[u]; a < g->off[u + 1]; a++)
			tail[a] = u;
	for (uint32_t u = 0; u < g->n; u++)
		assert_int_equal(grp->node[u], u);
	for (uint32_t i = 0; i < grp->order; i++) {
		const uint32_t *hn = grp->node + (size_t)i * g->n,
			       *ha = grp->arc + (size_t)i * g->m;
		bool *hit = calloc(g->m, sizeof(bool));

		for (uint32_t a = 0; a < g->m; a++) {
			assert_int_equal(tail[ha[a]], hn[tail[a]]);
			assert_int_equal(g->adj[ha[a]], hn[g->adj[a]]);
			assert_false(hit[ha[a]]);
			hit[ha[a]] = true;
		}
		for (uint32_t u = 0; u < g->n; u++) /* orbits are unions of images */
			assert_int_equal(grp->orbit[hn[u]], grp->orbit[u]);
		free(hit);
	}
	free(tail);
}

static void test_automorphisms_brute(void **state)
{
	static const char *const specs[] = {
	    "genkautz:8,3", "genkautz:7,2",	 "genkautz:6,2",    "hypercube:3", "kautz:2,1",
	    "debruijn:2,3", "line(bipartite:2)", "circulant:8:1,3", "ring:5",	   "rigid7"};
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(specs); i++) {
		struct graph *g = strcmp(specs[i], "rigid7") ? build(specs[i]) : rigid7();
		struct graph_group grp;
		uint32_t want = brute_order(g);

		graph_automorphisms(g, 100000, NULL, &grp);
		check_group(g, &grp);
		if (!grp.complete || grp.full_order != want || grp.order != want)
			fail_msg("%s: found %u (full %g, complete %d), brute force %u", specs[i],
				 grp.order, grp.full_order, grp.complete, want);
		graph_group_free(&grp);
		graph_free(g);
	}
}

/* Generalized Kautz (Imase-Itoh, x -> -d x - a) always has phi(x) = -x - 1:
 * phi(-d x - a) = d x + a - 1 = -d phi(x) - (d + 1 - a). GK(64, 4) is the
 * de Bruijn graph B(4, 3), whose group is S_4 on the symbols: 24 elements,
 * 5 node orbits (aaa, aab, aba, abb, abc) and 15 arc orbits (the set
 * partitions of 4 positions). GK(27, 6) has phi only. */
static void test_automorphisms_genkautz(void **state)
{
	static const struct {
		const char *spec;
		uint32_t order, norbits, narc;
	} t[] = {{"genkautz:64,4", 24, 5, 15},
		 {"genkautz:27,6", 2, 14, 81},
		 {"genkautz:80,4", 120, 2, 5},
		 {"genkautz:100,4", 10, 10, 40}};
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(t); i++) {
		struct graph *g = build(t[i].spec);
		struct graph_group grp;
		bool phi = false;

		graph_automorphisms(g, 100000, NULL, &grp);
		check_group(g, &grp);
		if (grp.order != t[i].order || grp.norbits != t[i].norbits ||
		    grp.narc_orbits != t[i].narc || !grp.complete)
			fail_msg("%s: order %u, %u node and %u arc orbits", t[i].spec, grp.order,
				 grp.norbits, grp.narc_orbits);
		for (uint32_t k = 0; k < grp.order && !phi; k++) {
			phi = true;
			for (uint32_t x = 0; x < g->n && phi; x++)
				phi = grp.node[(size_t)k * g->n + x] == (2 * g->n - x - 1) % g->n;
		}
		assert_true(phi);
		graph_group_free(&grp);
		graph_free(g);
	}
}

/* A cap on the listed elements keeps a subgroup, and says so. */
static void test_automorphisms_cap(void **state)
{
	struct graph *g = build("torus:4x4");
	struct graph_group grp;
	(void)state;

	graph_automorphisms(g, 100000, NULL, &grp);
	assert_int_equal(grp.order, 384); /* C4 x C4 = Q4: 2^4 4! */
	assert_true(grp.complete);
	graph_group_free(&grp);
	graph_automorphisms(g, 50, NULL, &grp);
	check_group(g, &grp);
	assert_true(grp.order > 1 && grp.order <= 50 && 384 % grp.order == 0);
	assert_false(grp.complete);
	assert_true(grp.full_order == 384);
	graph_group_free(&grp);
	graph_free(g);
}

/* The group the generators make, by node maps, breadth first (at most
 * max elements of n points; returns how many). */
static uint32_t generated_order(const uint32_t *gens, uint32_t ngens, uint32_t n, uint32_t max)
{
	uint32_t *el = malloc((size_t)max * n * sizeof(uint32_t)), cnt = 1;

	for (uint32_t u = 0; u < n; u++)
		el[u] = u;
	for (uint32_t i = 0; i < cnt; i++)
		for (uint32_t k = 0; k < ngens && cnt < max; k++) {
			uint32_t *p = el + (size_t)cnt * n;
			bool seen = false;

			for (uint32_t u = 0; u < n; u++)
				p[u] = gens[(size_t)k * n + el[(size_t)i * n + u]];
			for (uint32_t j = 0; j < cnt && !seen; j++)
				seen = !memcmp(el + (size_t)j * n, p, n * sizeof(uint32_t));
			cnt += !seen;
		}
	free(el);
	return cnt;
}

/* An automorphism as node and arc maps (ends kept, arcs a bijection). */
static void check_map(const struct graph *g, const uint32_t *hn, const uint32_t *ha)
{
	bool *hit = calloc(g->m + 1, sizeof(bool));

	for (uint32_t u = 0; u < g->n; u++)
		for (uint32_t a = g->off[u]; a < g->off[u + 1]; a++) {
			assert_true(ha[a] >= g->off[hn[u]] && ha[a] < g->off[hn[u] + 1]);
			assert_int_equal(g->adj[ha[a]], hn[g->adj[a]]);
			assert_false(hit[ha[a]]);
			hit[ha[a]] = true;
		}
	free(hit);
}

/* The strong generators are kept: automorphisms that generate
 * the whole group when the listing is capped (torus:4x4, 384 elements from
 * a listing of 50). A clock past its deadline stops the search at once:
 * the identity alone, timed_out, not complete. */
static void test_automorphisms_generators_clock(void **state)
{
	struct graph *g = build("torus:4x4");
	struct graph_group grp;
	double now = now_seconds();
	struct ofc_clock past = {.start = now - 2, .deadline = now - 1, .limit = 1};
	(void)state;

	graph_automorphisms(g, 50, NULL, &grp);
	assert_true(grp.ngens > 0 && grp.order <= 50);
	for (uint32_t k = 0; k < grp.ngens; k++)
		check_map(g, grp.gen_node + (size_t)k * g->n, grp.gen_arc + (size_t)k * g->m);
	assert_int_equal(generated_order(grp.gen_node, grp.ngens, g->n, 1000), 384);
	assert_false(grp.timed_out);
	graph_group_free(&grp);

	graph_automorphisms(g, 100000, &past, &grp);
	assert_true(grp.timed_out);
	assert_false(grp.complete);
	assert_int_equal(grp.order, 1);
	assert_int_equal(grp.ngens, 0);
	check_group(g, &grp);
	graph_group_free(&grp);
	graph_free(g);
}

/* A hub with two "GPUs" (a self-loop each) and k interchangeable leaves:
 * Aut = S_2 x S_k.
 * Along a base that starts with the GPUs, only their levels are searched:
 * the generators swap the GPUs (S_2) and none is a permutation of leaves
 * alone, and the 2 x k! elements are never listed; the whole search would
 * be k levels of refinements deep (80 leaves, 122 s). */
static void test_automorphism_gens_first(void **state)
{
	enum { K = 200 };
	uint32_t t[2 * (K + 2) + 2], h[2 * (K + 2) + 2], m = 0, gpus[2] = {1, 2};
	struct graph_group grp;
	(void)state;

	for (uint32_t v = 1; v < K + 3; v++) { /* hub 0; GPUs 1, 2; leaves */
		t[m] = 0, h[m++] = v;
		t[m] = v, h[m++] = 0;
	}
	for (uint32_t v = 1; v < 3; v++) /* a GPU's label: a self-loop */
		t[m] = v, h[m++] = v;
	struct graph *g = graph_from_arcs(K + 3, m, t, h, "hub");

	graph_automorphism_gens(g, gpus, 2, NULL, &grp);
	assert_int_equal(grp.order, 1);
	assert_true(grp.ngens >= 1);
	assert_false(grp.complete); /* the leaves' S_K left out */
	for (uint32_t k = 0; k < grp.ngens; k++) {
		const uint32_t *hn = grp.gen_node + (size_t)k * g->n;

		check_map(g, hn, grp.gen_arc + (size_t)k * g->m);
		assert_true(hn[1] == 2 && hn[2] == 1);
	}
	graph_group_free(&grp);
	graph_free(g);
}

/* nauty takes simple digraphs: self-loops become colours and pairs of a
 * multiplicity other than the least a vertex of their own (topo/symmetry.c,
 * with its own reasons). On random multigraphs of up to 7 nodes, loops and 1-3
 * parallel arcs a pair, the group has the order trying every permutation
 * finds, and a shuffled copy is recognised with a map that keeps every
 * arc count; a copy with one arc moved is recognised exactly when some
 * permutation makes it equal. */
static bool brute_iso(const struct graph *a, const struct graph *b)
{
	uint32_t n = a->n, ca[64], cb[64], p[8];

	arc_counts(a, ca);
	arc_counts(b, cb);
	for (uint32_t i = 0; i < n; i++)
		p[i] = i;
	for (;;) {
		bool ok = true;

		for (uint32_t x = 0; x < n * n && ok; x++)
			ok = ca[x] == cb[p[x / n] * n + p[x % n]];
		if (ok)
			return true;
		/* next permutation (lexicographic) */
		int i = (int)n - 2;
		while (i >= 0 && p[i] > p[i + 1])
			i--;
		if (i < 0)
			return false;
		int j = (int)n - 1;
		while (p[j] < p[i])
			j--;
		uint32_t t = p[i];
		p[i] = p[j], p[j] = t;
		for (int l = i + 1, r = (int)n - 1; l < r; l++, r--)
			t = p[l], p[l] = p[r], p[r] = t;
	}
}

static void test_automorphisms_multigraph(void **state)
{
	uint64_t seed = 38;
	(void)state;
	for (int round = 0; round < 300; round++) {
		uint32_t t[64], h[64], m = 0, n, perm[8], map[8], ca[64], cb[64];

		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		n = 3 + (uint32_t)(seed >> 40) % 5;
		for (uint32_t u = 0; u < n; u++)
			for (uint32_t v = 0; v < n; v++) {
				seed = seed * 6364136223846793005ull + 1442695040888963407ull;
				/* mostly none or one arc, some two or three */
				uint32_t k = (uint32_t)(seed >> 59) % 8;
				k = k < 4 ? 0 : k < 6 ? 1 : k - 4;
				for (uint32_t i = 0; i < k && m < 60; i++)
					t[m] = u, h[m++] = v;
			}
		if (m == 0)
			continue;
		struct graph *g = graph_from_arcs(n, m, t, h, "multi");
		struct graph_group grp;

		graph_automorphisms(g, 100000, NULL, &grp);
		check_group(g, &grp);
		if (!grp.complete || grp.order != brute_order(g))
			fail_msg("round %d: order %u, brute force %u", round, grp.order,
				 brute_order(g));
		graph_group_free(&grp);

		/* a shuffled copy, and one with an arc moved */
		for (uint32_t i = 0; i < n; i++)
			perm[i] = i;
		for (uint32_t i = n; i > 1; i--) {
			seed = seed * 6364136223846793005ull + 1442695040888963407ull;
			uint32_t k = (uint32_t)((seed >> 33) % i), x = perm[i - 1];
			perm[i - 1] = perm[k], perm[k] = x;
		}
		uint32_t t2[64], h2[64];
		for (uint32_t a = 0; a < m; a++)
			t2[a] = perm[t[a]], h2[a] = perm[h[a]];
		struct graph *c = graph_from_arcs(n, m, t2, h2, "copy");
		assert_true(graph_isomorphism(g, c, 0, map));
		arc_counts(g, ca);
		arc_counts(c, cb);
		for (uint32_t x = 0; x < n * n; x++)
			assert_int_equal(ca[x], cb[map[x / n] * n + map[x % n]]);
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		h2[(seed >> 33) % m] = (uint32_t)(seed >> 13) % n;
		struct graph *d = graph_from_arcs(n, m, t2, h2, "moved");
		assert_int_equal(graph_isomorphism(g, d, 0, map), brute_iso(g, d));
		graph_free(d);
		graph_free(c);
		graph_free(g);
	}
}

/* A deadline inside nauty's search stops it there (the kill request its
 * node callback sets): a 5,120-node Kautz graph's generators take tens of
 * milliseconds, so 0.1 ms finds at most a subgroup, said so; its
 * isomorphism with a copy is not claimed. */
static void test_automorphisms_deadline(void **state)
{
	struct graph *g = build("kautz:4,5");
	struct ofc_clock soon = {.start = now_seconds()};
	struct graph_group grp;
	uint32_t *map = malloc(g->n * sizeof(uint32_t));
	(void)state;

	soon.deadline = now_seconds() + 1e-4;
	graph_automorphisms(g, 1000, &soon, &grp);
	assert_true(grp.timed_out);
	assert_false(grp.complete);
	check_group(g, &grp);
	for (uint32_t k = 0; k < grp.ngens; k++)
		check_map(g, grp.gen_node + (size_t)k * g->n, grp.gen_arc + (size_t)k * g->m);
	graph_group_free(&grp);
	assert_false(graph_isomorphism(g, g, now_seconds() + 1e-4, map));
	/* and with time, both are found */
	graph_automorphisms(g, 1000, NULL, &grp);
	assert_int_equal(grp.order, 120);
	assert_true(grp.complete && !grp.timed_out);
	graph_group_free(&grp);
	assert_true(graph_isomorphism(g, g, 0, map));
	free(map);
	graph_free(g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_automorphisms_brute),
	    cmocka_unit_test(test_automorphisms_genkautz),
	    cmocka_unit_test(test_automorphisms_cap),
	    cmocka_unit_test(test_automorphisms_generators_clock),
	    cmocka_unit_test(test_automorphism_gens_first),
	    cmocka_unit_test(test_automorphisms_multigraph),
	    cmocka_unit_test(test_automorphisms_deadline),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
