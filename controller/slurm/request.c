/* A Slurm job's request to ofc (its comment), the node -> host map, and
 * PrologEpilogTimeout from slurm.conf (docs/slurm.md). */
#include "controller/slurm/slurm.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static int request_key(const char *tok, size_t len, struct slurm_request *r, struct ofc_error *err)
{
	const char *eq = memchr(tok, '=', len);
	size_t klen = eq ? (size_t)(eq - tok) : len;
	const char *v = eq ? eq + 1 : tok + len;
	size_t vlen = (size_t)(tok + len - v);

	if (klen == 8 && strncmp(tok, "topology", 8) == 0 && eq) {
		if (vlen == 0 || vlen > TOPO_MAX_SPEC)
			return ofc_error_set(err, OFC_E_INPUT,
					     "ofc:topology= needs a topology spec (1 to %u "
					     "characters)",
					     TOPO_MAX_SPEC);
		/* (the last word winning silently would build what the job's
		 * author may not have meant) */
		if (r->asked)
			return ofc_error_set(
			    err, OFC_E_INPUT,
			    "ofc:topology= twice in the job's comment ('%.40s' and "
			    "'%.*s'): a job asks for one topology",
			    r->topology, (int)(vlen > 40 ? 40 : vlen), v);
		memcpy(r->topology, v, vlen);
		r->topology[vlen] = 0;
		r->asked = true;
		return 0;
	}
	if (klen == 7 && strncmp(tok, "relabel", 7) == 0 && eq) {
		if (vlen == 3 && strncmp(v, "yes", 3) == 0)
			r->relabel = true;
		else if (vlen == 2 && strncmp(v, "no", 2) == 0)
			r->relabel = false;
		else
			return ofc_error_set(err, OFC_E_INPUT, "ofc:relabel= takes yes or no");
		return 0;
	}
	return ofc_error_set(err, OFC_E_INPUT,
			     "unknown request 'ofc:%.*s' in the job's comment (ofc:topology=SPEC, "
			     "ofc:relabel=yes|no)",
			     (int)(klen > 40 ? 40 : klen), tok);
}

int slurm_request_parse(const char *comment, struct slurm_request *r, struct ofc_error *err)
{
	const char *p = comment ? comment : "";

	memset(r, 0, sizeof(*r));
	r->relabel = true;
	if (strlen(p) > 64 * 1024)
		return ofc_error_set(err, OFC_E_INPUT, "the job's comment is longer than 64 KiB");
	while (*p) {
		size_t len;

		p += strspn(p, " \t\n;");
		len = strcspn(p, " \t\n;");
		if (len > 4 && strncmp(p, "ofc:", 4) == 0) {
			for (size_t i = 4; i < len; i++)
				if (!isprint((unsigned char)p[i]))
					return ofc_error_set(err, OFC_E_INPUT,
							     "a control character in the job's "
							     "ofc: request");
			if (request_key(p + 4, len - 4, r, err) < 0)
				return -1;
		}
		p += len;
	}
	return 0;
}

int slurm_default_spec(const char *tmpl, uint32_t nhosts, char *out, size_t len,
		       struct ofc_error *err)
{
	struct strbuf sb = STRBUF_INIT;
	const char *n = strstr(tmpl, "{n}");
	int rc = 0;

	if (n)
		sb_printf(&sb, "%.*s%u%s", (int)(n - tmpl), tmpl, nhosts, n + 3);
	else
		sb_puts(&sb, tmpl);
	if (!sb.buf || sb.len == 0 || sb.len >= len || sb.len > TOPO_MAX_SPEC)
		rc = ofc_error_set(err, OFC_E_INPUT,
				   "the default topology '%.64s' is empty or longer than %u "
				   "characters",
				   tmpl, TOPO_MAX_SPEC);
	else
		memcpy(out, sb.buf, sb.len + 1);
	sb_free(&sb);
	return rc;
}

/* ---- the node -> host map ------------------------------------------------------ */

static bool name_ok(const char *s, size_t n)
{
	if (n == 0 || n > SLURM_NAME_MAX)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && !strchr("-_.", s[i]))
			return false;
	return true;
}

static int map_add(struct slurm_map *m, const char *path, uint32_t line, const char *node,
		   size_t nlen, const char *host, size_t hlen, struct ofc_error *err)
{
	if (!name_ok(node, nlen) || !name_ok(host, hlen))
		return ofc_error_set(err, OFC_E_INPUT,
				     "%s:%u: expected 'NODE HOST' (names of letters, digits, '-', "
				     "'_', '.')",
				     path, line);
	for (uint32_t i = 0; i < m->n; i++) {
		if (strlen(m->node[i]) == nlen && strncmp(m->node[i], node, nlen) == 0)
			return ofc_error_set(err, OFC_E_INPUT, "%s:%u: node %.*s is mapped twice",
					     path, line, (int)nlen, node);
		if (strlen(m->host[i]) == hlen && strncmp(m->host[i], host, hlen) == 0)
			return ofc_error_set(err, OFC_E_INPUT,
					     "%s:%u: host %.*s is the host of two nodes", path,
					     line, (int)hlen, host);
	}
	if (m->n >= SLURM_MAX_HOSTS)
		return ofc_error_set(err, OFC_E_INPUT, "%s:%u: more than %u nodes", path, line,
				     SLURM_MAX_HOSTS);
	m->node = xrealloc(m->node, ((size_t)m->n + 1) * sizeof(char *));
	m->host = xrealloc(m->host, ((size_t)m->n + 1) * sizeof(char *));
	m->node[m->n] = xstrndup(node, nlen);
	m->host[m->n] = xstrndup(host, hlen);
	m->n++;
	return 0;
}

int slurm_map_parse(const char *path, const char *text, struct slurm_map *m, struct ofc_error *err)
{
	const char *p = text;
	uint32_t line = 0;

	memset(m, 0, sizeof(*m));
	while (*p) {
		const char *end = strchr(p, '\n'), *w[3];
		size_t wl[3], nw = 0;

		if (!end)
			end = p + strlen(p);
		line++;
		const char *q = p, *stop = memchr(p, '#', (size_t)(end - p));
		if (!stop)
			stop = end;
		while (q < stop) {
			while (q < stop && (*q == ' ' || *q == '\t' || *q == '\r'))
				q++;
			if (q >= stop)
				break;
			const char *s = q;
			while (q < stop && *q != ' ' && *q != '\t' && *q != '\r')
				q++;
			if (nw == 3)
				break;
			w[nw] = s;
			wl[nw++] = (size_t)(q - s);
		}
		if (nw && (nw != 2 || map_add(m, path, line, w[0], wl[0], w[1], wl[1], err) < 0)) {
			if (nw != 2)
				ofc_error_set(err, OFC_E_INPUT, "%s:%u: expected 'NODE HOST'", path,
					      line);
			slurm_map_free(m);
			return -1;
		}
		p = *end ? end + 1 : end;
	}
	return 0;
}

int slurm_map_load(const char *path, struct slurm_map *m, struct ofc_error *err)
{
	char *text = NULL;
	size_t len = 0;
	int rc;

	memset(m, 0, sizeof(*m));
	if (read_file(path, 1 << 20, &text, &len, err) < 0)
		return -1;
	if (memchr(text, 0, len)) {
		free(text);
		return ofc_error_set(err, OFC_E_INPUT, "%s: a NUL byte", path);
	}
	rc = slurm_map_parse(path, text, m, err);
	free(text);
	return rc;
}

void slurm_map_free(struct slurm_map *m)
{
	slurm_strv_free(m->node, m->n);
	slurm_strv_free(m->host, m->n);
	memset(m, 0, sizeof(*m));
}

const char *slurm_map_host(const struct slurm_map *m, const char *node)
{
	if (!m || !m->n)
		return node;
	for (uint32_t i = 0; i < m->n; i++)
		if (strcmp(m->node[i], node) == 0)
			return m->host[i];
	return NULL;
}

const char *slurm_map_node(const struct slurm_map *m, const char *host)
{
	if (!m || !m->n)
		return host;
	for (uint32_t i = 0; i < m->n; i++)
		if (strcmp(m->host[i], host) == 0)
			return m->node[i];
	return NULL;
}

/* ---- slurm.conf ---------------------------------------------------------------- */

uint32_t slurm_conf_timeout(const char *text)
{
	static const char key[] = "prologepilogtimeout=";
	uint32_t v = 0;

	for (const char *p = text; p && *p;) {
		const char *end = strchr(p, '\n');
		size_t n = end ? (size_t)(end - p) : strlen(p);
		const char *hash = memchr(p, '#', n);

		if (hash)
			n = (size_t)(hash - p);
		for (size_t i = 0; i + sizeof(key) - 1 <= n; i++) {
			if ((i == 0 || isspace((unsigned char)p[i - 1])) &&
			    strncasecmp(p + i, key, sizeof(key) - 1) == 0) {
				unsigned long x = 0;
				size_t k = i + sizeof(key) - 1;

				while (k < n && isdigit((unsigned char)p[k]) && x < 1000000000ul)
					x = x * 10 + (unsigned long)(p[k++] - '0');
				v = (uint32_t)x; /* the last one wins, as in Slurm */
			}
		}
		p = end ? end + 1 : NULL;
	}
	return v;
}
