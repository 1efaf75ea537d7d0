/* The testbed as the executor sees it, and what its circuits carry: what
 * ofc testbed up, check and run share (cmd_testbed.c, cmd_run.c). */
#include "controller/testbed/testbed.h"

#include <stdlib.h>

#include "exec/exec.h"

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
