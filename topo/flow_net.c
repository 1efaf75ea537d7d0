/* Max flow on a network of integer capacities (Dinic: blocking flows along
 * shortest residual paths, found iteratively, so deep networks do not
 * grow the stack). The caller lays the network out: flow_net_reset makes
 * room, the caller fills start[] (node v's slots are start[v] ..
 * start[v + 1]) and pairs the slots with flow_net_pair; flows leave the
 * residual capacities in cap[] (an edge's flow is its reverse's cap).
 * BFB's per-receiver problems (bfb_solve.c), its steps under hosts'
 * injection limits (bfb_host.c) and the degraded fabrics' cut bounds
 * (sched/bound_degraded.c) run on it. */
#include "topo/topo.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Room for nv nodes and ne slots. */
void flow_net_reset(struct flow_net *f, uint32_t nv, uint32_t ne)
{
	if (nv + 1 > f->cap_v) {
		f->cap_v = (nv + 1) * 2;
		f->start = xreallocarray(f->start, f->cap_v, sizeof(uint32_t));
		f->it = xreallocarray(f->it, f->cap_v, sizeof(uint32_t));
		f->queue = xreallocarray(f->queue, f->cap_v, sizeof(uint32_t));
		f->path = xreallocarray(f->path, f->cap_v, sizeof(uint32_t));
		f->level = xreallocarray(f->level, f->cap_v, sizeof(int32_t));
	}
	if (ne > f->cap_e) {
		f->cap_e = ne * 2;
		f->to = xreallocarray(f->to, f->cap_e, sizeof(uint32_t));
		f->rev = xreallocarray(f->rev, f->cap_e, sizeof(uint32_t));
		f->cap = xreallocarray(f->cap, f->cap_e, sizeof(int64_t));
	}
	f->nv = nv;
	f->ne = ne;
}

/* The edge a -> b of capacity c at slot e, its reverse at slot r. */
void flow_net_pair(struct flow_net *f, uint32_t e, uint32_t r, uint32_t a, uint32_t b, int64_t c)
{
	f->to[e] = b;
	f->cap[e] = c;
	f->rev[e] = r;
	f->to[r] = a;
	f->cap[r] = 0;
	f->rev[r] = e;
}

/* Levels from s in the residual network; with `to_t`, only as far as t's
 * level needs (a node found after t is at t's level or beyond, so no
 * shortest path to t passes it: Dinic finds the same paths). */
bool flow_net_bfs(struct flow_net *f, uint32_t s, uint32_t t, bool to_t)
{
	uint32_t qh = 0, qt = 0;

	for (uint32_t v = 0; v < f->nv; v++)
		f->level[v] = -1;
	f->level[s] = 0;
	f->queue[qt++] = s;
	while (qh < qt) {
		uint32_t v = f->queue[qh++];

		f->visits += f->start[v + 1] - f->start[v];
		for (uint32_t e = f->start[v]; e < f->start[v + 1]; e++)
			if (f->cap[e] > 0 && f->level[f->to[e]] < 0) {
				f->level[f->to[e]] = f->level[v] + 1;
				if (to_t && f->to[e] == t)
					return true;
				f->queue[qt++] = f->to[e];
			}
	}
	return f->level[t] >= 0;
}

/* Dinic: blocking flows along shortest residual paths, found iteratively. */
int64_t flow_net_maxflow(struct flow_net *f, uint32_t s, uint32_t t)
{
	int64_t total = 0;

	while (flow_net_bfs(f, s, t, true)) {
		memcpy(f->it, f->start, f->nv * sizeof(uint32_t));
		for (;;) {
			uint32_t v = s, depth = 0;

			while (v != t) {
				uint32_t e = f->it[v], end = f->start[v + 1];

				while (e < end &&
				       (f->cap[e] <= 0 || f->level[f->to[e]] != f->level[v] + 1))
					e++;
				f->visits += e - f->it[v] + 1;
				f->it[v] = e;
				if (e < end) {
					f->path[depth++] = e;
					v = f->to[e];
					continue;
				}
				if (v == s)
					goto phase_done;
				f->level[v] = -1; /* dead end */
				e = f->path[--depth];
				v = f->to[f->rev[e]];
				f->it[v]++;
			}
			int64_t b = INT64_MAX;
			for (uint32_t i = 0; i < depth; i++)
				if (f->cap[f->path[i]] < b)
					b = f->cap[f->path[i]];
			for (uint32_t i = 0; i < depth; i++) {
				f->cap[f->path[i]] -= b;
				f->cap[f->rev[f->path[i]]] += b;
			}
			total += b;
		}
	phase_done:;
	}
	return total;
}

void flow_net_free(struct flow_net *f)
{
	free(f->start);
	free(f->rev);
	free(f->to);
	free(f->it);
	free(f->queue);
	free(f->path);
	free(f->level);
	free(f->cap);
}
