/* Private to the verifier by symmetry (sched/verify_reduced*.c): the
 * representatives' state (struct rstate), the helpers the step loops
 * inline (a piece's cuts, the translations' subtraction), and what each
 * file lends the others. The files, bottom up:
 *
 *   verify_reduced_sums.c  reductions in whole-vector spans, by their sums
 *   verify_reduced_a2a.c   the all-to-all's holdings by sorting
 *   verify_reduced_step.c  each step's transfers and deliveries
 *   verify_reduced.c       sched_verify_reduced: the state, the steps, the end
 */
#ifndef OFC_SCHED_VERIFY_REDUCED_INTERNAL_H
#define OFC_SCHED_VERIFY_REDUCED_INTERNAL_H

#include "sched/internal.h"

/* The most pieces a program may cut a shard into for the reduce state's
 * fixed slots (16 bytes each): 8 keeps an entry within the 176 bytes a
 * cell the memory estimate allows for (controller/schedule/direct.c). */
#define GRID_MAX_PIECES 8
#define GRID_REDUCE	(1u << 31)
#define GRID_SLOT	((1u << 29) - 1)
#define GRID_AHEAD	16 /* deliveries prefetched ahead */

struct rdeliv {
	uint64_t block; /* rep * N + block (all-to-all: rep * N^2 + block) */
	uint32_t lo, hi;
	uint32_t count;
	uint64_t hash;
	uint8_t op;
};

struct rstate {
	const struct sched_reduced *r;
	const struct verify_opts *o;
	struct verify_report *rep;
	uint32_t n, reps;
	unsigned lgn; /* log2 n when n is a power of two, else 0 */
	/* G regular of powers of two: the top bit of every coordinate of a
	 * block (o, t), o N + t, else 0. Then (o - h) N + (t - h) is one
	 * subtraction without borrows between the coordinates (the SWAR
	 * subtraction: Hacker's Delight, 2nd ed., section 2-18). */
	uint64_t swar;
	/* G of powers of two (not XOR): the top bit of every coordinate of
	 * a node, for the same subtraction on nodes (sub), which check_xfer
	 * does twice a transfer: a loop over the coordinates was a fifth of
	 * torus:16x16x16x16's check. */
	uint32_t high;
	bool reduce;
	/* State of the representatives (node 0 alone when G is regular), entry
	 * rep * N + block. */
	uint64_t *full;	      /* copy: blocks held whole */
	struct seglist *part; /* copy: coverage of the others; reduce: pieces (np 0) */
	uint64_t *total;      /* reduce, per class of shard: the weight of all N inputs */
	struct rdeliv *dl;
	size_t ndl, cap_dl;
	/* Reduce mode when the program cuts shards at few places (Swing's
	 * 2D collectives each carry 1/2D of every shard, a bidirectional
	 * ring halves, BFB one per port): the pieces between consecutive cuts
	 * (cut[0] = 0 .. cut[np] = SCHED_ONE), np slots an entry, in `slot`
	 * instead of `part`: slot j of entry rep * N + shard at j * cells +
	 * entry. A shard is then fixed slots read and folded in place: no
	 * list to follow (a cache miss a transfer) nor to rebuild
	 * (seglist_fold's copy). Slot by slot, because a transfer carries one
	 * piece (a Swing collective's), whose slots over all entries (16 MiB
	 * at torus:16x16x16x16) stay in the cache while its collective's
	 * transfers run, where an entry's eight pieces side by side made
	 * every transfer fetch a line for 16 bytes of it. A slot may equal
	 * its neighbour where a list would have merged them, which no check
	 * sees: each reads the hash at every point of a shard. np 0: more
	 * cuts than GRID_MAX_PIECES, the lists.
	 *
	 * A slot is one word: the sum of its inputs' weights mod 2^48 in the
	 * top 48 bits (a fold adds the sender's word without its mark), and
	 * a mark in the low 16 (SLOT_MARK): the stamp of the step that last
	 * read it (deliver_slots) or wrote it (at_once). The weights are
	 * random, so the sum alone tells every input once from anything else
	 * (a count beside it doubled the slots: 134 MB for bandwidth-optimal
	 * Swing on torus:16x16x16x16, most of its check's time on this VM's
	 * fresh memory). */
	struct rslot {
		uint64_t w;
	} * slot;
	uint32_t np, cut[GRID_MAX_PIECES + 1], cells;
	/* Copy mode alike (a bidirectional ring's halves, a share per port):
	 * the pieces between the cuts a cell holds, bit j piece j, in `mask`
	 * instead of `part` (a list, and a cache miss, a transfer); cnp 0:
	 * too many cuts, the lists. The pieces [lo, hi) covers, last asked. */
	uint8_t *mask;
	uint32_t cnp;
	/* The last [lo, hi) either mode looked up: its pieces grid_a .. grid_b - 1. */
	uint32_t grid_lo, grid_hi, grid_a, grid_b;
	/* A step's reads after its checks: m slots from src on (m - 1 in the
	 * top 3 bits) to dst's (GRID_REDUCE: folded in), a plane apart. */
	struct gread {
		uint32_t src, dst;
	} * rd;
	size_t nrd, cap_rd;
	/* And its deliveries to slots it reads, which wait for the end of the
	 * step, one a slot: `at` is slot * cells + entry, and GRID_REDUCE when
	 * it folds in (else it overwrites). */
	struct gdeliv {
		uint32_t at;
		uint64_t w; /* the sender's slot */
	} * gdl;
	size_t ngdl, cap_gdl;
	/* Deliveries at once, in transfer order, each slot written stamped
	 * with the step: right while no transfer reads a slot an earlier one
	 * of its step wrote (`clash`, and the check starts again with the
	 * read lists). Bandwidth-optimal Swing and BFB's reductions never
	 * do: each step a node sends what it no longer folds into. */
	bool at_once, clash;
	/* A step of spans each within one piece, piece after piece
	 * (span_planes): each piece's plane is copied to `snap` before its
	 * first span, and its spans read the copy and fold in place, block
	 * after block, with no read and delivery lists. */
	bool plane_step;
	uint32_t snap_plane; /* the plane in snap (UINT32_MAX: none yet this step) */
	struct rslot *snap;  /* cells slots */
	/* The pieces checked by their spans' sums (reduced_span_pieces), bit j piece
	 * j, and per representative the ones it ends without every input
	 * once (reduced_span_sums). */
	uint8_t sums, *sums_bad;
	uint64_t *port_load;  /* node 0's ports, this step */
	uint64_t *port_total; /* and over all steps */
	uint32_t *run_to;     /* port j, k + 1 arcs from node 0: [j * SCHED_MAX_RUN + k] */
	/* check_xfer's last sender [0] and receiver [1] split by the group
	 * (node, its representative, the translation): a run of blocks to a
	 * peer (a latency-optimal Swing step, p of them) shares them. */
	uint32_t split_node[2], split_rep[2], split_h[2];
	double dup;
	/* All-to-all: the blocks (o, t) a representative r holds besides its
	 * own, key r * N^2 + o * N + t -> what it holds of it (whole, or the
	 * interval list). */
	/* All-to-all: the first failure reduced_a2a_sorted found, for the step loop to
	 * report where it stands. */
	struct a2a_failure {
		enum a2a_at { A2A_NONE, A2A_AT_CHECK, A2A_AT_DELIVERY, A2A_AT_END } at;
		uint32_t step;
		size_t xi;
		uint32_t origin, me;
	} afail;
};

/* The pieces [lo, hi) spans, grid_a .. grid_b - 1 (both are cuts:
 * reduced_grid_cuts took them), for the last range asked (runs of one part). */
static inline void grid_span(struct rstate *v, uint32_t lo, uint32_t hi)
{
	uint32_t a = 0, b;

	if (lo == v->grid_lo && hi == v->grid_hi)
		return;
	while (v->cut[a] != lo)
		a++;
	for (b = a + 1; v->cut[b] != hi; b++)
		;
	v->grid_lo = lo;
	v->grid_hi = hi;
	v->grid_a = a;
	v->grid_b = b;
}

/* sched_group_sub(G, a, b), coordinates at once when v->high says where
 * they are (Hacker's Delight, 2nd ed., section 2-18: the top bit of each
 * set in the minuend and cleared in the subtrahend, no borrow crosses a
 * coordinate; the last term puts the top bits right). */
static __attribute__((noinline, unused)) uint32_t sub_slow(const struct rstate *v, uint32_t a,
							   uint32_t b)
{
	return sched_group_sub(&v->r->group, a, b);
}

/* a - b by the top bits `high` of the coordinates (v->high). */
static inline uint32_t swar_sub(uint32_t high, uint32_t a, uint32_t b)
{
	return ((a | high) - (b & ~high)) ^ ((a ^ ~b) & high);
}

/* Inline, its slow path not (the compiler kept the whole a call). */
static inline uint32_t sub(const struct rstate *v, uint32_t a, uint32_t b)
{
	if (!v->high)
		return sub_slow(v, a, b);
	return swar_sub(v->high, a, b);
}

#define SLOT_MARK 0xffffull

/* ---- what each file lends the others ---------------------------------------- */

/* verify_reduced_sums.c: the pieces checked by their spans' sums (bit j
 * piece j), and after the steps which representatives end without every
 * input once (v->sums_bad). */
uint8_t reduced_span_pieces(struct rstate *v);
void reduced_span_sums(struct rstate *v);

/* verify_reduced_a2a.c: the all-to-all's reads and writes and its final
 * state, the first failure to v->afail, duplicates to v->dup. */
void reduced_a2a_sorted(struct rstate *v);

/* verify_reduced_step.c: a failure at step (0-based) and program transfer
 * xi (SIZE_MAX: none) into the report, returning -1; the cuts of the
 * program's parts of shards (their number, 0 over GRID_MAX_PIECES); and
 * step t checked (-2: the at-once check met a clash). */
int reduced_fail(struct rstate *v, uint32_t step, size_t xi, const char *fmt, ...) OFC_PRINTF(4, 5);
uint32_t reduced_grid_cuts(const struct schedule *p, uint32_t *cut);
int reduced_step(struct rstate *v, uint32_t t, bool planes, size_t cells, uint32_t d);

#endif
