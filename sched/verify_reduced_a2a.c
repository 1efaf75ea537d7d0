/* The check by symmetry's all-to-all by sorting: what the representatives
 * hold and are delivered, checked by sorting events, before the step loop
 * (verify_reduced_step.c reports the first failure found where it
 * stands).
 *
 * What a representative holds of a block (o, t) is keyed r N^2 + o N + t
 * as it sees it, one key per program transfer's delivery: a check by
 * lookups is a cache miss per transfer (a hash of millions of keys), where
 * generation writes in order. So the transfers become events, a read (the
 * sender must hold the piece at the start of its step) and a write (the
 * receiver holds it after), emitted step by step, the step's reads before
 * its writes; sorted by key with that order kept within a key, one pass
 * over each key's events checks every read against the writes before it.
 *
 * An event is one 8-byte word: events of 20 bytes (key, transfer, piece)
 * and the second array of an LSD sort were 2 GB at torus:256x256, and
 * most of the check's time was the kernel zeroing their fresh pages. The
 * key's high bits pick a bucket (a counting pass, then the events written
 * straight into their buckets in emission order, which each bucket so
 * keeps); the word holds the key's low bits (on top, what the sort
 * reads), the piece's number when the program has few distinct pieces
 * (a path's piece is the same at every hop: 8 at torus:256x256), and the
 * transfer; each bucket is sorted (stable LSD, its scratch in cache) and
 * checked on its own. Without piece numbers the check reads the piece
 * back from the transfer, a cache miss each. */
#include "sched/verify_reduced_internal.h"

#include <stdlib.h>
#include <string.h>

/* The representative, its node, and the origin / target of a key r N^2 +
 * o N + t (by shifts when N is a power of two: these run per transfer). */
static uint32_t key_class(const struct rstate *v, uint64_t key)
{
	return (uint32_t)(v->lgn ? key >> 2 * v->lgn : key / ((uint64_t)v->n * v->n));
}

static uint32_t key_rep(const struct rstate *v, uint64_t key)
{
	return sched_group_rep_node(&v->r->group, key_class(v, key));
}

static uint32_t key_origin(const struct rstate *v, uint64_t key)
{
	return (uint32_t)(v->lgn ? (key >> v->lgn) & (v->n - 1) : key / v->n % v->n);
}

static uint32_t key_target(const struct rstate *v, uint64_t key)
{
	return (uint32_t)(v->lgn ? key & (v->n - 1) : key % v->n);
}

enum {
	A2A_BUCKET_EVENTS = 1 << 14, /* a bucket and its scratch in L2 */
};

struct a2a_sort {
	unsigned shift;		  /* key = bucket << shift | low bits (the word's top shift bits) */
	unsigned xbits;		  /* transfer << 1 | write: the word's low xbits */
	size_t nbuckets;	  /* up to (maxkey - 1) >> shift */
	size_t *start;		  /* bucket b's events start[b] .. start[b + 1] - 1 */
	uint64_t *ev;		  /* the words */
	struct piece_numbers num; /* between transfer and key */
};

/* The key's low bits in a word. */
static uint64_t ev_low(const struct a2a_sort *s, uint64_t w)
{
	return s->shift ? w >> (64 - s->shift) : 0;
}

/* Transfer x's read at its sender (write: its write at its receiver) as a
 * key; false when there is no event: a transfer check_xfer rejects, or a
 * node's own block (written back to it: a duplicate, counted once, by the
 * counting pass). */
static bool a2a_ev_key(struct rstate *v, const struct xfer *x, bool write, bool count,
		       uint64_t *key)
{
	const struct sched_group *G = &v->r->group;
	uint32_t n = v->n, u = write ? x->dst : x->src, h = u, r = 0, o;

	if (x->src >= n || x->dst >= n || x->src == x->dst || x->block >= (uint64_t)n * n ||
	    x->length == 0 || (uint64_t)x->offset + x->length > SCHED_ONE)
		return false; /* check_xfer's to report */
	/* Node u's block (o, t) as its representative r sees it: r N^2 + (o -
	 * h) N + (t - h), u = r + h. */
	if (v->swar) { /* both subtractions at once */
		uint64_t a = x->block, b = (uint64_t)u * (n + 1);

		*key = ((a | v->swar) - (b & ~v->swar)) ^ ((a ^ ~b) & v->swar);
		o = (uint32_t)(*key >> v->lgn);
		if (o) /* the representative is node 0 */
			return true;
	} else {
		if (G->reps > 1)
			r = sched_group_split(G, u, &h);
		o = sched_group_sub(G, v->lgn ? x->block >> v->lgn : x->block / n, h);
		*key = ((uint64_t)r * n + o) * n +
		       sched_group_sub(G, v->lgn ? x->block & (n - 1) : x->block % n, h);
	}
	if (o != sched_group_rep_node(G, r))
		return true;
	if (write && count) /* its own block back at its origin */
		v->dup += sched_frac(x->length);
	return false; /* a node holds its own blocks */
}

/* The events of the program into their buckets, each in emission order. */
static void a2a_events(struct rstate *v, struct a2a_sort *s)
{
	const struct schedule *p = &v->r->prog;
	uint64_t maxkey = (uint64_t)v->reps * v->n * v->n, key;
	unsigned keybits = 64 - (unsigned)__builtin_clzll(maxkey - 1), bbits = 0;
	size_t nev;

	/* As many buckets as fill L2 on average, and enough that the low
	 * bits fit 32 bits (the transfer takes up to 32). */
	while (bbits < keybits &&
	       (((size_t)2 * p->nxfers >> bbits) > A2A_BUCKET_EVENTS || keybits - bbits > 32))
		bbits++;
	s->shift = keybits - bbits;
	s->xbits = p->nxfers > 1 ? 65 - (unsigned)__builtin_clzll(p->nxfers - 1) : 1;
	unsigned pbits = 64 - s->shift - s->xbits;
	piece_numbers_init(&s->num, pbits);
	s->nbuckets = (size_t)((maxkey - 1) >> s->shift) + 1;
	s->start = xcalloc(s->nbuckets + 1, sizeof(size_t));
	s->ev = NULL;
	/* One bucket (a small program): every event in it, no counting. */
	int first = s->nbuckets > 1 ? 0 : 1;
	if (first)
		s->ev = xmalloc((2 * p->nxfers + 1) * sizeof(*s->ev));
	bool numbered = true;
	for (int pass = first; pass < 2; pass++) {
		for (uint32_t t = 0; t < p->nsteps; t++)
			for (int write = 0; write < 2; write++)
				for (size_t xi = p->step_start[t]; xi < p->step_start[t + 1];
				     xi++) {
					const struct xfer *x = &p->xfers[xi];

					if (!a2a_ev_key(v, x, write, pass == first, &key))
						continue;
					size_t b = (size_t)(key >> s->shift);
					if (!pass) {
						s->start[b + 1]++;
						continue;
					}
					uint64_t w = (uint64_t)(xi << 1 | (size_t)write);
					if (numbered) {
						w |= piece_number(&s->num, x->offset,
								  x->offset + x->length)
						     << s->xbits;
						numbered = s->num.n > 0;
					}
					if (s->shift)
						w |= key << (64 - s->shift);
					s->ev[s->start[b]++] = w;
				}
		if (pass) /* start[b] went to bucket b's end, start[b + 1] */
			break;
		for (size_t b = 0; b < s->nbuckets; b++)
			s->start[b + 1] += s->start[b];
		nev = s->start[s->nbuckets];
		s->ev = xmalloc((nev ? nev : 1) * sizeof(*s->ev));
	}
	memmove(s->start + 1, s->start, s->nbuckets * sizeof(size_t));
	s->start[0] = 0;
}

/* Keep the earlier failure: by step (the end's is nsteps), then a step's
 * checks before its deliveries before the end, then transfer. */
static void a2a_keep_first(struct a2a_failure *f, struct a2a_failure c)
{
	if (f->at == A2A_NONE || c.step < f->step ||
	    (c.step == f->step && (c.at < f->at || (c.at == f->at && c.xi < f->xi))))
		*f = c;
}

static uint32_t xfer_step(const struct schedule *p, size_t xi)
{
	uint32_t lo = 0, hi = p->nsteps; /* step_start[lo] <= xi < step_start[hi] */

	while (hi - lo > 1) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (p->step_start[mid] <= xi)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

/* piece_covers and piece_add where the piece is one interval (nearly
 * always: a path's piece moves on its own), without a call per event. */
static bool held(const struct piecemap *m, const struct piece *e, uint32_t lo, uint32_t hi)
{
	return e->lo == PIECE_LIST ? piece_covers(m, e, lo, hi) : e->lo <= lo && hi <= e->hi;
}

static uint64_t hold(struct piecemap *m, struct piece *e, uint32_t lo, uint32_t hi)
{
	if (e->lo != PIECE_LIST && e->lo == e->hi) { /* empty */
		e->lo = lo;
		e->hi = hi;
		return 0;
	}
	return piece_add(m, e, lo, hi);
}

/* One key's events, ev[0 .. m - 1] in emission order: every read against
 * the writes before it, the deliveries at the target, and whether the
 * target ends with the block whole (done). */
static void a2a_check_key(struct rstate *v, const struct a2a_sort *s, uint64_t key,
			  const uint64_t *ev, size_t m, struct piecemap *lists, uint8_t *done)
{
	const struct schedule *p = &v->r->prog;
	uint32_t n = v->n, me = key_rep(v, key);
	bool at_target = key_target(v, key) == me;
	uint64_t xmask = (1ull << s->xbits) - 1, pmask = s->num.max - 1;
	struct piece e = {0};

	for (size_t i = 0; i < m; i++) {
		size_t xi = (size_t)(ev[i] & xmask) >> 1;
		uint32_t lo, hi;

		if (s->num.n) {
			const struct piece *q = &s->num.piece[(ev[i] >> s->xbits) & pmask];

			lo = q->lo;
			hi = q->hi;
		} else {
			lo = p->xfers[xi].offset;
			hi = lo + p->xfers[xi].length;
		}
		if (!(ev[i] & 1)) {
			if (!held(lists, &e, lo, hi)) {
				a2a_keep_first(&v->afail, (struct a2a_failure){
							      A2A_AT_CHECK, xfer_step(p, xi), xi});
				break;
			}
			continue;
		}
		uint64_t ov = hold(lists, &e, lo, hi);
		if (ov && at_target) {
			a2a_keep_first(&v->afail,
				       (struct a2a_failure){A2A_AT_DELIVERY, xfer_step(p, xi), xi,
							    key_origin(v, key), me});
			v->dup += sched_frac((uint32_t)ov);
			break;
		}
		v->dup += sched_frac((uint32_t)ov);
	}
	if (at_target && piece_covers(lists, &e, 0, SCHED_ONE))
		done[(size_t)key_class(v, key) * n + key_origin(v, key)] = 1;
	piece_clear(lists, &e);
	lists->nlists = 0;
}

/* Checks what every all-to-all transfer reads and writes (the transfers
 * themselves, their nodes, blocks and ports, are check_xfer's: a bad one
 * is left out here) and the final state; the first failure in step order
 * goes to v->afail, duplicates to v->dup. */
void reduced_a2a_sorted(struct rstate *v)
{
	const struct schedule *p = &v->r->prog;
	const struct sched_group *G = &v->r->group;
	uint32_t n = v->n;
	struct a2a_sort *s = xmalloc(sizeof(*s));
	size_t most = 1;

	a2a_events(v, s);
	for (size_t b = 0; b < s->nbuckets; b++)
		most = s->start[b + 1] - s->start[b] > most ? s->start[b + 1] - s->start[b] : most;
	uint64_t *tmp = xmalloc(most * sizeof(*tmp));
	uint8_t *done = xcalloc((size_t)v->reps * n, 1);
	struct piecemap lists = {0}; /* the one key in several pieces at a time */
	for (size_t b = 0; b < s->nbuckets; b++) {
		size_t m = s->start[b + 1] - s->start[b];
		const uint64_t *ev = sched_sort_top(s->ev + s->start[b], tmp, m, s->shift);

		for (size_t i = 0, j, ahead = 0; i < m; i = j) {
			for (j = i + 1; j < m && ev_low(s, ev[j]) == ev_low(s, ev[i]); j++)
				;
			/* unnumbered pieces: the transfers some events on, a
			 * cache miss each */
			for (; !s->num.n && ahead < j + 16 && ahead < m; ahead++)
				__builtin_prefetch(
				    &p->xfers[(size_t)(ev[ahead] & ((1ull << s->xbits) - 1)) >> 1]);
			a2a_check_key(v, s, (uint64_t)b << s->shift | ev_low(s, ev[i]), ev + i,
				      j - i, &lists, done);
		}
	}
	for (uint32_t r = 0; r < v->reps && v->afail.at != A2A_AT_END; r++) {
		uint32_t me = sched_group_rep_node(G, r);

		for (uint32_t o = 0; o < n; o++)
			if (o != me && !done[(size_t)r * n + o]) {
				a2a_keep_first(&v->afail, (struct a2a_failure){
							      A2A_AT_END, p->nsteps, 0, o, me});
				break;
			}
	}
	piecemap_free(&lists);
	free(done);
	free(tmp);
	free(s->ev);
	free(s->start);
	free(s);
}
