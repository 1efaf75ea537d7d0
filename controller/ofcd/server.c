/* ofcd's loop side: the control sockets, connections, frames, peer
 * credentials, answers to reads from the published snapshot, and the queue
 * of mutations (docs/control.md, docs/ARCHITECTURE.md "ofcd").
 *
 * Every connection is non-blocking with its own input and output buffers.
 * A frame larger than the limit is answered with an error and the
 * connection closed (there is no way to resynchronise without reading it);
 * a frame that is not a Request is answered with an error and the
 * connection kept (the framing is intact). A client that leaves half a
 * request or an unread reply for longer than the client timeout, or lets
 * unread replies grow past the limit, is disconnected. While a client's
 * unsent replies exceed OUT_HIGH its further requests wait in the kernel:
 * pipelining cannot make the daemon buffer without bound. Nothing a client
 * does blocks the loop; mutations and schedules run on the workers. */
#include "controller/ofcd/conn.h"
#include "controller/ofcd/internal.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "proto/state.pb-c.h"

#ifndef SO_PEERGROUPS
#define SO_PEERGROUPS 59
#endif

#define ACCEPT_BACKOFF_MIN 50	      /* ms the listeners rest after EMFILE, doubling ... */
#define ACCEPT_BACKOFF_MAX 1000	      /* ... up to this */
#define ACCEPT_LOG_EVERY   60.0	      /* s between two lines about it */
#define READ_BUDGET	   (1u << 20) /* bytes read from one client per wake-up (fairness) */
#define DRAIN_SECONDS	   2.0	      /* on stop: time to send what is queued */

static const char *const status_names[] = {"ok",	  "invalid",   "denied",    "busy",
					   "failed",	  "not-found", "cancelled", "internal",
					   "unavailable", "not-leader"};

void changed(struct ofcd *d)
{
	d->version++;
}

/* ---- connections: output ------------------------------------------------------------ */

size_t conn_unsent(const struct conn *c)
{
	return c->out.len - c->out.off;
}

/* Charge buffers of in_cap and out_cap bytes to the connection's user.
 * Growing past max_buffer_per_uid is refused (false, nothing changed);
 * shrinking always works. */
bool conn_charge(struct conn *c, size_t in_cap, size_t out_cap)
{
	struct uid_use *u = c->use;
	size_t now = in_cap + out_cap;

	if (now > c->charged && u->bytes - c->charged + now > c->d->o.max_buffer_per_uid)
		return false;
	u->bytes = u->bytes - c->charged + now;
	c->charged = now;
	return true;
}

/* The largest request this connection may send: anyone can reach the
 * read-only socket, and its requests are all small. */
uint32_t conn_max_frame(const struct conn *c)
{
	return c->ro ? c->d->o.max_ro_frame : c->d->o.max_frame;
}

/* What the request being answered may see: the read-only socket's view
 * (device failures as a word, no credentials paths, the smaller budgets)
 * for the read-only socket and for every principal but an admin. */
bool conn_public(const struct conn *c)
{
	return c->ro ||
	       (c->principal && c->principal->role != OFC__V1__PRINCIPAL__ROLE__ROLE_ADMIN);
}

void conn_kill(struct conn *c, int level, const char *fmt, ...)
{
	char why[600];
	va_list ap;

	if (c->dead)
		return;
	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	if (why[0])
		ofcd_log_peer(c->d, level, "closing the connection of uid %u pid %d: %s",
			      c->peer.uid, c->peer.pid, why);
	c->dead = true;
	conn_stream_drop(c);
	loop_del(c->d->loop, c->fd, LOOP_READ | LOOP_WRITE);
}

void conn_read_pause(struct conn *c, bool pause)
{
	if (pause && c->reading)
		loop_del(c->d->loop, c->fd, LOOP_READ);
	else if (!pause && !c->reading && !c->dead &&
		 loop_add(c->d->loop, c->fd, LOOP_READ, NULL, NULL) < 0)
		return;
	c->reading = !pause;
}

/* Tell a stream's thread that k of its frames are out of the way (and,
 * with cancel, to stop). */
static void stream_ack(struct stream *st, uint32_t k, bool cancel)
{
	pthread_mutex_lock(&st->mu);
	st->inflight -= k < st->inflight ? k : st->inflight;
	if (cancel)
		st->cancel = true;
	pthread_cond_signal(&st->cond);
	pthread_mutex_unlock(&st->mu);
}

void conn_stream_drop(struct conn *c)
{
	if (c->stream)
		stream_ack(c->stream, c->stream_owed, true);
	c->stream = NULL;
	c->stream_owed = 0;
}

void conn_flush(struct conn *c)
{
	struct ofcd *d = c->d;

	while (conn_unsent(c)) {
		ssize_t k =
		    send(c->fd, c->out.b + c->out.off, conn_unsent(c), MSG_NOSIGNAL | MSG_DONTWAIT);

		if (k < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN)
				break;
			conn_kill(c, OFCD_LOG_INFO, "write: %s", strerror(errno));
			return;
		}
		c->out.off += (size_t)k;
		c->out_since = now_seconds();
	}
	if (c->stream && c->stream_owed && conn_unsent(c) < OUT_HIGH) {
		stream_ack(c->stream, c->stream_owed, false);
		c->stream_owed = 0;
	}
	if (conn_unsent(c)) {
		loop_add(d->loop, c->fd, LOOP_WRITE, NULL, NULL);
		if (conn_unsent(c) > OUT_HIGH)
			conn_read_pause(c, true);
		return;
	}
	c->out.off = c->out.len = 0;
	if (c->out.cap > BUF_KEEP) { /* a big answer went out: give it back */
		free(c->out.b);
		c->out.b = NULL;
		c->out.cap = 0;
		conn_charge(c, c->in_cap, 0);
	}
	loop_del(d->loop, c->fd, LOOP_WRITE);
	if (c->closing) {
		conn_kill(c, OFCD_LOG_DEBUG, "%s", "");
		return;
	}
	if (!c->reading) {
		conn_read_pause(c, false);
		conn_process_input(c); /* requests that waited in the buffer */
	}
}

/* Queue one frame made of parts a and b (either may be empty). */
void conn_queue(struct conn *c, const void *a, size_t alen, const void *b, size_t blen)
{
	struct ofcd *d = c->d;
	size_t n = alen + blen, limit = (size_t)d->o.max_frame + (8u << 20);

	if (c->dead)
		return;
	if (conn_unsent(c) + n + 4 > limit) {
		conn_kill(c, OFCD_LOG_WARNING, "%zu bytes of replies unread (slow client)",
			  conn_unsent(c) + n);
		return;
	}
	if (!conn_unsent(c))
		c->out_since = now_seconds();
	if (c->out.off && c->out.len + n + 4 > c->out.cap) {
		memmove(c->out.b, c->out.b + c->out.off, conn_unsent(c));
		c->out.len -= c->out.off;
		c->out.off = 0;
	}
	if (c->out.len + n + 4 > c->out.cap) {
		size_t cap = (c->out.len + n + 4) * 3 / 2 + 256;

		if (!conn_charge(c, c->in_cap, cap)) {
			conn_kill(c, OFCD_LOG_WARNING,
				  "uid %u would hold more than %llu bytes in buffers "
				  "(--max-buffer-per-uid) with %zu bytes of replies unread",
				  c->peer.uid, (unsigned long long)d->o.max_buffer_per_uid,
				  conn_unsent(c) + n);
			return;
		}
		c->out.cap = cap;
		c->out.b = xrealloc(c->out.b, c->out.cap);
	}
	frame_len_put(c->out.b + c->out.len, (uint32_t)n);
	if (alen)
		memcpy(c->out.b + c->out.len + 4, a, alen);
	if (blen)
		memcpy(c->out.b + c->out.len + 4 + alen, b, blen);
	c->out.len += n + 4;
	conn_flush(c);
}

void send_response(struct conn *c, const Ofc__V1__Response *r)
{
	if (c->replay) {
		if (r->has_status && r->status != OFC__V1__STATUS__STATUS_OK)
			ofcd_log(c->d, OFCD_LOG_WARNING,
				 "a mutation the last leader queued is not run here: %s",
				 r->message ? r->message : "(no reason)");
		return;
	}
	size_t n = protobuf_c_message_get_packed_size(&r->base);
	uint8_t small[512], *buf = n <= sizeof(small) ? small : xmalloc(n);

	protobuf_c_message_pack(&r->base, buf);
	if (n > c->d->o.max_frame) {
		Ofc__V1__Response e = OFC__V1__RESPONSE__INIT;
		char msg[200];

		snprintf(msg, sizeof(msg),
			 "the answer is %zu bytes, more than the frame limit of %u bytes", n,
			 c->d->o.max_frame);
		e.has_id = e.has_status = 1;
		e.id = r->id;
		e.status = OFC__V1__STATUS__STATUS_INVALID;
		e.message = msg;
		send_response(c, &e);
	} else {
		conn_queue(c, buf, n, NULL, 0);
	}
	if (buf != small)
		free(buf);
}

int reply(struct conn *c, uint64_t id, Ofc__V1__Status st, const char *fmt, ...)
{
	Ofc__V1__Response r = OFC__V1__RESPONSE__INIT;
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	r.has_id = r.has_status = 1;
	r.id = id;
	r.status = st;
	r.message = msg;
	if (st != OFC__V1__STATUS__STATUS_OK)
		c->d->errors++;
	send_response(c, &r);
	return 0;
}

/* reply(), for a check that refuses: -1. */
int refuse_req(struct conn *c, uint64_t id, Ofc__V1__Status st, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	reply(c, id, st, "%s", msg);
	return -1;
}

struct conn *conn_find(struct ofcd *d, uint64_t id)
{
	for (size_t i = 0; i < d->nconns; i++)
		if (d->conns[i]->id == id && !d->conns[i]->dead)
			return d->conns[i];
	return NULL;
}

/* ---- the mutation queue -------------------------------------------------------------- */

/* A mutation (a transaction, queued with a ticket), not the daemon's own
 * device probe or installing the planner's result. */
bool is_mutation(const struct job *j)
{
	return j->kind != JOB_PROBE && j->kind != JOB_PLAN && j->kind != JOB_TAKEOVER &&
	       j->kind != JOB_SYNC;
}

void ofcd_hand_to_worker(struct ofcd *d, struct job *j)
{
	d->running = j;
	d->running_txn = 0;
	d->running_state = "running";
	j->t0 = now_seconds();
	pthread_mutex_lock(&d->mu);
	d->mjob = j;
	pthread_cond_broadcast(&d->cond);
	pthread_mutex_unlock(&d->mu);
}

void ofcd_maybe_start(struct ofcd *d)
{
	struct job *j = d->queue;

	if (d->running)
		return;
	/* A replica's takeover or sync first: what it leads or
	 * follows is the state everything after it works on. */
	if (d->cluster_job) {
		j = d->cluster_job;
		d->cluster_job = NULL;
		j->reload = d->cl_reload;
		ofcd_hand_to_worker(d, j);
		changed(d);
		return;
	}
	/* The planner's result first: a failure waiting for it re-plans from
	 * the MCF solution it keeps. */
	if (d->plan_job) {
		j = d->plan_job;
		d->plan_job = NULL;
		ofcd_hand_to_worker(d, j);
		changed(d);
		return;
	}
	/* Mutations wait for the planner (at most PLAN_HOLD_SECONDS), and
	 * for a takeover's replay to queue them all. */
	if (!j || d->q_replaying || (d->planner && now_seconds() < d->plan_hold_until))
		return;
	d->queue = j->next;
	if (!d->queue)
		d->queue_tail = NULL;
	d->nqueue--;
	j->next = NULL;
	if (queue_start(d, j)) /* its key's recorded outcome: not run again */
		ofcd_job_done(d, j);
	else
		ofcd_hand_to_worker(d, j);
	changed(d);
}

/* Take the queue's last job out again (its write to etcd's queue failed). */
static void unqueue_tail(struct ofcd *d, struct job *j)
{
	struct job *prev = NULL;

	for (struct job *x = d->queue; x && x != j; x = x->next)
		prev = x;
	if (prev)
		prev->next = NULL;
	else
		d->queue = NULL;
	d->queue_tail = prev;
	d->nqueue--;
}

/* Whether ofcd_maybe_start would hand j, the queue's only job, over at once. */
static bool starts_now(const struct ofcd *d, const struct job *j)
{
	return !d->running && !d->cluster_job && !d->plan_job && d->queue == j &&
	       !(d->planner && now_seconds() < d->plan_hold_until);
}

/* rq: the request j answers (NULL: none, a reload's). */
void enqueue(struct ofcd *d, struct job *j, const struct request *rq)
{
	char msg[600];
	struct ofc_error err = {0};

	j->ticket = ++d->next_ticket;
	outcome_adopt(d, j, is_mutation(j), rq ? rq->raw : NULL, rq ? rq->len : 0, rq && rq->c->gw);
	queue_append(d, j);
	/* A replica's waiting mutations are in etcd before they are
	 * queued (one that starts at once is the journal's instead). */
	if (queue_kept(d, j) && !starts_now(d, j) && queue_persist(d, &err) < 0) {
		struct conn *c = conn_find(d, j->conn_id);

		unqueue_tail(d, j);
		ofcd_log(d, OFCD_LOG_WARNING, "%s %s not queued: %s", job_kind_name(j->kind),
			 j->target, err.msg);
		if (c)
			reply(c, j->req_id,
			      err.reason == OFC_R_FENCED ? OFC__V1__STATUS__STATUS_NOT_LEADER
							 : OFC__V1__STATUS__STATUS_UNAVAILABLE,
			      "%s", err.msg);
		d->next_ticket--;
		job_free(j);
		return;
	}
	char from[160];
	snprintf(msg, sizeof(msg), "ticket %llu: %s %s from %s (%u ahead)",
		 (unsigned long long)j->ticket, job_kind_name(j->kind), j->target,
		 job_from_words(j, from, sizeof(from)),
		 d->nqueue - 1 + (d->running && is_mutation(d->running)));
	ofcd_log(d, OFCD_LOG_INFO, "queued %s", msg);
	ofcd_broadcast_event(d, OFC__V1__EVENT__KIND__KIND_REQUEST_QUEUED, 0, j->ticket, NULL, msg,
			     msg, unix_ms(), NULL);
	changed(d);
	ofcd_maybe_start(d);
}

/* Take a queued mutation out; answer its client CANCELLED. */
void cancel_job(struct ofcd *d, struct job *j, const char *why)
{
	struct job **pp = &d->queue, *prev = NULL;
	struct conn *c;

	for (; *pp && *pp != j; pp = &(*pp)->next)
		prev = *pp;
	if (!*pp)
		return;
	*pp = j->next;
	if (d->queue_tail == j)
		d->queue_tail = prev;
	d->nqueue--;
	if (queue_kept(d, j)) {
		struct ofc_error e = {0};

		if (queue_persist(d, &e) < 0)
			ofcd_log(d, OFCD_LOG_WARNING,
				 "ticket %llu is cancelled, but etcd's queue still lists it (%s): "
				 "a next leader may run it",
				 (unsigned long long)j->ticket, e.msg);
	}
	c = conn_find(d, j->conn_id);
	if (c)
		reply(c, j->req_id, OFC__V1__STATUS__STATUS_CANCELLED, "ticket %llu (%s %s) %s",
		      (unsigned long long)j->ticket, job_kind_name(j->kind), j->target, why);
	ofcd_log(d, OFCD_LOG_NOTICE, "ticket %llu (%s %s) %s", (unsigned long long)j->ticket,
		 job_kind_name(j->kind), j->target, why);
	char msg[600];
	snprintf(msg, sizeof(msg), "ticket %llu (%s %s) %s", (unsigned long long)j->ticket,
		 job_kind_name(j->kind), j->target, why);
	d->ev_job = j;
	ofcd_broadcast_event(d, OFC__V1__EVENT__KIND__KIND_REQUEST_CANCELLED, 0, j->ticket, NULL,
			     msg, msg, unix_ms(), NULL);
	d->ev_job = NULL;
	job_free(j);
	changed(d);
}

/* Answer every complete frame in the input buffer. */
void conn_process_input(struct conn *c)
{
	struct ofcd *d = c->d;
	size_t off = 0;
	uint32_t max = conn_max_frame(c);

	while (!c->dead && !c->closing && c->reading && c->in_len - off >= 4) {
		uint32_t len = frame_len_get(c->in + off);

		if (len > max) {
			ofcd_log_peer(d, OFCD_LOG_WARNING,
				      "uid %u pid %d announced a frame of %u bytes (limit %u%s): "
				      "closing",
				      c->peer.uid, c->peer.pid, len, max,
				      c->ro ? " on the read-only socket" : "");
			/* Answered, then closed once the answer is out. */
			c->closing = true;
			conn_read_pause(c, true);
			reply(
			    c, 0, OFC__V1__STATUS__STATUS_INVALID,
			    "frame of %u bytes is larger than the limit of %u bytes%s; closing the "
			    "connection",
			    len, max, c->ro ? " on the read-only socket" : "");
			off = c->in_len;
			break;
		}
		if (c->in_len - off - 4 < len)
			break;
		c->d->chain.frame(c, c->in + off + 4, len);
		off += 4 + (size_t)len;
	}
	if (off) {
		memmove(c->in, c->in + off, c->in_len - off);
		c->in_len -= off;
		c->in_since = 0;
	}
	if (c->in_len && !c->in_since)
		c->in_since = now_seconds();
	if (c->in_cap > BUF_KEEP && c->in_len < IN_INITIAL) {
		c->in_cap = IN_INITIAL;
		c->in = xrealloc(c->in, c->in_cap);
		conn_charge(c, c->in_cap, c->out.cap);
	}
}

static void conn_event(struct loop *l, int fd, void *ctx, unsigned mask)
{
	struct conn *c = ctx;
	struct ofcd *d = c->d;
	size_t budget = READ_BUDGET;

	(void)l;
	if ((mask & LOOP_WRITE) && !c->dead)
		conn_flush(c);
	while ((mask & LOOP_READ) && c->reading && !c->dead && budget) {
		size_t want;
		ssize_t k;

		/* Room for the frame being received, up to the frame limit,
		 * doubling as bytes arrive: what a frame's header announces
		 * is not taken on trust, so a stalled half-frame holds what
		 * was sent, not what was promised. */
		if (c->in_len == c->in_cap) {
			size_t need = c->in_cap * 2;
			size_t max = (size_t)conn_max_frame(c) + 4;

			if (c->in_len >= 4 && frame_len_get(c->in) + 4u > c->in_cap &&
			    frame_len_get(c->in) + 4u < need)
				need = frame_len_get(c->in) + 4u;
			need = need > max ? max : need;
			if (need <= c->in_cap)
				break; /* cannot happen: conn_process_input closes on oversize */
			if (!conn_charge(c, need, c->out.cap)) {
				ofcd_log_peer(d, OFCD_LOG_WARNING,
					      "uid %u pid %d would have more than %llu bytes in "
					      "ofcd's buffers (--max-buffer-per-uid): closing this "
					      "connection",
					      c->peer.uid, c->peer.pid,
					      (unsigned long long)d->o.max_buffer_per_uid);
				/* What it sent goes, to make room for the answer. */
				c->closing = true;
				conn_read_pause(c, true);
				c->in_len = 0;
				c->in_since = 0;
				c->in_cap = IN_INITIAL;
				c->in = xrealloc(c->in, c->in_cap);
				conn_charge(c, c->in_cap, c->out.cap);
				reply(
				    c, 0, OFC__V1__STATUS__STATUS_BUSY,
				    "uid %u would have more than %llu bytes in ofcd's buffers, the "
				    "limit per user; closing the connection",
				    c->peer.uid, (unsigned long long)d->o.max_buffer_per_uid);
				break;
			}
			c->in = xrealloc(c->in, need);
			c->in_cap = need;
		}
		want = c->in_cap - c->in_len;
		k = recv(fd, c->in + c->in_len, want < budget ? want : budget, 0);
		if (k == 0) {
			if (c->in_len)
				conn_kill(c, OFCD_LOG_INFO,
					  "went away in the middle of a request (%zu bytes)",
					  c->in_len);
			else
				conn_kill(c, OFCD_LOG_DEBUG, "%s", "");
			break;
		}
		if (k < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN)
				conn_kill(c, OFCD_LOG_INFO, "read: %s", strerror(errno));
			break;
		}
		c->in_len += (size_t)k;
		budget -= (size_t)k;
		conn_process_input(c);
	}
	conn_reap(d);
}

/* ---- accepting ---------------------------------------------------------------------------- */

static bool in_admin_group(const struct ofcd *d, int fd, const struct ucred *cr)
{
	gid_t small[64], *g = small;
	socklen_t len = sizeof(small);
	bool yes = false;

	if (!d->o.have_admin_group)
		return false;
	if (cr->gid == d->o.admin_gid)
		return true;
	/* Supplementary groups of the peer as they were at connect(). */
	if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, g, &len) != 0) {
		if (errno != ERANGE)
			return false;
		g = xmalloc(len);
		if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, g, &len) != 0)
			len = 0;
	}
	for (size_t i = 0; i < len / sizeof(gid_t); i++)
		yes |= g[i] == d->o.admin_gid;
	if (g != small)
		free(g);
	return yes;
}

/* Answer BUSY with why, and close. */
static void refuse(int fd, const char *why)
{
	Ofc__V1__Response r = OFC__V1__RESPONSE__INIT;
	uint8_t buf[300];
	size_t n;

	r.has_status = 1;
	r.status = OFC__V1__STATUS__STATUS_BUSY;
	r.message = (char *)why;
	n = protobuf_c_message_pack(&r.base, buf + 4);
	frame_len_put(buf, (uint32_t)n);
	(void)!send(fd, buf, n + 4, MSG_NOSIGNAL | MSG_DONTWAIT);
	close(fd);
}

static struct uid_use *uid_use(struct ofcd *d, uid_t uid)
{
	struct uid_use *u;

	for (u = d->uids; u; u = u->next)
		if (u->uid == uid)
			return u;
	u = xcalloc(1, sizeof(*u));
	u->uid = uid;
	u->next = d->uids;
	d->uids = u;
	return u;
}

static void uid_unuse(struct ofcd *d, struct uid_use *u)
{
	if (u->conns)
		return;
	for (struct uid_use **pp = &d->uids; *pp; pp = &(*pp)->next)
		if (*pp == u) {
			*pp = u->next;
			free(u);
			return;
		}
}

static void accept_event(struct loop *l, int lfd, void *ctx, unsigned mask);

void conn_listeners(struct ofcd *d, bool on)
{
	if (d->listen_fd >= 0) {
		if (on)
			loop_add(d->loop, d->listen_fd, LOOP_READ, accept_event, d);
		else
			loop_del(d->loop, d->listen_fd, LOOP_READ);
	}
	if (d->ro_fd >= 0) {
		if (on)
			loop_add(d->loop, d->ro_fd, LOOP_READ, accept_event, d);
		else
			loop_del(d->loop, d->ro_fd, LOOP_READ);
	}
	if (d->gw_fd >= 0) {
		if (on)
			loop_add(d->loop, d->gw_fd, LOOP_READ, accept_event, d);
		else
			loop_del(d->loop, d->gw_fd, LOOP_READ);
	}
}

static int64_t accept_resume(struct loop *l, uint64_t id, void *ctx)
{
	struct ofcd *d = ctx;

	(void)l;
	(void)id;
	d->accept_timer = 0;
	if (!d->stopping)
		conn_listeners(d, true); /* begin_stop closed them otherwise */
	return LOOP_NOMORE;
}

/* Out of descriptors: the pending connection stays in the backlog and the
 * listener stays readable, so a level-triggered loop would spin on it (and
 * log each time). Rest the listeners instead; one line per episode. */
static void accept_backoff(struct ofcd *d, int e)
{
	if (d->accept_timer)
		return;
	d->accept_refusals++;
	if (!d->accept_backoff_ms) {
		double now = now_seconds();

		d->accept_backoff_ms = ACCEPT_BACKOFF_MIN;
		/* At the limit, one client leaving lets one in, and the next
		 * finds the limit again: one line a minute, not one a client. */
		if (!d->accept_logged || now - d->accept_logged >= ACCEPT_LOG_EVERY) {
			d->accept_logged = now;
			d->accept_told = true;
			ofcd_log_peer(d, OFCD_LOG_ERR,
				      "accept: %s with %zu clients connected: not accepting for "
				      "a while (raise LimitNOFILE or lower --max-clients)",
				      strerror(e), d->nconns);
		}
	} else if (d->accept_backoff_ms < ACCEPT_BACKOFF_MAX) {
		d->accept_backoff_ms *= 2;
		if (d->accept_backoff_ms > ACCEPT_BACKOFF_MAX)
			d->accept_backoff_ms = ACCEPT_BACKOFF_MAX;
	}
	conn_listeners(d, false);
	d->accept_timer = loop_timer(d->loop, d->accept_backoff_ms, accept_resume, d);
}

/* Before a user is refused for the number of its connections: finish
 * those it has hung up already but the loop has not read to their end yet
 * (a script's quick connections, accepted in one batch). */
static void finish_hung_up(struct ofcd *d, uid_t uid)
{
	uint64_t *ids = NULL;
	size_t n = 0, cap = 0;

	for (size_t i = 0; i < d->nconns; i++) {
		struct conn *c = d->conns[i];
		struct pollfd p = {.fd = c->fd, .events = POLLRDHUP};

		if (!c->dead && c->peer.uid == uid && poll(&p, 1, 0) == 1 &&
		    (p.revents & (POLLRDHUP | POLLHUP | POLLERR))) {
			GROW(ids, cap, n + 1);
			ids[n++] = c->id;
		}
	}
	/* By id: reading one may close another (an event to a slow watcher). */
	for (size_t i = 0; i < n; i++) {
		struct conn *c = conn_find(d, ids[i]);

		if (c)
			conn_event(d->loop, c->fd, c, LOOP_READ);
	}
	free(ids);
}

static void accept_event(struct loop *l, int lfd, void *ctx, unsigned mask)
{
	struct ofcd *d = ctx;

	(void)mask;
	for (;;) {
		int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		struct ucred cr;
		socklen_t crlen = sizeof(cr);
		struct conn *c;
		struct uid_use *u;
		char why[200];

		if (fd < 0) {
			if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
			    errno == ENOMEM)
				accept_backoff(d, errno);
			return;
		}
		if (d->accept_backoff_ms && d->accept_told) {
			ofcd_log_peer(d, OFCD_LOG_NOTICE,
				      "accepting connections again (%llu pauses for want of "
				      "descriptors)",
				      (unsigned long long)d->accept_refusals);
			d->accept_refusals = 0;
			d->accept_told = false;
		}
		d->accept_backoff_ms = 0;
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &crlen) != 0) {
			ofcd_log_peer(d, OFCD_LOG_WARNING, "SO_PEERCRED: %s: connection refused",
				      strerror(errno));
			close(fd);
			continue;
		}
		u = uid_use(d, cr.uid);
		if (u->conns >= d->o.max_clients_per_uid) {
			finish_hung_up(d, cr.uid);
			u = uid_use(d, cr.uid); /* freed if none was left */
		}
		why[0] = 0;
		if (d->nconns >= d->o.max_clients)
			snprintf(why, sizeof(why), "ofcd has too many clients (%zu)", d->nconns);
		else if (u->conns >= d->o.max_clients_per_uid)
			snprintf(why, sizeof(why),
				 "uid %u has %u connections to ofcd already, the limit per user",
				 cr.uid, u->conns);
		else if (u->bytes + IN_INITIAL > d->o.max_buffer_per_uid)
			snprintf(
			    why, sizeof(why),
			    "uid %u has %zu bytes in ofcd's buffers already, the limit per user "
			    "is %llu",
			    cr.uid, u->bytes, (unsigned long long)d->o.max_buffer_per_uid);
		else if (lfd == d->gw_fd && cr.uid != d->o.gateway_uid)
			snprintf(
			    why, sizeof(why),
			    "the gateway socket takes uid %u (--gateway-uid) alone, not uid %u",
			    d->o.gateway_uid, cr.uid);
		c = xcalloc(1, sizeof(*c));
		c->d = d;
		c->fd = fd;
		if (why[0] || loop_add(l, fd, LOOP_READ, conn_event, c) < 0) {
			ofcd_log_peer(d, OFCD_LOG_WARNING,
				      "refused a connection from uid %u pid %d: %s", cr.uid, cr.pid,
				      why[0] ? why : "cannot watch it");
			refuse(fd, why[0] ? why : "ofcd has too many clients");
			free(c);
			uid_unuse(d, u);
			continue;
		}
		c->id = ++d->next_conn_id;
		c->peer = cr;
		c->use = u;
		u->conns++;
		c->ro = lfd == d->ro_fd;
		c->gw = lfd == d->gw_fd;
		c->admin = !c->ro && !c->gw && (cr.uid == 0 || in_admin_group(d, fd, &cr));
		c->in_cap = IN_INITIAL;
		c->in = xmalloc(c->in_cap);
		conn_charge(c, c->in_cap, 0);
		c->reading = true;
		GROW(d->conns, d->cap_conns, d->nconns + 1);
		d->conns[d->nconns++] = c;
		ofcd_log_peer(d, OFCD_LOG_DEBUG,
			      "connection %llu from uid %u pid %d on the %s socket%s",
			      (unsigned long long)c->id, cr.uid, cr.pid,
			      c->ro   ? "read-only"
			      : c->gw ? "gateway"
				      : "main",
			      c->admin ? " (may mutate)" : "");
	}
}

static void conn_free(struct ofcd *d, struct conn *c)
{
	/* Its queued mutations have nobody to answer: they are dropped (a
	 * running one finishes: a transaction is never cut short). */
	for (struct job *j = d->queue, *next; j; j = next) {
		next = j->next;
		if (j->conn_id == c->id)
			cancel_job(d, j, "dropped: its client went away");
	}
	loop_del(d->loop, c->fd, LOOP_READ | LOOP_WRITE);
	close(c->fd);
	free(c->in);
	free(c->out.b);
	if (c->watch_principal)
		ofc__v1__principal__free_unpacked(c->watch_principal, NULL);
	conn_stream_drop(c);
	c->use->bytes -= c->charged;
	c->use->conns--;
	uid_unuse(d, c->use);
	free(c);
}

/* Close the connections marked dead. */
void conn_reap(struct ofcd *d)
{
	struct conn **dead = NULL;
	size_t k = 0, ndead = 0, cap = 0;

	/* Out of the table first: freeing one may cancel its queued jobs,
	 * which tells the watchers, which walks the table. */
	for (size_t i = 0; i < d->nconns; i++) {
		struct conn *c = d->conns[i];

		if (c->dead) {
			GROW(dead, cap, ndead + 1);
			dead[ndead++] = c;
		} else {
			d->conns[k++] = c;
		}
	}
	d->nconns = k;
	for (size_t i = 0; i < ndead; i++)
		conn_free(d, dead[i]);
	free(dead);
}

/* ---- events and finished jobs ------------------------------------------------------------ */

/* The partition an event is about: that of the request whose ticket it
 * carries (a Reconfigure or ReleasePartition of one), else NULL. */
static const char *event_partition(const struct ofcd *d, uint64_t ticket)
{
	if (!ticket)
		return NULL;
	if (d->ev_job && d->ev_job->ticket == ticket)
		return d->ev_job->partition;
	if (d->running && d->running->ticket == ticket)
		return d->running->partition;
	for (const struct job *j = d->queue; j; j = j->next)
		if (j->ticket == ticket)
			return j->partition;
	return NULL;
}

/* n (may be NULL): a note with a re-planned schedule and the failures. */
void ofcd_broadcast_event(struct ofcd *d, Ofc__V1__Event__Kind kind, uint64_t txn, uint64_t ticket,
			  const char *device, const char *message, const char *sentence,
			  uint64_t time_ms, const struct note *n)
{
	Ofc__V1__Response r = OFC__V1__RESPONSE__INIT;
	Ofc__V1__Event e = OFC__V1__EVENT__INIT;
	Ofc__V1__Schedule *sched = NULL;

	if (n && n->sched)
		sched = ofc__v1__schedule__unpack(NULL, n->sched_len, n->sched);
	e.schedule = sched;
	if (n) {
		e.n_failed = n->nfailed;
		e.failed = n->failed;
	}

	e.has_kind = e.has_time_unix_ms = 1;
	e.kind = kind;
	e.time_unix_ms = time_ms;
	e.message = (char *)message;
	e.device = (char *)device;
	if (txn) {
		e.has_transaction = 1;
		e.transaction = txn;
	}
	if (ticket) {
		e.has_ticket = 1;
		e.ticket = ticket;
	}
	r.has_id = r.has_status = 1;
	r.status = OFC__V1__STATUS__STATUS_OK;
	r.message = (char *)sentence;
	r.body_case = OFC__V1__RESPONSE__BODY_EVENT;
	r.event = &e;
	/* (a partition event names its own; else the request's) */
	const char *part = n && n->partition ? n->partition : event_partition(d, ticket);
	e.partition = (char *)(n ? n->partition : NULL);
	for (size_t i = 0; i < d->nconns; i++) {
		struct conn *c = d->conns[i];

		if (!c->watching || c->dead)
			continue;
		/* A tenant hears of its partitions' requests alone. */
		if (authz_is_tenant(c->watch_principal) &&
		    !(part && authz_owns(c->watch_principal, part)))
			continue;
		r.id = c->watch_id;
		send_response(c, &r);
	}
	if (sched)
		ofc__v1__schedule__free_unpacked(sched, NULL);
}

/* The index of device `name` in the snapshot, or -1. */
int ofcd_snap_dev(struct snapshot *s, const char *name)
{
	for (uint32_t i = 0; name && i < s->ndevs; i++)
		if (strcmp(s->devs[i]->name, name) == 0)
			return (int)i;
	return -1;
}

/* error: the device's text (root and the admin group see it); reason:
 * what read-only clients see instead. */
void ofcd_set_reachable(struct ofcd *d, int i, bool up, const char *error, enum ofc_reason reason)
{
	Ofc__V1__DeviceState *m;

	if (i < 0)
		return;
	m = d->snap->devs[i];
	m->has_reachable = 1;
	m->reachable = up;
	m->error = up || !error ? NULL : arena_strdup(&d->snap->a, error);
	d->snap->public_error[i] = m->error ? ofcd_public_reason(reason) : NULL;
	changed(d);
}

void ofcd_on_event(struct ofcd *d, struct note *n)
{
	int level = OFCD_LOG_INFO;
	uint64_t ticket = d->running ? d->running->ticket : 0;

	switch (n->kind) {
	case OFC__V1__EVENT__KIND__KIND_TRANSACTION_STARTED:
		d->running_txn = n->txn;
		d->running_state = "applying";
		changed(d);
		break;
	case OFC__V1__EVENT__KIND__KIND_TRANSACTION_ROLLING_BACK:
		d->running_state = "rolling-back";
		level = OFCD_LOG_WARNING;
		changed(d);
		break;
	case OFC__V1__EVENT__KIND__KIND_TRANSACTION_ROLLED_BACK:
	case OFC__V1__EVENT__KIND__KIND_CONFIG_REJECTED:
	case OFC__V1__EVENT__KIND__KIND_PARTITION_DROPPED:
		level = OFCD_LOG_WARNING;
		break;
	case OFC__V1__EVENT__KIND__KIND_DEVICE_LOST:
		level = OFCD_LOG_WARNING;
		d->metrics.devices_lost++;
		ofcd_set_reachable(d, ofcd_snap_dev(d->snap, n->device), false,
				   n->detail ? n->detail : n->message, n->reason);
		break;
	case OFC__V1__EVENT__KIND__KIND_DEVICE_BACK:
		level = OFCD_LOG_NOTICE;
		ofcd_set_reachable(d, ofcd_snap_dev(d->snap, n->device), true, NULL, OFC_R_NONE);
		break;
	case OFC__V1__EVENT__KIND__KIND_TRANSACTION_COMMITTED:
	case OFC__V1__EVENT__KIND__KIND_CONFIG_APPLIED:
	case OFC__V1__EVENT__KIND__KIND_RECOVERED:
	case OFC__V1__EVENT__KIND__KIND_SCHEDULE_REPLANNED:
	case OFC__V1__EVENT__KIND__KIND_PARTITION_HELD:
	case OFC__V1__EVENT__KIND__KIND_PARTITION_RELEASED:
		level = OFCD_LOG_NOTICE;
		break;
	default:
		break;
	}
	/* One sentence for people (the answer's message, and the log); the
	 * event keeps the bare detail. */
	char txn[48] = "", line[900];
	if (n->txn)
		snprintf(txn, sizeof(txn), " (transaction %llu)", (unsigned long long)n->txn);
	const char *name = event_kind_name(n->kind);
	/* The log gets the detail; watchers the public message. */
	const char *detail = n->detail ? n->detail : n->message;
	snprintf(line, sizeof(line), "%s%s%s%s%s%s", name, txn, n->device ? ": " : "",
		 n->device ? n->device : "", detail && *detail ? ": " : "", detail ? detail : "");
	ofcd_log(d, level, "%s", line);
	if (n->detail)
		snprintf(line, sizeof(line), "%s%s%s%s%s%s", name, txn, n->device ? ": " : "",
			 n->device ? n->device : "", n->message && *n->message ? ": " : "",
			 n->message ? n->message : "");
	ofcd_broadcast_event(d, n->kind, n->txn, ticket, n->device, n->message, line, n->time_ms,
			     n);
}

/* A finished job's state and config become the daemon's (what it built
 * while it ran: a committed transaction, a re-plan after a failure). */
static void publish(struct ofcd *d, struct job *j)
{
	if (j->snap) {
		snapshot_free(d->snap);
		d->snap = j->snap;
		j->snap = NULL;
	}
	if (j->new_cfg) {
		fabcfg_unref(d->cfg);
		d->cfg = j->new_cfg;
		j->new_cfg = NULL;
	}
}

/* The events a job held back until its state was published, in order. */
static void flush_deferred(struct ofcd *d, struct job *j)
{
	while (j->deferred) {
		struct note *n = j->deferred;

		j->deferred = n->next;
		ofcd_on_event(d, n);
		note_free(n);
	}
	j->deferred_tail = NULL;
}

/* ---- the planner (plan.c) --------------------------------------------------------------- */

/* Past PLAN_HOLD_SECONDS the queue goes on without the planner's result. */
static int64_t plan_hold_timer(struct loop *l, uint64_t id, void *ctx)
{
	struct ofcd *d = ctx;

	(void)l;
	(void)id;
	d->plan_timer = 0;
	d->plan_hold_until = 0;
	if (d->planner && d->queue)
		ofcd_log(d, OFCD_LOG_WARNING,
			 "the workload's schedule is still being computed after %d s: the %u "
			 "waiting mutation%s go%s on without it",
			 PLAN_HOLD_SECONDS, d->nqueue, d->nqueue == 1 ? "" : "s",
			 d->nqueue == 1 ? "es" : "");
	ofcd_maybe_start(d);
	return LOOP_NOMORE;
}

void ofcd_plan_stop(struct ofcd *d)
{
	if (d->plan_timer)
		loop_timer_del(d->loop, d->plan_timer);
	d->plan_timer = 0;
	d->plan_hold_until = 0;
	plan_abandon(d->planner);
	d->planner = NULL;
	changed(d);
}

/* The published config's workload schedule is the planner's to compute
 * (an all-to-all): start one. One computing another config (not the
 * healthy one behind the published failures) is let go of: its MCF is
 * cancelled and its thread, not waited for, drops what it found. */
void ofcd_plan_check(struct ofcd *d)
{
	if (d->planner && d->planner->cfg != d->cfg && d->planner->cfg != d->cfg->healthy)
		ofcd_plan_stop(d);
	if (d->planner || d->stopping || !plan_needed(d->cfg))
		return;
	d->planner = plan_start(d, d->cfg);
	if (!d->planner) {
		ofcd_log(d, OFCD_LOG_ERR,
			 "cannot start a thread for the workload's schedule: State.schedule stays "
			 "empty until the next re-plan");
		return;
	}
	d->plan_hold_until = now_seconds() + PLAN_HOLD_SECONDS;
	d->plan_timer = loop_timer(d->loop, PLAN_HOLD_SECONDS * 1000, plan_hold_timer, d);
	ofcd_log(d, OFCD_LOG_NOTICE,
		 "computing the workload's %s schedule on %s in the background (mutations wait "
		 "for it up to %d s)",
		 sched_collective_name(d->cfg->coll), d->cfg->f->topology.spec, PLAN_HOLD_SECONDS);
	changed(d);
}

/* The planner finished (t: the note's reference, ours now): its result
 * goes to the mutation worker before any queued mutation. */
void ofcd_plan_landed(struct ofcd *d, struct plan_task *t)
{
	struct job *j;

	if (t != d->planner || d->stopping) {
		plan_unref(t);
		return;
	}
	ofcd_plan_stop(d);
	ofcd_log(d, OFCD_LOG_INFO, "the workload's schedule was computed in %.1f s",
		 (double)(unix_ms() - t->since_ms) / 1000);
	j = xcalloc(1, sizeof(*j));
	j->kind = JOB_PLAN;
	j->plan = t;
	job_free(d->plan_job);
	d->plan_job = j;
	ofcd_maybe_start(d);
}

/* The check once at start (ofcd_run): what each device holds against the
 * record, in the log, so an operator sees at once whether ofcd reaches
 * its devices and whether they were changed while it was down. Reads
 * only: nothing is changed here. */
static void report_start_check(struct ofcd *d, const struct job *j)
{
	uint32_t up = 0, same = 0, fresh = 0;

	for (uint32_t i = 0; i < j->nprobe; i++) {
		const struct probe_dev *p = &j->probe[i];

		up += p->reachable;
		same += p->in_sync && p->recorded;
		fresh += p->reachable && !p->recorded;
		if (!p->reachable)
			ofcd_log(d, OFCD_LOG_WARNING, "start check: %s unreachable: %s", p->name,
				 p->error);
		else if (!p->recorded)
			ofcd_log(
			    d, OFCD_LOG_NOTICE,
			    "start check: %s reachable, %u entries, nothing recorded for it yet",
			    p->name, p->entries);
		else if (p->in_sync)
			ofcd_log(d, OFCD_LOG_NOTICE,
				 "start check: %s reachable, %u entries, as the record says",
				 p->name, p->entries);
		else
			ofcd_log(d, OFCD_LOG_WARNING,
				 "start check: %s reachable, %u entries, NOT as the record says "
				 "(changed while ofcd was down? status shows it; the next change "
				 "takes it to its target)",
				 p->name, p->entries);
	}
	ofcd_log(d,
		 up == j->nprobe && same + fresh == j->nprobe ? OFCD_LOG_NOTICE : OFCD_LOG_WARNING,
		 "start check: %u device%s: %u reachable, %u as recorded, %u not, %u with nothing "
		 "recorded yet",
		 j->nprobe, j->nprobe == 1 ? "" : "s", up, same, up - same - fresh, fresh);
}

void ofcd_job_done(struct ofcd *d, struct job *j)
{
	struct conn *c = j->conn_id ? conn_find(d, j->conn_id) : NULL;

	if (j->kind == JOB_SCHEDULE) {
		/* Only an error's answer is small enough to look into cheaply. */
		Ofc__V1__Response *r = j->reply_len < 4096
					   ? ofc__v1__response__unpack(NULL, j->reply_len, j->reply)
					   : NULL;
		metrics_job_done(&d->metrics, j,
				 j->reply_len >= 4096 ||
				     (r && r->status == OFC__V1__STATUS__STATUS_OK),
				 now_seconds() - j->t0);
		if (r)
			ofc__v1__response__free_unpacked(r, NULL);
		d->sched_pending--;
		if (j->stream) {
			for (uint32_t i = 0; i < d->nstreams; i++)
				if (d->streams[i] == j->stream)
					d->streams[i] = d->streams[--d->nstreams];
			if (c && c->stream == j->stream) {
				c->stream = NULL;
				c->stream_owed = 0;
			}
			job_free(j);
			return;
		}
		if (c)
			conn_queue(c, j->reply, j->reply_len, NULL, 0);
		job_free(j);
		return;
	}
	if (j->kind == JOB_TAKEOVER || j->kind == JOB_SYNC) {
		d->running = NULL;
		cluster_synced(d, j);
		publish(d, j);
		changed(d);
		flush_deferred(d, j);
		if (j->kind == JOB_TAKEOVER && j->done_ms) {
			d->leading = store_epoch(d->store) != 0;
			d->took_over_ms = j->done_ms;
			if (d->leading)
				ofcd_replay_queue(d);
			/* the start check, now that this replica may read them */
			if (d->leading && d->o.probe_interval > 0 && !d->stopping) {
				struct job *p = xcalloc(1, sizeof(*p));

				p->kind = JOB_PROBE;
				p->startup = true;
				job_free(d->plan_job);
				d->plan_job = p;
			}
		}
		if (d->sync_again) {
			d->sync_again = false;
			ofcd_want_cluster_job(d, JOB_SYNC);
		}
		job_free(j);
		ofcd_plan_check(d);
		ofcd_maybe_start(d);
		return;
	}
	if (j->kind == JOB_PROBE || j->kind == JOB_PLAN) {
		d->running = NULL;
		/* A switch lost or back changed the failures: the re-planned
		 * config and state first, then the event. */
		publish(d, j);
		for (uint32_t i = 0; i < j->nprobe; i++) {
			int k = ofcd_snap_dev(d->snap, j->probe[i].name);
			Ofc__V1__DeviceState *m = k >= 0 ? d->snap->devs[k] : NULL;

			if (!m)
				continue;
			if (!m->has_reachable || m->reachable != j->probe[i].reachable)
				ofcd_set_reachable(d, k, j->probe[i].reachable, j->probe[i].error,
						   j->probe[i].reason);
			if (!m->has_in_sync || m->in_sync != j->probe[i].in_sync) {
				m->has_in_sync = 1;
				m->in_sync = j->probe[i].in_sync;
				changed(d);
			}
		}
		changed(d);
		flush_deferred(d, j);
		if (j->startup)
			report_start_check(d, j);
	} else {
		Ofc__V1__Response *r = ofc__v1__response__unpack(NULL, j->reply_len, j->reply);
		char from[160];

		/* Publish first, then tell: whoever hears "committed" and asks
		 * sees the committed state. */
		publish(d, j);
		changed(d);
		flush_deferred(d, j);
		d->running = NULL;
		metrics_job_done(&d->metrics, j, r && r->status == OFC__V1__STATUS__STATUS_OK,
				 now_seconds() - j->t0);
		ofcd_log(d,
			 r && r->status == OFC__V1__STATUS__STATUS_OK ? OFCD_LOG_NOTICE
								      : OFCD_LOG_WARNING,
			 "ticket %llu: %s%s %s from %s: %s: %s", (unsigned long long)j->ticket,
			 job_kind_name(j->kind), j->dry_run ? " (dry run)" : "", j->target,
			 job_from_words(j, from, sizeof(from)),
			 r && r->status < ARRAY_SIZE(status_names) ? status_names[r->status] : "?",
			 r && r->message ? r->message : "");
		if (r && r->status != OFC__V1__STATUS__STATUS_OK && c)
			d->errors++;
		if (r)
			ofc__v1__response__free_unpacked(r, NULL);
		outcome_done(d, j);
		if (c)
			conn_queue(c, j->reply, j->reply_len, NULL, 0);
		else if (j->conn_id)
			ofcd_log(d, OFCD_LOG_INFO,
				 "ticket %llu: its client went away before the answer",
				 (unsigned long long)j->ticket);
	}
	job_free(j);
	ofcd_plan_check(d);
	ofcd_maybe_start(d);
}

/* ---- stopping and reloading ------------------------------------------------------------ */

static int64_t drain_timer(struct loop *l, uint64_t id, void *ctx)
{
	struct ofcd *d = ctx;
	bool pending = false;

	(void)id;
	for (size_t i = 0; i < d->nconns; i++)
		pending |= !d->conns[i]->dead && conn_unsent(d->conns[i]) > 0;
	if (!pending || now_seconds() > d->drain_deadline) {
		loop_stop(l);
		return LOOP_NOMORE;
	}
	return 20;
}

static void check_drain(struct ofcd *d)
{
	if (!d->stopping || d->running || d->sched_pending || d->drain_timer)
		return;
	d->drain_deadline = now_seconds() + DRAIN_SECONDS;
	d->drain_timer = loop_timer(d->loop, 0, drain_timer, d);
}

static void begin_stop(struct ofcd *d)
{
	struct job *sq;

	if (d->stopping)
		return;
	d->stopping = true;
	if (d->o.notify)
		d->o.notify(d->o.log_ctx, "STOPPING=1");
	if (d->running && is_mutation(d->running))
		ofcd_log(d, OFCD_LOG_NOTICE, "stopping after ticket %llu (%s %s) finishes",
			 (unsigned long long)d->running->ticket, job_kind_name(d->running->kind),
			 d->running->target);
	else
		ofcd_log(d, OFCD_LOG_NOTICE, "stopping");
	/* No new clients; the ones connected still get their reads answered
	 * while the running transaction finishes. */
	for (int *fd = &d->listen_fd; fd; fd = fd == &d->listen_fd ? &d->ro_fd
					       : fd == &d->ro_fd   ? &d->gw_fd
								   : NULL)
		if (*fd >= 0) {
			loop_del(d->loop, *fd, LOOP_READ);
			close(*fd);
			*fd = -1;
		}
	while (d->queue)
		cancel_job(d, d->queue, "cancelled: ofcd is shutting down");
	/* Not waited for: plan_stop cancels the MCF, which stops within a
	 * pivot or so, and the detached thread ends on its own. */
	if (d->planner)
		ofcd_log(d, OFCD_LOG_NOTICE,
			 "the workload's schedule, computing for %.0f s, is given up",
			 (double)(unix_ms() - d->planner->since_ms) / 1000);
	ofcd_plan_stop(d);
	job_free(d->plan_job);
	d->plan_job = NULL;
	pthread_mutex_lock(&d->mu);
	sq = d->squeue;
	d->squeue = d->squeue_tail = NULL;
	pthread_mutex_unlock(&d->mu);
	while (sq) {
		struct job *next = sq->next;
		struct conn *c = conn_find(d, sq->conn_id);

		if (c)
			reply(c, sq->req_id, OFC__V1__STATUS__STATUS_CANCELLED,
			      "cancelled: ofcd is shutting down");
		d->sched_pending--;
		job_free(sq);
		sq = next;
	}
	changed(d);
	check_drain(d);
}

static void queue_reload(struct ofcd *d)
{
	struct job *j;

	if (d->stopping)
		return;
	if (d->clustered && !d->leading) {
		ofcd_log(d, OFCD_LOG_NOTICE,
			 "reload asked of a follower: the leader applies its config (reload it); "
			 "this replica reads %s again when it takes over",
			 d->o.config_path);
		return;
	}
	for (j = d->queue; j; j = j->next)
		if (j->kind == JOB_RELOAD)
			return; /* one waiting reload reads the newest file anyway */
	ofcd_log(d, OFCD_LOG_NOTICE, "reloading %s", d->o.config_path);
	j = xcalloc(1, sizeof(*j));
	j->kind = JOB_RELOAD;
	j->peer.pid = getpid();
	j->peer.uid = getuid();
	j->peer.gid = getgid();
	j->filename = xstrdup(d->o.config_path);
	j->target = xstrdup(d->o.config_path);
	enqueue(d, j, NULL);
}

/* A streamed GetSchedule's frame: to its client, acknowledged at once
 * while the client keeps up, else when its unsent answers drain. */
void conn_stream_frame(struct ofcd *d, struct note *n)
{
	struct conn *c = conn_find(d, n->stream_conn);

	if (!c) {
		stream_ack(n->stream, 1, true);
		return;
	}
	c->stream = n->stream;
	c->stream_owed++;
	conn_queue(c, n->sched, n->sched_len, NULL, 0); /* may flush and acknowledge */
	if (c->dead)
		return; /* conn_kill cancelled it */
	if (c->stream_owed && conn_unsent(c) < OUT_HIGH) {
		stream_ack(c->stream, c->stream_owed, false);
		c->stream_owed = 0;
	}
}

/* ---- replicas (cluster.c) -------------------------------------------------------------- */

/* A takeover replaces a sync waiting; a sync asked while one waits or runs
 * is one more sync after it. */
void ofcd_want_cluster_job(struct ofcd *d, enum job_kind kind)
{
	struct job *j;

	if (d->stopping)
		return;
	if (d->cluster_job && (d->cluster_job->kind == JOB_TAKEOVER || kind == JOB_SYNC))
		return;
	if (kind == JOB_SYNC && d->running && d->running->kind == JOB_SYNC) {
		d->sync_again = true;
		return;
	}
	job_free(d->cluster_job);
	j = xcalloc(1, sizeof(*j));
	j->kind = kind;
	d->cluster_job = j;
}

/* This replica leads no more: what waits is answered with who leads now
 * (the running job ends on its own at its next write or device command). */
void ofcd_refuse_queue(struct ofcd *d)
{
	char msg[900];
	struct arena a = {0};

	cluster_refusal(d, &d->cl, msg, sizeof(msg));
	while (d->queue) {
		struct job *j = d->queue;
		struct conn *c = conn_find(d, j->conn_id);

		d->queue = j->next;
		d->nqueue--;
		/* One in etcd's queue is the next leader's to run: its client
		 * is told so, and not to send it again (NOT_LEADER would make
		 * ofc and the Python client ask the new leader themselves),
		 * unless it has a request_key: the next leader runs that once
		 * however often it is sent, so its client asks it. */
		bool handed = j->stored && !j->key;
		char hmsg[1100];

		if (handed)
			snprintf(hmsg, sizeof(hmsg),
				 "ticket %llu was not run here: this replica (%s) leads no more; "
				 "it is in etcd's queue, and the next leader runs it after its "
				 "takeover (watch it there; do not send it again)",
				 (unsigned long long)j->ticket, d->cl.name);
		if (c) {
			Ofc__V1__Response r = OFC__V1__RESPONSE__INIT;

			r.has_id = r.has_status = 1;
			r.id = j->req_id;
			r.status = handed ? OFC__V1__STATUS__STATUS_UNAVAILABLE
					  : OFC__V1__STATUS__STATUS_NOT_LEADER;
			r.message = handed ? hmsg : msg;
			if (!handed)
				r.leader = cluster_refusal_leader(&a, &d->cl);
			send_response(c, &r);
		}
		ofcd_log(d, OFCD_LOG_NOTICE, "ticket %llu (%s %s) not run: %s",
			 (unsigned long long)j->ticket, job_kind_name(j->kind), j->target,
			 handed ? "handed to the next leader through etcd's queue" : msg);
		job_free(j);
	}
	d->queue_tail = NULL;
	queue_forget(d);
	arena_free(&a);
}

/* After a takeover: the mutations the last leader queued and
 * had not started, from etcd's queue, queued here in their order as if
 * their clients had sent them here (a gateway's principal checked again),
 * answered to nobody; then etcd's queue is this leader's. */
void ofcd_replay_queue(struct ofcd *d)
{
	struct Ofc__V1__MutationQueue *q = queue_load(d);
	struct job *mine = queue_takeover_begin(d);

	outcomes_takeover(d); /* (what a resend queued here is answered from) */
	for (size_t i = 0; q && i < q->n_entries; i++) {
		const Ofc__V1__MutationQueue__Entry *e = q->entries[i];
		Ofc__V1__Request *req =
		    ofc__v1__request__unpack(NULL, e->request.len, e->request.data);
		struct conn *c = xcalloc(1, sizeof(*c));
		uint64_t before = d->next_ticket;

		if (!req) {
			ofcd_log(d, OFCD_LOG_ERR,
				 "the last leader's ticket %llu in etcd's queue is not a Request: "
				 "not run",
				 (unsigned long long)e->ticket);
			free(c);
			continue;
		}
		c->d = d;
		c->dead = c->replay = true;
		c->gw = e->gateway;
		c->admin = !c->gw;
		c->peer.uid = e->uid;
		c->peer.gid = e->gid;
		c->peer.pid = e->pid;
		d->chain.request(c, req, e->request.data, e->request.len);
		if (d->next_ticket != before)
			ofcd_log(d, OFCD_LOG_NOTICE,
				 "ticket %llu is the last leader's ticket %llu, queued there and "
				 "not started: run here",
				 (unsigned long long)d->next_ticket, (unsigned long long)e->ticket);
		ofc__v1__request__free_unpacked(req, NULL);
		free(c);
	}
	if (q)
		ofc__v1__mutation_queue__free_unpacked(q, NULL);
	queue_takeover_end(d, mine);
}

static void cluster_event(struct ofcd *d, enum store_event ev)
{
	switch (ev) {
	case STORE_EV_LEADER:
		d->elected_ms = unix_ms();
		ofcd_want_cluster_job(d, JOB_TAKEOVER);
		break;
	case STORE_EV_DEPOSED:
		cluster_deposed(d);
		ofcd_refuse_queue(d);
		ofcd_want_cluster_job(d, JOB_SYNC);
		break;
	case STORE_EV_CHANGED:
		atomic_store(&d->cl_change_posted, false);
		ofcd_want_cluster_job(d, JOB_SYNC);
		break;
	default: /* (health: a deposed replica's reload that found etcd silent, again) */
		if (d->cl_reload)
			ofcd_want_cluster_job(d, JOB_SYNC);
		break;
	}
	if (cluster_refresh(d) || ev != STORE_EV_HEALTH)
		changed(d);
	ofcd_maybe_start(d);
}

/* What GetState shows of the lease moves on by itself. */
static int64_t cluster_timer(struct loop *l, uint64_t id, void *ctx)
{
	struct ofcd *d = ctx;

	(void)l;
	(void)id;
	cluster_refresh(d);
	changed(d);
	return 250;
}

/* A device's news at most this often causes a probe (a device that keeps
 * notifying is read every NEWS_GAP seconds, no more). */
#define NEWS_GAP 1.0

static void news_probe(struct ofcd *d);

static int64_t news_timer(struct loop *l, uint64_t id, void *ctx)
{
	struct ofcd *d = ctx;

	(void)l;
	(void)id;
	d->news_timer = 0;
	news_probe(d);
	return LOOP_NOMORE;
}

/* Probe the devices for a device's news (a notification: a port's health
 * changed) when nothing else runs: the probe reads each device, and the
 * notifying one reads its health (device_cfg.news), so failing ports are
 * failures in effect as at every probe, without waiting for the next. */
static void news_probe(struct ofcd *d)
{
	double now = now_seconds(), at = d->news_probe_at + NEWS_GAP;
	struct job *j;

	if (d->clustered && !d->leading) {
		d->news_pending = false; /* a replica reads devices only while it leads */
		return;
	}
	if (!d->news_pending || d->stopping || d->running || d->queue || d->plan_job ||
	    d->cluster_job)
		return; /* the job's end comes back here */
	if (now < at) {
		if (!d->news_timer)
			d->news_timer =
			    loop_timer(d->loop, (int64_t)((at - now) * 1000) + 1, news_timer, d);
		return;
	}
	char from[sizeof(d->news_from)];

	pthread_mutex_lock(&d->note_mu);
	snprintf(from, sizeof(from), "%s", d->news_from);
	pthread_mutex_unlock(&d->note_mu);
	d->news_pending = false;
	d->news_probe_at = now;
	ofcd_log(d, OFCD_LOG_INFO,
		 "device news from %s (a notification, or a new subscription): probing", from);
	j = xcalloc(1, sizeof(*j));
	j->kind = JOB_PROBE;
	ofcd_hand_to_worker(d, j);
}

static void wake_event(struct loop *l, int fd, void *ctx, unsigned mask)
{
	struct ofcd *d = ctx;
	uint64_t v;
	struct note *n;

	(void)l;
	(void)mask;
	(void)!read(fd, &v, sizeof(v));
	if (atomic_exchange(&d->stop_req, 0))
		begin_stop(d);
	if (atomic_exchange(&d->reload_req, 0))
		queue_reload(d);
	if (atomic_exchange(&d->news_req, 0))
		d->news_pending = true;
	pthread_mutex_lock(&d->note_mu);
	n = d->notes;
	d->notes = d->notes_tail = NULL;
	pthread_mutex_unlock(&d->note_mu);
	while (n) {
		struct note *next = n->next;

		if (n->job)
			ofcd_job_done(d, n->job);
		else if (n->stream)
			conn_stream_frame(d, n);
		else if (n->plan)
			ofcd_plan_landed(d, n->plan);
		else if (n->cluster)
			cluster_event(d, n->cluster);
		else
			ofcd_on_event(d, n);
		n->job = NULL;	/* ofcd_job_done freed it */
		n->plan = NULL; /* ofcd_plan_landed took it */
		note_free(n);
		n = next;
	}
	news_probe(d);
	conn_reap(d);
	check_drain(d);
}

static void signal_event(struct loop *l, int fd, void *ctx, unsigned mask)
{
	struct ofcd *d = ctx;
	struct signalfd_siginfo si;

	(void)l;
	(void)mask;
	while (read(fd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		if (si.ssi_signo == SIGHUP) {
			queue_reload(d);
		} else {
			ofcd_log(d, OFCD_LOG_NOTICE, "%s from pid %u", strsignal((int)si.ssi_signo),
				 si.ssi_pid);
			begin_stop(d);
		}
	}
	conn_reap(d);
}

/* Disconnect clients that stalled: half a request, or replies unread, for
 * longer than the client timeout. */
static int64_t sweep_timer(struct loop *l, uint64_t id, void *ctx)
{
	struct ofcd *d = ctx;
	double now = now_seconds(), t = d->o.client_timeout;

	(void)l;
	(void)id;
	for (size_t i = 0; i < d->nconns; i++) {
		struct conn *c = d->conns[i];

		if (c->dead)
			continue;
		if (c->in_since && now - c->in_since > t)
			conn_kill(c, OFCD_LOG_WARNING,
				  "half a request (%zu bytes) waited %.0f s for the rest",
				  c->in_len, now - c->in_since);
		else if (conn_unsent(c) && now - c->out_since > t)
			conn_kill(c, OFCD_LOG_WARNING, "%zu bytes of replies unread for %.0f s",
				  conn_unsent(c), now - c->out_since);
	}
	conn_reap(d);
	ofcd_log_flush(d);
	return t < 1 ? 100 : 1000;
}

static int64_t probe_timer(struct loop *l, uint64_t id, void *ctx)
{
	struct ofcd *d = ctx;

	(void)l;
	(void)id;
	/* (a replica reads devices only while it leads) */
	if (!d->stopping && !d->running && !d->queue && !d->plan_job && !d->cluster_job &&
	    (!d->clustered || d->leading)) {
		struct job *j = xcalloc(1, sizeof(*j));

		j->kind = JOB_PROBE;
		ofcd_hand_to_worker(d, j);
	}
	return (int64_t)(d->o.probe_interval * 1000);
}

/* ---- opening and running ------------------------------------------------------------------ */

int server_open(const struct ofcd_opts *o, const struct ofcd_chain *chain, struct ofcd **out,
		struct ofc_error *err)
{
	struct ofcd *d = xcalloc(1, sizeof(*d));

	*out = NULL;
	d->chain = *chain;
	d->o = *o;
	if (!d->o.max_frame)
		d->o.max_frame = OFCD_MAX_FRAME_DEFAULT;
	if (!d->o.max_clients)
		d->o.max_clients = OFCD_MAX_CLIENTS_DEFAULT;
	if (!d->o.max_clients_per_uid)
		d->o.max_clients_per_uid = OFCD_MAX_CLIENTS_PER_UID_DEFAULT;
	if (!d->o.max_request_memory)
		d->o.max_request_memory = mem_physical() / 4;
	if (!d->o.max_request_time)
		d->o.max_request_time = 60;
	ro_budget(&d->o);
	if (d->o.max_clients_per_uid > d->o.max_clients)
		d->o.max_clients_per_uid = d->o.max_clients;
	if (!d->o.max_ro_frame)
		d->o.max_ro_frame = OFCD_MAX_RO_FRAME_DEFAULT;
	if (d->o.max_ro_frame > d->o.max_frame)
		d->o.max_ro_frame = d->o.max_frame;
	/* One user can always send one largest frame and read its answer. */
	if (!d->o.max_buffer_per_uid)
		d->o.max_buffer_per_uid = 4 * (uint64_t)d->o.max_frame;
	if (d->o.max_buffer_per_uid < (uint64_t)d->o.max_frame + (1u << 20))
		d->o.max_buffer_per_uid = (uint64_t)d->o.max_frame + (1u << 20);
	if (d->o.client_timeout <= 0)
		d->o.client_timeout = 30;
	if (!d->o.socket_mode)
		d->o.socket_mode = 0660;
	if (!d->o.log_level)
		d->o.log_level = OFCD_LOG_NOTICE;
	d->listen_fd = d->ro_fd = d->gw_fd = d->sig_fd = -1;
	d->state_dir = ctl_state_dir(o->state_dir);
	d->store = store_open_files(d->state_dir);
	d->cred_dir =
	    xstrdup(o->credentials_dir && *o->credentials_dir ? o->credentials_dir
							      : OFCD_CREDENTIALS_DIR_DEFAULT);
	d->files.dirfd = -1;
	d->files.why = "ofcd --topology-dir";
	pthread_mutex_init(&d->mu, NULL);
	pthread_cond_init(&d->cond, NULL);
	pthread_mutex_init(&d->note_mu, NULL);
	pthread_mutex_init(&d->devm.mu, NULL);
	d->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (d->wake_fd < 0) {
		ofc_error_set(err, OFC_E_RUNTIME, "eventfd: %s", strerror(errno));
		goto fail;
	}
	if (!o->config_path || !o->socket_path) {
		ofc_error_set(err, OFC_E_USAGE, "ofcd needs a config and a socket");
		goto fail;
	}
	if (ofcd_allow_parse(d, err) < 0 || open_topology_dir(d, err) < 0)
		goto fail;
	if (!o->inherit_fds &&
	    (check_socket_dir(o->socket_path, "--socket", err) < 0 ||
	     (o->ro_socket_path && check_socket_dir(o->ro_socket_path, "--ro-socket", err) < 0)))
		goto fail;
	if (o->gateway_socket_path &&
	    check_socket_dir(o->gateway_socket_path, "--gateway-socket", err) < 0)
		goto fail;
	if (ofcd_start(d, err) < 0)
		goto fail;
	if (o->inherit_fds) {
		/* Socket activation: the manager bound them (mode, group). */
		d->listen_fd = o->main_fd;
		d->ro_fd = o->ro_fd;
		fcntl(d->listen_fd, F_SETFL, fcntl(d->listen_fd, F_GETFL) | O_NONBLOCK);
		if (d->ro_fd >= 0)
			fcntl(d->ro_fd, F_SETFL, fcntl(d->ro_fd, F_GETFL) | O_NONBLOCK);
	} else if (listen_unix(o->socket_path, d->o.socket_mode,
			       o->have_admin_group ? (int)o->admin_gid : -1, &d->listen_fd,
			       err) < 0) {
		goto fail;
	} else {
		d->bound_main = true;
	}
	if (o->ro_socket_path && !o->inherit_fds) {
		if (listen_unix(o->ro_socket_path, 0666, -1, &d->ro_fd, err) < 0)
			goto fail;
		d->bound_ro = true;
	}
	/* The gateway's socket, its uid's alone (and checked again
	 * for every connection by SO_PEERCRED). */
	if (o->gateway_socket_path) {
		if (listen_unix(o->gateway_socket_path, 0600, -1, &d->gw_fd, err) < 0)
			goto fail;
		d->bound_gw = true;
		/* root gives it to the gateway's user (0600); ofcd's own user,
		 * to the gateway's group, of which it is a member (0660). */
		bool gave =
		    geteuid() == 0
			? chown(o->gateway_socket_path, o->gateway_uid, (gid_t)-1) == 0
			: o->gateway_uid == geteuid() ||
			      (o->have_gateway_gid &&
			       chown(o->gateway_socket_path, (uid_t)-1, o->gateway_gid) == 0 &&
			       chmod(o->gateway_socket_path, 0660) == 0);
		if (!gave) {
			ofc_error_set(
			    err, OFC_E_RUNTIME,
			    "cannot give %s to the gateway (uid %u): %s; ofcd's user must "
			    "be root, the gateway's, or a member of the gateway's group "
			    "(make install's sysusers.d: 'm ofcd ofc-gateway')",
			    o->gateway_socket_path, o->gateway_uid, strerror(errno));
			goto fail;
		}
		ofcd_log(d, OFCD_LOG_NOTICE, "gateway socket %s for uid %u", o->gateway_socket_path,
			 o->gateway_uid);
	}
	fd_limit(d);
	ofcd_log(d, OFCD_LOG_NOTICE, "serving fabric %s (config %s, state in %s) on %s%s%s",
		 d->cfg->f->name, o->config_path, d->state_dir, o->socket_path,
		 o->ro_socket_path ? " and read-only on " : "",
		 o->ro_socket_path ? o->ro_socket_path : "");
	*out = d;
	return 0;
fail:
	ofcd_close(d);
	return -1;
}

int ofcd_run(struct ofcd *d, struct ofc_error *err)
{
	sigset_t set;
	int rc;

	d->loop = loop_new((int)d->o.max_clients * 2 + 1024, err);
	if (!d->loop)
		return -1;
	if (d->o.signals) {
		sigemptyset(&set);
		sigaddset(&set, SIGTERM);
		sigaddset(&set, SIGINT);
		sigaddset(&set, SIGHUP);
		/* Blocked before the workers start, so they inherit it and
		 * every signal arrives through the signalfd. */
		pthread_sigmask(SIG_BLOCK, &set, NULL);
		d->sig_fd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
		if (d->sig_fd < 0)
			return ofc_error_set(err, OFC_E_RUNTIME, "signalfd: %s", strerror(errno));
		loop_add(d->loop, d->sig_fd, LOOP_READ, signal_event, d);
	}
	conn_listeners(d, true);
	loop_add(d->loop, d->wake_fd, LOOP_READ, wake_event, d);
	d->sweep_timer = loop_timer(d->loop, 1000, sweep_timer, d);
	if (d->o.probe_interval > 0)
		d->probe_timer =
		    loop_timer(d->loop, (int64_t)(d->o.probe_interval * 1000), probe_timer, d);
	if (pthread_create(&d->mthread, NULL, ofcd_mutation_worker, d) != 0 ||
	    pthread_create(&d->sthread, NULL, ofcd_schedule_worker, d) != 0)
		return ofc_error_set(err, OFC_E_RUNTIME, "cannot start the worker threads");
	d->threads_started = true;
	if (d->o.notify)
		d->o.notify(d->o.log_ctx, "READY=1");
	/* Read every device once now (the probe, reported in the log), rather
	 * than first after --probe-interval: a device ofcd cannot reach, or
	 * one changed while ofcd was down, shows at start. Probing off (0)
	 * means no device is read unasked, at start either. */
	if (d->o.probe_interval > 0 && !d->clustered) {
		struct job *j = xcalloc(1, sizeof(*j));

		j->kind = JOB_PROBE;
		j->startup = true;
		ofcd_hand_to_worker(d, j);
	}
	/* A replica campaigns now: it reads its devices once it
	 * leads. */
	if (d->clustered) {
		if (cluster_start(d, err) < 0)
			return -1;
		d->cluster_timer = loop_timer(d->loop, 250, cluster_timer, d);
	}
	/* Ready before the workload's schedule: an all-to-all's is computed
	 * now, in the background. */
	ofcd_plan_check(d);
	/* A stop asked before the loop ran is in the eventfd already. */
	rc = loop_run(d->loop, err);
	pthread_mutex_lock(&d->mu);
	d->workers_stop = true;
	pthread_cond_broadcast(&d->cond);
	pthread_mutex_unlock(&d->mu);
	pthread_join(d->mthread, NULL);
	pthread_join(d->sthread, NULL);
	d->threads_started = false;
	/* The running transaction has ended: a follower takes over at once
	 * instead of after the lease. */
	store_resign(d->store);
	ofcd_log(d, OFCD_LOG_NOTICE, "stopped: %llu requests answered, %llu with an error",
		 (unsigned long long)d->requests, (unsigned long long)d->errors);
	return rc;
}

void ofcd_stop(struct ofcd *d)
{
	uint64_t one = 1;

	atomic_store(&d->stop_req, 1);
	(void)!write(d->wake_fd, &one, sizeof(one));
}

void ofcd_reload(struct ofcd *d)
{
	uint64_t one = 1;

	atomic_store(&d->reload_req, 1);
	(void)!write(d->wake_fd, &one, sizeof(one));
}

void ofcd_close(struct ofcd *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->nconns; i++) {
		close(d->conns[i]->fd);
		free(d->conns[i]->in);
		free(d->conns[i]->out.b);
		free(d->conns[i]);
	}
	free(d->conns);
	while (d->uids) {
		struct uid_use *u = d->uids;

		d->uids = u->next;
		free(u);
	}
	while (d->queue) {
		struct job *j = d->queue;

		d->queue = j->next;
		job_free(j);
	}
	while (d->squeue) {
		struct job *j = d->squeue;

		d->squeue = j->next;
		job_free(j);
	}
	job_free(d->mjob);
	job_free(d->plan_job);
	job_free(d->cluster_job);
	plan_abandon(d->planner);
	/* Streams still running free themselves (stream.c). */
	for (uint32_t i = 0; i < d->nstreams; i++) {
		pthread_mutex_lock(&d->streams[i]->mu);
		d->streams[i]->orphan = d->streams[i]->cancel = true;
		pthread_cond_signal(&d->streams[i]->cond);
		pthread_mutex_unlock(&d->streams[i]->mu);
	}
	free(d->streams);
	while (d->notes) {
		struct note *n = d->notes;

		d->notes = n->next;
		note_free(n);
	}
	if (d->listen_fd >= 0)
		close(d->listen_fd);
	if (d->ro_fd >= 0)
		close(d->ro_fd);
	if (d->bound_main)
		unlink(d->o.socket_path);
	if (d->bound_ro)
		unlink(d->o.ro_socket_path);
	if (d->gw_fd >= 0)
		close(d->gw_fd);
	if (d->bound_gw)
		unlink(d->o.gateway_socket_path);
	if (d->sig_fd >= 0)
		close(d->sig_fd);
	/* the devices first: their drivers' threads (notifications) wake the
	 * loop through wake_fd until they stop */
	ctl_close(d->w_ctl);
	if (d->wake_fd >= 0)
		close(d->wake_fd);
	for (size_t i = 0; i < ARRAY_SIZE(d->cache); i++)
		free(d->cache[i].buf);
	snapshot_free(d->snap);
	fabcfg_unref(d->cfg);
	fabcfg_unref(d->w_cfg);
	fabcfg_unref(d->w_pub);
	fabcfg_unref(d->w_base);
	free(d->w_sync_bytes);
	free(d->w_damaged);
	strv_free(d->w_reported, d->nw_reported);
	strv_free(d->w_lost, d->nw_lost);
	for (uint32_t i = 0; i < d->nw_moves; i++)
		free(d->w_moves[i].host);
	free(d->w_moves);
	held_free_all(d);
	loop_free(d->loop);
	pthread_mutex_destroy(&d->mu);
	pthread_cond_destroy(&d->cond);
	pthread_mutex_destroy(&d->note_mu);
	metrics_devices_free(&d->devm);
	pthread_mutex_destroy(&d->devm.mu);
	for (uint32_t i = 0; i < d->nw_trusted; i++)
		free(d->w_trusted[i]);
	free(d->w_trusted);
	free(d->allow);
	free(d->cred_dir);
	if (d->files.dirfd >= 0)
		close(d->files.dirfd);
	free(d->topo_dir);
	store_close(d->store);
	free(d->state_dir);
	queue_forget(d);
	outcomes_free(&d->outcomes);
	free(d);
}
