/* The verifier by symmetry (sched_verify_reduced, see sched.h): a
 * symmetry-reduced schedule checked on its program, the representatives'
 * state alone, as sched_verify would check its expansion.
 *
 * Why the check by symmetry is the explicit one: the schedule is invariant
 * under G and so is the start (node u holds its own block, or its input to
 * every shard), so by induction over the steps the state is too: node v
 * holds block b (or part of it) exactly when node 0 holds b - v. Each
 * orbit of transfers has exactly one member into node 0 (G acts regularly
 * on the nodes), the translate by -dst; and exactly one out of node 0 on
 * port j for every orbit whose transfers use port j, so the load on any
 * arc of port j in a step is the program's load on port j. Reductions need
 * weights G leaves alone: the input of node u to shard k weighs W(k - u),
 * so the (count, weight-sum) pair of node v's shard k is that of node 0's
 * shard k - v, and for a fixed shard the N inputs still have N independent
 * random weights, which is what catches an input folded in twice or
 * missed. Under a subgroup H (translations by multiples of step[i]) the
 * same holds orbit by orbit: node rep + h is its representative's state
 * moved by h, the reps representatives are tracked, an input weighs
 * W(rep(u), k - u), and loads are per (representative, port). *
 * This file is the way in: what the check takes, the representatives'
 * state and inputs, the step loop and the final state. The steps are
 * verify_reduced_step.c's, the all-to-all's holdings by sorting
 * verify_reduced_a2a.c's, reductions in whole-vector spans by their sums
 * verify_reduced_sums.c's.
 */
#include "sched/verify_reduced_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- the verifier by symmetry ------------------------------------------------------ */

/* Representative r holds block (shard) k whole (reduced over all inputs). */
static bool complete(const struct rstate *v, uint32_t r, uint32_t k)
{
	const struct sched_group *G = &v->r->group;
	size_t i = (size_t)r * v->n + k;
	uint32_t h;

	if (!v->reduce)
		return k == sched_group_rep_node(G, r) || (v->full[i >> 6] >> (i & 63)) & 1;
	if (v->sums_bad && v->sums_bad[r])
		return false;
	if (v->np && !v->slot) /* every piece by its sums */
		return true;
	uint64_t total = v->total[sched_group_split(G, k, &h)];
	for (uint32_t j = 0; j < v->np; j++)
		if (!(v->sums >> j & 1) &&
		    ((v->slot[i + j * v->cells].w ^ total << 16) & ~SLOT_MARK) != 0)
			return false;
	if (v->np)
		return true;
	const struct seglist *l = &v->part[i];
	for (uint32_t j = 0; j < l->n; j++)
		if (l->v[j].count != v->n || l->v[j].hash != total)
			return false;
	return l->n > 0 && l->v[0].lo == 0 && l->v[l->n - 1].hi == SCHED_ONE;
}

static int final_check(struct rstate *v)
{
	uint32_t T = v->r->prog.nsteps;
	enum sched_collective c = v->r->prog.collective;
	const struct sched_group *G = &v->r->group;

	/* All-to-all: representative r has every block (o, r) whole, so node
	 * r + h every (o + h, r + h); reduced_a2a_sorted found the first that is not. */
	if (c == SCHED_ALLTOALL && v->afail.at == A2A_AT_END)
		return reduced_fail(
		    v, T, SIZE_MAX,
		    "incomplete: the block from %u never (fully) reached %u (nor its "
		    "translates theirs)",
		    v->afail.origin, v->afail.me);
	(void)G;
	if (c == SCHED_ALLTOALL)
		return 0;
	/* Every piece by its sums: a representative's blocks are alike. */
	bool alike = v->np && !v->slot;
	for (uint32_t i = 0; i < (c == SCHED_REDUCE_SCATTER ? v->reps : v->reps * v->n); i++) {
		uint32_t r = c == SCHED_REDUCE_SCATTER ? i : i / v->n;
		uint32_t k = c == SCHED_REDUCE_SCATTER ? sched_group_rep_node(G, r) : i % v->n;

		if (complete(v, r, k)) {
			if (alike && c != SCHED_REDUCE_SCATTER)
				i = (r + 1) * v->n - 1; /* the next representative's first */
			continue;
		}
		if (v->reps > 1)
			return reduced_fail(
			    v, T, SIZE_MAX,
			    "incomplete: after the last step node %u lacks (part of) %s "
			    "%u%s (and its translates theirs)",
			    sched_group_rep_node(G, r),
			    c == SCHED_ALLGATHER ? "block" : "the reduction of shard", k,
			    c == SCHED_ALLGATHER ? "" : " over all inputs, each once");
		/* Node 0 lacks block k: node v lacks block k + v, every v. */
		if (c == SCHED_ALLGATHER)
			return reduced_fail(
			    v, T, SIZE_MAX,
			    "incomplete: after the last step node 0 lacks (part of) block "
			    "%u (and every node v block %u + v)",
			    k, k);
		if (c == SCHED_REDUCE_SCATTER)
			return reduced_fail(
			    v, T, SIZE_MAX,
			    "node 0 does not end with shard 0 reduced over all %u inputs, "
			    "each exactly once (nor any node its own)",
			    v->n);
		return reduced_fail(
		    v, T, SIZE_MAX,
		    "node 0 does not end with shard %u reduced over all %u inputs, each "
		    "exactly once (nor any node v shard %u + v)",
		    k, v->n, k);
	}
	return 0;
}

/* The check, deliveries at once (at_once) or by the read lists; -2: at
 * once met a clash. */
/* The group's halves as bit masks for SWAR translation (power-of-two
 * groups). */
static void rstate_masks(struct rstate *v, const struct sched_group *G)
{
	uint32_t n = v->n;

	v->lgn = n > 1 && !(n & (n - 1)) ? (unsigned)__builtin_ctz(n) : 0;
	for (uint32_t i = 0; G->pow2 && G->reps == 1 && i < G->ndims; i++)
		if (G->radix[i] > 1) {
			uint64_t top = (uint64_t)G->radix[i] / 2 << G->shift[i];

			v->swar |= top << v->lgn | top;
		}
	for (uint32_t i = 0; G->pow2 && !G->binary && i < G->ndims; i++)
		if (G->radix[i] > 1)
			v->high |= G->radix[i] / 2 << G->shift[i];
}

/* What the check by symmetry does not take. */
static int reduced_refused(struct rstate *v, size_t cells)
{
	const struct schedule *p = &v->r->prog;
	uint32_t n = v->n;

	if (n < 2 || n > SCHED_REDUCED_MAX_NODES || p->nodes != n || !v->reps || cells > (1u << 26))
		return reduced_fail(v, 0, SIZE_MAX,
				    "%u nodes (program of %u): a reduced schedule has 2..%u", n,
				    p->nodes, SCHED_REDUCED_MAX_NODES);
	if (p->collective != SCHED_ALLGATHER && p->collective != SCHED_REDUCE_SCATTER &&
	    p->collective != SCHED_ALLREDUCE && p->collective != SCHED_ALLTOALL)
		return reduced_fail(v, 0, SIZE_MAX,
				    "%s: the check by symmetry takes allgather, reduce-scatter, "
				    "allreduce and alltoall",
				    sched_collective_name(p->collective));
	if (v->o->wdm || v->o->network)
		return reduced_fail(v, 0, SIZE_MAX,
				    "the check by symmetry is for direct-connect topologies");
	if (p->collective == SCHED_ALLTOALL && p->nxfers > (size_t)1 << 31)
		return reduced_fail(
		    v, 0, SIZE_MAX,
		    "%zu program transfers: the check by symmetry numbers them in 31 bits",
		    p->nxfers);
	if (v->o->graph && v->o->graph->n != n)
		return reduced_fail(v, 0, SIZE_MAX, "the schedule has %u nodes, the topology %u", n,
				    v->o->graph->n);
	return 0;
}

/* Port loads per representative, and where a run of k hops on port j
 * from node 0 ends. Returns the degree. */
static uint32_t reduced_ports(struct rstate *v)
{
	const struct graph *g = v->o->graph;
	uint32_t d = graph_outdeg(g, 0);

	v->port_load = xcalloc((size_t)d * v->reps + 1, sizeof(uint64_t));
	v->port_total = xcalloc((size_t)d * v->reps + 1, sizeof(uint64_t));
	v->run_to = xmalloc(((size_t)d * SCHED_MAX_RUN + 1) * sizeof(uint32_t));
	for (uint32_t j = 0; j < d; j++)
		for (uint32_t k = 0, u = 0; k < SCHED_MAX_RUN; k++) {
			u = g->adj[g->off[u] + j];
			v->run_to[j * SCHED_MAX_RUN + k] = u;
		}
	return d;
}

/* The representatives' state: planes of slots, the allgather's mask, or
 * segment lists; returns whether pieces need their planes. */
static bool reduced_state(struct rstate *v, size_t cells, bool at_once)
{
	const struct schedule *p = &v->r->prog;
	bool planes = v->np && v->sums != (1u << v->np) - 1; /* a piece needs its plane */

	if (v->np) { /* without planes when every piece goes by its sums */
		if (planes) {
			v->slot = sched_huge_alloc(cells * v->np * sizeof(struct rslot));
			v->at_once = at_once;
		}
		if (planes && !at_once) {
			size_t most = 0; /* a step's transfers, its reads and deliveries */

			for (uint32_t t = 0; t < p->nsteps; t++)
				if (p->step_start[t + 1] - p->step_start[t] > most)
					most = p->step_start[t + 1] - p->step_start[t];
			GROW(v->rd, v->cap_rd, most);
			GROW(v->gdl, v->cap_gdl, most);
		}
	} else if (p->collective == SCHED_ALLGATHER &&
		   (v->cnp = reduced_grid_cuts(p, v->cut)) > 0) {
		v->mask = xcalloc(cells + 1, 1);
	} else {
		v->part = xcalloc(cells, sizeof(struct seglist));
	}
	return planes;
}

/* A reduction's inputs. The input of u to shard k weighs W(rep(u), k - u),
 * which H leaves alone; node 0's of shard k (G regular) is W(0, k). A
 * shard's total depends on its class alone. */
static void reduced_inputs(struct rstate *v, size_t cells)
{
	const struct sched_group *G = &v->r->group;
	uint64_t seed = v->o->seed ? v->o->seed : 0x0fc;
	uint32_t n = v->n, h;

	v->total = xcalloc(v->reps, sizeof(uint64_t));
	for (uint32_t i = 0; i < v->reps; i++) {
		uint32_t me = sched_group_rep_node(G, i);

		for (uint32_t k = 0; k < n; k++) {
			uint64_t w =
			    sched_mix64(seed + (uint64_t)i * n + sched_group_sub(G, k, me));
			size_t e = (size_t)i * n + k;

			for (uint32_t j = 0; j < v->np; j++)
				v->slot[e + j * cells] = (struct rslot){w << 16};
			if (!v->np)
				seglist_push(&v->part[e], (struct seg){0, SCHED_ONE, 1, w});
		}
		for (uint32_t u = 0; u < n; u++) {
			uint32_t ru = sched_group_split(G, u, &h);

			v->total[i] +=
			    sched_mix64(seed + (uint64_t)ru * n + sched_group_sub(G, me, u));
		}
	}
}

static void rstate_free(struct rstate *v, size_t cells)
{
	for (size_t k = 0; v->part && k < cells; k++)
		free(v->part[k].v);
	free(v->part);
	free(v->mask);
	free(v->slot);
	free(v->snap);
	free(v->gdl);
	free(v->rd);
	free(v->total);
	free(v->sums_bad);
	free(v->full);
	free(v->dl);
	free(v->port_load);
	free(v->port_total);
	free(v->run_to);
}

static int verify_reduced(const struct sched_reduced *r, const struct verify_opts *o,
			  struct verify_report *report, bool at_once)
{
	static const struct verify_opts none = {0};
	const struct schedule *p = &r->prog;
	struct rstate v = {.r = r,
			   .o = o ? o : &none,
			   .rep = report,
			   .n = r->group.nodes,
			   .reps = r->group.reps,
			   .split_node = {UINT32_MAX, UINT32_MAX}};
	uint32_t d = 0;
	size_t cells = (size_t)v.reps * v.n;
	int rc = -1;

	rstate_masks(&v, &r->group);
	memset(report, 0, sizeof(*report));
	report->ok = true;
	report->nsteps = p->nsteps;
	report->ntransfers = (size_t)sched_reduced_transfers(r);
	if (reduced_refused(&v, cells) < 0)
		return -1;
	if (v.o->graph)
		d = reduced_ports(&v);
	v.reduce = p->collective != SCHED_ALLGATHER && p->collective != SCHED_ALLTOALL;
	v.np = v.reduce ? reduced_grid_cuts(p, v.cut) : 0;
	v.cells = (uint32_t)cells;
	v.sums = v.np ? reduced_span_pieces(&v) : 0;
	bool planes = reduced_state(&v, cells, at_once);

	if (v.reduce && (planes || !v.np))
		reduced_inputs(&v, cells);
	else if (!v.reduce)
		v.full = xcalloc(cells / 64 + 1, sizeof(uint64_t));
	if (p->collective == SCHED_ALLTOALL)
		reduced_a2a_sorted(&v);
	for (uint32_t t = 0; t < p->nsteps; t++)
		if ((rc = reduced_step(&v, t, planes, cells, d)) < 0)
			goto out;
	for (size_t j = 0; v.port_total && j < (size_t)d * v.reps; j++)
		report->max_total_link_load =
		    fmax(report->max_total_link_load, (double)v.port_total[j] / SCHED_ONE);
	if (v.sums)
		reduced_span_sums(&v);
	report->pieces_by_sums = popcount64(v.sums);
	rc = final_check(&v) < 0 ? -1 : 0;
out:
	report->duplicate_blocks = v.dup * r->group.order;
	rstate_free(&v, cells);
	return rc;
}

int sched_verify_reduced(const struct sched_reduced *r, const struct verify_opts *o,
			 struct verify_report *report)
{
	int rc = verify_reduced(r, o, report, true);

	return rc == -2 ? verify_reduced(r, o, report, false) : rc;
}
