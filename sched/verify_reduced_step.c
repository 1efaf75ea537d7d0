/* The check by symmetry, step by step: each program transfer checked
 * where it stands (nodes, blocks, parts, ports and runs) and what its
 * translate into the representatives delivers, in slots, masks or lists,
 * at once or after the step; the ports' loads. */
#include "sched/verify_reduced_internal.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

int reduced_fail(struct rstate *v, uint32_t step, size_t xi, const char *fmt, ...)
{
	const struct schedule *p = &v->r->prog;
	char what[200];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	v->rep->ok = false;
	v->rep->bad_step = step;
	v->rep->bad_xfer = xi;
	if (xi < p->nxfers) {
		const struct xfer *x = &p->xfers[xi];

		snprintf(v->rep->error, sizeof(v->rep->error),
			 "step %u, transfer %u -> %u of block %u [%.6g, %.6g) and its "
			 "translates: %s",
			 step + 1, x->src, x->dst, x->block, sched_frac(x->offset),
			 sched_frac(x->offset) + sched_frac(x->length), what);
	} else {
		snprintf(v->rep->error, sizeof(v->rep->error), "%s", what);
	}
	return -1;
}

/* The step loop at (t, at, xi): where reduced_a2a_sorted's failure stands, it is
 * reported (-1). */
static int a2a_failure_at(struct rstate *v, uint32_t t, enum a2a_at at, size_t xi)
{
	const struct a2a_failure *f = &v->afail;

	if (f->at != at || f->step != t || (at == A2A_AT_CHECK && f->xi != xi))
		return 0;
	if (at == A2A_AT_CHECK)
		return reduced_fail(v, t, xi,
				    "node %u does not hold that data at the start of the step",
				    v->r->prog.xfers[xi].src);
	return reduced_fail(
	    v, t, SIZE_MAX,
	    "step %u: the block from %u delivered to its target %u twice (and every "
	    "translate alike)",
	    t + 1, f->origin, f->me);
}

/* The cuts of the program's parts of shards, sorted (cut[0] = 0, last
 * SCHED_ONE), if it has at most GRID_MAX_PIECES pieces between them: their
 * number, else 0. A part outside the shard is left to check_xfer. */
uint32_t reduced_grid_cuts(const struct schedule *p, uint32_t *cut)
{
	uint32_t nc = 2, lo = 0, len = SCHED_ONE;

	cut[0] = 0;
	cut[1] = SCHED_ONE;
	for (size_t xi = 0; xi < p->nxfers; xi++) {
		const struct xfer *x = &p->xfers[xi];

		if (x->offset == lo && x->length == len) /* runs of one part: the last's */
			continue;
		lo = x->offset;
		len = x->length;
		uint64_t at[2] = {lo, (uint64_t)lo + len};
		for (int k = 0; k < 2; k++) {
			uint32_t i = 0;

			if (at[k] >= SCHED_ONE)
				continue;
			while (cut[i] < at[k])
				i++;
			if (cut[i] == at[k])
				continue;
			if (nc == GRID_MAX_PIECES + 1)
				return 0;
			memmove(&cut[i + 1], &cut[i], (nc - i) * sizeof(uint32_t));
			cut[i] = (uint32_t)at[k];
			nc++;
		}
	}
	return nc - 1;
}

/* The pieces of [lo, hi) in copy mode's mask. */
static uint8_t mask_of(struct rstate *v, uint32_t lo, uint32_t hi)
{
	grid_span(v, lo, hi);
	return (uint8_t)(((1u << v->grid_b) - 1) & ~((1u << v->grid_a) - 1));
}

/* Cell `cell` holds every piece of [lo, hi). */
static bool mask_covers(struct rstate *v, uint64_t cell, uint32_t lo, uint32_t hi)
{
	uint8_t bits = mask_of(v, lo, hi);

	return (v->mask[cell] & bits) == bits;
}

/* What the pieces of bits cover, in fixed point. */
static uint32_t mask_len(const struct rstate *v, uint8_t bits)
{
	uint32_t len = 0;

	for (uint32_t j = 0; j < v->cnp; j++)
		if (bits >> j & 1)
			len += v->cut[j + 1] - v->cut[j];
	return len;
}

static void push(struct rstate *v, struct rdeliv d)
{
	if (v->ndl == v->cap_dl)
		GROW(v->dl, v->cap_dl, v->ndl + 1);
	v->dl[v->ndl++] = d;
}

/* A run (sched.h): its arcs node after node to x->dst, each loading its
 * port at its node's representative (G regular: every arc of the port
 * alike, so the load is the run's length times its arcs). */
static int check_run(struct rstate *v, uint32_t t, size_t xi)
{
	const struct xfer *x = &v->r->prog.xfers[xi];
	const struct graph *g = v->o->graph;
	uint32_t deg = graph_outdeg(g, 0), u = x->src, h;

	if (x->lane == SCHED_NO_LANE)
		return reduced_fail(v, t, xi, "a transfer over %u arcs without its port",
				    xfer_arcs(x));
	if (x->lane >= deg)
		return reduced_fail(v, t, xi, "node %u has no port %u", x->src, x->lane);
	if (v->reps == 1) {
		/* Port j leads every u to u + s_j: the run ends at u + (k+1) s_j. */
		v->port_load[x->lane] += (uint64_t)x->length * xfer_arcs(x) * xfer_blocks(x);
		u = sched_group_add(&v->r->group, u, v->run_to[x->lane * SCHED_MAX_RUN + x->run]);
	}
	for (uint32_t k = 0; v->reps > 1 && k < xfer_arcs(x); k++) {
		v->port_load[(size_t)sched_group_split(&v->r->group, u, &h) * deg + x->lane] +=
		    (uint64_t)x->length * xfer_blocks(x);
		u = g->adj[g->off[u] + x->lane];
	}
	if (u != x->dst)
		return reduced_fail(v, t, xi,
				    "%u arcs on port %u from node %u end at node %u, not %u",
				    xfer_arcs(x), x->lane, x->src, u, x->dst);
	return 0;
}

/* sched_group_split of node u as check_xfer's sender (k 0) or receiver (1). */
static uint32_t split_cached(struct rstate *v, int k, uint32_t u, uint32_t *h)
{
	if (v->split_node[k] != u) {
		v->split_node[k] = u;
		v->split_rep[k] = sched_group_split(&v->r->group, u, &v->split_h[k]);
	}
	*h = v->split_h[k];
	return v->split_rep[k];
}

/* Step t's stamp, 1 .. 65535 (a mark 0 is no step's; the marks are
 * cleared when the stamps come round: clear_marks). */
static uint64_t stamp(uint32_t t)
{
	return t % SLOT_MARK + 1;
}

static void clear_marks(struct rstate *v)
{
	for (size_t i = 0; i < (size_t)v->cells * v->np; i++)
		v->slot[i].w &= ~SLOT_MARK;
}

static uint64_t slot_mark(const struct rslot *sl)
{
	return sl->w & SLOT_MARK;
}

static void slot_set_mark(struct rslot *sl, uint64_t m)
{
	sl->w = (sl->w & ~SLOT_MARK) | m;
}

/* Folds (reduce) or copies the sender's word w into sl, sl's mark kept. */
static void slot_apply(struct rslot *sl, bool reduce, uint64_t w)
{
	if (reduce)
		sl->w += w & ~SLOT_MARK;
	else
		sl->w = (w & ~SLOT_MARK) | (sl->w & SLOT_MARK);
}

/* Whether step t is spans each within one piece, the pieces one after
 * another (latency-optimal Swing: a collective's spans, then the next
 * collective's): then the step's reads are the start of the step's values
 * when each piece's plane is copied before its first span, and a span
 * folds into the plane at once (plane_step). A transfer that is no such
 * span leaves the step to the read and delivery lists (and to check_xfer
 * to refuse it, if it must). */
static bool span_planes(struct rstate *v, uint32_t t)
{
	const struct schedule *p = &v->r->prog;
	uint32_t last = UINT32_MAX, seen = 0;

	if (!v->np || p->step_start[t] == p->step_start[t + 1])
		return false;
	for (size_t xi = p->step_start[t]; xi < p->step_start[t + 1]; xi++) {
		const struct xfer *x = &p->xfers[xi];

		if (xfer_blocks(x) < 2 || x->length == 0 || x->offset >= SCHED_ONE ||
		    (uint64_t)x->offset + x->length > SCHED_ONE)
			return false;
		grid_span(v, x->offset, x->offset + x->length);
		if (v->grid_b != v->grid_a + 1)
			return false;
		if (v->grid_a != last) {
			if (seen >> v->grid_a & 1)
				return false;
			seen |= 1u << v->grid_a;
			last = v->grid_a;
		}
	}
	return true;
}

/* A reduction's transfer, once check_xfer's checks passed: what its
 * blocks (one, or a span's) deliver, block by block, folded into the
 * plane at once in a plane_step, else as reads for deliver_slots (the
 * grid) or deliveries (the lists). */
static int reduce_blocks(struct rstate *v, uint32_t t, const struct xfer *x, uint32_t lo,
			 uint32_t hi, uint32_t rs, uint32_t hs, uint32_t rd, uint32_t hd)
{
	uint32_t n = v->n, nb = xfer_blocks(x), op = xfer_op(x);
	uint64_t src0 = (uint64_t)rs * n, dst0 = (uint64_t)rd * n;

	if (v->sums) { /* a sums piece (reduced_span_pieces): reduced_span_sums, at the end */
		grid_span(v, lo, hi);
		if (v->sums >> v->grid_a & 1)
			return 0;
	}
	if (v->plane_step) { /* one piece (span_planes), grid_a */
		grid_span(v, lo, hi);
		struct rslot *plane = v->slot + (size_t)v->grid_a * v->cells;
		bool reduce = op == XFER_REDUCE;

		if (v->snap_plane != v->grid_a) {
			memcpy(v->snap, plane, v->cells * sizeof(struct rslot));
			v->snap_plane = v->grid_a;
		}
		for (uint32_t j = 0; j < nb; j++) {
			uint32_t b = x->block + j;
			const struct rslot *s = &v->snap[src0 + sub(v, b, hs)];

			slot_apply(&plane[dst0 + sub(v, b, hd)], reduce, s->w);
		}
		return 0;
	}
	if (v->at_once) { /* the sender's slots over [lo, hi), now */
		grid_span(v, lo, hi);
		const struct rslot *sp = v->slot + (size_t)v->grid_a * v->cells + src0;
		struct rslot *dp = v->slot + (size_t)v->grid_a * v->cells + dst0;
		uint32_t m = v->grid_b - v->grid_a;
		bool reduce = op == XFER_REDUCE;
		uint64_t st = stamp(t);

		for (uint32_t j = 0; j < nb; j++) {
			uint32_t b = x->block + j;
			const struct rslot *s = sp + sub(v, b, hs);
			struct rslot *d = dp + sub(v, b, hd);

			for (uint32_t k = 0; k < m; k++) {
				uint64_t w = s[(size_t)k * v->cells].w;
				struct rslot *dk = &d[(size_t)k * v->cells];

				v->clash |= (w & SLOT_MARK) == st;
				dk->w = reduce ? (dk->w & ~SLOT_MARK) + (w & ~SLOT_MARK) + st
					       : (w & ~SLOT_MARK) | st;
			}
		}
		return 0;
	}
	if (v->np) { /* the sender's slots over [lo, hi), for deliver_slots */
		grid_span(v, lo, hi);
		uint32_t len = (v->grid_b - v->grid_a - 1) << 29, base = v->grid_a * v->cells;

		if (v->nrd + nb > v->cap_rd)
			GROW(v->rd, v->cap_rd, v->nrd + nb);
		for (uint32_t j = 0; j < nb; j++) {
			uint32_t b = x->block + j;

			v->rd[v->nrd++] =
			    (struct gread){((uint32_t)(src0 + sub(v, b, hs)) + base) | len,
					   ((uint32_t)(dst0 + sub(v, b, hd)) + base) |
					       (op == XFER_REDUCE ? GRID_REDUCE : 0)};
		}
		return 0;
	}
	for (uint32_t j = 0; j < nb; j++) { /* the sender's value: its representative's */
		uint32_t b = x->block + j;
		const struct seglist *l = &v->part[src0 + sub(v, b, hs)];
		uint64_t at_dst = dst0 + sub(v, b, hd);

		for (uint32_t i = 0; i < l->n; i++) {
			uint32_t a = l->v[i].lo > lo ? l->v[i].lo : lo;
			uint32_t e = l->v[i].hi < hi ? l->v[i].hi : hi;

			if (e > a)
				push(v, (struct rdeliv){at_dst, a, e, l->v[i].count, l->v[i].hash,
							(uint8_t)op});
		}
	}
	return 0;
}

/* One program transfer: its checks where it stands, and what its
 * translate into node 0 delivers there (after the step). */
static int check_xfer(struct rstate *v, uint32_t t, size_t xi)
{
	const struct schedule *p = &v->r->prog;
	const struct sched_group *G = &v->r->group;
	const struct xfer *x = &p->xfers[xi];
	const struct graph *g = v->o->graph;
	uint32_t n = v->n, lo = x->offset, hi, hs, hd;

	if (x->src >= n || x->dst >= n)
		return reduced_fail(v, t, xi, "node out of range (%u nodes)", n);
	if (x->src == x->dst)
		return reduced_fail(v, t, xi, "a node sends to itself");
	bool a2a = p->collective == SCHED_ALLTOALL;
	uint32_t nb = xfer_blocks(x);
	if ((uint64_t)x->block + nb > (a2a ? (uint64_t)n * n : n))
		return reduced_fail(v, t, xi, nb > 1 ? "no such blocks" : "no such block");
	/* Spans: in reductions (latency-optimal Swing's whole vector a step),
	 * block by block below. */
	if (nb > 1 && !v->reduce)
		return reduced_fail(
		    v, t, xi,
		    "a transfer of %u blocks: a symmetry-reduced %s program carries one "
		    "block a transfer",
		    nb, sched_collective_name(p->collective));
	if (a2a &&
	    (v->lgn ? x->block >> v->lgn == (x->block & (n - 1)) : x->block / n == x->block % n))
		return reduced_fail(v, t, xi, "all-to-all has no block from a node to itself");
	if (x->length == 0 || x->offset >= SCHED_ONE || (uint64_t)x->offset + x->length > SCHED_ONE)
		return reduced_fail(v, t, xi, "part outside the block");
	hi = lo + x->length;
	uint32_t rs = 0, rd = 0; /* G regular: node u is its representative (0) + u */
	hs = x->src;
	hd = x->dst;
	if (G->reps > 1) {
		rs = split_cached(v, 0, x->src, &hs);
		rd = split_cached(v, 1, x->dst, &hd);
	}
	if (x->run && !g)
		return reduced_fail(v, t, xi,
				    "a transfer over %u arcs, checked without its topology",
				    xfer_arcs(x));
	if (g) {
		uint32_t deg = graph_outdeg(g, x->src), mult = 0;
		uint64_t *load = v->port_load + (size_t)rs * deg;
		const uint32_t *out = graph_out(g, x->src);

		if (x->run) {
			if (check_run(v, t, xi) < 0)
				return -1;
		} else if (x->lane != SCHED_NO_LANE) {
			if (x->lane >= deg || out[x->lane] != x->dst)
				return reduced_fail(v, t, xi,
						    "port %u of node %u does not lead to node %u",
						    x->lane, x->src, x->dst);
			load[x->lane] += (uint64_t)x->length * nb;
		} else {
			for (uint32_t k = 0; k < deg; k++)
				mult += out[k] == x->dst;
			if (!mult)
				return reduced_fail(v, t, xi, "there is no link %u -> %u in %s",
						    x->src, x->dst, g->spec);
			for (uint32_t k = 0; k < deg; k++)
				if (out[k] == x->dst)
					load[k] += (uint64_t)x->length * nb / mult;
		}
	}
	if (a2a) { /* what is held and delivered: reduced_a2a_sorted, before */
		if (xfer_op(x) == XFER_REDUCE)
			return reduced_fail(v, t, xi, "a reducing transfer in alltoall");
		return a2a_failure_at(v, t, A2A_AT_CHECK, xi);
	}
	if (v->reduce)
		return reduce_blocks(v, t, x, lo, hi, rs, hs, rd, hd);
	/* The block as the sender's and the receiver's representatives see it. */
	uint64_t at_src = (uint64_t)rs * n + sub(v, x->block, hs);
	uint64_t at_dst = (uint64_t)rd * n + sub(v, x->block, hd);
	if (xfer_op(x) == XFER_REDUCE)
		return reduced_fail(v, t, xi, "a reducing transfer in %s",
				    sched_collective_name(p->collective));
	bool held =
	    at_src % n == sched_group_rep_node(G, rs) ||
	    (v->full[at_src >> 6] >> (at_src & 63)) & 1 ||
	    (v->mask ? mask_covers(v, at_src, lo, hi) : seglist_covers(&v->part[at_src], lo, hi));
	if (!held)
		return reduced_fail(
		    v, t, xi, "node %u does not hold that data at the start of the step", x->src);
	push(v, (struct rdeliv){at_dst, lo, hi, 1, 0, XFER_COPY});
	return 0;
}

/* Step t's transfers with no graph to check, at_once: a plain one (one
 * block, no run, its fields in range) checked and delivered here, its
 * slots found with the split and the subtraction inline, any other by
 * check_xfer, which does the same for a plain one (test_reduced's corrupted
 * programs go both ways). check_xfer's path was 220 instructions a
 * transfer, most of them its general cases' tests (bandwidth-optimal
 * Swing on torus:8x8x8x8). */
static int at_once_step(struct rstate *v, uint32_t t)
{
	const struct schedule *p = &v->r->prog;
	uint32_t n = v->n, high = v->high, ones = SCHED_ONE;
	uint64_t st = stamp(t);
	bool several = v->reps > 1;

	for (size_t xi = p->step_start[t]; xi < p->step_start[t + 1]; xi++) {
		const struct xfer *x = &p->xfers[xi];
		uint32_t hs = x->src, hd = x->dst, rs = 0, rd = 0;

		if (x->src >= n || x->dst >= n || x->src == x->dst || x->block >= n || x->run ||
		    xfer_blocks(x) != 1 || x->length == 0 || x->offset >= ones ||
		    x->length > ones - x->offset || !high) {
			if (check_xfer(v, t, xi) < 0)
				return -1;
			continue;
		}
		if (several) {
			rs = split_cached(v, 0, x->src, &hs);
			rd = split_cached(v, 1, x->dst, &hd);
		}
		grid_span(v, x->offset, x->offset + x->length);
		if (v->sums >> v->grid_a & 1 || v->plane_step) {
			if (check_xfer(v, t, xi) < 0)
				return -1;
			continue;
		}
		uint32_t b = x->block, m = v->grid_b - v->grid_a;
		const struct rslot *sk =
		    v->slot + (size_t)v->grid_a * v->cells + (size_t)rs * n + swar_sub(high, b, hs);
		struct rslot *dk =
		    v->slot + (size_t)v->grid_a * v->cells + (size_t)rd * n + swar_sub(high, b, hd);
		bool reduce = xfer_op(x) == XFER_REDUCE;

		for (uint32_t k = 0; k < m; k++, sk += v->cells, dk += v->cells) {
			uint64_t w = sk->w;

			v->clash |= (w & SLOT_MARK) == st;
			dk->w = reduce ? (dk->w & ~SLOT_MARK) + (w & ~SLOT_MARK) + st
				       : (w & ~SLOT_MARK) | st;
		}
	}
	return 0;
}

/* The step's transfers, now that every check passed, as sched_verify's
 * reduce_direct: the slots they read are stamped with the step (t + 1);
 * a delivery to a slot no transfer of the step reads is applied at once,
 * the others wait in v->gdl for the end of the step, both in transfer
 * order (so a copy overwrites what a fold before it left, as
 * seglist_fold in order). Entries are far apart (a bandwidth-optimal
 * Swing step's blocks): a cache miss each unless fetched ahead. */
static void deliver_slots(struct rstate *v, uint32_t t)
{
	uint64_t st = stamp(t);

	for (size_t i = 0; i < v->nrd; i++) {
		const struct gread *q = &v->rd[i];
		struct rslot *sl = &v->slot[q->src & GRID_SLOT];

		if (i + GRID_AHEAD < v->nrd)
			__builtin_prefetch(&v->slot[v->rd[i + GRID_AHEAD].src & GRID_SLOT], 1);
		for (uint32_t j = 0; j <= q->src >> 29; j++)
			slot_set_mark(&sl[j * v->cells], st);
	}
	for (size_t i = 0; i < v->nrd; i++) {
		const struct gread *q = &v->rd[i];
		const struct rslot *sl = &v->slot[q->src & GRID_SLOT];
		struct rslot *dl = &v->slot[q->dst & GRID_SLOT];
		bool reduce = q->dst & GRID_REDUCE;

		if (i + GRID_AHEAD < v->nrd) {
			__builtin_prefetch(&v->slot[v->rd[i + GRID_AHEAD].src & GRID_SLOT]);
			__builtin_prefetch(&v->slot[v->rd[i + GRID_AHEAD].dst & GRID_SLOT], 1);
		}
		for (uint32_t j = 0; j <= q->src >> 29; j++) {
			const struct rslot *s = &sl[j * v->cells];
			struct rslot *d = &dl[j * v->cells];

			if (slot_mark(d) != st) {
				slot_apply(d, reduce, s->w);
				continue;
			}
			if (v->ngdl == v->cap_gdl)
				GROW(v->gdl, v->cap_gdl, v->ngdl + 1);
			v->gdl[v->ngdl++] =
			    (struct gdeliv){(uint32_t)(d - v->slot) | (q->dst & GRID_REDUCE), s->w};
		}
	}
	v->nrd = 0;
	for (size_t i = 0; i < v->ngdl; i++) {
		const struct gdeliv *d = &v->gdl[i];

		if (i + GRID_AHEAD < v->ngdl)
			__builtin_prefetch(&v->slot[v->gdl[i + GRID_AHEAD].at & ~GRID_REDUCE], 1);
		slot_apply(&v->slot[d->at & ~GRID_REDUCE], d->at & GRID_REDUCE, d->w);
	}
	v->ngdl = 0;
}

static void deliver(struct rstate *v, uint32_t t)
{
	if (v->np) {
		deliver_slots(v, t);
		return;
	}
	for (size_t i = 0; i < v->ndl; i++) {
		const struct rdeliv *d = &v->dl[i];

		if (v->reduce) {
			seglist_fold(&v->part[d->block], d->lo, d->hi, d->op == XFER_REDUCE,
				     d->count, d->hash);
			continue;
		}
		if (d->block % v->n ==
			sched_group_rep_node(&v->r->group, (uint32_t)(d->block / v->n)) ||
		    (v->full[d->block >> 6] >> (d->block & 63)) & 1) {
			v->dup += sched_frac(d->hi - d->lo);
			continue;
		}
		if (v->mask) {
			uint8_t bits = mask_of(v, d->lo, d->hi), *m = &v->mask[d->block];

			v->dup += sched_frac(mask_len(v, *m & bits));
			*m |= bits;
			if (*m == (1u << v->cnp) - 1)
				v->full[d->block >> 6] |= 1ull << (d->block & 63);
			continue;
		}
		struct seglist *l = &v->part[d->block];
		v->dup += sched_frac((uint32_t)seglist_add(l, d->lo, d->hi));
		if (l->n == 1 && l->v[0].lo == 0 && l->v[0].hi == SCHED_ONE) {
			v->full[d->block >> 6] |= 1ull << (d->block & 63);
			free(l->v);
			memset(l, 0, sizeof(*l));
		}
	}
	v->ndl = 0;
}

/* Step t's busiest port into the report, its loads into the totals. */
static void step_port_loads(struct rstate *v, uint32_t t, uint32_t d)
{
	struct verify_report *report = v->rep;
	uint64_t max = 0;

	for (size_t j = 0; j < (size_t)d * v->reps; j++) {
		max = v->port_load[j] > max ? v->port_load[j] : max;
		v->port_total[j] += v->port_load[j];
		v->port_load[j] = 0;
	}
	double load = (double)max / SCHED_ONE;

	if (v->o->step_link_load)
		v->o->step_link_load[t] = load;
	report->sum_max_link_load += load;
	if (load > report->max_link_load)
		report->max_link_load = load;
}

/* Check step t; -2 when the at-once check meets a clash (run again, step
 * by step). */
int reduced_step(struct rstate *v, uint32_t t, bool planes, size_t cells, uint32_t d)
{
	const struct schedule *p = &v->r->prog;

	v->plane_step = planes && span_planes(v, t);
	v->snap_plane = UINT32_MAX;
	if (v->plane_step && !v->snap)
		v->snap = xmalloc(cells * sizeof(struct rslot));
	if (v->slot && t && stamp(t) == 1) /* the stamps come round */
		clear_marks(v);
	if (v->at_once && !v->o->graph) {
		if (at_once_step(v, t) < 0)
			return -1;
	} else {
		for (size_t xi = p->step_start[t]; xi < p->step_start[t + 1]; xi++)
			if (check_xfer(v, t, xi) < 0)
				return -1;
	}
	if (v->clash)
		return -2;
	deliver(v, t);
	if (a2a_failure_at(v, t, A2A_AT_DELIVERY, 0) < 0)
		return -1;
	if (v->o->graph)
		step_port_loads(v, t, d);
	return 0;
}
