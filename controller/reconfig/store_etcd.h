/* Private to the etcd backend (store_etcd.c, store_etcd_reg.c,
 * store_etcd_health.c): the store's struct, shared by its threads under
 * mu, and what its files call of each other. */
#ifndef OFC_CONTROLLER_RECONFIG_STORE_ETCD_H
#define OFC_CONTROLLER_RECONFIG_STORE_ETCD_H

#include "controller/reconfig/internal.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

struct cached {
	char *key;
	uint8_t *value;
	size_t len;
	int64_t create, mod, lease;
};

struct etcd_store {
	struct store s;
	char *fabric, *name, *sock, *url;
	char **urls;
	uint32_t nurls;
	struct etcd_tls tls; /* its strings owned; all NULL: plain http */
	char *prefix, *range_end, *leader_key, *epoch_key, *value;
	double ttl_asked, margin, tick;
	void (*on_event)(void *ctx, enum store_event ev);
	void *ctx;

	pthread_mutex_t mu;
	pthread_cond_t cond;
	/* ---- under mu ---- */
	struct cached *kv; /* the fabric's keys as the watch (or a load) left them */
	uint32_t nkv;
	int64_t rev;	      /* of the cache: every change up to it is in */
	bool loaded;	      /* the cache holds a whole range */
	int64_t lease, ttl;   /* ours (0: none) and the TTL granted */
	double valid_until;   /* the lease surely lasts until then (now_seconds) */
	uint64_t epoch;	      /* ours while leading: the elections' count when it won */
	uint64_t fence;	      /* ... and its leader key's create revision, which writes compare */
	uint64_t again;	      /* the fence it lapsed from only here (ours_again) */
	uint64_t again_epoch; /* ... and that leadership's epoch */
	char deposed[160];    /* why it last stopped leading */
	char unheld[200];     /* the last leader key no replica held, and why */
	bool leading;
	double last_ok;	   /* etcd last answered the session */
	bool watching;	   /* the watch stream is open and current */
	double watch_lost; /* when it last closed (now_seconds; 0: never open yet) */
	bool fresh;	   /* as store_cluster shows it */
	char why[560];	   /* what failed last */
	struct store_member members[STORE_MAX_MEMBERS];
	uint32_t nmembers;
	/* a follower's watch against etcd (check_behind): what the cache
	 * lacked at the last look (mod < 0: a key deleted since) */
	struct need {
		char *key;
		int64_t mod;
	} need[16], prev[16];
	uint32_t nbehind, nprev;
	bool behind;
	uint64_t serial;
	unsigned pending; /* events to fire (1 << store_event) */
	bool wake;	  /* the session: look at the leader key now */
	bool forged_wait; /* a forged key waits for its epoch's leader (claimed) */
	bool resigned;
	/* ---- threads ---- */
	_Atomic bool stop;
	bool started;
	pthread_t session, watcher;
	/* Writes and loads, from any thread (ofcd's loop writes the queue,
	 * its mutation worker the rest): one at a time. */
	pthread_mutex_t wmu;
	struct etcd_conn *wconn;
	size_t part_size; /* (under wmu) of a value's parts: store_parts.c */
	/* This replica's registration (PREFIX FABRIC/replicas/NAME): its key
	 * and the keys' prefix, what it says of the process; under mu: its
	 * create revision while it is ours (0: not registered), the lease,
	 * role and epoch it was last written with and when; dup: another
	 * replica holds the name (this one never campaigns). */
	char *reg_key, *reg_prefix, host[128];
	/* ... and its entry in the fabric's registry of the replicas that
	 * should run (PREFIX FABRIC/known/NAME, no lease: it outlives the
	 * process, so a replica that died is missed, not forgotten) */
	char *known_key, *known_prefix;
	uint64_t started_ms;
	int64_t reg_create, reg_lease;
	bool reg_leading, dup;
	uint64_t reg_epoch, reg_fence;
	double reg_written;
	/* (under mu) this replica's devices' last contacts, as the JSON
	 * object its registration carries ("devices"; NULL: none) */
	char *contacts;
	/* the other replicas' leases as the session last asked etcd (its health) */
	struct rlease {
		int64_t lease;
		double left, at; /* seconds left, at (now_seconds) */
	} rlease[STORE_MAX_REPLICAS];
	uint32_t nrlease;
};

static inline struct etcd_store *es_of(struct store *s)
{
	return (struct etcd_store *)s;
}

/* store_etcd.c */
/* The small helpers both halves use, here so that neither file calls
 * the other's (the registrations call only down into etcd.c). */

/* (under mu) An event to fire once mu is let go. */
static inline void es_post(struct etcd_store *es, enum store_event ev)
{
	es->pending |= 1u << ev;
	if (ev != STORE_EV_CHANGED && ev != STORE_EV_EVENTS && ev != STORE_EV_SCHEDULE)
		es->serial++;
}

/* (under mu) This replica leads no more. */
static inline void es_depose(struct etcd_store *es, const char *why)
{
	if (!es->leading)
		return;
	es->leading = false;
	es->epoch = 0;
	es->fence = 0;
	snprintf(es->why, sizeof(es->why), "%s", why);
	snprintf(es->deposed, sizeof(es->deposed), "%.150s", why);
	es_post(es, STORE_EV_DEPOSED);
}

static inline void es_kvs_free(struct etcd_kv *kvs, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		etcd_kv_free(&kvs[i]);
	free(kvs);
}

/* A write or a load may wait out a raft election of etcd's own (a member
 * lost: a second or two); devices are fenced by the lease, not by this. */
static inline double es_call_timeout(const struct etcd_store *es)
{
	return 2 * es->ttl_asked > 5 ? 2 * es->ttl_asked : 5;
}

/* store_etcd_reg.c: the replicas' registrations */
int es_register(struct store *s, double timeout, struct ofc_error *err);
void es_reg_turn(struct etcd_store *es, struct etcd_conn *c);			   /* (session) */
void es_replicas_of(struct etcd_store *es, struct store_cluster *out, double now); /* (under mu) */
void es_known_of(struct etcd_store *es, struct store_cluster *out);		   /* (under mu) */
uint32_t es_replica_leases(struct etcd_store *es, int64_t *leases);		   /* (session) */
void es_set_contacts(struct store *s, const struct store_contact *c, uint32_t n);
uint32_t es_leader_contacts(struct store *s, struct store_contact *out, uint32_t max, char by[64]);

/* store_etcd_health.c: the members' health and the other replicas'
 * leases, a round of steps the session runs in its idle time (session
 * thread only) */
struct es_health;
struct es_health *es_health_new(struct etcd_store *es);
void es_health_free(struct es_health *h);
/* When the next step may run (now_seconds; 0: a round is under way) */
double es_health_at(const struct es_health *h);
/* What the next step may wait for etcd at most (0: it asks nothing) */
double es_health_cost(const struct es_health *h);
/* how long the round due (or running) is past its start */
double es_health_late(const struct es_health *h, double now);
/* The next step, waiting at most timeout (events posted, not fired) */
void es_health_step(struct etcd_store *es, struct es_health *h, double timeout);

#endif
