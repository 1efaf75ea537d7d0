/* A schedule for the testbed, in the planner process (planner_serve.c
 * hands it the job ofcd's testbed_schedules.c sends): a TestbedRun's
 * runs, a TestbedCheck's calibration, a TestbedMpirun's files for
 * libofc-mpi. Computed as `ofc testbed` computes it in its own process
 * (schedule_here): on the fabric, or on the topology the testbed's hosts
 * are committed to (testbed_topo_open, as ofcd opened it before), and
 * answered as what schedule_got_of makes of the result, the schedule as
 * protobuf bytes. */
#include "controller/export/export.h"
#include "controller/ofcd/internal.h"
#include "controller/testbed/testbed.h"
#include "proto/planner.pb-c.h"

#include <stdlib.h>
#include <string.h>

/* m's query on f, its result made a schedule_got (its schedule as pb). */
static int compute(const struct fabric *f, const Ofc__V1__PlannerJob *m, uint64_t max_memory,
		   struct schedule_got *g, struct ofc_error *err)
{
	struct ofc_clock clk = {.start = now_seconds()};
	struct schedule_query q = {.fabric = f,
				   .collective = (enum sched_collective)m->collective,
				   .algorithm = m->algorithm,
				   .size = m->size_bytes,
				   .alpha = m->alpha,
				   .alpha_set = m->has_alpha,
				   .bandwidth = m->bandwidth,
				   .bandwidth_set = m->has_bandwidth,
				   .no_certify = m->no_certify,
				   .max_memory = max_memory};
	struct schedule_result r;
	int rc;

	if (m->max_time > 0) {
		clk.limit = m->max_time;
		clk.deadline = clk.start + m->max_time;
		q.clock = &clk;
	}
	if (schedule_compute(&q, &r, NULL, err) < 0)
		return -1;
	rc = schedule_got_of(&q, &r, SCHEDULE_GOT_PB, g, err);
	schedule_result_free(&r);
	return rc;
}

uint8_t *planner_testbed_compute(const struct fabcfg *cfg, const Ofc__V1__PlannerJob *m,
				 size_t *len)
{
	Ofc__V1__PlannerTestbed a = OFC__V1__PLANNER_TESTBED__INIT;
	struct testbed_topo w = {0};
	struct schedule_got g = {0};
	struct ofc_error err = {0};
	uint8_t *buf;
	int rc = 0;

	if (m->topology && *m->topology)
		rc = testbed_topo_open(cfg->f, m->topology, &w, &err);
	if (rc == 0)
		rc = compute(w.open ? &w.f : cfg->f, m, cfg->max_memory, &g, &err);
	if (rc < 0) {
		a.error = err.msg;
		a.has_input = 1;
		a.input = err.code == OFC_E_INPUT;
	} else {
		a.has_have = a.has_verified = 1;
		a.have = g.have;
		a.verified = g.verified;
		a.why = g.why;
		a.verify_error = g.verify_error;
		a.has_schedule = g.pb != NULL;
		a.schedule.data = g.pb;
		a.schedule.len = g.pb_len;
		a.applies = xcalloc((size_t)g.napplies + 1, sizeof(char *));
		for (uint32_t i = 0; i < g.napplies; i++)
			a.applies[a.n_applies++] = g.applies[i];
	}
	*len = protobuf_c_message_get_packed_size(&a.base);
	buf = xmalloc(*len ? *len : 1);
	protobuf_c_message_pack(&a.base, buf);
	free(a.applies);
	schedule_got_free(&g);
	testbed_topo_free(&w);
	return buf;
}
