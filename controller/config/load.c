/* YAML fabric configs, read with libyaml's document API and walked with one
 * table per mapping (after netplan's parse.c): each table entry names a key,
 * the handler that reads its value and where the value goes (an offsetof
 * into the struct being filled). cfg_process_mapping() walks any mapping with
 * any table, rejects unknown and duplicate keys, and reports missing ones.
 * Every error is raised on a YAML node and so names FILE:LINE:COL.
 *
 * Hostile input is bounded before the document is built: a pre-pass over
 * the event stream limits nesting depth and the size of the document with
 * its aliases expanded (so aliases that expand without bound, or refer to
 * themselves, are refused); the walk also counts the nodes it visits.
 */
#include "controller/config/config.h"

#include <errno.h>
#include <libgen.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

struct loader {
	const char *file;
	const char *text;
	size_t len;
	yaml_document_t doc;
	struct ofc_error *err;
	struct fabric *fab;
	uint64_t visits;
	int depth;
};

struct key;
typedef int (*handler_fn)(struct loader *, yaml_node_t *, const struct key *, void *base);

struct choice {
	const char *name;
	int value;
};

struct key {
	const char *name;
	handler_fn fn;
	size_t off;	       /* where the value goes in base */
	const struct key *sub; /* nested mapping table */
	size_t size;	       /* sequences of mappings: element size */
	size_t count_off;      /* sequences: offset of the uint32_t count */
	size_t loc_off;	       /* offset + 1 of a struct src_loc for the value; 0: none */
	size_t set_off;	       /* offset + 1 of a bool set when the key is present */
	double min, max;       /* numeric range (min == max == 0: none) */
	bool required;
	const struct choice *choices;
	void (*init)(void *elem); /* defaults for a new element */
	const char *why;	  /* message for keys that are refused */
};

#define OFF(type, field) offsetof(type, field)
#define LOC(type, field) (offsetof(type, field) + 1)

/* ---- errors on nodes ------------------------------------------------------ */

static int cfg_node_error(struct loader *L, const yaml_node_t *n, const char *fmt, ...)
    OFC_PRINTF(3, 4);
static int cfg_node_error(struct loader *L, const yaml_node_t *n, const char *fmt, ...)
{
	va_list ap;

	L->err->code = OFC_E_INPUT;
	snprintf(L->err->file, sizeof(L->err->file), "%s", L->file);
	L->err->line = n ? (unsigned)n->start_mark.line + 1 : 1;
	L->err->col = n ? (unsigned)n->start_mark.column + 1 : 1;
	va_start(ap, fmt);
	vsnprintf(L->err->msg, sizeof(L->err->msg), fmt, ap);
	va_end(ap);
	return -1;
}

static struct src_loc cfg_loc_of(const yaml_node_t *n)
{
	return (struct src_loc){(uint32_t)n->start_mark.line + 1,
				(uint32_t)n->start_mark.column + 1};
}

static void *cfg_field(void *base, size_t off)
{
	return (char *)base + off;
}

static void cfg_mark(const struct key *k, void *base, const yaml_node_t *n)
{
	if (k->loc_off)
		*(struct src_loc *)cfg_field(base, k->loc_off - 1) = cfg_loc_of(n);
	if (k->set_off)
		*(bool *)cfg_field(base, k->set_off - 1) = true;
}

static const char *cfg_type_name(const yaml_node_t *n)
{
	switch (n->type) {
	case YAML_SCALAR_NODE:
		return "a scalar";
	case YAML_SEQUENCE_NODE:
		return "a list";
	case YAML_MAPPING_NODE:
		return "a mapping";
	default:
		return "nothing";
	}
}

/* The scalar's text, or an error when the node is not a scalar or holds a
 * NUL (which would silently cut the value short). */
static int cfg_scalar(struct loader *L, yaml_node_t *n, const struct key *k, const char **out)
{
	if (n->type != YAML_SCALAR_NODE)
		return cfg_node_error(L, n, "'%s' must be a single value, not %s", k->name,
				      cfg_type_name(n));
	if (strlen((const char *)n->data.scalar.value) != n->data.scalar.length)
		return cfg_node_error(L, n, "'%s' contains a NUL character", k->name);
	*out = (const char *)n->data.scalar.value;
	return 0;
}

static bool cfg_range_set(const struct key *k)
{
	return k->min != 0 || k->max != 0;
}

/* ---- generic handlers ----------------------------------------------------- */

static int cfg_str(struct loader *L, yaml_node_t *n, const struct key *k, void *base)
{
	const char *s;

	if (cfg_scalar(L, n, k, &s) < 0)
		return -1;
	if (!*s && k->required)
		return cfg_node_error(L, n, "'%s' must not be empty", k->name);
	char **dst = cfg_field(base, k->off);
	free(*dst);
	*dst = xstrdup(s);
	cfg_mark(k, base, n);
	return 0;
}

static bool cfg_valid_name(const char *s)
{
	size_t len = strlen(s);

	if (len == 0 || len > NAME_MAX_LEN)
		return false;
	if (!((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z') ||
	      (s[0] >= '0' && s[0] <= '9')))
		return false;
	for (const char *p = s; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || *p == '-' || *p == '_' || *p == '.'))
			return false;
	return true;
}

static int cfg_check_name(struct loader *L, yaml_node_t *n, const char *what, const char *s)
{
	if (!cfg_valid_name(s))
		return cfg_node_error(L, n,
				      "invalid %s '%s': use 1-%d letters, digits, '-', '_' or '.', "
				      "starting with a letter or digit",
				      what, s, NAME_MAX_LEN);
	return 0;
}

static int cfg_name(struct loader *L, yaml_node_t *n, const struct key *k, void *base)
{
	const char *s;

	if (cfg_scalar(L, n, k, &s) < 0 || cfg_check_name(L, n, k->name, s) < 0)
		return -1;
	return cfg_str(L, n, k, base);
}

static int cfg_u32(struct loader *L, yaml_node_t *n, const struct key *k, void *base)
{
	const char *s;
	uint64_t v;

	if (cfg_scalar(L, n, k, &s) < 0)
		return -1;
	if (s[0] == '-')
		return cfg_node_error(L, n, "'%s' must not be negative, got '%s'", k->name, s);
	if (parse_u64(s, &v) < 0 || v > UINT32_MAX) {
		if (cfg_range_set(k))
			return cfg_node_error(L, n,
					      "'%s' must be an integer in %.0f..%.0f, got '%s'",
					      k->name, k->min, k->max, s);
		return cfg_node_error(L, n, "'%s' must be an integer, got '%s'", k->name, s);
	}
	if (cfg_range_set(k) && ((double)v < k->min || (double)v > k->max))
		return cfg_node_error(L, n, "'%s' must be in %.0f..%.0f, got %llu", k->name, k->min,
				      k->max, (unsigned long long)v);
	*(uint32_t *)cfg_field(base, k->off) = (uint32_t)v;
	cfg_mark(k, base, n);
	return 0;
}

/* Sizes (64MiB), rates (40Gbps) and durations (25us): the unit's parser,
 * its range, and the field's type (uint64_t bytes, double bits/s or s). */
enum quantity { Q_SIZE, Q_RATE, Q_DURATION };

static int h_quantity(struct loader *L, yaml_node_t *n, const struct key *k, void *base,
		      enum quantity q)
{
	static const char *const what[] = {"size", "rate", "duration"};
	const char *s, *why;
	uint64_t bytes = 0;
	double v = 0;
	int rc;

	if (cfg_scalar(L, n, k, &s) < 0)
		return -1;
	rc = q == Q_SIZE   ? parse_size(s, &bytes, &why)
	     : q == Q_RATE ? parse_rate(s, &v, &why)
			   : parse_duration(s, &v, &why);
	if (rc < 0)
		return cfg_node_error(L, n, "'%s': bad %s '%s': %s", k->name, what[q], s, why);
	switch (q) {
	case Q_SIZE:
		if (cfg_range_set(k) && ((double)bytes < k->min || (double)bytes > k->max))
			return cfg_node_error(L, n, "'%s' must be at least %.0f bytes, got '%s'",
					      k->name, k->min, s);
		*(uint64_t *)cfg_field(base, k->off) = bytes;
		break;
	case Q_RATE:
		if (v <= 0)
			return cfg_node_error(L, n, "'%s' must be greater than zero", k->name);
		if (v > 1e15)
			return cfg_node_error(L, n, "'%s' is out of range (above 1 Pb/s): '%s'",
					      k->name, s);
		*(double *)cfg_field(base, k->off) = v;
		break;
	case Q_DURATION:
		if (cfg_range_set(k) && (v < k->min || v > k->max))
			return cfg_node_error(L, n,
					      "'%s' is out of range: '%s' (allowed %g s to %g s)",
					      k->name, s, k->min, k->max);
		*(double *)cfg_field(base, k->off) = v;
		break;
	}
	cfg_mark(k, base, n);
	return 0;
}

static int cfg_size(struct loader *L, yaml_node_t *n, const struct key *k, void *base)
{
	return h_quantity(L, n, k, base, Q_SIZE);
}

static int cfg_rate(struct loader *L, yaml_node_t *n, const struct key *k, void *base)
{
	return h_quantity(L, n, k, base, Q_RATE);
}

static int cfg_duration(struct loader *L, yaml_node_t *n, const struct key *k, void *base)
{
	return h_quantity(L, n, k, base, Q_DURATION);
}

/* A plain number in (0, 1]: the testbed's rate_scale. */
static int cfg_scale(struct loader *L, yaml_node_t *n, const struct key *k, void *base)
{
	const char *s;
	char *end;
	double v;

	if (cfg_scalar(L, n, k, &s) < 0)
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !(v > 0 && v <= 1))
		return cfg_node_error(L, n, "'%s' must be a number in (0, 1], got '%s'", k->name,
				      s);
	*(double *)cfg_field(base, k->off) = v;
	cfg_mark(k, base, n);
	return 0;
}

static int cfg_choice(struct loader *L, yaml_node_t *n, const struct key *k, void *base)
{
	struct strbuf sb = STRBUF_INIT;
	const char *s;

	if (cfg_scalar(L, n, k, &s) < 0)
		return -1;
	for (const struct choice *c = k->choices; c->name; c++)
		if (strcmp(c->name, s) == 0) {
			*(int *)cfg_field(base, k->off) = c->value;
			cfg_mark(k, base, n);
			return 0;
		}
	for (const struct choice *c = k->choices; c->name; c++)
		sb_printf(&sb, "%s%s", c == k->choices ? "" : ", ", c->name);
	cfg_node_error(L, n, "'%s' must be one of %s; got '%s'", k->name, sb.buf, s);
	sb_free(&sb);
	return -1;
}

static int cfg_refuse(struct loader *L, yaml_node_t *n, const struct key *k, void *base)
{
	(void)base;
	return cfg_node_error(L, n, "%s", k->why);
}

static int cfg_process_mapping(struct loader *L, yaml_node_t *n, const struct key *table,
			       void *base, const char *what);

static int cfg_enter(struct loader *L, yaml_node_t *n)
{
	if (++L->visits > CONFIG_MAX_NODES)
		return cfg_node_error(
		    L, n, "document too large: more than %u nodes after expanding aliases",
		    CONFIG_MAX_NODES);
	if (++L->depth > CONFIG_MAX_DEPTH)
		return cfg_node_error(L, n, "nested too deeply (limit %d levels)",
				      CONFIG_MAX_DEPTH);
	return 0;
}

/* A nested mapping filling an embedded struct at k->off. */
static int cfg_mapping(struct loader *L, yaml_node_t *n, const struct key *k, void *base)
{
	cfg_mark(k, base, n);
	return cfg_process_mapping(L, n, k->sub, cfg_field(base, k->off), k->name);
}

/* A list of mappings: an array of k->size structs at k->off, count at
 * k->count_off. */
static int cfg_list(struct loader *L, yaml_node_t *n, const struct key *k, void *base)
{
	void **arr = cfg_field(base, k->off);
	uint32_t *count = cfg_field(base, k->count_off);

	if (n->type != YAML_SEQUENCE_NODE)
		return cfg_node_error(L, n, "'%s' must be a list, not %s", k->name,
				      cfg_type_name(n));
	size_t total = (size_t)(n->data.sequence.items.top - n->data.sequence.items.start);
	if (total > CONFIG_MAX_HOSTS)
		return cfg_node_error(L, n, "'%s' has too many entries (%zu; limit %u)", k->name,
				      total, CONFIG_MAX_HOSTS);
	*arr = xcalloc(total ? total : 1, k->size);
	*count = 0;
	cfg_mark(k, base, n);
	for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top;
	     it++) {
		yaml_node_t *item = yaml_document_get_node(&L->doc, *it);
		void *elem = (char *)*arr + (size_t)*count * k->size;

		if (k->init)
			k->init(elem);
		(*count)++; /* counted before filling, so fabric_free sees it */
		if (cfg_process_mapping(L, item, k->sub, elem, k->name) < 0)
			return -1;
	}
	return 0;
}

/* A list of names, with the location of each. */
static int cfg_name_list(struct loader *L, yaml_node_t *n, const char *what, char ***names,
			 struct src_loc **locs, uint32_t *count)
{
	if (n->type != YAML_SEQUENCE_NODE)
		return cfg_node_error(L, n, "'%s' must be a list of names, not %s", what,
				      cfg_type_name(n));
	size_t total = (size_t)(n->data.sequence.items.top - n->data.sequence.items.start);
	if (total > CONFIG_MAX_HOSTS)
		return cfg_node_error(L, n, "'%s' has too many entries", what);
	*names = xcalloc(total ? total : 1, sizeof(char *));
	*locs = xcalloc(total ? total : 1, sizeof(struct src_loc));
	*count = 0;
	for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top;
	     it++) {
		yaml_node_t *item = yaml_document_get_node(&L->doc, *it);
		struct key k = {.name = what};
		const char *s;

		if (cfg_enter(L, item) < 0)
			return -1;
		L->depth--;
		if (cfg_scalar(L, item, &k, &s) < 0 || cfg_check_name(L, item, "name", s) < 0)
			return -1;
		(*names)[*count] = xstrdup(s);
		(*locs)[*count] = cfg_loc_of(item);
		(*count)++;
	}
	return 0;
}

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

static int cfg_bool(struct loader *L, yaml_node_t *n, const struct key *k, void *base);

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

/* ---- server fabrics (fluid/) ------------------------------------------------ */

static int cfg_number(struct loader *L, yaml_node_t *n, const struct key *k, void *base)
{
	const char *s;
	char *end;

	if (cfg_scalar(L, n, k, &s) < 0)
		return -1;
	errno = 0;
	double v = strtod(s, &end);

	if (end == s || *end || errno || !isfinite(v))
		return cfg_node_error(L, n, "'%s' must be a number, got '%s'", k->name, s);
	if (cfg_range_set(k) && (v < k->min || v > k->max))
		return cfg_node_error(L, n, "'%s' must be in %g..%g, got %s", k->name, k->min,
				      k->max, s);
	*(double *)cfg_field(base, k->off) = v;
	cfg_mark(k, base, n);
	return 0;
}

static int cfg_bool(struct loader *L, yaml_node_t *n, const struct key *k, void *base)
{
	static const struct choice yes_no[] = {{"true", 1}, {"false", 0}, {NULL}};
	struct key c = *k;
	int v = 0;

	c.choices = yes_no;
	c.off = 0;
	c.loc_off = c.set_off = 0;
	if (cfg_choice(L, n, &c, &v) < 0)
		return -1;
	*(bool *)cfg_field(base, k->off) = v;
	cfg_mark(k, base, n);
	return 0;
}

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

static const struct key cfg_sv_vertex_keys[] = {
    {"name", h_vname, OFF(struct sv_vertex, name), .required = true},
    {"kind", cfg_choice, OFF(struct sv_vertex, kind), .choices = server_kinds, .required = true},
    {NULL},
};

static const struct key cfg_sv_link_keys[] = {
    {"from", h_vname, OFF(struct sv_link, from), .required = true,
     .loc_off = LOC(struct sv_link, from_loc)},
    {"to", h_vname, OFF(struct sv_link, to), .required = true,
     .loc_off = LOC(struct sv_link, to_loc)},
    {"bandwidth", cfg_rate, OFF(struct sv_link, bandwidth), .required = true},
    {"cost", cfg_number, OFF(struct sv_link, cost), .min = 0, .max = 1e9},
    {"one_way", cfg_bool, OFF(struct sv_link, one_way)},
    {NULL},
};

static const struct key cfg_sv_set_keys[] = {
    {"name", cfg_name, OFF(struct sv_set, name), .required = true},
    {"bandwidth", cfg_rate, OFF(struct sv_set, bandwidth), .required = true},
    {"arcs", h_arcs, .required = true},
    {NULL},
};

static const struct key cfg_server_keys[] = {
    {"name", cfg_name, OFF(struct server_template, name), .required = true},
    {"vertices", cfg_list, OFF(struct server_template, vertices), cfg_sv_vertex_keys,
     sizeof(struct sv_vertex), OFF(struct server_template, nvertices), .required = true},
    {"links", cfg_list, OFF(struct server_template, links), cfg_sv_link_keys,
     sizeof(struct sv_link), OFF(struct server_template, nlinks)},
    {"capacity_sets", cfg_list, OFF(struct server_template, sets), cfg_sv_set_keys,
     sizeof(struct sv_set), OFF(struct server_template, nsets)},
    {NULL},
};

/* ---- workload ----------------------------------------------------------------- */

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

static const struct key cfg_workload_keys[] = {
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
static int cfg_workload(struct loader *L, yaml_node_t *n, const struct key *k, void *base)
{
	struct workload *w = cfg_field(base, k->off);

	w->present = true;
	free(w->file);
	free(w->dir);
	w->file = xstrdup(L->fab->file);
	w->dir = xstrdup(L->fab->dir);
	return cfg_process_mapping(L, n, cfg_workload_keys, w, "workload");
}

static const struct key cfg_fabric_keys[] = {
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

/* ---- the walk ------------------------------------------------------------- */

static const char *suggest(const struct key *table, const char *word)
{
	const char *best = NULL;
	unsigned bd = 3;

	for (const struct key *k = table; k->name; k++) {
		unsigned d = edit_distance(word, k->name);

		if (d < bd && k->fn != cfg_refuse) {
			bd = d;
			best = k->name;
		}
	}
	return best;
}

static int cfg_process_mapping(struct loader *L, yaml_node_t *n, const struct key *table,
			       void *base, const char *what)
{
	struct src_loc first[32];
	uint32_t seen = 0;
	size_t nkeys = 0;
	int rc = -1;

	while (table[nkeys].name)
		nkeys++;
	if (cfg_enter(L, n) < 0)
		return -1;
	if (n->type != YAML_MAPPING_NODE) {
		cfg_node_error(L, n, "'%s' must be a mapping of keys, not %s", what,
			       cfg_type_name(n));
		goto out;
	}
	*(struct src_loc *)base = cfg_loc_of(n);
	for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top;
	     p++) {
		yaml_node_t *kn = yaml_document_get_node(&L->doc, p->key);
		yaml_node_t *vn = yaml_document_get_node(&L->doc, p->value);
		const char *name;
		size_t i;

		if (kn->type != YAML_SCALAR_NODE) {
			cfg_node_error(L, kn, "keys in '%s' must be plain names, not %s", what,
				       cfg_type_name(kn));
			goto out;
		}
		name = (const char *)kn->data.scalar.value;
		for (i = 0; i < nkeys; i++)
			if (strcmp(table[i].name, name) == 0)
				break;
		if (i == nkeys) {
			const char *hint = suggest(table, name);
			struct strbuf sb = STRBUF_INIT;

			if (hint) {
				cfg_node_error(L, kn, "unknown key '%s' in %s (did you mean '%s'?)",
					       name, what, hint);
			} else {
				for (size_t j = 0; j < nkeys; j++)
					if (table[j].fn != cfg_refuse)
						sb_printf(&sb, "%s%s", j ? ", " : "",
							  table[j].name);
				cfg_node_error(L, kn, "unknown key '%s' in %s (expected %s)", name,
					       what, sb.buf);
				sb_free(&sb);
			}
			goto out;
		}
		if (seen & (1u << i)) {
			cfg_node_error(L, kn, "duplicate key '%s' (first at line %u, column %u)",
				       name, first[i].line, first[i].col);
			goto out;
		}
		seen |= 1u << i;
		first[i] = cfg_loc_of(kn);
		if (vn->type == YAML_SCALAR_NODE && vn->data.scalar.length == 0 &&
		    vn->data.scalar.style == YAML_PLAIN_SCALAR_STYLE && table[i].fn != cfg_refuse) {
			cfg_node_error(L, kn, "'%s' has no value", name);
			goto out;
		}
		if (cfg_enter(L, vn) < 0)
			goto out;
		L->depth--;
		if (table[i].fn(L, vn, &table[i], base) < 0)
			goto out;
	}
	for (size_t i = 0; i < nkeys; i++)
		if (table[i].required && !(seen & (1u << i))) {
			cfg_node_error(L, n, "missing required key '%s' in %s", table[i].name,
				       what);
			goto out;
		}
	rc = 0;
out:
	L->depth--;
	return rc;
}

/* ---- syntax --------------------------------------------------------------- */

/* Line and column of a byte offset (reader errors carry only the offset). */
static void offset_to_mark(const char *text, size_t len, size_t off, unsigned *line, unsigned *col)
{
	*line = 1;
	*col = 1;
	for (size_t i = 0; i < off && i < len; i++) {
		if (text[i] == '\n') {
			(*line)++;
			*col = 1;
		} else if (((unsigned char)text[i] & 0xc0) != 0x80) {
			(*col)++;
		}
	}
}

static int yaml_failure(struct loader *L, yaml_parser_t *p)
{
	struct ofc_error *err = L->err;
	unsigned line, col;

	if (p->error == YAML_READER_ERROR) {
		offset_to_mark(L->text, L->len, p->problem_offset, &line, &col);
		return ofc_error_at(err, OFC_E_INPUT, L->file, line, col,
				    "not a text file: %s (byte 0x%02x at offset %zu)",
				    p->problem ? p->problem : "unreadable input",
				    p->problem_value >= 0 ? (unsigned)p->problem_value & 0xff : 0,
				    p->problem_offset);
	}
	if (p->error == YAML_MEMORY_ERROR)
		return ofc_error_at(err, OFC_E_INPUT, L->file, 1, 1, "out of memory parsing YAML");
	line = (unsigned)p->problem_mark.line + 1;
	col = (unsigned)p->problem_mark.column + 1;
	if (p->problem_mark.index < L->len && L->text[p->problem_mark.index] == '\t')
		return ofc_error_at(err, OFC_E_INPUT, L->file, line, col,
				    "tab character: YAML indentation must use spaces");
	if (p->context)
		return ofc_error_at(err, OFC_E_INPUT, L->file, line, col,
				    "YAML syntax error: %s %s (line %u, column %u)", p->problem,
				    p->context, (unsigned)p->context_mark.line + 1,
				    (unsigned)p->context_mark.column + 1);
	return ofc_error_at(err, OFC_E_INPUT, L->file, line, col, "YAML syntax error: %s",
			    p->problem ? p->problem : "unknown");
}

/* Anchors seen by the pre-pass: name -> nodes the anchored subtree expands
 * to (aliases inside it expanded), or OPEN while it is being parsed. */
#define OPEN UINT64_MAX

struct anchors {
	char **names;
	uint64_t *size;
	size_t cap, used;
};

static size_t anchor_slot(const struct anchors *a, const char *name)
{
	uint64_t h = 1469598103934665603ull;

	for (const unsigned char *p = (const unsigned char *)name; *p; p++)
		h = (h ^ *p) * 1099511628211ull;
	size_t i = (size_t)h & (a->cap - 1);
	while (a->names[i] && strcmp(a->names[i], name) != 0)
		i = (i + 1) & (a->cap - 1);
	return i;
}

static void anchor_set(struct anchors *a, const char *name, uint64_t size)
{
	if ((a->used + 1) * 2 > a->cap) {
		struct anchors g = {.cap = a->cap ? a->cap * 2 : 64};

		g.names = xcalloc(g.cap, sizeof(char *));
		g.size = xcalloc(g.cap, sizeof(uint64_t));
		for (size_t i = 0; i < a->cap; i++)
			if (a->names[i]) {
				size_t j = anchor_slot(&g, a->names[i]);

				g.names[j] = a->names[i];
				g.size[j] = a->size[i];
			}
		g.used = a->used;
		free(a->names);
		free(a->size);
		*a = g;
	}
	size_t i = anchor_slot(a, name);
	if (!a->names[i]) {
		a->names[i] = xstrdup(name);
		a->used++;
	}
	a->size[i] = size; /* YAML lets an anchor be redefined; the latest wins */
}

static bool anchor_get(const struct anchors *a, const char *name, uint64_t *size)
{
	if (!a->cap)
		return false;
	size_t i = anchor_slot(a, name);
	if (!a->names[i])
		return false;
	*size = a->size[i];
	return true;
}

static void anchors_free(struct anchors *a)
{
	for (size_t i = 0; i < a->cap; i++)
		free(a->names[i]);
	free(a->names);
	free(a->size);
}

static int mark_error(struct loader *L, yaml_mark_t m, const char *fmt, ...) OFC_PRINTF(3, 4);
static int mark_error(struct loader *L, yaml_mark_t m, const char *fmt, ...)
{
	va_list ap;

	L->err->code = OFC_E_INPUT;
	snprintf(L->err->file, sizeof(L->err->file), "%s", L->file);
	L->err->line = (unsigned)m.line + 1;
	L->err->col = (unsigned)m.column + 1;
	va_start(ap, fmt);
	vsnprintf(L->err->msg, sizeof(L->err->msg), fmt, ap);
	va_end(ap);
	return -1;
}

/* Event pre-pass: syntax, nesting depth, one document, not empty, and the
 * size of the document with every alias expanded. libyaml's loader shares
 * aliased nodes instead of copying them, so a small file can describe an
 * exponentially large tree (or a cycle: "&a [*a]"); anything that walks it
 * would blow up. The pre-pass computes the expanded size from the events and
 * refuses the file before any tree is built. */
static int prepass(struct loader *L)
{
	struct {
		uint64_t count; /* nodes in this collection so far, expanded */
		char *anchor;
	} stack[CONFIG_MAX_DEPTH + 1];
	struct anchors anchors = {0};
	uint64_t total = 0;
	yaml_parser_t p;
	yaml_event_t ev;
	int depth = 0, docs = 0, rc = 0;
	bool done = false;

	yaml_parser_initialize(&p);
	yaml_parser_set_input_string(&p, (const unsigned char *)L->text, L->len);
	while (!done) {
		uint64_t add = 0;
		const char *anchor = NULL;

		if (!yaml_parser_parse(&p, &ev)) {
			rc = yaml_failure(L, &p);
			break;
		}
		switch (ev.type) {
		case YAML_SEQUENCE_START_EVENT:
		case YAML_MAPPING_START_EVENT:
			if (depth + 1 > CONFIG_MAX_DEPTH) {
				rc = mark_error(L, ev.start_mark,
						"nested too deeply (limit %d levels)",
						CONFIG_MAX_DEPTH);
				done = true;
				break;
			}
			anchor = ev.type == YAML_SEQUENCE_START_EVENT
				     ? (const char *)ev.data.sequence_start.anchor
				     : (const char *)ev.data.mapping_start.anchor;
			stack[depth].count = 1;
			stack[depth].anchor = anchor ? xstrdup(anchor) : NULL;
			if (anchor)
				anchor_set(&anchors, anchor, OPEN);
			depth++;
			break;
		case YAML_SEQUENCE_END_EVENT:
		case YAML_MAPPING_END_EVENT:
			depth--;
			add = stack[depth].count;
			if (stack[depth].anchor) {
				anchor_set(&anchors, stack[depth].anchor, add);
				free(stack[depth].anchor);
			}
			break;
		case YAML_SCALAR_EVENT:
			add = 1;
			if (ev.data.scalar.anchor)
				anchor_set(&anchors, (const char *)ev.data.scalar.anchor, 1);
			break;
		case YAML_ALIAS_EVENT: {
			const char *name = (const char *)ev.data.alias.anchor;

			if (!anchor_get(&anchors, name, &add)) {
				rc =
				    mark_error(L, ev.start_mark, "alias '*%s' has no anchor", name);
				done = true;
			} else if (add == OPEN) {
				rc = mark_error(L, ev.start_mark,
						"alias '*%s' refers to a node that contains it",
						name);
				done = true;
			}
			break;
		}
		case YAML_DOCUMENT_START_EVENT:
			if (++docs > 1) {
				rc = mark_error(L, ev.start_mark,
						"more than one YAML document; a config is one");
				done = true;
			}
			break;
		case YAML_STREAM_END_EVENT:
			done = true;
			break;
		default:
			break;
		}
		if (add && rc == 0) {
			uint64_t *into = depth ? &stack[depth - 1].count : &total;

			*into =
			    *into + add > CONFIG_MAX_NODES ? CONFIG_MAX_NODES + 1ull : *into + add;
			if (*into > CONFIG_MAX_NODES) {
				rc = mark_error(L, ev.start_mark,
						"document too large: more than %u nodes once YAML "
						"aliases are expanded",
						CONFIG_MAX_NODES);
				done = true;
			}
		}
		yaml_event_delete(&ev);
	}
	while (depth > 0)
		free(stack[--depth].anchor);
	anchors_free(&anchors);
	yaml_parser_delete(&p);
	if (rc == 0 && docs == 0)
		rc = ofc_error_at(L->err, OFC_E_INPUT, L->file, 1, 1,
				  "empty configuration: expected a mapping with name, hosts, ...");
	return rc;
}

/* The size limit, the event pre-pass, then the document into L->doc. */
static int load_document(struct loader *L)
{
	yaml_parser_t p;
	int rc;

	if (L->len > CONFIG_MAX_BYTES)
		return ofc_error_at(L->err, OFC_E_INPUT, L->file, 1, 1,
				    "file too large (%zu bytes; limit %u)", L->len,
				    CONFIG_MAX_BYTES);
	if (prepass(L) < 0)
		return -1;
	yaml_parser_initialize(&p);
	yaml_parser_set_input_string(&p, (const unsigned char *)L->text, L->len);
	if (!yaml_parser_load(&p, &L->doc)) {
		rc = yaml_failure(L, &p);
		yaml_parser_delete(&p);
		return rc;
	}
	yaml_parser_delete(&p);
	return 0;
}

int config_parse(const char *file, const char *text, size_t len, struct fabric **out,
		 struct ofc_error *err)
{
	struct loader L = {.file = file, .text = text, .len = len, .err = err};
	yaml_node_t *root;
	struct fabric *f;
	int rc;

	*out = NULL;
	if (load_document(&L) < 0)
		return -1;

	f = xcalloc(1, sizeof(*f));
	f->file = xstrdup(file);
	{
		char *copy = xstrdup(file);
		f->dir = xstrdup(strcmp(file, "-") == 0 ? "." : dirname(copy));
		free(copy);
	}
	L.fab = f;
	root = yaml_document_get_root_node(&L.doc);
	if (!root || (root->type == YAML_SCALAR_NODE && root->data.scalar.length == 0 &&
		      root->data.scalar.style == YAML_PLAIN_SCALAR_STYLE)) {
		rc = ofc_error_at(err, OFC_E_INPUT, file,
				  root ? (unsigned)root->start_mark.line + 1 : 1, 1,
				  "empty configuration: expected a mapping with name, hosts, ...");
	} else if (root->type != YAML_MAPPING_NODE) {
		rc = cfg_node_error(&L, root,
				    "a config must be a mapping with name, hosts, ...; this is %s",
				    cfg_type_name(root));
	} else {
		rc = cfg_process_mapping(&L, root, cfg_fabric_keys, f, "the config");
	}
	yaml_document_delete(&L.doc);
	if (rc < 0) {
		fabric_free(f);
		return -1;
	}
	*out = f;
	return 0;
}

int config_load(const char *path, struct fabric **out, struct ofc_error *err)
{
	char *text;
	size_t len;
	int rc;

	*out = NULL;
	if (read_file(path, CONFIG_MAX_BYTES, &text, &len, err) < 0)
		return -1;
	rc = config_parse(path, text, len, out, err);
	free(text);
	return rc;
}

int config_parse_workload(const char *file, const char *text, size_t len, struct workload *w,
			  struct ofc_error *err)
{
	struct loader L = {.file = file, .text = text, .len = len, .err = err};
	struct fabric holder = {.file = (char *)file};
	yaml_node_t *root;
	int rc;

	memset(w, 0, sizeof(*w));
	if (load_document(&L) < 0)
		return -1;
	L.fab = &holder;
	root = yaml_document_get_root_node(&L.doc);
	if (!root || root->type != YAML_MAPPING_NODE) {
		rc = ofc_error_at(err, OFC_E_INPUT, file,
				  root ? (unsigned)root->start_mark.line + 1 : 1, 1,
				  "a workload file is a mapping with phases, groups, ...");
	} else {
		char *copy = xstrdup(file);

		w->present = true;
		w->file = xstrdup(file);
		w->dir = xstrdup(strcmp(file, "-") == 0 ? "." : dirname(copy));
		free(copy);
		rc = cfg_process_mapping(&L, root, cfg_workload_keys, w, "the workload");
	}
	yaml_document_delete(&L.doc);
	if (rc < 0)
		workload_free(w);
	return rc;
}

int config_load_workload(const char *path, struct workload *w, struct ofc_error *err)
{
	char *text;
	size_t len;
	int rc;

	memset(w, 0, sizeof(*w));
	if (read_file(path, CONFIG_MAX_BYTES, &text, &len, err) < 0)
		return -1;
	rc = config_parse_workload(path, text, len, w, err);
	free(text);
	return rc;
}

int fabric_open(const char *path, struct fabric **out, struct ofc_error *err)
{
	struct fabric *f;

	*out = NULL;
	if (config_load(path, &f, err) < 0)
		return -1;
	if (fabric_validate(f, err) < 0) {
		fabric_free(f);
		return -1;
	}
	*out = f;
	return 0;
}
