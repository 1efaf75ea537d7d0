/* Port permutations that keep the ports a switch uses now.
 *
 * A reconfiguration keeps a cross-connect only when the new target puts the
 * same arc u -> v on the same port j: port j of a relabelled topology is
 * one permutation of its d (topo_ports), and which arc goes to which port
 * is free. Round j picks port j's permutation as a perfect matching of the
 * arcs no earlier round took that costs the least (the Hungarian method,
 * Kuhn-Munkres: Dijkstra over reduced costs with node potentials, then a
 * maximal set of disjoint augmenting paths among the arcs of reduced cost
 * zero, as Hopcroft-Karp does among the shortest):
 *
 *   0  the arc port j carries now at u (it stays);
 *   1  any other arc with a copy to spare;
 *   2  an arc whose every unused copy a later port carries now (taking it
 *      loses that port's cross-connect).
 *
 * Removing a perfect matching from a k-regular bipartite multigraph leaves
 * it (k-1)-regular (König), so every round finds one. Seeding the Hopcroft-
 * Karp rounds with the preferred arcs, as topo_ports_prefer did before,
 * kept them only until an augmenting path ran through them: a torus:8x8
 * renumbered onto a torus:4x8 and a circulant:32:1,4 kept 8 of the 208
 * arcs in place, this 208. Rounds are greedy in port order, so
 * a decomposition that keeps every preferred arc is not always found when
 * one exists (a precoloured edge colouring, NP-complete in general).
 *
 * Parallel arcs are pairs with a count: a round looks at each
 * distinct u -> v once. */
#include "topo/internal.h"

#include <stdlib.h>
#include <string.h>

#define NONE UINT32_MAX
#define FAR  INT64_MAX

/* The distinct arcs u -> v of every node in port order (CSR), with their
 * copies not given a port yet (left) and the later ports that carry them
 * now (want). */
struct pairs {
	uint32_t *off, *head, *left, *want;
	uint32_t *pref; /* d * n: port j's pair at u now, NONE */
};

struct heap_item {
	int64_t key;
	uint32_t x;
};

struct round {
	uint32_t n;
	const struct pairs *p;
	const uint32_t *pref; /* this port's row of p->pref */
	uint32_t *mate_l;     /* node -> pair, NONE */
	uint32_t *mate_r;     /* node -> node whose pair goes there, NONE */
	int64_t *pot, *dist;  /* 2n: tails u, heads n + v */
	uint32_t *iter, *stack, *took;
	uint8_t *seen;
	struct heap_item *heap;
	uint32_t nheap;
};

static void pairs_build(struct pairs *p, const struct graph *g, const struct port_map *prefer,
			uint32_t d)
{
	uint32_t n = g->n, np = 0, *slot = xmalloc(((size_t)n + 1) * sizeof(uint32_t));
	uint32_t dp = prefer->d < d ? prefer->d : d;

	p->off = xmalloc(((size_t)n + 1) * sizeof(uint32_t));
	p->head = xmalloc(((size_t)g->m + 1) * sizeof(uint32_t));
	p->left = xmalloc(((size_t)g->m + 1) * sizeof(uint32_t));
	p->want = xcalloc((size_t)g->m + 1, sizeof(uint32_t));
	p->pref = xmalloc(((size_t)n * d + 1) * sizeof(uint32_t));
	memset(p->pref, 0xff, ((size_t)n * d + 1) * sizeof(uint32_t));
	memset(slot, 0xff, ((size_t)n + 1) * sizeof(uint32_t));
	for (uint32_t u = 0; u < n; u++) {
		p->off[u] = np;
		for (uint32_t a = g->off[u]; a < g->off[u + 1]; a++) {
			uint32_t v = g->adj[a];

			if (slot[v] == NONE) {
				slot[v] = np;
				p->head[np] = v;
				p->left[np++] = 0;
			}
			p->left[slot[v]]++;
		}
		for (uint32_t j = 0; j < dp; j++) {
			uint32_t v = prefer->to[(size_t)j * n + u];

			if (v < n && slot[v] != NONE) {
				p->pref[(size_t)j * n + u] = slot[v];
				p->want[slot[v]]++;
			}
		}
		for (uint32_t a = g->off[u]; a < g->off[u + 1]; a++)
			slot[g->adj[a]] = NONE;
	}
	p->off[n] = np;
	free(slot);
}

static void pairs_free(struct pairs *p)
{
	free(p->off);
	free(p->head);
	free(p->left);
	free(p->want);
	free(p->pref);
}

static int64_t cost(const struct round *r, uint32_t u, uint32_t q)
{
	if (q == r->pref[u])
		return 0;
	return r->p->left[q] > r->p->want[q] ? 1 : 2;
}

/* Reduced cost of taking pair q at u. */
static int64_t reduced(const struct round *r, uint32_t u, uint32_t q)
{
	return cost(r, u, q) + r->pot[u] - r->pot[r->n + r->p->head[q]];
}

static void match(struct round *r, uint32_t u, uint32_t q)
{
	r->mate_l[u] = q;
	r->mate_r[r->p->head[q]] = u;
}

static void heap_push(struct round *r, int64_t key, uint32_t x)
{
	uint32_t i = r->nheap++;

	while (i > 0 && r->heap[(i - 1) / 2].key > key) {
		r->heap[i] = r->heap[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	r->heap[i] = (struct heap_item){key, x};
}

static struct heap_item heap_pop(struct round *r)
{
	struct heap_item top = r->heap[0], last = r->heap[--r->nheap];
	uint32_t i = 0;

	for (;;) {
		uint32_t c = 2 * i + 1;

		if (c >= r->nheap)
			break;
		if (c + 1 < r->nheap && r->heap[c + 1].key < r->heap[c].key)
			c++;
		if (r->heap[c].key >= last.key)
			break;
		r->heap[i] = r->heap[c];
		i = c;
	}
	if (r->nheap)
		r->heap[i] = last;
	return top;
}

/* The start: the arcs port j carries now, then the first spare arc of every
 * node still free. It costs the least of all matchings its size (every
 * arc of cost 0 that can be in it is), and the potentials (0 on tails, the
 * matched arc's cost on heads) leave no arc a negative reduced cost. */
static uint32_t start(struct round *r)
{
	const struct pairs *p = r->p;
	uint32_t n = r->n, matched = 0;

	for (uint32_t u = 0; u < n; u++) {
		uint32_t q = r->pref[u];

		if (q != NONE && p->left[q] && r->mate_r[p->head[q]] == NONE) {
			match(r, u, q);
			matched++;
		}
	}
	for (uint32_t u = 0; u < n; u++)
		for (uint32_t q = p->off[u]; r->mate_l[u] == NONE && q < p->off[u + 1]; q++)
			if (p->left[q] && r->mate_r[p->head[q]] == NONE && cost(r, u, q) == 1) {
				match(r, u, q);
				matched++;
			}
	for (uint32_t x = 0; x < 2 * n; x++)
		r->pot[x] = 0;
	for (uint32_t u = 0; u < n; u++)
		if (r->mate_l[u] != NONE)
			r->pot[n + p->head[r->mate_l[u]]] = cost(r, u, r->mate_l[u]);
	return matched;
}

/* Dijkstra from every free tail over reduced costs to the nearest free
 * head, at distance D; then every potential grows by its distance, capped
 * at D, which keeps reduced costs non-negative and makes the shortest
 * augmenting paths the arcs of reduced cost zero. False when no free head
 * can be reached (not for a regular multigraph). */
static bool dijkstra(struct round *r)
{
	const struct pairs *p = r->p;
	uint32_t n = r->n;
	int64_t far = FAR;

	r->nheap = 0;
	for (uint32_t x = 0; x < 2 * n; x++)
		r->dist[x] = FAR;
	for (uint32_t u = 0; u < n; u++)
		if (r->mate_l[u] == NONE) {
			r->dist[u] = 0;
			heap_push(r, 0, u);
		}
	while (r->nheap) {
		struct heap_item it = heap_pop(r);

		if (it.key > r->dist[it.x])
			continue;
		if (it.x >= n) {
			uint32_t v = it.x - n, w = r->mate_r[v];

			if (w == NONE) {
				far = it.key;
				break;
			}
			/* back along the matched arc: reduced cost zero */
			int64_t nd = it.key - cost(r, w, r->mate_l[w]) + r->pot[it.x] - r->pot[w];
			if (nd < r->dist[w]) {
				r->dist[w] = nd;
				heap_push(r, nd, w);
			}
			continue;
		}
		uint32_t u = it.x;
		for (uint32_t q = p->off[u]; q < p->off[u + 1]; q++) {
			if (!p->left[q] || q == r->mate_l[u])
				continue;
			uint32_t y = n + p->head[q];
			int64_t nd = it.key + reduced(r, u, q);

			if (nd < r->dist[y]) {
				r->dist[y] = nd;
				heap_push(r, nd, y);
			}
		}
	}
	if (far == FAR)
		return false;
	for (uint32_t x = 0; x < 2 * n; x++)
		r->pot[x] += r->dist[x] < far ? r->dist[x] : far;
	return true;
}

/* Disjoint augmenting paths along arcs of reduced cost zero, from every
 * free tail (one depth-first search each; a head is entered once). */
static uint32_t augment(struct round *r)
{
	const struct pairs *p = r->p;
	uint32_t n = r->n, found = 0;

	memset(r->seen, 0, n);
	for (uint32_t u = 0; u < n; u++)
		r->iter[u] = p->off[u];
	for (uint32_t s = 0; s < n; s++) {
		uint32_t top = 0;

		if (r->mate_l[s] != NONE)
			continue;
		r->stack[top++] = s;
		while (top) {
			uint32_t u = r->stack[top - 1], q = r->iter[u];

			if (q == p->off[u + 1]) {
				top--;
				continue;
			}
			r->iter[u]++;
			uint32_t v = p->head[q];
			if (!p->left[q] || q == r->mate_l[u] || r->seen[v] || reduced(r, u, q) != 0)
				continue;
			r->seen[v] = 1;
			r->took[top - 1] = q;
			if (r->mate_r[v] == NONE) {
				for (uint32_t i = top; i-- > 0;)
					match(r, r->stack[i], r->took[i]);
				found++;
				break;
			}
			r->stack[top++] = r->mate_r[v];
		}
	}
	return found;
}

/* Whether port j of u keeps what it carries now when it goes to v. */
static int keeps(const struct port_map *prefer, uint32_t j, uint32_t u, uint32_t v)
{
	return j < prefer->d && prefer->to[(size_t)j * prefer->n + u] == v;
}

/* Kempe chains: ports j and k together join every node to two heads, a
 * union of alternating cycles; trading the two ports' heads along a cycle
 * leaves both permutations, and is done when it keeps more of prefer.
 * Rounds that each chose the best port for themselves miss the trades a
 * later port needed; this finds those between two ports, until none is
 * left (each trade keeps one more, so at most n * d of them). */
static void trade_ports(struct port_map *pm, const struct port_map *prefer)
{
	uint32_t n = pm->n, d = pm->d;
	uint32_t *inv = xmalloc(((size_t)n + 1) * sizeof(uint32_t));
	uint32_t *cycle = xmalloc(((size_t)n + 1) * sizeof(uint32_t));
	uint8_t *seen = xmalloc((size_t)n + 1);
	bool traded = true;

	while (traded) {
		traded = false;
		for (uint32_t j = 0; j < d; j++)
			for (uint32_t k = j + 1; k < d; k++) {
				uint32_t *tj = pm->to + (size_t)j * n, *tk = pm->to + (size_t)k * n;

				for (uint32_t u = 0; u < n; u++)
					inv[tk[u]] = u;
				memset(seen, 0, n);
				for (uint32_t u0 = 0; u0 < n; u0++) {
					int gain = 0;
					uint32_t u = u0;

					if (seen[u0])
						continue;
					do { /* u -(j)-> tj[u] <-(k)- the next */
						seen[u] = 1;
						gain += keeps(prefer, j, u, tk[u]) +
							keeps(prefer, k, u, tj[u]) -
							keeps(prefer, j, u, tj[u]) -
							keeps(prefer, k, u, tk[u]);
						u = inv[tj[u]];
					} while (u != u0);
					if (gain <= 0)
						continue;
					uint32_t len = 0;
					do {
						uint32_t t = tj[u];

						tj[u] = tk[u];
						tk[u] = t;
						cycle[len++] = u;
						u = inv[t];
					} while (u != u0);
					while (len--)
						inv[tk[cycle[len]]] = cycle[len];
					traded = true;
				}
			}
	}
	free(inv);
	free(cycle);
	free(seen);
}

int topo_ports_prefer(const struct graph *g, const struct port_map *prefer, struct port_map *pm,
		      struct ofc_error *err)
{
	uint32_t n = g->n, d = n ? graph_outdeg(g, 0) : 0;
	struct pairs p;
	struct round r = {.n = n, .p = &p};
	int rc = 0;

	if (!prefer || prefer->n != n || !prefer->to || !prefer->d)
		return topo_ports(g, pm, err);
	memset(pm, 0, sizeof(*pm));
	if (topo_check_regular(g, d, err) < 0)
		return -1;
	pairs_build(&p, g, prefer, d);
	r.mate_l = xmalloc(((size_t)n + 1) * sizeof(uint32_t));
	r.mate_r = xmalloc(((size_t)n + 1) * sizeof(uint32_t));
	r.pot = xmalloc(((size_t)2 * n + 1) * sizeof(int64_t));
	r.dist = xmalloc(((size_t)2 * n + 1) * sizeof(int64_t));
	r.iter = xmalloc(((size_t)n + 1) * sizeof(uint32_t));
	r.stack = xmalloc(((size_t)n + 1) * sizeof(uint32_t));
	r.took = xmalloc(((size_t)n + 1) * sizeof(uint32_t));
	r.seen = xmalloc((size_t)n + 1);
	r.heap = xmalloc(((size_t)p.off[n] + 2 * (size_t)n + 1) * sizeof(*r.heap));
	pm->n = n;
	pm->d = d;
	pm->to = xmalloc(((size_t)n * d + 1) * sizeof(uint32_t));
	for (uint32_t j = 0; j < d && rc == 0; j++) {
		r.pref = p.pref + (size_t)j * n;
		memset(r.mate_l, 0xff, (size_t)n * sizeof(uint32_t));
		memset(r.mate_r, 0xff, (size_t)n * sizeof(uint32_t));
		uint32_t matched = start(&r);
		while (matched < n && dijkstra(&r))
			matched += augment(&r);
		if (matched < n) {
			/* Impossible for a regular multigraph; kept as a guard. */
			rc = ofc_error_set(err, OFC_E_RUNTIME,
					   "port %u: only %u of %u nodes matched", j, matched, n);
			break;
		}
		for (uint32_t u = 0; u < n; u++) {
			uint32_t q = r.mate_l[u];

			p.left[q]--;
			if (r.pref[u] != NONE)
				p.want[r.pref[u]]--;
			pm->to[(size_t)j * n + u] = p.head[q];
			pm->nself += p.head[q] == u;
		}
	}
	if (rc == 0)
		trade_ports(pm, prefer);
	if (rc == 0 && pm->nself)
		port_map_list_self_loops(pm);
	pairs_free(&p);
	free(r.mate_l);
	free(r.mate_r);
	free(r.pot);
	free(r.dist);
	free(r.iter);
	free(r.stack);
	free(r.took);
	free(r.seen);
	free(r.heap);
	if (rc < 0)
		port_map_free(pm);
	return rc;
}
