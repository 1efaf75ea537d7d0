/* What every replica shows alike, from the store's state alone: the
 * fabric's at_target judged outside the held partitions' ports, each held
 * partition's own at_target and schedule, and which replica ran a
 * transaction.
 *
 * Why from the store alone: the replica that ran a partition's commit kept
 * that partition's aim as its ctl's target (ctl_partition), so it said "at
 * target" where the followers, building the config's target from the same
 * record, said "NOT at target"; and a partition's topology, recorded as the
 * last commit's, was shown as the fabric's. Now the fabric's target is the
 * config's circuits on the fabric's committed topology (ctl_fabric_target,
 * snapshot.c), every port of a held partition is left to that partition,
 * and a held partition is at its target when the record's cross-connects
 * on its ports stay among its hosts and form its topology, up to the
 * numbering of its nodes (a Slurm job's is relabelled for fewest moves,
 * and the numbering chosen is not kept): an isomorphism test on the
 * recorded circuits, by nauty's canonical forms. That isomorphism is the
 * numbering the state shows: State.held[].hosts in the order the
 * topology's nodes take them on those circuits (the record's order where
 * it is one), so that a schedule on the topology (GetSchedule partition,
 * which names them) sends each transfer over a circuit the switches hold. */
#include "controller/ofcd/worker.h"

#include <stdlib.h>
#include <string.h>

/* A partition's own schedule is looked for this long at most; the
 * isomorphism test of its circuits too. (A Slurm job's few dozen hosts
 * take milliseconds.) */
#define VIEW_SECONDS 1.0

static const struct device_state *recorded(const struct ctl_record *r, const char *name)
{
	for (uint32_t i = 0; i < r->ndevs; i++)
		if (strcmp(r->dev_names[i], name) == 0)
			return &r->dev_states[i];
	return NULL;
}

/* The held partition m as a struct partition on f (whole hosts; strings
 * borrowed from m; a host f does not have any more is left out). */
static void part_of(const struct fabric *f, const Ofc__V1__HeldPartition *m, struct partition *p)
{
	memset(p, 0, sizeof(*p));
	p->name = m->name;
	p->runtime = true;
	p->members = m->hosts;
	p->member_host = xcalloc(m->n_hosts + 1, sizeof(uint32_t));
	p->member_port = xcalloc(m->n_hosts + 1, sizeof(uint32_t));
	for (size_t k = 0; k < m->n_hosts; k++) {
		int h = fabric_find_host(f, m->hosts[k]);

		if (h < 0)
			continue;
		p->member_host[p->nmembers] = (uint32_t)h;
		p->member_port[p->nmembers++] = UINT32_MAX;
	}
}

/* The switch's cross-connects that touch no port flagged in skip (ports
 * past the switch's count are kept: they are compared as they are). */
static void outside(const struct device_state *s, const uint8_t *skip, uint32_t ports,
		    struct device_state *out)
{
	state_init(out, DEV_SWITCH);
	for (uint32_t k = 0; k < s->nxc; k++) {
		struct xconn x = s->xc[k];

		if ((x.in <= ports && skip[x.in]) || (x.out <= ports && skip[x.out]))
			continue;
		state_add_xconn(out, x.in, x.out);
	}
	state_sort(out);
}

/* Device i's record equals the fabric's target but on the ports in skip
 * (a switch's; NULL: compare everything). */
static bool device_at_target(const struct ctl *c, uint32_t i, const struct device_state *rec,
			     const uint8_t *skip)
{
	struct device_state want, a, b;
	bool eq;

	if (!rec)
		return false;
	ctl_fabric_target(c, i, &want);
	if (!skip) {
		eq = state_equal(rec, &want);
		state_free(&want);
		return eq;
	}
	outside(rec, skip, c->devs[i].cfg.ports, &a);
	outside(&want, skip, c->devs[i].cfg.ports, &b);
	eq = state_equal(&a, &b);
	state_free(&a);
	state_free(&b);
	state_free(&want);
	return eq;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* Whether member u plays node u of g on pg's arcs: every node's heads
 * alike, as multisets. */
static bool identity_fits(const struct graph *pg, const struct graph *g)
{
	bool fits = pg->n == g->n && pg->m == g->m;
	uint32_t *x = xmalloc(((size_t)g->m + 1) * sizeof(*x));
	uint32_t *y = xmalloc(((size_t)g->m + 1) * sizeof(*y));

	for (uint32_t u = 0; fits && u < g->n; u++) {
		uint32_t n = graph_outdeg(g, u);

		fits = graph_outdeg(pg, u) == n;
		if (!fits)
			break;
		memcpy(x, graph_out(g, u), n * sizeof(*x));
		memcpy(y, graph_out(pg, u), n * sizeof(*y));
		qsort(x, n, sizeof(*x), cmp_u32);
		qsort(y, n, sizeof(*y), cmp_u32);
		fits = memcmp(x, y, n * sizeof(*x)) == 0;
	}
	free(x);
	free(y);
	return fits;
}

/* The record's circuits on p's ports stay among p's hosts and form
 * topology g (p's members as its nodes, in any numbering); node[u]: the
 * node member u plays then (u itself where the members' order fits). */
static bool part_at_target(const struct ctl *c, const struct partition *p, uint32_t me,
			   uint32_t *const *owner, const struct graph *g,
			   const struct ctl_record *rec, uint32_t *node)
{
	const struct fabric *f = c->fabric;
	struct device_state *in = xcalloc((size_t)f->nswitches + 1, sizeof(*in));
	const struct device_state **act = xcalloc((size_t)f->nswitches + 1, sizeof(*act));
	bool ok = p->nmembers == g->n;

	for (uint32_t i = 0; i < c->ndevs && ok; i++) {
		const struct ctl_device *cd = &c->devs[i];
		int sw = cd->cfg.cls == DEV_SWITCH ? fabric_find_switch(f, cd->cfg.name) : -1;
		const struct device_state *r = recorded(rec, cd->cfg.name);

		if (sw < 0 || !r)
			continue;
		const uint32_t *mine = owner[sw];
		uint32_t ports = f->switches[sw].ports;

		state_init(&in[sw], DEV_SWITCH);
		for (uint32_t k = 0; k < r->nxc && ok; k++) {
			struct xconn x = r->xc[k];
			bool a = x.in <= ports && mine[x.in] == me,
			     b = x.out <= ports && mine[x.out] == me;

			ok = a == b; /* none joins one of its ports to one outside */
			if (a && b)
				state_add_xconn(&in[sw], x.in, x.out);
		}
		act[sw] = &in[sw];
	}
	if (ok) {
		/* the host-level graph of those circuits, over p's members */
		struct graph *all = fabric_current_graph(f, act);
		uint32_t *idx = xmalloc(((size_t)f->nhosts + 1) * sizeof(*idx));
		uint32_t *tails = graph_arc_tails(all);
		uint32_t *t = xmalloc(((size_t)all->m + 1) * sizeof(*t));
		uint32_t *h = xmalloc(((size_t)all->m + 1) * sizeof(*h));
		uint32_t m = 0;

		for (uint32_t u = 0; u < f->nhosts; u++)
			idx[u] = UINT32_MAX;
		for (uint32_t k = 0; k < p->nmembers; k++)
			idx[p->member_host[k]] = k;
		for (uint32_t a = 0; a < all->m; a++)
			if (idx[tails[a]] != UINT32_MAX && idx[all->adj[a]] != UINT32_MAX) {
				t[m] = idx[tails[a]];
				h[m++] = idx[all->adj[a]];
			}
		struct graph *pg = graph_from_arcs(p->nmembers, m, t, h, "recorded");
		uint32_t *map = xcalloc((size_t)g->n + 1, sizeof(*map));

		if (identity_fits(pg, g)) {
			for (uint32_t u = 0; u < g->n; u++)
				map[u] = u;
		} else {
			ok = graph_isomorphism(pg, g, now_seconds() + VIEW_SECONDS, map);
		}
		if (ok)
			memcpy(node, map, (size_t)g->n * sizeof(*map));
		free(map);
		graph_free(pg);
		free(t);
		free(h);
		free(tails);
		free(idx);
		graph_free(all);
	}
	for (uint32_t s = 0; s < f->nswitches; s++)
		state_free(&in[s]);
	free(in);
	free(act);
	return ok;
}

/* m's hosts in its nodes' order: member u plays node[u] (a permutation). */
static void in_node_order(struct snapshot *s, Ofc__V1__HeldPartition *m, const uint32_t *node)
{
	char **by_node = arena_array(&s->a, m->n_hosts, sizeof(char *));

	for (size_t u = 0; u < m->n_hosts; u++)
		by_node[node[u]] = m->hosts[u];
	m->hosts = by_node;
}

/* The workload's schedule on a held partition's topology (figures only),
 * as State.schedule is the fabric's: none for an all-to-all (its MCF is
 * the planner's, too costly for every snapshot) or when none is found. */
static Ofc__V1__Schedule *part_schedule(const struct ofcd *d, struct snapshot *s, const char *spec)
{
	const struct fabcfg *cfg = s->cfg;
	/* Symmetry-reduced where the topology admits it (a Slurm job's torus
	 * or circulant: node 0's program, milliseconds where the explicit
	 * one of 256 hosts took a good part of the second, at every commit
	 * for every held partition), else explicit; in a planner process. */
	struct planner_summary_ask q = {.spec = spec,
					.max_time = VIEW_SECONDS,
					.reduce = SCHEDULE_REDUCED_ALWAYS,
					.explicit_after = true};
	struct ofc_error err = {0};

	if (!cfg->coll || cfg->coll == SCHED_ALLTOALL || cfg->f->nrings || !spec || !*spec)
		return NULL;
	return planner_summary(d, cfg, cfg->coll, cfg->size, &q, &s->a, &err);
}

/* Held partition i's schedule: an earlier one's of s on the same topology
 * (asked once a spec: a batch of 32 prologs holds several of one spec,
 * and each was asked of a planner process of its own), or computed. */
static Ofc__V1__Schedule *held_schedule(const struct ofcd *d, struct snapshot *s, size_t i)
{
	Ofc__V1__HeldPartition *const *h = s->state->held;

	for (size_t k = 0; h[i]->topology && k < i; k++)
		if (h[k]->topology && strcmp(h[k]->topology, h[i]->topology) == 0)
			return h[k]->schedule;
	return part_schedule(d, s, h[i]->topology);
}

static int cmp_xconn(const void *a, const void *b)
{
	const struct xconn *x = a, *y = b;

	return x->in != y->in	  ? (x->in < y->in ? -1 : 1)
	       : x->out != y->out ? (x->out < y->out ? -1 : 1)
				  : 0;
}

/* Of rec's cross-connects outside skip (NULL: none skipped), those the
 * target lacks (*extra), and of want's those rec lacks (*missing). */
static void xc_differ(const struct device_state *rec, const struct device_state *want,
		      const uint8_t *skip, uint32_t ports, uint32_t *extra, uint32_t *missing)
{
	struct xconn *a = xcalloc((size_t)rec->nxc + 1, sizeof(*a));
	struct xconn *b = xcalloc((size_t)want->nxc + 1, sizeof(*b));
	uint32_t na = 0, nb = 0, i = 0, k = 0;

#define KEPT(x)                                                                                    \
	(!skip || !(((x).in <= ports && skip[(x).in]) || ((x).out <= ports && skip[(x).out])))
	for (uint32_t n = 0; n < rec->nxc; n++)
		if (KEPT(rec->xc[n]))
			a[na++] = rec->xc[n];
	for (uint32_t n = 0; n < want->nxc; n++)
		if (KEPT(want->xc[n]))
			b[nb++] = want->xc[n];
#undef KEPT
	qsort(a, na, sizeof(*a), cmp_xconn);
	qsort(b, nb, sizeof(*b), cmp_xconn);
	*extra = *missing = 0;
	while (i < na || k < nb) {
		int c = i == na ? 1 : k == nb ? -1 : cmp_xconn(&a[i], &b[k]);

		*extra += c < 0;
		*missing += c > 0;
		i += c <= 0;
		k += c >= 0;
	}
	free(a);
	free(b);
}

/* State.at_target_detail: what differs from the fabric's target, device
 * by device, outside the held partitions' ports (skip, by switch; NULL:
 * none held, nskip of them), and why it may. */
static void at_target_explain(struct snapshot *s, const struct ctl *c, const struct ctl_record *rec,
			      uint8_t *const *skip, uint32_t nskip)
{
	const struct fabric *f = c->fabric;
	struct strbuf sb = STRBUF_INIT;
	bool kept = false;

	if (!rec->have_state) {
		s->state->at_target_detail = "nothing committed yet";
		return;
	}
	for (uint32_t i = 0; i < c->ndevs; i++) {
		const struct ctl_device *cd = &c->devs[i];
		const struct device_state *r = recorded(rec, cd->cfg.name);
		int sw = cd->cfg.cls == DEV_SWITCH ? fabric_find_switch(f, cd->cfg.name) : -1;
		struct device_state want;
		uint32_t extra, missing;

		if (s->devs[i]->at_target)
			continue;
		if (!r || sw < 0) {
			sb_printf(&sb, "%s%s %s", sb.len ? "; " : "", cd->cfg.name,
				  r ? "differs from its target" : "has no record yet");
			continue;
		}
		ctl_fabric_target(c, i, &want);
		xc_differ(r, &want, skip ? skip[sw] : NULL, f->switches[sw].ports, &extra,
			  &missing);
		state_free(&want);
		sb_printf(
		    &sb,
		    "%s%s: %u cross-connect%s the target does not have, %u of the target's missing",
		    sb.len ? "; " : "", cd->cfg.name, extra, extra == 1 ? "" : "s", missing);
		kept |= extra || missing;
	}
	if (kept)
		sb_printf(&sb,
			  " (a partition aimed since the fabric's last commit changed its "
			  "hosts' circuits, and a released one's stay as they are by design "
			  "until its ports are aimed again: reconfigure --topology re-aims the "
			  "fabric, and with --free-ports only the ports no held partition has)");
	if (nskip)
		sb_printf(&sb,
			  "; the %u port%s of held partitions are judged by each partition's own "
			  "at_target, not here",
			  nskip, nskip == 1 ? "" : "s");
	s->state->at_target_detail = arena_strdup(&s->a, sb.buf ? sb.buf : "");
	sb_free(&sb);
}

void held_view(const struct ofcd *d, struct snapshot *s)
{
	Ofc__V1__State *st = s ? s->state : NULL;
	const struct ctl *c = d->w->ctl;
	struct ofc_error err = {0};
	struct ctl_record rec;

	/* (Nothing held and nothing to explain: the record, read and parsed
	 * again, would be read for nothing; at 65,536 hosts it is 262,144
	 * circuits, at every failure report's snapshot.) */
	if (!st || !c || s->ndevs != c->ndevs || (!st->n_held && st->at_target))
		return;
	const struct fabric *f = c->fabric;
	if (ctl_load_record_for(c, &rec, &err) < 0)
		return; /* (snapshot_build said why) */
	if (!st->n_held) {
		if (!st->at_target)
			at_target_explain(s, c, &rec, NULL, 0);
		ctl_record_free(&rec);
		return;
	}
	struct partition *parts = xcalloc(st->n_held + 1, sizeof(*parts));
	uint8_t **skip = xcalloc((size_t)f->nswitches + 1, sizeof(*skip));
	uint32_t **owner = xcalloc((size_t)f->nswitches + 1, sizeof(*owner));
	uint32_t *host_of = xmalloc(((size_t)f->nhosts + 1) * sizeof(*host_of));

	/* Each switch port's held partition (i, else UINT32_MAX), from a
	 * host's: one pass over the wiring, not one a partition (a commit
	 * with 32 held on 1,024 hosts spent most of its snapshot there). */
	for (uint32_t h = 0; h < f->nhosts; h++)
		host_of[h] = UINT32_MAX;
	for (size_t i = 0; i < st->n_held; i++) {
		part_of(f, st->held[i], &parts[i]);
		for (uint32_t k = 0; k < parts[i].nmembers; k++)
			host_of[parts[i].member_host[k]] = (uint32_t)i;
	}
	for (uint32_t sw = 0; sw < f->nswitches; sw++) {
		uint32_t ports = f->switches[sw].ports;

		skip[sw] = xcalloc((size_t)ports + 1, 1);
		owner[sw] = xmalloc(((size_t)ports + 1) * sizeof(**owner));
		for (uint32_t p = 0; p <= ports; p++)
			owner[sw][p] = UINT32_MAX;
		for (uint32_t w = 0; w < f->nwiring; w++) {
			const struct attachment *a = &f->wiring[w];

			if (a->sw == sw && a->sw_port <= ports && host_of[a->host] != UINT32_MAX) {
				owner[sw][a->sw_port] = host_of[a->host];
				skip[sw][a->sw_port] = 1;
			}
		}
	}
	free(host_of);
	uint32_t nskip = 0;
	for (uint32_t sw = 0; sw < f->nswitches; sw++)
		for (uint32_t p = 0; p <= f->switches[sw].ports; p++)
			nskip += skip[sw][p];
	/* the fabric's target, outside the held partitions */
	bool all = rec.have_state;
	for (uint32_t i = 0; i < c->ndevs; i++) {
		const struct ctl_device *cd = &c->devs[i];
		int sw = cd->cfg.cls == DEV_SWITCH ? fabric_find_switch(f, cd->cfg.name) : -1;

		s->devs[i]->at_target =
		    device_at_target(c, i, recorded(&rec, cd->cfg.name), sw >= 0 ? skip[sw] : NULL);
		all &= s->devs[i]->at_target;
	}
	st->at_target = all;
	if (!all)
		at_target_explain(s, c, &rec, skip, nskip);
	/* each held partition: its own target and schedule */
	for (size_t i = 0; i < st->n_held; i++) {
		Ofc__V1__HeldPartition *m = st->held[i];
		struct ofc_error e = {0};
		struct graph *g = NULL;

		m->has_at_target = 1;
		m->at_target = false;
		if (rec.have_state && m->topology &&
		    topo_build_in(m->topology, &d->files, &g, &e) == 0) {
			uint32_t *node = xcalloc((size_t)g->n + 1, sizeof(*node));

			m->at_target =
			    part_at_target(c, &parts[i], (uint32_t)i, owner, g, &rec, node);
			if (m->at_target && parts[i].nmembers == m->n_hosts)
				in_node_order(s, m, node);
			free(node);
		}
		graph_free(g);
		m->schedule = m->schedule ? m->schedule : held_schedule(d, s, i);
	}
	for (size_t i = 0; i < st->n_held; i++) {
		free(parts[i].member_host);
		free(parts[i].member_port);
	}
	for (uint32_t sw = 0; sw < f->nswitches; sw++) {
		free(skip[sw]);
		free(owner[sw]);
	}
	free(skip);
	free(owner);
	free(parts);
	ctl_record_free(&rec);
}

void ofcd_txn_by(const struct ofcd *d, Ofc__V1__TransactionInfo *t, char *buf, size_t n)
{
	const char *name = store_replica(d->store);

	buf[0] = 0;
	if (!d->clustered || !name || !t->id)
		return;
	t->replica = (char *)name;
	t->epoch = store_epoch(d->store);
	t->has_epoch = t->epoch != 0;
	snprintf(buf, n, " (replica %s, epoch %llu)", name, (unsigned long long)t->epoch);
}

void ofcd_txn_running(const struct ofcd *d, Ofc__V1__TransactionInfo *t)
{
	char by[160];

	t->has_running = t->running = 1;
	ofcd_txn_by(d, t, by, sizeof(by));
}

bool ofcd_txn_words(const struct ofcd *d, const struct ctl_event *ev, char *buf, size_t n)
{
	const char *name = store_replica(d->store);

	if (!d->clustered || !name || !ev->txn ||
	    (ev->kind != CTL_EV_TXN_STARTED && ev->kind != CTL_EV_TXN_COMMITTED &&
	     ev->kind != CTL_EV_TXN_ROLLED_BACK && ev->kind != CTL_EV_RECOVERED))
		return false;
	snprintf(buf, n, "by replica %s (epoch %llu)%s%s", name,
		 (unsigned long long)store_epoch(d->store), ev->message && *ev->message ? ": " : "",
		 ev->message ? ev->message : "");
	return true;
}
