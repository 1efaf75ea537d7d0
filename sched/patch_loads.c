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

/* What the base puts in step t on each arc of node 0's program, by
 * (src, lane): the few distinct ones (a node's in-links, or its out-links
 * in a reduction) summed once, into key[] and sum[]; their count. */
static uint32_t base_arcs(const struct schedule *b, uint32_t t, uint64_t *key, uint64_t *sum)
{
	uint32_t k = 0;

	for (size_t i = b->step_start[t]; i < b->step_start[t + 1]; i++) {
		uint64_t kx = (uint64_t)b->xfers[i].src << 16 | b->xfers[i].lane;
		uint32_t j = 0;

		while (j < k && key[j] != kx)
			j++;
		if (j == k) {
			key[k] = kx;
			sum[k++] = 0;
		}
		sum[j] += b->xfers[i].length;
	}
	return k;
}

/* patch_loads by (phase, owner) bucket: in a step of one phase an arc
 * carries what one owner plans (a copy's head, a reduction's tail), so bucket (ph, u)
 * sums the changes on u's arcs (the base's pieces of its pairs planned
 * again and of the failed hosts' blocks less, its patch pieces more) in
 * a table of its phase's steps by its ports, from what partial_cover
 * left in cache-sized runs: no list of the changes by step (80 MB at
 * 8,192 nodes with 1% of the ports failed, and the patch read again). */
struct bloads {
	struct pcheck *c;
	/* the base's load per step on its arcs by (src - owner) << 16 |
	 * port: step t's bkey/bsum[boff[t] .. boff[t + 1]) */
	uint32_t *boff;
	uint64_t *bkey, *bsum;
	uint32_t deg; /* the most ports a node has one way */
	/* per worker: the table, its entries in use, each step's most, the
	 * base's translates its buckets drop */
	int64_t **tbl;
	uint8_t **seen;
	uint32_t **list;
	double **most;
	uint64_t *dropped;
};

struct bucket {
	const struct pcheck *c;
	int64_t *tbl; /* the worker's table, its entries in use and their list */
	uint8_t *seen;
	uint32_t *list;
	uint32_t ph, u, t0, deg, nt;
	uint64_t dropped; /* the base's translates taken off */
};

static inline void bucket_add(struct bucket *k, uint32_t t, uint32_t port, int64_t amount)
{
	uint32_t i = (t - k->t0) * k->deg + port;

	if (port >= k->deg)
		return; /* no port of the owner's (the group moves arcs to arcs) */
	if (!k->seen[i]) {
		k->seen[i] = 1;
		k->tbl[i] = 0;
		k->list[k->nt++] = i;
	}
	k->tbl[i] += amount;
}

/* The base's pieces of relative block r, translated to owner k->u, off. */
static void bucket_removed(struct bucket *k, uint32_t r)
{
	const struct pcheck *c = k->c;
	const struct graph *g = c->g;

	k->dropped += c->bstart[k->ph * c->n + r + 1] - c->bstart[k->ph * c->n + r];
	for (uint32_t j = c->bstart[k->ph * c->n + r]; j < c->bstart[k->ph * c->n + r + 1]; j++) {
		const struct xfer *x = &c->r->prog.xfers[c->bidx[j]];
		uint32_t a = g->off[sched_group_add(&c->r->group, x->src, k->u)] + x->lane;

		bucket_add(k, c->bstep[c->bidx[j]], k->ph ? a - g->off[k->u] : c->inpos[a],
			   -(int64_t)x->length);
	}
}

static void bucket_loads(void *arg, size_t b, unsigned w)
{
	struct bloads *L = arg;
	const struct pcheck *c = L->c;
	const struct graph *g = c->g;
	struct bucket k = {.c = c,
			   .tbl = L->tbl[w],
			   .seen = L->seen[w],
			   .list = L->list[w],
			   .ph = (uint32_t)(b / c->n),
			   .u = (uint32_t)(b % c->n)};

	k.t0 = k.ph ? 0 : c->S;
	k.deg = k.ph ? g->off[k.u + 1] - g->off[k.u] : c->in_off[k.u + 1] - c->in_off[k.u];
	for (uint32_t i = c->ooff[b]; i < c->ooff[b + 1]; i++)
		bucket_removed(&k, sched_group_sub(&c->r->group, c->oblk[i], k.u));
	for (uint32_t i = 0; i < c->p->nabsent && !c->inr[k.u] && !c->abs[k.u]; i++)
		bucket_removed(&k, sched_group_sub(&c->r->group, c->p->absent[i], k.u));
	for (size_t i = c->obk[b]; i < c->obk[b + 1]; i++) {
		const struct opiece *pc = &c->opc[i];

		bucket_add(&k, k.ph ? c->S - pc->tau : pc->tau + c->S - 1, pc->port,
			   (int64_t)(pc->end - pc->off));
	}
	for (uint32_t i = 0; i < k.nt; i++) {
		uint32_t e = k.list[i], t = k.t0 + e / k.deg, port = e % k.deg;
		uint32_t a = k.ph ? g->off[k.u] + port : c->in_arcs[c->in_off[k.u] + port];
		uint32_t src = c->tails[a];
		uint64_t kx =
		    (uint64_t)sched_group_sub(&c->r->group, src, k.u) << 16 | (a - g->off[src]);
		int64_t load = k.tbl[e];

		for (uint32_t j = L->boff[t];
		     j < L->boff[t + 1] && !c->inr[k.u] && !(c->abs && c->abs[k.u]); j++)
			if (L->bkey[j] == kx)
				load += (int64_t)L->bsum[j];
		if ((double)load / SCHED_ONE > L->most[w][t])
			L->most[w][t] = (double)load / SCHED_ONE;
		k.seen[e] = 0;
	}
	L->dropped[w] += k.dropped;
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

	L.boff = xcalloc((size_t)b->nsteps + 1, sizeof(uint32_t));
	L.bkey = xmalloc((b->nxfers + 1) * sizeof(uint64_t));
	L.bsum = xmalloc((b->nxfers + 1) * sizeof(uint64_t));
	for (uint32_t t = 0; t < b->nsteps; t++) {
		L.boff[t + 1] = L.boff[t] + base_arcs(b, t, L.bkey + L.boff[t], L.bsum + L.boff[t]);
		big = sched_step_size(b, t) > big ? sched_step_size(b, t) : big;
	}
	for (uint32_t v = 0; v < c->n; v++) {
		uint32_t out = g->off[v + 1] - g->off[v], in = c->in_off[v + 1] - c->in_off[v];

		L.deg = out > L.deg ? out : L.deg;
		L.deg = in > L.deg ? in : L.deg;
	}
	unsigned th = parallel_workers((size_t)2 * c->n, 64, 0);
	size_t cells = (size_t)steps * L.deg + 1;
	L.tbl = xcalloc(th, sizeof(*L.tbl));
	L.seen = xcalloc(th, sizeof(*L.seen));
	L.list = xcalloc(th, sizeof(*L.list));
	L.most = xcalloc(th, sizeof(*L.most));
	L.dropped = xcalloc(th, sizeof(*L.dropped));
	for (unsigned w = 0; w < th; w++) {
		L.tbl[w] = xmalloc(cells * sizeof(int64_t));
		L.seen[w] = xcalloc(cells, 1);
		L.list[w] = xmalloc(cells * sizeof(uint32_t));
		L.most[w] = xcalloc((size_t)b->nsteps + 1, sizeof(double));
	}
	parallel_for((size_t)2 * c->n, 64, th, bucket_loads, &L);
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
		free(L.seen[w]);
		free(L.list[w]);
		free(L.most[w]);
	}
	free(L.tbl);
	free(L.seen);
	free(L.list);
	free(L.most);
	free(L.dropped);
	free(L.boff);
	free(L.bkey);
	free(L.bsum);
	return dropped;
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
	uint64_t dropped = loads_by_bucket(c, most);

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
