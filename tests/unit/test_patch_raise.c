/* The raised sets of a degraded BFB's patch (bfb/patch_raise.c): for every
 * root of K = H^T in each phase, the nodes whose distance from the root
 * grew and their new distance, exactly those a BFS over the degraded K
 * finds, on tori, a hypercube and a circulant, with arcs, links, a node
 * with two failed in-arcs and failed hosts. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "bfb/patch_internal.h"
#include "sched/sched.h"

/* Both phases' raised sets of spec less fail against BFS from every root
 * in K and in the degraded K, the search's seeds held up to seed_max
 * pairs (0: its default); the raised (root, node) pairs found. */
static size_t raised_as_bfs_held(const char *spec, const char *fail, uint64_t seed_max)
{
	struct ofc_error err = {0};
	struct graph *g;
	struct topo_tree *t;
	struct sched_group G;
	size_t pairs = 0;

	if (topo_build_tree(spec, &g, &t, &err) < 0 || sched_group_of(g, t, &G, &err) < 0)
		fail_msg("%s: %s", spec, err.msg);
	uint32_t n = g->n, *tails = graph_arc_tails(g), *queue = malloc(n * sizeof(uint32_t));
	bool *gone = calloc(g->m + 1, sizeof(bool));
	uint8_t *absent = calloc(n, 1);
	if (topo_mark_items(g, fail, gone, absent, &err) < 0)
		fail_msg("%s: %s", fail, err.msg);
	bool hosts = false;
	for (uint32_t a = 0; a < g->m; a++) {
		/* as bfb_patch: a failed host's arcs all gone */
		gone[a] = gone[a] || absent[tails[a]] || absent[g->adj[a]];
		hosts = hosts || absent[tails[a]];
	}
	struct graph *gt = graph_transpose(g), *gd = topo_without_arcs(g, gone, "degraded"), *gdt = graph_transpose(gd);
	uint16_t *old = malloc(n * sizeof(uint16_t)), *now = malloc(n * sizeof(uint16_t));

	for (int ph = 0; ph < 2; ph++) {
		bool reverse = ph == 0;
		const struct graph *k = reverse ? g : gt, *kout = reverse ? gd : gdt;
		uint32_t D = 0;

		bfb_bfs_row(k, 0, old, queue);
		for (uint32_t v = 0; v < n; v++)
			D = old[v] > D ? old[v] : D;
		struct patch_phase pp = {.g = g,
					 .gone = gone,
					 .G = &G,
					 .reverse = reverse,
					 .D = D,
					 .tails = tails,
					 .absent = hosts ? absent : NULL,
					 .seed_max = seed_max};
		patch_raised(&pp, k, reverse ? gdt : gd, kout, 2);
		for (uint32_t x = 0; x < n; x++) {
			uint32_t e = pp.rx_off[x];

			if (absent[x]) {
				assert_int_equal(pp.rx_off[x + 1], e); /* no root */
				continue;
			}
			bfb_bfs_row(k, x, old, queue);
			bfb_bfs_row(kout, x, now, queue);
			for (uint32_t w = 0; w < n; w++) {
				if (absent[w] || now[w] == old[w])
					continue;
				if (e >= pp.rx_off[x + 1] || pp.rx_w[e] != w ||
				    pp.rx_d[e] != now[w])
					fail_msg(
					    "%s less %s, %s phase: root %u, node %u from %u to "
					    "%u not found as raised",
					    spec, fail, reverse ? "reduce" : "copy", x, w, old[w],
					    now[w]);
				e++;
			}
			assert_int_equal(e, pp.rx_off[x + 1]); /* and no other */
		}
		pairs += pp.rx_off[n];
		free(pp.row0);
		free(pp.rx_off);
		free(pp.rx_w);
		free(pp.rx_d);
	}
	free(old);
	free(now);
	free(queue);
	free(tails);
	free(gone);
	free(absent);
	graph_free(gdt);
	graph_free(gd);
	graph_free(gt);
	graph_free(g);
	topo_tree_free(t);
	return pairs;
}

/* the seeds held (the default bound), and past a bound of one pair, each
 * root testing every failed arc: the same sets */
static size_t raised_as_bfs(const char *spec, const char *fail)
{
	size_t pairs = raised_as_bfs_held(spec, fail, 0);

	assert_int_equal(raised_as_bfs_held(spec, fail, 1), pairs);
	return pairs;
}

static void test_links_and_arcs(void **state)
{
	(void)state;
	assert_true(raised_as_bfs("torus:16x16", "5-6") > 0);
	assert_true(raised_as_bfs("torus:16x16", "7>8") > 0);
	/* node 8 with two failed in-arcs, a third neighbour's link beside */
	assert_true(raised_as_bfs("torus:16x16", "7>8,9>8,40-56,100-101,101-117") > 0);
	assert_true(raised_as_bfs("torus:12x10", "0-1,3>15,58-59") > 0);
	assert_true(raised_as_bfs("torus:4x4x4", "0-1,21-37") > 0);
}

static void test_failed_hosts(void **state)
{
	(void)state;
	assert_true(raised_as_bfs("torus:16x16", "21") > 0);
	assert_true(raised_as_bfs("torus:16x16", "21,100-101,7>8") > 0);
	/* no survivor's distance grows: two ways round every failed host */
	assert_int_equal(raised_as_bfs("torus:4x4x4", "0,42"), 0);
}

/* a binary group (subtraction is XOR) and a circulant's chords */
static void test_other_groups(void **state)
{
	(void)state;
	assert_true(raised_as_bfs("hypercube:6", "3-7,12>13") > 0);
	assert_int_equal(raised_as_bfs("hypercube:5", "9"), 0);
	assert_true(raised_as_bfs("circulant:64:3,8", "5-8,20>23,40") > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_links_and_arcs),
	    cmocka_unit_test(test_failed_hosts),
	    cmocka_unit_test(test_other_groups),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
