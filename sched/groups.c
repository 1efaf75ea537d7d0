/* Schedules of disjoint groups run at once on one topology (a
 * workload's phase in every tensor-parallel group, say). Each group's
 * schedule goes through the one verifier on its own (the nodes outside
 * the group absent, so it keeps to its members), then the link loads of
 * all of them are summed step by step: step t of every group runs at the
 * same time, so a link two groups share carries both. */
#include "sched/internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Transfer x's load (blocks, over the arc's capacity) onto its arcs. */
static void add_load(const struct graph *g, const struct verify_opts *o, const struct xfer *x,
		     double *load, uint32_t *stamp, uint32_t now, double *total)
{
	double len = sched_frac(x->length) * xfer_blocks(x);
	const double *cap = o->arc_capacity;

	if (o->block_weight)
		len *= o->block_weight[x->block];
	if (x->lane != SCHED_NO_LANE) {
		uint32_t u = x->src;

		for (uint32_t k = 0; k < xfer_arcs(x); k++) {
			uint32_t a = g->off[u] + x->lane;
			double l = len / (cap ? cap[a] : 1);

			if (stamp[a] != now) {
				stamp[a] = now;
				load[a] = 0;
			}
			load[a] += l;
			total[a] += l;
			u = g->adj[a];
		}
		return;
	}
	/* Without a port, parallel links share the load evenly (as the
	 * verifier's check_link). */
	uint32_t mult = 0;
	for (uint32_t a = g->off[x->src]; a < g->off[x->src + 1]; a++)
		mult += g->adj[a] == x->dst;
	for (uint32_t a = g->off[x->src]; a < g->off[x->src + 1]; a++) {
		if (g->adj[a] != x->dst)
			continue;
		double l = len / mult / (cap ? cap[a] : 1);

		if (stamp[a] != now) {
			stamp[a] = now;
			load[a] = 0;
		}
		load[a] += l;
		total[a] += l;
	}
}

int sched_verify_groups(const struct schedule *const *s, const struct verify_opts *const *o,
			uint32_t k, struct verify_report *rep)
{
	const struct graph *g = k ? o[0]->graph : NULL;
	uint32_t steps = 0;

	memset(rep, 0, sizeof(*rep));
	if (!g) {
		snprintf(rep->error, sizeof(rep->error), "groups are checked on one graph");
		return -1;
	}
	for (uint32_t i = 0; i < k; i++) {
		struct verify_report r;

		if (o[i]->graph != g) {
			snprintf(rep->error, sizeof(rep->error), "group %u: not on the same graph",
				 i);
			return -1;
		}
		if (sched_verify(s[i], o[i], &r) < 0) {
			*rep = r;
			snprintf(rep->error, sizeof(rep->error), "group %u: %.300s", i, r.error);
			return -1;
		}
		rep->ntransfers += r.ntransfers;
		rep->duplicate_blocks += r.duplicate_blocks;
		steps = s[i]->nsteps > steps ? s[i]->nsteps : steps;
	}
	double *load = xcalloc((size_t)g->m + 1, sizeof(double));
	double *total = xcalloc((size_t)g->m + 1, sizeof(double));
	uint32_t *stamp = xcalloc((size_t)g->m + 1, sizeof(uint32_t));

	for (uint32_t t = 0; t < steps; t++) {
		double most = 0;

		for (uint32_t i = 0; i < k; i++)
			for (size_t x = t < s[i]->nsteps ? s[i]->step_start[t] : 0;
			     t < s[i]->nsteps && x < s[i]->step_start[t + 1]; x++)
				add_load(g, o[i], &s[i]->xfers[x], load, stamp, t + 1, total);
		for (uint32_t a = 0; a < g->m; a++)
			if (stamp[a] == t + 1)
				most = fmax(most, load[a]);
		rep->sum_max_link_load += most;
		rep->max_link_load = fmax(rep->max_link_load, most);
	}
	for (uint32_t a = 0; a < g->m; a++)
		rep->max_total_link_load = fmax(rep->max_total_link_load, total[a]);
	rep->nsteps = steps;
	rep->ok = true;
	free(load);
	free(total);
	free(stamp);
	return 0;
}
