/* The all-to-all MCF's symmetries, which pick its master (alltoall/mcf.c):
 * the port-preserving translations of a Cayley graph (the one-source
 * master, one row per port), whether capacities and a demand matrix are
 * alike under them, and the automorphisms the mirrored master keeps (those
 * that keep the capacities and the demand: one class of sources per orbit
 * of nodes, one row per orbit of arcs). */
#include "alltoall/mcf_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- translations -------------------------------------------------------- */

struct trans_ctx {
	const struct graph *g;
	uint32_t *perm;	   /* n * n, or NULL */
	uint32_t *scratch; /* per worker: n map + n queue */
	bool *ok;	   /* per s */
};

/* The map taking 0 to s and port j of u to port j of its image, by BFS;
 * false when two arcs disagree or the map is not a bijection. */
static bool translation(const struct graph *g, uint32_t s, uint32_t *map, uint32_t *queue)
{
	uint32_t n = g->n, head = 0, tail = 0;

	for (uint32_t u = 0; u < n; u++)
		map[u] = UINT32_MAX;
	map[0] = s;
	queue[tail++] = 0;
	while (head < tail) {
		uint32_t u = queue[head++], tu = map[u], d = graph_outdeg(g, u);

		if (graph_outdeg(g, tu) != d)
			return false;
		for (uint32_t j = 0; j < d; j++) {
			uint32_t v = g->adj[g->off[u] + j], w = g->adj[g->off[tu] + j];

			if (map[v] == UINT32_MAX) {
				map[v] = w;
				queue[tail++] = v;
			} else if (map[v] != w) {
				return false;
			}
		}
	}
	if (tail != n)
		return false;
	/* A bijection: queue is free now, reuse it as a seen-mark. */
	for (uint32_t u = 0; u < n; u++)
		queue[u] = 0;
	for (uint32_t u = 0; u < n; u++) {
		if (queue[map[u]])
			return false;
		queue[map[u]] = 1;
	}
	return true;
}

static void trans_one(void *ctx, size_t s, unsigned worker)
{
	struct trans_ctx *c = ctx;
	uint32_t n = c->g->n, *map = c->scratch + (size_t)worker * 2 * n;

	c->ok[s] = translation(c->g, (uint32_t)s, map, map + n);
	if (c->ok[s] && c->perm)
		memcpy(c->perm + s * n, map, n * sizeof(uint32_t));
}

bool mcf_translations(const struct graph *g, uint32_t *perm, unsigned threads)
{
	struct trans_ctx c = {.g = g, .perm = perm};
	bool all = true;

	if (g->n < 2)
		return false;
	unsigned nt = parallel_workers(g->n, 16, threads);
	c.scratch = xmalloc((size_t)nt * 2 * g->n * sizeof(uint32_t));
	c.ok = xcalloc(g->n, sizeof(bool));
	parallel_for(g->n, 16, nt, trans_one, &c);
	for (uint32_t s = 0; s < g->n; s++)
		all &= c.ok[s];
	free(c.scratch);
	free(c.ok);
	return all;
}

/* ---- capacities and symmetry ------------------------------------------------------ */

/* Every port at one capacity at every node: what the translations (which
 * keep ports) need to load each port's arcs alike. */
bool mcf_caps_per_port(const struct graph *g, const double *cap)
{
	for (uint32_t u = 1; u < g->n; u++)
		for (uint32_t j = 0; j < graph_outdeg(g, u); j++)
			if (j >= graph_outdeg(g, 0) || cap[g->off[u] + j] != cap[g->off[0] + j])
				return false;
	return true;
}

/* Element h keeps every arc's capacity. */
static bool keeps_capacity(const struct graph_group *grp, uint32_t h, const void *ctx)
{
	const double *cap = ctx;
	const uint32_t *ha = grp->arc + (size_t)h * grp->m;

	for (uint32_t a = 0; a < grp->m; a++)
		if (cap[ha[a]] != cap[a])
			return false;
	return true;
}

/* Element h keeps every pair's demand: D[h(u)][h(v)] = D[u][v]. */
static bool keeps_demand(const struct graph_group *grp, uint32_t h, const void *ctx)
{
	const double *dem = ctx;
	const uint32_t *hn = grp->node + (size_t)h * grp->n;
	uint32_t n = grp->n;

	for (uint32_t u = 0; u < n; u++)
		for (uint32_t v = 0; v < n; v++)
			if (dem[(size_t)hn[u] * n + hn[v]] != dem[(size_t)u * n + v])
				return false;
	return true;
}

/* Keep the elements of grp that keep(...) says keep something (the
 * stabiliser of the capacities, of a demand matrix: a subgroup, so the
 * mirrored master's averaging argument holds for it) and recompute the
 * orbits. */
static void group_keep(struct graph_group *grp,
		       bool (*keeps)(const struct graph_group *, uint32_t, const void *),
		       const void *ctx)
{
	uint32_t n = grp->n, m = grp->m, k = 0;

	for (uint32_t h = 0; h < grp->order; h++) {
		const uint32_t *ha = grp->arc + (size_t)h * m;

		if (!keeps(grp, h, ctx))
			continue;
		if (k != h) {
			memmove(grp->node + (size_t)k * n, grp->node + (size_t)h * n,
				n * sizeof(uint32_t));
			memmove(grp->arc + (size_t)k * m, ha, m * sizeof(uint32_t));
		}
		k++;
	}
	if (k == grp->order)
		return;
	grp->order = k;
	grp->full_order = k;
	grp->complete = false;
	memset(grp->orbit, 0xff, n * sizeof(uint32_t));
	grp->norbits = 0;
	for (uint32_t u = 0; u < n; u++) {
		if (grp->orbit[u] != UINT32_MAX)
			continue;
		for (uint32_t h = 0; h < k; h++)
			grp->orbit[grp->node[(size_t)h * n + u]] = grp->norbits;
		grp->norbits++;
	}
	memset(grp->arc_orbit, 0xff, m * sizeof(uint32_t));
	grp->narc_orbits = 0;
	for (uint32_t a = 0; a < m; a++) {
		if (grp->arc_orbit[a] != UINT32_MAX)
			continue;
		for (uint32_t h = 0; h < k; h++)
			grp->arc_orbit[grp->arc[(size_t)h * m + a]] = grp->narc_orbits;
		grp->narc_orbits++;
	}
}

/* The demand is alike under every translation of a Cayley graph: under
 * the ones taking node 0 to its neighbours, which generate them all (the
 * graph is connected). */
bool mcf_translations_keep(const struct graph *g, const double *dem, unsigned threads)
{
	uint32_t n = g->n, *perm = xmalloc((size_t)n * n * sizeof(uint32_t));
	bool keep = mcf_translations(g, perm, threads);

	for (uint32_t a = g->off[0]; keep && a < g->off[1]; a++) {
		const uint32_t *p = perm + (size_t)g->adj[a] * n;

		for (uint32_t u = 0; keep && u < n; u++)
			for (uint32_t v = 0; keep && v < n; v++)
				keep = dem[(size_t)p[u] * n + p[v]] == dem[(size_t)u * n + v];
	}
	free(perm);
	return keep;
}

/* The automorphisms the mirrored master uses (AUTO where no translation
 * applies, or MIRRORED asked for): *method becomes MIRRORED when some are
 * left, COLGEN when none is (r->note says why), grp the group. */
void mcf_group(const struct graph *g, const struct mcf_opts *o, double t0, enum mcf_method *methodp,
	       struct graph_group *grp0, struct mcf_result *r)
{
	enum mcf_method method = *methodp;
	struct graph_group grp = {0};

	/* The group listed element by element: within 64 MiB, and
	 * within the solve's time limit (a subgroup found by then
	 * mirrors as well, only into more classes). */
	uint64_t cap = (16u << 20) / ((uint64_t)g->n + g->m);
	struct ofc_clock clk = {.start = t0};
	uint32_t found;

	if (o->time_limit > 0) {
		clk.deadline = t0 + o->time_limit;
		clk.limit = o->time_limit;
	}
	graph_automorphisms(g, cap > 65536 ? 65536 : (uint32_t)cap, &clk, &grp);
	found = grp.order;
	if (o->capacity)
		group_keep(&grp, keeps_capacity, o->capacity);
	uint32_t by_cap = grp.order;
	/* A demand matrix keeps the elements it is alike under; past
	 * 2^28 pair checks none (plain column generation). */
	if (o->demand && (double)grp.order * g->n * g->n > (double)(1u << 28))
		grp.order = 1;
	if (o->demand && grp.order > 1)
		group_keep(&grp, keeps_demand, o->demand);
	/* ... and only where it saves most sources: a mirrored solution
	 * spreads a pair over its images' paths (the paths lowering then
	 * keeps d of more), which a few classes saved do not repay
	 * (torus:4x4 with 0 <-> 5 alone: 4 automorphisms, 9 classes of 16,
	 * theta 1/65.5 lowered where the plain master's is 1/45). */
	uint32_t kept = grp.order;
	if (o->demand && grp.order > 1 && grp.norbits * 4 > g->n)
		grp.order = 1;
	if (grp.order < found) {
		size_t len = strlen(r->note);

		snprintf(r->note + len, sizeof(r->note) - len, "%s%s %u of %u automorphisms%s%s",
			 len ? "; " : "",
			 by_cap < found && kept < by_cap ? "capacities and the demand matrix keep"
			 : by_cap < found		 ? "capacities keep"
							 : "the demand matrix keeps",
			 kept, found, kept > grp.order ? ", too few to mirror" : "",
			 grp.order > 1 ? "" : ": plain column generation");
	}
	if (grp.order > 1) {
		method = MCF_MIRRORED;
	} else if (method == MCF_MIRRORED) {
		/* One orbit per node and per arc: the same LP as plain
		 * column generation, which solves it several times faster
		 * (torus:8x8 less eight links: 2 s, not 15 s; the
		 * mirrored warm start prices every source MW_ROUNDS
		 * times). */
		size_t len = strlen(r->note);

		method = MCF_COLGEN;
		if (found <= 1) /* else the note above says so */
			snprintf(r->note + len, sizeof(r->note) - len,
				 "%sthe automorphism group is trivial: plain column "
				 "generation",
				 len ? "; " : "");
	}
	r->group_order = grp.order;
	*methodp = method;
	*grp0 = grp;
}
