/* controller: the loader fills the model, validation resolves wiring and
 * circuits, and the protobuf export holds what the model holds. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "controller/cli/cli.h"
#include "controller/config/config.h"
#include "controller/export/export.h"
#include "controller/ofcd/ofcd.h"
#include "controller/reconfig/reconfig.h"
#include "controller/schedule/schedule.h"
#include "proto/fabric.pb-c.h"

static struct fabric *load(const char *text)
{
	struct ofc_error err = {0};
	struct fabric *f = NULL;
	char buf[1024];

	if (config_parse("t.yaml", text, strlen(text), &f, &err) < 0 ||
	    fabric_validate(f, &err) < 0)
		fail_msg("%s", ofc_error_str(&err, buf, sizeof(buf)));
	return f;
}

static int load_error(const char *text, struct ofc_error *err)
{
	struct fabric *f = NULL;
	int rc = config_parse("t.yaml", text, strlen(text), &f, err);

	if (rc == 0) {
		rc = fabric_validate(f, err);
		fabric_free(f);
	}
	return rc;
}

static const char ring_cfg[] = "name: r\n"
			       "hosts:\n"
			       "  - {name: a}\n"
			       "  - {name: b}\n"
			       "  - {name: c}\n"
			       "rings:\n"
			       "  - name: ring0\n"
			       "    nodes: [c, a, b]\n"
			       "    wavelengths: 8\n"
			       "    rate_per_wavelength: 25Gbps\n"
			       "    interfaces_per_node: 2\n"
			       "collectives:\n"
			       "  - {op: allgather, size: 64MiB}\n"
			       "  - {op: reduce-scatter, size: 1GB, algorithm: bfb}\n";

static void test_ring_model(void **state)
{
	(void)state;
	struct fabric *f = load(ring_cfg);

	assert_int_equal(f->nhosts, 3);
	assert_int_equal(f->nrings, 1);
	const struct ring *r = &f->rings[0];
	assert_int_equal(r->nmembers, 3);
	assert_int_equal(r->members[0], 2); /* c, a, b in ring order */
	assert_int_equal(r->members[1], 0);
	assert_int_equal(r->members[2], 1);
	assert_int_equal(r->wavelengths, 8);
	assert_int_equal(r->fibres, 1); /* default */
	assert_int_equal(r->interfaces, 2);
	assert_int_equal(r->mrrs, 8); /* default: one per wavelength */
	assert_true(r->rate == 25e9);
	assert_true(r->mrr_delay == 25e-6); /* default */
	assert_int_equal(f->ncollectives, 2);
	assert_int_equal(f->collectives[0].op, SCHED_ALLGATHER);
	assert_int_equal(f->collectives[0].size, 64ull << 20);
	assert_int_equal(f->collectives[1].op, SCHED_REDUCE_SCATTER);
	assert_int_equal(f->collectives[1].size, 1000000000ull);
	assert_string_equal(f->collectives[1].algorithm, "bfb");
	assert_null(f->graph);
	assert_true(f->cost.alpha == 10e-6); /* default */
	assert_int_equal(fabric_find_host(f, "b"), 1);
	assert_int_equal(fabric_find_host(f, "z"), -1);
	fabric_free(f);
}

static const char ocs_cfg[] =
    "name: o\n"
    "hosts: {count: 8, prefix: g, first_index: 1, ports: 2, port_rate: 100Gbps}\n"
    "switches:\n"
    "  - {name: s0, type: ocs, ports: 16}\n"
    "wiring: {pattern: sequential, switches: [s0], first_port: 1}\n"
    "topology: biring:8\n";

static void test_ocs_circuits(void **state)
{
	(void)state;
	struct fabric *f = load(ocs_cfg);

	assert_string_equal(f->hosts[0].name, "g1");
	assert_string_equal(f->hosts[7].name, "g8");
	assert_int_equal(f->nwiring, 16);
	/* Host i port j on switch port 1 + 2i + j. */
	for (uint32_t k = 0; k < 16; k++) {
		assert_int_equal(f->wiring[k].host, k / 2);
		assert_int_equal(f->wiring[k].host_port, k % 2);
		assert_int_equal(f->wiring[k].sw_port, k + 1);
	}
	assert_int_equal(f->ncircuits, 16);
	assert_true(f->switches[0].reconfig_time == 10e-3); /* OCS default */
	/* biring port 0 is +1: host u port 0 (in 1+2u) to host u+1 port 0 (out 1+2(u+1)). */
	for (uint32_t k = 0; k < f->ncircuits; k++) {
		const struct circuit *c = &f->circuits[k];

		assert_int_equal(c->src_port, c->dst_port);
		assert_int_equal(c->in_port, 1 + 2 * c->src_host + c->src_port);
		assert_int_equal(c->out_port, 1 + 2 * c->dst_host + c->dst_port);
		if (c->src_port == 0)
			assert_int_equal(c->dst_host, (c->src_host + 1) % 8);
		else
			assert_int_equal(c->dst_host, (c->src_host + 7) % 8);
	}
	assert_true(f->cost.link_bandwidth == 100e9); /* from the hosts' port rate */
	fabric_free(f);
}

#define SELF_LOOP_CFG(mode)                                                                        \
	"name: k\n"                                                                                \
	"hosts: {count: 10, ports: 2}\n"                                                           \
	"switches: [{name: p, type: patch-panel, ports: 20}]\n"                                    \
	"wiring: {pattern: sequential, switches: [p]}\n"                                           \
	"topology: {spec: 'genkautz:10,2', self_loops: " mode "}\n"

static void test_dark_self_loops(void **state)
{
	(void)state;
	struct fabric *f = load(SELF_LOOP_CFG("dark"));

	assert_int_equal(f->facts.self_loops, 2);
	assert_int_equal(f->ncircuits, 18);	     /* 20 arcs minus 2 dark self-loops */
	assert_true(f->switches[0].move_time == 60); /* patch-panel default */
	for (uint32_t k = 0; k < f->ncircuits; k++)
		assert_int_not_equal(f->circuits[k].src_host, f->circuits[k].dst_host);
	fabric_free(f);

	/* Looped back, they are circuits from a port to itself. */
	f = load(SELF_LOOP_CFG("loopback"));
	assert_int_equal(f->ncircuits, 20);
	uint32_t loops = 0;
	for (uint32_t k = 0; k < f->ncircuits; k++)
		loops += f->circuits[k].src_host == f->circuits[k].dst_host;
	assert_int_equal(loops, 2);
	fabric_free(f);
}

static void test_errors_carry_positions(void **state)
{
	struct ofc_error err = {0};
	char buf[512];
	(void)state;

	assert_int_equal(load_error("name: t\nhosts:\n  - {name: a, portz: 2}\n", &err), -1);
	assert_string_equal(ofc_error_str(&err, buf, sizeof(buf)),
			    "t.yaml:3:15: unknown key 'portz' in hosts (did you mean 'ports'?)");
	assert_int_equal(ofc_error_exit_code(&err), 2);

	assert_int_equal(load_error("name: t\nhosts:\n  - {name: a}\ntopology: ring:3\n", &err),
			 -1);
	assert_string_equal(
	    ofc_error_str(&err, buf, sizeof(buf)),
	    "t.yaml:4:11: topology 'ring:3' has 3 nodes but the fabric has 1 hosts");
}

/* Partitions: members resolve to host ports; a port two partitions claim
 * is refused at the second claim's FILE:LINE:COL. */
static void test_partitions(void **state)
{
	struct ofc_error err = {0};
	char buf[512];
	(void)state;

	struct fabric *f = load("name: p\n"
				"hosts: {count: 4, prefix: h, ports: 2}\n"
				"partitions:\n"
				"  - name: jobA\n"
				"    hosts: [h0, h1]\n"
				"    topology: ring:2\n"
				"    collectives: [{op: allgather, size: 1MiB}]\n"
				"  - name: jobB\n"
				"    hosts: ['h2:1', h3]\n");
	assert_int_equal(f->npartitions, 2);
	assert_string_equal(f->partitions[0].name, "jobA");
	assert_string_equal(f->partitions[0].topology.spec, "ring:2");
	assert_int_equal(f->partitions[0].ncollectives, 1);
	assert_int_equal(f->partitions[1].member_host[0], 2);
	assert_int_equal(f->partitions[1].member_port[0], 1);
	assert_int_equal(f->partitions[1].member_host[1], 3);
	assert_int_equal(f->partitions[1].member_port[1], UINT32_MAX);
	fabric_free(f);

	/* Failures and link rates are the fabric's, refused in a partition's
	 * topology (and what was read freed: `make check`'s LeakSanitizer). */
	assert_int_equal(load_error("name: p\n"
				    "hosts: {count: 4, prefix: h, ports: 2}\n"
				    "partitions:\n"
				    "  - name: jobA\n"
				    "    hosts: [h0, h1, h2, h3]\n"
				    "    topology: {spec: 'biring:4', failed_links: [[h0, h1]],\n"
				    "               link_rates: [[h2, h3, 25Gbps]]}\n",
				    &err),
			 -1);
	assert_string_equal(ofc_error_str(&err, buf, sizeof(buf)),
			    "t.yaml:6:49: partition 'jobA': failed_links belong to the fabric's "
			    "topology, not a partition's");

	/* A whole host after one of its ports. */
	assert_int_equal(load_error("name: p\n"
				    "hosts: {count: 4, prefix: h, ports: 2}\n"
				    "partitions:\n"
				    "  - name: jobA\n"
				    "    hosts: [h0, 'h2:1']\n"
				    "  - name: jobB\n"
				    "    hosts: [h1, h2]\n",
				    &err),
			 -1);
	assert_string_equal(
	    ofc_error_str(&err, buf, sizeof(buf)),
	    "t.yaml:7:17: partition 'jobB' claims host 'h2' port 1, already claimed "
	    "by partition 'jobA' (line 5)");
	assert_int_equal(ofc_error_exit_code(&err), 2);

	/* Different ports of one host are fine; the same port is not. */
	assert_int_equal(load_error("name: p\n"
				    "hosts: {count: 2, prefix: h, ports: 2}\n"
				    "partitions:\n"
				    "  - {name: a, hosts: ['h0:0']}\n"
				    "  - {name: b, hosts: ['h0:1']}\n",
				    &err),
			 0);
	assert_int_equal(load_error("name: p\n"
				    "hosts: {count: 2, prefix: h, ports: 2}\n"
				    "partitions:\n"
				    "  - {name: a, hosts: ['h0:0']}\n"
				    "  - {name: b, hosts: [h1, 'h0:0']}\n",
				    &err),
			 -1);
	assert_int_equal(err.line, 5);
	assert_int_equal(err.col, 27);

	assert_int_equal(load_error("name: p\nhosts: {count: 2, prefix: h}\npartitions:\n"
				    "  - {name: a, hosts: [h7]}\n",
				    &err),
			 -1);
	assert_string_equal(ofc_error_str(&err, buf, sizeof(buf)),
			    "t.yaml:4:23: partition 'a': no host named 'h7'");
	assert_int_equal(load_error("name: p\nhosts: {count: 2, prefix: h}\npartitions:\n"
				    "  - {name: a, hosts: ['h0:1']}\n",
				    &err),
			 -1);
	assert_string_equal(ofc_error_str(&err, buf, sizeof(buf)),
			    "t.yaml:4:23: partition 'a': host 'h0' has ports 0..0, not 1");
	assert_int_equal(load_error("name: p\nhosts: {count: 2, prefix: h}\npartitions:\n"
				    "  - {name: a, hosts: [h0]}\n  - {name: a, hosts: [h1]}\n",
				    &err),
			 -1);
	assert_int_equal(err.line, 5);

	/* A partition's topology has one node per member. */
	assert_int_equal(load_error("name: p\nhosts: {count: 4, prefix: h}\npartitions:\n"
				    "  - {name: a, hosts: [h0, h1, h2], topology: ring:4}\n",
				    &err),
			 -1);
	assert_string_equal(ofc_error_str(&err, buf, sizeof(buf)),
			    "t.yaml:4:46: partition 'a': topology 'ring:4' has 4 nodes but the "
			    "partition has 3 members");
}

/* A partition's circuits join only its own hosts' switch ports. */
/* Drained switch ports are dark: no circuit goes in or out of them, the
 * others are as without the drain; a drain naming no switch of the
 * fabric changes nothing. */
static void test_drained_circuits(void **state)
{
	struct ofc_error err = {0};
	struct fabric *f = NULL;
	char buf[1024];
	(void)state;

	assert_int_equal(config_parse("t.yaml", ocs_cfg, strlen(ocs_cfg), &f, &err), 0);
	/* g1's port 0 is on s0 port 1, g3's port 1 on port 6 */
	f->drained = calloc(3, sizeof(*f->drained));
	f->drained[0] = (struct drained_port){strdup("s0"), 1};
	f->drained[1] = (struct drained_port){strdup("s0"), 6};
	f->drained[2] = (struct drained_port){strdup("s9"), 2};
	f->ndrained = 3;
	if (fabric_validate(f, &err) < 0)
		fail_msg("%s", ofc_error_str(&err, buf, sizeof(buf)));
	assert_int_equal(f->ncircuits, 12); /* 16 less 2 in and 2 out of the two ports */
	for (uint32_t k = 0; k < f->ncircuits; k++) {
		const struct circuit *c = &f->circuits[k];

		assert_true(c->in_port != 1 && c->out_port != 1);
		assert_true(c->in_port != 6 && c->out_port != 6);
	}
	fabric_free(f);
}

static void test_partition_circuits(void **state)
{
	struct ofc_error err = {0};
	struct circuit *c;
	uint32_t n;
	(void)state;

	struct fabric *f = load("name: o\n"
				"hosts: {count: 8, prefix: g, ports: 2}\n"
				"switches:\n"
				"  - {name: s0, type: ocs, ports: 16}\n"
				"wiring: {pattern: sequential, switches: [s0], first_port: 1}\n"
				"partitions:\n"
				"  - {name: a, hosts: [g0, g1, g2, g3], topology: biring:4}\n"
				"  - {name: b, hosts: [g6, g4, g7, g5], topology: ring:4}\n");
	assert_int_equal(partition_circuits(f, &f->partitions[1], &c, &n, &err), 0);
	assert_int_equal(n, 4); /* ring: one port per host */
	for (uint32_t k = 0; k < n; k++) {
		/* g4..g7 sit on switch ports 9..16 (host i port j on 1 + 2i + j). */
		assert_true(c[k].in_port >= 9 && c[k].in_port <= 16);
		assert_true(c[k].out_port >= 9 && c[k].out_port <= 16);
		assert_int_equal(c[k].in_port, 1 + 2 * c[k].src_host + c[k].src_port);
		assert_int_equal(c[k].out_port, 1 + 2 * c[k].dst_host + c[k].dst_port);
	}
	/* Member order is the node numbering: node 0 (g6) -> node 1 (g4). */
	assert_int_equal(c[0].src_host, 6);
	assert_int_equal(c[0].dst_host, 4);
	free(c);
	assert_int_equal(partition_circuits(f, &f->partitions[0], &c, &n, &err), 0);
	assert_int_equal(n, 8);
	for (uint32_t k = 0; k < n; k++)
		assert_true(c[k].in_port <= 8 && c[k].out_port <= 8);
	free(c);
	fabric_free(f);
}

/* The packed ofc.v1.Fabric, decoded by protobuf-c, holds the model. */
static void test_fabric_pb_roundtrip(void **state)
{
	struct ofc_error err = {0};
	uint8_t *buf;
	size_t len;
	(void)state;

	struct fabric *f = load(ocs_cfg);
	assert_int_equal(fabric_pack(f, &buf, &len, &err), 0);
	Ofc__V1__Fabric *m = ofc__v1__fabric__unpack(NULL, len, buf);
	assert_non_null(m);
	assert_string_equal(m->name, "o");
	assert_int_equal(m->n_hosts, 8);
	assert_string_equal(m->hosts[3]->name, "g4");
	assert_int_equal(m->hosts[3]->ports, 2);
	assert_true(m->hosts[3]->port_rate_bps == 100e9);
	assert_int_equal(m->n_switches, 1);
	assert_int_equal(m->switches[0]->kind, OFC__V1__SWITCH_KIND__SWITCH_KIND_OCS);
	assert_true(m->switches[0]->has_reconfig_time_s && !m->switches[0]->has_move_time_s);
	assert_int_equal(m->n_wiring, 16);
	assert_int_equal(m->n_circuits, f->ncircuits);
	for (size_t k = 0; k < m->n_circuits; k++) {
		assert_int_equal(m->circuits[k]->in_port, f->circuits[k].in_port);
		assert_int_equal(m->circuits[k]->out_port, f->circuits[k].out_port);
		assert_string_equal(m->circuits[k]->src_host,
				    f->hosts[f->circuits[k].src_host].name);
	}
	assert_non_null(m->logical);
	assert_string_equal(m->logical->spec, "biring:8");
	assert_true(m->logical->has_diameter);
	assert_int_equal(m->logical->diameter, 4);
	assert_int_equal(m->logical->n_edge_list, 16);
	assert_int_equal(m->logical->n_ports, 2);
	assert_int_equal(m->logical->ports[0]->n_to, 8);
	assert_int_equal(m->logical->ports[0]->to[7], 0);
	assert_string_equal(m->topology->spec, "biring:8");
	assert_true(m->cost_model->alpha_s == 10e-6);
	ofc__v1__fabric__free_unpacked(m, NULL);
	free(buf);
	fabric_free(f);
}

/* Per-port and per-link rates: loaded for generated and listed
 * hosts, resolved to host indices, the slowest and fastest known to the
 * cost model, and the slowest the default link bandwidth. */
static void test_rates(void **state)
{
	(void)state;
	struct fabric *f =
	    load("name: r\n"
		 "hosts: {count: 4, prefix: h, ports: 2, port_rates: [100Gbps, 40Gbps]}\n"
		 "topology:\n"
		 "  spec: torus:4\n"
		 "  link_rates: [[h1, h2, 10Gbps]]\n");

	assert_true(fabric_port_rate(f, 3, 0) == 100e9);
	assert_true(fabric_port_rate(f, 3, 1) == 40e9);
	assert_int_equal(f->topology.nlink_rates, 1);
	assert_int_equal(f->topology.link_rates[0].u, 1);
	assert_int_equal(f->topology.link_rates[0].v, 2);
	assert_true(f->cost.rate_min == 10e9 && f->cost.rate_max == 100e9);
	assert_true(f->cost.link_bandwidth == 10e9);
	fabric_free(f);

	/* One rate everywhere, given per port: no mixed rates, that rate. */
	f = load("name: r\n"
		 "hosts:\n"
		 "  - {name: a, ports: 2, port_rates: [25Gbps, 25Gbps]}\n"
		 "  - {name: b, ports: 2, port_rate: 25Gbps}\n"
		 "  - {name: c, ports: 2, port_rate: 25Gbps}\n"
		 "topology: torus:3\n");
	assert_true(f->cost.rate_min == 0 && f->cost.link_bandwidth == 25e9);
	assert_true(fabric_port_rate(f, 1, 1) == 25e9);
	assert_true(f->cost.switch_overhead.transaction == 0 &&
		    f->cost.switch_overhead.circuit == 0); /* default */
	fabric_free(f);

	/* A switching's overhead, transaction and circuit. */
	f = load("name: r\n"
		 "hosts: {count: 3, prefix: h, ports: 2}\n"
		 "topology: torus:3\n"
		 "cost_model: {switch_overhead: {transaction: 1.2s, circuit: 30ms}}\n");
	assert_true(f->cost.switch_overhead.transaction == 1.2 &&
		    f->cost.switch_overhead.circuit == 30e-3);
	fabric_free(f);

	struct ofc_error err = {0};
	assert_int_equal(load_error("name: r\n"
				    "hosts: {count: 4, prefix: h, ports: 2}\n"
				    "topology: {spec: torus:4, link_rates: [[h1, h2, 10Gbps], "
				    "[h2, h1, 5Gbps]]}\n",
				    &err),
			 -1);
	assert_string_equal(err.msg, "link h2-h1 has a rate already (line 3)");
	assert_int_equal(
	    load_error("name: r\n"
		       "hosts: {count: 4, prefix: h, ports: 2, port_rates: [1Gbps, 0Gbps]}\n",
		       &err),
	    -1);
	assert_string_equal(err.msg, "'port_rates' must be greater than zero");
	assert_int_equal(err.line, 2);
	assert_int_equal(err.col, 60);
}

/* A server fabric: two hosts of one template, joined at their hubs. The
 * cases below replace one line of it. */
static const char *const server_lines[] = {
    "name: s\n",
    "servers:\n",
    "  - name: box\n",
    "    vertices:\n",
    "      - {name: gpu0, kind: gpu}\n",
    "      - {name: hub, kind: switch}\n",
    "      - {name: nic, kind: nic}\n",
    "    links:\n",
    "      - {from: gpu0, to: hub, bandwidth: 100GB/s}\n",
    "      - {from: hub, to: nic, bandwidth: 25GB/s}\n",
    "hosts:\n",
    "  - {name: s0, server: box}\n",
    "  - {name: s1, server: box}\n",
    "fabric_links:\n",
    "  - {from: s0/nic, to: s1/nic, bandwidth: 25GB/s}\n",
};

/* server_lines with line `line` (1-based) replaced by `with` (NULL: as is). */
static char *server_cfg(unsigned line, const char *with)
{
	struct strbuf sb = STRBUF_INIT;

	for (unsigned i = 0; i < ARRAY_SIZE(server_lines); i++)
		sb_printf(&sb, "%s", i + 1 == line && with ? with : server_lines[i]);
	return sb.buf;
}

/* Server fabrics are validated when loaded: `ofc validate` and
 * every command that opens a config refuse what `ofc schedule` used to
 * find only when it built the network, each at FILE:LINE:COL, with a
 * message (the nested ones were once formatted onto themselves, empty). */
static void test_server_fabric_errors(void **state)
{
	static const struct {
		unsigned line;
		const char *with, *want;
	} t[] = {
	    {9, "      - {from: gpu0, to: hbu, bandwidth: 100GB/s}\n",
	     "t.yaml:9:26: unknown vertex 'hbu'"},
	    {13, "  - {name: s1, server: bx}\n", "t.yaml:13:24: unknown server template 'bx'"},
	    {9, "      - {from: hub, to: hub, bandwidth: 100GB/s}\n",
	     "t.yaml:9:9: a link from 'hub' to itself"},
	    {7, "      - {name: hub, kind: nic}\n", "t.yaml:7:9: duplicate vertex 'hub'"},
	    {15, "  - {from: s0/nic, to: s2/nic, bandwidth: 25GB/s}\n",
	     "t.yaml:15:24: unknown vertex 's2/nic'"},
	    {10,
	     "      - {from: hub, to: nic, bandwidth: 25GB/s}\n"
	     "    capacity_sets:\n"
	     "      - {name: x, bandwidth: 10GB/s, arcs: [gpu0>hub, gpu0>nic]}\n",
	     "t.yaml:12:55: no link from 'gpu0' to 'nic'"},
	    {10,
	     "      - {from: hub, to: nic, bandwidth: 25GB/s}\n"
	     "    capacity_sets:\n"
	     "      - {name: x, bandwidth: 10GB/s, arcs: [gpu0>hub, gpu0>hub]}\n",
	     "t.yaml:12:9: capacity set 'x' lists an arc twice"},
	    {14, "fabric_vertices: [{name: s0/hub, kind: switch}]\nfabric_links:\n",
	     "t.yaml:14:19: duplicate vertex 's0/hub'"},
	    {5, "      - {name: gpu0, kind: memory}\n",
	     "t.yaml:12:3: the network has fewer than 2 terminals"},
	    {11, "  - {name: box, vertices: [{name: g, kind: gpu}]}\nhosts:\n",
	     "t.yaml:11:5: duplicate server template 'box' (first at line 3)"},
	    /* an unused template is checked all the same */
	    {11,
	     "  - {name: spare, vertices: [{name: g, kind: gpu}, {name: g, kind: nic}]}\nhosts:\n",
	     "t.yaml:11:52: duplicate vertex 'g'"},
	};
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(t); i++) {
		struct ofc_error err = {0};
		char *cfg = server_cfg(t[i].line, t[i].with), buf[600];

		if (load_error(cfg, &err) != -1)
			fail_msg("case %zu: accepted", i);
		if (strcmp(ofc_error_str(&err, buf, sizeof(buf)), t[i].want) != 0)
			fail_msg("case %zu: '%s', not '%s'", i, buf, t[i].want);
		assert_int_equal(ofc_error_exit_code(&err), 2);
		free(cfg);
	}
	/* the base config is a fabric */
	char *cfg = server_cfg(0, NULL);
	struct fabric *f = load(cfg);

	assert_int_equal(f->nhosts, 2);
	fabric_free(f);
	free(cfg);
}

/* A fabric over fluid's 65,535 vertices is refused at the host that
 * crosses the limit, before its network is built. */
static void test_server_fabric_size(void **state)
{
	struct strbuf sb = STRBUF_INIT;
	struct ofc_error err = {0};
	char buf[600];
	(void)state;

	sb_printf(&sb, "name: big\nservers:\n  - name: box\n    vertices:\n");
	sb_printf(&sb, "      - {name: gpu, kind: gpu}\n");
	for (unsigned v = 1; v < 1001; v++)
		sb_printf(&sb, "      - {name: v%u, kind: switch}\n", v);
	sb_printf(&sb, "hosts:\n");
	for (unsigned h = 0; h < 70; h++)
		sb_printf(&sb, "  - {name: s%u, server: box}\n", h);
	assert_int_equal(load_error(sb.buf, &err), -1);
	/* 65 hosts of 1,001 vertices are 65,065; the 66th is one too many */
	assert_string_equal(ofc_error_str(&err, buf, sizeof(buf)),
			    "t.yaml:1072:25: host 's65' takes the server fabric to 66066 "
			    "vertices and 0 arcs; it may have at most 65535 and 16777216");
	sb_free(&sb);
}

/* failed_ports: [0, 0] names one port twice: refused at the second (as a
 * host or a link named twice is). */
static void test_failed_port_twice(void **state)
{
	struct ofc_error err = {0};
	char buf[512];
	(void)state;

	assert_int_equal(load_error("name: t\n"
				    "hosts:\n"
				    "  - {name: a, ports: 2, failed_ports: [0, 0]}\n"
				    "  - {name: b, ports: 2}\n"
				    "  - {name: c, ports: 2}\n"
				    "topology: biring:3\n",
				    &err),
			 -1);
	assert_string_equal(ofc_error_str(&err, buf, sizeof(buf)),
			    "t.yaml:3:43: 'failed_ports' names port 0 twice (first at line 3, "
			    "column 40)");
	struct fabric *f = load("name: t\n"
				"hosts:\n"
				"  - {name: a, ports: 4, failed_ports: [1, 0]}\n"
				"  - {name: b, ports: 4}\n"
				"  - {name: c, ports: 4}\n"
				"  - {name: d, ports: 4}\n"
				"  - {name: e, ports: 4}\n"
				"topology: circulant:5:1,2\n");
	assert_int_equal(f->hosts[0].nfailed_ports, 2);
	fabric_free(f);
}

/* Failed ports take the arcs their fibres carried, and no other: port j of
 * host u transmits the arc u -> to[j][u] and receives the arc w -> u from
 * the w whose port j transmits to u. Port 0 of every host (a switch
 * lost) and two more, on torus:4x4: the degraded graph is the healthy one
 * less exactly those arcs, found here by scanning the rows (what the
 * validator's inverted rows replace). */
static void test_failed_ports_take_their_arcs(void **state)
{
	struct strbuf sb = STRBUF_INIT;
	(void)state;

	sb_printf(&sb, "name: t\nhosts:\n");
	for (uint32_t h = 0; h < 16; h++)
		sb_printf(&sb, "  - {name: h%u, ports: 4, failed_ports: [0%s]}\n", h,
			  h == 5    ? ", 2"
			  : h == 10 ? ", 3"
				    : "");
	sb_printf(&sb, "topology: torus:4x4\n");
	struct fabric *f = load(sb.buf);
	const struct graph *g = f->graph, *dg = f->degraded;
	const struct port_map *pm = &f->ports;
	uint32_t n = g->n;
	bool *gone = xcalloc(g->m, sizeof(bool));

	assert_non_null(dg);
	assert_non_null(pm->to);
	for (uint32_t u = 0; u < n; u++)
		for (uint32_t k = 0; k < f->hosts[u].nfailed_ports; k++) {
			uint32_t j = f->hosts[u].failed_ports[k];

			for (uint32_t w = 0; w < n; w++) {
				bool out = w == u, in = w != u && pm->to[(size_t)j * n + w] == u;
				uint32_t from = out ? u : w,
					 to = out ? pm->to[(size_t)j * n + u] : u;

				if (!out && !in)
					continue;
				for (uint32_t a = g->off[from]; a < g->off[from + 1]; a++)
					if (g->adj[a] == to && !gone[a]) {
						gone[a] = true;
						break;
					}
			}
		}
	uint32_t left = 0;
	for (uint32_t a = 0; a < g->m; a++)
		left += !gone[a];
	assert_int_equal(dg->m, left);
	assert_true(left < g->m - 16); /* (port 0 alone takes 32 arcs) */
	for (uint32_t u = 0; u < n; u++) {
		/* the same arcs out of u, as a multiset */
		uint32_t want[8] = {0}, got[8] = {0}, nw = 0, ng = 0;

		for (uint32_t a = g->off[u]; a < g->off[u + 1]; a++)
			if (!gone[a])
				want[nw++] = g->adj[a];
		for (uint32_t a = dg->off[u]; a < dg->off[u + 1]; a++)
			got[ng++] = dg->adj[a];
		assert_int_equal(nw, ng);
		for (uint32_t x = 0; x < nw; x++) {
			uint32_t cw = 0, cg = 0;

			for (uint32_t y = 0; y < nw; y++) {
				cw += want[y] == want[x];
				cg += got[y] == want[x];
			}
			assert_int_equal(cw, cg);
		}
	}
	free(gone);
	fabric_free(f);
	sb_free(&sb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_ring_model),
	    cmocka_unit_test(test_ocs_circuits),
	    cmocka_unit_test(test_drained_circuits),
	    cmocka_unit_test(test_dark_self_loops),
	    cmocka_unit_test(test_errors_carry_positions),
	    cmocka_unit_test(test_partitions),
	    cmocka_unit_test(test_partition_circuits),
	    cmocka_unit_test(test_fabric_pb_roundtrip),
	    cmocka_unit_test(test_rates),
	    cmocka_unit_test(test_server_fabric_errors),
	    cmocka_unit_test(test_server_fabric_size),
	    cmocka_unit_test(test_failed_port_twice),
	    cmocka_unit_test(test_failed_ports_take_their_arcs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
