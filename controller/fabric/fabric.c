/* The fabric model: lookups, names, and freeing what the loader built. */
#include "controller/fabric/fabric.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

int fabric_error_at(struct ofc_error *err, const struct fabric *f, struct src_loc loc,
		    const char *fmt, ...)
{
	char msg[sizeof(err->msg)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return ofc_error_at(err, OFC_E_INPUT, f->file, loc.line ? loc.line : 1,
			    loc.col ? loc.col : 1, "%s", msg);
}

const char *tl1_dialect_name(int dialect)
{
	return dialect == TL1_CALIENT ? "calient" : "polatis";
}

static void driver_free(struct driver_cfg *d)
{
	free(d->type);
	free(d->address);
	free(d->credentials);
	free(d->credentials_path);
	free(d->known_hosts);
	free(d->known_hosts_path);
	free(d->tls_ca);
	free(d->tls_ca_path);
	free(d->tls_server_name);
}

static void sv_free(struct sv_vertex *v, uint32_t nv, struct sv_link *l, uint32_t nl,
		    struct sv_set *s, uint32_t ns)
{
	for (uint32_t i = 0; i < nv; i++)
		free(v[i].name);
	for (uint32_t i = 0; i < nl; i++) {
		free(l[i].from);
		free(l[i].to);
	}
	for (uint32_t i = 0; i < ns; i++) {
		free(s[i].name);
		for (uint32_t k = 0; k < s[i].narcs; k++)
			free(s[i].arcs[k]);
		free(s[i].arcs);
		free(s[i].arc_locs);
	}
	free(v);
	free(l);
	free(s);
}

static void servers_free(struct fabric *f)
{
	for (uint32_t i = 0; i < f->nservers; i++) {
		struct server_template *t = &f->servers[i];

		free(t->name);
		sv_free(t->vertices, t->nvertices, t->links, t->nlinks, t->sets, t->nsets);
	}
	free(f->servers);
	sv_free(f->fvertices, f->nfvertices, f->flinks, f->nflinks, f->fsets, f->nfsets);
}

/* The fabric's topology and each partition's own: the spec, failed links
 * and hosts, and link rates. */
static void topo_target_free(struct topo_target *t)
{
	free(t->spec);
	for (uint32_t i = 0; i < t->nfailed_links; i++) {
		free(t->failed_links[i].a);
		free(t->failed_links[i].b);
	}
	free(t->failed_links);
	for (uint32_t i = 0; i < t->nfailed_hosts; i++)
		free(t->failed_hosts[i].name);
	free(t->failed_hosts);
	for (uint32_t i = 0; i < t->nlink_rates; i++) {
		free(t->link_rates[i].a);
		free(t->link_rates[i].b);
	}
	free(t->link_rates);
}

void fabric_free(struct fabric *f)
{
	if (!f)
		return;
	servers_free(f);
	workload_free(&f->workload);
	for (uint32_t i = 0; i < f->nhosts; i++) {
		free(f->hosts[i].name);
		free(f->hosts[i].server);
		free(f->hosts[i].failed_ports);
		free(f->hosts[i].failed_port_locs);
		free(f->hosts[i].port_rates.v);
	}
	free(f->hosts);
	for (uint32_t i = 0; i < f->ndrained; i++)
		free(f->drained[i].sw);
	free(f->drained);
	for (uint32_t i = 0; i < f->nrings; i++) {
		struct ring *r = &f->rings[i];

		free(r->name);
		for (uint32_t k = 0; k < r->nnode_names; k++)
			free(r->node_names[k]);
		free(r->node_names);
		free(r->node_locs);
		free(r->members);
		driver_free(&r->driver);
		for (uint32_t k = 0; k < r->nlightpaths; k++) {
			free(r->lightpaths[k].from);
			free(r->lightpaths[k].to);
		}
		free(r->lightpaths);
	}
	free(f->rings);
	for (uint32_t i = 0; i < f->nswitches; i++) {
		free(f->switches[i].name);
		driver_free(&f->switches[i].driver);
	}
	free(f->switches);
	for (uint32_t i = 0; i < f->wiring_cfg.nswitch_names; i++)
		free(f->wiring_cfg.switch_names[i]);
	free(f->wiring_cfg.switch_names);
	free(f->wiring_cfg.switch_locs);
	for (uint32_t i = 0; i < f->wiring_cfg.nexplicit; i++) {
		free(f->wiring_cfg.explicit_list[i].host_name);
		free(f->wiring_cfg.explicit_list[i].switch_name);
	}
	free(f->wiring_cfg.explicit_list);
	for (uint32_t i = 0; i < f->ncollectives; i++) {
		free(f->collectives[i].algorithm);
	}
	free(f->collectives);
	for (uint32_t i = 0; i < f->npartitions; i++) {
		struct partition *p = &f->partitions[i];

		free(p->name);
		for (uint32_t k = 0; k < p->nmembers; k++)
			free(p->members[k]);
		free(p->members);
		free(p->member_locs);
		free(p->member_host);
		free(p->member_port);
		topo_target_free(&p->topology);
		for (uint32_t k = 0; k < p->ncollectives; k++)
			free(p->collectives[k].algorithm);
		free(p->collectives);
	}
	free(f->partitions);
	free(f->wiring);
	graph_free(f->graph);
	graph_free(f->degraded);
	topo_target_free(&f->topology);
	for (uint32_t i = 0; i < f->nmoves; i++)
		free(f->moves[i].host);
	free(f->moves);
	port_map_free(&f->ports);
	free(f->circuits);
	free(f->host_index);
	free(f->file);
	free(f->dir);
	free(f->name);
	free(f->description);
	free(f);
}

double fabric_port_rate(const struct fabric *f, uint32_t h, uint32_t port)
{
	const struct host *ho = &f->hosts[h];

	return port < ho->port_rates.n ? ho->port_rates.v[port] : ho->port_rate;
}

int fabric_find_host(const struct fabric *f, const char *name)
{
	if (f->host_index) {
		uint32_t lo = 0, hi = f->nhosts;

		while (lo < hi) {
			uint32_t mid = lo + (hi - lo) / 2;
			int c = strcmp(f->hosts[f->host_index[mid]].name, name);

			if (c == 0)
				return (int)f->host_index[mid];
			if (c < 0)
				lo = mid + 1;
			else
				hi = mid;
		}
		return -1;
	}
	for (uint32_t i = 0; i < f->nhosts; i++)
		if (strcmp(f->hosts[i].name, name) == 0)
			return (int)i;
	return -1;
}

int fabric_find_switch(const struct fabric *f, const char *name)
{
	for (uint32_t i = 0; i < f->nswitches; i++)
		if (strcmp(f->switches[i].name, name) == 0)
			return (int)i;
	return -1;
}

uint32_t *fabric_port_owners(const struct fabric *f, uint32_t s, const uint32_t *group_of)
{
	uint32_t ports = f->switches[s].ports;
	uint32_t *owner = xmalloc(((size_t)ports + 1) * sizeof(*owner));

	for (uint32_t p = 0; p <= ports; p++)
		owner[p] = UINT32_MAX;
	for (uint32_t i = 0; i < f->nwiring; i++) {
		const struct attachment *a = &f->wiring[i];

		if (a->sw == s && a->sw_port <= ports && group_of[a->host] != UINT32_MAX)
			owner[a->sw_port] = group_of[a->host];
	}
	return owner;
}

int fabric_topo_build(const struct fabric *f, const char *spec, struct graph **out,
		      struct ofc_error *err)
{
	if (f->files)
		return topo_build_in(spec, f->files, out, err);
	/* An edge list's relative path resolves against the config's
	 * directory, like credentials files. */
	if (strncmp(spec, "edges:", 6) == 0 && spec[6] && spec[6] != '/' && f->dir) {
		char *abs = xasprintf("edges:%s/%s", f->dir, spec + 6);
		int rc = topo_build(abs, out, err);

		free(abs);
		return rc;
	}
	return topo_build(spec, out, err);
}

const struct partition *fabric_find_partition(const struct fabric *f, const char *name)
{
	for (uint32_t i = 0; i < f->npartitions; i++)
		if (strcmp(f->partitions[i].name, name) == 0)
			return &f->partitions[i];
	return NULL;
}
