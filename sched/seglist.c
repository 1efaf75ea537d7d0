/* Sorted, disjoint lists of pieces [lo, hi) of a block (fixed point,
 * SCHED_ONE = one block), each with a (count, hash) of what was folded
 * into it: what the verifier tracks per (node, block), explicitly
 * (verify.c) or by symmetry (reduced.c). */
#include "sched/internal.h"

#include <stdlib.h>
#include <string.h>

uint64_t sched_mix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

void seglist_push(struct seglist *l, struct seg s)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 4;
		l->v = xreallocarray(l->v, l->cap, sizeof(struct seg));
	}
	l->v[l->n++] = s;
}

bool seglist_covers(const struct seglist *l, uint32_t lo, uint32_t hi)
{
	for (uint32_t i = 0; i < l->n && lo < hi; i++) {
		if (l->v[i].hi <= lo)
			continue;
		if (l->v[i].lo > lo)
			return false;
		lo = l->v[i].hi;
	}
	return lo >= hi;
}

uint64_t seglist_add(struct seglist *l, uint32_t lo, uint32_t hi)
{
	/* Built aside (on the stack when short: an add leaves at most one more
	 * segment) and copied back, so a list is not reallocated on every
	 * delivery. */
	struct seg stack[32];
	struct seglist out = {0, 32, stack};
	uint64_t overlap = 0;
	bool placed = false;

	if (l->n + 1 > out.cap) {
		out.cap = l->n + 1;
		out.v = xreallocarray(NULL, out.cap, sizeof(struct seg));
	}
	for (uint32_t i = 0; i < l->n; i++) {
		struct seg s = l->v[i];

		if (s.hi < lo || s.lo > hi) { /* disjoint, not touching */
			if (!placed && s.lo > hi) {
				out.v[out.n++] = (struct seg){lo, hi, 1, 0};
				placed = true;
			}
			out.v[out.n++] = s;
			continue;
		}
		uint32_t a = s.lo > lo ? s.lo : lo, b = s.hi < hi ? s.hi : hi;
		if (b > a)
			overlap += b - a;
		lo = s.lo < lo ? s.lo : lo;
		hi = s.hi > hi ? s.hi : hi;
	}
	if (!placed)
		out.v[out.n++] = (struct seg){lo, hi, 1, 0};
	if (out.n > l->cap) {
		l->cap = out.n < 4 ? 4 : out.n;
		l->v = xreallocarray(l->v, l->cap, sizeof(struct seg));
	}
	memcpy(l->v, out.v, out.n * sizeof(struct seg));
	l->n = out.n;
	if (out.v != stack)
		free(out.v);
	return overlap;
}

void seglist_fold(struct seglist *l, uint32_t lo, uint32_t hi, bool reduce, uint32_t count,
		  uint64_t hash)
{
	/* The new list is built aside (on the stack when short: one fold
	 * adds at most two segments) and copied over the old one, so a list
	 * is not reallocated on every delivery. */
	struct seg stack[32];
	struct seglist out = {0, 32, stack};

	if (l->n + 2 > out.cap) {
		out.cap = l->n + 2;
		out.v = xreallocarray(NULL, out.cap, sizeof(struct seg));
	}
	for (uint32_t i = 0; i < l->n; i++) {
		struct seg s = l->v[i];
		uint32_t cut[4] = {s.lo, s.hi, s.hi, s.hi};
		unsigned nc = 1;

		/* Split s at lo and hi when they fall inside it. */
		if (lo > s.lo && lo < s.hi)
			cut[nc++] = lo;
		if (hi > s.lo && hi < s.hi)
			cut[nc++] = hi;
		cut[nc++] = s.hi;
		for (unsigned k = 0; k + 1 < nc; k++) {
			struct seg p = {cut[k], cut[k + 1], s.count, s.hash};

			if (p.lo >= p.hi)
				continue;
			if (p.lo >= lo && p.hi <= hi) {
				p.count = reduce ? p.count + count : count;
				p.hash = reduce ? p.hash + hash : hash;
			}
			/* Merge with an equal neighbour to keep lists short. */
			if (out.n && out.v[out.n - 1].hi == p.lo &&
			    out.v[out.n - 1].count == p.count && out.v[out.n - 1].hash == p.hash)
				out.v[out.n - 1].hi = p.hi;
			else
				out.v[out.n++] = p;
		}
	}
	if (out.n > l->cap) {
		l->cap = out.n;
		l->v = xreallocarray(l->v, l->cap, sizeof(struct seg));
	}
	memcpy(l->v, out.v, out.n * sizeof(struct seg));
	l->n = out.n;
	if (out.v != stack)
		free(out.v);
}
