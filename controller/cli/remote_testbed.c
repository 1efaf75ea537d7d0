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

/* --schedule FILE: its bytes sent in the request. */
static int p_schedule(const struct opt *row, const char *arg, void *base, struct ofc_error *err)
{
	struct remote *r = base;
	Ofc__V1__TestbedRun *q = &r->body.testbed_run;
	size_t len;

	(void)row;
	free(r->text); /* (given twice: the last one) */
	r->text = NULL;
	if (read_file(arg, SCHEDULE_MAX_BYTES, &r->text, &len, err) < 0)
		return -1;
	q->has_schedule = 1;
	q->schedule.data = (uint8_t *)r->text;
	q->schedule.len = len;
	return 0;
}

/* --workload: named, so the refusal says where a workload runs. */
static int p_workload(const struct opt *row, const char *arg, void *base, struct ofc_error *err)
{
	(void)base;
	return ofc_error_set(err, OFC_E_USAGE,
			     "bad --%s '%s': it does not run through ofcd: 'ofc testbed run FILE "
			     "--workload %s' runs it on a testbed it brings up itself",
			     row->name, arg, arg);
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

/* --size and --run-timeout, as run and mpirun take them: above 0. */
#define SIZE_ROW(m, f, help)                                                                       \
	{                                                                                          \
		"size", cli_row_size, REMOTE_B(m, f), "M", help                                    \
	}
#define RUN_TIMEOUT_ROW(m, help)                                                                   \
	{                                                                                          \
		"run-timeout", cli_row_duration, REMOTE_B(m, timeout), "DUR", help, 1e-9, 1e9,     \
		    "must be more than 0"                                                          \
	}

static const struct opt run_rows[] = {
    {"algo", opt_str, REMOTE_B(testbed_run, algorithm), "NAME|all",
     "one algorithm, or every one that applies (default: the pick)", .alt = 1},
    /* (ofcd checks the value: its refusal names the ones it runs) */
    {"collective", opt_str, REMOTE_B(testbed_run, collective), "C",
     "allreduce (default; with --schedule, the file's), allgather, reduce-scatter, alltoall"},
    SIZE_ROW(testbed_run, size, "bytes per host (default 1M)"),
    {"alpha", cli_row_duration, REMOTE_B(testbed_run, alpha), "DUR",
     "a step's cost (default: testbed check's calibration)"},
    RUN_TIMEOUT_ROW(testbed_run, "each run's limit (default 600s)"),
    {"schedule", p_schedule, 0, "FILE",
     "run this exported schedule (ofc schedule --format pb), sent in the request (at most "
     "16 MiB), not one computed",
     .alt = 1},
    {"mpi", remote_row_flag, REMOTE_B(testbed_run, mpi), NULL,
     "also run MPICH's own collective on the same hosts and links (unpriced)"},
    {"topology", opt_str, REMOTE_B(testbed_run, topology), "SPEC",
     "a what-if: the daemon reconfigures to SPEC for the runs and to the topology committed "
     "before again after (two committed transactions; nothing comes between)"},
    {"workload", p_workload, 0, "W",
     "refused: a workload runs with 'ofc testbed run FILE --workload W', not through ofcd",
     .flags = OPT_HIDE_USAGE},
    REMOTE_ROWS_END("the ofc.v1.TestbedRunAnswer as JSON"),
};

static const struct remote_cmd run_cmd = {
    .cmd = {"testbed run", "",
	    "collectives on the testbed's hosts, run by the daemon for its committed topology",
	    NULL},
    .kind = API_TESTBED_RUN,
    .opts = {run_rows,
	     "Asks ofcd to run a collective on the testbed's hosts (brought up with 'ofc\n"
	     "testbed up FILE'), scheduled for the topology the daemon committed, as 'ofc\n"
	     "testbed run FILE' does without a daemon: each algorithm verified, priced by\n"
	     "the testbed's model, run, its data checked and the model judged. Admin only;\n"
	     "queued with the mutations. Exit 1 when a run failed or moved wrong data.\n"},
    .timeout = 3600, /* every algorithm's run, one after another */
    .operands = OPERANDS_NONE,
    .extra = "",
    .run = run_run,
};

/* PROGRAM [ARGS...]: a PROGRAM named by a relative path made whole, since
 * ofcd's working directory is not ours (a bare name is looked up on the
 * hosts' PATH). */
static int mpirun_build(struct remote *r, union remote_body *b, int argc, char **argv)
{
	Ofc__V1__TestbedMpirun *q = &b->testbed_mpirun;

	if (argc < 1)
		return cli_usage_error(r->cmd, "mpirun: missing -- PROGRAM [ARGS...]");
	if (r->mpi)
		q->mpi = (char *)(r->mpi == 2 ? "openmpi" : "mpich");
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

static const struct opt_choice mpis[] = {{"mpich", 1}, {"openmpi", 2}, {NULL, 0}};

static const struct opt mpirun_rows[] = {
    {"mpi", cli_row_choice, REMOTE_O(mpi), "mpich|openmpi", "the MPI (default mpich)",
     .expect = "mpich or openmpi", .choices = mpis},
    {"no-preload", remote_row_flag, REMOTE_B(testbed_mpirun, no_preload), NULL,
     "the MPI's own collectives on the same links"},
    SIZE_ROW(testbed_mpirun, size_bytes,
	     "the data per host the schedules are priced for (default 1MiB; they serve any "
	     "size)"),
    RUN_TIMEOUT_ROW(testbed_mpirun, "stop the job after DUR (default 10min, at most 1h)"),
    {"json", NULL, REMOTE_O(json), NULL, "as 'ofc testbed mpirun FILE --json'"},
    {"timeout", cli_row_duration, REMOTE_O(timeout), "DUR",
     "give up waiting for the answer after DUR (each command has its own default)"},
    MPIRUN_PROGRAM_ROW,
    CLI_OPT_HELP,
    {NULL},
};

/* (options anywhere before "--", as the local form reads them: a bad one
 * is refused before any connection; PROGRAM's own come after it) */
static const struct remote_cmd mpirun_cmd = {
    .cmd = {"testbed mpirun", "",
	    "an unmodified MPI program on the testbed's hosts with libofc-mpi, run by the daemon",
	    NULL},
    .kind = API_TESTBED_MPIRUN,
    .opts = {mpirun_rows,
	     "Asks ofcd to run PROGRAM (an MPI program, unmodified) as one rank per host\n"
	     "namespace of the testbed (brought up with 'ofc testbed up') over the circuits\n"
	     "of the topology the daemon committed, with libofc-mpi preloaded running ofc's\n"
	     "schedules for it, as 'ofc testbed mpirun FILE' does without a daemon\n"
	     "(docs/mpi.md). PROGRAM runs as the daemon's user: admin only; queued with the\n"
	     "mutations. Prints what the library counted per collective and the bytes that\n"
	     "crossed the circuits; exits with the program's status.\n"},
    .timeout = 3660, /* the job's limit, and the schedules before it */
    .operands = OPERANDS_ANY,
    .build = mpirun_build,
    .run = mpirun_run,
};

static const struct opt check_rows[] = {
    REMOTE_ROWS_END("the ofc.v1.TestbedCheckAnswer as JSON"),
};

static const struct remote_cmd check_cmd = {
    .cmd = {"testbed check", "",
	    "the testbed's hosts and circuits checked and its model calibrated, by the daemon",
	    NULL},
    .kind = API_TESTBED_CHECK,
    .opts = {check_rows,
	     "Asks ofcd to check the testbed's hosts as 'ofc testbed check FILE' does without\n"
	     "a daemon: ICMP between every ordered pair of hosts, then what each circuit\n"
	     "carries with all loaded at once (recorded for the runs), then the run's model\n"
	     "calibrated on the committed topology (alpha, a step's cost, from runs of the\n"
	     "executor) and judged by a reference run. Admin only; queued with the\n"
	     "mutations. Exit 1 unless every pair reaches and the reference run's data is\n"
	     "right.\n"},
    .timeout = 600,
    .operands = OPERANDS_NONE,
    .extra = "",
    .run = run_run,
};

static const struct opt down_rows[] = {
    REMOTE_ROWS_END("the ofc.v1.TestbedDownAnswer as JSON"),
};

static const struct remote_cmd down_cmd = {
    .cmd = {"testbed down", "", "the testbed's namespaces removed by the daemon that drives them",
	    NULL},
    .kind = API_TESTBED_DOWN,
    .opts = {down_rows,
	     "Asks ofcd to remove every namespace the testbed made, as 'ofc testbed down\n"
	     "FILE' does without a daemon; its next transactions plan the switches alone.\n"
	     "Admin only; queued with the mutations.\n"},
    .timeout = 120,
    .operands = OPERANDS_NONE,
    .extra = "",
    .run = run_run,
};

static const struct opt up_rows[] = {
    {"rate-scale", cli_row_fraction, REMOTE_B(testbed_up, rate_scale), "X",
     "shape circuits to X times the config's link rate; without it, up shapes to what this "
     "machine carries (and at most 16 Gb/s) and says so"},
    REMOTE_ROWS_END("the ofc.v1.TestbedUpAnswer as JSON"),
};

static const struct remote_cmd up_cmd = {
    .cmd = {"testbed up", "", "the testbed's hosts brought up by the daemon that drives them",
	    NULL},
    .kind = API_TESTBED_UP,
    .opts = {up_rows,
	     "Asks ofcd to bring the testbed up as 'ofc testbed up FILE' does without a\n"
	     "daemon: one network namespace per host, one veth pair per circuit the switches\n"
	     "hold now, shaped, and what they carry measured and recorded for the runs. The\n"
	     "daemon's later transactions move the hosts' circuits with the switches. Admin\n"
	     "only; queued with the mutations.\n"},
    .timeout = 600, /* every namespace, veth and route, then the measures */
    .operands = OPERANDS_NONE,
    .extra = "",
    .run = run_run,
};

const struct cli_table remote_testbed_cli_tables[5] = {
    {"--socket PATH testbed up", up_rows, sizeof(struct remote)},
    {"--socket PATH testbed run", run_rows, sizeof(struct remote)},
    {"--socket PATH testbed check", check_rows, sizeof(struct remote)},
    {"--socket PATH testbed down", down_rows, sizeof(struct remote)},
    {"--socket PATH testbed mpirun", mpirun_rows, sizeof(struct remote)},
};

const struct remote_cmd *remote_testbed_row(const char *action)
{
	return !action			       ? NULL
	       : strcmp(action, "up") == 0     ? &up_cmd
	       : strcmp(action, "run") == 0    ? &run_cmd
	       : strcmp(action, "check") == 0  ? &check_cmd
	       : strcmp(action, "down") == 0   ? &down_cmd
	       : strcmp(action, "mpirun") == 0 ? &mpirun_cmd
					       : NULL;
}

int remote_testbed_refuse(const char *word)
{
	if (!word)
		fprintf(stderr,
			"ofc: testbed: missing the action (up, run, check, down or mpirun)\n");
	else if (word[0] == '-')
		fprintf(stderr,
			"ofc: testbed %s: the action (up, run, check, down or mpirun) comes right "
			"after 'testbed', its options after it: testbed ACTION [OPTIONS]\n",
			word);
	else if (strcmp(word, "link") == 0 || strcmp(word, "miswire") == 0)
		fprintf(stderr,
			"ofc: testbed %s is not asked of ofcd: 'ofc testbed %s FILE ...' makes the "
			"fault on the testbed's host itself\n",
			word, word);
	else
		fprintf(stderr,
			"ofc: unknown testbed action '%s' (ofcd runs up, run, check, down and "
			"mpirun)\n",
			word);
	fprintf(stderr, "Try 'ofc --help'.\n");
	return 2;
}
