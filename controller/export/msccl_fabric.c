/* A server fabric's schedule on its GPUs alone (docs/msccl.md, "Server
 * fabrics"): what an MSCCL program can say. The fluid engine's schedule
 * moves data through switches, host memory and NICs; an MSCCL program has
 * GPU ranks that send to and receive from each other, and the runtime
 * (NCCL's P2P, SHM and NET transports) carries each send through the
 * server and the network. So each piece of data that reaches a GPU
 * becomes one send from the GPU it left, as ForestColl's to_xml writes its
 * trees' GPU-to-GPU edges.
 *
 * - Tracing (copy form): step by step, every relay (a vertex that is not a
 *   GPU) keeps, per block, which GPU each part it received came from and
 *   the hops it took; a transfer out of a relay carries those sources on,
 *   and a transfer into a GPU becomes a send from each source GPU to it,
 *   at the step it arrives (the source held it since it left). As the
 *   verifier reads a step, a transfer sends what its tail held at the
 *   start of the step. Within one block part, content is the same
 *   whichever relay packet a transfer is matched with, so the latest
 *   arrival serves.
 * - Reductions are traced in copy form: the schedule reversed in time
 *   with every transfer turned round is an allgather on the reversed
 *   fabric (how the fluid engine made it), whose GPU sends, turned round
 *   again, are reductions into the GPU that sent there: b's partial sum
 *   into a at the step b sent it. Each GPU receives a part once in the
 *   copy form, so each sends its partial sum once in the reduction, after
 *   everything folded into it (the verifier checks the result).
 * - Send once, forward: a relay that copies (host memory sending one part
 *   to several GPUs) cannot be said in MSCCL, where only GPUs send. A
 *   part from another server crosses the network once: the first GPU of
 *   the server it reaches gets it from its source, the others from a GPU
 *   of theirs that holds it, over the least loaded route inside the
 *   server (NVLink or PCIe), in a second step of the program for each of
 *   the schedule's (what arrived in the first is held by the second).
 *   Otherwise the GPUs sent the part again over the rails, each copy of
 *   host memory's a rail crossing (all-links-2's allgather at 1.76x the
 *   schedule's loads, its own price +3.3% over the optimum where the
 *   rounding dropped those parts).
 * - What it approximates: a part a relay copies inside its source's own
 *   server is one send per receiving GPU, each over the hops from the
 *   source again. Priced here on the fabric: each GPU send loads every hop
 *   of its chain at that hop's step, against the schedule's own loads. */
#include "controller/export/export.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NONE UINT32_MAX

/* Where a relay's part of a block came from: the GPU and the last hop. */
struct src_seg {
	uint32_t lo, hi, rank, hop;
};

struct held {
	struct src_seg *v;
	uint32_t n;
	size_t cap;
};

/* One hop of a chain: the arc at a step, and the hop before it. */
struct hop {
	uint32_t arc, step, parent;
};

/* A GPU send found by the trace (copy form). */
struct gsend {
	uint32_t step, src, dst, block, lo, hi, hop;
	uint32_t slot; /* its step in the program: 2 a step (see slot_of) */
	size_t order;
};

/* What a GPU received of a block: [lo, hi) at the trace's iteration,
 * forwarded there or not. */
struct got_seg {
	uint32_t lo, hi, iter;
	bool fwd;
};

struct got {
	struct got_seg *v;
	uint32_t n;
	size_t cap;
};

struct tracer {
	const struct fluid_net *n;
	uint32_t *rank; /* vertex -> GPU rank, NONE for relays */
	uint32_t *vert; /* rank -> vertex */
	uint32_t nranks;
	uint32_t *out_off, *out_arc; /* CSR: a vertex's ports in arc order */
	uint32_t *in_off, *in_arc;   /* CSR: a vertex's in-arcs */
	uint32_t *server;	     /* vertex -> its server, NONE outside one */
	struct held *held;	     /* (vertex, block) */
	struct got *got;	     /* (rank, block): what the GPU received */
	double *load;		     /* arc: the sends' blocks on it so far */
	double *best;		     /* vertex: scratch of route_in */
	uint32_t *via;		     /* vertex: scratch of route_in */
	uint32_t iter;		     /* the trace's iteration (copy form) */
	bool reverse;		     /* tracing a reduction (copy form backwards) */
	bool forward;		     /* send once, forward (the top) */
	size_t forwarded;	     /* the sends that are forwards */
	struct hop *hops;
	size_t nhops, cap_hops;
	struct gsend *pend, *sends;
	size_t npend, cap_pend, nsends, cap_sends;
};

static uint32_t arc_of(const struct tracer *tr, const struct xfer *x)
{
	uint32_t first = tr->out_off[x->src], deg = tr->out_off[x->src + 1] - first;

	if (x->lane != SCHED_NO_LANE && x->lane < deg)
		return tr->out_arc[first + x->lane];
	for (uint32_t k = 0; k < deg; k++)
		if (tr->n->head[tr->out_arc[first + k]] == x->dst)
			return tr->out_arc[first + k];
	return NONE;
}

/* [lo, hi) of (v, b) now comes from rank over hop: what was there is cut. */
static void held_put(struct held *h, uint32_t lo, uint32_t hi, uint32_t rank, uint32_t hop)
{
	uint32_t n = h->n;

	for (uint32_t i = 0; i < n; i++) {
		struct src_seg s = h->v[i];

		if (s.hi <= lo || s.lo >= hi)
			continue;
		if (s.lo < lo && s.hi > hi) { /* split round the new part */
			h->v[i].hi = lo;
			GROW(h->v, h->cap, (size_t)h->n + 1);
			h->v[h->n++] = (struct src_seg){hi, s.hi, s.rank, s.hop};
		} else if (s.lo < lo) {
			h->v[i].hi = lo;
		} else if (s.hi > hi) {
			h->v[i].lo = hi;
		} else {
			h->v[i].lo = h->v[i].hi = 0; /* covered: emptied */
		}
	}
	GROW(h->v, h->cap, (size_t)h->n + 1);
	h->v[h->n++] = (struct src_seg){lo, hi, rank, hop};
}

static void pend_add(struct tracer *tr, struct gsend g)
{
	GROW(tr->pend, tr->cap_pend, tr->npend + 1);
	tr->pend[tr->npend++] = g;
}

static uint32_t hop_add(struct tracer *tr, uint32_t arc, uint32_t step, uint32_t parent)
{
	GROW(tr->hops, tr->cap_hops, tr->nhops + 1);
	tr->hops[tr->nhops] = (struct hop){arc, step, parent};
	return (uint32_t)tr->nhops++;
}

/* One transfer in copy form, u -> v at (original) step t: its sources
 * into tr->pend (the step's reads). dst is v. */
static int trace_read(struct tracer *tr, uint32_t u, uint32_t v, uint32_t block, uint32_t lo,
		      uint32_t hi, uint32_t arc, uint32_t t, struct ofc_error *err)
{
	const struct fluid_net *n = tr->n;

	if (tr->rank[u] != NONE) {
		pend_add(tr, (struct gsend){t, tr->rank[u], v, block, lo, hi,
					    hop_add(tr, arc, t, NONE), 0});
		return 0;
	}
	const struct held *h = &tr->held[(size_t)u * n->nverts + block];
	uint64_t got = 0;

	for (uint32_t i = 0; i < h->n; i++) {
		uint32_t a = h->v[i].lo > lo ? h->v[i].lo : lo,
			 b = h->v[i].hi < hi ? h->v[i].hi : hi;

		if (a >= b)
			continue;
		got += b - a;
		pend_add(tr, (struct gsend){t, h->v[i].rank, v, block, a, b,
					    hop_add(tr, arc, t, h->v[i].hop), 0});
	}
	if (got != (uint64_t)(hi - lo))
		return ofc_error_set(err, OFC_E_INPUT,
				     "step %u: %s sends part of %s's block that it never received",
				     t + 1, fluid_vertex_name(n, u),
				     fluid_vertex_name(n, block < n->nverts ? block : 0));
	return 0;
}

/* The program's step of a send at the schedule's step t: each step is
 * two, the sends as traced, then the forwards of what arrived in the
 * first (in copy form: a reduction's forwards come first, turned round). */
static uint32_t slot_of(const struct tracer *tr, uint32_t t, bool fwd)
{
	return 2 * t + 1 + (fwd ? (tr->reverse ? -1 : 1) : 0);
}

/* Whether rank r holds all of [lo, hi) of block b by this iteration's
 * forwards: received before it, or in it but not forwarded. */
static bool holds(const struct tracer *tr, uint32_t r, uint32_t b, uint32_t lo, uint32_t hi)
{
	const struct got *h = &tr->got[(size_t)r * tr->n->nverts + b];
	uint64_t have = 0;

	for (uint32_t i = 0; i < h->n; i++) {
		uint32_t a = h->v[i].lo > lo ? h->v[i].lo : lo,
			 z = h->v[i].hi < hi ? h->v[i].hi : hi;

		if (a < z && (h->v[i].iter < tr->iter || !h->v[i].fwd))
			have += z - a;
	}
	return have == (uint64_t)(hi - lo);
}

/* The least loaded route into GPU v from every vertex of v's server, its
 * relays only between (Dijkstra backwards from v: a route's price is its
 * busiest arc's load with gb more, over the arc's GB/s). tr->best and
 * tr->via (the arc out of each vertex towards v) are set. */
static void route_in(struct tracer *tr, uint32_t v, double gb)
{
	const struct fluid_net *n = tr->n;
	uint32_t S = tr->server[v];

	for (uint32_t u = 0; u < n->nverts; u++) {
		tr->best[u] = INFINITY;
		tr->via[u] = NONE;
	}
	tr->best[v] = 0;
	for (;;) {
		uint32_t u = NONE;

		for (uint32_t x = 0; x < n->nverts; x++) /* the nearest not done */
			if (tr->server[x] == S && tr->best[x] >= 0 && !isinf(tr->best[x]) &&
			    (u == NONE || tr->best[x] < tr->best[u]))
				u = x;
		if (u == NONE)
			return;
		double d = tr->best[u];

		tr->best[u] = -1 - d; /* done: -1 - its price */
		if (u != v && tr->rank[u] != NONE)
			continue; /* a GPU ends a route, it does not pass one on */
		for (uint32_t k = tr->in_off[u]; k < tr->in_off[u + 1]; k++) {
			uint32_t a = tr->in_arc[k], x = n->tail[a];
			double c = isinf(n->bw[a]) ? 0 : (tr->load[a] + gb) / n->bw[a];

			c = c > d ? c : d;
			if (tr->server[x] == S && tr->best[x] >= 0 && c < tr->best[x]) {
				tr->best[x] = c;
				tr->via[x] = a;
			}
		}
	}
}

/* Send once, forward: a part that reaches GPU v from a GPU on another
 * server, which a GPU w of v's server held already (a relay copied it to
 * both), is forwarded w -> v over the least loaded route inside the
 * server, not sent across the network again. g's source and hops are
 * changed; false where no GPU of v's server holds the part. */
static bool forward(struct tracer *tr, struct gsend *g, uint32_t v)
{
	const struct fluid_net *n = tr->n;
	uint32_t S = tr->server[v], w = NONE;

	if (!tr->forward || S == NONE || tr->server[tr->vert[g->src]] == S)
		return false;
	route_in(tr, v, sched_frac(g->hi - g->lo));
	for (uint32_t r = 0; r < tr->nranks; r++) {
		uint32_t x = tr->vert[r];

		if (x != v && tr->server[x] == S && tr->via[x] != NONE &&
		    holds(tr, r, g->block, g->lo, g->hi) &&
		    (w == NONE || tr->best[x] > tr->best[w])) /* -1 - price: the least */
			w = x;
	}
	if (w == NONE)
		return false;
	uint32_t parent = NONE;

	for (uint32_t x = w; x != v; x = n->head[tr->via[x]])
		parent = hop_add(tr, tr->via[x], g->step, parent);
	g->src = tr->rank[w];
	g->hop = parent;
	return true;
}

/* The step's deliveries: into a relay, kept; into a GPU, a send (or a
 * forward inside its server), its bytes on each arc of its route. */
static void trace_write(struct tracer *tr)
{
	const struct fluid_net *n = tr->n;

	for (size_t i = 0; i < tr->npend; i++) {
		struct gsend g = tr->pend[i];
		uint32_t v = g.dst;

		if (tr->rank[v] == NONE) {
			held_put(&tr->held[(size_t)v * n->nverts + g.block], g.lo, g.hi, g.src,
				 g.hop);
			continue;
		}
		if (tr->rank[v] == g.src)
			continue; /* back to where it started: nothing to send */
		bool fwd = forward(tr, &g, v);

		tr->forwarded += fwd;

		g.slot = slot_of(tr, g.step, fwd);
		for (uint32_t h = g.hop; h != NONE; h = tr->hops[h].parent)
			tr->load[tr->hops[h].arc] += sched_frac(g.hi - g.lo);
		struct got *got = &tr->got[(size_t)tr->rank[v] * n->nverts + g.block];

		GROW(got->v, got->cap, (size_t)got->n + 1);
		got->v[got->n++] = (struct got_seg){g.lo, g.hi, tr->iter, fwd};
		g.dst = tr->rank[v];
		g.order = tr->nsends;
		GROW(tr->sends, tr->cap_sends, tr->nsends + 1);
		tr->sends[tr->nsends++] = g;
	}
	tr->npend = 0;
	tr->iter++;
}

/* Steps [t0, t1) of s in copy form (reverse: backwards, each transfer
 * turned round), their GPU sends appended to tr->sends. */
static int trace_phase(struct tracer *tr, const struct schedule *s, uint32_t t0, uint32_t t1,
		       bool reverse, struct ofc_error *err)
{
	const struct fluid_net *n = tr->n;

	for (size_t k = 0; k < (size_t)n->nverts * n->nverts; k++)
		tr->held[k].n = 0;
	for (size_t k = 0; k < (size_t)tr->nranks * n->nverts; k++)
		tr->got[k].n = 0;
	tr->reverse = reverse;
	for (uint32_t j = t0; j < t1; j++) {
		uint32_t t = reverse ? t1 - 1 - (j - t0) : j;

		for (size_t k = s->step_start[t]; k < s->step_start[t + 1]; k++) {
			const struct xfer *x = &s->xfers[k];
			uint32_t arc = arc_of(tr, x);

			if (x->src >= n->nverts || x->dst >= n->nverts || x->block >= n->nverts ||
			    arc == NONE)
				return ofc_error_set(err, OFC_E_INPUT,
						     "step %u: transfer %zu is not on the fabric",
						     t + 1, k);
			if (trace_read(tr, reverse ? x->dst : x->src, reverse ? x->src : x->dst,
				       x->block, x->offset, x->offset + x->length, arc, t, err) < 0)
				return -1;
		}
		trace_write(tr);
	}
	return 0;
}

static int cmp_send(const void *a, const void *b)
{
	const struct gsend *x = a, *y = b;

	if (x->slot != y->slot)
		return x->slot < y->slot ? -1 : 1;
	return (x->order > y->order) - (x->order < y->order);
}

/* The steps' time in s/GB of block: each step's busiest arc or capacity
 * set, its load (blocks) over its GB/s, summed. load: nsteps x narcs. */
static double steps_time(const struct fluid_net *n, const double *load, uint32_t nsteps)
{
	double total = 0;

	for (uint32_t t = 0; t < nsteps; t++) {
		const double *l = load + (size_t)t * n->narcs;
		double most = 0;

		for (uint32_t a = 0; a < n->narcs; a++)
			if (!isinf(n->bw[a]) && l[a] / n->bw[a] > most)
				most = l[a] / n->bw[a];
		for (uint32_t c = 0; c < n->nsets; c++) {
			double sum = 0;

			for (uint32_t i = n->set_off[c]; i < n->set_off[c + 1]; i++)
				sum += l[n->set_arc[i]];
			if (sum / n->set_bw[c] > most)
				most = sum / n->set_bw[c];
		}
		total += most;
	}
	return total;
}

/* The price of both: the schedule's own loads and the GPU sends' chains. */
static void price(const struct tracer *tr, const struct schedule *s, struct fabric_gpu_info *info)
{
	const struct fluid_net *n = tr->n;
	size_t cells = (size_t)s->nsteps * n->narcs;

	info->priced = false;
	if (cells > (64u << 20) / sizeof(double))
		return; /* over 64 MiB of loads: said unpriced */
	double *mine = xcalloc(cells + 1, sizeof(double)),
	       *xml = xcalloc(cells + 1, sizeof(double));

	for (uint32_t t = 0; t < s->nsteps; t++)
		for (size_t k = s->step_start[t]; k < s->step_start[t + 1]; k++) {
			uint32_t arc = arc_of(tr, &s->xfers[k]);

			mine[(size_t)t * n->narcs + arc] += sched_frac(s->xfers[k].length);
		}
	for (size_t i = 0; i < tr->nsends; i++)
		for (uint32_t h = tr->sends[i].hop; h != NONE; h = tr->hops[h].parent)
			xml[(size_t)tr->hops[h].step * n->narcs + tr->hops[h].arc] +=
			    sched_frac(tr->sends[i].hi - tr->sends[i].lo);
	info->schedule_s_per_gb = steps_time(n, mine, s->nsteps);
	info->program_s_per_gb = steps_time(n, xml, s->nsteps);
	info->priced = true;
	free(mine);
	free(xml);
}

/* Each send's route (tr->sends in order, as out has them): its chain's
 * arcs, which the runtime's hops follow. */
static void routes(const struct tracer *tr, struct fabric_gpu_info *info)
{
	size_t total = 0;

	for (size_t i = 0; i < tr->nsends; i++)
		for (uint32_t h = tr->sends[i].hop; h != NONE; h = tr->hops[h].parent)
			total++;
	info->route_off = xmalloc((tr->nsends + 1) * sizeof(uint32_t));
	info->route_arc = xmalloc((total + 1) * sizeof(uint32_t));
	total = 0;
	for (size_t i = 0; i < tr->nsends; i++) {
		info->route_off[i] = (uint32_t)total;
		for (uint32_t h = tr->sends[i].hop; h != NONE; h = tr->hops[h].parent)
			info->route_arc[total++] = tr->hops[h].arc;
	}
	info->route_off[tr->nsends] = (uint32_t)total;
}

void fabric_gpu_info_free(struct fabric_gpu_info *info)
{
	free(info->route_off);
	free(info->route_arc);
	info->route_off = info->route_arc = NULL;
}

static void tracer_free(struct tracer *tr)
{
	for (size_t k = 0; tr->held && k < (size_t)tr->n->nverts * tr->n->nverts; k++)
		free(tr->held[k].v);
	for (size_t k = 0; tr->got && k < (size_t)tr->nranks * tr->n->nverts; k++)
		free(tr->got[k].v);
	free(tr->held);
	free(tr->got);
	free(tr->load);
	free(tr->best);
	free(tr->via);
	free(tr->rank);
	free(tr->vert);
	free(tr->server);
	free(tr->out_off);
	free(tr->out_arc);
	free(tr->in_off);
	free(tr->in_arc);
	free(tr->hops);
	free(tr->pend);
	free(tr->sends);
}

/* The server of each vertex (its name's host before the '/': model W's
 * s0/gpu0; a rail, with none, is outside every server), each rank's
 * vertex, the in-arcs, and the forwarding's scratch. */
static void tracer_servers(struct tracer *tr)
{
	const struct fluid_net *n = tr->n;

	tr->server = xmalloc(((size_t)n->nverts + 1) * sizeof(uint32_t));
	for (uint32_t v = 0; v < n->nverts; v++) {
		const char *a = fluid_vertex_name(n, v), *slash = strchr(a, '/');

		tr->server[v] = NONE;
		for (uint32_t u = 0; slash && u <= v && tr->server[v] == NONE; u++) {
			const char *b = fluid_vertex_name(n, u);

			if (strncmp(a, b, (size_t)(slash - a) + 1) == 0)
				tr->server[v] = u; /* the first vertex of its server */
		}
	}
	tr->vert = xmalloc(((size_t)tr->nranks + 1) * sizeof(uint32_t));
	for (uint32_t v = 0; v < n->nverts; v++)
		if (tr->rank[v] != NONE)
			tr->vert[tr->rank[v]] = v;
	tr->in_off = xcalloc((size_t)n->nverts + 2, sizeof(uint32_t));
	tr->in_arc = xmalloc(((size_t)n->narcs + 1) * sizeof(uint32_t));
	for (uint32_t a = 0; a < n->narcs; a++)
		tr->in_off[n->head[a] + 2]++;
	for (uint32_t v = 0; v < n->nverts; v++)
		tr->in_off[v + 2] += tr->in_off[v + 1];
	for (uint32_t a = 0; a < n->narcs; a++)
		tr->in_arc[tr->in_off[n->head[a] + 1]++] = a;
	tr->got = xcalloc((size_t)tr->nranks * n->nverts + 1, sizeof(struct got));
	tr->load = xcalloc((size_t)n->narcs + 1, sizeof(double));
	tr->best = xmalloc(((size_t)n->nverts + 1) * sizeof(double));
	tr->via = xmalloc(((size_t)n->nverts + 1) * sizeof(uint32_t));
}

static void add_send(struct schedule *out, const struct gsend *g, uint32_t ag_first)
{
	struct xfer x = {.src = (uint16_t)g->src,
			 .dst = (uint16_t)g->dst,
			 .block = g->block,
			 .offset = g->lo,
			 .length = g->hi - g->lo,
			 .lane = SCHED_NO_LANE,
			 .flags =
			     xfer_flags(DIR_NONE, g->step < ag_first ? XFER_REDUCE : XFER_COPY)};

	sched_add(out, &x);
}

int fabric_gpu_schedule(const struct fluid_net *n, const struct schedule *s, uint32_t ag_first,
			bool forward, struct schedule *out, struct fabric_gpu_info *info,
			struct ofc_error *err)
{
	struct tracer tr = {.n = n, .forward = forward};
	enum sched_collective c = s->collective;
	int rc = -1;

	memset(info, 0, sizeof(*info));
	memset(out, 0, sizeof(*out));
	if (c != SCHED_ALLGATHER && c != SCHED_REDUCE_SCATTER && c != SCHED_ALLREDUCE)
		return ofc_error_set(err, OFC_E_INPUT,
				     "MSCCL programs of a server fabric are allgather, "
				     "reduce-scatter and allreduce, not %s",
				     sched_collective_name(c));
	if (s->nodes != n->nverts || (uint64_t)n->nverts * n->nverts > (1u << 24))
		return ofc_error_set(err, OFC_E_INPUT,
				     "the schedule is not on this fabric's %u vertices (at most "
				     "4096)",
				     n->nverts);
	tr.rank = xmalloc(((size_t)n->nverts + 1) * sizeof(uint32_t));
	for (uint32_t v = 0; v < n->nverts; v++)
		tr.rank[v] = (n->kind[v] & FLUID_TERMINAL) ? tr.nranks++ : NONE;
	tr.out_off = xcalloc((size_t)n->nverts + 2, sizeof(uint32_t));
	tr.out_arc = xmalloc(((size_t)n->narcs + 1) * sizeof(uint32_t));
	for (uint32_t a = 0; a < n->narcs; a++)
		tr.out_off[n->tail[a] + 2]++;
	for (uint32_t v = 0; v < n->nverts; v++)
		tr.out_off[v + 2] += tr.out_off[v + 1];
	for (uint32_t a = 0; a < n->narcs; a++) /* in arc order: a port's rank */
		tr.out_arc[tr.out_off[n->tail[a] + 1]++] = a;
	tr.held = xcalloc((size_t)n->nverts * n->nverts + 1, sizeof(struct held));
	tracer_servers(&tr);
	if (ag_first > s->nsteps || c != SCHED_ALLREDUCE)
		ag_first = c == SCHED_ALLGATHER ? 0 : s->nsteps;
	/* the reduction (steps before ag_first), then the allgather */
	if (trace_phase(&tr, s, 0, ag_first, true, err) < 0 ||
	    trace_phase(&tr, s, ag_first, s->nsteps, false, err) < 0)
		goto out;
	for (size_t i = 0; i < tr.nsends; i++) {
		struct gsend *g = &tr.sends[i];

		g->block = tr.rank[g->block];
		if (g->step < ag_first) { /* turned round: a reduction into g->src */
			uint32_t d = g->dst;

			g->dst = g->src;
			g->src = d;
		}
	}
	qsort(tr.sends, tr.nsends, sizeof(*tr.sends), cmp_send);
	sched_init(out, c, s->algorithm, tr.nranks);
	snprintf(out->topology, sizeof(out->topology), "%s", s->topology);
	out->root = s->root;
	/* without forwards the schedule's steps (empty ones too), else each
	 * step in two that has sends */
	for (uint32_t t = 0, i = 0; !tr.forwarded && t < s->nsteps; t++) {
		sched_step(out);
		for (; i < tr.nsends && tr.sends[i].step == t; i++)
			add_send(out, &tr.sends[i], ag_first);
	}
	for (size_t i = 0; tr.forwarded && i < tr.nsends; i++) {
		if (i == 0 || tr.sends[i].slot != tr.sends[i - 1].slot)
			sched_step(out);
		add_send(out, &tr.sends[i], ag_first);
	}
	routes(&tr, info);
	info->gpus = tr.nranks;
	info->transfers = out->nxfers;
	info->forwarded = tr.forwarded;
	price(&tr, s, info);
	rc = 0;
out:
	tracer_free(&tr);
	return rc;
}
