/* The lower bound of a degraded graph (sched/bound_degraded.c): on graphs
 * of up to 16 nodes with links and arcs failed at random, its cut equals
 * the best of all 2^N - 2 cuts, enumerated here, in both directions, and
 * its steps the diameter found by all-pairs distances here; a cut that
 * splits a torus in two binds above every node's own, and a block of 4
 * nodes cut off but for one link is found from the damaged nodes' balls
 * alone; with the work cut
 * short the cuts found still lie between the node bound and the optimum,
 * and the steps from the damaged nodes' searches and one more lie between
 * their eccentricities and the diameter; and no verified BFB schedule on a degraded torus or
 * hypercube beats the bound, in steps or in tau_B. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bfb/bfb.h"
#include "degrade.h"
#include "sched/sched.h"

static struct graph *build(const char *spec)
{
	struct graph *g;
	struct ofc_error err = {0};

	if (topo_build(spec, &g, &err) < 0)
		fail_msg("%s: %s", spec, err.msg);
	return g;
}

/* Every cut T (a bitmask of nodes, neither empty nor all): the most
 * d (N - |T|) / (N c(T)) with c(T) T's links in (ag) or out (rs). */
static void exhaustive(const struct graph *g, uint32_t d, double *ag, double *rs)
{
	uint32_t n = g->n;

	*ag = *rs = 0;
	for (uint32_t T = 1; T + 1 < (1u << n); T++) {
		uint32_t cin = 0, cout = 0, k = (uint32_t)__builtin_popcount(T);

		for (uint32_t u = 0; u < n; u++)
			for (uint32_t a = g->off[u]; a < g->off[u + 1]; a++) {
				bool tu = T >> u & 1, tv = T >> g->adj[a] & 1;

				cin += !tu && tv;
				cout += tu && !tv;
			}
		double x = cin ? (double)d * (n - k) / ((double)n * cin) : INFINITY,
		       y = cout ? (double)d * (n - k) / ((double)n * cout) : INFINITY;
		if (x > *ag)
			*ag = x;
		if (y > *rs)
			*rs = y;
	}
}

/* The diameter by Floyd-Warshall (UINT32_MAX: not strongly connected). */
static uint32_t diameter(const struct graph *g)
{
	uint32_t n = g->n, D[16][16], best = 0;

	for (uint32_t u = 0; u < n; u++)
		for (uint32_t v = 0; v < n; v++)
			D[u][v] = u == v ? 0 : UINT32_MAX / 2;
	for (uint32_t u = 0; u < n; u++)
		for (uint32_t a = g->off[u]; a < g->off[u + 1]; a++)
			if (g->adj[a] != u)
				D[u][g->adj[a]] = 1;
	for (uint32_t k = 0; k < n; k++)
		for (uint32_t u = 0; u < n; u++)
			for (uint32_t v = 0; v < n; v++)
				if (D[u][k] + D[k][v] < D[u][v])
					D[u][v] = D[u][k] + D[k][v];
	for (uint32_t u = 0; u < n; u++)
		for (uint32_t v = 0; v < n; v++)
			if (D[u][v] > best)
				best = D[u][v];
	return best >= UINT32_MAX / 2 ? UINT32_MAX : best;
}

static void near(double got, double want, const char *what, const char *spec)
{
	if (!(fabs(got - want) <= 1e-12 * want))
		fail_msg("%s on %s: %.15g, the exhaustive optimum %.15g", what, spec, got, want);
}

/* Random degradations of small graphs against every cut. */
static void test_exhaustive(void **state)
{
	(void)state;
	const char *specs[] = {"torus:4x4", "hypercube:4", "genkautz:12,3", "torus:3x5"};
	uint64_t seed = 69;
	unsigned graphs = 0;

	for (size_t s = 0; s < sizeof(specs) / sizeof(specs[0]); s++) {
		struct graph *h = build(specs[s]);
		uint32_t d = graph_outdeg(h, 0);

		for (int k = 0; k < 12; k++) {
			double pl = k < 4 ? 0.3 : k < 8 ? 0.15 : 0.05, pa = k < 8 ? 0 : 0.1;
			struct graph *g = degrade_at_random(h, pl, pa, &seed);
			struct degraded_bound b;
			double ag, rs;

			if (!g)
				continue;
			uint32_t dia = diameter(g);
			if (dia == UINT32_MAX) {
				graph_free(g);
				continue;
			}
			assert_int_equal(degraded_bound(g, SCHED_ALLREDUCE, d, 0, &b), 0);
			exhaustive(g, d, &ag, &rs);
			assert_true(b.ag.exact && b.rs.exact && b.steps_exact);
			near(b.ag.cut, ag, "allgather cut", specs[s]);
			near(b.rs.cut, rs, "reduce-scatter cut", specs[s]);
			near(b.tau_b, ag + rs, "allreduce tau_B", specs[s]);
			uint32_t moore = moore_diameter(g->n, d);
			assert_int_equal(b.steps, 2 * (dia > moore ? dia : moore));
			assert_true(b.ag.cut >= b.ag.node && b.rs.cut >= b.rs.node);
			/* one phase alone: the same cut, steps once */
			assert_int_equal(degraded_bound(g, SCHED_REDUCE_SCATTER, d, 0, &b), 0);
			near(b.tau_b, rs, "reduce-scatter tau_B", specs[s]);
			assert_int_equal(b.steps, dia > moore ? dia : moore);
			graphs++;
			graph_free(g);
		}
		graph_free(h);
	}
	/* enough graphs, and some where a set binds, not one node */
	assert_true(graphs >= 30);
}

/* torus:4x4 less 7 of the 8 links between rows 0-1 and rows 2-3: the
 * halves hear each other through one link, so tau_B >= 4 x 8 / (16 x 1)
 * = 2, far above any node's 4 x 15 / (16 x 3) = 1.25. Row 2 hearing rows
 * 1 and 3 through one arc (it still sends on all 8): an allgather's
 * tau_B >= 4 x 12 / (16 x 1) = 3, above its nodes' 4 x 15 / (16 x 2), and
 * a reduce-scatter's is the nodes' out, 1.25; both against every cut. */
static void test_split_torus(void **state)
{
	(void)state;
	struct graph *h = build("torus:4x4"), *g;
	struct ofc_error err = {0};
	struct degraded_bound b;
	double ag, rs;

	if (topo_fail_links(h, "4-8,5-9,6-10,7-11,12-0,13-1,14-2", &g, &err) < 0)
		fail_msg("%s", err.msg);
	assert_int_equal(degraded_bound(g, SCHED_ALLGATHER, 4, 0, &b), 0);
	assert_true(b.in && !b.out && b.symmetric && b.ag.exact);
	assert_true(fabs(b.ag.node - 1.25) < 1e-12);
	assert_true(fabs(b.ag.cut - 2) < 1e-12);
	assert_int_equal(b.ag.cut_nodes, 8);
	assert_int_equal(b.ag.cut_links, 1);
	assert_true(fabs(b.tau_b - 2) < 1e-12);
	exhaustive(g, 4, &ag, &rs);
	near(b.ag.cut, ag, "allgather cut", g->spec);
	assert_int_equal(degraded_bound(g, SCHED_ALLTOALL, 4, 0, &b), -1);
	graph_free(g);

	if (topo_fail_links(h, "4>8,5>9,6>10,7>11,12>8,13>9,14>10", &g, &err) < 0)
		fail_msg("%s", err.msg);
	assert_int_equal(degraded_bound(g, SCHED_ALLREDUCE, 4, 0, &b), 0);
	assert_false(b.symmetric);
	exhaustive(g, 4, &ag, &rs);
	near(b.ag.cut, ag, "allgather cut", g->spec);
	near(b.rs.cut, rs, "reduce-scatter cut", g->spec);
	assert_true(fabs(b.ag.cut - 3) < 1e-12 && fabs(b.ag.node - 1.875) < 1e-12);
	assert_int_equal(b.ag.cut_nodes, 4);
	assert_true(fabs(b.rs.cut - 1.25) < 1e-12 && fabs(b.rs.node - 1.25) < 1e-12);
	assert_true(fabs(b.tau_b - 4.25) < 1e-12);
	graph_free(g);
	graph_free(h);
}

/* torus:16x16 with the 2x2 block {0, 1, 16, 17} hearing the rest through
 * one link (17-33): tau_B >= 4 x 252 / (256 x 1) = 3.9375, where its
 * nodes' 2 links give 4 x 255 / (256 x 2). The damaged nodes' balls find
 * the block with work for them alone (no max flow over the whole graph:
 * not proven the optimum), and the whole graph's flows prove it. */
static void test_balls(void **state)
{
	(void)state;
	struct graph *h = build("torus:16x16"), *g;
	struct ofc_error err = {0};
	struct degraded_bound b;

	if (topo_fail_links(h, "0-15,0-240,1-2,1-241,16-31,16-32,17-18", &g, &err) < 0)
		fail_msg("%s", err.msg);
	assert_int_equal(degraded_bound(g, SCHED_ALLGATHER, 4, 2000000, &b), 0);
	assert_true(fabs(b.ag.node - 4.0 * 255 / 512) < 1e-12);
	assert_true(fabs(b.ag.cut - 3.9375) < 1e-12);
	assert_int_equal(b.ag.cut_nodes, 4);
	assert_int_equal(b.ag.cut_links, 1);
	assert_true(b.ag.balls >= 1 && b.ag.checked == 0 && !b.ag.exact);
	assert_int_equal(degraded_bound(g, SCHED_ALLGATHER, 4, 0, &b), 0);
	assert_true(b.ag.exact && b.ag.checked == 256);
	assert_true(fabs(b.ag.cut - 3.9375) < 1e-12);
	graph_free(g);
	graph_free(h);
}

/* A ball's links decide alone only when every set holding its node has
 * ceil(x (N - 1)) links in. torus:16x16 with the 2x3 block A = {0, 1, 2,
 * 16, 17, 18} hearing the rest through one link (18-19; each 5 of it
 * through 2) and, later in the order, the 2x2 block B = {100, 101, 116,
 * 117} through one (117-118): A's ball lowers x to 1 / 250, where
 * x (N - 1) = 255 / 250 asks 2 links of B's nodes; one link (a floor,
 * not a ceiling) would pass B, and B binds: 4 x 252 / (256 x 1) = 3.9375
 * against A's 4 x 250 / 256. */
static void test_balls_links(void **state)
{
	(void)state;
	struct graph *h = build("torus:16x16"), *g;
	struct ofc_error err = {0};
	struct degraded_bound b;

	if (topo_fail_links(h,
			    "0-15,0-240,1-241,2-3,2-242,16-31,16-32,17-33,18-34,"
			    "100-99,100-84,101-85,101-102,116-115,116-132,117-133",
			    &g, &err) < 0)
		fail_msg("%s", err.msg);
	assert_int_equal(degraded_bound(g, SCHED_ALLGATHER, 4, 2000000, &b), 0);
	assert_true(b.ag.balls >= 2 && b.ag.checked == 0 && !b.ag.exact);
	assert_int_equal(b.ag.cut_nodes, 4);
	assert_int_equal(b.ag.cut_links, 1);
	assert_true(fabs(b.ag.cut - 3.9375) < 1e-12);
	assert_int_equal(degraded_bound(g, SCHED_ALLGATHER, 4, 0, &b), 0);
	assert_true(b.ag.exact && b.ag.cut_nodes == 4 && b.ag.cut_links == 1);
	graph_free(g);
	graph_free(h);
}

/* Work for a few max flows only: what was found is still a bound, between
 * the node's and the optimum, and says it is not exact. */
static void test_short_work(void **state)
{
	(void)state;
	struct graph *h = build("torus:8x8"), *g;
	struct ofc_error err = {0};
	struct degraded_bound full, cut;

	if (topo_fail_links(h, "0-1,0-8,9-10,9-17,27-35,36-37,40-48,63-62", &g, &err) < 0)
		fail_msg("%s", err.msg);
	assert_int_equal(degraded_bound(g, SCHED_ALLGATHER, 4, 0, &full), 0);
	assert_true(full.ag.exact && full.ag.checked == 64);
	/* about four flows' work */
	assert_int_equal(degraded_bound(g, SCHED_ALLGATHER, 4, 4 * 4 * (2 * g->m + 3 * 64), &cut),
			 0);
	assert_false(cut.ag.exact);
	assert_true(cut.ag.checked < 64);
	assert_true(cut.ag.cut >= cut.ag.node && cut.ag.cut <= full.ag.cut * (1 + 1e-12));
	assert_false(cut.steps_exact);
	assert_true(cut.steps <= full.steps);
	graph_free(g);
	graph_free(h);
}

/* s's out-eccentricity by a search here (UINT32_MAX: some node unreached). */
static uint32_t ecc_of(const struct graph *g, uint32_t s)
{
	uint32_t dist[16], queue[16], qh = 0, qt = 0, far = 0;

	memset(dist, 0xff, sizeof(dist));
	dist[s] = 0;
	queue[qt++] = s;
	while (qh < qt) {
		uint32_t u = queue[qh++];

		far = dist[u];
		for (uint32_t a = g->off[u]; a < g->off[u + 1]; a++)
			if (dist[g->adj[a]] == UINT32_MAX) {
				dist[g->adj[a]] = dist[u] + 1;
				queue[qt++] = g->adj[a];
			}
	}
	return qt < g->n ? UINT32_MAX : far;
}

/* Work for fewer searches than nodes: no diameter is proven, so the steps
 * come from the damaged nodes' eccentricities and one more search (the
 * double sweep), never below the damaged nodes' own and never above the
 * diameter; on a torus less one link, three searches give the diameter
 * every node's search proves, and where the damaged nodes' eccentricities
 * fall short of the diameter the extra search raises the bound on some. */
static void test_short_eccentricity(void **state)
{
	(void)state;
	struct graph *h = build("torus:32x32"), *g;
	struct ofc_error err = {0};
	struct degraded_bound full, cut;

	if (topo_fail_links(h, "5-6", &g, &err) < 0)
		fail_msg("%s", err.msg);
	uint64_t search = (uint64_t)g->m + g->n;
	assert_int_equal(degraded_bound(g, SCHED_ALLREDUCE, 4, 0, &full), 0);
	assert_true(full.steps_exact && full.ecc_checked == 1024);
	assert_int_equal(full.steps, 2 * 32);
	assert_int_equal(degraded_bound(g, SCHED_ALLREDUCE, 4, 8 * 3 * search, &cut), 0);
	assert_false(cut.steps_exact);
	assert_int_equal(cut.ecc_checked, 3);
	assert_int_equal(cut.steps, full.steps);
	graph_free(g);
	graph_free(h);

	const char *specs[] = {"genkautz:12,3", "genkautz:16,2", "torus:3x5", "hypercube:4"};
	uint64_t seed = 62;
	unsigned graphs = 0, raised = 0;

	for (size_t s = 0; s < sizeof(specs) / sizeof(specs[0]); s++) {
		h = build(specs[s]);
		uint32_t d = graph_outdeg(h, 0);

		for (int k = 0; k < 40; k++) {
			g = degrade_at_random(h, k < 20 ? 0.05 : 0, k < 20 ? 0 : 0.08, &seed);
			if (!g)
				continue;
			struct graph *gt = graph_transpose(g);
			uint32_t dia = diameter(g), nd = 0, dam = 0,
				 moore = moore_diameter(g->n, d);

			for (uint32_t v = 0; v < g->n; v++)
				if (graph_outdeg(g, v) < d || graph_outdeg(gt, v) < d) {
					uint32_t e = ecc_of(g, v);

					nd++;
					dam = e > dam ? e : dam;
				}
			graph_free(gt);
			if (dia == UINT32_MAX || !nd || nd + 1 >= g->n) {
				graph_free(g);
				continue;
			}
			search = (uint64_t)g->m + g->n;
			assert_int_equal(
			    degraded_bound(g, SCHED_ALLGATHER, d, 8 * (nd + 1) * search, &cut), 0);
			assert_false(cut.steps_exact);
			assert_int_equal(cut.ecc_checked, nd + 1);
			if (cut.steps < (dam > moore ? dam : moore) ||
			    cut.steps > (dia > moore ? dia : moore))
				fail_msg("%s: %u steps, the damaged nodes' %u, the diameter %u",
					 specs[s], cut.steps, dam, dia);
			raised += cut.steps > (dam > moore ? dam : moore);
			graphs++;
			graph_free(g);
		}
		graph_free(h);
	}
	print_message("%u graphs, the extra search raised %u\n", graphs, raised);
	assert_true(graphs >= 30 && raised >= 1);
}

/* BFB on degraded graphs, verified: its steps and tau_B are never below
 * the bound's. */
static void test_below_schedules(void **state)
{
	(void)state;
	const char *specs[] = {"torus:8x8", "hypercube:6", "torus:4x4x4"};
	enum sched_collective cs[] = {SCHED_ALLGATHER, SCHED_REDUCE_SCATTER, SCHED_ALLREDUCE};
	uint64_t seed = 7;

	for (size_t s = 0; s < 3; s++) {
		struct graph *h = build(specs[s]);
		uint32_t d = graph_outdeg(h, 0);

		for (int k = 0; k < 3; k++) {
			struct graph *g = degrade_at_random(h, 0.05, k == 2 ? 0.03 : 0, &seed);

			if (!g)
				continue;
			for (size_t c = 0; c < 3; c++) {
				struct bfb_opts o = {.threads = 2};
				struct bfb_stats st;
				struct schedule sc;
				struct verify_opts vo = {.graph = g};
				struct verify_report rep = {0};
				struct ofc_error err = {0};
				struct degraded_bound b;

				if (bfb_schedule(g, cs[c], &o, &sc, &st, &err) < 0)
					continue; /* disconnected: nothing to bound */
				if (sched_verify(&sc, &vo, &rep) < 0)
					fail_msg("%s: %s", specs[s], rep.error);
				assert_int_equal(degraded_bound(g, cs[c], d, 0, &b), 0);
				double tau = rep.sum_max_link_load * d / g->n;
				if (sc.nsteps < b.steps || tau < b.tau_b * (1 - 1e-9))
					fail_msg(
					    "%s: BFB %u steps, tau_B %.9g under the bound's %u, "
					    "%.9g",
					    specs[s], sc.nsteps, tau, b.steps, b.tau_b);
				sched_free(&sc);
			}
			graph_free(g);
		}
		graph_free(h);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_exhaustive),	    cmocka_unit_test(test_split_torus),
	    cmocka_unit_test(test_balls),	    cmocka_unit_test(test_balls_links),
	    cmocka_unit_test(test_short_work),	    cmocka_unit_test(test_short_eccentricity),
	    cmocka_unit_test(test_below_schedules),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
