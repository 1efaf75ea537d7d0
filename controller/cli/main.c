/* `ofc`: the command table and the dispatch to one command. */
#include "controller/cli/internal.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

/* Every command's option table, for the tests that check each row. */
const struct cli_table *const cli_tables[] = {
    &topo_cli_table,
    &validate_cli_table,
    &show_cli_table,
    &finder_cli_table,
    &rwa_cli_table,
    &cluster_cli_table,
    &metrics_cli_table,
    &schedule_cli_table,
    &optree_cli_table,
    &ring_cli_table,
    &slurm_cli_table,
    &status_cli_table,
    &fault_cli_table,
    &fabric_cmd_tables[0],
    &fabric_cmd_tables[1],
    &fabric_cmd_tables[2],
    &fabric_cmd_tables[3],
    /* the commands ofcd answers (`ofc --socket PATH ...`) */
    &remote_cli_tables[0],
    &remote_cli_tables[1],
    &remote_cli_tables[2],
    &remote_cli_tables[3],
    &remote_cli_tables[4],
    &remote_cli_tables[5],
    &remote_cli_tables[6],
    &remote_cli_tables[7],
    &remote_testbed_cli_tables[0],
    &remote_testbed_cli_tables[1],
    &remote_testbed_cli_tables[2],
    &remote_testbed_cli_tables[3],
    &remote_testbed_cli_tables[4],
    &remote_schedule_cli_table,
    &remote_watch_cli_table,
    &remote_adopt_cli_table,
    NULL,
};

static const struct cli_cmd commands[] = {
    {"validate", "FILE", "check a fabric config and its wiring", cmd_validate},
    {"show", "FILE", "print the validated fabric, its topology and circuits", cmd_show},
    {"topo", "SPEC", "generate a topology: facts, edges, port permutations", cmd_topo},
    {"schedule", "", "plan a collective schedule, verify it and price it", cmd_schedule},
    {"finder", "", "the best direct-connect topologies for N hosts of D ports", cmd_finder},
    {"plan", "FILE", "read every device and show what would change to reach the config", cmd_plan},
    {"apply", "FILE", "change the devices as one transaction: journal, apply, verify, or roll back",
     cmd_apply},
    {"try", "FILE", "apply, then revert unless 'ofc confirm' arrives within S seconds", cmd_try},
    {"confirm", "[FILE]", "keep what a running 'ofc try' applied", cmd_confirm},
    {"adopt", "FILE", "end a rollback that cannot finish: record what the devices hold", cmd_adopt},
    {"status", "[FILE]", "recorded and live device state, and any unfinished transaction",
     cmd_status},
    {"testbed", "up|check|run|mpirun|down|link|miswire FILE [ARGS]",
     "hosts as network namespaces, circuits as veth pairs, routes over netlink", cmd_testbed},
    {"optree", "", "collectives on a WDM ring: OpTree's plan, Wrht and the baselines, verified",
     cmd_optree},
    {"ring", "run FILE", "run a verified schedule on a WDM ring's MRR agents, step by step",
     cmd_ring},
    {"slurm", "", "give Slurm jobs their own topology before they start", cmd_slurm},
    {"rwa", "", "routing and wavelength assignment for demands on a WDM ring", cmd_rwa},
    /* ofcd's alone: their usage and help are cmd_remote.c's */
    {"reconfigure", NULL, "rewire the fabric, or make a partition of hosts, through ofcd",
     cmd_daemon_only},
    {"release", NULL, "let go of a partition made with reconfigure --hosts", cmd_daemon_only},
    {"wiring", NULL, "each circuit as the hosts' LLDP hears it, through ofcd", cmd_daemon_only},
    {"cluster", "status", "every replica's role, lease and contact, etcd, devices, queue and holds",
     cmd_cluster},
    {"metrics", "", "ofcd's metrics, as Prometheus scrapes them", cmd_metrics},
    {"watch", NULL, "print ofcd's events", cmd_daemon_only},
    {"cancel", NULL, "cancel a mutation queued in ofcd", cmd_daemon_only},
    {"fail", NULL, "tell ofcd links, ports or hosts failed; it re-plans", cmd_daemon_only},
    {"restore", NULL, "tell ofcd failed links, ports or hosts work again", cmd_daemon_only},
    {"drain", NULL, "take switch ports out of service for planned work, jobs moved first",
     cmd_daemon_only},
    {"undrain", NULL, "put drained switch ports back in service", cmd_daemon_only},
};

static void usage_all(void)
{
	FILE *out = stdout;

	fprintf(out, "usage: ofc COMMAND [ARGS]\n       ofc --socket PATH "
		     "status|wiring|apply|reconfigure|release|schedule|plan|watch|cancel|fail|"
		     "restore|"
		     "drain|undrain|cluster|metrics [ARGS]\n"
		     "       ofc --server https://HOST:PORT --cert FILE --key FILE --cacert "
		     "FILE COMMAND [ARGS]\n"
		     "       ofc --help | --version\n\ncommands:\n");
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		fprintf(out, "  %-11s %s\n", commands[i].name, commands[i].summary);
	fprintf(out,
		"\n'ofc COMMAND --help' shows a command's options (they may also come before "
		"the\ncommand). --socket PATH may come anywhere; OFC_SOCKET=PATH is --socket PATH "
		"for\nstatus, apply, reconfigure, release, schedule, watch, cancel, fail, restore, "
		"drain,\nundrain, cluster and metrics (OFC_SOCKET= unset or empty: status, apply "
		"and schedule act "
		"locally;\nthe others ask ofcd at " OFCD_SOCKET_DEFAULT
		"). Replicas: --socket and --server "
		"repeat, and each (and OFC_SOCKET)\ntakes a comma list (PATH,PATH...); ofc asks "
		"them in turn "
		"until one leads (a follower names\nthe leader) or --timeout passes. "
		"OFC_SERVER=URL[,URL...] (with OFC_CERT, OFC_KEY\nand OFC_CACERT) is --server "
		"for the same commands, before OFC_SOCKET. Exit status:\n0 success, 1 runtime "
		"failure, 2 bad input or usage.\n");
}

static const char *cli_command = "ofc";

/* An allocation failed: a request too large for this machine. Say what it
 * needed at least and exit 1 instead of aborting. */
__attribute__((noreturn)) static void cli_out_of_memory(size_t asked)
{
	const double gib = 1024.0 * 1024 * 1024;
	double used = (double)mem_resident();
	double total = (double)mem_physical();
	struct rlimit as;
	char limit[80] = "";

	if (getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY)
		snprintf(limit, sizeof(limit), " (this process may map %.2f GiB: ulimit -v)",
			 (double)as.rlim_cur / gib);

	fflush(stdout);
	if (asked == SIZE_MAX)
		fprintf(stderr,
			"%s: not enough memory: the request needs more memory than "
			"this machine can address\n",
			cli_command);
	else
		fprintf(stderr,
			"%s: not enough memory: this request needs at least %.2f GiB (%.2f GiB "
			"in use when it asked for %.2f GiB more) and this machine has %.2f GiB%s; "
			"ask for fewer hosts, a smaller size, or another algorithm or lowering\n",
			cli_command, (used + (double)asked) / gib, used / gib, (double)asked / gib,
			total / gib, limit);
	_exit(1);
}

/* --socket PATH, --server URL (each repeatable, each a comma list: the
 * replicas, or their gateways), --cert, --key, --cacert, anywhere before
 * "--" (--socket=PATH too), taken out of argv (compacted in place) into t.
 * Returns 0, or 2 (an exit status) after saying what is wrong. */
static int take_targets(int *argc, char **argv, struct cli_targets *t)
{
	static const char *const names[] = {"--socket", "--server", "--cert", "--key", "--cacert"};
	const char **vals[] = {NULL, NULL, &t->srv.cert, &t->srv.key, &t->srv.cacert};
	struct ofc_error err = {0};
	bool sock = false, srv = false;
	int out = 1;

	for (int i = 1; i < *argc; i++) {
		size_t k = 0;
		const char *v;

		if (strcmp(argv[i], "--") == 0) {
			while (i < *argc)
				argv[out++] = argv[i++];
			break;
		}
		if (strncmp(argv[i], "--socket=", 9) == 0) {
			v = argv[i] + 9;
		} else {
			while (k < ARRAY_SIZE(names) && strcmp(argv[i], names[k]) != 0)
				k++;
			if (k == ARRAY_SIZE(names)) {
				argv[out++] = argv[i];
				continue;
			}
			if (i + 1 >= *argc) {
				fprintf(stderr, "ofc: %s needs %s\nTry 'ofc --help'.\n", names[k],
					k == 0 ? "the path of ofcd's socket" : "a value");
				return 2;
			}
			v = argv[++i];
		}
		if (k >= 2) {
			*vals[k] = v;
			continue;
		}
		if (k == 0)
			sock = true;
		else
			srv = true;
		if (k == 0 && !*v) {
			fprintf(
			    stderr,
			    "ofc: --socket needs the path of ofcd's socket\nTry 'ofc --help'.\n");
			return 2;
		}
		if (cli_targets_add(t, names[k], v, &err) < 0) {
			fprintf(stderr, "ofc: %s\nTry 'ofc --help'.\n", err.msg);
			return 2;
		}
	}
	*argc = out;
	argv[out] = NULL;
	if (sock && srv) {
		fprintf(stderr, "ofc: --server and --socket: choose one\nTry 'ofc --help'.\n");
		return 2;
	}
	if (!srv && (t->srv.cert || t->srv.key || t->srv.cacert) && !getenv("OFC_SERVER")) {
		fprintf(stderr, "ofc: --cert, --key and --cacert go with --server URL\nTry 'ofc "
				"--help'.\n");
		return 2;
	}
	t->https = srv;
	return 0;
}

static bool is_command(const char *word)
{
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		if (strcmp(word, commands[i].name) == 0)
			return true;
	return false;
}

static bool testbed_action(const char *word)
{
	static const char *const actions[] = {"up",   "check", "run",	 "mpirun",
					      "down", "link",  "miswire"};

	for (size_t i = 0; i < ARRAY_SIZE(actions); i++)
		if (strcmp(word, actions[i]) == 0)
			return true;
	return false;
}

/* `ofc --timeout 1 status`: a command's options written before it. Each
 * command parses its own options (their values are unknown here), so the
 * command is the first word that names one; it is moved to the front,
 * the options after it, as if written `ofc status --timeout 1`. Where the
 * word could be an option's value and a command name follows it (`ofc
 * --algo ring schedule`), say the order instead of guessing. Returns 0,
 * or 2 after saying what is wrong. */
static int command_first(int argc, char **argv)
{
	int k = 2;

	if (argc < 2 || argv[1][0] != '-' || strcmp(argv[1], "--") == 0 ||
	    strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "--version") == 0)
		return 0;
	while (k < argc && strcmp(argv[k], "--") != 0 && !is_command(argv[k]))
		k++;
	if (k == argc || strcmp(argv[k], "--") == 0 ||
	    (argv[k - 1][0] == '-' && !strchr(argv[k - 1], '=') && k + 1 < argc &&
	     is_command(argv[k + 1]))) {
		fprintf(stderr,
			"ofc: options before the command%s: write the command first, its "
			"options after it (ofc COMMAND [OPTIONS])\nTry 'ofc --help'.\n",
			k == argc || strcmp(argv[k], "--") == 0 ? " and no command" : "");
		return 2;
	}
	/* `testbed ACTION`: both words first, the options after the action */
	int words =
	    strcmp(argv[k], "testbed") == 0 && k + 1 < argc && testbed_action(argv[k + 1]) ? 2 : 1;
	char *cmd[2] = {argv[k], words == 2 ? argv[k + 1] : NULL};

	memmove(argv + 1 + words, argv + 1, (size_t)(k - 1) * sizeof(*argv));
	argv[1] = cmd[0];
	if (words == 2)
		argv[2] = cmd[1];
	return 0;
}

static int cli_main(struct cli_targets *t, int argc, char **argv)
{
	const char *env = getenv("OFC_SOCKET"), *srv = getenv("OFC_SERVER");
	struct ofc_error err = {0};

	if (take_targets(&argc, argv, t) || command_first(argc, argv))
		return 2;
	if (argc < 2) {
		fprintf(stderr, "ofc: missing a command\nTry 'ofc --help'.\n");
		return 2;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "help") == 0) {
		usage_all();
		return 0;
	}
	/* ofc slurm talks to ofcd itself (a Slurm hook): the addresses given, else
	 * OFC_SOCKET's, else the default socket. */
	if (strcmp(argv[1], "slurm") == 0)
		for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
			if (strcmp(commands[i].name, "slurm") == 0) {
				optind = 0; /* GNU: reinitialise getopt for this argv */
				return slurm_main(t, &commands[i], argc - 1, argv + 1);
			}
	/* --socket or --server anywhere, or $OFC_SOCKET for the commands ofcd
	 * answers: ask the daemon instead of acting locally. */
	if (t->n)
		return remote_main(t, argc - 1, argv + 1);
	if (((env && *env) || (srv && *srv)) && remote_command(argv[1])) {
		if (cli_targets_from_env(t, &err) < 0) {
			fprintf(stderr, "ofc: %s\n", err.msg);
			return 2;
		}
		return remote_main(t, argc - 1, argv + 1);
	}
	if (strcmp(argv[1], "--version") == 0) {
		printf("ofc %s\n", OFC_VERSION);
		return 0;
	}
	mem_on_oom(cli_out_of_memory);
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		if (strcmp(argv[1], commands[i].name) == 0) {
			static char name[48];

			snprintf(name, sizeof(name), "ofc %s", commands[i].name);
			cli_command = name;
			optind = 0; /* GNU: reinitialise getopt for this argv */
			return commands[i].run(&commands[i], argc - 1, argv + 1);
		}
	fprintf(stderr, "ofc: unknown command '%s'\nTry 'ofc --help'.\n", argv[1]);
	return 2;
}

int ofc_cli_main(int argc, char **argv)
{
	struct cli_targets *t = xcalloc(1, sizeof(*t)); /* 25 KiB: not on the stack */
	int rc = cli_main(t, argc, argv);

	free(t);
	return rc;
}
