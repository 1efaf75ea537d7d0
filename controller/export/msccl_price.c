/* The price of an MSCCL program on a server fabric from its own sends
 * (export.h, msccl_program_price), not from the schedule it was made
 * from: the runtime does not run the schedule's steps in lock step, each
 * thread block goes on as soon as what it waits for has arrived, so what
 * bounds the program is its longest chain of dependent sends and the
 * bytes on its busiest link.
 *
 * - Bytes: a send moves its chunks as the XML has them, its bounds
 *   rounded at Q chunks a block as msccl.c rounds them (a send rounded
 *   away is not in the program).
 * - Dependencies: a send of chunks of a block from a GPU waits for every
 *   send into that GPU, at an earlier step, of any of those chunks (the
 *   copy it forwards, or every partial sum folded into what it reduces
 *   on). The program's own order inside a thread block is not counted:
 *   the chain is a floor.
 * - A send costs alpha plus its bytes over the slowest arc of its route
 *   (the runtime pipelines it through the hops); the busiest arc or
 *   capacity set carries every send's bytes routed over it. */
#include "controller/export/export.h"

#include <math.h>
#include <stdlib.h>

/* At most 64 Mi chunk states (512 MiB of doubles and counts) */
#define MAX_CELLS (64ull << 20)

static double slowest(const struct fluid_net *n, const struct fabric_gpu_info *info, size_t i)
{
	double bw = INFINITY;

	for (uint32_t j = info->route_off[i]; j < info->route_off[i + 1]; j++)
		if (n->bw[info->route_arc[j]] < bw)
			bw = n->bw[info->route_arc[j]];
	return bw;
}

/* The busiest arc or capacity set of load (GB per arc). */
static void busiest(const struct fluid_net *n, const double *load, struct msccl_price *p)
{
	for (uint32_t a = 0; a < n->narcs; a++)
		if (!isinf(n->bw[a]) && load[a] / n->bw[a] > p->busiest_s) {
			p->busiest_s = load[a] / n->bw[a];
			p->busiest_gb = load[a];
			p->busiest = a;
		}
	for (uint32_t c = 0; c < n->nsets; c++) {
		double sum = 0;

		for (uint32_t i = n->set_off[c]; i < n->set_off[c + 1]; i++)
			sum += load[n->set_arc[i]];
		if (sum / n->set_bw[c] > p->busiest_s) {
			p->busiest_s = sum / n->set_bw[c];
			p->busiest_gb = sum;
			p->busiest = c;
			p->busiest_set = true;
		}
	}
}

int msccl_program_price(const struct fluid_net *n, const struct schedule *g,
			const struct fabric_gpu_info *info, uint32_t Q, double alpha,
			double block_gb, struct msccl_price *p, struct ofc_error *err)
{
	uint64_t cells = (uint64_t)g->nodes * g->nodes * Q;

	*p = (struct msccl_price){0};
	if (!info->route_off || Q == 0 || cells > MAX_CELLS)
		return ofc_error_set(err, OFC_E_INPUT,
				     "the program cannot be priced (%u ranks at %u chunks a block, "
				     "routes %s)",
				     g->nodes, Q, info->route_off ? "known" : "unknown");
	/* per (rank, block, chunk): when its last send into the rank ends,
	 * and how many sends led there */
	double *ready = xcalloc(cells + 1, sizeof(double)), *load = xcalloc(n->narcs + 1, 8);
	uint32_t *depth = xcalloc(cells + 1, sizeof(uint32_t));
	double *end = xmalloc(((size_t)g->nxfers + 1) * sizeof(double));
	uint32_t *len = xmalloc(((size_t)g->nxfers + 1) * sizeof(uint32_t));

	for (uint32_t t = 0; t < g->nsteps; t++) {
		for (size_t i = g->step_start[t]; i < g->step_start[t + 1]; i++) {
			const struct xfer *x = &g->xfers[i];
			uint32_t c0 = msccl_chunk_bound(x->offset, Q),
				 c1 = msccl_chunk_bound((uint64_t)x->offset + x->length, Q);
			size_t at = ((size_t)x->src * g->nodes + x->block) * Q;
			double start = 0, gb = (double)(c1 - c0) / Q * block_gb, bw;
			uint32_t d = 0;

			end[i] = -1;
			if (c1 <= c0 || c1 > Q)
				continue; /* rounded away: not in the program */
			for (uint32_t c = c0; c < c1; c++) {
				start = ready[at + c] > start ? ready[at + c] : start;
				d = depth[at + c] > d ? depth[at + c] : d;
			}
			bw = slowest(n, info, i);
			end[i] = start + alpha + (isinf(bw) ? 0 : gb / bw);
			len[i] = d + 1;
			for (uint32_t j = info->route_off[i]; j < info->route_off[i + 1]; j++)
				load[info->route_arc[j]] += gb;
		}
		/* what this step's sends delivered, for the steps after it */
		for (size_t i = g->step_start[t]; i < g->step_start[t + 1]; i++) {
			const struct xfer *x = &g->xfers[i];
			uint32_t c0 = msccl_chunk_bound(x->offset, Q),
				 c1 = msccl_chunk_bound((uint64_t)x->offset + x->length, Q);
			size_t at = ((size_t)x->dst * g->nodes + x->block) * Q;

			if (end[i] < 0)
				continue;
			if (end[i] > p->critical_s) {
				p->critical_s = end[i];
				p->critical_sends = len[i];
			}
			for (uint32_t c = c0; c < c1; c++)
				if (end[i] > ready[at + c]) {
					ready[at + c] = end[i];
					depth[at + c] = len[i];
				}
		}
	}
	busiest(n, load, p);
	p->price_s = p->critical_s > p->busiest_s ? p->critical_s : p->busiest_s;
	free(ready);
	free(load);
	free(depth);
	free(end);
	free(len);
	return 0;
}

static double gap(double a, double b)
{
	return b > 0 ? 100 * (a / b - 1) : NAN;
}

void msccl_price_write(FILE *out, const struct fluid_net *n, const struct msccl_price *p,
		       double planned, double optimum)
{
	const char *what;

	if (isnan(p->price_s) || n->narcs == 0) {
		fprintf(out,
			"ofc schedule: the program's own price: not priced (past %llu chunk "
			"states)\n",
			(unsigned long long)MAX_CELLS);
		return;
	}
	what = p->busiest_set ? fluid_set_name(n, p->busiest)
			      : fluid_vertex_name(n, n->tail[p->busiest]);
	fprintf(out,
		"ofc schedule: the program's own price: %.6g s (its critical path %u sends, "
		"%.6g s; its busiest %s %s%s%s, %.6g GB, %.6g s); planned %.6g s: %+.2f%%",
		p->price_s, p->critical_sends, p->critical_s,
		p->busiest_set ? "capacity set" : "arc", what, p->busiest_set ? "" : " -> ",
		p->busiest_set ? "" : fluid_vertex_name(n, n->head[p->busiest]), p->busiest_gb,
		p->busiest_s, planned, gap(p->price_s, planned));
	if (optimum > 0)
		fprintf(out, "; optimum %.6g s: %+.2f%%", optimum, gap(p->price_s, optimum));
	fprintf(out, "\n");
}
