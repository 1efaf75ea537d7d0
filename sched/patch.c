/* Degraded schedules kept as structure (see sched.h, struct sched_patch):
 * the healthy reduced schedule with the programs of a region's nodes
 * replaced, checked without expansion (its expansion: patch_expand.c).
 *
 * The check reads every transfer as an allgather's: the node that owns it
 * receives block `blk` from `send` at time `tau`. A copy is that as it
 * stands (time: the step within the copy phase, from 1). A reduction u ->
 * x of shard k at step s is, run backwards on the transposed graph, x
 * handing u shard k at time S - s (S: the reduction phase's steps), which
 * is Cor. 3.1 of Zhao et al. read the other way: the reduction is right
 * exactly when that allgather is. "x holds k at time h" is then: x has all
 * of k after time h (0: its own block from the start). */
#include "sched/patch_check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The failed hosts of p as one byte per node (n), or NULL when none. */
uint8_t *absent_map(const struct sched_patch *p, uint32_t n)
{
	uint8_t *abs = p->nabsent ? xcalloc(n, 1) : NULL;

	for (uint32_t i = 0; i < p->nabsent; i++)
		if (p->absent[i] < n)
			abs[p->absent[i]] = 1;
	return abs;
}

/* ---- the check ---------------------------------------------------------------------- */

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* c->ghi for pc_sub and pc_add (patch_check.h): the group's word form,
 * where it has one. */
void pcheck_group_fields(struct pcheck *c)
{
	c->ghi = sched_group_high(&c->r->group);
}

/* The base program: node 0's, each phase in its steps; its tables. */
static int base_tables(struct pcheck *c)
{
	const struct schedule *b = &c->r->prog;
	const struct sched_group *G = &c->r->group;

	c->S = b->nsteps;
	for (uint32_t t = 0; t < b->nsteps && c->S == b->nsteps; t++)
		for (size_t i = b->step_start[t]; i < b->step_start[t] + sched_step_size(b, t); i++)
			if (phase_of(&b->xfers[i]) == 0) {
				c->S = t;
				break;
			}
	c->hb[0] = xcalloc(c->n, sizeof(uint32_t));
	c->hb[1] = xcalloc(c->n, sizeof(uint32_t));
	kmap_init(&c->minsend, b->nxfers);
	c->ports = xmalloc((b->nxfers + 1) * sizeof(uint64_t));
	for (uint32_t t = 0; t < b->nsteps; t++)
		for (size_t i = b->step_start[t]; i < b->step_start[t] + sched_step_size(b, t);
		     i++) {
			const struct xfer *x = &b->xfers[i];
			uint32_t ph = phase_of(x), o = xfer_owner(x), tt;

			if (o != 0 || xfer_blocks(x) != 1 || x->run || x->block >= c->n ||
			    (ph == 1) != (t < c->S))
				return pfail(
				    c, t,
				    "the base program is not node 0's own, one block a "
				    "transfer, reductions before copies: no patch applies");
			tt = tau(c, x, t);
			if (tt > c->hb[ph][x->block])
				c->hb[ph][x->block] = tt;
			uint32_t *m = kmap_put(
			    &c->minsend, key3(ph, sched_group_sub(G, sender(x), o), x->block), tt);
			if (tt < *m)
				*m = tt;
			c->ports[i] =
			    key3(ph, sched_group_sub(G, x->src, o), x->lane) << 16 | x->block;
		}
	qsort(c->ports, b->nxfers, sizeof(uint64_t), cmp_u64);
	c->bstep = xmalloc((b->nxfers + 1) * sizeof(uint32_t));
	for (uint32_t t = 0; t < b->nsteps; t++)
		for (size_t i = b->step_start[t]; i < b->step_start[t + 1]; i++)
			c->bstep[i] = t;
	c->bstart = xcalloc((size_t)2 * c->n + 2, sizeof(uint32_t));
	c->bidx = xmalloc((b->nxfers + 1) * sizeof(uint32_t));
	for (size_t i = 0; i < b->nxfers; i++)
		c->bstart[phase_of(&b->xfers[i]) * c->n + b->xfers[i].block + 2]++;
	for (uint32_t k = 0; k < 2 * c->n; k++)
		c->bstart[k + 2] += c->bstart[k + 1];
	for (size_t i = 0; i < b->nxfers; i++)
		c->bidx[c->bstart[phase_of(&b->xfers[i]) * c->n + b->xfers[i].block + 1]++] =
		    (uint32_t)i;
	return 0;
}

/* What a patch transfer is checked against on its own, copied out of
 * struct pcheck for the loop that counts the pieces: kept in registers
 * there, where each field read through c again cost a load a test. */
struct xcheck {
	uint32_t n, S;
	const uint8_t *abs;
	const uint32_t *off, *adj;
	const bool *gone;
};

static struct xcheck xcheck_of(const struct pcheck *c)
{
	return (struct xcheck){.n = c->n,
			       .S = c->S,
			       .abs = c->abs,
			       .off = c->g->off,
			       .adj = c->g->adj,
			       .gone = c->gone};
}

/* Why patch transfer x (at step t) is refused on its own, or 0: its
 * ranges, its phase, no failed host's, over an arc of its port that has
 * not failed. Inline in the pass that counts the pieces, where a call
 * that could also say why was a tenth of the check's instructions. */
static inline int xfer_why(const struct xcheck *v, uint32_t t, const struct xfer *x)
{
	/* each test a flag, one branch for all: the range is refused once in a
	 * patch, and a branch each was a third of the pass's instructions */
	if ((x->src >= v->n) | (x->dst >= v->n) | (x->block >= v->n) |
	    ((x->run | (x->flags >> XFER_SPAN_SHIFT)) != 0) | (x->length - 1 >= SCHED_ONE) |
	    ((uint64_t)x->offset + x->length > SCHED_ONE))
		return 1;
	if ((phase_of(x) == 1) != (t < v->S))
		return 2;
	if (v->abs && (v->abs[x->block] || v->abs[xfer_owner(x)]))
		return 3;
	uint32_t a = v->off[x->src] + x->lane;
	if (x->lane >= v->off[x->src + 1] - v->off[x->src] || v->adj[a] != x->dst)
		return 4;
	return v->gone[a] ? 5 : 0;
}

/* Patch transfer i (at step t) on its own (xfer_why): the reason said
 * where it is refused (the threads look, one says). */
static int xfer_one(struct pcheck *c, uint32_t t, size_t i)
{
	const struct xfer *x = &c->p->prog.xfers[i];
	struct xcheck v = xcheck_of(c);
	int why = xfer_why(&v, t, x);

	if (!why)
		return 0;
	if (why == 1)
		return pfail(c, t, "patch transfer %zu is out of range", i);
	if (why == 2)
		return pfail(c, t, "patch transfer %zu is in the other phase's steps", i);
	if (why == 3)
		return pfail(c, t, "patch transfer %zu: node %u %s block %u of failed host %u", i,
			     xfer_owner(x), phase_of(x) ? "reduces" : "receives", x->block,
			     c->abs[x->block] ? x->block : xfer_owner(x));
	if (why == 4)
		return pfail(c, t, "patch transfer %zu: %u's port %u does not lead to %u", i,
			     x->src, x->lane, x->dst);
	return pfail(c, t, "patch transfer %zu: the arc %u -> %u has failed", i, x->src, x->dst);
}

/* A region node's pieces of one block: (block, offset), end, time. */
struct pkey {
	uint64_t key;
	uint32_t end, tau;
};

/* A bucket's first fault in covering its blocks, found on a worker and
 * said after in bucket order (the same reason whatever the threads). */
enum { FAULT_TWICE = 1, FAULT_GAP, FAULT_OWN, FAULT_COUNT, FAULT_GAP_END };
struct cover_faults {
	uint8_t *why; /* per bucket: 0 fine, else a FAULT_ */
	uint32_t *at_block, *at_off;
};

static void faults_init(struct cover_faults *f, size_t nb)
{
	f->why = xcalloc(nb, 1);
	f->at_block = xcalloc(nb, sizeof(uint32_t));
	f->at_off = xcalloc(nb, sizeof(uint32_t));
}

static void faults_free(struct cover_faults *f)
{
	free(f->why);
	free(f->at_block);
	free(f->at_off);
}

static void fault_first(struct cover_faults *f, size_t b, uint8_t why, uint32_t o, uint32_t off)
{
	if (!f->why[b]) {
		f->why[b] = why;
		f->at_block[b] = o;
		f->at_off[b] = off;
	}
}

/* Bucket b's fault, of node u, said (-1), else 0. */
static int fault_say(struct pcheck *c, const struct cover_faults *f, size_t b, uint32_t u)
{
	uint32_t o = f->at_block[b];

	switch (f->why[b]) {
	case FAULT_TWICE:
	case FAULT_GAP:
		return pfail(c, 0, "node %u: block %u %s at %u / %u", u, o,
			     f->why[b] == FAULT_TWICE ? "received twice" : "has a gap",
			     f->at_off[b], SCHED_ONE);
	case FAULT_OWN:
		return pfail(c, 0, "node %u receives its own block", u);
	case FAULT_COUNT:
		return pfail(c, 0, "node %u: %u of the %u blocks it needs in a phase", u, o,
			     c->need);
	case FAULT_GAP_END:
		return pfail(c, 0, "node %u: block %u has a gap at the end", u, o);
	}
	return 0;
}

/* Per program (phase, region node), bucket b = ph * nregion + i. */
struct cover {
	struct pcheck *c;
	struct pkey *k;
	size_t *start; /* 2 nregion + 1 */
	struct cover_faults f;
	uint32_t **count;  /* per worker: n + 1 */
	struct pkey **tmp; /* per worker: the largest program */
};

/* One program's pieces by block (a counting sort: most blocks come in one
 * or two pieces, put in order of offset by insertion). */
static void cover_one(void *arg, size_t b, unsigned wid)
{
	struct cover *cv = arg;
	struct pcheck *c = cv->c;
	uint32_t nr = c->p->nregion, ph = (uint32_t)(b / nr), u = c->p->region[b % nr];
	struct pkey *k = cv->k + cv->start[b];
	size_t m = cv->start[b + 1] - cv->start[b];
	uint32_t *hold = c->hold + b * c->n, *at = cv->count[wid], blocks = 0;
	struct pkey *by = cv->tmp[wid];
	bool present = ph ? c->S > 0 : c->S < c->r->prog.nsteps;

	if (!present)
		return;
	memset(at, 0, ((size_t)c->n + 1) * sizeof(uint32_t));
	for (size_t i = 0; i < m; i++)
		at[(k[i].key >> 32) + 1]++;
	for (uint32_t o = 0; o < c->n; o++)
		at[o + 1] += at[o];
	for (size_t i = 0; i < m; i++)
		by[at[k[i].key >> 32]++] = k[i];
	/* at[o] is now where block o's pieces end */
	for (uint32_t o = 0, lo = 0; o < c->n && !cv->f.why[b]; lo = at[o++]) {
		uint32_t hi = at[o], pos = 0, h = 0;

		if (lo == hi)
			continue;
		for (uint32_t i = lo + 1; i < hi; i++) /* by offset */
			for (uint32_t j = i; j > lo && by[j].key < by[j - 1].key; j--) {
				struct pkey tmp = by[j];

				by[j] = by[j - 1];
				by[j - 1] = tmp;
			}
		for (uint32_t i = lo; i < hi; i++) {
			uint32_t off = (uint32_t)by[i].key;

			if (off != pos)
				fault_first(&cv->f, b, off < pos ? FAULT_TWICE : FAULT_GAP, o, off);
			pos = by[i].end;
			h = by[i].tau > h ? by[i].tau : h;
		}
		if (pos != SCHED_ONE)
			fault_first(&cv->f, b, FAULT_GAP, o, pos);
		if (o == u)
			fault_first(&cv->f, b, FAULT_OWN, o, 0);
		hold[o] = h;
		blocks++;
	}
	if (blocks != c->need)
		fault_first(&cv->f, b, FAULT_COUNT, blocks, 0);
}

/* A region node's pieces of each block cover it once, and when it holds
 * each; one program at a time, on every core. */
static int patch_cover(struct pcheck *c)
{
	const struct schedule *q = &c->p->prog;
	uint32_t nr = c->p->nregion;
	size_t nb = (size_t)c->nph * nr;
	struct cover cv = {.c = c};
	int rc = 0;

	if (!nr)
		return 0;
	cv.k = xmalloc((q->nxfers + 1) * sizeof(*cv.k));
	cv.start = xcalloc(nb + 2, sizeof(size_t));
	faults_init(&cv.f, nb);
	c->hold = xcalloc(nb * c->n, sizeof(uint32_t));
	for (size_t i = c->xlo; i < q->nxfers; i++) {
		const struct xfer *x = &q->xfers[i];

		if (c->inr[xfer_owner(x)])
			cv.start[phase_of(x) * nr + c->ridx[xfer_owner(x)] + 2]++;
	}
	for (size_t b = 0; b < nb; b++)
		cv.start[b + 2] += cv.start[b + 1];
	for (uint32_t t = c->nph == 2 ? 0 : c->S; t < q->nsteps; t++)
		for (size_t i = q->step_start[t]; i < q->step_start[t] + sched_step_size(q, t);
		     i++) {
			const struct xfer *x = &q->xfers[i];

			if (!c->inr[xfer_owner(x)])
				continue;
			size_t at = cv.start[phase_of(x) * nr + c->ridx[xfer_owner(x)] + 1]++;

			cv.k[at] = (struct pkey){.key = (uint64_t)x->block << 32 | x->offset,
						 .end = x->offset + x->length,
						 .tau = tau(c, x, t)};
		}
	size_t most = 0;
	for (size_t b = 0; b < nb; b++)
		if (cv.start[b + 1] - cv.start[b] > most)
			most = cv.start[b + 1] - cv.start[b];
	unsigned th = parallel_workers(nb, 4, 0);
	cv.count = xcalloc(th, sizeof(uint32_t *));
	cv.tmp = xcalloc(th, sizeof(struct pkey *));
	for (unsigned i = 0; i < th; i++) {
		cv.count[i] = xmalloc(((size_t)c->n + 1) * sizeof(uint32_t));
		cv.tmp[i] = xmalloc((most + 1) * sizeof(struct pkey));
	}
	parallel_for(nb, 4, th, cover_one, &cv);
	for (unsigned i = 0; i < th; i++) {
		free(cv.count[i]);
		free(cv.tmp[i]);
	}
	free(cv.count);
	free(cv.tmp);
	for (size_t b = 0; b < nb && rc == 0; b++)
		rc = fault_say(c, &cv.f, b, c->p->region[b % nr]);
	free(cv.k);
	free(cv.start);
	faults_free(&cv.f);
	return rc;
}

/* The most bytes the index of the pairs the patch plans outside its region
 * may take; above it the check searches each owner's sorted list instead.
 * 8,192 nodes' 20 MiB fits; 16,384 nodes' 80 MiB is not counted in the
 * answer's estimate (bfb/patch.c's whole_over_memory, measured within a
 * few percent of the peak there), so it keeps the search */
#define PATCH_INDEX_MAX ((size_t)32 << 20)

/* partial_cover on threads: the patch in nchunk ranges, each checking
 * its transfers on their own (xfer_one) as it counts their pieces per
 * (phase, owner) bucket (one pass over the patch, where the transfers'
 * own check was a pass of its own), then putting them at pos[chunk]
 * (the chunks' pieces of a bucket in the patch's order, as one pass
 * would); then the buckets, each scanned by block on its own
 * (ocover_bucket), its pairs written where its pieces start, its first
 * fault kept (struct cover_faults). */
struct ocover {
	struct pcheck *c;
	unsigned nchunk;
	size_t **pos;  /* per chunk, per bucket */
	size_t *first; /* per chunk, its first transfer xfer_one refuses */
	size_t *part;  /* per chunk, its parts of blocks (struct opart), then where they go */
	struct cover_faults f;
	struct oscratch *w; /* per worker */
};

/* A worker's tables for a bucket's pieces by block (ocover_bucket): the
 * blocks seen as bits, each one's last piece, each piece's one before it
 * of the same block, a block's pieces gathered to be put in order. */
struct oscratch {
	uint64_t *seen; /* n bits, clear between buckets */
	uint32_t *head; /* per block, where its bit is set */
	uint32_t *next; /* per piece of the largest bucket */
	struct opiece *one;
};

static void ocover_range(const struct ocover *oc, unsigned j, size_t *lo, size_t *hi)
{
	size_t x0 = oc->c->xlo, m = oc->c->p->prog.nxfers - x0;

	*lo = x0 + m / oc->nchunk * j;
	*hi = x0 + (j + 1 == oc->nchunk ? m : m / oc->nchunk * (j + 1));
}

static void ocover_count(void *arg, size_t j, unsigned wid)
{
	struct ocover *oc = arg;
	struct pcheck *c = oc->c;
	const struct schedule *q = &c->p->prog;
	size_t lo, hi, *at = oc->pos[j], part = 0;
	const struct xcheck v = xcheck_of(c);
	const uint32_t *step_start = q->step_start;

	(void)wid;
	ocover_range(oc, (unsigned)j, &lo, &hi);
	for (size_t i = lo, t = step_of(q, lo), next = step_start[t + 1]; i < hi; i++) {
		const struct xfer *x = &q->xfers[i];

		while (i >= next)
			next = step_start[++t + 1];
		if (xfer_why(&v, (uint32_t)t, x)) {
			oc->first[j] = i;
			return;
		}
		at[phase_of(x) * v.n + xfer_owner(x)]++;
		part += (x->offset | (x->length ^ SCHED_ONE)) != 0; /* no branch */
	}
	/* once: the chunks' counts share a cache line, which the cores
	 * passed back and forth at every transfer */
	oc->part[j] = part;
}

static void ocover_fill(void *arg, size_t j, unsigned wid)
{
	struct ocover *oc = arg;
	const struct pcheck *c = oc->c;
	const struct schedule *q = &c->p->prog;
	size_t lo, hi, *at = oc->pos[j], part = oc->part[j];
	/* in registers, as ocover_count's (struct xcheck) */
	const uint32_t n = c->n, S = c->S, *off = c->g->off, *step_start = q->step_start;
	const uint16_t *inpos = c->inpos;
	struct opiece *opc = c->opc;
	struct opart *opart = c->opart;

	(void)wid;
	ocover_range(oc, (unsigned)j, &lo, &hi);
	for (size_t i = lo, t = step_of(q, lo), next = step_start[t + 1]; i < hi; i++) {
		const struct xfer *x = &q->xfers[i];
		uint32_t ph = phase_of(x), tt;

		while (i >= next)
			next = step_start[++t + 1];
		tt = ph ? S - (uint32_t)t : (uint32_t)t - S + 1;
		if (x->offset != 0 || x->length != SCHED_ONE) {
			opart[part] = (struct opart){
			    .off = x->offset, .end = x->offset + x->length, .tau = tt};
			tt = OPIECE_PART | (uint32_t)part++;
		}
		opc[at[ph * n + xfer_owner(x)]++] =
		    (struct opiece){.block = (uint16_t)x->block,
				    .port = (uint16_t)(ph ? x->lane : inpos[off[x->src] + x->lane]),
				    .t = tt};
	}
}

/* Block o's pieces in bucket b (the chain from ws->head[o]) cover it once,
 * in order of offset, never the owner u's own; its hold, or a fault kept. */
static bool ocover_block(struct ocover *oc, struct oscratch *ws, const struct opiece *k, size_t b,
			 uint32_t u, uint32_t o, uint32_t *hold)
{
	const struct pcheck *c = oc->c;
	uint32_t m = 0, at = 0, h = 0, one = ws->head[o];

	if (ws->next[one] == UINT32_MAX && !(k[one].t & OPIECE_PART)) {
		/* most blocks: one piece, whole */
		if (o == u) {
			fault_first(&oc->f, b, FAULT_OWN, o, 0);
			return false;
		}
		*hold = k[one].t;
		return true;
	}
	for (uint32_t i = one;; i = ws->next[i]) {
		ws->one[m++] = k[i];
		if (ws->next[i] == UINT32_MAX)
			break;
	}
	/* by offset: a block's few pieces; those at one offset in either
	 * order, the first fault the same */
	for (uint32_t e = 1; e < m; e++)
		for (uint32_t j = e;
		     j > 0 && opiece_off(c, &ws->one[j - 1]) > opiece_off(c, &ws->one[j]); j--) {
			struct opiece x = ws->one[j];

			ws->one[j] = ws->one[j - 1];
			ws->one[j - 1] = x;
		}
	for (uint32_t e = 0; e < m; e++) {
		uint32_t off = opiece_off(c, &ws->one[e]), tau = opiece_tau(c, &ws->one[e]);

		if (off != at) {
			fault_first(&oc->f, b, off < at ? FAULT_TWICE : FAULT_GAP, o, off);
			return false;
		}
		at = opiece_end(c, &ws->one[e]);
		h = tau > h ? tau : h;
	}
	if (at != SCHED_ONE) {
		fault_first(&oc->f, b, FAULT_GAP_END, o, 0);
		return false;
	}
	if (o == u) {
		fault_first(&oc->f, b, FAULT_OWN, o, 0);
		return false;
	}
	*hold = h;
	return true;
}

/* Bucket b's pieces by block: each pair covered once, never the owner's
 * own; its pairs (block, hold) in oblk, ohold [obk[b], oend[b]), in
 * order of block. The blocks found by a bit each and a chain of their
 * pieces, in the bucket's n bits: its pieces stay in the patch's order
 * (causal_bucket and patch_loads read them in any), where a radix sort
 * of them by block, through a copy and back, was a third more of the
 * pass's work than the rest of it. */
static void ocover_bucket(void *arg, size_t b, unsigned wid)
{
	struct ocover *oc = arg;
	struct pcheck *c = oc->c;
	struct oscratch *ws = &oc->w[wid];
	const struct opiece *k = c->opc + c->obk[b];
	uint32_t m = (uint32_t)(c->obk[b + 1] - c->obk[b]), u = (uint32_t)(b % c->n), np = 0;
	uint32_t *hold = c->ohold + c->obk[b], words = (c->n + 63) / 64;
	uint16_t *blk = c->oblk + c->obk[b], *rank = c->obits ? c->orank + b * c->ow : NULL;
	uint64_t *row = c->obits ? c->obits + b * c->ow : NULL;
	bool ok = true;

	if (c->inr[u]) {
		if (row) { /* none: a region node's are patch_cover's */
			memset(row, 0, c->ow * sizeof(uint64_t));
			memset(rank, 0, c->ow * sizeof(uint16_t));
		}
		return;
	}
	for (uint32_t i = 0; i < m; i++) {
		uint32_t o = k[i].block;
		uint64_t bit = UINT64_C(1) << (o % 64);

		ws->next[i] = ws->seen[o / 64] & bit ? ws->head[o] : UINT32_MAX;
		ws->seen[o / 64] |= bit;
		ws->head[o] = i;
	}
	for (uint32_t w = 0; w < words; w++) {
		if (row) {
			row[w] = ws->seen[w]; /* all of them pairs, unless a fault */
			rank[w] = (uint16_t)np;
		}
		for (uint64_t bits = ws->seen[w]; bits && ok; bits &= bits - 1) {
			uint32_t o = w * 64 + (uint32_t)__builtin_ctzll(bits);

			ok = ocover_block(oc, ws, k, b, u, o, &hold[np]);
			if (ok)
				blk[np++] = (uint16_t)o;
		}
		ws->seen[w] = 0; /* clear for the worker's next bucket */
	}
	c->oend[b] = (uint32_t)c->obk[b] + np;
}

/* The region and failed hosts in order; each patch transfer on its own
 * (xfer_one), as the chunks of oc count its pieces, on every core; the
 * first refused said. */
static int patch_xfers(struct pcheck *c, struct ocover *oc)
{
	const struct schedule *q = &c->p->prog;
	unsigned th = parallel_workers(q->nxfers - c->xlo, 8192, 0);
	size_t first = SIZE_MAX;

	if (q->nodes != c->n || q->collective != c->r->prog.collective ||
	    q->nsteps > c->r->prog.nsteps)
		return pfail(c, 0, "the patch is for %u nodes and %u steps, the schedule %u and %u",
			     q->nodes, q->nsteps, c->n, c->r->prog.nsteps);
	if (c->r->prog.nsteps >= OPIECE_PART || q->nxfers >= OPIECE_PART)
		return pfail(c, 0, "%u steps and %zu patch transfers: too many to check",
			     c->r->prog.nsteps, q->nxfers);
	for (uint32_t i = 0; i < c->p->nregion; i++) {
		if (c->p->region[i] >= c->n || (i && c->p->region[i] <= c->p->region[i - 1]))
			return pfail(c, 0, "the patch's region is not ascending nodes below %u",
				     c->n);
		c->inr[c->p->region[i]] = 1;
		c->ridx[c->p->region[i]] = i;
	}
	for (uint32_t i = 0; i < c->p->nabsent; i++) {
		uint32_t a = c->p->absent[i];

		if (a >= c->n || (i && a <= c->p->absent[i - 1]) || c->inr[a])
			return pfail(c, 0,
				     "the patch's failed hosts are not ascending nodes below %u "
				     "outside its region",
				     c->n);
	}
	/* a few chunks a worker: one slowed by another process's load
	 * leaves the rest to the others */
	oc->nchunk = th > 1 ? 4 * th : 1;
	oc->pos = xcalloc(oc->nchunk, sizeof(*oc->pos));
	oc->first = xmalloc(oc->nchunk * sizeof(size_t));
	oc->part = xcalloc(oc->nchunk, sizeof(size_t));
	for (unsigned j = 0; j < oc->nchunk; j++) {
		oc->pos[j] = xcalloc((size_t)2 * c->n, sizeof(size_t));
		oc->first[j] = SIZE_MAX;
	}
	parallel_for(oc->nchunk, 1, th, ocover_count, oc);
	for (unsigned j = 0; j < oc->nchunk && first == SIZE_MAX; j++)
		first = oc->first[j];
	return first == SIZE_MAX ? 0 : xfer_one(c, step_of(q, first), first);
}

/* The buckets' pieces into c->opc by c->obk, on threads, from
 * patch_xfers' counts (see struct ocover). */
static void ocover_gather(struct pcheck *c, struct ocover *oc)
{
	size_t nb = (size_t)2 * c->n, at = 0;
	unsigned th = parallel_workers(oc->nchunk, 1, 0);

	c->obk = xmalloc((nb + 1) * sizeof(size_t));
	for (size_t b = 0; b < nb; b++) {
		c->obk[b] = at;
		for (unsigned j = 0; j < oc->nchunk; j++) {
			size_t k = oc->pos[j][b];

			oc->pos[j][b] = at;
			at += k;
		}
	}
	c->obk[nb] = at;
	/* the pieces, their parts and (partial_cover) their pairs on huge
	 * pages where the kernel gives them: first touched here, scattered
	 * over the buckets, a 4 KiB fault each 512 times as often (the
	 * gather 0.26-0.30 s -> 0.09-0.22 s at 8,192 nodes with 1% of the
	 * ports failed, load 2) */
	c->opc = xmalloc_huge((at + 1) * sizeof(*c->opc));
	at = 0;
	for (unsigned j = 0; j < oc->nchunk; j++) {
		size_t k = oc->part[j];

		oc->part[j] = at;
		at += k;
	}
	c->opart = xmalloc_huge((at + 1) * sizeof(*c->opart));
	parallel_for(oc->nchunk, 1, th, ocover_fill, oc);
}

static void ocover_free(struct ocover *oc)
{
	for (unsigned j = 0; oc->pos && j < oc->nchunk; j++)
		free(oc->pos[j]);
	free(oc->pos);
	free(oc->first);
	free(oc->part);
}

/* Room for the pairs' index (struct pcheck's obits), where it fits
 * PATCH_INDEX_MAX and the patch asks for no search: the phases checked
 * only (c->nph). */
static void pairs_index(struct pcheck *c)
{
	size_t words = (size_t)c->nph * c->n * ((c->n + 63) / 64);

	c->ow = (c->n + 63) / 64;
	if (c->p->check_by_search ||
	    words * (sizeof(uint64_t) + sizeof(uint16_t)) > PATCH_INDEX_MAX)
		return;
	c->obits = xmalloc_huge((words + 1) * sizeof(uint64_t));
	c->orank = xmalloc_huge((words + 1) * sizeof(uint16_t));
}

/* Outside the region: each (owner, block) the patch plans is covered
 * once, never the owner's own; when the owner holds it. The pieces by
 * (phase, owner) bucket, 8 bytes each where whole (a self-keyed copy
 * of 24 bytes a piece, 258 MB at 8,192 nodes with 1% of the ports
 * failed, cost the kernel's page zeroing a tenth of the answer), each
 * bucket scanned by block on its own, on every core; kept in c->opc, the
 * region's buckets too, for patch_causal and patch_loads. */
static int partial_cover(struct pcheck *c, struct ocover *oc)
{
	size_t nb = (size_t)2 * c->n, most = 0;
	int rc = 0;

	ocover_gather(c, oc);
	for (size_t b = 0; b < nb; b++)
		most = c->obk[b + 1] - c->obk[b] > most ? c->obk[b + 1] - c->obk[b] : most;
	if (c->obk[nb] >= UINT32_MAX)
		return pfail(c, 0, "%zu patch transfers outside its region: too many to check",
			     c->obk[nb]);
	c->oblk = xmalloc_huge((c->obk[nb] + 1) * sizeof(uint16_t));
	c->ohold = xmalloc_huge((c->obk[nb] + 1) * sizeof(uint32_t));
	c->oend = xmalloc((nb + 1) * sizeof(uint32_t));
	for (size_t b = 0; b < nb; b++)
		c->oend[b] = (uint32_t)c->obk[b]; /* none, where not checked */
	pairs_index(c);
	faults_init(&oc->f, nb);
	unsigned th = parallel_workers(nb, 64, 0);
	oc->w = xcalloc(th, sizeof(*oc->w));
	for (unsigned w = 0; w < th; w++) {
		oc->w[w].seen = xcalloc(((size_t)c->n + 63) / 64, sizeof(uint64_t));
		oc->w[w].head = xmalloc(((size_t)c->n + 1) * sizeof(uint32_t));
		oc->w[w].next = xmalloc((most + 1) * sizeof(uint32_t));
		oc->w[w].one = xmalloc((most + 1) * sizeof(struct opiece));
	}
	parallel_for((size_t)c->nph * c->n, 64, th, ocover_bucket, oc);
	for (size_t b = 0; b < nb && rc == 0; b++)
		rc = fault_say(c, &oc->f, b, (uint32_t)(b % c->n));
	for (unsigned w = 0; w < th; w++) {
		free(oc->w[w].seen);
		free(oc->w[w].head);
		free(oc->w[w].next);
		free(oc->w[w].one);
	}
	free(oc->w);
	faults_free(&oc->f);
	return rc;
}

/* Each node's in-arcs in a row of their own (in_off, in_arcs) and each
 * arc's place in its head's row (inpos): the port a copy's piece comes
 * in by, as its owner sees it. */
static void in_arcs(struct pcheck *c)
{
	const struct graph *g = c->g;

	c->in_off = xcalloc((size_t)c->n + 2, sizeof(uint32_t));
	c->in_arcs = xmalloc(((size_t)g->m + 1) * sizeof(uint32_t));
	c->inpos = xmalloc(((size_t)g->m + 1) * sizeof(uint16_t));
	for (uint32_t a = 0; a < g->m; a++)
		c->in_off[g->adj[a] + 2]++;
	for (uint32_t v = 0; v < c->n; v++)
		c->in_off[v + 2] += c->in_off[v + 1];
	for (uint32_t a = 0; a < g->m; a++)
		c->in_arcs[c->in_off[g->adj[a] + 1]++] = a;
	for (uint32_t v = 0; v < c->n; v++)
		for (uint32_t i = c->in_off[v]; i < c->in_off[v + 1]; i++)
			c->inpos[c->in_arcs[i]] = (uint16_t)(i - c->in_off[v]);
}

int sched_verify_patched(const struct sched_reduced *r, const struct sched_patch *p,
			 const struct graph *g, const bool *gone, struct verify_report *rep)
{
	struct verify_opts vo = {.graph = g};
	struct pcheck c = {
	    .r = r, .p = p, .g = g, .gone = gone, .n = r->group.nodes, .nph = 2, .rep = rep};
	struct ocover oc = {.c = &c};
	int rc;

	if (sched_verify_reduced(r, &vo, rep) < 0) {
		char why[sizeof(rep->error)];

		snprintf(why, sizeof(why), "%s", rep->error);
		snprintf(rep->error, sizeof(rep->error), "the healthy program: %.280s", why);
		return -1;
	}
	if (r->group.reps != 1 || g->n != c.n)
		return pfail(
		    &c, 0, "a patch applies to a program under the whole group of %u nodes", g->n);
	if (p->nabsent + 2 > c.n)
		return pfail(&c, 0, "%u of %u nodes failed: no collective is left", p->nabsent,
			     c.n);
	c.inr = xcalloc(c.n, 1);
	c.abs = absent_map(p, c.n);
	c.need = c.n - 1 - p->nabsent;
	if (c.abs) {
		/* a failed host's arcs are gone, whatever the caller says */
		c.own_gone = xmalloc(((size_t)g->m + 1) * sizeof(bool));
		for (uint32_t u = 0; u < c.n; u++)
			for (uint32_t a = g->off[u]; a < g->off[u + 1]; a++)
				c.own_gone[a] = (gone && gone[a]) || c.abs[u] || c.abs[g->adj[a]];
		c.gone = c.own_gone;
	}
	c.ridx = xmalloc(c.n * sizeof(uint32_t));
	memset(c.ridx, 0xff, c.n * sizeof(uint32_t));
	pcheck_group_fields(&c);
	c.gt = graph_transpose(g);
	c.tails = graph_arc_tails(g);
	in_arcs(&c);
	rc = base_tables(&c);
	if (rc == 0 && pcheck_mirrored(&c)) {
		/* the reductions the copies' mirrors: the copies alone */
		c.nph = 1;
		c.xlo = c.S < p->prog.nsteps ? p->prog.step_start[c.S] : p->prog.nxfers;
	}
	rep->one_phase = c.nph == 1;
	if (rc == 0)
		rc = patch_xfers(&c, &oc);
	if (rc == 0)
		rc = patch_cover(&c);
	if (rc == 0)
		rc = partial_cover(&c, &oc);
	if (rc == 0)
		rc = patch_causal(&c);
	if (rc == 0)
		rc = base_untouched(&c);
	if (rc == 0) {
		patch_loads(&c);
		rep->ok = true;
		rep->nsteps = r->prog.nsteps;
		rep->duplicate_blocks = 0;
	}
	ocover_free(&oc);
	free(c.inr);
	free(c.abs);
	free(c.own_gone);
	free(c.hb[0]);
	free(c.hb[1]);
	kmap_free(&c.minsend);
	free(c.ports);
	free(c.hold);
	free(c.ridx);
	free(c.bstart);
	free(c.bidx);
	free(c.tails);
	free(c.in_off);
	free(c.in_arcs);
	free(c.inpos);
	free(c.bstep);
	free(c.oend);
	free(c.oblk);
	free(c.ohold);
	free(c.obits);
	free(c.orank);
	free(c.opc);
	free(c.opart);
	free(c.obk);
	graph_free((struct graph *)c.gt);
	return rc;
}
