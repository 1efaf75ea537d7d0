/* What the commands that talk to a fabric's devices share (plan, apply,
 * try, confirm, status, testbed): FILE, --device, --state-dir and --json,
 * opening the fabric and its devices, progress events on a terminal, and
 * the JSON of a device and its state. */
#include "controller/cli/internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_OVERRIDES ARRAY_SIZE(((struct fabric_cmd *)0)->overrides)

const char fabric_cmd_options[] =
    "  --device NAME=HOST:PORT  talk to device NAME at another address (repeatable)\n"
    "  --state-dir DIR          where state and journal live (default $OFC_STATE_DIR,\n"
    "                           else " OFC_STATE_DIR_DEFAULT ")\n"
    "  --json                   machine-readable output\n";

int cli_row_device(const struct opt *row, const char *arg, void *base, struct ofc_error *err)
{
	struct fabric_cmd *fc = (struct fabric_cmd *)((char *)base + row->off);

	if (!strchr(arg, '='))
		return ofc_error_set(err, OFC_E_USAGE, "--%s '%s': expected NAME=HOST:PORT",
				     row->name, arg);
	if (fc->noverrides == MAX_OVERRIDES)
		return ofc_error_set(err, OFC_E_USAGE, "too many --%s options", row->name);
	fc->overrides[fc->noverrides++] = arg;
	return 0;
}

int fabric_cmd_parse(struct fabric_cmd *fc, const struct cli_cmd *cmd, int argc, char **argv,
		     const struct option *extra,
		     int (*on_extra)(struct fabric_cmd *, int, const char *), const char *help,
		     bool file_optional)
{
	struct option opts[24];
	size_t n = 0;
	int c;

	memset(fc, 0, sizeof(*fc));
	fc->cmd = cmd;
	opts[n++] = (struct option){"device", required_argument, NULL, 'D'};
	opts[n++] = (struct option){"state-dir", required_argument, NULL, 'S'};
	opts[n++] = (struct option){"json", no_argument, NULL, 'j'};
	opts[n++] = (struct option){"help", no_argument, NULL, 'h'};
	for (const struct option *o = extra; o && o->name && n < ARRAY_SIZE(opts) - 1; o++)
		opts[n++] = *o;
	opts[n] = (struct option){0};
	while ((c = cli_getopt(cmd, argc, argv, "h", opts)) != -1) {
		switch (c) {
		case -2:
			return 2;
		case 'D':
			if (!strchr(optarg, '='))
				return cli_usage_error(
				    cmd, "--device '%s': expected NAME=HOST:PORT", optarg);
			if (fc->noverrides == MAX_OVERRIDES)
				return cli_usage_error(cmd, "too many --device options");
			fc->overrides[fc->noverrides++] = optarg;
			break;
		case 'S':
			if (!*optarg)
				return cli_usage_error(cmd, "--state-dir needs a directory");
			fc->state_dir_opt = optarg;
			break;
		case 'j':
			fc->json = true;
			break;
		case 'h': {
			bool relabel = false, choose = false, job = false, stages = false;

			for (const struct option *o = extra; o && o->name; o++) {
				relabel |= o->val == 'R';
				choose |= o->val == 'H';
				job |= o->val == 'w';
				/* (by name: testbed run's --lowering is an 'L' too) */
				stages |= strcmp(o->name, "max-loss") == 0;
			}
			char *text = xasprintf("%s%s%s%s%s%s", help, fabric_cmd_options,
					       relabel ? fabric_cmd_relabel_help : "",
					       choose ? fabric_cmd_choose_help : "",
					       job ? fabric_cmd_workload_help : "",
					       stages ? fabric_cmd_stages_help : "");

			cli_help(cmd, text);
			free(text);
			return -1;
		}
		default:
			if (!on_extra || on_extra(fc, c, optarg) != 0)
				return 2;
		}
	}
	if (optind < argc - 1) {
		return cli_usage_error(cmd, "too many arguments");
	}
	if (optind == argc - 1)
		fc->file = argv[optind];
	else if (!file_optional) {
		return cli_usage_error(cmd, "missing FILE");
	}
	fc->state_dir = ctl_state_dir(fc->state_dir_opt);
	fc->progress = isatty(STDERR_FILENO);
	return 0;
}

/* Progress goes to stderr when it is a terminal (people watch a long apply;
 * scripts get the outcome and the error alone). A repaired transaction is
 * always reported: it changed devices the user did not ask to change now. */
static void print_event(void *ctx, const struct ctl_event *ev)
{
	struct fabric_cmd *fc = ctx;
	const char *dev = ev->device ? ev->device : "";
	const char *sep = ev->device ? ": " : "";

	if (ev->kind == CTL_EV_RECOVERED) {
		fprintf(stderr, "ofc: repaired %s\n", ev->message);
		return;
	}
	if (!fc->progress)
		return;
	switch (ev->kind) {
	case CTL_EV_TXN_STARTED:
		fprintf(stderr, "transaction %llu: %s\n", (unsigned long long)ev->txn, ev->message);
		break;
	case CTL_EV_DEVICE_APPLIED:
		fprintf(stderr, "  %s%s%s\n", dev, sep, ev->message);
		break;
	case CTL_EV_TXN_ROLLING_BACK:
		fprintf(stderr, "transaction %llu failed on %s: rolling back\n",
			(unsigned long long)ev->txn, dev);
		break;
	case CTL_EV_DEVICE_LOST:
		fprintf(stderr, "  %s: lost: %s\n", dev, ev->message);
		break;
	case CTL_EV_DEVICE_BACK:
		fprintf(stderr, "  %s: back\n", dev);
		break;
	default:
		break;
	}
}

int fabric_cmd_open(struct fabric_cmd *fc, bool with_testbed, struct ofc_error *err)
{
	char who[32];
	struct ctl_opts o = {
	    .state_dir = fc->state_dir,
	    .overrides = (const char *const *)fc->overrides,
	    .noverrides = fc->noverrides,
	    .on_event = print_event,
	    .ctx = fc,
	    .no_testbed = !with_testbed,
	    .no_mkdir = fc->reads_only,
	    /* (the audit's: who ran the command, as ofcd names a socket's client) */
	    .principal = who,
	    .daemon_ask = fc->daemon_ask,
	};

	snprintf(who, sizeof(who), "uid:%u", (unsigned)getuid());
	if (fabric_open(fc->file, &fc->fabric, err) < 0)
		return -1;
	return ctl_open(fc->fabric, &o, &fc->ctl, err);
}

int fabric_cmd_repair(struct fabric_cmd *fc, struct ofc_error *err)
{
	bool did;

	if (ctl_lock(fc->ctl, err) < 0)
		return -1;
	return ctl_recover(fc->ctl, &did, err);
}

void fabric_cmd_free(struct fabric_cmd *fc)
{
	reconfigure_result_free(&fc->result);
	ctl_close(fc->ctl);
	fabric_free(fc->fabric);
	free(fc->state_dir);
	memset(fc, 0, sizeof(*fc));
}

int fabric_cmd_fail(struct fabric_cmd *fc, const struct ofc_error *err)
{
	int rc =
	    err->code == OFC_E_USAGE ? cli_usage_error(fc->cmd, "%s", err->msg) : cli_fail(err);

	fabric_cmd_free(fc);
	return rc;
}

int fabric_cmd_extra(struct fabric_cmd *fc, int c, const char *arg)
{
	if (c == 'n') {
		fc->dry_run = true;
		return 0;
	}
	if (c == 'x') {
		char *end;

		errno = 0;
		fc->rate_scale = strtod(arg, &end);
		if (errno || end == arg || *end || !(fc->rate_scale > 0) || fc->rate_scale > 1)
			return cli_usage_error(fc->cmd,
					       "--rate-scale must be a number in (0, 1], "
					       "got '%s'",
					       arg);
		return 0;
	}
	if (c == 'R') {
		fc->relabel = true;
		return 0;
	}
	if (c == 'B') {
		if (cli_opt_duration(fc->cmd, "relabel-budget", arg, &fc->relabel_budget))
			return 2;
		if (fc->relabel_budget <= 0 || fc->relabel_budget > 3600)
			return cli_usage_error(fc->cmd,
					       "bad --relabel-budget '%s': must be more than 0 "
					       "and at most an hour",
					       arg);
		fc->relabel = true;
		return 0;
	}
	if (c == 'U') {
		fc->no_relabel = true;
		return 0;
	}
	if (c == 'P') {
		if (!*arg)
			return cli_usage_error(fc->cmd, "--partition needs a partition's name");
		fc->partition = arg;
		return 0;
	}
	if (c == 'N') {
		if (parse_u32(arg, &fc->max_moves) < 0)
			return cli_usage_error(fc->cmd, "bad --max-moves '%s': expected a count",
					       arg);
		fc->max_moves_set = true;
		return 0;
	}
	if (c == 'H') {
		char *end;

		errno = 0;
		fc->horizon = strtod(arg, &end);
		if (errno || end == arg || *end || !(fc->horizon >= 0) || fc->horizon > 1e12)
			return cli_usage_error(fc->cmd,
					       "bad --horizon '%s': expected how many times the "
					       "collectives run (a number, 0 or more)",
					       arg);
		fc->horizon_set = true;
		return 0;
	}
	if (c == 'A') {
		if (cli_opt_u32(fc->cmd, "alternatives", arg, 0, 16, NULL, &fc->alternatives))
			return 2;
		fc->alternatives_set = true;
		return 0;
	}
	if (c == 'w') {
		if (!*arg)
			return cli_usage_error(fc->cmd, "--workload needs a file (or 'config')");
		fc->workload = arg;
		return 0;
	}
	if (c == 'o') {
		fc->plot = arg;
		return 0;
	}
	if (c == 'I') {
		fc->in_place = true;
		return 0;
	}
	if (c == 'l') {
		if (cli_opt_duration(fc->cmd, "time-limit", arg, &fc->mcf_time_limit))
			return 2;
		if (!(fc->mcf_time_limit > 0))
			return cli_usage_error(fc->cmd, "--time-limit must be above 0");
		return 0;
	}
	if (c == 'O') {
		if (cli_opt_overhead(fc->cmd, arg, &fc->overhead))
			return 2;
		fc->overhead_set = true;
		return 0;
	}
	if (c == 'T') {
		if (!*arg)
			return cli_usage_error(fc->cmd, "--topology needs a topology (SPEC)");
		fc->stage_topology = arg;
		return 0;
	}
	if (c == 'L') {
		char *end;

		errno = 0;
		fc->max_loss = strtod(arg, &end);
		if (errno || end == arg || (*end && strcmp(end, "%") != 0) ||
		    !(fc->max_loss > 0 && fc->max_loss < 100))
			return cli_usage_error(
			    fc->cmd,
			    "--max-loss '%s': a percentage above 0 and below 100 "
			    "(25 or 25%%), the share of the fabric's bandwidth a "
			    "stage may take away",
			    arg);
		fc->max_loss_set = true;
		return 0;
	}
	if (c == 't') {
		if (cli_opt_duration(fc->cmd, "timeout", arg, &fc->timeout))
			return 2;
		if (fc->timeout <= 0 || fc->timeout > 86400)
			return cli_usage_error(fc->cmd,
					       "bad --timeout '%s': must be more than 0 and at "
					       "most a day",
					       arg);
		return 0;
	}
	return 2;
}

const struct option fabric_cmd_relabel_options[] = {
    {"relabel", no_argument, NULL, 'R'},
    {"relabel-budget", required_argument, NULL, 'B'},
    {"max-moves", required_argument, NULL, 'N'},
    {"no-relabel", no_argument, NULL, 'U'},
    {"partition", required_argument, NULL, 'P'},
    {"horizon", required_argument, NULL, 'H'},
    {"alternatives", required_argument, NULL, 'A'},
    {0},
};

const char fabric_cmd_workload_help[] =
    "  --workload W             plan for a training job instead (docs/workload.md):\n"
    "                           W is a workload file, or 'config' for the config's\n"
    "                           own workload section; its phases are priced on the\n"
    "                           config's topology, the circuits in place, the\n"
    "                           finder's, unions of per-group topologies and\n"
    "                           topologies built for the traffic, and the best\n"
    "                           static topology, a topology per phase (switching\n"
    "                           paid, overlapped where the circuits are idle), the\n"
    "                           circuits in place and the choice among them all are\n"
    "                           printed; nothing is changed. The devices are not\n"
    "                           read, nor the state directory, unless --in-place\n"
    "  --in-place               with --workload: read every device and weigh the\n"
    "                           circuits they hold too (the way 'in place', and\n"
    "                           the switching from them to the first phase)\n"
    "  --plot FILE              with --workload: an SVG of the iteration time\n"
    "                           against the switching time and the message size\n"
    "  --time-limit T           with --workload: each MCF's time limit, and each\n"
    "                           traffic-built topology's (default 20s)\n"
    "  --switch-overhead T,C    with --workload: a switching's cost beyond the\n"
    "                           switches' own: T a transaction, C a changed circuit\n"
    "                           (what ofc testbed run --workload measures; default\n"
    "                           0,0)\n";

const struct option fabric_cmd_plan_options[] = {
    {"relabel", no_argument, NULL, 'R'},
    {"relabel-budget", required_argument, NULL, 'B'},
    {"max-moves", required_argument, NULL, 'N'},
    {"no-relabel", no_argument, NULL, 'U'},
    {"partition", required_argument, NULL, 'P'},
    {"horizon", required_argument, NULL, 'H'},
    {"alternatives", required_argument, NULL, 'A'},
    {"workload", required_argument, NULL, 'w'},
    {"plot", required_argument, NULL, 'o'},
    {"time-limit", required_argument, NULL, 'l'},
    {"switch-overhead", required_argument, NULL, 'O'},
    {"in-place", no_argument, NULL, 'I'},
    {"topology", required_argument, NULL, 'T'},
    {"max-loss", required_argument, NULL, 'L'},
    {0},
};

const char fabric_cmd_stages_help[] =
    "  --topology T --max-loss P%\n"
    "                           the stages of a change from the config's topology\n"
    "                           to T, each one transaction, none taking more than P%\n"
    "                           of the fabric's bandwidth (as ofcd's reconfigure\n"
    "                           --max-loss runs them): the loss at each and each\n"
    "                           stage's schedule; no device or state is read\n";

const char fabric_cmd_choose_help[] =
    "  --horizon RUNS           weigh moves against collective time: plan the target\n"
    "                           with the least switching time + RUNS x the predicted\n"
    "                           time of the config's collectives, among the config's\n"
    "                           topology (renumbered unless --no-relabel), the circuits\n"
    "                           in place and the finder's alternatives (with\n"
    "                           --partition: the partition's); with --max-moves,\n"
    "                           only targets within it\n"
    "  --alternatives K         how many of the finder's topologies to weigh too\n"
    "                           (default 3, 0 for none)\n";

const char fabric_cmd_relabel_help[] =
    "  --relabel                the topology is wanted up to the numbering of its nodes:\n"
    "                           choose which host plays which node so that the most\n"
    "                           cross-connects in place stay (a search; see docs/relabel.md)\n"
    "  --relabel-budget S       time for that search (default 2 s)\n"
    "  --no-relabel             the config's numbering even when the last commit\n"
    "                           was relabelled (which plan, apply and try keep)\n"
    "  --max-moves N            refuse a plan of more than N operations (a robotic\n"
    "                           patch panel moves one circuit at a time): nothing is\n"
    "                           changed, the error gives the count and switching time\n"
    "                           (with --horizon: weigh only targets within N)\n"
    "  --partition NAME         this partition alone (the config's partitions:): its\n"
    "                           topology on its ports; every other circuit stays\n";

/* What --relabel saved, on stderr. */
static void relabel_report(const struct reconfigure_result *res)
{
	const struct fabric_relabel *r = &res->relabel;
	uint32_t ops = ctl_plan_size(res->planned);
	const char *why = "";

	if (!r->complete)
		why = r->deadline  ? " (the budget ran out: the best numbering found so far)"
		      : r->changed ? " (best found within the budget)"
				   : " (no numbering found keeps more than the config's)";
	fprintf(stderr,
		"relabelled: %u operation%s instead of %u; %llu of %llu cross-connects stay "
		"in place (%llu with the config's numbering), %u node%s renumbered%s\n",
		ops, ops == 1 ? "" : "s", res->before, (unsigned long long)r->kept,
		(unsigned long long)r->arcs, (unsigned long long)r->kept_identity, r->moved_nodes,
		r->moved_nodes == 1 ? "" : "s", why);
}

/* What the reconfiguration tells as it goes, on stderr: the last commit's
 * numbering kept, and (text) the partition aimed at and what --relabel
 * saved. */
static void on_reconfigure(void *ctx, enum reconfigure_event ev, const struct reconfigure_result *r)
{
	const struct fabric_cmd *fc = ctx;
	const struct ctl *c = r->planned;

	if (ev == RECONF_EV_KEEP_NUMBERING) {
		fprintf(stderr,
			"ofc %s: the last commit (generation %llu) renumbered %s to "
			"keep circuits; keeping that numbering (--no-relabel for the "
			"config's)\n",
			fc->cmd->name, (unsigned long long)r->kept_generation,
			c->fabric->topology.spec);
		return;
	}
	if (ev != RECONF_EV_AIMED || fc->json || r->chose)
		return;
	if (r->partition) {
		const struct partition *p = r->partition;

		fprintf(stderr, "partition %s: topology %s on its %u member%s; %u operation%s\n",
			p->name, p->topology.spec, p->nmembers, p->nmembers == 1 ? "" : "s",
			ctl_plan_size(c), ctl_plan_size(c) == 1 ? "" : "s");
	}
	if (r->renumbered)
		relabel_report(r);
}

int fabric_cmd_reconfigure(struct fabric_cmd *fc, bool repair, bool dry_run, double trial_s,
			   struct ofc_error *err)
{
	struct reconfigure_req q = {
	    .ctl = fc->ctl,
	    .lock = repair,
	    .recover = repair,
	    .partition_name = fc->partition,
	    .relabel = fc->relabel,
	    .relabel_opts = {.budget_s = fc->relabel_budget > 0 ? fc->relabel_budget : 2},
	    .relabel_before = true,
	    .no_relabel = fc->no_relabel,
	    .keep_numbering = true,
	    .choose = fc->horizon_set,
	    .horizon = fc->horizon,
	    .alternatives = fc->alternatives,
	    .alternatives_set = fc->alternatives_set,
	    .max_moves = fc->max_moves,
	    .max_moves_set = fc->max_moves_set,
	    .dry_run = dry_run,
	    .trial_s = trial_s,
	    .on_event = on_reconfigure,
	    .ctx = fc,
	};

	return reconfigure_run(&q, &fc->result, err);
}
