/* `ofc`: the command table and what the commands share. */
#include "controller/cli/internal.h"

#include <stdlib.h>
#include <string.h>

#define OFC_VERSION "0.1.0"

static const struct cli_cmd commands[] = {
    {"validate", "FILE", "check a fabric config and its wiring", cmd_validate},
    {"show", "FILE [--json | --format text|json|pb] [-o OUT]",
     "print the validated fabric, its topology and circuits", cmd_show},
    {"topo", "SPEC [--json | --dot] [--ports] [--format text|json|dot|pb] [-o OUT]",
     "generate a topology: facts, edges, port permutations", cmd_topo},
    {"schedule",
     "(FILE | --topology SPEC) --collective C [--algo A] [--size M] [--alpha T] "
     "[--bandwidth B] [--chunks P] [--overlap] [--lowering L] [--variant V] [--hop-latency T] "
     "[--json] [--format text|json|pb -o OUT]",
     "plan a collective schedule, verify it and price it", cmd_schedule},
    {"finder",
     "--nodes N --degree D [--collective C] [--size M] [--alpha T] [--bandwidth B] [--json]",
     "the best direct-connect topologies for N hosts of D ports", cmd_finder},
    {"plan", "FILE [--device NAME=HOST:PORT]... [--state-dir DIR] [--json]",
     "read every device and show what would change to reach the config", cmd_plan},
    {"apply", "FILE [--device NAME=HOST:PORT]... [--state-dir DIR] [--dry-run] [--json]",
     "change the devices as one transaction: journal, apply, verify, or roll back", cmd_apply},
    {"try", "FILE [--timeout S] [--device NAME=HOST:PORT]... [--state-dir DIR] [--json]",
     "apply, then revert unless 'ofc confirm' arrives within S seconds", cmd_try},
    {"confirm", "[FILE] [--state-dir DIR] [--json]", "keep what a running 'ofc try' applied",
     cmd_confirm},
    {"status", "[FILE] [--device NAME=HOST:PORT]... [--state-dir DIR] [--json]",
     "recorded and live device state, and any unfinished transaction", cmd_status},
    {"testbed", "up|check|down FILE [--device NAME=HOST:PORT]... [--state-dir DIR] [--json]",
     "hosts as network namespaces, circuits as veth pairs, routes over netlink", cmd_testbed},
    {"optree",
     "--nodes N --wavelengths W [--fibres F] [--block-size B] [--algo optree|ring|ne|onestage|all] "
     "[--radices LIST] [--interfaces I] [--mrrs M] [--overlap] [--json] "
     "[--format text|json|pb -o OUT]",
     "all-gather on a WDM ring: OpTree's plan, its baselines, verified", cmd_optree},
    {"rwa",
     "--nodes N --wavelengths W [--fibres F] (--pattern all-to-all | --demands FILE) "
     "[--engine heuristic|ilp|lp] [--objective min-wavelengths|max-served] [--time-limit S] "
     "[--json] [--lightpaths]",
     "routing and wavelength assignment for demands on a WDM ring", cmd_rwa},
    {"reconfigure", "(--topology SPEC | --collective C --size M) [--dry-run] [--json]",
     "rewire the fabric through ofcd (with --socket PATH)", cmd_daemon_only},
    {"watch", "[--count N] [--json]", "print ofcd's events (with --socket PATH)", cmd_daemon_only},
    {"cancel", "TICKET", "cancel a mutation queued in ofcd (with --socket PATH)", cmd_daemon_only},
};

static void usage_all(FILE *out)
{
	fprintf(out, "usage: ofc COMMAND [ARGS]\n       ofc --socket PATH "
		     "status|apply|reconfigure|schedule|watch|cancel [ARGS]\n"
		     "       ofc --help | --version\n\ncommands:\n");
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		fprintf(out, "  %-11s %s\n", commands[i].name, commands[i].summary);
	fprintf(out, "\n'ofc COMMAND --help' shows a command's options. Exit status: 0 success, "
		     "1 runtime failure, 2 bad input or usage.\n");
}

int cli_usage_error(const struct cli_cmd *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "ofc %s: ", cmd->name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nusage: ofc %s %s\n", cmd->name, cmd->usage);
	return 2;
}

int cli_help(const struct cli_cmd *cmd, const char *details)
{
	printf("usage: ofc %s %s\n\n%s\n", cmd->name, cmd->usage, cmd->summary);
	if (details)
		printf("\n%s", details);
	return 0;
}

int cli_fail(const struct ofc_error *err)
{
	char buf[1024];

	ofc_error_str(err, buf, sizeof(buf));
	if (err->file[0] && err->line)
		fprintf(stderr, "%s\n", buf);
	else
		fprintf(stderr, "ofc: %s\n", buf);
	return ofc_error_exit_code(err) ? ofc_error_exit_code(err) : 1;
}

int cli_getopt(const struct cli_cmd *cmd, int argc, char **argv, const char *shortopts,
	       const struct option *longopts)
{
	int c;

	opterr = 0;
	c = getopt_long(argc, argv, shortopts, longopts, NULL);
	if (c == '?') {
		if (optopt)
			cli_usage_error(cmd, "unknown option '-%c' or missing argument", optopt);
		else
			cli_usage_error(cmd, "unknown option '%s'", argv[optind - 1]);
		return -2;
	}
	if (c == ':') {
		cli_usage_error(cmd, "option '%s' needs a value", argv[optind - 1]);
		return -2;
	}
	return c;
}

int cli_format(const struct cli_cmd *cmd, const char *s, unsigned allowed, enum out_format *out)
{
	static const struct {
		const char *name;
		enum out_format f;
	} fmts[] = {{"text", FMT_TEXT}, {"json", FMT_JSON}, {"dot", FMT_DOT}, {"pb", FMT_PB}};

	for (size_t i = 0; i < ARRAY_SIZE(fmts); i++)
		if (strcmp(s, fmts[i].name) == 0 && (allowed & fmts[i].f)) {
			*out = fmts[i].f;
			return 0;
		}
	return cli_usage_error(cmd, "unknown format '%s'", s);
}

int cli_output_open(struct cli_output *o, const char *path, struct ofc_error *err)
{
	memset(o, 0, sizeof(*o));
	if (atomic_open(&o->af, path ? path : "-", err) < 0)
		return -1;
	o->f = o->af.f;
	return 0;
}

int cli_output_commit(struct cli_output *o, struct ofc_error *err)
{
	o->f = NULL;
	return atomic_commit(&o->af, err);
}

void cli_output_abort(struct cli_output *o)
{
	o->f = NULL;
	if (o->af.tmp)
		atomic_abort(&o->af);
	else if (o->af.path)
		atomic_commit(&o->af, &(struct ofc_error){0});
}

int ofc_cli_main(int argc, char **argv)
{
	if (argc < 2) {
		usage_all(stderr);
		return 2;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "help") == 0) {
		usage_all(stdout);
		return 0;
	}
	/* --socket PATH: ask the daemon instead of acting locally. */
	if (strcmp(argv[1], "--socket") == 0 || strncmp(argv[1], "--socket=", 9) == 0)
		return remote_main(argc, argv);
	if (strcmp(argv[1], "--version") == 0) {
		printf("ofc %s\n", OFC_VERSION);
		return 0;
	}
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		if (strcmp(argv[1], commands[i].name) == 0) {
			optind = 0; /* GNU: reinitialise getopt for this argv */
			return commands[i].run(&commands[i], argc - 1, argv + 1);
		}
	fprintf(stderr, "ofc: unknown command '%s'\n", argv[1]);
	usage_all(stderr);
	return 2;
}
