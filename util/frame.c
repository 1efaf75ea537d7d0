/* Reads and writes bounded by an absolute deadline, and the 4-byte
 * big-endian length-prefixed frames of ofcd's control socket and the MRR
 * ring agents (docs/control.md, docs/mrr.md). One place for both, so every
 * peer of ofc gets the same limits and the same errors. */
#include "util/util.h"

#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* Wait for events on fd until the deadline (0: none). */
static int fd_wait(int fd, short events, double deadline, struct ofc_error *err)
{
	for (;;) {
		struct pollfd p = {.fd = fd, .events = events};
		int ms = -1, rc;

		if (deadline > 0) {
			double left = deadline - now_seconds();

			if (left <= 0)
				return ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_TIMEOUT,
						      "timed out");
			ms = (int)(left * 1000) + 1;
		}
		rc = poll(&p, 1, ms);
		if (rc > 0)
			return 0;
		if (rc < 0 && errno != EINTR)
			return ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_LOST, "poll: %s",
					      strerror(errno));
	}
}

int fd_write_all(int fd, const void *buf, size_t n, double deadline, struct ofc_error *err)
{
	const char *p = buf;

	while (n) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);

		if (w < 0 && errno == ENOTSOCK)
			w = write(fd, p, n);
		if (w > 0) {
			p += w;
			n -= (size_t)w;
			continue;
		}
		if (w < 0 && errno != EAGAIN && errno != EINTR)
			return ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_LOST, "connection lost: %s",
					      strerror(errno));
		if (fd_wait(fd, POLLOUT, deadline, err) < 0)
			return -1;
	}
	return 0;
}

/* The deadline holds even while bytes keep arriving: a peer that streams
 * never-ending noise is cut off when the time is up. */
long fd_read_some(int fd, void *buf, size_t n, double deadline, struct ofc_error *err)
{
	for (;;) {
		if (deadline > 0 && now_seconds() >= deadline)
			return ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_TIMEOUT, "timed out");
		ssize_t r = recv(fd, buf, n, MSG_DONTWAIT);

		if (r < 0 && errno == ENOTSOCK)
			r = read(fd, buf, n);
		if (r >= 0)
			return (long)r;
		if (errno != EAGAIN && errno != EINTR)
			return ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_LOST, "connection lost: %s",
					      strerror(errno));
		if (fd_wait(fd, POLLIN, deadline, err) < 0)
			return -1;
	}
}

int fd_read_exact(int fd, void *buf, size_t n, double deadline, struct ofc_error *err)
{
	uint8_t *p = buf;

	while (n) {
		long r = fd_read_some(fd, p, n, deadline, err);

		if (r < 0)
			return -1;
		if (r == 0)
			return ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_CLOSED,
					      "connection closed by the peer");
		p += r;
		n -= (size_t)r;
	}
	return 0;
}

void frame_len_put(uint8_t h[4], uint32_t n)
{
	h[0] = (uint8_t)(n >> 24);
	h[1] = (uint8_t)(n >> 16);
	h[2] = (uint8_t)(n >> 8);
	h[3] = (uint8_t)n;
}

uint32_t frame_len_get(const uint8_t h[4])
{
	return (uint32_t)h[0] << 24 | (uint32_t)h[1] << 16 | (uint32_t)h[2] << 8 | h[3];
}

int frame_send(int fd, const void *msg, size_t len, size_t max, double deadline,
	       struct ofc_error *err)
{
	uint8_t h[4];

	if (len > max || len > UINT32_MAX)
		return ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_TOO_BIG,
				      "a frame of %zu bytes is over the %zu-byte limit", len, max);
	frame_len_put(h, (uint32_t)len);
	if (fd_write_all(fd, h, 4, deadline, err) < 0)
		return -1;
	return fd_write_all(fd, msg, len, deadline, err);
}

int frame_recv(int fd, uint8_t **buf, size_t *cap, size_t *len, size_t max, double deadline,
	       struct ofc_error *err)
{
	uint8_t h[4];

	if (fd_read_exact(fd, h, 4, deadline, err) < 0)
		return -1;
	*len = frame_len_get(h);
	if (*len > max)
		return ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_TOO_BIG,
				      "a frame of %zu bytes is over the %zu-byte limit", *len, max);
	GROW(*buf, *cap, *len + 1);
	return fd_read_exact(fd, *buf, *len, deadline, err);
}
