/* What a Polatis-model switch reports over NETCONF, as ofc's state: the
 * contents of a <get> reply's <data> (XML) parsed by libyang against ofc's
 * own optical-switch module (drivers/yang/, docs/netconf.md) into
 * cross-connects and per-port health. Pure and bounded: the netconf driver
 * feeds it what libnetconf2 received, the fuzzer arbitrary bytes.
 *
 * The module has two revisions: from 2017-08-04 the list of cross-connects
 * is `pair`, before it `pairs`. The device's hello names the revision it
 * implements (opsw_revision); the context is built for that one.
 */
#include "drivers/internal.h"

#include <libyang/libyang.h>
#include <stdlib.h>
#include <string.h>

const char *const opsw_revisions[] = {"2017-08-04", "2015-06-10", NULL};

int opsw_revision(const char *capability, char *rev, size_t n)
{
	const char *q = strchr(capability, '?'), *r;

	if (strncmp(capability, OPSW_NS, strlen(OPSW_NS)) != 0 || q != capability + strlen(OPSW_NS))
		return -1;
	if (!strstr(q, "module=optical-switch"))
		return -1;
	r = strstr(q, "revision=");
	if (!r)
		return -1;
	r += strlen("revision=");
	/* YYYY-MM-DD, then the end or the next parameter */
	for (int i = 0; i < 10; i++)
		if (i == 4 || i == 7 ? r[i] != '-' : !(r[i] >= '0' && r[i] <= '9'))
			return -1;
	if (r[10] && r[10] != '&')
		return -1;
	snprintf(rev, n, "%.10s", r);
	return 0;
}

bool opsw_uses_pairs(const char *rev)
{
	return strcmp(rev, "2017-08-04") < 0;
}

/* The revision of ofc's module to load for a device's rev: rev itself when
 * ofc has it, else the nearest one's (the list's name is the only
 * difference ofc relies on). */
static const char *known_revision(const char *rev)
{
	for (const char *const *r = opsw_revisions; *r; r++)
		if (strcmp(*r, rev) == 0)
			return *r;
	return opsw_uses_pairs(rev) ? "2015-06-10" : "2017-08-04";
}

/* Load the built-in module name@rev (rev NULL: the first of that name)
 * into ctx, implemented, with the features named. */
static int load_text(struct ly_ctx *ctx, const char *name, const char *rev, const char **features,
		     struct ofc_error *err)
{
	for (const struct yang_text *t = yang_texts; t->name; t++) {
		struct ly_in *in = NULL;
		LY_ERR e;

		if (strcmp(t->name, name) != 0 || (rev && strcmp(t->revision, rev) != 0))
			continue;
		if (ly_in_new_memory(t->text, &in) != LY_SUCCESS)
			return ofc_error_set(err, OFC_E_RUNTIME, "cannot read module %s", name);
		e = lys_parse(ctx, in, LYS_IN_YANG, features, NULL);
		ly_in_free(in, 0);
		if (e != LY_SUCCESS)
			return ofc_error_set(err, OFC_E_RUNTIME,
					     "cannot load YANG module %s@%s: %s", name, t->revision,
					     ly_errmsg(ctx) ? ly_errmsg(ctx) : "refused");
		return 0;
	}
	return ofc_error_set(err, OFC_E_RUNTIME, "no YANG module %s%s%s built into ofc", name,
			     rev ? "@" : "", rev ? rev : "");
}

/* libyang's import callback: what a built-in module imports comes from
 * the built-in modules too (notifications imports yuma-ncx). */
static LY_ERR builtin_import(const char *mod_name, const char *mod_rev, const char *submod_name,
			     const char *submod_rev, void *user_data, LYS_INFORMAT *format,
			     const char **module_data,
			     ly_module_imp_data_free_clb *free_module_data)
{
	(void)submod_rev;
	(void)user_data;
	if (submod_name)
		return LY_ENOTFOUND;
	for (const struct yang_text *t = yang_texts; t->name; t++)
		if (strcmp(t->name, mod_name) == 0 &&
		    (!mod_rev || strcmp(t->revision, mod_rev) == 0)) {
			*format = LYS_IN_YANG;
			*module_data = t->text;
			*free_module_data = NULL;
			return LY_SUCCESS;
		}
	return LY_ENOTFOUND;
}

int netconf_context_notifications(struct ly_ctx *ctx, struct ofc_error *err)
{
	uint32_t quiet = LY_LOSTORE_LAST; /* as in netconf_context */
	int rc = 0;

	ly_temp_log_options(&quiet);
	ly_ctx_set_module_imp_clb(ctx, builtin_import, NULL);
	if (load_text(ctx, "notifications", NULL, NULL, err) < 0 ||
	    load_text(ctx, "polatis-switch", NULL, NULL, err) < 0)
		rc = -1;
	/* not left behind: libnetconf2 frees what an import callback gives it */
	ly_ctx_set_module_imp_clb(ctx, NULL, NULL);
	ly_temp_log_options(NULL);
	return rc;
}

int netconf_context(const char *rev, const char *const *features, uint16_t ly_flags,
		    struct ly_ctx **out, struct ofc_error *err)
{
	static const char *const all[] = {"*", NULL};
	struct ly_ctx *ctx = NULL;
	/* Library code never prints: libyang keeps its last error for
	 * ly_errmsg instead of logging it (this thread, this call only). */
	uint32_t quiet = LY_LOSTORE_LAST;
	int rc = 0;

	*out = NULL;
	ly_temp_log_options(&quiet);
	if (ly_ctx_new(NULL, ly_flags | LY_CTX_DISABLE_SEARCHDIRS, &ctx) != LY_SUCCESS) {
		ly_temp_log_options(NULL);
		return ofc_error_set(err, OFC_E_RUNTIME, "cannot make a YANG context");
	}
	ly_ctx_set_module_imp_clb(ctx, builtin_import, NULL);
	if (load_text(ctx, "ietf-netconf", NULL, (const char **)(features ? features : all), err) <
		0 ||
	    (rev && load_text(ctx, "optical-switch", known_revision(rev), NULL, err) < 0))
		rc = -1;
	ly_ctx_set_module_imp_clb(ctx, NULL, NULL); /* as in netconf_context_notifications */
	ly_temp_log_options(NULL);
	if (rc < 0)
		ly_ctx_destroy(ctx);
	else
		*out = ctx;
	return rc;
}

int opsw_context(const char *yang_dir, const char *rev, struct ly_ctx **out, struct ofc_error *err)
{
	struct ly_ctx *ctx = NULL;
	const char *known = known_revision(rev);

	if (!yang_dir) {
		uint32_t quiet = LY_LOSTORE_LAST;
		int rc = 0;

		ly_temp_log_options(&quiet);
		if (ly_ctx_new(NULL, LY_CTX_NO_YANGLIBRARY | LY_CTX_DISABLE_SEARCHDIRS, &ctx) !=
		    LY_SUCCESS)
			rc = ofc_error_set(err, OFC_E_RUNTIME, "cannot make a YANG context");
		else if (load_text(ctx, "optical-switch", known, NULL, err) < 0)
			rc = -1;
		ly_temp_log_options(NULL);
		if (rc < 0)
			ly_ctx_destroy(ctx);
		else
			*out = ctx;
		return rc;
	}
	uint32_t quiet = LY_LOSTORE_LAST; /* as in netconf_context */
	int rc = 0;

	ly_temp_log_options(&quiet);
	if (ly_ctx_new(yang_dir, LY_CTX_NO_YANGLIBRARY | LY_CTX_DISABLE_SEARCHDIR_CWD, &ctx) !=
	    LY_SUCCESS) {
		rc = ofc_error_set(err, OFC_E_RUNTIME,
				   "cannot load YANG module optical-switch@%s: cannot search %s",
				   known, yang_dir);
	} else if (!ly_ctx_load_module(ctx, "optical-switch", known, NULL)) {
		rc = ofc_error_set(err, OFC_E_RUNTIME,
				   "cannot load YANG module optical-switch@%s from %s: %s", known,
				   yang_dir, ly_errmsg(ctx) ? ly_errmsg(ctx) : "not found");
		ly_ctx_destroy(ctx);
	} else {
		*out = ctx;
	}
	ly_temp_log_options(NULL);
	return rc;
}

void opsw_context_free(struct ly_ctx *ctx)
{
	if (ctx)
		ly_ctx_destroy(ctx);
}

void opsw_data_init(struct opsw_data *d)
{
	memset(d, 0, sizeof(*d));
	state_init(&d->xc, DEV_SWITCH);
}

void opsw_data_free(struct opsw_data *d)
{
	state_free(&d->xc);
	free(d->ports);
	free(d->at);
	memset(d, 0, sizeof(*d));
}

/* The entry for port p (1..2N of an N-port switch), added when new: found
 * by its index, not by a walk of the entries (2N of them, each looked up
 * twice a read). */
static struct opsw_port *port_entry(struct opsw_data *d, uint32_t p, uint32_t n)
{
	if (!d->at) {
		d->nat = 2 * n + 1;
		d->at = xcalloc(d->nat, sizeof(*d->at));
	}
	if (d->at[p])
		return &d->ports[d->at[p] - 1];
	GROW(d->ports, d->ports_cap, (size_t)d->nports + 1);
	d->ports[d->nports] = (struct opsw_port){.port = p};
	d->at[p] = ++d->nports;
	return &d->ports[d->nports - 1];
}

const struct opsw_port *opsw_port_of(const struct opsw_data *d, uint32_t p)
{
	return p < d->nat && d->at[p] ? &d->ports[d->at[p] - 1] : NULL;
}

static const char *leaf_value(const struct lyd_node *list, const char *name)
{
	const struct lyd_node *c;

	LY_LIST_FOR(lyd_child(list), c)
	if (c->schema && strcmp(c->schema->name, name) == 0)
		return lyd_get_value(c);
	return NULL;
}

static int port_number(const char *v, uint32_t lo, uint32_t hi, uint32_t *out)
{
	return v && parse_u32(v, out) == 0 && *out >= lo && *out <= hi ? 0 : -1;
}

static int take_pairs(const struct lyd_node *cont, const char *list, uint32_t n,
		      struct opsw_data *d, struct ofc_error *err)
{
	const struct lyd_node *e;

	LY_LIST_FOR(lyd_child(cont), e)
	{
		const char *in = leaf_value(e, "ingress"), *out = leaf_value(e, "egress");
		uint32_t i, o;

		if (!e->schema || strcmp(e->schema->name, list) != 0)
			continue;
		if (port_number(in, 1, n, &i) < 0 || port_number(out, n + 1, 2 * n, &o) < 0)
			return ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_GARBAGE,
					      "cross-connect %.20s -> %.20s is impossible on a "
					      "%ux%u switch (ingress 1..%u, egress %u..%u)",
					      in ? in : "(none)", out ? out : "(none)", n, n, n,
					      n + 1, 2 * n);
		state_add_xconn(&d->xc, i, o - n);
	}
	return 0;
}

static int take_ports(const struct lyd_node *cont, bool power, uint32_t n, struct opsw_data *d,
		      struct ofc_error *err)
{
	const struct lyd_node *e;

	LY_LIST_FOR(lyd_child(cont), e)
	{
		const char *id = leaf_value(e, "port-id");
		const char *v = leaf_value(e, power ? "power" : "status");
		struct opsw_port *p;
		uint32_t k;

		if (!e->schema || strcmp(e->schema->name, "port") != 0)
			continue;
		if (port_number(id, 1, 2 * n, &k) < 0)
			return ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_GARBAGE,
					      "%s of port '%.20s': no such port on a %ux%u switch",
					      power ? "power" : "status", id ? id : "(none)", n, n);
		if (!v)
			continue;
		p = port_entry(d, k, n);
		if (power) {
			char *end;
			double dbm = strtod(v, &end);

			if (*end || dbm < -100 || dbm > 100)
				return ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_GARBAGE,
						      "power of port %u: '%.20s' dBm", k, v);
			p->power_dbm = dbm;
			p->has_power = true;
		} else {
			p->status = strcmp(v, "ENABLED") == 0	 ? OPSW_ENABLED
				    : strcmp(v, "DISABLED") == 0 ? OPSW_DISABLED
								 : OPSW_FAILED;
		}
	}
	return 0;
}

size_t opsw_max_data(uint32_t ports)
{
	uint64_t b = (uint64_t)OPSW_MAX_DATA + (uint64_t)ports * OPSW_DATA_PER_PORT;

	return b > OPSW_DATA_CEILING ? OPSW_DATA_CEILING : (size_t)b;
}

int opsw_parse(struct ly_ctx *ctx, const char *xml, size_t len, uint32_t ports, struct opsw_data *d,
	       struct ofc_error *err)
{
	const struct lys_module *mod = ly_ctx_get_module_implemented(ctx, "optical-switch");
	struct lyd_node *tree = NULL;
	char *copy;
	int rc = 0;

	if (!mod)
		return ofc_error_set(err, OFC_E_RUNTIME, "no optical-switch module in the context");
	if (len > opsw_max_data(ports))
		return ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_TOO_BIG,
				      "data larger than %zu bytes, the bound for %u ports",
				      opsw_max_data(ports), ports);
	if (ports < 1 || ports > UINT32_MAX / 2)
		return ofc_error_set(err, OFC_E_RUNTIME, "bad port count %u", ports);
	uint32_t quiet = LY_LOSTORE_LAST; /* as in opsw_context */

	copy = xstrndup(xml, len); /* libyang reads a NUL-terminated string */
	if (strlen(copy) != len) {
		free(copy);
		return ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_GARBAGE, "NUL byte in the data");
	}
	/* Parse only: the <get> reply holds state (config false) data and a
	 * subtree of the model; ofc checks what it uses itself. STRICT: an
	 * element the module does not know is garbage, not something to skip. */
	ly_temp_log_options(&quiet);
	if (lyd_parse_data_mem(ctx, copy, LYD_XML, LYD_PARSE_ONLY | LYD_PARSE_STRICT, 0, &tree) !=
	    LY_SUCCESS) {
		const char *m = ly_errmsg(ctx);

		rc = ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_GARBAGE, "malformed data: %.200s",
				    m ? m : "libyang refused it");
	}
	ly_temp_log_options(NULL);
	free(copy);
	if (rc == 0)
		rc = opsw_take(tree, ports, d, err);
	lyd_free_all(tree);
	return rc;
}

int opsw_take(const struct lyd_node *tree, uint32_t ports, struct opsw_data *d,
	      struct ofc_error *err)
{
	const struct lyd_node *top, *n;
	struct device_cfg cfg = {.cls = DEV_SWITCH, .ports = ports};
	int rc = 0;

	if (ports < 1 || ports > UINT32_MAX / 2)
		return ofc_error_set(err, OFC_E_RUNTIME, "bad port count %u", ports);
	LY_LIST_FOR(tree, top)
	{
		const struct lys_module *mod = top->schema ? top->schema->module : NULL;
		const char *list;

		/* Every node typed by the module: what a parse left opaque is
		 * an element the module lacks or a value not of its type. */
		LYD_TREE_DFS_BEGIN(top, n)
		{
			if (!n->schema || !mod || strcmp(mod->name, "optical-switch") != 0)
				return ofc_error_setr(
				    err, OFC_E_RUNTIME, OFC_R_GARBAGE,
				    "malformed data: '%.60s' is not an element of "
				    "the optical-switch module, or its value is not "
				    "of its type",
				    LYD_NAME(n));
			LYD_TREE_DFS_END(top, n);
		}
		list = mod->revision && opsw_uses_pairs(mod->revision) ? "pairs" : "pair";
		if (strcmp(top->schema->name, "cross-connects") == 0)
			rc = take_pairs(top, list, ports, d, err);
		else if (strcmp(top->schema->name, "port-config") == 0)
			rc = take_ports(top, false, ports, d, err);
		else if (strcmp(top->schema->name, "opm-power") == 0)
			rc = take_ports(top, true, ports, d, err);
		if (rc < 0)
			return rc;
	}
	state_sort(&d->xc);
	return state_check(&d->xc, &cfg, err);
}

int opsw_context_add(struct ly_ctx *ctx, const char *rev, struct ofc_error *err)
{
	uint32_t quiet = LY_LOSTORE_LAST; /* as in netconf_context */
	int rc;

	ly_temp_log_options(&quiet);
	rc = load_text(ctx, "optical-switch", known_revision(rev), NULL, err);
	ly_temp_log_options(NULL);
	return rc;
}

/* ---- reading: a reply -------------------------------------------------------------- */

static const char *child_text(const struct lyd_node *n, const char *name)
{
	const struct lyd_node *c;

	LY_LIST_FOR(lyd_child(n), c)
	if (strcmp(LYD_NAME(c), name) == 0) {
		if (!c->schema)
			return ((const struct lyd_node_opaq *)c)->value;
		return lyd_get_value(c);
	}
	return NULL;
}

static const struct lyd_node *child_node(const struct lyd_node *n, const char *name)
{
	const struct lyd_node *c;

	LY_LIST_FOR(lyd_child(n), c)
	if (strcmp(LYD_NAME(c), name) == 0)
		return c;
	return NULL;
}

/* The first <rpc-error> of severity error in a reply's envelope. */
static bool take_rpc_error(const struct lyd_node *envp, struct netconf_rpc_error *re)
{
	const struct lyd_node *e;

	memset(re, 0, sizeof(*re));
	LY_LIST_FOR(lyd_child(envp), e)
	{
		const char *sev = child_text(e, "error-severity"), *t;
		const struct lyd_node *info;

		if (strcmp(LYD_NAME(e), "rpc-error") != 0 || (sev && strcmp(sev, "warning") == 0))
			continue;
		re->have = true;
		snprintf(re->tag, sizeof(re->tag), "%s", (t = child_text(e, "error-tag")) ? t : "");
		snprintf(re->message, sizeof(re->message), "%s",
			 (t = child_text(e, "error-message")) ? t : "");
		snprintf(re->path, sizeof(re->path), "%s",
			 (t = child_text(e, "error-path")) ? t : "");
		snprintf(re->app_tag, sizeof(re->app_tag), "%s",
			 (t = child_text(e, "error-app-tag")) ? t : "");
		info = child_node(e, "error-info");
		if (info && (t = child_text(info, "session-id")))
			parse_u32(t, &re->session_id);
		return true;
	}
	return false;
}

int netconf_reply_take(const struct lyd_node *envp, const struct lyd_node *op, char **data,
		       struct netconf_rpc_error *re, struct ofc_error *err)
{
	const struct lyd_node *d;

	if (data)
		*data = NULL;
	if (take_rpc_error(envp, re))
		return ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_REFUSED, "refused (%s%s%.200s)",
				      re->tag[0] ? re->tag : "rpc-error",
				      re->message[0] ? ": " : "", re->message);
	if (!data || !op || !(d = child_node(op, "data")))
		return 0;
	if (!d->schema || !(d->schema->nodetype & LYD_NODE_ANY) ||
	    lyd_any_value_str(d, data) != LY_SUCCESS) {
		*data = NULL;
		return ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_GARBAGE, "unreadable data");
	}
	return 0;
}

/* ---- reading: a notification ------------------------------------------------------ */

static const char *const notif_names[] = {
    [OPSW_POWER_ALARM] = "port-power-alarm",
    [OPSW_POWER_CLEAR] = "port-power-clear",
    [OPSW_POWER_WARN] = "port-power-warn-alarm",
    [OPSW_POWER_WARN_CLEAR] = "port-power-warn-clear",
};

const char *opsw_notif_name(enum opsw_notif_kind k)
{
	return k > 0 && k < ARRAY_SIZE(notif_names) ? notif_names[k] : "?";
}

int opsw_notif_take(const struct lyd_node *op, uint32_t ports, struct opsw_notif *out,
		    struct ofc_error *err)
{
	const char *id;

	memset(out, 0, sizeof(*out));
	if (!op || !op->schema || op->schema->nodetype != LYS_NOTIF ||
	    strcmp(op->schema->module->name, "polatis-switch") != 0)
		return 0;
	for (size_t k = 1; k < ARRAY_SIZE(notif_names); k++)
		if (strcmp(op->schema->name, notif_names[k]) == 0)
			out->kind = (enum opsw_notif_kind)k;
	if (!out->kind)
		return 0;
	id = leaf_value(op, "port-id");
	if (ports < 1 || ports > UINT32_MAX / 2 || port_number(id, 1, 2 * ports, &out->port) < 0)
		return ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_GARBAGE,
				      "%s for port '%.20s': no such port on a %ux%u switch",
				      notif_names[out->kind], id ? id : "(none)", ports, ports);
	return 1;
}

int netconf_reply_data(const struct lyd_node *envp, const struct lyd_node *op,
		       const struct lyd_node **tree, struct netconf_rpc_error *re,
		       struct ofc_error *err)
{
	const struct lyd_node *d;
	const struct lyd_node_any *a;

	*tree = NULL;
	if (take_rpc_error(envp, re))
		return ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_REFUSED, "refused (%s%s%.200s)",
				      re->tag[0] ? re->tag : "rpc-error",
				      re->message[0] ? ": " : "", re->message);
	if (!op || !(d = child_node(op, "data")))
		return 0;
	a = (const struct lyd_node_any *)d;
	if (!d->schema || !(d->schema->nodetype & LYD_NODE_ANY))
		return ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_GARBAGE, "unreadable data");
	if (a->value_type == LYD_ANYDATA_DATATREE) {
		*tree = a->value.tree;
		return 0;
	}
	/* text in <data> is not data of the model; blanks are nothing */
	for (const char *c = a->value.str; c && *c; c++)
		if (*c != ' ' && *c != '\t' && *c != '\n' && *c != '\r')
			return ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_GARBAGE,
					      "malformed data: text where elements of the "
					      "optical-switch module belong");
	return 0;
}

/* ---- writing: the edit of a batch ------------------------------------------------ */

uint32_t opsw_edit(const struct op_batch *b, uint32_t ports, bool pairs, struct strbuf *out)
{
	const char *list = pairs ? "pairs" : "pair";
	uint32_t n = 0;

	sb_puts(out, "<cross-connects xmlns=\"" OPSW_NS "\" "
		     "xmlns:nc=\"urn:ietf:params:xml:ns:netconf:base:1.0\">");
	for (uint32_t i = 0; i < b->n; i++) {
		const struct op *op = &b->ops[i];
		bool again = false;

		if (op->kind == OP_DISCONNECT) {
			for (uint32_t k = 0; k < b->n && !again; k++)
				again =
				    b->ops[k].kind == OP_CONNECT && b->ops[k].xc.in == op->xc.in;
			if (again)
				continue;
			sb_printf(out, "<%s nc:operation=\"delete\"><ingress>%u</ingress></%s>",
				  list, op->xc.in, list);
		} else if (op->kind == OP_CONNECT) {
			sb_printf(out,
				  "<%s nc:operation=\"merge\"><ingress>%u</ingress>"
				  "<egress>%llu</egress></%s>",
				  list, op->xc.in, (unsigned long long)ports + op->xc.out, list);
		} else {
			continue;
		}
		n++;
	}
	sb_puts(out, "</cross-connects>");
	return n;
}

int opsw_error_ingress(const char *path, uint32_t *in)
{
	const char *p = path ? strstr(path, "ingress=") : NULL;
	char q;

	if (!p)
		return -1;
	p += strlen("ingress=");
	q = *p;
	if (q != '\'' && q != '"')
		return -1;
	p++;
	uint64_t v = 0;
	const char *d = p;
	while (*p >= '0' && *p <= '9' && p - d < 11)
		v = v * 10 + (uint64_t)(*p++ - '0');
	if (p == d || *p != q || v < 1 || v > UINT32_MAX)
		return -1;
	*in = (uint32_t)v;
	return 0;
}

/* ---- reading: a hello ---------------------------------------------------------------- */

static bool has_prefix(const char *s, const char *p)
{
	return strncmp(s, p, strlen(p)) == 0;
}

void netconf_caps_read(const char *const *cpblts, struct netconf_caps *c)
{
	static const char cap[] = "urn:ietf:params:netconf:capability:";

	memset(c, 0, sizeof(*c));
	for (const char *const *p = cpblts; p && *p; p++) {
		const char *s = *p;
		char rev[16];

		if (opsw_revision(s, rev, sizeof(rev)) == 0) {
			c->model = true;
			snprintf(c->rev, sizeof(c->rev), "%s", rev);
			c->pairs = opsw_uses_pairs(rev);
			continue;
		}
		if (!has_prefix(s, cap))
			continue;
		s += strlen(cap);
		c->candidate |= has_prefix(s, "candidate:1.0");
		c->confirmed |= has_prefix(s, "confirmed-commit:1.");
		c->rollback |= has_prefix(s, "rollback-on-error:1.0");
		c->writable_running |= has_prefix(s, "writable-running:1.0");
		c->notification |= has_prefix(s, "notification:1.0");
		c->interleave |= has_prefix(s, "interleave:1.0");
	}
}
