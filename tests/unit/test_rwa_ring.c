/* Ring RWA: tilings, exact interval colouring, the circular heuristic, the
 * ILP against exhaustive search, bounds, and demand files. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <math.h>

#include "rwa/rwa.h"

static uint64_t rng_state = 0x0fc0fc0fcull;

static uint32_t rnd(uint32_t n)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (uint32_t)(rng_state % n);
}

/* Load of one direction of an all-to-all on n nodes routed shortest-way,
 * antipodal pairs shared evenly: sum of lengths below n/2 plus n/4. */
static uint32_t a2a_load(uint32_t n)
{
	uint32_t s = 0;

	for (uint32_t d = 1; 2 * d < n; d++)
		s += d;
	return s + (n % 2 == 0 ? (n / 2 + 1) / 2 : 0);
}

static void test_circulant_all_to_all(void **state)
{
	struct ofc_error err = {0};
	(void)state;

	for (uint32_t n = 2; n <= 40; n++) {
		struct rwa_ring ring = {n, 1, 1};
		struct rwa_demand *dem;
		size_t nd;
		struct rwa_solution sol = {0};
		struct rwa_opts o = {RWA_ENGINE_HEURISTIC, RWA_MIN_WAVELENGTHS, 0};
		struct rwa_report rep;

		rwa_all_to_all(n, &dem, &nd);
		assert_int_equal(rwa_solve(&ring, dem, nd, &o, &sol, &rep, &err), 0);
		assert_int_equal(rwa_check(&ring, dem, nd, &sol, false, &err), 0);
		/* Tilings reach the load whenever every length bundles. */
		uint32_t used = rep.wavelengths_used;
		assert_true(used >= a2a_load(n) - (n % 4 == 2 ? 1 : 0));
		assert_true(used >= rep.lower_bound);
		if (n % 8 == 0)
			assert_int_equal(used, n * n / 8); /* Lemma 1 of OpTree */
		free(dem);
		rwa_solution_free(&sol);
	}
}

static void test_circulant_optree_stage(void **state)
{
	struct ofc_error err = {0};
	(void)state;

	/* Stage 1 of OpTree on N = m * s: offsets s, 2s, ..., (m-1)s; every
	 * even m tiles to exactly N*m/8 colours per direction. */
	static const uint32_t cases[][2] = {{16, 4},  {16, 2},	 {64, 8},  {1024, 4}, {96, 12},
					    {60, 10}, {112, 14}, {64, 16}, {48, 6}};
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		uint32_t n = cases[c][0], m = cases[c][1], s = n / m, ofs[64], col[3];
		struct rwa_solution sol = {0};

		for (uint32_t t = 1; t < m; t++)
			ofs[t - 1] = t * s;
		rwa_circulant(n, ofs, m - 1, &sol);
		rwa_circulant_colours(n, ofs, m - 1, col);
		assert_int_equal(col[RWA_CW], sol.colours[RWA_CW]);
		assert_int_equal(col[RWA_CCW], sol.colours[RWA_CCW]);
		uint32_t want = n * m / 8, got = col[1] > col[2] ? col[1] : col[2];
		if ((n / 2) % 2) /* an odd number of antipodal pairs */
			want++;
		assert_int_equal(got, want);

		/* The runs are a valid assignment of those demands. */
		struct rwa_demand *dem = xmalloc((size_t)n * (m - 1) * sizeof(*dem));
		for (uint32_t u = 0; u < n; u++)
			for (uint32_t t = 0; t + 1 < m; t++)
				dem[u * (m - 1) + t] =
				    (struct rwa_demand){u, (u + ofs[t]) % n, 1, RWA_ANY};
		struct rwa_ring ring = {n, 1, 1};
		struct ofc_error err2 = {0};
		assert_int_equal(rwa_check(&ring, dem, (size_t)n * (m - 1), &sol, false, &err2), 0);
		free(dem);
		rwa_solution_free(&sol);
	}
	(void)err;
}

static void test_line_exact(void **state)
{
	(void)state;

	for (int round = 0; round < 200; round++) {
		uint32_t n = 2 + rnd(40), na = 1 + rnd(60);
		struct rwa_arc *a = xmalloc(na * sizeof(*a));
		uint32_t mult = 1 + rnd(3);
		int64_t load[64] = {0}, best = 0;
		struct rwa_solution sol = {0};

		for (uint32_t i = 0; i < na; i++) {
			uint32_t s = rnd(n - 1), len = 1 + rnd(n - 1 - s);

			a[i] = (struct rwa_arc){s, len, mult * (1 + rnd(3)), i};
			for (uint32_t x = s; x < s + len; x++)
				load[x] += a[i].count;
		}
		for (uint32_t x = 0; x < n; x++)
			if (load[x] > best)
				best = load[x];
		rwa_color_line(n, a, na, RWA_CW, &sol);
		assert_int_equal(sol.colours[RWA_CW], best);
		/* Conflict-free: per colour, no segment twice. */
		uint8_t *seen = xcalloc((size_t)best * n, 1);
		uint64_t *per = xcalloc(na, sizeof(uint64_t));
		for (size_t r = 0; r < sol.nruns; r++) {
			const struct rwa_run *x = &sol.runs[r];

			per[x->id] += x->count;
			for (uint32_t c = x->colour; c < x->colour + x->count; c++)
				for (uint32_t e = a[x->id].start; e < a[x->id].start + a[x->id].len;
				     e++) {
					assert_int_equal(seen[(size_t)c * n + e], 0);
					seen[(size_t)c * n + e] = 1;
				}
		}
		for (uint32_t i = 0; i < na; i++)
			assert_int_equal(per[i], a[i].count);
		free(seen);
		free(per);
		free(a);
		rwa_solution_free(&sol);
	}
}

static void test_circle_valid(void **state)
{
	struct ofc_error err = {0};
	(void)state;

	for (int round = 0; round < 100; round++) {
		uint32_t n = 3 + rnd(30), nd = 1 + rnd(50);
		struct rwa_ring ring = {n, 4, 1 + rnd(2)};
		struct rwa_demand *dem = xmalloc(nd * sizeof(*dem));
		struct rwa_solution sol = {0};
		struct rwa_opts o = {RWA_ENGINE_HEURISTIC, RWA_MIN_WAVELENGTHS, 0};
		struct rwa_report rep;

		for (uint32_t i = 0; i < nd; i++) {
			uint32_t s = rnd(n), t = (s + 1 + rnd(n - 1)) % n;

			dem[i] = (struct rwa_demand){s, t, 1 + rnd(2), (uint8_t)rnd(3)};
		}
		assert_int_equal(rwa_solve(&ring, dem, nd, &o, &sol, &rep, &err), 0);
		assert_int_equal(rwa_check(&ring, dem, nd, &sol, false, &err), 0);
		assert_true(rep.wavelengths_used >= rep.lower_bound);
		/* Never below the load of its own routing. */
		uint64_t load = rwa_solution_max_load(&ring, dem, nd, &sol);
		assert_true((uint64_t)rep.wavelengths_used * ring.fibres >= load);
		free(dem);
		rwa_solution_free(&sol);
	}
}

/* ---- exhaustive search, to check the ILP ------------------------------------- */

struct ex {
	const struct rwa_ring *ring;
	const struct rwa_demand *dem;
	uint32_t *unit_dem; /* demand of each unit */
	uint32_t nunits;
	uint32_t channels;
	/* placed[u] = dir * channels + ch + 1, or 0 */
	uint32_t *placed;
	uint32_t best;
};

static bool overlap(const struct ex *e, uint32_t a, uint32_t b, int dir)
{
	uint32_t n = e->ring->nodes;
	const struct rwa_demand *x = &e->dem[e->unit_dem[a]], *y = &e->dem[e->unit_dem[b]];
	uint32_t sa = rwa_arc_start(n, x->src, x->dst, dir),
		 la = rwa_arc_len(n, x->src, x->dst, dir);
	uint32_t sb = rwa_arc_start(n, y->src, y->dst, dir),
		 lb = rwa_arc_len(n, y->src, y->dst, dir);

	return (sb + n - sa) % n < la || (sa + n - sb) % n < lb;
}

static bool place(struct ex *e, uint32_t u, bool skip_ok, uint32_t served)
{
	if (u == e->nunits) {
		if (served > e->best)
			e->best = served;
		return served == e->nunits;
	}
	if (skip_ok && served + (e->nunits - u) <= e->best)
		return false;
	const struct rwa_demand *d = &e->dem[e->unit_dem[u]];
	for (int dir = 1; dir <= 2; dir++) {
		if (d->dir != RWA_ANY && d->dir != dir)
			continue;
		for (uint32_t ch = 0; ch < e->channels; ch++) {
			bool ok = true;

			for (uint32_t v = 0; v < u && ok; v++)
				if (e->placed[v] == (uint32_t)dir * e->channels + ch + 1 &&
				    overlap(e, u, v, dir))
					ok = false;
			if (!ok)
				continue;
			e->placed[u] = (uint32_t)dir * e->channels + ch + 1;
			if (place(e, u + 1, skip_ok, served + 1) && !skip_ok)
				return true;
		}
	}
	e->placed[u] = 0;
	if (skip_ok)
		place(e, u + 1, true, served);
	return false;
}

static void ex_init(struct ex *e, const struct rwa_ring *ring, const struct rwa_demand *dem,
		    size_t nd)
{
	memset(e, 0, sizeof(*e));
	e->ring = ring;
	e->dem = dem;
	for (size_t i = 0; i < nd; i++)
		e->nunits += dem[i].count;
	e->unit_dem = xmalloc(e->nunits * sizeof(uint32_t));
	e->placed = xcalloc(e->nunits, sizeof(uint32_t));
	e->nunits = 0;
	for (size_t i = 0; i < nd; i++)
		for (uint32_t k = 0; k < dem[i].count; k++)
			e->unit_dem[e->nunits++] = (uint32_t)i;
}

static uint32_t exhaustive_min(const struct rwa_ring *ring, const struct rwa_demand *dem, size_t nd)
{
	struct ex e;
	uint32_t w;

	ex_init(&e, ring, dem, nd);
	for (w = 1;; w++) {
		e.channels = w * ring->fibres;
		memset(e.placed, 0, e.nunits * sizeof(uint32_t));
		if (place(&e, 0, false, 0))
			break;
	}
	free(e.unit_dem);
	free(e.placed);
	return w;
}

static uint32_t exhaustive_max_served(const struct rwa_ring *ring, const struct rwa_demand *dem,
				      size_t nd)
{
	struct ex e;

	ex_init(&e, ring, dem, nd);
	e.channels = ring->wavelengths * ring->fibres;
	place(&e, 0, true, 0);
	free(e.unit_dem);
	free(e.placed);
	return e.best;
}

static void random_demands(uint32_t n, uint32_t nd, struct rwa_demand *dem)
{
	for (uint32_t i = 0; i < nd; i++) {
		uint32_t s = rnd(n), t = (s + 1 + rnd(n - 1)) % n;

		dem[i] = (struct rwa_demand){s, t, 1 + (rnd(4) == 0),
					     (uint8_t)(rnd(3) ? 0 : 1 + rnd(2))};
	}
}

static void test_ilp_matches_exhaustive(void **state)
{
	struct ofc_error err = {0};
	int harder = 0;
	(void)state;

	for (int round = 0; round < 40; round++) {
		uint32_t n = 3 + rnd(4), nd = 2 + rnd(6);
		struct rwa_ring ring = {n, 2, 1 + (rnd(3) == 0)};
		struct rwa_demand dem[16];
		struct rwa_solution sol = {0}, hs = {0};
		struct rwa_report rep, hrep, lrep;
		struct rwa_opts ilp = {RWA_ENGINE_ILP, RWA_MIN_WAVELENGTHS, 30};
		struct rwa_opts heur = {RWA_ENGINE_HEURISTIC, RWA_MIN_WAVELENGTHS, 0};
		struct rwa_opts lp = {RWA_ENGINE_LP, RWA_MIN_WAVELENGTHS, 30};

		random_demands(n, nd, dem);
		uint32_t opt = exhaustive_min(&ring, dem, nd);
		assert_int_equal(rwa_solve(&ring, dem, nd, &ilp, &sol, &rep, &err), 0);
		assert_int_equal(rwa_check(&ring, dem, nd, &sol, false, &err), 0);
		assert_true(rep.optimal);
		assert_int_equal(rep.wavelengths_used, opt);
		if (rep.ilp_solves)
			harder++;
		/* The ILP on its own (no help from the heuristic) agrees. */
		struct rwa_opts pure = ilp;
		pure.pure_ilp = true;
		rwa_solution_free(&sol);
		assert_int_equal(rwa_solve(&ring, dem, nd, &pure, &sol, &rep, &err), 0);
		assert_int_equal(rwa_check(&ring, dem, nd, &sol, false, &err), 0);
		assert_true(rep.optimal && rep.ilp_solves >= 1);
		assert_int_equal(rep.wavelengths_used, opt);
		/* The heuristic never beats the optimum; the LP never passes it. */
		assert_int_equal(rwa_solve(&ring, dem, nd, &heur, &hs, &hrep, &err), 0);
		assert_true(hrep.wavelengths_used >= opt);
		assert_true(hrep.lower_bound <= opt);
		rwa_solution_free(&hs);
		assert_int_equal(rwa_solve(&ring, dem, nd, &lp, &hs, &lrep, &err), 0);
		assert_true(lrep.relaxation <= opt + 1e-6);
		assert_true(lrep.lower_bound <= opt);
		assert_true(lrep.wavelengths_used >= lrep.lower_bound);

		/* Max served within W = 1 against the exhaustive maximum. */
		struct rwa_ring one = {n, 1, 1};
		struct rwa_opts ms = {RWA_ENGINE_ILP, RWA_MAX_SERVED, 30};
		rwa_solution_free(&sol);
		assert_int_equal(rwa_solve(&one, dem, nd, &ms, &sol, &rep, &err), 0);
		assert_int_equal(rwa_check(&one, dem, nd, &sol, true, &err), 0);
		assert_true(rep.optimal);
		assert_int_equal(rep.served, exhaustive_max_served(&one, dem, nd));
		rwa_solution_free(&sol);
		rwa_solution_free(&hs);
	}
	/* Some of these needed the ILP (the bound alone did not settle them). */
	assert_true(harder > 0);
}

/* Three arcs pairwise overlapping around a 3-ring: load 2, 3 colours. */
static void test_odd_cycle_needs_ilp(void **state)
{
	struct ofc_error err = {0};
	struct rwa_ring ring = {3, 3, 1};
	struct rwa_demand dem[3] = {{0, 2, 1, RWA_CW}, {1, 0, 1, RWA_CW}, {2, 1, 1, RWA_CW}};
	struct rwa_solution sol = {0};
	struct rwa_report rep;
	struct rwa_opts o = {RWA_ENGINE_ILP, RWA_MIN_WAVELENGTHS, 30};
	(void)state;

	assert_int_equal(rwa_solve(&ring, dem, 3, &o, &sol, &rep, &err), 0);
	assert_int_equal(rep.wavelengths_used, 3);
	assert_true(rep.optimal);
	assert_true(rep.relaxation < 2.0 + 1e-6); /* the LP only sees the load */
	assert_true(rep.ilp_solves >= 1);
	rwa_solution_free(&sol);
}

static void test_demand_file(void **state)
{
	struct ofc_error err = {0};
	struct rwa_demand *d;
	size_t n;
	char buf[600];
	(void)state;

	const char *good = "# a comment\n0 5\n\n 3 1 2 ccw   # trailing\n2 4 cw\n7 0 1 any\n";
	assert_int_equal(rwa_parse_demands("d.txt", good, strlen(good), 8, &d, &n, &err), 0);
	assert_int_equal(n, 4);
	assert_int_equal(d[1].src, 3);
	assert_int_equal(d[1].count, 2);
	assert_int_equal(d[1].dir, RWA_CCW);
	assert_int_equal(d[2].dir, RWA_CW);
	assert_int_equal(d[2].count, 1);
	free(d);

	static const struct {
		const char *text, *msg;
	} bad[] = {
	    {"0 1\n0 9\n", "d.txt:2:3: node 9 out of range: the ring has nodes 0..7"},
	    {"0\n", "d.txt:1:1: a demand needs SRC and DST (and optionally COUNT and cw|ccw|any)"},
	    {"1 1\n", "d.txt:1:3: a demand from node 1 to itself"},
	    {"0 1 0\n", "d.txt:1:5: count must be 1..65535"},
	    {"0 1 2 sideways\n", "d.txt:1:7: unknown direction 'sideways' (cw, ccw or any)"},
	    {"0 x\n", "d.txt:1:3: 'x' is not a node number"},
	    {"0 1 2 3 4\n", "d.txt:1:9: too many fields: a demand is SRC DST [COUNT] [cw|ccw|any]"},
	    {"# ok\n-1 2\n", "d.txt:2:1: '-1' is not a node number"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		d = NULL;
		assert_int_equal(
		    rwa_parse_demands("d.txt", bad[i].text, strlen(bad[i].text), 8, &d, &n, &err),
		    -1);
		assert_int_equal(err.code, OFC_E_INPUT);
		assert_string_equal(ofc_error_str(&err, buf, sizeof(buf)), bad[i].msg);
	}
}

/* Clp: the relaxation's value, hence the bound and the
 * assignment, is lp_solve's, on random demands (min wavelengths and max
 * served). */
static void test_relaxation_clp(void **state)
{
	struct ofc_error err = {0};
	(void)state;

	for (int round = 0; round < 40; round++) {
		uint32_t n = 3 + rnd(8), nd = 2 + rnd(14);
		struct rwa_ring ring = {n, 1 + rnd(3), 1 + (rnd(3) == 0)};
		struct rwa_demand dem[16];

		random_demands(n, nd, dem);
		for (int obj = RWA_MIN_WAVELENGTHS; obj <= RWA_MAX_SERVED; obj++) {
			struct rwa_opts l = {RWA_ENGINE_LP, (enum rwa_objective)obj, 30};
			struct rwa_opts c = l;
			struct rwa_solution sl = {0}, sc = {0};
			struct rwa_report rl, rc;

			c.lp_solver = LP_SOLVER_CLP;
			assert_int_equal(rwa_solve(&ring, dem, nd, &l, &sl, &rl, &err), 0);
			assert_int_equal(rwa_solve(&ring, dem, nd, &c, &sc, &rc, &err), 0);
			if (fabs(rl.relaxation - rc.relaxation) > 1e-6)
				fail_msg("round %d: relaxation lp_solve %.9f, Clp %.9f", round,
					 rl.relaxation, rc.relaxation);
			assert_int_equal(rl.lower_bound, rc.lower_bound);
			assert_int_equal(rl.served_bound, rc.served_bound);
			assert_int_equal(rl.wavelengths_used, rc.wavelengths_used);
			rwa_solution_free(&sl);
			rwa_solution_free(&sc);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_circulant_all_to_all),
	    cmocka_unit_test(test_circulant_optree_stage),
	    cmocka_unit_test(test_line_exact),
	    cmocka_unit_test(test_circle_valid),
	    cmocka_unit_test(test_ilp_matches_exhaustive),
	    cmocka_unit_test(test_relaxation_clp),
	    cmocka_unit_test(test_odd_cycle_needs_ilp),
	    cmocka_unit_test(test_demand_file),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
