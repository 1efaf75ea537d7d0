/* A patched schedule's expansion and its count of transfers (see sched.h,
 * struct sched_patch): each step's translates of the healthy program
 * less those the patch replaces or a failed host drops, then the patch's
 * own; streamed a step at a time (sched_stream). */
#include "sched/patch_check.h"

#include <stdlib.h>
#include <string.h>

void sched_patch_free(struct sched_patch *p)
{
	if (!p)
		return;
	free(p->region);
	free(p->absent);
	sched_free(&p->prog);
	memset(p, 0, sizeof(*p));
}

/* The (phase, owner, block) pairs the patch plans for owners outside
 * its region (those nodes keep their other blocks' healthy pieces). */
static void overridden(const struct sched_patch *p, const uint8_t *inr, struct kmap *m)
{
	kmap_init(m, p->prog.nxfers / 2 + 16);
	for (size_t i = 0; i < p->prog.nxfers; i++) {
		const struct xfer *x = &p->prog.xfers[i];

		if (x->src < p->prog.nodes && x->dst < p->prog.nodes && !inr[xfer_owner(x)])
			kmap_put(m, key3(xfer_op(x) == XFER_REDUCE, xfer_owner(x), x->block), 0);
	}
}

/* Whether base translate y is replaced: its owner's whole program, or its
 * (owner, block); or dropped: a failed host's, or of its block. */
static bool replaced(const uint8_t *inr, const uint8_t *abs, const struct kmap *over,
		     const struct xfer *y)
{
	return inr[xfer_owner(y)] || (abs && (abs[xfer_owner(y)] || abs[y->block])) ||
	       kmap_get(over, key3(xfer_op(y) == XFER_REDUCE, xfer_owner(y), y->block));
}

/* Per step of the base, how many translates of the failed hosts' blocks
 * it drops beyond those already counted (owned in the region, by a failed
 * host, or planned again): base transfer x of relative block b is the
 * translate owned by a - b for each failed host a (into removed). */
static void absent_removed(const struct sched_reduced *r, const struct sched_patch *p,
			   const uint8_t *inr, const uint8_t *abs, const struct kmap *over,
			   size_t *removed)
{
	const struct schedule *b = &r->prog;

	for (uint32_t i = 0; i < p->nabsent; i++)
		for (uint32_t t = 0; t < b->nsteps; t++)
			for (size_t j = b->step_start[t]; j < b->step_start[t + 1]; j++) {
				const struct xfer *x = &b->xfers[j];
				uint32_t u = sched_group_sub(&r->group, p->absent[i], x->block);

				if (!inr[u] && !abs[u] &&
				    !kmap_get(over,
					      key3(xfer_op(x) == XFER_REDUCE, u, p->absent[i])))
					removed[t]++;
			}
}

/* Per step of the base, how many of its translates the overridden pairs
 * of over replace (into removed, nsteps entries, added to). */
static void removed_per_step(const struct sched_reduced *r, const struct kmap *over,
			     size_t *removed)
{
	const struct schedule *b = &r->prog;
	uint32_t n = r->group.nodes;
	uint32_t *start = xcalloc((size_t)2 * n + 2, sizeof(uint32_t));
	uint32_t *step = xmalloc((b->nxfers + 1) * sizeof(uint32_t));

	for (uint32_t t = 0; t < b->nsteps; t++)
		for (size_t i = b->step_start[t]; i < b->step_start[t + 1]; i++) {
			const struct xfer *x = &b->xfers[i];

			if (x->block < n)
				start[(xfer_op(x) == XFER_REDUCE) * n + x->block + 2]++;
		}
	for (uint32_t k = 0; k < 2 * n; k++)
		start[k + 2] += start[k + 1];
	for (uint32_t t = 0; t < b->nsteps; t++)
		for (size_t i = b->step_start[t]; i < b->step_start[t + 1]; i++) {
			const struct xfer *x = &b->xfers[i];

			if (x->block < n)
				step[start[(xfer_op(x) == XFER_REDUCE) * n + x->block + 1]++] = t;
		}
	for (size_t i = 0; i < over->cap; i++) {
		if (!over->key[i])
			continue;
		uint64_t key = over->key[i] - 1;
		uint32_t ph = (uint32_t)(key >> 32), u = (uint32_t)(key >> 16) & 0xffff,
			 o = (uint32_t)key & 0xffff, rb = ph * n + sched_group_sub(&r->group, o, u);

		for (uint32_t j = start[rb]; j < start[rb + 1]; j++)
			removed[step[j]]++;
	}
	free(start);
	free(step);
}

uint64_t sched_patched_transfers(const struct sched_reduced *r, const struct sched_patch *p)
{
	uint8_t *inr = xcalloc(r->group.nodes + 1, 1), *abs = absent_map(p, r->group.nodes);
	struct kmap over;
	size_t *removed = xcalloc((size_t)r->prog.nsteps + 1, sizeof(size_t));
	uint64_t total = p->prog.nxfers + (uint64_t)(r->group.order - p->nregion - p->nabsent) *
					      sched_block_xfers(&r->prog);

	for (uint32_t i = 0; i < p->nregion; i++)
		inr[p->region[i]] = 1;
	overridden(p, inr, &over);
	removed_per_step(r, &over, removed);
	if (abs)
		absent_removed(r, p, inr, abs, &over, removed);
	for (uint32_t t = 0; t < r->prog.nsteps; t++)
		total -= removed[t];
	kmap_free(&over);
	free(removed);
	free(inr);
	free(abs);
	return total;
}

/* The ordinal of the lane-th arc of u among its surviving ones. */
static uint16_t surviving_port(const struct graph *g, const bool *gone, uint32_t u, uint32_t lane)
{
	uint32_t k = 0;

	for (uint32_t a = g->off[u]; a < g->off[u] + lane; a++)
		k += !gone[a];
	return (uint16_t)k;
}

int sched_patched_expand(const struct sched_reduced *r, const struct sched_patch *p,
			 const struct graph *g, const bool *gone, struct schedule *s,
			 struct ofc_error *err)
{
	struct sched_patched_stream ps;
	struct sched_stream st;

	if (r->group.nodes > SCHED_MAX_NODES || r->prog.nodes != r->group.nodes ||
	    p->prog.nsteps > r->prog.nsteps)
		return ofc_error_set(err, OFC_E_INPUT,
				     "%u nodes: no explicit schedule of this patch",
				     r->group.nodes);
	if (sched_patched_transfers(r, p) >= UINT32_MAX)
		return ofc_error_set(err, OFC_E_INPUT,
				     "%llu transfers: too many for an explicit schedule",
				     (unsigned long long)sched_patched_transfers(r, p));
	sched_patched_stream_init(&ps, r, p, g, gone, &r->prog, &st);
	int rc = sched_stream_expand(&st, s, err);
	if (rc == 0)
		s->size_bytes = r->prog.size_bytes;
	sched_patched_stream_free(&ps);
	return rc;
}

static void patched_fill(const void *ctx, uint32_t t, struct xfer *out)
{
	const struct sched_patched_stream *ps = ctx;
	const struct schedule *b = &ps->r->prog, *q = &ps->p->prog;
	size_t k = sched_step_size(b, t), kq = t < q->nsteps ? sched_step_size(q, t) : 0, pos = 0;

	for (uint32_t e = 0; e < ps->r->group.order; e++)
		for (size_t i = 0; i < k; i++) {
			struct xfer y = sched_reduced_move(ps->r, &b->xfers[b->step_start[t] + i],
							   sched_group_element(&ps->r->group, e));

			if (!replaced(ps->inr, ps->abs, ps->over, &y))
				out[pos++] = y;
		}
	for (size_t i = 0; i < kq; i++)
		out[pos++] = q->xfers[q->step_start[t] + i];
	for (size_t i = 0; ps->gone && i < pos; i++)
		out[i].lane = surviving_port(ps->g, ps->gone, out[i].src, out[i].lane);
}

void sched_patched_stream_init(struct sched_patched_stream *ps, const struct sched_reduced *r,
			       const struct sched_patch *p, const struct graph *g, const bool *gone,
			       const struct schedule *head, struct sched_stream *st)
{
	const struct schedule *b = &r->prog, *q = &p->prog;

	*ps = (struct sched_patched_stream){.r = r, .p = p, .g = g, .gone = gone};
	ps->inr = xcalloc(r->group.nodes, 1);
	ps->abs = absent_map(p, r->group.nodes);
	for (uint32_t i = 0; i < p->nregion; i++)
		ps->inr[p->region[i]] = 1;
	ps->count = xcalloc((size_t)b->nsteps + 1, sizeof(size_t));
	ps->over = xmalloc(sizeof(struct kmap));
	overridden(p, ps->inr, ps->over);
	removed_per_step(r, ps->over, ps->count);
	if (ps->abs)
		absent_removed(r, p, ps->inr, ps->abs, ps->over, ps->count);
	/* base transfers are node 0's own: one translate each per node */
	for (uint32_t t = 0; t < b->nsteps; t++)
		ps->count[t] =
		    (size_t)(r->group.order - p->nregion - p->nabsent) * sched_step_size(b, t) -
		    ps->count[t] + (t < q->nsteps ? sched_step_size(q, t) : 0);
	*st = (struct sched_stream){
	    .head = head, .nsteps = b->nsteps, .count = ps->count, .fill = patched_fill, .ctx = ps};
}

void sched_patched_stream_free(struct sched_patched_stream *ps)
{
	kmap_free(ps->over);
	free(ps->over);
	free(ps->inr);
	free(ps->abs);
	free(ps->count);
}
