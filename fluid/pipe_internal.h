/* Theorem 4's period checked (fluid/pipe.c) in parts: the files that
 * share its work see each other here. */
#ifndef OFC_FLUID_PIPE_INTERNAL_H
#define OFC_FLUID_PIPE_INTERNAL_H

#include "fluid/fluid.h"

/* ---- steps.c ---- */
/* Piece q's transfers at forward step t (the pattern's layer t - k for
 * chunk k) into out, in fluid_pipe_fill_step's order; past the last. */
struct xfer *pipe_fill_piece(const struct fluid_pipe *p, const struct fluid_piece *q, uint32_t t,
			     struct xfer *out);

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
