/* Private to sched/patch*.c: the patched schedule's check (patch.c, its
 * order in time patch_causal.c) and its link loads (patch_loads.c) share
 * its tables, and the check and the expansion (patch_expand.c) its map of
 * keys. */
#ifndef OFC_SCHED_PATCH_CHECK_H
#define OFC_SCHED_PATCH_CHECK_H

#include "sched/internal.h"

#include <stdarg.h>
#include <stdio.h>

/* A small map of 48-bit keys (open addressing, patch_kmap.c). */
struct kmap {
	uint64_t *key; /* key + 1; 0 empty */
	uint32_t *val;
	size_t cap, used;
};

void kmap_init(struct kmap *m, size_t expect);
void kmap_free(struct kmap *m);
uint32_t *kmap_get(const struct kmap *m, uint64_t key);
/* The value of key, made with v when new; grows at half full. */
uint32_t *kmap_put(struct kmap *m, uint64_t key, uint32_t v);

/* (phase, a, b) as a kmap key: node ids are 16 bits (struct xfer) */
static inline uint64_t key3(uint32_t ph, uint32_t a, uint32_t b)
{
	return (uint64_t)ph << 32 | (uint64_t)(a & 0xffff) << 16 | (b & 0xffff);
}

/* The failed hosts of p as one byte per node (n), or NULL when none
 * (patch.c). */
uint8_t *absent_map(const struct sched_patch *p, uint32_t n);

/* A piece the patch plans outside its region, in its (phase, owner)
 * bucket, which is the rest of its key (partial_cover, patch.c): most
 * are a whole block, kept in 8 bytes (16 with their range and time were
 * 172 MB at 8,192 nodes with 1% of the ports failed, the kernel's
 * zeroing of it a fifth of the check's CPU; 86 MB now, and 18 MB for
 * the 1.5 M parts); t is the time of a whole one, or OPIECE_PART and
 * the place of the part's range and time in opart. */
struct opiece {
	uint16_t block; /* node ids are 16 bits (struct xfer) */
	uint16_t port;	/* the owner's: a reduction's lane, a copy's in_arcs place */
	uint32_t t;
};
#define OPIECE_PART (UINT32_C(1) << 31)
struct opart {
	uint32_t off, end, tau;
};

/* What the check of a patched schedule knows (sched_verify_patched). */
struct pcheck {
	const struct sched_reduced *r;
	const struct sched_patch *p;
	const struct graph *g, *gt;
	const bool *gone; /* the caller's, with every arc of a failed host */
	bool *own_gone;
	uint32_t n, S; /* S: the reduction phase's steps (copies start there) */
	/* the phases checked: 2, or 1 (the copies) where the reductions are
	 * their mirrors (pcheck_mirrored); the patch's transfers checked are
	 * then those from xlo (0 with both) */
	uint32_t nph;
	size_t xlo;
	uint8_t *inr;
	uint8_t *abs;	     /* the failed hosts, or NULL */
	uint32_t need;	     /* blocks a region node needs in a phase */
	uint32_t *hb[2];     /* base: node 0 holds block b after time hb[ph][b] */
	struct kmap minsend; /* base: (ph, sender - owner, block - owner) -> first time */
	uint64_t *ports;     /* base: (ph, src - owner, port) << 16 | block, ascending */
	uint32_t *ridx;	     /* per node: its index in the region, or UINT32_MAX */
	uint32_t *hold;	     /* per program (ph, region index) and block: held after */
	/* outside the region, the (ph, owner, block) pairs planned: per
	 * (ph, owner) = ph n + owner, oblk[obk[.] .. oend[.]) ascending, where
	 * the bucket's pieces start (not moved down to close the gaps: a
	 * serial pass of 28 MB at 8,192 nodes), ohold the time the owner
	 * holds each after (a binary search in a short list: a hash map's
	 * lookup was a cache miss per patch transfer, most of the check's
	 * time at 8,192 nodes) */
	uint32_t *oend, *ohold;
	uint16_t *oblk; /* node ids are 16 bits (struct xfer) */
	/* the same pairs as a bit per block in a row of ow words per (ph,
	 * owner), and per word the owner's pairs before it: a pair's index
	 * in its bucket is its bit's rank, one cache line or two where the
	 * search above took a dozen (a tenth of the answer at 8,192 nodes).
	 * Written as partial_cover finds the pairs, a bucket's blocks in
	 * order, from the bits it finds them by (a pass of its own and 32-bit
	 * ranks were 0.02-0.03 s of the check at 8,192 nodes and 4 MiB more
	 * fresh pages). NULL above PATCH_INDEX_MAX bytes (patch.c) (10 bytes a
	 * word: 20 MiB at 8,192 nodes, 1.25 GiB at 65,536), the search then */
	uint64_t *obits;
	uint16_t *orank; /* < n: node ids are 16 bits */
	uint32_t ow;
	/* the pieces of those pairs by (ph, owner) bucket, each in the
	 * patch's order: opc[obk[ph n + owner] .. obk[ph n + owner + 1]) */
	struct opiece *opc;
	struct opart *opart;
	size_t *obk;
	uint32_t *bstart; /* base transfers by (ph, block): bidx[bstart[ph n + b] ..] */
	uint32_t *bidx;
	uint32_t *tails; /* of g's arcs */
	/* g's arcs by head: v's are in_arcs[in_off[v] .. in_off[v + 1]),
	 * arc a at place inpos[a] there */
	uint32_t *in_off, *in_arcs;
	uint16_t *inpos;
	uint32_t *bstep; /* per base transfer: its step */
	uint32_t ghi;	 /* sched_group_high(the group): 0 where none */
	struct verify_report *rep;
};

/* The check refused: the reason in c->rep, at step; -1. */
static inline int pfail(struct pcheck *c, uint32_t step, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static inline int pfail(struct pcheck *c, uint32_t step, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->rep->error, sizeof(c->rep->error), fmt, ap);
	va_end(ap);
	c->rep->ok = false;
	c->rep->bad_step = step;
	return -1;
}

/* Every patch transfer after its sender holds the block; then the base's
 * nodes: none reads a patched block before it is held, none moves a block
 * it still plans by the base over a gone arc (patch_causal.c). */
int patch_causal(struct pcheck *c);
int base_untouched(struct pcheck *c);

/* A transfer read as an allgather's (patch.c's head comment): its phase
 * (1: a reduction), its time, the node that sends the piece. */
static inline uint32_t phase_of(const struct xfer *x)
{
	return xfer_op(x) == XFER_REDUCE;
}

static inline uint32_t tau(const struct pcheck *c, const struct xfer *x, uint32_t t)
{
	return phase_of(x) ? c->S - t : t - c->S + 1;
}

static inline uint32_t sender(const struct xfer *x)
{
	return xfer_op(x) == XFER_REDUCE ? x->dst : x->src;
}

/* The step of q's transfer i (step_start ascending: a few compares in
 * a short table, where a table per transfer would cost 4 bytes each). */
static inline uint32_t step_of(const struct schedule *q, size_t i)
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

/* c->ghi from c->r's group (patch.c) */
void pcheck_group_fields(struct pcheck *c);

/* a - b in the group: one word operation where its coordinates tile the
 * ids' bits (sched_group_sub_word), else the group's loop */
static inline uint32_t pc_sub(const struct pcheck *c, uint32_t a, uint32_t b)
{
	if (c->ghi)
		return sched_group_sub_word(c->ghi, a, b);
	return sched_group_sub(&c->r->group, a, b);
}

/* a + b in the group, as pc_sub */
static inline uint32_t pc_add(const struct pcheck *c, uint32_t a, uint32_t b)
{
	if (c->ghi)
		return sched_group_add_word(c->ghi, a, b);
	return sched_group_add(&c->r->group, a, b);
}

/* The hold of block o among a bucket's pairs (hold by block ascending;
 * bits and rank its row of struct pcheck's obits and orank), or NULL. */
static inline const uint32_t *pairs_find(const uint64_t *bits, const uint16_t *rank,
					 const uint32_t *hold, uint32_t o)
{
	uint64_t w = bits[o / 64], m = UINT64_C(1) << (o % 64);

	return w & m ? &hold[rank[o / 64] + popcount64(w & (m - 1))] : NULL;
}

static inline uint32_t opiece_off(const struct pcheck *c, const struct opiece *pc)
{
	return pc->t & OPIECE_PART ? c->opart[pc->t & ~OPIECE_PART].off : 0;
}

static inline uint32_t opiece_end(const struct pcheck *c, const struct opiece *pc)
{
	return pc->t & OPIECE_PART ? c->opart[pc->t & ~OPIECE_PART].end : SCHED_ONE;
}

static inline uint32_t opiece_tau(const struct pcheck *c, const struct opiece *pc)
{
	return pc->t & OPIECE_PART ? c->opart[pc->t & ~OPIECE_PART].tau : pc->t;
}

/* Whether c's allreduce is mirrored, base and patch, on a graph equal to
 * its transpose with c->gone closed under twins: its reduction phase is
 * then right exactly when its copy phase is (patch_mirror.c). */
bool pcheck_mirrored(const struct pcheck *c);

/* The report's link loads, each step's busiest arc, and its transfers
 * (patch_loads.c). */
void patch_loads(struct pcheck *c);

#endif
