/* The job planner's switching arithmetic (issue 41), by hand: an OCS
 * reconfigures once however many circuits change, a patch panel a move at a
 * time; changes on host ports the phase before leaves idle are made while
 * it runs (make-before-break), those on its ports after it. And the
 * verifier's check of groups run at once: each group alone, the loads
 * summed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <math.h>

#include "controller/config/config.h"
#include "controller/jobplan/jobplan.h"

/* 8 hosts of 2 ports on one switch, port j of host u on switch port
 * 1 + 2u + j. */
static struct fabric *fabric8(const char *sw)
{
	char text[512];
	struct fabric *f;
	struct ofc_error err = {0};

	snprintf(text, sizeof(text),
		 "name: f8\nhosts: {count: 8, prefix: h, ports: 2}\nswitches:\n  - %s\n"
		 "wiring: {pattern: sequential, switches: [s0]}\ntopology: circulant:8:1\n",
		 sw);
	if (config_parse("f8.yaml", text, strlen(text), &f, &err) < 0 ||
	    fabric_validate(f, &err) < 0)
		fail_msg("%s", err.msg);
	return f;
}

/* Port 0: u -> u + 1; port 1: u -> u + step (circuits on equal ports). */
static void topo(struct jobplan_topo *t, uint32_t step)
{
	t->circuits = calloc(16, sizeof(struct circuit));
	t->ncircuits = 16;
	for (uint32_t j = 0; j < 2; j++)
		for (uint32_t u = 0; u < 8; u++) {
			uint32_t v = (u + (j ? step : 1)) % 8;

			t->circuits[j * 8 + u] = (struct circuit){.sw = 0,
								  .in_port = 1 + 2 * u + j,
								  .out_port = 1 + 2 * v + j,
								  .src_host = u,
								  .src_port = j,
								  .dst_host = v,
								  .dst_port = j};
		}
}

static void test_switching(void **state)
{
	struct jobplan_topo t[2] = {0};
	uint8_t used[16] = {0};
	struct jobplan_cost before = {.ports_used = used};
	double full;
	uint32_t moves;
	(void)state;

	topo(&t[0], 2);
	topo(&t[1], 3); /* port 1's 8 circuits differ, port 0's stay */
	for (int panel = 0; panel < 2; panel++) {
		struct fabric *f =
		    fabric8(panel ? "{name: s0, type: patch-panel, ports: 16, "
				    "move_time: 30s}"
				  : "{name: s0, type: ocs, ports: 16, reconfig_time: "
				    "10ms}");
		struct jobplan_result r = {.fabric = f, .ports = 2, .topo = t, .ntopo = 2};
		double one = panel ? 8 * 30e6 : 10e3; /* 8 moves at 30 s; one reconfiguration */

		/* the same topology: nothing */
		assert_true(jobplan_switch_us(&r, 0, 0, &before, 0, -1, &full, &moves) == 0);
		/* phase before on port 0 alone: port 1's changes hide behind it */
		for (uint32_t u = 0; u < 8; u++)
			used[u * 2] = 1, used[u * 2 + 1] = 0;
		double e = jobplan_switch_us(&r, 0, 1, &before, 2 * one, -1, &full, &moves);
		assert_true(e == 0 && full == one && moves == 8);
		e = jobplan_switch_us(&r, 0, 1, &before, one / 4, -1, &full, &moves);
		assert_true(fabs(e - 0.75 * one) < 1e-6);
		/* one host's port 1 busy: its two circuits (out and in) wait for
		 * the phase; the OCS then switches all at once after it, the
		 * panel makes 6 moves during it and 2 after */
		used[3 * 2 + 1] = 1;
		e = jobplan_switch_us(&r, 0, 1, &before, 2 * one, -1, &full, &moves);
		if (panel)
			assert_true(fabs(e - 2 * 30e6) < 1e-6 && full == one);
		else
			assert_true(e == one && full == one);
		/* every port busy: all of it exposed */
		memset(used, 1, sizeof(used));
		assert_true(jobplan_switch_us(&r, 0, 1, &before, 1e12, -1, &full, &moves) == one);
		/* a delay per change of 1 ms instead */
		double d = jobplan_switch_us(&r, 0, 1, &before, 0, 1e-3, &full, &moves);
		assert_true(fabs(d - (panel ? 8e3 : 1e3)) < 1e-6);
		fabric_free(f);
	}
	free(t[0].circuits);
	free(t[1].circuits);
}

/* Two groups at once on complete:4, {0, 1} and {2, 3}, each exchanging
 * its blocks in one step: each checked with the other group absent, the
 * loads summed (one block a link); a group reaching outside is refused. */
static void test_verify_groups(void **state)
{
	struct graph *g = NULL;
	struct ofc_error err = {0};
	struct schedule s[2];
	uint8_t absent[2][4] = {{0, 0, 1, 1}, {1, 1, 0, 0}};
	struct verify_opts o[2] = {{.absent = absent[0]}, {.absent = absent[1]}};
	const struct schedule *sp[2] = {&s[0], &s[1]};
	const struct verify_opts *op[2] = {&o[0], &o[1]};
	struct verify_report rep;
	(void)state;

	assert_int_equal(topo_build("complete:4", &g, &err), 0);
	for (int i = 0; i < 2; i++) {
		uint32_t a = 2 * i, b = a + 1;

		o[i].graph = g;
		sched_init(&s[i], SCHED_ALLGATHER, "x", 4);
		sched_step(&s[i]);
		struct xfer x1 = {
		    .src = a, .dst = b, .block = a, .length = SCHED_ONE, .lane = SCHED_NO_LANE};
		struct xfer x2 = {
		    .src = b, .dst = a, .block = b, .length = SCHED_ONE, .lane = SCHED_NO_LANE};
		sched_add(&s[i], &x1);
		sched_add(&s[i], &x2);
	}
	assert_int_equal(sched_verify_groups(sp, op, 2, &rep), 0);
	assert_int_equal(rep.ntransfers, 4);
	assert_true(fabs(rep.max_link_load - 1) < 1e-12 && fabs(rep.sum_max_link_load - 1) < 1e-12);
	/* group 1 sends to node 0, outside it */
	s[1].xfers[0].dst = 0;
	assert_int_equal(sched_verify_groups(sp, op, 2, &rep), -1);
	assert_non_null(strstr(rep.error, "group 1: "));
	sched_free(&s[0]);
	sched_free(&s[1]);
	graph_free(g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_switching),
	    cmocka_unit_test(test_verify_groups),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
