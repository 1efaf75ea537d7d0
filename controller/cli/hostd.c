/* ofc-hostd: a host's agent (docs/hosts.md). It watches the host's fabric
 * ports' links (hostd_links.c, libnl) and what lldpd hears on them
 * (hostd_lldp.c, lldpcli), and reports both to ofcd as ReportLinks: at
 * once when a link changes, and every --interval whether or not anything
 * did (ofcd decides a restore's hold-down at a report). It sends through
 * the CLI's walk of the replicas (cli_call): ofcd's socket, or ofc-gateway
 * with the host's certificate (the host role), so a follower sends it on to
 * the leader. It sets lldpd's system name to the fabric host's name and
 * each fabric interface's port ID to its port number (the local subtype),
 * so what a neighbour hears names the fabric's host and port.
 *
 * A port is its receiving interface (--port P=IFNAME; on the testbed,
 * --testbed-ports N: port p is i<p>, the end of the circuit arriving at it,
 * and its frames go out on o<p> too): up when that interface is up with
 * carrier, its neighbour the host and port lldpd hears there. A port whose
 * interface does not exist (a testbed port without a circuit) is not
 * reported: dark is not down. lldpd absent or stopped is said (on stderr
 * and in the report, lldp_running false), and ofcd then takes the host's
 * wiring as not seen. */
#include "controller/cli/internal.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "proto/control.pb-c.h"

#define HOSTD_MAX_PORTS 64
#define LLDPCLI_TIMEOUT 2.0 /* s: lldpd answers in milliseconds */

struct hostd {
	const char *host, *lldpcli, *lldp_sock, *netns;
	double interval; /* s */
	bool once, testbed, quiet;
	bool asked_socket, asked_server; /* --socket, --server given */
	uint32_t nports;
	char rx[HOSTD_MAX_PORTS][IF_NAMESIZE + 1]; /* port p's receiving interface */
	char tx[HOSTD_MAX_PORTS][IF_NAMESIZE + 1]; /* ... and its sending one ("": the same) */
	int ifindex[HOSTD_MAX_PORTS];		   /* as lldpd was last told of it (0: not) */
	/* Reports at which lldpd is told again: an interface just made may not
	 * be lldpd's yet when it is first told (the same notification wakes
	 * both), and a port ID set on a port lldpd lacks is lost. */
	uint8_t again[HOSTD_MAX_PORTS];
	struct cli_targets t;
	struct hostd_links links;
	struct hostd_neighbours nb;
	bool lldp_ok, lldp_said, named;
	char lldp_error[400];
	char last[512];	    /* the last answer said, not said again */
	char last_err[512]; /* ... and the last failure to send one */
	/* The namespace entered (--netns), as its file was: once that file is
	 * gone or names another, the host is gone (testbed down, or its
	 * namespace removed by hand) and the agent ends, not left running in
	 * a namespace nobody can name. */
	dev_t ns_dev;
	ino_t ns_ino;
};

static int usage(const char *fmt, const char *arg)
{
	fprintf(stderr, "ofc-hostd: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\nTry 'ofc-hostd --help'.\n");
	return 2;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ---- the options -------------------------------------------------------- */

#define H(field) offsetof(struct hostd, field)

/* --port P=IFNAME */
static int p_port(const struct opt *row, const char *arg, void *base, struct ofc_error *err)
{
	struct hostd *h = base;
	const char *eq = strchr(arg, '=');
	uint32_t p;
	char num[16];

	if (!eq || (size_t)(eq - arg) >= sizeof(num) || !eq[1] || strlen(eq + 1) > IF_NAMESIZE - 1)
		return opt_refuse(row, arg, err, "expected P=IFNAME");
	snprintf(num, sizeof(num), "%.*s", (int)(eq - arg), arg);
	if (parse_u32(num, &p) < 0 || p >= HOSTD_MAX_PORTS)
		return opt_refuse(row, arg, err, "the port is a number below 64");
	if (h->rx[p][0])
		return opt_refuse(row, arg, err, "that port is named twice");
	snprintf(h->rx[p], sizeof(h->rx[p]), "%s", eq + 1);
	if (p + 1 > h->nports)
		h->nports = p + 1;
	return 0;
}

/* --testbed-ports N: port p is i<p>, and its frames go out on o<p>. */
static int p_testbed_ports(const struct opt *row, const char *arg, void *base,
			   struct ofc_error *err)
{
	struct hostd *h = base;

	if (opt_u32(row, arg, base, err) < 0)
		return -1;
	h->testbed = true;
	for (uint32_t p = 0; p < h->nports; p++) {
		snprintf(h->rx[p], sizeof(h->rx[p]), "i%u", p);
		snprintf(h->tx[p], sizeof(h->tx[p]), "o%u", p);
	}
	return 0;
}

/* --socket and --server: the replicas to walk (cli_targets_add). */
static int p_target(const struct opt *row, const char *arg, void *base, struct ofc_error *err)
{
	struct hostd *h = base;
	bool socket = strcmp(row->name, "socket") == 0;

	*(socket ? &h->asked_socket : &h->asked_server) = true;
	/* The option's words stay with the target, for later messages. */
	if (cli_targets_add(&h->t, socket ? "--socket" : "--server", arg, err) < 0) {
		err->code = OFC_E_USAGE;
		return -1;
	}
	return 0;
}

const struct opt hostd_option_table[] = {
    {"host", opt_str, H(host), "NAME", "the fabric host this machine is (the config's name)",
     .flags = OPT_REQUIRED},
    {"port", p_port, 0, "P=IFNAME", "fabric port P is interface IFNAME (repeatable)",
     .flags = OPT_REPEAT | OPT_REQUIRED, .alt = 1},
    {"testbed-ports", p_testbed_ports, H(nports), "N",
     "the testbed's naming: port p is i<p> (and o<p>)", 1, HOSTD_MAX_PORTS, "expected 1..64",
     .alt = 1},
    {"socket", p_target, 0, "PATH", "ofcd's socket (repeatable, a comma list: replicas)",
     .flags = OPT_REPEAT, .alt = 2},
    {"server", p_target, 0, "URL",
     "ofc-gateway's https:// URL (repeatable), with --cert, --key and --cacert",
     .flags = OPT_REPEAT, .alt = 2},
    {"cert", opt_str, H(t.srv.cert), "FILE", "the host's certificate (the policy's host role)",
     .under = "server", .flags = OPT_REQUIRED},
    {"key", opt_str, H(t.srv.key), "FILE", "its private key", .under = "server",
     .flags = OPT_REQUIRED},
    {"cacert", opt_str, H(t.srv.cacert), "FILE", "the CA that signed the gateway's certificate",
     .under = "server", .flags = OPT_REQUIRED},
    {"interval", opt_seconds, H(interval), "DUR", "report every DUR even when nothing changed (1s)",
     0.05, 3600, "expected a duration from 50ms to 1h"},
    {"lldp-socket", opt_str, H(lldp_sock), "PATH", "lldpd's control socket (lldpd's default)"},
    {"lldpcli", opt_str, H(lldpcli), "PATH", "the lldpcli to run (lldpcli)"},
    {"netns", opt_str, H(netns), "NAME",
     "enter the network namespace /run/netns/NAME first (the testbed's hosts)"},
    {"once", NULL, H(once), NULL, "report once and exit (0: ofcd took it)"},
    {"quiet", NULL, H(quiet), NULL, "say only errors"},
    {"help", NULL, 0, NULL, "this text", .flags = OPT_STOP},
    {"version", NULL, 0, NULL, "the version", .flags = OPT_STOP},
    {NULL},
};
const size_t hostd_struct_size = sizeof(struct hostd);

static void help(void)
{
	opt_usage(stdout, "ofc-hostd", hostd_option_table);
	fputs("\nA host's agent: reports the host's fabric ports' link state (netlink) and\n"
	      "their LLDP neighbours (lldpd) to ofcd (docs/hosts.md). A port down becomes\n"
	      "a failure; ofcd checks the neighbours against the committed circuits.\n\n",
	      stdout);
	opt_help(stdout, hostd_option_table);
}

/* Returns -1 to go on, else the exit status. */
static int parse(int argc, char **argv, struct hostd *h)
{
	struct ofc_error err = {0};
	const struct opt *stop = NULL;
	int rc;

	h->interval = 1;
	h->lldpcli = "lldpcli";
	if ((rc = opt_parse(hostd_option_table, argc, argv, h, &stop, &err)) < 0)
		return usage("%s", err.msg);
	if (rc > 0) {
		if (strcmp(stop->name, "help") == 0)
			help();
		else
			printf("ofc-hostd %s\n", OFC_VERSION);
		return 0;
	}
	if (!h->host || !*h->host)
		return usage("%s", "--host NAME: the fabric host this machine is");
	if (!h->nports)
		return usage("%s", "no ports: --port P=IFNAME... or --testbed-ports N");
	if (h->asked_socket && h->asked_server)
		return usage("%s", "--server and --socket: choose one");
	h->t.https = h->asked_server;
	if (!h->asked_socket && !h->asked_server && cli_targets_from_env(&h->t, &err) < 0)
		return usage("%s", err.msg);
	if (cli_targets_check(&h->t, &err) < 0)
		return usage("%s", err.msg);
	return -1;
}

/* Tell lldpd who we are: the fabric host's name, and each present fabric
 * interface's port ID its port number, once per interface (again when it
 * is made anew: a new ifindex). Failures are lldpd's absence, said by the
 * neighbours' read. */
static void name_ports(struct hostd *h)
{
	struct strbuf out = STRBUF_INIT;
	struct ofc_error err = {0};

	if (!h->named) {
		const char *args[] = {"configure", "system", "hostname", h->host, NULL};
		const char *tx[] = {"configure", "lldp", "tx-interval", "1", NULL};

		h->named =
		    hostd_lldpcli(h->lldpcli, h->lldp_sock, args, LLDPCLI_TIMEOUT, &out, &err) == 0;
		if (h->named && h->testbed) /* seconds matter on the testbed */
			hostd_lldpcli(h->lldpcli, h->lldp_sock, tx, LLDPCLI_TIMEOUT, &out, &err);
		memset(h->ifindex, 0, sizeof(h->ifindex));
	}
	for (uint32_t p = 0; h->named && p < h->nports; p++) {
		char ifs[2 * IF_NAMESIZE + 4], num[16];
		bool up;
		int idx = 0, idx2 = 0;

		if (!h->rx[p][0] || !hostd_link(&h->links, h->rx[p], &up, &idx))
			continue;
		if (h->tx[p][0])
			hostd_link(&h->links, h->tx[p], &up, &idx2);
		if (h->ifindex[p] != idx * 65536 + idx2)
			h->again[p] = 3;
		else if (!h->again[p])
			continue;
		else
			h->again[p]--;
		snprintf(ifs, sizeof(ifs), "%s%s%s", h->rx[p], idx2 ? "," : "",
			 idx2 ? h->tx[p] : "");
		snprintf(num, sizeof(num), "%u", p);
		const char *args[] = {"configure",     "ports", ifs, "lldp",
				      "portidsubtype", "local", num, NULL};
		if (hostd_lldpcli(h->lldpcli, h->lldp_sock, args, LLDPCLI_TIMEOUT, &out, &err) == 0)
			h->ifindex[p] = idx * 65536 + idx2;
	}
	sb_free(&out);
}

/* What lldpd hears now; lldpd's absence said once when it starts and
 * once when it ends. */
static void read_lldp(struct hostd *h)
{
	struct strbuf out = STRBUF_INIT;
	struct ofc_error err = {0};
	const char *args[] = {"-f", "json", "show", "neighbors", NULL};
	bool ok = hostd_lldpcli(h->lldpcli, h->lldp_sock, args, LLDPCLI_TIMEOUT, &out, &err) == 0 &&
		  hostd_lldp_parse(out.buf ? out.buf : "", out.len, &h->nb, &err) == 0;

	if (!ok) {
		h->nb.n = 0;
		h->named = false;
		snprintf(h->lldp_error, sizeof(h->lldp_error),
			 "lldpd does not answer%s%.100s (%.200s): no LLDP neighbours, wiring not "
			 "seen",
			 h->lldp_sock ? " at " : "", h->lldp_sock ? h->lldp_sock : "", err.msg);
		if (!h->lldp_said || h->lldp_ok)
			fprintf(stderr, "ofc-hostd: %s: %s\n", h->host, h->lldp_error);
	} else if (!h->lldp_ok && h->lldp_said) {
		fprintf(stderr, "ofc-hostd: %s: lldpd answers again\n", h->host);
	}
	h->lldp_ok = ok;
	h->lldp_said = true;
	sb_free(&out);
}

static const struct hostd_neighbour *heard_on(const struct hostd *h, const char *ifname)
{
	for (uint32_t i = 0; i < h->nb.n; i++)
		if (strcmp(h->nb.v[i].ifname, ifname) == 0)
			return &h->nb.v[i];
	return NULL;
}

/* One report of every present port; 0 when ofcd took it. */
static int report(struct hostd *h)
{
	Ofc__V1__Request req = OFC__V1__REQUEST__INIT;
	Ofc__V1__ReportLinks rl = OFC__V1__REPORT_LINKS__INIT;
	Ofc__V1__ReportLinks__Port ports[HOSTD_MAX_PORTS], *pp[HOSTD_MAX_PORTS];
	Ofc__V1__Response *r = NULL;
	struct ofc_error err = {0};
	int rc;

	rl.host = (char *)h->host;
	rl.ports = pp;
	for (uint32_t p = 0; p < h->nports; p++) {
		Ofc__V1__ReportLinks__Port *m = &ports[rl.n_ports];
		const struct hostd_neighbour *nb;
		bool up;
		int idx;
		uint32_t q;

		if (!h->rx[p][0] || !hostd_link(&h->links, h->rx[p], &up, &idx))
			continue; /* no interface: dark, not down */
		ofc__v1__report_links__port__init(m);
		m->has_port = m->has_up = 1;
		m->port = p;
		m->up = up;
		m->ifname = h->rx[p];
		nb = up && h->lldp_ok ? heard_on(h, h->rx[p]) : NULL;
		if (nb && nb->host[0] && nb->port_local && parse_u32(nb->port, &q) == 0) {
			m->neighbour_host = (char *)nb->host;
			m->has_neighbour_port = 1;
			m->neighbour_port = q;
			m->has_neighbour_ttl_s = nb->ttl_s >= 0;
			m->neighbour_ttl_s = nb->ttl_s >= 0 ? (uint32_t)nb->ttl_s : 0;
		}
		pp[rl.n_ports++] = m;
	}
	rl.has_lldp_running = 1;
	rl.lldp_running = h->lldp_ok;
	rl.lldp_error = h->lldp_ok ? NULL : h->lldp_error;
	req.body_case = OFC__V1__REQUEST__BODY_REPORT_LINKS;
	req.report_links = &rl;
	rc = cli_call(&h->t, &req, 10, CLI_CALL_ONCE, &r, &err);
	if (rc < 0) {
		/* said once while it lasts: ofcd down for an hour is one line */
		if (strcmp(h->last_err, err.msg) != 0)
			fprintf(stderr, "ofc-hostd: %s: %s\n", h->host, err.msg);
		snprintf(h->last_err, sizeof(h->last_err), "%s", err.msg);
		h->last[0] = 0;
		return -1;
	}
	h->last_err[0] = 0;
	rc = r->status == OFC__V1__STATUS__STATUS_OK ? 0 : -1;
	if (rc < 0 || (!h->quiet && strcmp(h->last, r->message ? r->message : "") != 0))
		fprintf(rc < 0 ? stderr : stdout, "ofc-hostd: %s: %s\n", h->host,
			r->message ? r->message : "(no message)");
	fflush(stdout);
	snprintf(h->last, sizeof(h->last), "%s", r->message ? r->message : "");
	ofc__v1__response__free_unpacked(r, NULL);
	return rc;
}

static int enter_netns(struct hostd *h, const char *name)
{
	struct stat st;
	char path[300];
	int fd;

	if (strchr(name, '/') || strlen(name) > 200)
		return usage("--netns '%s': a namespace's name under /run/netns", name);
	snprintf(path, sizeof(path), "/run/netns/%s", name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0 || setns(fd, CLONE_NEWNET) < 0) {
		fprintf(stderr, "ofc-hostd: --netns %s: %s\n", name, strerror(errno));
		if (fd >= 0)
			close(fd);
		return 1;
	}
	close(fd);
	h->ns_dev = st.st_dev;
	h->ns_ino = st.st_ino;
	return -1;
}

/* Whether the namespace entered is still named by its file. */
static bool netns_still_there(const struct hostd *h)
{
	struct stat st;
	char path[300];

	if (!h->netns)
		return true;
	snprintf(path, sizeof(path), "/run/netns/%s", h->netns);
	return stat(path, &st) == 0 && st.st_dev == h->ns_dev && st.st_ino == h->ns_ino;
}

int ofc_hostd_main(int argc, char **argv)
{
	struct hostd *h = xcalloc(1, sizeof(*h));
	struct ofc_error err = {0};
	int rc = parse(argc, argv, h);
	double next = 0;

	if (rc < 0 && h->netns)
		rc = enter_netns(h, h->netns);
	if (rc >= 0)
		goto out;
	if (hostd_links_open(&h->links, &err) < 0) {
		fprintf(stderr, "ofc-hostd: %s\n", err.msg);
		rc = 1;
		goto out;
	}
	/* SIGTERM and SIGINT end the loop through a signalfd: no handler, no
	 * flag in static storage. */
	sigset_t stop;
	sigemptyset(&stop);
	sigaddset(&stop, SIGTERM);
	sigaddset(&stop, SIGINT);
	sigprocmask(SIG_BLOCK, &stop, NULL);
	int sfd = signalfd(-1, &stop, SFD_CLOEXEC);
	signal(SIGPIPE, SIG_IGN);
	for (bool done = false; !done;) {
		double t = now_s();

		if (h->links.changed || t >= next) {
			if (!netns_still_there(h)) {
				fprintf(stderr, "ofc-hostd: %s: the namespace %s is gone: ending\n",
					h->host, h->netns);
				break;
			}
			h->links.changed = false;
			if (hostd_links_refill(&h->links, &err) < 0)
				fprintf(stderr, "ofc-hostd: %s\n", err.msg);
			read_lldp(h);
			if (h->lldp_ok)
				name_ports(h);
			rc = report(h) < 0 ? 1 : 0;
			if (h->once)
				break;
			next = t + h->interval;
		}
		struct pollfd p[2] = {{.fd = hostd_links_fd(&h->links), .events = POLLIN},
				      {.fd = sfd, .events = POLLIN}};
		double left = next - now_s();
		if (poll(p, 2, left > 0 ? (int)(left * 1000) + 1 : 0) > 0) {
			if ((p[0].revents & POLLIN) && hostd_links_ready(&h->links, &err) < 0)
				fprintf(stderr, "ofc-hostd: %s\n", err.msg);
			done = p[1].revents != 0;
		}
	}
	if (sfd >= 0)
		close(sfd);
	hostd_links_close(&h->links);
	if (!h->once)
		rc = 0;
out:
	free(h);
	return rc;
}
