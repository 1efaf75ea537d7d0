/* build/netconf-emu: an optical circuit switch of the Polatis
 * optical-switch model speaking NETCONF (RFC 6241) over SSH (RFC 6242) or
 * TLS (RFC 7589) on loopback and on a Unix socket, for tests and demos
 * without hardware
 * (docs/netconf.md). Sessions run on libnetconf2's server API
 * (nc_accept_inout, nc_ps_poll); SSH is libssh's, TLS GnuTLS's; the switch, its
 * datastores, locks, confirmed commits, port health and faults are
 * netconf_emu_device.c.
 *
 *   netconf-emu [--listen HOST:PORT] [--unix PATH] --ports N [--credentials FILE]
 *               [--host-key FILE] [--known-hosts FILE] [--revision REV | --no-model]
 *               [--no-candidate] [--no-confirmed-commit] [--no-rollback-on-error]
 *               [--no-writable-running] [--delay-ms D] [--hold-file F]
 *               [--health FILE] [--stale-power] [--no-notification]
 *               [--power-alarm DBM] [--fail-at K [--fail-count C] [--fail-mode MODE]]
 *               [--tls-cert FILE --tls-key FILE --tls-ca FILE]
 *               [--state FILE] [--port-file FILE] [--log FILE]
 */
#include "drivers/emu/internal.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <libnetconf2/log.h>
#include <libnetconf2/messages_server.h>
#include <libnetconf2/netconf.h>
#include <libnetconf2/session_server.h>
#include <libyang/libyang.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#define MAX_PORTS    100000u
#define MAX_SESSIONS 64

static const char usage[] =
    "usage: netconf-emu [--listen HOST:PORT] [--unix PATH] --ports N [--credentials FILE]\n"
    "                   [--host-key FILE] [--known-hosts FILE] [--revision REV | --no-model]\n"
    "                   [--no-candidate] [--no-confirmed-commit] [--no-rollback-on-error]\n"
    "                   [--no-writable-running] [--delay-ms D] [--hold-file F]\n"
    "                   [--health FILE] [--stale-power] [--no-notification]\n"
    "                   [--power-alarm DBM] [--fail-at K [--fail-count C] [--fail-mode MODE]]\n"
    "                   [--tls-cert FILE --tls-key FILE --tls-ca FILE]\n"
    "                   [--state FILE] [--port-file FILE] [--log FILE]\n"
    "MODE: deny (default), close, close-after, close-mid, stall, garbage, lie, huge,\n"
    "      endless, locked\n";

static const char help[] =
    "\nAn N x N optical switch of the Polatis optical-switch model (ofc's YANG module)\n"
    "speaking NETCONF over SSH or TLS and a Unix socket, for tests and demos without\n"
    "hardware (docs/netconf.md).\n\n"
    "  --listen HOST:PORT      SSH (TLS with --tls-cert) on this IPv4 address and port\n"
    "                          (port 0: any free one)\n"
    "  --unix PATH             NETCONF on a Unix socket at PATH (no SSH, no login)\n"
    "  --ports N               N x N ports: ingress 1..N, egress N+1..2N on the wire\n"
    "  --credentials FILE      the user and password, or private key (its public half\n"
    "                          may log in), SSH takes; without it anyone may\n"
    "  --host-key FILE         the SSH host key (made and saved there when missing)\n"
    "  --known-hosts FILE      write the known-hosts line of the host key there\n"
    "  --revision REV          the optical-switch revision to offer (default 2017-08-04;\n"
    "                          before it the list is named pairs)\n"
    "  --no-model              a hello without the optical-switch module\n"
    "  --no-candidate          no :candidate datastore (edits go to running)\n"
    "  --no-confirmed-commit   no :confirmed-commit\n"
    "  --no-rollback-on-error  no :rollback-on-error\n"
    "  --no-writable-running   no :writable-running (edits go through the candidate)\n"
    "  --delay-ms D            the time each change to running takes (switching)\n"
    "  --hold-file F           every change to running waits while F exists\n"
    "  --health FILE           ports' status and power, read again when it changes:\n"
    "                          'PORT status ENABLED|DISABLED|FAILED', 'PORT power DBM';\n"
    "                          'notify MODE [COUNT]' sends every subscriber at once a\n"
    "                          notification that is garbage (not well-formed), bad-port,\n"
    "                          other (of another module), reply (an <rpc-reply> instead),\n"
    "                          huge (2 MiB), or a flood of COUNT port-power-alarm\n"
    "  --stale-power           every <get> shows the power readings of the one before\n"
    "  --no-notification       no :notification (no <create-subscription>)\n"
    "  --power-alarm DBM       a port in use that FAILED or reads under DBM (default -60)\n"
    "                          raises port-power-alarm to subscribers, port-power-clear\n"
    "                          when it is back\n"
    "  --fail-at K             misbehave from the K-th RPC received (counted from 1)\n"
    "  --fail-count C          ... for C RPCs (default 1)\n"
    "  --fail-mode MODE        deny (an rpc-error; an edit's names one pair), close,\n"
    "                          close-after (act, then drop the session), close-mid (half\n"
    "                          of an edit or commit reaches running, then the drop),\n"
    "                          stall, garbage (XML that is not well-formed), lie (the\n"
    "                          next <get> leaves out a cross-connect), huge (a 100 MB\n"
    "                          reply), endless (a reply that never ends), locked\n"
    "                          (another session holds the datastores' locks)\n"
    "  --tls-cert FILE         --listen is NETCONF over TLS (RFC 7589) with this\n"
    "                          certificate (PEM) ...\n"
    "  --tls-key FILE          ... and its private key (PEM)\n"
    "  --tls-ca FILE           the CA a client's certificate must be signed by (PEM);\n"
    "                          its common name is the session's user\n"
    "  --state FILE            load cross-connects at start, save them after every change\n"
    "  --port-file FILE        write the SSH port (atomically, once listening)\n"
    "  --log FILE              log every RPC and every change to running\n"
    "  --help, --version       this text; the version\n";

static struct nc_server_reply *rpc_clb(struct lyd_node *rpc, struct nc_session *s)
{
	struct nemu_client *c = nc_session_get_data(s);

	return nemu_rpc(c->e, c, rpc);
}

static int listen_unix(const char *path, struct ofc_error *err)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path))
		return ofc_error_set(err, OFC_E_USAGE, "--unix path too long");
	memcpy(sa.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	unlink(path); /* a socket left by an earlier run */
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || chmod(path, 0600) < 0 ||
	    listen(fd, 16) < 0) {
		int en = errno;

		if (fd >= 0)
			close(fd);
		return ofc_error_set(err, OFC_E_RUNTIME, "cannot listen on %s: %s", path,
				     strerror(en));
	}
	return fd;
}

static void add_client(struct nemu *e, struct nemu_client *c)
{
	c->e = e;
	c->next = e->clients;
	e->clients = c;
}

/* The hello of a new client (libnetconf2 waits for it: nc_server_set_hello_timeout). */
static void hello(struct nemu *e, struct nc_pollsession *ps, struct nemu_client *c)
{
	struct nc_session *nc = NULL;
	uint32_t n = nc_ps_session_count(ps);

	if (n >= MAX_SESSIONS ||
	    nc_accept_inout(c->lib_fd, c->lib_fd, c->user[0] ? c->user : "unix", &nc) !=
		NC_MSG_HELLO) {
		c->gone = true;
		return;
	}
	c->nc = nc;
	c->sid = nc_session_get_id(nc);
	nc_session_set_data(nc, c);
	nc_ps_add_session(ps, nc);
	if (e->co.log) {
		fprintf(e->co.log, "%llu session %u (%s)\n", (unsigned long long)e->commands,
			c->sid, c->user[0] ? c->user : "unix");
		fflush(e->co.log);
	}
}

static void free_gone(struct nemu *e, struct nc_pollsession *ps)
{
	for (struct nemu_client **pp = &e->clients; *pp;) {
		struct nemu_client *c = *pp;

		if (!c->gone) {
			pp = &c->next;
			continue;
		}
		*pp = c->next;
		if (c->nc) {
			nc_ps_del_session(ps, c->nc);
			nemu_session_end(e, c->sid);
			ncrelay_cut(c->relay); /* nothing more goes out */
			nc_session_free(c->nc, NULL);
		}
		close(c->lib_fd);
		ncrelay_stop(c->relay);
		free(c->rest);
		free(c);
	}
}

static void poll_sessions(struct nemu *e, struct nc_pollsession *ps)
{
	for (int turns = 0; turns < 64; turns++) {
		struct nc_session *s = NULL;
		int r;

		/* each session's next message, before libnetconf2 reads one */
		for (struct nemu_client *c = e->clients; c; c = c->next)
			while (nemu_plain(e, c) == 1)
				;
		r = nc_ps_poll(ps, 0, &s);

		if (r & (NC_PSPOLL_SESSION_TERM | NC_PSPOLL_SESSION_ERROR)) {
			struct nemu_client *c = s ? nc_session_get_data(s) : NULL;

			if (c)
				c->gone = true;
		}
		if (r & (NC_PSPOLL_TIMEOUT | NC_PSPOLL_NOSESSIONS | NC_PSPOLL_ERROR))
			break;
	}
}

static int serve(struct nemu *e, int tcp_fd, int unix_fd)
{
	struct nc_pollsession *ps = nc_ps_new();
	int ready[2];

	if (pipe2(ready, O_CLOEXEC) < 0)
		return -1;
	for (;;) {
		struct pollfd p[MAX_SESSIONS + 8];
		nfds_t np = 0;
		bool busy = false;

		p[np++] = (struct pollfd){.fd = tcp_fd, .events = POLLIN};
		p[np++] = (struct pollfd){.fd = unix_fd, .events = POLLIN};
		p[np++] = (struct pollfd){.fd = ready[0], .events = POLLIN};
		for (struct nemu_client *c = e->clients; c && np < ARRAY_SIZE(p); c = c->next) {
			if (c->nc && !c->gone)
				p[np++] = (struct pollfd){.fd = c->lib_fd, .events = POLLIN};
			busy |= c->huge_left || c->endless;
		}
		if (poll(p, np, busy ? 5 : 50) < 0 && errno != EINTR)
			return -1;
		if (p[0].revents & POLLIN) {
			int fd = accept4(tcp_fd, NULL, NULL, SOCK_CLOEXEC);

			if (fd >= 0 && e->tls_cred)
				nemu_tls_accept(e, fd, ready[1]);
			else if (fd >= 0)
				nemu_ssh_accept(e, fd, ready[1]);
		}
		if (p[1].revents & POLLIN) {
			int fd = accept4(unix_fd, NULL, NULL, SOCK_CLOEXEC);
			struct nemu_client *c;
			struct ofc_error err = {0};

			if (fd >= 0) {
				c = xcalloc(1, sizeof(*c));
				c->relay = ncrelay_start(fd, NULL, NULL, &c->lib_fd, &err);
				if (c->relay) {
					add_client(e, c);
					hello(e, ps, c);
				} else {
					free(c);
				}
			}
		}
		if (p[2].revents & POLLIN) {
			struct nemu_client *c;

			if (read(ready[0], &c, sizeof(c)) == (ssize_t)sizeof(c)) {
				add_client(e, c);
				hello(e, ps, c);
			}
		}
		poll_sessions(e, ps);
		nemu_tick(e);
		free_gone(e, ps);
	}
}

/* Options of netconf-emu's own; the shared ones go to emu_common_option. */
/* --tls-cert, --tls-key, --tls-ca */
struct tls_paths {
	const char *cert, *key, *ca;
};

static int own_option(struct nemu *e, int c, const char *arg, const char **unix_path,
		      const char **host_key, const char **known_hosts, const char **cred_path,
		      struct tls_paths *tls)
{
	struct ofc_error err = {0};

	switch (c) {
	case 'n':
		if (parse_u32(arg, &e->n) < 0 || e->n < 1 || e->n > MAX_PORTS)
			return emu_usage_error(&e->co, "--ports must be 1..100000, got '%s'", arg);
		return 0;
	case 'd':
		if (parse_u32(arg, &e->delay_ms) < 0 || e->delay_ms > 600000)
			return emu_usage_error(&e->co, "--delay-ms must be 0..600000, got '%s'",
					       arg);
		return 0;
	case 'u':
		*unix_path = arg;
		return 0;
	case 'K':
		*host_key = arg;
		return 0;
	case 'W':
		*known_hosts = arg;
		return 0;
	case 'H':
		e->hold_path = arg;
		return 0;
	case 'h' + 256:
		e->health_path = arg;
		return 0;
	case 'S':
		e->stale = true;
		return 0;
	case 'N' + 256:
		e->notification = false;
		return 0;
	case 'T' + 256:
		tls->cert = arg;
		return 0;
	case 'Y' + 256:
		tls->key = arg;
		return 0;
	case 'A' + 256:
		tls->ca = arg;
		return 0;
	case 'P' + 256: {
		char *end;

		e->power_alarm = strtod(arg, &end);
		if (!*arg || *end || e->power_alarm < -100 || e->power_alarm > 100)
			return emu_usage_error(
			    &e->co, "--power-alarm must be -100..100 dBm, got '%s'", arg);
		return 0;
	}
	case 's':
		e->state_path = arg;
		return 0;
	case 'r':
		for (const char *const *r = opsw_revisions; *r; r++)
			if (strcmp(*r, arg) == 0)
				e->revision = *r;
		if (!e->revision || strcmp(e->revision, arg) != 0)
			return emu_usage_error(&e->co,
					       "--revision must be 2017-08-04 or 2015-06-10, "
					       "got '%s'",
					       arg);
		return 0;
	case 'm':
		e->revision = NULL;
		return 0;
	case 'c' + 256:
		e->candidate = false;
		return 0;
	case 'f' + 256:
		e->confirmed = false;
		return 0;
	case 'b' + 256:
		e->rollback = false;
		return 0;
	case 'w' + 256:
		e->writable_running = false;
		return 0;
	case 'M':
		e->fault_mode = nemu_fault_parse(arg);
		if (!e->fault_mode)
			return emu_usage_error(&e->co, "unknown --fail-mode '%s'", arg);
		return 0;
	case 'c':
		*cred_path = arg;
		if (credentials_load(arg, NULL, &e->cred, &err) < 0) {
			fprintf(stderr, "netconf-emu: %s\n", err.msg);
			return 2;
		}
		e->have_cred = true;
		return 0;
	default:
		return 1;
	}
}

static int start(struct nemu *e, const char *host_key, const char *known_hosts,
		 const char *cred_path, const struct tls_paths *tls, int *tcp_fd,
		 const char *unix_path, int *unix_fd, struct ofc_error *err)
{
	const char *features[6];
	int nf = 0;

	if (e->writable_running)
		features[nf++] = "writable-running";
	if (e->candidate)
		features[nf++] = "candidate";
	if (e->candidate && e->confirmed)
		features[nf++] = "confirmed-commit";
	if (e->rollback)
		features[nf++] = "rollback-on-error";
	features[nf] = NULL;
	netconf_quiet();
	if (netconf_context(e->revision, features, LY_CTX_NO_YANGLIBRARY, &e->ctx, err) < 0 ||
	    nemu_init(e, err) < 0 || nemu_load_state(e, err) < 0)
		return -1;
	/* RFC 5277: the notifications module (create-subscription) and the
	 * port power notifications, and the capability in the hello */
	if (e->notification && netconf_context_notifications(e->ctx, err) < 0)
		return -1;
	if (nc_server_init(e->ctx) != 0 ||
	    (e->notification && nc_server_set_capability(NC_NOTIF_CAP) != 0))
		return ofc_error_set(err, OFC_E_RUNTIME, "libnetconf2 would not start a server");
	nc_set_global_rpc_clb(rpc_clb);
	nc_server_set_hello_timeout(5);
	if (e->co.listen && tls->cert) {
		if (nctls_server_cred(tls->cert, tls->key, tls->ca, &e->tls_cred, err) < 0 ||
		    (*tcp_fd = emu_listen(&e->co, err)) < 0)
			return -1;
	} else if (e->co.listen) {
		if (nemu_ssh_keys(e, host_key, cred_path, err) < 0 ||
		    (*tcp_fd = emu_listen(&e->co, err)) < 0)
			return -1;
		if (known_hosts) {
			struct sockaddr_in sa;
			socklen_t len = sizeof(sa);
			char line[1024], host[64];
			const char *colon = strrchr(e->co.listen, ':');

			snprintf(host, sizeof(host), "%.*s", (int)(colon - e->co.listen),
				 e->co.listen);
			if (getsockname(*tcp_fd, (struct sockaddr *)&sa, &len) < 0 ||
			    nemu_known_hosts_line(e, host, ntohs(sa.sin_port), line, sizeof(line),
						  err) < 0 ||
			    atomic_write(known_hosts, line, strlen(line), err) < 0)
				return -1;
		}
	}
	if (unix_path && (*unix_fd = listen_unix(unix_path, err)) < 0)
		return -1;
	/* the port file last: a test that sees it may connect at once */
	if (*tcp_fd >= 0)
		return emu_start(&e->co, *tcp_fd, err);
	e->co.port_file = NULL;
	return emu_start(&e->co, -1, err);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
	    EMU_COMMON_OPTIONS,
	    {"ports", required_argument, NULL, 'n'},
	    {"delay-ms", required_argument, NULL, 'd'},
	    {"unix", required_argument, NULL, 'u'},
	    {"credentials", required_argument, NULL, 'c'},
	    {"host-key", required_argument, NULL, 'K'},
	    {"known-hosts", required_argument, NULL, 'W'},
	    {"hold-file", required_argument, NULL, 'H'},
	    {"health", required_argument, NULL, 'h' + 256},
	    {"stale-power", no_argument, NULL, 'S'},
	    {"no-notification", no_argument, NULL, 'N' + 256},
	    {"power-alarm", required_argument, NULL, 'P' + 256},
	    {"tls-cert", required_argument, NULL, 'T' + 256},
	    {"tls-key", required_argument, NULL, 'Y' + 256},
	    {"tls-ca", required_argument, NULL, 'A' + 256},
	    {"state", required_argument, NULL, 's'},
	    {"revision", required_argument, NULL, 'r'},
	    {"no-model", no_argument, NULL, 'm'},
	    {"no-candidate", no_argument, NULL, 'c' + 256},
	    {"no-confirmed-commit", no_argument, NULL, 'f' + 256},
	    {"no-rollback-on-error", no_argument, NULL, 'b' + 256},
	    {"no-writable-running", no_argument, NULL, 'w' + 256},
	    {0},
	};
	struct nemu e = {
	    .co = {.prog = "netconf-emu", .usage = usage, .help = help, .fail_count = 1},
	    .revision = "2017-08-04",
	    .candidate = true,
	    .confirmed = true,
	    .rollback = true,
	    .writable_running = true,
	    .notification = true,
	    .power_alarm = -60,
	    .fault_mode = NF_DENY};
	const char *unix_path = NULL, *host_key = NULL, *known_hosts = NULL, *cred_path = NULL;
	struct tls_paths tls = {0};
	struct ofc_error err = {0};
	int c, rc, tcp_fd = -1, unix_fd = -1;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		rc = own_option(&e, c, optarg, &unix_path, &host_key, &known_hosts, &cred_path,
				&tls);
		if (rc == 1)
			rc = emu_common_option(&e.co, c, optarg);
		if (rc == 1)
			return emu_usage_error(&e.co, "unknown option or missing value: '%s'",
					       argv[optind - 1]);
		if (rc)
			return rc < 0 ? 0 : rc;
	}
	if (optind != argc)
		return emu_usage_error(&e.co, "unexpected argument '%s'", argv[optind]);
	if ((!e.co.listen && !unix_path) || !e.n)
		return emu_usage_error(&e.co, "%s", "--ports and --listen or --unix are required");
	if (e.co.port_file && !e.co.listen)
		return emu_usage_error(&e.co, "%s", "--port-file names the --listen port");
	if ((tls.cert || tls.key || tls.ca) && !(tls.cert && tls.key && tls.ca && e.co.listen))
		return emu_usage_error(&e.co, "%s",
				       "TLS takes --listen and all of --tls-cert, --tls-key and "
				       "--tls-ca");
	if (tls.cert && (host_key || known_hosts || cred_path))
		return emu_usage_error(&e.co, "%s",
				       "--host-key, --known-hosts and --credentials are SSH's: a "
				       "TLS client logs in with its certificate");
	signal(SIGPIPE, SIG_IGN);
	if (start(&e, host_key, known_hosts, cred_path, &tls, &tcp_fd, unix_path, &unix_fd, &err) <
	    0) {
		fprintf(stderr, "netconf-emu: %s\n", err.msg);
		return err.code == OFC_E_RUNTIME ? 1 : 2;
	}
	serve(&e, tcp_fd, unix_fd);
	fprintf(stderr, "netconf-emu: poll: %s\n", strerror(errno));
	return 1;
}
