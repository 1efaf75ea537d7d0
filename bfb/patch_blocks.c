/* A degraded BFB's patch by (node, block) (bfb/patch.c's finer form):
 * of a node the failures reach, only the blocks whose BFB choice changed
 * are planned again, over the loads the node's other blocks leave on its
 * in-links (their healthy pieces, kept).
 *
 * A block w at receiver u (in H: g for allgather, g^T for reduce-scatter)
 * changes when its distance to u or to one of u's in-neighbours changed
 * (a source w in the raised set of that root), or when its healthy pieces
 * crossed a failed in-link of u. Each such block goes, at its degraded
 * step t' = d'(w, u), to the in-links from nodes at d'(w, v) = t' - 1,
 * filled to a common level over the loads there (water-filling: the LP (3)
 * of one source given the others' flows). A node that lost an in-link
 * moves the quarter of its blocks that used it onto its other three,
 * which is what the full LP does on a torus (U* grows by 4/3). */
#include "bfb/patch_internal.h"

#include <stdlib.h>
#include <string.h>

/* The base program of one phase, by node 0's in-links (key: the
 * in-neighbour relative to 0 and the sender's port) and by block. */
struct base_index {
	uint32_t d;
	uint32_t key_peer[BFB_MAX_DEGREE], key_lane[BFB_MAX_DEGREE];
	uint64_t *load;	  /* load[k * (D + 1) + t]: SCHED_ONE units */
	uint32_t *bstart; /* pieces of relative block r: bpiece[bstart[r] .. bstart[r + 1]) */
	uint32_t *bpiece; /* indices into the program */
	uint32_t *btime;  /* per program transfer: H-time t (1..D) */
	uint8_t *bkey;	  /* per program transfer: its key index */
	uint64_t *bmask;  /* per relative block: a bit per key its pieces cross */
	/* the relative blocks with a piece over key k, ascending:
	 * kblock[kstart[k] .. kstart[k + 1]) */
	uint32_t *kstart, *kblock;
};

static uint32_t key_of(const struct base_index *bi, uint32_t peer, uint32_t lane)
{
	for (uint32_t k = 0; k < bi->d; k++)
		if (bi->key_peer[k] == peer && bi->key_lane[k] == lane)
			return k;
	return UINT32_MAX;
}

/* Which keys each relative block's pieces cross, and by key the blocks:
 * what an owner asks of its raised in-neighbours' blocks and of its failed
 * in-links, a test or a list where it was a scan of the pieces. */
static void key_blocks(struct base_index *bi, uint32_t n)
{
	bi->bmask = xcalloc((size_t)n + 1, sizeof(uint64_t));
	bi->kstart = xcalloc((size_t)bi->d + 2, sizeof(uint32_t));
	for (uint32_t r = 0; r < n; r++) {
		for (uint32_t i = bi->bstart[r]; i < bi->bstart[r + 1]; i++)
			bi->bmask[r] |= (uint64_t)1 << bi->bkey[bi->bpiece[i]];
		for (uint32_t k = 0; k < bi->d; k++)
			bi->kstart[k + 2] += (uint32_t)(bi->bmask[r] >> k & 1);
	}
	for (uint32_t k = 0; k < bi->d; k++)
		bi->kstart[k + 2] += bi->kstart[k + 1];
	bi->kblock = xmalloc(((size_t)bi->kstart[bi->d + 1] + 1) * sizeof(uint32_t));
	for (uint32_t r = 0; r < n; r++)
		for (uint64_t m = bi->bmask[r]; m; m &= m - 1)
			bi->kblock[bi->kstart[__builtin_ctzll(m) + 1]++] = r;
}

/* The program's transfers of the phase (copies: dst 0, the peer is the
 * sender; reductions: src 0, the peer is the receiver). */
static int base_index(const struct patch_phase *pp, struct base_index *bi, struct ofc_error *err)
{
	const struct schedule *s = &pp->r->prog;
	uint32_t n = pp->g->n, D = pp->D;

	memset(bi, 0, sizeof(*bi));
	bi->btime = xcalloc(s->nxfers + 1, sizeof(uint32_t));
	bi->bkey = xcalloc(s->nxfers + 1, 1);
	bi->bstart = xcalloc((size_t)n + 2, sizeof(uint32_t));
	for (uint32_t so = 0; so < D; so++) {
		uint32_t step = pp->first + so, t = pp->reverse ? D - so : so + 1;

		for (size_t i = s->step_start[step]; i < s->step_start[step + 1]; i++) {
			const struct xfer *x = &s->xfers[i];
			uint32_t peer = pp->reverse ? x->dst : x->src, k;

			if (xfer_owner(x) != 0 || x->block >= n || xfer_blocks(x) != 1)
				return ofc_error_set(err, OFC_E_INPUT,
						     "the healthy program is not node 0's own");
			k = key_of(bi, peer, x->lane);
			if (k == UINT32_MAX) {
				if (bi->d == BFB_MAX_DEGREE)
					return ofc_error_set(err, OFC_E_INPUT,
							     "more than %u in-links",
							     BFB_MAX_DEGREE);
				k = bi->d++;
				bi->key_peer[k] = peer;
				bi->key_lane[k] = x->lane;
			}
			bi->btime[i] = t;
			bi->bkey[i] = (uint8_t)k;
			bi->bstart[x->block + 2]++;
		}
	}
	bi->load = xcalloc((size_t)(bi->d + 1) * (D + 1), sizeof(uint64_t));
	for (uint32_t r = 0; r < n; r++)
		bi->bstart[r + 2] += bi->bstart[r + 1];
	bi->bpiece = xmalloc((s->nxfers + 1) * sizeof(uint32_t));
	for (uint32_t so = 0; so < D; so++)
		for (size_t i = s->step_start[pp->first + so];
		     i < s->step_start[pp->first + so + 1]; i++) {
			const struct xfer *x = &s->xfers[i];

			bi->bpiece[bi->bstart[x->block + 1]++] = (uint32_t)i;
			bi->load[(size_t)bi->bkey[i] * (D + 1) + bi->btime[i]] += x->length;
		}
	key_blocks(bi, n);
	return 0;
}

static void base_index_free(struct base_index *bi)
{
	free(bi->load);
	free(bi->bstart);
	free(bi->bpiece);
	free(bi->btime);
	free(bi->bkey);
	free(bi->bmask);
	free(bi->kstart);
	free(bi->kblock);
}

/* The raised sets of u (row d) and of its in-neighbours peer[k] (row k)
 * spread over rows of n entries (zero where not raised), or taken back. */
static void spread(const struct patch_phase *pp, uint32_t u, const uint32_t *peer, uint32_t d,
		   uint16_t *rows, bool clear)
{
	uint32_t n = pp->g->n;

	for (uint32_t k = 0; k <= d; k++) {
		uint32_t x = k < d ? peer[k] : u;
		uint16_t *row = rows + (size_t)k * n;

		for (uint32_t i = pp->rx_off[x]; i < pp->rx_off[x + 1]; i++)
			row[pp->rx_w[i]] = clear ? 0 : pp->rx_d[i];
	}
}

/* d'(w, x): root x's raised distance spread over row, else the healthy
 * one (a raised distance is never 0: w is not x). A binary search in x's
 * raised set, the lookup before, was a twentieth of the answer. */
static inline uint32_t ddist(const uint16_t *row, const struct patch_root *x, uint32_t w)
{
	return row[w] ? row[w] : patch_rdist(x, w);
}

struct owner_job {
	const struct patch_phase *pp;
	const struct base_index *bi;
	const uint32_t *owners;
	/* per worker */
	uint8_t **wmark;
	uint32_t **wlist;
	uint64_t **load;
	uint16_t **raised;   /* (most in-links + 1) x n, zero between owners */
	struct piecebuf *pb; /* patch_out's: worker wid's step so at wid * D + so */
	bool *failed;
	char (*why)[160];
};

/* x at the phase's step so, where it ends up: after the step's whole
 * nodes' pieces in the schedule, worker by worker (bfb_view_gather) */
static void emit(struct owner_job *j, unsigned wid, uint32_t so, const struct xfer *x)
{
	*piecebuf_put(&j->pb[(size_t)wid * j->pp->D + so]) = *x;
}

/* u's in-links in H: (peer, the sender's port, its arc of g) */
static uint32_t in_links(const struct patch_phase *pp, uint32_t u, uint32_t *peer, uint32_t *lane,
			 uint32_t *arc)
{
	const struct graph *g = pp->g;
	uint32_t k = 0;

	if (pp->reverse) {
		for (uint32_t a = g->off[u]; a < g->off[u + 1]; a++, k++) {
			peer[k] = g->adj[a];
			lane[k] = a - g->off[u];
			arc[k] = a;
		}
		return k;
	}
	for (uint32_t i = pp->in_off[u]; i < pp->in_off[u + 1]; i++, k++) {
		arc[k] = pp->in_arc[i];
		peer[k] = pp->tails[arc[k]];
		lane[k] = arc[k] - g->off[peer[k]];
	}
	return k;
}

/* One block's unit over cands (their loads at its step), to a common
 * level; the pieces written in offset order. */
static uint32_t water_fill(uint64_t *const *cl, uint32_t m, uint32_t *amount)
{
	uint32_t ord[BFB_MAX_DEGREE];
	uint64_t sum = 0, level = 0;
	uint32_t j = 0;

	if (m == 1) { /* (most blocks: one in-neighbour a step nearer) */
		amount[0] = SCHED_ONE;
		return 1;
	}
	for (uint32_t i = 0; i < m; i++) {
		uint32_t k = i;

		while (k > 0 && *cl[ord[k - 1]] > *cl[i]) {
			ord[k] = ord[k - 1];
			k--;
		}
		ord[k] = i;
	}
	/* the level over the j lowest: (SCHED_ONE + their sum) / j */
	for (j = 1; j <= m; j++) {
		sum += *cl[ord[j - 1]];
		level = (SCHED_ONE + sum) / j;
		if (j == m || level <= *cl[ord[j]])
			break;
	}
	uint64_t given = 0;
	for (uint32_t i = 0; i < m; i++)
		amount[i] = 0;
	for (uint32_t i = 0; i < j; i++) {
		uint64_t a = level > *cl[ord[i]] ? level - *cl[ord[i]] : 0;

		amount[ord[i]] = (uint32_t)a;
		given += a;
	}
	amount[ord[0]] += (uint32_t)(SCHED_ONE - given); /* the rounding */
	return j;
}

static void one_owner(void *arg, size_t oi, unsigned wid)
{
	struct owner_job *j = arg;
	const struct patch_phase *pp = j->pp;
	const struct base_index *bi = j->bi;
	uint32_t u = j->owners[oi], D = pp->D, n = pp->g->n;
	uint32_t peer[BFB_MAX_DEGREE] = {0}, lane[BFB_MAX_DEGREE], arc[BFB_MAX_DEGREE],
		 k0[BFB_MAX_DEGREE], of0[BFB_MAX_DEGREE + 1];
	uint8_t *wmark = j->wmark[wid];
	uint32_t *wl = j->wlist[wid], nw = 0;
	uint64_t *load = j->load[wid];
	uint16_t *raised = j->raised[wid];

	if (j->failed[wid])
		return;
	uint32_t d = in_links(pp, u, peer, lane, arc);
	struct patch_root at[BFB_MAX_DEGREE + 1]; /* peer[k]'s, then u's */
	spread(pp, u, peer, d, raised, false);
	bool live[BFB_MAX_DEGREE]; /* in-link k not failed */
	for (uint32_t k = 0; k <= d; k++)
		patch_root_init(&at[k], pp->row0, pp->G, pp->high, k < d ? peer[k] : u);
	for (uint32_t k = 0; k < d; k++)
		live[k] = !pp->gone[arc[k]];
	for (uint32_t k = 0; k <= bi->d; k++)
		of0[k] = UINT32_MAX;
	for (uint32_t k = 0; k < d; k++) {
		k0[k] = key_of(bi, patch_sub(pp->G, pp->high, peer[k], u), lane[k]);
		if (k0[k] != UINT32_MAX)
			of0[k0[k]] = k;
	}
	/* the blocks that change */
#define ADD(w)                                                                                     \
	do {                                                                                       \
		uint32_t w_ = (w);                                                                 \
		if (w_ != u && !wmark[w_] && !(pp->absent && pp->absent[w_])) {                    \
			wmark[w_] = 1;                                                             \
			wl[nw++] = w_;                                                             \
		}                                                                                  \
	} while (0)
	for (uint32_t i = pp->rx_off[u]; i < pp->rx_off[u + 1]; i++)
		ADD(pp->rx_w[i]);
	for (uint32_t k = 0; k < d; k++) {
		/* a source farther from in-neighbour k than it was: k is no
		 * longer a candidate for it (distances only grow), which moves
		 * the block only where its healthy pieces came over k (its
		 * distance to u the same: raised at u, it was added above) */
		for (uint32_t i = pp->rx_off[peer[k]]; i < pp->rx_off[peer[k] + 1]; i++) {
			uint32_t w = pp->rx_w[i], r;

			if (w == u || wmark[w])
				continue;
			r = patch_sub(pp->G, pp->high, w, u);
			if (k0[k] == UINT32_MAX ? bi->bmask[r] != 0 : bi->bmask[r] >> k0[k] & 1)
				ADD(w);
		}
		if (!pp->gone[arc[k]] || k0[k] == UINT32_MAX)
			continue;
		/* a failed in-link: every block whose healthy pieces crossed it */
		for (uint32_t i = bi->kstart[k0[k]]; i < bi->kstart[k0[k] + 1]; i++)
			ADD(sched_group_add(pp->G, bi->kblock[i], u));
	}
#undef ADD
	if (!nw) {
		spread(pp, u, peer, d, raised, true);
		return;
	}
	/* the loads the kept blocks leave (not the changed ones', nor the
	 * failed hosts', which are dropped) */
	for (uint32_t k = 0; k < d; k++) {
		if (k0[k] == UINT32_MAX)
			memset(load + (size_t)k * (D + 1), 0, ((size_t)D + 1) * sizeof(uint64_t));
		else
			memcpy(load + (size_t)k * (D + 1), bi->load + (size_t)k0[k] * (D + 1),
			       ((size_t)D + 1) * sizeof(uint64_t));
	}
	for (uint32_t i = 0; i < nw + pp->nabsent; i++) {
		uint32_t r =
		    patch_sub(pp->G, pp->high, i < nw ? wl[i] : pp->absent_list[i - nw], u);

		for (uint32_t p = bi->bstart[r]; p < bi->bstart[r + 1]; p++) {
			uint32_t x = bi->bpiece[p], k = of0[bi->bkey[x]];

			if (k != UINT32_MAX)
				load[(size_t)k * (D + 1) + bi->btime[x]] -=
				    pp->r->prog.xfers[x].length;
		}
	}
	/* each changed block at its degraded step, water-filled */
	for (uint32_t i = 0; i < nw && !j->failed[wid]; i++) {
		uint32_t w = wl[i], t = ddist(raised + (size_t)d * n, &at[d], w), m = 0,
			 ck[BFB_MAX_DEGREE], amount[BFB_MAX_DEGREE];
		uint64_t *cl[BFB_MAX_DEGREE];

		for (uint32_t k = 0; k < d && t >= 1; k++)
			if (live[k] && ddist(raised + (size_t)k * n, &at[k], w) + 1 == t) {
				ck[m] = k;
				cl[m++] = &load[(size_t)k * (D + 1) + t];
			}
		if (!m || t > D) {
			j->failed[wid] = true;
			snprintf(j->why[wid], sizeof(j->why[wid]),
				 "BFB patch: node %u has no in-link for block %u at step %u "
				 "(internal error)",
				 u, w, t);
			break;
		}
		water_fill(cl, m, amount);
		uint32_t off = 0, so = pp->reverse ? D - t : t - 1;
		for (uint32_t c = 0; c < m; c++) {
			uint32_t k = ck[c];

			if (!amount[c])
				continue;
			struct xfer x = {.block = w, .offset = off, .length = amount[c]};
			if (pp->reverse) {
				x.src = (uint16_t)u;
				x.dst = (uint16_t)peer[k];
				x.flags = xfer_flags(DIR_NONE, XFER_REDUCE);
			} else {
				x.src = (uint16_t)peer[k];
				x.dst = (uint16_t)u;
				x.flags = xfer_flags(DIR_NONE, XFER_COPY);
			}
			x.lane = (uint16_t)lane[k];
			*cl[c] += amount[c];
			off += amount[c];
			emit(j, wid, so, &x);
		}
	}
	for (uint32_t i = 0; i < nw; i++)
		wmark[wl[i]] = 0;
	spread(pp, u, peer, d, raised, true);
}

int patch_blocks(const struct patch_phase *pp, const uint32_t *owners, uint32_t nowners,
		 unsigned threads, struct patch_out *po, struct ofc_error *err)
{
	struct base_index bi;
	struct owner_job j = {.pp = pp, .bi = &bi, .owners = owners};
	uint32_t n = pp->g->n;
	int rc = 0;

	if (base_index(pp, &bi, err) < 0) {
		base_index_free(&bi);
		return -1;
	}
	unsigned th = parallel_workers(nowners ? nowners : 1, 4, threads);
	uint32_t most = 0; /* in-links of a node in H */
	for (uint32_t u = 0; u < n; u++) {
		uint32_t din = pp->reverse ? pp->g->off[u + 1] - pp->g->off[u]
					   : pp->in_off[u + 1] - pp->in_off[u];

		most = din > most ? din : most;
	}
	j.raised = xcalloc(th, sizeof(uint16_t *));
	j.wmark = xcalloc(th, sizeof(uint8_t *));
	j.wlist = xcalloc(th, sizeof(uint32_t *));
	j.load = xcalloc(th, sizeof(uint64_t *));
	po->D = pp->D;
	po->nworkers = th;
	po->pb = xcalloc((size_t)th * pp->D + 1, sizeof(struct piecebuf));
	j.pb = po->pb;
	j.failed = xcalloc(th, sizeof(bool));
	j.why = xcalloc(th, sizeof(*j.why));
	for (unsigned i = 0; i < th; i++) {
		j.wmark[i] = xcalloc(n, 1);
		j.raised[i] = xcalloc(((size_t)most + 1) * n, sizeof(uint16_t));
		j.wlist[i] = xmalloc((size_t)n * sizeof(uint32_t));
		j.load[i] = xmalloc((size_t)BFB_MAX_DEGREE * (pp->D + 1) * sizeof(uint64_t));
	}
	if (nowners)
		parallel_for(nowners, 4, th, one_owner, &j);
	for (size_t b = 0; b < (size_t)th * pp->D; b++)
		po->pieces += piecebuf_count(&po->pb[b]);
	for (unsigned i = 0; i < th; i++) {
		if (j.failed[i] && rc == 0)
			rc = ofc_error_set(err, OFC_E_RUNTIME, "%s", j.why[i]);
		free(j.wmark[i]);
		free(j.raised[i]);
		free(j.wlist[i]);
		free(j.load[i]);
	}
	free(j.wmark);
	free(j.raised);
	free(j.wlist);
	free(j.load);
	free(j.failed);
	free(j.why);
	base_index_free(&bi);
	return rc;
}

void patch_out_free(struct patch_out *po)
{
	for (size_t b = 0; po->pb && b < (size_t)po->nworkers * po->D; b++)
		piecebuf_free(&po->pb[b]);
	free(po->pb);
	memset(po, 0, sizeof(*po));
}
