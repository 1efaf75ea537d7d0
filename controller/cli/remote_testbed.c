/* ofc --socket PATH testbed run: the daemon runs collectives on the
 * testbed's hosts for the topology it committed (controller/ofcd/
 * testbed.c), and its answer is printed as `ofc testbed run FILE` prints
 * a run: each algorithm measured against the model's prediction, the
 * ratio, the data check, and the term of the model that is off. */
#include "controller/cli/remote.h"

#include <stdlib.h>
#include <string.h>

#define OR_DASH(p) ((p) && *(p) ? (p) : "-")

static int run_opt(struct remote *r, union remote_body *b, int c, const char *arg)
{
	Ofc__V1__TestbedRun *q = &b->testbed_run;
	const char *why = NULL;

	switch (c) {
	case 'a':
		q->algorithm = (char *)arg;
		return 0;
	case 'c':
		q->collective = (char *)arg;
		return 0;
	case 's':
		q->has_size = 1;
		if (parse_size(arg, &q->size, &why) == 0 && q->size > 0)
			return 0;
		return cli_usage_error(r->cmd, "--size '%s': %s", arg, why ? why : "must be > 0");
	case 'A':
		q->has_alpha = 1;
		if (parse_duration(arg, &q->alpha, &why) == 0)
			return 0;
		return cli_usage_error(r->cmd, "--alpha '%s': %s", arg, why ? why : "a duration");
	case 'T':
		q->has_timeout = 1;
		if (parse_duration(arg, &q->timeout, &why) == 0 && q->timeout > 0)
			return 0;
		return cli_usage_error(r->cmd, "--run-timeout '%s': %s", arg,
				       why ? why : "must be > 0");
	}
	return 2;
}

static void print_run(const Ofc__V1__TestbedRunAnswer *m)
{
	printf("testbed %s: %s of %.4g MiB per host on %u hosts, alpha %.0f us (%s)\n",
	       OR_DASH(m->fabric), OR_DASH(m->collective), (double)m->size / 1048576.0, m->hosts,
	       m->alpha_s * 1e6, OR_DASH(m->alpha_from));
	printf("  topology %s (committed, as ofcd holds it), %u circuits\n",
	       m->topology && m->topology[0] ? m->topology : "the config's", m->circuits);
	if (m->model_rate_bps > 0)
		printf("  the model prices a circuit at %.4g Mb/s (what all of them carried at "
		       "once)\n",
		       m->model_rate_bps / 1e6);
	if (m->carried_note)
		printf("  warning: %s\n", m->carried_note);
	printf("  %-18s %6s %11s %11s %7s  %s\n", "algorithm", "steps", "measured_s", "predicted_s",
	       "ratio", "data");
	for (size_t i = 0; i < m->n_runs; i++) {
		const Ofc__V1__TestbedRunResult *o = m->runs[i];

		if (!o->ran) {
			printf("  %-18s failed: %s\n", OR_DASH(o->algorithm), OR_DASH(o->error));
			continue;
		}
		if (o->has_predicted_s)
			printf("  %-18s %6u %11.4f %11.4f %7.3f  %s\n", o->algorithm, o->steps,
			       o->measured_s, o->predicted_s, o->ratio,
			       o->data_ok ? "ok" : "WRONG");
		else
			printf("  %-18s %6u %11.4f %11s %7s  %s\n", o->algorithm, o->steps,
			       o->measured_s, "-", "-", o->data_ok ? "ok" : "WRONG");
		if (!o->model_holds && o->model)
			printf("  %-18s (%s)\n", "", o->model);
	}
}

/* The answer's runs are printed whatever its status (a run that failed
 * is one of them); a failure's reason goes to stderr with the exit
 * status, --json or not. */
static int run_run(struct remote *r, Ofc__V1__Request *req)
{
	Ofc__V1__Response *resp;
	int rc;

	if ((rc = remote_call(r, req, 0, &resp)) != 0)
		return rc;
	if (resp->body_case != OFC__V1__RESPONSE__BODY_TESTBED_RUN)
		return remote_finish(r, resp);
	if (r->json)
		remote_print_json(stdout, &resp->testbed_run->base);
	else
		print_run(resp->testbed_run);
	rc = remote_status_exit(resp->status);
	if (rc)
		fprintf(stderr, "ofc: %s\n", resp->message ? resp->message : "failed");
	ofc__v1__response__free_unpacked(resp, NULL);
	return rc;
}

static const struct remote_cmd run_cmd = {
    .cmd = {"testbed run",
	    "[--algo NAME|all] [--collective C] [--size N] [--alpha DUR] [--run-timeout DUR] "
	    "[--json] [--timeout DUR]",
	    "collectives on the testbed's hosts, run by the daemon for its committed topology",
	    NULL},
    .kind = API_TESTBED_RUN,
    .opts = (const struct option[]){{"algo", required_argument, NULL, 'a'},
				    {"collective", required_argument, NULL, 'c'},
				    {"size", required_argument, NULL, 's'},
				    {"alpha", required_argument, NULL, 'A'},
				    {"run-timeout", required_argument, NULL, 'T'},
				    REMOTE_COMMON_OPTS,
				    {0}},
    .help = "Asks ofcd to run a collective on the testbed's hosts (brought up with 'ofc\n"
	    "testbed up FILE'), scheduled for the topology the daemon committed, as 'ofc\n"
	    "testbed run FILE' does without a daemon: each algorithm verified, priced by\n"
	    "the testbed's model, run, its data checked and the model judged. Admin only;\n"
	    "queued with the mutations. Exit 1 when a run failed or moved wrong data.\n\n"
	    "  --algo NAME|all    one algorithm, or every one that applies (default: the\n"
	    "                     pick)\n"
	    "  --collective C     allreduce (default), allgather, reduce-scatter, alltoall\n"
	    "  --size N           bytes per host (default 1M)\n"
	    "  --alpha DUR        a step's cost (default: testbed check's calibration)\n"
	    "  --run-timeout DUR  each run's limit (default 600s)\n"
	    "  --json             the ofc.v1.TestbedRunAnswer as JSON\n",
    .timeout = 3600, /* every algorithm's run, one after another */
    .operands = OPERANDS_NONE,
    .extra = "",
    .opt = run_opt,
    .run = run_run,
};

const struct remote_cmd *remote_testbed_row(const char *action)
{
	return strcmp(action, "run") == 0 ? &run_cmd : NULL;
}
