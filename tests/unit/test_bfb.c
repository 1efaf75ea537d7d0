/* BFB schedules: the paper's exact tau_B values, every schedule through the
 * verifier with the link loads adding up to the reported tau_B, the three
 * exact methods and lp_solve agreeing, reduce-scatter by reversal on a
 * graph that is not reverse-symmetric, integer chunks within Thm 20; the
 * gather of a patch's planned blocks into the schedule. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bfb/bfb.h"
#include "bfb/internal.h"
#include "rwa/rwa.h"

static struct graph *build(const char *spec)
{
	struct graph *g = NULL;
	struct ofc_error err = {0};

	if (topo_build(spec, &g, &err) < 0)
		fail_msg("%s: %s", spec, err.msg);
	return g;
}

static uint32_t diameter(const struct graph *g)
{
	struct topo_facts f;

	topo_facts(g, &f, 0);
	return f.diameter;
}

/* Build, verify, and check that the per-step link loads the verifier
 * measures add up to the tau_B the generator reports. */
static void check_schedule(const struct graph *g, enum sched_collective c, const struct bfb_opts *o,
			   struct bfb_stats *st)
{
	struct schedule s;
	struct verify_report r;
	struct verify_opts vo = {.graph = g};
	struct ofc_error err = {0};

	if (bfb_schedule(g, c, o, &s, st, &err) < 0)
		fail_msg("%s: %s", g->spec, err.msg);
	if (sched_verify(&s, &vo, &r) < 0)
		fail_msg("%s %s: %s", g->spec, sched_collective_name(c), r.error);
	assert_int_equal(s.nsteps, st->steps);
	double measured = r.sum_max_link_load * st->degree / g->n;
	if (fabs(measured - st->tau_b_value) > 1e-6)
		fail_msg("%s: verifier measures tau_B %.9f, generator says %.9f", g->spec, measured,
			 st->tau_b_value);
	assert_true(r.duplicate_blocks == 0);
	sched_free(&s);
}

static const struct {
	const char *spec;
	int64_t num, den;
} known[] = {
    {"genkautz:1024,4", 341, 256}, /* Table 4: allreduce 2.664 */
    {"torus:4x6", 23, 24},
    {"torus:5x7", 34, 35},
    {"torus:32x32", 1023, 1024},
    {"hypercube:10", 1023, 1024},
    {"bipartite:2", 3, 4}, /* Fig. 1 */
    {"line(bipartite:2)", 1, 1},
    {"line^2(bipartite:2)", 9, 8},
    {"circulant:16:3,4", 15, 16},
    {"line(circulant:16:3,4)", 1, 1},
    /* Frontera's 3x3x2 and 3x3x3x2 tori (a size-2 dimension is one link):
     * (N-1)/N, the same as the explicit products. */
    {"torus:3x3x2", 17, 18},
    {"torus:3x3x3x2", 53, 54},
    {"product(biring:3,biring:3,complete:2)", 17, 18},
    {"product(biring:3,biring:3,biring:3,complete:2)", 53, 54},
    /* A doubled size-2 link (circulant:2:1 has two parallel arcs): at step 1
     * the four neighbours in the other dimensions each reach u over one
     * link, so U*_1 = 1 > 5/6 and tau_B = 1. */
    {"product(biring:3,biring:3,circulant:2:1)", 1, 1},
    {"product(ring:4,ring:8)", 31, 32},
    {"genkautz:8,2", 7, 4}, /* twice optimal: the upper edge of Fig. 12 */
    {"kautz:4,1", 1, 1},
    {"complete:5", 4, 5},
    {"degree(complete:3,2)", 5, 6},
    {"circulant:7:2,3", 6, 7},
    {"bipartite:4", 7, 8},
    {"hamming:2,3", 8, 9},
    {"degree(biring:5,2)", 9, 10},
    {"circulant:11:2,3", 10, 11},
    {"circulant:12:2,3", 11, 12},
};

static void test_known_values(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(known); i++) {
		struct graph *g = build(known[i].spec);
		struct bfb_stats st;
		char buf[64];

		check_schedule(g, SCHED_ALLGATHER, NULL, &st);
		if (st.tau_b.num != known[i].num || st.tau_b.den != known[i].den)
			fail_msg("%s: tau_B %s, want %lld/%lld", known[i].spec,
				 frac_str(st.tau_b, buf, sizeof(buf)), (long long)known[i].num,
				 (long long)known[i].den);
		/* Steps always equal the diameter. */
		assert_int_equal(st.steps, diameter(g));
		assert_true(st.bw_optimal ==
			    (known[i].num * (int64_t)g->n == known[i].den * ((int64_t)g->n - 1)));
		graph_free(g);
	}
}

/* Fig. 5: u2 hears v1 from w1 or w2 and v2 from w2 or w3: U = 2/3; u1 with
 * w1 and w2 only: U = 1. */
static void test_fig5_lp(void **state)
{
	const uint64_t u2[] = {0x3, 0x6}, u1[] = {0x1, 0x2};
	struct ofc_error err = {0};
	uint64_t c, k;
	(void)state;

	for (int m = BFB_AUTO; m <= BFB_LP; m++) {
		assert_int_equal(bfb_solve_node(2, u2, 3, NULL, (enum bfb_method)m, &c, &k, &err),
				 0);
		assert_true(c == 2 && k == 3);
		assert_int_equal(bfb_solve_node(2, u1, 2, NULL, (enum bfb_method)m, &c, &k, &err),
				 0);
		assert_true(c == 1 && k == 1);
	}
	const uint64_t bad[] = {0x0};
	assert_int_equal(bfb_solve_node(1, bad, 3, NULL, BFB_AUTO, &c, &k, &err), -1);
}

/* The subset formula, the parametric min cut and lp_solve agree on random
 * problems (the min-cut argument of Thm 19 says they must). */
static void test_methods_agree_random(void **state)
{
	uint64_t seed = 12345, masks[40];
	struct ofc_error err = {0};
	(void)state;

	for (int trial = 0; trial < 300; trial++) {
		uint32_t d = 1 + (uint32_t)(trial % 9), m = 1 + (uint32_t)((trial * 7) % 40);
		uint64_t c[4], k[4];

		for (uint32_t i = 0; i < m; i++) {
			do {
				seed = seed * 6364136223846793005ull + 1442695040888963407ull;
				masks[i] = (seed >> 33) & ((1ull << d) - 1);
				/* sparser sets are the interesting ones */
				if (trial % 2)
					masks[i] &= (seed >> 17);
			} while (!masks[i]);
		}
		for (int meth = BFB_AUTO; meth <= BFB_LP; meth++)
			assert_int_equal(bfb_solve_node(m, masks, d, NULL, (enum bfb_method)meth,
							&c[meth], &k[meth], &err),
					 0);
		for (int meth = 1; meth < 4; meth++)
			if (c[meth] != c[0] || k[meth] != k[0])
				fail_msg("trial %d: method %d gives %llu/%llu, auto %llu/%llu",
					 trial, meth, (unsigned long long)c[meth],
					 (unsigned long long)k[meth], (unsigned long long)c[0],
					 (unsigned long long)k[0]);
	}
}

/* A d-regular digraph: the union of d random permutations. */
static struct graph *random_regular(uint32_t n, uint32_t d, uint64_t seed)
{
	uint32_t *tails = xmalloc((size_t)n * d * sizeof(uint32_t));
	uint32_t *heads = xmalloc((size_t)n * d * sizeof(uint32_t));
	uint32_t *perm = xmalloc((size_t)n * sizeof(uint32_t));

	for (uint32_t j = 0; j < d; j++) {
		for (uint32_t i = 0; i < n; i++)
			perm[i] = i;
		for (uint32_t i = n - 1; i > 0; i--) {
			seed = seed * 6364136223846793005ull + 1442695040888963407ull;
			uint32_t r = (uint32_t)((seed >> 33) % (i + 1)), t = perm[i];
			perm[i] = perm[r];
			perm[r] = t;
		}
		for (uint32_t u = 0; u < n; u++) {
			tails[j * n + u] = u;
			heads[j * n + u] = perm[u];
		}
	}
	struct graph *g = graph_from_arcs(n, n * d, tails, heads, "random");
	free(tails);
	free(heads);
	free(perm);
	return g;
}

/* Whole schedules: every method, every collective, on structured and random
 * graphs (with self-loops and parallel arcs), gives the same exact tau_B and
 * passes the verifier. */
static void test_methods_agree_schedules(void **state)
{
	const char *specs[] = {"hypercube:5", "genkautz:50,3", "line(genkautz:10,3)",
			       "torus:3x5",   "debruijn:2,4",  "circulant:20:2,7"};
	struct ofc_error err = {0};
	(void)state;

	for (size_t i = 0; i < ARRAY_SIZE(specs) + 6; i++) {
		struct graph *g = i < ARRAY_SIZE(specs) ? build(specs[i])
							: random_regular(30 + 7 * (uint32_t)i,
									 2 + (uint32_t)i % 4, i);
		struct bfb_stats base;

		if (bfb_schedule(g, SCHED_ALLGATHER, NULL, NULL, &base, &err) < 0) {
			/* a random graph that is not strongly connected */
			assert_non_null(strstr(err.msg, "not strongly connected"));
			graph_free(g);
			continue;
		}
		for (int c = SCHED_ALLGATHER; c <= SCHED_ALLREDUCE; c++)
			for (int meth = BFB_AUTO; meth <= BFB_LP; meth++) {
				struct bfb_opts o = {.method = (enum bfb_method)meth};
				struct bfb_stats st;

				check_schedule(g, (enum sched_collective)c, &o, &st);
				if (c == SCHED_ALLGATHER)
					assert_true(frac_cmp(st.tau_b, base.tau_b) == 0);
				if (meth == BFB_LP)
					assert_true(st.lps > 0 || st.problems == 0);
			}
		graph_free(g);
	}
}

/* Reduce-scatter on generalized Kautz (not reverse-symmetric) is BFB
 * allgather on the transpose, reversed: same steps and tau_B as allgather
 * on reverse(G); allreduce is both. */
static void test_reduce_scatter_by_reversal(void **state)
{
	struct graph *g = build("genkautz:200,3"), *t = build("reverse(genkautz:200,3)");
	struct bfb_stats rs, ag, agt, ar;
	(void)state;

	check_schedule(g, SCHED_REDUCE_SCATTER, NULL, &rs);
	check_schedule(g, SCHED_ALLGATHER, NULL, &ag);
	check_schedule(t, SCHED_ALLGATHER, NULL, &agt);
	check_schedule(g, SCHED_ALLREDUCE, NULL, &ar);
	assert_true(frac_cmp(rs.tau_b, agt.tau_b) == 0);
	assert_int_equal(rs.steps, agt.steps);
	assert_true(frac_cmp(ar.tau_b, frac_add(rs.tau_b, ag.tau_b)) == 0);
	assert_int_equal(ar.steps, rs.steps + ag.steps);
	graph_free(g);
	graph_free(t);

	/* Table 4: genkautz:1024,4 allreduce = 2 x 341/256. */
	g = build("genkautz:1024,4");
	check_schedule(g, SCHED_ALLREDUCE, NULL, &ar);
	assert_true(ar.tau_b.num == 341 && ar.tau_b.den == 128);
	assert_int_equal(ar.steps, 10);
	graph_free(g);
}

/* Integer chunks: every part is a whole number of 1/P chunks, the schedule
 * verifies, and tau_B lies between the fractional optimum and the Thm 20
 * bound tau + d(d^D - 1)/((d - 1) P N). */
static void test_chunks(void **state)
{
	const char *specs[] = {"hypercube:6", "genkautz:100,4", "torus:5x7", "circulant:16:3,4",
			       "line(bipartite:3)"};
	(void)state;

	for (size_t i = 0; i < ARRAY_SIZE(specs); i++) {
		struct graph *g = build(specs[i]);

		for (uint32_t P = 1; P <= 7; P += 3) {
			struct bfb_opts o = {.chunks = P};
			struct bfb_stats st;
			struct schedule s;
			struct ofc_error err = {0};

			check_schedule(g, SCHED_ALLGATHER, &o, &st);
			assert_int_equal(bfb_schedule(g, SCHED_ALLGATHER, &o, &s, &st, &err), 0);
			for (size_t x = 0; x < s.nxfers; x++) {
				double a = sched_frac(s.xfers[x].offset) * P,
				       b = sched_frac(s.xfers[x].length) * P;
				assert_true(fabs(a - nearbyint(a)) < 1e-6);
				assert_true(fabs(b - nearbyint(b)) < 1e-6 && b > 0.5);
			}
			sched_free(&s);
			double d = st.degree, D = st.steps, N = g->n;
			double bound = st.tau_b_exact_value +
				       (d == 1 ? D : d * (pow(d, D) - 1) / (d - 1)) / (P * N);
			assert_true(st.tau_b_value >= st.tau_b_exact_value - 1e-12);
			assert_true(st.tau_b_value <= bound + 1e-12);
		}
		graph_free(g);
	}
}

/* Figures alone (one node of a vertex-transitive graph) match the schedule. */
static void test_figures_only(void **state)
{
	const char *specs[] = {"torus:6x9", "hypercube:7", "circulant:30:4,5", "genkautz:60,3"};
	struct ofc_error err = {0};
	(void)state;

	for (size_t i = 0; i < ARRAY_SIZE(specs); i++) {
		struct graph *g = build(specs[i]);
		struct bfb_stats a, b;
		struct schedule s;

		assert_int_equal(bfb_schedule(g, SCHED_ALLREDUCE, NULL, NULL, &a, &err), 0);
		assert_int_equal(bfb_schedule(g, SCHED_ALLREDUCE, NULL, &s, &b, &err), 0);
		assert_true(frac_cmp(a.tau_b, b.tau_b) == 0);
		assert_int_equal(a.steps, b.steps);
		sched_free(&s);
		graph_free(g);
	}
}

static void test_errors(void **state)
{
	struct ofc_error err = {0};
	struct bfb_stats st;
	struct schedule s;
	(void)state;

	/* Two disjoint rings: regular but not strongly connected. */
	uint32_t tails[] = {0, 1, 2, 3}, heads[] = {1, 0, 3, 2};
	struct graph *g = graph_from_arcs(4, 4, tails, heads, "two-rings");
	assert_int_equal(bfb_schedule(g, SCHED_ALLGATHER, NULL, &s, &st, &err), -1);
	assert_non_null(strstr(err.msg, "not strongly connected"));
	graph_free(g);

	/* A rate of 0 and chunks with rates are refused. */
	g = build("torus:3x3");
	uint32_t *rate = xcalloc(g->m, sizeof(uint32_t));
	struct bfb_opts o = {.rate = rate};
	assert_int_equal(bfb_schedule(g, SCHED_ALLGATHER, &o, &s, &st, &err), -1);
	assert_int_equal(err.code, OFC_E_INPUT);
	for (uint32_t a = 0; a < g->m; a++)
		rate[a] = 1 + a % 2;
	o.chunks = 2;
	assert_int_equal(bfb_schedule(g, SCHED_ALLGATHER, &o, &s, &st, &err), -1);
	assert_non_null(strstr(err.msg, "chunks"));
	free(rate);
	graph_free(g);

	g = build("torus:4x4");
	assert_int_equal(bfb_schedule(g, SCHED_ALLTOALL, NULL, &s, &st, &err), -1);
	graph_free(g);
}

/* Exact fractions: reduced, compared exactly, overflow marked invalid. */
static void test_fractions(void **state)
{
	char buf[64];
	(void)state;

	struct frac a = frac_add(frac_make(15, 16), frac_mul(frac_make(4, 3), frac_make(63, 1024)));
	assert_string_equal(frac_str(a, buf, sizeof(buf)), "261/256"); /* Cor. 1.2, Table 4 */
	assert_string_equal(frac_str(frac_make(6, -4), buf, sizeof(buf)), "-3/2");
	assert_true(frac_cmp(frac_make(2, 3), frac_make(3, 4)) < 0);
	assert_true(frac_cmp(frac_sub(frac_make(1, 2), frac_make(1, 3)), frac_make(1, 6)) == 0);
	assert_true(frac_cmp(frac_div(frac_make(1, 2), frac_make(1, 4)), frac_make(2, 1)) == 0);
	struct frac r = frac_from_double(2.0 / 3.0 + 1e-9, 4, 1e-6);
	assert_true(r.num == 2 && r.den == 3);
	assert_false(frac_valid(frac_from_double(0.123456, 4, 1e-6)));
	struct frac big = frac_make(INT64_MAX / 2, 1);
	assert_false(frac_valid(frac_mul(big, frac_make(5, 1))));
	assert_false(frac_valid(frac_add(big, frac_make(1, 0))));
	assert_string_equal(frac_str(frac_make(1, 0), buf, sizeof(buf)), "?");
}

/* ---- irregular graphs and link rates ---------------------------- */

/* A star 1 - 0 - 2 (not regular) by hand: step 1 every node hears its
 * neighbours, one shard per link (U = 1); step 2 the leaves hear each other
 * through 0, one shard on the leaf's only in-link (U = 1). The links run at
 * B/d with d = 2, the most any node has: tau_B = (2/3)(1 + 1) = 4/3. */
static void test_irregular_star(void **state)
{
	uint32_t t[] = {0, 0, 1, 2}, h[] = {1, 2, 0, 0};
	struct graph *g = graph_from_arcs(3, 4, t, h, "star");
	struct bfb_stats st;
	(void)state;

	for (int meth = BFB_AUTO; meth <= BFB_LP; meth++) {
		struct bfb_opts o = {.method = (enum bfb_method)meth};

		check_schedule(g, SCHED_ALLGATHER, &o, &st);
		assert_int_equal(st.degree, 2);
		assert_int_equal(st.steps, 2);
		assert_true(st.tau_b.num == 4 && st.tau_b.den == 3);
		assert_false(st.bw_optimal);
		check_schedule(g, SCHED_ALLREDUCE, &o, &st);
		assert_true(st.tau_b.num == 8 && st.tau_b.den == 3);
	}
	graph_free(g);
}

/* Equal rates reproduce the homogeneous schedule exactly: all rates 1 give
 * the same transfers as no rates, all rates r divide tau_B by r. */
static void test_rates_equal(void **state)
{
	const char *specs[] = {"torus:4x4", "genkautz:30,3", "hypercube:4", "line(genkautz:10,3)"};
	struct ofc_error err = {0};
	(void)state;

	for (size_t i = 0; i < ARRAY_SIZE(specs); i++) {
		struct graph *g = build(specs[i]);
		uint32_t *one = xmalloc(g->m * sizeof(uint32_t)),
			 *three = xmalloc(g->m * sizeof(uint32_t));

		for (uint32_t a = 0; a < g->m; a++) {
			one[a] = 1;
			three[a] = 3;
		}
		for (int meth = BFB_AUTO; meth <= BFB_LP; meth++) {
			struct bfb_opts o0 = {.method = (enum bfb_method)meth};
			struct bfb_opts o1 = {.method = (enum bfb_method)meth, .rate = one};
			struct bfb_opts o3 = {.method = (enum bfb_method)meth, .rate = three};
			struct schedule s0, s1;
			struct bfb_stats st0, st1, st3;

			assert_int_equal(bfb_schedule(g, SCHED_ALLREDUCE, &o0, &s0, &st0, &err), 0);
			assert_int_equal(bfb_schedule(g, SCHED_ALLREDUCE, &o1, &s1, &st1, &err), 0);
			assert_true(frac_cmp(st0.tau_b, st1.tau_b) == 0);
			assert_int_equal(s0.nsteps, s1.nsteps);
			assert_int_equal(s0.nxfers, s1.nxfers);
			assert_memory_equal(s0.xfers, s1.xfers, s0.nxfers * sizeof(struct xfer));
			assert_int_equal(bfb_schedule(g, SCHED_ALLREDUCE, &o3, NULL, &st3, &err),
					 0);
			assert_true(frac_cmp(frac_mul(st3.tau_b, frac_make(3, 1)), st0.tau_b) == 0);
			sched_free(&s0);
			sched_free(&s1);
		}
		free(one);
		free(three);
		graph_free(g);
	}
}

/* The independent LP: one model over every (u, t) at once, written from
 * Def. 15 with distances from the topology module: x[v, arc, t] for each arc
 * w -> u with d(v, u) = d(v, w) + 1 = t, every source delivered, each arc
 * carrying at most rate * U_t, minimise sum_t U_t. tau_B = (d/N) that sum. */
static double global_lp(const struct graph *g, const uint32_t *rate, uint32_t d)
{
	struct ofc_error err = {0};
	uint16_t *dist = topo_distances(g, 1, &err);
	uint32_t n = g->n, D = 0, *tail = graph_arc_tails(g);

	assert_non_null(dist);
	for (size_t i = 0; i < (size_t)n * n; i++)
		if (dist[i] > D)
			D = dist[i];
	/* column of (v, arc): arc's t is fixed by v (t = d(v, head)) */
	int *col = xmalloc((size_t)n * g->m * sizeof(int));
	int ncol = (int)D;
	for (uint32_t v = 0; v < n; v++)
		for (uint32_t a = 0; a < g->m; a++) {
			uint32_t w = tail[a], u = g->adj[a];

			col[(size_t)v * g->m + a] =
			    u != v && dist[(size_t)v * n + u] == dist[(size_t)v * n + w] + 1
				? ncol++
				: -1;
		}
	struct lp *lp = lp_new(ncol);
	int *cols = xmalloc(((size_t)ncol + 1) * sizeof(int));
	double *vals = xmalloc(((size_t)ncol + 1) * sizeof(double));
	for (uint32_t t = 0; t < D; t++)
		lp_set_obj_coef(lp, (int)t, 1.0);
	for (uint32_t v = 0; v < n; v++)
		for (uint32_t u = 0; u < n; u++) {
			int k = 0;

			if (u == v)
				continue;
			for (uint32_t a = 0; a < g->m; a++)
				if (g->adj[a] == u && col[(size_t)v * g->m + a] >= 0) {
					cols[k] = col[(size_t)v * g->m + a];
					vals[k++] = 1;
				}
			assert_true(k > 0);
			lp_add_row(lp, k, cols, vals, LP_EQ, 1.0);
		}
	for (uint32_t a = 0; a < g->m; a++)
		for (uint32_t t = 1; t <= D; t++) {
			int k = 0;

			for (uint32_t v = 0; v < n; v++)
				if (col[(size_t)v * g->m + a] >= 0 &&
				    dist[(size_t)v * n + g->adj[a]] == t) {
					cols[k] = col[(size_t)v * g->m + a];
					vals[k++] = 1;
				}
			if (!k)
				continue;
			cols[k] = (int)t - 1;
			vals[k++] = -(double)rate[a];
			lp_add_row(lp, k, cols, vals, LP_LE, 0.0);
		}
	assert_int_equal(lp_solve(lp, &err), LP_OPTIMAL);
	double *x = xmalloc((size_t)ncol * sizeof(double)), sum = 0;
	lp_solution(lp, x);
	for (uint32_t t = 0; t < D; t++)
		sum += x[t];
	free(x);
	lp_free(lp);
	free(cols);
	free(vals);
	free(col);
	free(tail);
	free(dist);
	return sum * d / n;
}

/* Mixed rates on small graphs, regular and degraded: every method's exact
 * tau_B equals the independent LP's optimum, and the schedule itself, its
 * per-step loads divided by each link's rate, costs exactly that. */
static void test_rates_vs_lp(void **state)
{
	const char *specs[] = {"torus:3x3", "genkautz:12,3", "circulant:10:1,3", "torus:4x4"};
	const char *fails[] = {NULL, NULL, "0-1", "0-1,5-6,2>3"};
	struct ofc_error err = {0};
	(void)state;

	for (size_t i = 0; i < ARRAY_SIZE(specs); i++) {
		struct graph *h = build(specs[i]), *g = h;

		if (fails[i]) {
			assert_int_equal(topo_fail_links(h, fails[i], &g, &err), 0);
			assert_int_equal(g->m, h->m - (strchr(fails[i], '>') ? 5 : 2));
		}
		uint32_t *rate = xmalloc(g->m * sizeof(uint32_t)), *tail = graph_arc_tails(g);
		uint64_t seed = 7 + i;
		for (uint32_t a = 0; a < g->m; a++) {
			seed = seed * 6364136223846793005ull + 1442695040888963407ull;
			rate[a] = 1 + (uint32_t)(seed >> 33) % 4; /* 25G .. 100G */
		}
		for (int meth = BFB_AUTO; meth <= BFB_LP; meth++) {
			struct bfb_opts o = {.method = (enum bfb_method)meth, .rate = rate};
			struct bfb_stats st;
			struct schedule s;
			struct verify_report r;
			struct verify_opts vo = {.graph = g};

			assert_int_equal(bfb_schedule(g, SCHED_ALLGATHER, &o, &s, &st, &err), 0);
			assert_int_equal(sched_verify(&s, &vo, &r), 0);
			double lp = global_lp(g, rate, st.degree);
			if (fabs(st.tau_b_value - lp) > 1e-6)
				fail_msg("%s (method %d): BFB %.9f, global LP %.9f", g->spec, meth,
					 st.tau_b_value, lp);
			/* The transfers themselves: sum over steps of the busiest
			 * link's load over its rate. */
			double *load = xmalloc(g->m * sizeof(double)), sum = 0;
			for (uint32_t k = 0; k < s.nsteps; k++) {
				double worst = 0;

				memset(load, 0, g->m * sizeof(double));
				for (uint32_t x = s.step_start[k]; x < s.step_start[k + 1]; x++) {
					const struct xfer *t = &s.xfers[x];
					uint32_t a = g->off[t->src] + t->lane;

					assert_int_equal(tail[a], t->src);
					assert_int_equal(g->adj[a], t->dst);
					load[a] += sched_frac(t->length);
				}
				for (uint32_t a = 0; a < g->m; a++)
					if (load[a] / rate[a] > worst)
						worst = load[a] / rate[a];
				sum += worst;
			}
			assert_true(fabs(sum * st.degree / g->n - lp) < 1e-6);
			free(load);
			sched_free(&s);
		}
		free(rate);
		free(tail);
		if (g != h)
			graph_free(g);
		graph_free(h);
	}
}

/* NIC-limited hosts, by hand on K_{2,3} (a0 = 0, a1 = 1 joined
 * both ways to b0..b2 = 2..4; d = 3, N = 5, diameter 2). Injection in
 * links: a0 1, a1 3, the b's 2 (their own two links: never binding).
 * Step 1: a0 sends its shard to three b's, 3 / 1 = 3 (the links: 1).
 * Step 2: the b's need each other's shards (2 each, 6 in all) from the
 * a's; a0 sends x, a1 6 - x; link a1 -> b_j carries 2 - y_j <= T with
 * sum y_j = x, so x >= 6 - 3T, x <= T (a0) and 6 - x <= 3T (a1): T = 3/2,
 * x = 3/2 (the b's send a0 and a1 each other's shard in thirds: 2/3 each,
 * within 2T). LP (3) alone balances each b's in-links, x = 3, which a0
 * needs 3 for. tau_B = (3/5)(3 + 3/2) = 27/10 against (3/5)(1 + 1) = 6/5.
 * NIC forwarding: step 2 relays skip the hosts, (3/5)(3 + 1) = 12/5.
 * Reduce-scatter, the reverse: in its step 1 every host sends its partial
 * sums of the shards two hops away (a0: a1's, one; b's: the other two
 * b's, two), step 2 every shard to its owner's neighbours: a0 sends 3
 * shards at 1 = 3, so (3/5)(1 + 3) = 12/5. Allreduce: both. Hosts that
 * drive all their links leave the schedule as it was, transfer for
 * transfer. */
static void test_host_injection(void **state)
{
	const uint32_t tails[] = {0, 0, 0, 1, 1, 1, 2, 2, 3, 3, 4, 4};
	const uint32_t heads[] = {2, 3, 4, 2, 3, 4, 0, 1, 0, 1, 0, 1};
	struct graph *g = graph_from_arcs(5, 12, tails, heads, "K2,3");
	struct frac inj[5] = {frac_make(1, 1), frac_make(3, 1), frac_make(2, 1), frac_make(2, 1),
			      frac_make(2, 1)};
	struct bfb_opts o = {.inject = inj, .threads = 1};
	struct schedule s, plain;
	struct bfb_stats st, pst;
	struct ofc_error err = {0};
	struct verify_report r;
	struct verify_opts vo = {.graph = g};
	char buf[32];
	(void)state;

	assert_int_equal(bfb_schedule(g, SCHED_ALLGATHER, &o, &s, &st, &err), 0);
	assert_string_equal(frac_str(st.tau_b, buf, sizeof(buf)), "27/10");
	assert_int_equal(st.host_steps, 2);
	assert_int_equal(st.host_solved, 2);
	assert_int_equal(sched_verify(&s, &vo, &r), 0);
	/* Step by step: no host sends more than its injection x the step's
	 * time (3, then 3/2), no link more than the time. */
	const double T[2] = {3, 1.5};
	for (uint32_t t = 0; t < 2; t++) {
		double out[5] = {0};

		for (size_t i = s.step_start[t]; i < s.step_start[t + 1]; i++)
			out[s.xfers[i].src] += (double)s.xfers[i].length / SCHED_ONE;
		for (uint32_t v = 0; v < 5; v++)
			assert_true(out[v] <= frac_value(inj[v]) * T[t] + 1e-6);
		if (t == 1)
			assert_true(fabs(out[0] - 1.5) < 1e-6 && fabs(out[1] - 4.5) < 1e-6);
	}
	sched_free(&s);

	o.nic_forwarding = true;
	assert_int_equal(bfb_schedule(g, SCHED_ALLGATHER, &o, &s, &st, &err), 0);
	assert_string_equal(frac_str(st.tau_b, buf, sizeof(buf)), "12/5");
	assert_int_equal(sched_verify(&s, &vo, &r), 0);
	sched_free(&s);
	o.nic_forwarding = false;

	assert_int_equal(bfb_schedule(g, SCHED_REDUCE_SCATTER, &o, &s, &st, &err), 0);
	assert_string_equal(frac_str(st.tau_b, buf, sizeof(buf)), "12/5");
	assert_int_equal(st.host_solved, 0);
	assert_int_equal(sched_verify(&s, &vo, &r), 0);
	sched_free(&s);
	assert_int_equal(bfb_schedule(g, SCHED_ALLREDUCE, &o, &s, &st, &err), 0);
	assert_string_equal(frac_str(st.tau_b, buf, sizeof(buf)), "51/10");
	assert_int_equal(sched_verify(&s, &vo, &r), 0);
	sched_free(&s);

	/* Injection at (or above) every host's links: byte for byte. */
	for (uint32_t v = 0; v < 5; v++)
		inj[v] = frac_make(v < 2 ? 3 : 2, 1);
	struct bfb_opts none = {.threads = 1};
	for (int c = SCHED_ALLGATHER; c <= SCHED_ALLREDUCE; c++) {
		assert_int_equal(bfb_schedule(g, c, &o, &s, &st, &err), 0);
		assert_int_equal(bfb_schedule(g, c, &none, &plain, &pst, &err), 0);
		assert_int_equal(s.nxfers, plain.nxfers);
		assert_memory_equal(s.xfers, plain.xfers, s.nxfers * sizeof(struct xfer));
		assert_int_equal(frac_cmp(st.tau_b, pst.tau_b), 0);
		assert_int_equal(st.host_steps, 0);
		sched_free(&s);
		sched_free(&plain);
	}
	/* What it does not model is refused. */
	o.method = BFB_LP;
	assert_int_equal(bfb_schedule(g, SCHED_ALLGATHER, &o, &s, &st, &err), -1);
	assert_non_null(strstr(err.msg, "host injection limits"));
	graph_free(g);
}

/* Clp: BFB's LP (3) on Clp's models gives the tau_B the exact
 * methods give, on the graphs the tests above use (allgather and allreduce;
 * verified with unit links, and with link rates LP (13)'s figure). */
static void test_lp_clp(void **state)
{
	const char *specs[] = {"torus:4x4", "genkautz:30,3", "hypercube:4", "line(genkautz:10,3)",
			       "kautz:2,3"};
	struct ofc_error err = {0};
	(void)state;

	for (size_t i = 0; i < ARRAY_SIZE(specs); i++) {
		struct graph *g = build(specs[i]);
		uint32_t *rate = xmalloc(g->m * sizeof(uint32_t));

		for (uint32_t a = 0; a < g->m; a++)
			rate[a] = 1 + a % 3;
		for (int r = 0; r < 2; r++) {
			struct bfb_opts ex = {.rate = r ? rate : NULL};
			struct bfb_opts clp = {
			    .method = BFB_LP, .lp_solver = LP_SOLVER_CLP, .rate = r ? rate : NULL};
			struct bfb_stats se, sc;

			for (int c = SCHED_ALLGATHER; c <= SCHED_ALLREDUCE; c += 2) {
				assert_int_equal(bfb_schedule(g, c, &ex, NULL, &se, &err), 0);
				if (r) /* (the verifier here prices unit links) */
					assert_int_equal(bfb_schedule(g, c, &clp, NULL, &sc, &err),
							 0);
				else
					check_schedule(g, c, &clp, &sc);
				if (frac_cmp(se.tau_b, sc.tau_b) != 0)
					fail_msg("%s: Clp tau_B %lld/%lld, exact %lld/%lld",
						 specs[i], (long long)sc.tau_b.num,
						 (long long)sc.tau_b.den, (long long)se.tau_b.num,
						 (long long)se.tau_b.den);
			}
		}
		free(rate);
		graph_free(g);
	}
}

/* A patch's planned blocks (bfb_view_gather's tail): each step's pieces
 * worker by worker, each worker's in the order written, across chunk
 * boundaries, after the steps the schedule already held; the buffers
 * emptied as they are copied. */
static void test_gather_tail(void **state)
{
	(void)state;
	enum { D = 3, NW = 2 };
	/* worker k's pieces at step so: more than a chunk in one of them */
	const size_t count[NW][D] = {{5, 0, PIECEBUF_XFERS + 7}, {PIECEBUF_XFERS * 2, 3, 1}};
	struct bfb_opts o = {.threads = 2};
	struct view vw = {.D = D, .o = &o};
	struct piecebuf tail[NW * D];
	struct schedule s;
	struct xfer first = {.src = 1, .dst = 2, .length = SCHED_ONE};

	memset(tail, 0, sizeof(tail));
	for (unsigned k = 0; k < NW; k++)
		for (uint32_t so = 0; so < D; so++)
			for (size_t i = 0; i < count[k][so]; i++)
				*piecebuf_put(&tail[k * D + so]) = (struct xfer){
				    .src = (uint16_t)k, .dst = (uint16_t)so, .block = (uint32_t)i};
	assert_int_equal(piecebuf_count(&tail[D + 0]), PIECEBUF_XFERS * 2);
	sched_init(&s, SCHED_ALLGATHER, "bfb", 4);
	sched_add(&s, &first);
	bfb_view_gather(&vw, &s, tail, NW);
	assert_int_equal(s.nsteps, 1 + D);
	assert_memory_equal(&s.xfers[0], &first, sizeof(first));
	for (uint32_t so = 0; so < D; so++) {
		size_t at = s.step_start[1 + so];

		assert_int_equal(s.step_start[2 + so] - at, count[0][so] + count[1][so]);
		for (unsigned k = 0; k < NW; k++)
			for (size_t i = 0; i < count[k][so]; i++, at++) {
				assert_int_equal(s.xfers[at].src, k);
				assert_int_equal(s.xfers[at].dst, so);
				assert_int_equal(s.xfers[at].block, i);
			}
	}
	for (unsigned b = 0; b < NW * D; b++) {
		assert_int_equal(tail[b].nchunk, 0);
		assert_null(tail[b].chunk);
	}
	sched_free(&s);
}

/* collect's keyed grouping (two counting passes) gives the groups the sort
 * does, so the same schedule, transfer for transfer: healthy, a
 * non-torus, and a degraded torus (each node's problem its own). */
static void test_keyed_groups_same(void **state)
{
	(void)state;
	const char *specs[] = {"torus:8x8", "genkautz:64,4", "torus:6x6"};
	const char *fails[] = {NULL, NULL, "0-1,8-9,2>3"};

	for (int i = 0; i < 3; i++)
		for (int c = 0; c < 2; c++) {
			enum sched_collective col = c ? SCHED_ALLREDUCE : SCHED_ALLGATHER;
			struct graph *h = build(specs[i]), *g = h;
			struct ofc_error err = {0};
			struct schedule s[2];
			struct bfb_stats st[2];

			if (fails[i] && topo_fail_links(h, fails[i], &g, &err) < 0)
				fail_msg("%s less %s: %s", specs[i], fails[i], err.msg);
			for (int k = 0; k < 2; k++) {
				struct bfb_opts o = {.threads = 1, .sort_groups = k == 1};

				if (bfb_schedule(g, col, &o, &s[k], &st[k], &err) < 0)
					fail_msg("%s: %s", specs[i], err.msg);
			}
			assert_int_equal(s[0].nsteps, s[1].nsteps);
			assert_int_equal(s[0].nxfers, s[1].nxfers);
			assert_memory_equal(s[0].step_start, s[1].step_start,
					    (s[0].nsteps + 1) * sizeof(s[0].step_start[0]));
			assert_memory_equal(s[0].xfers, s[1].xfers,
					    s[0].nxfers * sizeof(struct xfer));
			assert_true(st[0].tau_b.num * st[1].tau_b.den ==
				    st[1].tau_b.num * st[0].tau_b.den);
			sched_free(&s[0]);
			sched_free(&s[1]);
			if (g != h)
				graph_free(g);
			graph_free(h);
		}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_fractions),
	    cmocka_unit_test(test_known_values),
	    cmocka_unit_test(test_fig5_lp),
	    cmocka_unit_test(test_methods_agree_random),
	    cmocka_unit_test(test_methods_agree_schedules),
	    cmocka_unit_test(test_reduce_scatter_by_reversal),
	    cmocka_unit_test(test_chunks),
	    cmocka_unit_test(test_figures_only),
	    cmocka_unit_test(test_errors),
	    cmocka_unit_test(test_irregular_star),
	    cmocka_unit_test(test_rates_equal),
	    cmocka_unit_test(test_lp_clp),
	    cmocka_unit_test(test_rates_vs_lp),
	    cmocka_unit_test(test_host_injection),
	    cmocka_unit_test(test_gather_tail),
	    cmocka_unit_test(test_keyed_groups_same),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
