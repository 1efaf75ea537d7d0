/* A topology for a workload (controller/pick): a fabric's cost model and
 * its defaults before and after validation, the frontier ranked by the
 * workload's time (weights, ties, the pick at either end of the data
 * sizes, Table 5 of Zhao et al.), its errors, and `topology: auto`
 * picking what the use case ranks first under the same model. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "controller/config/config.h"
#include "controller/pick/pick.h"

static struct fabric *parse(const char *text, bool validate)
{
	struct ofc_error err = {0};
	struct fabric *f = NULL;
	char buf[1024];

	if (config_parse("t.yaml", text, strlen(text), &f, &err) < 0 ||
	    (validate && (f->picker = &pick_here, fabric_validate(f, &err)) < 0))
		fail_msg("%s", ofc_error_str(&err, buf, sizeof(buf)));
	return f;
}

/* 64 hosts of 4 ports on one switch; HOSTS and COST are the variable parts. */
#define CFG(hosts, cost)                                                                           \
	"name: p\n"                                                                                \
	"hosts: {count: 64, prefix: h, ports: 4" hosts "}\n"                                       \
	"switches:\n"                                                                              \
	"  - {name: ocs0, type: ocs, ports: 256}\n"                                                \
	"wiring: {pattern: sequential, switches: [ocs0]}\n"                                        \
	"topology: auto\n"                                                                         \
	"collectives:\n"                                                                           \
	"  - {op: allreduce, size: 1MiB}\n" cost

/* The model is the same before validation (what topology: auto sees) and
 * after (what a Reconfigure, ofc plan and a workload plan see). */
static void model_both(const char *text, struct pick_model *m)
{
	struct fabric *f = parse(text, false);
	struct pick_model before, after;

	pick_model_of(f, &before);
	fabric_free(f);
	f = parse(text, true);
	pick_model_of(f, &after);
	assert_int_equal(pick_degree(f), 4);
	fabric_free(f);
	assert_true(before.alpha == after.alpha && before.link_rate == after.link_rate &&
		    before.node_rate == after.node_rate);
	*m = after;
}

static void test_model_of_fabric(void **state)
{
	struct pick_model m;
	struct sched_cost c;

	(void)state;
	/* Nothing said: 10 us a step, 100 Gb/s a node (the pipeline's). */
	model_both(CFG("", ""), &m);
	assert_true(m.alpha == COST_ALPHA_DEFAULT && m.link_rate == 0);
	c = pick_cost(&m, 4, 4096);
	assert_true(c.alpha == 10e-6 && c.bandwidth == 100e9 && c.size == 4096);
	/* The hosts' port rate is a link's: a node of 4 sends at 4 x. */
	model_both(CFG(", port_rate: 25Gbps", ""), &m);
	assert_true(m.link_rate == 25e9);
	assert_true(pick_cost(&m, 4, 1).bandwidth == 100e9);
	assert_true(pick_cost(&m, 3, 1).bandwidth == 75e9);
	/* The config's cost model wins over the ports; alpha 0 is a value. */
	model_both(CFG(", port_rate: 25Gbps", "cost_model: {alpha: 0us, link_bandwidth: 50Gbps}\n"),
		   &m);
	assert_true(m.alpha == 0 && m.link_rate == 50e9);
	assert_true(pick_cost(&m, 4, 1).bandwidth == 200e9);
	/* A node's rate given outright (ofc finder --bandwidth) whatever d. */
	m.node_rate = 30e9;
	assert_true(pick_cost(&m, 4, 1).bandwidth == 30e9);
}

/* The rank is a permutation of the frontier by ascending time, each time
 * the weighted sum of the finder's figures, the pick its first. */
static void check_rank(const struct pick_request *q, const struct pick_result *r)
{
	bool *seen = calloc(r->front.n + 1, 1);

	assert_non_null(seen);
	assert_true(r->front.n > 0);
	assert_int_equal(r->pick, r->rank[0]);
	for (size_t i = 0; i < r->front.n; i++) {
		double want = 0;

		for (size_t w = 0; w < q->nwork; w++) {
			struct sched_cost c = pick_cost(&q->model, q->degree, q->work[w].size);

			want += q->work[w].weight *
				finder_time_us(&r->front.front[i], q->work[w].op, &c);
		}
		assert_true(fabs(r->time_us[i] - want) <= 1e-9 * want);
		assert_false(seen[r->rank[i]]);
		seen[r->rank[i]] = true;
		if (i) {
			size_t a = r->rank[i - 1], b = r->rank[i];

			assert_true(r->time_us[a] < r->time_us[b] ||
				    (r->time_us[a] == r->time_us[b] && a < b));
		}
	}
	free(seen);
}

static void test_rank(void **state)
{
	struct pick_work w[2] = {{.op = SCHED_ALLREDUCE, .size = 1 << 20, .weight = 1},
				 {.op = SCHED_ALLGATHER, .size = 64 << 10, .weight = 3}};
	struct pick_request q = {.nodes = 64, .degree = 4, .work = w, .nwork = 2};
	struct pick_result r, one;
	struct ofc_error err = {0};

	(void)state;
	pick_model_default(&q.model);
	assert_int_equal(pick_run(&q, &r, &err), 0);
	check_rank(&q, &r);
	/* Tiny data: the fewest steps; huge data: the least tau_B. */
	w[0].size = 64;
	q.nwork = 1;
	assert_int_equal(pick_run(&q, &one, &err), 0);
	check_rank(&q, &one);
	assert_int_equal(one.pick, 0);
	pick_free(&one);
	w[0].size = 1ull << 34;
	assert_int_equal(pick_run(&q, &one, &err), 0);
	assert_int_equal(one.pick, one.front.n - 1);
	/* The time is 2 (tau_L alpha + tau_B M/B) for an allreduce. */
	const struct finder_entry *e = &one.front.front[one.pick];
	double want =
	    2 * (e->steps * 10e-6 * 1e6 + e->tau_b_value * (double)w[0].size * 8 / 100e9 * 1e6);
	assert_true(fabs(one.time_us[one.pick] - want) < 1e-6 * want);
	pick_free(&one);
	/* No work: the frontier's own order. */
	q.nwork = 0;
	assert_int_equal(pick_run(&q, &one, &err), 0);
	for (size_t i = 0; i < one.front.n; i++)
		assert_int_equal(one.rank[i], i);
	pick_free(&one);
	pick_free(&r);
}

/* Table 5 of Zhao et al.: for N = 5..12 at degree 4 and large data the
 * pick is BW-optimal with allreduce T_L 2 (N = 5) or 4. */
static void test_table5(void **state)
{
	struct pick_work w = {.op = SCHED_ALLREDUCE, .size = 1ull << 30, .weight = 1};
	struct pick_request q = {.degree = 4, .work = &w, .nwork = 1};

	(void)state;
	pick_model_default(&q.model);
	for (q.nodes = 5; q.nodes <= 12; q.nodes++) {
		struct pick_result r;
		struct ofc_error err = {0};

		assert_int_equal(pick_run(&q, &r, &err), 0);
		const struct finder_entry *e = &r.front.front[r.pick];
		assert_true(e->bw_optimal);
		assert_int_equal(2 * e->steps, q.nodes == 5 ? 2 : 4);
		assert_true(frac_cmp(e->tau_b, frac_make(q.nodes - 1, q.nodes)) == 0);
		pick_free(&r);
	}
}

static void test_errors(void **state)
{
	struct pick_work w = {.op = SCHED_ALLTOALL, .size = 1 << 20, .weight = 1};
	struct pick_request q = {.nodes = 16, .degree = 4, .work = &w, .nwork = 1};
	struct pick_result r;
	struct ofc_error err = {0};

	(void)state;
	pick_model_default(&q.model);
	assert_int_equal(pick_run(&q, &r, &err), -1);
	assert_int_equal(err.code, OFC_E_INPUT);
	assert_string_equal(err.msg, "the finder picks topologies for allgather, reduce-scatter "
				     "and allreduce, not alltoall");
	w.op = SCHED_ALLGATHER;
	q.degree = 16;
	assert_int_equal(pick_run(&q, &r, &err), -1);
	assert_string_equal(
	    err.msg, "16 hosts with 16 ports each have no direct-connect topology to choose");
	q.degree = 0;
	assert_int_equal(pick_run(&q, &r, &err), -1);
	assert_int_equal(err.code, OFC_E_INPUT);
}

/* topology: auto is the use case's first under the fabric's model; with no
 * rate given that is a node at 100 Gb/s, and the pick differs from the one
 * at 100 Gb/s a port (64 x 4, 1 MiB allreduce), so the default decides. */
static void test_auto_is_the_pick(void **state)
{
	static const char *cfgs[] = {
	    CFG("", ""),
	    CFG(", port_rate: 25Gbps", ""),
	    CFG("", "cost_model: {alpha: 2us, link_bandwidth: 10Gbps}\n"),
	};
	struct pick_work w = {.op = SCHED_ALLREDUCE, .size = 1 << 20, .weight = 1};
	char first[TOPO_MAX_SPEC + 1] = "";

	(void)state;
	for (size_t i = 0; i < sizeof(cfgs) / sizeof(cfgs[0]); i++) {
		struct fabric *f = parse(cfgs[i], true);
		struct pick_request q = {.nodes = 64, .degree = 4, .work = &w, .nwork = 1};
		struct pick_result r;
		struct ofc_error err = {0};

		pick_model_of(f, &q.model);
		assert_int_equal(pick_run(&q, &r, &err), 0);
		assert_true(f->topology.auto_picked);
		assert_string_equal(f->topology.spec, r.front.front[r.pick].spec);
		assert_true(fabs(f->topology.auto_time_us - r.time_us[r.pick]) <=
			    1e-9 * r.time_us[r.pick]);
		if (i == 0)
			snprintf(first, sizeof(first), "%s", f->topology.spec);
		pick_free(&r);
		fabric_free(f);
	}
	/* 100 Gb/s a node is what the default means: at 4 x that the pick
	 * is another topology. */
	struct pick_request q = {.nodes = 64, .degree = 4, .work = &w, .nwork = 1};
	struct pick_result r;
	struct ofc_error err = {0};
	pick_model_default(&q.model);
	assert_int_equal(pick_run(&q, &r, &err), 0);
	assert_string_equal(first, r.front.front[r.pick].spec);
	pick_free(&r);
	q.model.link_rate = 100e9;
	assert_int_equal(pick_run(&q, &r, &err), 0);
	assert_string_not_equal(first, r.front.front[r.pick].spec);
	pick_free(&r);
}

/* What a picker hook is asked and answers (validation's side of it). */
struct asked {
	struct topo_picker ops; /* first: the hook is handed &ops */
	int calls;
	struct pick_request q;
	struct pick_work work[4];
	const char *fail; /* non-NULL: refuse with this */
};

static int ask_recorded(const struct topo_picker *ops, const struct pick_request *q, char **spec,
			double *time_us, struct ofc_error *err)
{
	struct asked *a = (struct asked *)ops;

	a->calls++;
	a->q = *q;
	for (size_t i = 0; i < q->nwork && i < 4; i++)
		a->work[i] = q->work[i];
	if (a->fail)
		return ofc_error_set(err, OFC_E_RUNTIME, "%s", a->fail);
	*spec = strdup("circulant:64:1,8");
	*time_us = 123.5;
	return 0;
}

static int validate_with(const char *text, const struct topo_picker *picker, struct fabric **out,
			 struct ofc_error *err)
{
	struct fabric *f = NULL;

	*out = NULL;
	if (config_parse("t.yaml", text, strlen(text), &f, err) < 0)
		return -1;
	f->picker = picker;
	int rc = fabric_validate(f, err);
	assert_null(f->picker); /* let go of by validation */
	if (rc < 0)
		fabric_free(f);
	else
		*out = f;
	return rc;
}

/* topology: auto asks the fabric's picker (a planner process in ofcd,
 * pick_here elsewhere) the request the config makes: its hosts, their
 * fewest ports, its model and the collectives the finder prices (an
 * all-to-all left out), and takes its answer as the topology; a refusal is
 * the config's error at the topology; no picker, a config refused. */
static void test_auto_asks_the_picker(void **state)
{
	static const char text[] = CFG(", port_rate: 25Gbps", "  - {op: alltoall, size: 2MiB}\n"
							      "  - {op: allgather, size: 4KiB}\n"
							      "cost_model: {alpha: 2us}\n");
	struct asked a = {.ops = {.pick = ask_recorded}};
	struct ofc_error err = {0};
	struct fabric *f;

	(void)state;
	assert_int_equal(validate_with(text, &a.ops, &f, &err), 0);
	assert_int_equal(a.calls, 1);
	assert_int_equal(a.q.nodes, 64);
	assert_int_equal(a.q.degree, 4);
	assert_true(a.q.model.alpha == 2e-6 && a.q.model.link_rate == 25e9 &&
		    a.q.model.node_rate == 0);
	assert_int_equal(a.q.nwork, 2);
	assert_int_equal(a.work[0].op, SCHED_ALLREDUCE);
	assert_int_equal(a.work[0].size, 1 << 20);
	assert_int_equal(a.work[1].op, SCHED_ALLGATHER);
	assert_int_equal(a.work[1].size, 4096);
	assert_true(a.work[0].weight == 1 && a.work[1].weight == 1);
	assert_string_equal(f->topology.spec, "circulant:64:1,8");
	assert_true(f->topology.auto_picked && f->topology.auto_time_us == 123.5);
	assert_int_equal(f->graph->n, 64);
	fabric_free(f);

	a.fail = "the planner process picking it was killed by SIGKILL";
	assert_int_equal(validate_with(text, &a.ops, &f, &err), -1);
	assert_string_equal(err.msg, "topology 'auto': the planner process picking it was "
				     "killed by SIGKILL");
	assert_int_equal(err.code, OFC_E_RUNTIME);
	assert_int_equal(err.line, 6);
	assert_int_equal(err.col, 11);

	assert_int_equal(validate_with(text, NULL, &f, &err), -1);
	assert_string_equal(err.msg, "topology 'auto': nothing here picks a topology (a config "
				     "with a topology of its own is expected)");
	/* A config that needs no pick never asks. */
	a.calls = 0;
	static const char fixed[] = "name: p\n"
				    "hosts: {count: 8, prefix: h, ports: 2}\n"
				    "topology: ring:8\n";
	assert_int_equal(validate_with(fixed, &a.ops, &f, &err), 0);
	assert_int_equal(a.calls, 0);
	fabric_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_model_of_fabric),  cmocka_unit_test(test_rank),
	    cmocka_unit_test(test_table5),	     cmocka_unit_test(test_errors),
	    cmocka_unit_test(test_auto_is_the_pick), cmocka_unit_test(test_auto_asks_the_picker),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
