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

/* How long past its time limit a planner may take to answer (packing a
 * large reply, a slow machine) before ofcd gives up on it and kills it;
 * a request with no time limit waits at most a day, ofcd's longest. */
#define PLANNER_GRACE	30.0
#define PLANNER_LONGEST 86400.0

double planner_wait(const struct job *j)
{
	return j->max_time > 0 ? j->max_time + PLANNER_GRACE : PLANNER_LONGEST;
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
	m.n_node_names = j->nnode_names;
	m.node_names = j->node_names;
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

int planner_send(const struct planner_how *h, struct planner_proc *p, const struct job *j,
		 bool stream, double deadline, struct ofc_error *err)
{
	size_t len;
	uint8_t *buf = job_pack(j, stream, &len);
	struct ofc_error e = {0};
	int rc = planner_send_frame(h, p, buf, len, deadline, &e);

	free(buf);
	if (rc == 0)
		return 0;
	return ofc_error_set(err, e.code,
			     rc == -2 ? "the planner process %s before it took the request"
				      : "the planner process cannot take the request: %s",
			     e.msg);
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
		refuse(j, OFC__V1__STATUS__STATUS_INTERNAL, err.msg);
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
