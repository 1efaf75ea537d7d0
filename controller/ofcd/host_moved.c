/* Which host ports a published state moved: the circuits of the state
 * before and after compared, and the ends of those that changed marked on
 * the hosts' records (struct port_seen.moved_ms), so that host_links.c
 * takes a port going down just after as the move's doing, not a failure.
 * Apart from host_links.c, which queues jobs: the job queue calls this
 * when it publishes. Nothing is done before a host's agent has reported. */
#include "controller/ofcd/conn.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The circuits of st, as "SRC:P>DST:Q", sorted. */
static char **circuit_keys(const Ofc__V1__State *st, size_t *n)
{
	size_t cap = 0;
	char **v = NULL;

	*n = 0;
	for (size_t i = 0; st && i < st->n_devices; i++)
		for (size_t k = 0; k < st->devices[i]->n_circuits; k++) {
			const Ofc__V1__Circuit *c = st->devices[i]->circuits[k];

			if (!c->src_host || !c->dst_host)
				continue;
			GROW(v, cap, *n + 1);
			v[(*n)++] = xasprintf("%s:%u>%s:%u", c->src_host, c->src_port, c->dst_host,
					      c->dst_port);
		}
	if (*n)
		qsort(v, *n, sizeof(*v), cmp_str);
	return v;
}

/* Mark the ends of circuit key k ("SRC:P>DST:Q") moved, where reported. */
static void mark_moved(struct ofcd *d, const char *k, int64_t now)
{
	char host[NAME_MAX_LEN + 1];
	unsigned port;

	for (const char *p = k; p; p = strchr(p, '>'), p = p ? p + 1 : NULL) {
		const char *colon = strchr(p, ':');

		if (!colon || (size_t)(colon - p) > NAME_MAX_LEN ||
		    sscanf(colon + 1, "%u", &port) != 1)
			return;
		snprintf(host, sizeof(host), "%.*s", (int)(colon - p), p);
		for (uint32_t i = 0; i < d->loop->nhosts_seen; i++) {
			struct host_seen *h = &d->loop->hosts_seen[i];

			if (strcmp(h->name, host) == 0 && port < h->nports)
				h->ports[port].moved_ms = now;
		}
	}
}

void host_links_moved(struct ofcd *d, const Ofc__V1__State *old, const Ofc__V1__State *now)
{
	size_t na, nb, a = 0, b = 0;
	char **va, **vb;
	int64_t t = wiring_now_ms();

	if (!d->loop->nhosts_seen) /* (no agent reports: nothing to mark) */
		return;
	va = circuit_keys(old, &na);
	vb = circuit_keys(now, &nb);
	while (a < na || b < nb) {
		int c = a == na ? 1 : b == nb ? -1 : strcmp(va[a], vb[b]);

		if (c)
			mark_moved(d, c < 0 ? va[a] : vb[b], t);
		a += c <= 0;
		b += c >= 0;
	}
	for (size_t i = 0; i < na; i++)
		free(va[i]);
	for (size_t i = 0; i < nb; i++)
		free(vb[i]);
	free(va);
	free(vb);
}
