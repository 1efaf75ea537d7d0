/* Relabelling a fabric's target: the topology is wanted up to the
 * numbering of its nodes, so pick the host for every node that keeps the
 * most cross-connects the switches already hold (topo_relabel on the
 * host-level graph the switches realise), then the port permutations that
 * keep them on their ports (topo_ports_prefer), then the circuits again.
 *
 * The search counts links between hosts; a plan counts cross-connects,
 * which also need the link on the port it uses now, and the ports cannot
 * always follow (208 links kept, 8 cross-connects). So the
 * numbering found is a candidate, with the config's numbering on the
 * preferred ports and the config's circuits as they are; the one whose
 * circuits the switches hold most of wins, the config's on a tie. A
 * relabelling never plans more operations than the config's numbering. */
#include "controller/fabric/internal.h"
#include "drivers/drivers.h"

#include <stdlib.h>
#include <string.h>

#define NONE UINT32_MAX

/* g with node u renamed map[u] (map NULL: a copy). */
static struct graph *renamed(const struct graph *g, const uint32_t *map)
{
	uint32_t *tails = graph_arc_tails(g), *heads = xmalloc(((size_t)g->m + 1) * 4);

	for (uint32_t a = 0; a < g->m; a++) {
		tails[a] = map ? map[tails[a]] : tails[a];
		heads[a] = map ? map[g->adj[a]] : g->adj[a];
	}
	struct graph *r = graph_from_arcs(g->n, g->m, tails, heads, g->spec);
	r->vertex_transitive = g->vertex_transitive;
	free(tails);
	free(heads);
	return r;
}

/* The cross-connects the switches hold, sorted, to count how many of a
 * numbering's circuits stay. */
struct held {
	uint32_t sw, in, out;
};

struct in_place {
	struct held *xc;
	uint32_t n;
};

static int cmp_held(const void *a, const void *b)
{
	const struct held *x = a, *y = b;

	if (x->sw != y->sw)
		return x->sw < y->sw ? -1 : 1;
	if (x->in != y->in)
		return x->in < y->in ? -1 : 1;
	return x->out < y->out ? -1 : x->out > y->out;
}

static void in_place_read(const struct fabric *f, const struct device_state *const *actual,
			  struct in_place *ip)
{
	size_t cap = 0;

	for (uint32_t s = 0; s < f->nswitches; s++)
		cap += actual[s] ? actual[s]->nxc : 0;
	ip->xc = xmalloc((cap + 1) * sizeof(*ip->xc));
	ip->n = 0;
	for (uint32_t s = 0; s < f->nswitches; s++)
		for (uint32_t k = 0; actual[s] && k < actual[s]->nxc; k++)
			ip->xc[ip->n++] =
			    (struct held){s, actual[s]->xc[k].in, actual[s]->xc[k].out};
	qsort(ip->xc, ip->n, sizeof(*ip->xc), cmp_held);
}

static uint64_t in_place_count(const struct in_place *ip, const struct circuit *c, uint32_t n)
{
	uint64_t kept = 0;

	for (uint32_t i = 0; i < n; i++) {
		struct held k = {c[i].sw, c[i].in_port, c[i].out_port};

		kept += bsearch(&k, ip->xc, ip->n, sizeof(k), cmp_held) != NULL;
	}
	return kept;
}

/* One numbering of the target: its graph and ports, its circuits (the
 * fabric's or a partition's), how many of them are in place now, and how
 * many nodes it gives another host. */
struct numbering {
	struct graph *g;
	struct port_map pm;
	struct circuit *c;
	uint32_t nc;
	uint64_t kept;
	uint32_t moved;
};

static void numbering_free(struct numbering *nb)
{
	graph_free(nb->g);
	port_map_free(&nb->pm);
	free(nb->c);
	memset(nb, 0, sizeof(*nb));
}

/* b takes a's place when it keeps more cross-connects; a is freed or b is. */
static void keep_better(struct numbering *a, struct numbering *b)
{
	if (b->kept > a->kept) {
		numbering_free(a);
		*a = *b;
	} else {
		numbering_free(b);
	}
	memset(b, 0, sizeof(*b));
}

/* Target g renumbered by map (NULL: as numbered) on ports that keep what
 * prefer's ports carry now. */
static int numbering_ports(const struct graph *g, const uint32_t *map,
			   const struct port_map *prefer, struct numbering *nb,
			   struct ofc_error *err)
{
	memset(nb, 0, sizeof(*nb));
	nb->g = renamed(g, map);
	for (uint32_t u = 0; map && u < g->n; u++)
		nb->moved += map[u] != u;
	return topo_ports_prefer(nb->g, prefer, &nb->pm, err);
}

/* The fabric's circuits over numbering nb's graph and ports. */
static int fabric_numbering(const struct fabric *f, const struct in_place *ip, struct numbering *nb,
			    struct ofc_error *err)
{
	struct fabric t = *f; /* shallow: fabric_circuits reads the wiring */

	t.graph = nb->g;
	t.ports = nb->pm;
	t.circuits = NULL;
	t.ncircuits = 0;
	int rc = fabric_circuits(&t, err);
	nb->c = t.circuits;
	nb->nc = t.ncircuits;
	nb->kept = in_place_count(ip, nb->c, nb->nc);
	return rc;
}

/* What a search found and what was chosen, for the plan to print: over
 * the chosen numbering's circuits. */
static void report(const struct relabel_result *r, const struct numbering *best, uint64_t kept0,
		   struct fabric_relabel *rep)
{
	*rep = (struct fabric_relabel){.arcs = best->nc,
				       .kept_identity = kept0,
				       .kept = best->kept,
				       .kept_links = r->kept,
				       .moved_nodes = best->moved,
				       .changed = best->g != NULL,
				       .complete = best->kept == best->nc,
				       .optimal = r->optimal,
				       .deadline = r->deadline,
				       .rounds = r->rounds,
				       .seconds = r->seconds};
}

/* The search's numbering and the config's on preferred ports, against the
 * config's own circuits (*best on entry: its kept counted); *best ends as
 * the one that keeps the most. make_circuits fills a numbering's. */
static int choose(const struct graph *g, const struct relabel_result *r,
		  const struct port_map *prefer,
		  int (*make_circuits)(const void *ctx, struct numbering *, struct ofc_error *),
		  const void *ctx, struct numbering *best, struct ofc_error *err)
{
	for (int pass = 0; pass < 2; pass++) {
		struct numbering nb;
		int rc = numbering_ports(g, pass ? NULL : r->map, prefer, &nb, err);

		if (rc == 0)
			rc = make_circuits(ctx, &nb, err);
		if (rc < 0) {
			numbering_free(&nb);
			return -1;
		}
		keep_better(best, &nb);
	}
	return 0;
}

struct fabric_ctx {
	const struct fabric *f;
	const struct in_place *ip;
};

static int make_fabric_circuits(const void *ctx, struct numbering *nb, struct ofc_error *err)
{
	const struct fabric_ctx *c = ctx;

	return fabric_numbering(c->f, c->ip, nb, err);
}

int fabric_relabel(struct fabric *f, const struct device_state *const *actual,
		   const struct relabel_opts *o, struct fabric_relabel *rep, struct ofc_error *err)
{
	struct current cur;
	struct relabel_result r;
	struct in_place ip;

	memset(rep, 0, sizeof(*rep));
	if (!f->validated || !f->graph || !f->circuits || f->graph->n != f->nhosts)
		return ofc_error_set(err, OFC_E_INPUT,
				     "fabric %s has no switched target topology to relabel",
				     f->name);
	current_read(f, actual, f->ports.d, &cur);
	struct graph *now = graph_from_arcs(f->nhosts, cur.m, cur.tails, cur.heads, "current");
	int rc = topo_relabel(now, f->graph, o, &r, err);
	graph_free(now);
	if (rc == 0) {
		/* the config's circuits as they are (a copy, no graph): the floor */
		struct numbering best = {.nc = f->ncircuits};
		struct fabric_ctx ctx = {f, &ip};

		best.c = xmalloc(((size_t)f->ncircuits + 1) * sizeof(*best.c));
		memcpy(best.c, f->circuits, (size_t)f->ncircuits * sizeof(*best.c));
		in_place_read(f, actual, &ip);
		best.kept = in_place_count(&ip, best.c, best.nc);
		uint64_t kept0 = best.kept;
		rc = choose(f->graph, &r, &cur.prefer, make_fabric_circuits, &ctx, &best, err);
		if (rc == 0)
			report(&r, &best, kept0, rep);
		if (rc == 0 && best.g) {
			graph_free(f->graph);
			f->graph = best.g;
			port_map_free(&f->ports);
			f->ports = best.pm;
			free(f->circuits);
			f->circuits = best.c;
			f->ncircuits = best.nc;
		} else {
			numbering_free(&best);
		}
		free(ip.xc);
		relabel_result_free(&r);
	}
	current_free(&cur);
	return rc;
}

struct partition_ctx {
	const struct fabric *f;
	const struct partition *p;
	const struct in_place *ip;
};

static int make_partition_circuits(const void *ctx, struct numbering *nb, struct ofc_error *err)
{
	const struct partition_ctx *c = ctx;
	int rc = partition_circuits_ports(c->f, c->p, &nb->pm, &nb->c, &nb->nc, err);

	if (rc == 0)
		nb->kept = in_place_count(c->ip, nb->c, nb->nc);
	return rc;
}

/* p's topology (a copy of topo, else p's own), node i = member i. */
static int partition_topology(const struct fabric *f, const struct partition *p,
			      const struct graph *topo, struct graph **g, struct ofc_error *err)
{
	if (topo && topo->n != p->nmembers)
		return ofc_error_set(err, OFC_E_INPUT,
				     "partition '%s': topology %s has %u nodes for %u members",
				     p->name, topo->spec, topo->n, p->nmembers);
	if (topo) {
		*g = renamed(topo, NULL);
		return 0;
	}
	return partition_graph(f, p, g, err);
}

/* The links the switches hold between p's members, in member numbers
 * (another partition's circuits are none of its business), and the ports
 * they use. */
static struct graph *partition_current(const struct fabric *f, const struct partition *p,
				       const struct current *cur, uint32_t d,
				       struct port_map *prefer)
{
	uint32_t nm = p->nmembers, *member = xmalloc(((size_t)f->nhosts + 1) * sizeof(uint32_t));
	uint32_t *tails = xmalloc(((size_t)cur->m + 1) * sizeof(uint32_t));
	uint32_t *heads = xmalloc(((size_t)cur->m + 1) * sizeof(uint32_t)), k = 0;

	memset(member, 0xff, ((size_t)f->nhosts + 1) * sizeof(uint32_t));
	for (uint32_t m = 0; m < nm; m++)
		member[p->member_host[m]] = m;
	for (uint32_t a = 0; a < cur->m; a++)
		if (member[cur->tails[a]] != NONE && member[cur->heads[a]] != NONE) {
			tails[k] = member[cur->tails[a]];
			heads[k++] = member[cur->heads[a]];
		}
	*prefer = (struct port_map){.n = nm, .d = d};
	prefer->to = xmalloc(((size_t)nm * d + 1) * sizeof(uint32_t));
	for (uint32_t j = 0; j < d; j++)
		for (uint32_t m = 0; m < nm; m++) {
			uint32_t v = cur->prefer.to[(size_t)j * f->nhosts + p->member_host[m]];

			prefer->to[(size_t)j * nm + m] = v == NONE ? NONE : member[v];
		}
	struct graph *now = graph_from_arcs(nm, k, tails, heads, "current");
	free(member);
	free(tails);
	free(heads);
	return now;
}

int partition_relabel(const struct fabric *f, const struct partition *p, const struct graph *topo,
		      const struct device_state *const *actual, const struct relabel_opts *o,
		      struct circuit **out, uint32_t *nout, struct fabric_relabel *rep,
		      struct ofc_error *err)
{
	struct graph *g;
	struct current cur;
	struct relabel_result r;
	struct port_map prefer;
	struct in_place ip;
	struct numbering best = {0};

	memset(rep, 0, sizeof(*rep));
	*out = NULL;
	*nout = 0;
	if (partition_topology(f, p, topo, &g, err) < 0)
		return -1;
	uint32_t d = 0;
	for (uint32_t u = 0; u < g->n; u++)
		d = graph_outdeg(g, u) > d ? graph_outdeg(g, u) : d;
	current_read(f, actual, d, &cur);
	in_place_read(f, actual, &ip);
	struct graph *now = partition_current(f, p, &cur, d, &prefer);
	int rc = topo_relabel(now, g, o, &r, err);
	graph_free(now);
	if (rc == 0) {
		struct partition_ctx ctx = {f, p, &ip};
		uint64_t kept0 = 0;

		/* the members' order on the config's ports: the floor, no graph */
		struct graph *g0 = renamed(g, NULL);
		rc = topo_ports(g0, &best.pm, err);
		graph_free(g0);
		if (rc == 0)
			rc = make_partition_circuits(&ctx, &best, err);
		kept0 = best.kept;
		if (rc == 0)
			rc = choose(g, &r, &prefer, make_partition_circuits, &ctx, &best, err);
		if (rc == 0) {
			report(&r, &best, kept0, rep);
			*out = best.c;
			*nout = best.nc;
			best.c = NULL;
		}
		numbering_free(&best);
		relabel_result_free(&r);
	}
	graph_free(g);
	free(ip.xc);
	current_free(&cur);
	port_map_free(&prefer);
	return rc;
}

/* ---- the search run here (relabel_direct) ---------------------------------------------- */

static int direct_fabric(void *ctx, struct fabric *f, const struct device_state *const *actual,
			 const struct relabel_opts *o, struct fabric_relabel *rep,
			 struct ofc_error *err)
{
	(void)ctx;
	return fabric_relabel(f, actual, o, rep, err);
}

static int direct_partition(void *ctx, const struct fabric *f, const struct partition *p,
			    const struct device_state *const *actual, const struct relabel_opts *o,
			    struct circuit **out, uint32_t *nout, struct fabric_relabel *rep,
			    struct ofc_error *err)
{
	(void)ctx;
	return partition_relabel(f, p, NULL, actual, o, out, nout, rep, err);
}

const struct relabel_ops relabel_direct = {.fabric = direct_fabric, .partition = direct_partition};
