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

/* Each row's table ends with --json, --timeout and --help; a row that
 * fills the body names a field of the kind's message (so its has_ flag is
 * found by its offset), and every body fits the union it is built in. */
static void test_rows(void **state)
{
	const struct remote_cmd *const *rows;
	size_t n = remote_rows(&rows), at = offsetof(struct remote, body);

	(void)state;
	assert_true(n >= 11);
	for (size_t i = 0; i < n; i++) {
		const struct remote_cmd *k = rows[i];
		const ProtobufCMessageDescriptor *d = api_requests[k->kind].desc;
		bool json = false, timeout = false, help = false;

		assert_true(d->sizeof_message <= sizeof(union remote_body));
		assert_true(k->opts.help || k->opts.help_fn);
		assert_true(k->operands != OPERANDS_ONE || k->operand);
		assert_true(!k->print || k->answer);
		for (const struct opt *o = k->opts.table; o->name; o++) {
			json |= strcmp(o->name, "json") == 0;
			timeout |= strcmp(o->name, "timeout") == 0;
			help |= o->flags & OPT_STOP;
			if (o->off < at || o->off >= at + sizeof(union remote_body))
				continue;
			bool found = false;

			for (unsigned f = 0; f < d->n_fields; f++)
				found |= d->fields[f].offset == o->off - at;
			if (!found)
				fail_msg("%s --%s: no field of %s at its offset", k->cmd.name,
					 o->name, d->name);
		}
		assert_true(json && timeout && help);
		for (size_t j = 0; j < i; j++)
			assert_string_not_equal(k->cmd.name, rows[j]->cmd.name);
		assert_true(remote_command(k->cmd.name) || strcmp(k->cmd.name, "plan") == 0 ||
			    strcmp(k->cmd.name, "adopt") == 0);
	}
}

/* A command line parsed as `ofc --socket PATH WORDS...` parses it, into r. */
static int parsed(struct remote *r, const char *words)
{
	static char buf[512];
	char *argv[32];
	int argc = 0, rc = -1;
	const struct remote_cmd *const *rows;
	size_t n = remote_rows(&rows);

	snprintf(buf, sizeof(buf), "%s", words);
	for (char *w = strtok(buf, " "); w && argc < 31; w = strtok(NULL, " "))
		argv[argc++] = w;
	argv[argc] = NULL;
	*r = (struct remote){0};
	if (strcmp(argv[0], "testbed") == 0) {
		r->row = remote_testbed_row(argv[1]);
		memmove(argv, argv + 1, (size_t)argc-- * sizeof(*argv));
	}
	for (size_t i = 0; !r->row && i < n; i++)
		if (strcmp(rows[i]->cmd.name, argv[0]) == 0)
			r->row = rows[i];
	assert_non_null(r->row);
	r->cmd = &r->row->cmd;
	return remote_parse(r, argc, argv, &rc) ? 0 : rc;
}

/* The options given are the message's fields, their has_ flags set from
 * the descriptor (0 too: a grace of 0 s is one), those not given unset. */
static void test_parse_into_body(void **state)
{
	struct remote r;

	(void)state;
	assert_int_equal(parsed(&r, "schedule --collective broadcast --size 1MiB --chunks 4 "
				    "--summary -o x.pb --timeout 5"),
			 0);
	assert_string_equal(r.body.get_schedule.collective, "broadcast");
	assert_true(r.body.get_schedule.has_size_bytes);
	assert_int_equal(r.body.get_schedule.size_bytes, 1 << 20);
	assert_true(r.body.get_schedule.has_chunks && r.body.get_schedule.chunks == 4);
	assert_true(r.body.get_schedule.has_summary_only && r.body.get_schedule.summary_only);
	assert_false(r.body.get_schedule.has_reduced);
	assert_string_equal(r.output, "x.pb");
	assert_true(r.timeout == 5);

	assert_int_equal(parsed(&r, "status --edges"), 0);
	assert_true(r.body.get_state.has_with_edges && r.body.get_state.with_edges);
	assert_false(r.body.get_state.has_with_fabric);
	assert_true(r.body.get_state.has_with_wiring); /* the build's */

	assert_int_equal(parsed(&r, "drain sw0 sw1:3 --grace 0s --force"), 0);
	assert_true(r.body.drain.has_grace_ms && r.body.drain.grace_ms == 0);
	assert_true(r.body.drain.has_force && r.body.drain.force);
	assert_int_equal(r.body.drain.n_items, 2);
	assert_int_equal(parsed(&r, "drain sw0"), 0);
	assert_false(r.body.drain.has_grace_ms);

	assert_int_equal(parsed(&r, "reconfigure --topology ring:8 --max-loss 25% --grace 2s"), 0);
	assert_true(r.body.reconfigure.has_max_loss_percent);
	assert_true(r.body.reconfigure.max_loss_percent == 25);
	assert_true(r.body.reconfigure.has_grace_ms && r.body.reconfigure.grace_ms == 2000);
	assert_int_equal(parsed(&r, "reconfigure --collective allgather --size 1MiB --nodes 16"),
			 0);
	assert_int_equal(r.body.reconfigure.target_case, OFC__V1__RECONFIGURE__TARGET_WORKLOAD);
	assert_true(r.body.reconfigure.workload->has_size_bytes);
	assert_true(r.body.reconfigure.workload->has_nodes);
	reconfigure_ask_free(&r.ask);

	assert_int_equal(parsed(&r, "testbed run --alpha 0 --mpi --collective allgather"), 0);
	assert_true(r.body.testbed_run.has_alpha && r.body.testbed_run.alpha == 0);
	assert_true(r.body.testbed_run.has_mpi && r.body.testbed_run.mpi);
	assert_false(r.body.testbed_run.has_size || r.body.testbed_run.has_timeout);
	assert_int_equal(parsed(&r, "testbed mpirun --mpi openmpi --run-timeout 5s -- /bin/true"),
			 0);
	assert_string_equal(r.body.testbed_mpirun.mpi, "openmpi");
	assert_true(r.body.testbed_mpirun.has_timeout && r.body.testbed_mpirun.timeout == 5);
	assert_int_equal(r.body.testbed_mpirun.n_argv, 1);
	assert_int_equal(parsed(&r, "testbed up --rate-scale 0.5"), 0);
	assert_true(r.body.testbed_up.has_rate_scale && r.body.testbed_up.rate_scale == 0.5);

	/* refused, naming the option: exit 2 */
	assert_int_equal(parsed(&r, "testbed up --rate-scale 2"), 2);
	assert_int_equal(parsed(&r, "drain sw0 --grace 601s"), 2);
	assert_int_equal(parsed(&r, "watch --count 0"), 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_refusals),	    cmocka_unit_test(test_targets),
	    cmocka_unit_test(test_hosts_two_ways),  cmocka_unit_test(test_rows),
	    cmocka_unit_test(test_parse_into_body),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
