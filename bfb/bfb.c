/* BFB (breadth-first-broadcast) schedules, Zhao et al. Sec. 6 and App. D.
 *
 * BFB allgather on a digraph H: at step t, node u receives the shard of
 * every node v at distance t from it, from in-neighbours w with
 * d(v, w) = t - 1 (Def. 15). Every such w holds all of v's shard, so the
 * only decision is how much of it each candidate in-link carries: LP (3),
 * one per (u, t), minimising the most any in-link of u carries.
 *
 * The LP optimum has a closed form (min cut, as in the proof of Thm 19):
 * U*_{u,t} = max over link sets K of |{v : cand(v) in K}| / |K|, a fraction
 * with denominator <= d. We compute it exactly (subset formula, or a
 * parametric max flow for many candidate links), then the fractions
 * themselves from one integral max flow: with U* = c/k, give every source
 * k units and every link capacity c; integrality makes every fraction a
 * multiple of 1/k, so fixed-point offsets are exact up to rounding of
 * 1/k itself. With --chunks P the same flow with P units per source and
 * capacity ceil(P U*) is the integer program (12) solved exactly.
 *
 * Sources with the same candidate set are one group in the flow (their
 * problems are identical); a group's flow is laid over its sources end to
 * end, so most sources travel in one piece.
 *
 * Reduce-scatter is BFB allgather on H = G^T run backwards (Cor. 3.1):
 * the allgather transfer w -> u of v's part at step t is the reduce-scatter
 * transfer u -> w of the partial sum of shard v at step D - t + 1, over the
 * arc u -> w of G. The problems for all (u, t) are independent: they run in
 * parallel, once, each writing its pieces into its worker's chunks for the
 * step; the schedule is gathered from them step by step.
 *
 * This file builds the schedule: the graph's view (in-links, distances),
 * the workers, the passes and the gathering, reduce-scatter's reversal,
 * the reduced form. Each receiver's problems are bfb_solve.c's. */
#include "bfb/internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- views, distances and passes ------------------------------------------------ */

void bfb_bfs_row(const struct graph *g, uint32_t s, uint16_t *row, uint32_t *queue)
{
	uint32_t head = 0, tail = 0;

	for (uint32_t v = 0; v < g->n; v++)
		row[v] = TOPO_UNREACHABLE;
	row[s] = 0;
	queue[tail++] = s;
	while (head < tail) {
		uint32_t u = queue[head++];

		if (row[u] + 1 >= TOPO_UNREACHABLE)
			continue;
		for (uint32_t a = g->off[u]; a < g->off[u + 1]; a++)
			if (row[g->adj[a]] == TOPO_UNREACHABLE) {
				row[g->adj[a]] = (uint16_t)(row[u] + 1);
				queue[tail++] = g->adj[a];
			}
	}
}

void bfb_view_free(struct view *vw)
{
	free(vw->own_off);
	free(vw->own_peer);
	free(vw->own_arc);
	free(vw->row);
	free(vw->dist);
	free(vw->rows);
	free(vw->count);
	free(vw->owner);
	free(vw->where);
	for (unsigned i = 0; vw->w && i < vw->nworkers; i++)
		bfb_worker_free(&vw->w[i]);
	free(vw->w);
}

/* In-links of every node of H: for allgather H = g, in-links of u are the
 * arcs w -> u of g; for reduce-scatter H = g^T, they are u's own arcs. */
void bfb_view_links(struct view *vw)
{
	const struct graph *g = vw->g;
	uint32_t n = g->n;

	if (vw->reverse) {
		vw->own_arc = xmalloc(((size_t)g->m + 1) * sizeof(uint32_t));
		for (uint32_t a = 0; a < g->m; a++)
			vw->own_arc[a] = a;
		vw->in_off = g->off;
		vw->in_peer = g->adj;
		vw->in_arc = vw->own_arc;
		return;
	}
	vw->own_off = xcalloc((size_t)n + 1, sizeof(uint32_t));
	vw->own_peer = xmalloc(((size_t)g->m + 1) * sizeof(uint32_t));
	vw->own_arc = xmalloc(((size_t)g->m + 1) * sizeof(uint32_t));
	for (uint32_t a = 0; a < g->m; a++)
		vw->own_off[g->adj[a] + 1]++;
	for (uint32_t u = 0; u < n; u++)
		vw->own_off[u + 1] += vw->own_off[u];
	uint32_t *pos = xmalloc((size_t)n * sizeof(uint32_t));
	memcpy(pos, vw->own_off, (size_t)n * sizeof(uint32_t));
	for (uint32_t w = 0; w < n; w++)
		for (uint32_t a = g->off[w]; a < g->off[w + 1]; a++) {
			uint32_t p = pos[g->adj[a]]++;

			vw->own_peer[p] = w;
			vw->own_arc[p] = a;
		}
	free(pos);
	vw->in_off = vw->own_off;
	vw->in_peer = vw->own_peer;
	vw->in_arc = vw->own_arc;
}

/* row[x][v] = d_H(v, x): BFS from x over H^T, which is g itself for
 * reduce-scatter (H = g^T) and g^T for allgather. */
static int view_distances(struct view *vw, bool one_node, struct ofc_error *err)
{
	const struct graph *g = vw->g;
	struct graph *t = vw->reverse ? NULL : graph_transpose(g);
	const struct graph *h = vw->reverse ? g : t;
	uint32_t n = g->n;

	vw->row = xcalloc(n, sizeof(uint16_t *));
	if (one_node) {
		/* A vertex-transitive graph: node 0 and its in-neighbours suffice. */
		uint32_t deg = vw->in_off[1] - vw->in_off[0];
		uint32_t *queue = xmalloc((size_t)n * sizeof(uint32_t));

		vw->rows = xmalloc((size_t)(deg + 1) * n * sizeof(uint16_t));
		bfb_bfs_row(h, 0, vw->rows, queue);
		vw->row[0] = vw->rows;
		for (uint32_t k = 0; k < deg; k++) {
			uint32_t x = vw->in_peer[vw->in_off[0] + k];

			if (!vw->row[x]) {
				bfb_bfs_row(h, x, vw->rows + (size_t)(k + 1) * n, queue);
				vw->row[x] = vw->rows + (size_t)(k + 1) * n;
			}
		}
		free(queue);
	} else {
		vw->dist = topo_distances(h, vw->o->threads, err);
		if (!vw->dist) {
			graph_free(t);
			return -1;
		}
		for (uint32_t x = 0; x < n; x++)
			vw->row[x] = vw->dist + (size_t)x * n;
	}
	graph_free(t);

	uint32_t D = 0;
	for (uint32_t x = 0; x < n; x++) {
		if (!vw->row[x])
			continue;
		for (uint32_t v = 0; v < n; v++) {
			if (vw->row[x][v] == TOPO_UNREACHABLE)
				return ofc_error_set(err, OFC_E_INPUT,
						     "%s is not strongly connected: node %u cannot "
						     "reach node %u",
						     g->spec ? g->spec : "the topology",
						     vw->reverse ? x : v, vw->reverse ? v : x);
			if (vw->row[x][v] > D)
				D = vw->row[x][v];
		}
	}
	vw->D = D;
	return 0;
}

void bfb_workers_init(struct view *vw)
{
	/* As many as the receivers' parallel_for starts (blocks of 4). */
	unsigned th = parallel_workers(vw->nrecv, 4, vw->o->threads);
	uint32_t n = vw->n, D = vw->D;

	vw->nworkers = th;
	vw->w = xcalloc(th, sizeof(struct worker));
	for (unsigned i = 0; i < th; i++) {
		struct worker *w = &vw->w[i];

		w->src = xmalloc((size_t)n * sizeof(uint32_t));
		w->mask = xmalloc((size_t)n * sizeof(uint64_t));
		w->tstart = xmalloc(((size_t)D + 2) * sizeof(uint32_t));
		w->tcur = xmalloc(((size_t)D + 2) * sizeof(uint32_t));
		w->gid = xmalloc((size_t)n * sizeof(uint32_t));
		w->order = xmalloc((size_t)n * sizeof(uint32_t));
		w->groups = xmalloc((size_t)n * sizeof(struct group));
		w->max_c = xcalloc(D, sizeof(uint64_t));
		w->max_k = xmalloc((size_t)D * sizeof(uint64_t));
		for (uint32_t t = 0; t < D; t++)
			w->max_k[t] = 1;
		w->max_w = xcalloc(D, sizeof(uint64_t));
		w->max_u = xcalloc(D, sizeof(double));
		if (vw->pass == PASS_BUILD) {
			w->nsteps = D;
			w->sb = xcalloc(D, sizeof(struct stepbuf));
		}
	}
}

void piecebuf_grow(struct piecebuf *b)
{
	if (b->nchunk == b->cap_chunk) {
		b->cap_chunk = b->cap_chunk ? b->cap_chunk * 2 : 16;
		b->chunk = xreallocarray(b->chunk, b->cap_chunk, sizeof(struct xfer *));
	}
	b->chunk[b->nchunk++] = xmalloc(PIECEBUF_XFERS * sizeof(struct xfer));
	b->used = 0;
}

void piecebuf_free(struct piecebuf *b)
{
	for (uint32_t c = 0; c < b->nchunk; c++)
		free(b->chunk[c]);
	free(b->chunk);
	memset(b, 0, sizeof(*b));
}

/* b's pieces copied to out, each chunk freed once copied; their count. */
static size_t piecebuf_drain(struct piecebuf *b, struct xfer *out)
{
	size_t pos = 0;

	for (uint32_t c = 0; c < b->nchunk; c++) {
		uint32_t k = c + 1 < b->nchunk ? PIECEBUF_XFERS : b->used;

		memcpy(out + pos, b->chunk[c], k * sizeof(struct xfer));
		pos += k;
		free(b->chunk[c]);
	}
	free(b->chunk);
	memset(b, 0, sizeof(*b));
	return pos;
}

/* Gather the pieces step by step in receiver order, freeing each chunk
 * once copied: the schedule and the buffers hold every transfer about
 * once between them, never twice. */
struct gather_job {
	struct view *vw;
	struct xfer *out; /* step so's pieces from out + at[so] */
	const size_t *at;
	struct piecebuf *tail;
	unsigned ntail;
};

/* One step's pieces in receiver order, then its tail, its chunks freed
 * as they are copied (a step's chunks are its own: steps run apart). */
static void gather_step(void *arg, size_t i, unsigned wid)
{
	const struct gather_job *j = arg;
	struct view *vw = j->vw;
	uint32_t D = vw->D, so = (uint32_t)i, t = vw->reverse ? D - so : so + 1;
	size_t pos = j->at[so]; /* (out is NULL where no step has any) */

	(void)wid;
	for (uint32_t u = 0; u < vw->nrecv; u++) {
		size_t idx = (size_t)u * D + t - 1;
		struct stepbuf *b = &vw->w[vw->owner[u]].sb[so];
		uint32_t c = (uint32_t)(vw->where[idx] >> 32);

		if (!vw->count[idx])
			continue;
		while (b->live < c)
			free(b->chunk[b->live++]);
		memcpy(j->out + pos, b->chunk[c] + (uint32_t)vw->where[idx],
		       vw->count[idx] * sizeof(struct xfer));
		pos += vw->count[idx];
	}
	for (unsigned k = 0; k < vw->nworkers; k++) {
		struct stepbuf *b = &vw->w[k].sb[so];

		while (b->live < b->nchunk)
			free(b->chunk[b->live++]);
	}
	for (unsigned k = 0; j->tail && k < j->ntail; k++) {
		struct piecebuf *b = &j->tail[(size_t)k * D + so];

		if (b->nchunk)
			pos += piecebuf_drain(b, j->out + pos);
	}
}

void bfb_view_gather(struct view *vw, struct schedule *s, struct piecebuf *tail, unsigned ntail)
{
	uint32_t D = vw->D;
	size_t *count = xcalloc((size_t)D + 1, sizeof(size_t)),
	       *at = xmalloc(((size_t)D + 1) * sizeof(size_t));

	for (uint32_t so = 0; so < D; so++) {
		uint32_t t = vw->reverse ? D - so : so + 1;

		for (unsigned k = 0; tail && k < ntail; k++)
			count[so] += piecebuf_count(&tail[(size_t)k * D + so]);
		for (uint32_t u = 0; u < vw->nrecv; u++)
			count[so] += vw->count[(size_t)u * D + t - 1];
		at[so] = so ? at[so - 1] + count[so - 1] : 0;
	}
	/* every step's room at once (a step at a time, each grew the array
	 * to the byte and so moved it again), filled a step a thread: the
	 * copy faults in the whole schedule's pages */
	struct gather_job j = {.vw = vw, .at = at, .tail = tail, .ntail = ntail};
	j.out = sched_append_steps(s, D, count);
	parallel_for(D, 1, vw->o->threads, gather_step, &j);
	free(count);
	free(at);
}

struct phase_result {
	uint32_t steps;
	struct frac tau_b, tau_b_exact;
	double tau_b_value, tau_b_exact_value;
	uint64_t problems, lps;
	struct frac *step; /* max_u U*_{u,t} per step, in schedule order (the caller frees) */
};

/* One BFB allgather on H (g, or g^T run backwards), appended to s; with
 * node0 (a reduced schedule on a Cayley graph) only node 0's problems,
 * whose pieces are the program. */
static int run_view(const struct graph *g, uint32_t d, bool reverse, const struct bfb_opts *o,
		    bool node0, struct schedule *s, struct phase_result *pr, struct bfb_stats *st,
		    struct ofc_error *err)
{
	struct view vw = {.g = g, .reverse = reverse, .n = g->n, .o = o};
	uint32_t n = g->n;
	int rc = -1;
	bool one = node0 || (!s && g->vertex_transitive && !o->rate);
	double t0 = now_seconds();

	bfb_view_links(&vw);
	vw.d = d;
	if (view_distances(&vw, one, err) < 0)
		goto out;
	st->seconds_distances += now_seconds() - t0;
	t0 = now_seconds();
	uint32_t D = vw.D;
	vw.nrecv = one ? 1 : n;
	size_t cells = (size_t)vw.nrecv * D;
	vw.pass = s ? PASS_BUILD : PASS_EVAL;
	if (s) {
		vw.count = xmalloc(cells * sizeof(uint32_t));
		vw.where = xmalloc(cells * sizeof(uint64_t));
		vw.owner = xmalloc((size_t)n * sizeof(uint32_t));
	}
	bfb_workers_init(&vw);
	if (s && o->inject)
		pr->step = xcalloc(D, sizeof(struct frac));
	parallel_for(vw.nrecv, 4, vw.nworkers, bfb_solve_receiver, &vw);
	for (unsigned i = 0; i < vw.nworkers; i++)
		if (vw.w[i].failed) {
			ofc_error_set(err, OFC_E_RUNTIME, "%s", vw.w[i].why);
			goto out;
		}

	/* tau_B = (d/N) sum_t max_u U*_{u,t} (eq. 4), exactly. */
	struct frac sum = frac_make(0, 1), sumw = frac_make(0, 1);
	double sumd = 0;
	for (uint32_t t = 0; t < D; t++) {
		uint64_t bc = 0, bk = 1, bw = 0;
		double bu = 0;

		for (unsigned i = 0; i < vw.nworkers; i++) {
			struct worker *w = &vw.w[i];

			if (w->max_c[t] * bk > bc * w->max_k[t]) {
				bc = w->max_c[t];
				bk = w->max_k[t];
			}
			if (w->max_w[t] > bw)
				bw = w->max_w[t];
			if (w->max_u[t] > bu)
				bu = w->max_u[t];
		}
		sum = frac_add(sum, frac_make((int64_t)bc, (int64_t)bk));
		if (pr->step)
			pr->step[reverse ? D - 1 - t : t] = frac_make((int64_t)bc, (int64_t)bk);
		/* The LP path reports lp_solve's own optimum as the decimal. */
		sumd += o->method == BFB_LP ? bu : (double)bc / (double)bk;
		if (o->chunks)
			sumw = frac_add(sumw, frac_make((int64_t)bw, o->chunks));
	}
	struct frac scale = frac_make(vw.d, n);
	pr->steps = D;
	pr->tau_b_exact = frac_mul(sum, scale);
	pr->tau_b_exact_value = sumd * vw.d / n;
	if (o->chunks) {
		pr->tau_b = frac_mul(sumw, scale);
		pr->tau_b_value = frac_value(pr->tau_b);
	} else {
		pr->tau_b = pr->tau_b_exact;
		pr->tau_b_value = pr->tau_b_exact_value;
	}
	for (unsigned i = 0; i < vw.nworkers; i++) {
		pr->problems += vw.w[i].problems;
		pr->lps += vw.w[i].lps;
	}

	if (s)
		bfb_view_gather(&vw, s, NULL, 0);
	st->seconds_generate += now_seconds() - t0;
	rc = 0;
out:
	bfb_view_free(&vw);
	return rc;
}

/* Any strongly connected digraph (view_distances checks that): a degraded
 * or irregular graph is scheduled as it is. d, which prices a step, is the
 * most links a node has: a link runs at B/d (times its rate) whatever
 * its neighbours lost. */
static int check_graph(const struct graph *g, const struct bfb_opts *o, bool full, bool reduced,
		       uint32_t *deg, struct ofc_error *err)
{
	uint32_t n = g->n, d = 0, *in;
	uint32_t most = reduced ? SCHED_REDUCED_MAX_NODES : SCHED_MAX_NODES;
	int rc = 0;

	if (n < 2)
		return ofc_error_set(err, OFC_E_INPUT, "a collective needs at least 2 nodes");
	if (n > most)
		return ofc_error_set(err, OFC_E_INPUT, "%u nodes: %sschedules have at most %u", n,
				     reduced ? "reduced " : "", most);
	if (full && n > BFB_MAX_NODES)
		return ofc_error_set(err, OFC_E_INPUT,
				     "%u nodes: BFB schedules are built for up to %u nodes", n,
				     BFB_MAX_NODES);
	in = xcalloc(n, sizeof(uint32_t));
	for (uint32_t a = 0; a < g->m; a++)
		in[g->adj[a]]++;
	for (uint32_t u = 0; u < n; u++) {
		if (graph_outdeg(g, u) > d)
			d = graph_outdeg(g, u);
		if (in[u] > d)
			d = in[u];
	}
	free(in);
	if (d > BFB_MAX_DEGREE)
		return ofc_error_set(err, OFC_E_INPUT,
				     "degree %u: BFB handles up to %u links per node", d,
				     BFB_MAX_DEGREE);
	for (uint32_t a = 0; o->rate && a < g->m && rc == 0; a++)
		if (o->rate[a] == 0 || o->rate[a] > BFB_MAX_RATE)
			rc = ofc_error_set(err, OFC_E_INPUT,
					   "arc %u has rate %u: BFB takes rates 1..%u (multiples "
					   "of the slowest link's)",
					   a, o->rate[a], BFB_MAX_RATE);
	if (rc == 0 && o->rate && o->chunks)
		rc = ofc_error_set(err, OFC_E_INPUT,
				   "--chunks with mixed link rates is not supported (IP (12) "
				   "assumes equal links)");
	*deg = d;
	return rc;
}

/* The figures of the phases run (reduce-scatter rs, allgather ag). */
static void phase_stats(const struct graph *g, enum sched_collective c,
			const struct phase_result *rs, const struct phase_result *ag,
			struct bfb_stats *st)
{
	struct frac zero = frac_make(0, 1);
	st->steps = rs->steps + ag->steps;
	st->tau_b = frac_add(c != SCHED_ALLGATHER ? rs->tau_b : zero,
			     c != SCHED_REDUCE_SCATTER ? ag->tau_b : zero);
	st->tau_b_value = rs->tau_b_value + ag->tau_b_value;
	st->tau_b_exact = frac_add(c != SCHED_ALLGATHER ? rs->tau_b_exact : zero,
				   c != SCHED_REDUCE_SCATTER ? ag->tau_b_exact : zero);
	st->tau_b_exact_value = rs->tau_b_exact_value + ag->tau_b_exact_value;
	st->problems = rs->problems + ag->problems;
	st->lps = rs->lps + ag->lps;
	struct frac opt = frac_mul(frac_make(cost_phases(c), 1), frac_make(g->n - 1, g->n));
	st->bw_optimal = frac_valid(st->tau_b) ? frac_cmp(st->tau_b, opt) == 0
					       : fabs(st->tau_b_value - frac_value(opt)) < 1e-9;
}

int bfb_schedule(const struct graph *g, enum sched_collective c, const struct bfb_opts *o,
		 struct schedule *s, struct bfb_stats *st, struct ofc_error *err)
{
	static const struct bfb_opts defaults = {0};
	struct phase_result rs = {0}, ag = {0};
	uint32_t d = 0;

	if (!o)
		o = &defaults;
	memset(st, 0, sizeof(*st));
	if (c != SCHED_ALLGATHER && c != SCHED_REDUCE_SCATTER && c != SCHED_ALLREDUCE)
		return ofc_error_set(err, OFC_E_INPUT,
				     "BFB schedules allgather, reduce-scatter and "
				     "allreduce");
	if (check_graph(g, o, s != NULL || !g->vertex_transitive, false, &d, err) < 0)
		return -1;
	if (o->inject && (!s || o->chunks || o->method == BFB_LP))
		return ofc_error_set(
		    err, OFC_E_INPUT,
		    "host injection limits are modelled for built BFB schedules of "
		    "exact fractions (bfb, not bfb-lp; no --chunks)");
	st->nodes = g->n;
	st->degree = d;
	if (s) {
		sched_init(s, c, o->method == BFB_LP ? "bfb-lp" : "bfb", g->n);
		snprintf(s->topology, sizeof(s->topology), "%s", g->spec ? g->spec : "");
	}
	if (c != SCHED_ALLGATHER && run_view(g, d, true, o, false, s, &rs, st, err) < 0)
		goto fail;
	if (c != SCHED_REDUCE_SCATTER && run_view(g, d, false, o, false, s, &ag, st, err) < 0)
		goto fail;

	if (o->inject && bfb_host_limited(g, o)) {
		/* NIC-limited hosts: each step at the busier of links and hosts. */
		struct phase_result *ph[2] = {&rs, &ag};

		for (int i = 0; i < 2; i++) {
			struct phase_result *pr = ph[i];
			struct frac sum = frac_make(0, 1);

			if (!pr->steps)
				continue;
			struct frac *u = xmalloc(pr->steps * sizeof(struct frac));
			memcpy(u, pr->step, pr->steps * sizeof(struct frac));
			if (bfb_host_phase(g, o, i == 0, s, i == 0 ? 0 : rs.steps, pr->steps,
					   pr->step, &st->host_solved, err) < 0) {
				free(u);
				goto fail;
			}
			for (uint32_t t = 0; t < pr->steps; t++) {
				sum = frac_add(sum, pr->step[t]);
				st->host_steps += frac_cmp(pr->step[t], u[t]) > 0;
			}
			free(u);
			pr->tau_b = pr->tau_b_exact = frac_mul(sum, frac_make(d, g->n));
			pr->tau_b_value = pr->tau_b_exact_value = frac_value(pr->tau_b);
		}
	}
	free(rs.step);
	free(ag.step);
	rs.step = ag.step = NULL;

	phase_stats(g, c, &rs, &ag, st);
	return 0;
fail:
	free(rs.step);
	free(ag.step);
	if (s)
		sched_free(s);
	return -1;
}

int bfb_reduced(const struct graph *g, const struct sched_group *G, enum sched_collective c,
		const struct bfb_opts *o, struct sched_reduced *r, struct bfb_stats *st,
		struct ofc_error *err)
{
	static const struct bfb_opts defaults = {0};
	struct phase_result rs = {0}, ag = {0};
	struct sched_group grp = *G; /* G may be &r->group */
	uint32_t d = 0;

	if (!o)
		o = &defaults;
	G = &grp;
	memset(st, 0, sizeof(*st));
	memset(r, 0, sizeof(*r));
	if (c != SCHED_ALLGATHER && c != SCHED_REDUCE_SCATTER && c != SCHED_ALLREDUCE)
		return ofc_error_set(err, OFC_E_INPUT,
				     "BFB schedules allgather, reduce-scatter and "
				     "allreduce");
	if (o->rate || o->inject)
		return ofc_error_set(err, OFC_E_INPUT,
				     "a reduced BFB schedule takes every link and host alike (no "
				     "link rates or injection limits)");
	if (G->nodes != g->n || G->reps != 1)
		return ofc_error_set(err, OFC_E_INPUT, "the group has %u elements, %s %u nodes",
				     G->order, g->spec ? g->spec : "the topology", g->n);
	if (check_graph(g, o, false, true, &d, err) < 0)
		return -1;
	st->nodes = g->n;
	st->degree = d;
	r->group = *G;
	sched_init(&r->prog, c, o->method == BFB_LP ? "bfb-lp" : "bfb", g->n);
	snprintf(r->prog.topology, sizeof(r->prog.topology), "%s", g->spec ? g->spec : "");
	if ((c != SCHED_ALLGATHER && run_view(g, d, true, o, true, &r->prog, &rs, st, err) < 0) ||
	    (c != SCHED_REDUCE_SCATTER &&
	     run_view(g, d, false, o, true, &r->prog, &ag, st, err) < 0)) {
		sched_reduced_free(r);
		return -1;
	}
	phase_stats(g, c, &rs, &ag, st);
	return 0;
}

uint64_t bfb_memory_estimate(uint32_t n, enum sched_collective c)
{
	uint64_t cells = (uint64_t)n * n, phases = c == SCHED_ALLREDUCE ? 2 : 1;
	bool reduce = c != SCHED_ALLGATHER;

	/* The verifier's table: a bit per (node, block), or for reductions
	 * 16 bytes per (node, shard), and a list for each entry BFB's shares
	 * cut (few: the 1/8 is slack for them). Above 4,096 nodes the
	 * check keeps less (chunks within its budget), but the count stands:
	 * it covers the build's own peak, which 24 bytes a transfer miss
	 * there (genkautz:8192,4 reduce-scatter: 2.64 GiB building, 1.9 GiB
	 * checking, 2.63 estimated; bench/results/bfb.md). */
	return phases * (cells - n) * BFB_BYTES_PER_XFER + cells * sizeof(uint16_t) +
	       (reduce ? cells * 16 + cells / 8 : cells / 8);
}
