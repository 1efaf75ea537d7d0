/* A streamed GetSchedule's frames, made in the planner process
 * (planner_serve.c; ofcd's stream thread forwards them, stream.c): the
 * schedule computed as ofcd_run_schedule does (a server fabric's as
 * ofcd_run_schedule_fluid does: its period), then one frame at a time:
 * the status, message and header (every figure, no steps), then the
 * steps, at most STREAM_TRANSFERS transfers a frame (a frame with
 * continues_step adds to the previous frame's step), then an empty last
 * frame. Every frame but the last has `more`. A fluid schedule's steps are
 * made from its period one at a time: the frames its expansion would give.
 *
 * Memory: the schedule as computed (what `ofc schedule` holds too; a fluid
 * schedule's period and its largest step) and one frame's messages while
 * it is packed. */
#include "controller/ofcd/internal.h"

#include <stdio.h>
#include <stdlib.h>

#define STREAM_TRANSFERS 16384

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
static bool send_steps(struct stream_out *out, const struct job *j, struct steps_src *src)
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
			sent = out->emit(out->ctx, &r);
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
static int stream_compute(const struct topo_files *files, struct job *j, struct schedule_result *r,
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
	if (ofcd_schedule_compute(files, j, &clk, r, resp, a) < 0)
		return -1;
	resp->schedule = ofcd_schedule_head(a, r, j, ofcd_expanded(j, r));
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

void stream_produce(const struct topo_files *files, struct job *j, struct stream_out *out)
{
	struct schedule_result r;
	struct fluid_answer fa = {0};
	struct sched_stream made;
	struct ofcd_patched pat;
	struct steps_src src = {0};
	Ofc__V1__Response resp = OFC__V1__RESPONSE__INIT;
	struct arena a = {0};
	bool fluid = job_fluid(j), computed;

	resp.has_id = resp.has_status = 1;
	resp.id = j->req_id;
	computed = stream_compute(files, j, &r, &fa, &made, &pat, &src, &resp, &a) == 0;
	if (computed) {
		resp.has_more = 1;
		resp.more = true;
	}
	bool sent = out->emit(out->ctx, &resp);
	if (computed && sent && send_steps(out, j, &src)) {
		Ofc__V1__Response end = OFC__V1__RESPONSE__INIT;
		char msg[200];

		snprintf(msg, sizeof(msg), "%u steps, %zu transfers streamed", src.nsteps,
			 src.nxfers);
		end.has_id = end.has_status = end.has_more = 1;
		end.id = j->req_id;
		end.status = OFC__V1__STATUS__STATUS_OK;
		end.message = msg;
		out->emit(out->ctx, &end);
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
}
