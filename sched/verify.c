/* The verifier: one model checker for every schedule ofc emits (see the
 * contract in sched.h).
 *
 * State is what each node holds of each block, as exact fixed-point
 * intervals. Copy collectives keep a bitmap of whole blocks held (the
 * common case: 2 MiB for a 4096-node all-gather) and interval lists only
 * for blocks a node holds part of. Reduce collectives keep, per node and
 * shard, a (count, weight-sum) pair for the inputs folded in, piecewise
 * over the shard. Schedules in equal parts of 1/2^k of a block (rings,
 * torus-rings) keep each part apart instead, laid out by the ring's
 * diagonals when the first step goes round one (cell()). A step is
 * checked in two phases so every transfer sees
 * the state from before the step: read (causality, links, lightpaths),
 * then write (deliveries, grouped by receiver and block).
 */
#include "sched/internal.h"

#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

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

static size_t par_least(const struct verify_opts *o)
{
	return o->par_min_xfers ? o->par_min_xfers : PAR_MIN_XFERS;
}

/* The threads a check may use (verify_opts.threads, 0: all CPUs). */
static unsigned check_threads(const struct verify_opts *o)
{
	return o->threads ? o->threads : ofc_cpu_count();
}

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
	/* All-to-all: what is held and delivered checked by sorting (see
	 * a2a_sorted), the step loop only the rest. */
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
	 * par_reduce_step, or reduce_direct on the fold table. */
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
	/* par_seq's fused loop (seq_fused) did the step's transfers before
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

/* ---- errors --------------------------------------------------------------- */

static int fail(struct vstate *v, uint32_t step, size_t xi, const char *fmt, ...) OFC_PRINTF(4, 5);
static int fail(struct vstate *v, uint32_t step, size_t xi, const char *fmt, ...)
{
	char what[200];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	v->r->ok = false;
	v->r->bad_step = step;
	v->r->bad_xfer = xi;
	if (xi < v->s->nxfers) {
		const struct xfer *x = &v->s->xfers[xi];

		snprintf(v->r->error, sizeof(v->r->error),
			 "step %u, transfer %u -> %u of block %u [%.6g, %.6g): %s", step + 1,
			 x->src, x->dst, x->block, sched_frac(x->offset),
			 sched_frac(x->offset) + sched_frac(x->length), what);
	} else {
		snprintf(v->r->error, sizeof(v->r->error), "%s", what);
	}
	return -1;
}

/* ---- interval lists -------------------------------------------------------- */

static struct seglist *map_get(struct segmap *m, uint64_t key, bool create)
{
	if (create && (m->used + 1) * 2 > m->cap) {
		struct segmap g = {0};

		g.cap = m->cap ? m->cap * 2 : 1024;
		g.keys = xmalloc(g.cap * sizeof(uint64_t));
		g.vals = xcalloc(g.cap, sizeof(struct seglist));
		memset(g.keys, 0xff, g.cap * sizeof(uint64_t));
		for (size_t i = 0; i < m->cap; i++)
			if (m->keys[i] != EMPTY_KEY) {
				size_t h = (m->keys[i] * 0x9e3779b97f4a7c15ull) >> 20;

				for (h &= g.cap - 1; g.keys[h] != EMPTY_KEY;
				     h = (h + 1) & (g.cap - 1))
					;
				g.keys[h] = m->keys[i];
				g.vals[h] = m->vals[i];
			}
		g.used = m->used;
		free(m->keys);
		free(m->vals);
		*m = g;
	}
	if (!m->cap)
		return NULL;
	size_t h = ((key * 0x9e3779b97f4a7c15ull) >> 20) & (m->cap - 1);
	while (m->keys[h] != EMPTY_KEY) {
		if (m->keys[h] == key)
			return &m->vals[h];
		h = (h + 1) & (m->cap - 1);
	}
	if (!create)
		return NULL;
	m->keys[h] = key;
	m->used++;
	return &m->vals[h];
}

/* ---- copy mode -------------------------------------------------------------- */

static uint32_t origin_of(const struct vstate *v, uint64_t block)
{
	return v->s->collective == SCHED_ALLTOALL ? (uint32_t)(block / v->n) : (uint32_t)block;
}

static bool bit_get(const struct vstate *v, uint64_t key)
{
	return v->full && (v->full[key >> 6] >> (key & 63)) & 1;
}

static uint64_t cell(const struct vstate *v, uint32_t node, uint64_t block);

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
static bool parts_held(const struct vstate *v, uint64_t c, uint32_t lo, uint32_t hi)
{
	uint64_t mask, *w = part_bits(v->cgrid, v->gk, c, lo, hi, &mask);

	return (*w & mask) == mask;
}

static bool holds(struct vstate *v, uint32_t node, uint64_t block, uint32_t lo, uint32_t hi)
{
	uint64_t key = (uint64_t)node * v->nblocks + block;

	if (v->cgrid)
		return origin_of(v, block) == node || parts_held(v, cell(v, node, block), lo, hi);
	if (origin_of(v, block) == node || bit_get(v, key))
		return true;
	return piece_covers(&v->map, piecemap_get(&v->map, key, false), lo, hi);
}

/* cgrid bits [a, a + k): whether all are set; set them, saying how many
 * were already. */
static bool bits_all(const uint64_t *w, uint64_t a, uint64_t k)
{
	for (; k && (a & 63); a++, k--)
		if (!((w[a >> 6] >> (a & 63)) & 1))
			return false;
	for (; k >= 64; a += 64, k -= 64)
		if (w[a >> 6] != ~0ull)
			return false;
	for (; k; a++, k--)
		if (!((w[a >> 6] >> (a & 63)) & 1))
			return false;
	return true;
}

static uint64_t bits_or(uint64_t *w, uint64_t a, uint64_t k)
{
	uint64_t had = 0;

	for (; k && (a & 63); a++, k--) {
		had += (w[a >> 6] >> (a & 63)) & 1;
		w[a >> 6] |= 1ull << (a & 63);
	}
	for (; k >= 64; a += 64, k -= 64) {
		had += (uint64_t)__builtin_popcountll(w[a >> 6]);
		w[a >> 6] = ~0ull;
	}
	for (; k; a++, k--) {
		had += (w[a >> 6] >> (a & 63)) & 1;
		w[a >> 6] |= 1ull << (a & 63);
	}
	return had;
}

/* Whole blocks by node in cgrid: a span's bits are a row's stretch. */
static bool span_bits(const struct vstate *v)
{
	return v->cgrid && !v->rank && v->gk == 0;
}

/* Whether node holds [lo, hi) of each block of x's span (an all-gather's:
 * a node's own block is its origin's). */
static bool holds_span(struct vstate *v, uint32_t node, const struct xfer *x, uint32_t lo,
		       uint32_t hi)
{
	uint64_t b = x->block, nb = xfer_blocks(x), row = (uint64_t)node * v->nblocks;

	if (span_bits(v)) {
		if (node < b || node >= b + nb)
			return bits_all(v->cgrid, row + b, nb);
		return bits_all(v->cgrid, row + b, node - b) &&
		       bits_all(v->cgrid, row + node + 1, b + nb - node - 1);
	}
	for (uint64_t j = 0; j < nb; j++)
		if (!holds(v, node, b + j, lo, hi))
			return false;
	return true;
}

/* ---- reduce mode ------------------------------------------------------------ */

/* The sender's value over [lo, hi) as pieces in v->pieces. */
static void reduce_pieces(struct vstate *v, uint64_t key, uint32_t lo, uint32_t hi)
{
	struct seg buf[2];
	uint32_t n;
	const struct seg *p = fold_pieces(&v->fold, &v->fold.e[key], buf, &n);

	v->npieces = 0;
	GROW(v->pieces, v->cap_pieces, n);
	for (uint32_t i = 0; i < n; i++) {
		uint32_t a = p[i].lo > lo ? p[i].lo : lo;
		uint32_t b = p[i].hi < hi ? p[i].hi : hi;

		if (b > a)
			v->pieces[v->npieces++] = (struct seg){a, b, p[i].count, p[i].hash};
	}
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
	return v->par != PAR_CHECKS;
}

/* An rw entry's pieces: its list's, or its one written to buf. */
static const struct seg *rw_pieces(const struct vstate *v, const struct rwhole *e, struct seg *buf,
				   uint32_t *n)
{
	if (e->w & RW_LIST) {
		*n = v->fold.lists[rw_hash(e)].n;
		return v->fold.lists[rw_hash(e)].v;
	}
	*buf = (struct seg){0, SCHED_ONE, 0, rw_hash(e)};
	*n = 1;
	return buf;
}

/* fold_apply on an rw entry: a list while it is in several pieces. */
static void rw_apply(struct vstate *v, struct rwhole *e, uint32_t lo, uint32_t hi, bool reduce,
		     uint32_t count, uint64_t hash)
{
	(void)count; /* rw keeps sums alone: its lists' counts are 0 */
	if (!(e->w & RW_LIST)) {
		if (lo == 0 && hi == SCHED_ONE) {
			rw_put(e, reduce, hash);
			return;
		}
		uint32_t slot = foldmap_list(&v->fold);

		seglist_push(&v->fold.lists[slot], (struct seg){0, SCHED_ONE, 0, rw_hash(e)});
		e->w = (uint64_t)slot << RW_SHIFT | RW_LIST | (e->w & RW_MARK);
	}
	uint32_t slot = (uint32_t)rw_hash(e);
	struct seglist *l = &v->fold.lists[slot];

	seglist_fold(l, lo, hi, reduce, 0, hash);
	if (l->n == 1) { /* one piece again */
		e->w = l->v[0].hash << RW_SHIFT | (e->w & RW_MARK);
		foldmap_unlist(&v->fold, slot);
	}
}

/* Apply one piece to the receiver: fold in (REDUCE) or overwrite (COPY). */
static void reduce_apply(struct vstate *v, uint64_t key, const struct delivery *d)
{
	fold_apply(&v->fold, &v->fold.e[key], d->lo, d->hi, d->op == XFER_REDUCE, d->count,
		   d->hash);
}

/* ---- general networks ------------------------------------------------------------ */

static bool restricted(const struct vstate *v, uint32_t node)
{
	return v->net &&
	       (v->net->kind[node] & (VERIFY_STORE | VERIFY_COPY)) != (VERIFY_STORE | VERIFY_COPY);
}

static bool net_can(const struct vstate *v, uint32_t node, unsigned bit)
{
	return !v->net || (v->net->kind[node] & bit);
}

static void map_clear(struct segmap *m)
{
	for (size_t i = 0; i < m->cap; i++)
		if (m->keys[i] != EMPTY_KEY) {
			free(m->vals[i].v);
			m->vals[i] = (struct seglist){0};
			m->keys[i] = EMPTY_KEY;
		}
	m->used = 0;
}

static void map_free(struct segmap *m)
{
	map_clear(m);
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof(*m));
}

static int cmp_u32v(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

/* Change a counted interval list over [lo, hi): add (dcount, dhash), or
 * (set) place (dcount, dhash) where nothing is. Absent = (0, 0). Returns -1
 * when a count would drop below 0 or set finds something there. */
static int seg_apply(struct seglist *l, uint32_t lo, uint32_t hi, int64_t dcount, uint64_t dhash,
		     bool set)
{
	uint32_t *pt = xmalloc((2 * (size_t)l->n + 2) * sizeof(uint32_t)), np = 0;
	struct seglist out = {0};
	int rc = 0;

	pt[np++] = lo;
	pt[np++] = hi;
	for (uint32_t i = 0; i < l->n; i++) {
		pt[np++] = l->v[i].lo;
		pt[np++] = l->v[i].hi;
	}
	qsort(pt, np, sizeof(uint32_t), cmp_u32v);
	uint32_t k = 0;

	for (uint32_t i = 0; i + 1 < np; i++) {
		uint32_t a = pt[i], b = pt[i + 1];

		if (a == b)
			continue;
		while (k < l->n && l->v[k].hi <= a)
			k++;
		int64_t c = 0;
		uint64_t h = 0;

		if (k < l->n && l->v[k].lo <= a) {
			c = l->v[k].count;
			h = l->v[k].hash;
		}
		if (a >= lo && b <= hi) {
			if (set && (c || h))
				rc = -1;
			c = set ? dcount : c + dcount;
			h = set ? dhash : h + dhash;
		}
		if (c < 0)
			rc = -1;
		if (c <= 0 && h == 0)
			continue;
		if (out.n && out.v[out.n - 1].hi == a && out.v[out.n - 1].count == (uint32_t)c &&
		    out.v[out.n - 1].hash == h)
			out.v[out.n - 1].hi = b;
		else
			seglist_push(&out, (struct seg){a, b, (uint32_t)c, h});
	}
	free(pt);
	free(l->v);
	*l = out;
	return rc;
}

static void push_rmove(struct rmove **arr, size_t *n, size_t *cap, struct rmove m)
{
	if (*n == *cap)
		grow_array((void **)arr, cap, *n + 1, sizeof(struct rmove));
	(*arr)[(*n)++] = m;
}

static int cmp_rmove(const void *a, const void *b)
{
	const struct rmove *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return (x->xfer > y->xfer) - (x->xfer < y->xfer);
}

/* The arc a transfer uses (its port, else the first arc to dst), its load
 * in this step, its cost; REDUCE only into a vertex that can reduce. */
static int check_net_link(struct vstate *v, uint32_t t, size_t xi)
{
	const struct verify_network *nw = v->net;
	const struct xfer *x = &v->s->xfers[xi];
	uint32_t first = v->out_off[x->src], deg = v->out_off[x->src + 1] - first, arc = UINT32_MAX;

	if (x->lane != SCHED_NO_LANE) {
		if (x->lane >= deg || nw->head[v->out_arc[first + x->lane]] != x->dst)
			return fail(v, t, xi, "port %u of node %u does not lead to node %u",
				    x->lane, x->src, x->dst);
		arc = v->out_arc[first + x->lane];
	} else {
		for (uint32_t k = 0; k < deg && arc == UINT32_MAX; k++)
			if (nw->head[v->out_arc[first + k]] == x->dst)
				arc = v->out_arc[first + k];
		if (arc == UINT32_MAX)
			return fail(v, t, xi, "there is no arc %u -> %u in the network", x->src,
				    x->dst);
	}
	if (xfer_op(x) == XFER_REDUCE && !net_can(v, x->dst, VERIFY_REDUCE))
		return fail(v, t, xi, "node %u cannot reduce", x->dst);
	if (v->a_stamp[arc] != t + 1) {
		v->a_stamp[arc] = t + 1;
		v->a_load[arc] = 0;
		v->a_count[arc] = 0;
		if (v->ntarcs == v->cap_tarcs)
			GROW(v->tarcs, v->cap_tarcs, v->ntarcs + 1);
		v->tarcs[v->ntarcs++] = arc;
	}
	v->a_load[arc] += x->length;
	v->a_count[arc]++;
	if (nw->cost)
		v->r->network_cost += nw->cost[arc] * sched_frac(x->length);
	return 0;
}

/* Per step: every arc and capacity set within step_time x bandwidth. A
 * transfer's length is rounded to 2^-31 of a block, so each one loaded on
 * an arc or set may add that much. */
static int check_net_capacity(struct vstate *v, uint32_t t)
{
	const struct verify_network *nw = v->net;
	double tol = nw->tolerance > 0 ? nw->tolerance : 1e-9, ulp = 1.0 / SCHED_ONE;
	double st = nw->step_times ? nw->step_times[t] : nw->step_time;

	for (size_t i = 0; i < v->ntarcs; i++) {
		uint32_t a = v->tarcs[i];
		double load = (double)v->a_load[a] / SCHED_ONE;

		if (!isinf(nw->bw[a])) {
			double lim = st * nw->bw[a];

			if (lim > 0 && load / lim > v->r->max_utilisation)
				v->r->max_utilisation = load / lim;
			if (load > lim * (1 + tol) + ulp * v->a_count[a])
				return fail(v, t, SIZE_MAX,
					    "step %u: arc %u -> %u carries %.9g blocks, over its "
					    "%.9g (step time x bandwidth)",
					    t + 1, nw->tail[a], nw->head[a], load, lim);
		}
		for (uint32_t j = v->aset_off[a]; j < v->aset_off[a + 1]; j++) {
			uint32_t sidx = v->aset[j];

			if (v->s_stamp[sidx] != t + 1) {
				v->s_stamp[sidx] = t + 1;
				v->s_load[sidx] = 0;
				v->s_count[sidx] = 0;
			}
			v->s_load[sidx] += v->a_load[a];
			v->s_count[sidx] += v->a_count[a];
		}
	}
	for (size_t i = 0; i < v->ntarcs; i++) {
		uint32_t a = v->tarcs[i];

		for (uint32_t j = v->aset_off[a]; j < v->aset_off[a + 1]; j++) {
			uint32_t sidx = v->aset[j];
			double load = (double)v->s_load[sidx] / SCHED_ONE;
			double lim = st * nw->set_bw[sidx];

			if (lim > 0 && load / lim > v->r->max_utilisation)
				v->r->max_utilisation = load / lim;
			if (load > lim * (1 + tol) + ulp * v->s_count[sidx])
				return fail(
				    v, t, SIZE_MAX,
				    "step %u: capacity set %u carries %.9g blocks, over its "
				    "%.9g (step time x bandwidth)",
				    t + 1, sidx, load, lim);
		}
	}
	v->ntarcs = 0;
	return 0;
}

/* Copy mode: sends from restricted vertices, against what they may send. A
 * vertex that cannot store sends only what arrived in the step before; one
 * that cannot copy sends each piece at most as often as it arrived. */
static int check_rsends(struct vstate *v, uint32_t t)
{
	if (v->nrs > 1)
		qsort(v->rs, v->nrs, sizeof(*v->rs), cmp_rmove);
	for (size_t i = 0; i < v->nrs;) {
		size_t j = i;
		uint64_t key = v->rs[i].key;
		uint32_t node = (uint32_t)(key / v->nblocks);
		bool store = net_can(v, node, VERIFY_STORE), copy = net_can(v, node, VERIFY_COPY);
		struct seglist *avail = map_get(store ? &v->rheld : &v->rprev, key, false);
		struct seglist tmp = {0};

		while (j < v->nrs && v->rs[j].key == key)
			j++;
		if (avail && avail->n) {
			tmp.v = xmalloc(avail->n * sizeof(struct seg));
			memcpy(tmp.v, avail->v, avail->n * sizeof(struct seg));
			tmp.n = tmp.cap = avail->n;
		}
		for (size_t k = i; k < j; k++) {
			const struct rmove *m = &v->rs[k];
			bool held = avail && seglist_covers(avail, m->lo, m->hi);

			if (!held) {
				free(tmp.v);
				if (!store)
					return fail(
					    v, t, m->xfer,
					    "node %u cannot store: it may send only what it "
					    "received in the step before",
					    node);
				return fail(v, t, m->xfer, "node %u does not hold that data", node);
			}
			if (!copy && seg_apply(&tmp, m->lo, m->hi, -1, 0, false) < 0) {
				free(tmp.v);
				return fail(v, t, m->xfer,
					    "node %u cannot copy: it sends that data more often "
					    "than it received it",
					    node);
			}
		}
		if (store && !copy && avail) { /* it moves, not copies: the rest stays */
			free(avail->v);
			*avail = tmp;
		} else {
			free(tmp.v);
		}
		i = j;
	}
	v->nrs = 0;
	return 0;
}

/* Deliveries to restricted vertices, then the step's turnover: what a
 * vertex that cannot store received in the step before is gone. */
static void apply_rdeliveries(struct vstate *v)
{
	for (size_t i = 0; i < v->nrd; i++) {
		const struct rmove *m = &v->rd[i];
		uint32_t node = (uint32_t)(m->key / v->nblocks);
		bool store = net_can(v, node, VERIFY_STORE);

		if (v->reduce) {
			/* Vertices that cannot store keep packets: partial results
			 * pass a switch side by side, each forwarded once. A
			 * reduction folds into a packet of the same part. */
			struct seglist *l = map_get(&v->rcur, m->key, true);
			uint32_t k = 0;

			if (m->op == XFER_REDUCE)
				for (k = 0; k < l->n; k++)
					if (l->v[k].lo == m->lo && l->v[k].hi == m->hi)
						break;
			if (m->op == XFER_REDUCE && k < l->n) {
				l->v[k].count += m->count;
				l->v[k].hash += m->hash;
			} else {
				seglist_push(l, (struct seg){m->lo, m->hi, m->count, m->hash});
			}
			continue;
		}
		struct seglist *l = map_get(store ? &v->rheld : &v->rcur, m->key, true);

		seg_apply(l, m->lo, m->hi, 1, 0, false);
	}
	v->nrd = 0;
	struct segmap sw = v->rprev;

	map_clear(&sw);
	v->rprev = v->rcur;
	v->rcur = sw;
}

/* ---- per-step checks ---------------------------------------------------------- */

/* Inlined, as block_ok: a call per transfer in the read phase (they
 * stopped being inlined when the read phase grew, 5% of a ring's check). */
static inline __attribute__((always_inline)) void load_arc(struct vstate *v, uint32_t t, uint32_t a,
							   uint64_t len)
{
	struct arcload *l = &v->arc[a];

	if (l->stamp != t + 1) {
		l->stamp = t + 1;
		l->load = 0;
		v->arc_used[v->narc_used++] = a;
	}
	l->load += len;
	l->total += len;
}

/* A transfer's length (fixed point) as its link load: its block's weight
 * times it under verify_opts.block_weight (an all-to-all of skewed pairs),
 * rounded to the fixed point's 2^-31. */
static inline uint64_t weighed(const struct vstate *v, const struct xfer *x, uint64_t len)
{
	const double *w = v->o->block_weight;

	return w ? (uint64_t)((double)len * w[x->block] + 0.5) : len;
}

/* A run: xfer_arcs(x) arcs on port x->lane, node after node, each loaded
 * in the step, ending at x->dst; the nodes between take part (a failed
 * host forwards nothing). */
static int check_run(struct vstate *v, uint32_t t, size_t xi)
{
	const struct graph *g = v->o->graph;
	const struct xfer *x = &v->s->xfers[xi];
	uint32_t u = x->src;

	if (x->lane == SCHED_NO_LANE)
		return fail(v, t, xi, "a transfer over %u arcs without its port", xfer_arcs(x));
	for (uint32_t k = 0; k < xfer_arcs(x); k++) {
		if (k && v->o->absent && v->o->absent[u])
			return fail(v, t, xi, "node %u, %u arcs on, takes no part (failed)", u, k);
		if (x->lane >= graph_outdeg(g, u))
			return fail(v, t, xi, "node %u, %u arcs on, has no port %u", u, k, x->lane);
		uint32_t a = g->off[u] + x->lane;

		load_arc(v, t, a, weighed(v, x, (uint64_t)x->length * xfer_blocks(x)));
		u = g->adj[a];
	}
	if (u != x->dst)
		return fail(v, t, xi, "%u arcs on port %u from node %u end at node %u, not %u",
			    xfer_arcs(x), x->lane, x->src, u, x->dst);
	return 0;
}

static int check_link(struct vstate *v, uint32_t t, size_t xi)
{
	const struct graph *g = v->o->graph;
	const struct xfer *x = &v->s->xfers[xi];
	uint32_t deg = graph_outdeg(g, x->src), arc = UINT32_MAX, mult = 0;
	const uint32_t *out = graph_out(g, x->src);

	if (x->run)
		return check_run(v, t, xi);
	if (x->lane != SCHED_NO_LANE) {
		if (x->lane >= deg || v->arc[g->off[x->src] + x->lane].head != x->dst)
			return fail(v, t, xi, "port %u of node %u does not lead to node %u",
				    x->lane, x->src, x->dst);
		arc = g->off[x->src] + x->lane;
		mult = 1;
	} else {
		for (uint32_t k = 0; k < deg; k++)
			if (out[k] == x->dst) {
				if (arc == UINT32_MAX)
					arc = g->off[x->src] + k;
				mult++;
			}
		if (!mult)
			return fail(v, t, xi, "there is no link %u -> %u in %s", x->src, x->dst,
				    g->spec);
	}
	/* Without a port, parallel links share the load evenly. */
	for (uint32_t k = 0, a = arc; k < mult; a++) {
		if (v->arc[a].head != x->dst)
			continue;
		load_arc(v, t, a, weighed(v, x, (uint64_t)(x->length / mult) * xfer_blocks(x)));
		k++;
	}
	return 0;
}

/* Segment k of the ring is the fibre from node k to node k+1 (CW) or from
 * node k+1 to node k (CCW). */
static int check_lightpath(struct vstate *v, uint32_t t, size_t xi)
{
	const struct verify_wdm *w = v->o->wdm;
	const struct xfer *x = &v->s->xfers[xi];
	enum ring_dir dir = xfer_dir(x);
	uint32_t n = v->n, stamp = t + 1;

	if (dir != DIR_CW && dir != DIR_CCW)
		return fail(v, t, xi, "no ring direction");
	if (x->fibre >= w->fibres)
		return fail(v, t, xi, "fibre %u out of range (%u per direction)", x->fibre,
			    w->fibres);
	if (x->lane >= w->wavelengths)
		return fail(v, t, xi, "wavelength %u out of range (%u per fibre)", x->lane,
			    w->wavelengths);

	uint32_t df = (dir == DIR_CW ? 0 : w->fibres) + x->fibre;
	uint32_t ch = df * w->wavelengths + x->lane;
	uint32_t owner = (uint32_t)x->src << 16 | x->dst;
	size_t lp = (size_t)ch * n + x->src;

	/* Walk the segments: each must be free on this channel or ours. Steps
	 * the sorted check cleared skip this (it also counted busy channels). */
	if (!v->walk)
		return 0; /* the sorted check covered segments, capacity, add/drop */
	uint32_t len = dir == DIR_CW ? (x->dst + n - x->src) % n : (x->src + n - x->dst) % n;
	uint32_t seg = dir == DIR_CW ? x->src : (x->src + n - 1) % n;
	for (uint32_t k = 0; k < len; k++) {
		size_t i = (size_t)ch * n + seg;

		if (v->seg_stamp[i] == stamp) {
			if (v->seg_owner[i] != owner)
				return fail(v, t, xi,
					    "lightpath conflict on segment %u-%u (%s fibre %u "
					    "wavelength %u) with lightpath %u -> %u",
					    seg, (seg + 1) % n, dir == DIR_CW ? "cw" : "ccw",
					    x->fibre, x->lane, v->seg_owner[i] >> 16,
					    v->seg_owner[i] & 0xffff);
		} else {
			size_t b = (size_t)df * n + seg;

			v->seg_stamp[i] = stamp;
			v->seg_owner[i] = owner;
			if (v->busy_stamp[b] != stamp) {
				v->busy_stamp[b] = stamp;
				v->busy[b] = 0;
			}
			if (++v->busy[b] > v->r->max_wavelengths_used)
				v->r->max_wavelengths_used = v->busy[b];
		}
		seg = dir == DIR_CW ? (seg + 1) % n : (seg + n - 1) % n;
	}

	/* Capacity: one block per lightpath per step. */
	if (v->lp_stamp[lp] != stamp) {
		v->lp_stamp[lp] = stamp;
		v->lp_load[lp] = 0;
		if (v->add_stamp[x->src] != stamp) {
			v->add_stamp[x->src] = stamp;
			v->add_count[x->src] = 0;
		}
		if (v->drop_stamp[x->dst] != stamp) {
			v->drop_stamp[x->dst] = stamp;
			v->drop_count[x->dst] = 0;
		}
		if (++v->add_count[x->src] > w->max_add)
			return fail(v, t, xi, "node %u adds more than %u lightpaths in one step",
				    x->src, w->max_add);
		if (++v->drop_count[x->dst] > w->max_add)
			return fail(v, t, xi, "node %u drops more than %u lightpaths in one step",
				    x->dst, w->max_add);
	}
	v->lp_load[lp] += x->length;
	if (v->lp_load[lp] > SCHED_ONE)
		return fail(v, t, xi,
			    "lightpath %u -> %u (%s fibre %u wavelength %u) carries more "
			    "than one block in one step",
			    x->src, x->dst, dir == DIR_CW ? "cw" : "ccw", x->fibre, x->lane);
	return 0;
}

static inline void push_delivery(struct vstate *v, struct delivery d)
{
	if (v->ndl == v->cap_dl)
		GROW(v->dl, v->cap_dl, v->ndl + 1);
	v->dl[v->ndl++] = d;
}

/* A copy transfer's deliveries, key its first block's at dst: a whole
 * block to the list by transfer (write_phase puts it in the bitmap), else
 * to the sorted list; a span's blocks one by one. */
static void push_copy(struct vstate *v, const struct xfer *x, size_t xi, uint64_t key)
{
	uint32_t lo = x->offset, hi = lo + x->length, nb = xfer_blocks(x);

	if (v->full && lo == 0 && hi == SCHED_ONE && nb == 1) {
		if (v->nwhole == v->cap_whole)
			GROW(v->whole, v->cap_whole, v->nwhole + 1);
		v->whole[v->nwhole++] = (uint32_t)xi;
		return;
	}
	for (uint32_t j = 0; j < nb; j++)
		push_delivery(v, (struct delivery){key + j, lo, hi, 1, XFER_COPY, 0, xi});
}

/* LSD radix sort of a step's lightpaths by key (< 2^bits), in as few
 * passes of up to 11 bits as it takes. */
static void sort_lpaths(struct vstate *v, size_t m, unsigned bits)
{
	struct lpath *a = v->lps, *b = v->lps_tmp;

	if (m < 256) { /* small steps: clearing 2048 buckets per pass would dominate */
		for (size_t i = 1; i < m; i++) {
			struct lpath t = a[i];
			size_t j = i;

			while (j && a[j - 1].key > t.key) {
				a[j] = a[j - 1];
				j--;
			}
			a[j] = t;
		}
		return;
	}
	unsigned passes = (bits + 10) / 11, width = passes ? (bits + passes - 1) / passes : 0;
	uint32_t cnt[2049];

	for (unsigned p = 0; p < passes; p++) {
		unsigned sh = p * width;
		uint64_t mask = (1ull << width) - 1;

		memset(cnt, 0, ((size_t)mask + 2) * sizeof(uint32_t));
		for (size_t i = 0; i < m; i++)
			cnt[((a[i].key >> sh) & mask) + 1]++;
		for (uint64_t k = 1; k <= mask + 1; k++)
			cnt[k] += cnt[k - 1];
		for (size_t i = 0; i < m; i++)
			b[cnt[(a[i].key >> sh) & mask]++] = a[i];
		struct lpath *t = a;
		a = b;
		b = t;
	}
	v->lps = a;
	v->lps_tmp = b;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* Busy wavelengths of a sparse step: per (dir, fibre), the end points of
 * its distinct lightpaths sorted (ends before starts at one segment), and
 * the deepest overlap. */
static void busy_sparse(struct vstate *v, size_t m)
{
	const struct verify_wdm *w = v->o->wdm;
	uint32_t n = v->n, half = w->fibres * w->wavelengths;
	uint64_t *ev = xmalloc((4 * m + 1) * sizeof(uint64_t));
	size_t ne = 0;

	/* Event: df << 40 | position << 1 | (start ? 1 : 0). */
	for (size_t k = 0; k < m; k++) {
		const struct lpath *q = &v->lps[k];

		if (k && q->key == v->lps[k - 1].key && q->owner == v->lps[k - 1].owner)
			continue;
		uint32_t c = (uint32_t)(q->key / n), src = q->owner >> 16, dst = q->owner & 0xffff;
		uint64_t df = c / w->wavelengths;
		uint32_t st = (uint32_t)(q->key - (uint64_t)c * n);
		uint32_t e = st + (c < half ? (dst > src ? dst - src : dst + n - src)
					    : (src > dst ? src - dst : src + n - dst));

		ev[ne++] = df << 40 | (uint64_t)st << 1 | 1;
		if (e <= n) {
			ev[ne++] = df << 40 | (uint64_t)e << 1;
		} else {
			ev[ne++] = df << 40 | (uint64_t)n << 1;
			ev[ne++] = df << 40 | 0 << 1 | 1;
			ev[ne++] = df << 40 | (uint64_t)(e - n) << 1;
		}
	}
	qsort(ev, ne, sizeof(uint64_t), cmp_u64);
	uint32_t run = 0;
	for (size_t i = 0; i < ne; i++) {
		if (i && ev[i] >> 40 != ev[i - 1] >> 40)
			run = 0;
		if (ev[i] & 1) {
			if (++run > v->r->max_wavelengths_used)
				v->r->max_wavelengths_used = run;
		} else {
			run--;
		}
	}
	free(ev);
}

/* The step's lightpaths sorted per channel by first segment. They are
 * conflict-free when each ends before the next begins (the last, wrapping
 * round, before the first) unless both are the same lightpath; a lightpath
 * (same channel, src, dst) carries at most one block in total; a node adds
 * and drops at most max_add distinct lightpaths. On any violation it sets
 * v->walk, and the per-transfer checks run in full to report the first
 * offending transfer exactly as before. Otherwise it counts the busy
 * wavelengths per fibre segment with difference arrays. Transfers out of
 * range are left to the per-transfer checks. */
static void wdm_sorted_check(struct vstate *v, uint32_t t)
{
	const struct schedule *s = v->s;
	const struct verify_wdm *w = v->o->wdm;
	uint32_t n = v->n, half = w->fibres * w->wavelengths;
	size_t m = 0, need = s->step_start[t + 1] - s->step_start[t];

	v->walk = false;
	if (need > v->cap_lps) {
		v->cap_lps = need;
		v->lps = xreallocarray(v->lps, need, sizeof(struct lpath));
		v->lps_tmp = xreallocarray(v->lps_tmp, need, sizeof(struct lpath));
	}
	for (size_t xi = s->step_start[t]; xi < s->step_start[t + 1]; xi++) {
		const struct xfer *x = &s->xfers[xi];
		enum ring_dir dir = xfer_dir(x);

		if (x->src >= n || x->dst >= n || x->src == x->dst ||
		    (dir != DIR_CW && dir != DIR_CCW) || x->fibre >= w->fibres ||
		    x->lane >= w->wavelengths)
			continue;
		uint32_t ch = (dir == DIR_CW ? 0 : half) + x->fibre * w->wavelengths + x->lane;
		uint32_t first = dir == DIR_CW ? x->src : x->dst;

		v->lps[m++] = (struct lpath){(uint64_t)ch * n + first,
					     (uint32_t)x->src << 16 | x->dst, x->length};
	}
	uint64_t top = (uint64_t)v->channels * n;
	unsigned bits = 0;
	while (bits < 64 && (top >> bits))
		bits++;
	sort_lpaths(v, m, bits);

	/* Per channel (keys ch * n .. ch * n + n - 1), distinct lightpaths. */
	uint32_t ch = 0, first = 0, reach = 0, owner = 0, A = w->max_add;
	uint64_t base = 0, load = 0;
	bool any = false;
	for (size_t k = 0; k < m; k++) {
		const struct lpath *q = &v->lps[k];
		uint32_t src = q->owner >> 16, dst = q->owner & 0xffff;

		if (k && q->key == v->lps[k - 1].key && q->owner == v->lps[k - 1].owner) {
			load += q->amount; /* the same lightpath again */
			if (load > SCHED_ONE)
				goto bad;
			continue;
		}
		if (!any || q->key >= base + n) {
			/* A new channel: the previous one's wrap-around first. */
			if (any && reach > n && reach - n > first)
				goto bad;
			while (q->key >= base + n) {
				ch++;
				base += n;
			}
			any = true;
			first = (uint32_t)(q->key - base);
			reach = 0;
		}
		uint32_t st = (uint32_t)(q->key - base);
		uint32_t len = ch < half ? (dst > src ? dst - src : dst + n - src)
					 : (src > dst ? src - dst : src + n - dst);
		if (st < reach)
			goto bad;
		reach = st + len;
		owner = q->owner;
		load = q->amount;
		if (load > SCHED_ONE || ++v->sadd[src] > A || ++v->sdrop[dst] > A)
			goto bad;
	}
	if (any && reach > n && reach - n > first)
		goto bad;
	(void)owner;

	/* Busy wavelengths per (dir, fibre) and segment: nothing to learn once
	 * some fibre segment had all W busy; a difference array over the ring
	 * when the step is dense, sorted end points when it is sparse. */
	uint32_t dfs = 2 * w->fibres;
	for (size_t k = 0; k < m; k++)
		v->sadd[v->lps[k].owner >> 16] = v->sdrop[v->lps[k].owner & 0xffff] = 0;
	if (v->r->max_wavelengths_used >= w->wavelengths)
		return;
	if (m * 16 < n) {
		busy_sparse(v, m);
		return;
	}
	for (size_t k = 0; k < m; k++) {
		const struct lpath *q = &v->lps[k];

		if (k && q->key == v->lps[k - 1].key && q->owner == v->lps[k - 1].owner)
			continue;
		uint32_t c = (uint32_t)(q->key / n), src = q->owner >> 16, dst = q->owner & 0xffff;
		uint32_t df = c / w->wavelengths, st = (uint32_t)(q->key - (uint64_t)c * n);
		uint32_t e = st + (c < half ? (dst > src ? dst - src : dst + n - src)
					    : (src > dst ? src - dst : src + n - dst));
		int32_t *d = v->busy_diff + (size_t)df * (n + 1);

		v->df_seen[df] = 1;
		d[st]++;
		if (e <= n) {
			d[e]--;
		} else {
			d[n]--;
			d[0]++;
			d[e - n]--;
		}
	}
	for (uint32_t df = 0; df < dfs; df++) {
		int32_t *d = v->busy_diff + (size_t)df * (n + 1), run = 0;

		if (!v->df_seen[df])
			continue;
		v->df_seen[df] = 0;
		for (uint32_t x = 0; x <= n; x++) {
			run += d[x];
			d[x] = 0;
			if (x < n && (uint32_t)run > v->r->max_wavelengths_used)
				v->r->max_wavelengths_used = (uint32_t)run;
		}
	}
	return;
bad:
	for (size_t k = 0; k < m; k++)
		v->sadd[v->lps[k].owner >> 16] = v->sdrop[v->lps[k].owner & 0xffff] = 0;
	v->walk = true;
}

/* Which blocks exist: rooted collectives have the root's; on a network only
 * terminals have data. */
static inline __attribute__((always_inline)) bool block_ok(const struct vstate *v, uint64_t block)
{
	enum sched_collective c = v->s->collective;

	if (c == SCHED_BROADCAST || c == SCHED_REDUCE)
		return block == v->s->root;
	if (!v->term)
		return true;
	if (c == SCHED_ALLTOALL)
		return v->term[block / v->n] && v->term[block % v->n];
	return v->term[block];
}

/* The packets at a vertex that cannot store that make up [lo, hi), first
 * come first served, into v->pieces; taken (split where a packet is only
 * partly sent) unless the vertex can copy. -1 when they do not cover it. */
static int take_packets(struct vstate *v, struct seglist *l, uint32_t lo, uint32_t hi, bool take)
{
	v->npieces = 0;
	while (lo < hi) {
		uint32_t k;

		for (k = 0; l && k < l->n; k++)
			if (l->v[k].lo <= lo && lo < l->v[k].hi)
				break;
		if (!l || k == l->n)
			return -1;
		struct seg pk = l->v[k];
		uint32_t end = pk.hi < hi ? pk.hi : hi;

		GROW(v->pieces, v->cap_pieces, v->npieces + 1);
		v->pieces[v->npieces++] = (struct seg){lo, end, pk.count, pk.hash};
		if (take) {
			/* what is left of the packet: before lo and after end */
			l->v[k] = l->v[--l->n];
			if (pk.lo < lo)
				seglist_push(l, (struct seg){pk.lo, lo, pk.count, pk.hash});
			if (end < pk.hi)
				seglist_push(l, (struct seg){end, pk.hi, pk.count, pk.hash});
		}
		lo = end;
	}
	return 0;
}

/* Reduce mode off networks, after the checks: every transfer's pieces,
 * from the state at the start of the step (a delivery to an entry the
 * step reads waits in v->dl for the write phase; others, which no
 * transfer of the step can see, are applied now, in transfer order). In
 * one pass (one_pass) on the fold table alone: par_reduce_step does the
 * grid and rw. */
static int reduce_direct(struct vstate *v, uint32_t t)
{
	const struct schedule *s = v->s;
	size_t end = s->step_start[t + 1];
	uint32_t sh = 31 - v->gk;
	bool once = v->one_pass;

	for (size_t xi = s->step_start[t]; v->grid && xi < end; xi++) {
		const struct xfer *x = &s->xfers[xi];
		uint64_t sc = cell(v, x->src, x->block) << v->gk;
		uint64_t dc = cell(v, x->dst, x->block) << v->gk;
		bool red = xfer_op(x) == XFER_REDUCE;

		/* By diagonal the cells go in order: the hardware follows. */
		if (!v->rank && xi + PREFETCH_AHEAD < end) {
			const struct xfer *y = x + PREFETCH_AHEAD;
			uint32_t k = y->offset >> sh;

			__builtin_prefetch(&v->grid[(cell(v, y->src, y->block) << v->gk) + k]);
			__builtin_prefetch(&v->grid[(cell(v, y->dst, y->block) << v->gk) + k], 1);
		}
		for (uint32_t k = x->offset >> sh; k < (x->offset + x->length) >> sh; k++) {
			const struct rwhole *se = &v->grid[sc + k];
			struct rwhole *de = &v->grid[dc + k];

			if (rw_mark(de) == t + 1) {
				push_delivery(v, (struct delivery){dc + k, k << sh, (k + 1) << sh,
								   0, xfer_op(x), rw_hash(se), xi});
				continue;
			}
			rw_put(de, red, rw_hash(se));
		}
	}
	for (size_t xi = s->step_start[t]; v->rw && xi < end; xi++) {
		const struct xfer *x = &s->xfers[xi];
		uint64_t skey = cell(v, x->src, x->block), dkey = cell(v, x->dst, x->block);
		struct rwhole *se = &v->rw[skey], *de = &v->rw[dkey];
		bool wait = rw_mark(de) == t + 1, red = xfer_op(x) == XFER_REDUCE;

		if (!v->rank && xi + PREFETCH_AHEAD < end) {
			const struct xfer *y = x + PREFETCH_AHEAD;

			__builtin_prefetch(&v->rw[cell(v, y->src, y->block)]);
			__builtin_prefetch(&v->rw[cell(v, y->dst, y->block)], 1);
		}
		if (!wait && !((se->w | de->w) & RW_LIST) && x->length == SCHED_ONE) {
			rw_put(de, red, rw_hash(se));
			continue;
		}
		struct seg buf;
		uint32_t np, lo = x->offset, hi = lo + x->length;
		const struct seg *p = rw_pieces(v, se, &buf, &np);

		for (uint32_t k = 0; k < np; k++) {
			uint32_t a = p[k].lo > lo ? p[k].lo : lo, b = p[k].hi < hi ? p[k].hi : hi;

			if (b <= a)
				continue;
			if (wait)
				push_delivery(v, (struct delivery){dkey, a, b, p[k].count,
								   xfer_op(x), p[k].hash, xi});
			else
				rw_apply(v, de, a, b, red, p[k].count, p[k].hash);
		}
	}
	for (size_t xi = s->step_start[t]; !v->rw && !v->grid && xi < end; xi++) {
		const struct xfer *x = &s->xfers[xi];
		uint64_t skey = cell(v, x->src, x->block), dkey = cell(v, x->dst, x->block);
		bool wait = !once && v->fold.e[dkey].mark == t + 1;

		if (once) {
			if (v->fold.e[skey].mark == t + 1) {
				v->read_written = true;
				return -1;
			}
			v->fold.e[dkey].mark = t + 1;
		}

		if (xi + PREFETCH_AHEAD < end) {
			const struct xfer *y = x + PREFETCH_AHEAD;
			uint64_t sk = cell(v, y->src, y->block), dk = cell(v, y->dst, y->block);

			/* The sender's entry again: the read phase's stamp is
			 * often evicted by now. */
			__builtin_prefetch(&v->fold.e[sk]);
			__builtin_prefetch(&v->fold.e[dk], 1);
		}
		const struct fold *se = &v->fold.e[skey];
		if (!wait && se->cut != FOLD_LIST) {
			/* What nearly every transfer is: the sender's one or two
			 * pieces folded straight into the receiver. */
			uint32_t lo = x->offset, hi = lo + x->length, cut = se->cut;
			bool red = xfer_op(x) == XFER_REDUCE;
			struct fold *de = &v->fold.e[dkey];

			if (lo < cut)
				fold_apply(&v->fold, de, lo, hi < cut ? hi : cut, red, se->count[0],
					   se->hash[0]);
			if (hi > cut)
				fold_apply(&v->fold, de, lo > cut ? lo : cut, hi, red, se->count[1],
					   se->hash[1]);
			continue;
		}
		reduce_pieces(v, skey, x->offset, x->offset + x->length);
		for (size_t k = 0; k < v->npieces; k++) {
			struct delivery d = {dkey,
					     v->pieces[k].lo,
					     v->pieces[k].hi,
					     v->pieces[k].count,
					     xfer_op(x),
					     v->pieces[k].hash,
					     xi};

			if (wait)
				push_delivery(v, d);
			else
				reduce_apply(v, dkey, &d);
		}
	}
	return 0;
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

/* What a later transfer y will read of its source's data, fetched ahead
 * (a cache miss per transfer in the tables by node); by diagonal the reads
 * are in order already. */
static inline void prefetch_source(const struct vstate *v, const struct xfer *y)
{
	uint64_t yk = (uint64_t)y->src * v->nblocks + y->block;

	if (y->src >= v->n || y->block >= v->nblocks || v->rank)
		return;
	if (v->grid) {
		__builtin_prefetch(
		    &v->grid[(cell(v, y->src, y->block) << v->gk) + (y->offset >> (31 - v->gk))],
		    1);
	} else if (v->rw) {
		__builtin_prefetch(&v->rw[cell(v, y->src, y->block)], 1);
	} else if (v->reduce) {
		__builtin_prefetch(&v->fold.e[cell(v, y->src, y->block)], 1);
	} else {
		/* holds() reads the bit, then the pieces (dense keys count no
		 * `used`). */
		if (v->full)
			__builtin_prefetch(&v->full[yk >> 6]);
		if (v->map.used || v->map.dense)
			piecemap_prefetch(&v->map, yk);
	}
}

/* A span (x carries 2^k blocks): only an all-gather's, off WDM rings and
 * networks, within the blocks. */
static int check_span(struct vstate *v, uint32_t t, size_t xi)
{
	const struct xfer *x = &v->s->xfers[xi];
	uint32_t nb = xfer_blocks(x);

	if (v->s->collective != SCHED_ALLGATHER || v->o->wdm || v->net)
		return fail(v, t, xi,
			    "a transfer of %u blocks: only an all-gather's on a direct-connect "
			    "topology carry several",
			    nb);
	if ((uint64_t)x->block + nb > v->nblocks)
		return fail(v, t, xi, "no such block");
	for (uint32_t j = 1; v->term && j < nb; j++) /* absent nodes' blocks */
		if (!block_ok(v, x->block + j))
			return fail(v, t, xi, "no such block");
	return 0;
}

/* The links part's read phase (every node taking part), up to the first
 * transfer that is not plain: one block's part over one arc, on its
 * port. Their checks (port, load) in one tight loop: half the part's time
 * went to read_phase's branches for what a plain transfer cannot be. The
 * indices of block and part are the data part's to check (xfer_indexes:
 * a no from either sends the schedule to the step loop); a node's, here,
 * as the graph's tables need it. read_phase goes on from the one
 * returned, and says what is wrong with it, if anything. Arcs are
 * fetched ahead where their table is larger than a core's cache. Without
 * a graph (routed peers) a plain transfer is one block's part between two
 * nodes, no port to check. */
static __attribute__((noinline)) size_t read_checks(struct vstate *v, uint32_t t)
{
	const struct schedule *s = v->s;
	const uint32_t *off = v->o->graph ? v->o->graph->off : NULL;
	struct arcload *arc = v->arc;
	size_t xi = s->step_start[t] > v->from ? s->step_start[t] : v->from;
	size_t end = s->step_start[t + 1];
	uint32_t n = v->n;
	bool ahead = off && (size_t)v->o->graph->m * sizeof(*arc) > (1u << 20);
	/* run and flags, one word: a run, a span (flags bits 3-7), or a
	 * reduction in copy mode */
	uint16_t odd = (uint16_t)(0xffu | (v->reduce ? 0xf8u : 0xfcu) << 8);

	_Static_assert(offsetof(struct xfer, flags) == offsetof(struct xfer, run) + 1,
		       "run, then flags");
	for (; !off && xi < end; xi++) { /* no graph: no port to check */
		const struct xfer *x = &s->xfers[xi];
		uint16_t rf;

		memcpy(&rf, &x->run, sizeof(rf));
		if (x->src >= n || x->src == x->dst || (rf & odd))
			break;
	}
	for (; off && xi < end; xi++) {
		const struct xfer *x = &s->xfers[xi];
		uint32_t src = x->src, a;
		uint16_t rf;

		if (ahead && xi + PREFETCH_AHEAD < end) {
			const struct xfer *y = x + PREFETCH_AHEAD;

			__builtin_prefetch(&arc[off[y->src < n ? y->src : 0] + y->lane], 1);
		}
		memcpy(&rf, &x->run, sizeof(rf));
		/* the arc's head is a node: dst < n */
		if (src >= n || src == x->dst || (rf & odd) || x->lane >= off[src + 1] - off[src] ||
		    arc[a = off[src] + x->lane].head != x->dst)
			break;
		load_arc(v, t, a, x->length);
	}
	return xi;
}

static int read_phase(struct vstate *v, uint32_t t)
{
	const struct schedule *s = v->s;
	/* verify_par's links part, every node taking part: read_checks first */
	size_t first = v->par == PAR_CHECKS && !v->term ? read_checks(v, t) : s->step_start[t];

	v->ndl = 0;
	v->nwhole = 0;
	if (v->o->wdm) {
		wdm_sorted_check(v, t);
		if (v->walk && !v->seg_stamp) {
			size_t cells = (size_t)v->channels * v->n;
			uint32_t dfn = 2 * v->o->wdm->fibres * v->n;

			v->seg_stamp = xcalloc(cells, sizeof(uint32_t));
			v->seg_owner = xcalloc(cells, sizeof(uint32_t));
			v->busy_stamp = xcalloc(dfn, sizeof(uint32_t));
			v->busy = xcalloc(dfn, sizeof(uint32_t));
		}
	}
	for (size_t xi = first; xi < s->step_start[t + 1]; xi++) {
		const struct xfer *x = &s->xfers[xi];
		uint32_t lo = x->offset, hi;

		/* The link check's arc entry, a cache miss per transfer on a
		 * large graph. */
		if (v->arc && xi + PREFETCH_AHEAD < s->step_start[t + 1]) {
			const struct xfer *y = x + PREFETCH_AHEAD;
			const uint32_t *off = v->o->graph->off;

			if (y->src < v->n && y->lane < off[y->src + 1] - off[y->src])
				__builtin_prefetch(&v->arc[off[y->src] + y->lane], 1);
		}
		if (own_data(v) && xi + PREFETCH_AHEAD < s->step_start[t + 1])
			prefetch_source(v, x + PREFETCH_AHEAD);

		if (x->src >= v->n || x->dst >= v->n)
			return fail(v, t, xi, "node out of range (%u nodes)", v->n);
		if (x->src == x->dst)
			return fail(v, t, xi, "a node sends to itself");
		if (v->o->absent && (v->o->absent[x->src] || v->o->absent[x->dst]))
			return fail(v, t, xi, "node %u takes no part (failed)",
				    v->o->absent[x->src] ? x->src : x->dst);
		if (x->block >= v->nblocks)
			return fail(v, t, xi, "no such block");
		bool span = __builtin_expect(xfer_blocks(x) > 1, 0);
		if (span && check_span(v, t, xi) < 0)
			return -1;
		if (x->length == 0 || x->offset >= SCHED_ONE ||
		    (uint64_t)x->offset + x->length > SCHED_ONE)
			return fail(v, t, xi, "part outside the block");
		/* (sorted: a2a_sorted found none) */
		if (s->collective == SCHED_ALLTOALL && !v->sorted &&
		    x->block / v->n == x->block % v->n)
			return fail(v, t, xi, "all-to-all has no block from a node to itself");
		if (!block_ok(v, x->block))
			return fail(v, t, xi, "no such block");
		hi = lo + x->length;
		if (x->run && !v->o->wdm && !v->o->graph)
			return fail(v, t, xi,
				    "a transfer over %u arcs, checked without its topology",
				    xfer_arcs(x));
		if (v->o->graph && check_link(v, t, xi) < 0)
			return -1;
		if (v->net && check_net_link(v, t, xi) < 0)
			return -1;
		if (v->o->wdm && check_lightpath(v, t, xi) < 0)
			return -1;

		uint64_t skey = (uint64_t)x->src * v->nblocks + x->block;
		uint64_t dkey = (uint64_t)x->dst * v->nblocks + x->block;
		if (!v->reduce) {
			if (xfer_op(x) == XFER_REDUCE)
				return fail(v, t, xi, "a reducing transfer in %s",
					    sched_collective_name(s->collective));
			if (v->sorted || !own_data(v))
				continue;
			if (restricted(v, x->src))
				push_rmove(&v->rs, &v->nrs, &v->cap_rs,
					   (struct rmove){skey, lo, hi, 1, XFER_COPY, 0, xi});
			else if (span ? !holds_span(v, x->src, x, lo, hi)
				      : !holds(v, x->src, x->block, lo, hi))
				return fail(v, t, xi,
					    "node %u does not hold that data at the start "
					    "of the step",
					    x->src);
			if (restricted(v, x->dst)) {
				push_rmove(&v->rd, &v->nrd, &v->cap_rd,
					   (struct rmove){dkey, lo, hi, 1, XFER_COPY, 0, xi});
				continue;
			}
			if (v->cgrid) /* write_phase walks the step again */
				continue;
			push_copy(v, x, xi, dkey);
			continue;
		}
		if (!own_data(v))
			continue;
		if (v->read_mark) {
			mark_read(v, t, x);
			continue;
		}
		if (v->net && !net_can(v, x->src, VERIFY_STORE)) {
			struct seglist *l = map_get(&v->rprev, skey, false);

			if (take_packets(v, l, lo, hi, !net_can(v, x->src, VERIFY_COPY)) < 0)
				return fail(v, t, xi,
					    "node %u cannot store: it may send only what it "
					    "received in the step before, each packet once",
					    x->src);
		} else {
			reduce_pieces(v, skey, lo, hi);
		}
		if (v->net && !v->term[x->src])
			for (size_t k = 0; k < v->npieces; k++)
				if (v->pieces[k].count == 0)
					return fail(v, t, xi, "node %u holds none of that data",
						    x->src);
		bool apart = v->net && !net_can(v, x->dst, VERIFY_STORE);

		for (size_t k = 0; k < v->npieces; k++) {
			if (apart)
				push_rmove(&v->rd, &v->nrd, &v->cap_rd,
					   (struct rmove){dkey, v->pieces[k].lo, v->pieces[k].hi,
							  v->pieces[k].count, xfer_op(x),
							  v->pieces[k].hash, xi});
			else
				push_delivery(v,
					      (struct delivery){dkey, v->pieces[k].lo,
								v->pieces[k].hi, v->pieces[k].count,
								xfer_op(x), v->pieces[k].hash, xi});
		}
	}
	if (v->net) {
		if (!v->reduce && check_rsends(v, t) < 0)
			return -1;
		if (check_net_capacity(v, t) < 0)
			return -1;
	}
	if (v->read_mark && own_data(v))
		(void)reduce_direct(v, t); /* two passes: cannot say no */
	return 0;
}

/* A span into dst's entries of cgrid: what they held already, in blocks,
 * its own block among them. Whole blocks by node (span_bits): a stretch
 * of dst's row, a word at a time; else block by block. */
static double span_write(struct vstate *v, const struct xfer *x)
{
	uint64_t b = x->block, nb = xfer_blocks(x), d = x->dst, row = d * v->nblocks;
	uint32_t lo = x->offset, hi = lo + x->length, sh = 31 - v->gk;
	double dup = 0;

	if (span_bits(v)) {
		if (d < b || d >= b + nb)
			return (double)bits_or(v->cgrid, row + b, nb);
		return (double)(1 + bits_or(v->cgrid, row + b, d - b) +
				bits_or(v->cgrid, row + d + 1, b + nb - d - 1));
	}
	for (uint64_t j = b; j < b + nb; j++) {
		uint64_t c = cell(v, x->dst, j) << v->gk;
		uint32_t ov = 0;

		if (origin_of(v, j) == x->dst) {
			dup += sched_frac(x->length);
			continue;
		}
		for (uint32_t k = lo >> sh; k < hi >> sh; k++) {
			uint64_t *w = &v->cgrid[(c + k) >> 6], bit = 1ull << ((c + k) & 63);

			ov += *w & bit ? 1u << sh : 0;
			*w |= bit;
		}
		dup += sched_frac(ov);
	}
	return dup;
}

/* In parts (cgrid): step t's deliveries, every transfer in order (from
 * v->from where par_seq's fused loop did those before; the read phase
 * passed them all); each part a node holds already is a
 * duplicate, summed in parts (multiples of 2^-gk, exact in a double as
 * the per-transfer sum was). The tables' fields in locals: to the
 * compiler a store to cgrid may change any 64-bit field of v. A node's
 * own block is its origin's (cgrid: all-gathers and broadcasts, whose
 * block is the root). */
static void cgrid_write(struct vstate *v, uint32_t t)
{
	const struct schedule *s = v->s;
	if (!s->xfers) /* (no transfers at all: no offset on NULL) */
		return;
	const struct xfer *first =
	    s->xfers + (s->step_start[t] > v->from ? s->step_start[t] : v->from);
	const struct xfer *end = s->xfers + s->step_start[t + 1];
	const uint32_t *rank = v->rank;
	uint64_t *cgrid = v->cgrid, nblocks = v->nblocks, dup = 0, mask, *w;
	uint32_t n = v->n, gk = v->gk;

	for (const struct xfer *x = first; x < end; x++) {
		if (xfer_blocks(x) > 1) {
			v->r->duplicate_blocks += span_write(v, x);
			continue;
		}
		if (x->block == x->dst) {
			v->r->duplicate_blocks += sched_frac(x->length);
			continue;
		}
		w = part_bits(cgrid, gk, cell_in(rank, n, nblocks, x->dst, x->block), x->offset,
			      x->offset + x->length, &mask);
		if (__builtin_expect((*w & mask) != 0, 0)) /* no popcnt by default */
			dup += (uint64_t)__builtin_popcountll(*w & mask);
		*w |= mask;
	}
	v->r->duplicate_blocks += (double)dup / (double)(1u << gk);
}

static int write_phase(struct vstate *v, uint32_t t)
{
	bool a2a = v->s->collective == SCHED_ALLTOALL;

	if (v->net)
		apply_rdeliveries(v);
	if (v->sorted)
		return 0;

	if (v->reduce) {
		/* Additive, so order within the step does not matter. */
		for (size_t i = 0; i < v->ndl; i++) {
			const struct delivery *d = &v->dl[i];

			if (v->grid) { /* one part each */
				rw_put(&v->grid[d->key], d->op == XFER_REDUCE, d->hash);
				continue;
			}
			if (v->rw && i + PREFETCH_AHEAD < v->ndl)
				__builtin_prefetch(&v->rw[v->dl[i + PREFETCH_AHEAD].key], 1);
			if (v->rw) {
				rw_apply(v, &v->rw[d->key], d->lo, d->hi, d->op == XFER_REDUCE,
					 d->count, d->hash);
				continue;
			}
			if (i + PREFETCH_AHEAD < v->ndl)
				__builtin_prefetch(&v->fold.e[v->dl[i + PREFETCH_AHEAD].key], 1);
			reduce_apply(v, d->key, d);
		}
		return 0;
	}
	/* In parts (cgrid); the checks thread keeps no data. */
	if (v->cgrid) {
		if (own_data(v))
			cgrid_write(v, t);
		return 0;
	}
	/* Whole blocks to nodes that hold none of the block in pieces go
	 * straight to the bitmap, in transfer order, without sorting; the rest
	 * (parts of blocks, or blocks already held in part) are sorted and
	 * merged below. A second whole copy in one step is a duplicate (at an
	 * all-to-all target, an error), as in the sorted path. */
	for (size_t i = 0; i < v->nwhole; i++) {
		const struct xfer *x = &v->s->xfers[v->whole[i]];
		uint32_t node = x->dst;
		uint64_t block = x->block, key = (uint64_t)node * v->nblocks + block;

		if (i + PREFETCH_AHEAD < v->nwhole) {
			const struct xfer *y = &v->s->xfers[v->whole[i + PREFETCH_AHEAD]];
			uint64_t yk = (uint64_t)y->dst * v->nblocks + y->block;

			__builtin_prefetch(&v->full[yk >> 6], 1);
			piecemap_prefetch(&v->map, yk);
		}
		if (piecemap_get(&v->map, key, false)) {
			push_delivery(
			    v, (struct delivery){key, 0, SCHED_ONE, 1, XFER_COPY, 0, v->whole[i]});
			continue;
		}
		if (origin_of(v, block) == node || bit_get(v, key)) {
			if (a2a && block % v->n == node)
				return fail(v, t, v->whole[i],
					    "block delivered to its target twice");
			v->r->duplicate_blocks += 1;
			continue;
		}
		v->full[key >> 6] |= 1ull << (key & 63);
	}
	/* The rest in transfer order, each added to what its node holds of
	 * the block: what overlaps that (this step's earlier pieces included)
	 * is a duplicate, an error at an all-to-all target. Unsorted: the
	 * union's overlap does not depend on the order, and a sort of every
	 * step's deliveries cost more than the lookups (bidir-ring). */
	for (size_t i = 0; i < v->ndl; i++) {
		const struct delivery *d = &v->dl[i];
		uint64_t key = d->key;
		uint32_t node = (uint32_t)(key / v->nblocks);
		uint64_t block = key % v->nblocks;
		bool at_target = a2a && block % v->n == node;

		if (i + PREFETCH_AHEAD < v->ndl) {
			uint64_t yk = v->dl[i + PREFETCH_AHEAD].key;

			if (v->full)
				__builtin_prefetch(&v->full[yk >> 6], 1);
			piecemap_prefetch(&v->map, yk);
		}
		if (origin_of(v, block) == node || bit_get(v, key)) {
			if (at_target)
				return fail(v, t, d->xfer, "block delivered to its target twice");
			v->r->duplicate_blocks += sched_frac(d->hi - d->lo);
			continue;
		}
		/* The whole block in one go, to a node holding none of it:
		 * straight to the bitmap. Else one lookup, creating the entry. */
		bool whole = v->full && d->lo == 0 && d->hi == SCHED_ONE;
		struct piece *e = piecemap_get(&v->map, key, !whole);
		if (!e) { /* whole */
			v->full[key >> 6] |= 1ull << (key & 63);
			continue;
		}
		uint64_t ov = piece_add(&v->map, e, d->lo, d->hi);
		if (ov && at_target)
			return fail(v, t, d->xfer, "block delivered to its target twice");
		v->r->duplicate_blocks += sched_frac((uint32_t)ov);
		if (v->full && piece_whole(e)) {
			v->full[key >> 6] |= 1ull << (key & 63);
			piece_clear(&v->map, e);
		}
	}
	return 0;
}

static int step_loads(struct vstate *v, uint32_t t)
{
	const double *cap = v->o->arc_capacity;
	uint64_t max = 0;
	double load = 0;

	if (cap) {
		/* Mixed rates: the step lasts as long as its slowest link's
		 * data over that link's capacity. */
		for (size_t i = 0; i < v->narc_used; i++) {
			uint32_t a = v->arc_used[i];

			load = fmax(load, (double)v->arc[a].load / SCHED_ONE / cap[a]);
		}
		v->narc_used = 0;
	} else {
		for (size_t i = 0; i < v->narc_used; i++)
			if (v->arc[v->arc_used[i]].load > max)
				max = v->arc[v->arc_used[i]].load;
		v->narc_used = 0;
		load = (double)max / SCHED_ONE;
	}
	if (v->par) { /* this thread's arcs: verify_par takes the most */
		v->par_load[t] = load;
		return 0;
	}
	if (v->o->step_link_load)
		v->o->step_link_load[t] = load;
	v->r->sum_max_link_load += load;
	if (load > v->r->max_link_load)
		v->r->max_link_load = load;
	return 0;
}

/* The busiest link over the whole schedule (verify_report). */
static void total_loads(struct vstate *v)
{
	const struct graph *g = v->o->graph;
	const double *cap = v->o->arc_capacity;
	double max = 0;

	for (uint32_t a = 0; a < g->m; a++)
		max = fmax(max, (double)v->arc[a].total / SCHED_ONE / (cap ? cap[a] : 1));
	v->r->max_total_link_load = max;
}

/* ---- final state ------------------------------------------------------------- */

static bool full_copy(struct vstate *v, uint32_t node, uint64_t block)
{
	uint64_t key = (uint64_t)node * v->nblocks + block;

	if (v->cgrid)
		return origin_of(v, block) == node ||
		       parts_held(v, cell(v, node, block), 0, SCHED_ONE);
	if (origin_of(v, block) == node || bit_get(v, key))
		return true;
	return piece_covers(&v->map, piecemap_get(&v->map, key, false), 0, SCHED_ONE);
}

static bool full_key(struct vstate *v, uint64_t key)
{
	struct seg buf[2];
	uint32_t n;

	for (uint32_t k = 0; v->grid && k < 1u << v->gk; k++)
		if (!same_sum(rw_hash(&v->grid[(key << v->gk) + k]), v->total_weight))
			return false;
	if (v->grid)
		return true;
	const struct seg *p = v->rw ? rw_pieces(v, &v->rw[key], buf, &n)
				    : fold_pieces(&v->fold, &v->fold.e[key], buf, &n);

	for (uint32_t i = 0; i < n; i++)
		if (v->rw ? !same_sum(p[i].hash, v->total_weight) /* sums alone */
			  : p[i].count != v->ninputs || p[i].hash != v->total_weight)
			return false;
	return true;
}

/* The first entry of [key, end) that is not full: full_key's, with the
 * grid's and rw's fields in locals, every part in memory order (an
 * allreduce's final scan of N^2 entries: a call an entry was 38
 * instructions, a third of a ring's check after seq_fused). */
static uint64_t first_not_full(struct vstate *v, uint64_t key, uint64_t end)
{
	const struct rwhole *grid = v->grid, *rw = v->rw;
	uint64_t total = v->total_weight << RW_SHIFT, sum = ~((1ull << RW_SHIFT) - 1);

	if (grid) {
		const struct rwhole *e = grid + (key << v->gk), *stop = grid + (end << v->gk);

		while (e < stop && (e->w & sum) == total)
			e++;
		return (uint64_t)(e - grid) >> v->gk;
	}
	for (; rw && key < end; key++)
		if ((rw[key].w & RW_LIST) ? !full_key(v, key) : (rw[key].w & sum) != total)
			return key;
	while (key < end && full_key(v, key))
		key++;
	return key;
}

static bool full_reduce(struct vstate *v, uint32_t node, uint64_t block)
{
	return full_key(v, cell(v, node, block));
}

/* Only terminals take part on a network; absent nodes nowhere. */
static bool part(const struct vstate *v, uint32_t u)
{
	return !v->term || v->term[u];
}

/* An all-to-all block the schedule must deliver: between nodes taking
 * part, and asked for (verify_opts.block_weight above 0). */
static bool required(const struct vstate *v, uint32_t o, uint32_t t)
{
	return part(v, o) && part(v, t) &&
	       (!v->o->block_weight || v->o->block_weight[(uint64_t)o * v->n + t] > 0);
}

/* The step loop: each step's reads, then its writes (read_phase,
 * write_phase), its links' loads, and the schedule's. */
static int run_steps(struct vstate *v)
{
	const struct schedule *s = v->s;

	for (uint32_t t = 0; t < s->nsteps; t++) {
		if (clock_expired(v->o->clock))
			return fail(v, t, SIZE_MAX, "time limit reached in verification");
		clock_progress(v->o->clock, NULL, (double)t / s->nsteps);
		if (read_phase(v, t) < 0 || write_phase(v, t) < 0)
			return -1;
		if (v->o->graph)
			step_loads(v, t);
	}
	if (v->o->graph)
		total_loads(v);
	return 0;
}

/* ---- the all-to-all by sorting ---------------------------------------------------
 * What a node holds of a block is keyed node * N^2 + block, and the path
 * lowering's hops are nearly all distinct keys (35.6 M of 47 M on
 * torus:32x32): a check by lookups is a cache miss per read and per
 * delivery into a table of them all (1 GiB, whose fresh pages the kernel
 * zeroes), where generation writes in order. So, as reduced.c's a2a_sorted,
 * the transfers become 8-byte events, a read (the sender must hold the
 * piece at the start of its step; not at its origin, which always does)
 * and a write (the receiver holds it after; at the origin a duplicate,
 * counted here), emitted step by step, the step's reads before its writes,
 * into buckets by the key's high bits in emission order; each bucket is
 * sorted by the rest of the key, stable, and one pass over each key's
 * events checks its reads against the writes before them. The word is the
 * key's low bits (on top), the piece's number (piece_numbers) and the
 * transfer << 1 | write.
 *
 * By block, first: one event a transfer, keyed by its block alone, the
 * word the block's low bits, the piece's number, src, dst and step. A
 * block's events in step order are its pieces' journeys: each step's
 * reads are checked against what the senders held before it, then its
 * writes added, in a table by node of the few the block reaches (in L1,
 * stamped per block instead of cleared). Half the events of the keying
 * by node and block, so half the scattered stores and fresh pages, and
 * one radix pass where that took two (torus:32x32 paths, one thread:
 * 1.9-2.0 s of CPU where 2.7-3.4 went). When the word cannot hold src, dst and step beside a
 * full piece table, or the pieces outnumber it, by node and block.
 *
 * On two threads (verify_opts.threads, from par_least() transfers) the
 * steps are cut in two halves: each thread counts and emits one half's
 * events into its own stretch of every bucket, the first half's before
 * the second's, so a bucket holds what one thread emits, in its order;
 * each half numbers its own pieces (the half is the bit above the
 * number). Then both check the buckets, in chunks of about equal events
 * taken as they come free, and the step loop's remaining checks (links,
 * loads) as one more chunk alongside: the emission's scattered stores and
 * first touches of fresh pages, and the sort, are most of the check, and
 * split between the cores.
 *
 * It only proves a schedule right: what a right schedule's report holds of
 * it (the duplicates, summed in fixed point: the step loop's sum of
 * multiples of 2^-31 is exact below 2^53 of them, so the same double; the
 * threads' sums are of integers, so the same in any order). On anything
 * else (a bad transfer, a read not held, a second delivery to a target, a
 * target left lacking) it says no and sched_verify checks the schedule
 * again the step loop's way, which reports the first failure as it always
 * did. */
#define A2A_BUCKET_EVENTS (1u << 14) /* a bucket and its scratch in L2 */
#define A2A_CHUNKS	  64	     /* of the check, for two threads to share evenly */
/* By block first; bench/verify_diff also builds the verifier with 0, to
 * check the keying by node and block on its schedules (all fit by block). */
#ifndef A2A_BY_BLOCK
#define A2A_BY_BLOCK 1
#endif

/* x / d by a multiply, m = UINT64_MAX / d + 1 (2 <= d): exact for x and d
 * below 2^32, as the product's error is below x 2^-64 < 1 / d. A divide
 * per event was a fifth of the emission. */
static inline uint64_t div_by(uint64_t x, uint64_t m)
{
	return (uint64_t)(((unsigned __int128)x * m) >> 64);
}

/* Steps t0 .. t1 - 1, counted and emitted by one thread. */
struct a2a_half {
	uint32_t t0, t1;
	size_t *at;   /* per bucket: its events here, then where the next goes */
	uint64_t dup; /* delivered to the origin */
	bool ok;
	struct piece_numbers num;
};

/* What one thread's chunks of the check found. */
struct a2a_worker {
	uint64_t *tmp;	       /* the sort's scratch */
	struct piecemap lists; /* the keys in several pieces at a time */
	uint64_t dup, complete;
	bool ok;
	/* By block: what each node holds of the block at hand, stamped */
	struct piece *held;
	uint32_t *stamp, now;
};

struct a2a_job {
	struct vstate *v;
	bool one;		   /* an event a transfer, keyed by block */
	uint64_t mn, mnb;	   /* x / n and x / nblocks by div_by */
	unsigned shift, xbits, pw; /* bits: the key's low, below the piece, a piece number's */
	unsigned nbits, sbits;	   /* by block: a node's, a step's */
	size_t nb;
	bool count, check; /* the pass counts (else emits); checks the transfers */
	uint64_t *ev;
	size_t *start; /* bucket b's events at [start[b], start[b + 1]) */
	struct a2a_half half[2];
	unsigned nhalves;
	bool numbered;
	size_t most;		      /* events in the largest bucket */
	size_t chunk[A2A_CHUNKS + 1]; /* of buckets */
	unsigned nchunks;
	bool loop; /* the step loop is the check's item 0 */
	int loop_rc;
	struct a2a_worker w[2];
};

/* Half i's events, counted or emitted. */
static void a2a_emit(void *ctx, size_t i, unsigned worker)
{
	struct a2a_job *job = ctx;
	struct a2a_half *h = &job->half[i];
	const struct vstate *v = job->v;
	const struct schedule *s = v->s;
	uint32_t n = v->n, plo = 0, plen = 0;
	uint64_t pno = 0, top = (uint64_t)i << job->pw;
	unsigned shift = job->shift, xbits = job->xbits;
	bool numbered = true;

	(void)worker;
	for (uint32_t t = h->t0; t < h->t1 && h->ok; t++)
		for (int write = 0; write < 2 - job->one && h->ok; write++)
			for (size_t xi = s->step_start[t]; xi < s->step_start[t + 1]; xi++) {
				const struct xfer *x = &s->xfers[xi];

				uint32_t u = write ? x->dst : x->src;
				uint32_t o = (uint32_t)div_by(x->block, job->mn);

				/* What the step loop rejects: left to it. */
				if (job->check &&
				    (x->src >= n || x->dst >= n || x->src == x->dst ||
				     x->block >= v->nblocks || !x->length ||
				     x->offset >= SCHED_ONE ||
				     (uint64_t)x->offset + x->length > SCHED_ONE ||
				     x->block - o * n == o || xfer_op(x) == XFER_REDUCE ||
				     xfer_blocks(x) > 1)) {
					h->ok = false;
					break;
				}
				uint64_t key, w;

				if (job->one) {
					if (x->dst == o && job->check)
						h->dup += x->length;
					key = x->block;
					w = (uint64_t)x->src << job->nbits | x->dst;
					w = w << job->sbits | t;
				} else if (u == o) { /* the origin */
					if (write && job->check)
						h->dup += x->length;
					continue;
				} else {
					key = (uint64_t)u * v->nblocks + x->block;
					w = (uint64_t)xi << 1 | (uint64_t)write;
				}
				size_t b = (size_t)(key >> shift);
				if (job->count) {
					h->at[b]++;
					continue;
				}
				if (numbered) {
					/* runs of one piece: the last's number */
					if (x->offset != plo || x->length != plen) {
						plo = x->offset;
						plen = x->length;
						pno = piece_number(&h->num, plo, plo + plen);
						numbered = h->num.n > 0;
					}
					w |= (top | pno) << xbits;
				}
				if (shift)
					w |= key << (64 - shift);
				job->ev[h->at[b]++] = w;
			}
}

/* By block: what node u holds of the block at hand (none when stale). */
static inline struct piece *a2a_held(struct a2a_worker *wk, uint32_t u)
{
	if (wk->stamp[u] != wk->now) {
		wk->stamp[u] = wk->now;
		wk->held[u] = (struct piece){0};
	}
	return &wk->held[u];
}

/* By block, events e[i .. j) of one block in step order: each step's
 * reads against what the senders held before it, then its writes. */
static void a2a_block(struct a2a_job *job, struct a2a_worker *wk, const uint64_t *e, size_t i,
		      size_t j, uint64_t block)
{
	struct vstate *v = job->v;
	uint32_t n = v->n, o = (uint32_t)div_by(block, job->mn);
	uint32_t target = (uint32_t)(block - (uint64_t)o * n), sb = job->sbits, nb = job->nbits;
	uint64_t smask = (1ull << sb) - 1, nmask = (1ull << nb) - 1, pmask = (1ull << job->pw) - 1;

	if (!wk->held) {
		wk->held = xmalloc(n * sizeof(*wk->held));
		wk->stamp = xcalloc(n, sizeof(*wk->stamp));
	}
	if (++wk->now == 0) { /* wrapped: every stamp stale again */
		memset(wk->stamp, 0, n * sizeof(*wk->stamp));
		wk->now = 1;
	}
	for (size_t k = i, g; wk->ok && k < j; k = g) {
		uint64_t step = e[k] & smask;

		for (g = k + 1; g < j && (e[g] & smask) == step; g++)
			;
		for (int write = 0; write < 2 && wk->ok; write++)
			for (size_t q = k; q < g; q++) {
				uint64_t f = e[q] >> job->xbits;
				const struct piece *p =
				    &job->half[(f >> job->pw) & (job->nhalves - 1)]
					 .num.piece[f & pmask];
				uint32_t u = (uint32_t)((e[q] >> (sb + (write ? 0 : nb))) & nmask);

				if (u == o)
					continue;
				struct piece *held = a2a_held(wk, u);

				/* One piece held, or none, inline: nearly all. */
				if (!write) {
					bool has =
					    held->lo != PIECE_LIST
						? held->lo <= p->lo && p->hi <= held->hi
						: piece_covers(&wk->lists, held, p->lo, p->hi);
					if (!has) {
						wk->ok = false;
						break;
					}
					continue;
				}
				if (held->lo == held->hi) {
					*held = *p;
					continue;
				}
				uint64_t ov = piece_add(&wk->lists, held, p->lo, p->hi);

				if (ov && u == target) {
					wk->ok = false;
					break;
				}
				wk->dup += ov;
			}
	}
	if (wk->ok && required(v, o, target) &&
	    piece_covers(&wk->lists, a2a_held(wk, target), 0, SCHED_ONE))
		wk->complete++;
	/* Lists of this block's pieces: freed, their slots from 0 again. */
	for (size_t k = 0; k < wk->lists.nlists; k++) {
		free(wk->lists.lists[k].v);
		wk->lists.lists[k] = (struct seglist){0};
	}
	wk->lists.nlists = 0;
}

/* One item of the check on the worker's scratch: the step loop (item 0
 * when job->loop), or a chunk of buckets. */
static void a2a_check(void *ctx, size_t item, unsigned worker)
{
	struct a2a_job *job = ctx;
	struct a2a_worker *wk = &job->w[worker];
	struct vstate *v = job->v;
	const struct schedule *s = v->s;
	uint32_t n = v->n;
	uint64_t maxkey = (uint64_t)n * v->nblocks;
	unsigned shift = job->shift, xbits = job->xbits;
	uint64_t xmask = (1ull << xbits) - 1, pmask = (1ull << job->pw) - 1;

	if (job->loop && item == 0) {
		job->loop_rc = run_steps(v);
		return;
	}
	item -= job->loop;
	if (!wk->tmp)
		wk->tmp = xmalloc(job->most * sizeof(*wk->tmp));
	for (size_t b = job->chunk[item]; wk->ok && b < job->chunk[item + 1]; b++) {
		size_t m = job->start[b + 1] - job->start[b];
		const uint64_t *e = sched_sort_top(job->ev + job->start[b], wk->tmp, m, shift);

		for (size_t i = 0, j, ahead = 0; wk->ok && i < m; i = j) {
			uint64_t low = shift ? e[i] >> (64 - shift) : 0;

			for (j = i + 1; j < m && (shift ? e[j] >> (64 - shift) : 0) == low; j++)
				;
			if (job->one) {
				a2a_block(job, wk, e, i, j, (uint64_t)b << shift | low);
				continue;
			}
			/* unnumbered pieces: the transfers some events on, a
			 * cache miss each */
			for (; !job->numbered && ahead < j + 16 && ahead < m; ahead++)
				__builtin_prefetch(&s->xfers[(size_t)(e[ahead] & xmask) >> 1]);
			uint64_t key = (uint64_t)b << shift | low;
			uint32_t node = (uint32_t)(maxkey <= (1ull << 32) ? div_by(key, job->mnb)
									  : key / v->nblocks);
			uint64_t block = key - (uint64_t)node * v->nblocks;
			uint32_t o = (uint32_t)div_by(block, job->mn);
			bool at_target = block - (uint64_t)o * n == node;
			struct piece p = {0};

			for (size_t k = i; k < j; k++) {
				size_t xi = (size_t)(e[k] & xmask) >> 1;
				uint32_t lo, hi;

				if (job->numbered) {
					uint64_t f = e[k] >> xbits;
					const struct piece *q =
					    &job->half[(f >> job->pw) & (job->nhalves - 1)]
						 .num.piece[f & pmask];

					lo = q->lo;
					hi = q->hi;
				} else {
					lo = s->xfers[xi].offset;
					hi = lo + s->xfers[xi].length;
				}
				if (!(e[k] & 1)) {
					if (!piece_covers(&wk->lists, &p, lo, hi))
						wk->ok = false;
				} else {
					uint64_t ov = piece_add(&wk->lists, &p, lo, hi);

					if (ov && at_target)
						wk->ok = false;
					wk->dup += ov;
				}
				if (!wk->ok)
					break;
			}
			if (at_target && required(v, o, node) &&
			    piece_covers(&wk->lists, &p, 0, SCHED_ONE))
				wk->complete++;
			piece_clear(&wk->lists, &p);
			wk->lists.nlists = 0;
		}
	}
}

/* One check by sorting, by block (one) or by node and block: 0 right,
 * -1 not, 1 not by block after all (its bits or piece numbers short). */
/* Two halves, cut at the step nearest the middle transfer, when there are
 * two workers and each half has as many piece numbers as one thread's. */
static void a2a_halves(struct a2a_job *job, const struct schedule *s, unsigned workers,
		       unsigned pbits, size_t nb)
{
	job->nhalves = 1;
	job->half[0].t1 = s->nsteps;
	if (workers > 1 && pbits >= SCHED_PIECE_BITS && s->nsteps > 1) {
		size_t half = s->nxfers / 2;
		uint32_t mid = 1;

		while (mid + 1 < s->nsteps && s->step_start[mid + 1] <= half)
			mid++;
		if (mid + 1 < s->nsteps && s->step_start[mid] <= half &&
		    s->step_start[mid + 1] - half < half - s->step_start[mid])
			mid++;
		job->nhalves = 2;
		job->half[0].t1 = mid;
		job->half[1].t0 = mid;
		job->half[1].t1 = s->nsteps;
	}
	for (unsigned h = 0; h < job->nhalves; h++) {
		job->half[h].ok = true;
		job->half[h].at = xcalloc(nb + 1, sizeof(size_t));
		piece_numbers_init(&job->half[h].num, job->nhalves > 1 ? pbits - 1 : pbits);
	}
	job->pw = (unsigned)__builtin_ctz(job->half[0].num.max);
}

static bool halves_ok(const struct a2a_job *job)
{
	bool ok = true;

	for (unsigned h = 0; h < job->nhalves; h++)
		ok = ok && job->half[h].ok;
	return ok;
}

/* The events, bucketed: counted first (bucket by bucket, each half's
 * stretch in turn), then emitted; one bucket on one thread needs no
 * counting. False when a transfer is wrong. */
static bool a2a_events(struct a2a_job *job, const struct schedule *s, unsigned workers)
{
	size_t nb = job->nb;
	bool counted = nb > 1 || job->nhalves > 1;

	if (counted) {
		job->count = job->check = true;
		parallel_for(job->nhalves, 1, workers, a2a_emit, job);
		if (!halves_ok(job))
			return false;
		size_t at = 0;

		for (size_t b = 0; b < nb; b++) {
			job->start[b] = at;
			for (unsigned h = 0; h < job->nhalves; h++) {
				size_t c = job->half[h].at[b];

				job->half[h].at[b] = at;
				at += c;
			}
		}
		job->start[nb] = at;
		job->ev = xmalloc((at ? at : 1) * sizeof(*job->ev));
	} else {
		job->ev = xmalloc((2 * s->nxfers + 1) * sizeof(*job->ev));
	}
	job->count = false;
	job->check = !counted;
	parallel_for(job->nhalves, 1, workers, a2a_emit, job);
	if (!halves_ok(job))
		return false;
	if (!counted)
		job->start[1] = job->half[0].at[0];
	return true;
}

/* Check the buckets in chunks of about equal events, the step loop
 * alongside (off the caller's thread perhaps: not with a clock, whose
 * progress is the caller's to report). Its step loads go to mine's array,
 * copied to the caller's only when all is right: a wrong schedule's check
 * from the start leaves the steps after its error as they were. */
static bool a2a_buckets(struct a2a_job *job, struct vstate *v, struct verify_opts *mine,
			unsigned workers, uint64_t *dup, uint64_t *complete)
{
	const struct schedule *s = v->s;
	const struct verify_opts *caller = v->o;
	size_t nb = job->nb, total = job->start[nb], b = 0;
	bool ok = true;

	job->most = 1;
	for (b = 0; b < nb; b++)
		if (job->start[b + 1] - job->start[b] > job->most)
			job->most = job->start[b + 1] - job->start[b];
	job->nchunks = workers > 1 ? A2A_CHUNKS : 1;
	b = 0;
	for (unsigned c = 1; c < job->nchunks; c++) {
		while (b < nb && job->start[b] < total / job->nchunks * c)
			b++;
		job->chunk[c] = b;
	}
	job->chunk[job->nchunks] = nb;
	job->loop = workers > 1 && !caller->clock;
	if (job->loop && caller->step_link_load) {
		mine->step_link_load = xcalloc(s->nsteps + 1, sizeof(double));
		v->o = mine;
	}
	for (unsigned w = 0; w < workers; w++)
		job->w[w].ok = true;
	parallel_for(job->loop + job->nchunks, 1, workers, a2a_check, job);
	v->o = caller;
	for (unsigned w = 0; w < workers; w++) {
		ok = ok && job->w[w].ok;
		*dup += job->w[w].dup;
		*complete += job->w[w].complete;
	}
	return ok;
}

static void a2a_job_free(struct a2a_job *job)
{
	for (unsigned w = 0; w < 2; w++) {
		free(job->w[w].tmp);
		free(job->w[w].held);
		free(job->w[w].stamp);
		piecemap_free(&job->w[w].lists);
	}
	for (unsigned h = 0; h < job->nhalves; h++)
		free(job->half[h].at);
	free(job->ev);
	free(job->start);
	free(job);
}

static int a2a_pass(struct vstate *v, bool one)
{
	const struct schedule *s = v->s;
	uint32_t n = v->n;
	uint64_t maxkey = one ? v->nblocks : (uint64_t)n * v->nblocks, dup = 0, complete = 0,
		 parts = n;
	unsigned keybits = 64 - (unsigned)__builtin_clzll(maxkey - 1), bbits = 0;
	unsigned nbits = 64 - (unsigned)__builtin_clzll(n - 1);
	unsigned sbits = s->nsteps > 1 ? 64 - (unsigned)__builtin_clzll(s->nsteps - 1) : 1;
	unsigned threads = check_threads(v->o);
	const struct verify_opts *caller = v->o;
	struct verify_opts mine = *caller; /* the step loop's alongside */

	/* As many buckets as fill L2 on average, and enough that the low
	 * bits fit 32 bits. */
	while (bbits < keybits && (((size_t)(2 - one) * s->nxfers >> bbits) > A2A_BUCKET_EVENTS ||
				   keybits - bbits > 32))
		bbits++;
	unsigned shift = keybits - bbits;
	unsigned xbits = s->nxfers > 1 ? 65 - (unsigned)__builtin_clzll(s->nxfers - 1) : 1;
	if (one)
		xbits = 2 * nbits + sbits; /* src, dst, step */
	if (shift + xbits + (one ? SCHED_PIECE_BITS : 0) > 64)
		return one ? 1 : -1;
	unsigned pbits = 64 - shift - xbits;
	struct a2a_job *job = xcalloc(1, sizeof(*job));
	size_t nb = (size_t)((maxkey - 1) >> shift) + 1;
	bool ok, fallback = false;
	unsigned workers = threads > 1 && s->nxfers >= par_least(v->o) ? 2 : 1;

	/* (field by field: the piece tables make the job 200 KB, too
	 * large for a compound literal on the stack) */
	job->v = v;
	job->one = one;
	job->nbits = nbits;
	job->sbits = sbits;
	job->mn = UINT64_MAX / n + 1;
	job->mnb = UINT64_MAX / v->nblocks + 1;
	job->shift = shift;
	job->xbits = xbits;
	job->nb = nb;
	job->start = xcalloc(nb + 1, sizeof(size_t));
	a2a_halves(job, s, workers, pbits, nb);
	ok = a2a_events(job, s, workers);
	if (ok) {
		job->numbered = true;
		for (unsigned h = 0; h < job->nhalves; h++)
			job->numbered = job->numbered && job->half[h].num.n > 0;
		/* by block only numbered */
		fallback = one && !job->numbered;
	}
	if (ok && !fallback)
		ok = a2a_buckets(job, v, &mine, workers, &dup, &complete);
	for (unsigned h = 0; h < job->nhalves; h++)
		dup += job->half[h].dup;
	if (v->term)
		parts = v->nterm;
	ok = ok && complete == (v->o->block_weight ? v->nrequired : parts * (parts - 1)) &&
	     dup < (1ull << 53);
	if (ok)
		v->r->duplicate_blocks = (double)dup / SCHED_ONE;

	bool looped = job->loop;
	int rc = ok ? 0 : -1;
	if (ok && looped)
		rc = job->loop_rc;
	if (mine.step_link_load != caller->step_link_load) {
		if (rc == 0)
			memcpy(caller->step_link_load, mine.step_link_load,
			       s->nsteps * sizeof(double));
		free(mine.step_link_load);
	}
	a2a_job_free(job);
	if (fallback)
		return 1;
	return ok && !looped ? run_steps(v) : rc;
}

/* The all-to-all's holdings by sorting, then (or alongside) the step
 * loop for the rest. */
static int a2a_sorted(struct vstate *v)
{
	int rc = A2A_BY_BLOCK ? a2a_pass(v, true) : 1;

	return rc > 0 ? a2a_pass(v, false) : rc;
}

static int final_check(struct vstate *v)
{
	uint32_t n = v->n, T = v->s->nsteps, root = v->s->root;

	switch (v->s->collective) {
	case SCHED_BROADCAST:
		for (uint32_t u = 0; u < n; u++)
			if (part(v, u) && !full_copy(v, u, root))
				return fail(
				    v, T, SIZE_MAX,
				    "incomplete: after the last step node %u lacks (part of) "
				    "block %u",
				    u, root);
		break;
	case SCHED_REDUCE:
		if (!full_reduce(v, root, root))
			return fail(v, T, SIZE_MAX,
				    "the root %u does not end with its block reduced over all %u "
				    "inputs, each exactly once",
				    root, v->ninputs);
		break;
	case SCHED_ALLGATHER:
		/* In parts, every entry in memory order first (as allreduce's),
		 * a word of 64 >> gk whole entries at once when all its bits
		 * are set; a node's own block it holds without its bits. */
		if (v->cgrid && !v->term) {
			uint64_t c = 0, all = (uint64_t)n * n, per = 64 >> v->gk;

			while (c < all) {
				if (((c << v->gk) & 63) == 0 && c + per <= all &&
				    v->cgrid[(c << v->gk) >> 6] == ~0ull) {
					c += per;
					continue;
				}
				/* by diagonal, the first; by node, (u, u) */
				if (!((v->rank ? c < n : c / n == c % n) ||
				      parts_held(v, c, 0, SCHED_ONE)))
					break;
				c++;
			}
			if (c == all)
				break;
		}
		for (uint32_t u = 0; u < n; u++)
			for (uint32_t b = 0; b < n; b++) {
				if (!part(v, u) || !part(v, b))
					continue;
				uint64_t key = (uint64_t)u * n + b;

				/* A word of whole blocks at once when it is full. */
				if (v->full && (key & 63) == 0 && b + 64 <= n &&
				    v->full[key >> 6] == ~0ull) {
					b += 63;
					continue;
				}
				if (!full_copy(v, u, b))
					return fail(v, T, SIZE_MAX,
						    "incomplete: after the last step node %u lacks "
						    "(part of) block %u",
						    u, b);
			}
		break;
	case SCHED_ALLTOALL:
		for (uint32_t o = 0; o < n && !v->sorted; o++)
			for (uint32_t t = 0; t < n; t++)
				if (o != t && required(v, o, t) &&
				    !full_copy(v, t, (uint64_t)o * n + t))
					return fail(v, T, SIZE_MAX,
						    "incomplete: the block from %u never (fully) "
						    "reached %u",
						    o, t);
		break;
	case SCHED_REDUCE_SCATTER:
		for (uint32_t u = 0; u < n; u++)
			if (part(v, u) && !full_reduce(v, u, u))
				return fail(
				    v, T, SIZE_MAX,
				    "node %u does not end with shard %u reduced over all %u "
				    "inputs, each exactly once",
				    u, u, v->ninputs);
		break;
	case SCHED_ALLREDUCE:
		/* By diagonal (cell()), every entry in memory order first: by
		 * node, each would be a cache and TLB miss. The order below
		 * finds the one to report when some is not full. */
		if (v->rank && !v->term && first_not_full(v, 0, (uint64_t)n * n) == (uint64_t)n * n)
			break;
		for (uint32_t u = 0; u < n; u++)
			for (uint32_t b = 0; b < n; b++)
				if (part(v, u) && part(v, b) && !full_reduce(v, u, b))
					return fail(
					    v, T, SIZE_MAX,
					    "node %u does not end with shard %u reduced over "
					    "all %u inputs, each exactly once",
					    u, b, v->ninputs);
		break;
	}
	return 0;
}

/* ---- setup ------------------------------------------------------------------- */

static uint32_t *csr_by(uint32_t n, uint32_t m, const uint32_t *key, uint32_t **items)
{
	uint32_t *off = xcalloc((size_t)n + 2, sizeof(uint32_t));

	*items = xmalloc(((size_t)m + 1) * sizeof(uint32_t));
	for (uint32_t i = 0; i < m; i++)
		off[key[i] + 2]++;
	for (uint32_t u = 0; u < n; u++)
		off[u + 2] += off[u + 1];
	for (uint32_t i = 0; i < m; i++)
		(*items)[off[key[i] + 1]++] = i;
	return off;
}

static int setup_network(struct vstate *v)
{
	const struct verify_network *nw = v->o->network;
	uint32_t n = v->n;

	v->net = nw;
	if (nw->nodes != n)
		return fail(v, 0, SIZE_MAX, "the schedule has %u nodes, the network %u", n,
			    nw->nodes);
	if (!(nw->step_time > 0))
		return fail(v, 0, SIZE_MAX, "the network needs a step time > 0");
	for (uint32_t t = 0; nw->step_times && t < v->s->nsteps; t++)
		if (!(nw->step_times[t] > 0))
			return fail(v, t, SIZE_MAX, "step %u: the network needs a step time > 0",
				    t + 1);
	v->term = xcalloc(n + 1, 1);
	for (uint32_t u = 0; u < n; u++)
		if (nw->kind[u] & VERIFY_TERMINAL) {
			if ((nw->kind[u] & (VERIFY_STORE | VERIFY_COPY)) !=
			    (VERIFY_STORE | VERIFY_COPY))
				return fail(v, 0, SIZE_MAX, "terminal %u must store and copy", u);
			v->term[u] = 1;
			v->nterm++;
		}
	if ((v->s->collective == SCHED_BROADCAST || v->s->collective == SCHED_REDUCE) &&
	    !v->term[v->s->root])
		return fail(v, 0, SIZE_MAX, "the root %u is not a terminal", v->s->root);
	v->ninputs = v->nterm;
	for (uint32_t a = 0; a < nw->narcs; a++)
		if (nw->tail[a] >= n || nw->head[a] >= n)
			return fail(v, 0, SIZE_MAX, "network arc %u has an end out of range", a);
	v->out_off = csr_by(n, nw->narcs, nw->tail, &v->out_arc);
	/* arc -> sets */
	uint32_t total = nw->nsets ? nw->set_off[nw->nsets] : 0;
	uint32_t *owner = xmalloc(((size_t)total + 1) * sizeof(uint32_t));
	uint32_t *arcs = xmalloc(((size_t)total + 1) * sizeof(uint32_t));

	for (uint32_t sidx = 0; sidx < nw->nsets; sidx++)
		for (uint32_t j = nw->set_off[sidx]; j < nw->set_off[sidx + 1]; j++) {
			if (nw->set_arc[j] >= nw->narcs) {
				free(owner);
				free(arcs);
				return fail(v, 0, SIZE_MAX, "capacity set %u names no arc", sidx);
			}
			owner[j] = sidx;
			arcs[j] = nw->set_arc[j];
		}
	uint32_t *idx;

	v->aset_off = csr_by(nw->narcs, total, arcs, &idx);
	v->aset = xmalloc(((size_t)total + 1) * sizeof(uint32_t));
	for (uint32_t j = 0; j < total; j++)
		v->aset[j] = owner[idx[j]];
	free(idx);
	free(owner);
	free(arcs);
	v->a_stamp = xcalloc((size_t)nw->narcs + 1, sizeof(uint32_t));
	v->a_count = xcalloc((size_t)nw->narcs + 1, sizeof(uint32_t));
	v->a_load = xcalloc((size_t)nw->narcs + 1, sizeof(uint64_t));
	v->s_stamp = xcalloc((size_t)nw->nsets + 1, sizeof(uint32_t));
	v->s_count = xcalloc((size_t)nw->nsets + 1, sizeof(uint32_t));
	v->s_load = xcalloc((size_t)nw->nsets + 1, sizeof(uint64_t));
	return 0;
}

/* gk: the k of the finest 1/2^k of a block that every transfer's offset
 * and length are multiples of (0: whole blocks only); cut: the transfers
 * of less than a block. */
struct shift_job {
	const struct schedule *s;
	size_t m; /* the first m transfers */
	size_t cut[2];
	uint32_t bits[2];
};

static void shift_half(void *ctx, size_t i, unsigned worker)
{
	struct shift_job *j = ctx;
	size_t lo = i ? j->m / 2 : 0, hi = i ? j->m : j->m / 2, cut = 0;
	uint32_t bits = SCHED_ONE;

	(void)worker;
	for (size_t xi = lo; xi < hi; xi++) {
		cut += j->s->xfers[xi].length != SCHED_ONE;
		bits |= j->s->xfers[xi].offset | j->s->xfers[xi].length;
	}
	j->cut[i] = cut;
	j->bits[i] = bits;
}

/* A scan of every transfer (670 MB for an explicit ring allreduce on
 * 4,096 nodes) before the check can lay out its tables: halves on two
 * threads where the check takes two (threads, from par_least()). */
static uint32_t part_shift(const struct vstate *v, size_t *cut)
{
	const struct schedule *s = v->s;
	struct shift_job j = {.s = s, .m = s->nxfers};
	unsigned threads = v->o->threads;

	/* Reductions: the first step, or 64 K transfers. An all-gather's
	 * parts are scanned whole unless its first sends go round a ring
	 * (v->rank: the ring baselines, a pass over their 335-670 MB on
	 * 4,096 nodes saved): BFB's grow finer after its first steps, and
	 * a restart cost more than the scan (torus:64x64). */
	if (v->guess_parts && (v->reduce || v->rank) && s->nsteps) {
		j.m = s->step_start[1] > (1u << 16) ? s->step_start[1] : 1u << 16;
		j.m = j.m < s->nxfers ? j.m : s->nxfers;
	}
	if (threads != 1 && j.m >= par_least(v->o))
		parallel_for(2, 1, threads, shift_half, &j);
	else
		for (size_t i = 0; i < 2; i++)
			shift_half(&j, i, 0);
	*cut = j.m ? (size_t)((double)(j.cut[0] + j.cut[1]) * (double)s->nxfers / (double)j.m) : 0;
	return 31 - (uint32_t)__builtin_ctz(j.bits[0] | j.bits[1]);
}

/* Reduce mode: whether the grid holds a schedule in 2^gk parts, cut
 * transfers of which cut a shard: most cut, parts of a half (or up to
 * an eighth where the grid is at most 16 M entries). */
static bool grid_fits(const struct vstate *v, size_t cut)
{
	size_t n = v->n;

	return !v->o->network && cut * 4 > v->s->nxfers && v->s->nsteps < RW_MARK &&
	       (v->gk == 1 || (v->gk <= 3 && (n * n << v->gk) <= (1u << 24)));
}

/* Node u's input as its entry of block b. On a network only terminals
 * hold inputs. Mark 0: no step. */
static void put_input(struct vstate *v, uint32_t u, uint32_t b)
{
	uint32_t c = part(v, u) ? 1 : 0;
	uint64_t h = part(v, u) ? v->weight[u] : 0;

	if (v->grid)
		for (uint32_t k = 0; k < 1u << v->gk; k++)
			v->grid[(cell(v, u, b) << v->gk) + k] = (struct rwhole){h << RW_SHIFT};
	else if (v->rw)
		v->rw[cell(v, u, b)] = (struct rwhole){h << RW_SHIFT};
	else
		v->fold.e[cell(v, u, b)] =
		    (struct fold){.cut = SCHED_ONE, .count = {c}, .hash = {h}};
}

/* Reduce mode: the inputs in the entries of diagonals (cell()) or nodes
 * [lo, hi). By diagonal every one is the first again: copied, in memory
 * order. Most of setup's time is the first touch of these pages. */
static void init_inputs(struct vstate *v, uint32_t lo, uint32_t hi)
{
	uint32_t n = v->n;

	for (uint32_t d = lo ? lo : 1; v->rank && d < hi; d++) {
		if (v->grid)
			memcpy(&v->grid[((size_t)d * n) << v->gk], v->grid,
			       (n * sizeof(*v->grid)) << v->gk);
		else if (v->rw)
			memcpy(&v->rw[(size_t)d * n], v->rw, n * sizeof(*v->rw));
		else
			memcpy(&v->fold.e[(size_t)d * n], v->fold.e, n * sizeof(*v->fold.e));
	}
	for (uint32_t u = lo; !v->rank && u < hi; u++)
		for (uint32_t b = 0; b < n; b++)
			put_input(v, u, b);
}

/* v->rank when the first step's first send from each node goes to the
 * next node of one ring through all of them (cell()). */
static void ring_rank(struct vstate *v)
{
	const struct schedule *s = v->s;
	uint32_t n = v->n, u = 0, *succ;

	if (!s->nsteps)
		return;
	succ = xmalloc((size_t)n * sizeof(uint32_t));
	v->rank = xmalloc((size_t)n * sizeof(uint32_t));
	memset(succ, 0xff, (size_t)n * sizeof(uint32_t));
	memset(v->rank, 0xff, (size_t)n * sizeof(uint32_t));
	for (size_t xi = s->step_start[0]; xi < s->step_start[1]; xi++) {
		const struct xfer *x = &s->xfers[xi];

		if (x->src < n && x->dst < n && succ[x->src] == UINT32_MAX)
			succ[x->src] = x->dst;
	}
	uint32_t i = 0;

	for (; i < n && u < n && v->rank[u] == UINT32_MAX; i++) {
		v->rank[u] = i;
		u = succ[u];
	}
	if (i < n || u != 0) { /* no ring through all n: by node */
		free(v->rank);
		v->rank = NULL;
	}
	free(succ);
}

/* Nodes that take part (absent ones do not); the root must. */
static int setup_terminals(struct vstate *v)
{
	const struct schedule *s = v->s;
	uint32_t n = v->n;

	v->term = xcalloc(n + 1, 1);
	for (uint32_t u = 0; u < n; u++)
		if (!v->o->absent[u]) {
			v->term[u] = 1;
			v->nterm++;
		}
	if ((s->collective == SCHED_BROADCAST || s->collective == SCHED_REDUCE) &&
	    !v->term[s->root])
		return fail(v, 0, SIZE_MAX, "the root %u takes no part", s->root);
	v->ninputs = v->nterm;
	return 0;
}

/* An all-to-all's block weights: finite, at most 1e9, and which blocks
 * are required. */
static int setup_weights(struct vstate *v)
{
	const struct schedule *s = v->s;
	uint32_t n = v->n;

	if (s->collective != SCHED_ALLTOALL || v->o->network || v->o->wdm)
		return fail(v, 0, SIZE_MAX,
			    "block weights are for an all-to-all on a direct-connect topology");
	for (uint32_t o = 0; o < n; o++)
		for (uint32_t t = 0; t < n; t++) {
			double w = v->o->block_weight[(uint64_t)o * n + t];

			if (!(w >= 0) || !isfinite(w) || w > 1e9)
				return fail(v, 0, SIZE_MAX, "block %u -> %u weighs %g", o, t, w);
			v->nrequired += o != t && required(v, o, t);
		}
	return 0;
}

/* A reduction's state: the grid, rw by node or the fold table, and every
 * node's input. */
static int setup_reduce(struct vstate *v)
{
	const struct schedule *s = v->s;
	uint32_t n = v->n;

	if ((uint64_t)n * n > (1ull << 24))
		return fail(v, 0, SIZE_MAX,
			    "%u nodes: too large to verify a reduction (limit 4096)", n);
	/* The fold table (two pieces inline) when many transfers cut shards
	 * (a bidirectional ring: all); else 16-byte entries and lists for the
	 * entries cut (BFB: 8% of its transfers). */
	size_t cut;

	v->gk = part_shift(v, &cut);
	/* The grid when it is no larger than the fold table, or small; on
	 * huge pages unless by diagonal (read in order, where the first touch
	 * of fresh 4 KiB pages costs less). A guess of the parts that does not
	 * lead to the grid is no guess: every transfer decides between rw and
	 * the fold table (BFB's first steps cut more shards than its last). */
	bool grid = grid_fits(v, cut);

	/* First transfers that cut no shard (a ring) lead to rw as a scan of
	 * all would, unless later ones cut many: rw then keeps those entries'
	 * pieces in lists, right but slower. A scan of a ring allreduce's 670
	 * MB on 4,096 nodes cost a tenth of its check's instructions. */
	if (v->guess_parts && !grid && cut > 0) {
		v->guess_parts = false;
		v->gk = part_shift(v, &cut);
		grid = grid_fits(v, cut);
	}
	if (!v->o->network) {
		v->read_mark = true;
		ring_rank(v);
	}
	if (grid)
		v->grid = v->rank ? xmalloc(((size_t)n * n << v->gk) * sizeof(*v->grid))
				  : sched_huge_alloc(((size_t)n * n << v->gk) * sizeof(*v->grid));
	else if (!v->o->network && cut * 4 <= s->nxfers && s->nsteps < RW_MARK)
		/* by node on huge pages too: a transfer's two entries are rows
		 * apart, a TLB miss each on 4 KiB pages (torus:64x64 BFB:
		 * 1.75-1.91 s to 1.45-1.51 s) */
		v->rw = v->rank ? xmalloc((size_t)n * n * sizeof(*v->rw))
				: sched_huge_alloc((size_t)n * n * sizeof(*v->rw));
	else
		foldmap_init(&v->fold, (size_t)n * n);
	if (v->grid && v->guess_parts)
		v->pmask = (1u << (31 - v->gk)) - 1;
	v->weight = xmalloc((size_t)n * sizeof(uint64_t));
	for (uint32_t u = 0; u < n; u++) {
		v->weight[u] = sched_mix64((v->o->seed ? v->o->seed : 0x0fc) + u);
		if (part(v, u))
			v->total_weight += v->weight[u];
	}
	/* By diagonal, the first one here (node u's input at u's place), its
	 * copies after; verify_par spreads those (or by node, every row) over
	 * its threads. */
	for (uint32_t u = 0; v->rank && u < n; u++)
		put_input(v, u, u);
	if (v->par == PAR_NONE)
		init_inputs(v, 0, n);
	return 0;
}

/* A copy collective's state (unsorted transfers): the bitmap of who holds
 * what, by part or by node, and the pieces' keys. */
static int setup_copies(struct vstate *v)
{
	const struct schedule *s = v->s;
	uint32_t n = v->n;
	uint64_t bits = (uint64_t)n * v->nblocks;
	bool parts = (s->collective == SCHED_ALLGATHER || s->collective == SCHED_BROADCAST) &&
		     !v->o->network;
	size_t cut;

	/* a ring's parts guessed from its first transfers, as a reduction's
	 * (the grid's pmask, a restart on finer ones) */
	if (parts)
		ring_rank(v);
	v->gk = parts ? part_shift(v, &cut) : 0;
	if (parts && v->gk <= 3 && (bits << v->gk) <= BITMAP_MAX_BITS) {
		v->cgrid = xcalloc((bits << v->gk) / 64 + 1, sizeof(uint64_t));
		if (v->rank && v->guess_parts)
			v->pmask = (1u << (31 - v->gk)) - 1;
	} else if (bits <= BITMAP_MAX_BITS)
		v->full = xcalloc(bits / 64 + 1, sizeof(uint64_t));
	else if (s->collective == SCHED_ALLGATHER)
		return fail(v, 0, SIZE_MAX, "%u nodes: too large to verify", n);
	if (!v->cgrid) { /* the bitmap and pieces are by node */
		free(v->rank);
		v->rank = NULL;
	}
	/* Keys in pieces dense when an allgather's N^2 (node, block) pairs are
	 * the keys: no hashing, no probing, 12 bytes a key touched (calloc's
	 * pages cost only where used). Not the all-to-all's N^3, of which a
	 * schedule touches a sparse few (hashed, they cost only what is held). */
	if (bits <= PIECE_DENSE_MAX_KEYS && s->collective != SCHED_ALLTOALL && !v->cgrid)
		piecemap_dense(&v->map, bits);
	/* All-to-all: hashed within each block's stretch of the table, so a
	 * step, whose transfers go pair by pair, reads and writes it nearly in
	 * order instead of a cache and TLB miss each. Without the bitmap every
	 * delivery may be a key: room for them all, and the table never grows
	 * (the path lowering's hops are nearly all distinct keys, 35.6 M of 47
	 * M on torus:32x32). */
	else if (s->collective == SCHED_ALLTOALL)
		piecemap_blocks(&v->map, v->nblocks, v->full ? 0 : s->nxfers);
	return 0;
}

/* The topology's arcs and capacities, checked against the schedule. */
static int setup_graph(struct vstate *v)
{
	const struct graph *g = v->o->graph;

	if (g->n != v->n)
		return fail(v, 0, SIZE_MAX, "the schedule has %u nodes, the topology %u", v->n,
			    g->n);
	for (uint32_t a = 0; v->o->arc_capacity && a < g->m; a++)
		if (!(v->o->arc_capacity[a] > 0))
			return fail(v, 0, SIZE_MAX, "arc %u has capacity %g", a,
				    v->o->arc_capacity[a]);
	v->arc = xcalloc((size_t)g->m + 1, sizeof(*v->arc));
	for (uint32_t a = 0; a < g->m; a++)
		v->arc[a].head = g->adj[a];
	v->arc_used = xmalloc(((size_t)g->m + 1) * sizeof(uint32_t));
	return 0;
}

/* A WDM ring's channels and the per-node add/drop counters. */
static int setup_wdm(struct vstate *v)
{
	const struct verify_wdm *w = v->o->wdm;
	uint32_t n = v->n;

	if (w->wavelengths == 0 || w->fibres == 0 || w->fibres > 255 || w->wavelengths > 65535)
		return fail(v, 0, SIZE_MAX, "bad WDM ring parameters");
	v->channels = 2 * w->fibres * w->wavelengths;
	size_t cells = (size_t)v->channels * n;

	v->lp_stamp = xcalloc(cells, sizeof(uint32_t));
	v->lp_load = xcalloc(cells, sizeof(uint64_t));
	v->busy_diff = xcalloc((size_t)2 * w->fibres * (n + 1), sizeof(int32_t));
	v->df_seen = xcalloc((size_t)2 * w->fibres, 1);
	v->sadd = xcalloc(n, sizeof(uint32_t));
	v->sdrop = xcalloc(n, sizeof(uint32_t));
	v->add_stamp = xcalloc(n, sizeof(uint32_t));
	v->add_count = xcalloc(n, sizeof(uint32_t));
	v->drop_stamp = xcalloc(n, sizeof(uint32_t));
	v->drop_count = xcalloc(n, sizeof(uint32_t));
	return 0;
}

static int setup(struct vstate *v)
{
	const struct schedule *s = v->s;
	uint32_t n = v->n;

	v->reduce = s->collective == SCHED_REDUCE_SCATTER || s->collective == SCHED_ALLREDUCE ||
		    s->collective == SCHED_REDUCE;
	v->nblocks = s->collective == SCHED_ALLTOALL ? (uint64_t)n * n : n;
	v->ninputs = n;
	if ((s->collective == SCHED_BROADCAST || s->collective == SCHED_REDUCE) && s->root >= n)
		return fail(v, 0, SIZE_MAX, "the root %u is not a node", s->root);
	if (v->o->network && setup_network(v) < 0)
		return -1;
	if (v->o->absent && !v->o->network && setup_terminals(v) < 0)
		return -1;
	if (v->o->block_weight && setup_weights(v) < 0)
		return -1;
	if (v->reduce) {
		if (setup_reduce(v) < 0)
			return -1;
	} else if (!v->sorted && setup_copies(v) < 0) {
		return -1;
	}
	if (v->o->graph && setup_graph(v) < 0)
		return -1;
	if (v->o->wdm && setup_wdm(v) < 0)
		return -1;
	return 0;
}

static void teardown(struct vstate *v)
{
	map_free(&v->rprev);
	map_free(&v->rcur);
	map_free(&v->rheld);
	free(v->rs);
	free(v->rd);
	free(v->term);
	free(v->out_off);
	free(v->out_arc);
	free(v->aset_off);
	free(v->aset);
	free(v->a_stamp);
	free(v->a_count);
	free(v->a_load);
	free(v->s_stamp);
	free(v->s_count);
	free(v->s_load);
	free(v->tarcs);
	piecemap_free(&v->map);
	foldmap_free(&v->fold);
	free(v->rw);
	free(v->grid);
	free(v->cgrid);
	free(v->rank);
	free(v->weight);
	free(v->full);
	free(v->dl);
	free(v->snap);
	free(v->cw);
	free(v->whole);
	free(v->pieces);
	free(v->arc);
	free(v->arc_used);
	free(v->seg_stamp);
	free(v->seg_owner);
	free(v->lp_stamp);
	free(v->lp_load);
	free(v->busy_stamp);
	free(v->busy);
	free(v->add_stamp);
	free(v->add_count);
	free(v->drop_stamp);
	free(v->drop_count);
	free(v->lps);
	free(v->lps_tmp);
	free(v->busy_diff);
	free(v->df_seen);
	free(v->sadd);
	free(v->sdrop);
}

/* What sched_verify's callers get without options. */
static const struct verify_opts no_opts;

/* A report before the check: right until something is found. */
static void report_start(struct verify_report *report, const struct schedule *s)
{
	memset(report, 0, sizeof(*report));
	report->ok = true;
	report->nsteps = s->nsteps;
	report->ntransfers = s->nxfers;
}

/* One check of s, the all-to-all's holdings by sorting when sorted. */
static int verify_run(const struct schedule *s, const struct verify_opts *o,
		      struct verify_report *report, bool sorted)
{
	struct vstate v = {
	    .s = s, .o = o ? o : &no_opts, .r = report, .n = s->nodes, .sorted = sorted};
	int rc = -1;

	report_start(report, s);
	if (s->nodes < 2 || s->nodes > SCHED_MAX_NODES) {
		fail(&v, 0, SIZE_MAX, "%u nodes: a schedule has 2..%u", s->nodes, SCHED_MAX_NODES);
		return -1;
	}
	if (s->collective < SCHED_ALLGATHER || s->collective > SCHED_REDUCE) {
		fail(&v, 0, SIZE_MAX, "unknown collective");
		return -1;
	}
	if (setup(&v) < 0 || (v.sorted ? a2a_sorted(&v) : run_steps(&v)) < 0)
		goto out;
	if (final_check(&v) < 0)
		goto out;
	rc = 0;
out:
	teardown(&v);
	return rc;
}

/* ---- the check on two threads -------------------------------------------------
 * What nodes hold and what the links carry do not depend on each other: in
 * a reduction or an all-gather two threads walk the steps side by side, one
 * checking every transfer, its link and the loads (PAR_CHECKS: read_phase
 * without the data), the other keeping the data (PAR_DATA: of the checks
 * only what keeps its indices in the tables, then the marks and
 * reduce_direct, or in copy mode what each source holds and the copies
 * delivered, par_read_copy). By
 * diagonal or in parts (rings, bidirectional rings, torus-rings) each is
 * about half the step loop; in BFB's table by node the data is most of it
 * (a cache miss per transfer), the checks a fifth. Without a graph to
 * check against there is little to take off the data: one thread. The
 * inputs' first touch (a 4,096-node bidirectional ring's grid is 512 MiB)
 * is spread over both cores first.
 *
 * Like a2a_sorted it only proves a schedule right: what a right schedule's
 * report holds (the loads, each step's as step_loads finds it, summed in
 * step order; the totals from the arcs after) is then exactly the step
 * loop's. On anything else the step loop checks it again for its report,
 * as it always did. A split by block (each thread half the blocks and the
 * arcs of half the nodes) cost each thread three quarters of the step
 * loop: both looked at every transfer. */

struct par_job {
	struct vstate w[2]; /* data, checks */
	struct verify_report r[2];
	atomic_bool stop; /* a thread found something wrong */
	bool ok[2];
	bool split_final; /* the final check's scan after both, in halves */
};

/* An allreduce's final check is first a scan of every entry in memory
 * order (final_check): N^2 of them, 268 MB on 4,096 nodes, once the data
 * thread is done. Both threads scan half of it then; what is not full
 * sends the schedule to the step loop, which reports. */
static bool final_split(const struct vstate *v)
{
	return v->s->collective == SCHED_ALLREDUCE && !v->term;
}

static void par_final(void *ctx, size_t i, unsigned worker)
{
	struct par_job *j = ctx;
	struct vstate *v = &j->w[0];
	uint64_t all = (uint64_t)v->n * v->n, key = i ? all / 2 : 0, end = i ? all : all / 2;

	(void)worker;
	j->ok[i] = first_not_full(v, key, end) == end;
}

/* Whether x is in parts finer than the guessed ones (pmask). */
static inline bool finer_parts(const struct xfer *x, uint32_t pmask)
{
	return (x->offset | x->length) & pmask;
}

/* Whether x's nodes, block and part index the data tables: of the read
 * phase's checks, what the data part needs (and does for the links part,
 * read_checks); the step loop reports. */
static inline bool xfer_in(const struct xfer *x, uint32_t n, uint64_t nblocks, uint16_t odd,
			   uint32_t pmask)
{
	uint16_t rf;

	memcpy(&rf, &x->run, sizeof(rf));
	/* length 0 wraps to the top: length in [1, ONE - offset], offset
	 * then below ONE */
	return x->src < n && x->dst < n && (uint64_t)x->block + xfer_blocks(x) <= nblocks &&
	       (uint64_t)x->offset + (x->length - 1) < SCHED_ONE && !finer_parts(x, pmask) &&
	       (!odd || (x->src != x->dst && !(rf & odd)));
}

static inline bool xfer_indexes(const struct vstate *v, const struct xfer *x)
{
	return xfer_in(x, v->n, v->nblocks, v->alone_odd, v->pmask);
}

/* xfer_in said no to x: in parts finer than guessed, or else. */
static int xfer_no(struct vstate *v, const struct xfer *x)
{
	v->finer = finer_parts(x, v->pmask);
	return -1;
}

/* The data thread's read phase in reduce mode (off networks: read_mark)
 * on the fold table: of the checks only what keeps the indices in the
 * tables. */
static int par_read_data(struct vstate *v, uint32_t t)
{
	const struct schedule *s = v->s;

	v->ndl = 0;
	for (size_t xi = s->step_start[t]; xi < s->step_start[t + 1]; xi++) {
		const struct xfer *x = &s->xfers[xi];

		if (!xfer_indexes(v, x))
			return -1;
		if (v->one_pass)
			continue;
		if (xi + PREFETCH_AHEAD < s->step_start[t + 1])
			prefetch_source(v, x + PREFETCH_AHEAD);
		mark_read(v, t, x);
	}
	return reduce_direct(v, t);
}

/* The data thread's read phase in copy mode (an all-gather off networks):
 * of the checks only what keeps the indices in the tables, then what each
 * source holds and the deliveries, as read_phase's copy part. */
static int par_read_copy(struct vstate *v, uint32_t t)
{
	const struct schedule *s = v->s;

	v->ndl = 0;
	v->nwhole = 0;
	for (size_t xi = s->step_start[t]; xi < s->step_start[t + 1]; xi++) {
		const struct xfer *x = &s->xfers[xi];
		uint32_t lo = x->offset, hi = lo + x->length;

		if (!xfer_indexes(v, x))
			return -1;
		if (xi + PREFETCH_AHEAD < s->step_start[t + 1])
			prefetch_source(v, x + PREFETCH_AHEAD);
		if (xfer_blocks(x) > 1 ? !holds_span(v, x->src, x, lo, hi)
				       : !holds(v, x->src, x->block, lo, hi))
			return -1;
		if (v->cgrid) /* write_phase walks the step again */
			continue;
		push_copy(v, x, xi, (uint64_t)x->dst * v->nblocks + x->block);
	}
	return 0;
}

/* x's delivery from se into de where either is in pieces (an rw entry
 * with a list), at once: verify_par's data thread in one pass. */
static __attribute__((noinline)) void rw_deliver(struct vstate *v, const struct xfer *x,
						 const struct rwhole *se, struct rwhole *de)
{
	struct seg buf;
	uint32_t np, lo = x->offset, hi = lo + x->length;
	const struct seg *p = rw_pieces(v, se, &buf, &np);

	for (uint32_t k = 0; k < np; k++) {
		uint32_t a = p[k].lo > lo ? p[k].lo : lo, b = p[k].hi < hi ? p[k].hi : hi;

		if (b > a)
			rw_apply(v, de, a, b, xfer_op(x) == XFER_REDUCE, 0, p[k].hash);
	}
}

/* A reduction's delivery of x from cell sc to cell dc, in the grid (its
 * parts) or rw, at once, each entry written stamped with mark: false when
 * x reads an entry its step already wrote (that read must see the entry
 * from before the step: the one pass says no). par_reduce_step's and
 * seq_fused's. */
static inline __attribute__((always_inline)) bool
reduce_once(struct vstate *v, const struct xfer *x, struct rwhole *grid, struct rwhole *rw,
	    uint64_t sc, uint64_t dc, uint32_t gk, uint32_t mark)
{
	bool red = xfer_op(x) == XFER_REDUCE;

	if (grid) {
		uint32_t sh = 31 - gk, k = x->offset >> sh;
		uint32_t np = ((x->offset + x->length) >> sh) - k;
		const struct rwhole *se = &grid[(sc << gk) + k];
		struct rwhole *de = &grid[(dc << gk) + k];

		for (; np; np--, se++, de++) {
			if (rw_mark(se) == mark) /* written earlier in the step */
				return false;
			rw_put(de, red, rw_hash(se));
			rw_set_mark(de, mark);
		}
		return true;
	}
	const struct rwhole *se = &rw[sc];
	struct rwhole *de = &rw[dc];

	if (rw_mark(se) == mark)
		return false;
	rw_set_mark(de, mark);
	if (!((se->w | de->w) & RW_LIST) && x->length == SCHED_ONE)
		rw_put(de, red, rw_hash(se));
	else
		rw_deliver(v, x, se, de);
	return true;
}

/* The data thread's step of a reduction in one pass (one_pass) in the
 * grid or rw: reduce_direct's, each entry written stamped with the step
 * and a read of one so stamped a no, with the tables' fields in locals
 * (as par_copy_step's) and the read phase's index checks in the same
 * loop. */
static int par_reduce_step(struct vstate *v, uint32_t t)
{
	const struct schedule *s = v->s;
	const struct xfer *first =
	    s->xfers + (s->step_start[t] > v->from ? s->step_start[t] : v->from);
	const struct xfer *end = s->xfers + s->step_start[t + 1];
	const uint32_t *rank = v->rank;
	struct rwhole *grid = v->grid, *rw = v->rw;
	uint64_t nblocks = v->nblocks;
	uint32_t n = v->n, gk = v->gk, mark = t + 1;
	uint16_t odd = v->alone_odd;
	uint32_t pmask = v->pmask;

	for (const struct xfer *x = first; x < end; x++) {
		if (!xfer_in(x, n, nblocks, odd, pmask))
			return xfer_no(v, x);
		uint64_t sc = cell_in(rank, n, nblocks, x->src, x->block);
		uint64_t dc = cell_in(rank, n, nblocks, x->dst, x->block);

		/* By diagonal the cells go in order: the hardware follows. */
		if (!rank && x + PREFETCH_AHEAD < end) {
			const struct xfer *y = x + PREFETCH_AHEAD;
			uint64_t ys = cell_in(rank, n, nblocks, y->src < n ? y->src : 0,
					      y->block < nblocks ? y->block : 0),
				 yd = cell_in(rank, n, nblocks, y->dst < n ? y->dst : 0,
					      y->block < nblocks ? y->block : 0);

			__builtin_prefetch(grid ? (void *)&grid[ys << gk] : (void *)&rw[ys]);
			__builtin_prefetch(grid ? (void *)&grid[yd << gk] : (void *)&rw[yd], 1);
		}
		if (!reduce_once(v, x, grid, rw, sc, dc, gk, mark)) {
			v->read_written = true;
			return -1;
		}
	}
	return 0;
}

/* The data part's step of a reduction in two passes, in the grid or rw,
 * where one pass would read what the step wrote (latency-optimal Swing
 * and recursive doubling swap whole vectors every step): each source's
 * value first, its parts into the transfer's 2^gk slots of v->snap (16
 * bytes a part), then each delivery from them. No marks, no delivery
 * list (the step loop's two passes, 40 bytes a delivery and a mark a
 * read). An rw entry in pieces, or a part of one, is the step loop's to
 * check: no. Where the data part is alone and the step large, each pass
 * on two threads: the first in halves of the transfers, the
 * second in halves of the receivers, so that no entry is written by
 * both. */
struct snap_job {
	struct vstate *v;
	uint32_t t;
	int rc[2]; /* each half's */
};

/* 0, -1 (no), or -2 (in parts finer than guessed). */
static int snap_read(const struct vstate *v, uint32_t t, size_t lo, size_t hi)
{
	const struct schedule *s = v->s;
	if (lo >= hi) /* (nothing to read; xfers may be NULL: no offset on it) */
		return 0;
	const struct xfer *first = s->xfers + s->step_start[t];
	const uint32_t *rank = v->rank;
	const struct rwhole *grid = v->grid, *rw = v->rw;
	uint64_t nblocks = v->nblocks;
	uint32_t n = v->n, gk = grid ? v->gk : 0, sh = 31 - v->gk;
	uint16_t odd = v->alone_odd;

	/* a transfer's parts, the next transfer's after them (compact: a
	 * transfer of one part in 2^gk touches one slot, and the scratch is
	 * fresh pages), from the half's start lo << gk; a pointer, not an
	 * index (a division by the size of a transfer) */
	struct rwhole *snap = &v->snap[lo << gk];

	for (const struct xfer *x = first + lo; x < first + hi; x++) {
		if (!xfer_in(x, n, nblocks, odd, v->pmask))
			return finer_parts(x, v->pmask) ? -2 : -1;
		uint64_t sc = cell_in(rank, n, nblocks, x->src, x->block);

		if (grid) {
			uint32_t k = x->offset >> sh, np = ((x->offset + x->length) >> sh) - k;
			const struct rwhole *se = &grid[(sc << gk) + k];

			for (uint32_t i = 0; i < np; i++)
				snap[i] = se[i];
			snap += np;
		} else {
			if ((rw[sc].w & RW_LIST) || x->length != SCHED_ONE)
				return -1;
			*snap++ = rw[sc];
		}
	}
	return 0;
}

/* The deliveries of step t to receivers [rlo, rhi): 0, or -1 (no). The
 * step's transfers from mid on were read in a half of their own (from
 * slot mid << gk). */
static int snap_write(struct vstate *v, uint32_t t, uint32_t rlo, uint32_t rhi, size_t mid)
{
	const struct schedule *s = v->s;
	const struct xfer *first = s->xfers + s->step_start[t],
			  *end = s->xfers + s->step_start[t + 1];
	const uint32_t *rank = v->rank;
	struct rwhole *grid = v->grid, *rw = v->rw;
	uint64_t nblocks = v->nblocks;
	uint32_t n = v->n, gk = grid ? v->gk : 0, sh = 31 - v->gk;

	const struct rwhole *snap = v->snap; /* as snap_read's */

	for (const struct xfer *x = first; x < end; x++) {
		uint32_t k = grid ? x->offset >> sh : 0;
		uint32_t np = grid ? ((x->offset + x->length) >> sh) - k : 1;

		if (__builtin_expect(x == first + mid, 0))
			snap = &v->snap[mid << gk];
		if (x->dst < rlo || x->dst >= rhi) {
			snap += np;
			continue;
		}
		uint64_t dc = cell_in(rank, n, nblocks, x->dst, x->block);
		bool red = xfer_op(x) == XFER_REDUCE;
		struct rwhole *de = grid ? &grid[(dc << gk) + k] : &rw[dc];

		if (!grid && (de->w & RW_LIST))
			return -1;
		for (uint32_t i = 0; i < np; i++, snap++)
			rw_put(&de[i], red, rw_hash(snap));
	}
	return 0;
}

static void snap_half_read(void *ctx, size_t i, unsigned worker)
{
	struct snap_job *j = ctx;
	const struct schedule *s = j->v->s;
	size_t m = s->step_start[j->t + 1] - s->step_start[j->t];

	(void)worker;
	j->rc[i] = snap_read(j->v, j->t, i ? m / 2 : 0, i ? m : m / 2);
}

static void snap_half_write(void *ctx, size_t i, unsigned worker)
{
	struct snap_job *j = ctx;
	uint32_t n = j->v->n;
	size_t m = j->v->s->step_start[j->t + 1] - j->v->s->step_start[j->t];

	(void)worker;
	j->rc[i] = snap_write(j->v, j->t, i ? n / 2 : 0, i ? n : n / 2, m / 2);
}

static int par_reduce_snap(struct vstate *v, uint32_t t)
{
	const struct schedule *s = v->s;
	size_t m = s->step_start[t + 1] - s->step_start[t];
	bool two = v->alone_odd && m >= par_least(v->o) && check_threads(v->o) > 1;
	struct snap_job j = {.v = v, .t = t};

	GROW(v->snap, v->cap_snap, m << (v->grid ? v->gk : 0));
	if (two)
		parallel_for(2, 1, 2, snap_half_read, &j);
	else
		j.rc[0] = j.rc[1] = snap_read(v, t, 0, m);
	if (j.rc[0] < 0 || j.rc[1] < 0) {
		v->finer = j.rc[0] == -2 || j.rc[1] == -2;
		return -1;
	}
	if (!two)
		return snap_write(v, t, 0, v->n, m);
	parallel_for(2, 1, 2, snap_half_write, &j);
	return j.rc[0] < 0 || j.rc[1] < 0 ? -1 : 0;
}

/* The data thread's step of an all-gather in parts (cgrid), its read and
 * write phases: what each source holds, as par_read_copy does, with the
 * tables' fields in locals (their reloads were half the thread's
 * instructions), then the deliveries (cgrid_write). */
static int par_copy_step(struct vstate *v, uint32_t t)
{
	const struct schedule *s = v->s;
	const struct xfer *first =
	    s->xfers + (s->step_start[t] > v->from ? s->step_start[t] : v->from);
	const struct xfer *end = s->xfers + s->step_start[t + 1];
	const uint32_t *rank = v->rank;
	uint64_t *cgrid = v->cgrid, nblocks = v->nblocks, mask, *w;
	uint32_t n = v->n, gk = v->gk;
	uint16_t odd = v->alone_odd;
	uint32_t pmask = v->pmask;

	for (const struct xfer *x = first; x < end; x++) {
		uint32_t lo = x->offset, hi = lo + x->length;

		if (!xfer_in(x, n, nblocks, odd, pmask))
			return xfer_no(v, x);
		if (xfer_blocks(x) > 1) {
			if (!holds_span(v, x->src, x, lo, hi))
				return -1;
			continue;
		}
		if (x->block == x->src)
			continue;
		w = part_bits(cgrid, gk, cell_in(rank, n, nblocks, x->src, x->block), lo, hi,
			      &mask);
		if ((*w & mask) != mask)
			return -1;
	}
	cgrid_write(v, t); /* as write_phase */
	return 0;
}

/* Step t of one part, the data's or the links': whether it passed. */
static bool par_step(struct vstate *v, uint32_t t)
{
	bool ok;

	if (v->par == PAR_DATA && v->cgrid)
		return par_copy_step(v, t) == 0;
	if (v->par == PAR_DATA && v->read_mark && (v->grid || v->rw))
		return (v->one_pass ? par_reduce_step(v, t) : par_reduce_snap(v, t)) == 0;
	if (v->par == PAR_DATA)
		ok = (v->reduce ? par_read_data(v, t) : par_read_copy(v, t)) == 0;
	else
		ok = read_phase(v, t) == 0;
	ok = ok && write_phase(v, t) == 0;
	if (ok && v->par == PAR_CHECKS && v->o->graph)
		step_loads(v, t);
	return ok;
}

static void par_run(void *ctx, size_t i, unsigned worker)
{
	struct par_job *j = ctx;
	struct vstate *v = &j->w[i];
	uint32_t T = v->s->nsteps;
	bool ok = true;

	for (uint32_t t = 0; t < T && ok; t++) {
		if (atomic_load_explicit(&j->stop, memory_order_relaxed) ||
		    clock_expired(v->o->clock)) {
			ok = false;
			break;
		}
		if (worker == 0) /* the caller's thread */
			clock_progress(v->o->clock, NULL, (double)t / T);
		ok = par_step(v, t);
	}
	ok = ok && (v->par == PAR_CHECKS || j->split_final || final_check(v) == 0);
	if (!ok)
		atomic_store(&j->stop, true);
	j->ok[i] = ok;
}

/* Whether par_seq takes both parts of a step in one loop (seq_fused):
 * a graph, every node taking part (read_checks), and a data part in the
 * grid or rw in one pass, or an all-gather in parts. */
static bool seq_fuses(const struct vstate *d)
{
	return d->o->graph && !d->term &&
	       (d->cgrid || (d->one_pass && d->read_mark && (d->grid || d->rw)));
}

/* par_seq's step t up to its first transfer that is not plain, both parts
 * in one loop: read_checks' checks and load (links, c) and
 * par_reduce_step's delivery or par_copy_step's read (data, d), the
 * transfer's fields and range checks read once (one loop over a step of
 * a ring had cost a third more instructions than generating it; two, as
 * many again). The index of the first transfer not done: the two parts
 * go on from it each its own way (c->from, d->from), which also says
 * what is wrong; SIZE_MAX where the data part says no (read_written, as
 * par_reduce_step). An all-gather's writes stay after every read of the
 * step: each transfer's word and bits kept (d->cw, 16 bytes a transfer
 * of the step) for seq_writes, a transfer that is not plain and those
 * after it cgrid_write's (from d->from); cgrid_write walking the step
 * again cost half as many instructions as the fused loop. */
static size_t seq_fused(struct vstate *c, struct vstate *d, uint32_t t)
{
	const struct schedule *s = d->s;
	const struct xfer *first = s->xfers + s->step_start[t],
			  *end = s->xfers + s->step_start[t + 1];
	const struct xfer *x = first;
	const uint32_t *off = c->o->graph->off, *rank = d->rank;
	struct arcload *arc = c->arc;
	uint32_t *used = c->arc_used;
	size_t nused = c->narc_used;
	struct rwhole *grid = d->grid, *rw = d->rw;
	uint64_t *cgrid = d->cgrid, nblocks = d->nblocks, mask, *w;
	uint32_t n = d->n, gk = d->gk, mark = t + 1, pmask = d->pmask;
	bool ahead = (size_t)c->o->graph->m * sizeof(*arc) > (1u << 20);
	/* the data's entries by node: fetched ahead (by diagonal they are
	 * in order) */
	bool near = !rank && !cgrid;
	/* read_checks' odd: a run, a span, or a reduction in copy mode */
	uint16_t odd = (uint16_t)(0xffu | (d->reduce ? 0xf8u : 0xfcu) << 8);
	struct cwrite *cw;

	if (cgrid)
		GROW(d->cw, d->cap_cw, (size_t)(end - first));
	cw = d->cw;
	for (; x < end; x++) {
		uint32_t src = x->src, dst = x->dst, a;
		uint16_t rf;

		if (ahead && x + PREFETCH_AHEAD < end) {
			const struct xfer *y = x + PREFETCH_AHEAD;

			__builtin_prefetch(&arc[off[y->src < n ? y->src : 0] + y->lane], 1);
		}
		if (near && x + PREFETCH_AHEAD < end) { /* as par_reduce_step */
			const struct xfer *y = x + PREFETCH_AHEAD;
			uint32_t ys = y->src < n ? y->src : 0, yd = y->dst < n ? y->dst : 0;
			uint64_t yb = y->block < nblocks ? y->block : 0;
			uint64_t sc = cell_in(rank, n, nblocks, ys, yb),
				 dc = cell_in(rank, n, nblocks, yd, yb);

			__builtin_prefetch(grid ? (void *)&grid[sc << gk] : (void *)&rw[sc]);
			__builtin_prefetch(grid ? (void *)&grid[dc << gk] : (void *)&rw[dc], 1);
		}
		memcpy(&rf, &x->run, sizeof(rf));
		/* the links part's (the arc's head is a node: dst < n), then
		 * the data part's ranges (no span: block < nblocks) */
		if (src >= n || src == dst || (rf & odd) || x->lane >= off[src + 1] - off[src] ||
		    arc[a = off[src] + x->lane].head != dst || x->block >= nblocks ||
		    (uint64_t)x->offset + (x->length - 1) >= SCHED_ONE || finer_parts(x, pmask))
			break;
		if (cgrid) {		     /* par_copy_step's read, cgrid_write's word */
			if (x->block == dst) /* a duplicate of its own: cgrid_write's */
				break;
			if (x->block != src) {
				w = part_bits(cgrid, gk, cell_in(rank, n, nblocks, src, x->block),
					      x->offset, x->offset + x->length, &mask);
				if ((*w & mask) != mask)
					break;
			}
			w = part_bits(cgrid, gk, cell_in(rank, n, nblocks, dst, x->block),
				      x->offset, x->offset + x->length, &mask);
			*cw++ = (struct cwrite){w, mask}; /* cw[x - first] */
		}
		if (arc[a].stamp != mark) { /* load_arc, its fields in locals */
			arc[a].stamp = mark;
			arc[a].load = 0;
			used[nused++] = a;
		}
		arc[a].load += x->length;
		arc[a].total += x->length;
		if (cgrid)
			continue;
		/* par_reduce_step's delivery (reduce_once) */
		uint64_t sc = cell_in(rank, n, nblocks, src, x->block);
		uint64_t dc = cell_in(rank, n, nblocks, dst, x->block);

		if (!reduce_once(d, x, grid, rw, sc, dc, gk, mark)) {
			d->read_written = true;
			c->narc_used = nused;
			return SIZE_MAX;
		}
	}
	c->narc_used = nused;
	d->ncw = cgrid ? (size_t)(cw - d->cw) : 0;
	return (size_t)(x - s->xfers);
}

/* seq_fused's all-gather writes, after the step's reads: cgrid_write's
 * for the transfers it did, their words found already. The duplicates,
 * whole parts, are exact in any order. */
static void seq_writes(struct vstate *d)
{
	uint64_t dup = 0;

	for (size_t i = 0; i < d->ncw; i++) {
		uint64_t *w = d->cw[i].w, mask = d->cw[i].mask;

		if (__builtin_expect((*w & mask) != 0, 0))
			dup += (uint64_t)__builtin_popcountll(*w & mask);
		*w |= mask;
	}
	d->r->duplicate_blocks += (double)dup / (double)(1u << d->gk);
	d->ncw = 0;
}

/* Both parts on this thread, step by step: in one loop (seq_fused) up to
 * the step's first transfer that is not plain, then from it the links',
 * then the data's while the step's transfers are in cache (one read of
 * the schedule from memory, not two passes' worth). */
static void par_seq(struct par_job *j)
{
	struct vstate *d = &j->w[0], *c = &j->w[1];
	uint32_t T = d->s->nsteps;
	bool fuse = seq_fuses(d), ok = true;

	for (uint32_t t = 0; t < T && ok; t++) {
		if (clock_expired(d->o->clock)) {
			ok = false;
			break;
		}
		clock_progress(d->o->clock, NULL, (double)t / T);
		if (fuse && (c->from = d->from = seq_fused(c, d, t)) == SIZE_MAX)
			ok = false;
		ok = ok && par_step(c, t) && par_step(d, t);
		if (ok && fuse && d->cgrid)
			seq_writes(d);
	}
	c->from = d->from = 0;
	j->ok[1] = ok;
	j->ok[0] = ok && (j->split_final || final_check(d) == 0);
}

/* Half the inputs each (init_inputs): the first touch of the pages on
 * both cores, the whole pages of the half populated first in one call
 * (the kernel's faults in a batch cost half a touch of each page). */
static void par_inputs(void *ctx, size_t i, unsigned worker)
{
	struct vstate *v = ctx;
	uint32_t lo = i ? v->n / 2 : 0, hi = i ? v->n : v->n / 2;
	size_t entry = v->grid ? sizeof(*v->grid) << v->gk
		       : v->rw ? sizeof(*v->rw)
			       : sizeof(*v->fold.e);
	uintptr_t base = v->grid ? (uintptr_t)v->grid
			 : v->rw ? (uintptr_t)v->rw
				 : (uintptr_t)v->fold.e;
	uintptr_t page = 4096, a = base + (size_t)lo * v->n * entry,
		  b = base + (size_t)hi * v->n * entry;

	(void)worker;
	a = (a + page - 1) & ~(page - 1);
	b &= ~(page - 1);
#ifdef MADV_POPULATE_WRITE
	if (b > a) /* an older kernel says EINVAL: then touched as before */
		(void)madvise((void *)a, b - a, MADV_POPULATE_WRITE);
#endif
	init_inputs(v, lo, hi);
}

/* Whether a transfer of step t reads a part of a block at a node where
 * one before it in the step wrote that part, by a bitmap of (node, block,
 * part) where that is at most 32 MiB (else false). Parts are the step's
 * finest of 1/2, 1/4 or 1/8 (finer, or none finer than the block: whole
 * blocks): where the data part's one pass would say no, in the grid's
 * parts; or it finds out itself. Latency-optimal Swing and recursive
 * doubling swap whole vectors every step, bandwidth-optimal Swing halves
 * of them. */
static bool step_reads_written(const struct schedule *s, uint32_t t)
{
	uint64_t n = s->nodes, bits, *w;
	uint32_t low = SCHED_ONE, gk, sh;
	bool hit = false;

	if (t >= s->nsteps)
		return false;
	for (size_t xi = s->step_start[t]; xi < s->step_start[t + 1]; xi++)
		low |= s->xfers[xi].offset | s->xfers[xi].length;
	gk = 31 - (uint32_t)__builtin_ctz(low);
	gk = gk > 3 ? 0 : gk;
	sh = 31 - gk;
	bits = (n * n) << gk;
	if (bits > (1ull << 28))
		return false;
	w = xcalloc(bits / 64 + 1, sizeof(*w));
	for (size_t xi = s->step_start[t]; xi < s->step_start[t + 1] && !hit; xi++) {
		const struct xfer *x = &s->xfers[xi];
		uint32_t k0 = gk ? x->offset >> sh : 0, k1 = gk ? (x->offset + x->length) >> sh : 1;

		if (x->src >= n || x->dst >= n || x->block >= n || x->offset >= SCHED_ONE ||
		    x->length - 1 >= SCHED_ONE - x->offset)
			break; /* the check says what */
		for (uint32_t k = k0; k < k1 && !hit; k++) {
			uint64_t r = (((uint64_t)x->src * n + x->block) << gk) + k;

			hit = (w[r >> 6] >> (r & 63)) & 1;
		}
		for (uint32_t k = k0; k < k1; k++) {
			uint64_t d = (((uint64_t)x->dst * n + x->block) << gk) + k;

			w[d >> 6] |= 1ull << (d & 63);
		}
	}
	free(w);
	return hit;
}

/* Whether sched_verify checks s in two parts (verify_par): a reduction
 * or an all-gather, off networks and WDM rings. Without a graph (Swing,
 * routed peers) the links part has only the ranges to check, but the data
 * part's steps are still the faster. */
static bool par_fits(const struct schedule *s, const struct verify_opts *o)
{
	bool reduce = s->collective == SCHED_REDUCE_SCATTER || s->collective == SCHED_ALLREDUCE;

	o = o ? o : &no_opts;
	return !o->step_loop && !o->network && !o->wdm && s->nxfers >= par_least(o) &&
	       s->nodes >= 2 && s->nodes <= SCHED_MAX_NODES &&
	       (reduce || s->collective == SCHED_ALLGATHER);
}

/* s checked as sched_verify does, on two threads. */
static int verify_par(const struct schedule *s, const struct verify_opts *o,
		      struct verify_report *report, bool one_pass, bool guess_parts)
{
	struct vstate v = {.s = s, .o = o ? o : &no_opts, .r = report, .n = s->nodes};
	struct par_job *j = xcalloc(1, sizeof(*j));
	struct vstate *c = &j->w[1];
	bool again = false;
	int rc = -1;

	report_start(report, s);
	v.par = PAR_DATA; /* setup leaves the inputs to par_inputs */
	v.guess_parts = guess_parts;
	if (setup(&v) < 0)
		goto out;
	if (v.reduce)
		parallel_for(2, 1, v.o->threads, par_inputs, &v);
	atomic_init(&j->stop, false);
	for (int i = 0; i < 2; i++) {
		j->w[i] = v;
		j->w[i].r = &j->r[i];
		j->r[i] = *report;
	}
	j->w[0].par = PAR_DATA;
	/* one pass a step unless the first step says no already */
	j->w[0].one_pass = one_pass && v.reduce && v.read_mark && !step_reads_written(s, 0);
	/* The checks thread's own scratch; the arcs are its alone. */
	c->par = PAR_CHECKS;
	c->dl = NULL;
	c->cap_dl = 0;
	c->pieces = NULL;
	c->cap_pieces = 0;
	c->whole = NULL;
	c->cap_whole = 0;
	c->arc_used = v.o->graph ? xmalloc(((size_t)v.o->graph->m + 1) * sizeof(uint32_t)) : NULL;
	c->par_load = xcalloc((size_t)s->nsteps + 1, sizeof(double));
	j->split_final = final_split(&v);
	/* Without a graph the links part has no links: the data part checks
	 * the rest alone (a second pass over the schedule for that was as
	 * long as the data's own where steps are larger than the cache). */
	if (!v.o->graph && !v.term) {
		j->w[0].alone_odd = (uint16_t)(0xffu | (v.reduce ? 0xf8u : 0x04u) << 8);
		j->ok[1] = true;
		par_run(j, 0, 0);
	} else if (check_threads(v.o) == 1) {
		par_seq(j);
	} else {
		parallel_for(2, 1, v.o->threads, par_run, j);
	}
	if (j->ok[0] && j->ok[1] && j->split_final)
		parallel_for(2, 1, v.o->threads, par_final, j);
	if (j->ok[0] && j->ok[1]) {
		for (uint32_t t = 0; t < s->nsteps; t++) {
			double load = c->par_load[t];

			if (v.o->step_link_load)
				v.o->step_link_load[t] = load;
			report->sum_max_link_load += load;
			if (load > report->max_link_load)
				report->max_link_load = load;
		}
		/* an all-gather's copies held already: the data thread's */
		report->duplicate_blocks = j->r[0].duplicate_blocks;
		report->split = true;
		if (v.o->graph)
			total_loads(&v);
		rc = 0;
	} else {
		again = true;
	}
	free(c->arc_used);
	free(c->par_load);
	v = j->w[0]; /* the data thread's state, grown */
out:
	teardown(&v);
	free(j);
	/* A step that reads what it writes is no error: two passes a step
	 * then, still in two parts. */
	if (again && v.read_written)
		return verify_par(s, o, report, false, guess_parts);
	if (again && v.finer) /* parts finer than the first transfers' */
		return verify_par(s, o, report, one_pass, false);
	return again ? verify_run(s, o, report, false) : rc;
}

/* An all-to-all off networks is checked by sorting first (a2a_sorted),
 * which proves a right schedule right; anything else, or a schedule it
 * does not, the step loop's way, for its report. */
int sched_verify(const struct schedule *s, const struct verify_opts *o,
		 struct verify_report *report)
{
	if (s->collective == SCHED_ALLTOALL && !(o && o->network) &&
	    verify_run(s, o, report, true) == 0)
		return 0;
	if (par_fits(s, o))
		return verify_par(s, o, report, true, true);
	return verify_run(s, o, report, false);
}
