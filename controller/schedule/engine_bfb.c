/* The engines of the first family on a direct-connect topology: BFB
 * (exact, or lp_solve's), explicit or symmetry-reduced, the paper's
 * expansion constructions, and the classic baselines (ring, bidir-ring,
 * recursive, torus-rings); the rows of engines.c name the builds at the
 * end. */
#include "baselines/baselines.h"
#include "bfb/bfb.h"
#include "controller/schedule/internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Nodes above which BFB on a degraded graph keeps the healthy structure
 * and a patch by itself, as the baselines are reduced above
 * BASELINE_MAX_SCHEDULE_NODES: the patch is verified too, and within
 * 0.05% of the explicit degraded BFB on the tori measured, where the
 * explicit one at 4,096 hosts took ofcd 39 s and 1.7 GB per failure. */
#define BFB_PATCH_AUTO_NODES 1024

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

/* The arcs of the healthy graph the degraded one lacks, into gone[]
 * (healthy->m entries): what the request's --fail and the config's failed
 * links and ports took out together. The degraded graph keeps each node's
 * surviving arcs in the healthy order (topo_without_arcs), so they are a
 * subsequence of the healthy ones; of parallel arcs the first ones are
 * taken as kept, which names the same graph. false when g is not the
 * healthy graph less some arcs. */
static bool gone_arcs(const struct graph *healthy, const struct graph *g, bool *gone)
{
	if (g->n != healthy->n)
		return false;
	for (uint32_t u = 0; u < g->n; u++) {
		uint32_t j = g->off[u];

		for (uint32_t a = healthy->off[u]; a < healthy->off[u + 1]; a++) {
			bool kept = j < g->off[u + 1] && g->adj[j] == healthy->adj[a];

			gone[a] = !kept;
			j += kept;
		}
		if (j != g->off[u + 1])
			return false;
	}
	return true;
}

/* Why BFB on a degraded graph cannot be the healthy reduced schedule and a
 * patch (then NULL, *G the healthy graph's group). */
static const char *not_patchable(const struct schedule_result *r, struct sched_group *G,
				 struct ofc_error *err)
{
	if (!r->healthy)
		return "no healthy graph to keep";
	if (r->demand || r->link_rate || r->host_betas || r->bfb_inject || r->nic_ports)
		return "the fabric's hosts or links are not alike";
	/* r->tree is the degraded graph's (no family): the healthy spec's */
	if (!r->healthy_tree)
		return "the healthy graph has no spec";
	if (sched_group_of(r->healthy, r->healthy_tree, G, err) < 0)
		return err->msg[0] ? err->msg : "the healthy graph has no translation group";
	return NULL;
}

/* Failures that take whole orbits of arcs (a switch carrying port j of
 * every host: every node's link to u + s_j) leave the degraded graph a
 * Cayley graph of the healthy one's group, on fewer generators: then
 * true, with *G that group checked on r->g (sched_group_of), and BFB is
 * symmetry-reduced on the degraded graph itself, where a patch would
 * plan every node again. */
static bool orbits_gone(const struct schedule_result *r, struct sched_group *G)
{
	struct ofc_error err = {0};

	return r->healthy_tree && graph_outdeg(r->g, 0) > 0 &&
	       sched_group_of(r->g, r->healthy_tree, G, &err) == 0;
}

/* BFB reduced on the degraded graph (orbits_gone): node 0's program x G,
 * verified by the same symmetry on the degraded graph. */
static void run_bfb_orbits(struct schedule_result *r, const struct schedule_query *q,
			   struct schedule_outcome *o, const struct bfb_opts *bo,
			   const struct sched_group *G)
{
	struct ofc_error err = {0};
	struct sched_reduced red;
	double t0 = now_seconds();

	outcome_phase(r, o, "generation");
	if (bfb_reduced(r->g, G, q->collective, bo, &red, &o->bst, &err) < 0) {
		outcome_not_applies(o, &err);
		return;
	}
	o->s = red.prog;
	o->group = red.group;
	o->is_reduced = true;
	o->gen_s = now_seconds() - t0;
	o->applies = true;
	o->tau_b = o->bst.tau_b;
	o->tau_b_value = o->bst.tau_b_value;
	size_t len = strlen(r->note);
	snprintf(r->note + len, sizeof(r->note) - len,
		 "%sthe failures take every node's link of a port alike (a switch carrying "
		 "that port of every host): BFB symmetry-reduced on the degraded graph "
		 "(node 0's program x %s)",
		 len ? "; " : "", G->name);
	outcome_finish(r, o);
}

/* BFB on the degraded graph as the healthy reduced schedule plus the
 * patch of the nodes the failures reach (bfb_patch), checked without
 * expansion. false (o untouched, a note saying why where --reduced asked)
 * when there is nothing to keep: the caller builds the explicit schedule
 * as before. */
static bool run_bfb_patched(struct schedule_result *r, const struct schedule_query *q,
			    struct schedule_outcome *o, const struct bfb_opts *bo, uint64_t limit)
{
	struct ofc_error err = {0};
	struct sched_reduced red;
	struct sched_group G;
	double t0 = now_seconds();
	const char *why = not_patchable(r, &G, &err);

	if (why) {
		size_t len = strlen(r->note);

		if (q->reduced == SCHEDULE_REDUCED_ALWAYS)
			snprintf(r->note + len, sizeof(r->note) - len,
				 "%sBFB explicit on the degraded graph: %.300s", len ? "; " : "",
				 why);
		return false;
	}
	struct sched_group Gd;
	if (orbits_gone(r, &Gd)) {
		run_bfb_orbits(r, q, o, bo, &Gd);
		return true;
	}
	/* failed hosts: the survivors run on r->g, renumbered; the patch
	 * keeps the whole graph's numbering (r->whole, the hosts absent) */
	const struct graph *deg = r->keep ? r->whole : r->g;
	bool *gone = xcalloc((size_t)r->healthy->m + 1, sizeof(bool));
	struct bfb_stats hst;
	if (!gone_arcs(r->healthy, deg, gone)) {
		free(gone);
		return false;
	}
	if (bfb_reduced(r->healthy, &G, q->collective, bo, &red, &hst, &err) < 0) {
		free(gone);
		outcome_not_applies(o, &err);
		return true;
	}
	outcome_phase(r, o, "generation");
	/* the degraded bound on the core the patch mostly leaves idle */
	bound_beside_start(r);
	if (bfb_patch(r->healthy, &red, gone, r->keep ? r->absent : NULL, bo, limit, &o->patch,
		      &o->bst, &err) < 0) {
		/* Nothing kept to build on (a longer schedule, the region over
		 * the memory limit, a fabric cut apart): the explicit schedule,
		 * as before, says the rest (who can no longer reach whom). */
		size_t len = strlen(r->note);

		snprintf(r->note + len, sizeof(r->note) - len,
			 "%sBFB explicit on the degraded graph: %.300s", len ? "; " : "", err.msg);
		free(gone);
		sched_reduced_free(&red);
		memset(&o->bst, 0, sizeof(o->bst));
		return false;
	}
	o->s = red.prog;
	/* the schedule's graph is the degraded one (the program the healthy's) */
	snprintf(o->s.topology, sizeof(o->s.topology), "%s", deg->spec);
	o->group = red.group;
	o->gone = gone;
	o->patch_graph = r->healthy;
	o->is_reduced = o->is_patched = true;
	/* tau_B as the links carry it (outcome_finish), which for BFB is its
	 * U* sum: the patch has no per-step U* of the nodes it does not solve */
	o->is_bfb = false;
	o->gen_s = now_seconds() - t0;
	o->applies = true;
	size_t len = strlen(r->note);
	snprintf(r->note + len, sizeof(r->note) - len,
		 "%sBFB kept as structure: the healthy program x %s and a patch of %zu "
		 "transfers for the %llu nodes the failures reach",
		 len ? "; " : "", G.name, o->patch.prog.nxfers,
		 (unsigned long long)(o->patch.nregion + o->bst.problems));
	len = strlen(r->note);
	if (o->bst.longer) /* the base padded (bfb_patch) */
		snprintf(r->note + len, sizeof(r->note) - len,
			 ", each phase %u step%s past the healthy diameter", o->bst.longer,
			 o->bst.longer == 1 ? "" : "s");
	outcome_finish(r, o);
	return true;
}

/* A degraded fabric's BFB re-balanced across steps (bfb_rebalance) where
 * that lowers tau_B: the failures leave some steps' busiest links to a
 * few damaged nodes, whose shards fit under the healthy nodes' level over
 * the other steps. The better of the two is kept and o->rebalanced says
 * which. */
static void rebalance_degraded(struct schedule_result *r, struct schedule_outcome *o)
{
	struct bfb_rebalance_stats st;
	double t0 = now_seconds();

	bound_beside_wait(r);
	/* at the degraded fabric's bound already: nothing to find */
	if (r->have_degraded && o->tau_b_value <= r->degraded.tau_b * (1 + 1e-9))
		return;

	/* one step more is worth alpha over a block's time on one link */
	double mb = cost_mb_us(&r->cost) * 1e-6,
	       step_blocks = mb > 0 ? r->cost.alpha * r->g->n / (o->bst.degree * mb) : -1;

	/* half the time left at most: verifying and pricing come after */
	struct ofc_clock half = r->clock ? *r->clock : (struct ofc_clock){0};
	if (half.deadline > 0)
		half.deadline = t0 + (half.deadline - t0) / 2;

	o->rebalance_tried = true;
	o->tau_bfb = o->tau_b;
	o->bfb_steps = o->s.nsteps;
	if (bfb_rebalance(r->g, &o->s, 0, step_blocks, &half, &st) != 1)
		return;
	o->rebalanced = true;
	o->rebalanced_receivers = st.receivers;
	o->rebalance_steps_added = st.steps_added;
	o->tau_b = frac_make((int64_t)st.sum_after * o->bst.degree, (int64_t)SCHED_ONE * r->g->n);
	o->tau_b_value = frac_value(o->tau_b);
	o->gen_s += now_seconds() - t0;
}

static void run_bfb(struct schedule_result *r, const struct schedule_query *q,
		    struct schedule_outcome *o, const struct engine_ops *e, bool lp)
{
	struct ofc_error err = {0};
	struct bfb_opts bo = r->bopts;
	double t0 = now_seconds();

	snprintf(o->algo, sizeof(o->algo), "%s", e->name);
	if (lp)
		bo.method = BFB_LP;
	o->is_bfb = true;
	bo.rate = r->link_rate;
	bo.inject = r->bfb_inject;
	bo.nic_forwarding = r->nic_forwarding;
	bo.clock = r->clock;
	/* Refuse, with the estimate, what would not fit, before building it. */
	uint64_t limit = q->max_memory ? q->max_memory : mem_physical() / 2;
	double need = (double)mem_held() + (double)direct_bfb_memory(r, q);
	/* The explicit verifier's reach for reductions: n^2 cells */
	bool unverifiable =
	    q->collective != SCHED_ALLGATHER && (uint64_t)r->g->n * r->g->n > (1ull << 24);
	/* Above BFB_PATCH_AUTO_NODES a degraded graph's BFB is kept as
	 * structure whatever the collective (an allgather's explicit one at
	 * 8,192 nodes was 67 M transfers, 84 s and 4 GB here), and so is
	 * the healthy run that prices it, whose time alone is used. */
	bool big = q->reduced == SCHEDULE_REDUCED_AUTO && r->g->n > BFB_PATCH_AUTO_NODES;
	bool auto_reduce = q->reduced == SCHEDULE_REDUCED_AUTO &&
			   (need > (double)limit || r->g->n > BFB_MAX_NODES || unverifiable ||
			    (big && r->topology_ports));
	/* Failed links and ports (the request's --fail or the config's):
	 * the healthy structure and a patch, else (nothing kept to build on)
	 * the explicit schedule as before. */
	bool patch = r->healthy && (q->reduced == SCHEDULE_REDUCED_ALWAYS || auto_reduce || big);
	if (patch && run_bfb_patched(r, q, o, &bo, limit))
		return;
	if (q->reduced == SCHEDULE_REDUCED_ALWAYS && !patch) {
		run_bfb_reduced(r, q, o, &bo, NULL);
		return;
	}
	if (auto_reduce && !patch) {
		struct sched_group G;
		char why[160], need_s[32];

		if (!outcome_not_reducible(r, &G, &err)) {
			fmt_size(need_s, sizeof(need_s), (uint64_t)need);
			if (r->g->n > BFB_MAX_NODES)
				snprintf(why, sizeof(why),
					 "%u nodes: explicit BFB schedules stop at %u", r->g->n,
					 BFB_MAX_NODES);
			else if (need <= (double)limit)
				snprintf(why, sizeof(why),
					 "%u nodes: the explicit verifier checks reductions up to "
					 "4096",
					 r->g->n);
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
		/* and why the structure was not kept, where it was tried */
		const char *kept = strstr(r->note, "BFB explicit on the degraded graph: ");
		size_t len = strlen(o->why);
		if (patch && kept)
			snprintf(o->why + len, sizeof(o->why) - len, "; not kept as structure: %s",
				 kept + strlen("BFB explicit on the degraded graph: "));
		o->why_code = OFC_E_RUNTIME;
		o->size_refused = patch;
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
	if (r->healthy && !r->link_rate && !bo.inject && !bo.chunks)
		rebalance_degraded(r, o);
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

/* Baseline a's explicit schedule into o->s (refusals name it `algo`:
 * bucket is torus-rings' schedule): whether it applies, then estimated
 * against the memory limit, then built; false (o says why) when it does
 * not apply, is refused or is out of time. (Estimated first, torus-rings
 * on hypercube:12 in `--algo all` was "over the memory limit", not "needs
 * a torus".) */
bool direct_explicit_baseline(struct schedule_result *r, const struct schedule_query *q,
			      struct schedule_outcome *o, const char *algo, enum baseline_algo a)
{
	struct ofc_error err = {0};

	if (baseline_check(r->g, r->tree, a, q->collective, &err) < 0) {
		outcome_not_applies(o, &err);
		return false;
	}
	if (outcome_over_memory(r, q, o, algo, baseline_transfers(r->g, a, q->collective),
				baseline_pieces(r->g, a)))
		return false;
	outcome_phase(r, o, "generation");
	if (baseline_schedule(r->g, r->tree, a, q->collective, &o->s, r->clock, &err) < 0) {
		if (!outcome_out_of_time(r, o, "generation"))
			outcome_not_applies(o, &err);
		return false;
	}
	o->have = true;
	return !outcome_out_of_time(r, o, "generation");
}

static void run_baseline(struct schedule_result *r, const struct schedule_query *q,
			 struct schedule_outcome *o, const struct engine_ops *e)
{
	struct ofc_error err = {0};
	double t0 = now_seconds();
	struct sched_reduced red;
	const char *algo = e->name;

	snprintf(o->algo, sizeof(o->algo), "%s", algo);
	/* Reduced: asked for, or above BASELINE_MAX_SCHEDULE_NODES where the
	 * baseline has a symmetric form on this graph (else explicit), its
	 * program and check estimated first. */
	uint32_t nreps;
	if (q->reduced == SCHEDULE_REDUCED_ALWAYS ||
	    (q->reduced == SCHEDULE_REDUCED_AUTO && r->g->n > BASELINE_MAX_SCHEDULE_NODES &&
	     baseline_reduced_transfers(r->g, r->tree, e->baseline, q->collective, &nreps) > 0 &&
	     !outcome_not_reducible(r, &o->group, &err) &&
	     (!(e->flags & ENGINE_BINARY) || o->group.binary))) {
		const char *why = outcome_not_reducible(r, &o->group, &err);

		if (why) {
			snprintf(o->why, sizeof(o->why), "--reduced: %.400s", why);
			o->why_code = OFC_E_INPUT;
			return;
		}
		if (outcome_reduced_over_memory(r, q, o, algo, e->baseline))
			return;
		outcome_phase(r, o, "generation");
		if (baseline_reduced(r->g, r->tree, e->baseline, q->collective, &o->group, &red,
				     &err) < 0) {
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
	if (!direct_explicit_baseline(r, q, o, algo, e->baseline))
		return;
	o->gen_s = now_seconds() - t0;
	o->applies = true;
	outcome_finish(r, o);
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
	run_baseline(r, q, outcome_next(r), e);
}
