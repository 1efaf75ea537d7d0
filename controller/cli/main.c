/* `ofc`: the command table and the dispatch to one command. */
#include "controller/cli/internal.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

static const struct cli_cmd commands[] = {
    {"validate", "FILE [--json]", "check a fabric config and its wiring", cmd_validate},
    {"show", "FILE [--json | --dot | --format text|json|dot|pb] [-o OUT]",
     "print the validated fabric, its topology and circuits", cmd_show},
    {"topo", "SPEC [--json | --dot] [--ports] [--format text|json|dot|pb] [-o OUT] [--threads N]",
     "generate a topology: facts, edges, port permutations", cmd_topo},
    {"schedule",
     "(FILE | --topology SPEC) --collective C [--algo A] [--size M] [--alpha T] "
     "[--bandwidth B] [--demand-matrix FILE] [--injection I] [--forwarding host|nic] "
     "[--chunks P] [--overlap] [--lowering L] [--steps-try T] [--variant V] [--hop-latency T] "
     "[--hops T] "
     "[--epsilon E] [--method M] [--root NAME] [--bound-any-hops] [--fail ITEMS] [--threads N] "
     "[--time-limit T] [--max-memory M] [--reduced] [--lp-solver lpsolve|clp] [--json] "
     "[--format text|json|pb|msccl -o OUT]",
     "plan a collective schedule, verify it and price it", cmd_schedule},
    {"finder",
     "--nodes N --degree D [--collective C] [--size M] [--alpha T] [--bandwidth B] "
     "[--injection I] [--forwarding host|nic] [--threads N] [--json]",
     "the best direct-connect topologies for N hosts of D ports", cmd_finder},
    {"plan",
     "FILE [--device NAME=HOST:PORT]... [--state-dir DIR] [--relabel] [--relabel-budget S] "
     "[--no-relabel] [--max-moves N] [--partition NAME] [--horizon RUNS] [--alternatives K] "
     "[--workload W [--plot FILE] [--time-limit T] [--switch-overhead T,C] [--in-place]] "
     "[--json]",
     "read every device and show what would change to reach the config", cmd_plan},
    {"apply",
     "FILE [--device NAME=HOST:PORT]... [--state-dir DIR] [--dry-run] [--relabel] "
     "[--relabel-budget S] [--no-relabel] [--max-moves N] [--partition NAME] [--json]",
     "change the devices as one transaction: journal, apply, verify, or roll back", cmd_apply},
    {"try",
     "FILE [--timeout S] [--device NAME=HOST:PORT]... [--state-dir DIR] [--relabel] "
     "[--relabel-budget S] [--no-relabel] [--max-moves N] [--partition NAME] [--json]",
     "apply, then revert unless 'ofc confirm' arrives within S seconds", cmd_try},
    {"confirm", "[FILE] [--device NAME=HOST:PORT]... [--state-dir DIR] [--json]",
     "keep what a running 'ofc try' applied", cmd_confirm},
    {"status", "[FILE] [--device NAME=HOST:PORT]... [--state-dir DIR] [--json | --dot]",
     "recorded and live device state, and any unfinished transaction", cmd_status},
    {"testbed",
     "up|check|run|down FILE [--device NAME=HOST:PORT]... [--state-dir DIR] [--json] "
     "[up: --rate-scale X] [run: --collective C [--algo A] [--size M] [--chunks P] "
     "[--lowering L] [--schedule FILE] [--alpha T] [--timeout T] [--max-memory M] "
     "[--drop-transfer K] [--port N] [--steps] [--mpi] | run: --workload W [--iterations K] "
     "[--way static|per-phase|chosen|all] [--switch-overhead T,C]]",
     "hosts as network namespaces, circuits as veth pairs, routes over netlink", cmd_testbed},
    {"optree",
     "--nodes N --wavelengths W [--fibres F] [--block-size B] [--collective C] "
     "[--algo optree|ring|ne|onestage|wrht|all] [--engine heuristic|ilp|lp] [--radices LIST] "
     "[--interfaces I] [--mrrs M] [--rate R] [--mrr-delay D] [--oeo-delay D] [--overlap] "
     "[--reduced] [--time-limit T] [--max-memory M] [--json] [--format text|json|pb -o OUT] "
     "| --sweep KEY=VALUES... [--plot FILE.svg]",
     "collectives on a WDM ring: OpTree's plan, Wrht and the baselines, verified", cmd_optree},
    {"ring",
     "run FILE --collective C [--algo A] [--size M] [--overlap] [--show-configs] "
     "[--device NAME=HOST:PORT]... [--state-dir DIR] [--json]",
     "run a verified schedule on a WDM ring's MRR agents, step by step", cmd_ring},
    {"slurm",
     "prolog|epilog | topology FILE --config FABRIC [--group N] | hostlist LIST "
     "[--map FILE] [--default-topology T] [--timeout S] [--slurm-conf FILE] "
     "[--scontrol PATH]",
     "give Slurm jobs their own topology before they start", cmd_slurm},
    {"rwa",
     "--nodes N --wavelengths W [--fibres F] (--pattern all-to-all | --demands FILE) "
     "[--engine heuristic|ilp|lp] [--objective min-wavelengths|max-served] [--time-limit S] "
     "[--lp-solver lpsolve|clp] [--json] [--lightpaths]",
     "routing and wavelength assignment for demands on a WDM ring", cmd_rwa},
    /* ofcd's alone: their usage and help are cmd_remote.c's */
    {"reconfigure", NULL, "rewire the fabric through ofcd", cmd_daemon_only},
    {"watch", NULL, "print ofcd's events", cmd_daemon_only},
    {"cancel", NULL, "cancel a mutation queued in ofcd", cmd_daemon_only},
    {"fail", NULL, "tell ofcd links, ports or hosts failed; it re-plans", cmd_daemon_only},
    {"restore", NULL, "tell ofcd failed links, ports or hosts work again", cmd_daemon_only},
};

static void usage_all(void)
{
	FILE *out = stdout;

	fprintf(out, "usage: ofc COMMAND [ARGS]\n       ofc --socket PATH "
		     "status|apply|reconfigure|schedule|watch|cancel|fail|restore [ARGS]\n"
		     "       ofc --server https://HOST:PORT --cert FILE --key FILE --cacert FILE "
		     "COMMAND [ARGS]\n"
		     "       ofc --help | --version\n\ncommands:\n");
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		fprintf(out, "  %-11s %s\n", commands[i].name, commands[i].summary);
	fprintf(out,
		"\n'ofc COMMAND --help' shows a command's options. --socket PATH may come "
		"anywhere;\nOFC_SOCKET=PATH is --socket PATH for status, apply, reconfigure, "
		"schedule, watch,\ncancel, fail and restore (OFC_SOCKET= unset or empty: status, "
		"apply and schedule\nact locally; the others ask ofcd at " OFCD_SOCKET_DEFAULT
		"). Exit status: 0 success,\n1 runtime failure, 2 bad input or usage.\n");
}

/* --socket PATH (or --socket=PATH) anywhere before "--": taken out of argv
 * (compacted in place). Returns 1 when found, 0 when not, -1 when it has no
 * value. */
static int take_socket(int *argc, char **argv, const char **socket)
{
	int out = 1, found = 0;

	for (int i = 1; i < *argc; i++) {
		if (strcmp(argv[i], "--") == 0) {
			while (i < *argc)
				argv[out++] = argv[i++];
			break;
		}
		if (strncmp(argv[i], "--socket=", 9) == 0) {
			*socket = argv[i] + 9;
			found = 1;
		} else if (strcmp(argv[i], "--socket") == 0) {
			if (i + 1 >= *argc)
				return -1;
			*socket = argv[++i];
			found = 1;
		} else {
			argv[out++] = argv[i];
		}
	}
	*argc = out;
	argv[out] = NULL;
	return found;
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

/* Issue 36: --server URL, --cert, --key, --cacert anywhere before "--",
 * taken out of argv as --socket is. Returns 1 with srv->url, 0 without,
 * 2 (an exit status) for an option without its value. */
static int take_server(int *argc, char **argv, struct cli_server *srv)
{
	static const char *const names[] = {"--server", "--cert", "--key", "--cacert"};
	const char **vals[] = {&srv->url, &srv->cert, &srv->key, &srv->cacert};
	int out = 1;

	for (int i = 1; i < *argc; i++) {
		size_t k = 0;

		if (strcmp(argv[i], "--") == 0) {
			while (i < *argc)
				argv[out++] = argv[i++];
			break;
		}
		while (k < ARRAY_SIZE(names) && strcmp(argv[i], names[k]) != 0)
			k++;
		if (k == ARRAY_SIZE(names)) {
			argv[out++] = argv[i];
			continue;
		}
		if (i + 1 >= *argc) {
			fprintf(stderr, "ofc: %s needs a value\nTry 'ofc --help'.\n", names[k]);
			return 2;
		}
		*vals[k] = argv[++i];
	}
	*argc = out;
	argv[out] = NULL;
	if (!srv->url && (srv->cert || srv->key || srv->cacert)) {
		fprintf(stderr, "ofc: --cert, --key and --cacert go with --server URL\nTry 'ofc "
				"--help'.\n");
		return 2;
	}
	return srv->url ? 1 : 0;
}

int ofc_cli_main(int argc, char **argv)
{
	const char *socket = NULL, *env = getenv("OFC_SOCKET");
	struct cli_server srv = {0};
	int has_server = take_server(&argc, argv, &srv);
	int has_socket = take_socket(&argc, argv, &socket);

	if (has_server == 2)
		return 2;
	if (has_server && has_socket) {
		fprintf(stderr, "ofc: --server and --socket: choose one\nTry 'ofc --help'.\n");
		return 2;
	}

	if (has_socket < 0) {
		fprintf(stderr,
			"ofc: --socket needs the path of ofcd's socket\nTry 'ofc --help'.\n");
		return 2;
	}
	if (argc < 2) {
		fprintf(stderr, "ofc: missing a command\nTry 'ofc --help'.\n");
		return 2;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "help") == 0) {
		usage_all();
		return 0;
	}
	/* --socket PATH anywhere, or $OFC_SOCKET for the commands ofcd answers:
	 * ask the daemon instead of acting locally. */
	/* ofc slurm talks to ofcd itself (issue 40): --socket is its socket,
	 * --server its gateway. */
	if ((has_socket || has_server) && strcmp(argv[1], "slurm") == 0)
		for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
			if (strcmp(commands[i].name, "slurm") == 0)
				return slurm_main(has_socket ? socket : NULL,
						  has_server ? &srv : NULL, &commands[i], argc - 1,
						  argv + 1);
	if (has_socket)
		return remote_main(socket, argc - 1, argv + 1);
	if (has_server)
		return remote_server_main(&srv, argc - 1, argv + 1);
	if (env && *env && remote_command(argv[1]))
		return remote_main(env, argc - 1, argv + 1);
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
