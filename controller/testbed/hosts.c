/* What the testbed's hosts should hold, from the fabric alone: their
 * namespace names, whether a testbed is up, and the target state for a set
 * of circuits: one veth per circuit and, in every host, a route to every
 * other host along a shortest path of the circuit graph (hosts relay, as
 * in a direct-connect fabric). ctl.c plans against this; testbed.c brings
 * the namespaces up and down. */
#include "controller/testbed/internal.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

char *testbed_path(const char *state_dir, const char *fabric, const char *ext)
{
	return xasprintf("%s/%s.%s", state_dir, fabric, ext);
}

char *testbed_netns_name(const struct fabric *f, uint32_t h)
{
	return xasprintf("ofc-%s-%s", f->name, f->hosts[h].name);
}

int testbed_need_root(struct ofc_error *err)
{
	if (geteuid() == 0)
		return 0;
	return ofc_error_set(err, OFC_E_RUNTIME, "the testbed needs root (network namespaces)");
}

bool testbed_is_up(const char *state_dir, const char *fabric)
{
	char *path = testbed_path(state_dir, fabric, "testbed");
	bool up = access(path, F_OK) == 0;

	free(path);
	return up;
}

void testbed_shaping(const struct fabric *f, double rate_scale, double *rate, double *latency)
{
	double r = f->testbed.link_rate;

	for (uint32_t h = 0; h < f->nhosts && r == 0; h++)
		r = f->hosts[h].port_rate;
	if (r == 0 && f->cost.bandwidth_set)
		r = f->cost.link_bandwidth;
	if (rate_scale <= 0)
		rate_scale = f->testbed.rate_scale > 0 ? f->testbed.rate_scale : 1;
	*rate = r * rate_scale;
	*latency = f->testbed.link_latency;
}

/* <fabric>.links: the shaping `testbed up` chose and what the circuits
 * carried when last measured ("RATE LATENCY CARRIED N ALPHA": bits/s,
 * seconds, bits/s a circuit with N circuits loaded at once, 0 0 when not
 * measured, and the step cost testbed check calibrated, 0 when not), so
 * circuits that `ofc apply` adds later are shaped alike and a run prices
 * its schedule at what this machine carries. An older ofc's file has the
 * first two or four only. */
int testbed_links_write(const char *state_dir, const char *fabric, const struct testbed_links *l,
			struct ofc_error *err)
{
	char *path = testbed_path(state_dir, fabric, "links");
	char buf[200];
	int n = snprintf(buf, sizeof(buf), "%.17g %.17g %.17g %u %.17g\n", l->rate, l->latency,
			 l->carried, l->ncarried, l->alpha);
	int rc = atomic_write(path, buf, (size_t)n, err);

	free(path);
	return rc;
}

void testbed_links_recorded(const char *state_dir, const char *fabric, struct testbed_links *l)
{
	char *path = testbed_path(state_dir, fabric, "links");
	struct ofc_error e = {0};
	char *data = NULL;
	size_t len;
	int got = 0;

	memset(l, 0, sizeof(*l));
	if (access(path, F_OK) == 0 && read_file(path, 4096, &data, &len, &e) == 0)
		got = sscanf(data, "%lf %lf %lf %u %lf", &l->rate, &l->latency, &l->carried,
			     &l->ncarried, &l->alpha);
	if (got < 2 || !(l->rate >= 0 && l->rate < 1e15) || !(l->latency >= 0 && l->latency <= 1))
		memset(l, 0, sizeof(*l));
	else if (got < 4 || !(l->carried >= 0 && l->carried < 1e15))
		l->carried = l->ncarried = 0;
	if (got < 5 || !(l->alpha >= 0 && l->alpha <= 1))
		l->alpha = 0;
	free(data);
	free(path);
}

int testbed_record_carried(const char *state_dir, const char *fabric, double carried,
			   uint32_t ncircuits, struct ofc_error *err)
{
	struct testbed_links l;

	testbed_links_recorded(state_dir, fabric, &l);
	l.carried = carried;
	l.ncarried = ncircuits;
	return testbed_links_write(state_dir, fabric, &l, err);
}

int testbed_record_alpha(const char *state_dir, const char *fabric, double alpha,
			 struct ofc_error *err)
{
	struct testbed_links l;

	testbed_links_recorded(state_dir, fabric, &l);
	l.alpha = alpha;
	return testbed_links_write(state_dir, fabric, &l, err);
}

static int cmp_link_port(const void *a, const void *b)
{
	const struct hlink *x = a, *y = b;

	if (x->src_host != y->src_host)
		return x->src_host < y->src_host ? -1 : 1;
	return x->src_port < y->src_port ? -1 : x->src_port > y->src_port;
}

void testbed_target(const struct fabric *f, const struct hlink *links, uint32_t nlinks,
		    struct device_state *out)
{
	uint32_t n = f->nhosts;
	struct hlink *l = xcalloc(nlinks + 1, sizeof(*l));
	uint32_t *off = xcalloc(n + 1, sizeof(uint32_t));
	uint32_t *first = xmalloc(((size_t)n + 1) * sizeof(uint32_t));
	uint32_t *queue = xmalloc(((size_t)n + 1) * sizeof(uint32_t));

	state_init(out, DEV_HOSTS);
	if (nlinks)
		memcpy(l, links, nlinks * sizeof(*l));
	qsort(l, nlinks, sizeof(*l), cmp_link_port);
	for (uint32_t k = 0; k < nlinks; k++) {
		state_add_link(out, l[k]);
		off[l[k].src_host + 1]++;
	}
	for (uint32_t u = 0; u < n; u++)
		off[u + 1] += off[u];
	/* BFS from every host; a node's first hop is the port its BFS parent
	 * was reached through, so ties break towards the lowest port. */
	for (uint32_t s = 0; s < n; s++) {
		uint32_t head = 0, tail = 0;

		memset(first, 0xff, (size_t)n * sizeof(uint32_t));
		first[s] = UINT32_MAX - 1;
		queue[tail++] = s;
		while (head < tail) {
			uint32_t u = queue[head++];

			for (uint32_t k = off[u]; k < off[u + 1]; k++) {
				uint32_t v = l[k].dst_host;

				if (first[v] != UINT32_MAX)
					continue;
				first[v] = u == s ? l[k].src_port : first[u];
				queue[tail++] = v;
			}
		}
		for (uint32_t v = 0; v < n; v++)
			if (v != s && first[v] != UINT32_MAX)
				state_add_route(out, (struct hroute){s, v, first[v]});
	}
	state_sort(out);
	free(l);
	free(off);
	free(first);
	free(queue);
}
