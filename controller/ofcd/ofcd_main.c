/* ofcd: the controller daemon. Options, logging (stderr, syslog or the
 * journal), daemonizing and what systemd is told (sd_notify, socket
 * activation); the daemon itself is the rest of controller/ofcd/. Exit
 * status: 0 after a clean stop, 1 on a runtime failure, 2 on bad options or
 * a bad config. */
#include "controller/config/config.h"
#include "controller/ofcd/ofcd.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <systemd/sd-daemon.h>
#include <systemd/sd-journal.h>
#include <time.h>
#include <unistd.h>

#define MAX_DEVICES	 256
#define MAX_SHARE_EXEMPT 8

static const char usage_line[] =
    "usage: ofcd --config FILE --socket PATH [--ro-socket PATH] [--state-dir DIR]\n"
    "            [--device NAME=HOST:PORT]... [--foreground] [--syslog] [--admin-group NAME]\n"
    "            [--credentials-dir DIR] [--allow-device HOST:PORT|CIDR:PORT]...\n"
    "            [--socket-mode MODE] [--max-frame SIZE] [--ro-max-frame SIZE]\n"
    "            [--max-clients N] [--max-clients-per-uid N] [--max-buffer-per-uid SIZE]\n"
    "            [--max-request-memory SIZE] [--max-request-time DUR]\n"
    "            [--ro-max-request-memory SIZE] [--ro-max-request-time DUR]\n"
    "            [--topology-dir DIR] [--gateway-socket PATH --gateway-uid USER\n"
    "            [--gateway-group GROUP]] [--mutation-share N]\n"
    "            [--mutation-share-exempt ID]...\n"
    "            [--link-hold-down DUR] [--flap-half-life DUR] [--flap-penalty N]\n"
    "            [--flap-suppress N] [--flap-reuse N] [--flap-max-suppress DUR]\n"
    "            [--cluster etcds://HOST:PORT[,HOST:PORT...] --cluster-cacert FILE\n"
    "             --cluster-cert FILE --cluster-key FILE | --cluster etcd://...\n"
    "             --cluster-insecure] [--cluster-user NAME --cluster-password-file FILE]\n"
    "             [--cluster-ttl DUR]\n"
    "             [--cluster-name NAME] [--cluster-prefix PREFIX] [--advertise ADDR]...]\n"
    "            [--client-timeout DUR] [--probe-interval DUR] [--log-level LEVEL] [--check]\n"
    "            [--lp-solver lpsolve|clp]\n"
    "            [--journal] [--log-file FILE] [--pid-file FILE] | --help | --version\n";

static const char help_text[] =
    "\nServes the control API (proto/control.proto, docs/control.md) for one fabric.\n\n"
    "  --config FILE            the fabric config (YAML); SIGHUP reloads and applies it\n"
    "  --socket PATH            the main control socket: reads for anyone who can open it,\n"
    "                           mutations for root and --admin-group\n"
    "  --ro-socket PATH         a read-only socket (mode 0666) for everyone\n"
    "  --state-dir DIR          state and journal (default $OFC_STATE_DIR, else /var/lib/ofc)\n"
    "  --device NAME=HOST:PORT  talk to device NAME at another address (repeatable)\n"
    "  --credentials-dir DIR    credentials files only from here (default /etc/ofc/credentials)\n"
    "  --topology-dir DIR       edge-list files (edges:FILE) that requests and configs\n"
    "                           sent to ofcd may name, only from here (a directory of\n"
    "                           root's, closed to writes by others); without it they\n"
    "                           may name none\n"
    "  --allow-device ADDR      HOST:PORT or CIDR:PORT a config sent to ofcd may name\n"
    "                           (repeatable; --config's own addresses are always allowed)\n"
    "  --foreground             stay in the foreground and log to stderr\n"
    "  --syslog                 log to syslog even in the foreground\n"
    "  --journal                log to the systemd journal with each line's priority (the\n"
    "                           default when stderr is the journal: JOURNAL_STREAM)\n"
    "  --log-file FILE          append log lines to FILE instead (foreground or not;\n"
    "                           where there is no syslog, /dev/log, ofcd detaches only\n"
    "                           with this or --journal)\n"
    "  --pid-file FILE          write ofcd's pid to FILE once it serves; removed at the\n"
    "                           stop\n"
    "  --admin-group NAME       members may mutate; the main socket gets this group\n"
    "  --socket-mode MODE       of the main socket, octal (default 0660)\n"
    "  --max-frame SIZE         largest frame either way (default 16MiB)\n"
    "  --ro-max-frame SIZE      largest request on the read-only socket (default 64KiB)\n"
    "  --max-clients N          connections at once (default 1024); the file descriptor\n"
    "                           limit (LimitNOFILE) should be N + devices + 64 or more\n"
    "  --max-clients-per-uid N  connections of one user at once (default 64)\n"
    "  --max-buffer-per-uid SIZE  requests and unread replies ofcd holds for one user\n"
    "                           (default 4 x --max-frame; at least --max-frame + 1MiB)\n"
    "  --max-request-memory SIZE  memory one GetSchedule, the state's schedule or a\n"
    "                           failure's re-plan may hold; a larger one is refused\n"
    "                           with its estimate (default: a quarter of the\n"
    "                           machine's memory)\n"
    "  --max-request-time DUR   time one GetSchedule may take; past it the request\n"
    "                           fails with the phase it reached (default 60s; 0: none)\n"
    "  --ro-max-request-memory SIZE, --ro-max-request-time DUR  the same for requests\n"
    "                           on the read-only socket (defaults: an eighth of the\n"
    "                           machine's memory, 10s; never more than the above)\n"
    "  --client-timeout DUR     a half-sent request or unread reply may wait (default 30s)\n"
    "  --lp-solver S            lpsolve or clp: the LP solver of the schedules ofcd\n"
    "                           computes for a config without lp_solver (default: each\n"
    "                           LP's own, docs/ARCHITECTURE.md \"LP solvers\")\n"
    "  --probe-interval DUR     read every device once at start (logged) and then this\n"
    "                           often when idle, and when a switch notifies a port's\n"
    "                           power alarm (default 10s; 0: never, not at start)\n"
    "  --log-level LEVEL        err, warning, notice (default), info or debug\n"
    "  --check                  validate the config, print what would be served, exit\n"
    "  --gateway-socket PATH    a socket for ofc-gateway, the network API (docs/control.md):\n"
    "                           only --gateway-uid may connect, and ofcd authorises\n"
    "                           each request by the principal the gateway names\n"
    "  --gateway-uid USER       the gateway's user (name or number)\n"
    "  --gateway-group GROUP    the gateway socket's group when ofcd is not root (mode\n"
    "                           0660; ofcd's user must be a member): a group that\n"
    "                           grants nothing else (default: the gateway user's own)\n"
    "  --mutation-share N       mutations one tenant of the gateway may have queued at\n"
    "                           once (default 8); past it the next is refused BUSY\n"
    "  --mutation-share-exempt ID  a principal (cn:NAME) held only to the tenants'\n"
    "                           share together, the Slurm hooks' (repeatable, 8 at most)\n"
    "  --link-hold-down DUR     a host port its agent reported down is restored after\n"
    "                           it stays up this long (default 5s; docs/hosts.md)\n"
    "  --flap-half-life DUR     a flapping port's penalty halves in this (default 15s)\n"
    "  --flap-penalty N         penalty a flap adds (default 1000)\n"
    "  --flap-suppress N        above it the port is held failed (default 1500) ...\n"
    "  --flap-reuse N           ... until it decays below this (default 750)\n"
    "  --flap-max-suppress DUR  the longest a port stays suppressed (default 60s)\n"
    "  --cluster etcds://HOST:PORT[,...]  run as one of several replicas whose state\n"
    "                           lives in this etcd cluster (docs/ofcd.md, \"Replicas\"):\n"
    "                           the one holding the fabric's lease leads, the others\n"
    "                           answer reads and tell clients who leads; etcds:// is\n"
    "                           TLS with a client certificate, etcd:// plain http\n"
    "  --cluster-cacert FILE    the CA that signed etcd's members' certificates (PEM)\n"
    "  --cluster-cert FILE      this replica's client certificate for etcd (PEM)\n"
    "  --cluster-key FILE       its private key (PEM; not readable by others)\n"
    "  --cluster-user NAME      etcd's user, when etcd runs with auth enabled (RBAC):\n"
    "                           a token for it is asked with --cluster-password-file's\n"
    "                           password (--cluster-cert then names no common name:\n"
    "                           etcd's JSON gateway refuses one under auth)\n"
    "  --cluster-password-file FILE  its password, one line (not readable by others)\n"
    "  --cluster-insecure       allow plain etcd:// (no TLS, no client certificate):\n"
    "                           anyone who reaches etcd may then rewire the fabric\n"
    "  --cluster-ttl DUR        the leader's lease on etcd (default 2s, whole seconds):\n"
    "                           a new leader takes over about this long after one dies\n"
    "  --cluster-name NAME      this replica among them (default: the host's name)\n"
    "  --cluster-prefix PREFIX  etcd keys' prefix (default /ofc/)\n"
    "  --advertise ADDR         where clients reach this replica when it leads: its\n"
    "                           socket's path (default --socket, made absolute) or\n"
    "                           its gateway's http(s):// URL (repeatable)\n\n"
    "Under systemd (Type=notify) it sends READY=1 once its sockets are bound, STATUS=\n"
    "lines and STOPPING=1; sockets passed by socket activation (LISTEN_FDS: the main\n"
    "socket, then optionally the read-only one) replace --socket and --ro-socket.\n";

struct logger {
	bool use_syslog;
	bool use_journal;
	int fd;	     /* --log-file, else -1 (stderr) */
	bool notify; /* NOTIFY_SOCKET: tell systemd how it goes */
};

static const char *level_name(int level)
{
	static const char *const names[] = {"emerg",   "alert",	 "crit", "err",
					    "warning", "notice", "info", "debug"};

	return level >= 0 && level <= 7 ? names[level] : "log";
}

static void log_line(void *ctx, int level, const char *msg)
{
	struct logger *lg = ctx;

	/* The service's status line follows what an operator is told. */
	if (lg->notify && level <= OFCD_LOG_NOTICE)
		sd_notifyf(0, "STATUS=%s", msg);
	if (lg->use_journal) {
		sd_journal_send("MESSAGE=%s", msg, "PRIORITY=%d", level, "SYSLOG_IDENTIFIER=ofcd",
				NULL);
		return;
	}
	if (lg->use_syslog) {
		syslog(level, "%s", msg);
		return;
	}
	struct timespec ts;
	struct tm tm;
	char when[32], line[1400];
	int n;

	clock_gettime(CLOCK_REALTIME, &ts);
	localtime_r(&ts.tv_sec, &tm);
	strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm);
	n = snprintf(line, sizeof(line), "%s.%03ld ofcd[%d] %s: %s\n", when, ts.tv_nsec / 1000000,
		     (int)getpid(), level_name(level), msg);
	if (n >= (int)sizeof(line)) {
		n = (int)sizeof(line) - 1;
		line[n - 1] = '\n';
	}
	/* One write per line: threads log at once, and O_APPEND keeps each
	 * line whole in the file (logrotate's copytruncate works with it). */
	(void)!write(lg->fd >= 0 ? lg->fd : STDERR_FILENO, line, (size_t)n);
}

static void notify_state(void *ctx, const char *state)
{
	struct logger *lg = ctx;

	if (lg->notify)
		sd_notify(0, state);
}

/* systemd connects stderr to the journal and says so in JOURNAL_STREAM
 * ("dev:inode" of that stream): then log there with priorities. */
static bool stderr_is_journal(void)
{
	const char *js = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;

	return js && sscanf(js, "%llu:%llu", &dev, &ino) == 2 && fstat(STDERR_FILENO, &st) == 0 &&
	       (unsigned long long)st.st_dev == dev && (unsigned long long)st.st_ino == ino;
}

static int usage(const char *fmt, const char *arg)
{
	fprintf(stderr, "ofcd: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\n%s", usage_line);
	return 2;
}

/* Paths survive the chdir("/") of daemonizing, and a reload finds the
 * same file. */
static char *absolute(const char *path)
{
	char cwd[PATH_MAX];

	if (!path || path[0] == '/' || !getcwd(cwd, sizeof(cwd)))
		return path ? xstrdup(path) : NULL;
	return xasprintf("%s/%s", cwd, path);
}

/* Detach: the child carries on; the parent exits with the child's verdict
 * on its start-up, so `ofcd` without --foreground still fails visibly. */
static int daemonize(int *report_fd)
{
	int p[2];
	pid_t pid;

	if (pipe(p) != 0)
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid > 0) {
		char rc = 1;

		close(p[1]);
		if (read(p[0], &rc, 1) != 1)
			rc = 1;
		_exit(rc);
	}
	close(p[0]);
	setsid();
	*report_fd = p[1];
	return 0;
}

static void report(int fd, char rc)
{
	if (fd >= 0) {
		(void)!write(fd, &rc, 1);
		close(fd);
	}
}

static int check_config(const char *path)
{
	struct fabric *f;
	struct ofc_error err = {0};
	char buf[1024];

	if (fabric_open(path, &f, &err) < 0) {
		ofc_error_str(&err, buf, sizeof(buf));
		fprintf(stderr, err.line ? "%s\n" : "ofcd: %s\n", buf);
		return ofc_error_exit_code(&err);
	}
	printf("%s: fabric %s, %u hosts, %u switches, %u rings, topology %s: ok\n", path, f->name,
	       f->nhosts, f->nswitches, f->nrings, f->topology.present ? f->topology.spec : "-");
	fabric_free(f);
	return 0;
}

/* The command line, parsed. */
struct args {
	struct ofcd_opts o;
	const char *devices[MAX_DEVICES];
	const char *allow[MAX_DEVICES];
	const char *share_exempt[MAX_SHARE_EXEMPT];
	const char *config, *sock, *ro, *state, *topo, *log_file, *pid_file;
	bool foreground, use_syslog, use_journal, check;
	bool have_gateway_uid;
	bool have_gateway_group; /* --gateway-group given: not the user's own */
	bool cluster_insecure;	 /* plain etcd:// allowed, said in so many words */
	const char *cluster_password_file;
};

/* ---- replicas on etcd ---------------------------------------------------- */
enum {
	OPT_CLUSTER = 0x3700,
	OPT_CLUSTER_TTL,
	OPT_CLUSTER_NAME,
	OPT_CLUSTER_PREFIX,
	OPT_ADVERTISE,
	OPT_CLUSTER_CACERT,
	OPT_CLUSTER_CERT,
	OPT_CLUSTER_KEY,
	OPT_CLUSTER_INSECURE,
	OPT_CLUSTER_USER,
	OPT_CLUSTER_PASSWORD_FILE,
};

/* Returns -1 to go on, else the exit status. */
static int parse_cluster_opt(int c, const char *arg, struct args *a)
{
	struct ofcd_opts *o = &a->o;
	const char *why;

	switch (c) {
	case OPT_CLUSTER:
		if (!(strncmp(arg, "etcd://", 7) == 0 && arg[7]) &&
		    !(strncmp(arg, "etcds://", 8) == 0 && arg[8]))
			return usage("--cluster '%s': expected etcds://HOST:PORT[,HOST:PORT...] "
				     "(TLS) or etcd://...",
				     arg);
		o->cluster = arg;
		break;
	case OPT_CLUSTER_TTL:
		if (parse_duration(arg, &o->cluster_ttl, &why) < 0 || o->cluster_ttl < 1 ||
		    o->cluster_ttl > 3600)
			return usage(
			    "--cluster-ttl '%s': expected a duration from 1s to 1h (etcd's "
			    "leases count whole seconds)",
			    arg);
		break;
	case OPT_CLUSTER_NAME:
		for (const char *p = arg; *p; p++)
			if (*p <= ' ' || *p == '"' || *p == '\\' || *p == 0x7f)
				return usage("--cluster-name '%s': printable, no space or quote",
					     arg);
		if (!*arg || strlen(arg) > 63)
			return usage("--cluster-name '%s': 1 to 63 characters", arg);
		o->cluster_name = arg;
		break;
	case OPT_CLUSTER_PREFIX:
		o->cluster_prefix = arg;
		break;
	case OPT_CLUSTER_CACERT:
		o->cluster_cacert = arg;
		break;
	case OPT_CLUSTER_CERT:
		o->cluster_cert = arg;
		break;
	case OPT_CLUSTER_KEY:
		o->cluster_key = arg;
		break;
	case OPT_CLUSTER_INSECURE:
		a->cluster_insecure = true;
		break;
	case OPT_CLUSTER_USER:
		if (!*arg || strlen(arg) > 255 || strpbrk(arg, "\"\\") ||
		    strspn(arg, " \t") == strlen(arg))
			return usage("--cluster-user '%s': 1 to 255 characters, no quote", arg);
		o->cluster_user = arg;
		break;
	case OPT_CLUSTER_PASSWORD_FILE:
		a->cluster_password_file = arg;
		break;
	default:
		if (strncmp(arg, "http://", 7) == 0 || strncmp(arg, "https://", 8) == 0)
			o->advertise_url = arg;
		else if (arg[0] == '/')
			o->advertise_socket = arg;
		else
			return usage("--advertise '%s': a socket's absolute path or an http(s):// "
				     "URL",
				     arg);
		break;
	}
	return -1;
}
/* ---- end of the replicas' options ---------------------------------------- */

/* ---- the network API's options ------------------------------------------ */
enum {
	OPT_GATEWAY_SOCKET = 0x3600,
	OPT_GATEWAY_UID,
	OPT_GATEWAY_GROUP,
	OPT_MUTATION_SHARE,
	OPT_MUTATION_SHARE_EXEMPT,
	OPT_LINK_HOLD_DOWN,
	OPT_FLAP_HALF_LIFE,
	OPT_FLAP_PENALTY,
	OPT_FLAP_SUPPRESS,
	OPT_FLAP_REUSE,
	OPT_FLAP_MAX_SUPPRESS,
	OPT_LP_SOLVER = 0x3800
};

/* The host links' damping (struct link_damp_opts). Returns -1 to go on,
 * else the exit status. */
static int parse_link_opt(int c, const char *arg, struct link_damp_opts *o)
{
	static const struct {
		int opt;
		const char *name;
		bool duration;
		size_t off;
	} rows[] = {
	    {OPT_LINK_HOLD_DOWN, "link-hold-down", true,
	     offsetof(struct link_damp_opts, hold_down_ms)},
	    {OPT_FLAP_HALF_LIFE, "flap-half-life", true,
	     offsetof(struct link_damp_opts, half_life_ms)},
	    {OPT_FLAP_PENALTY, "flap-penalty", false, offsetof(struct link_damp_opts, penalty)},
	    {OPT_FLAP_SUPPRESS, "flap-suppress", false, offsetof(struct link_damp_opts, suppress)},
	    {OPT_FLAP_REUSE, "flap-reuse", false, offsetof(struct link_damp_opts, reuse)},
	    {OPT_FLAP_MAX_SUPPRESS, "flap-max-suppress", true,
	     offsetof(struct link_damp_opts, max_suppress_ms)},
	};
	const char *why = NULL;
	char msg[160];
	double sec;
	uint32_t v;

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		if (rows[i].opt != c)
			continue;
		if (rows[i].duration
			? parse_duration(arg, &sec, &why) < 0 || sec < 0.001 || sec > 86400
			: parse_u32(arg, &v) < 0 || v < 1 || v > 1000000) {
			snprintf(msg, sizeof(msg), "--%s '%%.64s': expected %s", rows[i].name,
				 rows[i].duration ? "a duration from 1ms to 1 day"
						  : "a number from 1 to 1000000");
			return usage(msg, arg);
		}
		if (rows[i].duration)
			v = (uint32_t)(sec * 1000 + 0.5);
		*(uint32_t *)((char *)o + rows[i].off) = v;
	}
	return -1;
}

/* Returns -1 to go on, else the exit status. */
static int parse_net_opt(int c, const char *arg, struct args *a)
{
	struct ofcd_opts *o = &a->o;
	uint64_t v;

	if (c == OPT_GATEWAY_SOCKET) {
		o->gateway_socket_path = arg;
		return -1;
	}
	if (c == OPT_MUTATION_SHARE) {
		if (parse_u64(arg, &v) < 0 || v < 1 || v > OFCD_MAX_QUEUE)
			return usage("--mutation-share '%s': expected 1..64 (mutations one "
				     "tenant may have queued at once)",
				     arg);
		o->mutation_share = (uint32_t)v;
		return -1;
	}
	if (c == OPT_MUTATION_SHARE_EXEMPT) {
		if (!*arg || strlen(arg) > 256)
			return usage("--mutation-share-exempt '%.64s': expected a principal's "
				     "identity as the gateway's policy names it (cn:NAME)",
				     arg);
		if (o->nmutation_share_exempt == MAX_SHARE_EXEMPT)
			return usage("--mutation-share-exempt: at most %s", "8");
		a->share_exempt[o->nmutation_share_exempt++] = arg;
		o->mutation_share_exempt = a->share_exempt;
		return -1;
	}
	if (c == OPT_GATEWAY_GROUP) {
		struct group *g = getgrnam(arg);

		if (g)
			o->gateway_gid = g->gr_gid;
		else if (parse_u64(arg, &v) == 0 && v < UINT32_MAX)
			o->gateway_gid = (unsigned)v;
		else
			return usage("--gateway-group '%s': no such group (make install's "
				     "sysusers.d creates 'ofc-gwsock')",
				     arg);
		o->have_gateway_gid = true;
		a->have_gateway_group = true;
		return -1;
	}
	struct passwd *pw = getpwnam(arg);
	if (!pw && parse_u64(arg, &v) == 0 && v < UINT32_MAX) {
		o->gateway_uid = (unsigned)v;
		pw = getpwuid((uid_t)v);
	} else if (pw) {
		o->gateway_uid = pw->pw_uid;
	}
	if (!pw && !(parse_u64(arg, &v) == 0 && v < UINT32_MAX))
		return usage("--gateway-uid '%s': no such user (make install's sysusers.d "
			     "creates 'ofc-gateway')",
			     arg);
	/* The socket's group: --gateway-group's, else the user's own. */
	if (pw && !a->have_gateway_group) {
		o->have_gateway_gid = true;
		o->gateway_gid = pw->pw_gid;
	}
	a->have_gateway_uid = true;
	return -1;
}
/* ---- end of the network API's options ----------------------------------- */

/* The limits' options (sizes, counts, durations, the socket's mode) into
 * o; returns -1 to go on, else the exit status. */
static int parse_limit_opt(int c, const char *arg, struct ofcd_opts *o)
{
	const char *why;
	uint64_t v;
	char *end;

	switch (c) {
	case 'm':
		errno = 0;
		v = strtoull(arg, &end, 8);
		if (errno || !*arg || *end || v > 0777)
			return usage("--socket-mode '%s': expected an octal mode such as 0660",
				     arg);
		o->socket_mode = (unsigned)v;
		break;
	case 'F':
		if (parse_size(arg, &v, &why) < 0 || v < 64 || v > (1u << 30))
			return usage("--max-frame '%s': expected a size from 64 bytes to 1GiB",
				     arg);
		o->max_frame = (uint32_t)v;
		break;
	case 'C':
		if (parse_u64(arg, &v) < 0 || v < 1 || v > 65536)
			return usage("--max-clients '%s': expected 1..65536", arg);
		o->max_clients = (uint32_t)v;
		break;
	case 'U':
		if (parse_u64(arg, &v) < 0 || v < 1 || v > 65536)
			return usage("--max-clients-per-uid '%s': expected 1..65536", arg);
		o->max_clients_per_uid = (uint32_t)v;
		break;
	case 'B':
		if (parse_size(arg, &v, &why) < 0 || v < (1u << 20) || v > (64ull << 30))
			return usage("--max-buffer-per-uid '%s': expected a size from 1MiB "
				     "to 64GiB",
				     arg);
		o->max_buffer_per_uid = v;
		break;
	case 'Q':
		if (parse_size(arg, &v, &why) < 0 || v < (1u << 20))
			return usage("--max-request-memory '%s': expected a size of 1MiB or "
				     "more",
				     arg);
		o->max_request_memory = v;
		break;
	case 'q':
		if (parse_size(arg, &v, &why) < 0 || v < (1u << 20))
			return usage("--ro-max-request-memory '%s': expected a size of 1MiB "
				     "or more",
				     arg);
		o->ro_max_request_memory = v;
		break;
	case 'x':
		if (parse_duration(arg, &o->ro_max_request_time, &why) < 0 ||
		    o->ro_max_request_time < 0 || o->ro_max_request_time > 86400)
			return usage("--ro-max-request-time '%s': expected 0 (as long as "
				     "--max-request-time) or a duration of at most 1 day",
				     arg);
		if (o->ro_max_request_time == 0)
			o->ro_max_request_time = -1; /* none of its own */
		break;
	case 'R':
		if (parse_size(arg, &v, &why) < 0 || v < 64 || v > (1u << 30))
			return usage("--ro-max-frame '%s': expected a size from 64 bytes to 1GiB",
				     arg);
		o->max_ro_frame = (uint32_t)v;
		break;
	case 'X':
		if (parse_duration(arg, &o->max_request_time, &why) < 0 ||
		    o->max_request_time < 0 || o->max_request_time > 86400)
			return usage("--max-request-time '%s': expected 0 (none) or a "
				     "duration of at most 1 day",
				     arg);
		if (o->max_request_time == 0)
			o->max_request_time = -1; /* none */
		break;
	case 'T':
		if (parse_duration(arg, &o->client_timeout, &why) < 0 || o->client_timeout < 0.1 ||
		    o->client_timeout > 86400)
			return usage("--client-timeout '%s': expected a duration from 100ms "
				     "to 1 day",
				     arg);
		break;
	case 'P':
		if (parse_duration(arg, &o->probe_interval, &why) < 0 ||
		    (o->probe_interval > 0 && o->probe_interval < 0.1) || o->probe_interval > 86400)
			return usage("--probe-interval '%s': expected 0 or a duration from "
				     "100ms to 1 day",
				     arg);
		break;
	}
	return -1;
}

/* --admin-group: a group's name or number; returns -1 to go on, else the
 * exit status. */
static int parse_admin_group(const char *arg, struct ofcd_opts *o)
{
	struct group *g = getgrnam(arg);
	uint64_t v;

	if (g) {
		o->admin_gid = g->gr_gid;
	} else if (parse_u64(arg, &v) == 0 && v < UINT32_MAX) {
		o->admin_gid = (unsigned)v;
	} else {
		return usage("--admin-group '%s': no such group (create it, as make install's "
			     "sysusers.d does for 'ofc'; or leave the option out: then only root "
			     "may change the fabric)",
			     arg);
	}
	o->have_admin_group = true;
	o->admin_group = arg;
	return -1;
}

/* ofcd's options: the short letters and OPT_* name the cases of
 * parse_args and its helpers. */
static const struct option ofcd_options[] = {
    {"config", required_argument, NULL, 'c'},
    {"socket", required_argument, NULL, 's'},
    {"ro-socket", required_argument, NULL, 'r'},
    {"state-dir", required_argument, NULL, 'S'},
    {"device", required_argument, NULL, 'D'},
    {"credentials-dir", required_argument, NULL, 'K'},
    {"topology-dir", required_argument, NULL, 'G'},
    {"ro-max-request-memory", required_argument, NULL, 'q'},
    {"ro-max-request-time", required_argument, NULL, 'x'},
    {"allow-device", required_argument, NULL, 'A'},
    {"foreground", no_argument, NULL, 'f'},
    {"syslog", no_argument, NULL, 'y'},
    {"journal", no_argument, NULL, 'J'},
    {"log-file", required_argument, NULL, 'L'},
    {"pid-file", required_argument, NULL, 'I'},
    {"admin-group", required_argument, NULL, 'g'},
    {"socket-mode", required_argument, NULL, 'm'},
    {"max-frame", required_argument, NULL, 'F'},
    {"max-clients", required_argument, NULL, 'C'},
    {"max-clients-per-uid", required_argument, NULL, 'U'},
    {"max-buffer-per-uid", required_argument, NULL, 'B'},
    {"max-request-memory", required_argument, NULL, 'Q'},
    {"max-request-time", required_argument, NULL, 'X'},
    {"ro-max-frame", required_argument, NULL, 'R'},
    {"client-timeout", required_argument, NULL, 'T'},
    {"probe-interval", required_argument, NULL, 'P'},
    {"log-level", required_argument, NULL, 'l'},
    {"check", no_argument, NULL, 'k'},
    {"lp-solver", required_argument, NULL, OPT_LP_SOLVER},
    /* The network API (parse_net_opt). */
    {"gateway-socket", required_argument, NULL, OPT_GATEWAY_SOCKET},
    {"gateway-uid", required_argument, NULL, OPT_GATEWAY_UID},
    {"gateway-group", required_argument, NULL, OPT_GATEWAY_GROUP},
    {"mutation-share", required_argument, NULL, OPT_MUTATION_SHARE},
    {"mutation-share-exempt", required_argument, NULL, OPT_MUTATION_SHARE_EXEMPT},
    {"link-hold-down", required_argument, NULL, OPT_LINK_HOLD_DOWN},
    {"flap-half-life", required_argument, NULL, OPT_FLAP_HALF_LIFE},
    {"flap-penalty", required_argument, NULL, OPT_FLAP_PENALTY},
    {"flap-suppress", required_argument, NULL, OPT_FLAP_SUPPRESS},
    {"flap-reuse", required_argument, NULL, OPT_FLAP_REUSE},
    {"flap-max-suppress", required_argument, NULL, OPT_FLAP_MAX_SUPPRESS},
    /* Replicas on etcd (parse_cluster_opt). */
    {"cluster", required_argument, NULL, OPT_CLUSTER},
    {"cluster-ttl", required_argument, NULL, OPT_CLUSTER_TTL},
    {"cluster-name", required_argument, NULL, OPT_CLUSTER_NAME},
    {"cluster-prefix", required_argument, NULL, OPT_CLUSTER_PREFIX},
    {"advertise", required_argument, NULL, OPT_ADVERTISE},
    {"cluster-cacert", required_argument, NULL, OPT_CLUSTER_CACERT},
    {"cluster-cert", required_argument, NULL, OPT_CLUSTER_CERT},
    {"cluster-key", required_argument, NULL, OPT_CLUSTER_KEY},
    {"cluster-insecure", no_argument, NULL, OPT_CLUSTER_INSECURE},
    {"cluster-user", required_argument, NULL, OPT_CLUSTER_USER},
    {"cluster-password-file", required_argument, NULL, OPT_CLUSTER_PASSWORD_FILE},
    {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, 'V'},
    {0},
};

/* One of etcd's TLS files: a regular file this user can read; the key
 * also owned by root or this user and unreadable by others (whoever holds
 * it may write the store, which is to rewire the fabric). Its contents are
 * libcurl's to read, and no message says more than its path. */
static int check_tls_file(const char *option, const char *path, bool key)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);

	if (fd < 0 || fstat(fd, &st) != 0) {
		fprintf(stderr, "ofcd: %s %s: %s\n", option, path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return 2;
	}
	close(fd);
	if (!S_ISREG(st.st_mode)) {
		fprintf(stderr, "ofcd: %s %s: not a regular file\n", option, path);
		return 2;
	}
	if (key && ((st.st_uid != 0 && st.st_uid != geteuid()) || (st.st_mode & 007))) {
		fprintf(stderr,
			"ofcd: %s %s: a private key must be owned by root or this user and not "
			"readable by others (chmod 600)\n",
			option, path);
		return 2;
	}
	return -1;
}

/* --cluster-password-file: a regular file as private as a key, its one
 * line (at most 255 bytes, no control byte) into *out. The password is
 * never part of a message. Returns -1 to go on, else the exit status. */
static int read_password_file(const char *path, char **out)
{
	char buf[258];
	ssize_t n;
	int rc = check_tls_file("--cluster-password-file", path, true);
	int fd = rc >= 0 ? -1 : open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);

	if (rc >= 0)
		return rc;
	n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
	if (fd >= 0)
		close(fd);
	if (n < 0) {
		fprintf(stderr, "ofcd: --cluster-password-file %s: %s\n", path, strerror(errno));
		return 2;
	}
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
		n--;
	buf[n] = 0;
	bool bad = n == 0 || n > 255;

	for (ssize_t i = 0; i < n; i++)
		bad |= (unsigned char)buf[i] < ' ' || buf[i] == 0x7f;
	if (bad) {
		explicit_bzero(buf, sizeof(buf));
		fprintf(stderr,
			"ofcd: --cluster-password-file %s: one line of 1 to 255 bytes, no "
			"control byte\n",
			path);
		return 2;
	}
	*out = xstrdup(buf);
	explicit_bzero(buf, sizeof(buf));
	return -1;
}

/* etcds:// with all three files, each checked; the files without
 * etcds://; etcd's user with its password file, under TLS alone. Returns
 * -1 to go on, else the exit status. */
static int check_cluster_tls(struct args *a)
{
	struct ofcd_opts *o = &a->o;
	bool any = o->cluster_cacert || o->cluster_cert || o->cluster_key;
	bool tls = o->cluster && strncmp(o->cluster, "etcds://", 8) == 0;
	int rc;

	if (any && !tls)
		return usage("--cluster-cacert, --cluster-cert and --cluster-key go with "
			     "--cluster etcds://...%s",
			     "");
	/* Whoever can write the store rewires the fabric: an etcd anyone who
	 * reaches it may write is run only when the operator says so. */
	if (o->cluster && !tls && !a->cluster_insecure) {
		fprintf(stderr,
			"ofcd: --cluster %s: etcd without TLS and client certificates lets anyone "
			"who reaches it rewire the fabric; use etcds:// with --cluster-cacert, "
			"--cluster-cert and --cluster-key, or say --cluster-insecure\n",
			o->cluster);
		return 2;
	}
	if (a->cluster_insecure && !o->cluster)
		return usage("--cluster-insecure goes with --cluster etcd://...%s", "");
	if (!tls && (o->cluster_user || a->cluster_password_file))
		return usage("--cluster-user and --cluster-password-file go with --cluster "
			     "etcds://... (a password is sent over TLS alone)%s",
			     "");
	if (!tls)
		return -1;
	if (!(o->cluster_cacert && o->cluster_cert && o->cluster_key))
		return usage("--cluster %s: TLS to etcd needs --cluster-cacert, --cluster-cert "
			     "and --cluster-key",
			     o->cluster);
	if ((rc = check_tls_file("--cluster-cacert", o->cluster_cacert, false)) >= 0 ||
	    (rc = check_tls_file("--cluster-cert", o->cluster_cert, false)) >= 0 ||
	    (rc = check_tls_file("--cluster-key", o->cluster_key, true)) >= 0)
		return rc;
	if (!o->cluster_user != !a->cluster_password_file)
		return usage("--cluster-user and --cluster-password-file go together%s", "");
	if (a->cluster_password_file)
		return read_password_file(a->cluster_password_file, &o->cluster_password);
	return -1;
}

/* What the options ask together, once they are read: -1 to go on, else
 * the exit status. */
static int check_args(struct args *a)
{
	const struct ofcd_opts *o = &a->o;

	if (!a->config)
		return usage("missing --config FILE%s", "");
	if (a->check)
		return -1;
	if (!a->sock && !getenv("LISTEN_FDS"))
		return usage("missing --socket PATH%s", "");
	if (!!o->gateway_socket_path != a->have_gateway_uid)
		return usage("--gateway-socket and --gateway-uid go together%s", "");
	if (a->have_gateway_group && !o->gateway_socket_path)
		return usage("--gateway-group goes with --gateway-socket and --gateway-uid%s", "");
	if (a->log_file && (a->use_syslog || a->use_journal))
		return usage("--log-file %s: choose one of --log-file, --syslog and --journal",
			     a->log_file);
	return check_cluster_tls(a);
}

/* Options into args; returns -1 to go on, else the exit status. */
static int parse_args(int argc, char **argv, struct args *a)
{
	static const char *const levels[] = {"err", "warning", "notice", "info", "debug"};
	struct ofcd_opts *o = &a->o;
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", ofcd_options, NULL)) != -1) {
		if (c >= OPT_LINK_HOLD_DOWN && c <= OPT_FLAP_MAX_SUPPRESS) {
			if ((c = parse_link_opt(c, optarg, &a->o.link_damp)) >= 0)
				return c;
			continue;
		}
		switch (c) {
		case 'c':
			a->config = optarg;
			break;
		case 's':
			a->sock = optarg;
			break;
		case 'r':
			a->ro = optarg;
			break;
		case 'S':
			a->state = optarg;
			break;
		case 'D':
			if (!strchr(optarg, '='))
				return usage("--device '%s': expected NAME=HOST:PORT", optarg);
			if (o->noverrides == MAX_DEVICES)
				return usage("too many --device options%s", "");
			a->devices[o->noverrides++] = optarg;
			break;
		case 'K':
			o->credentials_dir = optarg;
			break;
		case 'G':
			a->topo = optarg;
			break;
		case 'A':
			if (o->nallow_devices == MAX_DEVICES)
				return usage("too many --allow-device options%s", "");
			a->allow[o->nallow_devices++] = optarg;
			break;
		case 'f':
			a->foreground = true;
			break;
		case 'y':
			a->use_syslog = true;
			break;
		case 'J':
			a->use_journal = true;
			break;
		case 'L':
			a->log_file = optarg;
			break;
		case 'I':
			a->pid_file = optarg;
			break;
		case 'g':
			if ((c = parse_admin_group(optarg, o)) >= 0)
				return c;
			break;
		case 'm':
		case 'F':
		case 'C':
		case 'U':
		case 'B':
		case 'Q':
		case 'q':
		case 'x':
		case 'R':
		case 'X':
		case 'T':
		case 'P':
			if ((c = parse_limit_opt(c, optarg, &a->o)) >= 0)
				return c;
			break;
		case OPT_LP_SOLVER: {
			struct ofc_error e = {0};

			if (lp_solver_parse(optarg, &o->lp_solver) < 0)
				return usage("--lp-solver '%s': expected lpsolve or clp", optarg);
			if (!lp_solver_available(o->lp_solver, &e)) {
				fprintf(stderr, "ofcd: --lp-solver %s: %s\n", optarg, e.msg);
				return 1;
			}
			break;
		}
		case 'l':
			o->log_level = 0;
			for (size_t i = 0; i < ARRAY_SIZE(levels); i++)
				if (strcmp(optarg, levels[i]) == 0)
					o->log_level = OFCD_LOG_ERR + (int)i;
			if (!o->log_level)
				return usage(
				    "--log-level '%s': err, warning, notice, info or debug",
				    optarg);
			break;
		case 'k':
			a->check = true;
			break;
		case OPT_GATEWAY_SOCKET:
		case OPT_GATEWAY_UID:
		case OPT_GATEWAY_GROUP:
		case OPT_MUTATION_SHARE:
		case OPT_MUTATION_SHARE_EXEMPT:
			if ((c = parse_net_opt(c, optarg, a)) >= 0)
				return c;
			break;
		case OPT_CLUSTER:
		case OPT_CLUSTER_TTL:
		case OPT_CLUSTER_NAME:
		case OPT_CLUSTER_PREFIX:
		case OPT_ADVERTISE:
		case OPT_CLUSTER_CACERT:
		case OPT_CLUSTER_CERT:
		case OPT_CLUSTER_KEY:
		case OPT_CLUSTER_INSECURE:
		case OPT_CLUSTER_USER:
		case OPT_CLUSTER_PASSWORD_FILE:
			if ((c = parse_cluster_opt(c, optarg, a)) >= 0)
				return c;
			break;
		case 'h':
			printf("%s%s", usage_line, help_text);
			return 0;
		case 'V':
			printf("ofcd %s\n", OFC_VERSION);
			return 0;
		default:
			if (optopt)
				return usage("unknown option or missing value: %s",
					     argv[optind - 1]);
			return usage("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return usage("unexpected argument '%s'", argv[optind]);
	return check_args(a);
}

/* A file ofcd will create (--pid-file, --log-file) needs a directory
 * that exists: said before anything is started, with the option. */
static int check_dir_of(const char *path, const char *option)
{
	const char *slash = strrchr(path, '/');
	char *dir =
	    slash ? xstrndup(path, slash == path ? 1 : (size_t)(slash - path)) : xstrdup(".");
	struct stat st;
	int rc = -1;

	if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
		fprintf(stderr,
			"ofcd: %s %s: no directory %s (create it, or give %s a path in a "
			"directory that exists)\n",
			option, path, dir, option);
		rc = 2;
	}
	free(dir);
	return rc;
}

/* Where the lines go. Returns -1 to go on, else the exit status. */
static int open_log(const struct args *a, struct logger *lg)
{
	lg->fd = -1;
	lg->use_journal =
	    !a->log_file &&
	    (a->use_journal || (a->foreground && !a->use_syslog && stderr_is_journal()));
	lg->use_syslog = !a->log_file && !lg->use_journal && (a->use_syslog || !a->foreground);
	lg->notify = getenv("NOTIFY_SOCKET") != NULL;
	if (!a->log_file)
		return -1;
	if (check_dir_of(a->log_file, "--log-file") >= 0)
		return 2;
	lg->fd = open(a->log_file, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOCTTY, 0640);
	if (lg->fd < 0) {
		fprintf(stderr, "ofcd: --log-file %s: %s\n", a->log_file, strerror(errno));
		return 2;
	}
	return -1;
}

/* Open the daemon (detached unless --foreground, the parent waiting for
 * the verdict on the start-up), serve until stopped. The pid file is
 * written once the daemon serves (by the process that serves), before the
 * parent is told, so whoever waited for the parent finds it. */
static int serve(struct ofcd_opts *o, bool foreground, const char *pid_file, struct logger *lg)
{
	struct ofc_error err = {0};
	struct ofcd *d;
	int report_fd = -1, rc = 0;
	char buf[1024];

	signal(SIGPIPE, SIG_IGN);
	if (!foreground && daemonize(&report_fd) < 0) {
		fprintf(stderr, "ofcd: cannot daemonize: %s\n", strerror(errno));
		return 1;
	}
	if (ofcd_open(o, &d, &err) < 0) {
		ofc_error_str(&err, buf, sizeof(buf));
		fprintf(stderr, err.line ? "%s\n" : "ofcd: %s\n", buf);
		/* The log tells the same, for whoever reads only the log. */
		if (lg->fd >= 0) {
			char line[1100];

			snprintf(line, sizeof(line), "cannot start: %s", buf);
			log_line(lg, OFCD_LOG_ERR, line);
		}
		rc = ofc_error_exit_code(&err) ? ofc_error_exit_code(&err) : 1;
		report(report_fd, (char)rc);
		return rc;
	}
	/* A daemon never detaches into a log nobody can read: syslog needs
	 * /dev/log (_PATH_LOG), which containers and minimal machines lack,
	 * and syslog(3) then drops every line without a word. Said after the
	 * options and the config are checked, so that their errors come
	 * first. */
	if (lg->use_syslog && access("/dev/log", F_OK) != 0) {
		fprintf(stderr,
			"ofcd: logs would go to syslog, and this machine has none (/dev/log: %s): "
			"pass --log-file FILE, or --foreground to log to stderr\n",
			strerror(errno));
		ofcd_close(d);
		report(report_fd, 2);
		return 2;
	}
	if (pid_file) {
		char pid[24];
		int n = snprintf(pid, sizeof(pid), "%d\n", (int)getpid());

		if (atomic_write(pid_file, pid, (size_t)n, &err) < 0) {
			ofc_error_str(&err, buf, sizeof(buf));
			fprintf(stderr, "ofcd: --pid-file %s: %s\n", pid_file, buf);
			ofcd_close(d);
			report(report_fd, 1);
			return 1;
		}
	}
	if (!foreground) {
		int null = open("/dev/null", O_RDWR);

		if (chdir("/") != 0 || null < 0) {
			rc = 1;
		} else {
			dup2(null, STDIN_FILENO);
			dup2(null, STDOUT_FILENO);
			dup2(null, STDERR_FILENO);
			if (null > STDERR_FILENO)
				close(null);
		}
		report(report_fd, (char)rc);
	}
	if (rc == 0 && ofcd_run(d, &err) < 0) {
		log_line(lg, OFCD_LOG_ERR, ofc_error_str(&err, buf, sizeof(buf)));
		rc = 1;
	}
	ofcd_close(d);
	if (pid_file)
		unlink(pid_file);
	return rc;
}

int main(int argc, char **argv)
{
	struct args a = {.o = {.probe_interval = 10, .log_level = OFCD_LOG_NOTICE}};
	struct logger lg;
	int rc = parse_args(argc, argv, &a);

	if (rc >= 0)
		return rc;
	if (a.check)
		return check_config(a.config);
	if (a.pid_file && (rc = check_dir_of(a.pid_file, "--pid-file")) >= 0)
		return rc;
	if ((rc = open_log(&a, &lg)) >= 0)
		return rc;

	char *aconfig = absolute(a.config), *asock = absolute(a.sock), *aro = absolute(a.ro),
	     *astate = absolute(a.state), *acred = absolute(a.o.credentials_dir),
	     *atopo = absolute(a.topo), *apid = absolute(a.pid_file);
	char *acacert = absolute(a.o.cluster_cacert), *acert = absolute(a.o.cluster_cert),
	     *akey = absolute(a.o.cluster_key);
	a.o.config_path = aconfig;
	a.o.socket_path = asock;
	a.o.ro_socket_path = aro;
	a.o.state_dir = astate;
	a.o.overrides = a.devices;
	a.o.allow_devices = a.allow;
	a.o.credentials_dir = acred;
	a.o.topology_dir = atopo;
	a.o.cluster_cacert = acacert;
	a.o.cluster_cert = acert;
	a.o.cluster_key = akey;
	a.o.signals = true;
	/* Socket activation: the first fd passed is the main socket, a second
	 * the read-only one (systemd's ofcd.socket). */
	int nfds = sd_listen_fds(1);

	if (nfds > 0) {
		a.o.inherit_fds = true;
		a.o.main_fd = SD_LISTEN_FDS_START;
		a.o.ro_fd = nfds > 1 ? SD_LISTEN_FDS_START + 1 : -1;
		if (!a.o.socket_path)
			a.o.socket_path = "(socket from systemd)";
	}
	a.o.log = log_line;
	a.o.log_ctx = &lg;
	a.o.notify = notify_state;
	if (lg.use_syslog)
		openlog("ofcd", LOG_PID, LOG_DAEMON);
	rc = serve(&a.o, a.foreground, apid, &lg);
	free(apid);
	if (lg.fd >= 0)
		close(lg.fd);
	free(aconfig);
	free(asock);
	free(aro);
	free(astate);
	free(acred);
	free(atopo);
	free(acacert);
	free(acert);
	free(akey);
	if (lg.use_syslog)
		closelog();
	return rc;
}
