/* The time-expanded network G^T (notes Sec. 1): T layers of the physical
 * arcs plus hold-over arcs at vertices that can store, and the cones that
 * prune each commodity to the nodes it can use (notes Sec. 8.2). */
#include "fluid/internal.h"

#include <stdlib.h>
#include <string.h>

static void csr(uint32_t nv, uint32_t ne, const uint32_t *key, uint32_t **off, uint32_t **arc)
{
	uint32_t *o = xcalloc(nv + 2, sizeof(uint32_t)), *a = xmalloc((ne + 1) * sizeof(uint32_t));

	for (uint32_t e = 0; e < ne; e++)
		o[key[e] + 2]++;
	for (uint32_t v = 0; v < nv; v++)
		o[v + 2] += o[v + 1];
	for (uint32_t e = 0; e < ne; e++)
		a[o[key[e] + 1]++] = e;
	*off = o;
	*arc = a;
}

int texp_init(struct texp *x, const struct fluid_net *n, const uint8_t *store, uint32_t T)
{
	memset(x, 0, sizeof(*x));
	x->net = n;
	x->T = T;
	x->nv = n->nverts;
	x->ne = n->narcs;
	x->hold_of = xmalloc((n->nverts + 1) * sizeof(uint32_t));
	x->hold_vert = xmalloc((n->nverts + 1) * sizeof(uint32_t));
	for (uint32_t v = 0; v < n->nverts; v++) {
		x->hold_of[v] = UINT32_MAX;
		if (store[v]) {
			x->hold_of[v] = x->nhold;
			x->hold_vert[x->nhold++] = v;
		}
	}
	csr(n->nverts, n->narcs, n->tail, &x->out_off, &x->out_arc);
	csr(n->nverts, n->narcs, n->head, &x->in_off, &x->in_arc);
	x->port = xmalloc((n->narcs + 1) * sizeof(uint32_t));
	for (uint32_t v = 0; v < n->nverts; v++)
		for (uint32_t k = x->out_off[v]; k < x->out_off[v + 1]; k++)
			x->port[x->out_arc[k]] = k - x->out_off[v];
	return 0;
}

void texp_free(struct texp *x)
{
	free(x->hold_of);
	free(x->hold_vert);
	free(x->out_off);
	free(x->out_arc);
	free(x->in_off);
	free(x->in_arc);
	free(x->port);
	memset(x, 0, sizeof(*x));
}

void texp_forward(const struct texp *x, uint32_t o, uint64_t *bits)
{
	const struct fluid_net *n = x->net;
	uint32_t nv = x->nv;

	memset(bits, 0, ((size_t)tx_nnodes(x) + 63) / 64 * 8);
	bit_set(bits, o);
	for (uint32_t t = 0; t < x->T; t++)
		for (uint32_t v = 0; v < nv; v++) {
			if (!bit_test(bits, (size_t)t * nv + v))
				continue;
			if (x->hold_of[v] != UINT32_MAX)
				bit_set(bits, (size_t)(t + 1) * nv + v);
			for (uint32_t k = x->out_off[v]; k < x->out_off[v + 1]; k++) {
				uint32_t h = n->head[x->out_arc[k]];

				if (h != o)
					bit_set(bits, (size_t)(t + 1) * nv + h);
			}
		}
}

/* Whether node (v, t) reaches the set bits holds at layer t + 1: by its
 * hold-over, or (with arcs) by an arc into a vertex other than avoid. */
static bool reaches_next(const struct texp *x, const uint64_t *bits, uint32_t t, uint32_t v,
			 bool arcs, uint32_t avoid)
{
	size_t at = (size_t)(t + 1) * x->nv;

	if (x->hold_of[v] != UINT32_MAX && bit_test(bits, at + v))
		return true;
	for (uint32_t k = x->out_off[v]; arcs && k < x->out_off[v + 1]; k++) {
		uint32_t h = x->net->head[x->out_arc[k]];

		if (h != avoid && bit_test(bits, at + h))
			return true;
	}
	return false;
}

void texp_backward(const struct texp *x, uint32_t d, uint32_t avoid, uint64_t *bits)
{
	uint32_t nv = x->nv;

	memset(bits, 0, ((size_t)tx_nnodes(x) + 63) / 64 * 8);
	bit_set(bits, (size_t)x->T * nv + d);
	for (uint32_t t = x->T; t-- > 0;)
		for (uint32_t v = 0; v < nv; v++)
			if (reaches_next(x, bits, t, v, v != d, avoid))
				bit_set(bits, (size_t)t * nv + v);
}

void texp_backward_any(const struct texp *x, const uint32_t *d, uint32_t n, uint32_t avoid,
		       uint64_t *bits)
{
	uint32_t nv = x->nv;
	uint8_t *is_d = xcalloc(nv + 1, 1);

	memset(bits, 0, ((size_t)tx_nnodes(x) + 63) / 64 * 8);
	for (uint32_t j = 0; j < n; j++)
		is_d[d[j]] = 1;
	for (uint32_t t = x->T + 1; t-- > 0;)
		for (uint32_t v = 0; v < nv; v++)
			if (is_d[v] || (t < x->T && reaches_next(x, bits, t, v, true, avoid)))
				bit_set(bits, (size_t)t * nv + v);
	free(is_d);
}

/* Hop distances where only store vertices may wait: the earliest arrival
 * at a vertex is its plain BFS distance (waiting never arrives sooner), and
 * a destination reached at distance h is reached at every T >= h because it
 * can hold. Returns the largest distance of an (origin, destination) pair,
 * that pair in *far_o, *far_d; UINT32_MAX when some pair never connects
 * (then that pair). */
uint32_t texp_min_hops(const struct fluid_net *n, const uint32_t *orig, uint32_t norig,
		       const uint32_t *term, uint32_t nterm, uint32_t *far_o, uint32_t *far_d)
{
	uint32_t nv = n->nverts, *dist = xmalloc((nv + 1) * sizeof(uint32_t));
	uint32_t *queue = xmalloc((nv + 1) * sizeof(uint32_t)), *off, *arc, best = 0;
	bool found = false;

	csr(nv, n->narcs, n->tail, &off, &arc);
	for (uint32_t i = 0; i < norig; i++) {
		uint32_t o = orig[i], qh = 0, qt = 0;

		for (uint32_t v = 0; v < nv; v++)
			dist[v] = UINT32_MAX;
		dist[o] = 0;
		queue[qt++] = o;
		while (qh < qt) {
			uint32_t v = queue[qh++];

			for (uint32_t k = off[v]; k < off[v + 1]; k++) {
				uint32_t h = n->head[arc[k]];

				if (dist[h] == UINT32_MAX) {
					dist[h] = dist[v] + 1;
					queue[qt++] = h;
				}
			}
		}
		for (uint32_t j = 0; j < nterm; j++) {
			if (term[j] == o || (found && dist[term[j]] <= best))
				continue;
			found = true;
			best = dist[term[j]];
			*far_o = o;
			*far_d = term[j];
			if (best == UINT32_MAX)
				goto out;
		}
	}
out:
	free(dist);
	free(queue);
	free(off);
	free(arc);
	return best;
}
