/* Relabelling a fabric's target: the topology is wanted up to the
 * numbering of its nodes, so pick the host for every node that keeps the
 * most cross-connects the switches already hold (topo_relabel on the
 * host-level graph the switches realise), then the port permutations that
 * keep them on their ports (topo_ports_prefer), then the circuits again. */
#include "controller/fabric/fabric.h"

#include <stdlib.h>
#include <string.h>

#define NONE UINT32_MAX

struct current {
	uint32_t *tails, *heads, m;
	struct port_map prefer; /* port j of u -> v where the switch has it */
};

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

/* The host-level arcs the switches hold: ingress port of (u, j) connected
 * to egress port of (v, k) is an arc u -> v, and a preference for port j
 * when k == j (circuits always join equal port numbers). */
static void read_current(const struct fabric *f, const struct device_state *const *actual,
			 uint32_t d, struct current *cur)
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

struct graph *fabric_current_graph(const struct fabric *f, const struct device_state *const *actual)
{
	struct current cur;

	read_current(f, actual, f->ports.d, &cur);
	struct graph *g = graph_from_arcs(f->nhosts, cur.m, cur.tails, cur.heads, "in place");
	free(cur.tails);
	free(cur.heads);
	port_map_free(&cur.prefer);
	return g;
}

/* f->graph with node u renamed map[u]. */
static struct graph *renamed(const struct graph *g, const uint32_t *map)
{
	uint32_t *tails = graph_arc_tails(g), *heads = xmalloc(((size_t)g->m + 1) * 4);

	for (uint32_t a = 0; a < g->m; a++) {
		tails[a] = map[tails[a]];
		heads[a] = map[g->adj[a]];
	}
	struct graph *r = graph_from_arcs(g->n, g->m, tails, heads, g->spec);
	r->vertex_transitive = g->vertex_transitive;
	free(tails);
	free(heads);
	return r;
}

/* What a search found, for the plan to print: over its n nodes. */
static void report(const struct relabel_result *r, uint32_t n, struct fabric_relabel *rep)
{
	*rep = (struct fabric_relabel){.arcs = r->arcs,
				       .kept_identity = r->kept_identity,
				       .kept = r->kept,
				       .complete = r->complete,
				       .rounds = r->rounds,
				       .seconds = r->seconds};
	for (uint32_t u = 0; u < n; u++)
		rep->moved_nodes += r->map[u] != u;
}

int fabric_relabel(struct fabric *f, const struct device_state *const *actual,
		   const struct relabel_opts *o, struct fabric_relabel *rep, struct ofc_error *err)
{
	struct current cur;
	struct relabel_result r;
	struct port_map pm;

	memset(rep, 0, sizeof(*rep));
	if (!f->validated || !f->graph || !f->circuits || f->graph->n != f->nhosts)
		return ofc_error_set(err, OFC_E_INPUT,
				     "fabric %s has no switched target topology to relabel",
				     f->name);
	read_current(f, actual, f->ports.d, &cur);
	struct graph *now = graph_from_arcs(f->nhosts, cur.m, cur.tails, cur.heads, "current");
	int rc = topo_relabel(now, f->graph, o, &r, err);
	graph_free(now);
	if (rc == 0) {
		struct graph *g = renamed(f->graph, r.map);

		rc = topo_ports_prefer(g, &cur.prefer, &pm, err);
		if (rc == 0) {
			graph_free(f->graph);
			f->graph = g;
			port_map_free(&f->ports);
			f->ports = pm;
			rc = fabric_circuits(f, err);
		} else {
			graph_free(g);
		}
		report(&r, f->nhosts, rep);
		relabel_result_free(&r);
	}
	free(cur.tails);
	free(cur.heads);
	port_map_free(&cur.prefer);
	return rc;
}

int partition_relabel(const struct fabric *f, const struct partition *p, const struct graph *topo,
		      const struct device_state *const *actual, const struct relabel_opts *o,
		      struct circuit **out, uint32_t *nout, struct fabric_relabel *rep,
		      struct ofc_error *err)
{
	struct graph *g;
	struct current cur;
	struct relabel_result r;
	uint32_t nm = p->nmembers, *member = xmalloc(((size_t)f->nhosts + 1) * sizeof(uint32_t));
	int rc;

	memset(rep, 0, sizeof(*rep));
	*out = NULL;
	*nout = 0;
	if (topo && topo->n != nm) {
		free(member);
		return ofc_error_set(err, OFC_E_INPUT,
				     "partition '%s': topology %s has %u nodes for %u members",
				     p->name, topo->spec, topo->n, nm);
	}
	if (topo) {
		uint32_t *tails = graph_arc_tails(topo);

		g = graph_from_arcs(topo->n, topo->m, tails, topo->adj, topo->spec);
		g->vertex_transitive = topo->vertex_transitive;
		free(tails);
	} else if (partition_graph(f, p, &g, err) < 0) {
		free(member);
		return -1;
	}
	uint32_t d = 0;
	for (uint32_t u = 0; u < g->n; u++)
		d = graph_outdeg(g, u) > d ? graph_outdeg(g, u) : d;
	/* The links between p's members, in member numbers: another
	 * partition's circuits are none of its business. */
	memset(member, 0xff, ((size_t)f->nhosts + 1) * sizeof(uint32_t));
	for (uint32_t m = 0; m < nm; m++)
		member[p->member_host[m]] = m;
	read_current(f, actual, d, &cur);
	uint32_t k = 0;
	for (uint32_t a = 0; a < cur.m; a++)
		if (member[cur.tails[a]] != NONE && member[cur.heads[a]] != NONE) {
			cur.tails[k] = member[cur.tails[a]];
			cur.heads[k++] = member[cur.heads[a]];
		}
	struct port_map prefer = {.n = nm, .d = d};
	prefer.to = xmalloc(((size_t)nm * d + 1) * sizeof(uint32_t));
	for (uint32_t j = 0; j < d; j++)
		for (uint32_t m = 0; m < nm; m++) {
			uint32_t v = cur.prefer.to[(size_t)j * f->nhosts + p->member_host[m]];

			prefer.to[(size_t)j * nm + m] = v == NONE ? NONE : member[v];
		}
	struct graph *now = graph_from_arcs(nm, k, cur.tails, cur.heads, "current");
	rc = topo_relabel(now, g, o, &r, err);
	graph_free(now);
	if (rc == 0) {
		struct graph *rg = renamed(g, r.map);
		struct port_map pm;

		rc = topo_ports_prefer(rg, &prefer, &pm, err);
		if (rc == 0) {
			rc = partition_circuits_ports(f, p, &pm, out, nout, err);
			port_map_free(&pm);
		}
		graph_free(rg);
		report(&r, nm, rep);
		relabel_result_free(&r);
	}
	graph_free(g);
	free(member);
	free(cur.tails);
	free(cur.heads);
	port_map_free(&cur.prefer);
	port_map_free(&prefer);
	return rc;
}
