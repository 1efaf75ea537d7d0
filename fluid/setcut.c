/* A bound on R* that holds at every hop limit, from the cuts of vertex
 * sets: what the hop-limit search needs to stop at the first T whose R*
 * meets it, without trying larger ones.
 *
 * Take a set S of vertices. Every origin outside S whose unit some
 * terminal inside S needs sends it across S's in-arcs at least once (its
 * flow to that terminal crosses them, and w >= f), whatever the hop limit:
 * the in-arcs carry at least that many units, through at most the sum of
 * their bandwidths, each unit's time R apart. The same holds for the units
 * of the origins inside S that a terminal outside needs, through S's
 * out-arcs; an all-to-all counts pairs instead, each its own flow. Sets
 * only lower what a cut carries, so leaving them out keeps the bound.
 *
 * Which sets: fluid_lower_bound takes each terminal alone. Here the sets
 * are the parts a network falls into when only its faster arcs are kept,
 * for every bandwidth a link has (a server without its NICs, a rack):
 * those whose slow links are the bottleneck. On model W all links, eight
 * GPUs of a server and more, the servers' NIC links set R* (0.04 (N - 1)
 * s/GB), which no one vertex's arcs show. */
#include "fluid/internal.h"

#include <stdlib.h>
#include <string.h>

static uint32_t find(uint32_t *up, uint32_t v)
{
	while (up[v] != v) {
		up[v] = up[up[v]];
		v = up[v];
	}
	return v;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The bound of every part of the network kept at its arcs faster than
 * bcut (its infinite ones always kept). */
static double parts_bound(const struct problem *p, double bcut, uint32_t *up, uint8_t *is_orig,
			  double *cnt)
{
	const struct fluid_net *n = p->net;
	uint32_t nv = n->nverts;
	double *no = cnt, *nt = cnt + nv, *in = cnt + 2 * nv, *out = cnt + 3 * nv, lb = 0;
	double norig = p->norig, nterm = p->nterm;

	for (uint32_t v = 0; v < nv; v++)
		up[v] = v;
	for (uint32_t a = 0; a < n->narcs; a++)
		if (n->bw[a] > bcut) {
			uint32_t x = find(up, n->tail[a]), y = find(up, n->head[a]);

			if (x != y)
				up[x] = y;
		}
	memset(cnt, 0, 4 * nv * sizeof(double));
	for (uint32_t v = 0; v < nv; v++) {
		uint32_t c = find(up, v);

		no[c] += is_orig[v] & 1;
		nt[c] += (is_orig[v] >> 1) & 1;
	}
	for (uint32_t a = 0; a < n->narcs; a++) {
		uint32_t x = find(up, n->tail[a]), y = find(up, n->head[a]);

		if (x != y) {
			out[x] += n->bw[a];
			in[y] += n->bw[a];
		}
	}
	for (uint32_t c = 0; c < nv; c++) {
		if (up[c] != c || (no[c] == 0 && nt[c] == 0))
			continue;
		double need_in, need_out;

		if (p->copy) {
			need_in = nt[c] > 0 ? norig - no[c] : 0;
			need_out = nterm - nt[c] > 0 ? no[c] : 0;
		} else {
			need_in = (norig - no[c]) * nt[c];
			need_out = no[c] * (nterm - nt[c]);
		}
		if (need_in > 0 && in[c] > 0 && need_in / in[c] > lb)
			lb = need_in / in[c];
		if (need_out > 0 && out[c] > 0 && need_out / out[c] > lb)
			lb = need_out / out[c];
	}
	return lb;
}

double fluid_set_cut_bound(const struct problem *p)
{
	const struct fluid_net *n = p->net;
	uint32_t nv = n->nverts, nb = 0;
	double *bws = xmalloc((n->narcs + 1) * sizeof(double)), lb = 0;
	double *cnt = xmalloc((4 * (size_t)nv + 1) * sizeof(double));
	uint32_t *up = xmalloc((nv + 1) * sizeof(uint32_t));
	uint8_t *is_orig = xcalloc(nv + 1, 1);

	/* bit 0: an origin, bit 1: a terminal that needs the units (for a
	 * broadcast every terminal but the root) */
	for (uint32_t i = 0; i < p->norig; i++)
		is_orig[p->orig[i]] |= 1;
	for (uint32_t i = 0; i < p->nterm; i++)
		is_orig[p->term[i]] |= 2;
	for (uint32_t a = 0; a < n->narcs; a++)
		if (!isinf(n->bw[a]))
			bws[nb++] = n->bw[a];
	qsort(bws, nb, sizeof(double), cmp_double);
	for (uint32_t i = 0; i < nb; i++) {
		if (i > 0 && bws[i] == bws[i - 1])
			continue;
		double b = parts_bound(p, bws[i], up, is_orig, cnt);

		if (b > lb)
			lb = b;
	}
	free(bws);
	free(cnt);
	free(up);
	free(is_orig);
	return lb;
}
