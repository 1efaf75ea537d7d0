/* The etcd backend of the store (store.h): a fabric's state in
 * an etcd 3.4 cluster, shared by ofcd's replicas, and the leadership that
 * decides which of them may write it and drive the devices.
 *
 * Keys (PREFIX is /ofc/ unless told): PREFIX FABRIC/leader (the leader's
 * name and addresses, bound to its lease), .../state, .../journal,
 * .../failed, .../rewired (the files' bytes, unchanged), .../queue,
 * .../held, .../outcomes, .../events, .../schedule, .../lost, .../epoch
 * (the elections won, as decimal text) and .../replicas/NAME (each
 * replica's registration, bound to its lease). A
 * value too large for one etcd request is a head naming its parts,
 * KEY/part/GEN/NNNN (store_parts.c).
 *
 * Leadership is etcd's, not ours: a replica grants itself a lease and
 * campaigns with a transaction that creates the leader key only if it does
 * not exist (compare create_revision = 0). The key's create revision is the
 * fence; every write of the state is a transaction that compares it and the
 * key's lease first, so a replica whose key was deleted (its lease expired:
 * killed, paused, cut off) writes nothing any more, whatever it believes.
 * (The lease too because a put over the key keeps its create revision:
 * `etcdctl put KEY V --lease=<another replica's>` rebinds the fence to
 * another lease without changing it.) A replica leads only under a key
 * it created itself: one that finds the key bound to its lease with another
 * create revision did not create it, deletes it, and campaigns. The epoch
 * operators see counts elections: the campaign's transaction also raises
 * the counter .../epoch, comparing its mod revision with the one it read,
 * so two campaigns never win the same number and each win adds one
 * (etcd's revision, the fence, grows with every write etcd takes between
 * two elections); the leader key's value carries it. Jepsen found
 * etcd 3.4's transactions strict serializable and its locks alone unsafe;
 * this is the fencing it asks for. Devices cannot compare an epoch, so the
 * leader also stops sending them commands before its lease can end
 * (store_fence): the lease surely lasts until the time a keepalive was
 * sent plus the TTL etcd granted, less the margin.
 *
 * Threads: the session (lease, keepalive, campaign; in its idle time the
 * members' health, store_etcd_health.c, a step at a time that ends before
 * the next keepalive is due) and the watch (the fabric's keys into a
 * cache that reads are answered from: a follower serves what the leader
 * wrote as its watch delivers it). Each has its own curl handles; writes
 * use the caller's (ofcd's mutation worker, one thread at a time).
 * Everything shared is under mu; events go to the owner's callback
 * outside it. */
#include "controller/reconfig/store_etcd.h"
#include "controller/reconfig/internal.h"

#include <errno.h>
#include <json-c/json.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const item_names[STORE_NITEMS] = {
    [STORE_RECORD] = "state",	   [STORE_JOURNAL] = "journal", [STORE_FAILED] = "failed",
    [STORE_REWIRED] = "rewired",   [STORE_QUEUE] = "queue",	[STORE_HELD] = "held",
    [STORE_OUTCOMES] = "outcomes", [STORE_EVENTS] = "events",	[STORE_SCHEDULE] = "schedule",
    [STORE_LOST] = "lost",	   [STORE_DRAINED] = "drained", [STORE_STAGED] = "staged",
};

static const struct etcd_store *ces_of(const struct store *s)
{
	return (const struct etcd_store *)s;
}

static char *key_of(const struct etcd_store *es, enum store_item it)
{
	return xasprintf("%s%s", es->prefix, item_names[it]);
}

/* ---- events ------------------------------------------------------------------------ */

/* Fire what is pending (not under mu: the owner may call back in). */
static void fire(struct etcd_store *es)
{
	unsigned p;

	pthread_mutex_lock(&es->mu);
	p = es->pending;
	es->pending = 0;
	pthread_mutex_unlock(&es->mu);
	for (int ev = STORE_EV_LEADER; ev <= STORE_EV_SCHEDULE; ev++)
		if (p & (1u << ev) && es->on_event)
			es->on_event(es->ctx, (enum store_event)ev);
}

/* ---- the cache ----------------------------------------------------------------------- */

static struct cached *find(struct etcd_store *es, const char *key)
{
	for (uint32_t i = 0; i < es->nkv; i++)
		if (strcmp(es->kv[i].key, key) == 0)
			return &es->kv[i];
	return NULL;
}

static void cache_clear(struct etcd_store *es)
{
	for (uint32_t i = 0; i < es->nkv; i++) {
		free(es->kv[i].key);
		free(es->kv[i].value);
	}
	free(es->kv);
	es->kv = NULL;
	es->nkv = 0;
}

/* (under mu) Put kv (moved in) or, with value NULL, delete key. */
static void cache_set(struct etcd_store *es, char *key, uint8_t *value, size_t len, int64_t create,
		      int64_t mod, int64_t lease)
{
	struct cached *c = find(es, key);

	if (c && c->mod > mod) { /* an older event than what is cached */
		free(key);
		free(value);
		return;
	}
	if (!value) {
		if (c) {
			free(c->key);
			free(c->value);
			*c = es->kv[--es->nkv];
		}
		free(key);
		return;
	}
	if (!c) {
		es->kv = xreallocarray(es->kv, es->nkv + 1, sizeof(*es->kv));
		c = &es->kv[es->nkv++];
		c->key = key;
	} else {
		free(key);
		free(c->value);
	}
	c->value = value;
	c->len = len;
	c->create = create;
	c->mod = mod;
	c->lease = lease;
}

/* (under mu) The leader as its key says, into out's fields. */
static void leader_of(struct etcd_store *es, struct store_cluster *out)
{
	struct cached *c = find(es, es->leader_key);
	struct json_object *o = c ? json_tokener_parse((const char *)c->value) : NULL;
	const char *v;

	out->leader[0] = out->leader_socket[0] = out->leader_url[0] = 0;
	out->epoch = o ? (uint64_t)etcd_int(o, "epoch") : 0;
	if (c && !o)
		snprintf(out->leader, sizeof(out->leader), "?");
	if ((v = etcd_str(o, "name")))
		snprintf(out->leader, sizeof(out->leader), "%s", v);
	if ((v = etcd_str(o, "socket")))
		snprintf(out->leader_socket, sizeof(out->leader_socket), "%s", v);
	if ((v = etcd_str(o, "url")))
		snprintf(out->leader_url, sizeof(out->leader_url), "%s", v);
	if (o)
		json_object_put(o);
}

/* (under mu) Why this replica leads no more, given the leader key as etcd
 * has it (its create revision, 0: no key, and its lease); NULL: it still
 * leads, or never did. */
static const char *lead_lost(const struct etcd_store *es, int64_t create, int64_t lease)
{
	if (!es->leading)
		return NULL;
	if (!create)
		return "the leader key was deleted (the lease expired, or an operator deleted it)";
	if ((uint64_t)create != es->fence)
		return "another replica created the leader key";
	if (lease != es->lease)
		return "the leader key was written over, bound to another lease (not by this "
		       "replica)";
	return NULL;
}

/* (under mu) Replace the cache by kvs (moved out) at revision rev. A read
 * older than the cache (a campaign's answer came first) is dropped. The
 * leader key is looked at as a watch event's would be: a reload skips the
 * events up to rev, a deletion of this leader's key among them. */
static void cache_load(struct etcd_store *es, struct etcd_kv *kvs, uint32_t n, int64_t rev)
{
	if (es->loaded && rev < es->rev)
		return;
	cache_clear(es);
	for (uint32_t i = 0; i < n; i++) {
		cache_set(es, kvs[i].key, kvs[i].value, kvs[i].len, kvs[i].create_rev,
			  kvs[i].mod_rev, kvs[i].lease);
		kvs[i].key = NULL;
		kvs[i].value = NULL;
	}
	es->rev = rev;
	es->loaded = true;
	struct cached *lk = find(es, es->leader_key);
	const char *why = lead_lost(es, lk ? lk->create : 0, lk ? lk->lease : 0);
	if (why)
		es_depose(es, why);
	es_post(es, STORE_EV_CHANGED);
	es_post(es, STORE_EV_HEALTH);
	es_post(es, STORE_EV_EVENTS);
	es_post(es, STORE_EV_SCHEDULE);
}

/* ---- the store's operations ------------------------------------------------------------ */

/* (under mu: parts_join's lookup) */
static const uint8_t *part_of(void *ctx, const char *key, size_t *len)
{
	struct cached *c = find(ctx, key);

	*len = c ? c->len : 0;
	return c ? c->value : NULL;
}

static int es_get(struct store *s, const char *fabric, enum store_item it, size_t max, char **data,
		  size_t *len, bool *missing, struct ofc_error *err)
{
	struct etcd_store *es = es_of(s);
	char *key = key_of(es, it);
	int rc = 0;

	(void)fabric;
	pthread_mutex_lock(&es->mu);
	struct cached *c = find(es, key);
	if (!c) {
		*missing = true;
	} else if (parts_is_head(c->value, c->len)) {
		rc = parts_join(key, c->value, c->len, part_of, es, max, data, len, err);
	} else if (c->len > max) {
		rc = ofc_error_at(err, OFC_E_RUNTIME, key, 0, 0,
				  "holds %zu bytes, more than the %zu ofc reads", c->len, max);
	} else {
		*data = xmalloc(c->len + 1);
		memcpy(*data, c->value, c->len);
		(*data)[c->len] = 0;
		*len = c->len;
	}
	pthread_mutex_unlock(&es->mu);
	free(key);
	return rc;
}

/* Every write compares the epoch and the lease (etcd 3.4's compare target
 * LEASE): a replica that leads no more changes nothing, and learns it here
 * at the latest. */
static int es_write(struct store *s, const char *fabric, const struct store_write *w, uint32_t n,
		    struct ofc_error *err)
{
	struct etcd_store *es = es_of(s);
	struct json_object *resp = NULL;
	char **keys = xcalloc(n + 1, sizeof(char *));
	bool ok = false;
	int64_t rev = 0;
	uint64_t epoch, fence;
	int64_t lease;
	int rc;

	(void)fabric;
	pthread_mutex_lock(&es->mu);
	epoch = es->leading ? es->epoch : 0;
	fence = es->leading ? es->fence : 0;
	lease = es->lease;
	pthread_mutex_unlock(&es->mu);
	if (!fence) {
		free(keys);
		return ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_FENCED,
				      "this replica (%s) does not lead fabric '%s': nothing was "
				      "written",
				      es->name, es->fabric);
	}
	for (uint32_t i = 0; i < n; i++)
		keys[i] = key_of(es, w[i].item);
	pthread_mutex_lock(&es->wmu);
	rc = parts_write(es->wconn,
			 &(struct parts_fence){es->leader_key, fence, lease, es_call_timeout(es)},
			 keys, w, n, &es->part_size, &ok, &rev, &resp, err);
	pthread_mutex_unlock(&es->wmu);
	pthread_mutex_lock(&es->mu);
	if (rc == 0 && ok) {
		for (uint32_t i = 0; i < n; i++) {
			struct cached *c = find(es, keys[i]);
			uint8_t *v = NULL;

			if (w[i].data) {
				v = xmalloc(w[i].len + 1);
				memcpy(v, w[i].data, w[i].len);
				v[w[i].len] = 0;
			}
			cache_set(es, xstrdup(keys[i]), v, w[i].len, c ? c->create : rev, rev, 0);
		}
		if (rev > es->rev && es->rev == rev - 1)
			es->rev = rev;
		es->last_ok = now_seconds();
	} else if (rc == 0) {
		struct etcd_kv *kv;
		uint32_t nk = etcd_txn_kvs(resp, 0, &kv);

		es_depose(es, nk && kv[0].create_rev == (int64_t)fence
				  ? "a write found the leader key bound to another lease"
				  : "a write found another replica's leader key");
		rc = ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_FENCED,
				    "this replica (%s) leads fabric '%s' no more: its epoch %llu "
				    "(leader key of revision %llu under lease %llx) is over (the "
				    "leader key's revision is %lld under lease %llx); nothing was "
				    "written",
				    es->name, es->fabric, (unsigned long long)epoch,
				    (unsigned long long)fence, (unsigned long long)lease,
				    nk ? (long long)kv[0].create_rev : 0LL,
				    nk ? (unsigned long long)kv[0].lease : 0ULL);
		es_kvs_free(kv, nk);
	}
	pthread_mutex_unlock(&es->mu);
	if (resp)
		json_object_put(resp);
	for (uint32_t i = 0; i < n; i++)
		free(keys[i]);
	free(keys);
	fire(es);
	return rc;
}

static char *es_where(const struct store *s, const char *fabric, enum store_item it)
{
	(void)fabric;
	return key_of(ces_of(s), it);
}

static char *es_aside(const struct store *s, const char *fabric, enum store_item it,
		      const char *suffix)
{
	const struct etcd_store *es = ces_of(s);
	char *key = key_of(es, it);
	/* (over TLS etcdctl needs the files this replica uses, from its
	 * environment: their paths would not fit in an error's message) */
	bool tls = es->tls.cert != NULL;
	char *ep = xstrdup(tls ? es->urls[0] : es->urls[0] + strlen("http://"));
	char *cmd = xasprintf(
	    "%setcdctl --endpoints=%s get '%s' -w json >'%s.%s%s.json' && "
	    "etcdctl --endpoints=%s del '%s'",
	    tls ? "ETCDCTL_{CACERT,CERT,KEY} as ofcd's --cluster-{cacert,cert,key}: " : "", ep, key,
	    fabric, item_names[it], suffix, ep, key);

	free(ep);
	free(key);
	return cmd;
}

/* The epoch a leader key's value says (NULL or none: 0). */
static uint64_t key_epoch(const struct cached *c)
{
	struct json_object *o = c && c->value ? json_tokener_parse((const char *)c->value) : NULL;
	uint64_t e = o ? (uint64_t)etcd_int(o, "epoch") : 0;

	if (o)
		json_object_put(o);
	return e > 0 ? e : 0;
}

static bool es_writer_alive(struct store *s, const char *fabric, uint32_t pid, uint64_t epoch)
{
	struct etcd_store *es = es_of(s);
	bool alive;

	(void)fabric;
	(void)pid;
	pthread_mutex_lock(&es->mu);
	alive = epoch && key_epoch(find(es, es->leader_key)) == epoch;
	pthread_mutex_unlock(&es->mu);
	return alive;
}

static void es_cluster(struct store *s, struct store_cluster *out)
{
	struct etcd_store *es = es_of(s);
	double now = now_seconds();

	memset(out, 0, sizeof(*out));
	out->clustered = true;
	pthread_mutex_lock(&es->mu);
	snprintf(out->name, sizeof(out->name), "%s", es->name);
	leader_of(es, out);
	out->leading = es->leading;
	out->campaigning = !es->leading && !es->resigned && es->started;
	out->lease_ttl = (double)es->ttl;
	out->lease_left = es->lease && es->valid_until > now ? es->valid_until - now : 0;
	out->fresh = es->fresh;
	snprintf(out->why, sizeof(out->why), "%s", es->fresh ? "" : es->why);
	snprintf(out->deposed, sizeof(out->deposed), "%s", es->deposed);
	snprintf(out->unheld, sizeof(out->unheld), "%s", es->unheld);
	out->since_ok = es->last_ok > 0 ? now - es->last_ok : -1;
	out->revision = es->rev;
	out->nmembers = es->nmembers;
	memcpy(out->members, es->members, sizeof(out->members));
	es_replicas_of(es, out, now);
	es_known_of(es, out);
	out->serial = es->serial;
	pthread_mutex_unlock(&es->mu);
}

static double es_fence(struct store *s)
{
	struct etcd_store *es = es_of(s);
	double f;

	pthread_mutex_lock(&es->mu);
	f = es->leading && es->valid_until > 0 ? es->valid_until - es->margin : -1;
	pthread_mutex_unlock(&es->mu);
	return f > 0 ? f : -1;
}

static uint64_t es_epoch(struct store *s)
{
	struct etcd_store *es = es_of(s);
	uint64_t e;

	pthread_mutex_lock(&es->mu);
	e = es->leading ? es->epoch : 0;
	pthread_mutex_unlock(&es->mu);
	return e;
}

/* (es->name is set at open and never changes: no lock) */
static const char *es_replica(const struct store *s)
{
	return ces_of(s)->name;
}

static int es_load(struct store *s, double timeout, struct ofc_error *err)
{
	struct etcd_store *es = es_of(s);
	struct etcd_kv *kvs;
	uint32_t n;
	int64_t rev;

	pthread_mutex_lock(&es->wmu);
	int rc = etcd_range(es->wconn, es->prefix, es->range_end, timeout, &kvs, &n, &rev, err);
	pthread_mutex_unlock(&es->wmu);
	if (rc < 0) {
		pthread_mutex_lock(&es->mu);
		snprintf(es->why, sizeof(es->why), "%s", err->msg);
		pthread_mutex_unlock(&es->mu);
		return -1;
	}
	pthread_mutex_lock(&es->mu);
	cache_load(es, kvs, n, rev);
	es->last_ok = now_seconds();
	pthread_mutex_unlock(&es->mu);
	es_kvs_free(kvs, n);
	fire(es);
	return 0;
}

/* ---- the session: lease, keepalive, campaign ------------------------------------------ */

/* (under mu) Whether the last look found the cache lacking key at mod too
 * (and the cache still lacks it: checked by the caller's comparison). */
static bool was_needed(const struct etcd_store *es, const char *key, int64_t mod)
{
	for (uint32_t i = 0; i < es->nprev; i++)
		if (strcmp(es->prev[i].key, key) == 0 && es->prev[i].mod == mod)
			return true;
	return false;
}

/* (session thread, under mu) A follower's look at what etcd holds (keys
 * and their revisions, linearizable) against the cache: a difference that
 * is still there a turn later means the watch is not delivering (its
 * member cut off from the others, say): what this replica shows is stale. */
static void check_behind(struct etcd_store *es, const struct etcd_kv *keys, uint32_t n)
{
	bool behind = false, was = es->behind;

	for (uint32_t i = 0; i < es->nbehind; i++)
		free(es->need[i].key);
	es->nbehind = 0;
	/* etcd's keys the cache lacks or has older; the cache's keys etcd
	 * lacks (deleted since) */
	for (uint32_t i = 0; i < n; i++) {
		struct cached *c = find(es, keys[i].key);

		if ((!c || c->mod < keys[i].mod_rev) && es->nbehind < ARRAY_SIZE(es->need)) {
			behind |= was_needed(es, keys[i].key, keys[i].mod_rev);
			es->need[es->nbehind++] =
			    (struct need){xstrdup(keys[i].key), keys[i].mod_rev};
		}
	}
	for (uint32_t i = 0; i < es->nkv; i++) {
		bool there = false;

		for (uint32_t k = 0; k < n && !there; k++)
			there = strcmp(keys[k].key, es->kv[i].key) == 0;
		if (!there && es->nbehind < ARRAY_SIZE(es->need)) {
			behind |= was_needed(es, es->kv[i].key, -es->kv[i].mod);
			es->need[es->nbehind++] =
			    (struct need){xstrdup(es->kv[i].key), -es->kv[i].mod};
		}
	}
	for (uint32_t i = 0; i < es->nprev; i++)
		free(es->prev[i].key);
	memcpy(es->prev, es->need, es->nbehind * sizeof(*es->need));
	es->nprev = es->nbehind;
	for (uint32_t i = 0; i < es->nprev; i++)
		es->prev[i].key = xstrdup(es->need[i].key);
	es->behind = behind;
	if (behind && !was)
		snprintf(es->why, sizeof(es->why),
			 "the watch of etcd is behind what etcd holds (a member cut off from the "
			 "others?)");
}

/* (session thread, under mu) The leader key a lost campaign found is the
 * very one this replica created, still bound to its lease: it stepped down
 * only because it could not renew the lease in time, and etcd kept it. It
 * leads again under that epoch (nobody else led meanwhile: the key stayed
 * its own). A key bound to its lease of any other create revision is not
 * its leadership: someone wrote it (or a campaign's answer was lost): -1. */
static int ours_again(struct etcd_store *es, struct json_object *resp, int64_t lease,
		      int64_t *create)
{
	struct etcd_kv *kv;
	uint32_t n = etcd_txn_kvs(resp, 0, &kv);
	bool bound = n && lease && kv[0].lease == lease;
	bool ours = bound && es->again && kv[0].create_rev == (int64_t)es->again;

	*create = n ? kv[0].create_rev : 0;
	if (ours) {
		es->leading = true;
		es->behind = false;
		es->fence = es->again;
		es->epoch = es->again_epoch;
		es->last_ok = now_seconds();
	}
	es->again = es->again_epoch = 0;
	es_kvs_free(kv, n);
	return ours ? 1 : bound ? -1 : 0;
}

/* (under mu) Whether another replica may lead under the leader key of
 * create revision rev, by the registrations in keys (a campaign's read of
 * etcd, keys only) and their values in the cache: one says it does (its
 * registration names that revision), or was last written before that
 * key was created (a replica registers before it campaigns and writes its
 * registration again once it won, so one that won this epoch may not have
 * said so yet), or the cache has not caught up with it. It may still
 * command devices (a put over its key deposes it only once its watch
 * delivers it), so a key of that epoch is not deleted until it says it
 * stopped, or its registration went with its lease. Each replica writes
 * its registration at least every half lease, and a registration's change
 * wakes the session: the wait ends. */
static bool claimed(struct etcd_store *es, int64_t rev, const struct etcd_kv *keys, uint32_t n)
{
	size_t plen = strlen(es->reg_prefix);
	struct store_replica r;

	for (uint32_t i = 0; i < n; i++) {
		const char *key = keys[i].key;

		if (strncmp(key, es->reg_prefix, plen) != 0 || strcmp(key, es->reg_key) == 0)
			continue;
		struct cached *c = find(es, key);
		if (keys[i].mod_rev < rev || !c || c->mod < keys[i].mod_rev)
			return true;
		etcd_reg_parse(key + plen, c->value, &r);
		if (strcmp(r.role, "leader") == 0 && r.revision == (uint64_t)rev)
			return true;
	}
	return false;
}

/* (under mu) The lease of the registration of replica `name`: in keys
 * (n of them, one read of etcd's) or, with keys NULL, in the cache; -1:
 * no such registration. */
static int64_t reg_lease(struct etcd_store *es, const struct etcd_kv *keys, uint32_t n,
			 const char *name)
{
	char *key = xasprintf("%s%s", es->reg_prefix, name);
	int64_t lease = -1;

	if (!keys) {
		struct cached *c = find(es, key);

		lease = c ? c->lease : -1;
	}
	for (uint32_t i = 0; keys && i < n && lease < 0; i++)
		if (strcmp(keys[i].key, key) == 0)
			lease = keys[i].lease;
	free(key);
	return lease;
}

/* (under mu) Why a leader key (its lease and value) is no replica's
 * leadership, into why; false: it may be one. A campaign creates the key
 * bound to the lease its replica registered under (a replica registers
 * before it campaigns, es_reg_turn), so a key bound to no lease, naming
 * no registered replica, or bound to a lease that is not the named
 * replica's was written by someone else: followed, it would leave every
 * replica following nobody for as long as it stays. */
static bool leader_unheld(struct etcd_store *es, int64_t lease, const uint8_t *value,
			  const struct etcd_kv *keys, uint32_t n, char *why, size_t len)
{
	struct json_object *o = value ? json_tokener_parse((const char *)value) : NULL;
	const char *name = etcd_str(o, "name");
	int64_t rl = name && *name ? reg_lease(es, keys, n, name) : -1;
	bool unheld = !lease || !name || !*name || rl != lease;

	if (!lease)
		snprintf(why, len, "bound to no lease");
	else if (!name || !*name)
		snprintf(why, len, "naming no replica");
	else if (rl < 0)
		snprintf(why, len, "naming %.64s, which is no registered replica", name);
	else if (rl != lease)
		snprintf(why, len, "naming %.64s but bound to a lease that is not its", name);
	if (o)
		json_object_put(o); /* (name was its) */
	return unheld;
}

/* (session thread) Delete a leader key no replica leads under, if it is
 * still that key (its create revision and lease): one bound to this
 * replica's lease that it did not win (ours_again's -1: STORE_EV_FORGED),
 * or one no replica holds (leader_unheld: STORE_EV_NO_LEADER). Nobody
 * leads under it (this one never did, the others' writes compare their
 * own lease), and while it stays nobody could campaign. */
static void drop_leader_key(struct etcd_store *es, struct etcd_conn *c, int64_t lease,
			    int64_t create, enum store_event ev)
{
	struct json_object *t = etcd_txn_new(), *resp = NULL;
	struct ofc_error err = {0};
	bool done = false;
	int64_t rev = 0;

	etcd_txn_compare_create(t, es->leader_key, create);
	etcd_txn_compare_lease(t, es->leader_key, lease);
	etcd_txn_delete(t, true, es->leader_key);
	if (etcd_txn(c, t, es->tick > 0.2 ? es->tick : 0.2, &done, &rev, &resp, &err) == 0 &&
	    done) {
		pthread_mutex_lock(&es->mu);
		es->wake = true;
		es_post(es, ev);
		pthread_mutex_unlock(&es->mu);
	}
	json_object_put(t);
	if (resp)
		json_object_put(resp);
}

/* (under mu) What a campaign may wait for its answer. */
static double campaign_timeout(const struct etcd_store *es)
{
	size_t bytes = 0;

	for (uint32_t i = 0; i < es->nkv; i++)
		bytes += es->kv[i].len;
	return etcd_campaign_timeout(es->tick, es->ttl > 0 ? (double)es->ttl : es->ttl_asked,
				     es->loaded, bytes);
}

/* (under mu) The elections won so far, as the cache holds the counter,
 * and the counter's mod revision (0: none yet); a text that is no count
 * counts as none (its mod revision still fences the next campaign). */
static uint64_t elections(struct etcd_store *es, int64_t *mod)
{
	struct cached *c = find(es, es->epoch_key);
	char *end = NULL;
	unsigned long long n = c && c->value ? strtoull((const char *)c->value, &end, 10) : 0;

	*mod = c ? c->mod : 0;
	return end && *end == 0 ? (uint64_t)n : 0;
}

/* (session thread) The campaign's transaction: create the leader key
 * bound to lease, saying epoch, and raise the counter to epoch, if nobody
 * holds the key and the counter is still the one read (its mod revision
 * emod); read the fabric's keys in the same transaction. Failing, read
 * the leader key, the keys' names and the counter. */
static struct json_object *campaign_txn(struct etcd_store *es, int64_t lease, uint64_t epoch,
					int64_t emod)
{
	struct json_object *t = etcd_txn_new();
	struct json_object *v = json_tokener_parse(es->value);
	char n[24];

	json_object_object_add(v, "epoch", json_object_new_int64((int64_t)epoch));
	const char *value = json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN);
	snprintf(n, sizeof(n), "%llu", (unsigned long long)epoch);
	etcd_txn_compare_create(t, es->leader_key, 0);
	etcd_txn_compare_mod(t, es->epoch_key, emod);
	etcd_txn_put(t, true, es->leader_key, value, strlen(value), lease);
	etcd_txn_put(t, true, es->epoch_key, n, strlen(n), 0);
	etcd_txn_range(t, true, es->prefix, es->range_end, false);
	etcd_txn_range(t, false, es->leader_key, NULL, false);
	etcd_txn_range(t, false, es->prefix, es->range_end, true);
	etcd_txn_range(t, false, es->epoch_key, NULL, false);
	json_object_put(v);
	return t;
}

/* (session thread, under mu) A campaign lost with no leader key there: the
 * counter moved since the cache read it (another replica won and is gone
 * already, or the watch is behind). The cache takes etcd's, and the
 * session campaigns again at once. */
static void counter_moved(struct etcd_store *es, struct json_object *resp)
{
	struct etcd_kv *kv;
	uint32_t n = etcd_txn_kvs(resp, 2, &kv);
	struct cached *c = find(es, es->epoch_key);

	if (n && (!c || c->mod < kv[0].mod_rev)) {
		cache_set(es, kv[0].key, kv[0].value, kv[0].len, kv[0].create_rev, kv[0].mod_rev,
			  kv[0].lease);
		kv[0].key = NULL;
		kv[0].value = NULL;
	}
	es->wake = true;
	es_kvs_free(kv, n);
}

/* (session thread) Campaign: create the leader key bound to our lease if
 * nobody holds it, count the election, and read the fabric's keys in the
 * same transaction, so the new leader starts from everything its
 * predecessors wrote (any write of theirs that succeeded came before their
 * key was deleted, hence before this revision). Losing, it learns who
 * leads and what etcd holds. */
static void campaign(struct etcd_store *es, struct etcd_conn *c, int64_t lease)
{
	struct json_object *t, *resp = NULL;
	struct ofc_error err = {0};
	bool won = false;
	int64_t rev = 0, forged = 0, unheld = 0, unheld_lease = 0, emod;
	struct etcd_kv *keys = NULL;
	uint32_t nk = 0;
	int again = 0;
	char bad[160];

	pthread_mutex_lock(&es->mu);
	double timeout = campaign_timeout(es);
	uint64_t epoch = elections(es, &emod) + 1;
	pthread_mutex_unlock(&es->mu);
	t = campaign_txn(es, lease, epoch, emod);
	int rc = etcd_txn(c, t, timeout, &won, &rev, &resp, &err);
	json_object_put(t);
	if (rc == 0 && !won)
		nk = etcd_txn_kvs(resp, 1, &keys);
	pthread_mutex_lock(&es->mu);
	if (rc < 0) {
		snprintf(es->why, sizeof(es->why), "campaign: %.500s", err.msg);
	} else if (!won && !es->resigned && (again = ours_again(es, resp, lease, &forged)) > 0) {
		/* (this replica's key, still bound to its lease: it lapsed here
		 * but not in etcd) */
		es_post(es, STORE_EV_LEADER);
	} else if (won && !es->resigned) {
		struct etcd_kv *kvs;
		uint32_t n = etcd_txn_kvs(resp, 2, &kvs);

		cache_load(es, kvs, n, rev);
		es_kvs_free(kvs, n);
		es->leading = true;
		es->behind = false;
		es->fence = (uint64_t)rev;
		es->epoch = epoch;
		es->again = es->again_epoch = 0;
		es->last_ok = now_seconds();
		es_post(es, STORE_EV_LEADER);
	} else {
		struct etcd_kv *kv;
		uint32_t n = etcd_txn_kvs(resp, 0, &kv);
		struct cached *lk = find(es, es->leader_key);

		/* (before its value moves to the cache) */
		if (n && !again && !es->resigned &&
		    leader_unheld(es, kv[0].lease, kv[0].value, keys, nk, bad, sizeof(bad))) {
			unheld = kv[0].create_rev;
			unheld_lease = kv[0].lease;
			snprintf(es->unheld, sizeof(es->unheld),
				 "the leader key (created at revision %lld) was %.130s",
				 (long long)unheld, bad);
		}
		/* Someone leads: the cache learns who even if the watch has
		 * not said it yet. */
		if (n && (!lk || lk->mod < kv[0].mod_rev)) {
			es_post(es, STORE_EV_HEALTH);
			cache_set(es, kv[0].key, kv[0].value, kv[0].len, kv[0].create_rev,
				  kv[0].mod_rev, kv[0].lease);
			kv[0].key = NULL;
			kv[0].value = NULL;
		}
		if (es->loaded)
			check_behind(es, keys, nk);
		if (!n && !es->resigned)
			counter_moved(es, resp);
		es->last_ok = now_seconds();
		es_kvs_free(kv, n);
	}
	/* (a forged key another replica may lead under: later, once it said
	 * it stopped; its registration's change wakes the session) */
	bool wait = es->forged_wait = (again < 0 && claimed(es, forged, keys, nk)) ||
				      (unheld && claimed(es, unheld, keys, nk));
	pthread_mutex_unlock(&es->mu);
	es_kvs_free(keys, nk);
	if (resp)
		json_object_put(resp);
	if (again < 0 && !wait)
		drop_leader_key(es, c, lease, forged, STORE_EV_FORGED);
	else if (unheld && !wait)
		drop_leader_key(es, c, unheld_lease, unheld, STORE_EV_NO_LEADER);
}

/* (session thread) One turn: a lease if none, else keep it alive; then
 * campaign when nobody leads. */
static void session_turn(struct etcd_store *es, struct etcd_conn *c, double *last_campaign)
{
	struct ofc_error err = {0};
	double t0 = now_seconds(), timeout = es->tick > 0.2 ? es->tick : 0.2;
	int64_t lease, ttl = 0, rev = 0;
	bool resigned;

	pthread_mutex_lock(&es->mu);
	lease = es->lease;
	resigned = es->resigned;
	/* This turn answers a wake that came before it, whether or not etcd
	 * answers: one kept by a turn that failed would make the next start
	 * at once, and a replica that etcd refuses would spin. */
	bool woken = es->wake;

	es->wake = false;
	pthread_mutex_unlock(&es->mu);
	if (resigned)
		return;
	if (!lease) {
		int64_t asked = (int64_t)(es->ttl_asked + 0.999);

		if (etcd_lease_grant(c, asked, timeout, &lease, &err) == 0) {
			pthread_mutex_lock(&es->mu);
			es->lease = lease;
			es->ttl = asked;
			es->valid_until = t0 + (double)asked;
			es->last_ok = now_seconds();
			es_post(es, STORE_EV_HEALTH);
			pthread_mutex_unlock(&es->mu);
		} else {
			pthread_mutex_lock(&es->mu);
			snprintf(es->why, sizeof(es->why), "%s", err.msg);
			pthread_mutex_unlock(&es->mu);
			return;
		}
	} else if (etcd_lease_keepalive(c, lease, timeout, &ttl, &rev, &err) == 0) {
		pthread_mutex_lock(&es->mu);
		es->last_ok = now_seconds();
		if (ttl > 0) {
			es->ttl = ttl > es->ttl ? ttl : es->ttl;
			es->valid_until = t0 + (double)ttl;
		} else {
			/* Expired: paused or cut off for longer than the TTL. */
			es->lease = 0;
			es->valid_until = 0;
			es_depose(es, "the lease expired (this replica was paused or cut off from "
				      "etcd for longer than its TTL)");
			es_post(es, STORE_EV_HEALTH);
		}
		pthread_mutex_unlock(&es->mu);
		if (ttl <= 0)
			return;
	} else {
		pthread_mutex_lock(&es->mu);
		snprintf(es->why, sizeof(es->why), "%s", err.msg);
		/* Past the time the lease surely lasts, it may have expired and
		 * another replica may lead: this one steps down (the fence has
		 * closed a margin before). If etcd kept it after all, the
		 * campaign finds the key ours and leads again. */
		if (es->leading && now_seconds() > es->valid_until) {
			es->again = es->fence;
			es->again_epoch = es->epoch;
			es_depose(es, "this replica could not renew its lease in time (etcd did "
				      "not answer)");
		}
		pthread_mutex_unlock(&es->mu);
		return;
	}
	/* Registered under this lease before it campaigns: a leader key
	 * whose replica's registration is not under the key's lease is no
	 * replica's (leader_unheld). */
	es_reg_turn(es, c);
	/* Campaign when the cache shows no leader, and now and then anyway
	 * (a watch cut off may not have said the key went). */
	pthread_mutex_lock(&es->mu);
	bool go = !es->leading && !es->dup && es->reg_create && es->reg_lease == lease &&
		  (!find(es, es->leader_key) || woken || es->wake ||
		   now_seconds() - *last_campaign > es->ttl_asked);
	es->wake = false;
	pthread_mutex_unlock(&es->mu);
	if (go) {
		*last_campaign = now_seconds();
		campaign(es, c, lease);
	}
	es_reg_turn(es, c);
}

/* (session thread, under mu) Whether what the store shows is current:
 * etcd answered within the lease's time, the watch is open and not
 * behind what etcd holds (check_behind). A watch that closed less than
 * half a lease ago counts as open: the member it streamed from died and
 * the stream is being opened on the next (losing one member of three
 * changes nothing); a stream not back by then is. */
static void check_fresh(struct etcd_store *es)
{
	double now = now_seconds(), limit = es->ttl > 0 ? (double)es->ttl : es->ttl_asked;
	bool watch_ok = es->watching || (es->watch_lost > 0 && now - es->watch_lost < limit / 2);
	bool fresh;

	fresh = es->last_ok > 0 && now - es->last_ok < limit && watch_ok && !es->behind;
	if (fresh == es->fresh)
		return;
	es->fresh = fresh;
	if (!fresh && !es->why[0])
		snprintf(es->why, sizeof(es->why),
			 es->watching ? "the watch of etcd is behind"
				      : "the watch of etcd is closed");
	es_post(es, STORE_EV_HEALTH);
}

/* ---- the session's loop: a turn a tick, the members' health between ---------------- */

#define HEALTH_MIN_S	 0.1  /* the least a health step's timeout is cut to */
#define TURN_SLACK_S	 0.02 /* kept between a health step's end and the next turn */
#define HEALTH_STARVED_S 2.0  /* a round this late may use the lease's slack */

/* (under mu) Wait on the session's condition until t (now_seconds). */
static void cond_wait_until(struct etcd_store *es, double t)
{
	double left = t - now_seconds();
	struct timespec ts;

	if (left <= 0)
		return;
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += (time_t)left;
	ts.tv_nsec += (long)((left - (double)(time_t)left) * 1e9);
	if (ts.tv_nsec >= 1000000000) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000;
	}
	pthread_cond_timedwait(&es->cond, &es->mu, &ts);
}

/* (session thread) Until the next turn is due (until), a wake or a stop:
 * the members' health a step at a time, each started only when its
 * timeout ends before the turn is due (cut to what is left, not below
 * HEALTH_MIN_S), so a slow or dead member never makes a keepalive late.
 * A lease past the time it surely lasts (or none) is kept by no
 * keepalive's punctuality: then one step at its full timeout follows each
 * turn, so the members' health still changes while etcd does not answer
 * the session (its turns take their whole tick). Turns that leave no
 * idle for HEALTH_STARVED_S get one step an idle from the lease's slack. */
static void session_idle(struct etcd_store *es, struct es_health *h, double until)
{
	pthread_mutex_lock(&es->mu);
	bool one = !es->lease || now_seconds() > es->valid_until;

	bool spared = false;

	while (!atomic_load(&es->stop)) {
		double now = now_seconds(), left = until - now - TURN_SLACK_S;
		bool due = es_health_at(h) <= now;
		/* Starved: turns that leave no idle (a loaded machine, a
		 * short lease) would keep the members' health and the other
		 * leases unread for good. One step an idle then takes the
		 * lease's slack instead, a tick and the margin of it kept. */
		double spare = es->valid_until - es->margin - es->tick - now - TURN_SLACK_S;
		bool starved = due && !spared && !one && !es->wake &&
			       es_health_late(h, now) > HEALTH_STARVED_S && spare >= HEALTH_MIN_S;

		if (!(one && due) && !starved && (es->wake || now >= until))
			break;
		if (starved && spare > left) {
			left = spare;
			spared = true;
		}
		if (due) {
			double cost = es_health_cost(h), t = one || cost < left ? cost : left;

			if (one || t >= (cost < HEALTH_MIN_S ? cost : HEALTH_MIN_S)) {
				one = one && cost == 0;
				pthread_mutex_unlock(&es->mu);
				es_health_step(es, h, t);
				fire(es);
				pthread_mutex_lock(&es->mu);
				continue;
			}
		}
		cond_wait_until(es, !due && es_health_at(h) < until ? es_health_at(h) : until);
	}
	pthread_mutex_unlock(&es->mu);
}

static void *session_main(void *arg)
{
	struct etcd_store *es = arg;
	struct etcd_conn *c = etcd_conn_new(es->urls, es->nurls, &es->tls);
	struct es_health *h = es_health_new(es);
	double last_campaign = 0;

	ofc_thread_name("etcd-session");
	while (!atomic_load(&es->stop)) {
		double t0 = now_seconds();

		session_turn(es, c, &last_campaign);
		pthread_mutex_lock(&es->mu);
		check_fresh(es);
		pthread_mutex_unlock(&es->mu);
		fire(es);
		/* the next turn a tick after this one began; the health between */
		session_idle(es, h, t0 + es->tick);
	}
	es_health_free(h);
	etcd_conn_free(c);
	return NULL;
}

/* ---- the watch -------------------------------------------------------------------------- */

static int on_watch(void *ctx, struct json_object *msg)
{
	struct etcd_store *es = ctx;
	struct json_object *r = etcd_obj(msg, "result"), *evs;

	if (!r)
		return -1; /* an error: start again */
	pthread_mutex_lock(&es->mu);
	if (etcd_int(r, "compact_revision") > 0 || etcd_obj(r, "canceled")) {
		es->loaded = false; /* compacted past the cache: read it whole */
		pthread_mutex_unlock(&es->mu);
		return -1;
	}
	es->watching = true;
	int64_t last = 0;
	evs = etcd_obj(r, "events");
	for (size_t i = 0;
	     evs && json_object_is_type(evs, json_type_array) && i < json_object_array_length(evs);
	     i++) {
		struct json_object *ev = json_object_array_get_idx(evs, i);
		const char *type = etcd_str(ev, "type");
		bool del = type && strcmp(type, "DELETE") == 0;
		struct etcd_kv kv;

		if (etcd_kv_parse(etcd_obj(ev, "kv"), &kv) < 0)
			continue;
		/* The cache holds every change up to its revision already (a
		 * stream opened before a campaign's read is behind it). */
		if (kv.mod_rev <= es->rev) {
			etcd_kv_free(&kv);
			continue;
		}
		last = kv.mod_rev;
		bool is_leader = strcmp(kv.key, es->leader_key) == 0;

		if (is_leader) {
			/* Our key gone, another's, or ours bound to another
			 * lease (written over): we lead no more. */
			const char *why = lead_lost(es, del ? 0 : kv.create_rev, kv.lease);
			if (why)
				es_depose(es, why);
			/* (bound to our lease while we follow: the campaign
			 * looks at it now) */
			if ((del || (kv.lease && kv.lease == es->lease)) && !es->leading)
				es->wake = true;
			/* (one no replica holds: the campaign deletes it) */
			char bad[160];
			if (!del && !es->leading &&
			    leader_unheld(es, kv.lease, kv.value, NULL, 0, bad, sizeof(bad)))
				es->wake = true;
			es_post(es, STORE_EV_HEALTH);
		}
		/* (a registration is the replicas' health, not the state; the
		 * outcomes are read at a takeover only: no follower syncs for
		 * them, twice a mutation; the event log is the watchers', not
		 * the state's) */
		bool is_known = strncmp(kv.key, es->known_prefix, strlen(es->known_prefix)) == 0;
		bool is_reg =
		    strncmp(kv.key, es->reg_prefix, strlen(es->reg_prefix)) == 0 || is_known;
		size_t plen = strlen(es->prefix);
		bool ours = strncmp(kv.key, es->prefix, plen) == 0;
		bool is_events = ours && strcmp(kv.key + plen, item_names[STORE_EVENTS]) == 0;
		bool is_sched = ours && strcmp(kv.key + plen, item_names[STORE_SCHEDULE]) == 0;
		bool quiet = is_events || is_sched || strcmp(kv.key, es->epoch_key) == 0 ||
			     (ours && strcmp(kv.key + plen, item_names[STORE_OUTCOMES]) == 0);

		/* (kv's key and value move into the cache: not read after) */
		cache_set(es, kv.key, del ? NULL : kv.value, kv.len, kv.create_rev, kv.mod_rev,
			  kv.lease);
		if (del)
			free(kv.value);
		es->wake |= is_reg && es->forged_wait;
		if (is_known)
			es->serial++; /* (what store_cluster shows) */
		if (is_reg)
			es_post(es, STORE_EV_HEALTH);
		else if (is_events)
			es_post(es, STORE_EV_EVENTS);
		else if (is_sched)
			es_post(es, STORE_EV_SCHEDULE);
		else if (!is_leader && !quiet)
			es_post(es, STORE_EV_CHANGED);
	}
	if (last > es->rev)
		es->rev = last;
	if (es->wake)
		pthread_cond_broadcast(&es->cond);
	pthread_mutex_unlock(&es->mu);
	fire(es);
	return 0;
}

static void *watch_main(void *arg)
{
	struct etcd_store *es = arg;
	struct etcd_conn *c = etcd_conn_new(es->urls, es->nurls, &es->tls);
	double backoff = 0.05;

	ofc_thread_name("etcd-watch");
	while (!atomic_load(&es->stop)) {
		struct ofc_error err = {0};
		bool loaded;
		int64_t from;

		pthread_mutex_lock(&es->mu);
		loaded = es->loaded;
		from = es->rev + 1;
		pthread_mutex_unlock(&es->mu);
		if (!loaded) {
			struct etcd_kv *kvs;
			uint32_t n;
			int64_t rev;

			if (etcd_range(c, es->prefix, es->range_end, es_call_timeout(es), &kvs, &n,
				       &rev, &err) == 0) {
				pthread_mutex_lock(&es->mu);
				cache_load(es, kvs, n, rev);
				pthread_mutex_unlock(&es->mu);
				es_kvs_free(kvs, n);
				fire(es);
				backoff = 0.05;
				continue;
			}
		} else if (etcd_watch(c, es->prefix, es->range_end, from, &es->stop, on_watch, es,
				      &err) == 0) {
			backoff = 0.05;
			continue;
		}
		pthread_mutex_lock(&es->mu);
		if (es->watching) {
			es_post(es, STORE_EV_HEALTH);
			es->watch_lost = now_seconds();
		}
		es->watching = false;
		if (err.msg[0])
			snprintf(es->why, sizeof(es->why), "%s", err.msg);
		pthread_mutex_unlock(&es->mu);
		fire(es);
		/* a member down: the next one at once, then slower */
		for (double t = 0; t < backoff && !atomic_load(&es->stop); t += 0.05)
			usleep(50000);
		backoff = backoff * 2 > 1 ? 1 : backoff * 2;
	}
	etcd_conn_free(c);
	return NULL;
}

/* ---- opening and closing ---------------------------------------------------------------- */

static int es_start(struct store *s, struct ofc_error *err)
{
	struct etcd_store *es = es_of(s);

	if (es->started)
		return 0;
	/* What the leader key says of this replica (after any fork: its pid). */
	struct json_object *v = json_object_new_object();
	char host[256] = "";

	gethostname(host, sizeof(host) - 1);
	json_object_object_add(v, "name", json_object_new_string(es->name));
	if (es->sock)
		json_object_object_add(v, "socket", json_object_new_string(es->sock));
	if (es->url)
		json_object_object_add(v, "url", json_object_new_string(es->url));
	json_object_object_add(v, "host", json_object_new_string(host));
	json_object_object_add(v, "pid", json_object_new_int64((int64_t)getpid()));
	free(es->value);
	es->value = xstrdup(json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN));
	json_object_put(v);
	if (pthread_create(&es->session, NULL, session_main, es) != 0)
		return ofc_error_set(err, OFC_E_RUNTIME, "cannot start the etcd session thread");
	if (pthread_create(&es->watcher, NULL, watch_main, es) != 0) {
		atomic_store(&es->stop, true);
		pthread_join(es->session, NULL);
		return ofc_error_set(err, OFC_E_RUNTIME, "cannot start the etcd watch thread");
	}
	es->started = true;
	return 0;
}

static void es_resign(struct store *s)
{
	struct etcd_store *es = es_of(s);
	struct ofc_error err = {0};
	int64_t lease;

	pthread_mutex_lock(&es->mu);
	es->resigned = true;
	lease = es->lease;
	es->lease = 0;
	es_depose(es, "resigned (stopping)");
	pthread_mutex_unlock(&es->mu);
	/* Revoking the lease deletes the leader key: a follower campaigns at
	 * once instead of waiting for the TTL. */
	if (lease) {
		struct etcd_conn *c = etcd_conn_new(es->urls, es->nurls, &es->tls);

		etcd_lease_revoke(c, lease, 1.0, &err);
		etcd_conn_free(c);
	}
	fire(es);
}

static void es_close(struct store *s)
{
	struct etcd_store *es = es_of(s);

	atomic_store(&es->stop, true);
	pthread_mutex_lock(&es->mu);
	pthread_cond_broadcast(&es->cond);
	pthread_mutex_unlock(&es->mu);
	if (es->started) {
		pthread_join(es->session, NULL);
		pthread_join(es->watcher, NULL);
	}
	etcd_conn_free(es->wconn);
	cache_clear(es);
	for (uint32_t i = 0; i < es->nbehind; i++)
		free(es->need[i].key);
	for (uint32_t i = 0; i < es->nprev; i++)
		free(es->prev[i].key);
	etcd_endpoints_free(es->urls, es->nurls);
	free((char *)es->tls.cacert);
	free((char *)es->tls.cert);
	free((char *)es->tls.key);
	free((char *)es->tls.user);
	if (es->tls.password)
		explicit_bzero((char *)es->tls.password, strlen(es->tls.password));
	free((char *)es->tls.password);
	etcd_tokens_free(es->tls.tokens);
	pthread_mutex_destroy(&es->mu);
	pthread_mutex_destroy(&es->wmu);
	pthread_cond_destroy(&es->cond);
	free(es->fabric);
	free(es->name);
	free(es->sock);
	free(es->url);
	free(es->prefix);
	free(es->range_end);
	free(es->leader_key);
	free(es->epoch_key);
	free(es->reg_prefix);
	free(es->reg_key);
	free(es->contacts);
	free(es->known_prefix);
	free(es->known_key);
	free(es->value);
	free(es);
}

static const struct store_ops etcd_ops = {
    .name = "etcd",
    .noun = "etcd key",
    .get = es_get,
    .write = es_write,
    .where = es_where,
    .aside = es_aside,
    .writer_alive = es_writer_alive,
    .close = es_close,
    .load = es_load,
    .start = es_start,
    .resign = es_resign,
    .cluster = es_cluster,
    .fence = es_fence,
    .epoch = es_epoch,
    .reg = es_register,
    .replica = es_replica,
    .set_contacts = es_set_contacts,
    .leader_contacts = es_leader_contacts,
};

int store_open_etcd(const struct store_etcd_opts *o, struct store **out, struct ofc_error *err)
{
	struct etcd_store *es;
	const char *prefix = o->prefix ? o->prefix : "/ofc/";

	*out = NULL;
	if (etcd_curl(err) < 0)
		return -1;
	if (!etcd_prefix_ok(prefix))
		return ofc_error_set(err, OFC_E_USAGE,
				     "etcd key prefix '%s': printable, no quote, from '/' to '/'",
				     prefix);
	if (!(o->ttl >= 1 && o->ttl <= 3600))
		return ofc_error_set(
		    err, OFC_E_USAGE,
		    "--cluster-ttl: 1 s to 1 h (etcd's leases count whole seconds)");
	if (o->margin < 0 || o->margin >= o->ttl)
		return ofc_error_set(err, OFC_E_USAGE, "the lease's margin must be below its TTL");
	es = xcalloc(1, sizeof(*es));
	es->s.ops = &etcd_ops;
	if (etcd_endpoints_parse(o->endpoints, &es->urls, &es->nurls, err) < 0) {
		free(es);
		return -1;
	}
	bool tls = strncmp(o->endpoints, "etcds://", 8) == 0;

	if (tls && !(o->cacert && o->cert && o->key)) {
		etcd_endpoints_free(es->urls, es->nurls);
		free(es);
		return ofc_error_set(
		    err, OFC_E_USAGE,
		    "--cluster etcds://...: needs --cluster-cacert, --cluster-cert "
		    "and --cluster-key");
	}
	if (!tls && (o->cacert || o->cert || o->key)) {
		etcd_endpoints_free(es->urls, es->nurls);
		free(es);
		return ofc_error_set(err, OFC_E_USAGE,
				     "--cluster-cacert, --cluster-cert and --cluster-key are for "
				     "etcds:// (TLS); --cluster names plain etcd://");
	}
	if (tls) {
		es->tls.cacert = xstrdup(o->cacert);
		es->tls.cert = xstrdup(o->cert);
		es->tls.key = xstrdup(o->key);
		if (o->user && o->password) {
			es->tls.user = xstrdup(o->user);
			es->tls.password = xstrdup(o->password);
			es->tls.tokens = etcd_tokens_new(es->nurls);
		}
	}
	pthread_mutex_init(&es->mu, NULL);
	pthread_mutex_init(&es->wmu, NULL);
	pthread_cond_init(&es->cond, NULL);
	es->fabric = xstrdup(o->fabric);
	es->name = xstrdup(o->name);
	es->sock = o->advertise_socket ? xstrdup(o->advertise_socket) : NULL;
	es->url = o->advertise_url ? xstrdup(o->advertise_url) : NULL;
	es->prefix = xasprintf("%s%s/", prefix, o->fabric);
	es->range_end = xstrdup(es->prefix);
	es->range_end[strlen(es->range_end) - 1]++; /* '/' + 1: every key under the prefix */
	es->leader_key = xasprintf("%sleader", es->prefix);
	es->epoch_key = xasprintf("%sepoch", es->prefix);
	es->reg_prefix = xasprintf("%sreplicas/", es->prefix);
	es->reg_key = xasprintf("%s%s", es->reg_prefix, o->name);
	es->known_prefix = xasprintf("%sknown/", es->prefix);
	es->known_key = xasprintf("%s%s", es->known_prefix, o->name);
	gethostname(es->host, sizeof(es->host) - 1);
	es->started_ms = unix_ms();
	es->ttl_asked = o->ttl;
	es->margin = o->margin > 0 ? o->margin : o->ttl / 4;
	/* Four keepalives a lease: one lost costs a quarter of it. */
	es->tick = o->ttl / 4;
	es->on_event = o->on_event;
	es->ctx = o->ctx;

	es->wconn = etcd_conn_new(es->urls, es->nurls, &es->tls);
	es->part_size = parts_first_size();
	snprintf(es->why, sizeof(es->why), "etcd not asked yet");
	*out = &es->s;
	return 0;
}
