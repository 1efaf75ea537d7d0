/* ofc testbed up|check|down FILE: the fabric's hosts as network namespaces
 * and its circuits as veth pairs (controller/testbed/). */
#include "controller/cli/remote.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* ofc testbed check: testbed_check on the committed topology (the
 * record's, as ofcd's TestbedCheck), printed as ofcd's answer is; exit 1
 * unless every pair reaches, every circuit carried and the reference
 * run's data is right. */
static int check(struct fabric_cmd *fc)
{
	const struct fabric *f = fc->fabric;
	struct ofc_error err = {0};
	struct testbed_topo committed;
	Ofc__V1__TestbedCheckAnswer *m = NULL;
	struct arena a = {0};
	uint32_t bad = 0;
	int rc;

	if (!testbed_is_up(fc->state_dir, f->name)) {
		ofc_error_set(&err, OFC_E_RUNTIME,
			      "the testbed of fabric '%s' is not up (run 'ofc testbed up %s')",
			      f->name, fc->file);
		return fabric_cmd_fail(fc, &err);
	}
	if (testbed_topo_committed(fc, &committed, &err) < 0)
		return fabric_cmd_fail(fc, &err);
	rc = testbed_check(&schedule_here, f, committed.open ? &committed.f : f,
			   committed.open     ? committed.spec
			   : f->topology.spec ? f->topology.spec
					      : "",
			   fc->state_dir, &a, &m, &bad, &err);
	testbed_topo_free(&committed);
	if (rc < 0) {
		arena_free(&a);
		return fabric_cmd_fail(fc, &err);
	}
	if (fc->json)
		remote_print_json(stdout, &m->base);
	else
		testbed_print_check(m);
	arena_free(&a);
	fabric_cmd_free(fc);
	return bad ? 1 : 0;
}

/* ofc testbed up: the namespaces and veths, shaped to a rate the kernel
 * can shape and this machine can carry (testbed_bring_up, which ofcd's
 * TestbedUp calls too). */
static int up(struct fabric_cmd *fc)
{
	const struct fabric *f = fc->fabric;
	struct ofc_error err = {0};
	struct testbed_up_result r;
	const struct device_state **switches;
	struct arena a = {0};
	Ofc__V1__TestbedUpAnswer *m;
	int rc;

	if (ctl_read(fc->ctl, &err) < 0)
		return fabric_cmd_fail(fc, &err);
	switches = ctl_switch_states(fc->ctl);
	rc = testbed_bring_up(f, fc->state_dir, switches, fc->rate_scale, &r, &err);
	free(switches);
	if (!r.up)
		return fabric_cmd_fail(fc, &err);
	/* (no ofcd holds the fabric: the agents report to the one started later) */
	testbed_agents_start(f, fc->state_dir, NULL, &r);
	m = testbed_up_answer(&a, f->name, &r);
	if (fc->json)
		remote_print_json(stdout, &m->base);
	else
		testbed_print_up(m);
	arena_free(&a);
	if (rc < 0)
		return fabric_cmd_fail(fc, &err);
	fabric_cmd_free(fc);
	return 0;
}

static const struct opt up_rows[] = {
    {"rate-scale", cli_row_fraction, offsetof(struct fabric_cmd, rate_scale), "X",
     "up: shape circuits to X times the config's link rate; without it, up shapes to what "
     "this machine carries (and at most 16 Gb/s) and says so"},
    {NULL},
};

const struct cli_table up_cli_table = {"testbed up", up_rows, sizeof(struct fabric_cmd)};

static const char testbed_help[] =
    "up: one network namespace per host (ofc-FABRIC-HOST), one veth pair per circuit\n"
    "the switches hold now, addresses from 198.18.0.0/15 and routes along shortest\n"
    "paths, relayed by intermediate hosts. While it is up, 'ofc apply' moves its\n"
    "circuits and routes with the switches.\n"
    "check: ICMP echo between every ordered pair of hosts, then the shaping each\n"
    "circuit holds and the rate and latency a probe measures on it, all at once, and\n"
    "a warning when they carry less than it; then the run's model calibrated (alpha,\n"
    "a step's cost, from runs of the executor) and judged by a reference run; exit 1\n"
    "unless all reach.\n"
    "run: execute schedules on the hosts (see ofc testbed run --help).\n"
    "mpirun: an MPI program, one rank per host, with libofc-mpi (see ofc testbed\n"
    "mpirun --help).\n"
    "down: remove every namespace the testbed made.\n"
    "link, miswire: faults behind ofc's back (see ofc testbed link --help).\n"
    "Needs root (network namespaces).\n";

int cmd_testbed(const struct cli_cmd *cmd, int argc, char **argv)
{
	struct fabric_cmd fc;
	struct ofc_error err = {0};
	const char *action;
	char usage[32];
	uint32_t n;
	int rc;

	if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
		/* up's, check's and down's usage from their rows, then where
		 * the others' are; up's and the common rows */
		cli_usage_line(
		    "testbed", "up|check|down FILE",
		    (const struct opt *const[]){up_rows, fabric_cmd_tables[0].table, NULL});
		printf("       ofc testbed run|mpirun|link|miswire FILE ... (see ofc testbed "
		       "ACTION --help)\n\n%s\n\n%s\n",
		       cmd->summary, testbed_help);
		opt_help(stdout, up_rows);
		opt_help(stdout, fabric_cmd_tables[0].table);
		return 0;
	}
	if (argc < 2 || argv[1][0] == '-')
		return cli_usage_error(cmd,
				       "missing up, check, run, mpirun, down, link or miswire");
	action = argv[1];
	if (strcmp(action, "run") == 0)
		return cmd_testbed_run(cmd, argc - 1, argv + 1);
	if (strcmp(action, "mpirun") == 0)
		return cmd_testbed_mpirun(cmd, argc - 1, argv + 1);
	if (strcmp(action, "link") == 0 || strcmp(action, "miswire") == 0)
		return cmd_testbed_fault(cmd, argc - 1, argv + 1);
	if (strcmp(action, "up") && strcmp(action, "check") && strcmp(action, "down"))
		return cli_usage_error(
		    cmd,
		    "unknown action '%s' (expected up, check, run, mpirun, down, link or miswire)",
		    action);
	/* its own usage: the action and FILE, then its rows */
	snprintf(usage, sizeof(usage), "%s FILE", action);
	const struct cli_cmd action_cmd = {cmd->name, usage, cmd->summary, NULL};

	rc = fabric_cmd_parse(
	    &fc, &action_cmd, argc - 1, argv + 1,
	    (const struct opt *const[]){strcmp(action, "up") == 0 ? up_rows : NULL, NULL},
	    testbed_help, false);
	fc.cmd = cmd;
	if (rc)
		return rc < 0 ? 0 : rc;
	if (testbed_need_root(&err) < 0) {
		free(fc.state_dir);
		return cli_fail(&err);
	}
	/* (ofcd holding the fabric: its own up and down are the way) */
	fc.daemon_ask = strcmp(action, "up") == 0 ? "testbed up" : "testbed down";
	if (fabric_cmd_open(&fc, false, &err) < 0)
		return fabric_cmd_fail(&fc, &err);
	if (strcmp(action, "check") == 0)
		return check(&fc);
	if (fabric_cmd_repair(&fc, &err) < 0)
		return fabric_cmd_fail(&fc, &err);
	if (strcmp(action, "up") == 0)
		return up(&fc);
	if (testbed_down(fc.fabric, fc.state_dir, &n, &err) < 0)
		return fabric_cmd_fail(&fc, &err);
	if (fc.json) {
		Ofc__V1__TestbedDownAnswer m = OFC__V1__TESTBED_DOWN_ANSWER__INIT;

		m.fabric = fc.fabric->name;
		m.has_removed = 1;
		m.removed = n;
		remote_print_json(stdout, &m.base);
	} else
		printf("testbed %s down: %u namespace%s removed\n", fc.fabric->name, n,
		       n == 1 ? "" : "s");
	fabric_cmd_free(&fc);
	return 0;
}
