/* Which distances a phase's failures change (bfb/patch.c's search): the
 * raised set of every root x of K = H^T, the sources whose distance to x
 * grew, with the new distance.
 *
 * Found root by root without a full BFS (most roots see no change): from
 * the root x of a BFS over K, the heads of failed arcs that were tight
 * (one level below their tail) lose their distance only when no other
 * tight in-arc from an unchanged node is left, and the loss spreads to
 * the tight out-neighbours of a node that lost it, level by level; the
 * raised nodes' new distances then from their unchanged in-neighbours
 * inwards (the deletion half of Ramalingam and Reps' dynamic shortest
 * paths, for unit lengths). */
#include "bfb/patch_internal.h"

#include <stdlib.h>
#include <string.h>

/* The (root, seed) pairs held at most, 8 bytes each (128 MiB): 1% of
 * torus:128x64's ports has 45,000-55,000 a phase. */
#define PATCH_SEED_MAX ((uint64_t)16 << 20)

/* One phase's search: K = H^T (healthy, its out-arcs), kin and kout the
 * degraded K's in- and out-arcs, the failed arcs of K. */
struct search {
	const struct sched_group *G;
	const struct graph *k, *kin, *kout;
	uint32_t nfail, *ftail, *fhead;
	/* each root's seeds (level << 32 | node), seed[seed_off[x] ..
	 * seed_off[x + 1]): seed_roots' (NULL: too many to hold, each root
	 * tests every failed arc) */
	uint32_t *seed_off;
	uint64_t *seed;
	uint64_t seed_max; /* the (root, seed) pairs held at most */
	const uint16_t *row0;
	uint32_t high;	       /* patch_high(G) */
	uint32_t D;	       /* the farthest level */
	const uint8_t *absent; /* failed hosts: no root, no source (NULL: none) */
	/* per worker */
	uint8_t **mark;	 /* 1 candidate, 2 raised */
	uint32_t **lvl;	 /* D + 3 counters (levels to D + 1), zero between roots */
	uint16_t **tent; /* new distances of the raised */
	uint32_t **cand, **raised;
	/* per worker, m + n + 1: the new distances' starts (n) and the FIFO
	 * past them, then the sort by node's room */
	uint64_t **scratch;
	/* per worker: the raised (root, node, new distance) found */
	uint32_t **ox, **ow;
	uint16_t **od;
	size_t *on, *ocap;
};

static int cmp_node(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* v's nb distinct node ids (of n) ascending, tmp as long: an insertion
 * sort where few, else two counting passes of a byte each where n fits
 * 16 bits (a qsort a root with its comparison calls was a fortieth of the
 * patch's instructions). */
static void sort_nodes(uint32_t *v, uint32_t *tmp, uint32_t nb, uint32_t n)
{
	uint32_t lo[257] = {0}, hi[257] = {0};

	if (nb <= 48) {
		/* most raised sets: the counting passes' 256-entry sums were
		 * an eighth of the search once it ran only on roots seeded */
		for (uint32_t i = 1; i < nb; i++) {
			uint32_t v0 = v[i], j = i;

			for (; j > 0 && v[j - 1] > v0; j--)
				v[j] = v[j - 1];
			v[j] = v0;
		}
		return;
	}
	if (n > 65536) {
		qsort(v, nb, sizeof(uint32_t), cmp_node);
		return;
	}
	for (uint32_t i = 0; i < nb; i++) {
		lo[(v[i] & 255) + 1]++;
		hi[(v[i] >> 8 & 255) + 1]++;
	}
	for (uint32_t b = 0; b < 256; b++) {
		lo[b + 1] += lo[b];
		hi[b + 1] += hi[b];
	}
	for (uint32_t i = 0; i < nb; i++)
		tmp[lo[v[i] & 255]++] = v[i];
	for (uint32_t i = 0; i < nb; i++)
		v[hi[tmp[i] >> 8 & 255]++] = tmp[i];
}

static void found(struct search *sr, unsigned wid, uint32_t x, uint32_t w, uint16_t d)
{
	if (sr->on[wid] == sr->ocap[wid]) {
		sr->ocap[wid] = sr->ocap[wid] ? 2 * sr->ocap[wid] : 1024;
		sr->ox[wid] = xrealloc(sr->ox[wid], sr->ocap[wid] * sizeof(uint32_t));
		sr->ow[wid] = xrealloc(sr->ow[wid], sr->ocap[wid] * sizeof(uint32_t));
		sr->od[wid] = xrealloc(sr->od[wid], sr->ocap[wid] * sizeof(uint16_t));
	}
	sr->ox[wid][sr->on[wid]] = x;
	sr->ow[wid][sr->on[wid]] = w;
	sr->od[wid][sr->on[wid]++] = d;
}

/* in[0 .. n) (level << 32 | node, each level at most top) into out by
 * level: a counting sort on at's top + 2 counters, left zero (a qsort
 * of the seeds was a twentieth of the answer); the order within a level
 * changes nothing found. */
static void by_level(uint32_t *at, uint32_t top, const uint64_t *in, uint32_t n, uint64_t *out)
{
	for (uint32_t i = 0; i < n; i++)
		at[(in[i] >> 32) + 1]++;
	for (uint32_t l = 0; l <= top; l++)
		at[l + 1] += at[l];
	for (uint32_t i = 0; i < n; i++)
		out[at[in[i] >> 32]++] = in[i];
	memset(at, 0, ((size_t)top + 2) * sizeof(uint32_t));
}

/* Root x: the nodes whose distance from x grows, and by how much. */
static void root_raised(void *arg, size_t xi, unsigned wid)
{
	struct search *sr = arg;
	uint32_t x = (uint32_t)xi, nseed = 0, nq = 0, qi = 0, si = 0, nr = 0;
	uint8_t *mark = sr->mark[wid];
	uint32_t *q = sr->cand[wid], *rs = sr->raised[wid];
	uint64_t *found_seed = (uint64_t *)sr->cand[wid] + sr->k->n / 2 + 1;
	uint64_t *seed = found_seed + sr->nfail;
	uint32_t *at = sr->lvl[wid];
	struct patch_root fr;

	if (sr->absent && sr->absent[x])
		return; /* a failed host needs no block */
	patch_root_init(&fr, sr->row0, sr->G, sr->high, x);
	/* the seeds (seed_roots', else the heads of failed tight arcs), by
	 * level; then their tight out-neighbours as they lose theirs (a
	 * FIFO: levels ascend) */
	if (sr->seed_off) {
		for (uint32_t i = sr->seed_off[x]; i < sr->seed_off[x + 1]; i++) {
			uint64_t sd = sr->seed[i];

			if (!mark[(uint32_t)sd]) {
				mark[(uint32_t)sd] = 1;
				found_seed[nseed++] = sd;
			}
		}
	} else {
		for (uint32_t i = 0; i < sr->nfail; i++) {
			uint32_t a = sr->ftail[i], b = sr->fhead[i], db = patch_rdist(&fr, b);

			if (b != x && !mark[b] && db == patch_rdist(&fr, a) + 1) {
				mark[b] = 1;
				found_seed[nseed++] = (uint64_t)db << 32 | b;
			}
		}
	}
	if (!nseed)
		return;
	by_level(at, sr->D, found_seed, nseed, seed);
	const uint32_t *ioff = sr->kin->off, *iadj = sr->kin->adj;
	while (si < nseed || qi < nq) {
		uint32_t v, lvl = qi < nq ? patch_rdist(&fr, q[qi]) : UINT32_MAX;

		/* each candidate's level read once: a seed's is in its key */
		if (si < nseed && (uint32_t)(seed[si] >> 32) < lvl) {
			lvl = (uint32_t)(seed[si] >> 32);
			v = (uint32_t)seed[si++];
		} else {
			v = q[qi++];
		}
		/* kept where an unraised in-neighbour is still a level nearer */
		uint32_t ia = ioff[v], end = ioff[v + 1];
		while (ia < end && (mark[iadj[ia]] == 2 || patch_rdist(&fr, iadj[ia]) + 1 != lvl))
			ia++;
		if (ia < end)
			continue;
		mark[v] = 2;
		rs[nr++] = v;
		for (uint32_t a = sr->k->off[v]; a < sr->k->off[v + 1]; a++) {
			uint32_t w = sr->k->adj[a];

			if (!mark[w] && patch_rdist(&fr, w) == lvl + 1) {
				mark[w] = 1;
				q[nq++] = w;
			}
		}
	}
	/* new distances: from the unchanged in-neighbours, then inwards */
	uint16_t *tent = sr->tent[wid];
	for (uint32_t i = 0; i < nr; i++) {
		uint32_t v = rs[i], best = TOPO_UNREACHABLE;

		for (uint32_t a = sr->kin->off[v]; a < sr->kin->off[v + 1]; a++) {
			uint32_t p = sr->kin->adj[a];

			uint32_t dp = patch_rdist(&fr, p) + 1;

			if (mark[p] != 2 && dp < best)
				best = dp;
		}
		tent[v] = (uint16_t)best;
	}
	/* then inwards, nearest first: the lengths are units and every
	 * starting distance is at most D + 1 (an unchanged in-neighbour's
	 * healthy one plus one), so a breadth-first search from them all,
	 * sorted by distance (a counting sort), merged with a FIFO of the
	 * nodes it lowers, whose distances never descend: Dijkstra's order
	 * without a heap. A start a lower node has lowered since is skipped;
	 * a node joins the FIFO once (its first lowering is its last). */
	uint64_t *start = sr->scratch[wid], *unsorted = start + sr->k->n;
	uint32_t ns = 0, *fifo = (uint32_t *)unsorted, fh = 0, ft = 0;
	for (uint32_t i = 0; i < nr; i++)
		if (tent[rs[i]] != TOPO_UNREACHABLE)
			unsorted[ns++] = (uint64_t)tent[rs[i]] << 32 | rs[i];
	by_level(at, sr->D + 1, unsorted, ns, start); /* (the FIFO over them after) */
	for (uint32_t sj = 0; sj < ns || fh < ft;) {
		uint32_t v, dv;

		if (fh == ft || (sj < ns && (uint32_t)(start[sj] >> 32) <= tent[fifo[fh]])) {
			v = (uint32_t)start[sj];
			dv = (uint32_t)(start[sj++] >> 32);
			if (dv != tent[v])
				continue;
		} else {
			v = fifo[fh++];
			dv = tent[v];
		}
		for (uint32_t a = sr->kout->off[v]; a < sr->kout->off[v + 1]; a++) {
			uint32_t w = sr->kout->adj[a];

			if (mark[w] == 2 && dv + 1 < tent[w]) {
				tent[w] = (uint16_t)(dv + 1);
				fifo[ft++] = w;
			}
		}
	}
	/* found by node (a failed host has no block), sorted here on the
	 * root's thread: the raised sets are looked up by node */
	uint32_t nb = 0, *by = (uint32_t *)sr->scratch[wid];
	for (uint32_t i = 0; i < nr; i++)
		if (!sr->absent || !sr->absent[rs[i]])
			by[nb++] = rs[i];
	sort_nodes(by, by + sr->k->n, nb, sr->k->n);
	for (uint32_t i = 0; i < nb; i++)
		found(sr, wid, x, by[i], tent[by[i]]);
	/* the marks cleared for the next root */
	for (uint32_t i = 0; i < nseed; i++)
		mark[(uint32_t)seed[i]] = 0;
	for (uint32_t i = 0; i < nq; i++)
		mark[q[i]] = 0;
}

/* What seed_roots reads: K's tight in-arcs by translation, the failed
 * arcs by head. */
struct seeding {
	uint16_t *tight;  /* per y: K's tight in-arcs of y from root 0 */
	uint32_t *gen;	  /* per y of one: y - its tail, the arc's generator */
	uint32_t *bstart; /* the y of one tight in-arc by generator s: */
	uint32_t *by_gen; /* by_gen[bstart[s] .. bstart[s + 1]) */
	uint32_t *fstart; /* the failed arcs into b: */
	uint32_t *ftail;  /* ftail[fstart[b] .. fstart[b + 1]) */
};

static void seeding_init(struct seeding *sg, const struct search *sr, uint32_t n)
{
	const struct graph *k = sr->k;
	const uint16_t *row0 = sr->row0;

	sg->tight = xcalloc(n, sizeof(uint16_t));
	sg->gen = xmalloc(((size_t)n + 1) * sizeof(uint32_t));
	for (uint32_t u = 0; u < n; u++)
		for (uint32_t a = k->off[u]; a < k->off[u + 1]; a++) {
			uint32_t w = k->adj[a];

			if ((uint32_t)row0[u] + 1 == row0[w]) {
				sg->tight[w]++;
				sg->gen[w] = patch_sub(sr->G, sr->high, w, u);
			}
		}
	sg->bstart = xcalloc((size_t)n + 2, sizeof(uint32_t));
	sg->by_gen = xmalloc(((size_t)n + 1) * sizeof(uint32_t));
	for (uint32_t y = 0; y < n; y++)
		if (sg->tight[y] == 1)
			sg->bstart[sg->gen[y] + 2]++;
	for (uint32_t s = 0; s < n; s++)
		sg->bstart[s + 2] += sg->bstart[s + 1];
	for (uint32_t y = 0; y < n; y++)
		if (sg->tight[y] == 1)
			sg->by_gen[sg->bstart[sg->gen[y] + 1]++] = y;
	sg->fstart = xcalloc((size_t)n + 2, sizeof(uint32_t));
	sg->ftail = xmalloc(((size_t)sr->nfail + 1) * sizeof(uint32_t));
	for (uint32_t i = 0; i < sr->nfail; i++)
		sg->fstart[sr->fhead[i] + 2]++;
	for (uint32_t b = 0; b < n; b++)
		sg->fstart[b + 2] += sg->fstart[b + 1];
	for (uint32_t i = 0; i < sr->nfail; i++)
		sg->ftail[sg->fstart[sr->fhead[i] + 1]++] = sr->ftail[i];
}

static void seeding_free(struct seeding *sg)
{
	free(sg->tight);
	free(sg->gen);
	free(sg->bstart);
	free(sg->by_gen);
	free(sg->fstart);
	free(sg->ftail);
}

/* Root x's seed b at level: counted (seed NULL), else placed. */
static inline void seed_at(struct search *sr, uint32_t x, uint32_t b, uint32_t level)
{
	if (sr->absent && sr->absent[x])
		return; /* no root */
	if (!sr->seed)
		sr->seed_off[x + 2]++;
	else
		sr->seed[sr->seed_off[x + 1]++] = (uint64_t)level << 32 | b;
}

/* Every (root, seed) pair once, to seed_at. */
static void seed_pass(struct search *sr, const struct seeding *sg, uint32_t n)
{
	for (uint32_t b = 0; b < n; b++) {
		uint32_t f0 = sg->fstart[b], nf = sg->fstart[b + 1] - f0;

		/* a failed host: raised or not, it is no source, and with its
		 * arcs all gone no other node's distance is read through it */
		if (sr->absent && sr->absent[b])
			continue;
		if (nf == 1) {
			/* for root x = b - y the arc p -> b is y's one tight
			 * in-arc translated where gen(y) = b - p */
			uint32_t s = patch_sub(sr->G, sr->high, b, sg->ftail[f0]);

			for (uint32_t j = sg->bstart[s]; j < sg->bstart[s + 1]; j++) {
				uint32_t y = sg->by_gen[j];

				seed_at(sr, patch_sub(sr->G, sr->high, b, y), b, sr->row0[y]);
			}
			continue;
		}
		/* two failed in-arcs or more (rare): each root asked whether
		 * they were all of b's tight ones */
		for (uint32_t x = 0; x < n && nf; x++) {
			uint32_t y = patch_sub(sr->G, sr->high, b, x), cut = 0;

			if (!sg->tight[y])
				continue; /* b is the root */
			for (uint32_t i = f0; i < f0 + nf; i++) {
				uint32_t p = patch_sub(sr->G, sr->high, sg->ftail[i], x);

				cut += (uint32_t)sr->row0[p] + 1 == sr->row0[y];
			}
			if (cut == sg->tight[y])
				seed_at(sr, x, b, sr->row0[y]);
		}
	}
}

/* Every root's seeds, the nodes first raised: those whose every tight
 * in-arc failed. A node with a tight in-arc left is raised only where
 * that arc's tail is, and is then reached as the tail's tight
 * out-neighbour (levels ascend): the search from these seeds finds the
 * raised sets a seed at every failed tight arc's head would. Found by
 * G's translations, not by a scan of every failed arc for every root
 * (8,192 roots x 654 arcs at 1% of torus:128x64's ports, the search's
 * largest part): b's tight in-arcs from root x are those of y = b - x
 * from root 0 (G is abelian: a product of cyclic groups, one orbit), so
 * a head whose one failed in-arc p -> b is a seed exactly for the roots
 * b - y with y's one tight in-arc of generator b - p. Two passes: the
 * count of each root's, then them in place where no more than
 * sr->seed_max. */
static void seed_roots(struct search *sr, uint32_t n)
{
	struct seeding sg;

	seeding_init(&sg, sr, n);
	sr->seed_off = xcalloc((size_t)n + 2, sizeof(uint32_t));
	sr->seed = NULL;
	seed_pass(sr, &sg, n);
	uint64_t total = 0;
	for (uint32_t x = 0; x < n; x++)
		total += sr->seed_off[x + 2];
	if (total > sr->seed_max) {
		/* a ring's: n / 2 roots a failed arc; the scan costs as much
		 * and holds nothing */
		free(sr->seed_off);
		sr->seed_off = NULL;
		seeding_free(&sg);
		return;
	}
	for (uint32_t x = 0; x < n; x++)
		sr->seed_off[x + 2] += sr->seed_off[x + 1];
	/* placed at seed_off[x + 1], which then ends x's and starts x + 1's */
	uint64_t *seed = xmalloc(((size_t)sr->seed_off[n + 1] + 1) * sizeof(uint64_t));
	sr->seed = seed;
	seed_pass(sr, &sg, n);
	seeding_free(&sg);
}

/* The search's per-worker buffers, th of them. */
static unsigned search_alloc(struct search *sr, uint32_t n, uint32_t m, unsigned threads)
{
	unsigned th = parallel_workers(n, 64, threads);

	sr->mark = xcalloc(th, sizeof(uint8_t *));
	sr->lvl = xcalloc(th, sizeof(uint32_t *));
	sr->tent = xcalloc(th, sizeof(uint16_t *));
	sr->cand = xcalloc(th, sizeof(uint32_t *));
	sr->raised = xcalloc(th, sizeof(uint32_t *));
	sr->scratch = xcalloc(th, sizeof(uint64_t *));
	sr->ox = xcalloc(th, sizeof(uint32_t *));
	sr->ow = xcalloc(th, sizeof(uint32_t *));
	sr->od = xcalloc(th, sizeof(uint16_t *));
	sr->on = xcalloc(th, sizeof(size_t));
	sr->ocap = xcalloc(th, sizeof(size_t));
	for (unsigned i = 0; i < th; i++) {
		sr->mark[i] = xcalloc(n, 1);
		sr->lvl[i] = xcalloc((size_t)sr->D + 3, sizeof(uint32_t));
		sr->tent[i] = xmalloc((size_t)n * sizeof(uint16_t));
		/* candidates, then the seeds (64-bit) past them, as found and
		 * by level */
		sr->cand[i] =
		    xmalloc(((size_t)n + (size_t)sr->nfail * 4 + 4) * sizeof(uint32_t) * 2);
		sr->raised[i] = xmalloc((size_t)n * sizeof(uint32_t));
		sr->scratch[i] = xmalloc(((size_t)m + n + 1) * sizeof(uint64_t));
	}
	return th;
}

static void search_free(struct search *sr, unsigned th)
{
	for (unsigned i = 0; i < th; i++) {
		free(sr->mark[i]);
		free(sr->lvl[i]);
		free(sr->tent[i]);
		free(sr->cand[i]);
		free(sr->raised[i]);
		free(sr->scratch[i]);
		free(sr->ox[i]);
		free(sr->ow[i]);
		free(sr->od[i]);
	}
	free(sr->mark);
	free(sr->lvl);
	free(sr->tent);
	free(sr->cand);
	free(sr->raised);
	free(sr->scratch);
	free(sr->ox);
	free(sr->ow);
	free(sr->od);
	free(sr->on);
	free(sr->ocap);
	free(sr->ftail);
	free(sr->fhead);
	free(sr->seed_off);
	free(sr->seed);
}

/* The workers' (root, node, distance) found into pp's raised sets by
 * root, ascending. */
static void gather(struct patch_phase *pp, const struct search *sr, unsigned th, uint32_t n)
{
	uint32_t *rx_off = xcalloc((size_t)n + 2, sizeof(uint32_t));
	size_t total = 0;

	for (unsigned i = 0; i < th; i++) {
		for (size_t e = 0; e < sr->on[i]; e++)
			rx_off[sr->ox[i][e] + 2]++;
		total += sr->on[i];
	}
	for (uint32_t x = 0; x < n; x++)
		rx_off[x + 2] += rx_off[x + 1];
	/* (a root's, found on one thread, in node order already) */
	uint32_t *rx_w = xmalloc((total + 1) * sizeof(uint32_t));
	uint16_t *rx_d = xmalloc((total + 1) * sizeof(uint16_t));
	for (unsigned i = 0; i < th; i++)
		for (size_t e = 0; e < sr->on[i]; e++) {
			uint32_t at = rx_off[sr->ox[i][e] + 1]++;

			rx_w[at] = sr->ow[i][e];
			rx_d[at] = sr->od[i][e];
		}
	pp->rx_off = rx_off;
	pp->rx_w = rx_w;
	pp->rx_d = rx_d;
}

void patch_raised(struct patch_phase *pp, const struct graph *k, const struct graph *kin,
		  const struct graph *kout, unsigned threads)
{
	const struct graph *g = pp->g;
	struct search sr = {.G = pp->G,
			    .k = k,
			    .kin = kin,
			    .kout = kout,
			    .high = patch_high(pp->G),
			    .D = pp->D,
			    .absent = pp->absent,
			    .seed_max = pp->seed_max ? pp->seed_max : PATCH_SEED_MAX};
	uint32_t n = g->n, *queue = xmalloc((size_t)n * sizeof(uint32_t));
	uint16_t *row0 = xmalloc((size_t)n * sizeof(uint16_t));

	sr.ftail = xmalloc(((size_t)g->m + 1) * sizeof(uint32_t));
	sr.fhead = xmalloc(((size_t)g->m + 1) * sizeof(uint32_t));
	for (uint32_t a = 0; a < g->m; a++)
		if (pp->gone[a]) {
			/* g's arc w -> v is K's arc v -> w for allgather */
			sr.ftail[sr.nfail] = pp->reverse ? pp->tails[a] : g->adj[a];
			sr.fhead[sr.nfail++] = pp->reverse ? g->adj[a] : pp->tails[a];
		}
	bfb_bfs_row(k, 0, row0, queue);
	free(queue);
	sr.row0 = pp->row0 = row0;
	pp->high = sr.high;
	seed_roots(&sr, n);
	unsigned th = search_alloc(&sr, n, g->m, threads);
	parallel_for(n, 64, th, root_raised, &sr);
	gather(pp, &sr, th, n);
	search_free(&sr, th);
}
