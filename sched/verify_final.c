/* The verifier after the last step: every node that takes part ends with
 * what the collective promises (a broadcast's block, an all-gather's
 * every block, an all-to-all's blocks at their targets, a reduction's
 * shards reduced over every input exactly once). */
#include "sched/verify_internal.h"

#include <stdarg.h>
#include <stdio.h>

static bool full_copy(struct vstate *v, uint32_t node, uint64_t block)
{
	uint64_t key = (uint64_t)node * v->nblocks + block;

	if (v->cgrid)
		return origin_of(v, block) == node ||
		       parts_held(v, cell(v, node, block), 0, SCHED_ONE);
	if (origin_of(v, block) == node || bit_get(v, key))
		return true;
	return piece_covers(&v->map, piecemap_get(&v->map, key, false), 0, SCHED_ONE);
}

static bool full_key(struct vstate *v, uint64_t key)
{
	struct seg buf[2];
	uint32_t n;

	for (uint32_t k = 0; v->grid && k < 1u << v->gk; k++)
		if (!same_sum(rw_hash(&v->grid[(key << v->gk) + k]), v->total_weight))
			return false;
	if (v->grid)
		return true;
	const struct seg *p = v->rw ? rw_pieces(v, &v->rw[key], buf, &n)
				    : fold_pieces(&v->fold, &v->fold.e[key], buf, &n);

	for (uint32_t i = 0; i < n; i++)
		if (v->rw ? !same_sum(p[i].hash, v->total_weight) /* sums alone */
			  : p[i].count != v->ninputs || p[i].hash != v->total_weight)
			return false;
	return true;
}

/* The first entry of [key, end) that is not full: full_key's, with the
 * grid's and rw's fields in locals, every part in memory order (an
 * allreduce's final scan of N^2 entries: a call an entry was 38
 * instructions, a third of a ring's check after seq_fused). */
uint64_t verify_first_not_full(struct vstate *v, uint64_t key, uint64_t end)
{
	const struct rwhole *grid = v->grid, *rw = v->rw;
	uint64_t total = v->total_weight << RW_SHIFT, sum = ~((1ull << RW_SHIFT) - 1);

	if (grid) {
		const struct rwhole *e = grid + (key << v->gk), *stop = grid + (end << v->gk);

		while (e < stop && (e->w & sum) == total)
			e++;
		return (uint64_t)(e - grid) >> v->gk;
	}
	for (; rw && key < end; key++)
		if ((rw[key].w & RW_LIST) ? !full_key(v, key) : (rw[key].w & sum) != total)
			return key;
	while (key < end && full_key(v, key))
		key++;
	return key;
}

static bool full_reduce(struct vstate *v, uint32_t node, uint64_t block)
{
	return full_key(v, cell(v, node, block));
}

/* A reduction's shards [lo, hi) here, of the whole schedule's: a
 * chunk's window (block b here is shard lo + b), or every one. */
static void shards_here(const struct vstate *v, uint32_t *lo, uint32_t *hi)
{
	*lo = v->win ? v->win->base : 0;
	*hi = *lo + (uint32_t)v->nblocks;
}

/* A reduction's shard b at node u not full: in a chunk, where the whole
 * check's order would find it (verify_chunk.c reports the first). */
static int reduce_fail(struct vstate *v, uint32_t u, uint32_t b, const char *fmt, ...)
    OFC_PRINTF(4, 5);
static int reduce_fail(struct vstate *v, uint32_t u, uint32_t b, const char *fmt, ...)
{
	char what[240];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	if (v->win)
		v->win->final_key = (uint64_t)u * v->n + b;
	return verify_fail(v, v->s->nsteps, SIZE_MAX, "%s", what);
}

int verify_final_check(struct vstate *v)
{
	uint32_t n = v->n, T = v->s->nsteps, root = v->s->root, lo, hi;

	switch (v->s->collective) {
	case SCHED_BROADCAST:
		for (uint32_t u = 0; u < n; u++)
			if (part(v, u) && !full_copy(v, u, root))
				return verify_fail(
				    v, T, SIZE_MAX,
				    "incomplete: after the last step node %u lacks (part of) "
				    "block %u",
				    u, root);
		break;
	case SCHED_REDUCE:
		shards_here(v, &lo, &hi);
		if (root >= lo && root < hi && !full_reduce(v, root, root - lo))
			return reduce_fail(v, root, root,
					   "the root %u does not end with its block reduced over "
					   "all %u inputs, each exactly once",
					   root, v->ninputs);
		break;
	case SCHED_ALLGATHER:
		/* In parts, every entry in memory order first (as allreduce's),
		 * a word of 64 >> gk whole entries at once when all its bits
		 * are set; a node's own block it holds without its bits. */
		if (v->cgrid && !v->term) {
			uint64_t c = 0, all = (uint64_t)n * n, per = 64 >> v->gk;

			while (c < all) {
				if (((c << v->gk) & 63) == 0 && c + per <= all &&
				    v->cgrid[(c << v->gk) >> 6] == ~0ull) {
					c += per;
					continue;
				}
				/* by diagonal, the first; by node, (u, u) */
				if (!((v->rank ? c < n : c / n == c % n) ||
				      parts_held(v, c, 0, SCHED_ONE)))
					break;
				c++;
			}
			if (c == all)
				break;
		}
		for (uint32_t u = 0; u < n; u++)
			for (uint32_t b = 0; b < n; b++) {
				if (!part(v, u) || !part(v, b))
					continue;
				uint64_t key = (uint64_t)u * n + b;

				/* A word of whole blocks at once when it is full. */
				if (v->full && (key & 63) == 0 && b + 64 <= n &&
				    v->full[key >> 6] == ~0ull) {
					b += 63;
					continue;
				}
				if (!full_copy(v, u, b))
					return verify_fail(
					    v, T, SIZE_MAX,
					    "incomplete: after the last step node %u lacks "
					    "(part of) block %u",
					    u, b);
			}
		break;
	case SCHED_ALLTOALL:
		for (uint32_t o = 0; o < n && !v->sorted; o++)
			for (uint32_t t = 0; t < n; t++)
				if (o != t && required(v, o, t) &&
				    !full_copy(v, t, (uint64_t)o * n + t))
					return verify_fail(
					    v, T, SIZE_MAX,
					    "incomplete: the block from %u never (fully) "
					    "reached %u",
					    o, t);
		break;
	case SCHED_REDUCE_SCATTER:
		shards_here(v, &lo, &hi);
		for (uint32_t u = lo; u < hi; u++)
			if (part(v, u) && !full_reduce(v, u, u - lo))
				return reduce_fail(
				    v, u, u,
				    "node %u does not end with shard %u reduced over "
				    "all %u inputs, each exactly once",
				    u, u, v->ninputs);
		break;
	case SCHED_ALLREDUCE:
		/* By diagonal (cell()), every entry in memory order first: by
		 * node, each would be a cache and TLB miss. The order below
		 * finds the one to report when some is not full. */
		if (v->rank && !v->term &&
		    verify_first_not_full(v, 0, (uint64_t)n * n) == (uint64_t)n * n)
			break;
		shards_here(v, &lo, &hi);
		for (uint32_t u = 0; u < n; u++)
			for (uint32_t b = lo; b < hi; b++)
				if (part(v, u) && part(v, b) && !full_reduce(v, u, b - lo))
					return reduce_fail(v, u, b,
							   "node %u does not end with shard %u "
							   "reduced over all %u inputs, each "
							   "exactly once",
							   u, b, v->ninputs);
		break;
	}
	return 0;
}
