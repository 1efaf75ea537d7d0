/* Snapshots: the last committed state of the fabric as the ofc.v1.State
 * ofcd answers GetState with. Built from the record on disk (what the last
 * transaction left on the devices) and the running config (names, wiring,
 * targets), once per change, so a read costs a pack and nothing else. */
#include "controller/export/export.h"
#include "controller/ofcd/internal.h"
#include "controller/testbed/testbed.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- shared configs ----------------------------------------------------------- */

void strv_free(char **v, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

struct fabcfg *fabcfg_new(struct fabric *f, const char *yaml, size_t len, const char *path,
			  const struct ofcd_opts *o)
{
	struct fabcfg *c = xcalloc(1, sizeof(*c));

	if (f->lp_solver == LP_SOLVER_DEFAULT && o)
		f->lp_solver = o->lp_solver;
	c->max_memory = o ? o->max_request_memory : 0;
	atomic_init(&c->refs, 1);
	pthread_mutex_init(&c->ring_mu, NULL);
	c->f = f;
	c->yaml = xmalloc(len + 1);
	memcpy(c->yaml, yaml, len);
	c->yaml[len] = 0;
	c->yaml_len = len;
	c->path = xstrdup(path);
	/* The workload to show: the config's first collective other than
	 * all-to-all, else its all-to-all (the MCF: costly, computed once per
	 * config and its solution kept for re-planning). */
	for (uint32_t i = 0; i < f->ncollectives && !c->coll; i++)
		if (f->collectives[i].op != SCHED_ALLTOALL) {
			c->coll = f->collectives[i].op;
			c->size = f->collectives[i].size;
		}
	for (uint32_t i = 0; i < f->ncollectives && !c->coll && !f->nrings; i++)
		if (f->collectives[i].op == SCHED_ALLTOALL) {
			c->coll = f->collectives[i].op;
			c->size = f->collectives[i].size;
		}
	return c;
}

struct fabcfg *fabcfg_ref(struct fabcfg *c)
{
	atomic_fetch_add(&c->refs, 1);
	return c;
}

void fabcfg_unref(struct fabcfg *c)
{
	if (!c || atomic_fetch_sub(&c->refs, 1) != 1)
		return;
	fabric_free(c->f);
	strv_free(c->failed, c->nfailed);
	strv_free(c->failed_by_host, c->nfailed_by_host);
	free(c->no_schedule);
	free(c->plan);
	free(c->plan_full);
	free(c->plan_full_why);
	free(c->ring_plan);
	free(c->ring_why);
	pthread_mutex_destroy(&c->ring_mu);
	free(c->kept.buf);
	fabcfg_unref(c->healthy);
	free(c->yaml);
	free(c->path);
	free(c);
}

const char *workload_lowering(const struct fabric *f, const char *spec, enum sched_collective coll)
{
	struct schedule_query q = {.fabric = f, .spec = spec, .collective = coll};

	return coll == SCHED_ALLTOALL && schedule_algorithm_lowers(schedule_pick_algorithm(&q))
		   ? "paths"
		   : NULL;
}

/* ---- devices ---------------------------------------------------------------------- */

const char *ofcd_public_reason(enum ofc_reason r)
{
	return r == OFC_R_NONE ? "error" : ofc_reason_name(r);
}

static const struct device_state *recorded(const struct ctl_record *r, const char *name)
{
	for (uint32_t i = 0; i < r->ndevs; i++)
		if (strcmp(r->dev_names[i], name) == 0)
			return &r->dev_states[i];
	return NULL;
}

/* Each device of c as recorded (rec), with what the last read said of it;
 * true when every one's record is at the fabric's target. */
static bool snapshot_devices(struct snapshot *s, const struct ctl *c, const struct fabric *f,
			     const struct ctl_record *rec)
{
	struct arena *a = &s->a;
	Ofc__V1__State *st = s->state;
	bool all_at_target = true;

	s->ndevs = c->ndevs;
	s->devs = st->devices = arena_array(a, c->ndevs, sizeof(*st->devices));
	s->public_error = arena_array(a, c->ndevs + 1, sizeof(*s->public_error));
	st->n_devices = c->ndevs;
	for (uint32_t i = 0; i < c->ndevs; i++) {
		const struct ctl_device *cd = &c->devs[i];
		const struct device_state *r = recorded(rec, cd->cfg.name);
		Ofc__V1__DeviceState *m = device_state_msg(a, f, &cd->cfg, r);

		if (cd->read_ok || cd->lost) {
			m->has_reachable = 1;
			m->reachable = !cd->lost;
			if (cd->lost) {
				m->error = arena_strdup(a, cd->read_err.msg);
				s->public_error[i] = ofcd_public_reason(cd->read_err.reason);
			} else {
				device_alarms_msg(a, f, &cd->dev, m);
			}
		}
		/* Against the fabric's target as the config and the record
		 * make it, never cd->target: a partition's aim leaves its own
		 * there on the replica that ran it alone, and the replicas
		 * disagreed (views.c judges the held partitions' ports). */
		struct device_state want;
		ctl_fabric_target(c, i, &want);
		m->has_at_target = 1;
		m->at_target = r && state_equal(r, &want);
		state_free(&want);
		all_at_target &= m->at_target;
		st->devices[i] = m;
	}
	return all_at_target;
}

/* ---- building ------------------------------------------------------------------------ */

/* Each snapshot's serial: what the state's deltas compare (state_delta.c),
 * as an address freed may be a later snapshot's. */
static _Atomic uint64_t serials;

/* cfg's ring schedule asked of a planner the first time a snapshot of cfg
 * wants it (cfg->ring_*): once, so a planner that dies twice (its retry
 * too) is not started again for every snapshot; a new config asks anew. */
static void ring_schedule(const struct ofcd *d, struct fabcfg *cfg)
{
	pthread_mutex_lock(&cfg->ring_mu);
	if (!cfg->ring_asked) {
		struct planner_summary_ask q = {.reduce = SCHEDULE_REDUCED_NEVER};
		struct ofc_error err = {0};
		struct arena a = {0};
		Ofc__V1__Schedule *h = planner_summary(d, cfg, cfg->coll, cfg->size, &q, &a, &err);

		if (h) {
			cfg->ring_plan_len = protobuf_c_message_get_packed_size(&h->base);
			cfg->ring_plan = xmalloc(cfg->ring_plan_len + 1);
			protobuf_c_message_pack(&h->base, cfg->ring_plan);
		} else {
			cfg->ring_why = xstrdup(err.msg);
		}
		arena_free(&a);
		cfg->ring_asked = true;
	}
	pthread_mutex_unlock(&cfg->ring_mu);
}

/* What the record says of the last commit: when, of what config (a
 * partition's), by which replica and principal, under which epoch. */
static void committed_fields(struct arena *a, Ofc__V1__State *st, const struct ctl_record *rec)
{
	st->has_committed_unix_ms = 1;
	st->committed_unix_ms = rec->time_unix_ms;
	st->recorded_config = arena_strdup(a, rec->config);
	if (rec->partition)
		st->partition = arena_strdup(a, rec->partition);
	if (rec->replica)
		st->committed_by = arena_strdup(a, rec->replica);
	if (rec->principal)
		st->committed_principal = arena_strdup(a, rec->principal);
	st->has_committed_epoch = rec->epoch != 0;
	st->committed_epoch = rec->epoch;
}

/* A journal left by a transaction that did not finish: its id and phase,
 * and who wrote it (the daemon holds the lock: its writer is gone). */
static Ofc__V1__TransactionInfo *unfinished_msg(struct arena *a, const struct ctl_record *rec)
{
	Ofc__V1__TransactionInfo *t = arena_alloc(a, sizeof(*t));

	ofc__v1__transaction_info__init(t);
	t->has_id = 1;
	t->id = rec->journal_id;
	t->state = arena_printf(a, "unfinished (%s)", rec->journal_phase);
	t->has_running = 1;
	if (rec->journal_pid) {
		t->has_peer_pid = 1;
		t->peer_pid = rec->journal_pid;
	}
	if (rec->journal_replica)
		t->replica = arena_strdup(a, rec->journal_replica);
	if (rec->journal_principal)
		t->principal = arena_strdup(a, rec->journal_principal);
	t->has_epoch = rec->journal_epoch != 0;
	t->epoch = rec->journal_epoch;
	return t;
}

struct snapshot *snapshot_build(const struct ofcd *d, const char *state_dir, struct ctl *c,
				struct fabcfg *cfg, char *why, size_t why_len)
{
	struct snapshot *s = xcalloc(1, sizeof(*s));
	struct arena *a = &s->a;
	const struct fabric *f = cfg->f;
	struct ctl_record rec;
	struct ofc_error err = {0};
	Ofc__V1__State *st;
	bool all_at_target;

	why[0] = 0;
	s->serial = atomic_fetch_add(&serials, 1) + 1;
	s->cfg = fabcfg_ref(cfg);
	st = s->state = arena_alloc(a, sizeof(*st));
	ofc__v1__state__init(st);
	if (ctl_load_record_for(c, &rec, &err) < 0) {
		char buf[sizeof(err.file) + sizeof(err.msg) + 32];

		snprintf(why, why_len, "cannot read the record: %s",
			 ofc_error_str(&err, buf, sizeof(buf)));
		memset(&rec, 0, sizeof(rec));
	}
	st->fabric_name = f->name;
	st->config_file = arena_strdup(a, cfg->path);
	if (f->topology.present)
		st->target_topology = f->topology.spec;
	st->has_config_generation = 1;
	st->config_generation = rec.have_state ? rec.generation : 0;
	if (rec.have_state)
		committed_fields(a, st, &rec);
	/* What `ofc status FILE` says too (one shape: docs/json.md). */
	st->state_dir = arena_strdup(a, state_dir);
	st->has_state_dir_exists = st->has_testbed_up = 1;
	st->state_dir_exists = true; /* the daemon made it, or would not run */
	st->testbed_up = testbed_is_up(state_dir, f->name);
	st->has_daemon_pid = 1;
	st->daemon_pid = (uint64_t)getpid();

	all_at_target = snapshot_devices(s, c, f, &rec);
	st->has_at_target = 1;
	st->at_target = rec.have_state && all_at_target;

	/* The fabric's committed topology: the config's graph when it is
	 * the one recorded, else built from the record's spec. A partition's
	 * commit leaves it (each held partition shows its own); a record of an
	 * older ofc's that does not say is taken to hold the config's. */
	const struct graph *g = NULL;
	const struct port_map *pm = NULL;
	struct topo_facts facts;
	bool own = false;
	if (rec.have_state) {
		const char *spec = rec.fabric_topology	 ? rec.fabric_topology
				   : f->topology.present ? f->topology.spec
							 : NULL;

		recorded_topology(f, spec, &g, &facts, &pm, &s->graph, &s->ports);
		own = s->graph != NULL;
	}
	if (g) {
		s->topo = topology_msg(a, g, &facts, pm, false);
		s->topo_edges = topology_msg(a, g, &facts, pm, true);
	}

	/* The workload's schedule on it, verified and priced (figures only): on
	 * a WDM ring, the config's allgather by OpTree, computed in a planner
	 * process (small: a ring is tens of nodes), so the snapshot has it. */
	if (f->nrings && cfg->coll == SCHED_ALLGATHER) {
		ring_schedule(d, cfg);
		if (cfg->ring_plan) {
			s->plan =
			    ofc__v1__schedule__unpack(NULL, cfg->ring_plan_len, cfg->ring_plan);
			st->schedule = s->plan;
		}
		if (!st->schedule)
			snprintf(why, why_len, "no OpTree schedule: %s",
				 cfg->ring_why ? cfg->ring_why : "its packed form does not decode");
	} else if (g && cfg->coll && !f->nrings && !own && cfg->plan) {
		/* Computed and verified by a re-plan that published cfg (the
		 * same workload on the same graph). */
		s->plan = ofc__v1__schedule__unpack(NULL, cfg->plan_len, cfg->plan);
		st->schedule = s->plan;
	} else if (g && cfg->coll && !f->nrings && !cfg->no_schedule &&
		   !(cfg->coll == SCHED_ALLTOALL && !own)) {
		/* (An all-to-all on the config's graph is the planner's: planner.c,
		 * off the start path; State.schedule waits for it.) Any other is
		 * the state schedule keeper's (state_schedule.c), off the
		 * commit's path: BFB's allreduce is 134 M transfers at 8,192
		 * hosts, 21 s and 4 GB here before the commit's answer. */
		s->sched_want = true;
		s->sched_spec = own ? arena_strdup(a, g->spec) : NULL;
	}
	/* Failures reported at run time and lost switches (failures.c). */
	st->n_failed = cfg->nfailed;
	st->failed = cfg->failed;
	st->n_failed_by_host = cfg->nfailed_by_host;
	st->failed_by_host = cfg->failed_by_host;
	st->schedule_error = cfg->no_schedule;
	/* Ports re-wired onto spares (mutation.c rewire), part of the config. */
	if (f->nmoves) {
		st->moved = arena_array(a, f->nmoves, sizeof(*st->moved));
		for (uint32_t i = 0; i < f->nmoves; i++)
			st->moved[st->n_moved++] =
			    arena_printf(a, "%s:%u>%s:%u", f->moves[i].host, f->moves[i].from,
					 f->moves[i].host, f->moves[i].to);
	}
	s->fabric = fabric_msg(a, f);
	/* The same messages, less what only the config's full form needs:
	 * it shares s->fabric's parts (its drivers' credentials are swapped
	 * out for read-only askers on either). */
	s->fabric_brief = arena_alloc(a, sizeof(*s->fabric_brief));
	*s->fabric_brief = *s->fabric;
	s->fabric_brief->n_wiring = s->fabric_brief->n_circuits = 0;
	s->fabric_brief->wiring = NULL;
	s->fabric_brief->circuits = NULL;
	s->fabric_brief->logical = NULL;
	if (rec.have_journal)
		s->unfinished = unfinished_msg(a, &rec);
	ctl_record_free(&rec);
	return s;
}

void snapshot_free(struct snapshot *s)
{
	if (!s)
		return;
	arena_free(&s->a);
	graph_free(s->graph);
	port_map_free(&s->ports);
	if (s->plan)
		ofc__v1__schedule__free_unpacked(s->plan, NULL);
	fabcfg_unref(s->cfg);
	free(s);
}
