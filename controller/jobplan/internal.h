/* Private to controller/jobplan/. */
#ifndef OFC_CONTROLLER_JOBPLAN_INTERNAL_H
#define OFC_CONTROLLER_JOBPLAN_INTERNAL_H

#include "controller/jobplan/jobplan.h"

struct jobplan_ctx {
	const struct jobplan_query *q;
	struct jobplan_result *r;
	const struct fabric *f;
	const struct workload *w;
	uint32_t n, d;
};

/* candidates.c: r->topo filled (at least the config's or one other). */
int jobplan_candidates(struct jobplan_ctx *c, struct ofc_error *err);
void jobplan_topo_free(struct jobplan_topo *t);
/* candidates.c: an earlier phase the same as p (collective, groups, size,
 * direction, matrix), or -1: its prices and its traffic's topology are
 * p's. */
int jobplan_same_phase(const struct workload *w, uint32_t p);
/* ways.c: the circuits that change from A to B. */
void jobplan_diff_make(const struct jobplan_topo *A, const struct jobplan_topo *B,
		       struct jobplan_diff *d);
/* assign.c: pairs u -> v (v != u) with weights >= 0, by u (CSR); pairs
 * not listed weigh 0. */
struct jobplan_arcs {
	uint32_t n;
	uint32_t *off; /* n + 1 */
	uint32_t *to;
	double *w;
};
/* A permutation to[] of the n >= 2 nodes with no to[u] == u and the most
 * weight. Sparse: n shortest-path searches over the listed pairs (4,096
 * hosts of a training iteration's traffic in 0.3 s a port; every pair
 * listed, n^3 as a dense Hungarian). Returns 1; 0 when a most-weight
 * matching of the pairs left one node over on both sides (the pair that
 * lost least took it in between: within that pair's weight of the best);
 * -1 when the clock passed deadline (to[] undefined). */
int jobplan_assign(const struct jobplan_arcs *g, uint32_t *to, double deadline);
/* price.c: phase p on candidate t. */
void jobplan_price(struct jobplan_ctx *c, uint32_t p, uint32_t t, struct jobplan_cost *out);
/* The graph on members mem[0..k-1] of g (node i = mem[i]) with g's arcs
 * among them, in g's order; gmap[a] the arc of g that arc a of it is. */
struct graph *jobplan_induced(const struct graph *g, const uint32_t *mem, uint32_t k,
			      uint32_t **gmap);

#endif
