/* fluid — optimal collective schedules on server fabrics: the copy-aware
 * fluid multicommodity flow of Shapley's thesis (notes:
 * fluid-mcf-mirrored-dw.md), solved by the full LP, Dantzig-Wolfe or
 * Mirrored Dantzig-Wolfe, and turned into an explicit step schedule by
 * Theorem 4's chunk staggering.
 *
 * The fabric is a general network of its own type (not struct graph):
 * vertices with kinds (store, copy, reduce, terminal), directed arcs with a
 * per-direction bandwidth and a cost per unit of data, and capacity sets
 * (one bandwidth shared by a set of arcs: a PCIe x16 shared by GPU and NIC
 * traffic, a memory's bandwidth, a WDM fibre segment). Units are the
 * thesis's: one unit of data per terminal (1 GB), bandwidths in GB/s, so
 * completion times R are in s/GB.
 *
 * The model is LP 4.2 (notes Sec. 2.3): per origin o and arc a of the
 * time-expanded network G^T, usage w[a,o] >= f[a,o,d] for every
 * destination d (copying: a transfer serves every destination behind it),
 * flow conservation of f per commodity, w-conservation (3.12) at vertices
 * that cannot copy, hold-over arcs only at vertices that can store, and
 * capacity aggregated over the T layers: sum_t sum_{e in L} sum_o w <= R b(L).
 * T is only a hop limit. It is solved lexicographically: first the least R
 * (R*), then the least weighted traffic sum c_e w at R*(1 + slack).
 *
 * Nothing here prints or exits; long solves report through a callback and
 * stop at a time limit; models larger than a memory limit are refused with
 * the estimate. The network is built by the caller and read-only here.
 */
#ifndef OFC_FLUID_H
#define OFC_FLUID_H

#include "rwa/rwa.h"
#include "sched/sched.h"
#include "util/util.h"

/* ---- the network (fluid/net.c) --------------------------------------------- */

/* Vertex kinds, a bitmask (notes Sec. 1: V_b, V_c, V_r; terminals are the
 * GPUs, the origins and destinations of a collective). The same bits as the
 * verifier's VERIFY_* kinds. */
enum fluid_kind {
	FLUID_CAN_STORE = 1,  /* may hold data between steps (a hold-over arc) */
	FLUID_CAN_COPY = 2,   /* may send what it holds on several arcs */
	FLUID_CAN_REDUCE = 4, /* may fold partial results together */
	FLUID_TERMINAL = 8,   /* a GPU: takes part in the collective */
};
#define FLUID_GPU    (FLUID_CAN_STORE | FLUID_CAN_COPY | FLUID_CAN_REDUCE | FLUID_TERMINAL)
#define FLUID_MEMORY (FLUID_CAN_STORE | FLUID_CAN_COPY)
#define FLUID_SWITCH 0u

/* Limits: the schedule type names vertices with 16 bits. */
#define FLUID_MAX_VERTS 65535u
#define FLUID_MAX_ARCS	(1u << 24)

/* Flat arrays, filled through the functions below and read directly.
 * Arc ids are in order of addition; a vertex's "port" k is its k-th out-arc
 * in that order (what a schedule's transfer records as its lane). */
struct fluid_net {
	uint32_t nverts, narcs, nsets;
	uint8_t *kind;	   /* nverts: enum fluid_kind bits */
	uint32_t *name;	   /* nverts: offsets into names */
	uint32_t *tail;	   /* narcs */
	uint32_t *head;	   /* narcs */
	double *bw;	   /* narcs: GB/s in the arc's direction; INFINITY: none */
	double *cost;	   /* narcs: cost per unit of data (>= 0) */
	uint32_t *set_off; /* nsets + 1 offsets into set_arc */
	uint32_t *set_arc;
	double *set_bw;	    /* nsets: GB/s shared by the set's arcs */
	uint32_t *set_name; /* nsets: offsets into names */
	char *names;	    /* NUL-terminated names, one pool */
	/* private: growth, the name index and the arc index (the first arc
	 * tail -> head by its ends, so a config's capacity sets resolve their
	 * arcs in constant time, not by a scan of every arc) */
	size_t cap_verts, cap_arcs, cap_sets, cap_set_arcs, names_len, names_cap;
	uint32_t *index;
	size_t index_cap;
	uint32_t *arc_index;
	size_t arc_index_cap;
};

void fluid_net_init(struct fluid_net *n);
void fluid_net_free(struct fluid_net *n);
static inline const char *fluid_vertex_name(const struct fluid_net *n, uint32_t v)
{
	return n->names + n->name[v];
}
static inline const char *fluid_set_name(const struct fluid_net *n, uint32_t s)
{
	return n->names + n->set_name[s];
}
/* A new vertex; names are unique (OFC_E_INPUT otherwise). Returns its id. */
int fluid_add_vertex(struct fluid_net *n, const char *name, unsigned kind, struct ofc_error *err);
/* The vertex with that name, or -1. */
int fluid_find_vertex(const struct fluid_net *n, const char *name);
/* An arc tail -> head with bandwidth bw (> 0, INFINITY for none) and cost
 * (>= 0). Returns its id. */
int fluid_add_arc(struct fluid_net *n, uint32_t tail, uint32_t head, double bw, double cost,
		  struct ofc_error *err);
/* A link: the arcs a -> b and b -> a (ids r and r + 1), bw per direction. */
int fluid_add_link(struct fluid_net *n, uint32_t a, uint32_t b, double bw, double cost,
		   struct ofc_error *err);
/* The same by vertex names (errors name the missing vertex). */
int fluid_connect(struct fluid_net *n, const char *a, const char *b, double bw, double cost,
		  struct ofc_error *err);
/* The first arc tail -> head, or -1 (a hash lookup). */
int fluid_find_arc(const struct fluid_net *n, uint32_t tail, uint32_t head);
/* A capacity set: bw (> 0) shared by the listed arcs. Returns its id. */
int fluid_add_set(struct fluid_net *n, const char *name, double bw, const uint32_t *arcs,
		  uint32_t narcs, struct ofc_error *err);
/* The terminals in id order into out (may be NULL); returns how many. */
uint32_t fluid_terminals(const struct fluid_net *n, uint32_t *out);
/* Structural checks before solving: at least two terminals, terminals can
 * store and copy, no self-loops. OFC_E_INPUT names the offending vertex. */
int fluid_net_check(const struct fluid_net *n, struct ofc_error *err);

/* ---- server templates (fluid/net.c) -----------------------------------------
 * What a YAML server template turns into: vertices, links and capacity sets
 * named inside one server, instantiated per host with the prefix
 * "host/" (vertex "gpu0" of host "srv3" becomes "srv3/gpu0"). Links between
 * hosts (rails, optical circuits) are added by name afterwards. */
struct fluid_tvertex {
	const char *name;
	unsigned kind;
};
struct fluid_tlink {
	const char *a, *b;
	double bw; /* per direction */
	double cost;
	bool one_way; /* only a -> b */
};
struct fluid_tarc {
	const char *tail, *head;
};
struct fluid_tset {
	const char *name;
	double bw;
	const struct fluid_tarc *arcs;
	uint32_t narcs;
};
struct fluid_template {
	const char *name;
	const struct fluid_tvertex *verts;
	uint32_t nverts;
	const struct fluid_tlink *links;
	uint32_t nlinks;
	const struct fluid_tset *sets;
	uint32_t nsets;
};
/* Add one instance of t with every name prefixed "prefix/". The instance's
 * vertices are consecutive ids starting at the returned value, in the
 * template's order, and its arcs likewise (links in order, a -> b first):
 * so instances of one template line up id by id. */
int fluid_instantiate(struct fluid_net *n, const struct fluid_template *t, const char *prefix,
		      struct ofc_error *err);

/* ---- symmetry (fluid/group.c) -------------------------------------------------
 * A group of automorphisms of the network (notes Sec. 4.2): permutations of
 * vertices, arcs and capacity sets that keep kinds, arc ends, bandwidths,
 * costs and sets. Listed element by element (the identity first); it must be
 * closed under composition (the mirrored master averages over it). */
struct fluid_group {
	uint32_t order;
	uint32_t nverts, narcs, nsets;
	uint32_t *vert; /* order * nverts: vert[i * nverts + v] = h_i(v) */
	uint32_t *arc;	/* order * narcs */
	uint32_t *set;	/* order * nsets */
	/* fluid_group_blocks': the servers, nblocks blocks of bsize vertices
	 * from vertex 0, each element a shift of the blocks (element
	 * sh * order / nblocks the pure one, by sh) times one server's map;
	 * 0 for other groups */
	uint32_t nblocks, bsize;
};
void fluid_group_free(struct fluid_group *g);
/* What a symmetry search may take (NULL: no clock, FLUID_GROUP_BYTES): past
 * the clock's deadline it fails with "time limit T reached in symmetry
 * search" (OFC_E_RUNTIME); its listings stay within max_bytes. */
struct fluid_group_limits {
	const struct ofc_clock *clock;
	uint64_t max_bytes; /* 0: FLUID_GROUP_BYTES */
};
#define FLUID_GROUP_BYTES (1ull << 30)
/* Check that every element is an automorphism of n; OFC_E_INPUT names the
 * first element and what it breaks. */
int fluid_group_check(const struct fluid_net *n, const struct fluid_group *g,
		      struct ofc_error *err);
/* The automorphisms of n found by nauty (topo/automorph.c)
 * on a digraph that encodes kinds, bandwidths, costs and sets, listing at
 * most max_order elements (0: 4,096), and no more than lim's bytes hold (a
 * subgroup beyond). For networks given by templates whose group is not
 * written analytically. */
int fluid_group_detect(const struct fluid_net *n, uint32_t max_order,
		       const struct fluid_group_limits *lim, struct fluid_group *g,
		       struct ofc_error *err);
/* A fabric of nblocks servers built from one template (vertices [0,
 * nblocks * bsize) in blocks of bsize, the rest outside them): the group
 * Z_nblocks x H acting regularly on the GPUs (one pricing class), H found
 * from the generators of one server's automorphisms (group.c). OFC_E_INPUT
 * when the fabric has no such group, OFC_E_RUNTIME when it would exceed
 * lim's bytes (with the estimate) or its clock; the caller falls back to
 * plain DW or fluid_group_detect. A group it returns passed
 * fluid_group_check on n. */
int fluid_group_blocks(const struct fluid_net *n, uint32_t nblocks, uint32_t bsize,
		       const struct fluid_group_limits *lim, struct fluid_group *g,
		       struct ofc_error *err);

/* ---- builders (fluid/build.c) -------------------------------------------------- */

/* Model W (notes Sec. 6.3): N DGX-A100-style servers on 8 rails. Per server 8
 * GPUs on a non-copying NVSwitch (300 GB/s per direction), 4 non-copying
 * PCIe switches each with 2 GPUs (32 GB/s), a 32 GB/s uplink to the host
 * memory (store and copy) and 2 NICs (25 GB/s); NIC l of every server on rail
 * switch l (25 GB/s). No NVLink drops the NVSwitch; only NVLink drops PCIe
 * and memory and hangs NIC l off GPU l (25 GB/s). Cost 1 per unit on arcs at
 * a GPU and on NIC <-> rail arcs, 0 elsewhere. */
enum fluid_scenario {
	FLUID_ALL_LINKS = 0,
	FLUID_NO_NVLINK = 1,
	FLUID_ONLY_NVLINK = 2,
};
const char *fluid_scenario_name(enum fluid_scenario s);
int fluid_scenario_parse(const char *name, enum fluid_scenario *s);
/* Vertex names: "s3/gpu5", "s3/nvswitch", "s3/pcie1", "s3/mem", "s3/nic5",
 * "rail5". GPUs of server s are ids 0.. in order, so terminal k of the
 * network is GPU k % 8 of server k / 8. With grp != NULL, also the group
 * Z_N x Z_4 x Z_2 on (server, PCIe switch, slot) written analytically
 * (for only NVLink, Z_N x Z_8 on (server, GPU)). */
int fluid_build_modelw(struct fluid_net *n, uint32_t servers, enum fluid_scenario s,
		       struct fluid_group *grp, struct ofc_error *err);
/* Toys (notes Sec. 6.4), all arcs cost 1: a directed path of n terminals;
 * a ring of n terminals (bidir: both ways), with its rotations (and
 * reflections when bidir) as grp; a star of n terminals on one non-copying
 * switch; n terminals on one shared memory (store and copy), links of
 * bandwidth link_bw, the memory's in- and out-arcs together in one capacity
 * set of mem_bw (INFINITY: none), the memory copying or not. */
int fluid_build_path(struct fluid_net *n, uint32_t len, double bw, struct ofc_error *err);
int fluid_build_ring(struct fluid_net *n, uint32_t len, bool bidir, double bw,
		     struct fluid_group *grp, struct ofc_error *err);
int fluid_build_star(struct fluid_net *n, uint32_t leaves, double bw, struct ofc_error *err);
int fluid_build_shared_memory(struct fluid_net *n, uint32_t gpus, double link_bw, double mem_bw,
			      bool mem_copies, struct ofc_error *err);

/* ---- solving LP 4.2 (fluid/solve.c) -------------------------------------------- */

enum fluid_collective {
	FLUID_ALLGATHER = 1,
	FLUID_BROADCAST = 2,	  /* from opts.root */
	FLUID_REDUCE = 3,	  /* to opts.root: a broadcast reversed */
	FLUID_REDUCE_SCATTER = 4, /* an allgather reversed */
	FLUID_ALLTOALL = 5,	  /* one unit per ordered pair of terminals */
};
const char *fluid_collective_name(enum fluid_collective c);
int fluid_collective_parse(const char *name, enum fluid_collective *c);

enum fluid_method {
	FLUID_MIRRORED = 0, /* Mirrored DW: one pricing problem per orbit (the default) */
	FLUID_DW = 1,	    /* plain Dantzig-Wolfe: one pricing problem per origin */
	FLUID_FULL = 2,	    /* LP 4.2 as one lp_solve model */
};
const char *fluid_method_name(enum fluid_method m);
int fluid_method_parse(const char *name, enum fluid_method *m);

/* What a progress callback sees: the stage ("hops", "phase 1", "phase 2"),
 * the current hop limit, the iteration, the master's value and the best
 * bound so far (Lagrangian, DW), and the seconds since the solve began. */
struct fluid_progress {
	const char *stage;
	uint32_t hops;
	uint32_t iteration;
	double value, bound;
	size_t columns;
	double seconds;
};

struct fluid_opts {
	enum fluid_collective collective;
	uint32_t root; /* broadcast, reduce: the root terminal's vertex id */
	enum fluid_method method;
	/* Mirrored: the group (NULL: none given; then the solve falls back to
	 * plain DW, and says so in the result). Must be a group of the network. */
	const struct fluid_group *group;
	/* group is one fluid_group_blocks returned for this very network,
	 * which checked it (fluid_group_check) and neither changed since: the
	 * solve does not check it again (at 1,024 GPUs 60 ms a check). */
	bool group_checked;
	/* The hop limit T; 0 searches it: from the least T at which every
	 * commodity can arrive, raise T until R* has not improved for
	 * `patience` steps or meets the cut lower bound. */
	uint32_t hops;
	uint32_t hops_max; /* search limit; 0 = 16 */
	uint32_t patience; /* 0 = 2 */
	/* Drop (3.12), so switches may copy: the weaker LP 3.10 (tests). */
	bool no_switch_conservation;
	double slack;	    /* phase 2 fixes R = R*(1 + slack); 0 = 1e-7 */
	double gap;	    /* DW stops at this relative gap; 0 = 1e-7 */
	double time_limit;  /* seconds for the whole solve; 0 = none */
	uint64_t mem_limit; /* bytes a model may take (estimated before building); 0 = 4 GiB */
	bool skip_phase2;   /* R* only */
	/* After phase 2, also the layers summed (fluid/hopfree.c):
	 * LP 4.2 without layers at the same R, whose optimum bounds the
	 * objective of every T (objective_any_hops). */
	bool bound_any_hops;
	/* The LP solver of every model; LP_SOLVER_DEFAULT: each
	 * model's measured default (FLUID_LP_* in fluid/internal.h). */
	enum lp_solver lp_solver;
	/* Threads for the max flows of pricing and decomposition; 0 = every
	 * CPU. The answer is the same on any number. */
	unsigned threads;
	/* Tests: the simplex iterations below which no pricing solve is
	 * taken for a stall (fluid/pricing.c); 0: its own floor. */
	uint32_t stall_floor;
	/* Tests: each DW phase 2 (the relaxation's and the trees') stops
	 * after this many iterations as at the time limit, however fast the
	 * machine; 0: none. */
	uint32_t phase2_iterations;
	void (*progress)(void *ctx, const struct fluid_progress *p);
	void *progress_ctx;
};

/* The routing as weighted pieces (notes Sec. 3): a piece carries the part
 * [lo, hi) of one origin's unit along a set of transfers in G^T, each a
 * physical arc at a layer. Copy collectives: a piece is a tree (every arc
 * carries the same part, to every destination behind it); all-to-all and
 * fallback pieces are paths to one target. Reductions are stored as the
 * broadcast/allgather of the reversed network: the schedule reverses them. */
struct fluid_piece {
	uint32_t origin;
	uint32_t target; /* UINT32_MAX: every destination (a tree) */
	double lo, hi;
	uint32_t first, nhops; /* into hop_arc / hop_layer */
};
struct fluid_routing {
	struct fluid_piece *pieces;
	size_t npieces, cap_pieces;
	uint32_t *hop_arc, *hop_layer;
	size_t nhops, cap_hops;
	/* exact: the pieces meet the fluid optimum (r_actual = R*, cost = the
	 * objective). LP 4.2 is a relaxation (notes Sec. 2.1): where no
	 * schedule meets it, r_actual and cost say what the pieces need.
	 * deficit: the share of some origin's unit that the full LP's
	 * decomposition had to send on per-destination paths. */
	bool exact;
	double deficit;
	double r_actual; /* max over capacity sets of (load of the pieces) / b(L) */
	double cost;	 /* sum of c_e over the pieces' transfers */
};

enum fluid_stop {
	FLUID_STOP_OPTIMAL = 0, /* gap closed */
	FLUID_STOP_TIME,	/* time limit: values are feasible, bounds certified */
	FLUID_STOP_LP,		/* lp_solve failed */
	FLUID_STOP_STALL,	/* a pricing LP stalled: values feasible, bound partial */
};

#define FLUID_MAX_TRIALS 32

struct fluid_result {
	enum fluid_collective collective;
	enum fluid_method method; /* the one used */
	uint32_t hops;		  /* T used */
	double rstar;		  /* s/GB */
	double rstar_lower;	  /* certified lower bound on R*(T) */
	double objective;	  /* weighted traffic at R* (NAN when skipped) */
	double objective_lower;
	/* opts.bound_any_hops: the least objective at the same R over every
	 * hop limit (LP 4.2 with its layers summed, a relaxation of every T):
	 * objective == it proves T enough; a target below it is out of reach
	 * at this R. NAN when not asked or not computed (any_hops_note: why). */
	double objective_any_hops;
	char any_hops_note[160];
	enum lp_solver lp_any_hops;
	double seconds_any_hops;
	bool optimal;
	enum fluid_stop stop;
	/* the LP solver of each kind of model */
	enum lp_solver lp_master, lp_pricing, lp_full;
	uint32_t classes;     /* pricing problems per iteration */
	uint32_t group_order; /* 1 without symmetry */
	uint32_t iterations[2];
	size_t columns;
	uint64_t pricing_solves, cuts;
	uint64_t dup_cuts; /* cuts found again while the cut LP held them (mirrored): not added */
	double seconds[2]; /* per phase of LP 4.2 */
	double seconds_realise; /* the master over actual trees (DW, copy collectives) */
	double seconds_total;
	uint64_t model_rows, model_cols, model_nonzeros; /* largest LP built */
	uint64_t model_bytes;				 /* its estimate */
	double lower_bound;				 /* the cut bound on R (any T) */
	/* A bound on R at every T at least lower_bound: the cuts of vertex
	 * sets too (the search stops at a T whose R* meets it) */
	double rstar_lower_any_hops;
	/* The hop search: R*(T) per T tried (the one used included), and
	 * what each certified below it (R*(T) never grows with T, so it bounds
	 * every T' <= T too). */
	uint32_t ntrials;
	struct {
		uint32_t hops;
		double rstar;
		double rstar_lower;
	} trials[FLUID_MAX_TRIALS];
	struct fluid_routing routing;
};

/* Solve LP 4.2 for the collective on n and decompose the solution into
 * pieces. Errors: OFC_E_INPUT (the network or options; a commodity that
 * cannot reach its destination within T hops is named), OFC_E_RUNTIME
 * (lp_solve failed, the model is larger than opts.mem_limit: the message
 * gives the estimate). On a time limit it returns 0 with stop = TIME and
 * certified bounds. The result owns its arrays (fluid_result_free). */
int fluid_solve(const struct fluid_net *n, const struct fluid_opts *o, struct fluid_result *r,
		struct ofc_error *err);
void fluid_result_free(struct fluid_result *r);
/* Merge pieces of one origin (and target) that take the same route: the
 * shares are laid out route by route, so loads, cost and R are unchanged
 * and a mirrored routing loses its copies (fluid/merge.c). */
void fluid_routing_merge(struct fluid_routing *rt);
/* Closed-form lower bound on R for any T (notes Sec. 5.2-5.3): a terminal's
 * downloads over the bandwidth into it. */
double fluid_lower_bound(const struct fluid_net *n, enum fluid_collective c, uint32_t root);
/* The same for an allreduce of one unit per terminal and shard (k units per
 * terminal): what any allreduce needs (a reduce-scatter and an allgather
 * need more where terminals differ), in s/GB of shard (solve.c). */
double fluid_allreduce_bound(const struct fluid_net *n);

/* ---- Theorem 4: the step schedule (fluid/steps.c) -------------------------------
 * K chunks per origin, chunk k following the pieces shifted by k steps: T+K-1
 * steps of R/K each (R = the routing's r_actual, R* when exact), so the
 * latency is R (T+K-1)/K and every capacity set carries at most R b(L)/K per
 * step; the cost is the fluid objective. With alpha > 0 (seconds per step)
 * and size M (GB per terminal) the K minimising (T+K-1)(alpha + R M/K) is
 * chosen; else K is given, or the least K with (T-1)/K <= epsilon. */
struct fluid_steps_opts {
	uint32_t chunks;     /* K; 0 = choose */
	double epsilon;	     /* relative latency excess when choosing without alpha; 0 = 0.1 */
	double alpha;	     /* seconds per step, for choosing K */
	double size;	     /* GB per terminal, for choosing K (0 = 1) */
	uint32_t max_chunks; /* 0 = 256 */
	/* Bytes the schedule's transfers may take, counted before they are
	 * built (0: no limit); past it OFC_E_RUNTIME with the estimate. */
	uint64_t max_bytes;
	/* The request's deadline (NULL: none), checked as pieces are laid
	 * out: past it OFC_E_RUNTIME "time limit T reached in Theorem 4". */
	const struct ofc_clock *clock;
	/* Threads the period's check may use (fluid_pipe_verify; 0 = all CPUs). */
	unsigned threads;
	/* The cost summed term by term, not in whole units where that sum
	 * rounds nowhere (the same bits; tests compare the two). */
	bool cost_in_order;
};
struct fluid_steps_report {
	uint32_t chunks, steps, hops;
	bool chose_chunks;
	double step_time; /* s/GB: R / K */
	double latency;	  /* s/GB: steps * step_time */
	double predicted; /* seconds for `size` GB with alpha: steps * (alpha + step_time * size) */
	double cost;	  /* weighted traffic of the schedule */
};
/* The schedule (sched_init done here: its nodes are the network's
 * vertices, blocks the origins' ids; all-to-all blocks origin * nverts +
 * target; reductions reversed in time with REDUCE into reduce-capable
 * vertices). */
int fluid_schedule(const struct fluid_net *n, const struct fluid_result *r,
		   const struct fluid_steps_opts *o, struct schedule *s,
		   struct fluid_steps_report *rep, struct ofc_error *err);
/* The same schedule by its period (fluid/steps.c, fluid/pipe.c): the
 * routing's pieces, each hop at its layer, are one chunk's pattern; chunk
 * k is the pattern shifted by k steps (reductions: the pattern reversed,
 * shifted by K - 1 - k) carrying [(k + lo)/K, (k + hi)/K) of each piece.
 * fluid_pipeline plans it (K, the steps, the report, the expansion's
 * transfers per step) without a transfer; fluid_pipe_verify checks it;
 * fluid_pipe_expand writes the explicit schedule fluid_schedule gives,
 * for a consumer of every transfer. n and r are borrowed: they outlive p. */
struct fluid_pipe {
	const struct fluid_net *net;
	const struct fluid_result *r;
	/* Symmetries of net, or NULL: where a root's pieces are another's
	 * moved by one of them, the check takes that root's verdict for it
	 * (each element checked first: a permutation of net's vertices that
	 * keeps their kinds). Not owned; fluid_pipeline leaves it NULL. */
	const struct fluid_group *group;
	/* The check's loads hop by hop, not by classes of pieces of one part
	 * (the same integers; tests compare the two). fluid_pipeline: false. */
	bool loads_by_hop;
	/* The check's cost term by term in the expansion's order, not in
	 * whole units where that sum rounds nowhere (the same bits; tests
	 * compare the two). fluid_pipeline: false. */
	bool cost_in_order;
	uint32_t chunks, steps, hops; /* K, T + K - 1, T */
	bool rev;		      /* a reduction: the pattern runs backwards */
	double step_time;	      /* s/GB: R / K */
	size_t ntransfers;	      /* of the expansion */
	size_t *count;		      /* the expansion's transfers per step (owned) */
	uint32_t *port;		      /* each arc's port: its transfers' lane (owned) */
	/* Each piece's hops in a step's order (owned): piece i's j-th is hop
	 * first + order[order_at[i] + j] (pipe_order). The order follows from
	 * the piece's layers alone, so pieces of one sequence of layers (a
	 * mirrored routing's images of one piece) share one. */
	uint32_t *order;
	size_t *order_at; /* (owned) */
	unsigned threads; /* for its check: the options' (0 = all CPUs) */
};
int fluid_pipeline(const struct fluid_net *n, const struct fluid_result *r,
		   const struct fluid_steps_opts *o, struct fluid_pipe *p,
		   struct fluid_steps_report *rep, struct ofc_error *err);
/* The explicit schedule (o's max_bytes checked first, sched_init done here). */
int fluid_pipe_expand(const struct fluid_pipe *p, const struct fluid_steps_opts *o,
		      const struct fluid_steps_report *rep, struct schedule *s,
		      struct ofc_error *err);
/* Step s of the expansion, its count[s] transfers in the expansion's
 * order, into out: a consumer of every transfer makes them a step at a
 * time from the period (memory: one step), never the whole. */
void fluid_pipe_fill_step(const struct fluid_pipe *p, uint32_t s, struct xfer *out);
/* The explicit schedule's head alone (sched_init, root, size, time,
 * metrics), no step: what a summary of it needs. */
void fluid_pipe_head(const struct fluid_pipe *p, const struct fluid_steps_opts *o,
		     const struct fluid_steps_report *rep, struct schedule *s);
void fluid_pipe_free(struct fluid_pipe *p);
/* sched_verify's checks of the expansion on the network vn (its step_time
 * p's; step_times NULL), from the period: the pattern alone (one chunk,
 * [lo, hi) of every block) through sched_verify with the capacities lifted
 * proves delivery, causality and what each vertex may store, copy and
 * reduce for every chunk, since chunk k is that pattern moved in time and
 * scaled to its own part of each block; then every step's load on every
 * arc and capacity set, the chunks' parts of the K consecutive layers it
 * overlaps summed as the verifier sums them, against step_time x
 * bandwidth. The report as sched_verify's of the expansion: steps,
 * transfers, the largest utilisation and the cost the expansion's to the
 * last bit (the cost summed in its order), duplicates the pattern's; the
 * same on any p->threads (fluid_steps_opts.threads). */
int fluid_pipe_verify(const struct fluid_pipe *p, const struct verify_network *vn,
		      struct verify_report *rep);
/* An allreduce from its two phases' periods, as sched_verify checks the
 * explicit allreduce (the reduce-scatter's steps, then the allgather's
 * from step ag_first, at vn's step time and then ag_step_time): each
 * phase's pattern and windows as fluid_pipe_verify checks them (the
 * reduce-scatter's leaves each GPU its shard reduced over every input
 * once; the allgather's takes what each owner holds to every GPU), and
 * the composition: the allgather sends no part of a shard before the
 * reduce-scatter has moved its last part of it, and starts after it.
 * The report as sched_verify's of the whole: steps, transfers, the
 * largest utilisation of either phase and the cost summed in order. */
int fluid_allreduce_verify(const struct fluid_pipe *rs, const struct fluid_pipe *ag,
			   uint32_t ag_first, const struct verify_network *vn, double ag_step_time,
			   struct verify_report *rep);
/* The K that minimises (T+K-1)(alpha + R M/K) over 1..max_k. */
uint32_t fluid_best_chunks(double r, uint32_t hops, double alpha, double size, uint32_t max_k);
/* The verifier's view of n (pointers into n; valid while n is) with steps
 * of step_time s/GB. */
void fluid_verify_network(const struct fluid_net *n, double step_time, struct verify_network *vn);

#endif
