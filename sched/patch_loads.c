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

/* A base piece the patch takes off an arc: the arc (of g) and its length
 * (SCHED_ONE units); kept by step, the step implied by where it lies. */
struct removal {
	uint32_t arc, length;
};

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

/* What the base no longer puts on arcs: its pieces of the pairs the
 * patch plans outside the region and of the failed hosts' blocks (the
 * patch's own transfers add, read from it step by step), put by step in
 * one pass where a count per step says (a list and its sorted copy were
 * 32 bytes a piece, 320 MB at 8,192 nodes with 1% of the ports failed,
 * most of it the kernel's page zeroing). On threads by ranges of the
 * (phase, owner) buckets, each with its own positions per step (the
 * failed hosts' blocks in the last). */
struct rjob {
	const struct pcheck *c;
	unsigned nchunk;
	uint32_t **rel; /* per chunk: its pairs per (phase, block - owner) */
	size_t **pos;	/* per chunk, per step */
	struct removal *out;
};

/* Chunk j's pairs counted by (phase, relative block): what the count per
 * step needs (each stands for the base's pieces of that block). */
static void removals_count(void *arg, size_t j, unsigned wid)
{
	struct rjob *R = arg;
	const struct pcheck *c = R->c;
	size_t nb = (size_t)2 * c->n;
	uint32_t *rel = R->rel[j];

	(void)wid;
	for (size_t ob = nb * j / R->nchunk; ob < nb * (j + 1) / R->nchunk; ob++)
		for (uint32_t k = c->ooff[ob]; k < c->ooff[ob + 1]; k++)
			rel[(ob / c->n) * c->n +
			    sched_group_sub(&c->r->group, c->oblk[k], (uint32_t)(ob % c->n))]++;
}

static void removals_fill(void *arg, size_t j, unsigned wid)
{
	struct rjob *R = arg;
	const struct pcheck *c = R->c;
	const struct schedule *b = &c->r->prog;
	const struct sched_group *G = &c->r->group;
	size_t nb = (size_t)2 * c->n, *pos = R->pos[j];

	(void)wid;
	for (size_t ob = nb * j / R->nchunk; ob < nb * (j + 1) / R->nchunk; ob++)
		for (uint32_t k = c->ooff[ob]; k < c->ooff[ob + 1]; k++) {
			uint32_t ph = (uint32_t)(ob / c->n), u = (uint32_t)(ob % c->n),
				 r = sched_group_sub(G, c->oblk[k], u);

			for (uint32_t i = c->bstart[ph * c->n + r];
			     i < c->bstart[ph * c->n + r + 1]; i++) {
				const struct xfer *x = &b->xfers[c->bidx[i]];
				uint32_t src = sched_group_add(G, x->src, u);

				R->out[pos[c->bstep[c->bidx[i]]]++] =
				    (struct removal){c->g->off[src] + x->lane, x->length};
			}
		}
	for (uint32_t k = 0; j + 1 == R->nchunk && k < c->p->nabsent; k++)
		for (size_t i = 0; i < b->nxfers; i++) {
			const struct xfer *x = &b->xfers[i];
			uint32_t u = sched_group_sub(G, c->p->absent[k], x->block);

			if (c->inr[u] || c->abs[u])
				continue;
			R->out[pos[c->bstep[i]]++] = (struct removal){
			    c->g->off[sched_group_add(G, x->src, u)] + x->lane, x->length};
		}
}

/* The removals by step: step t's at (*out)[at[t] .. at[t + 1]) (at:
 * nsteps + 1), in c->spare where they fit (partial_cover's pieces, done
 * with: memory already faulted in), else in a new array. */
static void removals(struct pcheck *c, size_t *at, struct removal **out)
{
	const struct schedule *b = &c->r->prog;
	uint32_t nsteps = b->nsteps;
	unsigned th = parallel_workers((size_t)2 * c->n, 256, 0);
	struct rjob R = {.c = c, .nchunk = th, .pos = xcalloc(th, sizeof(size_t *))};
	size_t total = 0;

	R.rel = xcalloc(th, sizeof(uint32_t *));
	for (unsigned j = 0; j < th; j++) {
		R.pos[j] = xcalloc((size_t)nsteps + 1, sizeof(size_t));
		R.rel[j] = xcalloc((size_t)2 * c->n, sizeof(uint32_t));
	}
	parallel_for(th, 1, th, removals_count, &R);
	/* a pair of relative block r in phase ph stands for the base's
	 * pieces of (ph, r), each in its step; the failed hosts' blocks'
	 * pieces are the last chunk's */
	for (unsigned j = 0; j < th; j++)
		for (size_t i = 0; i < b->nxfers; i++) {
			const struct xfer *x = &b->xfers[i];
			size_t *in_step = &R.pos[j][c->bstep[i]];

			*in_step += R.rel[j][(xfer_op(x) == XFER_REDUCE) * c->n + x->block];
			for (uint32_t k = 0; j + 1 == th && k < c->p->nabsent; k++) {
				uint32_t u =
				    sched_group_sub(&c->r->group, c->p->absent[k], x->block);

				*in_step += !c->inr[u] && !c->abs[u];
			}
		}
	for (uint32_t t = 0; t < nsteps; t++) {
		at[t] = total;
		for (unsigned j = 0; j < th; j++) {
			size_t k = R.pos[j][t];

			R.pos[j][t] = total;
			total += k;
		}
	}
	at[nsteps] = total;
	if (c->spare && (total + 1) * sizeof(struct removal) <= c->spare_bytes) {
		R.out = c->spare;
		c->spare = NULL;
	} else {
		R.out = xmalloc((total + 1) * sizeof(struct removal));
	}
	parallel_for(th, 1, th, removals_fill, &R);
	for (unsigned j = 0; j < th; j++) {
		free(R.pos[j]);
		free(R.rel[j]);
	}
	free(R.pos);
	free(R.rel);
	*out = R.out;
}

/* patch_loads' steps on threads: each step's busiest arc into most[t],
 * with scratch of its own per worker. */
struct loads {
	struct pcheck *c;
	const struct removal *by;
	const size_t *at;
	double *most;
	int64_t **acc;
	uint8_t **seen;
	uint32_t **list;
	uint64_t **scratch, **key, **sum;
};

static void loads_step(void *arg, size_t ti, unsigned w)
{
	struct loads *L = arg;
	struct pcheck *c = L->c;
	const struct schedule *b = &c->r->prog, *q = &c->p->prog;
	const struct sched_group *G = &c->r->group;
	uint32_t t = (uint32_t)ti;
	int64_t *acc = L->acc[w];
	uint8_t *seen = L->seen[w];
	uint32_t *list = L->list[w];
	uint64_t *key = L->key[w], *sum = L->sum[w];
	double most = c->p->nregion < c->n ? step_most(b->xfers + b->step_start[t],
						       sched_step_size(b, t), L->scratch[w])
					   : 0;
	uint32_t nk = base_arcs(b, t, key, sum), nt = 0;
	size_t kq = t < q->nsteps ? sched_step_size(q, t) : 0,
	       nt_all = L->at[t + 1] - L->at[t] + kq;

	for (size_t i = 0; i < nt_all; i++) {
		const struct xfer *x = i < kq ? &q->xfers[q->step_start[t] + i] : NULL;
		uint32_t a = x ? c->g->off[x->src] + x->lane : L->by[L->at[t] + i - kq].arc;

		if (!seen[a]) {
			uint32_t src = c->tails[a], owner = t < c->S ? src : c->g->adj[a];
			uint64_t kx =
			    (uint64_t)sched_group_sub(G, src, owner) << 16 | (a - c->g->off[src]);

			seen[a] = 1;
			list[nt++] = a;
			acc[a] = 0;
			for (uint32_t j = 0; j < nk && !c->inr[owner] && !(c->abs && c->abs[owner]);
			     j++)
				if (key[j] == kx)
					acc[a] = (int64_t)sum[j];
		}
		acc[a] += x ? (int64_t)x->length : -(int64_t)L->by[L->at[t] + i - kq].length;
	}
	for (uint32_t i = 0; i < nt; i++) {
		if ((double)acc[list[i]] / SCHED_ONE > most)
			most = (double)acc[list[i]] / SCHED_ONE;
		seen[list[i]] = 0;
	}
	L->most[t] = most;
}

/* Each step's busiest arc: the base's (its arcs are one of each orbit)
 * unless the patch changes the arc, then the base's load on it (none
 * where the owner is in the region or failed) with the changes. The
 * changes go by step with a counting sort and are summed per arc in a
 * dense array (a sort of them all was a fifth of the check); the steps
 * on threads (an eighth of the answer at 8,192 nodes on one core),
 * summed in step order after (the same sum whatever the threads). */
void patch_loads(struct pcheck *c)
{
	const struct schedule *b = &c->r->prog, *q = &c->p->prog;
	size_t big = 0, most_t = 0;
	size_t *at = xcalloc((size_t)b->nsteps + 2, sizeof(size_t));
	struct removal *by;

	for (uint32_t t = 0; t < b->nsteps; t++)
		if (sched_step_size(b, t) > big)
			big = sched_step_size(b, t);
	removals(c, at, &by);
	for (uint32_t t = 0; t < b->nsteps; t++) {
		size_t k = at[t + 1] - at[t] + (t < q->nsteps ? sched_step_size(q, t) : 0);

		most_t = k > most_t ? k : most_t;
	}
	unsigned th = parallel_workers(b->nsteps, 1, 0);
	struct loads L = {.c = c, .by = by, .at = at};
	L.most = xcalloc((size_t)b->nsteps + 1, sizeof(double));
	L.acc = xcalloc(th, sizeof(*L.acc));
	L.seen = xcalloc(th, sizeof(*L.seen));
	L.list = xcalloc(th, sizeof(*L.list));
	L.scratch = xcalloc(th, sizeof(*L.scratch));
	L.key = xcalloc(th, sizeof(*L.key));
	L.sum = xcalloc(th, sizeof(*L.sum));
	for (unsigned w = 0; w < th; w++) {
		L.acc[w] = xmalloc(((size_t)c->g->m + 1) * sizeof(int64_t));
		L.seen[w] = xcalloc((size_t)c->g->m + 1, 1);
		L.list[w] = xmalloc((most_t + 1) * sizeof(uint32_t));
		L.scratch[w] = xmalloc((big + 1) * sizeof(uint64_t));
		L.key[w] = xmalloc((big + 1) * sizeof(uint64_t));
		L.sum[w] = xmalloc((big + 1) * sizeof(uint64_t));
	}
	parallel_for(b->nsteps, 1, th, loads_step, &L);
	c->rep->sum_max_link_load = c->rep->max_link_load = 0;
	for (uint32_t t = 0; t < b->nsteps; t++) {
		c->rep->sum_max_link_load += L.most[t];
		if (L.most[t] > c->rep->max_link_load)
			c->rep->max_link_load = L.most[t];
	}
	for (unsigned w = 0; w < th; w++) {
		free(L.acc[w]);
		free(L.seen[w]);
		free(L.list[w]);
		free(L.scratch[w]);
		free(L.key[w]);
		free(L.sum[w]);
	}
	free(L.acc);
	free(L.seen);
	free(L.list);
	free(L.scratch);
	free(L.key);
	free(L.sum);
	free(L.most);
	free(by);
	free(at);
}
