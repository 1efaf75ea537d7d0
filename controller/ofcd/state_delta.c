/* What an event changed of the fabric's state, on the loop thread: the
 * published state as a read-only client reads it, cut in parts (each kept
 * top-level field, each device, each held partition), each part packed and
 * compared with the parts the last delta described. What differs goes on
 * the event being logged (ofc.v1.StateDelta), so that a client keeps a
 * copy current from the watch alone and reads the whole state only at its
 * start, after a gap in the events' numbers, or when told to
 * (docs/control.md, "Keeping a copy of the state").
 *
 * A change that comes with no event of its own (a sync's, a device's
 * reachability on a follower's word) goes out as KIND_STATE_CHANGED at
 * the server's next check (server.c, every DELTA_CHECK_MS). Only the numbering replica (a single
 * ofcd, or the leader) describes changes; a follower relays the leader's. Every part is a whole
 * value, so applying a delta twice, or on a copy read a little after the event before it, leaves
 * the same copy.
 *
 * Why compare packed parts rather than have each mutation say what it
 * changed: every path that publishes a state (commits, releases, failures,
 * re-plans, syncs, a device's reachability) is then described by one
 * function, and a path added later cannot forget to. The cost is one pack
 * of the state's kept parts an event or check after a change of the
 * published state's version (the same pack a GetState does); none while
 * the version stands. A switch's circuits are packed once per snapshot:
 * they are built with it and nothing changes them after (a version that
 * moves with the queue, a probe or a device's reachability repacks the
 * devices' other fields only). At 65,536 hosts the circuits are some
 * 262,000 messages, and packing them at every queued ticket and every
 * check took the loop thread most of a core while a failure was re-planned
 * beside it. */
#include "controller/ofcd/conn.h"

#include <stdlib.h>
#include <string.h>

/* What one event carries at most, past which read_again: a batch of 32
 * Slurm prologs at 8,192 hosts changes some 40 KB of circuits, the whole
 * state is 1.1 MB, and the store's log (event_log.c, 512 KiB) still keeps
 * a few of the largest for a watch that resumes. */
#define DELTA_MAX ((size_t)96 << 10)

/* The top-level fields of State a copy keeps whole, by number (devices, 1,
 * and held, 200, are kept by entry). Not kept, as each replica answers
 * them for itself or they move with every request: schedule (each
 * replica computes the state's schedule itself, at times in another form,
 * reduced or explicit; KIND_SCHEDULE_REPLANNED carries the leader's),
 * transaction, queue,
 * fabric (with_fabric), config_file (each replica's own), daemon_pid,
 * schedule_computing_since_unix_ms, state_dir, state_dir_exists,
 * testbed_up, tenant, cluster, mpi_reports (the leader's, in memory: a
 * finished job's report, mpi_report.c), wiring (with_wiring, computed at
 * each request from the hosts' reports), and the devices' counters (commands,
 * errors, last_contact_unix_ms, last_contact_by). */
static const uint32_t kept_fields[] = {2,  5,  8,  10, 11, 12, 14, 15,	16,
				       20, 21, 23, 24, 25, 26, 27, 202, 205};
#define NKEPT (sizeof(kept_fields) / sizeof(kept_fields[0]))

struct part {
	const char *name; /* a device's or a held partition's (the snapshot's) */
	uint8_t *buf;	  /* (a device's is in its struct circuits: none here) */
	size_t len;
};

/* A switch's circuits apart from the rest of its state, so that a commit
 * that changed a few of thousands says those few: each packed, in the
 * state's order, which is (in_port, out_port) (keyed; else the device goes
 * whole). */
struct circuits {
	struct part rest; /* the device without its circuits */
	uint32_t n;
	uint32_t *key; /* in_port, out_port of each */
	size_t *off;   /* n + 1: each one's bytes in buf */
	uint8_t *buf;
	bool keyed;
	/* The snapshot's array these were packed from (compared only while
	 * that snapshot is the one described: its serial), and whether key,
	 * off and buf are the last view's, lent to this one. */
	const void *src;
	bool lent;
};

struct state_view {
	struct part field[NKEPT]; /* len 0: absent */
	struct part *dev, *held;
	struct circuits *circ; /* per dev */
	uint32_t ndev, nheld;
	char **names; /* (the described view's own copies of the names) */
	uint32_t nnames;
};

struct state_delta {
	struct state_view last; /* what the last delta described */
	bool have;
	uint64_t epoch; /* the leadership it was described under */
	/* ... and the published state's version and snapshot then: while they
	 * are the same, nothing changed (no pack) */
	uint64_t version;
	const struct snapshot *snap;
	uint64_t serial; /* snap's (a freed snapshot's address may come back) */
};

static void view_free(struct state_view *v)
{
	for (uint32_t i = 0; i < NKEPT; i++)
		free(v->field[i].buf);
	for (uint32_t i = 0; i < v->ndev; i++) {
		free(v->circ[i].rest.buf);
		if (v->circ[i].lent)
			continue;
		free(v->circ[i].key);
		free(v->circ[i].off);
		free(v->circ[i].buf);
	}
	free(v->circ);
	for (uint32_t i = 0; i < v->nheld; i++)
		free(v->held[i].buf);
	strv_free(v->names, v->nnames);
	free(v->dev);
	free(v->held);
	memset(v, 0, sizeof(*v));
}

void state_delta_free(struct ofcd *d)
{
	if (!d->loop->delta)
		return;
	view_free(&d->loop->delta->last);
	free(d->loop->delta);
	d->loop->delta = NULL;
}

/* ---- one field of State, by its descriptor ---------------------------------------------- */

static size_t field_size(const ProtobufCFieldDescriptor *fd)
{
	return fd->label == PROTOBUF_C_LABEL_REPEATED ? sizeof(void *) : pb_type_size(fd->type);
}

/* dst's field fd set as src's (a shallow copy: the pointers shared). */
static void copy_field(Ofc__V1__State *dst, const Ofc__V1__State *src,
		       const ProtobufCFieldDescriptor *fd)
{
	memcpy((char *)dst + fd->offset, (const char *)src + fd->offset, field_size(fd));
	if (fd->quantifier_offset)
		memcpy((char *)dst + fd->quantifier_offset,
		       (const char *)src + fd->quantifier_offset,
		       fd->label == PROTOBUF_C_LABEL_REPEATED ? sizeof(size_t)
							      : sizeof(protobuf_c_boolean));
}

static const ProtobufCFieldDescriptor *state_field(uint32_t id)
{
	return protobuf_c_message_descriptor_get_field(&ofc__v1__state__descriptor, id);
}

static void pack_part(const ProtobufCMessage *m, struct part *p)
{
	p->len = protobuf_c_message_get_packed_size(m);
	p->buf = xmalloc(p->len ? p->len : 1);
	protobuf_c_message_pack(m, p->buf);
}

/* m's circuits and the rest of it, packed apart; the circuits lent by
 * the last view (was) when it packed the same array. */
static void pack_circuits(const Ofc__V1__DeviceState *m, struct circuits *c,
			  const struct circuits *was)
{
	Ofc__V1__DeviceState rest = *m;
	size_t len = 0;

	rest.n_circuits = 0;
	rest.circuits = NULL;
	pack_part(&rest.base, &c->rest);
	c->src = m->circuits;
	if (was && was->src == m->circuits && was->n == m->n_circuits) {
		c->n = was->n;
		c->key = was->key;
		c->off = was->off;
		c->buf = was->buf;
		c->keyed = was->keyed;
		c->lent = true;
		return;
	}
	c->n = (uint32_t)m->n_circuits;
	c->keyed = true;
	c->key = xcalloc(2 * (size_t)c->n + 1, sizeof(*c->key));
	c->off = xcalloc((size_t)c->n + 1, sizeof(*c->off));
	for (uint32_t j = 0; j < c->n; j++) {
		const Ofc__V1__Circuit *x = m->circuits[j];

		c->key[2 * j] = x->in_port;
		c->key[2 * j + 1] = x->out_port;
		c->keyed &= x->has_in_port && x->has_out_port &&
			    (j == 0 || x->in_port > c->key[2 * j - 2] ||
			     (x->in_port == c->key[2 * j - 2] && x->out_port > c->key[2 * j - 1]));
		len += protobuf_c_message_get_packed_size(&x->base);
	}
	c->buf = xmalloc(len + 1);
	for (uint32_t j = 0; j < c->n; j++)
		c->off[j + 1] =
		    c->off[j] + protobuf_c_message_pack(&m->circuits[j]->base, c->buf + c->off[j]);
}

/* ---- the view ----------------------------------------------------------------------------- */

/* The published state as a read-only client reads its kept parts: vs
 * (shallow, its devices copies in a) and v (each part packed; the
 * circuits lent by last, the view of the same snapshot, when not NULL). */
static void view_build(struct ofcd *d, struct arena *a, Ofc__V1__State *vs, struct state_view *v,
		       const struct state_view *last)
{
	const struct snapshot *s = d->loop->snap;

	*vs = *s->state;
	vs->topology = s->topo;
	memset(v, 0, sizeof(*v));
	for (uint32_t k = 0; k < NKEPT; k++) {
		const ProtobufCFieldDescriptor *fd = state_field(kept_fields[k]);
		Ofc__V1__State one = OFC__V1__STATE__INIT;

		copy_field(&one, vs, fd);
		pack_part(&one.base, &v->field[k]);
		if (v->field[k].len == 0) { /* (absent: nothing packed) */
			free(v->field[k].buf);
			v->field[k].buf = NULL;
		}
	}
	vs->devices = arena_array(a, s->ndevs, sizeof(*vs->devices));
	vs->n_devices = s->ndevs;
	v->dev = xcalloc(s->ndevs + 1, sizeof(*v->dev));
	v->circ = xcalloc(s->ndevs + 1, sizeof(*v->circ));
	v->ndev = s->ndevs;
	for (uint32_t i = 0; i < s->ndevs; i++) {
		Ofc__V1__DeviceState *m = arena_alloc(a, sizeof(*m));

		*m = *s->devs[i];
		m->has_commands = m->has_errors = m->has_last_contact_unix_ms = 0;
		m->commands = m->errors = m->last_contact_unix_ms = 0;
		m->last_contact_by = NULL; /* (a follower's: whose contact it shows) */
		m->error = m->error ? (char *)s->public_error[i] : NULL;
		vs->devices[i] = m;
		v->dev[i].name = m->name;
		pack_circuits(m, &v->circ[i], last && i < last->ndev ? &last->circ[i] : NULL);
	}
	v->held = xcalloc(vs->n_held + 1, sizeof(*v->held));
	v->nheld = (uint32_t)vs->n_held;
	for (uint32_t i = 0; i < v->nheld; i++) {
		v->held[i].name = vs->held[i]->name;
		pack_part(&vs->held[i]->base, &v->held[i]);
	}
}

/* v's names copied, so that it outlives the snapshot it was built on. */
static void view_keep(struct state_view *v)
{
	v->nnames = v->ndev + v->nheld;
	v->names = xcalloc(v->nnames + 1, sizeof(*v->names));
	for (uint32_t i = 0; i < v->ndev; i++)
		v->dev[i].name = v->names[i] = xstrdup(v->dev[i].name ? v->dev[i].name : "");
	for (uint32_t i = 0; i < v->nheld; i++)
		v->held[i].name = v->names[v->ndev + i] =
		    xstrdup(v->held[i].name ? v->held[i].name : "");
}

static bool part_same(const struct part *a, const struct part *b)
{
	return a->len == b->len && (a->len == 0 || memcmp(a->buf, b->buf, a->len) == 0);
}

/* A device the same in both views: the rest of it, its circuits. */
static bool device_same(const struct circuits *a, const struct circuits *b)
{
	return part_same(&a->rest, &b->rest) && a->n == b->n &&
	       (a->buf == b->buf ||
		(memcmp(a->off, b->off, ((size_t)a->n + 1) * sizeof(*a->off)) == 0 &&
		 memcmp(a->buf, b->buf, a->off[a->n]) == 0));
}

/* The circuits now borrowed from last become now's own. */
static void view_take(struct state_view *now, struct state_view *last)
{
	for (uint32_t i = 0; i < now->ndev; i++) {
		if (!now->circ[i].lent)
			continue;
		last->circ[i].key = NULL; /* (lent by the same device's entry) */
		last->circ[i].off = NULL;
		last->circ[i].buf = NULL;
		now->circ[i].lent = false;
	}
}

static bool names_same(const struct part *a, uint32_t na, const struct part *b, uint32_t nb)
{
	if (na != nb)
		return false;
	for (uint32_t i = 0; i < na; i++)
		if (strcmp(a[i].name, b[i].name) != 0)
			return false;
	return true;
}

/* The entries of a list (devices or held) that changed from old to now,
 * into *out (all of them, *whole set, when names came, went or moved);
 * their count. */
static size_t list_diff(struct arena *a, const struct part *old, uint32_t nold,
			const struct part *now, uint32_t nnow, void **msgs, void ***out,
			protobuf_c_boolean *whole)
{
	size_t n = 0;

	*whole = !names_same(old, nold, now, nnow);
	*out = arena_array(a, nnow + 1, sizeof(**out));
	for (uint32_t i = 0; i < nnow; i++)
		if (*whole || !part_same(&old[i], &now[i]))
			(*out)[n++] = msgs[i];
	return n;
}

static int key_cmp(const uint32_t *a, const uint32_t *b)
{
	return a[0] != b[0] ? (a[0] < b[0] ? -1 : 1) : a[1] != b[1] ? (a[1] < b[1] ? -1 : 1) : 0;
}

/* A switch's circuits from o to c as a patch (now: its message, whose
 * circuits the added point to), into dl->circuits when any changed or
 * always (its entry in set comes without its circuits: the patch, empty or
 * not, says to keep the copy's). */
static void circuit_patch(struct arena *a, const struct circuits *o, const struct circuits *c,
			  const Ofc__V1__DeviceState *now, Ofc__V1__StateDelta *dl, size_t cap,
			  bool always)
{
	Ofc__V1__CircuitPatch *p = arena_alloc(a, sizeof(*p));
	uint32_t i = 0, j = 0;

	ofc__v1__circuit_patch__init(p);
	p->device = now->name;
	p->added = arena_array(a, c->n + 1, sizeof(*p->added));
	p->removed = arena_array(a, o->n + 1, sizeof(*p->removed));
	while (i < o->n || j < c->n) {
		int k = i == o->n ? 1 : j == c->n ? -1 : key_cmp(&o->key[2 * i], &c->key[2 * j]);
		bool same =
		    k == 0 && o->off[i + 1] - o->off[i] == c->off[j + 1] - c->off[j] &&
		    memcmp(o->buf + o->off[i], c->buf + c->off[j], o->off[i + 1] - o->off[i]) == 0;

		if (k <= 0 && !same) {
			Ofc__V1__Circuit *x = arena_alloc(a, sizeof(*x));

			ofc__v1__circuit__init(x);
			x->has_in_port = x->has_out_port = 1;
			x->in_port = o->key[2 * i];
			x->out_port = o->key[2 * i + 1];
			p->removed[p->n_removed++] = x;
		}
		if (k >= 0 && !same)
			p->added[p->n_added++] = now->circuits[j];
		i += k <= 0;
		j += k >= 0;
	}
	if ((always || p->n_added || p->n_removed) && dl->n_circuits < cap)
		dl->circuits[dl->n_circuits++] = p;
}

/* The devices that changed from old to now into set (and their circuits'
 * patches into dl): all of them, whole, when names came, went or moved; a
 * switch whose circuits changed in part as its patch, and the rest of it
 * without circuits when that changed too. */
static void devices_diff(struct arena *a, const struct state_view *old,
			 const struct state_view *now, const Ofc__V1__State *vs,
			 Ofc__V1__State *set, Ofc__V1__StateDelta *dl)
{
	dl->devices_whole = !names_same(old->dev, old->ndev, now->dev, now->ndev);
	dl->has_devices_whole = dl->devices_whole;
	set->devices = arena_array(a, now->ndev + 1, sizeof(*set->devices));
	dl->circuits = arena_array(a, now->ndev + 1, sizeof(*dl->circuits));
	for (uint32_t i = 0; i < now->ndev; i++) {
		const struct circuits *o = dl->devices_whole ? NULL : &old->circ[i],
				      *c = &now->circ[i];
		Ofc__V1__DeviceState *m = vs->devices[i];

		if (!o || !o->keyed || !c->keyed) {
			if (!o || !device_same(o, c))
				set->devices[set->n_devices++] = m;
			continue;
		}
		if (device_same(o, c))
			continue;
		bool rest = !part_same(&o->rest, &c->rest);

		if (rest) {
			Ofc__V1__DeviceState *r = arena_alloc(a, sizeof(*r));

			*r = *m;
			r->n_circuits = 0;
			r->circuits = NULL;
			set->devices[set->n_devices++] = r;
		}
		circuit_patch(a, o, c, m, dl, now->ndev, rest);
	}
}

/* The delta from old to now (vs: now's fields) into dl; whether anything
 * changed. */
static bool view_diff(struct arena *a, const struct state_view *old, const struct state_view *now,
		      const Ofc__V1__State *vs, Ofc__V1__StateDelta *dl)
{
	Ofc__V1__State *set = arena_alloc(a, sizeof(*set));
	bool any = false;

	ofc__v1__state__init(set);
	dl->set = set;
	dl->cleared = arena_array(a, NKEPT, sizeof(*dl->cleared));
	for (uint32_t k = 0; k < NKEPT; k++) {
		const ProtobufCFieldDescriptor *fd = state_field(kept_fields[k]);

		if (part_same(&old->field[k], &now->field[k]))
			continue;
		any = true;
		if (now->field[k].len)
			copy_field(set, vs, fd);
		else
			dl->cleared[dl->n_cleared++] = (char *)fd->name;
	}
	devices_diff(a, old, now, vs, set, dl);
	set->n_held = list_diff(a, old->held, old->nheld, now->held, now->nheld, (void **)vs->held,
				(void ***)&set->held, &dl->held_whole);
	dl->has_held_whole = dl->held_whole;
	return any || set->n_devices || set->n_held || dl->n_circuits || dl->devices_whole ||
	       dl->held_whole;
}

/* ---- describing a change ------------------------------------------------------------------ */

static uint64_t leadership(const struct ofcd *d)
{
	return d->store ? store_epoch(d->store) : 0;
}

/* Whether this replica numbers the log's events (so describes changes). */
static bool describes(const struct ofcd *d)
{
	return d->loop->snap && (!d->clustered || leadership(d));
}

/* The change since the last described into dl (allocated in a), or false
 * when nothing changed. The first a single ofcd describes is its start
 * (clients read it whole); a leader's first, read_again: it cannot know
 * what its predecessor left undescribed. */
static bool delta_now(struct ofcd *d, struct arena *a, Ofc__V1__StateDelta *dl)
{
	struct state_delta *sd = d->loop->delta;
	struct state_view now;
	Ofc__V1__State vs;
	bool any;

	if (!describes(d))
		return false;
	if (!sd)
		sd = d->loop->delta = xcalloc(1, sizeof(*sd));
	bool same_snap =
	    sd->have && sd->snap == d->loop->snap && sd->serial == d->loop->snap->serial;

	if (same_snap && sd->epoch == leadership(d) && sd->version == d->loop->version)
		return false;
	view_build(d, a, &vs, &now, same_snap ? &sd->last : NULL);
	ofc__v1__state_delta__init(dl);
	if (!sd->have || sd->epoch != leadership(d)) {
		any = sd->have || d->clustered;
		dl->has_read_again = 1;
		dl->read_again = true;
		dl->why = "a new leader: what changed before it took over is not described";
	} else {
		any = view_diff(a, &sd->last, &now, &vs, dl);
		size_t len = ofc__v1__state_delta__get_packed_size(dl);
		if (any && len > DELTA_MAX) {
			ofc__v1__state_delta__init(dl);
			dl->has_read_again = 1;
			dl->read_again = true;
			dl->why =
			    arena_printf(a,
					 "the change is %zu bytes, more than an event carries "
					 "(%zu): read the state",
					 len, DELTA_MAX);
		}
	}
	view_keep(&now);
	view_take(&now, &sd->last);
	view_free(&sd->last);
	sd->last = now;
	sd->have = true;
	sd->epoch = leadership(d);
	sd->version = d->loop->version;
	sd->snap = d->loop->snap;
	sd->serial = d->loop->snap->serial;
	return any;
}

void state_delta_attach(struct ofcd *d, Ofc__V1__Event *e, struct arena *a)
{
	Ofc__V1__StateDelta *dl = arena_alloc(a, sizeof(*dl));

	if (!e->delta && delta_now(d, a, dl))
		e->delta = dl;
}

/* A change no event carried goes out as KIND_STATE_CHANGED. */
void state_delta_check(struct ofcd *d)
{
	struct arena a = {0};
	Ofc__V1__Response r = OFC__V1__RESPONSE__INIT;
	Ofc__V1__Event e = OFC__V1__EVENT__INIT;
	Ofc__V1__StateDelta *dl = arena_alloc(&a, sizeof(*dl));

	if (delta_now(d, &a, dl)) {
		e.has_kind = e.has_time_unix_ms = 1;
		e.kind = OFC__V1__EVENT__KIND__KIND_STATE_CHANGED;
		e.time_unix_ms = unix_ms();
		e.delta = dl;
		r.has_status = 1;
		r.status = OFC__V1__STATUS__STATUS_OK;
		r.message = dl->read_again ? "state changed: read it again" : "state changed";
		r.body_case = OFC__V1__RESPONSE__BODY_EVENT;
		r.event = &e;
		event_log_emit(d, &r, NULL);
	}
	arena_free(&a);
}

void state_delta_start(struct ofcd *d)
{
	struct arena a = {0};
	Ofc__V1__StateDelta dl;

	(void)delta_now(d, &a, &dl); /* (a single ofcd: its start, described) */
	arena_free(&a);
}
