/* The check of a mirrored allreduce patch by its copy phase alone
 * (sched/patch_mirror.c, sched_verify_patched): on a torus whose failures
 * take both ways of a link, a patch whose reduction step R - 1 - j holds
 * the mirrors of its copy step R + j (made here from bfb_patch's copy
 * phase: valid by Zhao et al.'s Cor. 3.1, the base being mirrored too) is
 * checked by one phase, with the steps, transfers and link loads of the
 * full check and of the explicit verifier on its expansion; a corrupted
 * copy phase mirrored is refused by it; a reduction that is not its copy's
 * mirror, failures of one way of a link, and the allgather and
 * reduce-scatter alone get the full check. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bfb/bfb.h"
#include "sched/sched.h"
#include "tests/unit/patch_fx.h"


enum edit { KEEP, DROP, EARLIER, TWICE };

/* f's patch with its reduction steps replaced by the mirrors of its copy
 * steps (step R - 1 - j of R + j's, in order), after copy xi (an index
 * into f->p.prog, in the copy phase) is edited: dropped, moved to the
 * step before, or sent twice. */
static void mirrored(const struct fx *f, size_t xi, enum edit how, struct sched_patch *out)
{
	const struct schedule *q = &f->p.prog;
	uint32_t R = f->r.prog.nsteps / 2;
	struct schedule cp; /* the copy phase edited: its step j is R + j */

	assert_non_null(f->twin);

	sched_init(&cp, q->collective, q->algorithm, q->nodes);
	for (uint32_t t = R; t < 2 * R; t++) {
		sched_step(&cp);
		for (size_t i = t < q->nsteps ? q->step_start[t] : 0;
		     t < q->nsteps && i < q->step_start[t + 1]; i++) {
			if (i == xi && (how == DROP || how == EARLIER))
				continue;
			sched_add(&cp, &q->xfers[i]);
			if (i == xi && how == TWICE)
				sched_add(&cp, &q->xfers[i]);
		}
		/* the moved one lands at the end of the step before its own */
		if (how == EARLIER && t + 1 < q->nsteps && xi >= q->step_start[t + 1] &&
		    xi < q->step_start[t + 2])
			sched_add(&cp, &q->xfers[xi]);
	}
	memset(out, 0, sizeof(*out));
	out->nregion = f->p.nregion;
	out->region = malloc((f->p.nregion + 1) * sizeof(uint32_t));
	if (f->p.nregion) /* (none: region may be NULL) */
		memcpy(out->region, f->p.region, f->p.nregion * sizeof(uint32_t));
	out->nabsent = f->p.nabsent;
	out->absent = malloc((f->p.nabsent + 1) * sizeof(uint32_t));
	if (f->p.nabsent)
		memcpy(out->absent, f->p.absent, f->p.nabsent * sizeof(uint32_t));
	sched_init(&out->prog, q->collective, q->algorithm, q->nodes);
	for (uint32_t t = 0; t < R; t++) {
		uint32_t j = R - 1 - t;

		sched_step(&out->prog);
		for (size_t i = cp.step_start[j]; i < cp.step_start[j + 1]; i++) {
			struct xfer y = sched_xfer_mirror(f->g, f->twin, &cp.xfers[i]);

			sched_add(&out->prog, &y);
		}
	}
	for (uint32_t j = 0; j < R; j++) {
		sched_step(&out->prog);
		for (size_t i = cp.step_start[j]; i < cp.step_start[j + 1]; i++)
			sched_add(&out->prog, &cp.xfers[i]);
	}
	sched_free(&cp);
}

/* Two different transfers of one reduction step swapped: the same
 * schedule, no longer mirrored in order (the full check's). */
static void swap_reductions(struct sched_patch *p)
{
	struct schedule *q = &p->prog;

	for (uint32_t t = 0; t < q->nsteps / 2; t++)
		for (size_t i = q->step_start[t] + 1; i < q->step_start[t + 1]; i++)
			if (q->xfers[i].dst != q->xfers[i - 1].dst ||
			    q->xfers[i].block != q->xfers[i - 1].block) {
				struct xfer x = q->xfers[i];

				q->xfers[i] = q->xfers[i - 1];
				q->xfers[i - 1] = x;
				return;
			}
	fail_msg("no reduction step with two different transfers");
}

/* The step of f's patch transfer i. */
static uint32_t step_of(const struct fx *f, size_t i)
{
	uint32_t t = 0;

	while (f->p.prog.step_start[t + 1] <= i)
		t++;
	return t;
}

/* The mirrored patch by one phase, then swapped by both: accepted, the
 * same report, and the explicit verifier's on the expansion. */
static void one_phase_agrees(const char *spec, const char *fail)
{
	struct fx f;
	struct sched_patch m;
	struct verify_report one = {0}, full = {0}, er = {0};
	struct schedule s;
	struct ofc_error err = {0};

	fx_open(&f, spec, fail, SCHED_ALLREDUCE);
	struct verify_opts vo = {.graph = f.gd, .absent = f.p.nabsent ? f.dead : NULL};
	mirrored(&f, SIZE_MAX, KEEP, &m);
	if (sched_verify_patched(&f.r, &m, f.g, f.gone, &one) < 0)
		fail_msg("%s --fail %s: mirrored: %s", spec, fail, one.error);
	assert_true(one.one_phase);
	if (sched_patched_expand(&f.r, &m, f.g, f.gone, &s, &err) < 0)
		fail_msg("expand: %s", err.msg);
	if (sched_verify(&s, &vo, &er) < 0)
		fail_msg("%s --fail %s: the expansion: %s", spec, fail, er.error);
	sched_free(&s);
	swap_reductions(&m);
	if (sched_verify_patched(&f.r, &m, f.g, f.gone, &full) < 0)
		fail_msg("%s --fail %s: swapped: %s", spec, fail, full.error);
	assert_false(full.one_phase);
	assert_int_equal(one.nsteps, full.nsteps);
	assert_int_equal(one.ntransfers, full.ntransfers);
	assert_true(one.sum_max_link_load == full.sum_max_link_load);
	assert_true(one.max_link_load == full.max_link_load);
	assert_int_equal(one.ntransfers, er.ntransfers);
	assert_int_equal(one.nsteps, er.nsteps);
	assert_true(fabs(one.sum_max_link_load - er.sum_max_link_load) < 1e-9);
	assert_true(fabs(one.max_link_load - er.max_link_load) < 1e-9);
	sched_patch_free(&m);
	fx_close(&f);
}

static void test_mirrored_accepted(void **state)
{
	(void)state;
	one_phase_agrees("torus:16x16", "5-6");
	one_phase_agrees("torus:16x16", "5-6,100-101,37-53");
	one_phase_agrees("torus:16x16", "21,100-101"); /* a failed host */
	one_phase_agrees("torus:4x4x4", "0-1,21-37");
	one_phase_agrees("torus:32x16", "3-4,200-232,77,300-301");
}

/* The copy phase corrupted and mirrored: the mirror is exact, so one
 * phase is checked, and it refuses (or, a block planned again whole whose
 * healthy pieces were right, its expansion passes the explicit verifier);
 * the fault said as the full check says it, unless the full check finds
 * the mirror's first (a reduction, which one phase never names). */
static void test_copy_corruption_mirrored(void **state)
{
	(void)state;
	struct fx f;
	struct verify_report one, full, er;
	struct ofc_error err = {0};
	uint32_t refused = 0, tried = 0;

	fx_open(&f, "torus:8x8", "5-6", SCHED_ALLREDUCE);
	struct verify_opts vo = {.graph = f.gd};
	const struct schedule *q = &f.p.prog;
	size_t lo = q->step_start[f.r.prog.nsteps / 2];
	assert_true(lo < q->nxfers);
	for (size_t xi = lo; xi < q->nxfers; xi += (q->nxfers - lo) / 23 + 1)
		for (enum edit how = DROP; how <= TWICE; how++) {
			struct sched_patch bad;
			struct schedule s;

			if (how == EARLIER && step_of(&f, xi) == f.r.prog.nsteps / 2)
				continue; /* no step before it in its phase */
			mirrored(&f, xi, how, &bad);
			tried++;
			if (sched_verify_patched(&f.r, &bad, f.g, f.gone, &one) < 0) {
				assert_true(one.one_phase);
				refused++;
				swap_reductions(&bad);
				assert_int_equal(
				    sched_verify_patched(&f.r, &bad, f.g, f.gone, &full), -1);
				assert_false(full.one_phase);
				/* the copies' fault, as the full check says it where
				 * that is not their mirror's */
				assert_null(strstr(one.error, "reduces"));
				if (!strstr(full.error, "reduces") && strcmp(one.error, full.error))
					fail_msg("one phase: %s; both: %s", one.error, full.error);
			} else {
				assert_true(one.one_phase);
				if (sched_patched_expand(&f.r, &bad, f.g, f.gone, &s, &err) < 0)
					fail_msg("expand: %s", err.msg);
				if (sched_verify(&s, &vo, &er) < 0)
					fail_msg("copy %zu edited (%d): one phase passes, the "
						 "explicit check says %s",
						 xi, how, er.error);
				sched_free(&s);
			}
			sched_patch_free(&bad);
		}
	assert_true(refused * 4 >= tried * 3);
	fx_close(&f);
}

/* A copy sent a step early, mirrored: refused by one phase, naming the
 * copy (the full check names the first in the patch's order, its mirror
 * among the reductions). */
static void test_copy_early_named(void **state)
{
	(void)state;
	struct fx f;
	struct sched_patch bad;
	struct verify_report rep;

	fx_open(&f, "torus:8x8", "5-6", SCHED_ALLREDUCE);
	/* the last copy: what it sends its sender received only in the step
	 * before */
	assert_true(step_of(&f, f.p.prog.nxfers - 1) > f.r.prog.nsteps / 2);
	mirrored(&f, f.p.prog.nxfers - 1, EARLIER, &bad);
	assert_int_equal(sched_verify_patched(&f.r, &bad, f.g, f.gone, &rep), -1);
	assert_true(rep.one_phase);
	if (!strstr(rep.error, " sends block ") || !strstr(rep.error, "before it holds it"))
		fail_msg("%s", rep.error);
	assert_true(rep.bad_step >= f.r.prog.nsteps / 2);
	sched_patch_free(&bad);
	fx_close(&f);
}

/* A reduction changed so it is no copy's mirror: both phases checked, and
 * the wrong one refused; one dropped, likewise. */
static void test_reduction_changed(void **state)
{
	(void)state;
	struct fx f;
	struct sched_patch m;
	struct verify_report rep;

	fx_open(&f, "torus:8x8", "5-6", SCHED_ALLREDUCE);
	mirrored(&f, SIZE_MAX, KEEP, &m);
	assert_int_equal(sched_verify_patched(&f.r, &m, f.g, f.gone, &rep), 0);
	assert_true(rep.one_phase);
	/* the last reduction reduces a block it does not own the pieces of */
	struct xfer *x = &m.prog.xfers[m.prog.step_start[m.prog.nsteps / 2] - 1];
	x->block =
	    (x->block + 1) % f.g->n == x->src ? (x->block + 2) % f.g->n : (x->block + 1) % f.g->n;
	assert_int_equal(sched_verify_patched(&f.r, &m, f.g, f.gone, &rep), -1);
	assert_false(rep.one_phase);
	sched_patch_free(&m);
	/* a reduction step one short */
	mirrored(&f, SIZE_MAX, KEEP, &m);
	struct schedule *q = &m.prog;
	size_t at = q->step_start[1];
	memmove(&q->xfers[at - 1], &q->xfers[at], (q->nxfers - at) * sizeof(struct xfer));
	q->nxfers--;
	for (uint32_t t = 1; t <= q->nsteps; t++)
		q->step_start[t]--;
	assert_int_equal(sched_verify_patched(&f.r, &m, f.g, f.gone, &rep), -1);
	assert_false(rep.one_phase);
	sched_patch_free(&m);
	fx_close(&f);
}

/* One way of a link failed: gone[] not closed under twins, so both phases
 * are checked; the copies avoid the arc, but their mirrors cross it, and
 * the base's reductions over it are never planned again: refused, where
 * the copies alone would pass. */
static void test_one_way_full(void **state)
{
	(void)state;
	struct fx f;
	struct sched_patch m;
	struct verify_report rep;

	fx_open(&f, "torus:8x8", "5>6", SCHED_ALLREDUCE);
	assert_int_equal(sched_verify_patched(&f.r, &f.p, f.g, f.gone, &rep), 0);
	assert_false(rep.one_phase);
	mirrored(&f, SIZE_MAX, KEEP, &m);
	assert_int_equal(sched_verify_patched(&f.r, &m, f.g, f.gone, &rep), -1);
	assert_false(rep.one_phase);
	if (!strstr(rep.error, "5 -> 6"))
		fail_msg("%s", rep.error);
	sched_patch_free(&m);
	fx_close(&f);
}

/* The allgather and the reduce-scatter alone: the full check, as before
 * (accepted, the explicit verifier's totals); bfb_patch's own allreduce
 * patch, mirrored where the failures take both ways of each link, by one
 * phase, and by both where one way of a link failed (a port's arc). */
static void test_other_collectives_full(void **state)
{
	(void)state;
	enum sched_collective cs[] = {SCHED_ALLGATHER, SCHED_REDUCE_SCATTER, SCHED_ALLREDUCE,
				      SCHED_ALLREDUCE};
	const char *fail[] = {"5-6,100-101", "5-6,100-101", "5-6,100-101", "5-6,7>8"};

	for (size_t i = 0; i < 4; i++) {
		struct fx f;
		struct verify_report rep, er;
		struct schedule s;
		struct ofc_error err = {0};

		fx_open(&f, "torus:16x16", fail[i], cs[i]);
		struct verify_opts vo = {.graph = f.gd};
		if (sched_verify_patched(&f.r, &f.p, f.g, f.gone, &rep) < 0)
			fail_msg("%s", rep.error);
		assert_int_equal(rep.one_phase, i == 2);
		if (sched_patched_expand(&f.r, &f.p, f.g, f.gone, &s, &err) < 0)
			fail_msg("expand: %s", err.msg);
		if (sched_verify(&s, &vo, &er) < 0)
			fail_msg("the expansion: %s", er.error);
		assert_int_equal(rep.ntransfers, er.ntransfers);
		assert_true(fabs(rep.sum_max_link_load - er.sum_max_link_load) < 1e-9);
		sched_free(&s);
		fx_close(&f);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_mirrored_accepted),
	    cmocka_unit_test(test_copy_corruption_mirrored),
	    cmocka_unit_test(test_copy_early_named),
	    cmocka_unit_test(test_reduction_changed),
	    cmocka_unit_test(test_one_way_full),
	    cmocka_unit_test(test_other_collectives_full),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
