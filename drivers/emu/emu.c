/* The serving loop both device emulators (build/ocs-emu, build/mrr-emu)
 * run: accept clients, read what they send, cut it into messages with the
 * emulator's framing and hand each to its handler. A stalled session (a
 * fault the emulators inject) never answers again; a client that breaks
 * the framing or hangs up is dropped. Work an emulator puts off (a state
 * save) is done when it is idle, when a client goes, and before a SIGTERM
 * or SIGINT ends it. */
#include "drivers/emu/emu.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static void drop(struct emu_server *s, struct emu_client *c)
{
	if (s->flush)
		s->flush(s->ctx);
	close(c->fd);
	sb_free(&c->in);
	memset(c, 0, sizeof(*c));
	c->fd = -1;
}

static void on_readable(struct emu_server *s, struct emu_client *c)
{
	char buf[65536];
	ssize_t n = recv(c->fd, buf, sizeof(buf), 0);

	if (n <= 0) {
		drop(s, c);
		return;
	}
	sb_add(&c->in, buf, (size_t)n);
	clock_gettime(CLOCK_MONOTONIC, &c->received);
	for (;;) {
		char *msg;
		size_t len;
		long used = s->frame(c, &msg, &len);

		if (used == 0)
			break;
		if (used < 0) {
			drop(s, c);
			return;
		}
		bool keep = c->stalled || s->handle(s->ctx, c, msg, len);
		memmove(c->in.buf, c->in.buf + used, c->in.len - (size_t)used);
		c->in.len -= (size_t)used;
		c->in.buf[c->in.len] = 0;
		if (!keep) {
			drop(s, c);
			return;
		}
	}
	if (c->in.len > s->max_pending)
		drop(s, c);
}

static volatile sig_atomic_t got_signal;

static void on_signal(int sig)
{
	got_signal = sig;
}

/* With work put off, SIGTERM and SIGINT are taken only inside ppoll (so
 * none is missed between the check and the wait): *open is the mask to
 * wait with. */
static void catch_ends(const struct emu_server *s, sigset_t *open)
{
	struct sigaction sa = {.sa_handler = on_signal};
	sigset_t ends;

	sigprocmask(SIG_BLOCK, NULL, open);
	if (!s->flush)
		return;
	sigemptyset(&ends);
	sigaddset(&ends, SIGTERM);
	sigaddset(&ends, SIGINT);
	sigprocmask(SIG_BLOCK, &ends, open);
	sigdelset(open, SIGTERM);
	sigdelset(open, SIGINT);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
}

/* The put-off work done, end as the signal would have ended us. */
static void end_by(struct emu_server *s, int sig)
{
	sigset_t one;

	s->flush(s->ctx);
	signal(sig, SIG_DFL);
	sigemptyset(&one);
	sigaddset(&one, sig);
	sigprocmask(SIG_UNBLOCK, &one, NULL);
	raise(sig);
}

int emu_serve(struct emu_server *s, int lfd)
{
	sigset_t open;

	for (int i = 0; i < EMU_MAX_CLIENTS; i++)
		s->clients[i].fd = -1;
	catch_ends(s, &open);
	for (;;) {
		struct pollfd p[EMU_MAX_CLIENTS + 1];
		struct emu_client *who[EMU_MAX_CLIENTS + 1];
		nfds_t np = 0;

		p[np++] = (struct pollfd){.fd = lfd, .events = POLLIN};
		for (int i = 0; i < EMU_MAX_CLIENTS; i++)
			if (s->clients[i].fd >= 0) {
				who[np] = &s->clients[i];
				p[np++] = (struct pollfd){.fd = s->clients[i].fd, .events = POLLIN};
			}
		int wait_ms = s->idle_ms ? s->idle_ms(s->ctx) : -1;
		struct timespec ts = {wait_ms / 1000, (long)(wait_ms % 1000) * 1000000L};
		int rc = ppoll(p, np, wait_ms < 0 ? NULL : &ts, &open);

		if (rc < 0 && errno == EINTR && got_signal)
			end_by(s, got_signal);
		if (rc < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (rc == 0 && s->flush) {
			s->flush(s->ctx);
			continue;
		}
		for (nfds_t i = 1; i < np; i++)
			if (p[i].revents)
				on_readable(s, who[i]);
		if (!(p[0].revents & POLLIN))
			continue;
		int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0)
			continue;
		int i = 0;
		while (i < EMU_MAX_CLIENTS && s->clients[i].fd >= 0)
			i++;
		if (i == EMU_MAX_CLIENTS) {
			close(fd); /* full: the client sees the connection close */
		} else {
			int one = 1;

			/* every answer goes out as it is made, not held back
			 * until the last one is acknowledged (a client that sends
			 * commands ahead acknowledges them late) */
			setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
			s->clients[i].fd = fd;
			s->clients[i].session = ++s->sessions;
		}
	}
}
