/* ofc-hostd's view of lldpd: lldpcli run with a deadline and a bound on
 * what it prints (the agent never blocks on a stuck lldpd), and the
 * neighbours it lists in `lldpcli -f json show neighbors` read with
 * json-c. lldpcli prints one interface as an object ("interface": {"i1":
 * {...}}) and several as an array of such objects; a neighbour's system
 * name is its "chassis" object's one key, its port the "port"'s "id"
 * (ofc-hostd sets every fabric interface's port ID to the local subtype
 * holding its port number, so a neighbour's is that number). */
#include "controller/cli/internal.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#define LLDPCLI_MAX_OUT (4u << 20)

extern char **environ;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Read fd into sb until EOF or the deadline; -1: the deadline passed or the
 * output passed its bound. */
static int read_until(int fd, struct strbuf *sb, double deadline, const char **why)
{
	char buf[4096];

	for (;;) {
		double left = deadline - now_s();
		struct pollfd p = {.fd = fd, .events = POLLIN};
		ssize_t n;

		if (left <= 0) {
			*why = "did not finish in time";
			return -1;
		}
		if (poll(&p, 1, (int)(left * 1000) + 1) < 0 && errno != EINTR) {
			*why = "poll failed";
			return -1;
		}
		n = read(fd, buf, sizeof(buf));
		if (n == 0)
			return 0;
		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			*why = "its output could not be read";
			return -1;
		}
		if (sb->len + (size_t)n > LLDPCLI_MAX_OUT) {
			*why = "printed more than 4 MiB";
			return -1;
		}
		sb_add(sb, buf, (size_t)n);
	}
}

int hostd_lldpcli(const char *lldpcli, const char *sock, const char *const *args, double timeout,
		  struct strbuf *out, struct ofc_error *err)
{
	const char *argv[24];
	int fds[2], status = 0, n = 0;
	posix_spawn_file_actions_t fa;
	const char *why = NULL;
	pid_t pid;
	int rc;

	argv[n++] = lldpcli;
	if (sock) {
		argv[n++] = "-u";
		argv[n++] = sock;
	}
	for (; *args && n < 22; args++)
		argv[n++] = *args;
	argv[n] = NULL;
	if (pipe2(fds, O_CLOEXEC) < 0)
		return ofc_error_set(err, OFC_E_RUNTIME, "pipe: %s", strerror(errno));
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
	posix_spawn_file_actions_adddup2(&fa, fds[1], 2);
	rc = posix_spawnp(&pid, lldpcli, &fa, NULL, (char *const *)argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(fds[1]);
	if (rc != 0) {
		close(fds[0]);
		return ofc_error_set(err, OFC_E_RUNTIME,
				     "cannot run %s: %s (Debian's lldpd package has it)", lldpcli,
				     strerror(rc));
	}
	fcntl(fds[0], F_SETFL, O_NONBLOCK);
	sb_reset(out);
	rc = read_until(fds[0], out, now_s() + timeout, &why);
	close(fds[0]);
	if (rc < 0)
		kill(pid, SIGKILL);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (rc < 0)
		return ofc_error_set(err, OFC_E_RUNTIME, "%s %s", lldpcli, why);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		/* its last line says why (lldpd not running: "unable to connect") */
		char *s = out->buf ? out->buf : "";
		size_t len = strlen(s);

		while (len && (s[len - 1] == '\n' || s[len - 1] == ' '))
			s[--len] = 0;
		const char *last = strrchr(s, '\n');
		last = last ? last + 1 : s;
		return ofc_error_set(err, OFC_E_RUNTIME, "%s exited %d%s%.200s", lldpcli,
				     WIFEXITED(status) ? WEXITSTATUS(status)
						       : 128 + WTERMSIG(status),
				     *last ? ": " : "", last);
	}
	return 0;
}

/* A port's "ttl" ("4"), seconds (-1: none, or not that). */
static int64_t ttl_seconds(json_object *port)
{
	json_object *x;
	const char *s;
	char *end;
	long v;

	if (!json_object_object_get_ex(port, "ttl", &x) || !(s = json_object_get_string(x)))
		return -1;
	v = strtol(s, &end, 10);
	return end == s || *end || v < 0 || v > 65535 ? -1 : v;
}

/* One interface's entry: {"via": ..., "chassis": {NAME: {...}}, "port":
 * {"id": {"type": T, "value": V}, "descr": D}}. */
static void add_neighbour(const char *ifname, json_object *v, struct hostd_neighbours *out)
{
	json_object *chassis, *port, *id, *x;
	struct hostd_neighbour *nb;

	if (!json_object_is_type(v, json_type_object) ||
	    out->n >= sizeof(out->v) / sizeof(out->v[0]))
		return;
	nb = &out->v[out->n];
	memset(nb, 0, sizeof(*nb));
	snprintf(nb->ifname, sizeof(nb->ifname), "%s", ifname);
	nb->ttl_s = -1;
	if (json_object_object_get_ex(v, "chassis", &chassis) &&
	    json_object_is_type(chassis, json_type_object)) {
		json_object_object_foreach(chassis, name, c)
		{
			(void)c;
			if (strcmp(name, "id") != 0) /* (no system name: only its id) */
				snprintf(nb->host, sizeof(nb->host), "%s", name);
			break;
		}
	}
	if (json_object_object_get_ex(v, "port", &port) &&
	    json_object_object_get_ex(port, "id", &id)) {
		if (json_object_object_get_ex(id, "type", &x))
			nb->port_local = strcmp(json_object_get_string(x), "local") == 0;
		if (json_object_object_get_ex(id, "value", &x))
			snprintf(nb->port, sizeof(nb->port), "%s", json_object_get_string(x));
		nb->ttl_s = ttl_seconds(port);
	}
	out->n++;
}

int hostd_lldp_parse(const char *text, size_t len, struct hostd_neighbours *out,
		     struct ofc_error *err)
{
	struct json_tokener *tok = json_tokener_new();
	json_object *root, *lldp, *ifs;

	out->n = 0;
	root = json_tokener_parse_ex(tok, text, (int)len);
	if (!root || json_tokener_get_error(tok) != json_tokener_success) {
		json_tokener_free(tok);
		json_object_put(root);
		return ofc_error_set(err, OFC_E_RUNTIME, "lldpcli's JSON does not parse");
	}
	json_tokener_free(tok);
	/* No neighbour at all: {"lldp": {}} (or an empty array) */
	if (!json_object_object_get_ex(root, "lldp", &lldp)) {
		json_object_put(root);
		return ofc_error_set(err, OFC_E_RUNTIME, "lldpcli's JSON has no \"lldp\"");
	}
	if (json_object_is_type(lldp, json_type_object) &&
	    json_object_object_get_ex(lldp, "interface", &ifs)) {
		size_t n =
		    json_object_is_type(ifs, json_type_array) ? json_object_array_length(ifs) : 1;

		for (size_t i = 0; i < n; i++) {
			json_object *o = json_object_is_type(ifs, json_type_array)
					     ? json_object_array_get_idx(ifs, i)
					     : ifs;

			if (!json_object_is_type(o, json_type_object))
				continue;
			json_object_object_foreach(o, ifname, v) add_neighbour(ifname, v, out);
		}
	}
	json_object_put(root);
	return 0;
}
