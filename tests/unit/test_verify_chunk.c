/* A reduction checked in chunks of its shards (sched/verify_chunk.c) gives
 * the whole check's verdict, words and loads: degraded BFB, rings (by
 * diagonal whole, by node in chunks), a bidirectional ring in parts and a
 * failed host, right and corrupted (a transfer missing, a shard counted
 * twice, a transfer a step early, a transfer over a failed link, another
 * shard's data), on one thread and with chunks side by side; past the
 * old limit of 4,096 nodes with the verifier's own budget; and a budget
 * that not even one shard fits is refused with the estimate. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "baselines/baselines.h"
#include "bfb/bfb.h"
#include "sched/sched.h"
#include "sched/verify_internal.h" /* verify_chunks_needed, white-box */

/* A budget of `shards` shards a chunk of s's, for chunks `at_once` at
 * once (a thread each: these schedules have no runs): their tables and their transfers (as many as
 * the busiest shard's each). */
static uint64_t budget_of(const struct schedule *s, uint32_t shards, unsigned at_once)
{
	size_t *count = calloc(s->nodes, sizeof(size_t)), most = 0;

	for (size_t xi = 0; xi < s->nxfers; xi++)
		if (s->xfers[xi].block < s->nodes && ++count[s->xfers[xi].block] > most)
			most = count[s->xfers[xi].block];
	free(count);
	return at_once *
	       ((uint64_t)s->nodes * shards * VERIFY_ENTRY_BYTES +
		most * shards * sizeof(struct xfer) + ((uint64_t)s->nsteps + 1) * sizeof(uint32_t));
}

/* s checked whole (the step loop, and the default way) and in chunks of
 * 1, 3 and 7 shards on 1 and 4 threads: the same return, report and
 * step loads. Returns the whole check's. */
static int assert_chunked_same(const struct schedule *s, const struct verify_opts *base)
{
	double *l0 = calloc(s->nsteps + 1, sizeof(double));
	struct verify_opts whole = *base;
	struct verify_report a;

	whole.step_link_load = l0;
	whole.step_loop = true;
	assert_false(verify_chunks_needed(s, &whole));
	int ra = sched_verify(s, &whole, &a);

	for (uint32_t shards = 1; shards <= 7; shards += shards == 1 ? 2 : 4)
		for (unsigned threads = 1; threads <= 4; threads += 3) {
			double *l = calloc(s->nsteps + 1, sizeof(double));
			struct verify_opts c = *base;
			struct verify_report b;

			c.step_link_load = l;
			c.threads = threads;
			c.reduce_bytes = budget_of(s, shards, threads);
			if (!verify_chunks_needed(s, &c)) { /* one chunk: all of s */
				assert_true(shards > 1 || threads > 1);
				free(l);
				continue;
			}
			int rb = sched_verify(s, &c, &b);

			if (ra != rb) /* which words each said */
				print_message("whole: %s | chunked: %s\n", a.error, b.error);
			assert_int_equal(ra, rb);
			assert_int_equal(a.ok, b.ok);
			assert_string_equal(a.error, b.error);
			assert_int_equal(a.bad_step, b.bad_step);
			assert_int_equal(a.bad_xfer, b.bad_xfer);
			assert_int_equal(a.nsteps, b.nsteps);
			assert_int_equal(a.ntransfers, b.ntransfers);
			assert_memory_equal(&a.sum_max_link_load, &b.sum_max_link_load,
					    sizeof(double));
			assert_memory_equal(&a.max_link_load, &b.max_link_load, sizeof(double));
			assert_memory_equal(&a.max_total_link_load, &b.max_total_link_load,
					    sizeof(double));
			assert_memory_equal(l0, l, s->nsteps * sizeof(double));
			free(l);
		}
	free(l0);
	return ra;
}

/* s with transfer skip left out (SIZE_MAX: none) and transfer dup (SIZE_MAX:
 * none) added again at the end of its step; early: transfer `early` moved
 * to the step before its own. */
static void copy_with(struct schedule *d, const struct schedule *s, size_t skip, size_t dup,
		      size_t early)
{
	sched_init(d, s->collective, s->algorithm, s->nodes);
	d->root = s->root;
	for (uint32_t t = 0; t < s->nsteps; t++) {
		sched_step(d);
		for (size_t xi = s->step_start[t]; xi < s->step_start[t + 1]; xi++)
			if (xi != skip && xi != early)
				sched_add(d, &s->xfers[xi]);
		if (dup >= s->step_start[t] && dup < s->step_start[t + 1])
			sched_add(d, &s->xfers[dup]);
		if (t + 1 < s->nsteps && early >= s->step_start[t + 1] &&
		    early < s->step_start[t + 2])
			sched_add(d, &s->xfers[early]);
	}
}

/* The first reducing transfer of step t, from its middle on. */
static size_t reducing_in(const struct schedule *s, uint32_t t)
{
	size_t lo = s->step_start[t], hi = s->step_start[t + 1];

	for (size_t xi = lo + (hi - lo) / 2; xi < hi; xi++)
		if (xfer_op(&s->xfers[xi]) == XFER_REDUCE)
			return xi;
	for (size_t xi = lo; xi < hi; xi++)
		if (xfer_op(&s->xfers[xi]) == XFER_REDUCE)
			return xi;
	fail_msg("no reducing transfer in step %u", t);
	return SIZE_MAX;
}

/* Each corruption of s refused, chunked as whole: a transfer missing, one
 * twice, one a step early, one of another shard, of no shard, past its
 * shard's end. */
static void assert_corruptions(const struct schedule *s, const struct verify_opts *o)
{
	struct schedule d;
	size_t mid = reducing_in(s, 1);

	assert_int_equal(assert_chunked_same(s, o), 0);
	copy_with(&d, s, mid, SIZE_MAX, SIZE_MAX); /* a transfer missing */
	assert_int_equal(assert_chunked_same(&d, o), -1);
	sched_free(&d);
	copy_with(&d, s, SIZE_MAX, mid, SIZE_MAX); /* a shard's sum counted twice */
	assert_int_equal(assert_chunked_same(&d, o), -1);
	sched_free(&d);
	copy_with(&d, s, SIZE_MAX, SIZE_MAX, mid); /* a step early */
	assert_int_equal(assert_chunked_same(&d, o), -1);
	sched_free(&d);
	copy_with(&d, s, SIZE_MAX, SIZE_MAX, SIZE_MAX);
	d.xfers[mid].block = (d.xfers[mid].block + 1) % d.nodes; /* another shard's */
	assert_int_equal(assert_chunked_same(&d, o), -1);
	d.xfers[mid] = s->xfers[mid];
	d.xfers[mid].block = d.nodes; /* no such shard: the links pass's words */
	assert_int_equal(assert_chunked_same(&d, o), -1);
	d.xfers[mid] = s->xfers[mid];
	d.xfers[mid].offset = SCHED_ONE - d.xfers[mid].length / 2 - 1; /* past its end */
	assert_int_equal(assert_chunked_same(&d, o), -1);
	sched_free(&d);
}

/* Degraded BFB (the explicit schedule failures fall back to) on torus:8x8
 * less three links, allreduce and reduce-scatter; and a transfer over one
 * of the failed links refused as the whole check refuses it. */
static void test_degraded_bfb(void **state)
{
	static const enum sched_collective cs[] = {SCHED_ALLREDUCE, SCHED_REDUCE_SCATTER};
	struct graph *g, *gf;
	struct ofc_error err = {0};
	(void)state;

	assert_int_equal(topo_build("torus:8x8", &g, &err), 0);
	assert_int_equal(topo_fail_links(g, "0-1,9-17,42-43", &gf, &err), 0);
	for (size_t i = 0; i < 2; i++) {
		struct schedule s;
		struct bfb_opts bo = {.threads = 1};
		struct bfb_stats st;
		struct verify_opts o = {.graph = gf};

		assert_int_equal(bfb_schedule(gf, cs[i], &bo, &s, &st, &err), 0);
		assert_corruptions(&s, &o);
		/* node 0's transfer to 1 over the failed link, its port
		 * kept: the link check's words, at that transfer */
		size_t xi = s.step_start[1];

		while (s.xfers[xi].src != 0)
			xi++;
		s.xfers[xi].dst = 1;
		assert_int_equal(assert_chunked_same(&s, &o), -1);
		struct verify_report r;
		o.reduce_bytes = budget_of(&s, 2, 1);
		o.threads = 1;
		assert_int_equal(sched_verify(&s, &o, &r), -1);
		assert_int_equal(r.bad_xfer, xi);
		assert_non_null(strstr(r.error, "does not lead to node 1"));
		sched_free(&s);
	}
	graph_free(gf);
	graph_free(g);
}

/* Rings, by diagonal when whole and by node in chunks, whole shards and
 * halves (the bidirectional ring: the grid's parts), checked on two
 * threads from a transfer up. */
static void test_rings(void **state)
{
	static const enum baseline_algo algos[] = {BASELINE_RING, BASELINE_BIDIR_RING};
	struct graph *g;
	struct topo_tree *tree;
	struct ofc_error err = {0};
	(void)state;

	assert_int_equal(topo_build_tree("torus:4x6", &g, &tree, &err), 0);
	for (size_t a = 0; a < 2; a++)
		for (int c = SCHED_REDUCE_SCATTER; c <= SCHED_ALLREDUCE; c++) {
			struct schedule s;
			struct verify_opts o = {.graph = g, .par_min_xfers = 1};

			assert_int_equal(baseline_schedule(g, tree, algos[a], c, &s, NULL, &err),
					 0);
			assert_corruptions(&s, &o);
			sched_free(&s);
		}
	topo_tree_free(tree);
	graph_free(g);
}

/* A reduce-scatter round a one-way ring of n, without a graph. */
static void ring_reduce_scatter(struct schedule *s, uint32_t n)
{
	sched_init(s, SCHED_REDUCE_SCATTER, "ring", n);
	for (uint32_t t = 0; t + 1 < n; t++) {
		sched_step(s);
		for (uint32_t u = 0; u < n; u++) {
			struct xfer x = {.src = (uint16_t)u,
					 .dst = (uint16_t)((u + 1) % n),
					 .block = (u + n - 1 - t) % n,
					 .length = SCHED_ONE,
					 .lane = SCHED_NO_LANE,
					 .flags = xfer_flags(DIR_NONE, XFER_REDUCE)};
			sched_add(s, &x);
		}
	}
}

/* A reduce-scatter round a ring of 5 on 6 nodes, node 3 failed: each
 * shard sums the 5 survivors' inputs; a transfer to the failed node is
 * refused in chunks as whole. */
static void test_failed_host(void **state)
{
	static const uint32_t map5[] = {0, 1, 2, 4, 5};
	uint8_t absent[6] = {0, 0, 0, 1, 0, 0};
	struct verify_opts o = {.absent = absent};
	struct schedule s;
	(void)state;

	ring_reduce_scatter(&s, 5);
	sched_renumber(&s, 6, map5);
	assert_corruptions(&s, &o);
	s.xfers[7].dst = 3;
	assert_int_equal(assert_chunked_same(&s, &o), -1);
	sched_free(&s);
}

/* More chunks than a byte names (each then copies its transfers from a
 * pass over all of them): a ring of 300, a shard a chunk. */
static void test_many_chunks(void **state)
{
	struct verify_opts o = {0};
	struct schedule s, d;
	(void)state;

	ring_reduce_scatter(&s, 300);
	assert_corruptions(&s, &o);
	copy_with(&d, &s, s.step_start[150] + 7, SIZE_MAX, SIZE_MAX);
	assert_int_equal(assert_chunked_same(&d, &o), -1);
	sched_free(&d);
	sched_free(&s);
}

/* A reduce to node n - 1 down a chain: its one shard (node 0's input
 * on), a chunk of its own whatever the budget. */
static void chain_reduce(struct schedule *s, uint32_t n)
{
	sched_init(s, SCHED_REDUCE, "chain", n);
	s->root = n - 1;
	for (uint32_t u = 0; u + 1 < n; u++) {
		struct xfer x = {.src = (uint16_t)u,
				 .dst = (uint16_t)(u + 1),
				 .block = n - 1,
				 .length = SCHED_ONE,
				 .lane = SCHED_NO_LANE,
				 .flags = xfer_flags(DIR_NONE, XFER_REDUCE)};

		sched_step(s);
		sched_add(s, &x);
	}
}

/* Past 4,096 nodes with the verifier's own budget, where the whole check
 * had said "too large to verify a reduction (limit 4096)": a reduce on
 * 6,000 nodes and a reduce-scatter on 4,097 (every input sent straight to
 * its shard's node, one step), right and with one input missing. */
static void test_past_old_limit(void **state)
{
	struct schedule s;
	struct verify_report r;
	struct verify_opts none = {0};
	(void)state;

	chain_reduce(&s, 6000);
	assert_true(verify_chunks_needed(&s, &none));
	assert_int_equal(sched_verify(&s, NULL, &r), 0);
	s.xfers[2999].flags = xfer_flags(DIR_NONE, XFER_COPY);
	assert_int_equal(sched_verify(&s, NULL, &r), -1);
	assert_string_equal(r.error, "the root 5999 does not end with its block reduced over "
				     "all 6000 inputs, each exactly once");
	sched_free(&s);

	uint32_t n = 4097;

	sched_init(&s, SCHED_REDUCE_SCATTER, "direct", n);
	sched_step(&s);
	sched_reserve(&s, (size_t)n * (n - 1));
	for (uint32_t u = 0; u < n; u++)
		for (uint32_t b = 0; b < n; b++)
			if (u != b && !(u == 7 && b == 4000)) {
				struct xfer x = {.src = (uint16_t)u,
						 .dst = (uint16_t)b,
						 .block = b,
						 .length = SCHED_ONE,
						 .lane = SCHED_NO_LANE,
						 .flags = xfer_flags(DIR_NONE, XFER_REDUCE)};
				sched_add(&s, &x);
			}
	assert_true(verify_chunks_needed(&s, &none));
	assert_int_equal(sched_verify(&s, NULL, &r), -1);
	assert_string_equal(r.error, "node 4000 does not end with shard 4000 reduced over all "
				     "4097 inputs, each exactly once");
	struct xfer x = {.src = 7,
			 .dst = 4000,
			 .block = 4000,
			 .length = SCHED_ONE,
			 .lane = SCHED_NO_LANE,
			 .flags = xfer_flags(DIR_NONE, XFER_REDUCE)};
	sched_add(&s, &x);
	assert_int_equal(sched_verify(&s, NULL, &r), 0);
	sched_free(&s);
}

/* A budget not even one shard's table fits: refused, with the estimate. */
static void test_budget_refused(void **state)
{
	struct schedule s;
	struct verify_report r;
	(void)state;

	chain_reduce(&s, 64);
	struct verify_opts o = {.reduce_bytes = 1000, .threads = 1};

	assert_true(verify_chunks_needed(&s, &o));
	assert_int_equal(sched_verify(&s, &o, &r), -1);
	assert_non_null(strstr(r.error, "64 nodes: checking shard 63 alone (63 transfers) needs "
					"about"));
	assert_non_null(strstr(r.error, "over the verifier's 1000 B"));
	o.reduce_bytes = budget_of(&s, 1, 1);
	o.threads = 1;
	assert_int_equal(sched_verify(&s, &o, &r), 0);
	sched_free(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_degraded_bfb),   cmocka_unit_test(test_rings),
	    cmocka_unit_test(test_failed_host),	   cmocka_unit_test(test_many_chunks),
	    cmocka_unit_test(test_past_old_limit), cmocka_unit_test(test_budget_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
