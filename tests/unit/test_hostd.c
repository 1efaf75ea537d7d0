/* ofc-hostd's reading of lldpd (hostd_lldp.c): `lldpcli -f json show
 * neighbors` as lldpd 1.0.16 prints it, with one interface (an object),
 * several (an array), none, a neighbour that sends no system name or a
 * port ID of another subtype, and output that is no JSON; and lldpcli
 * that is not there or fails, said with its reason. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "controller/cli/internal.h"

static const char one[] =
    "{\"lldp\": {\"interface\": {\"i2\": {\"via\": \"LLDP\", \"rid\": \"1\", \"age\": \"0 day, "
    "00:00:02\", \"chassis\": {\"h0\": {\"id\": {\"type\": \"mac\", \"value\": "
    "\"82:69:06:48:7f:3b\"}, \"descr\": \"Debian\", \"capability\": [{\"type\": \"Bridge\", "
    "\"enabled\": false}]}}, \"port\": {\"id\": {\"type\": \"local\", \"value\": \"1\"}, "
    "\"descr\": \"o1\", \"ttl\": \"4\"}}}}}";

static const char two[] =
    "{\"lldp\": {\"interface\": [{\"i0\": {\"via\": \"LLDP\", \"chassis\": {\"h3\": {\"id\": "
    "{\"type\": \"mac\", \"value\": \"aa\"}}}, \"port\": {\"id\": {\"type\": \"local\", "
    "\"value\": \"0\"}}}}, {\"i1\": {\"via\": \"LLDP\", \"chassis\": {\"id\": {\"type\": "
    "\"mac\", \"value\": \"bb\"}}, \"port\": {\"id\": {\"type\": \"mac\", \"value\": "
    "\"bb\"}}}}]}}";

static void test_parse(void **state)
{
	struct hostd_neighbours nb;
	struct ofc_error err = {0};

	(void)state;
	assert_int_equal(hostd_lldp_parse(one, strlen(one), &nb, &err), 0);
	assert_int_equal(nb.n, 1);
	assert_string_equal(nb.v[0].ifname, "i2");
	assert_string_equal(nb.v[0].host, "h0");
	assert_string_equal(nb.v[0].port, "1");
	assert_true(nb.v[0].port_local);
	assert_int_equal(nb.v[0].ttl_s, 4); /* the port's "ttl" */

	assert_int_equal(hostd_lldp_parse(two, strlen(two), &nb, &err), 0);
	assert_int_equal(nb.n, 2);
	assert_string_equal(nb.v[0].ifname, "i0");
	assert_string_equal(nb.v[0].host, "h3");
	assert_string_equal(nb.v[0].port, "0");
	assert_string_equal(nb.v[1].ifname, "i1");
	assert_string_equal(nb.v[1].host, ""); /* no system name sent */
	assert_false(nb.v[1].port_local);      /* a MAC: not a fabric port number */
	assert_int_equal(nb.v[1].ttl_s, -1);   /* no ttl said */

	assert_int_equal(hostd_lldp_parse("{\"lldp\": {}}", 12, &nb, &err), 0);
	assert_int_equal(nb.n, 0);
	assert_int_equal(hostd_lldp_parse("unable to connect", 17, &nb, &err), -1);
	assert_string_equal(err.msg, "lldpcli's JSON does not parse");
	assert_int_equal(hostd_lldp_parse("{\"x\": 1}", 8, &nb, &err), -1);
	assert_string_equal(err.msg, "lldpcli's JSON has no \"lldp\"");
}

static void test_lldpcli_failures(void **state)
{
	struct strbuf out = STRBUF_INIT;
	struct ofc_error err = {0};
	const char *args[] = {"-c", "exit 3", NULL};
	const char *none[] = {NULL};

	(void)state;
	assert_int_equal(hostd_lldpcli("/nonexistent/lldpcli", NULL, none, 1, &out, &err), -1);
	assert_non_null(strstr(err.msg, "cannot run /nonexistent/lldpcli: No such file or "
					"directory (Debian's lldpd package has it)"));
	/* a program that says why and exits non-zero: its last line */
	const char *say[] = {"-c", "echo first; echo 'unable to connect to socket' >&2; exit 1",
			     NULL};
	assert_int_equal(hostd_lldpcli("sh", NULL, say, 5, &out, &err), -1);
	assert_string_equal(err.msg, "sh exited 1: unable to connect to socket");
	assert_int_equal(hostd_lldpcli("sh", NULL, args, 5, &out, &err), -1);
	assert_string_equal(err.msg, "sh exited 3");
	/* one that never finishes is killed at its deadline */
	const char *hang[] = {"-c", "sleep 30", NULL};
	assert_int_equal(hostd_lldpcli("sh", NULL, hang, 0.3, &out, &err), -1);
	assert_string_equal(err.msg, "sh did not finish in time");
	const char *fine[] = {"-c", "printf '{\"lldp\": {}}'", NULL};
	assert_int_equal(hostd_lldpcli("sh", NULL, fine, 5, &out, &err), 0);
	assert_string_equal(out.buf, "{\"lldp\": {}}");
	sb_free(&out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_parse),
	    cmocka_unit_test(test_lldpcli_failures),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
