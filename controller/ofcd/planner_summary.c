/* One schedule's summary, in the planner process (planner_serve.c hands
 * it the job planner_proc.c's planner_summary sends): a held partition's
 * view (views.c), a staged change's stages (staged.c), a Reconfigure by
 * workload's answer (mutation.c). The query is the caller's as it was in
 * ofcd: its topology (or the fabric's own, the failures in effect), its
 * collective and size, its time limit and reduction. */
#include "controller/export/export.h"
#include "controller/ofcd/internal.h"
#include "proto/planner.pb-c.h"

#include <stdlib.h>
#include <string.h>

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
