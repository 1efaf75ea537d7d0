/* ofcd and the job's plan: GetPlan plans the running config's
 * workload as `ofc plan FILE --workload config` does (in a schedule
 * worker's planner process: it prices every phase on every candidate), and MoveToPhase takes the
 * fabric to the topology the chosen way gives a phase (found here, in a
 * planner process of its own: planner_phase_compute; then a mutation, on
 * the mutation worker: the config again with that candidate's spec,
 * applied and committed as a Reconfigure is). */
#include "controller/jobplan/jobplan.h"
#include "controller/ofcd/internal.h"
#include "proto/planner.pb-c.h"

#include <stdlib.h>
#include <string.h>

/* The config's workload planned on its fabric (the devices as the record
 * says: the config's circuits are taken as in place), a switching priced
 * with the cost model's switch_overhead. */
static int plan_of(const struct fabric *f, struct jobplan_result *r, struct ofc_error *err)
{
	struct jobplan_request rq = {.q = {.fabric = f}}; /* (the config's workload) */
	struct workload none;

	if (!f->workload.present)
		return ofc_error_set(err, OFC_E_INPUT,
				     "fabric '%s' has no workload section to plan (docs/config.md, "
				     "\"workload\")",
				     f->name);
	return jobplan_plan_workload(&rq, &none, r, err);
}

void ofcd_run_get_plan(struct job *j)
{
	Ofc__V1__Response resp = OFC__V1__RESPONSE__INIT;
	struct jobplan_result r;
	struct ofc_error err = {0};
	struct arena a = {0};

	resp.has_id = resp.has_status = 1;
	resp.id = j->req_id;
	if (plan_of(j->cfg->f, &r, &err) < 0) {
		resp.status = err.code == OFC_E_RUNTIME	    ? OFC__V1__STATUS__STATUS_FAILED
			      : j->cfg->f->workload.present ? OFC__V1__STATUS__STATUS_INVALID
							    : OFC__V1__STATUS__STATUS_NOT_FOUND;
		resp.message = err.msg;
		response_pack(&resp, &j->reply, &j->reply_len);
		return;
	}
	/* the message `ofc plan --workload --json` prints (controller/export) */
	resp.status = OFC__V1__STATUS__STATUS_OK;
	resp.message = r.why;
	resp.body_case = OFC__V1__RESPONSE__BODY_PLAN;
	resp.plan = plan_msg(&a, &r, false);
	response_pack(&resp, &j->reply, &j->reply_len);
	arena_free(&a);
	jobplan_result_free(&r);
}

static int phase_spec(const struct fabcfg *cfg, struct job *j, char **spec, struct ofc_error *err)
{
	struct jobplan_result r;
	uint32_t p = j->phase;

	*spec = NULL;
	if (plan_of(cfg->f, &r, err) < 0)
		return -1;
	if (j->phase_name) {
		for (p = 0; p < r.nphases && strcmp(r.workload->phases[p].name, j->phase_name); p++)
			;
		if (p == r.nphases) {
			jobplan_result_free(&r);
			return ofc_error_set(err, OFC_E_INPUT,
					     "the workload has no phase named '%.64s'",
					     j->phase_name);
		}
	}
	if (p >= r.nphases || !r.way[JOBPLAN_CHOSEN].have) {
		jobplan_result_free(&r);
		return ofc_error_set(err, OFC_E_INPUT, "the workload has %u phases (0..%u)",
				     r.nphases, r.nphases ? r.nphases - 1 : 0);
	}
	const struct jobplan_topo *t = &r.topo[r.way[JOBPLAN_CHOSEN].topo[p]];
	/* (ofcd reads no devices to plan: every candidate is the config's or
	 * one built from its spec) */
	if (!t->spec) {
		jobplan_result_free(&r);
		return ofc_error_set(err, OFC_E_INPUT, "%s has no topology spec to commit",
				     t->name);
	}
	*spec = xstrdup(t->spec);
	free(j->target);
	j->target = xasprintf("phase %s's topology, %s", r.workload->phases[p].name, t->name);
	jobplan_result_free(&r);
	return 0;
}

uint8_t *planner_phase_compute(const struct fabcfg *cfg, const Ofc__V1__PlannerJob *m, size_t *len)
{
	Ofc__V1__PlannerPhase a = OFC__V1__PLANNER_PHASE__INIT;
	struct job j = {.phase = m->phase, .phase_name = m->phase_name};
	struct ofc_error err = {0};
	char *spec = NULL;
	uint8_t *buf;

	if (phase_spec(cfg, &j, &spec, &err) < 0) {
		a.why = err.msg;
		a.has_input = 1;
		a.input = err.code != OFC_E_RUNTIME;
	}
	a.spec = spec;
	a.target = j.target;
	*len = protobuf_c_message_get_packed_size(&a.base);
	buf = xmalloc(*len ? *len : 1);
	protobuf_c_message_pack(&a.base, buf);
	free(spec);
	free(j.target);
	return buf;
}
