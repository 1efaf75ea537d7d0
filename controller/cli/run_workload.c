/* ofc testbed run FILE --workload W, the CLI's side: the use case is the
 * testbed's (controller/testbed/workload.c); here a topology is applied as
 * a local transaction on the state directory, and the answer printed, as
 * text or as its message (--json). */
#include "controller/cli/internal.h"
#include "controller/testbed/testbed.h"
#include "proto/workload_run.pb-c.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Candidate t made the fabric's circuits: one transaction on a shallow
 * copy of the fabric whose target is t's. */
static int apply_local(void *ctx, const struct jobplan_topo *t, struct ofc_error *err)
{
	const struct fabric_cmd *fc = ctx;
	struct fabric tf = *fc->fabric;
	struct ctl_opts o = {.state_dir = fc->state_dir,
			     .overrides = (const char *const *)fc->overrides,
			     .noverrides = fc->noverrides};
	struct ctl *ctl;
	/* (committed: a trial deadline left each switching open, and the
	 * next transaction's recovery rolled it back first) */
	struct reconfigure_req q = {.lock = true, .recover = true, .skip_empty = true};
	struct reconfigure_result r;
	int rc;

	tf.graph = t->g;
	tf.ports = t->pm;
	tf.circuits = t->circuits;
	tf.ncircuits = t->ncircuits;
	tf.degraded = NULL;
	tf.topology.spec = t->spec ? t->spec : (char *)t->name; /* (what the record names) */
	if (ctl_open(&tf, &o, &ctl, err) < 0)
		return -1;
	q.ctl = ctl;
	rc = reconfigure_run(&q, &r, err);
	reconfigure_result_free(&r);
	ctl_close(ctl);
	return rc;
}

static int reread_local(void *ctx, struct testbed_net *net, struct ofc_error *err)
{
	const struct fabric_cmd *fc = ctx;

	testbed_net_free(net);
	return testbed_net_read(fc->fabric, fc->state_dir, net, err);
}

static void overhead_text(const Ofc__V1__WorkloadRunOverhead *o)
{
	if (!o->measured) {
		printf(
		    "switching overhead (given): %.4f s a transaction + %.4f s a changed circuit, "
		    "beyond the switches' own time\n",
		    o->transaction_s, o->change_s);
		return;
	}
	if (!o->n_transactions) {
		printf("switching overhead: not measured (no topology to switch to)\n");
		return;
	}
	printf("switching overhead measured in %zu transactions:", o->n_transactions);
	for (size_t i = 0; i < o->n_transactions; i++)
		printf("%s %u changes %.3f s (the switches' %.3f s)", i ? ";" : "",
		       o->transactions[i]->changes, o->transactions[i]->measured_s,
		       o->transactions[i]->switches_s);
	printf("\n  -> %.4f s a transaction + %.4f s a changed circuit beyond the switches' own "
	       "time, in the predictions below\n",
	       o->transaction_s, o->change_s);
}

/* A workload's run for people, from its answer (a way's switching is
 * shown where it switched: its measured time is then above zero). */
void print_workload_run(const Ofc__V1__WorkloadRunAnswer *a)
{
	char rate[32];

	printf("testbed %s: workload %s, %u iteration%s, links %s, alpha %.0f us\n", a->fabric,
	       a->workload, a->iterations, a->iterations == 1 ? "" : "s",
	       a->link_rate_bps > 0 ? testbed_rate_str(a->link_rate_bps, rate, sizeof(rate))
				    : "unshaped",
	       a->alpha_s * 1e6);
	overhead_text(a->switch_overhead);
	for (size_t i = 0; i < a->n_ways; i++) {
		const Ofc__V1__WorkloadRunWay *w = a->ways[i];

		if (!w->ran) {
			printf("%-10s failed: %s\n", w->way, w->error);
			continue;
		}
		printf("%-10s iteration predicted %.4f s (%.4f s with the switches' time alone), "
		       "measured %.4f s, ratio %.3f (first switching %.3f s)\n",
		       w->way, w->iteration_predicted_s, w->iteration_predicted_switches_alone_s,
		       w->iteration_measured_s, w->iteration_measured_s / w->iteration_predicted_s,
		       w->first_switch_measured_s);
		for (size_t p = 0; p < w->n_phases; p++) {
			const Ofc__V1__WorkloadRunPhase *ph = w->phases[p];

			printf("  %-12s %-36.36s predicted %.4f s measured %.4f s ratio %.3f",
			       ph->phase, ph->topology, ph->predicted_s, ph->measured_s,
			       ph->measured_s / ph->predicted_s);
			if (ph->switch_measured_s > 0)
				printf("; switching predicted %.4f s, measured %.4f s",
				       ph->switch_predicted_s, ph->switch_measured_s);
			printf("  %s\n", ph->data_ok ? "data ok" : "WRONG DATA");
		}
	}
	printf("ranking predicted: %s; measured: %s\n", a->ranking_predicted, a->ranking_measured);
}

int testbed_run_workload(struct fabric_cmd *fc, const struct testbed_workload_opts *o,
			 struct testbed_net *t)
{
	struct testbed_workload_hooks h = {.apply = apply_local, .reread = reread_local, .ctx = fc};
	struct testbed_workload run;
	struct ofc_error err = {0};

	if (strcmp(o->workload, "config") == 0 && !fc->fabric->workload.present)
		return cli_usage_error(fc->cmd, "%s has no workload section", fc->file);
	if (testbed_workload_run(fc->fabric, o, t, &h, &run, &err) < 0) {
		if (!run.calibration_failed)
			return cli_fail(&err);
		fprintf(stderr, "ofc testbed run: measuring the switching: %s\n", err.msg);
		return 1;
	}
	if (run.back_error[0])
		fprintf(stderr, "ofc testbed run: %s\n", run.back_error);
	if (fc->json) {
		struct json_writer j;

		jw_init(&j, stdout, true);
		pb_write_json(&j, &run.answer->base);
		jw_finish(&j);
	} else {
		print_workload_run(run.answer);
	}
	int status = run.status;

	testbed_workload_free(&run);
	return status;
}
