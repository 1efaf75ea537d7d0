/* `ofc plan FILE --topology T --max-loss P%`: the stages a change of the
 * config's topology to T would take under a loss budget, as ofcd's
 * `reconfigure --max-loss --dry-run` shows them, here without ofcd and
 * without a device: the plan is reconfig/stages.c's (a function of the
 * start, the target and the budget, so the same plan ofcd runs from the
 * same topology), each stage's loss, and each stage's schedule (the
 * config's collective on the topology before the stage less the host
 * ports its circuits end at, the ports published as failed while it
 * runs). The start is the config's own topology: what `ofc apply FILE`
 * puts in place. */
#include "controller/cli/internal.h"
#include "controller/export/export.h"
#include "controller/schedule/schedule.h"

#include <stdlib.h>
#include <string.h>

#include "proto/cli_report.pb-c.h"

/* Above this many hosts each stage's schedule is left to the run (as
 * ofcd's dry run leaves it): the plan alone is quick, the schedules not. */
#define PLAN_STAGES_SCHEDULE_HOSTS 1024

/* The workload the stages' schedules are for: the config's first
 * collective other than all-to-all, else its all-to-all (as ofcd picks
 * the one its state shows). 0: none. */
static enum sched_collective workload_of(const struct fabric *f, uint64_t *size)
{
	for (int pass = 0; pass < 2; pass++)
		for (uint32_t i = 0; i < f->ncollectives; i++)
			if ((f->collectives[i].op != SCHED_ALLTOALL) == (pass == 0) &&
			    (pass == 0 || !f->nrings)) {
				*size = f->collectives[i].size;
				return f->collectives[i].op;
			}
	return 0;
}

/* FILE again with topology spec (NULL: its own) and the host ports dark
 * (row * n + node) failed, validated. */
static int fabric_at(const char *file, const char *spec, const uint32_t *dark, uint32_t ndark,
		     struct fabric **out, struct ofc_error *err)
{
	struct fabric *f;

	*out = NULL;
	if (config_load(file, &f, err) < 0)
		return -1;
	if (spec) {
		free(f->topology.spec);
		f->topology.spec = xstrdup(spec);
		f->topology.present = true;
		f->topology.spec_quoted = 0;
		f->topology.auto_picked = false;
	}
	for (uint32_t i = 0; i < ndark && f->nhosts; i++) {
		struct host *h = &f->hosts[dark[i] % f->nhosts];

		h->failed_ports =
		    xrealloc(h->failed_ports, (h->nfailed_ports + 1) * sizeof(uint32_t));
		h->failed_port_locs =
		    xrealloc(h->failed_port_locs, (h->nfailed_ports + 1) * sizeof(struct src_loc));
		h->failed_ports[h->nfailed_ports] = dark[i] / f->nhosts;
		memset(&h->failed_port_locs[h->nfailed_ports], 0, sizeof(struct src_loc));
		h->nfailed_ports++;
	}
	if (fabric_validate(f, err) < 0) {
		fabric_free(f);
		return -1;
	}
	*out = f;
	return 0;
}

/* The port permutations of FILE at topology spec (NULL: its own). */
static int ports_at(const char *file, const char *spec, struct port_map *pm, char **spec_out,
		    struct ofc_error *err)
{
	struct fabric *f;
	struct ofc_error sub = {0};

	if (fabric_at(file, spec, NULL, 0, &f, &sub) < 0) {
		if (!spec) {
			*err = sub;
			return -1;
		}
		/* (the target's fault, not the config's line) */
		if (strstr(sub.msg, spec))
			return ofc_error_set(err, OFC_E_INPUT, "%s", sub.msg);
		return ofc_error_set(err, OFC_E_INPUT, "topology %.200s: %s", spec, sub.msg);
	}
	if (!f->ports.to || f->ports.n != f->nhosts) {
		ofc_error_set(err, OFC_E_INPUT,
			      spec ? "topology %.200s has no port permutations over the hosts' "
				     "ports to stage"
				   : "fabric '%.200s' has no topology of port permutations over "
				     "its hosts to change in stages",
			      spec ? spec : f->name);
		fabric_free(f);
		return -1;
	}
	*pm = f->ports;
	f->ports = (struct port_map){0};
	if (spec_out)
		*spec_out = xstrdup(f->topology.spec);
	fabric_free(f);
	return 0;
}

/* Stage i's schedule into s: coll on the topology before it less its dark
 * host ports, computed and verified. */
static void stage_schedule(const char *file, const struct stage_plan *p, uint32_t i,
			   enum sched_collective coll, uint64_t size, Ofc__V1__StagedPlan__Stage *s)
{
	char *spec = i ? topo_ports_spec(&p->v[i - 1].after) : NULL; /* NULL: the config's */
	struct fabric *f = NULL;
	struct ofc_error err = {0};
	struct schedule_result r;

	if (fabric_at(file, spec, p->v[i].dark, p->v[i].ndark, &f, &err) == 0) {
		struct schedule_query q = {.fabric = f, .collective = coll, .size = size};

		if (schedule_compute(&q, &r, NULL, &err) == 0) {
			if (schedule_check(&r, &err) == 0) {
				s->algorithm = xstrdup(r.main->s.algorithm);
				s->collective =
				    xstrdup(sched_collective_name(r.main->s.collective));
				s->has_num_steps = s->has_time_us = s->has_verified = 1;
				s->num_steps = r.main->s.nsteps;
				s->time_us = r.main->s.time_us;
				s->verified = true;
			}
			schedule_result_free(&r);
		}
		fabric_free(f);
	}
	if (err.code)
		s->schedule_error = xstrdup(err.msg);
	free(spec);
}

static void print_text(const Ofc__V1__StagedPlan *m)
{
	printf("%zu stage%s to %s from %s within a loss of %.4g%%: %u circuit%s moved (the "
	       "fewest possible %u), at least %u stage%s by the ports a host may lose at once, "
	       "%u device operation%s\n",
	       m->n_stages, m->n_stages == 1 ? "" : "s", m->target, m->from_topology,
	       m->max_loss_percent, m->moved, m->moved == 1 ? "" : "s", m->fewest, m->min_stages,
	       m->min_stages == 1 ? "" : "s", m->operations, m->operations == 1 ? "" : "s");
	for (size_t i = 0; i < m->n_stages; i++) {
		const Ofc__V1__StagedPlan__Stage *s = m->stages[i];

		printf("  stage %u: %u circuit%s, %u host port%s out of use, loss %.2f%%%s%s, %u "
		       "operation%s; schedule: ",
		       s->stage, s->circuits, s->circuits == 1 ? "" : "s", s->host_ports_out,
		       s->host_ports_out == 1 ? "" : "s", s->loss_percent,
		       s->exact ? "" : " (the cuts checked within the work bound)",
		       s->cut ? ", a cycle cut" : "", s->operations, s->operations == 1 ? "" : "s");
		if (s->verified)
			printf("%s %s, %u steps, %.6g us, verified\n", s->algorithm, s->collective,
			       s->num_steps, s->time_us);
		else
			printf("none (%s)\n",
			       s->schedule_error ? s->schedule_error : m->schedules_note);
	}
	if (!m->n_stages)
		printf("  (the config's topology is the target already: nothing to stage)\n");
}

static void message_free(Ofc__V1__StagedPlan *m)
{
	for (size_t i = 0; i < m->n_stages; i++) {
		free(m->stages[i]->algorithm);
		free(m->stages[i]->collective);
		free(m->stages[i]->schedule_error);
		free(m->stages[i]);
	}
	free(m->stages);
	free(m->schedules_note);
}

int plan_stages(struct fabric_cmd *fc)
{
	struct port_map from = {0}, to = {0};
	struct stage_plan p = {0};
	struct ofc_error err = {0};
	struct fabric *f = NULL;
	char *from_spec = NULL;
	int rc = 0;

	if (ports_at(fc->file, NULL, &from, &from_spec, &err) < 0 ||
	    ports_at(fc->file, fc->stage_topology, &to, NULL, &err) < 0 ||
	    fabric_at(fc->file, NULL, NULL, 0, &f, &err) < 0) {
		rc = cli_fail(&err);
		goto out;
	}
	uint64_t size = 0;
	enum sched_collective coll = workload_of(f, &size);
	struct stage_req q = {&from, &to, fc->max_loss / 100, coll, 0};

	if (stage_plan_make(&q, &p, &err) < 0) {
		rc = cli_fail(&err);
		goto out;
	}
	Ofc__V1__StagedPlan m = OFC__V1__STAGED_PLAN__INIT;

	m.fabric = f->name;
	m.from_topology = from_spec;
	m.target = (char *)fc->stage_topology;
	m.has_max_loss_percent = m.has_moved = m.has_fewest = m.has_min_stages = 1;
	m.has_operations = 1;
	m.max_loss_percent = fc->max_loss;
	m.moved = p.moved;
	m.fewest = p.fewest;
	m.min_stages = p.min_stages;
	if (!coll)
		m.schedules_note = xstrdup("the config has no collective to schedule");
	else if (f->nhosts > PLAN_STAGES_SCHEDULE_HOSTS)
		m.schedules_note = xasprintf("over %u hosts: each stage's schedule is computed "
					     "and published before its circuits go",
					     PLAN_STAGES_SCHEDULE_HOSTS);
	m.stages = xcalloc((size_t)p.n + 1, sizeof(*m.stages));
	for (uint32_t i = 0; i < p.n; i++) {
		Ofc__V1__StagedPlan__Stage *s = xmalloc(sizeof(*s));

		ofc__v1__staged_plan__stage__init(s);
		s->has_stage = s->has_circuits = s->has_host_ports_out = s->has_loss_percent = 1;
		s->has_cut = s->has_exact = 1;
		s->stage = i + 1;
		s->circuits = p.v[i].moved;
		s->host_ports_out = p.v[i].ndark;
		s->loss_percent = 100 * p.v[i].loss;
		s->cut = p.v[i].cut;
		s->exact = p.v[i].exact;
		s->has_operations = 1;
		s->operations = p.v[i].ops;
		m.operations += p.v[i].ops;
		if (!m.schedules_note)
			stage_schedule(fc->file, &p, i, coll, size, s);
		m.stages[m.n_stages++] = s;
	}
	if (fc->json) {
		struct json_writer w;

		jw_init(&w, stdout, true);
		pb_write_json(&w, &m.base);
		jw_finish(&w);
	} else {
		print_text(&m);
	}
	message_free(&m);
out:
	stage_plan_free(&p);
	port_map_free(&from);
	port_map_free(&to);
	fabric_free(f);
	free(from_spec);
	return rc;
}
