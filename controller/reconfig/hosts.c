/* What the testbed's hosts should hold, from the fabric alone: their
 * namespace names, whether a testbed is up, and the target state for a set
 * of circuits: one veth per circuit and, in every host, a route to every
 * other host along a shortest path of the circuit graph (hosts relay, as
 * in a direct-connect fabric). ctl.c plans against this; testbed.c brings
 * the namespaces up and down. */
#include "controller/reconfig/internal.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

char *testbed_netns_name(const struct fabric *f, uint32_t h)
{
	return xasprintf("ofc-%s-%s", f->name, f->hosts[h].name);
}

bool testbed_is_up(const char *state_dir, const char *fabric)
{
	char *path = ctl_path(state_dir, fabric, "testbed");
	bool up = access(path, F_OK) == 0;

	free(path);
	return up;
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
