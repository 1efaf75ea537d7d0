/* What the switches hold, read as host-level arcs: ingress port of (u, j)
 * connected to egress port of (v, k) is an arc u -> v, through the
 * wiring. The renumbering searches over them (relabel_target.c); ofcd's
 * views show them as the graph in place (fabric_current_graph). Apart
 * from the search so that reading them links no engine. */
#include "controller/fabric/internal.h"
#include "drivers/drivers.h"

#include <stdlib.h>
#include <string.h>

#define NONE UINT32_MAX

/* switch port -> wiring index, per switch. */
static uint32_t **index_switch_ports(const struct fabric *f)
{
	uint32_t **by = xcalloc((size_t)f->nswitches + 1, sizeof(*by));

	for (uint32_t s = 0; s < f->nswitches; s++) {
		by[s] = xmalloc(((size_t)f->switches[s].ports + 2) * sizeof(uint32_t));
		memset(by[s], 0xff, ((size_t)f->switches[s].ports + 2) * sizeof(uint32_t));
	}
	for (uint32_t i = 0; i < f->nwiring; i++)
		by[f->wiring[i].sw][f->wiring[i].sw_port] = i;
	return by;
}

void current_read(const struct fabric *f, const struct device_state *const *actual, uint32_t d,
		  struct current *cur)
{
	uint32_t n = f->nhosts, **by = index_switch_ports(f), cap = 0;

	for (uint32_t s = 0; s < f->nswitches; s++)
		cap += actual[s] ? actual[s]->nxc : 0;
	cur->tails = xmalloc(((size_t)cap + 1) * sizeof(uint32_t));
	cur->heads = xmalloc(((size_t)cap + 1) * sizeof(uint32_t));
	cur->m = 0;
	cur->prefer = (struct port_map){.n = n, .d = d};
	cur->prefer.to = xmalloc(((size_t)n * d + 1) * sizeof(uint32_t));
	memset(cur->prefer.to, 0xff, ((size_t)n * d + 1) * sizeof(uint32_t));
	for (uint32_t s = 0; s < f->nswitches; s++)
		for (uint32_t k = 0; actual[s] && k < actual[s]->nxc; k++) {
			const struct xconn *x = &actual[s]->xc[k];
			uint32_t ports = f->switches[s].ports;

			if (x->in < 1 || x->in > ports || x->out < 1 || x->out > ports)
				continue;
			uint32_t ia = by[s][x->in], ib = by[s][x->out];
			if (ia == NONE || ib == NONE)
				continue;
			const struct attachment *a = &f->wiring[ia], *b = &f->wiring[ib];
			cur->tails[cur->m] = a->host;
			cur->heads[cur->m++] = b->host;
			if (a->host_port == b->host_port && a->host_port < d)
				cur->prefer.to[(size_t)a->host_port * n + a->host] = b->host;
		}
	for (uint32_t s = 0; s < f->nswitches; s++)
		free(by[s]);
	free(by);
}

void current_free(struct current *cur)
{
	free(cur->tails);
	free(cur->heads);
	port_map_free(&cur->prefer);
	memset(cur, 0, sizeof(*cur));
}

struct graph *fabric_current_graph(const struct fabric *f, const struct device_state *const *actual)
{
	struct current cur;

	current_read(f, actual, f->ports.d, &cur);
	struct graph *g = graph_from_arcs(f->nhosts, cur.m, cur.tails, cur.heads, "in place");
	current_free(&cur);
	return g;
}
