/* The schedule worker's jobs: GetSchedule answered with one Response
 * holding the whole ofc.v1.Schedule, from the pipeline or, on a server
 * fabric, the fluid engine (packed a step at a time from its period), and
 * the computations the streams share. */
#include "controller/export/export.h"
#include "controller/ofcd/internal.h"

#include <stdlib.h>
#include <string.h>

/* The answer to GetSchedule: one Response holding the whole ofc.v1.Schedule.
 * (Concatenated pieces would merge under the protobuf rules, but protobuf-c
 * replaces a oneof member seen twice instead of merging it, so clients
 * built on it would lose all but the last piece.) The message tree is
 * built only when the schedule can fit in a frame: every transfer packs to
 * at least MIN_TRANSFER_BYTES (internal.h). */

/* The reply's message tree holds every transfer at once: true, with resp
 * set to the refusal, when that is over the request's memory limit. */
static bool reply_over_memory(const struct schedule_query *q, const struct schedule *s,
			      struct arena *a, Ofc__V1__Response *resp)
{
	uint64_t need = mem_held() + schedule_pb_memory(s, true);
	char need_s[32], max_s[32];

	if (need <= schedule_memory_limit(q))
		return false;
	fmt_size(need_s, sizeof(need_s), need);
	fmt_size(max_s, sizeof(max_s), schedule_memory_limit(q));
	resp->status = OFC__V1__STATUS__STATUS_FAILED;
	resp->message = arena_printf(a,
				     "the reply's %zu transfers as messages need about %s, over "
				     "the memory limit of %s (--max-request-memory): " ASK_SUMMARY,
				     s->nxfers, need_s, max_s);
	return true;
}

int ofcd_fluid_compute(struct job *j, struct fluid_answer *fa, Ofc__V1__Response *resp,
		       struct arena *a)
{
	/* The request's deadline, as ofcd_run_schedule's: every phase checks it
	 * (the symmetry search ran 21 s past --max-request-time 5s). */
	struct ofc_clock clk = {.start = now_seconds()};
	struct schedule_query q = {
	    .fabric = j->cfg->f,
	    .collective = j->coll,
	    .size = j->size,
	    .chunks = j->chunks,
	    .max_memory = j->max_memory,
	    .clock = &clk,
	};
	struct fluid_query x = {.time_limit = j->max_time > 0 ? j->max_time : 0};
	struct ofc_error err = {0};
	const struct schedule *s = &fa->s;

	memset(fa, 0, sizeof(*fa));
	if (j->reduced) {
		resp->status = OFC__V1__STATUS__STATUS_INVALID;
		resp->message =
		    "reduced is for direct-connect topologies (BFB, Swing, the MCF), not "
		    "the fluid engine's schedules";
		return -1;
	}
	if (j->max_time > 0) {
		clk.deadline = clk.start + j->max_time;
		clk.limit = j->max_time;
	}
	if (schedule_fluid(&q, &x, fa, &err) < 0) {
		resp->status = err.code == OFC_E_RUNTIME ? OFC__V1__STATUS__STATUS_FAILED
							 : OFC__V1__STATUS__STATUS_INVALID;
		resp->message = arena_strdup(a, err.msg);
		return -1;
	}
	resp->status = fa->verified ? OFC__V1__STATUS__STATUS_OK : OFC__V1__STATUS__STATUS_INTERNAL;
	resp->message =
	    !fa->verified
		? arena_printf(a, "the fluid schedule failed verification: %s", fa->vr.error)
	    : fa->allreduce
		? arena_printf(a,
			       "fluid allreduce on %s: a reduce-scatter (R* %.10g s/GB of shard at "
			       "T = %u, K = %u chunks) then an allgather (R* %.10g s/GB at T = %u, "
			       "K = %u), %u steps, verified",
			       j->cfg->f->name, fa->r.rstar, fa->r.hops, fa->rep.chunks,
			       fa->r_ag.rstar, fa->r_ag.hops, fa->rep_ag.chunks,
			       fluid_answer_steps(fa))
		: arena_printf(a,
			       "fluid %s on %s: R* %.10g s/GB at T = %u, objective %.6f, K = %u "
			       "chunks, %u steps, verified",
			       sched_collective_name(s->collective), j->cfg->f->name, fa->r.rstar,
			       fa->r.hops, fa->r.objective, fa->rep.chunks, fluid_answer_steps(fa));
	Ofc__V1__Schedule *h = schedule_header_msg(a, s);
	Ofc__V1__Schedule *vx = schedule_vertices_msg(a, fa->net);

	h->num_steps = fluid_answer_steps(fa);
	h->n_vertices = vx->n_vertices;
	h->vertices = vx->vertices;
	resp->body_case = OFC__V1__RESPONSE__BODY_SCHEDULE;
	resp->schedule = h;
	return 0;
}

/* j's reply: a Response refusing it (status, message). */
static void refuse(struct job *j, Ofc__V1__Status status, const char *msg)
{
	Ofc__V1__Response resp = OFC__V1__RESPONSE__INIT;

	resp.has_id = resp.has_status = 1;
	resp.id = j->req_id;
	resp.status = status;
	resp.message = (char *)msg;
	response_pack(&resp, &j->reply, &j->reply_len);
}

/* The whole schedule in one frame (resp's head with every step), packed a
 * step at a time from st (a fluid schedule's period, a patched one's
 * structure; NULL: none to answer from): what the frame holds and one
 * step, no transfer's message but a chunk's (schedule_response_pack). Its
 * size first: over --max-frame, or over what the request may still hold,
 * the request is refused before the frame is made. what names the
 * schedule in refusals ("fluid", "bfb"). */
static void whole_reply(struct job *j, const struct sched_stream *st, size_t nxfers,
			uint32_t nsteps, const char *what, Ofc__V1__Response *resp, struct arena *a)
{
	struct schedule_query q = {.max_memory = j->max_memory};
	uint64_t limit = schedule_memory_limit(&q), held = mem_held();
	uint64_t left = limit > held ? limit - held : 0;
	size_t max = j->max_frame < left ? j->max_frame : left;
	Ofc__V1__Status status = OFC__V1__STATUS__STATUS_FAILED;
	char lim[32], need_s[32], max_s[32];
	const char *why;
	int rc;

	fmt_size(lim, sizeof(lim), j->max_frame);
	if ((double)nxfers * MIN_TRANSFER_BYTES > j->max_frame) {
		why = arena_printf(a,
				   "the %s schedule (%zu transfers in %u steps) does not fit in a "
				   "frame of %s: " ASK_SUMMARY ", " ASK_STREAM ", or run ofcd with "
				   "a larger --max-frame",
				   what, nxfers, nsteps, lim);
	} else if (!st) {
		/* schedule_fluid plans from the period; nothing here expanded it */
		status = OFC__V1__STATUS__STATUS_INTERNAL;
		why = arena_printf(a, "the %s schedule has no period to answer from", what);
	} else if ((rc = schedule_response_pack(resp, st, max, FRAME_ROOM, &j->reply_buf,
						&j->reply_len)) == 0) {
		j->reply = j->reply_buf + FRAME_ROOM; /* sent without a copy */
		return;
	} else if (rc < 0) {
		status = OFC__V1__STATUS__STATUS_INTERNAL;
		why = arena_printf(
		    a, "the %s schedule's steps packed to other bytes than they were sized to",
		    what);
	} else if (j->reply_len > j->max_frame) {
		why = arena_printf(a,
				   "the %s schedule does not fit in a frame of %s: " ASK_SUMMARY
				   ", " ASK_STREAM ", or run ofcd with a larger --max-frame",
				   what, lim);
	} else {
		fmt_size(need_s, sizeof(need_s), held + j->reply_len);
		fmt_size(max_s, sizeof(max_s), limit);
		why = arena_printf(a,
				   "the reply's frame of %zu bytes needs about %s, over the memory "
				   "limit of %s (--max-request-memory): " ASK_SUMMARY,
				   j->reply_len, need_s, max_s);
	}
	refuse(j, status, why);
}

static void fluid_reply(struct job *j, const struct fluid_answer *fa, Ofc__V1__Response *resp,
			struct arena *a)
{
	struct sched_stream st;
	bool have = fluid_answer_stream(fa, &st);

	whole_reply(j, have ? &st : NULL, fluid_answer_transfers(fa), fluid_answer_steps(fa),
		    "fluid", resp, a);
}

bool ofcd_expanded(const struct job *j, const struct schedule_result *r)
{
	const struct schedule_outcome *o = r->main;

	return o->is_patched || (o->is_reduced && !j->reduced && o->group.reps == 1);
}

void ofcd_patched_open(struct ofcd_patched *p, const struct schedule_outcome *o)
{
	p->red = (struct sched_reduced){.group = o->group, .prog = o->s};
	/* (a reduced one: no patch, its ports already the degraded graph's) */
	memset(&p->none, 0, sizeof(p->none));
	sched_patched_stream_init(&p->ps, &p->red, o->is_patched ? &o->patch : &p->none,
				  o->patch_graph, o->is_patched ? o->gone : NULL, &o->s, &p->st);
}

void ofcd_patched_close(struct ofcd_patched *p)
{
	sched_patched_stream_free(&p->ps);
}

/* GetSchedule on a server fabric, answered in one frame. */
void ofcd_run_schedule_fluid(struct job *j)
{
	Ofc__V1__Response resp = OFC__V1__RESPONSE__INIT;
	struct fluid_answer fa;
	struct arena a = {0};

	resp.has_id = resp.has_status = 1;
	resp.id = j->req_id;
	if (ofcd_fluid_compute(j, &fa, &resp, &a) < 0)
		response_pack(&resp, &j->reply, &j->reply_len);
	else if (!j->summary_only)
		fluid_reply(j, &fa, &resp, &a);
	else if (protobuf_c_message_get_packed_size(&resp.base) <= j->max_frame)
		response_pack(&resp, &j->reply, &j->reply_len);
	else {
		char lim[32];

		fmt_size(lim, sizeof(lim), j->max_frame);
		refuse(j, OFC__V1__STATUS__STATUS_FAILED,
		       arena_printf(&a,
				    "the fluid schedule does not fit in a frame of %s: " ASK_SUMMARY
				    ", or run ofcd with a larger --max-frame",
				    lim));
	}
	arena_free(&a);
	fluid_answer_free(&fa);
}

int ofcd_schedule_compute(const struct topo_files *files, struct job *j, struct ofc_clock *clk,
			  struct schedule_result *r, Ofc__V1__Response *resp, struct arena *a)
{
	struct schedule_query q = {
	    .fabric = j->cfg->f,
	    .spec = j->spec,
	    .files = j->spec_from_client ? files : j->cfg->f->files,
	    .collective = j->coll,
	    .algorithm = j->algo,
	    .size = j->size,
	    .chunks = j->chunks,
	    .lowering = j->lowering,
	    .max_memory = j->max_memory,
	    /* (one frame holds the whole answer, each transfer at least
	     * MIN_TRANSFER_BYTES of it: refused from the estimate, before the
	     * schedule is built; a stream or a summary holds no such frame) */
	    .max_transfers = j->streamed || j->summary_only ? 0 : j->max_frame / MIN_TRANSFER_BYTES,
	    .time_limit = j->max_time,
	    .clock = clk,
	};
	struct ofc_error err = {0};
	bool spec_error;
	const struct fabric *f = j->cfg->f;
	/* Failures in effect on the config's graph: BFB keeps the healthy
	 * structure and patches what they change where `ofc schedule FILE`
	 * does (above 1,024 nodes, or where the explicit schedule is over the
	 * memory limit), as the state's schedule does; reduced asks for it
	 * at every size. The answer's steps are then its expansion, made a
	 * step at a time. Another engine, or failed hosts, get the explicit
	 * schedule as before. */
	bool failed = !q.spec && f->graph && !f->nrings && (f->degraded || j->cfg->nfailed);

	if (failed && j->reduced && j->coll == SCHED_ALLTOALL) {
		resp->status = OFC__V1__STATUS__STATUS_INVALID;
		resp->message = arena_strdup(a, "reduced: the failures in effect are not "
						"alike at every node; ask without it");
		return -1;
	}
	/* Symmetry-reduced: on the topology's own numbering, the fabric's
	 * ports would break the translations. */
	if (j->reduced)
		q.reduced = SCHEDULE_REDUCED_ALWAYS;
	else if (failed && j->coll != SCHED_ALLTOALL)
		q.reduced = SCHEDULE_REDUCED_AUTO;
	if (j->reduced && !failed && !q.spec && f->graph && !f->nrings)
		q.spec = f->graph->spec;
	clk->start = now_seconds();
	if (j->max_time > 0) {
		clk->deadline = clk->start + j->max_time;
		clk->limit = j->max_time;
	}
	if (schedule_compute(&q, r, &spec_error, &err) < 0 || schedule_check(r, &err) < 0) {
		char why[1024];

		resp->status = err.code == OFC_E_RUNTIME ? OFC__V1__STATUS__STATUS_FAILED
							 : OFC__V1__STATUS__STATUS_INVALID;
		resp->message = spec_error
				    ? arena_printf(a, "topology %s",
						   topo_spec_error(why, sizeof(why), j->spec, &err))
				    : arena_strdup(a, err.msg);
		return -1;
	}
	const struct schedule *s = &r->main->s;
	char form[STATE_FORM_LEN] = "";
	/* BFB refused for size, Swing in its place: the answer says so */
	if (r->main->fallback_from)
		state_schedule_form(r, form, sizeof(form));
	resp->status = s->verified ? OFC__V1__STATUS__STATUS_OK : OFC__V1__STATUS__STATUS_INTERNAL;
	resp->message = s->verified
			    ? arena_printf(a, "%s %s on %s: %u steps, %.6g us, verified%s",
					   s->algorithm, sched_collective_name(s->collective),
					   s->topology, s->nsteps, s->time_us, form)
			    : arena_printf(a, "the %s schedule failed verification: %s",
					   s->algorithm, r->main->verify_error);
	return 0;
}

/* A held partition's topology's arcs, naming its hosts (node u: names[u]):
 * libofc-mpi then runs a rank on the node of its own host, where rank
 * order would be the job's host order, not the numbering its circuits
 * take when the partition was renumbered for fewest moves. */
static void name_nodes(struct arena *a, Ofc__V1__Schedule *h, const struct graph *g,
		       char *const *names, uint32_t n)
{
	if (!g || g->n != n || h->n_links)
		return;
	h->links = arena_array(a, g->m, sizeof(*h->links));
	for (uint32_t u = 0; u < g->n; u++)
		for (uint32_t k = g->off[u]; k < g->off[u + 1]; k++) {
			Ofc__V1__FabricLink *l = arena_alloc(a, sizeof(*l));

			ofc__v1__fabric_link__init(l);
			l->has_src = l->has_port = l->has_dst = 1;
			l->src = u;
			l->port = k - g->off[u];
			l->dst = g->adj[k];
			l->src_host = names[u];
			l->dst_host = names[g->adj[k]];
			h->links[h->n_links++] = l;
		}
}

Ofc__V1__Schedule *ofcd_schedule_head(struct arena *a, const struct schedule_result *r,
				      const struct job *j, bool expanded)
{
	Ofc__V1__Schedule *h = schedule_header_msg(a, &r->main->s), *x = schedule_extra_msg(a, r);

	schedule_msg_summary(h, x);
	h->n_links = x->n_links;
	h->links = x->links;
	if (j->nnode_names)
		name_nodes(a, h, r->g, j->node_names, j->nnode_names);
	/* (an expanded one's steps are every node's: not a reduced form) */
	if (r->main->is_reduced && !expanded)
		h->reduced = schedule_reduced_msg(a, &r->main->group, r->main->ntransfers)->reduced;
	if (!h->verified && r->main->verify_error[0])
		h->verify_error = arena_strdup(a, r->main->verify_error);
	h->detail = schedule_fallback_detail_msg(a, r);
	return h;
}

void ofcd_run_schedule(const struct topo_files *files, struct job *j)
{
	struct ofc_clock clk = {0};
	struct schedule_query q = {.max_memory = j->max_memory};
	struct schedule_result r;
	Ofc__V1__Response resp = OFC__V1__RESPONSE__INIT;
	struct arena a = {0};
	char lim[32];

	resp.has_id = resp.has_status = 1;
	resp.id = j->req_id;
	fmt_size(lim, sizeof(lim), j->max_frame);
	if (ofcd_schedule_compute(files, j, &clk, &r, &resp, &a) < 0) {
		response_pack(&resp, &j->reply, &j->reply_len);
		arena_free(&a);
		return;
	}
	const struct schedule *s = &r.main->s;
	bool steps = !j->summary_only;
	if (steps && ofcd_expanded(j, &r)) {
		/* its expansion, packed a step at a time into the frame */
		struct ofcd_patched p;

		resp.body_case = OFC__V1__RESPONSE__BODY_SCHEDULE;
		resp.schedule = ofcd_schedule_head(&a, &r, j, true);
		ofcd_patched_open(&p, r.main);
		whole_reply(j, &p.st, r.main->ntransfers, s->nsteps, s->algorithm, &resp, &a);
		ofcd_patched_close(&p);
		arena_free(&a);
		schedule_result_free(&r);
		return;
	}
	if (steps && (double)s->nxfers * MIN_TRANSFER_BYTES > j->max_frame)
		goto too_big;
	if (steps && reply_over_memory(&q, s, &a, &resp)) {
		response_pack(&resp, &j->reply, &j->reply_len);
		arena_free(&a);
		schedule_result_free(&r);
		return;
	}
	Ofc__V1__Schedule *h = ofcd_schedule_head(&a, &r, j, ofcd_expanded(j, &r));
	if (steps) {
		h->n_steps = s->nsteps;
		h->steps = arena_array(&a, s->nsteps, sizeof(*h->steps));
		for (uint32_t t = 0; t < s->nsteps; t++)
			h->steps[t] = schedule_step_msg(&a, s, t)->steps[0];
	}
	resp.body_case = OFC__V1__RESPONSE__BODY_SCHEDULE;
	resp.schedule = h;
	if (protobuf_c_message_get_packed_size(&resp.base) > j->max_frame)
		goto too_big;
	response_pack(&resp, &j->reply, &j->reply_len);
	arena_free(&a);
	schedule_result_free(&r);
	return;
too_big:
	arena_free(&a);
	ofc__v1__response__init(&resp);
	resp.has_id = resp.has_status = 1;
	resp.id = j->req_id;
	resp.status = OFC__V1__STATUS__STATUS_FAILED;
	resp.message = arena_printf(&a,
				    "the %s schedule (%zu transfers in %u steps) does not fit in a "
				    "frame of %s: " ASK_SUMMARY ", " ASK_STREAM ", or run ofcd "
				    "with a larger --max-frame",
				    s->algorithm, s->nxfers, s->nsteps, lim);
	response_pack(&resp, &j->reply, &j->reply_len);
	arena_free(&a);
	schedule_result_free(&r);
}
