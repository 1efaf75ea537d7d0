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

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- a small map of 48-bit keys (open addressing) ---------------------------------- */

void kmap_init(struct kmap *m, size_t expect)
{
	m->cap = 64;
	while (m->cap < expect * 2)
		m->cap *= 2;
	m->key = xcalloc(m->cap, sizeof(uint64_t));
	m->val = xmalloc(m->cap * sizeof(uint32_t));
	m->used = 0;
}

void kmap_free(struct kmap *m)
{
	free(m->key);
	free(m->val);
}

static size_t kmap_slot(const struct kmap *m, uint64_t key)
{
	size_t i = (size_t)(sched_mix64(key) & (m->cap - 1));

	while (m->key[i] && m->key[i] != key + 1)
		i = (i + 1) & (m->cap - 1);
	return i;
}

uint32_t *kmap_get(const struct kmap *m, uint64_t key)
{
	size_t i = kmap_slot(m, key);

	return m->key[i] ? &m->val[i] : NULL;
}

/* The value of key, made with v when new; grows at half full. */
uint32_t *kmap_put(struct kmap *m, uint64_t key, uint32_t v)
{
	if ((m->used + 1) * 2 > m->cap) {
		struct kmap big;

		kmap_init(&big, m->cap);
		for (size_t i = 0; i < m->cap; i++)
			if (m->key[i]) {
				size_t j = kmap_slot(&big, m->key[i] - 1);

				big.key[j] = m->key[i];
				big.val[j] = m->val[i];
				big.used++;
			}
		kmap_free(m);
		*m = big;
	}
	size_t i = kmap_slot(m, key);
	if (!m->key[i]) {
		m->key[i] = key + 1;
		m->val[i] = v;
		m->used++;
	}
	return &m->val[i];
}

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

static int pfail(struct pcheck *c, uint32_t step, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int pfail(struct pcheck *c, uint32_t step, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->rep->error, sizeof(c->rep->error), fmt, ap);
	va_end(ap);
	c->rep->ok = false;
	c->rep->bad_step = step;
	return -1;
}

static uint32_t phase_of(const struct xfer *x)
{
	return xfer_op(x) == XFER_REDUCE;
}

static uint32_t tau(const struct pcheck *c, const struct xfer *x, uint32_t t)
{
	return phase_of(x) ? c->S - t : t - c->S + 1;
}

static uint32_t sender(const struct xfer *x)
{
	return xfer_op(x) == XFER_REDUCE ? x->dst : x->src;
}

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
	if (x->src >= v->n || x->dst >= v->n || x->block >= v->n ||
	    (x->run | (x->flags >> XFER_SPAN_SHIFT)) != 0 || x->length == 0 ||
	    x->offset > SCHED_ONE || x->length > SCHED_ONE - x->offset)
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

/* The bits set in w: a few shifts and adds, where the builtin is a call
 * into libgcc without a -march that has the instruction (1% of the
 * answer at 8,192 nodes). */
static uint32_t ones(uint64_t w)
{
	w -= (w >> 1) & UINT64_C(0x5555555555555555);
	w = (w & UINT64_C(0x3333333333333333)) + ((w >> 2) & UINT64_C(0x3333333333333333));
	w = (w + (w >> 4)) & UINT64_C(0x0f0f0f0f0f0f0f0f);
	return (uint32_t)((w * UINT64_C(0x0101010101010101)) >> 56);
}

/* The pair (ph, u, o) the patch plans outside the region: its hold, or
 * NULL. */
static const uint32_t *over_get(const struct pcheck *c, uint32_t ph, uint32_t u, uint32_t o)
{
	if (c->obits) {
		size_t bit = ((size_t)ph * c->n + u) * c->n + o;
		uint64_t w = c->obits[bit / 64], below = w & ((UINT64_C(1) << (bit % 64)) - 1);

		if (!(w >> (bit % 64) & 1))
			return NULL;
		return &c->ohold[c->orank[bit / 64] + ones(below)];
	}
	uint32_t lo = c->ooff[ph * c->n + u], hi = c->ooff[ph * c->n + u + 1];

	if (hi - lo > 8) {
		/* the blocks spread over the node ids: start where o would be
		 * if evenly (one or two cache lines, where halving touched a
		 * dozen), then widen by doubling to the range that holds it */
		uint32_t at = lo + (uint32_t)((uint64_t)o * (hi - lo) / c->n), step = 4;

		if (c->oblk[at] < o) {
			while (at + step < hi && c->oblk[at + step] < o)
				step *= 2;
			lo = at + 1;
			hi = at + step + 1 < hi ? at + step + 1 : hi;
		} else {
			while (at >= lo + step && c->oblk[at - step] > o)
				step *= 2;
			lo = at >= lo + step ? at - step : lo;
			hi = at + 1;
		}
	}
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (c->oblk[mid] == o)
			return &c->ohold[mid];
		if (c->oblk[mid] < o)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* 8,192 nodes' 24 MiB fits; 16,384 nodes' 96 MiB is not counted in the
 * answer's estimate (bfb/patch.c's whole_over_memory, measured within a
 * few percent of the peak there), so it keeps the search */
size_t sched_patch_index_max = (size_t)32 << 20;

/* Bucket b's part of obits and orank: its pairs' bits (a word it
 * shares with a bucket beside it set atomically), and the rank of each
 * word that starts in its bits, from ooff[b] and its pairs below. */
static void index_bucket(void *arg, size_t b, unsigned wid)
{
	struct pcheck *c = arg;
	size_t lo = b * c->n, hi = lo + c->n, words = ((size_t)c->nph * c->n * c->n + 63) / 64;
	uint32_t k = c->ooff[b];

	(void)wid;
	for (uint32_t j = c->ooff[b]; j < c->ooff[b + 1]; j++) {
		size_t bit = lo + c->oblk[j];
		uint64_t m = UINT64_C(1) << (bit % 64);

		if (bit / 64 * 64 < lo || bit / 64 * 64 + 64 > hi)
			__atomic_fetch_or(&c->obits[bit / 64], m, __ATOMIC_RELAXED);
		else
			c->obits[bit / 64] |= m;
	}
	for (size_t w = (lo + 63) / 64; w * 64 < hi; w++) {
		while (k < c->ooff[b + 1] && lo + c->oblk[k] < w * 64)
			k++;
		c->orank[w] = k;
	}
	if (b + 1 == (size_t)c->nph * c->n)
		c->orank[words] = c->ooff[b + 1];
}

/* obits and orank from ooff and oblk, where they fit
 * sched_patch_index_max; by bucket on every core (one pass over the
 * pairs on one core was a tenth of the check at 8,192 nodes); the phases
 * checked only (c->nph). */
static void over_index(struct pcheck *c)
{
	size_t words = ((size_t)c->nph * c->n * c->n + 63) / 64;

	if (words * (sizeof(uint64_t) + sizeof(uint32_t)) > sched_patch_index_max)
		return;
	c->obits = xcalloc(words + 1, sizeof(uint64_t));
	c->orank = xmalloc((words + 1) * sizeof(uint32_t));
	parallel_for((size_t)c->nph * c->n, 64, 0, index_bucket, c);
}

/* The step of q's transfer i (step_start ascending: a few compares in
 * a short table, where a table per transfer would cost 4 bytes each). */
static uint32_t step_of(const struct schedule *q, size_t i)
{
	uint32_t lo = 0, hi = q->nsteps;

	while (hi - lo > 1) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (q->step_start[mid] <= i)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

/* partial_cover on threads: the patch in nchunk ranges, each checking
 * its transfers on their own (xfer_one) as it counts their pieces per
 * (phase, owner) bucket (one pass over the patch, where the transfers'
 * own check was a pass of its own), then putting them at pos[chunk]
 * (the chunks' pieces of a bucket in the patch's order, as one pass
 * would); then the buckets, each scanned by block on its own
 * (ocover_bucket), its pairs written where its pieces start (compacted
 * after), its first fault kept (struct cover_faults). */
struct ocover {
	struct pcheck *c;
	unsigned nchunk;
	size_t **pos;  /* per chunk, per bucket */
	size_t *first; /* per chunk, its first transfer xfer_one refuses */
	size_t *part;  /* per chunk, its parts of blocks (struct opart), then where they go */
	uint32_t *npairs;
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
		part += x->offset != 0 || x->length != SCHED_ONE;
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
 * own; its pairs (block, hold) from oblk[obk[b]] on, npairs[b] of them,
 * in order of block. The blocks found by a bit each and a chain of their
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
	uint16_t *blk = c->oblk + c->obk[b];
	bool ok = true;

	if (c->inr[u])
		return; /* a region node's: patch_cover's */
	for (uint32_t i = 0; i < m; i++) {
		uint32_t o = k[i].block;
		uint64_t bit = UINT64_C(1) << (o % 64);

		ws->next[i] = ws->seen[o / 64] & bit ? ws->head[o] : UINT32_MAX;
		ws->seen[o / 64] |= bit;
		ws->head[o] = i;
	}
	for (uint32_t w = 0; w < words; w++) {
		for (uint64_t bits = ws->seen[w]; bits && ok; bits &= bits - 1) {
			uint32_t o = w * 64 + (uint32_t)__builtin_ctzll(bits);

			ok = ocover_block(oc, ws, k, b, u, o, &hold[np]);
			if (ok)
				blk[np++] = (uint16_t)o;
		}
		ws->seen[w] = 0; /* clear for the worker's next bucket */
	}
	oc->npairs[b] = np;
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
	oc->npairs = xcalloc(nb, sizeof(uint32_t));
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
	c->ooff = xcalloc(nb + 1, sizeof(uint32_t));
	for (size_t b = 0; b < nb && rc == 0; b++) {
		rc = fault_say(c, &oc->f, b, (uint32_t)(b % c->n));
		/* the pairs down from where the bucket's pieces start */
		c->ooff[b + 1] = c->ooff[b] + oc->npairs[b];
		memmove(c->oblk + c->ooff[b], c->oblk + c->obk[b],
			oc->npairs[b] * sizeof(uint16_t));
		memmove(c->ohold + c->ooff[b], c->ohold + c->obk[b],
			oc->npairs[b] * sizeof(uint32_t));
	}
	for (unsigned w = 0; w < th; w++) {
		free(oc->w[w].seen);
		free(oc->w[w].head);
		free(oc->w[w].next);
		free(oc->w[w].one);
	}
	free(oc->w);
	free(oc->npairs);
	faults_free(&oc->f);
	if (rc == 0)
		over_index(c);
	return rc;
}

static uint32_t held_at(const struct pcheck *c, uint32_t ph, uint32_t x, uint32_t o)
{
	if (x == o)
		return 0;
	if (c->ridx[x] != UINT32_MAX)
		return c->hold[((size_t)ph * c->p->nregion + c->ridx[x]) * c->n + o];
	const uint32_t *h = over_get(c, ph, x, o);
	return h ? *h : c->hb[ph][pc_sub(c, o, x)];
}

/* Patch transfer i (at step t) after its sender holds the block; the
 * reason in c->rep only where say (the threads below look, one says). */
static int causal_one(struct pcheck *c, uint32_t t, size_t i, bool say)
{
	const struct xfer *x = &c->p->prog.xfers[i];
	uint32_t ph = phase_of(x), s = sender(x), h = held_at(c, ph, s, x->block);

	if (tau(c, x, t) > h)
		return 0;
	return !say ? -1
		    : pfail(c, t,
			    "patch transfer %zu: %u %s block %u before %s it (time %u, held "
			    "after %u)",
			    i, x->src, ph ? "reduces" : "sends", x->block,
			    ph ? "the receiver sends its own" : "it holds", tau(c, x, t), h);
}

/* The read-only checks on threads, by chunks of CHECK_GRAIN items: each
 * chunk keeps its first failing item (SIZE_MAX: none), and the first of
 * all is checked again on this thread to say why, so the reason is the
 * same whatever the threads. (The lookups behind them were a quarter of
 * the answer at 8,192 nodes with 1% of the links failed, on one core.) */
#define CHECK_GRAIN 4096
struct checks {
	struct pcheck *c;
	size_t *first; /* per chunk */
	size_t n;
};

/* Chunk j of the patch's transfers checked (from c->xlo) through
 * causal_one: its first failing transfer into k->first[j]. */
static void causal_chunk(void *arg, size_t j, unsigned wid)
{
	struct checks *k = arg;
	const struct schedule *q = &k->c->p->prog;
	size_t x0 = k->c->xlo, lo = x0 + j * CHECK_GRAIN;
	size_t hi = lo + CHECK_GRAIN < x0 + k->n ? lo + CHECK_GRAIN : x0 + k->n;
	uint32_t t = step_of(q, lo);

	(void)wid;
	for (size_t i = lo; i < hi; i++) {
		while (i >= q->step_start[t + 1])
			t++;
		if (causal_one(k->c, t, i, false) < 0) {
			k->first[j] = i;
			return;
		}
	}
}

/* fn over items [0, n) on threads; the first failing item, or SIZE_MAX. */
static size_t first_failing(struct pcheck *c, size_t n, void (*fn)(void *, size_t, unsigned))
{
	size_t chunks = (n + CHECK_GRAIN - 1) / CHECK_GRAIN, first = SIZE_MAX;
	struct checks k = {.c = c, .first = xmalloc((chunks + 1) * sizeof(size_t)), .n = n};

	for (size_t j = 0; j < chunks; j++)
		k.first[j] = SIZE_MAX;
	parallel_for(chunks, 1, 0, fn, &k);
	for (size_t j = 0; j < chunks && first == SIZE_MAX; j++)
		first = k.first[j];
	free(k.first);
	return first;
}

/* The node that sends owner u the piece in phase ph: the arc's tail in a
 * copy, its head in a reduction. */
static uint32_t piece_sender(const struct pcheck *c, uint32_t ph, uint32_t u,
			     const struct opiece *pc)
{
	return ph ? c->g->adj[c->g->off[u] + pc->port]
		  : c->tails[c->in_arcs[c->in_off[u] + pc->port]];
}

/* Bucket b's pieces (partial_cover's) after their senders hold the
 * blocks, as causal_one checks: bad[b] where one is not. By bucket the
 * senders are the owner's few neighbours, so the lookups stay in a few
 * rows of the pairs where the patch's order spread them over all (a
 * cache miss each, a tenth of the answer at 8,192 nodes). */
struct bcausal {
	struct pcheck *c;
	uint8_t *bad;
};

/* held_at for the pieces of a bucket whose owner has at most
 * CAUSAL_PORTS ports one way: each port's sender and where its blocks'
 * holds are (its region program's, its row of the pairs' bits) found
 * once, not per piece (the lookups were two thirds of the pass). */
#define CAUSAL_PORTS 64
struct senders {
	uint32_t s[CAUSAL_PORTS];
	const uint32_t *hold[CAUSAL_PORTS]; /* a region node's, else NULL */
	size_t row[CAUSAL_PORTS];	    /* its first bit in obits */
};

static inline uint32_t sender_holds(const struct pcheck *c, const struct senders *sd, uint32_t ph,
				    uint32_t port, uint32_t o)
{
	uint32_t s = sd->s[port];

	if (o == s)
		return 0;
	if (sd->hold[port])
		return sd->hold[port][o];
	size_t bit = sd->row[port] + o;
	uint64_t w = c->obits[bit / 64];

	if (w >> (bit % 64) & 1)
		return c->ohold[c->orank[bit / 64] + ones(w & ((UINT64_C(1) << (bit % 64)) - 1))];
	return c->hb[ph][pc_sub(c, o, s)];
}

static void causal_bucket(void *arg, size_t b, unsigned wid)
{
	struct bcausal *k = arg;
	const struct pcheck *c = k->c;
	uint32_t ph = (uint32_t)(b / c->n), u = (uint32_t)(b % c->n);
	uint32_t deg = ph ? c->g->off[u + 1] - c->g->off[u] : c->in_off[u + 1] - c->in_off[u];
	struct senders sd;

	(void)wid;
	if (!c->obits || deg > CAUSAL_PORTS) {
		for (size_t i = c->obk[b]; i < c->obk[b + 1]; i++)
			if (opiece_tau(c, &c->opc[i]) <=
			    held_at(c, ph, piece_sender(c, ph, u, &c->opc[i]), c->opc[i].block)) {
				k->bad[b] = 1;
				return;
			}
		return;
	}
	for (uint32_t port = 0; port < deg; port++) {
		struct opiece pc = {.port = (uint16_t)port};
		uint32_t s = piece_sender(c, ph, u, &pc);

		sd.s[port] = s;
		sd.hold[port] = c->ridx[s] == UINT32_MAX
				    ? NULL
				    : c->hold + ((size_t)ph * c->p->nregion + c->ridx[s]) * c->n;
		sd.row[port] = ((size_t)ph * c->n + s) * c->n;
	}
	for (size_t i = c->obk[b]; i < c->obk[b + 1]; i++) {
		const struct opiece *pc = &c->opc[i];

		uint32_t h = pc->port < deg ? sender_holds(c, &sd, ph, pc->port, pc->block)
					    : held_at(c, ph, piece_sender(c, ph, u, pc), pc->block);

		if (opiece_tau(c, pc) <= h) {
			k->bad[b] = 1;
			return;
		}
	}
}

/* Every patch transfer after its sender holds the block: by bucket,
 * then in the patch's order where one fails, so the first failing
 * transfer is the one said. */
static int patch_causal(struct pcheck *c)
{
	const struct schedule *q = &c->p->prog;
	size_t nb = (size_t)c->nph * c->n, i;
	struct bcausal k = {.c = c, .bad = xcalloc(nb + 1, 1)};
	bool bad = false;

	parallel_for(nb, 16, 0, causal_bucket, &k);
	for (size_t b = 0; b < nb && !bad; b++)
		bad = k.bad[b];
	free(k.bad);
	if (!bad)
		return 0;
	i = first_failing(c, q->nxfers - c->xlo, causal_chunk);
	return i == SIZE_MAX ? 0 : causal_one(c, step_of(q, i), i, true);
}

/* x holds o after h, later than the base says: no unpatched reader (one
 * whose (reader, o) the base still plans) takes it from x before; the
 * reason in c->rep only where say. */
static int late_readers(struct pcheck *c, uint32_t ph, uint32_t x, uint32_t o, uint32_t h, bool say)
{
	/* the owners that read x: copies, x's out-neighbours; reductions, its
	 * in-neighbours (they send to x) */
	const struct graph *rd = ph ? c->gt : c->g;

	if (o == x || h <= c->hb[ph][pc_sub(c, o, x)])
		return 0;
	for (uint32_t a = rd->off[x]; a < rd->off[x + 1]; a++) {
		uint32_t u = rd->adj[a];
		const uint32_t *m;

		if (c->inr[u] || (c->abs && c->abs[u]) || over_get(c, ph, u, o))
			continue;
		m = kmap_get(&c->minsend, key3(ph, pc_sub(c, x, u), pc_sub(c, o, u)));
		if (m && *m <= h && !say)
			return -1;
		if (m && *m <= h)
			return pfail(c, 0,
				     "node %u (unpatched) takes block %u from %u at time %u, which "
				     "holds it after %u",
				     u, o, x, *m, h);
	}
	return 0;
}

/* Base translates of owner u over its port key (src - u, lane) in phase
 * ph: every one replaced (the pairs planned again), else -1. The base's
 * transfers over that key, by block, from c->ports (a scan of all the
 * base's for each failed arc was 1% of the answer at 8,192 nodes). */
static int gone_replaced(struct pcheck *c, uint32_t ph, uint32_t u, uint32_t rel, uint32_t lane,
			 uint32_t tail, uint32_t head, bool say)
{
	uint64_t key = key3(ph, rel, lane);
	size_t lo = 0, hi = c->r->prog.nxfers;

	if (c->inr[u] || (c->abs && c->abs[u]))
		return 0;
	while (lo < hi) { /* the first of key's */
		size_t mid = lo + (hi - lo) / 2;

		if (c->ports[mid] >> 16 < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i < c->r->prog.nxfers && c->ports[i] >> 16 == key; i++) {
		uint32_t o = pc_add(c, (uint32_t)(c->ports[i] & 0xffff), u);

		if (c->abs && c->abs[o])
			continue; /* a failed host's block: dropped */
		if (!over_get(c, ph, u, o) && !say)
			return -1;
		if (!over_get(c, ph, u, o))
			return pfail(c, 0,
				     "node %u (unpatched) %s block %u over the failed arc %u -> %u",
				     u, ph ? "reduces" : "receives", o, tail, head);
	}
	return 0;
}

/* Arc a, where it is gone: every base transfer over it planned again, a
 * copy's by its head, a reduction's by its tail (gone_replaced); the
 * reason said where say. */
static int gone_arc(struct pcheck *c, uint32_t a, bool say)
{
	uint32_t tail = c->tails[a], head = c->g->adj[a], j = a - c->g->off[tail];

	if (!c->gone[a])
		return 0;
	if (gone_replaced(c, 0, head, pc_sub(c, tail, head), j, tail, head, say) < 0 ||
	    (c->nph > 1 && gone_replaced(c, 1, tail, 0, j, tail, head, say) < 0))
		return -1;
	return 0;
}

/* The gone arcs by chunks on threads (one core for them all was a tenth
 * of the check's wall at 8,192 nodes with 1% of the ports failed). */
static void gone_chunk(void *arg, size_t j, unsigned wid)
{
	struct checks *k = arg;
	size_t lo = j * CHECK_GRAIN, hi = lo + CHECK_GRAIN < k->n ? lo + CHECK_GRAIN : k->n;

	(void)wid;
	for (size_t a = lo; a < hi; a++)
		if (gone_arc(k->c, (uint32_t)a, false) < 0) {
			k->first[j] = a;
			return;
		}
}

/* Item i of base_untouched's late readers in the region: a region
 * program's block, by (phase, region node) and block. */
static int region_item(struct pcheck *c, size_t i, bool say)
{
	return late_readers(c, (uint32_t)(i / c->n / c->p->nregion),
			    c->p->region[i / c->n % c->p->nregion], (uint32_t)(i % c->n),
			    c->hold[i], say);
}

static void region_chunk(void *arg, size_t j, unsigned wid)
{
	struct checks *k = arg;
	size_t lo = j * CHECK_GRAIN, hi = lo + CHECK_GRAIN < k->n ? lo + CHECK_GRAIN : k->n;

	(void)wid;
	for (size_t i = lo; i < hi; i++)
		if (region_item(k->c, i, false) < 0) {
			k->first[j] = i;
			return;
		}
}

/* Bucket b's pairs (ph, x, o) outside the region through late_readers:
 * the first failing one's place into first[b] (UINT32_MAX: none). The
 * hold is tested against the base's here, before the call: nine pairs
 * in ten hold no later than the base (no reader can be early), and the
 * call and its place found from a pair's index cost more than the test. */
struct breaders {
	struct pcheck *c;
	uint32_t *first;
};

/* x's readers (late_readers) found once a bucket where x has at most
 * CAUSAL_PORTS of them: each one's place from x, its row of the pairs'
 * bits, whether it is in the region or failed (not the base's). */
struct readers {
	uint32_t n;
	uint32_t u[CAUSAL_PORTS];
	uint32_t rel[CAUSAL_PORTS]; /* x - u */
	size_t row[CAUSAL_PORTS];
	bool skip[CAUSAL_PORTS];
};

/* late_readers' answer (say false) past its first test, from rs. */
static bool readers_early(const struct pcheck *c, const struct readers *rs, uint32_t ph, uint32_t o,
			  uint32_t h)
{
	for (uint32_t r = 0; r < rs->n; r++) {
		size_t bit = rs->row[r] + o;
		const uint32_t *m;

		if (rs->skip[r] || (c->obits[bit / 64] >> (bit % 64) & 1))
			continue; /* the pair planned again: not the base's */
		m = kmap_get(&c->minsend, key3(ph, rs->rel[r], pc_sub(c, o, rs->u[r])));
		if (m && *m <= h)
			return true;
	}
	return false;
}

static void readers_bucket(void *arg, size_t b, unsigned wid)
{
	struct breaders *k = arg;
	struct pcheck *c = k->c;
	uint32_t ph = (uint32_t)(b / c->n), x = (uint32_t)(b % c->n);
	const uint32_t *hb = c->hb[ph];
	const struct graph *rd = ph ? c->gt : c->g;
	struct readers rs = {.n = rd->off[x + 1] - rd->off[x]};
	bool fast = c->obits && rs.n <= CAUSAL_PORTS;

	(void)wid;
	for (uint32_t r = 0; fast && r < rs.n; r++) {
		uint32_t u = rd->adj[rd->off[x] + r];

		rs.u[r] = u;
		rs.rel[r] = pc_sub(c, x, u);
		rs.row[r] = ((size_t)ph * c->n + u) * c->n;
		rs.skip[r] = c->inr[u] || (c->abs && c->abs[u]);
	}
	for (uint32_t j = c->ooff[b]; j < c->ooff[b + 1]; j++) {
		uint32_t o = c->oblk[j];

		if (o == x || c->ohold[j] <= hb[pc_sub(c, o, x)])
			continue;
		if (fast ? readers_early(c, &rs, ph, o, c->ohold[j])
			 : late_readers(c, ph, x, o, c->ohold[j], false) < 0) {
			k->first[b] = j;
			return;
		}
	}
}

/* The base's nodes: none reads a patched block before it is held (the
 * region's blocks first, then the pairs outside in bucket order: the
 * first failing said), none moves a block it still plans by the base
 * over a gone arc. */
static int base_untouched(struct pcheck *c)
{
	size_t nb = (size_t)c->nph * c->n, nh = c->hold ? nb * c->p->nregion : 0;
	size_t i = nh ? first_failing(c, nh, region_chunk) : SIZE_MAX;
	struct breaders k = {.c = c, .first = xmalloc((nb + 1) * sizeof(uint32_t))};

	if (i != SIZE_MAX) {
		free(k.first);
		return region_item(c, i, true);
	}
	memset(k.first, 0xff, nb * sizeof(uint32_t));
	parallel_for(nb, 64, 0, readers_bucket, &k);
	for (size_t b = 0; b < nb; b++)
		if (k.first[b] != UINT32_MAX) {
			uint32_t j = k.first[b];

			free(k.first);
			return late_readers(c, (uint32_t)(b / c->n), (uint32_t)(b % c->n),
					    c->oblk[j], c->ohold[j], true);
		}
	free(k.first);
	i = first_failing(c, c->g->m, gone_chunk);
	return i == SIZE_MAX ? 0 : gone_arc(c, (uint32_t)i, true);
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
	free(c.ooff);
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
