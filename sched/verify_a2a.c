/* The verifier's all-to-all by sorting: what nodes hold and what is
 * delivered, checked by sorting events instead of a lookup per transfer.
 *
 * What a node holds of a block is keyed node * N^2 + block, and the path
 * lowering's hops are nearly all distinct keys (35.6 M of 47 M on
 * torus:32x32): a check by lookups is a cache miss per read and per
 * delivery into a table of them all (1 GiB, whose fresh pages the kernel
 * zeroes), where generation writes in order. So, as verify_reduced_a2a.c's check,
 * the transfers become 8-byte events, a read (the sender must hold the
 * piece at the start of its step; not at its origin, which always does)
 * and a write (the receiver holds it after; at the origin a duplicate,
 * counted here), emitted step by step, the step's reads before its writes,
 * into buckets by the key's high bits in emission order; each bucket is
 * sorted by the rest of the key, stable, and one pass over each key's
 * events checks its reads against the writes before them. The word is the
 * key's low bits (on top), the piece's number (piece_numbers) and the
 * transfer << 1 | write.
 *
 * By block, first: one event a transfer, keyed by its block alone, the
 * word the block's low bits, the piece's number, src, dst and step. A
 * block's events in step order are its pieces' journeys: each step's
 * reads are checked against what the senders held before it, then its
 * writes added, in a table by node of the few the block reaches (in L1,
 * stamped per block instead of cleared). Half the events of the keying
 * by node and block, so half the scattered stores and fresh pages, and
 * one radix pass where that took two (torus:32x32 paths, one thread:
 * 1.9-2.0 s of CPU where 2.7-3.4 went). When the word cannot hold src, dst and step beside a
 * full piece table, or the pieces outnumber it, by node and block.
 *
 * On N threads (verify_opts.threads, a worker from each par_least() / 2
 * transfers) the transfers are cut in N parts, at steps when keyed by
 * node and block (a step's reads go before its writes), anywhere by block
 * (a block's events are in step order all the same): each thread counts
 * and emits one part's events into its own stretch of every bucket, the
 * parts in order, so a bucket holds what one thread emits, in its order;
 * each part numbers its own pieces (the part is in the bits above the
 * number). Then all check the buckets, in chunks of about equal events
 * taken as they come free, and the step loop's remaining checks (links,
 * loads) alongside, in parts of whole steps on more than two threads
 * (a2a_loop: each part its own arcs, the steps' loads joined in step
 * order, the arcs' totals summed in integers): the emission's scattered
 * stores and first touches of fresh pages, and the sort, are most of the
 * check, and split between the cores.
 *
 * It only proves a schedule right: what a right schedule's report holds of
 * it (the duplicates, summed in fixed point: the step loop's sum of
 * multiples of 2^-31 is exact below 2^53 of them, so the same double; the
 * threads' sums are of integers, so the same in any order). On anything
 * else (a bad transfer, a read not held, a second delivery to a target, a
 * target left lacking) it says no and sched_verify checks the schedule
 * again the step loop's way, which reports the first failure as it always
 * did. */
#include "sched/verify_internal.h"

#include <stdlib.h>
#include <string.h>

#define A2A_BUCKET_EVENTS (1u << 14) /* a bucket and its scratch in L2 */
#define A2A_CHUNKS	  32	     /* of the check a worker, for the threads to share evenly */
/* By block first; bench/verify_diff also builds the verifier with 0, to
 * check the keying by node and block on its schedules (all fit by block). */
#ifndef A2A_BY_BLOCK
#define A2A_BY_BLOCK 1
#endif

/* x / d by a multiply, m = UINT64_MAX / d + 1 (2 <= d): exact for x and d
 * below 2^32, as the product's error is below x 2^-64 < 1 / d. A divide
 * per event was a fifth of the emission. */
static inline uint64_t div_by(uint64_t x, uint64_t m)
{
	return (uint64_t)(((unsigned __int128)x * m) >> 64);
}

/* Transfers x0 .. x1 - 1 (in steps t0 .. t1 - 1), counted and emitted
 * by one thread. */
struct a2a_half {
	uint32_t t0, t1;
	size_t x0, x1;
	size_t *at;   /* per bucket: its events here, then where the next goes */
	uint64_t dup; /* delivered to the origin */
	bool ok;
	bool numbered; /* every piece numbered (none past num.max) */
	struct piece_numbers num;
};

/* What one thread's chunks of the check found. */
struct a2a_worker {
	uint64_t *tmp;	       /* the sort's scratch */
	struct piecemap lists; /* the keys in several pieces at a time */
	uint64_t dup, complete;
	bool ok;
	/* By block: what each node holds of the block at hand, stamped */
	struct piece *held;
	uint32_t *stamp, now;
};

struct a2a_job {
	struct vstate *v;
	bool one;		   /* an event a transfer, keyed by block */
	uint64_t mn, mnb;	   /* x / n and x / nblocks by div_by */
	unsigned shift, xbits, pw; /* bits: the key's low, below the piece, a piece number's */
	unsigned nbits, sbits;	   /* by block: a node's, a step's */
	size_t nb;
	bool count, check; /* the pass counts (else emits); checks the transfers */
	uint64_t *ev;
	size_t *start; /* bucket b's events at [start[b], start[b + 1]) */
	struct a2a_half *half;
	unsigned nhalves, hbits; /* the parts, and their bits above a piece's number */
	bool numbered;
	size_t most;   /* events in the largest bucket */
	size_t *chunk; /* of buckets */
	unsigned nchunks;
	unsigned loop; /* the step loop's parts: the check's items 0 .. loop - 1 */
	struct a2a_loop *loops;
	int loop_rc;
	struct a2a_worker w[PARALLEL_MAX];
};

/* Half i's events, counted or emitted. */
static void a2a_emit(void *ctx, size_t i, unsigned worker)
{
	struct a2a_job *job = ctx;
	struct a2a_half *h = &job->half[i];
	const struct vstate *v = job->v;
	const struct schedule *s = v->s;
	uint32_t n = v->n, plo = 0, plen = 0;
	uint64_t pno = 0, top = (uint64_t)i << job->pw;
	unsigned shift = job->shift, xbits = job->xbits;
	bool numbered = true;

	(void)worker;
	for (uint32_t t = h->t0; t < h->t1 && h->ok; t++)
		for (int write = 0; write < 2 - job->one && h->ok; write++)
			for (size_t xi = s->step_start[t] > h->x0 ? s->step_start[t] : h->x0;
			     xi < s->step_start[t + 1] && xi < h->x1; xi++) {
				const struct xfer *x = &s->xfers[xi];

				uint32_t u = write ? x->dst : x->src;
				uint32_t o = (uint32_t)div_by(x->block, job->mn);

				/* What the step loop rejects: left to it. */
				if (job->check &&
				    (x->src >= n || x->dst >= n || x->src == x->dst ||
				     x->block >= v->nblocks || !x->length ||
				     x->offset >= SCHED_ONE ||
				     (uint64_t)x->offset + x->length > SCHED_ONE ||
				     x->block - o * n == o || xfer_op(x) == XFER_REDUCE ||
				     xfer_blocks(x) > 1)) {
					h->ok = false;
					break;
				}
				uint64_t key, w;

				if (job->one) {
					if (x->dst == o && job->check)
						h->dup += x->length;
					key = x->block;
					w = (uint64_t)x->src << job->nbits | x->dst;
					w = w << job->sbits | t;
				} else if (u == o) { /* the origin */
					if (write && job->check)
						h->dup += x->length;
					continue;
				} else {
					key = (uint64_t)u * v->nblocks + x->block;
					w = (uint64_t)xi << 1 | (uint64_t)write;
				}
				size_t b = (size_t)(key >> shift);
				if (job->count) {
					h->at[b]++;
					continue;
				}
				if (numbered) {
					/* runs of one piece: the last's number */
					if (x->offset != plo || x->length != plen) {
						plo = x->offset;
						plen = x->length;
						pno = piece_number(&h->num, plo, plo + plen);
						numbered = h->num.n > 0;
					}
					w |= (top | pno) << xbits;
				}
				if (shift)
					w |= key << (64 - shift);
				job->ev[h->at[b]++] = w;
			}
	if (!job->count)
		h->numbered = numbered;
}

/* By block: what node u holds of the block at hand (none when stale). */
static inline struct piece *a2a_held(struct a2a_worker *wk, uint32_t u)
{
	if (wk->stamp[u] != wk->now) {
		wk->stamp[u] = wk->now;
		wk->held[u] = (struct piece){0};
	}
	return &wk->held[u];
}

/* By block, events e[i .. j) of one block in step order: each step's
 * reads against what the senders held before it, then its writes. */
static void a2a_block(struct a2a_job *job, struct a2a_worker *wk, const uint64_t *e, size_t i,
		      size_t j, uint64_t block)
{
	struct vstate *v = job->v;
	uint32_t n = v->n, o = (uint32_t)div_by(block, job->mn);
	uint32_t target = (uint32_t)(block - (uint64_t)o * n), sb = job->sbits, nb = job->nbits;
	uint64_t smask = (1ull << sb) - 1, nmask = (1ull << nb) - 1, pmask = (1ull << job->pw) - 1;

	if (!wk->held) {
		wk->held = xmalloc(n * sizeof(*wk->held));
		wk->stamp = xcalloc(n, sizeof(*wk->stamp));
	}
	if (++wk->now == 0) { /* wrapped: every stamp stale again */
		memset(wk->stamp, 0, n * sizeof(*wk->stamp));
		wk->now = 1;
	}
	for (size_t k = i, g; wk->ok && k < j; k = g) {
		uint64_t step = e[k] & smask;

		for (g = k + 1; g < j && (e[g] & smask) == step; g++)
			;
		for (int write = 0; write < 2 && wk->ok; write++)
			for (size_t q = k; q < g; q++) {
				uint64_t f = e[q] >> job->xbits;
				const struct piece *p =
				    &job->half[(f >> job->pw) & ((1u << job->hbits) - 1)]
					 .num.piece[f & pmask];
				uint32_t u = (uint32_t)((e[q] >> (sb + (write ? 0 : nb))) & nmask);

				if (u == o)
					continue;
				struct piece *held = a2a_held(wk, u);

				/* One piece held, or none, inline: nearly all. */
				if (!write) {
					bool has =
					    held->lo != PIECE_LIST
						? held->lo <= p->lo && p->hi <= held->hi
						: piece_covers(&wk->lists, held, p->lo, p->hi);
					if (!has) {
						wk->ok = false;
						break;
					}
					continue;
				}
				if (held->lo == held->hi) {
					*held = *p;
					continue;
				}
				uint64_t ov = piece_add(&wk->lists, held, p->lo, p->hi);

				if (ov && u == target) {
					wk->ok = false;
					break;
				}
				wk->dup += ov;
			}
	}
	if (wk->ok && required(v, o, target) &&
	    piece_covers(&wk->lists, a2a_held(wk, target), 0, SCHED_ONE))
		wk->complete++;
	/* Lists of this block's pieces: freed, their slots from 0 again. */
	for (size_t k = 0; k < wk->lists.nlists; k++) {
		free(wk->lists.lists[k].v);
		wk->lists.lists[k] = (struct seglist){0};
	}
	wk->lists.nlists = 0;
}

/* A part of the step loop on more than two threads: steps t0 .. t1 - 1
 * on a copy of the check's state with arcs of its own (its loads per step
 * in the job's array, par_load, as verify_par's links part). */
struct a2a_loop {
	struct vstate v;
	struct verify_report r;
	uint32_t t0, t1;
	int rc;
};

static void a2a_loop_run(struct a2a_loop *lp)
{
	struct vstate *v = &lp->v;

	for (uint32_t t = lp->t0; t < lp->t1 && lp->rc == 0; t++) {
		if (verify_read_phase(v, t) < 0 || verify_write_phase(v, t) < 0)
			lp->rc = -1;
		else
			verify_step_loads(v, t);
	}
}

/* One item of the check on the worker's scratch: the step loop or a part
 * of it (items 0 .. job->loop - 1), or a chunk of buckets. */
static void a2a_check(void *ctx, size_t item, unsigned worker)
{
	struct a2a_job *job = ctx;
	struct a2a_worker *wk = &job->w[worker];
	struct vstate *v = job->v;
	const struct schedule *s = v->s;
	uint32_t n = v->n;
	uint64_t maxkey = (uint64_t)n * v->nblocks;
	unsigned shift = job->shift, xbits = job->xbits;
	uint64_t xmask = (1ull << xbits) - 1, pmask = (1ull << job->pw) - 1;

	if (item < job->loop) {
		if (job->loops)
			a2a_loop_run(&job->loops[item]);
		else
			job->loop_rc = verify_run_steps(v);
		return;
	}
	item -= job->loop;
	if (!wk->tmp)
		wk->tmp = xmalloc(job->most * sizeof(*wk->tmp));
	for (size_t b = job->chunk[item]; wk->ok && b < job->chunk[item + 1]; b++) {
		size_t m = job->start[b + 1] - job->start[b];
		const uint64_t *e = sched_sort_top(job->ev + job->start[b], wk->tmp, m, shift);

		for (size_t i = 0, j, ahead = 0; wk->ok && i < m; i = j) {
			uint64_t low = shift ? e[i] >> (64 - shift) : 0;

			for (j = i + 1; j < m && (shift ? e[j] >> (64 - shift) : 0) == low; j++)
				;
			if (job->one) {
				a2a_block(job, wk, e, i, j, (uint64_t)b << shift | low);
				continue;
			}
			/* unnumbered pieces: the transfers some events on, a
			 * cache miss each */
			for (; !job->numbered && ahead < j + 16 && ahead < m; ahead++)
				__builtin_prefetch(&s->xfers[(size_t)(e[ahead] & xmask) >> 1]);
			uint64_t key = (uint64_t)b << shift | low;
			uint32_t node = (uint32_t)(maxkey <= (1ull << 32) ? div_by(key, job->mnb)
									  : key / v->nblocks);
			uint64_t block = key - (uint64_t)node * v->nblocks;
			uint32_t o = (uint32_t)div_by(block, job->mn);
			bool at_target = block - (uint64_t)o * n == node;
			struct piece p = {0};

			for (size_t k = i; k < j; k++) {
				size_t xi = (size_t)(e[k] & xmask) >> 1;
				uint32_t lo, hi;

				if (job->numbered) {
					uint64_t f = e[k] >> xbits;
					const struct piece *q =
					    &job->half[(f >> job->pw) & ((1u << job->hbits) - 1)]
						 .num.piece[f & pmask];

					lo = q->lo;
					hi = q->hi;
				} else {
					lo = s->xfers[xi].offset;
					hi = lo + s->xfers[xi].length;
				}
				if (!(e[k] & 1)) {
					if (!piece_covers(&wk->lists, &p, lo, hi))
						wk->ok = false;
				} else {
					uint64_t ov = piece_add(&wk->lists, &p, lo, hi);

					if (ov && at_target)
						wk->ok = false;
					wk->dup += ov;
				}
				if (!wk->ok)
					break;
			}
			if (at_target && required(v, o, node) &&
			    piece_covers(&wk->lists, &p, 0, SCHED_ONE))
				wk->complete++;
			piece_clear(&wk->lists, &p);
			wk->lists.nlists = 0;
		}
	}
}

/* The transfer where part p of np begins: the p-th np-th of them, moved
 * to the start of its step when a step must stay whole (by node and
 * block: a step's reads go before its writes). */
static size_t a2a_part_at(const struct schedule *s, size_t p, size_t np, bool whole)
{
	size_t x = (size_t)((unsigned __int128)s->nxfers * p / np);
	uint32_t lo = 0, hi = s->nsteps;

	if (!whole || p == 0 || p == np)
		return x;
	while (lo + 1 < hi) { /* the last step starting at or before x */
		uint32_t mid = lo + (hi - lo) / 2;

		if (s->step_start[mid] <= x)
			lo = mid;
		else
			hi = mid;
	}
	/* the nearer of its start and its end */
	return x - s->step_start[lo] <= s->step_start[lo + 1] - x ? s->step_start[lo]
								  : s->step_start[lo + 1];
}

/* The step holding transfer x (x < nxfers), from step t on. */
static uint32_t a2a_step_of(const struct schedule *s, size_t x, uint32_t t)
{
	while (t + 1 < s->nsteps && s->step_start[t + 1] <= x)
		t++;
	return t;
}

/* The emission in parts, one a worker, when each part has as many piece
 * numbers as one thread's (fewer parts else). */
static void a2a_halves(struct a2a_job *job, const struct schedule *s, unsigned workers,
		       unsigned pbits, size_t nb)
{
	unsigned np = workers, hbits = 0;

	if (s->nsteps < 2 && !job->one)
		np = 1;
	for (;;) {
		for (hbits = 0; (1u << hbits) < np; hbits++)
			;
		if (np == 1 || pbits >= SCHED_PIECE_BITS - 1 + hbits)
			break;
		np = np / 2 > 0 ? np / 2 : 1;
	}
	job->nhalves = np;
	job->hbits = hbits;
	job->half = xcalloc(np, sizeof(*job->half));
	for (unsigned h = 0, t = 0; h < np; h++) {
		struct a2a_half *p = &job->half[h];

		p->x0 = a2a_part_at(s, h, np, !job->one);
		p->x1 = a2a_part_at(s, h + 1, np, !job->one);
		p->t0 = p->x0 < s->nxfers ? a2a_step_of(s, p->x0, t) : s->nsteps;
		p->t1 = p->x1 > p->x0 ? a2a_step_of(s, p->x1 - 1, p->t0) + 1 : p->t0;
		t = p->t0 < s->nsteps ? p->t0 : 0;
		p->ok = true;
		p->numbered = true;
		p->at = xcalloc(nb + 1, sizeof(size_t));
		piece_numbers_init(&p->num, pbits - hbits);
	}
	job->pw = (unsigned)__builtin_ctz(job->half[0].num.max);
}

static bool halves_ok(const struct a2a_job *job)
{
	bool ok = true;

	for (unsigned h = 0; h < job->nhalves; h++)
		ok = ok && job->half[h].ok;
	return ok;
}

/* The events, bucketed: counted first (bucket by bucket, each part's
 * stretch in turn), then emitted; one bucket on one thread needs no
 * counting. False when a transfer is wrong. */
static bool a2a_events(struct a2a_job *job, const struct schedule *s, unsigned workers)
{
	size_t nb = job->nb;
	bool counted = nb > 1 || job->nhalves > 1;

	if (counted) {
		job->count = job->check = true;
		parallel_for(job->nhalves, 1, workers, a2a_emit, job);
		if (!halves_ok(job))
			return false;
		size_t at = 0;

		for (size_t b = 0; b < nb; b++) {
			job->start[b] = at;
			for (unsigned h = 0; h < job->nhalves; h++) {
				size_t c = job->half[h].at[b];

				job->half[h].at[b] = at;
				at += c;
			}
		}
		job->start[nb] = at;
		job->ev = xmalloc((at ? at : 1) * sizeof(*job->ev));
	} else {
		job->ev = xmalloc((2 * s->nxfers + 1) * sizeof(*job->ev));
	}
	job->count = false;
	job->check = !counted;
	parallel_for(job->nhalves, 1, workers, a2a_emit, job);
	if (!halves_ok(job))
		return false;
	if (!counted)
		job->start[1] = job->half[0].at[0];
	return true;
}

/* The step loop in parts of whole steps, about equal in transfers, when
 * more than two threads check (on two it is one item beside the
 * buckets, as it always was): each part's state a copy of v's with arcs
 * of its own; a graph's direct-connect check alone (no WDM, no network:
 * their state runs from step to step). */
static void a2a_loops_init(struct a2a_job *job, struct vstate *v, unsigned workers)
{
	const struct schedule *s = v->s;
	const struct graph *g = v->o->graph;
	unsigned np = workers < s->nsteps ? workers : s->nsteps;

	job->loop = 1;
	if (workers <= 2 || np < 2 || !g || v->o->wdm || v->net)
		return;
	job->loop = np;
	job->loops = xcalloc(np, sizeof(*job->loops));
	v->par_load = xcalloc((size_t)s->nsteps + 1, sizeof(double));
	for (unsigned p = 0; p < np; p++) {
		struct a2a_loop *lp = &job->loops[p];

		lp->t0 = p ? job->loops[p - 1].t1 : 0;
		lp->t1 = p + 1 == np ? s->nsteps
				     : a2a_step_of(s, a2a_part_at(s, p + 1, np, true), lp->t0);
		if (lp->t1 < lp->t0)
			lp->t1 = lp->t0;
		lp->v = *v;
		lp->v.r = &lp->r;
		lp->r = *v->r;
		lp->v.par = PAR_CHECKS;
		lp->v.arc = xcalloc((size_t)g->m + 1, sizeof(*lp->v.arc));
		for (uint32_t a = 0; a < g->m; a++)
			lp->v.arc[a].head = g->adj[a];
		lp->v.arc_used = xmalloc(((size_t)g->m + 1) * sizeof(uint32_t));
		lp->v.narc_used = 0;
	}
}

/* The step loop's parts joined when each passed: the steps' loads in
 * step order (the one loop's sums), the arcs' totals (integers) summed
 * into v's; 0, or -1 when one did not (the caller runs the one loop then,
 * for its report). */
static int a2a_loops_join(struct a2a_job *job, struct vstate *v)
{
	const struct schedule *s = v->s;
	const struct graph *g = v->o->graph;

	for (unsigned p = 0; p < job->loop; p++)
		if (job->loops[p].rc < 0)
			return -1;
	for (uint32_t t = 0; t < s->nsteps; t++) {
		double load = v->par_load[t];

		if (v->o->step_link_load)
			v->o->step_link_load[t] = load;
		v->r->sum_max_link_load += load;
		if (load > v->r->max_link_load)
			v->r->max_link_load = load;
	}
	for (unsigned p = 0; p < job->loop; p++)
		for (uint32_t a = 0; a < g->m; a++)
			v->arc[a].total += job->loops[p].v.arc[a].total;
	verify_total_loads(v);
	return 0;
}

/* Check the buckets in chunks of about equal events, the step loop
 * alongside (off the caller's thread perhaps: not with a clock, whose
 * progress is the caller's to report). Its step loads go to mine's array,
 * copied to the caller's only when all is right: a wrong schedule's check
 * from the start leaves the steps after its error as they were. */
static bool a2a_buckets(struct a2a_job *job, struct vstate *v, struct verify_opts *mine,
			unsigned workers, uint64_t *dup, uint64_t *complete)
{
	const struct schedule *s = v->s;
	const struct verify_opts *caller = v->o;
	size_t nb = job->nb, total = job->start[nb], b = 0;
	bool ok = true;

	job->most = 1;
	for (b = 0; b < nb; b++)
		if (job->start[b + 1] - job->start[b] > job->most)
			job->most = job->start[b + 1] - job->start[b];
	job->nchunks = workers > 1 ? A2A_CHUNKS * (workers > 2 ? workers : 2) : 1;
	job->chunk = xcalloc((size_t)job->nchunks + 1, sizeof(size_t));
	b = 0;
	for (unsigned c = 1; c < job->nchunks; c++) {
		while (b < nb && job->start[b] < total / job->nchunks * c)
			b++;
		job->chunk[c] = b;
	}
	job->chunk[job->nchunks] = nb;
	job->loop = 0;
	if (workers > 1 && !caller->clock)
		a2a_loops_init(job, v, workers);
	if (job->loop == 1 && caller->step_link_load) {
		mine->step_link_load = xcalloc(s->nsteps + 1, sizeof(double));
		v->o = mine;
	}
	for (unsigned w = 0; w < workers; w++)
		job->w[w].ok = true;
	parallel_for(job->loop + job->nchunks, 1, workers, a2a_check, job);
	v->o = caller;
	for (unsigned w = 0; w < workers; w++) {
		ok = ok && job->w[w].ok;
		*dup += job->w[w].dup;
		*complete += job->w[w].complete;
	}
	if (ok && job->loops)
		job->loop_rc = a2a_loops_join(job, v) < 0 ? verify_run_steps(v) : 0;
	return ok;
}

static void a2a_job_free(struct a2a_job *job, struct vstate *v)
{
	for (unsigned w = 0; w < PARALLEL_MAX; w++) {
		free(job->w[w].tmp);
		free(job->w[w].held);
		free(job->w[w].stamp);
		piecemap_free(&job->w[w].lists);
	}
	for (unsigned h = 0; h < job->nhalves; h++)
		free(job->half[h].at);
	for (unsigned p = 0; job->loops && p < job->loop; p++) {
		free(job->loops[p].v.arc);
		free(job->loops[p].v.arc_used);
	}
	if (job->loops) {
		free(v->par_load);
		v->par_load = NULL;
	}
	free(job->loops);
	free(job->half);
	free(job->chunk);
	free(job->ev);
	free(job->start);
	free(job);
}

/* One check by sorting, by block (one) or by node and block: 0 right,
 * -1 not, 1 not by block after all (its bits or piece numbers short). */
/* The threads the check takes: a worker from each par_least() / 2
 * transfers (two from par_least(), as it always was), up to threads. */
static unsigned a2a_workers(const struct vstate *v, unsigned threads)
{
	size_t each = par_least(v->o) / 2 ? par_least(v->o) / 2 : 1;

	return parallel_workers(v->s->nxfers / each, 1, threads);
}

static int a2a_pass(struct vstate *v, bool one)
{
	const struct schedule *s = v->s;
	uint32_t n = v->n;
	uint64_t maxkey = one ? v->nblocks : (uint64_t)n * v->nblocks, dup = 0, complete = 0,
		 parts = n;
	unsigned keybits = 64 - (unsigned)__builtin_clzll(maxkey - 1), bbits = 0;
	unsigned nbits = 64 - (unsigned)__builtin_clzll(n - 1);
	unsigned sbits = s->nsteps > 1 ? 64 - (unsigned)__builtin_clzll(s->nsteps - 1) : 1;
	unsigned threads = check_threads(v->o);
	const struct verify_opts *caller = v->o;
	struct verify_opts mine = *caller; /* the step loop's alongside */

	/* As many buckets as fill L2 on average, and enough that the low
	 * bits fit 32 bits. */
	while (bbits < keybits && (((size_t)(2 - one) * s->nxfers >> bbits) > A2A_BUCKET_EVENTS ||
				   keybits - bbits > 32))
		bbits++;
	unsigned shift = keybits - bbits;
	unsigned xbits = s->nxfers > 1 ? 65 - (unsigned)__builtin_clzll(s->nxfers - 1) : 1;
	if (one)
		xbits = 2 * nbits + sbits; /* src, dst, step */
	if (shift + xbits + (one ? SCHED_PIECE_BITS : 0) > 64)
		return one ? 1 : -1;
	unsigned pbits = 64 - shift - xbits;
	struct a2a_job *job = xcalloc(1, sizeof(*job));
	size_t nb = (size_t)((maxkey - 1) >> shift) + 1;
	bool ok, fallback = false;
	unsigned workers = a2a_workers(v, threads);

	/* (field by field: the piece tables make the job 200 KB, too
	 * large for a compound literal on the stack) */
	job->v = v;
	job->one = one;
	job->nbits = nbits;
	job->sbits = sbits;
	job->mn = UINT64_MAX / n + 1;
	job->mnb = UINT64_MAX / v->nblocks + 1;
	job->shift = shift;
	job->xbits = xbits;
	job->nb = nb;
	job->start = xcalloc(nb + 1, sizeof(size_t));
	a2a_halves(job, s, workers, pbits, nb);
	ok = a2a_events(job, s, workers);
	if (ok) {
		job->numbered = true;
		for (unsigned h = 0; h < job->nhalves; h++)
			job->numbered = job->numbered && job->half[h].numbered;
		/* by block only numbered */
		fallback = one && !job->numbered;
	}
	if (ok && !fallback)
		ok = a2a_buckets(job, v, &mine, workers, &dup, &complete);
	for (unsigned h = 0; h < job->nhalves; h++)
		dup += job->half[h].dup;
	if (v->term)
		parts = v->nterm;
	ok = ok && complete == (v->o->block_weight ? v->nrequired : parts * (parts - 1)) &&
	     dup < (1ull << 53);
	if (ok)
		v->r->duplicate_blocks = (double)dup / SCHED_ONE;

	bool looped = job->loop;
	int rc = ok ? 0 : -1;
	if (ok && looped)
		rc = job->loop_rc;
	if (mine.step_link_load != caller->step_link_load) {
		if (rc == 0)
			memcpy(caller->step_link_load, mine.step_link_load,
			       s->nsteps * sizeof(double));
		free(mine.step_link_load);
	}
	a2a_job_free(job, v);
	if (fallback)
		return 1;
	return ok && !looped ? verify_run_steps(v) : rc;
}

/* The all-to-all's holdings by sorting, then (or alongside) the step
 * loop for the rest. */
int verify_a2a_sorted(struct vstate *v)
{
	int rc = A2A_BY_BLOCK ? a2a_pass(v, true) : 1;

	return rc > 0 ? a2a_pass(v, false) : rc;
}
