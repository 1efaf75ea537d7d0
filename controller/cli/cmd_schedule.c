/* ofc schedule: options into a schedule_query, the pipeline
 * (controller/schedule), and the printers of its two families. */
#include "alltoall/alltoall.h"
#include "controller/cli/internal.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char help_head[] =
    "FILE is a fabric config: a WDM ring in it gets ring schedules, a topology\n"
    "gets direct-connect schedules, servers get the fluid engine's (--algo fluid:\n"
    "LP 4.2's optimum R*, Theorem 4's schedule of K chunks; docs/fluid.md).\n"
    "--topology SPEC schedules on a topology alone (edges:FILE: an edge list).\n"
    "On a terminal a line on stderr shows the phase and the seconds so far.\n";

/* What the options fill in, and what is checked after them. */
struct schedule_cmd {
	struct schedule_query q;
	struct schedule_print p;
	struct fluid_query x;
	const char *format;
	const char *demand;
	bool collective_set;
};

static int p_collective(const struct opt *row, const char *arg, void *base, struct ofc_error *err)
{
	struct schedule_cmd *c = base;

	/* The rooted collectives: the fluid engine's alone. */
	if (strcmp(arg, "broadcast") == 0)
		c->q.collective = SCHED_BROADCAST;
	else if (strcmp(arg, "reduce") == 0)
		c->q.collective = SCHED_REDUCE;
	else if (cli_row_collective(row, arg, base, err) < 0)
		return -1;
	c->collective_set = true;
	return 0;
}

static int p_alpha(const struct opt *row, const char *arg, void *base, struct ofc_error *err)
{
	((struct schedule_cmd *)base)->q.alpha_set = true;
	return cli_row_duration(row, arg, base, err);
}

static int p_bandwidth(const struct opt *row, const char *arg, void *base, struct ofc_error *err)
{
	((struct schedule_cmd *)base)->q.bandwidth_set = true;
	return cli_row_rate(row, arg, base, err);
}

static int p_lowering(const struct opt *row, const char *arg, void *base, struct ofc_error *err)
{
	if (!a2a_lowering_find(arg)) {
		struct strbuf sb = STRBUF_INIT;

		a2a_lowering_names(&sb, false, " or ");
		ofc_error_set(err, OFC_E_USAGE, "bad --%s '%s': %s", row->name, arg, sb.buf);
		sb_free(&sb);
		return -1;
	}
	((struct schedule_cmd *)base)->q.lowering = arg;
	return 0;
}

static int p_variant(const struct opt *row, const char *arg, void *base, struct ofc_error *err)
{
	if (strcmp(arg, "auto") && strcmp(arg, "bandwidth") && strcmp(arg, "latency"))
		return ofc_error_set(err, OFC_E_USAGE, "bad --%s '%s': auto, bandwidth or latency",
				     row->name, arg);
	((struct schedule_cmd *)base)->q.variant = arg;
	return 0;
}

/* --time-limit 0: none. */
static int p_time_limit(const struct opt *row, const char *arg, void *base, struct ofc_error *err)
{
	struct schedule_cmd *c = base;

	if (cli_row_duration(row, arg, base, err) < 0)
		return -1;
	if (c->q.time_limit == 0)
		c->q.time_limit = -1;
	return 0;
}

static int p_epsilon(const struct opt *row, const char *arg, void *base, struct ofc_error *err)
{
	char *end;
	double v = strtod(arg, &end);

	if (*end || end == arg || !(v > 0) || v > 10)
		return ofc_error_set(err, OFC_E_USAGE, "bad --%s '%s': a number in (0, 10]",
				     row->name, arg);
	((struct schedule_cmd *)base)->x.epsilon = v;
	return 0;
}

static int p_reduced(const struct opt *row, const char *arg, void *base, struct ofc_error *err)
{
	(void)row, (void)arg, (void)err;
	((struct schedule_cmd *)base)->q.reduced = SCHEDULE_REDUCED_ALWAYS;
	return 0;
}

static const struct opt_choice forwardings[] = {
    {"host", 1 + HOST_FORWARDING}, {"nic", 1 + NIC_FORWARDING}, {NULL}};
static const struct opt_choice runtimes[] = {
    {"executor", MSCCL_EXECUTOR}, {"legacy", MSCCL_LEGACY}, {NULL}};

#define O(f) offsetof(struct schedule_cmd, f)
static const struct opt schedule_table[] = {
    {"FILE", .flags = OPT_OPERAND | OPT_REQUIRED, .alt = 1},
    {"topology", opt_str, O(q.spec), "SPEC", "a topology alone instead of a config FILE",
     .letter = 'T', .alt = 1},
    {"collective", p_collective, O(q.collective), "C",
     "allgather, reduce-scatter, allreduce or alltoall (fluid: also broadcast and reduce)",
     .flags = OPT_REQUIRED, .letter = 'c',
     .expect = "expected allgather, reduce-scatter, "
	       "allreduce or alltoall (fluid: also "
	       "broadcast and reduce)"},
    {"algo", opt_str, O(q.algorithm), "A",
     "the algorithm, or 'all' to compare them (default: the config's algorithm for the "
     "collective, else bfb, mcf for alltoall; on a WDM ring optree, onestage for alltoall): "
     "the algorithms are listed below",
     .letter = 'a'},
    {"size", cli_row_size, O(q.size), "M",
     "data per node, e.g. 64MiB (default: the config's collective)", .letter = 's'},
    {"alpha", p_alpha, O(q.alpha), "T",
     "latency per step, e.g. 10us (default: the config's, or 10us)", .letter = 'A'},
    {"bandwidth", p_bandwidth, O(q.bandwidth), "B", "a node's egress bandwidth, e.g. 100Gbps",
     .letter = 'B'},
    {"demand-matrix", opt_str, O(demand), "FILE",
     "alltoall: what each node sends each other, N lines of N numbers (relative; row s, "
     "column t: s to t; the diagonal is not read); the MCF then maximises theta with every "
     "pair at theta x its demand, the mean pair sending M/N (a uniform matrix is the plain "
     "all-to-all)"},
    {"injection", cli_row_rate, O(q.injection), "I",
     "alltoall: a host's injection bandwidth, below d links (default: the config hosts' "
     "injection)",
     .letter = 'I'},
    {"forwarding", cli_row_choice, O(q.forwarding), "host|nic",
     "with --injection: host (relayed bytes cross the host, default) or nic (they do not)",
     .expect = "host or nic", .letter = 'W', .choices = forwardings},
    {"chunks", cli_row_u32, O(q.chunks), "P", "split each shard into P equal chunks", 1, 1000000,
     .letter = 'P'},
    {"overlap", NULL, O(q.overlap), NULL, "WDM: pre-tune MRRs for the next stage while idle",
     .letter = 'O'},
    {"lowering", p_lowering, O(q.lowering), "L", "(the lowerings' table)", .letter = 'L'},
    {"steps-try", cli_row_duration, O(q.steps_try), "T",
     "how long that default gives the time-stepped MCF (5s; at most half of --time-limit)", 1e-9,
     1e9, "must be above 0", .letter = 'S'},
    {"variant", p_variant, O(q.variant), "V",
     "swing / recursive-doubling: auto (default), bandwidth, latency", .letter = 'V'},
    {"hop-latency", cli_row_duration, O(q.hop_latency), "T",
     "swing and its baselines: latency per hop, e.g. 400ns", .letter = 'H'},
    {"hops", cli_row_u32, O(x.hops), "T", "fluid: the hop limit T of LP 4.2 (default: searched)", 1,
     64},
    {"epsilon", p_epsilon, O(x.epsilon), "E",
     "fluid: without --alpha, the least K chunks whose latency is within E of the fluid "
     "optimum (default 0.1)"},
    {"method", opt_str, O(x.method), "M",
     "fluid: mirrored (one pricing problem per orbit of the servers' symmetries; the default "
     "where all servers share a template and the collective has no root), dw (plain "
     "Dantzig-Wolfe, the default otherwise) or full (one LP)"},
    {"root", opt_str, O(x.root), "NAME",
     "fluid broadcast/reduce: the root vertex (default the first GPU)"},
    {"bound-any-hops", NULL, O(x.bound_any_hops), NULL,
     "fluid: also LP 4.2 with its layers summed at R*, whose optimum bounds the objective of "
     "every hop limit: met, T is enough; a target below it is out of reach at R*"},
    {"fail", opt_str, O(q.fail), "ITEMS",
     "take failures out of the topology: U-V a link (both directions), U>V one arc, U a whole "
     "node (it takes no part; the others run the collective among themselves), "
     "comma-separated (0-1,5-6,9); each schedule is priced against the healthy topology too "
     "(solved first: its all-to-all MCF warm-starts the degraded one, whose --time-limit it "
     "is not held to)"},
    {"threads", cli_row_u32, O(q.threads), "N",
     "worker threads (default 0: the CPUs ofc may run on)", 0, 64, .letter = 't'},
    {"time-limit", p_time_limit, O(q.time_limit), "T",
     "the whole request: past T it stops with \"time limit T reached in PHASE\" (exit 1); "
     "all-to-all mcf and fluid stop column generation at T instead (default 60s; 0 = none for "
     "mcf) with the result certified within a reported gap"},
    {"max-memory", cli_row_size, O(q.max_memory), "M",
     "refuse (exit 1), with the estimate and what would fit, a request or an -o export (pb, "
     "msccl) that would hold more than M (default: half the machine's memory)"},
    {"reduced", p_reduced, O(q.reduced), NULL,
     "up to 65,536 nodes: bfb, swing (tori) or alltoall mcf (any lowering), direct or "
     "sp-balanced (4,096; single and sp-balanced balanced by port loads) on a torus, "
     "hypercube, circulant, ring, Hamming, complete or bipartite graph: node 0's program "
     "(swing: 2^D nodes') and the translation group that maps it to every node, checked by "
     "the same symmetry; the baselines where they have such a form: torus-rings and bucket, "
     "recursive on a hypercube, recursive-doubling (XOR on the ids), ring and bidir-ring on a "
     "torus with an even side >= 4 (its Gray cycle, under 2 e_j), else refused with the "
     "reason; without it, only what the explicit schedule cannot hold is reduced (bfb, swing, "
     "mcf, direct, sp-balanced; these baselines above 1,024 nodes), and the command says so. "
     "On a WDM ring config: OpTree's all-gather on an even plan, stage 1 whole and stage i "
     "repeated every n_(i-1) nodes (reduced by itself above 8,192 nodes)"},
    {"lp-solver", cli_row_lp_solver, O(q.lp_solver), "lpsolve|clp",
     "lpsolve or clp: the solver of every LP the request solves (BFB's LP, the all-to-all "
     "MCF, the fluid engine and its bound, the WDM relaxation; the WDM ILP is lp_solve's); "
     "default: the config's lp_solver, else each LP's own"},
    {"json", NULL, O(p.json), NULL, "print the summary as JSON", .letter = 'j'},
    {"format", opt_str, O(format), "text|json|pb|msccl",
     "with -o: the whole schedule as text, json or pb, or as an MSCCL XML program (msccl, "
     "direct-connect; docs/msccl.md); without --format OUT's extension says which (.txt, "
     ".json, .pb, .xml), else json",
     .letter = 'f'},
    {"output", opt_str, O(p.output), "OUT", "write the whole schedule to OUT (- for stdout)",
     .flags = OPT_SHORT, .letter = 'o'},
    {"msccl-runtime", cli_row_choice, O(p.msccl_runtime), "executor|legacy",
     "the runtime the MSCCL program is for, whose limits it is written within: executor "
     "(msccl-executor-nccl, 64 steps a thread block; default) or legacy (256)",
     .expect = "executor or legacy", .choices = runtimes},
    CLI_OPT_HELP,
    {NULL},
};
#undef O

const struct cli_table schedule_cli_table = {"schedule", schedule_table,
					     sizeof(struct schedule_cmd)};

/* --help: the lowerings' paragraph and the engines' list from their
 * tables, into a copy of the rows. */
static int schedule_help(const struct cli_cmd *cmd)
{
	struct opt rows[ARRAY_SIZE(schedule_table)];
	struct strbuf low = STRBUF_INIT, sb = STRBUF_INIT;
	struct cli_opts o = {rows, help_head, NULL};

	memcpy(rows, schedule_table, sizeof(rows));
	schedule_lowerings_help(&low, "", "", 100000);
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++)
		if (rows[i].name && strcmp(rows[i].name, "lowering") == 0)
			rows[i].help = low.buf;
	cli_help_opts(cmd, &o);
	schedule_algorithms_help(&sb, "  ", 79);
	printf("\nThe algorithms (--algo):\n%s", sb.buf);
	sb_free(&low);
	sb_free(&sb);
	return 0;
}

/* The ring family's refusal that comes before any work: -o names one file. */
static bool ring_request(const struct schedule_query *q)
{
	return q->ring || (!q->spec && q->fabric && q->fabric->nrings);
}

int cli_schedule(const struct schedule_print *p, const struct schedule_query *q)
{
	struct schedule_result r;
	struct ofc_error err = {0};
	bool spec_error;
	int rc;

	if (ring_request(q) && q->algorithm &&
	    schedule_algorithm_compares(q->algorithm, ENGINE_RING) && p->output)
		return cli_usage_error(p->cmd, "-o writes one schedule: pick one --algo");
	/* An MSCCL program names a GPU's peers and channels; a WDM ring's
	 * steps are lightpaths on wavelengths, which it has no place for. */
	if (ring_request(q) && p->output && p->format == FMT_MSCCL)
		return cli_usage_error(p->cmd,
				       "--format msccl is for direct-connect schedules; a "
				       "WDM ring's schedule is written as json, text or pb");
	rc = schedule_compute(q, &r, &spec_error, &err);
	cli_progress_clear(q->clock);
	if (rc < 0) {
		/* (Inside an edge-list file the error is FILE:LINE:COL, below.) */
		if (spec_error && !err.line) {
			char why[1024];

			fprintf(stderr, "ofc %s: invalid topology %s\n", p->cmd->name,
				topo_spec_error(why, sizeof(why), q->spec, &err));
			return ofc_error_exit_code(&err);
		}
		if (err.code == OFC_E_USAGE)
			return cli_usage_error(p->cmd, "%s%s%s", err.file, err.file[0] ? ": " : "",
					       err.msg);
		return cli_fail(&err);
	}
	if (r.note[0])
		fprintf(stderr, "ofc %s: %s\n", p->cmd->name, r.note);
	if (r.main->applies && r.main->have && p->output &&
	    cli_export_check(p, schedule_memory_limit(q), &r.main->s, &err) < 0) {
		schedule_result_free(&r);
		return cli_fail(&err);
	}
	if (!r.main->applies && !(r.kind == SCHEDULE_RING && r.compare)) {
		/* The chosen algorithm cannot run on this topology or input. */
		if (r.kind == SCHEDULE_DIRECT) {
			/* Exit 2 when it cannot apply; 1 when it could but did not
			 * finish (out of the memory limit, the LP failing). */
			fprintf(stderr, "ofc %s: %s: %s\n", p->cmd->name, r.main->algo,
				r.main->why);
			rc = r.main->why_code == OFC_E_RUNTIME ? 1 : 2;
		} else if (r.main->why_code == OFC_E_RUNTIME) {
			fprintf(stderr, "ofc %s: %s\n", p->cmd->name, r.main->why);
			rc = 1;
		} else {
			rc = cli_usage_error(p->cmd, "%s", r.main->why);
		}
	} else {
		rc = r.kind == SCHEDULE_RING ? print_ring(p, &r) : print_direct(p, &r);
	}
	schedule_result_free(&r);
	return rc;
}

/* Options into the request; returns -1 to go on, else the exit status. */
static int parse_options(const struct cli_cmd *cmd, int argc, char **argv, struct schedule_cmd *c,
			 const char **file)
{
	static const struct cli_opts opts = {schedule_table, help_head, schedule_help};
	struct schedule_query *q = &c->q;
	struct schedule_print *p = &c->p;
	int first, rc;

	if (!cli_parse(cmd, &opts, argc, argv, c, &first, &rc))
		return rc;
	if (first < argc - 1)
		return cli_usage_error(cmd, "too many arguments");
	*file = first < argc ? argv[first] : NULL;
	if (!*file == !q->spec)
		return cli_usage_error(cmd, "give a config FILE or --topology SPEC (one of them)");
	if (!c->collective_set)
		return cli_usage_error(cmd, "missing --collective");
	if (c->demand && q->collective != SCHED_ALLTOALL)
		return cli_usage_error(cmd, "--demand-matrix goes with --collective alltoall");
	if (c->format && !p->output) {
		/* pb alone goes to stdout when it is not a terminal (README's
		 * conventions), the summary to stderr as with -o - */
		if (strcmp(c->format, "pb") != 0)
			return cli_usage_error(cmd, "--format %s needs -o OUT (-o - for stdout)",
					       c->format);
		if (cli_binary_to_terminal(cmd))
			return 2;
		p->output = "-";
	}
	if (cli_output_format(cmd, "-o", p->output, c->format, NULL,
			      FMT_TEXT | FMT_JSON | FMT_PB | FMT_MSCCL, FMT_JSON, &p->format))
		return 2;
	return -1;
}

/* An MCF all-to-all written as an MSCCL program, its lowering not given:
 * paths, the cost model's choice for a program. Priced cut-through, an
 * alpha a circuit of its longest route where hosts forward and its
 * busiest link over all steps, it is never slower than the time-stepped
 * default (no more circuits than steps, no more bytes than the steps'
 * busiest links summed), and it is a send per path rather than one per
 * time step: torus:8x8's default program is 8,033 XML nodes a rank, over
 * msccl-executor-nccl's 4,095, and its paths' 1,381. */
static void msccl_lowering(const struct schedule_print *p, struct schedule_query *q)
{
	if (p->format != FMT_MSCCL || q->collective != SCHED_ALLTOALL || q->lowering ||
	    (q->algorithm && strcmp(q->algorithm, "mcf") != 0))
		return;
	q->lowering = "paths";
	fprintf(stderr, "ofc schedule: MSCCL program: the all-to-all lowered to paths (as fast "
			"as time steps in the cost model, a send per path; --lowering steps "
			"for the other)\n");
}

int cmd_schedule(const struct cli_cmd *cmd, int argc, char **argv)
{
	struct schedule_cmd c = {.q = {.reduced = SCHEDULE_REDUCED_AUTO},
				 .p = {.cmd = cmd, .format = FMT_JSON}};
	struct fabric *f = NULL;
	struct ofc_error err = {0};
	const char *file = NULL, *demand_file;
	double *demand = NULL;
	int rc = parse_options(cmd, argc, argv, &c, &file);

	if (rc >= 0)
		return rc;
	demand_file = c.demand;
	if (demand_file) {
		double mean;
		bool uniform;

		if (matrix_read(demand_file, A2A_MAX_NODES, &demand, &c.q.demand_n, &err) < 0 ||
		    schedule_demand_normalise(demand, c.q.demand_n, &mean, &uniform, &err) < 0) {
			if (!err.file[0])
				snprintf(err.file, sizeof(err.file), "%s", demand_file);
			free(demand);
			return cli_fail(&err);
		}
		c.q.demand = uniform ? NULL : demand;
	}
	if (file) {
		if (fabric_open(file, &f, &err) < 0)
			return cli_fail(&err);
		c.q.fabric = f;
	}
	if (c.q.time_limit > 0)
		c.x.time_limit = c.q.time_limit;
	/* The whole request's deadline (--time-limit) and, for people
	 * watching, a progress line on stderr. */
	struct ofc_clock clk;
	struct cli_progress prog;
	cli_clock_init(&clk, &prog, cmd, c.q.time_limit, c.p.json);
	c.q.clock = &clk;
	/* A server fabric is scheduled by the fluid engine (its default). */
	bool fluid = schedule_fluid_request(&c.q);
	if (fluid && c.q.fail)
		rc = cli_usage_error(cmd, "--fail is for direct-connect topologies, not the "
					  "fluid engine's server fabrics");
	else if (fluid && c.q.reduced == SCHEDULE_REDUCED_ALWAYS)
		rc = cli_usage_error(cmd, "--reduced is for BFB on direct-connect topologies, not "
					  "the fluid engine's server fabrics");
	else if (fluid)
		rc = cli_schedule_fluid(&c.p, &c.q, &c.x);
	else if (c.x.hops || c.x.epsilon > 0 || c.x.method || c.x.root || c.x.bound_any_hops)
		rc =
		    cli_usage_error(cmd, "--hops, --epsilon, --method, --root and --bound-any-hops "
					 "are for --algo fluid on a server fabric");
	else if (c.q.collective == SCHED_BROADCAST || c.q.collective == SCHED_REDUCE)
		rc = cli_usage_error(cmd,
				     "%s is scheduled by the fluid engine on a server fabric "
				     "(--algo fluid)",
				     sched_collective_name(c.q.collective));
	else {
		msccl_lowering(&c.p, &c.q);
		rc = cli_schedule(&c.p, &c.q);
	}
	cli_progress_clear(&clk);
	fabric_free(f);
	free(demand);
	return rc;
}
