/* The testbed's cost model (controller/testbed/model.c) on circuits made
 * by hand, no namespaces: ports without a circuit carry nothing (4-port
 * hosts wired as a ring are priced at one circuit, not a quarter of four);
 * transfers on one circuit in a step share it, on different circuits of a
 * host they do not; a transfer without a port is priced on every circuit
 * of its route; tbf's bucket saves a circuit's first bytes after it
 * idled; empty steps cost nothing; a transfer on no circuit is an
 * error; the judge says when measured holds the prediction, or which
 * term is off and by how much; and a run's result as the message both
 * the local run and ofcd's answer print (answer.c) says only what it has. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "controller/testbed/testbed.h"
#include "proto/control.pb-c.h"
#include "sched/sched.h"

#define HOSTS	4
#define PORTS	4
#define RATE	8e6	     /* bits/s: a MiB in 1.048576 s */
#define SIZE	(4ull << 20) /* a MiB a block on 4 hosts */
#define BLOCK_S 1.048576

/* 4 hosts of 4 ports, wired as a bidirectional ring on ports 0 (to h + 1)
 * and 1 (to h - 1); ports 2 and 3 hold no circuit. */
static void ring_net(struct testbed_net *t, uint32_t *peer)
{
	memset(t, 0, sizeof(*t));
	for (uint32_t i = 0; i < HOSTS * PORTS; i++)
		peer[i] = UINT32_MAX;
	for (uint32_t h = 0; h < HOSTS; h++) {
		peer[h * PORTS + 0] = (h + 1) % HOSTS;
		peer[h * PORTS + 1] = (h + HOSTS - 1) % HOSTS;
	}
	t->nhosts = HOSTS;
	t->ports = PORTS;
	t->peer = peer;
	t->ncircuits = 2 * HOSTS;
}

static void add(struct schedule *s, uint32_t src, uint32_t dst, uint32_t block, uint32_t lane)
{
	struct xfer x = {.src = (uint16_t)src,
			 .dst = (uint16_t)dst,
			 .block = block,
			 .offset = 0,
			 .length = SCHED_ONE,
			 .lane = (uint16_t)lane};

	sched_add(s, &x);
}

static void test_unused_ports(void **state)
{
	(void)state;
	uint32_t peer[HOSTS * PORTS];
	struct testbed_net t;
	struct testbed_model m = {.rate = RATE, .alpha = 0.001};
	struct testbed_prediction p;
	struct ofc_error err = {0};
	struct schedule s;

	ring_net(&t, peer);
	sched_init(&s, SCHED_ALLGATHER, "ring", HOSTS);
	sched_step(&s);
	for (uint32_t h = 0; h < HOSTS; h++)
		add(&s, h, (h + 1) % HOSTS, h, 0);
	assert_int_equal(testbed_predict(&s, &t, &m, SIZE, NULL, &p, &err), 0);
	/* A whole block on one circuit at the circuit's rate: the host's
	 * three other ports (one idle, two without a circuit) add nothing. */
	assert_true(fabs(p.bytes_s - BLOCK_S) < 1e-9);
	assert_true(fabs(p.alpha_s - 0.001) < 1e-12);
	assert_true(fabs(p.seconds - (BLOCK_S + 0.001)) < 1e-9);
	assert_int_equal(p.steps, 1);
	assert_int_equal(p.circuits_used, HOSTS);
	assert_true(fabs(p.busiest_bytes - 1048576) < 1e-6);
	sched_free(&s);
}

static void test_sharing(void **state)
{
	(void)state;
	uint32_t peer[HOSTS * PORTS];
	struct testbed_net t;
	struct testbed_model m = {.rate = RATE, .alpha = 0};
	struct testbed_prediction p;
	struct ofc_error err = {0};
	struct schedule s;
	double per[3];

	ring_net(&t, peer);
	sched_init(&s, SCHED_ALLGATHER, "x", HOSTS);
	/* Step 0: host 0 sends two blocks on port 0: one circuit, twice the time. */
	sched_step(&s);
	add(&s, 0, 1, 0, 0);
	add(&s, 0, 1, 2, 0);
	/* Step 1: host 0 sends one block on each of its circuits: in parallel. */
	sched_step(&s);
	add(&s, 0, 1, 0, 0);
	add(&s, 0, 3, 0, 1);
	/* Step 2: empty, free. */
	sched_step(&s);
	assert_int_equal(testbed_predict(&s, &t, &m, SIZE, per, &p, &err), 0);
	assert_true(fabs(per[0] - 2 * BLOCK_S) < 1e-9);
	assert_true(fabs(per[1] - BLOCK_S) < 1e-9);
	assert_true(per[2] == 0);
	assert_int_equal(p.steps, 2);
	assert_true(fabs(p.seconds - 3 * BLOCK_S) < 1e-9);
	sched_free(&s);
}

/* tbf's bucket: full at the start; a circuit idle for a step gathers
 * tokens at the rate, up to the bucket, and sends that many of its next
 * bytes at once, the rest at the rate; one that just drained it has
 * nothing saved. */
static void test_burst(void **state)
{
	(void)state;
	uint32_t peer[HOSTS * PORTS];
	struct testbed_net t;
	struct testbed_model m = {.rate = RATE, .alpha = 0, .burst = 262144};
	struct testbed_prediction p;
	struct ofc_error err = {0};
	struct schedule s;
	double per[6], burst_s = 0.262144; /* 256 KiB at a MB/s */

	ring_net(&t, peer);
	sched_init(&s, SCHED_ALLGATHER, "x", HOSTS);
	sched_step(&s); /* 0: port 0, full at the start */
	add(&s, 0, 1, 0, 0);
	sched_step(&s); /* 1: port 0 again, just drained */
	add(&s, 0, 1, 1, 0);
	sched_step(&s); /* 2: port 1, idle since the start: full */
	add(&s, 0, 3, 0, 1);
	sched_step(&s); /* 3: empty */
	sched_step(&s); /* 4: port 0, refilled during step 2 (0.79 s, more than the bucket) */
	add(&s, 0, 1, 2, 0);
	sched_step(&s); /* 5: port 0, drained again */
	add(&s, 0, 1, 3, 0);
	assert_int_equal(testbed_predict(&s, &t, &m, SIZE, per, &p, &err), 0);
	assert_true(fabs(per[0] - (BLOCK_S - burst_s)) < 1e-9);
	assert_true(fabs(per[1] - BLOCK_S) < 1e-9);
	assert_true(fabs(per[2] - (BLOCK_S - burst_s)) < 1e-9);
	assert_true(per[3] == 0);
	assert_true(fabs(per[4] - (BLOCK_S - burst_s)) < 1e-9);
	assert_true(fabs(per[5] - BLOCK_S) < 1e-9);
	assert_true(fabs(p.bytes_s - (5 * BLOCK_S - 3 * burst_s)) < 1e-9);
	/* the bytes priced at the rate: beyond what the buckets gave */
	assert_true(fabs(p.busiest_bytes - (5 * 1048576.0 - 3 * 262144)) < 1e-6);
	sched_free(&s);
	/* A bucket of 1.5 MiB refills at the rate, not at once: port 0
	 * drains it in two blocks (0.5 MiB left after the first, the tokens
	 * of the second step spent as they come); port 1 sends two blocks
	 * in 0.52 s, in which port 0 gathers half a MiB: its next block
	 * pays half. */
	m.burst = 3 << 19;
	sched_init(&s, SCHED_ALLGATHER, "x", HOSTS);
	sched_step(&s);
	add(&s, 0, 1, 0, 0);
	sched_step(&s);
	add(&s, 0, 1, 1, 0);
	sched_step(&s);
	add(&s, 0, 3, 0, 1);
	add(&s, 0, 3, 1, 1);
	sched_step(&s);
	add(&s, 0, 1, 2, 0);
	assert_int_equal(testbed_predict(&s, &t, &m, SIZE, per, &p, &err), 0);
	assert_true(per[0] == 0);
	assert_true(fabs(per[1] - BLOCK_S / 2) < 1e-9);
	assert_true(fabs(per[2] - BLOCK_S / 2) < 1e-9);
	assert_true(fabs(per[3] - BLOCK_S / 2) < 1e-9);
	sched_free(&s);
}

static void test_routed(void **state)
{
	(void)state;
	uint32_t peer[HOSTS * PORTS];
	struct testbed_net t;
	struct testbed_model m = {.rate = RATE, .alpha = 0};
	struct testbed_prediction p;
	struct ofc_error err = {0};
	struct schedule s;

	ring_net(&t, peer);
	sched_init(&s, SCHED_ALLGATHER, "x", HOSTS);
	sched_step(&s);
	/* 0 -> 2 without a port follows the route 0 -> 1 -> 2 (port 0 first,
	 * the lower of two shortest paths), and shares circuit 1 -> 2 with
	 * 1's own block to 2. */
	add(&s, 0, 2, 0, SCHED_NO_LANE);
	add(&s, 1, 2, 1, 0);
	assert_int_equal(testbed_predict(&s, &t, &m, SIZE, NULL, &p, &err), 0);
	assert_true(fabs(p.seconds - 2 * BLOCK_S) < 1e-9);
	assert_int_equal(p.circuits_used, 2);
	assert_int_equal(p.routed, 1);
	sched_free(&s);
}

static void test_no_circuit(void **state)
{
	(void)state;
	uint32_t peer[HOSTS * PORTS];
	struct testbed_net t;
	struct testbed_model m = {.rate = RATE, .alpha = 0};
	struct testbed_prediction p;
	struct ofc_error err = {0};
	struct schedule s;

	ring_net(&t, peer);
	sched_init(&s, SCHED_ALLGATHER, "x", HOSTS);
	sched_step(&s);
	add(&s, 0, 2, 0, 2); /* port 2 holds no circuit */
	assert_int_equal(testbed_predict(&s, &t, &m, SIZE, NULL, &p, &err), -1);
	assert_int_equal(err.code, OFC_E_INPUT);
	assert_string_equal(
	    err.msg,
	    "transfer 0 goes from host 0 to host 2 on port 2, but that port has no circuit");
	/* and a port whose circuit reaches another host than the transfer's */
	err = (struct ofc_error){0};
	s.xfers[0].lane = 0;
	assert_int_equal(testbed_predict(&s, &t, &m, SIZE, NULL, &p, &err), -1);
	assert_string_equal(err.msg,
			    "transfer 0 goes from host 0 to host 2 on port 0, but that port "
			    "reaches another host (is the testbed at the config's topology?)");
	m.rate = 0;
	s.xfers[0].lane = SCHED_NO_LANE;
	err = (struct ofc_error){0};
	assert_int_equal(testbed_predict(&s, &t, &m, SIZE, NULL, &p, &err), -1);
	assert_int_equal(err.code, OFC_E_RUNTIME);
	sched_free(&s);
}

static void test_judge(void **state)
{
	(void)state;
	struct testbed_model m = {.rate = 100e6, .alpha = 100e-6};
	struct testbed_prediction bytes = {.seconds = 1.001,
					   .alpha_s = 0.001,
					   .bytes_s = 1.0,
					   .busiest_bytes = 12.5e6,
					   .steps = 10};
	struct testbed_prediction steps = {.seconds = 0.0011,
					   .alpha_s = 0.001,
					   .bytes_s = 0.0001,
					   .busiest_bytes = 1250,
					   .steps = 10};
	char line[400];

	assert_true(testbed_judge(&bytes, &m, 1.1, line, sizeof(line)));
	assert_string_equal(line, "measured 1.1x the model's time: it holds (within 15%)");
	assert_true(testbed_judge(&bytes, &m, 0.9, line, sizeof(line)));
	/* 2.001 s: 2 s for the bytes after alpha's 1 ms, so the circuits
	 * carried half the rate. */
	assert_false(testbed_judge(&bytes, &m, 2.001, line, sizeof(line)));
	assert_string_equal(line,
			    "measured 2x the model's time: the bytes' term is off by 2x (the "
			    "busiest circuits carried 50 Mb/s in the run, the model 100 Mb/s)");
	/* 3.1 ms over 10 steps after 0.1 ms of bytes: 300 us a step. */
	assert_false(testbed_judge(&steps, &m, 0.0031, line, sizeof(line)));
	assert_string_equal(line, "measured 2.82x the model's time: alpha is off by 3x (a step "
				  "cost 300 us in the run, the model 100 us)");
}

/* A run's result as the message: unpriced leaves the prediction, the
 * ratio and the verdict out and says so; a run that failed says only
 * that (and the prediction it had); a run with step times lists them. */
static void test_result_message(void **state)
{
	struct arena a = {0};
	double step_end[2] = {0.5, 1.25}, step_model[2] = {0.4, 0.8};
	struct testbed_run r = {
	    .ran = true,
	    .data_ok = true,
	    .measured = 2.0,
	    .predicted = NAN,
	    .circuit_bytes = -1,
	    .res = {.seconds = 2.0, .connections = 8, .checked_elements = 1024}};
	Ofc__V1__TestbedRunResult *m;

	(void)state;
	snprintf(r.model, sizeof(r.model), "unpriced: the circuits are unshaped");
	m = testbed_run_result(&a, &r, 4 << 20);
	assert_true(m->has_ran && m->ran && m->has_data_ok && m->data_ok);
	assert_false(m->has_predicted_s || m->has_ratio || m->has_model_holds);
	assert_false(m->has_circuit_bytes || m->first_bad);
	assert_string_equal(m->model, "unpriced: the circuits are unshaped");
	assert_true(m->has_connections && m->connections == 8 && m->checked_elements == 1024);
	assert_true(m->algbw_bytes_per_s == (4 << 20) / 2.0);
	assert_int_equal(m->n_steps_detail, 0);

	r = (struct testbed_run){.predicted = 1.5, .circuit_bytes = -1};
	r.pred.alpha_s = 0.5, r.pred.bytes_s = 1.0, r.pred.circuits_used = 3;
	m = testbed_run_result(&a, &r, 4 << 20);
	assert_true(m->has_ran && !m->ran);
	assert_true(m->has_predicted_s && m->predicted_s == 1.5 && m->circuits_used == 3);
	assert_false(m->has_measured_s || m->has_data_ok || m->has_ratio || m->model);

	r = (struct testbed_run){
	    .ran = true,
	    .measured = 1.25,
	    .predicted = 1.2,
	    .holds = true,
	    .circuit_bytes = 3e6,
	    .step_model = step_model,
	    .res = {.seconds = 1.25, .step_end = step_end, .nsteps = 2, .bad_elements = 7}};
	snprintf(r.res.first_bad, sizeof(r.res.first_bad), "h1 element 3");
	snprintf(r.model, sizeof(r.model), "the model holds");
	m = testbed_run_result(&a, &r, 1 << 20);
	assert_true(m->has_ratio && fabs(m->ratio - 1.25 / 1.2) < 1e-12 && m->model_holds);
	assert_true(m->has_circuit_bytes && m->circuit_bytes == 3e6);
	assert_true(m->has_data_ok && !m->data_ok && m->bad_elements == 7);
	assert_string_equal(m->first_bad, "h1 element 3");
	assert_int_equal(m->n_steps_detail, 2);
	assert_true(m->steps_detail[0]->measured_s == 0.5 &&
		    m->steps_detail[0]->predicted_s == 0.4);
	assert_true(m->steps_detail[1]->measured_s == 0.75 &&
		    m->steps_detail[1]->predicted_s == 0.8);
	arena_free(&a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_unused_ports),   cmocka_unit_test(test_sharing),
	    cmocka_unit_test(test_routed),	   cmocka_unit_test(test_no_circuit),
	    cmocka_unit_test(test_judge),	   cmocka_unit_test(test_burst),
	    cmocka_unit_test(test_result_message),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
