/* alltoall — all-to-all schedules on direct-connect topologies: the max
 * concurrent multicommodity flow (MCF, Basu et al.) and its routes, their
 * lowerings to schedules, and the two baselines (direct, sp-balanced),
 * explicit or reduced by symmetry. Every schedule is a struct schedule
 * (sched/sched.h) for the one verifier. */
#ifndef OFC_ALLTOALL_H
#define OFC_ALLTOALL_H

#include <stdatomic.h>

#include "rwa/rwa.h" /* enum lp_solver */
#include "sched/sched.h"

/* ---- all-to-all by multicommodity flow (alltoall/mcf.c) --------------------------
 * Basu et al., "Efficient All-to-All Collective Communication Schedules for
 * Direct-Connect Topologies" (notes: alltoall-mcf.md). All-to-all is the max
 * concurrent multicommodity flow with N(N-1) unit commodities; with unit link
 * capacity theta is the rate every ordered pair gets, so a shard of M/N bytes
 * needs (M/N) / (theta b) and the bound is theta <= d / L(N, d) (Thm 2).
 *
 * Methods: FULL is the link LP (1)-(5); MASTER the paper's source-aggregated
 * master LP (6)-(9) (children (10)-(14) by mcf_child_lp); COLGEN solves the
 * master by Dantzig-Wolfe column generation: a column is one source's
 * shortest-path tree under the dual link prices, and every iteration
 * certifies a bound (the Lagrangian of the current prices), so it stops at a
 * proven gap; SYMMETRIC applies when the port labels make the graph a Cayley
 * graph (tori, hypercubes, circulants, Hamming, complete, bipartite): the
 * translation taking 0 to s is an automorphism that keeps ports, so one
 * source's flow, translated, is every source's, and the master collapses to
 * one source with one capacity row per port (solved by the same column
 * generation). With steps T > 0 the problem is the time-stepped MCF (15)-(20)
 * on the time-expanded graph (store-and-forward, T steps), minimising the sum
 * of the per-step maximum link loads U_t; the same decomposition applies
 * because a single-source flow on the time-expanded graph splits into paths. */
enum mcf_method {
	MCF_AUTO = 0,  /* SYMMETRIC when it applies, else MIRRORED, else COLGEN */
	MCF_SYMMETRIC, /* one source, one capacity row per port */
	MCF_COLGEN,    /* the master LP by column generation */
	MCF_MASTER,    /* the master LP (6)-(9) as one LP (fluid only) */
	MCF_FULL,      /* the link LP (1)-(5) (fluid only; small graphs) */
	MCF_MIRRORED,  /* one source per orbit of Aut(g), one row per arc orbit */
};

/* A re-plan's stand-in (mcf.c): the degraded graph less its lost arcs'
 * whole orbits, solved under the kept solution's group, its flow the answer
 * when better. Tried from min_classes classes of sources, when the orbits
 * take at most arc_share of the arcs and the kept flow loads each lost arc at
 * most load times its objective; column generation on the degraded graph
 * follows when at least rest of the time limit is left. */
struct mcf_standin_tuning {
	uint32_t min_classes;
	double arc_share, load, rest;
};

struct mcf_opts {
	enum mcf_method method;
	uint32_t steps;	   /* 0: fluid MCF; T > 0: time-stepped with T steps */
	unsigned threads;  /* 0 = all CPUs */
	double gap;	   /* relative gap at which column generation stops; 0 = 1e-9 */
	double time_limit; /* seconds for column generation; 0 = none. At the limit
			    * it stops with the best flow and bound so far */
	bool routes;	   /* keep the routes (for lowering) */
	/* ... only when the optimum is proven (a try whose result is dropped
	 * otherwise: on torus:256x256 the time-stepped routes took 3-4 s past
	 * its limit, to be thrown away). */
	bool routes_if_optimal;
	/* NIC-limited hosts (notes alltoall-mcf.md 2.6, 7): every
	 * host's injection (= ejection) bandwidth in link capacities, 0 for
	 * none (d links' worth). Host forwarding (nic_forwarding false): relayed
	 * bytes cross the host, so every hop leaving a node costs its injection
	 * and every hop entering one its ejection (a capacity row per node, per
	 * step when time-stepped). NIC forwarding: only a host's own traffic
	 * does, (N-1) shards each way, so theta <= injection / (N-1) on top of
	 * the links (fluid only: the time-stepped MCF refuses it). */
	double injection;
	bool nic_forwarding;
	/* Per-host injection (n entries, link capacities; overrides injection
	 * when set): hosts that differ break the symmetry the one-source and
	 * mirrored masters rely on, so AUTO then solves the plain master
	 * (column generation over every source) and SYMMETRIC / MIRRORED refuse. */
	const double *injections;
	/* Mixed link rates: each arc's capacity (m entries, CSR
	 * index) in units of a reference link, the slowest by convention; NULL:
	 * every arc 1. theta and the objective are then per reference link.
	 * The one-source reduction needs every port at one capacity (the
	 * translations keep ports); the mirrored master keeps only the
	 * automorphisms that map every arc to one of the same capacity (a
	 * subgroup), and AUTO falls back to plain column generation when none
	 * but the identity does (mcf_result.note says which). */
	const double *capacity;
	/* Re-planning: keep_warm asks for the solution as a warm
	 * start (mcf_result.warm); warm starts column generation from one, a
	 * fluid solution on a graph this one's arcs are a subset of (by tail,
	 * head and rank among parallel arcs: a graph less failed links). */
	bool keep_warm;
	const struct mcf_warm *warm;
	/* When a re-plan tries its stand-in (NULL: mcf.c's defaults, measured on
	 * genkautz:1024,4 less 0>1023); a test lowers them to try it on a small
	 * graph. */
	const struct mcf_standin_tuning *standin;
	/* The caller vouches that the ports are translations of one Cayley
	 * graph (a2a_reduced: the group read off the spec, checked port by
	 * port): the one-source master skips its O(N^2) check and the routes
	 * come without the N x N translation table (routes.perm NULL: node
	 * 0's routes are the caller's program). */
	bool translations_known;
	/* Another thread's way to stop the solve (ofcd lets go of its planner
	 * on a stop or a new config), NULL: none. Looked at where the time
	 * limit is, and by lp_solve between pivots: once it is true, mcf_solve
	 * returns -1 with OFC_E_RUNTIME "cancelled", never a result. */
	const atomic_bool *cancel;
	/* Per-pair demands (skewed all-to-all, concurrent groups):
	 * demand[s * n + t] is what s sends t, relative (the diagonal is not
	 * read), NULL: 1 for every pair. theta is then the concurrent flow per
	 * unit of demand: every pair gets theta x demand[s][t]. Pairs asking
	 * for 0 get no routes. Solved by the plain master (column generation;
	 * FULL and MASTER take it too): a caller with a uniform matrix passes
	 * NULL and keeps the symmetric masters; no warm starts. */
	const double *demand;
	/* The LP solver of its models; LP_SOLVER_DEFAULT: MCF_LP,
	 * Clp for column generation on MCF_CLP_NODES nodes and more (but the
	 * one-source master, milliseconds either way). */
	enum lp_solver lp_solver;
};
/* The MCF's LP solver when the request names none (measured in
 * bench/results/lp.md, "LP solvers"). */
#define MCF_LP	      LP_SOLVER_LPSOLVE
#define MCF_CLP_NODES 256

/* A fluid MCF solution to warm-start another graph's from (opaque; made by
 * mcf_solve with keep_warm, freed by mcf_warm_free). Its trees are stored
 * per class of sources with the symmetry that spreads them to all. */
struct mcf_warm;
void mcf_warm_free(struct mcf_warm *w);
/* What w holds, bytes (ofcd keeps one between re-plans under a limit). */
size_t mcf_warm_bytes(const struct mcf_warm *w);
/* w was solved on g itself (same nodes, same arcs in the same CSR order):
 * a kept healthy solution still belongs to the fabric's graph. */
bool mcf_warm_fits(const struct mcf_warm *w, const struct graph *g);
/* w as a packed ofc.v1.McfWarm (proto/mcf.proto) of *len bytes, for
 * another process to warm-start from; and back (NULL with err when the
 * bytes are not one, or its arrays do not match its sizes). */
uint8_t *mcf_warm_pack(const struct mcf_warm *w, size_t *len);
struct mcf_warm *mcf_warm_unpack(const uint8_t *buf, size_t len, struct ofc_error *err);

/* Routes: for each pair (src, dst) one or more weighted paths, each a list
 * of hops (arc = CSR index, step = when it moves: the time-expanded step for
 * the time-stepped MCF). Routes without time steps (the fluid MCF's, the
 * baselines') have no step array (step NULL): hop i moves at step i, and at
 * 65,536 nodes that saves 4 bytes of fresh memory a hop (100 MB on
 * torus:256x256). Weights of a pair sum to 1.
 * When symmetric, only node 0's routes are kept: pair (s, perm[s][t]) uses
 * node 0's routes to t with every arc (u, port j) moved to (perm[s][u], j)
 * (a2a_routes_expand does that). */
struct a2a_routes {
	uint32_t n;
	bool symmetric; /* routes of node 0 only; others by translation */
	uint32_t *perm; /* symmetric: perm[s * n + u], the translation 0 -> s */
	size_t nroutes;
	uint32_t *src, *dst; /* per route */
	double *w;
	size_t *off;	      /* nroutes + 1 offsets into arc/step */
	uint32_t *arc, *step; /* step NULL: hop i at step i */
	size_t cap_routes, cap_hops;
};

/* Why column generation stopped; all but OPTIMAL leave theta certified
 * within mcf_result.gap instead. */
enum mcf_stop {
	MCF_STOP_OPTIMAL = 0, /* the bound met the flow (opts.gap) */
	MCF_STOP_TIME,	      /* opts.time_limit */
	MCF_STOP_LP,	      /* lp_solve failed or stalled on every retry */
	MCF_STOP_ITERATIONS,  /* the iteration cap */
};

struct mcf_result {
	uint32_t nodes, degree, steps;
	enum mcf_method method;	  /* the one used */
	enum lp_solver lp_solver; /* its models' */
	bool symmetric;
	double theta;	  /* fluid: the max concurrent flow; time-stepped: 1 / sum U_t */
	double objective; /* 1 / theta: shard-times (per unit link capacity) */
	double lower;	  /* certified lower bound on objective (= objective when exact) */
	bool optimal;	  /* objective proven optimal (within opts.gap) */
	enum mcf_stop stop;
	double gap;	      /* objective / lower - 1: theta >= optimum / (1 + gap) */
	uint32_t classes;     /* sources solved: orbits of nodes (n without symmetry) */
	uint32_t rows;	      /* capacity rows (per step): orbits of arcs */
	uint32_t group_order; /* automorphisms used (SYMMETRIC: the n translations) */
	double *step_load;    /* time-stepped: U_t, steps entries */
	uint32_t iterations;
	size_t columns;
	double seconds;
	double *flow;		  /* MASTER: g[s * m + a], source-aggregated arc flows */
	struct a2a_routes routes; /* when opts.routes */
	/* Why a symmetric method was not used as asked (capacities that break
	 * the symmetry), for people; "" when nothing to say. */
	char note[200];
	struct mcf_warm *warm; /* with opts.keep_warm (fluid column generation) */
	bool warm_started;     /* opts.warm was used */
	uint32_t warm_columns; /* columns it gave: trees that avoid the lost arcs */
	double warm_bound;     /* the objective bound its prices gave on this graph */
	double solve_seconds;  /* of seconds: column generation (setup and routes apart) */
	/* The answer is the warm start's own flow with the lost arcs' share
	 * rerouted (alltoall/mcf_repair.c), not column generation's:
	 * proven when it meets warm_bound, else better than the master's. */
	bool repaired;
	double repair_objective; /* that flow's objective (0: not tried, INFINITY: none found) */
	double repair_seconds;
};

int mcf_solve(const struct graph *g, const struct mcf_opts *o, struct mcf_result *r,
	      struct ofc_error *err);
void mcf_result_free(struct mcf_result *r);
/* For people: "symmetric", "mirrored", "column generation", ... */
const char *mcf_method_name(enum mcf_method m);
/* For people: "optimal", "time limit", ... */
const char *mcf_stop_name(enum mcf_stop s);
void a2a_routes_free(struct a2a_routes *r);

/* ---- all-to-all schedules from routes (alltoall/alltoall.c) ---------------------
 * The MCF's routes lowered three ways (Basu et al. Sec. 3.1.3-3.1.4, App. D):
 * time-stepped (store-and-forward: every hop at its time-expanded step),
 * weighted paths (at most `max_paths` per pair, for source-routed fabrics,
 * all routes at once, cut-through) and single-path routing (one path per
 * pair, chosen among the MCF's paths by load); and the baselines: direct
 * exchange over one shortest path per pair (BFS, port order) and the
 * load-aware shortest path of App. D. The lowerings themselves are private
 * (alltoall/internal.h); a2a_build is the way in. */

/* One all-to-all schedule from its algorithm, for the CLI and the daemon
 * alike: A2A_MCF (mcf_solve on b->mcf's method, threads and time limit,
 * then lowered by q->lowering: steps at the diameter, the default;
 * paths, at most d weighted paths per pair; single), A2A_DIRECT or
 * A2A_SP_BALANCED. The engine rows say which one a name runs.
 * Schedules are built for up to A2A_MAX_NODES nodes (N^2 blocks, each over
 * paths up to the diameter). The schedule is not verified here. */
#define A2A_MAX_NODES 1024u
enum a2a_algo { A2A_MCF, A2A_DIRECT, A2A_SP_BALANCED };
/* "mcf", "direct", "sp-balanced": the messages' and schedules' word. */
const char *a2a_algo_name(enum a2a_algo a);
struct a2a_lowering;
struct a2a_request {
	enum a2a_algo algo;
	/* mcf: a row of the lowerings' table below (a door finds it by the
	 * name it was given: a2a_lowering_find), NULL: the default. */
	const struct a2a_lowering *lowering;
	/* method, threads, gap, time_limit; mcf.capacity (per arc) also
	 * weighs the baselines' link loads */
	struct mcf_opts mcf;
	/* Bytes the whole request may hold; 0: no limit. Checked before the
	 * symmetric solution is mirrored to every node: a larger request is
	 * refused with its estimate (A2A_BYTES_PER_HOP per mirrored hop). */
	uint64_t max_memory;
	/* Transfers one reply may hold (ofcd's --max-frame; 0: no limit):
	 * the MCF's routes, once solved, tell what its lowering will have
	 * (a stepped route a transfer a hop), and more is refused before the
	 * routes are mirrored, lowered and verified (the steps of torus:16x16:
	 * millions of transfers, seconds of work, for an answer no frame
	 * holds). */
	uint64_t max_transfers;
	/* The time-stepped lowering by default (lowering NULL): its MCF gets
	 * at most steps_try seconds (0: A2A_STEPS_TRY_SECONDS) to prove its
	 * optimum, else the fluid MCF is lowered to paths instead and
	 * a2a_outcome.fallback says why. Named "steps" waits for it. */
	double steps_try;
	/* Routed (cut-through) schedules say each straight stretch of a route
	 * in one transfer (xfer.run) instead of hop by hop: a torus route is a
	 * few runs, so a 65,536-node program is 1.9 M transfers, not 24.8 M.
	 * What runs a schedule hop by hop (MSCCL, the testbed) refuses runs;
	 * `ofc schedule` asks for them for reduced schedules. Not with host
	 * injection limits, whose pricing charges the hosts between. */
	bool runs;
	/* sp-balanced: the request's deadline, checked as its pairs are
	 * routed (OFC_E_RUNTIME past it), or NULL. mcf's is mcf.time_limit. */
	const struct ofc_clock *clock;
};
#define A2A_STEPS_TRY_SECONDS 5.0
/* What one hop of a mirrored route costs until the request ends: the route
 * (arc, step), its transfer and the verifier's share; measured 57-61
 * bytes on torus:12x12 and 16x16 (peak RSS over hops). */
#define A2A_BYTES_PER_HOP 64u
struct a2a_outcome {
	bool cut_through;   /* routed (one step, hop i at i), not stepped */
	double max_load;    /* blocks on the busiest link over all routes */
	uint32_t max_paths; /* most paths a pair uses */
	uint32_t max_hops;  /* routed: arcs on the longest route (its steps or runs fewer) */
	bool have_mcf;
	struct mcf_result mcf;		     /* mcf: the flow (its routes as lowered) */
	const struct a2a_lowering *lowering; /* mcf: the lowering used */
	char fallback[240];		     /* why the default fell back to paths, or "" */
};
int a2a_build(const struct graph *g, const struct a2a_request *q, struct schedule *s,
	      struct a2a_outcome *o, struct ofc_error *err);

/* The lowerings a2a_request.lowering is one of (alltoall/lowerings.c):
 * the one table --lowering's and GetSchedule's names are found in, and
 * their help and refusals list; the i-th is kind i. */
enum a2a_lowering_kind { A2A_LOWER_STEPS, A2A_LOWER_PATHS, A2A_LOWER_SINGLE };
struct a2a_lowering {
	const char *name;
	enum a2a_lowering_kind kind;
	const char *what; /* in a few words, for --help */
	/* Named, reduced by symmetry by itself where the explicit schedule
	 * is not built (above A2A_MAX_NODES); "steps" is not: its MCF at
	 * thousands of nodes runs to its time limit. */
	bool reduces;
};
/* The i-th, NULL past the end; the one named name, or NULL. */
const struct a2a_lowering *a2a_lowering_at(unsigned i);
const struct a2a_lowering *a2a_lowering_find(const char *name);
/* Their names, joined by ", " and the last by last ("steps, paths or
 * single"); what: each with its words in parentheses. */
void a2a_lowering_names(struct strbuf *sb, bool what, const char *last);
void a2a_outcome_free(struct a2a_outcome *o);

/* The all-to-all MCF (alltoall/alltoall.c) as a reduced schedule on G: the
 * one-source symmetric solution's routes are node 0's, so lowered as
 * a2a_build lowers them ("paths": at most d heaviest paths per pair, hop i
 * at step i, cut-through; "steps": each hop at its time-expanded step) they
 * are the program, never mirrored. o as a2a_build's (max_load from the
 * program's per-port loads). mcf_solve takes G's translations as given
 * (mcf_opts.translations_known): no N x N table, so any size the group
 * and the program fit. The baselines too: "direct" (node 0's BFS
 * routes, whose translates are a2a_build's), and "sp-balanced" by symmetry
 * (node 0's pairs in the seeded order, ties broken by port loads, which
 * are every arc's of the port: the symmetric schedule of the same rule,
 * not the explicit one); hop i at step i, cut-through, as a2a_build.
 * sp-balanced searches once per pair (the layers of its shortest paths):
 * up to A2A_SP_REDUCED_MAX_NODES, 0.6 s there. */
#define A2A_SP_REDUCED_MAX_NODES 16384u
/* Above this many nodes the default (time-stepped) lowering of the MCF
 * is symmetry-reduced where the graph allows (the explicit schedule is
 * N^2 x its mean distance x paths per pair transfers: 1.6 G on
 * torus:32x32), its time-stepped optimum taken from the fluid flow where
 * the stabiliser of node 0 proves it (a2a_reduced); up to it, explicit. */
#define A2A_STEPS_EXPLICIT_NODES 256u
int a2a_reduced(const struct graph *g, const struct sched_group *G, const struct a2a_request *q,
		struct sched_reduced *r, struct a2a_outcome *o, struct ofc_error *err);

#endif
