/* The key tables of a fabric config's sections (docs/config.md) and the
 * handlers of their irregular values: hosts (listed or generated), the
 * devices' drivers, WDM rings, switches, wiring, the target topology (its
 * failed links and hosts, link rates), collectives, partitions, the cost
 * model, the testbed, and the config's own top-level table. */
#include "controller/config/loader.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ---- tables --------------------------------------------------------------- */

static void driver_init(struct driver_cfg *d)
{
	d->timeout = 5.0;
	d->retries = 2;
	d->port_map = TL1_PORT_MAP_DEFAULT;
}

static const struct choice netconf_transports[] = {
    {"ssh", NETCONF_SSH}, {"tls", NETCONF_TLS}, {NULL}};

static const struct choice tl1_dialects[] = {
    {"polatis", TL1_POLATIS}, {"calient", TL1_CALIENT}, {NULL}};

/* A Calient switch's port names: port k is shelf.slot.port (docs/tl1.md). */
static const struct key port_map_keys[] = {
    {"shelf", cfg_u32, OFF(struct tl1_port_map, shelf), .min = 1, .max = 255},
    {"first_slot", cfg_u32, OFF(struct tl1_port_map, first_slot), .min = 1, .max = 65535},
    {"slot_ports", cfg_u32, OFF(struct tl1_port_map, slot_ports), .min = 1, .max = 65535},
    {NULL},
};

static const struct choice netconf_datastores[] = {
    {"candidate", NETCONF_DS_CANDIDATE}, {"running", NETCONF_DS_RUNNING}, {NULL}};

/* Optical power in dBm ("-25dBm", "-25 dBm" or "-25"), within min..max. */
static int h_dbm(struct loader *L, yaml_node_t *n, const struct key *k, void *base)
{
	const char *s;
	char *end;
	double v;

	if (cfg_scalar(L, n, k, &s) < 0)
		return -1;
	errno = 0;
	v = strtod(s, &end);
	while (*end == ' ')
		end++;
	if (errno || end == s || (*end && strcmp(end, "dBm") != 0) || !(v >= k->min && v <= k->max))
		return cfg_node_error(L, n, "'%s' must be a power in dBm within %g..%g, got '%s'",
				      k->name, k->min, k->max, s);
	*(double *)cfg_field(base, k->off) = v;
	cfg_mark(k, base, n);
	return 0;
}

static int h_driver(struct loader *L, yaml_node_t *n, const struct key *k, void *base);

static const struct key driver_keys[] = {
    {"type", cfg_str, OFF(struct driver_cfg, type), .required = true},
    {"address", cfg_str, OFF(struct driver_cfg, address),
     .loc_off = LOC(struct driver_cfg, address_loc)},
    {"credentials", cfg_str, OFF(struct driver_cfg, credentials),
     .loc_off = LOC(struct driver_cfg, credentials_loc)},
    {"timeout", cfg_duration, OFF(struct driver_cfg, timeout), .min = 0.001, .max = 3600},
    {"retries", cfg_u32, OFF(struct driver_cfg, retries), .min = 0, .max = 10},
    {"dialect", cfg_choice, OFF(struct driver_cfg, dialect), .choices = tl1_dialects,
     .loc_off = LOC(struct driver_cfg, dialect_loc),
     .set_off = LOC(struct driver_cfg, dialect_set)},
    {"port_map", cfg_mapping, OFF(struct driver_cfg, port_map), .sub = port_map_keys,
     .loc_off = LOC(struct driver_cfg, port_map_loc),
     .set_off = LOC(struct driver_cfg, port_map_set)},
    {"known_hosts", cfg_str, OFF(struct driver_cfg, known_hosts),
     .loc_off = LOC(struct driver_cfg, known_hosts_loc),
     .set_off = LOC(struct driver_cfg, known_hosts_set)},
    {"datastore", cfg_choice, OFF(struct driver_cfg, datastore), .choices = netconf_datastores,
     .loc_off = LOC(struct driver_cfg, datastore_loc),
     .set_off = LOC(struct driver_cfg, datastore_set)},
    {"min_power", h_dbm, OFF(struct driver_cfg, min_power), .min = -100, .max = 30,
     .loc_off = LOC(struct driver_cfg, min_power_loc),
     .set_off = LOC(struct driver_cfg, min_power_set)},
    {"transport", cfg_choice, OFF(struct driver_cfg, transport), .choices = netconf_transports,
     .loc_off = LOC(struct driver_cfg, transport_loc),
     .set_off = LOC(struct driver_cfg, transport_set)},
    {"tls_ca", cfg_str, OFF(struct driver_cfg, tls_ca),
     .loc_off = LOC(struct driver_cfg, tls_ca_loc), .set_off = LOC(struct driver_cfg, tls_ca_set)},
    {"tls_server_name", cfg_str, OFF(struct driver_cfg, tls_server_name),
     .loc_off = LOC(struct driver_cfg, tls_server_name_loc),
     .set_off = LOC(struct driver_cfg, tls_server_name_set)},
    {"password", cfg_refuse,
     .why = "passwords never go in the config: put them in a credentials file and "
	    "name it with 'credentials: PATH'"},
    {NULL},
};

static int h_driver(struct loader *L, yaml_node_t *n, const struct key *k, void *base)
{
	struct driver_cfg *d = cfg_field(base, k->off);

	driver_init(d);
	d->present = true;
	return cfg_process_mapping(L, n, driver_keys, d, k->name);
}

static void host_init(void *p)
{
	struct host *h = p;

	h->ports = 1;
}

/* failed_ports: a list of port numbers 0..63 (range against the host's
 * ports is validation's). */
static int h_failed_ports(struct loader *L, yaml_node_t *n, const struct key *k, void *base)
{
	struct host *h = base;

	if (n->type != YAML_SEQUENCE_NODE)
		return cfg_node_error(L, n, "'%s' must be a list of port numbers, not %s", k->name,
				      cfg_type_name(n));
	size_t total = (size_t)(n->data.sequence.items.top - n->data.sequence.items.start);
	if (total == 0 || total > 64)
		return cfg_node_error(L, n, "'%s' needs 1..64 ports", k->name);
	h->failed_ports = xcalloc(total, sizeof(uint32_t));
	h->failed_port_locs = xcalloc(total, sizeof(struct src_loc));
	for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top;
	     it++) {
		yaml_node_t *item = yaml_document_get_node(&L->doc, *it);
		struct key pk = {.name = k->name, .min = 0, .max = 63};

		if (cfg_enter(L, item) < 0)
			return -1;
		L->depth--;
		if (cfg_u32(L, item, &pk, &h->failed_ports[h->nfailed_ports]) < 0)
			return -1;
		/* A port named twice is a typo for another port (as a host or
		 * link named twice is refused), not a port failed twice. */
		for (uint32_t j = 0; j < h->nfailed_ports; j++)
			if (h->failed_ports[j] == h->failed_ports[h->nfailed_ports])
				return cfg_node_error(
				    L, item,
				    "'%s' names port %u twice (first at line %u, column %u)",
				    k->name, h->failed_ports[j], h->failed_port_locs[j].line,
				    h->failed_port_locs[j].col);
		h->failed_port_locs[h->nfailed_ports++] = cfg_loc_of(item);
	}
	return 0;
}

/* port_rates: one rate per NIC port, port 0 first (the count against the
 * host's ports is validation's), into the struct rate_list at k->off. */
static int h_port_rates(struct loader *L, yaml_node_t *n, const struct key *k, void *base)
{
	struct rate_list *rf = cfg_field(base, k->off);

	if (n->type != YAML_SEQUENCE_NODE)
		return cfg_node_error(L, n, "'%s' must be a list of rates, one per port, not %s",
				      k->name, cfg_type_name(n));
	size_t total = (size_t)(n->data.sequence.items.top - n->data.sequence.items.start);
	if (total == 0 || total > 64)
		return cfg_node_error(L, n, "'%s' needs 1..64 rates", k->name);
	rf->v = xcalloc(total, sizeof(double));
	rf->loc = cfg_loc_of(n);
	for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top;
	     it++) {
		yaml_node_t *item = yaml_document_get_node(&L->doc, *it);
		struct key rk = {.name = k->name};

		if (cfg_enter(L, item) < 0)
			return -1;
		L->depth--;
		if (cfg_rate(L, item, &rk, &rf->v[rf->n]) < 0)
			return -1;
		rf->n++;
	}
	return 0;
}

static const struct choice forwarding_modes[] = {
    {"host", HOST_FORWARDING},
    {"nic", NIC_FORWARDING},
    {NULL, 0},
};

static const struct key host_keys[] = {
    {"name", cfg_name, OFF(struct host, name), .required = true},
    {"ports", cfg_u32, OFF(struct host, ports), .min = 1, .max = 64},
    {"port_rate", cfg_rate, OFF(struct host, port_rate)},
    {"port_rates", h_port_rates, OFF(struct host, port_rates)},
    {"server", cfg_name, OFF(struct host, server), .loc_off = LOC(struct host, server_loc)},
    {"failed", cfg_bool, OFF(struct host, failed), .loc_off = LOC(struct host, failed_loc)},
    {"injection", cfg_rate, OFF(struct host, injection),
     .loc_off = LOC(struct host, injection_loc)},
    {"forwarding", cfg_choice, OFF(struct host, forwarding), .choices = forwarding_modes},
    {"failed_ports", h_failed_ports},
    {NULL},
};

struct host_gen {
	struct src_loc loc;
	uint32_t count;
	char *prefix;
	uint32_t start;
	uint32_t ports;
	double port_rate;
	struct rate_list port_rates;
	double injection;
	int forwarding;
};

static const struct key host_gen_keys[] = {
    {"count", cfg_u32, OFF(struct host_gen, count), .min = 1, .max = CONFIG_MAX_HOSTS,
     .required = true},
    {"prefix", cfg_name, OFF(struct host_gen, prefix)},
    {"first_index", cfg_u32, OFF(struct host_gen, start), .min = 0, .max = 1000000000},
    {"ports", cfg_u32, OFF(struct host_gen, ports), .min = 1, .max = 64},
    {"port_rate", cfg_rate, OFF(struct host_gen, port_rate)},
    {"port_rates", h_port_rates, OFF(struct host_gen, port_rates)},
    {"injection", cfg_rate, OFF(struct host_gen, injection)},
    {"forwarding", cfg_choice, OFF(struct host_gen, forwarding), .choices = forwarding_modes},
    {NULL},
};

/* hosts: a list of {name, ports, port_rate}, or {count, prefix, ...}. */
static int h_hosts(struct loader *L, yaml_node_t *n, const struct key *k, void *base)
{
	struct fabric *f = base;

	f->hosts_loc = cfg_loc_of(n);
	if (n->type == YAML_SEQUENCE_NODE) {
		struct key list = {.name = k->name,
				   .fn = cfg_list,
				   .off = OFF(struct fabric, hosts),
				   .sub = host_keys,
				   .size = sizeof(struct host),
				   .count_off = OFF(struct fabric, nhosts),
				   .init = host_init};
		return cfg_list(L, n, &list, base);
	}
	if (n->type != YAML_MAPPING_NODE)
		return cfg_node_error(
		    L, n,
		    "'hosts' must be a list of hosts or a mapping with 'count' and "
		    "'prefix', not %s",
		    cfg_type_name(n));
	struct host_gen g = {.ports = 1};
	int rc = cfg_process_mapping(L, n, host_gen_keys, &g, "hosts");
	if (rc == 0) {
		const char *prefix = g.prefix ? g.prefix : "host";

		f->hosts = xcalloc(g.count, sizeof(struct host));
		f->hosts_generated = true;
		for (uint32_t i = 0; i < g.count; i++) {
			struct host *h = &f->hosts[i];

			h->loc = cfg_loc_of(n);
			h->name = xasprintf("%s%u", prefix, g.start + i);
			h->ports = g.ports;
			h->port_rate = g.port_rate;
			h->injection = g.injection;
			h->injection_loc = cfg_loc_of(n);
			h->forwarding = g.forwarding;
			if (g.port_rates.n) {
				h->port_rates = g.port_rates;
				h->port_rates.v = xmalloc(g.port_rates.n * sizeof(double));
				memcpy(h->port_rates.v, g.port_rates.v,
				       g.port_rates.n * sizeof(double));
			}
		}
		f->nhosts = g.count;
		if (strlen(f->hosts[g.count - 1].name) > NAME_MAX_LEN)
			rc = cfg_node_error(L, n,
					    "generated host names are longer than %d characters",
					    NAME_MAX_LEN);
	}
	free(g.prefix);
	free(g.port_rates.v);
	return rc;
}

static int h_ring_nodes(struct loader *L, yaml_node_t *n, const struct key *k, void *base)
{
	struct ring *r = base;

	(void)k;
	r->nodes_loc = cfg_loc_of(n);
	if (n->type == YAML_SCALAR_NODE) {
		if (strcmp((const char *)n->data.scalar.value, "all") == 0) {
			r->all_nodes = true;
			return 0;
		}
		return cfg_node_error(L, n,
				      "'nodes' must be 'all' or a list of host names, got '%s'",
				      (const char *)n->data.scalar.value);
	}
	return cfg_name_list(L, n, "nodes", &r->node_names, &r->node_locs, &r->nnode_names);
}

static void ring_init(void *p)
{
	struct ring *r = p;

	r->fibres = 1;
	r->interfaces = 1;
	r->mrr_delay = 25e-6;
	driver_init(&r->driver);
}

static const struct key lightpath_keys[] = {
    {"from", cfg_name, OFF(struct lightpath_cfg, from), .required = true},
    {"to", cfg_name, OFF(struct lightpath_cfg, to), .required = true},
    {"wavelength", cfg_u32, OFF(struct lightpath_cfg, wavelength), .min = 0, .max = 4095,
     .required = true},
    {"interface", cfg_u32, OFF(struct lightpath_cfg, interface), .min = 0, .max = 63},
    {NULL},
};

static const struct key ring_keys[] = {
    {"name", cfg_name, OFF(struct ring, name), .required = true},
    {"nodes", h_ring_nodes, .required = true},
    {"wavelengths", cfg_u32, OFF(struct ring, wavelengths), .min = 1, .max = 4096,
     .required = true},
    {"fibres_per_direction", cfg_u32, OFF(struct ring, fibres), .min = 1, .max = 64},
    {"rate_per_wavelength", cfg_rate, OFF(struct ring, rate), .required = true},
    {"interfaces_per_node", cfg_u32, OFF(struct ring, interfaces), .min = 1, .max = 64},
    {"mrrs_per_interface", cfg_u32, OFF(struct ring, mrrs), .min = 1, .max = 4096},
    {"mrr_tuning_delay", cfg_duration, OFF(struct ring, mrr_delay), .min = 0, .max = 10},
    {"oeo_delay", cfg_duration, OFF(struct ring, oeo_delay), .min = 0, .max = 10},
    {"driver", h_driver, OFF(struct ring, driver)},
    {"lightpaths", cfg_list, OFF(struct ring, lightpaths), lightpath_keys,
     sizeof(struct lightpath_cfg), OFF(struct ring, nlightpaths)},
    {NULL},
};

static const struct choice switch_types[] = {
    {"ocs", SWITCH_OCS},
    {"patch-panel", SWITCH_PATCH_PANEL},
    {NULL, 0},
};

static void switch_init(void *p)
{
	struct fswitch *s = p;

	driver_init(&s->driver);
}

static const struct key switch_keys[] = {
    {"name", cfg_name, OFF(struct fswitch, name), .required = true},
    {"type", cfg_choice, OFF(struct fswitch, kind), .choices = switch_types, .required = true},
    {"ports", cfg_u32, OFF(struct fswitch, ports), .min = 1, .max = 100000, .required = true,
     .loc_off = LOC(struct fswitch, ports_loc)},
    {"reconfig_time", cfg_duration, OFF(struct fswitch, reconfig_time), .min = 0, .max = 3600,
     .loc_off = LOC(struct fswitch, reconfig_loc),
     .set_off = OFF(struct fswitch, reconfig_set) + 1},
    {"move_time", cfg_duration, OFF(struct fswitch, move_time), .min = 0, .max = 86400,
     .loc_off = LOC(struct fswitch, move_loc), .set_off = OFF(struct fswitch, move_set) + 1},
    {"driver", h_driver, OFF(struct fswitch, driver)},
    {NULL},
};

static const struct choice wiring_patterns[] = {
    {"sequential", WIRING_SEQUENTIAL},
    {"per-port", WIRING_PER_PORT},
    {NULL, 0},
};

static int h_wiring_switches(struct loader *L, yaml_node_t *n, const struct key *k, void *base)
{
	struct wiring_cfg *w = base;

	(void)k;
	return cfg_name_list(L, n, "switches", &w->switch_names, &w->switch_locs,
			     &w->nswitch_names);
}

static const struct key wiring_pattern_keys[] = {
    {"pattern", cfg_choice, OFF(struct wiring_cfg, pattern), .choices = wiring_patterns,
     .required = true},
    {"switches", h_wiring_switches, .required = true},
    {"first_port", cfg_u32, OFF(struct wiring_cfg, first_port), .min = 1, .max = 100000},
    {NULL},
};

static const struct key attachment_keys[] = {
    {"host", cfg_name, OFF(struct attachment, host_name), .required = true},
    {"port", cfg_u32, OFF(struct attachment, host_port), .min = 0, .max = 63, .required = true},
    {"switch", cfg_name, OFF(struct attachment, switch_name), .required = true},
    {"switch_port", cfg_u32, OFF(struct attachment, sw_port), .min = 1, .max = 100000,
     .required = true},
    {NULL},
};

/* wiring: {pattern, switches, first_port}, or a list of attachments. */
static int h_wiring(struct loader *L, yaml_node_t *n, const struct key *k, void *base)
{
	struct wiring_cfg *w = cfg_field(base, k->off);

	w->loc = cfg_loc_of(n);
	w->first_port = 1;
	if (n->type == YAML_SEQUENCE_NODE) {
		struct key list = {.name = "wiring",
				   .off = OFF(struct wiring_cfg, explicit_list),
				   .sub = attachment_keys,
				   .size = sizeof(struct attachment),
				   .count_off = OFF(struct wiring_cfg, nexplicit)};
		w->pattern = WIRING_EXPLICIT;
		return cfg_list(L, n, &list, w);
	}
	if (n->type != YAML_MAPPING_NODE)
		return cfg_node_error(
		    L, n,
		    "'wiring' must be a mapping with 'pattern' and 'switches', or a "
		    "list of {host, port, switch, switch_port}, not %s",
		    cfg_type_name(n));
	return cfg_process_mapping(L, n, wiring_pattern_keys, w, "wiring");
}

static int h_spec(struct loader *L, yaml_node_t *n, const struct key *k, void *base)
{
	struct topo_target *t = base;
	const char *s;

	if (cfg_scalar(L, n, k, &s) < 0)
		return -1;
	if (!*s)
		return cfg_node_error(L, n, "'%s' must not be empty", k->name);
	free(t->spec);
	t->spec = xstrdup(s);
	t->spec_loc = cfg_loc_of(n);
	t->spec_quoted = n->data.scalar.style == YAML_SINGLE_QUOTED_SCALAR_STYLE ||
			 n->data.scalar.style == YAML_DOUBLE_QUOTED_SCALAR_STYLE;
	return 0;
}

static const struct choice lp_solvers[] = {
    {"lpsolve", LP_SOLVER_LPSOLVE},
    {"clp", LP_SOLVER_CLP},
    {NULL, 0},
};

static const struct choice self_loop_modes[] = {
    {"loopback", SELF_LOOPS_LOOPBACK},
    {"dark", SELF_LOOPS_DARK},
    {NULL, 0},
};

/* The two host names that open item, a list (failed_links, link_rates). */
static int host_pair(struct loader *L, yaml_node_t *item, const struct key *k, const char *end[2])
{
	for (int i = 0; i < 2; i++) {
		yaml_node_t *h =
		    yaml_document_get_node(&L->doc, item->data.sequence.items.start[i]);
		struct key hk = {.name = k->name};

		if (cfg_scalar(L, h, &hk, &end[i]) < 0 ||
		    cfg_check_name(L, h, "host name", end[i]) < 0)
			return -1;
	}
	return 0;
}

/* failed_links: a list of [HOST, HOST] pairs. */
static int h_failed_links(struct loader *L, yaml_node_t *n, const struct key *k, void *base)
{
	struct topo_target *t = base;

	if (n->type != YAML_SEQUENCE_NODE)
		return cfg_node_error(L, n, "'%s' must be a list of [HOST, HOST] pairs, not %s",
				      k->name, cfg_type_name(n));
	size_t total = (size_t)(n->data.sequence.items.top - n->data.sequence.items.start);
	if (total > CONFIG_MAX_HOSTS * 64u)
		return cfg_node_error(L, n, "'%s' has too many entries", k->name);
	t->failed_links = xcalloc(total ? total : 1, sizeof(struct failed_link));
	for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top;
	     it++) {
		yaml_node_t *item = yaml_document_get_node(&L->doc, *it);
		struct failed_link *fl = &t->failed_links[t->nfailed_links];
		const char *end[2];

		if (cfg_enter(L, item) < 0)
			return -1;
		L->depth--;
		if (item->type != YAML_SEQUENCE_NODE ||
		    item->data.sequence.items.top - item->data.sequence.items.start != 2)
			return cfg_node_error(
			    L, item, "a failed link is a pair of hosts, [HOST, HOST], not %s",
			    cfg_type_name(item));
		if (host_pair(L, item, k, end) < 0)
			return -1;
		fl->loc = cfg_loc_of(item);
		fl->a = xstrdup(end[0]);
		fl->b = xstrdup(end[1]);
		t->nfailed_links++;
	}
	return 0;
}

/* failed_hosts: a list of host names. */
static int h_failed_hosts(struct loader *L, yaml_node_t *n, const struct key *k, void *base)
{
	struct topo_target *t = base;

	if (n->type != YAML_SEQUENCE_NODE)
		return cfg_node_error(L, n, "'%s' must be a list of host names, not %s", k->name,
				      cfg_type_name(n));
	size_t total = (size_t)(n->data.sequence.items.top - n->data.sequence.items.start);
	if (total > CONFIG_MAX_HOSTS)
		return cfg_node_error(L, n, "'%s' has too many entries", k->name);
	t->failed_hosts = xcalloc(total ? total : 1, sizeof(struct failed_host));
	for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top;
	     it++) {
		yaml_node_t *item = yaml_document_get_node(&L->doc, *it);
		struct key hk = {.name = k->name};
		const char *name;

		if (cfg_scalar(L, item, &hk, &name) < 0 ||
		    cfg_check_name(L, item, "host name", name) < 0)
			return -1;
		t->failed_hosts[t->nfailed_hosts].loc = cfg_loc_of(item);
		t->failed_hosts[t->nfailed_hosts++].name = xstrdup(name);
	}
	return 0;
}

/* link_rates: a list of [HOST, HOST, RATE]. */
static int h_link_rates(struct loader *L, yaml_node_t *n, const struct key *k, void *base)
{
	struct topo_target *t = base;

	if (n->type != YAML_SEQUENCE_NODE)
		return cfg_node_error(L, n, "'%s' must be a list of [HOST, HOST, RATE], not %s",
				      k->name, cfg_type_name(n));
	size_t total = (size_t)(n->data.sequence.items.top - n->data.sequence.items.start);
	if (total > CONFIG_MAX_HOSTS * 64u)
		return cfg_node_error(L, n, "'%s' has too many entries", k->name);
	t->link_rates = xcalloc(total ? total : 1, sizeof(struct link_rate));
	for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top;
	     it++) {
		yaml_node_t *item = yaml_document_get_node(&L->doc, *it);
		struct link_rate *lr = &t->link_rates[t->nlink_rates];
		const char *end[2];

		if (cfg_enter(L, item) < 0)
			return -1;
		L->depth--;
		if (item->type != YAML_SEQUENCE_NODE)
			return cfg_node_error(
			    L, item,
			    "a link's rate is [HOST, HOST, RATE], e.g. [h0, h1, 25Gbps], "
			    "not %s",
			    cfg_type_name(item));
		if (item->data.sequence.items.top - item->data.sequence.items.start != 3)
			return cfg_node_error(
			    L, item,
			    "a link's rate is [HOST, HOST, RATE], e.g. [h0, h1, 25Gbps]: this list "
			    "has %d item%s",
			    (int)(item->data.sequence.items.top - item->data.sequence.items.start),
			    item->data.sequence.items.top - item->data.sequence.items.start == 1
				? ""
				: "s");
		if (host_pair(L, item, k, end) < 0)
			return -1;
		struct key rk = {.name = k->name};
		if (cfg_rate(L, yaml_document_get_node(&L->doc, item->data.sequence.items.start[2]),
			     &rk, &lr->rate) < 0)
			return -1;
		lr->loc = cfg_loc_of(item);
		lr->a = xstrdup(end[0]);
		lr->b = xstrdup(end[1]);
		t->nlink_rates++;
	}
	return 0;
}

static const struct key topology_keys[] = {
    {"spec", h_spec, .required = true},
    {"failed_links", h_failed_links},
    {"failed_hosts", h_failed_hosts},
    {"link_rates", h_link_rates},
    {"self_loops", cfg_choice, OFF(struct topo_target, self_loops), .choices = self_loop_modes},
    {NULL},
};

/* topology: SPEC, or {spec: SPEC, self_loops: loopback|dark}. */
static int h_topology(struct loader *L, yaml_node_t *n, const struct key *k, void *base)
{
	struct topo_target *t = cfg_field(base, k->off);

	t->present = true;
	t->loc = cfg_loc_of(n);
	t->self_loops = SELF_LOOPS_LOOPBACK;
	if (n->type == YAML_SCALAR_NODE)
		return h_spec(L, n, k, t);
	if (n->type != YAML_MAPPING_NODE)
		return cfg_node_error(
		    L, n,
		    "'topology' must be a spec such as torus:8x8, or a mapping with "
		    "'spec', not %s",
		    cfg_type_name(n));
	return cfg_process_mapping(L, n, topology_keys, t, "topology");
}

static const struct choice collective_ops[] = {
    {"allgather", SCHED_ALLGATHER},
    {"reduce-scatter", SCHED_REDUCE_SCATTER},
    {"allreduce", SCHED_ALLREDUCE},
    {"alltoall", SCHED_ALLTOALL},
    {NULL, 0},
};

static const struct key collective_keys[] = {
    {"op", cfg_choice, OFF(struct collective, op), .choices = collective_ops, .required = true},
    {"size", cfg_size, OFF(struct collective, size), .min = 1, .max = 1.8e19, .required = true},
    {"algorithm", cfg_name, OFF(struct collective, algorithm)},
    {NULL},
};

/* A partition's hosts: names, or "HOST:PORT" for one port of a host. */
static int h_part_hosts(struct loader *L, yaml_node_t *n, const struct key *k, void *base)
{
	struct partition *p = base;

	(void)k;
	if (n->type != YAML_SEQUENCE_NODE)
		return cfg_node_error(L, n, "'hosts' must be a list of HOST or HOST:PORT, not %s",
				      cfg_type_name(n));
	size_t total = (size_t)(n->data.sequence.items.top - n->data.sequence.items.start);
	if (total == 0 || total > CONFIG_MAX_HOSTS)
		return cfg_node_error(L, n, "'hosts' needs 1..%u entries", CONFIG_MAX_HOSTS);
	p->members = xcalloc(total, sizeof(char *));
	p->member_locs = xcalloc(total, sizeof(struct src_loc));
	p->nmembers = 0;
	for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top;
	     it++) {
		yaml_node_t *item = yaml_document_get_node(&L->doc, *it);
		struct key hk = {.name = "hosts"};
		const char *s;

		if (cfg_enter(L, item) < 0)
			return -1;
		L->depth--;
		if (cfg_scalar(L, item, &hk, &s) < 0)
			return -1;
		const char *colon = strchr(s, ':');
		char host[NAME_MAX_LEN + 1];
		size_t hl = colon ? (size_t)(colon - s) : strlen(s);

		if (hl > NAME_MAX_LEN)
			return cfg_check_name(L, item, "host name", s);
		memcpy(host, s, hl);
		host[hl] = 0;
		if (cfg_check_name(L, item, "host name", host) < 0)
			return -1;
		if (colon) {
			char *end;
			unsigned long port = strtoul(colon + 1, &end, 10);

			if (!colon[1] || *end || port > 63)
				return cfg_node_error(L, item,
						      "'%s': the port after ':' must be 0..63", s);
		}
		p->member_locs[p->nmembers] = cfg_loc_of(item);
		p->members[p->nmembers++] = xstrdup(s);
	}
	return 0;
}

static const struct key partition_keys[] = {
    {"name", cfg_name, OFF(struct partition, name), .required = true},
    {"hosts", h_part_hosts, .required = true},
    {"topology", h_topology, OFF(struct partition, topology)},
    {"collectives", cfg_list, OFF(struct partition, collectives), collective_keys,
     sizeof(struct collective), OFF(struct partition, ncollectives)},
    {NULL},
};

static const struct key switch_overhead_keys[] = {
    {"transaction", cfg_duration, OFF(struct switch_overhead, transaction), .min = 0, .max = 86400},
    {"circuit", cfg_duration, OFF(struct switch_overhead, circuit), .min = 0, .max = 86400},
    {NULL},
};

static const struct key cost_keys[] = {
    {"alpha", cfg_duration, OFF(struct cost_model, alpha), .min = 0, .max = 10,
     .set_off = OFF(struct cost_model, alpha_set) + 1},
    {"link_bandwidth", cfg_rate, OFF(struct cost_model, link_bandwidth),
     .set_off = OFF(struct cost_model, bandwidth_set) + 1},
    {"switch_overhead", cfg_mapping, OFF(struct cost_model, switch_overhead), switch_overhead_keys},
    {NULL},
};

static const struct key testbed_keys[] = {
    {"link_rate", cfg_rate, OFF(struct testbed_cfg, link_rate)},
    {"link_latency", cfg_duration, OFF(struct testbed_cfg, link_latency), .min = 0, .max = 1},
    {"rate_scale", cfg_scale, OFF(struct testbed_cfg, rate_scale)},
    {NULL},
};

const struct key cfg_fabric_keys[] = {
    {"version", cfg_u32, OFF(struct fabric, version), .min = 1, .max = 1},
    {"name", cfg_name, OFF(struct fabric, name), .required = true,
     .loc_off = LOC(struct fabric, name_loc)},
    {"description", cfg_str, OFF(struct fabric, description)},
    {"hosts", h_hosts, .required = true},
    {"rings", cfg_list, OFF(struct fabric, rings), ring_keys, sizeof(struct ring),
     OFF(struct fabric, nrings), .init = ring_init},
    {"switches", cfg_list, OFF(struct fabric, switches), switch_keys, sizeof(struct fswitch),
     OFF(struct fabric, nswitches), .init = switch_init},
    {"wiring", h_wiring, OFF(struct fabric, wiring_cfg)},
    {"topology", h_topology, OFF(struct fabric, topology)},
    {"collectives", cfg_list, OFF(struct fabric, collectives), collective_keys,
     sizeof(struct collective), OFF(struct fabric, ncollectives)},
    {"partitions", cfg_list, OFF(struct fabric, partitions), partition_keys,
     sizeof(struct partition), OFF(struct fabric, npartitions)},
    {"cost_model", cfg_mapping, OFF(struct fabric, cost), cost_keys},
    {"lp_solver", cfg_choice, OFF(struct fabric, lp_solver), .choices = lp_solvers},
    {"testbed", cfg_mapping, OFF(struct fabric, testbed), testbed_keys},
    {"servers", cfg_list, OFF(struct fabric, servers), cfg_server_keys,
     sizeof(struct server_template), OFF(struct fabric, nservers)},
    {"fabric_vertices", cfg_list, OFF(struct fabric, fvertices), cfg_sv_vertex_keys,
     sizeof(struct sv_vertex), OFF(struct fabric, nfvertices)},
    {"fabric_links", cfg_list, OFF(struct fabric, flinks), cfg_sv_link_keys, sizeof(struct sv_link),
     OFF(struct fabric, nflinks)},
    {"capacity_sets", cfg_list, OFF(struct fabric, fsets), cfg_sv_set_keys, sizeof(struct sv_set),
     OFF(struct fabric, nfsets)},
    {"workload", cfg_workload, OFF(struct fabric, workload)},
    {NULL},
};
