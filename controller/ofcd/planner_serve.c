/* The planner process (build/ofc-planner): what ofcd's schedule workers
 * hand it (planner_proc.c), computed out of the process that holds the
 * lease, the devices' sessions and the store's token. It starts with
 * nothing of ofcd's but a socket (fd 3), gives up every capability root
 * has (keeping the uid: it reads the files the config names, as ofcd
 * does), sets no new privileges, and lives under limits of its own: RLIMIT_AS the
 * request's memory limit and PLANNER_AS_ROOM more, RLIMIT_CPU the
 * request's time on every CPU, no core file, few descriptors. One job at
 * a time: the fabric rebuilt from the YAML and what ofcd changed of it
 * (kept while the next job's is the same), the schedule computed as the
 * schedule worker did in ofcd (schedule_job.c), the packed Response sent
 * back; or the state's schedule (planner_state.c), or the workload's
 * (planner_replan.c), and what it came to. It ends when ofcd closes the
 * socket. */
#include "controller/ofcd/internal.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/securebits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

/* What the process holds besides a request's memory: its code and
 * libraries, the fabric, and the address space each thread's malloc arena
 * and stack reserve (64 MiB and 8 MiB, counted by RLIMIT_AS though mostly
 * never touched). */
#define PLANNER_AS_ROOM(cpus) (((uint64_t)1 << 30) + (uint64_t)(cpus) * ((uint64_t)128 << 20))
/* The most a job's frame from ofcd may hold: the config's YAML (a few MiB
 * at most), the request and a re-plan's kept MCF run (KEPT_MAX_BYTES). */
#define PLANNER_JOB_MAX (KEPT_MAX_BYTES + ((size_t)256 << 20))
/* The descriptors it may hold: the socket, edge lists it reads, /dev/null. */
#define PLANNER_NOFILE 64
/* A sanitizer's build (make check) maps terabytes of shadow address space
 * at start: under RLIMIT_AS its first allocation would fail, so that build
 * leaves the address space unbounded (the engines' own estimates still
 * refuse what is over the request's memory limit). */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define PLANNER_AS_LIMITED 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define PLANNER_AS_LIMITED 0
#endif
#endif
#ifndef PLANNER_AS_LIMITED
#define PLANNER_AS_LIMITED 1
#endif

struct planner {
	const struct planner_serve_opts *o;
	struct topo_files files;
	uint64_t room;
	/* The fabric of the last job, and its packed PlannerFabric. */
	uint8_t *key;
	size_t key_len;
	struct fabric *f;
};

static int set_limit(int res, rlim_t soft, rlim_t hard, const char *name, struct ofc_error *err)
{
	struct rlimit rl = {soft, hard};

	if (res == RLIMIT_AS && !PLANNER_AS_LIMITED)
		return 0;
	if (setrlimit(res, &rl) < 0)
		return ofc_error_set(err, OFC_E_RUNTIME, "setrlimit %s: %s", name, strerror(errno));
	return 0;
}

/* res's soft limit set to at most want, within the hard limit the
 * process was given (the hard one lowered to want too when lower_hard). */
static int limit_to(int res, rlim_t want, bool lower_hard, const char *name, struct ofc_error *err)
{
	struct rlimit cur = {RLIM_INFINITY, RLIM_INFINITY};

	(void)getrlimit(res, &cur);
	if (cur.rlim_max != RLIM_INFINITY && (want == RLIM_INFINITY || want > cur.rlim_max))
		want = cur.rlim_max;
	return set_limit(res, want, lower_hard ? want : cur.rlim_max, name, err);
}

/* Root's powers given up: every capability, for good (an exec regains
 * none); the uid stays, so the planner reads what ofcd's config names
 * (a demand file, an edge list) and nothing it could not before. */
static int drop_capabilities(struct ofc_error *err)
{
	struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct none[2] = {{0, 0, 0}, {0, 0, 0}};

	if (prctl(PR_SET_SECUREBITS,
		  SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP |
		      SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED,
		  0, 0, 0) < 0)
		return ofc_error_set(err, OFC_E_RUNTIME, "securebits: %s", strerror(errno));
	for (int c = 0; c < 64; c++)
		if (prctl(PR_CAPBSET_DROP, c, 0, 0, 0) < 0 && errno != EINVAL)
			return ofc_error_set(err, OFC_E_RUNTIME, "dropping capability %d: %s", c,
					     strerror(errno));
	if (syscall(SYS_capset, &h, none) < 0)
		return ofc_error_set(err, OFC_E_RUNTIME, "capset: %s", strerror(errno));
	return 0;
}

/* No capability, none to be gained by exec, and the limits every job
 * shares. */
static int confine(struct planner *p, struct ofc_error *err)
{
	if (geteuid() == 0 && drop_capabilities(err) < 0)
		return -1;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return ofc_error_set(err, OFC_E_RUNTIME, "no_new_privs: %s", strerror(errno));
	p->room = PLANNER_AS_ROOM(ofc_cpu_count());
	if (limit_to(RLIMIT_CORE, 0, true, "RLIMIT_CORE", err) < 0 ||
	    limit_to(RLIMIT_NOFILE, PLANNER_NOFILE, true, "RLIMIT_NOFILE", err) < 0 ||
	    limit_to(RLIMIT_AS, p->o->max_memory + p->room, true, "RLIMIT_AS", err) < 0)
		return -1;
	return 0;
}

/* The job's own limits: its memory limit (and the room) for the address
 * space, its time on every CPU past what the process has used so far. */
static int job_limits(struct planner *p, const Ofc__V1__PlannerJob *m, struct ofc_error *err)
{
	struct schedule_query q = {.max_memory = m->max_memory};
	uint64_t as = schedule_memory_limit(&q);
	struct rusage ru;
	rlim_t cpu = RLIM_INFINITY;

	if (as > p->o->max_memory)
		as = p->o->max_memory;
	if (m->max_time > 0 && getrusage(RUSAGE_SELF, &ru) == 0) {
		double used = (double)ru.ru_utime.tv_sec + (double)ru.ru_stime.tv_sec + 1;

		cpu = (rlim_t)ceil(used + m->max_time * ofc_cpu_count()) + 5;
	}
	if (limit_to(RLIMIT_AS, as + p->room, false, "RLIMIT_AS", err) < 0 ||
	    limit_to(RLIMIT_CPU, cpu, false, "RLIMIT_CPU", err) < 0)
		return -1;
	return 0;
}

/* The job's fabric: the last one where ofcd sent the same. */
static int job_fabric(struct planner *p, const Ofc__V1__PlannerJob *m, struct ofc_error *err)
{
	Ofc__V1__PlannerFabric *fm;

	if (p->f && p->key_len == m->fabric.len && memcmp(p->key, m->fabric.data, p->key_len) == 0)
		return 0;
	fabric_free(p->f);
	free(p->key);
	p->f = NULL;
	p->key = NULL;
	p->key_len = 0;
	if (!(fm = ofc__v1__planner_fabric__unpack(NULL, m->fabric.len, m->fabric.data)))
		return ofc_error_set(err, OFC_E_INPUT, "the job's fabric does not unpack");
	int rc = planner_fabric_build(fm, &p->files, &p->f, err);

	ofc__v1__planner_fabric__free_unpacked(fm, NULL);
	if (rc < 0)
		return -1;
	p->key = xmalloc(m->fabric.len ? m->fabric.len : 1);
	memcpy(p->key, m->fabric.data, m->fabric.len);
	p->key_len = m->fabric.len;
	return 0;
}

static void refuse(struct job *j, const char *msg)
{
	Ofc__V1__Response resp = OFC__V1__RESPONSE__INIT;

	resp.has_id = resp.has_status = 1;
	resp.id = j->req_id;
	resp.status = OFC__V1__STATUS__STATUS_INTERNAL;
	resp.message = (char *)msg;
	response_pack(&resp, &j->reply, &j->reply_len);
}

/* A stream's Response, sent to ofcd as it is made. */
static bool emit(void *ctx, const Ofc__V1__Response *r)
{
	const struct planner *p = ctx;
	struct ofc_error err = {0};
	uint8_t *buf;
	size_t len;
	int rc;

	response_pack(r, &buf, &len);
	rc = frame_send(p->o->fd, buf, len, len, now_seconds() + 3600, &err);
	free(buf);
	return rc == 0;
}

static uint8_t *packed(const ProtobufCMessage *ans, size_t *len)
{
	uint8_t *buf;

	*len = protobuf_c_message_get_packed_size(ans);
	buf = xmalloc(*len ? *len : 1);
	protobuf_c_message_pack(ans, buf);
	return buf;
}

/* The refusal of a job whose fabric or limits cannot be set, in its
 * answer's message: the state's schedule a PlannerStateSchedule; a
 * summary, MoveToPhase's plan, a pick, a renumbering or a testbed's
 * schedule their own; else (the workload's
 * schedule, a re-plan) a PlannerReplan. */
static uint8_t *refused(const Ofc__V1__PlannerJob *m, const struct ofc_error *e, size_t *len)
{
	Ofc__V1__PlannerStateSchedule st = OFC__V1__PLANNER_STATE_SCHEDULE__INIT;
	Ofc__V1__PlannerReplan a = OFC__V1__PLANNER_REPLAN__INIT;
	Ofc__V1__PlannerSummary b = OFC__V1__PLANNER_SUMMARY__INIT;
	Ofc__V1__PlannerPhase ph = OFC__V1__PLANNER_PHASE__INIT;
	Ofc__V1__PlannerPick pk = OFC__V1__PLANNER_PICK__INIT;
	Ofc__V1__PlannerRelabel rl = OFC__V1__PLANNER_RELABEL__INIT;
	Ofc__V1__PlannerTestbed tb = OFC__V1__PLANNER_TESTBED__INIT;
	char why[sizeof(e->msg) + 64], line[sizeof(why) + 32];

	snprintf(why, sizeof(why), "%sthe planner process cannot compute it: %s",
		 m->summary || m->state_schedule ? "" : "no schedule: ", e->msg);
	if (m->state_schedule) {
		snprintf(line, sizeof(line), "the state's schedule: %s", why);
		st.why = why;
		st.line = line;
		return packed(&st.base, len);
	}
	a.message = b.why = ph.why = pk.why = rl.why = tb.error = why;
	rl.has_ok = 1;
	return packed(m->summary		  ? &b.base
		      : m->to_phase		  ? &ph.base
		      : m->pick || m->config_pick ? &pk.base
		      : m->relabel		  ? &rl.base
		      : m->testbed		  ? &tb.base
						  : &a.base,
		      len);
}

/* A job answered by one packed message (the state's schedule, the
 * workload's schedule or a re-plan, a summary, MoveToPhase's plan, a
 * pick, a config's pick, a renumbering, a testbed's schedule), computed on the job's fabric
 * under its limits, sent back. */
static int serve_answer(struct planner *p, const Ofc__V1__PlannerJob *m)
{
	struct ofc_error err = {0};
	uint8_t *buf;
	size_t len;
	int rc;

	/* (a config's pick has no fabric: its config is not valid before) */
	if (job_limits(p, m, &err) < 0 || (!m->config_pick && job_fabric(p, m, &err) < 0)) {
		buf = refused(m, &err, &len);
	} else {
		struct fabcfg c = {.f = p->f,
				   .coll = (enum sched_collective)m->collective,
				   .size = m->size_bytes,
				   .nfailed = m->nfailed,
				   .max_memory = m->max_memory};

		buf = m->state_schedule
			  ? state_schedule_compute(&c, m->topology, p->o->state_hook, &len)
		      : m->summary     ? planner_summary_compute(&c, &p->files, m, &len)
		      : m->to_phase    ? planner_phase_compute(&c, m, &len)
		      : m->pick	       ? planner_pick_compute(&c, m, &len)
		      : m->config_pick ? planner_config_pick_compute(m, &len)
		      : m->relabel     ? planner_relabel_compute(&c, &p->files, m, p->o->cut_us, &len)
		      : m->testbed     ? planner_testbed_compute(&c, m, &len)
				       : planner_replan_compute(&c, m, &len);
	}
	rc = frame_send(p->o->fd, buf, len, len, now_seconds() + 3600, &err);
	free(buf);
	return rc;
}

/* One job: its answer sent back (a stream's frames, then an empty one).
 * -1 when ofcd is gone or sent garbage. */
static int serve_one(struct planner *p, const uint8_t *buf, size_t len)
{
	Ofc__V1__PlannerJob *m = ofc__v1__planner_job__unpack(NULL, len, buf);
	struct ofc_error err = {0};
	struct fabcfg c = {0};
	struct job j = {0};
	int rc = 0;

	if (!m)
		return -1;
	if (m->state_schedule || m->replan || m->summary || m->to_phase || m->pick || m->relabel ||
	    m->testbed || m->config_pick) {
		rc = serve_answer(p, m);
		ofc__v1__planner_job__free_unpacked(m, NULL);
		return rc;
	}
	j.kind = JOB_SCHEDULE;
	j.req_id = m->id;
	j.coll = (enum sched_collective)m->collective;
	j.algo = m->algorithm;
	j.lowering = m->lowering;
	j.spec = m->topology;
	j.spec_from_client = m->topology_from_client;
	j.size = m->size_bytes;
	j.chunks = m->chunks;
	j.summary_only = m->summary_only;
	j.reduced = m->reduced;
	j.max_memory = m->max_memory;
	j.max_time = m->max_time;
	j.max_frame = m->max_frame;
	j.streamed = m->stream;
	j.node_names = m->node_names;
	j.nnode_names = (uint32_t)m->n_node_names;
	if (job_limits(p, m, &err) < 0 || job_fabric(p, m, &err) < 0) {
		char msg[sizeof(err.msg) + 64];

		snprintf(msg, sizeof(msg), "the planner process cannot take the request: %s",
			 err.msg);
		refuse(&j, msg);
	} else {
		c.f = p->f;
		c.nfailed = m->nfailed;
		j.cfg = &c;
		if (m->get_plan) {
			ofcd_run_get_plan(&j);
		} else if (m->stream) {
			struct stream_out out = {emit, p};

			stream_produce(&p->files, &j, &out);
		} else if (job_fluid(&j)) {
			ofcd_run_schedule_fluid(&j);
		} else {
			ofcd_run_schedule(&p->files, &j);
		}
	}
	bool stream = m->stream;

	ofc__v1__planner_job__free_unpacked(m, NULL);
	if (j.reply)
		rc = frame_send(p->o->fd, j.reply, j.reply_len, j.reply_len, now_seconds() + 3600,
				&err);
	if (rc == 0 && stream)
		rc = frame_send(p->o->fd, "", 0, 0, now_seconds() + 3600, &err);
	free(j.reply_buf ? j.reply_buf : j.reply);
	return rc;
}

int planner_serve(const struct planner_serve_opts *o, struct ofc_error *err)
{
	struct planner p = {.o = o, .files = {.dirfd = -1, .why = "ofcd --topology-dir"}};
	uint8_t *buf = NULL;
	size_t cap = 0, len;
	int rc = 0;

	if (o->topology_dir) {
		p.files.dirfd = open(o->topology_dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (p.files.dirfd < 0)
			return ofc_error_set(err, OFC_E_RUNTIME, "--topology-dir %s: %s",
					     o->topology_dir, strerror(errno));
		p.files.dir = o->topology_dir;
	}
	if (confine(&p, err) < 0)
		rc = -1;
	/* (waits for ofcd's next job as long as ofcd runs: it closes the
	 * socket when it ends, and the read sees the end) */
	while (rc == 0 && frame_recv(o->fd, &buf, &cap, &len, PLANNER_JOB_MAX, 0, err) == 0)
		if (serve_one(&p, buf, len) < 0)
			break;
	if (err->reason == OFC_R_CLOSED)
		ofc_error_clear(err);
	free(buf);
	free(p.key);
	fabric_free(p.f);
	if (p.files.dirfd >= 0)
		close(p.files.dirfd);
	return rc;
}
