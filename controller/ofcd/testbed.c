/* The testbed through ofcd: TestbedRun runs a collective on the testbed's
 * hosts (network namespaces on this machine, brought up with `ofc testbed
 * up`) for the topology the daemon has committed, each algorithm priced by
 * the testbed's model, run and judged, so that a testbed and the daemon
 * that drives its hosts coexist and a script follows what the daemon
 * committed, not what a file says; or a schedule the request carries, and
 * MPICH's own collective beside; TestbedMpirun runs an unmodified MPI
 * program there with libofc-mpi. It drives hosts, so it is an admin's
 * mutation run by the mutation worker: no transaction moves the circuits
 * under a run. Every schedule it runs or writes (and the check's
 * calibration) is computed in a planner process (testbed_schedules.c). */
#include "controller/testbed/testbed.h"
#include "controller/export/export.h"
#include "controller/ofcd/answer.h"
#include "controller/ofcd/testbed.h"
#include "controller/ofcd/worker.h"
#include "exec/exec.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/* The schedules of the committed topology (w, open or not), computed in a
 * planner process on the worker's config. */
static struct testbed_planner planner_of(const struct ofcd *d, const struct testbed_topo *w)
{
	return (struct testbed_planner){.d = d,
					.cfg = d->w->cfg,
					.f = w->open ? &w->f : d->w->ctl->fabric,
					.spec = w->open ? w->spec : NULL};
}

/* One algorithm: its schedule for q's fabric (src's: a planner
 * process's), run and judged, as a result. */
static Ofc__V1__TestbedRunResult *run_one(struct answer *an, const struct schedule_source *src,
					  const struct schedule_query *q0, const char *algo,
					  const struct testbed_net *t,
					  const struct testbed_model *m, double seconds)
{
	Ofc__V1__TestbedRunResult *o = arena_alloc(&an->a, sizeof(*o));
	struct schedule_query q = *q0;
	struct ofc_clock clock = {.start = now_seconds(), .limit = seconds};
	struct testbed_run_opts ro = {.size = q.size, .port = TESTBED_RUN_PORT};
	struct ofc_error err = {0};
	struct schedule_got r;
	struct testbed_run run;
	int rc;

	ofc__v1__testbed_run_result__init(o);
	o->algorithm = arena_strdup(&an->a, algo);
	o->has_ran = 1; /* (false until it ran) */
	clock.deadline = ro.deadline = clock.start + seconds;
	q.clock = &clock;
	q.algorithm = algo;
	if (src->compute(src->ctx, &q, SCHEDULE_GOT_STEPS, &r, &err) < 0) {
		o->error = arena_strdup(&an->a, err.msg);
		return o;
	}
	if (!r.have) {
		o->error = arena_strdup(&an->a, r.why);
	} else if (!r.verified) {
		/* (every schedule ofc runs is one the verifier passed) */
		o->error = arena_printf(&an->a, "the verifier rejected it: %s", r.verify_error);
	} else {
		ro.max_memory = q.max_memory;
		rc = testbed_run_schedule(&r.s, t, m, &ro, &run, &err);
		o = testbed_run_result(&an->a, &run, q.size);
		o->algorithm = arena_strdup(&an->a, algo);
		if (rc < 0)
			o->error = arena_strdup(&an->a, err.msg);
		o->has_steps = o->has_transfers = o->has_verified = 1;
		o->steps = r.s.nsteps;
		o->transfers = r.s.nxfers;
		o->verified = true;
		testbed_run_free(&run);
	}
	schedule_got_free(&r);
	return o;
}

/* A run that did not start: the reason is the result's. */
static Ofc__V1__TestbedRunResult *not_run(struct answer *an, const char *algo, const char *why)
{
	Ofc__V1__TestbedRunResult *o = arena_alloc(&an->a, sizeof(*o));

	ofc__v1__testbed_run_result__init(o);
	o->algorithm = arena_strdup(&an->a, algo);
	o->has_ran = 1;
	o->error = arena_strdup(&an->a, why);
	return o;
}

/* The schedule the request carried (ofc schedule --format pb's bytes), as
 * `testbed run --schedule FILE` runs a file: counted and priced before it
 * is built, its collective the one asked (when one was; else it names the
 * run's, into *coll), the verifier's verdict said and the run made either
 * way (the data check is the point of running). */
static Ofc__V1__TestbedRunResult *run_sent(struct answer *an, const struct job *j,
					   const struct testbed_net *t,
					   const struct testbed_model *m, uint64_t max_memory,
					   enum sched_collective *coll)
{
	const char *name = "the request's schedule";
	struct ofc_clock clock = {.start = now_seconds(), .limit = j->max_time};
	struct testbed_run_opts ro = {
	    .size = j->size, .port = TESTBED_RUN_PORT, .max_memory = max_memory};
	Ofc__V1__TestbedRunResult *o;
	struct verify_opts vo = {.clock = &clock};
	struct ofc_error err = {0};
	struct verify_report vr;
	struct testbed_run run;
	struct schedule_pb f;
	struct schedule s;
	bool verified;
	int rc;

	clock.deadline = ro.deadline = clock.start + j->max_time;
	if (schedule_pb_parse(name, j->schedule_pb, j->schedule_pb_len, &clock, &f, &err) < 0)
		return not_run(an, name, err.msg);
	rc = testbed_loaded_fits(&(struct testbed_loaded){.name = name,
							  .collective = f.collective,
							  .nodes = f.nodes,
							  .nsteps = f.nsteps,
							  .nxfers = f.nxfers,
							  .len = f.len,
							  .sched = schedule_pb_bytes(&f),
							  .held = mem_held()},
				 t, j->size, false, max_memory, &err);
	if (rc == 0)
		rc = schedule_pb_decode(&f, &clock, &s, &err);
	schedule_pb_close(&f);
	if (rc < 0)
		return not_run(an, name, err.msg);
	if (j->coll_asked && s.collective != j->coll) {
		o = not_run(an, name,
			    arena_printf(&an->a, "the schedule is for %s, not %s",
					 sched_collective_name(s.collective),
					 sched_collective_name(j->coll)));
		sched_free(&s);
		return o;
	}
	*coll = s.collective;
	verified = sched_verify(&s, &vo, &vr) == 0;
	rc = testbed_run_schedule(&s, t, m, &ro, &run, &err);
	o = testbed_run_result(&an->a, &run, j->size);
	o->algorithm = s.algorithm[0] ? arena_printf(&an->a, "%s (sent)", s.algorithm)
				      : arena_strdup(&an->a, name);
	if (rc < 0)
		o->error = arena_strdup(&an->a, err.msg);
	o->has_steps = o->has_transfers = o->has_verified = 1;
	o->steps = s.nsteps;
	o->transfers = s.nxfers;
	o->verified = verified;
	if (!verified)
		o->verify_error = arena_strdup(&an->a, vr.error);
	testbed_run_free(&run);
	sched_free(&s);
	return o;
}

/* MPICH's own collective on the same hosts and links, unpriced. */
static Ofc__V1__TestbedRunResult *run_mpi(struct answer *an, const struct job *j,
					  const struct testbed_net *t, enum sched_collective coll)
{
	struct ofc_error err = {0};
	struct testbed_run run;
	Ofc__V1__TestbedRunResult *o;
	int rc = testbed_run_mpi(t, coll, j->size, TESTBED_RUN_PORT, j->max_time, &run, &err);

	o = testbed_run_result(&an->a, &run, j->size);
	o->algorithm = arena_strdup(&an->a, "mpi (MPICH)");
	if (rc < 0)
		o->error = arena_strdup(&an->a, err.msg);
	o->has_verified = 1;
	o->verified = true; /* (nothing to verify: MPICH's own algorithm) */
	testbed_run_free(&run);
	return o;
}

/* The algorithms asked: "all" is every one that applies (the comparison
 * src makes), else the one named or the pick. */
static uint32_t algorithms(const struct schedule_source *src, const struct schedule_query *q,
			   const struct job *j, char names[][48], struct ofc_error *err)
{
	struct schedule_got r;
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
	if (src->compute(src->ctx, &all, SCHEDULE_GOT_STEPS, &r, err) < 0)
		return 0;
	for (uint32_t i = 0; i < r.napplies && n < TESTBED_MAX_RUNS; i++)
		snprintf(names[n++], 48, "%s", r.applies[i]);
	schedule_got_free(&r);
	return n;
}

/* The answer, its runs done, into *m; -1 with err when the testbed
 * cannot be read or measured. */
static int run_all(struct ofcd *d, struct job *j, struct answer *an, Ofc__V1__TestbedRunAnswer **m,
		   struct ofc_error *err)
{
	const struct fabric *f = d->w->ctl->fabric;
	struct testbed_topo committed = {0};
	struct testbed_planner tp;
	struct schedule_source src;
	struct testbed_net t;
	struct testbed_model model;
	const char *from;
	char names[TESTBED_MAX_RUNS][48];
	char note[400];
	uint32_t most, n;
	int rc = -1;

	if (!testbed_is_up(d->state_dir, f->name))
		return ofc_error_set(err, OFC_E_RUNTIME,
				     "the testbed of fabric '%s' is not up (ofc testbed up)",
				     f->name);
	if (testbed_need_root(err) < 0 || testbed_net_read(f, d->state_dir, &t, err) < 0)
		return -1;
	if (testbed_carried_now(f, d->state_dir, &t, note, sizeof(note), err) < 0 ||
	    committed_topology(d->w->ctl, &committed, err) < 0)
		goto out;
	testbed_model_of(&t, j->alpha, &model, &from);
	most = testbed_most_circuits(&t);
	tp = planner_of(d, &committed);
	src = testbed_planner_source(&tp);

	struct schedule_query q = {.fabric = committed.open ? &committed.f : f,
				   .collective = j->coll,
				   .size = j->size,
				   .alpha = model.alpha,
				   .alpha_set = true};
	if (model.rate > 0 && most) {
		q.bandwidth = model.rate * most;
		q.bandwidth_set = true;
	}
	*m = testbed_run_answer(
	    &an->a, &(struct testbed_run_head){
			.fabric = f->name,
			.net = &t,
			.topology = committed.open ? committed.spec : f->topology.spec,
			.topology_from = j->what_if ? "--topology: applied for the run, "
						      "the one before applied again after"
						    : "committed, as ofcd holds it",
			.model = &model,
			.alpha_from = from,
			.collective = j->coll,
			.size = j->size,
			.note = note});
	if (j->schedule_pb) {
		enum sched_collective coll = j->coll;

		(*m)->runs = arena_array(&an->a, 3, sizeof(*(*m)->runs));
		(*m)->runs[(*m)->n_runs++] =
		    run_sent(an, j, &t, &model, schedule_memory_limit(&q), &coll);
		(*m)->collective = arena_strdup(&an->a, sched_collective_name(coll));
		q.collective = coll;
	} else {
		if (!(n = algorithms(&src, &q, j, names, err)))
			goto out;
		(*m)->runs = arena_array(&an->a, n + 2, sizeof(*(*m)->runs));
		for (uint32_t i = 0; i < n; i++)
			(*m)->runs[(*m)->n_runs++] =
			    run_one(an, &src, &q, names[i], &t, &model, j->max_time);
	}
	if (j->mpi)
		(*m)->runs[(*m)->n_runs++] = run_mpi(an, j, &t, q.collective);
	rc = 0;
out:
	testbed_topo_free(&committed);
	testbed_net_free(&t);
	return rc;
}

/* A what-if's topology applied (ofcd_testbed_reconfigure), the committed
 * one's spec kept in before[n] to apply again after; before empty when
 * nothing was applied. */
static int what_if_apply(struct ofcd *d, struct job *j, char *before, size_t n,
			 struct ofc_error *err)
{
	const struct fabric *f = d->w->ctl->fabric;
	struct ctl_record r;
	const char *spec;

	before[0] = 0;
	if (!testbed_is_up(d->state_dir, f->name))
		return ofc_error_set(err, OFC_E_RUNTIME,
				     "the testbed of fabric '%s' is not up (ofc testbed up)",
				     f->name);
	if (ctl_load_record_for(d->w->ctl, &r, err) < 0)
		return -1;
	if (!(spec = ctl_record_other_spec(f, &r)))
		spec = f->topology.spec;
	if (!spec || !*spec || strlen(spec) >= n) {
		ctl_record_free(&r);
		return ofc_error_set(err, OFC_E_INPUT,
				     "--topology: the committed topology has no spec to apply "
				     "again after the runs; reconfigure through ofcd, then run");
	}
	snprintf(before, n, "%s", spec);
	ctl_record_free(&r);
	if (ofcd_testbed_reconfigure(d, j, j->what_if, true, err) < 0) {
		before[0] = 0;
		return -1;
	}
	return 0;
}

/* (mutation worker) JOB_TESTBED_CHECK: testbed_check on the committed
 * topology; OK when every pair reaches, every circuit carried and the
 * reference run's data is right (whether the model held is the
 * calibration's), FAILED otherwise. */
static void run_check(struct ofcd *d, struct job *j)
{
	const struct fabric *f = d->w->ctl->fabric;
	struct testbed_topo committed = {0};
	Ofc__V1__TestbedCheckAnswer *m = NULL;
	struct testbed_planner tp;
	struct schedule_source src;
	struct ofc_error err = {0};
	struct answer an;
	uint32_t bad = 0;
	int rc;

	answer_init(&an, j);
	an.t.kind = "testbed-check";
	rc = committed_topology(d->w->ctl, &committed, &err);
	tp = planner_of(d, &committed);
	src = testbed_planner_source(&tp);
	if (rc == 0)
		rc = testbed_check(&src, f, committed.open ? &committed.f : f,
				   committed.open     ? committed.spec
				   : f->topology.spec ? f->topology.spec
						      : "",
				   d->state_dir, &an.a, &m, &bad, &err);
	testbed_topo_free(&committed);
	if (rc < 0) {
		answer_status(&an, OFC__V1__STATUS__STATUS_FAILED, "%s", err.msg);
		an.t.state = "refused";
	} else {
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
 * removed (testbed_down); the worker's ctl opened again without the
 * hosts, so no probe reads namespaces that are gone, and the next
 * transaction plans the switches alone. */
static void run_down(struct ofcd *d, struct job *j)
{
	const struct fabric *f = d->w->ctl->fabric;
	Ofc__V1__TestbedDownAnswer *m;
	struct ofc_error err = {0};
	struct answer an;
	uint32_t n = 0;
	char why[512];

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
		ofcd_testbed_reopen_ctl(d);
		/* State.testbed_up and the devices without the hosts, published */
		j->snap = snapshot_build(d, d->state_dir, d->w->ctl, d->w->pub, why, sizeof(why));
		held_state(d, j->snap);
		if (why[0])
			ofcd_log(d, OFCD_LOG_WARNING, "%s", why);
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

/* An unmodified MPI program on the testbed's hosts (TestbedMpirun), as
 * `ofc testbed mpirun` runs it: the committed topology's schedules written
 * into a scratch directory for libofc-mpi, the job run with its output
 * captured, the answer made of the result. 0, or -1 with err when the job
 * did not start. */
static int mpirun_job(struct ofcd *d, const struct job *j, struct answer *an,
		      Ofc__V1__TestbedMpirunAnswer *m, struct ofc_error *err)
{
	const struct fabric *f = d->w->ctl->fabric;
	struct testbed_topo committed = {0};
	struct testbed_mpirun_result r = {0};
	struct testbed_planner tp;
	struct schedule_source src;
	struct testbed_net t;
	struct strbuf notes = {0};
	char dir[] = "/tmp/ofcd-mpirun-XXXXXX", *lib = NULL, *schedules = NULL;
	int rc = -1;

	if (!testbed_is_up(d->state_dir, f->name))
		return ofc_error_set(err, OFC_E_RUNTIME,
				     "the testbed of fabric '%s' is not up (ofc testbed up)",
				     f->name);
	if (testbed_need_root(err) < 0 || testbed_net_read(f, d->state_dir, &t, err) < 0)
		return -1;
	if (committed_topology(d->w->ctl, &committed, err) < 0)
		goto out_net;
	tp = planner_of(d, &committed);
	src = testbed_planner_source(&tp);
	if (!mkdtemp(dir)) {
		ofc_error_set(err, OFC_E_RUNTIME, "mkdtemp %s: %s", dir, strerror(errno));
		goto out_net;
	}
	lib = mpirun_library(j->openmpi);
	if (!lib || access(lib, R_OK) != 0) {
		ofc_error_set(err, OFC_E_RUNTIME,
			      "libofc-mpi (make mpi builds it) is not at %s; OFC_MPI_LIB in "
			      "ofcd's environment names another",
			      lib ? lib : "the directory of ofcd");
		goto out;
	}
	schedules = j->no_preload ? xstrdup("")
				  : mpirun_schedules_write(&src, committed.open ? &committed.f : f,
							   j->size, dir, &notes, err);
	if (notes.len)
		ofcd_log(d, OFCD_LOG_WARNING, "testbed mpirun: %s", notes.buf);
	if (!schedules || testbed_mpirun(f, &t,
					 &(struct testbed_mpirun_opts){.openmpi = j->openmpi,
								       .preload = lib,
								       .schedules = schedules,
								       .argv = j->argv,
								       .dir = dir,
								       .timeout = j->max_time,
								       .capture = true},
					 &r, err) < 0)
		goto out;
	m->fabric = arena_strdup(&an->a, f->name);
	m->topology = arena_strdup(&an->a, committed.open     ? committed.spec
					   : f->topology.spec ? f->topology.spec
							      : "");
	m->has_ranks = m->has_preload = m->has_timed_out = m->has_finalize_hung = 1;
	m->ranks = t.nhosts;
	m->mpi = j->openmpi ? "openmpi" : "mpich";
	m->preload = !j->no_preload;
	m->has_exit_code = r.exit_code >= 0;
	m->exit_code = r.exit_code;
	m->timed_out = r.timed_out;
	m->finalize_hung = r.finalize_hung;
	m->has_circuit_bytes = r.circuit_bytes >= 0;
	m->circuit_bytes = r.circuit_bytes;
	m->report = r.report ? arena_strdup(&an->a, r.report) : NULL;
	m->output = arena_strdup(&an->a, r.output ? r.output : "");
	m->has_output_cut = 1;
	m->output_cut = r.output_cut;
	testbed_mpirun_free(&r);
	rc = 0;
out:
	mpirun_schedules_remove(dir);
	rmdir(dir);
	free(schedules);
	free(lib);
	sb_free(&notes);
out_net:
	testbed_topo_free(&committed);
	testbed_net_free(&t);
	return rc;
}

/* (mutation worker) JOB_TESTBED_MPIRUN: OK when the program exited 0 (or
 * only its MPI_Finalize hung, after the report); FAILED with the answer
 * when it failed or was stopped, and without one when it did not start. */
static void run_mpirun(struct ofcd *d, struct job *j)
{
	Ofc__V1__TestbedMpirunAnswer *m;
	struct ofc_error err = {0};
	struct answer an;

	answer_init(&an, j);
	an.t.kind = "testbed-mpirun";
	m = arena_alloc(&an.a, sizeof(*m));
	ofc__v1__testbed_mpirun_answer__init(m);
	if (mpirun_job(d, j, &an, m, &err) < 0) {
		answer_status(&an, OFC__V1__STATUS__STATUS_FAILED, "%s", err.msg);
		an.t.state = "refused";
	} else {
		bool good = m->finalize_hung || (m->has_exit_code && m->exit_code == 0);

		if (m->timed_out)
			answer_status(&an, OFC__V1__STATUS__STATUS_FAILED,
				      "%s stopped after %.0f s", j->argv[0], j->max_time);
		else if (!good)
			answer_status(&an, OFC__V1__STATUS__STATUS_FAILED, "%s exited %d",
				      j->argv[0], m->exit_code);
		else
			answer_status(&an, OFC__V1__STATUS__STATUS_OK, "%u ranks of %s: exit %d%s",
				      m->ranks, j->argv[0], m->exit_code,
				      m->finalize_hung ? " (MPI_Finalize hung: stopped)" : "");
		an.t.state = good ? "done" : "failed";
		an.r.body_case = OFC__V1__RESPONSE__BODY_TESTBED_MPIRUN;
		an.r.testbed_mpirun = m;
	}
	j->outcome = an.t.state;
	response_pack(&an.r, &j->reply, &j->reply_len);
	arena_free(&an.a);
}

/* (mutation worker) JOB_TESTBED_RUN: OK when every run ran with the right
 * data (whether the model held is each result's), FAILED otherwise. */
void ofcd_run_testbed(struct ofcd *d, struct job *j)
{
	Ofc__V1__TestbedRunAnswer *m = NULL;
	struct ofc_error err = {0};
	char before[TOPO_MAX_SPEC + 1] = "";
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
	if (j->kind == JOB_TESTBED_MPIRUN) {
		run_mpirun(d, j);
		return;
	}
	answer_init(&an, j);
	an.t.kind = "testbed-run";
	if ((j->what_if && what_if_apply(d, j, before, sizeof(before), &err) < 0) ||
	    run_all(d, j, &an, &m, &err) < 0) {
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
	/* (after a what-if, whatever the runs did: the topology before) */
	if (before[0] && ofcd_testbed_reconfigure(d, j, before, false, &err) < 0) {
		answer_status(&an, OFC__V1__STATUS__STATUS_FAILED,
			      "--topology %s: applying %s again after the runs failed: %s",
			      j->what_if, before, err.msg);
		an.t.state = "failed";
	}
	j->outcome = an.t.state;
	response_pack(&an.r, &j->reply, &j->reply_len);
	arena_free(&an.a);
}
