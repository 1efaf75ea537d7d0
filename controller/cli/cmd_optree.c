/* ofc optree: plan and verify an all-gather on a WDM ring given by flags
 * (no config). Defaults are the OpTree paper's system: 40 Gb/s per
 * wavelength, 4 interfaces x 64 MRRs per node, 25 us MRR retuning, 4 MiB
 * blocks, one fibre per direction (the paper's step counts assume W
 * wavelengths per direction). */
#include "controller/cli/internal.h"
#include "rwa/rwa.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* What the options ask for. */
struct optree_args {
	struct schedule_query q;
	struct schedule_print p;
	struct optree_ring ring;
	uint32_t interfaces, mrrs;
	bool have_n, have_w, have_algo, sweep;
	const char *plot, *format;
};

static int p_algo(const struct opt *row, const char *arg, void *base, struct ofc_error *err)
{
	((struct optree_args *)base)->have_algo = true;
	return opt_str(row, arg, base, err);
}

static int p_radices(const struct opt *row, const char *arg, void *base, struct ofc_error *err)
{
	struct optree_args *a = base;

	(void)row;
	if (optree_parse_radices(arg, a->q.radix, &a->q.depth, err) < 0) {
		err->code = OFC_E_USAGE;
		return -1;
	}
	return 0;
}

static int p_reduced(const struct opt *row, const char *arg, void *base, struct ofc_error *err)
{
	(void)row, (void)arg, (void)err;
	((struct optree_args *)base)->q.reduced = SCHEDULE_REDUCED_ALWAYS;
	return 0;
}

static const struct opt_choice engines[] = {
    {"heuristic", RWA_ENGINE_HEURISTIC}, {"ilp", RWA_ENGINE_ILP}, {"lp", RWA_ENGINE_LP}, {NULL}};

#define O(f) offsetof(struct optree_args, f)
static const struct opt optree_table[] = {
    {"nodes", cli_row_u32, O(ring.nodes), "N",
     "ring nodes (OpTree's all-gather above 8192 is the symmetry-reduced schedule, checked by "
     "symmetry)",
     2, SCHED_MAX_NODES, "node ids are 16 bits", .letter = 'n', .alt = 1, .flags = OPT_REQUIRED},
    {"reduced", p_reduced, O(q.reduced), NULL, "that reduced schedule at any size (an even plan)",
     .letter = 'X'},
    {"wavelengths", cli_row_u32, O(ring.wavelengths), "W", "wavelengths per fibre", 1, 65535,
     .letter = 'w', .under = "nodes", .flags = OPT_REQUIRED},
    {"fibres", cli_row_u32, O(ring.fibres), "F", "fibres per direction (default 1)", 1, 255,
     .letter = 'F'},
    {"block-size", cli_row_size, O(ring.block_bytes), "B",
     "data each node contributes, e.g. 4MiB (default 4MiB)", .letter = 'b'},
    {"collective", cli_row_collective, O(q.collective), "C",
     "allgather (default), reduce-scatter, allreduce or alltoall (reduce-scatter is the "
     "all-gather reversed, allreduce both; all-to-all is direct lightpaths, --algo onestage)",
     .letter = 'c'},
    {"algo", p_algo, O(q.algorithm), "A",
     "optree (default), ring, ne, onestage, wrht, or all (a table)", .letter = 'a',
     .under = "nodes"},
    {"engine", cli_row_choice, O(q.rwa_engine), "heuristic|ilp|lp",
     "all-to-all RWA engine: heuristic (default), ilp or lp", .expect = "heuristic, ilp or lp",
     .letter = 'e', .choices = engines},
    {"radices", p_radices, O(q.radix), "LIST",
     "force OpTree's radices, e.g. 4,4 (default: the planner's)", .letter = 'r', .under = "nodes"},
    {"interfaces", cli_row_u32, O(interfaces), "I", "optical interfaces per node (default 4)", 1,
     1024, .letter = 'I'},
    {"mrrs", cli_row_u32, O(mrrs), "M",
     "MRRs per interface (default 64); a node adds and drops at most I x M lightpaths per "
     "step, larger steps are split",
     1, 65535, .letter = 'M'},
    {"rate", cli_row_rate, O(ring.rate), "R", "bandwidth per wavelength (default 40Gbps)",
     .letter = 'R'},
    {"mrr-delay", cli_row_duration, O(ring.mrr_delay), "D", "MRR retuning time (default 25us)",
     .letter = 'D'},
    {"oeo-delay", cli_row_duration, O(ring.oeo_delay), "D",
     "O/E/O conversion time per stage (default 10ns)", .letter = 'E'},
    {"overlap", NULL, O(q.overlap), NULL,
     "pre-tune the next stage's MRRs where wavelengths are idle", .letter = 'O'},
    {"json", NULL, O(p.json), NULL, "the summary as JSON (an array with --algo all)", .letter = 'j',
     .under = "nodes"},
    {"sweep", NULL, O(sweep), NULL,
     "KEY=VALUES... as operands: every algorithm over a grid, e.g. nodes=1024,2048 "
     "size=4MiB..128MiB (doubling) wavelengths=64,96,128: a table of times (Eq. 3) with each "
     "schedule built and verified once",
     .letter = 'S', .alt = 1},
    {"KEY=VALUES...", .flags = OPT_OPERAND | OPT_REQUIRED, .under = "sweep"},
    {"plot", opt_str, O(plot), "FILE.svg",
     "with --sweep: time against size per algorithm (SVG; a .png name is refused)", .letter = 'P',
     .under = "sweep"},
    {"format", opt_str, O(format), "text|json|pb",
     "with -o: write the schedule as json, text or pb (ofc.v1.Schedule); without --format "
     "OUT's extension says which (.json, .txt, .pb), else json",
     .letter = 'f', .under = "nodes"},
    {"output", opt_str, O(p.output), "OUT", "write the schedule to OUT (- for stdout)",
     .flags = OPT_SHORT, .letter = 'o', .under = "nodes"},
    {"time-limit", cli_row_duration, O(q.time_limit), "T",
     "stop past T with \"time limit T reached in PHASE\" (exit 1)"},
    {"max-memory", cli_row_size, O(q.max_memory), "M",
     "refuse (exit 1), with the estimate and what would fit, a schedule or a pb export that "
     "would hold more than M (default: half the machine's memory)"},
    CLI_OPT_HELP,
    {NULL},
};
#undef O

const struct cli_table optree_cli_table = {"optree", optree_table, sizeof(struct optree_args)};

int cmd_optree(const struct cli_cmd *cmd, int argc, char **argv)
{
	static const struct cli_opts opts = {optree_table, NULL, NULL};
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
	int first, rc;

	if (!cli_parse(cmd, &opts, argc, argv, &a, &first, &rc))
		return rc;
	a.have_n = a.ring.nodes != 0;
	a.have_w = a.ring.wavelengths != 0;
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
		return optree_sweep(cmd, &a.q, &a.ring, argv + first, argc - first, a.plot);
	}
	if (first < argc)
		return cli_usage_error(cmd, "unexpected argument '%s'", argv[first]);
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
