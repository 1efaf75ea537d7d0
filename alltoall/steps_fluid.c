/* The time-stepped all-to-all from the fluid flow, by symmetry: on a
 * Cayley graph whose point stabiliser moves every port to every other
 * (tori of equal sides, hypercubes, Hamming graphs), node 0's fluid routes
 * averaged over that stabiliser load every port alike at every hop, so
 * lowered hop i at step i they take sum_t U_t = (total hops) / d, which is
 * the fluid optimum's max link load. The fluid MCF lower-bounds the
 * time-stepped one (summing a time-stepped flow over its steps gives a
 * fluid flow whose busiest link carries at most sum_t U_t), so the routes
 * meet the time-stepped optimum, proven by the fluid bound, in the time
 * of the fluid solve (0.02 s on torus:32x32, where the time-stepped column
 * generation took 3-8 s). Where they do not meet it (unequal sides,
 * circulants), the caller solves the time-stepped MCF as before. */
#include "alltoall/internal.h"
#include "topo/topo.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The stabiliser's elements used: coordinate rotations (sides all equal)
 * times negation. */
#define STAB_MAX (2 * SCHED_GROUP_MAX_DIMS)

static uint32_t coord(const struct sched_group *G, uint32_t v, uint32_t i)
{
	return (v / G->stride[i]) % G->radix[i];
}

/* phi(v) for the rotation by c coordinates and negation neg. */
static uint32_t stab_apply(const struct sched_group *G, uint32_t c, bool neg, uint32_t v)
{
	uint32_t y = 0;

	for (uint32_t i = 0; i < G->ndims; i++) {
		uint32_t x = coord(G, v, i), k = (i + c) % G->ndims;

		if (neg && x)
			x = G->radix[i] - x;
		y += x * G->stride[k];
	}
	return y;
}

/* The port maps of the stabiliser's elements that keep node 0's ports
 * (phi(s_j) = s_pi(j), a port of the same target each, parallel ports
 * matched in order), pi of element e at pmap[e * d]; how many (the
 * identity first). */
static uint32_t stab_ports(const struct graph *g, const struct sched_group *G, uint32_t *pmap)
{
	uint32_t d = graph_outdeg(g, 0), ne = 0;
	const uint32_t *s = graph_out(g, 0);
	bool same = true;
	uint8_t used[256];

	for (uint32_t i = 1; i < G->ndims; i++)
		same = same && G->radix[i] == G->radix[0];
	if (d > sizeof(used))
		return 0;
	for (uint32_t c = 0; c < (same ? G->ndims : 1); c++)
		for (int neg = 0; neg < 2; neg++) {
			uint32_t *pi = pmap + (size_t)ne * d;
			bool ok = true;

			memset(used, 0, d);
			for (uint32_t j = 0; j < d && ok; j++) {
				uint32_t y = stab_apply(G, c, neg, s[j]), k = 0;

				while (k < d && (used[k] || s[k] != y))
					k++;
				ok = k < d;
				if (ok) {
					used[k] = 1;
					pi[j] = k;
				}
			}
			ne += ok;
		}
	return ne;
}

/* An image of a route: its target, weight and arcs (in the images' array). */
struct img {
	uint32_t dst;
	double w;
	size_t off, len;
};

/* By target, then length, then arcs: equal routes of a pair side by side. */
static int img_cmp(const void *pa, const void *pb, void *ctx)
{
	const struct img *a = pa, *b = pb;
	const uint32_t *arcs = ctx;

	if (a->dst != b->dst)
		return a->dst < b->dst ? -1 : 1;
	if (a->len != b->len)
		return a->len < b->len ? -1 : 1;
	int c = memcmp(arcs + a->off, arcs + b->off, a->len * sizeof(uint32_t));

	return c ? c : a->off < b->off ? -1 : a->off > b->off;
}

/* Node 0's routes rt averaged over the elements' port maps, into out:
 * each route's image under each element (the walk from 0 taking port
 * pi(j) where the route took j: phi is linear, so it ends at phi(t)) at
 * its weight over ne, pairs in target order, equal routes of a pair
 * merged. */
static void stab_average(const struct graph *g, const struct a2a_routes *rt, const uint32_t *pmap,
			 uint32_t ne, struct a2a_routes *out)
{
	uint32_t d = graph_outdeg(g, 0);
	size_t nh = rt->nroutes ? rt->off[rt->nroutes] : 0, nimg = rt->nroutes * ne;
	uint32_t *arcs = xmalloc((nh * ne + 1) * sizeof(uint32_t));
	struct img *im = xmalloc((nimg + 1) * sizeof(*im));
	size_t k = 0, h0 = 0;

	for (uint32_t e = 0; e < ne; e++) {
		const uint32_t *pi = pmap + (size_t)e * d;

		for (size_t r = 0; r < rt->nroutes; r++, k++) {
			uint32_t v = rt->src[r], u = 0; /* the route's node, the image's */

			im[k] = (struct img){
			    .w = rt->w[r] / ne, .off = h0, .len = rt->off[r + 1] - rt->off[r]};
			for (size_t h = rt->off[r]; h < rt->off[r + 1]; h++) {
				uint32_t a = g->off[u] + pi[rt->arc[h] - g->off[v]];

				v = g->adj[rt->arc[h]];
				arcs[h0++] = a;
				u = g->adj[a];
			}
			im[k].dst = u;
		}
	}
	qsort_r(im, nimg, sizeof(*im), img_cmp, arcs);
	memset(out, 0, sizeof(*out));
	out->n = rt->n;
	out->symmetric = rt->symmetric;
	a2a_routes_reserve(out, nimg, h0);
	for (size_t i = 0; i < nimg;) {
		size_t j = i + 1;
		double w = im[i].w;

		while (j < nimg && im[j].dst == im[i].dst && im[j].len == im[i].len &&
		       !memcmp(arcs + im[j].off, arcs + im[i].off, im[i].len * sizeof(uint32_t)))
			w += im[j++].w;
		a2a_routes_add(out, 0, im[i].dst, w, arcs + im[i].off, NULL, im[i].len);
		i = j;
	}
	free(arcs);
	free(im);
}

/* Each step's busiest port (hop i at step i: node 0's routes put on port
 * j what every arc of port j carries), steps entries; their sum. */
static double step_loads(const struct graph *g, const struct a2a_routes *rt, uint32_t steps,
			 double *U)
{
	uint32_t d = graph_outdeg(g, 0);
	double *load = xcalloc((size_t)steps * d + 1, sizeof(double)), sum = 0;

	for (size_t r = 0; r < rt->nroutes; r++) {
		uint32_t v = rt->src[r];

		for (size_t h = rt->off[r]; h < rt->off[r + 1]; h++) {
			load[(h - rt->off[r]) * d + rt->arc[h] - g->off[v]] += rt->w[r];
			v = g->adj[rt->arc[h]];
		}
	}
	for (uint32_t t = 0; t < steps; t++) {
		U[t] = 0;
		for (uint32_t j = 0; j < d; j++)
			U[t] = fmax(U[t], load[(size_t)t * d + j]);
		sum += U[t];
	}
	free(load);
	return sum;
}

int a2a_steps_by_symmetry(const struct graph *g, const struct sched_group *G,
			  const struct a2a_request *q, uint32_t steps, struct mcf_result *m,
			  struct ofc_error *err)
{
	struct mcf_opts mo = q->mcf;
	uint32_t d = graph_outdeg(g, 0), *pmap, ne;
	struct a2a_routes avg;
	double t0 = now_seconds();

	memset(m, 0, sizeof(*m));
	if (G->reps != 1 || G->nodes != g->n || d == 0 || steps == 0)
		return 0;
	pmap = xmalloc((size_t)STAB_MAX * d * sizeof(uint32_t));
	ne = stab_ports(g, G, pmap);
	if (ne < 2) {
		free(pmap);
		return 0;
	}
	mo.method = MCF_SYMMETRIC;
	mo.translations_known = true;
	mo.steps = 0;
	mo.routes = true;
	mo.routes_if_optimal = true;
	if (mcf_solve(g, &mo, m, err) < 0) {
		free(pmap);
		return -1;
	}
	if (!m->optimal || a2a_max_hops(&m->routes) > steps) {
		free(pmap);
		mcf_result_free(m);
		return 0;
	}
	stab_average(g, &m->routes, pmap, ne, &avg);
	free(pmap);
	double *U = xcalloc((size_t)steps + 1, sizeof(double));
	double sum = step_loads(g, &avg, steps, U);

	/* Proven only when the steps meet the fluid optimum (its bound is
	 * the time-stepped MCF's too). */
	if (!(sum <= m->objective * (1 + 1e-9))) {
		free(U);
		a2a_routes_free(&avg);
		mcf_result_free(m);
		return 0;
	}
	a2a_routes_free(&m->routes);
	m->routes = avg;
	m->steps = steps;
	m->step_load = U;
	m->objective = sum;
	m->theta = 1 / sum;
	m->gap = m->lower > 0 ? fmax(0, sum / m->lower - 1) : 0;
	m->seconds = now_seconds() - t0;
	snprintf(m->note, sizeof(m->note),
		 "time-stepped from the fluid flow: node 0's routes averaged over %u "
		 "automorphisms fixing it, hop i at step i, meet the fluid bound",
		 ne);
	return 1;
}
