/* ofcd's connections: accepting them on the main, read-only and gateway
 * sockets (peer credentials, the admin group, the limits on clients and on
 * each user's connections and buffers, a rest for the listeners when
 * descriptors run out), reading their requests (conn_event, a budget per
 * wake-up), and closing the ones marked dead, whose queued mutations are
 * dropped (cancel_job, job_queue.c). Their frames and answers are
 * conn_io.c's. */
#include "controller/ofcd/conn.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#ifndef SO_PEERGROUPS
#define SO_PEERGROUPS 59
#endif

#define ACCEPT_BACKOFF_MIN 50	      /* ms the listeners rest after EMFILE, doubling ... */
#define ACCEPT_BACKOFF_MAX 1000	      /* ... up to this */
#define ACCEPT_LOG_EVERY   60.0	      /* s between two lines about it */
#define READ_BUDGET	   (1u << 20) /* bytes read from one client per wake-up (fairness) */

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

	for (u = d->loop->uids; u; u = u->next)
		if (u->uid == uid)
			return u;
	u = xcalloc(1, sizeof(*u));
	u->uid = uid;
	u->next = d->loop->uids;
	d->loop->uids = u;
	return u;
}

static void uid_unuse(struct ofcd *d, struct uid_use *u)
{
	if (u->conns)
		return;
	for (struct uid_use **pp = &d->loop->uids; *pp; pp = &(*pp)->next)
		if (*pp == u) {
			*pp = u->next;
			free(u);
			return;
		}
}

static void accept_event(struct loop *l, int lfd, void *ctx, unsigned mask);

void conn_listeners(struct ofcd *d, bool on)
{
	if (d->loop->listen_fd >= 0) {
		if (on)
			loop_add(d->loop->ev, d->loop->listen_fd, LOOP_READ, accept_event, d);
		else
			loop_del(d->loop->ev, d->loop->listen_fd, LOOP_READ);
	}
	if (d->loop->ro_fd >= 0) {
		if (on)
			loop_add(d->loop->ev, d->loop->ro_fd, LOOP_READ, accept_event, d);
		else
			loop_del(d->loop->ev, d->loop->ro_fd, LOOP_READ);
	}
	if (d->loop->gw_fd >= 0) {
		if (on)
			loop_add(d->loop->ev, d->loop->gw_fd, LOOP_READ, accept_event, d);
		else
			loop_del(d->loop->ev, d->loop->gw_fd, LOOP_READ);
	}
}

static int64_t accept_resume(struct loop *l, uint64_t id, void *ctx)
{
	struct ofcd *d = ctx;

	(void)l;
	(void)id;
	d->loop->accept_timer = 0;
	if (!d->loop->stopping)
		conn_listeners(d, true); /* begin_stop closed them otherwise */
	return LOOP_NOMORE;
}

/* Out of descriptors: the pending connection stays in the backlog and the
 * listener stays readable, so a level-triggered loop would spin on it (and
 * log each time). Rest the listeners instead; one line per episode. */
static void accept_backoff(struct ofcd *d, int e)
{
	if (d->loop->accept_timer)
		return;
	d->loop->accept_refusals++;
	if (!d->loop->accept_backoff_ms) {
		double now = now_seconds();

		d->loop->accept_backoff_ms = ACCEPT_BACKOFF_MIN;
		/* At the limit, one client leaving lets one in, and the next
		 * finds the limit again: one line a minute, not one a client. */
		if (!d->loop->accept_logged || now - d->loop->accept_logged >= ACCEPT_LOG_EVERY) {
			d->loop->accept_logged = now;
			d->loop->accept_told = true;
			ofcd_log_peer(d, OFCD_LOG_ERR,
				      "accept: %s with %zu clients connected: not accepting for "
				      "a while (raise LimitNOFILE or lower --max-clients)",
				      strerror(e), d->loop->nconns);
		}
	} else if (d->loop->accept_backoff_ms < ACCEPT_BACKOFF_MAX) {
		d->loop->accept_backoff_ms *= 2;
		if (d->loop->accept_backoff_ms > ACCEPT_BACKOFF_MAX)
			d->loop->accept_backoff_ms = ACCEPT_BACKOFF_MAX;
	}
	conn_listeners(d, false);
	d->loop->accept_timer =
	    loop_timer(d->loop->ev, d->loop->accept_backoff_ms, accept_resume, d);
}

/* Before a user is refused for the number of its connections: finish
 * those it has hung up already but the loop has not read to their end yet
 * (a script's quick connections, accepted in one batch). */
static void finish_hung_up(struct ofcd *d, uid_t uid)
{
	uint64_t *ids = NULL;
	size_t n = 0, cap = 0;

	for (size_t i = 0; i < d->loop->nconns; i++) {
		struct conn *c = d->loop->conns[i];
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
			conn_event(d->loop->ev, c->fd, c, LOOP_READ);
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
		if (d->loop->accept_backoff_ms && d->loop->accept_told) {
			ofcd_log_peer(d, OFCD_LOG_NOTICE,
				      "accepting connections again (%llu pauses for want of "
				      "descriptors)",
				      (unsigned long long)d->loop->accept_refusals);
			d->loop->accept_refusals = 0;
			d->loop->accept_told = false;
		}
		d->loop->accept_backoff_ms = 0;
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
		if (d->loop->nconns >= d->o.max_clients)
			snprintf(why, sizeof(why), "ofcd has too many clients (%zu)",
				 d->loop->nconns);
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
		else if (lfd == d->loop->gw_fd && cr.uid != d->o.gateway_uid)
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
		c->id = ++d->loop->next_conn_id;
		c->peer = cr;
		c->use = u;
		u->conns++;
		c->ro = lfd == d->loop->ro_fd;
		c->gw = lfd == d->loop->gw_fd;
		c->admin = !c->ro && !c->gw && (cr.uid == 0 || in_admin_group(d, fd, &cr));
		c->in_cap = IN_INITIAL;
		c->in = xmalloc(c->in_cap);
		conn_charge(c, c->in_cap, 0);
		c->reading = true;
		GROW(d->loop->conns, d->loop->cap_conns, d->loop->nconns + 1);
		d->loop->conns[d->loop->nconns++] = c;
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
	for (struct job *j = d->loop->queue, *next; j; j = next) {
		next = j->next;
		if (j->conn_id == c->id)
			cancel_job(d, j, "dropped: its client went away");
	}
	loop_del(d->loop->ev, c->fd, LOOP_READ | LOOP_WRITE);
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
	for (size_t i = 0; i < d->loop->nconns; i++) {
		struct conn *c = d->loop->conns[i];

		if (c->dead) {
			GROW(dead, cap, ndead + 1);
			dead[ndead++] = c;
		} else {
			d->loop->conns[k++] = c;
		}
	}
	d->loop->nconns = k;
	for (size_t i = 0; i < ndead; i++)
		conn_free(d, dead[i]);
	free(dead);
}
