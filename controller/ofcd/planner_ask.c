/* Starting a planner process (build/ofc-planner, planner_serve.c) and
 * ending it, and asking one a job in a process of its own: the state's
 * schedule (state_schedule.c), the workload's schedule and its re-plans
 * (planner.c), one schedule's summary (planner_summary: a held
 * partition's view, a staged change's stages, a Reconfigure by
 * workload's answer), a config's topology: auto (ofcd_picker). Kept
 * apart from planner_proc.c, which answers a request (its refusal, the
 * log line): views.c and the mutation worker's files reach these without
 * a circle through the request path. */
#include "controller/ofcd/internal.h"
#include "controller/pick/pick.h"
#include "proto/planner.pb-c.h"

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

/* (the forked child: async-signal-safe calls only) The socket as fd 3,
 * the cut's page as fd 4 (cut > 0), /dev/null as stdin and stdout (stderr
 * stays: a crash's last words reach ofcd's log), no other descriptor, no
 * signal blocked, then the planner. */
static void child_exec(int fd, int cut, const char *path, char *const argv[], char *const env[])
    __attribute__((noreturn));
static void child_exec(int fd, int cut, const char *path, char *const argv[], char *const env[])
{
	sigset_t none;
	int null;

	/* (both above 4 first, so that placing one never closes the other) */
	bool page = cut > 0;

	fd = fcntl(fd, F_DUPFD, 5);
	cut = page ? fcntl(cut, F_DUPFD, 5) : -1;
	if (fd < 0 || dup2(fd, 3) < 0 || (page && (cut < 0 || dup2(cut, 4) < 0)))
		_exit(127);
	null = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (null >= 0) {
		(void)dup2(null, 0);
		(void)dup2(null, 1);
	}
	(void)syscall(SYS_close_range, page ? 5u : 4u, ~0u, 0u);
	sigemptyset(&none);
	(void)sigprocmask(SIG_SETMASK, &none, NULL);
	execve(path, argv, env);
	_exit(127);
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
	char *argv[10] = {h->path, "--max-memory", mem, "--for",
			  (char *)(h->role ? h->role : "request")};
	int argc = 5;
	if (p->cut_fd > 0) {
		argv[argc++] = "--cut-fd";
		argv[argc++] = "4";
	}
	if (h->topo_dir) {
		argv[argc++] = "--topology-dir";
		argv[argc++] = (char *)h->topo_dir;
	}
	char **env = environ_for_child();
	pid = fork();
	if (pid == 0)
		child_exec(sv[1], p->cut_fd, h->path, argv, env);
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

int planner_send_frame(const struct planner_how *h, struct planner_proc *p, const uint8_t *buf,
		       size_t len, double deadline, struct ofc_error *err)
{
	for (int attempt = 0;; attempt++) {
		bool fresh = atomic_load(&p->pid) <= 0;
		char why[160];

		if (fresh && start(h, p, err) < 0)
			return -1;
		if (frame_send(p->fd, buf, len, len, deadline, err) == 0)
			return 0;
		planner_end(p, true, why, sizeof(why));
		/* One just started that is gone before it took the job: how it
		 * ended is the answer (not the broken pipe), and it was this
		 * job's planner. A kept one that ended at rest: another one,
		 * sent the job once more. */
		if (fresh) {
			ofc_error_clear(err);
			ofc_error_set(err, OFC_E_RUNTIME, "%s", why);
			return -2;
		}
		if (attempt)
			return -1;
		ofc_error_clear(err);
	}
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
	rc = planner_send_frame(h, &p, job, len, deadline, &err);
	if (rc < 0) {
		snprintf(why, n, rc == -2 ? "%.160s" : "could not start: %.160s", err.msg);
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

/* planner_ask of the planner process *p, kept for the next job (started
 * when none runs, ended when it fails): a caller that asks often keeps
 * one, and the fabric it rebuilt, rather than start one a job. */
static int ask_kept(const struct planner_how *h, struct planner_proc *p, const uint8_t *job,
		    size_t len, size_t max_answer, double wait, uint8_t **answer,
		    size_t *answer_len, char *why, size_t n)
{
	double deadline = now_seconds() + wait;
	struct ofc_error err = {0};
	size_t cap = 0, got = 0;
	uint8_t *buf = NULL;

	*answer = NULL;
	*answer_len = 0;
	int rc = planner_send_frame(h, p, job, len, deadline, &err);

	if (rc < 0) {
		snprintf(why, n, rc == -2 ? "%.160s" : "could not start: %.160s", err.msg);
		return -1;
	}
	if (frame_recv(p->fd, &buf, &cap, &got, max_answer, deadline, &err) == 0) {
		*answer = buf;
		*answer_len = got;
		return 0;
	}
	free(buf);
	planner_end(p, true, why, n);
	if (err.reason == OFC_R_TIMEOUT)
		snprintf(why, n, "did not answer within %.0f s", wait);
	return -1;
}

/* The packed job asked of a planner process of how's (its own, or *keep:
 * NULL, none kept): 0 and its answer in *buf (the caller's to free), else
 * -1 with why "the planner process WHAT ...". One that ends before it
 * answers (crashed, out of its memory, killed from outside) costs one
 * more, while the wait has time left; a second the refusal, naming how
 * both ended. */
static int ask_job(const struct planner_how *how, const uint8_t *job, size_t len,
		   struct planner_proc *keep, size_t answer_max, double wait, const char *what,
		   uint8_t **buf, size_t *got, struct ofc_error *err)
{
	double until = now_seconds() + wait;
	char why[200], first[200] = "";
	int rc = -1;

	for (int attempt = 0; attempt < 2; attempt++) {
		double left = until - now_seconds();

		rc = keep ? ask_kept(how, keep, job, len, answer_max, left, buf, got, why,
				     sizeof(why))
			  : planner_ask(how, job, len, answer_max, left, always, NULL, buf, got,
					why, sizeof(why));
		if (rc == 0 || attempt || until - now_seconds() <= 0)
			break;
		snprintf(first, sizeof(first), "%s", why);
	}
	if (rc == 0)
		return 0;
	if (first[0])
		return ofc_error_set(err, OFC_E_RUNTIME,
				     "the planner process %s %s (the one before it %s)", what, why,
				     first);
	return ofc_error_set(err, OFC_E_RUNTIME, "the planner process %s %s", what, why);
}

/* Asks a planner process of role `role` the job m, on cfg's fabric
 * (m's other fields set by the caller), as ask_job does. */
int planner_ask_about(const struct ofcd *d, const struct fabcfg *cfg, Ofc__V1__PlannerJob *m,
		      const char *role, struct planner_proc *keep, size_t answer_max, double wait,
		      const char *what, uint8_t **buf, size_t *got, struct ofc_error *err)
{
	struct planner_how how;
	uint8_t *job;
	size_t len;
	int rc;

	m->has_fabric = m->has_nfailed = m->has_max_memory = 1;
	m->fabric.data = planner_fabric_pack(cfg, &m->fabric.len);
	m->nfailed = cfg->nfailed;
	m->max_memory = cfg->max_memory;
	len = protobuf_c_message_get_packed_size(&m->base);
	job = xmalloc(len ? len : 1);
	protobuf_c_message_pack(&m->base, job);
	free(m->fabric.data);
	m->fabric.data = NULL;
	planner_how(d, &how);
	how.role = role;
	rc = ask_job(&how, job, len, keep, answer_max, wait, what, buf, got, err);
	planner_how_free(&how);
	free(job);
	return rc;
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
	uint8_t *buf;
	size_t got;

	m.has_collective = m.has_size_bytes = 1;
	m.collective = (uint32_t)coll;
	m.size_bytes = size;
	m.topology = (char *)q->spec;
	m.has_max_time = m.has_summary = m.has_reduce = 1;
	m.max_time = q->max_time;
	m.summary = true;
	m.reduce = (uint32_t)q->reduce;
	m.has_explicit_after = m.has_plain = 1;
	m.explicit_after = q->explicit_after;
	m.plain = q->plain;
	if (planner_ask_about(d, cfg, &m, "summary", NULL, SUMMARY_ANSWER_MAX,
			      q->max_time > 0 ? q->max_time + SUMMARY_GRACE : SUMMARY_LONGEST,
			      "computing it", &buf, &got, err) < 0)
		return NULL;
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

/* ---- MoveToPhase's topology ---------------------------------------------------------------- */

/* The workload planned (every phase priced on every candidate: seconds on
 * a large fabric): at most this long, and this large an answer. */
#define PHASE_WAIT	 3600.0
#define PHASE_ANSWER_MAX ((size_t)1 << 20)

int ofcd_phase_spec(const struct ofcd *d, const struct fabcfg *cfg, struct job *j, char **spec,
		    struct ofc_error *err)
{
	Ofc__V1__PlannerJob m = OFC__V1__PLANNER_JOB__INIT;
	Ofc__V1__PlannerPhase *a;
	uint8_t *buf;
	size_t got;
	int rc;

	*spec = NULL;
	m.has_to_phase = m.has_phase = 1;
	m.to_phase = true;
	m.phase = j->phase;
	m.phase_name = j->phase_name;
	if (planner_ask_about(d, cfg, &m, "phase", NULL, PHASE_ANSWER_MAX, PHASE_WAIT,
			      "planning the workload", &buf, &got, err) < 0)
		return -1;
	a = ofc__v1__planner_phase__unpack(NULL, got, buf);
	free(buf);
	if (!a || (!a->spec && !a->why)) {
		if (a)
			ofc__v1__planner_phase__free_unpacked(a, NULL);
		return ofc_error_set(err, OFC_E_RUNTIME,
				     "the planner process answered what is not a phase's topology");
	}
	if (a->spec) {
		*spec = xstrdup(a->spec);
		free(j->target);
		j->target = a->target ? xstrdup(a->target) : NULL;
		rc = 0;
	} else {
		rc = ofc_error_set(err, a->input ? OFC_E_INPUT : OFC_E_RUNTIME, "%s", a->why);
	}
	ofc__v1__planner_phase__free_unpacked(a, NULL);
	return rc;
}

/* ---- a Reconfigure by workload's pick ----------------------------------------------------- */

int ofcd_pick_topology(const struct ofcd *d, const struct fabcfg *cfg, const struct job *j,
		       char *spec, size_t n, struct ofc_error *err)
{
	Ofc__V1__PlannerJob m = OFC__V1__PLANNER_JOB__INIT;
	Ofc__V1__PlannerPick *a;
	uint8_t *buf;
	size_t got;
	int rc;

	m.has_pick = m.has_nodes = 1;
	m.pick = true;
	m.nodes = j->nodes;
	m.has_collective = m.has_size_bytes = 1;
	m.collective = (uint32_t)j->coll;
	m.size_bytes = j->size;
	if (planner_ask_about(d, cfg, &m, "pick", NULL, PHASE_ANSWER_MAX, PHASE_WAIT, "picking",
			      &buf, &got, err) < 0)
		return -1;
	a = ofc__v1__planner_pick__unpack(NULL, got, buf);
	free(buf);
	if (!a || (!a->spec && !a->why)) {
		if (a)
			ofc__v1__planner_pick__free_unpacked(a, NULL);
		return ofc_error_set(err, OFC_E_RUNTIME,
				     "the planner process answered what is not a pick");
	}
	if (a->spec) {
		snprintf(spec, n, "%s", a->spec);
		rc = 0;
	} else {
		rc = ofc_error_set(err, a->input ? OFC_E_INPUT : OFC_E_RUNTIME, "%s", a->why);
	}
	ofc__v1__planner_pick__free_unpacked(a, NULL);
	return rc;
}

/* ---- a config's topology: auto ------------------------------------------------------------- */

/* How long past its time limit a config's pick may take its planner
 * (starting, the finder's threads), or at most without one; and the most
 * its answer may hold (a spec and a number). */
#define CONFIG_PICK_GRACE   30.0
#define CONFIG_PICK_LONGEST 86400.0
#define CONFIG_PICK_ANSWER  ((size_t)64 << 10)

static int config_pick(const struct topo_picker *ops, const struct pick_request *q, char **spec,
		       double *time_us, struct ofc_error *err)
{
	const struct ofcd_picker *p = (const struct ofcd_picker *)ops;
	Ofc__V1__PlannerJob m = OFC__V1__PLANNER_JOB__INIT;
	Ofc__V1__PlannerPickModel model = OFC__V1__PLANNER_PICK_MODEL__INIT;
	Ofc__V1__PlannerPickWork *w = xcalloc(q->nwork + 1, sizeof(*w));
	Ofc__V1__PlannerPickWork **wp = xcalloc(q->nwork + 1, sizeof(*wp));
	Ofc__V1__PlannerPick *a;
	uint8_t *job, *buf;
	size_t len, got;
	int rc;

	m.has_config_pick = m.has_nodes = m.has_degree = 1;
	m.config_pick = true;
	m.nodes = q->nodes;
	m.degree = q->degree;
	model.has_alpha = model.has_link_rate = model.has_node_rate = 1;
	model.alpha = q->model.alpha;
	model.link_rate = q->model.link_rate;
	model.node_rate = q->model.node_rate;
	m.model = &model;
	for (size_t i = 0; i < q->nwork; i++) {
		ofc__v1__planner_pick_work__init(&w[i]);
		w[i].has_op = w[i].has_size = w[i].has_weight = 1;
		w[i].op = (uint32_t)q->work[i].op;
		w[i].size = q->work[i].size;
		w[i].weight = q->work[i].weight;
		wp[i] = &w[i];
	}
	m.n_work = q->nwork;
	m.work = wp;
	m.has_max_memory = m.has_max_time = 1;
	m.max_memory = p->max_memory;
	m.max_time = p->max_time;
	len = protobuf_c_message_get_packed_size(&m.base);
	job = xmalloc(len ? len : 1);
	protobuf_c_message_pack(&m.base, job);
	free(w);
	free(wp);
	rc = ask_job(&p->how, job, len, NULL, CONFIG_PICK_ANSWER,
		     p->max_time > 0 ? p->max_time + CONFIG_PICK_GRACE : CONFIG_PICK_LONGEST,
		     "picking it", &buf, &got, err);
	free(job);
	if (rc < 0)
		return -1;
	a = ofc__v1__planner_pick__unpack(NULL, got, buf);
	free(buf);
	if (a && a->spec) {
		*spec = xstrdup(a->spec);
		*time_us = a->time_us;
		rc = 0;
	} else {
		rc = ofc_error_set(err, a && a->input ? OFC_E_INPUT : OFC_E_RUNTIME, "%s",
				   a && a->why ? a->why
					       : "the planner process answered what is not a pick");
	}
	if (a)
		ofc__v1__planner_pick__free_unpacked(a, NULL);
	return rc;
}

void ofcd_picker_init(struct ofcd_picker *p, const struct ofcd_opts *o, double max_time)
{
	*p = (struct ofcd_picker){.ops = {.pick = config_pick},
				  .max_memory = o->max_request_memory,
				  .max_time = max_time};
	planner_how_of(o, NULL, &p->how);
	p->how.role = "config";
}

void ofcd_picker_free(struct ofcd_picker *p)
{
	planner_how_free(&p->how);
}

int ofcd_validate_with(const struct ofcd_opts *o, struct fabric *f, double max_time,
		       struct ofc_error *err)
{
	struct ofcd_picker p;
	int rc;

	ofcd_picker_init(&p, o, max_time);
	f->picker = &p.ops;
	rc = fabric_validate(f, err);
	ofcd_picker_free(&p);
	return rc;
}

int ofcd_validate(const struct ofcd *d, struct fabric *f, double max_time, struct ofc_error *err)
{
	return ofcd_validate_with(&d->o, f, max_time, err);
}

/* ---- a run-time partition's renumbering planned ahead --------------------------------------- */

/* How long past its search's budget a renumbering's planner may take
 * (starting, the fabric rebuilt, the circuits made), and the most its
 * answer may hold: 7 numbers a circuit, a few circuits a host. */
#define RELABEL_GRACE	   30.0
#define RELABEL_ANSWER_MAX ((size_t)64 << 20)

/* The job's switches: each one's cross-connects, or unknown. */
static Ofc__V1__PlannerSwitch **switches_msg(const struct fabric *f,
					     const struct device_state *const *actual)
{
	Ofc__V1__PlannerSwitch **v = xcalloc((size_t)f->nswitches + 1, sizeof(*v));

	for (uint32_t s = 0; s < f->nswitches; s++) {
		const struct device_state *st = actual[s];

		v[s] = xcalloc(1, sizeof(**v));
		ofc__v1__planner_switch__init(v[s]);
		v[s]->has_known = 1;
		v[s]->known = st != NULL;
		v[s]->n_xc = st ? (size_t)st->nxc * 2 : 0;
		v[s]->xc = xcalloc(v[s]->n_xc + 1, sizeof(uint32_t));
		for (uint32_t k = 0; st && k < st->nxc; k++) {
			v[s]->xc[2 * k] = st->xc[k].in;
			v[s]->xc[2 * k + 1] = st->xc[k].out;
		}
	}
	return v;
}

/* The answer's circuits and report; -1 with err when it has none. */
static int relabel_take(const Ofc__V1__PlannerRelabel *a, struct circuit **pc, uint32_t *npc,
			struct fabric_relabel *rep, struct ofc_error *err)
{
	if (!a || !a->ok || a->n_circuits % 7)
		return ofc_error_set(err, OFC_E_RUNTIME, "%s",
				     a && a->why ? a->why
						 : "the planner process answered what is not a "
						   "renumbering");
	*npc = (uint32_t)(a->n_circuits / 7);
	*pc = xcalloc((size_t)*npc + 1, sizeof(**pc));
	for (uint32_t i = 0; i < *npc; i++) {
		const uint32_t *c = &a->circuits[(size_t)i * 7];

		(*pc)[i] = (struct circuit){c[0], c[1], c[2], c[3], c[4], c[5], c[6]};
	}
	*rep = (struct fabric_relabel){.arcs = a->arcs,
				       .kept_identity = a->kept_identity,
				       .kept = a->kept,
				       .kept_links = a->kept_links,
				       .moved_nodes = a->moved_nodes,
				       .changed = a->changed,
				       .complete = a->complete,
				       .optimal = a->optimal,
				       .deadline = a->deadline,
				       .rounds = a->rounds,
				       .seconds = a->seconds};
	return 0;
}

int planner_relabel(const struct ofcd *d, struct planner_proc *p, const char *role,
		    const struct fabcfg *cfg, const char *name, char *const *hosts, uint32_t nhosts,
		    const char *spec, const struct device_state *const *actual, double budget,
		    struct circuit **pc, uint32_t *npc, struct fabric_relabel *rep,
		    struct ofc_error *err)
{
	Ofc__V1__PlannerJob m = OFC__V1__PLANNER_JOB__INIT;
	Ofc__V1__PlannerRelabel *a;
	uint32_t nsw = cfg->f->nswitches;
	uint8_t *buf;
	size_t got;
	int rc;

	*pc = NULL;
	*npc = 0;
	memset(rep, 0, sizeof(*rep));
	m.has_relabel = m.has_budget = m.has_max_time = 1;
	m.relabel = true;
	m.budget = m.max_time = budget; /* (max_time: its CPU time bounded) */
	m.name = (char *)name;
	m.hosts = (char **)hosts;
	m.n_hosts = nhosts;
	m.topology = (char *)spec;
	m.switches = switches_msg(cfg->f, actual);
	m.n_switches = nsw;
	rc = planner_ask_about(d, cfg, &m, role, p, RELABEL_ANSWER_MAX, budget + RELABEL_GRACE,
			       "renumbering it", &buf, &got, err);
	for (uint32_t s = 0; s < nsw; s++) {
		free(m.switches[s]->xc);
		free(m.switches[s]);
	}
	free(m.switches);
	if (rc < 0)
		return -1;
	a = ofc__v1__planner_relabel__unpack(NULL, got, buf);
	free(buf);
	rc = relabel_take(a, pc, npc, rep, err);
	if (a)
		ofc__v1__planner_relabel__free_unpacked(a, NULL);
	return rc;
}
