/* A staged reconfiguration (max_loss_percent of a Reconfigure, a
 * MoveToPhase or an ApplyConfig): the fabric's topology changed in stages
 * (controller/reconfig/stages.c plans them), each as a drain does it: the
 * stage's schedule (the topology before it less the host ports its
 * circuits end at, published as failures are) first, a grace for the
 * running jobs to take it, then its circuits in one transaction verified
 * on the devices, then the next stage's schedule (run_stage says why not
 * the intermediate topology's own). A stage that fails is rolled back by
 * its transaction alone; the stages before it stay.
 *
 * The record, FABRIC.staged in the store (an ofc.v1.StagedReconfigure),
 * holds the request, where the plan began and the stages committed, from
 * the plan until the last stage. The plan is a function of its start,
 * target and budget, so a new leader (cluster.c replays the request) or
 * the same request sent again makes it again and resumes from the stage
 * the record's topology is at.
 *
 * Under held partitions each stage's transaction is aimed on the free
 * ports alone (ofcd_apply_topology), and the plan is made outside their
 * hosts (stage_req.fixed): no stage takes a held port out of use or
 * moves a held circuit.
 *
 * The plan is made on the record's topology, but a released partition's
 * circuits stay on its ports until they are aimed again: the devices may
 * hold cross-connects the record's topology has not. Those leftovers
 * (each switch's record against ctl_fabric_target) are a stage of their
 * own before the first stage to run, counted and priced like the others:
 * its ports published out of use first (the schedule before it uses only
 * circuits the devices hold), then the record's topology re-aimed. Every
 * stage after it then moves what it says, and its schedule uses what the
 * ports hold. */
#include "controller/ofcd/answer.h"
#include "controller/ofcd/worker.h"
#include "controller/schedule/schedule.h"

#include <stdlib.h>
#include <string.h>

#include "proto/state.pb-c.h"

#define STAGED_MAX_BYTES (4u << 20)

/* The record as the store has it: NULL when there is none (or it is no
 * StagedReconfigure: logged, and planned afresh). */
static Ofc__V1__StagedReconfigure *record_read(struct ofcd *d)
{
	struct ofc_error err = {0};
	char *data = NULL;
	size_t len = 0;
	bool missing = false;
	Ofc__V1__StagedReconfigure *r = NULL;

	if (store_get(d->store, d->w->cfg->f->name, STORE_STAGED, STAGED_MAX_BYTES, &data, &len,
		      &missing, &err) < 0)
		ofcd_log_error(d, "the staged reconfiguration's record cannot be read: ", &err);
	else if (!missing &&
		 !(r = ofc__v1__staged_reconfigure__unpack(NULL, len, (const uint8_t *)data)))
		ofcd_log(d, OFCD_LOG_ERR,
			 "the staged reconfiguration's record (%zu bytes) is no "
			 "StagedReconfigure: planned afresh",
			 len);
	free(data);
	return r;
}

static int record_write(struct ofcd *d, const struct job *j, const char *from,
			const struct stage_plan *p, uint32_t done, uint64_t since,
			struct ofc_error *err)
{
	Ofc__V1__StagedReconfigure r = OFC__V1__STAGED_RECONFIGURE__INIT;
	Ofc__V1__MutationQueue__Entry e = OFC__V1__MUTATION_QUEUE__ENTRY__INIT;
	struct store_write w = {STORE_STAGED, NULL, 0};
	int rc;

	if (j->req) {
		e.has_request = e.has_uid = e.has_gid = e.has_pid = e.has_gateway = 1;
		e.request.data = j->req;
		e.request.len = j->req_len;
		e.uid = j->peer.uid;
		e.gid = j->peer.gid;
		e.pid = j->peer.pid;
		e.gateway = j->via_gateway;
		e.kind = (char *)job_kind_name(j->kind);
		e.target = j->target;
		r.request = &e;
	}
	r.from_topology = (char *)from;
	r.target = j->spec;
	r.has_max_loss_percent = r.has_stages = r.has_done = r.has_since_unix_ms = 1;
	r.max_loss_percent = j->max_loss;
	r.stages = p->n;
	r.done = done;
	r.since_unix_ms = since;
	w.len = ofc__v1__staged_reconfigure__get_packed_size(&r);
	uint8_t *buf = xmalloc(w.len + 1);

	ofc__v1__staged_reconfigure__pack(&r, buf);
	w.data = buf;
	rc = store_write(d->store, d->w->cfg->f->name, &w, 1, err);
	free(buf);
	return rc;
}

static int record_remove(struct ofcd *d, struct ofc_error *err)
{
	struct store_write w = {STORE_STAGED, NULL, 0};

	return store_write(d->store, d->w->cfg->f->name, &w, 1, err);
}

static void staging_clear(struct ofcd *d)
{
	strv_free(d->w->staging, d->w->nstaging);
	d->w->staging = NULL;
	d->w->nstaging = 0;
}

/* The stage's host ports out of use, as failure items HOST:PORT. */
static void staging_set(struct ofcd *d, const struct stage *st)
{
	const struct fabric *f = d->w->cfg->f;
	uint32_t n = f->ports.n;
	char item[NAME_MAX_LEN + 16];

	staging_clear(d);
	for (uint32_t i = 0; i < st->ndark; i++) {
		snprintf(item, sizeof(item), "%s:%u", f->hosts[st->dark[i] % n].name,
			 st->dark[i] / n);
		d->w->staging = xrealloc(d->w->staging, (d->w->nstaging + 2) * sizeof(char *));
		d->w->staging[d->w->nstaging++] = xstrdup(item);
		d->w->staging[d->w->nstaging] = NULL;
	}
}

static bool same_ports(const struct port_map *a, const struct port_map *b)
{
	return a->to && b->to && a->n == b->n && a->d == b->d &&
	       memcmp(a->to, b->to, (size_t)a->n * a->d * sizeof(*a->to)) == 0;
}

/* ---- the plan ---------------------------------------------------------------------------- */

struct staged {
	struct ofcd *d;
	struct job *j;
	struct answer *an;
	struct stage_plan p;
	char *from;	     /* the plan's start (a spec) */
	uint32_t done;	     /* stages committed before this run */
	uint64_t since;	     /* the record's */
	bool resumed;	     /* from a record */
	bool next_out;	     /* the next stage's schedule is out already */
	uint32_t ops;	     /* device operations of the stages run */
	struct strbuf words; /* the plan in words */
};

/* The port permutations spec names over the running config. */
static int ports_of(struct ofcd *d, const char *spec, bool from_client, struct port_map *pm,
		    struct ofc_error *err)
{
	struct fabric *f = NULL;

	if (ofcd_fabric_with_topology(d, d->w->cfg, spec, from_client, &f, err) < 0)
		return -1;
	if (!f->ports.to || f->ports.n != f->nhosts) {
		fabric_free(f);
		return ofc_error_set(
		    err, OFC_E_INPUT,
		    "topology %.200s has no port permutations over the hosts' ports "
		    "to stage",
		    spec);
	}
	*pm = f->ports;
	f->ports = (struct port_map){0};
	fabric_free(f);
	return 0;
}

/* The held partitions' hosts, per host of the running fabric (NULL when
 * none is held): the stages leave their circuits as they are. */
static bool *held_hosts(struct ofcd *d)
{
	const struct fabric *f = d->w->cfg->f;
	bool *fixed;

	if (!d->w->nheld)
		return NULL;
	fixed = xcalloc((size_t)f->nhosts + 1, sizeof(*fixed));
	for (uint32_t i = 0; i < d->w->nheld; i++)
		for (uint32_t m = 0; m < d->w->held[i].p.nmembers; m++) {
			int h = fabric_find_host(f, d->w->held[i].p.members[m]);

			if (h >= 0)
				fixed[h] = true;
		}
	return fixed;
}

/* The stages from `from` to `to` within the request's budget, outside
 * the held partitions (the one planning call; the plan is a function of
 * these alone, so a new leader makes it again). */
static int plan_stages(struct staged *s, const struct port_map *from, const struct port_map *to,
		       struct ofc_error *err)
{
	bool *fixed = held_hosts(s->d);
	struct stage_req q = {from,	     to, s->j->max_loss / 100, s->d->w->cfg->coll, 0,
			      .fixed = fixed};
	int rc = stage_plan_make(&q, &s->p, err);

	free(fixed);
	return rc;
}

/* The held partitions the stages go around, into the plan's words. */
static void held_words(const struct ofcd *d, struct strbuf *sb)
{
	uint32_t n = d->w->nheld;

	for (uint32_t i = 0; i < n && i < 8; i++)
		sb_printf(sb, "%s%s", i ? ", " : "; on the free ports alone: held partition ",
			  d->w->held[i].p.name);
	if (n > 8)
		sb_printf(sb, " and %u more", n - 8);
	if (n)
		sb_printf(sb, " keep%s %s circuits as they are", n == 1 ? "s" : "",
			  n == 1 ? "its" : "their");
}

/* Whether a and b hold the same cross-connects (both built from the
 * same wiring, so in the same order). */
static bool same_circuits(const struct fabric *a, const struct fabric *b)
{
	if (a->ncircuits != b->ncircuits)
		return false;
	for (uint32_t i = 0; i < a->ncircuits; i++)
		if (a->circuits[i].sw != b->circuits[i].sw ||
		    a->circuits[i].in_port != b->circuits[i].in_port ||
		    a->circuits[i].out_port != b->circuits[i].out_port)
			return false;
	return true;
}

/* A staged ApplyConfig's target: its config's topology, when the config
 * changes no circuit but its topology's (the rest of it is applied after
 * the stages, in one transaction that moves no circuit). -2: answered
 * (the config's own errors, FILE:LINE:COL). */
static int apply_target(struct staged *s, struct ofc_error *err)
{
	struct ofcd *d = s->d;
	struct job *j = s->j;
	struct fabcfg *nc = NULL;
	struct fabric *same = NULL;
	int rc = -1;

	if (d->w->nheld)
		return ofc_error_set(
		    err, OFC_E_INPUT,
		    "%u partition%s held: a staged apply ends with the config applied in one "
		    "transaction, which would aim the held ports too; stage its topology with "
		    "reconfigure --topology SPEC --max-loss P%% (the stages go around held "
		    "partitions), or release %s first",
		    d->w->nheld, d->w->nheld == 1 ? " is" : "s are",
		    d->w->nheld == 1 ? "it" : "them");
	if (ofcd_build_target(d, j, s->an, &nc) < 0)
		return -2;
	const struct fabric *nf = nc->f;

	if (!nf->topology.present || !nf->topology.spec)
		ofc_error_set(err, OFC_E_INPUT, "%s has no topology to change to in stages",
			      j->filename);
	else if (ofcd_fabric_with_topology(d, d->w->cfg, nf->topology.spec, true, &same, err) ==
		 0) {
		if (!same_circuits(same, nf)) {
			ofc_error_set(err, OFC_E_INPUT,
				      "%s changes circuits beyond its topology's (its wiring, "
				      "switches or partitions): a staged apply changes the "
				      "topology alone; apply it without max_loss_percent, or "
				      "stage the topology first",
				      j->filename);
		} else {
			free(j->spec);
			j->spec = xstrdup(nf->topology.spec);
			j->spec_from_client = true;
			/* (the stages' words name both; the apply's, the file) */
			free(j->target);
			j->target = xasprintf("%s (the topology of %s)", j->spec, j->filename);
			rc = 0;
		}
	}
	fabric_free(same);
	fabcfg_unref(nc);
	return rc;
}

/* The target's spec: the request's topology, the topology the workload's
 * chosen way gives the phase (MoveToPhase in stages; the planning call a
 * planner process may take over), or an ApplyConfig's config's. -1: err;
 * -2: answered. */
static int staged_target(struct staged *s, struct ofc_error *err)
{
	struct job *j = s->j;
	char *spec = NULL;

	if (j->kind == JOB_APPLY_CONFIG)
		return apply_target(s, err);
	if (!j->to_phase)
		return 0;
	if (ofcd_phase_spec(s->d, s->d->w->cfg, j, &spec, err) < 0)
		return -1;
	free(j->spec);
	j->spec = spec;
	j->spec_from_client = false;
	return 0;
}

/* ---- the leftovers ---------------------------------------------------------------------- */

struct leftovers {
	const struct fabric *f;
	uint32_t **hp; /* per switch and port: host port (row * n + host), or UINT32_MAX */
	bool *dark;    /* per host port */
	uint32_t set, removed;
};

/* Per switch port, the host port it is cabled to (row * n + host), or
 * UINT32_MAX: a held partition's host's, a drained port, or no host's
 * (their cross-connects are no leftovers). */
static void leftover_ports(struct ofcd *d, struct leftovers *l)
{
	const struct fabric *f = l->f;
	bool *held = held_hosts(d);

	l->hp = xcalloc((size_t)f->nswitches + 1, sizeof(*l->hp));
	for (uint32_t sw = 0; sw < f->nswitches; sw++) {
		l->hp[sw] = xmalloc(((size_t)f->switches[sw].ports + 1) * sizeof(**l->hp));
		for (uint32_t p = 0; p <= f->switches[sw].ports; p++)
			l->hp[sw][p] = UINT32_MAX;
	}
	for (uint32_t w = 0; w < f->nwiring; w++) {
		const struct attachment *a = &f->wiring[w];

		if (a->sw < f->nswitches && a->sw_port <= f->switches[a->sw].ports &&
		    a->host_port < f->ports.d && !(held && held[a->host]))
			l->hp[a->sw][a->sw_port] = a->host_port * f->ports.n + a->host;
	}
	for (uint32_t i = 0; i < d->w->ndrained; i++) {
		int sw = fabric_find_switch(f, d->w->drained[i].sw);

		if (sw >= 0 && d->w->drained[i].port <= f->switches[sw].ports)
			l->hp[sw][d->w->drained[i].port] = UINT32_MAX;
	}
	free(held);
}

/* The cross-connects of `a` (by in-port) that `b` has not, on free ports:
 * counted into *n, both ends' host ports marked dark. */
static void leftover_diff(struct leftovers *l, uint32_t sw, const struct device_state *a,
			  const struct device_state *b, uint32_t *n)
{
	uint32_t ports = l->f->switches[sw].ports,
		 *out = xmalloc(((size_t)ports + 1) * sizeof(*out));
	const uint32_t *hp = l->hp[sw];

	for (uint32_t p = 0; p <= ports; p++)
		out[p] = UINT32_MAX;
	for (uint32_t k = 0; k < b->nxc; k++)
		if (b->xc[k].in <= ports)
			out[b->xc[k].in] = b->xc[k].out;
	for (uint32_t k = 0; k < a->nxc; k++) {
		struct xconn x = a->xc[k];

		if (x.in > ports || x.out > ports || hp[x.in] == UINT32_MAX ||
		    hp[x.out] == UINT32_MAX || out[x.in] == x.out)
			continue;
		l->dark[hp[x.in]] = l->dark[hp[x.out]] = true;
		(*n)++;
	}
	free(out);
}

/* The leftovers as a stage of their own, from each switch's record
 * against the record's topology (ctl_fabric_target, as at_target_detail
 * compares them), outside the held partitions and drained ports: the
 * cross-connects to remove and the record's to set, the host ports at
 * both ends of each out of use while it runs (published as failures, so
 * the schedule before it uses none of them), priced as a stage is. false:
 * none (or no record to compare with: nothing committed yet). */
static bool leftover_stage(struct staged *s, struct stage *st)
{
	struct ofcd *d = s->d;
	const struct ctl *c = d->w->ctl;
	const struct fabric *f = d->w->cfg->f;
	struct leftovers l = {.f = f};
	struct ctl_record rec;
	struct ofc_error err = {0};
	size_t len = (size_t)f->ports.n * f->ports.d;

	if (!c || c->fabric->nswitches != f->nswitches || ctl_load_record_for(c, &rec, &err) < 0)
		return false;
	leftover_ports(d, &l);
	l.dark = xcalloc(len + 1, sizeof(*l.dark));
	for (uint32_t i = 0; i < c->ndevs; i++) {
		const struct ctl_device *cd = &c->devs[i];
		int sw = cd->cfg.cls == DEV_SWITCH ? fabric_find_switch(f, cd->cfg.name) : -1;
		const struct device_state *r = NULL;
		struct device_state want;

		for (uint32_t k = 0; k < rec.ndevs && sw >= 0 && !r; k++)
			if (strcmp(rec.dev_names[k], cd->cfg.name) == 0)
				r = &rec.dev_states[k];
		if (!r)
			continue;
		ctl_fabric_target(c, i, &want);
		leftover_diff(&l, (uint32_t)sw, r, &want, &l.removed);
		leftover_diff(&l, (uint32_t)sw, &want, r, &l.set);
		state_free(&want);
	}
	ctl_record_free(&rec);
	memset(st, 0, sizeof(*st));
	st->leftover = l.set || l.removed;
	if (st->leftover) {
		bool *fixed = held_hosts(d);
		struct stage_req q = {&f->ports,       &f->ports, s->j->max_loss / 100,
				      d->w->cfg->coll, 0,	  .fixed = fixed};

		st->dark = xmalloc((len + 1) * sizeof(*st->dark));
		for (size_t i = 0; i < len; i++)
			if (l.dark[i])
				st->dark[st->ndark++] = (uint32_t)i;
		st->moved = l.set;
		st->removed = l.removed;
		st->ops = l.set + l.removed;
		st->units = 1;
		st->loss =
		    stage_loss(&q, &f->ports, st->dark, st->ndark, s->p.ref_tau_b, &st->exact);
		st->after = (struct port_map){f->ports.n, f->ports.d,
					      xmalloc((len + 1) * sizeof(*st->after.to))};
		memcpy(st->after.to, f->ports.to, len * sizeof(*st->after.to));
		free(fixed);
	}
	for (uint32_t sw = 0; sw < f->nswitches; sw++)
		free(l.hp[sw]);
	free(l.hp);
	free(l.dark);
	return st->leftover;
}

/* The leftovers' stage, if any, put before the first stage to run: the
 * plan's own stages (a function of its start, target and budget alone)
 * are made on the record's topology, which the devices hold after it. */
static void add_leftovers(struct staged *s)
{
	struct stage st;

	if (!leftover_stage(s, &st))
		return;
	s->p.v = xrealloc(s->p.v, (s->p.n + 1) * sizeof(*s->p.v));
	memmove(&s->p.v[s->done + 1], &s->p.v[s->done], (s->p.n - s->done) * sizeof(*s->p.v));
	s->p.v[s->done] = st;
	s->p.n++;
	s->p.moved += st.moved;
}

/* Where this run starts: the record's plan when it is for the same target
 * and budget and the running topology is one of its stages, else a plan
 * from the running topology. */
static int make_plan(struct staged *s, struct ofc_error *err)
{
	struct ofcd *d = s->d;
	struct job *j = s->j;
	const struct fabric *f = d->w->cfg->f;
	Ofc__V1__StagedReconfigure *rec = record_read(d);
	struct port_map from = {0}, to = {0};
	int rc = -1;

	if (!f->ports.to || f->ports.n != f->nhosts)
		return ofc_error_set(err, OFC_E_INPUT,
				     "fabric '%s' has no topology of port permutations over its "
				     "hosts to change in stages",
				     f->name);
	if (ports_of(d, j->spec, j->spec_from_client, &to, err) < 0)
		goto out;
	if (rec && rec->target && rec->from_topology && strcmp(rec->target, j->spec) == 0 &&
	    rec->max_loss_percent == j->max_loss &&
	    ports_of(d, rec->from_topology, false, &from, err) == 0) {
		if (plan_stages(s, &from, &to, err) < 0)
			goto out;
		s->done = UINT32_MAX;
		if (same_ports(&from, &f->ports))
			s->done = 0;
		for (uint32_t i = 0; i < s->p.n && s->done == UINT32_MAX; i++)
			if (same_ports(&s->p.v[i].after, &f->ports))
				s->done = i + 1;
		if (s->done != UINT32_MAX) {
			s->from = xstrdup(rec->from_topology);
			s->since = rec->since_unix_ms;
			s->resumed = true;
			rc = 0;
			goto out;
		}
		ofcd_log(d, OFCD_LOG_NOTICE,
			 "the staged reconfiguration's record is for %s from %.60s, but the "
			 "fabric is at none of its stages: planned afresh",
			 rec->target, rec->from_topology);
		stage_plan_free(&s->p);
	}
	ofc_error_clear(err);
	port_map_free(&from);
	if (plan_stages(s, &f->ports, &to, err) < 0)
		goto out;
	s->from = xstrdup(f->topology.spec);
	s->done = 0;
	s->since = unix_ms();
	rc = 0;
out:
	port_map_free(&from);
	port_map_free(&to);
	if (rec)
		ofc__v1__staged_reconfigure__free_unpacked(rec, NULL);
	return rc;
}

/* The running config at the topology stage i starts from (the one stage
 * i - 1 leaves; the running config itself for the first stage to run): a
 * new reference, or NULL with err. */
static struct fabcfg *cfg_before(struct staged *s, uint32_t i, struct ofc_error *err)
{
	struct ofcd *d = s->d;
	struct fabcfg *h = d->w->cfg, *c;
	struct fabric *f;

	if (i == s->done)
		return fabcfg_ref(h);
	char *spec = topo_ports_spec(&s->p.v[i - 1].after);
	int rc = ofcd_fabric_with_topology(d, h, spec, false, &f, err);

	free(spec);
	if (rc < 0)
		return NULL;
	c = fabcfg_new(f, h->yaml, h->yaml_len, h->path, &d->o);
	c->coll = h->coll;
	c->size = h->size;
	return c;
}

/* A dry run's words for each stage's schedule: the workload's collective
 * on the topology in use during it (the one before it less its host
 * ports), as it would be published (small fabrics; a large one's are
 * computed as each stage runs). */
static void dry_schedules(struct staged *s)
{
	struct ofcd *d = s->d;
	const struct fabric *f = d->w->cfg->f;

	if (f->nhosts > 1024 || !d->w->cfg->coll) {
		sb_printf(&s->words, "; each stage's schedule is computed and published before "
				     "its circuits go");
		return;
	}
	for (uint32_t i = s->done; i < s->p.n; i++) {
		struct fabcfg *pub;
		struct ofc_error err = {0};
		struct planner_summary_ask q = {.plain = true};
		struct arena a = {0};
		Ofc__V1__Schedule *h;

		struct fabcfg *before = cfg_before(s, i, &err);

		if (!before) {
			sb_printf(&s->words, "; stage %u's schedule: none (%s)", i + 1, err.msg);
			continue;
		}
		staging_set(d, &s->p.v[i]);
		pub = failures_publish_on(d, before);
		fabcfg_unref(before);

		if (pub->no_schedule)
			sb_printf(&s->words, "; stage %u's schedule: none (%s)", i + 1,
				  pub->no_schedule);
		else if (!(h = planner_summary(d, pub, pub->coll, pub->size, &q, &a, &err)))
			sb_printf(&s->words, "; stage %u's schedule: none (%s)", i + 1, err.msg);
		else
			sb_printf(&s->words,
				  "; stage %u's schedule: %s %s, %u steps, %.6g us, verified",
				  i + 1, h->algorithm, h->collective, h->num_steps, h->time_us);
		arena_free(&a);
		fabcfg_unref(pub);
	}
	staging_clear(d);
}

/* ---- the stages ------------------------------------------------------------------------- */

static void refuse(struct ofcd *d, struct job *j, struct answer *an, const struct ofc_error *err)
{
	if (!answer_fenced(d, an, err))
		answer_status(an,
			      err->code == OFC_E_INPUT ? OFC__V1__STATUS__STATUS_INVALID
						       : OFC__V1__STATUS__STATUS_FAILED,
			      "%s", err->msg);
	an->t.state = "refused";
	j->outcome = "refused";
}

/* Stage i in words: its circuits, ports out of use and loss. */
static char *stage_words(const struct staged *s, uint32_t i)
{
	const struct stage *st = &s->p.v[i];

	if (st->leftover)
		return xasprintf("%s: stage %u of %u, the leftovers: %u cross-connect%s the "
				 "record's topology has not to remove, %u of its circuit%s to set "
				 "back, %u host port%s out of use (loss %.2f%%, taking no port in "
				 "use away)",
				 s->j->target, i + 1, s->p.n, st->removed,
				 st->removed == 1 ? "" : "s", st->moved, st->moved == 1 ? "" : "s",
				 st->ndark, st->ndark == 1 ? "" : "s", 100 * st->loss);
	return xasprintf("%s: stage %u of %u, %u circuit%s to move, %u host port%s out of use "
			 "(loss %.2f%%, at most %.4g%%)",
			 s->j->target, i + 1, s->p.n, st->moved, st->moved == 1 ? "" : "s",
			 st->ndark, st->ndark == 1 ? "" : "s", 100 * st->loss, s->j->max_loss);
}

/* Stage i: its schedule published (unless the stage before published it
 * with its commit), the grace, its circuits in one transaction, its
 * record; then the next stage's schedule published at once, or, after
 * the last (or a failure), the topology's own. The next stage's schedule
 * uses only circuits this stage's topology has, so it runs on it until
 * the next stage's circuits go: an intermediate topology's own schedule
 * (a whole plan of a graph with none of the target's symmetry, the
 * slowest step on a large fabric) is never needed, and running jobs
 * change schedules once a stage. -1: err and say why; the transaction
 * undid itself, the stages before stay. */
static int run_stage(struct staged *s, uint32_t i, struct strbuf *say, struct ofc_error *err)
{
	struct ofcd *d = s->d;
	struct job *j = s->j;
	const struct stage *st = &s->p.v[i];
	/* (the leftovers' stage re-aims the record's own topology) */
	char *spec = i + 1 == s->p.n ? xstrdup(j->spec)
		     : st->leftover  ? NULL
				     : topo_ports_spec(&st->after);
	char sentence[1000], *cause = stage_words(s, i), *next;
	uint32_t ops = 0;
	bool more;
	int rc;

	if (!s->next_out) {
		staging_set(d, st);
		ofcd_replan(d, j, cause, sentence, sizeof(sentence));
		ofcd_publish_now(d, j);
	}
	s->next_out = false;
	ofcd_log(d, OFCD_LOG_NOTICE,
		 "%s: its schedule published; waiting for the running jobs, %u ms at most", cause,
		 j->grace_ms);
	/* (every running job: a stage moves circuits anywhere) */
	struct strbuf jobs = STRBUF_INIT;
	ofcd_grace_wait(d, j->grace_ms, NULL, NULL, &jobs);
	ofcd_log(d, OFCD_LOG_NOTICE, "%s: %s", cause, jobs.buf);
	sb_free(&jobs);
	free(cause);
	rc = ofcd_apply_topology(d, spec, say, &ops, err);
	s->ops += ops;
	staging_clear(d);
	free(spec);
	if (rc == 0 && record_write(d, j, s->from, &s->p, i + 1, s->since, err) < 0) {
		/* committed; the record's topology still says where it is */
		ofcd_log_error(d, "the staged reconfiguration's record not written: ", err);
		ofc_error_clear(err);
	}
	more = rc == 0 && i + 1 < s->p.n;
	next = more ? stage_words(s, i + 1) : NULL;
	if (more)
		staging_set(d, &s->p.v[i + 1]);
	cause = rc == 0 ? xasprintf("%s: stage %u of %u committed (%s)%s%s", j->target, i + 1,
				    s->p.n, say->buf ? say->buf : "", more ? "; next, " : "",
				    more ? next + strlen(j->target) + 2 : "")
			: xasprintf("%s: stage %u of %u failed and was undone: %s%s", j->target,
				    i + 1, s->p.n, err->msg, say->buf ? say->buf : "");
	ofcd_replan(d, j, cause, sentence, sizeof(sentence));
	free(cause);
	free(next);
	if (more) {
		ofcd_publish_now(d, j);
		s->next_out = true;
	}
	return rc;
}

static void run_stages(struct staged *s)
{
	struct ofcd *d = s->d;
	struct job *j = s->j;
	struct answer *an = s->an;
	struct ofc_error err = {0};
	struct strbuf say = STRBUF_INIT;
	double t0 = now_seconds();

	if (s->p.n > s->done && record_write(d, j, s->from, &s->p, s->done, s->since, &err) < 0) {
		refuse(d, j, an, &err);
		return;
	}
	for (uint32_t i = s->done; i < s->p.n; i++) {
		sb_reset(&say);
		if (run_stage(s, i, &say, &err) < 0) {
			if (answer_fenced(d, an, &err)) {
				an->t.state = "stopped";
				j->outcome = "stopped";
				break;
			}
			answer_status(
			    an, OFC__V1__STATUS__STATUS_FAILED,
			    "stage %u of %u to %s failed: %s%s; the fabric is at stage %u "
			    "(its record says so), its circuits as that stage left them; "
			    "the same request resumes from there",
			    i + 1, s->p.n, j->target, err.msg, say.buf ? say.buf : "", i);
			an->t.state = "failed";
			j->outcome = "failed";
			break;
		}
		an->t.has_id = 1;
		an->t.id = j->txn = d->w->ctl->txn;
	}
	if (!an->t.state) {
		/* (a staged apply's record goes once its config is applied) */
		if (j->kind != JOB_APPLY_CONFIG && record_remove(d, &err) < 0) {
			ofcd_log_error(d,
				       "the staged reconfiguration's record not removed: ", &err);
			ofc_error_clear(&err);
		}
		answer_status(an, OFC__V1__STATUS__STATUS_OK,
			      "reconfigured to %s in stages%s, %u run here in %.3f s (%u device "
			      "operation%s): %s",
			      j->target, s->resumed ? " (resumed)" : "", s->p.n - s->done,
			      now_seconds() - t0, s->ops, s->ops == 1 ? "" : "s", s->words.buf);
		an->t.state = "committed";
		j->outcome = "committed";
	}
	an->t.has_operations = 1;
	an->t.operations = s->ops;
	sb_free(&say);
}

/* The plan made: a dry run's words, nothing to do, or the stages run. */
static void staged_answer(struct staged *s)
{
	struct ofcd *d = s->d;
	struct job *j = s->j;
	struct answer *an = s->an;
	struct ofc_error err = {0};

	stage_plan_text(&s->p, j->target, &s->words);
	held_words(d, &s->words);
	if (s->resumed)
		sb_printf(&s->words, "; resumed at stage %u (%u committed before)", s->done + 1,
			  s->done);
	if (j->dry_run) {
		an->t.has_operations = 1;
		for (uint32_t i = s->done; i < s->p.n; i++)
			an->t.operations += s->p.v[i].ops;
		dry_schedules(s);
		if (j->kind == JOB_APPLY_CONFIG)
			sb_printf(&s->words, "; then %s applied, its circuits its topology's",
				  j->filename);
		answer_status(an, OFC__V1__STATUS__STATUS_OK, "would reconfigure in %s",
			      s->words.buf);
		an->t.state = "planned";
		j->outcome = "planned";
	} else if (s->p.n == s->done) {
		answer_status(an, OFC__V1__STATUS__STATUS_OK,
			      "fabric '%s' is at %s already: nothing to stage", d->w->cfg->f->name,
			      j->target);
		an->t.state = "committed";
		j->outcome = "committed";
		if (s->resumed && j->kind != JOB_APPLY_CONFIG && record_remove(d, &err) < 0)
			ofcd_log_error(d,
				       "the staged reconfiguration's record not removed: ", &err);
	} else {
		run_stages(s);
	}
}

/* A staged ApplyConfig's last step, its stages committed: the config
 * applied as a plain ApplyConfig (its circuits are its topology's by
 * now), answered after the stages' words; the record goes once it
 * commits, so a failover before then applies it on resuming. */
static void apply_after(struct ofcd *d, struct job *j, const char *words)
{
	struct ofc_error err = {0};
	Ofc__V1__Response *r;

	free(j->reply);
	j->reply = NULL;
	j->staged = false;
	j->outcome = NULL;
	ofcd_run_mutation(d, j);
	j->staged = true;
	if (j->outcome && strcmp(j->outcome, "committed") == 0 && record_remove(d, &err) < 0)
		ofcd_log_error(d, "the staged reconfiguration's record not removed: ", &err);
	if (!(r = ofc__v1__response__unpack(NULL, j->reply_len, j->reply)))
		return;
	char *old = r->message, *msg = xasprintf("%s; then %s", words, old ? old : "");

	r->message = msg;
	free(j->reply);
	response_pack(r, &j->reply, &j->reply_len);
	r->message = old;
	free(msg);
	ofc__v1__response__free_unpacked(r, NULL);
}

void ofcd_run_staged(struct ofcd *d, struct job *j)
{
	struct answer an;
	struct ofc_error err = {0};
	struct staged s = {.d = d, .j = j, .an = &an};
	char *words = NULL;
	int rc = -1;

	answer_init(&an, j);
	if (d->w->damaged)
		ofc_error_set(&err, OFC_E_RUNTIME, "refused: %.400s; fix or remove it first",
			      d->w->damaged);
	else if ((rc = staged_target(&s, &err)) == 0) {
		an.t.target = j->target; /* (a phase's, resolved, names its topology) */
		rc = make_plan(&s, &err);
		if (rc == 0)
			add_leftovers(&s);
	}
	if (rc == -1) {
		refuse(d, j, &an, &err);
	} else if (rc == -2) { /* answered */
		an.t.state = "refused";
		j->outcome = "refused";
	} else {
		staged_answer(&s);
	}
	if (j->kind == JOB_APPLY_CONFIG && !j->dry_run && j->outcome &&
	    strcmp(j->outcome, "committed") == 0)
		words = xstrdup(an.r.message ? an.r.message : "");
	else
		response_pack(&an.r, &j->reply, &j->reply_len);
	arena_free(&an.a);
	if (words) {
		free(j->target);
		j->target = xstrdup(j->filename);
		apply_after(d, j, words);
	}
	free(words);
	if (!j->snap) {
		char why[400];

		j->snap = snapshot_build(d, d->state_dir, d->w->ctl, d->w->pub, why, sizeof(why));
		held_state(d, j->snap);
	}
	stage_plan_free(&s.p);
	free(s.from);
	sb_free(&s.words);
}
