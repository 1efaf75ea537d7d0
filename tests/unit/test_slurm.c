/* controller/slurm: Slurm's hostlists as Slurm 22.05 expands
 * them (brackets, ranges, zero padding, several ranges and brackets,
 * commas; what scontrol refuses is refused), a job's ofc: request in its
 * comment, the node map, PrologEpilogTimeout, and topology.conf's
 * islands and groups. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "controller/config/config.h"
#include "controller/slurm/slurm.h"

/* expr expands to the blank-separated names in want. */
static void expands(const char *expr, const char *want)
{
	struct ofc_error err = {0};
	struct strbuf sb = STRBUF_INIT;
	char **v;
	uint32_t n;

	if (slurm_hostlist_expand(expr, &v, &n, &err) < 0)
		fail_msg("%s: %s", expr, err.msg);
	for (uint32_t i = 0; i < n; i++)
		sb_printf(&sb, "%s%s", i ? " " : "", v[i]);
	if (strcmp(sb.buf, want) != 0)
		fail_msg("%s: got '%s', want '%s'", expr, sb.buf, want);
	assert_null(v[n]);
	slurm_strv_free(v, n);
	sb_free(&sb);
}

static void refused(const char *expr, const char *words)
{
	struct ofc_error err = {0};
	char **v = NULL;
	uint32_t n = 7;

	if (slurm_hostlist_expand(expr, &v, &n, &err) == 0)
		fail_msg("%s expanded to %u names; Slurm refuses it", expr, n);
	assert_null(v);
	assert_int_equal(n, 0);
	if (!strstr(err.msg, words))
		fail_msg("%s: '%s' lacks '%s'", expr, err.msg, words);
}

static void test_hostlist(void **state)
{
	(void)state;
	expands("n0", "n0");
	expands("n[0-3]", "n0 n1 n2 n3");
	expands("n[0-2,7,9-10]", "n0 n1 n2 n7 n9 n10");
	expands("n[8-10]", "n8 n9 n10");
	expands("n[08-10]", "n08 n09 n10");
	expands("n[008-10]", "n008 n009 n010");
	expands("n[1,02-03]", "n1 n02 n03");
	expands("a[1-2]b[1-2]", "a1b1 a1b2 a2b1 a2b2");
	expands("n[01-02]-ib[3-4],z[5]", "n01-ib3 n01-ib4 n02-ib3 n02-ib4 z5");
	expands("x[1-2],y,login-1", "x1 x2 y login-1");
	expands("n,,m,", "n m");
	refused("n[2-1]", "runs backwards");
	refused("n[]", "empty '[]'");
	refused("n[1-2", "'[' without ']'");
	refused("n1-2]", "']' without '['");
	refused("n[1-2]a", "text after the last ']'");
	refused("n[[1]]", "nested");
	refused("n[a-b]", "expected a number");
	refused("n[1;2]", "unexpected character");
	refused("n[0-99999]", "more than 65536 hosts");
	refused("n[1234567890]", "more than 9 digits");
	refused(",", "no host");
	refused("", "empty");
}

static void test_request(void **state)
{
	struct slurm_request r;
	struct ofc_error err = {0};
	char spec[64];

	(void)state;
	assert_int_equal(slurm_request_parse("ofc:topology=torus:4x4", &r, &err), 0);
	assert_true(r.asked && r.relabel);
	assert_string_equal(r.topology, "torus:4x4");
	assert_int_equal(
	    slurm_request_parse("train run 7; ofc:topology=genkautz:16,2 ofc:relabel=no", &r, &err),
	    0);
	assert_string_equal(r.topology, "genkautz:16,2");
	assert_false(r.relabel);
	assert_int_equal(slurm_request_parse("just words, no ofc", &r, &err), 0);
	assert_false(r.asked);
	assert_int_equal(slurm_request_parse(NULL, &r, &err), 0);
	assert_false(r.asked);
	assert_int_equal(slurm_request_parse("ofc:topolgy=ring:4", &r, &err), -1);
	assert_non_null(strstr(err.msg, "unknown request 'ofc:topolgy'"));
	assert_int_equal(slurm_request_parse("ofc:topology=", &r, &err), -1);
	assert_int_equal(slurm_request_parse("ofc:relabel=maybe", &r, &err), -1);
	/* two topologies: refused, not the last one built */
	assert_int_equal(
	    slurm_request_parse("ofc:topology=ring:4 ofc:topology=torus:2x2", &r, &err), -1);
	assert_string_equal(err.msg, "ofc:topology= twice in the job's comment ('ring:4' and "
				     "'torus:2x2'): a job asks for one topology");
	assert_int_equal(slurm_request_parse("ofc:topology=ring:4;ofc:topology=ring:4", &r, &err),
			 -1);
	assert_int_equal(slurm_default_spec("biring:{n}", 8, spec, sizeof(spec), &err), 0);
	assert_string_equal(spec, "biring:8");
	assert_int_equal(slurm_default_spec("ring:4", 8, spec, sizeof(spec), &err), 0);
	assert_string_equal(spec, "ring:4");
}

static void test_map_and_conf(void **state)
{
	struct slurm_map m;
	struct ofc_error err = {0};

	(void)state;
	assert_int_equal(
	    slurm_map_parse("m", "# Slurm node, ofc host\nn0 h0\n  n1\th1 # two\n\n", &m, &err), 0);
	assert_int_equal(m.n, 2);
	assert_string_equal(slurm_map_host(&m, "n1"), "h1");
	assert_null(slurm_map_host(&m, "n2"));
	assert_string_equal(slurm_map_node(&m, "h0"), "n0");
	slurm_map_free(&m);
	assert_string_equal(slurm_map_host(&m, "n5"), "n5"); /* empty: names are hosts */
	assert_int_equal(slurm_map_parse("m", "n0 h0\nn1 h0\n", &m, &err), -1);
	assert_string_equal(err.msg, "m:2: host h0 is the host of two nodes");
	assert_int_equal(slurm_map_parse("m", "n0 h0\nn0 h1\n", &m, &err), -1);
	assert_string_equal(err.msg, "m:2: node n0 is mapped twice");
	assert_int_equal(slurm_map_parse("m", "n0 h0 x\n", &m, &err), -1);
	assert_string_equal(err.msg, "m:1: expected 'NODE HOST'");
	assert_int_equal(slurm_map_parse("m", "n0 h$\n", &m, &err), -1);

	assert_int_equal(slurm_conf_timeout("ClusterName=x\nPrologEpilogTimeout=90\n"), 90);
	assert_int_equal(slurm_conf_timeout("SlurmUser=root prologepilogtimeout=30 X=1\n"), 30);
	assert_int_equal(
	    slurm_conf_timeout("#PrologEpilogTimeout=30\nA=1 # PrologEpilogTimeout=9\n"), 0);
	assert_int_equal(slurm_conf_timeout("XPrologEpilogTimeout=30\n"), 0);
}

/* 8 hosts of 2 ports: h0..h3 cabled to ocs0 alone, h4..h7 to ocs0 and ocs1. */
static const char two_islands[] = "version: 1\n"
				  "name: islands\n"
				  "hosts: {count: 8, prefix: h, ports: 2}\n"
				  "switches:\n"
				  "  - {name: ocs0, type: ocs, ports: 16}\n"
				  "  - {name: ocs1, type: ocs, ports: 8}\n"
				  "wiring:\n"
				  "  - {host: h0, port: 0, switch: ocs0, switch_port: 1}\n"
				  "  - {host: h0, port: 1, switch: ocs0, switch_port: 2}\n"
				  "  - {host: h1, port: 0, switch: ocs0, switch_port: 3}\n"
				  "  - {host: h1, port: 1, switch: ocs0, switch_port: 4}\n"
				  "  - {host: h2, port: 0, switch: ocs0, switch_port: 5}\n"
				  "  - {host: h2, port: 1, switch: ocs0, switch_port: 6}\n"
				  "  - {host: h3, port: 0, switch: ocs0, switch_port: 7}\n"
				  "  - {host: h3, port: 1, switch: ocs0, switch_port: 8}\n"
				  "  - {host: h4, port: 0, switch: ocs0, switch_port: 9}\n"
				  "  - {host: h4, port: 1, switch: ocs1, switch_port: 1}\n"
				  "  - {host: h5, port: 0, switch: ocs0, switch_port: 10}\n"
				  "  - {host: h5, port: 1, switch: ocs1, switch_port: 2}\n"
				  "  - {host: h6, port: 0, switch: ocs0, switch_port: 11}\n"
				  "  - {host: h6, port: 1, switch: ocs1, switch_port: 3}\n"
				  "  - {host: h7, port: 0, switch: ocs0, switch_port: 12}\n"
				  "  - {host: h7, port: 1, switch: ocs1, switch_port: 4}\n";

static void test_topology_conf(void **state)
{
	struct fabric *f = NULL;
	struct ofc_error err = {0};
	struct strbuf sb = STRBUF_INIT;
	struct slurm_map m = {0};

	(void)state;
	if (config_parse("islands.yaml", two_islands, strlen(two_islands), &f, &err) < 0 ||
	    fabric_validate(f, &err) < 0)
		fail_msg("islands.yaml: %s (line %u)", err.msg, err.line);
	assert_int_equal(slurm_topology_conf(f, NULL, 0, &sb, &err), 0);
	if (!strstr(sb.buf, "\nSwitchName=ocs0 Nodes=h0,h1,h2,h3\n"
			    "SwitchName=ocs0_ocs1 Nodes=h4,h5,h6,h7\n"
			    "SwitchName=ofc-top Switches=ocs0,ocs0_ocs1\n"))
		fail_msg("islands:\n%s", sb.buf);
	sb_reset(&sb);
	/* Groups of 2, and a map that leaves h3 out. */
	assert_int_equal(
	    slurm_map_parse("m", "n0 h0\nn1 h1\nn2 h2\nn4 h4\nn5 h5\nn6 h6\nn7 h7\n", &m, &err), 0);
	assert_int_equal(slurm_topology_conf(f, &m, 2, &sb, &err), 0);
	if (!strstr(sb.buf, "\nSwitchName=ocs0-g0 Nodes=n0,n1\n"
			    "SwitchName=ocs0-g1 Nodes=n2\n"
			    "SwitchName=ocs0 Switches=ocs0-g0,ocs0-g1\n"
			    "SwitchName=ocs0_ocs1-g0 Nodes=n4,n5\n"
			    "SwitchName=ocs0_ocs1-g1 Nodes=n6,n7\n"
			    "SwitchName=ocs0_ocs1 Switches=ocs0_ocs1-g0,ocs0_ocs1-g1\n"
			    "SwitchName=ofc-top Switches=ocs0,ocs0_ocs1\n"))
		fail_msg("groups:\n%s", sb.buf);
	slurm_map_free(&m);
	/* A map naming no host of the fabric. */
	assert_int_equal(slurm_map_parse("m", "n0 x0\n", &m, &err), 0);
	assert_int_equal(slurm_topology_conf(f, &m, 0, &sb, &err), -1);
	assert_non_null(strstr(err.msg, "no host cabled to a switch has a Slurm node"));
	slurm_map_free(&m);
	sb_free(&sb);
	fabric_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_hostlist),
	    cmocka_unit_test(test_request),
	    cmocka_unit_test(test_map_and_conf),
	    cmocka_unit_test(test_topology_conf),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
