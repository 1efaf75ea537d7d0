/* BFB on a degraded Cayley graph as the healthy reduced schedule plus a
 * patch (sched.h, struct sched_patch): what the failures change, found
 * here (the distances they change: patch_raise.c), and planned again
 * block by block (patch_blocks.c).
 *
 * Node u's BFB problems (u, t) read only its in-links and the distances
 * to u and to its in-neighbours (Zhao et al., LP (3)). A failed arc
 * changes the distances to a node x only when every shortest path to it
 * from some source crossed a failed arc; every other node's problems are
 * those of the healthy graph, whose solution (the healthy program,
 * translated) is then a solution of the degraded problem, the same U* a
 * step. So the patch is the blocks of the nodes the failures reach: a
 * block whose distance to the node, or to one of its in-neighbours,
 * changed, or whose healthy pieces crossed a failed in-link. */
#include "bfb/patch_internal.h"

#include <stdlib.h>
#include <string.h>

/* Each arc of g without gone[] (topo_without_arcs' numbering, each node's
 * arcs in g's order): its port in g, the sender's ordinal among g's arcs,
 * which the patch's transfers name. */
static uint16_t *healthy_lanes(const struct graph *g, const bool *gone)
{
	uint16_t *lane = xmalloc(((size_t)g->m + 1) * sizeof(uint16_t));
	uint32_t m = 0;

	for (uint32_t u = 0; u < g->n; u++)
		for (uint32_t a = g->off[u]; a < g->off[u + 1]; a++)
			if (!gone[a])
				lane[m++] = (uint16_t)(a - g->off[u]);
	return lane;
}

/* The healthy program's pieces by (phase, relative block): which the
 * whole solve's sources match exactly (healthy_source). */
struct hpiece {
	uint32_t offset, length, step;
	uint16_t src, dst, lane;
};

struct healthy_base {
	const struct sched_group *G;
	uint32_t first;	      /* the phase being solved: its first step */
	uint32_t high;	      /* patch_high() */
	uint32_t *bstart;     /* (reduce) * n + block: piece[bstart[k] .. bstart[k + 1]) */
	struct hpiece *piece; /* each key's together: one cache line, not three */
	/* per key: its one piece where it is a whole block (step, lane, src,
	 * dst in 16 bits each), else HB_SLOW: most keys, one load where
	 * bstart and piece were two cache misses a source at 8,192 nodes */
	uint64_t *sig;
	const uint16_t *lane; /* healthy_lanes() */
};

#define HB_SLOW UINT64_MAX

static inline uint64_t hb_sig(uint32_t step, uint32_t lane, uint32_t src, uint32_t dst)
{
	return (uint64_t)step << 48 | (uint64_t)lane << 32 | (uint64_t)src << 16 | dst;
}

static void healthy_base_init(struct healthy_base *hb, const struct sched_reduced *r,
			      const uint16_t *lane)
{
	const struct schedule *b = &r->prog;
	uint32_t n = r->group.nodes;

	hb->G = &r->group;
	hb->lane = lane;
	hb->high = patch_high(&r->group);
	hb->bstart = xcalloc(2 * (size_t)n + 2, sizeof(uint32_t));
	hb->piece = xmalloc((b->nxfers + 1) * sizeof(struct hpiece));
	for (size_t i = 0; i < b->nxfers; i++)
		hb->bstart[(xfer_op(&b->xfers[i]) == XFER_REDUCE) * n + b->xfers[i].block + 2]++;
	for (uint32_t k = 0; k < 2 * n; k++)
		hb->bstart[k + 2] += hb->bstart[k + 1];
	for (uint32_t t = 0; t < b->nsteps; t++)
		for (size_t i = b->step_start[t]; i < b->step_start[t + 1]; i++) {
			const struct xfer *x = &b->xfers[i];

			hb->piece[hb->bstart[(xfer_op(x) == XFER_REDUCE) * n + x->block + 1]++] =
			    (struct hpiece){.offset = x->offset,
					    .length = x->length,
					    .src = x->src,
					    .dst = x->dst,
					    .lane = x->lane,
					    .step = t};
		}
	hb->sig = xmalloc((2 * (size_t)n + 1) * sizeof(uint64_t));
	for (size_t k = 0; k < 2 * (size_t)n; k++) {
		const struct hpiece *p = &hb->piece[hb->bstart[k]];

		hb->sig[k] = HB_SLOW;
		if (hb->bstart[k + 1] - hb->bstart[k] == 1 && p->offset == 0 &&
		    p->length == SCHED_ONE && p->step < 0xffff)
			hb->sig[k] = hb_sig(p->step, p->lane, p->src, p->dst);
	}
}

static void healthy_base_free(struct healthy_base *hb)
{
	free(hb->bstart);
	free(hb->piece);
	free(hb->sig);
}

/* healthy_source's k pieces x, each found among the base's k of its key
 * (from lo) at step. */
static bool healthy_pieces(const struct healthy_base *hb, uint32_t u, uint32_t step,
			   const struct xfer *x, size_t k, uint32_t lo)
{
	const struct sched_group *G = hb->G;

	/* x moved back by u against the base as it is (u + b = x iff
	 * b = x - u): one subtraction a piece, not a move a base piece */
	for (size_t j = 0; j < k; j++) {
		uint32_t src = patch_sub(G, hb->high, x[j].src, u),
			 dst = patch_sub(G, hb->high, x[j].dst, u);
		bool found = false;

		for (uint32_t q = lo; q < lo + k && !found; q++) {
			const struct hpiece *b = &hb->piece[q];

			found = b->step == step && b->src == src && b->dst == dst &&
				b->lane == x[j].lane && b->offset == x[j].offset &&
				b->length == x[j].length;
		}
		if (!found)
			return false;
	}
	return true;
}

/* Whether the k pieces x of one source at receiver u, step so of the
 * phase, are the healthy translate's exactly: the base's pieces of its
 * relative block, moved by u, at the same step. Asked only of a source
 * the base holds in parts (one it sends whole is told by its key before
 * it is written: healthy_base_keys). */
static bool healthy_source(const void *ctx, uint32_t u, uint32_t so, const struct xfer *x, size_t k)
{
	const struct healthy_base *hb = ctx;
	const struct sched_group *G = hb->G;
	uint32_t n = G->nodes, step = hb->first + so;
	size_t key = (size_t)(xfer_op(x) == XFER_REDUCE) * n + patch_sub(G, hb->high, x->block, u);
	uint32_t lo = hb->bstart[key], hi = hb->bstart[key + 1];

	if (hi - lo != k)
		return false;
	if (k == 1) {
		/* most sources: one piece against one, the cheap fields first */
		const struct hpiece *b = &hb->piece[lo];

		return b->step == step && b->offset == x->offset && b->length == x->length &&
		       b->lane == x->lane && b->src == patch_sub(G, hb->high, x->src, u) &&
		       b->dst == patch_sub(G, hb->high, x->dst, u);
	}
	return healthy_pieces(hb, u, step, x, k, lo);
}

/* view.base_keys: the base's one whole piece of each block v[i] at u
 * (relative to u, its step first: hb_sig), else UINT64_MAX. */
static void healthy_base_keys(const void *ctx, uint32_t u, bool reduce, const uint32_t *v,
			      uint32_t cnt, uint64_t *key)
{
	const struct healthy_base *hb = ctx;
	const struct sched_group *G = hb->G;
	const uint64_t *sig = hb->sig + (size_t)reduce * G->nodes;

	for (uint32_t i = 0; i < cnt; i++)
		key[i] = sig[patch_sub(G, hb->high, v[i], u)];
}

/* view.whole_key: the key of whole piece x at u, step so of the phase, as
 * healthy_base_keys' (equal iff healthy_source says x is the base's). */
static uint64_t healthy_whole_key(const void *ctx, uint32_t u, uint32_t so, const struct xfer *x)
{
	const struct healthy_base *hb = ctx;
	const struct sched_group *G = hb->G;
	uint32_t step = hb->first + so;

	if (step >= 0xffff)
		return UINT64_MAX - 1; /* no base key has it */
	return hb_sig(step, x->lane, patch_sub(G, hb->high, x->src, u),
		      patch_sub(G, hb->high, x->dst, u));
}

/* The nodes whose whole programs a phase solves again. */
struct built_phase {
	uint32_t *region, nregion;
	/* the distance rows' room, kept from phase to phase (its pages
	 * faulted in once, not twice: a tenth of the answer's faults) */
	uint16_t **rows;
	size_t *rows_bytes;
	/* the whole nodes' sources sent whole over a link their problem
	 * keeps, and of them those kept there (summed over the phases) */
	uint64_t *marked, *kept;
};

struct rows_job {
	const struct patch_phase *pp;
	const uint32_t *need;
	uint16_t **row;
};

/* Root x's row of the degraded K: the healthy row moved to x, its raised
 * set over it (run_phase found every root's; a BFS a row was a tenth of
 * the answer). A failed host's entry stays the healthy one: it is no
 * source, and no row is read there. Moved a line of G's unit-stride
 * coordinate at a time (two copies: the line rotated by x's coordinate)
 * where G has one. */
static void one_row(void *arg, size_t i, unsigned wid)
{
	const struct rows_job *j = arg;
	const struct patch_phase *pp = j->pp;
	const struct sched_group *G = pp->G;
	uint32_t x = j->need[i], n = pp->g->n, R = 0;
	uint16_t *row = j->row[x];

	(void)wid;
	for (uint32_t d = 0; d < G->ndims && G->reps == 1 && G->nodes == n; d++)
		if (G->stride[d] == 1)
			R = G->radix[d];
	if (R && n % R == 0) {
		uint32_t x0 = x % R;

		for (uint32_t v0 = 0; v0 < n; v0 += R) {
			/* v0 - x has coordinate R - x0 (mod R): its line starts there less it */
			uint32_t lb = patch_sub(G, pp->high, v0, x) - (R - x0) % R;

			memcpy(row + v0 + x0, pp->row0 + lb, (R - x0) * sizeof(uint16_t));
			memcpy(row + v0, pp->row0 + lb + R - x0, x0 * sizeof(uint16_t));
		}
	} else {
		for (uint32_t v = 0; v < n; v++)
			row[v] = pp->row0[patch_sub(G, pp->high, v, x)];
	}
	for (uint32_t e = pp->rx_off[x]; e < pp->rx_off[x + 1]; e++)
		row[pp->rx_w[e]] = pp->rx_d[e];
}

/* The region's problems of phase pp (its raised sets found, every
 * distance within its steps) solved on gd (H = gd, or gd^T run
 * backwards), appended to s in the base's steps (D of them), each step's
 * pieces of po after them (po emptied). */
/* Each step's largest U* over STEPS_SAMPLE of vw's receivers or more,
 * spread over them, the values alone (without the fractions), into
 * step_c / step_k (D each), which the fractions' pass then lets every
 * receiver load its links up to (view.step_c): the step costs that at
 * least, and a node whose own is lower keeps more of its sources on
 * their healthy links (1% of torus:64x32's ports: a patch of 311 K
 * transfers, not 460 K, the same time). The nodes solved whole are alike
 * (each lost an in-link), so a sample finds the steps' largest: on 1% of
 * torus:128x64's ports every fifth of the 640 a phase gives the patch
 * that all of them give (5.36 M transfers), every sixteenth 6.48 M. */
#define STEPS_SAMPLE 128
static void steps_most(struct view *vw, uint64_t *step_c, uint64_t *step_k)
{
	uint32_t nrecv = vw->nrecv, every = nrecv / STEPS_SAMPLE ? nrecv / STEPS_SAMPLE : 1;
	const uint32_t *recv = vw->recv;
	uint32_t *some = xmalloc(((size_t)nrecv + 1) * sizeof(uint32_t));

	vw->nrecv = 0;
	for (uint32_t i = 0; i < nrecv; i += every)
		some[vw->nrecv++] = recv[i];
	vw->recv = some;
	vw->pass = PASS_EVAL;
	parallel_for(vw->nrecv, 4, vw->nworkers, bfb_solve_receiver, vw);
	vw->recv = recv;
	vw->nrecv = nrecv;
	free(some);
	for (uint32_t t = 0; t < vw->D; t++) {
		step_k[t] = 1;
		for (unsigned i = 0; i < vw->nworkers; i++)
			if (vw->w[i].max_c[t] * step_k[t] > step_c[t] * vw->w[i].max_k[t]) {
				step_c[t] = vw->w[i].max_c[t];
				step_k[t] = vw->w[i].max_k[t];
			}
	}
	vw->step_c = step_c;
	vw->step_k = step_k;
}

static int solve_region(const struct patch_phase *pp, const struct graph *gd,
			const struct built_phase *bp, uint32_t d, const struct bfb_opts *o,
			uint64_t max_bytes, const struct healthy_base *hb, struct patch_out *po,
			struct schedule *s, struct ofc_error *err)
{
	bool reverse = pp->reverse;
	uint32_t D = pp->D;
	const uint8_t *absent = pp->absent;
	struct view vw = {.g = gd,
			  .reverse = reverse,
			  .n = gd->n,
			  .o = o,
			  .d = d,
			  .D = D,
			  .absent = absent,
			  .lane = hb->lane,
			  .healthy = healthy_source,
			  .base_keys = healthy_base_keys,
			  .whole_key = healthy_whole_key,
			  .healthy_ctx = hb};
	uint32_t n = gd->n, nneed = 0, *need = xmalloc((size_t)n * sizeof(uint32_t));
	uint8_t *want = xcalloc(n, 1);
	int rc = 0;

	bfb_view_links(&vw);
	for (uint32_t i = 0; i < bp->nregion; i++) {
		uint32_t u = bp->region[i];

		want[u] = 1;
		for (uint32_t a = vw.in_off[u]; a < vw.in_off[u + 1]; a++)
			want[vw.in_peer[a]] = 1;
	}
	for (uint32_t x = 0; x < n; x++)
		if (want[x])
			need[nneed++] = x;
	/* the distance rows its problems read, refused past the limit */
	uint64_t rows = (uint64_t)nneed * n * sizeof(uint16_t);
	if (max_bytes && rows > max_bytes) {
		char need_s[32], max_s[32];

		fmt_size(need_s, sizeof(need_s), rows);
		fmt_size(max_s, sizeof(max_s), max_bytes);
		free(need);
		free(want);
		bfb_view_free(&vw);
		return ofc_error_set(err, OFC_E_RUNTIME,
				     "%u nodes lost a link: solving them whole needs about %s of "
				     "distances, over the memory limit of %s",
				     bp->nregion, need_s, max_s);
	}
	/* rows[x][v] = d_H(v, x) = d_K(x, v) */
	unsigned th = parallel_workers(nneed, 4, o->threads);
	struct rows_job job = {.pp = pp, .need = need};
	vw.row = xcalloc(n, sizeof(uint16_t *));
	if (*bp->rows_bytes < rows) {
		free(*bp->rows);
		*bp->rows = xmalloc(rows + 1);
		*bp->rows_bytes = rows;
	}
	vw.rows = *bp->rows;
	job.row = (uint16_t **)vw.row;
	for (uint32_t i = 0; i < nneed; i++)
		vw.row[need[i]] = vw.rows + (size_t)i * n;
	parallel_for(nneed, 4, th, one_row, &job);
	vw.nrecv = bp->nregion;
	vw.recv = bp->region;
	vw.pass = PASS_BUILD;
	vw.count = xmalloc((size_t)vw.nrecv * D * sizeof(uint32_t) + 1);
	vw.where = xmalloc((size_t)vw.nrecv * D * sizeof(uint64_t) + 1);
	vw.owner = xmalloc((size_t)vw.nrecv * sizeof(uint32_t) + 1);
	bfb_workers_init(&vw);
	uint64_t *step_c = xcalloc((size_t)D + 1, sizeof(uint64_t)),
		 *step_k = xmalloc(((size_t)D + 1) * sizeof(uint64_t));
	steps_most(&vw, step_c, step_k);
	vw.pass = PASS_BUILD;
	for (unsigned i = 0; i < vw.nworkers && rc == 0; i++)
		if (vw.w[i].failed)
			rc = ofc_error_set(err, OFC_E_RUNTIME, "%s", vw.w[i].why);
	if (rc == 0)
		parallel_for(vw.nrecv, 4, vw.nworkers, bfb_solve_receiver, &vw);
	for (unsigned i = 0; i < vw.nworkers && rc == 0; i++)
		if (vw.w[i].failed)
			rc = ofc_error_set(err, OFC_E_RUNTIME, "%s", vw.w[i].why);
	free(step_c);
	free(step_k);
	for (unsigned i = 0; i < vw.nworkers; i++) {
		*bp->marked += vw.w[i].marked;
		*bp->kept += vw.w[i].kept;
	}
	if (rc == 0)
		bfb_view_gather(&vw, s, po->pb, po->nworkers);
	vw.recv = NULL;
	vw.rows = NULL; /* bp's, for the next phase */
	free(need);
	free(want);
	bfb_view_free(&vw);
	return rc;
}

static void phase_free(struct patch_phase *pp)
{
	free(pp->row0);
	free(pp->rx_off);
	free(pp->rx_w);
	free(pp->rx_d);
}

/* One phase: the raised sets of every root (pp's, for phase_free), then
 * the owners whose blocks change, planned again into po (not the nodes
 * solved whole in this phase: whole[u] & bit). */
static int run_phase(struct patch_phase *pp, const struct graph *gt, const struct graph *gd,
		     const struct graph *gdt, const uint8_t *whole, uint8_t bit, unsigned threads,
		     struct patch_out *po, uint32_t *nowners, uint32_t *longer,
		     struct ofc_error *err)
{
	const struct graph *g = pp->g;
	uint32_t n = g->n, most = 0;
	int rc = 0;

	/* K = H^T: allgather g^T, reduce-scatter g */
	patch_raised(pp, pp->reverse ? g : gt, pp->reverse ? gdt : gd, pp->reverse ? gd : gdt,
		     threads);
	const uint32_t *rx_off = pp->rx_off, *rx_w = pp->rx_w;
	const uint16_t *rx_d = pp->rx_d;
	for (uint32_t x = 0; x < n && rc == 0; x++) {
		for (uint32_t e = rx_off[x]; e < rx_off[x + 1] && rc == 0; e++) {
			/* x in K is the receiver; rx_w a source */
			if (rx_d[e] == TOPO_UNREACHABLE)
				rc = ofc_error_set(
				    err, OFC_E_INPUT,
				    "the failures disconnect the fabric: node %u can no "
				    "longer reach node %u",
				    pp->reverse ? x : rx_w[e], pp->reverse ? rx_w[e] : x);
			else if (rx_d[e] > most)
				most = rx_d[e];
		}
	}
	/* a distance past the phase's steps: the base is padded (bfb_patch)
	 * and the patch built again */
	if (rc == 0 && most > pp->D) {
		*longer = most;
		return 0;
	}
	/* the owners: a raised set of their own or an in-neighbour's, or a
	 * failed in-link (H's in-arcs: allgather g's into u, reduce-scatter
	 * g's out of u) */
	uint8_t *hit = xcalloc(n, 1);
	for (uint32_t u = 0; u < n; u++) {
		const struct graph *hin = pp->reverse ? g : gt;

		hit[u] = rx_off[u + 1] > rx_off[u];
		for (uint32_t a = hin->off[u]; a < hin->off[u + 1] && !hit[u]; a++)
			hit[u] = rx_off[hin->adj[a] + 1] > rx_off[hin->adj[a]];
	}
	for (uint32_t a = 0; a < g->m; a++)
		if (pp->gone[a])
			hit[pp->reverse ? pp->tails[a] : g->adj[a]] = 1;
	uint32_t *owners = xmalloc(((size_t)n + 1) * sizeof(uint32_t)), no = 0;
	for (uint32_t u = 0; u < n; u++)
		if (hit[u] && !(whole[u] & bit) && (!pp->absent || !pp->absent[u])) {
			owners[no++] = u;
			pp->partial[u] = 1;
		}
	*nowners = no;
	if (rc == 0)
		rc = patch_blocks(pp, owners, no, threads, po, err);
	free(owners);
	free(hit);
	return rc;
}

/* ---- a mirrored allreduce ------------------------------------------------
 * On a graph equal to its transpose arc for arc, without arcs closed under
 * twins (a failed link or host takes both ways of its links; a port one way
 * of two), reduce-scatter is the allgather run backwards (Zhao et al., Cor.
 * 3.1, with g^T = g). Where the base's reductions are so its copies'
 * mirrors, step for step and transfer for transfer (sched_mirror_of, which
 * the check asks too; BFB's programs are), the copy phase's patch mirrored
 * is a reduction phase's patch, on the same (owner, block) pairs, and only
 * the copies are solved: half the work. */

struct mirror_job {
	const struct graph *g;
	const uint32_t *twin;
	struct xfer *x;
	const uint32_t *start; /* the copy steps' own offsets, before the move */
	uint32_t R;
	size_t K; /* the copy phase's transfers */
};

/* Copy step j to its place after the reductions (K up). */
static void mirror_move(void *arg, size_t j, unsigned wid)
{
	const struct mirror_job *m = arg;

	(void)wid;
	memcpy(m->x + m->K + m->start[j], m->x + m->start[j],
	       (m->start[j + 1] - m->start[j]) * sizeof(struct xfer));
}

/* Reduction step R - 1 - j: copy step j's mirrors, in order. */
static void mirror_write(void *arg, size_t j, unsigned wid)
{
	const struct mirror_job *m = arg;
	const struct xfer *from = m->x + m->K + m->start[j];
	struct xfer *to = m->x + m->K - m->start[j + 1];

	(void)wid;
	for (uint32_t i = 0; i < m->start[j + 1] - m->start[j]; i++)
		to[i] = sched_xfer_mirror(m->g, m->twin, &from[i]);
}

/* s, the copy phase's R steps, becomes the allreduce's 2R: the copies'
 * mirrors, then the copies. The room grows in place (a large block is
 * remapped, not copied): the copies move up once into pages the schedule
 * needs anyway. */
static void mirror_reductions(struct schedule *s, const struct graph *g, const uint32_t *twin,
			      unsigned threads)
{
	uint32_t R = s->nsteps;
	size_t K = s->nxfers;
	uint32_t *start = xmalloc(((size_t)R + 1) * sizeof(uint32_t));
	struct mirror_job m = {.g = g, .twin = twin, .start = start, .R = R, .K = K};

	memcpy(start, s->step_start, ((size_t)R + 1) * sizeof(uint32_t));
	sched_reserve(s, K);
	sched_reserve_steps(s, R);
	m.x = s->xfers;
	if (K) {
		parallel_for(R, 1, threads, mirror_move, &m);
		parallel_for(R, 1, threads, mirror_write, &m);
	}
	for (uint32_t t = 0; t <= R; t++)
		s->step_start[t] = (uint32_t)(K - start[R - t]);
	for (uint32_t j = 1; j <= R; j++)
		s->step_start[R + j] = (uint32_t)(K + start[j]);
	s->nsteps = 2 * R;
	s->nxfers = 2 * K;
	free(start);
}

/* What answering with the nwhole nodes that lost an in-link solved whole
 * holds at its peak, refused with the estimate before any is solved (-1,
 * OFC_E_RUNTIME): nsolved (node, phase) problems, each of every other
 * block, of which the patch holds PATCH_PIECES_PER_BLOCK pieces a block
 * with the other nodes' moved blocks beside them (a whole node leaves
 * about half of its blocks to the base), and the answer held
 * PATCH_PEAK_BYTES a piece at its peak: the solve's pieces, the patch
 * gathered from them, the check's tables, the healthy parts beside.
 * Measured (`ofc schedule`, bench/degraded_scale.sh): 1% of
 * torus:128x64's ports, 1,279 problems, 7.75 M transfers (0.74 a block),
 * 327 MB at the peak (42 bytes a transfer); 1% of torus:128x128's ports
 * 27.8 M transfers in 1,041 MB (37.5), its links 17.0 M in 690 MB (40.6).
 * The figures err high, by a fifth to a half. */
#define PATCH_PIECES_PER_BLOCK 0.9
#define PATCH_PEAK_BYTES 48
static int whole_over_memory(uint32_t nwhole, uint32_t nsolved, uint32_t n, uint64_t max_bytes,
			     struct ofc_error *err)
{
	double pieces = (double)nsolved * (n - 1) * PATCH_PIECES_PER_BLOCK;
	double est = pieces * PATCH_PEAK_BYTES;
	char need_s[32], max_s[32];

	if (!max_bytes || est <= (double)max_bytes)
		return 0;
	fmt_size(need_s, sizeof(need_s), (uint64_t)est);
	fmt_size(max_s, sizeof(max_s), max_bytes);
	return ofc_error_set(err, OFC_E_RUNTIME,
			     "%u nodes lost a link: the answer with them solved whole needs "
			     "about %s at its peak (%.3g transfers), over the memory limit of %s",
			     nwhole, need_s, pieces, max_s);
}

/* The nodes solved whole in each phase: those that lost an in-link in its
 * H, as bfb_schedule would solve them: their blocks move between in-links
 * that keep them, which only the whole problem (LP (3)) balances. A failed
 * arc's head in the copies (bit 1: H = g), its tail in the reductions (bit
 * 2: H = g^T); in the other phase such a node only sees distances grow,
 * and plans those blocks as the others do (a failed port's three nodes:
 * two whole a phase, not three). The failed hosts are listed apart. */
struct wholes {
	uint8_t *whole;
	uint32_t *list, n; /* whole in either phase, ascending */
	uint32_t nsolved;  /* (node, phase) problems */
	uint32_t *absent, nabsent;
};

static void wholes_init(struct wholes *w, const struct graph *g, enum sched_collective c,
			const bool *gone, const uint32_t *tails, const uint8_t *absent)
{
	uint32_t n = g->n;

	memset(w, 0, sizeof(*w));
	w->whole = xcalloc(n, 1);
	for (uint32_t a = 0; a < g->m; a++)
		if (gone[a]) {
			if (c != SCHED_REDUCE_SCATTER)
				w->whole[g->adj[a]] |= 1;
			if (c != SCHED_ALLGATHER)
				w->whole[tails[a]] |= 2;
		}
	w->list = xmalloc(((size_t)n + 1) * sizeof(uint32_t));
	w->absent = xmalloc(((size_t)n + 1) * sizeof(uint32_t));
	for (uint32_t u = 0; u < n; u++) {
		if (w->whole[u] && (!absent || !absent[u])) {
			w->list[w->n++] = u;
			w->nsolved += (w->whole[u] & 1) + (w->whole[u] >> 1);
		}
		if (absent && absent[u])
			w->absent[w->nabsent++] = u;
	}
}

static void wholes_free(struct wholes *w)
{
	free(w->whole);
	free(w->list);
	free(w->absent);
}

/* What one patch_build holds across its phases. */
struct build {
	const struct graph *g, *gt, *gd, *gdt;
	const struct sched_reduced *r;
	const bool *gone;
	const uint8_t *absent;
	const struct bfb_opts *o;
	uint64_t max_bytes;
	uint32_t *tails, *in_off, *in_arc;
	uint32_t *region; /* a phase's whole nodes */
	uint8_t *partial;
	struct wholes w;
	struct healthy_base hb;
	struct patch_out po; /* a phase's planned blocks until gathered */
	size_t held;	     /* their bytes over the phases */
	uint16_t *rows;	     /* the whole nodes' distance rows (solve_region) */
	size_t rows_bytes;
	uint32_t longer; /* a phase's distance past its steps (0: none) */
	struct bfb_stats *st;
};

/* Phase reverse's steps appended to s: its whole nodes' pieces, then
 * po's for the nodes planned block by block. */
static int build_phase(struct build *b, bool reverse, uint32_t degree, struct schedule *s,
		       struct ofc_error *err)
{
	const struct sched_reduced *r = b->r;
	uint32_t rsteps = r->prog.collective == SCHED_ALLREDUCE ? r->prog.nsteps / 2
			  : r->prog.collective == SCHED_ALLGATHER ? 0
								  : r->prog.nsteps;
	uint32_t nowners = 0;
	struct patch_phase pp = {.g = b->g,
				 .gone = b->gone,
				 .r = r,
				 .G = &r->group,
				 .reverse = reverse,
				 .first = reverse ? 0 : rsteps,
				 .D = reverse ? rsteps : r->prog.nsteps - rsteps,
				 .in_off = b->in_off,
				 .in_arc = b->in_arc,
				 .tails = b->tails,
				 .absent = b->absent,
				 .absent_list = b->w.absent,
				 .nabsent = b->w.nabsent,
				 .partial = b->partial};
	uint8_t bit = reverse ? 2 : 1;
	struct built_phase here = {.region = b->region,
				   .rows = &b->rows,
				   .rows_bytes = &b->rows_bytes,
				   .marked = &b->st->healthy_marked,
				   .kept = &b->st->healthy_kept};
	struct patch_out *po = &b->po;
	int rc;

	for (uint32_t i = 0; i < b->w.n; i++)
		if (b->w.whole[b->w.list[i]] & bit)
			b->region[here.nregion++] = b->w.list[i];
	rc = run_phase(&pp, b->gt, b->gd, b->gdt, b->w.whole, bit, b->o->threads, po, &nowners,
		       &b->longer, err);
	b->hb.first = pp.first;
	if (rc == 0 && b->longer) {
		phase_free(&pp);
		patch_out_free(po);
		return 0;
	}
	if (rc == 0 && here.nregion) {
		rc =
		    solve_region(&pp, b->gd, &here, degree, b->o, b->max_bytes, &b->hb, po, s, err);
	} else if (rc == 0) {
		struct view none = {.D = pp.D, .reverse = reverse, .o = b->o};

		bfb_view_gather(&none, s, po->pb, po->nworkers);
	}
	b->held += po->pieces * sizeof(struct xfer);
	if (rc == 0 && b->max_bytes && b->held > b->max_bytes) {
		char need_s[32], max_s[32];

		fmt_size(need_s, sizeof(need_s), b->held);
		fmt_size(max_s, sizeof(max_s), b->max_bytes);
		rc = ofc_error_set(err, OFC_E_RUNTIME,
				   "the failures reach %u of %u nodes: the patch holds %s, "
				   "over the memory limit of %s",
				   nowners, b->g->n, need_s, max_s);
	}
	phase_free(&pp);
	patch_out_free(po);
	return rc;
}

/* The most arcs into or out of a node of g without gone. */
static uint32_t max_degree(const struct graph *gd, const struct graph *gdt)
{
	uint32_t d = 0;

	for (uint32_t u = 0; u < gd->n; u++) {
		uint32_t in = gdt->off[u + 1] - gdt->off[u], out = graph_outdeg(gd, u);

		d = in > d ? in : d;
		d = out > d ? out : d;
	}
	return d;
}

static void build_free(struct build *b)
{
	free(b->rows);
	healthy_base_free(&b->hb);
	wholes_free(&b->w);
	free((void *)b->hb.lane);
	free(b->region);
	free(b->partial);
	patch_out_free(&b->po);
	free(b->in_off);
	free(b->in_arc);
	free(b->tails);
	graph_free((struct graph *)b->gt);
	graph_free((struct graph *)b->gd);
	graph_free((struct graph *)b->gdt);
}

/* The patch of g without gone[] (every arc of a failed host among them),
 * the failed hosts absent[] (NULL: none), into p (bfb_patch's checks
 * made). A mirrored allreduce (sched_mirror_of) solves its copies only. */
static int patch_build(const struct graph *g, const struct sched_reduced *r, const bool *gone,
		       const uint8_t *absent, const struct bfb_opts *o, uint64_t max_bytes,
		       struct sched_patch *p, struct bfb_stats *st, uint32_t *longer,
		       struct ofc_error *err)
{
	enum sched_collective c = r->prog.collective;
	uint32_t n = g->n, *twin = sched_mirror_of(g, gone, &r->prog, false);
	struct build b = {.g = g,
			  .r = r,
			  .gone = gone,
			  .absent = absent,
			  .o = o,
			  .max_bytes = max_bytes,
			  .st = st};
	int rc;

	b.gt = graph_transpose(g);
	b.gd = topo_without_arcs(g, gone, g->spec ? g->spec : "degraded");
	b.gdt = graph_transpose(b.gd);
	b.tails = graph_arc_tails(g);
	bfb_in_arcs(g, &b.in_off, &b.in_arc);
	wholes_init(&b.w, g, c, gone, b.tails, absent);
	b.region = xmalloc(((size_t)n + 1) * sizeof(uint32_t));
	b.partial = xcalloc(n, 1);
	healthy_base_init(&b.hb, r, healthy_lanes(g, gone));
	sched_init(&p->prog, c, r->prog.algorithm, n);
	snprintf(p->prog.topology, sizeof(p->prog.topology), "%s", r->prog.topology);
	sched_reserve_steps(&p->prog, r->prog.nsteps);
	/* a mirrored allreduce solves half the problems but holds as many
	 * pieces at its peak: its reductions' patch is its copies' mirrored */
	rc = whole_over_memory(b.w.n, b.w.nsolved, n, max_bytes, err);
	double t0 = now_seconds();
	st->nodes = n;
	st->degree = max_degree(b.gd, b.gdt);
	for (int ph = 0; ph < 2 && rc == 0 && !b.longer; ph++) {
		bool reverse = ph == 0;

		if ((reverse && (c == SCHED_ALLGATHER || twin)) ||
		    (!reverse && c == SCHED_REDUCE_SCATTER))
			continue;
		rc = build_phase(&b, reverse, st->degree, &p->prog, err);
	}
	if (rc == 0 && b.longer) {
		*longer = b.longer;
		rc = 1;
	} else if (rc == 0 && twin)
		mirror_reductions(&p->prog, g, twin, o->threads);
	st->seconds_generate = now_seconds() - t0;
	if (rc == 0) {
		for (uint32_t i = 0; i < b.w.n; i++)
			b.partial[b.w.list[i]] = 1;
		st->whole = b.w.n;
		st->mirrored = twin != NULL;
		st->steps = r->prog.nsteps;
		/* every whole node is planned block by block as the others are:
		 * the region (nodes whose every block the patch plans) is empty */
		p->region = xmalloc(sizeof(uint32_t));
		p->nregion = 0;
	} else { /* refused, or built again on a longer base */
		sched_free(&p->prog);
		memset(&p->prog, 0, sizeof(p->prog));
	}
	for (uint32_t u = 0; u < n; u++)
		st->problems += b.partial[u]; /* the nodes planned block by block */
	free(twin);
	build_free(&b);
	return rc;
}

/* patch_build on r, and where the failures put a node farther than a
 * phase's steps, again on r padded to that distance: each phase longer by
 * the same steps (g's diameter is g^T's), the reductions' in front (a
 * reduction's time counts back from its phase's end) and the copies'
 * behind, every base transfer at the same time within its phase. */
static int build_padded(const struct graph *g, struct sched_reduced *r, const bool *gone,
			const uint8_t *absent, const struct bfb_opts *o, uint64_t max_bytes,
			struct sched_patch *p, struct bfb_stats *st, struct ofc_error *err)
{
	enum sched_collective c = r->prog.collective;
	uint32_t D = c == SCHED_ALLREDUCE ? r->prog.nsteps / 2 : r->prog.nsteps, longer = 0;
	int rc = patch_build(g, r, gone, absent, o, max_bytes, p, st, &longer, err);

	if (rc != 1)
		return rc;
	sched_pad_steps(&r->prog, c == SCHED_ALLGATHER ? 0 : longer - D,
			c == SCHED_REDUCE_SCATTER ? 0 : longer - D);
	memset(p, 0, sizeof(*p));
	memset(st, 0, sizeof(*st));
	rc = patch_build(g, r, gone, absent, o, max_bytes, p, st, &longer, err);
	if (rc == 1) /* the other phase farther still: g's diameter is g^T's */
		return ofc_error_set(err, OFC_E_RUNTIME,
				     "the failures lengthen one phase past the other's %u steps",
				     longer);
	if (rc == 0)
		st->longer = longer - D;
	return rc;
}

int bfb_patch(const struct graph *g, struct sched_reduced *r, const bool *gone,
	      const uint8_t *absent, const struct bfb_opts *o, uint64_t max_bytes,
	      struct sched_patch *p, struct bfb_stats *st, struct ofc_error *err)
{
	static const struct bfb_opts defaults = {0};
	enum sched_collective c = r->prog.collective;
	uint32_t n = g->n, nabs = 0;

	if (!o)
		o = &defaults;
	memset(p, 0, sizeof(*p));
	memset(st, 0, sizeof(*st));
	if (c != SCHED_ALLGATHER && c != SCHED_REDUCE_SCATTER && c != SCHED_ALLREDUCE)
		return ofc_error_set(err, OFC_E_INPUT,
				     "BFB patches allgather, reduce-scatter and allreduce");
	if (r->group.nodes != n || r->group.reps != 1 || o->rate || o->inject || o->chunks)
		return ofc_error_set(
		    err, OFC_E_INPUT,
		    "a BFB patch is for a reduced BFB schedule of g's group, every "
		    "link alike (no rates, injection limits or chunks)");
	for (uint32_t u = 0; absent && u < n; u++)
		nabs += absent[u] != 0;
	if (!nabs)
		return build_padded(g, r, gone, NULL, o, max_bytes, p, st, err);
	if (nabs + 2 > n)
		return ofc_error_set(err, OFC_E_INPUT,
				     "%u of %u nodes failed, no collective is left to schedule",
				     nabs, n);
	/* A failed host: every arc to or from it is gone too; its out-
	 * neighbours (and in-neighbours, in a reduction) lost an in-link and
	 * are solved whole, the nodes whose shortest paths it relayed plan
	 * those blocks again, and its own block is dropped everywhere. */
	bool *all = xmalloc(((size_t)g->m + 1) * sizeof(bool));
	for (uint32_t u = 0; u < n; u++)
		for (uint32_t a = g->off[u]; a < g->off[u + 1]; a++)
			all[a] = (gone && gone[a]) || absent[u] || absent[g->adj[a]];
	int rc = build_padded(g, r, all, absent, o, max_bytes, p, st, err);
	free(all);
	if (rc < 0)
		return rc;
	p->absent = xmalloc((size_t)nabs * sizeof(uint32_t));
	for (uint32_t u = 0; u < n; u++)
		if (absent[u])
			p->absent[p->nabsent++] = u;
	return 0;
}
