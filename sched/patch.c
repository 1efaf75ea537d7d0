/* Degraded schedules kept as structure (see sched.h, struct sched_patch):
 * the healthy reduced schedule with the programs of a region's nodes
 * replaced, its expansion and its check without expansion.
 *
 * The check reads every transfer as an allgather's: the node that owns it
 * receives block `blk` from `send` at time `tau`. A copy is that as it
 * stands (time: the step within the copy phase, from 1). A reduction u ->
 * x of shard k at step s is, run backwards on the transposed graph, x
 * handing u shard k at time S - s (S: the reduction phase's steps), which
 * is Cor. 3.1 of Zhao et al. read the other way: the reduction is right
 * exactly when that allgather is. "x holds k at time h" is then: x has all
 * of k after time h (0: its own block from the start). */
#include "sched/internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void sched_patch_free(struct sched_patch *p)
{
	if (!p)
		return;
	free(p->region);
	sched_free(&p->prog);
	memset(p, 0, sizeof(*p));
}

uint64_t sched_patched_transfers(const struct sched_reduced *r, const struct sched_patch *p)
{
	return (uint64_t)(r->group.order - p->nregion) * sched_block_xfers(&r->prog) +
	       p->prog.nxfers;
}

/* The ordinal of the lane-th arc of u among its surviving ones. */
static uint16_t surviving_port(const struct graph *g, const bool *gone, uint32_t u, uint32_t lane)
{
	uint32_t k = 0;

	for (uint32_t a = g->off[u]; a < g->off[u] + lane; a++)
		k += !gone[a];
	return (uint16_t)k;
}

int sched_patched_expand(const struct sched_reduced *r, const struct sched_patch *p,
			 const struct graph *g, const bool *gone, struct schedule *s,
			 struct ofc_error *err)
{
	const struct schedule *b = &r->prog, *q = &p->prog;
	uint32_t n = r->group.nodes;

	if (n > SCHED_MAX_NODES || b->nodes != n || q->nsteps > b->nsteps)
		return ofc_error_set(err, OFC_E_INPUT,
				     "%u nodes: no explicit schedule of this patch", n);
	if (sched_patched_transfers(r, p) >= UINT32_MAX)
		return ofc_error_set(err, OFC_E_INPUT,
				     "%llu transfers: too many for an explicit schedule",
				     (unsigned long long)sched_patched_transfers(r, p));
	uint8_t *inr = xcalloc(n, 1);
	for (uint32_t i = 0; i < p->nregion; i++)
		inr[p->region[i]] = 1;
	sched_init(s, b->collective, b->algorithm, n);
	snprintf(s->topology, sizeof(s->topology), "%s", b->topology);
	s->size_bytes = b->size_bytes;
	for (uint32_t t = 0; t < b->nsteps; t++) {
		size_t k = sched_step_size(b, t), kq = t < q->nsteps ? sched_step_size(q, t) : 0;
		size_t count = kq, pos = 0;

		for (uint32_t e = 0; e < r->group.order; e++)
			for (size_t i = 0; i < k; i++) {
				struct xfer y =
				    sched_reduced_move(r, &b->xfers[b->step_start[t] + i],
						       sched_group_element(&r->group, e));

				count += !inr[xfer_owner(&y)];
			}
		if (!count) {
			sched_step(s);
			continue;
		}
		struct xfer *out = sched_append_steps(s, 1, &count);
		for (uint32_t e = 0; e < r->group.order; e++)
			for (size_t i = 0; i < k; i++) {
				struct xfer y =
				    sched_reduced_move(r, &b->xfers[b->step_start[t] + i],
						       sched_group_element(&r->group, e));

				if (!inr[xfer_owner(&y)])
					out[pos++] = y;
			}
		for (size_t i = 0; i < kq; i++)
			out[pos++] = q->xfers[q->step_start[t] + i];
		for (size_t i = 0; gone && i < count; i++)
			out[i].lane = surviving_port(g, gone, out[i].src, out[i].lane);
	}
	free(inr);
	return 0;
}

static void patched_fill(const void *ctx, uint32_t t, struct xfer *out)
{
	const struct sched_patched_stream *ps = ctx;
	const struct schedule *b = &ps->r->prog, *q = &ps->p->prog;
	size_t k = sched_step_size(b, t), kq = t < q->nsteps ? sched_step_size(q, t) : 0, pos = 0;

	for (uint32_t e = 0; e < ps->r->group.order; e++)
		for (size_t i = 0; i < k; i++) {
			struct xfer y = sched_reduced_move(ps->r, &b->xfers[b->step_start[t] + i],
							   sched_group_element(&ps->r->group, e));

			if (!ps->inr[xfer_owner(&y)])
				out[pos++] = y;
		}
	for (size_t i = 0; i < kq; i++)
		out[pos++] = q->xfers[q->step_start[t] + i];
	for (size_t i = 0; i < pos; i++)
		out[i].lane = surviving_port(ps->g, ps->gone, out[i].src, out[i].lane);
}

void sched_patched_stream_init(struct sched_patched_stream *ps, const struct sched_reduced *r,
			       const struct sched_patch *p, const struct graph *g, const bool *gone,
			       const struct schedule *head, struct sched_stream *st)
{
	const struct schedule *b = &r->prog, *q = &p->prog;

	*ps = (struct sched_patched_stream){.r = r, .p = p, .g = g, .gone = gone};
	ps->inr = xcalloc(r->group.nodes, 1);
	for (uint32_t i = 0; i < p->nregion; i++)
		ps->inr[p->region[i]] = 1;
	ps->count = xcalloc((size_t)b->nsteps + 1, sizeof(size_t));
	/* base transfers are node 0's own: one translate each per node */
	for (uint32_t t = 0; t < b->nsteps; t++)
		ps->count[t] = (size_t)(r->group.order - p->nregion) * sched_step_size(b, t) +
			       (t < q->nsteps ? sched_step_size(q, t) : 0);
	*st = (struct sched_stream){.head = head,
				    .nsteps = b->nsteps,
				    .count = ps->count,
				    .fill = patched_fill,
				    .ctx = ps};
}

void sched_patched_stream_free(struct sched_patched_stream *ps)
{
	free(ps->inr);
	free(ps->count);
}

/* ---- a small map of 48-bit keys (open addressing) ---------------------------------- */

struct kmap {
	uint64_t *key; /* key + 1; 0 empty */
	uint32_t *val;
	size_t cap, used;
};

static void kmap_init(struct kmap *m, size_t expect)
{
	m->cap = 64;
	while (m->cap < expect * 2)
		m->cap *= 2;
	m->key = xcalloc(m->cap, sizeof(uint64_t));
	m->val = xmalloc(m->cap * sizeof(uint32_t));
	m->used = 0;
}

static void kmap_free(struct kmap *m)
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

static uint32_t *kmap_get(const struct kmap *m, uint64_t key)
{
	size_t i = kmap_slot(m, key);

	return m->key[i] ? &m->val[i] : NULL;
}

/* The value of key, made with v when new; grows at half full. */
static uint32_t *kmap_put(struct kmap *m, uint64_t key, uint32_t v)
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

static uint64_t key3(uint32_t ph, uint32_t a, uint32_t b)
{
	return (uint64_t)ph << 32 | (uint64_t)(a & 0xffff) << 16 | (b & 0xffff);
}

/* ---- the check ---------------------------------------------------------------------- */

struct pcheck {
	const struct sched_reduced *r;
	const struct sched_patch *p;
	const struct graph *g, *gt;
	const bool *gone;
	uint32_t n, S; /* S: the reduction phase's steps (copies start there) */
	uint8_t *inr;
	uint32_t *hb[2]; /* base: node 0 holds block b after time hb[ph][b] */
	struct kmap minsend; /* base: (ph, sender - owner, block - owner) -> first time */
	struct kmap lanes;   /* base: (ph, sender - owner, port) used */
	uint32_t *ridx;	     /* per node: its index in the region, or UINT32_MAX */
	uint32_t *hold;	     /* per program (ph, region index) and block: held after */
	struct verify_report *rep;
};

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
	kmap_init(&c->lanes, 64);
	for (uint32_t t = 0; t < b->nsteps; t++)
		for (size_t i = b->step_start[t]; i < b->step_start[t] + sched_step_size(b, t); i++) {
			const struct xfer *x = &b->xfers[i];
			uint32_t ph = phase_of(x), o = xfer_owner(x), tt;

			if (o != 0 || xfer_blocks(x) != 1 || x->run || x->block >= c->n ||
			    (ph == 1) != (t < c->S))
				return pfail(c, t,
					     "the base program is not node 0's own, one block a "
					     "transfer, reductions before copies: no patch applies");
			tt = tau(c, x, t);
			if (tt > c->hb[ph][x->block])
				c->hb[ph][x->block] = tt;
			uint32_t *m = kmap_put(&c->minsend,
					       key3(ph, sched_group_sub(G, sender(x), o), x->block), tt);
			if (tt < *m)
				*m = tt;
			kmap_put(&c->lanes, key3(ph, sched_group_sub(G, x->src, o), x->lane), 1);
		}
	return 0;
}

/* Each patch transfer on its own: ranges, owner in the region, its arc. */
static int patch_xfers(struct pcheck *c)
{
	const struct schedule *q = &c->p->prog;
	const struct graph *g = c->g;

	if (q->nodes != c->n || q->collective != c->r->prog.collective ||
	    q->nsteps > c->r->prog.nsteps)
		return pfail(c, 0, "the patch is for %u nodes and %u steps, the schedule %u and %u",
			     q->nodes, q->nsteps, c->n, c->r->prog.nsteps);
	for (uint32_t i = 0; i < c->p->nregion; i++) {
		if (c->p->region[i] >= c->n || (i && c->p->region[i] <= c->p->region[i - 1]))
			return pfail(c, 0, "the patch's region is not ascending nodes below %u",
				     c->n);
		c->inr[c->p->region[i]] = 1;
		c->ridx[c->p->region[i]] = i;
	}
	for (uint32_t t = 0; t < q->nsteps; t++)
		for (size_t i = q->step_start[t]; i < q->step_start[t] + sched_step_size(q, t); i++) {
			const struct xfer *x = &q->xfers[i];
			uint32_t a = g->off[x->src] + x->lane;

			if (x->src >= c->n || x->dst >= c->n || x->block >= c->n || x->run ||
			    xfer_blocks(x) != 1 || x->length == 0 || x->offset > SCHED_ONE ||
			    x->length > SCHED_ONE - x->offset)
				return pfail(c, t, "patch transfer %zu is out of range", i);
			if ((phase_of(x) == 1) != (t < c->S))
				return pfail(c, t, "patch transfer %zu is in the other phase's steps",
					     i);
			if (!c->inr[xfer_owner(x)])
				return pfail(c, t, "patch transfer %zu: node %u is not in the region",
					     i, xfer_owner(x));
			if (x->lane >= graph_outdeg(g, x->src) || g->adj[a] != x->dst)
				return pfail(c, t, "patch transfer %zu: %u's port %u does not lead to %u",
					     i, x->src, x->lane, x->dst);
			if (c->gone[a])
				return pfail(c, t, "patch transfer %zu: the arc %u -> %u has failed", i,
					     x->src, x->dst);
		}
	return 0;
}

/* A region node's pieces of one block: (block, offset), end, time. */
struct pkey {
	uint64_t key;
	uint32_t end, tau;
};

/* Per program (phase, region node), bucket b = ph * nregion + i. */
struct cover {
	struct pcheck *c;
	struct pkey *k;
	size_t *start;	 /* 2 nregion + 1 */
	uint8_t *why;	 /* per bucket: 0 fine, 1 twice, 2 gap, 3 own, 4 count */
	uint32_t *at_block, *at_off;
	uint32_t **count;   /* per worker: n + 1 */
	struct pkey **tmp;  /* per worker: the largest program */
};

static void cover_fail(struct cover *cv, size_t b, uint8_t why, uint32_t o, uint32_t off)
{
	if (!cv->why[b]) {
		cv->why[b] = why;
		cv->at_block[b] = o;
		cv->at_off[b] = off;
	}
}

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
	for (uint32_t o = 0, lo = 0; o < c->n && !cv->why[b]; lo = at[o++]) {
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
				cover_fail(cv, b, off < pos ? 1 : 2, o, off);
			pos = by[i].end;
			h = by[i].tau > h ? by[i].tau : h;
		}
		if (pos != SCHED_ONE)
			cover_fail(cv, b, 2, o, pos);
		if (o == u)
			cover_fail(cv, b, 3, o, 0);
		hold[o] = h;
		blocks++;
	}
	if (blocks != c->n - 1)
		cover_fail(cv, b, 4, blocks, 0);
}

/* A region node's pieces of each block cover it once, and when it holds
 * each; one program at a time, on every core. */
static int patch_cover(struct pcheck *c)
{
	const struct schedule *q = &c->p->prog;
	uint32_t nr = c->p->nregion;
	size_t nb = (size_t)2 * nr;
	struct cover cv = {.c = c};
	int rc = 0;

	if (!nr)
		return 0;
	cv.k = xmalloc((q->nxfers + 1) * sizeof(*cv.k));
	cv.start = xcalloc(nb + 2, sizeof(size_t));
	cv.why = xcalloc(nb, 1);
	cv.at_block = xcalloc(nb, sizeof(uint32_t));
	cv.at_off = xcalloc(nb, sizeof(uint32_t));
	c->hold = xcalloc(nb * c->n, sizeof(uint32_t));
	for (size_t i = 0; i < q->nxfers; i++) {
		const struct xfer *x = &q->xfers[i];

		cv.start[phase_of(x) * nr + c->ridx[xfer_owner(x)] + 2]++;
	}
	for (size_t b = 0; b < nb; b++)
		cv.start[b + 2] += cv.start[b + 1];
	for (uint32_t t = 0; t < q->nsteps; t++)
		for (size_t i = q->step_start[t]; i < q->step_start[t] + sched_step_size(q, t); i++) {
			const struct xfer *x = &q->xfers[i];
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
	for (size_t b = 0; b < nb && rc == 0; b++) {
		uint32_t u = c->p->region[b % nr], o = cv.at_block[b];

		switch (cv.why[b]) {
		case 1:
		case 2:
			rc = pfail(c, 0, "node %u: block %u %s at %u / %u", u, o,
				   cv.why[b] == 1 ? "received twice" : "has a gap", cv.at_off[b],
				   SCHED_ONE);
			break;
		case 3:
			rc = pfail(c, 0, "node %u receives its own block", u);
			break;
		case 4:
			rc = pfail(c, 0, "node %u: %u of the %u blocks it needs in a phase", u, o,
				   c->n - 1);
			break;
		}
	}
	free(cv.k);
	free(cv.start);
	free(cv.why);
	free(cv.at_block);
	free(cv.at_off);
	return rc;
}

static uint32_t held_at(const struct pcheck *c, uint32_t ph, uint32_t x, uint32_t o)
{
	if (x == o)
		return 0;
	if (c->ridx[x] != UINT32_MAX)
		return c->hold[((size_t)ph * c->p->nregion + c->ridx[x]) * c->n + o];
	return c->hb[ph][sched_group_sub(&c->r->group, o, x)];
}

/* Every patch transfer after its sender holds the block. */
static int patch_causal(struct pcheck *c)
{
	const struct schedule *q = &c->p->prog;

	for (uint32_t t = 0; t < q->nsteps; t++)
		for (size_t i = q->step_start[t]; i < q->step_start[t] + sched_step_size(q, t); i++) {
			const struct xfer *x = &q->xfers[i];
			uint32_t ph = phase_of(x), s = sender(x), h = held_at(c, ph, s, x->block);

			if (tau(c, x, t) <= h)
				return pfail(c, t,
					     "patch transfer %zu: %u %s block %u before %s it "
					     "(time %u, held after %u)",
					     i, x->src, ph ? "reduces" : "sends", x->block,
					     ph ? "the receiver sends its own" : "it holds", tau(c, x, t),
					     h);
		}
	return 0;
}

/* The base's nodes: none reads a region node's block before it holds it,
 * none sends over a gone arc. */
static int base_untouched(struct pcheck *c)
{
	const struct graph *g = c->g;
	const struct sched_group *G = &c->r->group;

	for (size_t bi = 0; c->hold && bi < (size_t)2 * c->p->nregion; bi++)
		for (uint32_t o = 0; o < c->n; o++) {
		uint32_t ph = (uint32_t)(bi / c->p->nregion), x = c->p->region[bi % c->p->nregion];
		uint32_t h = c->hold[bi * c->n + o];

		if (o == x || h <= c->hb[ph][sched_group_sub(G, o, x)])
			continue;
		/* the owners that read x: copies, x's out-neighbours; reductions,
		 * its in-neighbours (they send to x) */
		const struct graph *rd = ph ? c->gt : g;
		for (uint32_t a = rd->off[x]; a < rd->off[x + 1]; a++) {
			uint32_t u = rd->adj[a];
			const uint32_t *m;

			if (c->inr[u])
				continue;
			m = kmap_get(&c->minsend, key3(ph, sched_group_sub(G, x, u),
						       sched_group_sub(G, o, u)));
			if (m && *m <= h)
				return pfail(c, 0,
					     "node %u (unpatched) takes block %u from %u at time %u, "
					     "which holds it after %u",
					     u, o, x, *m, h);
		}
	}
	for (uint32_t tail = 0; tail < c->n; tail++)
		for (uint32_t a = g->off[tail]; a < g->off[tail + 1]; a++) {
			uint32_t head = g->adj[a], j = a - g->off[tail];

			if (!c->gone[a])
				continue;
			if (!c->inr[head] &&
			    kmap_get(&c->lanes, key3(0, sched_group_sub(G, tail, head), j)))
				return pfail(c, 0, "node %u (unpatched) receives over the failed arc "
						   "%u -> %u",
					     head, tail, head);
			if (!c->inr[tail] && kmap_get(&c->lanes, key3(1, 0, j)))
				return pfail(c, 0, "node %u (unpatched) reduces over the failed arc "
						   "%u -> %u",
					     tail, tail, head);
		}
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The most one arc carries among xs (k transfers of a step of node 0's
 * program, whose arcs are one of each orbit: each arc of the fabric
 * carries what its orbit's arc does). */
static double step_most(const struct xfer *xs, size_t k, uint64_t *scratch)
{
	double most = 0, cur = 0;

	for (size_t i = 0; i < k; i++)
		scratch[i] = (uint64_t)xs[i].src << 48 | (uint64_t)xs[i].lane << 32 | xs[i].length;
	qsort(scratch, k, sizeof(uint64_t), cmp_u64);
	for (size_t i = 0; i < k; i++) {
		if (i && scratch[i] >> 32 != scratch[i - 1] >> 32)
			cur = 0;
		cur += (double)(uint32_t)scratch[i] / SCHED_ONE;
		if (cur > most)
			most = cur;
	}
	return most;
}

static void patch_loads(struct pcheck *c)
{
	const struct schedule *b = &c->r->prog, *q = &c->p->prog;
	size_t big = 0;

	for (uint32_t t = 0; t < b->nsteps; t++) {
		if (sched_step_size(b, t) > big)
			big = sched_step_size(b, t);
	}
	uint64_t *scratch = xmalloc((big + 1) * sizeof(uint64_t));
	double *load = xcalloc(c->g->m + 1, sizeof(double));
	uint32_t *touched = xmalloc((c->g->m + 1) * sizeof(uint32_t)), nt = 0;
	c->rep->sum_max_link_load = c->rep->max_link_load = 0;
	for (uint32_t t = 0; t < b->nsteps; t++) {
		/* node 0's program: its arcs are one of each orbit */
		double most = c->p->nregion < c->n
				  ? step_most(b->xfers + b->step_start[t], sched_step_size(b, t),
					      scratch)
				  : 0;
		/* the region's arcs, each summed in place */
		for (size_t i = t < q->nsteps ? q->step_start[t] : 0;
		     t < q->nsteps && i < q->step_start[t] + sched_step_size(q, t); i++) {
			const struct xfer *x = &q->xfers[i];
			uint32_t a = c->g->off[x->src] + x->lane;

			if (load[a] == 0)
				touched[nt++] = a;
			load[a] += (double)x->length / SCHED_ONE;
			most = load[a] > most ? load[a] : most;
		}
		while (nt)
			load[touched[--nt]] = 0;
		c->rep->sum_max_link_load += most;
		if (most > c->rep->max_link_load)
			c->rep->max_link_load = most;
	}
	free(scratch);
	free(load);
	free(touched);
}

int sched_verify_patched(const struct sched_reduced *r, const struct sched_patch *p,
			 const struct graph *g, const bool *gone, struct verify_report *rep)
{
	struct verify_opts vo = {.graph = g};
	struct pcheck c = {.r = r, .p = p, .g = g, .gone = gone, .n = r->group.nodes, .rep = rep};
	int rc;

	if (sched_verify_reduced(r, &vo, rep) < 0) {
		char why[sizeof(rep->error)];

		snprintf(why, sizeof(why), "%s", rep->error);
		snprintf(rep->error, sizeof(rep->error), "the healthy program: %.280s", why);
		return -1;
	}
	if (r->group.reps != 1 || g->n != c.n)
		return pfail(&c, 0, "a patch applies to a program under the whole group of %u nodes",
			     g->n);
	c.inr = xcalloc(c.n, 1);
	c.ridx = xmalloc(c.n * sizeof(uint32_t));
	memset(c.ridx, 0xff, c.n * sizeof(uint32_t));
	c.gt = graph_transpose(g);
	rc = base_tables(&c);
	if (rc == 0)
		rc = patch_xfers(&c);
	if (rc == 0)
		rc = patch_cover(&c);
	if (rc == 0)
		rc = patch_causal(&c);
	if (rc == 0)
		rc = base_untouched(&c);
	if (rc == 0) {
		patch_loads(&c);
		rep->ok = true;
		rep->ntransfers = (size_t)sched_patched_transfers(r, p);
		rep->nsteps = r->prog.nsteps;
		rep->duplicate_blocks = 0;
	}
	free(c.inr);
	free(c.hb[0]);
	free(c.hb[1]);
	kmap_free(&c.minsend);
	kmap_free(&c.lanes);
	free(c.hold);
	free(c.ridx);
	graph_free((struct graph *)c.gt);
	return rc;
}
