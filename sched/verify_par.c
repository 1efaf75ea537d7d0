/* The verifier's check on two threads (verify.c's verify_par drives it).
 *
 * What nodes hold and what the links carry do not depend on each other: in
 * a reduction or an all-gather two threads walk the steps side by side, one
 * checking every transfer, its link and the loads (PAR_CHECKS: verify_read_phase
 * without the data), the other keeping the data (PAR_DATA: of the checks
 * only what keeps its indices in the tables, then the marks and
 * verify_reduce_direct, or in copy mode what each source holds and the copies
 * delivered, par_read_copy). By
 * diagonal or in parts (rings, bidirectional rings, torus-rings) each is
 * about half the step loop; in BFB's table by node the data is most of it
 * (a cache miss per transfer), the checks a fifth. Without a graph to
 * check against there is little to take off the data: one thread. The
 * inputs' first touch (a 4,096-node bidirectional ring's grid is 512 MiB)
 * is spread over every core the check may use first (and so is the final
 * scan of an allreduce), in parts of rows or entries.
 *
 * Like verify_a2a_sorted it only proves a schedule right: what a right schedule's
 * report holds (the loads, each step's as verify_step_loads finds it, summed in
 * step order; the totals from the arcs after) is then exactly the step
 * loop's. On anything else the step loop checks it again for its report,
 * as it always did. A split by block (each thread half the blocks and the
 * arcs of half the nodes) cost each thread three quarters of the step
 * loop: both looked at every transfer. */

#include "sched/verify_internal.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* A scan or a first touch in parts, one a thread the check may use:
 * each part's entries or rows its own, so any number give the same. */
#define PAR_MAX_PARTS 64
struct par_parts {
	struct vstate *v;
	uint64_t items; /* entries, or rows */
	unsigned np;
	bool ok[PAR_MAX_PARTS];
};

static void par_parts_init(struct par_parts *p, struct vstate *v, uint64_t items)
{
	unsigned t = check_threads(v->o);

	p->v = v;
	p->items = items;
	p->np = t < PAR_MAX_PARTS ? t : PAR_MAX_PARTS;
	if (p->np > items)
		p->np = items ? (unsigned)items : 1;
}

/* Part i's items [*lo, *hi). */
static void par_part(const struct par_parts *p, size_t i, uint64_t *lo, uint64_t *hi)
{
	*lo = (uint64_t)((unsigned __int128)p->items * i / p->np);
	*hi = (uint64_t)((unsigned __int128)p->items * (i + 1) / p->np);
}

static void par_final_part(void *ctx, size_t i, unsigned worker)
{
	struct par_parts *p = ctx;
	uint64_t key, end;

	(void)worker;
	par_part(p, i, &key, &end);
	p->ok[i] = verify_first_not_full(p->v, key, end) == end;
}

bool verify_par_final(struct vstate *v)
{
	struct par_parts p;
	bool ok = true;

	par_parts_init(&p, v, (uint64_t)v->n * v->nblocks);
	parallel_for(p.np, 1, v->o->threads, par_final_part, &p);
	for (unsigned i = 0; i < p.np; i++)
		ok = ok && p.ok[i];
	return ok;
}

/* Whether x is in parts finer than the guessed ones (pmask). */
static inline bool finer_parts(const struct xfer *x, uint32_t pmask)
{
	return (x->offset | x->length) & pmask;
}

/* Whether x's nodes, block and part index the data tables: of the read
 * phase's checks, what the data part needs (and does for the links part,
 * read_checks); the step loop reports. */
static inline bool xfer_in(const struct xfer *x, uint32_t n, uint64_t nblocks, uint16_t odd,
			   uint32_t pmask)
{
	uint16_t rf;

	memcpy(&rf, &x->run, sizeof(rf));
	/* length 0 wraps to the top: length in [1, ONE - offset], offset
	 * then below ONE */
	return x->src < n && x->dst < n && (uint64_t)x->block + xfer_blocks(x) <= nblocks &&
	       (uint64_t)x->offset + (x->length - 1) < SCHED_ONE && !finer_parts(x, pmask) &&
	       (!odd || (x->src != x->dst && !(rf & odd)));
}

static inline bool xfer_indexes(const struct vstate *v, const struct xfer *x)
{
	return xfer_in(x, v->n, v->nblocks, v->alone_odd, v->pmask);
}

/* xfer_in said no to x: in parts finer than guessed, or else. */
static int xfer_no(struct vstate *v, const struct xfer *x)
{
	v->finer = finer_parts(x, v->pmask);
	return -1;
}

/* The data thread's read phase in reduce mode (off networks: read_mark)
 * on the fold table: of the checks only what keeps the indices in the
 * tables. */
static int par_read_data(struct vstate *v, uint32_t t)
{
	const struct schedule *s = v->s;

	v->ndl = 0;
	for (size_t xi = s->step_start[t]; xi < s->step_start[t + 1]; xi++) {
		const struct xfer *x = &s->xfers[xi];

		if (!xfer_indexes(v, x))
			return -1;
		if (v->one_pass)
			continue;
		if (xi + PREFETCH_AHEAD < s->step_start[t + 1])
			verify_prefetch_source(v, x + PREFETCH_AHEAD);
		mark_read(v, t, x);
	}
	return verify_reduce_direct(v, t);
}

/* The data thread's read phase in copy mode (an all-gather off networks):
 * of the checks only what keeps the indices in the tables, then what each
 * source holds and the deliveries, as verify_read_phase's copy part. */
static int par_read_copy(struct vstate *v, uint32_t t)
{
	const struct schedule *s = v->s;

	v->ndl = 0;
	v->nwhole = 0;
	for (size_t xi = s->step_start[t]; xi < s->step_start[t + 1]; xi++) {
		const struct xfer *x = &s->xfers[xi];
		uint32_t lo = x->offset, hi = lo + x->length;

		if (!xfer_indexes(v, x))
			return -1;
		if (xi + PREFETCH_AHEAD < s->step_start[t + 1])
			verify_prefetch_source(v, x + PREFETCH_AHEAD);
		if (xfer_blocks(x) > 1 ? !verify_holds_span(v, x->src, x, lo, hi)
				       : !verify_holds(v, x->src, x->block, lo, hi))
			return -1;
		if (v->cgrid) /* verify_write_phase walks the step again */
			continue;
		verify_push_copy(v, x, xi, (uint64_t)x->dst * v->nblocks + x->block);
	}
	return 0;
}

/* x's delivery from se into de where either is in pieces (an rw entry
 * with a list), at once: verify_par's data thread in one pass. */
static __attribute__((noinline)) void rw_deliver(struct vstate *v, const struct xfer *x,
						 const struct rwhole *se, struct rwhole *de)
{
	struct seg buf;
	uint32_t np, lo = x->offset, hi = lo + x->length;
	const struct seg *p = rw_pieces(v, se, &buf, &np);

	for (uint32_t k = 0; k < np; k++) {
		uint32_t a = p[k].lo > lo ? p[k].lo : lo, b = p[k].hi < hi ? p[k].hi : hi;

		if (b > a)
			verify_rw_apply(v, de, a, b, xfer_op(x) == XFER_REDUCE, 0, p[k].hash);
	}
}

/* A reduction's delivery of x from cell sc to cell dc, in the grid (its
 * parts) or rw, at once, each entry written stamped with mark: false when
 * x reads an entry its step already wrote (that read must see the entry
 * from before the step: the one pass says no). par_reduce_step's and
 * seq_fused's. */
static inline __attribute__((always_inline)) bool
reduce_once(struct vstate *v, const struct xfer *x, struct rwhole *grid, struct rwhole *rw,
	    uint64_t sc, uint64_t dc, uint32_t gk, uint32_t mark)
{
	bool red = xfer_op(x) == XFER_REDUCE;

	if (grid) {
		uint32_t sh = 31 - gk, k = x->offset >> sh;
		uint32_t np = ((x->offset + x->length) >> sh) - k;
		const struct rwhole *se = &grid[(sc << gk) + k];
		struct rwhole *de = &grid[(dc << gk) + k];

		for (; np; np--, se++, de++) {
			if (rw_mark(se) == mark) /* written earlier in the step */
				return false;
			rw_put(de, red, rw_hash(se));
			rw_set_mark(de, mark);
		}
		return true;
	}
	const struct rwhole *se = &rw[sc];
	struct rwhole *de = &rw[dc];

	if (rw_mark(se) == mark)
		return false;
	rw_set_mark(de, mark);
	if (!((se->w | de->w) & RW_LIST) && x->length == SCHED_ONE)
		rw_put(de, red, rw_hash(se));
	else
		rw_deliver(v, x, se, de);
	return true;
}

/* The data thread's step of a reduction in one pass (one_pass) in the
 * grid or rw: verify_reduce_direct's, each entry written stamped with the step
 * and a read of one so stamped a no, with the tables' fields in locals
 * (as par_copy_step's) and the read phase's index checks in the same
 * loop. */
static int par_reduce_step(struct vstate *v, uint32_t t)
{
	const struct schedule *s = v->s;
	const struct xfer *first =
	    s->xfers + (s->step_start[t] > v->from ? s->step_start[t] : v->from);
	const struct xfer *end = s->xfers + s->step_start[t + 1];
	const uint32_t *rank = v->rank;
	struct rwhole *grid = v->grid, *rw = v->rw;
	uint64_t nblocks = v->nblocks;
	uint32_t n = v->n, gk = v->gk, mark = t + 1;
	uint16_t odd = v->alone_odd;
	uint32_t pmask = v->pmask;

	for (const struct xfer *x = first; x < end; x++) {
		if (!xfer_in(x, n, nblocks, odd, pmask))
			return xfer_no(v, x);
		uint64_t sc = cell_in(rank, n, nblocks, x->src, x->block);
		uint64_t dc = cell_in(rank, n, nblocks, x->dst, x->block);

		/* By diagonal the cells go in order: the hardware follows. */
		if (!rank && x + PREFETCH_AHEAD < end) {
			const struct xfer *y = x + PREFETCH_AHEAD;
			uint64_t ys = cell_in(rank, n, nblocks, y->src < n ? y->src : 0,
					      y->block < nblocks ? y->block : 0),
				 yd = cell_in(rank, n, nblocks, y->dst < n ? y->dst : 0,
					      y->block < nblocks ? y->block : 0);

			__builtin_prefetch(grid ? (void *)&grid[ys << gk] : (void *)&rw[ys]);
			__builtin_prefetch(grid ? (void *)&grid[yd << gk] : (void *)&rw[yd], 1);
		}
		if (!reduce_once(v, x, grid, rw, sc, dc, gk, mark)) {
			v->read_written = true;
			return -1;
		}
	}
	return 0;
}

/* The data part's step of a reduction in two passes, in the grid or rw,
 * where one pass would read what the step wrote (latency-optimal Swing
 * and recursive doubling swap whole vectors every step): each source's
 * value first, its parts into the transfer's 2^gk slots of v->snap (16
 * bytes a part), then each delivery from them. No marks, no delivery
 * list (the step loop's two passes, 40 bytes a delivery and a mark a
 * read). An rw entry in pieces, or a part of one, is the step loop's to
 * check: no. Where the data part is alone and the step large, each pass
 * on two threads: the first in halves of the transfers, the
 * second in halves of the receivers, so that no entry is written by
 * both. */
struct snap_job {
	struct vstate *v;
	uint32_t t;
	int rc[2]; /* each half's */
};

/* 0, -1 (no), or -2 (in parts finer than guessed). */
static int snap_read(const struct vstate *v, uint32_t t, size_t lo, size_t hi)
{
	const struct schedule *s = v->s;
	if (lo >= hi) /* (nothing to read; xfers may be NULL: no offset on it) */
		return 0;
	const struct xfer *first = s->xfers + s->step_start[t];
	const uint32_t *rank = v->rank;
	const struct rwhole *grid = v->grid, *rw = v->rw;
	uint64_t nblocks = v->nblocks;
	uint32_t n = v->n, gk = grid ? v->gk : 0, sh = 31 - v->gk;
	uint16_t odd = v->alone_odd;

	/* a transfer's parts, the next transfer's after them (compact: a
	 * transfer of one part in 2^gk touches one slot, and the scratch is
	 * fresh pages), from the half's start lo << gk; a pointer, not an
	 * index (a division by the size of a transfer) */
	struct rwhole *snap = &v->snap[lo << gk];

	for (const struct xfer *x = first + lo; x < first + hi; x++) {
		if (!xfer_in(x, n, nblocks, odd, v->pmask))
			return finer_parts(x, v->pmask) ? -2 : -1;
		uint64_t sc = cell_in(rank, n, nblocks, x->src, x->block);

		if (grid) {
			uint32_t k = x->offset >> sh, np = ((x->offset + x->length) >> sh) - k;
			const struct rwhole *se = &grid[(sc << gk) + k];

			for (uint32_t i = 0; i < np; i++)
				snap[i] = se[i];
			snap += np;
		} else {
			if ((rw[sc].w & RW_LIST) || x->length != SCHED_ONE)
				return -1;
			*snap++ = rw[sc];
		}
	}
	return 0;
}

/* The deliveries of step t to receivers [rlo, rhi): 0, or -1 (no). The
 * step's transfers from mid on were read in a half of their own (from
 * slot mid << gk). */
static int snap_write(struct vstate *v, uint32_t t, uint32_t rlo, uint32_t rhi, size_t mid)
{
	const struct schedule *s = v->s;
	const struct xfer *first = s->xfers + s->step_start[t],
			  *end = s->xfers + s->step_start[t + 1];
	const uint32_t *rank = v->rank;
	struct rwhole *grid = v->grid, *rw = v->rw;
	uint64_t nblocks = v->nblocks;
	uint32_t n = v->n, gk = grid ? v->gk : 0, sh = 31 - v->gk;

	const struct rwhole *snap = v->snap; /* as snap_read's */

	for (const struct xfer *x = first; x < end; x++) {
		uint32_t k = grid ? x->offset >> sh : 0;
		uint32_t np = grid ? ((x->offset + x->length) >> sh) - k : 1;

		if (__builtin_expect(x == first + mid, 0))
			snap = &v->snap[mid << gk];
		if (x->dst < rlo || x->dst >= rhi) {
			snap += np;
			continue;
		}
		uint64_t dc = cell_in(rank, n, nblocks, x->dst, x->block);
		bool red = xfer_op(x) == XFER_REDUCE;
		struct rwhole *de = grid ? &grid[(dc << gk) + k] : &rw[dc];

		if (!grid && (de->w & RW_LIST))
			return -1;
		for (uint32_t i = 0; i < np; i++, snap++)
			rw_put(&de[i], red, rw_hash(snap));
	}
	return 0;
}

static void snap_half_read(void *ctx, size_t i, unsigned worker)
{
	struct snap_job *j = ctx;
	const struct schedule *s = j->v->s;
	size_t m = s->step_start[j->t + 1] - s->step_start[j->t];

	(void)worker;
	j->rc[i] = snap_read(j->v, j->t, i ? m / 2 : 0, i ? m : m / 2);
}

static void snap_half_write(void *ctx, size_t i, unsigned worker)
{
	struct snap_job *j = ctx;
	uint32_t n = j->v->n;
	size_t m = j->v->s->step_start[j->t + 1] - j->v->s->step_start[j->t];

	(void)worker;
	j->rc[i] = snap_write(j->v, j->t, i ? n / 2 : 0, i ? n : n / 2, m / 2);
}

static int par_reduce_snap(struct vstate *v, uint32_t t)
{
	const struct schedule *s = v->s;
	size_t m = s->step_start[t + 1] - s->step_start[t];
	bool two = v->alone_odd && m >= par_least(v->o) && check_threads(v->o) > 1;
	struct snap_job j = {.v = v, .t = t};

	GROW(v->snap, v->cap_snap, m << (v->grid ? v->gk : 0));
	if (two)
		parallel_for(2, 1, 2, snap_half_read, &j);
	else
		j.rc[0] = j.rc[1] = snap_read(v, t, 0, m);
	if (j.rc[0] < 0 || j.rc[1] < 0) {
		v->finer = j.rc[0] == -2 || j.rc[1] == -2;
		return -1;
	}
	if (!two)
		return snap_write(v, t, 0, v->n, m);
	parallel_for(2, 1, 2, snap_half_write, &j);
	return j.rc[0] < 0 || j.rc[1] < 0 ? -1 : 0;
}

/* The data thread's step of an all-gather in parts (cgrid), its read and
 * write phases: what each source holds, as par_read_copy does, with the
 * tables' fields in locals (their reloads were half the thread's
 * instructions), then the deliveries (verify_cgrid_write). */
static int par_copy_step(struct vstate *v, uint32_t t)
{
	const struct schedule *s = v->s;
	const struct xfer *first =
	    s->xfers + (s->step_start[t] > v->from ? s->step_start[t] : v->from);
	const struct xfer *end = s->xfers + s->step_start[t + 1];
	const uint32_t *rank = v->rank;
	uint64_t *cgrid = v->cgrid, nblocks = v->nblocks, mask, *w;
	uint32_t n = v->n, gk = v->gk;
	uint16_t odd = v->alone_odd;
	uint32_t pmask = v->pmask;

	for (const struct xfer *x = first; x < end; x++) {
		uint32_t lo = x->offset, hi = lo + x->length;

		if (!xfer_in(x, n, nblocks, odd, pmask))
			return xfer_no(v, x);
		if (xfer_blocks(x) > 1) {
			if (!verify_holds_span(v, x->src, x, lo, hi))
				return -1;
			continue;
		}
		if (x->block == x->src)
			continue;
		w = part_bits(cgrid, gk, cell_in(rank, n, nblocks, x->src, x->block), lo, hi,
			      &mask);
		if ((*w & mask) != mask)
			return -1;
	}
	verify_cgrid_write(v, t); /* as verify_write_phase */
	return 0;
}

/* Step t of one part, the data's or the links': whether it passed. */
static bool par_step(struct vstate *v, uint32_t t)
{
	bool ok;

	if (v->par == PAR_DATA && v->cgrid)
		return par_copy_step(v, t) == 0;
	if (v->par == PAR_DATA && v->read_mark && (v->grid || v->rw))
		return (v->one_pass ? par_reduce_step(v, t) : par_reduce_snap(v, t)) == 0;
	if (v->par == PAR_DATA)
		ok = (v->reduce ? par_read_data(v, t) : par_read_copy(v, t)) == 0;
	else
		ok = verify_read_phase(v, t) == 0;
	ok = ok && verify_write_phase(v, t) == 0;
	if (ok && v->par == PAR_CHECKS && v->o->graph)
		verify_step_loads(v, t);
	return ok;
}

void verify_par_run(void *ctx, size_t i, unsigned worker)
{
	struct par_job *j = ctx;
	struct vstate *v = &j->w[i];
	uint32_t T = v->s->nsteps;
	bool ok = true;

	for (uint32_t t = 0; t < T && ok; t++) {
		if (atomic_load_explicit(&j->stop, memory_order_relaxed) ||
		    clock_expired(v->o->clock)) {
			ok = false;
			break;
		}
		if (worker == 0) /* the caller's thread */
			clock_progress(v->o->clock, NULL, (double)t / T);
		ok = par_step(v, t);
	}
	ok = ok && (v->par == PAR_CHECKS || j->split_final || verify_final_check(v) == 0);
	if (!ok)
		atomic_store(&j->stop, true);
	j->ok[i] = ok;
}

/* Whether verify_par_seq takes both parts of a step in one loop (seq_fused):
 * a graph, every node taking part (read_checks), and a data part in the
 * grid or rw in one pass, or an all-gather in parts. */
static bool seq_fuses(const struct vstate *d)
{
	return d->o->graph && !d->term &&
	       (d->cgrid || (d->one_pass && d->read_mark && (d->grid || d->rw)));
}

/* verify_par_seq's step t up to its first transfer that is not plain, both parts
 * in one loop: read_checks' checks and load (links, c) and
 * par_reduce_step's delivery or par_copy_step's read (data, d), the
 * transfer's fields and range checks read once (one loop over a step of
 * a ring had cost a third more instructions than generating it; two, as
 * many again). The index of the first transfer not done: the two parts
 * go on from it each its own way (c->from, d->from), which also says
 * what is wrong; SIZE_MAX where the data part says no (read_written, as
 * par_reduce_step). An all-gather's writes stay after every read of the
 * step: each transfer's word and bits kept (d->cw, 16 bytes a transfer
 * of the step) for seq_writes, a transfer that is not plain and those
 * after it verify_cgrid_write's (from d->from); verify_cgrid_write walking the step
 * again cost half as many instructions as the fused loop. */
static size_t seq_fused(struct vstate *c, struct vstate *d, uint32_t t)
{
	const struct schedule *s = d->s;
	const struct xfer *first = s->xfers + s->step_start[t],
			  *end = s->xfers + s->step_start[t + 1];
	const struct xfer *x = first;
	const uint32_t *off = c->o->graph->off, *rank = d->rank;
	struct arcload *arc = c->arc;
	uint32_t *used = c->arc_used;
	size_t nused = c->narc_used;
	struct rwhole *grid = d->grid, *rw = d->rw;
	uint64_t *cgrid = d->cgrid, nblocks = d->nblocks, mask, *w;
	uint32_t n = d->n, gk = d->gk, mark = t + 1, pmask = d->pmask;
	bool ahead = (size_t)c->o->graph->m * sizeof(*arc) > (1u << 20);
	/* the data's entries by node: fetched ahead (by diagonal they are
	 * in order) */
	bool near = !rank && !cgrid;
	/* read_checks' odd: a run, a span, or a reduction in copy mode */
	uint16_t odd = (uint16_t)(0xffu | (d->reduce ? 0xf8u : 0xfcu) << 8);
	struct cwrite *cw;

	if (cgrid)
		GROW(d->cw, d->cap_cw, (size_t)(end - first));
	cw = d->cw;
	for (; x < end; x++) {
		uint32_t src = x->src, dst = x->dst, a;
		uint16_t rf;

		if (ahead && x + PREFETCH_AHEAD < end) {
			const struct xfer *y = x + PREFETCH_AHEAD;

			__builtin_prefetch(&arc[off[y->src < n ? y->src : 0] + y->lane], 1);
		}
		if (near && x + PREFETCH_AHEAD < end) { /* as par_reduce_step */
			const struct xfer *y = x + PREFETCH_AHEAD;
			uint32_t ys = y->src < n ? y->src : 0, yd = y->dst < n ? y->dst : 0;
			uint64_t yb = y->block < nblocks ? y->block : 0;
			uint64_t sc = cell_in(rank, n, nblocks, ys, yb),
				 dc = cell_in(rank, n, nblocks, yd, yb);

			__builtin_prefetch(grid ? (void *)&grid[sc << gk] : (void *)&rw[sc]);
			__builtin_prefetch(grid ? (void *)&grid[dc << gk] : (void *)&rw[dc], 1);
		}
		memcpy(&rf, &x->run, sizeof(rf));
		/* the links part's (the arc's head is a node: dst < n), then
		 * the data part's ranges (no span: block < nblocks) */
		if (src >= n || src == dst || (rf & odd) || x->lane >= off[src + 1] - off[src] ||
		    arc[a = off[src] + x->lane].head != dst || x->block >= nblocks ||
		    (uint64_t)x->offset + (x->length - 1) >= SCHED_ONE || finer_parts(x, pmask))
			break;
		if (cgrid) {		     /* par_copy_step's read, verify_cgrid_write's word */
			if (x->block == dst) /* a duplicate of its own: verify_cgrid_write's */
				break;
			if (x->block != src) {
				w = part_bits(cgrid, gk, cell_in(rank, n, nblocks, src, x->block),
					      x->offset, x->offset + x->length, &mask);
				if ((*w & mask) != mask)
					break;
			}
			w = part_bits(cgrid, gk, cell_in(rank, n, nblocks, dst, x->block),
				      x->offset, x->offset + x->length, &mask);
			*cw++ = (struct cwrite){w, mask}; /* cw[x - first] */
		}
		if (arc[a].stamp != mark) { /* load_arc, its fields in locals */
			arc[a].stamp = mark;
			arc[a].load = 0;
			used[nused++] = a;
		}
		arc[a].load += x->length;
		arc[a].total += x->length;
		if (cgrid)
			continue;
		/* par_reduce_step's delivery (reduce_once) */
		uint64_t sc = cell_in(rank, n, nblocks, src, x->block);
		uint64_t dc = cell_in(rank, n, nblocks, dst, x->block);

		if (!reduce_once(d, x, grid, rw, sc, dc, gk, mark)) {
			d->read_written = true;
			c->narc_used = nused;
			return SIZE_MAX;
		}
	}
	c->narc_used = nused;
	d->ncw = cgrid ? (size_t)(cw - d->cw) : 0;
	return (size_t)(x - s->xfers);
}

/* seq_fused's all-gather writes, after the step's reads: verify_cgrid_write's
 * for the transfers it did, their words found already. The duplicates,
 * whole parts, are exact in any order. */
static void seq_writes(struct vstate *d)
{
	uint64_t dup = 0;

	for (size_t i = 0; i < d->ncw; i++) {
		uint64_t *w = d->cw[i].w, mask = d->cw[i].mask;

		if (__builtin_expect((*w & mask) != 0, 0))
			dup += popcount64(*w & mask);
		*w |= mask;
	}
	d->r->duplicate_blocks += (double)dup / (double)(1u << d->gk);
	d->ncw = 0;
}

/* Both parts on this thread, step by step: in one loop (seq_fused) up to
 * the step's first transfer that is not plain, then from it the links',
 * then the data's while the step's transfers are in cache (one read of
 * the schedule from memory, not two passes' worth). */
void verify_par_seq(struct par_job *j)
{
	struct vstate *d = &j->w[0], *c = &j->w[1];
	uint32_t T = d->s->nsteps;
	bool fuse = seq_fuses(d), ok = true;

	for (uint32_t t = 0; t < T && ok; t++) {
		if (clock_expired(d->o->clock)) {
			ok = false;
			break;
		}
		clock_progress(d->o->clock, NULL, (double)t / T);
		if (fuse && (c->from = d->from = seq_fused(c, d, t)) == SIZE_MAX)
			ok = false;
		ok = ok && par_step(c, t) && par_step(d, t);
		if (ok && fuse && d->cgrid)
			seq_writes(d);
	}
	c->from = d->from = 0;
	j->ok[1] = ok;
	j->ok[0] = ok && (j->split_final || verify_final_check(d) == 0);
}

/* A part of the inputs each (verify_init_inputs): the first touch of the
 * pages on every core, the whole pages of the part populated first in one
 * call (the kernel's faults in a batch cost half a touch of each page). */
static void par_inputs_part(void *ctx, size_t i, unsigned worker)
{
	struct par_parts *p = ctx;
	struct vstate *v = p->v;
	uint64_t lo64, hi64;

	(void)worker;
	par_part(p, i, &lo64, &hi64);
	uint32_t lo = (uint32_t)lo64, hi = (uint32_t)hi64;
	size_t entry = v->grid ? sizeof(*v->grid) << v->gk
		       : v->rw ? sizeof(*v->rw)
			       : sizeof(*v->fold.e);
	uintptr_t base = v->grid ? (uintptr_t)v->grid
			 : v->rw ? (uintptr_t)v->rw
				 : (uintptr_t)v->fold.e;
	uintptr_t page = 4096, a = base + (size_t)lo * v->nblocks * entry,
		  b = base + (size_t)hi * v->nblocks * entry;

	a = (a + page - 1) & ~(page - 1);
	b &= ~(page - 1);
#ifdef MADV_POPULATE_WRITE
	if (b > a) /* an older kernel says EINVAL: then touched as before */
		(void)madvise((void *)a, b - a, MADV_POPULATE_WRITE);
#endif
	verify_init_inputs(v, lo, hi);
}

void verify_par_inputs(struct vstate *v)
{
	struct par_parts p;

	par_parts_init(&p, v, v->n);
	parallel_for(p.np, 1, v->o->threads, par_inputs_part, &p);
}

/* Whether a transfer of step t reads a part of a block at a node where
 * one before it in the step wrote that part, by a bitmap of (node, block,
 * part) where that is at most 32 MiB (else false). Parts are the step's
 * finest of 1/2, 1/4 or 1/8 (finer, or none finer than the block: whole
 * blocks): where the data part's one pass would say no, in the grid's
 * parts; or it finds out itself. Latency-optimal Swing and recursive
 * doubling swap whole vectors every step, bandwidth-optimal Swing halves
 * of them. */
bool verify_step_reads_written(const struct schedule *s, uint32_t t)
{
	uint64_t n = s->nodes, bits, *w;
	uint32_t low = SCHED_ONE, gk, sh;
	bool hit = false;

	if (t >= s->nsteps)
		return false;
	for (size_t xi = s->step_start[t]; xi < s->step_start[t + 1]; xi++)
		low |= s->xfers[xi].offset | s->xfers[xi].length;
	gk = 31 - (uint32_t)__builtin_ctz(low);
	gk = gk > 3 ? 0 : gk;
	sh = 31 - gk;
	bits = (n * n) << gk;
	if (bits > (1ull << 28))
		return false;
	w = xcalloc(bits / 64 + 1, sizeof(*w));
	for (size_t xi = s->step_start[t]; xi < s->step_start[t + 1] && !hit; xi++) {
		const struct xfer *x = &s->xfers[xi];
		uint32_t k0 = gk ? x->offset >> sh : 0, k1 = gk ? (x->offset + x->length) >> sh : 1;

		if (x->src >= n || x->dst >= n || x->block >= n || x->offset >= SCHED_ONE ||
		    x->length - 1 >= SCHED_ONE - x->offset)
			break; /* the check says what */
		for (uint32_t k = k0; k < k1 && !hit; k++) {
			uint64_t r = (((uint64_t)x->src * n + x->block) << gk) + k;

			hit = (w[r >> 6] >> (r & 63)) & 1;
		}
		for (uint32_t k = k0; k < k1; k++) {
			uint64_t d = (((uint64_t)x->dst * n + x->block) << gk) + k;

			w[d >> 6] |= 1ull << (d & 63);
		}
	}
	free(w);
	return hit;
}
