/* Slurm's hostlist expressions (src/common/hostlist.c's syntax, 22.05):
 * "n[0-3,7],gpu[01-02]x,login". Written here rather than run through
 * `scontrol show hostnames`: PrologSlurmctld runs with no PATH and no
 * SLURM_CONF, and a parser with its tests is easier to trust than a
 * subprocess per job. tests/unit/test_slurm.c compares it with scontrol on
 * the forms the docs name when scontrol is installed. */
#include "controller/slurm/slurm.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

void slurm_strv_free(char **v, uint32_t n)
{
	if (!v)
		return;
	for (uint32_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

struct names {
	char **v;
	uint32_t n, cap;
};

static int push(struct names *s, const char *name, size_t len, struct ofc_error *err)
{
	if (len == 0 || len > SLURM_NAME_MAX)
		return ofc_error_set(err, OFC_E_INPUT,
				     "hostlist: a host name of %zu characters (1 to %u)", len,
				     SLURM_NAME_MAX);
	if (s->n >= SLURM_MAX_HOSTS)
		return ofc_error_set(err, OFC_E_INPUT, "hostlist: more than %u hosts",
				     SLURM_MAX_HOSTS);
	if (s->n + 1 >= s->cap) {
		s->cap = s->cap ? 2 * s->cap : 16;
		s->v = xrealloc(s->v, (size_t)s->cap * sizeof(char *));
	}
	s->v[s->n++] = xstrndup(name, len);
	s->v[s->n] = NULL;
	return 0;
}

/* One number of a bracket: digits, at most 9 of them (Slurm's hostrange
 * keeps unsigned longs; a node suffix has never needed more). */
static int number(const char **p, const char *end, unsigned long *v, int *width,
		  struct ofc_error *err)
{
	const char *s = *p;

	*v = 0;
	while (*p < end && isdigit((unsigned char)**p)) {
		*v = *v * 10 + (unsigned long)(**p - '0');
		(*p)++;
		if (*p - s > 9)
			return ofc_error_set(err, OFC_E_INPUT,
					     "hostlist: a number of more than 9 digits");
	}
	if (*p == s)
		return ofc_error_set(err, OFC_E_INPUT, "hostlist: expected a number in '[...]'");
	*width = (int)(*p - s);
	return 0;
}

/* Expand term[0..len) after `prefix` (what earlier brackets made). */
static int expand_term(const char *prefix, size_t plen, const char *t, size_t len,
		       struct names *out, struct ofc_error *err)
{
	const char *open = memchr(t, '[', len), *close;
	char buf[SLURM_NAME_MAX + 1];

	if (!open) {
		if (memchr(t, ']', len))
			return ofc_error_set(err, OFC_E_INPUT, "hostlist: ']' without '['");
		if (plen + len > SLURM_NAME_MAX)
			return push(out, t, plen + len, err); /* the length error */
		memcpy(buf, prefix, plen);
		memcpy(buf + plen, t, len);
		return push(out, buf, plen + len, err);
	}
	close = memchr(open, ']', len - (size_t)(open - t));
	if (!close)
		return ofc_error_set(err, OFC_E_INPUT, "hostlist: '[' without ']'");
	size_t head = (size_t)(open - t);
	/* Slurm 22.05 refuses a suffix after the last bracket ("n[1-2]a"). */
	size_t tail = len - (size_t)(close + 1 - t);
	if (tail && !memchr(close + 1, '[', tail))
		return ofc_error_set(err, OFC_E_INPUT,
				     "hostlist: text after the last ']' (Slurm refuses '%.*s')",
				     (int)(len > 64 ? 64 : len), t);
	if (plen + head > SLURM_NAME_MAX)
		return ofc_error_set(err, OFC_E_INPUT, "hostlist: a host name of more than %u "
						       "characters",
				     SLURM_NAME_MAX);
	if (memchr(t, ']', head))
		return ofc_error_set(err, OFC_E_INPUT, "hostlist: ']' without '['");
	const char *p = open + 1;
	if (p == close)
		return ofc_error_set(err, OFC_E_INPUT, "hostlist: empty '[]'");
	while (p < close) {
		unsigned long lo, hi;
		int wlo, whi;

		if (number(&p, close, &lo, &wlo, err) < 0)
			return -1;
		hi = lo;
		if (p < close && *p == '-') {
			p++;
			if (number(&p, close, &hi, &whi, err) < 0)
				return -1;
			if (hi < lo)
				return ofc_error_set(err, OFC_E_INPUT,
						     "hostlist: range %lu-%lu runs backwards", lo,
						     hi);
		}
		if (p < close && *p != ',')
			return ofc_error_set(err, OFC_E_INPUT,
					     "hostlist: unexpected '%c' in '[...]'", *p);
		if (p < close)
			p++;
		if (hi - lo >= SLURM_MAX_HOSTS)
			return ofc_error_set(err, OFC_E_INPUT, "hostlist: more than %u hosts",
					     SLURM_MAX_HOSTS);
		/* Zero padding: Slurm prints each number at least as wide as lo
		 * is written (n[08-10]: n08 n09 n10; n[8-10]: n8 n9 n10). */
		int width = wlo;
		for (unsigned long v = lo; v <= hi; v++) {
			int k;
			memcpy(buf, prefix, plen);
			memcpy(buf + plen, t, head);
			k = snprintf(buf + plen + head, sizeof(buf) - plen - head, "%0*lu", width,
				     v);
			if (k < 0 || plen + head + (size_t)k > SLURM_NAME_MAX)
				return ofc_error_set(err, OFC_E_INPUT,
						     "hostlist: a host name of more than %u "
						     "characters",
						     SLURM_NAME_MAX);
			if (expand_term(buf, plen + head + (size_t)k, close + 1,
					len - (size_t)(close + 1 - t), out, err) < 0)
				return -1;
		}
	}
	return 0;
}

int slurm_hostlist_expand(const char *expr, char ***out, uint32_t *n, struct ofc_error *err)
{
	struct names s = {0};
	const char *p = expr;

	*out = NULL;
	*n = 0;
	if (!expr || !*expr)
		return ofc_error_set(err, OFC_E_INPUT, "hostlist: empty");
	if (strlen(expr) > 1 << 20)
		return ofc_error_set(err, OFC_E_INPUT, "hostlist: longer than 1 MiB");
	for (const char *c = expr; *c; c++)
		if (!isalnum((unsigned char)*c) && !strchr("[]-,._", *c)) {
			ofc_error_set(err, OFC_E_INPUT, "hostlist: unexpected character '%c'",
				      isprint((unsigned char)*c) ? *c : '?');
			return -1;
		}
	while (*p) {
		/* A term ends at a comma outside brackets. */
		const char *e = p;
		int depth = 0;

		while (*e && (depth || *e != ',')) {
			if (*e == '[' && ++depth > 1) {
				slurm_strv_free(s.v, s.n);
				return ofc_error_set(err, OFC_E_INPUT, "hostlist: nested '['");
			}
			if (*e == ']')
				depth = depth ? depth - 1 : 0;
			e++;
		}
		/* An empty term is skipped, as Slurm does ("n,,m": n m). */
		if (e > p && expand_term("", 0, p, (size_t)(e - p), &s, err) < 0) {
			slurm_strv_free(s.v, s.n);
			return -1;
		}
		p = *e ? e + 1 : e;
	}
	if (!s.n)
		return ofc_error_set(err, OFC_E_INPUT, "hostlist: no host in '%.64s'", expr);
	*out = s.v;
	*n = s.n;
	return 0;
}
