/* testbed check's calibration of the run's model: alpha, what a step
 * costs beyond its bytes, from runs of the executor, then a reference run
 * judged by it. For `ofc testbed check` and ofcd's TestbedCheck alike. */
#include "controller/testbed/testbed.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controller/schedule/schedule.h"

/* The calibration's runs: the default allreduce, priced with alpha 0 so
 * that what is left of the time after the bytes is what the steps cost. */
#define CAL_ALPHA_RUNS	  5
#define CAL_ELEMS	  64  /* 4-byte elements a block: bytes that cost microseconds */
#define CAL_REFERENCE_S	  0.5 /* the reference run's predicted time */
#define CAL_REFERENCE_MIN (1ull << 20)
#define CAL_REFERENCE_MAX (64ull << 20)
#define CAL_RUN_SECONDS	  60

static int cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return a < b ? -1 : a > b;
}

/* One run of algo at size, priced by m: its schedule computed by src
 * with a host's egress as the circuits it holds at m's rate. */
static int calibration_run(const struct schedule_source *src, const struct fabric *f,
			   const struct testbed_net *t, const struct testbed_model *m,
			   const char *algo, uint64_t size, struct testbed_run *r,
			   struct ofc_error *err)
{
	double start = now_seconds();
	struct ofc_clock clock = {
	    .start = start, .limit = CAL_RUN_SECONDS, .deadline = start + CAL_RUN_SECONDS};
	struct schedule_query q = {.fabric = f,
				   .collective = SCHED_ALLREDUCE,
				   .algorithm = algo,
				   .size = size,
				   .alpha = m->alpha,
				   .alpha_set = true,
				   .bandwidth = m->rate * testbed_most_circuits(t),
				   .bandwidth_set = true,
				   .clock = &clock};
	struct testbed_run_opts o = {
	    .size = size, .deadline = clock.deadline, .port = TESTBED_RUN_PORT};
	struct schedule_got g;
	int rc;

	memset(r, 0, sizeof(*r));
	if (src->compute(src->ctx, &q, SCHEDULE_GOT_STEPS, &g, err) < 0)
		return -1;
	if (!g.have)
		rc = ofc_error_set(err, OFC_E_RUNTIME, "%s", g.why);
	else
		rc = testbed_run_schedule(&g.s, t, m, &o, r, err);
	schedule_got_free(&g);
	/* Calibration reads only r's figures: what the run holds (each host's
	 * seconds) is freed here, or every check would leak it, a run at a
	 * time. */
	testbed_run_free(r);
	if (rc < 0)
		ofc_error_prefix(err, "calibration: %s allreduce of %llu B", algo,
				 (unsigned long long)size);
	return rc;
}

int testbed_calibrate(const struct schedule_source *src, const struct fabric *f,
		      const char *state_dir, const struct testbed_net *t,
		      struct testbed_calibration *c, struct ofc_error *err)
{
	struct testbed_model m;
	double alpha[CAL_ALPHA_RUNS], per_mib;
	struct testbed_run r;
	uint32_t n = 0;

	testbed_model_of(t, 0, &m, NULL);
	m.alpha = 0;
	memset(c, 0, sizeof(*c));
	c->rate = m.rate;
	if (!(c->rate > 0) || !testbed_most_circuits(t))
		return ofc_error_set(
		    err, OFC_E_RUNTIME,
		    "the circuits are unshaped: nothing to calibrate the model at");
	snprintf(c->algo, sizeof(c->algo), "%s",
		 schedule_default_algorithm(ENGINE_DIRECT, SCHED_ALLREDUCE));
	for (uint32_t k = 0; k < CAL_ALPHA_RUNS; k++) {
		uint64_t size = (uint64_t)t->nhosts * 4 * CAL_ELEMS;

		if (calibration_run(src, f, t, &m, c->algo, size, &r, err) < 0)
			return -1;
		if (!r.data_ok || !r.pred.steps)
			return ofc_error_set(err, OFC_E_RUNTIME,
					     "calibration: %s allreduce of %llu B: wrong data",
					     c->algo, (unsigned long long)size);
		alpha[n++] = (r.measured - r.pred.bytes_s) / r.pred.steps;
		c->alpha_steps += r.pred.steps;
	}
	qsort(alpha, n, sizeof(double), cmp_double);
	c->alpha = alpha[n / 2] > 0 ? alpha[n / 2] : 0;
	c->alpha_runs = n;

	/* The reference: the same allreduce at a size the bytes dominate,
	 * priced with the alpha just measured, judged; 1 MiB's bytes' term
	 * sizes it. */
	m.alpha = c->alpha;
	if (calibration_run(src, f, t, &m, c->algo, 1u << 20, &r, err) < 0)
		return -1;
	per_mib = r.pred.bytes_s;
	c->size = per_mib > 0 ? (uint64_t)(CAL_REFERENCE_S / per_mib) << 20 : CAL_REFERENCE_MIN;
	c->size = c->size < CAL_REFERENCE_MIN	? CAL_REFERENCE_MIN
		  : c->size > CAL_REFERENCE_MAX ? CAL_REFERENCE_MAX
						: c->size;
	if (calibration_run(src, f, t, &m, c->algo, c->size, &r, err) < 0)
		return -1;
	c->measured = r.measured;
	c->pred = r.pred;
	c->data_ok = r.data_ok;
	c->holds = r.holds;
	snprintf(c->model, sizeof(c->model), "%s", r.model);
	return testbed_record_alpha(state_dir, f->name, c->alpha, err);
}
