/* Schedules on a direct-connect topology: BFB (exact or lp_solve), the
 * paper's expansion constructions, the classic baselines, all-to-all by
 * MCF and its baselines, Swing and its torus baselines, one algorithm or
 * all of them side by side. Every schedule goes through the verifier and
 * is priced by the alpha-beta model against the Moore / (N-1)/N lower bound
 * (Zhao et al., "Efficient Direct-Connect Topologies for Collective
 * Communications", Sec. 3.2).
 *
 * On a fabric config wired through switches the schedule is fabric-aware:
 * transfer ports are the hosts' NIC ports (the port permutations of the
 * wiring, which differ from the topology's arc order for word digraphs
 * such as generalized Kautz), verified against the graph in port order. */
#include "controller/schedule/internal.h"

#include <malloc.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- what a request may hold and how long it may take ------------------------ */

/* The memory a request may hold: --max-memory (ofcd --max-request-memory),
 * else half the machine's. */
uint64_t schedule_memory_limit(const struct schedule_query *q)
{
	return q->max_memory ? q->max_memory : mem_physical() / 2;
}

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
	double need = (double)mem_resident() + own;
	double room = (double)limit - (double)mem_resident();
	char need_s[32], max_s[32], fit[96] = "";

	if (xfers > UINT32_MAX) {
		/* A true limit: transfers are indexed in 32 bits. */
		snprintf(why, len,
			 "%s on %u nodes has %.3g transfers, more than a schedule holds (%u)", what,
			 n, xfers, UINT32_MAX);
		return -1;
	}
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
	double need = (double)mem_resident() + xfers * BFB_BYTES_PER_XFER + table;
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
				 struct schedule_outcome *o, const char *algo)
{
	uint32_t reps;
	double xfers = baseline_reduced_transfers(r->g, r->tree, algo, q->collective, &reps);

	return outcome_reduced_over_limit(r, q, o, algo, xfers, reps, baseline_pieces(r->g, algo));
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

/* ---- one algorithm ------------------------------------------------------------ */

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

/* o's schedule through the verifier: a reduced one by the same symmetry,
 * never expanded (its transfer count is then the expanded one's). */
void outcome_verify(struct schedule_outcome *o, const struct verify_opts *vo,
		    struct verify_report *rep)
{
	if (o->is_reduced) {
		struct sched_reduced red = {.group = o->group, .prog = o->s};

		o->verified = sched_verify_reduced(&red, vo, rep) == 0;
		o->ntransfers = rep->ntransfers;
	} else {
		o->verified = sched_verify(&o->s, vo, rep) == 0;
	}
}

void outcome_finish(struct schedule_result *r, struct schedule_outcome *o)
{
	struct verify_report rep;
	struct verify_opts vo = {.graph = r->nic_ports ? r->fv.pg : r->g,
				 .clock = o->is_a2a ? NULL : r->clock,
				 .arc_capacity = r->nic_ports ? r->pg_cap : r->arc_cap,
				 .threads = r->bopts.threads,
				 .block_weight = o->is_a2a ? r->demand : NULL};
	double t0 = now_seconds();
	double *step_link = NULL;

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

/* The torus algorithms route over every link of a whole torus (dimension
 * order); with failed links they would cross a dead one. */
static bool refuse_degraded(const struct schedule_result *r, struct schedule_outcome *o,
			    const char *algo)
{
	if (!r->healthy)
		return false;
	snprintf(o->why, sizeof(o->why),
		 "%s routes over every link of a whole torus and %s has failed links (bfb, "
		 "mcf and the recursive baseline schedule degraded graphs)",
		 algo, r->g->spec);
	o->why_code = OFC_E_INPUT;
	return true;
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

/* BFB as node 0's program and the translation group: what a
 * Cayley family of any size up to 65,536 nodes needs, checked by symmetry.
 * auto_why: the reason it was not built explicitly (a note), or NULL for
 * --reduced. */
static void run_bfb_reduced(struct schedule_result *r, const struct schedule_query *q,
			    struct schedule_outcome *o, const struct bfb_opts *bo,
			    const char *auto_why)
{
	struct ofc_error err = {0};
	struct sched_reduced red;
	double t0 = now_seconds();
	const char *why = outcome_not_reducible(r, &o->group, &err);

	if (why) {
		snprintf(o->why, sizeof(o->why), "--reduced: %.400s", why);
		o->why_code = OFC_E_INPUT;
		return;
	}
	if (bfb_reduced(r->g, &o->group, q->collective, bo, &red, &o->bst, &err) < 0) {
		outcome_not_applies(o, &err);
		return;
	}
	o->s = red.prog;
	o->is_reduced = true;
	o->gen_s = now_seconds() - t0;
	o->applies = true;
	o->tau_b = o->bst.tau_b;
	o->tau_b_value = o->bst.tau_b_value;
	if (auto_why) {
		size_t len = strlen(r->note);

		snprintf(r->note + len, sizeof(r->note) - len,
			 "%s%s: BFB symmetry-reduced instead (node 0's program x %s; --reduced "
			 "asks for it)",
			 len ? "; " : "", auto_why, o->group.name);
	}
	outcome_finish(r, o);
}

static void run_bfb(struct schedule_result *r, const struct schedule_query *q,
		    struct schedule_outcome *o, const struct engine_ops *e, bool lp)
{
	struct ofc_error err = {0};
	struct bfb_opts bo = r->bopts;
	double t0 = now_seconds();

	snprintf(o->algo, sizeof(o->algo), "%s", lp ? "bfb-lp" : "bfb");
	if (lp)
		bo.method = BFB_LP;
	o->is_bfb = true;
	bo.rate = r->link_rate;
	bo.inject = r->bfb_inject;
	bo.nic_forwarding = r->nic_forwarding;
	bo.clock = r->clock;
	/* Refuse, with the estimate, what would not fit, before building it. */
	uint64_t limit = q->max_memory ? q->max_memory : mem_physical() / 2;
	double need = (double)mem_resident() + (double)e->memory(r, q);
	if (q->reduced == SCHEDULE_REDUCED_ALWAYS) {
		run_bfb_reduced(r, q, o, &bo, NULL);
		return;
	}
	if (q->reduced == SCHEDULE_REDUCED_AUTO &&
	    (need > (double)limit || r->g->n > BFB_MAX_NODES)) {
		struct sched_group G;
		char why[160], need_s[32];

		if (!outcome_not_reducible(r, &G, &err)) {
			fmt_size(need_s, sizeof(need_s), (uint64_t)need);
			if (r->g->n > BFB_MAX_NODES)
				snprintf(why, sizeof(why),
					 "%u nodes: explicit BFB schedules stop at %u", r->g->n,
					 BFB_MAX_NODES);
			else
				snprintf(why, sizeof(why),
					 "the explicit schedule needs about %s, over the memory "
					 "limit",
					 need_s);
			run_bfb_reduced(r, q, o, &bo, why);
			return;
		}
		err = (struct ofc_error){0};
	}
	if (need > (double)limit) {
		char need_s[32], max_s[32];

		fmt_size(need_s, sizeof(need_s), (uint64_t)need);
		fmt_size(max_s, sizeof(max_s), limit);
		snprintf(o->why, sizeof(o->why),
			 "BFB %s on %u nodes needs about %s (at least %.3g transfers), over the "
			 "memory limit of %s (ofc --max-memory, ofcd --max-request-memory)",
			 sched_collective_name(q->collective), r->g->n, need_s,
			 (q->collective == SCHED_ALLREDUCE ? 2.0 : 1.0) * r->g->n * (r->g->n - 1.0),
			 max_s);
		o->why_code = OFC_E_RUNTIME;
		return;
	}
	outcome_phase(r, o, "generation");
	if (bfb_schedule(r->g, q->collective, &bo, &o->s, &o->bst, &err) < 0) {
		if (!outcome_out_of_time(r, o, "generation"))
			outcome_not_applies(o, &err);
		return;
	}
	o->have = true;
	if (outcome_out_of_time(r, o, "generation"))
		return;
	if (r->link_rate) {
		/* tau_B in gcd-rate links, priced in slowest-link ones. */
		struct bfb_stats *b = &o->bst;
		double k = frac_value(r->rate_scale);

		b->tau_b = frac_mul(b->tau_b, r->rate_scale);
		b->tau_b_exact = frac_mul(b->tau_b_exact, r->rate_scale);
		b->tau_b_value *= k;
		b->tau_b_exact_value *= k;
	}
	o->gen_s = now_seconds() - t0;
	o->applies = true;
	o->tau_b = o->bst.tau_b;
	o->tau_b_value = o->bst.tau_b_value;
	outcome_finish(r, o);
}

static void run_expansion(struct schedule_result *r, const struct schedule_query *q,
			  struct schedule_outcome *o)
{
	struct ofc_error err = {0};
	double t0 = now_seconds();

	snprintf(o->algo, sizeof(o->algo), "expansion");
	if (!expand_applies(r->tree)) {
		snprintf(o->why, sizeof(o->why),
			 "%s is not a line, degree or power expansion (no construction)",
			 r->g->spec);
		o->why_code = OFC_E_INPUT;
		return;
	}
	/* The constructions deliver every shard once per phase, as BFB does. */
	if (outcome_over_memory(
		r, q, o, "the expansion construction",
		(q->collective == SCHED_ALLREDUCE ? 2.0 : 1.0) * r->g->n * (r->g->n - 1.0), 1))
		return;
	outcome_phase(r, o, "generation");
	if (expand_schedule(r->tree, q->collective, &r->bopts, &o->s, &o->pred, &err) < 0) {
		if (!outcome_out_of_time(r, o, "generation"))
			outcome_not_applies(o, &err);
		return;
	}
	o->have = true;
	if (outcome_out_of_time(r, o, "generation"))
		return;
	o->gen_s = now_seconds() - t0;
	o->applies = true;
	o->has_pred = true;
	snprintf(o->s.algorithm, sizeof(o->s.algorithm), "expansion");
	outcome_finish(r, o);
}

/* Baseline `name`'s explicit schedule into o->s (refusals name it `algo`:
 * bucket is torus-rings' schedule): whether it applies, then estimated
 * against the memory limit, then built; false (o says why) when it does
 * not apply, is refused or is out of time. (Estimated first, torus-rings
 * on hypercube:12 in `--algo all` was "over the memory limit", not "needs
 * a torus".) */
bool direct_explicit_baseline(struct schedule_result *r, const struct schedule_query *q,
			      struct schedule_outcome *o, const char *algo, const char *name)
{
	struct ofc_error err = {0};

	if (baseline_check(r->g, r->tree, name, q->collective, &err) < 0) {
		outcome_not_applies(o, &err);
		return false;
	}
	if (outcome_over_memory(r, q, o, algo, baseline_transfers(r->g, name, q->collective),
				baseline_pieces(r->g, name)))
		return false;
	outcome_phase(r, o, "generation");
	if (baseline_schedule(r->g, r->tree, name, q->collective, &o->s, r->clock, &err) < 0) {
		if (!outcome_out_of_time(r, o, "generation"))
			outcome_not_applies(o, &err);
		return false;
	}
	o->have = true;
	return !outcome_out_of_time(r, o, "generation");
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

static void run_baseline(struct schedule_result *r, const struct schedule_query *q,
			 struct schedule_outcome *o, const char *algo)
{
	struct ofc_error err = {0};
	double t0 = now_seconds();
	struct sched_reduced red;

	snprintf(o->algo, sizeof(o->algo), "%s", algo);
	/* Reduced: asked for, or above BASELINE_MAX_SCHEDULE_NODES where the
	 * baseline has a symmetric form on this graph (else explicit), its
	 * program and check estimated first. */
	uint32_t nreps;
	if (q->reduced == SCHEDULE_REDUCED_ALWAYS ||
	    (q->reduced == SCHEDULE_REDUCED_AUTO && r->g->n > BASELINE_MAX_SCHEDULE_NODES &&
	     baseline_reduced_transfers(r->g, r->tree, algo, q->collective, &nreps) > 0 &&
	     !outcome_not_reducible(r, &o->group, &err) &&
	     (strcmp(algo, "recursive") || o->group.binary))) {
		const char *why = outcome_not_reducible(r, &o->group, &err);

		if (why) {
			snprintf(o->why, sizeof(o->why), "--reduced: %.400s", why);
			o->why_code = OFC_E_INPUT;
			return;
		}
		if (outcome_reduced_over_memory(r, q, o, algo))
			return;
		outcome_phase(r, o, "generation");
		if (baseline_reduced(r->g, r->tree, algo, q->collective, &o->group, &red, &err) <
		    0) {
			snprintf(o->why, sizeof(o->why), "--reduced: %.400s", err.msg);
			o->why_code = OFC_E_INPUT;
			return;
		}
		if (q->reduced == SCHEDULE_REDUCED_ALWAYS) {
			/* asked for: no note */
		} else if (strstr(r->note, "is symmetry-reduced")) { /* --algo all: short */
			snprintf(r->note + strlen(r->note), sizeof(r->note) - strlen(r->note),
				 "; also %s (x %s)", algo, red.group.name);
		} else {
			outcome_note_reduced_above(r, BASELINE_MAX_SCHEDULE_NODES, algo,
						   &red.group);
		}
		o->s = red.prog;
		o->group = red.group;
		o->is_reduced = true;
		o->gen_s = now_seconds() - t0;
		o->applies = true;
		outcome_finish(r, o);
		return;
	}
	if (!direct_explicit_baseline(r, q, o, algo, algo))
		return;
	o->gen_s = now_seconds() - t0;
	o->applies = true;
	outcome_finish(r, o);
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
}

/* Keep the figures, drop the schedule (comparisons keep only the main one). */
void outcome_drop(struct schedule_outcome *o)
{
	if (o->have)
		sched_free(&o->s);
	o->have = false;
}

/* ---- Swing and its baselines on a torus ------------------------------------------ */

/* T = sum_s (alpha + h_s t_hop) + tau_B M/B (Swing notes 4.3). */
static double torus_time_us(const struct schedule_result *r, uint32_t steps,
			    const struct torus_figures *tf)
{
	return cost_time_us(&r->cost, steps, tf->tau_b) + tf->hops * r->hop_latency * 1e6;
}

/* Verified without a graph (peers are routed, not linked), priced by the
 * routed loads (torus_time_us). */
static void torus_finish(struct schedule_result *r, struct schedule_outcome *o)
{
	struct verify_report rep;
	double t0 = now_seconds();

	o->is_torus = true;
	o->have = true;
	o->steps = o->s.nsteps;
	o->ntransfers = o->s.nxfers;
	struct verify_opts vo = {.clock = r->clock, .threads = r->bopts.threads};
	outcome_phase(r, o, "verification");
	outcome_verify(o, &vo, &rep);
	o->verify_s = now_seconds() - t0;
	if (outcome_out_of_time(r, o, "verification"))
		return;
	if (!o->verified)
		snprintf(o->verify_error, sizeof(o->verify_error), "%s", rep.error);
	o->measured = o->tf.tau_b;
	o->tau_b_value = o->tf.tau_b;
	o->tau_b = frac_from_double(o->tf.tau_b, 16 * (int64_t)r->g->n, 1e-9);
	o->time_us = torus_time_us(r, o->steps, &o->tf);
	o->lb_us = r->lb_us;
	o->lb_steps = r->lb.steps;
	o->ratio = o->time_us / o->lb_us;
	o->s.size_bytes = r->cost.size;
	o->s.time_us = o->time_us;
	o->s.lower_bound_us = o->lb_us;
	o->s.verified = o->verified;
	sched_set_metric(&o->s, "tau_l", o->steps);
	sched_set_metric(&o->s, "tau_b", o->tau_b_value);
	sched_set_metric(&o->s, "congestion_deficiency", o->tf.xi);
	sched_set_metric(&o->s, "alpha_us", r->cost.alpha * 1e6);
	sched_set_metric(&o->s, "bandwidth_bps", r->cost.bandwidth);
	if (o->is_reduced)
		sched_set_metric(&o->s, "group_order", o->group.order);
}

static void run_torus(struct schedule_result *r, const struct schedule_query *q,
		      struct schedule_outcome *o, const char *algo, enum swing_variant v)
{
	struct ofc_error err = {0};
	double t0 = now_seconds();

	snprintf(o->algo, sizeof(o->algo), "%s", algo);
	o->variant = v == SWING_LATENCY ? "latency" : "bandwidth";
	if (q->collective != SCHED_ALLREDUCE) {
		snprintf(o->why, sizeof(o->why), "%s schedules allreduce", algo);
		o->why_code = OFC_E_INPUT;
		return;
	}
	if (refuse_degraded(r, o, algo))
		return;
	/* Reduced: asked for, or (swing) above the explicit schedules' size. */
	if (q->reduced == SCHEDULE_REDUCED_ALWAYS ||
	    (q->reduced == SCHEDULE_REDUCED_AUTO && r->g->n > SWING_MAX_SCHEDULE_NODES &&
	     !outcome_not_reducible(r, &o->group, &err))) {
		const char *why = outcome_not_reducible(r, &o->group, &err);
		struct sched_reduced red;

		if (why) {
			snprintf(o->why, sizeof(o->why), "--reduced: %.400s", why);
			o->why_code = OFC_E_INPUT;
			return;
		}
		/* A latency-optimal program is reps x steps x collectives
		 * spans of N blocks, every one a reduction of the whole vector,
		 * which the check takes by their sums (a byte a node, no
		 * planes). Swing's 2D collectives each carry 1/2D of every
		 * block. */
		uint32_t nreps;
		double xfers = torus_allreduce_reduced_transfers(r->tree, algo, v, &nreps);
		char what[64];
		snprintf(what, sizeof(what), "%s %s",
			 v == SWING_LATENCY ? "latency-optimal" : "bandwidth-optimal", algo);
		if (outcome_reduced_over_limit(r, q, o, what, xfers, nreps,
					       v == SWING_LATENCY	    ? 0
					       : strcmp(algo, "swing") == 0 ? r->degree
									    : 1))
			return;
		outcome_phase(r, o, "generation");
		if (torus_allreduce_reduced(r->tree, algo, v, &o->group, &red, &o->tf, &err) < 0) {
			outcome_not_applies(o, &err);
			return;
		}
		o->s = red.prog;
		o->group = red.group;
		o->is_reduced = true;
		if (q->reduced == SCHEDULE_REDUCED_AUTO && strcmp(algo, "swing") == 0 &&
		    !strstr(r->note, "Swing symmetry"))
			snprintf(r->note + strlen(r->note), sizeof(r->note) - strlen(r->note),
				 "%s%u nodes: explicit Swing schedules stop at %u: Swing "
				 "symmetry-reduced instead (%u nodes' programs x %s; --reduced "
				 "asks for it)",
				 r->note[0] ? "; " : "", r->g->n, SWING_MAX_SCHEDULE_NODES,
				 o->group.reps, o->group.name);
		else if (q->reduced == SCHEDULE_REDUCED_AUTO && strcmp(algo, "swing") &&
			 strstr(r->note, "symmetry-reduced")) {
			if (!strstr(r->note, algo)) /* swing-all: short */
				snprintf(r->note + strlen(r->note),
					 sizeof(r->note) - strlen(r->note), "; also %s", algo);
		} else if (q->reduced == SCHEDULE_REDUCED_AUTO && strcmp(algo, "swing"))
			outcome_note_reduced_above(r, SWING_MAX_SCHEDULE_NODES, algo, &o->group);
	} else {
		char what[64];

		snprintf(what, sizeof(what), "%s %s",
			 v == SWING_LATENCY ? "latency-optimal" : "bandwidth-optimal", algo);
		/* Swing's 2D collectives each carry 1/2D of every block. */
		if (outcome_over_memory(r, q, o, what,
					torus_allreduce_transfers(r->tree, algo, v, true),
					strcmp(algo, "swing") == 0 ? r->degree : 1))
			return;
		outcome_phase(r, o, "generation");
		if (torus_allreduce(r->tree, algo, v, true, &o->s, &o->tf, &err) < 0) {
			outcome_not_applies(o, &err);
			return;
		}
	}
	o->have = true;
	if (outcome_out_of_time(r, o, "generation"))
		return;
	o->gen_s = now_seconds() - t0;
	o->applies = true;
	torus_finish(r, o);
}

/* Reduced Swing, the latency-optimal program is the whole vector every
 * step (torus:16x16x16x16: 134 M blocks to check),
 * while its price needs only its figures, the built program's: when they
 * price it no lower than the bandwidth-optimal outcome o, it would not be
 * chosen, and is not built. */
static bool latency_loses(const struct schedule_result *r, const struct schedule_outcome *o,
			  const char *algo)
{
	struct ofc_error err = {0};
	struct sched_group G;
	struct torus_figures f;

	if (!o->applies || !o->is_reduced || strcmp(algo, "swing") ||
	    sched_group_of(r->g, r->tree, &G, &err) < 0 ||
	    torus_allreduce_reduced(r->tree, algo, SWING_LATENCY, &G, NULL, &f, &err) < 0)
		return false;
	return !(torus_time_us(r, f.steps, &f) < o->time_us);
}

/* The variant the cost model prefers (the paper picks per size). */
static void run_torus_auto(struct schedule_result *r, const struct schedule_query *q,
			   struct schedule_outcome *o, const char *algo)
{
	const char *v = q->variant ? q->variant : "auto";

	if (strcmp(v, "auto")) {
		run_torus(r, q, o, algo,
			  strcmp(v, "latency") == 0 ? SWING_LATENCY : SWING_BANDWIDTH);
		return;
	}
	struct schedule_outcome lat = {0};
	run_torus(r, q, o, algo, SWING_BANDWIDTH);
	if (latency_loses(r, o, algo))
		return;
	run_torus(r, q, &lat, algo, SWING_LATENCY);
	if (lat.applies && (!o->applies || lat.time_us < o->time_us)) {
		schedule_outcome_free(o);
		*o = lat;
	} else {
		schedule_outcome_free(&lat);
	}
}

/* A classic baseline (ring, bidir-ring, torus-rings = bucket) priced the
 * same way: its transfers are between neighbours, so routed = linked. */
static void run_torus_baseline(struct schedule_result *r, const struct schedule_query *q,
			       struct schedule_outcome *o, const char *algo)
{
	struct ofc_error err = {0};
	double t0 = now_seconds(), d = r->degree, k;
	const char *name = strcmp(algo, "bucket") == 0 ? "torus-rings" : algo;

	snprintf(o->algo, sizeof(o->algo), "%s", algo);
	o->variant = "bandwidth";
	if (refuse_degraded(r, o, algo))
		return;
	/* Ports used: one ring, two (both ways), or 2 per dimension. */
	k = strcmp(name, "ring") == 0 ? 1 : strcmp(name, "bidir-ring") == 0 ? 2 : d;
	/* Reduced: asked for, or above BASELINE_MAX_SCHEDULE_NODES where it
	 * exists (as run_baseline). */
	struct sched_reduced red;
	uint32_t nreps;
	bool reduce =
	    q->reduced == SCHEDULE_REDUCED_ALWAYS ||
	    (q->reduced == SCHEDULE_REDUCED_AUTO && r->g->n > BASELINE_MAX_SCHEDULE_NODES &&
	     baseline_reduced_transfers(r->g, r->tree, name, q->collective, &nreps) > 0 &&
	     !outcome_not_reducible(r, &o->group, &err));
	if (reduce) {
		const char *why = outcome_not_reducible(r, &o->group, &err);

		if (!why && outcome_reduced_over_memory(r, q, o, name))
			return;
		if (!why &&
		    baseline_reduced(r->g, r->tree, name, q->collective, &o->group, &red, &err) < 0)
			why = err.msg;
		if (why) {
			snprintf(o->why, sizeof(o->why), "--reduced: %.400s", why);
			o->why_code = OFC_E_INPUT;
			return;
		}
	}
	if (reduce) {
		if (q->reduced == SCHEDULE_REDUCED_AUTO && strstr(r->note, "symmetry-reduced"))
			snprintf(r->note + strlen(r->note), sizeof(r->note) - strlen(r->note),
				 "; also %s", algo);
		else if (q->reduced == SCHEDULE_REDUCED_AUTO)
			outcome_note_reduced_above(r, BASELINE_MAX_SCHEDULE_NODES, algo,
						   &red.group);
		o->s = red.prog;
		o->group = red.group;
		o->is_reduced = true;
		o->have = true;
		if (torus_routed_figures_reduced(r->tree, &red, d / k, &o->tf, &err) < 0) {
			outcome_not_applies(o, &err);
			return;
		}
	} else {
		if (!direct_explicit_baseline(r, q, o, algo, name))
			return;
		if (torus_routed_figures(r->tree, &o->s, d / k, &o->tf, &err) < 0) {
			outcome_not_applies(o, &err);
			sched_free(&o->s);
			o->have = false;
			return;
		}
	}
	o->gen_s = now_seconds() - t0;
	o->tf.instances = (uint32_t)k;
	o->applies = true;
	torus_finish(r, o);
	/* Neighbour-only: the graph check holds too. */
	struct verify_report rep;
	struct verify_opts vo = {.graph = r->g};
	if (o->is_reduced) {
		struct sched_reduced chk = {.group = o->group, .prog = o->s};

		if (o->applies && o->verified && sched_verify_reduced(&chk, &vo, &rep) < 0) {
			o->verified = false;
			o->s.verified = false;
			snprintf(o->verify_error, sizeof(o->verify_error), "%s", rep.error);
		}
		return;
	}
	if (o->applies && o->verified && sched_verify(&o->s, &vo, &rep) < 0) {
		o->verified = false;
		o->s.verified = false;
		snprintf(o->verify_error, sizeof(o->verify_error), "%s", rep.error);
	}
}

/* ---- all-to-all ------------------------------------------------------------------ */

/* Price an all-to-all schedule: store-and-forward steps by the verifier's
 * per-step loads (finish), or cut-through routes: one step, the busiest
 * link's total load. */
static void a2a_finish(struct schedule_result *r, struct schedule_outcome *o,
		       const struct a2a_outcome *a)
{
	o->is_a2a = true;
	o->cut_through = a->cut_through;
	o->max_load = a->max_load;
	o->max_paths = a->max_paths;
	o->max_hops = a->max_hops;
	outcome_finish(r, o);
	for (size_t k = 0; k < o->s.nxfers; k++)
		o->nhops += xfer_arcs(&o->s.xfers[k]);
	if (o->is_reduced)
		o->nhops *= o->group.order;
	if (o->cut_through) {
		/* Priced by the schedule as verified: its busiest link over all
		 * steps, which must be what the routes it was lowered from load
		 * (a schedule that failed is priced by its routes, for the
		 * report). */
		double z = o->verified ? o->measured_total : o->max_load;

		if (o->verified && fabs(z - o->max_load) > 1e-6 * o->max_load) {
			o->verified = false;
			o->s.verified = false;
			snprintf(
			    o->verify_error, sizeof(o->verify_error),
			    "the schedule's busiest link carries %.9g blocks, its routes' %.9g", z,
			    o->max_load);
		}
		if (r->host_beta > 0) /* the busiest host may bind instead */
			z = fmax(z, outcome_host_priced(r, &o->s, NULL, true));
		o->tau_b_value = z * r->degree / r->g->n;
		o->tau_b = frac_from_double(o->tau_b_value, 16 * (int64_t)r->g->n, 1e-9);
		o->theta = 1 / z;
		o->measured = o->tau_b_value;
		sched_set_metric(&o->s, "tau_b_measured", o->measured);
		o->time_us = cost_time_us(&r->cost, 1, o->tau_b_value);
		/* Priced as one step, so bounded as one: the result's bound
		 * counts the diameter's store-and-forward steps, which a
		 * cut-through schedule does not take (it would sit above it). */
		o->lb_steps = 1;
		o->lb_us = cost_time_us(&r->cost, 1, frac_value(r->lb.tau_b));
		o->s.lower_bound_us = o->lb_us;
		sched_set_metric(&o->s, "tau_l", 1);
	} else {
		/* tau_B = (d/N) sum_t U_t: the theta of a fluid flow as fast. */
		o->theta = (double)r->degree / r->g->n / o->measured;
	}
	o->ratio = o->time_us / o->lb_us;
	o->s.time_us = o->time_us;
	sched_set_metric(&o->s, "tau_b", o->tau_b_value);
	sched_set_metric(&o->s, "theta", o->theta);
}

/* mcf (lowered as asked), direct or sp-balanced, built by a2a_build. */
static void run_a2a(struct schedule_result *r, const struct schedule_query *q,
		    struct schedule_outcome *o, const char *algo, const char *lowering)
{
	struct ofc_error err = {0};
	struct a2a_request aq = {.algo = algo,
				 .lowering = lowering,
				 .max_memory = q->max_memory ? q->max_memory : mem_physical() / 2,
				 .steps_try = q->steps_try,
				 .mcf = {.threads = q->threads,
					 .injection = r->host_beta,
					 .injections = r->host_betas,
					 .nic_forwarding = r->nic_forwarding,
					 .capacity = r->arc_cap,
					 .demand = r->demand,
					 .keep_warm = q->keep_warm && !r->demand,
					 .warm = r->demand ? NULL : q->warm,
					 .cancel = q->cancel,
					 .lp_solver = schedule_lp_solver(q),
					 .time_limit = q->time_limit == 0  ? 60
						       : q->time_limit < 0 ? 0
									   : q->time_limit}};
	struct a2a_outcome a;
	double t0 = now_seconds();

	/* The whole request's deadline for the baselines (mcf's is its
	 * column generation's time_limit). */
	if (strcmp(algo, "mcf"))
		aq.clock = r->clock;
	/* Reduced by itself: any lowering but an explicit "steps" (the
	 * default falls back to paths when steps cannot prove its optimum
	 * soon; "steps" at thousands of nodes runs to its time limit). */
	bool reducible = !lowering || strcmp(lowering, "steps") != 0;

	snprintf(o->algo, sizeof(o->algo), "%s", algo);
	o->lowering = lowering;
	/* Reduced: asked for, or where the explicit schedule is not built. */
	if (q->reduced == SCHEDULE_REDUCED_ALWAYS ||
	    (q->reduced == SCHEDULE_REDUCED_AUTO && (strcmp(algo, "mcf") || reducible) &&
	     r->g->n > A2A_MAX_NODES && !outcome_not_reducible(r, &o->group, &err))) {
		const char *why = outcome_not_reducible(r, &o->group, &err);
		struct sched_reduced red;

		if (why) {
			snprintf(o->why, sizeof(o->why), "--reduced: %.400s", why);
			o->why_code = OFC_E_INPUT;
			return;
		}
		aq.runs = true; /* nothing runs a reduced program hop by hop */
		if (a2a_reduced(r->g, &o->group, &aq, &red, &a, &err) < 0) {
			if (!(aq.clock && outcome_out_of_time(r, o, "generation")))
				outcome_not_applies(o, &err);
			return;
		}
		o->s = red.prog;
		o->is_reduced = true;
		if (q->reduced == SCHEDULE_REDUCED_AUTO)
			snprintf(r->note + strlen(r->note), sizeof(r->note) - strlen(r->note),
				 "%s%u nodes: explicit all-to-all schedules stop at %u: symmetry-"
				 "reduced instead (node 0's routes x %s; --reduced asks for it)",
				 r->note[0] ? "; " : "", r->g->n, A2A_MAX_NODES, o->group.name);
	} else if (a2a_build(r->g, &aq, &o->s, &a, &err) < 0) {
		if (aq.clock && outcome_out_of_time(r, o, "generation"))
			return;
		outcome_not_applies(o, &err);
		/* The explicit time-stepped schedule is not reduced by itself (its
		 * MCF runs to its time limit at thousands of nodes): say how. */
		if (r->g->n > A2A_MAX_NODES && q->reduced == SCHEDULE_REDUCED_AUTO &&
		    !outcome_not_reducible(r, &o->group, &err))
			snprintf(o->why + strlen(o->why), sizeof(o->why) - strlen(o->why),
				 "; --reduced builds it by symmetry (the time-stepped MCF then "
				 "runs to --time-limit unless it proves its optimum), and the "
				 "paths and single lowerings are reduced by themselves");
		return;
	}
	o->gen_s = now_seconds() - t0;
	o->applies = true;
	if (a.lowering)
		o->lowering = a.lowering;
	if (a.fallback[0]) {
		size_t len = strlen(r->note);

		snprintf(r->note + len, sizeof(r->note) - len, "%s%s", len ? "; " : "", a.fallback);
	}
	a2a_finish(r, o, &a);
	if (a.have_mcf) {
		/* The outcome keeps the flow's figures; the routes are spent. */
		o->mcf = a.mcf;
		a2a_routes_free(&o->mcf.routes);
		o->have_mcf = true;
		o->theta_mcf = o->mcf.theta;
		if (o->mcf.note[0] && !strstr(r->note, o->mcf.note)) {
			size_t len = strlen(r->note);

			snprintf(r->note + len, sizeof(r->note) - len, "%smcf: %s", len ? "; " : "",
				 o->mcf.note);
		}
		if (o->cut_through) /* the fluid MCF's theta, of which the paths keep this much */
			sched_set_metric(&o->s, "theta_mcf", o->theta_mcf);
		sched_set_metric(&o->s, "theta_optimal", o->mcf.optimal);
		sched_set_metric(&o->s, "theta_gap", o->mcf.gap);
	}
}

/* M: the request's, else the fabric's collective of this kind, else its
 * first collective's size. */
static uint64_t pick_size(const struct schedule_query *q)
{
	const struct fabric *f = q->fabric;

	if (q->size || !f || !f->ncollectives)
		return q->size;
	for (uint32_t i = 0; i < f->ncollectives; i++)
		if (f->collectives[i].op == q->collective)
			return f->collectives[i].size;
	return f->collectives[0].size;
}

/* Node v of r->g as the fabric's host (they differ on the survivors of
 * failed hosts). */
static uint32_t host_of(const struct schedule_result *r, uint32_t v)
{
	return r->keep ? r->keep[v] : v;
}

/* The rate of arc a = u -> v, the k-th of its parallel arcs: the config's
 * link_rates entry for {u, v} if any; else the slower of the two ports it
 * joins. With port permutations that is port j at both ends, j the k-th
 * port of u that reaches v (as the NIC-port rewriting numbers them; on a
 * degraded graph the ordinal counts surviving arcs, so a failure among
 * parallel arcs of different rates may shift it); without them, a host
 * given per-port rates counts at its slowest port. */
static double arc_rate(const struct schedule_result *r, const struct fabric *f, uint32_t u,
		       uint32_t a)
{
	const struct graph *g = r->g;
	uint32_t v = g->adj[a], k = 0, n = r->whole ? r->whole->n : g->n;
	const struct port_map *pm = &f->ports;

	for (uint32_t i = 0; i < f->topology.nlink_rates; i++) {
		const struct link_rate *lr = &f->topology.link_rates[i];
		uint32_t hu = host_of(r, u), hv = host_of(r, v);

		if ((lr->u == hu && lr->v == hv) || (lr->u == hv && lr->v == hu))
			return lr->rate;
	}
	for (uint32_t x = g->off[u]; x < a; x++)
		k += g->adj[x] == v;
	/* Survivors of failed hosts: the hosts' own numbers from here on. */
	u = host_of(r, u);
	v = host_of(r, v);
	if (pm->to && pm->n == n)
		for (uint32_t j = 0; j < pm->d; j++)
			if (pm->to[(size_t)j * pm->n + u] == v && k-- == 0) {
				double ru = fabric_port_rate(f, u, j),
				       rv = fabric_port_rate(f, v, j);

				return ru < rv ? ru : rv;
			}
	double lo = 0;
	for (int e = 0; e < 2; e++) {
		const struct host *h = &f->hosts[e ? v : u];
		double rate = h->port_rate;

		for (uint32_t j = 0; j < h->port_rates.n; j++)
			if (j == 0 || h->port_rates.v[j] < rate)
				rate = h->port_rates.v[j];
		if (e == 0 || rate < lo)
			lo = rate;
	}
	return lo;
}

/* Links of different rates (hosts' port_rate or port_rates, the topology's
 * link_rates): each arc at arc_rate(). Rates in Mb/s, as multiples of
 * their gcd (BFB_MAX_RATE at most); false (priced at the slowest link
 * alone) when a link has no rate or the multiples are too large. */
static bool link_rates(struct schedule_result *r, const struct fabric *f)
{
	const struct graph *g = r->g;
	uint64_t *mbps = xmalloc(((size_t)g->m + 1) * sizeof(uint64_t)), unit = 0, slow = 0;
	bool ok = true;

	for (uint32_t u = 0; u < g->n && ok; u++)
		for (uint32_t a = g->off[u]; a < g->off[u + 1] && ok; a++) {
			double lo = arc_rate(r, f, u, a);

			ok = lo >= 1e6;
			mbps[a] = ok ? (uint64_t)llround(lo / 1e6) : 0;
			unit = gcd_u64(unit, mbps[a]);
			if (!slow || mbps[a] < slow)
				slow = mbps[a];
		}
	if (ok && g->m) {
		r->arc_cap = xmalloc(((size_t)g->m + 1) * sizeof(double));
		for (uint32_t a = 0; a < g->m; a++)
			r->arc_cap[a] = (double)mbps[a] / (double)slow;
		r->link_rate = xmalloc(((size_t)g->m + 1) * sizeof(uint32_t));
		for (uint32_t a = 0; a < g->m && ok; a++) {
			ok = mbps[a] / unit <= BFB_MAX_RATE;
			r->link_rate[a] = (uint32_t)(mbps[a] / unit);
		}
		r->rate_scale = frac_make((int64_t)unit, (int64_t)slow);
		if (!ok) {
			free(r->link_rate);
			r->link_rate = NULL;
		}
	}
	free(mbps);
	return r->link_rate != NULL;
}

/* The lower bound with each link at its rate: a node takes in (N-1)/N of
 * the data (allgather) or sends it out (reduce-scatter) over its links, so
 * the node with the least total rate R bounds T_B below by (N-1)/N M / R.
 * In the cost model's units (M/B, B = d x the slowest link) that scales
 * tau_B* by d x slowest / R. R is the smaller of the least ingress and the
 * least egress (a bound for either direction; allreduce scales its doubled
 * bound alike), and the factor is never above 1, so regular fabrics of one
 * rate keep the paper's bound. */
static void rate_bound(struct schedule_result *r)
{
	const struct graph *g = r->g;
	uint64_t *in = xcalloc(g->n + 1, sizeof(uint64_t)), least = UINT64_MAX;
	uint32_t slow = UINT32_MAX;

	for (uint32_t u = 0; u < g->n; u++)
		for (uint32_t a = g->off[u]; a < g->off[u + 1]; a++) {
			in[g->adj[a]] += r->link_rate[a];
			slow = r->link_rate[a] < slow ? r->link_rate[a] : slow;
		}
	for (uint32_t u = 0; u < g->n; u++) {
		uint64_t out = 0;

		for (uint32_t a = g->off[u]; a < g->off[u + 1]; a++)
			out += r->link_rate[a];
		least = in[u] < least ? in[u] : least;
		least = out < least ? out : least;
	}
	free(in);
	if (least > (uint64_t)r->degree * slow) {
		r->lb.tau_b =
		    frac_mul(r->lb.tau_b, frac_make((int64_t)r->degree * slow, (int64_t)least));
		r->lb_rates = true;
	}
}

/* NIC-limited hosts for BFB (allgather, reduce-scatter, allreduce): each
 * host's injection as an exact fraction of a rate-1 link (the slowest, or
 * with link_rates their gcd) for bfb_opts.inject, and the lower bound: a
 * reduce-scatter host sends at least N-1 shards of its own partial sums
 * (tau_B >= (N-1)/N d / beta_min, either forwarding model); with host
 * forwarding the N (N-1) shards an allgather delivers all cross some host
 * (tau_B >= (N-1)/N d / beta_mean). beta[v] in slowest links, unlimited
 * hosts at d. */
static void bfb_limits(struct schedule_result *r, const struct schedule_query *q,
		       const double *beta, double lo, double mean)
{
	uint32_t n = r->g->n;
	char note[200];

	if (lo >= r->degree) {
		snprintf(note, sizeof(note), "%shost injection not below d links: no host limit",
			 r->note[0] ? "; " : "");
	} else {
		r->bfb_inject = xmalloc(n * sizeof(struct frac));
		for (uint32_t v = 0; v < n; v++) {
			/* in thousandths of a link: exact for rates in Mb/s ratios
			 * such as 150G / 100G, near enough otherwise */
			struct frac b = frac_make(llround(beta[v] * 1000), 1000);

			if (r->link_rate)
				b = frac_div(b, r->rate_scale);
			r->bfb_inject[v] = b;
		}
		double N = n, d = r->degree, lb = 0;
		bool rs = q->collective != SCHED_ALLGATHER,
		     ag = q->collective != SCHED_REDUCE_SCATTER;

		if (rs)
			lb += (N - 1) / N * d / lo;
		if (ag && !r->nic_forwarding)
			lb += (N - 1) / N * d / mean;
		if (lb > frac_value(r->lb.tau_b)) {
			r->lb.tau_b = frac_from_double(lb, 16 * (int64_t)n * 1000, 1e-9 * lb);
			if (!frac_valid(r->lb.tau_b))
				r->lb.tau_b = frac_make((int64_t)llround(lb * 1e6), 1000000);
		}
		snprintf(note, sizeof(note),
			 "%shosts inject %.3g links' worth at least (%s forwarding): BFB keeps "
			 "every host within it; other algorithms are priced without",
			 r->note[0] ? "; " : "", lo, r->nic_forwarding ? "NIC" : "host");
	}
	snprintf(r->note + strlen(r->note), sizeof(r->note) - strlen(r->note), "%s", note);
}

/* All-to-all with each link at its capacity c_e (slowest links): Basu et
 * al. Thm 2 counts the capacity every source's flow costs, at least theta
 * L(N, d) (d the most links a node has), against the total, so theta <=
 * sum_e c_e / (N L(N, d)); and a node sends N-1 shards over its links and
 * takes N-1 in, so theta <= C_min / (N-1) with C_min the least total
 * capacity into or out of a node. tau_B = (d/N) / theta. One rate gives
 * the paper's L(N, d)/N. (rate_bound's per-node scaling of L(N, d)/N would
 * claim theta <= C_min / L(N, d), which a fast core and one slow node
 * break.) */
static void a2a_rate_bound(struct schedule_result *r)
{
	const struct graph *g = r->g;
	uint32_t n = g->n;
	double *in = xcalloc(n + 1, sizeof(double)), sum = 0, least = INFINITY;
	double L = (double)moore_tree_cost(n, r->degree);

	for (uint32_t u = 0; u < n; u++) {
		double out = 0;

		for (uint32_t a = g->off[u]; a < g->off[u + 1]; a++)
			if (g->adj[a] != u) {
				in[g->adj[a]] += r->arc_cap[a];
				out += r->arc_cap[a];
			}
		sum += out;
		least = fmin(least, out);
	}
	for (uint32_t u = 0; u < n; u++)
		least = fmin(least, in[u]);
	free(in);
	r->theta_cap = fmin(sum / (n * L), least / (n - 1));
	double tb = r->degree / (double)n / r->theta_cap;
	r->lb.tau_b = frac_from_double(tb, 16 * (int64_t)n, 1e-9 * tb);
	if (!frac_valid(r->lb.tau_b))
		r->lb.tau_b = frac_make((int64_t)llround(tb * 1e6), 1000000);
	r->lb_rates = true;
}

/* A demand matrix: an all-to-all's, of the topology's nodes;
 * the lower bound becomes the one it gives (schedule_demand_bound, over
 * the links' rates when they differ). */
static int demand_bound(struct schedule_result *r, const struct schedule_query *q,
			struct ofc_error *err)
{
	const struct graph *g = r->g;
	uint32_t n = g->n;
	double total = (double)n * r->degree, least = r->degree;

	if (q->collective != SCHED_ALLTOALL)
		return ofc_error_set(err, OFC_E_USAGE,
				     "a demand matrix is for --collective alltoall");
	if (q->demand_n != n)
		return ofc_error_set(err, OFC_E_INPUT,
				     "the demand matrix is %u x %u; %s has %u nodes", q->demand_n,
				     q->demand_n, g->spec ? g->spec : "the topology", n);
	if (!q->demand) /* uniform */
		return 0;
	if (r->arc_cap) {
		double *in = xcalloc(n + 1, sizeof(double));

		total = 0;
		least = INFINITY;
		for (uint32_t u = 0; u < n; u++) {
			double out = 0;

			for (uint32_t a = g->off[u]; a < g->off[u + 1]; a++)
				if (g->adj[a] != u) {
					in[g->adj[a]] += r->arc_cap[a];
					out += r->arc_cap[a];
				}
			total += out;
			least = fmin(least, out);
		}
		for (uint32_t u = 0; u < n; u++)
			least = fmin(least, in[u]);
		free(in);
	}
	r->demand = q->demand;
	r->theta_demand = schedule_demand_bound(q->demand, n, r->degree, total, least);
	double tb = r->degree / (double)n / r->theta_demand;
	r->lb.tau_b = frac_from_double(tb, 16 * (int64_t)n, 1e-9 * tb);
	if (!frac_valid(r->lb.tau_b))
		r->lb.tau_b = frac_make((int64_t)llround(tb * 1e6), 1000000);
	return 0;
}

/* NIC-limited hosts: the request's injection (every host) and
 * forwarding, else the config hosts' (a host without `injection` is not
 * limited: d links). All-to-all only: r->host_betas per node in link
 * capacities when some host is below its d links, and the lower bound: a
 * host's own N-1 shards (T >= (N-1) M / (N I_min)) and, with host
 * forwarding, every hop of every shard through some host (T >= L(N, d) M /
 * (N I_mean)), the Moore bound with d b replaced by the hosts' injection. */
static int host_limits(struct schedule_result *r, const struct schedule_query *q,
		       struct ofc_error *err)
{
	const struct fabric *f = q->fabric;
	uint32_t n = r->g->n;
	double b = r->cost.bandwidth / r->degree, *beta = xmalloc(n * sizeof(double));
	double lo = INFINITY, hi = 0, sum = 0;
	int fwd = q->forwarding ? q->forwarding - 1 : HOST_FORWARDING;
	bool any = false;
	char note[200];

	for (uint32_t v = 0; v < n; v++) {
		double inj = q->injection;

		if (inj <= 0 && f && f->nhosts == (r->whole ? r->whole->n : n) && !q->spec &&
		    !q->graph) {
			const struct host *h = &f->hosts[host_of(r, v)];

			inj = h->injection;
			if (!q->forwarding && h->forwarding != f->hosts[0].forwarding &&
			    q->collective == SCHED_ALLTOALL) {
				free(beta);
				ofc_error_set(err, OFC_E_INPUT,
					      "host %s forwards differently from %s: one "
					      "forwarding model per fabric for alltoall",
					      h->name, f->hosts[0].name);
				snprintf(err->file, sizeof(err->file), "%s",
					 f->file ? f->file : "");
				err->line = h->loc.line;
				err->col = h->loc.col;
				return -1;
			}
			if (!q->forwarding)
				fwd = f->hosts[0].forwarding;
		}
		beta[v] = inj > 0 ? fmin(inj / b, r->degree) : r->degree;
		any = any || inj > 0;
		lo = fmin(lo, beta[v]);
		hi = fmax(hi, beta[v]);
		sum += beta[v];
	}
	if (!any) {
		free(beta);
		return 0;
	}
	r->nic_forwarding = fwd == NIC_FORWARDING;
	if (q->collective != SCHED_ALLTOALL) {
		bfb_limits(r, q, beta, lo, sum / n);
		free(beta);
		return 0;
	} else if (lo >= r->degree) {
		snprintf(note, sizeof(note), "%shost injection not below d links: no host limit",
			 r->note[0] ? "; " : "");
	} else {
		double L = (double)moore_tree_cost(n, r->degree);
		double z = (n - 1) / lo;

		if (!r->nic_forwarding)
			z = fmax(z, L / (sum / n));
		double hb = z * r->degree / n;

		r->host_betas = beta;
		beta = NULL;
		r->host_beta = lo;
		r->host_beta_avg = sum / n;
		r->injection = lo * b;
		if (hb > frac_value(r->lb.tau_b)) {
			r->lb.tau_b = frac_from_double(hb, 16 * (int64_t)n, 1e-9 * hb);
			if (!frac_valid(r->lb.tau_b))
				r->lb.tau_b = frac_make((int64_t)llround(hb * 1e6), 1000000);
		}
		if (lo == hi)
			snprintf(note, sizeof(note),
				 "%shosts inject %.3g links' worth (%s forwarding)",
				 r->note[0] ? "; " : "", lo, r->nic_forwarding ? "NIC" : "host");
		else
			snprintf(note, sizeof(note),
				 "%shosts inject %.3g to %.3g links' worth (%s forwarding; hosts "
				 "differ: the plain MCF, no symmetry)",
				 r->note[0] ? "; " : "", lo, hi,
				 r->nic_forwarding ? "NIC" : "host");
	}
	free(beta);
	snprintf(r->note + strlen(r->note), sizeof(r->note) - strlen(r->note), "%s", note);
	return 0;
}

int direct_setup(struct schedule_result *r, const struct schedule_query *q, struct ofc_error *err)
{
	const struct graph *g = r->g;
	const struct fabric *f = q->fabric;

	/* A link carries B/d with d the fabric's degree: the most links a
	 * node has (failures do not make the surviving links faster). */
	r->degree = 0;
	for (uint32_t u = 0; u < g->n; u++)
		if (graph_outdeg(g, u) > r->degree)
			r->degree = graph_outdeg(g, u);
	if (r->healthy || q->graph) {
		/* A degraded graph is no family, nor is a graph given as one: no
		 * construction or torus algorithm applies to it. */
		r->tree = xcalloc(1, sizeof(*r->tree));
		snprintf(r->tree->name, sizeof(r->tree->name), q->graph ? "graph" : "degraded");
		r->tree->spec = xstrdup(g->spec);
	} else if (topo_build_tree(g->spec, NULL, &r->tree, err) < 0) {
		return -1;
	}
	r->cost.size = pick_size(q);
	if (!r->cost.size)
		return ofc_error_set(err, OFC_E_USAGE, "missing --size (data per node, e.g. 1MiB)");
	r->cost.alpha = q->alpha_set ? q->alpha : f ? f->cost.alpha : 10e-6;
	/* B is a node's egress: d links of the config's link bandwidth, or
	 * 100 Gb/s when nothing says otherwise. */
	if (q->bandwidth_set)
		r->cost.bandwidth = q->bandwidth;
	else if (f && f->cost.link_bandwidth > 0)
		r->cost.bandwidth = f->cost.link_bandwidth * r->degree;
	else
		r->cost.bandwidth = 100e9;
	if (!q->bandwidth_set && f && !f->cost.bandwidth_set && f->cost.rate_min > 0) {
		char lo[32], hi[32];

		fmt_rate(lo, sizeof(lo), f->cost.rate_min);
		fmt_rate(hi, sizeof(hi), f->cost.rate_max);
		if (!q->spec && !q->graph && link_rates(r, f))
			snprintf(r->note, sizeof(r->note),
				 "link rates differ (%s to %s): each link is taken at its "
				 "rate (BFB by LP (13), the MCF as capacities, the link loads)",
				 lo, hi);
		else if (r->arc_cap)
			snprintf(r->note, sizeof(r->note),
				 "link rates differ (%s to %s): the MCF and the link loads "
				 "take each link at its rate; BFB prices all at the slowest, "
				 "%s (rates too far apart for LP (13))",
				 lo, hi, lo);
		else
			snprintf(r->note, sizeof(r->note),
				 "link rates differ (%s to %s): links are priced at "
				 "the slowest, %s, which a schedule loading its links evenly "
				 "waits for",
				 lo, hi, lo);
	}
	r->bopts.chunks = q->chunks;
	r->bopts.threads = q->threads;
	r->bopts.clock = q->clock; /* the expansions' BFB and constructions */
	r->bopts.lp_solver = schedule_lp_solver(q);
	r->hop_latency = q->hop_latency;
	if (r->degree == 0 || cost_lower_bound(q->collective, g->n, r->degree, &r->lb) < 0)
		return ofc_error_set(err, OFC_E_USAGE, "%s has no links", g->spec);
	if (r->arc_cap && q->collective == SCHED_ALLTOALL) {
		a2a_rate_bound(r);
		snprintf(r->note + strlen(r->note), sizeof(r->note) - strlen(r->note),
			 "; the lower bound takes each link at its rate");
	} else if (r->link_rate) {
		rate_bound(r);
		if (r->lb_rates)
			snprintf(r->note + strlen(r->note), sizeof(r->note) - strlen(r->note),
				 "; the lower bound takes each node's links at their rates");
	}
	if ((q->demand || q->demand_n) && demand_bound(r, q, err) < 0)
		return -1;
	if (host_limits(r, q, err) < 0)
		return -1;
	r->lb_us = cost_time_us(&r->cost, r->lb.steps, frac_value(r->lb.tau_b));
	/* NIC ports only when the schedule runs on the fabric's own graph. */
	r->nic_ports = !r->own_graph && !q->graph && !r->healthy && fabric_view_init(f, g, &r->fv);
	if (r->nic_ports && r->arc_cap) {
		const struct graph *pg = r->fv.pg;

		r->pg_cap = xmalloc(((size_t)pg->m + 1) * sizeof(double));
		for (uint32_t a = 0; a < pg->m; a++)
			r->pg_cap[a] = 1;
		for (uint32_t u = 0; u < g->n; u++)
			for (uint32_t a = g->off[u]; a < g->off[u + 1]; a++)
				if (r->fv.arc2port[a] != UINT32_MAX)
					r->pg_cap[pg->off[u] + r->fv.arc2port[a]] = r->arc_cap[a];
	}
	return 0;
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

/* mcf, direct, sp-balanced; in a comparison mcf is a row per lowering. */
void direct_build_alltoall(struct schedule_result *r, const struct schedule_query *q,
			   const struct engine_ops *e)
{
	static const char *const lowerings[] = {"steps", "paths", "single"};

	if (q->collective != SCHED_ALLTOALL) {
		struct schedule_outcome *o = outcome_next(r);

		snprintf(o->algo, sizeof(o->algo), "%s", e->name);
		snprintf(o->why, sizeof(o->why), "%s schedules alltoall", e->name);
		o->why_code = OFC_E_INPUT;
	} else if (r->compare && (e->flags & ENGINE_LOWERING)) {
		for (unsigned i = 0; i < ARRAY_SIZE(lowerings); i++) {
			struct schedule_outcome *o = outcome_next(r);

			run_a2a(r, q, o, e->name, lowerings[i]);
			snprintf(o->algo, sizeof(o->algo), "%s/%s", e->name, lowerings[i]);
		}
	} else {
		/* (NULL: the default lowering) */
		run_a2a(r, q, outcome_next(r), e->name,
			(e->flags & ENGINE_LOWERING) ? q->lowering : NULL);
	}
}

/* Swing's and recursive doubling's variants and the torus baselines. */
void direct_build_swing_all(struct schedule_result *r, const struct schedule_query *q,
			    const struct engine_ops *e)
{
	static const struct {
		const char *algo, *label;
		enum swing_variant v;
	} runs[] = {
	    {"swing", "swing/B", SWING_BANDWIDTH},
	    {"swing", "swing/L", SWING_LATENCY},
	    {"recursive-doubling", "rd/B", SWING_BANDWIDTH},
	    {"recursive-doubling", "rd/L", SWING_LATENCY},
	};

	for (unsigned i = 0; i < ARRAY_SIZE(runs); i++) {
		struct schedule_outcome *o = outcome_next(r);

		run_torus(r, q, o, runs[i].algo, runs[i].v);
		snprintf(o->algo, sizeof(o->algo), "%s", runs[i].label);
	}
	run_torus_baseline(r, q, outcome_next(r), "ring");
	run_torus_baseline(r, q, outcome_next(r), "bidir-ring");
	run_torus_baseline(r, q, outcome_next(r), "bucket");
	(void)e;
}

uint64_t direct_bfb_memory(const struct schedule_result *r, const struct schedule_query *q)
{
	return bfb_memory_estimate(r->g->n, q->collective);
}

/* BFB (lp: by its LP); alone, with the expansion construction it is
 * compared with when the topology is one, or Thm 13's prediction on a
 * product. */
static void build_bfb(struct schedule_result *r, const struct schedule_query *q,
		      const struct engine_ops *e, bool lp)
{
	struct schedule_outcome *o = outcome_next(r);
	struct ofc_error err = {0};

	run_bfb(r, q, o, e, lp);
	if (r->compare)
		return;
	if (expand_applies(r->tree)) {
		r->construction = outcome_next(r);
		run_expansion(r, q, r->construction);
		outcome_drop(r->construction);
	} else if (r->tree->op == TOPO_PRODUCT && o->applies) {
		/* No construction: Thm 13 predicts BFB on the product. */
		if (expand_predict(r->tree, q->collective, &r->bopts, &o->pred, &err) == 0)
			o->has_pred = true;
	}
}

void direct_build_bfb(struct schedule_result *r, const struct schedule_query *q,
		      const struct engine_ops *e)
{
	build_bfb(r, q, e, false);
}

void direct_build_bfb_lp(struct schedule_result *r, const struct schedule_query *q,
			 const struct engine_ops *e)
{
	build_bfb(r, q, e, true);
}

void direct_build_expansion(struct schedule_result *r, const struct schedule_query *q,
			    const struct engine_ops *e)
{
	(void)e;
	run_expansion(r, q, outcome_next(r));
}

void direct_build_baseline(struct schedule_result *r, const struct schedule_query *q,
			   const struct engine_ops *e)
{
	run_baseline(r, q, outcome_next(r), e->name);
}

void direct_build_torus(struct schedule_result *r, const struct schedule_query *q,
			const struct engine_ops *e)
{
	run_torus_auto(r, q, outcome_next(r), e->name);
}

void direct_build_bucket(struct schedule_result *r, const struct schedule_query *q,
			 const struct engine_ops *e)
{
	run_torus_baseline(r, q, outcome_next(r), e->name);
}
