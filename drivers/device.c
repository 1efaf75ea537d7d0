/* The driver table, the device wrappers every caller goes through, TCP
 * helpers and credentials files. */
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

static const struct driver_ops *const drivers[] = {
    &tl1_driver_ops, &patch_panel_driver_ops, &mrr_driver_ops, &netlink_driver_ops, &sim_driver_ops,
};

const struct driver_ops *driver_find(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(drivers); i++)
		if (strcmp(drivers[i]->name, name) == 0)
			return drivers[i];
	return NULL;
}

int device_init(struct device *dev, const struct device_cfg *cfg, struct ofc_error *err)
{
	memset(dev, 0, sizeof(*dev));
	dev->cfg = *cfg;
	dev->ops = driver_find(cfg->driver);
	if (!dev->ops)
		return ofc_error_set(err, OFC_E_INPUT, "%s: no driver named '%s'", cfg->name,
				     cfg->driver);
	if (dev->ops->cls && dev->ops->cls != cfg->cls)
		return ofc_error_set(err, OFC_E_INPUT, "%s: driver '%s' cannot drive this device",
				     cfg->name, cfg->driver);
	return 0;
}

static int ensure_open(struct device *dev, struct ofc_error *err)
{
	if (dev->open)
		return 0;
	if (dev->ops->open(dev, err) < 0)
		return -1;
	dev->open = true;
	return 0;
}

int device_read(struct device *dev, struct device_state *out, struct ofc_error *err)
{
	double t0 = now_seconds();
	int rc;

	state_init(out, dev->cfg.cls);
	rc = ensure_open(dev, err);
	if (rc == 0)
		rc = dev->ops->read_state(dev, out, err);
	if (rc == 0)
		state_sort(out);
	else
		ofc_error_prefix(err, "%s", dev->cfg.name);
	dev->stats.seconds += now_seconds() - t0;
	return rc;
}

int device_apply(struct device *dev, const struct op_batch *b, uint32_t *done,
		 struct ofc_error *err)
{
	double t0 = now_seconds();
	int rc;

	*done = 0;
	rc = ensure_open(dev, err);
	if (rc == 0 && b->n)
		rc = dev->ops->apply(dev, b, done, err);
	if (rc < 0)
		ofc_error_prefix(err, "%s", dev->cfg.name);
	dev->stats.seconds += now_seconds() - t0;
	return rc;
}

void device_close(struct device *dev)
{
	if (dev->open && dev->ops)
		dev->ops->close(dev);
	dev->open = false;
}

/* ---- TCP ------------------------------------------------------------------ */

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
		return ofc_error_set(err, OFC_E_INPUT, "bad address '%s': expected HOST:PORT",
				     address ? address : "");
	rc = getaddrinfo(host, port, &hints, &res);
	if (rc != 0)
		return ofc_error_set(err, OFC_E_RUNTIME, "cannot resolve %s: %s", address,
				     gai_strerror(rc));
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
		return ofc_error_set(err, OFC_E_RUNTIME, "cannot connect to %s: %s", address,
				     strerror(e ? e : ECONNREFUSED));
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

int tcp_listen(const char *address, const char *port_file, struct ofc_error *err)
{
	struct sockaddr_in sa = {.sin_family = AF_INET};
	socklen_t len = sizeof(sa);
	char host[64], port[16], buf[16];
	uint32_t p;
	int fd, one = 1, n;

	if (split_address(address, host, sizeof(host), port, sizeof(port)) < 0 ||
	    parse_u32(port, &p) < 0 || p > 65535 || inet_pton(AF_INET, host, &sa.sin_addr) != 1)
		return ofc_error_set(err, OFC_E_USAGE, "bad address '%s': expected IPv4:PORT",
				     address);
	sa.sin_port = htons((uint16_t)p);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return ofc_error_set(err, OFC_E_RUNTIME, "socket: %s", strerror(errno));
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, 16) < 0 ||
	    getsockname(fd, (struct sockaddr *)&sa, &len) < 0) {
		int e = errno;

		close(fd);
		return ofc_error_set(err, OFC_E_RUNTIME, "cannot listen on %s: %s", address,
				     strerror(e));
	}
	n = snprintf(buf, sizeof(buf), "%u\n", ntohs(sa.sin_port));
	if (port_file && atomic_write(port_file, buf, (size_t)n, err) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static int wait_fd(int fd, short events, double deadline, struct ofc_error *err)
{
	for (;;) {
		double left = deadline - now_seconds();
		struct pollfd p = {.fd = fd, .events = events};
		int rc;

		if (left <= 0)
			return ofc_error_set(err, OFC_E_RUNTIME, "timed out");
		rc = poll(&p, 1, (int)(left * 1000) + 1);
		if (rc > 0)
			return 0;
		if (rc < 0 && errno != EINTR)
			return ofc_error_set(err, OFC_E_RUNTIME, "poll: %s", strerror(errno));
	}
}

int fd_write_all(int fd, const void *buf, size_t n, double deadline, struct ofc_error *err)
{
	const char *p = buf;

	while (n) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);

		if (w > 0) {
			p += w;
			n -= (size_t)w;
			continue;
		}
		if (w < 0 && errno != EAGAIN && errno != EINTR)
			return ofc_error_set(err, OFC_E_RUNTIME, "connection lost: %s",
					     strerror(errno));
		if (wait_fd(fd, POLLOUT, deadline, err) < 0)
			return -1;
	}
	return 0;
}

long fd_read_some(int fd, void *buf, size_t n, double deadline, struct ofc_error *err)
{
	for (;;) {
		ssize_t r = recv(fd, buf, n, 0);

		if (r >= 0)
			return (long)r;
		if (errno != EAGAIN && errno != EINTR)
			return ofc_error_set(err, OFC_E_RUNTIME, "connection lost: %s",
					     strerror(errno));
		if (wait_fd(fd, POLLIN, deadline, err) < 0)
			return -1;
	}
}

/* ---- credentials -------------------------------------------------------------- */

static char *trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r' || e[-1] == '\n'))
		*--e = 0;
	return s;
}

int credentials_load(const char *path, struct credentials *c, struct ofc_error *err)
{
	char *text, *line, *save = NULL;
	size_t len;
	unsigned lineno = 0;
	int rc = 0;

	memset(c, 0, sizeof(*c));
	if (!path)
		return ofc_error_set(err, OFC_E_INPUT, "no credentials file configured");
	if (read_file(path, 64 * 1024, &text, &len, err) < 0)
		return -1;
	if (memchr(text, 0, len)) {
		free(text);
		return ofc_error_at(err, OFC_E_INPUT, path, 0, 0, "credentials file is not text");
	}
	/* strtok_r skips empty lines, so count lines by hand. */
	for (line = text; line && rc == 0; line = save) {
		char *nl = strchr(line, '\n'), *colon, *key, *val;

		save = nl ? nl + 1 : NULL;
		if (nl)
			*nl = 0;
		lineno++;
		key = trim(line);
		if (!*key || *key == '#')
			continue;
		colon = strchr(key, ':');
		if (!colon) {
			rc = ofc_error_at(err, OFC_E_INPUT, path, lineno, 1,
					  "expected 'user: NAME' or 'password: SECRET'");
			break;
		}
		*colon = 0;
		val = trim(colon + 1);
		key = trim(key);
		char *dst = strcmp(key, "user") == 0	   ? c->user
			    : strcmp(key, "password") == 0 ? c->password
							   : NULL;
		if (!dst) {
			rc = ofc_error_at(err, OFC_E_INPUT, path, lineno, 1,
					  "unknown key '%.40s' (expected user or password)", key);
		} else if (!*val || strlen(val) >= CRED_MAX || strpbrk(val, ":;,\"")) {
			/* Never echo the value: it may be the secret. */
			rc = ofc_error_at(err, OFC_E_INPUT, path, lineno, 1,
					  "'%s' must be 1..%d characters without : ; , or \"", key,
					  CRED_MAX - 1);
		} else {
			strcpy(dst, val);
		}
	}
	explicit_bzero(text, len);
	free(text);
	if (rc == 0 && (!c->user[0] || !c->password[0]))
		rc = ofc_error_at(err, OFC_E_INPUT, path, 0, 0, "needs both 'user' and 'password'");
	if (rc < 0)
		credentials_wipe(c);
	return rc;
}

void credentials_wipe(struct credentials *c)
{
	explicit_bzero(c, sizeof(*c));
}
