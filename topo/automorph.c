/* Automorphism groups of a digraph: nauty finds the generators
 * (topo/symmetry.c: the individualisation and refinement search
 * ofc carried by hand took 0.4 s on genkautz:1024,4 and 5 s on
 * genkautz:4096,4, nauty milliseconds), this file gives each its map of
 * arcs and lists the group they generate element by element up to a
 * caller's limit (a subgroup when Aut is larger): schedulers use it to
 * mirror one solution to every node of an orbit (fluid-mcf-mirrored-dw.md
 * Sec. 4.3), for which any subgroup is correct and a larger one only
 * faster.
 *
 * Bounds: a request's clock stops the search and the listing
 * where they are (the group found so far is a subgroup); the generators
 * take at most AUTOMORPH_MAX_BYTES (a subgroup again when more are found).
 * The listing is the caller's max_order elements of n + m words.
 */
#include "topo/internal.h"

#include <stdlib.h>
#include <string.h>

#define AUTOMORPH_MAX_BYTES (64u << 20)

struct ws {
	const struct graph *g;
	/* the second side of an isomorphism (iso_check) */
	const struct graph *gb;
	uint32_t n;
	double deadline; /* now_seconds() limit, 0: none */
	bool timed_out;
	uint64_t *pa, *pb; /* a node's arcs, for the arc map check */
};

/* Past the deadline (once true, true for the rest of the run). */
static bool late(struct ws *w)
{
	if (!w->timed_out && w->deadline > 0 && now_seconds() > w->deadline)
		w->timed_out = true;
	return w->timed_out;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

static uint32_t max_outdeg(const struct graph *g)
{
	uint32_t d = 1;

	for (uint32_t u = 0; u < g->n; u++)
		if (graph_outdeg(g, u) > d)
			d = graph_outdeg(g, u);
	return d;
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

struct gens {
	uint32_t n, m, ngen;
	uint32_t *gn, *ga;
};

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

/* Aut(g) by nauty; generators for all of it, or only those moving some
 * of first[] (first_only: they act on first[] as Aut does, without the
 * stabiliser of them all); max_order elements listed. */
static void automorphisms(const struct graph *g, const uint32_t *first, uint32_t nfirst,
			  bool first_only, uint32_t max_order, const struct ofc_clock *clock,
			  struct graph_group *grp)
{
	uint32_t n = g->n, m = g->m, maxdeg = max_outdeg(g);
	struct ws w = {.g = g, .gb = g, .n = n, .deadline = clock ? clock->deadline : 0};
	struct sym_graph sg;
	struct sym_gens sy;
	struct gens gs = {.n = n, .m = m};
	uint8_t *keep = NULL;
	double full;
	bool cut;

	memset(grp, 0, sizeof(*grp));
	grp->n = n;
	grp->m = m;
	w.pa = xmalloc((size_t)maxdeg * sizeof(uint64_t));
	w.pb = xmalloc((size_t)maxdeg * sizeof(uint64_t));
	if (first_only) {
		keep = xcalloc((size_t)n + 1, 1);
		for (uint32_t i = 0; i < nfirst; i++)
			if (first[i] < n)
				keep[first[i]] = 1;
	}
	sym_encode(g, NULL, w.deadline, &sg);
	/* the node maps and their arc maps within AUTOMORPH_MAX_BYTES */
	sym_automorphisms(&sg, keep, w.deadline,
			  (uint64_t)AUTOMORPH_MAX_BYTES * n / ((uint64_t)n + m + 1), &sy);
	sym_graph_free(&sg);
	free(keep);
	w.timed_out = sy.timed_out;
	cut = sy.cut;
	full = sy.order;
	gs.gn = xmalloc(((size_t)sy.ngen * n + 1) * sizeof(uint32_t));
	gs.ga = xmalloc(((size_t)sy.ngen * m + 1) * sizeof(uint32_t));
	for (uint32_t k = 0; k < sy.ngen; k++) {
		const uint32_t *p = sy.perm + (size_t)k * n;

		/* nauty's maps keep the arc multiset; arc_map numbers the arcs */
		if (!arc_map(&w, p, gs.ga + (size_t)gs.ngen * m)) {
			cut = true;
			continue;
		}
		memcpy(gs.gn + (size_t)gs.ngen * n, p, (size_t)n * sizeof(uint32_t));
		gs.ngen++;
	}
	sym_gens_free(&sy);

	struct elems e = {.n = n, .m = m, .cap = max_order ? max_order : 1};
	e.node = xmalloc((size_t)e.cap * n * sizeof(uint32_t) + 4);
	e.arc = xmalloc((size_t)e.cap * m * sizeof(uint32_t) + 4);
	e.hash = xmalloc((size_t)e.cap * sizeof(uint64_t));
	for (e.nslot = 16; e.nslot < 2 * e.cap; e.nslot *= 2)
		;
	e.slot = xcalloc(e.nslot, sizeof(uint32_t));
	bool all = list_elements(&w, &e, &gs);

	grp->full_order = w.timed_out ? e.order : full;
	grp->complete = all && !cut && !w.timed_out && (double)e.order == grp->full_order;
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
	free(w.pa);
	free(w.pb);
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
	struct sym_graph sa, sb;
	int rc;

	if (b->n != a->n || b->m != a->m)
		return false;
	sym_encode(a, NULL, deadline, &sa);
	sym_encode(b, NULL, deadline, &sb);
	rc = sym_isomorphism(&sa, &sb, deadline, map);
	sym_graph_free(&sa);
	sym_graph_free(&sb);
	if (rc <= 0)
		return false;
	/* what the canonical forms promise, checked arc by arc */
	uint32_t maxdeg = max_outdeg(a) > max_outdeg(b) ? max_outdeg(a) : max_outdeg(b);
	struct ws w = {.g = a, .gb = b, .n = a->n};
	bool ok;

	w.pa = xmalloc((size_t)maxdeg * sizeof(uint64_t));
	w.pb = xmalloc((size_t)maxdeg * sizeof(uint64_t));
	ok = iso_check(&w, map);
	free(w.pa);
	free(w.pb);
	return ok;
}
