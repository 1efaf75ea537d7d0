/* Pieces that take the same route merged (fluid_routing_merge). A mirrored
 * solution carries one copy of each piece per group element, and many of
 * the copies are the same tree: only the share of the unit on each route
 * matters (which part of an origin's data takes which tree is free, the
 * parts being disjoint), so the shares are laid out route by route and
 * equal routes joined. The loads per arc and step, the cost and R do not
 * change; the schedule's transfers do, by the group's order at most. */
#include "fluid/internal.h"

#include <stdlib.h>
#include <string.h>

static int cmp_piece(const void *a, const void *b, void *ctx)
{
	const struct fluid_routing *rt = ctx;
	const struct fluid_piece *p = &rt->pieces[*(const size_t *)a];
	const struct fluid_piece *q = &rt->pieces[*(const size_t *)b];

	if (p->origin != q->origin)
		return p->origin < q->origin ? -1 : 1;
	if (p->target != q->target)
		return p->target < q->target ? -1 : 1;
	if (p->nhops != q->nhops)
		return p->nhops < q->nhops ? -1 : 1;
	for (uint32_t h = 0; h < p->nhops; h++) {
		uint32_t x = rt->hop_arc[p->first + h], y = rt->hop_arc[q->first + h];
		uint32_t lx = rt->hop_layer[p->first + h], ly = rt->hop_layer[q->first + h];

		if (lx != ly)
			return lx < ly ? -1 : 1;
		if (x != y)
			return x < y ? -1 : 1;
	}
	return 0;
}

static bool same_route(const struct fluid_routing *rt, size_t a, size_t b)
{
	const size_t ia = a, ib = b;

	return cmp_piece(&ia, &ib, (void *)rt) == 0;
}

/* Each piece's hops to its place in the merged routing, out[k].first,
 * from its source piece src[k]: each array through one scratch array,
 * which takes its place (the one it leaves the next array's scratch),
 * where copying them back was four passes over the routing and two fresh
 * arrays its size 5% of the 1,024-GPU allgather's CPU, the kernel
 * zeroing their pages. */
static void merge_hops(struct fluid_routing *rt, const struct fluid_piece *out, size_t np,
		       const size_t *src, size_t nh)
{
	uint32_t *scratch = xmalloc((nh + 1) * sizeof(uint32_t));
	uint32_t **const arrays[2] = {&rt->hop_arc, &rt->hop_layer};

	for (int a = 0; a < 2; a++) {
		uint32_t *from = *arrays[a];

		for (size_t k = 0; k < np; k++)
			memcpy(scratch + out[k].first, from + rt->pieces[src[k]].first,
			       out[k].nhops * sizeof(uint32_t));
		*arrays[a] = scratch;
		scratch = from;
	}
	free(scratch);
	rt->hop_arc = xreallocarray(rt->hop_arc, nh + 1, sizeof(uint32_t));
	rt->hop_layer = xreallocarray(rt->hop_layer, nh + 1, sizeof(uint32_t));
	rt->nhops = nh;
	rt->cap_hops = nh + 1;
}

void fluid_routing_merge(struct fluid_routing *rt)
{
	size_t n = rt->npieces, *idx, np = 0, nh = 0;
	struct fluid_piece *out;

	if (n < 2)
		return;
	idx = xmalloc(n * sizeof(size_t));
	for (size_t i = 0; i < n; i++)
		idx[i] = i;
	qsort_r(idx, n, sizeof(size_t), cmp_piece, rt);
	out = xmalloc(n * sizeof(*out));
	for (size_t i = 0; i < n;) {
		const struct fluid_piece *g0 = &rt->pieces[idx[i]];
		double at = 1e300;
		size_t e = i;

		/* One (origin, target): its shares restart where its lowest began. */
		while (e < n && rt->pieces[idx[e]].origin == g0->origin &&
		       rt->pieces[idx[e]].target == g0->target) {
			if (rt->pieces[idx[e]].lo < at)
				at = rt->pieces[idx[e]].lo;
			e++;
		}
		for (size_t k = i; k < e;) {
			const struct fluid_piece *p = &rt->pieces[idx[k]];
			double share = 0;
			size_t j = k;

			while (j < e && same_route(rt, idx[k], idx[j])) {
				share += rt->pieces[idx[j]].hi - rt->pieces[idx[j]].lo;
				j++;
			}
			out[np] = (struct fluid_piece){.origin = p->origin,
						       .target = p->target,
						       .lo = at,
						       .hi = at + share,
						       .first = (uint32_t)nh,
						       .nhops = p->nhops};
			/* its source (idx[np] is read no more: np <= k) */
			idx[np] = idx[k];
			nh += p->nhops;
			at += share;
			np++;
			k = j;
		}
		/* The last share ends where the unit did (no rounding drift). */
		out[np - 1].hi =
		    out[np - 1].hi > 1 - 1e-12 && out[np - 1].hi < 1 + 1e-12 ? 1 : out[np - 1].hi;
		i = e;
	}
	if (np < n) {
		merge_hops(rt, out, np, idx, nh);
	} else {
		/* No two routes alike: the pieces in their new order, each
		 * hop where it was (a piece's hops are [first, first + nhops)
		 * wherever they lie), where moving them was the 1,024-GPU
		 * allgather's 65 MB copied through 32 MB of fresh pages. */
		for (size_t k = 0; k < np; k++)
			out[k].first = rt->pieces[idx[k]].first;
	}
	free(idx);
	free(rt->pieces);
	rt->pieces = out;
	rt->npieces = rt->cap_pieces = np;
}
