/* The check by symmetry's reductions in whole-vector spans, by their sums.
 *
 * A piece every transfer of which is a reduction's span of all N blocks
 * (latency-optimal Swing and recursive doubling, reduced) keeps every
 * block alike. A span rs + hs -> rd + hd delivers entry (rs, k + delta) to
 * (rd, k) for every k, delta = hd - hs, from the step's start; so after
 * step t entry (r, k) is the sum of the first entries (r', k + d) over a
 * multiset M_r(t) of pairs (r', d) that does not depend on k:
 *
 *	M_r(t + 1) = M_r(t) + the sum over spans rs -> r of step t of (M_rs(t) + delta).
 *
 * The first entry (r', k + d) is node me(r') - d's input to shard k, so
 * (r, k) ends reduced over every input once, for every k, iff these nodes
 * are every node once: U_r(T) = { me(r') - d } has N members, and they
 * mark every bit of a bitmap of the nodes. That is O(reps N) a piece for
 * the whole program where the planes cost O(reps N) a piece a step
 * (16 steps at 65,536 nodes), and exact: no hash. */

#include "sched/verify_reduced_internal.h"

#include <stdlib.h>
#include <string.h>

/* The pieces every transfer of which is such a span, confined to it; a
 * transfer outside the shard leaves them all to check_xfer. */
uint8_t reduced_span_pieces(struct rstate *v)
{
	const struct schedule *p = &v->r->prog;
	uint8_t all = (uint8_t)((1u << v->np) - 1), sums = all;

	for (size_t xi = 0; xi < p->nxfers && sums; xi++) {
		const struct xfer *x = &p->xfers[xi];

		if (x->length == 0 || x->offset >= SCHED_ONE ||
		    (uint64_t)x->offset + x->length > SCHED_ONE)
			return 0;
		grid_span(v, x->offset, x->offset + x->length);
		if (x->block != 0 || xfer_blocks(x) != v->n || xfer_op(x) != XFER_REDUCE ||
		    v->grid_b != v->grid_a + 1)
			sums &= (uint8_t) ~(((1u << v->grid_b) - 1) & ~((1u << v->grid_a) - 1));
	}
	return sums;
}

struct span_edge {
	uint32_t from; /* rs */
	uint32_t delta;
};

/* Step t's spans of piece j into each representative: e[at[t * reps + r]
 * .. at[t * reps + r + 1] - 1]. */
struct span_dag {
	struct span_edge *e;
	size_t *at;
};

static void span_dag(struct rstate *v, uint32_t j, struct span_dag *d)
{
	const struct schedule *p = &v->r->prog;
	const struct sched_group *G = &v->r->group;
	uint32_t T = p->nsteps, reps = v->reps;
	size_t ne = 0;

	d->at = xcalloc((size_t)T * reps + 1, sizeof(size_t));
	for (int pass = 0; pass < 2; pass++) {
		if (pass) { /* counts to starts */
			size_t sum = 0;

			for (size_t i = 0; i <= (size_t)T * reps; i++) {
				size_t c = d->at[i];

				d->at[i] = sum;
				sum += c;
			}
			d->e = xmalloc((ne + 1) * sizeof(*d->e));
		}
		for (uint32_t t = 0; t < T; t++)
			for (size_t xi = p->step_start[t]; xi < p->step_start[t + 1]; xi++) {
				const struct xfer *x = &p->xfers[xi];
				uint32_t hs = x->src, hd = x->dst, rs = 0, rd = 0;

				grid_span(v, x->offset, x->offset + x->length);
				if (v->grid_a != j)
					continue;
				if (reps > 1) {
					rs = sched_group_split(G, x->src, &hs);
					rd = sched_group_split(G, x->dst, &hd);
				}
				size_t slot = (size_t)t * reps + rd;
				if (!pass) {
					d->at[slot]++;
					ne++;
					continue;
				}
				d->e[d->at[slot]++] = (struct span_edge){rs, sub(v, hd, hs)};
			}
	}
	/* at[i] is now the end of list i: shift to starts */
	memmove(d->at + 1, d->at, (size_t)T * reps * sizeof(size_t));
	d->at[0] = 0;
}

/* Marks the nodes a[0 .. m - 1] - off. */
static void mark_nodes(const struct rstate *v, const uint32_t *a, size_t m, uint32_t off,
		       uint8_t *mark, uint8_t stamp)
{
	if (v->high) { /* sub's, without its test a node (high in a local: a
			* byte store may alias v) */
		uint32_t h = v->high;

		for (size_t i = 0; i < m; i++)
			mark[swar_sub(h, a[i], off)] = stamp;
	} else if (v->r->group.binary) {
		for (size_t i = 0; i < m; i++)
			mark[a[i] ^ off] = stamp;
	} else {
		for (size_t i = 0; i < m; i++)
			mark[sched_group_sub(&v->r->group, a[i], off)] = stamp;
	}
}

/* Every mark[0 .. n - 1] is stamp (eight at a time). */
static bool all_marked(const uint8_t *mark, uint32_t n, uint8_t stamp)
{
	uint64_t want = stamp * 0x0101010101010101ull, miss = 0, w;
	uint32_t u = 0;

	for (; u + 8 <= n; u += 8) {
		memcpy(&w, mark + u, 8);
		miss |= w ^ want;
	}
	for (; u < n; u++)
		miss |= mark[u] ^ stamp;
	return !miss;
}

/* For every sums piece, which representatives end without every input
 * once (v->sums_bad). */
void reduced_span_sums(struct rstate *v)
{
	const struct sched_group *G = &v->r->group;
	uint32_t T = v->r->prog.nsteps, reps = v->reps, n = v->n;
	/* Below level t0 the sets U_r(t0) are listed (all of them together
	 * at most `small` nodes, an eighth of the nodes from 64 on: the walk
	 * runs in the tests' sizes too); above it a walk down from (r, T)
	 * adds up the deltas and marks U_r(t0) minus their sum. */
	enum { SMALL = 1 << 12 };
	uint64_t *size = xmalloc((size_t)(T + 1) * reps * sizeof(uint64_t));
	/* A node's mark: the stamp of the representative and piece that last
	 * reached it (a byte a node: stores alone, where a bit a node made
	 * every mark wait for the last one's word). */
	uint8_t *mark = xcalloc(n, 1), stamp = 0;
	size_t small = n / 8 < SMALL ? n / 8 : SMALL;
	small = small < reps ? reps : small;
	uint32_t *list[2] = {xmalloc(small * sizeof(uint32_t)), xmalloc(small * sizeof(uint32_t))};
	size_t *lat = xmalloc(((size_t)reps + 1) * sizeof(size_t) * 2);
	size_t *lstart[2] = {lat, lat + reps + 1};

	v->sums_bad = xcalloc(reps, 1);
	for (uint32_t j = 0; j < v->np; j++) {
		if (!(v->sums >> j & 1))
			continue;
		struct span_dag d;
		span_dag(v, j, &d);
		/* How many pairs M_r(t) holds, up to n + 1. */
		uint32_t t0 = 0;
		for (uint32_t r = 0; r < reps; r++)
			size[r] = 1;
		for (uint32_t t = 0; t < T; t++) {
			uint64_t all = 0;
			bool over = false;

			for (uint32_t r = 0; r < reps; r++) {
				uint64_t s = size[(size_t)t * reps + r];

				for (size_t i = d.at[(size_t)t * reps + r];
				     i < d.at[(size_t)t * reps + r + 1]; i++)
					s += size[(size_t)t * reps + d.e[i].from];
				size[(size_t)(t + 1) * reps + r] = s > n ? (uint64_t)n + 1 : s;
				all += size[(size_t)(t + 1) * reps + r];
				over |= s > n;
			}
			/* A set over n nodes fails: listing it is no use. */
			if (all <= small && !over && t0 == t)
				t0 = t + 1;
		}
		/* U_r(0) = {me(r)}, then level by level to t0. */
		int cur = 0;
		for (uint32_t r = 0; r <= reps; r++)
			lstart[0][r] = r;
		for (uint32_t r = 0; r < reps; r++)
			list[0][r] = sched_group_rep_node(G, r);
		for (uint32_t t = 0; t < t0; t++) {
			const uint32_t *a = list[cur];
			uint32_t *b = list[!cur];
			size_t m = 0;

			for (uint32_t r = 0; r < reps; r++) {
				lstart[!cur][r] = m;
				for (size_t i = lstart[cur][r]; i < lstart[cur][r + 1]; i++)
					b[m++] = a[i];
				for (size_t k = d.at[(size_t)t * reps + r];
				     k < d.at[(size_t)t * reps + r + 1]; k++) {
					const struct span_edge *e = &d.e[k];

					for (size_t i = lstart[cur][e->from];
					     i < lstart[cur][e->from + 1]; i++)
						b[m++] = sub(v, a[i], e->delta);
				}
			}
			lstart[!cur][reps] = m;
			cur = !cur;
		}
		/* Each representative: n pairs, their nodes every node. */
		size_t cap = (size_t)(T - t0) * 8 + 8, top;
		struct walk {
			uint32_t r, t, off;
		} *stack = xmalloc(cap * sizeof(*stack));
		for (uint32_t r = 0; r < reps; r++) {
			if (size[(size_t)T * reps + r] != n) {
				v->sums_bad[r] |= (uint8_t)(1u << j);
				continue;
			}
			if (++stamp == 0) {
				memset(mark, 0, n);
				stamp = 1;
			}
			top = 0;
			stack[top++] = (struct walk){r, T, 0};
			while (top) {
				struct walk w = stack[--top];

				if (w.t == t0) {
					mark_nodes(v, list[cur] + lstart[cur][w.r],
						   lstart[cur][w.r + 1] - lstart[cur][w.r], w.off,
						   mark, stamp);
					continue;
				}
				size_t lo = d.at[(size_t)(w.t - 1) * reps + w.r],
				       hi = d.at[(size_t)(w.t - 1) * reps + w.r + 1];
				if (top + hi - lo + 1 > cap)
					GROW(stack, cap, top + hi - lo + 1);
				stack[top++] = (struct walk){w.r, w.t - 1, w.off};
				for (size_t k = lo; k < hi; k++)
					stack[top++] =
					    (struct walk){d.e[k].from, w.t - 1,
							  sched_group_add(G, w.off, d.e[k].delta)};
			}
			if (!all_marked(mark, n, stamp)) /* n marks, not every node: one twice */
				v->sums_bad[r] |= (uint8_t)(1u << j);
		}
		free(stack);
		free(d.e);
		free(d.at);
	}
	free(size);
	free(mark);
	free(list[0]);
	free(list[1]);
	free(lat);
}
