/* One schedule's summary, a Reconfigure by workload's pick and a config's
 * topology: auto, in the planner process
 * (planner_serve.c hands it the job planner_proc.c's planner_summary sends): a held partition's
 * view (views.c), a staged change's stages (staged.c), a Reconfigure by
 * workload's answer (mutation.c). The query is the caller's as it was in
 * ofcd: its topology (or the fabric's own, the failures in effect), its
 * collective and size, its time limit and reduction. */
#include "controller/export/export.h"
#include "controller/ofcd/internal.h"
#include "controller/pick/pick.h"
#include "proto/planner.pb-c.h"

#include <stdlib.h>
#include <string.h>

/* The schedule's figures without its steps, with every string copied into
 * the arena (the schedule itself is freed right after). */
Ofc__V1__Schedule *snapshot_schedule_summary(struct arena *a, const struct schedule_result *r)
{
	Ofc__V1__Schedule *h = schedule_header_msg(a, &r->main->s);
	Ofc__V1__Schedule *x = schedule_extra_msg(a, r);

	h->algorithm = arena_strdup(a, h->algorithm);
	h->topology = h->topology ? arena_strdup(a, h->topology) : NULL;
	for (size_t i = 0; i < h->n_metrics; i++)
		h->metrics[i]->key = arena_strdup(a, h->metrics[i]->key);
	schedule_msg_summary(h, x);
	/* (a patched one is not its group's translates alone) */
	if (r->main->is_reduced && !r->main->is_patched)
		h->reduced = schedule_reduced_msg(a, &r->main->group, r->main->ntransfers)->reduced;
	if (!h->verified && r->main->verify_error[0])
		h->verify_error = arena_strdup(a, r->main->verify_error);
	h->detail = schedule_fallback_detail_msg(a, r);
	return h;
}

/* r's main outcome as m asks it summarised, packed into a. */
static void summarise(const Ofc__V1__PlannerJob *m, const struct schedule_result *r,
		      Ofc__V1__PlannerSummary *a, struct arena *ar)
{
	Ofc__V1__Schedule *h;

	if (m->plain) {
		h = schedule_header_msg(ar, &r->main->s);
		schedule_msg_summary(h, schedule_extra_msg(ar, r));
	} else {
		h = snapshot_schedule_summary(ar, r);
	}
	a->has_schedule = 1;
	a->schedule.len = protobuf_c_message_get_packed_size(&h->base);
	a->schedule.data = arena_alloc(ar, a->schedule.len + 1);
	protobuf_c_message_pack(&h->base, a->schedule.data);
}

uint8_t *planner_summary_compute(const struct fabcfg *cfg, const struct topo_files *files,
				 const Ofc__V1__PlannerJob *m, size_t *len)
{
	Ofc__V1__PlannerSummary a = OFC__V1__PLANNER_SUMMARY__INIT;
	struct ofc_clock clk = {.start = now_seconds()};
	struct schedule_query q = {.fabric = cfg->f,
				   .spec = m->topology,
				   .files = files,
				   .collective = cfg->coll,
				   .size = cfg->size,
				   .reduced = (enum schedule_reduce)m->reduce,
				   .max_memory = cfg->max_memory};
	struct schedule_result r;
	struct ofc_error err = {0};
	struct arena ar = {0};
	uint8_t *buf;
	int rc;

	if (m->max_time > 0) {
		clk.deadline = clk.start + m->max_time;
		clk.limit = m->max_time;
		q.clock = &clk;
		q.time_limit = m->max_time;
	}
	rc = schedule_compute(&q, &r, NULL, &err) < 0 ? -1 : schedule_check(&r, &err);
	if (rc < 0 && m->explicit_after) {
		ofc_error_clear(&err);
		q.reduced = SCHEDULE_REDUCED_NEVER;
		rc = schedule_compute(&q, &r, NULL, &err) < 0 ? -1 : schedule_check(&r, &err);
	}
	if (rc == 0) {
		summarise(m, &r, &a, &ar);
		schedule_result_free(&r);
	} else {
		a.why = err.msg;
	}
	*len = protobuf_c_message_get_packed_size(&a.base);
	buf = xmalloc(*len ? *len : 1);
	protobuf_c_message_pack(&a.base, buf);
	arena_free(&ar);
	return buf;
}

/* ---- a Reconfigure by workload's pick ---------------------------------------------------- */

/* Reconfigure for a workload: the finder's pick for every host of the
 * fabric at the fewest NIC ports any host has, minimising the workload's
 * time under the config's cost model (the use case of controller/pick). */
static int pick_topology(const struct fabric *f, const Ofc__V1__PlannerJob *m, char *spec, size_t n,
			 struct ofc_error *err)
{
	struct pick_work work = {
	    .op = (enum sched_collective)m->collective, .size = m->size_bytes, .weight = 1};
	struct pick_request q = {
	    .nodes = f->nhosts, .degree = pick_degree(f), .work = &work, .nwork = 1};
	struct pick_result r;
	struct ofc_error sub = {0};

	if (m->nodes && m->nodes != f->nhosts)
		return ofc_error_set(
		    err, OFC_E_INPUT,
		    "workload of %u nodes: fabric '%s' has %u hosts, and a topology "
		    "spans all of them",
		    m->nodes, f->name, f->nhosts);
	pick_model_of(f, &q.model);
	if (pick_run(&q, &r, &sub) < 0)
		return ofc_error_set(err, sub.code, "workload: %s", sub.msg);
	snprintf(spec, n, "%s", r.front.front[r.pick].spec);
	pick_free(&r);
	return 0;
}

uint8_t *planner_pick_compute(const struct fabcfg *cfg, const Ofc__V1__PlannerJob *m, size_t *len)
{
	Ofc__V1__PlannerPick a = OFC__V1__PLANNER_PICK__INIT;
	struct ofc_error err = {0};
	char spec[TOPO_MAX_SPEC + 1];
	uint8_t *buf;

	if (pick_topology(cfg->f, m, spec, sizeof(spec), &err) < 0) {
		a.why = err.msg;
		a.has_input = 1;
		a.input = err.code != OFC_E_RUNTIME;
	} else {
		a.spec = spec;
	}
	*len = protobuf_c_message_get_packed_size(&a.base);
	buf = xmalloc(*len ? *len : 1);
	protobuf_c_message_pack(&a.base, buf);
	return buf;
}

/* The most collectives a config's pick weighs (validation's own bound). */
#define CONFIG_PICK_WORK_MAX 64

uint8_t *planner_config_pick_compute(const Ofc__V1__PlannerJob *m, size_t *len)
{
	Ofc__V1__PlannerPick a = OFC__V1__PLANNER_PICK__INIT;
	struct pick_work work[CONFIG_PICK_WORK_MAX];
	struct pick_request q = {.nodes = m->nodes, .degree = m->degree, .work = work};
	struct ofc_error err = {0};
	struct pick_result r;
	uint8_t *buf;

	pick_model_default(&q.model);
	if (m->model) {
		q.model.alpha = m->model->alpha;
		q.model.link_rate = m->model->link_rate;
		q.model.node_rate = m->model->node_rate;
	}
	for (size_t i = 0; i < m->n_work && q.nwork < CONFIG_PICK_WORK_MAX; i++)
		work[q.nwork++] = (struct pick_work){.op = (enum sched_collective)m->work[i]->op,
						     .size = m->work[i]->size,
						     .weight = m->work[i]->weight};
	if (m->n_work > CONFIG_PICK_WORK_MAX)
		ofc_error_set(&err, OFC_E_INPUT, "%zu collectives to pick for: at most %d",
			      m->n_work, CONFIG_PICK_WORK_MAX);
	if (err.msg[0] || pick_run(&q, &r, &err) < 0) {
		a.why = err.msg;
		a.has_input = 1;
		a.input = err.code != OFC_E_RUNTIME;
	} else {
		a.spec = r.front.front[r.pick].spec;
		a.has_time_us = 1;
		a.time_us = r.time_us[r.pick];
	}
	*len = protobuf_c_message_get_packed_size(&a.base);
	buf = xmalloc(*len ? *len : 1);
	protobuf_c_message_pack(&a.base, buf);
	if (!a.why)
		pick_free(&r);
	return buf;
}
