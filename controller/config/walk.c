/* The table walk of the YAML loader (load.c's comment): one table of keys
 * per mapping, cfg_process_mapping() walking any mapping with any table
 * (unknown keys with a hint, duplicate and missing ones refused), errors
 * raised on the node that is wrong (FILE:LINE:COL), and the generic
 * handlers every table names: strings, names, integers, sizes, rates,
 * durations, numbers, booleans, choices, nested mappings and lists. */
#include "controller/config/loader.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- errors on nodes ------------------------------------------------------ */

int cfg_node_error(struct loader *L, const yaml_node_t *n, const char *fmt, ...)
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

struct src_loc cfg_loc_of(const yaml_node_t *n)
{
	return (struct src_loc){(uint32_t)n->start_mark.line + 1,
				(uint32_t)n->start_mark.column + 1};
}

void *cfg_field(void *base, size_t off)
{
	return (char *)base + off;
}

void cfg_mark(const struct key *k, void *base, const yaml_node_t *n)
{
	if (k->loc_off)
		*(struct src_loc *)cfg_field(base, k->loc_off - 1) = cfg_loc_of(n);
	if (k->set_off)
		*(bool *)cfg_field(base, k->set_off - 1) = true;
}

const char *cfg_type_name(const yaml_node_t *n)
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
int cfg_scalar(struct loader *L, yaml_node_t *n, const struct key *k, const char **out)
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

int cfg_str(struct loader *L, yaml_node_t *n, const struct key *k, void *base)
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

bool cfg_valid_name(const char *s)
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

int cfg_check_name(struct loader *L, yaml_node_t *n, const char *what, const char *s)
{
	if (!cfg_valid_name(s))
		return cfg_node_error(L, n,
				      "invalid %s '%s': use 1-%d letters, digits, '-', '_' or '.', "
				      "starting with a letter or digit",
				      what, s, NAME_MAX_LEN);
	return 0;
}

int cfg_name(struct loader *L, yaml_node_t *n, const struct key *k, void *base)
{
	const char *s;

	if (cfg_scalar(L, n, k, &s) < 0 || cfg_check_name(L, n, k->name, s) < 0)
		return -1;
	return cfg_str(L, n, k, base);
}

int cfg_u32(struct loader *L, yaml_node_t *n, const struct key *k, void *base)
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

int cfg_size(struct loader *L, yaml_node_t *n, const struct key *k, void *base)
{
	return h_quantity(L, n, k, base, Q_SIZE);
}

int cfg_rate(struct loader *L, yaml_node_t *n, const struct key *k, void *base)
{
	return h_quantity(L, n, k, base, Q_RATE);
}

int cfg_duration(struct loader *L, yaml_node_t *n, const struct key *k, void *base)
{
	return h_quantity(L, n, k, base, Q_DURATION);
}

/* A plain number in (0, 1]: the testbed's rate_scale. */
int cfg_scale(struct loader *L, yaml_node_t *n, const struct key *k, void *base)
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

int cfg_choice(struct loader *L, yaml_node_t *n, const struct key *k, void *base)
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

int cfg_refuse(struct loader *L, yaml_node_t *n, const struct key *k, void *base)
{
	(void)base;
	return cfg_node_error(L, n, "%s", k->why);
}

int cfg_enter(struct loader *L, yaml_node_t *n)
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
int cfg_mapping(struct loader *L, yaml_node_t *n, const struct key *k, void *base)
{
	cfg_mark(k, base, n);
	return cfg_process_mapping(L, n, k->sub, cfg_field(base, k->off), k->name);
}

/* A list of mappings: an array of k->size structs at k->off, count at
 * k->count_off. */
int cfg_list(struct loader *L, yaml_node_t *n, const struct key *k, void *base)
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
int cfg_name_list(struct loader *L, yaml_node_t *n, const char *what, char ***names,
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

int cfg_number(struct loader *L, yaml_node_t *n, const struct key *k, void *base)
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

int cfg_bool(struct loader *L, yaml_node_t *n, const struct key *k, void *base)
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

int cfg_process_mapping(struct loader *L, yaml_node_t *n, const struct key *table, void *base,
			const char *what)
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
