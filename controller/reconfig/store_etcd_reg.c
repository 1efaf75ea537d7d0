/* The etcd backend's replicas' registrations (PREFIX FABRIC/replicas/NAME,
 * each bound to its replica's lease): written at the start and again by
 * the session, read by every replica to list the others (docs/internals.md,
 * "The store"). */
#include "controller/reconfig/store_etcd.h"

#include <errno.h>
#include <json-c/json.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The leadership a registration says: the epoch and the leader key's
 * create revision (both 0: it follows). */
struct reg_lead {
	uint64_t epoch, fence;
};

/* What this replica's registration says (caller frees). Not under mu. */
static char *reg_value(struct etcd_store *es, bool leading, struct reg_lead l)
{
	struct json_object *v = json_object_new_object(), *dev = NULL;
	char *out;

	pthread_mutex_lock(&es->mu);
	if (es->contacts)
		dev = json_tokener_parse(es->contacts);
	pthread_mutex_unlock(&es->mu);

	json_object_object_add(v, "name", json_object_new_string(es->name));
	json_object_object_add(v, "role", json_object_new_string(leading ? "leader" : "follower"));
	if (es->sock)
		json_object_object_add(v, "socket", json_object_new_string(es->sock));
	if (es->url)
		json_object_object_add(v, "url", json_object_new_string(es->url));
	json_object_object_add(v, "epoch", json_object_new_int64((int64_t)l.epoch));
	json_object_object_add(v, "revision", json_object_new_int64((int64_t)l.fence));
	json_object_object_add(v, "pid", json_object_new_int64((int64_t)getpid()));
	json_object_object_add(v, "host", json_object_new_string(es->host));
	json_object_object_add(v, "started_unix_ms",
			       json_object_new_int64((int64_t)es->started_ms));
	json_object_object_add(v, "written_unix_ms", json_object_new_int64((int64_t)unix_ms()));
	if (dev)
		json_object_object_add(v, "devices", dev);
	out = xstrdup(json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN));
	json_object_put(v);
	return out;
}

/* Write the registration under lease if its key's create revision is
 * still `expect` (0: none there): *won, and *create its create revision;
 * lost, *other is what holds the name (its create revision in *create). */
static int reg_write(struct etcd_store *es, struct etcd_conn *c, int64_t expect, int64_t lease,
		     bool leading, struct reg_lead l, bool *won, int64_t *create,
		     struct store_replica *other, struct ofc_error *err)
{
	struct json_object *t = etcd_txn_new(), *resp = NULL;
	char *v = reg_value(es, leading, l);
	int64_t rev = 0;
	int rc;

	etcd_txn_compare_create(t, es->reg_key, expect);
	etcd_txn_put(t, true, es->reg_key, v, strlen(v), lease);
	etcd_txn_range(t, false, es->reg_key, NULL, false);
	rc = etcd_txn(c, t, es_call_timeout(es), won, &rev, &resp, err);
	json_object_put(t);
	free(v);
	if (rc == 0 && *won) {
		*create = expect ? expect : rev;
	} else if (rc == 0) {
		struct etcd_kv *kv;
		uint32_t n = etcd_txn_kvs(resp, 0, &kv);

		*create = n ? kv[0].create_rev : 0;
		etcd_reg_parse(es->name, n ? kv[0].value : (const uint8_t *)"", other);
		es_kvs_free(kv, n);
	}
	if (resp)
		json_object_put(resp);
	return rc;
}

/* (under mu) This replica's registration is written as it is now. */
static void reg_done(struct etcd_store *es, int64_t create, int64_t lease, bool leading,
		     struct reg_lead l)
{
	es->reg_create = create;
	es->reg_lease = lease;
	es->reg_leading = leading;
	es->reg_epoch = l.epoch;
	es->reg_fence = l.fence;
	es->reg_written = now_seconds();
}

/* Whether the registration that holds the name is this replica's own (its
 * host, process and start): a write etcd applied whose answer was lost (a
 * timeout on a loaded machine, a member that died after the commit).
 * Written again over it, comparing its create revision, it is this
 * replica's; taken for another's, the replica stopped campaigning for good. */
static bool reg_ours(const struct etcd_store *es, const struct store_replica *o)
{
	return o->pid == (uint32_t)getpid() && o->started_ms == es->started_ms &&
	       strcmp(o->host, es->host) == 0;
}

/* The name is another live replica's: the lease taken for it goes back
 * (nothing of this replica stays in etcd), and the error says where that
 * one runs. */
static int reg_refused(struct etcd_store *es, int64_t lease, const struct store_replica *o,
		       struct ofc_error *err)
{
	struct ofc_error e = {0};

	pthread_mutex_lock(&es->wmu);
	etcd_lease_revoke(es->wconn, lease, 1.0, &e);
	pthread_mutex_unlock(&es->wmu);
	pthread_mutex_lock(&es->mu);
	es->lease = 0;
	es->valid_until = 0;
	es->dup = true;
	pthread_mutex_unlock(&es->mu);
	return ofc_error_set(err, OFC_E_USAGE,
			     "--cluster-name %s: a replica of fabric %s runs under that name "
			     "already, on %s (pid %u%s%s): give this one a name of its own",
			     es->name, es->fabric, o->host[0] ? o->host : "an unknown host", o->pid,
			     o->socket[0] ? ", socket " : "", o->socket);
}

/* This replica in the registry of those that should run, as it started
 * last (a failed write is logged by nobody: the next start writes it). */
static void known_write(struct etcd_store *es)
{
	struct json_object *t = etcd_txn_new(), *resp = NULL;
	char *v = reg_value(es, false, (struct reg_lead){0, 0});
	struct ofc_error e = {0};
	bool ok = false;
	int64_t rev = 0;

	etcd_txn_put(t, true, es->known_key, v, strlen(v), 0);
	pthread_mutex_lock(&es->wmu);
	etcd_txn(es->wconn, t, es_call_timeout(es), &ok, &rev, &resp, &e);
	pthread_mutex_unlock(&es->wmu);
	json_object_put(t);
	if (resp)
		json_object_put(resp);
	free(v);
}

int es_register(struct store *s, double timeout, struct ofc_error *err)
{
	struct etcd_store *es = es_of(s);
	struct ofc_error e = {0};
	int64_t lease, asked = (int64_t)(es->ttl_asked + 0.999);
	double t0 = now_seconds(), until = t0 + es->ttl_asked + 1;

	pthread_mutex_lock(&es->wmu);
	int rc = etcd_lease_grant(es->wconn, asked, timeout, &lease, &e);
	pthread_mutex_unlock(&es->wmu);
	if (rc < 0)
		return 0; /* (the session registers once etcd answers) */
	pthread_mutex_lock(&es->mu);
	es->lease = lease;
	es->ttl = asked;
	es->valid_until = t0 + (double)asked;
	pthread_mutex_unlock(&es->mu);
	for (int64_t expect = 0;;) {
		struct store_replica o;
		int64_t create = 0;
		bool won = false;

		pthread_mutex_lock(&es->wmu);
		rc = reg_write(es, es->wconn, expect, lease, false, (struct reg_lead){0, 0}, &won,
			       &create, &o, &e);
		pthread_mutex_unlock(&es->wmu);
		if (rc < 0)
			return 0;
		if (won) {
			pthread_mutex_lock(&es->mu);
			reg_done(es, create, lease, false, (struct reg_lead){0, 0});
			pthread_mutex_unlock(&es->mu);
			known_write(es);
			return 0;
		}
		/* A dead process of this machine's (a kill -9 before a
		 * restart) leaves its registration until its lease ends: this
		 * one takes it at once. Another machine's waits out a lease. */
		expect = 0;
		if (o.pid && strcmp(o.host, es->host) == 0 && o.pid != (uint32_t)getpid() &&
		    kill((pid_t)o.pid, 0) != 0 && errno == ESRCH)
			expect = create;
		else if (now_seconds() > until)
			return reg_refused(es, lease, &o, err);
		else
			usleep(200000);
	}
}

/* (session thread) Write the registration again when the lease, the role
 * or the epoch changed, and every half lease (its written_unix_ms is when
 * it was last heard of). Someone else's under the name since this
 * replica's lease lapsed: it stops campaigning, and says why. */
void es_reg_turn(struct etcd_store *es, struct etcd_conn *c)
{
	struct ofc_error err = {0};
	struct store_replica o;
	int64_t create = 0, expect, lease;
	bool won = false, leading;
	struct reg_lead l;

	pthread_mutex_lock(&es->mu);
	lease = es->lease;
	leading = es->leading;
	l = (struct reg_lead){es->epoch, es->fence};
	expect = es->reg_lease == lease ? es->reg_create : 0;
	bool need =
	    !es->dup && lease &&
	    (es->reg_lease != lease || es->reg_leading != leading || es->reg_epoch != l.epoch ||
	     es->reg_fence != l.fence || now_seconds() - es->reg_written > es->ttl_asked / 2);
	pthread_mutex_unlock(&es->mu);
	if (!need)
		return;
	int rc = reg_write(es, c, expect, lease, leading, l, &won, &create, &o, &err);
	if (rc == 0 && !won && reg_ours(es, &o))
		rc = reg_write(es, c, create, lease, leading, l, &won, &create, &o, &err);
	if (rc < 0)
		return;
	pthread_mutex_lock(&es->mu);
	if (won) {
		reg_done(es, create, lease, leading, l);
	} else {
		char why[sizeof(es->why)];

		es->dup = true;
		snprintf(why, sizeof(why),
			 "another replica registered as %s (on %s, pid %u) while this one was cut "
			 "off: this one no longer campaigns",
			 es->name, o.host, o.pid);
		es_depose(es, why);
		snprintf(es->why, sizeof(es->why), "%s", why);
		es_post(es, STORE_EV_HEALTH);
	}
	pthread_mutex_unlock(&es->mu);
}

/* (under mu) The replicas as their registrations say, into out. */
void es_replicas_of(struct etcd_store *es, struct store_cluster *out, double now)
{
	size_t plen = strlen(es->reg_prefix);

	out->nreplicas = 0;
	for (uint32_t i = 0; i < es->nkv && out->nreplicas < STORE_MAX_REPLICAS; i++) {
		const struct cached *c = &es->kv[i];
		struct store_replica *r = &out->replicas[out->nreplicas];

		if (strncmp(c->key, es->reg_prefix, plen) != 0)
			continue;
		etcd_reg_parse(c->key + plen, c->value, r);
		if (strcmp(c->key, es->reg_key) == 0)
			r->lease_left = out->lease_left;
		/* (surely left: less the time since etcd said it; 0 once that
		 * is over, -1 while etcd was not asked) */
		for (uint32_t k = 0; k < es->nrlease; k++)
			if (es->rlease[k].lease == c->lease && es->rlease[k].left >= 0) {
				r->lease_left = es->rlease[k].left - (now - es->rlease[k].at);
				r->lease_left = r->lease_left > 0 ? r->lease_left : 0;
			}
		out->nreplicas++;
	}
}

/* (under mu) The registry's names, into out. */
void es_known_of(struct etcd_store *es, struct store_cluster *out)
{
	size_t plen = strlen(es->known_prefix);

	out->nknown = 0;
	for (uint32_t i = 0; i < es->nkv && out->nknown < STORE_MAX_REPLICAS; i++)
		if (strncmp(es->kv[i].key, es->known_prefix, plen) == 0)
			snprintf(out->known[out->nknown++], sizeof(out->known[0]), "%s",
				 es->kv[i].key + plen);
}

/* The other replicas' leases, as their registrations in the cache are
 * bound (the session asks etcd how long each has, a step at a time). */
uint32_t es_replica_leases(struct etcd_store *es, int64_t *leases)
{
	uint32_t n = 0;
	size_t plen = strlen(es->reg_prefix);

	pthread_mutex_lock(&es->mu);
	for (uint32_t i = 0; i < es->nkv && n < STORE_MAX_REPLICAS; i++)
		if (strncmp(es->kv[i].key, es->reg_prefix, plen) == 0 && es->kv[i].lease &&
		    strcmp(es->kv[i].key, es->reg_key) != 0)
			leases[n++] = es->kv[i].lease;
	pthread_mutex_unlock(&es->mu);
	return n;
}

/* ---- devices' last contacts, carried by the registrations ------------------------------ */

void es_set_contacts(struct store *s, const struct store_contact *c, uint32_t n)
{
	struct etcd_store *es = es_of(s);
	struct json_object *o = json_object_new_object();

	for (uint32_t i = 0; i < n && i < STORE_MAX_CONTACTS; i++)
		if (c[i].unix_ms)
			json_object_object_add(o, c[i].device,
					       json_object_new_int64((int64_t)c[i].unix_ms));
	char *text = xstrdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
	json_object_put(o);
	pthread_mutex_lock(&es->mu);
	free(es->contacts);
	es->contacts = text;
	pthread_mutex_unlock(&es->mu);
}

uint32_t es_leader_contacts(struct store *s, struct store_contact *out, uint32_t max, char by[64])
{
	struct etcd_store *es = es_of(s);
	size_t plen = strlen(es->reg_prefix);
	struct json_object *best = NULL;
	int64_t best_epoch = 0;
	uint32_t n = 0;

	by[0] = 0;
	pthread_mutex_lock(&es->mu);
	for (uint32_t i = 0; i < es->nkv; i++) {
		const struct cached *c = &es->kv[i];
		struct json_object *o, *dev;
		const char *role;

		if (strncmp(c->key, es->reg_prefix, plen) != 0 ||
		    strcmp(c->key, es->reg_key) == 0 ||
		    !(o = json_tokener_parse((const char *)c->value)))
			continue;
		role = etcd_str(o, "role");
		if (role && strcmp(role, "leader") == 0 &&
		    json_object_object_get_ex(o, "devices", &dev) &&
		    json_object_is_type(dev, json_type_object) &&
		    etcd_int(o, "epoch") > best_epoch) {
			if (best)
				json_object_put(best);
			best = o;
			best_epoch = etcd_int(o, "epoch");
			snprintf(by, 64, "%s", c->key + plen);
		} else {
			json_object_put(o);
		}
	}
	pthread_mutex_unlock(&es->mu);
	if (!best)
		return 0;
	struct json_object *dev;
	json_object_object_get_ex(best, "devices", &dev);
	json_object_object_foreach(dev, name, val)
	{
		if (n >= max || n >= STORE_MAX_CONTACTS)
			break;
		if (!json_object_is_type(val, json_type_int) || json_object_get_int64(val) <= 0)
			continue;
		snprintf(out[n].device, sizeof(out[n].device), "%s", name);
		out[n++].unix_ms = (uint64_t)json_object_get_int64(val);
	}
	json_object_put(best);
	return n;
}
