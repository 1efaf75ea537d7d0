/* The cut LP on the orbits of the origin's stabiliser (pricing.c).
 *
 * Where the servers' group (fluid_group_blocks) holds and no arc joins two
 * servers, swapping two servers other than the origin's, vertex for vertex,
 * is an automorphism too: the group's pure shift that takes one onto the
 * other does it on their arcs and fixes everything outside the servers.
 * Those swaps generate every permutation of the other servers, a group H
 * that fixes the origin and keeps the prices (a price is the average of
 * the master's duals over the servers' group, the same on an arc and its
 * shift). H maps cuts to cuts and destinations to destinations, so the
 * average over H of any usage that meets every cut meets every cut at the
 * same cost: the cut LP has an optimum constant on H's orbits, and is
 * solved over one variable per orbit of G^T's arcs. A cut is a row over
 * those (each coefficient how many of the orbit's arcs cross it), and the
 * max flows that find cuts run to one destination per orbit; a usage
 * constant on the orbits reaches every destination of an orbit as it
 * reaches that one. At 1,024 GPUs of model W: 1,023 destinations and
 * 70,000 columns become 15 and about 1,500. */
#include "fluid/internal.h"

#include <stdlib.h>
#include <string.h>

/* The block of vertex v, or UINT32_MAX outside the servers. */
static uint32_t block_of(const struct fluid_group *g, uint32_t v)
{
	return v < g->nblocks * g->bsize ? v / g->bsize : UINT32_MAX;
}

/* Whether the element the servers' group lists at sh * (order / nblocks)
 * takes block b onto block br vertex for vertex and fixes the outside: the
 * pure shift, the one an orbit's arcs are mapped by. */
static bool pure_shift(const struct fluid_group *g, uint32_t el, uint32_t b, uint32_t br)
{
	const uint32_t *h = g->vert + (size_t)el * g->nverts;
	uint32_t inside = g->nblocks * g->bsize;

	for (uint32_t i = 0; i < g->bsize; i++)
		if (h[b * g->bsize + i] != br * g->bsize + i)
			return false;
	for (uint32_t v = inside; v < g->nverts; v++)
		if (h[v] != v)
			return false;
	return true;
}

/* The shift element of each block onto br (UINT32_MAX for the origin's
 * block and br): NULL where one is not a pure shift or an arc joins two
 * servers. */
static uint32_t *block_shifts(const struct fluid_net *n, const struct fluid_group *g, uint32_t bo,
			      uint32_t br)
{
	uint32_t nb = g->nblocks, per = g->order / nb;
	uint32_t *el = xmalloc((nb + 1) * sizeof(uint32_t));

	for (uint32_t a = 0; a < n->narcs; a++) {
		uint32_t bt = block_of(g, n->tail[a]), bh = block_of(g, n->head[a]);

		if (bt != UINT32_MAX && bh != UINT32_MAX && bt != bh)
			goto no;
	}
	for (uint32_t b = 0; b < nb; b++) {
		el[b] = UINT32_MAX;
		if (b == bo || b == br)
			continue;
		el[b] = ((br + nb - b) % nb) * per;
		if (!pure_shift(g, el[b], b, br))
			goto no;
	}
	return el;
no:
	free(el);
	return NULL;
}

/* Each vertex's orbit representative: its image in block br (itself in
 * the origin's block, br and outside). */
static uint32_t *vertex_reps(const struct fluid_group *g, const uint32_t *el)
{
	uint32_t *vrep = xmalloc(((size_t)g->nverts + 1) * sizeof(uint32_t));

	for (uint32_t v = 0; v < g->nverts; v++) {
		uint32_t b = block_of(g, v);

		vrep[v] = b == UINT32_MAX || el[b] == UINT32_MAX
			      ? v
			      : g->vert[(size_t)el[b] * g->nverts + v];
	}
	return vrep;
}

/* Column c's orbit representative: its arc's image in block br. */
static uint32_t column_rep(const struct pricer *pr, const struct fluid_group *g, const uint32_t *el,
			   const uint32_t *vrep, uint32_t c)
{
	const struct texp *x = pr->x;
	uint32_t a = pr->col_arc[c], t = tx_layer(x, a);

	if (tx_is_hold(x, a))
		return pr->arc_col[tx_hold(x, vrep[tx_vertex_from(x, a)], t)];
	uint32_t e = tx_phys(x, a), b = block_of(g, x->net->tail[e]);

	if (b == UINT32_MAX)
		b = block_of(g, x->net->head[e]);
	if (b == UINT32_MAX || el[b] == UINT32_MAX)
		return c;
	return pr->arc_col[t * x->ne + g->arc[(size_t)el[b] * g->narcs + e]];
}

bool pricer_orbits(struct pricer *pr, const struct fluid_group *g, uint32_t **vrep)
{
	const struct texp *x = pr->x;
	uint32_t bo, br, *el, *rep;

	if (!g || g->nblocks < 3 || !g->bsize || g->order % g->nblocks || g->nverts != x->nv ||
	    (bo = block_of(g, pr->origin)) == UINT32_MAX)
		return false;
	br = bo == 0 ? 1 : 0;
	el = block_shifts(x->net, g, bo, br);
	if (!el)
		return false;
	*vrep = vertex_reps(g, el);
	rep = xmalloc(((size_t)pr->ncols + 1) * sizeof(uint32_t));
	for (uint32_t c = 0; c < pr->ncols; c++) {
		rep[c] = column_rep(pr, g, el, *vrep, c);
		/* (the columns are H-invariant: a missing image is a bug) */
		if (rep[c] == UINT32_MAX) {
			free(rep);
			free(el);
			free(*vrep);
			*vrep = NULL;
			return false;
		}
	}
	pr->col_lp = xmalloc(((size_t)pr->ncols + 1) * sizeof(uint32_t));
	pr->nlp = 0;
	for (uint32_t c = 0; c < pr->ncols; c++)
		if (rep[c] == c)
			pr->col_lp[c] = pr->nlp++;
	for (uint32_t c = 0; c < pr->ncols; c++)
		pr->col_lp[c] = pr->col_lp[rep[c]];
	/* one destination per orbit: its representative */
	pr->sep = xmalloc((pr->ndest + 1) * sizeof(uint32_t));
	pr->nsep = 0;
	for (uint32_t j = 0; j < pr->ndest; j++)
		if ((*vrep)[pr->dest[j]] == pr->dest[j])
			pr->sep[pr->nsep++] = j;
	free(rep);
	free(el);
	return true;
}
