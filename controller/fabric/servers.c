/* A config's server fabric as fluid's network: every host with
 * `server: T` instantiates template T (its vertices named "host/vertex"),
 * then the fabric-level vertices (rail switches), links (rails, circuits
 * between NICs) and capacity sets. Names resolve here, so every error
 * names the place in the config it is about. Bandwidths are read as rates
 * (bits/s) and handed to fluid in GB/s. */
#include "controller/fabric/fabric.h"
#include "fluid/fluid.h"

#include <stdlib.h>
#include <string.h>

static const unsigned kind_bits[] = {[SK_GPU] = FLUID_GPU,
				     [SK_MEMORY] = FLUID_MEMORY,
				     [SK_SWITCH] = FLUID_SWITCH,
				     [SK_NIC] = FLUID_SWITCH};

static double gbytes(double bits_per_s)
{
	return bits_per_s / 8e9;
}

static int add_vertex(const struct fabric *f, struct fluid_net *n, const char *prefix,
		      const struct sv_vertex *v, struct ofc_error *err)
{
	char *name = prefix ? xasprintf("%s/%s", prefix, v->name) : xstrdup(v->name);
	int id = -1;

	if (fluid_find_vertex(n, name) >= 0)
		fabric_error_at(err, f, v->loc, "duplicate vertex '%s'", name);
	else if ((id = fluid_add_vertex(n, name, kind_bits[v->kind], err)) < 0)
		fabric_error_at(err, f, v->loc, "%s", err->msg);
	free(name);
	return id;
}

static int vertex_at(const struct fabric *f, const struct fluid_net *n, const char *prefix,
		     const char *name, struct src_loc loc, struct ofc_error *err)
{
	char *full = prefix ? xasprintf("%s/%s", prefix, name) : xstrdup(name);
	int id = fluid_find_vertex(n, full);

	if (id < 0)
		fabric_error_at(err, f, loc, "unknown vertex '%s'", full);
	free(full);
	return id;
}

static int add_link(const struct fabric *f, struct fluid_net *n, const char *prefix,
		    const struct sv_link *l, struct ofc_error *err)
{
	int a = vertex_at(f, n, prefix, l->from, l->from_loc, err);
	int b = a < 0 ? -1 : vertex_at(f, n, prefix, l->to, l->to_loc, err);

	if (b < 0)
		return -1;
	if (a == b)
		return fabric_error_at(err, f, l->loc, "a link from '%s' to itself", l->from);
	double bw = gbytes(l->bandwidth);
	int rc = l->one_way ? fluid_add_arc(n, (uint32_t)a, (uint32_t)b, bw, l->cost, err)
			    : fluid_add_link(n, (uint32_t)a, (uint32_t)b, bw, l->cost, err);

	return rc < 0 ? fabric_error_at(err, f, l->loc, "%s", err->msg) : 0;
}

static int add_set(const struct fabric *f, struct fluid_net *n, const char *prefix,
		   const struct sv_set *s, struct ofc_error *err)
{
	uint32_t *arcs = xmalloc((s->narcs + 1) * sizeof(uint32_t));
	int rc = 0;

	for (uint32_t i = 0; i < s->narcs && rc == 0; i++) {
		char *from = xstrdup(s->arcs[i]), *to = strchr(from, '>');

		*to++ = 0;
		int a = vertex_at(f, n, prefix, from, s->arc_locs[i], err);
		int b = a < 0 ? -1 : vertex_at(f, n, prefix, to, s->arc_locs[i], err);
		int e = b < 0 ? -1 : fluid_find_arc(n, (uint32_t)a, (uint32_t)b);

		if (b >= 0 && e < 0)
			fabric_error_at(err, f, s->arc_locs[i], "no link from '%s' to '%s'", from,
					to);
		rc = e < 0 ? -1 : 0;
		arcs[i] = (uint32_t)e;
		free(from);
	}
	if (rc == 0) {
		char *name = prefix ? xasprintf("%s/%s", prefix, s->name) : xstrdup(s->name);

		if (fluid_add_set(n, name, gbytes(s->bandwidth), arcs, s->narcs, err) < 0)
			rc = fabric_error_at(err, f, s->loc, "%s", err->msg);
		free(name);
	}
	free(arcs);
	return rc;
}

static int add_parts(const struct fabric *f, struct fluid_net *n, const char *prefix,
		     const struct sv_vertex *v, uint32_t nv, const struct sv_link *l, uint32_t nl,
		     const struct sv_set *s, uint32_t ns, struct ofc_error *err)
{
	for (uint32_t i = 0; i < nv; i++)
		if (add_vertex(f, n, prefix, &v[i], err) < 0)
			return -1;
	for (uint32_t i = 0; i < nl; i++)
		if (add_link(f, n, prefix, &l[i], err) < 0)
			return -1;
	for (uint32_t i = 0; i < ns; i++)
		if (add_set(f, n, prefix, &s[i], err) < 0)
			return -1;
	return 0;
}

static const struct server_template *find_template(const struct fabric *f, const char *name)
{
	for (uint32_t i = 0; i < f->nservers; i++)
		if (strcmp(f->servers[i].name, name) == 0)
			return &f->servers[i];
	return NULL;
}

static uint64_t link_arcs(const struct sv_link *l, uint32_t nl)
{
	uint64_t k = 0;

	for (uint32_t i = 0; i < nl; i++)
		k += l[i].one_way ? 1 : 2;
	return k;
}

/* The network's size, counted before anything is built: a template of
 * many links on thousands of hosts is refused at the host that crosses a
 * limit, with the count, instead of growing a network that cannot be
 * scheduled (vertices are named in 16 bits). Unknown templates too. */
static int check_size(const struct fabric *f, struct ofc_error *err)
{
	uint64_t nv = f->nfvertices, na = link_arcs(f->flinks, f->nflinks);

	if (nv > FLUID_MAX_VERTS)
		return fabric_error_at(err, f, f->fvertices[FLUID_MAX_VERTS].loc,
				       "more than %u fabric vertices", FLUID_MAX_VERTS);
	for (uint32_t h = 0; h < f->nhosts; h++) {
		const struct host *host = &f->hosts[h];
		const struct server_template *t;

		if (!host->server)
			continue;
		if (!(t = find_template(f, host->server)))
			return fabric_error_at(err, f, host->server_loc,
					       "unknown server template '%s'", host->server);
		nv += t->nvertices;
		na += link_arcs(t->links, t->nlinks);
		if (nv > FLUID_MAX_VERTS || na > FLUID_MAX_ARCS)
			return fabric_error_at(
			    err, f, host->server_loc,
			    "host '%s' takes the server fabric to %llu vertices and %llu arcs; "
			    "it may have at most %u and %u",
			    host->name, (unsigned long long)nv, (unsigned long long)na,
			    FLUID_MAX_VERTS, FLUID_MAX_ARCS);
	}
	return 0;
}

int fabric_server_net(const struct fabric *f, struct fluid_net *n, struct ofc_error *err)
{
	uint32_t servers = 0;

	fluid_net_init(n);
	if (check_size(f, err) < 0)
		goto fail;
	for (uint32_t h = 0; h < f->nhosts; h++) {
		const struct host *host = &f->hosts[h];
		const struct server_template *t =
		    host->server ? find_template(f, host->server) : NULL;

		if (!t)
			continue;
		if (add_parts(f, n, host->name, t->vertices, t->nvertices, t->links, t->nlinks,
			      t->sets, t->nsets, err) < 0)
			goto fail;
		servers++;
	}
	if (servers == 0) {
		fabric_error_at(err, f, f->hosts_loc,
				"no host names a server template ('server:')");
		goto fail;
	}
	if (add_parts(f, n, NULL, f->fvertices, f->nfvertices, f->flinks, f->nflinks, f->fsets,
		      f->nfsets, err) < 0)
		goto fail;
	if (fluid_net_check(n, err) < 0) {
		fabric_error_at(err, f, f->hosts_loc, "%s", err->msg);
		goto fail;
	}
	return 0;
fail:
	fluid_net_free(n);
	return -1;
}

int fabric_server_check(const struct fabric *f, struct ofc_error *err)
{
	bool any = f->nservers || f->nfvertices || f->nflinks || f->nfsets;
	struct fluid_net n;

	for (uint32_t h = 0; h < f->nhosts && !any; h++)
		any = f->hosts[h].server != NULL;
	if (!any)
		return 0;
	/* Each template on its own first, instantiated or not: its errors
	 * name its own vertices ('gpu9', not 's0/gpu9'), once. */
	for (uint32_t i = 0; i < f->nservers; i++) {
		const struct server_template *t = &f->servers[i];
		const struct server_template *first = find_template(f, t->name);
		int rc;

		if (first != t)
			return fabric_error_at(err, f, t->loc,
					       "duplicate server template '%s' (first at line %u)",
					       t->name, first->loc.line);
		fluid_net_init(&n);
		rc = add_parts(f, &n, NULL, t->vertices, t->nvertices, t->links, t->nlinks, t->sets,
			       t->nsets, err);
		fluid_net_free(&n);
		if (rc < 0)
			return -1;
	}
	if (fabric_server_net(f, &n, err) < 0)
		return -1;
	fluid_net_free(&n);
	return 0;
}
