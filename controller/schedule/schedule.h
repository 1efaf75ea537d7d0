/* controller/schedule — the one pipeline from a fabric, a topology or a WDM
 * ring's parameters to verified, priced schedules. `ofc schedule`, `ofc
 * optree` and ofcd (GetSchedule, the schedule in State and in Reconfigure
 * answers) all call schedule_compute(); the callers parse options and print,
 * nothing else.
 *
 * Direct-connect topologies (a fabric's target topology, or a spec): BFB
 * (exact or through lp_solve), the expansion constructions of Zhao et al.
 * Sec. 5, the classic baselines, all-to-all by MCF (three lowerings) and
 * its baselines, Swing and recursive doubling on tori. Every schedule goes
 * through sched_verify and is priced by the alpha-beta model (Zhao et al.
 * Sec. 3.2) against the Moore / (N-1)/N lower bound. On a fabric wired
 * through switches the transfer ports are the hosts' NIC ports (the
 * wiring's port permutations, struct fabric_view) and the links used are
 * listed with the switch ports that carry them.
 *
 * WDM rings (a fabric's first ring, or the parameters of `ofc optree`):
 * every collective by OpTree, Wrht or the baselines (optree/: reduce-scatter
 * is the all-gather reversed, allreduce both, all-to-all direct lightpaths
 * through the RWA engines), verified against the ring's wavelengths and
 * add/drop limits with reduce semantics, priced by Eq. 3 of the OpTree
 * paper. */
#ifndef OFC_CONTROLLER_SCHEDULE_H
#define OFC_CONTROLLER_SCHEDULE_H

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "alltoall/alltoall.h"
#include "baselines/baselines.h"
#include "bfb/bfb.h"
#include "controller/fabric/fabric.h"
#include "fluid/fluid.h"
#include "optree/optree.h"

/* ---- the request -------------------------------------------------------- */

/* Symmetry-reduced schedules (sched.h, struct sched_reduced): BFB on a
 * Cayley family as node 0's program plus the translation group, checked by
 * symmetry (sched_verify_reduced). NEVER is the zero value (ofcd's); the
 * CLI asks for AUTO, which reduces only what would not be built explicitly
 * (over the memory limit, or more nodes than BFB_MAX_NODES) and says so in
 * the result's note; ALWAYS is `--reduced`. */
enum schedule_reduce { SCHEDULE_REDUCED_NEVER = 0, SCHEDULE_REDUCED_AUTO, SCHEDULE_REDUCED_ALWAYS };

struct schedule_query {
	const struct fabric *fabric; /* validated; NULL with spec or ring alone */
	const char *spec;	     /* a topology instead of the fabric's (no NIC ports) */
	/* ... or a topology as a graph (the planner's unions, the
	 * topologies it builds for traffic, a group's own links), not owned;
	 * no family (its spec names it for people): no construction or torus
	 * algorithm; nodes are the fabric's hosts or a group's members, never
	 * NIC ports; the fabric still gives the cost model. */
	const struct graph *graph;
	/* Where an edges:FILE in spec may be read (a daemon's policy,
	 * topo_build_in); NULL: any file the caller can read. */
	const struct topo_files *files;
	/* Failures taken out of the topology (topo_fail_items: links
	 * "0-1,5-6", arcs "2>3", whole nodes "7"); NULL: none. The schedules
	 * then run on the degraded graph (among the surviving nodes when a
	 * node failed) and each outcome is also priced against the healthy
	 * one. */
	const char *fail;
	const struct optree_ring *ring; /* a WDM ring by its parameters (no fabric) */
	const char *ring_name;		/* ... and its name in outputs, or NULL */
	enum sched_collective collective;
	/* NULL: schedule_pick_algorithm's choice. "all" compares every
	 * algorithm of the kind; "swing-all" Swing and its baselines. */
	const char *algorithm;
	uint64_t size;	  /* bytes per node; 0: the fabric's collective of that kind */
	double alpha;	  /* seconds per step (alpha_set); else the fabric's, or 10 us */
	double bandwidth; /* a node's egress, bits/s (bandwidth_set); else d links of
			     the fabric's link rate, or 100 Gb/s */
	bool alpha_set, bandwidth_set;
	uint32_t chunks;      /* BFB: P chunks per shard; 0: exact fractions */
	unsigned threads;     /* 0: all CPUs */
	const char *lowering; /* all-to-all mcf: steps (default), paths, single */
	const char *variant;  /* swing, recursive-doubling: auto (default), bandwidth, latency */
	double hop_latency;   /* seconds per hop (routed torus schedules) */
	double time_limit;    /* all-to-all mcf, seconds: 0 = 60 s, < 0 = none */
	double steps_try;     /* all-to-all mcf, default lowering: 0 = A2A_STEPS_TRY_SECONDS */
	uint64_t max_memory;  /* bytes a request may hold; 0: half the machine's memory */
	/* The most transfers the caller can send on in one reply (ofcd: what
	 * fits its frame); 0: no limit. An explicit schedule estimated to
	 * have more is refused before it is built, as one over max_memory. */
	uint64_t max_transfers;
	/* The whole request's deadline and progress, or NULL: every
	 * engine but the all-to-all MCF (whose LP stops at time_limit with a
	 * certified flow) stops with "time limit T reached in PHASE" past it.
	 * Owned by the caller. */
	const struct ofc_clock *clock;
	bool overlap;			  /* WDM: pre-tune MRRs for the next stage while idle */
	uint32_t radix[OPTREE_MAX_DEPTH]; /* WDM: a forced OpTree plan ... */
	uint32_t depth;			  /* ... of this many stages (0: the planner's) */
	int rwa_engine;			  /* WDM all-to-all: enum rwa_engine (0: the heuristic) */
	/* NIC-limited hosts: a host's injection bandwidth, bits/s
	 * (0: the config's hosts' `injection`, else none), and the forwarding
	 * model (0: the hosts'; 1 + enum host_forwarding: 1 host, 2 NIC). */
	double injection;
	int forwarding;
	enum schedule_reduce reduced;
	/* All-to-all MCF re-planning: keep_warm keeps the fluid
	 * MCF's solution in the outcome (mcf.warm) for a later warm start;
	 * warm starts the fluid MCF from one (a healthy fabric's, this one
	 * less failed links). schedule_compute with failures sets both itself
	 * (the healthy run first, its solution the degraded run's start). */
	bool keep_warm;
	const struct mcf_warm *warm;
	/* A run of the same request on the healthy graph kept from before
	 * (ofcd keeps its config's): with failures, schedule_compute
	 * then prices "vs healthy" from it and warm-starts the degraded MCF
	 * from its solution instead of solving the healthy graph again. Used
	 * only when its solution was solved on this fabric's healthy graph
	 * (mcf_warm_fits); else the healthy graph is solved as without it. */
	const struct schedule_kept *kept;
	/* Another thread's way to stop the all-to-all MCF (mcf_opts.cancel:
	 * ofcd's planner), NULL: none. A cancelled run's outcome does not
	 * apply, its why "cancelled" (schedule_check fails with it). */
	const atomic_bool *cancel;
	/* "all" without the fluid bound beside the outcomes (certify.c, up to
	 * 5 s), for a caller that shows none: ofc optree --sweep, and the
	 * healthy run that prices failures (pipeline.c). */
	bool no_certify;
	/* All-to-all of skewed pairs: demand[s * demand_n + t]
	 * what node s sends node t, normalised (schedule_demand_normalise:
	 * the mean pair's is 1, so M/N per pair on average); NULL: every pair
	 * alike (a uniform matrix is passed as NULL, and gives exactly the
	 * uniform schedules; demand_n is still checked). demand_n must be the
	 * topology's nodes. The MCF
	 * maximises theta with every pair at theta x its demand, the
	 * baselines route only the pairs that ask for something, and the
	 * verifier weighs each block by its demand (verify_opts.block_weight).
	 * Not with failed hosts (their survivors are renumbered). */
	const double *demand;
	uint32_t demand_n;
	/* The LP solver of every LP the request solves (BFB's LP,
	 * the MCF, the fluid engine and its bound, the RWA relaxation; the
	 * RWA ILP is lp_solve's); LP_SOLVER_DEFAULT: each one's measured
	 * default, else the fabric's `lp_solver`. */
	enum lp_solver lp_solver;
};

/* The healthy run a later re-plan needs (schedule_kept_take): the main
 * outcome's algorithm, time and MCF seconds, and its fluid MCF solution. */
struct schedule_kept {
	char algo[32];
	double time_us;
	double mcf_s;
	struct mcf_warm *warm; /* owned */
	size_t bytes;	       /* mcf_warm_bytes(warm) */
};

/* ---- the answer ---------------------------------------------------------- */

struct schedule_link {
	uint32_t src, port, dst;
	int32_t circuit; /* index into fabric->circuits, -1 when none */
};

/* A topology on the fabric's wiring, where port j of host u transmits to
 * ports.to[j * n + u]. arc2port maps the graph's CSR arcs to NIC ports (the
 * k-th parallel arc u -> v takes the k-th port of u that reaches v) and pg
 * is the same graph with arcs in port order, so a transfer's lane is its
 * NIC port and the verifier checks it against the wiring. */
struct fabric_view {
	uint32_t *arc2port;
	struct graph *pg;
	int32_t *circuit; /* (u * d + j) -> index into fabric->circuits, -1 when none */
};
/* What a collective on a WDM ring adds to an outcome. */
struct ring_outcome {
	enum optree_algo algo;
	struct optree_result res; /* res.sched is moved to the outcome's s */
	struct verify_report vr;
	struct optree_time tm;
	struct optree_analytic an;
};

/* One algorithm's outcome. */
struct schedule_outcome {
	char algo[32]; /* as the comparison table names it (e.g. "mcf/paths") */
	bool applies;  /* built; else why says why not */
	char why[520];
	enum ofc_errcode why_code; /* OFC_E_INPUT: the algorithm does not apply; RUNTIME */
	bool have;		   /* s is held (comparisons keep only the main one) */
	struct schedule s;	   /* verified (s.verified) and priced */
	uint32_t steps;		   /* s.nsteps (a cut-through all-to-all is priced as 1) */
	/* The alphas its time pays (routed_alphas): a start-up a step and,
	 * where hosts forward, one for each forward on a step's longest
	 * route; the steps of a hop-by-hop schedule. */
	double alphas;
	uint32_t max_hops; /* cut-through all-to-all: arcs on its longest route */
	size_t nhops;	   /* all-to-all: arcs its transfers cross (runs: more) */
	size_t ntransfers;
	struct frac tau_b; /* exact for BFB, else from the measured link loads */
	double tau_b_value;
	double measured; /* tau_B from the verifier's link loads */
	/* The verifier's busiest link over all steps (blocks, over its rate):
	 * what cut-through routes are priced by. */
	double measured_total;
	bool verified;
	char verify_error[320];
	double gen_s, verify_s;
	double time_us, ratio; /* ratio to the lower bound */
	/* The lower bound in this outcome's model: the result's (lb_us,
	 * lb.steps), the same for routed schedules where hosts forward (each
	 * forward an alpha, so a route of k circuits costs what k hop-by-hop
	 * steps do); where NICs forward cut-through, one step for a
	 * cut-through all-to-all and the healthy Moore steps for a torus's
	 * routed steps (a route's circuits cost no alpha). */
	double lb_us;
	uint32_t lb_steps;
	/* A cut-through all-to-all's time were its relays to store and
	 * forward (each step's busiest link, as the other rows): what it
	 * assumes costs this much when it does not hold. 0: not one. */
	double store_forward_us;
	double fluid_bound_us; /* --algo all: the fluid bound that holds for it */
	/* With failed links: the same algorithm's time on the healthy graph
	 * (0 when it does not apply there or was not built) */
	double healthy_us;
	double healthy_mcf_s; /* all-to-all mcf: the healthy graph's MCF seconds */
	bool below_fluid;     /* ... and it claims to beat it (a bug) */
	/* Symmetry-reduced (BFB on a Cayley family): s is node 0's program,
	 * group translates it; ntransfers counts the whole schedule's. */
	bool is_reduced;
	struct sched_group group;
	/* Reduced by default where the explicit schedule used to be built
	 * (the MCF's time-stepped all-to-all above A2A_STEPS_EXPLICIT_NODES,
	 * up to A2A_MAX_NODES): -o writes every transfer, the expansion
	 * streamed (text, JSON), as it wrote the explicit schedule. */
	bool expand_on_write;
	/* Failed links on a Cayley family (BFB with --fail): s and group are
	 * the healthy reduced schedule, patch the programs of the nodes the
	 * failures reach, on the result's healthy graph without the arcs
	 * gone[] (owned); checked by sched_verify_patched, never expanded
	 * (-o streams the expansion). is_reduced is set too. */
	bool is_patched;
	struct sched_patch patch;
	bool *gone;
	const struct graph *patch_graph;
	/* BFB */
	bool is_bfb;
	struct bfb_stats bst;
	/* A degraded fabric's BFB re-balanced across steps (bfb_rebalance),
	 * where tried: tau_b is then the re-balanced schedule's, tau_bfb and
	 * bfb_steps BFB's as built, rebalanced_receivers the nodes whose
	 * shards moved. */
	bool rebalance_tried, rebalanced;
	struct frac tau_bfb;
	uint32_t bfb_steps, rebalanced_receivers, rebalance_steps_added;
	/* expansions: the construction's predicted figures (and Thm 13 for
	 * BFB on a product) */
	bool has_pred;
	struct expand_figures pred;
	/* all-to-all */
	bool is_a2a;
	const char *lowering; /* steps, paths, single; NULL for the baselines */
	bool cut_through;     /* routed: every route at once (else store-and-forward steps) */
	double theta;	      /* what the schedule achieves, per unit link capacity */
	double theta_mcf;     /* the max concurrent flow (mcf only) */
	double max_load;      /* shards on the busiest link, all routes */
	uint32_t max_paths;
	struct mcf_result mcf;
	bool have_mcf;
	/* Swing and its torus baselines */
	bool is_torus;
	struct torus_figures tf;
	const char *variant;
	/* Swing on a torus with failed links: s is the healthy schedule (its
	 * reduced program x group, or up to SWING_MAX_SCHEDULE_NODES its
	 * expansion, as healthy Swing), reroute (owned) the detours of the
	 * transfers whose routes cross a failed arc (swing_reroute) and tf
	 * their figures; checked by swing_reroute_verify on the program. */
	struct swing_reroute *reroute;
	/* BFB refused for size with its structure tried too (its explicit
	 * schedule over the memory limit, the healthy program and a patch not
	 * kept): where an allreduce on a torus with failed links or ports is
	 * answered by Swing around them instead (dispatch.c). */
	bool size_refused;
	/* ... so answered: the engine asked ("bfb", "bfb-lp") and its
	 * refusal, both reasons; NULL and "" otherwise. The outcome is Swing's (algo
	 * "swing", reroute, tf), priced against the degraded bound as BFB's
	 * would be, and healthy_us is the asked engine's on the healthy graph:
	 * what the fabric ran before the failures. */
	const char *fallback_from;
	char fallback_why[520];
	/* WDM rings */
	bool is_ring;
	struct ring_outcome ring;
};

enum schedule_kind { SCHEDULE_DIRECT = 1, SCHEDULE_RING = 2 };

struct schedule_result {
	enum schedule_kind kind;
	const struct fabric *fabric;   /* the query's */
	const char *algorithm;	       /* as asked, or the default */
	const struct ofc_clock *clock; /* the query's */
	enum sched_collective collective;
	/* The bytes the request may hold (schedule_memory_limit): what is
	 * left of them when a schedule is built bounds its verifier's. */
	uint64_t memory_limit;
	bool compare; /* a table of algorithms ("all", "swing-all") */
	struct schedule_outcome *out;
	uint32_t nout;
	struct schedule_outcome *main; /* the one asked for (first of a comparison) */
	/* BFB next to the expansion construction it implements (or NULL) */
	struct schedule_outcome *construction;
	char note[1024]; /* something to tell people (several rings), or "" */

	/* direct-connect */
	const struct graph *g;
	struct graph *own_graph; /* built from the query's spec (or degraded) */
	/* With failed links: g is the degraded graph and healthy the graph
	 * before (own_healthy when built here); else NULL. */
	const struct graph *healthy;
	struct graph *own_healthy;
	/* healthy's spec as a tree, once (r->tree is the degraded graph's: no
	 * family); NULL without a healthy graph or its spec */
	struct topo_tree *healthy_tree;
	/* With failed nodes (hosts): g is the survivors' graph, renumbered
	 * (topo_survivors; the figures are theirs: nodes, degree, bounds), and
	 * whole the degraded graph on every node, the failed ones without
	 * arcs. keep[i] is survivor i's node in whole; absent (whole->n bytes)
	 * marks the failed nodes. Every schedule kept in an outcome is
	 * renumbered to whole's nodes (failed ones in no transfer) and verified
	 * again on whole with verify_opts.absent. NULL when no node failed. */
	const struct graph *whole;
	struct graph *own_whole;
	uint32_t *keep;
	uint8_t *absent;
	uint32_t nabsent;
	/* Links of different rates (hosts' port_rate or port_rates, the
	 * topology's link_rates): each arc's rate in units of their gcd, for
	 * BFB's LP (13); rate_scale converts its tau_B to the slowest link's
	 * units the cost model prices. NULL otherwise. lb_rates: the lower
	 * bound was scaled to the links' real rates (direct.c rate_bound). */
	uint32_t *link_rate;
	struct frac rate_scale;
	bool lb_rates;
	/* The same rates as capacities in slowest links (>= 1, per arc of g;
	 * pg_cap per arc of fv.pg): the MCF's capacities and the verifier's
	 * link loads. NULL when links are of one rate (or some has none). */
	double *arc_cap, *pg_cap;
	/* All-to-all with arc_cap: the bound on theta they give (per slowest
	 * link; direct.c a2a_rate_bound), else 0 (d / L(N, d)). */
	double theta_cap;
	/* All-to-all under a demand matrix (the query's, not owned): the bound
	 * on theta it gives on any N-node topology of degree d
	 * (schedule_demand_bound), else NULL and 0. */
	const double *demand;
	double theta_demand;
	/* NIC-limited hosts: injection in link capacities (0: not
	 * limited, or not below d links), the forwarding model, and the rate
	 * (bits/s) it came from. All-to-all only: the MCF's host rows, the
	 * lower bound and the pricing (per step, the busier of the busiest
	 * link and the busiest host over its injection). */
	double host_beta; /* the slowest host's */
	bool nic_forwarding;
	double injection;
	double *host_betas;   /* per node (a host without a limit: d) */
	double host_beta_avg; /* their mean */
	/* BFB under NIC-limited hosts (allgather, reduce-scatter, allreduce):
	 * each node's injection in rate-1 links (bfb_opts.inject), NULL when no
	 * host is below d links. */
	struct frac *bfb_inject;
	struct topo_tree *tree;
	uint32_t degree;
	struct sched_cost cost;
	struct cost_bound lb;
	double lb_us;
	/* With failed links (allgather, reduce-scatter, allreduce on links of
	 * one rate, hosts without injection limits): the degraded graph's own
	 * bound (sched.h degraded_bound), and lb_us is the larger of its time
	 * and healthy_lb_us, the bound lb gives (any N-node topology of degree
	 * d). The outcomes' ratios are to lb_us. */
	bool have_degraded;
	struct degraded_bound degraded;
	double degraded_us, healthy_lb_us;
	/* ... until it is in: the bound still to compute or being computed
	 * (controller/schedule/bound_beside.c), NULL once schedule_compute
	 * returns */
	struct bound_beside *bound;
	struct bfb_opts bopts;
	double hop_latency;
	bool nic_ports; /* transfer ports are NIC ports of the fabric */
	/* Ports as the topology numbers them even on the fabric's own graph:
	 * the healthy run that prices failures, whose times alone are used,
	 * so a large fabric's is symmetry-reduced as its spec's would be. */
	bool topology_ports;
	struct fabric_view fv;
	struct schedule_link *links; /* with nic_ports: every link main uses */
	uint32_t nlinks;

	/* --algo all on a direct-connect topology: the fluid bound (certify.c) */
	struct direct_fluid {
		bool have;		/* a bound: the cut bound at least */
		char why[160];		/* when none, or when LP 4.2 gave none (lp false) */
		bool lp;		/* LP 4.2 answered: hops, rstar, optimal, seconds */
		bool mirrored;		/* ... by Mirrored DW (the graph's automorphisms) */
		uint32_t hops;		/* T of R*(T) */
		bool optimal, any_hops; /* any_hops: R*(T) met the cut bound */
		double rstar;		/* s/GB: R*(T) when optimal, else feasible (above it) */
		double rstar_lower;	/* s/GB certified below R*(T) (the cut bound at least) */
		double rstar_lower_us;	/* ... for the size */
		double cut_us;		/* the cut bound (any T), for the size */
		double seconds;		/* the solve's */
		double time_limit;	/* ... and its limit (certify.c's budget) */
	} fluid;

	/* With failures: the healthy run came from schedule_query.kept (not
	 * solved again; the MCF warm-started from its solution when
	 * main->mcf.warm_started). */
	bool used_kept;

	/* WDM ring */
	struct optree_ring ring;
	const char *ring_name;
	bool overlap;
};

/* Errors: OFC_E_USAGE for requests that contradict themselves (an option
 * that does not go with the algorithm; err->file names the config when the
 * config is what contradicts), OFC_E_INPUT for requests that cannot be met
 * (unknown algorithm, a topology spec that does not parse: then
 * *spec_error is set: topo_spec_error formats err), OFC_E_RUNTIME
 * otherwise. An algorithm that does not apply to the topology or the
 * collective is returned (0) with main->applies false and the reason in
 * main->why; a schedule the verifier rejects is returned (0) with
 * verified false. spec_error may be NULL. */
int schedule_compute(const struct schedule_query *q, struct schedule_result *r, bool *spec_error,
		     struct ofc_error *err);
void schedule_result_free(struct schedule_result *r);
/* A schedule the testbed runs or libofc-mpi reads (the testbed's check,
 * runs and mpirun's files), computed by whoever the caller names: this
 * process's engines (schedule_here, controller/export/schedule_source.c:
 * the CLI's), or a planner process (ofcd's, which links no engine). The
 * shared code takes the computation as this pair, never calls
 * schedule_compute itself. */
struct schedule_got {
	bool have;     /* a schedule that applies */
	bool verified; /* ... and the verifier passed it */
	char why[520]; /* the main outcome's why and verify_error */
	char verify_error[320];
	struct schedule s;   /* have, SCHEDULE_GOT_STEPS asked: the schedule */
	uint8_t *pb;	     /* have, SCHEDULE_GOT_PB asked: `ofc schedule --format pb`'s */
	size_t pb_len;	     /* bytes of it, the summary's fields appended */
	char (*applies)[48]; /* the query compares ("all"): the algorithms that */
	uint32_t napplies;   /* apply, in the comparison's order (no schedule) */
};
enum schedule_got_what { SCHEDULE_GOT_STEPS, SCHEDULE_GOT_PB };
struct schedule_source {
	/* q computed: 0 with *out (schedule_got_free frees it), or -1 with
	 * err when it could not be (a query that does not apply is 0, its
	 * reason in out->why). */
	int (*compute)(void *ctx, const struct schedule_query *q, enum schedule_got_what what,
		       struct schedule_got *out, struct ofc_error *err);
	void *ctx;
};
/* (inline: ofcd frees what its planner sent without linking this folder) */
static inline void schedule_got_free(struct schedule_got *g)
{
	sched_free(&g->s);
	free(g->pb);
	free(g->applies);
	memset(g, 0, sizeof(*g));
}
/* A comparison's best row: the least time of the rows that apply and
 * verified (each priced as its row says: store-and-forward steps, or a
 * cut-through all-to-all's one step), the first of equals; -1: none. */
int schedule_best_row(const struct schedule_result *r);
/* How a row relays, which its price assumes: every hop a step
 * (store-and-forward), a step's peers routed over several hops (routed),
 * or every route at once in one step (cut-through). */
enum outcome_model { MODEL_STORE_FORWARD, MODEL_ROUTED, MODEL_CUT_THROUGH };
enum outcome_model schedule_outcome_model(const struct schedule_outcome *o);
/* For callers that want one schedule or an error (ofcd): 0 when the main
 * outcome was built; else -1 with its reason in err (OFC_E_INPUT when the
 * algorithm does not apply, OFC_E_RUNTIME) and r freed. */
int schedule_check(struct schedule_result *r, struct ofc_error *err);
/* Moves r's main outcome (computed with keep_warm on a healthy graph, no
 * failures) into k: 0, or -1 when there is no fluid MCF solution to keep or
 * it holds more than max_bytes (err says how much; r keeps it). Freed by
 * schedule_kept_free. */
int schedule_kept_take(struct schedule_kept *k, struct schedule_result *r, size_t max_bytes,
		       struct ofc_error *err);
void schedule_kept_free(struct schedule_kept *k);
/* k as a packed ofc.v1.KeptRun of *len bytes (kept.c), for a process
 * that keeps it between re-plans without linking the engine; and back
 * into k (0; -1 with err when the bytes are not one). */
uint8_t *schedule_kept_pack(const struct schedule_kept *k, size_t *len);
int schedule_kept_unpack(const uint8_t *buf, size_t len, struct schedule_kept *k,
			 struct ofc_error *err);
/* The algorithms schedule_compute knows by name (whether one applies to a
 * given fabric and collective, only schedule_compute tells; the
 * comparisons, 'all' and 'swing-all', are not among them). Every name comes
 * from the engine table (engines.c). */
enum engine_fabric { ENGINE_DIRECT = 1, ENGINE_RING = 2, ENGINE_SERVERS = 4, ENGINE_ANY = 7 };
bool schedule_algorithm_known(const char *algo);
/* Whether algo is a table only `ofc schedule` prints (a comparison such as
 * swing-all), which neither a config nor GetSchedule may name. */
bool schedule_algorithm_cli_only(const char *algo);
/* Whether algo names a comparison of several outcomes on one of fabrics
 * (ENGINE_* or'ed: 'all', and 'swing-all' on direct-connect topologies),
 * not one schedule. */
bool schedule_algorithm_compares(const char *algo, unsigned fabrics);
/* Whether --variant (bandwidth- or latency-optimal) goes with algo. */
bool schedule_algorithm_variant(const char *algo);
/* Whether algo's all-to-all takes a lowering (steps, paths, single): the
 * MCF's, whose solution a daemon keeps and warm-starts from. */
bool schedule_algorithm_lowers(const char *algo);
/* The algorithm a request that names none runs for collective c on fabric
 * (one ENGINE_*; the config's own choice comes first: schedule_pick_algorithm). */
const char *schedule_default_algorithm(unsigned fabric, enum sched_collective c);
/* The algorithm a comparison's row label names before its "/": a row's
 * short label (swing-all's "rd" for recursive-doubling), else label
 * itself. */
const char *schedule_algorithm_of_label(const char *label);
/* Whether q is the fluid engine's: it names it, or names nothing on a
 * config's server fabric (schedule_fluid answers it, not
 * schedule_compute). */
bool schedule_fluid_request(const struct schedule_query *q);
/* --algo's list for a help text: every engine by fabric and collectives,
 * and what 'all' compares, in lines of at most width columns after
 * indent. */
void schedule_algorithms_help(struct strbuf *sb, const char *indent, size_t width);
/* The algorithms one request may name (no comparisons), by kind of
 * fabric, the defaults marked: "on a direct-connect topology: bfb
 * (default), ...; on a WDM ring: ...; on a server fabric: fluid
 * (default)", after lead; width 0: on one line, else in lines of at most
 * width columns, the others after indent. */
void schedule_algorithms_one(struct strbuf *sb, const char *lead, const char *indent, size_t width);
/* --lowering's paragraph for a help text: every lowering the all-to-all
 * MCF takes (alltoall/lowerings.c) and the default, in lines of at most
 * width columns, the first after lead, the others after indent. */
void schedule_lowerings_help(struct strbuf *sb, const char *lead, const char *indent, size_t width);
/* A direct-connect outcome against the lower bound: its steps meet the
 * Moore bound's (a cut-through schedule is one step), its tau_B the
 * bound's (exactly, when both are fractions). */
struct schedule_optimality {
	bool moore, bw;
};
struct schedule_optimality schedule_optimality(const struct schedule_result *r,
					       const struct schedule_outcome *o);
/* The algorithm schedule_compute runs for q: q->algorithm; else the one
 * the config names for this collective (under collectives, when the
 * fabric's own ring or topology is scheduled: a config's algorithm applies
 * to its own collective); else the collective's default: on a WDM ring
 * optree, onestage for alltoall; else bfb, mcf for alltoall. */
const char *schedule_pick_algorithm(const struct schedule_query *q);
/* The config's collective of this kind that names an algorithm, if any. */
const struct collective *schedule_config_collective(const struct fabric *f,
						    enum sched_collective coll);
/* The request's LP solver, else its fabric's `lp_solver`, else
 * LP_SOLVER_DEFAULT (each LP's own). */
enum lp_solver schedule_lp_solver(const struct schedule_query *q);
/* The request's memory limit (--max-memory, else half the machine's), and
 * whether building and verifying xfers transfers on n nodes (blocks cut
 * into pieces: 1 when whole; xfer_bytes each, 0: 24) fits in it with
 * what the process holds already: 0, or -1 with the estimate, the limit
 * and how many nodes would fit in why. */
uint64_t schedule_memory_limit(const struct schedule_query *q);
int schedule_memory_check(const struct schedule_query *q, const char *what, uint32_t n,
			  double xfers, uint32_t pieces, double xfer_bytes, char *why, size_t len);
/* The refusal of a schedule of about xfers transfers over q->max_transfers
 * (0: none, it fits), in why. */
int schedule_reply_check(const struct schedule_query *q, const char *what, uint32_t n, double xfers,
			 char *why, size_t len);

/* ---- demand matrices (demand.c) ------------------------------------------------
 * Scale an n x n matrix of what each node sends each other (relative, or
 * bytes) so that the mean off-diagonal entry is 1 (the diagonal set to
 * 0); *mean is that mean (bytes per pair when the matrix was in bytes),
 * *uniform says every off-diagonal entry was the same. -1 (OFC_E_INPUT)
 * when nothing is asked. */
int schedule_demand_normalise(double *m, uint32_t n, double *mean, bool *uniform,
			      struct ofc_error *err);
/* The most theta any N-node topology of out-degree d gives the demand,
 * its links' capacity summing to total and the least a node has out or
 * in being least (n d and d for links of capacity 1): the Moore-tree
 * bound with weights (a source's heaviest d pairs at distance 1 at best,
 * the next d^2 at 2, ...: the sum of demand x distance over all pairs
 * within the total) and each node's links out and in. Uniform demands
 * give Thm 2's d / L(N, d). */
double schedule_demand_bound(const double *m, uint32_t n, uint32_t d, double total, double least);

/* ---- server fabrics: the fluid engine (fluid.c) -------------------------------
 * For a config with servers: LP 4.2 on the config's network, Theorem 4's step
 * schedule of K chunks (q->chunks; else chosen for the alpha and size when a
 * size is known (q->size, the config's collective of that kind) or an alpha
 * is set (q->alpha, the config's cost_model), else the least K within
 * epsilon), verified on the network. An allreduce is a reduce-scatter then
 * an allgather of one shard per GPU, each solved and staggered on its own,
 * one schedule verified whole from the two periods (each step at its
 * phase's step time). */
bool schedule_fluid_fabric(const struct fabric *f);
struct fluid_query {
	/* dw (default), mirrored (over the automorphisms refinement finds, at
	 * most twice the GPUs of them), full */
	const char *method;
	uint32_t hops;	     /* T; 0 searches it */
	double epsilon;	     /* choosing K without alpha: latency excess; 0 = 0.1 */
	double time_limit;   /* seconds for the solve; 0 = 60 */
	const char *root;    /* broadcast, reduce: a vertex name; NULL the first GPU */
	bool bound_any_hops; /* fluid_opts.bound_any_hops */
	void (*progress)(void *ctx, const struct fluid_progress *p);
	void *progress_ctx;
};
struct fluid_answer {
	struct fluid_net *net;
	struct fluid_group *group; /* mirrored: the automorphisms detected */
	double seconds_group;
	uint32_t terminals;
	/* The solve and Theorem 4's report: an allreduce's reduce-scatter
	 * here and its allgather in r_ag, rep_ag (per GB of shard). */
	struct fluid_result r;
	struct fluid_steps_report rep;
	bool allreduce;
	struct fluid_result r_ag;
	struct fluid_steps_report rep_ag;
	/* The whole schedule's figures, in s per GB of each GPU's data as
	 * size counts it (an allreduce's: its vector, of one shard per GPU):
	 * any schedule's bound (the cut bound; an allreduce's,
	 * fluid_allreduce_bound) and the schedule's latency. */
	double lower_bound;
	double latency;
	struct schedule s;
	/* Seconds per step (the request's, else the config's) and bytes per
	 * GPU (the request's, else the config's collective; 0: none, priced
	 * for 1 GB), the time Theorem 4's schedule takes for them, and
	 * whether K was chosen for them (else by epsilon, or given). */
	double alpha;
	uint64_t size;
	double predicted;
	bool chunks_for_alpha;
	uint32_t chunks_engine; /* K before the export lowered it for its runtime (0: not) */
	bool verified;
	struct verify_report vr;
	bool have_net, have_result, have_result_ag, have_schedule;
	/* Theorem 4's period (pipe; an allreduce's reduce-scatter there and
	 * its allgather in pipe_ag, from step pipe.steps on, count both
	 * phases' transfers per step): planned, verified and priced from it,
	 * s its head alone (no step) until fluid_answer_expand. */
	bool by_period;
	struct fluid_pipe pipe, pipe_ag;
	size_t *count;
};
int schedule_fluid(const struct schedule_query *q, const struct fluid_query *x,
		   struct fluid_answer *a, struct ofc_error *err);
/* s with every transfer, for a consumer of the whole schedule (-o, a
 * GetSchedule that is not summary_only): the period expanded within what
 * q's memory limit leaves; nothing to do for a schedule already whole. */
int fluid_answer_expand(const struct schedule_query *q, struct fluid_answer *a,
			struct ofc_error *err);
/* Theorem 4's schedule laid out again from the solved LP at `chunks`
 * chunks (K), priced and verified again (a's figures are then K's): for a
 * consumer with limits the engine's K passes (an MSCCL runtime's). */
int fluid_answer_rechunk(const struct schedule_query *q, struct fluid_answer *a, uint32_t chunks,
			 struct ofc_error *err);
/* The time a's schedule would take at `chunks` chunks, as a->predicted
 * prices its own K: Theorem 4's T + K - 1 steps of R / K each, an alpha
 * each. */
double fluid_answer_time_at(const struct fluid_answer *a, uint32_t chunks);
/* The whole schedule a step at a time from its period, for a consumer of
 * every transfer that need not hold them (-o: sched_stream_write_*,
 * schedule_stream_write_pb); false when s holds it whole already. st
 * borrows a. */
bool fluid_answer_stream(const struct fluid_answer *a, struct sched_stream *st);
/* The whole schedule's steps and transfers, expanded or not. */
uint32_t fluid_answer_steps(const struct fluid_answer *a);
size_t fluid_answer_transfers(const struct fluid_answer *a);
void fluid_answer_free(struct fluid_answer *a);

#endif
