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
};

static void take(struct dir *d, size_t n)
{
	memmove(d->buf, d->buf + n, d->len - n);
	d->len -= n;
	d->ready = d->ready > n ? d->ready - n : 0;
}

/* What came from the connection goes to libnetconf2 a message at a time:
 * up to the end of the last whole message in the buffer (RFC 6242's
 * chunked end, "\n##\n", or the end-of-message "]]>]]>" of a hello or of
 * base:1.0), else all of it once the buffer is full or the connection is
 * over. libnetconf2 2.0 sleeps (usleep) after every read of its input that
 * finds nothing before a message's end, so a reply handed over in pieces
 * costs a sleep per piece. A marker found inside a chunk's data only hands
 * over early, as before. */
static void find_ends(struct dir *d, size_t from)
{
	for (size_t i = from > 5 ? from - 5 : 0; i < d->len; i++) {
		if (i + 4 <= d->len && memcmp(d->buf + i, "\n##\n", 4) == 0)
			d->ready = i + 4;
		else if (i + 6 <= d->len && memcmp(d->buf + i, "]]>]]>", 6) == 0)
			d->ready = i + 6;
	}
}

static size_t deliverable(const struct dir *in, bool peer_gone)
{
	return peer_gone || in->len >= BUF_CAP ? in->len : in->ready;
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
			find_ends(in, in->len - (size_t)k);
		}
	}
	if (deliverable(in, *peer_gone)) {
		ssize_t k = send(r->my_fd, in->buf, deliverable(in, *peer_gone),
				 MSG_DONTWAIT | MSG_NOSIGNAL);

		if (k > 0)
			take(in, (size_t)k);
		else if (k < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
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

static void *relay_main(void *arg)
{
	struct ncrelay *r = arg;
	struct dir in = {xmalloc(BUF_CAP), 0}, out = {xmalloc(BUF_CAP), 0};
	bool peer_gone = false, lib_gone = false, lib_shut = false;

	ofc_thread_name("netconf-relay");
	for (;;) {
		enum ncrelay_end why = turn(r, &in, &out, &peer_gone, &lib_gone);
		double deadline, now = now_seconds();
		bool stop, cut;

		pthread_mutex_lock(&r->mu);
		stop = r->stop;
		cut = r->cut;
		deadline = r->deadline;
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
				in.len = in.ready = 0;
		}
		if (peer_gone && !in.len && !lib_shut) {
			/* libnetconf2 reads the end of its input; its writes
			 * still land here and are dropped (no SIGPIPE). */
			shutdown(r->my_fd, SHUT_WR);
			lib_shut = true;
		}
		if (stop || lib_gone)
			break;
		/* Wait for something to move. libssh may hold bytes it has
		 * decrypted already: they were taken by the read above unless
		 * the buffer towards libnetconf2 is full, and then its
		 * POLLOUT wakes us. */
		struct pollfd p[3];
		nfds_t np = 0;
		int pfd = r->tls ? nctls_fd(r->tls) : r->chan ? ssh_get_fd(r->ssh) : r->peer_fd;
		int ms = 1000;

		p[np++] = (struct pollfd){.fd = r->wake[0], .events = POLLIN};
		p[np++] =
		    (struct pollfd){.fd = r->my_fd,
				    .events = (short)((out.len < BUF_CAP ? POLLIN : 0) |
						      (deliverable(&in, peer_gone) ? POLLOUT : 0))};
		if (!peer_gone && pfd >= 0)
			p[np++] =
			    (struct pollfd){.fd = pfd,
					    .events = (short)((in.len < BUF_CAP ? POLLIN : 0) |
							      (out.len ? POLLOUT : 0))};
		if (deadline > 0) {
			double left = deadline - now_seconds();

			ms = left <= 0 ? 0 : left < 1 ? (int)(left * 1000) + 1 : 1000;
		}
		pthread_mutex_lock(&r->mu);
		if (r->ninject && out.len < BUF_CAP && !peer_gone)
			ms = 0; /* injected bytes to move */
		pthread_mutex_unlock(&r->mu);
		if (r->chan && !peer_gone && in.len < BUF_CAP && ssh_channel_poll(r->chan, 0) != 0)
			ms = 0; /* decrypted bytes wait, or the channel ended */
		if (r->tls && !peer_gone && in.len < BUF_CAP && nctls_pending(r->tls))
			ms = 0; /* decrypted bytes wait */
		if (poll(p, np, ms) > 0 && (p[0].revents & POLLIN)) {
			char drain[64];

			while (read(r->wake[0], drain, sizeof(drain)) > 0)
				;
		}
	}
	if (!peer_gone)
		close_peer(r);
	set_end(r, NCRELAY_CLOSED);
	free(in.buf);
	free(out.buf);
	return NULL;
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
