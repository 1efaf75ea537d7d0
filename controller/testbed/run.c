/* One schedule on the testbed as a run that is judged: priced by the
 * model on the circuits the hosts hold (model.c), run by the executor,
 * its time and data against the prediction: what ofcd's TestbedRun and
 * `ofc testbed run FILE` do for each schedule they run, one path for
 * both. */
#include "controller/testbed/testbed.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/exec.h"

void testbed_model_of(const struct testbed_net *t, double alpha, struct testbed_model *m,
		      const char **alpha_from)
{
	const char *from;

	m->rate = t->carried > 0 ? t->carried : t->rate;
	/* the bucket counts packets' bytes: its payload, at the share of
	 * the shaping the circuits carried */
	m->burst = t->rate > 0 ? netlink_tbf_bucket(t->rate) * fmin(1, m->rate / t->rate) : 0;
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

double testbed_circuit_bytes(const struct testbed_net *t)
{
	size_t n = (size_t)t->nhosts * t->ports;
	struct link_shape *ls = xcalloc(n + 1, sizeof(*ls));
	struct ofc_error err = {0};
	double sum = 0;

	if (netlink_read_links((const char *const *)t->netns, t->nhosts, t->ports, ls, &err) < 0)
		sum = -1;
	for (size_t i = 0; i < n && sum >= 0; i++)
		sum += (double)ls[i].tx_bytes;
	free(ls);
	return sum;
}

int testbed_carried_now(const struct fabric *f, const char *state_dir, struct testbed_net *t,
			char *note, size_t len, struct ofc_error *err)
{
	struct exec_probe *pr = NULL;
	char r0[32], r1[32];
	double least;

	if (len)
		note[0] = 0;
	if (!(t->rate > 0))
		return 0;
	/* A figure measured on other circuits (before a reconfiguration
	 * changed their number) is not these circuits': measured again. */
	if (!(t->carried > 0) || t->ncarried != t->ncircuits) {
		int rc = testbed_measure(t, &pr, &t->ncarried, &t->carried, &least, err);

		free(pr);
		if (rc < 0 ||
		    testbed_record_carried(state_dir, f->name, t->carried, t->ncarried, err) < 0)
			return -1;
	}
	if (t->carried < TESTBED_CARRY_SHARE * t->rate)
		snprintf(note, len,
			 "the circuits are shaped to %s, and all %u at once carried %s each here: "
			 "measured times can be up to %.3gx the model's; 'ofc testbed up' "
			 "without --rate-scale shapes to what they carry",
			 testbed_rate_str(t->rate, r0, sizeof(r0)), t->ncarried,
			 testbed_rate_str(t->carried, r1, sizeof(r1)), t->rate / t->carried);
	return 0;
}

int testbed_run_schedule(const struct schedule *s, const struct testbed_net *t,
			 const struct testbed_model *m, const struct testbed_run_opts *o,
			 struct testbed_run *r, struct ofc_error *err)
{
	struct exec_net net;
	struct exec_opts eo = {.size = o->size,
			       .deadline = o->deadline,
			       .max_memory = o->max_memory,
			       .step_times = o->step_times,
			       .progress = o->progress,
			       .ctx = o->ctx};
	double before, after;

	memset(r, 0, sizeof(*r));
	r->predicted = NAN;
	r->circuit_bytes = -1;
	/* Unshaped circuits have no rate to price at: the run goes ahead
	 * unpriced, its data checked all the same. */
	if (m->rate > 0) {
		if (o->step_times && s->nsteps)
			r->step_model = xcalloc(s->nsteps, sizeof(double));
		if (testbed_predict(s, t, m, o->size, r->step_model, &r->pred, err) < 0)
			return -1;
		r->predicted = r->pred.seconds;
	}
	testbed_exec_net(t, o->port, &net);
	before = testbed_circuit_bytes(t);
	if (exec_run(s, &net, &eo, &r->res, err) < 0)
		return -1;
	after = testbed_circuit_bytes(t);
	r->ran = true;
	r->measured = r->res.seconds;
	r->data_ok = r->res.data_ok;
	r->circuit_bytes = before >= 0 && after >= 0 ? after - before : -1;
	if (m->rate > 0)
		r->holds = testbed_judge(&r->pred, m, r->measured, r->model, sizeof(r->model));
	else
		snprintf(r->model, sizeof(r->model), "unpriced: the circuits are unshaped");
	return 0;
}

/* sched_verify's own memory on a schedule read back (measured): the
 * all-to-all's check sorts, 8 bytes a transfer (24.9 M transfers: 191
 * MB); the others' about 24 (a 256-node allreduce: 23) and tables of up to
 * 176 bytes a (node, shard) (VERIFY_PIECES_BYTES in schedule/direct.c). */
static uint64_t verify_bytes(const struct testbed_loaded *l)
{
	if (l->collective == SCHED_ALLTOALL)
		return l->nxfers * 8;
	return l->nxfers * 24 + (uint64_t)l->nodes * l->nodes * 176;
}

int testbed_loaded_fits(const struct testbed_loaded *l, const struct testbed_net *t, uint64_t size,
			bool steps, uint64_t limit, struct ofc_error *err)
{
	uint64_t run =
	    exec_memory_bound(l->collective, l->nodes, t->ports, l->nsteps, l->nxfers, size, steps);
	double later = (double)verify_bytes(l) + (double)run + (steps ? 8.0 * l->nsteps : 0);
	double need = (double)l->held + (double)l->sched +
		      (later > (double)l->len ? later - (double)l->len : 0);
	char need_s[32], max_s[32], size_s[32];

	if (need <= (double)limit)
		return 0;
	fmt_size(need_s, sizeof(need_s), need < 1.8e19 ? (uint64_t)need : UINT64_MAX);
	fmt_size(max_s, sizeof(max_s), limit);
	fmt_size(size_s, sizeof(size_s), size);
	return ofc_error_at(err, OFC_E_RUNTIME, l->name, 0, 0,
			    "%llu steps and %llu transfers on %u hosts: reading, checking and "
			    "running them at %s per host needs about %s, over the memory limit of "
			    "%s (--max-memory)",
			    (unsigned long long)l->nsteps, (unsigned long long)l->nxfers, l->nodes,
			    size_s, need_s, max_s);
}

void testbed_run_free(struct testbed_run *r)
{
	exec_result_free(&r->res);
	free(r->step_model);
	r->step_model = NULL;
}
