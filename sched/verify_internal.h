/* Private to the verifier (sched/verify*.c): its state (struct vstate),
 * the small helpers every part of the check reads it through, inlined as
 * they were in one file (a call per transfer in the step loops), and what
 * each file lends the others. The files, bottom up (each calls only those
 * before it):
 *
 *   verify_hold.c   what a node holds: interval maps, copy mode's bits and
 *                   pieces, reduce mode's sums; verify_fail, the one way a
 *                   check reports
 *   verify_net.c    general networks: arcs, capacity sets, vertices that
 *                   cannot store, copy or reduce
 *   verify_wdm.c    WDM rings: lightpaths, wavelengths, add/drop
 *   verify_step.c   the step loop: each step's reads, then its writes,
 *                   and the links' loads
 *   verify_final.c  after the last step: every node holds what the
 *                   collective promises
 *   verify_setup.c  the state laid out before the first step, freed after
 *   verify_a2a.c    the all-to-all's holdings by sorting
 *   verify_par.c    the check in two parts, data and links, side by side
 *   verify_ways.c   one schedule checked: the step loop or two parts, and
 *                   the fallbacks between them
 *   verify_chunk.c  a reduction too large for one table: its shards in
 *                   chunks, each checked as a schedule of its own, and
 *                   the links in one pass over them all
 *   verify.c        sched_verify: which way a schedule is checked
 */
#ifndef OFC_SCHED_VERIFY_INTERNAL_H
#define OFC_SCHED_VERIFY_INTERNAL_H

#include "sched/internal.h"

#include <stdatomic.h>

#define EMPTY_KEY	UINT64_MAX
#define BITMAP_MAX_BITS (1ull << 28)
/* Reduce mode reads and writes an n x n table in the schedule's order, a
 * cache miss per transfer at thousands of nodes: ask for the entry this
 * many transfers ahead. */
#define PREFETCH_AHEAD 16
/* Up to 2^28 keys (3 GiB of address space, touched as used). */
#define PIECE_DENSE_MAX_KEYS (1ull << 28)
/* Transfers from which a check is split over two threads (verify_par,
 * the all-to-all's a2a_pass): below, it takes milliseconds, about what
 * starting a thread costs. verify_opts.par_min_xfers overrides it (tests
 * and bench/verify_diff: 1, so that small schedules take that way). */
#define PAR_MIN_XFERS (1u << 16)
/* A reduction's table, at most: 2^24 entries of the fold table (32
 * bytes; rw's and the grid's are smaller), every shard of 4,096 nodes.
 * Larger ones are checked in chunks of shards (verify_chunk.c). */
#define VERIFY_REDUCE_BYTES (512ull << 20)
#define VERIFY_ENTRY_BYTES  32u

/* A chunk of shards checked as a schedule of its own (verify_chunk.c):
 * its block b is shard base + b of the whole schedule, its nblocks
 * shards; what its final check found first, as the whole check's order
 * (node * n + shard; UINT64_MAX: nothing). */
struct verify_win {
	uint32_t base, nblocks;
	uint64_t final_key;
};

/* Open addressing, (node, block) -> seglist. */
struct segmap {
	uint64_t *keys;
	struct seglist *vals;
	size_t cap, used;
};

struct delivery {
	uint64_t key; /* dst * nblocks + block */
	uint32_t lo, hi;
	uint32_t count;
	uint8_t op;
	uint64_t hash;
	size_t xfer; /* for error messages */
};

struct vstate {
	const struct schedule *s;
	const struct verify_opts *o;
	struct verify_report *r;
	uint32_t n;
	uint64_t nblocks;
	bool reduce;
	/* A chunk of a reduction's shards (NULL: every shard), laid out by
	 * node; block b of the schedule is shard win->base + b. */
	struct verify_win *win;
	/* The links alone (verify_chunk.c's pass over the whole schedule):
	 * no table of what nodes hold. */
	bool links_only;
	/* All-to-all: what is held and delivered checked by sorting (see
	 * verify_a2a_sorted), the step loop only the rest. */
	bool sorted;

	uint64_t *full;	     /* copy mode: whole blocks held, bit node * nblocks + block */
	struct piecemap map; /* copy mode: (node, block) held in pieces */

	struct foldmap fold; /* reduce mode: (node, shard) */
	/* Reduce mode off networks when few transfers cut a shard (a ring, a
	 * tree, BFB): (node, shard) -> the shard's one sum, a word (rw_hash:
	 * the sum mod 2^48, and a step's mark; with RW_LIST, the slot of the
	 * entry's interval list in fold.lists instead of the sum), a quarter
	 * of the fold table's, in its place (whose pages cost their zeroing). */
	struct rwhole {
		uint64_t w;
	} * rw;
	/* Reduce mode off networks when every transfer is a run of 2^gk
	 * equal parts of its shard and most are not whole (a bidirectional
	 * ring: halves; torus-rings: one part per port): each part's own
	 * a word (sum and mark) as rw's, 2^gk to an entry (cell() << gk), no
	 * pieces to cut or merge. */
	struct rwhole *grid;
	uint32_t gk;
	/* Copy mode off networks, all-gather and broadcast, in such parts
	 * too: one bit a part (cell() << gk), in place of the bitmap and the
	 * pieces. Every transfer of a step that passes its read phase is
	 * then a delivery, so the write phase walks the step's transfers
	 * again: no delivery list (40 bytes a transfer, fresh pages the
	 * kernel zeroes, against the bit or few each must set). */
	uint64_t *cgrid;
	/* Reduce mode off networks: the entries this step's transfers read
	 * are stamped with the step + 1 (their mark); a delivery to any
	 * other entry is applied at once instead of being kept to the end of
	 * the step. */
	bool read_mark;
	/* Off networks (reduce mode, or copy mode in parts) when the first
	 * step's sends go round one ring (the ring baselines): each node's
	 * place on it, and the entries of rw, fold, grid or cgrid laid out by
	 * diagonal (cell()); NULL: by node. */
	uint32_t *rank;
	uint64_t *weight; /* reduce mode: weight of each node's input */
	uint64_t total_weight;

	struct delivery *dl;
	size_t ndl, cap_dl;
	/* Copy mode: whole blocks delivered this step, by transfer index (the
	 * common case, kept out of the sorted delivery list). */
	uint32_t *whole;
	size_t nwhole, cap_whole;
	struct seg *pieces; /* scratch */
	size_t npieces, cap_pieces;

	/* Direct-connect link loads, per arc, stamped with the step; the arcs
	 * this step loads, each once. */
	struct arcload {
		uint64_t load;
		uint64_t total; /* over all steps */
		uint32_t stamp;
		uint32_t head; /* the graph's, read here with the rest */
	} * arc;	       /* a transfer's arc in one cache line, not four */
	uint32_t *arc_used;
	size_t narc_used;

	/* WDM lightpath bookkeeping, per channel (dir, fibre, wavelength). */
	uint32_t channels;
	uint32_t *seg_stamp; /* channel * n + segment */
	uint32_t *seg_owner; /* (src << 16 | dst) of the lightpath on that segment */
	uint32_t *lp_stamp;  /* channel * n + src: a lightpath seen this step */
	uint64_t *lp_load;
	uint32_t *busy_stamp; /* (dir, fibre) * n + segment */
	uint32_t *busy;
	uint32_t *add_stamp, *add_count, *drop_stamp, *drop_count;
	/* Fast WDM path: a step's lightpaths sorted by (channel, first segment)
	 * prove it conflict-free in O(transfers); only a step with a conflict
	 * walks the segments (seg_stamp/seg_owner, allocated then) to report
	 * the first offending transfer exactly as a walk in order finds it. */
	struct lpath *lps, *lps_tmp;
	size_t cap_lps;
	int32_t *busy_diff; /* (dir, fibre) * (n + 1) + segment */
	uint8_t *df_seen;
	uint32_t *sadd, *sdrop; /* per node, lightpaths added/dropped (sorted check) */
	bool walk;

	/* A general network (opts.network): terminals take part; vertices
	 * that cannot store or cannot copy ("restricted") keep what they hold
	 * apart from the bitmap, as counted interval lists: what arrived in
	 * the step before (rprev) and in this one (rcur) for vertices that
	 * cannot store, what they hold (rheld) for those that store but cannot
	 * copy. Reduce mode keeps (count, hash) values there instead. */
	const struct verify_network *net;
	uint8_t *term; /* a network's terminals, or the nodes not absent (opts.absent) */
	uint32_t nterm, ninputs;
	uint64_t nrequired;	     /* all-to-all under block_weight: the blocks asked for */
	uint32_t *out_off, *out_arc; /* arcs by tail, in arc order: ports */
	uint32_t *aset_off, *aset;   /* per arc, its capacity sets */
	uint32_t *a_stamp, *a_count; /* per arc, this step */
	uint64_t *a_load;
	uint32_t *s_stamp, *s_count; /* per set, this step */
	uint64_t *s_load;
	uint32_t *tarcs;
	size_t ntarcs, cap_tarcs;
	struct segmap rprev, rcur, rheld;
	struct rmove *rs, *rd; /* this step's sends from / deliveries to restricted vertices */
	size_t nrs, cap_rs, nrd, cap_rd;

	/* One of verify_par's two threads, or neither (the step loop); the
	 * checks thread's most on a link per step goes to par_load, not the
	 * report. */
	enum { PAR_NONE, PAR_CHECKS, PAR_DATA } par;
	/* verify_par's data thread in reduce mode: a step's deliveries in one
	 * pass, each entry written stamped with the step (its mark); a read
	 * of one written earlier in the step says no (the step loop then
	 * checks, reading every source before any write as always):
	 * par_reduce_step, or verify_reduce_direct on the fold table. */
	bool one_pass;
	/* That no, said: verify_par then checks in two passes a step. */
	bool read_written;
	/* verify_par's first try at a reduction: the parts' size (gk) from
	 * the first transfers alone (part_shift), each transfer of the grid
	 * then checked to be in such parts (xfer_in's pmask); one in finer
	 * parts says no (finer) and the check starts again from a scan of
	 * every transfer. On this VM a pass over a schedule not touched for
	 * a second ran at about 1 GB/s (0.8 s for latency-optimal Swing's
	 * 840 MB on torus:32x32). */
	bool guess_parts, finer;
	uint32_t pmask;
	/* The data part alone (no graph, every node taking part): it checks
	 * what the links part would (a transfer between two nodes, not a
	 * run, a span only in an all-gather, a reduction only in a reduction:
	 * these bits of run and flags are 0). 0: not alone. */
	uint16_t alone_odd;
	/* verify_par_seq's fused loop (seq_fused) did the step's transfers before
	 * this one, both parts: read_checks, par_reduce_step and
	 * par_copy_step's reads start here. 0 elsewhere. */
	size_t from;
	/* seq_fused's all-gather writes, to be made after the step's reads:
	 * each transfer's word of cgrid and its bits there */
	struct cwrite {
		uint64_t *w;
		uint64_t mask;
	} * cw;
	size_t ncw, cap_cw;
	/* par_reduce_snap: the step's sources' values, a part each */
	struct rwhole *snap;
	size_t cap_snap;
	double *par_load;
};

struct rmove {
	uint64_t key; /* node * nblocks + block */
	uint32_t lo, hi;
	uint32_t count;
	uint8_t op;
	uint64_t hash;
	size_t xfer;
};

struct lpath {
	uint64_t key;	 /* channel * n + first segment */
	uint32_t owner;	 /* src << 16 | dst */
	uint32_t amount; /* fixed-point length carried */
};

/* The check in two parts (verify.c's verify_par, verify_par.c's threads):
 * each part's state and report, and whether it passed. */
struct par_job {
	struct vstate w[2]; /* data, checks */
	struct verify_report r[2];
	atomic_bool stop; /* a thread found something wrong */
	bool ok[2];
	bool split_final; /* the final check's scan after both, in halves */
};

static inline size_t par_least(const struct verify_opts *o)
{
	return o->par_min_xfers ? o->par_min_xfers : PAR_MIN_XFERS;
}

/* The threads a check may use (verify_opts.threads, 0: all CPUs). */
static inline unsigned check_threads(const struct verify_opts *o)
{
	return o->threads ? o->threads : ofc_cpu_count();
}

static inline uint32_t origin_of(const struct vstate *v, uint64_t block)
{
	return v->s->collective == SCHED_ALLTOALL ? (uint32_t)(block / v->n) : (uint32_t)block;
}

static inline bool bit_get(const struct vstate *v, uint64_t key)
{
	return v->full && (v->full[key >> 6] >> (key & 63)) & 1;
}

/* cgrid: entry c's parts [lo, hi) as bits of one word, returned; mask
 * says which. An entry's 2^gk bits (gk <= 3) are aligned to 2^gk, so
 * never cut by a word's end. */
static inline uint64_t *part_bits(uint64_t *cgrid, uint32_t gk, uint64_t c, uint32_t lo,
				  uint32_t hi, uint64_t *mask)
{
	uint32_t sh = 31 - gk, k = lo >> sh, np = (hi >> sh) - k;
	uint64_t bit = (c << gk) + k;

	*mask = ((1ull << np) - 1) << (bit & 63); /* np <= 8 */
	return &cgrid[bit >> 6];
}

/* cgrid: whether entry c holds every part of [lo, hi). */
static inline bool parts_held(const struct vstate *v, uint64_t c, uint32_t lo, uint32_t hi)
{
	uint64_t mask, *w = part_bits(v->cgrid, v->gk, c, lo, hi, &mask);

	return (*w & mask) == mask;
}

/* Whole blocks by node in cgrid: a span's bits are a row's stretch. */
static inline bool span_bits(const struct vstate *v)
{
	return v->cgrid && !v->rank && v->gk == 0;
}

/* An rw or grid entry: the weights' sum mod 2^48 in its top 48 bits (or,
 * with RW_LIST, the slot of its interval list), RW_LIST, and in its low 15
 * bits the step + 1 that last read it (RW_MARK; steps below it, else the
 * fold table). The sum alone tells every input once from anything else
 * (the weights are random); a count beside it, and a word for the mark,
 * made an entry 16 bytes, and the one-thread check of a ring is mostly
 * the first writes of its table's pages. Sums are compared mod 2^48
 * (same_sum): the lists' 64-bit sums of them agree there. */
#define RW_SHIFT 16
#define RW_MARK	 0x7fffull
#define RW_LIST	 0x8000ull
static inline uint32_t rw_mark(const struct rwhole *e)
{
	return (uint32_t)(e->w & RW_MARK);
}
static inline uint64_t rw_hash(const struct rwhole *e)
{
	return e->w >> RW_SHIFT;
}
static inline void rw_set_mark(struct rwhole *e, uint64_t mark)
{
	e->w = (e->w & ~RW_MARK) | mark;
}
/* Folds in (reduce) or puts the sum h, the mark and RW_LIST kept. */
static inline void rw_put(struct rwhole *e, bool reduce, uint64_t h)
{
	e->w = reduce ? e->w + (h << RW_SHIFT) : (h << RW_SHIFT) | (e->w & (RW_MARK | RW_LIST));
}
static inline bool same_sum(uint64_t a, uint64_t b)
{
	return ((a ^ b) << RW_SHIFT) == 0;
}

/* The entry of (node, block) in rw, fold, grid or cgrid (the last two
 * shifted by gk for its parts). A ring step sends block b - 1 - t
 * from each node b to the next (places on the ring): by node, a cache and
 * TLB miss per transfer, n rows apart; by diagonal (place of the block
 * less the node's), a step reads one diagonal and writes the next, each
 * in order, and the next step reads what this one wrote. */
static inline uint64_t cell_in(const uint32_t *rank, uint32_t n, uint64_t nblocks, uint32_t node,
			       uint64_t block)
{
	if (!rank)
		return (uint64_t)node * nblocks + block;
	uint32_t u = rank[node], b = rank[block];

	return (uint64_t)(b >= u ? b - u : b + n - u) * n + u;
}

static inline uint64_t cell(const struct vstate *v, uint32_t node, uint64_t block)
{
	return cell_in(v->rank, v->n, v->nblocks, node, block);
}

/* Whether this thread keeps what nodes hold (verify_par: not the checks
 * thread; the step loop does everything). */
static inline bool own_data(const struct vstate *v)
{
	return v->par != PAR_CHECKS && !v->links_only;
}

/* An rw entry's pieces: its list's, or its one written to buf. */
static inline const struct seg *rw_pieces(const struct vstate *v, const struct rwhole *e,
					  struct seg *buf, uint32_t *n)
{
	if (e->w & RW_LIST) {
		*n = v->fold.lists[rw_hash(e)].n;
		return v->fold.lists[rw_hash(e)].v;
	}
	*buf = (struct seg){0, SCHED_ONE, 0, rw_hash(e)};
	*n = 1;
	return buf;
}

/* Apply one piece to the receiver: fold in (REDUCE) or overwrite (COPY). */
static inline void reduce_apply(struct vstate *v, uint64_t key, const struct delivery *d)
{
	fold_apply(&v->fold, &v->fold.e[key], d->lo, d->hi, d->op == XFER_REDUCE, d->count,
		   d->hash);
}

static inline bool restricted(const struct vstate *v, uint32_t node)
{
	return v->net &&
	       (v->net->kind[node] & (VERIFY_STORE | VERIFY_COPY)) != (VERIFY_STORE | VERIFY_COPY);
}

static inline bool net_can(const struct vstate *v, uint32_t node, unsigned bit)
{
	return !v->net || (v->net->kind[node] & bit);
}

static inline void push_rmove(struct rmove **arr, size_t *n, size_t *cap, struct rmove m)
{
	if (*n == *cap)
		grow_array((void **)arr, cap, *n + 1, sizeof(struct rmove));
	(*arr)[(*n)++] = m;
}

/* Only terminals take part on a network; absent nodes nowhere. */
static inline bool part(const struct vstate *v, uint32_t u)
{
	return !v->term || v->term[u];
}

/* An all-to-all block the schedule must deliver: between nodes taking
 * part, and asked for (verify_opts.block_weight above 0). */
static inline bool required(const struct vstate *v, uint32_t o, uint32_t t)
{
	return part(v, o) && part(v, t) &&
	       (!v->o->block_weight || v->o->block_weight[(uint64_t)o * v->n + t] > 0);
}

/* Reduce mode off networks: the entries x reads, stamped with the step. */
static inline void mark_read(struct vstate *v, uint32_t t, const struct xfer *x)
{
	uint64_t c = cell(v, x->src, x->block);
	uint32_t lo = x->offset, hi = lo + x->length;

	if (v->grid)
		for (uint32_t k = lo >> (31 - v->gk); k < hi >> (31 - v->gk); k++)
			rw_set_mark(&v->grid[(c << v->gk) + k], t + 1);
	else if (v->rw)
		rw_set_mark(&v->rw[c], t + 1);
	else
		v->fold.e[c].mark = t + 1;
}

/* ---- what each file lends the others ---------------------------------------- */

/* verify_hold.c: a failure at step (0-based) and transfer xi (SIZE_MAX:
 * none) into the report; returns -1. */
int verify_fail(struct vstate *v, uint32_t step, size_t xi, const char *fmt, ...) OFC_PRINTF(4, 5);
/* Counted interval lists by (node, block) key, and one changed over
 * [lo, hi) (general networks). */
struct seglist *verify_map_get(struct segmap *m, uint64_t key, bool create);
void verify_map_clear(struct segmap *m);
void verify_map_free(struct segmap *m);
int verify_seg_apply(struct seglist *l, uint32_t lo, uint32_t hi, int64_t dcount, uint64_t dhash,
		     bool set);
/* Copy mode: whether node holds [lo, hi) of block (of each block of x's
 * span); cgrid bits set, saying how many were already. */
bool verify_holds(struct vstate *v, uint32_t node, uint64_t block, uint32_t lo, uint32_t hi);
bool verify_holds_span(struct vstate *v, uint32_t node, const struct xfer *x, uint32_t lo,
		       uint32_t hi);
uint64_t verify_bits_or(uint64_t *w, uint64_t a, uint64_t k);
/* Reduce mode: a sender's value as pieces (v->pieces), and fold_apply on
 * an rw entry. */
void verify_reduce_pieces(struct vstate *v, uint64_t key, uint32_t lo, uint32_t hi);
void verify_rw_apply(struct vstate *v, struct rwhole *e, uint32_t lo, uint32_t hi, bool reduce,
		     uint32_t count, uint64_t hash);

/* verify_net.c: a transfer's arc, each step's capacities, what restricted
 * vertices send and receive; the network's tables. */
int verify_check_net_link(struct vstate *v, uint32_t t, size_t xi);
int verify_check_net_capacity(struct vstate *v, uint32_t t);
int verify_check_rsends(struct vstate *v, uint32_t t);
void verify_apply_rdeliveries(struct vstate *v);
int verify_setup_network(struct vstate *v);

/* verify_wdm.c: a step's lightpaths by sorting (sets v->walk on a
 * conflict, and makes the walk's tables), a transfer's by walking
 * (verify_check_lightpath's, below); the ring's tables. */
void verify_wdm_step(struct vstate *v, uint32_t t);
int verify_walk_lightpath(struct vstate *v, uint32_t t, size_t xi);
int verify_setup_wdm(struct vstate *v);

/* verify_step.c: the step loop and its phases, which verify_par.c's data
 * and links parts call too. */
int verify_run_steps(struct vstate *v);
int verify_read_phase(struct vstate *v, uint32_t t);
int verify_write_phase(struct vstate *v, uint32_t t);
int verify_step_loads(struct vstate *v, uint32_t t);
void verify_total_loads(struct vstate *v);
int verify_reduce_direct(struct vstate *v, uint32_t t);
void verify_cgrid_write(struct vstate *v, uint32_t t);
void verify_prefetch_source(const struct vstate *v, const struct xfer *y);
void verify_push_copy(struct vstate *v, const struct xfer *x, size_t xi, uint64_t key);

/* verify_final.c: the check after the last step, and the first entry of
 * [key, end) not reduced over every input. */
int verify_final_check(struct vstate *v);
uint64_t verify_first_not_full(struct vstate *v, uint64_t key, uint64_t end);

/* verify_setup.c: the state before the first step (reduce mode's inputs
 * in nodes or diagonals [lo, hi)), and freed. */
int verify_setup(struct vstate *v);
void verify_init_inputs(struct vstate *v, uint32_t lo, uint32_t hi);
void verify_teardown(struct vstate *v);

/* verify_a2a.c: an all-to-all's holdings by sorting, the step loop for the
 * rest. */
int verify_a2a_sorted(struct vstate *v);

/* verify_ways.c: s checked by the step loop or in two parts (win: a
 * chunk's shards, or NULL), or an all-to-all by sorting first (which
 * only proves one right); verify_chunk.c: whether s is a reduction too
 * large for one table (o may be NULL), and its check in chunks. */
int verify_window(const struct schedule *s, const struct verify_opts *o,
		  struct verify_report *report, struct verify_win *win);
int verify_by_sorting(const struct schedule *s, const struct verify_opts *o,
		      struct verify_report *report);
bool verify_chunks_needed(const struct schedule *s, const struct verify_opts *o);
int verify_chunked(const struct schedule *s, const struct verify_opts *o,
		   struct verify_report *report);

/* verify_par.c: the two parts' threads (parallel_for items), or both on
 * one; the final scan (whether every entry is full) and the inputs'
 * first touch, each in parts on every thread the check may use; and
 * whether step t reads what it writes. */
void verify_par_run(void *ctx, size_t i, unsigned worker);
void verify_par_seq(struct par_job *j);
bool verify_par_final(struct vstate *v);
void verify_par_inputs(struct vstate *v);
bool verify_step_reads_written(const struct schedule *s, uint32_t t);

/* A WDM transfer's direction, fibre and wavelength in range, and its
 * segments walked where the sorted check did not clear its step. Inline:
 * every transfer of a WDM ring's step loop comes here, nearly all to
 * return at !v->walk (a call each cost the check of an OpTree allreduce
 * 4% more instructions). */
static inline int verify_check_lightpath(struct vstate *v, uint32_t t, size_t xi)
{
	const struct verify_wdm *w = v->o->wdm;
	const struct xfer *x = &v->s->xfers[xi];
	enum ring_dir dir = xfer_dir(x);

	if (dir != DIR_CW && dir != DIR_CCW)
		return verify_fail(v, t, xi, "no ring direction");
	if (x->fibre >= w->fibres)
		return verify_fail(v, t, xi, "fibre %u out of range (%u per direction)", x->fibre,
				   w->fibres);
	if (x->lane >= w->wavelengths)
		return verify_fail(v, t, xi, "wavelength %u out of range (%u per fibre)", x->lane,
				   w->wavelengths);
	/* the sorted check covered segments, capacity, add/drop */
	return v->walk ? verify_walk_lightpath(v, t, xi) : 0;
}

#endif
