/* libofc-mpi: a job's schedules from ofcd (OFC_SCHEDULE=ofcd).
 *
 * Rank 0 asks ofcd's socket (OFC_SOCKET, else /run/ofc/ofcd.sock) for each
 * collective's schedule with a GetSchedule request of ofc.v1's control
 * protocol, for the job's partition: OFC_PARTITION, else slurm-job-ID from
 * SLURM_JOB_ID (as ofc's Slurm prolog names it), else the whole fabric.
 * Frames are a 4-byte big-endian length and a message packed and unpacked
 * by protobuf-c (proto/control.proto), as ofcd reads them; every wait has
 * a deadline (OFC_MPI_OFCD_TIMEOUT seconds, 30 by default). The schedules
 * are asked for OFC_MPI_SIZE bytes a rank (1 MiB by default): what the
 * engines plan for; a schedule serves any size. */
#include "exec/mpi/pmpi.h"

#include "proto/control.pb-c.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define OFCD_SOCKET_DEFAULT "/run/ofc/ofcd.sock"
#define OFCD_FRAME_MAX	    (512u << 20)

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* All of buf written (out) or read (!out) by the deadline. */
static int io_all(int fd, uint8_t *buf, size_t len, bool out, double deadline)
{
	size_t done = 0;

	while (done < len) {
		struct pollfd p = {.fd = fd, .events = out ? POLLOUT : POLLIN};
		int ms = (int)((deadline - now()) * 1000);
		ssize_t n;

		if (ms <= 0 || poll(&p, 1, ms) <= 0)
			return -1;
		n = out ? send(fd, buf + done, len - done, MSG_NOSIGNAL)
			: recv(fd, buf + done, len - done, 0);
		if (n <= 0 && !(n < 0 && (errno == EINTR || errno == EAGAIN)))
			return -1;
		done += n > 0 ? (size_t)n : 0;
	}
	return 0;
}

static const char *socket_path(void)
{
	const char *p = getenv("OFC_SOCKET");

	return p && *p ? p : OFCD_SOCKET_DEFAULT;
}

const char *pmpi_ofcd_partition(char *buf, size_t n)
{
	const char *p = getenv("OFC_PARTITION"), *job = getenv("SLURM_JOB_ID");

	if (p && *p)
		return p;
	if (job && *job) {
		snprintf(buf, n, "slurm-job-%s", job);
		return buf;
	}
	return NULL;
}

static double timeout(void)
{
	const char *t = getenv("OFC_MPI_OFCD_TIMEOUT");
	double v = t ? atof(t) : 0;

	return v > 0 ? v : 30;
}

/* The size the schedules are asked for: OFC_MPI_SIZE bytes, else 1 MiB. */
static uint64_t size_bytes(void)
{
	const char *e = getenv("OFC_MPI_SIZE");
	unsigned long long v = e ? strtoull(e, NULL, 10) : 0;

	return v ? v : 1u << 20;
}

/* The request sent, the answer's frame read; NULL with why. */
static uint8_t *call(Ofc__V1__Request *req, size_t *len, char *why, size_t n)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	double deadline = now() + timeout();
	const char *path = socket_path();
	uint8_t head[4], *frame = NULL, *ans = NULL;
	size_t plen;
	uint32_t alen;
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

	req->has_id = 1;
	req->id = 1;
	if (getenv("OFC_GATEWAY") && *getenv("OFC_GATEWAY")) {
		uint8_t *body;

		if (fd >= 0)
			close(fd);
		plen = ofc__v1__request__get_packed_size(req);
		if (!(body = calloc(plen ? plen : 1, 1)))
			abort();
		ofc__v1__request__pack(req, body);
		ans = pmpi_gateway_call(body, plen, len, timeout(), why, n);
		free(body);
		return ans;
	}
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
	if (fd < 0 || (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0 && errno != EINPROGRESS)) {
		snprintf(why, n, "ofcd at %s: %s", path, strerror(errno));
		goto out;
	}
	plen = ofc__v1__request__get_packed_size(req);
	frame = calloc(plen + 4, 1);
	if (!frame)
		abort();
	frame[0] = (uint8_t)(plen >> 24), frame[1] = (uint8_t)(plen >> 16);
	frame[2] = (uint8_t)(plen >> 8), frame[3] = (uint8_t)plen;
	ofc__v1__request__pack(req, frame + 4);
	if (io_all(fd, frame, plen + 4, true, deadline) < 0 ||
	    io_all(fd, head, 4, false, deadline) < 0) {
		snprintf(why, n, "ofcd at %s: no answer within %.0f s", path, timeout());
		goto out;
	}
	alen = (uint32_t)head[0] << 24 | (uint32_t)head[1] << 16 | (uint32_t)head[2] << 8 | head[3];
	if (alen > OFCD_FRAME_MAX) {
		snprintf(why, n, "ofcd at %s: an answer of %u bytes", path, alen);
		goto out;
	}
	ans = calloc(alen ? alen : 1, 1);
	if (!ans)
		abort();
	if (io_all(fd, ans, alen, false, deadline) < 0) {
		snprintf(why, n, "ofcd at %s: the answer was cut short", path);
		free(ans);
		ans = NULL;
		goto out;
	}
	*len = alen;
out:
	free(frame);
	if (fd >= 0)
		close(fd);
	return ans;
}

static uint8_t *ask(const char *collective, const char *partition, const char *job, bool taking,
		    size_t *len, char *why, size_t n)
{
	Ofc__V1__Request req = OFC__V1__REQUEST__INIT;
	Ofc__V1__GetSchedule gs = OFC__V1__GET_SCHEDULE__INIT;

	gs.collective = (char *)collective;
	gs.partition = (char *)partition;
	/* (what the engines plan for; the schedule serves any size) */
	gs.has_size_bytes = 1;
	gs.size_bytes = size_bytes();
	gs.job = job && *job ? (char *)job : NULL;
	gs.has_taking = 1;
	gs.taking = taking;
	req.body_case = OFC__V1__REQUEST__BODY_GET_SCHEDULE;
	req.get_schedule = &gs;
	return call(&req, len, why, n);
}

int pmpi_ofcd_report(Ofc__V1__ReportMpi *r, char *why, size_t n)
{
	Ofc__V1__Request req = OFC__V1__REQUEST__INIT;
	Ofc__V1__Response *resp;
	size_t alen = 0;
	uint8_t *ans;
	int rc = -1;

	req.body_case = OFC__V1__REQUEST__BODY_REPORT_MPI;
	req.report_mpi = r;
	if (!(ans = call(&req, &alen, why, n)))
		return -1;
	resp = ofc__v1__response__unpack(NULL, alen, ans);
	free(ans);
	if (!resp)
		snprintf(why, n, "ofcd at %s: its answer is not an ofc.v1.Response", socket_path());
	else if (resp->status != OFC__V1__STATUS__STATUS_OK)
		snprintf(why, n, "ofcd refused it: %s",
			 resp->message ? resp->message : "(no message)");
	else {
		snprintf(why, n, "%s", resp->message ? resp->message : "kept");
		rc = 0;
	}
	if (resp)
		ofc__v1__response__free_unpacked(resp, NULL);
	return rc;
}

uint8_t *pmpi_ofcd_schedule(const char *collective, const char *job, bool taking, size_t *len,
			    bool *unreachable, char *why, size_t n)
{
	char buf[128];
	const char *partition = pmpi_ofcd_partition(buf, sizeof(buf));
	size_t alen = 0;
	uint8_t *ans = ask(collective, partition, job, taking, &alen, why, n), *out = NULL;
	Ofc__V1__Response *r;

	*unreachable = !ans;
	if (!ans)
		return NULL;
	r = ofc__v1__response__unpack(NULL, alen, ans);
	free(ans);
	if (!r)
		snprintf(why, n, "ofcd at %s: its answer is not an ofc.v1.Response", socket_path());
	else if (r->status != OFC__V1__STATUS__STATUS_OK ||
		 r->body_case != OFC__V1__RESPONSE__BODY_SCHEDULE)
		snprintf(why, n, "ofcd: no %s schedule%s%s: %s", collective,
			 partition ? " for partition " : "", partition ? partition : "",
			 r->message ? r->message : "no schedule in the answer");
	else {
		*len = ofc__v1__schedule__get_packed_size(r->schedule);
		out = calloc(*len ? *len : 1, 1);
		if (!out)
			abort();
		ofc__v1__schedule__pack(r->schedule, out);
	}
	if (r)
		ofc__v1__response__free_unpacked(r, NULL);
	return out;
}
