/* Circuits: the cross-connects that realise the target topology's port
 * permutations over the fabric's wiring. Port j of host u transmits to
 * port j of host ports.to[j][u], so each (j, u) is one cross-connect on the
 * switch both ports are cabled to. Validation builds them once; a
 * relabelling (fabric/relabel_target.c) builds them again for the new numbering. */
#include "controller/fabric/fabric.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NONE UINT32_MAX

/* host * maxports + port -> index into f->wiring, NONE where not wired. */
static uint32_t *index_host_ports(const struct fabric *f, uint32_t *maxports)
{
	uint32_t mp = 1;

	for (uint32_t h = 0; h < f->nhosts; h++)
		mp = f->hosts[h].ports > mp ? f->hosts[h].ports : mp;
	for (uint32_t i = 0; i < f->nwiring; i++)
		mp = f->wiring[i].host_port + 1 > mp ? f->wiring[i].host_port + 1 : mp;
	uint32_t *by = xmalloc(((size_t)f->nhosts * mp + 1) * sizeof(uint32_t));

	for (size_t k = 0; k < (size_t)f->nhosts * mp; k++)
		by[k] = NONE;
	for (uint32_t i = 0; i < f->nwiring; i++)
		by[(size_t)f->wiring[i].host * mp + f->wiring[i].host_port] = i;
	*maxports = mp;
	return by;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The drained switch ports as sorted keys (switch index << 32 | port);
 * those naming no switch of f are left out. */
static uint64_t *drained_keys(const struct fabric *f, uint32_t *n)
{
	uint64_t *k = xcalloc((size_t)f->ndrained + 1, sizeof(*k));

	*n = 0;
	for (uint32_t i = 0; i < f->ndrained; i++)
		for (uint32_t s = 0; s < f->nswitches; s++)
			if (strcmp(f->switches[s].name, f->drained[i].sw) == 0) {
				k[(*n)++] = (uint64_t)s << 32 | f->drained[i].port;
				break;
			}
	qsort(k, *n, sizeof(*k), cmp_u64);
	return k;
}

static bool is_drained(const uint64_t *k, uint32_t n, uint32_t sw, uint32_t port)
{
	uint64_t key = (uint64_t)sw << 32 | port;

	return n && bsearch(&key, k, n, sizeof(*k), cmp_u64);
}

int fabric_circuits(struct fabric *f, struct ofc_error *err)
{
	const struct topo_target *t = &f->topology;
	uint32_t n = f->ports.n, d = f->ports.d, mp;
	uint32_t *by = index_host_ports(f, &mp), ndk;
	uint64_t *dk = drained_keys(f, &ndk);
	int rc = 0;

	free(f->circuits);
	f->ncircuits = 0;
	f->circuits = xcalloc((size_t)n * d + 1, sizeof(struct circuit));
	for (uint32_t j = 0; j < d && rc == 0; j++)
		for (uint32_t u = 0; u < n; u++) {
			uint32_t v = f->ports.to[(size_t)j * n + u];
			uint32_t ia = j < mp ? by[(size_t)u * mp + j] : NONE;
			uint32_t ib = j < mp ? by[(size_t)v * mp + j] : NONE;

			if (v == u && t->self_loops == SELF_LOOPS_DARK)
				continue;
			if (ia == NONE || ib == NONE) {
				rc = fabric_error_at(
				    err, f, t->spec_loc,
				    "topology '%s' uses port %u of host '%s', which is not "
				    "wired to a switch",
				    f->graph->spec, j, f->hosts[ia == NONE ? u : v].name);
				break;
			}
			const struct attachment *a = &f->wiring[ia], *b = &f->wiring[ib];
			if (is_drained(dk, ndk, a->sw, a->sw_port) ||
			    is_drained(dk, ndk, b->sw, b->sw_port))
				continue;
			if (a->sw != b->sw) {
				rc = fabric_error_at(
				    err, f, t->spec_loc,
				    "topology '%s' needs a circuit from %s:%u (on '%s') to "
				    "%s:%u (on '%s'): they are on different switches",
				    f->graph->spec, f->hosts[u].name, j, f->switches[a->sw].name,
				    f->hosts[v].name, j, f->switches[b->sw].name);
				break;
			}
			f->circuits[f->ncircuits++] = (struct circuit){.sw = a->sw,
								       .in_port = a->sw_port,
								       .out_port = b->sw_port,
								       .src_host = u,
								       .src_port = j,
								       .dst_host = v,
								       .dst_port = j};
		}
	free(by);
	free(dk);
	return rc;
}

/* The checks every partition's circuits need: a topology, whole hosts. */
static int partition_check(const struct fabric *f, const struct partition *p, struct ofc_error *err)
{
	if (!p->topology.present)
		return fabric_error_at(err, f, p->loc, "partition '%s' has no topology", p->name);
	for (uint32_t m = 0; m < p->nmembers; m++)
		if (p->member_port[m] != NONE)
			return fabric_error_at(
			    err, f, p->member_locs[m],
			    "partition '%s': circuits for single host ports ('%s') are not "
			    "supported yet; name whole hosts",
			    p->name, p->members[m]);
	return 0;
}

int partition_circuits_ports(const struct fabric *f, const struct partition *p,
			     const struct port_map *pm, struct circuit **out, uint32_t *nout,
			     struct ofc_error *err)
{
	const struct topo_target *t = &p->topology;
	uint32_t mp;

	*out = NULL;
	*nout = 0;
	if (partition_check(f, p, err) < 0)
		return -1;
	uint32_t *by = index_host_ports(f, &mp);
	struct circuit *c = xcalloc((size_t)pm->n * pm->d + 1, sizeof(*c));
	uint32_t n = 0;

	for (uint32_t j = 0; j < pm->d; j++)
		for (uint32_t u = 0; u < pm->n; u++) {
			uint32_t hu = p->member_host[u],
				 hv = p->member_host[pm->to[(size_t)j * pm->n + u]];
			uint32_t ia = j < mp ? by[(size_t)hu * mp + j] : NONE;
			uint32_t ib = j < mp ? by[(size_t)hv * mp + j] : NONE;

			if (hu == hv && t->self_loops == SELF_LOOPS_DARK)
				continue;
			if (ia == NONE || ib == NONE || f->wiring[ia].sw != f->wiring[ib].sw) {
				fabric_error_at(
				    err, f, t->spec_loc,
				    "partition '%s': topology '%s' needs a circuit from %s:%u to "
				    "%s:%u, which are not wired to one switch",
				    p->name, t->spec, f->hosts[hu].name, j, f->hosts[hv].name, j);
				free(c);
				free(by);
				return -1;
			}
			c[n++] = (struct circuit){.sw = f->wiring[ia].sw,
						  .in_port = f->wiring[ia].sw_port,
						  .out_port = f->wiring[ib].sw_port,
						  .src_host = hu,
						  .src_port = j,
						  .dst_host = hv,
						  .dst_port = j};
		}
	free(by);
	*out = c;
	*nout = n;
	return 0;
}

int partition_graph(const struct fabric *f, const struct partition *p, struct graph **g,
		    struct ofc_error *err)
{
	const struct topo_target *t = &p->topology;
	struct ofc_error sub;

	*g = NULL;
	if (partition_check(f, p, err) < 0)
		return -1;
	ofc_error_clear(&sub);
	if (fabric_topo_build(f, t->spec, g, &sub) < 0) {
		graph_free(*g);
		*g = NULL;
		return fabric_error_at(err, f, t->spec_loc, "partition '%s': topology '%s': %s",
				       p->name, t->spec, sub.msg);
	}
	return 0;
}

int partition_circuits(const struct fabric *f, const struct partition *p, struct circuit **out,
		       uint32_t *nout, struct ofc_error *err)
{
	struct graph *g;
	struct port_map pm = {0};
	struct ofc_error sub;
	int rc;

	*out = NULL;
	*nout = 0;
	if (partition_graph(f, p, &g, err) < 0)
		return -1;
	ofc_error_clear(&sub);
	if (topo_ports(g, &pm, &sub) < 0) {
		graph_free(g);
		return fabric_error_at(err, f, p->topology.spec_loc,
				       "partition '%s': topology '%s': %s", p->name,
				       p->topology.spec, sub.msg);
	}
	rc = partition_circuits_ports(f, p, &pm, out, nout, err);
	graph_free(g);
	port_map_free(&pm);
	return rc;
}

uint8_t *partition_switch_ports(const struct fabric *f, const struct partition *p, uint32_t s)
{
	uint8_t *mine = xcalloc((size_t)f->switches[s].ports + 1, 1);

	for (uint32_t i = 0; i < f->nwiring; i++) {
		const struct attachment *a = &f->wiring[i];

		if (a->sw != s || a->sw_port > f->switches[s].ports)
			continue;
		for (uint32_t m = 0; m < p->nmembers; m++)
			if (p->member_host[m] == a->host &&
			    (p->member_port[m] == NONE || p->member_port[m] == a->host_port))
				mine[a->sw_port] = 1;
	}
	return mine;
}

int fabric_partitions_circuits(struct fabric *f, struct ofc_error *err)
{
	free(f->circuits);
	f->circuits = NULL;
	f->ncircuits = 0;
	for (uint32_t i = 0; i < f->npartitions; i++) {
		const struct partition *p = &f->partitions[i];
		struct circuit *c;
		uint32_t n;
		bool whole = true;

		for (uint32_t m = 0; m < p->nmembers; m++)
			whole &= p->member_port[m] == NONE;
		if (!p->topology.present || !whole)
			continue;
		if (partition_circuits(f, p, &c, &n, err) < 0)
			return -1;
		f->circuits = xrealloc(f->circuits, (f->ncircuits + n + 1) * sizeof(*c));
		memcpy(f->circuits + f->ncircuits, c, n * sizeof(*c));
		f->ncircuits += n;
		free(c);
	}
	return 0;
}
