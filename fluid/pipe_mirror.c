/* The pattern's roots checked as structure: a mirrored routing moves one
 * class's pieces by every element h of the network's group, so root h(o)'s
 * pieces are root o's with every vertex v read as h(v). The verifier's
 * check of a root's block with the capacities lifted (pipe_pattern.c's
 * root_check) reads the vertices' kinds, the arcs' ends and each
 * transfer's block, layer, part and kind of operation, nothing else: a
 * relabelling of the vertices that keeps their kinds takes a passing (a
 * failing) schedule to a passing (a failing) one with the same duplicates.
 * So a root whose pieces are, piece by piece and hop by hop in the order
 * the check lays them out, a checked root's moved by such an h takes that
 * root's verdict, and only the roots no checked one covers are checked:
 * at 1,024 GPUs one root instead of 1,024 (8 M transfers through the
 * verifier). Nothing is taken on trust: each element used is checked to
 * be a permutation of the vertices that keeps their kinds, and each
 * covered root's pieces are compared with the image, both from the
 * routing that the expansion lays out; a root that differs anywhere is
 * checked itself. */
#include "fluid/internal.h"
#include "fluid/pipe_internal.h"

#include <stdlib.h>
#include <string.h>

/* Whether h (element k of g) is a permutation of vn's vertices that keeps
 * their kinds; cached in state (0 unknown, 1 yes, 2 no). */
static bool element_ok(const struct fluid_group *g, uint32_t k, const struct verify_network *vn,
		       uint8_t *state, uint8_t *seen)
{
	const uint32_t *h = g->vert + (size_t)k * g->nverts;
	uint32_t nv = vn->nodes;
	bool ok = true;

	if (state[k])
		return state[k] == 1;
	memset(seen, 0, nv);
	for (uint32_t v = 0; v < nv && ok; v++)
		ok = h[v] < nv && !seen[h[v]]++ && vn->kind[h[v]] == vn->kind[v];
	state[k] = ok ? 1 : 2;
	return ok;
}

/* Whether root b's pieces are root c's moved by h: the same number, each
 * the same part of the block at K = 1 and the same hops in the check's
 * order, each hop at the same layer on an arc whose ends are h's images
 * of the other's. */
static bool same_image(const struct pipe_pattern *pp, const uint32_t *h, uint32_t c, uint32_t b)
{
	const struct fluid_pipe *p = pp->p;
	const struct fluid_routing *rt = &p->r->routing;
	const uint32_t *tail = pp->vn.tail, *head = pp->vn.head;
	uint32_t n = pp->off[c + 1] - pp->off[c];

	if (h[c] != b || pp->off[b + 1] - pp->off[b] != n)
		return false;
	for (uint32_t j = 0; j < n; j++) {
		const struct fluid_piece *qc = &rt->pieces[pp->idx[pp->off[c] + j]];
		const struct fluid_piece *qb = &rt->pieces[pp->idx[pp->off[b] + j]];
		uint32_t lc, hc, lb, hb;
		bool pc = fluid_chunk_of(qc, 0, 1, &lc, &hc),
		     pb = fluid_chunk_of(qb, 0, 1, &lb, &hb);

		if (pc != pb || (pc && (lc != lb || hc != hb)) || qc->nhops != qb->nhops ||
		    qb->target != (qc->target == UINT32_MAX ? UINT32_MAX : h[qc->target]))
			return false;
		const uint32_t *oc = pipe_order(p, qc), *ob = pipe_order(p, qb);

		for (uint32_t s = 0; s < qc->nhops; s++) {
			uint32_t xc = qc->first + oc[s];
			uint32_t xb = qb->first + ob[s];
			uint32_t ac = rt->hop_arc[xc], ab = rt->hop_arc[xb];

			if (rt->hop_layer[xc] != rt->hop_layer[xb] || ab >= pp->vn.narcs ||
			    tail[ab] != h[tail[ac]] || head[ab] != h[head[ac]])
				return false;
		}
	}
	return true;
}

void pipe_mirror_plan(struct pipe_pattern *pp)
{
	const struct fluid_group *g = pp->p->group;
	uint32_t nv = pp->vn.nodes, nr = pp->nroots;
	uint32_t *pos = xmalloc(((size_t)nv + 1) * sizeof(uint32_t)); /* vertex -> root index */
	uint32_t *by = xmalloc(((size_t)nr + 1) * sizeof(uint32_t));  /* the element found */
	bool usable = g && g->order && g->nverts == nv && g->vert;
	uint8_t *state = usable ? xcalloc(g->order, 1) : NULL, *seen = xmalloc((size_t)nv + 1);

	pp->mirror = xmalloc(((size_t)nr + 1) * sizeof(uint32_t));
	pp->item = xmalloc(((size_t)nr + 1) * sizeof(uint32_t));
	pp->nitems = 0;
	for (uint32_t v = 0; v < nv; v++)
		pos[v] = UINT32_MAX;
	for (uint32_t i = 0; i < nr; i++) {
		pos[pp->root[i]] = i;
		pp->mirror[i] = UINT32_MAX;
	}
	for (uint32_t i = 0; i < nr; i++) {
		uint32_t c = pp->root[i];

		if (pp->mirror[i] != UINT32_MAX) {
			/* covered: taken when it is the image, else checked */
			const uint32_t *h = g->vert + (size_t)by[i] * nv;

			if (same_image(pp, h, pp->root[pp->mirror[i]], c))
				continue;
		}
		pp->mirror[i] = i;
		pp->item[pp->nitems++] = i;
		/* the roots this one's images cover, each by the first
		 * element that takes it there */
		for (uint32_t k = 0; usable && k < g->order; k++) {
			uint32_t b = g->vert[(size_t)k * nv + c], at = b < nv ? pos[b] : UINT32_MAX;

			if (at == UINT32_MAX || at <= i || pp->mirror[at] != UINT32_MAX ||
			    !element_ok(g, k, &pp->vn, state, seen))
				continue;
			pp->mirror[at] = i;
			by[at] = k;
		}
	}
	free(pos);
	free(by);
	free(state);
	free(seen);
}
