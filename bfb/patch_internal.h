/* Private to bfb/patch*.c: one phase of a degraded BFB's patch, what the
 * failures changed in it (patch.c) and the (node, block) re-solve
 * (patch_blocks.c). */
#ifndef OFC_BFB_PATCH_INTERNAL_H
#define OFC_BFB_PATCH_INTERNAL_H

#include "bfb/internal.h"

struct patch_phase {
	const struct graph *g; /* healthy */
	const bool *gone;      /* per arc of g */
	const struct sched_reduced *r;
	const struct sched_group *G;
	bool reverse;	/* reduce-scatter: H = g^T */
	uint32_t first; /* the phase's first step in the program */
	uint32_t D;	/* its steps */
	uint16_t *row0; /* distances from 0 in K = H^T (healthy) */
	uint32_t high;	/* patch_high(G) */
	/* allgather: g's in-arcs of each node (in_arc[in_off[u] ..]) and
	 * every arc's tail */
	const uint32_t *in_off, *in_arc, *tails;
	/* the raised set of each root x in K: the sources w whose distance to
	 * x grew, ascending, with the new distance (row0 and these:
	 * patch_raised allocates them, phase_free frees them) */
	uint32_t *rx_off, *rx_w;
	uint16_t *rx_d;
	uint8_t *partial; /* marked: the nodes planned block by block */
	/* the raised-set search's (root, seed) pairs held at most (0: its
	 * default), past it each root tests every failed arc */
	uint64_t seed_max;
	/* the failed hosts: per node (NULL: none) and ascending */
	const uint8_t *absent;
	const uint32_t *absent_list;
	uint32_t nabsent;
};

/* The raised sets of every root of pp's phase, K = H^T (k: healthy, kin
 * and kout: the degraded K's in- and out-arcs): pp->row0, high, rx_off,
 * rx_w and rx_d (bfb/patch_raise.c; phase_free frees them). */
void patch_raised(struct patch_phase *pp, const struct graph *k, const struct graph *kin,
		  const struct graph *kout, unsigned threads);

/* One phase's planned blocks, as its workers wrote them: pb[k * D + so]
 * worker k's pieces of the phase's step so (pp->first + so in the
 * program), gathered into the schedule after the step's whole nodes'
 * (bfb_view_gather's tail) and freed as they go. */
struct patch_out {
	uint32_t D;
	unsigned nworkers;
	struct piecebuf *pb;
	size_t pieces; /* in all */
};

void patch_out_free(struct patch_out *po);

/* The changed blocks of each of owners (the nodes the phase's failures
 * reach) planned again into po (empty before; patch_out_free frees it,
 * error or not). */
int patch_blocks(const struct patch_phase *pp, const uint32_t *owners, uint32_t nowners,
		 unsigned threads, struct patch_out *po, struct ofc_error *err);

/* sched_group_high(G) where its subtraction is not already one XOR (a
 * binary group's), else 0. */
static inline uint32_t patch_high(const struct sched_group *G)
{
	return G->binary ? 0 : sched_group_high(G);
}

/* a - b in G, by high (patch_high) where it is not 0. The coordinate loop
 * was a third of the patch's search for the nodes a failure moves away
 * from a root. */
static inline uint32_t patch_sub(const struct sched_group *G, uint32_t high, uint32_t a, uint32_t b)
{
	if (high)
		return sched_group_sub_word(high, a, b);
	return sched_group_sub(G, a, b);
}

/* Distances from one root x in the healthy K, row0 at v - x: x's half of
 * patch_sub's word form taken once a root (the subtraction, a call a
 * lookup, was a sixth of the patch's instructions in the search for
 * the raised sets). */
struct patch_root {
	const uint16_t *row0;
	const struct sched_group *G;
	uint32_t x, high;
	uint32_t xlo, xhi; /* x & ~high, ~x & high */
};

static inline void patch_root_init(struct patch_root *pr, const uint16_t *row0,
				   const struct sched_group *G, uint32_t high, uint32_t x)
{
	*pr = (struct patch_root){
	    .row0 = row0, .G = G, .x = x, .high = high, .xlo = x & ~high, .xhi = ~x & high};
}

/* row0[v - x] (patch_sub's formula with x's terms ready) */
static inline uint32_t patch_rdist(const struct patch_root *pr, uint32_t v)
{
	if (pr->high)
		return pr->row0[((v | pr->high) - pr->xlo) ^ ((v & pr->high) ^ pr->xhi)];
	return pr->row0[sched_group_sub(pr->G, v, pr->x)];
}

#endif
