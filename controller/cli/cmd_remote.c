/* `ofc --socket PATH COMMAND ...`: status, apply, reconfigure, schedule,
 * plan, watch, cancel, fail and restore asked of a running ofcd over its
 * control socket instead of done locally. Exit status follows the answer:
 * 0 for OK, 2 for a request the daemon found invalid (a config error
 * prints as FILE:LINE:COL: message), 1 for anything else (denied, failed,
 * busy, ...).
 * --json prints what the local command prints (docs/json.md): status the
 * ofc.v1.State, schedule its summary, plan the ofc.v1.Plan, apply and the
 * other mutations the ofc.v1.TransactionInfo; watch one Response a line.
 *
 * Every command is a row (remote.h) run by one skeleton, remote_run:
 * options into the body of the request its kind's row names, operands,
 * one call, the answer printed. */
#include "controller/cli/remote.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>

/* ---- the skeleton ------------------------------------------------------------------ */

bool remote_parse(struct remote *r, int argc, char **argv, int *rc)
{
	const struct remote_cmd *k = r->row;
	struct cli_opts o = k->opts;
	int first;

	r->desc = api_requests[k->kind].desc;
	if (r->desc->sizeof_message > sizeof(r->body)) { /* (test_remote checks every row) */
		fprintf(stderr, "ofc: %s: no room for a %s\n", r->cmd->name, r->desc->name);
		*rc = 1;
		return false;
	}
	protobuf_c_message_init(r->desc, &r->body);
	o.given = remote_given;
	r->timeout = k->timeout;
	r->ask.grace_s = -1;
	if (!cli_parse(r->cmd, &o, argc, argv, r, &first, rc))
		return false;
	/* (the parsers refuse a size or a count of 0: one above it was given) */
	r->ask.has_grace = r->ask.grace_s >= 0;
	r->ask.has_size = r->ask.size > 0;
	r->ask.has_nodes = r->ask.nodes > 0;
	argc -= first;
	argv += first;
	if (k->operands == OPERANDS_NONE && argc > 0) {
		*rc = cli_usage_error(r->cmd, "unexpected argument '%s'%s", argv[0],
				      k->extra ? k->extra : "");
		return false;
	}
	if (k->operands == OPERANDS_ONE && argc != 1) {
		*rc = argc > 1 ? cli_usage_error(r->cmd, "too many arguments")
			       : cli_usage_error(r->cmd, "missing %s", k->operand);
		return false;
	}
	*rc = k->build ? k->build(r, &r->body, argc, argv) : 0;
	return *rc == 0;
}

/* An answer: the row's printer for the OK answer it expects, else the
 * outcome as every mutation's. */
static int answer(struct remote *r, Ofc__V1__Response *resp)
{
	int rc;

	if (!r->row->print || resp->status != OFC__V1__STATUS__STATUS_OK ||
	    resp->body_case != r->row->answer)
		return remote_finish(r, resp);
	rc = r->row->print(r, resp);
	ofc__v1__response__free_unpacked(resp, NULL);
	return rc;
}

static int remote_run(struct remote *r, int argc, char **argv)
{
	const struct api_request *k = &api_requests[r->row->kind];
	Ofc__V1__Request req = OFC__V1__REQUEST__INIT;
	Ofc__V1__Response *resp;
	int rc;

	if (remote_parse(r, argc, argv, &rc)) {
		api_set_body(&req, k, &r->body.base);
		if (r->row->run)
			rc = r->row->run(r, &req);
		else if ((rc = remote_call(r, &req,
					   (k->flags & API_READ ? CLI_CALL_READ : 0) | r->row->call,
					   &resp)) == 0)
			rc = answer(r, resp);
	}
	free(r->text);
	reconfigure_ask_free(&r->ask);
	return rc;
}

/* ---- status -------------------------------------------------------------------------- */

/* The wiring as the hosts hear it, with every status (computed at the
 * request; ofcd leaves it out of its cached answer). */
static int status_build(struct remote *r, union remote_body *b, int argc, char **argv)
{
	(void)r, (void)argc, (void)argv;
	b->get_state.has_with_wiring = b->get_state.with_wiring = 1;
	return 0;
}

static int status_print(struct remote *r, const Ofc__V1__Response *resp)
{
	/* --json: the ofc.v1.State, as `ofc status FILE --json` prints it */
	if (r->json)
		remote_print_json(stdout, &resp->state->base);
	else
		print_state(resp->state, r->t->https);
	/* a switch that does not answer: 1, as `ofc status FILE` */
	return status_devices_exit(resp->state);
}

static const struct opt status_rows[] = {
    {"fabric", remote_row_flag, REMOTE_B(get_state, with_fabric), NULL,
     "include the running config"},
    {"edges", remote_row_flag, REMOTE_B(get_state, with_edges), NULL,
     "include the topology's edges and port layers"},
    REMOTE_ROWS_END("the ofc.v1.State as JSON, as 'ofc status FILE --json' prints it "
		    "(docs/json.md)"),
};

static const struct remote_cmd status_cmd = {
    .cmd = {"status", "", "the daemon's committed state", NULL},
    .kind = API_GET_STATE,
    .opts = {status_rows,
	     "Asks ofcd for the last committed state: devices, circuits, lightpaths, the\n"
	     "topology and its schedule, and any transaction in progress or queued.\n"},
    .timeout = 30,
    .call = CLI_CALL_QUICK,
    .extra = " (the daemon knows its config)",
    .build = status_build,
    .answer = OFC__V1__RESPONSE__BODY_STATE,
    .print = status_print,
};

/* ---- wiring ----------------------------------------------------------------------------- */

static int wiring_print(struct remote *r, const Ofc__V1__Response *resp)
{
	const Ofc__V1__Wiring *w = resp->state->wiring;

	if (!w) { /* (a tenant's state has none) */
		fprintf(stderr, "ofc: %s: the answer has no wiring (a tenant's state)\n",
			r->cmd->name);
		return 1;
	}
	if (r->json)
		remote_print_json(stdout, &w->base);
	else
		print_wiring_links(w);
	/* a link the hosts hear wrong: 1, as a check; so is a follower's
	 * answer, which has no verdict to check */
	return w->miswired || w->follower ? 1 : 0;
}

static const struct opt wiring_rows[] = {
    REMOTE_ROWS_END("the ofc.v1.Wiring as JSON (docs/json.md)"),
};

static const struct remote_cmd wiring_cmd = {
    .cmd = {"wiring", "",
	    "each circuit as the hosts' LLDP hears it: confirmed, miswired, dark, not seen", NULL},
    .kind = API_GET_STATE,
    .opts = {wiring_rows,
	     "Asks ofcd for the wiring as the hosts' agents (ofc-hostd) hear it: each\n"
	     "circuit of the record, SRC -> DST, as confirmed (DST hears SRC over LLDP),\n"
	     "miswired (it hears another: the difference named), dark (DST's port absent\n"
	     "or hearing nothing) or not seen (DST's host has not reported, or its lldpd\n"
	     "does not answer), with the age of the report it rests on. Exit status 1\n"
	     "when a link is miswired, or when the replica asked follows (the agents\n"
	     "report to the leader, which it names: ask that one).\n"},
    .timeout = 30,
    .call = CLI_CALL_QUICK,
    .build = status_build,
    .answer = OFC__V1__RESPONSE__BODY_STATE,
    .print = wiring_print,
};

/* ---- apply ------------------------------------------------------------------------------ */

static int apply_build(struct remote *r, union remote_body *b, int argc, char **argv)
{
	struct ofc_error err = {0};
	size_t len;

	(void)argc;
	if (read_file(argv[0], CONFIG_MAX_BYTES, &r->text, &len, &err) < 0)
		return cli_fail(&err);
	if (strlen(r->text) != len) {
		fprintf(stderr, "ofc: %s: the config contains a NUL byte\n", argv[0]);
		return 2;
	}
	if (r->ask.verify_wiring && (r->ask.max_loss > 0 || b->apply_config.dry_run))
		return cli_usage_error(r->cmd, "--verify-wiring checks a commit: not with %s",
				       r->ask.max_loss > 0 ? "--max-loss" : "--dry-run");
	b->apply_config.has_verify_wiring_ms = r->ask.verify_wiring;
	b->apply_config.verify_wiring_ms = r->ask.verify_wiring_ms;
	if (reconfigure_stages(&r->ask, &b->apply_config.has_max_loss_percent,
			       &b->apply_config.max_loss_percent, &b->apply_config.has_grace_ms,
			       &b->apply_config.grace_ms, &err) < 0)
		return cli_usage_error(r->cmd, "%s", err.msg);
	/* The daemon resolves relative paths in the config (credentials)
	 * from the file's directory, whatever its own working directory. */
	b->apply_config.yaml = r->text;
	b->apply_config.filename = realpath(argv[0], r->path) ? r->path : argv[0];
	return 0;
}

/* --max-loss and --grace, as apply and reconfigure take them (a grace
 * under --max-loss, whose stages it spaces; drain's its own). */
#define MAX_LOSS_ROW(help)                                                                         \
	{                                                                                          \
		"max-loss", cli_row_percent, REMOTE_O(ask.max_loss), "P%", help                    \
	}
#define GRACE_ROW(help, in)                                                                        \
	{                                                                                          \
		"grace", cli_row_duration, REMOTE_O(ask.grace_s), "DUR", help, 0, 600,             \
		    "at most 600 s", .under = (in)                                                 \
	}

/* --verify-wiring[=DUR]: the wait for the hosts' LLDP after the commit,
 * VERIFY_WIRING_DEFAULT_S without a value. */
static int p_verify_wiring(const struct opt *row, const char *arg, void *base,
			   struct ofc_error *err)
{
	struct reconfigure_ask *a = &((struct remote *)base)->ask;
	double s = VERIFY_WIRING_DEFAULT_S;
	const char *why = NULL;

	if (arg && parse_duration(arg, &s, &why) < 0)
		return ofc_error_set(err, OFC_E_USAGE, "bad --%s '%s': %s", row->name, arg, why);
	if (!(s >= row->min && s <= row->max))
		return ofc_error_set(err, OFC_E_USAGE, "bad --%s '%s': %s", row->name, arg,
				     row->expect);
	a->verify_wiring = true;
	a->verify_wiring_ms = (uint32_t)(s * 1000 + 0.5);
	return 0;
}

#define VERIFY_WIRING_ROW(help)                                                                    \
	{                                                                                          \
		"verify-wiring", p_verify_wiring, REMOTE_O(ask.verify_wiring_ms), "DUR", help,     \
		    0.001, 600, "the wait for the hosts' LLDP is 1ms to 600s",                     \
		    .flags = OPT_OPTIONAL                                                          \
	}

static const struct opt apply_rows[] = {
    MAX_LOSS_ROW("its topology in stages first, as 'ofc reconfigure --max-loss' runs them, "
		 "then the config applied (it may change no other circuit than its topology's)"),
    GRACE_ROW("with --max-loss: each stage's wait (default 3s, at most 600s)", "max-loss"),
    VERIFY_WIRING_ROW(
	"after the commit, wait up to DUR (default 10s) for the hosts' agents' "
	"LLDP to confirm every circuit it changed; one miswired, dark or not seen: "
	"the config and topology before restored, and the answer names each (exit 1)"),
    {"dry-run", remote_row_flag, REMOTE_B(apply_config, dry_run), NULL, "validate and plan only"},
    REMOTE_ROWS_END("the ofc.v1.TransactionInfo as JSON, as 'ofc apply --json' prints it "
		    "(docs/json.md)"),
};

static const struct remote_cmd apply_cmd = {
    .cmd = {"apply", "FILE", "send a config to the daemon and apply it", NULL},
    .kind = API_APPLY_CONFIG,
    .opts = {apply_rows,
	     "Sends FILE to ofcd, which validates it (errors come back as FILE:LINE:COL)\n"
	     "and drives the devices to its target as one transaction, after the mutations\n"
	     "queued before it. The fabric's name must be the one ofcd serves.\n"},
    .operands = OPERANDS_ONE,
    .operand = "FILE",
    .build = apply_build,
};

/* ---- reconfigure ----------------------------------------------------------------------- */

static int reconfigure_build_cli(struct remote *r, union remote_body *b, int argc, char **argv)
{
	struct ofc_error err = {0};

	(void)argc, (void)argv;
	if (reconfigure_build(&r->ask, &b->reconfigure, &err) < 0)
		return cli_usage_error(r->cmd, "%s", err.msg);
	return 0;
}

static const struct opt reconfigure_rows[] = {
    /* one of: a topology, a workload's, a partition's (made of --hosts) */
    {"topology", opt_str, REMOTE_O(ask.topology), "SPEC",
     "the fabric's (or the partition's) topology", .flags = OPT_REQUIRED, .alt = 1},
    {"collective", cli_row_collective_name, REMOTE_O(ask.collective), "C",
     "a workload, with --size: the topology the finder picks for it", .alt = 1},
    {"size", cli_row_size, REMOTE_O(ask.size), "M", "the workload's data per node",
     .flags = OPT_REQUIRED, .under = "collective"},
    {"nodes", cli_row_u32, REMOTE_O(ask.nodes), "N",
     "the workload's nodes: every host of the fabric", 1, SCHED_MAX_NODES,
     "node ids in a schedule are 16 bits", .under = "collective"},
    {"partition", opt_str, REMOTE_O(ask.partition), "NAME",
     "one partition of the config to its own topology, every other circuit left as it is",
     .alt = 1},
    {"--topology SPEC", .flags = OPT_OPERAND, .under = "partition"}, /* --topology's 2nd place */
    {"hosts", opt_str, REMOTE_O(ask.hostlist), "LIST",
     "the partition's hosts (with --partition and --topology)", .flags = OPT_REQUIRED,
     .under = "--topology SPEC"},
    {"relabel", NULL, REMOTE_O(ask.relabel), NULL,
     "renumber the topology over the hosts for fewest moves", .under = "hosts"},
    {"free-ports", NULL, REMOTE_O(ask.free_ports), NULL,
     "the topology or workload on the ports no held partition has: the held partitions' "
     "circuits stay as they are"},
    MAX_LOSS_ROW("in stages, each one transaction verified on the devices, so that the "
		 "fabric keeps at least (100-P)% of its bandwidth at every moment (the cost "
		 "model's, on the links left in use); each stage's schedule is published "
		 "before its circuits go; with --dry-run, the stages and the loss at each"),
    GRACE_ROW("with --max-loss: each stage's wait between its schedule and its circuits "
	      "(default 3s, at most 600s)",
	      "max-loss"),
    VERIFY_WIRING_ROW("after the commit, wait up to DUR (default 10s) for the hosts' agents' "
		      "LLDP to confirm every circuit it changed; one miswired, dark or not seen "
		      "rolls it back to the topology before, and the answer names each (exit 1); "
		      "refused without agents on the hosts (ofc testbed up starts them there)"),
    {"dry-run", NULL, REMOTE_O(ask.dry_run), NULL, "validate and plan only"},
    REMOTE_ROWS_END("the ofc.v1.TransactionInfo as JSON (docs/json.md)"),
};

static const struct remote_cmd reconfigure_cmd = {
    .cmd = {"reconfigure", "", "rewire the fabric through the daemon", NULL},
    .kind = API_RECONFIGURE,
    .opts = {reconfigure_rows,
	     "Asks ofcd to rewire the fabric as one transaction: to --topology SPEC, or\n"
	     "to the topology the finder picks for a workload (--collective, --size and\n"
	     "optionally --nodes, which must be every host); or one partition of the config\n"
	     "to its own topology (--partition NAME), every other circuit left as it is.\n"
	     "With --hosts, a partition made now of exactly those hosts (a comma list or a\n"
	     "Slurm hostlist such as h[0-7]) at --topology SPEC, held under NAME until\n"
	     "'ofc release NAME' (the HTTP API's and the Slurm prolog's request).\n"},
    .extra = "",
    .build = reconfigure_build_cli,
};

/* ---- release, cancel, fail and restore ------------------------------------------------- */

/* The commands with no options of their own. */
static const struct opt plain_rows[] = {
    REMOTE_ROWS_END("the answer as JSON (docs/json.md)"),
};

static int release_build(struct remote *r, union remote_body *b, int argc, char **argv)
{
	(void)r, (void)argc;
	/* (name too: an ofcd of before partition reads that) */
	b->release_partition.partition = b->release_partition.name = argv[0];
	return 0;
}

static const struct remote_cmd release_cmd = {
    .cmd = {"release", "NAME", "let go of a partition made with --hosts", NULL},
    .kind = API_RELEASE_PARTITION,
    .opts = {plain_rows,
	     "Lets go of a partition made with 'ofc reconfigure --partition NAME --hosts LIST':\n"
	     "its hosts return to the pool; the circuits stay as they are.\n"},
    .timeout = 60,
    .operands = OPERANDS_ONE,
    .operand = "NAME",
    .build = release_build,
};

static int cancel_build(struct remote *r, union remote_body *b, int argc, char **argv)
{
	Ofc__V1__Cancel *k = &b->cancel;

	(void)argc;
	if (parse_u64(argv[0], &k->ticket) < 0 || !k->ticket)
		return cli_usage_error(r->cmd, "bad TICKET '%s'", argv[0]);
	k->has_ticket = 1;
	return 0;
}

static const struct remote_cmd cancel_cmd = {
    .cmd = {"cancel", "TICKET", "cancel a queued mutation", NULL},
    .kind = API_CANCEL,
    .opts = {plain_rows, "Cancels a queued mutation by its ticket (ofc --socket PATH status lists\n"
			 "them). A running transaction is never cancelled.\n"},
    .timeout = 30,
    .call = CLI_CALL_ONCE, /* a ticket is one replica's: never sent twice */
    .operands = OPERANDS_ONE,
    .operand = "TICKET",
    .build = cancel_build,
};

static const struct remote_cmd restore_cmd;

/* fail ITEM... / restore (ITEM... | --all): ReportFailure. */
static int failure_build(struct remote *r, union remote_body *b, int argc, char **argv)
{
	Ofc__V1__ReportFailure *rf = &b->report_failure;
	bool restore = r->row == &restore_cmd;

	if (argc == 0 && !r->all)
		return cli_usage_error(r->cmd, restore ? "missing LINK, PORT or HOST (or --all)"
						       : "missing LINK, PORT or HOST");
	rf->n_items = (size_t)argc;
	rf->items = argv;
	rf->has_restore = rf->restore = restore;
	rf->has_clear = rf->clear = r->all;
	return 0;
}

static const struct remote_cmd fail_cmd = {
    .cmd = {"fail", "LINK|PORT|HOST...",
	    "tell the daemon links (U-V), ports (HOST:PORT) or hosts failed; it re-plans", NULL},
    .kind = API_REPORT_FAILURE,
    .opts = {plain_rows,
	     "Tells ofcd that links, ports or hosts failed: U-V is the link between hosts U and "
	     "V\n(both directions), HOST:PORT a host's NIC port (both fibres), HOST a whole host\n"
	     "(it takes no part: the others run the collective among themselves). ofcd\n"
	     "re-plans the schedule on the surviving graph, announces it to watchers and\n"
	     "answers GetSchedule with it until they are restored; the set survives a "
	     "restart.\nPrints the re-planned schedule's figures; exit 1 when none survives.\n"},
    .timeout = 60,
    .operands = OPERANDS_ANY,
    .build = failure_build,
};

static const struct opt restore_rows[] = {
    {"LINK|PORT|HOST...", .flags = OPT_OPERAND | OPT_REQUIRED, .alt = 1},
    {"all", NULL, REMOTE_O(all), NULL, "every link, port and host reported failed", .alt = 1},
    REMOTE_ROWS_END("the answer as JSON (docs/json.md)"),
};

static const struct remote_cmd restore_cmd = {
    .cmd = {"restore", "", "tell the daemon failed links, ports or hosts work again", NULL},
    .kind = API_REPORT_FAILURE,
    .opts = {restore_rows,
	     "Tells ofcd that failed links, ports or hosts work again (--all: every one "
	     "reported).\nofcd re-plans the schedule, as for a failure; with none left it is "
	     "the healthy one.\n"},
    .timeout = 60,
    .operands = OPERANDS_ANY,
    .build = failure_build,
};

/* drain / undrain (SWITCH|SWITCH:PORT)...: Drain. */
static const struct remote_cmd undrain_cmd;

static int drain_build(struct remote *r, union remote_body *b, int argc, char **argv)
{
	Ofc__V1__Drain *dr = &b->drain;

	if (argc == 0)
		return cli_usage_error(r->cmd, "missing SWITCH or SWITCH:PORT");
	dr->n_items = (size_t)argc;
	dr->items = argv;
	dr->has_undrain = dr->undrain = r->row == &undrain_cmd;
	if (r->ask.has_grace) {
		dr->has_grace_ms = 1;
		dr->grace_ms = (uint32_t)(r->ask.grace_s * 1000 + 0.5);
	}
	return 0;
}

static const struct opt drain_rows[] = {
    GRACE_ROW("the wait between the schedule without the ports and the circuits' removal, "
	      "so running jobs take it (default 3s, at most 600s)",
	      NULL),
    {"force", remote_row_flag, REMOTE_B(drain, force), NULL,
     "drain even when it cuts hosts off the fabric"},
    REMOTE_ROWS_END("the answer as JSON (docs/json.md)"),
};

static const struct remote_cmd drain_cmd = {
    .cmd = {"drain", "SWITCH|SWITCH:PORT...",
	    "take switch ports out of service for planned work, jobs moved off them first", NULL},
    .kind = API_DRAIN,
    .opts = {drain_rows,
	     "Takes a switch (SWITCH: its every port cabled to a host) or some of its ports\n"
	     "(SWITCH:PORT) out of service. ofcd plans the fabric without the host ports\n"
	     "cabled to them, as for a failure, publishes that schedule first, waits --grace\n"
	     "so running jobs take it, then removes the circuits. The ports are drained, not\n"
	     "failed; `ofc status` says since when and by whom; the set survives a restart.\n"
	     "A drain that would cut hosts off the fabric is refused with their names;\n"
	     "--force drains anyway. `ofc undrain` puts them back.\n"},
    .timeout = 660,
    .operands = OPERANDS_ANY,
    .build = drain_build,
};

static const struct remote_cmd undrain_cmd = {
    .cmd = {"undrain", "SWITCH|SWITCH:PORT...", "put drained switch ports back in service", NULL},
    .kind = API_DRAIN,
    .opts = {plain_rows,
	     "Puts drained switch ports back (SWITCH: every drained port of the switch):\n"
	     "ofcd sets their circuits again, verified on the device, then publishes the\n"
	     "schedule that uses them.\n"},
    .timeout = 120,
    .operands = OPERANDS_ANY,
    .build = drain_build,
};

/* ---- plan ----------------------------------------------------------------------- */

/* A string a message may lack (a tenant's view leaves fields out). */
#define OR_DASH(p) ((p) ? (p) : "-")

/* The ways as the text of `ofc plan FILE --workload config` ends: each
 * way's iteration, its phases' topologies, then the choice and why. */
static void print_plan(const Ofc__V1__Plan *p)
{
	for (size_t k = 0; k < p->n_ways; k++) {
		const Ofc__V1__PlanWay *w = p->ways[k];
		char it[32], first[32];

		if (!w->have) {
			printf("%-10s (none: %s)\n", w->kind, OR_DASH(w->why_not));
			continue;
		}
		fmt_duration_long(it, sizeof(it), w->iteration_us * 1e-6);
		fmt_duration_long(first, sizeof(first), w->first_switch_us * 1e-6);
		printf("%-10s %s an iteration (the first: %s of switching before it)\n", w->kind,
		       it, first);
		for (size_t i = 0; i < w->n_phases; i++) {
			char t[32];

			fmt_duration_long(t, sizeof(t), w->phases[i]->time_us * 1e-6);
			printf("  %-12s %-40.40s %10s\n", w->phases[i]->name,
			       w->phases[i]->topology, t);
		}
	}
	printf("\n%s\n", OR_DASH(p->why));
}

static int plan_print(struct remote *r, const Ofc__V1__Response *resp)
{
	if (r->json)
		remote_print_json(stdout, &resp->plan->base);
	else
		print_plan(resp->plan);
	return 0;
}

static const struct opt plan_rows[] = {
    REMOTE_ROWS_END("the ofc.v1.Plan as JSON, as 'ofc plan FILE --workload config --json' "
		    "prints it (docs/json.md)"),
};

static const struct remote_cmd plan_cmd = {
    .cmd = {"plan", "", "the daemon's plan for its config's workload", NULL},
    .kind = API_GET_PLAN,
    .opts = {plan_rows, "Asks ofcd to plan its running config's workload, as 'ofc plan FILE "
			"--workload\nconfig' does: every way to run an iteration, the choice "
			"and why.\n"},
    .timeout = 300, /* every phase priced on every candidate */
    .extra = " (the daemon plans its config's workload)",
    .answer = OFC__V1__RESPONSE__BODY_PLAN,
    .print = plan_print,
};

/* ---- dispatch ------------------------------------------------------------------------------- */

/* In the order `ofc --help` and the refusal below list them. */
/* clang-format off */
static const struct remote_cmd *const remote_cmds[] = {
    &status_cmd,
    &wiring_cmd,
    &apply_cmd,
    &reconfigure_cmd,
    &release_cmd,
    &remote_adopt_cmd,
    &remote_schedule_cmd,
    &plan_cmd,
    &remote_watch_cmd,
    &cancel_cmd,
    &fail_cmd,
    &restore_cmd,
    &drain_cmd,
    &undrain_cmd,
};
/* clang-format on */

/* Every table of this file's commands, for test_cli_rows. */
const struct cli_table remote_cli_tables[8] = {
    {"--socket PATH status", status_rows, sizeof(struct remote)},
    {"--socket PATH wiring", wiring_rows, sizeof(struct remote)},
    {"--socket PATH apply", apply_rows, sizeof(struct remote)},
    {"--socket PATH reconfigure", reconfigure_rows, sizeof(struct remote)},
    {"--socket PATH release", plain_rows, sizeof(struct remote)},
    {"--socket PATH restore", restore_rows, sizeof(struct remote)},
    {"--socket PATH drain", drain_rows, sizeof(struct remote)},
    {"--socket PATH plan", plan_rows, sizeof(struct remote)},
};

size_t remote_rows(const struct remote_cmd *const **rows)
{
	*rows = remote_cmds;
	return ARRAY_SIZE(remote_cmds);
}

static const struct remote_cmd *remote_find(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(remote_cmds); i++)
		if (strcmp(name, remote_cmds[i]->cmd.name) == 0)
			return remote_cmds[i];
	return NULL;
}

bool remote_command(const char *name)
{
	if (strcmp(name, "cluster") == 0 || strcmp(name, "metrics") == 0)
		return true;
	/* `ofc plan FILE` plans locally whatever OFC_SOCKET says: only
	 * --socket or --server asks ofcd for its plan; `ofc adopt FILE` the
	 * same */
	if (strcmp(name, "plan") == 0 || strcmp(name, "adopt") == 0)
		return false;
	return remote_find(name) != NULL;
}

int remote_main(struct cli_targets *t, int argc, char **argv)
{
	struct remote r = {.t = t};
	struct ofc_error err = {0};
	struct cli_cmd c;
	char name[64];

	if (argc < 1) {
		fprintf(stderr, "ofc: missing a command after %s %s\nTry 'ofc --help'.\n",
			t->opt ? t->opt : "--socket", t->n ? t->addr[0] : "");
		return 2;
	}
	if (cli_targets_check(t, &err) < 0) {
		fprintf(stderr, "ofc: %s\nTry 'ofc --help'.\n", err.msg);
		return 2;
	}
	/* The HTTPS thread writes to a socket the command may have closed. */
	if (t->https)
		signal(SIGPIPE, SIG_IGN);
	t->verbose = true;
	if (strcmp(argv[0], "cluster") == 0)
		return cluster_main(t, argc, argv);
	if (strcmp(argv[0], "metrics") == 0)
		return metrics_main(t, argc, argv);
	if (strcmp(argv[0], "testbed") == 0) {
		/* `testbed up|run|check|down|mpirun`: the action is the command's second word */
		if (!(r.row = remote_testbed_row(argc > 1 ? argv[1] : NULL)))
			return remote_testbed_refuse(argc > 1 ? argv[1] : NULL);
		argc--;
		argv++;
	} else if (!(r.row = remote_find(argv[0]))) {
		fprintf(
		    stderr,
		    "ofc: '%s' does not talk to ofcd (status, wiring, apply, reconfigure, release, "
		    "schedule, plan, watch, cancel, fail, restore, testbed "
		    "up|run|check|down|mpirun, "
		    "cluster "
		    "and metrics do)\nTry 'ofc --help'.\n",
		    argv[0]);
		return 2;
	}
	/* usage errors name the option given: --server, not --socket */
	c = r.row->cmd;
	snprintf(name, sizeof(name), "%s %s", t->https ? "--server URL" : "--socket PATH",
		 r.row->cmd.name);
	c.name = name;
	r.cmd = &c;
	optind = 0;
	return remote_run(&r, argc, argv);
}

/* reconfigure, watch, cancel, fail and restore with neither --socket nor
 * OFC_SOCKET: the daemon at the socket its unit listens on, which the
 * Python client defaults to as well, said on stderr when it connects. */
int cmd_daemon_only(const struct cli_cmd *cmd, int argc, char **argv)
{
	struct cli_targets t = {0};
	struct ofc_error err = {0};

	(void)cmd;
	if (cli_targets_from_env(&t, &err) < 0) {
		fprintf(stderr, "ofc: %s\n", err.msg);
		return 2;
	}
	return remote_main(&t, argc, argv);
}
