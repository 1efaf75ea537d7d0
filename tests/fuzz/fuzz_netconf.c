/* libFuzzer: what a NETCONF switch sends never crashes the path from it to
 * ofc's state (drivers/netconf_data.c), and what that path accepts holds.
 * The first byte picks the module's revision (bit 0: the list `pair` or
 * `pairs`) and what the rest is (bits 1-3):
 *
 *   0  <get> data, parsed against the module as the driver parses it: what
 *      is accepted is a state an 8x8 switch can hold;
 *   1  a whole <rpc-reply> to a <get>, read as libnetconf2 reads it
 *      (lyd_parse_op with the RPC's copy, LYD_TYPE_REPLY_NETCONF, in a
 *      context holding ietf-netconf but not the model, as a session's),
 *      then netconf_reply_take and the module's parse: an rpc-error is a
 *      refusal with its tag, and data accepted is a state an 8x8 switch
 *      can hold; and as the driver reads it (the session's context holding
 *      the model: netconf_reply_data and opsw_take on libnetconf2's tree);
 *      and by the plain reader (opsw_plain_reply, the transaction's reads):
 *      what it takes, that tree's way takes too, the same cross-connects;
 *   2  a hello's capabilities, one a line (netconf_caps_read): a model
 *      read has a revision YYYY-MM-DD, and `pairs` exactly before
 *      2017-08-04;
 *   3  an rpc-error's error-path (opsw_error_ingress): an ingress read is
 *      1..2^32-1 and written in the path;
 *   4  a whole <notification>, read as libnetconf2 reads it (lyd_parse_op,
 *      LYD_TYPE_NOTIF_NETCONF, in a session's context with notifications
 *      and polatis-switch), then opsw_notif_take: a port power
 *      notification taken names a port 1..16 of an 8x8 switch;
 *   5-7 as 3.
 *
 * The modules are ofc's built-in ones (drivers/yang via embed-yang).
 */
#include <libyang/libyang.h>
#include <stdlib.h>
#include <string.h>

#include "drivers/internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_state(const struct opsw_data *d)
{
	for (uint32_t k = 0; k < d->xc.nxc; k++)
		if (d->xc.xc[k].in < 1 || d->xc.xc[k].in > 8 || d->xc.xc[k].out < 1 ||
		    d->xc.xc[k].out > 8)
			abort();
	for (uint32_t k = 0; k < d->nports; k++)
		if (d->ports[k].port < 1 || d->ports[k].port > 16)
			abort();
}

static void data_path(struct ly_ctx *ctx, const char *xml, size_t len)
{
	struct ofc_error err = {0};
	struct opsw_data d;

	opsw_data_init(&d);
	if (opsw_parse(ctx, xml, len, 8, &d, &err) == 0)
		check_state(&d);
	else if (!err.msg[0])
		abort(); /* every error says what was wrong */
	opsw_data_free(&d);
}

/* A <get>'s reply parsed in ctx as libnetconf2 parses one (its operation
 * in *op, the envelope in *envp, both for reply_done): true when it parsed.
 * libyang's log is quiet until reply_done. */
static bool reply_parse(struct ly_ctx *ctx, const char *xml, struct lyd_node **op,
			struct lyd_node **envp, struct ly_in **in)
{
	const struct lys_module *nc = ly_ctx_get_module_implemented(ctx, "ietf-netconf");
	static uint32_t quiet = LY_LOSTORE_LAST;

	*op = *envp = NULL;
	*in = NULL;
	if (!nc || lyd_new_inner(NULL, nc, "get", 0, op) != LY_SUCCESS)
		abort();
	quiet = LY_LOSTORE_LAST;
	ly_temp_log_options(&quiet);
	return ly_in_new_memory(xml, in) == LY_SUCCESS &&
	       lyd_parse_op(NULL, *op, *in, LYD_XML, LYD_TYPE_REPLY_NETCONF, envp, NULL) ==
		   LY_SUCCESS;
}

static void reply_done(struct lyd_node *op, struct lyd_node *envp, struct ly_in *in)
{
	ly_temp_log_options(NULL);
	ly_in_free(in, 0);
	lyd_free_all(envp);
	lyd_free_all(op);
}

/* What the driver does with a reply libnetconf2 received. */
static void reply_path(struct ly_ctx *session, struct ly_ctx *model, const char *xml)
{
	struct lyd_node *op, *envp;
	struct netconf_rpc_error re;
	struct ofc_error err = {0};
	struct ly_in *in;
	char *got = NULL;

	if (reply_parse(session, xml, &op, &envp, &in)) {
		int rc = netconf_reply_take(envp, op, &got, &re, &err);

		if (rc < 0 && !err.msg[0])
			abort();
		if (rc < 0 && err.reason == OFC_R_REFUSED && !re.have)
			abort();
		if (rc == 0 && got) {
			struct opsw_data a;
			struct ofc_error e1 = {0};
			size_t n = strlen(got);
			int ra;

			opsw_data_init(&a);
			ra = opsw_parse(model, got, n, 8, &a, &e1);
			if (ra == 0)
				check_state(&a);
			else if (!e1.msg[0])
				abort();
			opsw_data_free(&a);
		}
	}
	free(got);
	reply_done(op, envp, in);
}

/* The driver's path since the session holds the model (check_caps): the
 * reply parsed in that context, then netconf_reply_data and opsw_take on
 * the tree as it is: what is taken is a state an 8x8 switch can hold. And
 * the plain reader's (a transaction's reads of the cross-connects): a
 * reply it takes, the tree's way takes too, with the same cross-connects
 * (the message-id it checks is the reply's own, as a session's would be). */
static void reply_tree_path(struct ly_ctx *typed, bool pairs, const char *xml)
{
	const char *id = strstr(xml, "message-id=\"");
	struct lyd_node *op, *envp;
	const struct lyd_node *tree;
	struct netconf_rpc_error re;
	struct ofc_error err = {0};
	struct opsw_data p, a;
	struct ly_in *in;
	int taken = -1;

	opsw_data_init(&p);
	opsw_data_init(&a);
	bool plain = id && opsw_plain_reply(xml, strlen(xml), strtoull(id + 12, NULL, 10), 8, pairs,
					    &p) == 1;
	if (plain)
		check_state(&p);
	if (reply_parse(typed, xml, &op, &envp, &in) &&
	    netconf_reply_data(envp, op, &tree, &re, &err) == 0) {
		taken = opsw_take(tree, 8, &a, &err);
		if (taken == 0)
			check_state(&a);
		else if (!err.msg[0])
			abort();
	}
	if (plain && (taken != 0 || !state_equal(&p.xc, &a.xc)))
		abort();
	opsw_data_free(&p);
	opsw_data_free(&a);
	reply_done(op, envp, in);
}

static void caps_path(const char *text)
{
	char *copy = xstrdup(text), *save = NULL;
	const char *caps[64];
	uint32_t n = 0;
	struct netconf_caps c;

	for (char *l = strtok_r(copy, "\n", &save); l && n < 63; l = strtok_r(NULL, "\n", &save))
		caps[n++] = l;
	caps[n] = NULL;
	netconf_caps_read(caps, &c);
	if (c.model) {
		if (strlen(c.rev) != 10 || c.rev[4] != '-' || c.rev[7] != '-')
			abort();
		if (c.pairs != (strcmp(c.rev, "2017-08-04") < 0))
			abort();
	} else if (c.pairs || c.rev[0]) {
		abort();
	}
	free(copy);
}

static void path_path(const char *text)
{
	uint32_t in = 0;
	char num[16];

	if (opsw_error_ingress(text, &in) == 0) {
		snprintf(num, sizeof(num), "%u", in);
		if (in < 1 || !strstr(text, num))
			abort();
	}
}

static void notif_path(struct ly_ctx *ctx, const char *text)
{
	struct lyd_node *envp = NULL, *op = NULL;
	struct ly_in *in = NULL;
	struct ofc_error err = {0};
	struct opsw_notif n;

	if (ly_in_new_memory(text, &in) != LY_SUCCESS)
		abort();
	if (lyd_parse_op(ctx, NULL, in, LYD_XML, LYD_TYPE_NOTIF_NETCONF, &envp, &op) ==
		LY_SUCCESS &&
	    opsw_notif_take(op, 8, &n, &err) == 1 &&
	    (n.port < 1 || n.port > 16 || n.kind < OPSW_POWER_ALARM ||
	     n.kind > OPSW_POWER_WARN_CLEAR))
		abort();
	lyd_free_all(envp);
	lyd_free_all(op);
	ly_in_free(in, 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct ly_ctx *model[2], *session, *notif, *typed[2];
	static const char *const rev[2] = {"2017-08-04", "2015-06-10"};
	struct ofc_error err = {0};
	char *text;
	int i;

	if (size < 1 || size > 1 << 16)
		return 0;
	i = data[0] & 1;
	if (!model[i] && opsw_context(NULL, rev[i], &model[i], &err) < 0)
		abort();
	if (!session && netconf_context(NULL, NULL, LY_CTX_NO_YANGLIBRARY, &session, &err) < 0)
		abort();
	if (!typed[i] && (netconf_context(NULL, NULL, LY_CTX_NO_YANGLIBRARY, &typed[i], &err) < 0 ||
			  opsw_context_add(typed[i], rev[i], &err) < 0))
		abort();
	if (!notif && (netconf_context(NULL, NULL, LY_CTX_NO_YANGLIBRARY, &notif, &err) < 0 ||
		       netconf_context_notifications(notif, &err) < 0))
		abort();
	text = malloc(size);
	memcpy(text, data + 1, size - 1);
	text[size - 1] = 0;
	switch ((data[0] >> 1) & 7) {
	case 0:
		data_path(model[i], (const char *)data + 1, size - 1);
		break;
	case 1:
		if (strlen(text) == size - 1) {
			reply_path(session, model[i], text);
			reply_tree_path(typed[i], i == 1, text);
		}
		break;
	case 2:
		caps_path(text);
		break;
	case 4:
		if (strlen(text) == size - 1)
			notif_path(notif, text);
		break;
	default:
		path_path(text);
		break;
	}
	free(text);
	return 0;
}
