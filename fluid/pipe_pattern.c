/* Theorem 4's pattern checked: one chunk of the whole of each block
 * through the verifier with the capacities lifted proves delivery,
 * causality and what each vertex may store, copy and reduce for every
 * chunk (fluid/pipe.c checks the capacities of the overlapping chunks).
 *
 * An allgather's pattern is a broadcast from every terminal at once, a
 * reduce-scatter's a reduce to every terminal: the verifier's checks of a
 * block (who holds which part of it, what a vertex that cannot store or
 * copy may send of it, where it is reduced, its delivery to every
 * terminal) read that block's transfers and state alone, and with the
 * capacities lifted nothing joins two blocks. So each root's pieces are
 * checked alone, as a broadcast (a reduce) of its block, a part a thread:
 * every part passes exactly when the whole does. Where one fails, the
 * whole pattern goes through the verifier for its report (the first
 * error in the whole's order), as before. Model W's 32 servers: 256 parts
 * of ~2,000 transfers, 90 ms on one thread, where the whole's 503 K
 * transfers took 330 ms (its tables outgrow the cache). */
#include "fluid/internal.h"
#include "fluid/pipe_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* p at K = 1: the pattern, its steps the layers (reductions backwards);
 * order and ports p's, so that it lays out the pieces as p's expansion
 * does. The count is base's own. */
static void pattern_base(const struct fluid_pipe *p, struct fluid_pipe *base)
{
	const struct fluid_routing *rt = &p->r->routing;
	uint32_t T = p->hops, lo, hi;

	*base = *p;
	base->chunks = 1;
	base->steps = T;
	base->count = xcalloc((size_t)T + 1, sizeof(size_t));
	base->ntransfers = 0;
	for (size_t i = 0; i < rt->npieces; i++) {
		const struct fluid_piece *q = &rt->pieces[i];

		if (!fluid_chunk_of(q, 0, 1, &lo, &hi))
			continue;
		const uint32_t *order = pipe_order(p, q);

		for (uint32_t j = 0; j < q->nhops; j++) {
			uint32_t l = rt->hop_layer[q->first + order[j]];

			if (l < T) {
				base->count[p->rev ? T - 1 - l : l]++;
				base->ntransfers++;
			}
		}
	}
}

/* The whole pattern through sched_verify on pp's network. */
static int whole_check(const struct pipe_pattern *pp, unsigned threads, struct verify_report *rep)
{
	static const struct fluid_steps_opts one = {.chunks = 1};
	const struct fluid_pipe *base = &pp->base;
	/* the head's figures: the verifier reads none of them */
	struct fluid_steps_report brep = {.chunks = 1, .steps = base->steps, .hops = base->hops};
	struct schedule s;
	struct ofc_error err = {0};
	int rc = -1;

	memset(rep, 0, sizeof(*rep));
	if (fluid_pipe_expand(base, &one, &brep, &s, &err) == 0) {
		struct verify_opts vo = {.network = &pp->vn, .threads = threads};

		rc = sched_verify(&s, &vo, rep);
		sched_free(&s);
	}
	if (err.msg[0]) {
		rep->ok = false;
		snprintf(rep->error, sizeof(rep->error), "the pattern: %.300s", err.msg);
	}
	return rc;
}

/* Root b's pieces alone, a broadcast (a reduce) of its block. */
static bool root_check(const struct pipe_pattern *pp, uint32_t b, double *dup)
{
	const struct fluid_pipe *base = &pp->base;
	const struct fluid_routing *rt = &base->r->routing;
	uint32_t T = base->steps, lo, hi;
	size_t *cnt = xcalloc((size_t)T + 1, sizeof(size_t));
	struct schedule s;
	struct verify_report rep;
	struct verify_network vn = pp->vn;
	struct verify_opts vo = {.network = &vn, .threads = 1};
	bool ok;

	for (uint32_t j = pp->off[b]; j < pp->off[b + 1]; j++) {
		const struct fluid_piece *q = &rt->pieces[pp->idx[j]];

		if (!fluid_chunk_of(q, 0, 1, &lo, &hi))
			continue;
		const uint32_t *order = pipe_order(base, q);

		for (uint32_t h = 0; h < q->nhops; h++) {
			uint32_t l = rt->hop_layer[q->first + order[h]];

			if (l < T)
				cnt[base->rev ? T - 1 - l : l]++;
		}
	}
	sched_init(&s, base->rev ? SCHED_REDUCE : SCHED_BROADCAST, "fluid", base->net->nverts);
	s.root = b;
	struct xfer *x = sched_append_steps(&s, T, cnt);

	for (uint32_t st = 0; st < T; st++) {
		uint32_t t = base->rev ? T - 1 - st : st;

		for (uint32_t j = pp->off[b]; j < pp->off[b + 1]; j++)
			x = pipe_fill_piece(base, &rt->pieces[pp->idx[j]], t, x);
	}
	vn.cost = NULL; /* the whole's cost is the caller's */
	ok = sched_verify(&s, &vo, &rep) == 0;
	*dup = rep.duplicate_blocks;
	sched_free(&s);
	free(cnt);
	return ok;
}

/* The roots: every terminal, each with its pieces (in piece order), when
 * the collective is an allgather or a reduce-scatter and every piece
 * leaves from a terminal's block; else none (the whole as one item). */
static void find_roots(struct pipe_pattern *pp)
{
	const struct fluid_net *n = pp->p->net;
	const struct fluid_routing *rt = &pp->p->r->routing;
	enum fluid_collective c = pp->p->r->collective;
	uint32_t nv = n->nverts, *at;

	if (c != FLUID_ALLGATHER && c != FLUID_REDUCE_SCATTER)
		return;
	for (size_t i = 0; i < rt->npieces; i++)
		if (rt->pieces[i].origin >= nv || !(n->kind[rt->pieces[i].origin] & FLUID_TERMINAL))
			return;
	pp->root = xmalloc(((size_t)nv + 1) * sizeof(uint32_t));
	for (uint32_t u = 0; u < nv; u++)
		if (n->kind[u] & FLUID_TERMINAL)
			pp->root[pp->nroots++] = u;
	pp->off = xcalloc((size_t)nv + 2, sizeof(uint32_t));
	pp->idx = xmalloc((rt->npieces + 1) * sizeof(uint32_t));
	for (size_t i = 0; i < rt->npieces; i++)
		pp->off[rt->pieces[i].origin + 1]++;
	for (uint32_t u = 0; u < nv; u++)
		pp->off[u + 1] += pp->off[u];
	at = xmalloc(((size_t)nv + 1) * sizeof(uint32_t));
	memcpy(at, pp->off, (size_t)nv * sizeof(uint32_t));
	for (size_t i = 0; i < rt->npieces; i++)
		pp->idx[at[rt->pieces[i].origin]++] = (uint32_t)i;
	free(at);
}

size_t pipe_pattern_start(struct pipe_pattern *pp, const struct fluid_pipe *p,
			  const struct verify_network *vn)
{
	size_t items;

	memset(pp, 0, sizeof(*pp));
	pp->p = p;
	pattern_base(p, &pp->base);
	pp->vn = *vn;
	pp->bw = xmalloc(((size_t)vn->narcs + 1) * sizeof(double));
	pp->set_bw = xmalloc(((size_t)vn->nsets + 1) * sizeof(double));
	for (uint32_t a = 0; a < vn->narcs; a++)
		pp->bw[a] = INFINITY;
	for (uint32_t k = 0; k < vn->nsets; k++)
		pp->set_bw[k] = INFINITY;
	pp->vn.bw = pp->bw;
	pp->vn.set_bw = pp->set_bw;
	pp->vn.step_times = NULL;
	find_roots(pp);
	items = pp->nroots ? pp->nroots : 1;
	pp->ok = xcalloc(items, sizeof(bool));
	pp->dup = xcalloc(items, sizeof(double));
	if (!pp->nroots)
		return 1;
	pipe_mirror_plan(pp);
	return pp->nitems;
}

void pipe_pattern_item(struct pipe_pattern *pp, size_t i)
{
	if (pp->nroots) {
		uint32_t r = pp->item[i];

		pp->ok[r] = root_check(pp, pp->root[r], &pp->dup[r]);
	} else {
		pp->ok[0] = whole_check(pp, 1, &pp->whole) == 0;
	}
}

int pipe_pattern_end(struct pipe_pattern *pp, struct verify_report *rep)
{
	bool ok = true;
	double dup = 0;
	int rc;

	for (uint32_t i = 0; i < pp->nroots; i++) {
		uint32_t m = pp->mirror[i];

		ok = ok && pp->ok[m];
		/* multiples of 2^-31, under 2^22 blocks: exact in any order */
		dup += pp->dup[m];
	}
	if (!pp->nroots) {
		*rep = pp->whole;
		rc = pp->ok[0] ? 0 : -1;
	} else if (ok) {
		/* sched_verify's report of the whole, which it passes */
		memset(rep, 0, sizeof(*rep));
		rep->ok = true;
		rep->nsteps = pp->base.steps;
		rep->ntransfers = pp->base.ntransfers;
		rep->duplicate_blocks = dup;
		rc = 0;
	} else {
		rc = whole_check(pp, pp->p->threads, rep);
	}
	free(pp->base.count);
	free(pp->bw);
	free(pp->set_bw);
	free(pp->root);
	free(pp->off);
	free(pp->idx);
	free(pp->mirror);
	free(pp->item);
	free(pp->ok);
	free(pp->dup);
	memset(pp, 0, sizeof(*pp));
	return rc;
}
