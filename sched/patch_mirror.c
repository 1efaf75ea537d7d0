/* Whether a patched allreduce may be checked by its copy phase alone (part
 * of sched_verify_patched, patch.c), and whether a program is mirrored
 * (sched_mirror_of: the patch's generation asks it of its base).
 *
 * On a graph equal to its transpose arc for arc (graph_arc_twins), with
 * the arcs gone closed under twins, an allreduce whose reduction step
 * R - 1 - j holds exactly the mirrors (sched_xfer_mirror) of its copy step
 * R + j, in order, base and patch alike, has a reduction phase that is its
 * copy phase run backwards on g^T = g without the same arcs (Zhao et al.,
 * Cor. 3.1). The check reads a reduction as that allgather already (patch.c):
 * a mirror has the copy's owner, block, part and time, its sender the
 * copy's, over the twin arc. So every table the reduction phase would build
 * is the copy phase's, arc for twin arc, and it is valid exactly when the
 * copy phase is; its link loads are the copy phase's, step R - 1 - j's being
 * step R + j's on the twin arcs. What is checked here is only that the
 * schedule is so mirrored: linearly, transfer for transfer (no hashing, no
 * sorting), the patch on every core. Anything else gets both phases. */
#include "sched/patch_check.h"

#include <stdlib.h>
#include <string.h>

/* Whether every node's port j has its twin at one port, the same at
 * every node: then a translate's mirror is the mirror's translate (the
 * base's programs are node 0's translated), as on a torus or a hypercube,
 * whose port j leads to u + s_j and back by the port of -s_j. */
static bool twins_keep_ports(const struct graph *g, const uint32_t *twin)
{
	uint32_t d = g->off[1] - g->off[0];

	for (uint32_t u = 0; u < g->n; u++) {
		if (g->off[u + 1] - g->off[u] != d)
			return false;
		for (uint32_t j = 0; j < d; j++) {
			uint32_t a = g->off[u] + j, a0 = g->off[0] + j;

			if (twin[a] - g->off[g->adj[a]] != twin[a0] - g->off[g->adj[a0]])
				return false;
		}
	}
	return true;
}

static bool gone_closed(const bool *gone, const uint32_t *twin, uint32_t m)
{
	for (uint32_t a = 0; gone && a < m; a++)
		if (gone[a] != gone[twin[a]])
			return false;
	return true;
}

/* What the mirror test compares a reduction with: sched_xfer_mirror of
 * copy x, by its port: the twin of port j is port tl[j] at every node
 * (twins_keep_ports), so the mirror's port is tl[x's] wherever x's port
 * leads to its dst, which the copy phase's check asks of every copy (a
 * lookup in a few ports and a compare of the bytes, where the twin's arc
 * by x's nodes and a compare by field were 83 instructions a copy, as
 * many as the copies' own check). */
struct mirror {
	uint32_t d; /* ports a node */
	const uint16_t *tl;
	const struct schedule *s;
	uint32_t R;
	size_t lo, n; /* the copy phase's transfers: [lo, lo + n) */
	uint8_t *bad; /* per chunk */
};

static uint32_t steps_size(const struct schedule *s, uint32_t t)
{
	return t < s->nsteps ? sched_step_size(s, t) : 0;
}

/* the bytes compared are the fields: no padding between them */
_Static_assert(sizeof(struct xfer) == 20, "struct xfer has padding");

/* Copy x and z, the transfer at its place in the mirror step. */
static inline bool mirrored_one(const struct mirror *k, const struct xfer *x, const struct xfer *z)
{
	struct xfer y = *x;

	if (x->lane >= k->d || x->run)
		return false; /* no mirror: the full check says why */
	y.src = x->dst;
	y.dst = x->src;
	y.lane = k->tl[x->lane];
	y.flags = (uint8_t)(x->flags | 4u); /* as sched_xfer_mirror */
	return !memcmp(z, &y, sizeof(y));
}

#define MIRROR_GRAIN 65536

/* Chunk j of the copies, a step's run at a time beside its mirror's. */
static void mirror_chunk(void *arg, size_t j, unsigned wid)
{
	struct mirror *k = arg;
	const struct schedule *s = k->s;
	size_t lo = k->lo + j * MIRROR_GRAIN, end = k->lo + k->n;
	size_t hi = lo + MIRROR_GRAIN < end ? lo + MIRROR_GRAIN : end;
	uint32_t t = k->R;

	(void)wid;
	while (s->step_start[t + 1] <= lo)
		t++;
	for (size_t i = lo; i < hi; t++) {
		size_t stop = s->step_start[t + 1] < hi ? s->step_start[t + 1] : hi;
		size_t at = s->step_start[2 * k->R - 1 - t] + (i - s->step_start[t]);
		const struct xfer *x = s->xfers + i, *z = s->xfers + at;

		for (; i < stop; i++, x++, z++)
			if (!mirrored_one(k, x, z)) {
				k->bad[j] = 1;
				return;
			}
	}
}

/* s's steps R - 1 - j the mirrors of its steps R + j, in order, for every
 * j (R: the base's half, s's steps past its own empty); on every core
 * where threads. */
static bool mirrored(const uint16_t *tl, uint32_t d, const struct schedule *s, uint32_t R,
		     bool threads)
{
	struct mirror k = {.d = d, .tl = tl, .s = s, .R = R};
	size_t chunks;
	bool ok = true;

	if (s->nsteps > 2 * R)
		return false;
	for (uint32_t j = 0; j < R; j++)
		if (steps_size(s, R - 1 - j) != steps_size(s, R + j))
			return false;
	if (s->nsteps <= R)
		return true; /* no transfers at all (the sizes above) */
	k.lo = s->step_start[R];
	k.n = s->nxfers - k.lo;
	chunks = (k.n + MIRROR_GRAIN - 1) / MIRROR_GRAIN;
	k.bad = xcalloc(chunks + 1, 1);
	parallel_for(chunks, 1, threads ? 0 : 1, mirror_chunk, &k);
	for (size_t j = 0; j < chunks && ok; j++)
		ok = !k.bad[j];
	free(k.bad);
	return ok;
}

/* Node 0's port j's twin port, tl[j] (the same at every node where
 * twins_keep_ports), d of them; the caller frees it. */
static uint16_t *twin_ports(const struct graph *g, const uint32_t *twin, uint32_t d)
{
	uint16_t *tl = xmalloc(((size_t)d + 1) * sizeof(uint16_t));

	for (uint32_t j = 0; j < d; j++)
		tl[j] = (uint16_t)(twin[j] - g->off[g->adj[j]]);
	return tl;
}

uint32_t *sched_mirror_of(const struct graph *g, const bool *gone, const struct schedule *s,
			  bool threads)
{
	uint32_t R = s->nsteps / 2, d, *twin;
	uint16_t *tl;
	bool ok;

	if (s->collective != SCHED_ALLREDUCE || s->nsteps % 2 || g->n < 2)
		return NULL;
	twin = graph_arc_twins(g);
	if (!twin || !twins_keep_ports(g, twin) || !gone_closed(gone, twin, g->m)) {
		free(twin);
		return NULL;
	}
	d = g->off[1] - g->off[0];
	tl = twin_ports(g, twin, d);
	ok = mirrored(tl, d, s, R, threads);
	free(tl);
	if (!ok) {
		free(twin);
		return NULL;
	}
	return twin;
}

bool pcheck_mirrored(const struct pcheck *c)
{
	const struct schedule *b = &c->r->prog, *q = &c->p->prog;
	const struct graph *g = c->g;
	uint32_t *twin, d;
	uint16_t *tl;
	bool ok;

	if (q->collective != SCHED_ALLREDUCE || c->S != b->nsteps / 2 ||
	    !(twin = sched_mirror_of(g, c->gone, b, false)))
		return false;
	d = g->off[1] - g->off[0];
	tl = twin_ports(g, twin, d);
	ok = mirrored(tl, d, q, b->nsteps / 2, true);
	free(tl);
	free(twin);
	return ok;
}
