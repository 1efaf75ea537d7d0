/* ofc optree: plan and verify an all-gather on a WDM ring given by flags
 * (no config). Defaults are the OpTree paper's system: 40 Gb/s per
 * wavelength, 4 interfaces x 64 MRRs per node, 25 us MRR retuning, 4 MiB
 * blocks, one fibre per direction (the paper's step counts assume W
 * wavelengths per direction). */
#include "controller/cli/internal.h"

#include <stdlib.h>
#include <string.h>

static const char help[] =
    "  --nodes N          ring nodes (2..8192)\n"
    "  --wavelengths W    wavelengths per fibre\n"
    "  --fibres F         fibres per direction (default 1)\n"
    "  --block-size B     data each node contributes, e.g. 4MiB (default 4MiB)\n"
    "  --algo A           optree (default), ring, ne, onestage, or all (a table)\n"
    "  --radices LIST     force OpTree's radices, e.g. 4,4 (default: the planner's)\n"
    "  --interfaces I     optical interfaces per node (default 4)\n"
    "  --mrrs M           MRRs per interface (default 64); a node adds and drops\n"
    "                     at most I x M lightpaths per step, larger steps are split\n"
    "  --rate R           bandwidth per wavelength (default 40Gbps)\n"
    "  --mrr-delay D      MRR retuning time (default 25us)\n"
    "  --oeo-delay D      O/E/O conversion time per stage (default 10ns)\n"
    "  --overlap          pre-tune the next stage's MRRs where wavelengths are idle\n"
    "  --json             the summary as JSON (an array with --algo all)\n"
    "  --format F -o OUT  write the schedule: json, text or pb (ofc.v1.Schedule)\n";

int cmd_optree(const struct cli_cmd *cmd, int argc, char **argv)
{
	static const struct option opts[] = {
	    {"nodes", required_argument, NULL, 'n'},
	    {"wavelengths", required_argument, NULL, 'w'},
	    {"fibres", required_argument, NULL, 'F'},
	    {"block-size", required_argument, NULL, 'b'},
	    {"algo", required_argument, NULL, 'a'},
	    {"radices", required_argument, NULL, 'r'},
	    {"interfaces", required_argument, NULL, 'I'},
	    {"mrrs", required_argument, NULL, 'M'},
	    {"rate", required_argument, NULL, 'R'},
	    {"mrr-delay", required_argument, NULL, 'D'},
	    {"oeo-delay", required_argument, NULL, 'E'},
	    {"overlap", no_argument, NULL, 'O'},
	    {"json", no_argument, NULL, 'j'},
	    {"format", required_argument, NULL, 'f'},
	    {"output", required_argument, NULL, 'o'},
	    {"help", no_argument, NULL, 'h'},
	    {0},
	};
	struct schedule_query q = {.collective = SCHED_ALLGATHER, .algorithm = "optree"};
	struct schedule_print p = {.cmd = cmd, .format = FMT_JSON};
	struct optree_ring ring = {0, 0, 1, 0, 40e9, 25e-6, 10e-9, 4u << 20};
	uint32_t interfaces = 4, mrrs = 64;
	bool have_n = false, have_w = false, format_set = false;
	struct ofc_error err = {0};
	int c;

	while ((c = cli_getopt(cmd, argc, argv, "n:w:F:b:a:r:I:M:R:D:E:Ojf:o:h", opts)) != -1) {
		switch (c) {
		case -2:
			return 2;
		case 'n':
			if (cli_opt_u32(cmd, "nodes", optarg, 2, OPTREE_MAX_NODES,
					"an all-gather is N(N-1) transfers", &ring.nodes))
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
		case 'j':
			p.json = true;
			break;
		case 'f':
			if (cli_format(cmd, optarg, FMT_TEXT | FMT_JSON | FMT_PB, &p.format))
				return 2;
			format_set = true;
			break;
		case 'o':
			p.output = optarg;
			break;
		case 'h':
			return cli_help(cmd, help);
		}
	}
	if (optind < argc)
		return cli_usage_error(cmd, "unexpected argument '%s'", argv[optind]);
	if (!have_n)
		return cli_usage_error(cmd, "missing --nodes");
	if (!have_w)
		return cli_usage_error(cmd, "missing --wavelengths");
	if (format_set && !p.output)
		return cli_usage_error(cmd, "--format needs -o OUT");
	ring.max_add = interfaces * mrrs;
	q.ring = &ring;
	return cli_schedule(&p, &q);
}
