/* The assignment of most weight for a port of a topology built for
 * traffic: a permutation u -> to[u], no u -> u, that carries the
 * most weight, where only the pairs that trade (the traffic's support)
 * weigh anything.
 *
 * Every pair outside the support weighs 0 and any permutation can be
 * completed with such pairs, so the best permutation is a matching of most
 * weight on the support, completed. That matching is found exactly and
 * sparsely: min-cost perfect matching (cost -weight) in the support plus a
 * private "stay unmatched" partner of cost 0 for every u, by successive
 * shortest paths (Dijkstra on reduced costs, node potentials; one search
 * from each u, stopped at the first free partner). A dense Hungarian was
 * O(n^3) whatever the support, and stopped the planner at 512 hosts; this
 * is about n searches of the support's few arcs a host. The completion:
 * the unmatched sources to the unmatched targets by a rotation that fixes
 * none (one exists unless a single host is left over on both sides, when
 * the matched pair that loses least takes it in between: then within that
 * pair's weight of the best). */
#include "controller/jobplan/internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct heap_item {
	double d;
	uint32_t v;
};

struct heap {
	struct heap_item *a;
	size_t n, cap;
};

static void heap_push(struct heap *h, double d, uint32_t v)
{
	size_t i;

	GROW(h->a, h->cap, h->n + 1);
	for (i = h->n++; i > 0 && h->a[(i - 1) / 2].d > d; i = (i - 1) / 2)
		h->a[i] = h->a[(i - 1) / 2];
	h->a[i] = (struct heap_item){d, v};
}

static struct heap_item heap_pop(struct heap *h)
{
	struct heap_item top = h->a[0], last = h->a[--h->n];
	size_t i = 0;

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= h->n)
			break;
		if (c + 1 < h->n && h->a[c + 1].d < h->a[c].d)
			c++;
		if (h->a[c].d >= last.d)
			break;
		h->a[i] = h->a[c];
		i = c;
	}
	if (h->n)
		h->a[i] = last;
	return top;
}

/* The unmatched sources (from) onto the unmatched targets (onto), m each,
 * by the rotation of onto that maps no node to itself. Returns false when
 * there is none (m == 1 and the one source is the one target). */
static bool rotate_in(const uint32_t *from, const uint32_t *onto, uint32_t m, uint32_t n,
		      uint32_t *to)
{
	uint32_t *at = xmalloc(((size_t)n + 1) * sizeof(uint32_t)); /* node -> index in onto */
	uint32_t *bad = xcalloc((size_t)m + 1, sizeof(uint32_t));   /* shift -> fixed points */
	uint32_t k;

	for (uint32_t i = 0; i < n; i++)
		at[i] = UINT32_MAX;
	for (uint32_t i = 0; i < m; i++)
		at[onto[i]] = i;
	for (uint32_t i = 0; i < m; i++)
		if (at[from[i]] != UINT32_MAX)
			bad[(at[from[i]] + m - i) %
			    m]++; /* shift k puts onto[(i+k)%m] at from[i] */
	for (k = 0; k < m && bad[k]; k++)
		;
	if (k < m)
		for (uint32_t i = 0; i < m; i++)
			to[from[i]] = onto[(i + k) % m];
	free(at);
	free(bad);
	return k < m;
}

/* The matched pair a -> b that loses least taking z in between
 * (a -> z -> b: it gives w(a, b) and gains w(a, z) + w(z, b)): the one
 * host left over on both sides. */
static double weight(const struct jobplan_arcs *g, uint32_t u, uint32_t v)
{
	for (uint32_t k = g->off[u]; k < g->off[u + 1]; k++)
		if (g->to[k] == v)
			return g->w[k];
	return 0;
}

static void take_in(const struct jobplan_arcs *g, uint32_t z, uint32_t *to)
{
	uint32_t best = UINT32_MAX;
	double bl = INFINITY;

	for (uint32_t a = 0; a < g->n; a++) {
		if (a == z || to[a] == z)
			continue;
		double loss = weight(g, a, to[a]) - weight(g, a, z) - weight(g, z, to[a]);

		if (loss < bl) {
			bl = loss;
			best = a;
		}
	}
	to[z] = to[best];
	to[best] = z;
}

int jobplan_assign(const struct jobplan_arcs *g, uint32_t *to, double deadline)
{
	uint32_t n = g->n, R = 2 * n; /* right nodes: targets 0..n-1, u's own n + u */
	double *pu = xcalloc((size_t)n + 1, sizeof(double));
	double *pv = xcalloc((size_t)R + 1, sizeof(double));
	double *dist = xmalloc(((size_t)R + 1) * sizeof(double));
	uint32_t *mate = xmalloc(((size_t)R + 1) * sizeof(uint32_t)); /* right -> left */
	uint32_t *prev = xmalloc(((size_t)R + 1) * sizeof(uint32_t)); /* right -> left before */
	uint32_t *own = xmalloc(((size_t)n + 1) * sizeof(uint32_t));  /* left -> right */
	uint32_t *seen = xmalloc(((size_t)R + 1) * sizeof(uint32_t)); /* stamps: reached */
	uint32_t *fin = xmalloc(((size_t)R + 1) * sizeof(uint32_t));  /* stamps: finalised */
	uint32_t *done = xmalloc(((size_t)R + 1) * sizeof(uint32_t)); /* finalised, in order */
	struct heap h = {0};

	for (uint32_t y = 0; y < R; y++)
		mate[y] = seen[y] = fin[y] = UINT32_MAX;
	for (uint32_t x = 0; x < n; x++) { /* reduced costs -w - pu - pv >= 0 */
		double best = 0;

		for (uint32_t a = g->off[x]; a < g->off[x + 1]; a++)
			best = fmax(best, g->w[a]);
		pu[x] = -best;
		own[x] = UINT32_MAX;
	}
	bool late = false;
	for (uint32_t s = 0; s < n && !late; s++) {
		uint32_t ndone = 0, x = s, end;
		double dx = 0, D;

		if (s % 64 == 0 && now_seconds() > deadline) {
			late = true;
			break;
		}

		h.n = 0;
		for (;;) {
			/* relax left x (at distance dx): its arcs, then its own partner */
			for (uint32_t a = g->off[x]; a <= g->off[x + 1]; a++) {
				uint32_t y = a < g->off[x + 1] ? g->to[a] : n + x;
				double c = a < g->off[x + 1] ? -g->w[a] : 0;
				double d = dx + fmax(0, c - pu[x] - pv[y]);

				if (fin[y] == s || (seen[y] == s && d >= dist[y]))
					continue;
				seen[y] = s;
				dist[y] = d;
				prev[y] = x;
				heap_push(&h, d, y);
			}
			struct heap_item it = heap_pop(&h); /* (never empty: x's own partner) */
			while (fin[it.v] == s || it.d > dist[it.v])
				it = heap_pop(&h);
			fin[it.v] = s;
			done[ndone++] = it.v;
			if (mate[it.v] == UINT32_MAX) {
				end = it.v;
				D = it.d;
				break;
			}
			x = mate[it.v];
			dx = it.d;
		}
		/* potentials: the finalised nodes by their distance less D, so
		 * the tree's arcs are tight and every reduced cost stays >= 0 */
		pu[s] += D;
		for (uint32_t i = 0; i + 1 < ndone; i++) {
			uint32_t y = done[i];

			pv[y] += dist[y] - D;
			pu[mate[y]] += D - dist[y];
		}
		/* augment: every right node on the path takes the left before it */
		for (uint32_t y = end;;) {
			uint32_t l = prev[y], was = own[l];

			own[l] = y;
			mate[y] = l;
			if (l == s)
				break;
			y = was;
		}
	}
	/* the matched pairs, then the unmatched sources onto the free targets */
	uint32_t m = 0, k = 0;
	bool exact = true;
	if (late)
		goto out;
	for (uint32_t x = 0; x < n; x++)
		if (own[x] < n)
			to[x] = own[x];
		else
			done[m++] = x; /* (reused: the sources) */
	for (uint32_t y = 0; y < n; y++)
		if (mate[y] == UINT32_MAX)
			seen[k++] = y; /* (reused: the targets) */
	exact = !m || rotate_in(done, seen, m, n, to);
	if (!exact)
		take_in(g, done[0], to);
out:
	free(h.a);
	free(pu);
	free(pv);
	free(dist);
	free(mate);
	free(prev);
	free(own);
	free(seen);
	free(fin);
	free(done);
	return late ? -1 : exact ? 1 : 0;
}
