/* A client of ofcd's control socket (docs/control.md): frames of a 4-byte
 * big-endian length and one protobuf message, blocking, with a timeout per
 * send and receive. Used by `ofc --socket`, the tests and the benchmark. */
#include "controller/ofcd/ofcd.h"
#include "proto/control.pb-c.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

int ofcd_connect(struct ofcd_client *c, const char *path, struct ofc_error *err)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};

	memset(c, 0, sizeof(*c));
	c->fd = -1;
	c->max_frame = 256u << 20;
	c->timeout = 0;
	if (strlen(path) >= sizeof(sa.sun_path))
		return ofc_error_set(err, OFC_E_USAGE, "socket path too long: %s", path);
	snprintf(c->path, sizeof(c->path), "%s", path);
	memcpy(sa.sun_path, path, strlen(path) + 1);
	c->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (c->fd < 0)
		return ofc_error_set(err, OFC_E_RUNTIME, "socket: %s", strerror(errno));
	if (connect(c->fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		int e = errno;

		close(c->fd);
		c->fd = -1;
		return ofc_error_set(err, OFC_E_RUNTIME, "cannot connect to ofcd at %s: %s%s", path,
				     strerror(e),
				     e == ENOENT || e == ECONNREFUSED ? " (is ofcd running?)" : "");
	}
	return 0;
}

void ofcd_disconnect(struct ofcd_client *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
}

/* Wait until fd is ready for `events`, at most c->timeout seconds. */
static int wait_fd(struct ofcd_client *c, short events, struct ofc_error *err)
{
	struct pollfd p = {.fd = c->fd, .events = events};
	int ms = c->timeout > 0 ? (int)(c->timeout * 1000) : -1;
	int n;

	do
		n = poll(&p, 1, ms);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return ofc_error_set(err, OFC_E_RUNTIME, "poll: %s", strerror(errno));
	if (n == 0)
		return ofc_error_set(err, OFC_E_RUNTIME, "ofcd at %s did not answer within %g s",
				     c->path, c->timeout);
	return 0;
}

static int write_all(struct ofcd_client *c, const uint8_t *p, size_t n, struct ofc_error *err)
{
	while (n) {
		ssize_t k;

		if (wait_fd(c, POLLOUT, err) < 0)
			return -1;
		k = send(c->fd, p, n, MSG_NOSIGNAL);
		if (k < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			return ofc_error_set(err, OFC_E_RUNTIME, "lost the connection to ofcd: %s",
					     strerror(errno));
		}
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

static int read_all(struct ofcd_client *c, uint8_t *p, size_t n, struct ofc_error *err)
{
	while (n) {
		ssize_t k;

		if (wait_fd(c, POLLIN, err) < 0)
			return -1;
		k = recv(c->fd, p, n, 0);
		if (k < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (k <= 0)
			return ofc_error_set(err, OFC_E_RUNTIME, "ofcd closed the connection%s%s",
					     k < 0 ? ": " : "", k < 0 ? strerror(errno) : "");
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

int ofcd_send(struct ofcd_client *c, const struct Ofc__V1__Request *req, struct ofc_error *err)
{
	size_t len = protobuf_c_message_get_packed_size(&req->base);
	uint8_t *buf;
	int rc;

	if (len > UINT32_MAX)
		return ofc_error_set(err, OFC_E_INPUT, "request too large");
	buf = xmalloc(len + 4);
	frame_put_len(buf, (uint32_t)len);
	protobuf_c_message_pack(&req->base, buf + 4);
	rc = write_all(c, buf, len + 4, err);
	free(buf);
	return rc;
}

int ofcd_recv(struct ofcd_client *c, struct Ofc__V1__Response **resp, struct ofc_error *err)
{
	uint8_t h[4], *body;
	uint32_t len;

	*resp = NULL;
	if (read_all(c, h, 4, err) < 0)
		return -1;
	len = frame_get_len(h);
	if (len > c->max_frame)
		return ofc_error_set(err, OFC_E_RUNTIME,
				     "ofcd sent a frame of %u bytes, more than the %u this client "
				     "accepts",
				     len, c->max_frame);
	body = xmalloc((size_t)len + 1);
	if (read_all(c, body, len, err) < 0) {
		free(body);
		return -1;
	}
	*resp = ofc__v1__response__unpack(NULL, len, body);
	free(body);
	if (!*resp)
		return ofc_error_set(err, OFC_E_RUNTIME,
				     "ofcd sent a frame that is not an "
				     "ofc.v1.Response");
	return 0;
}

int ofcd_call(struct ofcd_client *c, const struct Ofc__V1__Request *req,
	      struct Ofc__V1__Response **resp, struct ofc_error *err)
{
	if (ofcd_send(c, req, err) < 0)
		return -1;
	for (;;) {
		if (ofcd_recv(c, resp, err) < 0)
			return -1;
		if ((*resp)->id == req->id)
			return 0;
		ofc__v1__response__free_unpacked(*resp, NULL);
		*resp = NULL;
	}
}
