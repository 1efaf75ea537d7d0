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
	struct schedule_query q = {
	    .collective = SCHED_ALLGATHER, .algorithm = "optree", .reduced = SCHEDULE_REDUCED_AUTO};
	struct schedule_print p = {.cmd = cmd, .format = FMT_JSON};
	struct optree_ring ring = {0, 0, 1, 0, 40e9, 25e-6, 10e-9, 4u << 20};
	uint32_t interfaces = 4, mrrs = 64;
	bool have_n = false, have_w = false, sweep = false;
	const char *plot = NULL, *format = NULL;
	enum out_format plot_format;
	struct ofc_error err = {0};
	int c;

	while ((c = cli_getopt(cmd, argc, argv, "n:w:F:b:a:c:e:r:I:M:R:D:E:OXjSP:f:o:h", opts)) !=
	       -1) {
		switch (c) {
		case -2:
			return 2;
		case 'n':
			if (cli_opt_u32(cmd, "nodes", optarg, 2, SCHED_MAX_NODES,
					"node ids are 16 bits", &ring.nodes))
				return 2;
			have_n = true;
			break;
		case 'w':
			if (cli_opt_u32(cmd, "wavelengths", optarg, 1, 65535, NULL,
					&ring.wavelengths))
				return 2;
			have_w = true;
			break;
		case 'F':
			if (cli_opt_u32(cmd, "fibres", optarg, 1, 255, NULL, &ring.fibres))
				return 2;
			break;
		case 'b':
			if (cli_opt_size(cmd, "block-size", optarg, &ring.block_bytes))
				return 2;
			break;
		case 'a':
			q.algorithm = optarg;
			break;
		case 'c':
			if (sched_collective_parse(optarg, &q.collective) < 0)
				return cli_usage_error(cmd,
						       "unknown collective '%s' (allgather, "
						       "reduce-scatter, allreduce, alltoall)",
						       optarg);
			break;
		case 'e':
			if (strcmp(optarg, "heuristic") == 0)
				q.rwa_engine = RWA_ENGINE_HEURISTIC;
			else if (strcmp(optarg, "ilp") == 0)
				q.rwa_engine = RWA_ENGINE_ILP;
			else if (strcmp(optarg, "lp") == 0)
				q.rwa_engine = RWA_ENGINE_LP;
			else
				return cli_usage_error(cmd, "--engine is heuristic, ilp or lp");
			break;
		case 'r':
			if (optree_parse_radices(optarg, q.radix, &q.depth, &err) < 0)
				return cli_usage_error(cmd, "%s", err.msg);
			break;
		case 'I':
			if (cli_opt_u32(cmd, "interfaces", optarg, 1, 1024, NULL, &interfaces))
				return 2;
			break;
		case 'M':
			if (cli_opt_u32(cmd, "mrrs", optarg, 1, 65535, NULL, &mrrs))
				return 2;
			break;
		case 'R':
			if (cli_opt_rate(cmd, "rate", optarg, &ring.rate))
				return 2;
			break;
		case 'D':
			if (cli_opt_duration(cmd, "mrr-delay", optarg, &ring.mrr_delay))
				return 2;
			break;
		case 'E':
			if (cli_opt_duration(cmd, "oeo-delay", optarg, &ring.oeo_delay))
				return 2;
			break;
		case 'O':
			q.overlap = true;
			break;
		case 'X':
			q.reduced = SCHEDULE_REDUCED_ALWAYS;
			break;
		case 'j':
			p.json = true;
			break;
		case 'S':
			sweep = true;
			break;
		case 'P':
			plot = optarg;
			break;
		case 'f':
			format = optarg;
			break;
		case 'o':
			p.output = optarg;
			break;
		case 'T':
			if (cli_opt_duration(cmd, "time-limit", optarg, &q.time_limit))
				return 2;
			break;
		case 'Q': {
			const char *why = NULL;

			if (parse_size(optarg, &q.max_memory, &why) < 0 || q.max_memory == 0)
				return cli_usage_error(cmd, "bad --max-memory '%s': %s", optarg,
						       why ? why : "must be more than 0");
			break;
		}
		case 'h':
			return cli_help(cmd, help);
		}
	}
	if (plot && !sweep)
		return cli_usage_error(cmd, "--plot goes with --sweep");
	/* Checked before the sweep's work: the picture is SVG alone. */
	if (plot &&
	    cli_output_format(cmd, "--plot", plot, NULL, NULL, FMT_SVG, FMT_SVG, &plot_format))
		return 2;
	if (sweep) {
		if (p.json || p.output || q.depth || (q.algorithm && strcmp(q.algorithm, "optree")))
			return cli_usage_error(cmd,
					       "--sweep compares every algorithm in a table: no "
					       "--algo, --radices, --json or -o");
		ring.max_add = interfaces * mrrs;
		return optree_sweep(cmd, &q, &ring, argv + optind, argc - optind, plot);
	}
	if (optind < argc)
		return cli_usage_error(cmd, "unexpected argument '%s'", argv[optind]);
	if (!have_n)
		return cli_usage_error(cmd, "missing --nodes");
	if (!have_w)
		return cli_usage_error(cmd, "missing --wavelengths");
	if (format && !p.output)
		return cli_usage_error(cmd, "--format needs -o OUT");
	if (cli_output_format(cmd, "-o", p.output, format, NULL, FMT_TEXT | FMT_JSON | FMT_PB,
			      FMT_JSON, &p.format))
		return 2;
	ring.max_add = interfaces * mrrs;
	q.ring = &ring;
	struct ofc_clock clk;
	struct cli_progress prog;
	cli_clock_init(&clk, &prog, cmd, q.time_limit, p.json);
	q.clock = &clk;
	int rc = cli_schedule(&p, &q);
	cli_progress_clear(&clk);
	return rc;
}
