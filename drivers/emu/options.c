/* The options and the start-up both emulators share. */
#include "drivers/emu/emu.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int emu_usage_error(const struct emu_common *e, const char *fmt, const char *arg)
{
	fprintf(stderr, "%s: ", e->prog);
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\n%s", e->usage);
	return 2;
}

int emu_common_option(struct emu_common *e, int c, const char *arg)
{
	uint64_t v;

	switch (c) {
	case 'l':
		e->listen = arg;
		return 0;
	case 'k':
	case 'C':
		if (parse_u64(arg, &v) < 0 || v < 1)
			return emu_usage_error(e,
					       c == 'k' ? "--fail-at must be a positive integer, "
							  "got '%s'"
							: "--fail-count must be a positive "
							  "integer, got '%s'",
					       arg);
		*(c == 'k' ? &e->fail_at : &e->fail_count) = v;
		return 0;
	case 'M':
		e->mode = fault_mode_parse(arg);
		if (!e->mode)
			return emu_usage_error(e, "unknown --fail-mode '%s'", arg);
		return 0;
	case 'p':
		e->port_file = arg;
		return 0;
	case 'L':
		e->log_path = arg;
		return 0;
	case 'h':
		printf("%s%s", e->usage, e->help ? e->help : "");
		return -1;
	case 'V':
		printf("%s %s\n", e->prog, OFC_VERSION);
		return -1;
	default:
		return 1;
	}
}

int emu_listen(const struct emu_common *e, struct ofc_error *err)
{
	struct sockaddr_in sa = {.sin_family = AF_INET};
	const char *colon = e->listen ? strrchr(e->listen, ':') : NULL;
	char host[64];
	uint32_t p;
	int fd, one = 1;

	if (!colon || (size_t)(colon - e->listen) >= sizeof(host) || parse_u32(colon + 1, &p) < 0 ||
	    p > 65535)
		return ofc_error_set(err, OFC_E_USAGE, "bad address '%s': expected IPv4:PORT",
				     e->listen ? e->listen : "");
	memcpy(host, e->listen, (size_t)(colon - e->listen));
	host[colon - e->listen] = 0;
	if (inet_pton(AF_INET, host, &sa.sin_addr) != 1)
		return ofc_error_set(err, OFC_E_USAGE, "bad address '%s': expected IPv4:PORT",
				     e->listen);
	sa.sin_port = htons((uint16_t)p);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return ofc_error_set(err, OFC_E_RUNTIME, "socket: %s", strerror(errno));
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, 16) < 0) {
		int en = errno;

		close(fd);
		return ofc_error_set(err, OFC_E_RUNTIME, "cannot listen on %s: %s", e->listen,
				     strerror(en));
	}
	return fd;
}

int emu_start(struct emu_common *e, int lfd, struct ofc_error *err)
{
	struct sockaddr_in sa;
	socklen_t len = sizeof(sa);
	char buf[16];
	int n;

	if (e->log_path && !(e->log = fopen(e->log_path, "a")))
		return ofc_error_set(err, OFC_E_RUNTIME, "%s: %s", e->log_path, strerror(errno));
	if (!e->port_file)
		return 0;
	if (getsockname(lfd, (struct sockaddr *)&sa, &len) < 0)
		return ofc_error_set(err, OFC_E_RUNTIME, "getsockname: %s", strerror(errno));
	n = snprintf(buf, sizeof(buf), "%u\n", ntohs(sa.sin_port));
	return atomic_write(e->port_file, buf, (size_t)n, err);
}
