/* `ofc plan FILE --topology T --max-loss P%` and `ofc try FILE --max-loss
 * P%`: the stages a change of topology would take under a loss budget, as
 * ofcd's `reconfigure --max-loss --dry-run` shows them, here without ofcd
 * and without a device: the plan is reconfig/stages.c's (a function of the
 * start, the target, the budget and the held hosts, so the same plan ofcd
 * runs from the same topology), each stage's loss, and each stage's
 * schedule (the config's collective on the topology before the stage less
 * the host ports its circuits end at, the ports published as failed while
 * it runs). plan's start is the config's own topology (what `ofc apply
 * FILE` puts in place) and its target T; try's start is the topology the
 * state directory's record committed and its target FILE's.
 *
 * Held partitions are ofcd's: the plan goes around the hosts the state
 * directory's FABRIC.held names (the files store ofcd keeps them in), as
 * ofcd's does; without a state directory it says they are not known. */
#include "controller/cli/internal.h"
#include "controller/export/export.h"
#include "controller/pick/pick.h"
#include "controller/schedule/schedule.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "proto/cli_report.pb-c.h"
#include "proto/state.pb-c.h"

/* What FABRIC.held may weigh (ofcd's own bound on it). */
#define PLAN_STAGES_HELD_MAX_BYTES ((size_t)1 << 20)

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
	f->picker = &pick_here;
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
	if (m->held_note)
		printf("  %s\n", m->held_note);
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
		printf("  (the %s topology is the target already: nothing to stage)\n",
		       m->from_is_record ? "committed" : "config's");
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
	for (size_t i = 0; i < m->n_held; i++)
		free(m->held[i]);
	free(m->held);
	free(m->held_note);
}

/* The held partitions' hosts (per host of f, into *fixed; NULL when none
 * is held) from state_dir's FABRIC.held, their names into m->held and what
 * is known of them into m->held_note. No state directory (NULL, or none
 * there): not known, said. -1: the file is there and cannot be read, in a
 * directory the command was given (must); in the default one that is
 * said too, and the plan made without them. */
static int holds_read(const char *state_dir, bool must, const struct fabric *f, const char *again,
		      bool **fixed, Ofc__V1__StagedPlan *m, struct ofc_error *err)
{
	struct stat st;
	struct store *store;
	char *data = NULL, *where;
	size_t len = 0;
	bool missing = false;
	uint32_t outside = 0;
	int rc = 0;

	*fixed = NULL;
	if (!state_dir || stat(state_dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
		m->held_note = xasprintf(
		    "held partitions are not known offline (no state directory%s%s): a stage "
		    "may take a held partition's ports out of use; ofcd's plan goes around "
		    "them: ofc --socket PATH %s",
		    state_dir ? " " : "", state_dir ? state_dir : "", again);
		return 0;
	}
	store = store_open_files(state_dir);
	where = store_where(store, f->name, STORE_HELD);
	Ofc__V1__HeldPartitions *h = NULL;

	if (store_get(store, f->name, STORE_HELD, PLAN_STAGES_HELD_MAX_BYTES, &data, &len, &missing,
		      err) < 0)
		goto unknown;
	if (missing) {
		m->held_note = xasprintf("no partition held (%s: none; an ofcd on etcd keeps its "
					 "holds in etcd: ofc --socket PATH %s)",
					 where, again);
		goto out;
	}
	if (!(h = ofc__v1__held_partitions__unpack(NULL, len, (const uint8_t *)data))) {
		ofc_error_at(err, OFC_E_RUNTIME, where, 0, 0,
			     "not ofcd's held partitions (%zu bytes): the file is damaged", len);
		goto unknown;
	}
	struct strbuf sb = STRBUF_INIT;

	*fixed = xcalloc((size_t)f->nhosts + 1, sizeof(**fixed));
	m->held = xcalloc(h->n_held + 1, sizeof(*m->held));
	for (size_t i = 0; i < h->n_held; i++) {
		const Ofc__V1__HeldPartitions__Held *e = h->held[i];

		m->held[m->n_held++] = xstrdup(e->name ? e->name : "");
		sb_printf(&sb, "%s%s (%zu host%s)", i ? ", " : "", e->name ? e->name : "",
			  e->n_hosts, e->n_hosts == 1 ? "" : "s");
		for (size_t k = 0; k < e->n_hosts; k++) {
			int x = fabric_find_host(f, e->hosts[k]);

			if (x >= 0)
				(*fixed)[x] = true;
			else
				outside++;
		}
	}
	if (!h->n_held)
		sb_puts(&sb, "none");
	m->held_note =
	    xasprintf("held partitions (%s): %s%s%s", where, sb.buf,
		      h->n_held ? "; the stages go around them, their circuits as they are" : "",
		      outside ? "; hosts of theirs not in this config left out" : "");
	sb_free(&sb);
	ofc__v1__held_partitions__free_unpacked(h, NULL);
	goto out;
unknown:
	if (must) {
		rc = -1;
	} else {
		m->held_note = xasprintf("held partitions are not known: %s: %s (ofcd's plan goes "
					 "around them: ofc --socket PATH %s)",
					 where, err->msg, again);
		ofc_error_clear(err);
	}
out:
	free(data);
	free(where);
	store_close(store);
	return rc;
}

/* The stages of fc's file from from_spec to to_spec (NULL: the file's own
 * topology) within fc->max_loss, around the hosts state_dir's holds name,
 * (must: a directory the command was given) printed; again: the command
 * ofcd plans the same with. An exit status. */
static int show(struct fabric_cmd *fc, const char *from_spec, const char *to_spec,
		const char *state_dir, bool must, const char *again)
{
	struct port_map from = {0}, to = {0};
	struct stage_plan p = {0};
	struct ofc_error err = {0};
	struct fabric *f = NULL;
	char *from_name = NULL, *to_name = NULL;
	bool *fixed = NULL;
	int rc = 0;
	Ofc__V1__StagedPlan m = OFC__V1__STAGED_PLAN__INIT;

	if (ports_at(fc->file, from_spec, &from, &from_name, &err) < 0 ||
	    ports_at(fc->file, to_spec, &to, &to_name, &err) < 0 ||
	    fabric_at(fc->file, NULL, NULL, 0, &f, &err) < 0 ||
	    holds_read(state_dir, must, f, again, &fixed, &m, &err) < 0) {
		rc = cli_fail(&err);
		goto out;
	}
	uint64_t size = 0;
	enum sched_collective coll = workload_of(f, &size);
	struct stage_req q = {&from, &to, fc->max_loss / 100, coll, 0, .fixed = fixed};

	if (stage_plan_make(&q, &p, &err) < 0) {
		rc = cli_fail(&err);
		goto out;
	}
	m.fabric = f->name;
	m.from_topology = from_name;
	m.target = to_name;
	m.has_max_loss_percent = m.has_moved = m.has_fewest = m.has_min_stages = 1;
	m.has_operations = 1;
	m.has_from_is_record = 1;
	m.from_is_record = from_spec != NULL;
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
out:
	message_free(&m);
	stage_plan_free(&p);
	port_map_free(&from);
	port_map_free(&to);
	fabric_free(f);
	free(fixed);
	free(from_name);
	free(to_name);
	return rc;
}

int plan_stages(struct fabric_cmd *fc)
{
	/* An explicit --state-dir must be there (a mistyped one is not "no
	 * partition held"); the default one is read when it is there. */
	struct stat st;
	char *again = xasprintf("reconfigure --topology %s --max-loss %g%% --dry-run",
				fc->stage_topology, fc->max_loss);
	int rc;

	if (fc->state_dir_opt && (stat(fc->state_dir, &st) < 0 || !S_ISDIR(st.st_mode)))
		rc = cli_usage_error(fc->cmd, "state directory '%s' does not exist", fc->state_dir);
	else
		rc = show(fc, NULL, fc->stage_topology, fc->state_dir, fc->state_dir_opt != NULL,
			  again);
	free(again);
	return rc;
}

int try_stages(struct fabric_cmd *fc)
{
	struct ctl_record r;
	struct ofc_error err = {0};
	struct fabric *f = NULL;
	const char *spec;
	int rc;

	if (config_load(fc->file, &f, &err) < 0)
		return cli_fail(&err);
	if (ctl_load_record(fc->state_dir, f->name, &r, &err) < 0) {
		fabric_free(f);
		return cli_fail(&err);
	}
	/* the whole fabric's topology as committed (a partition's commit
	 * keeps the fabric's beside its own) */
	spec = r.partition ? r.fabric_topology : r.topology;
	if (!r.have_state || !spec || !*spec) {
		ofc_error_set(&err, OFC_E_INPUT,
			      "no commit of the whole fabric's topology in %s to stage from: "
			      "'ofc try FILE' without --max-loss puts the config in place in one "
			      "transaction",
			      fc->state_dir);
		rc = cli_fail(&err);
	} else {
		char *again =
		    xasprintf("apply %s --max-loss %g%% --dry-run", fc->file, fc->max_loss);

		rc = show(fc, spec, NULL, fc->state_dir, true, again);
		free(again);
		if (rc == 0 && !fc->json)
			printf(
			    "nothing applied: the stages run through ofcd, which publishes each "
			    "stage's schedule before its circuits go (ofc --socket PATH apply %s "
			    "--max-loss %g%%); without --max-loss, ofc try applies every circuit "
			    "in one transaction\n",
			    fc->file, fc->max_loss);
	}
	ctl_record_free(&r);
	fabric_free(f);
	return rc;
}
