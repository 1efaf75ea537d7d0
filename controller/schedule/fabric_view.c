/* A topology on a fabric's wiring: the NIC port each arc of the graph
 * leaves by, the graph in port order (what the verifier checks transfers
 * against), and the links a schedule uses with the circuits that carry
 * them. */
#include "controller/schedule/internal.h"

#include <stdlib.h>
#include <string.h>

bool fabric_view_init(const struct fabric *f, const struct graph *g, struct fabric_view *v)
{
	memset(v, 0, sizeof(*v));
	if (!f || !f->ports.to || f->ports.n != g->n)
		return false;
	uint32_t n = g->n, d = f->ports.d;
	uint32_t *tails = xmalloc((size_t)n * d * sizeof(uint32_t));
	uint32_t *heads = xmalloc((size_t)n * d * sizeof(uint32_t));
	uint8_t *used = xcalloc((size_t)n * d, 1);

	v->arc2port = xmalloc(((size_t)g->m + 1) * sizeof(uint32_t));
	for (uint32_t u = 0; u < n; u++)
		for (uint32_t j = 0; j < d; j++) {
			tails[(size_t)u * d + j] = u;
			heads[(size_t)u * d + j] = f->ports.to[(size_t)j * n + u];
		}
	for (uint32_t u = 0; u < n; u++)
		for (uint32_t a = g->off[u]; a < g->off[u + 1]; a++) {
			v->arc2port[a] = UINT32_MAX;
			for (uint32_t j = 0; j < d; j++)
				if (!used[(size_t)u * d + j] &&
				    heads[(size_t)u * d + j] == g->adj[a]) {
					used[(size_t)u * d + j] = 1;
					v->arc2port[a] = j;
					break;
				}
		}
	v->pg = graph_from_arcs(n, n * d, tails, heads, g->spec);
	v->circuit = xmalloc((size_t)n * d * sizeof(int32_t));
	for (size_t i = 0; i < (size_t)n * d; i++)
		v->circuit[i] = -1;
	for (uint32_t k = 0; k < f->ncircuits; k++) {
		const struct circuit *ci = &f->circuits[k];

		if (ci->src_host < n && ci->src_port < d)
			v->circuit[(size_t)ci->src_host * d + ci->src_port] = (int32_t)k;
	}
	free(tails);
	free(heads);
	free(used);
	return true;
}

void fabric_view_free(struct fabric_view *v)
{
	free(v->arc2port);
	graph_free(v->pg);
	free(v->circuit);
	memset(v, 0, sizeof(*v));
}

void fabric_view_to_nic(const struct fabric_view *v, const struct graph *g, struct schedule *s)
{
	for (size_t i = 0; i < s->nxfers; i++) {
		struct xfer *x = &s->xfers[i];

		if (x->lane != SCHED_NO_LANE)
			x->lane = (uint16_t)v->arc2port[g->off[x->src] + x->lane];
	}
}

uint32_t fabric_view_links(const struct fabric_view *v, const struct fabric *f,
			   const struct schedule *s, struct schedule_link **links)
{
	uint32_t n = f->ports.n, d = f->ports.d, nlinks = 0;
	uint8_t *used = xcalloc((size_t)n * d, 1);

	for (size_t i = 0; i < s->nxfers; i++)
		if (s->xfers[i].lane < d)
			used[(size_t)s->xfers[i].src * d + s->xfers[i].lane] = 1;
	*links = xcalloc((size_t)n * d + 1, sizeof(**links));
	for (uint32_t u = 0; u < n; u++)
		for (uint32_t j = 0; j < d; j++)
			if (used[(size_t)u * d + j])
				(*links)[nlinks++] =
				    (struct schedule_link){u, j, f->ports.to[(size_t)j * n + u],
							   v->circuit[(size_t)u * d + j]};
	free(used);
	return nlinks;
}
