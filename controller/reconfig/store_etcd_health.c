/* The etcd backend's view of etcd's members (store_cluster's members) and
 * of the other replicas' leases, asked by the session thread in its idle
 * time (store_etcd.c, session_idle): a round is steps, each one request
 * with a timeout of its own (a member's status, the members' names until
 * known, another replica's lease), so the session can start a step only
 * when it ends before the next keepalive is due. A round starts
 * HEALTH_PERIOD_S after the last one ended; what it found is published at
 * its end (a change: STORE_EV_HEALTH). */
#include "controller/reconfig/store_etcd.h"

#include <string.h>

#define HEALTH_STATUS_S 0.3 /* what a member's status may take */
#define HEALTH_NAMES_S	0.5 /* ... the members' names */
#define HEALTH_LEASE_S	0.3 /* ... another replica's lease */
#define HEALTH_PERIOD_S 1.0 /* from a round's end to the next's start */

/* (session thread only) */
struct es_health {
	struct etcd_conn *c; /* its own handle: the session's keeps its member */
	bool running;
	uint32_t step, n; /* the next step; the members */
	double due;	  /* the next round's start (now_seconds) */
	struct store_member m[STORE_MAX_MEMBERS];
	uint64_t mid[STORE_MAX_MEMBERS], leader;
	uint64_t ids[STORE_MAX_MEMBERS];
	char names[STORE_MAX_MEMBERS][64], urls[STORE_MAX_MEMBERS][128];
	uint32_t nnames, nleases;
	int64_t leases[STORE_MAX_REPLICAS];
	struct rlease got[STORE_MAX_REPLICAS];
};

struct es_health *es_health_new(struct etcd_store *es)
{
	struct es_health *h = xcalloc(1, sizeof(*h));

	h->c = etcd_conn_new(es->urls, es->nurls, &es->tls);
	h->n = es->nurls < STORE_MAX_MEMBERS ? es->nurls : STORE_MAX_MEMBERS;
	return h;
}

void es_health_free(struct es_health *h)
{
	etcd_conn_free(h->c);
	free(h);
}

double es_health_at(const struct es_health *h)
{
	return h->running ? 0 : h->due;
}

double es_health_late(const struct es_health *h, double now)
{
	return now - h->due;
}

double es_health_cost(const struct es_health *h)
{
	if (h->step < h->n)
		return HEALTH_STATUS_S;
	if (h->step == h->n)
		return h->nnames < h->n ? HEALTH_NAMES_S : 0;
	return h->step < h->n + 1 + h->nleases ? HEALTH_LEASE_S : 0;
}

/* A round's start: the members as the endpoints name them, the other
 * replicas' leases as the cache has them. */
static void begin(struct etcd_store *es, struct es_health *h)
{
	memset(h->m, 0, sizeof(h->m));
	memset(h->mid, 0, sizeof(h->mid));
	h->leader = 0;
	for (uint32_t i = 0; i < h->n; i++) {
		snprintf(h->m[i].url, sizeof(h->m[i].url), "%s", es->urls[i]);
		snprintf(h->m[i].name, sizeof(h->m[i].name), "%s", strstr(es->urls[i], "://") + 3);
	}
	h->nleases = es_replica_leases(es, h->leases);
	h->running = true;
}

/* The round's end: what it found into the store. */
static void publish(struct etcd_store *es, struct es_health *h)
{
	for (uint32_t i = 0; i < h->n; i++) {
		h->m[i].raft_leader = h->m[i].reachable && h->mid[i] && h->mid[i] == h->leader;
		for (uint32_t k = 0; k < h->nnames; k++)
			if ((h->mid[i] && h->ids[k] == h->mid[i]) ||
			    strcmp(h->urls[k], h->m[i].url) == 0)
				snprintf(h->m[i].name, sizeof(h->m[i].name), "%s", h->names[k]);
	}
	pthread_mutex_lock(&es->mu);
	memcpy(es->rlease, h->got, h->nleases * sizeof(*h->got));
	es->nrlease = h->nleases;
	if (es->nmembers != h->n || memcmp(es->members, h->m, sizeof(h->m)) != 0) {
		memcpy(es->members, h->m, sizeof(h->m));
		es->nmembers = h->n;
		es_post(es, STORE_EV_HEALTH);
	}
	pthread_mutex_unlock(&es->mu);
	h->running = false;
	h->step = 0;
	h->due = now_seconds() + HEALTH_PERIOD_S;
}

void es_health_step(struct etcd_store *es, struct es_health *h, double timeout)
{
	struct ofc_error err = {0};

	if (!h->running)
		begin(es, h);
	uint32_t s = h->step++;

	if (s < h->n) {
		uint64_t l = 0;

		h->m[s].reachable = etcd_member_status(h->c, s, timeout, &h->mid[s], &l, &err) == 0;
		if (l)
			h->leader = l;
	} else if (s == h->n) {
		if (h->nnames < h->n)
			etcd_member_names(h->c, timeout, h->ids, h->names, h->urls,
					  STORE_MAX_MEMBERS, &h->nnames, &err);
	} else if (s < h->n + 1 + h->nleases) {
		uint32_t k = s - h->n - 1;
		int64_t ttl = -1;

		if (etcd_lease_ttl(h->c, h->leases[k], timeout, &ttl, &err) < 0)
			ttl = -1;
		h->got[k] =
		    (struct rlease){h->leases[k], ttl >= 0 ? (double)ttl : -1, now_seconds()};
	} else {
		publish(es, h);
	}
}
