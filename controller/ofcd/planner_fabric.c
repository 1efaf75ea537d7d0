/* What ofcd hands a planner process: how to start it (planner_how), and
 * the fabric a schedule job runs on, as the planner process gets it: the
 * config's YAML and what ofcd changed of it (ofc.v1.PlannerFabric), packed
 * by ofcd from a running config and rebuilt by the planner
 * (planner_serve.c) the way ofcd built it (ofcd_fabric_with_topology, the
 * failures' build), so the schedule is the one ofcd would compute. */
#include "controller/config/config.h"
#include "controller/ofcd/internal.h"
#include "proto/planner.pb-c.h"

#include <stdlib.h>
#include <string.h>

void fabric_add_failures(struct fabric *f, const struct fabric *names, char *const *items,
			 uint32_t n)
{
	/* (Looked up in names: the same YAML, so the same hosts in the same
	 * order, and its names indexed; f's are not until validated.) */
	for (uint32_t i = 0; i < n; i++) {
		const char *colon = strrchr(items[i], ':');
		int whole = fabric_find_host(names, items[i]);

		if (whole >= 0) {
			struct topo_target *t = &f->topology;

			t->failed_hosts = xrealloc(t->failed_hosts, (t->nfailed_hosts + 1) *
									sizeof(*t->failed_hosts));
			memset(&t->failed_hosts[t->nfailed_hosts], 0, sizeof(*t->failed_hosts));
			t->failed_hosts[t->nfailed_hosts++].name = xstrdup(items[i]);
			continue;
		}
		if (colon) {
			char *name = xstrndup(items[i], (size_t)(colon - items[i]));
			int k = fabric_find_host(names, name);

			free(name);
			if (k < 0)
				continue;
			struct host *ho = &f->hosts[k];
			ho->failed_ports =
			    xrealloc(ho->failed_ports, (ho->nfailed_ports + 1) * sizeof(uint32_t));
			ho->failed_port_locs = xrealloc(
			    ho->failed_port_locs, (ho->nfailed_ports + 1) * sizeof(struct src_loc));
			ho->failed_ports[ho->nfailed_ports] =
			    (uint32_t)strtoul(colon + 1, NULL, 10);
			memset(&ho->failed_port_locs[ho->nfailed_ports], 0, sizeof(struct src_loc));
			ho->nfailed_ports++;
			continue;
		}
		/* Canonical: the first '-' whose two sides are hosts. */
		struct topo_target *t = &f->topology;
		for (const char *dash = strchr(items[i], '-'); dash; dash = strchr(dash + 1, '-')) {
			char *a = xstrndup(items[i], (size_t)(dash - items[i]));

			if (fabric_find_host(names, a) >= 0 &&
			    fabric_find_host(names, dash + 1) >= 0) {
				t->failed_links =
				    xrealloc(t->failed_links,
					     (t->nfailed_links + 1) * sizeof(*t->failed_links));
				memset(&t->failed_links[t->nfailed_links], 0,
				       sizeof(*t->failed_links));
				t->failed_links[t->nfailed_links].a = a;
				t->failed_links[t->nfailed_links].b = xstrdup(dash + 1);
				t->nfailed_links++;
				break;
			}
			free(a);
		}
	}
}

uint8_t *planner_fabric_pack(const struct fabcfg *c, size_t *len)
{
	const struct fabric *f = c->f;
	Ofc__V1__PlannerFabric m = OFC__V1__PLANNER_FABRIC__INIT;
	Ofc__V1__PlannerMove *mv = xcalloc((size_t)f->nmoves + 1, sizeof(*mv));
	Ofc__V1__PlannerMove **mvp = xcalloc((size_t)f->nmoves + 1, sizeof(*mvp));
	Ofc__V1__PlannerDrained *dr = xcalloc((size_t)f->ndrained + 1, sizeof(*dr));
	Ofc__V1__PlannerDrained **drp = xcalloc((size_t)f->ndrained + 1, sizeof(*drp));
	uint8_t *buf;

	m.has_yaml = 1;
	m.yaml.data = (uint8_t *)c->yaml;
	m.yaml.len = c->yaml_len;
	m.path = c->path;
	m.dir = f->dir;
	m.has_topology_files = 1;
	m.topology_files = f->files != NULL;
	if (f->topology.present)
		m.topology = f->topology.spec;
	for (uint32_t i = 0; i < f->nmoves; i++) {
		ofc__v1__planner_move__init(&mv[i]);
		mv[i].host = f->moves[i].host;
		mv[i].has_from = mv[i].has_to = 1;
		mv[i].from = f->moves[i].from;
		mv[i].to = f->moves[i].to;
		mvp[i] = &mv[i];
	}
	m.n_moves = f->nmoves;
	m.moves = mvp;
	for (uint32_t i = 0; i < f->ndrained; i++) {
		ofc__v1__planner_drained__init(&dr[i]);
		dr[i].switch_ = f->drained[i].sw;
		dr[i].has_port = 1;
		dr[i].port = f->drained[i].port;
		drp[i] = &dr[i];
	}
	m.n_drained = f->ndrained;
	m.drained = drp;
	/* (no_schedule: the failures left no schedule, the fabric is the
	 * config without them) */
	if (!c->no_schedule) {
		m.n_failed = c->nfailed;
		m.failed = c->failed;
	}
	*len = protobuf_c_message_get_packed_size(&m.base);
	buf = xmalloc(*len ? *len : 1);
	protobuf_c_message_pack(&m.base, buf);
	free(mv);
	free(mvp);
	free(dr);
	free(drp);
	return buf;
}

/* m's fabric less its failures: the YAML, the topology in effect, the
 * moves and the drained ports, not validated. */
static int parse_base(const Ofc__V1__PlannerFabric *m, const struct topo_files *files,
		      struct fabric **out, struct ofc_error *err)
{
	struct fabric *f;

	if (config_parse(m->path, (const char *)m->yaml.data, m->yaml.len, &f, err) < 0)
		return -1;
	f->files = m->topology_files ? files : NULL;
	f->drivers_unchecked = true;
	if (m->dir) {
		free(f->dir);
		f->dir = xstrdup(m->dir);
	}
	if (m->topology) {
		free(f->topology.spec);
		f->topology.spec = xstrdup(m->topology);
		f->topology.present = true;
		f->topology.spec_quoted = 0;
		f->topology.auto_picked = false;
	}
	for (uint32_t i = 0; i < f->nmoves; i++)
		free(f->moves[i].host);
	free(f->moves);
	f->moves = m->n_moves ? xcalloc(m->n_moves, sizeof(*f->moves)) : NULL;
	f->nmoves = (uint32_t)m->n_moves;
	for (size_t i = 0; i < m->n_moves; i++)
		f->moves[i] =
		    (struct port_move){xstrdup(m->moves[i]->host ? m->moves[i]->host : ""),
				       m->moves[i]->from, m->moves[i]->to};
	for (uint32_t i = 0; i < f->ndrained; i++)
		free(f->drained[i].sw);
	free(f->drained);
	f->drained = m->n_drained ? xcalloc(m->n_drained, sizeof(*f->drained)) : NULL;
	f->ndrained = (uint32_t)m->n_drained;
	for (size_t i = 0; i < m->n_drained; i++)
		f->drained[i] = (struct drained_port){
		    xstrdup(m->drained[i]->switch_ ? m->drained[i]->switch_ : ""),
		    m->drained[i]->port};
	*out = f;
	return 0;
}

int planner_fabric_build(const Ofc__V1__PlannerFabric *m, const struct topo_files *files,
			 struct fabric **out, struct ofc_error *err)
{
	struct fabric *h = NULL, *f = NULL;

	*out = NULL;
	if (parse_base(m, files, &h, err) < 0)
		return -1;
	if (fabric_validate(h, err) < 0) {
		fabric_free(h);
		return -1;
	}
	if (!m->n_failed) {
		*out = h;
		return 0;
	}
	/* The failures are named in the healthy fabric (its hosts indexed),
	 * added to the same YAML's, as ofcd's failures_publish builds them. */
	if (parse_base(m, files, &f, err) < 0) {
		fabric_free(h);
		return -1;
	}
	fabric_add_failures(f, h, m->failed, (uint32_t)m->n_failed);
	fabric_free(h);
	if (fabric_validate(f, err) < 0) {
		fabric_free(f);
		return -1;
	}
	*out = f;
	return 0;
}

void planner_how_of(const struct ofcd_opts *o, const char *topo_dir, struct planner_how *h)
{
	struct schedule_query a = {.max_memory = o->max_request_memory};
	struct schedule_query b = {.max_memory = o->ro_max_request_memory};
	uint64_t x = schedule_memory_limit(&a), y = schedule_memory_limit(&b);

	h->path = o->planner_path && *o->planner_path ? xstrdup(o->planner_path)
						      : exe_sibling("OFC_PLANNER", "ofc-planner");
	h->topo_dir = topo_dir ? xstrdup(topo_dir) : NULL;
	/* (the most it may hold for any request: the larger of the two
	 * sockets' request limits) */
	h->max_memory = x > y ? x : y;
	h->role = "request";
}

void planner_how(const struct ofcd *d, struct planner_how *h)
{
	planner_how_of(&d->o, d->topo_dir, h);
}

void planner_how_free(struct planner_how *h)
{
	free(h->path);
	free(h->topo_dir);
	h->path = h->topo_dir = NULL;
}
