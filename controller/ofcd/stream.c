/* Streamed GetSchedule (GetSchedule.stream): a thread of its own
 * computes the schedule as ofcd_run_schedule does (a server fabric's as
 * ofcd_run_schedule_fluid does: its period), then hands the loop one frame
 * at a time: the status, message and header (every figure, no steps), then
 * the steps, at most STREAM_TRANSFERS transfers a frame (a frame with
 * continues_step adds to the previous frame's step), then an empty last
 * frame. Every frame but the last has `more`. A fluid schedule's steps are
 * made from its period one at a time: the frames its expansion would give.
 *
 * Memory: the schedule as computed (what `ofc schedule` holds too; a fluid
 * schedule's period and its largest step) and one frame's messages while
 * it is packed; the loop holds at most
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

/* Where the streamed steps come from: a schedule as computed, or one made
 * a step at a time (a fluid schedule's period) into buf, its largest
 * step's room. */
struct steps_src {
	const struct schedule *head; /* how blocks read; the steps when !made */
	uint32_t nsteps;
	size_t nxfers;
	const struct sched_stream *made;
	struct xfer *buf;
};

static const struct xfer *src_step(struct steps_src *src, uint32_t t, size_t *n)
{
	const struct schedule *s = src->head;

	if (src->made) {
		src->made->fill(src->made->ctx, t, src->buf);
		*n = src->made->count[t];
		return src->buf;
	}
	*n = sched_step_size(s, t);
	return *n ? &s->xfers[s->step_start[t]] : NULL;
}

/* The steps, a frame of at most chunk transfers at a time, each frame's
 * messages made as it is packed. */
static bool send_steps(struct stream *st, const struct job *j, struct steps_src *src, double wait)
{
	uint32_t chunk = STREAM_TRANSFERS;

	if (chunk > j->max_frame / 64)
		chunk = j->max_frame / 64 ? j->max_frame / 64 : 1;
	for (uint32_t t = 0; t < src->nsteps; t++) {
		size_t n, off = 0;
		const struct xfer *xs = src_step(src, t, &n);

		do {
			Ofc__V1__Response r = OFC__V1__RESPONSE__INIT;
			Ofc__V1__Schedule m = OFC__V1__SCHEDULE__INIT;
			struct arena a = {0};
			size_t k = n - off < chunk ? n - off : chunk;
			Ofc__V1__Step *part =
			    schedule_transfers_msg(&a, src->head, k ? xs + off : NULL, k);
			bool sent;

			m.n_steps = 1;
			m.steps = &part;
			r.has_id = r.has_more = 1;
			r.id = j->req_id;
			r.more = true;
			if (off) {
				r.has_continues_step = 1;
				r.continues_step = true;
			}
			r.body_case = OFC__V1__RESPONSE__BODY_SCHEDULE;
			r.schedule = &m;
			sent = send_frame(st, &r, wait);
			arena_free(&a);
			if (!sent)
				return false;
			off += k;
		} while (off < n);
	}
	return true;
}

/* The schedule j asks for, computed (the pipeline's, held whole) or
 * planned (the fluid engine's period, made a step at a time as it is
 * sent): 0 with resp's status, message and head and src the steps; -1
 * with resp's refusal. */
static int stream_compute(struct stream *st, struct job *j, struct schedule_result *r,
			  struct fluid_answer *fa, struct sched_stream *made,
			  struct ofcd_patched *pat, struct steps_src *src, Ofc__V1__Response *resp,
			  struct arena *a)
{
	struct ofc_clock clk = {0};

	if (job_fluid(j)) {
		if (ofcd_fluid_compute(j, fa, resp, a) < 0)
			return -1;
		/* schedule_fluid plans from the period; nothing here expanded it */
		if (!fluid_answer_stream(fa, made)) {
			resp->status = OFC__V1__STATUS__STATUS_INTERNAL;
			resp->message = "the fluid schedule has no period to answer from";
			resp->body_case = OFC__V1__RESPONSE__BODY__NOT_SET;
			return -1;
		}
		*src = (struct steps_src){.head = made->head,
					  .nsteps = made->nsteps,
					  .nxfers = fluid_answer_transfers(fa),
					  .made = made,
					  .buf = sched_stream_step_buffer(made)};
		return 0;
	}
	if (ofcd_schedule_compute(&st->files, j, &clk, r, resp, a) < 0)
		return -1;
	resp->schedule = ofcd_schedule_head(a, r, ofcd_expanded(j, r));
	resp->body_case = OFC__V1__RESPONSE__BODY_SCHEDULE;
	if (ofcd_expanded(j, r)) {
		/* the healthy program and a patch, or a reduced one not asked
		 * for: its expansion a step at a time */
		ofcd_patched_open(pat, r->main);
		*src = (struct steps_src){.head = pat->st.head,
					  .nsteps = pat->st.nsteps,
					  .nxfers = r->main->ntransfers,
					  .made = &pat->st,
					  .buf = sched_stream_step_buffer(&pat->st)};
		return 0;
	}
	*src = (struct steps_src){
	    .head = &r->main->s, .nsteps = r->main->s.nsteps, .nxfers = r->main->s.nxfers};
	return 0;
}

static void *stream_main(void *arg)
{
	struct job *j = arg;
	struct stream *st = j->stream;
	struct schedule_result r;
	struct fluid_answer fa = {0};
	struct sched_stream made;
	struct ofcd_patched pat;
	struct steps_src src = {0};
	Ofc__V1__Response resp = OFC__V1__RESPONSE__INIT;
	struct arena a = {0};
	double wait = st->wait;
	bool fluid = job_fluid(j), computed;

	resp.has_id = resp.has_status = 1;
	resp.id = j->req_id;
	computed = stream_compute(st, j, &r, &fa, &made, &pat, &src, &resp, &a) == 0;
	if (computed) {
		resp.has_more = 1;
		resp.more = true;
	}
	bool sent = send_frame(st, &resp, wait);
	if (computed && sent && send_steps(st, j, &src, wait)) {
		Ofc__V1__Response end = OFC__V1__RESPONSE__INIT;
		char msg[200];

		snprintf(msg, sizeof(msg), "%u steps, %zu transfers streamed", src.nsteps,
			 src.nxfers);
		end.has_id = end.has_status = end.has_more = 1;
		end.id = j->req_id;
		end.status = OFC__V1__STATUS__STATUS_OK;
		end.message = msg;
		send_frame(st, &end, wait);
	}
	arena_free(&a);
	free(src.buf);
	if (fluid) {
		fluid_answer_free(&fa);
	} else if (computed) {
		if (ofcd_expanded(j, &r))
			ofcd_patched_close(&pat);
		schedule_result_free(&r);
	}
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
