/* A connection's frames, on ofcd's loop thread: its output buffer and
 * the answers queued in it (conn_queue, send_response, reply), the frames
 * of its input buffer handed to the request chain (d->loop->chain.frame), a
 * streamed GetSchedule's frames, and a connection marked dead (conn_kill;
 * connections.c closes it). Accepting and reading are connections.c's.
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

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

void changed(struct ofcd *d)
{
	d->loop->version++;
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
	loop_del(c->d->loop->ev, c->fd, LOOP_READ | LOOP_WRITE);
}

void conn_read_pause(struct conn *c, bool pause)
{
	if (pause && c->reading)
		loop_del(c->d->loop->ev, c->fd, LOOP_READ);
	else if (!pause && !c->reading && !c->dead &&
		 loop_add(c->d->loop->ev, c->fd, LOOP_READ, NULL, NULL) < 0)
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
		loop_add(d->loop->ev, c->fd, LOOP_WRITE, NULL, NULL);
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
	loop_del(d->loop->ev, c->fd, LOOP_WRITE);
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

bool conn_queue_own(struct conn *c, uint8_t *buf, size_t n)
{
	/* conn_queue's limits; past them it refuses as it does */
	if (c->dead || conn_unsent(c) || n + 4 > (size_t)c->d->o.max_frame + (8u << 20) ||
	    !conn_charge(c, c->in_cap, n + FRAME_ROOM))
		return false;
	free(c->out.b);
	c->out.b = buf;
	c->out.off = 0;
	c->out.len = c->out.cap = n + FRAME_ROOM;
	frame_len_put(buf, (uint32_t)n);
	c->out_since = now_seconds();
	conn_flush(c);
	return true;
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
		c->d->loop->errors++;
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
	for (size_t i = 0; i < d->loop->nconns; i++)
		if (d->loop->conns[i]->id == id && !d->loop->conns[i]->dead)
			return d->loop->conns[i];
	return NULL;
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
		c->d->loop->chain.frame(c, c->in + off + 4, len);
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
