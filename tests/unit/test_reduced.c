/* Symmetry-reduced schedules (sched/reduced.c, bfb_reduced): the check by
 * symmetry agrees with the explicit verifier on the expanded schedule
 * (verdict, steps, transfers, link loads, duplicates) on tori, hypercubes,
 * circulants and the other Cayley families, for BFB allgather,
 * reduce-scatter and allreduce; every corrupted program (a transfer
 * dropped, a chunk not yet held, a wrong port, an arc loaded twice, a
 * transfer a step early, a reduction made a copy) fails both checks or
 * moves both figures alike; and the reduced BFB has the explicit BFB's
 * figures. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "alltoall/internal.h" /* a2a_steps_by_symmetry, a2a_schedule */
#include "baselines/baselines.h"
#include "bfb/bfb.h"
#include "sched/sched.h"

struct fixture {
	struct graph *g;
	struct topo_tree *t;
	struct sched_group G;
};

static void open_spec(const char *spec, struct fixture *f)
{
	struct ofc_error err = {0};

	if (topo_build_tree(spec, &f->g, &f->t, &err) < 0)
		fail_msg("%s: %s", spec, err.msg);
	if (sched_group_of(f->g, f->t, &f->G, &err) < 0)
		fail_msg("%s: %s", spec, err.msg);
	assert_int_equal(f->G.order, f->g->n);
}

static void close_spec(struct fixture *f)
{
	graph_free(f->g);
	topo_tree_free(f->t);
}

static void reduced_bfb(const struct fixture *f, enum sched_collective c, struct sched_reduced *r,
			struct bfb_stats *st)
{
	struct ofc_error err = {0};
	struct bfb_opts o = {.threads = 1};

	if (bfb_reduced(f->g, &f->G, c, &o, r, st, &err) < 0)
		fail_msg("%s: %s", f->g->spec, err.msg);
}

/* Both checks on r; returns the reduced verdict after asserting the
 * explicit one is the same and, when both pass, the same figures. */
static int both(const struct fixture *f, const struct sched_reduced *r, struct verify_report *red,
		struct verify_report *exp)
{
	struct verify_opts vo = {.graph = f->g};
	struct schedule s;
	struct ofc_error err = {0};

	int rr = sched_verify_reduced(r, &vo, red);
	if (sched_reduced_expand(r, &s, &err) < 0)
		fail_msg("expand: %s", err.msg);
	int re = sched_verify(&s, &vo, exp);
	if (rr != re)
		fail_msg("%s %s: reduced says %s (%s), explicit says %s (%s)", f->g->spec,
			 sched_collective_name(r->prog.collective), rr ? "bad" : "good", red->error,
			 re ? "bad" : "good", exp->error);
	assert_int_equal(red->nsteps, exp->nsteps);
	assert_int_equal(red->ntransfers, exp->ntransfers);
	assert_int_equal(red->ntransfers, s.nxfers);
	if (rr == 0) {
		assert_true(fabs(red->sum_max_link_load - exp->sum_max_link_load) < 1e-9);
		assert_true(fabs(red->max_link_load - exp->max_link_load) < 1e-9);
		assert_true(fabs(red->max_total_link_load - exp->max_total_link_load) < 1e-9);
		/* Duplicates: the same where there are none; the explicit
		 * verifier counts an overlap of two deliveries of one step
		 * twice (its pairwise pass and its interval lists), so only
		 * "some" is compared. */
		assert_int_equal(red->duplicate_blocks > 0, exp->duplicate_blocks > 0);
		if (red->duplicate_blocks == 0)
			assert_true(exp->duplicate_blocks == 0);
	}
	sched_free(&s);
	return rr;
}

static void copy_reduced(const struct sched_reduced *from, struct sched_reduced *to)
{
	to->group = from->group;
	sched_init(&to->prog, from->prog.collective, from->prog.algorithm, from->prog.nodes);
	sched_append(&to->prog, &from->prog);
}

/* A copy of r with transfer xi dropped (drop) or also added to step
 * `to_step` (moved there when !keep), or replaced by *with. */
static void edited(const struct sched_reduced *r, size_t xi, int to_step, bool keep,
		   const struct xfer *with, struct sched_reduced *out)
{
	const struct schedule *p = &r->prog;

	out->group = r->group;
	sched_init(&out->prog, p->collective, p->algorithm, p->nodes);
	for (uint32_t t = 0; t < p->nsteps; t++) {
		sched_step(&out->prog);
		for (size_t i = p->step_start[t]; i < p->step_start[t + 1]; i++) {
			if (i == xi && with)
				sched_add(&out->prog, with);
			else if (i != xi || (keep && to_step >= 0))
				sched_add(&out->prog, &p->xfers[i]);
		}
		if ((int)t == to_step)
			sched_add(&out->prog, &p->xfers[xi]);
	}
}

/* Transfer xi dropped, and sent through a port that does not lead to its
 * receiver: both checks fail (the reduced one saying so for the port). */
static void dropped_and_misrouted(const struct fixture *f, const struct sched_reduced *r, size_t xi)
{
	const struct xfer *x = &r->prog.xfers[xi];
	struct xfer y = *x;
	struct sched_reduced bad;
	struct verify_report red, exp;

	edited(r, xi, -1, false, NULL, &bad); /* never arrives */
	assert_int_equal(both(f, &bad, &red, &exp), -1);
	sched_reduced_free(&bad);
	y.lane = (uint16_t)((x->lane + 1) % graph_outdeg(f->g, x->src));
	uint32_t end = x->src; /* where the run on the other port ends */
	for (uint32_t k = 0; k < xfer_arcs(&y); k++)
		end = graph_out(f->g, end)[y.lane];
	if (end != x->dst) {
		edited(r, xi, -1, false, &y, &bad);
		assert_int_equal(both(f, &bad, &red, &exp), -1);
		assert_non_null(strstr(red.error, y.run ? "end at node" : "does not lead"));
		sched_reduced_free(&bad);
	}
	if (x->run) { /* a run one arc short ends elsewhere */
		y = *x;
		y.run--;
		edited(r, xi, -1, false, &y, &bad);
		assert_int_equal(both(f, &bad, &red, &exp), -1);
		assert_non_null(strstr(red.error, y.run ? "end at node" : "does not lead"));
		assert_non_null(strstr(exp.error, y.run ? "end at node" : "does not lead"));
		sched_reduced_free(&bad);
	}
}

static uint32_t step_of(const struct schedule *p, size_t xi)
{
	uint32_t t = 0;

	while (p->step_start[t + 1] <= xi)
		t++;
	return t;
}

static void agree(const char *spec, enum sched_collective c)
{
	struct fixture f;
	struct sched_reduced r;
	struct bfb_stats st, full;
	struct verify_report red, exp;
	struct schedule s;
	struct ofc_error err = {0};

	open_spec(spec, &f);
	reduced_bfb(&f, c, &r, &st);
	assert_int_equal(both(&f, &r, &red, &exp), 0);
	/* The link loads give the tau_B BFB reports, and the explicit BFB
	 * has the same figures. */
	assert_true(fabs(red.sum_max_link_load * st.degree / f.g->n - st.tau_b_value) < 1e-6);
	if (bfb_schedule(f.g, c, &(struct bfb_opts){.threads = 1}, &s, &full, &err) < 0)
		fail_msg("%s", err.msg);
	assert_int_equal(st.steps, full.steps);
	assert_int_equal(frac_cmp(st.tau_b, full.tau_b), 0);
	assert_int_equal(r.prog.nsteps, s.nsteps);
	sched_free(&s);
	sched_reduced_free(&r);
	close_spec(&f);
}

static const char *const specs[] = {
    "torus:4x4",	"torus:6x6",	    "torus:8x8",	   "torus:3x4x5", "torus:4x4x2",
    "hypercube:4",	"hypercube:5",	    "hypercube:6",	   "hypercube:7", "hypercube:8",
    "circulant:13:1,5", "circulant:64:1,8", "circulant:50:1,7,20", "ring:9",	  "biring:10",
    "hamming:2,4",	"complete:7",	    "bipartite:5",
};

static void test_agree_allgather(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(specs); i++)
		agree(specs[i], SCHED_ALLGATHER);
}

static void test_agree_reduce(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(specs); i++) {
		agree(specs[i], SCHED_REDUCE_SCATTER);
		agree(specs[i], SCHED_ALLREDUCE);
	}
}

/* Every corruption at a few places of the program: both checks fail, or
 * (a copy sent twice in an allgather, which is waste, not an error) both
 * pass with the same raised load and duplicates. */
static void corrupt(const char *spec, enum sched_collective c)
{
	struct fixture f;
	struct sched_reduced r, bad;
	struct bfb_stats st;
	struct verify_report red, exp, base;

	open_spec(spec, &f);
	reduced_bfb(&f, c, &r, &st);
	assert_int_equal(both(&f, &r, &base, &exp), 0);
	const struct schedule *p = &r.prog;
	size_t picks[] = {0, p->nxfers / 3, p->nxfers / 2, p->nxfers - 1};

	for (size_t k = 0; k < ARRAY_SIZE(picks); k++) {
		size_t xi = picks[k];
		uint32_t t = step_of(p, xi);
		const struct xfer *x = &p->xfers[xi];
		struct xfer y;

		dropped_and_misrouted(&f, &r, xi);

		/* A step early (from step 2 on): an allgather relays what it
		 * has not received yet. A reduction may send early what no
		 * step in between adds to (a leaf's own input), so there the
		 * two checks need only agree. */
		if (t > 0) {
			edited(&r, xi, (int)t - 1, false, NULL, &bad);
			int early = both(&f, &bad, &red, &exp);
			if (c == SCHED_ALLGATHER)
				assert_int_equal(early, -1);
			sched_reduced_free(&bad);
		}

		/* The same orbit twice: an arc loaded twice. */
		edited(&r, xi, (int)t, true, NULL, &bad);
		int rc = both(&f, &bad, &red, &exp);
		if (c == SCHED_ALLGATHER) {
			assert_int_equal(rc, 0);
			assert_true(red.duplicate_blocks > 0);
			assert_true(red.sum_max_link_load >= base.sum_max_link_load);
		} else if (xfer_op(x) == XFER_REDUCE) {
			assert_int_equal(rc, -1); /* an input folded in twice */
		} /* else a finished shard copied twice: agreeing is enough */
		sched_reduced_free(&bad);

		y = *x;
		if (c == SCHED_ALLGATHER) {
			/* A chunk not held yet: at step 1 a node holds only its own. */
			if (t == 0) {
				y.block = x->dst;
				edited(&r, xi, -1, false, &y, &bad);
				assert_int_equal(both(&f, &bad, &red, &exp), -1);
				assert_non_null(strstr(red.error, "does not hold"));
				sched_reduced_free(&bad);
			}
		} else if (xfer_op(x) == XFER_REDUCE) {
			/* A reduction made a copy: the receiver's own inputs lost. */
			y.flags = xfer_flags(DIR_NONE, XFER_COPY);
			edited(&r, xi, -1, false, &y, &bad);
			assert_int_equal(both(&f, &bad, &red, &exp), -1);
			sched_reduced_free(&bad);
		}
	}
	/* A chunk not held: the first transfer of step 1 with another block. */
	if (c == SCHED_ALLGATHER) {
		struct xfer y = p->xfers[0];

		y.block = sched_group_add(&f.G, y.src, y.dst == 1 ? 2 : 1);
		if (y.block != y.src) {
			edited(&r, 0, -1, false, &y, &bad);
			assert_int_equal(both(&f, &bad, &red, &exp), -1);
			sched_reduced_free(&bad);
		}
	}
	sched_reduced_free(&r);
	close_spec(&f);
}

static void test_corrupt(void **state)
{
	/* hypercube:9: BFB cuts a shard in more pieces than the check's fixed
	 * slots (reduce) and masks (copy) take, so its interval lists are
	 * checked too. */
	static const char *const some[] = {
	    "torus:4x4",   "torus:6x6",	  "torus:8x8",	      "hypercube:4", "hypercube:6",
	    "hypercube:8", "torus:3x4x5", "circulant:64:1,8", "bipartite:5", "hypercube:9"};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(some); i++) {
		corrupt(some[i], SCHED_ALLGATHER);
		corrupt(some[i], SCHED_REDUCE_SCATTER);
		corrupt(some[i], SCHED_ALLREDUCE);
	}
}

/* A copy of a valid program is valid; an empty one is incomplete, for
 * both checks with the same verdict. */
static void test_copy_and_empty(void **state)
{
	struct fixture f;
	struct sched_reduced r, c, e = {0};
	struct bfb_stats st;
	struct verify_report red, exp;

	(void)state;
	open_spec("torus:6x6", &f);
	reduced_bfb(&f, SCHED_ALLREDUCE, &r, &st);
	copy_reduced(&r, &c);
	assert_int_equal(both(&f, &c, &red, &exp), 0);
	e.group = f.G;
	sched_init(&e.prog, SCHED_ALLGATHER, "none", f.g->n);
	sched_step(&e.prog);
	assert_int_equal(both(&f, &e, &red, &exp), -1);
	assert_non_null(strstr(red.error, "incomplete"));
	sched_reduced_free(&e);
	sched_reduced_free(&c);
	sched_reduced_free(&r);
	close_spec(&f);
}

/* Which graphs have a translation group: the Cayley families, not
 * generalized Kautz, expansions or degraded graphs. */
static void test_group(void **state)
{
	struct fixture f;
	struct graph *g, *d;
	struct topo_tree *t;
	struct sched_group G;
	struct ofc_error err = {0};

	(void)state;
	open_spec("torus:256x256", &f);
	assert_string_equal(f.G.name, "Z_256^2");
	assert_int_equal(sched_group_add(&f.G, 255, 1), 0);
	assert_int_equal(sched_group_add(&f.G, 255 + 256 * 255, 257), 0);
	assert_int_equal(sched_group_sub(&f.G, 0, 1), 255);
	close_spec(&f);
	open_spec("hypercube:16", &f);
	assert_string_equal(f.G.name, "Z_2^16");
	assert_true(f.G.binary);
	close_spec(&f);
	open_spec("torus:3x4x5", &f);
	assert_string_equal(f.G.name, "Z_3 x Z_4 x Z_5");
	close_spec(&f);

	assert_int_equal(topo_build_tree("genkautz:64,4", &g, &t, &err), 0);
	assert_int_equal(sched_group_of(g, t, &G, &err), -1);
	graph_free(g);
	topo_tree_free(t);
	assert_int_equal(topo_build_tree("line(circulant:8:1)", &g, &t, &err), 0);
	assert_int_equal(sched_group_of(g, t, &G, &err), -1);
	graph_free(g);
	topo_tree_free(t);
	/* A torus less a link keeps its tree but not its group. */
	assert_int_equal(topo_build_tree("torus:4x4", &g, &t, &err), 0);
	assert_int_equal(topo_fail_links(g, "0-1", &d, &err), 0);
	assert_int_equal(sched_group_of(d, t, &G, &err), -1);
	graph_free(d);
	graph_free(g);
	topo_tree_free(t);
}

/* All-to-all: the MCF's symmetric routes as node 0's program, lowered by
 * paths and by steps, agree with the explicit a2a_build schedule (same
 * link loads, same busiest link) and the expansion passes sched_verify;
 * corruptions fail both checks. */
static int cmp_xfer(const void *a, const void *b);
static void same_schedule(const struct sched_reduced *r, struct schedule *es);

/* algo mcf (lowered as asked), direct or sp-balanced. */
static void a2a_case(const char *spec, enum a2a_algo algo, const char *lowering, bool runs)
{
	struct fixture f;
	struct sched_reduced r, bad;
	struct a2a_outcome o, eo;
	struct schedule es;
	struct verify_report red, exp, ex;
	struct ofc_error err = {0};
	struct a2a_request q = {.algo = algo,
				.lowering = lowering ? a2a_lowering_find(lowering) : NULL,
				.mcf = {.threads = 1},
				.runs = runs};
	struct verify_opts vo;
	bool mcf = algo == A2A_MCF;
	bool single = mcf && lowering && strcmp(lowering, "single") == 0;
	/* sp-balanced and single path balance node 0's pairs by port loads:
	 * the symmetric schedule of their rule, not the explicit one (which
	 * balances all pairs by arc); each block in one piece on one path. */
	bool own_rule = algo == A2A_SP_BALANCED || single;

	open_spec(spec, &f);
	vo = (struct verify_opts){.graph = f.g};
	if (a2a_reduced(f.g, &f.G, &q, &r, &o, &err) < 0)
		fail_msg("%s %s %s: %s", spec, a2a_algo_name(algo), lowering, err.msg);
	if (mcf)
		assert_true(o.mcf.symmetric);
	assert_int_equal(both(&f, &r, &red, &exp), 0);
	if (a2a_build(f.g, &q, &es, &eo, &err) < 0)
		fail_msg("%s: %s", spec, err.msg);
	assert_int_equal(sched_verify(&es, &vo, &ex), 0);
	/* single: each rule picks its own paths among the MCF's; sp-balanced's
	 * are as long, but not as straight. */
	if (!single && !(runs && own_rule)) {
		assert_int_equal(es.nxfers, sched_reduced_transfers(&r));
		assert_int_equal(es.nsteps, r.prog.nsteps);
	}
	if (!own_rule) {
		assert_true(fabs(ex.sum_max_link_load - red.sum_max_link_load) < 1e-9);
		assert_true(fabs(ex.max_total_link_load - red.max_total_link_load) < 1e-9);
		assert_true(fabs(eo.max_load - o.max_load) < 1e-9);
	}
	if (o.cut_through) /* the busiest link over all steps: the routes' */
		assert_true(fabs(red.max_total_link_load - o.max_load) < 1e-9);
	if (runs && o.cut_through && !single) {
		/* A route's straight stretches, one transfer each: as many arcs
		 * as the hop-by-hop schedule has transfers, in fewer steps. */
		struct a2a_request hq = q;
		struct a2a_outcome ho;
		struct schedule hs;
		size_t arcs = 0;

		hq.runs = false;
		if (a2a_build(f.g, &hq, &hs, &ho, &err) < 0)
			fail_msg("%s: %s", spec, err.msg);
		for (size_t k = 0; k < r.prog.nxfers; k++)
			arcs += xfer_arcs(&r.prog.xfers[k]);
		assert_int_equal(hs.nxfers, arcs * r.group.order);
		assert_int_equal(hs.nsteps, o.max_hops);
		assert_true(r.prog.nsteps <= hs.nsteps);
		sched_free(&hs);
		a2a_outcome_free(&ho);
	}
	if (single)
		assert_int_equal(o.max_paths, 1);
	if (!mcf || single) {
		/* The busiest link over all routes, from the expansion: each
		 * block in one piece over one path. */
		struct schedule xs;
		double *arc = xcalloc(f.g->m + 1, sizeof(double)), most = 0;

		assert_int_equal(sched_reduced_expand(&r, &xs, &err), 0);
		for (size_t i = 0; i < xs.nxfers; i++) {
			const struct xfer *x = &xs.xfers[i];

			for (uint32_t k = 0, u = x->src; k < xfer_arcs(x); k++) {
				double *a = &arc[f.g->off[u] + x->lane];

				*a += sched_frac(x->length);
				most = *a > most ? *a : most;
				u = f.g->adj[f.g->off[u] + x->lane];
			}
		}
		assert_true(fabs(most - o.max_load) < 1e-9);
		sched_free(&xs);
		free(arc);
	}
	assert_int_equal(eo.max_paths, o.max_paths);
	if (algo == A2A_DIRECT) /* node 0's BFS routes, translated */
		same_schedule(&r, &es);
	sched_free(&es);
	a2a_outcome_free(&eo);

	const struct schedule *p = &r.prog;
	size_t picks[] = {0, p->nxfers / 3, p->nxfers / 2, p->nxfers - 1};
	for (size_t k = 0; k < ARRAY_SIZE(picks); k++) {
		size_t xi = picks[k];
		uint32_t t = step_of(p, xi);
		const struct xfer *x = &p->xfers[xi];

		dropped_and_misrouted(&f, &r, xi);
		/* Twice: at the target an error, at a relay a duplicate. */
		edited(&r, xi, (int)t, true, NULL, &bad);
		int rc = both(&f, &bad, &red, &exp);
		if (x->dst == x->block % f.g->n)
			assert_int_equal(rc, -1);
		else
			assert_true(rc == 0 && red.duplicate_blocks > 0);
		sched_reduced_free(&bad);
		/* A relayed hop a step early: with paths (hop i at step i) the
		 * relay has nothing yet; time-stepped routes may wait at a
		 * relay, so there the checks need only agree. */
		if (t > 0 && x->src != x->block / f.g->n) {
			edited(&r, xi, (int)t - 1, false, NULL, &bad);
			int early = both(&f, &bad, &red, &exp);
			if (!mcf || strcmp(lowering, "steps"))
				assert_int_equal(early, -1);
			sched_reduced_free(&bad);
		}
	}
	sched_reduced_free(&r);
	a2a_outcome_free(&o);
	close_spec(&f);
}

static void test_alltoall(void **state)
{
	static const char *const a2a[] = {"torus:4x4",	 "torus:6x6",	"torus:3x4x5",
					  "hypercube:4", "hypercube:5", "circulant:16:1,4",
					  "complete:6",	 "bipartite:4"};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(a2a); i++) {
		for (int runs = 0; runs < 2; runs++) {
			a2a_case(a2a[i], A2A_MCF, "paths", runs);
			a2a_case(a2a[i], A2A_MCF, "steps", runs);
			a2a_case(a2a[i], A2A_MCF, "single", runs);
			a2a_case(a2a[i], A2A_DIRECT, NULL, runs);
			a2a_case(a2a[i], A2A_SP_BALANCED, NULL, runs);
		}
	}
}

/* The time-stepped all-to-all from the fluid flow (a2a_steps_by_symmetry,
 * which a2a_reduced takes above A2A_STEPS_EXPLICIT_NODES): where it is
 * proven (as expect says: tori of equal sides and hypercubes, whose
 * stabiliser of node 0 moves every port to every other, and some others) its objective is the
 * time-stepped column generation's, its reduced program verifies as its expansion does with
 * per-step loads summing to that objective, and a program with a transfer dropped, misrouted or
 * duplicated at its target fails both checks. */
static void steps_fluid_case(const char *spec, bool expect)
{
	struct fixture f;
	struct topo_facts tf;
	struct mcf_result m, cg;
	struct a2a_request q = {.algo = A2A_MCF, .mcf = {.threads = 1}};
	struct mcf_opts co = {.method = MCF_SYMMETRIC, .threads = 1};
	struct sched_reduced r = {0}, bad;
	struct verify_report red, exp;
	struct ofc_error err = {0};

	open_spec(spec, &f);
	topo_facts(f.g, &tf, 1);
	int rc = a2a_steps_by_symmetry(f.g, &f.G, &q, tf.diameter, &m, &err);
	if (rc != (int)expect)
		fail_msg("%s: the fluid flow's steps %s proven (%d)", spec,
			 expect ? "were not" : "were", rc);
	if (rc == 0) {
		close_spec(&f);
		return;
	}
	assert_true(m.optimal);
	assert_int_equal(m.steps, tf.diameter);
	co.steps = tf.diameter;
	if (mcf_solve(f.g, &co, &cg, &err) < 0)
		fail_msg("%s: %s", spec, err.msg);
	assert_true(cg.optimal);
	assert_true(fabs(m.objective - cg.objective) < 1e-6 * cg.objective);
	struct a2a_routes own = m.routes;
	own.symmetric = false;
	if (a2a_schedule(f.g, &own, true, false, "mcf", &r.prog, NULL, 1, &err) < 0)
		fail_msg("%s: %s", spec, err.msg);
	r.group = f.G;
	assert_int_equal(both(&f, &r, &red, &exp), 0);
	assert_true(fabs(red.sum_max_link_load - m.objective) < 1e-6 * m.objective);
	const struct schedule *p = &r.prog;
	size_t picks[] = {0, p->nxfers / 3, p->nxfers / 2, p->nxfers - 1};
	for (size_t k = 0; k < ARRAY_SIZE(picks); k++) {
		const struct xfer *x = &p->xfers[picks[k]];

		dropped_and_misrouted(&f, &r, picks[k]);
		if (x->dst != x->block % f.g->n)
			continue;
		edited(&r, picks[k], (int)step_of(p, picks[k]), true, NULL, &bad);
		assert_int_equal(both(&f, &bad, &red, &exp), -1);
		sched_reduced_free(&bad);
	}
	sched_reduced_free(&r);
	mcf_result_free(&m);
	mcf_result_free(&cg);
	close_spec(&f);
}

static void test_steps_fluid(void **state)
{
	(void)state;
	steps_fluid_case("torus:6x6", true);
	steps_fluid_case("torus:4x4x4", true);
	steps_fluid_case("hypercube:5", true);
	steps_fluid_case("hamming:3,3", true);
	/* unequal sides whose steps still meet the bound */
	steps_fluid_case("torus:5x10", true);
	/* not proven: the averaged steps load 33.3 where the bound is 32;
	 * routes longer than the diameter (4x6, circulant) */
	steps_fluid_case("torus:4x8", false);
	steps_fluid_case("torus:4x6", false);
	steps_fluid_case("circulant:16:1,4", false);
}

/* s written by w (JSON members in an object, or text), into a string. */
static char *written(const struct schedule *s, const struct sched_reduced *r, bool json)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct json_writer w;

	if (json) {
		jw_init(&w, f, true);
		jw_obj_begin(&w);
		if (r)
			sched_reduced_write_json_members(&w, r);
		else
			sched_write_json_members(&w, s, true);
		jw_obj_end(&w);
		jw_finish(&w);
	} else if (r) {
		sched_reduced_write_text(f, r, UINT32_MAX);
	} else {
		sched_write_text(f, s, UINT32_MAX);
	}
	fclose(f);
	return buf;
}

/* The expansion written as it goes is the expanded schedule written, byte
 * for byte, JSON and text: all-to-all programs (time-stepped, and runs of
 * paths), BFB's allgather and reduce-scatter. */
static void write_case(const struct fixture *f, struct sched_reduced *r)
{
	struct schedule s;
	struct ofc_error err = {0};

	sched_set_metric(&r->prog, "tau_b", 1.5);
	r->prog.time_us = 12.5;
	r->prog.verified = true;
	if (sched_reduced_expand(r, &s, &err) < 0)
		fail_msg("%s: %s", f->g->spec, err.msg);
	s.time_us = r->prog.time_us;
	s.verified = true;
	sched_set_metric(&s, "tau_b", 1.5);
	for (int json = 0; json < 2; json++) {
		char *a = written(&s, NULL, json), *b = written(NULL, r, json);

		if (strcmp(a, b))
			fail_msg("%s %s: the streamed expansion differs", f->g->spec,
				 json ? "json" : "text");
		assert_true(strlen(a) > 100);
		free(a);
		free(b);
	}
	sched_free(&s);
}

static void test_write_stream(void **state)
{
	static const char *const lows[] = {"steps", "paths"};
	struct fixture f;
	struct ofc_error err = {0};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(lows); i++) {
		struct a2a_request q = {.algo = A2A_MCF,
					.lowering = a2a_lowering_find(lows[i]),
					.mcf = {.threads = 1},
					.runs = i == 1};
		struct sched_reduced r;
		struct a2a_outcome o;

		open_spec(i ? "torus:4x6" : "torus:4x4", &f);
		if (a2a_reduced(f.g, &f.G, &q, &r, &o, &err) < 0)
			fail_msg("%s", err.msg);
		write_case(&f, &r);
		sched_reduced_free(&r);
		a2a_outcome_free(&o);
		close_spec(&f);
	}
	for (int c = 0; c < 2; c++) {
		struct sched_reduced r;
		struct bfb_stats st;

		open_spec(c ? "torus:4x4" : "hypercube:4", &f);
		reduced_bfb(&f, c ? SCHED_REDUCE_SCATTER : SCHED_ALLGATHER, &r, &st);
		write_case(&f, &r);
		sched_reduced_free(&r);
		close_spec(&f);
	}
}

/* The same schedule under a subgroup H (translations by multiples of
 * step[i]): the program translated by every representative of H's
 * cosets. */
static void to_subgroup(const struct sched_reduced *r, const uint32_t *step,
			struct sched_reduced *out)
{
	const struct schedule *p = &r->prog;
	struct ofc_error err = {0};

	out->group = r->group;
	if (sched_group_restrict(&out->group, step, &err) < 0)
		fail_msg("%s", err.msg);
	sched_init(&out->prog, p->collective, p->algorithm, p->nodes);
	for (uint32_t t = 0; t < p->nsteps; t++) {
		sched_step(&out->prog);
		for (uint32_t i = 0; i < out->group.reps; i++)
			for (size_t k = p->step_start[t]; k < p->step_start[t + 1]; k++) {
				struct xfer y = sched_reduced_move(
				    r, &p->xfers[k], sched_group_rep_node(&out->group, i));

				sched_add(&out->prog, &y);
			}
	}
}

/* Subgroups (Swing keeps only the even translations): the check tracks one
 * node per orbit and still agrees with the explicit one, also on
 * corrupted programs. */
static void test_subgroup(void **state)
{
	static const struct {
		const char *spec;
		uint32_t step[3];
	} cases[] = {
	    {"torus:4x4", {2, 2}}, {"torus:6x6", {2, 3}},      {"torus:8x8", {4, 2}},
	    {"torus:4x6", {1, 2}}, {"torus:3x4x5", {3, 2, 1}}, {"hypercube:5", {2, 1, 2}},
	};
	static const enum sched_collective colls[] = {SCHED_ALLGATHER, SCHED_REDUCE_SCATTER,
						      SCHED_ALLREDUCE};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++)
		for (size_t c = 0; c < ARRAY_SIZE(colls); c++) {
			struct fixture f;
			struct sched_reduced r, h, bad;
			struct bfb_stats st;
			struct verify_report red, exp, base;
			uint32_t step[SCHED_GROUP_MAX_DIMS];

			open_spec(cases[i].spec, &f);
			for (uint32_t k = 0; k < f.G.ndims; k++)
				step[k] = k < 3 ? cases[i].step[k] : 1;
			if (strncmp(cases[i].spec, "hypercube", 9) == 0)
				for (uint32_t k = 0; k < f.G.ndims; k++)
					step[k] = k == 0 || k == 2 ? 2 : 1;
			reduced_bfb(&f, colls[c], &r, &st);
			assert_int_equal(both(&f, &r, &base, &exp), 0);
			to_subgroup(&r, step, &h);
			assert_true(h.group.reps > 1);
			assert_int_equal(h.group.order * h.group.reps, f.g->n);
			assert_int_equal(both(&f, &h, &red, &exp), 0);
			assert_true(fabs(red.sum_max_link_load - base.sum_max_link_load) < 1e-9);
			const struct schedule *p = &h.prog;
			size_t picks[] = {0, p->nxfers / 2, p->nxfers - 1};
			for (size_t k = 0; k < ARRAY_SIZE(picks); k++) {
				uint32_t t = step_of(p, picks[k]);

				edited(&h, picks[k], -1, false, NULL, &bad);
				assert_int_equal(both(&f, &bad, &red, &exp), -1);
				sched_reduced_free(&bad);
				if (t > 0) {
					edited(&h, picks[k], (int)t - 1, false, NULL, &bad);
					int early = both(&f, &bad, &red, &exp);
					if (colls[c] == SCHED_ALLGATHER)
						assert_int_equal(early, -1);
					sched_reduced_free(&bad);
				}
			}
			sched_reduced_free(&h);
			sched_reduced_free(&r);
			close_spec(&f);
		}
}

/* Swing: the even translations and the 2^D representatives' program
 * expand to the explicit schedule's transfers (as a multiset), with the
 * same routed figures, both checks passing; corruptions fail both. */
static int cmp_xfer(const void *a, const void *b)
{
	return memcmp(a, b, sizeof(struct xfer));
}

/* The check by symmetry of r and of r cut into blocks: the same verdict
 * and error, every piece by its spans' sums in the first, none in the
 * second; the explicit check of the expansion agrees. */
static int spans_and_cut(const struct sched_reduced *r, uint32_t pieces)
{
	struct sched_reduced cut = {.group = r->group};
	struct verify_report red, vc, exp;
	struct schedule xs;
	struct ofc_error err = {0};

	int rc = sched_verify_reduced(r, NULL, &red);
	assert_int_equal(red.pieces_by_sums, pieces);
	sched_unspan(&r->prog, &cut.prog);
	assert_int_equal(sched_verify_reduced(&cut, NULL, &vc), rc);
	assert_int_equal(vc.pieces_by_sums, 0);
	assert_string_equal(vc.error, red.error);
	sched_reduced_free(&cut);
	assert_int_equal(sched_reduced_expand(r, &xs, &err), 0);
	assert_int_equal(sched_verify(&xs, NULL, &exp), rc);
	sched_free(&xs);
	return rc;
}

/* Latency-optimal: the whole vector a step, one span of all N blocks a
 * transfer. The check by symmetry of the program cut into blocks says the
 * same (transfers, steps, loads); a span one block short, or a half span,
 * fails it and the explicit check of its expansion. Whole spans are
 * checked by their sums (span_sums): a span from a peer of another step
 * (an input twice, another never), a span twice (inputs over n) and a
 * span dropped (inputs under n) fail them as they fail the planes. */
static void latency_spans(const struct sched_reduced *r, const struct verify_report *vr)
{
	const struct schedule *p = &r->prog;
	uint32_t n = r->group.nodes;
	struct sched_reduced cut = {.group = r->group}, bad;
	struct verify_report vc, red, exp;
	struct schedule xs;
	struct ofc_error err = {0};

	for (size_t i = 0; i < p->nxfers; i++) {
		assert_int_equal(xfer_blocks(&p->xfers[i]), n);
		assert_int_equal(p->xfers[i].block, 0);
	}
	uint32_t pieces = 0; /* a piece a collective: its own part of the vector */
	for (size_t i = 0; i < p->nxfers; i++) {
		size_t j = 0;

		while (j < i && p->xfers[j].offset != p->xfers[i].offset)
			j++;
		pieces += j == i;
	}
	assert_int_equal(vr->pieces_by_sums, pieces);
	assert_int_equal(spans_and_cut(r, pieces), 0);
	for (uint32_t t = 1; t < p->nsteps; t++) {
		size_t at = p->step_start[t], before = p->step_start[t - 1];
		struct xfer y = p->xfers[at];

		/* The peer of the step before, in the same piece. */
		while (before < p->step_start[t] &&
		       (p->xfers[before].offset != y.offset || p->xfers[before].dst != y.dst))
			before++;
		if (before == p->step_start[t])
			continue;
		y.src = p->xfers[before].src;
		edited(r, at, -1, false, &y, &bad);
		assert_int_equal(spans_and_cut(&bad, pieces), -1);
		sched_reduced_free(&bad);
		edited(r, at, (int)t, true, NULL, &bad); /* twice in its step */
		assert_int_equal(spans_and_cut(&bad, pieces), -1);
		sched_reduced_free(&bad);
		edited(r, at, -1, false, NULL, &bad);
		assert_int_equal(spans_and_cut(&bad, pieces), -1);
		sched_reduced_free(&bad);
	}
	sched_unspan(p, &cut.prog);
	assert_int_equal(cut.prog.nxfers, (size_t)n * p->nxfers);
	assert_int_equal(sched_verify_reduced(&cut, NULL, &vc), 0);
	assert_int_equal(vc.ntransfers, vr->ntransfers);
	assert_int_equal(vc.nsteps, vr->nsteps);
	assert_true(vc.split == vr->split);
	sched_reduced_free(&cut);

	size_t picks[] = {0, p->nxfers / 2, p->nxfers - 1};
	for (size_t k = 0; k < ARRAY_SIZE(picks); k++)
		for (int half = 0; half < 2; half++) {
			struct xfer y = p->xfers[picks[k]];

			/* The first half of the blocks, or the second. */
			y.flags = xfer_span_flags(y.flags, (uint32_t)__builtin_ctz(n) - 1);
			if (half)
				y.block = n / 2;
			edited(r, picks[k], -1, false, &y, &bad);
			assert_int_equal(sched_verify_reduced(&bad, NULL, &red), -1);
			assert_int_equal(sched_reduced_expand(&bad, &xs, &err), 0);
			assert_int_equal(sched_verify(&xs, NULL, &exp), -1);
			sched_free(&xs);
			sched_reduced_free(&bad);
		}
}

static void swing_case(const char *spec, enum torus_algo algo, enum swing_variant v)
{
	struct fixture f;
	struct sched_reduced r, bad;
	struct schedule es, xs;
	struct torus_figures tf, ef;
	struct verify_report red, exp;
	struct ofc_error err = {0};

	open_spec(spec, &f);
	uint32_t reps;
	double want = torus_allreduce_reduced_transfers(f.t, algo, v, &reps);
	if (torus_allreduce_reduced(f.t, algo, v, &f.G, &r, &tf, &err) < 0)
		fail_msg("%s: %s", spec, err.msg);
	/* The estimate the CLI refuses by is the program's size. */
	assert_true(want == (double)r.prog.nxfers);
	assert_int_equal(reps, r.group.reps);
	/* Latency-optimal Swing's figures without the program: the same. */
	if (v == SWING_LATENCY && algo == TORUS_SWING) {
		struct torus_figures alone;

		assert_int_equal(torus_allreduce_reduced(f.t, algo, v, &f.G, NULL, &alone, &err),
				 0);
		assert_true(alone.tau_b == tf.tau_b && alone.hops == tf.hops && alone.xi == tf.xi);
		assert_int_equal(alone.steps, tf.steps);
		assert_int_equal(alone.instances, tf.instances);
	} else {
		struct torus_figures alone;

		assert_int_equal(torus_allreduce_reduced(f.t, algo, v, &f.G, NULL, &alone, &err),
				 -1);
	}
	if (algo == TORUS_SWING) {
		assert_int_equal(r.group.reps, 1u << f.G.ndims);
	} else { /* XOR on the ids: node 0's sends */
		assert_int_equal(r.group.reps, 1);
		assert_true(r.group.binary);
		assert_int_equal(r.group.order, f.g->n);
	}
	if (torus_allreduce(f.t, algo, v, true, &es, &ef, &err) < 0)
		fail_msg("%s: %s", spec, err.msg);
	assert_true(fabs(tf.tau_b - ef.tau_b) < 1e-9);
	assert_true(fabs(tf.hops - ef.hops) < 1e-9);
	assert_true(fabs(tf.xi - ef.xi) < 1e-9);
	assert_int_equal(tf.steps, ef.steps);
	/* No graph: Swing names logical peers. */
	struct verify_report vr;
	assert_int_equal(sched_verify_reduced(&r, NULL, &vr), 0);
	assert_int_equal(sched_reduced_expand(&r, &xs, &err), 0);
	assert_int_equal(sched_verify(&xs, NULL, &exp), 0);
	assert_int_equal(xs.nxfers, es.nxfers);
	assert_int_equal(xs.nsteps, es.nsteps);
	for (uint32_t t = 0; t < es.nsteps; t++) {
		assert_int_equal(sched_step_size(&xs, t), sched_step_size(&es, t));
		qsort(xs.xfers + xs.step_start[t], sched_step_size(&xs, t), sizeof(struct xfer),
		      cmp_xfer);
		qsort(es.xfers + es.step_start[t], sched_step_size(&es, t), sizeof(struct xfer),
		      cmp_xfer);
	}
	assert_memory_equal(xs.xfers, es.xfers, es.nxfers * sizeof(struct xfer));
	sched_free(&xs);
	sched_free(&es);
	if (v == SWING_LATENCY)
		latency_spans(&r, &vr);

	const struct schedule *p = &r.prog;
	size_t picks[] = {0, p->nxfers / 3, p->nxfers - 1};
	for (size_t k = 0; k < ARRAY_SIZE(picks); k++) {
		struct xfer y = p->xfers[picks[k]];

		edited(&r, picks[k], -1, false, NULL, &bad);
		assert_int_equal(sched_verify_reduced(&bad, NULL, &red), -1);
		assert_int_equal(sched_reduced_expand(&bad, &xs, &err), 0);
		assert_int_equal(sched_verify(&xs, NULL, &exp), -1);
		sched_free(&xs);
		sched_reduced_free(&bad);
		y.block = sched_group_add(&f.G, y.block, 1);
		edited(&r, picks[k], -1, false, &y, &bad);
		assert_int_equal(sched_verify_reduced(&bad, NULL, &red), -1);
		assert_int_equal(sched_reduced_expand(&bad, &xs, &err), 0);
		assert_int_equal(sched_verify(&xs, NULL, &exp), -1);
		sched_free(&xs);
		sched_reduced_free(&bad);
	}
	sched_reduced_free(&r);
	close_spec(&f);
}

static void test_swing(void **state)
{
	static const char *const tori[] = {"torus:4x4", "torus:8x8",   "torus:4x8",
					   "torus:6x6", "torus:4x4x4", "torus:16x16"};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(tori); i++) {
		swing_case(tori[i], TORUS_SWING, SWING_BANDWIDTH);
		if (strcmp(tori[i], "torus:6x6") && strcmp(tori[i], "torus:16x16"))
			swing_case(tori[i], TORUS_SWING, SWING_LATENCY);
	}
}

/* Recursive doubling: reduced by XOR on the ids (its peers), the same
 * expansion, routed figures and check verdicts as the explicit one. */
static void test_recursive_doubling(void **state)
{
	static const char *const tori[] = {"torus:4x4",	 "torus:8x8",	"torus:4x8",
					   "torus:2x16", "torus:4x4x4", "torus:16x16"};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(tori); i++) {
		swing_case(tori[i], TORUS_RECURSIVE_DOUBLING, SWING_BANDWIDTH);
		swing_case(tori[i], TORUS_RECURSIVE_DOUBLING, SWING_LATENCY);
	}
}

static uint64_t mix(uint64_t x) /* splitmix64's finaliser */
{
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* Whole-vector spans from random peers, zero to three into a
 * representative a step, in one piece or two: the check by their sums
 * (span_sums: listed sets, then the walk above them) gives the verdict and
 * error of the planes' check of the program cut into blocks (plain
 * transfers: at_once_step's loop, and the read lists after a clash). On
 * Z_16, Z_4 x Z_4, Z_2^4, and Z_16's even translations (two
 * representatives). */
static void test_span_sums(void **state)
{
	static const struct {
		uint32_t radix[2], k, step;
	} groups[] = {{{16, 1}, 1, 1}, {{4, 4}, 2, 1}, {{2, 2}, 2, 1}, {{16, 1}, 1, 2}};
	uint64_t seed = 0x5eed;
	uint32_t passed = 0, failed = 0;

	(void)state;
	for (size_t gi = 0; gi < ARRAY_SIZE(groups); gi++)
		for (int trial = 0; trial < 300; trial++) {
			struct sched_reduced r = {0}, cut = {0};
			struct verify_report red, vc;
			struct ofc_error err = {0};
			uint32_t radix[4] = {groups[gi].radix[0], groups[gi].radix[1], 2, 2};
			uint32_t k = gi == 2 ? 4 : groups[gi].k,
				 step[4] = {groups[gi].step, 1, 1, 1};

			sched_group_make(&r.group, radix, k);
			if (groups[gi].step > 1)
				assert_int_equal(sched_group_restrict(&r.group, step, &err), 0);
			uint32_t n = r.group.nodes, reps = r.group.reps, pieces = 1 + trial % 2;
			uint32_t T = 1 + (uint32_t)(mix(seed++) % 6);
			/* A third (one representative): spans that keep the inputs
			 * apart, U and U - delta of each disjoint, to all n: right. */
			bool right = reps == 1 && trial % 3 == 0;
			uint32_t peer[2][8][2], np[2][8] = {{0}}, held[2] = {1, 1};
			for (uint32_t c = 0; right && c < pieces; c++)
				for (uint32_t t = 0; held[c] != (1u << n) - 1 && t < 8; t++)
					for (int tries = 0; tries < 200; tries++) {
						uint32_t m = 1 + (mix(seed++) % 4 == 0), d[2],
							 u = held[c];
						bool apart = true;

						for (uint32_t e = 0; e < m && apart; e++) {
							d[e] =
							    1 + (uint32_t)(mix(seed++) % (n - 1));
							for (uint32_t a = 0; a < n; a++)
								if (held[c] >> a & 1) {
									uint32_t b =
									    sched_group_sub(
										&r.group, a, d[e]);

									apart =
									    apart && !(u >> b & 1);
									u |= 1u << b;
								}
						}
						if (!apart)
							continue;
						held[c] = u;
						np[c][t] = m;
						for (uint32_t e = 0; e < m;
						     e++) /* delta = 0 - src */
							peer[c][t][e] =
							    sched_group_sub(&r.group, 0, d[e]);
						T = t + 1 > T || c == 0 ? t + 1 : T;
						break;
					}
			sched_init(&r.prog, SCHED_ALLREDUCE, "spans", n);
			for (uint32_t t = 0; t < T; t++) {
				sched_step(&r.prog);
				for (uint32_t c = 0; c < pieces; c++)
					for (uint32_t q = 0; q < reps; q++) {
						uint64_t w = mix(seed++);
						/* mostly one span, as a doubling's */
						uint32_t m = right	 ? np[c][t]
							     : w % 8 < 5 ? 1
									 : (uint32_t)(w % 4);

						for (uint32_t e = 0; e < m; e++) {
							uint32_t dst =
							    sched_group_rep_node(&r.group, q);
							uint32_t src =
							    right ? peer[c][t][e]
								  : (uint32_t)(mix(seed++) % n);

							if (src == dst)
								src = (src + 1) % n;
							struct xfer x = {
							    .src = (uint16_t)src,
							    .dst = (uint16_t)dst,
							    .offset = c * (SCHED_ONE / pieces),
							    .length = SCHED_ONE / pieces,
							    .lane = SCHED_NO_LANE,
							    .flags = xfer_span_flags(
								xfer_flags(DIR_NONE, XFER_REDUCE),
								(uint32_t)__builtin_ctz(n))};
							sched_add(&r.prog, &x);
						}
					}
			}
			int rc = sched_verify_reduced(&r, NULL, &red);
			assert_int_equal(red.pieces_by_sums, pieces);
			cut.group = r.group;
			sched_unspan(&r.prog, &cut.prog);
			assert_int_equal(sched_verify_reduced(&cut, NULL, &vc), rc);
			assert_int_equal(vc.pieces_by_sums, 0);
			assert_string_equal(vc.error, red.error);
			passed += rc == 0;
			failed += rc != 0;
			sched_reduced_free(&cut);
			sched_reduced_free(&r);
		}
	/* Both verdicts were asked for. */
	assert_true(passed >= 20 && failed >= 20);
}

/* The expansion of r equals s transfer for transfer (as multisets, step
 * by step). */
static void same_schedule(const struct sched_reduced *r, struct schedule *es)
{
	struct schedule xs;
	struct ofc_error err = {0};

	assert_int_equal(sched_reduced_expand(r, &xs, &err), 0);
	assert_int_equal(xs.nxfers, es->nxfers);
	assert_int_equal(xs.nsteps, es->nsteps);
	for (uint32_t t = 0; t < es->nsteps; t++) {
		assert_int_equal(sched_step_size(&xs, t), sched_step_size(es, t));
		qsort(xs.xfers + xs.step_start[t], sched_step_size(&xs, t), sizeof(struct xfer),
		      cmp_xfer);
		qsort(es->xfers + es->step_start[t], sched_step_size(es, t), sizeof(struct xfer),
		      cmp_xfer);
	}
	assert_memory_equal(xs.xfers, es->xfers, es->nxfers * sizeof(struct xfer));
	sched_free(&xs);
}

/* Baselines: the reduced program expands to baseline_schedule's schedule,
 * both checks pass with the same figures, and corruptions (a transfer
 * dropped, through a wrong port, a step early, twice, another block, a
 * reduction made a copy) fail both checks or, where harmless, pass both. */
static void baseline_case(const char *spec, enum baseline_algo algo, enum sched_collective c,
			  uint32_t reps)
{
	struct fixture f;
	struct sched_reduced r, bad;
	struct schedule es;
	struct verify_report red, exp, ex;
	struct ofc_error err = {0};
	struct verify_opts vo;

	open_spec(spec, &f);
	vo = (struct verify_opts){.graph = f.g};
	if (baseline_reduced(f.g, f.t, algo, c, &f.G, &r, &err) < 0)
		fail_msg("%s %s: %s", spec, baseline_algo_name(algo), err.msg);
	assert_int_equal(r.group.reps, reps);
	assert_int_equal(both(&f, &r, &red, &exp), 0);
	if (baseline_schedule(f.g, f.t, algo, c, &es, NULL, &err) < 0)
		fail_msg("%s %s: %s", spec, baseline_algo_name(algo), err.msg);
	assert_int_equal(sched_verify(&es, &vo, &ex), 0);
	assert_true(fabs(ex.sum_max_link_load - red.sum_max_link_load) < 1e-9);
	/* recursive doubling's explicit all-gather carries spans: the same
	 * schedule, block by block */
	struct schedule us;
	sched_unspan(&es, &us);
	assert_true(sched_has_spans(&es) == (c == SCHED_ALLGATHER && algo == BASELINE_RECURSIVE));
	same_schedule(&r, &us);
	sched_free(&us);
	sched_free(&es);

	const struct schedule *p = &r.prog;
	size_t picks[] = {0, p->nxfers / 3, p->nxfers / 2, p->nxfers - 1};
	for (size_t k = 0; k < ARRAY_SIZE(picks); k++) {
		size_t xi = picks[k];
		uint32_t t = step_of(p, xi);
		const struct xfer *x = &p->xfers[xi];
		struct xfer y = *x;

		dropped_and_misrouted(&f, &r, xi);
		/* A step early: on a ring a block arrives the step before it
		 * moves on; torus-rings and recursive doubling also pass on
		 * the sender's own block or one held for longer, where the two
		 * checks need only agree. */
		if (t > 0) {
			edited(&r, xi, (int)t - 1, false, NULL, &bad);
			int early = both(&f, &bad, &red, &exp);
			if (c == SCHED_ALLGATHER &&
			    (algo == BASELINE_RING || algo == BASELINE_BIDIR_RING))
				assert_int_equal(early, -1);
			sched_reduced_free(&bad);
		}
		edited(&r, xi, (int)t, true, NULL, &bad);
		int rc = both(&f, &bad, &red, &exp);
		if (xfer_op(x) == XFER_REDUCE)
			assert_int_equal(rc, -1);
		else if (c == SCHED_ALLGATHER)
			assert_true(rc == 0 && red.duplicate_blocks > 0);
		sched_reduced_free(&bad);
		y = *x;
		y.block = sched_group_add(&f.G, y.block, y.block == y.src ? 1 : y.src);
		if (y.block != x->block) {
			edited(&r, xi, -1, false, &y, &bad);
			assert_int_equal(both(&f, &bad, &red, &exp), -1);
			sched_reduced_free(&bad);
		}
		if (xfer_op(x) == XFER_REDUCE) {
			y = *x;
			y.flags = xfer_flags(DIR_NONE, XFER_COPY);
			edited(&r, xi, -1, false, &y, &bad);
			assert_int_equal(both(&f, &bad, &red, &exp), -1);
			sched_reduced_free(&bad);
		}
	}
	sched_reduced_free(&r);
	close_spec(&f);
}

static void test_baselines(void **state)
{
	static const enum sched_collective colls[] = {SCHED_ALLGATHER, SCHED_REDUCE_SCATTER,
						      SCHED_ALLREDUCE};
	static const struct {
		const char *spec;
		enum baseline_algo algo;
		uint32_t reps;
	} cases[] = {
	    {"torus:4x4", BASELINE_TORUS_RINGS, 1},   {"torus:6x6", BASELINE_TORUS_RINGS, 1},
	    {"torus:8x8", BASELINE_TORUS_RINGS, 1},   {"torus:4x8", BASELINE_TORUS_RINGS, 1},
	    {"torus:3x4x5", BASELINE_TORUS_RINGS, 1}, {"torus:4x4x4", BASELINE_TORUS_RINGS, 1},
	    {"torus:4x4x2", BASELINE_TORUS_RINGS, 1}, {"torus:2x8", BASELINE_TORUS_RINGS, 1},
	    {"hypercube:4", BASELINE_RECURSIVE, 1},   {"hypercube:7", BASELINE_RECURSIVE, 1},
	    {"torus:4x4", BASELINE_RING, 8},	      {"torus:4x4", BASELINE_BIDIR_RING, 8},
	    {"torus:8x8", BASELINE_BIDIR_RING, 16},   {"torus:6x8", BASELINE_RING, 12},
	    {"torus:6x8", BASELINE_BIDIR_RING, 12},   {"torus:3x4x5", BASELINE_BIDIR_RING, 30},
	    {"torus:4x6x2", BASELINE_RING, 16},	      {"torus:10x3", BASELINE_BIDIR_RING, 6},
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++)
		for (size_t c = 0; c < ARRAY_SIZE(colls); c++)
			baseline_case(cases[i].spec, cases[i].algo, colls[c], cases[i].reps);
}

/* Where a baseline has no symmetry, the reduced builder says why. */
static void test_baseline_refusals(void **state)
{
	static const struct {
		const char *spec;
		enum baseline_algo algo;
		const char *why;
	} cases[] = {
	    {"torus:8x8", BASELINE_RECURSIVE, "no symmetry-reduced form"},
	    {"hypercube:6", BASELINE_RING, "its own inverse"},
	    {"hypercube:6", BASELINE_BIDIR_RING, "its own inverse"},
	    {"torus:3x5", BASELINE_RING, "none"},
	    {"torus:2x3", BASELINE_BIDIR_RING, "none"},
	    {"hypercube:4", BASELINE_TORUS_RINGS, "torus"},
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct fixture f;
		struct sched_reduced r;
		struct ofc_error err = {0};

		open_spec(cases[i].spec, &f);
		assert_int_equal(
		    baseline_reduced(f.g, f.t, cases[i].algo, SCHED_ALLGATHER, &f.G, &r, &err), -1);
		assert_int_equal(err.code, OFC_E_INPUT);
		if (!strstr(err.msg, cases[i].why))
			fail_msg("%s %s: %s", cases[i].spec, baseline_algo_name(cases[i].algo),
				 err.msg);
		close_spec(&f);
	}
}

/* 65,536 nodes: the reduced BFB and its check, without expanding. */
static void test_large(void **state)
{
	static const char *const big[] = {"torus:256x256", "hypercube:16"};
	struct verify_report rep;

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(big); i++) {
		struct fixture f;
		struct sched_reduced r;
		struct bfb_stats st;
		struct verify_opts vo;

		open_spec(big[i], &f);
		vo = (struct verify_opts){.graph = f.g};
		reduced_bfb(&f, SCHED_ALLREDUCE, &r, &st);
		assert_int_equal(sched_verify_reduced(&r, &vo, &rep), 0);
		assert_true(st.bw_optimal);
		assert_true(fabs(rep.sum_max_link_load * st.degree / f.g->n - st.tau_b_value) <
			    1e-6);
		assert_int_equal(rep.ntransfers, sched_reduced_transfers(&r));
		sched_reduced_free(&r);
		close_spec(&f);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_group),
	    cmocka_unit_test(test_agree_allgather),
	    cmocka_unit_test(test_agree_reduce),
	    cmocka_unit_test(test_corrupt),
	    cmocka_unit_test(test_copy_and_empty),
	    cmocka_unit_test(test_alltoall),
	    cmocka_unit_test(test_steps_fluid),
	    cmocka_unit_test(test_write_stream),
	    cmocka_unit_test(test_subgroup),
	    cmocka_unit_test(test_swing),
	    cmocka_unit_test(test_recursive_doubling),
	    cmocka_unit_test(test_span_sums),
	    cmocka_unit_test(test_baselines),
	    cmocka_unit_test(test_baseline_refusals),
	    cmocka_unit_test(test_large),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
