/* Theorem 4's period checked (fluid/pipe.c) in parts: the files that
 * share its work see each other here. */
#ifndef OFC_FLUID_PIPE_INTERNAL_H
#define OFC_FLUID_PIPE_INTERNAL_H

#include "fluid/fluid.h"

/* ---- steps.c ---- */
/* Piece q's (one of p's routing's) hops in a step's order: its j-th is hop
 * q->first + pipe_order(p, q)[j]. */
static inline const uint32_t *pipe_order(const struct fluid_pipe *p, const struct fluid_piece *q)
{
	return p->order + p->order_at[q - p->r->routing.pieces];
}
/* Piece q's transfers at forward step t (the pattern's layer t - k for
 * chunk k) into out, in fluid_pipe_fill_step's order; past the last. */
struct xfer *pipe_fill_piece(const struct fluid_pipe *p, const struct fluid_piece *q, uint32_t t,
			     struct xfer *out);
/* The cost's sum (every transfer's arc's cost times its part, len /
 * 2^31, added in a fixed order from a start) without its terms one by
 * one. Where every cost >= 0 is m 2^e with m < PIPE_COST_MANT, each term
 * is exact and a whole number of units 2^(X - 31), X the least e; where
 * the start too is whole units and the total is under 2^53 units, every
 * partial sum (costs >= 0: at most the total) is a double, so no add
 * rounds and the sum in any order is the exact one. */
#define PIPE_COST_MANT (1u << 21) /* m len < 2^53 for len <= 2^31 */
/* units[a]: arc a's cost in units (narcs of them), X into *x; false
 * where a cost is not of that form (sum term by term). */
bool pipe_cost_units(const double *cost, uint32_t narcs, uint64_t *units, int *x);
/* *total += units x parts, held at 2^53 once past it (then not exact). */
void pipe_cost_add(unsigned __int128 *total, unsigned __int128 units, uint64_t parts);
/* start + total units into *sum where no add of the serial sum rounds
 * (start whole units, the whole under 2^53 units); else false. */
bool pipe_cost_exact(double start, unsigned __int128 total, int x, double *sum);
/* Piece q's parts over its K chunks (fixed point). */
uint64_t pipe_piece_parts(const struct fluid_piece *q, uint32_t K);

/* ---- pipe_pattern.c ----
 * The pattern, one chunk of the whole of each block, through sched_verify
 * on the network with no capacity, as parts a thread each: each root's
 * block alone where the collective allows (an allgather, a
 * reduce-scatter), else the whole pattern as one part. Start it, run its
 * items (any order, any threads), end it: the verdict and the report, the
 * whole pattern's where a part failed. */
struct pipe_pattern {
	const struct fluid_pipe *p;
	struct fluid_pipe base; /* p at K = 1: its count owned, the rest p's */
	struct verify_network vn;
	double *bw, *set_bw;	/* INFINITY each: vn's */
	uint32_t *root, nroots; /* the roots checked alone; 0: the whole as one item */
	uint32_t *off, *idx;	/* each root's pieces: idx[off[b]..off[b + 1]] */
	/* Roots whose pieces are another root's moved by a symmetry of the
	 * network take that root's verdict (pipe_mirror.c): mirror[i] the
	 * root (index) checked for root i, itself where i is checked; the
	 * items are the roots checked, item[0..nitems). */
	uint32_t *mirror, *item, nitems;
	bool *ok;		    /* each root's verdict */
	double *dup;		    /* each root's duplicates */
	struct verify_report whole; /* the whole's report, nroots == 0 */
};
/* pipe_mirror.c: pp's mirror and items from p->group (every root an item
 * where there is none). */
void pipe_mirror_plan(struct pipe_pattern *pp);
/* Items to run: 1 (the whole) or a root checked each. */
size_t pipe_pattern_start(struct pipe_pattern *pp, const struct fluid_pipe *p,
			  const struct verify_network *vn);
void pipe_pattern_item(struct pipe_pattern *pp, size_t i);
/* rep: sched_verify's report of the whole pattern (network_cost left 0
 * where the parts passed: the caller's sum replaces it); frees pp's. */
int pipe_pattern_end(struct pipe_pattern *pp, struct verify_report *rep);

#endif
