/* The gateway's policy file: certificate identities to roles (gateway.h). */
#include "controller/gateway/gateway.h"

#include <stdlib.h>
#include <string.h>

#define POLICY_MAX_BYTES (4u << 20)
#define POLICY_NAME_MAX	 255

const char *gw_role_name(enum gw_role r)
{
	return r == GW_ROLE_ADMIN	? "admin"
	       : r == GW_ROLE_READ_ONLY ? "read-only"
	       : r == GW_ROLE_TENANT	? "tenant"
	       : r == GW_ROLE_HOST	? "host"
					: "none";
}

static void strv_free(char **v, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

void gw_policy_free(struct gw_policy *p)
{
	if (!p)
		return;
	for (uint32_t i = 0; i < p->n; i++) {
		free(p->e[i].identity);
		strv_free(p->e[i].partitions, p->e[i].npartitions);
	}
	free(p->e);
	free(p);
}

/* Printable, no space, no comma: what a certificate name and a partition
 * name may be here. */
static bool plain(const char *s, size_t n)
{
	if (!n || n > POLICY_NAME_MAX)
		return false;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] <= ' ' || (unsigned char)s[i] >= 0x7f || s[i] == ',')
			return false;
	return true;
}

static int parse_line(const char *name, uint32_t lineno, char *line, struct gw_policy *p,
		      struct ofc_error *err)
{
	char *save = NULL, *id = strtok_r(line, " \t", &save);
	char *role = id ? strtok_r(NULL, " \t", &save) : NULL;
	char *parts = role ? strtok_r(NULL, " \t", &save) : NULL;
	struct gw_policy_entry e = {0};

	if (!id)
		return 0;
	if (!role)
		return ofc_error_set(err, OFC_E_INPUT,
				     "%s:%u: '%.64s' has no role (admin, "
				     "read-only, tenant, host)",
				     name, lineno, id);
	if (strtok_r(NULL, " \t", &save))
		return ofc_error_set(err, OFC_E_INPUT,
				     "%s:%u: expected IDENTITY ROLE [PARTITION,...], and more "
				     "follows",
				     name, lineno);
	if ((strncmp(id, "cn:", 3) && strncmp(id, "dns:", 4) && strncmp(id, "uri:", 4) &&
	     strncmp(id, "email:", 6)) ||
	    !plain(id, strlen(id)) || !strchr(id, ':')[1])
		return ofc_error_set(
		    err, OFC_E_INPUT,
		    "%s:%u: identity '%.64s' is not cn:NAME, dns:NAME, uri:NAME or "
		    "email:NAME",
		    name, lineno, id);
	for (uint32_t i = 0; i < p->n; i++)
		if (strcmp(p->e[i].identity, id) == 0)
			return ofc_error_set(err, OFC_E_INPUT, "%s:%u: %s is named twice", name,
					     lineno, id);
	if (!strcmp(role, "admin"))
		e.role = GW_ROLE_ADMIN;
	else if (!strcmp(role, "read-only"))
		e.role = GW_ROLE_READ_ONLY;
	else if (!strcmp(role, "tenant"))
		e.role = GW_ROLE_TENANT;
	else if (!strcmp(role, "host"))
		e.role = GW_ROLE_HOST;
	else
		return ofc_error_set(err, OFC_E_INPUT,
				     "%s:%u: unknown role '%.32s' (admin, read-only, tenant, host)",
				     name, lineno, role);
	if (e.role == GW_ROLE_TENANT && !parts)
		return ofc_error_set(err, OFC_E_INPUT,
				     "%s:%u: a tenant needs its partitions (PARTITION,...)", name,
				     lineno);
	if (e.role == GW_ROLE_HOST && (!parts || strchr(parts, ',')))
		return ofc_error_set(err, OFC_E_INPUT,
				     "%s:%u: a host's agent names the one fabric host it speaks "
				     "for (IDENTITY host HOST)",
				     name, lineno);
	if (e.role != GW_ROLE_TENANT && e.role != GW_ROLE_HOST && parts)
		return ofc_error_set(err, OFC_E_INPUT, "%s:%u: only a tenant has partitions", name,
				     lineno);
	if (p->n >= GW_POLICY_MAX_ENTRIES)
		return ofc_error_set(err, OFC_E_INPUT, "%s:%u: more than %u entries", name, lineno,
				     GW_POLICY_MAX_ENTRIES);
	for (char *s = parts, *next; s; s = next) {
		next = strchr(s, ',');
		size_t n = next ? (size_t)(next - s) : strlen(s);

		if (next)
			next++;
		if (!plain(s, n)) {
			strv_free(e.partitions, e.npartitions);
			return ofc_error_set(err, OFC_E_INPUT, "%s:%u: partition %u is not a name",
					     name, lineno, e.npartitions + 1);
		}
		e.partitions = xreallocarray(e.partitions, e.npartitions + 2, sizeof(char *));
		e.partitions[e.npartitions++] = xstrndup(s, n);
		e.partitions[e.npartitions] = NULL;
	}
	e.identity = xstrdup(id);
	p->e = xreallocarray(p->e, p->n + 1, sizeof(*p->e));
	p->e[p->n++] = e;
	return 0;
}

int gw_policy_parse(const char *name, const char *text, size_t len, struct gw_policy **out,
		    struct ofc_error *err)
{
	struct gw_policy *p = xcalloc(1, sizeof(*p));
	uint32_t lineno = 0;

	*out = NULL;
	for (size_t off = 0; off < len;) {
		const char *nl = memchr(text + off, '\n', len - off);
		size_t n = nl ? (size_t)(nl - (text + off)) : len - off;
		char *line = xstrndup(text + off, n);

		lineno++;
		off += n + 1;
		if (strlen(line) != n) {
			free(line);
			gw_policy_free(p);
			return ofc_error_set(err, OFC_E_INPUT, "%s:%u: a NUL byte", name, lineno);
		}
		line[strcspn(line, "#")] = 0;
		int rc = parse_line(name, lineno, line, p, err);
		free(line);
		if (rc < 0) {
			gw_policy_free(p);
			return -1;
		}
	}
	if (!p->n) {
		gw_policy_free(p);
		return ofc_error_set(err, OFC_E_INPUT, "%s: no entries: nobody could connect",
				     name);
	}
	*out = p;
	return 0;
}

int gw_policy_load(const char *path, struct gw_policy **out, struct ofc_error *err)
{
	char *text;
	size_t len;
	int rc;

	if (read_file(path, POLICY_MAX_BYTES, &text, &len, err) < 0)
		return -1;
	rc = gw_policy_parse(path, text, len, out, err);
	free(text);
	return rc;
}

const struct gw_policy_entry *gw_policy_match(const struct gw_policy *p, char *const *names,
					      uint32_t n)
{
	for (uint32_t i = 0; i < p->n; i++)
		for (uint32_t k = 0; k < n; k++)
			if (strcmp(p->e[i].identity, names[k]) == 0)
				return &p->e[i];
	return NULL;
}
