/* rwa — routing and wavelength assignment, and the one wrapper around the
 * LP solvers that every LP and ILP in ofc goes through (BFB, RWA, MCF, the
 * fluid engine): lp_solve, and COIN-OR Clp for LPs.
 *
 * The wrapper keeps lp_solve's 1-based columns, its globals-free lprec and
 * its status codes, and Clp's C++ model (rwa/lp_clp.cc), behind a small API
 * with 0-based columns and struct ofc_error. Separate models may be solved
 * on separate threads.
 */
#ifndef OFC_RWA_H
#define OFC_RWA_H

#include <stdatomic.h>

#include "util/util.h"

/* ---- linear programs (rwa/lp.c) ------------------------------------------- */

struct lp;

enum lp_rel { LP_LE = 1, LP_GE = 2, LP_EQ = 3 };

enum lp_result {
	LP_OPTIMAL = 0, /* proven optimal */
	LP_FEASIBLE,	/* stopped (time limit) with a feasible, unproven solution */
	LP_INFEASIBLE,
	LP_UNBOUNDED,
	LP_TIMEOUT, /* stopped (a limit, a cancel) without a feasible solution */
	LP_FAILED,  /* numerical trouble or an internal error */
};

/* Which solver a model runs on. Clp solves LPs only (no branch-and-bound:
 * the RWA ILP stays on lp_solve, and integer columns on a Clp model fail its
 * solve). LP_SOLVER_DEFAULT leaves the choice to each use, which takes the
 * one measured best for it (docs/rings-fluid.md, "LP solvers"). */
enum lp_solver { LP_SOLVER_DEFAULT = 0, LP_SOLVER_LPSOLVE, LP_SOLVER_CLP };
/* "lpsolve", "clp" ("default" for LP_SOLVER_DEFAULT) and back; -1 for any
 * other name. */
const char *lp_solver_name(enum lp_solver s);
int lp_solver_parse(const char *name, enum lp_solver *s);
/* s, or def when s is LP_SOLVER_DEFAULT: a use's own default. */
static inline enum lp_solver lp_solver_or(enum lp_solver s, enum lp_solver def)
{
	return s != LP_SOLVER_DEFAULT ? s : def;
}

/* A model with ncols columns, all >= 0 and continuous, objective 0, minimise,
 * on lp_solve (lp_new) or the solver s (LP_SOLVER_DEFAULT: lp_solve). */
struct lp *lp_new(int ncols);
/* NULL (OFC_E_RUNTIME) when Clp is asked for and its plugin cannot be
 * loaded (libofc-clp.so: rwa/lp_clp.h). */
struct lp *lp_new_on(int ncols, enum lp_solver s, struct ofc_error *err);
enum lp_solver lp_solver_of(const struct lp *lp);
/* Whether a model can be made on s (Clp: its plugin loads), else err says
 * why: what an option naming the solver checks before any work. */
bool lp_solver_available(enum lp_solver s, struct ofc_error *err);
/* lp_new_on for a solver lp_solver_available accepted (the plugin, once
 * loaded, stays): nothing but running out of memory stops it, as xmalloc. */
struct lp *lp_new_known(int ncols, enum lp_solver s);
void lp_free(struct lp *lp);
int lp_ncols(const struct lp *lp);
int lp_nrows(const struct lp *lp);
/* Add columns (>= 0, continuous); returns the index of the first. */
int lp_add_cols(struct lp *lp, int n);
/* Add one column (>= 0, continuous) with its objective coefficient and its
 * entries in existing rows (any order); returns its index. Column
 * generation adds columns this way: lp_solve's next solve starts from the
 * last basis (the new column nonbasic), so re-solving is a warm start. */
int lp_add_col(struct lp *lp, double obj, int n, const int *rows, const double *vals);
void lp_maximize(struct lp *lp, bool maximize);
/* Sparse objective: coefficients for the listed columns, 0 elsewhere. */
int lp_set_objective(struct lp *lp, int n, const int *cols, const double *vals);
void lp_set_obj_coef(struct lp *lp, int col, double v);
/* Sparse row: sum vals[i] * x[cols[i]] REL rhs. Returns the row index (0-based). */
int lp_add_row(struct lp *lp, int n, const int *cols, const double *vals, enum lp_rel rel,
	       double rhs);
/* Bounds; use INFINITY / -INFINITY for none. */
void lp_set_bounds(struct lp *lp, int col, double lo, double hi);
void lp_set_integer(struct lp *lp, int col, bool integer);
void lp_set_binary(struct lp *lp, int col);
/* Wall-clock limit for solve (0 = none). */
void lp_set_time_limit(struct lp *lp, double seconds);
/* Simplex iterations a solve may take (0 = no limit): past them it stops
 * as at the time limit (LP_TIMEOUT; lp_iterations says how many it took).
 * Unlike a time limit, where it stops does not depend on the machine's
 * speed or load, so a decision taken on it gives the same answer anywhere.
 * Kept for every later solve until changed. */
void lp_set_iteration_limit(struct lp *lp, int iterations);
/* Stop a solve (LP_TIMEOUT, as at the time limit) once *cancel is true,
 * set by any thread: both solvers ask at every iteration. NULL: never. */
void lp_set_cancel(struct lp *lp, const atomic_bool *cancel);
/* Threads a solve may use (Clp: its pricing over many columns, split in
 * blocks of columns, the same pivots on any count; lp_solve: one). 0 or
 * 1: the calling thread alone. */
void lp_set_threads(struct lp *lp, unsigned threads);
/* Scaling: lp_solve's default (geometric, equilibrated), geometric alone,
 * or none (Clp: automatic, geometric, none; its dynamic modes are its plain
 * ones, as Clp scales the model as it is at every solve). Column generation masters with dense
 * columns solve about twice as fast with geometric alone, and do not stall or fail in LUSOL the way
 * they do when equilibrated (bench/results/lp.md). */
enum lp_scaling {
	LP_SCALE_DEFAULT = 0,
	LP_SCALE_GEOMETRIC,
	LP_SCALE_NONE,
	/* recomputed at every solve (rows added since are scaled too) */
	LP_SCALE_GEOMETRIC_DYNAMIC,
	LP_SCALE_MEAN_DYNAMIC,
};
void lp_set_scaling(struct lp *lp, enum lp_scaling s);
/* Which simplex lp_solve runs in its two phases (Clp: the dual or the
 * primal simplex; by default the dual after new rows, the primal after new
 * columns or costs, from the last basis). Models re-solved after
 * rows are added (cutting planes) stay dual feasible: dual simplex in both
 * phases starts from there, where the default (dual then primal) can
 * stall in primal on degenerate cut LPs (fluid pricing). */
enum lp_simplex { LP_SIMPLEX_DEFAULT = 0, LP_SIMPLEX_DUAL, LP_SIMPLEX_PRIMAL };
void lp_set_simplex(struct lp *lp, enum lp_simplex s);
/* MIP: stop at the first integer solution found (for feasibility models
 * whose objective only guides the search). */
void lp_set_break_at_first(struct lp *lp, bool on);
/* Solve. err is set (OFC_E_RUNTIME) for LP_FAILED only. */
enum lp_result lp_solve(struct lp *lp, struct ofc_error *err);
/* Forget the last basis: the next solve starts from the slack basis (a
 * cold start, for when a warm start ran into numerical trouble). */
void lp_reset_basis(struct lp *lp);
/* Delete n rows (indices ascending, each once), keeping the basis of the
 * rest (Clp; the rows should be ones whose slack is basic, so that what
 * is left is a basis). -1 where the solver cannot (lp_solve: rebuild the
 * model instead). */
int lp_delete_rows(struct lp *lp, int n, const int *rows);
const char *lp_result_str(enum lp_result r);
double lp_objective(const struct lp *lp);
/* Primal values of all columns into x (ncols entries). */
void lp_solution(const struct lp *lp, double *x);
/* Dual values of all rows into y (nrows entries); LP only. */
int lp_duals(const struct lp *lp, double *y);
/* Simplex iterations of the last solve (lp_solve: of its last, counted
 * its way): what shows two solves took the same path. */
int lp_iterations(const struct lp *lp);
/* The model in lp_solve's LP format (Clp: MPS), for debugging. */
int lp_write(const struct lp *lp, const char *path);

/* ---- routing and wavelength assignment on a WDM ring ----------------------
 *
 * The ring has N nodes 0..N-1 in ring order; segment k is the fibre span
 * between node k and node k+1 (mod N). A clockwise (CW) lightpath from s to
 * d uses segments s, s+1, ..., d-1; a counter-clockwise (CCW) one uses
 * d, d+1, ..., s-1 (mod N). Each direction has F fibres of W wavelengths.
 *
 * Assignments are made in "colours", independently per direction: colour c
 * of a direction is channel c mod (F*W) of round c / (F*W), and within a
 * round channel q is fibre q mod F, wavelength q / F (fibres fill first, so
 * the wavelengths busy on any one fibre stay as few as possible). A one-shot
 * RWA fits when every colour is in round 0; OpTree uses the rounds as steps.
 * Two lightpaths of one direction conflict when they share a segment and a
 * colour; every routine below returns conflict-free colourings.
 */

enum rwa_dir { RWA_ANY = 0, RWA_CW = 1, RWA_CCW = 2 }; /* CW/CCW match enum ring_dir */

struct rwa_ring {
	uint32_t nodes;	      /* N >= 2 */
	uint32_t wavelengths; /* W per fibre */
	uint32_t fibres;      /* F per direction */
};

/* count lightpaths from src to dst; dir fixes the direction or leaves it free. */
struct rwa_demand {
	uint32_t src, dst;
	uint32_t count;
	uint8_t dir;
};

/* An arc of segments in one direction: start, start+1, ..., start+len-1 (mod N). */
struct rwa_arc {
	uint32_t start;
	uint32_t len;	/* 1..N-1 */
	uint32_t count; /* colours it needs (lightpaths along it) */
	uint32_t id;	/* the caller's index; copied into the runs */
};

/* count consecutive colours colour..colour+count-1 given to item `id` in dir. */
struct rwa_run {
	uint32_t id;
	uint32_t colour;
	uint32_t count;
	uint8_t dir;
};

struct rwa_solution {
	struct rwa_run *runs; /* the runs of one item are consecutive, in colour order */
	size_t nruns, cap;
	uint32_t colours[3]; /* [RWA_CW], [RWA_CCW]: colours used per direction */
};

void rwa_solution_free(struct rwa_solution *sol);
void rwa_solution_reset(struct rwa_solution *sol);

/* Channel of a colour: round (step), fibre, wavelength. */
static inline void rwa_channel(const struct rwa_ring *r, uint32_t colour, uint32_t *round,
			       uint32_t *fibre, uint32_t *wavelength)
{
	uint32_t per = r->fibres * r->wavelengths, q = colour % per;

	*round = colour / per;
	*fibre = q % r->fibres;
	*wavelength = q / r->fibres;
}

/* Segments from src to dst going dir (CW or CCW); the arc's first segment. */
uint32_t rwa_arc_len(uint32_t n, uint32_t src, uint32_t dst, enum rwa_dir dir);
uint32_t rwa_arc_start(uint32_t n, uint32_t src, uint32_t dst, enum rwa_dir dir);

/* The load of every ring segment per direction, by difference arrays:
 * add arcs (count lightpaths from src to dst the way dir goes round), then
 * read the busiest segment of either direction. O(arcs + n). */
struct rwa_load {
	uint32_t n;
	int64_t *f; /* [direction 0|1][segment 0..n] */
};
void rwa_load_init(struct rwa_load *l, uint32_t n);
void rwa_load_add(struct rwa_load *l, uint32_t src, uint32_t dst, enum rwa_dir dir, int64_t count);
uint64_t rwa_load_max(const struct rwa_load *l);
void rwa_load_free(struct rwa_load *l);

/* ---- colouring primitives (rwa/ring_color.c, rwa/circulant.c) ---- */

/* Exact interval colouring: the arcs must not wrap (start + len <= N); uses
 * exactly as many colours as the largest load of one segment (an interval
 * graph is perfect), taking the lowest free colours left to right. Runs are
 * appended to sol with direction dir, numbered on from sol->colours[dir]
 * (so calls can stack), which is raised to the colours used. The same for
 * the two routines below. */
void rwa_color_line(uint32_t n, const struct rwa_arc *arcs, size_t narcs, enum rwa_dir dir,
		    struct rwa_solution *sol);
/* Arcs that may wrap (circular-arc colouring is NP-hard): the better of
 * (a) cut the ring at its least loaded segment, give the arcs across the cut
 * their own colours, then sweep the rest left to right, best-fitting each
 * into the colour whose free window fits it most tightly; and (b) first-fit
 * after sorting by length, longest first (when the instance is small enough
 * for it); then, for at most 64 lightpaths above their load, (c) an exact
 * backtracking search from the load up (bounded). Never fewer colours than
 * the largest load, rarely many more. */
void rwa_color_circle(uint32_t n, const struct rwa_arc *arcs, size_t narcs, enum rwa_dir dir,
		      struct rwa_solution *sol);

/* Shift-invariant demands: every node u sends one lightpath to u + offsets[j]
 * (mod N), for each of the distinct offsets (1..N-1). Item id of that
 * lightpath: u * noffsets + j. Routed shortest-way (antipodal pairs are
 * split between the directions as whole pairs); coloured by tilings: arcs
 * whose lengths sum to a divisor of N are laid end to end around the ring
 * and rotated, so every colour is a perfect tiling and the colours used
 * equal the load. Lengths that cannot be bundled so get the optimal
 * colouring of their own orbit (ceil(N / floor(N / len)) colours). */
void rwa_circulant(uint32_t n, const uint32_t *offsets, uint32_t noffsets,
		   struct rwa_solution *sol);
/* The same colour counts without the runs: O(noffsets). */
void rwa_circulant_colours(uint32_t n, const uint32_t *offsets, uint32_t noffsets,
			   uint32_t colours[3]);

/* ---- solving a demand set (rwa/ring_rwa.c, rwa/ring_ilp.c) ---- */

enum rwa_engine { RWA_ENGINE_HEURISTIC = 1, RWA_ENGINE_ILP = 2, RWA_ENGINE_LP = 3 };
/* "heuristic", "ilp", "lp": the names --engine takes. */
const char *rwa_engine_name(enum rwa_engine e);

/* Exact models larger than this are refused (OFC_E_INPUT) instead of being
 * left to run for hours: binary columns 2 x demands x F x wavelengths. */
#define RWA_ILP_MAX_COLUMNS 2000000u
enum rwa_objective { RWA_MIN_WAVELENGTHS = 1, RWA_MAX_SERVED = 2 };

/* The relaxation's solver when the request names none (measured
 * in bench/results/lp.md, "LP solvers": 3.5-15x faster on the all-to-all of
 * 32-128 nodes), lp_solve when Clp's plugin cannot be loaded. */
#define RWA_LP_SOLVER LP_SOLVER_CLP
struct rwa_opts {
	enum rwa_engine engine;
	enum rwa_objective objective;
	double time_limit; /* seconds for the solver (ILP and LP); 0 = none */
	/* The LP relaxation's solver (the ILP is lp_solve's);
	 * LP_SOLVER_DEFAULT: RWA_LP_SOLVER. */
	enum lp_solver lp_solver;
	/* ILP, min wavelengths: solve the exact model up to and including the
	 * heuristic's count, even when the heuristic already meets the bound
	 * (to measure the ILP itself; the answer is the same). */
	bool pure_ilp;
};

struct rwa_report {
	const char *method;	   /* how the assignment was found */
	uint32_t wavelengths_used; /* per fibre, the most in either direction */
	uint32_t lower_bound;	   /* wavelengths no assignment can go below */
	double relaxation;	   /* LP relaxation (wavelengths, fractional); NAN if not solved */
	bool optimal;		   /* wavelengths_used (or served) proven optimal */
	bool time_limit_hit;	   /* lp_solve stopped on the time limit */
	bool fits;		   /* wavelengths_used <= W */
	uint64_t demanded;	   /* lightpaths asked for */
	uint64_t served;	   /* lightpaths assigned a channel within W */
	uint64_t served_bound;	   /* max-served: no assignment serves more */
	uint32_t ilp_solves;	   /* ILP models solved */
	double seconds;
};

/* Route and colour the demands. With RWA_MIN_WAVELENGTHS every lightpath
 * is assigned (the colours may exceed one round: then fits is false); with
 * RWA_MAX_SERVED only lightpaths within W wavelengths are kept. The items of
 * the runs are demand indices. Errors: bad demands (OFC_E_INPUT), solver
 * failure (OFC_E_RUNTIME). */
int rwa_solve(const struct rwa_ring *ring, const struct rwa_demand *dem, size_t ndem,
	      const struct rwa_opts *opts, struct rwa_solution *sol, struct rwa_report *rep,
	      struct ofc_error *err);

/* Check a solution against its demands: directions (fixed ones kept), colour
 * counts (all lightpaths, or at most the demand with max_served), and no two
 * lightpaths of one direction on one colour sharing a segment. Returns 0, or
 * -1 with the first problem in err (OFC_E_RUNTIME: it is a bug). */
int rwa_check(const struct rwa_ring *ring, const struct rwa_demand *dem, size_t ndem,
	      const struct rwa_solution *sol, bool max_served, struct ofc_error *err);

/* Largest number of lightpaths on one segment in one direction (the load)
 * for a given routing: colours can never be fewer. */
uint64_t rwa_solution_max_load(const struct rwa_ring *ring, const struct rwa_demand *dem,
			       size_t ndem, const struct rwa_solution *sol);

/* Lower bound on the wavelengths per fibre any routing needs: the total
 * length of shortest routes over the ring's 2N segment-directions, each
 * node's adds and drops over its 2F channels, and the fixed-direction load.
 * Cheap; the LP engine gives the exact relaxation. */
uint32_t rwa_combinatorial_bound(const struct rwa_ring *ring, const struct rwa_demand *dem,
				 size_t ndem);

/* ---- demand sets (rwa/demands.c) ---- */

#define RWA_MAX_DEMANDS 1000000u
#define RWA_MAX_COUNT	65535u

/* The all-to-all pattern: one lightpath from every node to every other. */
void rwa_all_to_all(uint32_t n, struct rwa_demand **dem, size_t *ndem);
/* A demand file: one demand per line, "SRC DST [COUNT] [cw|ccw|any]"; '#'
 * starts a comment; blank lines are skipped. Errors carry FILE:LINE. */
int rwa_parse_demands(const char *file, const char *text, size_t len, uint32_t nodes,
		      struct rwa_demand **dem, size_t *ndem, struct ofc_error *err);
int rwa_load_demands(const char *path, uint32_t nodes, struct rwa_demand **dem, size_t *ndem,
		     struct ofc_error *err);

#endif
