/* The testbed through ofcd: TestbedRun runs a collective on the testbed's
 * hosts (network namespaces on this machine, brought up with `ofc testbed
 * up`) for the topology the daemon has committed, each algorithm priced by
 * the testbed's model, run and judged, so that a testbed and the daemon
 * that drives its hosts coexist and a script follows what the daemon
 * committed, not what a file says. It drives hosts, so it is an admin's
 * mutation run by the mutation worker: no transaction moves the circuits
 * under a run. */
#include "controller/testbed/testbed.h"
#include "controller/ofcd/answer.h"
#include "controller/ofcd/worker.h"
#include "exec/exec.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The most algorithms one request runs ("all" on a direct topology). */
#define TESTBED_MAX_RUNS 16

/* The topology the daemon committed, when the record names another than
 * the config's (not a renumbered one or a partition's: the config's then,
 * and a run refuses a schedule whose ports reach other hosts than the
 * circuits do). */
static int committed_topology(const struct ctl *c, struct testbed_topo *w, struct ofc_error *err)
{
	const struct fabric *f = c->fabric;
	struct ctl_record r;
	const char *spec;
	int rc = 0;

	memset(w, 0, sizeof(*w));
	if (ctl_load_record_for(c, &r, err) < 0)
		return -1;
	if ((spec = ctl_record_other_spec(f, &r)))
		rc = testbed_topo_open(f, spec, w, err);
	ctl_record_free(&r);
	return rc;
}

/* The circuits' rate measured again when what was measured is not these
 * circuits' (before a reconfiguration changed their number), recorded for
 * the next run; a note when they carry less than their shaping. */
static int carried(struct ofcd *d, const struct fabric *f, struct testbed_net *t, struct answer *an,
		   Ofc__V1__TestbedRunAnswer *m, struct ofc_error *err)
{
	struct exec_probe *pr = NULL;
	char r0[32], r1[32];
	double least;

	if (!(t->rate > 0))
		return 0;
	if (!(t->carried > 0) || t->ncarried != t->ncircuits) {
		int rc = testbed_measure(t, &pr, &t->ncarried, &t->carried, &least, err);

		free(pr);
		if (rc < 0 ||
		    testbed_record_carried(d->state_dir, f->name, t->carried, t->ncarried, err) < 0)
			return -1;
	}
	if (t->carried < TESTBED_CARRY_SHARE * t->rate)
		m->carried_note = arena_printf(
		    &an->a,
		    "the circuits are shaped to %s, and all %u at once carried %s each here: "
		    "measured times can be up to %.3gx the model's",
		    testbed_rate_str(t->rate, r0, sizeof(r0)), t->ncarried,
		    testbed_rate_str(t->carried, r1, sizeof(r1)), t->rate / t->carried);
	return 0;
}

/* One algorithm: its schedule for q's fabric, run and judged, as a result. */
static Ofc__V1__TestbedRunResult *run_one(struct answer *an, const struct schedule_query *q0,
					  const char *algo, const struct testbed_net *t,
					  const struct testbed_model *m, double seconds)
{
	Ofc__V1__TestbedRunResult *o = arena_alloc(&an->a, sizeof(*o));
	struct schedule_query q = *q0;
	struct ofc_clock clock = {.start = now_seconds(), .limit = seconds};
	struct testbed_run_opts ro = {.size = q.size, .port = TESTBED_RUN_PORT};
	struct ofc_error err = {0};
	struct schedule_result r;
	struct testbed_run run;

	ofc__v1__testbed_run_result__init(o);
	o->algorithm = arena_strdup(&an->a, algo);
	clock.deadline = ro.deadline = clock.start + seconds;
	q.clock = &clock;
	q.algorithm = algo;
	if (schedule_compute(&q, &r, NULL, &err) < 0) {
		o->error = arena_strdup(&an->a, err.msg);
		return o;
	}
	if (!r.main->applies || !r.main->have) {
		o->error = arena_strdup(&an->a, r.main->why);
	} else if (!r.main->verified) {
		/* (every schedule ofc runs is one the verifier passed) */
		o->error =
		    arena_printf(&an->a, "the verifier rejected it: %s", r.main->verify_error);
	} else {
		ro.max_memory = q.max_memory;
		o->has_steps = 1;
		o->steps = r.main->s.nsteps;
		if (testbed_run_schedule(&r.main->s, t, m, &ro, &run, &err) < 0) {
			o->error = arena_strdup(&an->a, err.msg);
		} else {
			o->has_ran = o->has_measured_s = o->has_data_ok = 1;
			o->ran = true;
			o->measured_s = run.measured;
			o->data_ok = run.data_ok;
			o->model = arena_strdup(&an->a, run.model);
			if (!isnan(run.predicted)) {
				o->has_predicted_s = o->has_predicted_alpha_s = 1;
				o->has_predicted_bytes_s = o->has_ratio = o->has_model_holds = 1;
				o->has_routed_transfers = o->has_circuits_used = 1;
				o->predicted_s = run.predicted;
				o->predicted_alpha_s = run.pred.alpha_s;
				o->predicted_bytes_s = run.pred.bytes_s;
				o->ratio = run.measured / run.predicted;
				o->model_holds = run.holds;
				o->routed_transfers = run.pred.routed;
				o->circuits_used = run.pred.circuits_used;
			}
		}
	}
	schedule_result_free(&r);
	return o;
}

/* The algorithms asked: "all" is every one that applies (the comparison
 * schedule_compute makes), else the one named or the pick. */
static uint32_t algorithms(const struct schedule_query *q, const struct job *j, char names[][48],
			   struct ofc_error *err)
{
	struct schedule_result r;
	uint32_t n = 0;

	if (!j->algo || !schedule_algorithm_compares(j->algo, ENGINE_DIRECT)) {
		snprintf(names[0], 48, "%s",
			 j->algo ? j->algo
				 : schedule_default_algorithm(ENGINE_DIRECT, q->collective));
		return 1;
	}
	struct schedule_query all = *q;

	all.algorithm = j->algo;
	all.no_certify = true;
	if (schedule_compute(&all, &r, NULL, err) < 0)
		return 0;
	for (uint32_t i = 0; i < r.nout && n < TESTBED_MAX_RUNS; i++)
		if (r.out[i].applies)
			snprintf(names[n++], 48, "%s", r.out[i].algo);
	schedule_result_free(&r);
	return n;
}

/* The runs into m; -1 with err when the testbed cannot be read or
 * measured. */
static int run_all(struct ofcd *d, struct job *j, struct answer *an, Ofc__V1__TestbedRunAnswer *m,
		   struct ofc_error *err)
{
	const struct fabric *f = d->w->ctl->fabric;
	struct testbed_topo committed = {0};
	struct testbed_net t;
	struct testbed_model model;
	const char *from;
	char names[TESTBED_MAX_RUNS][48];
	uint32_t most, n;
	int rc = -1;

	if (!testbed_is_up(d->state_dir, f->name))
		return ofc_error_set(err, OFC_E_RUNTIME,
				     "the testbed of fabric '%s' is not up (ofc testbed up)",
				     f->name);
	if (testbed_need_root(err) < 0 || testbed_net_read(f, d->state_dir, &t, err) < 0)
		return -1;
	if (carried(d, f, &t, an, m, err) < 0 || committed_topology(d->w->ctl, &committed, err) < 0)
		goto out;
	testbed_model_of(&t, j->alpha, &model, &from);
	most = testbed_most_circuits(&t);

	struct schedule_query q = {.fabric = committed.open ? &committed.f : f,
				   .collective = j->coll,
				   .size = j->size,
				   .alpha = model.alpha,
				   .alpha_set = true};
	if (model.rate > 0 && most) {
		q.bandwidth = model.rate * most;
		q.bandwidth_set = true;
	}
	m->fabric = arena_strdup(&an->a, f->name);
	m->topology = arena_strdup(&an->a, committed.open     ? committed.spec
					   : f->topology.spec ? f->topology.spec
							      : "");
	m->has_hosts = m->has_circuits = m->has_model_rate_bps = m->has_alpha_s = m->has_size = 1;
	m->hosts = t.nhosts;
	m->circuits = t.ncircuits;
	m->model_rate_bps = model.rate;
	m->alpha_s = model.alpha;
	m->alpha_from = (char *)from;
	m->collective = (char *)sched_collective_name(j->coll);
	m->size = j->size;
	if (!(n = algorithms(&q, j, names, err)))
		goto out;
	m->runs = arena_array(&an->a, n + 1, sizeof(*m->runs));
	for (uint32_t i = 0; i < n; i++)
		m->runs[m->n_runs++] = run_one(an, &q, names[i], &t, &model, j->max_time);
	rc = 0;
out:
	testbed_topo_free(&committed);
	testbed_net_free(&t);
	return rc;
}

/* Every ordered pair's reach into m; the number that did not. */
static uint32_t reach(const struct fabric *f, struct answer *an, Ofc__V1__TestbedCheckAnswer *m,
		      struct ofc_error *err)
{
	uint32_t n = f->nhosts, bad = 0;
	uint8_t *ok = xcalloc((size_t)n * n + 1, 1);
	char **names = xcalloc(n + 1, sizeof(char *));
	int rc;

	for (uint32_t h = 0; h < n; h++)
		names[h] = testbed_netns_name(f, h);
	rc = testbed_ping_all((const char *const *)names, n, 3.0, ok, err);
	m->unreachable = arena_array(&an->a, (size_t)n * n + 1, sizeof(*m->unreachable));
	for (uint32_t s = 0; s < n && rc == 0; s++)
		for (uint32_t t = 0; t < n; t++) {
			if (s == t)
				continue;
			if (ok[(size_t)s * n + t]) {
				m->reachable++;
				continue;
			}
			Ofc__V1__TestbedPair *p = arena_alloc(&an->a, sizeof(*p));

			ofc__v1__testbed_pair__init(p);
			p->src = arena_strdup(&an->a, f->hosts[s].name);
			p->dst = arena_strdup(&an->a, f->hosts[t].name);
			m->unreachable[m->n_unreachable++] = p;
			bad++;
		}
	m->has_pairs = m->has_reachable = 1;
	m->pairs = rc == 0 ? n * (n - 1) : 0;
	for (uint32_t h = 0; h < n; h++)
		free(names[h]);
	free(names);
	free(ok);
	return rc < 0 ? UINT32_MAX : bad;
}

static Ofc__V1__TestbedCalibration *calibration_msg(struct answer *an,
						    const struct testbed_calibration *c)
{
	Ofc__V1__TestbedCalibration *k = arena_alloc(&an->a, sizeof(*k));

	ofc__v1__testbed_calibration__init(k);
	k->has_alpha_s = k->has_alpha_runs = k->has_rate_bps = k->has_size = 1;
	k->has_measured_s = k->has_predicted_s = k->has_predicted_alpha_s = 1;
	k->has_predicted_bytes_s = k->has_ratio = k->has_data_ok = k->has_model_holds = 1;
	k->alpha_s = c->alpha;
	k->alpha_runs = c->alpha_runs;
	k->rate_bps = c->rate;
	k->algorithm = arena_strdup(&an->a, c->algo);
	k->size = c->size;
	k->measured_s = c->measured;
	k->predicted_s = c->pred.seconds;
	k->predicted_alpha_s = c->pred.alpha_s;
	k->predicted_bytes_s = c->pred.bytes_s;
	k->ratio = c->measured / c->pred.seconds;
	k->data_ok = c->data_ok;
	k->model_holds = c->holds;
	k->model = arena_strdup(&an->a, c->model);
	return k;
}

/* What the circuits carry (each probed, all at once; recorded for the
 * runs), then the model calibrated on the committed topology. */
static int links(struct ofcd *d, const struct fabric *f, struct answer *an,
		 Ofc__V1__TestbedCheckAnswer *m, struct ofc_error *err)
{
	struct testbed_topo committed = {0};
	struct testbed_calibration cal;
	struct testbed_net t;
	struct link_shape *sh;
	struct exec_probe *pr = NULL;
	uint32_t npr = 0;
	double median, least;
	int rc = -1;

	if (testbed_net_read(f, d->state_dir, &t, err) < 0)
		return -1;
	sh = xcalloc((size_t)t.nhosts * t.ports + 1, sizeof(*sh));
	if (netlink_read_links((const char *const *)t.netns, t.nhosts, t.ports, sh, err) < 0 ||
	    testbed_measure(&t, &pr, &npr, &median, &least, err) < 0 ||
	    testbed_record_carried(d->state_dir, f->name, median, npr, err) < 0)
		goto out;
	m->has_carried_bps = m->has_carried_least_bps = 1;
	m->carried_bps = median;
	m->carried_least_bps = least;
	if (t.rate > 0) {
		m->has_carries_shaped_rate = 1;
		m->carries_shaped_rate = median >= TESTBED_CARRY_SHARE * t.rate;
	}
	m->circuits = arena_array(&an->a, npr + 1, sizeof(*m->circuits));
	for (uint32_t i = 0; i < npr; i++) {
		const struct exec_probe *p = &pr[i];
		const struct link_shape *s = &sh[(size_t)p->host * t.ports + p->lane];
		Ofc__V1__TestbedCircuit *o = arena_alloc(&an->a, sizeof(*o));

		ofc__v1__testbed_circuit__init(o);
		o->src = arena_strdup(&an->a, f->hosts[p->host].name);
		o->dst = arena_strdup(&an->a, f->hosts[p->peer].name);
		o->has_port = o->has_shaped_rate_bps = o->has_shaped_latency_s = 1;
		o->has_rate_bps = o->has_latency_s = 1;
		o->port = p->lane;
		o->shaped_rate_bps = s->rate;
		o->shaped_latency_s = s->latency;
		o->rate_bps = p->rate;
		o->latency_s = p->latency;
		m->circuits[m->n_circuits++] = o;
	}
	t.carried = median;
	t.ncarried = npr;
	if (committed_topology(d->w->ctl, &committed, err) < 0)
		goto out;
	m->topology = arena_strdup(&an->a, committed.open     ? committed.spec
					   : f->topology.spec ? f->topology.spec
							      : "");
	if (t.rate > 0 && npr) {
		if (testbed_calibrate(committed.open ? &committed.f : f, d->state_dir, &t, &cal,
				      err) < 0)
			goto out;
		m->calibration = calibration_msg(an, &cal);
	}
	rc = 0;
out:
	testbed_topo_free(&committed);
	free(pr);
	free(sh);
	testbed_net_free(&t);
	return rc;
}

/* (mutation worker) JOB_TESTBED_CHECK: OK when every pair reaches, every
 * circuit carried and the reference run's data is right (whether the
 * model held is the calibration's), FAILED otherwise. */
static void run_check(struct ofcd *d, struct job *j)
{
	const struct fabric *f = d->w->ctl->fabric;
	Ofc__V1__TestbedCheckAnswer *m;
	struct ofc_error err = {0};
	struct answer an;
	uint32_t bad = 0;
	int rc = 0;

	answer_init(&an, j);
	an.t.kind = "testbed-check";
	m = arena_alloc(&an.a, sizeof(*m));
	ofc__v1__testbed_check_answer__init(m);
	m->fabric = arena_strdup(&an.a, f->name);
	m->has_hosts = 1;
	m->hosts = f->nhosts;
	if (!testbed_is_up(d->state_dir, f->name))
		rc =
		    ofc_error_set(&err, OFC_E_RUNTIME,
				  "the testbed of fabric '%s' is not up (ofc testbed up)", f->name);
	else if (testbed_need_root(&err) < 0 || (bad = reach(f, &an, m, &err)) == UINT32_MAX)
		rc = -1;
	else if (!bad)
		rc = links(d, f, &an, m, &err);
	if (rc < 0) {
		answer_status(&an, OFC__V1__STATUS__STATUS_FAILED, "%s", err.msg);
		an.t.state = "refused";
	} else {
		for (size_t i = 0; i < m->n_circuits; i++)
			bad += !(m->circuits[i]->rate_bps > 0);
		if (m->calibration && !m->calibration->data_ok)
			bad++;
		if (bad)
			answer_status(&an, OFC__V1__STATUS__STATUS_FAILED,
				      "%u of %u ordered pairs reach each other; %s", m->reachable,
				      m->pairs,
				      m->n_unreachable ? "not every host reaches every other"
						       : "a circuit or the reference run failed");
		else
			answer_status(&an, OFC__V1__STATUS__STATUS_OK,
				      "%u of %u ordered pairs reach each other", m->reachable,
				      m->pairs);
		an.t.state = bad ? "failed" : "done";
		an.r.body_case = OFC__V1__RESPONSE__BODY_TESTBED_CHECK;
		an.r.testbed_check = m;
	}
	j->outcome = an.t.state;
	response_pack(&an.r, &j->reply, &j->reply_len);
	arena_free(&an.a);
}

/* (mutation worker) JOB_TESTBED_DOWN: the namespaces the testbed made
 * removed (testbed_down); the next transaction sees no testbed up and
 * plans the switches alone. */
static void run_down(struct ofcd *d, struct job *j)
{
	const struct fabric *f = d->w->ctl->fabric;
	Ofc__V1__TestbedDownAnswer *m;
	struct ofc_error err = {0};
	struct answer an;
	uint32_t n = 0;

	answer_init(&an, j);
	an.t.kind = "testbed-down";
	if (testbed_need_root(&err) < 0 || testbed_down(f, d->state_dir, &n, &err) < 0) {
		answer_status(&an, OFC__V1__STATUS__STATUS_FAILED, "%s", err.msg);
		an.t.state = "refused";
	} else {
		m = arena_alloc(&an.a, sizeof(*m));
		ofc__v1__testbed_down_answer__init(m);
		m->fabric = arena_strdup(&an.a, f->name);
		m->has_removed = 1;
		m->removed = n;
		answer_status(&an, OFC__V1__STATUS__STATUS_OK,
			      "testbed %s down: %u namespace%s removed", f->name, n,
			      n == 1 ? "" : "s");
		an.t.state = "done";
		an.r.body_case = OFC__V1__RESPONSE__BODY_TESTBED_DOWN;
		an.r.testbed_down = m;
	}
	j->outcome = an.t.state;
	response_pack(&an.r, &j->reply, &j->reply_len);
	arena_free(&an.a);
}

/* (mutation worker) JOB_TESTBED_RUN: OK when every run ran with the right
 * data (whether the model held is each result's), FAILED otherwise. */
void ofcd_run_testbed(struct ofcd *d, struct job *j)
{
	Ofc__V1__TestbedRunAnswer *m;
	struct ofc_error err = {0};
	struct answer an;
	uint32_t bad = 0;

	if (j->kind == JOB_TESTBED_CHECK) {
		run_check(d, j);
		return;
	}
	if (j->kind == JOB_TESTBED_DOWN) {
		run_down(d, j);
		return;
	}
	answer_init(&an, j);
	an.t.kind = "testbed-run";
	m = arena_alloc(&an.a, sizeof(*m));
	ofc__v1__testbed_run_answer__init(m);
	if (run_all(d, j, &an, m, &err) < 0) {
		answer_status(&an,
			      err.code == OFC_E_INPUT ? OFC__V1__STATUS__STATUS_INVALID
						      : OFC__V1__STATUS__STATUS_FAILED,
			      "%s", err.msg);
		an.t.state = "refused";
	} else {
		for (size_t i = 0; i < m->n_runs; i++)
			bad += !m->runs[i]->ran || !m->runs[i]->data_ok;
		if (bad)
			answer_status(&an, OFC__V1__STATUS__STATUS_FAILED,
				      "%u of %zu runs failed or moved wrong data", bad, m->n_runs);
		else
			answer_status(&an, OFC__V1__STATUS__STATUS_OK, "%zu runs on the testbed",
				      m->n_runs);
		an.t.state = bad ? "failed" : "done";
		an.r.body_case = OFC__V1__RESPONSE__BODY_TESTBED_RUN;
		an.r.testbed_run = m;
	}
	j->outcome = an.t.state;
	response_pack(&an.r, &j->reply, &j->reply_len);
	arena_free(&an.a);
}
