/* Relabelling (topo/relabel.c): a relabelled copy of the wiring needs no
 * move; between different graphs the search keeps more than the identity
 * and, on graphs small enough to try every mapping, as much as the best
 * mapping does. Every result is recounted independently. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "topo/topo.h"

static struct graph *build(const char *spec)
{
	struct ofc_error err = {0};
	struct graph *g = NULL;

	if (topo_build(spec, &g, &err) < 0)
		fail_msg("%s: %s (column %u)", spec, err.msg, err.col);
	return g;
}

static uint64_t next(uint64_t *x)
{
	*x = *x * 6364136223846793005ull + 1442695040888963407ull;
	return *x >> 33;
}

static void shuffle(uint32_t *p, uint32_t n, uint64_t *seed)
{
	for (uint32_t i = 0; i < n; i++)
		p[i] = i;
	for (uint32_t i = n; i > 1; i--) {
		uint32_t k = (uint32_t)(next(seed) % i), t = p[i - 1];
		p[i - 1] = p[k];
		p[k] = t;
	}
}

/* g with node u renamed p[u]. */
static struct graph *renamed(const struct graph *g, const uint32_t *p)
{
	uint32_t *tails = graph_arc_tails(g), *heads = malloc(((size_t)g->m + 1) * 4);

	for (uint32_t a = 0; a < g->m; a++) {
		tails[a] = p[tails[a]];
		heads[a] = p[g->adj[a]];
	}
	struct graph *r = graph_from_arcs(g->n, g->m, tails, heads, "renamed");
	free(tails);
	free(heads);
	return r;
}

static void assert_bijection(const uint32_t *map, uint32_t n)
{
	uint8_t *seen = calloc(n, 1);

	for (uint32_t u = 0; u < n; u++) {
		assert_true(map[u] < n);
		assert_false(seen[map[u]]);
		seen[map[u]] = 1;
	}
	free(seen);
}

static void relabel(const struct graph *cur, const struct graph *target, uint32_t rounds,
		    struct relabel_result *r)
{
	struct relabel_opts o = {.budget_s = 60, .max_rounds = rounds, .seed = 7};
	struct ofc_error err = {0};

	assert_int_equal(topo_relabel(cur, target, &o, r, &err), 0);
	assert_bijection(r->map, target->n);
	assert_int_equal(topo_relabel_kept(cur, target, r->map), r->kept);
	assert_true(r->kept >= r->kept_identity);
}

/* The wiring is the target with hosts shuffled: the search finds a mapping
 * that keeps every circuit, though the identity keeps few. */
static void test_relabelled_copy_needs_no_move(void **state)
{
	static const char *const specs[] = {"torus:8x8",   "torus:4x4x4",      "genkautz:64,4",
					    "hypercube:6", "circulant:41:4,5", "kautz:2,3"};
	uint64_t seed = 99;
	(void)state;

	for (size_t i = 0; i < sizeof(specs) / sizeof(specs[0]); i++) {
		struct graph *t = build(specs[i]);
		uint32_t *p = malloc(t->n * 4);
		struct relabel_result r;

		shuffle(p, t->n, &seed);
		struct graph *cur = renamed(t, p);
		relabel(cur, t, 0, &r);
		if (!r.complete)
			fail_msg("%s: kept %llu of %llu arcs", specs[i], (unsigned long long)r.kept,
				 (unsigned long long)r.arcs);
		assert_int_equal(r.kept, t->m);
		assert_true(r.kept_identity < t->m / 2);
		relabel_result_free(&r);
		graph_free(cur);
		graph_free(t);
		free(p);
	}
}

/* From one family to another the identity keeps only what the two
 * numberings happen to share; relabelling keeps strictly more. */
static void test_circulant_to_torus_saves_moves(void **state)
{
	static const char *const pairs[][2] = {
	    {"circulant:64:7,8", "torus:8x8"},
	    {"circulant:16:3,4", "torus:4x4"},
	    {"genkautz:64,4", "torus:8x8"},
	};
	(void)state;

	for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
		struct graph *cur = build(pairs[i][0]), *t = build(pairs[i][1]);
		struct relabel_result r;

		relabel(cur, t, 20, &r);
		assert_true(r.kept > r.kept_identity);
		relabel_result_free(&r);
		graph_free(cur);
		graph_free(t);
	}
}

/* Small random regular digraphs: every one of the 8! mappings tried; the
 * search reaches the best count. */
static uint64_t best_by_brute_force(const struct graph *cur, const struct graph *t)
{
	uint32_t n = t->n, p[8], c[8] = {0};
	uint64_t best = 0;

	for (uint32_t i = 0; i < n; i++)
		p[i] = i;
	best = topo_relabel_kept(cur, t, p);
	for (uint32_t i = 1; i < n;) { /* Heap's algorithm */
		if (c[i] < i) {
			uint32_t k = i % 2 ? c[i] : 0, x = p[k];
			p[k] = p[i];
			p[i] = x;
			uint64_t kept = topo_relabel_kept(cur, t, p);
			if (kept > best)
				best = kept;
			c[i]++;
			i = 1;
		} else {
			c[i++] = 0;
		}
	}
	return best;
}

static struct graph *random_regular(uint32_t n, uint32_t d, uint64_t *seed)
{
	uint32_t tails[64], heads[64], p[8];

	for (uint32_t j = 0; j < d; j++) {
		shuffle(p, n, seed);
		for (uint32_t u = 0; u < n; u++) {
			tails[j * n + u] = u;
			heads[j * n + u] = p[u];
		}
	}
	return graph_from_arcs(n, n * d, tails, heads, "random");
}

static void test_small_graphs_reach_the_optimum(void **state)
{
	uint64_t seed = 5;
	(void)state;

	for (int round = 0; round < 6; round++) {
		struct graph *cur = random_regular(8, 3, &seed), *t = random_regular(8, 3, &seed);
		struct relabel_result r;

		relabel(cur, t, 200, &r);
		assert_int_equal(r.kept, best_by_brute_force(cur, t));
		relabel_result_free(&r);
		graph_free(cur);
		graph_free(t);
	}
}

/* Issue 15's gap: a shuffled generalized Kautz graph of 1024 nodes (groups
 * of nodes share their out-neighbours, which the greedy cannot read) is
 * recognised by the isomorphism search, every link kept, well within the
 * 5 s the issue allows. */
static void test_large_genkautz_copy_found(void **state)
{
	static const char *const specs[] = {"genkautz:1024,4", "genkautz:1000,3", "kautz:4,4"};
	uint64_t seed = 1234;
	(void)state;

	for (size_t i = 0; i < sizeof(specs) / sizeof(specs[0]); i++) {
		struct graph *t = build(specs[i]);
		uint32_t *p = malloc(t->n * 4);
		struct relabel_opts o = {.budget_s = 5, .seed = 7};
		struct relabel_result r;
		struct ofc_error err = {0};

		shuffle(p, t->n, &seed);
		struct graph *cur = renamed(t, p);
		assert_int_equal(topo_relabel(cur, t, &o, &r, &err), 0);
		assert_bijection(r.map, t->n);
		if (!r.complete || !r.iso)
			fail_msg("%s: kept %llu of %llu arcs", specs[i], (unsigned long long)r.kept,
				 (unsigned long long)r.arcs);
		assert_int_equal(topo_relabel_kept(cur, t, r.map), t->m);
		assert_true(r.seconds < 5);
		relabel_result_free(&r);
		graph_free(cur);
		graph_free(t);
		free(p);
	}
}

/* Graphs of the same size and degrees that are not copies: no
 * isomorphism, and the answer comes fast for vertex-transitive ones (one
 * image of the first node is tried). */
static void test_no_isomorphism_between_different_graphs(void **state)
{
	static const char *const pairs[][2] = {{"torus:32x32", "torus:16x64"},
					       {"circulant:64:1,8", "circulant:64:1,9"},
					       {"genkautz:64,4", "torus:8x8"}};
	(void)state;

	for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
		struct graph *a = build(pairs[i][0]), *b = build(pairs[i][1]);
		uint32_t *map = malloc(a->n * 4);
		double t0 = now_seconds();

		assert_false(graph_isomorphism(a, b, t0 + 10, map));
		if (now_seconds() - t0 > 2)
			fail_msg("%s vs %s took %.2f s", pairs[i][0], pairs[i][1],
				 now_seconds() - t0);
		free(map);
		graph_free(a);
		graph_free(b);
	}
}

static void test_size_mismatch_refused(void **state)
{
	struct graph *cur = build("torus:4x4"), *t = build("torus:8x8");
	struct relabel_opts o = {0};
	struct relabel_result r;
	struct ofc_error err = {0};
	(void)state;

	assert_int_equal(topo_relabel(cur, t, &o, &r, &err), -1);
	assert_non_null(strstr(err.msg, "as many hosts"));
	graph_free(cur);
	graph_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_relabelled_copy_needs_no_move),
	    cmocka_unit_test(test_circulant_to_torus_saves_moves),
	    cmocka_unit_test(test_small_graphs_reach_the_optimum),
	    cmocka_unit_test(test_large_genkautz_copy_found),
	    cmocka_unit_test(test_no_isomorphism_between_different_graphs),
	    cmocka_unit_test(test_size_mismatch_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
