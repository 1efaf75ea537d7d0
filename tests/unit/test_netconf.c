/* The NETCONF data path of the Polatis optical-switch model (see
 * drivers/netconf_data.c): the revision from a hello capability, the
 * list's name by revision, cross-connects and port health out of <get>
 * data, refusals of what a switch cannot hold, the edit of a batch, what
 * a hello offers, the modules built into ofc; and the relay that bounds
 * what a device sends (drivers/netconf_relay.c). Run from the source
 * tree's root (make test does): the modules are in drivers/yang. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <libyang/libyang.h>
#include <pthread.h>
#include <sys/socket.h>
#include <unistd.h>

#include "drivers/internal.h"

#define NS	 "xmlns=\"http://www.polatis.com/yang/optical-switch\""
#define YANG_DIR "drivers/yang"

static void test_revision(void **state)
{
	char rev[16];
	(void)state;

	assert_int_equal(opsw_revision("http://www.polatis.com/yang/optical-switch?module=optical-"
				       "switch&revision=2015-06-10",
				       rev, sizeof(rev)),
			 0);
	assert_string_equal(rev, "2015-06-10");
	assert_true(opsw_uses_pairs(rev));
	assert_int_equal(opsw_revision("http://www.polatis.com/yang/optical-switch?module=optical-"
				       "switch&revision=2017-08-04&features=x",
				       rev, sizeof(rev)),
			 0);
	assert_string_equal(rev, "2017-08-04");
	assert_false(opsw_uses_pairs(rev));
	assert_false(opsw_uses_pairs("2019-01-01"));
	/* not the model, no revision, a malformed one */
	assert_int_equal(opsw_revision("urn:ietf:params:netconf:base:1.1", rev, sizeof(rev)), -1);
	assert_int_equal(opsw_revision("http://www.polatis.com/yang/optical-switch?module=optical-"
				       "switch",
				       rev, sizeof(rev)),
			 -1);
	assert_int_equal(opsw_revision("http://www.polatis.com/yang/optical-switch?module=optical-"
				       "switch&revision=2017-8-04",
				       rev, sizeof(rev)),
			 -1);
	assert_int_equal(opsw_revision("http://www.polatis.com/yang/optical-switchX?module=optical-"
				       "switch&revision=2017-08-04",
				       rev, sizeof(rev)),
			 -1);
}

static int parse(const char *rev, const char *xml, uint32_t ports, struct opsw_data *d,
		 struct ofc_error *err)
{
	struct ly_ctx *ctx = NULL;
	int rc;

	assert_int_equal(opsw_context(YANG_DIR, rev, &ctx, err), 0);
	opsw_data_init(d);
	rc = opsw_parse(ctx, xml, strlen(xml), ports, d, err);
	opsw_context_free(ctx);
	return rc;
}

/* Both revisions: the list is `pair` or `pairs`, egress N+k becomes k,
 * status and power land on their ports. */
static void test_parse(void **state)
{
	static const char new_xml[] =
	    "<cross-connects " NS "><pair><ingress>1</ingress><egress>7</egress></pair>"
	    "<pair><ingress>3</ingress><egress>5</egress></pair></cross-connects>"
	    "<port-config " NS "><port><port-id>3</port-id><status>FAILED</status></port>"
	    "<port><port-id>1</port-id><status>ENABLED</status></port></port-config>"
	    "<opm-power " NS "><port><port-id>7</port-id><power>-3.25</power></port></opm-power>";
	static const char old_xml[] =
	    "<cross-connects " NS "><pairs><ingress>2</ingress><egress>8</egress></pairs>"
	    "</cross-connects>";
	struct ofc_error err = {0};
	struct opsw_data d;
	(void)state;

	assert_int_equal(parse("2017-08-04", new_xml, 4, &d, &err), 0);
	assert_int_equal(d.xc.nxc, 2);
	assert_int_equal(d.xc.xc[0].in, 1);
	assert_int_equal(d.xc.xc[0].out, 3);
	assert_int_equal(d.xc.xc[1].in, 3);
	assert_int_equal(d.xc.xc[1].out, 1);
	assert_int_equal(d.nports, 3);
	for (uint32_t i = 0; i < d.nports; i++) {
		if (d.ports[i].port == 3)
			assert_int_equal(d.ports[i].status, OPSW_FAILED);
		else if (d.ports[i].port == 1)
			assert_int_equal(d.ports[i].status, OPSW_ENABLED);
		else {
			assert_int_equal(d.ports[i].port, 7);
			assert_true(d.ports[i].has_power);
			assert_true(d.ports[i].power_dbm > -3.26 && d.ports[i].power_dbm < -3.24);
		}
	}
	/* each port's entry by its number; none for a port the data leaves out,
	 * or past 2N */
	for (uint32_t p = 0; p <= 9; p++) {
		const struct opsw_port *q = opsw_port_of(&d, p);

		if (p == 1 || p == 3 || p == 7) {
			assert_non_null(q);
			assert_int_equal(q->port, p);
		} else {
			assert_null(q);
		}
	}
	assert_int_equal(opsw_port_of(&d, 3)->status, OPSW_FAILED);
	opsw_data_free(&d);

	assert_int_equal(parse("2015-06-10", old_xml, 4, &d, &err), 0);
	assert_int_equal(d.xc.nxc, 1);
	assert_int_equal(d.xc.xc[0].in, 2);
	assert_int_equal(d.xc.xc[0].out, 4);
	opsw_data_free(&d);
	/* the old name on a new device is not the model: refused, not skipped */
	assert_int_equal(parse("2017-08-04", old_xml, 4, &d, &err), -1);
	assert_int_equal(err.reason, OFC_R_GARBAGE);
	opsw_data_free(&d);
	/* an unknown newer revision reads as the newest ofc has */
	assert_int_equal(parse("2021-01-01", new_xml, 4, &d, &err), 0);
	assert_int_equal(d.xc.nxc, 2);
	opsw_data_free(&d);
}

/* What a switch cannot hold, and what is not XML of the model. */
static void test_parse_bad(void **state)
{
	static const char *const bad[] = {
	    "<cross-connects " NS "><pair><ingress>1</ingress><egress>3</egress></pair>"
	    "</cross-connects>", /* egress 3 is an ingress of a 4x4 */
	    "<cross-connects " NS "><pair><ingress>5</ingress><egress>6</egress></pair>"
	    "</cross-connects>", /* ingress 5 */
	    "<cross-connects " NS "><pair><ingress>1</ingress><egress>5</egress></pair>"
	    "<pair><ingress>2</ingress><egress>5</egress></pair></cross-connects>", /* egress twice
										     */
	    "<cross-connects " NS "><pair><ingress>1</ingress><egress>5</egress>",  /* unclosed */
	    "<cross-connects " NS "><pair><ingress>-1</ingress><egress>5</egress></pair>"
	    "</cross-connects>",
	    "<cross-connects " NS "><pair><ingress>1</ingress><egress>4294967301</egress></pair>"
	    "</cross-connects>",
	    "<cross-connects " NS "><bogus/></cross-connects>",
	    "<port-config " NS "><port><port-id>9</port-id><status>FAILED</status></port>"
	    "</port-config>", /* port 9 of 8 */
	    "<port-config " NS "><port><port-id>1</port-id><status>BROKEN</status></port>"
	    "</port-config>",
	    "<opm-power " NS "><port><port-id>1</port-id><power>loud</power></port></opm-power>",
	    "<cross-connects xmlns=\"urn:other\"/>",
	    "\x01\x02",
	};
	struct ofc_error err = {0};
	struct opsw_data d;
	(void)state;

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		memset(&err, 0, sizeof(err));
		assert_int_equal(parse("2017-08-04", bad[i], 4, &d, &err), -1);
		assert_int_equal(err.reason, OFC_R_GARBAGE);
		assert_true(err.msg[0] != 0);
		opsw_data_free(&d);
	}
	/* bounded before parsing: a reply above the limit is not read */
	struct ly_ctx *ctx = NULL;
	assert_int_equal(opsw_context(YANG_DIR, "2017-08-04", &ctx, &err), 0);
	opsw_data_init(&d);
	assert_int_equal(opsw_parse(ctx, "", opsw_max_data(4) + 1, 4, &d, &err), -1);
	assert_int_equal(err.reason, OFC_R_TOO_BIG);
	/* ... a bound that grows with the switch, to its ceiling */
	assert_int_equal(opsw_max_data(0), OPSW_MAX_DATA);
	assert_true(opsw_max_data(65536) >= (size_t)65536 * 330 * 3);
	assert_int_equal(opsw_max_data(UINT32_MAX), OPSW_DATA_CEILING);
	assert_int_equal(
	    opsw_parse(ctx, "", opsw_max_data(UINT32_MAX / 2) + 1, UINT32_MAX / 2, &d, &err), -1);
	assert_int_equal(err.reason, OFC_R_TOO_BIG);
	opsw_data_free(&d);
	opsw_context_free(ctx);
	/* no module there: said, with the directory */
	assert_int_equal(opsw_context("/nonexistent", "2017-08-04", &ctx, &err), -1);
	assert_non_null(strstr(err.msg, "optical-switch@2017-08-04"));
	assert_non_null(strstr(err.msg, "/nonexistent"));
}

/* The modules built into ofc are the files in drivers/yang, and serve both
 * revisions without a directory. */
static void test_builtin(void **state)
{
	struct ofc_error err = {0};
	struct opsw_data d;
	struct ly_ctx *ctx = NULL;
	uint32_t seen = 0;
	(void)state;

	for (const struct yang_text *t = yang_texts; t->name; t++) {
		char *path, *text = NULL;
		size_t len;

		if (strcmp(t->name, "optical-switch") != 0)
			continue;
		path = xasprintf(YANG_DIR "/%s@%s.yang", t->name, t->revision);
		assert_int_equal(read_file(path, 1u << 20, &text, &len, &err), 0);
		assert_string_equal(text, t->text);
		free(text);
		free(path);
		seen++;
	}
	assert_int_equal(seen, 2);
	assert_int_equal(opsw_context(NULL, "2015-06-10", &ctx, &err), 0);
	opsw_data_init(&d);
	static const char old_xml[] = "<cross-connects " NS "><pairs><ingress>2</ingress>"
				      "<egress>8</egress></pairs></cross-connects>";
	assert_int_equal(opsw_parse(ctx, old_xml, strlen(old_xml), 4, &d, &err), 0);
	assert_int_equal(d.xc.nxc, 1);
	opsw_data_free(&d);
	opsw_context_free(ctx);
	/* ietf-netconf with only the features asked: a device's hello says
	 * what it has through them */
	static const char *const feats[] = {"candidate", NULL};
	assert_int_equal(netconf_context("2017-08-04", feats, 0, &ctx, &err), 0);
	const struct lys_module *m = ly_ctx_get_module_implemented(ctx, "ietf-netconf");
	assert_non_null(m);
	assert_int_equal(lys_feature_value(m, "candidate"), LY_SUCCESS);
	assert_int_equal(lys_feature_value(m, "confirmed-commit"), LY_ENOT);
	assert_non_null(ly_ctx_get_module_implemented(ctx, "optical-switch"));
	ly_ctx_destroy(ctx);
}

static struct op xop(enum op_kind k, uint32_t in, uint32_t out)
{
	return (struct op){.kind = k, .xc = {in, out}};
}

/* A batch as one edit: removals named by ingress, connections merged with
 * egress N+k; a removal whose ingress is connected again is left to the
 * merge; `pairs` on the older revision. */
static void test_edit(void **state)
{
	struct op_batch b = {0};
	struct strbuf sb = STRBUF_INIT;
	(void)state;

	batch_add(&b, xop(OP_DISCONNECT, 1, 3));
	batch_add(&b, xop(OP_DISCONNECT, 4, 2));
	batch_add(&b, xop(OP_CONNECT, 1, 2));
	batch_add(&b, xop(OP_CONNECT, 5, 6));
	assert_int_equal(opsw_edit(&b, 8, false, &sb), 3);
	assert_string_equal(
	    sb.buf, "<cross-connects " NS " xmlns:nc=\"urn:ietf:params:xml:ns:netconf:base:1.0\">"
		    "<pair nc:operation=\"delete\"><ingress>4</ingress></pair>"
		    "<pair nc:operation=\"merge\"><ingress>1</ingress><egress>10</egress></pair>"
		    "<pair nc:operation=\"merge\"><ingress>5</ingress><egress>14</egress></pair>"
		    "</cross-connects>");
	sb_reset(&sb);
	assert_int_equal(opsw_edit(&b, 8, true, &sb), 3);
	assert_non_null(
	    strstr(sb.buf, "<pairs nc:operation=\"delete\"><ingress>4</ingress></pairs>"));
	assert_null(strstr(sb.buf, "<pair "));
	sb_free(&sb);
	batch_free(&b);

	uint32_t in = 0;
	assert_int_equal(
	    opsw_error_ingress("/opsw:cross-connects/opsw:pair[opsw:ingress='37']", &in), 0);
	assert_int_equal(in, 37);
	assert_int_equal(opsw_error_ingress("/x/pairs[ingress=\"4\"]", &in), 0);
	assert_int_equal(in, 4);
	assert_int_equal(opsw_error_ingress("/opsw:cross-connects", &in), -1);
	assert_int_equal(opsw_error_ingress("pair[ingress='4294967296']", &in), -1);
	assert_int_equal(opsw_error_ingress("pair[ingress='3\"]", &in), -1);
	assert_int_equal(opsw_error_ingress(NULL, &in), -1);
}

/* What a hello offers. */
static void test_caps(void **state)
{
	static const char *const full[] = {
	    "urn:ietf:params:netconf:base:1.1",
	    "urn:ietf:params:netconf:capability:writable-running:1.0",
	    "urn:ietf:params:netconf:capability:candidate:1.0",
	    "urn:ietf:params:netconf:capability:confirmed-commit:1.1",
	    "urn:ietf:params:netconf:capability:rollback-on-error:1.0",
	    "urn:ietf:params:netconf:capability:notification:1.0",
	    "http://www.polatis.com/yang/optical-switch?module=optical-switch&revision=2015-06-10",
	    NULL};
	static const char *const bare[] = {"urn:ietf:params:netconf:base:1.0", NULL};
	struct netconf_caps c;
	(void)state;

	netconf_caps_read(full, &c);
	assert_true(c.model && c.pairs && c.candidate && c.confirmed && c.rollback &&
		    c.writable_running && c.notification && !c.interleave);
	assert_string_equal(c.rev, "2015-06-10");
	netconf_caps_read(bare, &c);
	assert_false(c.model || c.candidate || c.writable_running);
	netconf_caps_read(NULL, &c);
	assert_false(c.model);
}

/* ---- the relay ---------------------------------------------------------------------- */

struct feeder {
	int fd;
	size_t bytes; /* 0: until the write fails */
	int every_ms; /* pause between bytes, or 0 for chunks */
};

static void *feed(void *arg)
{
	struct feeder *f = arg;
	char buf[4096];
	size_t sent = 0;

	memset(buf, 'x', sizeof(buf));
	while (!f->bytes || sent < f->bytes) {
		size_t n = f->every_ms ? 1 : sizeof(buf);
		ssize_t k;

		if (f->bytes && n > f->bytes - sent)
			n = f->bytes - sent;
		k = send(f->fd, buf, n, MSG_NOSIGNAL);
		if (k <= 0)
			break;
		sent += (size_t)k;
		if (f->every_ms)
			usleep((useconds_t)f->every_ms * 1000);
	}
	return NULL;
}

/* Read lib until EOF or 3 s; returns the bytes read. */
static size_t drain(int fd)
{
	char buf[65536];
	size_t total = 0;
	double end = now_seconds() + 3;

	while (now_seconds() < end) {
		struct ofc_error err = {0};
		long k = fd_read_some(fd, buf, sizeof(buf), end, &err);

		if (k <= 0)
			break;
		total += (size_t)k;
	}
	return total;
}

/* A whole <notification> parsed as libnetconf2 parses it
 * (lyd_parse_op, LYD_TYPE_NOTIF_NETCONF, in the session's context), then
 * what the driver takes from it: rc of opsw_notif_take, or 9 when
 * libyang refuses the message. */
static int notif(struct ly_ctx *ctx, const char *event, uint32_t ports, struct opsw_notif *n)
{
	char *xml = xasprintf("<notification xmlns=\"" NC_NOTIF_NS "\"><eventTime>"
			      "2024-05-01T10:00:00Z</eventTime>%s</notification>",
			      event);
	struct lyd_node *envp = NULL, *op = NULL;
	struct ly_in *in = NULL;
	struct ofc_error err = {0};
	int rc = 9;

	assert_int_equal(ly_in_new_memory(xml, &in), LY_SUCCESS);
	if (lyd_parse_op(ctx, NULL, in, LYD_XML, LYD_TYPE_NOTIF_NETCONF, &envp, &op) == LY_SUCCESS)
		rc = opsw_notif_take(op, ports, n, &err);
	if (rc < 0)
		assert_non_null(strstr(err.msg, "no such port on a 4x4 switch"));
	lyd_free_all(envp);
	lyd_free_all(op);
	ly_in_free(in, 0);
	free(xml);
	return rc;
}

static void test_notification(void **state)
{
	struct ofc_error err = {0};
	struct ly_ctx *ctx;
	struct opsw_notif n;
	(void)state;

	netconf_quiet(); /* libyang's refusals go to ofc's errors, not stderr */
	/* the session's context: ietf-netconf, notifications, polatis-switch */
	assert_int_equal(netconf_context(NULL, NULL, LY_CTX_NO_YANGLIBRARY, &ctx, &err), 0);
	assert_int_equal(netconf_context_notifications(ctx, &err), 0);
	assert_non_null(ly_ctx_get_module_implemented(ctx, "notifications"));
#define PW(name, port) "<" name " xmlns=\"" PLTS_NS "\"><port-id>" port "</port-id></" name ">"
	assert_int_equal(notif(ctx, PW("port-power-alarm", "3"), 4, &n), 1);
	assert_int_equal(n.kind, OPSW_POWER_ALARM);
	assert_int_equal(n.port, 3);
	assert_string_equal(opsw_notif_name(n.kind), "port-power-alarm");
	/* an egress (N+1..2N), with its label */
	assert_int_equal(notif(ctx,
			       "<port-power-clear xmlns=\"" PLTS_NS "\"><port-id>8</port-id>"
			       "<port-label>to h1</port-label></port-power-clear>",
			       4, &n),
			 1);
	assert_int_equal(n.kind, OPSW_POWER_CLEAR);
	assert_int_equal(n.port, 8);
	assert_int_equal(notif(ctx, PW("port-power-warn-alarm", "1"), 4, &n), 1);
	assert_int_equal(n.kind, OPSW_POWER_WARN);
	assert_int_equal(notif(ctx, PW("port-power-warn-clear", "1"), 4, &n), 1);
	assert_int_equal(n.kind, OPSW_POWER_WARN_CLEAR);
	/* a port the switch does not have: refused, naming it */
	assert_int_equal(notif(ctx, PW("port-power-alarm", "9"), 4, &n), -1);
	assert_int_equal(notif(ctx, PW("port-power-alarm", "0"), 4, &n), -1);
	/* without its port-id (lyd_parse_op does not check mandatory) */
	assert_int_equal(notif(ctx, "<port-power-alarm xmlns=\"" PLTS_NS "\"/>", 4, &n), -1);
	/* what libyang refuses: not a number, an element the module lacks,
	 * not well-formed, another module's */
	assert_int_equal(notif(ctx, PW("port-power-alarm", "three"), 4, &n), 9);
	assert_int_equal(notif(ctx,
			       "<port-power-alarm xmlns=\"" PLTS_NS "\"><port-id>1</port-id>"
			       "<colour>red</colour></port-power-alarm>",
			       4, &n),
			 9);
	assert_int_equal(
	    notif(ctx, "<port-power-alarm xmlns=\"" PLTS_NS "\"><port-id>1</port-id>", 4, &n), 9);
	assert_int_equal(notif(ctx, "<thing xmlns=\"urn:example:other\"/>", 4, &n), 9);
	/* nothing of polatis-switch: not ofc's */
	assert_int_equal(opsw_notif_take(NULL, 4, &n, &err), 0);
	ly_ctx_destroy(ctx);
}

/* A <get> reply as the driver reads it: parsed by libnetconf2's call in
 * the session's context, which holds the model after the hello, and taken
 * from that tree (opsw_take): what the module types is taken; an element
 * it lacks, or a value not of its type, is refused, as the strict parse
 * refuses it. */
static int reply_tree(struct ly_ctx *ctx, const char *inner, struct opsw_data *d,
		      struct ofc_error *err)
{
	char *xml = xasprintf("<rpc-reply xmlns=\"urn:ietf:params:xml:ns:netconf:base:1.0\" "
			      "message-id=\"1\"><data>%s</data></rpc-reply>",
			      inner);
	struct lyd_node *op = NULL, *envp = NULL;
	const struct lyd_node *tree;
	struct netconf_rpc_error re;
	struct ly_in *in = NULL;
	int rc;

	assert_int_equal(
	    lyd_new_inner(NULL, ly_ctx_get_module_implemented(ctx, "ietf-netconf"), "get", 0, &op),
	    LY_SUCCESS);
	assert_int_equal(ly_in_new_memory(xml, &in), LY_SUCCESS);
	assert_int_equal(lyd_parse_op(NULL, op, in, LYD_XML, LYD_TYPE_REPLY_NETCONF, &envp, NULL),
			 LY_SUCCESS);
	opsw_data_init(d);
	rc = netconf_reply_data(envp, op, &tree, &re, err);
	if (rc == 0)
		rc = opsw_take(tree, 4, d, err);
	lyd_free_all(envp);
	lyd_free_all(op);
	ly_in_free(in, 0);
	free(xml);
	return rc;
}

static void test_reply_tree(void **state)
{
	struct ofc_error err = {0};
	struct opsw_data d;
	struct ly_ctx *ctx;
	(void)state;

	netconf_quiet();
	assert_int_equal(netconf_context(NULL, NULL, LY_CTX_NO_YANGLIBRARY, &ctx, &err), 0);
	assert_int_equal(opsw_context_add(ctx, "2017-08-04", &err), 0);
	assert_int_equal(reply_tree(ctx,
				    "<cross-connects " NS
				    "><pair><ingress>1</ingress><egress>6</egress>"
				    "</pair></cross-connects><port-config " NS "><port><port-id>1"
				    "</port-id><status>FAILED</status></port></port-config>",
				    &d, &err),
			 0);
	assert_int_equal(d.xc.nxc, 1);
	assert_int_equal(d.xc.xc[0].out, 2);
	assert_int_equal(d.nports, 1);
	assert_int_equal(d.ports[0].status, OPSW_FAILED);
	opsw_data_free(&d);
	/* no data at all */
	assert_int_equal(reply_tree(ctx, "", &d, &err), 0);
	assert_int_equal(d.xc.nxc, 0);
	opsw_data_free(&d);
	/* a value not of its type, an element the module lacks, another
	 * module's element, an egress out of range, a power of 3 digits */
	static const char *const bad[] = {
	    "<cross-connects " NS "><pair><ingress>one</ingress><egress>6</egress></pair>"
	    "</cross-connects>",
	    "<cross-connects " NS "><pair><ingress>1</ingress><egress>6</egress><colour/></pair>"
	    "</cross-connects>",
	    "<cross-connects xmlns=\"urn:example:other\"/>",
	    "<cross-connects " NS "><pair><ingress>1</ingress><egress>9</egress></pair>"
	    "</cross-connects>",
	    "<opm-power " NS "><port><port-id>1</port-id><power>-3.123</power></port></opm-power>",
	};
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		ofc_error_clear(&err);
		assert_int_equal(reply_tree(ctx, bad[i], &d, &err), -1);
		assert_int_equal(err.reason, OFC_R_GARBAGE);
		opsw_data_free(&d);
	}
	ly_ctx_destroy(ctx);
}

static void test_relay(void **state)
{
	struct ofc_error err = {0};
	int sp[2], lib;
	struct ncrelay *r;
	pthread_t t;
	(void)state;

	/* bytes both ways, then the peer's end: what came is delivered */
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sp), 0);
	r = ncrelay_start(sp[1], NULL, NULL, &lib, &err);
	assert_non_null(r);
	assert_int_equal(write(lib, "hello", 5), 5);
	char got[16] = "";
	assert_int_equal(fd_read_exact(sp[0], got, 5, now_seconds() + 3, &err), 0);
	assert_memory_equal(got, "hello", 5);
	assert_int_equal(write(sp[0], "world", 5), 5);
	close(sp[0]);
	assert_int_equal(drain(lib), 5);
	assert_int_equal(ncrelay_state(r, NULL), NCRELAY_EOF);
	close(lib);
	ncrelay_stop(r);

	/* more than the bound: cut, nothing of it delivered, and why */
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sp), 0);
	r = ncrelay_start(sp[1], NULL, NULL, &lib, &err);
	ncrelay_arm(r, 1000, now_seconds() + 10);
	struct feeder f = {sp[0], 100000, 0};
	pthread_create(&t, NULL, feed, &f);
	assert_true(drain(lib) <= 1000);
	assert_int_equal(ncrelay_state(r, NULL), NCRELAY_TOO_BIG);
	pthread_join(t, NULL);
	close(sp[0]);
	close(lib);
	ncrelay_stop(r);

	/* a reply that never ends: cut at the deadline */
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sp), 0);
	r = ncrelay_start(sp[1], NULL, NULL, &lib, &err);
	ncrelay_arm(r, 1u << 20, now_seconds() + 0.3);
	f = (struct feeder){sp[0], 0, 5};
	pthread_create(&t, NULL, feed, &f);
	double t0 = now_seconds();
	drain(lib);
	assert_true(now_seconds() - t0 < 2.5);
	assert_int_equal(ncrelay_state(r, NULL), NCRELAY_TIMEOUT);
	pthread_join(t, NULL);
	close(sp[0]);
	close(lib);
	ncrelay_stop(r);

	/* a span: no deadline while nothing comes (a quiet notification
	 * session), then one that starts at the first byte (a notification
	 * that never ends is cut) */
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sp), 0);
	r = ncrelay_start(sp[1], NULL, NULL, &lib, &err);
	ncrelay_arm_span(r, 1u << 20, 0.3);
	usleep(600000);
	assert_int_equal(ncrelay_state(r, NULL), NCRELAY_OPEN);
	f = (struct feeder){sp[0], 0, 5};
	pthread_create(&t, NULL, feed, &f);
	t0 = now_seconds();
	drain(lib);
	assert_true(now_seconds() - t0 < 2.5);
	assert_int_equal(ncrelay_state(r, NULL), NCRELAY_TIMEOUT);
	pthread_join(t, NULL);
	close(sp[0]);
	close(lib);
	ncrelay_stop(r);

	/* muted: what libnetconf2 writes is dropped; injected bytes go */
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sp), 0);
	r = ncrelay_start(sp[1], NULL, NULL, &lib, &err);
	ncrelay_mute(r, true);
	assert_int_equal(write(lib, "dropped", 7), 7);
	assert_int_equal(ncrelay_inject(r, "sent", 4), 4);
	memset(got, 0, sizeof(got));
	assert_int_equal(fd_read_exact(sp[0], got, 4, now_seconds() + 3, &err), 0);
	assert_string_equal(got, "sent");
	/* the owner cuts: the peer sees the end */
	ncrelay_cut(r);
	assert_int_equal(fd_read_some(sp[0], got, sizeof(got), now_seconds() + 3, &err), 0);
	assert_int_equal(ncrelay_state(r, NULL), NCRELAY_CLOSED);
	close(sp[0]);
	close(lib);
	ncrelay_stop(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_revision),   cmocka_unit_test(test_parse),
	    cmocka_unit_test(test_parse_bad),  cmocka_unit_test(test_builtin),
	    cmocka_unit_test(test_edit),       cmocka_unit_test(test_caps),
	    cmocka_unit_test(test_relay),      cmocka_unit_test(test_notification),
	    cmocka_unit_test(test_reply_tree),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
