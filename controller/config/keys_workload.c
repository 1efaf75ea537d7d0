/* The key tables of a workload (docs/config.md): its parallelism, groups
 * of hosts and phases, read as a config's `workload` section or as a
 * workload file of its own (config_parse_workload). */
#include "controller/config/loader.h"

#include <stdlib.h>
#include <string.h>

/* members: a list of groups, each a list of host names. */
static int h_wl_members(struct loader *L, yaml_node_t *n, const struct key *k, void *base)
{
	struct wl_group_list *g = base;
	size_t total = 0, ng;

	(void)k;
	g->members_loc = cfg_loc_of(n);
	if (n->type != YAML_SEQUENCE_NODE)
		return cfg_node_error(L, n,
				      "'members' must be a list of groups, each a list of hosts, "
				      "not %s",
				      cfg_type_name(n));
	ng = (size_t)(n->data.sequence.items.top - n->data.sequence.items.start);
	if (ng == 0 || ng > CONFIG_MAX_HOSTS)
		return cfg_node_error(L, n, "'members' needs 1..%u groups", CONFIG_MAX_HOSTS);
	for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top;
	     it++) {
		yaml_node_t *item = yaml_document_get_node(&L->doc, *it);

		if (item->type != YAML_SEQUENCE_NODE)
			return cfg_node_error(L, item,
					      "a group in 'members' must be a list of hosts, "
					      "not %s",
					      cfg_type_name(item));
		total += (size_t)(item->data.sequence.items.top - item->data.sequence.items.start);
		if (total > CONFIG_MAX_HOSTS)
			return cfg_node_error(L, item, "'members' names more than %u hosts",
					      CONFIG_MAX_HOSTS);
	}
	g->members = xcalloc(total ? total : 1, sizeof(char *));
	g->member_locs = xcalloc(total ? total : 1, sizeof(struct src_loc));
	g->first = xcalloc(ng + 1, sizeof(uint32_t));
	for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top;
	     it++) {
		yaml_node_t *item = yaml_document_get_node(&L->doc, *it);
		char **names;
		struct src_loc *locs;
		uint32_t count;

		if (cfg_enter(L, item) < 0)
			return -1;
		L->depth--;
		if (cfg_name_list(L, item, "members", &names, &locs, &count) < 0)
			return -1;
		if (count == 0) {
			free(names);
			free(locs);
			return cfg_node_error(L, item, "a group in 'members' names no host");
		}
		memcpy(g->members + g->nmembers, names, count * sizeof(char *));
		memcpy(g->member_locs + g->nmembers, locs, count * sizeof(struct src_loc));
		free(names);
		free(locs);
		g->nmembers += count;
		g->first[++g->ngroups] = g->nmembers;
	}
	return 0;
}

static const struct key wl_group_keys[] = {
    {"name", cfg_name, OFF(struct wl_group_list, name), .required = true},
    {"members", h_wl_members, .required = true},
    {NULL},
};

static const struct key wl_parallelism_keys[] = {
    {"tp", cfg_u32, OFF(struct wl_parallelism, tp), .min = 1, .max = CONFIG_MAX_HOSTS,
     .loc_off = LOC(struct wl_parallelism, tp_loc)},
    {"pp", cfg_u32, OFF(struct wl_parallelism, pp), .min = 1, .max = CONFIG_MAX_HOSTS,
     .loc_off = LOC(struct wl_parallelism, pp_loc)},
    {"dp", cfg_u32, OFF(struct wl_parallelism, dp), .min = 1, .max = CONFIG_MAX_HOSTS,
     .loc_off = LOC(struct wl_parallelism, dp_loc)},
    {"ep", cfg_u32, OFF(struct wl_parallelism, ep), .min = 1, .max = CONFIG_MAX_HOSTS,
     .loc_off = LOC(struct wl_parallelism, ep_loc)},
    {NULL},
};

static const struct choice wl_collectives[] = {
    {"allgather", SCHED_ALLGATHER}, {"reduce-scatter", SCHED_REDUCE_SCATTER},
    {"allreduce", SCHED_ALLREDUCE}, {"alltoall", SCHED_ALLTOALL},
    {"sendrecv", WL_SENDRECV},	    {NULL, 0},
};

static void wl_phase_init(void *p)
{
	((struct wl_phase *)p)->count = 1;
}

static const struct key wl_phase_keys[] = {
    {"name", cfg_name, OFF(struct wl_phase, name), .required = true,
     .loc_off = LOC(struct wl_phase, name_loc)},
    {"collective", cfg_choice, OFF(struct wl_phase, collective), .choices = wl_collectives,
     .loc_off = LOC(struct wl_phase, collective_loc),
     .set_off = OFF(struct wl_phase, collective_set) + 1},
    {"group", cfg_name, OFF(struct wl_phase, group), .loc_off = LOC(struct wl_phase, group_loc)},
    {"size", cfg_size, OFF(struct wl_phase, size), .min = 1, .max = 1.8e19,
     .loc_off = LOC(struct wl_phase, size_loc), .set_off = OFF(struct wl_phase, size_set) + 1},
    {"count", cfg_u32, OFF(struct wl_phase, count), .min = 1, .max = 1000000,
     .set_off = OFF(struct wl_phase, count_set) + 1},
    {"demand", cfg_str, OFF(struct wl_phase, demand), .loc_off = LOC(struct wl_phase, demand_loc)},
    {"traffic", cfg_str, OFF(struct wl_phase, traffic),
     .loc_off = LOC(struct wl_phase, traffic_loc)},
    {"reverse", cfg_bool, OFF(struct wl_phase, reverse)},
    {NULL},
};

const struct key cfg_workload_keys[] = {
    {"name", cfg_name, OFF(struct workload, name)},
    {"iterations", cfg_u32, OFF(struct workload, iterations), .min = 1, .max = 4000000000.0},
    {"parallelism", cfg_mapping, OFF(struct workload, parallelism), wl_parallelism_keys,
     .set_off = OFF(struct workload, parallelism_set) + 1},
    {"groups", cfg_list, OFF(struct workload, groups), wl_group_keys, sizeof(struct wl_group_list),
     OFF(struct workload, ngroups)},
    {"phases", cfg_list, OFF(struct workload, phases), wl_phase_keys, sizeof(struct wl_phase),
     OFF(struct workload, nphases), .required = true, .init = wl_phase_init},
    {NULL},
};

/* The config's workload section: read relative to the config. */
int cfg_workload(struct loader *L, yaml_node_t *n, const struct key *k, void *base)
{
	struct workload *w = cfg_field(base, k->off);

	w->present = true;
	free(w->file);
	free(w->dir);
	w->file = xstrdup(L->fab->file);
	w->dir = xstrdup(L->fab->dir);
	return cfg_process_mapping(L, n, cfg_workload_keys, w, "workload");
}
