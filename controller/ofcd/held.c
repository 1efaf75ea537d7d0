/* Partitions made at run time. An orchestrator (a Slurm job's
 * PrologSlurmctld, docs/slurm.md) asks for a topology on exactly the hosts
 * it allocated: Reconfigure {partition: NAME, topology, hosts, relabel}.
 * ofcd builds a `struct partition` of those hosts on the running config
 * (runtime: cross-connects joining them to hosts outside are taken down,
 * not refused), plans it as a config's partition is planned
 * (ctl_partition), checks that the plan touches no port another held
 * partition owns, and on commit holds it under NAME until ReleasePartition.
 * The hold is the whole of ofcd's part in "who owns which hosts": the
 * orchestrator allocates, ofcd refuses an overlap it is asked to make.
 *
 * Holds live in the store (STORE_HELD: STATE_DIR/FABRIC.held, or
 * PREFIX/FABRIC/held in etcd), an ofc.v1.HeldPartitions written with the
 * commit that takes or changes one (etcd: in the record's transaction, so
 * the record and the holds never disagree) and at every release or drop:
 * a restarted ofcd, and a new leader after a failover, hold what the last
 * one held and refuse the same overlaps; a follower shows them as its
 * watch delivers them, and its watchers hear of holds taken and let go
 * (held_adopt). A hold goes only by its owner's ReleasePartition or by a
 * drop that is logged and announced (KIND_PARTITION_DROPPED with the
 * reason): a config that no longer has its hosts, an entry of the store
 * that does not fit the config. The circuits stay as they are in any
 * case. The store's side is held_store.c. */
#include "controller/ofcd/worker.h"

#include <stdlib.h>
#include <string.h>

void held_partition_free(struct partition *p)
{
	for (uint32_t i = 0; i < p->nmembers; i++)
		free(p->members[i]);
	free(p->members);
	free(p->member_locs);
	free(p->member_host);
	free(p->member_port);
	free(p->name);
	free(p->topology.spec);
	memset(p, 0, sizeof(*p));
}

/* Another partition held under another name that has host `host`. */
static const struct held_part *held_owner(const struct ofcd *d, const char *name, const char *host)
{
	for (uint32_t i = 0; i < d->w->nheld; i++) {
		const struct partition *p = &d->w->held[i].p;

		if (strcmp(p->name, name) == 0)
			continue;
		for (uint32_t m = 0; m < p->nmembers; m++)
			if (strcmp(p->members[m], host) == 0)
				return &d->w->held[i];
	}
	return NULL;
}

/* The topology fits: one node per host, strongly connected, no host
 * needing more ports than it has. */
static int check_topology(const struct fabric *f, const struct partition *p, const struct graph *g,
			  struct ofc_error *err)
{
	struct topo_facts facts;

	if (g->n != p->nmembers)
		return ofc_error_set(err, OFC_E_INPUT,
				     "partition '%s': topology '%s' has %u nodes for %u hosts",
				     p->name, p->topology.spec, g->n, p->nmembers);
	for (uint32_t u = 0; u < g->n; u++) {
		const struct host *h = &f->hosts[p->member_host[u]];
		uint32_t deg = g->off[u + 1] - g->off[u];

		if (deg > h->ports)
			return ofc_error_set(err, OFC_E_INPUT,
					     "partition '%s': topology '%s' needs %u ports a host; "
					     "host %s has %u",
					     p->name, p->topology.spec, deg, h->name, h->ports);
	}
	topo_facts(g, &facts, 0);
	if (!facts.strongly_connected)
		return ofc_error_set(err, OFC_E_INPUT,
				     "partition '%s': topology '%s' is not strongly connected",
				     p->name, p->topology.spec);
	return 0;
}

/* (d: the holds to check; NULL: none) */
static int make(const struct ofcd *d, const struct topo_files *files, const struct fabric *f,
		const char *name, char *const *hosts, uint32_t nhosts, const char *spec,
		struct partition *out, struct ofc_error *err)
{
	struct partition *p = out;
	struct ofc_error sub = {0};
	struct graph *g = NULL;
	char why[1024];
	int rc = -1;

	memset(p, 0, sizeof(*p));
	if (fabric_find_partition(f, name))
		return ofc_error_set(err, OFC_E_INPUT,
				     "partition '%s' is one of the config's; a partition made of "
				     "hosts needs a name of its own",
				     name);
	if (nhosts < 1 || nhosts > HELD_MAX_HOSTS || nhosts > f->nhosts)
		return ofc_error_set(err, OFC_E_INPUT,
				     "partition '%s': %u hosts; the fabric has %u", name, nhosts,
				     f->nhosts);
	p->name = xstrdup(name);
	p->runtime = true;
	p->nmembers = nhosts;
	p->members = xcalloc(nhosts + 1, sizeof(char *));
	p->member_locs = xcalloc(nhosts, sizeof(*p->member_locs));
	p->member_host = xcalloc(nhosts, sizeof(uint32_t));
	p->member_port = xcalloc(nhosts, sizeof(uint32_t));
	uint8_t *seen = xcalloc(f->nhosts, 1);
	for (uint32_t m = 0; m < nhosts; m++) {
		int h = fabric_find_host(f, hosts[m]);
		const struct held_part *o;

		p->members[m] = xstrdup(hosts[m]);
		p->member_port[m] = UINT32_MAX;
		if (h < 0) {
			ofc_error_set(err, OFC_E_INPUT,
				      "partition '%s': fabric '%s' has no host '%.64s'", name,
				      f->name, hosts[m]);
			goto out;
		}
		if (seen[h]) {
			ofc_error_set(err, OFC_E_INPUT, "partition '%s': host %s is named twice",
				      name, hosts[m]);
			goto out;
		}
		seen[h] = 1;
		p->member_host[m] = (uint32_t)h;
		if (d && (o = held_owner(d, name, hosts[m]))) {
			/* Not final: the other owner may let go (a late epilog). */
			ofc_error_set(err, OFC_E_RUNTIME,
				      "partition '%s': host %s is held by partition '%s'", name,
				      hosts[m], o->p.name);
			goto out;
		}
	}
	/* A client's spec reads files under --topology-dir alone; a file is
	 * then named by its absolute path, as a Reconfigure's is. */
	if (topo_build_in(spec, files, &g, &sub) < 0) {
		ofc_error_set(err, sub.code == OFC_E_RUNTIME ? OFC_E_RUNTIME : OFC_E_INPUT,
			      "partition '%s': topology %s", name,
			      topo_spec_error(why, sizeof(why), spec, &sub));
		goto out;
	}
	p->topology.present = true;
	p->topology.self_loops = f->topology.present ? f->topology.self_loops : SELF_LOOPS_LOOPBACK;
	p->topology.spec = xstrdup(files->dirfd >= 0 && strstr(spec, "edges:") ? g->spec : spec);
	if (check_topology(f, p, g, err) < 0)
		goto out;
	/* Every circuit on one switch: the wiring allows it. */
	struct circuit *pc;
	uint32_t npc;
	if (partition_circuits(f, p, &pc, &npc, err) < 0)
		goto out;
	free(pc);
	rc = 0;
out:
	graph_free(g);
	free(seen);
	if (rc < 0)
		held_partition_free(p);
	return rc;
}

int held_make(const struct ofcd *d, const struct fabric *f, const char *name, char *const *hosts,
	      uint32_t nhosts, const char *spec, struct partition *out, struct ofc_error *err)
{
	return make(d, &d->files, f, name, hosts, nhosts, spec, out, err);
}

int held_make_in(const struct topo_files *files, const struct fabric *f, const char *name,
		 char *const *hosts, uint32_t nhosts, const char *spec, struct partition *out,
		 struct ofc_error *err)
{
	return make(NULL, files, f, name, hosts, nhosts, spec, out, err);
}

int held_check_plan(const struct ofcd *d, const struct ctl *c, const char *name,
		    struct ofc_error *err)
{
	return held_check_plan_many(d, c, &name, 1, err);
}

int held_check_plan_many(const struct ofcd *d, const struct ctl *c, const char *const *names,
			 uint32_t n, struct ofc_error *err)
{
	const struct fabric *f = c->fabric;
	uint32_t *host_of = xmalloc(((size_t)f->nhosts + 1) * sizeof(*host_of));
	uint32_t first = UINT32_MAX, at_dev = 0, at_op = 0;
	bool any = false;

	for (uint32_t h = 0; h < f->nhosts; h++)
		host_of[h] = UINT32_MAX;
	for (uint32_t i = 0; i < d->w->nheld; i++) {
		const struct partition *hp = &d->w->held[i].p;
		bool mine = false;

		for (uint32_t k = 0; k < n && !mine; k++)
			mine = strcmp(hp->name, names[k]) == 0;
		/* (its members on the config that runs now) */
		for (uint32_t m = 0; !mine && m < hp->nmembers; m++) {
			int h = fabric_find_host(f, hp->members[m]);

			if (h >= 0) {
				host_of[h] = i;
				any = true;
			}
		}
	}
	/* The first held partition (in order) the plan touches, at its first
	 * operation: the one named, as when each was looked at in turn. */
	for (uint32_t k = 0; any && k < c->ndevs; k++) {
		const struct ctl_device *cd = &c->devs[k];
		int s = cd->cfg.cls == DEV_SWITCH ? fabric_find_switch(f, cd->cfg.name) : -1;

		if (s < 0 || !cd->plan.n)
			continue;
		uint32_t *owner = fabric_port_owners(f, (uint32_t)s, host_of),
			 ports = f->switches[s].ports;
		for (uint32_t o = 0; o < cd->plan.n; o++) {
			const struct op *op = &cd->plan.ops[o];
			uint32_t a = op->xc.in <= ports ? owner[op->xc.in] : UINT32_MAX;
			uint32_t b = op->xc.out <= ports ? owner[op->xc.out] : UINT32_MAX;
			uint32_t i = a < b ? a : b;

			if ((op->kind != OP_DISCONNECT && op->kind != OP_CONNECT) || i >= first)
				continue;
			first = i;
			at_dev = k;
			at_op = o;
		}
		free(owner);
	}
	free(host_of);
	if (first == UINT32_MAX)
		return 0;
	const struct op *op = &c->devs[at_dev].plan.ops[at_op];
	return ofc_error_set(err, OFC_E_RUNTIME,
			     "switch %s: the plan would change cross-connect %u -> %u of partition "
			     "'%s', held for its owner; refused (it is released with "
			     "ReleasePartition)",
			     c->devs[at_dev].cfg.name, op->xc.in, op->xc.out,
			     d->w->held[first].p.name);
}

bool held_may(const struct ofcd *d, const struct job *j, char *why, size_t n)
{
	if (!j->tenant || !j->partition)
		return true;
	for (uint32_t i = 0; i < d->w->nheld; i++) {
		const struct held_part *h = &d->w->held[i];

		if (strcmp(h->p.name, j->partition) != 0)
			continue;
		if (h->owner && j->principal && strcmp(h->owner, j->principal) == 0)
			return true;
		/* (the words authz uses: no owner named to another tenant) */
		snprintf(why, n,
			 "permission denied: partition %.64s belongs to another tenant (held for "
			 "the principal that made it)",
			 j->partition);
		return false;
	}
	return true;
}

/* protobuf-c's allocations in a snapshot's arena, freed with it */
static void *in_arena(void *a, size_t n)
{
	return arena_alloc(a, n ? n : 1);
}

static void arena_keeps(void *a, void *p)
{
	(void)a;
	(void)p;
}

void held_scheds_free(struct held_scheds *c)
{
	for (uint32_t k = 0; k < c->n; k++) {
		free(c->spec[k]);
		free(c->buf[k]);
	}
	fabcfg_unref(c->cfg);
	memset(c, 0, sizeof(*c));
}

static int sched_find(const struct held_scheds *c, const char *spec)
{
	for (uint32_t k = 0; spec && k < c->n; k++)
		if (strcmp(c->spec[k], spec) == 0)
			return (int)k;
	return -1;
}

/* The schedules kept for s's config into s's held partitions (before the
 * holds' view computes the others). */
static void sched_fill(struct held_scheds *c, struct snapshot *s)
{
	ProtobufCAllocator in = {in_arena, arena_keeps, &s->a};
	Ofc__V1__State *st = s->state;

	if (c->cfg != s->cfg) {
		held_scheds_free(c);
		c->cfg = fabcfg_ref(s->cfg);
	}
	for (size_t i = 0; i < st->n_held; i++) {
		int k = sched_find(c, st->held[i]->topology);

		if (k >= 0)
			st->held[i]->schedule =
			    ofc__v1__schedule__unpack(&in, c->len[k], c->buf[k]);
	}
}

/* ... and those the view computed, kept (while there is room). */
static void sched_keep(struct held_scheds *c, const struct snapshot *s)
{
	const Ofc__V1__State *st = s->state;

	for (size_t i = 0; i < st->n_held && c->n < HELD_SCHEDS_MAX; i++) {
		const Ofc__V1__HeldPartition *m = st->held[i];

		if (!m->schedule || !m->topology || sched_find(c, m->topology) >= 0)
			continue;
		c->len[c->n] = ofc__v1__schedule__get_packed_size(m->schedule);
		c->buf[c->n] = xmalloc(c->len[c->n] + 1);
		ofc__v1__schedule__pack(m->schedule, c->buf[c->n]);
		c->spec[c->n++] = xstrdup(m->topology);
	}
}

/* State.drained: the worker's drained switch ports, each with the host
 * port cabled to it. */
static void drained_state(const struct ofcd *d, struct snapshot *s)
{
	if (!s || !d->w->ndrained)
		return;
	Ofc__V1__State *st = s->state;
	const struct fabric *f = d->w->cfg->f;
	char hp[NAME_MAX_LEN + 16];

	st->drained = arena_array(&s->a, d->w->ndrained, sizeof(*st->drained));
	st->n_drained = d->w->ndrained;
	for (uint32_t i = 0; i < d->w->ndrained; i++) {
		const struct drain_entry *e = &d->w->drained[i];
		Ofc__V1__DrainedPort *m = arena_alloc(&s->a, sizeof(*m));

		ofc__v1__drained_port__init(m);
		m->switch_name = arena_strdup(&s->a, e->sw);
		m->has_port = m->has_since_unix_ms = 1;
		m->port = e->port;
		m->since_unix_ms = e->since_ms;
		m->by = arena_strdup(&s->a, e->by);
		int sw = fabric_find_switch(f, e->sw);

		for (uint32_t k = 0; sw >= 0 && k < f->nwiring; k++)
			if ((int)f->wiring[k].sw == sw && f->wiring[k].sw_port == e->port) {
				snprintf(hp, sizeof(hp), "%s:%u", f->hosts[f->wiring[k].host].name,
					 f->wiring[k].host_port);
				m->host_port = arena_strdup(&s->a, hp);
			}
		st->drained[i] = m;
	}
}

void held_state(struct ofcd *d, struct snapshot *s)
{
	drained_state(d, s);
	if (s && !d->w->nheld)
		held_view(d, s); /* (at_target explained) */
	if (!s || !d->w->nheld)
		return;
	Ofc__V1__State *st = s->state;
	st->held = arena_array(&s->a, d->w->nheld, sizeof(*st->held));
	st->n_held = d->w->nheld;
	for (uint32_t i = 0; i < d->w->nheld; i++) {
		const struct held_part *h = &d->w->held[i];
		Ofc__V1__HeldPartition *m = arena_alloc(&s->a, sizeof(*m));

		ofc__v1__held_partition__init(m);
		m->name = arena_strdup(&s->a, h->p.name);
		m->topology = arena_strdup(&s->a, h->p.topology.spec);
		m->has_transaction = m->has_operations = 1;
		m->transaction = h->txn;
		m->operations = h->ops;
		m->owner = h->owner ? arena_strdup(&s->a, h->owner) : NULL;
		m->has_since_unix_ms = h->since_ms != 0;
		m->since_unix_ms = h->since_ms;
		m->n_hosts = h->p.nmembers;
		m->hosts = arena_array(&s->a, h->p.nmembers, sizeof(char *));
		for (uint32_t k = 0; k < h->p.nmembers; k++)
			m->hosts[k] = arena_strdup(&s->a, h->p.members[k]);
		st->held[i] = m;
	}
	/* what every replica shows alike (views.c): each partition's
	 * schedule computed once a spec and config */
	if (d->w->ctl && s->ndevs == d->w->ctl->ndevs) /* (as held_view computes them) */
		sched_fill(&d->w->hsched, s);
	held_view(d, s);
	sched_keep(&d->w->hsched, s);
}
