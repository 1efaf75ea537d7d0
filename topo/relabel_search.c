/* Relabelling: which host plays which node of a target topology, so that
 * as many circuits as possible stay where they are.
 *
 * Keeping the most arcs of the current wiring is a maximum common subgraph
 * problem (it contains graph isomorphism), so this is a search with a
 * budget. Each round grows a mapping along a breadth-first order of the
 * target: the next node goes to the free host that keeps the most arcs to
 * the nodes already placed; ties go to the host whose 2-path counts to the
 * placed nodes agree with the node's (a cheap Weisfeiler-Leman test that
 * tells a torus's straight neighbour from its corner neighbour), then to a
 * random one. Then swaps: a node with an arc that is not kept trades hosts
 * with the node sitting where that arc would be kept, when the trade keeps
 * more. Rounds start from different hosts and random tie-breaks, and, once
 * every host has seeded one, every other round restarts from the best
 * mapping with three random trades (iterated local search). The first
 * round trades from the best mapping so far (the identity or the
 * isomorphism's) instead. The search stops at once when it reaches an
 * upper bound (upper_bound: then nothing can do better), when the budget
 * runs out (the result says so: the best found so far), or after
 * max_rounds. The identity is the floor: a result never keeps fewer arcs
 * than leaving the labels alone. Before any round,
 * when both graphs have as many arcs, an isomorphism search
 * (graph_isomorphism, topo/automorph.c) gets a quarter of the budget: a
 * relabelled copy is then found exactly, whatever the greedy could read. */
#include "topo/topo.h"

#include <stdlib.h>
#include <string.h>

#define NONE UINT32_MAX
/* Up to this many nodes every pair is tried as a trade after the aimed ones. */
#define RELABEL_PAIRS_MAX 256u
/* Up to this many nodes multiplicities are looked up in a table. */
#define RELABEL_DENSE_MAX 1024u

/* A graph's arcs sorted per tail (for multiplicities by binary search) and
 * its undirected neighbourhoods (out and in, distinct, for the search). */
struct rgraph {
	uint32_t n;
	uint32_t *off, *adj;   /* sorted heads */
	uint32_t *ioff, *iadj; /* sorted tails, per head */
	uint32_t *uoff, *uadj;
	/* beside uadj: the arcs u -> uadj[x] (umo) and uadj[x] -> u (umi),
	 * what the swaps ask of the target for every neighbour they visit */
	uint32_t *umo, *umi;
	uint8_t *dense; /* n x n multiplicities when small (NULL: search adj) */
};

struct search {
	const struct relabel_opts *o;
	struct rgraph t, c; /* target, current */
	uint32_t n;
	uint32_t *map, *inv; /* target node -> host, host -> target node */
	uint32_t *order;     /* BFS order of the target */
	uint32_t *cand;
	int64_t *cnt_t, *cnt_c; /* 2-path counts, by target node / host */
	uint32_t *seen_t, *seen_c, *list_t, *list_c;
	uint32_t *mark, stamp, cstamp;
	/* Arcs at each node that the target has (inc_t), at each host that
	 * the wiring has (inc_c), and at each node that the mapping keeps
	 * (kept_at; loops once): a trade that cannot beat what its two nodes
	 * keep now is not tried (most of improve_pairs' n^2 / 2). */
	uint32_t *inc_t, *inc_c, *kept_at;
	uint64_t rng;
	double t0, deadline;
};

/* The clock has run out: the budget, or a cut made since (o->cut_us). */
static bool past(struct search *s)
{
	int32_t cut = s->o->cut_us ? *s->o->cut_us : 0;

	if (cut > 0 && s->t0 + cut * 1e-6 < s->deadline)
		s->deadline = s->t0 + cut * 1e-6;
	return now_seconds() >= s->deadline;
}

static uint64_t rng_next(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

/* Small graphs get an n x n table of multiplicities: the swaps ask for
 * millions of them a round, and a lookup is several times cheaper than a
 * binary search (1 MiB at RELABEL_DENSE_MAX nodes). Left out when a pair
 * has more arcs than a byte holds. */
static void rgraph_dense(struct rgraph *r)
{
	uint32_t n = r->n;

	r->dense = NULL;
	if (n == 0 || n > RELABEL_DENSE_MAX)
		return;
	uint8_t *d = xcalloc((size_t)n * n, 1);
	for (uint32_t u = 0; u < n; u++)
		for (uint32_t a = r->off[u]; a < r->off[u + 1]; a++) {
			uint8_t *x = &d[(size_t)u * n + r->adj[a]];

			if (*x == UINT8_MAX) {
				free(d);
				return;
			}
			(*x)++;
		}
	r->dense = d;
}

static inline uint32_t mult(const struct rgraph *r, uint32_t u, uint32_t v);

static void rgraph_build(struct rgraph *r, const struct graph *g)
{
	uint32_t n = g->n;
	struct graph *tr = graph_transpose(g);

	r->n = n;
	r->off = xmalloc(((size_t)n + 1) * sizeof(uint32_t));
	r->adj = xmalloc(((size_t)g->m + 1) * sizeof(uint32_t));
	memcpy(r->off, g->off, ((size_t)n + 1) * sizeof(uint32_t));
	memcpy(r->adj, g->adj, (size_t)g->m * sizeof(uint32_t));
	for (uint32_t u = 0; u < n; u++)
		qsort(r->adj + r->off[u], r->off[u + 1] - r->off[u], sizeof(uint32_t), cmp_u32);

	r->ioff = xmalloc(((size_t)n + 1) * sizeof(uint32_t));
	r->iadj = xmalloc(((size_t)g->m + 1) * sizeof(uint32_t));
	memcpy(r->ioff, tr->off, ((size_t)n + 1) * sizeof(uint32_t));
	memcpy(r->iadj, tr->adj, (size_t)g->m * sizeof(uint32_t));
	r->uoff = xmalloc(((size_t)n + 1) * sizeof(uint32_t));
	r->uadj = xmalloc(((size_t)g->m * 2 + 1) * sizeof(uint32_t));
	uint32_t k = 0;
	for (uint32_t u = 0; u < n; u++) {
		uint32_t start = k;

		r->uoff[u] = k;
		for (uint32_t a = g->off[u]; a < g->off[u + 1]; a++)
			r->uadj[k++] = g->adj[a];
		for (uint32_t a = tr->off[u]; a < tr->off[u + 1]; a++)
			r->uadj[k++] = tr->adj[a];
		qsort(r->uadj + start, k - start, sizeof(uint32_t), cmp_u32);
		uint32_t w = start;
		for (uint32_t i = start; i < k; i++)
			if (r->uadj[i] != u && (w == start || r->uadj[w - 1] != r->uadj[i]))
				r->uadj[w++] = r->uadj[i];
		k = w;
	}
	r->uoff[n] = k;
	graph_free(tr);
	rgraph_dense(r);
	r->umo = xmalloc(((size_t)k + 1) * sizeof(uint32_t));
	r->umi = xmalloc(((size_t)k + 1) * sizeof(uint32_t));
	for (uint32_t u = 0; u < n; u++)
		for (uint32_t x = r->uoff[u]; x < r->uoff[u + 1]; x++) {
			r->umo[x] = mult(r, u, r->uadj[x]);
			r->umi[x] = mult(r, r->uadj[x], u);
		}
}

static void rgraph_free(struct rgraph *r)
{
	free(r->off);
	free(r->adj);
	free(r->ioff);
	free(r->iadj);
	free(r->uoff);
	free(r->uadj);
	free(r->umo);
	free(r->umi);
	free(r->dense);
}

static uint32_t min_u32(uint32_t a, uint32_t b)
{
	return a < b ? a : b;
}

/* Arcs u -> v in r, by binary search in u's sorted heads. */
static uint32_t mult_search(const struct rgraph *r, uint32_t u, uint32_t v)
{
	const uint32_t *lo = r->adj + r->off[u], *hi = r->adj + r->off[u + 1];

	while (lo < hi) { /* first >= v */
		const uint32_t *mid = lo + (hi - lo) / 2;

		if (*mid < v)
			lo = mid + 1;
		else
			hi = mid;
	}
	uint32_t k = 0;
	while (lo + k < r->adj + r->off[u + 1] && lo[k] == v)
		k++;
	return k;
}

/* Arcs u -> v in r: the swaps' innermost question, inlined. */
static inline uint32_t mult(const struct rgraph *r, uint32_t u, uint32_t v)
{
	return r->dense ? r->dense[(size_t)u * r->n + v] : mult_search(r, u, v);
}

/* Target arcs kept beside uadj[x] of u: t arcs (from the table) against
 * the wiring's between hu and hv. */
static inline uint32_t kept_t(const struct search *s, uint32_t tm, uint32_t hu, uint32_t hv)
{
	return tm ? min_u32(tm, mult(&s->c, hu, hv)) : 0;
}

/* Target arcs u -> v kept when u and v sit at hosts hu and hv. */
static uint32_t kept_pair(const struct search *s, uint32_t u, uint32_t v, uint32_t hu, uint32_t hv)
{
	return min_u32(mult(&s->t, u, v), mult(&s->c, hu, hv));
}

/* Arcs kept by the whole mapping (unplaced nodes keep nothing). */
static uint64_t kept_all(const struct search *s, const uint32_t *map)
{
	uint64_t k = 0;

	for (uint32_t u = 0; u < s->n; u++)
		for (uint32_t a = s->t.off[u]; a < s->t.off[u + 1]; a++) {
			uint32_t v = s->t.adj[a];

			if (a > s->t.off[u] && s->t.adj[a - 1] == v)
				continue; /* one visit per distinct pair */
			if (map[u] != NONE && map[v] != NONE)
				k += kept_pair(s, u, v, map[u], map[v]);
		}
	return k;
}

/* Arcs kept on the pairs that touch node a or b (b may be NONE), each pair
 * once: what a swap of a and b can change. */
static uint64_t kept_around(const struct search *s, uint32_t a, uint32_t b)
{
	uint32_t nodes[2] = {a, b};
	uint64_t k = 0;

	for (int i = 0; i < 2 && nodes[i] != NONE; i++) {
		uint32_t u = nodes[i], hu = s->map[u];

		for (uint32_t x = s->t.uoff[u]; x < s->t.uoff[u + 1]; x++) {
			uint32_t v = s->t.uadj[x], hv = s->map[v];

			k += kept_t(s, s->t.umo[x], hu, hv);
			if (v != a && v != b) /* pairs inside {a, b} come from both ends */
				k += kept_t(s, s->t.umi[x], hv, hu);
		}
		k += kept_pair(s, u, u, hu, hu);
	}
	return k;
}

/* Breadth-first order of the target's undirected graph from root; nodes of
 * other components follow, each component from its smallest node. */
static void bfs_order(struct search *s, uint32_t root)
{
	uint32_t head = 0, tail = 0;

	s->stamp++;
	for (uint32_t r = 0; tail < s->n; r++) {
		uint32_t start = r == 0 ? root : r - 1;

		if (s->mark[start] == s->stamp)
			continue;
		s->mark[start] = s->stamp;
		s->order[tail++] = start;
		while (head < tail) {
			uint32_t u = s->order[head++];

			for (uint32_t x = s->t.uoff[u]; x < s->t.uoff[u + 1]; x++) {
				uint32_t v = s->t.uadj[x];

				if (s->mark[v] != s->stamp) {
					s->mark[v] = s->stamp;
					s->order[tail++] = v;
				}
			}
		}
	}
}

/* Directed 2-path counts from x in r into cnt (by node), one 16-bit field
 * per kind of path (out-out, out-in, in-out, in-in), the nodes touched
 * listed in list; returns how many. */
static uint32_t two_paths(const struct rgraph *r, uint32_t x, int64_t *cnt, uint32_t *seen,
			  uint32_t stamp, uint32_t *list)
{
	const uint32_t *off[2] = {r->off, r->ioff}, *adj[2] = {r->adj, r->iadj};
	uint32_t k = 0;

	for (int first = 0; first < 2; first++)
		for (uint32_t i = off[first][x]; i < off[first][x + 1]; i++) {
			uint32_t y = adj[first][i];

			for (int second = 0; second < 2; second++)
				for (uint32_t j = off[second][y]; j < off[second][y + 1]; j++) {
					uint32_t z = adj[second][j];

					if (z == x)
						continue;
					if (seen[z] != stamp) {
						seen[z] = stamp;
						cnt[z] = 0;
						list[k++] = z;
					}
					cnt[z] += (int64_t)1 << (16 * (2 * first + second));
				}
		}
	return k;
}

/* How far host c's 2-path counts to the placed hosts are from node b's to
 * the placed nodes (0: they agree). */
static int64_t wl_distance(struct search *s, uint32_t c, uint32_t nt)
{
	uint32_t nc = two_paths(&s->c, c, s->cnt_c, s->seen_c, ++s->cstamp, s->list_c);
	int64_t dist = 0;

	for (uint32_t i = 0; i < nt; i++) {
		uint32_t x = s->list_t[i];

		if (s->map[x] == NONE)
			continue;
		int64_t other = s->seen_c[s->map[x]] == s->cstamp ? s->cnt_c[s->map[x]] : 0;
		dist += s->cnt_t[x] != other;
	}
	for (uint32_t i = 0; i < nc; i++) {
		uint32_t h = s->list_c[i], x = s->inv[h];

		if (x != NONE && s->seen_t[x] != s->stamp)
			dist++; /* placed, but not within 2 of b */
	}
	return dist;
}

/* Arcs node b keeps with the placed nodes if it sits at host c. */
static uint32_t place_score(const struct search *s, uint32_t b, uint32_t c)
{
	uint32_t k = kept_pair(s, b, b, c, c);

	for (uint32_t x = s->t.uoff[b]; x < s->t.uoff[b + 1]; x++) {
		uint32_t hv = s->map[s->t.uadj[x]];

		if (hv != NONE)
			k += kept_t(s, s->t.umo[x], c, hv) + kept_t(s, s->t.umi[x], hv, c);
	}
	return k;
}

/* The free host for node b: most arcs kept, then the closest 2-path
 * counts, then a random one. NONE when no free host neighbours a placed
 * neighbour's host. */
static uint32_t choose_host(struct search *s, uint32_t b)
{
	uint32_t ncand = 0;

	s->stamp++;
	for (uint32_t x = s->t.uoff[b]; x < s->t.uoff[b + 1]; x++) {
		uint32_t v = s->t.uadj[x], hv = s->map[v];

		if (hv == NONE)
			continue;
		for (uint32_t y = s->c.uoff[hv]; y < s->c.uoff[hv + 1]; y++) {
			uint32_t c = s->c.uadj[y];

			if (s->inv[c] == NONE && s->mark[c] != s->stamp) {
				s->mark[c] = s->stamp;
				s->cand[ncand++] = c;
			}
		}
	}
	if (ncand == 0)
		return NONE;

	uint32_t best = NONE, best_score = 0, ties = 0;
	for (uint32_t i = 0; i < ncand; i++) {
		uint32_t sc = place_score(s, b, s->cand[i]);

		if (best == NONE || sc > best_score) {
			best = i;
			best_score = sc;
			ties = 0;
		}
		if (sc == best_score)
			s->cand[ties++] = s->cand[i]; /* the tied ones move to the front */
	}
	if (ties == 1)
		return s->cand[0];

	uint32_t nt = two_paths(&s->t, b, s->cnt_t, s->seen_t, s->stamp, s->list_t);
	int64_t best_dist = -1;
	uint32_t pick = 0, equal = 0;
	for (uint32_t i = 0; i < ties; i++) {
		int64_t dist = wl_distance(s, s->cand[i], nt);

		if (best_dist < 0 || dist < best_dist) {
			best_dist = dist;
			pick = s->cand[i];
			equal = 1;
		} else if (dist == best_dist && rng_next(&s->rng) % ++equal == 0) {
			pick = s->cand[i]; /* uniform among the equals */
		}
	}
	return pick;
}

/* One greedy mapping from target node order[0] at host h0. */
static void grow(struct search *s, uint32_t h0)
{
	uint32_t next_free = 0;

	memset(s->map, 0xff, (size_t)s->n * sizeof(uint32_t));
	memset(s->inv, 0xff, (size_t)s->n * sizeof(uint32_t));
	s->map[s->order[0]] = h0;
	s->inv[h0] = s->order[0];
	for (uint32_t i = 1; i < s->n; i++) {
		uint32_t b = s->order[i], c = choose_host(s, b);

		while (c == NONE) {
			if (s->inv[next_free] == NONE)
				c = next_free;
			next_free++;
		}
		s->map[b] = c;
		s->inv[c] = b;
	}
}

static void swap_nodes(struct search *s, uint32_t a, uint32_t b)
{
	uint32_t ha = s->map[a], hb = s->map[b];

	s->map[a] = hb;
	s->map[b] = ha;
	s->inv[hb] = a;
	s->inv[ha] = b;
}

/* Arcs kept at node u under the mapping (a loop once). */
static uint32_t kept_node(const struct search *s, uint32_t u)
{
	uint32_t hu = s->map[u], k = kept_pair(s, u, u, hu, hu);

	for (uint32_t x = s->t.uoff[u]; x < s->t.uoff[u + 1]; x++) {
		uint32_t hv = s->map[s->t.uadj[x]];

		k += kept_t(s, s->t.umo[x], hu, hv) + kept_t(s, s->t.umi[x], hv, hu);
	}
	return k;
}

/* Arcs at u in r, a loop once. */
static uint32_t incident(const struct rgraph *r, uint32_t u)
{
	return r->off[u + 1] - r->off[u] + r->ioff[u + 1] - r->ioff[u] - mult(r, u, u);
}

/* kept_at of every node, for a mapping made anew. */
static void kept_at_all(struct search *s)
{
	for (uint32_t u = 0; u < s->n; u++)
		s->kept_at[u] = kept_node(s, u);
}

/* After a trade of a and b: their kept_at and their neighbours'. */
static void kept_at_update(struct search *s, uint32_t a, uint32_t b)
{
	uint32_t nodes[2] = {a, b};

	for (int i = 0; i < 2; i++) {
		uint32_t u = nodes[i];

		s->kept_at[u] = kept_node(s, u);
		for (uint32_t x = s->t.uoff[u]; x < s->t.uoff[u + 1]; x++)
			s->kept_at[s->t.uadj[x]] = kept_node(s, s->t.uadj[x]);
	}
}

/* Try moving node a to host h (trading with whoever sits there); keep the
 * trade when it keeps more arcs. A trade is skipped when the most the two
 * nodes could keep at their new hosts (their arcs, the hosts' arcs) is no
 * more than they keep now: it cannot gain, so the answer is the same. */
static bool try_swap(struct search *s, uint32_t a, uint32_t h)
{
	uint32_t b = s->inv[h], ha = s->map[a];

	if (b == a)
		return false;
	uint64_t most =
	    (uint64_t)min_u32(s->inc_t[a], s->inc_c[h]) + min_u32(s->inc_t[b], s->inc_c[ha]);
	uint64_t now = (uint64_t)s->kept_at[a] + s->kept_at[b] - kept_pair(s, a, b, ha, h) -
		       kept_pair(s, b, a, h, ha);
	if (most <= now)
		return false;
	uint64_t before = kept_around(s, a, b);
	swap_nodes(s, a, b);
	if (kept_around(s, a, b) > before) {
		kept_at_update(s, a, b);
		return true;
	}
	swap_nodes(s, a, b);
	return false;
}

/* Swaps aimed at arcs that are not kept: for a -> v not kept, a wants a
 * host with an arc to map[v]; for v -> a, one with an arc from map[v].
 * Passes until none helps (or the budget ends). */
static void improve(struct search *s)
{
	for (int pass = 0; pass < 64; pass++) {
		bool better = false;

		for (uint32_t a = 0; a < s->n; a++) {
			if (past(s))
				return;
			for (uint32_t x = s->t.off[a]; x < s->t.off[a + 1]; x++) {
				uint32_t v = s->t.adj[x], hv = s->map[v];

				if (v == a || mult(&s->c, s->map[a], hv) >= mult(&s->t, a, v))
					continue;
				for (uint32_t y = s->c.uoff[hv]; y < s->c.uoff[hv + 1]; y++)
					if (try_swap(s, a, s->c.uadj[y])) {
						better = true;
						break;
					}
			}
		}
		if (!better)
			return;
	}
}

/* Every pair of nodes tried once per pass (n^2 / 2 trades of O(d log d)
 * each): finds the trades improve() does not aim at. */
static void improve_pairs(struct search *s)
{
	for (int pass = 0; pass < 16; pass++) {
		bool better = false;

		for (uint32_t a = 0; a < s->n; a++) {
			if (past(s))
				return;
			for (uint32_t b = a + 1; b < s->n; b++)
				better |= try_swap(s, a, s->map[b]);
		}
		if (!better)
			return;
	}
}

/* Start from the best mapping so far with a few random trades: a way out
 * of a local optimum the greedy starts keep falling into. */
static void kick(struct search *s, const uint32_t *best)
{
	memcpy(s->map, best, (size_t)s->n * sizeof(uint32_t));
	for (uint32_t u = 0; u < s->n; u++)
		s->inv[s->map[u]] = u;
	for (int i = 0; i < 3; i++) {
		uint32_t a = (uint32_t)(rng_next(&s->rng) % s->n);
		uint32_t b = (uint32_t)(rng_next(&s->rng) % s->n);

		if (a != b)
			swap_nodes(s, a, b);
	}
}

/* Hosts whose degrees match the root's first: where a round's seed goes. */
static uint32_t seed_host(const struct search *s, uint32_t round, uint32_t root)
{
	uint32_t du = s->t.uoff[root + 1] - s->t.uoff[root], k = 0;

	for (uint32_t pass = 0; pass < 2; pass++)
		for (uint32_t h = 0; h < s->n; h++) {
			bool same = s->c.uoff[h + 1] - s->c.uoff[h] == du;

			if (same == (pass == 0) && k++ == round % s->n)
				return h;
		}
	return round % s->n;
}

static void search_free(struct search *s)
{
	rgraph_free(&s->t);
	rgraph_free(&s->c);
	free(s->map);
	free(s->inv);
	free(s->order);
	free(s->cand);
	free(s->cnt_t);
	free(s->cnt_c);
	free(s->seen_t);
	free(s->seen_c);
	free(s->list_t);
	free(s->list_c);
	free(s->mark);
	free(s->inc_t);
	free(s->inc_c);
	free(s->kept_at);
}

static int cmp_desc_u32(const void *a, const void *b)
{
	return cmp_u32(b, a);
}

/* Arcs degree by degree: sum_u min(deg_t(u), deg_c(map(u))) over the best
 * map pairs the largest with the largest (an exchange argument: min is
 * supermodular), and every kept arc counts at both its tail's out-degree
 * and its head's in-degree. */
static uint64_t degree_bound(const struct rgraph *t, const struct rgraph *c, bool in)
{
	uint32_t n = t->n, *dt = xmalloc(((size_t)n + 1) * 4), *dc = xmalloc(((size_t)n + 1) * 4);
	const uint32_t *ot = in ? t->ioff : t->off, *oc = in ? c->ioff : c->off;
	uint64_t k = 0;

	for (uint32_t u = 0; u < n; u++) {
		dt[u] = ot[u + 1] - ot[u];
		dc[u] = oc[u + 1] - oc[u];
	}
	qsort(dt, n, sizeof(uint32_t), cmp_desc_u32);
	qsort(dc, n, sizeof(uint32_t), cmp_desc_u32);
	for (uint32_t u = 0; u < n; u++)
		k += min_u32(dt[u], dc[u]);
	free(dt);
	free(dc);
	return k;
}

/* No mapping keeps more than this: the target's arcs, the current arcs
 * (each pair's multiplicity capped at the most any target pair has), and
 * the two degree bounds. A mapping that reaches it is optimal, so the
 * search stops there; most of a churning cluster's requests reach it at
 * once (the members hold a few fragments of earlier jobs' circuits that
 * the new topology can take whole). */
static uint64_t upper_bound(const struct search *s)
{
	uint32_t cap = 0;
	uint64_t kc = 0;

	for (uint32_t u = 0; u < s->n; u++)
		for (uint32_t a = s->t.off[u]; a < s->t.off[u + 1]; a++)
			if (a == s->t.off[u] || s->t.adj[a - 1] != s->t.adj[a]) {
				uint32_t k = mult(&s->t, u, s->t.adj[a]);

				cap = k > cap ? k : cap;
			}
	for (uint32_t u = 0; u < s->n; u++)
		for (uint32_t a = s->c.off[u]; a < s->c.off[u + 1]; a++)
			if (a == s->c.off[u] || s->c.adj[a - 1] != s->c.adj[a])
				kc += min_u32(mult(&s->c, u, s->c.adj[a]), cap);
	uint64_t b = s->t.off[s->n] < kc ? s->t.off[s->n] : kc;
	uint64_t bo = degree_bound(&s->t, &s->c, false), bi = degree_bound(&s->t, &s->c, true);

	b = bo < b ? bo : b;
	return bi < b ? bi : b;
}

static void search_init(struct search *s, const struct graph *cur, const struct graph *target)
{
	uint32_t n = target->n;
	size_t sz = ((size_t)n + 1) * sizeof(uint32_t);

	rgraph_build(&s->t, target);
	rgraph_build(&s->c, cur);
	s->map = xmalloc(sz);
	s->inv = xmalloc(sz);
	s->order = xmalloc(sz);
	s->cand = xmalloc(sz);
	s->seen_t = xcalloc((size_t)n + 1, sizeof(uint32_t));
	s->seen_c = xcalloc((size_t)n + 1, sizeof(uint32_t));
	s->mark = xcalloc((size_t)n + 1, sizeof(uint32_t));
	s->list_t = xmalloc(sz);
	s->list_c = xmalloc(sz);
	s->cnt_t = xmalloc(((size_t)n + 1) * sizeof(int64_t));
	s->cnt_c = xmalloc(((size_t)n + 1) * sizeof(int64_t));
	s->inc_t = xmalloc(sz);
	s->inc_c = xmalloc(sz);
	s->kept_at = xmalloc(sz);
	for (uint32_t u = 0; u < n; u++) {
		s->inc_t[u] = incident(&s->t, u);
		s->inc_c[u] = incident(&s->c, u);
	}
}

/* s->map, improved by swaps, replaces the best when it keeps more. */
static void polish(struct search *s, struct relabel_result *r)
{
	kept_at_all(s);
	improve(s);
	if (s->n <= RELABEL_PAIRS_MAX)
		improve_pairs(s);
	uint64_t k = kept_all(s, s->map);
	if (k > r->kept) {
		r->kept = k;
		memcpy(r->map, s->map, (size_t)s->n * sizeof(uint32_t));
	}
}

/* Rounds until the bound is reached, the rounds run out or the deadline
 * passes (then r->deadline says so). The first round improves the best
 * mapping so far (the identity or the isomorphism's): the members often
 * hold most of an earlier job's numbering, which a fresh greedy start
 * does not find. */
static void search_rounds(struct search *s, struct relabel_result *r)
{
	const struct relabel_opts *o = s->o;
	uint32_t n = s->n, root = 0;

	for (uint32_t u = 1; u < n; u++) /* the best-connected node anchors best */
		if (s->t.uoff[u + 1] - s->t.uoff[u] > s->t.uoff[root + 1] - s->t.uoff[root])
			root = u;
	bfs_order(s, root);
	while (r->kept < r->bound) {
		if (o->max_rounds && r->rounds >= o->max_rounds)
			return;
		if (past(s)) {
			r->deadline = true;
			return;
		}
		if (r->rounds == 0) {
			memcpy(s->map, r->map, (size_t)n * sizeof(uint32_t));
			for (uint32_t u = 0; u < n; u++)
				s->inv[s->map[u]] = u;
		} else if (r->rounds <= n || r->rounds % 2 == 1) {
			grow(s, seed_host(s, r->rounds - 1, root));
		} else {
			kick(s, r->map);
		}
		polish(s, r);
		r->rounds++;
	}
	/* a round cut short by the clock: the bound not reached */
	if (r->kept < r->bound && past(s))
		r->deadline = true;
}

int topo_relabel(const struct graph *cur, const struct graph *target, const struct relabel_opts *o,
		 struct relabel_result *r, struct ofc_error *err)
{
	uint32_t n = target->n;
	double t0 = now_seconds();

	memset(r, 0, sizeof(*r));
	if (cur->n != n)
		return ofc_error_set(err, OFC_E_INPUT,
				     "relabelling needs as many hosts as topology nodes (%u, %u)",
				     cur->n, n);
	struct search s = {.o = o, .n = n, .rng = o->seed ? o->seed : 0x0fc};
	s.t0 = t0;
	s.deadline = t0 + (o->budget_s > 0 ? o->budget_s : 1.0);
	search_init(&s, cur, target);
	r->map = xmalloc(((size_t)n + 1) * sizeof(uint32_t));
	r->arcs = target->m;
	for (uint32_t u = 0; u < n; u++)
		r->map[u] = u;
	r->kept_identity = r->kept = kept_all(&s, r->map);
	r->bound = upper_bound(&s);

	/* A relabelled copy is found exactly by an isomorphism search
	 * (individualisation and refinement, topo/automorph.c), which reads
	 * structure the greedy's 2-path tie-break cannot (generalized Kautz:
	 * groups of nodes sharing their out-neighbours). A quarter of the
	 * budget at most: graphs that are not copies usually fail at once, but
	 * regular ones of one degree can make it backtrack. */
	if (n && r->kept < r->bound && cur->m == target->m && !past(&s) &&
	    graph_isomorphism(target, cur, t0 + (s.deadline - t0) / 4, s.map)) {
		uint64_t k = kept_all(&s, s.map);

		r->iso = true;
		if (k > r->kept) {
			r->kept = k;
			memcpy(r->map, s.map, (size_t)n * sizeof(uint32_t));
		}
	}
	if (n)
		search_rounds(&s, r);
	r->complete = r->kept == r->arcs;
	r->optimal = r->kept == r->bound;
	r->seconds = now_seconds() - t0;
	search_free(&s);
	return 0;
}

uint64_t topo_relabel_kept(const struct graph *cur, const struct graph *target, const uint32_t *map)
{
	struct search s = {.n = target->n};
	uint64_t k;

	if (cur->n != target->n)
		return 0;
	rgraph_build(&s.t, target);
	rgraph_build(&s.c, cur);
	k = kept_all(&s, map);
	rgraph_free(&s.t);
	rgraph_free(&s.c);
	return k;
}

void relabel_result_free(struct relabel_result *r)
{
	free(r->map);
	memset(r, 0, sizeof(*r));
}
