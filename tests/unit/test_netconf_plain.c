/* The transaction's large NETCONF messages read in their plain form
 * (drivers/netconf_plain.c): RFC 6242 framing; a <get> reply of
 * cross-connects read without libyang gives what libnetconf2's parse and
 * opsw_take give, and every reply outside the narrow form, or that
 * opsw_take would refuse, is declined (then read the old way); the
 * <edit-config> netconf-emu reads in place, and what it declines. Run
 * from the source tree's root (make test does). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <libnetconf2/messages_client.h>
#include <libyang/libyang.h>
#include <pthread.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "drivers/internal.h"

#define NC	   "urn:ietf:params:xml:ns:netconf:base:1.0"
#define NS	   "xmlns=\"" OPSW_NS "\""
#define REPLY	   "<rpc-reply xmlns=\"" NC "\" message-id=\"7\">"
#define PAIR(i, o) "<pair><ingress>" #i "</ingress><egress>" #o "</egress></pair>"

static void test_frame(void **state)
{
	struct strbuf b = STRBUF_INIT;
	size_t used = 0;
	(void)state;

	/* two chunks, and what follows is not taken */
	static const char two[] = "\n#3\nabc\n#2\nde\n##\n\n#1\nx";
	assert_int_equal(netconf_frame(two, strlen(two), &b, &used), 1);
	assert_string_equal(b.buf, "abcde");
	assert_int_equal(used, strlen("\n#3\nabc\n#2\nde\n##\n"));
	/* not whole, not chunked, a bad size, no data */
	static const char *const no[] = {
	    "\n#3\nabc",	"\n#3\nabc\n#",	   "<rpc/>]]>]]>",
	    "\n#03\nabc\n##\n", "\n#0\n\n##\n",	   "\n#4\nabc\n##\n",
	    "\n##\n",		"\n#x\nabc\n##\n", "\n#99999999999\nabc\n##\n",
	};
	for (size_t i = 0; i < ARRAY_SIZE(no); i++)
		assert_int_equal(netconf_frame(no[i], strlen(no[i]), &b, &used), 0);
	sb_free(&b);
}

/* The old way: libnetconf2's parse of the reply (as recv_reply makes it, in
 * a context holding the model), then opsw_take. 0, -1 (refused), or -2 when
 * libyang will not parse it. */
static int old_read(struct ly_ctx *ctx, const char *reply, uint32_t ports, struct opsw_data *d)
{
	struct lyd_node *op = NULL, *envp = NULL;
	const struct lyd_node *tree;
	struct netconf_rpc_error re;
	struct ofc_error err = {0};
	struct ly_in *in = NULL;
	int rc = -2;

	assert_int_equal(
	    lyd_new_inner(NULL, ly_ctx_get_module_implemented(ctx, "ietf-netconf"), "get", 0, &op),
	    LY_SUCCESS);
	assert_int_equal(ly_in_new_memory(reply, &in), LY_SUCCESS);
	opsw_data_init(d);
	if (lyd_parse_op(NULL, op, in, LYD_XML, LYD_TYPE_REPLY_NETCONF, &envp, NULL) ==
	    LY_SUCCESS) {
		rc = netconf_reply_data(envp, op, &tree, &re, &err);
		if (rc == 0)
			rc = opsw_take(tree, ports, d, &err);
	}
	lyd_free_all(envp);
	lyd_free_all(op);
	ly_in_free(in, 0);
	return rc;
}

static void test_reply(void **state)
{
	struct ofc_error err = {0};
	struct ly_ctx *ctx;
	(void)state;

	netconf_quiet();
	assert_int_equal(netconf_context(NULL, NULL, LY_CTX_NO_YANGLIBRARY, &ctx, &err), 0);
	assert_int_equal(opsw_context_add(ctx, "2017-08-04", &err), 0);
	/* A 4x4 switch: ingress 1..4, egress 5..8. Each reply, and whether
	 * the plain reader takes it; what it takes, the old way reads the
	 * same. */
	static const struct {
		const char *reply;
		int plain;
	} cases[] = {
	    {REPLY "<data><cross-connects " NS ">" PAIR(3, 5) PAIR(1, 8) "</cross-connects></data>"
									 "</rpc-reply>",
	     1},
	    /* blanks between elements, as a device may indent */
	    {REPLY "\n <data>\n  <cross-connects " NS
		   ">\n   " PAIR(2, 6) "\n  </cross-connects>\n"
				       " </data>\n</rpc-reply>\n",
	     1},
	    {REPLY "<data><cross-connects " NS "/></data></rpc-reply>", 1},
	    {REPLY "<data><cross-connects " NS "></cross-connects></data></rpc-reply>", 1},
	    /* a port the switch did not set is simply not there */
	    {REPLY "<data><cross-connects " NS ">" PAIR(1, 5) "</cross-connects></data>"
							      "</rpc-reply>",
	     1},
	    /* declined: an egress or ingress out of the switch's range, the
	     * same ingress twice, the same egress twice, a leading zero, a
	     * sign, no egress, an element the module lacks, another message's
	     * id, an <rpc-error>, a prefix, a comment, an attribute, health,
	     * the old list name, text after the reply */
	    {REPLY "<data><cross-connects " NS ">" PAIR(1, 9) "</cross-connects></data>"
							      "</rpc-reply>",
	     0},
	    {REPLY "<data><cross-connects " NS ">" PAIR(5, 6) "</cross-connects></data>"
							      "</rpc-reply>",
	     0},
	    {REPLY "<data><cross-connects " NS ">" PAIR(1, 5) PAIR(1, 6) "</cross-connects></data>"
									 "</rpc-reply>",
	     0},
	    {REPLY "<data><cross-connects " NS ">" PAIR(1, 5) PAIR(2, 5) "</cross-connects></data>"
									 "</rpc-reply>",
	     0},
	    {REPLY "<data><cross-connects " NS ">" PAIR(01, 5) "</cross-connects></data>"
							       "</rpc-reply>",
	     0},
	    {REPLY "<data><cross-connects " NS ">" PAIR(+1, 5) "</cross-connects></data>"
							       "</rpc-reply>",
	     0},
	    {REPLY "<data><cross-connects " NS "><pair><ingress>1</ingress></pair>"
		   "</cross-connects></data></rpc-reply>",
	     0},
	    {REPLY "<data><cross-connects " NS "><pair><ingress>1</ingress><egress>5</egress>"
		   "<colour/></pair></cross-connects></data></rpc-reply>",
	     0},
	    {"<rpc-reply xmlns=\"" NC "\" message-id=\"6\"><data><cross-connects " NS
	     ">" PAIR(1, 5) "</cross-connects></data></rpc-reply>",
	     0},
	    {REPLY "<rpc-error><error-type>application</error-type><error-tag>operation-failed"
		   "</error-tag><error-severity>error</error-severity></rpc-error></rpc-reply>",
	     0},
	    {"<nc:rpc-reply xmlns:nc=\"" NC "\" message-id=\"7\"><nc:data><cross-connects " NS
	     ">" PAIR(1, 5) "</cross-connects></nc:data></nc:rpc-reply>",
	     0},
	    {REPLY "<data><cross-connects " NS "><!-- x -->" PAIR(1, 5) "</cross-connects></data>"
									"</rpc-reply>",
	     0},
	    {REPLY "<data><cross-connects " NS "><pair a=\"b\"><ingress>1</ingress><egress>5"
		   "</egress></pair></cross-connects></data></rpc-reply>",
	     0},
	    {REPLY "<data><cross-connects " NS ">" PAIR(
		 1, 5) "</cross-connects><port-config " NS
		       "><port><port-id>1</port-id><status>FAILED</status></port></port-config>"
		       "</data></rpc-reply>",
	     0},
	    {REPLY "<data><cross-connects " NS "><pairs><ingress>1</ingress><egress>5</egress>"
		   "</pairs></cross-connects></data></rpc-reply>",
	     0},
	    {REPLY "<data><cross-connects " NS ">" PAIR(1, 5) "</cross-connects></data>"
							      "</rpc-reply>x",
	     0},
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct opsw_data p, o;
		int rc;

		opsw_data_init(&p);
		rc = opsw_plain_reply(cases[i].reply, strlen(cases[i].reply), 7, 4, false, &p);
		if (rc != cases[i].plain)
			fail_msg("case %zu: plain %d, want %d", i, rc, cases[i].plain);
		if (rc == 1) {
			assert_int_equal(old_read(ctx, cases[i].reply, 4, &o), 0);
			assert_true(state_equal(&p.xc, &o.xc));
			opsw_data_free(&o);
		} else {
			assert_int_equal(p.xc.nxc, 0);
		}
		opsw_data_free(&p);
	}
	/* what the plain reader took, exactly */
	struct opsw_data d;

	opsw_data_init(&d);
	assert_int_equal(opsw_plain_reply(cases[0].reply, strlen(cases[0].reply), 7, 4, false, &d),
			 1);
	assert_int_equal(d.xc.nxc, 2);
	assert_int_equal(d.xc.xc[0].in, 1);
	assert_int_equal(d.xc.xc[0].out, 4);
	assert_int_equal(d.xc.xc[1].in, 3);
	assert_int_equal(d.xc.xc[1].out, 1);
	opsw_data_free(&d);
	/* the old list name, where the device's revision has it */
	static const char pairs[] = REPLY "<data><cross-connects " NS "><pairs><ingress>2</ingress>"
					  "<egress>7</egress></pairs></cross-connects></data>"
					  "</rpc-reply>";
	opsw_data_init(&d);
	assert_int_equal(opsw_plain_reply(pairs, strlen(pairs), 7, 4, true, &d), 1);
	assert_int_equal(d.xc.nxc, 1);
	assert_int_equal(d.xc.xc[0].out, 3);
	opsw_data_free(&d);
	ly_ctx_destroy(ctx);
}

#define EDIT(target, inner)                                                                        \
	"<rpc xmlns=\"" NC "\" message-id=\"12\"><edit-config xmlns=\"" NC "\"><target><" target   \
	"/></target><error-option>rollback-on-error</error-option><config><cross-connects " NS     \
	" xmlns:nc=\"" NC "\">" inner "</cross-connects></config></edit-config></rpc>"

static void test_edit(void **state)
{
	struct opsw_plain_edit e;
	struct strbuf b = STRBUF_INIT;
	struct op_batch batch = {0};
	(void)state;

	/* what the driver sends: its own edit, framed by libnetconf2 */
	batch_add(&batch, (struct op){.kind = OP_CONNECT, .xc = {1, 4}});
	batch_add(&batch, (struct op){.kind = OP_DISCONNECT, .xc = {2, 3}});
	assert_int_equal(opsw_edit(&batch, 4, false, &b), 2);
	char *rpc = xasprintf("<rpc xmlns=\"" NC "\" message-id=\"12\"><edit-config xmlns=\"" NC
			      "\"><target><candidate/></target><error-option>rollback-on-error"
			      "</error-option><config>%s</config></edit-config></rpc>",
			      b.buf);
	assert_int_equal(opsw_plain_edit(rpc, strlen(rpc), false, &e), 1);
	assert_string_equal(e.msgid, "12");
	assert_true(e.candidate);
	assert_true(e.rollback);
	assert_int_equal(e.n, 2);
	assert_string_equal(e.ent[0].op, "merge");
	assert_string_equal(e.ent[0].in, "1");
	assert_string_equal(e.ent[0].out, "8");
	assert_string_equal(e.ent[1].op, "delete");
	assert_string_equal(e.ent[1].in, "2");
	assert_string_equal(e.ent[1].out, "");
	opsw_plain_edit_free(&e);
	free(rpc);
	batch_free(&batch);
	sb_free(&b);

	/* running, no operation given (the default's) */
	static const char run[] = EDIT("running", PAIR(3, 5));
	assert_int_equal(opsw_plain_edit(run, strlen(run), false, &e), 1);
	assert_false(e.candidate);
	assert_int_equal(e.n, 1);
	assert_null(e.ent[0].op);
	opsw_plain_edit_free(&e);

	/* declined, for libnetconf2 and the emulator's tree: another
	 * operation, another list name, a leading zero, an element the
	 * module lacks, a default-operation, another RPC, another target */
	static const char *const no[] = {
	    EDIT("candidate", "<pair nc:operation=\"create\"><ingress>1</ingress><egress>5</egress>"
			      "</pair>"),
	    EDIT("candidate", "<pairs><ingress>1</ingress><egress>5</egress></pairs>"),
	    EDIT("candidate", PAIR(1, 05)),
	    EDIT("candidate", "<pair><ingress>1</ingress><egress>5</egress><colour/></pair>"),
	    EDIT("startup", PAIR(1, 5)),
	    "<rpc xmlns=\"" NC "\" message-id=\"12\"><edit-config><target><running/></target>"
	    "<default-operation>replace</default-operation><config><cross-connects " NS
	    ">" PAIR(1, 5) "</cross-connects></config></edit-config></rpc>",
	    "<rpc xmlns=\"" NC
	    "\" message-id=\"12\"><lock><target><running/></target></lock></rpc>",
	};
	for (size_t i = 0; i < ARRAY_SIZE(no); i++)
		if (opsw_plain_edit(no[i], strlen(no[i]), false, &e) != 0)
			fail_msg("case %zu taken", i);
}

/* ---- a session: the reply read in place, or by libnetconf2 ---------------------- */

/* A device on a Unix socket that answers each RPC with the next of its
 * replies (message-id %s: the RPC's). */
struct fake {
	int lfd;
	const char *const *replies;
	char *edit; /* the <edit-config> that came, as it came (framed) */
};

static char *read_until(int fd, const char *end)
{
	struct strbuf sb = STRBUF_INIT;
	char c;

	while (read(fd, &c, 1) == 1) {
		sb_putc(&sb, c);
		if (sb.len >= strlen(end) && strcmp(sb.buf + sb.len - strlen(end), end) == 0)
			return sb_detach(&sb);
	}
	sb_free(&sb);
	return NULL;
}

static void *fake_main(void *arg)
{
	struct fake *f = arg;
	int fd = accept(f->lfd, NULL, NULL);
	static const char hello[] =
	    "<hello xmlns=\"" NC "\"><capabilities><capability>urn:ietf:params:netconf:base:1.1"
	    "</capability><capability>" OPSW_NS "?module=optical-switch&amp;revision=2017-08-04"
	    "</capability></capabilities><session-id>3</session-id></hello>]]>]]>";
	char *in;

	assert_int_equal(write(fd, hello, strlen(hello)), (ssize_t)strlen(hello));
	free(read_until(fd, "]]>]]>"));
	for (const char *const *r = f->replies; *r && (in = read_until(fd, "\n##\n")); r++) {
		const char *m = strstr(in, "message-id=\"");
		char *body = xasprintf(*r, m ? (int)strcspn(m + 12, "\"") : 0, m ? m + 12 : "");
		char *msg = xasprintf("\n#%zu\n%s\n##\n", strlen(body), body);

		if (strstr(in, "edit-config") && !f->edit)
			f->edit = xstrdup(in); /* before the reply: the test reads it then */
		assert_int_equal(write(fd, msg, strlen(msg)), (ssize_t)strlen(msg));
		free(msg);
		free(body);
		free(in);
	}
	close(fd);
	return NULL;
}

static int count_pairs(const struct lyd_node *tree, void *arg, struct ofc_error *err)
{
	return opsw_take(tree, 4, arg, err);
}

static int plain_pairs(const char *body, size_t len, uint64_t id, void *arg)
{
	return opsw_plain_reply(body, len, id, 4, false, arg);
}

static void test_session(void **state)
{
#define R "<rpc-reply xmlns=\"" NC "\" message-id=\"%.*s\">"
	static const char *const replies[] = {
	    /* read in place */
	    R "<data><cross-connects " NS ">" PAIR(1, 5) PAIR(2, 7) "</cross-connects></data>"
								    "</rpc-reply>",
	    /* declined (a comment), read by libnetconf2: the same pairs */
	    R "<data><cross-connects " NS "><!-- c -->" PAIR(1, 5) PAIR(2, 7) "</cross-connects>"
									      "</data></rpc-reply>",
	    /* in place again: the session is as libnetconf2 left it */
	    R "<data><cross-connects " NS ">" PAIR(3, 8) "</cross-connects></data></rpc-reply>",
	    /* the edit's <ok/> */
	    R "<ok/></rpc-reply>",
	    /* a refusal: libnetconf2's, in the device's words */
	    R "<rpc-error><error-type>application</error-type><error-tag>operation-failed"
	      "</error-tag><error-severity>error</error-severity><error-message>no</error-message>"
	      "</rpc-error></rpc-reply>",
	    NULL,
	};
#undef R
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	char *dir = xasprintf("/tmp/ofc-plain.%d", (int)getpid());
	char *addr = xasprintf("unix:%s/s", dir);
	struct fake f = {socket(AF_UNIX, SOCK_STREAM, 0), replies};
	struct device dev = {.cfg = {.name = "sw", .address = addr, .ports = 4, .timeout = 5}};
	struct netconf_session s;
	struct netconf_rpc_error re;
	struct ofc_error err = {0};
	pthread_t t;
	(void)state;

	assert_int_equal(mkdir(dir, 0700), 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/s", dir);
	assert_int_equal(bind(f.lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(f.lfd, 1), 0);
	pthread_create(&t, NULL, fake_main, &f);
	assert_int_equal(netconf_session_open(&dev, NULL, false, now_seconds() + 5, &s, &err), 0);
	assert_int_equal(opsw_context_add(s.ctx, s.caps.rev, &err), 0);
	for (int i = 0; i < 4; i++) {
		if (i == 3) {
			/* the driver's edit as libnetconf2 puts it on the wire:
			 * netconf-emu reads it in place (opsw_plain_edit) */
			struct op_batch b = {0};
			struct strbuf xml = STRBUF_INIT, body = STRBUF_INIT;
			struct opsw_plain_edit pe;
			size_t used;

			batch_add(&b, (struct op){.kind = OP_CONNECT, .xc = {2, 3}});
			opsw_edit(&b, 4, false, &xml);
			struct nc_rpc *edit =
			    nc_rpc_edit(NC_DATASTORE_CANDIDATE, NC_RPC_EDIT_DFLTOP_UNKNOWN,
					NC_RPC_EDIT_TESTOPT_UNKNOWN, NC_RPC_EDIT_ERROPT_ROLLBACK,
					xml.buf, NC_PARAMTYPE_CONST);

			assert_int_equal(netconf_rpc(&s, edit, "<edit-config>", now_seconds() + 5,
						     NULL, &re, &err),
					 0);
			nc_rpc_free(edit);
			assert_non_null(f.edit);
			assert_int_equal(netconf_frame(f.edit, strlen(f.edit), &body, &used), 1);
			assert_int_equal(opsw_plain_edit(body.buf, body.len, false, &pe), 1);
			assert_int_equal(pe.n, 1);
			assert_string_equal(pe.ent[0].out, "7");
			opsw_plain_edit_free(&pe);
			sb_free(&body);
			sb_free(&xml);
			batch_free(&b);
			free(f.edit);
		}
		struct nc_rpc *rpc =
		    nc_rpc_get("<cross-connects " NS "/>", NC_WD_UNKNOWN, NC_PARAMTYPE_CONST);
		struct opsw_data d;
		int rc;

		opsw_data_init(&d);
		rc = netconf_rpc_plain(&s, rpc, "<get>", now_seconds() + 5, plain_pairs,
				       count_pairs, &d, &re, &err);
		nc_rpc_free(rpc);
		if (i == 3) {
			assert_int_equal(rc, -1);
			assert_int_equal(err.reason, OFC_R_REFUSED);
			assert_true(re.have);
			assert_string_equal(re.message, "no");
		} else {
			assert_int_equal(rc, 0);
			assert_int_equal(d.xc.nxc, i == 2 ? 1 : 2);
			assert_int_equal(d.xc.xc[0].out, i == 2 ? 4 : 1);
		}
		/* the first and third in place, the second by libnetconf2 */
		assert_int_equal(s.plain, i == 0 ? 1u : i == 1 ? 1u : 2u);
		/* (after the last reply the device hangs up) */
		assert_true(i == 3 || netconf_session_up(&s));
		opsw_data_free(&d);
	}
	netconf_session_close(&s, 0);
	pthread_join(t, NULL);
	close(f.lfd);
	unlink(sa.sun_path);
	rmdir(dir);
	free(addr);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_frame),
	    cmocka_unit_test(test_reply),
	    cmocka_unit_test(test_edit),
	    cmocka_unit_test(test_session),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
