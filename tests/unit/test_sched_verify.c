/* The verifier accepts correct schedules and names the first error of
 * broken ones: causality, completeness, links, lightpaths, reduce counts. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "baselines/baselines.h"
#include "bfb/bfb.h"
#include "sched/sched.h"

static struct xfer X(uint32_t src, uint32_t dst, uint32_t block) {
	return (struct xfer){.src = (uint16_t)src,
			     .dst = (uint16_t)dst,
			     .block = block,
			     .offset = 0,
			     .length = SCHED_ONE,
			     .lane = SCHED_NO_LANE};
}

/* A reducing transfer of the whole block. */
static struct xfer
R(uint32_t src, uint32_t dst, uint32_t block) {
	struct xfer x = X(src, dst, block);

	x.flags = xfer_flags(DIR_NONE, XFER_REDUCE);
	return x;
}

/* Ring all-gather on a one-way ring: in step t node u forwards block u - t. */
static void
ring_allgather(struct schedule *s, uint32_t n)
{
	sched_init(s, SCHED_ALLGATHER, "ring", n);
	for (uint32_t t = 0; t + 1 < n; t++) {
		sched_step(s);
		for (uint32_t u = 0; u < n; u++) {
			struct xfer x = X(u, (u + 1) % n, (u + n - t) % n);
			sched_add(s, &x);
		}
	}
}

static void test_ring_allgather_ok(void **state)
{
	struct schedule s;
	struct verify_report r;
	struct graph *g;
	struct ofc_error err = {0};
	(void)state;

	ring_allgather(&s, 6);
	assert_int_equal(topo_build("ring:6", &g, &err), 0);
	struct verify_opts o = {.graph = g};
	assert_int_equal(sched_verify(&s, &o, &r), 0);
	assert_true(r.ok);
	assert_int_equal(r.nsteps, 5);
	/* Every link carries one block in each of the 5 steps. */
	assert_true(r.sum_max_link_load > 4.999 && r.sum_max_link_load < 5.001);
	/* And over the whole schedule: 5 blocks on each link, as cut-through
	 * routes sharing the links at once would price it. */
	assert_true(fabs(r.max_total_link_load - 5) < 1e-9);
	assert_true(r.duplicate_blocks == 0);
	graph_free(g);
	sched_free(&s);
}

/* Empty steps appended to an empty schedule: steps, no transfers, and no
 * pointer made from a missing array (UBSan in `make check` catches that). */
static void test_append_empty_steps(void **state)
{
	struct schedule s;
	const size_t counts[2] = {0, 0};
	(void)state;

	sched_init(&s, SCHED_ALLGATHER, "test", 4);
	assert_null(sched_append_steps(&s, 2, counts));
	assert_int_equal(s.nsteps, 2);
	assert_int_equal(s.nxfers, 0);
	assert_int_equal(sched_step_size(&s, 1), 0);
	sched_free(&s);
}

/* The request's clock: every step reports its fraction; past
 * the deadline the check stops with the phase. */
static void count_steps(void *ctx, const char *phase, double done, double elapsed)
{
	(void)phase;
	(void)elapsed;
	*(double *)ctx = done;
}

static void test_clock(void **state)
{
	struct schedule s;
	struct verify_report r;
	double last = -1;
	struct ofc_clock on = {.start = now_seconds(), .progress = count_steps, .ctx = &last};
	struct ofc_clock past = {.start = now_seconds() - 2, .deadline = now_seconds() - 1};
	(void)state;

	ring_allgather(&s, 6);
	struct verify_opts o = {.clock = &on};
	assert_int_equal(sched_verify(&s, &o, &r), 0);
	assert_true(last > 0.79 && last < 0.81); /* step 4 of 5 began */
	o.clock = &past;
	assert_int_equal(sched_verify(&s, &o, &r), -1);
	assert_non_null(strstr(r.error, "time limit reached in verification"));
	sched_free(&s);
}

static void test_causality(void **state)
{
	struct schedule s;
	struct verify_report r;
	(void)state;

	ring_allgather(&s, 5);
	/* Step 1: node 0 forwards block 3, which it only receives in step 2. */
	s.xfers[0].block = 3;
	assert_int_equal(sched_verify(&s, NULL, &r), -1);
	assert_false(r.ok);
	assert_int_equal(r.bad_step, 0);
	assert_non_null(strstr(r.error, "does not hold"));
	sched_free(&s);
}

static void test_same_step_is_not_visible(void **state)
{
	struct schedule s;
	struct verify_report r;
	(void)state;

	/* 0 -> 1 and 1 -> 2 of block 0 in the same step: 1 does not hold it yet. */
	sched_init(&s, SCHED_ALLGATHER, "bad", 3);
	sched_step(&s);
	struct xfer a = X(0, 1, 0), b = X(1, 2, 0);
	sched_add(&s, &a);
	sched_add(&s, &b);
	assert_int_equal(sched_verify(&s, NULL, &r), -1);
	assert_non_null(strstr(r.error, "does not hold"));
	sched_free(&s);
}

static void test_incomplete(void **state)
{
	struct schedule s;
	struct verify_report r;
	(void)state;

	ring_allgather(&s, 4);
	s.nsteps--; /* drop the last step */
	assert_int_equal(sched_verify(&s, NULL, &r), -1);
	assert_non_null(strstr(r.error, "incomplete"));
	sched_free(&s);
}

static void test_partial_blocks(void **state)
{
	struct schedule s;
	struct verify_report r;
	(void)state;

	/* Node 0's block reaches 1 in halves; 1 forwards the halves next step. */
	sched_init(&s, SCHED_ALLGATHER, "halves", 2);
	sched_step(&s);
	struct xfer a = X(0, 1, 0), b = X(1, 0, 1);
	a.length = SCHED_ONE / 2;
	sched_add(&s, &a);
	sched_add(&s, &b);
	sched_step(&s);
	a.offset = SCHED_ONE / 2;
	sched_add(&s, &a);
	assert_int_equal(sched_verify(&s, NULL, &r), 0);

	/* A third of a block twice leaves a gap. */
	sched_free(&s);
	sched_init(&s, SCHED_ALLGATHER, "gap", 2);
	sched_step(&s);
	a = X(0, 1, 0);
	a.length = SCHED_ONE / 3;
	sched_add(&s, &a);
	sched_add(&s, &b);
	sched_step(&s);
	a.offset = SCHED_ONE / 2;
	a.length = SCHED_ONE / 2;
	sched_add(&s, &a);
	assert_int_equal(sched_verify(&s, NULL, &r), -1);
	assert_non_null(strstr(r.error, "node 1 lacks"));
	sched_free(&s);
}

static void test_links(void **state)
{
	struct schedule s;
	struct verify_report r;
	struct graph *g;
	struct ofc_error err = {0};
	(void)state;

	ring_allgather(&s, 4);
	assert_int_equal(topo_build("ring:4", &g, &err), 0);
	struct verify_opts o = {.graph = g};
	s.xfers[0].lane = 0; /* port 0 of node 0 leads to 1: fine */
	assert_int_equal(sched_verify(&s, &o, &r), 0);
	s.xfers[0].lane = 1; /* ring:4 has one port */
	assert_int_equal(sched_verify(&s, &o, &r), -1);
	assert_non_null(strstr(r.error, "port 1 of node 0"));
	graph_free(g);
	sched_free(&s);

	/* 0 -> 2 is not a link of a one-way ring. */
	assert_int_equal(topo_build("ring:3", &g, &err), 0);
	sched_init(&s, SCHED_ALLGATHER, "bad", 3);
	sched_step(&s);
	struct xfer x = X(0, 2, 0);
	sched_add(&s, &x);
	o.graph = g;
	assert_int_equal(sched_verify(&s, &o, &r), -1);
	assert_non_null(strstr(r.error, "no link 0 -> 2"));
	graph_free(g);
	sched_free(&s);
}

/* Runs (xfer.run): on a one-way ring of 6 every node sends its block to
 * each other node in one step, k arcs cut-through on port 0. The nodes
 * between forward without keeping it, every arc is loaded by every run
 * over it, and a run must end where it says, on a port, through nodes that
 * take part. */
static void ring_runs(struct schedule *s, uint32_t n)
{
	sched_init(s, SCHED_ALLGATHER, "runs", n);
	sched_step(s);
	for (uint32_t u = 0; u < n; u++)
		for (uint32_t k = 1; k < n; k++) {
			struct xfer x = X(u, (u + k) % n, u);

			x.lane = 0;
			x.run = (uint8_t)(k - 1);
			sched_add(s, &x);
		}
}

static void test_runs(void **state)
{
	struct schedule s;
	struct verify_report r;
	struct graph *g;
	struct ofc_error err = {0};
	uint8_t absent[6] = {0, 0, 0, 1, 0, 0};
	(void)state;

	assert_int_equal(topo_build("ring:6", &g, &err), 0);
	struct verify_opts o = {.graph = g};
	ring_runs(&s, 6);
	assert_int_equal(sched_verify(&s, &o, &r), 0);
	/* Each arc carries 1 + 2 + 3 + 4 + 5 runs' blocks, in the one step. */
	assert_true(fabs(r.max_total_link_load - 15) < 1e-9);
	assert_true(fabs(r.sum_max_link_load - 15) < 1e-9);
	/* Without the topology, a run cannot be checked. */
	assert_int_equal(sched_verify(&s, NULL, &r), -1);
	assert_non_null(strstr(r.error, "checked without its topology"));
	/* One arc short of where it says. */
	s.xfers[3].run--;
	assert_int_equal(sched_verify(&s, &o, &r), -1);
	assert_non_null(strstr(r.error, "3 arcs on port 0 from node 0 end at node 3, not 4"));
	s.xfers[3].run++;
	/* A run needs its port. */
	s.xfers[3].lane = SCHED_NO_LANE;
	assert_int_equal(sched_verify(&s, &o, &r), -1);
	assert_non_null(strstr(r.error, "over 4 arcs without its port"));
	s.xfers[3].lane = 0;
	/* Forwarded only through hosts that take part: node 0's block to 4
	 * crosses the failed node 3 (the others' runs to and from 3 are
	 * refused first: keep only node 0's, to the survivors). */
	struct schedule t;
	sched_init(&t, SCHED_ALLGATHER, "runs", 6);
	sched_step(&t);
	struct xfer x = X(0, 4, 0);
	x.lane = 0;
	x.run = 3;
	sched_add(&t, &x);
	o.absent = absent;
	assert_int_equal(sched_verify(&t, &o, &r), -1);
	assert_non_null(strstr(r.error, "node 3, 3 arcs on, takes no part"));
	sched_free(&t);
	sched_free(&s);
	graph_free(g);
}

/* Reduce-scatter on a one-way ring: step t, node u passes its running sum
 * of shard u - t - 1 to u + 1, which adds its own input. */
static void ring_reduce_scatter(struct schedule *s, uint32_t n)
{
	sched_init(s, SCHED_REDUCE_SCATTER, "ring", n);
	for (uint32_t t = 0; t + 1 < n; t++) {
		sched_step(s);
		for (uint32_t u = 0; u < n; u++) {
			struct xfer x = X(u, (u + 1) % n, (u + 2 * n - t - 1) % n);
			x.flags = xfer_flags(DIR_NONE, XFER_REDUCE);
			sched_add(s, &x);
		}
	}
}

static void test_reduce_scatter(void **state)
{
	struct schedule s;
	struct verify_report r;
	(void)state;

	ring_reduce_scatter(&s, 5);
	assert_int_equal(sched_verify(&s, NULL, &r), 0);

	/* Send one partial sum twice: an input is counted twice. */
	struct xfer dup = s.xfers[s.step_start[s.nsteps - 1]];
	sched_add(&s, &dup);
	assert_int_equal(sched_verify(&s, NULL, &r), -1);
	assert_non_null(strstr(r.error, "each exactly once"));
	sched_free(&s);

	/* Copy instead of reduce: inputs are lost. */
	ring_reduce_scatter(&s, 4);
	s.xfers[1].flags = xfer_flags(DIR_NONE, XFER_COPY);
	assert_int_equal(sched_verify(&s, NULL, &r), -1);
	sched_free(&s);
}

/* 0 -> 1 -> 2 of shard 2 on three nodes, with shards 0 and 1 gathered
 * by their owners in a second step: correct only if 1 forwards 0's input
 * after receiving it, in a later step. `chain` puts both hops in step 1,
 * where 1 forwards only its own input (the state from before the step). */
static void chain_reduce_scatter(struct schedule *s, bool chain)
{
	static const uint32_t hops[][3] = {{0, 1, 2}, {1, 2, 2}, {1, 0, 0},
					   {2, 0, 0}, {0, 1, 1}, {2, 1, 1}};

	sched_init(s, SCHED_REDUCE_SCATTER, "chain", 3);
	for (unsigned i = 0; i < 6; i++) {
		struct xfer x = X(hops[i][0], hops[i][1], hops[i][2]);

		if (i == 0 || (i == 1 && !chain) || i == 2)
			sched_step(s);
		x.flags = xfer_flags(DIR_NONE, XFER_REDUCE);
		sched_add(s, &x);
	}
}

static void test_reduce_same_step_is_not_visible(void **state)
{
	struct schedule s;
	struct verify_report r;
	(void)state;

	chain_reduce_scatter(&s, false);
	assert_int_equal(s.nsteps, 3);
	assert_int_equal(sched_verify(&s, NULL, &r), 0);
	sched_free(&s);

	chain_reduce_scatter(&s, true);
	assert_int_equal(s.nsteps, 2);
	assert_int_equal(sched_verify(&s, NULL, &r), -1);
	assert_non_null(strstr(r.error, "node 2 does not end with shard 2"));
	sched_free(&s);
}

static void test_allreduce(void **state)
{
	struct schedule s, ag;
	struct verify_report r;
	(void)state;

	/* Reduce-scatter then all-gather of the reduced shards. */
	ring_reduce_scatter(&s, 4);
	s.collective = SCHED_ALLREDUCE;
	ring_allgather(&ag, 4);
	sched_append(&s, &ag);
	assert_int_equal(s.nsteps, 6);
	assert_int_equal(sched_verify(&s, NULL, &r), 0);

	/* Without the all-gather only the owners are complete. */
	s.nsteps = 3;
	assert_int_equal(sched_verify(&s, NULL, &r), -1);
	sched_free(&ag);
	sched_free(&s);
}

/* A schedule of more steps than rw's 15-bit stamps count (32,767 and up:
 * the fold table keeps it): the ring allreduce after 33,000 empty steps
 * verifies, and fails without its last step. */
static void test_many_steps(void **state)
{
	struct schedule s, rs, ag;
	struct verify_report r;
	size_t *none = xcalloc(33000, sizeof(size_t));
	(void)state;

	sched_init(&s, SCHED_ALLREDUCE, "ring", 4);
	assert_null(sched_append_steps(&s, 33000, none));
	ring_reduce_scatter(&rs, 4);
	ring_allgather(&ag, 4);
	sched_append(&s, &rs);
	sched_append(&s, &ag);
	assert_int_equal(s.nsteps, 33006);
	assert_int_equal(sched_verify(&s, NULL, &r), 0);
	s.nsteps--;
	s.nxfers = s.step_start[s.nsteps];
	assert_int_equal(sched_verify(&s, NULL, &r), -1);
	assert_non_null(strstr(r.error, "does not end with shard"));
	free(none);
	sched_free(&ag);
	sched_free(&rs);
	sched_free(&s);
}

/* sched_verify split in its two parts (from one transfer up), on two
 * threads and step by step on one, and the step loop alone: the same
 * verdict, report and loads. */
static void assert_same_verdict(const struct schedule *s, const struct graph *g)
{
	double *l0 = calloc(s->nsteps + 1, sizeof(double));
	struct verify_opts loop = {.graph = g, .step_link_load = l0, .step_loop = true};
	struct verify_report a;
	int ra = sched_verify(s, &loop, &a);

	for (unsigned threads = 1; threads <= 2; threads++) {
		double *l = calloc(s->nsteps + 1, sizeof(double));
		struct verify_opts split = {
		    .graph = g, .step_link_load = l, .threads = threads, .par_min_xfers = 1};
		struct verify_report b;
		int rb = sched_verify(s, &split, &b);

		assert_int_equal(ra, rb);
		assert_int_equal(a.ok, b.ok);
		assert_string_equal(a.error, b.error);
		assert_int_equal(a.bad_step, b.bad_step);
		assert_int_equal(a.bad_xfer, b.bad_xfer);
		assert_int_equal(a.nsteps, b.nsteps);
		assert_int_equal(a.ntransfers, b.ntransfers);
		assert_memory_equal(&a.sum_max_link_load, &b.sum_max_link_load, sizeof(double));
		assert_memory_equal(&a.max_link_load, &b.max_link_load, sizeof(double));
		assert_memory_equal(&a.max_total_link_load, &b.max_total_link_load, sizeof(double));
		assert_memory_equal(&a.duplicate_blocks, &b.duplicate_blocks, sizeof(double));
		assert_memory_equal(l0, l, s->nsteps * sizeof(double));
		free(l);
	}
	free(l0);
}

/* Reductions and all-gathers of 64 K transfers or more against a graph
 * (here by diagonal, a ring, and in parts, a bidirectional ring) are
 * checked on two threads,
 * which only prove a schedule right (the step loop then reports): right,
 * or wrong in its data, its links, its op or its range, the report is the
 * one thread's. */
static void test_threads(void **state)
{
	static const enum baseline_algo algos[] = {BASELINE_RING, BASELINE_BIDIR_RING};
	struct graph *g;
	struct topo_tree *tree;
	struct ofc_error err = {0};
	(void)state;

	assert_int_equal(topo_build_tree("hypercube:9", &g, &tree, &err), 0);
	for (size_t a = 0; a < 2; a++)
		for (int c = SCHED_ALLGATHER; c <= SCHED_ALLREDUCE; c++) {
			struct schedule s;
			struct verify_report r;
			struct verify_opts two = {.graph = g, .threads = 2};

			assert_int_equal(baseline_schedule(g, tree, algos[a], c, &s, NULL, &err),
					 0);
			assert_true(s.nxfers >= 65536);
			assert_int_equal(sched_verify(&s, &two, &r), 0);
			assert_true(r.split);
			assert_true(r.max_link_load > 0);
			two.threads = 1; /* the two parts step by step */
			assert_int_equal(sched_verify(&s, &two, &r), 0);
			assert_true(r.split);
			two.threads = 2;
			assert_same_verdict(&s, g);

			size_t mid = s.step_start[s.nsteps / 2] + 5;
			struct xfer keep = s.xfers[mid];

			s.xfers[mid].block = (keep.block + 1) % s.nodes; /* data */
			assert_int_equal(sched_verify(&s, &two, &r), -1);
			assert_same_verdict(&s, g);
			s.xfers[mid] = keep;
			s.xfers[mid].lane = (uint16_t)((keep.lane + 1) % graph_outdeg(g, keep.src));
			assert_int_equal(sched_verify(&s, &two, &r), -1); /* link */
			assert_non_null(strstr(r.error, "does not lead to"));
			assert_same_verdict(&s, g);
			s.xfers[mid] = keep;
			/* right without its port: the checks thread's tight loop
			 * (read_checks) stops there, read_phase goes on */
			s.xfers[mid].lane = SCHED_NO_LANE;
			assert_int_equal(sched_verify(&s, &two, &r), 0);
			assert_same_verdict(&s, g);
			s.xfers[mid] = keep;
			s.xfers[mid].flags ^= XFER_REDUCE << 2; /* op */
			assert_same_verdict(&s, g);
			s.xfers[mid] = keep;
			s.xfers[s.nxfers - 1].dst = s.xfers[s.nxfers - 1].src; /* range */
			assert_int_equal(sched_verify(&s, &two, &r), -1);
			assert_non_null(strstr(r.error, "a node sends to itself"));
			assert_same_verdict(&s, g);
			sched_free(&s);
		}
	topo_tree_free(tree);
	graph_free(g);
}

/* s's transfers but skip (SIZE_MAX: none), in its steps, and extra (when
 * not NULL) at the end of step at. */
static void copy_with(struct schedule *d, const struct schedule *s, size_t skip,
		      const struct xfer *extra, uint32_t at)
{
	sched_init(d, s->collective, s->algorithm, s->nodes);
	for (uint32_t t = 0; t < s->nsteps; t++) {
		sched_step(d);
		for (size_t xi = s->step_start[t]; xi < s->step_start[t + 1]; xi++)
			if (xi != skip)
				sched_add(d, &s->xfers[xi]);
		if (extra && t == at)
			sched_add(d, extra);
	}
}

/* An allreduce's final scan on 2, 3 and 8 threads, each a part of the
 * entries (the step loop reports what any finds not full): the last
 * step's first or last transfer dropped is the same report on them as on
 * one; ring (by diagonal: the last diagonal, in the last part),
 * bidir-ring (in halves) and BFB (by node: a receiver in each part). */
static void test_final_halves(void **state)
{
	static const int algos[] = {BASELINE_RING, BASELINE_BIDIR_RING, -1}; /* -1: BFB */
	static const unsigned threads[] = {2, 3, 8};
	struct graph *g;
	struct topo_tree *tree;
	struct ofc_error err = {0};
	(void)state;

	assert_int_equal(topo_build_tree("hypercube:7", &g, &tree, &err), 0);
	for (size_t a = 0; a < ARRAY_SIZE(algos) * ARRAY_SIZE(threads); a++) {
		struct schedule s, d;
		struct verify_report r;
		struct verify_opts two = {
		    .graph = g, .threads = threads[a % ARRAY_SIZE(threads)], .par_min_xfers = 1};
		struct bfb_opts bo = {0};
		struct bfb_stats st;
		int algo = algos[a / ARRAY_SIZE(threads)];

		if (algo >= 0)
			assert_int_equal(baseline_schedule(g, tree, (enum baseline_algo)algo,
							   SCHED_ALLREDUCE, &s, NULL, &err),
					 0);
		else
			assert_int_equal(bfb_schedule(g, SCHED_ALLREDUCE, &bo, &s, &st, &err), 0);
		assert_int_equal(sched_verify(&s, &two, &r), 0);
		assert_true(r.split); /* not the step loop after a no */
		assert_same_verdict(&s, g);
		size_t last = s.step_start[s.nsteps - 1];
		size_t picks[] = {last, s.nxfers - 1};
		for (size_t k = 0; k < ARRAY_SIZE(picks); k++) {
			copy_with(&d, &s, picks[k], NULL, 0);
			assert_int_equal(sched_verify(&d, &two, &r), -1);
			assert_non_null(strstr(r.error, "does not end with shard"));
			assert_same_verdict(&d, g);
			sched_free(&d);
		}
		sched_free(&s);
	}
	topo_tree_free(tree);
	graph_free(g);
}

/* Without a graph (Swing's and recursive doubling's routed peers) the
 * data part checks alone, the links part's checks among its own; the
 * latency-optimal variants swap whole vectors every step, which one pass a
 * step cannot do (two passes then, par_reduce_snap). Right, each is proved
 * so split; wrong in its data, its range, its op or as a run or a span
 * without a graph, the report is the step loop's. */
static void test_split_without_graph(void **state)
{
	static const enum torus_algo algos[] = {TORUS_SWING, TORUS_RECURSIVE_DOUBLING};
	struct graph *g;
	struct topo_tree *tree;
	struct ofc_error err = {0};
	(void)state;

	assert_int_equal(topo_build_tree("torus:8x8", &g, &tree, &err), 0);
	for (size_t a = 0; a < ARRAY_SIZE(algos); a++)
		for (int var = SWING_BANDWIDTH; var <= SWING_LATENCY; var++) {
			struct schedule s;
			struct verify_report r, ref;
			struct verify_opts split = {.par_min_xfers = 1}, loop = {.step_loop = true};
			struct torus_figures f;

			assert_int_equal(torus_allreduce(tree, algos[a], (enum swing_variant)var,
							 false, &s, &f, &err),
					 0);
			for (unsigned th = 1; th <= 2; th++) {
				split.threads = th;
				assert_int_equal(sched_verify(&s, &split, &r), 0);
				assert_true(r.split);
			}
			size_t mid = s.step_start[s.nsteps / 2] + 3;
			struct xfer keep = s.xfers[mid];

			for (int c = 0; c < 5; c++) {
				s.xfers[mid] = keep;
				if (c == 0)
					s.xfers[mid].block = (keep.block + 1) % s.nodes;
				else if (c == 1)
					s.xfers[mid].dst = keep.src;
				else if (c == 2)
					s.xfers[mid].flags ^= 4; /* the op */
				else if (c == 3)
					s.xfers[mid].run = 1;
				else
					s.xfers[mid].flags |= 1u << 3; /* a span of 2 */
				if (c != 2)
					assert_int_equal(sched_verify(&s, &loop, &ref), -1);
				assert_same_verdict(&s, NULL); /* split, one and two threads */
			}
			sched_free(&s);
		}
	topo_tree_free(tree);
	graph_free(g);
}

/* s with every transfer cut into `parts` equal pieces, spans kept. */
static void cut_parts(struct schedule *d, const struct schedule *s, uint32_t parts)
{
	sched_init(d, s->collective, s->algorithm, s->nodes);
	for (uint32_t t = 0; t < s->nsteps; t++) {
		sched_step(d);
		for (size_t xi = s->step_start[t]; xi < s->step_start[t + 1]; xi++)
			for (uint32_t k = 0; k < parts; k++) {
				struct xfer x = s->xfers[xi];

				x.offset = k * (SCHED_ONE / parts);
				x.length = SCHED_ONE / parts;
				sched_add(d, &x);
			}
	}
}

/* The split check of a reduction takes the parts' size from the first
 * transfers (64 K, or the first step) and holds every later one to it: a
 * ring reduce-scatter on hypercube:9 in halves for its first 150 steps
 * (76,650 transfers) and quarters after is right, proved in two parts
 * after a scan of them all; a quarter dropped there (one that a check in
 * halves would not see) is the step loop's report. First transfers that
 * cut no shard lead to rw without that scan: whole shards for 150 steps,
 * halves after, the same (the halves in rw's lists). The same all-gathers
 * the same way (a ring's parts guessed from its first transfers too, in
 * cgrid, a finer one starting the check again from a scan of all). */
static void test_parts_finer_later(void **state)
{
	static const enum sched_collective cs[] = {SCHED_REDUCE_SCATTER, SCHED_ALLGATHER};
	static const uint32_t before[] = {2, 1}, after[] = {4, 2};
	struct graph *g;
	struct topo_tree *tree;
	struct ofc_error err = {0};
	(void)state;

	assert_int_equal(topo_build_tree("hypercube:9", &g, &tree, &err), 0);
	for (size_t c = 0; c < ARRAY_SIZE(cs); c++)
		for (size_t p = 0; p < ARRAY_SIZE(before); p++) {
			struct schedule s, d, e;
			struct verify_report r;
			struct verify_opts two = {.graph = g, .threads = 2};

			assert_int_equal(
			    baseline_schedule(g, tree, BASELINE_RING, cs[c], &s, NULL, &err), 0);
			sched_init(&d, s.collective, s.algorithm, s.nodes);
			for (uint32_t t = 0; t < s.nsteps; t++) {
				uint32_t parts = t < 150 ? before[p] : after[p];

				sched_step(&d);
				for (size_t xi = s.step_start[t]; xi < s.step_start[t + 1]; xi++)
					for (uint32_t k = 0; k < parts; k++) {
						struct xfer x = s.xfers[xi];

						x.offset = k * (SCHED_ONE / parts);
						x.length = SCHED_ONE / parts;
						sched_add(&d, &x);
					}
			}
			assert_true(d.step_start[150] > (1u << 16));
			assert_int_equal(sched_verify(&d, &two, &r), 0);
			assert_true(r.split);
			assert_same_verdict(&d, g);
			/* the last transfer's first part */
			copy_with(&e, &d, d.nxfers - after[p], NULL, 0);
			assert_int_equal(sched_verify(&e, &two, &r), -1);
			assert_same_verdict(&e, g);
			sched_free(&e);
			sched_free(&d);
			sched_free(&s);
		}
	topo_tree_free(tree);
	graph_free(g);
}

/* A reduce-scatter on complete:3 whose one step both writes node 1's
 * partial of shard 2 (0 -> 1) and sends it on (1 -> 2): the send carries
 * what node 1 held before the step, so node 0's input must reach node 2
 * directly (0 -> 2). Without that transfer the schedule is wrong, though
 * reading in transfer order, the write first, would take node 0's input
 * on through node 1 and find it right. The data part does a step in one
 * pass unless the first step reads what it writes (step_reads_written),
 * and says no to a read of an entry written earlier in the step (then the
 * check is done again, two passes a step): right or wrong, whichever
 * comes first, that step first or after one without it, as the step loop
 * finds; in whole shards (rw), halves (grid) and 16ths (the fold table). */
static void test_reduce_write_then_read(void **state)
{
	static const uint32_t parts[] = {1, 2, 16};
	struct graph *g;
	struct ofc_error err = {0};
	(void)state;

	assert_int_equal(topo_build("complete:3", &g, &err), 0);
	for (size_t p = 0; p < ARRAY_SIZE(parts); p++)
		for (int v = 0; v < 8; v++) {
			bool wrong = v & 1, first = v & 2, later = v & 4;
			struct schedule s, d;
			struct verify_report r;
			struct verify_opts two = {.graph = g, .threads = 2, .par_min_xfers = 1};
			struct xfer a = R(0, 1, 2), b = R(1, 2, 2), early = R(2, 1, 1),
				    rest[] = {R(0, 2, 2), R(1, 0, 0), R(2, 0, 0), R(0, 1, 1)};

			sched_init(&s, SCHED_REDUCE_SCATTER, "write-then-read", 3);
			sched_step(&s);
			if (later) { /* a step without it first */
				sched_add(&s, &early);
				sched_step(&s);
			}
			sched_add(&s, first ? &b : &a); /* first: the read first */
			sched_add(&s, first ? &a : &b);
			for (size_t i = wrong ? 1 : 0; i < ARRAY_SIZE(rest); i++)
				sched_add(&s, &rest[i]);
			if (!later)
				sched_add(&s, &early);
			cut_parts(&d, &s, parts[p]);
			assert_int_equal(sched_verify(&d, &two, &r), wrong ? -1 : 0);
			/* right: proved in two parts either way */
			if (!wrong)
				assert_true(r.split);
			assert_same_verdict(&d, g);
			sched_free(&d);
			sched_free(&s);
		}
	graph_free(g);
}

/* On one thread both parts of a step go through one loop (par_seq's
 * seq_fused) up to the step's first transfer that is not plain. A ring's
 * and a bidirectional ring's allreduce (rw by diagonal, the grid in
 * halves) on hypercube:6, with a transfer of step 2 moved to the end of
 * step 1, after the one that writes what it sends on: it carries what its
 * sender held before step 1, without the input that writer adds, so the
 * schedule is wrong, though one pass reading the write would find it
 * right (the one pass says no, the check takes two passes a step). And a
 * whole block's transfer one unit past the block's end: "part outside
 * the block", though delivered whole it would be right. Both as the step
 * loop reports, on one thread and on two. */
static void test_fused_one_thread(void **state)
{
	static const enum baseline_algo algos[] = {BASELINE_RING, BASELINE_BIDIR_RING};
	struct graph *g;
	struct topo_tree *tree;
	struct ofc_error err = {0};
	(void)state;

	assert_int_equal(topo_build_tree("hypercube:6", &g, &tree, &err), 0);
	for (size_t a = 0; a < ARRAY_SIZE(algos); a++) {
		struct schedule s, d;
		struct verify_report r;
		struct verify_opts one = {.graph = g, .threads = 1, .par_min_xfers = 1};
		size_t moved = SIZE_MAX;

		assert_int_equal(
		    baseline_schedule(g, tree, algos[a], SCHED_ALLREDUCE, &s, NULL, &err), 0);
		assert_int_equal(sched_verify(&s, &one, &r), 0);
		assert_true(r.split);
		for (size_t y = s.step_start[2]; y < s.step_start[3] && moved == SIZE_MAX; y++)
			for (size_t x = s.step_start[1]; x < s.step_start[2]; x++)
				if (s.xfers[x].dst == s.xfers[y].src &&
				    s.xfers[x].block == s.xfers[y].block &&
				    s.xfers[x].offset == s.xfers[y].offset) {
					moved = y;
					break;
				}
		assert_true(moved != SIZE_MAX);
		copy_with(&d, &s, moved, &s.xfers[moved], 1);
		assert_int_equal(sched_verify(&d, &one, &r), -1);
		assert_non_null(strstr(r.error, "does not end with shard"));
		assert_same_verdict(&d, g);
		sched_free(&d);
		if (a == 0) {
			size_t mid = s.step_start[s.nsteps / 2] + 3;

			assert_int_equal(s.xfers[mid].length, SCHED_ONE);
			s.xfers[mid].length = SCHED_ONE + 1;
			assert_int_equal(sched_verify(&s, &one, &r), -1);
			assert_non_null(strstr(r.error, "part outside the block"));
			assert_same_verdict(&s, g);
		}
		sched_free(&s);
	}
	topo_tree_free(tree);
	graph_free(g);
}

/* An allreduce's final scan (first_not_full, in halves where the check is
 * split) holds every entry to both the count and the weights' sum: on
 * complete:3 (a direct reduce-scatter, then each shard copied to all),
 * node 0's shard reduced from node 2's input twice and node 1's not has
 * all its counts right and its sum wrong; whole shards (rw) and halves
 * (the grid), by diagonal (the first step's first sends go round the
 * ring) and by node, on one thread and two, as the step loop. */
static void test_final_sum(void **state)
{
	static const uint32_t parts[] = {1, 2};
	(void)state;

	for (size_t p = 0; p < ARRAY_SIZE(parts); p++)
		for (int v = 0; v < 4; v++) {
			bool wrong = v & 1, ring = v & 2;
			struct schedule s, d;
			struct verify_report r;
			struct verify_opts one = {.threads = 1, .par_min_xfers = 1};
			struct xfer first[] = {R(0, 1, 1), R(1, 2, 2), R(2, 0, 0),
					       R(0, 2, 2), R(1, 0, 0), R(2, 1, 1)};

			if (!ring) { /* 0 -> 2 first: no ring of first sends */
				struct xfer x = first[0];

				first[0] = first[3];
				first[3] = x;
			}
			if (wrong)
				first[4] = R(2, 0, 0);
			sched_init(&s, SCHED_ALLREDUCE, "final-sum", 3);
			sched_step(&s);
			for (size_t i = 0; i < ARRAY_SIZE(first); i++)
				sched_add(&s, &first[i]);
			sched_step(&s);
			for (uint32_t b = 0; b < 3; b++)
				for (uint32_t u = 0; u < 3; u++)
					if (u != b) {
						struct xfer x = X(b, u, b);

						sched_add(&s, &x);
					}
			cut_parts(&d, &s, parts[p]);
			assert_int_equal(sched_verify(&d, &one, &r), wrong ? -1 : 0);
			if (wrong)
				assert_non_null(strstr(r.error, "does not end with shard 0"));
			else
				assert_true(r.split);
			assert_same_verdict(&d, NULL);
			sched_free(&d);
			sched_free(&s);
		}
}

/* s, with spans, and s block by block: the same verdict in the same step,
 * the same loads and duplicates, on one thread and on two. */
static void assert_same_unspanned(const struct schedule *s, const struct graph *g)
{
	struct schedule u;
	struct verify_opts one = {.graph = g, .threads = 1};
	struct verify_report a, b;

	sched_unspan(s, &u);
	assert_int_equal(sched_block_xfers(s), u.nxfers);
	assert_false(sched_has_spans(&u));
	int ra = sched_verify(s, &one, &a), rb = sched_verify(&u, &one, &b);
	assert_int_equal(ra, rb);
	assert_int_equal(a.bad_step, b.bad_step);
	if (ra == 0) {
		assert_memory_equal(&a.sum_max_link_load, &b.sum_max_link_load, sizeof(double));
		assert_memory_equal(&a.max_link_load, &b.max_link_load, sizeof(double));
		assert_memory_equal(&a.max_total_link_load, &b.max_total_link_load, sizeof(double));
		assert_memory_equal(&a.duplicate_blocks, &b.duplicate_blocks, sizeof(double));
	}
	assert_same_verdict(s, g);
	assert_same_verdict(&u, g);
	sched_free(&u);
}

/* The first transfer of a span of at least `least` blocks in step t or
 * later. */
static size_t span_at(const struct schedule *s, uint32_t t, uint32_t least)
{
	for (size_t xi = s->step_start[t]; xi < s->nxfers; xi++)
		if (xfer_blocks(&s->xfers[xi]) >= least)
			return xi;
	fail_msg("no span of %u blocks from step %u", least, t);
	return 0;
}

/* Spans (an all-gather's transfers of 2^k blocks: recursive doubling's,
 * relayed on tori) check as their blocks one by one: right (in whole
 * blocks, the bit rows' words; in halves and sixteenths, block by block
 * in parts or through the bitmap and pieces), and wrong: another subcube
 * than the sender holds, a span twice as wide, one past the last block,
 * one dropped; a span sent again is a duplicate of each of its blocks.
 * Elsewhere a span is refused. */
static void test_spans(void **state)
{
	static const char *const specs[] = {"torus:8x8", "hypercube:5", "torus:4x8"};
	static const uint32_t cuts[] = {1, 2, 16};
	(void)state;

	for (size_t i = 0; i < ARRAY_SIZE(specs); i++) {
		struct graph *g;
		struct topo_tree *tree;
		struct ofc_error err = {0};
		struct schedule s0, s, d;
		struct verify_report r;
		struct verify_opts one = {.threads = 1};

		assert_int_equal(topo_build_tree(specs[i], &g, &tree, &err), 0);
		one.graph = g;
		assert_int_equal(baseline_schedule(g, tree, BASELINE_RECURSIVE, SCHED_ALLGATHER,
						   &s0, NULL, &err),
				 0);
		assert_true(sched_has_spans(&s0));
		for (size_t c = 0; c < ARRAY_SIZE(cuts); c++) {
			cut_parts(&s, &s0, cuts[c]);
			assert_int_equal(sched_verify(&s, &one, &r), 0);
			/* relays on a path hold part of what they pass on */
			double dup = r.duplicate_blocks;
			assert_true(strcmp(specs[i], "hypercube:5") || dup == 0);
			assert_same_unspanned(&s, g);

			/* the first span: its sender holds its pair alone */
			size_t xi = span_at(&s, 0, 2);
			struct xfer keep = s.xfers[xi], x = keep;
			uint32_t nb = xfer_blocks(&keep);

			/* another subcube than the sender's */
			s.xfers[xi].block = (keep.block + nb) % s.nodes;
			assert_int_equal(sched_verify(&s, &one, &r), -1);
			assert_non_null(strstr(r.error, "does not hold that data"));
			assert_same_unspanned(&s, g);
			/* half held: [u + 1, u + 3) from node u, which holds
			 * u + 1 alone (the first span's sender, node 0) */
			assert_int_equal(keep.src, 0);
			s.xfers[xi].block = 1;
			assert_int_equal(sched_verify(&s, &one, &r), -1);
			assert_non_null(strstr(r.error, "does not hold that data"));
			assert_same_unspanned(&s, g);
			/* twice as wide */
			s.xfers[xi] = keep;
			s.xfers[xi].block = keep.block & ~(2 * nb - 1);
			s.xfers[xi].flags = xfer_span_flags(keep.flags, __builtin_ctz(2 * nb));
			assert_int_equal(sched_verify(&s, &one, &r), -1);
			assert_same_unspanned(&s, g);
			/* past the last block */
			s.xfers[xi] = keep;
			s.xfers[xi].block = s.nodes - nb / 2;
			assert_int_equal(sched_verify(&s, &one, &r), -1);
			assert_non_null(strstr(r.error, "no such block"));
			s.xfers[xi] = keep;
			/* again in the last step: a duplicate of each block */
			x = s.xfers[span_at(&s, s.nsteps - 1, 1)];
			copy_with(&d, &s, SIZE_MAX, &x, s.nsteps - 1);
			assert_int_equal(sched_verify(&d, &one, &r), 0);
			assert_true(r.duplicate_blocks == dup + xfer_blocks(&x) / (double)cuts[c]);
			assert_same_unspanned(&d, g);
			sched_free(&d);
			/* dropped: its receiver lacks its blocks' part (on a
			 * hypercube; relays on a torus may pass it on too) */
			copy_with(&d, &s, span_at(&s, s.nsteps - 1, 2), NULL, 0);
			if (dup == 0) {
				assert_int_equal(sched_verify(&d, &one, &r), -1);
				assert_non_null(strstr(r.error, "lacks"));
			}
			assert_same_unspanned(&d, g);
			sched_free(&d);
			sched_free(&s);
		}
		/* only an all-gather's */
		s0.collective = SCHED_ALLREDUCE;
		assert_int_equal(sched_verify(&s0, &one, &r), -1);
		assert_non_null(strstr(r.error, "only an all-gather's"));
		s0.collective = SCHED_ALLTOALL;
		assert_int_equal(sched_verify(&s0, &one, &r), -1);
		sched_free(&s0);
		topo_tree_free(tree);
		graph_free(g);
	}
}

/* BFB's all-gathers on generalized Kautz graphs, checked by parts (one
 * bit a part, by node: whole blocks on genkautz:256,4, halves on
 * genkautz:200,3): right, a piece twice (a duplicate of its length), a
 * transfer dropped (the pair it alone delivers incomplete), one relayed
 * in the step its source receives it (not visible yet), one sent by
 * another in-neighbour of its receiver that does not hold the piece;
 * each the same report on two threads and on one. */
static void test_bfb_allgather_parts(void **state)
{
	static const char *const specs[] = {"genkautz:256,4", "genkautz:200,3"};
	(void)state;

	for (size_t i = 0; i < 2; i++) {
		struct graph *g;
		struct ofc_error err = {0};
		struct bfb_opts bo = {0};
		struct bfb_stats st;
		struct schedule s, d;
		struct verify_report r;
		struct verify_opts two = {.threads = 2, .par_min_xfers = 1};
		char want[160];

		assert_int_equal(topo_build(specs[i], &g, &err), 0);
		two.graph = g;
		assert_int_equal(bfb_schedule(g, SCHED_ALLGATHER, &bo, &s, &st, &err), 0);
		assert_int_equal(sched_verify(&s, &two, &r), 0);
		assert_true(r.duplicate_blocks == 0);
		assert_same_verdict(&s, g);

		/* A piece of the last step twice: right, a duplicate of its
		 * length (a half on genkautz:200,3, where some are halves). */
		size_t last = s.step_start[s.nsteps - 1], xi = last;
		while (i == 1 && s.xfers[xi].length == SCHED_ONE)
			xi++;
		assert_true(xi < s.nxfers);
		copy_with(&d, &s, SIZE_MAX, &s.xfers[xi], s.nsteps - 1);
		assert_int_equal(sched_verify(&d, &two, &r), 0);
		assert_true(r.duplicate_blocks == (i == 1 ? 0.5 : 1.0));
		assert_same_verdict(&d, g);
		sched_free(&d);

		/* Dropped: a whole block a node receives in one transfer. */
		xi = last;
		while (s.xfers[xi].length != SCHED_ONE)
			xi++;
		copy_with(&d, &s, xi, NULL, 0);
		assert_int_equal(sched_verify(&d, &two, &r), -1);
		snprintf(want, sizeof(want), "node %u lacks (part of) block %u", s.xfers[xi].dst,
			 s.xfers[xi].block);
		assert_non_null(strstr(r.error, want));
		assert_int_equal(r.bad_step, s.nsteps);
		assert_same_verdict(&d, g);
		sched_free(&d);

		/* Relayed in the step its source receives it: step 2's
		 * transfer y of what y's source gets in step 1, moved there. */
		size_t yi, xj = SIZE_MAX;
		for (yi = s.step_start[1]; yi < s.step_start[2] && xj == SIZE_MAX; yi++)
			for (size_t k = s.step_start[0]; k < s.step_start[1]; k++)
				if (s.xfers[k].dst == s.xfers[yi].src &&
				    s.xfers[k].block == s.xfers[yi].block) {
					xj = k;
					break;
				}
		assert_true(xj != SIZE_MAX);
		yi--;
		copy_with(&d, &s, yi, &s.xfers[yi], 0);
		assert_int_equal(sched_verify(&d, &two, &r), -1);
		assert_non_null(strstr(r.error, "does not hold that data at the start"));
		assert_int_equal(r.bad_step, 0);
		assert_int_equal(r.bad_xfer, d.step_start[1] - 1);
		assert_same_verdict(&d, g);
		sched_free(&d);

		/* From another in-neighbour of the receiver, over its link,
		 * in the first step: it holds only its own block. */
		struct xfer x = s.xfers[0];
		for (uint32_t w = 0; w < g->n; w++)
			for (uint32_t p = g->off[w]; p < g->off[w + 1]; p++)
				if (g->adj[p] == x.dst && w != x.src && w != x.dst &&
				    w != x.block && x.src == s.xfers[0].src) {
					x.src = (uint16_t)w;
					x.lane = (uint16_t)(p - g->off[w]);
				}
		assert_true(x.src != s.xfers[0].src && x.block != x.src);
		s.xfers[0] = x;
		assert_int_equal(sched_verify(&s, &two, &r), -1);
		snprintf(want, sizeof(want), "node %u does not hold that data", x.src);
		assert_non_null(strstr(r.error, want));
		assert_int_equal(r.bad_step, 0);
		assert_int_equal(r.bad_xfer, 0);
		assert_same_verdict(&s, g);
		sched_free(&s);
		graph_free(g);
	}
}

/* Failed hosts: a schedule among the survivors, renumbered to
 * the whole topology's nodes (sched_renumber), verifies with the failed
 * node absent and not without; a transfer to or from the absent node, or
 * of its block, is refused; reductions count the survivors' inputs only;
 * all-to-all blocks are renumbered pair by pair. */
/* A piece of root 3's block on a network: whole, or [lo, hi) in 1/4s. */
static void piece(struct schedule *s, uint32_t src, uint32_t dst, uint32_t lo, uint32_t hi)
{
	struct xfer x = X(src, dst, 3);

	x.offset = lo * (SCHED_ONE / 4);
	x.length = (hi - lo) * (SCHED_ONE / 4);
	sched_add(s, &x);
}

/* A broadcast on a network keeps what each node holds of the root's block
 * by node (sched_verify's piece table for a broadcast): pieces joined,
 * apart in a list and whole again, their overlaps counted as duplicates,
 * a gap and a piece sent before it is held found. */
static void test_broadcast_network(void **state)
{
	enum { N = 5 };
	uint8_t kind[N];
	uint32_t tail[N * (N - 1)], head[N * (N - 1)], na = 0;
	double bw[N * (N - 1)];
	struct schedule s;
	struct verify_report r;
	(void)state;

	for (uint32_t u = 0; u < N; u++) {
		kind[u] = VERIFY_TERMINAL | VERIFY_STORE | VERIFY_COPY;
		for (uint32_t w = 0; w < N; w++)
			if (w != u) {
				tail[na] = u;
				head[na] = w;
				bw[na++] = INFINITY;
			}
	}
	struct verify_network vn = {.nodes = N,
				    .kind = kind,
				    .narcs = na,
				    .tail = tail,
				    .head = head,
				    .bw = bw,
				    .step_time = 1};
	struct verify_opts vo = {.network = &vn};

	for (int c = 0; c < 3; c++) {
		sched_init(&s, SCHED_BROADCAST, "pieces", N);
		s.root = 3;
		sched_step(&s);
		piece(&s, 3, 0, 0, 2);
		piece(&s, 3, 1, 0, 4);
		piece(&s, 3, 2, 0, 1);
		if (c == 2) /* node 0 sends what it does not yet hold */
			piece(&s, 0, 4, 2, 3);
		sched_step(&s);
		piece(&s, 3, 0, 2, 4);
		piece(&s, 1, 4, 0, 4);
		piece(&s, 3, 2, 2, 3); /* apart from [0, 1/4): a list */
		sched_step(&s);
		piece(&s, 0, 2, 1, 2);
		if (c != 1) /* else a gap at [3/4, 1) */
			piece(&s, 0, 2, 3, 4);
		piece(&s, 1, 0, 0, 1); /* a duplicate quarter */
		piece(&s, 4, 2, 1, 3); /* node 2 holds it all by now */
		int rc = sched_verify(&s, &vo, &r);

		if (c == 0) {
			assert_int_equal(rc, 0);
			assert_true(r.duplicate_blocks == 0.25 + 0.5);
			assert_int_equal(r.ntransfers, 10);
		} else {
			assert_int_equal(rc, -1);
			assert_non_null(strstr(r.error, c == 1 ? "node 2 lacks" : "does not hold"));
		}
		sched_free(&s);
	}
}

static void test_absent(void **state)
{
	static const uint32_t map5[] = {0, 1, 2, 4, 5}; /* node 3 failed */
	static const uint32_t map3[] = {0, 2, 3};	/* node 1 failed */
	uint8_t absent6[6] = {0, 0, 0, 1, 0, 0}, absent4[4] = {0, 1, 0, 0};
	struct verify_opts with = {.absent = absent6}, with4 = {.absent = absent4};
	struct schedule s;
	struct verify_report r;
	(void)state;

	ring_allgather(&s, 5);
	sched_renumber(&s, 6, map5);
	assert_int_equal(s.nodes, 6);
	assert_int_equal(s.xfers[0].src, 0);
	assert_int_equal(s.xfers[2].dst, 4); /* 2 -> 3 became 2 -> 4 */
	assert_int_equal(s.xfers[3].block, 4);
	assert_int_equal(sched_verify(&s, &with, &r), 0);
	/* On the ring less node 3 (2 -> 4 skips it): the links check too. */
	const uint32_t tails[] = {0, 1, 2, 4, 5}, heads[] = {1, 2, 4, 5, 0};
	struct graph *g = graph_from_arcs(6, 5, tails, heads, "ring less 3");
	with.graph = g;
	assert_int_equal(sched_verify(&s, &with, &r), 0);
	with.graph = NULL;
	graph_free(g);
	/* Everyone must take part without it. */
	assert_int_equal(sched_verify(&s, NULL, &r), -1);
	assert_non_null(strstr(r.error, "incomplete"));
	/* Sending to the failed node, or its block. */
	struct xfer to = X(2, 3, 2), blk = X(0, 1, 3);
	sched_step(&s);
	sched_add(&s, &to);
	assert_int_equal(sched_verify(&s, &with, &r), -1);
	assert_non_null(strstr(r.error, "node 3 takes no part"));
	s.xfers[s.nxfers - 1] = blk;
	assert_int_equal(sched_verify(&s, &with, &r), -1);
	assert_non_null(strstr(r.error, "no such block"));
	sched_free(&s);

	/* Reduce-scatter on 3 survivors of 4: each shard sums 3 inputs. */
	ring_reduce_scatter(&s, 3);
	sched_renumber(&s, 4, map3);
	assert_int_equal(sched_verify(&s, &with4, &r), 0);
	assert_int_equal(sched_verify(&s, NULL, &r), -1);
	sched_free(&s);

	/* All-to-all on 3 survivors of 4, every pair direct: block o * 3 + t
	 * becomes map[o] * 4 + map[t]. */
	sched_init(&s, SCHED_ALLTOALL, "direct", 3);
	sched_step(&s);
	for (uint32_t o = 0; o < 3; o++)
		for (uint32_t t = 0; t < 3; t++)
			if (o != t) {
				struct xfer x = X(o, t, o * 3 + t);
				sched_add(&s, &x);
			}
	sched_renumber(&s, 4, map3);
	assert_int_equal(s.xfers[0].block, 0 * 4 + 2);
	assert_int_equal(s.xfers[5].block, 3 * 4 + 2);
	assert_int_equal(sched_verify(&s, &with4, &r), 0);
	assert_int_equal(sched_verify(&s, NULL, &r), -1);
	sched_free(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_ring_allgather_ok),
	    cmocka_unit_test(test_append_empty_steps),
	    cmocka_unit_test(test_causality),
	    cmocka_unit_test(test_clock),
	    cmocka_unit_test(test_same_step_is_not_visible),
	    cmocka_unit_test(test_incomplete),
	    cmocka_unit_test(test_partial_blocks),
	    cmocka_unit_test(test_links),
	    cmocka_unit_test(test_runs),
	    cmocka_unit_test(test_reduce_scatter),
	    cmocka_unit_test(test_reduce_same_step_is_not_visible),
	    cmocka_unit_test(test_allreduce),
	    cmocka_unit_test(test_many_steps),
	    cmocka_unit_test(test_absent),
	    cmocka_unit_test(test_threads),
	    cmocka_unit_test(test_bfb_allgather_parts),
	    cmocka_unit_test(test_spans),
	    cmocka_unit_test(test_final_halves),
	    cmocka_unit_test(test_reduce_write_then_read),
	    cmocka_unit_test(test_fused_one_thread),
	    cmocka_unit_test(test_final_sum),
	    cmocka_unit_test(test_split_without_graph),
	    cmocka_unit_test(test_parts_finer_later),
	    cmocka_unit_test(test_broadcast_network),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
