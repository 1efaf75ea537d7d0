/* The wiring as the hosts hear it, on the loop thread: the record's
 * circuits (the published state) against the LLDP neighbours the hosts'
 * agents last reported (host_links.c keeps them). Read by host_links.c,
 * which names a difference when a report shows it, and by metrics.c; it
 * calls neither. */
#include "controller/ofcd/conn.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

int64_t wiring_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The record's circuit arriving at host:port ("SRC:P" in buf), or leaving
 * src:port (dst: true; "DST:Q"); NULL: none (dark). */
const char *wiring_record_end(const struct ofcd *d, const char *host, uint32_t port, bool dst,
			      char *buf, size_t n)
{
	const Ofc__V1__State *st = d->loop->snap ? d->loop->snap->state : NULL;

	for (size_t i = 0; st && i < st->n_devices; i++)
		for (size_t k = 0; k < st->devices[i]->n_circuits; k++) {
			const Ofc__V1__Circuit *c = st->devices[i]->circuits[k];
			const char *at = dst ? c->src_host : c->dst_host;

			if (!at || !c->src_host || !c->dst_host || strcmp(at, host) != 0 ||
			    (dst ? c->src_port : c->dst_port) != port)
				continue;
			snprintf(buf, n, "%s:%u", dst ? c->dst_host : c->src_host,
				 dst ? c->dst_port : c->src_port);
			return buf;
		}
	return NULL;
}

/* A circuit's verdict from its end's host's last report. */
static enum wiring_verdict verdict(const struct ofcd *d, const char *src, const char *dst_host,
				   uint32_t dst_port)
{
	for (uint32_t i = 0; i < d->loop->nhosts_seen; i++) {
		const struct host_seen *h = &d->loop->hosts_seen[i];

		if (strcmp(h->name, dst_host) != 0)
			continue;
		if (!h->lldp_running)
			return WIRING_NOT_SEEN;
		if (dst_port >= h->nports || !h->ports[dst_port].reported ||
		    !h->ports[dst_port].neighbour)
			return WIRING_DARK;
		return strcmp(h->ports[dst_port].neighbour, src) == 0 ? WIRING_CONFIRMED
								      : WIRING_MISWIRED;
	}
	return WIRING_NOT_SEEN;
}

void host_links_wiring(const struct ofcd *d, uint32_t counts[WIRING_NVERDICTS], double *age_s)
{
	const Ofc__V1__State *st = d->loop->snap ? d->loop->snap->state : NULL;
	int64_t oldest = -1;

	memset(counts, 0, WIRING_NVERDICTS * sizeof(counts[0]));
	for (size_t i = 0; st && i < st->n_devices; i++)
		for (size_t k = 0; k < st->devices[i]->n_circuits; k++) {
			const Ofc__V1__Circuit *c = st->devices[i]->circuits[k];
			char src[NAME_MAX_LEN + 16];

			if (!c->src_host || !c->dst_host)
				continue;
			snprintf(src, sizeof(src), "%s:%u", c->src_host, c->src_port);
			counts[verdict(d, src, c->dst_host, c->dst_port)]++;
		}
	for (uint32_t i = 0; i < d->loop->nhosts_seen; i++)
		if (oldest < 0 || d->loop->hosts_seen[i].reported_ms < oldest)
			oldest = d->loop->hosts_seen[i].reported_ms;
	*age_s = oldest < 0 ? -1 : (double)(wiring_now_ms() - oldest) / 1000;
}
