/* optree — all-gather on MRR-based WDM rings: OpTree's m-ary tree of
 * stages (Theorems 1-3 of the paper, rebuilt in ../shared/notes/optree.md),
 * the baselines it is compared with (ring, neighbor exchange, one-stage),
 * a planner over integer radices, and the time model.
 *
 * Every algorithm is built as an explicit schedule (sched/sched.h) whose
 * transfers carry direction, fibre and wavelength from rwa/ (OpTree's
 * all-gather on an even plan also as a sched_ring_reduced: one group's
 * program per stage and the rotations; optree_opts.reduced); a step is one
 * block time, each lightpath carries one block per step. Schedule node k is
 * ring position k; segment k joins positions k and k+1.
 *
 * The tree: level 0 is the whole ring; a level-(i-1) group of n consecutive
 * nodes splits into m_i children of near-equal size (mixed radices; uneven
 * groups when m_i does not divide n). Stage i: inside each level-(i-1)
 * group, the node at position j of a child sends everything it holds to the
 * node at position j (or the child's last, when the child is shorter) of
 * every other child. Members of each child then hold disjoint sets that
 * together cover the group's blocks, so after the last stage (singleton
 * groups) every node holds all N blocks.
 */
#ifndef OFC_OPTREE_H
#define OFC_OPTREE_H

#include "rwa/rwa.h"
#include "sched/sched.h"
#include "util/util.h"

#define OPTREE_MAX_DEPTH 32
/* Above this many nodes OpTree's all-gather defaults (--reduced auto) to
 * the symmetry-reduced schedule. Explicit schedules are built up to
 * SCHED_MAX_NODES (transfers name nodes in 16 bits, a true limit) when
 * their memory estimate fits (controller/schedule/ring.c). */
#define OPTREE_MAX_NODES 8192u
#define OPTREE_MAX_CELLS (1u << 25) /* 2 F W N: the verifier's per-channel state */

struct optree_ring {
	uint32_t nodes;	      /* N */
	uint32_t wavelengths; /* W per fibre */
	uint32_t fibres;      /* F per direction */
	uint32_t max_add;     /* lightpaths a node may add (and drop) in one step */
	double rate;	      /* bits/s per wavelength (B_lambda) */
	double mrr_delay;     /* s to retune MRRs (d_mrr) */
	double oeo_delay;     /* s per O/E/O conversion (d_oeo) */
	uint64_t block_bytes; /* b: what each node contributes */
};

/* Range checks for a ring (OFC_E_INPUT with the reason). */
int optree_ring_check(const struct optree_ring *r, struct ofc_error *err);

enum optree_algo {
	OPTREE_RING = 1,
	OPTREE_NE = 2,
	OPTREE_ONESTAGE = 3,
	OPTREE_TREE = 4,
	OPTREE_WRHT = 5,
};

/* "ring", "ne", "onestage", "optree", "wrht" */
const char *optree_algo_name(enum optree_algo a);
int optree_algo_parse(const char *s, enum optree_algo *a);

/* ---- the paper's analytic optimum (Theorems 1-3) ------------------------ */

struct optree_analytic {
	double k_real;	/* stationary point of N^(1/k) (2k - 1) in k */
	uint32_t depth; /* Theorem 2: k_real rounded to the nearest integer, >= 1 */
	double radix;	/* m = N^(1/depth) */
	double steps;	/* Theorem 1: S = N m (2k - 1) / (8 F W) */
	double time_us; /* Eq. 3: S b / B_lambda + k (d_mrr + d_oeo) */
};

void optree_analytic(const struct optree_ring *r, struct optree_analytic *a);

/* ---- plans -------------------------------------------------------------- */

struct optree_plan {
	uint32_t depth;
	uint32_t radix[OPTREE_MAX_DEPTH];
	bool uneven;				/* some group splits unevenly */
	uint32_t stage_steps[OPTREE_MAX_DEPTH]; /* predicted, before add/drop splits */
	uint32_t steps;
	double time_us; /* predicted by Eq. 3 */
};

/* The plan with the least predicted time (Eq. 3, so steps first for large
 * blocks) among every exact factorisation of N into radices (dynamic
 * programming over divisors) and balanced uneven radix sequences. The
 * prediction is exact: it uses the same routing and colouring as the
 * builder. */
int optree_plan_best(const struct optree_ring *r, struct optree_plan *p, struct ofc_error *err);
/* The best exact factorisation of N (every group splits evenly): the plans
 * a reduced schedule (optree_opts.reduced) can take. OFC_E_INPUT when its
 * program, N (m_i - 1) transfers per stage, would outgrow an explicit
 * OPTREE_MAX_NODES schedule (a prime N: one stage of radix N). */
int optree_plan_even(const struct optree_ring *r, struct optree_plan *p, struct ofc_error *err);
/* A given radix sequence (checked: each >= 2, product >= N, and no stage
 * without traffic) and its prediction. */
int optree_plan_radices(const struct optree_ring *r, const uint32_t *radix, uint32_t depth,
			struct optree_plan *p, struct ofc_error *err);
/* "4,4,2" or "4x4x2". */
int optree_parse_radices(const char *s, uint32_t *radix, uint32_t *depth, struct ofc_error *err);

/* ---- building schedules ------------------------------------------------- */

struct optree_opts {
	enum optree_algo algo;
	const struct optree_plan *plan; /* tree: the plan to build (NULL: the best) */
	bool overlap; /* arrange stage ends so the next stage's MRRs can be pre-tuned */
	/* 0 or SCHED_ALLGATHER; SCHED_REDUCE_SCATTER: the all-gather of the
	 * algorithm reversed in time with every lightpath turned round (a
	 * broadcast tree read backwards is a reduction tree; Zhao et al.'s
	 * Cor. 3.1 argument, which holds for any schedule in which no node
	 * receives a block twice); SCHED_ALLREDUCE: that reduce-scatter, then
	 * the all-gather. SCHED_ALLTOALL: direct lightpaths for all N(N-1)
	 * pairs, routed and coloured by the RWA engine `rwa` (only "onestage"). */
	enum sched_collective collective;
	/* Tree all-gather on a plan with even groups: build only what a
	 * sched_ring_reduced needs (stage i: the transfers of the first
	 * level-(i-1) group, period n_(i-1); stage 1 whole), into res->sched
	 * and res->period, without merging stage ends (a shared step would mix
	 * two periods). NULL plan: optree_plan_even's. Up to SCHED_MAX_NODES. */
	bool reduced;
	int rwa_engine;		  /* all-to-all: enum rwa_engine, 0 = the heuristic */
	double time_limit;	  /* all-to-all ILP/LP: seconds for the solver, 0 = none */
	enum lp_solver lp_solver; /* all-to-all LP relaxation's (rwa_opts) */
};

struct optree_stage {
	uint32_t radix;	 /* tree: children per group (largest); baselines: 0 */
	uint32_t groups; /* groups it runs in (tree), or 1 */
	uint32_t min_group, max_group;
	uint32_t first_step;	   /* 0-based */
	uint32_t steps;		   /* realised, after add/drop splits */
	uint32_t colour_steps;	   /* from the wavelength assignment alone */
	uint64_t max_load;	   /* blocks on the busiest segment-direction */
	uint32_t lower_bound;	   /* steps no routing and assignment of this stage can beat */
	uint32_t partial_channels; /* channels used in its one partly filled step (0: none) */
	bool partial_first;	   /* that step goes first (else last) */
	bool merged;		   /* its first step also carries the previous stage's last */
	uint64_t transfers;
};

struct optree_result {
	enum optree_algo algo;
	struct schedule sched; /* owned; verified by the caller; reduced: the program */
	uint32_t *period;      /* reduced: per step (sched_ring_reduced), owned; else NULL */
	struct optree_plan plan;
	struct optree_stage *stage;
	uint32_t nstages;
	uint32_t split_steps;	    /* extra steps made by add/drop splits */
	uint32_t lower_bound_steps; /* sum of the stages' bounds, less one per merge */
	double analytic_steps;	    /* the algorithm's closed form */
	uint32_t analytic_depth;
	bool overlap;
	enum sched_collective collective;
	uint32_t wrht_radix; /* Wrht: the group size it chose */
	/* All-to-all: the RWA engine that assigned the lightpaths (0 for the
	 * other collectives) and what it reported: its method, wavelengths
	 * against their bounds, ILP models solved, seconds. */
	enum rwa_engine rwa_engine;
	struct rwa_report rwa;
};

/* Build the schedule of an algorithm. Errors: OFC_E_INPUT for rings or
 * plans it cannot serve (e.g. neighbor exchange on an odd ring). */
int optree_build(const struct optree_ring *r, const struct optree_opts *o,
		 struct optree_result *res, struct ofc_error *err);
void optree_result_free(struct optree_result *res);

/* The verifier's WDM view of the ring. */
struct verify_wdm optree_verify_wdm(const struct optree_ring *r);

/* ---- time model ----------------------------------------------------------
 * T = S b / B_lambda + R d_mrr + H d_oeo: H is the number of stages (one
 * O/E/O relay each), R the stages whose first step must retune some MRR.
 * For OpTree R = H = k and this is Eq. 3 of the paper. MRR state is tracked
 * per node and channel (transmit and receive ring): a step needs a ring
 * tuned (adding, dropping) or detuned (light passing through); an idle
 * channel leaves the ring as it was. With --overlap a retune waits only
 * d_mrr minus the time its ring sat idle just before, and the stall of a
 * step is the longest such wait. The paper charges retuning per stage;
 * steps inside a stage retune too, which `all_retunes_us` counts. */
struct optree_time {
	double step_us;		/* b / B_lambda */
	double time_us;		/* the model above (with overlap when asked) */
	double plain_us;	/* without overlap */
	double saved_us;	/* plain_us - time_us */
	uint32_t retune_stages; /* R */
	uint32_t hidden_stages; /* stage starts whose retune overlap hid completely */
	uint32_t retune_steps;	/* steps (of all) that need some MRR changed */
	double all_retunes_us;	/* charging every such step, overlap as asked */
	double all_retunes_plain_us;
};

void optree_timing(const struct optree_ring *r, const struct optree_result *res, bool overlap,
		   struct optree_time *t);

#endif
