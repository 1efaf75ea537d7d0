/* ofcd under load: the real build/ofcd against a zero-delay build/ocs-emu
 * (a 256-port OCS, the 64-host torus64-ocs config).
 *
 *   GetState latency (p50, p99) and throughput: 1 client, then 32 clients,
 *     then 32 clients with 20 Reconfigure interleaved;
 *   Reconfigure latency end to end (the client's wall time for 256
 *     cross-connect changes, journal, read-back and commit included);
 *   GetSchedule latency (allreduce on the fabric, every step);
 *   resident memory of the daemon: idle, and its peak under load.
 *
 * Usage: build/bench/ofcd [READS_PER_CLIENT] (default 2000). Binaries are
 * found next to this one (BUILD/bench/ofcd -> BUILD/ofcd, BUILD/ocs-emu).
 * OFCD_WRAP="valgrind --leak-check=full --error-exitcode=9" runs the daemon
 * under that command; the exit status then includes the daemon's. */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "controller/cli/cli.h"
#include "controller/client/client.h"
#include "controller/config/config.h"
#include "controller/export/export.h"
#include "controller/reconfig/reconfig.h"
#include "controller/schedule/schedule.h"
#include "proto/control.pb-c.h"

#define CLIENTS	  32
#define RECONFIGS 20

struct env {
	char dir[64], sock[128], build[512];
	pid_t emu, daemon;
	int port;
};

static pid_t spawn(char *const argv[], const char *log)
{
	pid_t pid = fork();

	if (pid == 0) {
		int fd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0644);

		if (fd >= 0) {
			dup2(fd, STDERR_FILENO);
			dup2(fd, STDOUT_FILENO);
		}
		execvp(argv[0], argv);
		_exit(127);
	}
	return pid;
}

static bool wait_file(const char *path)
{
	for (int i = 0; i < 1000; i++) {
		struct stat st;

		if (stat(path, &st) == 0 && st.st_size > 0)
			return true;
		usleep(5000);
	}
	return false;
}

/* Resident set size of a process (kB) from /proc: VmRSS or VmHWM. */
static long proc_kb(pid_t pid, const char *key)
{
	char path[64], line[256];
	long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, key, strlen(key)) == 0)
			v = strtol(line + strlen(key) + 1, NULL, 10);
	fclose(f);
	return v;
}

/* CPU seconds the process has used (user + system), from /proc/PID/stat. */
static double proc_cpu(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long ut = 0, st = 0;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	p = strrchr(buf, ')'); /* the command name may hold spaces */
	if (!p ||
	    sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) != 2)
		return 0;
	return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double pct(double *v, size_t n, double p)
{
	size_t k = (size_t)(p * (double)(n - 1) + 0.5);

	return n ? v[k < n ? k : n - 1] : 0;
}

static Ofc__V1__Response *call(struct ofcd_client *c, Ofc__V1__Request *req, uint64_t id)
{
	Ofc__V1__Response *r = NULL;
	struct ofc_error err = {0};

	req->has_id = 1;
	req->id = id;
	if (ofcd_call(c, req, &r, &err) < 0) {
		fprintf(stderr, "bench: %s\n", err.msg);
		return NULL;
	}
	return r;
}

static double get_state(struct ofcd_client *c, uint64_t id, atomic_int *errors)
{
	Ofc__V1__Request req = OFC__V1__REQUEST__INIT;
	Ofc__V1__GetState gs = OFC__V1__GET_STATE__INIT;
	double t0 = now_seconds();
	Ofc__V1__Response *r;

	req.body_case = OFC__V1__REQUEST__BODY_GET_STATE;
	req.get_state = &gs;
	r = call(c, &req, id);
	if (!r || r->status != OFC__V1__STATUS__STATUS_OK)
		atomic_fetch_add(errors, 1);
	if (r)
		ofc__v1__response__free_unpacked(r, NULL);
	return now_seconds() - t0;
}

static double reconfigure(struct ofcd_client *c, const char *spec, uint64_t id, double *server_s,
			  atomic_int *errors)
{
	Ofc__V1__Request req = OFC__V1__REQUEST__INIT;
	Ofc__V1__Reconfigure rq = OFC__V1__RECONFIGURE__INIT;
	double t0 = now_seconds();
	Ofc__V1__Response *r;

	rq.target_case = OFC__V1__RECONFIGURE__TARGET_TOPOLOGY;
	rq.topology = (char *)spec;
	req.body_case = OFC__V1__REQUEST__BODY_RECONFIGURE;
	req.reconfigure = &rq;
	r = call(c, &req, id);
	if (!r || r->status != OFC__V1__STATUS__STATUS_OK) {
		atomic_fetch_add(errors, 1);
		if (r)
			fprintf(stderr, "bench: reconfigure: %s\n", r->message);
	} else if (server_s) {
		*server_s = r->transaction->seconds;
	}
	if (r)
		ofc__v1__response__free_unpacked(r, NULL);
	return now_seconds() - t0;
}

/* ---- the load -------------------------------------------------------------------- */

struct run {
	struct env *e;
	int reads;
	bool reconfigs;
	double *lat; /* CLIENTS * reads */
	atomic_int errors, done;
	atomic_bool stop_sampler;
	long peak_kb;
	double rc_lat[RECONFIGS];
};

struct worker {
	struct run *r;
	int k;
};

static void *reader(void *arg)
{
	struct worker *w = arg;
	struct run *r = w->r;
	struct ofcd_client c;
	struct ofc_error err = {0};

	if (ofcd_connect(&c, r->e->sock, &err) < 0) {
		atomic_fetch_add(&r->errors, r->reads);
		return NULL;
	}
	c.timeout = 60;
	for (int i = 0; i < r->reads; i++) {
		r->lat[(size_t)w->k * r->reads + i] = get_state(&c, (uint64_t)i + 1, &r->errors);
		atomic_fetch_add(&r->done, 1);
	}
	ofcd_disconnect(&c);
	return NULL;
}

static void *reconfigurer(void *arg)
{
	struct run *r = arg;
	struct ofcd_client c;
	struct ofc_error err = {0};
	int total = CLIENTS * r->reads;

	if (ofcd_connect(&c, r->e->sock, &err) < 0) {
		atomic_fetch_add(&r->errors, RECONFIGS);
		return NULL;
	}
	c.timeout = 60;
	for (int i = 0; i < RECONFIGS; i++) {
		while (atomic_load(&r->done) < (i * total) / (RECONFIGS + 1))
			usleep(100);
		r->rc_lat[i] = reconfigure(&c, i % 2 ? "torus:8x8" : "circulant:64:3,8",
					   1000 + (uint64_t)i, NULL, &r->errors);
	}
	ofcd_disconnect(&c);
	return NULL;
}

static void *sampler(void *arg)
{
	struct run *r = arg;

	while (!atomic_load(&r->stop_sampler)) {
		long kb = proc_kb(r->e->daemon, "VmRSS:");

		if (kb > r->peak_kb)
			r->peak_kb = kb;
		usleep(2000);
	}
	return NULL;
}

static int load(struct env *e, int clients, int reads, bool reconfigs, const char *label)
{
	struct run r = {.e = e, .reads = reads, .reconfigs = reconfigs};
	struct worker w[CLIENTS];
	pthread_t th[CLIENTS + 2];
	size_t n = (size_t)clients * reads;
	double t0, secs;

	r.lat = xcalloc(n + 1, sizeof(double));
	pthread_create(&th[CLIENTS + 1], NULL, sampler, &r);
	double cpu0 = proc_cpu(e->daemon);
	t0 = now_seconds();
	for (int i = 0; i < clients; i++) {
		w[i] = (struct worker){&r, i};
		pthread_create(&th[i], NULL, reader, &w[i]);
	}
	if (reconfigs)
		pthread_create(&th[CLIENTS], NULL, reconfigurer, &r);
	for (int i = 0; i < clients; i++)
		pthread_join(th[i], NULL);
	if (reconfigs)
		pthread_join(th[CLIENTS], NULL);
	secs = now_seconds() - t0;
	double cpu = proc_cpu(e->daemon) - cpu0;
	atomic_store(&r.stop_sampler, true);
	pthread_join(th[CLIENTS + 1], NULL);
	qsort(r.lat, n, sizeof(double), cmp_double);
	printf("| %s | %d x %d | %.1f | %.1f | %.1f | %.0f | %.1f | %d | %.1f |\n", label, clients,
	       reads, pct(r.lat, n, 0.5) * 1e6, pct(r.lat, n, 0.99) * 1e6, r.lat[n - 1] * 1e6,
	       (double)n / secs, cpu / (double)n * 1e6, atomic_load(&r.errors), r.peak_kb / 1024.0);
	if (reconfigs) {
		qsort(r.rc_lat, RECONFIGS, sizeof(double), cmp_double);
		printf("|   (the %d Reconfigure under that load) | | p50 %.1f ms | p99 %.1f ms | | "
		       "| | | |\n",
		       RECONFIGS, pct(r.rc_lat, RECONFIGS, 0.5) * 1e3,
		       pct(r.rc_lat, RECONFIGS, 0.99) * 1e3);
	}
	free(r.lat);
	return atomic_load(&r.errors);
}

/* ---- setting up ---------------------------------------------------------------------- */

static int setup(struct env *e, const char *argv0)
{
	char *copy = xstrdup(argv0), *cfg, *text, port_file[128], log[128], dev[64];
	struct ofc_error err = {0};
	size_t len;

	/* BUILD/bench/ofcd -> BUILD */
	snprintf(e->build, sizeof(e->build), "%s/..", dirname(copy));
	free(copy);
	snprintf(e->dir, sizeof(e->dir), "/tmp/ofcd-bench.XXXXXX");
	if (!mkdtemp(e->dir))
		return -1;
	snprintf(e->sock, sizeof(e->sock), "%s/ofcd.sock", e->dir);
	snprintf(port_file, sizeof(port_file), "%s/port", e->dir);
	snprintf(log, sizeof(log), "%s/log", e->dir);
	/* configs/torus64-ocs.yaml with its credentials next to it. */
	char *cred = xasprintf("%s/ocs0.cred", e->dir);
	if (read_file("configs/credentials/ocs0.cred", 4096, &text, &len, &err) < 0 ||
	    atomic_write(cred, text, len, &err) < 0) {
		fprintf(stderr, "bench: run from the repository root: %s\n", err.msg);
		return -1;
	}
	free(text);
	if (read_file("configs/torus64-ocs.yaml", 1 << 20, &text, &len, &err) < 0)
		return -1;
	const char *key = "credentials: credentials/ocs0.cred";
	char *at = strstr(text, key);
	struct strbuf sb = STRBUF_INIT;
	if (!at)
		return -1;
	sb_add(&sb, text, (size_t)(at - text));
	sb_puts(&sb, "credentials: ocs0.cred");
	sb_puts(&sb, at + strlen(key));
	cfg = xasprintf("%s/torus.yaml", e->dir);
	if (atomic_write(cfg, sb.buf, sb.len, &err) < 0)
		return -1;
	sb_free(&sb);
	free(text);

	char *emu = xasprintf("%s/ocs-emu", e->build);
	char *eargv[] = {emu,	    "--listen", "127.0.0.1:0",	 "--port-file", port_file,
			 "--ports", "256",	"--credentials", cred,		NULL};
	e->emu = spawn(eargv, log);
	if (!wait_file(port_file))
		return -1;
	char *pt;
	read_file(port_file, 64, &pt, &len, &err);
	e->port = atoi(pt);
	free(pt);
	snprintf(dev, sizeof(dev), "ocs0=127.0.0.1:%d", e->port);
	char *d = xasprintf("%s/ofcd", e->build), *st = xasprintf("%s/state", e->dir);
	const char *wrap = getenv("OFCD_WRAP");
	char *words = xstrdup(wrap ? wrap : ""), *save = NULL, *dargv[64];
	int k = 0;

	for (char *w = strtok_r(words, " ", &save); w && k < 40; w = strtok_r(NULL, " ", &save))
		dargv[k++] = w;
	const char *rest[] = {d,
			      "--foreground",
			      "--config",
			      cfg,
			      "--socket",
			      e->sock,
			      "--state-dir",
			      st,
			      "--device",
			      dev,
			      "--probe-interval",
			      "0",
			      "--log-level",
			      "warning"};
	for (size_t i = 0; i < ARRAY_SIZE(rest); i++)
		dargv[k++] = (char *)rest[i];
	dargv[k] = NULL;
	e->daemon = spawn(dargv, log);
	for (int i = 0; i < 1000; i++) {
		struct ofcd_client c;

		if (ofcd_connect(&c, e->sock, &err) == 0) {
			ofcd_disconnect(&c);
			return 0;
		}
		usleep(5000);
	}
	fprintf(stderr, "bench: ofcd did not start (see %s)\n", log);
	return -1;
}

/* Stops everything; returns the daemon's exit status. */
static int teardown(struct env *e)
{
	int st = 0, rc = 0;
	char *cmd = xasprintf("rm -rf '%s'", e->dir);

	if (e->daemon > 0) {
		kill(e->daemon, SIGTERM);
		waitpid(e->daemon, &st, 0);
		rc = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
		if (rc)
			fprintf(stderr, "bench: ofcd exited with %d (log kept in %s)\n", rc,
				e->dir);
	}
	if (e->emu > 0) {
		kill(e->emu, SIGTERM);
		waitpid(e->emu, &st, 0);
	}
	if (!rc && system(cmd) != 0)
		fprintf(stderr, "bench: could not remove %s\n", e->dir);
	free(cmd);
	return rc;
}

int main(int argc, char **argv)
{
	struct env e = {0};
	struct ofcd_client c;
	struct ofc_error err = {0};
	atomic_int errors = 0;
	int reads = argc > 1 ? atoi(argv[1]) : 2000;
	double lat[RECONFIGS], srv[RECONFIGS], sum = 0;

	if (reads < 1 || setup(&e, argv[0]) < 0) {
		teardown(&e);
		return 1;
	}
	if (ofcd_connect(&c, e.sock, &err) < 0) {
		teardown(&e);
		return 1;
	}
	c.timeout = 60;
	/* A committed state to serve: 256 circuits. */
	reconfigure(&c, "torus:8x8", 1, NULL, &errors);
	usleep(300 * 1000);
	long idle = proc_kb(e.daemon, "VmRSS:");

	printf("ofcd: 64-host torus64-ocs, 256-port ocs-emu with no switching delay\n\n");
	printf("| GetState | clients x requests | p50 us | p99 us | max us | requests/s | "
	       "daemon CPU us/request | errors | peak RSS MiB |\n"
	       "|---|---|---|---|---|---|---|---|---|\n");
	errors += load(&e, 1, reads, false, "one client");
	errors += load(&e, CLIENTS, reads, false, "32 clients");
	errors += load(&e, CLIENTS, reads, true, "32 clients + 20 Reconfigure");

	for (int i = 0; i < RECONFIGS; i++) {
		lat[i] = reconfigure(&c, i % 2 ? "torus:8x8" : "circulant:64:3,8",
				     100 + (uint64_t)i, &srv[i], &errors);
		sum += lat[i];
	}
	qsort(lat, RECONFIGS, sizeof(double), cmp_double);
	qsort(srv, RECONFIGS, sizeof(double), cmp_double);
	printf(
	    "\n| Reconfigure (256 cross-connects changed, one client) | p50 ms | p99 ms | mean ms "
	    "|\n|---|---|---|---|\n");
	printf("| end to end (client) | %.2f | %.2f | %.2f |\n", pct(lat, RECONFIGS, 0.5) * 1e3,
	       pct(lat, RECONFIGS, 0.99) * 1e3, sum / RECONFIGS * 1e3);
	printf("| transaction (daemon: journal, apply, read back, commit) | %.2f | %.2f | |\n",
	       pct(srv, RECONFIGS, 0.5) * 1e3, pct(srv, RECONFIGS, 0.99) * 1e3);

	/* GetSchedule: the whole allreduce schedule on the fabric. */
	Ofc__V1__Request req = OFC__V1__REQUEST__INIT;
	Ofc__V1__GetSchedule gs = OFC__V1__GET_SCHEDULE__INIT;
	double sl[20];
	req.body_case = OFC__V1__REQUEST__BODY_GET_SCHEDULE;
	req.get_schedule = &gs;
	gs.collective = "allreduce";
	for (int i = 0; i < 20; i++) {
		double t0 = now_seconds();
		Ofc__V1__Response *r = call(&c, &req, 500 + (uint64_t)i);

		if (!r || r->status != OFC__V1__STATUS__STATUS_OK)
			errors++;
		if (r)
			ofc__v1__response__free_unpacked(r, NULL);
		sl[i] = now_seconds() - t0;
	}
	qsort(sl, 20, sizeof(double), cmp_double);
	printf("\n| GetSchedule allreduce on the fabric (all steps) | p50 ms | p99 ms "
	       "|\n|---|---|---|\n"
	       "| one client | %.2f | %.2f |\n",
	       pct(sl, 20, 0.5) * 1e3, pct(sl, 20, 0.99) * 1e3);
	ofcd_disconnect(&c);

	printf("\n| ofcd resident memory | MiB |\n|---|---|\n| idle, one committed state | %.1f |\n"
	       "| peak over the whole run (VmHWM) | %.1f |\n",
	       idle / 1024.0, proc_kb(e.daemon, "VmHWM:") / 1024.0);
	printf("\nerrors in all: %d\n", atomic_load(&errors));
	int drc = teardown(&e);
	printf("ofcd exit status after SIGTERM: %d\n", drc);
	return atomic_load(&errors) || drc ? 1 : 0;
}
