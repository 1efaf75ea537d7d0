/* The fabric's event log, on the loop thread: every event ofcd sends its
 * watchers (but a replica's own KIND_LEADER_CHANGED) is numbered here
 * (Event.seq, Event.log) and kept, the last EVLOG_KEEP, so that a watcher
 * that lost its connection resumes where it was (Watch.after_seq).
 *
 * A single ofcd numbers and sends at once; its log is in memory (a new
 * log id at each start). Replicas on etcd share one log in the store
 * (STORE_EVENTS, an ofc.v1.EventLog): the leader numbers its events on from
 * the last the store holds and writes them, a loop pass's together, in one
 * write guarded by its epoch like every other, and sends them to its own
 * watchers once written; every replica sends its watchers what its watch
 * of etcd delivers of the log (event_log_pull), a follower after the sync
 * that shows the state those events speak of. So every replica's watchers
 * get the same events with the same numbers, and a number is never given
 * twice: a deposed leader's write is refused, and its events with it. A
 * follower's own events (what it saw change in the store) go to its log
 * alone. Why one value rewritten rather than a key an event: the store's
 * items are whole values written in one guarded transaction, and the log
 * is small (EVLOG_MAX_BYTES). */
#include "controller/ofcd/conn.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

/* What the log keeps: the last EVLOG_KEEP events, fewer when they would
 * take more than EVLOG_MAX_BYTES (etcd refuses a request over 1.5 MiB),
 * but always the newest: an empty log written over a full one would take
 * every earlier event from the followers' watchers and a resuming watch,
 * and leave the next leader numbering on from less than the last given.
 * So an event is bounded: past EVLOG_EVENT_MAX without its delta, it is
 * kept without its schedule, then with its failed list cut (a lost switch
 * at 65,536 hosts fails 65,536 ports, some 600 KB of names; GetState has
 * them all); past EVLOG_WHOLE_MAX with its delta (state_delta.c bounds
 * that, so never yet), the delta says read_again. */
#define EVLOG_KEEP	256
#define EVLOG_MAX_BYTES ((size_t)512 << 10)
#define EVLOG_EVENT_MAX ((size_t)16 << 10)
#define EVLOG_WHOLE_MAX (EVLOG_MAX_BYTES / 4)

struct evrec {
	uint64_t seq;
	uint8_t *buf; /* a packed Response (its id unset) */
	size_t len;
	char *partition; /* the event's, for tenants (NULL: none) */
};

struct event_log {
	uint64_t log;	/* this log's id */
	uint64_t seq;	/* the last event numbered, sent or seen */
	uint64_t epoch; /* the leadership the numbering was taken up under */
	struct evrec ring[EVLOG_KEEP];
	uint32_t head, n; /* ring[head] the oldest of n */
	/* (a leader) packed Responses without their numbers, to write */
	struct evrec *pending;
	uint32_t npending;
	uint64_t timer;
	bool pull_after_sync; /* a follower pulls once its sync is published */
	/* (a follower) each device as the leader's events last said it, put
	 * on every snapshot the follower publishes (its own reads none) */
	struct devword {
		char *name, *error;
		bool up;
	} * dev;
	uint32_t ndev;
};

static uint64_t new_log_id(void)
{
	uint64_t v = 0;

	if (getrandom(&v, sizeof(v), 0) != (ssize_t)sizeof(v) || !v)
		v = unix_ms();
	return v & ((UINT64_C(1) << 53) - 1); /* (exact in JSON's numbers) */
}

/* This replica's leadership (0: it follows, or has no store). */
static uint64_t epoch_of(const struct ofcd *d)
{
	return d->store ? store_epoch(d->store) : 0;
}

static struct event_log *el_of(struct ofcd *d)
{
	if (!d->loop->evlog) {
		d->loop->evlog = xcalloc(1, sizeof(*d->loop->evlog));
		d->loop->evlog->log = new_log_id();
	}
	return d->loop->evlog;
}

static void rec_free(struct evrec *r)
{
	free(r->buf);
	free(r->partition);
	memset(r, 0, sizeof(*r));
}

void event_log_free(struct ofcd *d)
{
	struct event_log *el = d->loop->evlog;

	if (!el)
		return;
	for (uint32_t i = 0; i < el->n; i++)
		rec_free(&el->ring[(el->head + i) % EVLOG_KEEP]);
	for (uint32_t i = 0; i < el->npending; i++)
		rec_free(&el->pending[i]);
	free(el->pending);
	for (uint32_t i = 0; i < el->ndev; i++) {
		free(el->dev[i].name);
		free(el->dev[i].error);
	}
	free(el->dev);
	free(el);
	d->loop->evlog = NULL;
}

static void ring_clear(struct event_log *el)
{
	for (uint32_t i = 0; i < el->n; i++)
		rec_free(&el->ring[(el->head + i) % EVLOG_KEEP]);
	el->head = el->n = 0;
}

/* r (moved in) as the newest kept. */
static void ring_add(struct event_log *el, struct evrec *r)
{
	if (el->n == EVLOG_KEEP) {
		rec_free(&el->ring[el->head]);
		el->head = (el->head + 1) % EVLOG_KEEP;
		el->n--;
	}
	el->ring[(el->head + el->n) % EVLOG_KEEP] = *r;
	el->n++;
	memset(r, 0, sizeof(*r));
}

/* A watcher's copy of a kept event: c gets it under its Watch's id. */
static void send_rec(struct conn *c, const struct evrec *rec)
{
	Ofc__V1__Response *r = ofc__v1__response__unpack(NULL, rec->len, rec->buf);

	if (!r)
		return;
	r->has_id = 1;
	r->id = c->watch_id;
	/* A tenant's copy is its partitions' alone: the fabric's deltas are
	 * not for it (it reads its state again). */
	Ofc__V1__StateDelta *dl = r->event ? r->event->delta : NULL;
	if (dl && authz_is_tenant(c->watch_principal))
		r->event->delta = NULL;
	send_response(c, r);
	if (r->event)
		r->event->delta = dl;
	ofc__v1__response__free_unpacked(r, NULL);
}

/* Whether c hears an event of partition part: a tenant only its own
 * partitions' (part NULL: none). */
static bool hears(const struct conn *c, const char *part)
{
	if (!c->watching || c->dead)
		return false;
	return !authz_is_tenant(c->watch_principal) ||
	       (part && authz_owns(c->watch_principal, part));
}

static void send_all(struct ofcd *d, const struct evrec *rec)
{
	for (size_t i = 0; i < d->loop->nconns; i++)
		if (hears(d->loop->conns[i], rec->partition))
			send_rec(d->loop->conns[i], rec);
}

/* Event e's size but for its delta's. */
static size_t size_but_delta(Ofc__V1__Response *r)
{
	Ofc__V1__StateDelta *dl = r->event->delta;

	r->event->delta = NULL;
	size_t n = ofc__v1__response__get_packed_size(r);
	r->event->delta = dl;
	return n;
}

/* e's failed list cut to its first names, so that e but for its delta
 * takes at most EVLOG_EVENT_MAX; its message says so (msg: room for it,
 * the caller's). */
static void cut_failed(Ofc__V1__Response *r, char *msg, size_t msg_len)
{
	Ofc__V1__Event *e = r->event;
	size_t n = e->n_failed, keep = 0;

	/* what the rest takes, with the sentence below at its longest */
	e->n_failed = 0;
	size_t rest = size_but_delta(r) + msg_len + 8;
	for (size_t used = 0; keep < n && rest < EVLOG_EVENT_MAX; keep++) {
		used += strlen(e->failed[keep]) + 3; /* (a tag, a length of up to 2 bytes) */
		if (rest + used > EVLOG_EVENT_MAX)
			break;
	}
	e->n_failed = keep;
	e->has_failed_left_out = 1;
	e->failed_left_out = (uint32_t)(n - keep);
	/* (the message's own words cut, where long, to leave room for these) */
	char says[120];
	int m =
	    snprintf(says, sizeof(says),
		     "failed lists %zu of %zu failures (GetState's failed has them all)", keep, n);
	const char *was = e->message ? e->message : "";
	int room = (int)msg_len - m - 8;
	/* (at a character's start: a string field is UTF-8) */
	while (room > 0 && (int)strlen(was) > room && ((unsigned char)was[room] & 0xc0) == 0x80)
		room--;
	snprintf(msg, msg_len, "%.*s%s%s%s", room, was, (int)strlen(was) > room ? "..." : "",
		 *was ? "; " : "", says);
	e->message = msg;
}

/* A packed copy of r with its number, bounded (see EVLOG_EVENT_MAX). r is
 * left as it came, but for its id and number. */
static void pack_numbered(struct event_log *el, Ofc__V1__Response *r, uint64_t seq,
			  struct evrec *out)
{
	Ofc__V1__Event *e = r->event;
	Ofc__V1__Event keep = *e;
	Ofc__V1__StateDelta again;
	char msg[1200];

	r->has_id = 0;
	e->has_seq = e->has_log = 1;
	e->seq = seq;
	e->log = el->log;
	if (size_but_delta(r) > EVLOG_EVENT_MAX)
		e->schedule = NULL; /* (GetState and GetSchedule have it) */
	if (size_but_delta(r) > EVLOG_EVENT_MAX && e->n_failed)
		cut_failed(r, msg, sizeof(msg));
	if (e->delta && ofc__v1__response__get_packed_size(r) > EVLOG_WHOLE_MAX) {
		ofc__v1__state_delta__init(&again);
		again.has_read_again = again.read_again = 1;
		again.why = "the change is more than an event carries: read the state";
		e->delta = &again;
	}
	out->seq = seq;
	out->len = ofc__v1__response__get_packed_size(r);
	out->buf = xmalloc(out->len ? out->len : 1);
	ofc__v1__response__pack(r, out->buf);
	e->schedule = keep.schedule;
	e->n_failed = keep.n_failed;
	e->has_failed_left_out = keep.has_failed_left_out;
	e->failed_left_out = keep.failed_left_out;
	e->message = keep.message;
	e->delta = keep.delta;
}

static int64_t flush_timer(struct loop *l, uint64_t id, void *ctx);

void event_log_emit(struct ofcd *d, Ofc__V1__Response *r, const char *partition)
{
	struct event_log *el = el_of(d);
	struct evrec rec = {0};

	if (!d->clustered) {
		pack_numbered(el, r, ++el->seq, &rec);
		rec.partition = partition ? xstrdup(partition) : NULL;
		send_all(d, &rec);
		ring_add(el, &rec);
		return;
	}
	/* A follower's own events (what its sync saw) are the leader's
	 * already, in the log it will pull. */
	if (!epoch_of(d))
		return;
	r->has_id = 0;
	rec.len = ofc__v1__response__get_packed_size(r);
	rec.buf = xmalloc(rec.len ? rec.len : 1);
	ofc__v1__response__pack(r, rec.buf);
	rec.partition = partition ? xstrdup(partition) : NULL;
	el->pending = xreallocarray(el->pending, el->npending + 1, sizeof(*el->pending));
	el->pending[el->npending++] = rec;
	if (!el->timer)
		el->timer = loop_timer(d->loop->ev, 0, flush_timer, d);
}

uint64_t event_log_seq(struct ofcd *d, uint64_t *log)
{
	struct event_log *el = el_of(d);

	*log = el->log;
	return el->seq;
}

/* ---- the store's log ------------------------------------------------------------------- */

/* On a follower, what the leader found of a device is this replica's
 * view of it too (a follower reads no device): kept, and put on the
 * snapshot shown now. */
static void follow_word(struct ofcd *d, const char *name, bool up, const char *error)
{
	struct event_log *el = el_of(d);
	uint32_t i;

	for (i = 0; i < el->ndev && strcmp(el->dev[i].name, name) != 0; i++)
		;
	if (i == el->ndev) {
		el->dev = xreallocarray(el->dev, el->ndev + 1, sizeof(*el->dev));
		el->dev[el->ndev++] = (struct devword){xstrdup(name), NULL, false};
	}
	free(el->dev[i].error);
	el->dev[i].error = !up && error ? xstrdup(error) : NULL;
	el->dev[i].up = up;
	ofcd_set_reachable(d, ofcd_snap_dev(d->loop->snap, name), up, el->dev[i].error, OFC_R_NONE);
}

static void follow_device(struct ofcd *d, const Ofc__V1__Event *e)
{
	bool lost = e->kind == OFC__V1__EVENT__KIND__KIND_DEVICE_LOST;
	const Ofc__V1__State *set = e->delta ? e->delta->set : NULL;

	if (epoch_of(d))
		return;
	if (e->device && (lost || e->kind == OFC__V1__EVENT__KIND__KIND_DEVICE_BACK))
		follow_word(d, e->device, !lost, e->message);
	/* (what the leader's delta says of a device it read: that too) */
	for (size_t i = 0; set && i < set->n_devices; i++)
		if (set->devices[i]->name && set->devices[i]->has_reachable)
			follow_word(d, set->devices[i]->name, set->devices[i]->reachable,
				    set->devices[i]->error);
}

/* (a follower) the leader's word of each device on the snapshot just
 * published */
static void follow_devices(struct ofcd *d)
{
	struct event_log *el = el_of(d);

	for (uint32_t i = 0; i < el->ndev && !epoch_of(d); i++)
		ofcd_set_reachable(d, ofcd_snap_dev(d->loop->snap, el->dev[i].name), el->dev[i].up,
				   el->dev[i].error, OFC_R_NONE);
}

static Ofc__V1__EventLog *read_log(struct ofcd *d)
{
	struct ofc_error err = {0};
	char *data = NULL;
	size_t len = 0;
	bool missing = false;
	Ofc__V1__EventLog *lg = NULL;

	if (store_get(d->store, d->loop->cfg->f->name, STORE_EVENTS, 2 * EVLOG_MAX_BYTES, &data,
		      &len, &missing, &err) < 0)
		ofcd_log(d, OFCD_LOG_WARNING, "the event log in the store cannot be read: %s",
			 err.msg);
	else if (!missing && !(lg = ofc__v1__event_log__unpack(NULL, len, (uint8_t *)data)))
		ofcd_log(d, OFCD_LOG_WARNING,
			 "the event log in the store (%zu bytes) is no EventLog: watchers hear "
			 "this replica's events from the next the leader writes",
			 len);
	free(data);
	return lg;
}

/* Send what the store's log holds past the last event this replica
 * sent, and keep it. */
static void pull_now(struct ofcd *d)
{
	struct event_log *el = el_of(d);
	Ofc__V1__EventLog *lg = read_log(d);

	if (!lg)
		return;
	if (lg->has_log && lg->log != el->log) {
		/* another log: its numbering from its start */
		ring_clear(el);
		el->log = lg->log;
		el->seq = 0;
	}
	for (size_t i = 0; i < lg->n_events; i++) {
		Ofc__V1__Response *r = lg->events[i];
		Ofc__V1__Event *e = r->event;
		struct evrec rec = {0};

		/* (the leader's tickets: the next leader numbers on from them) */
		if (e && e->has_ticket && e->ticket > d->loop->next_ticket)
			d->loop->next_ticket = e->ticket;
		if (!e || !e->has_seq || e->seq <= el->seq)
			continue;
		follow_device(d, e);
		rec.seq = e->seq;
		rec.len = ofc__v1__response__get_packed_size(r);
		rec.buf = xmalloc(rec.len ? rec.len : 1);
		ofc__v1__response__pack(r, rec.buf);
		rec.partition = e->partition ? xstrdup(e->partition) : NULL;
		send_all(d, &rec);
		ring_add(el, &rec);
		el->seq = e->seq;
	}
	ofc__v1__event_log__free_unpacked(lg, NULL);
}

uint64_t event_log_last_ticket(struct ofcd *d)
{
	Ofc__V1__EventLog *lg = d->clustered && d->store ? read_log(d) : NULL;
	uint64_t top = 0;

	for (size_t i = 0; lg && i < lg->n_events; i++) {
		const Ofc__V1__Event *e = lg->events[i]->event;

		if (e && e->has_ticket && e->ticket > top)
			top = e->ticket;
	}
	if (lg)
		ofc__v1__event_log__free_unpacked(lg, NULL);
	return top;
}

void event_log_pull(struct ofcd *d)
{
	struct event_log *el = el_of(d);
	bool syncing =
	    d->loop->cluster_job || (d->loop->running && (d->loop->running->kind == JOB_SYNC ||
							  d->loop->running->kind == JOB_TAKEOVER));

	if (!d->clustered || !d->store)
		return;
	/* A follower's watchers hear of a change once it shows it. */
	if (syncing && !epoch_of(d)) {
		el->pull_after_sync = true;
		return;
	}
	el->pull_after_sync = false;
	pull_now(d);
}

void event_log_synced(struct ofcd *d)
{
	if (d->clustered)
		follow_devices(d);
	if (d->loop->evlog && d->loop->evlog->pull_after_sync)
		event_log_pull(d);
}

/* The log as the store will hold it: what this replica keeps, then the
 * fresh events (numbered), the oldest dropped past the bounds; written in
 * one guarded write, then sent and kept. Written or not, fresh is left
 * for the caller to free. */
static void write_log(struct ofcd *d, struct event_log *el, struct evrec *fresh, uint32_t nfresh)
{
	Ofc__V1__EventLog lg = OFC__V1__EVENT_LOG__INIT;
	uint32_t total = el->n + nfresh, first = total;
	const struct evrec **recs = xcalloc(total, sizeof(*recs));
	size_t bytes = 0;
	struct ofc_error err = {0};

	for (uint32_t i = 0; i < total; i++)
		recs[i] = i < el->n ? &el->ring[(el->head + i) % EVLOG_KEEP] : &fresh[i - el->n];
	/* the newest that fit, and the newest whatever its size (pack_numbered
	 * bounds it) */
	while (first > 0 && total - first < EVLOG_KEEP &&
	       (first == total || bytes + recs[first - 1]->len + 8 <= EVLOG_MAX_BYTES))
		bytes += recs[--first]->len + 8;
	lg.has_log = 1;
	lg.log = el->log;
	lg.events = xcalloc(total - first + 1, sizeof(*lg.events));
	for (uint32_t i = first; i < total; i++)
		if ((lg.events[lg.n_events] =
			 ofc__v1__response__unpack(NULL, recs[i]->len, recs[i]->buf)))
			lg.n_events++;
	size_t len = ofc__v1__event_log__get_packed_size(&lg);
	uint8_t *buf = xmalloc(len ? len : 1);
	ofc__v1__event_log__pack(&lg, buf);
	struct store_write w = {STORE_EVENTS, buf, len};
	if (store_write(d->store, d->loop->cfg->f->name, &w, 1, &err) < 0) {
		ofcd_log(d, OFCD_LOG_WARNING, "%u event%s not sent: the event log not written: %s",
			 nfresh, nfresh == 1 ? "" : "s", err.msg);
	} else {
		for (uint32_t i = 0; i < nfresh; i++) {
			send_all(d, &fresh[i]);
			el->seq = fresh[i].seq;
			ring_add(el, &fresh[i]);
		}
	}
	for (size_t i = 0; i < lg.n_events; i++)
		ofc__v1__response__free_unpacked(lg.events[i], NULL);
	free(lg.events);
	free(recs);
	free(buf);
}

static int64_t flush_timer(struct loop *l, uint64_t id, void *ctx)
{
	struct ofcd *d = ctx;
	struct event_log *el = el_of(d);
	uint64_t epoch = epoch_of(d);
	uint32_t n = el->npending, k = 0;
	struct evrec *fresh = xcalloc(n ? n : 1, sizeof(*fresh));

	(void)l;
	(void)id;
	el->timer = 0;
	/* A new leadership numbers on from what the store holds. */
	if (epoch && epoch != el->epoch) {
		pull_now(d);
		el->epoch = epoch;
	}
	for (uint32_t i = 0; epoch && i < n; i++) {
		Ofc__V1__Response *r =
		    ofc__v1__response__unpack(NULL, el->pending[i].len, el->pending[i].buf);

		if (r && r->event) {
			pack_numbered(el, r, el->seq + 1 + k, &fresh[k]);
			fresh[k++].partition = el->pending[i].partition;
			el->pending[i].partition = NULL;
		}
		if (r)
			ofc__v1__response__free_unpacked(r, NULL);
	}
	if (k)
		write_log(d, el, fresh, k);
	for (uint32_t i = 0; i < n; i++) {
		rec_free(&el->pending[i]);
		rec_free(&fresh[i]);
	}
	free(fresh);
	el->npending = 0;
	return LOOP_NOMORE;
}

void event_log_flush(struct ofcd *d)
{
	struct event_log *el = d->loop->evlog;
	uint64_t id = el ? el->timer : 0;

	if (!id)
		return;
	loop_timer_del(d->loop->ev, id);
	flush_timer(d->loop->ev, id, d);
}

/* ---- a watcher resuming ---------------------------------------------------------------- */

void event_log_resume(struct ofcd *d, struct conn *c, uint64_t after, uint64_t log)
{
	struct event_log *el = el_of(d);

	/* (another log's numbers say nothing of this one's: all it keeps) */
	if (log && log != el->log)
		after = 0;
	for (uint32_t i = 0; i < el->n; i++) {
		const struct evrec *r = &el->ring[(el->head + i) % EVLOG_KEEP];

		if (r->seq > after && hears(c, r->partition))
			send_rec(c, r);
	}
}
