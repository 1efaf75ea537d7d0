/* Private to alltoall/: what its files call of one another beyond the
 * MCF's own (mcf_internal.h): the MCF's solve for the lowerings, its
 * translations, kept solutions, stand-in and repair, the route sets
 * (routes.c) and their lowerings (alltoall.c); the white-box unit tests
 * and benchmarks call them too. */
#ifndef OFC_ALLTOALL_INTERNAL_H
#define OFC_ALLTOALL_INTERNAL_H

#include "alltoall/alltoall.h"

/* The all-to-all MCF as a2a_build and a2a_reduced solve it: time-stepped
 * when *steps, and by default (q->lowering NULL) only when that proves its
 * optimum within q->steps_try; else the fluid MCF, *steps false and
 * o->fallback saying why. Sets o->lowering and o->cut_through. */
struct topo_facts;
int a2a_solve(const struct graph *g, const struct a2a_request *q, const struct topo_facts *f,
	      bool *steps, struct mcf_result *m, struct a2a_outcome *o, struct ofc_error *err);

/* The time-stepped MCF (steps, the diameter) on a Cayley graph of
 * translations G from the fluid flow (alltoall/steps_fluid.c): node 0's
 * fluid routes averaged over the automorphisms fixing node 0 that keep
 * its ports, hop i at step i. 1 with m the time-stepped result (routes node
 * 0's, symmetric) when their per-step loads meet the fluid optimum, which
 * proves them the time-stepped optimum; 0 (m empty) when they do not or no
 * such automorphism is found; -1 when the fluid solve fails. */
int a2a_steps_by_symmetry(const struct graph *g, const struct sched_group *G,
			  const struct a2a_request *q, uint32_t steps, struct mcf_result *m,
			  struct ofc_error *err);

/* The port-preserving translations of g (see above): perm[s * n + u] for all
 * s (perm may be NULL to only test). true when g is such a Cayley graph. */
bool mcf_translations(const struct graph *g, uint32_t *perm, unsigned threads);

/* A fluid solution kept (mcf_start.c, read by mcf_repair.c too) to warm-start another graph's
 * (mcf_opts.warm). Trees are per class of sources (a class's representative rep[k]); the group
 * elements (order of them: node and arc maps) carry a class's trees to every source in it, each
 * image at 1 / (elements taking rep to it) of the tree's weight, as cg_mirror_routes spreads them.
 */
struct mcf_warm {
	uint32_t n, m;
	uint32_t *off, *head; /* the graph it was solved on (CSR) */
	uint32_t nclass, *class_of, *rep;
	uint32_t order, *gnode, *garc;
	uint32_t ntrees, *tree_class, *parent; /* parent: n arcs per tree */
	double *tree_w;			       /* of its source's unit demand */
	double *price;			       /* per arc: the best bound's lengths */
	double objective;
};

/* (mcf_repair.c) w's arcs on g (a graph with w's nodes and a subset of its arcs: by tail,
 * head and rank among parallel arcs): g's index, UINT32_MAX for a lost
 * one (w->m + 1 entries). */
uint32_t *mcf_warm_arc_map(const struct graph *g, const struct mcf_warm *w);

/* (mcf_repair.c) The kept flow's load on w's arcs arcs[0..narcs), into load[]. */
void mcf_warm_loads(const struct mcf_warm *w, const uint32_t *arcs, uint32_t narcs, double *load);

/* Re-planning by repair (mcf_repair.c): the kept healthy
 * solution (opts->warm) on g, a graph less lost arcs, with the flow of a
 * region around them (radius -1: the lost arcs alone; r: every arc at a
 * node within r hops of their ends) rerouted by the LP that keeps the most
 * loaded arc lowest, the rest of it kept; and the kept lengths' bound on g.
 * objective INFINITY (why says why) when no reroute was found; -1 only
 * when cancelled. */
struct mcf_repair {
	double objective; /* the repaired flow's: max over g's arcs of load / capacity */
	double lower;	  /* the kept lengths' Lagrangian bound on g */
	double seconds;
	int radius;  /* of the region whose flow was rerouted (-1: the lost arcs) */
	uint32_t nk; /* the reroute's commodities: ends of runs in the region */
	const char *why;
	/* private to mcf_repair.c */
	const struct graph *g;
	const struct mcf_warm *w;
	const double *cap;
	const atomic_bool *cancel;
	uint32_t *map, *tail, *wtail; /* w's arcs on g, g's tails, w's tails */
	uint8_t *inr;		      /* per arc of w: in the region */
	uint32_t *eidx, *ends;	      /* node -> commodity ending there, and back */
	double *load;		      /* per arc of g: the healthy load kept */
	double *b;		      /* nk x n: each commodity's supply per node */
	size_t *ku;		      /* paths of (k, u): ku[k n + u] .. ku[k n + u + 1] - 1 */
	size_t npaths, nhops, cap_pw, cap_poff, cap_parc;
	size_t *poff;
	uint32_t *parc; /* arcs of g */
	double *pw;
};
int mcf_repair_solve(const struct graph *g, const struct mcf_opts *o, int radius,
		     struct mcf_repair *rp, struct ofc_error *err);
/* Every pair's routes of the repaired flow into rt (not symmetric), and the
 * objective they give (<= rp->objective: loops cut). */
int mcf_repair_routes(struct mcf_repair *rp, struct a2a_routes *rt, double *objective,
		      struct ofc_error *err);
void mcf_repair_free(struct mcf_repair *rp);

/* The child LP (10)-(14) of source s: max theta_s with the per-destination
 * flows of s inside the capacities cap[a] (the master's g^s). */
int mcf_child_lp(const struct graph *g, uint32_t s, const double *cap, double *theta_s,
		 struct ofc_error *err);

/* ---- route sets (routes.c) and their lowerings (alltoall.c), under
 * a2a_build ------------------------------------------------------------- */
/* Append a route of len hops, source first; step NULL: hop i at step i
 * (no step array is kept while every route so far has none). */
void a2a_routes_add(struct a2a_routes *rt, uint32_t s, uint32_t t, double w, const uint32_t *arc,
		    const uint32_t *step, size_t len);
/* Append a route of len hops, hop i at step i, whose arcs the caller
 * writes into the array returned (source first): no copy of them. */
uint32_t *a2a_routes_push(struct a2a_routes *rt, uint32_t s, uint32_t t, double w, size_t len);
/* Room for `routes` more routes of `hops` hops in all, so that the ones
 * added next do not grow the arrays (each doubling of the hops a copy, and
 * up to twice their memory fresh). */
void a2a_routes_reserve(struct a2a_routes *rt, size_t routes, size_t hops);
/* Route r's steps, NULL when the routes have none (hop i at step i). */
static inline const uint32_t *a2a_route_steps(const struct a2a_routes *rt, size_t r)
{
	return rt->step ? rt->step + rt->off[r] : NULL;
}

/* The route sets part[0 .. nparts - 1], built side by side, appended to
 * out (empty so far; its n, symmetric and perm kept) in that order, on
 * up to `threads` threads; each part freed. */
void a2a_routes_join(struct a2a_routes *out, struct a2a_routes *part, size_t nparts,
		     unsigned threads);
/* Symmetric routes to every source's (by the translations). */
void a2a_routes_expand(const struct graph *g, struct a2a_routes *rt, unsigned threads);
/* Keep the max_paths heaviest paths of every pair, weights renormalised. */
void a2a_routes_limit(struct a2a_routes *rt, uint32_t max_paths, unsigned threads);
/* One path per pair among its routes, greedy by load (over capacity, per
 * arc; NULL: 1) then improved by rerouting passes; weights become 1. */
/* demand (n x n, or NULL: 1 each): a route weighs its pair's demand. */
void a2a_routes_single(const struct graph *g, const double *cap, const double *demand,
		       struct a2a_routes *rt);
/* The same for node 0's routes on a Cayley graph, loads per port (every
 * arc of port j carries what node 0's routes put on j). */
void a2a_routes_single_ports(const struct graph *g, const double *cap, struct a2a_routes *rt);
/* demand (n x n, or NULL): pairs asking for 0 are not routed; sp-balanced
 * weighs a route by its pair's demand. */
int a2a_direct_routes(const struct graph *g, const double *demand, struct a2a_routes *rt,
		      struct ofc_error *err);
int a2a_balanced_routes(const struct graph *g, const double *demand, uint64_t seed,
			const struct ofc_clock *clock, struct a2a_routes *rt,
			struct ofc_error *err);
/* The same rules for node 0's pairs alone, the reduced programs on a Cayley
 * graph: direct's BFS tree (the explicit routes' representative), and
 * sp-balanced's rule with loads per port (its symmetric schedule). */
int a2a_direct_routes_0(const struct graph *g, struct a2a_routes *rt, struct ofc_error *err);
int a2a_balanced_routes_0(const struct graph *g, const struct sched_group *G, uint64_t seed,
			  const struct ofc_clock *clock, struct a2a_routes *rt,
			  struct ofc_error *err);
/* The most shards one link carries over all routes, over its capacity
 * (cap per arc; NULL: 1) (a cut-through schedule's bandwidth term), a
 * pair's shard being demand[s][t] of them under a demand matrix; and the
 * most paths a pair has. */
double a2a_max_link_load(const struct graph *g, const double *cap, const double *demand,
			 const struct a2a_routes *rt);
uint32_t a2a_max_paths(const struct a2a_routes *rt);
uint32_t a2a_max_hops(const struct a2a_routes *rt);
/* The schedule: `stepped` puts every hop at its step, else hop i of every
 * route at step i, or with `runs` (routed only) the route's straight
 * stretches, one transfer each (xfer.run), run i at step i. Each pair's
 * block is split among its routes by weight. max_port_load (or NULL): the
 * most any port carries, for node 0's routes of a symmetric schedule
 * (every arc of port j carries what they put on port j; unit
 * capacities), summed in the pass that finds the runs (a second pass over
 * torus:256x256's 25 M hops saved). Built in parts of whole pairs on
 * up to `threads` threads (0: every CPU), joined in route order: the
 * same schedule on any number. */
int a2a_schedule(const struct graph *g, const struct a2a_routes *rt, bool stepped, bool runs,
		 const char *algorithm, struct schedule *s, double *max_port_load, unsigned threads,
		 struct ofc_error *err);
/* Runs as asked, and never with host injection limits (a2a_request). */
static inline bool a2a_runs(const struct a2a_request *q)
{
	return q->runs && !(q->mcf.injection > 0) && !q->mcf.injections;
}

#endif
