/* sched — the one schedule type every algorithm in ofc emits, the one
 * verifier every schedule goes through, and the shared exports.
 *
 * A schedule is a list of steps; a step is a list of transfers; a transfer
 * moves part of one block from src to dst. Which block: for allgather the
 * block of node `origin` (each node's contribution); for reduce-scatter and
 * allreduce the shard `origin` (the part node `origin` ends up owning);
 * for all-to-all the block from origin to target, numbered origin*N+target.
 * Parts are fixed-point fractions of a block, SCHED_ONE being the whole,
 * so interval arithmetic in the verifier is exact.
 *
 * On a WDM ring a transfer rides a lightpath (direction, fibre, wavelength);
 * on a direct-connect topology it rides the sender's port `lane`. A step is
 * one block time: one lightpath (or one link) carries at most one block per
 * step on a ring, and its load is counted per step on a topology.
 *
 * Records are 20 bytes: a 4096-node all-gather has 16.7 M transfers.
 */
#ifndef OFC_SCHED_H
#define OFC_SCHED_H

#include <stdatomic.h>

#include "rwa/rwa.h"
#include "topo/topo.h"
#include "util/util.h"

#define SCHED_ONE	(1u << 31) /* a whole block */
#define SCHED_MAX_NODES 65535u
#define SCHED_NO_LANE	0xffffu

enum sched_collective {
	SCHED_ALLGATHER = 1,
	SCHED_REDUCE_SCATTER = 2,
	SCHED_ALLREDUCE = 3,
	SCHED_ALLTOALL = 4,
	/* Rooted collectives (fluid/): the root's block to every node, and
	 * every node's input reduced at the root. Block id = the root. */
	SCHED_BROADCAST = 5,
	SCHED_REDUCE = 6,
};

enum xfer_op { XFER_COPY = 0, XFER_REDUCE = 1 };
enum ring_dir { DIR_NONE = 0, DIR_CW = 1, DIR_CCW = 2 };

struct xfer {
	uint16_t src, dst;
	uint32_t block;	 /* see above; sched_block_origin()/_target() decode it */
	uint32_t offset; /* fixed point, SCHED_ONE = one block */
	uint32_t length;
	uint16_t lane; /* WDM: wavelength; direct-connect: sender's port; or none */
	union {
		uint8_t fibre; /* WDM fibre within the direction */
		/* Direct-connect: the arcs the transfer crosses beyond the
		 * first, each on port `lane` of the node the last one reached,
		 * cut-through within the step (the nodes between forward it,
		 * and hold nothing of it); dst is where the last arc ends. A
		 * route's straight stretches, one transfer each (a torus path
		 * is a few runs, not its hops: xfer_arcs). */
		uint8_t run;
	};
	uint8_t flags; /* bits 0-1: enum ring_dir, bit 2: XFER_REDUCE, 3-7: span */
};

#define SCHED_MAX_RUN 256u /* arcs one transfer crosses: run + 1 */

/* The arcs a direct-connect transfer crosses. */
static inline uint32_t xfer_arcs(const struct xfer *x)
{
	return 1u + x->run;
}

static inline enum ring_dir xfer_dir(const struct xfer *x)
{
	return (enum ring_dir)(x->flags & 3u);
}

static inline enum xfer_op xfer_op(const struct xfer *x)
{
	return (x->flags & 4u) ? XFER_REDUCE : XFER_COPY;
}

static inline uint8_t xfer_flags(enum ring_dir dir, enum xfer_op op)
{
	return (uint8_t)((unsigned)dir | (op == XFER_REDUCE ? 4u : 0u));
}

/* A span: the same part of 2^k consecutive blocks, [block, block +
 * xfer_blocks(x)), in one transfer, k in flags bits 3-7. Recursive
 * doubling sends a node's aligned subcube of blocks at once: relayed over
 * torus:64x64 that is 516 K transfers, not 363 M. Only all-gathers on a
 * direct-connect topology carry spans in explicit schedules (the verifier
 * refuses them elsewhere), and reductions in symmetry-reduced programs
 * (latency-optimal Swing and recursive doubling: the whole vector a step;
 * sched_verify_reduced takes them, sched_reduced_expand cuts them into
 * blocks); what runs or exports a schedule one block at a time takes
 * sched_unspan's copy. */
#define XFER_SPAN_SHIFT 3u
#define XFER_MAX_SPAN	31u

static inline uint32_t xfer_blocks(const struct xfer *x)
{
	return 1u << (x->flags >> XFER_SPAN_SHIFT);
}

static inline uint8_t xfer_span_flags(uint8_t flags, uint32_t log2_blocks)
{
	return (uint8_t)((flags & ((1u << XFER_SPAN_SHIFT) - 1)) | log2_blocks << XFER_SPAN_SHIFT);
}

#define SCHED_MAX_METRICS 16

struct sched_metric {
	char name[32];
	double value;
};

struct schedule {
	enum sched_collective collective;
	char algorithm[48];
	char topology[TOPO_MAX_SPEC + 1]; /* spec, or "wdm-ring:N" */
	uint32_t nodes;
	uint64_t size_bytes; /* per-node data the schedule was priced for */
	uint32_t root;	     /* broadcast and reduce: the root node */

	uint32_t nsteps;
	uint32_t *step_start; /* nsteps + 1 offsets into xfers */
	struct xfer *xfers;
	size_t nxfers, cap_xfers;
	size_t cap_steps;

	/* Filled by the generator, the cost model and the verifier. */
	double time_us;
	double lower_bound_us;
	bool verified;
	struct sched_metric metrics[SCHED_MAX_METRICS];
	unsigned nmetrics;
};

void sched_init(struct schedule *s, enum sched_collective c, const char *algorithm, uint32_t nodes);
void sched_free(struct schedule *s);
/* Reserve room for n more transfers (optional; sched_add grows as needed). */
void sched_reserve(struct schedule *s, size_t n);
/* Room for n more steps (optional; sched_step grows by doubling: a reader
 * that knows the count holds 4 bytes a step, not up to 8). */
void sched_reserve_steps(struct schedule *s, size_t n);
/* Open a new step; transfers added after belong to it. Empty steps count. */
void sched_step(struct schedule *s);
void sched_add(struct schedule *s, const struct xfer *x);
/* Steps of s2 appended after those of s (same nodes and collective family). */
void sched_append(struct schedule *s, const struct schedule *s2);
/* Renumber a schedule of s->nodes nodes onto n >= s->nodes nodes: node i
 * becomes map[i] (distinct, < n), in transfers, blocks (an all-to-all
 * block o * N + t becomes map[o] * n + map[t]) and the root; lanes stay.
 * Used for a schedule computed on the survivors of failed hosts and named
 * by the whole topology's node numbers (verify it with verify_opts.absent). */
void sched_renumber(struct schedule *s, uint32_t n, const uint32_t *map);
/* Transfers (spans counted block by block) and whether any is a span. */
size_t sched_block_xfers(const struct schedule *s);
bool sched_has_spans(const struct schedule *s);
/* s with every span cut into its blocks, into out (a new schedule; its
 * metrics and figures copied): for what runs or exports a schedule one
 * block at a time. */
void sched_unspan(const struct schedule *s, struct schedule *out);
/* Append k empty steps whose sizes are counts[0..k-1] and return where the
 * first of their transfers goes: generators that know their sizes fill the
 * steps in place (in parallel) instead of adding transfers one by one. */
struct xfer *sched_append_steps(struct schedule *s, uint32_t k, const size_t *counts);
void sched_set_metric(struct schedule *s, const char *name, double value);
/* NAN when absent. */
double sched_metric(const struct schedule *s, const char *name);

static inline uint32_t sched_step_size(const struct schedule *s, uint32_t t)
{
	return s->step_start[t + 1] - s->step_start[t];
}

static inline uint32_t sched_block_origin(const struct schedule *s, uint32_t block)
{
	return s->collective == SCHED_ALLTOALL ? block / s->nodes : block;
}

static inline uint32_t sched_block_target(const struct schedule *s, uint32_t block)
{
	return s->collective == SCHED_ALLTOALL ? block % s->nodes : UINT32_MAX;
}

/* bytes for a table read at random, on huge pages where THP allows (fewer
 * TLB misses and page faults): the verifier's and the all-to-all's routes.
 * Not zeroed; free(). */
void *sched_huge_alloc(size_t bytes);
const char *sched_collective_name(enum sched_collective c);
int sched_collective_parse(const char *name, enum sched_collective *c);

/* Fixed point from a fraction, and back. */
static inline uint32_t sched_fix(double fraction)
{
	double v = fraction * (double)SCHED_ONE + 0.5;

	return v <= 0 ? 0 : v >= (double)SCHED_ONE ? SCHED_ONE : (uint32_t)v;
}

static inline double sched_frac(uint32_t fixed)
{
	return (double)fixed / (double)SCHED_ONE;
}

/* ---- exact fractions -------------------------------------------------------
 * tau_B of a BFB schedule is a sum of c/|K| with |K| <= degree, so it is a
 * small rational (341/256 for genkautz:1024,4). int64 with overflow checks;
 * a value that does not fit is invalid (den == 0): keep the double too. */
struct frac {
	int64_t num;
	int64_t den; /* > 0 when valid */
};

static inline bool frac_valid(struct frac a)
{
	return a.den > 0;
}

struct frac frac_make(int64_t num, int64_t den);
struct frac frac_add(struct frac a, struct frac b);
struct frac frac_sub(struct frac a, struct frac b);
struct frac frac_mul(struct frac a, struct frac b);
struct frac frac_div(struct frac a, struct frac b);
/* -1, 0, 1; both must be valid. */
int frac_cmp(struct frac a, struct frac b);
double frac_value(struct frac a); /* NAN when invalid */
/* "341/256", "3/4", "1"; "?" when invalid. Returns buf. */
const char *frac_str(struct frac a, char *buf, size_t n);
/* The fraction nearest x with denominator <= maxden, if within tol. */
struct frac frac_from_double(double x, int64_t maxden, double tol);

/* ---- cost model (sched/cost.c) ----------------------------------------------
 * The alpha-beta model of Zhao et al. (Sec. 3.2): a schedule costs
 * tau_L * alpha + tau_B * M / B, where tau_L counts steps and tau_B is the
 * bandwidth term in units of M/B. A node's egress B is split over its d
 * links, so a step whose busiest link carries sigma shards (of M/N bytes)
 * adds (d/N) sigma to tau_B. */
struct sched_cost {
	double alpha;	  /* seconds per communication step */
	double bandwidth; /* a node's egress, bits/s; each of its d links gets B/d */
	uint64_t size;	  /* M: bytes of the whole vector at each node */
};

double cost_mb_us(const struct sched_cost *c); /* M/B in microseconds */
double cost_time_us(const struct sched_cost *c, double tau_l, double tau_b);
/* Communication phases: 2 for allreduce (reduce-scatter + allgather). */
unsigned cost_phases(enum sched_collective c);

/* The lower bound on any N-node topology of degree d: Moore-optimal steps
 * (Def. 12) and tau_B* = (N-1)/N (Thm 6), both doubled for allreduce by
 * reduce-scatter + allgather (App. B.3). All-to-all: Moore-optimal steps
 * and tau_B* = L(N, d) / N (Basu et al. Cor. 3, the Moore-tree bound). */
struct cost_bound {
	uint32_t steps;
	struct frac tau_b;
};
int cost_lower_bound(enum sched_collective c, uint32_t n, uint32_t d, struct cost_bound *b);
/* L(N, d) of the Moore tree (notes Sec. 3): the least sum of distances from
 * one node to the N-1 others in any digraph of out-degree d. 0 on overflow. */
uint64_t moore_tree_cost(uint64_t n, uint32_t d);

/* ---- BFB: breadth-first-broadcast schedules (sched/bfb.c) --------------------
 * Zhao et al., Sec. 6: at step t node u receives the shards of the nodes at
 * distance t from it, each from in-neighbours at distance t-1 from the
 * source, balanced by one small LP per (u, t) (eq. 3). Steps = diameter.
 * The LP optimum is U*_{u,t} = max over sets K of u's in-links of
 * |{sources whose candidate links all lie in K}| / |K| (min cut, Thm 19);
 * the exact methods compute that and then one integral max flow, so every
 * fraction is exact. Reduce-scatter is the reverse of BFB allgather on the
 * transposed graph (Cor. 3.1), allreduce is reduce-scatter then allgather.
 * Transfers carry the sender's port (lane = CSR position of the arc). */
enum bfb_method {
	BFB_AUTO = 0, /* subsets for few candidate links, min cut otherwise */
	BFB_SUBSETS,  /* U* by the subset formula over candidate links (<= 20) */
	BFB_MINCUT,   /* U* by parametric max flow (Dinkelbach on the min cut) */
	BFB_LP,	      /* U* and fractions from LP (3), solved by lp_solve */
};

#define BFB_MAX_DEGREE 64
#define BFB_MAX_NODES  8192 /* all-pairs distances: 128 MiB */

/* Link rates are whole multiples of the slowest link's (25G and 100G: 1 and
 * 4); a rate-r link carries r times what a rate-1 link does in a step. */
#define BFB_MAX_RATE 1024u

struct bfb_opts {
	enum bfb_method method;
	uint32_t chunks;  /* P: whole chunks of 1/P shard (App. D.2); 0 = exact */
	unsigned threads; /* 0 = all CPUs */
	/* rate[a] of every arc a (CSR index) of the graph, for LP (13) of App.
	 * D.3 without its alpha term; NULL: every link alike. tau_B is then in
	 * units of the rate-1 link (B/d). Not with chunks. */
	const uint32_t *rate;
	/* NIC-limited hosts (notes alltoall-mcf.md 2.6, 7; sched/
	 * bfb_host.c): inject[v] is host v's injection bandwidth in rate-1
	 * links. In every step a host sends at most inject x the step's time:
	 * with host forwarding every byte it sends counts, with nic_forwarding
	 * only its own shard (allgather) and its partial sums (reduce-scatter,
	 * which the host computes), relayed allgather bytes crossing the NIC
	 * alone. Allgather steps where the limit binds are solved again as one
	 * problem over the whole step (links and senders together); a
	 * reduce-scatter step sends fixed amounts, priced at the busier of
	 * links and hosts. NULL, or no host below its out-links: not limited,
	 * the schedule unchanged. Built schedules, exact methods, no chunks. */
	const struct frac *inject;
	bool nic_forwarding;
	/* The request's deadline, or NULL: checked per node
	 * solved; past it bfb_schedule fails (OFC_E_RUNTIME). */
	const struct ofc_clock *clock;
	/* BFB_LP's solver; LP_SOLVER_DEFAULT: BFB_LP_SOLVER. */
	enum lp_solver lp_solver;
};
/* LP (3)'s solver when the request names none (measured in
 * bench/RESULTS.md, "LP solvers"). */
#define BFB_LP_SOLVER LP_SOLVER_LPSOLVE

struct bfb_stats {
	uint32_t nodes, degree;
	uint32_t steps;	   /* communication steps: the diameter (twice for allreduce) */
	struct frac tau_b; /* as scheduled (with chunks: W/P per step) */
	double tau_b_value;
	struct frac tau_b_exact; /* the fractional optimum, without chunking */
	double tau_b_exact_value;
	bool bw_optimal;      /* tau_b == the (N-1)/N bound (per phase) */
	uint64_t problems;    /* (node, step) problems with a choice to make */
	uint64_t lps;	      /* of which solved by lp_solve */
	uint32_t host_steps;  /* steps the injection limit priced (inject) */
	uint32_t host_solved; /* allgather steps solved again for it */
	double seconds_distances, seconds_generate;
};

/* Build the BFB schedule for collective c on g into s (sched_init is done
 * here), or, with s == NULL, compute only the figures: then a
 * vertex-transitive graph is evaluated at one node. g must be strongly
 * connected, degree <= BFB_MAX_DEGREE, nodes <= BFB_MAX_NODES (or any size
 * for figures on a vertex-transitive graph). It need not be regular (a
 * degraded fabric): each (u, t) problem is over u's own links, and a step is
 * priced with d = the most links any node has (stats degree). */
int bfb_schedule(const struct graph *g, enum sched_collective c, const struct bfb_opts *o,
		 struct schedule *s, struct bfb_stats *st, struct ofc_error *err);
/* What building and verifying the BFB schedule for c on n nodes holds, on
 * top of what the process holds already, before building it: every phase
 * (reduce-scatter, allgather) delivers each of the n (n - 1) shards a node
 * lacks at least once, at BFB_BYTES_PER_XFER each, plus the all-pairs
 * distances and the verifier's table (n^2 bits, or 16 bytes per (node,
 * shard) for reductions). With BFB_BYTES_PER_XFER (the 20-byte transfer,
 * pieces split over several links, the verifier's interval lists) it came
 * within 1% below to 13% above the peak RSS of hypercube:12, torus:64x64
 * and genkautz:4096,4, allgather and allreduce. */
#define BFB_BYTES_PER_XFER 24u
uint64_t bfb_memory_estimate(uint32_t n, enum sched_collective c);

/* ---- expansion constructions (sched/expand.c) -----------------------------
 * Zhao et al. Sec. 5: the line graph (Def. 2), degree expansion (Def. 4)
 * and Cartesian power (Def. 14) grow a schedule on a base graph into one on
 * the expanded graph, with figures predicted by Thm 1 / Cor. 1.2, Thm 11 and
 * Thm 12 from the base's (BFB) figures. Products of different graphs have
 * no construction: BFB, predicted by Thm 13 when the factors are
 * BW-optimal. Reduce-scatter applies the construction to the transposed
 * base and reverses it (Cor. 3.2); allreduce is both. */
struct expand_figures {
	uint32_t steps;	   /* predicted tau_L */
	struct frac tau_b; /* predicted tau_B */
	double tau_b_value;
	bool exact;    /* the formulas hold with equality (else upper bounds) */
	char how[384]; /* "line^3 of BFB on circulant:16:3,4" */
};

/* true when the spec's root is a line, degree or power expansion. */
bool expand_applies(const struct topo_tree *t);
/* The paper's predicted figures for the construction of t. */
int expand_predict(const struct topo_tree *t, enum sched_collective c, const struct bfb_opts *o,
		   struct expand_figures *f, struct ofc_error *err);
/* Build the construction's schedule (on the graph topo_build(t->spec)
 * makes) and its predicted figures. */
int expand_schedule(const struct topo_tree *t, enum sched_collective c, const struct bfb_opts *o,
		    struct schedule *s, struct expand_figures *f, struct ofc_error *err);

/* ---- classic baselines (sched/baseline.c) -----------------------------------
 * For comparison through the same pipeline: "ring" (one-way ring along a
 * Hamiltonian cycle of the topology), "bidir-ring" (both ways, half each),
 * "recursive" (recursive doubling / halving, N a power of two; relayed
 * store-and-forward where partners are not linked, allgather only) and
 * "torus-rings" (the traditional per-dimension torus schedule; t must name
 * a torus). An error of kind OFC_E_INPUT says why one does not apply. */
bool baseline_known(const char *algo);
const char *baseline_name(unsigned i); /* the i-th baseline; NULL past the end */
/* The transfers baseline_schedule(g, algo, c) will hold (its memory
 * estimate, before building it): n (n - 1) per phase on a ring, twice on
 * both rings, once per port for torus-rings, each relayed hop for
 * recursive doubling on a graph that is no hypercube. */
double baseline_transfers(const struct graph *g, const char *algo, enum sched_collective c);
/* ... and the pieces it cuts each block into (2 on both rings, one per
 * port for torus-rings, else 1: whole blocks). */
uint32_t baseline_pieces(const struct graph *g, const char *algo);
/* clock (may be NULL): the request's; past it, -1 with "time limit T
 * reached in generation" (OFC_E_RUNTIME) and nothing built. */
int baseline_schedule(const struct graph *g, const struct topo_tree *t, const char *algo,
		      enum sched_collective c, struct schedule *s, const struct ofc_clock *clock,
		      struct ofc_error *err);
/* Whether algo applies to g (t) and c as far as can be told without
 * building it (all but the search for a Hamiltonian cycle): 0, or -1 and
 * baseline_schedule's own reason. Callers estimating memory ask this
 * first, so a baseline that does not apply is not refused for its size. */
int baseline_check(const struct graph *g, const struct topo_tree *t, const char *algo,
		   enum sched_collective c, struct ofc_error *err);

/* ---- the topology finder (sched/finder.c) ----------------------------------
 * Zhao et al. Sec. 5.4 / App. G: the Pareto frontier of (tau_L, tau_B) over
 * base families (evaluated by BFB) and their expansions (priced by the
 * paper's formulas, or by BFB on the expanded graph where that is cheap and
 * better) for exactly N nodes of degree d. Figures are per allgather;
 * allreduce doubles both. The Diamond and DBJMod graphs of the paper are not
 * recoverable from it and are not candidates. */
struct finder_entry {
	char spec[TOPO_MAX_SPEC + 1];
	char how[96];
	uint32_t steps;	   /* allgather tau_L */
	struct frac tau_b; /* allgather tau_B */
	double tau_b_value;
	bool bw_optimal, moore_optimal;
	bool exact; /* the figures are exact (else the paper's upper bound) */
};

struct finder_result {
	uint32_t nodes, degree;
	struct finder_entry *front; /* ascending steps, descending tau_B */
	size_t n;
	uint64_t evaluated; /* graphs evaluated by BFB */
	size_t states;	    /* (nodes, degree) pairs searched */
	double seconds;
};

int finder_run(uint32_t n, uint32_t d, unsigned threads, struct finder_result *r,
	       struct ofc_error *err);
void finder_free(struct finder_result *r);
/* The time of collective c on entry e under cost (allreduce: twice both). */
double finder_time_us(const struct finder_entry *e, enum sched_collective c,
		      const struct sched_cost *cost);
/* The entry minimising the summed time of a workload of nwork collectives. */
size_t finder_pick(const struct finder_result *r, const enum sched_collective *colls,
		   const struct sched_cost *costs, size_t nwork);

/* ---- all-to-all by multicommodity flow (sched/mcf.c) --------------------------
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
 * bench/RESULTS.md, "LP solvers"). */
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
	 * rerouted (sched/mcf_repair.c), not column generation's:
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

/* ---- all-to-all schedules from routes (sched/alltoall.c) ---------------------
 * The MCF's routes lowered three ways (Basu et al. Sec. 3.1.3-3.1.4, App. D):
 * time-stepped (store-and-forward: every hop at its time-expanded step),
 * weighted paths (at most `max_paths` per pair, for source-routed fabrics,
 * all routes at once, cut-through) and single-path routing (one path per
 * pair, chosen among the MCF's paths by load); and the baselines: direct
 * exchange over one shortest path per pair (BFS, port order) and the
 * load-aware shortest path of App. D. The lowerings themselves are private
 * (sched/internal.h); a2a_build is the way in. */

/* One all-to-all schedule from its algorithm, for the CLI and the daemon
 * alike: "mcf" (mcf_solve on b->mcf's method, threads and time limit, then
 * lowered by b->lowering: "steps" at the diameter, the default; "paths", at
 * most d weighted paths per pair; "single"), "direct" or "sp-balanced".
 * Schedules are built for up to A2A_MAX_NODES nodes (N^2 blocks, each over
 * paths up to the diameter). The schedule is not verified here. */
#define A2A_MAX_NODES 1024u
struct a2a_request {
	const char *algo;
	const char *lowering;
	/* method, threads, gap, time_limit; mcf.capacity (per arc) also
	 * weighs the baselines' link loads */
	struct mcf_opts mcf;
	/* Bytes the whole request may hold; 0: no limit. Checked before the
	 * symmetric solution is mirrored to every node: a larger request is
	 * refused with its estimate (A2A_BYTES_PER_HOP per mirrored hop). */
	uint64_t max_memory;
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
	struct mcf_result mcf; /* mcf: the flow (its routes as lowered) */
	const char *lowering;  /* mcf: the lowering used (steps, paths, single) */
	char fallback[240];    /* why the default fell back to paths, or "" */
};
int a2a_build(const struct graph *g, const struct a2a_request *q, struct schedule *s,
	      struct a2a_outcome *o, struct ofc_error *err);
void a2a_outcome_free(struct a2a_outcome *o);

/* ---- Swing allreduce and its torus baselines (sched/swing.c) ------------------
 * De Sensi et al., "Swing: Short-cutting Rings for Higher-Bandwidth
 * Allreduce" (notes: swing-allreduce.md). On a torus whose network routes
 * (minimal, dimension order, a tie split over both directions) a node talks
 * to its peer pi(r, s) = r +- rho(sigma) in one dimension, rho(s) =
 * sum_{i<=s} (-2)^i; 2D collectives (D plain, D mirrored) each carry 1/2D of
 * the vector on their own port (multiport). Bandwidth-optimal: reduce-scatter
 * then allgather over the block sets {q} + reach(q, s+1), a block sent twice
 * by a node only in the last step (even non-power-of-two sizes, Sec. 2.6);
 * latency-optimal: the whole vector every step (power-of-two sizes).
 * Recursive doubling (Rabenseifner's halving/doubling, torus order,
 * single port) uses the same machinery with the peer r XOR 2^sigma.
 * Transfers name logical peers (lane SCHED_NO_LANE): the verifier checks the
 * reduce semantics without a graph, and the link loads come from routing
 * every transfer on the torus. */
enum swing_variant { SWING_BANDWIDTH = 0, SWING_LATENCY = 1 };

/* Above this many nodes Swing's default (--reduced auto) is the
 * symmetry-reduced schedule; the explicit one is built up to
 * SCHED_MAX_NODES (16-bit node ids) when its memory estimate fits. */
#define SWING_MAX_SCHEDULE_NODES 1024u

struct torus_figures {
	uint32_t steps;	    /* tau_L */
	double tau_b;	    /* sum over steps of the busiest routed link, (d/N) shards */
	double hops;	    /* sum over steps of the longest message's hops */
	double psi;	    /* the algorithmic bandwidth deficiency (Table 2, on d ports) */
	double xi;	    /* congestion deficiency: tau_b / (2 psi), eq. (1) */
	uint32_t instances; /* concurrent collectives (ports used) */
};

/* algo "swing" or "recursive-doubling" on the torus t names; s may be NULL
 * for the figures alone (power-of-two sizes, any size up to 2^24 nodes);
 * otherwise the allreduce schedule (up to SCHED_MAX_NODES; the caller
 * checks its memory with torus_allreduce_transfers) and its
 * figures measured from it. */
int torus_allreduce(const struct topo_tree *t, const char *algo, enum swing_variant v,
		    bool multiport, struct schedule *s, struct torus_figures *f,
		    struct ofc_error *err);
/* The transfers torus_allreduce's schedule will hold (its memory estimate,
 * before building it); 0 when t is no torus algo schedules. */
double torus_allreduce_transfers(const struct topo_tree *t, const char *algo, enum swing_variant v,
				 bool multiport);
/* Figures of any schedule on torus t, its transfers routed (Xi with the
 * given psi). */
struct sched_reduced;
/* The same of a reduced schedule under a group of the torus's translations
 * (baseline_reduced's): each arc's load is its orbit's, counted at the
 * representative of the orbit's tail. */
int torus_routed_figures_reduced(const struct topo_tree *t, const struct sched_reduced *r,
				 double psi, struct torus_figures *f, struct ofc_error *err);
int torus_routed_figures(const struct topo_tree *t, const struct schedule *s, double psi,
			 struct torus_figures *f, struct ofc_error *err);

/* ---- the verifier --------------------------------------------------------
 * Checks, for every schedule ofc emits:
 *  - causality: a node sends only data it held at the start of the step
 *    (transfers within a step see the state before the step);
 *  - completeness: allgather, every node ends with every block; all-to-all,
 *    every block reaches its target exactly once; reduce-scatter, node s
 *    ends with shard s reduced over all N inputs, each exactly once;
 *    allreduce, every node ends with every shard so reduced;
 *  - on a direct-connect topology (opts.graph): every transfer uses a link
 *    of the graph (port `lane` when given); per-step link loads are summed;
 *  - on a WDM ring (opts.wdm): directions, fibres and wavelengths in range;
 *    no two lightpaths share a fibre segment, direction, fibre and
 *    wavelength in one step; a lightpath carries at most one block per step;
 *    no node adds or drops more lightpaths in a step than its MRRs allow.
 * Reduce semantics are tracked as (count, sum of random 64-bit weights) of
 * the inputs in each partial result: any input counted twice or missed
 * changes the final pair (with probability 1 - 2^-64 for a wrong sum).
 */
struct verify_wdm {
	uint32_t wavelengths; /* per fibre */
	uint32_t fibres;      /* per direction */
	uint32_t max_add;     /* lightpaths a node may add (and drop) per step */
};

/* A general network (fluid/: servers with GPUs, switches, memory, NICs):
 * the schedule's nodes are its vertices, and only terminals take part in
 * the collective (hold inputs, must end complete). Checked besides the
 * above: every transfer follows an arc (lane = the sender's port: its k-th
 * out-arc in arc order; SCHED_NO_LANE: the first arc to dst); a vertex
 * that cannot store sends only what it received in the step before (a
 * switch forwards, it keeps nothing); a vertex that cannot copy sends each
 * piece it received at most as often as it received it; REDUCE only into
 * vertices that can reduce; per step, the data on the arcs of every
 * capacity set, and on every arc, at most step_time x its bandwidth
 * (blocks; relative tolerance `tolerance`, 0 = 1e-9). */
enum verify_kind {
	VERIFY_STORE = 1,
	VERIFY_COPY = 2,
	VERIFY_REDUCE = 4,
	VERIFY_TERMINAL = 8,
};
struct verify_network {
	uint32_t nodes;
	const uint8_t *kind; /* enum verify_kind bits */
	uint32_t narcs;
	const uint32_t *tail, *head;
	const double *bw;   /* per arc; INFINITY: none */
	const double *cost; /* per arc per block, or NULL: the report's cost sums it */
	uint32_t nsets;
	const uint32_t *set_off, *set_arc; /* nsets + 1 offsets, arcs */
	const double *set_bw;
	double step_time; /* a step's duration per block of bandwidth */
	/* Each step's own (nsteps entries, each > 0), or NULL: step_time for
	 * every step. Phases of different step times in one schedule (a
	 * reduce-scatter then an allgather, each at its own R/K). */
	const double *step_times;
	double tolerance;
};

struct verify_opts {
	const struct graph *graph;	      /* direct-connect: transfers must follow arcs */
	const struct verify_wdm *wdm;	      /* WDM ring on nodes 0..N-1 in ring order */
	uint64_t seed;			      /* for the reduce weights; 0 = fixed default */
	const struct verify_network *network; /* a general network (above) */
	/* Direct-connect: when set, nsteps entries for each step's most data
	 * (blocks) on one link (pricing NIC-limited hosts step by step). */
	double *step_link_load;
	/* Nodes that take no part (failed hosts), one byte per node,
	 * nonzero: absent. An absent node has no data of its own and needs
	 * none, so its blocks (shards) do not exist, and a transfer from or to
	 * it is an error; the others complete the collective among themselves
	 * (a reduction sums their inputs only). NULL: every node takes part. */
	const uint8_t *absent;
	/* Direct-connect: each arc's capacity (graph's CSR index) in reference
	 * links; a link's load is then its data over its capacity (step times
	 * at mixed link rates). NULL: every link 1. */
	const double *arc_capacity;
	/* The request's deadline and progress, or NULL: checked
	 * and reported every step; past the deadline the check fails. */
	const struct ofc_clock *clock;
	/* Worker threads the check may use (0 = all CPUs, 1 = this thread
	 * alone); a check split over threads reports exactly as one. */
	unsigned threads;
	/* Transfers from which a reduction's or an all-gather's check against
	 * a graph is split in two parts, the data and the links, each its own
	 * pass on its own thread (or both step by step on one), which only
	 * proves a schedule right (0: the verifier's own threshold); tests
	 * lower it to split small ones. */
	size_t par_min_xfers;
	/* The step loop's check alone, never split: the reference the split
	 * one is held to in tests. */
	bool step_loop;
	/* An all-to-all of skewed pairs (a demand matrix): each
	 * block's size in shards (n x n by block id, origin * n + target),
	 * NULL: 1 each. A transfer then loads its links with its part times
	 * its block's weight, and a block of weight 0 need not arrive. */
	const double *block_weight;
};

struct verify_report {
	bool ok;
	char error[320];
	uint32_t bad_step; /* where the first error is (when !ok) */
	size_t bad_xfer;
	uint32_t nsteps;
	size_t ntransfers;
	/* Direct-connect: the most data (in blocks, over the link's capacity
	 * when arc_capacity is given) on one link in each step, summed over
	 * steps, and the largest of them. */
	double sum_max_link_load;
	double max_link_load;
	/* Direct-connect: the most data on one link over the whole schedule
	 * (same units): what a link carries when every transfer shares the
	 * links at once, as cut-through routes do (their one step's load). */
	double max_total_link_load;
	/* WDM: the most wavelengths busy on one fibre segment in any step. */
	uint32_t max_wavelengths_used;
	/* Copy collectives: data received by a node that already had it. */
	double duplicate_blocks;
	/* Network: sum of cost x blocks over all transfers, and the largest
	 * per-step load of a set or arc over step_time x its bandwidth. */
	double network_cost;
	double max_utilisation;
	/* A reduction or an all-gather against a graph proved right by the
	 * check in two parts, the data and the links (on two threads, or
	 * step by step on one); false when the step loop gave the verdict
	 * (it writes every failing report) or for the all-to-all's check by
	 * sorting. */
	bool split;
	/* A reduction by symmetry: the pieces of a shard whose every transfer
	 * is a span of the whole vector, checked by the spans' sums (the
	 * nodes whose inputs every block ends with), not block by block. */
	uint32_t pieces_by_sums;
};

/* Returns 0 when the schedule is correct; otherwise -1 with the first error
 * in report->error. */
int sched_verify(const struct schedule *s, const struct verify_opts *o,
		 struct verify_report *report);

/* Schedules of k disjoint groups run at once on one topology
 * (sched/groups.c): s[i] names nodes of o[i]->graph (the same graph for
 * all; o[i]->absent marks the nodes outside group i, o[i]->block_weight
 * an all-to-all's demands), each checked by sched_verify with its o[i];
 * then their link loads are summed step by step (step t of every group at
 * once): report's sum_max_link_load, max_link_load and max_total_link_load
 * are the groups' together, nsteps the most, ntransfers the sum. -1 with
 * the first group's error ("group I: ...") when one fails. */
int sched_verify_groups(const struct schedule *const *s, const struct verify_opts *const *o,
			uint32_t k, struct verify_report *report);

/* ---- symmetry-reduced schedules (sched/reduced.c, verify_reduced*.c) -----------
 * On a Cayley graph of an abelian group G (tori Z_a x Z_b x ..., hypercubes
 * Z_2^k, circulants and rings Z_n, Hamming Z_q^n, complete graphs Z_n,
 * complete bipartite Z_d x Z_2), where port j of every node u leads to
 * u + s_j, the translation u -> u + g is an automorphism that keeps ports.
 * A schedule invariant under G is then one program plus G: the program
 * holds one transfer per orbit of transfers, and the schedule is every
 * transfer of the program translated by every g (src + g, dst + g, the
 * block of origin o becomes that of o + g, all-to-all o*N+t becomes
 * (o+g)*N+(t+g); offset, length, port and op unchanged). Node ids are
 * mixed-radix: node = sum x_i stride_i, x_0 fastest, as topo numbers the
 * families, so g acts coordinatewise (XOR on the hypercube).
 *
 * The group may be a subgroup H: the translations whose coordinate i is a
 * multiple of step[i] (Swing's peers keep the parity of a coordinate, so
 * only the even translations keep its schedule). Then the program has one
 * transfer per orbit under H, and the check tracks the `reps` nodes with
 * x_i < step[i] (one per orbit of nodes) instead of node 0 alone. */
#define SCHED_GROUP_MAX_DIMS	32
#define SCHED_REDUCED_MAX_NODES 65536u /* node ids in a transfer are 16 bits */

struct sched_group {
	uint32_t order; /* |G|: the translates of each program transfer */
	uint32_t nodes; /* order x reps */
	uint32_t ndims;
	uint32_t radix[SCHED_GROUP_MAX_DIMS];
	uint32_t stride[SCHED_GROUP_MAX_DIMS];
	uint32_t step[SCHED_GROUP_MAX_DIMS]; /* 1: every translation in dimension i */
	uint32_t reps;			     /* orbits of nodes: the product of steps */
	bool binary;			     /* every radix 2: u + g is u ^ g */
	bool pow2;			     /* every radix a power of two: shifts, masks */
	bool even;			     /* every step 2 (Swing's subgroup) */
	uint8_t shift[SCHED_GROUP_MAX_DIMS]; /* pow2: stride = 1 << shift */
	char name[80];			     /* "Z_256 x Z_256", "Z_2^16" */
};

/* The translation group of g, from the family its spec tree names (torus,
 * hypercube, circulant, ring, biring, complete, hamming, bipartite), checked
 * on g itself: g is regular and port j of every u leads to u + (port j of 0),
 * O(N d). OFC_E_INPUT with the reason when g is not such a Cayley graph
 * (other families, expansions, degraded graphs). */
int sched_group_of(const struct graph *g, const struct topo_tree *t, struct sched_group *G,
		   struct ofc_error *err);
/* The product Z_radix[0] x ... x Z_radix[k-1] on mixed-radix ids, checked
 * against no graph (every radix 2: XOR on the ids, which recursive
 * doubling's peers are, whatever graph routes them). */
void sched_group_make(struct sched_group *G, const uint32_t *radix, uint32_t k);
/* G restricted to the translations by multiples of step[i] in dimension i
 * (each step divides the radix); the name says so ("2Z_8 x 2Z_8"). */
int sched_group_restrict(struct sched_group *G, const uint32_t *step, struct ofc_error *err);
/* The e-th element (e < order) as the node it takes 0 to. */
uint32_t sched_group_element(const struct sched_group *G, uint32_t e);
/* v = rep + h with rep one of the representatives (x_i < step[i]) and h in
 * G: the representative's index (0 .. reps - 1), h in *h. */
uint32_t sched_group_split(const struct sched_group *G, uint32_t v, uint32_t *h);
/* The node of representative i. */
uint32_t sched_group_rep_node(const struct sched_group *G, uint32_t i);

static inline uint32_t sched_group_add(const struct sched_group *G, uint32_t a, uint32_t b)
{
	uint32_t r = 0;

	if (G->binary)
		return a ^ b;
	if (G->pow2) {
		for (uint32_t i = 0; i < G->ndims; i++) {
			uint32_t m = G->radix[i] - 1, sh = G->shift[i];

			r |= ((((a >> sh) & m) + ((b >> sh) & m)) & m) << sh;
		}
		return r;
	}
	for (uint32_t i = 0; i < G->ndims; i++) {
		uint32_t x = (a / G->stride[i]) % G->radix[i] + (b / G->stride[i]) % G->radix[i];

		r += (x >= G->radix[i] ? x - G->radix[i] : x) * G->stride[i];
	}
	return r;
}

/* a - b */
static inline uint32_t sched_group_sub(const struct sched_group *G, uint32_t a, uint32_t b)
{
	uint32_t r = 0;

	if (G->binary)
		return a ^ b;
	if (G->pow2) {
		for (uint32_t i = 0; i < G->ndims; i++) {
			uint32_t m = G->radix[i] - 1, sh = G->shift[i];

			r |= ((((a >> sh) & m) - ((b >> sh) & m)) & m) << sh;
		}
		return r;
	}
	for (uint32_t i = 0; i < G->ndims; i++) {
		uint32_t x = (a / G->stride[i]) % G->radix[i] + G->radix[i] -
			     (b / G->stride[i]) % G->radix[i];

		r += (x >= G->radix[i] ? x - G->radix[i] : x) * G->stride[i];
	}
	return r;
}

/* A symmetry-reduced schedule: prog.nodes = G.nodes; prog's transfers are
 * the orbit representatives, step by step (prog.nsteps = the schedule's
 * steps). The engines emit node 0's own problem's transfers (BFB: what
 * node 0 receives in an allgather, what it sends in a reduce-scatter), but
 * any set of representatives is a reduced schedule. */
struct sched_reduced {
	struct sched_group group;
	struct schedule prog;
};

void sched_reduced_free(struct sched_reduced *r);
/* Transfers of the whole schedule: order x program. */
/* Spans counted block by block (sched_block_xfers). */
static inline uint64_t sched_reduced_transfers(const struct sched_reduced *r)
{
	return (uint64_t)r->group.order * sched_block_xfers(&r->prog);
}
/* x translated by g (the schedule's collective decides the block). */
struct xfer sched_reduced_move(const struct sched_reduced *r, const struct xfer *x, uint32_t g);
/* The explicit schedule (sched_init done here): step by step, every
 * element of G applied to the step's program. OFC_E_INPUT when it would
 * not fit a schedule (nodes, 2^32 transfers). */
int sched_reduced_expand(const struct sched_reduced *r, struct schedule *s, struct ofc_error *err);

/* The verifier's checks (below) by the same symmetry, without expanding:
 * the state of the whole fabric is G applied to node 0's, so node v holds
 * block b iff node 0 holds b - v. Per step, each program transfer x is
 * checked where it stands (range, link and port, causality: node 0 holds
 * block(x) - src(x)) and delivers to node 0 its translate by -dst(x); the
 * load of every arc of port j is the program's load on port j (one
 * translate of each orbit leaves node 0). Reductions are tracked as in
 * sched_verify with the input of node u to shard k weighted by k - u, which
 * G leaves unchanged. Cost O(program x degree + N) and node 0's state (N
 * blocks): a 65,536-node allgather checks in milliseconds. Direct-connect
 * (o->graph, whose n is G's order) or no graph; not WDM rings (their reduced schedules,
 * whose subgroup changes with the step, are sched_ring_reduced) or networks;
 * allgather, reduce-scatter, allreduce and all-to-all (node 0 keeps the
 * blocks (o, t) it holds in a hash: its own, relayed ones and those it
 * must end with). The report counts the whole schedule's transfers and
 * duplicates (order x node 0's). */
int sched_verify_reduced(const struct sched_reduced *r, const struct verify_opts *o,
			 struct verify_report *report);

/* A WDM ring all-gather reduced by rotations whose subgroup changes with
 * the step (sched/ring_reduced.c; OpTree, whose stage i >= 2 repeats every
 * n_(i-1) nodes and stage 1 not at all): step t's program transfers, each
 * with src < period[t], stand for themselves rotated by every multiple h of
 * period[t] (src + h, dst + h, block + h, modulo N; direction, fibre and
 * wavelength unchanged). period[t] divides N; N means the step is
 * explicit. Whole blocks, copies only. */
struct sched_ring_reduced {
	struct schedule prog; /* prog.nodes = N, prog.collective = SCHED_ALLGATHER */
	uint32_t *period;     /* prog.nsteps entries, owned */
};

void sched_ring_reduced_free(struct sched_ring_reduced *r);
/* Transfers of the whole schedule: sum over steps of program x N / period. */
uint64_t sched_ring_reduced_transfers(const struct sched_ring_reduced *r);
/* The explicit schedule (sched_init done here). */
int sched_ring_reduced_expand(const struct sched_ring_reduced *r, struct schedule *s,
			      struct ofc_error *err);
/* sched_verify's WDM checks (verify_opts.wdm = w) by the same symmetry: per step, the
 * program's lightpaths read modulo the period are pairwise disjoint on each
 * (direction, fibre, wavelength) and none is longer than the period; a
 * lightpath carries one block; a node adds and drops at most max_add; the
 * sender holds the block before the step; every node ends with all N
 * blocks. State: period x N bits (the representatives'), moved between
 * periods by rotation and checked invariant under the next step's (else it
 * fails, saying so). A pass means the expansion passes sched_verify; the
 * report counts the whole schedule (transfers, duplicates, the most
 * wavelengths busy on one segment). */
int sched_verify_ring_reduced(const struct sched_ring_reduced *r, const struct verify_wdm *w,
			      struct verify_report *report);

/* BFB (sched/bfb.c) as a reduced schedule on G: node 0's (u, t) problems
 * alone, since u + g's problem is the translate of u's and so is a
 * solution of it; distances by a BFS from node 0 and from each of its
 * neighbours, O(N d), then node 0's flows. Figures as bfb_schedule's
 * (problems counts node 0's). Up to SCHED_REDUCED_MAX_NODES nodes; no link
 * rates (o->rate must be NULL). */
int bfb_reduced(const struct graph *g, const struct sched_group *G, enum sched_collective c,
		const struct bfb_opts *o, struct sched_reduced *r, struct bfb_stats *st,
		struct ofc_error *err);
/* The all-to-all MCF (sched/alltoall.c) as a reduced schedule on G: the
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
/* Swing allreduce (sched/swing.c; algo "swing", bandwidth- or
 * latency-optimal, multiport) as a reduced schedule: its peers keep the
 * parity of every coordinate, so the group is G (the torus's translations)
 * restricted to the even ones, and the program is the 2^D nodes with
 * coordinates in {0, 1}^D; their block sets come from the representatives'
 * by translation (no N x N reach sets). Figures routed as
 * torus_routed_figures routes them, per orbit of arcs. Recursive doubling
 * ("recursive-doubling"): its peers r XOR 2^s (power-of-two dimensions)
 * are the XOR translations of the node ids, not the torus's, so its group
 * is Z_2^log2(N) on the ids (r->group, whatever G is) and the program node
 * 0's sends; it is checked without a graph, as the explicit one is, and
 * its routed figures route every node's message of each step (N per step,
 * no orbit of arcs: XOR moves no torus arc onto another). Latency-optimal:
 * power-of-two sizes up to SWING_REDUCED_LATENCY_NODES, the 16-bit node
 * ids' limit. Every step sends the whole vector: one span of all N blocks
 * a representative, collective and step (xfer_blocks; the check by
 * symmetry takes spans, and the expansion cuts them into blocks), so its
 * program is reps x steps x collectives transfers (Swing on torus:256x256:
 * 4 x 16 x 4 = 256, where one a block was 16.7 M, 335 MB). Every one is
 * a reduction of the whole vector, which the check by symmetry takes by
 * the spans' sums (span_sums: a byte a node), not block by block. */
#define SWING_REDUCED_LATENCY_NODES SCHED_REDUCED_MAX_NODES
/* A baseline (sched/baseline.c) as a reduced schedule on G (g's
 * translations, sched_group_of): "torus-rings" and "recursive" (G XOR: a
 * hypercube) as node 0's sends under G; "ring" and "bidir-ring" on a torus
 * with an even dimension j of size >= 4, along the reflected Gray code
 * cycle (which baseline_schedule takes on such a torus too), under G
 * restricted to the multiples of 2 e_j (r->group: the N / (a_j / 2)
 * representatives' sends). OFC_E_INPUT with the reason where the schedule
 * has no such symmetry (recursive on a torus, rings on a hypercube or a
 * torus of odd sizes). Above BASELINE_MAX_SCHEDULE_NODES `ofc schedule`
 * builds it by itself where it exists. */
#define BASELINE_MAX_SCHEDULE_NODES 1024u
/* The transfers baseline_reduced's program will hold (its memory estimate,
 * before building it), and its representatives in *reps (whose state the
 * check keeps: reps x N cells); 0 when the baseline has no such form on
 * that family (recursive: only the caller's group tells, XOR or not). */
double baseline_reduced_transfers(const struct graph *g, const struct topo_tree *t,
				  const char *algo, enum sched_collective c, uint32_t *reps);
int baseline_reduced(const struct graph *g, const struct topo_tree *t, const char *algo,
		     enum sched_collective c, const struct sched_group *G, struct sched_reduced *r,
		     struct ofc_error *err);
/* r NULL: the figures alone, without the program (latency-optimal Swing
 * only: its runs are known without building it), the same as the built
 * program's; what choosing a variant by price needs before building it. */
int torus_allreduce_reduced(const struct topo_tree *t, const char *algo, enum swing_variant v,
			    const struct sched_group *G, struct sched_reduced *r,
			    struct torus_figures *f, struct ofc_error *err);
/* The transfers torus_allreduce_reduced's program will hold (its memory
 * estimate, before building it) and its representatives in *reps (whose
 * state the check keeps: reps x N cells, but for latency-optimal spans,
 * checked by their sums); 0 when t is no torus algo schedules. */
double torus_allreduce_reduced_transfers(const struct topo_tree *t, const char *algo,
					 enum swing_variant v, uint32_t *reps);
int a2a_reduced(const struct graph *g, const struct sched_group *G, const struct a2a_request *q,
		struct sched_reduced *r, struct a2a_outcome *o, struct ofc_error *err);

/* ---- exports ------------------------------------------------------------- */

/* The shape every schedule in ofc shares:
 * {"collective", "algorithm", "nodes", "steps": [{"transfers": [{"src",
 * "dst", "origin", "offset", "length", ...}]}]}, plus the summary fields.
 * WDM fields appear on ring schedules, "port" on direct-connect ones,
 * "target" on all-to-all, "op": "reduce" on reducing transfers. */
void sched_write_json(struct json_writer *w, const struct schedule *s, bool with_steps);
/* The same members without the enclosing braces, for callers that add
 * their own (the fabric-aware export adds the links). */
void sched_write_json_members(struct json_writer *w, const struct schedule *s, bool with_steps);
/* A compact listing for people: per step, its transfers (up to a limit). */
void sched_write_text(FILE *out, const struct schedule *s, uint32_t max_lines);

#endif
