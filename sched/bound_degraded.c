/* The lower bound of a degraded graph (sched.h, degraded_bound): the
 * worst node's links, the best cut by Dinkelbach's method on max flows
 * (topo/flow_net.c), and the diameter. sched.h says why each holds.
 *
 * The cut network for an allgather at rate x = p/q per source: nodes 0 ..
 * N-1 and a super-source S; S -> v of capacity p for every v, every link
 * u -> v of capacity q. A set T on the sink's side is cut at p |T| + q
 * c(T), which is at least N p for every T exactly when c(T) >= x (N - |T|)
 * for every T: the rate holds iff every node's max flow from S is N p.
 *
 * A max flow over the whole graph from a lone S costs about its diameter
 * times its arcs, and the cuts that bind lie around the failures: so
 * first each damaged node's ball (its nearest BALL nodes, the rest of the
 * graph merged into S: S -> u then carries p and q for each link into u
 * from outside), whose cuts are the whole graph's cuts inside the ball,
 * exactly; then, where the work allows, every node over the whole graph,
 * each merged into S once checked (cutnet_merge: the next node's flow
 * runs over a few short paths), which proves the optimum (torus:32x32
 * less 1% of its links: a seventh of the CPU the flows from a lone S
 * took). Reduce-scatter runs the same on G^T. */
#include "sched/sched.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define BALL 128 /* nodes of a damaged node's ball */
/* A node's flow in the sweep over the whole graph, the checked nodes
 * merged, visits some 5-7 times the network's arcs (torus:16x16 and
 * 32x32, hypercube:10, genkautz:1024,4 with links failed; more as N grows,
 * each phase's search from S scanning the merged nodes): the sweep starts
 * only where the work has 8 a node, so a graph past it (torus:64x64)
 * costs its balls alone. */
#define SWEEP_PHASES 8

struct cutnet {
	const struct graph *g, *gt; /* the phase's graph and its transpose */
	uint32_t n, nb;		    /* g's nodes, the network's (S is nb) */
	uint32_t *node;		    /* the network's nodes by g's numbers */
	uint32_t *loc;		    /* g's nodes by the network's, UINT32_MAX: merged into S */
	struct flow_net f;
	int64_t *cap0; /* the capacities every flow starts from */
	uint32_t *kp;  /* a slot's capacity is kp p + kq q */
	uint32_t *kq;
	uint8_t *merged; /* by the network's numbers: on S's side (cutnet_merge) */
	uint64_t p, q;	 /* the rate being checked */
	bool stale;	 /* cap0 not yet set for it (cutnet_caps) */
	uint64_t cost;	 /* slots: one flow phase's arc visits, about */
};

/* The network on nodes[0 .. nb) (every node of g when nb is g->n). Node
 * i's row: its links out within, the reverses of its links in from
 * within, the reverse of S -> i; S's row: S -> i for every i. loc is g->n
 * entries of UINT32_MAX, left so. */
static void cutnet_build(struct cutnet *c, const struct graph *g, const struct graph *gt,
			 const uint32_t *nodes, uint32_t nb, uint32_t *loc)
{
	uint32_t *in = xcalloc(nb + 1, sizeof(uint32_t)), *out = xcalloc(nb + 1, sizeof(uint32_t)),
		 *ext = xcalloc(nb + 1, sizeof(uint32_t)), *next;
	struct flow_net *f = &c->f;

	memset(c, 0, sizeof(*c));
	c->g = g;
	c->gt = gt;
	c->n = g->n;
	c->nb = nb;
	c->node = xmalloc((nb + 1) * sizeof(uint32_t));
	memcpy(c->node, nodes, nb * sizeof(uint32_t));
	c->loc = loc;
	for (uint32_t i = 0; i < nb; i++)
		loc[nodes[i]] = i;
	size_t ne = 2 * (size_t)nb;
	for (uint32_t i = 0; i < nb; i++) {
		uint32_t u = nodes[i];

		for (uint32_t a = g->off[u]; a < g->off[u + 1]; a++)
			if (g->adj[a] != u && loc[g->adj[a]] != UINT32_MAX) {
				out[i]++;
				in[loc[g->adj[a]]]++;
				ne += 2;
			}
		for (uint32_t a = gt->off[u]; a < gt->off[u + 1]; a++)
			ext[i] += gt->adj[a] != u && loc[gt->adj[a]] == UINT32_MAX;
	}
	flow_net_reset(f, nb + 1, (uint32_t)ne);
	f->start[0] = 0;
	for (uint32_t i = 0; i < nb; i++)
		f->start[i + 1] = f->start[i] + out[i] + in[i] + 1;
	f->start[nb + 1] = f->start[nb] + nb;
	c->kp = xcalloc(ne + 1, sizeof(uint32_t));
	c->kq = xcalloc(ne + 1, sizeof(uint32_t));
	next = in; /* i's next free slot for a reverse (after its links out) */
	for (uint32_t i = 0; i < nb; i++)
		next[i] = f->start[i] + out[i];
	for (uint32_t i = 0; i < nb; i++) {
		uint32_t u = nodes[i], e = f->start[i];

		for (uint32_t a = g->off[u]; a < g->off[u + 1]; a++) {
			uint32_t j = loc[g->adj[a]];

			if (g->adj[a] == u || j == UINT32_MAX)
				continue;
			flow_net_pair(f, e, next[j]++, i, j, 0);
			c->kq[e++] = 1;
		}
	}
	for (uint32_t i = 0; i < nb; i++) {
		uint32_t e = f->start[nb] + i;

		flow_net_pair(f, e, next[i]++, nb, i, 0);
		c->kp[e] = 1;
		c->kq[e] = ext[i];
	}
	free(in);
	free(out);
	free(ext);
	c->cap0 = xmalloc((ne + 1) * sizeof(int64_t));
	c->merged = xcalloc(nb + 1, 1);
	c->cost = ne + nb + 1;
}

/* The cost of cutnet_build's network on the whole of g (every node in
 * it), without building it: whether the sweep can run is known first. */
static uint64_t whole_cost(const struct graph *g)
{
	uint64_t arcs = 0;

	for (uint32_t u = 0; u < g->n; u++)
		for (uint32_t a = g->off[u]; a < g->off[u + 1]; a++)
			arcs += g->adj[a] != u;
	return 2 * (uint64_t)g->n + 2 * arcs + g->n + 1;
}

/* The rate p/q, in lowest terms; the capacities wait for a flow that
 * needs them (cutnet_caps): most checks end at the links. */
static void cutnet_rate(struct cutnet *c, uint64_t p, uint64_t q)
{
	uint64_t k = gcd_u64(p, q);

	c->p = p / k;
	c->q = q / k;
	c->stale = true;
}

static void cutnet_caps(struct cutnet *c)
{
	c->stale = false;
	for (uint32_t e = 0; e < c->f.ne; e++)
		c->cap0[e] = (int64_t)(c->kp[e] * c->p + c->kq[e] * c->q);
	for (uint32_t i = 0; i < c->nb; i++)
		if (c->merged[i])
			c->cap0[c->f.start[c->nb] + i] = (int64_t)(c->p * c->n);
}

/* Node i (the network's) on S's side of every cut from now: S -> i at N p,
 * which no cut below N p can cross. Once every set holding i is checked
 * (i's max flow reached N p), the sets left are those without it; a lower
 * rate keeps i's sets checked (each c(T) >= x (N - |T|) holds for a
 * smaller x). Merged so, each node's flow has the checked nodes as
 * sources beside it and reaches N p over short paths: the flows past the
 * first take a few phases each, not the diameter's (Hao and Orlin, "A
 * faster algorithm for finding the minimum cut in a directed graph",
 * 1994: the same sweep of sinks, each merged into the source after). */
static void cutnet_merge(struct cutnet *c, uint32_t i)
{
	c->merged[i] = 1;
	if (!c->stale)
		c->cap0[c->f.start[c->nb] + i] = (int64_t)(c->p * c->n);
}

static void cutnet_free(struct cutnet *c)
{
	for (uint32_t i = 0; i < c->nb; i++)
		c->loc[c->node[i]] = UINT32_MAX;
	flow_net_free(&c->f);
	free(c->node);
	free(c->cap0);
	free(c->kp);
	free(c->kq);
	free(c->merged);
}

/* Whether node v's max flow (v in the network) reaches N p; if not, the
 * min cut's sink side T (nodes S no longer reaches) in *tn and the links
 * into it in *tl, counted on the whole graph. */
static bool cutnet_holds(struct cutnet *c, uint32_t v, uint32_t *tn, uint64_t *tl)
{
	struct flow_net *f = &c->f;
	const struct graph *gt = c->gt;
	uint32_t nb = c->nb;

	if (c->stale)
		cutnet_caps(c);
	memcpy(f->cap, c->cap0, f->ne * sizeof(int64_t));
	if (flow_net_maxflow(f, nb, c->loc[v]) >= (int64_t)(c->p * c->n))
		return true;
	flow_net_bfs(f, nb, c->loc[v], false);
	*tn = 0;
	*tl = 0;
	for (uint32_t i = 0; i < nb; i++) {
		uint32_t u = c->node[i];

		if (f->level[i] >= 0)
			continue;
		++*tn;
		for (uint32_t a = gt->off[u]; a < gt->off[u + 1]; a++) {
			uint32_t w = gt->adj[a];

			*tl += w != u && (c->loc[w] == UINT32_MAX || f->level[c->loc[w]] >= 0);
		}
	}
	return false;
}

/* Whether every set T holding v has at least x (N - 1) links in, counted
 * as c(T) is (the outside's too): then c(T) >= x (N - |T|) for every T
 * and the rate holds, as cutnet_holds would find. A max flow of a few
 * units, one a link (merged nodes send as many as needed): at most v's
 * links in, so a few short searches, where cutnet_holds pushes N p in
 * pieces of p from every node of the ball (on torus:128x64 less 1% of
 * its ports every ball held so: the flows' instructions fell to a
 * quarter). */
static bool cutnet_links_hold(struct cutnet *c, uint32_t v)
{
	struct flow_net *f = &c->f;
	uint64_t need = (c->p * (c->n - 1) + c->q - 1) / c->q;

	for (uint32_t e = 0; e < f->ne; e++)
		f->cap[e] = c->kq[e];
	for (uint32_t i = 0; i < c->nb; i++)
		if (c->merged[i])
			f->cap[f->start[c->nb] + i] = (int64_t)need;
	return flow_net_maxflow(f, c->nb, c->loc[v]) >= (int64_t)need;
}

/* Checks v in c at the phase's rate until it holds (each cut found lowers
 * the rate): false when the work ran out first. Each round asks the
 * links first (cutnet_links_hold), the cut network only if they fall
 * short. A flow starts only with work left for min_cost and is charged
 * the arcs it visited. */
static bool check_node(struct cutnet *c, uint32_t v, uint64_t *work, struct degraded_phase *ph,
		       uint64_t *flows, uint64_t min_cost)
{
	for (;;) {
		uint32_t tn;
		uint64_t tl, v0 = c->f.visits;

		if (*work < min_cost)
			return false;
		++*flows;
		bool held = cutnet_links_hold(c, v);
		uint64_t spent = c->f.visits - v0;
		*work = *work > spent ? *work - spent : 0;
		if (held)
			return true;
		if (*work < min_cost)
			return false;
		++*flows;
		v0 = c->f.visits;
		bool holds = cutnet_holds(c, v, &tn, &tl);
		spent = c->f.visits - v0;
		*work = *work > spent ? *work - spent : 0;
		if (holds)
			return true;
		/* A cut below the rate: c(T) / (N - |T|) < p / q. */
		ph->cut_nodes = tn;
		ph->cut_links = tl;
		if (!tl)
			return true; /* T hears nothing: no schedule, nothing to raise */
		cutnet_rate(c, tl, c->n - tn);
	}
}

/* Nodes in order of their distance from the damage (a node with fewer
 * links in or out than d), the damaged first: where the worst cuts are. */
static uint32_t *damage_order(const struct graph *g, const struct graph *gt, uint32_t d,
			      uint32_t *ndamaged)
{
	uint32_t n = g->n, *order = xmalloc((n + 1) * sizeof(uint32_t)), qt = 0;
	uint8_t *seen = xcalloc(n + 1, 1);

	for (uint32_t v = 0; v < n; v++)
		if (graph_outdeg(g, v) < d || graph_outdeg(gt, v) < d) {
			seen[v] = 1;
			order[qt++] = v;
		}
	*ndamaged = qt;
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

/* v's ball: its nearest nodes by links either way, BALL at most. */
static uint32_t ball(const struct graph *g, const struct graph *gt, uint32_t v, uint32_t *nodes,
		     uint8_t *seen)
{
	uint32_t nb = 0;

	nodes[nb++] = v;
	seen[v] = 1;
	for (uint32_t qh = 0; qh < nb && nb < BALL; qh++)
		for (int k = 0; k < 2 && nb < BALL; k++) {
			const struct graph *h = k ? gt : g;
			uint32_t u = nodes[qh];

			for (uint32_t a = h->off[u]; a < h->off[u + 1] && nb < BALL; a++)
				if (!seen[h->adj[a]]) {
					seen[h->adj[a]] = 1;
					nodes[nb++] = h->adj[a];
				}
		}
	for (uint32_t i = 0; i < nb; i++)
		seen[nodes[i]] = 0;
	return nb;
}

/* One phase: the worst node by its links in (of g) and the best cut of
 * sets by their links in: the damaged nodes' balls (ndamaged of them
 * first in order), then every node over g in order where *work is
 * enough for all of them (SWEEP_PHASES), while it lasts. */
static void phase_bound(const struct graph *g, const struct graph *gt, uint32_t d,
			const uint32_t *order, uint32_t ndamaged, uint64_t *work,
			struct degraded_phase *ph, uint64_t *flows)
{
	uint32_t n = g->n, *indeg = xcalloc(n + 1, sizeof(uint32_t)), least = UINT32_MAX;
	uint32_t *loc = xmalloc((n + 1) * sizeof(uint32_t)), *nodes;
	uint8_t *seen;
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
	ph->node = least ? (double)d * (n - 1) / ((double)n * least) : INFINITY;
	/* x = least / (N - 1): the worst node's own cut, the first rate. */
	ph->cut_nodes = 1;
	ph->cut_links = least;
	memset(loc, 0xff, (n + 1) * sizeof(uint32_t));
	uint64_t p = least, q = n - 1;
	if (least && n > BALL) {
		nodes = xmalloc((BALL + 1) * sizeof(uint32_t));
		seen = xcalloc(n + 1, 1);
		for (uint32_t i = 0; i < ndamaged && ph->cut_links; i++) {
			uint32_t nb = ball(g, gt, order[i], nodes, seen);

			cutnet_build(&c, g, gt, nodes, nb, loc);
			cutnet_rate(&c, p, q);
			bool done = check_node(&c, order[i], work, ph, flows, c.cost);

			ph->balls += done;
			p = c.p;
			q = c.q;
			cutnet_free(&c);
			if (!done)
				break;
		}
		free(nodes);
		free(seen);
	}
	if (least && ph->cut_links) {
		/* the nodes in order, each merged into S once checked: the first
		 * flow crosses the graph, the next ones start beside the
		 * checked nodes (cutnet_merge) */
		if (*work / n / whole_cost(g) >= SWEEP_PHASES) { /* all of them, or none */
			cutnet_build(&c, g, gt, order, n, loc);
			cutnet_rate(&c, p, q);
			uint32_t i = 0;
			while (i < n && check_node(&c, order[i], work, ph, flows, c.cost)) {
				cutnet_merge(&c, i);
				i++;
			}
			ph->checked = i;
			ph->exact = i == n;
			cutnet_free(&c);
		}
	}
	free(loc);
	if (!least || !ph->cut_links) {
		ph->cut = INFINITY;
		ph->exact = true;
		return;
	}
	ph->cut = (double)d * (n - ph->cut_nodes) / ((double)n * ph->cut_links);
	if (ph->cut < ph->node) /* the same cut, rounded otherwise */
		ph->cut = ph->node;
}

/* A bound on the diameter from eccentricities, each a search of the whole
 * graph. Where *work has a search for every node, all of them: the
 * diameter, proven (*exact). Past that, a prefix of the order proves
 * nothing more than its largest eccentricity, and the nodes near the
 * damage add little to the damaged nodes' own (torus:256x256 less a link:
 * 114 searches, each 256, as the first): so the damaged nodes alone
 * (ndamaged first in order, at least one, while *work lasts), then from
 * the node farthest from the one of the largest, a search over g^T (the
 * double sweep): that node's in-eccentricity, at least the distance that
 * made the largest, and more on some graphs (the unit test finds them).
 * The prefix's searches run 256 at a time (topo_eccentricities), each
 * still charged a search: the same nodes are searched whatever the
 * machine, and the farthest node is a queue search's, run again for the
 * sweep alone. */
static uint32_t eccentricity(const struct graph *g, const struct graph *gt, const uint32_t *order,
			     uint32_t ndamaged, uint64_t *work, uint32_t *ran, bool *exact)
{
	uint32_t n = g->n, best = 0, first = 0, far;
	uint64_t cost = (uint64_t)g->m + n, afford = *work / cost;
	bool all = afford >= n;
	uint32_t runs = all ? n : ndamaged ? ndamaged : 1;
	/* each search while the work lasts, the first whatever it is */
	uint32_t k = afford >= runs ? runs : afford ? (uint32_t)afford : 1;
	uint32_t *ecc = xmalloc((size_t)k * sizeof(uint32_t));

	*work = *work >= k * cost ? *work - k * cost : 0;
	topo_eccentricities(gt, order, k, ecc);
	for (uint32_t i = 0; i < k; i++)
		if (ecc[i] > best || i == 0) {
			best = ecc[i];
			first = i;
		}
	free(ecc);
	*ran = k;
	*exact = all;
	if (!all && best != UINT32_MAX && *work >= cost) {
		uint32_t *dist = xmalloc((n + 1) * sizeof(uint32_t)),
			 *queue = xmalloc((n + 1) * sizeof(uint32_t));

		*work -= cost;
		topo_eccentricity(g, order[first], dist, queue, &far);
		uint32_t e = topo_eccentricity(gt, far, dist, queue, &far);
		++*ran;
		if (e > best)
			best = e;
		free(dist);
		free(queue);
	}
	return best;
}

static int cmp_u32(const void *x, const void *y)
{
	uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;

	return (a > b) - (a < b);
}

/* a[0 .. k) in order: by insertion where k is a node's few links (a
 * qsort call each cost torus:256x256 more than its three BFS), else qsort. */
static void sort_links(uint32_t *a, uint32_t k)
{
	if (k > 16) {
		qsort(a, k, sizeof(uint32_t), cmp_u32);
		return;
	}
	for (uint32_t i = 1; i < k; i++) {
		uint32_t x = a[i], j = i;

		for (; j > 0 && a[j - 1] > x; j--)
			a[j] = a[j - 1];
		a[j] = x;
	}
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
		sort_links(a + g->off[u], graph_outdeg(g, u));
		sort_links(b + gt->off[u], graph_outdeg(gt, u));
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
	uint32_t ndamaged, *order = damage_order(g, gt, d, &ndamaged);
	/* An eighth for the diameter, the rest for the cuts, shared by the
	 * phases in order. */
	uint64_t wecc = work / 8, wcut = work - wecc;
	uint32_t ecc =
	    eccentricity(g, gt, order, ndamaged, &wecc, &b->ecc_checked, &b->steps_exact);

	b->in = c != SCHED_REDUCE_SCATTER;
	b->out = c != SCHED_ALLGATHER;
	b->symmetric = symmetric(g, gt);
	if (b->in || b->symmetric)
		phase_bound(g, gt, d, order, ndamaged, &wcut, &b->ag, &b->flows);
	if (b->out && b->symmetric)
		b->rs = b->ag;
	else if (b->out)
		phase_bound(gt, g, d, order, ndamaged, &wcut, &b->rs, &b->flows);
	b->tau_b = (b->in ? b->ag.cut : 0) + (b->out ? b->rs.cut : 0);
	uint32_t moore = moore_diameter(g->n, d);
	if (ecc < moore)
		ecc = moore;
	b->steps = ecc == UINT32_MAX ? UINT32_MAX : cost_phases(c) * ecc;
	free(order);
	graph_free(gt);
	return 0;
}

bool degraded_cut_binds(const struct degraded_bound *b)
{
	return (b->in && b->ag.cut > b->ag.node * (1 + 1e-9)) ||
	       (b->out && b->rs.cut > b->rs.node * (1 + 1e-9));
}
