/* The key tables of server fabrics (fluid/, docs/fluid.md): a server
 * template's vertices, links and capacity sets, which the fabric-level
 * fabric_vertices, fabric_links and capacity_sets use too. */
#include "controller/config/loader.h"

#include <stdlib.h>
#include <string.h>

/* A vertex name inside a server: letters, digits, '-', '_', '.', and '/'
 * between a host and its vertex at fabric level. */
static int h_vname(struct loader *L, yaml_node_t *n, const struct key *k, void *base)
{
	const char *s;

	if (cfg_scalar(L, n, k, &s) < 0)
		return -1;
	char *copy = xstrdup(s), *slash = strchr(copy, '/');
	bool ok = slash ? cfg_valid_name(slash + 1) && (*slash = 0, cfg_valid_name(copy))
			: cfg_valid_name(copy);

	free(copy);
	if (!ok)
		return cfg_node_error(L, n, "invalid vertex name '%s' in '%s' (NAME or HOST/NAME)",
				      s, k->name);
	return cfg_str(L, n, k, base);
}

/* Arcs of a capacity set: a list of "from>to". */
static int h_arcs(struct loader *L, yaml_node_t *n, const struct key *k, void *base)
{
	struct sv_set *set = base;

	if (n->type != YAML_SEQUENCE_NODE)
		return cfg_node_error(L, n, "'%s' must be a list of 'from>to' arcs, not %s",
				      k->name, cfg_type_name(n));
	size_t total = (size_t)(n->data.sequence.items.top - n->data.sequence.items.start);
	if (total == 0 || total > CONFIG_MAX_HOSTS)
		return cfg_node_error(L, n, "'%s' needs 1..%u arcs", k->name, CONFIG_MAX_HOSTS);
	set->arcs = xcalloc(total, sizeof(char *));
	set->arc_locs = xcalloc(total, sizeof(struct src_loc));
	for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top;
	     it++) {
		yaml_node_t *item = yaml_document_get_node(&L->doc, *it);
		const char *s;

		if (cfg_enter(L, item) < 0)
			return -1;
		L->depth--;
		if (cfg_scalar(L, item, k, &s) < 0)
			return -1;
		if (!strchr(s, '>'))
			return cfg_node_error(L, item, "arc '%s' must read 'from>to'", s);
		set->arc_locs[set->narcs] = cfg_loc_of(item);
		set->arcs[set->narcs++] = xstrdup(s);
	}
	return 0;
}

static const struct choice server_kinds[] = {
    {"gpu", SK_GPU}, {"memory", SK_MEMORY}, {"switch", SK_SWITCH}, {"nic", SK_NIC}, {NULL}};

const struct key cfg_sv_vertex_keys[] = {
    {"name", h_vname, OFF(struct sv_vertex, name), .required = true},
    {"kind", cfg_choice, OFF(struct sv_vertex, kind), .choices = server_kinds, .required = true},
    {NULL},
};

const struct key cfg_sv_link_keys[] = {
    {"from", h_vname, OFF(struct sv_link, from), .required = true,
     .loc_off = LOC(struct sv_link, from_loc)},
    {"to", h_vname, OFF(struct sv_link, to), .required = true,
     .loc_off = LOC(struct sv_link, to_loc)},
    {"bandwidth", cfg_rate, OFF(struct sv_link, bandwidth), .required = true},
    {"cost", cfg_number, OFF(struct sv_link, cost), .min = 0, .max = 1e9},
    {"one_way", cfg_bool, OFF(struct sv_link, one_way)},
    {NULL},
};

const struct key cfg_sv_set_keys[] = {
    {"name", cfg_name, OFF(struct sv_set, name), .required = true},
    {"bandwidth", cfg_rate, OFF(struct sv_set, bandwidth), .required = true},
    {"arcs", h_arcs, .required = true},
    {NULL},
};

const struct key cfg_server_keys[] = {
    {"name", cfg_name, OFF(struct server_template, name), .required = true},
    {"vertices", cfg_list, OFF(struct server_template, vertices), cfg_sv_vertex_keys,
     sizeof(struct sv_vertex), OFF(struct server_template, nvertices), .required = true},
    {"links", cfg_list, OFF(struct server_template, links), cfg_sv_link_keys,
     sizeof(struct sv_link), OFF(struct server_template, nlinks)},
    {"capacity_sets", cfg_list, OFF(struct server_template, sets), cfg_sv_set_keys,
     sizeof(struct sv_set), OFF(struct server_template, nsets)},
    {NULL},
};
