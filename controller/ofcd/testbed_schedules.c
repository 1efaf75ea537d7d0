/* The testbed's schedules through ofcd, computed in a planner process
 * (`ofc-planner --for testbed`, planner_testbed.c), never in the process
 * that holds the lease: a TestbedRun's runs, a TestbedCheck's calibration
 * and a TestbedMpirun's files for libofc-mpi ask them through the
 * schedule_source the shared testbed code takes (the CLI's computes in
 * its own process). A planner that crashes, runs out of its limits or
 * does not answer costs that schedule, its reason the run's or the
 * request's; ofcd goes on. */
#include "controller/ofcd/testbed.h"

#include <stdlib.h>
#include <string.h>

/* How long past the query's time limit the planner may take (starting,
 * the fabric rebuilt), or at most when it has none (a TestbedMpirun's
 * files, as before). */
#define TESTBED_GRACE	30.0
#define TESTBED_LONGEST 3600.0

/* The planner's schedule bytes made the schedule they write (when steps
 * were asked), or kept as they are (libofc-mpi's file). */
static int take_schedule(const Ofc__V1__PlannerTestbed *a, const struct schedule_query *q,
			 enum schedule_got_what what, struct schedule_got *g, struct ofc_error *err)
{
	struct schedule_pb f;
	int rc;

	if (!a->has_schedule)
		return ofc_error_set(err, OFC_E_RUNTIME,
				     "the planner process answered a schedule without its steps");
	if (what == SCHEDULE_GOT_PB) {
		g->pb = xmalloc(a->schedule.len + 1);
		memcpy(g->pb, a->schedule.data, a->schedule.len);
		g->pb_len = a->schedule.len;
		return 0;
	}
	if (schedule_pb_parse("the planner's schedule", a->schedule.data, a->schedule.len, q->clock,
			      &f, err) < 0)
		return -1;
	rc = schedule_pb_decode(&f, q->clock, &g->s, err);
	schedule_pb_close(&f);
	return rc;
}

/* The answer a as q's schedule_got. */
static int take(const Ofc__V1__PlannerTestbed *a, const struct schedule_query *q,
		enum schedule_got_what what, struct schedule_got *g, struct ofc_error *err)
{
	if (a->error)
		return ofc_error_set(err, a->input ? OFC_E_INPUT : OFC_E_RUNTIME, "%s", a->error);
	g->applies = xcalloc(a->n_applies + 1, sizeof(*g->applies));
	for (size_t i = 0; i < a->n_applies; i++)
		snprintf(g->applies[g->napplies++], sizeof(*g->applies), "%s", a->applies[i]);
	g->have = a->have;
	g->verified = a->verified;
	snprintf(g->why, sizeof(g->why), "%s", a->why ? a->why : "");
	snprintf(g->verify_error, sizeof(g->verify_error), "%s",
		 a->verify_error ? a->verify_error : "");
	return g->have ? take_schedule(a, q, what, g, err) : 0;
}

static int ask(void *ctx, const struct schedule_query *q, enum schedule_got_what what,
	       struct schedule_got *g, struct ofc_error *err)
{
	const struct testbed_planner *t = ctx;
	Ofc__V1__PlannerJob m = OFC__V1__PLANNER_JOB__INIT;
	struct schedule_query lim = {.max_memory = t->cfg->max_memory};
	uint64_t most = schedule_memory_limit(&lim);
	Ofc__V1__PlannerTestbed *a;
	double left = 0;
	uint8_t *buf;
	size_t got;
	int rc;

	memset(g, 0, sizeof(*g));
	/* (the planner rebuilds the fabric from the config: a query on
	 * another is not one it can answer) */
	if (q->fabric != t->f)
		return ofc_error_set(err, OFC_E_RUNTIME,
				     "a testbed schedule asked on another fabric than the "
				     "committed topology's");
	if (q->clock && q->clock->deadline > 0) {
		left = q->clock->deadline - now_seconds();
		if (left < 0.001)
			left = 0.001;
	}
	m.has_testbed = m.has_collective = m.has_size_bytes = m.has_max_time = 1;
	m.testbed = true;
	m.collective = (uint32_t)q->collective;
	m.algorithm = (char *)q->algorithm;
	m.size_bytes = q->size;
	m.topology = (char *)t->spec;
	/* (the limit the caller set, whose clock started as it asked: the
	 * planner's "time limit T reached" names the same T) */
	m.max_time = q->clock && q->clock->limit > 0 ? q->clock->limit : left;
	m.has_alpha = q->alpha_set;
	m.alpha = q->alpha;
	m.has_bandwidth = q->bandwidth_set;
	m.bandwidth = q->bandwidth;
	m.has_no_certify = q->no_certify;
	m.no_certify = q->no_certify;
	if (planner_ask_about(t->d, t->cfg, &m, "testbed", NULL,
			      most < SCHEDULE_PB_MAX ? most : SCHEDULE_PB_MAX,
			      left > 0 ? left + TESTBED_GRACE : TESTBED_LONGEST, "computing it",
			      &buf, &got, err) < 0)
		return -1;
	a = ofc__v1__planner_testbed__unpack(NULL, got, buf);
	free(buf);
	if (!a)
		return ofc_error_set(err, OFC_E_RUNTIME,
				     "the planner process answered what is not a testbed's "
				     "schedule");
	rc = take(a, q, what, g, err);
	ofc__v1__planner_testbed__free_unpacked(a, NULL);
	if (rc < 0)
		schedule_got_free(g);
	return rc;
}

struct schedule_source testbed_planner_source(const struct testbed_planner *t)
{
	return (struct schedule_source){ask, (void *)t};
}
