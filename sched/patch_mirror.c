/* Whether a patched allreduce may be checked by its copy phase alone (part
 * of sched_verify_patched, patch.c).
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
 * copy x, where x crosses one arc of g that it names. */
struct mirror {
	const struct graph *g;
	const uint32_t *twin;
	const struct schedule *s;
	uint32_t R;
	size_t lo, n; /* the copy phase's transfers: [lo, lo + n) */
	uint8_t *bad; /* per chunk */
};

static uint32_t steps_size(const struct schedule *s, uint32_t t)
{
	return t < s->nsteps ? sched_step_size(s, t) : 0;
}

static bool xfer_same(const struct xfer *a, const struct xfer *b)
{
	return a->src == b->src && a->dst == b->dst && a->block == b->block &&
	       a->offset == b->offset && a->length == b->length && a->lane == b->lane &&
	       a->run == b->run && a->flags == b->flags;
}

/* Copy i (at step t) and the transfer at its place in step 2R - 1 - t. */
static bool mirrored_one(const struct mirror *k, uint32_t t, size_t i)
{
	const struct schedule *s = k->s;
	const struct xfer *x = &s->xfers[i];
	const struct graph *g = k->g;

	if (x->src >= g->n || x->dst >= g->n || x->run ||
	    x->lane >= g->off[x->src + 1] - g->off[x->src] ||
	    g->adj[g->off[x->src] + x->lane] != x->dst)
		return false; /* no mirror: the full check says why */
	struct xfer y = sched_xfer_mirror(g, k->twin, x);

	return xfer_same(&s->xfers[s->step_start[2 * k->R - 1 - t] + (i - s->step_start[t])], &y);
}

#define MIRROR_GRAIN 65536

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
	for (size_t i = lo; i < hi; i++) {
		while (i >= s->step_start[t + 1])
			t++;
		if (!mirrored_one(k, t, i)) {
			k->bad[j] = 1;
			return;
		}
	}
}

/* s's steps R - 1 - j the mirrors of its steps R + j, in order, for every
 * j (R: the base's half, s's steps past its own empty); on every core
 * where threads. */
static bool mirrored(const struct graph *g, const uint32_t *twin, const struct schedule *s,
		     uint32_t R, bool threads)
{
	struct mirror k = {.g = g, .twin = twin, .s = s, .R = R};
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

bool pcheck_mirrored(const struct pcheck *c)
{
	const struct schedule *b = &c->r->prog, *q = &c->p->prog;
	uint32_t R = b->nsteps / 2, *twin;
	bool ok;

	if (b->collective != SCHED_ALLREDUCE || q->collective != SCHED_ALLREDUCE || b->nsteps % 2 ||
	    c->S != R || c->g->n < 2)
		return false;
	twin = graph_arc_twins(c->g);
	ok = twin && twins_keep_ports(c->g, twin) && gone_closed(c->gone, twin, c->g->m) &&
	     mirrored(c->g, twin, b, R, false) && mirrored(c->g, twin, q, R, true);
	free(twin);
	return ok;
}
