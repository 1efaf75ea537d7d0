/* ofcd's command line (options.h): the table of its options, the parsers
 * of the rows no generic parser serves (users and groups, device
 * addresses, etcd's URL, names), what the options ask together, and the
 * help written from the table. Nothing here prints: errors go back in
 * struct ofc_error and ofcd_main.c says them. */
#include "controller/ofcd/options.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <math.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define A(field) offsetof(struct ofcd_args, field)

/* ---- the rows' own parsers -------------------------------------------------- */

static int p_device(const struct opt *row, const char *arg, void *base, struct ofc_error *err)
{
	struct ofcd_args *a = base;

	if (!strchr(arg, '='))
		return opt_refuse(row, arg, err, "expected NAME=HOST:PORT");
	if (a->o.noverrides == OFCD_ARGS_MAX_DEVICES)
		return ofc_error_set(err, OFC_E_USAGE, "too many --device options");
	a->devices[a->o.noverrides++] = arg;
	a->o.overrides = a->devices;
	return 0;
}

static int p_allow(const struct opt *row, const char *arg, void *base, struct ofc_error *err)
{
	struct ofcd_args *a = base;

	(void)row;
	if (a->o.nallow_devices == OFCD_ARGS_MAX_DEVICES)
		return ofc_error_set(err, OFC_E_USAGE, "too many --allow-device options");
	a->allow[a->o.nallow_devices++] = arg;
	a->o.allow_devices = a->allow;
	return 0;
}

/* A group's name or number into *gid; false when there is no such group. */
static bool group_id(const char *arg, unsigned *gid)
{
	struct group *g = getgrnam(arg);
	uint64_t v;

	if (g)
		*gid = g->gr_gid;
	else if (parse_u64(arg, &v) == 0 && v < UINT32_MAX)
		*gid = (unsigned)v;
	else
		return false;
	return true;
}

static int p_admin_group(const struct opt *row, const char *arg, void *base, struct ofc_error *err)
{
	struct ofcd_opts *o = &((struct ofcd_args *)base)->o;

	if (!group_id(arg, &o->admin_gid))
		return opt_refuse(row, arg, err,
				  "no such group (create it, as make install's sysusers.d does for "
				  "'ofc'; or leave the option out: then only root may change the "
				  "fabric)");
	o->have_admin_group = true;
	o->admin_group = arg;
	return 0;
}

static int p_lp_solver(const struct opt *row, const char *arg, void *base, struct ofc_error *err)
{
	struct ofcd_opts *o = &((struct ofcd_args *)base)->o;
	struct ofc_error e = {0};

	if (lp_solver_parse(arg, &o->lp_solver) < 0)
		return opt_refuse(row, arg, err, "expected lpsolve or clp");
	if (!lp_solver_available(o->lp_solver, &e))
		return ofc_error_set(err, OFC_E_RUNTIME, "--lp-solver %s: %s", arg, e.msg);
	return 0;
}

static int p_gateway_group(const struct opt *row, const char *arg, void *base,
			   struct ofc_error *err)
{
	struct ofcd_args *a = base;

	if (!group_id(arg, &a->o.gateway_gid))
		return opt_refuse(row, arg, err,
				  "no such group (make install's sysusers.d creates 'ofc-gwsock')");
	a->o.have_gateway_gid = true;
	a->have_gateway_group = true;
	return 0;
}

static int p_gateway_uid(const struct opt *row, const char *arg, void *base, struct ofc_error *err)
{
	struct ofcd_args *a = base;
	struct ofcd_opts *o = &a->o;
	struct passwd *pw = getpwnam(arg);
	uint64_t v;
	bool number = parse_u64(arg, &v) == 0 && v < UINT32_MAX;

	if (!pw && number) {
		o->gateway_uid = (unsigned)v;
		pw = getpwuid((uid_t)v);
	} else if (pw) {
		o->gateway_uid = pw->pw_uid;
	}
	if (!pw && !number)
		return opt_refuse(row, arg, err,
				  "no such user (make install's sysusers.d creates 'ofc-gateway')");
	/* The socket's group: --gateway-group's, else the user's own. */
	if (pw && !a->have_gateway_group) {
		o->have_gateway_gid = true;
		o->gateway_gid = pw->pw_gid;
	}
	a->have_gateway_uid = true;
	return 0;
}

static int p_share_exempt(const struct opt *row, const char *arg, void *base, struct ofc_error *err)
{
	struct ofcd_args *a = base;

	if (!*arg || strlen(arg) > 256)
		return opt_refuse(row, arg, err,
				  "expected a principal's identity as the gateway's policy names "
				  "it (cn:NAME)");
	if (a->o.nmutation_share_exempt == OFCD_ARGS_MAX_SHARE_EXEMPT)
		return ofc_error_set(err, OFC_E_USAGE, "--mutation-share-exempt: at most %d",
				     OFCD_ARGS_MAX_SHARE_EXEMPT);
	a->share_exempt[a->o.nmutation_share_exempt++] = arg;
	a->o.mutation_share_exempt = a->share_exempt;
	return 0;
}

static int p_cluster(const struct opt *row, const char *arg, void *base, struct ofc_error *err)
{
	if (!(strncmp(arg, "etcd://", 7) == 0 && arg[7]) &&
	    !(strncmp(arg, "etcds://", 8) == 0 && arg[8]))
		return opt_refuse(row, arg, err,
				  "expected etcds://HOST:PORT[,HOST:PORT...] (TLS) or etcd://...");
	((struct ofcd_args *)base)->o.cluster = arg;
	return 0;
}

static int p_cluster_name(const struct opt *row, const char *arg, void *base, struct ofc_error *err)
{
	for (const char *p = arg; *p; p++)
		if (*p <= ' ' || *p == '"' || *p == '\\' || *p == 0x7f)
			return opt_refuse(row, arg, err, "printable, no space or quote");
	if (!*arg || strlen(arg) > 63)
		return opt_refuse(row, arg, err, "1 to 63 characters");
	((struct ofcd_args *)base)->o.cluster_name = arg;
	return 0;
}

static int p_cluster_user(const struct opt *row, const char *arg, void *base, struct ofc_error *err)
{
	if (!*arg || strlen(arg) > 255 || strpbrk(arg, "\"\\") || strspn(arg, " \t") == strlen(arg))
		return opt_refuse(row, arg, err, "1 to 255 characters, no quote");
	((struct ofcd_args *)base)->o.cluster_user = arg;
	return 0;
}

static int p_advertise(const struct opt *row, const char *arg, void *base, struct ofc_error *err)
{
	struct ofcd_opts *o = &((struct ofcd_args *)base)->o;

	if (strncmp(arg, "http://", 7) == 0 || strncmp(arg, "https://", 8) == 0)
		o->advertise_url = arg;
	else if (arg[0] == '/')
		o->advertise_socket = arg;
	else
		return opt_refuse(row, arg, err, "a socket's absolute path or an http(s):// URL");
	return 0;
}

/* ---- the table -------------------------------------------------------------- */

static const struct opt_choice log_levels[] = {
    {"err", OFCD_LOG_ERR},   {"warning", OFCD_LOG_WARNING}, {"notice", OFCD_LOG_NOTICE},
    {"info", OFCD_LOG_INFO}, {"debug", OFCD_LOG_DEBUG},	    {NULL},
};

#define DAY	     86400.0
#define DUR_100MS_1D "expected a duration from 100ms to 1 day"
#define DUR_1MS_1D   "expected a duration from 1ms to 1 day"
#define N_1_1M	     "expected a number from 1 to 1000000"

const struct opt ofcd_option_table[] = {
    {"config", opt_str, A(config), "FILE",
     "the fabric config (YAML); SIGHUP reloads and applies it", .flags = OPT_REQUIRED},
    {"socket", opt_str, A(sock), "PATH",
     "the main control socket: reads for anyone who can open it, mutations for root and "
     "--admin-group",
     .flags = OPT_REQUIRED},
    {"ro-socket", opt_str, A(ro), "PATH", "a read-only socket (mode 0666) for everyone"},
    {"state-dir", opt_str, A(state), "DIR",
     "state and journal (default $OFC_STATE_DIR, else /var/lib/ofc)"},
    {"device", p_device, 0, "NAME=HOST:PORT", "talk to device NAME at another address (repeatable)",
     .flags = OPT_REPEAT},
    {"credentials-dir", opt_str, A(o.credentials_dir), "DIR",
     "credentials files only from here (default /etc/ofc/credentials)"},
    {"topology-dir", opt_str, A(topo), "DIR",
     "edge-list files (edges:FILE) that requests and configs sent to ofcd may name, only from "
     "here (a directory of root's, closed to writes by others); without it they may name none"},
    {"allow-device", p_allow, 0, "ADDR",
     "HOST:PORT or CIDR:PORT a config sent to ofcd may name (repeatable; --config's own "
     "addresses are always allowed)",
     .flags = OPT_REPEAT},
    {"foreground", NULL, A(foreground), NULL, "stay in the foreground and log to stderr"},
    {"syslog", NULL, A(use_syslog), NULL, "log to syslog even in the foreground"},
    {"journal", NULL, A(use_journal), NULL,
     "log to the systemd journal with each line's priority (the default when stderr is the "
     "journal: JOURNAL_STREAM)"},
    {"log-file", opt_str, A(log_file), "FILE",
     "append log lines to FILE instead (foreground or not; where there is no syslog, /dev/log, "
     "ofcd detaches only with this or --journal)"},
    {"pid-file", opt_str, A(pid_file), "FILE",
     "write ofcd's pid to FILE once it serves; removed at the stop"},
    {"admin-group", p_admin_group, 0, "NAME",
     "members may mutate; the main socket gets this group"},
    {"socket-mode", opt_octal, A(o.socket_mode), "MODE", "of the main socket, octal (default 0660)",
     0, 0777, "expected an octal mode such as 0660"},
    {"max-frame", opt_size32, A(o.max_frame), "SIZE", "largest frame either way (default 16MiB)",
     64, 1u << 30, "expected a size from 64 bytes to 1GiB"},
    {"ro-max-frame", opt_size32, A(o.max_ro_frame), "SIZE",
     "largest request on the read-only socket (default 64KiB)", 64, 1u << 30,
     "expected a size from 64 bytes to 1GiB"},
    {"max-clients", opt_u32, A(o.max_clients), "N",
     "connections at once (default 1024); the file descriptor limit (LimitNOFILE) should be N + "
     "devices + 64 or more",
     1, 65536, "expected 1..65536"},
    {"max-clients-per-uid", opt_u32, A(o.max_clients_per_uid), "N",
     "connections of one user at once (default 64)", 1, 65536, "expected 1..65536"},
    {"max-buffer-per-uid", opt_size, A(o.max_buffer_per_uid), "SIZE",
     "requests and unread replies ofcd holds for one user (default 4 x --max-frame; at least "
     "--max-frame + 1MiB)",
     1u << 20, 64.0 * (1u << 30), "expected a size from 1MiB to 64GiB"},
    {"max-request-memory", opt_size, A(o.max_request_memory), "SIZE",
     "memory one GetSchedule, the state's schedule or a failure's re-plan may hold; a larger "
     "one is refused with its estimate (default: a quarter of the machine's memory)",
     1u << 20, INFINITY, "expected a size of 1MiB or more"},
    {"max-request-time", opt_seconds_none, A(o.max_request_time), "DUR",
     "time one GetSchedule may take; past it the request fails with the phase it reached "
     "(default 60s; 0: none)",
     0, DAY, "expected 0 (none) or a duration of at most 1 day"},
    {"ro-max-request-memory", opt_size, A(o.ro_max_request_memory), "SIZE",
     "--max-request-memory for requests on the read-only socket (default: an eighth of the "
     "machine's memory; never more than --max-request-memory)",
     1u << 20, INFINITY, "expected a size of 1MiB or more"},
    {"ro-max-request-time", opt_seconds_none, A(o.ro_max_request_time), "DUR",
     "--max-request-time for requests on the read-only socket (default 10s; 0: as long as "
     "--max-request-time; never more than it)",
     0, DAY, "expected 0 (as long as --max-request-time) or a duration of at most 1 day"},
    {"client-timeout", opt_seconds, A(o.client_timeout), "DUR",
     "a half-sent request or unread reply may wait (default 30s)", 0.1, DAY, DUR_100MS_1D},
    {"lp-solver", p_lp_solver, 0, "lpsolve|clp",
     "lpsolve or clp: the LP solver of the schedules ofcd computes for a config without "
     "lp_solver (default: each LP's own, docs/ARCHITECTURE.md \"LP solvers\")"},
    {"probe-interval", opt_seconds_or_0, A(o.probe_interval), "DUR",
     "read every device once at start (logged) and then this often when idle, and when a switch "
     "notifies a port's power alarm (default 10s; 0: never, not at start)",
     0.1, DAY, "expected 0 or a duration from 100ms to 1 day"},
    {"log-level", opt_choice, A(o.log_level), "LEVEL",
     "err, warning, notice (default), info or debug",
     .expect = "err, warning, notice, info or "
	       "debug",
     .choices = log_levels},
    {"check", NULL, A(check), NULL, "validate the config, print what would be served, exit"},
    {"gateway-socket", opt_str, A(o.gateway_socket_path), "PATH",
     "a socket for ofc-gateway, the network API (docs/control.md): only --gateway-uid may "
     "connect, and ofcd authorises each request by the principal the gateway names"},
    {"gateway-uid", p_gateway_uid, 0, "USER", "the gateway's user (name or number)",
     .under = "gateway-socket", .flags = OPT_REQUIRED},
    {"gateway-group", p_gateway_group, 0, "GROUP",
     "the gateway socket's group when ofcd is not root (mode 0660; ofcd's user must be a "
     "member): a group that grants nothing else (default: the gateway user's own)",
     .under = "gateway-socket"},
    {"mutation-share", opt_u32, A(o.mutation_share), "N",
     "mutations one tenant of the gateway may have queued at once (default 8); past it the next "
     "is refused BUSY",
     1, OFCD_MAX_QUEUE, "expected 1..64 (mutations one tenant may have queued at once)"},
    {"mutation-share-exempt", p_share_exempt, 0, "ID",
     "a principal (cn:NAME) held only to the tenants' share together, the Slurm hooks' "
     "(repeatable, 8 at most)",
     .flags = OPT_REPEAT},
    {"link-hold-down", opt_ms, A(o.link_damp.hold_down_ms), "DUR",
     "a host port its agent reported down is restored after it stays up this long (default 5s; "
     "docs/hosts.md)",
     0.001, DAY, DUR_1MS_1D},
    {"flap-half-life", opt_ms, A(o.link_damp.half_life_ms), "DUR",
     "a flapping port's penalty halves in this (default 15s)", 0.001, DAY, DUR_1MS_1D},
    {"flap-penalty", opt_u32, A(o.link_damp.penalty), "N", "penalty a flap adds (default 1000)", 1,
     1e6, N_1_1M},
    {"flap-suppress", opt_u32, A(o.link_damp.suppress), "N",
     "above it the port is held failed (default 1500) ...", 1, 1e6, N_1_1M},
    {"flap-reuse", opt_u32, A(o.link_damp.reuse), "N",
     "... until it decays below this (default 750)", 1, 1e6, N_1_1M},
    {"flap-max-suppress", opt_ms, A(o.link_damp.max_suppress_ms), "DUR",
     "the longest a port stays suppressed (default 60s)", 0.001, DAY, DUR_1MS_1D},
    {"cluster", p_cluster, 0, "URL",
     "etcds://HOST:PORT[,HOST:PORT...] or etcd://...: run as one of several replicas whose state "
     "lives in this etcd cluster (docs/ofcd.md, "
     "\"Replicas\"): the one holding the fabric's lease leads, the others answer reads and "
     "tell clients who leads; etcds:// is TLS with a client certificate, etcd:// plain http"},
    {"cluster-cacert", opt_str, A(o.cluster_cacert), "FILE",
     "the CA that signed etcd's members' certificates (PEM)", .under = "cluster", .alt = 1,
     .flags = OPT_REQUIRED},
    {"cluster-cert", opt_str, A(o.cluster_cert), "FILE",
     "this replica's client certificate for etcd (PEM)", .under = "cluster-cacert",
     .flags = OPT_REQUIRED},
    {"cluster-key", opt_str, A(o.cluster_key), "FILE",
     "its private key (PEM; not readable by others)", .under = "cluster-cacert",
     .flags = OPT_REQUIRED},
    {"cluster-user", p_cluster_user, 0, "NAME",
     "etcd's user, when etcd runs with auth enabled (RBAC): a token for it is asked with "
     "--cluster-password-file's password (--cluster-cert then names no common name: etcd's "
     "JSON gateway refuses one under auth)",
     .under = "cluster"},
    {"cluster-password-file", opt_str, A(cluster_password_file), "FILE",
     "its password, one line (not readable by others)", .under = "cluster-user",
     .flags = OPT_REQUIRED},
    {"cluster-insecure", NULL, A(cluster_insecure), NULL,
     "allow plain etcd:// (no TLS, no client certificate): anyone who reaches etcd may then "
     "rewire the fabric",
     .under = "cluster", .alt = 1},
    {"cluster-ttl", opt_seconds, A(o.cluster_ttl), "DUR",
     "the leader's lease on etcd (default 2s, whole seconds): a new leader takes over about "
     "this long after one dies",
     1, 3600, "expected a duration from 1s to 1h (etcd's leases count whole seconds)",
     .under = "cluster"},
    {"cluster-name", p_cluster_name, 0, "NAME",
     "this replica among them (default: the host's name)", .under = "cluster"},
    {"cluster-prefix", opt_str, A(o.cluster_prefix), "PREFIX", "etcd keys' prefix (default /ofc/)",
     .under = "cluster"},
    {"advertise", p_advertise, 0, "ADDR",
     "where clients reach this replica when it leads: its socket's path (default --socket, made "
     "absolute) or its gateway's http(s):// URL (repeatable)",
     .flags = OPT_REPEAT, .under = "cluster"},
    {"help", NULL, 0, NULL, "print this help", .flags = OPT_STOP, .letter = 'h'},
    {"version", NULL, 0, NULL, "print ofcd's version", .flags = OPT_STOP},
    {NULL},
};

void ofcd_args_help(FILE *f)
{
	opt_usage(f, "ofcd", ofcd_option_table);
	fputs("\nServes the control API (proto/control.proto, docs/control.md) for one fabric.\n\n",
	      f);
	opt_help(f, ofcd_option_table);
	fputs("\nUnder systemd (Type=notify) it sends READY=1 once its sockets are bound, STATUS=\n"
	      "lines and STOPPING=1; sockets passed by socket activation (LISTEN_FDS: the main\n"
	      "socket, then optionally the read-only one) replace --socket and --ro-socket.\n",
	      f);
}

/* ---- what the options ask together ------------------------------------------ */

/* One of etcd's TLS files: a regular file this user can read; the key
 * also owned by root or this user and unreadable by others (whoever holds
 * it may write the store, which is to rewire the fabric). Its contents are
 * libcurl's to read, and no message says more than its path. */
static int check_tls_file(const char *option, const char *path, bool key, struct ofc_error *err)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);

	if (fd < 0 || fstat(fd, &st) != 0) {
		int e = errno;

		if (fd >= 0)
			close(fd);
		return ofc_error_set(err, OFC_E_INPUT, "%s %s: %s", option, path, strerror(e));
	}
	close(fd);
	if (!S_ISREG(st.st_mode))
		return ofc_error_set(err, OFC_E_INPUT, "%s %s: not a regular file", option, path);
	if (key && ((st.st_uid != 0 && st.st_uid != geteuid()) || (st.st_mode & 007)))
		return ofc_error_set(err, OFC_E_INPUT,
				     "%s %s: a private key must be owned by root or this user and "
				     "not readable by others (chmod 600)",
				     option, path);
	return 0;
}

/* --cluster-password-file: a regular file as private as a key, its one
 * line (at most 255 bytes, no control byte) into *out. The password is
 * never part of a message. */
static int read_password_file(const char *path, char **out, struct ofc_error *err)
{
	char buf[258];
	ssize_t n;
	int fd;

	if (check_tls_file("--cluster-password-file", path, true, err) < 0)
		return -1;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
	if (n < 0) {
		int e = errno;

		if (fd >= 0)
			close(fd);
		return ofc_error_set(err, OFC_E_INPUT, "--cluster-password-file %s: %s", path,
				     strerror(e));
	}
	close(fd);
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
		n--;
	buf[n] = 0;
	bool bad = n == 0 || n > 255;

	for (ssize_t i = 0; i < n; i++)
		bad |= (unsigned char)buf[i] < ' ' || buf[i] == 0x7f;
	if (bad) {
		explicit_bzero(buf, sizeof(buf));
		return ofc_error_set(err, OFC_E_INPUT,
				     "--cluster-password-file %s: one line of 1 to 255 bytes, no "
				     "control byte",
				     path);
	}
	*out = xstrdup(buf);
	explicit_bzero(buf, sizeof(buf));
	return 0;
}

/* etcds:// with all three files, each checked; the files without
 * etcds://; etcd's user with its password file, under TLS alone. */
static int check_cluster_tls(struct ofcd_args *a, struct ofc_error *err)
{
	struct ofcd_opts *o = &a->o;
	bool any = o->cluster_cacert || o->cluster_cert || o->cluster_key;
	bool tls = o->cluster && strncmp(o->cluster, "etcds://", 8) == 0;

	if (any && !tls)
		return ofc_error_set(err, OFC_E_USAGE,
				     "--cluster-cacert, --cluster-cert and --cluster-key go with "
				     "--cluster etcds://...");
	/* Whoever can write the store rewires the fabric: an etcd anyone who
	 * reaches it may write is run only when the operator says so. */
	if (o->cluster && !tls && !a->cluster_insecure)
		return ofc_error_set(err, OFC_E_INPUT,
				     "--cluster %s: etcd without TLS and client certificates lets "
				     "anyone who reaches it rewire the fabric; use etcds:// with "
				     "--cluster-cacert, --cluster-cert and --cluster-key, or say "
				     "--cluster-insecure",
				     o->cluster);
	if (a->cluster_insecure && !o->cluster)
		return ofc_error_set(err, OFC_E_USAGE,
				     "--cluster-insecure goes with --cluster etcd://...");
	if (!tls && (o->cluster_user || a->cluster_password_file))
		return ofc_error_set(err, OFC_E_USAGE,
				     "--cluster-user and --cluster-password-file go with --cluster "
				     "etcds://... (a password is sent over TLS alone)");
	if (!tls)
		return 0;
	if (!(o->cluster_cacert && o->cluster_cert && o->cluster_key))
		return ofc_error_set(err, OFC_E_USAGE,
				     "--cluster %s: TLS to etcd needs --cluster-cacert, "
				     "--cluster-cert and --cluster-key",
				     o->cluster);
	if (check_tls_file("--cluster-cacert", o->cluster_cacert, false, err) < 0 ||
	    check_tls_file("--cluster-cert", o->cluster_cert, false, err) < 0 ||
	    check_tls_file("--cluster-key", o->cluster_key, true, err) < 0)
		return -1;
	if (!o->cluster_user != !a->cluster_password_file)
		return ofc_error_set(err, OFC_E_USAGE,
				     "--cluster-user and --cluster-password-file go together");
	if (a->cluster_password_file)
		return read_password_file(a->cluster_password_file, &o->cluster_password, err);
	return 0;
}

/* What the options ask together, once they are read. */
static int check_args(struct ofcd_args *a, struct ofc_error *err)
{
	const struct ofcd_opts *o = &a->o;

	if (!a->config)
		return ofc_error_set(err, OFC_E_USAGE, "missing --config FILE");
	if (a->check)
		return 0;
	if (!a->sock && !getenv("LISTEN_FDS"))
		return ofc_error_set(err, OFC_E_USAGE, "missing --socket PATH");
	if (!!o->gateway_socket_path != a->have_gateway_uid)
		return ofc_error_set(err, OFC_E_USAGE,
				     "--gateway-socket and --gateway-uid go together");
	if (a->have_gateway_group && !o->gateway_socket_path)
		return ofc_error_set(
		    err, OFC_E_USAGE,
		    "--gateway-group goes with --gateway-socket and --gateway-uid");
	if (a->log_file && (a->use_syslog || a->use_journal))
		return ofc_error_set(
		    err, OFC_E_USAGE,
		    "--log-file %s: choose one of --log-file, --syslog and --journal", a->log_file);
	return check_cluster_tls(a, err);
}

int ofcd_args_parse(int argc, char **argv, struct ofcd_args *a, const struct opt **stop,
		    struct ofc_error *err)
{
	int rc;

	*a = (struct ofcd_args){.o = {.probe_interval = 10, .log_level = OFCD_LOG_NOTICE}};
	rc = opt_parse(ofcd_option_table, argc, argv, a, stop, err);
	return rc != 0 ? rc : check_args(a, err);
}
