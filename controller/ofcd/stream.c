/* Streamed GetSchedule (GetSchedule.stream): a thread of its own starts a
 * planner process for the stream (planner_proc.c), which computes the
 * schedule and makes its frames (stream_produce.c), and hands the loop the
 * frames the planner sends, one at a time, up to the planner's empty
 * frame that ends them. A planner that ends before it (killed, crashed,
 * past its limits) ends the stream with a FAILED frame that says so.
 *
 * Memory: one frame in ofcd; the loop holds at most STREAM_WINDOW frames
 * for the client beyond what it has read, because the thread waits for
 * the loop to acknowledge each frame once the client's unsent answers are
 * below OUT_HIGH (conn_io.c stream_ack), and reads the planner's next
 * frame only then (the planner waits on the socket meanwhile). A client
 * that stops reading is cut by the usual client timeout, which cancels
 * the stream and kills its planner.
 *
 * Lifetime: the job (and its struct stream) is the thread's until it posts
 * the finished job; ofcd_close marks a live stream orphaned under its mutex
 * and the thread then frees it instead of posting (the planner's pattern,
 * planner.c). */
#include "controller/ofcd/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define STREAM_WINDOW 2

/* Post a note while the daemon is there to take it (under st->mu). */
static bool post(struct stream *st, struct note *n)
{
	bool ok;

	pthread_mutex_lock(&st->mu);
	ok = !st->orphan;
	if (ok)
		ofcd_note(st->d, n);
	pthread_mutex_unlock(&st->mu);
	if (!ok)
		note_free(n);
	return ok;
}

/* Hand one packed Response (msg, len bytes: taken) to the loop, after
 * waiting (at most `wait` seconds) for room in the window. false:
 * cancelled (the client went away, the daemon stops) or the wait ran out. */
static bool send_bytes(struct stream *st, uint8_t *msg, size_t len, double wait)
{
	struct note *n = xcalloc(1, sizeof(*n));
	double end = now_seconds() + wait;

	pthread_mutex_lock(&st->mu);
	while (st->inflight >= STREAM_WINDOW && !st->cancel && !st->orphan) {
		struct timespec ts;
		double left = end - now_seconds();

		if (left <= 0) {
			st->cancel = true;
			break;
		}
		clock_gettime(CLOCK_REALTIME, &ts);
		double t = (double)ts.tv_sec + ts.tv_nsec / 1e9 + (left < 1 ? left : 1);
		ts.tv_sec = (time_t)t;
		ts.tv_nsec = (long)((t - (double)ts.tv_sec) * 1e9);
		pthread_cond_timedwait(&st->cond, &st->mu, &ts);
	}
	bool go = !st->cancel && !st->orphan;
	if (go)
		st->inflight++;
	pthread_mutex_unlock(&st->mu);
	if (!go) {
		free(n);
		free(msg);
		return false;
	}
	n->sched = msg;
	n->sched_len = len;
	n->stream = st;
	n->stream_conn = st->conn_id;
	return post(st, n);
}

/* The stream's last frame when its planner gave none: a FAILED Response
 * saying why (msg). */
static void send_failed(struct stream *st, const struct job *j, const char *msg)
{
	Ofc__V1__Response r = OFC__V1__RESPONSE__INIT;
	uint8_t *buf;
	size_t len;

	r.has_id = r.has_status = 1;
	r.id = j->req_id;
	r.status = OFC__V1__STATUS__STATUS_FAILED;
	r.message = (char *)msg;
	response_pack(&r, &buf, &len);
	send_bytes(st, buf, len, st->wait);
}

/* Forward the planner's frames until its empty one; false when it ended
 * first (why says how) or the stream was cancelled (why ""). */
static bool forward(struct stream *st, struct planner_proc *p, const struct job *j, char *why,
		    size_t n)
{
	double limit = planner_wait(j);
	struct ofc_error err = {0};

	for (;;) {
		uint8_t *buf = NULL;
		size_t cap = 0, len;

		if (frame_recv(p->fd, &buf, &cap, &len, (size_t)j->max_frame + 4096,
			       now_seconds() + limit, &err) < 0) {
			free(buf);
			planner_end(p, true, why, n);
			if (err.reason == OFC_R_TIMEOUT)
				snprintf(why, n, "did not answer within %.0f s", limit);
			return false;
		}
		if (len == 0) {
			free(buf);
			return true;
		}
		if (!send_bytes(st, buf, len, st->wait)) {
			planner_end(p, true, NULL, 0);
			*why = 0;
			return false;
		}
	}
}

static void *stream_main(void *arg)
{
	struct job *j = arg;
	struct stream *st = j->stream;
	struct planner_proc p = {.pid = 0, .fd = -1};
	struct ofc_error err = {0};
	char why[160] = "", msg[sizeof(err.msg) + 200];

	ofc_thread_name("ofcd-stream");
	if (planner_send(&st->how, &p, j, true, now_seconds() + planner_wait(j), &err) < 0) {
		send_failed(st, j, err.msg);
	} else if (!forward(st, &p, j, why, sizeof(why)) && *why) {
		snprintf(msg, sizeof(msg),
			 "the planner process computing this schedule %s before the stream's "
			 "end; ofcd and its other requests go on: ask again, or for less",
			 why);
		send_failed(st, j, msg);
	}
	planner_end(&p, false, NULL, 0);
	/* Done: the job goes back to the loop (ofcd_job_done), or is freed here
	 * when the daemon let go of it. */
	struct note *n = xcalloc(1, sizeof(*n));
	n->job = j;
	pthread_mutex_lock(&st->mu);
	bool orphan = st->orphan;
	if (!orphan)
		ofcd_note(st->d, n);
	pthread_mutex_unlock(&st->mu);
	if (orphan)
		note_free(n); /* frees the job and its stream */
	return NULL;
}

int stream_start(struct job *j)
{
	pthread_attr_t at;
	pthread_t t;
	int rc;

	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	rc = pthread_create(&t, &at, stream_main, j);
	pthread_attr_destroy(&at);
	return rc == 0 ? 0 : -1;
}
