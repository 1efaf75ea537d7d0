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
#include <unistd.h>

#include "controller/config/config.h"
#include "controller/reconfig/reconfig.h"
#include "tests/unit/sim_world.h"
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
	uint32_t n = t->n, p[8] = {0}, c[8] = {0};
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

/* Part of a random regular digraph's arcs (each kept with probability
 * 1/2), on shuffled nodes: the current wiring of hosts that hold some
 * circuits of earlier jobs and not others. */
static struct graph *random_part(uint32_t n, uint32_t d, uint64_t *seed)
{
	struct graph *g = random_regular(n, d, seed);
	uint32_t *tails = graph_arc_tails(g), heads[64], k = 0;

	for (uint32_t a = 0; a < g->m; a++)
		if (next(seed) % 2) {
			tails[k] = tails[a];
			heads[k++] = g->adj[a];
		}
	struct graph *r = graph_from_arcs(n, k, tails, heads, "part");
	free(tails);
	graph_free(g);
	return r;
}

/* The upper bound is one (no mapping keeps more), the search reaches the
 * best count on every small case, and when it says optimal that is the
 * best count. Whatever stops it, the clock does not here. */
static void test_partial_wiring_reaches_the_optimum(void **state)
{
	uint64_t seed = 51;
	uint32_t optimal = 0;
	(void)state;

	for (int round = 0; round < 24; round++) {
		struct graph *cur = random_part(8, 3, &seed), *t = random_regular(8, 3, &seed);
		struct relabel_result r;
		uint64_t best = best_by_brute_force(cur, t);

		relabel(cur, t, 200, &r);
		assert_int_equal(r.kept, best);
		assert_true(best <= r.bound);
		assert_true(r.optimal == (r.kept == r.bound));
		assert_false(r.deadline);
		optimal += r.optimal;
		relabel_result_free(&r);
		graph_free(cur);
		graph_free(t);
	}
	assert_true(optimal > 0); /* the bound is met often on sparse wiring */
}

/* Hosts that hold nothing among themselves, or a few links the target can
 * take whole: the answer is optimal at once, with no greedy round (a
 * prolog's search used to spend its whole budget on them). */
static void test_bound_stops_the_search(void **state)
{
	struct graph *t = build("torus:16x16"), *none = graph_from_arcs(256, 0, NULL, NULL, "none");
	uint32_t tails[] = {3, 4, 5}, heads[] = {4, 5, 6};
	struct graph *path = graph_from_arcs(256, 3, tails, heads, "path");
	struct relabel_opts o = {.budget_s = 60, .seed = 7};
	struct relabel_result r;
	struct ofc_error err = {0};
	(void)state;

	assert_int_equal(topo_relabel(none, t, &o, &r, &err), 0);
	assert_true(r.optimal);
	assert_false(r.deadline);
	assert_int_equal(r.bound, 0);
	assert_int_equal(r.rounds, 0);
	relabel_result_free(&r);

	assert_int_equal(topo_relabel(path, t, &o, &r, &err), 0);
	assert_true(r.optimal);
	assert_false(r.deadline);
	assert_int_equal(r.kept, 3);
	assert_int_equal(topo_relabel_kept(path, t, r.map), 3);
	assert_true(r.rounds <= 2);
	relabel_result_free(&r);
	graph_free(path);
	graph_free(none);
	graph_free(t);
}

/* torus:32x32's wiring renumbered for genkautz:1024,4, two graphs the
 * bound cannot settle, under o, whose clock stops the search: into r the
 * best found so far (a bijection, never below the identity, counted
 * right), and r says the clock stopped it. */
static void stopped_by_the_clock(const struct relabel_opts *o, struct relabel_result *r)
{
	struct graph *cur = build("torus:32x32"), *t = build("genkautz:1024,4");
	struct ofc_error err = {0};

	assert_int_equal(topo_relabel(cur, t, o, r, &err), 0);
	assert_true(r->deadline);
	assert_bijection(r->map, t->n);
	assert_int_equal(topo_relabel_kept(cur, t, r->map), r->kept);
	assert_true(r->kept >= r->kept_identity);
	graph_free(cur);
	graph_free(t);
}

/* A budget far too short: the answer is the best found so far. */
static void test_deadline_returns_the_best_so_far(void **state)
{
	struct relabel_opts o = {.budget_s = 1e-6, .seed = 7};
	struct relabel_result r;
	(void)state;

	stopped_by_the_clock(&o, &r);
	assert_false(r.optimal);
	assert_true(r.kept < r.bound);
	relabel_result_free(&r);
}

/* A budget cut while the search runs (relabel_opts.cut_us, which ofcd
 * writes into its planner's page as a burst of jobs comes): the search
 * ends at the cut, not at its budget's end, with the best found so far.
 * Cut before it starts, the budget of a minute ends at once. */
static void test_cut_ends_the_search(void **state)
{
	volatile int32_t cut = 1; /* microseconds */
	struct relabel_opts o = {.budget_s = 60, .seed = 7, .cut_us = &cut};
	struct relabel_result r;
	(void)state;

	stopped_by_the_clock(&o, &r);
	assert_false(r.iso);
	assert_true(r.rounds <= 1);
	assert_true(r.seconds < 30);
	relabel_result_free(&r);
}

/* The greedy's gap: a shuffled generalized Kautz graph of 1024 nodes (groups
 * of nodes share their out-neighbours, which the greedy cannot read) is
 * recognised by the isomorphism search, every link kept. The budget is the
 * search's clock, not a claim on its speed (bench/relabel.c measures
 * that): at 5 s it ran out under a loaded machine's twenty processes. */
static void test_large_genkautz_copy_found(void **state)
{
	static const char *const specs[] = {"genkautz:1024,4", "genkautz:1000,3", "kautz:4,4"};
	uint64_t seed = 1234;
	(void)state;

	for (size_t i = 0; i < sizeof(specs) / sizeof(specs[0]); i++) {
		struct graph *t = build(specs[i]);
		uint32_t *p = malloc(t->n * 4);
		struct relabel_opts o = {.budget_s = 300, .seed = 7};
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

/* ---- a fabric's plan: never more operations than the config's numbering --
 * With the switches holding a torus:4x8 and a circulant:32:1,4
 * side by side, `ofc plan torus64.yaml --relabel` planned 496 operations
 * where the config's numbering needed 304 (the search kept 208 links
 * between hosts, the ports 8 of them). Every plan below is made twice
 * through the transaction engine over a sim switch, with and without
 * ctl_relabel (ctl_partition with and without a relabelling), from many
 * states the switch may hold; the relabelled plan is never longer, and the
 * report's counts are the plan's (operations = cross-connects held + the
 * target's - 2 x those kept, each change a removal and an addition). */

#define HOSTS	64
#define SWPORTS 256

static const char fab_fmt[] = "name: relabelfab\n"
			      "hosts: {count: 64, prefix: h, ports: 4}\n"
			      "switches:\n"
			      "  - {name: ocs0, type: ocs, ports: 256, driver: {type: sim}}\n"
			      "wiring: {pattern: sequential, switches: [ocs0]}\n"
			      "%s\n";

struct bench {
	char dir[64];
	struct sim_device sim;
};

static struct sim_device *bench_lookup(void *ctx, const char *name)
{
	struct bench *b = ctx;

	return strcmp(name, "ocs0") == 0 ? &b->sim : NULL;
}

static struct fabric *fabric_of(const char *body)
{
	return test_fabricf("relabel.yaml", fab_fmt, body);
}

/* jobA on h0..h31, jobB on h32..h63. */
static struct fabric *partitioned(const char *a, const char *b)
{
	struct strbuf x = STRBUF_INIT, y = STRBUF_INIT;

	for (int h = 0; h < 32; h++) {
		sb_printf(&x, "%sh%d", h ? ", " : "", h);
		sb_printf(&y, "%sh%d", h ? ", " : "", h + 32);
	}
	char *body = xasprintf("partitions:\n"
			       "  - {name: jobA, hosts: [%s], topology: '%s'}\n"
			       "  - {name: jobB, hosts: [%s], topology: '%s'}",
			       x.buf, a, y.buf, b);
	struct fabric *f = fabric_of(body);

	free(body);
	sb_free(&x);
	sb_free(&y);
	return f;
}

static struct ctl *bench_ctl(struct bench *b, struct fabric *f)
{
	struct ctl_opts o = {.state_dir = b->dir, .sim_lookup = bench_lookup, .ctx = b};
	struct ofc_error err = {0};
	struct ctl *c;

	assert_int_equal(ctl_open(f, &o, &c, &err), 0);
	if (ctl_plan(c, &err) < 0)
		fail_msg("plan: %s", err.msg);
	return c;
}

/* What f wants the switch to hold. */
static void target_state(struct bench *b, struct fabric *f, struct device_state *out)
{
	struct ctl *c = bench_ctl(b, f);

	state_init(out, DEV_SWITCH);
	state_copy(out, &c->devs[0].target);
	ctl_close(c);
}

/* The cross-connects held with in or out in [lo, hi]. */
static uint32_t held_in(const struct device_state *s, uint32_t lo, uint32_t hi)
{
	uint32_t k = 0;

	for (uint32_t i = 0; i < s->nxc; i++)
		k += (s->xc[i].in >= lo && s->xc[i].in <= hi) ||
		     (s->xc[i].out >= lo && s->xc[i].out <= hi);
	return k;
}

/* The plan for f (partition name or NULL) from the sim's state, with and
 * without a relabelling: never longer relabelled, and the report's counts
 * are the plan's. */
static void check_plan(struct bench *b, struct fabric *f, const char *partition, const char *what)
{
	struct relabel_opts ro = {.budget_s = 0.05, .max_rounds = 4, .seed = 3};
	struct fabric_relabel rep;
	struct ofc_error err = {0};
	const struct partition *p = partition ? fabric_find_partition(f, partition) : NULL;
	uint32_t lo = 1, hi = SWPORTS;

	if (p) { /* jobA's hosts are on ports 1..128, jobB's on 129..256 */
		lo = p->member_host[0] < 32 ? 1 : 129;
		hi = lo + 127;
	}
	struct ctl *c = bench_ctl(b, f);
	if (p && ctl_partition(c, p, NULL, NULL, NULL, NULL, &err) < 0)
		fail_msg("%s %s: %s", what, partition, err.msg);
	uint32_t plain = ctl_plan_size(c);
	ctl_close(c);

	c = bench_ctl(b, f);
	int rc = p ? ctl_partition(c, p, &relabel_direct, NULL, &ro, &rep, &err)
		   : ctl_relabel(c, &relabel_direct, NULL, &ro, &rep, &err);
	if (rc < 0)
		fail_msg("%s %s: %s", what, partition ? partition : "", err.msg);
	uint32_t relabelled = ctl_plan_size(c), held = held_in(&b->sim.state, lo, hi);
	ctl_close(c);
	if (relabelled > plain)
		fail_msg("%s%s%s: %u operations relabelled, %u with the config's numbering", what,
			 p ? " " : "", p ? partition : "", relabelled, plain);
	assert_true(rep.kept >= rep.kept_identity);
	assert_int_equal(relabelled, held + rep.arcs - 2 * rep.kept);
	assert_int_equal(plain, held + rep.arcs - 2 * rep.kept_identity);
	assert_true(rep.complete == (rep.kept == rep.arcs));
}

static uint64_t rnd(uint64_t *x)
{
	return next(x);
}

/* Cross-connects of s kept each with probability 1/2 (a switch that lost
 * some). */
static void thin(struct device_state *s, uint64_t *seed)
{
	uint32_t k = 0;

	for (uint32_t i = 0; i < s->nxc; i++)
		if (rnd(seed) % 2)
			s->xc[k++] = s->xc[i];
	s->nxc = k;
}

/* A random switch: ports lo..hi joined in random pairs, in to out, each
 * port used once each way, about 3 in 4 of them connected. */
static void random_state(struct device_state *s, uint32_t lo, uint32_t hi, uint64_t *seed)
{
	uint32_t n = hi - lo + 1, *p = malloc(n * sizeof(uint32_t));

	shuffle(p, n, seed);
	for (uint32_t i = 0; i < n; i++)
		if (p[i] != i && rnd(seed) % 4)
			state_add_xconn(s, lo + i, lo + p[i]);
	free(p);
}

/* s with hosts renamed by a random permutation (port 1 + 4h + j of host h
 * to the same port of host p[h]) within lo..hi: a relabelled copy. */
static void shuffle_hosts(struct device_state *s, uint32_t lo, uint32_t hi, uint64_t *seed)
{
	uint32_t nh = (hi - lo + 1) / 4, p[HOSTS];

	shuffle(p, nh, seed);
	for (uint32_t i = 0; i < s->nxc; i++) {
		uint32_t *ends[2] = {&s->xc[i].in, &s->xc[i].out};

		for (int e = 0; e < 2; e++)
			if (*ends[e] >= lo && *ends[e] <= hi) {
				uint32_t q = *ends[e] - lo;

				*ends[e] = lo + 4 * p[q / 4] + q % 4;
			}
	}
	state_sort(s);
}

/* Circuits of s from lo..hi with k random pairs of egress ports traded. */
static void disturb(struct device_state *s, uint32_t lo, uint32_t hi, uint32_t k, uint64_t *seed)
{
	for (uint32_t i = 0; s->nxc > 1 && i < k; i++) {
		uint32_t a = (uint32_t)(rnd(seed) % s->nxc), c = (uint32_t)(rnd(seed) % s->nxc);
		uint32_t t = s->xc[a].out;

		if (s->xc[a].in < lo || s->xc[a].in > hi || s->xc[c].in < lo || s->xc[c].in > hi ||
		    s->xc[c].out == s->xc[a].in || t == s->xc[c].in)
			continue;
		s->xc[a].out = s->xc[c].out;
		s->xc[c].out = t;
	}
}

/* s's circuits from port 0 of its hosts in lo..hi as they are; those from
 * ports 1..3 on hosts renamed by a random permutation, each arriving on the
 * next port of 1..3 (cross-connects joining different port numbers, by
 * hand or another controller's). The links between hosts favour the
 * renamed copy, three to one, but no circuit can keep its cross-connects:
 * the search's numbering loses to the config's. */
static void cross_ports(struct device_state *s, uint32_t lo, uint32_t hi, uint64_t *seed)
{
	uint32_t nh = (hi - lo + 1) / 4, p[HOSTS];

	shuffle(p, nh, seed);
	for (uint32_t i = 0; i < s->nxc; i++) {
		uint32_t in = s->xc[i].in - lo, out = s->xc[i].out - lo;

		if (s->xc[i].in < lo || s->xc[i].in > hi || in % 4 == 0)
			continue;
		s->xc[i].in = lo + 4 * p[in / 4] + in % 4;
		s->xc[i].out = lo + 4 * p[out / 4] + out % 4 % 3 + 1;
	}
	state_sort(s);
}

/* The states a switch may hold when f (or its partition) is planned:
 * others' targets, whole or thinned, random ones, f's own shuffled,
 * disturbed or half renamed across ports, none. Each is checked with check_plan. */
static void check_states(struct bench *b, struct fabric *f, const char *partition,
			 const struct device_state *other, uint32_t nother)
{
	uint32_t lo = 1, hi = SWPORTS;
	uint64_t seed = 35;
	struct device_state own;

	if (partition) {
		lo = fabric_find_partition(f, partition)->member_host[0] < 32 ? 1 : 129;
		hi = lo + 127;
	}
	target_state(b, f, &own);
	for (uint32_t i = 0; i < nother; i++) {
		state_copy(&b->sim.state, &other[i]);
		check_plan(b, f, partition, "another target");
		for (int k = 0; k < 2; k++) {
			state_copy(&b->sim.state, &other[i]);
			thin(&b->sim.state, &seed);
			check_plan(b, f, partition, "another target, thinned");
		}
	}
	for (int k = 0; k < 3; k++) {
		state_clear(&b->sim.state);
		if (partition) /* the other half as f wants it */
			for (uint32_t i = 0; i < own.nxc; i++)
				if (own.xc[i].in < lo || own.xc[i].in > hi)
					state_add_xconn(&b->sim.state, own.xc[i].in, own.xc[i].out);
		random_state(&b->sim.state, lo, hi, &seed);
		state_sort(&b->sim.state);
		check_plan(b, f, partition, "random");
	}
	for (int k = 0; k < 2; k++) {
		state_copy(&b->sim.state, &own);
		shuffle_hosts(&b->sim.state, lo, hi, &seed);
		check_plan(b, f, partition, "own target, hosts shuffled");
		state_copy(&b->sim.state, &own);
		disturb(&b->sim.state, lo, hi, 12, &seed);
		state_sort(&b->sim.state);
		check_plan(b, f, partition, "own target, disturbed");
	}
	state_copy(&b->sim.state, &own);
	cross_ports(&b->sim.state, lo, hi, &seed);
	check_plan(b, f, partition, "own target on port 0, a renamed copy across ports");
	state_clear(&b->sim.state);
	if (!partition)
		check_plan(b, f, partition, "empty");
	state_free(&own);
}

static void test_plan_never_longer_relabelled(void **state)
{
	static const char *const whole[] = {
	    "topology: torus:8x8",
	    "topology: circulant:64:3,8",
	    "topology: genkautz:64,4",
	    "topology: {spec: 'torus:8x8', failed_links: [[h0, h1]], failed_hosts: [h9]}",
	};
	struct bench b;
	struct device_state other[3];
	(void)state;

	test_state_dir(b.dir, sizeof(b.dir), "relabel");
	sim_device_init(&b.sim, DEV_SWITCH, SWPORTS);
	struct fabric *part = partitioned("torus:4x8", "circulant:32:1,4");
	struct fabric *part2 = partitioned("circulant:32:1,3", "torus:4x8");
	struct fabric *ring = fabric_of("topology: circulant:64:1,2");

	target_state(&b, part, &other[0]); /* the issue's */
	target_state(&b, part2, &other[1]);
	target_state(&b, ring, &other[2]);
	for (size_t i = 0; i < sizeof(whole) / sizeof(whole[0]); i++) {
		struct fabric *f = fabric_of(whole[i]);

		check_states(&b, f, NULL, other, 3);
		fabric_free(f);
	}
	/* partitions: states that keep each partition's cross-connects among
	 * its own ports (a plan refuses one that straddles) */
	check_states(&b, part, "jobA", other, 2);
	check_states(&b, part, "jobB", other, 2);
	check_states(&b, part2, "jobA", other, 2);
	for (int i = 0; i < 3; i++)
		state_free(&other[i]);
	fabric_free(part);
	fabric_free(part2);
	fabric_free(ring);
	sim_device_free(&b.sim);
	test_state_dir_remove(b.dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_relabelled_copy_needs_no_move),
	    cmocka_unit_test(test_circulant_to_torus_saves_moves),
	    cmocka_unit_test(test_small_graphs_reach_the_optimum),
	    cmocka_unit_test(test_partial_wiring_reaches_the_optimum),
	    cmocka_unit_test(test_bound_stops_the_search),
	    cmocka_unit_test(test_deadline_returns_the_best_so_far),
	    cmocka_unit_test(test_cut_ends_the_search),
	    cmocka_unit_test(test_large_genkautz_copy_found),
	    cmocka_unit_test(test_no_isomorphism_between_different_graphs),
	    cmocka_unit_test(test_size_mismatch_refused),
	    cmocka_unit_test(test_plan_never_longer_relabelled),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
