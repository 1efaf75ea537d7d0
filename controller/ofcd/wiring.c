/* The wiring as the hosts hear it, on the loop thread: the record's
 * circuits (the published state) against the LLDP neighbours the hosts'
 * agents last reported (host_links.c keeps them). Read by host_links.c,
 * which names a difference in the log when a report shows it, by
 * read_requests.c (State.wiring: each circuit's verdict and the named
 * difference, GetState.with_wiring) and by metrics.c; it calls neither. */
#include "controller/ofcd/conn.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *const verdict_words[WIRING_NVERDICTS] = {"confirmed", "miswired", "dark",
							    "not-seen"};

int64_t wiring_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

const char *wiring_verdict_word(enum wiring_verdict v)
{
	return v < WIRING_NVERDICTS ? verdict_words[v] : "?";
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

/* here ("HOST:PORT") hears heard where the record's circuits give it exp
 * (NULL: none), in words: where the heard source's circuit goes by the
 * record names the fibre that reached here instead. */
void wiring_difference(const struct ofcd *d, const char *here, const char *heard, const char *exp,
		       char *buf, size_t n)
{
	const char *colon = strrchr(heard, ':');
	char nh[NAME_MAX_LEN + 1], gives[NAME_MAX_LEN + 16];
	uint32_t np = colon ? (uint32_t)strtoul(colon + 1, NULL, 10) : 0;
	const char *to;

	snprintf(nh, sizeof(nh), "%.*s", (int)(colon ? colon - heard : 0), heard);
	to = colon ? wiring_record_end(d, nh, np, true, gives, sizeof(gives)) : NULL;
	if (to)
		snprintf(buf, n,
			 "%s reaches %s where the record's circuits give %s (and %s should hear "
			 "%s)",
			 heard, here, to, here, exp ? exp : "nothing: dark");
	else
		snprintf(buf, n,
			 "%s reaches %s, but the record's circuits give %s no circuit (%s should "
			 "hear %s)",
			 heard, here, heard, here, exp ? exp : "nothing: dark");
}

/* A circuit's verdict from its end's host's last report (h: that host's
 * record, NULL: none). */
enum wiring_verdict wiring_port_verdict(const struct host_seen *h, const char *src,
					uint32_t dst_port)
{
	if (!h || !h->lldp_running)
		return WIRING_NOT_SEEN;
	if (dst_port >= h->nports || !h->ports[dst_port].reported || !h->ports[dst_port].neighbour)
		return WIRING_DARK;
	return strcmp(h->ports[dst_port].neighbour, src) == 0 ? WIRING_CONFIRMED : WIRING_MISWIRED;
}

/* Each circuit of the record with its end's host's record, through fn
 * (the records found by the running config's host index: a fabric of
 * thousands of hosts is one pass). */
static void each_circuit(const struct ofcd *d,
			 void (*fn)(void *arg, const Ofc__V1__Circuit *c, const struct host_seen *h,
				    const char *src),
			 void *arg)
{
	const Ofc__V1__State *st = d->loop->snap ? d->loop->snap->state : NULL;
	const struct fabric *f = d->loop->cfg ? d->loop->cfg->f : NULL;
	const struct host_seen **by = f ? xcalloc(f->nhosts + 1, sizeof(*by)) : NULL;
	int h;

	for (uint32_t i = 0; f && i < d->loop->nhosts_seen; i++)
		if ((h = fabric_find_host(f, d->loop->hosts_seen[i].name)) >= 0)
			by[h] = &d->loop->hosts_seen[i];
	for (size_t i = 0; st && i < st->n_devices; i++)
		for (size_t k = 0; k < st->devices[i]->n_circuits; k++) {
			const Ofc__V1__Circuit *c = st->devices[i]->circuits[k];
			char src[NAME_MAX_LEN + 16];

			if (!c->src_host || !c->dst_host)
				continue;
			snprintf(src, sizeof(src), "%s:%u", c->src_host, c->src_port);
			h = f ? fabric_find_host(f, c->dst_host) : -1;
			fn(arg, c, h >= 0 ? by[h] : NULL, src);
		}
	free(by);
}

static double oldest_age(const struct ofcd *d, int64_t now)
{
	int64_t oldest = -1;

	for (uint32_t i = 0; i < d->loop->nhosts_seen; i++)
		if (oldest < 0 || d->loop->hosts_seen[i].reported_ms < oldest)
			oldest = d->loop->hosts_seen[i].reported_ms;
	return oldest < 0 ? -1 : (double)(now - oldest) / 1000;
}

static void count_one(void *arg, const Ofc__V1__Circuit *c, const struct host_seen *h,
		      const char *src)
{
	((uint32_t *)arg)[wiring_port_verdict(h, src, c->dst_port)]++;
}

void host_links_wiring(const struct ofcd *d, uint32_t counts[WIRING_NVERDICTS], double *age_s)
{
	memset(counts, 0, WIRING_NVERDICTS * sizeof(counts[0]));
	each_circuit(d, count_one, counts);
	*age_s = oldest_age(d, wiring_now_ms());
}

struct listing {
	const struct ofcd *d;
	struct arena *a;
	Ofc__V1__Wiring *w;
	int64_t now;
};

/* One circuit as State.wiring lists it. */
static void list_one(void *arg, const Ofc__V1__Circuit *c, const struct host_seen *h,
		     const char *src)
{
	struct listing *l = arg;
	Ofc__V1__Wiring__Link *k = arena_alloc(l->a, sizeof(*k));
	enum wiring_verdict v = wiring_port_verdict(h, src, c->dst_port);
	char buf[2 * NAME_MAX_LEN + 300];

	ofc__v1__wiring__link__init(k);
	k->src = arena_strdup(l->a, src);
	k->dst = arena_printf(l->a, "%s:%u", c->dst_host, c->dst_port);
	k->verdict = (char *)wiring_verdict_word(v);
	if (h) {
		k->has_age_seconds = 1;
		k->age_seconds = (double)(l->now - h->reported_ms) / 1000;
	}
	if (v == WIRING_MISWIRED) {
		k->heard = arena_strdup(l->a, h->ports[c->dst_port].neighbour);
		wiring_difference(l->d, k->dst, k->heard, src, buf, sizeof(buf));
		k->detail = arena_strdup(l->a, buf);
	} else if (v == WIRING_NOT_SEEN) {
		k->detail = !h ? arena_printf(l->a, "%s's agent has not reported", c->dst_host)
			    : h->lldp_error
				? arena_printf(l->a, "%s's lldpd does not answer: %s", c->dst_host,
					       h->lldp_error)
				: arena_printf(l->a, "%s's lldpd does not answer", c->dst_host);
	}
	switch (v) {
	case WIRING_CONFIRMED:
		l->w->confirmed++;
		break;
	case WIRING_MISWIRED:
		l->w->miswired++;
		break;
	case WIRING_DARK:
		l->w->dark++;
		break;
	default:
		l->w->not_seen++;
		break;
	}
	l->w->links[l->w->n_links++] = k;
}

Ofc__V1__Wiring *wiring_msg(const struct ofcd *d, struct arena *a)
{
	const Ofc__V1__State *st = d->loop->snap ? d->loop->snap->state : NULL;
	Ofc__V1__Wiring *w = arena_alloc(a, sizeof(*w));
	struct listing l = {d, a, w, wiring_now_ms()};
	size_t n = 0;
	double age = oldest_age(d, l.now);

	ofc__v1__wiring__init(w);
	/* A follower has heard no agent (they report to the leader): it says
	 * who has the verdict rather than calling every link not seen. */
	if (d->clustered && !d->loop->cl.leading) {
		w->has_follower = w->follower = 1;
		w->leader = cluster_leader_msg(a, &d->loop->cl);
		return w;
	}
	for (size_t i = 0; st && i < st->n_devices; i++)
		n += st->devices[i]->n_circuits;
	w->links = arena_array(a, n + 1, sizeof(*w->links));
	w->has_confirmed = w->has_miswired = w->has_dark = w->has_not_seen = 1;
	w->has_hosts_reporting = 1;
	w->hosts_reporting = d->loop->nhosts_seen;
	if (age >= 0) {
		w->has_oldest_report_age_seconds = 1;
		w->oldest_report_age_seconds = age;
	}
	each_circuit(d, list_one, &l);
	return w;
}
