/* ofcd's side of the planner process: each schedule worker hands its
 * GetSchedule to a planner process of its own (build/ofc-planner,
 * planner_serve.c), started on first use and again after it ends, over a
 * socketpair in frames: the job (ofc.v1.PlannerJob) out, the packed
 * Response back, bounded by the request's frame and its time limit. A
 * planner that crashes, runs out of its memory or CPU time, or is killed
 * costs the request it was computing a refusal that says so; ofcd, its
 * lease and its other requests go on. */
#include "controller/ofcd/internal.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* How long past its time limit a planner may take to answer (packing a
 * large reply, a slow machine) before ofcd gives up on it and kills it;
 * a request with no time limit waits at most a day, ofcd's longest. */
#define PLANNER_GRACE	30.0
#define PLANNER_LONGEST 86400.0

/* (the forked child: async-signal-safe calls only) The socket as fd 3,
 * /dev/null as stdin and stdout (stderr stays: a crash's last words reach
 * ofcd's log), no other descriptor, no signal blocked, then the planner. */
static void child_exec(int fd, const char *path, char *const argv[], char *const env[])
    __attribute__((noreturn));
static void child_exec(int fd, const char *path, char *const argv[], char *const env[])
{
	sigset_t none;
	int null;

	if (fd == 3)
		(void)fcntl(3, F_SETFD, 0);
	else if (dup2(fd, 3) < 0)
		_exit(127);
	null = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (null >= 0) {
		(void)dup2(null, 0);
		(void)dup2(null, 1);
	}
	(void)syscall(SYS_close_range, 4u, ~0u, 0u);
	sigemptyset(&none);
	(void)sigprocmask(SIG_SETMASK, &none, NULL);
	execve(path, argv, env);
	_exit(127);
}

/* ofcd's environment less what systemd gave ofcd alone (its notify
 * socket, its listening sockets): the planner has no word to say to the
 * service manager. */
static char **planner_env(void)
{
	static const char *const drop[] = {
	    "NOTIFY_SOCKET=", "LISTEN_FDS=", "LISTEN_PID=", "LISTEN_FDNAMES=", "WATCHDOG_", NULL};
	size_t n = 0, k = 0;
	char **env;

	while (environ && environ[n])
		n++;
	env = xcalloc(n + 1, sizeof(*env));
	for (size_t i = 0; i < n; i++) {
		bool keep = true;

		for (const char *const *d = drop; *d && keep; d++)
			keep = strncmp(environ[i], *d, strlen(*d)) != 0;
		if (keep)
			env[k++] = environ[i];
	}
	return env;
}

double planner_wait(const struct job *j)
{
	return j->max_time > 0 ? j->max_time + PLANNER_GRACE : PLANNER_LONGEST;
}

static int start(const struct planner_how *h, struct planner_proc *p, struct ofc_error *err)
{
	char mem[32];
	int sv[2];
	pid_t pid;

	if (!h->path)
		return ofc_error_set(err, OFC_E_RUNTIME,
				     "cannot find the planner program (ofc-planner beside ofcd, "
				     "or $OFC_PLANNER)");
	if (access(h->path, X_OK) != 0)
		return ofc_error_set(err, OFC_E_RUNTIME, "the planner program %s: %s", h->path,
				     strerror(errno));
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return ofc_error_set(err, OFC_E_RUNTIME, "socketpair: %s", strerror(errno));
	snprintf(mem, sizeof(mem), "%llu", (unsigned long long)h->max_memory);
	char *argv[] = {h->path,
			"--max-memory",
			mem,
			"--for",
			(char *)(h->role ? h->role : "request"),
			h->topo_dir ? "--topology-dir" : NULL,
			h->topo_dir,
			NULL};
	char **env = planner_env();
	pid = fork();
	if (pid == 0)
		child_exec(sv[1], h->path, argv, env);
	free(env);
	close(sv[1]);
	if (pid < 0) {
		close(sv[0]);
		return ofc_error_set(err, OFC_E_RUNTIME, "cannot start the planner %s: %s", h->path,
				     strerror(errno));
	}
	p->fd = sv[0];
	atomic_store(&p->pid, pid);
	return 0;
}

/* How a planner ended, in words, into why (it is reaped). */
static void ended(int status, char *why, size_t n)
{
	if (WIFEXITED(status)) {
		snprintf(why, n, "exited with status %d", WEXITSTATUS(status));
		return;
	}
	if (!WIFSIGNALED(status)) {
		snprintf(why, n, "ended");
		return;
	}
	int s = WTERMSIG(status);
	const char *name = sigabbrev_np(s);

	snprintf(why, n, "was killed by SIG%s%s", name ? name : "?",
		 s == SIGXCPU	? " (past its CPU time limit)"
		 : s == SIGABRT ? " (an allocation over its memory limit, or a failed check)"
		 : s == SIGKILL ? " (by ofcd past the request's time limit, or from outside)"
				: "");
}

void planner_end(struct planner_proc *p, bool kill_it, char *why, size_t n)
{
	pid_t pid = atomic_load(&p->pid);
	int status = 0;

	if (pid <= 0) {
		if (why)
			snprintf(why, n, "was not running");
		return;
	}
	close(p->fd);
	p->fd = -1;
	if (kill_it)
		kill(pid, SIGKILL);
	/* (closed, a planner at rest exits at once; a killed one is gone) */
	for (int i = 0; i < 200; i++) {
		pid_t r = waitpid(pid, &status, WNOHANG);

		if (r == pid || (r < 0 && errno != EINTR))
			break;
		if (i == 199) {
			kill(pid, SIGKILL);
			(void)waitpid(pid, &status, 0);
			break;
		}
		usleep(10000);
	}
	atomic_store(&p->pid, 0);
	if (why)
		ended(status, why, n);
}

/* j's job as the planner reads it. */
static uint8_t *job_pack(const struct job *j, bool stream, size_t *len)
{
	Ofc__V1__PlannerJob m = OFC__V1__PLANNER_JOB__INIT;
	uint8_t *buf;

	m.has_id = m.has_fabric = m.has_nfailed = m.has_collective = 1;
	m.id = j->req_id;
	m.fabric.data = planner_fabric_pack(j->cfg, &m.fabric.len);
	m.nfailed = j->cfg->nfailed;
	m.collective = (uint32_t)j->coll;
	m.algorithm = j->algo;
	m.lowering = j->lowering;
	m.topology = j->spec;
	m.has_topology_from_client = m.has_size_bytes = m.has_chunks = 1;
	m.topology_from_client = j->spec_from_client;
	m.size_bytes = j->size;
	m.chunks = j->chunks;
	m.has_summary_only = m.has_reduced = m.has_max_memory = 1;
	m.summary_only = j->summary_only;
	m.reduced = j->reduced;
	m.max_memory = j->max_memory;
	m.has_max_time = m.has_max_frame = 1;
	m.max_time = j->max_time;
	m.max_frame = j->max_frame;
	m.has_stream = m.has_get_plan = 1;
	m.stream = stream;
	m.get_plan = j->get_plan;
	*len = protobuf_c_message_get_packed_size(&m.base);
	buf = xmalloc(*len ? *len : 1);
	protobuf_c_message_pack(&m.base, buf);
	free(m.fabric.data);
	return buf;
}

static void refuse(struct job *j, Ofc__V1__Status status, const char *msg)
{
	Ofc__V1__Response resp = OFC__V1__RESPONSE__INIT;

	resp.has_id = resp.has_status = 1;
	resp.id = j->req_id;
	resp.status = status;
	resp.message = (char *)msg;
	response_pack(&resp, &j->reply, &j->reply_len);
}

int planner_send_frame(const struct planner_how *h, struct planner_proc *p, const uint8_t *buf,
		       size_t len, double deadline, struct ofc_error *err)
{
	for (int attempt = 0;; attempt++) {
		if (atomic_load(&p->pid) <= 0 && start(h, p, err) < 0)
			return -1;
		if (frame_send(p->fd, buf, len, len, deadline, err) == 0)
			return 0;
		/* (a planner that ended at rest: another one, sent the job once
		 * more) */
		planner_end(p, true, NULL, 0);
		if (attempt)
			return -1;
		ofc_error_clear(err);
	}
}

int planner_send(const struct planner_how *h, struct planner_proc *p, const struct job *j,
		 bool stream, double deadline, struct ofc_error *err)
{
	size_t len;
	uint8_t *buf = job_pack(j, stream, &len);
	int rc = planner_send_frame(h, p, buf, len, deadline, err);

	free(buf);
	return rc;
}

void planner_run_schedule(struct ofcd *d, struct planner_proc *p, struct job *j)
{
	double limit = planner_wait(j);
	struct ofc_error err = {0};
	struct planner_how h;
	size_t cap = 0, got = 0;
	uint8_t *rbuf = NULL;
	char why[160], msg[sizeof(err.msg) + 200];
	int rc;

	planner_how(d, &h);
	rc = planner_send(&h, p, j, false, now_seconds() + limit, &err);
	planner_how_free(&h);
	if (rc < 0) {
		snprintf(msg, sizeof(msg), "the planner process cannot take the request: %s",
			 err.msg);
		refuse(j, OFC__V1__STATUS__STATUS_INTERNAL, msg);
		return;
	}
	pid_t pid = atomic_load(&p->pid);
	if (frame_recv(p->fd, &rbuf, &cap, &got, (size_t)j->max_frame + 4096, now_seconds() + limit,
		       &err) == 0) {
		j->reply = rbuf;
		j->reply_len = got;
		return;
	}
	free(rbuf);
	planner_end(p, true, why, sizeof(why));
	if (err.reason == OFC_R_TIMEOUT)
		snprintf(why, sizeof(why), "did not answer within %.0f s", limit);
	ofcd_log(d, OFCD_LOG_WARNING,
		 "the planner process (pid %d) computing request %llu of %s %s; the next "
		 "request starts another",
		 (int)pid, (unsigned long long)j->req_id, j->principal ? j->principal : "?", why);
	snprintf(msg, sizeof(msg),
		 "the planner process computing this schedule %s before answering; ofcd and "
		 "its other requests go on: ask again, or for less (a smaller size, "
		 "summary_only, another algorithm)",
		 why);
	refuse(j, OFC__V1__STATUS__STATUS_FAILED, msg);
}

int planner_ask(const struct planner_how *h, const uint8_t *job, size_t len, size_t max_answer,
		double wait, bool (*wanted)(void *ctx, pid_t pid), void *ctx, uint8_t **answer,
		size_t *answer_len, char *why, size_t n)
{
	struct planner_proc p = {.pid = 0, .fd = -1};
	double deadline = now_seconds() + wait;
	struct ofc_error err = {0};
	size_t cap = 0, got = 0;
	uint8_t *buf = NULL;
	int rc;

	*answer = NULL;
	*answer_len = 0;
	if (planner_send_frame(h, &p, job, len, deadline, &err) < 0) {
		snprintf(why, n, "could not start: %.160s", err.msg);
		return -1;
	}
	if (!wanted(ctx, atomic_load(&p.pid))) {
		planner_end(&p, true, NULL, 0);
		return 1;
	}
	rc = frame_recv(p.fd, &buf, &cap, &got, max_answer, deadline, &err);
	bool gone = !wanted(ctx, 0);
	if (rc == 0) {
		/* (closed, a planner at rest ends) */
		planner_end(&p, false, NULL, 0);
		if (gone) {
			free(buf);
			return 1;
		}
		*answer = buf;
		*answer_len = got;
		return 0;
	}
	free(buf);
	planner_end(&p, true, why, n);
	if (err.reason == OFC_R_TIMEOUT)
		snprintf(why, n, "did not answer within %.0f s", wait);
	return gone ? 1 : -1;
}

/* ---- one schedule's summary -------------------------------------------------------------- */

/* How long a summary's planner may take past the caller's time limit
 * (starting, the fabric rebuilt), or at most when it sets none. */
#define SUMMARY_GRACE	30.0
#define SUMMARY_LONGEST 3600.0
/* The most its answer may hold: a summary is a few hundred bytes, its
 * metrics and a fallback's detail a few KiB. */
#define SUMMARY_ANSWER_MAX ((size_t)1 << 20)

static bool always(void *ctx, pid_t pid)
{
	(void)ctx;
	(void)pid;
	return true;
}

static void *in_arena(void *a, size_t n)
{
	return arena_alloc(a, n ? n : 1);
}

static void arena_keeps(void *a, void *p)
{
	(void)a;
	(void)p;
}

Ofc__V1__Schedule *planner_summary(const struct ofcd *d, const struct fabcfg *cfg,
				   enum sched_collective coll, uint64_t size,
				   const struct planner_summary_ask *q, struct arena *a,
				   struct ofc_error *err)
{
	Ofc__V1__PlannerJob m = OFC__V1__PLANNER_JOB__INIT;
	ProtobufCAllocator in = {in_arena, arena_keeps, a};
	Ofc__V1__PlannerSummary *ans;
	Ofc__V1__Schedule *h = NULL;
	struct planner_how how;
	uint8_t *job, *buf;
	size_t len, got;
	char why[200];
	int rc;

	m.has_fabric = m.has_nfailed = m.has_collective = m.has_size_bytes = 1;
	m.fabric.data = planner_fabric_pack(cfg, &m.fabric.len);
	m.nfailed = cfg->nfailed;
	m.collective = (uint32_t)coll;
	m.size_bytes = size;
	m.topology = (char *)q->spec;
	m.has_max_memory = m.has_max_time = m.has_summary = m.has_reduce = 1;
	m.max_memory = cfg->max_memory;
	m.max_time = q->max_time;
	m.summary = true;
	m.reduce = (uint32_t)q->reduce;
	m.has_explicit_after = m.has_plain = 1;
	m.explicit_after = q->explicit_after;
	m.plain = q->plain;
	len = protobuf_c_message_get_packed_size(&m.base);
	job = xmalloc(len ? len : 1);
	protobuf_c_message_pack(&m.base, job);
	free(m.fabric.data);
	planner_how(d, &how);
	how.role = "summary";
	rc = planner_ask(&how, job, len, SUMMARY_ANSWER_MAX,
			 q->max_time > 0 ? q->max_time + SUMMARY_GRACE : SUMMARY_LONGEST, always,
			 NULL, &buf, &got, why, sizeof(why));
	planner_how_free(&how);
	free(job);
	if (rc != 0) {
		ofc_error_set(err, OFC_E_RUNTIME, "the planner process computing it %s", why);
		return NULL;
	}
	ans = ofc__v1__planner_summary__unpack(NULL, got, buf);
	if (ans && ans->has_schedule)
		h = ofc__v1__schedule__unpack(&in, ans->schedule.len, ans->schedule.data);
	if (!h)
		ofc_error_set(err, OFC_E_RUNTIME, "%s",
			      ans && ans->why
				  ? ans->why
				  : "the planner process answered what is not a schedule");
	if (ans)
		ofc__v1__planner_summary__free_unpacked(ans, NULL);
	free(buf);
	return h;
}
