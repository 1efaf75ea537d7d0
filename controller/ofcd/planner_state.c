/* The state's schedule computed, in the planner process (planner_serve.c
 * hands it the job ofcd's state_schedule.c sends): the workload's
 * schedule on the committed topology, verified and priced, summarised as
 * State.schedule shows it (figures only), with the line ofcd logs.
 *
 * Symmetry-reduced where the topology admits it (node 0's program and the
 * translation group, checked by the same symmetry: a Cayley family, as
 * `ofc schedule --reduced`): its figures are the explicit schedule's at a
 * small part of the cost. With failed links, ports or hosts in effect, BFB
 * keeps that structure: the healthy program and a patch of what the
 * failures change (a failed host's block dropped), checked without
 * expansion (sched_verify_patched): one failed port at 8,192 hosts was
 * 134 M transfers, 18 s and 7 GB in every replica. Else (another family,
 * another engine, a schedule longer than the healthy one) the explicit
 * schedule on the fabric, and why goes to the log line. */
#include "controller/export/export.h"
#include "controller/ofcd/internal.h"
#include "proto/planner.pb-c.h"

#include <stdlib.h>
#include <string.h>

static const char *config_algorithm(const struct fabric *f, enum sched_collective coll)
{
	const struct collective *c = schedule_config_collective(f, coll);

	return c ? c->algorithm : NULL;
}

int state_schedule_structured(const struct fabcfg *cfg, const char *spec,
			      enum sched_collective coll, uint64_t size, struct schedule_result *r,
			      struct ofc_error *err)
{
	const struct fabric *f = cfg->f;
	bool failed = !spec && (cfg->nfailed || f->degraded);
	struct schedule_query q = {
	    .fabric = f,
	    /* (the config's graph asked by its spec, which takes no config's
	     * choice: the config's algorithm as `ofc schedule FILE` and the
	     * failures' re-plan take it) */
	    .algorithm = spec ? NULL : config_algorithm(f, coll),
	    .spec = spec		  ? spec
		    : f->graph && !failed ? f->graph->spec
					  : NULL,
	    .files = f->files,
	    .collective = coll,
	    .size = size,
	    .lowering = workload_lowering(f, spec, coll),
	    /* Failures in effect on the config's graph: the fabric's degraded
	     * graph, where BFB keeps the healthy program and patches what the
	     * failures change wherever `ofc schedule FILE` does (above 1,024
	     * nodes, or where the explicit schedule is over the memory limit:
	     * engine_bfb.c), so the state, the re-plan's event and GetSchedule
	     * show the schedule the CLI computes (failed hosts too); other
	     * engines get the explicit schedule there. */
	    .reduced = failed ? SCHEDULE_REDUCED_AUTO : SCHEDULE_REDUCED_ALWAYS,
	    .max_memory = cfg->max_memory,
	};

	if (!f->graph && !spec)
		return ofc_error_set(err, OFC_E_INPUT, "no direct-connect topology");
	if (failed && coll == SCHED_ALLTOALL)
		return ofc_error_set(err, OFC_E_INPUT,
				     "failures in effect are not alike at every node");
	if (schedule_compute(&q, r, NULL, err) < 0)
		return -1;
	return schedule_check(r, err);
}

/* As snapshot_build computed it before: explicit, on the fabric's ports
 * (or the committed topology's spec). */
static int compute_explicit(const struct fabcfg *cfg, const char *spec, struct schedule_result *r,
			    struct ofc_error *err)
{
	const struct fabric *f = cfg->f;
	struct schedule_query q = {
	    .fabric = f,
	    .spec = spec,
	    .collective = cfg->coll,
	    .size = cfg->size,
	    .lowering = workload_lowering(f, spec, cfg->coll),
	    .max_memory = cfg->max_memory,
	};

	if (schedule_compute(&q, r, NULL, err) < 0)
		return -1;
	return schedule_check(r, err);
}

void state_schedule_form(const struct schedule_result *r, char *buf, size_t n)
{
	const struct schedule_outcome *o = r->main;
	const char *explicit = strstr(r->note, "explicit on the degraded graph: ");

	if (o->fallback_from)
		snprintf(
		    buf, n,
		    ", Swing around the failed links (the healthy %s%s, %zu transfers re-routed "
		    "around %zu failed arcs) instead of %s, refused: %s",
		    o->is_reduced ? "program x " : "schedule", o->is_reduced ? o->group.name : "",
		    o->reroute ? o->reroute->ndet : 0, o->reroute ? o->reroute->nfailed : 0,
		    o->fallback_from, o->fallback_why);
	else if (o->is_patched)
		snprintf(buf, n,
			 ", kept as structure (the healthy program x %s and a patch of %zu "
			 "transfers for the %llu nodes the failures reach)",
			 o->group.name, o->patch.prog.nxfers,
			 (unsigned long long)(o->patch.nregion + o->bst.problems));
	else if (o->is_reduced)
		snprintf(buf, n, ", symmetry-reduced (node 0's program x %s)", o->group.name);
	else if (explicit)
		snprintf(buf, n, " (explicit: %.160s)",
			 explicit + strlen("explicit on the degraded graph: "));
	else
		buf[0] = 0;
}

/* What the computation came to (PlannerStateSchedule's fields). */
struct state_out {
	uint8_t *sched; /* packed ofc.v1.Schedule summary, NULL: none */
	size_t sched_len;
	bool verified;
	char *why;  /* no schedule, or not verified: why */
	char *line; /* for the log and the event */
};

static void compute(const struct fabcfg *cfg, const char *spec,
		    void (*hook)(struct schedule_result *r), struct state_out *t)
{
	const char *coll = sched_collective_name(cfg->coll);
	double t0 = now_seconds();
	struct schedule_result r;
	struct ofc_error err = {0}, rerr = {0};
	struct arena a = {0};
	char reduced_why[200] = "";

	if (state_schedule_structured(cfg, spec, cfg->coll, cfg->size, &r, &rerr) < 0) {
		snprintf(reduced_why, sizeof(reduced_why), " (explicit: %.160s)", rerr.msg);
		if (compute_explicit(cfg, spec, &r, &err) < 0) {
			/* (with failures in effect, the structured refusal is
			 * the CLI's: everything tried, as the re-plan says) */
			bool failed = !spec && cfg->coll != SCHED_ALLTOALL &&
				      (cfg->nfailed || cfg->f->degraded);
			t->why =
			    xasprintf("no schedule for %s: %s", coll, failed ? rerr.msg : err.msg);
			t->line = xasprintf("the state's schedule: %s", t->why);
			return;
		}
	}
	if (hook)
		hook(&r);
	const struct schedule_outcome *o = r.main;
	const struct schedule *s = &o->s;
	Ofc__V1__Schedule *h = snapshot_schedule_summary(&a, &r);
	char form[STATE_FORM_LEN];

	state_schedule_form(&r, form, sizeof(form));
	t->verified = s->verified;
	t->sched_len = protobuf_c_message_get_packed_size(&h->base);
	t->sched = xmalloc(t->sched_len + 1);
	protobuf_c_message_pack(&h->base, t->sched);
	if (!s->verified)
		t->why =
		    xasprintf("the %s schedule failed verification: %s", s->algorithm,
			      o->verify_error[0] ? o->verify_error : "(the verifier said nothing)");
	t->line = xasprintf("the state's schedule: %s %s on %s: %u steps, %.6g us, %s%s%s, "
			    "computed in %.3f s",
			    s->algorithm, coll, s->topology, s->nsteps, s->time_us,
			    s->verified ? "verified" : "NOT verified: ", s->verified ? "" : t->why,
			    form[0] ? form : reduced_why, now_seconds() - t0);
	arena_free(&a);
	schedule_result_free(&r);
}

uint8_t *state_schedule_compute(const struct fabcfg *cfg, const char *spec,
				void (*hook)(struct schedule_result *r), size_t *len)
{
	Ofc__V1__PlannerStateSchedule m = OFC__V1__PLANNER_STATE_SCHEDULE__INIT;
	struct state_out t = {0};
	uint8_t *buf;

	compute(cfg, spec, hook, &t);
	m.has_schedule = t.sched != NULL;
	m.schedule.data = t.sched;
	m.schedule.len = t.sched_len;
	m.has_verified = 1;
	m.verified = t.verified;
	m.why = t.why;
	m.line = t.line;
	*len = protobuf_c_message_get_packed_size(&m.base);
	buf = xmalloc(*len ? *len : 1);
	protobuf_c_message_pack(&m.base, buf);
	free(t.sched);
	free(t.why);
	free(t.line);
	return buf;
}
