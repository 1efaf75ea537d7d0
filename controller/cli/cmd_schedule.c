/* ofc schedule: options into a schedule_query, the pipeline
 * (controller/schedule), and the printers of its two families. */
#include "alltoall/alltoall.h"
#include "controller/cli/internal.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char help_head[] =
    "FILE is a fabric config: a WDM ring in it gets ring schedules, a topology\n"
    "gets direct-connect schedules, servers get the fluid engine's (--algo fluid:\n"
    "LP 4.2's optimum R*, Theorem 4's schedule of K chunks; docs/fluid.md).\n"
    "--topology SPEC schedules on a topology alone (edges:FILE: an edge list).\n\n"
    "  --collective C   allgather, reduce-scatter, allreduce or alltoall (fluid:\n"
    "                   also broadcast and reduce)\n"
    "  --algo A         the algorithm, or 'all' to compare them (default: the\n"
    "                   config's algorithm for the collective, else bfb, mcf for\n"
    "                   alltoall; on a WDM ring optree, onestage for alltoall):\n";
/* (the engines, from the engine table: schedule_algorithms_help) */
static const char help_tail[] =
    "  --size M         data per node, e.g. 64MiB (default: the config's collective)\n"
    "  --alpha T        latency per step, e.g. 10us (default: the config's, or 10us)\n"
    "  --bandwidth B    a node's egress bandwidth, e.g. 100Gbps\n"
    "  --demand-matrix FILE  alltoall: what each node sends each other, N lines of\n"
    "                   N numbers (relative; row s, column t: s to t; the\n"
    "                   diagonal is not read); the MCF then maximises theta with\n"
    "                   every pair at theta x its demand, the mean pair sending\n"
    "                   M/N (a uniform matrix is the plain all-to-all)\n"
    "  --injection I    alltoall: a host's injection bandwidth, below d links\n"
    "                   (default: the config hosts' injection)\n"
    "  --forwarding F   with --injection: host (relayed bytes cross the host,\n"
    "                   default) or nic (they do not)\n"
    "  --chunks P       split each shard into P equal chunks\n"
    "  --overlap        WDM: pre-tune MRRs for the next stage while idle\n"
    "  --json           print the summary as JSON\n"
    "  --format F -o OUT  write the whole schedule (text, json or pb), or as an\n"
    "                   MSCCL XML program (msccl, direct-connect; docs/msccl.md);\n"
    "                   without --format OUT's extension says which (.txt, .json,\n"
    "                   .pb, .xml), else json\n"
    "  --msccl-runtime R  the runtime the MSCCL program is for, whose limits it\n"
    "                   is written within: executor (msccl-executor-nccl, 64\n"
    "                   steps a thread block; default) or legacy (256)\n"
    "  --threads N      worker threads (default: the CPUs ofc may run on)\n";
/* (--lowering's paragraph, from the lowerings' table: schedule_lowerings_help) */
static const char help_end[] =
    "  --steps-try T    how long that default gives the time-stepped MCF (5s;\n"
    "                   at most half of --time-limit)\n"
    "  --variant V      swing / recursive-doubling: auto (default), bandwidth, latency\n"
    "  --hop-latency T  swing and its baselines: latency per hop, e.g. 400ns\n"
    "  --time-limit T   the whole request: past T it stops with \"time limit T\n"
    "                   reached in PHASE\" (exit 1); all-to-all mcf and fluid stop\n"
    "                   column generation at T instead (default 60s; 0 = none for\n"
    "                   mcf) with the result certified within a reported gap\n"
    "  --hops T         fluid: the hop limit T of LP 4.2 (default: searched)\n"
    "  --epsilon E      fluid: without --alpha, the least K chunks whose latency\n"
    "                   is within E of the fluid optimum (default 0.1)\n"
    "  --method M       fluid: mirrored (one pricing problem per orbit of the\n"
    "                   servers' symmetries; the default where all servers share\n"
    "                   a template and the collective has no root), dw (plain\n"
    "                   Dantzig-Wolfe, the default otherwise) or full (one LP)\n"
    "  --root NAME      fluid broadcast/reduce: the root vertex (default the first GPU)\n"
    "  --bound-any-hops fluid: also LP 4.2 with its layers summed at R*, whose\n"
    "                   optimum bounds the objective of every hop limit: met, T\n"
    "                   is enough; a target below it is out of reach at R*\n"
    "  --lp-solver S    lpsolve or clp: the solver of every LP the request solves\n"
    "                   (BFB's LP, the all-to-all MCF, the fluid engine and its\n"
    "                   bound, the WDM relaxation; the WDM ILP is lp_solve's);\n"
    "                   default: the config's lp_solver, else each LP's own\n"
    "  --fail ITEMS     take failures out of the topology: U-V a link (both\n"
    "                   directions), U>V one arc, U a whole node (it takes no\n"
    "                   part; the others run the collective among themselves),\n"
    "                   comma-separated (0-1,5-6,9); each schedule is priced\n"
    "                   against the healthy topology too (solved first: its\n"
    "                   all-to-all MCF warm-starts the degraded one, whose\n"
    "                   --time-limit it is not held to)\n"
    "  --max-memory M   refuse (exit 1), with the estimate and what would fit, a\n"
    "                   request or an -o export (pb, msccl) that would hold more\n"
    "                   than M (default: half the machine's memory)\n"
    "  --reduced        up to 65,536 nodes: bfb, swing (tori) or alltoall mcf\n"
    "                   (any lowering), direct or sp-balanced (4,096; single\n"
    "                   and sp-balanced balanced by port loads) on a torus,\n"
    "                   hypercube, circulant, ring, Hamming, complete or\n"
    "                   bipartite graph: node 0's program (swing: 2^D nodes')\n"
    "                   and the translation group that maps it to every node,\n"
    "                   checked by the same symmetry; the baselines where they\n"
    "                   have such a form: torus-rings and bucket, recursive on a\n"
    "                   hypercube, recursive-doubling (XOR on the ids), ring and\n"
    "                   bidir-ring on a torus with an even side >= 4 (its Gray\n"
    "                   cycle, under 2 e_j), else refused with the reason;\n"
    "                   without it, only what the explicit schedule cannot hold\n"
    "                   is reduced (bfb, swing, mcf, direct, sp-balanced;\n"
    "                   these baselines above 1,024 nodes), and the command says\n"
    "                   so. On a WDM ring config: OpTree's all-gather on an even\n"
    "                   plan, stage 1 whole and stage i repeated every n_(i-1)\n"
    "                   nodes (reduced by itself above 8,192 nodes)\n"
    "On a terminal a line on stderr shows the phase and the seconds so far.\n";

/* --help: the engines' list between the options' text, from the table. */
static int schedule_help(const struct cli_cmd *cmd)
{
	struct strbuf sb = STRBUF_INIT;
	int rc;

	sb_puts(&sb, help_head);
	schedule_algorithms_help(&sb, "                   ", 79);
	sb_puts(&sb, help_tail);
	/* (its lines as they were written, at most 78 columns) */
	schedule_lowerings_help(&sb, "  --lowering L     ", "                   ", 78);
	sb_puts(&sb, help_end);
	rc = cli_help(cmd, sb.buf);
	sb_free(&sb);
	return rc;
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

/* What the options fill in, and what is checked after them. */
struct schedule_args {
	struct schedule_query *q;
	struct schedule_print *p;
	struct fluid_query *x;
	const char *format;
	const char *demand;
	bool collective_set;
};

/* --lowering L: -1 to go on, else the exit status. */
static int lowering_option(const struct cli_cmd *cmd, const char *arg, struct schedule_query *q)
{
	if (!a2a_lowering_find(arg)) {
		struct strbuf sb = STRBUF_INIT;

		a2a_lowering_names(&sb, false, " or ");
		cli_usage_error(cmd, "--lowering is %s", sb.buf);
		sb_free(&sb);
		return 2;
	}
	q->lowering = arg;
	return -1;
}

/* One option into a: -1 to go on, else the exit status. */
static int schedule_option(const struct cli_cmd *cmd, int c, const char *arg,
			   struct schedule_args *a)
{
	switch (c) {
	case 'T':
		a->q->spec = arg;
		break;
	case 'F':
		a->q->fail = arg;
		break;
	case 'D':
		a->demand = arg;
		break;
	case 'c':
		/* The rooted collectives: the fluid engine's alone. */
		if (strcmp(arg, "broadcast") == 0)
			a->q->collective = SCHED_BROADCAST;
		else if (strcmp(arg, "reduce") == 0)
			a->q->collective = SCHED_REDUCE;
		else if (sched_collective_parse(arg, &a->q->collective) < 0)
			return cli_usage_error(cmd,
					       "unknown collective '%s' (allgather, "
					       "reduce-scatter, allreduce, alltoall)",
					       arg);
		a->collective_set = true;
		break;
	case 'a':
		a->q->algorithm = arg;
		break;
	case 's':
		if (cli_opt_size(cmd, "size", arg, &a->q->size))
			return 2;
		break;
	case 'A':
		if (cli_opt_duration(cmd, "alpha", arg, &a->q->alpha))
			return 2;
		a->q->alpha_set = true;
		break;
	case 'B':
		if (cli_opt_rate(cmd, "bandwidth", arg, &a->q->bandwidth))
			return 2;
		a->q->bandwidth_set = true;
		break;
	case 'I':
		if (cli_opt_rate(cmd, "injection", arg, &a->q->injection))
			return 2;
		break;
	case 'W':
		if (strcmp(arg, "host") && strcmp(arg, "nic"))
			return cli_usage_error(cmd, "--forwarding is host or nic");
		a->q->forwarding = 1 + (strcmp(arg, "nic") == 0 ? NIC_FORWARDING : HOST_FORWARDING);
		break;
	case 'P':
		if (cli_opt_u32(cmd, "chunks", arg, 1, 1000000, NULL, &a->q->chunks))
			return 2;
		break;
	case 'O':
		a->q->overlap = true;
		break;
	case 'j':
		a->p->json = true;
		break;
	case 'f':
		a->format = arg;
		break;
	case 'X':
		if (strcmp(arg, "executor") != 0 && strcmp(arg, "legacy") != 0)
			return cli_usage_error(cmd, "--msccl-runtime is executor or legacy");
		a->p->msccl_runtime = strcmp(arg, "legacy") == 0 ? MSCCL_LEGACY : MSCCL_EXECUTOR;
		break;
	case 'o':
		a->p->output = arg;
		break;
	case 't':
		if (parse_u32(arg, &a->q->threads) < 0 || a->q->threads > 64)
			return cli_usage_error(cmd, "--threads must be 0..64");
		break;
	case 'L':
		return lowering_option(cmd, arg, a->q);
	case 'S':
		if (cli_opt_duration(cmd, "steps-try", arg, &a->q->steps_try))
			return 2;
		if (!(a->q->steps_try > 0))
			return cli_usage_error(cmd, "--steps-try must be above 0");
		break;
	case 'V':
		if (strcmp(arg, "auto") && strcmp(arg, "bandwidth") && strcmp(arg, "latency"))
			return cli_usage_error(cmd, "--variant is auto, bandwidth or latency");
		a->q->variant = arg;
		break;
	case 'H':
		if (cli_opt_duration(cmd, "hop-latency", arg, &a->q->hop_latency))
			return 2;
		break;
	case 'l':
		if (cli_opt_duration(cmd, "time-limit", arg, &a->q->time_limit))
			return 2;
		if (a->q->time_limit == 0)
			a->q->time_limit = -1; /* none */
		break;
	case 'Y':
		if (parse_u32(arg, &a->x->hops) < 0 || a->x->hops < 1 || a->x->hops > 64)
			return cli_usage_error(cmd, "--hops must be 1..64, got '%s'", arg);
		break;
	case 'E': {
		char *end;

		a->x->epsilon = strtod(arg, &end);
		if (*end || end == arg || !(a->x->epsilon > 0) || a->x->epsilon > 10)
			return cli_usage_error(cmd,
					       "--epsilon must be a number in (0, 10], "
					       "got '%s'",
					       arg);
		break;
	}
	case 'm':
		a->x->method = arg;
		break;
	case 'R':
		a->x->root = arg;
		break;
	case 'K':
		a->x->bound_any_hops = true;
		break;
	case 'r':
		a->q->reduced = SCHEDULE_REDUCED_ALWAYS;
		break;
	case 'Q':
		if (lp_solver_parse(arg, &a->q->lp_solver) < 0)
			return cli_usage_error(cmd, "--lp-solver is lpsolve or clp, got '%s'", arg);
		break;
	case 'M': {
		const char *why = NULL;

		if (parse_size(arg, &a->q->max_memory, &why) < 0 || a->q->max_memory == 0)
			return cli_usage_error(cmd, "bad --max-memory '%s': %s", arg,
					       why ? why : "must be more than 0");
		break;
	}
	}
	return -1;
}

/* Options into the request; returns -1 to go on, else the exit status. */
static int parse_options(const struct cli_cmd *cmd, int argc, char **argv, struct schedule_query *q,
			 struct schedule_print *p, struct fluid_query *x, const char **file,
			 const char **demand)
{
	static const struct option opts[] = {
	    {"topology", required_argument, NULL, 'T'},
	    {"fail", required_argument, NULL, 'F'},
	    {"demand-matrix", required_argument, NULL, 'D'},
	    {"collective", required_argument, NULL, 'c'},
	    {"algo", required_argument, NULL, 'a'},
	    {"size", required_argument, NULL, 's'},
	    {"alpha", required_argument, NULL, 'A'},
	    {"bandwidth", required_argument, NULL, 'B'},
	    {"injection", required_argument, NULL, 'I'},
	    {"forwarding", required_argument, NULL, 'W'},
	    {"chunks", required_argument, NULL, 'P'},
	    {"overlap", no_argument, NULL, 'O'},
	    {"json", no_argument, NULL, 'j'},
	    {"format", required_argument, NULL, 'f'},
	    {"msccl-runtime", required_argument, NULL, 'X'},
	    {"output", required_argument, NULL, 'o'},
	    {"threads", required_argument, NULL, 't'},
	    {"lowering", required_argument, NULL, 'L'},
	    {"steps-try", required_argument, NULL, 'S'},
	    {"variant", required_argument, NULL, 'V'},
	    {"hop-latency", required_argument, NULL, 'H'},
	    {"time-limit", required_argument, NULL, 'l'},
	    {"max-memory", required_argument, NULL, 'M'},
	    {"hops", required_argument, NULL, 'Y'},
	    {"epsilon", required_argument, NULL, 'E'},
	    {"method", required_argument, NULL, 'm'},
	    {"root", required_argument, NULL, 'R'},
	    {"bound-any-hops", no_argument, NULL, 'K'},
	    {"reduced", no_argument, NULL, 'r'},
	    {"lp-solver", required_argument, NULL, 'Q'},
	    {"help", no_argument, NULL, 'h'},
	    {0},
	};
	struct schedule_args a = {.q = q, .p = p, .x = x};
	int c, rc;

	while ((c = cli_getopt(cmd, argc, argv, "T:c:a:s:A:B:I:W:P:Ojf:o:t:L:V:H:h", opts)) != -1) {
		if (c == -2)
			return 2;
		if (c == 'h')
			return schedule_help(cmd);
		if ((rc = schedule_option(cmd, c, optarg, &a)) >= 0)
			return rc;
	}
	if (optind < argc - 1)
		return cli_usage_error(cmd, "too many arguments");
	*file = optind < argc ? argv[optind] : NULL;
	if (!*file == !q->spec)
		return cli_usage_error(cmd, "give a config FILE or --topology SPEC (one of them)");
	if (!a.collective_set)
		return cli_usage_error(cmd, "missing --collective");
	if (a.demand && q->collective != SCHED_ALLTOALL)
		return cli_usage_error(cmd, "--demand-matrix goes with --collective alltoall");
	*demand = a.demand;
	if (a.format && !p->output) {
		/* pb alone goes to stdout when it is not a terminal (README's
		 * conventions), the summary to stderr as with -o - */
		if (strcmp(a.format, "pb") != 0)
			return cli_usage_error(cmd, "--format %s needs -o OUT (-o - for stdout)",
					       a.format);
		if (cli_binary_to_terminal(cmd))
			return 2;
		p->output = "-";
	}
	if (cli_output_format(cmd, "-o", p->output, a.format, NULL,
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
	struct schedule_query q = {.reduced = SCHEDULE_REDUCED_AUTO};
	struct schedule_print p = {.cmd = cmd, .format = FMT_JSON};
	struct fluid_query x = {0};
	struct fabric *f = NULL;
	struct ofc_error err = {0};
	const char *file = NULL, *demand_file = NULL;
	double *demand = NULL;
	int rc = parse_options(cmd, argc, argv, &q, &p, &x, &file, &demand_file);

	if (rc >= 0)
		return rc;
	if (demand_file) {
		double mean;
		bool uniform;

		if (matrix_read(demand_file, A2A_MAX_NODES, &demand, &q.demand_n, &err) < 0 ||
		    schedule_demand_normalise(demand, q.demand_n, &mean, &uniform, &err) < 0) {
			if (!err.file[0])
				snprintf(err.file, sizeof(err.file), "%s", demand_file);
			free(demand);
			return cli_fail(&err);
		}
		q.demand = uniform ? NULL : demand;
	}
	if (file) {
		if (fabric_open(file, &f, &err) < 0)
			return cli_fail(&err);
		q.fabric = f;
	}
	if (q.time_limit > 0)
		x.time_limit = q.time_limit;
	/* The whole request's deadline (--time-limit) and, for people
	 * watching, a progress line on stderr. */
	struct ofc_clock clk;
	struct cli_progress prog;
	cli_clock_init(&clk, &prog, cmd, q.time_limit, p.json);
	q.clock = &clk;
	/* A server fabric is scheduled by the fluid engine (its default). */
	bool fluid = schedule_fluid_request(&q);
	if (fluid && q.fail)
		rc = cli_usage_error(cmd, "--fail is for direct-connect topologies, not the "
					  "fluid engine's server fabrics");
	else if (fluid && q.reduced == SCHEDULE_REDUCED_ALWAYS)
		rc = cli_usage_error(cmd, "--reduced is for BFB on direct-connect topologies, not "
					  "the fluid engine's server fabrics");
	else if (fluid)
		rc = cli_schedule_fluid(&p, &q, &x);
	else if (x.hops || x.epsilon > 0 || x.method || x.root || x.bound_any_hops)
		rc =
		    cli_usage_error(cmd, "--hops, --epsilon, --method, --root and --bound-any-hops "
					 "are for --algo fluid on a server fabric");
	else if (q.collective == SCHED_BROADCAST || q.collective == SCHED_REDUCE)
		rc = cli_usage_error(cmd,
				     "%s is scheduled by the fluid engine on a server fabric "
				     "(--algo fluid)",
				     sched_collective_name(q.collective));
	else {
		msccl_lowering(&p, &q);
		rc = cli_schedule(&p, &q);
	}
	cli_progress_clear(&clk);
	fabric_free(f);
	free(demand);
	return rc;
}
