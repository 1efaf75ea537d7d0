/* A patched schedule's link loads without expanding it (part of
 * sched_verify_patched, patch.c): the base's per step, changed where the
 * patch moves pieces. */
#include "sched/patch_check.h"

#include <stdlib.h>
#include <string.h>

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The most one arc carries among xs (k transfers of a step of node 0's
 * program, whose arcs are one of each orbit: each arc of the fabric
 * carries what its orbit's arc does). */
static double step_most(const struct xfer *xs, size_t k, uint64_t *scratch)
{
	double most = 0, cur = 0;

	for (size_t i = 0; i < k; i++)
		scratch[i] = (uint64_t)xs[i].src << 48 | (uint64_t)xs[i].lane << 32 | xs[i].length;
	qsort(scratch, k, sizeof(uint64_t), cmp_u64);
	for (size_t i = 0; i < k; i++) {
		if (i && scratch[i] >> 32 != scratch[i - 1] >> 32)
			cur = 0;
		cur += (double)(uint32_t)scratch[i] / SCHED_ONE;
		if (cur > most)
			most = cur;
	}
	return most;
}

/* A base transfer in c->bidx's order (by phase and block): its length,
 * its step, and its arc as one of node 0's (src, lane) classes, whose
 * port at an owner a bucket finds once (the group's sum, the arc's and
 * its place looked up per transfer of every pair were most of the
 * link loads' time at 8,192 nodes). */
struct brec {
	uint32_t length, t, cls;
};

/* patch_loads by (phase, owner) bucket: in a step of one phase an arc
 * carries what one owner plans (a copy's head, a reduction's tail), so bucket (ph, u)
 * sums the changes on u's arcs (the base's pieces of its pairs planned
 * again and of the failed hosts' blocks less, its patch pieces more) in
 * a table of its phase's steps by its ports, from what partial_cover
 * left in cache-sized runs: no list of the changes by step (80 MB at
 * 8,192 nodes with 1% of the ports failed, and the patch read again). */
struct bloads {
	struct pcheck *c;
	/* the base's load per step and class: tsum[t (ncls + 1) + cls], the
	 * last of a step 0 (no class: an arc the base leaves idle then),
	 * where a scan of the step's arcs by key for each changed cell was
	 * a tenth of the loads' instructions */
	uint64_t *tsum;
	uint32_t ncls;
	uint32_t deg;	  /* the most ports a node has one way */
	struct brec *rec; /* per base transfer, in bidx's order */
	uint64_t *ckey;	  /* the classes: (ph, src, lane), ascending */
	uint32_t cph[3];  /* phase ph's classes: ckey[cph[ph] .. cph[ph + 1]) */
	/* per worker: the table (CELL_FREE where not in use), its entries in
	 * use, each step's most, the base's translates its buckets drop */
	int64_t **tbl;
	uint32_t **list;
	double **most;
	uint64_t *dropped;
	uint32_t **cport; /* per class: its port at the bucket's owner */
	uint32_t **pcls;  /* per port: its arc's class, ncls where none */
};

/* A table cell no change has touched (a sum of loads never comes near:
 * a step's loads are fewer than 2^32 pieces of at most SCHED_ONE), where
 * a byte per cell to say so was a store that every later read of the
 * bucket's fields had to load again after (a byte may alias them). */
#define CELL_FREE INT64_MIN

struct bucket {
	const struct pcheck *c;
	int64_t *tbl; /* the worker's table, its entries in use listed */
	uint32_t *list;
	const struct brec *rec;
	const uint32_t *cport;
	uint32_t ph, u, t0, deg, nt;
	uint64_t dropped; /* the base's translates taken off */
};

/* The first of a[lo .. hi) (ascending) not below key; hi where none. */
static uint32_t lower_bound(const uint64_t *a, uint32_t lo, uint32_t hi, uint64_t key)
{
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (a[mid] < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static inline void bucket_add(struct bucket *k, uint32_t t, uint32_t port, int64_t amount)
{
	uint32_t i = (t - k->t0) * k->deg + port;

	if (port >= k->deg)
		return; /* no port of the owner's (the group moves arcs to arcs) */
	if (k->tbl[i] == CELL_FREE) {
		k->tbl[i] = amount;
		k->list[k->nt++] = i;
	} else {
		k->tbl[i] += amount;
	}
}

/* The base's pieces of relative block r, translated to owner k->u, off. */
static inline void bucket_removed(struct bucket *k, const uint32_t *bstart, uint32_t r)
{
	uint32_t lo = bstart[r], hi = bstart[r + 1];

	k->dropped += hi - lo;
	for (uint32_t j = lo; j < hi; j++)
		bucket_add(k, k->rec[j].t, k->cport[k->rec[j].cls], -(int64_t)k->rec[j].length);
}

/* The port at owner u of each class of phase ph, and the class of each
 * of u's ports (its arc's key as the base's: src - u, its place at src). */
static void bucket_ports(const struct bloads *L, struct bucket *k, unsigned w)
{
	const struct pcheck *c = L->c;
	const struct graph *g = c->g;

	for (uint32_t i = L->cph[k->ph]; i < L->cph[k->ph + 1]; i++) {
		uint32_t src = (uint32_t)(L->ckey[i] >> 16) & 0xffff, lane = L->ckey[i] & 0xffff,
			 a = g->off[pc_add(c, src, k->u)] + lane;

		L->cport[w][i] = k->ph ? a - g->off[k->u] : c->inpos[a];
	}
	for (uint32_t port = 0; port < k->deg; port++) {
		uint32_t a = k->ph ? g->off[k->u] + port : c->in_arcs[c->in_off[k->u] + port];
		uint32_t s = c->tails[a];

		uint64_t key =
		    (uint64_t)k->ph << 32 | (uint64_t)pc_sub(c, s, k->u) << 16 | (a - g->off[s]);
		uint32_t lo = lower_bound(L->ckey, L->cph[k->ph], L->cph[k->ph + 1], key);

		L->pcls[w][port] = lo < L->cph[k->ph + 1] && L->ckey[lo] == key ? lo : L->ncls;
	}
}

static void bucket_loads(void *arg, size_t b, unsigned w)
{
	struct bloads *L = arg;
	const struct pcheck *c = L->c;
	const struct graph *g = c->g;
	struct bucket k = {.c = c,
			   .tbl = L->tbl[w],
			   .list = L->list[w],
			   .rec = L->rec,
			   .cport = L->cport[w],
			   .ph = (uint32_t)(b / c->n),
			   .u = (uint32_t)(b % c->n)};
	bool base = !c->inr[k.u] && !(c->abs && c->abs[k.u]);

	k.t0 = k.ph ? 0 : c->S;
	k.deg = k.ph ? g->off[k.u + 1] - g->off[k.u] : c->in_off[k.u + 1] - c->in_off[k.u];
	if (c->obk[b] == c->obk[b + 1] && (!base || !c->p->nabsent))
		return; /* nothing of its own changed */
	bucket_ports(L, &k, w);
	const uint32_t *bstart = c->bstart + k.ph * c->n;
	for (uint32_t i = (uint32_t)c->obk[b]; i < c->oend[b]; i++)
		bucket_removed(&k, bstart, pc_sub(c, c->oblk[i], k.u));
	for (uint32_t i = 0; i < c->p->nabsent && base; i++)
		bucket_removed(&k, bstart, pc_sub(c, c->p->absent[i], k.u));
	for (size_t i = c->obk[b]; i < c->obk[b + 1]; i++) {
		const struct opiece *pc = &c->opc[i];

		uint32_t tau = opiece_tau(c, pc);

		bucket_add(&k, k.ph ? c->S - tau : tau + c->S - 1, pc->port,
			   (int64_t)(opiece_end(c, pc) - opiece_off(c, pc)));
	}
	for (uint32_t i = 0; i < k.nt; i++) {
		uint32_t e = k.list[i], t = k.t0 + e / k.deg;
		int64_t load = k.tbl[e];

		k.tbl[e] = CELL_FREE;
		if (base)
			load += (int64_t)L->tsum[(size_t)t * (L->ncls + 1) + L->pcls[w][e % k.deg]];
		if ((double)load / SCHED_ONE > L->most[w][t])
			L->most[w][t] = (double)load / SCHED_ONE;
	}
	L->dropped[w] += k.dropped;
}

/* L's classes of node 0's arcs (struct brec) and the base's transfers
 * as records in c->bidx's order. */
static void base_classes(const struct pcheck *c, struct bloads *L)
{
	const struct schedule *b = &c->r->prog;
	uint32_t k = 0;

	L->ckey = xmalloc((b->nxfers + 1) * sizeof(uint64_t));
	L->rec = xmalloc((b->nxfers + 1) * sizeof(struct brec));
	for (size_t i = 0; i < b->nxfers; i++) {
		const struct xfer *x = &b->xfers[i];

		L->ckey[i] =
		    (uint64_t)(xfer_op(x) == XFER_REDUCE) << 32 | (uint64_t)x->src << 16 | x->lane;
	}
	qsort(L->ckey, b->nxfers, sizeof(uint64_t), cmp_u64);
	for (size_t i = 0; i < b->nxfers; i++)
		if (i == 0 || L->ckey[i] != L->ckey[k - 1])
			L->ckey[k++] = L->ckey[i];
	L->cph[0] = 0;
	L->cph[1] = 0;
	while (L->cph[1] < k && !(L->ckey[L->cph[1]] >> 32))
		L->cph[1]++;
	L->cph[2] = k;
	L->ncls = k;
	L->tsum = xcalloc((size_t)b->nsteps * (k + 1) + 1, sizeof(uint64_t));
	for (size_t j = 0; j < b->nxfers; j++) {
		const struct xfer *x = &b->xfers[c->bidx[j]];
		uint64_t key =
		    (uint64_t)(xfer_op(x) == XFER_REDUCE) << 32 | (uint64_t)x->src << 16 | x->lane;
		uint32_t lo = lower_bound(L->ckey, 0, k, key);
		L->rec[j] =
		    (struct brec){.length = x->length, .t = c->bstep[c->bidx[j]], .cls = lo};
		L->tsum[(size_t)L->rec[j].t * (k + 1) + lo] += x->length;
	}
}

/* Each step's busiest arc by bucket (struct bloads) into most[]; the
 * base's translates the buckets drop. */
static uint64_t loads_by_bucket(struct pcheck *c, double *most)
{
	const struct schedule *b = &c->r->prog;
	const struct graph *g = c->g;
	struct bloads L = {.c = c};
	uint32_t S = c->S, steps = S > b->nsteps - S ? S : b->nsteps - S;
	size_t big = 0;

	for (uint32_t t = 0; t < b->nsteps; t++)
		big = sched_step_size(b, t) > big ? sched_step_size(b, t) : big;
	base_classes(c, &L);
	for (uint32_t v = 0; v < c->n; v++) {
		uint32_t out = g->off[v + 1] - g->off[v], in = c->in_off[v + 1] - c->in_off[v];

		L.deg = out > L.deg ? out : L.deg;
		L.deg = in > L.deg ? in : L.deg;
	}
	unsigned th = parallel_workers((size_t)2 * c->n, 64, 0);
	size_t cells = (size_t)steps * L.deg + 1;
	L.tbl = xcalloc(th, sizeof(*L.tbl));
	L.list = xcalloc(th, sizeof(*L.list));
	L.most = xcalloc(th, sizeof(*L.most));
	L.dropped = xcalloc(th, sizeof(*L.dropped));
	L.cport = xcalloc(th, sizeof(*L.cport));
	L.pcls = xcalloc(th, sizeof(*L.pcls));
	for (unsigned w = 0; w < th; w++) {
		L.tbl[w] = xmalloc(cells * sizeof(int64_t));
		for (size_t i = 0; i < cells; i++)
			L.tbl[w][i] = CELL_FREE;
		L.list[w] = xmalloc(cells * sizeof(uint32_t));
		L.most[w] = xcalloc((size_t)b->nsteps + 1, sizeof(double));
		L.cport[w] = xmalloc(((size_t)L.cph[2] + 1) * sizeof(uint32_t));
		L.pcls[w] = xmalloc(((size_t)L.deg + 1) * sizeof(uint32_t));
	}
	parallel_for((size_t)c->nph * c->n, 64, th, bucket_loads, &L);
	uint64_t *scratch = xmalloc((big + 1) * sizeof(uint64_t));
	for (uint32_t t = 0; t < b->nsteps; t++) {
		most[t] = step_most(b->xfers + b->step_start[t], sched_step_size(b, t), scratch);
		for (unsigned w = 0; w < th; w++)
			most[t] = L.most[w][t] > most[t] ? L.most[w][t] : most[t];
	}
	free(scratch);
	uint64_t dropped = 0;
	for (unsigned w = 0; w < th; w++) {
		dropped += L.dropped[w];
		free(L.tbl[w]);
		free(L.list[w]);
		free(L.most[w]);
		free(L.cport[w]);
		free(L.pcls[w]);
	}
	free(L.tbl);
	free(L.list);
	free(L.most);
	free(L.dropped);
	free(L.cport);
	free(L.pcls);
	free(L.rec);
	free(L.ckey);
	free(L.tsum);
	return dropped;
}

/* One phase checked (pcheck_mirrored): the reductions' loads are the
 * copies', step S - 1 - j's on each arc being step S + j's on its twin
 * (the same most: the twins pair the arcs one for one), and their
 * buckets drop what the copies' do (a mirror keeps its owner and
 * block, and the base's steps are mirrored as well). */
static uint64_t loads_mirrored(const struct pcheck *c, double *most, uint64_t dropped)
{
	if (c->nph == 2)
		return dropped;
	for (uint32_t j = 0; j < c->S; j++)
		most[c->S - 1 - j] = most[c->S + j];
	return 2 * dropped;
}

/* Each step's busiest arc: the base's (its arcs are one of each orbit)
 * unless the patch changes the arc, then the base's load on it (none
 * where the owner is in the region or failed) with the changes, by
 * bucket (struct bloads) on every core; summed in step order after (the
 * same sum whatever the threads). And the transfers, from what the
 * buckets took off (a serial pass over the pairs again was 7% of the
 * check at 8,192 nodes): one translate of each base transfer per node
 * outside the region and the failed hosts, less the pieces of the pairs
 * the patch plans and of the failed hosts' blocks, plus the patch's. */
void patch_loads(struct pcheck *c)
{
	const struct schedule *b = &c->r->prog;
	double *most = xcalloc((size_t)b->nsteps + 1, sizeof(double));
	uint64_t dropped = loads_mirrored(c, most, loads_by_bucket(c, most));

	c->rep->ntransfers =
	    (size_t)(c->p->prog.nxfers +
		     (uint64_t)(c->r->group.order - c->p->nregion - c->p->nabsent) * b->nxfers -
		     dropped);
	c->rep->sum_max_link_load = c->rep->max_link_load = 0;
	for (uint32_t t = 0; t < b->nsteps; t++) {
		c->rep->sum_max_link_load += most[t];
		if (most[t] > c->rep->max_link_load)
			c->rep->max_link_load = most[t];
	}
	free(most);
}
