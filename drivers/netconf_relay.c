/* The byte relay between a NETCONF connection and libnetconf2
 * (docs/netconf.md), for the driver and build/netconf-emu alike.
 *
 * libnetconf2 2.0 reads a whole message before it returns: it has no bound
 * on a message's size and waits up to 300 s for one that keeps coming
 * (READ_ACTIVE_TIMEOUT, a compile-time constant), so a device that sends a
 * 100 MB reply or one that never ends would hold ofc for minutes and grow
 * its memory without limit. Neither end therefore hands libnetconf2 the
 * device's connection: it gets one end of a socketpair
 * (nc_connect_inout / nc_accept_inout), and this thread moves bytes
 * between the other end and the connection (an SSH channel, TLS, or a
 * socket).
 * The owner arms it per exchange with a bound on what may come in and an
 * absolute deadline; past either, the relay cuts the connection and ends
 * libnetconf2's input, so its read fails at once, and says why.
 *
 * The framing is read exactly (netconf_frame.c), so what libnetconf2 gets
 * is whole messages (but for one larger than the buffer); bytes that are
 * not the framing end the connection. A listener (ncrelay_listen: the
 * driver's notification session) has this thread read the session too:
 * each message goes to libnetconf2 alone and whole, then the listener
 * reads it, so one thread serves the session.
 *
 * The relay's own end of the socketpair stays open until the owner stops
 * it (it drains and drops what libnetconf2 writes after the connection is
 * gone): a write into a closed socketpair would raise SIGPIPE in the
 * owner's thread, and the CLI does not ignore it.
 */
#include "drivers/drivers.h"

#include <errno.h>
#include <fcntl.h>
#include <libssh/libssh.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#define BUF_CAP (256u << 10) /* bytes held in each direction */

struct ncrelay {
	pthread_t thread;
	int lib_fd;  /* the owner's end: given to libnetconf2 */
	int my_fd;   /* the relay's end */
	int wake[2]; /* the owner wakes the thread (arm, stop) */
	int peer_fd; /* a socket connection, or -1 */
	ssh_session ssh;
	ssh_channel chan;
	struct nctls *tls; /* or TLS on its own socket (netconf_tls.c) */

	pthread_mutex_t mu; /* guards what follows */
	bool stop;
	bool cut;	 /* the owner ends the connection */
	bool mute;	 /* drop what libnetconf2 writes (the emulator's stall) */
	uint64_t budget; /* bytes the connection may still send (armed) */
	bool armed;
	double deadline; /* absolute; 0: none */
	double span;	 /* > 0: the deadline is this long after the next byte in */
	enum ncrelay_end end;
	uint64_t in_bytes, out_bytes;
	char *inject; /* bytes for the peer that bypass libnetconf2 (and mute) */
	size_t ninject;
	const char *framing; /* why the peer's bytes are not framing */
	/* A listener (ncrelay_listen): its calls, its bound on a message. */
	bool (*on_msg)(void *ctx);
	void (*on_end)(void *ctx);
	void *ctx;
	uint64_t listen_max;

	/* The relay thread's own: the framing of what comes in, of what went
	 * to libnetconf2, and of libnetconf2's hello. */
	struct ncframe in_scan, sent_scan, out_scan;
	size_t lib_cap; /* bytes libnetconf2's input may hold unread */
};

static void set_end(struct ncrelay *r, enum ncrelay_end why)
{
	pthread_mutex_lock(&r->mu);
	if (r->end == NCRELAY_OPEN)
		r->end = why;
	pthread_mutex_unlock(&r->mu);
}

static void close_peer(struct ncrelay *r)
{
	if (r->tls) {
		nctls_close(r->tls);
		r->tls = NULL;
	}
	if (r->chan) {
		ssh_channel_close(r->chan);
		ssh_channel_free(r->chan);
		r->chan = NULL;
	}
	if (r->ssh) {
		ssh_disconnect(r->ssh);
		ssh_free(r->ssh);
		r->ssh = NULL;
	}
	if (r->peer_fd >= 0) {
		close(r->peer_fd);
		r->peer_fd = -1;
	}
}

/* Read from the connection into buf (at most n): bytes, 0 when nothing is
 * there now, -1 at its end (eof: true) or on an error. */
static long peer_read(struct ncrelay *r, char *buf, size_t n, bool *eof)
{
	if (r->tls)
		return nctls_recv(r->tls, buf, n, eof);
	if (r->chan) {
		int k = ssh_channel_read_nonblocking(r->chan, buf, (uint32_t)n, 0);

		if (k > 0)
			return k;
		if (k == SSH_EOF || ssh_channel_is_eof(r->chan) || ssh_channel_is_closed(r->chan)) {
			*eof = true;
			return -1;
		}
		return k == 0 ? 0 : -1;
	}
	ssize_t k = recv(r->peer_fd, buf, n, MSG_DONTWAIT);
	if (k > 0)
		return k;
	if (k == 0) {
		*eof = true;
		return -1;
	}
	return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? 0 : -1;
}

/* Write to the connection: bytes written (maybe 0), or -1. An SSH channel
 * write blocks until the window opens, bounded by the session's timeout
 * (SSH_OPTIONS_TIMEOUT, set by whoever made it). */
static long peer_write(struct ncrelay *r, const char *buf, size_t n)
{
	if (r->tls)
		return nctls_send(r->tls, buf, n);
	if (r->chan) {
		int k = ssh_channel_write(r->chan, buf, (uint32_t)(n > 32768 ? 32768 : n));

		return k < 0 ? -1 : k;
	}
	ssize_t k = send(r->peer_fd, buf, n, MSG_DONTWAIT | MSG_NOSIGNAL);
	if (k >= 0)
		return k;
	return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? 0 : -1;
}

struct dir {
	char *buf;
	size_t len;
	size_t ready; /* in: bytes up to the end of the last whole message */
	size_t scan;  /* in: bytes the framing has read */
	size_t msg;   /* in, listening: bytes of the message being handed over */
};

static void take(struct dir *d, size_t n)
{
	memmove(d->buf, d->buf + n, d->len - n);
	d->len -= n;
	d->ready = d->ready > n ? d->ready - n : 0;
	d->scan = d->scan > n ? d->scan - n : 0;
}

/* What came from the connection goes to libnetconf2 a message at a time:
 * up to the end of the last whole message in the buffer (RFC 6242's
 * framing read exactly, netconf_frame.c), else all of it once the buffer
 * is full of one message or the connection is over. libnetconf2 2.0
 * sleeps (usleep) after every read of its input that finds nothing before
 * a message's end, so a reply handed over in pieces costs a sleep per
 * piece. Bytes that are not the framing end the connection
 * (NCRELAY_FRAMING), as do those past a listener's bound on a message. */
static enum ncrelay_end scan_in(struct ncrelay *r, struct dir *in)
{
	while (in->scan < in->len) {
		size_t end;
		long k =
		    ncframe_feed(&r->in_scan, in->buf + in->scan, in->len - in->scan, false, &end);

		if (k < 0) {
			pthread_mutex_lock(&r->mu);
			r->framing = r->in_scan.error;
			pthread_mutex_unlock(&r->mu);
			return k == -2 ? NCRELAY_TOO_BIG : NCRELAY_FRAMING;
		}
		if (end)
			in->ready = in->scan + end;
		in->scan += (size_t)k;
		if (r->in_scan.mode == NCF_WAIT) {
			if (r->out_scan.mode == NCF_HELLO)
				break; /* until libnetconf2's hello */
			ncframe_decide(&r->in_scan, r->out_scan.base11);
		}
	}
	return NCRELAY_OPEN;
}

/* What went to libnetconf2, read by the same framing: where a listener's
 * next whole message ends. The framing after the peer's hello is known
 * once libnetconf2's hello is read too (turn decides it then): nothing
 * past the peer's hello is handed over before that, as scan_in holds
 * in->ready at the hello's end until then. */
static void sent(struct ncrelay *r, const char *buf, size_t n)
{
	while (n) {
		size_t end;
		long k = ncframe_feed(&r->sent_scan, buf, n, false, &end);

		if (k <= 0 && r->sent_scan.mode != NCF_WAIT)
			return; /* bytes the scan of what came refused: the end */
		if (r->sent_scan.mode == NCF_WAIT) {
			if (r->out_scan.mode == NCF_HELLO)
				return;
			ncframe_decide(&r->sent_scan, r->out_scan.base11);
		}
		buf += k;
		n -= (size_t)k;
	}
}

static bool listening(struct ncrelay *r)
{
	bool l;

	pthread_mutex_lock(&r->mu);
	l = r->on_msg != NULL;
	pthread_mutex_unlock(&r->mu);
	return l;
}

static size_t deliverable(struct ncrelay *r, const struct dir *in, bool peer_gone)
{
	if (listening(r))
		return 0; /* a message at a time (listen_turn) */
	return peer_gone || (in->len >= BUF_CAP && !in->ready) ? in->len : in->ready;
}

/* One turn: move what can move without waiting. Returns the end when the
 * connection is over, else NCRELAY_OPEN. */
static enum ncrelay_end turn(struct ncrelay *r, struct dir *in, struct dir *out, bool *peer_gone,
			     bool *lib_gone)
{
	bool eof = false;

	if (!*peer_gone && in->len < BUF_CAP) {
		long k = peer_read(r, in->buf + in->len, BUF_CAP - in->len, &eof);

		if (k < 0) {
			*peer_gone = true;
			close_peer(r);
			return eof ? NCRELAY_EOF : NCRELAY_LOST;
		}
		if (k > 0) {
			bool over;

			pthread_mutex_lock(&r->mu);
			r->in_bytes += (uint64_t)k;
			if (r->span > 0 && r->deadline == 0)
				r->deadline = now_seconds() + r->span;
			over = r->armed && (uint64_t)k > r->budget;
			r->budget = over ? 0 : r->budget - (uint64_t)k;
			pthread_mutex_unlock(&r->mu);
			if (over)
				return NCRELAY_TOO_BIG;
			in->len += (size_t)k;
		}
	}
	enum ncrelay_end bad = scan_in(r, in);

	if (bad != NCRELAY_OPEN)
		return bad;
	size_t give = deliverable(r, in, *peer_gone);

	if (give) {
		ssize_t k = send(r->my_fd, in->buf, give, MSG_DONTWAIT | MSG_NOSIGNAL);

		if (k > 0) {
			sent(r, in->buf, (size_t)k);
			take(in, (size_t)k);
		} else if (k < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
			*lib_gone = true;
	}
	if (!*lib_gone && out->len < BUF_CAP) {
		ssize_t k = recv(r->my_fd, out->buf + out->len, BUF_CAP - out->len, MSG_DONTWAIT);
		bool mute;

		if (k == 0 ||
		    (k < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
			*lib_gone = true;
			return NCRELAY_CLOSED;
		}
		pthread_mutex_lock(&r->mu);
		mute = r->mute;
		pthread_mutex_unlock(&r->mu);
		if (k > 0 && r->out_scan.mode == NCF_HELLO) {
			size_t end;

			ncframe_feed(&r->out_scan, out->buf + out->len, (size_t)k, true, &end);
			/* the peer's hello went to libnetconf2 before its own
			 * was read: what follows it is framed as both say */
			if (r->out_scan.mode != NCF_HELLO && r->sent_scan.mode == NCF_WAIT)
				ncframe_decide(&r->sent_scan, r->out_scan.base11);
		}
		if (k > 0 && !mute && !*peer_gone)
			out->len += (size_t)k;
	}
	pthread_mutex_lock(&r->mu);
	if (r->ninject && out->len < BUF_CAP) {
		size_t k = r->ninject < BUF_CAP - out->len ? r->ninject : BUF_CAP - out->len;

		memcpy(out->buf + out->len, r->inject, k);
		out->len += k;
		memmove(r->inject, r->inject + k, r->ninject - k);
		r->ninject -= k;
	}
	pthread_mutex_unlock(&r->mu);
	if (*peer_gone)
		out->len = 0;
	if (out->len && !*peer_gone) {
		long k = peer_write(r, out->buf, out->len);

		if (k < 0) {
			*peer_gone = true;
			close_peer(r);
			return NCRELAY_LOST;
		}
		take(out, (size_t)k);
		pthread_mutex_lock(&r->mu);
		r->out_bytes += (uint64_t)k;
		pthread_mutex_unlock(&r->mu);
	}
	return NCRELAY_OPEN;
}

/* A listener takes over (ncrelay_listen). What libnetconf2 has not read
 * yet (it reads a message per call, nothing past it) comes back to the
 * front of what came in, so that each message is handed over alone from
 * its start. */
static enum ncrelay_end listen_begin(struct ncrelay *r, struct dir *in)
{
	int unread = 0;

	if (ioctl(r->lib_fd, FIONREAD, &unread) < 0 || unread < 0 || (size_t)unread > r->lib_cap)
		return NCRELAY_CLOSED;
	in->buf = xrealloc(in->buf, BUF_CAP + r->lib_cap);
	memmove(in->buf + unread, in->buf, in->len);
	for (size_t got = 0; got < (size_t)unread;) {
		ssize_t k = recv(r->lib_fd, in->buf + got, (size_t)unread - got, MSG_DONTWAIT);

		if (k <= 0)
			return NCRELAY_CLOSED;
		got += (size_t)k;
	}
	in->len += (size_t)unread;
	in->scan += (size_t)unread;
	in->ready = in->msg = 0;
	ncframe_restart(&r->sent_scan);
	pthread_mutex_lock(&r->mu);
	r->in_scan.max = r->listen_max;
	if (in->len) /* a message begun: its deadline runs now */
		r->deadline = now_seconds() + r->span;
	pthread_mutex_unlock(&r->mu);
	return NCRELAY_OPEN;
}

/* Listening: the next whole message goes to libnetconf2 alone, then the
 * listener reads it, all there (its read never waits for a rest that only
 * this thread could bring). */
static enum ncrelay_end listen_turn(struct ncrelay *r, struct dir *in, bool *lib_gone)
{
	for (;;) {
		bool (*on_msg)(void *);
		void *ctx;
		ssize_t k;

		if (!in->msg) {
			struct ncframe t = r->sent_scan;
			size_t end = 0;

			if (ncframe_feed(&t, in->buf, in->scan, true, &end) < 0 || !end)
				return NCRELAY_OPEN;
			in->msg = end;
		}
		k = send(r->my_fd, in->buf, in->msg, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (k < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
			*lib_gone = true;
			return NCRELAY_CLOSED;
		}
		if (k <= 0)
			return NCRELAY_OPEN;
		sent(r, in->buf, (size_t)k);
		take(in, (size_t)k);
		in->msg -= (size_t)k;
		if (in->msg)
			return NCRELAY_OPEN; /* the rest once there is room */
		pthread_mutex_lock(&r->mu);
		/* the next message's deadline runs from its first byte */
		r->deadline = in->len ? now_seconds() + r->span : 0;
		on_msg = r->on_msg;
		ctx = r->ctx;
		pthread_mutex_unlock(&r->mu);
		if (!on_msg(ctx))
			return NCRELAY_CLOSED;
	}
}

/* Wait for something to move, at most until the deadline. libssh may hold
 * bytes it has decrypted already: they were taken by the read before
 * unless the buffer towards libnetconf2 is full, and then its POLLOUT
 * wakes us. */
static void wait_turn(struct ncrelay *r, const struct dir *in, const struct dir *out,
		      bool peer_gone, double deadline)
{
	struct pollfd p[3];
	nfds_t np = 0;
	int pfd = r->tls ? nctls_fd(r->tls) : r->chan ? ssh_get_fd(r->ssh) : r->peer_fd;
	int ms = 1000;
	bool give = deliverable(r, in, peer_gone) || in->msg;

	p[np++] = (struct pollfd){.fd = r->wake[0], .events = POLLIN};
	p[np++] = (struct pollfd){
	    .fd = r->my_fd,
	    .events = (short)((out->len < BUF_CAP ? POLLIN : 0) | (give ? POLLOUT : 0))};
	if (!peer_gone && pfd >= 0)
		p[np++] = (struct pollfd){
		    .fd = pfd,
		    .events = (short)((in->len < BUF_CAP ? POLLIN : 0) | (out->len ? POLLOUT : 0))};
	if (deadline > 0) {
		double left = deadline - now_seconds();

		ms = left <= 0 ? 0 : left < 1 ? (int)(left * 1000) + 1 : 1000;
	}
	pthread_mutex_lock(&r->mu);
	if (r->ninject && out->len < BUF_CAP && !peer_gone)
		ms = 0; /* injected bytes to move */
	pthread_mutex_unlock(&r->mu);
	if (r->chan && !peer_gone && in->len < BUF_CAP && ssh_channel_poll(r->chan, 0) != 0)
		ms = 0; /* decrypted bytes wait, or the channel ended */
	if (r->tls && !peer_gone && in->len < BUF_CAP && nctls_pending(r->tls))
		ms = 0; /* decrypted bytes wait */
	if (poll(p, np, ms) > 0 && (p[0].revents & POLLIN)) {
		char drain[64];

		while (read(r->wake[0], drain, sizeof(drain)) > 0)
			;
	}
}

static void *relay_main(void *arg)
{
	struct ncrelay *r = arg;
	struct dir in = {xmalloc(BUF_CAP), 0}, out = {xmalloc(BUF_CAP), 0};
	bool peer_gone = false, lib_gone = false, lib_shut = false, began = false;

	ofc_thread_name("netconf-relay");
	for (;;) {
		enum ncrelay_end why = turn(r, &in, &out, &peer_gone, &lib_gone), end;
		double deadline, now = now_seconds();
		bool stop, cut;

		if (!began && listening(r)) {
			began = true;
			if (why == NCRELAY_OPEN && !peer_gone)
				why = listen_begin(r, &in);
		}
		if (why == NCRELAY_OPEN && began && !peer_gone)
			why = listen_turn(r, &in, &lib_gone);
		pthread_mutex_lock(&r->mu);
		stop = r->stop;
		cut = r->cut;
		deadline = r->deadline;
		end = r->end;
		pthread_mutex_unlock(&r->mu);
		if (why == NCRELAY_OPEN && cut)
			why = NCRELAY_CLOSED;
		if (why == NCRELAY_OPEN && deadline > 0 && now >= deadline)
			why = NCRELAY_TIMEOUT;
		if (why != NCRELAY_OPEN) {
			set_end(r, why);
			if (!peer_gone) {
				peer_gone = true;
				close_peer(r);
			}
			/* what came before a cut is not delivered: the reply
			 * is refused whole */
			if (why != NCRELAY_EOF)
				in.len = in.ready = in.scan = in.msg = 0;
		}
		if ((peer_gone && !in.len && !lib_shut) ||
		    (began && (why || end || peer_gone || lib_gone))) {
			/* libnetconf2 reads the end of its input; its writes
			 * still land here and are dropped (no SIGPIPE). */
			if (!lib_shut)
				shutdown(r->my_fd, SHUT_WR);
			lib_shut = true;
		}
		if (began && (why || end || peer_gone || lib_gone || stop)) {
			/* the listener's session is over: its owner closes it
			 * (and stops this thread) */
			set_end(r, NCRELAY_CLOSED);
			r->on_end(r->ctx);
			break;
		}
		if (stop || lib_gone)
			break;
		wait_turn(r, &in, &out, peer_gone, deadline);
	}
	if (!peer_gone)
		close_peer(r);
	set_end(r, NCRELAY_CLOSED);
	free(in.buf);
	free(out.buf);
	return NULL;
}

/* What libnetconf2's input can hold unread: a unix socket's writer may
 * pass its send buffer (counted with the kernel's overhead) by one
 * write's worth. A listener's messages are bounded to half the buffer,
 * so that one always goes in whole. */
static size_t lib_room(int fd)
{
	int n = BUF_CAP;
	socklen_t len = sizeof(n);

	(void)setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &n, sizeof(n)); /* as the system allows */
	if (getsockopt(fd, SOL_SOCKET, SO_SNDBUF, &n, &len) < 0 || n <= 0)
		n = 1 << 20;
	return 2 * (size_t)n;
}

static struct ncrelay *start(int peer_fd, void *ssh, void *chan, struct nctls *tls, int *lib_fd,
			     struct ofc_error *err)
{
	struct ncrelay *r = xcalloc(1, sizeof(*r));
	int sp[2];

	r->peer_fd = peer_fd;
	r->ssh = ssh;
	r->chan = chan;
	r->tls = tls;
	r->wake[0] = r->wake[1] = -1;
	pthread_mutex_init(&r->mu, NULL);
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) < 0 ||
	    (pipe2(r->wake, O_CLOEXEC | O_NONBLOCK) < 0 && (close(sp[0]), close(sp[1]), 1))) {
		ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_LOST, "socketpair: %s", strerror(errno));
		goto fail;
	}
	r->lib_fd = sp[0];
	r->my_fd = sp[1];
	fcntl(r->my_fd, F_SETFL, fcntl(r->my_fd, F_GETFL) | O_NONBLOCK);
	r->lib_cap = lib_room(r->my_fd);
	ncframe_init(&r->in_scan, 0);
	ncframe_init(&r->sent_scan, 0);
	ncframe_init(&r->out_scan, 0);
	if (peer_fd >= 0)
		fcntl(peer_fd, F_SETFL, fcntl(peer_fd, F_GETFL) | O_NONBLOCK);
	if (pthread_create(&r->thread, NULL, relay_main, r) != 0) {
		ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_LOST, "cannot start the relay thread");
		close(sp[0]);
		close(sp[1]);
		goto fail;
	}
	*lib_fd = r->lib_fd;
	return r;
fail:
	if (r->wake[0] >= 0) {
		close(r->wake[0]);
		close(r->wake[1]);
	}
	close_peer(r);
	pthread_mutex_destroy(&r->mu);
	free(r);
	return NULL;
}

struct ncrelay *ncrelay_start(int peer_fd, void *ssh, void *chan, int *lib_fd,
			      struct ofc_error *err)
{
	return start(peer_fd, ssh, chan, NULL, lib_fd, err);
}

struct ncrelay *ncrelay_start_tls(struct nctls *tls, int *lib_fd, struct ofc_error *err)
{
	return start(-1, NULL, NULL, tls, lib_fd, err);
}

static void wake(struct ncrelay *r)
{
	(void)!write(r->wake[1], "w", 1);
}

void ncrelay_arm(struct ncrelay *r, uint64_t max_in, double deadline)
{
	pthread_mutex_lock(&r->mu);
	r->armed = max_in > 0;
	r->budget = max_in;
	r->deadline = deadline;
	r->span = 0;
	pthread_mutex_unlock(&r->mu);
	wake(r);
}

void ncrelay_arm_span(struct ncrelay *r, uint64_t max_in, double span)
{
	pthread_mutex_lock(&r->mu);
	r->armed = max_in > 0;
	r->budget = max_in;
	r->deadline = 0;
	r->span = span;
	pthread_mutex_unlock(&r->mu);
	wake(r);
}

size_t ncrelay_inject(struct ncrelay *r, const void *buf, size_t n)
{
	size_t k;

	pthread_mutex_lock(&r->mu);
	if (!r->inject)
		r->inject = xmalloc(BUF_CAP);
	k = r->end != NCRELAY_OPEN ? n : n < BUF_CAP - r->ninject ? n : BUF_CAP - r->ninject;
	if (r->end == NCRELAY_OPEN) {
		memcpy(r->inject + r->ninject, buf, k);
		r->ninject += k;
	}
	pthread_mutex_unlock(&r->mu);
	wake(r);
	return k;
}

void ncrelay_listen(struct ncrelay *r, uint64_t max, double span, bool (*on_msg)(void *ctx),
		    void (*on_end)(void *ctx), void *ctx)
{
	uint64_t room = r->lib_cap / 4 < BUF_CAP / 2 ? r->lib_cap / 4 : BUF_CAP / 2;

	pthread_mutex_lock(&r->mu);
	r->listen_max = max && max < room ? max : room;
	r->on_end = on_end;
	r->ctx = ctx;
	r->on_msg = on_msg;
	r->armed = false;
	r->budget = 0;
	r->deadline = 0;
	r->span = span;
	pthread_mutex_unlock(&r->mu);
	wake(r);
}

const char *ncrelay_framing(struct ncrelay *r)
{
	const char *why;

	pthread_mutex_lock(&r->mu);
	why = r->framing;
	pthread_mutex_unlock(&r->mu);
	return why ? why : "";
}

void ncrelay_mute(struct ncrelay *r, bool mute)
{
	pthread_mutex_lock(&r->mu);
	r->mute = mute;
	pthread_mutex_unlock(&r->mu);
}

enum ncrelay_end ncrelay_state(struct ncrelay *r, uint64_t *in_bytes)
{
	enum ncrelay_end e;

	pthread_mutex_lock(&r->mu);
	e = r->end;
	if (in_bytes)
		*in_bytes = r->in_bytes;
	pthread_mutex_unlock(&r->mu);
	return e;
}

void ncrelay_cut(struct ncrelay *r)
{
	pthread_mutex_lock(&r->mu);
	r->cut = true;
	pthread_mutex_unlock(&r->mu);
	wake(r);
}

void ncrelay_stop(struct ncrelay *r)
{
	if (!r)
		return;
	pthread_mutex_lock(&r->mu);
	r->stop = true;
	pthread_mutex_unlock(&r->mu);
	wake(r);
	pthread_join(r->thread, NULL);
	close(r->my_fd);
	close(r->wake[0]);
	close(r->wake[1]);
	pthread_mutex_destroy(&r->mu);
	free(r->inject);
	free(r);
}
