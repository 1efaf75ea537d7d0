/* The lower bound of a degraded graph (sched.h, degraded_bound): the
 * worst node's links, the best cut by Dinkelbach's method on max flows
 * (topo/flow_net.c), and the diameter. sched.h says why each holds.
 *
 * The cut network for an allgather at rate x = p/q per source: nodes 0 ..
 * N-1 and a super-source S = N; S -> v of capacity p for every v, every
 * link u -> v of capacity q. A set T of sinks' side is cut at p |T| + q
 * c(T), which is at least N p for every T exactly when c(T) >= x (N - |T|)
 * for every T: the rate holds iff every node's max flow from S is N p.
 * The network is laid out once; each flow starts from a copy of its
 * capacities. Reduce-scatter runs the same on G^T. */
#include "sched/sched.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct cutnet {
	const struct graph *g;
	uint32_t n;
	struct flow_net f;
	int64_t *cap0;	  /* the capacities every flow starts from */
	uint8_t *is_src;  /* slot is S -> v (capacity p), else a link's (q) or a reverse */
	uint8_t *is_link; /* slot is a link's forward slot */
	uint64_t p, q;	  /* the rate being checked */
	uint64_t cost;	  /* slots: about one flow phase's arc visits */
};

static uint64_t gcd64(uint64_t a, uint64_t b)
{
	while (b) {
		uint64_t t = a % b;

		a = b;
		b = t;
	}
	return a;
}

/* Node v's row: its links out, the reverses of its links in, the reverse
 * of S -> v; S's row: S -> v for every v. */
static void cutnet_build(struct cutnet *c, const struct graph *g)
{
	uint32_t n = g->n, m = g->m, *indeg = xcalloc(n + 1, sizeof(uint32_t)), *next;
	struct flow_net *f = &c->f;

	memset(c, 0, sizeof(*c));
	c->g = g;
	c->n = n;
	for (uint32_t a = 0; a < m; a++)
		indeg[g->adj[a]]++;
	flow_net_reset(f, n + 1, 2 * m + 2 * n);
	f->start[0] = 0;
	for (uint32_t v = 0; v < n; v++)
		f->start[v + 1] = f->start[v] + graph_outdeg(g, v) + indeg[v] + 1;
	f->start[n + 1] = f->start[n] + n;
	c->is_src = xcalloc(f->ne + 1, 1);
	c->is_link = xcalloc(f->ne + 1, 1);
	/* next[v]: v's next free slot for a reverse (after its links out). */
	next = indeg;
	for (uint32_t v = 0; v < n; v++)
		next[v] = f->start[v] + graph_outdeg(g, v);
	for (uint32_t u = 0; u < n; u++)
		for (uint32_t a = g->off[u]; a < g->off[u + 1]; a++) {
			uint32_t e = f->start[u] + (a - g->off[u]), v = g->adj[a];

			flow_net_pair(f, e, next[v]++, u, v, 0);
			c->is_link[e] = 1;
		}
	for (uint32_t v = 0; v < n; v++) {
		uint32_t e = f->start[n] + v;

		flow_net_pair(f, e, next[v]++, n, v, 0);
		c->is_src[e] = 1;
	}
	free(indeg);
	c->cap0 = xmalloc((f->ne + 1) * sizeof(int64_t));
	c->cost = (uint64_t)f->ne + n + 1;
}

static void cutnet_rate(struct cutnet *c, uint64_t p, uint64_t q)
{
	uint64_t k = gcd64(p, q);

	c->p = p / k;
	c->q = q / k;
	for (uint32_t e = 0; e < c->f.ne; e++)
		c->cap0[e] = c->is_src[e] ? (int64_t)c->p : c->is_link[e] ? (int64_t)c->q : 0;
}

static void cutnet_free(struct cutnet *c)
{
	flow_net_free(&c->f);
	free(c->cap0);
	free(c->is_src);
	free(c->is_link);
}

/* Whether v's max flow reaches N p; if not, the min cut's sink side T
 * (nodes S no longer reaches) in *tn and the links into it in *tl. */
static bool cutnet_holds(struct cutnet *c, uint32_t v, uint32_t *tn, uint64_t *tl)
{
	struct flow_net *f = &c->f;
	const struct graph *g = c->g;
	uint32_t n = c->n;

	memcpy(f->cap, c->cap0, f->ne * sizeof(int64_t));
	if (flow_net_maxflow(f, n, v) >= (int64_t)(c->p * n))
		return true;
	flow_net_bfs(f, n, v, false);
	*tn = 0;
	*tl = 0;
	for (uint32_t u = 0; u < n; u++) {
		bool uin = f->level[u] < 0;

		*tn += uin;
		if (uin)
			continue;
		for (uint32_t a = g->off[u]; a < g->off[u + 1]; a++)
			*tl += f->level[g->adj[a]] < 0;
	}
	return false;
}

/* Nodes in order of their distance from the damage (a node with fewer
 * links in or out than d), the damaged first: where the worst cuts are. */
static uint32_t *damage_order(const struct graph *g, const struct graph *gt, uint32_t d)
{
	uint32_t n = g->n, *order = xmalloc((n + 1) * sizeof(uint32_t)), qt = 0;
	uint8_t *seen = xcalloc(n + 1, 1);

	for (uint32_t v = 0; v < n; v++)
		if (graph_outdeg(g, v) < d || graph_outdeg(gt, v) < d) {
			seen[v] = 1;
			order[qt++] = v;
		}
	for (uint32_t qh = 0; qt < n; qh++) {
		if (qh == qt) { /* no damage left to spread from: the next unseen */
			uint32_t v = 0;

			while (seen[v])
				v++;
			seen[v] = 1;
			order[qt++] = v;
		}
		uint32_t u = order[qh];

		for (int k = 0; k < 2; k++) {
			const struct graph *h = k ? gt : g;

			for (uint32_t a = h->off[u]; a < h->off[u + 1]; a++)
				if (!seen[h->adj[a]]) {
					seen[h->adj[a]] = 1;
					order[qt++] = h->adj[a];
				}
		}
	}
	free(seen);
	return order;
}

/* One phase: the worst node by its links in (of g) and the best cut of
 * sets by their links in, checking nodes in order while *work lasts. */
static void phase_bound(const struct graph *g, uint32_t d, const uint32_t *order, uint64_t *work,
			struct degraded_phase *ph, uint64_t *flows)
{
	uint32_t n = g->n, *indeg = xcalloc(n + 1, sizeof(uint32_t)), least = UINT32_MAX;
	struct cutnet c;

	memset(ph, 0, sizeof(*ph));
	for (uint32_t u = 0; u < n; u++) /* a loop brings a node nothing new */
		for (uint32_t a = g->off[u]; a < g->off[u + 1]; a++)
			indeg[g->adj[a]] += g->adj[a] != u;
	for (uint32_t v = 0; v < n; v++)
		if (indeg[v] < least) {
			least = indeg[v];
			ph->node_at = v;
		}
	free(indeg);
	ph->node_links = least;
	if (!least) { /* a node cut off: no schedule at all */
		ph->node = ph->cut = INFINITY;
		ph->cut_nodes = 1;
		ph->exact = true;
		return;
	}
	ph->node = (double)d * (n - 1) / ((double)n * least);
	/* x = least / (N - 1): the worst node's own cut, the first rate. */
	ph->cut_nodes = 1;
	ph->cut_links = least;
	cutnet_build(&c, g);
	cutnet_rate(&c, least, n - 1);
	uint32_t i = 0;
	while (i < n && *work >= c.cost) {
		uint32_t tn;
		uint64_t tl;

		*work -= c.cost;
		++*flows;
		if (cutnet_holds(&c, order[i], &tn, &tl)) {
			i++;
			continue;
		}
		/* A cut below the rate: c(T) / (N - |T|) < p / q. The same
		 * node again at the lower rate. */
		ph->cut_nodes = tn;
		ph->cut_links = tl;
		if (!tl) {
			i = n;
			break;
		}
		cutnet_rate(&c, tl, n - tn);
	}
	cutnet_free(&c);
	ph->checked = i;
	ph->exact = i == n;
	ph->cut = ph->cut_links ? (double)d * (n - ph->cut_nodes) / ((double)n * ph->cut_links)
				: INFINITY;
	if (ph->cut < ph->node) /* the same cut, rounded otherwise */
		ph->cut = ph->node;
}

/* Out-eccentricities from nodes in order while *work lasts: the largest,
 * a bound on the diameter (the diameter when every node ran). */
static uint32_t eccentricity(const struct graph *g, const uint32_t *order, uint64_t *work,
			     uint32_t *ran)
{
	uint32_t n = g->n, *dist = xmalloc((n + 1) * sizeof(uint32_t)),
		 *queue = xmalloc((n + 1) * sizeof(uint32_t)), best = 0;
	uint64_t cost = (uint64_t)g->m + n;

	*ran = 0;
	for (uint32_t i = 0; i < n && (*work >= cost || i == 0); i++) {
		uint32_t qh = 0, qt = 0, far = 0;

		*work = *work >= cost ? *work - cost : 0;
		memset(dist, 0xff, n * sizeof(uint32_t));
		dist[order[i]] = 0;
		queue[qt++] = order[i];
		while (qh < qt) {
			uint32_t u = queue[qh++];

			far = dist[u];
			for (uint32_t a = g->off[u]; a < g->off[u + 1]; a++)
				if (dist[g->adj[a]] == UINT32_MAX) {
					dist[g->adj[a]] = dist[u] + 1;
					queue[qt++] = g->adj[a];
				}
		}
		if (qt < n)
			far = UINT32_MAX; /* some node unreachable */
		if (far > best)
			best = far;
		++*ran;
	}
	free(dist);
	free(queue);
	return best;
}

static int cmp_u32(const void *x, const void *y)
{
	uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;

	return (a > b) - (a < b);
}

/* Whether every node has the same links in as out (as multisets). */
static bool symmetric(const struct graph *g, const struct graph *gt)
{
	uint32_t *a = xmalloc((g->m + 1) * sizeof(uint32_t)),
		 *b = xmalloc((g->m + 1) * sizeof(uint32_t));
	bool same = g->m == gt->m;

	memcpy(a, g->adj, g->m * sizeof(uint32_t));
	memcpy(b, gt->adj, gt->m * sizeof(uint32_t));
	for (uint32_t u = 0; same && u < g->n; u++) {
		if (graph_outdeg(g, u) != graph_outdeg(gt, u)) {
			same = false;
			break;
		}
		qsort(a + g->off[u], graph_outdeg(g, u), sizeof(uint32_t), cmp_u32);
		qsort(b + gt->off[u], graph_outdeg(gt, u), sizeof(uint32_t), cmp_u32);
		same =
		    !memcmp(a + g->off[u], b + gt->off[u], graph_outdeg(g, u) * sizeof(uint32_t));
	}
	free(a);
	free(b);
	return same;
}

int degraded_bound(const struct graph *g, enum sched_collective c, uint32_t d, uint64_t work,
		   struct degraded_bound *b)
{
	memset(b, 0, sizeof(*b));
	if (g->n < 2 || d < 1 ||
	    (c != SCHED_ALLGATHER && c != SCHED_REDUCE_SCATTER && c != SCHED_ALLREDUCE))
		return -1;
	if (!work)
		work = DEGRADED_BOUND_WORK;
	struct graph *gt = graph_transpose(g);
	uint32_t *order = damage_order(g, gt, d);
	/* A quarter for the diameter, the rest for the cuts, shared by the
	 * phases in order. */
	uint64_t wecc = work / 4, wcut = work - wecc;
	uint32_t ecc = eccentricity(g, order, &wecc, &b->ecc_checked);

	b->in = c != SCHED_REDUCE_SCATTER;
	b->out = c != SCHED_ALLGATHER;
	b->symmetric = symmetric(g, gt);
	if (b->in || b->symmetric)
		phase_bound(g, d, order, &wcut, &b->ag, &b->flows);
	if (b->out && b->symmetric)
		b->rs = b->ag;
	else if (b->out)
		phase_bound(gt, d, order, &wcut, &b->rs, &b->flows);
	b->tau_b = (b->in ? b->ag.cut : 0) + (b->out ? b->rs.cut : 0);
	b->steps_exact = b->ecc_checked == g->n;
	uint32_t moore = moore_diameter(g->n, d);
	if (ecc < moore)
		ecc = moore;
	b->steps = ecc == UINT32_MAX ? UINT32_MAX : cost_phases(c) * ecc;
	free(order);
	graph_free(gt);
	return 0;
}
