/* A patched schedule's order in time, checked without expanding it (part
 * of sched_verify_patched, patch.c): every patch transfer after its
 * sender holds the block, no unpatched node reading a patched block
 * before it is held, no block the base still plans over a gone arc. */
#include "sched/patch_check.h"

#include <stdlib.h>
#include <string.h>

/* The pair (ph, u, o) the patch plans outside the region: its hold, or
 * NULL. */
static const uint32_t *over_get(const struct pcheck *c, uint32_t ph, uint32_t u, uint32_t o)
{
	size_t b = (size_t)ph * c->n + u;
	uint32_t lo = (uint32_t)c->obk[b], hi = c->oend[b];

	if (lo == hi)
		return NULL;
	if (c->obits)
		return pairs_find(c->obits + b * c->ow, c->orank + b * c->ow, c->ohold + lo, o);

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

/* Whether the patch plans (ph, u, o) outside the region: its bit where
 * the index is (no rank to count), else over_get. */
static bool over_has(const struct pcheck *c, uint32_t ph, uint32_t u, uint32_t o)
{
	if (c->obits && ph < c->nph) /* the index has the phases checked */
		return c->obits[((size_t)ph * c->n + u) * c->ow + o / 64] >> (o % 64) & 1;
	return over_get(c, ph, u, o) != NULL;
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
 * holds are (its region program's, its pairs and their index) found
 * once, not per piece (the lookups were two thirds of the pass). */
#define CAUSAL_PORTS 64
struct pairs_of {
	const uint64_t *bits; /* the node's bucket's rows of obits, orank, ohold */
	const uint16_t *rank;
	const uint32_t *hold;
};
struct senders {
	uint32_t s[CAUSAL_PORTS];
	const uint32_t *hold[CAUSAL_PORTS]; /* a region node's, else NULL */
	struct pairs_of pairs[CAUSAL_PORTS];
};

/* Node s's pairs in phase ph (c->obits not NULL). */
static struct pairs_of pairs_of(const struct pcheck *c, uint32_t ph, uint32_t s)
{
	size_t b = (size_t)ph * c->n + s;

	return (struct pairs_of){.bits = c->obits + b * c->ow,
				 .rank = c->orank + b * c->ow,
				 .hold = c->ohold + c->obk[b]};
}

static inline uint32_t sender_holds(const struct pcheck *c, const struct senders *sd, uint32_t ph,
				    uint32_t port, uint32_t o)
{
	uint32_t s = sd->s[port];
	const struct pairs_of *q = &sd->pairs[port];
	const uint32_t *h;

	if (o == s)
		return 0;
	if (sd->hold[port])
		return sd->hold[port][o];
	h = pairs_find(q->bits, q->rank, q->hold, o);
	return h ? *h : c->hb[ph][pc_sub(c, o, s)];
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
		sd.pairs[port] = pairs_of(c, ph, s);
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
int patch_causal(struct pcheck *c)
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

		if (c->inr[u] || (c->abs && c->abs[u]) || over_has(c, ph, u, o))
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
	/* u's row of the pairs' bits found once (a call per block was a
	 * quarter of the pass) */
	const uint64_t *row =
	    c->obits && ph < c->nph ? c->obits + ((size_t)ph * c->n + u) * c->ow : NULL;
	for (size_t i = lo; i < c->r->prog.nxfers && c->ports[i] >> 16 == key; i++) {
		uint32_t o = pc_add(c, (uint32_t)(c->ports[i] & 0xffff), u);

		if (c->abs && c->abs[o])
			continue; /* a failed host's block: dropped */
		if (row ? row[o / 64] >> (o % 64) & 1 : over_get(c, ph, u, o) != NULL)
			continue;
		if (!say)
			return -1;
		return pfail(c, 0, "node %u (unpatched) %s block %u over the failed arc %u -> %u",
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
	struct pairs_of pairs[CAUSAL_PORTS];
	bool skip[CAUSAL_PORTS];
};

/* late_readers' answer (say false) past its first test, from rs. */
static bool readers_early(const struct pcheck *c, const struct readers *rs, uint32_t ph, uint32_t o,
			  uint32_t h)
{
	for (uint32_t r = 0; r < rs->n; r++) {
		const struct pairs_of *q = &rs->pairs[r];
		const uint32_t *m;

		if (rs->skip[r] || (q->bits[o / 64] >> (o % 64) & 1))
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
	/* no initializer: zeroing its 1.5 KB a bucket was a sixteenth of the
	 * pass; what it reads is set below */
	struct readers rs;
	bool fast;

	rs.n = rd->off[x + 1] - rd->off[x];
	fast = c->obits && rs.n <= CAUSAL_PORTS;

	(void)wid;
	for (uint32_t r = 0; fast && r < rs.n; r++) {
		uint32_t u = rd->adj[rd->off[x] + r];

		rs.u[r] = u;
		rs.rel[r] = pc_sub(c, x, u);
		rs.pairs[r] = pairs_of(c, ph, u);
		rs.skip[r] = c->inr[u] || (c->abs && c->abs[u]);
	}
	for (uint32_t j = (uint32_t)c->obk[b]; j < c->oend[b]; j++) {
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
int base_untouched(struct pcheck *c)
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
