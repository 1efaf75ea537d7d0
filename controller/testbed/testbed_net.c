/* The testbed as a run sees it (struct testbed_net): the circuits the
 * hosts hold, read from the kernel through the netlink driver, with their
 * addresses; the executor's view of them; and what they carry, probed all
 * at once. What ofc testbed up, check and run share (cmd_testbed.c,
 * cmd_run.c, run_workload.c). */
#include "controller/testbed/testbed.h"

#include <stdlib.h>
#include <string.h>

#include "exec/exec.h"

int testbed_net_read(const struct fabric *f, const char *state_dir, struct testbed_net *t,
		     struct ofc_error *err)
{
	struct device_state got;
	struct device dev;
	struct device_cfg cfg;
	uint32_t maxp = 1;
	size_t nl;
	int rc = -1;

	memset(t, 0, sizeof(*t));
	if (!testbed_is_up(state_dir, f->name))
		return ofc_error_set(err, OFC_E_RUNTIME,
				     "the testbed of fabric '%s' is not up (run 'ofc testbed up')",
				     f->name);
	for (uint32_t h = 0; h < f->nhosts; h++)
		maxp = f->hosts[h].ports > maxp ? f->hosts[h].ports : maxp;
	t->nhosts = f->nhosts;
	t->ports = maxp;
	nl = (size_t)f->nhosts * maxp;
	t->netns = xcalloc(f->nhosts + 1, sizeof(char *));
	t->peer = xmalloc((nl + 1) * sizeof(uint32_t));
	t->peer_addr = xcalloc(nl + 1, sizeof(uint32_t));
	t->local_addr = xcalloc(nl + 1, sizeof(uint32_t));
	t->host_addr = xcalloc(f->nhosts + 1, sizeof(uint32_t));
	for (uint32_t h = 0; h < f->nhosts; h++) {
		t->netns[h] = testbed_netns_name(f, h);
		t->host_addr[h] = netlink_host_addr(h);
	}
	for (size_t i = 0; i < nl; i++)
		t->peer[i] = UINT32_MAX;
	struct testbed_links rec;

	testbed_links_recorded(state_dir, f->name, &rec);
	t->rate = rec.rate;
	t->latency = rec.latency;
	t->carried = rec.carried;
	t->ncarried = rec.ncarried;
	t->alpha = rec.alpha;
	cfg = (struct device_cfg){.name = "testbed",
				  .driver = "netlink",
				  .cls = DEV_HOSTS,
				  .timeout = 5,
				  .netns = (const char *const *)t->netns,
				  .nhosts = f->nhosts,
				  .host_ports = maxp};
	state_init(&got, DEV_HOSTS);
	if (device_init(&dev, &cfg, err) < 0)
		goto out;
	if (device_read(&dev, &got, err) == 0) {
		for (uint32_t k = 0; k < got.nlinks; k++) {
			const struct hlink *l = &got.links[k];
			size_t i = (size_t)l->src_host * maxp + l->src_port;

			if (l->src_host >= f->nhosts || l->src_port >= maxp ||
			    l->dst_host >= f->nhosts)
				continue;
			t->peer[i] = l->dst_host;
			t->local_addr[i] = netlink_link_addr(l->src_host, l->src_port, maxp, false);
			t->peer_addr[i] = netlink_link_addr(l->src_host, l->src_port, maxp, true);
			t->ncircuits++;
		}
		rc = 0;
	}
	device_close(&dev);
out:
	state_free(&got);
	if (rc < 0)
		testbed_net_free(t);
	return rc;
}

void testbed_net_free(struct testbed_net *t)
{
	for (uint32_t h = 0; t->netns && h < t->nhosts; h++)
		free(t->netns[h]);
	free(t->netns);
	free(t->peer);
	free(t->peer_addr);
	free(t->local_addr);
	free(t->host_addr);
	memset(t, 0, sizeof(*t));
}

/* The exec/ view of a testbed (borrows t's arrays). */
void testbed_exec_net(const struct testbed_net *t, uint16_t port, struct exec_net *net)
{
	*net = (struct exec_net){.nhosts = t->nhosts,
				 .netns = (const char *const *)t->netns,
				 .lanes = t->ports,
				 .lane_peer = t->peer,
				 .lane_addr = t->peer_addr,
				 .lane_local = t->local_addr,
				 .host_addr = t->host_addr,
				 .tcp_port = port};
}

#define PROBE_PORT 7461

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int testbed_measure(const struct testbed_net *t, struct exec_probe **pr, uint32_t *n,
		    double *median, double *least, struct ofc_error *err)
{
	struct exec_net net;
	double *r;

	*median = *least = 0;
	testbed_exec_net(t, PROBE_PORT, &net);
	if (exec_probe_links(&net, TESTBED_PROBE_SECONDS, 30.0, pr, n, err) < 0)
		return -1;
	r = xcalloc(*n + 1, sizeof(double));
	for (uint32_t i = 0; i < *n; i++)
		r[i] = (*pr)[i].rate;
	qsort(r, *n, sizeof(double), cmp_double);
	if (*n) {
		*median = *n % 2 ? r[*n / 2] : (r[*n / 2 - 1] + r[*n / 2]) / 2;
		*least = r[0];
	}
	free(r);
	return 0;
}

/* Gb/s from 1 Gb/s up, so that 16 Gb/s does not read 1.6e+04 Mb/s. */
const char *testbed_rate_str(double bps, char *buf, size_t n)
{
	if (bps >= 1e9)
		snprintf(buf, n, "%.4g Gb/s", bps / 1e9);
	else
		snprintf(buf, n, "%.4g Mb/s", bps / 1e6);
	return buf;
}
