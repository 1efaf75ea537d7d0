/* The hosts' agents on the testbed: lldpd and ofc-hostd in every host's
 * namespace, started by `testbed up` and stopped by `testbed down`, so the
 * testbed's hosts report their links and LLDP neighbours (docs/hosts.md)
 * as real hosts would, with nobody starting them by hand.
 *
 * Ownership: each process is detached (its own session, its parent init)
 * and recorded in <state-dir>/<fabric>.agents/<host>.<what>.pid as its pid
 * and its start time (/proc/PID/stat), so a pid the kernel has since given
 * to another process is never taken for it: a second `up` starts only what
 * is not running, and `down` signals only what it started (and lldpd's
 * privilege-separated child), waits for it with a deadline, kills what
 * outlives it and says what outlived that. Their logs are beside the pid
 * files. lldpd's control sockets are /run/lldpd/<namespace>.socket: lldpcli
 * runs as lldpd's user, and the state directory need not be open to it. */
#include "controller/testbed/internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define AGENT_TERM_WAIT 5.0 /* s a process has to end after SIGTERM */
#define AGENT_KILL_WAIT 2.0 /* ... and after SIGKILL */
#define AGENT_CHILDREN	8   /* lldpd's children followed (it has one) */
#define LLDP_SOCK_DIR	"/run/lldpd"

static const char *const kinds[] = {"hostd", "lldpd"};

/* A process's state letter and start time (clock ticks after boot), from
 * /proc/PID/stat; false when there is none. */
static bool proc_stat(pid_t pid, char *state, unsigned long long *start, pid_t *ppid)
{
	char path[64], buf[1024], *p;
	FILE *fp;
	size_t n;
	int pp = 0;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (!(fp = fopen(path, "re")))
		return false;
	n = fread(buf, 1, sizeof(buf) - 1, fp);
	fclose(fp);
	buf[n] = 0;
	/* after the command's name, which may hold spaces and parentheses */
	if (!(p = strrchr(buf, ')')))
		return false;
	/* fields 3 (state), 4 (ppid) ... 22 (starttime) */
	if (sscanf(p + 1,
		   " %c %d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d "
		   "%*d %llu",
		   state, &pp, start) != 3)
		return false;
	if (ppid)
		*ppid = pp;
	return true;
}

/* Whether pid is still the process that started at start (not a zombie). */
static bool same_alive(pid_t pid, unsigned long long start)
{
	unsigned long long s;
	char st;

	return pid > 0 && proc_stat(pid, &st, &s, NULL) && s == start && st != 'Z' && st != 'X';
}

static char *pid_path(const char *dir, const char *host, const char *kind)
{
	return xasprintf("%s/%s.%s.pid", dir, host, kind);
}

/* The pid a file records, if that process is still running. */
static pid_t recorded(const char *path, unsigned long long *start)
{
	FILE *fp = fopen(path, "re");
	int pid = 0;

	if (!fp)
		return 0;
	if (fscanf(fp, "%d %llu", &pid, start) != 2 || !same_alive(pid, *start))
		pid = 0;
	fclose(fp);
	return pid;
}

/* path of prog in $PATH (and the sbin folders, which a service's PATH may
 * lack), or NULL. */
static char *find_prog(const char *prog)
{
	const char *env = getenv("PATH");
	char *path = xasprintf("%s:/usr/sbin:/sbin:/usr/bin:/bin", env ? env : "");
	char *dir, *save = NULL, *found = NULL;

	for (dir = strtok_r(path, ":", &save); dir && !found; dir = strtok_r(NULL, ":", &save)) {
		char *p = xasprintf("%s/%s", dir, prog);

		if (*dir && access(p, X_OK) == 0)
			found = p;
		else
			free(p);
	}
	free(path);
	return found;
}

/* (the forked grandchild: async-signal-safe calls only) /dev/null in, the
 * log out, no other descriptor, no signal blocked or ignored, then prog. */
static void grandchild(int null, int log, char *const argv[], char *const env[])
    __attribute__((noreturn));
static void grandchild(int null, int log, char *const argv[], char *const env[])
{
	struct sigaction dfl = {.sa_handler = SIG_DFL};
	sigset_t none;

	(void)dup2(null, 0);
	(void)dup2(log, 1);
	(void)dup2(log, 2);
	(void)syscall(SYS_close_range, 3u, ~0u, 0u);
	for (int s = 1; s < 32; s++)
		if (s != SIGKILL && s != SIGSTOP)
			(void)sigaction(s, &dfl, NULL);
	sigemptyset(&none);
	(void)sigprocmask(SIG_SETMASK, &none, NULL);
	execve(argv[0], argv, env);
	_exit(127);
}

/* argv run detached (a session of its own, its parent init: no caller
 * reaps it, and none's end ends it), its output appended to log; its pid
 * and start time recorded in pidfile. */
static int spawn(char *const argv[], const char *log, const char *pidfile, struct ofc_error *err)
{
	int lfd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	int p[2] = {-1, -1}, status, rc = -1;
	pid_t mid, pid = 0;
	char **env = environ_for_child();

	if (lfd < 0 || null < 0 || pipe2(p, O_CLOEXEC) < 0) {
		ofc_error_at(err, OFC_E_RUNTIME, log, 0, 0, "cannot open: %s", strerror(errno));
		goto out;
	}
	mid = fork();
	if (mid == 0) {
		pid_t g;

		(void)setsid();
		g = fork();
		if (g == 0)
			grandchild(null, lfd, argv, env);
		(void)!write(p[1], &g, sizeof(g));
		_exit(0);
	}
	close(p[1]);
	p[1] = -1;
	if (mid < 0) {
		ofc_error_set(err, OFC_E_RUNTIME, "cannot start %s: %s", argv[0], strerror(errno));
		goto out;
	}
	if (read(p[0], &pid, sizeof(pid)) != (ssize_t)sizeof(pid) || pid <= 0)
		pid = 0;
	/* The pipe's end of write closes in the grandchild with every other
	 * descriptor it was forked with (the state's lock among them): until
	 * then a caller's next ofc would find the fabric "being changed". */
	for (double end = now_seconds() + 5; pid;) {
		struct pollfd pf = {.fd = p[0], .events = POLLIN};
		char b;
		int left = (int)((end - now_seconds()) * 1000);

		if (left <= 0 || poll(&pf, 1, left) <= 0 || read(p[0], &b, 1) <= 0)
			break;
	}
	while (waitpid(mid, &status, 0) < 0 && errno == EINTR)
		;
	unsigned long long start;
	char st;
	if (!pid || !proc_stat(pid, &st, &start, NULL)) {
		ofc_error_set(err, OFC_E_RUNTIME, "cannot start %s (see %s)", argv[0], log);
		goto out;
	}
	char line[64];
	int n = snprintf(line, sizeof(line), "%d %llu\n", (int)pid, start);
	rc = atomic_write(pidfile, line, (size_t)n, err);
out:
	free(env);
	for (int i = 0; i < 2; i++)
		if (p[i] >= 0)
			close(p[i]);
	if (lfd >= 0)
		close(lfd);
	if (null >= 0)
		close(null);
	return rc;
}

struct starter {
	const struct fabric *f;
	const char *dir, *socket;
	char *hostd, *lldpd, *ip;
	uint32_t started, running, failed;
	char first[300]; /* the first failure, said */
};

/* One process of host h (kind 0: ofc-hostd, 1: lldpd), unless the one
 * recorded is still running. */
static void start_one(struct starter *s, uint32_t h, int kind)
{
	const char *host = s->f->hosts[h].name;
	char *pidfile = pid_path(s->dir, host, kinds[kind]);
	char *log = xasprintf("%s/%s.%s.log", s->dir, host, kinds[kind]);
	char *ns = testbed_netns_name(s->f, h);
	char *sock = xasprintf("%s/%s.socket", LLDP_SOCK_DIR, ns);
	char ports[16];
	struct ofc_error err = {0};
	unsigned long long start;

	if (recorded(pidfile, &start)) {
		s->running++;
		goto out;
	}
	snprintf(ports, sizeof(ports), "%u", s->f->hosts[h].ports);
	if (kind == 0) {
		char *argv[] = {
		    s->hostd, "--host", (char *)host, "--testbed-ports", ports, "--netns", ns,
		    /* (without lldpd here, none answers: never the machine's) */
		    "--lldp-socket", sock, s->socket ? "--socket" : NULL, (char *)s->socket, NULL};
		if (spawn(argv, log, pidfile, &err) < 0)
			goto failed;
	} else {
		char *argv[] = {s->ip, "netns", "exec", ns,	 s->lldpd, "-d",
				"-u",  sock,	"-I",	"o*,i*", NULL};
		if (spawn(argv, log, pidfile, &err) < 0)
			goto failed;
	}
	s->started++;
	goto out;
failed:
	if (!s->failed++)
		snprintf(s->first, sizeof(s->first), "%.60s's %s: %.200s", host, kinds[kind],
			 err.msg);
out:
	free(sock);
	free(ns);
	free(log);
	free(pidfile);
}

void testbed_agents_start(const struct fabric *f, const char *state_dir, const char *socket,
			  struct testbed_up_result *r)
{
	struct starter s = {.f = f, .socket = socket};
	char *dir = testbed_path(state_dir, f->name, "agents");
	size_t longest = strlen(LLDP_SOCK_DIR) + strlen(f->name) + 16;

	for (uint32_t h = 0; h < f->nhosts; h++)
		if (strlen(f->hosts[h].name) + strlen(LLDP_SOCK_DIR) + strlen(f->name) + 16 >
		    longest)
			longest =
			    strlen(f->hosts[h].name) + strlen(LLDP_SOCK_DIR) + strlen(f->name) + 16;
	s.dir = dir;
	s.hostd = exe_sibling("OFC_HOSTD", "ofc-hostd");
	if (!s.hostd || access(s.hostd, X_OK) != 0) {
		testbed_up_note(r,
				"the hosts' agents not started: no ofc-hostd at %s (or $OFC_HOSTD)",
				s.hostd ? s.hostd : "(this program's folder unknown)");
		goto out;
	}
	if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
		testbed_up_note(r, "the hosts' agents not started: %s: %s", dir, strerror(errno));
		goto out;
	}
	s.lldpd = find_prog("lldpd");
	s.ip = find_prog("ip");
	if (s.lldpd && (!s.ip || longest >= sizeof(((struct sockaddr_un *)0)->sun_path) ||
			(mkdir(LLDP_SOCK_DIR, 0755) != 0 && errno != EEXIST))) {
		testbed_up_note(r, "lldpd not started: %s",
				!s.ip ? "no ip (iproute2) to enter the namespaces"
				: longest >= sizeof(((struct sockaddr_un *)0)->sun_path)
				    ? "its socket's path would be too long (the fabric's and "
				      "hosts' names)"
				    : "cannot make " LLDP_SOCK_DIR);
		free(s.lldpd);
		s.lldpd = NULL;
	} else if (!s.lldpd) {
		testbed_up_note(
		    r, "lldpd not found (scripts/install-deps.sh test installs it): the hosts' "
		       "agents report their links, and their wiring is not seen");
	}
	for (uint32_t h = 0; h < f->nhosts; h++) {
		if (s.lldpd)
			start_one(&s, h, 1);
		start_one(&s, h, 0);
	}
	if (s.failed)
		testbed_up_note(r, "%u of the hosts' agents not started: %s", s.failed, s.first);
	else
		testbed_up_note(
		    r,
		    "the hosts' agents: ofc-hostd%s in each of the %u namespaces (%u started, %u "
		    "already running; logs in %s)",
		    s.lldpd ? " and lldpd" : "", f->nhosts, s.started, s.running, dir);
out:
	free(s.hostd);
	free(s.lldpd);
	free(s.ip);
	free(dir);
}

/* ---- stopping ----------------------------------------------------------- */

struct victim {
	pid_t pid;
	unsigned long long start;
};

/* lldpd's children (its privilege-separated half), found by their parent
 * before it is signalled: they end with it, and down waits for them too. */
static void add_children(pid_t parent, struct victim *v, uint32_t *n, uint32_t cap)
{
	DIR *d = opendir("/proc");
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d)) && *n < cap) {
		char *end;
		long pid = strtol(e->d_name, &end, 10);
		unsigned long long start;
		pid_t pp;
		char st;

		if (*end || pid <= 0 || !proc_stat((pid_t)pid, &st, &start, &pp) || pp != parent)
			continue;
		v[(*n)++] = (struct victim){(pid_t)pid, start};
	}
	closedir(d);
}

static double mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Signal every victim still alive; then wait up to wait s for them all to
 * end. Returns how many are still alive. */
static uint32_t signal_wait(const struct victim *v, uint32_t n, int sig, double wait)
{
	double end = mono() + wait;
	uint32_t alive = 0;

	for (uint32_t i = 0; i < n; i++)
		if (same_alive(v[i].pid, v[i].start))
			(void)kill(v[i].pid, sig);
	do {
		alive = 0;
		for (uint32_t i = 0; i < n; i++)
			alive += same_alive(v[i].pid, v[i].start);
		if (alive)
			usleep(20000);
	} while (alive && mono() < end);
	return alive;
}

/* Remove the agents' folder: pid files and logs (nothing else is put
 * there). */
static void remove_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			(void)unlinkat(dirfd(d), e->d_name, 0);
	closedir(d);
	(void)rmdir(dir);
}

int testbed_agents_stop(const struct fabric *f, const char *state_dir, uint32_t *nstopped,
			struct ofc_error *err)
{
	char *dir = testbed_path(state_dir, f->name, "agents");
	uint32_t cap = f->nhosts * 2 * (1 + AGENT_CHILDREN) + 1, n = 0, left;
	struct victim *v = xcalloc(cap, sizeof(*v));
	int rc = 0;

	*nstopped = 0;
	for (uint32_t h = 0; h < f->nhosts; h++) {
		for (int k = 0; k < 2; k++) {
			char *pidfile = pid_path(dir, f->hosts[h].name, kinds[k]);
			unsigned long long start;
			pid_t pid = recorded(pidfile, &start);

			if (pid) {
				v[n++] = (struct victim){pid, start};
				(*nstopped)++;
				add_children(pid, v, &n, n + AGENT_CHILDREN);
			}
			free(pidfile);
		}
	}
	left = signal_wait(v, n, SIGTERM, AGENT_TERM_WAIT);
	if (left)
		left = signal_wait(v, n, SIGKILL, AGENT_KILL_WAIT);
	if (left) {
		for (uint32_t i = 0; i < n && rc == 0; i++)
			if (same_alive(v[i].pid, v[i].start))
				rc = ofc_error_set(err, OFC_E_RUNTIME,
						   "%u of the hosts' agents outlived SIGKILL (pid "
						   "%d; their pid files are kept in %s)",
						   left, (int)v[i].pid, dir);
	} else {
		for (uint32_t h = 0; h < f->nhosts; h++) {
			char *ns = testbed_netns_name(f, h);
			char *sock = xasprintf("%s/%s.socket", LLDP_SOCK_DIR, ns);

			/* lldpd removes them; one killed does not */
			(void)unlink(sock);
			sock = xrealloc(sock, strlen(sock) + 6);
			strcat(sock, ".lock");
			(void)unlink(sock);
			free(sock);
			free(ns);
		}
		remove_dir(dir);
	}
	free(v);
	free(dir);
	return rc;
}
