/* The price of an MSCCL program on a server fabric from its own sends
 * (controller/export/msccl_price.c): on three GPUs round one switch, a
 * program small enough to price by hand, its chain of dependent sends,
 * its busiest arc or capacity set, the chunk rounding its bytes carry,
 * and the line that sets the price beside the planned time with the gap;
 * and a far server's copies sent across the network once, forwarded. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "controller/export/export.h"

#define NEAR(a, b) assert_true((a) - (b) < 1e-9 && (b) - (a) < 1e-9)

/* g0, g1, g2 (GPUs, vertices and ranks 0-2) and sw (vertex 3): arcs
 * 0 g0->sw 10 GB/s, 1 sw->g1 10, 2 g1->sw 10, 3 sw->g2 10, 4 g2->sw 20,
 * 5 sw->g0 5. */
static void net(struct fluid_net *n)
{
	struct ofc_error err = {0};
	static const uint32_t arcs[][2] = {{0, 3}, {3, 1}, {1, 3}, {3, 2}, {2, 3}, {3, 0}};
	static const double bw[] = {10, 10, 10, 10, 20, 5};

	fluid_net_init(n);
	assert_int_equal(fluid_add_vertex(n, "g0", FLUID_GPU, &err), 0);
	assert_int_equal(fluid_add_vertex(n, "g1", FLUID_GPU, &err), 1);
	assert_int_equal(fluid_add_vertex(n, "g2", FLUID_GPU, &err), 2);
	assert_int_equal(fluid_add_vertex(n, "sw", FLUID_SWITCH, &err), 3);
	for (int a = 0; a < 6; a++)
		assert_int_equal(fluid_add_arc(n, arcs[a][0], arcs[a][1], bw[a], 1, &err), a);
}

static void add(struct schedule *s, uint32_t src, uint32_t dst, uint32_t block, uint32_t length)
{
	struct xfer x = {.src = (uint16_t)src,
			 .dst = (uint16_t)dst,
			 .block = block,
			 .length = length,
			 .lane = SCHED_NO_LANE,
			 .flags = xfer_flags(DIR_NONE, XFER_COPY)};

	sched_add(s, &x);
}

/* g0's block to g1 and on to g2 through the switch, and a third of g2's
 * to g0: three GPU sends, g1's waiting for g0's. */
static void program(const struct fluid_net *n, struct schedule *g, struct fabric_gpu_info *gi)
{
	struct schedule s;
	struct ofc_error err = {0};
	uint32_t third = SCHED_ONE / 3;

	sched_init(&s, SCHED_ALLGATHER, "hand", 4);
	sched_step(&s);
	add(&s, 0, 3, 0, SCHED_ONE);
	add(&s, 2, 3, 2, third);
	sched_step(&s);
	add(&s, 3, 1, 0, SCHED_ONE);
	add(&s, 3, 0, 2, third);
	sched_step(&s);
	add(&s, 1, 3, 0, SCHED_ONE);
	sched_step(&s);
	add(&s, 3, 2, 0, SCHED_ONE);
	assert_int_equal(fabric_gpu_schedule(n, &s, 0, true, g, gi, &err), 0);
	assert_int_equal(gi->gpus, 3);
	assert_int_equal(g->nxfers, 3);
	sched_free(&s);
}

/* By hand, alpha 1 ms, 2 GB a block, Q = 64: g0->g1 0.001 + 2/10 =
 * 0.201 s; g1->g2 waits for it, 0.402 s; g2->g0 a third rounded to 21
 * chunks, 21/64 x 2 GB over its slowest arc (sw->g0, 5 GB/s) = 0.13125 +
 * 0.001. The busiest arc g0->sw carries 2 GB, 0.2 s; the price is the
 * chain's 0.402 s. At Q = 3 the third is exact: 2/3 GB, 0.13333 s. */
static void test_price_by_hand(void **state)
{
	struct fluid_net n;
	struct schedule g;
	struct fabric_gpu_info gi;
	struct msccl_price p;
	struct ofc_error err = {0};

	(void)state;
	net(&n);
	program(&n, &g, &gi);
	assert_int_equal(msccl_program_price(&n, &g, &gi, 64, 1e-3, 2, &p, &err), 0);
	NEAR(p.critical_s, 0.402);
	assert_int_equal(p.critical_sends, 2);
	NEAR(p.busiest_s, 0.2);
	NEAR(p.busiest_gb, 2);
	assert_int_equal(p.busiest, 0);
	assert_false(p.busiest_set);
	NEAR(p.price_s, 0.402);
	/* without g1's wait the chain would be one send: 0.201 */
	assert_true(p.price_s > 0.3);

	/* the rounded third: alone on sw->g0, priced at 21 chunks of 64 */
	struct schedule one;
	struct msccl_price q;

	sched_init(&one, SCHED_ALLGATHER, "hand", 3);
	sched_step(&one);
	for (size_t i = 0; i < g.nxfers; i++) /* g2's send */
		if (g.xfers[i].src == 2)
			sched_add(&one, &g.xfers[i]);
	assert_int_equal(one.xfers[0].src, 2);
	struct fabric_gpu_info gj = {.route_off = (uint32_t[]){0, 2},
				     .route_arc = (uint32_t[]){4, 5}};

	assert_int_equal(msccl_program_price(&n, &one, &gj, 64, 1e-3, 2, &q, &err), 0);
	NEAR(q.critical_s, 0.001 + 21.0 / 64 * 2 / 5);
	NEAR(q.busiest_gb, 21.0 / 64 * 2);
	assert_int_equal(q.busiest, 5);
	assert_int_equal(msccl_program_price(&n, &one, &gj, 3, 1e-3, 2, &q, &err), 0);
	NEAR(q.critical_s, 0.001 + 2.0 / 3 / 5);
	sched_free(&one);
	sched_free(&g);
	fabric_gpu_info_free(&gi);
	fluid_net_free(&n);
}

/* A capacity set over g0->sw and g1->sw at 8 GB/s carries both their 2 GB:
 * 0.5 s, over the chain's 0.402, so the price is the set's. */
static void test_price_busiest_set(void **state)
{
	struct fluid_net n;
	struct schedule g;
	struct fabric_gpu_info gi;
	struct msccl_price p;
	struct ofc_error err = {0};
	const uint32_t up[] = {0, 2};

	(void)state;
	net(&n);
	assert_int_equal(fluid_add_set(&n, "uplinks", 8, up, 2, &err), 0);
	program(&n, &g, &gi);
	assert_int_equal(msccl_program_price(&n, &g, &gi, 64, 1e-3, 2, &p, &err), 0);
	assert_true(p.busiest_set);
	NEAR(p.busiest_s, 0.5);
	NEAR(p.busiest_gb, 4);
	NEAR(p.price_s, 0.5);
	sched_free(&g);
	fabric_gpu_info_free(&gi);
	fluid_net_free(&n);
}

/* The line: the price beside the planned time and the optimum, each gap. */
static void test_price_line(void **state)
{
	struct fluid_net n;
	struct msccl_price p = {.critical_s = 0.402,
				.busiest_s = 0.2,
				.price_s = 0.402,
				.critical_sends = 2,
				.busiest_gb = 2,
				.busiest = 0};
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	(void)state;
	net(&n);
	f = open_memstream(&buf, &len);
	msccl_price_write(f, &n, &p, 0.3, 0.4);
	fclose(f);
	assert_non_null(strstr(buf, "the program's own price: 0.402 s (its critical path 2 "
				    "sends, 0.402 s; its busiest arc g0 -> sw, 2 GB, 0.2 s)"));
	assert_non_null(strstr(buf, "planned 0.3 s: +34.00%; optimum 0.4 s: +0.50%\n"));
	free(buf);
	/* one too large to price: said, no figures */
	p.price_s = NAN;
	f = open_memstream(&buf, &len);
	msccl_price_write(f, &n, &p, 0.3, 0.4);
	fclose(f);
	assert_string_equal(buf, "ofc schedule: the program's own price: not priced (past 67108864 "
				 "chunk states)\n");
	free(buf);
	fluid_net_free(&n);
}

/* Without routes (or past the chunk states it may hold) it says so. */
static void test_price_refused(void **state)
{
	struct fluid_net n;
	struct schedule g;
	struct fabric_gpu_info gi = {0};
	struct msccl_price p;
	struct ofc_error err = {0};

	(void)state;
	net(&n);
	sched_init(&g, SCHED_ALLGATHER, "hand", 3);
	assert_int_equal(msccl_program_price(&n, &g, &gi, 64, 0, 1, &p, &err), -1);
	assert_int_equal(err.code, OFC_E_INPUT);
	assert_non_null(strstr(err.msg, "cannot be priced"));
	sched_free(&g);
	fluid_net_free(&n);
}

/* Send once, forward: b/g2's block crosses the rail r once into server
 * a, whose switch copies it to a/g0 and a/g1. Forwarded, the program
 * sends it g2 -> one GPU of a, then that GPU -> the other inside a, a step
 * later (what arrived in a step is held by the next), the rail in one
 * route; not forwarded, g2 sends it to each across the rail. Vertices:
 * a/g0 a/g1 b/g2 (ranks 0-2), a/sw, b/sw, r; arcs 0 g2->b/sw, 1 b/sw->r,
 * 2 r->a/sw, 3 a/sw->g0, 4 a/sw->g1, 5 g0->a/sw, 6 g1->a/sw. */
static void test_forward_inside_server(void **state)
{
	struct fluid_net n;
	struct ofc_error err = {0};
	static const uint32_t arcs[][2] = {{2, 4}, {4, 5}, {5, 3}, {3, 0}, {3, 1}, {0, 3}, {1, 3}};
	static const char *const names[] = {"a/g0", "a/g1", "b/g2", "a/sw", "b/sw", "r"};

	(void)state;
	fluid_net_init(&n);
	for (int v = 0; v < 6; v++)
		assert_int_equal(
		    fluid_add_vertex(&n, names[v], v < 3 ? FLUID_GPU : FLUID_SWITCH, &err), v);
	for (int a = 0; a < 7; a++)
		assert_int_equal(fluid_add_arc(&n, arcs[a][0], arcs[a][1], 10, 1, &err), a);
	for (int fwd = 0; fwd < 2; fwd++) {
		struct schedule s, g;
		struct fabric_gpu_info gi;
		uint32_t rail = 0;

		sched_init(&s, SCHED_ALLGATHER, "hand", 6);
		sched_step(&s);
		add(&s, 2, 4, 2, SCHED_ONE);
		sched_step(&s);
		add(&s, 4, 5, 2, SCHED_ONE);
		sched_step(&s);
		add(&s, 5, 3, 2, SCHED_ONE);
		sched_step(&s);
		add(&s, 3, 0, 2, SCHED_ONE);
		add(&s, 3, 1, 2, SCHED_ONE);
		assert_int_equal(fabric_gpu_schedule(&n, &s, 0, fwd, &g, &gi, &err), 0);
		assert_int_equal(g.nxfers, 2);
		assert_int_equal(gi.forwarded, fwd);
		for (uint32_t j = 0; j < gi.route_off[2]; j++)
			rail += gi.route_arc[j] == 1;
		assert_int_equal(rail, fwd ? 1 : 2); /* the rail crossed once, or per GPU */
		assert_int_equal(g.xfers[0].src, 2);
		if (fwd) { /* the GPU that got it sends it on, a step later */
			assert_int_equal(g.nsteps, 2);
			assert_int_equal(g.xfers[1].src, g.xfers[0].dst);
			assert_int_equal(gi.route_off[2] - gi.route_off[1], 2);
		} else {
			assert_int_equal(g.nsteps, 4); /* the schedule's own */
			assert_int_equal(g.xfers[1].src, 2);
		}
		sched_free(&s);
		sched_free(&g);
		fabric_gpu_info_free(&gi);
	}
	fluid_net_free(&n);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_price_by_hand),
	    cmocka_unit_test(test_price_busiest_set),
	    cmocka_unit_test(test_price_line),
	    cmocka_unit_test(test_price_refused),
	    cmocka_unit_test(test_forward_inside_server),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
