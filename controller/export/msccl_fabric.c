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
 * - What it approximates: a relay that copies (host memory sending one
 *   part to several GPUs) becomes one send per receiving GPU, each over
 *   the hops from the source again. Priced here on the fabric: each
 *   GPU send loads every hop of its chain at that hop's step, against the
 *   schedule's own loads. */
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
	size_t order;
};

struct tracer {
	const struct fluid_net *n;
	uint32_t *rank; /* vertex -> GPU rank, NONE for relays */
	uint32_t nranks;
	uint32_t *out_off, *out_arc; /* CSR: a vertex's ports in arc order */
	struct held *held;	     /* (vertex, block) */
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

/* The step's deliveries: into a relay, kept; into a GPU, a send. */
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
		g.dst = tr->rank[v];
		g.order = tr->nsends;
		GROW(tr->sends, tr->cap_sends, tr->nsends + 1);
		tr->sends[tr->nsends++] = g;
	}
	tr->npend = 0;
}

/* Steps [t0, t1) of s in copy form (reverse: backwards, each transfer
 * turned round), their GPU sends appended to tr->sends. */
static int trace_phase(struct tracer *tr, const struct schedule *s, uint32_t t0, uint32_t t1,
		       bool reverse, struct ofc_error *err)
{
	const struct fluid_net *n = tr->n;

	for (size_t k = 0; k < (size_t)n->nverts * n->nverts; k++)
		tr->held[k].n = 0;
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

	if (x->step != y->step)
		return x->step < y->step ? -1 : 1;
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
	free(tr->held);
	free(tr->rank);
	free(tr->out_off);
	free(tr->out_arc);
	free(tr->hops);
	free(tr->pend);
	free(tr->sends);
}

int fabric_gpu_schedule(const struct fluid_net *n, const struct schedule *s, uint32_t ag_first,
			struct schedule *out, struct fabric_gpu_info *info, struct ofc_error *err)
{
	struct tracer tr = {.n = n};
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
	for (uint32_t t = 0, i = 0; t < s->nsteps; t++) {
		sched_step(out);
		for (; i < tr.nsends && tr.sends[i].step == t; i++) {
			const struct gsend *g = &tr.sends[i];
			struct xfer x = {
			    .src = (uint16_t)g->src,
			    .dst = (uint16_t)g->dst,
			    .block = g->block,
			    .offset = g->lo,
			    .length = g->hi - g->lo,
			    .lane = SCHED_NO_LANE,
			    .flags = xfer_flags(DIR_NONE, t < ag_first ? XFER_REDUCE : XFER_COPY)};

			sched_add(out, &x);
		}
	}
	routes(&tr, info);
	info->gpus = tr.nranks;
	info->transfers = out->nxfers;
	price(&tr, s, info);
	rc = 0;
out:
	tracer_free(&tr);
	return rc;
}
