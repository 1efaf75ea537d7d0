/* TCP connections to devices: "host:port" or "[v6]:port", connected
 * within a timeout. */
#include "drivers/internal.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static int split_address(const char *address, char *host, size_t hn, char *port, size_t pn)
{
	const char *colon;

	if (address[0] == '[') {
		const char *close = strchr(address, ']');

		if (!close || close[1] != ':' || (size_t)(close - address - 1) >= hn)
			return -1;
		memcpy(host, address + 1, (size_t)(close - address - 1));
		host[close - address - 1] = 0;
		colon = close + 1;
	} else {
		colon = strrchr(address, ':');
		if (!colon || (size_t)(colon - address) >= hn)
			return -1;
		memcpy(host, address, (size_t)(colon - address));
		host[colon - address] = 0;
	}
	if (strlen(colon + 1) >= pn || !colon[1])
		return -1;
	strcpy(port, colon + 1);
	return 0;
}

int tcp_connect(const char *address, double timeout, struct ofc_error *err)
{
	struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
	struct addrinfo *res, *ai;
	char host[256], port[16];
	int fd = -1, e = 0, rc;

	if (!address || split_address(address, host, sizeof(host), port, sizeof(port)) < 0)
		return ofc_error_setr(err, OFC_E_INPUT, OFC_R_LOST,
				      "bad address '%s': expected HOST:PORT",
				      address ? address : "");
	rc = getaddrinfo(host, port, &hints, &res);
	if (rc != 0)
		return ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_LOST, "cannot resolve %s: %s",
				      address, gai_strerror(rc));
	for (ai = res; ai; ai = ai->ai_next) {
		struct pollfd p;
		socklen_t len = sizeof(e);

		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
			    ai->ai_protocol);
		if (fd < 0) {
			e = errno;
			continue;
		}
		if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
			break;
		e = errno;
		if (e == EINPROGRESS) {
			p = (struct pollfd){.fd = fd, .events = POLLOUT};
			rc = poll(&p, 1, (int)(timeout * 1000) + 1);
			if (rc == 1 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &len) == 0 && !e)
				break;
			if (rc == 0)
				e = ETIMEDOUT;
		}
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd < 0)
		return ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_LOST, "cannot connect to %s: %s",
				      address, strerror(e ? e : ECONNREFUSED));
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}
