/* Held partitions in the store (held.c says what a hold is): the
 * ofc.v1.HeldPartitions of STORE_HELD, written with the commit that takes
 * or changes a hold (ctl.commit_also: etcd puts it in the record's
 * transaction) and at every release or drop, read at the start, at a
 * takeover and at every sync of a follower (held_adopt). What is read is
 * checked against the running config as a request would be: an entry that
 * does not fit is dropped, logged and announced, never held half.
 *
 * Events: the leader announces what it does (KIND_PARTITION_HELD,
 * _RELEASED, _DROPPED), to every replica's watchers through the event
 * log (event_log.c); a follower logs what changed between two reads of
 * the store, the reason of a hold let go taken from the list's `gone` (the
 * last few). Mutation worker only. */
#include "controller/ofcd/worker.h"

#include <stdlib.h>
#include <string.h>

#include "proto/state.pb-c.h"

/* etcd refuses a request over 1.5 MiB unless told otherwise */
#define HELD_MAX_BYTES ((size_t)1 << 20)
/* The holds let go of that the store remembers, for followers' events */
#define HELD_GONE_MAX 16

static void held_part_free(struct held_part *h)
{
	held_partition_free(&h->p);
	free(h->owner);
	memset(h, 0, sizeof(*h));
}

static void gone_free(struct held_gone *g)
{
	free(g->name);
	free(g->reason);
}

void held_free_all(struct ofcd *d)
{
	for (uint32_t i = 0; i < d->w->nheld; i++)
		held_part_free(&d->w->held[i]);
	free(d->w->held);
	d->w->held = NULL;
	d->w->nheld = 0;
	held_scheds_free(&d->w->hsched);
	for (uint32_t i = 0; i < d->w->ngone; i++)
		gone_free(&d->w->gone[i]);
	free(d->w->gone);
	d->w->gone = NULL;
	d->w->ngone = 0;
	free(d->w->held_bytes);
	d->w->held_bytes = NULL;
	d->w->held_len = 0;
}

static int held_index(const struct ofcd *d, const char *name)
{
	for (uint32_t i = 0; i < d->w->nheld; i++)
		if (strcmp(d->w->held[i].p.name, name) == 0)
			return (int)i;
	return -1;
}

/* Who asked: the gateway principal's identity, else the socket peer's uid. */
static char *owner_of(const struct job *j)
{
	return xstrdup(j->principal ? j->principal : "?");
}

/* ---- events ------------------------------------------------------------------------- */

/* The job of a batch the worker runs that asked for partition `name`
 * (NULL: none, or no batch). */
static const struct job *batch_owner(const struct ofcd *d, const char *name)
{
	for (const struct job *j = d->w->batch; j; j = j == d->w->batch ? j->batch : j->next)
		if (j->partition && strcmp(j->partition, name) == 0)
			return j;
	return NULL;
}

/* An event about partition `name` for the loop: with the job's outcome
 * (after its snapshot is published, as ofcd_post_note does for a
 * commit), else at once. detail (NULL: the message) goes to the log. In
 * a batch, the event carries the ticket of the job that asked for the
 * partition, not the batch's first (another tenant's, maybe). */
static void post_partition(struct ofcd *d, Ofc__V1__Event__Kind kind, uint64_t txn,
			   const char *name, const char *message, const char *detail)
{
	struct note *n = xcalloc(1, sizeof(*n));
	const struct job *owner = batch_owner(d, name);

	n->ticket = owner ? owner->ticket : 0;
	n->kind = kind;
	n->txn = txn;
	n->partition = xstrdup(name);
	n->message = xstrdup(message);
	n->detail = detail ? xstrdup(detail) : NULL;
	n->time_ms = unix_ms();
	if (d->w->job) {
		job_defer(d->w->job, n);
		return;
	}
	ofcd_note(d, n);
}

static void announce_held(struct ofcd *d, const struct held_part *h, bool again, const char *by)
{
	char *msg = xasprintf("partition %s: %s on %u host%s, %s for %s%s", h->p.name,
			      h->p.topology.spec, h->p.nmembers, h->p.nmembers == 1 ? "" : "s",
			      again ? "aimed again" : "held", h->owner ? h->owner : "?", by);

	post_partition(d, OFC__V1__EVENT__KIND__KIND_PARTITION_HELD, h->txn, h->p.name, msg, NULL);
	free(msg);
}

static void announce_gone(struct ofcd *d, const char *name, bool dropped, const char *reason,
			  const char *by)
{
	char *msg =
	    xasprintf("partition %s %s: %s%s", name, dropped ? "dropped" : "released", reason, by);

	post_partition(d,
		       dropped ? OFC__V1__EVENT__KIND__KIND_PARTITION_DROPPED
			       : OFC__V1__EVENT__KIND__KIND_PARTITION_RELEASED,
		       0, name, msg, NULL);
	free(msg);
}

/* Remember a hold let go of (the last HELD_GONE_MAX). */
static void gone_add(struct ofcd *d, const char *name, bool dropped, const char *reason,
		     uint64_t time_ms)
{
	if (d->w->ngone == HELD_GONE_MAX) {
		gone_free(&d->w->gone[0]);
		memmove(d->w->gone, d->w->gone + 1, (HELD_GONE_MAX - 1) * sizeof(*d->w->gone));
		d->w->ngone--;
	}
	d->w->gone = xreallocarray(d->w->gone, d->w->ngone + 1, sizeof(*d->w->gone));
	d->w->gone[d->w->ngone++] =
	    (struct held_gone){xstrdup(name), xstrdup(reason), dropped, time_ms};
}

/* ---- the store's bytes ---------------------------------------------------------------- */

/* held[0..n) (NULL entries skipped) and d->w->gone with extra[0..nextra)
 * after it, the last HELD_GONE_MAX, as a HeldPartitions (caller frees). */
static uint8_t *held_pack(const struct ofcd *d, const struct held_part *const *held, uint32_t n,
			  const struct held_gone *extra, uint32_t nextra, size_t *len)
{
	Ofc__V1__HeldPartitions m = OFC__V1__HELD_PARTITIONS__INIT;
	Ofc__V1__HeldPartitions__Held *h = xcalloc(n + 1, sizeof(*h));
	Ofc__V1__HeldPartitions__Held **ph = xcalloc(n + 1, sizeof(*ph));
	uint32_t ngone = d->w->ngone + nextra,
		 skip = ngone > HELD_GONE_MAX ? ngone - HELD_GONE_MAX : 0;
	Ofc__V1__HeldPartitions__Gone *g = xcalloc(ngone + 1, sizeof(*g));
	Ofc__V1__HeldPartitions__Gone **pg = xcalloc(ngone + 1, sizeof(*pg));
	uint8_t *buf;

	for (uint32_t i = 0; i < n; i++) {
		if (!held[i])
			continue;
		Ofc__V1__HeldPartitions__Held *e = &h[m.n_held];

		ofc__v1__held_partitions__held__init(e);
		e->name = held[i]->p.name;
		e->n_hosts = held[i]->p.nmembers;
		e->hosts = held[i]->p.members;
		e->topology = held[i]->p.topology.spec;
		e->has_transaction = e->has_operations = e->has_since_unix_ms = 1;
		e->transaction = held[i]->txn;
		e->operations = held[i]->ops;
		e->owner = held[i]->owner;
		e->since_unix_ms = held[i]->since_ms;
		ph[m.n_held++] = e;
	}
	for (uint32_t i = skip; i < ngone; i++) {
		const struct held_gone *s =
		    i < d->w->ngone ? &d->w->gone[i] : &extra[i - d->w->ngone];
		Ofc__V1__HeldPartitions__Gone *e = &g[m.n_gone];

		ofc__v1__held_partitions__gone__init(e);
		e->name = s->name;
		e->reason = s->reason;
		e->has_dropped = e->has_time_unix_ms = 1;
		e->dropped = s->dropped;
		e->time_unix_ms = s->time_ms;
		pg[m.n_gone++] = e;
	}
	m.held = ph;
	m.gone = pg;
	m.epoch = store_epoch(d->store);
	m.has_epoch = m.epoch != 0;
	*len = ofc__v1__held_partitions__get_packed_size(&m);
	buf = xmalloc(*len + 1);
	ofc__v1__held_partitions__pack(&m, buf);
	free(h);
	free(ph);
	free(g);
	free(pg);
	return buf;
}

/* Write held[0..n) and the gone list with extra: one write of the store. */
static int held_write(struct ofcd *d, const struct held_part *const *held, uint32_t n,
		      const struct held_gone *extra, uint32_t nextra, struct ofc_error *err)
{
	size_t len;
	uint8_t *buf = held_pack(d, held, n, extra, nextra, &len);
	struct store_write w = {STORE_HELD, buf, len};
	int rc = len > HELD_MAX_BYTES
		     ? ofc_error_set(err, OFC_E_RUNTIME,
				     "the held partitions would take %zu bytes in the store, more "
				     "than %zu",
				     len, HELD_MAX_BYTES)
		     : store_write(d->store, d->w->cfg->f->name, &w, 1, err);

	free(buf);
	/* (read again at the next sync: what the store holds is ours now) */
	free(d->w->held_bytes);
	d->w->held_bytes = NULL;
	return rc;
}

/* The current holds as pointers (the caller frees the array). */
static const struct held_part **held_ptrs(const struct ofcd *d)
{
	const struct held_part **v = xcalloc(d->w->nheld + 2, sizeof(*v));

	for (uint32_t i = 0; i < d->w->nheld; i++)
		v[i] = &d->w->held[i];
	return v;
}

/* ---- a commit's holds ------------------------------------------------------------------ */

/* add[k] is staged (its name). */
static int staged_index(const struct held_stage *hs, const char *name)
{
	for (uint32_t k = 0; k < hs->nadd; k++)
		if (strcmp(hs->add[k]->name, name) == 0)
			return (int)k;
	return -1;
}

void held_stage_many(struct ofcd *d, struct job *const *j, const struct partition *const *add,
		     const uint32_t *ops, uint32_t n, const struct fabric *f, struct held_stage *hs)
{
	memset(hs, 0, sizeof(*hs));
	hs->d = d;
	hs->nadd = n;
	hs->now_ms = unix_ms();
	hs->add = xcalloc(n + 1, sizeof(*hs->add));
	hs->owner = xcalloc(n + 1, sizeof(*hs->owner));
	hs->ops = xcalloc(n + 1, sizeof(*hs->ops));
	for (uint32_t k = 0; k < n; k++) {
		hs->add[k] = add[k];
		hs->owner[k] = owner_of(j[k]);
		hs->ops[k] = ops ? ops[k] : UINT32_MAX;
	}
	hs->drop_why = xcalloc(d->w->nheld + 1, sizeof(char *));
	hs->nstaged = d->w->nheld;
	for (uint32_t i = 0; i < d->w->nheld; i++) {
		const struct partition *p = &d->w->held[i].p;

		if (staged_index(hs, p->name) >= 0)
			continue;
		for (uint32_t m = 0; m < p->nmembers && !hs->drop_why[i]; m++)
			if (fabric_find_host(f, p->members[m]) < 0)
				hs->drop_why[i] =
				    xasprintf("the config now running (fabric %s) has no host %s",
					      f->name, p->members[m]);
		hs->ndrop += hs->drop_why[i] != NULL;
	}
}

void held_stage(struct ofcd *d, const struct job *j, const struct partition *add,
		const struct fabric *f, struct held_stage *hs)
{
	struct job *jj = (struct job *)j;

	held_stage_many(d, &jj, &add, NULL, add ? 1 : 0, f, hs);
}

/* The hold add[k] becomes (its owner and since kept when it was held). */
static void staged_part(const struct held_stage *hs, uint32_t k, uint64_t txn, uint32_t ops,
			struct held_part *out)
{
	const struct partition *add = hs->add[k];
	int i = held_index(hs->d, add->name);

	out->p = *add;
	out->txn = txn;
	out->ops = hs->ops[k] != UINT32_MAX ? hs->ops[k] : ops;
	out->owner = i >= 0 && hs->d->w->held[i].owner ? hs->d->w->held[i].owner : hs->owner[k];
	out->since_ms =
	    i >= 0 && hs->d->w->held[i].since_ms ? hs->d->w->held[i].since_ms : hs->now_ms;
}

void held_commit_also(void *ctx, const struct ctl *c, struct store_write *w)
{
	const struct held_stage *hs = ctx;
	const struct ofcd *d = hs->d;
	struct held_part *add;
	struct held_gone *gone;
	uint32_t ng = 0;

	if (!hs->nadd && !hs->ndrop)
		return;
	const struct held_part **v = xcalloc(d->w->nheld + hs->nadd + 1, sizeof(*v));
	for (uint32_t i = 0; i < d->w->nheld; i++)
		v[i] = &d->w->held[i];
	gone = xcalloc(hs->ndrop + 1, sizeof(*gone));
	add = xcalloc(hs->nadd + 1, sizeof(*add));
	for (uint32_t i = 0; i < d->w->nheld; i++) {
		if (hs->drop_why[i]) {
			gone[ng++] = (struct held_gone){d->w->held[i].p.name, hs->drop_why[i], true,
							unix_ms()};
			v[i] = NULL;
		} else if (staged_index(hs, d->w->held[i].p.name) >= 0) {
			v[i] = NULL;
		}
	}
	for (uint32_t k = 0; k < hs->nadd; k++) {
		staged_part(hs, k, c->txn, ctl_plan_size(c), &add[k]);
		v[d->w->nheld + k] = &add[k];
	}
	w->item = STORE_HELD;
	w->data = held_pack(d, v, d->w->nheld + hs->nadd, gone, ng, &w->len);
	free(add);
	free(gone);
	free(v);
}

void held_committed_many(struct held_stage *hs, struct partition *const *add, uint64_t txn)
{
	struct ofcd *d = hs->d;
	uint32_t k = 0;

	for (uint32_t i = 0; i < d->w->nheld; i++) {
		if (!hs->drop_why[i]) {
			d->w->held[k++] = d->w->held[i];
			continue;
		}
		char *log = xasprintf("%s; its hosts return to the pool", hs->drop_why[i]);

		gone_add(d, d->w->held[i].p.name, true, hs->drop_why[i], unix_ms());
		announce_gone(d, d->w->held[i].p.name, true, log, "");
		free(log);
		held_part_free(&d->w->held[i]);
	}
	d->w->nheld = k;
	free(d->w->held_bytes);
	d->w->held_bytes = NULL;
	for (uint32_t a = 0; a < hs->nadd && add; a++) {
		struct held_part h;
		int i = held_index(d, add[a]->name);
		bool again = i >= 0;

		staged_part(hs, a, txn, 0, &h);
		h.owner = xstrdup(h.owner);
		if (i >= 0) {
			held_part_free(&d->w->held[i]);
		} else {
			d->w->held =
			    xreallocarray(d->w->held, d->w->nheld + 1, sizeof(*d->w->held));
			i = (int)d->w->nheld++;
		}
		d->w->held[i] = h;
		memset(add[a], 0, sizeof(*add[a]));
		announce_held(d, &d->w->held[i], again, "");
	}
}

void held_committed(struct held_stage *hs, struct partition *add, uint64_t txn, uint32_t ops)
{
	if (add && hs->nadd == 1)
		hs->ops[0] = ops;
	held_committed_many(hs, add && hs->nadd ? &add : NULL, txn);
}

void held_stage_free(struct held_stage *hs)
{
	if (!hs->d)
		return;
	for (uint32_t i = 0; hs->drop_why && i < hs->nstaged; i++)
		free(hs->drop_why[i]);
	free(hs->drop_why);
	for (uint32_t k = 0; k < hs->nadd; k++)
		free(hs->owner[k]);
	free(hs->owner);
	free(hs->add);
	free(hs->ops);
	memset(hs, 0, sizeof(*hs));
}

/* ---- release ------------------------------------------------------------------------- */

int held_release(struct ofcd *d, const struct job *j, struct ofc_error *err)
{
	int i = held_index(d, j->partition);

	/* (a damaged item in the store is not written over: ofcd_run_mutation's
	 * rule) */
	if (d->w->damaged)
		return ofc_error_set(err, OFC_E_RUNTIME, "refused: %s; fix or remove it first",
				     d->w->damaged);
	if (i < 0)
		return ofc_error_set(err, OFC_E_INPUT, "no partition '%.64s' is held",
				     j->partition);
	char *by = owner_of(j);
	char *reason = xasprintf("let go by %s; its hosts return to the pool", by);
	struct held_gone g = {d->w->held[i].p.name, reason, false, unix_ms()};
	const struct held_part **v = held_ptrs(d);

	v[i] = NULL;
	int rc = held_write(d, v, d->w->nheld, &g, 1, err);
	free(v);
	if (rc == 0) {
		gone_add(d, j->partition, false, reason, g.time_ms);
		announce_gone(d, j->partition, false, reason, "");
		held_part_free(&d->w->held[i]);
		d->w->held[i] = d->w->held[--d->w->nheld];
	}
	free(reason);
	free(by);
	return rc;
}

int held_release_many(struct ofcd *d, struct job *const *j, uint32_t n, struct ofc_error *err)
{
	const struct held_part **v = held_ptrs(d);
	struct held_gone *g = xcalloc(n + 1, sizeof(*g));
	uint64_t now = unix_ms();
	int rc;

	if (d->w->damaged) {
		free(v);
		free(g);
		return ofc_error_set(err, OFC_E_RUNTIME, "refused: %s; fix or remove it first",
				     d->w->damaged);
	}
	for (uint32_t k = 0; k < n; k++) {
		int i = held_index(d, j[k]->partition);
		char *by = owner_of(j[k]);

		v[i] = NULL;
		g[k] = (struct held_gone){
		    d->w->held[i].p.name,
		    xasprintf("let go by %s; its hosts return to the pool", by), false, now};
		free(by);
	}
	rc = held_write(d, v, d->w->nheld, g, n, err);
	free(v);
	for (uint32_t k = 0; k < n; k++) {
		if (rc == 0) {
			int i = held_index(d, j[k]->partition);

			gone_add(d, j[k]->partition, false, g[k].reason, g[k].time_ms);
			announce_gone(d, j[k]->partition, false, g[k].reason, "");
			held_part_free(&d->w->held[i]);
			d->w->held[i] = d->w->held[--d->w->nheld];
		}
		free(g[k].reason);
	}
	free(g);
	return rc;
}

/* ---- reading the store ------------------------------------------------------------------ */

/* Why entry e cannot be held on f beside the first n of held (NULL: it
 * can), into why. */
static bool entry_unfit(const struct fabric *f, const Ofc__V1__HeldPartitions__Held *e,
			const struct held_part *held, uint32_t n, char *why, size_t len)
{
	if (!e->name || !*e->name || strlen(e->name) > NAME_MAX_LEN)
		return snprintf(why, len, "an entry without a name"), true;
	if (fabric_find_partition(f, e->name))
		return snprintf(why, len, "the config has a partition of that name"), true;
	if (!e->topology || !*e->topology)
		return snprintf(why, len, "no topology"), true;
	if (!e->n_hosts || e->n_hosts > HELD_MAX_HOSTS || e->n_hosts > f->nhosts)
		return snprintf(why, len, "%zu hosts, the fabric has %u", e->n_hosts, f->nhosts),
		       true;
	for (uint32_t i = 0; i < n; i++)
		if (strcmp(held[i].p.name, e->name) == 0)
			return snprintf(why, len, "held twice"), true;
	for (size_t k = 0; k < e->n_hosts; k++) {
		if (fabric_find_host(f, e->hosts[k]) < 0)
			return snprintf(why, len, "the config (fabric %s) has no host %.64s",
					f->name, e->hosts[k]),
			       true;
		for (size_t m = 0; m < k; m++)
			if (strcmp(e->hosts[m], e->hosts[k]) == 0)
				return snprintf(why, len, "host %.64s is named twice", e->hosts[k]),
				       true;
		for (uint32_t i = 0; i < n; i++)
			for (uint32_t m = 0; m < held[i].p.nmembers; m++)
				if (strcmp(held[i].p.members[m], e->hosts[k]) == 0)
					return snprintf(why, len,
							"host %.64s is held by partition '%s' too",
							e->hosts[k], held[i].p.name),
					       true;
	}
	return false;
}

static void entry_to_part(const struct fabric *f, const Ofc__V1__HeldPartitions__Held *e,
			  struct held_part *h)
{
	struct partition *p = &h->p;

	memset(h, 0, sizeof(*h));
	p->name = xstrdup(e->name);
	p->runtime = true;
	p->nmembers = (uint32_t)e->n_hosts;
	p->members = xcalloc(e->n_hosts + 1, sizeof(char *));
	p->member_locs = xcalloc(e->n_hosts, sizeof(*p->member_locs));
	p->member_host = xcalloc(e->n_hosts, sizeof(uint32_t));
	p->member_port = xcalloc(e->n_hosts, sizeof(uint32_t));
	for (size_t k = 0; k < e->n_hosts; k++) {
		p->members[k] = xstrdup(e->hosts[k]);
		p->member_host[k] = (uint32_t)fabric_find_host(f, e->hosts[k]);
		p->member_port[k] = UINT32_MAX;
	}
	p->topology.present = true;
	p->topology.self_loops = f->topology.present ? f->topology.self_loops : SELF_LOOPS_LOOPBACK;
	p->topology.spec = xstrdup(e->topology);
	h->txn = e->transaction;
	h->ops = e->operations;
	h->owner = e->owner ? xstrdup(e->owner) : NULL;
	h->since_ms = e->since_unix_ms;
}

/* The reason the store's list gives for partition `name` let go of. */
static const Ofc__V1__HeldPartitions__Gone *gone_of(const Ofc__V1__HeldPartitions *m,
						    const char *name)
{
	for (size_t i = m->n_gone; i-- > 0;)
		if (m->gone[i]->name && strcmp(m->gone[i]->name, name) == 0)
			return m->gone[i];
	return NULL;
}

/* A follower's events: what changed from d->w->held to held[0..n). */
static void announce_changes(struct ofcd *d, const Ofc__V1__HeldPartitions *m,
			     const struct held_part *held, uint32_t n)
{
	static const char by[] = " (by the leader, seen in the store)";

	for (uint32_t i = 0; i < n; i++) {
		int o = held_index(d, held[i].p.name);

		if (o < 0 || d->w->held[o].txn != held[i].txn)
			announce_held(d, &held[i], o >= 0, by);
	}
	for (uint32_t o = 0; o < d->w->nheld; o++) {
		bool there = false;

		for (uint32_t i = 0; i < n && !there; i++)
			there = strcmp(held[i].p.name, d->w->held[o].p.name) == 0;
		if (there)
			continue;
		const Ofc__V1__HeldPartitions__Gone *g = gone_of(m, d->w->held[o].p.name);

		announce_gone(d, d->w->held[o].p.name, g && g->dropped,
			      g && g->reason ? g->reason : "let go", by);
	}
}

/* The store's item could not be read or is no HeldPartitions. */
static int held_damaged(struct ofcd *d, const char *what, struct ofc_error *err)
{
	const char *fabric = d->w->cfg->f->name;
	char *where = store_where(d->store, fabric, STORE_HELD);
	char *mv = store_aside(d->store, fabric, STORE_HELD, ".corrupt");

	ofc_error_at(err, OFC_E_RUNTIME, where, 0, 0,
		     "corrupt %s: %s. ofcd cannot tell which hosts it holds for their owners: look "
		     "at it, then set it aside (its holds are let go: their owners ask again): %s",
		     store_noun(d->store), what, mv);
	err->reason = OFC_R_GARBAGE;
	free(where);
	free(mv);
	return -1;
}

/* m's entries that fit d->w->cfg into *out; the others dropped (logged,
 * announced, remembered as gone). Returns how many were dropped. */
static uint32_t held_take(struct ofcd *d, const Ofc__V1__HeldPartitions *m, struct held_part **out,
			  uint32_t *nout)
{
	const struct fabric *f = d->w->cfg->f;
	struct held_part *v = xcalloc(m->n_held + 1, sizeof(*v));
	uint32_t n = 0, dropped = 0;
	char why[300];

	for (size_t i = 0; i < m->n_held; i++) {
		const Ofc__V1__HeldPartitions__Held *e = m->held[i];

		if (!entry_unfit(f, e, v, n, why, sizeof(why))) {
			entry_to_part(f, e, &v[n++]);
			continue;
		}
		const char *name = e->name && *e->name ? e->name : "?";
		char *reason = xasprintf("the store's entry does not fit the config: %s", why);

		gone_add(d, name, true, reason, unix_ms());
		announce_gone(d, name, true, reason, "");
		free(reason);
		dropped++;
	}
	*out = v;
	*nout = n;
	return dropped;
}

int held_adopt(struct ofcd *d, bool leader, bool announce, struct ofc_error *err)
{
	struct ofc_error e = {0};
	char *data = NULL, what[200];
	size_t len = 0;
	bool missing = false;

	if (store_get(d->store, d->w->cfg->f->name, STORE_HELD, HELD_MAX_BYTES, &data, &len,
		      &missing, &e) < 0) {
		snprintf(what, sizeof(what), "cannot be read (%.150s)", e.msg);
		return held_damaged(d, what, err);
	}
	if (d->w->held_bytes && len == d->w->held_len &&
	    (!len || memcmp(data, d->w->held_bytes, len) == 0)) {
		free(data);
		return 0;
	}
	Ofc__V1__HeldPartitions *m =
	    ofc__v1__held_partitions__unpack(NULL, len, (const uint8_t *)(data ? data : ""));
	const char *nul = NULL;
	if (!m || (len && wire_string_with_nul(&ofc__v1__held_partitions__descriptor,
					       (const uint8_t *)data, len, &nul))) {
		snprintf(what, sizeof(what), "%zu bytes that are not an ofc.v1.HeldPartitions%s%s",
			 len, nul ? ": a NUL byte in " : "", nul ? nul : "");
		if (m)
			ofc__v1__held_partitions__free_unpacked(m, NULL);
		free(data);
		return held_damaged(d, what, err);
	}
	struct held_part *v;
	uint32_t n, dropped;

	/* (the gone list is the store's: a follower that leads later goes on
	 * with it) */
	for (uint32_t i = 0; i < d->w->ngone; i++)
		gone_free(&d->w->gone[i]);
	d->w->ngone = 0;
	for (size_t i = 0; i < m->n_gone; i++)
		if (m->gone[i]->name)
			gone_add(d, m->gone[i]->name, m->gone[i]->dropped,
				 m->gone[i]->reason ? m->gone[i]->reason : "",
				 m->gone[i]->time_unix_ms);
	dropped = held_take(d, m, &v, &n);
	if (announce)
		announce_changes(d, m, v, n);
	else if (n)
		ofcd_log(d, OFCD_LOG_NOTICE, "holding %u partition%s for their owners (%s)", n,
			 n == 1 ? "" : "s", store_noun(d->store));
	ofc__v1__held_partitions__free_unpacked(m, NULL);
	for (uint32_t i = 0; i < d->w->nheld; i++)
		held_part_free(&d->w->held[i]);
	free(d->w->held);
	d->w->held = v;
	d->w->nheld = n;
	free(d->w->held_bytes);
	d->w->held_bytes = data ? data : xstrdup("");
	d->w->held_len = len;
	if (dropped && leader) {
		const struct held_part **p = held_ptrs(d);

		if (held_write(d, p, d->w->nheld, NULL, 0, &e) < 0)
			ofcd_log(d, OFCD_LOG_ERR, "the held partitions cannot be written again: %s",
				 e.msg);
		free(p);
	}
	return 0;
}
