/* The NETCONF data path of the Polatis optical-switch model (issue 39,
 * drivers/netconf_data.c): the revision from a hello capability, the
 * list's name by revision, cross-connects and port health out of <get>
 * data, and refusals of what a switch cannot hold. Run from the source
 * tree's root (make test does): the modules are in drivers/yang. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

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
	assert_int_equal(opsw_parse(ctx, "", (size_t)OPSW_MAX_DATA + 1, 4, &d, &err), -1);
	assert_int_equal(err.reason, OFC_R_TOO_BIG);
	opsw_data_free(&d);
	opsw_context_free(ctx);
	/* no module there: said, with the directory */
	assert_int_equal(opsw_context("/nonexistent", "2017-08-04", &ctx, &err), -1);
	assert_non_null(strstr(err.msg, "optical-switch@2017-08-04"));
	assert_non_null(strstr(err.msg, "/nonexistent"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_revision),
	    cmocka_unit_test(test_parse),
	    cmocka_unit_test(test_parse_bad),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
