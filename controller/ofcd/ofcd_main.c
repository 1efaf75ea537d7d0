/* ofcd: the controller daemon. Options, logging (stderr, syslog or the
 * journal), daemonizing and what systemd is told (sd_notify, socket
 * activation); the daemon itself is the rest of controller/ofcd/. Exit
 * status: 0 after a clean stop, 1 on a runtime failure, 2 on bad options or
 * a bad config. */
#include "controller/config/config.h"
#include "controller/ofcd/options.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <systemd/sd-daemon.h>
#include <systemd/sd-journal.h>
#include <time.h>
#include <unistd.h>

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

static int check_config(const char *path, const struct ofcd_opts *o)
{
	struct fabric *f = NULL;
	struct ofc_error err = {0};
	char buf[1024];

	/* (topology: auto picked by a planner process, as at a start) */
	if (config_load(path, &f, &err) < 0 || ofcd_validate_with(o, f, 0, &err) < 0) {
		fabric_free(f);
		ofc_error_str(&err, buf, sizeof(buf));
		fprintf(stderr, err.line ? "%s\n" : "ofcd: %s\n", buf);
		return ofc_error_exit_code(&err);
	}
	printf("%s: fabric %s, %u hosts, %u switches, %u rings, topology %s: ok\n", path, f->name,
	       f->nhosts, f->nswitches, f->nrings, f->topology.present ? f->topology.spec : "-");
	fabric_free(f);
	return 0;
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
static int open_log(const struct ofcd_args *a, struct logger *lg)
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
	struct ofcd_args a;
	struct ofc_error err = {0};
	const struct opt *stop = NULL;
	struct logger lg;
	int rc = ofcd_args_parse(argc, argv, &a, &stop, &err);

	if (rc < 0) {
		fprintf(stderr, "ofcd: %s\n", err.msg);
		if (err.code == OFC_E_USAGE)
			opt_usage(stderr, "ofcd", ofcd_option_table);
		return ofc_error_exit_code(&err);
	}
	if (rc > 0) {
		if (strcmp(stop->name, "help") == 0)
			ofcd_args_help(stdout);
		else
			printf("ofcd %s\n", OFC_VERSION);
		return 0;
	}
	if (a.check)
		return check_config(a.config, &a.o);
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
