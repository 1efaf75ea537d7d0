/* Link probes (exec.h): one TCP connection per circuit, from the source
 * end's address to the far end's, opened inside the hosts' namespaces.
 *
 * Latency: one circuit at a time, a few 8-byte messages stamped with the
 * monotonic clock (every namespace shares it) and read at the far end; the
 * least (arrival - stamp) is the one-way latency, netem's delay included.
 * One at a time, because reading many circuits in turn would add each
 * read's wait to the next one's figure.
 *
 * Rate: then every circuit at once sends for the same window of time
 * (then shuts its side down), and the far end times the bytes after its
 * first read up to the end of the stream (so connection set-up and the
 * first round trip do not count, and bytes still queued when the window
 * closes are timed as they drain). All at once is how a schedule loads
 * them; on a machine whose cores cannot keep up with the sum of the rates
 * the figures come out below the shaping, which is what a run would see
 * too: this is what a circuit can carry here. A window rather than a byte
 * count, because what a circuit carries is what is not known: bytes sized
 * from the shaped rate took 2.5 s a circuit where 48 circuits shaped to
 * 2.5 Gb/s carried 215 Mb/s each on 2 cores.
 *
 * Everything happens in a thread of its own, which enters each namespace
 * in turn to make its sockets (setns changes only the calling thread, and
 * a socket stays in the namespace it was made in); the caller's thread
 * never leaves its namespace. */
#include "exec/internal.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define LAT_ROUNDS 5
#define BULK_CHUNK (64u << 10)

struct pconn {
	struct exec_probe *pr;
	int sfd, rfd;
	bool sending, receiving;
	uint64_t rcvd, after_first;
	double t_first, t_last;
};

struct probe_run {
	const struct exec_net *net;
	double seconds; /* the window every circuit sends for */
	double deadline;
	struct pconn *c;
	uint32_t nc;
	int *lfd;
	int rc;
	struct ofc_error err;
};

static struct pconn *find_pconn(struct probe_run *p, uint32_t src, uint32_t lane)
{
	for (uint32_t i = 0; i < p->nc; i++)
		if (p->c[i].pr->host == src && p->c[i].pr->lane == lane)
			return &p->c[i];
	return NULL;
}

static int connect_all(struct probe_run *p, struct ofc_error *err)
{
	const struct exec_net *net = p->net;

	for (uint32_t h = 0; h < net->nhosts; h++) {
		if (exec_enter(net, h, err) < 0)
			return -1;
		p->lfd[h] = exec_listen(net, h, (int)net->lanes + 16, err);
		if (p->lfd[h] < 0)
			return -1;
	}
	for (uint32_t i = 0; i < p->nc; i++) {
		struct exec_probe *pr = p->c[i].pr;
		size_t k = (size_t)pr->host * net->lanes + pr->lane;

		if (exec_enter(net, pr->host, err) < 0)
			return -1;
		p->c[i].sfd = exec_connect(net->lane_local[k], net->lane_addr[k], net->tcp_port,
					   pr->host, pr->lane, p->deadline, err);
		if (p->c[i].sfd < 0) {
			ofc_error_prefix(err, "host %u port %u", pr->host, pr->lane);
			return -1;
		}
	}
	for (uint32_t i = 0; i < p->nc; i++) {
		struct exec_probe *pr = p->c[i].pr;
		uint32_t src, lane;
		int fd = exec_accept(p->lfd[pr->peer], -1, &src, &lane, p->deadline, err);
		struct pconn *c;

		if (fd < 0)
			return -1;
		c = find_pconn(p, src, lane);
		if (!c || c->rfd >= 0 || c->pr->peer != pr->peer) {
			close(fd);
			return ofc_error_set(err, OFC_E_RUNTIME,
					     "host %u port %u: the connection arrived at the wrong "
					     "host",
					     src, lane);
		}
		c->rfd = fd;
	}
	return 0;
}

static int latency(struct probe_run *p, struct pconn *c, struct ofc_error *err)
{
	c->pr->latency = 1e9;
	for (int r = 0; r < LAT_ROUNDS; r++) {
		double stamp = now_seconds(), got;

		if (fd_write_all(c->sfd, &stamp, sizeof(stamp), p->deadline, err) < 0 ||
		    fd_read_exact(c->rfd, &got, sizeof(got), p->deadline, err) < 0) {
			ofc_error_prefix(err, "host %u port %u", c->pr->host, c->pr->lane);
			return -1;
		}
		got = now_seconds() - stamp;
		if (got < c->pr->latency)
			c->pr->latency = got;
	}
	return 0;
}

static int bulk(struct probe_run *p, struct ofc_error *err)
{
	uint8_t *buf = xcalloc(1, BULK_CHUNK);
	struct pollfd *pf = xcalloc(2 * (size_t)p->nc + 1, sizeof(*pf));
	double stop = now_seconds() + p->seconds;
	int rc = -1;

	for (uint32_t i = 0; i < p->nc; i++)
		p->c[i].sending = p->c[i].receiving = true;
	for (;;) {
		size_t np = 0;
		double now = now_seconds(), left = p->deadline - now;

		for (uint32_t i = 0; i < p->nc; i++) {
			struct pconn *c = &p->c[i];

			/* The window closed: the far end reads to the end. */
			if (c->sending && now >= stop) {
				shutdown(c->sfd, SHUT_WR);
				c->sending = false;
			}
			if (c->sending)
				pf[np++] = (struct pollfd){.fd = c->sfd, .events = POLLOUT};
			if (c->receiving)
				pf[np++] = (struct pollfd){.fd = c->rfd, .events = POLLIN};
		}
		if (np == 0)
			break;
		if (left <= 0) {
			ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_TIMEOUT,
				       "the rate probe did not finish in time");
			goto out;
		}
		/* Wake for the window's end too: a sender poll() is not woken for. */
		double wait = now < stop && stop - now < left ? stop - now : left;

		if (poll(pf, np, (int)(wait * 1000) + 1) < 0 && errno != EINTR) {
			ofc_error_set(err, OFC_E_RUNTIME, "poll: %s", strerror(errno));
			goto out;
		}
		for (uint32_t i = 0; i < p->nc; i++) {
			struct pconn *c = &p->c[i];
			ssize_t n;

			while (c->sending &&
			       send(c->sfd, buf, BULK_CHUNK, MSG_DONTWAIT | MSG_NOSIGNAL) > 0)
				;
			while (c->receiving) {
				n = recv(c->rfd, buf, BULK_CHUNK, MSG_DONTWAIT);
				if (n == 0) {
					c->receiving = false;
					break;
				}
				if (n < 0)
					break;
				c->t_last = now_seconds();
				if (c->rcvd == 0)
					c->t_first = c->t_last;
				else
					c->after_first += (uint64_t)n;
				c->rcvd += (uint64_t)n;
			}
		}
	}
	for (uint32_t i = 0; i < p->nc; i++) {
		struct pconn *c = &p->c[i];

		c->pr->bytes = c->rcvd;
		if (c->t_last > c->t_first)
			c->pr->rate = 8.0 * (double)c->after_first / (c->t_last - c->t_first);
		c->pr->ok = c->pr->rate > 0;
	}
	rc = 0;
out:
	free(buf);
	free(pf);
	return rc;
}

static void *probe_main(void *arg)
{
	struct probe_run *p = arg;

	p->rc = -1;
	if (connect_all(p, &p->err) < 0)
		return NULL;
	for (uint32_t i = 0; i < p->nc; i++)
		if (latency(p, &p->c[i], &p->err) < 0)
			return NULL;
	p->rc = bulk(p, &p->err);
	return NULL;
}

int exec_probe_links(const struct exec_net *net, double seconds, double timeout,
		     struct exec_probe **out, uint32_t *n, struct ofc_error *err)
{
	struct probe_run p = {.net = net, .seconds = seconds > 0 ? seconds : 0.01, .rc = -1};
	struct exec_probe *pr;
	pthread_t th;
	uint32_t k = 0;

	*out = NULL;
	*n = 0;
	for (size_t i = 0; i < (size_t)net->nhosts * net->lanes; i++)
		k += net->lane_peer[i] != UINT32_MAX;
	pr = xcalloc(k + 1, sizeof(*pr));
	p.c = xcalloc(k + 1, sizeof(*p.c));
	p.lfd = xmalloc((net->nhosts + 1) * sizeof(int));
	for (uint32_t h = 0; h < net->nhosts; h++)
		p.lfd[h] = -1;
	for (uint32_t h = 0; h < net->nhosts; h++)
		for (uint32_t l = 0; l < net->lanes; l++) {
			uint32_t peer = net->lane_peer[(size_t)h * net->lanes + l];

			if (peer == UINT32_MAX)
				continue;
			pr[p.nc] = (struct exec_probe){.host = h, .lane = l, .peer = peer};
			p.c[p.nc] = (struct pconn){.pr = &pr[p.nc], .sfd = -1, .rfd = -1};
			p.nc++;
		}
	p.deadline = now_seconds() + timeout;
	if (pthread_create(&th, NULL, probe_main, &p) != 0) {
		ofc_error_set(err, OFC_E_RUNTIME, "cannot start the probe thread");
	} else {
		pthread_join(th, NULL);
		if (p.rc < 0)
			*err = p.err;
	}
	for (uint32_t i = 0; i < p.nc; i++) {
		if (p.c[i].sfd >= 0)
			close(p.c[i].sfd);
		if (p.c[i].rfd >= 0)
			close(p.c[i].rfd);
	}
	for (uint32_t h = 0; h < net->nhosts; h++)
		if (p.lfd[h] >= 0)
			close(p.lfd[h]);
	free(p.lfd);
	free(p.c);
	if (p.rc < 0) {
		free(pr);
		return -1;
	}
	*out = pr;
	*n = p.nc;
	return 0;
}
