/* Port permutations: a d-regular digraph as d perfect matchings.
 *
 * Every node has d transmit and d receive ports; an OCS or patch panel
 * connects transmit port j of u to receive port j of v, so one port index is
 * one permutation of the nodes. König's theorem says the bipartite double
 * cover (tails on the left, heads on the right) of a d-regular multigraph
 * splits into d perfect matchings; we peel them off one at a time with
 * Hopcroft-Karp, O(d m sqrt n) in all. Each round starts from the greedy
 * matching "first unused arc of every node, in the family's port order", so
 * topologies whose port j is already a permutation (tori, circulants,
 * hypercubes) keep port j = generator j and need no augmenting at all.
 * topo_ports_prefer (ports_prefer.c) is the same decomposition when some
 * arcs should stay on the ports a switch carries them on now.
 *
 * Parallel arcs (an edge list of 15.7 M copies of a few links).
 * Copies of one arc u->v are interchangeable to a matching, and a scan that
 * finds v taken finds every copy of it taken: each round looks at one copy
 * of each pair (u, v), the first one not used yet, its "visible" copy. The
 * visible copies are a set of arc positions (struct arcset) that a scan
 * walks in port order, so a round costs the pairs it looks at, not the
 * copies used in earlier rounds or the copies of a head already taken; the
 * greedy start and the BFS then do exactly what a scan of every arc did,
 * and the DFS too except that it tries a pair once per visit where a scan
 * of every copy could try a later copy again after an augmentation (both
 * find a perfect matching; the families and the tests' random multigraphs
 * come out the same). 2 nodes joined by 100,000 parallel links took 31 s
 * and grew with the square of the links; now a few milliseconds. */
#include "topo/internal.h"

#include <stdlib.h>
#include <string.h>

#define NONE	      UINT32_MAX
#define ARCSET_LEVELS 6 /* 64^6 positions, past TOPO_MAX_ARCS */

/* A set of arc positions: insert, erase, and the first member at or after
 * a position, in a word operation per level (level 0 holds a bit per arc,
 * level k + 1 a bit per nonzero word of level k). */
struct arcset {
	unsigned levels;
	size_t len[ARCSET_LEVELS];
	uint64_t *w[ARCSET_LEVELS];
};

static void arcset_init(struct arcset *s, uint32_t m)
{
	size_t bits = (size_t)m + 1;

	memset(s, 0, sizeof(*s));
	do {
		s->len[s->levels] = (bits + 63) / 64;
		s->w[s->levels] = xcalloc(s->len[s->levels], sizeof(uint64_t));
		bits = s->len[s->levels++];
	} while (bits > 1);
}

static void arcset_free(struct arcset *s)
{
	for (unsigned k = 0; k < s->levels; k++)
		free(s->w[k]);
}

static void arcset_insert(struct arcset *s, uint32_t x)
{
	size_t p = x;

	for (unsigned k = 0; k < s->levels; k++, p >>= 6) {
		uint64_t *w = &s->w[k][p >> 6];
		bool was = *w != 0;

		*w |= 1ull << (p & 63);
		if (was)
			break; /* the levels above already know the word */
	}
}

static void arcset_erase(struct arcset *s, uint32_t x)
{
	size_t p = x;

	for (unsigned k = 0; k < s->levels; k++, p >>= 6) {
		uint64_t *w = &s->w[k][p >> 6];

		*w &= ~(1ull << (p & 63));
		if (*w)
			break;
	}
}

/* The first member at or after x, NONE when there is none. */
static uint32_t arcset_next(const struct arcset *s, uint32_t x)
{
	size_t p = x;
	unsigned k = 0;

	for (;;) {
		size_t i = p >> 6;
		uint64_t bits;

		if (k == s->levels || i >= s->len[k])
			return NONE;
		bits = s->w[k][i] & (~0ull << (p & 63));
		if (bits) {
			p = i << 6 | (size_t)__builtin_ctzll(bits);
			break;
		}
		p = i + 1; /* the next word: a bit of the level above */
		k++;
	}
	while (k-- > 0)
		p = p << 6 | (size_t)__builtin_ctzll(s->w[k][p]);
	return (uint32_t)p;
}

struct hk {
	const struct graph *g;
	/* A pair's copies in port order (NONE after the last), which of them
	 * earlier rounds used, and the visible ones (the first unused copy of
	 * each pair). */
	uint32_t *next_copy;
	uint64_t *used;
	struct arcset all;
	uint32_t *match_l; /* left node -> arc, NONE if free */
	uint32_t *match_r; /* right node -> left node, NONE if free */
	uint32_t *dist;
	uint32_t *queue;
	uint32_t *iter; /* next arc to try, per left node */
	uint32_t *stack, *via;
	uint64_t work; /* arcs looked at and nodes reset: tests hold it near m */
};

static bool is_used(const struct hk *h, uint32_t a)
{
	return h->used[a >> 6] >> (a & 63) & 1;
}

/* u's visible arcs in s, in port order. */
static uint32_t first_arc(const struct hk *h, const struct arcset *s, uint32_t u)
{
	uint32_t a = arcset_next(s, h->g->off[u]);

	return a < h->g->off[u + 1] ? a : NONE;
}

static uint32_t next_arc(const struct hk *h, const struct arcset *s, uint32_t u, uint32_t a)
{
	a = arcset_next(s, a + 1);
	return a < h->g->off[u + 1] ? a : NONE;
}

/* Arc a (a visible copy) goes to a port: the pair's next unused copy
 * becomes visible. */
static void use_arc(struct hk *h, uint32_t a)
{
	uint32_t b = a;

	h->used[a >> 6] |= 1ull << (a & 63);
	while (b != NONE && is_used(h, b))
		b = h->next_copy[b];
	arcset_erase(&h->all, a);
	if (b != NONE)
		arcset_insert(&h->all, b);
}

static bool hk_bfs(struct hk *h)
{
	const struct graph *g = h->g;
	uint32_t head = 0, tail = 0;
	bool found = false;

	for (uint32_t u = 0; u < g->n; u++) {
		if (h->match_l[u] == NONE) {
			h->dist[u] = 0;
			h->queue[tail++] = u;
		} else {
			h->dist[u] = NONE;
		}
	}
	h->work += g->n;
	while (head < tail) {
		uint32_t u = h->queue[head++];

		for (uint32_t a = first_arc(h, &h->all, u); a != NONE;
		     a = next_arc(h, &h->all, u, a)) {
			uint32_t w = h->match_r[g->adj[a]];

			h->work++;
			if (w == NONE)
				found = true;
			else if (h->dist[w] == NONE) {
				h->dist[w] = h->dist[u] + 1;
				h->queue[tail++] = w;
			}
		}
	}
	return found;
}

/* Iterative DFS along the BFS layers from free left node s. */
static bool hk_dfs(struct hk *h, uint32_t s)
{
	const struct graph *g = h->g;
	uint32_t top = 0;

	h->stack[top++] = s;
	while (top) {
		uint32_t u = h->stack[top - 1];
		uint32_t a = arcset_next(&h->all, h->iter[u]);

		if (a >= g->off[u + 1]) {
			h->dist[u] = NONE; /* dead end: never again this phase */
			top--;
			continue;
		}
		h->iter[u] = a + 1;
		h->work++;
		uint32_t v = g->adj[a], w = h->match_r[v];
		if (w == NONE) {
			/* Augment: each stacked node takes the arc it went by. */
			h->match_l[u] = a;
			h->match_r[v] = u;
			for (uint32_t i = top - 1; i-- > 0;) {
				uint32_t x = h->stack[i], b = h->via[i];

				h->match_l[x] = b;
				h->match_r[g->adj[b]] = x;
			}
			return true;
		}
		if (h->dist[w] == h->dist[u] + 1 && h->dist[w] != NONE) {
			h->via[top - 1] = a;
			h->stack[top++] = w;
		}
	}
	return false;
}

/* Each pair's copies chained in port order (next_copy), and the first copy
 * of each pair visible in all. */
static void chain_copies(struct hk *h)
{
	const struct graph *g = h->g;
	uint32_t n = g->n;
	uint32_t *first = xmalloc(((size_t)n + 1) * sizeof(uint32_t));

	memset(first, 0xff, (size_t)n * sizeof(uint32_t));
	for (uint32_t u = 0; u < n; u++) {
		for (uint32_t a = g->off[u + 1]; a-- > g->off[u];) {
			h->next_copy[a] = first[g->adj[a]];
			first[g->adj[a]] = a;
		}
		for (uint32_t a = g->off[u]; a < g->off[u + 1]; a++)
			if (first[g->adj[a]] == a)
				arcset_insert(&h->all, a);
		for (uint32_t a = g->off[u]; a < g->off[u + 1]; a++)
			first[g->adj[a]] = NONE; /* clean for the next node */
	}
	h->work += g->m;
	free(first);
}

/* Round j's greedy start: the first free visible arc of every node in port
 * order. */
static uint32_t greedy_start(struct hk *h)
{
	const struct graph *g = h->g;
	uint32_t matched = 0;

	for (uint32_t u = 0; u < g->n; u++)
		for (uint32_t a = first_arc(h, &h->all, u); h->match_l[u] == NONE && a != NONE;
		     a = next_arc(h, &h->all, u, a)) {
			h->work++;
			if (h->match_r[g->adj[a]] == NONE) {
				h->match_l[u] = a;
				h->match_r[g->adj[a]] = u;
				matched++;
			}
		}
	return matched;
}

int topo_ports(const struct graph *g, struct port_map *pm, struct ofc_error *err)
{
	return topo_ports_work(g, pm, NULL, err);
}

int topo_ports_work(const struct graph *g, struct port_map *pm, uint64_t *work,
		    struct ofc_error *err)
{
	uint32_t n = g->n, d = n ? graph_outdeg(g, 0) : 0;
	struct hk h = {.g = g};
	int rc = 0;

	memset(pm, 0, sizeof(*pm));
	if (topo_check_regular(g, d, err) < 0)
		return -1;
	h.next_copy = xmalloc(((size_t)g->m + 1) * sizeof(uint32_t));
	h.used = xcalloc((size_t)g->m / 64 + 1, sizeof(uint64_t));
	arcset_init(&h.all, g->m);
	h.match_l = xmalloc(((size_t)n + 1) * sizeof(uint32_t));
	h.match_r = xmalloc(((size_t)n + 1) * sizeof(uint32_t));
	h.dist = xmalloc(((size_t)n + 1) * sizeof(uint32_t));
	h.queue = xmalloc(((size_t)n + 1) * sizeof(uint32_t));
	h.iter = xmalloc(((size_t)n + 1) * sizeof(uint32_t));
	h.stack = xmalloc(((size_t)n + 1) * sizeof(uint32_t));
	h.via = xmalloc(((size_t)n + 1) * sizeof(uint32_t));
	pm->n = n;
	pm->d = d;
	pm->to = xmalloc(((size_t)n * d + 1) * sizeof(uint32_t));

	chain_copies(&h);
	for (uint32_t j = 0; j < d && rc == 0; j++) {
		memset(h.match_l, 0xff, (size_t)n * sizeof(uint32_t));
		memset(h.match_r, 0xff, (size_t)n * sizeof(uint32_t));
		h.work += n;
		uint32_t matched = greedy_start(&h);
		while (matched < n && hk_bfs(&h)) {
			for (uint32_t u = 0; u < n; u++)
				h.iter[u] = g->off[u];
			for (uint32_t u = 0; u < n; u++)
				if (h.match_l[u] == NONE && hk_dfs(&h, u))
					matched++;
		}
		if (matched < n) {
			/* Impossible for a regular multigraph; kept as a guard. */
			rc = ofc_error_set(err, OFC_E_RUNTIME,
					   "port %u: only %u of %u nodes matched", j, matched, n);
			break;
		}
		for (uint32_t u = 0; u < n; u++) {
			uint32_t a = h.match_l[u];

			use_arc(&h, a);
			pm->to[(size_t)j * n + u] = g->adj[a];
			if (g->adj[a] == u)
				pm->nself++;
		}
	}
	if (rc == 0 && pm->nself)
		port_map_list_self_loops(pm);
	if (work)
		*work = h.work;
	free(h.next_copy);
	free(h.used);
	arcset_free(&h.all);
	free(h.match_l);
	free(h.match_r);
	free(h.dist);
	free(h.queue);
	free(h.iter);
	free(h.stack);
	free(h.via);
	if (rc < 0)
		port_map_free(pm);
	return rc;
}
