/* ofc testbed run FILE: execute schedules on the testbed's hosts (exec/),
 * one agent per host namespace over sockets on the circuits, check every
 * byte against the collective's result, and set the time measured beside
 * the cost model's prediction for the shaped links. */
#include "controller/cli/internal.h"
#include "controller/cli/remote.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "controller/export/export.h"
#include "drivers/drivers.h"
#include "exec/exec.h"
#include "proto/control.pb-c.h"

#define RUN_PORT 7462
#define MAX_RUNS 16

static const char help[] =
    "Runs each schedule with one agent per host namespace: TCP connections on the\n"
    "circuits the schedule uses, steps followed in order (relays and reductions\n"
    "included), every element checked against the collective's expected result.\n"
    "Prints the time measured, the testbed model's prediction (each step alpha plus\n"
    "its busiest circuit's bytes at what the circuits carry), their ratio, whether\n"
    "the model holds (within 15%) or which term is off, and the algorithm bandwidth\n"
    "(size / time). Exit 1 when a run fails or its data is wrong.\n"
    "circuit_MB is what crossed the circuits per collective (the veths' transmit\n"
    "counters, headers included): the proof that traffic took the links.\n";

struct run_args {
	struct fabric_cmd fc;
	struct schedule_query q;
	const char *schedule_file;
	double timeout;
	uint64_t drop;
	bool drop_set;
	uint32_t port;
	bool progress;
	bool mpi;
	bool steps;
	const char *workload, *way;
	uint32_t iterations;
	struct jobplan_overhead overhead;
	bool overhead_set;
	/* The circuits carry less than the shaping: what the ratios mean. */
	char carried_note[400];
	struct testbed_model model; /* what the runs are priced at */
	const char *topology;	    /* --topology SPEC: a what-if */
	const char *topo_spec;	    /* the topology run on, and why */
	const char *topo_from;
	const char *alpha_from; /* where model.alpha came from, said */
};

struct run_row {
	char algo[64];
	uint32_t steps;
	size_t transfers;
	bool verified;
	char verify_error[320];
	char error[600];
	/* What ran and the model's price (predicted NaN: unpriced), as
	 * testbed_run_schedule leaves it; MPICH's row fills what it has. */
	struct testbed_run run;
};

static int p_alpha(const struct opt *row, const char *arg, void *base, struct ofc_error *err)
{
	((struct run_args *)base)->q.alpha_set = true;
	return cli_row_duration(row, arg, base, err);
}

static int p_drop(const struct opt *row, const char *arg, void *base, struct ofc_error *err)
{
	struct run_args *a = base;

	if (parse_u64(arg, &a->drop) < 0)
		return ofc_error_set(err, OFC_E_USAGE, "bad --%s '%s': expected a transfer's index",
				     row->name, arg);
	a->drop_set = true;
	return 0;
}

static int p_way(const struct opt *row, const char *arg, void *base, struct ofc_error *err)
{
	(void)row;
	if (strcmp(arg, "static") && strcmp(arg, "per-phase") && strcmp(arg, "chosen") &&
	    strcmp(arg, "all"))
		return ofc_error_set(err, OFC_E_USAGE, "--way is static, per-phase, chosen or all");
	((struct run_args *)base)->way = arg;
	return 0;
}

static int p_overhead(const struct opt *row, const char *arg, void *base, struct ofc_error *err)
{
	struct run_args *a = base;

	(void)row;
	if (cli_parse_overhead(arg, &a->overhead, err) < 0)
		return -1;
	a->overhead_set = true;
	return 0;
}

/* (offsets into struct run_args: fabric_cmd_parse parses into its fc) */
_Static_assert(offsetof(struct run_args, fc) == 0, "the rows' base is the fabric_cmd");
#define O(f) offsetof(struct run_args, f)
static const struct opt run_table[] = {
    {"collective", cli_row_collective, O(q.collective), "C",
     "allgather, reduce-scatter, allreduce or alltoall", .alt = 2, .flags = OPT_REQUIRED},
    {"algo", opt_str, O(q.algorithm), "A",
     "an algorithm of 'ofc schedule', or 'all' (default bfb, mcf for alltoall)",
     .under = "collective", .alt = 3},
    {"size", cli_row_size, O(q.size), "M", "data per host (default 1MiB)"},
    {"chunks", cli_row_u32, O(q.chunks), "P", "BFB: split each shard into P chunks", 1, 4096},
    {"lowering", opt_str, O(q.lowering), "L", "all-to-all mcf: steps, paths or single"},
    {"schedule", opt_str, O(schedule_file), "FILE",
     "run this exported schedule (ofc schedule --format pb)", .under = "collective", .alt = 3},
    {"topology", opt_str, O(topology), "SPEC",
     "a what-if: apply SPEC to the switches and the testbed for the runs, and the topology "
     "before again after (without it the runs are for the topology committed: the record's "
     "when a transaction applied another than FILE's)",
     .under = "collective"},
    {"alpha", p_alpha, O(q.alpha), "T",
     "the model's cost of a step (default: what testbed check calibrated, else the link "
     "latency + 100us)"},
    {"timeout", cli_row_duration, O(timeout), "T",
     "give up after T per run, reading and setting up included (default 10min)", 1e-9, 1e9,
     "must be more than 0"},
    {"max-memory", cli_row_size, O(q.max_memory), "M",
     "refuse (exit 1), with the estimate, a run that would take more (default: half the "
     "machine's memory)"},
    {"drop-transfer", p_drop, O(drop), "K",
     "remove transfer K (0-based) before running: a broken schedule, to see the data check "
     "catch it"},
    {"port", cli_row_u32, O(port), "N", "TCP port the agents listen on (default 7462)", 1, 65535},
    {"steps", NULL, O(steps), NULL,
     "per step: the time measured (the last host to finish it) beside the model's (alpha + "
     "the busiest link's data)"},
    {"mpi", NULL, O(mpi), NULL,
     "also run MPICH's own collective on the same hosts and links (one rank per host "
     "namespace, UCX over TCP on the circuits' routes; the mean of 3 after a warm-up)",
     .under = "collective"},
    {"workload", opt_str, O(workload), "W",
     "run a training job's plan instead (docs/workload.md): W a workload file, or 'config'; "
     "each way (static, per-phase, chosen) its iterations, the circuits applied before each "
     "phase whose topology is not up, measured against predicted per phase, per switching "
     "and per iteration",
     .alt = 2},
    {"iterations", cli_row_u32, O(iterations), "K",
     "with --workload: iterations of each way (default 1)", 1, 1000, .under = "workload"},
    {"way", p_way, O(way), "static|per-phase|chosen|all",
     "with --workload: static, per-phase, chosen or all (default)", .under = "workload"},
    {"switch-overhead", p_overhead, O(overhead), "T,C",
     "with --workload: price a switching's controller work as T a transaction and C a "
     "changed circuit (default: measured here first, by transactions to the ways' topologies "
     "and back)",
     .under = "workload"},
    {NULL},
};
#undef O

const struct cli_table run_cli_table = {"testbed run", run_table, sizeof(struct run_args)};

static void show_progress(void *ctx, uint32_t step, uint32_t nsteps, double seconds)
{
	const char *algo = ctx;

	fprintf(stderr, "\r  %s: step %u of %u, %.1f s ", algo, step, nsteps, seconds);
}

/* Drop transfer k: the steps after it shift down by one. */
static void drop_transfer(struct schedule *s, uint64_t k)
{
	if (k >= s->nxfers)
		return;
	memmove(&s->xfers[k], &s->xfers[k + 1], (s->nxfers - k - 1) * sizeof(*s->xfers));
	s->nxfers--;
	for (uint32_t t = 1; t <= s->nsteps; t++)
		if (s->step_start[t] > k)
			s->step_start[t]--;
	s->verified = false;
}

/* s run and judged by the testbed's one path (testbed_run_schedule, as
 * ofcd's TestbedRun runs it), into row; --drop-transfer breaks it first. */
static void execute(struct run_args *a, const struct testbed_net *t, struct schedule *s,
		    const struct ofc_clock *clock, struct run_row *row)
{
	struct testbed_run_opts o = {.size = a->q.size,
				     .deadline = clock->deadline,
				     .max_memory = schedule_memory_limit(&a->q),
				     .port = (uint16_t)a->port,
				     .step_times = a->steps,
				     .progress = a->progress ? show_progress : NULL,
				     .ctx = row->algo};
	struct ofc_error err = {0};

	if (a->drop_set) {
		if (a->drop >= s->nxfers) {
			snprintf(row->error, sizeof(row->error),
				 "--drop-transfer %llu: the schedule has %zu transfers",
				 (unsigned long long)a->drop, s->nxfers);
			return;
		}
		drop_transfer(s, a->drop);
		/* What the verifier says of the broken schedule (semantics only:
		 * the lanes are checked against the circuits by the run). */
		struct verify_opts vo = {0};
		struct verify_report vr;

		row->verified = sched_verify(s, &vo, &vr) == 0;
		if (!row->verified)
			snprintf(row->verify_error, sizeof(row->verify_error), "%s", vr.error);
	}
	row->steps = s->nsteps;
	row->transfers = s->nxfers;
	if (testbed_run_schedule(s, t, &a->model, &o, &row->run, &err) < 0)
		ofc_error_str(&err, row->error, sizeof(row->error));
	if (a->progress)
		fprintf(stderr, "\r%60s\r", "");
}

/* One computed schedule: algorithm name as 'ofc schedule --algo all' lists
 * it ("mcf/paths" is mcf with the paths lowering). */
/* A run's clock: --timeout from now, reading and setting up included. */
static void run_clock(const struct run_args *a, struct ofc_clock *c)
{
	*c = (struct ofc_clock){.start = now_seconds(), .limit = a->timeout};
	c->deadline = c->start + a->timeout;
}

static void run_computed(struct run_args *a, const struct testbed_net *t, const char *name,
			 struct run_row *row)
{
	struct schedule_query q = a->q;
	struct schedule_result r;
	struct ofc_error err = {0};
	struct ofc_clock clock;
	char algo[48];
	char *slash;

	run_clock(a, &clock);
	q.clock = &clock;

	snprintf(row->algo, sizeof(row->algo), "%s", name);
	snprintf(algo, sizeof(algo), "%s", name);
	if ((slash = strchr(algo, '/'))) {
		*slash = 0;
		/* (a row's short label: "rd" is recursive-doubling) */
		const char *named = schedule_algorithm_of_label(algo);

		if (schedule_algorithm_variant(named))
			q.variant = strcmp(slash + 1, "L") == 0 ? "latency" : "bandwidth";
		else
			q.lowering = slash + 1;
		if (named != algo)
			snprintf(algo, sizeof(algo), "%s", named);
	}
	q.algorithm = algo;
	if (schedule_compute(&q, &r, NULL, &err) < 0) {
		ofc_error_str(&err, row->error, sizeof(row->error));
		return;
	}
	if (!r.main->applies || !r.main->have) {
		snprintf(row->error, sizeof(row->error), "%s", r.main->why);
	} else {
		row->verified = r.main->verified;
		snprintf(row->verify_error, sizeof(row->verify_error), "%s", r.main->verify_error);
		execute(a, t, &r.main->s, &clock, row);
	}
	schedule_result_free(&r);
}

/* The schedule of --schedule FILE, counted and priced before it is built. */
static int load(struct run_args *a, const struct testbed_net *t, const struct ofc_clock *clock,
		struct schedule *s, struct ofc_error *err)
{
	struct schedule_pb f;
	int rc;

	if (schedule_pb_open(a->schedule_file, schedule_memory_limit(&a->q), clock, &f, err) < 0)
		return -1;
	rc = testbed_loaded_fits(&(struct testbed_loaded){.name = f.name,
							  .collective = f.collective,
							  .nodes = f.nodes,
							  .nsteps = f.nsteps,
							  .nxfers = f.nxfers,
							  .len = f.len,
							  .sched = schedule_pb_bytes(&f),
							  .held = mem_held()},
				 t, a->q.size, a->steps, schedule_memory_limit(&a->q), err);
	if (rc == 0)
		rc = schedule_pb_decode(&f, clock, s, err);
	schedule_pb_close(&f);
	return rc;
}

static void run_loaded(struct run_args *a, const struct testbed_net *t, struct run_row *row)
{
	struct schedule s;
	struct ofc_error err = {0};
	struct verify_opts vo = {0};
	struct verify_report vr;
	struct ofc_clock clock;

	run_clock(a, &clock);
	snprintf(row->algo, sizeof(row->algo), "%s", a->schedule_file);
	if (load(a, t, &clock, &s, &err) < 0) {
		ofc_error_str(&err, row->error, sizeof(row->error));
		return;
	}
	if (s.algorithm[0])
		snprintf(row->algo, sizeof(row->algo), "%s (file)", s.algorithm);
	if (s.collective != a->q.collective && a->q.collective) {
		snprintf(row->error, sizeof(row->error), "the file holds a %s schedule, not %s",
			 sched_collective_name(s.collective),
			 sched_collective_name(a->q.collective));
		sched_free(&s);
		return;
	}
	/* The verifier's verdict is reported; the run goes ahead either way,
	 * since the data check is the point of running. Past the deadline
	 * the check fails, and so will the run. */
	vo.clock = &clock;
	row->verified = sched_verify(&s, &vo, &vr) == 0;
	if (!row->verified)
		snprintf(row->verify_error, sizeof(row->verify_error), "%s", vr.error);
	execute(a, t, &s, &clock, row);
	sched_free(&s);
}

/* MPICH's own collective on the same hosts and links (testbed_run_mpi,
 * as ofcd's TestbedRun runs it). */
static void run_mpi(struct run_args *a, const struct testbed_net *t, struct run_row *row)
{
	struct ofc_error err = {0};

	snprintf(row->algo, sizeof(row->algo), "mpi (MPICH)");
	row->verified = true; /* nothing to verify: MPICH's own algorithm */
	if (a->progress)
		fprintf(stderr, "\r  mpi: %u ranks running ", t->nhosts);
	if (testbed_run_mpi(t, a->q.collective, a->q.size, (uint16_t)a->port, a->timeout, &row->run,
			    &err) < 0)
		ofc_error_str(&err, row->error, sizeof(row->error));
	if (a->progress)
		fprintf(stderr, "\r%60s\r", "");
}

/* The runs as the ofc.v1.TestbedRunAnswer ofcd's TestbedRun answers,
 * printed by the one printer (or as JSON), so a script and a reader see
 * one shape from either. */
static void print_runs(const struct run_args *a, const struct testbed_net *t,
		       const struct run_row *rows, uint32_t n)
{
	struct arena ar = {0};
	Ofc__V1__TestbedRunAnswer *m =
	    testbed_run_answer(&ar, &(struct testbed_run_head){.fabric = a->fc.fabric->name,
							       .net = t,
							       .topology = a->topo_spec,
							       .topology_from = a->topo_from,
							       .model = &a->model,
							       .alpha_from = a->alpha_from,
							       .collective = a->q.collective,
							       .size = a->q.size,
							       .note = a->carried_note});

	m->runs = arena_array(&ar, n + 1, sizeof(*m->runs));
	for (uint32_t i = 0; i < n; i++) {
		const struct run_row *r = &rows[i];
		Ofc__V1__TestbedRunResult *o = testbed_run_result(&ar, &r->run, a->q.size);

		o->algorithm = arena_strdup(&ar, r->algo);
		if (r->error[0])
			o->error = arena_strdup(&ar, r->error);
		o->has_steps = o->has_transfers = o->has_verified = 1;
		o->steps = r->steps;
		o->transfers = r->transfers;
		o->verified = r->verified;
		if (!r->verified && r->verify_error[0])
			o->verify_error = arena_strdup(&ar, r->verify_error);
		m->runs[m->n_runs++] = o;
	}
	if (a->fc.json)
		cli_print_message(stdout, &m->base);
	else
		testbed_print_run(m);
	arena_free(&ar);
}

/* Flags that exclude or need each other; the usage error's exit code, or 0. */
static int run_usage(const struct cli_cmd *cmd, const struct run_args *a)
{
	if (a->workload &&
	    (a->q.collective || a->schedule_file || a->q.algorithm || a->mpi || a->topology))
		return cli_usage_error(cmd,
				       "run: --workload runs a job's phases: not with "
				       "--collective, --schedule, --algo, --mpi or --topology");
	if (!a->workload && (a->iterations || a->way || a->overhead_set))
		return cli_usage_error(
		    cmd, "run: --iterations, --way and --switch-overhead go with --workload");
	if (!a->workload && (!a->q.collective || (a->schedule_file && a->q.algorithm)))
		return cli_usage_error(cmd, !a->q.collective
						? "run: missing --collective"
						: "run: --schedule and --algo exclude each other");
	return 0;
}

/* The fabric, its testbed as brought up, and the rate its links carry;
 * the fabric is freed again on an error. */
static int open_testbed(struct run_args *a, struct testbed_net *t, struct ofc_error *err)
{
	if (fabric_open(a->fc.file, &a->fc.fabric, err) < 0)
		return -1;
	if (a->fc.fabric->degraded && a->fc.fabric->nfailed_hosts) {
		/* The executor checks every host's data; a schedule among the
		 * survivors leaves the failed hosts without theirs. */
		ofc_error_set(err, OFC_E_INPUT,
			      "%s: %u host%s failed: running a schedule among the surviving "
			      "hosts on the testbed is not supported (ofc schedule computes it)",
			      a->fc.file, a->fc.fabric->nfailed_hosts,
			      a->fc.fabric->nfailed_hosts == 1 ? " is" : "s are");
		goto fail;
	}
	if (testbed_need_root(err) < 0 ||
	    testbed_net_read(a->fc.fabric, a->fc.state_dir, t, err) < 0)
		goto fail;
	if (testbed_carried_now(a->fc.fabric, a->fc.state_dir, t, a->carried_note,
				sizeof(a->carried_note), err) < 0) {
		testbed_net_free(t);
		goto fail;
	}
	return 0;
fail:
	fabric_free(a->fc.fabric);
	a->fc.fabric = NULL;
	return -1;
}

/* The model for these links (testbed_predict): a circuit at the rate the
 * circuits carried when measured (else the shaping), alpha --alpha's,
 * else what testbed check calibrated, else the link's latency plus what a
 * step costs a host here. The engines are asked with a host's egress as
 * the circuits it holds at that rate, not its ports: a port without a
 * circuit carries nothing. */
static void run_model(struct run_args *a, const struct testbed_net *t)
{
	uint32_t most = testbed_most_circuits(t);

	a->q.fabric = a->fc.fabric;
	a->progress = isatty(STDERR_FILENO) && !a->fc.json;
	/* (testbed_model_of, as ofcd's TestbedRun prices its runs) */
	testbed_model_of(t, 0, &a->model, &a->alpha_from);
	if (a->q.alpha_set) { /* (0 too: a step costs nothing) */
		a->model.alpha = a->q.alpha;
		a->alpha_from = "--alpha";
	}
	if (a->model.rate > 0 && most) {
		a->q.bandwidth = a->model.rate * most;
		a->q.bandwidth_set = true;
	}
	a->q.alpha = a->model.alpha;
	a->q.alpha_set = true;
}

/* The topology the runs schedule for: --topology's, applied now (and the
 * testbed's circuits read again), else the one the record says was
 * committed when it is another than the file's, else the file's. */
static int choose_topology(struct run_args *a, struct testbed_net *t,
			   struct testbed_topo *committed, struct testbed_topo *what_if,
			   struct ofc_error *err)
{
	const struct fabric *f = a->fc.fabric;

	if (testbed_topo_committed(&a->fc, committed, err) < 0)
		return -1;
	a->topo_spec = committed->open ? committed->spec : f->topology.spec ? f->topology.spec : "";
	a->topo_from = committed->open ? "committed, as the record says" : "the config's";
	if (!a->topology)
		return 0;
	if (testbed_topo_open(f, a->topology, what_if, err) < 0)
		return -1;
	if (testbed_topo_apply(&a->fc, &what_if->f, err) < 0) {
		ofc_error_prefix(err, "--topology %s", a->topology);
		testbed_topo_free(what_if);
		return -1;
	}
	a->topo_spec = what_if->spec;
	a->topo_from = "--topology: applied for the run, the one before applied again after";
	testbed_net_free(t);
	if (testbed_net_read(f, a->fc.state_dir, t, err) < 0 ||
	    testbed_carried_now(a->fc.fabric, a->fc.state_dir, t, a->carried_note,
				sizeof(a->carried_note), err) < 0)
		return -1;
	return 0;
}

/* After a what-if: the topology before it, applied again. */
static int restore_topology(struct run_args *a, struct fabric *before)
{
	struct ofc_error err = {0};

	if (testbed_topo_apply(&a->fc, before, &err) == 0)
		return 0;
	ofc_error_prefix(&err, "applying %s again after --topology %s",
			 before->topology.spec ? before->topology.spec : "the config's topology",
			 a->topology);
	cli_fail(&err);
	return -1;
}

static int run_workload(struct run_args *a, struct testbed_net *t)
{
	struct testbed_workload_opts wo = {
	    .workload = a->workload,
	    .iterations = a->iterations ? a->iterations : 1,
	    .ways = !a->way || strcmp(a->way, "all") == 0
			? ~0u
			: 1u << (strcmp(a->way, "static") == 0	    ? JOBPLAN_STATIC
				 : strcmp(a->way, "per-phase") == 0 ? JOBPLAN_PER_PHASE
								    : JOBPLAN_CHOSEN),
	    .alpha = a->q.alpha,
	    .timeout = a->timeout,
	    .port = a->port,
	    .max_memory = schedule_memory_limit(&a->q),
	    .overhead = a->overhead,
	    .overhead_set = a->overhead_set};

	return testbed_run_workload(&a->fc, &wo, t);
}

/* The runs asked for, into rows: a schedule file, every algorithm, or one;
 * then MPI's. */
static int run_rows(struct run_args *a, struct testbed_net *t, struct run_row *rows,
		    uint32_t *nrows, struct ofc_error *err)
{
	if (a->schedule_file) {
		run_loaded(a, t, &rows[(*nrows)++]);
	} else if (a->q.algorithm && schedule_algorithm_compares(a->q.algorithm, ENGINE_DIRECT)) {
		struct schedule_result r;

		if (schedule_compute(&a->q, &r, NULL, err) < 0)
			return -1;
		for (uint32_t i = 0; i < r.nout && *nrows < MAX_RUNS; i++)
			if (r.out[i].applies)
				run_computed(a, t, r.out[i].algo, &rows[(*nrows)++]);
		schedule_result_free(&r);
	} else {
		const char *name = a->q.algorithm
				       ? a->q.algorithm
				       : schedule_default_algorithm(ENGINE_DIRECT, a->q.collective);

		run_computed(a, t, name, &rows[(*nrows)++]);
	}
	if (a->mpi && *nrows < MAX_RUNS)
		run_mpi(a, t, &rows[(*nrows)++]);
	return 0;
}

int cmd_testbed_run(const struct cli_cmd *cmd, int argc, char **argv)
{
	struct run_args a = {.timeout = 600, .port = RUN_PORT};
	struct testbed_topo committed = {0}, what_if = {0};
	struct ofc_error err = {0};
	struct testbed_net t;
	struct run_row *rows;
	uint32_t nrows = 0;
	int rc, status = 0;

	/* its own usage: the action's operand, then its rows */
	const struct cli_cmd run_cmd = {cmd->name, "run FILE", cmd->summary, NULL};

	rc = fabric_cmd_parse(&a.fc, &run_cmd, argc, argv,
			      (const struct opt *const[]){run_table, NULL}, help, false);
	a.fc.cmd = cmd;
	if (rc)
		return rc < 0 ? 0 : rc;
	if ((rc = run_usage(cmd, &a)) != 0) {
		free(a.fc.state_dir);
		return rc;
	}
	if (!a.q.size)
		a.q.size = 1u << 20;
	if (open_testbed(&a, &t, &err) < 0) {
		free(a.fc.state_dir);
		return cli_fail(&err);
	}
	if (!a.workload && choose_topology(&a, &t, &committed, &what_if, &err) < 0) {
		status = cli_fail(&err);
		goto out_topo;
	}
	if (a.carried_note[0])
		fprintf(stderr, "ofc testbed run: warning: %s\n", a.carried_note);
	run_model(&a, &t);
	if (a.workload) {
		status = run_workload(&a, &t);
		goto out_net;
	}
	a.q.fabric = what_if.open ? &what_if.f : committed.open ? &committed.f : a.fc.fabric;
	rows = xcalloc(MAX_RUNS, sizeof(*rows));
	for (uint32_t i = 0; i < MAX_RUNS; i++) /* (not priced, not measured until run) */
		rows[i].run = (struct testbed_run){.predicted = NAN, .circuit_bytes = -1};
	if (run_rows(&a, &t, rows, &nrows, &err) < 0) {
		status = cli_fail(&err);
		goto out;
	}
	print_runs(&a, &t, rows, nrows);
	for (uint32_t i = 0; i < nrows; i++) {
		if (!rows[i].run.ran) {
			/* (on stderr with --json too: the exit status's reason) */
			fprintf(stderr, "ofc testbed run: %s: %s\n", rows[i].algo, rows[i].error);
			status = 1;
		} else if (!rows[i].run.data_ok) {
			status = 1;
		}
		testbed_run_free(&rows[i].run);
	}
out:
	free(rows);
out_topo:
	if (what_if.open && restore_topology(&a, committed.open ? &committed.f : a.fc.fabric) < 0)
		status = 1;
	testbed_topo_free(&what_if);
	testbed_topo_free(&committed);
out_net:
	testbed_net_free(&t);
	fabric_free(a.fc.fabric);
	free(a.fc.state_dir);
	return status;
}
