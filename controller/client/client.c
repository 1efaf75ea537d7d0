/* A client of ofcd's control socket: client.h says what and for whom. */
#include "controller/client/client.h"
#include "proto/control.pb-c.h"

#include <errno.h>
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

/* Every send and receive is bounded by c->timeout from its start (0: a
 * wait the user chose, such as watch). */
static double deadline(const struct ofcd_client *c)
{
	return c->timeout > 0 ? now_seconds() + c->timeout : 0;
}

/* The framing helper's error, told as the client's. */
static int client_error(const struct ofcd_client *c, size_t len, struct ofc_error *err)
{
	char why[sizeof(err->msg)];

	switch (err->reason) {
	case OFC_R_TIMEOUT:
		return ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_TIMEOUT,
				      "ofcd at %s did not answer within %g s", c->path, c->timeout);
	case OFC_R_CLOSED:
		return ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_CLOSED,
				      "ofcd closed the connection");
	case OFC_R_TOO_BIG:
		return ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_TOO_BIG,
				      "ofcd sent a frame of %zu bytes, more than the %u this "
				      "client accepts",
				      len, c->max_frame);
	default:
		snprintf(why, sizeof(why), "%s", err->msg);
		return ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_LOST,
				      "lost the connection to ofcd: %.400s", why);
	}
}

int ofcd_send(struct ofcd_client *c, const struct Ofc__V1__Request *req, struct ofc_error *err)
{
	size_t len = protobuf_c_message_get_packed_size(&req->base);
	uint8_t *buf;
	int rc;

	if (len > UINT32_MAX)
		return ofc_error_set(err, OFC_E_INPUT, "request too large");
	buf = xmalloc(len + 4);
	frame_len_put(buf, (uint32_t)len);
	protobuf_c_message_pack(&req->base, buf + 4);
	rc = fd_write_all(c->fd, buf, len + 4, deadline(c), err);
	free(buf);
	return rc < 0 ? client_error(c, len, err) : 0;
}

int ofcd_recv(struct ofcd_client *c, struct Ofc__V1__Response **resp, struct ofc_error *err)
{
	uint8_t *body = NULL;
	size_t cap = 0, len = 0;

	*resp = NULL;
	if (frame_recv(c->fd, &body, &cap, &len, c->max_frame, deadline(c), err) < 0) {
		free(body);
		return client_error(c, len, err);
	}
	*resp = ofc__v1__response__unpack(NULL, len, body);
	free(body);
	if (!*resp)
		return ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_GARBAGE,
				      "ofcd sent a frame that is not an ofc.v1.Response");
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
