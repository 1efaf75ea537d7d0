/* The verifier's step loop: each step checked in two phases so that every
 * transfer sees the state from before the step: read (causality, links,
 * lightpaths, what each sender holds), then write (deliveries, grouped by
 * receiver and block); then the step's link loads, and at the end the
 * schedule's. */
#include "sched/verify_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Inlined, as block_ok: a call per transfer in the read phase (they
 * stopped being inlined when the read phase grew, 5% of a ring's check). */
static inline __attribute__((always_inline)) void load_arc(struct vstate *v, uint32_t t, uint32_t a,
							   uint64_t len)
{
	struct arcload *l = &v->arc[a];

	if (l->stamp != t + 1) {
		l->stamp = t + 1;
		l->load = 0;
		v->arc_used[v->narc_used++] = a;
	}
	l->load += len;
	l->total += len;
}

/* A transfer's length (fixed point) as its link load: its block's weight
 * times it under verify_opts.block_weight (an all-to-all of skewed pairs),
 * rounded to the fixed point's 2^-31. */
static inline uint64_t weighed(const struct vstate *v, const struct xfer *x, uint64_t len)
{
	const double *w = v->o->block_weight;

	return w ? (uint64_t)((double)len * w[x->block] + 0.5) : len;
}

/* A run: xfer_arcs(x) arcs on port x->lane, node after node, each loaded
 * in the step, ending at x->dst; the nodes between take part (a failed
 * host forwards nothing). */
static int check_run(struct vstate *v, uint32_t t, size_t xi)
{
	const struct graph *g = v->o->graph;
	const struct xfer *x = &v->s->xfers[xi];
	uint32_t u = x->src;

	if (x->lane == SCHED_NO_LANE)
		return verify_fail(v, t, xi, "a transfer over %u arcs without its port",
				   xfer_arcs(x));
	for (uint32_t k = 0; k < xfer_arcs(x); k++) {
		if (k && v->o->absent && v->o->absent[u])
			return verify_fail(v, t, xi, "node %u, %u arcs on, takes no part (failed)",
					   u, k);
		if (x->lane >= graph_outdeg(g, u))
			return verify_fail(v, t, xi, "node %u, %u arcs on, has no port %u", u, k,
					   x->lane);
		uint32_t a = g->off[u] + x->lane;

		load_arc(v, t, a, weighed(v, x, (uint64_t)x->length * xfer_blocks(x)));
		u = g->adj[a];
	}
	if (u != x->dst)
		return verify_fail(v, t, xi,
				   "%u arcs on port %u from node %u end at node %u, not %u",
				   xfer_arcs(x), x->lane, x->src, u, x->dst);
	return 0;
}

static int check_link(struct vstate *v, uint32_t t, size_t xi)
{
	const struct graph *g = v->o->graph;
	const struct xfer *x = &v->s->xfers[xi];
	uint32_t deg = graph_outdeg(g, x->src), arc = UINT32_MAX, mult = 0;
	const uint32_t *out = graph_out(g, x->src);

	if (x->run)
		return check_run(v, t, xi);
	if (x->lane != SCHED_NO_LANE) {
		if (x->lane >= deg || v->arc[g->off[x->src] + x->lane].head != x->dst)
			return verify_fail(v, t, xi, "port %u of node %u does not lead to node %u",
					   x->lane, x->src, x->dst);
		arc = g->off[x->src] + x->lane;
		mult = 1;
	} else {
		for (uint32_t k = 0; k < deg; k++)
			if (out[k] == x->dst) {
				if (arc == UINT32_MAX)
					arc = g->off[x->src] + k;
				mult++;
			}
		if (!mult)
			return verify_fail(v, t, xi, "there is no link %u -> %u in %s", x->src,
					   x->dst, g->spec);
	}
	/* Without a port, parallel links share the load evenly. */
	for (uint32_t k = 0, a = arc; k < mult; a++) {
		if (v->arc[a].head != x->dst)
			continue;
		load_arc(v, t, a, weighed(v, x, (uint64_t)(x->length / mult) * xfer_blocks(x)));
		k++;
	}
	return 0;
}

static inline void push_delivery(struct vstate *v, struct delivery d)
{
	if (v->ndl == v->cap_dl)
		GROW(v->dl, v->cap_dl, v->ndl + 1);
	v->dl[v->ndl++] = d;
}

/* A copy transfer's deliveries, key its first block's at dst: a whole
 * block to the list by transfer (verify_write_phase puts it in the bitmap), else
 * to the sorted list; a span's blocks one by one. */
void verify_push_copy(struct vstate *v, const struct xfer *x, size_t xi, uint64_t key)
{
	uint32_t lo = x->offset, hi = lo + x->length, nb = xfer_blocks(x);

	if (v->full && lo == 0 && hi == SCHED_ONE && nb == 1) {
		if (v->nwhole == v->cap_whole)
			GROW(v->whole, v->cap_whole, v->nwhole + 1);
		v->whole[v->nwhole++] = (uint32_t)xi;
		return;
	}
	for (uint32_t j = 0; j < nb; j++)
		push_delivery(v, (struct delivery){key + j, lo, hi, 1, XFER_COPY, 0, xi});
}

/* Which blocks exist: rooted collectives have the root's; on a network only
 * terminals have data. */
static inline __attribute__((always_inline)) bool block_ok(const struct vstate *v, uint64_t block)
{
	enum sched_collective c = v->s->collective;
	uint64_t base = v->win ? v->win->base : 0; /* a chunk's shards */

	if (c == SCHED_BROADCAST || c == SCHED_REDUCE)
		return block + base == v->s->root;
	if (!v->term)
		return true;
	if (c == SCHED_ALLTOALL)
		return v->term[block / v->n] && v->term[block % v->n];
	return v->term[block + base];
}

/* The packets at a vertex that cannot store that make up [lo, hi), first
 * come first served, into v->pieces; taken (split where a packet is only
 * partly sent) unless the vertex can copy. -1 when they do not cover it. */
static int take_packets(struct vstate *v, struct seglist *l, uint32_t lo, uint32_t hi, bool take)
{
	v->npieces = 0;
	while (lo < hi) {
		uint32_t k;

		for (k = 0; l && k < l->n; k++)
			if (l->v[k].lo <= lo && lo < l->v[k].hi)
				break;
		if (!l || k == l->n)
			return -1;
		struct seg pk = l->v[k];
		uint32_t end = pk.hi < hi ? pk.hi : hi;

		GROW(v->pieces, v->cap_pieces, v->npieces + 1);
		v->pieces[v->npieces++] = (struct seg){lo, end, pk.count, pk.hash};
		if (take) {
			/* what is left of the packet: before lo and after end */
			l->v[k] = l->v[--l->n];
			if (pk.lo < lo)
				seglist_push(l, (struct seg){pk.lo, lo, pk.count, pk.hash});
			if (end < pk.hi)
				seglist_push(l, (struct seg){end, pk.hi, pk.count, pk.hash});
		}
		lo = end;
	}
	return 0;
}

/* Reduce mode off networks, after the checks: every transfer's pieces,
 * from the state at the start of the step (a delivery to an entry the
 * step reads waits in v->dl for the write phase; others, which no
 * transfer of the step can see, are applied now, in transfer order). In
 * one pass (one_pass) on the fold table alone: par_reduce_step does the
 * grid and rw. */
int verify_reduce_direct(struct vstate *v, uint32_t t)
{
	const struct schedule *s = v->s;
	size_t end = s->step_start[t + 1];
	uint32_t sh = 31 - v->gk;
	bool once = v->one_pass;

	for (size_t xi = s->step_start[t]; v->grid && xi < end; xi++) {
		const struct xfer *x = &s->xfers[xi];
		uint64_t sc = cell(v, x->src, x->block) << v->gk;
		uint64_t dc = cell(v, x->dst, x->block) << v->gk;
		bool red = xfer_op(x) == XFER_REDUCE;

		/* By diagonal the cells go in order: the hardware follows. */
		if (!v->rank && xi + PREFETCH_AHEAD < end) {
			const struct xfer *y = x + PREFETCH_AHEAD;
			uint32_t k = y->offset >> sh;

			__builtin_prefetch(&v->grid[(cell(v, y->src, y->block) << v->gk) + k]);
			__builtin_prefetch(&v->grid[(cell(v, y->dst, y->block) << v->gk) + k], 1);
		}
		for (uint32_t k = x->offset >> sh; k < (x->offset + x->length) >> sh; k++) {
			const struct rwhole *se = &v->grid[sc + k];
			struct rwhole *de = &v->grid[dc + k];

			if (rw_mark(de) == t + 1) {
				push_delivery(v, (struct delivery){dc + k, k << sh, (k + 1) << sh,
								   0, xfer_op(x), rw_hash(se), xi});
				continue;
			}
			rw_put(de, red, rw_hash(se));
		}
	}
	for (size_t xi = s->step_start[t]; v->rw && xi < end; xi++) {
		const struct xfer *x = &s->xfers[xi];
		uint64_t skey = cell(v, x->src, x->block), dkey = cell(v, x->dst, x->block);
		struct rwhole *se = &v->rw[skey], *de = &v->rw[dkey];
		bool wait = rw_mark(de) == t + 1, red = xfer_op(x) == XFER_REDUCE;

		if (!v->rank && xi + PREFETCH_AHEAD < end) {
			const struct xfer *y = x + PREFETCH_AHEAD;

			__builtin_prefetch(&v->rw[cell(v, y->src, y->block)]);
			__builtin_prefetch(&v->rw[cell(v, y->dst, y->block)], 1);
		}
		if (!wait && !((se->w | de->w) & RW_LIST) && x->length == SCHED_ONE) {
			rw_put(de, red, rw_hash(se));
			continue;
		}
		struct seg buf;
		uint32_t np, lo = x->offset, hi = lo + x->length;
		const struct seg *p = rw_pieces(v, se, &buf, &np);

		for (uint32_t k = 0; k < np; k++) {
			uint32_t a = p[k].lo > lo ? p[k].lo : lo, b = p[k].hi < hi ? p[k].hi : hi;

			if (b <= a)
				continue;
			if (wait)
				push_delivery(v, (struct delivery){dkey, a, b, p[k].count,
								   xfer_op(x), p[k].hash, xi});
			else
				verify_rw_apply(v, de, a, b, red, p[k].count, p[k].hash);
		}
	}
	for (size_t xi = s->step_start[t]; !v->rw && !v->grid && xi < end; xi++) {
		const struct xfer *x = &s->xfers[xi];
		uint64_t skey = cell(v, x->src, x->block), dkey = cell(v, x->dst, x->block);
		bool wait = !once && v->fold.e[dkey].mark == t + 1;

		if (once) {
			if (v->fold.e[skey].mark == t + 1) {
				v->read_written = true;
				return -1;
			}
			v->fold.e[dkey].mark = t + 1;
		}

		if (xi + PREFETCH_AHEAD < end) {
			const struct xfer *y = x + PREFETCH_AHEAD;
			uint64_t sk = cell(v, y->src, y->block), dk = cell(v, y->dst, y->block);

			/* The sender's entry again: the read phase's stamp is
			 * often evicted by now. */
			__builtin_prefetch(&v->fold.e[sk]);
			__builtin_prefetch(&v->fold.e[dk], 1);
		}
		const struct fold *se = &v->fold.e[skey];
		if (!wait && se->cut != FOLD_LIST) {
			/* What nearly every transfer is: the sender's one or two
			 * pieces folded straight into the receiver. */
			uint32_t lo = x->offset, hi = lo + x->length, cut = se->cut;
			bool red = xfer_op(x) == XFER_REDUCE;
			struct fold *de = &v->fold.e[dkey];

			if (lo < cut)
				fold_apply(&v->fold, de, lo, hi < cut ? hi : cut, red, se->count[0],
					   se->hash[0]);
			if (hi > cut)
				fold_apply(&v->fold, de, lo > cut ? lo : cut, hi, red, se->count[1],
					   se->hash[1]);
			continue;
		}
		verify_reduce_pieces(v, skey, x->offset, x->offset + x->length);
		for (size_t k = 0; k < v->npieces; k++) {
			struct delivery d = {dkey,
					     v->pieces[k].lo,
					     v->pieces[k].hi,
					     v->pieces[k].count,
					     xfer_op(x),
					     v->pieces[k].hash,
					     xi};

			if (wait)
				push_delivery(v, d);
			else
				reduce_apply(v, dkey, &d);
		}
	}
	return 0;
}

/* What a later transfer y will read of its source's data, fetched ahead
 * (a cache miss per transfer in the tables by node); by diagonal the reads
 * are in order already. */
void verify_prefetch_source(const struct vstate *v, const struct xfer *y)
{
	uint64_t yk = (uint64_t)y->src * v->nblocks + y->block;

	if (y->src >= v->n || y->block >= v->nblocks || v->rank)
		return;
	if (v->grid) {
		__builtin_prefetch(
		    &v->grid[(cell(v, y->src, y->block) << v->gk) + (y->offset >> (31 - v->gk))],
		    1);
	} else if (v->rw) {
		__builtin_prefetch(&v->rw[cell(v, y->src, y->block)], 1);
	} else if (v->reduce) {
		__builtin_prefetch(&v->fold.e[cell(v, y->src, y->block)], 1);
	} else {
		/* verify_holds() reads the bit, then the pieces (dense keys count no
		 * `used`). */
		if (v->full)
			__builtin_prefetch(&v->full[yk >> 6]);
		if (v->map.used || v->map.dense)
			piecemap_prefetch(&v->map, yk);
	}
}

/* A span (x carries 2^k blocks): only an all-gather's, off WDM rings and
 * networks, within the blocks. */
static int check_span(struct vstate *v, uint32_t t, size_t xi)
{
	const struct xfer *x = &v->s->xfers[xi];
	uint32_t nb = xfer_blocks(x);

	if (v->s->collective != SCHED_ALLGATHER || v->o->wdm || v->net)
		return verify_fail(
		    v, t, xi,
		    "a transfer of %u blocks: only an all-gather's on a direct-connect "
		    "topology carry several",
		    nb);
	if ((uint64_t)x->block + nb > v->nblocks)
		return verify_fail(v, t, xi, "no such block");
	for (uint32_t j = 1; v->term && j < nb; j++) /* absent nodes' blocks */
		if (!block_ok(v, x->block + j))
			return verify_fail(v, t, xi, "no such block");
	return 0;
}

/* The links part's read phase (every node taking part), up to the first
 * transfer that is not plain: one block's part over one arc, on its
 * port. Their checks (port, load) in one tight loop: half the part's time
 * went to verify_read_phase's branches for what a plain transfer cannot be. The
 * indices of block and part are the data part's to check (xfer_indexes:
 * a no from either sends the schedule to the step loop); a node's, here,
 * as the graph's tables need it. verify_read_phase goes on from the one
 * returned, and says what is wrong with it, if anything. Arcs are
 * fetched ahead where their table is larger than a core's cache. Without
 * a graph (routed peers) a plain transfer is one block's part between two
 * nodes, no port to check. */
static __attribute__((noinline)) size_t read_checks(struct vstate *v, uint32_t t)
{
	const struct schedule *s = v->s;
	const uint32_t *off = v->o->graph ? v->o->graph->off : NULL;
	struct arcload *arc = v->arc;
	size_t xi = s->step_start[t] > v->from ? s->step_start[t] : v->from;
	size_t end = s->step_start[t + 1];
	uint32_t n = v->n;
	bool ahead = off && (size_t)v->o->graph->m * sizeof(*arc) > (1u << 20);
	/* run and flags, one word: a run, a span (flags bits 3-7), or a
	 * reduction in copy mode */
	uint16_t odd = (uint16_t)(0xffu | (v->reduce ? 0xf8u : 0xfcu) << 8);
	/* verify_chunk's links pass: no data part checks the ranges after */
	bool ranges = v->links_only;
	uint64_t nblocks = v->nblocks;

	_Static_assert(offsetof(struct xfer, flags) == offsetof(struct xfer, run) + 1,
		       "run, then flags");
	for (; !off && xi < end; xi++) { /* no graph: no port to check */
		const struct xfer *x = &s->xfers[xi];
		uint16_t rf;

		memcpy(&rf, &x->run, sizeof(rf));
		if (x->src >= n || x->src == x->dst || (rf & odd) ||
		    (ranges && (x->dst >= n || x->block >= nblocks ||
				(uint64_t)x->offset + (x->length - 1) >= SCHED_ONE)))
			break;
	}
	for (; off && xi < end; xi++) {
		const struct xfer *x = &s->xfers[xi];
		uint32_t src = x->src, a;
		uint16_t rf;

		if (ahead && xi + PREFETCH_AHEAD < end) {
			const struct xfer *y = x + PREFETCH_AHEAD;

			__builtin_prefetch(&arc[off[y->src < n ? y->src : 0] + y->lane], 1);
		}
		memcpy(&rf, &x->run, sizeof(rf));
		/* the arc's head is a node: dst < n */
		if (src >= n || src == x->dst || (rf & odd) || x->lane >= off[src + 1] - off[src] ||
		    arc[a = off[src] + x->lane].head != x->dst ||
		    (ranges &&
		     (x->block >= nblocks || (uint64_t)x->offset + (x->length - 1) >= SCHED_ONE)))
			break;
		load_arc(v, t, a, x->length);
	}
	return xi;
}

int verify_read_phase(struct vstate *v, uint32_t t)
{
	const struct schedule *s = v->s;
	/* verify_par's links part or verify_chunk's links pass, every node
	 * taking part (a reduce's one block: the full checks): read_checks
	 * first */
	bool quick =
	    (v->par == PAR_CHECKS || (v->links_only && s->collective != SCHED_REDUCE)) && !v->term;
	size_t first = quick ? read_checks(v, t) : s->step_start[t];

	v->ndl = 0;
	v->nwhole = 0;
	if (v->o->wdm)
		verify_wdm_step(v, t);
	for (size_t xi = first; xi < s->step_start[t + 1]; xi++) {
		const struct xfer *x = &s->xfers[xi];
		uint32_t lo = x->offset, hi;

		/* The link check's arc entry, a cache miss per transfer on a
		 * large graph. */
		if (v->arc && xi + PREFETCH_AHEAD < s->step_start[t + 1]) {
			const struct xfer *y = x + PREFETCH_AHEAD;
			const uint32_t *off = v->o->graph->off;

			if (y->src < v->n && y->lane < off[y->src + 1] - off[y->src])
				__builtin_prefetch(&v->arc[off[y->src] + y->lane], 1);
		}
		if (own_data(v) && xi + PREFETCH_AHEAD < s->step_start[t + 1])
			verify_prefetch_source(v, x + PREFETCH_AHEAD);

		if (x->src >= v->n || x->dst >= v->n)
			return verify_fail(v, t, xi, "node out of range (%u nodes)", v->n);
		if (x->src == x->dst)
			return verify_fail(v, t, xi, "a node sends to itself");
		if (v->o->absent && (v->o->absent[x->src] || v->o->absent[x->dst]))
			return verify_fail(v, t, xi, "node %u takes no part (failed)",
					   v->o->absent[x->src] ? x->src : x->dst);
		if (x->block >= v->nblocks)
			return verify_fail(v, t, xi, "no such block");
		bool span = __builtin_expect(xfer_blocks(x) > 1, 0);
		if (span && check_span(v, t, xi) < 0)
			return -1;
		if (x->length == 0 || x->offset >= SCHED_ONE ||
		    (uint64_t)x->offset + x->length > SCHED_ONE)
			return verify_fail(v, t, xi, "part outside the block");
		/* (sorted: verify_a2a_sorted found none) */
		if (s->collective == SCHED_ALLTOALL && !v->sorted &&
		    x->block / v->n == x->block % v->n)
			return verify_fail(v, t, xi,
					   "all-to-all has no block from a node to itself");
		if (!block_ok(v, x->block))
			return verify_fail(v, t, xi, "no such block");
		hi = lo + x->length;
		if (x->run && !v->o->wdm && !v->o->graph)
			return verify_fail(v, t, xi,
					   "a transfer over %u arcs, checked without its topology",
					   xfer_arcs(x));
		if (v->o->graph && check_link(v, t, xi) < 0)
			return -1;
		if (v->net && verify_check_net_link(v, t, xi) < 0)
			return -1;
		if (v->o->wdm && verify_check_lightpath(v, t, xi) < 0)
			return -1;

		uint64_t skey = (uint64_t)x->src * v->nblocks + x->block;
		uint64_t dkey = (uint64_t)x->dst * v->nblocks + x->block;
		if (!v->reduce) {
			if (xfer_op(x) == XFER_REDUCE)
				return verify_fail(v, t, xi, "a reducing transfer in %s",
						   sched_collective_name(s->collective));
			if (v->sorted || !own_data(v))
				continue;
			if (restricted(v, x->src))
				push_rmove(&v->rs, &v->nrs, &v->cap_rs,
					   (struct rmove){skey, lo, hi, 1, XFER_COPY, 0, xi});
			else if (span ? !verify_holds_span(v, x->src, x, lo, hi)
				      : !verify_holds(v, x->src, x->block, lo, hi))
				return verify_fail(v, t, xi,
						   "node %u does not hold that data at the start "
						   "of the step",
						   x->src);
			if (restricted(v, x->dst)) {
				push_rmove(&v->rd, &v->nrd, &v->cap_rd,
					   (struct rmove){dkey, lo, hi, 1, XFER_COPY, 0, xi});
				continue;
			}
			if (v->cgrid) /* verify_write_phase walks the step again */
				continue;
			verify_push_copy(v, x, xi, dkey);
			continue;
		}
		if (!own_data(v))
			continue;
		if (v->read_mark) {
			mark_read(v, t, x);
			continue;
		}
		if (v->net && !net_can(v, x->src, VERIFY_STORE)) {
			struct seglist *l = verify_map_get(&v->rprev, skey, false);

			if (take_packets(v, l, lo, hi, !net_can(v, x->src, VERIFY_COPY)) < 0)
				return verify_fail(v, t, xi,
						   "node %u cannot store: it may send only what it "
						   "received in the step before, each packet once",
						   x->src);
		} else {
			verify_reduce_pieces(v, skey, lo, hi);
		}
		if (v->net && !v->term[x->src])
			for (size_t k = 0; k < v->npieces; k++)
				if (v->pieces[k].count == 0)
					return verify_fail(
					    v, t, xi, "node %u holds none of that data", x->src);
		bool apart = v->net && !net_can(v, x->dst, VERIFY_STORE);

		for (size_t k = 0; k < v->npieces; k++) {
			if (apart)
				push_rmove(&v->rd, &v->nrd, &v->cap_rd,
					   (struct rmove){dkey, v->pieces[k].lo, v->pieces[k].hi,
							  v->pieces[k].count, xfer_op(x),
							  v->pieces[k].hash, xi});
			else
				push_delivery(v,
					      (struct delivery){dkey, v->pieces[k].lo,
								v->pieces[k].hi, v->pieces[k].count,
								xfer_op(x), v->pieces[k].hash, xi});
		}
	}
	if (v->net) {
		if (!v->reduce && verify_check_rsends(v, t) < 0)
			return -1;
		if (verify_check_net_capacity(v, t) < 0)
			return -1;
	}
	if (v->read_mark && own_data(v))
		(void)verify_reduce_direct(v, t); /* two passes: cannot say no */
	return 0;
}

/* A span into dst's entries of cgrid: what they held already, in blocks,
 * its own block among them. Whole blocks by node (span_bits): a stretch
 * of dst's row, a word at a time; else block by block. */
static double span_write(struct vstate *v, const struct xfer *x)
{
	uint64_t b = x->block, nb = xfer_blocks(x), d = x->dst, row = d * v->nblocks;
	uint32_t lo = x->offset, hi = lo + x->length, sh = 31 - v->gk;
	double dup = 0;

	if (span_bits(v)) {
		if (d < b || d >= b + nb)
			return (double)verify_bits_or(v->cgrid, row + b, nb);
		return (double)(1 + verify_bits_or(v->cgrid, row + b, d - b) +
				verify_bits_or(v->cgrid, row + d + 1, b + nb - d - 1));
	}
	for (uint64_t j = b; j < b + nb; j++) {
		uint64_t c = cell(v, x->dst, j) << v->gk;
		uint32_t ov = 0;

		if (origin_of(v, j) == x->dst) {
			dup += sched_frac(x->length);
			continue;
		}
		for (uint32_t k = lo >> sh; k < hi >> sh; k++) {
			uint64_t *w = &v->cgrid[(c + k) >> 6], bit = 1ull << ((c + k) & 63);

			ov += *w & bit ? 1u << sh : 0;
			*w |= bit;
		}
		dup += sched_frac(ov);
	}
	return dup;
}

/* In parts (cgrid): step t's deliveries, every transfer in order (from
 * v->from where verify_par_seq's fused loop did those before; the read phase
 * passed them all); each part a node holds already is a
 * duplicate, summed in parts (multiples of 2^-gk, exact in a double as
 * the per-transfer sum was). The tables' fields in locals: to the
 * compiler a store to cgrid may change any 64-bit field of v. A node's
 * own block is its origin's (cgrid: all-gathers and broadcasts, whose
 * block is the root). */
void verify_cgrid_write(struct vstate *v, uint32_t t)
{
	const struct schedule *s = v->s;
	if (!s->xfers) /* (no transfers at all: no offset on NULL) */
		return;
	const struct xfer *first =
	    s->xfers + (s->step_start[t] > v->from ? s->step_start[t] : v->from);
	const struct xfer *end = s->xfers + s->step_start[t + 1];
	const uint32_t *rank = v->rank;
	uint64_t *cgrid = v->cgrid, nblocks = v->nblocks, dup = 0, mask, *w;
	uint32_t n = v->n, gk = v->gk;

	for (const struct xfer *x = first; x < end; x++) {
		if (xfer_blocks(x) > 1) {
			v->r->duplicate_blocks += span_write(v, x);
			continue;
		}
		if (x->block == x->dst) {
			v->r->duplicate_blocks += sched_frac(x->length);
			continue;
		}
		w = part_bits(cgrid, gk, cell_in(rank, n, nblocks, x->dst, x->block), x->offset,
			      x->offset + x->length, &mask);
		if (__builtin_expect((*w & mask) != 0, 0)) /* no popcnt by default */
			dup += popcount64(*w & mask);
		*w |= mask;
	}
	v->r->duplicate_blocks += (double)dup / (double)(1u << gk);
}

int verify_write_phase(struct vstate *v, uint32_t t)
{
	bool a2a = v->s->collective == SCHED_ALLTOALL;

	if (v->net)
		verify_apply_rdeliveries(v);
	if (v->sorted)
		return 0;

	if (v->reduce) {
		/* Additive, so order within the step does not matter. */
		for (size_t i = 0; i < v->ndl; i++) {
			const struct delivery *d = &v->dl[i];

			if (v->grid) { /* one part each */
				rw_put(&v->grid[d->key], d->op == XFER_REDUCE, d->hash);
				continue;
			}
			if (v->rw && i + PREFETCH_AHEAD < v->ndl)
				__builtin_prefetch(&v->rw[v->dl[i + PREFETCH_AHEAD].key], 1);
			if (v->rw) {
				verify_rw_apply(v, &v->rw[d->key], d->lo, d->hi,
						d->op == XFER_REDUCE, d->count, d->hash);
				continue;
			}
			if (i + PREFETCH_AHEAD < v->ndl)
				__builtin_prefetch(&v->fold.e[v->dl[i + PREFETCH_AHEAD].key], 1);
			reduce_apply(v, d->key, d);
		}
		return 0;
	}
	/* In parts (cgrid); the checks thread keeps no data. */
	if (v->cgrid) {
		if (own_data(v))
			verify_cgrid_write(v, t);
		return 0;
	}
	/* Whole blocks to nodes that hold none of the block in pieces go
	 * straight to the bitmap, in transfer order, without sorting; the rest
	 * (parts of blocks, or blocks already held in part) are sorted and
	 * merged below. A second whole copy in one step is a duplicate (at an
	 * all-to-all target, an error), as in the sorted path. */
	for (size_t i = 0; i < v->nwhole; i++) {
		const struct xfer *x = &v->s->xfers[v->whole[i]];
		uint32_t node = x->dst;
		uint64_t block = x->block, key = (uint64_t)node * v->nblocks + block;

		if (i + PREFETCH_AHEAD < v->nwhole) {
			const struct xfer *y = &v->s->xfers[v->whole[i + PREFETCH_AHEAD]];
			uint64_t yk = (uint64_t)y->dst * v->nblocks + y->block;

			__builtin_prefetch(&v->full[yk >> 6], 1);
			piecemap_prefetch(&v->map, yk);
		}
		if (piecemap_get(&v->map, key, false)) {
			push_delivery(
			    v, (struct delivery){key, 0, SCHED_ONE, 1, XFER_COPY, 0, v->whole[i]});
			continue;
		}
		if (origin_of(v, block) == node || bit_get(v, key)) {
			if (a2a && block % v->n == node)
				return verify_fail(v, t, v->whole[i],
						   "block delivered to its target twice");
			v->r->duplicate_blocks += 1;
			continue;
		}
		v->full[key >> 6] |= 1ull << (key & 63);
	}
	/* The rest in transfer order, each added to what its node holds of
	 * the block: what overlaps that (this step's earlier pieces included)
	 * is a duplicate, an error at an all-to-all target. Unsorted: the
	 * union's overlap does not depend on the order, and a sort of every
	 * step's deliveries cost more than the lookups (bidir-ring). */
	for (size_t i = 0; i < v->ndl; i++) {
		const struct delivery *d = &v->dl[i];
		uint64_t key = d->key;
		uint32_t node = (uint32_t)(key / v->nblocks);
		uint64_t block = key % v->nblocks;
		bool at_target = a2a && block % v->n == node;

		if (i + PREFETCH_AHEAD < v->ndl) {
			uint64_t yk = v->dl[i + PREFETCH_AHEAD].key;

			if (v->full)
				__builtin_prefetch(&v->full[yk >> 6], 1);
			piecemap_prefetch(&v->map, yk);
		}
		if (origin_of(v, block) == node || bit_get(v, key)) {
			if (at_target)
				return verify_fail(v, t, d->xfer,
						   "block delivered to its target twice");
			v->r->duplicate_blocks += sched_frac(d->hi - d->lo);
			continue;
		}
		/* The whole block in one go, to a node holding none of it:
		 * straight to the bitmap. Else one lookup, creating the entry. */
		bool whole = v->full && d->lo == 0 && d->hi == SCHED_ONE;
		struct piece *e = piecemap_get(&v->map, key, !whole);
		if (!e) { /* whole */
			v->full[key >> 6] |= 1ull << (key & 63);
			continue;
		}
		uint64_t ov = piece_add(&v->map, e, d->lo, d->hi);
		if (ov && at_target)
			return verify_fail(v, t, d->xfer, "block delivered to its target twice");
		v->r->duplicate_blocks += sched_frac((uint32_t)ov);
		if (v->full && piece_whole(e)) {
			v->full[key >> 6] |= 1ull << (key & 63);
			piece_clear(&v->map, e);
		}
	}
	return 0;
}

int verify_step_loads(struct vstate *v, uint32_t t)
{
	const double *cap = v->o->arc_capacity;
	uint64_t max = 0;
	double load = 0;

	if (cap) {
		/* Mixed rates: the step lasts as long as its slowest link's
		 * data over that link's capacity. */
		for (size_t i = 0; i < v->narc_used; i++) {
			uint32_t a = v->arc_used[i];

			load = fmax(load, (double)v->arc[a].load / SCHED_ONE / cap[a]);
		}
		v->narc_used = 0;
	} else {
		for (size_t i = 0; i < v->narc_used; i++)
			if (v->arc[v->arc_used[i]].load > max)
				max = v->arc[v->arc_used[i]].load;
		v->narc_used = 0;
		load = (double)max / SCHED_ONE;
	}
	if (v->par) { /* this thread's arcs: verify_par takes the most */
		v->par_load[t] = load;
		return 0;
	}
	if (v->o->step_link_load)
		v->o->step_link_load[t] = load;
	v->r->sum_max_link_load += load;
	if (load > v->r->max_link_load)
		v->r->max_link_load = load;
	return 0;
}

/* The busiest link over the whole schedule (verify_report). */
void verify_total_loads(struct vstate *v)
{
	const struct graph *g = v->o->graph;
	const double *cap = v->o->arc_capacity;
	double max = 0;

	for (uint32_t a = 0; a < g->m; a++)
		max = fmax(max, (double)v->arc[a].total / SCHED_ONE / (cap ? cap[a] : 1));
	v->r->max_total_link_load = max;
}

/* The step loop: each step's reads, then its writes (verify_read_phase,
 * verify_write_phase), its links' loads, and the schedule's. */
int verify_run_steps(struct vstate *v)
{
	const struct schedule *s = v->s;

	for (uint32_t t = 0; t < s->nsteps; t++) {
		if (clock_expired(v->o->clock))
			return verify_fail(v, t, SIZE_MAX, "time limit reached in verification");
		clock_progress(v->o->clock, NULL, (double)t / s->nsteps);
		if (verify_read_phase(v, t) < 0 || verify_write_phase(v, t) < 0)
			return -1;
		if (v->o->graph)
			verify_step_loads(v, t);
	}
	if (v->o->graph)
		verify_total_loads(v);
	return 0;
}
