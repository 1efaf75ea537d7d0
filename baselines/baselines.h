/* baselines — the classic schedules BFB is compared with on
 * direct-connect topologies (rings along a Hamiltonian cycle, recursive
 * doubling, the torus's per-dimension rings) and Swing allreduce with
 * recursive doubling on tori, explicit or reduced by symmetry. Every
 * schedule is a struct schedule (sched/sched.h) for the one verifier. */
#ifndef OFC_BASELINES_H
#define OFC_BASELINES_H

#include "sched/sched.h"

/* ---- classic baselines (baselines/baseline.c) -----------------------------------
 * For comparison through the same pipeline: BASELINE_RING (one-way ring
 * along a Hamiltonian cycle of the topology), BASELINE_BIDIR_RING (both
 * ways, half each), BASELINE_RECURSIVE (recursive doubling / halving, N a
 * power of two; relayed store-and-forward where partners are not linked,
 * allgather only) and BASELINE_TORUS_RINGS (the traditional per-dimension
 * torus schedule; t must name a torus). The engine rows say which one a
 * name runs; the library never reads a name. An error of kind OFC_E_INPUT
 * says why one does not apply. */
enum baseline_algo { BASELINE_RING, BASELINE_BIDIR_RING, BASELINE_RECURSIVE, BASELINE_TORUS_RINGS };
/* "ring", "bidir-ring", "recursive", "torus-rings": the messages' word. */
const char *baseline_algo_name(enum baseline_algo a);
/* The transfers baseline_schedule(g, a, c) will hold (its memory
 * estimate, before building it): n (n - 1) per phase on a ring, twice on
 * both rings, once per port for torus-rings, each relayed hop for
 * recursive doubling on a graph that is no hypercube. */
double baseline_transfers(const struct graph *g, enum baseline_algo a, enum sched_collective c);
/* ... and the pieces it cuts each block into (2 on both rings, one per
 * port for torus-rings, else 1: whole blocks). */
uint32_t baseline_pieces(const struct graph *g, enum baseline_algo a);
/* clock (may be NULL): the request's; past it, -1 with "time limit T
 * reached in generation" (OFC_E_RUNTIME) and nothing built. */
int baseline_schedule(const struct graph *g, const struct topo_tree *t, enum baseline_algo a,
		      enum sched_collective c, struct schedule *s, const struct ofc_clock *clock,
		      struct ofc_error *err);
/* Whether a applies to g (t) and c as far as can be told without
 * building it (all but the search for a Hamiltonian cycle): 0, or -1 and
 * baseline_schedule's own reason. Callers estimating memory ask this
 * first, so a baseline that does not apply is not refused for its size. */
int baseline_check(const struct graph *g, const struct topo_tree *t, enum baseline_algo a,
		   enum sched_collective c, struct ofc_error *err);

/* ---- Swing allreduce and its torus baselines (baselines/swing.c) ------------------
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
/* Which of the two: Swing, or recursive doubling on the same machinery. */
enum torus_algo { TORUS_SWING, TORUS_RECURSIVE_DOUBLING };
/* "swing", "recursive-doubling": the schedules' and the messages' word. */
const char *torus_algo_name(enum torus_algo a);

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

/* Swing or recursive doubling on the torus t names; s may be NULL
 * for the figures alone (power-of-two sizes, any size up to 2^24 nodes);
 * otherwise the allreduce schedule (up to SCHED_MAX_NODES; the caller
 * checks its memory with torus_allreduce_transfers) and its
 * figures measured from it. */
int torus_allreduce(const struct topo_tree *t, enum torus_algo a, enum swing_variant v,
		    bool multiport, struct schedule *s, struct torus_figures *f,
		    struct ofc_error *err);
/* The transfers torus_allreduce's schedule will hold (its memory estimate,
 * before building it); 0 when t is no torus algo schedules. */
double torus_allreduce_transfers(const struct topo_tree *t, enum torus_algo a, enum swing_variant v,
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

/* Swing allreduce (baselines/swing.c; TORUS_SWING, bandwidth- or
 * latency-optimal, multiport) as a reduced schedule: its peers keep the
 * parity of every coordinate, so the group is G (the torus's translations)
 * restricted to the even ones, and the program is the 2^D nodes with
 * coordinates in {0, 1}^D; their block sets come from the representatives'
 * by translation (no N x N reach sets). Figures routed as
 * torus_routed_figures routes them, per orbit of arcs. Recursive doubling
 * (TORUS_RECURSIVE_DOUBLING): its peers r XOR 2^s (power-of-two dimensions)
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
/* A baseline (baselines/baseline.c) as a reduced schedule on G (g's
 * translations, sched_group_of): torus-rings and recursive (G XOR: a
 * hypercube) as node 0's sends under G; ring and bidir-ring on a torus
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
				  enum baseline_algo a, enum sched_collective c, uint32_t *reps);
int baseline_reduced(const struct graph *g, const struct topo_tree *t, enum baseline_algo a,
		     enum sched_collective c, const struct sched_group *G, struct sched_reduced *r,
		     struct ofc_error *err);
/* r NULL: the figures alone, without the program (latency-optimal Swing
 * only: its runs are known without building it), the same as the built
 * program's; what choosing a variant by price needs before building it. */
int torus_allreduce_reduced(const struct topo_tree *t, enum torus_algo a, enum swing_variant v,
			    const struct sched_group *G, struct sched_reduced *r,
			    struct torus_figures *f, struct ofc_error *err);
/* The transfers torus_allreduce_reduced's program will hold (its memory
 * estimate, before building it) and its representatives in *reps (whose
 * state the check keeps: reps x N cells, but for latency-optimal spans,
 * checked by their sums); 0 when t is no torus algo schedules. */
double torus_allreduce_reduced_transfers(const struct topo_tree *t, enum torus_algo a,
					 enum swing_variant v, uint32_t *reps);

/* ---- Swing around failed links (baselines/swing_reroute.c) -------------------------
 * On a torus with failed links (or ports: one way of a link), Swing's
 * logical exchanges stay the healthy ones (the same peers, the same data a
 * step, so the same result), and only the routes of the transfers whose
 * healthy route (the short way round their ring, a tie split) crosses a
 * failed arc change: the other way round, or aside by j (|j| <=
 * SWING_DETOUR_SIDE) in another dimension, along, and back, whichever
 * leaves its busiest arc least loaded, heaviest transfers first. The
 * schedule is the healthy reduced program (torus_allreduce_reduced) and this
 * patch, which grows with the failures (a failed arc is crossed by the
 * transfers of its own ring line), not with N. Arcs are named (node x D +
 * dimension) x 2 + way (0: the + way). */
#define SWING_DETOUR_SIDE 4
/* A half route is moved in this many parts, each on the route least
 * loaded at the time. */
#define SWING_DETOUR_PARTS 12

/* Where none of those is whole, a shortest route around the failures,
 * of those one with the fewest straight legs: a bounded search (within 2
 * x SWING_DETOUR_SIDE of the healthy route, at most 4 x SWING_DETOUR_SIDE
 * hops longer), else the whole torus's; refused where the failures cut
 * the peers apart or the fewest legs are more than SWING_DETOUR_LEGS (a
 * leg costs 4 bytes, on the routes searched alone). */
#define SWING_DETOUR_LEGS 16
#define SWING_WAY_PATH	  2

struct swing_leg {
	uint8_t dim, dir; /* dir 0: the + way */
	uint16_t len;
};

/* A part of one half of a (step, src, dst) exchange's healthy route, moved. */
struct swing_detour {
	uint32_t step, src, dst;
	uint32_t path;	  /* SWING_WAY_PATH: its legs, legs[path .. path + nlegs) */
	uint8_t half;	  /* the healthy route it replaces: 0 the + way, 1 the - way */
	uint8_t way;	  /* its own route along the ring: 0 +, 1 -; or SWING_WAY_PATH */
	uint8_t side_dim; /* the dimension it steps aside in */
	int8_t side;	  /* how far aside (0: none) */
	uint8_t nlegs;
	uint64_t units; /* what it carries: 2 x blocks x length (SCHED_ONE fixed point) */
};

struct swing_reroute {
	uint32_t *failed; /* arc ids, ascending */
	size_t nfailed;
	struct swing_detour *det; /* by step, (src, dst, half), route; each once */
	size_t ndet;
	struct swing_leg *legs; /* the searched routes' legs */
	size_t nlegs;
	uint32_t nsteps;
	size_t *step_start;	/* nsteps + 1: step st's detours */
	uint64_t *step_max;	/* per step: the busiest arc's load, in det's units */
	uint32_t *step_hops;	/* per step: the longest route */
	struct torus_figures f; /* the degraded figures, priced by step_max */
	uint32_t planned;	/* the steps planned for it: a step with an earlier
				   one's pairs is not (its plan is that one's) */
};

/* The arcs of torus t's healthy graph that the degraded g lacks, as
 * ascending arc ids (*arcs owned by the caller). OFC_E_INPUT where g has
 * other nodes (failed hosts: Swing's exchanges include every host) or a
 * side is under 4. */
int swing_failed_arcs(const struct topo_tree *t, const struct graph *healthy, const struct graph *g,
		      uint32_t **arcs, size_t *narcs, struct ofc_error *err);
/* Plan r's (Swing on t, torus_allreduce_reduced's, healthy figures
 * `healthy`) detours around the failed arcs: -1 with OFC_E_INPUT naming the
 * first transfer no route reaches (the failures cut its peers apart, or
 * its fewest legs are more than SWING_DETOUR_LEGS), or
 * OFC_E_RUNTIME when the detours would hold more than max_bytes. Cost
 * O(steps x failed arcs x the longest half x the program's pairs a node,
 * to find what crosses them, + detours x legs x candidates x (16 + ring /
 * 16), to place them on the ring lines' blocked loads, + a bounded rip-up
 * over each step's busiest arcs), memory O(N x D) for a step's loads plus
 * the patch. The steps are planned on up to `threads` workers (0: one a
 * CPU), each on its own loads, O(N x D) more a worker; the patch is the
 * same for any count. */
int swing_reroute(const struct topo_tree *t, const struct sched_reduced *r, const uint32_t *failed,
		  size_t nfailed, const struct torus_figures *healthy, uint64_t max_bytes,
		  unsigned threads, struct swing_reroute *p, struct ofc_error *err);
/* The same where a hop more on a step's longest route costs hop_tau (in
 * tau_B: alpha over M/B, where hosts forward): a part of a half goes on a
 * longer route only where the load it spares is worth the alphas it adds
 * to its step. swing_reroute is hop_tau 0 (hops free). */
int swing_reroute_priced(const struct topo_tree *t, const struct sched_reduced *r,
			 const uint32_t *failed, size_t nfailed,
			 const struct torus_figures *healthy, double hop_tau, uint64_t max_bytes,
			 unsigned threads, struct swing_reroute *p, struct ofc_error *err);
/* What a plan of the detours costs: hop_us a hop of a step's longest
 * route, tau_us a unit of its tau_B (a step's busiest arc's load); hop_tau
 * the weighed plan's hop (swing_reroute_priced's). */
struct swing_price {
	double hop_us, tau_us, hop_tau;
};
/* The detours planned both ways, hops free (*p, swing_reroute's) and
 * weighed (*w, swing_reroute_priced's with c->hop_tau), the plans the
 * same, their steps priced by c as they are planned, best first: a plan
 * whose least price (its planned steps at theirs, the others at their
 * longest healthy half and their loads less the halves that must move,
 * which no detour lowers) is above the other's whole price cannot be the
 * cheaper and is given up, left zeroed (step_start NULL) but for the steps
 * it had planned (planned). The weighed plan
 * is also given up where it fails (the memory limit, a route); the
 * hops-free plan's failure is the answer, -1, as swing_reroute's. */
int swing_reroute_both(const struct topo_tree *t, const struct sched_reduced *r,
		       const uint32_t *failed, size_t nfailed, const struct torus_figures *healthy,
		       const struct swing_price *c, uint64_t max_bytes, unsigned threads,
		       struct swing_reroute *p, struct swing_reroute *w, struct ofc_error *err);
/* Check p against r without expanding either: every detour replaces a
 * half of an exchange the program makes, with its data, over live arcs
 * from its source to its destination, once; rebuilt from the program's
 * loads and the detours, every failed arc carries nothing in every step
 * (so no transfer still crosses one), and every step's busiest arc, its
 * longest route and the figures are the patch's. 0, or -1 with the first
 * fault (the steps checked on up to `threads` workers, as planned). */
int swing_reroute_verify(const struct topo_tree *t, const struct sched_reduced *r,
			 const struct swing_reroute *p, unsigned threads, struct ofc_error *err);
void swing_reroute_free(struct swing_reroute *p);
/* x's route as arcs (tails[i], and ports[i] = dimension x 2 + way), up to
 * cap of them; returns its length (for tests that route every transfer). */
uint32_t swing_detour_route(const struct topo_tree *t, const struct swing_reroute *p,
			    const struct swing_detour *x, uint32_t *tails, uint8_t *ports,
			    uint32_t cap);

#endif
