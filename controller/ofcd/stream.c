/* Streamed GetSchedule (GetSchedule.stream): a thread of its own
 * computes the schedule as ofcd_run_schedule does, then hands the loop one frame
 * at a time: the status, message and header (every figure, no steps), then
 * the steps, at most STREAM_TRANSFERS transfers a frame (a frame with
 * continues_step adds to the previous frame's step), then an empty last
 * frame. Every frame but the last has `more`.
 *
 * Memory: the schedule as computed (what `ofc schedule` holds too) and one
 * step's message tree while its frames are packed; the loop holds at most
 * STREAM_WINDOW frames for the client beyond what it has read, because the
 * thread waits for the loop to acknowledge each frame once the client's
 * unsent answers are below OUT_HIGH (conn_io.c stream_ack). A client that
 * stops reading is cut by the usual client timeout, which cancels the
 * stream.
 *
 * Lifetime: the job (and its struct stream) is the thread's until it posts
 * the finished job; ofcd_close marks a live stream orphaned under its mutex
 * and the thread then frees it instead of posting (the planner's pattern,
 * planner.c). */
#include "controller/ofcd/internal.h"

#include <stdlib.h>
#include <time.h>

#define STREAM_TRANSFERS 16384
#define STREAM_WINDOW	 2

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

/* Hand one packed Response to the loop, after waiting (at most `wait`
 * seconds) for room in the window. false: cancelled (the client went away,
 * the daemon stops) or the wait ran out. */
static bool send_frame(struct stream *st, const Ofc__V1__Response *r, double wait)
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
		return false;
	}
	response_pack(r, &n->sched, &n->sched_len);
	n->stream = st;
	n->stream_conn = st->conn_id;
	return post(st, n);
}

static bool send_steps(struct stream *st, const struct job *j, const struct schedule *s,
		       double wait)
{
	uint32_t chunk = STREAM_TRANSFERS;

	if (chunk > j->max_frame / 64)
		chunk = j->max_frame / 64 ? j->max_frame / 64 : 1;
	for (uint32_t t = 0; t < s->nsteps; t++) {
		struct arena a = {0};
		Ofc__V1__Step *step = schedule_step_msg(&a, s, t)->steps[0];
		size_t n = step->n_transfers, off = 0;

		do {
			Ofc__V1__Response r = OFC__V1__RESPONSE__INIT;
			Ofc__V1__Schedule m = OFC__V1__SCHEDULE__INIT;
			Ofc__V1__Step part = OFC__V1__STEP__INIT, *pp = &part;
			size_t k = n - off < chunk ? n - off : chunk;

			part.n_transfers = k;
			part.transfers = step->transfers + off;
			m.n_steps = 1;
			m.steps = &pp;
			r.has_id = r.has_more = 1;
			r.id = j->req_id;
			r.more = true;
			if (off) {
				r.has_continues_step = 1;
				r.continues_step = true;
			}
			r.body_case = OFC__V1__RESPONSE__BODY_SCHEDULE;
			r.schedule = &m;
			if (!send_frame(st, &r, wait)) {
				arena_free(&a);
				return false;
			}
			off += k;
		} while (off < n);
		arena_free(&a);
	}
	return true;
}

static void *stream_main(void *arg)
{
	struct job *j = arg;
	struct stream *st = j->stream;
	struct ofc_clock clk = {0};
	struct schedule_result r;
	Ofc__V1__Response resp = OFC__V1__RESPONSE__INIT;
	struct arena a = {0};
	double wait = st->wait;
	bool computed;

	resp.has_id = resp.has_status = 1;
	resp.id = j->req_id;
	computed = ofcd_schedule_compute(&st->files, j, &clk, &r, &resp, &a) == 0;
	if (computed) {
		resp.has_more = 1;
		resp.more = true;
		resp.body_case = OFC__V1__RESPONSE__BODY_SCHEDULE;
		resp.schedule = ofcd_schedule_head(&a, &r);
	}
	bool sent = send_frame(st, &resp, wait);
	if (computed && sent && send_steps(st, j, &r.main->s, wait)) {
		Ofc__V1__Response end = OFC__V1__RESPONSE__INIT;
		char msg[200];

		snprintf(msg, sizeof(msg), "%u steps, %zu transfers streamed", r.main->s.nsteps,
			 r.main->s.nxfers);
		end.has_id = end.has_status = end.has_more = 1;
		end.id = j->req_id;
		end.status = OFC__V1__STATUS__STATUS_OK;
		end.message = msg;
		send_frame(st, &end, wait);
	}
	arena_free(&a);
	if (computed)
		schedule_result_free(&r);
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
