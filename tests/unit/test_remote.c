/* The remote commands' parts that need no daemon: the one Reconfigure
 * builder `ofc reconfigure` and the Slurm prolog share (each refusal, each
 * target, hosts from a hostlist or given expanded), and the command rows
 * the skeleton runs (each body fits the union it is built in, each row
 * has what its operands need). The asking itself is
 * tests/integration/test_clients.sh's and test_partitions.sh's; the
 * output of every refusal is the corpus's (tests/corpus/commands). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "controller/cli/remote.h"

static int build(struct reconfigure_ask *a, Ofc__V1__Reconfigure *rq, struct ofc_error *err)
{
	*rq = (Ofc__V1__Reconfigure)OFC__V1__RECONFIGURE__INIT;
	ofc_error_clear(err);
	return reconfigure_build(a, rq, err);
}

static void refused(struct reconfigure_ask a, const char *why)
{
	Ofc__V1__Reconfigure rq;
	struct ofc_error err = {0};

	assert_int_equal(build(&a, &rq, &err), -1);
	assert_int_equal(err.code, OFC_E_USAGE);
	assert_non_null(strstr(err.msg, why));
	assert_null(a.own);
}

static void test_refusals(void **state)
{
	(void)state;
	refused((struct reconfigure_ask){.topology = "ring:8", .collective = "allreduce"},
		"not both");
	refused((struct reconfigure_ask){.topology = "ring:8", .has_nodes = true}, "not both");
	refused((struct reconfigure_ask){.hostlist = "h[0-3]", .topology = "ring:4"},
		"--hosts makes a partition");
	refused((struct reconfigure_ask){.hostlist = "h[0-3]", .partition = "p"},
		"--hosts makes a partition");
	refused((struct reconfigure_ask){.topology = "ring:4", .relabel = true},
		"--relabel goes with --hosts");
	refused((struct reconfigure_ask){.partition = "p", .topology = "ring:4"},
		"the partition's own topology");
	refused((struct reconfigure_ask){.collective = "allreduce"}, "give --topology SPEC");
	refused((struct reconfigure_ask){0}, "give --topology SPEC");
	refused(
	    (struct reconfigure_ask){.partition = "p", .topology = "ring:4", .hostlist = "h[0-"},
	    "--hosts 'h[0-'");
}

static void test_targets(void **state)
{
	Ofc__V1__Reconfigure rq;
	struct ofc_error err = {0};
	struct reconfigure_ask topo = {.topology = "torus:4x4", .dry_run = true};
	struct reconfigure_ask wl = {.collective = "allgather",
				     .size = 1 << 20,
				     .has_size = true,
				     .nodes = 16,
				     .has_nodes = true};
	struct reconfigure_ask part = {.partition = "jobA"};

	(void)state;
	assert_int_equal(build(&topo, &rq, &err), 0);
	assert_int_equal(rq.target_case, OFC__V1__RECONFIGURE__TARGET_TOPOLOGY);
	assert_string_equal(rq.topology, "torus:4x4");
	assert_true(rq.has_dry_run && rq.dry_run);
	assert_false(rq.has_relabel);
	assert_null(rq.partition);

	assert_int_equal(build(&wl, &rq, &err), 0);
	assert_int_equal(rq.target_case, OFC__V1__RECONFIGURE__TARGET_WORKLOAD);
	assert_ptr_equal(rq.workload, &wl.wl);
	assert_string_equal(rq.workload->collective, "allgather");
	assert_true(rq.workload->has_size_bytes);
	assert_int_equal(rq.workload->size_bytes, 1 << 20);
	assert_true(rq.workload->has_nodes);
	assert_int_equal(rq.workload->nodes, 16);
	assert_false(rq.has_dry_run);

	assert_int_equal(build(&part, &rq, &err), 0);
	assert_int_equal(rq.target_case, OFC__V1__RECONFIGURE__TARGET__NOT_SET);
	assert_string_equal(rq.partition, "jobA");
	assert_int_equal(rq.n_hosts, 0);
}

/* The CLI's --hosts LIST and the prolog's hosts (expanded already) give
 * the same message. */
static void test_hosts_two_ways(void **state)
{
	char h0[] = "h0", h1[] = "h1", h2[] = "h2";
	char *given[] = {h0, h1, h2, NULL};
	Ofc__V1__Reconfigure cli, slurm;
	struct ofc_error err = {0};
	struct reconfigure_ask a = {.partition = "slurm-job-7",
				    .topology = "ring:3",
				    .hostlist = "h[0-2]",
				    .relabel = true};
	struct reconfigure_ask b = {.partition = "slurm-job-7",
				    .topology = "ring:3",
				    .hosts = given,
				    .nhosts = 3,
				    .relabel = true};

	(void)state;
	assert_int_equal(build(&a, &cli, &err), 0);
	assert_int_equal(build(&b, &slurm, &err), 0);
	assert_non_null(a.own);
	assert_null(b.own); /* borrowed: the prolog frees its own */
	size_t n = protobuf_c_message_get_packed_size(&cli.base);
	assert_int_equal(n, protobuf_c_message_get_packed_size(&slurm.base));
	uint8_t *x = xmalloc(n), *y = xmalloc(n);
	protobuf_c_message_pack(&cli.base, x);
	protobuf_c_message_pack(&slurm.base, y);
	assert_memory_equal(x, y, n);
	assert_int_equal(cli.n_hosts, 3);
	assert_string_equal(cli.hosts[2], "h2");
	assert_true(cli.has_relabel && cli.relabel);
	assert_int_equal(cli.target_case, OFC__V1__RECONFIGURE__TARGET_TOPOLOGY);
	free(x);
	free(y);
	reconfigure_ask_free(&a);
	assert_null(a.own);
	reconfigure_ask_free(&b);
}

static void test_rows(void **state)
{
	const struct remote_cmd *const *rows;
	size_t n = remote_rows(&rows);

	(void)state;
	assert_true(n >= 11);
	for (size_t i = 0; i < n; i++) {
		const struct remote_cmd *k = rows[i];
		const struct api_request *q = &api_requests[k->kind];
		bool json = false, timeout = false, help = false;

		/* the body is built in the union: every kind's message fits */
		assert_true(q->desc->sizeof_message <= sizeof(union remote_body));
		assert_true(k->help || k->help_fn);
		assert_true(k->operands != OPERANDS_ONE || k->operand);
		assert_true(!k->print || k->answer);
		for (const struct option *o = k->opts; o->name; o++) {
			json |= o->val == REMOTE_OPT_JSON;
			timeout |= o->val == REMOTE_OPT_TIMEOUT;
			help |= o->val == 'h';
			/* one of its own: the row reads it */
			assert_true(o->val == REMOTE_OPT_JSON || o->val == REMOTE_OPT_TIMEOUT ||
				    o->val == 'h' || k->opt);
		}
		assert_true(json && timeout && help);
		for (size_t j = 0; j < i; j++)
			assert_string_not_equal(k->cmd.name, rows[j]->cmd.name);
		assert_true(remote_command(k->cmd.name) || strcmp(k->cmd.name, "plan") == 0 ||
			    strcmp(k->cmd.name, "adopt") == 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_refusals),
	    cmocka_unit_test(test_targets),
	    cmocka_unit_test(test_hosts_two_ways),
	    cmocka_unit_test(test_rows),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
