/* OpTree and its baselines: the paper's numbers from first principles,
 * every schedule through the verifier, the planner's predictions, the
 * add/drop limit, bounds and the time model. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <math.h>

#include "optree/internal.h"

static struct optree_ring ring(uint32_t n, uint32_t w)
{
	return (struct optree_ring){n, w, 1, 256, 40e9, 25e-6, 10e-9, 4u << 20};
}

/* Build and verify; returns the steps. */
static uint32_t build_ok(const struct optree_ring *r, enum optree_algo a, const uint32_t *radix,
			 uint32_t depth, bool overlap, struct optree_result *res)
{
	struct ofc_error err = {0};
	struct optree_plan plan;
	struct optree_opts o = {a, NULL, overlap};

	if (depth) {
		assert_int_equal(optree_plan_radices(r, radix, depth, &plan, &err), 0);
		o.plan = &plan;
	}
	assert_int_equal(optree_build(r, &o, res, &err), 0);
	struct verify_wdm w = optree_verify_wdm(r);
	struct verify_opts vo = {.wdm = &w};
	struct verify_report rep;
	if (sched_verify(&res->sched, &vo, &rep) != 0)
		fail_msg("%s N=%u W=%u: %s", optree_algo_name(a), r->nodes, r->wavelengths,
			 rep.error);
	assert_true(rep.max_wavelengths_used <= r->wavelengths);
	/* Every stage bound is a bound. */
	assert_true(res->lower_bound_steps <= res->sched.nsteps);
	return res->sched.nsteps;
}

static void test_theorem2_depths(void **state)
{
	static const uint32_t n[] = {512, 1024, 2048, 4096}, want[] = {6, 6, 7, 8};
	(void)state;

	for (size_t i = 0; i < 4; i++) {
		struct optree_ring r = ring(n[i], 64);
		struct optree_analytic a;

		optree_analytic(&r, &a);
		assert_int_equal(a.depth, want[i]);
	}
	/* N = 1024, W = 64: about 70 steps (S(6) = 69.85, S(7) = 69.98). */
	struct optree_ring r = ring(1024, 64);
	struct optree_analytic a;
	optree_analytic(&r, &a);
	assert_true(fabs(a.steps - 69.85) < 0.01);
	assert_true(fabs(optree_analytic_steps(&r, 7) - 69.98) < 0.01);
	/* The worked example: N = 16, W = 2, k = 2, m = 4: 12 steps. */
	r = ring(16, 2);
	optree_analytic(&r, &a);
	assert_int_equal(a.depth, 2);
	assert_true(fabs(a.steps - 12.0) < 1e-9);
	/* Below e^2 nodes one stage is best. */
	r = ring(6, 2);
	optree_analytic(&r, &a);
	assert_int_equal(a.depth, 1);
}

static void test_worked_example(void **state)
{
	struct optree_ring r = ring(16, 2);
	struct optree_result res;
	uint32_t four[2] = {4, 4};
	(void)state;

	/* One-stage: 16 steps; the two-stage 4-ary tree: 4 + 8 = 12. */
	assert_int_equal(build_ok(&r, OPTREE_ONESTAGE, NULL, 0, false, &res), 16);
	optree_result_free(&res);
	assert_int_equal(build_ok(&r, OPTREE_TREE, four, 2, false, &res), 12);
	assert_int_equal(res.nstages, 2);
	assert_int_equal(res.stage[0].steps, 4);
	assert_int_equal(res.stage[1].steps, 8);
	assert_int_equal(res.lower_bound_steps, 12);
	optree_result_free(&res);
	/* The planner finds 12 too, and no plan beats it. */
	assert_int_equal(build_ok(&r, OPTREE_TREE, NULL, 0, false, &res), 12);
	optree_result_free(&res);
	/* The paper's three-stage 3-ary alternative is worse. */
	uint32_t three[3] = {3, 3, 2};
	assert_true(build_ok(&r, OPTREE_TREE, three, 3, false, &res) > 12);
	optree_result_free(&res);
}

static void test_n1024(void **state)
{
	struct optree_ring r = ring(1024, 64);
	struct optree_result res;
	struct optree_analytic a;
	(void)state;

	assert_int_equal(build_ok(&r, OPTREE_RING, NULL, 0, false, &res), 1023);
	optree_result_free(&res);
	assert_int_equal(build_ok(&r, OPTREE_NE, NULL, 0, false, &res), 512);
	optree_result_free(&res);
	optree_analytic(&r, &a);
	uint32_t steps = build_ok(&r, OPTREE_TREE, NULL, 0, false, &res);
	assert_true(steps <= 73);
	assert_true(steps <= a.steps * 1.05);
	assert_int_equal(steps, res.plan.steps); /* the planner predicted it */
	optree_result_free(&res);
}

/* The planner's prediction is what the builder realises, for even, mixed,
 * uneven and odd plans; everything verifies. */
static void test_plans_predict_and_verify(void **state)
{
	static const uint32_t cases[][2] = {{2, 1},  {3, 1},   {5, 2},	  {12, 3},  {27, 4},
					    {37, 4}, {100, 8}, {210, 16}, {256, 7}, {1000, 64}};
	(void)state;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct optree_ring r = ring(cases[i][0], cases[i][1]);
		struct optree_result res;
		struct optree_plan p;
		struct ofc_error err = {0};

		assert_int_equal(optree_plan_best(&r, &p, &err), 0);
		uint32_t steps = build_ok(&r, OPTREE_TREE, p.radix, p.depth, false, &res);
		assert_int_equal(steps, p.steps);
		for (uint32_t k = 0; k < p.depth; k++)
			assert_int_equal(res.stage[k].steps, p.stage_steps[k]);
		optree_result_free(&res);
		/* Forced uneven plans too. */
		uint32_t radix[3] = {3, 3, 3};
		if (cases[i][0] >= 10 && cases[i][0] <= 27) {
			assert_int_equal(optree_plan_radices(&r, radix, 3, &p, &err), 0);
			assert_int_equal(build_ok(&r, OPTREE_TREE, radix, 3, false, &res), p.steps);
			optree_result_free(&res);
		}
		for (enum optree_algo a = OPTREE_RING; a <= OPTREE_ONESTAGE; a++) {
			if (a == OPTREE_NE && cases[i][0] % 2)
				continue;
			build_ok(&r, a, NULL, 0, false, &res);
			optree_result_free(&res);
		}
	}
}

static void test_add_drop_split(void **state)
{
	struct optree_ring r = ring(16, 8);
	struct optree_result res, big;
	struct ofc_error err = {0};
	(void)state;

	/* 8 wavelengths each way: a node may use 16 channels in a step. */
	build_ok(&r, OPTREE_ONESTAGE, NULL, 0, false, &big);
	assert_int_equal(big.split_steps, 0);
	r.max_add = 3;
	/* The unsplit schedule breaks a limit of 3 ... */
	struct verify_wdm w = optree_verify_wdm(&r);
	struct verify_opts vo = {.wdm = &w};
	struct verify_report rep;
	assert_int_equal(sched_verify(&big.sched, &vo, &rep), -1);
	assert_non_null(strstr(rep.error, "more than 3 lightpaths"));
	/* ... so the builder splits steps, and says so, into as few as any
	 * split can: ceil(D / 3) for a step whose busiest node has D. */
	uint32_t steps = build_ok(&r, OPTREE_ONESTAGE, NULL, 0, false, &res);
	assert_true(res.split_steps > 0);
	assert_int_equal(steps, big.sched.nsteps + res.split_steps);
	assert_true(res.stage[0].steps > res.stage[0].colour_steps);
	uint32_t fewest = 0;
	for (uint32_t t = 0; t < big.sched.nsteps; t++) {
		uint32_t add[16] = {0}, drop[16] = {0}, d = 0;

		for (uint32_t k = big.sched.step_start[t]; k < big.sched.step_start[t + 1]; k++) {
			const struct xfer *x = &big.sched.xfers[k];

			if (++add[x->src] > d)
				d = add[x->src];
			if (++drop[x->dst] > d)
				d = drop[x->dst];
		}
		fewest += (d + 2) / 3;
	}
	assert_int_equal(steps, fewest);
	optree_result_free(&res);
	optree_result_free(&big);
	/* The baselines split too (ne sends two blocks a step). */
	r.max_add = 1;
	build_ok(&r, OPTREE_NE, NULL, 0, false, &res);
	assert_int_equal(res.split_steps, 7);
	optree_result_free(&res);
	(void)err;
}

static void test_mutations_fail(void **state)
{
	struct optree_ring r = ring(64, 4);
	struct optree_result res;
	struct verify_wdm w = optree_verify_wdm(&r);
	struct verify_opts vo = {.wdm = &w};
	struct verify_report rep;
	(void)state;

	build_ok(&r, OPTREE_TREE, NULL, 0, false, &res);
	/* Two lightpaths of step 1 on one channel: some pair must clash. */
	struct schedule *s = &res.sched;
	uint32_t a = s->step_start[0], clashes = 0;
	for (uint32_t b = a + 1; b < s->step_start[1] && b < a + 20; b++) {
		struct xfer keep = s->xfers[b];

		s->xfers[b].lane = s->xfers[a].lane;
		s->xfers[b].fibre = s->xfers[a].fibre;
		s->xfers[b].flags = s->xfers[a].flags;
		if (sched_verify(s, &vo, &rep) < 0 && strstr(rep.error, "conflict"))
			clashes++;
		s->xfers[b] = keep;
	}
	assert_true(clashes > 0);
	/* Dropping the last transfer leaves a node without a block. */
	s->nxfers--;
	s->step_start[s->nsteps]--;
	assert_int_equal(sched_verify(s, &vo, &rep), -1);
	assert_non_null(strstr(rep.error, "incomplete"));
	optree_result_free(&res);
}

static void test_time_model(void **state)
{
	struct optree_ring r = ring(16, 2);
	struct optree_result res;
	struct optree_time t;
	uint32_t four[2] = {4, 4};
	(void)state;

	build_ok(&r, OPTREE_TREE, four, 2, false, &res);
	optree_timing(&r, &res, false, &t);
	/* Eq. 3: 12 b / B_lambda + 2 (d_mrr + d_oeo). */
	double tau = 4.0 * 1048576 * 8 / 40e9 * 1e6;
	assert_true(fabs(t.step_us - tau) < 1e-9);
	assert_true(fabs(t.time_us - (12 * tau + 2 * (25 + 0.01))) < 1e-6);
	assert_int_equal(t.retune_stages, 2);
	assert_true(t.retune_steps >= 2 && t.retune_steps <= 12);
	optree_result_free(&res);

	/* The ring baseline keeps one set of lightpaths: one retune only. */
	build_ok(&r, OPTREE_RING, NULL, 0, false, &res);
	optree_timing(&r, &res, false, &t);
	assert_int_equal(t.retune_steps, 1);
	assert_true(fabs(t.time_us - (15 * tau + 25 + 15 * 0.01)) < 1e-6);
	optree_result_free(&res);
}

static void test_overlap_hides_retunes(void **state)
{
	/* W = 3: stage 1 (load 8) ends in a step using 2 channels, stage 2
	 * (load 16) has a step using 1: side by side they fit in 3. */
	struct optree_ring r = ring(16, 3);
	struct optree_result plain, ov;
	struct optree_time tp, to;
	uint32_t four[2] = {4, 4};
	(void)state;

	build_ok(&r, OPTREE_TREE, four, 2, false, &plain);
	build_ok(&r, OPTREE_TREE, four, 2, true, &ov);
	assert_int_equal(plain.sched.nsteps, ov.sched.nsteps);
	assert_int_equal(ov.stage[0].partial_channels, 2);
	assert_int_equal(ov.stage[1].partial_channels, 1);
	assert_true(ov.stage[1].partial_first);
	optree_timing(&r, &plain, false, &tp);
	optree_timing(&r, &ov, true, &to);
	assert_true(fabs(to.plain_us - tp.plain_us) < 1e-6);
	assert_int_equal(to.hidden_stages, 1);
	assert_true(fabs(to.saved_us - 25.0) < 1e-6);
	/* Without the arrangement the same accounting finds nothing idle. */
	optree_timing(&r, &plain, true, &tp);
	assert_int_equal(tp.hidden_stages, 0);
	/* A step shorter than the retune hides only what it lasts. */
	r.block_bytes = 64 * 1024; /* 13.1 us per step */
	optree_timing(&r, &ov, true, &to);
	assert_true(to.saved_us > 13.0 && to.saved_us < 13.2);
	optree_result_free(&plain);
	optree_result_free(&ov);
}

static void test_bad_plans(void **state)
{
	struct optree_ring r = ring(16, 2);
	struct optree_plan p;
	struct ofc_error err = {0};
	struct optree_result res;
	struct optree_opts o = {OPTREE_NE, NULL, false};
	uint32_t small[2] = {2, 4}, extra[3] = {4, 4, 2}, radix[8];
	uint32_t depth;
	(void)state;

	assert_int_equal(optree_plan_radices(&r, small, 2, &p, &err), -1);
	assert_non_null(strstr(err.msg, "multiply to 8, fewer than the 16 nodes"));
	assert_int_equal(optree_plan_radices(&r, extra, 3, &p, &err), -1);
	assert_non_null(strstr(err.msg, "stage 3 has nothing to do"));
	assert_int_equal(optree_parse_radices("4x4,2", radix, &depth, &err), 0);
	assert_int_equal(depth, 3);
	assert_int_equal(optree_parse_radices("4,,2", radix, &depth, &err), -1);
	assert_int_equal(optree_parse_radices("4,1", radix, &depth, &err), -1);
	r.nodes = 15;
	assert_int_equal(optree_build(&r, &o, &res, &err), -1);
	assert_int_equal(err.code, OFC_E_INPUT);
	assert_non_null(strstr(err.msg, "even number of nodes"));
}

/* ---- reduced schedules (sched_ring_reduced) ---------------------------------- */

static void build_reduced(const struct optree_ring *r, struct optree_result *res)
{
	struct ofc_error err = {0};
	struct optree_opts o = {.algo = OPTREE_TREE, .reduced = true};

	if (optree_build(r, &o, res, &err) != 0)
		fail_msg("reduced N=%u W=%u: %s", r->nodes, r->wavelengths, err.msg);
	assert_non_null(res->period);
}

/* Both checks on a reduced schedule: the verdict (0 / -1) of
 * sched_verify_ring_reduced, which must be sched_verify's on the expansion;
 * with both reports in *a (reduced) and *b (explicit). */
static int both_checks(const struct optree_ring *r, const struct sched_ring_reduced *rr,
		       struct verify_report *a, struct verify_report *b)
{
	struct verify_wdm w = optree_verify_wdm(r);
	struct verify_opts vo = {.wdm = &w};
	struct ofc_error err = {0};
	struct schedule s;

	int ra = sched_verify_ring_reduced(rr, &w, a);
	assert_int_equal(sched_ring_reduced_expand(rr, &s, &err), 0);
	int rb = sched_verify(&s, &vo, b);
	sched_free(&s);
	if (ra != rb)
		fail_msg("N=%u W=%u: reduced check %d (%s), explicit %d (%s)", r->nodes,
			 r->wavelengths, ra, a->error, rb, b->error);
	return ra;
}

static uint64_t lightpath_key(const struct xfer *x, uint32_t t)
{
	return (uint64_t)t << 44 | (uint64_t)x->src << 28 | (uint64_t)x->dst << 12 |
	       (uint64_t)xfer_dir(x) << 10 | (uint64_t)x->fibre << 8 | x->lane;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

static uint64_t *lightpaths(const struct schedule *s)
{
	uint64_t *k = malloc((s->nxfers + 1) * sizeof(uint64_t));

	for (uint32_t t = 0; t < s->nsteps; t++)
		for (size_t i = s->step_start[t]; i < s->step_start[t + 1]; i++)
			k[i] = lightpath_key(&s->xfers[i], t);
	qsort(k, s->nxfers, sizeof(uint64_t), cmp_u64);
	return k;
}

/* The reduced OpTree schedule on even plans, N = 8 .. 1024 and several W:
 * its check by symmetry agrees with sched_verify on its expansion (both
 * pass, same steps, transfers, busiest segment, no duplicates), and where
 * the explicit builder merges no stage ends the expansion is its schedule
 * lightpath for lightpath (steps, ends, direction, fibre, wavelength). */
static void test_reduced_agrees(void **state)
{
	static const uint32_t nodes[] = {8, 12, 16, 27, 32, 48, 64, 96, 100, 128, 256, 512, 1024};
	static const uint32_t wl[] = {1, 2, 8, 64};
	uint32_t same = 0;
	(void)state;

	for (size_t i = 0; i < sizeof(nodes) / sizeof(nodes[0]); i++)
		for (size_t j = 0; j < sizeof(wl) / sizeof(wl[0]); j++) {
			if (nodes[i] >= 512 && wl[j] < 8)
				continue; /* time */
			struct optree_ring r = ring(nodes[i], wl[j]);
			struct optree_result red, ex;
			struct verify_report a, b;

			build_reduced(&r, &red);
			struct sched_ring_reduced rr = {red.sched, red.period};
			assert_int_equal(both_checks(&r, &rr, &a, &b), 0);
			assert_int_equal(a.nsteps, b.nsteps);
			assert_int_equal(a.ntransfers, b.ntransfers);
			assert_int_equal(a.ntransfers, (size_t)r.nodes * (r.nodes - 1));
			assert_int_equal(sched_ring_reduced_transfers(&rr), a.ntransfers);
			assert_int_equal(a.max_wavelengths_used, b.max_wavelengths_used);
			assert_true(a.duplicate_blocks == 0 && b.duplicate_blocks == 0);
			/* Stage 1 is explicit; later stages repeat every group. */
			assert_int_equal(red.period[0], r.nodes);
			assert_true(red.sched.nxfers < a.ntransfers || red.plan.depth == 1);

			build_ok(&r, OPTREE_TREE, red.plan.radix, red.plan.depth, false, &ex);
			bool merged = false;
			for (uint32_t k = 0; k < ex.nstages; k++)
				merged = merged || ex.stage[k].merged;
			if (!merged) {
				struct schedule s;
				struct ofc_error err = {0};

				assert_int_equal(sched_ring_reduced_expand(&rr, &s, &err), 0);
				assert_int_equal(s.nsteps, ex.sched.nsteps);
				assert_int_equal(s.nxfers, ex.sched.nxfers);
				uint64_t *x = lightpaths(&s), *y = lightpaths(&ex.sched);
				assert_memory_equal(x, y, s.nxfers * sizeof(uint64_t));
				free(x);
				free(y);
				sched_free(&s);
				same++;
			} else {
				/* A merge saves at most a step per stage boundary. */
				assert_true(ex.sched.nsteps <= red.sched.nsteps);
				assert_true(ex.sched.nsteps + ex.nstages >= red.sched.nsteps);
			}
			optree_result_free(&ex);
			optree_result_free(&red);
		}
	assert_true(same >= 20);
}

/* Whether transfers x0..x1 of s, as lightpaths (step, ends, direction,
 * fibre, wavelength), are the same set rotated by g. */
static bool rotation_invariant(const struct schedule *s, size_t x0, size_t x1, uint32_t g)
{
	size_t m = x1 - x0;
	uint64_t *a = malloc((m + 1) * sizeof(uint64_t)), *b = malloc((m + 1) * sizeof(uint64_t));
	uint32_t n = s->nodes;

	for (uint32_t t = 0; t < s->nsteps; t++)
		for (size_t i = s->step_start[t]; i < s->step_start[t + 1]; i++) {
			if (i < x0 || i >= x1)
				continue;
			struct xfer y = s->xfers[i];

			a[i - x0] = lightpath_key(&y, t);
			y.src = (uint16_t)((y.src + g) % n);
			y.dst = (uint16_t)((y.dst + g) % n);
			b[i - x0] = lightpath_key(&y, t);
		}
	qsort(a, m, sizeof(uint64_t), cmp_u64);
	qsort(b, m, sizeof(uint64_t), cmp_u64);
	bool same = memcmp(a, b, m * sizeof(uint64_t)) == 0;
	free(a);
	free(b);
	return same;
}

/* What docs/rings-fluid.md ("OpTree by symmetry") says of the explicit
 * schedules: with even groups the whole schedule is invariant under the
 * rotation by N/2 only (stage 1's tilings), stage i >= 2 under rotation by
 * its group size n_(i-1) (and not by n_(i-1)/2); uneven groups have no
 * rotation at all. */
static void test_rotations_of_explicit(void **state)
{
	struct optree_ring r = ring(256, 4);
	struct optree_result res;
	uint32_t even[4] = {4, 4, 4, 4}, uneven[4] = {3, 3, 3, 3};
	(void)state;

	build_ok(&r, OPTREE_TREE, even, 4, false, &res);
	const struct schedule *s = &res.sched;
	for (uint32_t g = 1; g < 256; g *= 2)
		assert_true(rotation_invariant(s, 0, s->nxfers, g) == (g == 128));
	size_t x0 = res.stage[0].transfers;
	for (uint32_t i = 1, group = 64; i < res.nstages; i++, group /= 4) {
		size_t x1 = x0 + res.stage[i].transfers;

		assert_false(res.stage[i].merged);
		assert_true(rotation_invariant(s, x0, x1, group));
		assert_false(rotation_invariant(s, x0, x1, group / 2));
		x0 = x1;
	}
	optree_result_free(&res);

	r = ring(64, 4);
	build_ok(&r, OPTREE_TREE, uneven, 4, false, &res);
	for (uint32_t g = 1; g < 64; g *= 2)
		assert_false(rotation_invariant(&res.sched, 0, res.sched.nxfers, g));
	optree_result_free(&res);
}

/* The program with transfer `drop` left out, and (when move < nsteps)
 * transfer `mv` moved to step `move`. */
static void program_edit(const struct sched_ring_reduced *in, size_t drop, size_t mv, uint32_t move,
			 struct sched_ring_reduced *out)
{
	const struct schedule *p = &in->prog;

	sched_init(&out->prog, p->collective, p->algorithm, p->nodes);
	out->period = malloc(p->nsteps * sizeof(uint32_t));
	memcpy(out->period, in->period, p->nsteps * sizeof(uint32_t));
	for (uint32_t t = 0; t < p->nsteps; t++) {
		sched_step(&out->prog);
		for (size_t k = p->step_start[t]; k < p->step_start[t + 1]; k++)
			if (k != drop && k != mv)
				sched_add(&out->prog, &p->xfers[k]);
		if (t == move)
			sched_add(&out->prog, &p->xfers[mv]);
	}
}

/* Corruptions of the program: a wavelength clash, a transfer a step early,
 * a transfer dropped. Each is judged alike by both checks (both_checks
 * fails the test otherwise); clashes and drops always fail, and some early
 * transfers do (those whose block arrives in the step before). */
static void test_reduced_corruptions(void **state)
{
	static const uint32_t cases[][2] = {{16, 2}, {64, 2}, {96, 3}, {100, 2}, {256, 4}};
	(void)state;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct optree_ring r = ring(cases[i][0], cases[i][1]);
		struct optree_result red;
		struct verify_report a, b;
		uint32_t clashes = 0, early_fail = 0, early_pass = 0, drops = 0;

		build_reduced(&r, &red);
		struct sched_ring_reduced rr = {red.sched, red.period};
		struct schedule *p = &rr.prog;
		uint32_t n = r.nodes;

		for (uint32_t t = 0; t < p->nsteps; t += 1 + p->nsteps / 16) {
			/* Clash: x takes the channel of a lightpath y of the
			 * same step whose arc, or a rotation of it by the
			 * period, shares a segment with x's. */
			uint32_t per = rr.period[t];
			for (size_t x = p->step_start[t]; x < p->step_start[t + 1]; x++) {
				size_t y;
				const struct xfer *X = &p->xfers[x];
				for (y = p->step_start[t]; y < p->step_start[t + 1]; y++) {
					const struct xfer *Y = &p->xfers[y];
					if (xfer_dir(Y) != xfer_dir(X) ||
					    (Y->src == X->src && Y->dst == X->dst) ||
					    (Y->lane == X->lane && Y->fibre == X->fibre))
						continue;
					bool cw = xfer_dir(X) == DIR_CW;
					uint32_t fx = cw ? X->src : X->dst,
						 fy = cw ? Y->src : Y->dst;
					uint32_t lx = cw ? (X->dst + n - X->src) % n
							 : (X->src + n - X->dst) % n;
					uint32_t ly = cw ? (Y->dst + n - Y->src) % n
							 : (Y->src + n - Y->dst) % n;
					uint32_t d = (fy + n - fx) % per;
					if (d < lx || (per - d) % per < ly)
						break;
				}
				if (y == p->step_start[t + 1])
					continue;
				struct xfer keep = p->xfers[x];
				p->xfers[x].lane = p->xfers[y].lane;
				p->xfers[x].fibre = p->xfers[y].fibre;
				assert_int_equal(both_checks(&r, &rr, &a, &b), -1);
				assert_non_null(strstr(a.error, "conflict"));
				assert_non_null(strstr(b.error, "conflict"));
				p->xfers[x] = keep;
				clashes++;
				break;
			}
			/* A step early, and dropped: a few transfers of the step. */
			size_t m = p->step_start[t + 1] - p->step_start[t];
			for (size_t q = 0; q < 3 && q < m; q++) {
				size_t k = p->step_start[t] + q * m / 3;
				struct sched_ring_reduced e;

				if (t) {
					program_edit(&rr, SIZE_MAX, k, t - 1, &e);
					if (both_checks(&r, &e, &a, &b) < 0)
						early_fail++;
					else
						early_pass++;
					sched_ring_reduced_free(&e);
				}
				program_edit(&rr, k, SIZE_MAX, UINT32_MAX, &e);
				assert_int_equal(both_checks(&r, &e, &a, &b), -1);
				drops++;
				sched_ring_reduced_free(&e);
			}
		}
		assert_true(clashes > 0);
		assert_true(drops > 0);
		assert_true(early_fail > 0);
		optree_result_free(&red);
	}
}

/* What a reduced schedule is refused for: uneven groups (no rotation keeps
 * them), algorithms other than OpTree's tree, and a program no smaller
 * than an explicit schedule. */
static void test_reduced_refusals(void **state)
{
	struct optree_ring r = ring(64, 2);
	struct optree_result res;
	struct optree_opts o = {.algo = OPTREE_TREE, .reduced = true};
	struct ofc_error err = {0};
	uint32_t uneven[4] = {3, 3, 3, 3};
	struct optree_plan p;
	(void)state;

	/* Uneven groups: no rotation keeps them. */
	assert_int_equal(optree_plan_radices(&r, uneven, 4, &p, &err), 0);
	o.plan = &p;
	assert_int_equal(optree_build(&r, &o, &res, &err), -1);
	assert_non_null(strstr(err.msg, "even groups"));
	/* Only OpTree's all-gather. */
	o.plan = NULL;
	o.algo = OPTREE_RING;
	assert_int_equal(optree_build(&r, &o, &res, &err), -1);
	/* Explicit schedules are no longer capped at OPTREE_MAX_NODES: the
	 * pipeline's memory estimate decides (test_scale.sh). */
	o.algo = OPTREE_TREE;
	/* A prime has one stage of radix N: no smaller than the explicit. */
	r = ring(8209, 64);
	o.reduced = true;
	assert_int_equal(optree_build(&r, &o, &res, &err), -1);
	assert_non_null(strstr(err.msg, "program would hold 67379472 transfers"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_theorem2_depths),
	    cmocka_unit_test(test_worked_example),
	    cmocka_unit_test(test_n1024),
	    cmocka_unit_test(test_plans_predict_and_verify),
	    cmocka_unit_test(test_add_drop_split),
	    cmocka_unit_test(test_mutations_fail),
	    cmocka_unit_test(test_time_model),
	    cmocka_unit_test(test_overlap_hides_retunes),
	    cmocka_unit_test(test_bad_plans),
	    cmocka_unit_test(test_reduced_agrees),
	    cmocka_unit_test(test_reduced_corruptions),
	    cmocka_unit_test(test_reduced_refusals),
	    cmocka_unit_test(test_rotations_of_explicit),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
