/* Max flow on G^T (Dinic: BFS levels, blocking flow by DFS with per-node
 * arc pointers), for the pricing cuts and for splitting a usage w into
 * per-destination flows f <= w (max-flow min-cut is what makes "w carries
 * a unit to d" checkable without f variables). Iterative DFS: G^T is deep.
 *
 * A run touches little of G^T (the support of the capacities), and the
 * pricing runs one per destination per cut round: so a run clears only the
 * flows the last one set and the levels carry a stamp, rather than every
 * run zeroing arrays of every arc and node (at 256 GPUs that zeroing was
 * most of the max flows' time). Views share one graph and its capacities
 * and have their own run state, one per thread. */
#include "fluid/internal.h"

#include <stdlib.h>
#include <string.h>

#define EPS 1e-12

/* A run's state: flows (zero), stamps, scratch; nothing else of m. */
static void run_state_init(struct maxflow *m)
{
	uint32_t nn = m->nnodes;

	m->flow = xcalloc(m->narcs + 1, sizeof(double));
	m->level = xmalloc((nn + 1) * sizeof(uint32_t));
	m->iter = xmalloc((nn + 1) * sizeof(uint32_t));
	m->queue = xmalloc((nn + 1) * sizeof(uint32_t));
	m->mark = xcalloc(nn + 1, sizeof(uint32_t));
	m->stamp = 0;
	m->dirty = xmalloc((m->narcs + 1) * sizeof(uint32_t));
	m->ndirty = 0;
	m->all_dirty = false;
}

static void run_state_free(struct maxflow *m)
{
	free(m->flow);
	free(m->level);
	free(m->iter);
	free(m->queue);
	free(m->mark);
	free(m->dirty);
}

void maxflow_init(struct maxflow *m, const struct texp *x, const uint32_t *arcs, uint32_t narcs)
{
	uint32_t nn = tx_nnodes(x), *deg = xcalloc(nn + 1, sizeof(uint32_t)), na = tx_narcs(x);

	memset(m, 0, sizeof(*m));
	m->x = x;
	m->nnodes = nn;
	m->narcs = 2 * narcs;
	for (uint32_t i = 0; i < narcs; i++) {
		deg[tx_tail(x, arcs[i])]++;
		deg[tx_head(x, arcs[i])]++;
	}
	m->off = xmalloc((nn + 1) * sizeof(uint32_t));
	m->off[0] = 0;
	for (uint32_t v = 0; v < nn; v++)
		m->off[v + 1] = m->off[v] + deg[v];
	memcpy(deg, m->off, nn * sizeof(uint32_t));
	m->to = xmalloc((m->narcs + 1) * sizeof(uint32_t));
	m->rev = xmalloc((m->narcs + 1) * sizeof(uint32_t));
	m->arc_of = xmalloc((m->narcs + 1) * sizeof(uint32_t));
	m->cap = xcalloc(m->narcs + 1, sizeof(double));
	m->tx_res = xmalloc((na + 1) * sizeof(uint32_t));
	memset(m->tx_res, 0xff, (na + 1) * sizeof(uint32_t));
	for (uint32_t i = 0; i < narcs; i++) {
		uint32_t u = tx_tail(x, arcs[i]), v = tx_head(x, arcs[i]);
		uint32_t fu = deg[u]++, rv = deg[v]++;

		m->to[fu] = v;
		m->to[rv] = u;
		m->rev[fu] = rv;
		m->rev[rv] = fu;
		m->arc_of[fu] = arcs[i];
		m->arc_of[rv] = UINT32_MAX;
		m->tx_res[arcs[i]] = fu;
	}
	run_state_init(m);
	free(deg);
}

void maxflow_view(struct maxflow *v, const struct maxflow *m)
{
	*v = *m;
	v->view = true;
	run_state_init(v);
}

void maxflow_free(struct maxflow *m)
{
	if (!m->view) {
		free(m->off);
		free(m->to);
		free(m->rev);
		free(m->arc_of);
		free(m->cap);
		free(m->tx_res);
	}
	run_state_free(m);
	memset(m, 0, sizeof(*m));
}

void maxflow_set_caps(struct maxflow *m, const double *cap)
{
	for (uint32_t r = 0; r < m->narcs; r++)
		m->cap[r] = m->arc_of[r] != UINT32_MAX ? cap[m->arc_of[r]] : 0;
}

static double residual(const struct maxflow *m, uint32_t r)
{
	return m->cap[r] - m->flow[r];
}

/* Levels (and the DFS's arc pointers) hold for the nodes this BFS reached
 * (mark == stamp); any other node is unreached. */
static bool reached(const struct maxflow *m, uint32_t v)
{
	return m->mark[v] == m->stamp;
}

static void reach(struct maxflow *m, uint32_t v, uint32_t level)
{
	m->mark[v] = m->stamp;
	m->level[v] = level;
	m->iter[v] = m->off[v];
}

/* The levels: each node's residual distance to t, by a BFS backwards from
 * t that stops when it reaches s (every node nearer t is reached by then;
 * the rest lie on no shortest path). Dinic's phase is usually levelled by
 * the distance from s; both admit exactly the arcs of the shortest s-t
 * paths, so the augmenting paths, in the order the arcs are scanned, and
 * the flows are the same. But a node the DFS reaches from s now always
 * leads to t, where from s it went down every branch of the usage, and
 * one destination's branch is a small part of an origin's usage. */
static bool bfs(struct maxflow *m, uint32_t s, uint32_t t)
{
	uint32_t qh = 0, qt = 0;

	if (++m->stamp == 0) {
		/* wrapped: no stale mark may equal a new stamp */
		memset(m->mark, 0, m->nnodes * sizeof(uint32_t));
		m->stamp = 1;
	}
	reach(m, t, 0);
	m->queue[qt++] = t;
	while (qh < qt && !reached(m, s)) {
		uint32_t v = m->queue[qh++];

		/* u -> v has room when the reverse of an arc stored at v does */
		for (uint32_t r = m->off[v]; r < m->off[v + 1]; r++) {
			uint32_t u = m->to[r];

			if (!reached(m, u) && residual(m, m->rev[r]) > EPS) {
				reach(m, u, m->level[v] + 1);
				m->queue[qt++] = u;
			}
		}
	}
	return reached(m, s);
}

/* Flow on residual arc r (and its reverse) changes: remembered, so the
 * next run clears it alone. */
static void touch_arc(struct maxflow *m, uint32_t r)
{
	if (m->all_dirty || m->flow[r] != 0)
		return; /* listed already (or everything is) */
	if (m->ndirty + 2 > m->narcs) {
		m->all_dirty = true;
		return;
	}
	m->dirty[m->ndirty++] = r;
	m->dirty[m->ndirty++] = m->rev[r];
}

static void clear_flows(struct maxflow *m)
{
	if (m->all_dirty)
		memset(m->flow, 0, m->narcs * sizeof(double));
	else
		for (size_t i = 0; i < m->ndirty; i++)
			m->flow[m->dirty[i]] = 0;
	m->ndirty = 0;
	m->all_dirty = false;
}

/* One augmenting path along the level graph (iterative), pushing at most
 * `want`; returns what it pushed. A node found a dead end loses its level. */
static double augment(struct maxflow *m, uint32_t s, uint32_t t, double want)
{
	uint32_t *path = m->queue, depth = 0, v = s; /* path of residual arcs */

	for (;;) {
		if (v == t) {
			double push = want;

			for (uint32_t i = 0; i < depth; i++)
				if (residual(m, path[i]) < push)
					push = residual(m, path[i]);
			for (uint32_t i = 0; i < depth; i++) {
				touch_arc(m, path[i]);
				m->flow[path[i]] += push;
				m->flow[m->rev[path[i]]] -= push;
			}
			return push;
		}
		bool moved = false;

		for (; m->iter[v] < m->off[v + 1]; m->iter[v]++) {
			uint32_t r = m->iter[v], w = m->to[r];

			if (residual(m, r) > EPS && reached(m, w) && m->level[w] != UINT32_MAX &&
			    m->level[w] + 1 == m->level[v]) {
				path[depth++] = r;
				v = w;
				moved = true;
				break;
			}
		}
		if (moved)
			continue;
		/* Dead end: retreat and skip the arc that led here. */
		m->level[v] = UINT32_MAX;
		if (depth == 0)
			return 0;
		depth--;
		v = m->to[m->rev[path[depth]]];
		m->iter[v]++;
	}
}

double maxflow_run(struct maxflow *m, uint32_t s, uint32_t t, double limit)
{
	double total = 0;

	clear_flows(m);
	while (total < limit - EPS && bfs(m, s, t)) {
		for (;;) {
			double f = augment(m, s, t, limit - total);

			if (f <= EPS)
				break;
			total += f;
			if (total >= limit - EPS)
				break;
		}
	}
	return total;
}

void maxflow_source_side(struct maxflow *m, uint32_t s, uint64_t *bits)
{
	uint32_t qh = 0, qt = 0;

	memset(bits, 0, ((size_t)m->nnodes + 63) / 64 * 8);
	bit_set(bits, s);
	m->queue[qt++] = s;
	while (qh < qt) {
		uint32_t v = m->queue[qh++];

		for (uint32_t r = m->off[v]; r < m->off[v + 1]; r++)
			if (residual(m, r) > 1e-9 && !bit_test(bits, m->to[r])) {
				bit_set(bits, m->to[r]);
				m->queue[qt++] = m->to[r];
			}
	}
}

void maxflow_sink_side(struct maxflow *m, uint32_t t, uint64_t *bits)
{
	uint32_t qh = 0, qt = 0;

	memset(bits, 0, ((size_t)m->nnodes + 63) / 64 * 8);
	bit_set(bits, t);
	m->queue[qt++] = t;
	while (qh < qt) {
		uint32_t v = m->queue[qh++];

		/* u reaches v when the residual arc u -> v (the reverse of one
		 * stored at v) has room. */
		for (uint32_t r = m->off[v]; r < m->off[v + 1]; r++) {
			uint32_t u = m->to[r], back = m->rev[r];

			if (residual(m, back) > 1e-9 && !bit_test(bits, u)) {
				bit_set(bits, u);
				m->queue[qt++] = u;
			}
		}
	}
}

double maxflow_on(const struct maxflow *m, uint32_t a)
{
	uint32_t r = m->tx_res[a];

	return r == UINT32_MAX ? 0 : m->flow[r];
}
