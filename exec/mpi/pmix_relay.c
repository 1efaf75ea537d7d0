/* The PMIx relay (pmix_relay.h): a socket's namespace is the one its
 * creator was in, so one process holds both ends: the listening socket
 * made in the host's namespace, each upstream socket made after a setns
 * back to the launcher's. Bytes are copied as they come, both ways; PMIx
 * keeps one connection a rank, small messages, so blocking writes bound
 * nothing that matters. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "exec/mpi/pmix_relay.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#define RELAY_MAX 64 /* connections at once */

int pmix_relay_port(void)
{
	const char *uri = getenv("PMIX_SERVER_URI4");
	const char *at = uri ? strstr(uri, "tcp4://127.0.0.1:") : NULL;
	long port = at ? strtol(at + strlen("tcp4://127.0.0.1:"), NULL, 10) : 0;

	return port > 0 && port < 65536 ? (int)port : 0;
}

static struct sockaddr_in loopback(int port)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	return a;
}

/* A connection to the server, made in the launcher's namespace. */
static int upstream(int root_fd, int host_fd, int port)
{
	struct sockaddr_in a = loopback(port);
	int s;

	if (setns(root_fd, CLONE_NEWNET) < 0)
		return -1;
	s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (setns(host_fd, CLONE_NEWNET) < 0 || s < 0 ||
	    connect(s, (struct sockaddr *)&a, sizeof(a)) < 0) {
		if (s >= 0)
			close(s);
		return -1;
	}
	return s;
}

static bool copy(int from, int to)
{
	char buf[65536];
	ssize_t n = read(from, buf, sizeof(buf));

	for (ssize_t off = 0; n > 0 && off < n;) {
		ssize_t w = write(to, buf + off, (size_t)(n - off));

		if (w <= 0)
			return false;
		off += w;
	}
	return n > 0;
}

static void relay(int lfd, int root_fd, int host_fd, int port)
{
	struct pollfd p[1 + 2 * RELAY_MAX];
	int n = 0;

	p[0] = (struct pollfd){.fd = lfd, .events = POLLIN};
	for (;;) {
		if (poll(p, (nfds_t)(1 + n), -1) < 0 && errno != EINTR)
			_exit(1);
		if (p[0].revents & POLLIN) {
			int c = accept4(lfd, NULL, NULL, SOCK_CLOEXEC), u = -1;

			if (c >= 0 &&
			    (n == 2 * RELAY_MAX || (u = upstream(root_fd, host_fd, port)) < 0))
				close(c);
			else if (c >= 0) {
				p[1 + n++] = (struct pollfd){.fd = c, .events = POLLIN};
				p[1 + n++] = (struct pollfd){.fd = u, .events = POLLIN};
			}
		}
		for (int i = 0; i < n; i++) {
			int peer = i % 2 ? i - 1 : i + 1;

			if (!p[1 + i].revents || copy(p[1 + i].fd, p[1 + peer].fd))
				continue;
			/* one side closed: the pair goes, the last pair takes its place */
			int pair = i - i % 2;

			close(p[1 + pair].fd);
			close(p[2 + pair].fd);
			p[1 + pair] = p[n - 1];
			p[2 + pair] = p[n];
			n -= 2;
			break;
		}
	}
}

int pmix_relay_start(int root_fd, int port)
{
	struct sockaddr_in a = loopback(port);
	int one = 1, lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), host_fd;
	pid_t parent = getpid(), pid;

	if (lfd < 0 || setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(lfd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(lfd, 16) < 0) {
		fprintf(stderr, "ofc-netns-exec: cannot listen on 127.0.0.1:%d for PMIx: %s\n",
			port, strerror(errno));
		return -1;
	}
	host_fd = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	pid = host_fd < 0 ? -1 : fork();
	if (pid < 0) {
		fprintf(stderr, "ofc-netns-exec: PMIx relay: %s\n", strerror(errno));
		return -1;
	}
	if (pid == 0) {
		int nul = open("/dev/null", O_RDWR);

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(0);
		for (int fd = 0; fd < 3 && nul >= 0; fd++)
			dup2(nul, fd);
		relay(lfd, root_fd, host_fd, port);
		_exit(0);
	}
	close(lfd);
	close(host_fd);
	return 0;
}
