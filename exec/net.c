/* The agents' plumbing: entering a host's namespace, listening, connecting
 * over a circuit with a hello that names the sender and its lane, and
 * accepting, every wait bounded by an absolute deadline. */
#include "exec/internal.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "drivers/drivers.h"

const char *exec_addr_str(uint32_t a, char *buf, size_t n)
{
	snprintf(buf, n, "%u.%u.%u.%u", a >> 24, (a >> 16) & 255, (a >> 8) & 255, a & 255);
	return buf;
}

int exec_enter(const struct exec_net *net, uint32_t h, struct ofc_error *err)
{
	char *path;
	int fd, rc = 0;

	if (!net->netns)
		return 0;
	path = xasprintf("%s/%s", NETNS_DIR, net->netns[h]);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || setns(fd, CLONE_NEWNET) != 0)
		rc = ofc_error_set(err, OFC_E_RUNTIME, "host namespace %s: %s (is the testbed up?)",
				   path, strerror(errno));
	if (fd >= 0)
		close(fd);
	free(path);
	return rc;
}

int exec_listen(const struct exec_net *net, uint32_t h, int backlog, struct ofc_error *err)
{
	struct sockaddr_in sa = {.sin_family = AF_INET,
				 .sin_port = htons(net->tcp_port),
				 .sin_addr.s_addr =
				     net->netns ? INADDR_ANY : htonl(net->host_addr[h])};
	int one = 1;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return ofc_error_set(err, OFC_E_RUNTIME, "socket: %s", strerror(errno));
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 || listen(fd, backlog) != 0) {
		int e = errno;

		close(fd);
		return ofc_error_set(err, OFC_E_RUNTIME, "listening on port %u: %s", net->tcp_port,
				     strerror(e));
	}
	return fd;
}

/* 1 when fd is ready, 0 at the deadline or when stopfd (-1: none) fires. */
static int wait_fd(int fd, short events, int stopfd, double deadline)
{
	for (;;) {
		double left = deadline - now_seconds();
		struct pollfd p[2] = {{.fd = fd, .events = events},
				      {.fd = stopfd, .events = POLLIN}};
		int r;

		if (left <= 0)
			return 0;
		r = poll(p, stopfd >= 0 ? 2 : 1, (int)(left * 1000) + 1);
		if (r > 0 && stopfd >= 0 && (p[1].revents & POLLIN))
			return 0;
		if (r > 0 || (r < 0 && errno != EINTR))
			return r;
	}
}

int exec_connect(uint32_t local, uint32_t addr, uint16_t port, uint32_t src, uint32_t lane,
		 double deadline, struct ofc_error *err)
{
	struct sockaddr_in la = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(local)};
	struct sockaddr_in ra = {
	    .sin_family = AF_INET, .sin_port = htons(port), .sin_addr.s_addr = htonl(addr)};
	uint32_t hello[2] = {htonl(EXEC_HELLO_MAGIC), htonl(src << 16 | (lane & 0xffffu))};
	char a[24];
	int one = 1, soerr = 0;
	socklen_t sl = sizeof(soerr);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

	if (fd < 0)
		return ofc_error_set(err, OFC_E_RUNTIME, "socket: %s", strerror(errno));
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&la, sizeof(la)) != 0) {
		soerr = errno;
		goto fail;
	}
	if (connect(fd, (struct sockaddr *)&ra, sizeof(ra)) != 0) {
		if (errno != EINPROGRESS) {
			soerr = errno;
			goto fail;
		}
		if (wait_fd(fd, POLLOUT, -1, deadline) <= 0) {
			soerr = ETIMEDOUT;
			goto fail;
		}
		if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) != 0 || soerr)
			goto fail;
	}
	if (fd_write_all(fd, hello, sizeof(hello), deadline, err) < 0) {
		close(fd);
		return -1;
	}
	return fd;
fail:
	close(fd);
	return ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_LOST, "connecting to %s:%u: %s",
			      exec_addr_str(addr, a, sizeof(a)), port, strerror(soerr));
}

int exec_accept(int lfd, int stopfd, uint32_t *src, uint32_t *lane, double deadline,
		struct ofc_error *err)
{
	uint32_t hello[2];
	int one = 1, fd;

	if (wait_fd(lfd, POLLIN, stopfd, deadline) <= 0)
		return ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_TIMEOUT,
				      "timed out waiting for connections");
	fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (fd < 0)
		return ofc_error_set(err, OFC_E_RUNTIME, "accept: %s", strerror(errno));
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (fd_read_exact(fd, hello, sizeof(hello), deadline, err) < 0) {
		close(fd);
		return -1;
	}
	if (ntohl(hello[0]) != EXEC_HELLO_MAGIC) {
		close(fd);
		return ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_GARBAGE,
				      "a connection that is not an agent's");
	}
	*src = ntohl(hello[1]) >> 16;
	*lane = ntohl(hello[1]) & 0xffffu;
	return fd;
}
