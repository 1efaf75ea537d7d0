/* The verifier's state laid out before the first step (the checks each
 * collective and option asks for, and the tables that suit the schedule:
 * a reduction's grid, rw or fold table, by diagonal or by node; a copy's
 * parts, bitmap or pieces), and freed after the check. */
#include "sched/verify_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* gk: the k of the finest 1/2^k of a block that every transfer's offset
 * and length are multiples of (0: whole blocks only); cut: the transfers
 * of less than a block. In parts, each its own counts (integers, an OR):
 * the same on any number. */
#define SHIFT_MAX_PARTS 64
struct shift_job {
	const struct schedule *s;
	size_t m; /* the first m transfers */
	unsigned np;
	size_t cut[SHIFT_MAX_PARTS];
	uint32_t bits[SHIFT_MAX_PARTS];
};

static void shift_part(void *ctx, size_t i, unsigned worker)
{
	struct shift_job *j = ctx;
	size_t lo = j->m * i / j->np, hi = j->m * (i + 1) / j->np, cut = 0;
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
 * 4,096 nodes) before the check can lay out its tables: in a part a
 * thread the check may use, each of par_least() / 2 transfers or more. */
static uint32_t part_shift(const struct vstate *v, size_t *cut)
{
	const struct schedule *s = v->s;
	struct shift_job j = {.s = s, .m = s->nxfers, .np = 1};
	unsigned threads = check_threads(v->o);
	size_t each = par_least(v->o) / 2 ? par_least(v->o) / 2 : 1, sum = 0;
	uint32_t bits = 0;

	/* Reductions: the first step, or 64 K transfers. An all-gather's
	 * parts are scanned whole unless its first sends go round a ring
	 * (v->rank: the ring baselines, a pass over their 335-670 MB on
	 * 4,096 nodes saved): BFB's grow finer after its first steps, and
	 * a restart cost more than the scan (torus:64x64). */
	if (v->guess_parts && (v->reduce || v->rank) && s->nsteps) {
		j.m = s->step_start[1] > (1u << 16) ? s->step_start[1] : 1u << 16;
		j.m = j.m < s->nxfers ? j.m : s->nxfers;
	}
	if (threads > 1 && j.m >= par_least(v->o)) {
		j.np = threads < SHIFT_MAX_PARTS ? threads : SHIFT_MAX_PARTS;
		if (j.np > j.m / each)
			j.np = (unsigned)(j.m / each);
	}
	parallel_for(j.np, 1, v->o->threads, shift_part, &j);
	for (unsigned i = 0; i < j.np; i++) {
		sum += j.cut[i];
		bits |= j.bits[i];
	}
	*cut = j.m ? (size_t)((double)sum * (double)s->nxfers / (double)j.m) : 0;
	return 31 - (uint32_t)__builtin_ctz(bits);
}

/* Reduce mode: whether the grid holds a schedule in 2^gk parts, cut
 * transfers of which cut a shard: most cut, parts of a half (or up to
 * an eighth where the grid is at most 16 M entries). */
static bool grid_fits(const struct vstate *v, size_t cut)
{
	size_t entries = (size_t)v->n * v->nblocks;

	return !v->o->network && cut * 4 > v->s->nxfers && v->s->nsteps < RW_MARK &&
	       (v->gk == 1 || (v->gk <= 3 && (entries << v->gk) <= (1u << 24)));
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

/* A reduce on a network: its fold table by node (no ring), of which a
 * check reads the root's block alone (block_ok stops a transfer of any
 * other before it reads its entries), so only those are set. */
static bool root_only(const struct vstate *v)
{
	return v->o->network && v->s->collective == SCHED_REDUCE;
}

/* Reduce mode: the inputs in the entries of diagonals (cell()) or nodes
 * [lo, hi). By diagonal every one is the first again: copied, in memory
 * order. Most of setup's time is the first touch of these pages. */
void verify_init_inputs(struct vstate *v, uint32_t lo, uint32_t hi)
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
		if (root_only(v))
			put_input(v, u, v->s->root);
		else
			for (uint32_t b = 0; b < v->nblocks; b++)
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
		return verify_fail(v, 0, SIZE_MAX, "the root %u takes no part", s->root);
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
		return verify_fail(
		    v, 0, SIZE_MAX,
		    "block weights are for an all-to-all on a direct-connect topology");
	for (uint32_t o = 0; o < n; o++)
		for (uint32_t t = 0; t < n; t++) {
			double w = v->o->block_weight[(uint64_t)o * n + t];

			if (!(w >= 0) || !isfinite(w) || w > 1e9)
				return verify_fail(v, 0, SIZE_MAX, "block %u -> %u weighs %g", o, t,
						   w);
			v->nrequired += o != t && required(v, o, t);
		}
	return 0;
}

/* A reduction's state: the grid, rw by node or the fold table, and every
 * node's input; in a chunk (v->win) its shards alone, by node. */
static int setup_reduce(struct vstate *v)
{
	const struct schedule *s = v->s;
	uint32_t n = v->n;
	uint64_t limit = v->o->reduce_bytes ? v->o->reduce_bytes : VERIFY_REDUCE_BYTES;
	size_t entries = (size_t)n * v->nblocks;

	/* (sched_verify checks larger ones in chunks: off networks and WDM
	 * rings, and a window past the limit is verify_chunk's own miss) */
	if ((uint64_t)entries * VERIFY_ENTRY_BYTES > limit && !v->win)
		return verify_fail(v, 0, SIZE_MAX,
				   "%u nodes: too large to verify a reduction on a %s (%u nodes at "
				   "most)",
				   n, v->o->network ? "network" : "WDM ring",
				   (uint32_t)sqrt((double)limit / VERIFY_ENTRY_BYTES));
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
		if (!v->win) /* a chunk's shards are not the ring's diagonals */
			ring_rank(v);
	}
	if (grid)
		v->grid = v->rank ? xmalloc((entries << v->gk) * sizeof(*v->grid))
				  : sched_huge_alloc((entries << v->gk) * sizeof(*v->grid));
	else if (!v->o->network && cut * 4 <= s->nxfers && s->nsteps < RW_MARK)
		/* by node on huge pages too: a transfer's two entries are rows
		 * apart, a TLB miss each on 4 KiB pages (torus:64x64 BFB:
		 * 1.75-1.91 s to 1.45-1.51 s) */
		v->rw = v->rank ? xmalloc(entries * sizeof(*v->rw))
				: sched_huge_alloc(entries * sizeof(*v->rw));
	else
		foldmap_init(&v->fold, entries);
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
		verify_init_inputs(v, 0, n);
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
		return verify_fail(v, 0, SIZE_MAX, "%u nodes: too large to verify", n);
	if (!v->cgrid) { /* the bitmap and pieces are by node */
		free(v->rank);
		v->rank = NULL;
	}
	/* Keys in pieces dense when an allgather's N^2 (node, block) pairs are
	 * the keys: no hashing, no probing, 12 bytes a key touched (calloc's
	 * pages cost only where used). Not the all-to-all's N^3, of which a
	 * schedule touches a sparse few (hashed, they cost only what is held). */
	if (s->collective == SCHED_BROADCAST && !v->cgrid)
		/* A broadcast's keys are its one block's, a key a node: hashed
		 * in room for n (16 KB at 712 vertices) where the dense n x n would
		 * be 4 MB mapped, a page touched a node and unmapped, for each
		 * of the fluid period's 256 roots (a check of ~2,000 transfers:
		 * page faults, and TLB shootdowns when it runs beside others). */
		piecemap_hashed(&v->map, n);
	else if (bits <= PIECE_DENSE_MAX_KEYS && s->collective != SCHED_ALLTOALL && !v->cgrid)
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
		return verify_fail(v, 0, SIZE_MAX, "the schedule has %u nodes, the topology %u",
				   v->n, g->n);
	for (uint32_t a = 0; v->o->arc_capacity && a < g->m; a++)
		if (!(v->o->arc_capacity[a] > 0))
			return verify_fail(v, 0, SIZE_MAX, "arc %u has capacity %g", a,
					   v->o->arc_capacity[a]);
	v->arc = xcalloc((size_t)g->m + 1, sizeof(*v->arc));
	for (uint32_t a = 0; a < g->m; a++)
		v->arc[a].head = g->adj[a];
	v->arc_used = xmalloc(((size_t)g->m + 1) * sizeof(uint32_t));
	return 0;
}

int verify_setup(struct vstate *v)
{
	const struct schedule *s = v->s;
	uint32_t n = v->n;

	v->reduce = s->collective == SCHED_REDUCE_SCATTER || s->collective == SCHED_ALLREDUCE ||
		    s->collective == SCHED_REDUCE;
	v->nblocks = s->collective == SCHED_ALLTOALL ? (uint64_t)n * n
		     : v->win			     ? v->win->nblocks
						     : n;
	v->ninputs = n;
	if ((s->collective == SCHED_BROADCAST || s->collective == SCHED_REDUCE) && s->root >= n)
		return verify_fail(v, 0, SIZE_MAX, "the root %u is not a node", s->root);
	if (v->o->network && verify_setup_network(v) < 0)
		return -1;
	if (v->o->absent && !v->o->network && setup_terminals(v) < 0)
		return -1;
	if (v->o->block_weight && setup_weights(v) < 0)
		return -1;
	if (v->reduce && !v->links_only) {
		if (setup_reduce(v) < 0)
			return -1;
	} else if (!v->sorted && setup_copies(v) < 0) {
		return -1;
	}
	if (v->o->graph && setup_graph(v) < 0)
		return -1;
	if (v->o->wdm && verify_setup_wdm(v) < 0)
		return -1;
	return 0;
}

void verify_teardown(struct vstate *v)
{
	verify_map_free(&v->rprev);
	verify_map_free(&v->rcur);
	verify_map_free(&v->rheld);
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
