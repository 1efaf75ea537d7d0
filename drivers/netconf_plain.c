/* The two large messages of a NETCONF transaction read in their plain
 * form, without libyang: the read-back's <get> reply (the driver) and the
 * <edit-config> of the cross-connects (build/netconf-emu). libyang types
 * 384 pairs in 1.5 to 2 ms of CPU, most of an apply's time past its round
 * trips (bench/results/netconf.md, "NETCONF"); these scanners read the same
 * message in tens of microseconds.
 *
 * Each accepts only a narrow form: the elements and attributes libnetconf2
 * and netconf-emu write (blanks allowed between elements), values that
 * libyang types as the module's port-ref (1..max, no sign, no leading
 * zero), and nothing else: no comments, entities, prefixes or other
 * attributes. What it accepts, libyang's parse accepts too and gives the
 * same cross-connects; anything else, and any message whose checks fail,
 * is declined (0), and the caller reads it the old way, through
 * libnetconf2, so refusals keep their words.
 */
#include "drivers/internal.h"

#include <stdlib.h>
#include <string.h>

#define NC_NS "urn:ietf:params:xml:ns:netconf:base:1.0"

/* ---- framing (RFC 6242 4.2) ----------------------------------------------- */

int netconf_frame(const char *buf, size_t len, struct strbuf *body, size_t *used)
{
	size_t i = 0;

	sb_reset(body);
	for (;;) {
		uint64_t n = 0;
		size_t d;

		if (len - i < 4 || buf[i] != '\n' || buf[i + 1] != '#')
			return 0;
		i += 2;
		if (buf[i] == '#') {
			if (buf[i + 1] != '\n' || !body->len)
				return 0;
			*used = i + 2;
			return 1;
		}
		for (d = i; i < len && buf[i] >= '0' && buf[i] <= '9' && i - d < 10; i++)
			n = n * 10 + (uint64_t)(buf[i] - '0');
		if (i == d || buf[d] == '0' || i >= len || buf[i] != '\n' || n > UINT32_MAX ||
		    n > len - i - 1)
			return 0;
		i++;
		sb_add(body, buf + i, (size_t)n);
		i += (size_t)n;
	}
}

/* ---- a cursor over the narrow form -------------------------------------------- */

struct scan {
	const char *p, *end;
};

static void blanks(struct scan *s)
{
	while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' || *s->p == '\n' || *s->p == '\r'))
		s->p++;
}

/* The literal t next (after blanks when lead): advanced past it, or false. */
static bool lit(struct scan *s, const char *t)
{
	size_t n = strlen(t);

	if ((size_t)(s->end - s->p) < n || memcmp(s->p, t, n) != 0)
		return false;
	s->p += n;
	return true;
}

static bool tag(struct scan *s, const char *t)
{
	blanks(s);
	return lit(s, t);
}

/* A port-ref value, as libyang types it: 1..4294967295 in its canonical
 * form. The text is kept in txt (the refusals quote it). */
static bool port_ref(struct scan *s, uint32_t *v, char txt[12])
{
	uint64_t n = 0;
	const char *d = s->p;

	while (s->p < s->end && *s->p >= '0' && *s->p <= '9' && s->p - d < 10)
		n = n * 10 + (uint64_t)(*s->p++ - '0');
	if (s->p == d || *d == '0' || n > UINT32_MAX ||
	    (s->p < s->end && *s->p >= '0' && *s->p <= '9'))
		return false;
	memcpy(txt, d, (size_t)(s->p - d));
	txt[s->p - d] = 0;
	*v = (uint32_t)n;
	return true;
}

/* <NAME>value</NAME> of a port-ref. */
static bool leaf(struct scan *s, const char *name, uint32_t *v, char txt[12])
{
	char open[32], close[32];

	snprintf(open, sizeof(open), "<%s>", name);
	snprintf(close, sizeof(close), "</%s>", name);
	return tag(s, open) && port_ref(s, v, txt) && lit(s, close);
}

/* message-id="DIGITS" (what libnetconf2 numbers), into id (text). */
static bool message_id(struct scan *s, char *id, size_t n)
{
	const char *d;

	if (!lit(s, " message-id=\""))
		return false;
	for (d = s->p; s->p < s->end && *s->p >= '0' && *s->p <= '9'; s->p++)
		;
	if (s->p == d || (size_t)(s->p - d) >= n || !lit(s, "\""))
		return false;
	snprintf(id, n, "%.*s", (int)(s->p - d - 1), d);
	return true;
}

/* The end of an element's start tag, after its name and attributes: 1
 * when the element is empty (<NAME.../> or <NAME...></NAME>, consumed), 0
 * when it has content (past the '>'), -1 when neither. */
static int start_end(struct scan *s, const char *name)
{
	char close[40];

	if (lit(s, "/>"))
		return 1;
	if (!lit(s, ">"))
		return -1;
	snprintf(close, sizeof(close), "</%s>", name);
	const char *save = s->p;
	if (tag(s, close))
		return 1;
	s->p = save;
	return 0;
}

/* ---- the read-back: a <get> reply of cross-connects ------------------------------- */

int opsw_plain_reply(const char *body, size_t len, uint64_t msgid, uint32_t ports, bool pairs,
		     struct opsw_data *d)
{
	const char *list = pairs ? "pairs" : "pair";
	struct scan s = {body, body + len};
	char id[24], want[24], open[16], close[16], ti[12], to[12];
	struct device_cfg cfg = {.cls = DEV_SWITCH, .ports = ports};
	struct ofc_error ignore = {0};

	snprintf(want, sizeof(want), "%llu", (unsigned long long)msgid);
	snprintf(open, sizeof(open), "<%s>", list);
	snprintf(close, sizeof(close), "</%s>", list);
	if (ports < 1 || ports > UINT32_MAX / 2 || !tag(&s, "<rpc-reply xmlns=\"" NC_NS "\"") ||
	    !message_id(&s, id, sizeof(id)) || strcmp(id, want) != 0 || !lit(&s, ">") ||
	    !tag(&s, "<data>") || !tag(&s, "<cross-connects xmlns=\"" OPSW_NS "\""))
		return 0;
	int empty = start_end(&s, "cross-connects");

	if (empty < 0)
		return 0;
	if (!empty) {
		while (!tag(&s, "</cross-connects>")) {
			uint32_t in, out;

			if (!tag(&s, open) || !leaf(&s, "ingress", &in, ti) ||
			    !leaf(&s, "egress", &out, to) || !tag(&s, close))
				goto decline;
			/* the ranges of netconf_data.c's take_pairs */
			if (in > ports || out <= ports || out > 2 * ports)
				goto decline;
			state_add_xconn(&d->xc, in, out - ports);
		}
	}
	if (!tag(&s, "</data>") || !tag(&s, "</rpc-reply>"))
		goto decline;
	blanks(&s);
	if (s.p != s.end)
		goto decline;
	state_sort(&d->xc);
	if (state_check(&d->xc, &cfg, &ignore) < 0)
		goto decline;
	return 1;
decline:
	state_free(&d->xc);
	state_init(&d->xc, DEV_SWITCH);
	return 0;
}

/* ---- the edit: an <edit-config> of cross-connects --------------------------------- */

void opsw_plain_edit_free(struct opsw_plain_edit *e)
{
	free(e->ent);
	memset(e, 0, sizeof(*e));
}

/* One entry: <L[ nc:operation="merge|delete"]><ingress>..</ingress>[<egress>..</egress>]</L>. */
static bool edit_entry(struct scan *s, const char *list, bool nc_prefix, struct opsw_plain_entry *x)
{
	char open[16], close[16];
	uint32_t v;

	snprintf(open, sizeof(open), "<%s", list);
	snprintf(close, sizeof(close), "</%s>", list);
	memset(x, 0, sizeof(*x));
	if (!tag(s, open))
		return false;
	if (nc_prefix && lit(s, " nc:operation=\"merge\""))
		x->op = "merge";
	else if (nc_prefix && lit(s, " nc:operation=\"delete\""))
		x->op = "delete";
	if (!lit(s, ">") || !leaf(s, "ingress", &v, x->in))
		return false;
	const char *save = s->p;
	if (!leaf(s, "egress", &v, x->out)) {
		s->p = save;
		x->out[0] = 0;
	}
	return tag(s, close);
}

int opsw_plain_edit(const char *body, size_t len, bool pairs, struct opsw_plain_edit *e)
{
	struct scan s = {body, body + len};
	bool nc_prefix;
	size_t cap = 0;

	memset(e, 0, sizeof(*e));
	if (!tag(&s, "<rpc xmlns=\"" NC_NS "\"") || !message_id(&s, e->msgid, sizeof(e->msgid)) ||
	    !lit(&s, ">") || !tag(&s, "<edit-config") ||
	    !(lit(&s, ">") || lit(&s, " xmlns=\"" NC_NS "\">")) || !tag(&s, "<target>"))
		return 0;
	if (tag(&s, "<candidate/>"))
		e->candidate = true;
	else if (!tag(&s, "<running/>"))
		return 0;
	if (!tag(&s, "</target>"))
		return 0;
	e->rollback = tag(&s, "<error-option>rollback-on-error</error-option>");
	if (!tag(&s, "<config>") || !tag(&s, "<cross-connects xmlns=\"" OPSW_NS "\""))
		return 0;
	nc_prefix = lit(&s, " xmlns:nc=\"" NC_NS "\"");
	int empty = start_end(&s, "cross-connects");

	if (empty < 0)
		return 0;
	if (!empty) {
		while (!tag(&s, "</cross-connects>")) {
			GROW(e->ent, cap, (size_t)e->n + 1);
			if (!edit_entry(&s, pairs ? "pairs" : "pair", nc_prefix, &e->ent[e->n]))
				goto decline;
			e->n++;
		}
	}
	if (!tag(&s, "</config>") || !tag(&s, "</edit-config>") || !tag(&s, "</rpc>"))
		goto decline;
	blanks(&s);
	if (s.p != s.end)
		goto decline;
	return 1;
decline:
	opsw_plain_edit_free(e);
	return 0;
}
