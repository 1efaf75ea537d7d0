/* Automorphisms of a digraph by individualisation and refinement, the scheme
 * of McKay's nauty (McKay and Piperno, "Practical graph isomorphism, II",
 * J. Symb. Comput. 60, 2014, Sec. 2-3) without its pruning by invariants:
 *
 * - Refinement: colour refinement to the coarsest equitable partition: a
 *   node's new colour is its old colour with the multisets of its out- and
 *   in-neighbours' colours. Colours are ranks of sorted keys, so refining
 *   g and its image under an automorphism gives the same colours on images.
 * - Search: to map node x to y, individualise x in one copy and y in the
 *   other, refine both in lockstep (their sorted keys must agree round by
 *   round, else no automorphism does it), and branch on the first
 *   non-singleton cell until both partitions are discrete; the colour
 *   correspondence is then the candidate map, checked arc by arc.
 * - Group: along a base b_1, b_2, ... (the first node of the first
 *   non-singleton cell, level by level until discrete), from the deepest
 *   level up, search for each w in b_i's cell that the generators so far do
 *   not already reach an automorphism fixing b_1 .. b_{i-1} and taking b_i
 *   to w (the Schreier-Sims base and strong generating set). The product of
 *   the orbit sizes is |Aut(g)|.
 *
 * Each search is capped (refinements); a cut search may miss automorphisms,
 * so the group found is then a subgroup, and `complete` says so. The group
 * is listed element by element up to a caller's limit (a subgroup when Aut
 * is larger): schedulers use it to mirror one solution to every node of an
 * orbit (fluid-mcf-mirrored-dw.md Sec. 4.3), for which any subgroup is
 * correct and a larger one only faster.
 *
 * Bounds (issue 34): a request's clock stops every phase where it is (the
 * group found so far is a subgroup); the base's partitions and the
 * generators each take at most AUTOMORPH_MAX_BYTES (a base cut short
 * leaves the deeper stabilisers to the searches, a subgroup again). The
 * listing is the caller's max_order elements of n + m words.
 */
#include "topo/topo.h"

#include <stdlib.h>
#include <string.h>

#define AUTOMORPH_MAX_BYTES (64u << 20)

/* A node's key in a refinement round: old colour first, so cells only
 * split; node last, for a deterministic order within equal keys. */
struct nkey {
	uint32_t col;
	uint64_t h;
	uint32_t node;
};

struct ws {
	const struct graph *g;
	struct graph *gt; /* in-neighbours */
	/* The second side: g again for automorphisms, another graph for an
	 * isomorphism (then iso, and the leaf check is iso_check). */
	const struct graph *gb;
	struct graph *gbt;
	bool iso;
	double deadline; /* now_seconds() limit, 0: none (refinement budget only) */
	uint32_t depth;	 /* of the search: nodes individualised */
	uint32_t n;
	struct nkey *ka, *kb;
	uint32_t *nb; /* neighbour colours of one node */
	uint32_t *inv;
	uint64_t budget; /* refinements left for the current search */
	bool cut;	 /* some search ran out of budget */
	bool timed_out;	 /* ... or past the deadline: stop everywhere */
	/* arc map check */
	uint64_t *pa, *pb;
};

/* The search's scratch for w->n nodes of degree at most maxdeg. */
static void ws_alloc(struct ws *w, uint32_t maxdeg)
{
	w->ka = xmalloc(((size_t)w->n + 1) * sizeof(struct nkey));
	w->kb = xmalloc(((size_t)w->n + 1) * sizeof(struct nkey));
	w->nb = xmalloc((size_t)maxdeg * sizeof(uint32_t));
	w->inv = xmalloc(((size_t)w->n + 1) * sizeof(uint32_t));
	w->pa = xmalloc((size_t)maxdeg * sizeof(uint64_t));
	w->pb = xmalloc((size_t)maxdeg * sizeof(uint64_t));
}

/* ws_alloc's scratch and the transposed graphs (one when gb is g). */
static void ws_free(struct ws *w)
{
	free(w->ka);
	free(w->kb);
	free(w->nb);
	free(w->inv);
	free(w->pa);
	free(w->pb);
	if (w->gbt != w->gt)
		graph_free(w->gbt);
	graph_free(w->gt);
}

/* Past the deadline (once true, true for the rest of the search). */
static bool late(struct ws *w)
{
	if (!w->timed_out && w->deadline > 0 && now_seconds() > w->deadline)
		w->timed_out = w->cut = true;
	return w->timed_out;
}

static uint64_t mix(uint64_t h, uint64_t x)
{
	h ^= x + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
	h *= 0xbf58476d1ce4e5b9ull;
	return h ^ (h >> 31);
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

static int cmp_key(const void *a, const void *b)
{
	const struct nkey *x = a, *y = b;

	if (x->col != y->col)
		return x->col < y->col ? -1 : 1;
	if (x->h != y->h)
		return x->h < y->h ? -1 : 1;
	return (x->node > y->node) - (x->node < y->node);
}

static uint64_t neighbour_hash(struct ws *w, const struct graph *g, uint32_t u, const uint32_t *col,
			       uint64_t h)
{
	uint32_t k = 0;

	for (uint32_t a = g->off[u]; a < g->off[u + 1]; a++)
		w->nb[k++] = col[g->adj[a]];
	qsort(w->nb, k, sizeof(uint32_t), cmp_u32);
	for (uint32_t i = 0; i < k; i++)
		h = mix(h, w->nb[i]);
	return mix(h, k);
}

/* One round over g (out-) and gt (in-neighbours): keys of every node,
 * sorted (into key). */
static void round_keys(struct ws *w, const struct graph *g, const struct graph *gt,
		       const uint32_t *col, struct nkey *key)
{
	for (uint32_t u = 0; u < w->n; u++) {
		uint64_t h = neighbour_hash(w, g, u, col, 0x51ed27d5u);

		key[u].h = neighbour_hash(w, gt, u, col, h);
		key[u].col = col[u];
		key[u].node = u;
	}
	qsort(key, w->n, sizeof(*key), cmp_key);
}

/* New colours from sorted keys: the rank of each distinct (col, h). */
static uint32_t recolour(const struct nkey *key, uint32_t n, uint32_t *col)
{
	uint32_t c = 0;

	for (uint32_t i = 0; i < n; i++) {
		if (i && (key[i].col != key[i - 1].col || key[i].h != key[i - 1].h))
			c++;
		col[key[i].node] = c;
	}
	return n ? c + 1 : 0;
}

/* Refine one partition to equitable (not quite when late(w): a round
 * costs n log n, and a path of n nodes takes n rounds). */
static uint32_t refine(struct ws *w, uint32_t *col, uint32_t ncol)
{
	for (;;) {
		uint32_t k;

		if (late(w))
			return ncol;

		round_keys(w, w->g, w->gt, col, w->ka);
		k = recolour(w->ka, w->n, col);
		if (k == ncol)
			return k;
		ncol = k;
	}
}

/* Refine two partitions in lockstep; false when their keys differ in some
 * round (no automorphism maps one onto the other). */
static bool refine_pair(struct ws *w, uint32_t *ca, uint32_t *cb, uint32_t *ncol)
{
	for (;;) {
		uint32_t k;

		if (late(w))
			return false;
		round_keys(w, w->g, w->gt, ca, w->ka);
		round_keys(w, w->gb, w->gbt, cb, w->kb);
		for (uint32_t i = 0; i < w->n; i++)
			if (w->ka[i].col != w->kb[i].col || w->ka[i].h != w->kb[i].h)
				return false;
		k = recolour(w->ka, w->n, ca);
		recolour(w->kb, w->n, cb);
		if (k == *ncol)
			return true;
		*ncol = k;
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* Is map an automorphism (arc multisets kept)? Then amap says where each
 * arc goes: the arcs u -> v onto the arcs map(u) -> map(v) in port order. */
static bool arc_map(struct ws *w, const uint32_t *map, uint32_t *amap)
{
	const struct graph *g = w->g;

	for (uint32_t u = 0; u < w->n; u++) {
		uint32_t hu = map[u], d = graph_outdeg(g, u);

		if (graph_outdeg(g, hu) != d)
			return false;
		/* (head, arc) packed so sorting orders by head, then port. */
		for (uint32_t i = 0; i < d; i++) {
			uint32_t a = g->off[u] + i, b = g->off[hu] + i;

			w->pa[i] = (uint64_t)map[g->adj[a]] << 32 | a;
			w->pb[i] = (uint64_t)g->adj[b] << 32 | b;
		}
		qsort(w->pa, d, sizeof(uint64_t), cmp_u64);
		qsort(w->pb, d, sizeof(uint64_t), cmp_u64);
		for (uint32_t i = 0; i < d; i++) {
			if (w->pa[i] >> 32 != w->pb[i] >> 32)
				return false;
			amap[(uint32_t)w->pa[i]] = (uint32_t)w->pb[i];
		}
	}
	return true;
}

/* Is map an isomorphism from g onto gb (arc multisets kept)? */
static bool iso_check(struct ws *w, const uint32_t *map)
{
	const struct graph *a = w->g, *b = w->gb;

	for (uint32_t u = 0; u < w->n; u++) {
		uint32_t hu = map[u], d = graph_outdeg(a, u);

		if (graph_outdeg(b, hu) != d)
			return false;
		for (uint32_t i = 0; i < d; i++) {
			w->pa[i] = map[a->adj[a->off[u] + i]];
			w->pb[i] = b->adj[b->off[hu] + i];
		}
		qsort(w->pa, d, sizeof(uint64_t), cmp_u64);
		qsort(w->pb, d, sizeof(uint64_t), cmp_u64);
		if (memcmp(w->pa, w->pb, d * sizeof(uint64_t)) != 0)
			return false;
	}
	return true;
}

/* An automorphism taking partition ca onto cb (refined, same shape). */
static bool search(struct ws *w, const uint32_t *ca, const uint32_t *cb, uint32_t ncol,
		   uint32_t *map, uint32_t *amap)
{
	uint32_t n = w->n, cell = UINT32_MAX, x = UINT32_MAX;
	bool found = false;

	if (ncol == n) {
		for (uint32_t u = 0; u < n; u++)
			w->inv[cb[u]] = u;
		for (uint32_t u = 0; u < n; u++)
			map[u] = w->inv[ca[u]];
		return w->iso ? iso_check(w, map) : arc_map(w, map, amap);
	}
	/* The first non-singleton cell, and its first node in ca. */
	uint32_t *size = xcalloc(ncol, sizeof(uint32_t));
	for (uint32_t u = 0; u < n; u++)
		size[ca[u]]++;
	for (uint32_t c = 0; c < ncol && cell == UINT32_MAX; c++)
		if (size[c] > 1)
			cell = c;
	free(size);
	for (uint32_t u = 0; u < n && x == UINT32_MAX; u++)
		if (ca[u] == cell)
			x = u;
	uint32_t *a2 = xmalloc(2 * (size_t)n * sizeof(uint32_t)), *b2 = a2 + n;
	for (uint32_t y = 0; y < n && !found; y++) {
		uint32_t k = ncol + 1;

		if (cb[y] != cell)
			continue;
		if (w->budget == 0 || late(w)) {
			w->cut = true;
			break;
		}
		w->budget--;
		memcpy(a2, ca, n * sizeof(uint32_t));
		memcpy(b2, cb, n * sizeof(uint32_t));
		a2[x] = ncol;
		b2[y] = ncol;
		if (refine_pair(w, a2, b2, &k)) {
			w->depth++;
			found = search(w, a2, b2, k, map, amap);
			w->depth--;
		}
		/* The first node of a vertex-transitive graph can go anywhere:
		 * when one place fails, every place does. */
		if (w->iso && w->depth == 0 && w->g->vertex_transitive)
			break;
	}
	free(a2);
	return found;
}

/* ---- the group, element by element ---------------------------------------------- */

struct elems {
	uint32_t n, m, order, cap;
	uint32_t *node, *arc;
	uint64_t *hash; /* open addressing over element indices + 1 */
	uint32_t *slot;
	uint32_t nslot;
};

static uint64_t perm_hash(const uint32_t *p, uint32_t n)
{
	uint64_t h = 0x2545f4914f6cdd1dull;

	for (uint32_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return h;
}

static bool elem_find(const struct elems *e, const uint32_t *node, const uint32_t *arc, uint64_t h,
		      uint32_t *at)
{
	uint32_t j = (uint32_t)(h & (e->nslot - 1));

	while (e->slot[j]) {
		uint32_t k = e->slot[j] - 1;

		if (e->hash[k] == h && !memcmp(e->node + (size_t)k * e->n, node, e->n * 4ull) &&
		    !memcmp(e->arc + (size_t)k * e->m, arc, e->m * 4ull))
			return true;
		j = (j + 1) & (e->nslot - 1);
	}
	*at = j;
	return false;
}

/* Add an element unless present; false when it is. */
static bool elem_add(struct elems *e, const uint32_t *node, const uint32_t *arc)
{
	uint64_t h = perm_hash(node, e->n) ^ perm_hash(arc, e->m) * 31;
	uint32_t at = 0;

	if (elem_find(e, node, arc, h, &at))
		return false;
	uint32_t k = e->order++;
	memcpy(e->node + (size_t)k * e->n, node, e->n * 4ull);
	memcpy(e->arc + (size_t)k * e->m, arc, e->m * 4ull);
	e->hash[k] = h;
	e->slot[at] = k + 1;
	return true;
}

/* Drop the elements from `before` on (a closure that did not fit). */
static void elems_truncate(struct elems *e, uint32_t before)
{
	e->order = before;
	memset(e->slot, 0, e->nslot * sizeof(uint32_t));
	for (uint32_t j = 0; j < before; j++) {
		uint32_t s = (uint32_t)(e->hash[j] & (e->nslot - 1));

		while (e->slot[s])
			s = (s + 1) & (e->nslot - 1);
		e->slot[s] = j + 1;
	}
}

/* The closure of the group e with generators gens (node/arc, ngen of them,
 * the last one new): false, e unchanged in its first `order` elements,
 * when it would exceed e->cap or the deadline passes. Elements times
 * generators until nothing is new: in a finite group that is the group
 * generated. An old element times an old generator is old, so the old
 * elements need only the new generator. */
static bool closure(struct ws *w, struct elems *e, const uint32_t *gn, const uint32_t *ga,
		    uint32_t ngen)
{
	uint32_t before = e->order, n = e->n, m = e->m, at;
	const uint32_t *xn = gn + (size_t)(ngen - 1) * n, *xa = ga + (size_t)(ngen - 1) * m;
	uint64_t products = 0;

	if (elem_find(e, xn, xa, perm_hash(xn, n) ^ perm_hash(xa, m) * 31, &at))
		return true; /* in the group already */
	/* A group with one more generator is at least twice as large
	 * (Lagrange): past half the cap it cannot fit, and finding that out
	 * element by element costs up to cap x ngen products, per generator
	 * (20 interchangeable switches: 14 s at a cap of 2^17). */
	if ((uint64_t)before * 2 > e->cap)
		return false;
	uint32_t *pn = xmalloc((size_t)n * 4 + 4), *pa = xmalloc((size_t)m * 4 + 4);

	for (uint32_t i = 0; i < e->order; i++)
		for (uint32_t k = i < before ? ngen - 1 : 0; k < ngen; k++) {
			const uint32_t *en = e->node + (size_t)i * n, *ea = e->arc + (size_t)i * m;

			if (++products % 1024 == 0 && late(w)) {
				elems_truncate(e, before);
				free(pn);
				free(pa);
				return false;
			}
			for (uint32_t u = 0; u < n; u++)
				pn[u] = gn[(size_t)k * n + en[u]];
			for (uint32_t a = 0; a < m; a++)
				pa[a] = ga[(size_t)k * m + ea[a]];
			if (e->order == e->cap) {
				if (elem_find(e, pn, pa, perm_hash(pn, n) ^ perm_hash(pa, m) * 31,
					      &at))
					continue;
				/* Too many: drop what this call added. */
				elems_truncate(e, before);
				free(pn);
				free(pa);
				return false;
			}
			elem_add(e, pn, pa);
		}
	free(pn);
	free(pa);
	return true;
}

static void orbits(const struct elems *e, uint32_t n, size_t stride, const uint32_t *perm,
		   uint32_t *orbit, uint32_t *count)
{
	uint32_t k = 0;

	for (uint32_t u = 0; u < n; u++)
		orbit[u] = UINT32_MAX;
	for (uint32_t u = 0; u < n; u++) {
		if (orbit[u] != UINT32_MAX)
			continue;
		for (uint32_t i = 0; i < e->order; i++)
			orbit[perm[(size_t)i * stride + u]] = k;
		k++;
	}
	*count = k;
}

/* The base b_1, b_2, ... and the partition at every level: P_0 the
 * equitable refinement of the unit partition, P_i+1 that of P_i with b_i
 * individualised, until discrete, or the partitions would take more than
 * AUTOMORPH_MAX_BYTES (n words a level: a graph of many small orbits has
 * a long base), or the deadline. A base cut short is still a base of the
 * levels it has; the searches reach discrete partitions on their own. */
struct base {
	uint32_t nlev;
	uint32_t nfirst; /* the first levels' points came from the caller's list */
	uint32_t *lev;	 /* (nlev + 1) * n: the partition at each level */
	uint32_t *lcol;	 /* colours at each level */
	uint32_t *node;	 /* nlev: b_i */
};

static void find_base(struct ws *w, const uint32_t *first, uint32_t nfirst, struct base *b)
{
	uint32_t n = w->n, caplev = 0, next = 0;
	uint32_t *col = xcalloc((size_t)n + 1, sizeof(uint32_t));
	uint32_t ncol = refine(w, col, n ? 1 : 0);

	memset(b, 0, sizeof(*b));
	for (;;) {
		uint32_t cell = UINT32_MAX, x = UINT32_MAX;

		if (late(w) || (b->nlev && ((uint64_t)b->nlev + 2) * n * 4 > AUTOMORPH_MAX_BYTES)) {
			w->cut = true;
			break;
		}
		if (b->nlev + 1 > caplev) {
			caplev = caplev ? caplev * 2 : 8;
			b->lev = xreallocarray(b->lev, caplev, (size_t)n * sizeof(uint32_t));
			b->lcol = xreallocarray(b->lcol, caplev, sizeof(uint32_t));
			b->node = xreallocarray(b->node, caplev, sizeof(uint32_t));
		}
		memcpy(b->lev + (size_t)b->nlev * n, col, (size_t)n * sizeof(uint32_t));
		b->lcol[b->nlev] = ncol;
		if (ncol == n)
			break;
		uint32_t *size = xcalloc(ncol, sizeof(uint32_t));
		for (uint32_t u = 0; u < n; u++)
			size[col[u]]++;
		/* the caller's points first, those not fixed already */
		for (; next < nfirst && x == UINT32_MAX; next++)
			if (size[col[first[next]]] > 1)
				x = first[next];
		if (x != UINT32_MAX)
			b->nfirst = b->nlev + 1;
		for (uint32_t c = 0; c < ncol && cell == UINT32_MAX && x == UINT32_MAX; c++)
			if (size[c] > 1)
				cell = c;
		free(size);
		for (uint32_t u = 0; u < n && x == UINT32_MAX; u++)
			if (col[u] == cell)
				x = u;
		b->node[b->nlev++] = x;
		col[x] = ncol;
		ncol = refine(w, col, ncol + 1);
	}
	free(col);
}

static void base_free(struct base *b)
{
	free(b->lev);
	free(b->lcol);
	free(b->node);
}

/* Strong generators (node maps gn, arc maps ga, ngen of them) of the
 * levels below `upto`, deepest level first, as many as AUTOMORPH_MAX_BYTES
 * holds, until the deadline; returns the product of the orbit sizes, |Aut|
 * when no search was cut and upto is the base's length. */
struct gens {
	uint32_t n, m, ngen, cap;
	uint32_t *gn, *ga;
};

static double find_generators(struct ws *w, const struct base *bs, uint32_t upto, struct gens *gs)
{
	uint32_t n = w->n, m = w->g->m;
	uint32_t *map = xmalloc((size_t)n * sizeof(uint32_t) + 4);
	uint32_t *amap = xmalloc((size_t)m * sizeof(uint32_t) + 4);
	uint32_t *a0 = xmalloc(2 * ((size_t)n + 1) * sizeof(uint32_t)), *b0 = a0 + n + 1;
	uint32_t *reach = xmalloc(((size_t)n + 1) * sizeof(uint32_t));
	uint32_t *queue = xmalloc(((size_t)n + 1) * sizeof(uint32_t));
	double full = 1;

	memset(gs, 0, sizeof(*gs));
	gs->n = n;
	gs->m = m;
	for (uint32_t i = upto < bs->nlev ? upto : bs->nlev; i-- > 0 && !late(w);) {
		const uint32_t *pc = bs->lev + (size_t)i * n;
		uint32_t b = bs->node[i], norb = 0;

		/* The orbit of b under the generators so far (all fix b_1..b_i-1). */
		memset(reach, 0, (size_t)n * sizeof(uint32_t));
		reach[b] = 1;
		queue[norb++] = b;
		for (uint32_t q = 0; q < norb; q++)
			for (uint32_t k = 0; k < gs->ngen; k++) {
				uint32_t v = gs->gn[(size_t)k * n + queue[q]];

				if (!reach[v]) {
					reach[v] = 1;
					queue[norb++] = v;
				}
			}
		for (uint32_t y = 0; y < n; y++) {
			uint32_t k = bs->lcol[i] + 1;

			if (pc[y] != pc[b] || reach[y])
				continue;
			if (late(w) || ((uint64_t)gs->ngen + 1) * ((uint64_t)n + m) * 4 >
					   AUTOMORPH_MAX_BYTES) {
				w->cut = true;
				break;
			}
			memcpy(a0, pc, (size_t)n * sizeof(uint32_t));
			memcpy(b0, pc, (size_t)n * sizeof(uint32_t));
			a0[b] = bs->lcol[i];
			b0[y] = bs->lcol[i];
			/* A search per candidate: a path as deep as the base's
			 * below (one refinement a level, 20 interchangeable
			 * switches 20 levels deep) and 64 more, plenty when the
			 * partitions go discrete in a level or two. A budget of
			 * 64 alone cut the searches under 64 levels of such
			 * switches, each failing candidate after 64 refinements:
			 * 80 of them took 122 s, not 3.9. */
			w->budget = 64 + (bs->nlev - i);
			if (!refine_pair(w, a0, b0, &k) || !search(w, a0, b0, k, map, amap))
				continue;
			if (gs->ngen + 1 > gs->cap) {
				gs->cap = gs->cap ? gs->cap * 2 : 8;
				gs->gn =
				    xreallocarray(gs->gn, gs->cap, (size_t)n * sizeof(uint32_t));
				gs->ga = xreallocarray(gs->ga, gs->cap,
						       (size_t)m * sizeof(uint32_t) + 4);
			}
			memcpy(gs->gn + (size_t)gs->ngen * n, map, (size_t)n * sizeof(uint32_t));
			memcpy(gs->ga + (size_t)gs->ngen * m, amap, (size_t)m * sizeof(uint32_t));
			gs->ngen++;
			/* Grow the orbit with the new generator. */
			for (uint32_t q = 0; q < norb; q++)
				for (uint32_t k2 = 0; k2 < gs->ngen; k2++) {
					uint32_t v = gs->gn[(size_t)k2 * n + queue[q]];

					if (!reach[v]) {
						reach[v] = 1;
						queue[norb++] = v;
					}
				}
		}
		full *= norb;
	}
	free(map);
	free(amap);
	free(a0);
	free(reach);
	free(queue);
	return full;
}

/* The elements: the identity, then each generator in turn while the group
 * it makes with those kept stays within e->cap (a subgroup otherwise).
 * False when some generator was left out. */
static bool list_elements(struct ws *w, struct elems *e, const struct gens *gs)
{
	uint32_t n = gs->n, m = gs->m, nacc = 0;
	uint32_t *accn = xmalloc(((size_t)gs->ngen + 1) * n * sizeof(uint32_t) + 4);
	uint32_t *acca = xmalloc(((size_t)gs->ngen + 1) * m * sizeof(uint32_t) + 4);
	bool all = true;

	for (uint32_t u = 0; u < n; u++)
		accn[u] = u;
	for (uint32_t a = 0; a < m; a++)
		acca[a] = a;
	elem_add(e, accn, acca);
	for (uint32_t k = 0; k < gs->ngen; k++) {
		memcpy(accn + (size_t)nacc * n, gs->gn + (size_t)k * n,
		       (size_t)n * sizeof(uint32_t));
		memcpy(acca + (size_t)nacc * m, gs->ga + (size_t)k * m,
		       (size_t)m * sizeof(uint32_t));
		if (late(w)) {
			all = false;
			break;
		}
		if (closure(w, e, accn, acca, nacc + 1))
			nacc++;
		else
			all = false;
	}
	free(accn);
	free(acca);
	return all;
}

/* Aut(g) along a base that individualises first[] before other nodes;
 * generators for every level, or for the levels of first[] only
 * (first_only); max_order elements listed. */
static void automorphisms(const struct graph *g, const uint32_t *first, uint32_t nfirst,
			  bool first_only, uint32_t max_order, const struct ofc_clock *clock,
			  struct graph_group *grp)
{
	uint32_t n = g->n, m = g->m, maxdeg = 1;
	struct ws w = {.g = g, .gb = g, .n = n, .deadline = clock ? clock->deadline : 0};
	struct base bs;
	struct gens gs;

	memset(grp, 0, sizeof(*grp));
	grp->n = n;
	grp->m = m;
	for (uint32_t u = 0; u < n; u++)
		if (graph_outdeg(g, u) > maxdeg)
			maxdeg = graph_outdeg(g, u);
	w.gt = graph_transpose(g);
	w.gbt = w.gt;
	for (uint32_t u = 0; u < n; u++)
		if (graph_outdeg(w.gt, u) > maxdeg)
			maxdeg = graph_outdeg(w.gt, u);
	ws_alloc(&w, maxdeg);
	find_base(&w, first, nfirst, &bs);
	grp->full_order = find_generators(&w, &bs, first_only ? bs.nfirst : bs.nlev, &gs);

	struct elems e = {.n = n, .m = m, .cap = max_order ? max_order : 1};
	e.node = xmalloc((size_t)e.cap * n * sizeof(uint32_t) + 4);
	e.arc = xmalloc((size_t)e.cap * m * sizeof(uint32_t) + 4);
	e.hash = xmalloc((size_t)e.cap * sizeof(uint64_t));
	for (e.nslot = 16; e.nslot < 2 * e.cap; e.nslot *= 2)
		;
	e.slot = xcalloc(e.nslot, sizeof(uint32_t));
	bool all = list_elements(&w, &e, &gs);

	grp->complete = all && !w.cut && !(first_only && bs.nfirst < bs.nlev);
	grp->timed_out = w.timed_out;
	grp->ngens = gs.ngen;
	grp->gen_node = gs.gn;
	grp->gen_arc = gs.ga;
	grp->order = e.order;
	grp->node = e.node;
	grp->arc = e.arc;
	grp->orbit = xmalloc(((size_t)n + 1) * sizeof(uint32_t));
	grp->arc_orbit = xmalloc(((size_t)m + 1) * sizeof(uint32_t));
	orbits(&e, n, n, e.node, grp->orbit, &grp->norbits);
	orbits(&e, m, m, e.arc, grp->arc_orbit, &grp->narc_orbits);

	free(e.hash);
	free(e.slot);
	base_free(&bs);
	ws_free(&w);
}

void graph_automorphisms(const struct graph *g, uint32_t max_order, const struct ofc_clock *clock,
			 struct graph_group *grp)
{
	automorphisms(g, NULL, 0, false, max_order, clock, grp);
}

void graph_automorphism_gens(const struct graph *g, const uint32_t *first, uint32_t nfirst,
			     const struct ofc_clock *clock, struct graph_group *grp)
{
	automorphisms(g, first, nfirst, true, 1, clock, grp);
}

void graph_group_free(struct graph_group *grp)
{
	free(grp->node);
	free(grp->arc);
	free(grp->orbit);
	free(grp->arc_orbit);
	free(grp->gen_node);
	free(grp->gen_arc);
	memset(grp, 0, sizeof(*grp));
}

bool graph_isomorphism(const struct graph *a, const struct graph *b, double deadline, uint32_t *map)
{
	uint32_t n = a->n, maxdeg = 1, ncol = n ? 1 : 0;
	struct ws w = {.g = a, .gb = b, .n = n, .iso = true, .deadline = deadline};
	bool found = false;

	if (b->n != n || b->m != a->m)
		return false;
	w.gt = graph_transpose(a);
	w.gbt = graph_transpose(b);
	const struct graph *all[4] = {a, b, w.gt, w.gbt};
	for (int k = 0; k < 4; k++)
		for (uint32_t u = 0; u < n; u++)
			if (graph_outdeg(all[k], u) > maxdeg)
				maxdeg = graph_outdeg(all[k], u);
	ws_alloc(&w, maxdeg);
	w.budget = UINT64_MAX;
	uint32_t *ca = xcalloc(2 * ((size_t)n + 1), sizeof(uint32_t)), *cb = ca + n + 1;
	if (refine_pair(&w, ca, cb, &ncol))
		found = search(&w, ca, cb, ncol, map, NULL);
	free(ca);
	ws_free(&w);
	return found;
}
