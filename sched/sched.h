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

#include "sched/types.h"
#include "topo/topo.h"
#include "util/util.h"

#define SCHED_ONE	(1u << 31) /* a whole block */
#define SCHED_MAX_NODES 65535u
#define SCHED_NO_LANE	0xffffu

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

/* A reduction's transfer as the mirror of a copy x on a graph equal to its
 * transpose (twin: graph_arc_twins): the same block and part, the other way
 * over the twin arc, so that a reduce-scatter is an allgather run backwards
 * (Zhao et al., Cor. 3.1, with g^T = g). An allreduce whose reduction step
 * R - 1 - j holds the mirrors of its copy step j, in order (R = nsteps / 2),
 * is a mirrored allreduce: generated and checked as its copy phase. x crosses
 * one arc (x->run == 0). */
static inline struct xfer sched_xfer_mirror(const struct graph *g, const uint32_t *twin,
					    const struct xfer *x)
{
	struct xfer y = *x;

	y.src = x->dst;
	y.dst = x->src;
	y.lane = (uint16_t)(twin[g->off[x->src] + x->lane] - g->off[x->dst]);
	y.flags = (uint8_t)(x->flags | 4u);
	return y;
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
/* before empty steps put in front of s's, after more behind them. */
void sched_pad_steps(struct schedule *s, uint32_t before, uint32_t after);
/* graph_arc_twins(g) (owned) where s is a mirrored allreduce on g without
 * gone[] (NULL: none): twins at the same port at every node, the arcs gone
 * closed under them, and step R - 1 - j the mirrors of step R + j, in
 * order (R = nsteps / 2); else NULL. On every core where threads
 * (sched/patch_mirror.c: the patch's check and its generation both ask). */
uint32_t *sched_mirror_of(const struct graph *g, const bool *gone, const struct schedule *s,
			  bool threads);
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
/* The model's defaults where nothing says otherwise, written once for every
 * door that prices (a config's validation, the schedule pipeline, the pick
 * of a topology, `ofc finder`): a step's latency, and a node's egress B
 * when no link rate is known (100 Gb/s a node). */
#define COST_ALPHA_DEFAULT     10e-6
#define COST_NODE_RATE_DEFAULT 100e9

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
/* The lower bound of one degraded graph (sched/bound_degraded.c): a
 * failure takes links away, and what is left bounds every schedule more
 * tightly than any N-node topology of degree d does. Per phase, with each
 * link at B/d:
 *  - a node alone: it receives (allgather) or sends (reduce-scatter)
 *    (N-1)/N of M through the links it has left;
 *  - a set T of nodes: in an allgather the N - |T| shards from outside
 *    cross T's in-links at least once, so tau_B >= d (N - |T|) / (N c(T));
 *    a reduce-scatter is the same on the links out (G^T). The best such
 *    cut is the optimum of the fluid allgather with copies (Edmonds'
 *    branching theorem: arborescences from every source pack up to it;
 *    ForestColl, Zhao et al. 2024, Thm 1), found by Dinkelbach's method on
 *    max flows: with x = p/q per source, a super-source gives each node p
 *    and every link q; the rate holds iff every node's max flow is N p,
 *    and a node short of it has a min cut whose ratio is the next x.
 *  - steps: a shard must reach the farthest node, so no fewer than the
 *    degraded graph's diameter (each BFS gives an eccentricity, a bound).
 * An allreduce is reduce-scatter then allgather (App. B.3): both phases
 * summed, steps doubled. The max flows run first on each damaged node's
 * ball (its nearest nodes, the rest merged into the source: the cuts
 * inside it, cheaply), then over the whole graph node by node, each merged
 * into the source once checked, where `work` (arc visits) allows; past
 * it the cuts found so far stand, each a bound, and exact says whether
 * every node was checked. Each check asks the node's links first (a flow
 * of a few units); `flows` counts those flows too. */
struct degraded_phase {
	double node; /* tau_B of the worst node alone */
	uint32_t node_at, node_links;
	double cut;	    /* tau_B of the best cut found (>= node; INFINITY: cut off) */
	uint32_t cut_nodes; /* |T| (allgather: the side that receives) */
	uint64_t cut_links; /* links into T (reduce-scatter: out of T) */
	uint32_t balls;	    /* damaged nodes whose ball's max flows ran */
	uint32_t checked;   /* nodes whose max flow over the whole graph ran */
	bool exact;	    /* all of them: cut is the fluid optimum */
};
struct degraded_bound {
	bool in, out;		      /* the phases the collective has */
	struct degraded_phase ag, rs; /* links into a set, links out of it */
	bool symmetric;		      /* every link both ways: rs is ag's */
	uint32_t steps;		      /* phases x the largest eccentricity found */
	uint32_t ecc_checked;	      /* eccentricities found, a BFS each */
	bool steps_exact;	      /* ... from every node: the diameter */
	double tau_b;		      /* the phases' cuts summed */
	uint64_t flows;		      /* max flows run */
};
/* The bound of g (N = g->n nodes, links at B/d) for an allgather,
 * reduce-scatter or allreduce; -1 for another collective or N < 2.
 * work: about how many arc visits the max flows and BFS runs may take
 * (0: DEGRADED_BOUND_WORK). Never more than healthy's cost_lower_bound
 * would let a schedule beat: steps at least the Moore bound's. */
#define DEGRADED_BOUND_WORK 300000000ull
int degraded_bound(const struct graph *g, enum sched_collective c, uint32_t d, uint64_t work,
		   struct degraded_bound *b);
/* Whether a cut of more than one node, or of fewer links than a node has,
 * sets tau_b above the worst node's links (in some phase). */
bool degraded_cut_binds(const struct degraded_bound *b);
/* L(N, d) of the Moore tree (notes Sec. 3): the least sum of distances from
 * one node to the N-1 others in any digraph of out-degree d. 0 on overflow. */
uint64_t moore_tree_cost(uint64_t n, uint32_t d);

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
	/* The most bytes a reduction's check may keep of what nodes hold
	 * (a table of nodes x shards) at once: past it (more than 4,096
	 * nodes by default) the shards are checked in chunks, each a pass
	 * over the transfers (sched/verify_chunk.c). 0: the verifier's own
	 * (VERIFY_REDUCE_BYTES, 512 MiB); ofc and ofcd give what the request
	 * has left of its memory limit; tests lower it to chunk small ones. */
	uint64_t reduce_bytes;
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
	/* A patched allreduce (sched_verify_patched) checked by its copy
	 * phase alone, its reductions being the copies' mirrors (Zhao et
	 * al., Cor. 3.1, on a graph equal to its transpose); false where
	 * both phases were. */
	bool one_phase;
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

/* Where G's coordinates tile its ids' bits (every radix a power of two,
 * one orbit): the top bit of each coordinate, with which a - b and a + b
 * are one word operation each (sched_group_sub_word, _add_word); else 0.
 * The coordinate loops above were a sixth of a patch's check and a third
 * of its search for the raised sets. */
uint32_t sched_group_high(const struct sched_group *G);

/* a - b by high (sched_group_high, not 0): each coordinate's top bit set
 * in the minuend and cleared in the subtrahend, so no borrow crosses one,
 * the last term putting the top bits right (Hacker's Delight, 2nd ed.,
 * 2-18). */
static inline uint32_t sched_group_sub_word(uint32_t high, uint32_t a, uint32_t b)
{
	return ((a | high) - (b & ~high)) ^ ((a ^ ~b) & high);
}

/* a + b by high: the coordinates less their top bits added (no carry
 * leaves one), the top bits added by XOR. */
static inline uint32_t sched_group_add_word(uint32_t high, uint32_t a, uint32_t b)
{
	return ((a & ~high) + (b & ~high)) ^ ((a ^ b) & high);
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

/* The expansion written as it goes, one step's translates at a time and
 * never held whole (sched/reduced_write.c): what sched_write_json_members
 * (with steps) and sched_write_text write of sched_reduced_expand's
 * schedule, byte for byte, the head's figures (time, metrics, verdict)
 * the program's. For what must write every transfer of a schedule that
 * was planned, verified and priced reduced (ofc schedule -o). */
void sched_reduced_write_json_members(struct json_writer *w, const struct sched_reduced *r);
void sched_reduced_write_text(FILE *out, const struct sched_reduced *r, uint32_t max_lines);

/* A schedule made a step at a time (a pipelined schedule's period
 * expanded on demand): head says what a schedule says of itself
 * (collective, nodes, figures, metrics) and holds no step; step t has
 * count[t] transfers, which fill(ctx, t, out) makes into out in the
 * schedule's order. Written as it goes (sched/stream_write.c), what
 * sched_write_json_members (with steps) and sched_write_text write of the
 * explicit schedule, byte for byte, holding one step at a time; or made
 * explicit (sched_init done here; OFC_E_INPUT past 2^32 transfers). */
struct sched_stream {
	const struct schedule *head;
	uint32_t nsteps;
	const size_t *count;
	void (*fill)(const void *ctx, uint32_t t, struct xfer *out);
	const void *ctx;
};
size_t sched_stream_transfers(const struct sched_stream *st);
/* Room for st's largest step, for fill (the caller frees it). */
struct xfer *sched_stream_step_buffer(const struct sched_stream *st);
void sched_stream_write_json_members(struct json_writer *w, const struct sched_stream *st);
void sched_stream_write_text(FILE *out, const struct sched_stream *st, uint32_t max_lines);
int sched_stream_expand(const struct sched_stream *st, struct schedule *s, struct ofc_error *err);

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

/* ---- degraded schedules kept as structure (sched/patch.c) ----------------
 * A fabric with failed arcs, scheduled as the healthy reduced schedule
 * plus a patch: the nodes of a region whose programs the patch replaces,
 * every other node keeping its healthy program (the base's, translated).
 * A node's program is the transfers it owns: those it receives copies by
 * and the reductions it sends (xfer_owner), which is what BFB solves per
 * receiver, and which the base program holds for node 0. Memory and time
 * go with the region's programs, not with the fabric. Transfers name
 * their sender's port as in the healthy graph; the arcs failed are told
 * apart by the verifier's gone[] (one per arc of the healthy graph). */
struct sched_patch {
	uint32_t nregion;
	uint32_t *region;     /* ascending node ids, owned */
	struct schedule prog; /* the region's programs in the base's steps */
	/* Failed hosts (ascending node ids, owned; none when nabsent is 0),
	 * never in the region: the others run the collective among
	 * themselves. Such a node has no block of its own and needs none, so
	 * every base translate it owns, and every one of its block (shard),
	 * is dropped; its arcs count as gone. The survivors' blocks are the
	 * data over n - nabsent (priced there), named by the whole graph's
	 * nodes, as a renumbered survivors' schedule is (verify_opts.absent). */
	uint32_t nabsent;
	uint32_t *absent;
	/* Its check (sched_verify_patched) finds the pairs it plans outside
	 * its region by searching each owner's sorted list even where their
	 * index would fit: the same verdicts, reasons and loads (test_patch
	 * holds the two alike); false is the fast way. */
	bool check_by_search;
};
/* Finer: a transfer of prog whose owner is outside the region replaces
 * only its owner's healthy pieces of that block (in that phase), the
 * owner's other blocks keeping theirs; each such (owner, block) is
 * planned whole by the patch. */

static inline uint32_t xfer_owner(const struct xfer *x)
{
	return xfer_op(x) == XFER_REDUCE ? x->src : x->dst;
}

void sched_patch_free(struct sched_patch *p);
/* Transfers of the patched schedule. */
uint64_t sched_patched_transfers(const struct sched_reduced *r, const struct sched_patch *p);
/* The explicit schedule (sched_init done here): each step, the base's
 * translates owned outside the region, then the patch's. With gone, ports
 * are renumbered as on the degraded graph (a port's ordinal among the
 * surviving arcs of its node), for sched_verify there. */
int sched_patched_expand(const struct sched_reduced *r, const struct sched_patch *p,
			 const struct graph *g, const bool *gone, struct schedule *s,
			 struct ofc_error *err);
struct kmap;
/* The patched schedule as a stream (sched_stream: -o writes it a step at
 * a time, what sched_patched_expand would hold, ports as there). head:
 * what the schedule says of itself (the outcome's figures). Fill the
 * stream from ps after sched_patched_stream_init; free ps after. */
struct sched_patched_stream {
	const struct sched_reduced *r;
	const struct sched_patch *p;
	const struct graph *g;
	const bool *gone;
	uint8_t *inr;
	uint8_t *abs;	   /* the failed hosts (p->absent), or NULL */
	struct kmap *over; /* the (phase, owner, block) pairs replaced */
	size_t *count;
};
void sched_patched_stream_init(struct sched_patched_stream *ps, const struct sched_reduced *r,
			       const struct sched_patch *p, const struct graph *g, const bool *gone,
			       const struct schedule *head, struct sched_stream *st);
void sched_patched_stream_free(struct sched_patched_stream *ps);
/* The patched schedule checked without expanding it, on g (healthy, the
 * base's Cayley graph) without the arcs gone[]: the base by symmetry
 * (sched_verify_reduced), then what the patch changes, each check local
 * to it. A copy phase (allgather) is checked as BFB is built: a node
 * forwards a block only once it holds all of it; a reduction phase as its
 * reverse (Zhao et al., Cor. 3.1: run backwards on the transposed graph it
 * is an allgather), a node sending its partial of a shard only before
 * whoever it sends to sends theirs. Each (node, block) the patch plans (a
 * region node: every block but its own) is covered exactly once, each
 * piece from a neighbour over an arc not gone, at a step after the sender
 * holds the block: the step the base says, or the last of the sender's
 * own pieces where the patch plans it. What can break an unpatched
 * (node, block) is then only a sender holding the block later than the
 * base said, or a gone arc its healthy pieces cross: each such pair is
 * checked against the base program. Link loads are the base's per port,
 * less the replaced pieces and plus the patch's where it plans. Cost
 * O(patch + program + late pairs x degree), memory O(patch + N). The
 * report as sched_verify's: steps, transfers, link loads of the whole
 * schedule. A mirrored allreduce (sched_xfer_mirror, base and patch) on a
 * graph with twins, the gone arcs closed under them, is checked by its
 * copy phase alone, the same report (report->one_phase). */
int sched_verify_patched(const struct sched_reduced *r, const struct sched_patch *p,
			 const struct graph *g, const bool *gone, struct verify_report *rep);

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
