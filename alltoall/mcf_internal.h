/* Private to the all-to-all MCF (alltoall/mcf*.c): the problem column
 * generation solves (struct cg) and what its files call of one another.
 * Each file calls only those below it:
 *
 *   mcf.c           the entry (mcf_solve): checks, which master, a re-plan
 *   mcf_colgen.c    the loop: master solves, pricing rounds, the bound
 *   mcf_start.c     the first columns: multiplicative weights, a warm start
 *                   from a kept solution, the Frank-Wolfe polish
 *   mcf_master.c    the master LP: classes, rows, columns in and out
 *   mcf_price.c     the pricing: shortest-path trees, their coefficients
 *
 * and beside them mcf_routes.c (routes from the solution), mcf_symmetry.c
 * (translations, automorphisms), mcf_lp.c (the single LPs) and
 * mcf_repair.c (a re-plan by repair). */
#ifndef OFC_ALLTOALL_MCF_INTERNAL_H
#define OFC_ALLTOALL_MCF_INTERNAL_H

#include "alltoall/internal.h"

#include "rwa/rwa.h"

#define NO_PARENT UINT32_MAX
#define HOLD	  (UINT32_MAX - 1)

struct heap {
	uint32_t *node;
	double *key;
	uint32_t *pos; /* node -> index, UINT32_MAX when out */
	uint32_t n;
};

/* The problem the column generation solves: a graph, which arcs are rows
 * (self-loops never are), and how an (arc, step) maps to a link row. */
struct cg {
	const struct graph *g;
	uint32_t n, T;		       /* T = 0: fluid */
	uint32_t slots;		       /* max(T, 1) */
	enum mcf_method method;	       /* COLGEN, SYMMETRIC or MIRRORED */
	const struct graph_group *grp; /* MIRRORED: the automorphisms */
	enum lp_solver solver;	       /* the master's LP solver */
	/* Classes: sources with their own columns, one per orbit of nodes (n
	 * of one node each without symmetry). A class's tree stands for its
	 * src_weight sources; a row for the row_size arcs of an orbit (notes
	 * fluid-mcf-mirrored-dw.md 4.3: the symmetric solution loads every arc
	 * of an orbit alike, so a row holds the load of one of them). */
	uint32_t nsrc;
	uint32_t *src_node; /* nsrc: the class's representative */
	double *src_weight; /* nsrc: nodes in the class */
	uint32_t *arc_tail;
	uint32_t *arc_row; /* arc -> row within a slot, UINT32_MAX for self-loops */
	uint32_t rows_per_slot;
	double *row_size; /* rows_per_slot: arcs in the row's orbit */
	/* Host rows (notes alltoall-mcf.md 2.6, host forwarding):
	 * every hop leaving u costs u's injection and every hop entering v
	 * costs v's ejection, each at most host_cap (in link capacities) times
	 * the slot's U_k. Within a slot the link rows come first
	 * (link_rows), then one injection row per class of nodes (node_row[v];
	 * all n, one under the translations, the node orbits when mirrored),
	 * then as many ejection rows. row_size counts the nodes of a class. */
	double host_cap;    /* 0: no host rows */
	uint32_t link_rows; /* link rows per slot */
	uint32_t node_rows; /* injection rows per slot (as many ejection rows) */
	uint32_t *node_row; /* n: v's class, or NULL */
	double *row_cap;    /* rows_per_slot: 1 for links, host_cap for hosts */
	uint32_t R;	    /* link rows: rows_per_slot * slots */
	unsigned threads;

	struct lp *lp;
	uint32_t nlp_cols; /* U_k first, then the trees */
	/* The difference form (Clp, fluid, link rows only): a column holds
	 * its tree's coefficients less its class's reference tree's (the
	 * hop-shortest one), the references' on the right-hand side, the
	 * convexity rows equalities (weights summing to 1): the same LP with
	 * about half the non-zeros. ref_*: per class, its reference's hops per
	 * row (ref_off: nsrc + 1 offsets); ref_rhs: R, the rows' sides. */
	bool diff;
	size_t *ref_off;
	uint32_t *ref_row;
	double *ref_hops, *ref_rhs;
	double *y;  /* link prices (per row) */
	double *ys; /* per-arc prices: y / row_size */
	double *duals;

	/* columns: source and parent array (n or n * (T + 1) entries each) */
	size_t ncols, cap_cols, psize;
	uint32_t *col_src;
	uint32_t *col_parent;
	uint32_t *col_last; /* last iteration the column was in the LP's solution */
	/* The pricing brought the column back after the master dropped it:
	 * it stays. Dropping columns again and again let the master cycle
	 * (the time-stepped MCF of a demand matrix: 20,000 iterations over
	 * the same 203 columns of a 16-node graph, never optimal); with
	 * every column dropped at most once the column generation ends. */
	uint8_t *col_back;
	uint32_t *live; /* columns in the LP, in LP order (after the U_k) */
	size_t nlive, cap_live;
	uint32_t iter;
	/* the best primal so far: U_k and column weights, its columns */
	double *sol;
	uint32_t *sol_live;
	size_t sol_n;
	double slowest; /* the slowest master solve so far, seconds */
	/* lp_solve's scaling for the master: geometric alone solves the
	 * mirrored masters about twice as fast; the plain ones solve best
	 * (steadiest) with lp_solve's default. */
	enum lp_scaling scaling;

	/* hashes of the trees already columns (open addressing, 0 = empty) */
	uint64_t *seen;	    /* tree hash */
	uint32_t *seen_col; /* its column */
	size_t cap_seen;

	/* per-worker pricing scratch: nws of them, as many as the pricing's
	 * parallel_for over the classes starts (parallel_workers) */
	struct cg_scratch *ws;
	unsigned nws;
	/* per-source pricing results */
	double *best;	/* cost of the best tree of s */
	uint32_t *cand; /* nsrc * psize parent arrays */

	/* Re-planning: the solution to start from (or NULL), what it gave,
	 * and the prices of the best bound (kept for mcf_result.warm). */
	const struct mcf_warm *warm;
	uint32_t warm_cols;
	double warm_bound;
	double *best_y;
	const atomic_bool *cancel; /* mcf_opts.cancel */
	/* mcf_opts.demand: what each ordered pair asks for (n x n, relative),
	 * NULL: 1 for every pair. A tree then carries demand[s][t] to t. */
	const double *demand;
};

/* What source node s asks of t (1 without a demand matrix). */
static inline double cg_demand_of(const struct cg *c, uint32_t s, uint32_t t)
{
	return c->demand ? c->demand[(size_t)s * c->n + t] : 1;
}

/* Another thread let go of the solve (mcf_opts.cancel). */
static inline bool mcf_cancelled(const atomic_bool *cancel)
{
	return cancel && atomic_load_explicit(cancel, memory_order_relaxed);
}

static inline int mcf_cancel_error(struct ofc_error *err)
{
	return ofc_error_set(err, OFC_E_RUNTIME, "cancelled");
}

struct cg_scratch {
	struct heap h;
	double *dist; /* n * (T + 1) */
	double *cnt;  /* R: column coefficients being built */
	uint32_t *touched;
	uint32_t ntouched;
	/* fluid trees' coefficients in O(n): depth, order by depth, the
	 * depth buckets (n + 1), subtree sizes */
	uint32_t *depth, *order, *bucket;
	double *sub;
};

static inline uint32_t cg_row_of(const struct cg *c, uint32_t arc, uint32_t step)
{
	uint32_t r = c->arc_row[arc];

	return r == UINT32_MAX ? r : step * c->rows_per_slot + r;
}

/* From this many classes a cold start of a demand matrix polishes its
 * flow before the master (cg_cold_polish). */
#define COLD_POLISH_CLASSES 256u

/* ---- mcf_price.c ---- */
double cg_dijkstra(const struct cg *c, struct cg_scratch *w, uint32_t s, uint32_t *parent);
uint32_t cg_walk(const struct cg *c, const uint32_t *parent, uint32_t t,
		 void (*hop)(void *, uint32_t arc, uint32_t step), void *ctx);
void cg_tree_coefs(const struct cg *c, struct cg_scratch *w, uint32_t s, const uint32_t *parent);
double cg_coef(const struct cg *c, uint32_t s, uint32_t r, double hops);
uint32_t cg_store_tree(struct cg *c, uint32_t s, const uint32_t *parent);
double cg_ref_cost(const struct cg *c, uint32_t s, const double *y);
double cg_tree_cost(const struct cg *c, struct cg_scratch *w, uint32_t s, const uint32_t *parent,
		    const double *y);
double cg_price_all(struct cg *c);

/* ---- mcf_master.c ---- */
int cg_add_column(struct cg *c, struct cg_scratch *w, uint32_t k, struct ofc_error *err);
void cg_free(struct cg *c);
void cg_setup(struct cg *c, const struct graph *g, uint32_t T, enum mcf_method method,
	      const struct graph_group *grp, unsigned threads, double host_cap,
	      const double *host_caps, const double *cap);
void cg_master(struct cg *c, enum lp_scaling scaling);
int cg_rebuild(struct cg *c, bool all, enum lp_scaling scaling, struct ofc_error *err);
bool cg_keeps_master(const struct cg *c);
double cg_objective_of(const struct cg *c, const double *load);
void cg_keep_solution(struct cg *c, const double *x);

/* ---- mcf_start.c ---- */
int cg_warm_start(struct cg *c, double *lb, double **center, double *ub, double until,
		  struct ofc_error *err);
int cg_warm_from(struct cg *c, double *lb, double **center, double *ub, double gap, double until,
		 double master_by, struct ofc_error *err);
int cg_cold_polish(struct cg *c, double *lb, double **center, double *ub, double gap, double until,
		   struct ofc_error *err);
struct mcf_warm *cg_warm_export(const struct cg *c, const uint32_t *perm);

/* ---- mcf_colgen.c ---- */
enum lp_solver mcf_default_solver(const struct graph *g, enum mcf_method m);
int mcf_repair_take(struct mcf_repair *rp, const struct mcf_opts *o, struct mcf_result *r,
		    struct ofc_error *err);
int mcf_colgen_solve(const struct graph *g, const struct mcf_opts *o, enum mcf_method method,
		     struct graph_group *grp, double inj, const double *injs, double t0,
		     struct mcf_repair *rp, struct mcf_result *r, struct ofc_error *err);

/* ---- mcf_routes.c ---- */
int cg_routes(struct cg *c, struct a2a_routes *rt, struct ofc_error *err);
void cg_mirror_routes(const struct cg *c, struct a2a_routes *rt);

/* ---- mcf_symmetry.c ---- */
bool mcf_caps_per_port(const struct graph *g, const double *cap);
bool mcf_translations_keep(const struct graph *g, const double *dem, unsigned threads);
void mcf_group(const struct graph *g, const struct mcf_opts *o, double t0, enum mcf_method *methodp,
	       struct graph_group *grp0, struct mcf_result *r);

/* ---- mcf_lp.c ---- */
int mcf_master_lp(const struct graph *g, const double *cap, const double *demand, enum lp_solver sv,
		  struct mcf_result *res, struct ofc_error *err);
int mcf_commodity_lp(const struct graph *g, const uint32_t *srcs, uint32_t nsrcs, const double *cap,
		     const double *demand, enum lp_solver sv, double *theta, struct ofc_error *err);

#endif
