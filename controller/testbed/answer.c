/* The testbed's results as the ofc.v1 messages (proto/control.proto) that
 * ofcd answers and the CLI's local --json prints, so a script reads one
 * shape whether it asked the daemon or ran the command itself. */
#include "controller/testbed/internal.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>

#include "proto/control.pb-c.h"

void testbed_up_note(struct testbed_up_result *r, const char *fmt, ...)
{
	va_list ap;

	if (r->nnotes >= TESTBED_UP_NOTES)
		return;
	va_start(ap, fmt);
	vsnprintf(r->notes[r->nnotes++], sizeof(r->notes[0]), fmt, ap);
	va_end(ap);
}

Ofc__V1__TestbedUpAnswer *testbed_up_answer(struct arena *a, const char *fabric,
					    const struct testbed_up_result *r)
{
	Ofc__V1__TestbedUpAnswer *m = arena_alloc(a, sizeof(*m));

	ofc__v1__testbed_up_answer__init(m);
	m->fabric = arena_strdup(a, fabric);
	m->has_hosts = m->has_circuits = m->has_rate_bps = m->has_carried_bps = 1;
	m->has_rate_scale = 1;
	m->hosts = r->hosts;
	m->circuits = r->circuits;
	m->rate_bps = r->rate;
	m->carried_bps = r->carried;
	m->rate_scale = r->rate_scale;
	m->notes = arena_array(a, r->nnotes + 1, sizeof(*m->notes));
	for (uint32_t i = 0; i < r->nnotes; i++)
		m->notes[m->n_notes++] = arena_strdup(a, r->notes[i]);
	return m;
}

/* One run as the result both print: the model's price (absent when the
 * circuits are unshaped), what was measured and the data check (when it
 * ran), each step beside the model's (when the run kept them). The
 * caller sets algorithm, steps, transfers and the verifier's verdict. */
Ofc__V1__TestbedRunResult *testbed_run_result(struct arena *a, const struct testbed_run *r,
					      uint64_t size)
{
	Ofc__V1__TestbedRunResult *m = arena_alloc(a, sizeof(*m));
	const struct exec_result *x = &r->res;

	ofc__v1__testbed_run_result__init(m);
	m->has_ran = 1;
	m->ran = r->ran;
	if (!isnan(r->predicted)) {
		m->has_predicted_s = m->has_predicted_alpha_s = m->has_predicted_bytes_s = 1;
		m->has_routed_transfers = m->has_circuits_used = 1;
		m->predicted_s = r->predicted;
		m->predicted_alpha_s = r->pred.alpha_s;
		m->predicted_bytes_s = r->pred.bytes_s;
		m->routed_transfers = r->pred.routed;
		m->circuits_used = r->pred.circuits_used;
	}
	if (!r->ran)
		return m;
	m->has_measured_s = m->has_data_ok = m->has_algbw_bytes_per_s = 1;
	m->has_block_bytes = m->has_payload_bytes = m->has_connections = 1;
	m->has_checked_elements = m->has_bad_elements = 1;
	m->measured_s = r->measured;
	m->data_ok = r->data_ok;
	m->algbw_bytes_per_s = (double)size / r->measured;
	m->block_bytes = x->block_bytes;
	m->payload_bytes = x->payload_bytes;
	m->connections = x->connections;
	m->checked_elements = x->checked_elements;
	m->bad_elements = x->bad_elements;
	if (!r->data_ok)
		m->first_bad = arena_strdup(a, x->first_bad);
	if (r->mpi) {
		m->has_mpi_finalize_hung = 1;
		m->mpi_finalize_hung = r->mpi_finalize_hung;
	}
	if (r->circuit_bytes >= 0) {
		m->has_circuit_bytes = 1;
		m->circuit_bytes = r->circuit_bytes;
	}
	if (r->model[0])
		m->model = arena_strdup(a, r->model);
	if (!isnan(r->predicted)) {
		m->has_ratio = m->has_model_holds = 1;
		m->ratio = r->measured / r->predicted;
		m->model_holds = r->holds;
	}
	if (r->step_model && x->step_end) {
		m->steps_detail = arena_array(a, x->nsteps + 1, sizeof(*m->steps_detail));
		for (uint32_t k = 0; k < x->nsteps; k++) {
			Ofc__V1__TestbedRunStep *st = arena_alloc(a, sizeof(*st));

			ofc__v1__testbed_run_step__init(st);
			st->has_measured_s = st->has_predicted_s = 1;
			st->measured_s = x->step_end[k] - (k ? x->step_end[k - 1] : 0);
			st->predicted_s = r->step_model[k];
			m->steps_detail[m->n_steps_detail++] = st;
		}
	}
	return m;
}

/* TestbedRun's answer without its runs: the testbed as read (t), the
 * topology the runs are for and why, the model they are priced at;
 * note the warning that the circuits carry less than their shaping. */
Ofc__V1__TestbedRunAnswer *testbed_run_answer(struct arena *a, const struct testbed_run_head *h)
{
	Ofc__V1__TestbedRunAnswer *m = arena_alloc(a, sizeof(*m));
	const struct testbed_net *t = h->net;

	ofc__v1__testbed_run_answer__init(m);
	m->fabric = arena_strdup(a, h->fabric);
	m->topology = arena_strdup(a, h->topology ? h->topology : "");
	m->topology_from = arena_strdup(a, h->topology_from);
	m->has_hosts = m->has_circuits = m->has_model_rate_bps = m->has_alpha_s = 1;
	m->has_size = m->has_link_rate_bps = 1;
	m->hosts = t->nhosts;
	m->circuits = t->ncircuits;
	m->link_rate_bps = t->rate;
	if (t->rate > 0) {
		m->has_carried_bps = m->has_carried_circuits = 1;
		m->carried_bps = t->carried;
		m->carried_circuits = t->ncarried;
	}
	m->model_rate_bps = h->model->rate;
	m->alpha_s = h->model->alpha;
	m->alpha_from = arena_strdup(a, h->alpha_from);
	m->collective = arena_strdup(a, sched_collective_name(h->collective));
	m->size = h->size;
	if (h->note && h->note[0])
		m->carried_note = arena_strdup(a, h->note);
	return m;
}
