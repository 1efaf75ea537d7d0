/* One schedule on the testbed as a run that is judged: priced by the
 * model on the circuits the hosts hold (model.c), run by the executor,
 * its time and data against the prediction. What ofcd's TestbedRun does
 * for each algorithm it is asked, on the daemon's committed fabric. */
#include "controller/testbed/testbed.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "exec/exec.h"

void testbed_model_of(const struct testbed_net *t, double alpha, struct testbed_model *m,
		      const char **alpha_from)
{
	const char *from;

	m->rate = t->carried > 0 ? t->carried : t->rate;
	if (alpha > 0) {
		m->alpha = alpha;
		from = "asked";
	} else if (t->alpha > 0) {
		m->alpha = t->alpha;
		from = "calibrated by testbed check";
	} else {
		m->alpha = t->latency + TESTBED_ALPHA_DEFAULT;
		from = "not calibrated: the link latency + 100 us; testbed check measures it";
	}
	if (alpha_from)
		*alpha_from = from;
}

uint32_t testbed_most_circuits(const struct testbed_net *t)
{
	uint32_t most = 0;

	for (uint32_t h = 0; h < t->nhosts; h++) {
		uint32_t c = 0;

		for (uint32_t p = 0; p < t->ports; p++)
			c += t->peer[(size_t)h * t->ports + p] != UINT32_MAX;
		most = c > most ? c : most;
	}
	return most;
}

int testbed_run_schedule(const struct schedule *s, const struct testbed_net *t,
			 const struct testbed_model *m, const struct testbed_run_opts *o,
			 struct testbed_run *r, struct ofc_error *err)
{
	struct exec_net net;
	struct exec_result res;
	struct exec_opts eo = {
	    .size = o->size, .deadline = o->deadline, .max_memory = o->max_memory};

	memset(r, 0, sizeof(*r));
	r->predicted = NAN;
	/* Unshaped circuits have no rate to price at: the run goes ahead
	 * unpriced, its data checked all the same. */
	if (m->rate > 0) {
		if (testbed_predict(s, t, m, o->size, NULL, &r->pred, err) < 0)
			return -1;
		r->predicted = r->pred.seconds;
	}
	testbed_exec_net(t, o->port, &net);
	if (exec_run(s, &net, &eo, &res, err) < 0)
		return -1;
	r->ran = true;
	r->measured = res.seconds;
	r->data_ok = res.data_ok;
	if (m->rate > 0)
		r->holds = testbed_judge(&r->pred, m, r->measured, r->model, sizeof(r->model));
	else
		snprintf(r->model, sizeof(r->model), "unpriced: the circuits are unshaped");
	exec_result_free(&res);
	return 0;
}
