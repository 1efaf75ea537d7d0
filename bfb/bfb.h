/* bfb — BFB (breadth-first-broadcast) schedules on direct-connect
 * topologies (Zhao et al.), the paper's expansion constructions grown from
 * them, and the topology finder that prices both. Every schedule is a
 * struct schedule (sched/sched.h) for the one verifier. */
#ifndef OFC_BFB_H
#define OFC_BFB_H

#include "rwa/rwa.h" /* enum lp_solver */
#include "sched/sched.h"

/* ---- BFB: breadth-first-broadcast schedules (bfb/bfb.c) --------------------
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
	/* Group every receiver's sources by sorting them, never by the keyed
	 * counting passes where those fit: the same groups either way
	 * (test_bfb compares the two schedules); false is the fast way. */
	bool sort_groups;
	/* The request's deadline, or NULL: checked per node
	 * solved; past it bfb_schedule fails (OFC_E_RUNTIME). */
	const struct ofc_clock *clock;
	/* BFB_LP's solver; LP_SOLVER_DEFAULT: BFB_LP_SOLVER. */
	enum lp_solver lp_solver;
};
/* LP (3)'s solver when the request names none (measured in
 * bench/results/lp.md, "LP solvers"). */
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
	uint32_t whole;	      /* a patch: nodes solved whole (problems counts them too) */
	bool mirrored;	      /* a patch: its reductions its copies mirrored, one phase solved */
	uint32_t longer;      /* a patch: steps a phase gained past the healthy diameter */
	/* a patch: the whole nodes' sources the healthy program sends whole over
	 * a link their degraded problem keeps, and of them those left there */
	uint64_t healthy_marked, healthy_kept;
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

/* ---- expansion constructions (bfb/expand.c) -----------------------------
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

/* ---- the topology finder (bfb/finder.c) ----------------------------------
 * Zhao et al. Sec. 5.4 / App. G: the Pareto frontier of (tau_L, tau_B) over
 * base families (evaluated by BFB) and their expansions (priced by the
 * paper's formulas, or by BFB on the expanded graph where that is cheap and
 * better) for exactly N nodes of degree d. Figures are per allgather;
 * allreduce doubles both. The Diamond and DBJMod graphs of the paper are not
 * recoverable from it and are not candidates. A workload ranks the
 * frontier through controller/pick. */
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

/* BFB (bfb/bfb.c) as a reduced schedule on G: node 0's (u, t) problems
 * alone, since u + g's problem is the translate of u's and so is a
 * solution of it; distances by a BFS from node 0 and from each of its
 * neighbours, O(N d), then node 0's flows. Figures as bfb_schedule's
 * (problems counts node 0's). Up to SCHED_REDUCED_MAX_NODES nodes; no link
 * rates (o->rate must be NULL). */
int bfb_reduced(const struct graph *g, const struct sched_group *G, enum sched_collective c,
		const struct bfb_opts *o, struct sched_reduced *r, struct bfb_stats *st,
		struct ofc_error *err);

/* BFB on g without the arcs gone[] (bfb/patch.c, patch_blocks.c) as r,
 * bfb_reduced's schedule on the healthy g, plus a patch: the nodes that
 * lost an in-link (in either phase) solved whole on the degraded graph, as
 * bfb_schedule would, the blocks that come out as the healthy ones left
 * to the base (st->whole of them; p->region stays empty); of every other
 * node the failures reach (a distance to it or to an in-neighbour
 * changed) only the blocks whose choice changed, filled over the loads
 * its kept blocks leave. Every other node keeps its healthy program, which
 * solves its unchanged problem. st->problems: the nodes planned block by
 * block, those solved whole among them. Where the failures make a
 * distance longer than the healthy diameter, r is padded first with the
 * steps it needs, empty, in front of the reductions and behind the copies
 * (st->longer a phase; every base transfer keeps its time within its
 * phase): the patched schedule's base. OFC_E_INPUT when the failures
 * disconnect the fabric (naming a node that can no longer reach another);
 * OFC_E_RUNTIME, with what it holds, past max_bytes (0: no limit). absent
 * (g->n bytes, NULL: none) marks failed hosts: the others run the
 * collective among themselves (p->absent; their arcs are gone whatever
 * gone[] says). */
int bfb_patch(const struct graph *g, struct sched_reduced *r, const bool *gone,
	      const uint8_t *absent, const struct bfb_opts *o, uint64_t max_bytes,
	      struct sched_patch *p, struct bfb_stats *st, struct ofc_error *err);

/* BFB re-balanced across steps (bfb/rebalance.c): s, an explicit BFB
 * allgather, reduce-scatter or allreduce on g (a degraded fabric's), has
 * the receivers above each step's busiest link given their shards again
 * over every step and link of the phase (a max flow each), each step's
 * busiest link lowered as far as they fit under the others', and a step's
 * load shifted onto the phase's last step, or onto one step more per phase
 * where step_blocks >= 0 (what a step costs, alpha, in blocks on the
 * busiest link: alpha N / (d M/B)). Returns 1 with s replaced when tau_B
 * fell by more than the added steps cost, 0 with s as it was (nothing
 * lower found, or not of the form: single-arc transfers of whole-shard
 * relays, up to 1,024 nodes). work: flow slots built and scanned at most, per phase
 * half (0: BFB_REBALANCE_WORK); past work or clock's deadline (NULL: none)
 * what was found so far stands. */
struct bfb_rebalance_stats {
	/* the phases' steps' busiest links summed, SCHED_ONE a block */
	uint64_t sum_before, sum_after;
	uint32_t steps_lowered, receivers; /* receivers solved again */
	uint32_t steps_added;
	uint64_t work_spent;
};
#define BFB_REBALANCE_WORK 1500000000ull
int bfb_rebalance(const struct graph *g, struct schedule *s, uint64_t work, double step_blocks,
		  const struct ofc_clock *clock, struct bfb_rebalance_stats *st);

#endif
