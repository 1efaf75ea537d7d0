/* fluid's private header: the time-expanded network, the problem a solver
 * sees, and the pieces (full LP, pricing, master, decomposition) that
 * fluid/solve.c strings together. */
#ifndef OFC_FLUID_INTERNAL_H
#define OFC_FLUID_INTERNAL_H

#include "fluid/fluid.h"
#include "rwa/rwa.h"

#include <math.h>

/* ---- group.c ---- */
/* Arc and set maps follow from vertex maps (the k-th parallel arc u -> v goes
 * to the k-th arc h(u) -> h(v); a set to the set with the image arcs);
 * UINT32_MAX where an image does not exist (fluid_group_check says so).
 * vm (order x nverts, from malloc) becomes g->vert: g owns it. */
void group_from_vertex_maps(const struct fluid_net *n, uint32_t order, uint32_t *vm,
			    struct fluid_group *g);
uint64_t map_hash(const uint32_t *m, uint32_t n);
/* The network as a digraph whose automorphisms are exactly the network's
 * (a node per vertex, arc and set; labels as self-loops; colour: a 0/1 per
 * vertex automorphisms must keep, or NULL); freed by fluid_digraph_free.
 * OFC_E_INPUT when it would exceed topo's arcs. */
int fluid_net_digraph(const struct fluid_net *n, const uint8_t *colour, struct graph *gr,
		      struct ofc_error *err);
void fluid_digraph_free(struct graph *gr);
int cmp_u64(const void *a, const void *b);

/* ---- bitsets ---- */
static inline bool bit_test(const uint64_t *b, size_t i)
{
	return (b[i >> 6] >> (i & 63)) & 1;
}
static inline void bit_set(uint64_t *b, size_t i)
{
	b[i >> 6] |= 1ull << (i & 63);
}

/* ---- the problem a solver sees (solve.c) ----
 * Reductions arrive here already reversed: net is then the reversed
 * network with copy := reduce (notes Sec. 2.2). Capacities are one list:
 * every arc with a finite bandwidth, then every set ("caps"). */
struct problem {
	const struct fluid_net *net;
	enum fluid_collective coll; /* ALLGATHER, BROADCAST or ALLTOALL after reversal */
	bool copy;		    /* w >= f (not all-to-all) */
	uint32_t norig, *orig;	    /* origins */
	uint32_t nterm, *term;	    /* terminals (destinations: all but the origin) */
	uint8_t *conserve;	    /* per vertex: (3.12) applies */
	uint8_t *store;		    /* per vertex: may hold */
	uint32_t ncaps;
	uint32_t *cap_off, *cap_arc; /* ncaps + 1 offsets, arcs */
	double *cap_bw;
	uint32_t *arc_cap_off, *arc_caps; /* per arc: the caps containing it */
	double slack, gap;
	double deadline; /* now_seconds() at which to stop; 0 = none */
	/* The hop-limit search (solve.c): a trial's phase-1 R* below
	 * answer_below and at most answer_at is the search's answer, and
	 * dw_solve goes on to phase 2 in the same solve rather than the search
	 * solving that T again (NAN: never). */
	double answer_at, answer_below;
	double t0;
	uint64_t mem_limit;
	const struct fluid_opts *opts;
};
/* The LP solver of a new model: the request's (opts->lp_solver),
 * else the default measured for its kind and size (bench/results/lp.md, "LP
 * solvers"): Clp for the full LP, for plain DW's pricing and for Mirrored
 * DW's pricing LPs of FLUID_CLP_PRICING_COLS columns and more (lp_solve is
 * as fast below, without loading Clp), Clp for masters of
 * FLUID_CLP_MASTER_ROWS rows and more. A default of Clp whose plugin cannot
 * be loaded is lp_solve (a solver the request names must load: problem_init
 * checks). */
enum fluid_lp_kind { FLUID_LP_MASTER, FLUID_LP_PRICING, FLUID_LP_FULL };
#define FLUID_CLP_PRICING_COLS 512
#define FLUID_CLP_MASTER_ROWS  64
enum lp_solver fluid_lp_solver(const struct problem *p, enum fluid_lp_kind kind, bool mirrored,
			       uint32_t size);

/* ---- the time-expanded network G^T (texp.c) ----
 * Nodes (v, t), t = 0..T: id t * nv + v. Arcs: physical arc e at layer t
 * (from (tail, t) to (head, t + 1)): id t * ne + e; hold-over of the s-th
 * store vertex at layer t: T * ne + t * nhold + s. */
struct texp {
	const struct fluid_net *net;
	uint32_t T, nv, ne, nhold;
	uint32_t *hold_of;	     /* nv: index among store vertices, UINT32_MAX if none */
	uint32_t *hold_vert;	     /* nhold */
	uint32_t *out_off, *out_arc; /* physical out-arcs per vertex */
	uint32_t *in_off, *in_arc;
	uint32_t *port; /* ne: the arc's rank among its tail's out-arcs */
};

int texp_init(struct texp *x, const struct fluid_net *n, const uint8_t *store, uint32_t T);
void texp_free(struct texp *x);
static inline uint32_t tx_nnodes(const struct texp *x)
{
	return (x->T + 1) * x->nv;
}
static inline uint32_t tx_narcs(const struct texp *x)
{
	return x->T * (x->ne + x->nhold);
}
static inline bool tx_is_hold(const struct texp *x, uint32_t a)
{
	return a >= x->T * x->ne;
}
static inline uint32_t tx_layer(const struct texp *x, uint32_t a)
{
	return tx_is_hold(x, a) ? (a - x->T * x->ne) / x->nhold : a / x->ne;
}
/* The physical arc, or UINT32_MAX for a hold-over. */
static inline uint32_t tx_phys(const struct texp *x, uint32_t a)
{
	return tx_is_hold(x, a) ? UINT32_MAX : a % x->ne;
}
static inline uint32_t tx_vertex_from(const struct texp *x, uint32_t a)
{
	return tx_is_hold(x, a) ? x->hold_vert[(a - x->T * x->ne) % x->nhold]
				: x->net->tail[a % x->ne];
}
static inline uint32_t tx_vertex_to(const struct texp *x, uint32_t a)
{
	return tx_is_hold(x, a) ? x->hold_vert[(a - x->T * x->ne) % x->nhold]
				: x->net->head[a % x->ne];
}
static inline uint32_t tx_tail(const struct texp *x, uint32_t a)
{
	return tx_layer(x, a) * x->nv + tx_vertex_from(x, a);
}
static inline uint32_t tx_head(const struct texp *x, uint32_t a)
{
	return (tx_layer(x, a) + 1) * x->nv + tx_vertex_to(x, a);
}
static inline uint32_t tx_hold(const struct texp *x, uint32_t v, uint32_t t)
{
	return x->T * x->ne + t * x->nhold + x->hold_of[v];
}

/* Forward cone of (o, 0): nodes reachable without re-entering o by a
 * physical arc (data never needs to come back to its origin). */
void texp_forward(const struct texp *x, uint32_t o, uint64_t *bits);
/* Backward cone of (d, T): nodes from which (d, T) is reachable, leaving d
 * only by its hold-over (a destination never needs to relay its own
 * commodity). avoid: a vertex whose in-arcs are not used (the origin), or
 * UINT32_MAX. */
void texp_backward(const struct texp *x, uint32_t d, uint32_t avoid, uint64_t *bits);
/* The union of texp_backward's cones of the n destinations d (each a
 * vertex that can store), in one pass: the nodes from which some node of
 * some d is reachable (a path to a destination's first node on it is a
 * path to (d, T) that stays at d from there by its hold-overs). */
void texp_backward_any(const struct texp *x, const uint32_t *d, uint32_t n, uint32_t avoid,
		       uint64_t *bits);
/* The largest hop distance of an (origin, destination) pair (the least T
 * at which every commodity arrives) and that pair; UINT32_MAX when some
 * pair never connects (then that pair). */
uint32_t texp_min_hops(const struct fluid_net *n, const uint32_t *orig, uint32_t norig,
		       const uint32_t *term, uint32_t nterm, uint32_t *far_o, uint32_t *far_d);

/* ---- a solution to decompose (solve.c, decomp.c) ----
 * Per origin: the usage w over G^T arcs (dense, tx_narcs) and, per
 * destination, the flow f (dense); or for all-to-all the flows alone. */
struct origin_flow {
	uint32_t origin;
	double *w; /* tx_narcs, copy collectives */
	uint32_t ndest;
	uint32_t *dest;
	double **f; /* ndest arrays of tx_narcs, or of nat (at) */
	/* NULL, or f over the support of w alone: per G^T arc its place in
	 * f[k], -1 off the support (no flow there) */
	int32_t *at;
	size_t nat;
};

/* Append origin_flow's pieces (trees; per-destination paths for what no
 * tree carries) to rt, weight scaled by `weight`, every hop mapped through
 * the vertex/arc maps vm/am (NULL: identity). of->f changes, on the support
 * of of->w alone (the arcs with w > 1e-12 and the free hold-overs). */
void decompose_origin(const struct problem *p, const struct texp *x, struct origin_flow *of,
		      double weight, struct fluid_routing *rt, double *deficit);
/* All-to-all: the flow of one pair as weighted paths. */
void decompose_pair(const struct texp *x, uint32_t origin, uint32_t dest, double *f,
		    struct fluid_routing *rt);
/* Room for pieces more pieces of hops more hops in all, exactly: a
 * routing whose size is known grows once, not by doubling (at 1,024
 * GPUs the mirrored routing is 8 M hops, and each doubling held the old
 * arrays beside the new ones at the solve's peak). */
void routing_reserve(struct fluid_routing *rt, size_t pieces, size_t hops);
void routing_add_piece(struct fluid_routing *rt, uint32_t origin, uint32_t target, double lo,
		       double hi, const uint32_t *arcs, const uint32_t *layers, uint32_t nhops);
/* Measure the pieces: loads per cap (r_actual) and cost. */
void routing_measure(const struct problem *p, struct fluid_routing *rt);

/* Per-destination flows of value 1 inside of->w (max flow), for columns
 * and checks: of->f[k] for of->dest[k] over the support of w (the arcs
 * with w > 1e-12 and the free hold-overs, of->at and of->nat), allocated
 * here, freed by origin_flow_drop. Returns the least flow value found (1
 * when w carries every destination's unit). */
double flows_in_usage(const struct problem *p, const struct texp *x, struct origin_flow *of);
void origin_flow_drop(struct origin_flow *of);

/* ---- max flow on G^T (maxflow.c) ----
 * Dinic over a fixed arc set (G^T arcs with capacities, hold-overs of
 * copy-capable store vertices free); reused for many sink and capacity
 * choices. A view (maxflow_view) runs on another's graph and capacities
 * with a run state of its own: one per thread, runs to several sinks at
 * once. */
struct maxflow {
	uint32_t nnodes, narcs; /* residual arcs: 2 per arc */
	uint32_t *off, *to, *rev;
	uint32_t *arc_of; /* residual arc -> G^T arc (forward ones), UINT32_MAX */
	double *cap;
	const struct texp *x;
	uint32_t *tx_res; /* G^T arc -> residual forward arc, UINT32_MAX if absent */
	bool view;	  /* the graph and cap are another's */
	/* the run state */
	double *flow;
	uint32_t *level, *iter, *queue;
	uint32_t *mark, stamp; /* level and iter hold where mark == stamp */
	uint32_t *dirty;       /* residual arcs whose flow the last run set */
	size_t ndirty;
	bool all_dirty;
};
/* arcs: the G^T arcs to include (each once). */
void maxflow_init(struct maxflow *m, const struct texp *x, const uint32_t *arcs, uint32_t narcs);
/* A view of m: freed by maxflow_free before m is. */
void maxflow_view(struct maxflow *v, const struct maxflow *m);
void maxflow_free(struct maxflow *m);
/* Capacities from cap[G^T arc] (a value per arc of the set); not while
 * a view runs. */
void maxflow_set_caps(struct maxflow *m, const double *cap);
/* Flow from s to t, stopping at limit. */
double maxflow_run(struct maxflow *m, uint32_t s, uint32_t t, double limit);
/* After a run: the nodes reachable from s in the residual graph (into
 * bits, cleared first). */
void maxflow_source_side(struct maxflow *m, uint32_t s, uint64_t *bits);
/* ... and the nodes that reach t. */
void maxflow_sink_side(struct maxflow *m, uint32_t t, uint64_t *bits);
/* The flow on G^T arc a after a run. */
double maxflow_on(const struct maxflow *m, uint32_t a);

/* ---- the full LP 4.2 (full.c) ---- */
int full_solve(const struct problem *p, const struct texp *x, bool phase2, struct fluid_result *r,
	       struct ofc_error *err);

/* ---- pricing (pricing.c) ----
 * One origin's subproblem (LP 5.1 with (3.12)): the least ĉ-cost usage w
 * that carries a unit to every destination, as an LP over w alone with the
 * destination cuts sum_{a in delta+(S)} w_a >= 1 added as max flows find
 * them violated (the cut form of "w >= f, f a unit flow": max-flow
 * min-cut). Cuts stay valid for any costs, so the model persists across
 * iterations and phases. All-to-all: shortest paths in the DAG G^T. */
struct pricer {
	const struct problem *p;
	const struct texp *x;
	uint32_t origin;
	uint32_t ndest, *dest;
	uint32_t ncols;
	/* The LP's columns: one per column, or one per orbit of the origin's
	 * stabiliser (orbits.c: col_lp maps a column to its orbit's); the
	 * destinations whose max flows find the cuts: every one, or nsep
	 * (their indices in dest), one per orbit. */
	uint32_t nlp, *col_lp;
	uint32_t nsep, *sep;
	uint32_t *col_arc;	       /* column -> G^T arc */
	uint32_t *arc_col;	       /* G^T arc -> column, UINT32_MAX */
	uint32_t *col_tail, *col_head; /* column -> its arc's G^T nodes (the cuts' test) */
	struct lp *lp;
	struct maxflow mf;
	double *cap;	     /* per G^T arc, for the max flows */
	struct cut_par *par; /* the cut rounds' threads (pricing.c) */
	double *objv;	     /* scratch */
	int *objc;
	uint64_t solves, cuts, rounds, stalls, wrong;
	/* The cut pool (pricing.c): every cut found, by columns; which are in
	 * the LP, and which were slack when last looked at. */
	uint32_t npool, cap_pool, *pool_off;
	int *pool_col;
	double *pool_val; /* each entry's coefficient: how many columns of its orbit */
	size_t cap_pool_col;
	uint8_t *pool_in, *pool_slack;
	uint32_t *pool_hash; /* open addressing: pool index + 1, 0 empty */
	uint32_t cap_hash;   /* a power of two, more than twice npool */
	bool skip_dups;	     /* a cut found again while in the LP is not added */
	uint64_t dup_cuts;   /* how many were not */
	uint32_t *row_pool;  /* the LP's cut rows in order: their pool index */
	uint32_t nrow_pool;  /* (after the ncons rows of (3.12)) */
	bool rebuild;	     /* the next call starts without the slack cuts */
	bool warm;	     /* the caller's: a call may start from the last basis (Clp) */
	uint64_t purged;
	/* (3.12) rows, kept to rebuild the LP: ncons rows of cons_off */
	uint32_t ncons, *cons_off;
	int *cons_col;
	double *cons_val;
	int most;	       /* the most simplex iterations of one solve of the cut LP */
	int stall_floor;       /* opts->stall_floor (tests); 0: pricing.c's STALL_FLOOR */
	uint32_t way;	       /* how the costs are spread (pricing.c): the way that last worked */
	enum lp_solver solver; /* the cut LP's (fluid_lp_solver) */
	/* all-to-all */
	double *dist;
	uint32_t *pred;
};
/* grp: the mirrored master's group, one pricer per orbit of origins (the
 * solver's default depends on it, fluid_lp_solver; and the cut LP may be
 * solved on the origin's stabiliser's orbits); NULL: plain DW. */
int pricer_init(struct pricer *pr, const struct problem *p, const struct texp *x, uint32_t origin,
		const struct fluid_group *grp, struct ofc_error *err);
/* The cut LP over the orbits of the origin's stabiliser in grp (orbits.c),
 * where one can be had: true, col_lp, nlp, sep and nsep set, and *vrep
 * (caller frees) each vertex's orbit's representative. */
bool pricer_orbits(struct pricer *pr, const struct fluid_group *grp, uint32_t **vrep);
void pricer_free(struct pricer *pr);
/* The cut LP, its pool and max flows freed (the counters, the columns'
 * map and the destinations kept): a pricer that prices no more, before
 * the routing, whose pieces would otherwise be laid out beside them at
 * the solve's peak. Only pricer_free may follow. */
void pricer_release(struct pricer *pr);
/* Copy collectives: minimise sum chat[e] * w over G^T (chat per physical
 * arc); w (tx_narcs, dense, zeroed here) and its cost, and a lower bound
 * on the least cost (what the Lagrangian bound may use: the LP's optimum
 * under the true costs, never more than *value). Returns 0, -1 (err), or
 * -2 when the cut LP stalled every way it was tried or the deadline
 * passed (err says so; the model is kept and may be tried again).
 * known: the cost under chat of a usage known to meet every cut (a column
 * already in the master): an LP "optimum" above it is wrong, and that way
 * is taken for stalled. */
int pricer_tree(struct pricer *pr, const double *chat, double known, double *w, double *value,
		double *bound, struct ofc_error *err);
/* An actual tree (see honest.c): w gets copies per G^T arc, value its
 * cost under chat (INFINITY when the heuristic finds none). Paths are
 * chosen under chat[e] * disc[a] (disc per G^T arc; NULL: 1). */
void pricer_honest(struct pricer *pr, const double *chat, const double *disc, double *w,
		   double *value);
/* All-to-all: the cheapest path to every destination: path k as G^T arcs
 * into arcs[k * (T) ..] (len[k] hops incl. hold-overs), cost[k]. */
void pricer_paths(struct pricer *pr, const double *chat, uint32_t *arcs, uint32_t *len,
		  double *cost);

/* ---- Dantzig-Wolfe and its mirrored master (dw.c) ---- */
/* 0, -1 (err), or -2 (err set) when a class has no tree within x's T that
 * pricer_honest finds: a larger T may have one. */
int dw_solve(const struct problem *p, const struct texp *x, const struct fluid_group *grp,
	     bool phase2, struct fluid_result *r, struct ofc_error *err);
/* Whether a phase-1 R* of z is the hop-limit search's answer (struct
 * problem's answer_at, answer_below): dw_solve then solves phase 2 too. */
bool dw_is_answer(const struct problem *p, double z);

/* The layers summed (hopfree.c): the least phase-2 objective at R of LP 4.2
 * without layers, a bound for every T, into res->objective_any_hops (NAN and
 * res->any_hops_note when not computed: its model over the memory limit,
 * the time limit, the LP not solved). grp: the mirrored group or NULL. */
void hopfree_bound(const struct problem *p, const struct fluid_group *grp, double r,
		   struct fluid_result *res);

/* The cuts of vertex sets (setcut.c): a lower bound on R* at every hop
 * limit, at least what one terminal's arcs give (fluid_lower_bound) where
 * a set of vertices behind slower links is the bottleneck. */
double fluid_set_cut_bound(const struct problem *p);

/* Progress and time (solve.c). */
void report_progress(const struct problem *p, const char *stage, uint32_t hops, uint32_t it,
		     double value, double bound, size_t columns);
static inline bool past_deadline(const struct problem *p)
{
	return p->deadline > 0 && now_seconds() >= p->deadline;
}

/* Chunk k of K of piece q in Theorem 4's schedule (steps.c): [*lo, *hi)
 * of its block in the verifier's fixed point; false when rounded away. */
bool fluid_chunk_of(const struct fluid_piece *q, uint32_t k, uint32_t K, uint32_t *lo,
		    uint32_t *hi);

#endif
