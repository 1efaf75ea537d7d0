/* What every direct-connect engine's outcome goes through: the memory a
 * request may hold and the estimates checked against it before anything
 * is built, the deadline and the progress line, the verifier and the
 * alpha-beta price against the Moore / (N-1)/N lower bound (Zhao et al.,
 * "Efficient Direct-Connect Topologies for Collective Communications",
 * Sec. 3.2), notes on symmetry-reduced outcomes, and a comparison's rows
 * (one schedule kept). */
#include "alltoall/alltoall.h"
#include "baselines/baselines.h"
#include "bfb/bfb.h"
#include "controller/schedule/internal.h"

#include <malloc.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Transfers are 20 bytes; a schedule grows by doubling, and allreduces
 * append one phase to the other: 24 per transfer, as BFB_BYTES_PER_XFER
 * (measured there within 13% of the peak RSS). The verifier's table is
 * n^2 bits, or 32 bytes per (node, shard) for reductions (16 and a list
 * per entry cut when few transfers cut shards, not known here); blocks
 * cut into
 * pieces (both rings, a share per port) keep interval lists per (node,
 * shard) instead: 129-167 bytes measured (torus:32x64, bidir-ring and
 * torus-rings, allgather and allreduce), 176 here. */
#define VERIFY_PIECES_BYTES 176
static double build_bytes(uint32_t n, enum sched_collective c, double xfers, uint32_t pieces,
			  double xfer_bytes)
{
	double cells = (double)n * n, table;

	if (pieces > 1)
		table = cells * VERIFY_PIECES_BYTES;
	else if (c == SCHED_ALLGATHER)
		table = cells / 8;
	else
		table = cells * 32;
	return xfers * (xfer_bytes > 0 ? xfer_bytes : BFB_BYTES_PER_XFER) + table;
}

int schedule_reply_check(const struct schedule_query *q, const char *what, uint32_t n, double xfers,
			 char *why, size_t len)
{
	if (!q->max_transfers || xfers <= (double)q->max_transfers)
		return 0;
	snprintf(why, len,
		 "%s on %u nodes has about %.3g transfers, more than one reply holds (%llu: "
		 "ofcd's --max-frame): ask for a summary, or for the schedule as a stream",
		 what, n, xfers, (unsigned long long)q->max_transfers);
	return -1;
}

int schedule_memory_check(const struct schedule_query *q, const char *what, uint32_t n,
			  double xfers, uint32_t pieces, double xfer_bytes, char *why, size_t len)
{
	uint64_t limit = schedule_memory_limit(q);
	double own = build_bytes(n, q->collective, xfers, pieces, xfer_bytes);

#ifdef __GLIBC__
	/* What earlier rows freed (the verifier's small allocations) stays
	 * resident in malloc's heap until trimmed. */
	malloc_trim(0);
#endif
	double need = (double)mem_held() + own;
	double room = (double)limit - (double)mem_held();
	char need_s[32], max_s[32], fit[96] = "";

	if (xfers > UINT32_MAX) {
		/* A true limit: transfers are indexed in 32 bits. */
		snprintf(why, len,
			 "%s on %u nodes has %.3g transfers, more than a schedule holds (%u)", what,
			 n, xfers, UINT32_MAX);
		return -1;
	}
	if (schedule_reply_check(q, what, n, xfers, why, len) < 0)
		return -1;
	if (need <= (double)limit)
		return 0;
	fmt_size(need_s, sizeof(need_s), need < 1.8e19 ? (uint64_t)need : UINT64_MAX);
	fmt_size(max_s, sizeof(max_s), limit);
	/* The schedules here grow as n^2 (times log n for some): what fits
	 * scales by the square root. */
	if (room > 0 && own > 0)
		snprintf(fit, sizeof(fit), "; about %.0f nodes would fit",
			 floor(n * sqrt(room / own)));
	snprintf(why, len,
		 "%s on %u nodes needs about %s (%.3g transfers), over the memory limit of %s "
		 "(ofc --max-memory, ofcd --max-request-memory)%s",
		 what, n, need_s, xfers, max_s, fit);
	return -1;
}

/* A reduced program of xfers transfers and its check's state (reps x N
 * cells, as the explicit verifier's N x N; blocks cut into pieces: 1 when
 * whole; 0: every piece checked by its spans' sums, a byte a node) against
 * the limit. */
bool outcome_reduced_over_limit(const struct schedule_result *r, const struct schedule_query *q,
				struct schedule_outcome *o, const char *algo, double xfers,
				uint32_t reps, uint32_t pieces)
{
	double cells = (double)reps * r->g->n, table;
	uint64_t limit = schedule_memory_limit(q);

	if (pieces == 0)
		table = r->g->n;
	else if (pieces > 1)
		table = cells * VERIFY_PIECES_BYTES;
	else if (q->collective == SCHED_ALLGATHER)
		table = cells / 8;
	else
		table = cells * 16 + cells / 8;
	double need = (double)mem_held() + xfers * BFB_BYTES_PER_XFER + table;
	if (need <= (double)limit)
		return false;
	char need_s[32], max_s[32];
	fmt_size(need_s, sizeof(need_s), (uint64_t)need);
	fmt_size(max_s, sizeof(max_s), limit);
	snprintf(o->why, sizeof(o->why),
		 "reduced %s on %u nodes needs about %s (%.3g program transfers, %u "
		 "representatives' %s), over the memory limit of %s (ofc --max-memory, ofcd "
		 "--max-request-memory)",
		 algo, r->g->n, need_s, xfers, reps,
		 pieces ? "state" : "spans checked by their sums", max_s);
	o->why_code = OFC_E_RUNTIME;
	return true;
}

/* A reduced baseline's: a torus:256x256 ring is 512 representatives'
 * programs of 2 x 65,535 transfers per phase. */
bool outcome_reduced_over_memory(const struct schedule_result *r, const struct schedule_query *q,
				 struct schedule_outcome *o, const char *algo, enum baseline_algo a)
{
	uint32_t reps;
	double xfers = baseline_reduced_transfers(r->g, r->tree, a, q->collective, &reps);

	return outcome_reduced_over_limit(r, q, o, algo, xfers, reps, baseline_pieces(r->g, a));
}

bool outcome_over_memory(const struct schedule_result *r, const struct schedule_query *q,
			 struct schedule_outcome *o, const char *what, double xfers,
			 uint32_t pieces)
{
	if (schedule_memory_check(q, what, r->g->n, xfers, pieces, 0, o->why, sizeof(o->why)) == 0)
		return false;
	o->why_code = OFC_E_RUNTIME;
	return true;
}

/* Past the request's deadline: o does not apply, with "time limit T
 * reached in PHASE" (its schedule dropped). */
bool outcome_out_of_time(const struct schedule_result *r, struct schedule_outcome *o,
			 const char *phase)
{
	struct ofc_error err = {0};

	if (clock_check(r->clock, phase, &err) == 0)
		return false;
	if (o->have)
		sched_free(&o->s);
	o->have = false;
	o->applies = false;
	snprintf(o->why, sizeof(o->why), "%s", err.msg);
	o->why_code = OFC_E_RUNTIME;
	return true;
}

/* A phase begins: progress says so (fraction unknown). */
void outcome_phase(const struct schedule_result *r, const struct schedule_outcome *o,
		   const char *what)
{
	char buf[64];

	snprintf(buf, sizeof(buf), "%s: %s", o->algo, what);
	clock_progress(r->clock, buf, -1);
}

/* An all-to-all under NIC-limited hosts (r->host_beta): what a host
 * injects and ejects, in blocks (host forwarding: every transfer it sends
 * or receives; NIC forwarding: only its own blocks out and its own in).
 * Per step (link: the step's busiest link) the sum over steps of the
 * busier of the link and the busiest host over its injection; whole
 * (cut-through): the busiest host over all steps, over its injection. */
double outcome_host_priced(const struct schedule_result *r, const struct schedule *s,
			   const double *link, bool whole)
{
	uint32_t n = s->nodes;
	double *out = xcalloc(n, sizeof(double)), *in = xcalloc(n, sizeof(double));
	double total = 0, h = 0;

	for (uint32_t t = 0; t < s->nsteps; t++) {
		for (size_t i = s->step_start[t]; i < s->step_start[t + 1]; i++) {
			const struct xfer *x = &s->xfers[i];
			double len = sched_frac(x->length);
			uint32_t o = sched_block_origin(s, x->block), nb = xfer_blocks(x);

			/* a span: its blocks, of which one may be the sender's */
			if (!r->nic_forwarding)
				out[x->src] += len * nb;
			else if (x->src >= o && x->src - o < nb)
				out[x->src] += len;
			if (!r->nic_forwarding)
				in[x->dst] += len * nb;
			else if (sched_block_target(s, x->block) == x->dst)
				in[x->dst] += len;
		}
		if (whole && t + 1 < s->nsteps)
			continue;
		h = 0;
		for (uint32_t v = 0; v < n; v++) {
			h = fmax(h, fmax(out[v], in[v]) / r->host_betas[v]);
			out[v] = in[v] = 0;
		}
		if (!whole)
			total += fmax(link[t], h);
	}
	free(out);
	free(in);
	return whole ? h : total;
}

/* What a reduction's check may keep at once (verify_opts.reduce_bytes):
 * what the request has left of its memory limit, the schedule built and
 * held, so that a large limit checks a large reduction in few chunks and
 * a small one in more (1 where nothing is left: the check then refuses
 * with what one chunk would need, as 0 would not: the verifier's own,
 * which a result without a limit, not from schedule_compute, gets). */
uint64_t outcome_verify_bytes(const struct schedule_result *r)
{
	uint64_t held;

	if (!r->memory_limit)
		return 0;
#ifdef __GLIBC__
	malloc_trim(0); /* (what building freed, as schedule_memory_check) */
#endif
	held = mem_held();
	return r->memory_limit > held ? r->memory_limit - held : 1;
}

/* o's schedule through the verifier: a reduced one by the same symmetry,
 * never expanded (its transfer count is then the expanded one's). */
void outcome_verify(struct schedule_outcome *o, const struct verify_opts *vo,
		    struct verify_report *rep)
{
	if (o->is_patched) {
		struct sched_reduced red = {.group = o->group, .prog = o->s};

		o->verified =
		    sched_verify_patched(&red, &o->patch, o->patch_graph, o->gone, rep) == 0;
		o->ntransfers = rep->ntransfers;
	} else if (o->is_reduced) {
		struct sched_reduced red = {.group = o->group, .prog = o->s};

		o->verified = sched_verify_reduced(&red, vo, rep) == 0;
		o->ntransfers = rep->ntransfers;
	} else {
		o->verified = sched_verify(&o->s, vo, rep) == 0;
	}
}

double routed_alphas(const struct schedule_result *r, double steps, double hops)
{
	return r->nic_forwarding || hops < steps ? steps : hops;
}

void outcome_finish(struct schedule_result *r, struct schedule_outcome *o)
{
	struct verify_report rep = {0};
	struct verify_opts vo = {.graph = r->nic_ports ? r->fv.pg : r->g,
				 .clock = o->is_a2a ? NULL : r->clock,
				 .arc_capacity = r->nic_ports ? r->pg_cap : r->arc_cap,
				 .threads = r->bopts.threads,
				 .block_weight = o->is_a2a ? r->demand : NULL,
				 .reduce_bytes = outcome_verify_bytes(r)};
	double t0 = now_seconds();
	double *step_link = NULL;

	bound_beside_wait(r); /* (priced against it below) */
	if (r->host_beta > 0 && o->is_a2a)
		vo.step_link_load = step_link = xcalloc(o->s.nsteps + 1, sizeof(double));

	if (r->nic_ports && !o->is_reduced)
		fabric_view_to_nic(&r->fv, r->g, &o->s);
	o->have = true;
	o->steps = o->s.nsteps;
	o->ntransfers = o->s.nxfers;
	outcome_phase(r, o, "verification");
	outcome_verify(o, &vo, &rep);
	o->verify_s = now_seconds() - t0;
	if (!o->is_a2a && outcome_out_of_time(r, o, "verification")) {
		free(step_link);
		return;
	}
	if (!o->verified)
		snprintf(o->verify_error, sizeof(o->verify_error), "%s", rep.error);
	o->measured = rep.sum_max_link_load * r->degree / r->g->n;
	o->measured_total = rep.max_total_link_load;
	if (step_link && o->verified)
		o->measured = outcome_host_priced(r, &o->s, step_link, false) * r->degree / r->g->n;
	free(step_link);
	if (!o->is_bfb) {
		/* Baselines and constructions: tau_B is what the links carry. */
		o->tau_b = frac_from_double(o->measured, 16 * (int64_t)r->g->n, 1e-7);
		o->tau_b_value = o->measured;
		/* The construction's predicted figure, exact, when it is met. */
		if (o->has_pred && frac_valid(o->pred.tau_b) &&
		    fabs(frac_value(o->pred.tau_b) - o->measured) < 1e-7)
			o->tau_b = o->pred.tau_b;
	}
	o->alphas = o->steps;
	o->time_us = cost_time_us(&r->cost, o->steps, o->tau_b_value);
	o->lb_us = r->lb_us;
	o->lb_steps = r->lb.steps;
	o->ratio = o->time_us / o->lb_us;

	struct schedule *s = &o->s;
	s->size_bytes = r->cost.size;
	s->time_us = o->time_us;
	s->lower_bound_us = o->lb_us;
	s->verified = o->verified;
	sched_set_metric(s, "tau_l", o->steps);
	sched_set_metric(s, "tau_b", o->tau_b_value);
	sched_set_metric(s, "tau_b_measured", o->measured);
	sched_set_metric(s, "alpha_us", r->cost.alpha * 1e6);
	sched_set_metric(s, "bandwidth_bps", r->cost.bandwidth);
	if (o->is_bfb && r->bopts.chunks)
		sched_set_metric(s, "chunks", r->bopts.chunks);
	if (o->is_reduced)
		sched_set_metric(s, "group_order", o->group.order);
}

void outcome_not_applies(struct schedule_outcome *o, const struct ofc_error *err)
{
	snprintf(o->why, sizeof(o->why), "%s", err->msg);
	o->why_code = err->code == OFC_E_RUNTIME ? OFC_E_RUNTIME : OFC_E_INPUT;
}

/* Why BFB on r->g cannot be symmetry-reduced, or NULL (then *G is its
 * translation group). */
const char *outcome_not_reducible(const struct schedule_result *r, struct sched_group *G,
				  struct ofc_error *err)
{
	if (r->demand)
		return "a demand matrix is not alike at every node";
	if (r->link_rate)
		return "links of different rates break the symmetry";
	if (r->host_betas || r->bfb_inject)
		return "hosts with injection limits are priced host by host";
	if (r->nic_ports)
		return "transfers on this fabric name its NIC ports, which the translations "
		       "need not keep (schedule --topology SPEC)";
	if (sched_group_of(r->g, r->tree, G, err) < 0)
		return err->msg;
	return NULL;
}

/* "node 0's program" or "N nodes' programs": what a reduced schedule holds. */
static const char *reps_text(const struct sched_group *G, char *buf, size_t size)
{
	if (G->reps == 1)
		return "node 0's program";
	snprintf(buf, size, "%u nodes' programs", G->reps);
	return buf;
}

/* The note that algo above `limit` nodes came symmetry-reduced by itself. */
void outcome_note_reduced_above(struct schedule_result *r, uint32_t limit, const char *algo,
				const struct sched_group *G)
{
	size_t len = strlen(r->note);
	char reps[48];

	snprintf(r->note + len, sizeof(r->note) - len,
		 "%s%u nodes: above %u %s is symmetry-reduced (%s x %s; --reduced asks for it)",
		 len ? "; " : "", r->g->n, limit, algo, reps_text(G, reps, sizeof(reps)), G->name);
}

void schedule_outcome_free(struct schedule_outcome *o)
{
	if (o->have)
		sched_free(&o->s);
	o->have = false;
	if (o->have_mcf)
		mcf_result_free(&o->mcf);
	o->have_mcf = false;
	if (o->is_ring)
		optree_result_free(&o->ring.res);
	o->is_ring = false;
	if (o->is_patched) {
		sched_patch_free(&o->patch);
		free(o->gone);
		o->gone = NULL;
	}
	o->is_patched = false;
	if (o->reroute)
		swing_reroute_free(o->reroute);
	free(o->reroute);
	o->reroute = NULL;
}

/* Keep the figures, drop the schedule (comparisons keep only the main one). */
void outcome_drop(struct schedule_outcome *o)
{
	if (o->have)
		sched_free(&o->s);
	o->have = false;
}

/* A comparison keeps one schedule, its first row's that applies (r->main,
 * what the summary describes and -o writes): each other row's is dropped
 * as soon as its figures are in, so the next row's memory estimate does
 * not count it (torus:64x64 --algo all held them all, 10 GB, and refused
 * torus-rings). */
static void keep_or_drop(struct schedule_result *r, struct schedule_outcome *o)
{
	if (!r->main && o->applies)
		r->main = o;
	else if (o != r->main)
		outcome_drop(o);
}

struct schedule_outcome *outcome_next(struct schedule_result *r)
{
	if (r->compare && r->nout > 0)
		keep_or_drop(r, &r->out[r->nout - 1]);
	return &r->out[r->nout++];
}

/* The comparisons keep every figure but only one schedule (outcome_next()); when
 * no row applies, the first row stands for them. */
void direct_keep_first(struct schedule_result *r)
{
	keep_or_drop(r, &r->out[r->nout - 1]);
	if (!r->main)
		r->main = &r->out[0];
}

/* A torus row whose steps' longest messages cross more hops than it has
 * steps routes its peers within a step (Swing, recursive doubling): an
 * alpha a step, as store-and-forward pays, but not a step a hop. */
enum outcome_model schedule_outcome_model(const struct schedule_outcome *o)
{
	if (o->cut_through)
		return MODEL_CUT_THROUGH;
	if (o->is_torus && o->tf.hops > o->steps)
		return MODEL_ROUTED;
	return MODEL_STORE_FORWARD;
}

int schedule_best_row(const struct schedule_result *r)
{
	int best = -1;

	for (unsigned i = 0; i < r->nout; i++) {
		const struct schedule_outcome *o = &r->out[i];

		if (o->applies && o->verified && (best < 0 || o->time_us < r->out[best].time_us))
			best = (int)i;
	}
	return best;
}
