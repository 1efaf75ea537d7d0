/* Route sets (struct a2a_routes): per ordered pair, weighted paths as arcs
 * and the step of each hop. The MCF writes them, the all-to-all lowerings
 * read them; the operations on a set (append, mirror by the group of a
 * symmetric solution, keep the heaviest few per pair, loads) live here so
 * both sit on this file and not on each other. */
#include "alltoall/internal.h"

#include <stdlib.h>
#include <string.h>

void a2a_routes_reserve(struct a2a_routes *rt, size_t routes, size_t hops)
{
	size_t r = rt->nroutes, h0 = r ? rt->off[r] : 0;

	/* What is asked for, or twice the room (1,024 at least), whichever
	 * is more: a route at a time (a2a_routes_add) or a class's at once. */
	if (r + routes + 1 > rt->cap_routes) {
		size_t cap = 2 * rt->cap_routes > 1024 ? 2 * rt->cap_routes : 1024;

		rt->cap_routes = r + routes + 1 > cap ? r + routes + 1 : cap;
		if (!rt->src) {
			/* The first room on huge pages too: a set joined or
			 * mirrored at once is written once, each small page a
			 * fault (genkautz:1024,4: half the MCF's faults). */
			rt->src = sched_huge_alloc(rt->cap_routes * sizeof(uint32_t));
			rt->dst = sched_huge_alloc(rt->cap_routes * sizeof(uint32_t));
			rt->w = sched_huge_alloc(rt->cap_routes * sizeof(double));
			rt->off = sched_huge_alloc((rt->cap_routes + 1) * sizeof(size_t));
		} else {
			rt->src = xreallocarray(rt->src, rt->cap_routes, sizeof(uint32_t));
			rt->dst = xreallocarray(rt->dst, rt->cap_routes, sizeof(uint32_t));
			rt->w = xreallocarray(rt->w, rt->cap_routes, sizeof(double));
			rt->off = xreallocarray(rt->off, rt->cap_routes + 1, sizeof(size_t));
		}
	}
	if (h0 + hops > rt->cap_hops) {
		size_t cap = 2 * rt->cap_hops > 1024 ? 2 * rt->cap_hops : 1024;

		rt->cap_hops = h0 + hops > cap ? h0 + hops : cap;
		/* The first room on huge pages (the fluid MCF's routes on
		 * torus:256x256: 25 M hops, 99 MB, first written at about three
		 * times the speed of small pages here). */
		rt->arc = rt->arc ? xreallocarray(rt->arc, rt->cap_hops, sizeof(uint32_t))
				  : sched_huge_alloc(rt->cap_hops * sizeof(uint32_t));
		if (rt->step)
			rt->step = xreallocarray(rt->step, rt->cap_hops, sizeof(uint32_t));
	}
}

/* The route's entry, its hops at h0 .. h0 + len - 1 (arcs unwritten). */
static void append(struct a2a_routes *rt, uint32_t s, uint32_t t, double w, size_t len)
{
	size_t r = rt->nroutes, h0 = r ? rt->off[r] : 0;

	rt->off[0] = 0;
	rt->src[r] = s;
	rt->dst[r] = t;
	rt->w[r] = w;
	rt->off[r + 1] = h0 + len;
	rt->nroutes++;
}

void a2a_routes_add(struct a2a_routes *rt, uint32_t s, uint32_t t, double w, const uint32_t *arc,
		    const uint32_t *step, size_t len)
{
	size_t r = rt->nroutes, h0 = r ? rt->off[r] : 0;

	a2a_routes_reserve(rt, 1, len);
	memcpy(rt->arc + h0, arc, len * sizeof(uint32_t));
	if (step && !rt->step) {
		/* The first route with steps: the routes before it get theirs,
		 * hop i at step i. */
		rt->step = xreallocarray(NULL, rt->cap_hops, sizeof(uint32_t));
		for (size_t q = 0; q < r; q++)
			for (size_t h = rt->off[q]; h < rt->off[q + 1]; h++)
				rt->step[h] = (uint32_t)(h - rt->off[q]);
	}
	if (step)
		memcpy(rt->step + h0, step, len * sizeof(uint32_t));
	else if (rt->step)
		for (size_t i = 0; i < len; i++)
			rt->step[h0 + i] = (uint32_t)i;
	append(rt, s, t, w, len);
}

uint32_t *a2a_routes_push(struct a2a_routes *rt, uint32_t s, uint32_t t, double w, size_t len)
{
	size_t h0 = rt->nroutes ? rt->off[rt->nroutes] : 0;

	a2a_routes_reserve(rt, 1, len);
	for (size_t i = 0; rt->step && i < len; i++)
		rt->step[h0 + i] = (uint32_t)i;
	append(rt, s, t, w, len);
	return rt->arc + h0;
}

/* Route sets built in parts, each part a block of sources or of pairs
 * on its own thread, joined in part order: the same set, byte for byte,
 * whatever the thread count (a part's routes do not depend on another's). */
struct join {
	struct a2a_routes *out;
	const struct a2a_routes *part;
	const size_t *route0, *hop0; /* where each part starts in out */
};

static void join_one(void *ctx, size_t i, unsigned worker)
{
	const struct join *j = ctx;
	const struct a2a_routes *p = &j->part[i];
	struct a2a_routes *out = j->out;
	size_t r0 = j->route0[i], h0 = j->hop0[i], hops = p->nroutes ? p->off[p->nroutes] : 0;

	(void)worker;
	memcpy(out->src + r0, p->src, p->nroutes * sizeof(uint32_t));
	memcpy(out->dst + r0, p->dst, p->nroutes * sizeof(uint32_t));
	memcpy(out->w + r0, p->w, p->nroutes * sizeof(double));
	for (size_t r = 0; r < p->nroutes; r++)
		out->off[r0 + r + 1] = h0 + p->off[r + 1];
	memcpy(out->arc + h0, p->arc, hops * sizeof(uint32_t));
	if (out->step && p->step)
		memcpy(out->step + h0, p->step, hops * sizeof(uint32_t));
	else if (out->step) /* (a part of no steps: hop i at step i) */
		for (size_t r = 0; r < p->nroutes; r++)
			for (size_t h = p->off[r]; h < p->off[r + 1]; h++)
				out->step[h0 + h] = (uint32_t)(h - p->off[r]);
}

void a2a_routes_join(struct a2a_routes *out, struct a2a_routes *part, size_t nparts,
		     unsigned threads)
{
	size_t *route0 = xmalloc((nparts + 1) * sizeof(size_t));
	size_t *hop0 = xmalloc((nparts + 1) * sizeof(size_t));
	bool steps = false;

	route0[0] = hop0[0] = 0;
	for (size_t i = 0; i < nparts; i++) {
		route0[i + 1] = route0[i] + part[i].nroutes;
		hop0[i + 1] = hop0[i] + (part[i].nroutes ? part[i].off[part[i].nroutes] : 0);
		steps |= part[i].step != NULL;
	}
	a2a_routes_reserve(out, route0[nparts], hop0[nparts]);
	if (steps && !out->step)
		out->step = xreallocarray(NULL, out->cap_hops, sizeof(uint32_t));
	out->off[0] = 0;
	parallel_for(nparts, 1, threads, join_one,
		     &(struct join){.out = out, .part = part, .route0 = route0, .hop0 = hop0});
	out->nroutes = route0[nparts];
	for (size_t i = 0; i < nparts; i++)
		a2a_routes_free(&part[i]);
	free(route0);
	free(hop0);
}

struct expand {
	const struct graph *g;
	const struct a2a_routes *rt;
	struct a2a_routes *all;
	const uint32_t *tail;
};

/* Source s's routes: node 0's moved by the translation 0 -> s, at s's
 * place in the whole set (every source has as many routes and hops). */
static void expand_one(void *ctx, size_t si, unsigned worker)
{
	const struct expand *e = ctx;
	const struct a2a_routes *rt = e->rt;
	const struct graph *g = e->g;
	struct a2a_routes *all = e->all;
	uint32_t n = g->n, s = (uint32_t)si;
	const uint32_t *p = rt->perm + (size_t)s * n;
	size_t hops = rt->off[rt->nroutes], r0 = (size_t)s * rt->nroutes, h0 = (size_t)s * hops;

	(void)worker;
	for (size_t r = 0; r < rt->nroutes; r++) {
		all->src[r0 + r] = p[rt->src[r]];
		all->dst[r0 + r] = p[rt->dst[r]];
		all->w[r0 + r] = rt->w[r];
		all->off[r0 + r + 1] = h0 + rt->off[r + 1];
	}
	for (size_t h = 0; h < hops; h++) {
		uint32_t a = rt->arc[h], u = e->tail[a];

		all->arc[h0 + h] = g->off[p[u]] + (a - g->off[u]);
	}
	if (rt->step)
		memcpy(all->step + h0, rt->step, hops * sizeof(uint32_t));
}

void a2a_routes_expand(const struct graph *g, struct a2a_routes *rt, unsigned threads)
{
	struct a2a_routes all = {.n = rt->n};
	size_t hops = rt->nroutes ? rt->off[rt->nroutes] : 0;

	if (!rt->symmetric)
		return;
	if (rt->nroutes) {
		uint32_t *tail = graph_arc_tails(g);

		a2a_routes_reserve(&all, (size_t)g->n * rt->nroutes, (size_t)g->n * hops);
		if (rt->step)
			all.step = xreallocarray(NULL, all.cap_hops, sizeof(uint32_t));
		all.off[0] = 0;
		parallel_for(g->n, 8, threads, expand_one,
			     &(struct expand){.g = g, .rt = rt, .all = &all, .tail = tail});
		all.nroutes = (size_t)g->n * rt->nroutes;
		free(tail);
	}
	a2a_routes_free(rt);
	*rt = all;
}

/* The max_paths heaviest routes of every pair in [r, end) (routes of a
 * pair contiguous), weights renormalised, appended to out. */
static void limit_range(const struct a2a_routes *rt, size_t r, size_t end, uint32_t max_paths,
			struct a2a_routes *out)
{
	size_t *idx = NULL, cap = 0;

	while (r < end) {
		size_t e = r, k;
		double sum = 0;

		while (e < end && rt->src[e] == rt->src[r] && rt->dst[e] == rt->dst[r])
			e++;
		GROW(idx, cap, e - r);
		for (k = 0; k < e - r; k++)
			idx[k] = r + k;
		/* Heaviest first (insertion sort: a pair has few routes). */
		for (size_t i = 1; i < e - r; i++)
			for (size_t j = i; j > 0 && rt->w[idx[j]] > rt->w[idx[j - 1]]; j--) {
				size_t t = idx[j];
				idx[j] = idx[j - 1];
				idx[j - 1] = t;
			}
		k = e - r < max_paths ? e - r : max_paths;
		for (size_t i = 0; i < k; i++)
			sum += rt->w[idx[i]];
		for (size_t i = 0; i < k; i++) {
			size_t q = idx[i];

			a2a_routes_add(out, rt->src[q], rt->dst[q], rt->w[q] / sum,
				       rt->arc + rt->off[q], a2a_route_steps(rt, q),
				       (uint32_t)(rt->off[q + 1] - rt->off[q]));
		}
		r = e;
	}
	free(idx);
}

/* Parts of LIMIT_PART routes (rounded up to a whole pair): enough of them
 * for every thread, few enough that joining them costs nothing. */
#define LIMIT_PART 65536u

struct limit {
	const struct a2a_routes *rt;
	const size_t *cut; /* part i: routes cut[i] .. cut[i + 1] - 1 */
	uint32_t max_paths;
	struct a2a_routes *part;
};

static void limit_one(void *ctx, size_t i, unsigned worker)
{
	const struct limit *l = ctx;

	(void)worker;
	l->part[i].n = l->rt->n;
	/* Room for the whole range (what is kept is less): the part is
	 * never grown, each growth a copy and fresh pages. */
	a2a_routes_reserve(&l->part[i], l->cut[i + 1] - l->cut[i],
			   l->rt->off[l->cut[i + 1]] - l->rt->off[l->cut[i]]);
	limit_range(l->rt, l->cut[i], l->cut[i + 1], l->max_paths, &l->part[i]);
}

/* Routes in pair order (routes of one pair are contiguous already). */
void a2a_routes_limit(struct a2a_routes *rt, uint32_t max_paths, unsigned threads)
{
	struct a2a_routes out = {.n = rt->n, .symmetric = rt->symmetric, .perm = rt->perm};
	size_t most = 0, nparts = 0, *cut;

	/* Within the limit already: nothing to drop (the copy below is most
	 * of the lowering's time at 65,536 nodes). */
	for (size_t r = 0, e = 0; r < rt->nroutes && most <= max_paths; r = e) {
		while (e < rt->nroutes && rt->src[e] == rt->src[r] && rt->dst[e] == rt->dst[r])
			e++;
		most = e - r > most ? e - r : most;
	}
	if (most <= max_paths)
		return;
	/* The cuts fall between pairs, where the routes are split by count
	 * alone: the same parts on any number of threads. */
	cut = xmalloc((rt->nroutes / LIMIT_PART + 2) * sizeof(size_t));
	cut[0] = 0;
	while (cut[nparts] < rt->nroutes) {
		size_t c = cut[nparts] + LIMIT_PART;

		if (c >= rt->nroutes)
			c = rt->nroutes;
		while (c < rt->nroutes && rt->src[c] == rt->src[c - 1] &&
		       rt->dst[c] == rt->dst[c - 1])
			c++;
		cut[++nparts] = c;
	}
	struct a2a_routes *part = xcalloc(nparts + 1, sizeof(*part));
	parallel_for(nparts, 1, threads, limit_one,
		     &(struct limit){.rt = rt, .cut = cut, .max_paths = max_paths, .part = part});
	a2a_routes_join(&out, part, nparts, threads);
	free(part);
	free(cut);
	rt->perm = NULL;
	a2a_routes_free(rt);
	*rt = out;
}

uint32_t a2a_max_hops(const struct a2a_routes *rt)
{
	size_t best = 0;

	for (size_t r = 0; r < rt->nroutes; r++)
		if (rt->off[r + 1] - rt->off[r] > best)
			best = rt->off[r + 1] - rt->off[r];
	return (uint32_t)best;
}

uint32_t a2a_max_paths(const struct a2a_routes *rt)
{
	uint32_t best = 0;

	for (size_t r = 0; r < rt->nroutes;) {
		size_t e = r;

		while (e < rt->nroutes && rt->src[e] == rt->src[r] && rt->dst[e] == rt->dst[r])
			e++;
		if (e - r > best)
			best = (uint32_t)(e - r);
		r = e;
	}
	return best;
}

double a2a_max_link_load(const struct graph *g, const double *cap, const double *demand,
			 const struct a2a_routes *rt)
{
	double *load = xcalloc((size_t)g->m + 1, sizeof(double)), max = 0;

	for (size_t r = 0; r < rt->nroutes; r++) {
		double w = rt->w[r] * (demand ? demand[(size_t)rt->src[r] * g->n + rt->dst[r]] : 1);

		for (size_t h = rt->off[r]; h < rt->off[r + 1]; h++)
			load[rt->arc[h]] += w;
	}
	for (uint32_t a = 0; a < g->m; a++)
		if (load[a] / (cap ? cap[a] : 1) > max)
			max = load[a] / (cap ? cap[a] : 1);
	free(load);
	return max;
}

void a2a_routes_free(struct a2a_routes *r)
{
	free(r->perm);
	free(r->src);
	free(r->dst);
	free(r->w);
	free(r->off);
	free(r->arc);
	free(r->step);
	memset(r, 0, sizeof(*r));
}
