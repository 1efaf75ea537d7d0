/* BFB on a degraded Cayley graph as the healthy reduced schedule plus a
 * patch (sched.h, struct sched_patch).
 *
 * Node u's BFB problems (u, t) read only its in-links and the distances
 * to u and to its in-neighbours (Zhao et al., LP (3)). A failed arc
 * changes the distances to a node x only when every shortest path to it
 * from some source crossed a failed arc; every other node's problems are
 * those of the healthy graph, whose solution (the healthy program,
 * translated) is then a solution of the degraded problem, the same U* a
 * step. So the patch is the problems of the region: the nodes that lost
 * an in-link, whose distances changed, or one of whose in-neighbours'
 * did, solved on the degraded graph as bfb_schedule would; the schedule's
 * tau_B is the explicit degraded BFB's.
 *
 * Which distances change is found source by source without a full BFS
 * (most see no change): from the root x of a BFS over H^T, the heads of
 * failed arcs that were tight (one level below their tail) lose their
 * distance only when no other tight in-arc from an unchanged node is
 * left, and the loss spreads to the tight out-neighbours of a node that
 * lost it, level by level (the deletion half of Ramalingam and Reps'
 * dynamic shortest paths, for unit lengths). */
#include "bfb/internal.h"

#include <stdlib.h>
#include <string.h>

/* g without the arcs gone[], the arcs of each node in g's order. */
static struct graph *without(const struct graph *g, const bool *gone)
{
	struct graph *d = xcalloc(1, sizeof(*d));
	uint32_t m = 0;

	d->n = g->n;
	d->off = xmalloc(((size_t)g->n + 1) * sizeof(uint32_t));
	d->adj = xmalloc(((size_t)g->m + 1) * sizeof(uint32_t));
	for (uint32_t u = 0; u < g->n; u++) {
		d->off[u] = m;
		for (uint32_t a = g->off[u]; a < g->off[u + 1]; a++)
			if (!gone[a])
				d->adj[m++] = g->adj[a];
	}
	d->off[g->n] = m;
	d->m = m;
	d->spec = xstrdup(g->spec ? g->spec : "degraded");
	return d;
}

/* One phase's graphs: K = H^T (BFS from x gives the distances to x),
 * healthy; kin = the degraded K's in-arcs; the failed arcs of K. */
struct phase_graphs {
	const struct sched_group *G;
	const struct graph *k, *kin;
	uint32_t nfail, *ftail, *fhead;
	const uint16_t *row0; /* distances from 0 in K */
	uint32_t D;
	uint8_t *changed; /* per root x: some distance to x changed */
	uint8_t **mark;	  /* per worker: n bytes */
	uint32_t **list;  /* per worker: candidates, level by level */
};

static void bfs16(const struct graph *g, uint32_t s, uint16_t *row, uint32_t *queue)
{
	uint32_t head = 0, tail = 0;

	for (uint32_t v = 0; v < g->n; v++)
		row[v] = TOPO_UNREACHABLE;
	row[s] = 0;
	queue[tail++] = s;
	while (head < tail) {
		uint32_t u = queue[head++];

		for (uint32_t a = g->off[u]; a < g->off[u + 1]; a++)
			if (row[g->adj[a]] == TOPO_UNREACHABLE) {
				row[g->adj[a]] = (uint16_t)(row[u] + 1);
				queue[tail++] = g->adj[a];
			}
	}
}

static uint32_t hdist(const struct phase_graphs *pg, uint32_t x, uint32_t v)
{
	return pg->row0[sched_group_sub(pg->G, v, x)];
}

/* Whether any distance to root x changes: marks 1 candidate, 2 raised. */
static void root_changes(void *arg, size_t xi, unsigned wid)
{
	struct phase_graphs *pg = arg;
	uint32_t x = (uint32_t)xi, *list = pg->list[wid], nl = 0;
	uint8_t *mark = pg->mark[wid];
	bool any = false;

	for (uint32_t i = 0; i < pg->nfail; i++) {
		uint32_t a = pg->ftail[i], b = pg->fhead[i];

		if (b != x && hdist(pg, x, b) == hdist(pg, x, a) + 1 && !mark[b]) {
			mark[b] = 1;
			list[nl++] = b;
		}
	}
	/* level by level: a candidate's parents are a level up, decided */
	for (uint32_t lvl = 1; nl && lvl <= pg->D && !any; lvl++) {
		uint32_t keep = 0;

		for (uint32_t i = 0; i < nl; i++) {
			uint32_t v = list[i];
			bool ok = false;

			if (hdist(pg, x, v) != lvl) {
				list[keep++] = v;
				continue;
			}
			for (uint32_t a = pg->kin->off[v]; a < pg->kin->off[v + 1] && !ok; a++) {
				uint32_t p = pg->kin->adj[a];

				ok = mark[p] != 2 && hdist(pg, x, p) + 1 == lvl;
			}
			if (!ok) {
				mark[v] = 2;
				any = true;
			}
		}
		nl = keep;
	}
	/* any loss is a change; the marks are cleared for the next root */
	for (uint32_t i = 0; i < pg->nfail; i++)
		mark[pg->fhead[i]] = 0;
	pg->changed[x] = any;
}

struct built_phase {
	uint32_t *region, nregion;
};

/* The region of one phase: H = g (allgather) or g^T (reduce-scatter). */
static void phase_region(const struct graph *g, const struct graph *gt, const struct graph *gd,
			 const struct graph *gdt, const bool *gone, bool reverse,
			 const struct sched_group *G, unsigned threads, struct built_phase *bp)
{
	struct phase_graphs pg = {.G = G};
	uint32_t n = g->n, *tails = graph_arc_tails(g), *queue = xmalloc(n * sizeof(uint32_t));
	uint16_t *row0 = xmalloc(n * sizeof(uint16_t));

	/* K = H^T: allgather g^T, reduce-scatter g */
	pg.k = reverse ? g : gt;
	pg.kin = reverse ? gdt : gd;
	pg.ftail = xmalloc((g->m + 1) * sizeof(uint32_t));
	pg.fhead = xmalloc((g->m + 1) * sizeof(uint32_t));
	for (uint32_t a = 0; a < g->m; a++)
		if (gone[a]) {
			/* g's arc w -> v is K's arc v -> w for allgather */
			pg.ftail[pg.nfail] = reverse ? tails[a] : g->adj[a];
			pg.fhead[pg.nfail++] = reverse ? g->adj[a] : tails[a];
		}
	bfs16(pg.k, 0, row0, queue);
	pg.row0 = row0;
	for (uint32_t v = 0; v < n; v++)
		if (row0[v] > pg.D)
			pg.D = row0[v];
	pg.changed = xcalloc(n, 1);
	unsigned th = parallel_workers(n, 64, threads);
	pg.mark = xcalloc(th, sizeof(uint8_t *));
	pg.list = xcalloc(th, sizeof(uint32_t *));
	for (unsigned i = 0; i < th; i++) {
		pg.mark[i] = xcalloc(n, 1);
		pg.list[i] = xmalloc(n * sizeof(uint32_t));
	}
	parallel_for(n, 64, th, root_changes, &pg);
	/* H's in-arcs of u: allgather g's into u (gt's of u), reduce-scatter
	 * g's out of u */
	const struct graph *hin = reverse ? g : gt;
	uint8_t *inr = xcalloc(n, 1);
	for (uint32_t u = 0; u < n; u++) {
		inr[u] |= pg.changed[u];
		for (uint32_t a = hin->off[u]; a < hin->off[u + 1]; a++)
			inr[u] |= pg.changed[hin->adj[a]];
	}
	for (uint32_t a = 0; a < g->m; a++)
		if (gone[a])
			inr[reverse ? tails[a] : g->adj[a]] = 1;
	bp->nregion = 0;
	bp->region = xmalloc((n + 1) * sizeof(uint32_t));
	for (uint32_t u = 0; u < n; u++)
		if (inr[u])
			bp->region[bp->nregion++] = u;
	for (unsigned i = 0; i < th; i++) {
		free(pg.mark[i]);
		free(pg.list[i]);
	}
	free(pg.mark);
	free(pg.list);
	free(pg.changed);
	free(inr);
	free(row0);
	free(queue);
	free(pg.ftail);
	free(pg.fhead);
	free(tails);
}

struct rows_job {
	const struct graph *kd;
	const uint32_t *need;
	uint16_t **row;
	uint32_t **queue;
};

static void one_row(void *arg, size_t i, unsigned wid)
{
	struct rows_job *j = arg;

	bfs16(j->kd, j->need[i], j->row[j->need[i]], j->queue[wid]);
}

/* The region's problems solved on gd (H = gd, or gd^T run backwards),
 * appended to s in the base's steps (D of them). */
static int solve_region(const struct graph *gd, const struct graph *gdt, bool reverse,
			const struct built_phase *bp, uint32_t D, uint32_t d,
			const struct bfb_opts *o, struct schedule *s, struct bfb_stats *st,
			struct ofc_error *err)
{
	struct view vw = {.g = gd, .reverse = reverse, .n = gd->n, .o = o, .d = d, .D = D};
	uint32_t n = gd->n, nneed = 0, *need = xmalloc((size_t)n * sizeof(uint32_t));
	uint8_t *want = xcalloc(n, 1);
	int rc = 0;

	bfb_view_links(&vw);
	for (uint32_t i = 0; i < bp->nregion; i++) {
		uint32_t u = bp->region[i];

		want[u] = 1;
		for (uint32_t a = vw.in_off[u]; a < vw.in_off[u + 1]; a++)
			want[vw.in_peer[a]] = 1;
	}
	for (uint32_t x = 0; x < n; x++)
		if (want[x])
			need[nneed++] = x;
	/* rows[x][v] = d_H(v, x): BFS from x over H^T (gd^T for allgather) */
	const struct graph *kd = reverse ? gd : gdt;
	unsigned th = parallel_workers(nneed, 4, o->threads);
	struct rows_job job = {.kd = kd, .need = need};
	vw.row = xcalloc(n, sizeof(uint16_t *));
	vw.rows = xmalloc((size_t)nneed * n * sizeof(uint16_t));
	job.row = (uint16_t **)vw.row;
	for (uint32_t i = 0; i < nneed; i++)
		vw.row[need[i]] = vw.rows + (size_t)i * n;
	job.queue = xcalloc(th, sizeof(uint32_t *));
	for (unsigned i = 0; i < th; i++)
		job.queue[i] = xmalloc((size_t)n * sizeof(uint32_t));
	parallel_for(nneed, 4, th, one_row, &job);
	for (unsigned i = 0; i < th; i++)
		free(job.queue[i]);
	free(job.queue);
	for (uint32_t i = 0; i < nneed && rc == 0; i++)
		for (uint32_t v = 0; v < n && rc == 0; v++) {
			uint32_t dv = vw.row[need[i]][v];

			if (dv == TOPO_UNREACHABLE)
				rc = ofc_error_set(err, OFC_E_INPUT,
						   "the failures disconnect the fabric: node %u can no "
						   "longer reach node %u",
						   reverse ? need[i] : v, reverse ? v : need[i]);
			else if (dv > D)
				rc = ofc_error_set(err, OFC_E_INPUT,
						   "the failures lengthen the schedule (node %u is %u "
						   "steps from node %u, the healthy diameter %u)",
						   v, dv, need[i], D);
		}
	if (rc == 0) {
		vw.nrecv = bp->nregion;
		vw.recv = bp->region;
		vw.pass = PASS_BUILD;
		vw.count = xmalloc((size_t)vw.nrecv * D * sizeof(uint32_t) + 1);
		vw.where = xmalloc((size_t)vw.nrecv * D * sizeof(uint64_t) + 1);
		vw.owner = xmalloc((size_t)vw.nrecv * sizeof(uint32_t) + 1);
		bfb_workers_init(&vw);
		parallel_for(vw.nrecv, 4, vw.nworkers, bfb_solve_receiver, &vw);
		for (unsigned i = 0; i < vw.nworkers && rc == 0; i++)
			if (vw.w[i].failed)
				rc = ofc_error_set(err, OFC_E_RUNTIME, "%s", vw.w[i].why);
		for (unsigned i = 0; i < vw.nworkers; i++)
			st->problems += vw.w[i].problems;
		if (rc == 0)
			bfb_view_gather(&vw, s);
	}
	vw.recv = NULL;
	free(need);
	free(want);
	bfb_view_free(&vw);
	return rc;
}

/* The degraded graph's ports are the surviving arcs' ordinals; the
 * patch's are the healthy graph's. */
static void healthy_ports(const struct graph *g, const bool *gone, struct schedule *s)
{
	for (size_t i = 0; i < s->nxfers; i++) {
		struct xfer *x = &s->xfers[i];
		uint32_t k = x->lane, a = g->off[x->src];

		for (;; a++)
			if (!gone[a] && k-- == 0)
				break;
		x->lane = (uint16_t)(a - g->off[x->src]);
	}
}

static void merge_region(struct sched_patch *p, const struct built_phase *bp)
{
	uint32_t *m = xmalloc(((size_t)p->nregion + bp->nregion + 1) * sizeof(uint32_t)), k = 0;
	uint32_t i = 0, j = 0;

	while (i < p->nregion || j < bp->nregion) {
		uint32_t a = i < p->nregion ? p->region[i] : UINT32_MAX;
		uint32_t b = j < bp->nregion ? bp->region[j] : UINT32_MAX;
		uint32_t v = a < b ? a : b;

		m[k++] = v;
		i += a == v;
		j += b == v;
	}
	free(p->region);
	p->region = m;
	p->nregion = k;
}

uint64_t bfb_patch_memory(uint32_t n, uint32_t nregion, enum sched_collective c)
{
	uint64_t phases = c == SCHED_ALLREDUCE ? 2 : 1, rows = (uint64_t)nregion * 5 * n * 2;

	return phases * nregion * (uint64_t)n * 2 * sizeof(struct xfer) + rows;
}

int bfb_patch(const struct graph *g, const struct sched_reduced *r, const bool *gone,
	      const struct bfb_opts *o, uint64_t max_bytes, struct sched_patch *p,
	      struct bfb_stats *st, struct ofc_error *err)
{
	static const struct bfb_opts defaults = {0};
	enum sched_collective c = r->prog.collective;
	struct graph *gt, *gd, *gdt;
	struct built_phase bp[2] = {{0}};
	uint32_t rsteps = c == SCHED_ALLGATHER ? 0 : (c == SCHED_ALLREDUCE ? r->prog.nsteps / 2
									  : r->prog.nsteps);
	uint32_t d = 0;
	int rc = 0;

	if (!o)
		o = &defaults;
	memset(p, 0, sizeof(*p));
	memset(st, 0, sizeof(*st));
	if (c != SCHED_ALLGATHER && c != SCHED_REDUCE_SCATTER && c != SCHED_ALLREDUCE)
		return ofc_error_set(err, OFC_E_INPUT,
				     "BFB patches allgather, reduce-scatter and allreduce");
	if (r->group.nodes != g->n || r->group.reps != 1 || o->rate || o->inject || o->chunks)
		return ofc_error_set(err, OFC_E_INPUT,
				     "a BFB patch is for a reduced BFB schedule of g's group, every "
				     "link alike (no rates, injection limits or chunks)");
	gt = graph_transpose(g);
	gd = without(g, gone);
	gdt = graph_transpose(gd);
	for (uint32_t u = 0; u < g->n; u++) {
		uint32_t in = gdt->off[u + 1] - gdt->off[u], out = graph_outdeg(gd, u);

		if (in > d)
			d = in;
		if (out > d)
			d = out;
	}
	st->nodes = g->n;
	st->degree = d;
	sched_init(&p->prog, c, r->prog.algorithm, g->n);
	snprintf(p->prog.topology, sizeof(p->prog.topology), "%s", r->prog.topology);
	double t0 = now_seconds();
	/* The patch owns a node's programs in both phases or in neither: the
	 * regions of the phases joined, then each phase solved on it. */
	for (int ph = 0; ph < 2; ph++) {
		bool reverse = ph == 0;

		if ((reverse && c == SCHED_ALLGATHER) || (!reverse && c == SCHED_REDUCE_SCATTER))
			continue;
		phase_region(g, gt, gd, gdt, gone, reverse, &r->group, o->threads, &bp[ph]);
		merge_region(p, &bp[ph]);
	}
	struct built_phase all = {.region = p->region, .nregion = p->nregion};
	uint64_t need = bfb_patch_memory(g->n, p->nregion, c);
	if (max_bytes && need > max_bytes) {
		char need_s[32], max_s[32];

		fmt_size(need_s, sizeof(need_s), need);
		fmt_size(max_s, sizeof(max_s), max_bytes);
		rc = ofc_error_set(err, OFC_E_RUNTIME,
				   "the failures reach %u of %u nodes: their programs need about "
				   "%s, over the memory limit of %s",
				   p->nregion, g->n, need_s, max_s);
	}
	st->seconds_distances = now_seconds() - t0;
	t0 = now_seconds();
	for (int ph = 0; ph < 2 && rc == 0; ph++) {
		bool reverse = ph == 0;
		uint32_t D = reverse ? rsteps : r->prog.nsteps - rsteps;

		if ((reverse && c == SCHED_ALLGATHER) || (!reverse && c == SCHED_REDUCE_SCATTER))
			continue;
		if (p->nregion)
			rc = solve_region(gd, gdt, reverse, &all, D, d, o, &p->prog, st, err);
		else
			for (uint32_t t = 0; t < D; t++)
				sched_step(&p->prog);
	}
	st->seconds_generate = now_seconds() - t0;
	if (rc == 0) {
		healthy_ports(g, gone, &p->prog);
		st->steps = r->prog.nsteps;
	} else {
		sched_patch_free(p);
	}
	free(bp[0].region);
	free(bp[1].region);
	graph_free(gt);
	graph_free(gd);
	graph_free(gdt);
	return rc;
}
