/* ofc --socket PATH testbed up|run|check|down|mpirun: the daemon runs collectives on the
 * testbed's hosts for the topology it committed (controller/ofcd/
 * testbed.c), and its answer is printed as `ofc testbed run FILE` prints
 * a run (testbed_print_run, both sides' one printer): each algorithm
 * measured against the model's prediction, the ratio, the data check, and
 * the term of the model that is off. */
#include "controller/cli/remote.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define OR_DASH(p) ((p) && *(p) ? (p) : "-")

/* The most bytes --schedule sends: a request's frame at the daemon's
 * default limit (OFCD_MAX_FRAME_DEFAULT), less room for the rest of it. */
#define SCHEDULE_MAX_BYTES ((16u << 20) - (64u << 10))

/* --size and --run-timeout, as run and mpirun take them: above 0. */
static int positive_size(struct remote *r, const char *arg, protobuf_c_boolean *has, uint64_t *v)
{
	const char *why = NULL;

	*has = 1;
	if (parse_size(arg, v, &why) == 0 && *v > 0)
		return 0;
	return cli_usage_error(r->cmd, "--size '%s': %s", arg, why ? why : "must be > 0");
}

static int run_timeout(struct remote *r, const char *arg, protobuf_c_boolean *has, double *v)
{
	const char *why = NULL;

	*has = 1;
	if (parse_duration(arg, v, &why) == 0 && *v > 0)
		return 0;
	return cli_usage_error(r->cmd, "--run-timeout '%s': %s", arg, why ? why : "must be > 0");
}

static int run_opt(struct remote *r, union remote_body *b, int c, const char *arg)
{
	Ofc__V1__TestbedRun *q = &b->testbed_run;
	struct ofc_error err = {0};
	const char *why = NULL;
	size_t len;

	switch (c) {
	case 'F':
		if (r->text) /* (given twice: the last one) */
			free(r->text);
		r->text = NULL;
		if (read_file(arg, SCHEDULE_MAX_BYTES, &r->text, &len, &err) < 0)
			return cli_fail(&err);
		q->has_schedule = 1;
		q->schedule.data = (uint8_t *)r->text;
		q->schedule.len = len;
		return 0;
	case 'G':
		q->topology = (char *)arg;
		return 0;
	case 'w': /* (named, so the refusal says where a workload runs) */
		return cli_usage_error(
		    r->cmd,
		    "--workload '%s' does not run through ofcd: 'ofc testbed run "
		    "FILE --workload %s' runs it on a testbed it brings up itself",
		    arg, arg);
	case 'M':
		q->has_mpi = 1;
		q->mpi = 1;
		return 0;
	case 'a':
		q->algorithm = (char *)arg;
		return 0;
	case 'c':
		q->collective = (char *)arg;
		return 0;
	case 's':
		return positive_size(r, arg, &q->has_size, &q->size);
	case 'A':
		q->has_alpha = 1;
		if (parse_duration(arg, &q->alpha, &why) == 0)
			return 0;
		return cli_usage_error(r->cmd, "--alpha '%s': %s", arg, why ? why : "a duration");
	case 'T':
		return run_timeout(r, arg, &q->has_timeout, &q->timeout);
	}
	return 2;
}

static int up_opt(struct remote *r, union remote_body *b, int c, const char *arg)
{
	Ofc__V1__TestbedUp *q = &b->testbed_up;
	char *end;

	if (c != 'x')
		return 2;
	q->has_rate_scale = 1;
	q->rate_scale = strtod(arg, &end);
	if (end != arg && !*end && q->rate_scale > 0 && q->rate_scale <= 1)
		return 0;
	return cli_usage_error(r->cmd, "--rate-scale must be a number in (0, 1], got '%s'", arg);
}

/* As `ofc testbed up FILE` prints it. */
void testbed_print_up(const Ofc__V1__TestbedUpAnswer *m)
{
	printf("testbed %s up: %u hosts as namespaces ofc-%s-*, %u circuits\n", OR_DASH(m->fabric),
	       m->hosts, OR_DASH(m->fabric), m->circuits);
	for (size_t i = 0; i < m->n_notes; i++)
		printf("  %s\n", m->notes[i]);
}

/* One run's row: measured beside predicted, the algorithm bandwidth, what
 * crossed the circuits, the data check; then why the model does not hold
 * and, with --steps, each step beside the model's. */
static void print_result(const Ofc__V1__TestbedRunResult *o)
{
	if (!o->ran) {
		printf("  %-18s failed: %s\n", OR_DASH(o->algorithm), OR_DASH(o->error));
		return;
	}
	if (o->has_predicted_s)
		printf("  %-18s %6u %11.4f %11.4f %7.3f", o->algorithm, o->steps, o->measured_s,
		       o->predicted_s, o->ratio);
	else if (o->has_mpi_finalize_hung) /* (MPICH's: no schedule to count) */
		printf("  %-18s %6s %11.4f %11s %7s", o->algorithm, "-", o->measured_s, "-", "-");
	else
		printf("  %-18s %6u %11.4f %11s %7s", o->algorithm, o->steps, o->measured_s, "-",
		       "-");
	printf(" %12.3f", o->algbw_bytes_per_s / 1e6);
	if (o->has_circuit_bytes)
		printf(" %11.3f", o->circuit_bytes / 1e6);
	else
		printf(" %11s", "-");
	if (o->data_ok)
		printf("  ok (%llu elements)\n", (unsigned long long)o->checked_elements);
	else
		printf("  WRONG: %llu of %llu elements, first: %s\n",
		       (unsigned long long)o->bad_elements, (unsigned long long)o->checked_elements,
		       OR_DASH(o->first_bad));
	if (o->has_verified && !o->verified)
		printf("  %-18s (the verifier rejects it: %s)\n", "", OR_DASH(o->verify_error));
	if (o->has_model_holds && !o->model_holds && o->model)
		printf("  %-18s (%s)\n", "", o->model);
	if (o->n_steps_detail)
		printf("  %-18s %6s %11s %11s %7s\n", "", "step", "measured_s", "predicted_s",
		       "ratio");
	for (size_t k = 0; k < o->n_steps_detail; k++)
		printf("  %-18s %6zu %11.4f %11.4f %7.3f\n", "", k, o->steps_detail[k]->measured_s,
		       o->steps_detail[k]->predicted_s,
		       o->steps_detail[k]->measured_s / o->steps_detail[k]->predicted_s);
	if (o->mpi_finalize_hung)
		printf("  %-18s (MPI_Finalize hung after the result, a known MPICH/UCX-TCP "
		       "issue: the job was stopped)\n",
		       "");
}

void testbed_print_run(const Ofc__V1__TestbedRunAnswer *m)
{
	printf("testbed %s: %s of %.4g MiB per host on %u hosts, links %s, alpha %.0f us (%s)\n",
	       OR_DASH(m->fabric), OR_DASH(m->collective), (double)m->size / 1048576.0, m->hosts,
	       m->link_rate_bps > 0 ? "shaped" : "unshaped", m->alpha_s * 1e6,
	       OR_DASH(m->alpha_from));
	printf("  topology %s (%s), %u circuits\n",
	       m->topology && m->topology[0] ? m->topology : "the config's",
	       OR_DASH(m->topology_from), m->circuits);
	if (m->link_rate_bps > 0)
		printf("  link rate %.4g Mb/s; all %u circuits at once carried %.4g Mb/s each, "
		       "the rate the model prices a circuit at\n",
		       m->link_rate_bps / 1e6, m->carried_circuits, m->model_rate_bps / 1e6);
	printf("  %-18s %6s %11s %11s %7s %12s %11s  %s\n", "algorithm", "steps", "measured_s",
	       "predicted_s", "ratio", "algbw_MB/s", "circuit_MB", "data");
	for (size_t i = 0; i < m->n_runs; i++)
		print_result(m->runs[i]);
}

/* As `ofc testbed check FILE` prints it, local or through ofcd: the
 * pairs, then (all reaching) each circuit's shaping and measure, what
 * they carry against the shaping, and the model's calibration. */
void testbed_print_check(const Ofc__V1__TestbedCheckAnswer *m)
{
	const Ofc__V1__TestbedCalibration *c = m->calibration;
	bool shaped = false, delayed = false;
	char r[32];

	printf("testbed %s: %u of %u ordered pairs reach each other (%u hosts)\n",
	       OR_DASH(m->fabric), m->reachable, m->pairs, m->hosts);
	for (size_t i = 0; i < m->n_unreachable && i < 20; i++)
		printf("  %s cannot reach %s\n", OR_DASH(m->unreachable[i]->src),
		       OR_DASH(m->unreachable[i]->dst));
	if (m->n_unreachable > 20)
		printf("  ... and %zu more\n", m->n_unreachable - 20);
	if (!m->n_circuits)
		return;
	for (size_t i = 0; i < m->n_circuits; i++) {
		shaped |= m->circuits[i]->shaped_rate_bps > 0;
		delayed |= m->circuits[i]->shaped_latency_s > 0;
	}
	printf("%zu circuits, shaped to %s, latency %s; probed for %.2f s, all at once:\n",
	       m->n_circuits, shaped ? "the rate below" : "nothing (unshaped)",
	       delayed ? "as below" : "none added", TESTBED_PROBE_SECONDS);
	printf("  %-22s %14s %14s %12s %12s\n", "circuit", "shaped Mb/s", "measured Mb/s",
	       "delay ms", "latency ms");
	for (size_t i = 0; i < m->n_circuits; i++) {
		const Ofc__V1__TestbedCircuit *o = m->circuits[i];
		char name[64];

		snprintf(name, sizeof(name), "%s:%u -> %s", OR_DASH(o->src), o->port,
			 OR_DASH(o->dst));
		printf("  %-22s %14.2f %14.2f %12.3f %12.3f\n", name, o->shaped_rate_bps / 1e6,
		       o->rate_bps / 1e6, o->shaped_latency_s * 1e3, o->latency_s * 1e3);
	}
	if (m->carried_note)
		printf("%s\n", m->carried_note);
	if (!c)
		return;
	printf("model: a circuit at %s, alpha %.0f us a step (the median of %u allreduces of a few "
	       "bytes, %u steps)\n",
	       testbed_rate_str(c->rate_bps, r, sizeof(r)), c->alpha_s * 1e6, c->alpha_runs,
	       c->alpha_steps);
	printf("  %s allreduce of %llu MiB: measured %.4f s, predicted %.4f s (alpha %.4f + "
	       "bytes %.4f), data %s: %s\n",
	       OR_DASH(c->algorithm), (unsigned long long)(c->size >> 20), c->measured_s,
	       c->predicted_s, c->predicted_alpha_s, c->predicted_bytes_s,
	       c->data_ok ? "ok" : "WRONG", OR_DASH(c->model));
}

/* The answer (runs, or a check) is printed whatever its status (a run
 * that failed is one of them); a failure's reason goes to stderr with the exit
 * status, --json or not. */
static int run_run(struct remote *r, Ofc__V1__Request *req)
{
	Ofc__V1__Response *resp;
	int rc;

	if ((rc = remote_call(r, req, 0, &resp)) != 0)
		return rc;
	if (resp->body_case == OFC__V1__RESPONSE__BODY_TESTBED_RUN) {
		if (resp->testbed_run->carried_note) /* (on stderr, as the local run warns) */
			fprintf(stderr, "ofc: warning: %s\n", resp->testbed_run->carried_note);
		if (r->json)
			remote_print_json(stdout, &resp->testbed_run->base);
		else
			testbed_print_run(resp->testbed_run);
	} else if (resp->body_case == OFC__V1__RESPONSE__BODY_TESTBED_CHECK && r->json)
		remote_print_json(stdout, &resp->testbed_check->base);
	else if (resp->body_case == OFC__V1__RESPONSE__BODY_TESTBED_CHECK)
		testbed_print_check(resp->testbed_check);
	else if (resp->body_case == OFC__V1__RESPONSE__BODY_TESTBED_UP && r->json)
		remote_print_json(stdout, &resp->testbed_up->base);
	else if (resp->body_case == OFC__V1__RESPONSE__BODY_TESTBED_UP)
		testbed_print_up(resp->testbed_up);
	else if (resp->body_case == OFC__V1__RESPONSE__BODY_TESTBED_DOWN && r->json)
		remote_print_json(stdout, &resp->testbed_down->base);
	else if (resp->body_case == OFC__V1__RESPONSE__BODY_TESTBED_DOWN)
		printf("testbed %s down: %u namespace%s removed\n",
		       OR_DASH(resp->testbed_down->fabric), resp->testbed_down->removed,
		       resp->testbed_down->removed == 1 ? "" : "s");
	else
		return remote_finish(r, resp);
	rc = remote_status_exit(resp->status);
	if (rc)
		fprintf(stderr, "ofc: %s\n", resp->message ? resp->message : "failed");
	ofc__v1__response__free_unpacked(resp, NULL);
	return rc;
}

static const struct remote_cmd run_cmd = {
    .cmd = {"testbed run",
	    "[--algo NAME|all | --schedule FILE] [--collective C] [--size N] [--mpi] "
	    "[--topology SPEC] [--alpha DUR] "
	    "[--run-timeout DUR] [--json] [--timeout DUR]",
	    "collectives on the testbed's hosts, run by the daemon for its committed topology",
	    NULL},
    .kind = API_TESTBED_RUN,
    .opts = (const struct option[]){{"algo", required_argument, NULL, 'a'},
				    {"collective", required_argument, NULL, 'c'},
				    {"size", required_argument, NULL, 's'},
				    {"alpha", required_argument, NULL, 'A'},
				    {"run-timeout", required_argument, NULL, 'T'},
				    {"schedule", required_argument, NULL, 'F'},
				    {"mpi", no_argument, NULL, 'M'},
				    {"topology", required_argument, NULL, 'G'},
				    {"workload", required_argument, NULL, 'w'},
				    REMOTE_COMMON_OPTS,
				    {0}},
    .help = "Asks ofcd to run a collective on the testbed's hosts (brought up with 'ofc\n"
	    "testbed up FILE'), scheduled for the topology the daemon committed, as 'ofc\n"
	    "testbed run FILE' does without a daemon: each algorithm verified, priced by\n"
	    "the testbed's model, run, its data checked and the model judged. Admin only;\n"
	    "queued with the mutations. Exit 1 when a run failed or moved wrong data.\n\n"
	    "  --algo NAME|all    one algorithm, or every one that applies (default: the\n"
	    "                     pick)\n"
	    "  --collective C     allreduce (default; with --schedule, the file's), allgather,\n"
	    "                     reduce-scatter, alltoall\n"
	    "  --size N           bytes per host (default 1M)\n"
	    "  --schedule FILE    run this exported schedule (ofc schedule --format pb),\n"
	    "                     sent in the request (at most 16 MiB), not one computed\n"
	    "  --mpi              also run MPICH's own collective on the same hosts and\n"
	    "                     links (unpriced)\n"
	    "  --topology SPEC    a what-if: the daemon reconfigures to SPEC for the runs\n"
	    "                     and to the topology committed before again after (two\n"
	    "                     committed transactions; nothing comes between)\n"
	    "  --alpha DUR        a step's cost (default: testbed check's calibration)\n"
	    "  --run-timeout DUR  each run's limit (default 600s)\n"
	    "  --json             the ofc.v1.TestbedRunAnswer as JSON\n",
    .timeout = 3600, /* every algorithm's run, one after another */
    .operands = OPERANDS_NONE,
    .extra = "",
    .opt = run_opt,
    .run = run_run,
};

static int mpirun_opt(struct remote *r, union remote_body *b, int c, const char *arg)
{
	Ofc__V1__TestbedMpirun *q = &b->testbed_mpirun;

	switch (c) {
	case 'M':
		if (strcmp(arg, "mpich") && strcmp(arg, "openmpi"))
			return cli_usage_error(r->cmd, "--mpi is mpich or openmpi, got '%s'", arg);
		q->mpi = (char *)arg;
		return 0;
	case 'N':
		q->has_no_preload = q->no_preload = 1;
		return 0;
	case 's':
		return positive_size(r, arg, &q->has_size_bytes, &q->size_bytes);
	case 'T':
		return run_timeout(r, arg, &q->has_timeout, &q->timeout);
	}
	return 2;
}

/* PROGRAM [ARGS...]: a PROGRAM named by a relative path made whole, since
 * ofcd's working directory is not ours (a bare name is looked up on the
 * hosts' PATH). */
static int mpirun_build(struct remote *r, union remote_body *b, int argc, char **argv)
{
	Ofc__V1__TestbedMpirun *q = &b->testbed_mpirun;

	if (argc < 1)
		return cli_usage_error(r->cmd, "mpirun: missing -- PROGRAM [ARGS...]");
	q->n_argv = (size_t)argc;
	q->argv = argv;
	if (strchr(argv[0], '/') && argv[0][0] != '/') {
		if (!(r->text = realpath(argv[0], NULL)))
			return cli_usage_error(r->cmd, "PROGRAM '%s': %s", argv[0],
					       strerror(errno));
		argv[0] = r->text;
	}
	return 0;
}

/* The job's result as `ofc testbed mpirun FILE` prints it, its exit status
 * the program's; a job that did not start: the reason, exit 1. */
static int mpirun_run(struct remote *r, Ofc__V1__Request *req)
{
	const Ofc__V1__TestbedMpirun *q = req->testbed_mpirun;
	Ofc__V1__Response *resp;
	const Ofc__V1__TestbedMpirunAnswer *m;
	struct testbed_mpirun_result res = {0};
	int rc;

	if ((rc = remote_call(r, req, 0, &resp)) != 0)
		return rc;
	if (resp->body_case != OFC__V1__RESPONSE__BODY_TESTBED_MPIRUN)
		return remote_finish(r, resp);
	m = resp->testbed_mpirun;
	res.exit_code = m->has_exit_code ? m->exit_code : -1;
	res.timed_out = m->timed_out;
	res.finalize_hung = m->finalize_hung;
	res.circuit_bytes = m->has_circuit_bytes ? m->circuit_bytes : -1;
	res.report = m->report;
	res.output = m->output;
	res.output_len = m->output ? strlen(m->output) : 0;
	res.output_cut = m->output_cut;
	if (!r->json && res.output_len) /* (the local run's output comes first) */
		fwrite(res.output, 1, res.output_len, stdout);
	rc = testbed_mpirun_print(
	    &(struct mpirun_shown){.fabric = OR_DASH(m->fabric),
				   .topology = OR_DASH(m->topology),
				   .ranks = m->ranks,
				   .openmpi = m->mpi && strcmp(m->mpi, "openmpi") == 0,
				   .preload = m->preload,
				   .timeout = q->has_timeout ? q->timeout : 600,
				   .r = &res},
	    r->json);
	ofc__v1__response__free_unpacked(resp, NULL);
	return rc;
}

static const struct remote_cmd mpirun_cmd = {
    .cmd = {"testbed mpirun",
	    "[--mpi mpich|openmpi] [--no-preload] [--size M] [--run-timeout T] [--json] "
	    "[--timeout DUR] -- PROGRAM [ARGS...]",
	    "an unmodified MPI program on the testbed's hosts with libofc-mpi, run by the daemon",
	    NULL},
    .kind = API_TESTBED_MPIRUN,
    .opts = (const struct option[]){{"mpi", required_argument, NULL, 'M'},
				    {"no-preload", no_argument, NULL, 'N'},
				    {"size", required_argument, NULL, 's'},
				    {"run-timeout", required_argument, NULL, 'T'},
				    REMOTE_COMMON_OPTS,
				    {0}},
    /* (options anywhere before "--", as the local form reads them: a bad
     * one is refused before any connection; PROGRAM's own come after it) */
    .help = "Asks ofcd to run PROGRAM (an MPI program, unmodified) as one rank per host\n"
	    "namespace of the testbed (brought up with 'ofc testbed up') over the circuits\n"
	    "of the topology the daemon committed, with libofc-mpi preloaded running ofc's\n"
	    "schedules for it, as 'ofc testbed mpirun FILE' does without a daemon (docs/mpi.md).\n"
	    "PROGRAM runs as the daemon's user: admin only; queued with the mutations.\n"
	    "Prints what the library counted per collective and the bytes that crossed the\n"
	    "circuits; exits with the program's status.\n\n"
	    "  --mpi M            mpich (default) or openmpi\n"
	    "  --no-preload       the MPI's own collectives on the same links\n"
	    "  --size M           the data per host the schedules are priced for (default\n"
	    "                     1MiB; they serve any size)\n"
	    "  --run-timeout T    stop the job after T (default 10min, at most 1h)\n"
	    "  --json             as 'ofc testbed mpirun FILE --json'\n",
    .timeout = 3660, /* the job's limit, and the schedules before it */
    .operands = OPERANDS_ANY,
    .opt = mpirun_opt,
    .build = mpirun_build,
    .run = mpirun_run,
};

static const struct remote_cmd check_cmd = {
    .cmd = {"testbed check", "[--json] [--timeout DUR]",
	    "the testbed's hosts and circuits checked and its model calibrated, by the daemon",
	    NULL},
    .kind = API_TESTBED_CHECK,
    .opts = (const struct option[]){REMOTE_COMMON_OPTS, {0}},
    .help = "Asks ofcd to check the testbed's hosts as 'ofc testbed check FILE' does without\n"
	    "a daemon: ICMP between every ordered pair of hosts, then what each circuit\n"
	    "carries with all loaded at once (recorded for the runs), then the run's model\n"
	    "calibrated on the committed topology (alpha, a step's cost, from runs of the\n"
	    "executor) and judged by a reference run. Admin only; queued with the\n"
	    "mutations. Exit 1 unless every pair reaches and the reference run's data is\n"
	    "right.\n\n"
	    "  --json     the ofc.v1.TestbedCheckAnswer as JSON\n",
    .timeout = 600,
    .operands = OPERANDS_NONE,
    .extra = "",
    .run = run_run,
};

static const struct remote_cmd down_cmd = {
    .cmd = {"testbed down", "[--json] [--timeout DUR]",
	    "the testbed's namespaces removed by the daemon that drives them", NULL},
    .kind = API_TESTBED_DOWN,
    .opts = (const struct option[]){REMOTE_COMMON_OPTS, {0}},
    .help = "Asks ofcd to remove every namespace the testbed made, as 'ofc testbed down\n"
	    "FILE' does without a daemon; its next transactions plan the switches alone.\n"
	    "Admin only; queued with the mutations.\n\n"
	    "  --json     the ofc.v1.TestbedDownAnswer as JSON\n",
    .timeout = 120,
    .operands = OPERANDS_NONE,
    .extra = "",
    .run = run_run,
};

static const struct remote_cmd up_cmd = {
    .cmd = {"testbed up", "[--rate-scale X] [--json] [--timeout DUR]",
	    "the testbed's hosts brought up by the daemon that drives them", NULL},
    .kind = API_TESTBED_UP,
    .opts = (const struct option[]){{"rate-scale", required_argument, NULL, 'x'},
				    REMOTE_COMMON_OPTS,
				    {0}},
    .help = "Asks ofcd to bring the testbed up as 'ofc testbed up FILE' does without a\n"
	    "daemon: one network namespace per host, one veth pair per circuit the switches\n"
	    "hold now, shaped, and what they carry measured and recorded for the runs. The\n"
	    "daemon's later transactions move the hosts' circuits with the switches. Admin\n"
	    "only; queued with the mutations.\n\n"
	    "  --rate-scale X   shape circuits to X times the config's link rate; without\n"
	    "                   it, up shapes to what this machine carries (and at most\n"
	    "                   16 Gb/s) and says so\n"
	    "  --json           the ofc.v1.TestbedUpAnswer as JSON\n",
    .timeout = 600, /* every namespace, veth and route, then the measures */
    .operands = OPERANDS_NONE,
    .extra = "",
    .opt = up_opt,
    .run = run_run,
};

const struct remote_cmd *remote_testbed_row(const char *action)
{
	return strcmp(action, "up") == 0       ? &up_cmd
	       : strcmp(action, "run") == 0    ? &run_cmd
	       : strcmp(action, "check") == 0  ? &check_cmd
	       : strcmp(action, "down") == 0   ? &down_cmd
	       : strcmp(action, "mpirun") == 0 ? &mpirun_cmd
					       : NULL;
}
