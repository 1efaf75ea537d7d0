/* ofc optree: plan and verify an all-gather on a WDM ring given by flags
 * (no config). Defaults are the OpTree paper's system: 40 Gb/s per
 * wavelength, 4 interfaces x 64 MRRs per node, 25 us MRR retuning, 4 MiB
 * blocks, one fibre per direction (the paper's step counts assume W
 * wavelengths per direction). */
#include "controller/cli/internal.h"
#include "rwa/rwa.h"

#include <stdlib.h>
#include <string.h>

static const char help[] =
    "  --nodes N          ring nodes (2..65535; OpTree's all-gather above 8192 is\n"
    "                     the symmetry-reduced schedule, checked by symmetry)\n"
    "  --reduced          that reduced schedule at any size (an even plan)\n"
    "  --wavelengths W    wavelengths per fibre\n"
    "  --fibres F         fibres per direction (default 1)\n"
    "  --block-size B     data each node contributes, e.g. 4MiB (default 4MiB)\n"
    "  --collective C     allgather (default), reduce-scatter, allreduce or alltoall\n"
    "                     (reduce-scatter is the all-gather reversed, allreduce\n"
    "                     both; all-to-all is direct lightpaths, --algo onestage)\n"
    "  --algo A           optree (default), ring, ne, onestage, wrht, or all (a table)\n"
    "  --engine E         all-to-all RWA engine: heuristic (default), ilp or lp\n"
    "  --radices LIST     force OpTree's radices, e.g. 4,4 (default: the planner's)\n"
    "  --interfaces I     optical interfaces per node (default 4)\n"
    "  --mrrs M           MRRs per interface (default 64); a node adds and drops\n"
    "                     at most I x M lightpaths per step, larger steps are split\n"
    "  --rate R           bandwidth per wavelength (default 40Gbps)\n"
    "  --mrr-delay D      MRR retuning time (default 25us)\n"
    "  --oeo-delay D      O/E/O conversion time per stage (default 10ns)\n"
    "  --overlap          pre-tune the next stage's MRRs where wavelengths are idle\n"
    "  --json             the summary as JSON (an array with --algo all)\n"
    "  --sweep KEY=VALUES...  every algorithm over a grid, e.g. nodes=1024,2048\n"
    "                     size=4MiB..128MiB (doubling) wavelengths=64,96,128: a table\n"
    "                     of times (Eq. 3) with each schedule built and verified once\n"
    "  --plot FILE.svg    with --sweep: time against size per algorithm (SVG; a .png\n"
    "                     name is refused)\n"
    "  --format F -o OUT  write the schedule: json, text or pb (ofc.v1.Schedule);\n"
    "                     without --format OUT's extension says which (.json, .txt,\n"
    "                     .pb), else json\n"
    "  --time-limit T     stop past T with \"time limit T reached in PHASE\" (exit 1)\n"
    "  --max-memory M     refuse (exit 1), with the estimate and what would fit, a\n"
    "                     schedule or a pb export that would hold more than M\n"
    "                     (default: half the machine's memory)\n";

/* What the options ask for. */
struct optree_args {
	struct schedule_query q;
	struct schedule_print p;
	struct optree_ring ring;
	uint32_t interfaces, mrrs;
	bool have_n, have_w, have_algo, sweep;
	const char *plot, *format;
};

/* One option into a: -1 to go on, else the exit status. */
static int optree_option(const struct cli_cmd *cmd, int c, const char *arg, struct optree_args *a)
{
	struct ofc_error err = {0};

	switch (c) {
	case 'n':
		if (cli_opt_u32(cmd, "nodes", arg, 2, SCHED_MAX_NODES, "node ids are 16 bits",
				&a->ring.nodes))
			return 2;
		a->have_n = true;
		break;
	case 'w':
		if (cli_opt_u32(cmd, "wavelengths", arg, 1, 65535, NULL, &a->ring.wavelengths))
			return 2;
		a->have_w = true;
		break;
	case 'F':
		if (cli_opt_u32(cmd, "fibres", arg, 1, 255, NULL, &a->ring.fibres))
			return 2;
		break;
	case 'b':
		if (cli_opt_size(cmd, "block-size", arg, &a->ring.block_bytes))
			return 2;
		break;
	case 'a':
		a->q.algorithm = arg;
		a->have_algo = true;
		break;
	case 'c':
		if (sched_collective_parse(arg, &a->q.collective) < 0)
			return cli_usage_error(cmd,
					       "unknown collective '%s' (allgather, "
					       "reduce-scatter, allreduce, alltoall)",
					       arg);
		break;
	case 'e':
		if (strcmp(arg, "heuristic") == 0)
			a->q.rwa_engine = RWA_ENGINE_HEURISTIC;
		else if (strcmp(arg, "ilp") == 0)
			a->q.rwa_engine = RWA_ENGINE_ILP;
		else if (strcmp(arg, "lp") == 0)
			a->q.rwa_engine = RWA_ENGINE_LP;
		else
			return cli_usage_error(cmd, "--engine is heuristic, ilp or lp");
		break;
	case 'r':
		if (optree_parse_radices(arg, a->q.radix, &a->q.depth, &err) < 0)
			return cli_usage_error(cmd, "%s", err.msg);
		break;
	case 'I':
		if (cli_opt_u32(cmd, "interfaces", arg, 1, 1024, NULL, &a->interfaces))
			return 2;
		break;
	case 'M':
		if (cli_opt_u32(cmd, "mrrs", arg, 1, 65535, NULL, &a->mrrs))
			return 2;
		break;
	case 'R':
		if (cli_opt_rate(cmd, "rate", arg, &a->ring.rate))
			return 2;
		break;
	case 'D':
		if (cli_opt_duration(cmd, "mrr-delay", arg, &a->ring.mrr_delay))
			return 2;
		break;
	case 'E':
		if (cli_opt_duration(cmd, "oeo-delay", arg, &a->ring.oeo_delay))
			return 2;
		break;
	case 'O':
		a->q.overlap = true;
		break;
	case 'X':
		a->q.reduced = SCHEDULE_REDUCED_ALWAYS;
		break;
	case 'j':
		a->p.json = true;
		break;
	case 'S':
		a->sweep = true;
		break;
	case 'P':
		a->plot = arg;
		break;
	case 'f':
		a->format = arg;
		break;
	case 'o':
		a->p.output = arg;
		break;
	case 'T':
		if (cli_opt_duration(cmd, "time-limit", arg, &a->q.time_limit))
			return 2;
		break;
	case 'Q': {
		const char *why = NULL;

		if (parse_size(arg, &a->q.max_memory, &why) < 0 || a->q.max_memory == 0)
			return cli_usage_error(cmd, "bad --max-memory '%s': %s", arg,
					       why ? why : "must be more than 0");
		break;
	}
	}
	return -1;
}

int cmd_optree(const struct cli_cmd *cmd, int argc, char **argv)
{
	static const struct option opts[] = {
	    {"nodes", required_argument, NULL, 'n'},
	    {"wavelengths", required_argument, NULL, 'w'},
	    {"fibres", required_argument, NULL, 'F'},
	    {"block-size", required_argument, NULL, 'b'},
	    {"algo", required_argument, NULL, 'a'},
	    {"collective", required_argument, NULL, 'c'},
	    {"engine", required_argument, NULL, 'e'},
	    {"radices", required_argument, NULL, 'r'},
	    {"interfaces", required_argument, NULL, 'I'},
	    {"mrrs", required_argument, NULL, 'M'},
	    {"rate", required_argument, NULL, 'R'},
	    {"mrr-delay", required_argument, NULL, 'D'},
	    {"oeo-delay", required_argument, NULL, 'E'},
	    {"overlap", no_argument, NULL, 'O'},
	    {"reduced", no_argument, NULL, 'X'},
	    {"json", no_argument, NULL, 'j'},
	    {"sweep", no_argument, NULL, 'S'},
	    {"plot", required_argument, NULL, 'P'},
	    {"format", required_argument, NULL, 'f'},
	    {"output", required_argument, NULL, 'o'},
	    {"time-limit", required_argument, NULL, 'T'},
	    {"max-memory", required_argument, NULL, 'Q'},
	    {"help", no_argument, NULL, 'h'},
	    {0},
	};
	struct optree_args a = {
	    .q = {.collective = SCHED_ALLGATHER,
		  /* (what a WDM ring's allgather runs by default, whatever -c) */
		  .algorithm = schedule_default_algorithm(ENGINE_RING, SCHED_ALLGATHER),
		  .reduced = SCHEDULE_REDUCED_AUTO},
	    .p = {.cmd = cmd, .format = FMT_JSON},
	    .ring = {0, 0, 1, 0, 40e9, 25e-6, 10e-9, 4u << 20},
	    .interfaces = 4,
	    .mrrs = 64,
	};
	enum out_format plot_format;
	int c, rc;

	while ((c = cli_getopt(cmd, argc, argv, "n:w:F:b:a:c:e:r:I:M:R:D:E:OXjSP:f:o:h", opts)) !=
	       -1) {
		if (c == -2)
			return 2;
		if (c == 'h')
			return cli_help(cmd, help);
		if ((rc = optree_option(cmd, c, optarg, &a)) >= 0)
			return rc;
	}
	if (a.plot && !a.sweep)
		return cli_usage_error(cmd, "--plot goes with --sweep");
	/* Checked before the sweep's work: the picture is SVG alone. */
	if (a.plot &&
	    cli_output_format(cmd, "--plot", a.plot, NULL, NULL, FMT_SVG, FMT_SVG, &plot_format))
		return 2;
	if (a.sweep) {
		if (a.p.json || a.p.output || a.q.depth || a.have_algo)
			return cli_usage_error(cmd,
					       "--sweep compares every algorithm in a table: no "
					       "--algo, --radices, --json or -o");
		a.ring.max_add = a.interfaces * a.mrrs;
		return optree_sweep(cmd, &a.q, &a.ring, argv + optind, argc - optind, a.plot);
	}
	if (optind < argc)
		return cli_usage_error(cmd, "unexpected argument '%s'", argv[optind]);
	if (!a.have_n)
		return cli_usage_error(cmd, "missing --nodes");
	if (!a.have_w)
		return cli_usage_error(cmd, "missing --wavelengths");
	if (a.format && !a.p.output) {
		/* pb alone goes to stdout when it is not a terminal (README's
		 * conventions), the summary to stderr as with -o - */
		if (strcmp(a.format, "pb") != 0)
			return cli_usage_error(cmd, "--format %s needs -o OUT (-o - for stdout)",
					       a.format);
		if (cli_binary_to_terminal(cmd))
			return 2;
		a.p.output = "-";
	}
	if (cli_output_format(cmd, "-o", a.p.output, a.format, NULL, FMT_TEXT | FMT_JSON | FMT_PB,
			      FMT_JSON, &a.p.format))
		return 2;
	a.ring.max_add = a.interfaces * a.mrrs;
	a.q.ring = &a.ring;
	struct ofc_clock clk;
	struct cli_progress prog;
	cli_clock_init(&clk, &prog, cmd, a.q.time_limit, a.p.json);
	a.q.clock = &clk;
	rc = cli_schedule(&a.p, &a.q);
	cli_progress_clear(&clk);
	return rc;
}
