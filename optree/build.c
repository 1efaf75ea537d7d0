/* Building the schedules: OpTree (and one-stage, its k = 1 case) from the
 * stages' colourings, the ring and neighbor-exchange baselines, and
 * optree_build, which turns an algorithm's all-gather into the collective
 * asked for (collectives.c) or builds Wrht (wrht.c). Steps are emitted and
 * split for the add/drop limit in emit.c. */
#include "optree/internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct verify_wdm optree_verify_wdm(const struct optree_ring *r)
{
	return (struct verify_wdm){r->wavelengths, r->fibres, r->max_add};
}

/* ---- the tree --------------------------------------------------------------- */

/* A piece of a colour run inside one step. */
struct piece {
	uint32_t arc;
	uint32_t colour; /* first colour, within the step: colour mod F*W */
	uint32_t count;
	uint32_t inst; /* index of its first lightpath among the arc's (= block index) */
	uint8_t dir;
};

/* Holdings: blocks each node holds, as CSR over nodes (node ids < 65536). */
struct hold {
	uint32_t *off;
	uint16_t *b;
};

/* Steps of a stage whose lightpaths differ from the step before, with its
 * colours laid row-major (colour c: step c / F W, channel c mod F W) or
 * column-major (step c mod steps, channel c / steps): sums of hashes of
 * (arc, channel) per step, compared. */
static uint32_t layout_changes(const struct rwa_solution *sol, const struct ot_arc *arc,
			       uint32_t keep, uint32_t steps, uint32_t FW, bool colmajor)
{
	uint64_t *h = xcalloc((size_t)steps + 1, sizeof(uint64_t));
	uint32_t changes = 0;

	for (size_t k = 0; k < sol->nruns; k++) {
		const struct rwa_run *ru = &sol->runs[k];

		/* Reduced: group 0's runs; the other groups' are theirs moved,
		 * so they change at the same steps. */
		if (arc[ru->id].src >= keep)
			continue;
		for (uint32_t c = ru->colour; c < ru->colour + ru->count; c++) {
			uint32_t t = colmajor ? c % steps : c / FW,
				 q = colmajor ? c / steps : c % FW;
			uint64_t x = ((uint64_t)ru->id << 20 | q) * 0x9e3779b97f4a7c15ull;

			h[t] += (x ^ (x >> 29)) * 0xbf58476d1ce4e5b9ull + ru->dir;
		}
	}
	for (uint32_t t = 1; t < steps; t++)
		changes += h[t] != h[t - 1];
	free(h);
	return changes;
}

/* Pass 1 of build_tree: every stage's demands and colours (counts only
 * needed), and how stage ends are merged. */
struct tree_plan {
	struct stage_rwa st[OPTREE_MAX_DEPTH];
	uint32_t cs[OPTREE_MAX_DEPTH];	   /* colour steps */
	uint32_t part[OPTREE_MAX_DEPTH];   /* channels of its last step, when partly filled */
	uint32_t mincnt[OPTREE_MAX_DEPTH]; /* fewest blocks a node holds before it */
	bool first[OPTREE_MAX_DEPTH];	   /* its partial step goes first */
	bool mirror[OPTREE_MAX_DEPTH];	   /* its last step on the top channels */
	bool merge[OPTREE_MAX_DEPTH];	   /* its last step shared with the next's first */
	uint64_t total;			   /* transfers to emit */
};

static void plan_stages(const struct optree_ring *r, const struct levels *L, uint32_t depth,
			bool reduced, struct tree_plan *tp)
{
	uint32_t n = r->nodes, FW = ring_channels(r);
	uint32_t *cnt = xmalloc((size_t)n * sizeof(uint32_t));

	for (uint32_t u = 0; u < n; u++)
		cnt[u] = 1;
	for (uint32_t i = 1; i <= depth; i++) {
		struct stage_rwa *s = &tp->st[i - 1];
		uint32_t cs, used = 0;

		tp->mincnt[i - 1] = UINT32_MAX;
		for (uint32_t u = 0; u < n; u++)
			if (cnt[u] < tp->mincnt[i - 1])
				tp->mincnt[i - 1] = cnt[u];
		stage_arcs(L, i, cnt, s);
		stage_colour(L, i, true, s);
		cs = tp->cs[i - 1] = (s->colours + FW - 1) / FW;
		/* Channels busy in the last colour step, when it is not full. */
		for (int d = 1; d <= 2; d++)
			if (s->sol.colours[d] > (cs - 1) * FW &&
			    s->sol.colours[d] - (cs - 1) * FW > used)
				used = s->sol.colours[d] - (cs - 1) * FW;
		tp->part[i - 1] = used < FW ? used : 0;
		for (size_t k = 0; k < s->narcs; k++)
			if (!reduced || s->arc[k].src < L->size[i - 1][0])
				tp->total += s->arc[k].count;
		stage_counts(s, cnt, n);
	}
	free(cnt);
}

/* Merge stage ends. When stage i's last colour step and stage i+1's fit
 * side by side on the channels (both partly filled), they become one step:
 * stage i's on the top channels, stage i+1's (its first) on the bottom
 * ones, disjoint, so conflict-free. Stage i+1's part may only carry blocks
 * its senders held before that step; its arcs' last colours carry their
 * highest instances, so the blocks each node received in the shared step
 * are put first in its holdings (checked in join_open_step). A node
 * receives at most 2 part_i blocks in the shared step and an arc of stage
 * i+1 has at most part_(i+1) colours in it, so an arc carrying at least
 * part_i+1 + 2 part_i blocks can always fill them from older ones: merges
 * are made where every node holds that many (optree_merges; the check
 * stays as a guard). A stage's partial step serves one boundary: greedy
 * left to right, as the planner predicts (plan.c). It also gives --overlap
 * what it pairs stages for: stage i+1 starts on channels idle in stage i's
 * end. */
static void plan_merges(struct tree_plan *tp, uint32_t depth, uint32_t FW, bool overlap,
			bool reduced)
{
	const uint32_t *part = tp->part;

	for (uint32_t i = 0; i + 1 < depth && !reduced; i++)
		if (optree_merges(part[i], part[i + 1], tp->mincnt[i + 1], FW) && !tp->first[i]) {
			tp->merge[i] = true;
			tp->mirror[i] = true;
			tp->first[i + 1] = true;
		} else if (overlap && part[i] && part[i + 1] && !tp->first[i] &&
			   part[i] + part[i + 1] <= FW) {
			/* --overlap, where they cannot merge: the same arrangement
			 * in two steps, so stage i+1 starts on channels that were
			 * idle in stage i's last step and their MRRs can be
			 * retuned then. */
			tp->mirror[i] = true;
			tp->first[i + 1] = true;
		}
}

/* Stage i's shape and bounds, before its steps are emitted. */
static void stage_describe(struct optree_stage *os, const struct optree_ring *r,
			   const struct levels *L, uint32_t i, const struct tree_plan *tp)
{
	const struct stage_rwa *s = &tp->st[i - 1];

	os->radix = 0;
	os->groups = 0;
	os->min_group = UINT32_MAX;
	for (uint32_t g = 0; g < L->ngroups[i - 1]; g++) {
		uint32_t c = L->child[i - 1][g + 1] - L->child[i - 1][g];

		if (c < 2)
			continue;
		os->groups++;
		if (c > os->radix)
			os->radix = c;
		if (L->size[i - 1][g] < os->min_group)
			os->min_group = L->size[i - 1][g];
		if (L->size[i - 1][g] > os->max_group)
			os->max_group = L->size[i - 1][g];
	}
	os->colour_steps = tp->cs[i - 1];
	os->max_load = s->max_load;
	os->lower_bound = stage_lower_bound(r, L, i, s->arc, s->narcs);
	os->partial_channels = tp->part[i - 1];
	os->partial_first = tp->first[i - 1];
}

/* Each run's first lightpath among its arc's: runs of one arc are
 * consecutive, in colour order. */
static uint32_t *run_instances(const struct rwa_solution *sol)
{
	uint32_t *inst = xmalloc((sol->nruns + 1) * sizeof(uint32_t));

	for (size_t k = 0; k < sol->nruns; k++)
		inst[k] = (k && sol->runs[k - 1].id == sol->runs[k].id)
			      ? inst[k - 1] + sol->runs[k - 1].count
			      : 0;
	return inst;
}

/* Column-major: colour c rides channel c / steps in step c mod steps (a
 * bijection onto steps x F W, so still conflict-free). An arc's run of
 * colours then keeps one lightpath over consecutive steps: the ring retunes
 * when arcs start and end, not at every step of a stage. Returns the steps
 * emitted. */
static uint32_t emit_colmajor(struct emitter *e, const struct stage_rwa *s, const struct hold *h,
			      const uint32_t *inst, uint32_t steps, uint32_t keep)
{
	uint32_t emitted = 0;

	for (uint32_t t = 0; t < steps; t++) {
		for (size_t k = 0; k < s->sol.nruns; k++) {
			const struct rwa_run *ru = &s->sol.runs[k];
			const struct ot_arc *a = &s->arc[ru->id];
			const uint16_t *held = h->b + h->off[a->src];
			uint32_t end = ru->colour + ru->count;

			if (a->src >= keep)
				continue;
			uint32_t c = ru->colour + (t + steps - ru->colour % steps) % steps;

			for (; c < end; c += steps)
				emit_put(e, a->src, a->dst, held[inst[k] + (c - ru->colour)],
					 ru->dir, c / steps);
		}
		emitted += emit_flush(e);
	}
	return emitted;
}

/* The runs cut at colour-step boundaries, by step (CSR in *poff). */
static struct piece *cut_pieces(const struct rwa_solution *sol, const uint32_t *inst,
				uint32_t steps, uint32_t FW, uint32_t **poff_out)
{
	uint32_t *poff = xcalloc((size_t)steps + 2, sizeof(uint32_t));

	for (size_t k = 0; k < sol->nruns; k++) {
		const struct rwa_run *ru = &sol->runs[k];

		for (uint32_t t = ru->colour / FW; t <= (ru->colour + ru->count - 1) / FW; t++)
			poff[t + 1]++;
	}
	for (uint32_t t = 0; t < steps; t++)
		poff[t + 1] += poff[t];
	struct piece *pc = xmalloc(((size_t)poff[steps] + 1) * sizeof(*pc));
	uint32_t *fill = xcalloc((size_t)steps + 1, sizeof(uint32_t));

	for (size_t k = 0; k < sol->nruns; k++) {
		const struct rwa_run *ru = &sol->runs[k];
		uint32_t c = ru->colour, end = ru->colour + ru->count;

		while (c < end) {
			uint32_t t = c / FW, stop = (t + 1) * FW < end ? (t + 1) * FW : end;

			pc[poff[t] + fill[t]++] = (struct piece){
			    ru->id, c - t * FW, stop - c, inst[k] + (c - ru->colour), ru->dir};
			c = stop;
		}
	}
	free(fill);
	*poff_out = poff;
	return pc;
}

/* The stage before left its last step open for this one's partial step:
 * share it when every piece of that step carries blocks held before it
 * (late ones come first), else close it as the stage before's. */
static void join_open_step(struct optree_result *res, struct optree_stage *os, struct emitter *e,
			   const struct stage_rwa *s, const struct piece *pc, const uint32_t *poff,
			   uint32_t steps, const uint32_t *late)
{
	for (uint32_t k = poff[steps - 1]; k < poff[steps]; k++)
		if (pc[k].inst < late[s->arc[pc[k].arc].src]) {
			res->stage[res->nstages - 2].steps += emit_flush(e);
			return;
		}
	os->first_step = res->sched.nsteps - 1;
	os->merged = true;
}

/* Row-major: colour c in step c / F W on channel c mod F W; the partial
 * step first or mirrored onto the top channels as planned, and a merged
 * stage's last step left open. Returns the steps closed. */
static uint32_t emit_rowmajor(struct emitter *e, const struct stage_rwa *s, const struct hold *h,
			      const struct piece *pc, const uint32_t *poff, uint32_t steps,
			      uint32_t keep, uint32_t FW, bool first, bool mirror, bool merge)
{
	uint32_t emitted = 0;

	for (uint32_t o = 0; o < steps; o++) {
		/* partial_first: the last colour step goes first. */
		uint32_t t = first ? (o == 0 ? steps - 1 : o - 1) : o;
		bool top = mirror && t == steps - 1;

		for (uint32_t k = poff[t]; k < poff[t + 1]; k++) {
			const struct piece *q = &pc[k];
			const struct ot_arc *a = &s->arc[q->arc];
			const uint16_t *held = h->b + h->off[a->src];

			if (a->src >= keep)
				continue;
			for (uint32_t c = 0; c < q->count; c++) {
				uint32_t slot = q->colour + c;

				emit_put(e, a->src, a->dst, held[q->inst + c], q->dir,
					 top ? FW - 1 - slot : slot);
			}
		}
		/* A merged stage leaves its last step open for the next. */
		if (merge && o == steps - 1)
			break;
		emitted += emit_flush(e);
	}
	return emitted;
}

/* What every node holds after stage s: its own holdings, then its
 * senders'; only nodes below next are kept (reduced). */
static void hold_after(struct hold *h, const struct stage_rwa *s, uint32_t n, uint32_t next)
{
	struct hold h2;
	uint32_t *grow = xmalloc((size_t)n * sizeof(uint32_t));

	h2.off = xmalloc(((size_t)n + 1) * sizeof(uint32_t));
	for (uint32_t u = 0; u < n; u++)
		grow[u] = u < next ? h->off[u + 1] - h->off[u] : 0;
	for (size_t k = 0; k < s->narcs; k++)
		if (s->arc[k].dst < next)
			grow[s->arc[k].dst] += h->off[s->arc[k].src + 1] - h->off[s->arc[k].src];
	h2.off[0] = 0;
	for (uint32_t u = 0; u < n; u++)
		h2.off[u + 1] = h2.off[u] + grow[u];
	h2.b = xmalloc(((size_t)h2.off[n] + 1) * sizeof(uint16_t));
	for (uint32_t u = 0; u < n; u++) {
		uint32_t k = u < next ? h->off[u + 1] - h->off[u] : 0;

		memcpy(h2.b + h2.off[u], h->b + h->off[u], k * sizeof(uint16_t));
		grow[u] = k;
	}
	for (size_t k = 0; k < s->narcs; k++) {
		uint32_t src = s->arc[k].src, dst = s->arc[k].dst;
		uint32_t m = h->off[src + 1] - h->off[src];

		if (dst >= next)
			continue;
		memcpy(h2.b + h2.off[dst] + grow[dst], h->b + h->off[src], m * sizeof(uint16_t));
		grow[dst] += m;
	}
	free(grow);
	free(h->off);
	free(h->b);
	*h = h2;
}

/* Merging into the next stage: the blocks each node received in the open
 * (shared) step go first in its holdings, so the next stage's partial
 * step, which carries its arcs' last instances, sends only blocks held
 * before it. late[u] becomes how many of u's blocks came late; mark is
 * per block scratch, left zero. */
static void late_first(const struct schedule *sc, struct hold *h, uint32_t n, uint32_t *late,
		       uint32_t *mark)
{
	size_t x0 = sc->step_start[sc->nsteps - 1];

	for (size_t k = x0; k < sc->nxfers; k++) {
		uint32_t u = sc->xfers[k].dst;

		if (mark[sc->xfers[k].block] != u + 1) {
			mark[sc->xfers[k].block] = u + 1;
			late[u]++;
		}
	}
	for (uint32_t u = 0; u < n; u++) {
		uint16_t *b = h->b + h->off[u];
		uint32_t len = h->off[u + 1] - h->off[u], front = 0;

		if (!late[u])
			continue;
		/* Mark u's late blocks again (marks are per block, and another
		 * node may have overwritten them). */
		for (size_t k = x0; k < sc->nxfers; k++)
			if (sc->xfers[k].dst == u)
				mark[sc->xfers[k].block] = u + 1;
		for (uint32_t j = 0; j < len; j++)
			if (mark[b[j]] == u + 1) {
				uint16_t x = b[j];

				memmove(b + front + 1, b + front, (j - front) * sizeof(uint16_t));
				b[front++] = x;
			}
		late[u] = front;
	}
	for (size_t k = x0; k < sc->nxfers; k++)
		mark[sc->xfers[k].block] = 0;
}

/* Stage i's steps, from what every node holds (h). */
static void emit_stage(const struct optree_ring *r, const struct tree_plan *tp, uint32_t i,
		       uint32_t keep, const struct hold *h, const uint32_t *late, struct emitter *e,
		       struct optree_result *res, struct optree_stage *os)
{
	const struct stage_rwa *s = &tp->st[i - 1];
	uint32_t steps = tp->cs[i - 1], FW = ring_channels(r);
	bool first = tp->first[i - 1], mirror = tp->mirror[i - 1];
	/* Stage i-1 left its last step open for this stage's first. */
	bool joined = e->open;
	uint32_t *inst = run_instances(&s->sol);

	/* Column-major when it changes the lightpaths at fewer steps than the
	 * row-major layout (whose full rows also persist), and when --overlap
	 * does not pair this stage's partial step with a neighbour's. */
	if (!first && !mirror && steps > 1 &&
	    layout_changes(&s->sol, s->arc, keep, steps, FW, true) <
		layout_changes(&s->sol, s->arc, keep, steps, FW, false)) {
		os->steps += emit_colmajor(e, s, h, inst, steps, keep);
		free(inst);
		return;
	}
	uint32_t *poff;
	struct piece *pc = cut_pieces(&s->sol, inst, steps, FW, &poff);

	free(inst);
	if (joined)
		join_open_step(res, os, e, s, pc, poff, steps, late);
	os->steps +=
	    emit_rowmajor(e, s, h, pc, poff, steps, keep, FW, first, mirror, tp->merge[i - 1]);
	free(pc);
	free(poff);
}

/* reduced: see optree_opts.reduced. Stage i's transfers in group g of
 * level i-1 are group 0's moved by its start (the groups are equal and
 * coloured alike, interval colouring being greedy in segment order), so
 * only senders below keep = n_(i-1) are emitted, and only their holdings
 * (those of nodes below n_i after stage i) are kept. */
static int build_tree(const struct optree_ring *r, const struct optree_plan *plan, bool overlap,
		      bool reduced, struct optree_result *res, struct ofc_error *err)
{
	uint32_t n = r->nodes, depth = plan->depth, cap_st = 0;
	struct levels L;
	struct tree_plan tp = {0};

	if (levels_build(n, plan->radix, depth, &L, err) < 0)
		return -1;
	if (reduced && L.uneven) {
		levels_free(&L);
		return ofc_error_set(err, OFC_E_INPUT,
				     "a reduced schedule needs even groups (radices whose "
				     "product is the %u nodes)",
				     n);
	}
	plan_stages(r, &L, depth, reduced, &tp);
	plan_merges(&tp, depth, ring_channels(r), overlap, reduced);

	sched_reserve(&res->sched, tp.total);
	struct emitter e;
	struct hold h = {xmalloc(((size_t)n + 1) * sizeof(uint32_t)),
			 xmalloc(n * sizeof(uint16_t))};

	for (uint32_t u = 0; u <= n; u++)
		h.off[u] = u;
	for (uint32_t u = 0; u < n; u++)
		h.b[u] = (uint16_t)u;
	emitter_init(&e, r, &res->sched);
	uint32_t *late = xcalloc((size_t)n + 1, sizeof(uint32_t)); /* per node: late_first */
	uint32_t *mark = xcalloc((size_t)n + 1, sizeof(uint32_t)); /* per block */

	/* Pass 2: emit, stage by stage, keeping what every node holds. */
	for (uint32_t i = 1; i <= depth; i++) {
		struct optree_stage *os = result_add_stage(res, &cap_st);
		uint32_t keep = reduced ? L.size[i - 1][0] : n;
		uint32_t step0 = res->sched.nsteps;
		size_t x0 = res->sched.nxfers;

		stage_describe(os, r, &L, i, &tp);
		emit_stage(r, &tp, i, keep, &h, late, &e, res, os);
		os->transfers = res->sched.nxfers - x0;
		if (reduced) {
			res->period =
			    xreallocarray(res->period, res->sched.nsteps + 1, sizeof(uint32_t));
			for (uint32_t t = step0; t < res->sched.nsteps; t++)
				res->period[t] = keep;
			/* The whole stage: the program's transfers, every rotation. */
			os->transfers *= n / keep;
		}
		if (i == depth)
			break;
		hold_after(&h, &tp.st[i - 1], n, reduced ? L.size[i][0] : n);
		memset(late, 0, (size_t)n * sizeof(uint32_t));
		if (e.open)
			late_first(&res->sched, &h, n, late, mark);
	}
	free(h.off);
	free(h.b);
	free(late);
	free(mark);
	res->split_steps = e.split_steps;
	emitter_free(&e);
	for (uint32_t i = 0; i < depth; i++)
		stage_rwa_free(&tp.st[i]);
	levels_free(&L);
	return 0;
}

/* ---- baselines ---------------------------------------------------------------- */

/* Ring all-gather: in step t node u forwards block u - t to u + 1,
 * clockwise; the same lightpaths every step. */
static void build_ring(const struct optree_ring *r, struct optree_result *res)
{
	uint32_t n = r->nodes, cap = 0;
	struct emitter e;
	struct ot_arc *arc = xmalloc((size_t)n * sizeof(*arc));
	uint32_t *blk = xmalloc((size_t)n * sizeof(uint32_t));
	struct rwa_solution sol = {0};

	for (uint32_t u = 0; u < n; u++)
		arc[u] = (struct ot_arc){u, (u + 1) % n, 1, RWA_CW};
	colour_fixed(n, arc, n, &sol);
	emitter_init(&e, r, &res->sched);
	sched_reserve(&res->sched, (size_t)n * (n - 1));
	uint32_t lb = demands_lower_bound(r, arc, n);
	for (uint32_t t = 0; t + 1 < n; t++) {
		struct optree_stage *st = result_add_stage(res, &cap);

		for (uint32_t u = 0; u < n; u++)
			blk[u] = (u + n - t) % n;
		emit_fixed(&e, arc, &sol, blk, 1, st);
		st->max_load = 1;
		st->lower_bound = lb;
		st->transfers = n;
	}
	res->split_steps = e.split_steps;
	emitter_free(&e);
	rwa_solution_free(&sol);
	free(arc);
	free(blk);
}

/* Neighbor exchange (Chen et al. 2005), N even: step 0 pairs (2i, 2i+1)
 * swap their blocks; then partners alternate between the other neighbour
 * and the first one, each node passing on the two blocks it received in
 * the step before (its own two in step 1). N/2 steps; two blocks to one
 * neighbour take two channels of that direction. */
static int build_ne(const struct optree_ring *r, struct optree_result *res, struct ofc_error *err)
{
	uint32_t n = r->nodes, cap = 0;
	struct emitter e;
	struct rwa_solution sol[3] = {{0}};

	if (n % 2)
		return ofc_error_set(err, OFC_E_INPUT,
				     "neighbor exchange needs an even number of nodes (%u)", n);
	uint32_t *got = xmalloc((size_t)2 * n * sizeof(uint32_t));
	uint32_t *next = xmalloc((size_t)2 * n * sizeof(uint32_t));
	struct ot_arc *arc = xmalloc((size_t)n * sizeof(*arc));
	emitter_init(&e, r, &res->sched);
	sched_reserve(&res->sched, (size_t)n * (n - 1));
	for (uint32_t k = 0; k < n / 2; k++) {
		struct optree_stage *st = result_add_stage(res, &cap);
		uint32_t nb = k == 0 ? 1 : 2, pattern = k == 0 ? 0 : 1 + k % 2;

		for (uint32_t u = 0; u < n; u++) {
			uint32_t p0 = u % 2 == 0 ? (u + 1) % n : (u + n - 1) % n;
			uint32_t p1 = u % 2 == 0 ? (u + n - 1) % n : (u + 1) % n;
			uint32_t to = k % 2 == 1 ? p1 : p0;

			if (k < 2) {
				next[2 * u] = u;
				next[2 * u + 1] = p0;
			} else {
				next[2 * u] = got[2 * u];
				next[2 * u + 1] = got[2 * u + 1];
			}
			arc[u] = (struct ot_arc){u, to, nb, to == (u + 1) % n ? RWA_CW : RWA_CCW};
		}
		/* The same three link patterns recur: colour each once. */
		if (!sol[pattern].nruns)
			colour_fixed(n, arc, n, &sol[pattern]);
		emit_fixed(&e, arc, &sol[pattern], next, 2, st);
		st->max_load = nb;
		st->lower_bound = demands_lower_bound(r, arc, n);
		st->transfers = (uint64_t)n * nb;
		/* What each node received: its partner's two blocks. */
		for (uint32_t u = 0; u < n; u++) {
			got[2 * arc[u].dst] = next[2 * u];
			got[2 * arc[u].dst + 1] = next[2 * u + 1];
		}
	}
	res->split_steps = e.split_steps;
	emitter_free(&e);
	for (int i = 0; i < 3; i++)
		rwa_solution_free(&sol[i]);
	free(got);
	free(next);
	free(arc);
	return 0;
}

/* The all-gather of an algorithm into res (sched initialised). */
static int build_allgather(const struct optree_ring *r, const struct optree_opts *o,
			   struct optree_result *res, struct ofc_error *err)
{
	struct optree_analytic an;
	int rc = 0;

	optree_analytic(r, &an);
	switch (o->algo) {
	case OPTREE_RING:
		build_ring(r, res);
		res->analytic_steps = r->nodes - 1;
		res->analytic_depth = r->nodes - 1;
		break;
	case OPTREE_NE:
		rc = build_ne(r, res, err);
		res->analytic_steps = r->nodes / 2;
		res->analytic_depth = r->nodes / 2;
		break;
	case OPTREE_ONESTAGE: {
		uint32_t radix = r->nodes;

		rc = optree_plan_radices(r, &radix, 1, &res->plan, err);
		if (rc == 0)
			rc = build_tree(r, &res->plan, false, false, res, err);
		/* Lemma 1: about N^2/8 wavelengths for all-to-all on a ring. */
		res->analytic_steps = (double)r->nodes * r->nodes / (8.0 * ring_channels(r));
		res->analytic_depth = 1;
		break;
	}
	case OPTREE_TREE:
		if (o->plan)
			res->plan = *o->plan;
		else if (o->reduced)
			rc = optree_plan_even(r, &res->plan, err);
		else
			rc = optree_plan_best(r, &res->plan, err);
		if (rc == 0)
			rc = build_tree(r, &res->plan, o->overlap, o->reduced, res, err);
		res->analytic_steps = an.steps;
		res->analytic_depth = an.depth;
		break;
	case OPTREE_WRHT:
		rc = build_wrht(r, res, err);
		res->analytic_steps = NAN; /* no closed form available to us */
		res->analytic_depth = res->nstages;
		break;
	default:
		rc = ofc_error_set(err, OFC_E_INPUT, "unknown algorithm");
	}
	return rc;
}

int optree_build(const struct optree_ring *r, const struct optree_opts *o,
		 struct optree_result *res, struct ofc_error *err)
{
	enum sched_collective c = o->collective ? o->collective : SCHED_ALLGATHER;
	int rc = 0;

	memset(res, 0, sizeof(*res));
	if (optree_ring_check(r, err) < 0)
		return -1;
	if (o->reduced && (o->algo != OPTREE_TREE || c != SCHED_ALLGATHER || o->overlap))
		return ofc_error_set(err, OFC_E_INPUT,
				     "a reduced ring schedule is OpTree's all-gather (no "
				     "--overlap), not %s %s",
				     optree_algo_name(o->algo), sched_collective_name(c));
	if (r->nodes > SCHED_MAX_NODES && !o->reduced)
		return ofc_error_set(err, OFC_E_INPUT,
				     "%u nodes: schedules are built for at most %u (transfers "
				     "name nodes in 16 bits)",
				     r->nodes, SCHED_MAX_NODES);
	if (c != SCHED_ALLGATHER && c != SCHED_REDUCE_SCATTER && c != SCHED_ALLREDUCE &&
	    c != SCHED_ALLTOALL)
		return ofc_error_set(err, OFC_E_INPUT,
				     "on a WDM ring: allgather, reduce-scatter, allreduce or "
				     "alltoall, not %s",
				     sched_collective_name(c));
	if (c == SCHED_ALLTOALL && o->algo != OPTREE_ONESTAGE)
		return ofc_error_set(err, OFC_E_INPUT,
				     "all-to-all on a WDM ring is built as direct lightpaths "
				     "(--algo onestage, through the RWA engines), not %s",
				     optree_algo_name(o->algo));
	res->algo = o->algo;
	res->overlap = o->overlap;
	res->collective = c;
	sched_init(&res->sched, c == SCHED_ALLTOALL ? SCHED_ALLTOALL : SCHED_ALLGATHER,
		   optree_algo_name(o->algo), r->nodes);
	snprintf(res->sched.topology, sizeof(res->sched.topology), "wdm-ring:%u", r->nodes);
	res->sched.size_bytes = r->block_bytes;
	if (c == SCHED_ALLTOALL) {
		rc = build_alltoall(r, o, res, err);
		res->analytic_steps = (double)r->nodes * r->nodes / (8.0 * ring_channels(r));
		res->analytic_depth = 1;
	} else {
		rc = build_allgather(r, o, res, err);
	}
	if (rc == 0 && (c == SCHED_REDUCE_SCATTER || c == SCHED_ALLREDUCE)) {
		struct optree_result ag;

		if (c == SCHED_ALLREDUCE) {
			/* The same all-gather again, forwards. */
			struct optree_opts o2 = *o;

			o2.collective = SCHED_ALLGATHER;
			o2.plan = o->algo == OPTREE_TREE ? &res->plan : o->plan;
			rc = optree_build(r, &o2, &ag, err);
		}
		if (rc == 0) {
			result_reverse(res);
			if (c == SCHED_ALLREDUCE) {
				/* Stage bounds are summed below; the all-gather's
				 * come with its stages. */
				result_concat(res, &ag);
			}
		}
	}
	if (rc < 0) {
		optree_result_free(res);
		return -1;
	}
	/* Stages that merged share one step with the stage before. */
	res->lower_bound_steps = 0;
	for (uint32_t i = 0; i < res->nstages; i++)
		res->lower_bound_steps += res->stage[i].lower_bound - res->stage[i].merged;
	snprintf(res->sched.algorithm, sizeof(res->sched.algorithm), "%s",
		 optree_algo_name(o->algo));
	sched_set_metric(&res->sched, "stages", res->nstages);
	sched_set_metric(&res->sched, "lower_bound_steps", res->lower_bound_steps);
	sched_set_metric(&res->sched, "analytic_steps", res->analytic_steps);
	sched_set_metric(&res->sched, "split_steps", res->split_steps);
	return 0;
}
