/* The serving loop both device emulators (build/ocs-emu, build/mrr-emu)
 * run: accept clients, read what they send, cut it into messages with the
 * emulator's framing and hand each to its handler. A stalled session (a
 * fault the emulators inject) never answers again; a client that breaks
 * the framing or hangs up is dropped. */
#include "drivers/emu/emu.h"

#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static void drop(struct emu_client *c)
{
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
		drop(c);
		return;
	}
	sb_add(&c->in, buf, (size_t)n);
	for (;;) {
		char *msg;
		size_t len;
		long used = s->frame(c, &msg, &len);

		if (used == 0)
			break;
		if (used < 0) {
			drop(c);
			return;
		}
		bool keep = c->stalled || s->handle(s->ctx, c, msg, len);
		memmove(c->in.buf, c->in.buf + used, c->in.len - (size_t)used);
		c->in.len -= (size_t)used;
		c->in.buf[c->in.len] = 0;
		if (!keep) {
			drop(c);
			return;
		}
	}
	if (c->in.len > s->max_pending)
		drop(c);
}

int emu_serve(struct emu_server *s, int lfd)
{
	for (int i = 0; i < EMU_MAX_CLIENTS; i++)
		s->clients[i].fd = -1;
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
		if (poll(p, np, -1) < 0) {
			if (errno == EINTR)
				continue;
			return -1;
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
			s->clients[i].fd = fd;
			s->clients[i].session = ++s->sessions;
		}
	}
}
