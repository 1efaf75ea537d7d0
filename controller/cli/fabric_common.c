/* What the commands that talk to a fabric's devices share (plan, apply,
 * try, confirm, status, testbed): FILE, --device, --state-dir and --json,
 * opening the fabric and its devices, progress events on a terminal, and
 * the JSON of a device and its state. */
#include "controller/cli/internal.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_OVERRIDES ARRAY_SIZE(((struct fabric_cmd *)0)->overrides)

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

/* ---- the fabric commands' rows (offsets into struct fabric_cmd) ---------------------- */

#define FC(row, base) ((struct fabric_cmd *)((char *)(base) + (row)->off))
#define O(f)	      offsetof(struct fabric_cmd, f)

static int p_nonempty(const struct opt *row, const char *arg, void *base, struct ofc_error *err)
{
	if (!*arg)
		return ofc_error_set(err, OFC_E_USAGE, "--%s needs %s", row->name, row->expect);
	return opt_str(row, arg, base, err);
}

static int p_relabel_budget(const struct opt *row, const char *arg, void *base,
			    struct ofc_error *err)
{
	struct fabric_cmd *fc = base;

	if (cli_row_duration(row, arg, base, err) < 0)
		return -1;
	fc->relabel = true;
	return 0;
}

static int p_max_moves(const struct opt *row, const char *arg, void *base, struct ofc_error *err)
{
	struct fabric_cmd *fc = base;

	if (parse_u32(arg, &fc->max_moves) < 0)
		return ofc_error_set(err, OFC_E_USAGE, "bad --%s '%s': expected a count", row->name,
				     arg);
	fc->max_moves_set = true;
	return 0;
}

/* A number in min..max (strtod's), or "bad --NAME 'VALUE': " and the row's expect. */
static int number(const struct opt *row, const char *arg, double *out, struct ofc_error *err)
{
	char *end;

	errno = 0;
	*out = strtod(arg, &end);
	if (errno || end == arg || *end || !(*out >= row->min) || *out > row->max)
		return ofc_error_set(err, OFC_E_USAGE, "bad --%s '%s': %s", row->name, arg,
				     row->expect);
	return 0;
}

static int p_horizon(const struct opt *row, const char *arg, void *base, struct ofc_error *err)
{
	struct fabric_cmd *fc = base;

	if (number(row, arg, &fc->horizon, err) < 0)
		return -1;
	fc->horizon_set = true;
	return 0;
}

static int p_alternatives(const struct opt *row, const char *arg, void *base, struct ofc_error *err)
{
	if (cli_row_u32(row, arg, base, err) < 0)
		return -1;
	((struct fabric_cmd *)base)->alternatives_set = true;
	return 0;
}

static int p_overhead(const struct opt *row, const char *arg, void *base, struct ofc_error *err)
{
	struct fabric_cmd *fc = base;

	if (cli_parse_overhead(arg, &fc->overhead, err) < 0)
		return -1;
	(void)row;
	fc->overhead_set = true;
	return 0;
}

static int p_max_loss(const struct opt *row, const char *arg, void *base, struct ofc_error *err)
{
	if (cli_row_percent(row, arg, base, err) < 0)
		return -1;
	((struct fabric_cmd *)base)->max_loss_set = true;
	return 0;
}

static const struct opt common_rows[] = {
    {"device", cli_row_device, 0, "NAME=HOST:PORT", "talk to device NAME at another address",
     .flags = OPT_REPEAT},
    {"state-dir", p_nonempty, O(state_dir_opt), "DIR",
     "where state and journal live (default $OFC_STATE_DIR, else " OFC_STATE_DIR_DEFAULT ")",
     .expect = "a directory"},
    {"json", NULL, O(json), NULL, "machine-readable output", .alt = CLI_ALT_JSON},
    {NULL},
};

const struct opt fabric_cmd_relabel_rows[] = {
    {"relabel", NULL, O(relabel), NULL,
     "the topology is wanted up to the numbering of its nodes: choose which host plays which "
     "node so that the most cross-connects in place stay (a search; see docs/relabel.md)"},
    {"relabel-budget", p_relabel_budget, O(relabel_budget), "S",
     "time for that search (default 2 s)", 1e-9, 3600, "must be more than 0 and at most an hour"},
    {"no-relabel", NULL, O(no_relabel), NULL,
     "the config's numbering even when the last commit was relabelled (which plan, apply and "
     "try keep)"},
    {"max-moves", p_max_moves, O(max_moves), "N",
     "refuse a plan of more than N operations (a robotic patch panel moves one circuit at a "
     "time): nothing is changed, the error gives the count and switching time (with "
     "--horizon: weigh only targets within N)"},
    {"partition", p_nonempty, O(partition), "NAME",
     "this partition alone (the config's partitions:): its topology on its ports; every other "
     "circuit stays",
     .expect = "a partition's name"},
    {NULL},
};

const struct opt fabric_cmd_plan_rows[] = {
    {"horizon", p_horizon, O(horizon), "RUNS",
     "weigh moves against collective time: plan the target with the least switching time + "
     "RUNS x the predicted time of the config's collectives, among the config's topology "
     "(renumbered unless --no-relabel), the circuits in place and the finder's alternatives "
     "(with --partition: the partition's); with --max-moves, only targets within it",
     0, 1e12, "expected how many times the collectives run (a number, 0 or more)"},
    {"alternatives", p_alternatives, O(alternatives), "K",
     "how many of the finder's topologies to weigh too (default 3, 0 for none)", 0, 16},
    {"workload", p_nonempty, O(workload), "W",
     "plan for a training job instead (docs/workload.md): W is a workload file, or 'config' "
     "for the config's own workload section; its phases are priced on the config's topology, "
     "the circuits in place, the finder's, unions of per-group topologies and topologies "
     "built for the traffic, and the best static topology, a topology per phase (switching "
     "paid, overlapped where the circuits are idle), the circuits in place and the choice "
     "among them all are printed; nothing is changed. The devices are not read, nor the "
     "state directory, unless --in-place",
     .expect = "a file (or 'config')"},
    {"in-place", NULL, O(in_place), NULL,
     "with --workload: read every device and weigh the circuits they hold too (the way 'in "
     "place', and the switching from them to the first phase)",
     .under = "workload"},
    {"plot", opt_str, O(plot), "FILE",
     "with --workload: an SVG of the iteration time against the switching time and the "
     "message size",
     .under = "workload"},
    {"time-limit", cli_row_duration, O(mcf_time_limit), "T",
     "with --workload: each MCF's time limit, and each traffic-built topology's (default 20s)",
     1e-9, 1e9, "must be above 0", .under = "workload"},
    {"switch-overhead", p_overhead, O(overhead), "T,C",
     "with --workload: a switching's cost beyond the switches' own: T a transaction, C a "
     "changed circuit (what ofc testbed run --workload measures; default 0,0)",
     .under = "workload"},
    {"topology", p_nonempty, O(stage_topology), "T",
     "with --max-loss: the stages of a change from the config's topology to T, each one "
     "transaction, none taking more than P% of the fabric's bandwidth (as ofcd's reconfigure "
     "--max-loss runs them): the loss at each and each stage's schedule; no device or state "
     "is read",
     .expect = "a topology (SPEC)"},
    {"max-loss", p_max_loss, O(max_loss), "P%", "with --topology: the most a stage may take away",
     .under = "topology", .flags = OPT_REQUIRED},
    {NULL},
};

const struct opt fabric_cmd_dry_run_rows[] = {
    {"dry-run", NULL, O(dry_run), NULL, "only plan: print what would change"},
    {"max-loss", opt_str, O(daemon_max_loss), "P%",
     "ofcd's alone (with --socket PATH): the config's topology in stages first, none taking "
     "more than P% of the bandwidth; refused here, where the change is one transaction"},
    {"grace", opt_str, O(daemon_grace), "DUR", "with --max-loss (ofcd's alone): each stage's wait",
     .under = "max-loss"},
    {NULL},
};

const struct opt fabric_cmd_trial_rows[] = {
    {"timeout", cli_row_duration, O(timeout), "S",
     "how long to wait for 'ofc confirm' (default 60s)", 1e-9, 86400,
     "must be more than 0 and at most a day"},
    {"max-loss", p_max_loss, O(max_loss), "P%",
     "instead of a trial: the stages a change from the committed topology (the state "
     "directory's record) to FILE's would take, none taking more than P% of the bandwidth, "
     "around the partitions held there: the loss at each and the circuits moved, as 'ofc "
     "plan --max-loss' shows them; nothing is applied (ofcd runs the stages: --socket PATH "
     "apply FILE --max-loss P%)"},
    {NULL},
};

#undef O

const struct cli_table fabric_cmd_tables[] = {
    {"fabric", common_rows, sizeof(struct fabric_cmd)},
    {"fabric relabel", fabric_cmd_relabel_rows, sizeof(struct fabric_cmd)},
    {"fabric plan", fabric_cmd_plan_rows, sizeof(struct fabric_cmd)},
    {"fabric trial", fabric_cmd_trial_rows, sizeof(struct fabric_cmd)},
};

/* An operand row standing alone ("-- PROGRAM [ARGS...]"): written after the
 * common options, as the words after "--" must come last. */
static bool trailing_operand(const struct opt *r)
{
	return (r->flags & OPT_OPERAND) && !r->alt && !r->under;
}

int fabric_cmd_parse(struct fabric_cmd *fc, const struct cli_cmd *cmd, int argc, char **argv,
		     const struct opt *const *groups, const char *help, bool file_optional)
{
	struct opt rows[64];
	struct cli_opts o = {rows, help, NULL};
	size_t n = 0;
	int first, rc;

	memset(fc, 0, sizeof(*fc));
	fc->cmd = cmd;
	for (const struct opt *const *g = groups; g && *g; g++)
		for (const struct opt *r = *g; r->name && n < ARRAY_SIZE(rows) - 8; r++)
			if (!trailing_operand(r))
				rows[n++] = *r;
	for (const struct opt *r = common_rows; r->name; r++)
		rows[n++] = *r;
	for (const struct opt *const *g = groups; g && *g; g++)
		for (const struct opt *r = *g; r->name && n < ARRAY_SIZE(rows) - 2; r++)
			if (trailing_operand(r))
				rows[n++] = *r;
	rows[n++] = (struct opt)CLI_OPT_HELP;
	rows[n] = (struct opt){0};
	if (!cli_parse(cmd, &o, argc, argv, fc, &first, &rc))
		return rc ? rc : -1;
	if (first < argc - 1)
		return cli_usage_error(cmd, "too many arguments");
	if (first == argc - 1)
		fc->file = argv[first];
	else if (!file_optional)
		return cli_usage_error(cmd, "missing FILE");
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
	    .relabel_ops = &relabel_direct,
	    .no_relabel = fc->no_relabel,
	    .keep_numbering = true,
	    .choose = fc->horizon_set ? ctl_choose : NULL,
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
