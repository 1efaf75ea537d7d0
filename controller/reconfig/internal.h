/* Private to controller/reconfig/: the on-disk records behind struct ctl (state
 * file and journal), shared by ctl.c and the commands. */
#ifndef OFC_CONTROLLER_RECONFIG_INTERNAL_H
#define OFC_CONTROLLER_RECONFIG_INTERNAL_H

#include "controller/reconfig/reconfig.h"
#include "controller/reconfig/store.h"

/* A store's backend (store.h): its functions, as drivers have theirs. */
struct store_ops {
	const char *name; /* "files", "etcd" */
	const char *noun; /* what an item is called in messages: "file" */
	int (*get)(struct store *s, const char *fabric, enum store_item it, size_t max, char **data,
		   size_t *len, bool *missing, struct ofc_error *err);
	int (*write)(struct store *s, const char *fabric, const struct store_write *w, uint32_t n,
		     struct ofc_error *err);
	char *(*where)(const struct store *s, const char *fabric, enum store_item it);
	char *(*aside)(const struct store *s, const char *fabric, enum store_item it,
		       const char *suffix);
	bool (*writer_alive)(struct store *s, const char *fabric, uint32_t pid, uint64_t epoch);
	const char *(*state_dir)(const struct store *s); /* NULL: none */
	void (*close)(struct store *s);
	/* The leadership's (NULL for files: it always leads, unfenced). */
	int (*load)(struct store *s, double timeout, struct ofc_error *err);
	int (*start)(struct store *s, struct ofc_error *err);
	void (*resign)(struct store *s);
	void (*cluster)(struct store *s, struct store_cluster *out);
	double (*fence)(struct store *s);
	uint64_t (*epoch)(struct store *s);
	int (*reg)(struct store *s, double timeout, struct ofc_error *err);
	const char *(*replica)(const struct store *s);
	void (*set_contacts)(struct store *s, const struct store_contact *c, uint32_t n);
	uint32_t (*leader_contacts)(struct store *s, struct store_contact *out, uint32_t max,
				    char by[64]);
};

/* Every backend's store begins with this. */
struct store {
	const struct store_ops *ops;
};

/* Values match ofc.v1.Journal.Phase. */
enum journal_phase {
	JOURNAL_APPLYING = 1,
	JOURNAL_ROLLING_BACK = 2,
	JOURNAL_TRIAL = 3,
	JOURNAL_COMMITTING = 4,
};

/* The versions of the state directory's messages (their `version`
 * fields): 2 since the journal carries everything its commit records and
 * the record its moved ports. A journal of an older version may be undone,
 * never committed: what it lacks would be guessed from the repairing
 * command's config. */
#define STATE_VERSION 2

struct journal {
	uint64_t id;
	enum journal_phase phase;
	uint32_t version; /* 1: an older ofc's (no field) */
	uint32_t pid;
	uint64_t epoch; /* the writer's leadership (an etcd store's); 0: none */
	char *replica;	/* ... its replica's name (NULL: none) */
	uint64_t started_ms;
	double trial_deadline;
	struct txn_meta meta; /* what the commit records */
	/* what the commit writes beside the record (ctl.commit_also; item
	 * STORE_HELD, data owned), kept for a repair; data NULL: nothing */
	struct store_write also;
	uint32_t ndevs;
	char **names, **drivers;
	struct device_state *before, *target;
};

/* What switch s, and the testbed's hosts, hold when f is at its target
 * (f->circuits), into *target (ctl.c; choose.c prices other targets). */
void ctl_switch_target(const struct fabric *f, uint32_t s, struct device_state *target);
void ctl_hosts_target(const struct fabric *f, const char *state_dir, struct device_state *target);
/* Every device's target again from c->fabric's circuits, then ctl_diff. */
void ctl_retarget(struct ctl *c);

/* ctl_partition's second half: aim partition p at the circuits pc (p's
 * ports' cross-connects replaced by them, everything else as read). */
int ctl_partition_aim(struct ctl *c, const struct partition *p, const struct circuit *pc,
		      uint32_t npc, struct ofc_error *err);

char *ctl_path(const char *state_dir, const char *fabric, const char *ext);
/* c's lock released (ctl_lock.c), if it holds it. */
void ctl_unlock(struct ctl *c);

/* drive.c: fn(c, i, arg) for every device i at once, one thread each (at
 * most 64), returning when all have; fn touches devs[i] alone. Events
 * raised meanwhile (ctl_queue_event) reach opts.on_event afterwards, on
 * the calling thread, in device order. */
void ctl_each(struct ctl *c, void (*fn)(struct ctl *c, uint32_t i, void *arg), void *arg);
/* During ctl_each: queue ev (copied) as device cd's and return true;
 * outside one: false (the caller tells it now). */
bool ctl_queue_event(struct ctl *c, const struct ctl_device *cd, const struct ctl_event *ev);

/* etcd.c: etcd 3.4's v3 JSON gateway over libcurl and json-c.
 * A struct etcd_conn is one thread's: it calls the endpoint that answered
 * last and goes round the others within the call's time. Keys are C
 * strings, values bytes; etcd_kv's are owned (etcd_kv_free). */
struct json_object;
struct etcd_conn;
struct etcd_kv {
	char *key;
	size_t klen;
	uint8_t *value; /* NUL-terminated */
	size_t len;
	int64_t create_rev, mod_rev, lease;
};
/* libcurl loaded (dlopen, once): 0, or why not. */
int etcd_curl(struct ofc_error *err);
/* "etcd://HOST:PORT[,...]" into "http://HOST:PORT" urls (OFC_E_USAGE). */
int etcd_endpoints_parse(const char *spec, char ***urls, uint32_t *n, struct ofc_error *err);
void etcd_endpoints_free(char **urls, uint32_t n);
/* A prefix of keys for etcd: printable, no quote, from '/' to '/'. */
bool etcd_prefix_ok(const char *p);
/* TLS to etcd (etcds://): the CA that signed the members' certificates,
 * and this client's certificate and key, PEM files (the key's path is
 * given to libcurl, its contents never read here). All three, or NULL
 * for plain http. */
struct etcd_tls {
	const char *cacert, *cert, *key;
	/* etcd's RBAC (auth enabled): the user and its password, sent to
	 * /v3/auth/authenticate for a token each member is then asked with
	 * (a simple token is one member's alone). NULL: no auth. The
	 * password is never part of a message. */
	const char *user, *password;
	/* The members' tokens, shared by every connection given the same
	 * (one per thread of a store): a token costs its member a bcrypt of
	 * the password, seconds on a loaded machine, so one thread's serves
	 * the others. NULL: the connection keeps its own. */
	struct etcd_tokens *tokens;
};
/* n members' tokens behind a lock (etcd_tokens_free after every
 * connection that shares them). */
struct etcd_tokens *etcd_tokens_new(uint32_t n);
void etcd_tokens_free(struct etcd_tokens *t);
struct etcd_conn *etcd_conn_new(char *const *urls, uint32_t n, const struct etcd_tls *tls);
void etcd_conn_free(struct etcd_conn *c);
const char *etcd_conn_url(const struct etcd_conn *c);
/* POST body to PATH within timeout seconds in all; *resp (json_object_put
 * it) on HTTP 200. An etcd error about the request is OFC_R_REFUSED with
 * etcd's words; no member answering is OFC_R_LOST with each one's. */
int etcd_call(struct etcd_conn *c, const char *path, struct json_object *body, double timeout,
	      struct json_object **resp, struct ofc_error *err);
int etcd_lease_grant(struct etcd_conn *c, int64_t ttl, double timeout, int64_t *id,
		     struct ofc_error *err);
/* *ttl 0: the lease is gone. *revision: etcd's current revision. */
int etcd_lease_keepalive(struct etcd_conn *c, int64_t id, double timeout, int64_t *ttl,
			 int64_t *revision, struct ofc_error *err);
int etcd_lease_revoke(struct etcd_conn *c, int64_t id, double timeout, struct ofc_error *err);
/* The seconds lease id has left (*ttl -1: expired or unknown). */
int etcd_lease_ttl(struct etcd_conn *c, int64_t id, double timeout, int64_t *ttl,
		   struct ofc_error *err);
/* [key, range_end) (range_end NULL: the key alone), linearizable. */
int etcd_range(struct etcd_conn *c, const char *key, const char *range_end, double timeout,
	       struct etcd_kv **kvs, uint32_t *n, int64_t *revision, struct ofc_error *err);
/* A transaction: built with the helpers, run by etcd_txn (the first kv a
 * range in the branch taken found, when range_kv). */
struct json_object *etcd_txn_new(void);
void etcd_txn_compare_create(struct json_object *t, const char *key, int64_t create_rev);
/* The key was last written at mod_rev (0: it is not there). */
void etcd_txn_compare_mod(struct json_object *t, const char *key, int64_t mod_rev);
/* The key is bound to lease (0: to none). */
void etcd_txn_compare_lease(struct json_object *t, const char *key, int64_t lease);
void etcd_txn_put(struct json_object *t, bool success, const char *key, const void *value,
		  size_t len, int64_t lease);
void etcd_txn_delete(struct json_object *t, bool success, const char *key);
/* Every key from key up to range_end (excluded). */
void etcd_txn_delete_range(struct json_object *t, bool success, const char *key,
			   const char *range_end);
void etcd_txn_range(struct json_object *t, bool success, const char *key, const char *range_end,
		    bool keys_only);
int etcd_txn(struct etcd_conn *c, struct json_object *t, double timeout, bool *succeeded,
	     int64_t *revision, struct json_object **resp, struct ofc_error *err);
/* The kvs of the i-th answer of a transaction's branch (a range's). */
uint32_t etcd_txn_kvs(struct json_object *resp, uint32_t i, struct etcd_kv **kvs);
/* What a campaign (store_etcd.c) waits for its answer, which carries the
 * fabric's keys: tick (at least 0.2 s) and a second more for each 4 MB of
 * them (bytes, when loaded: the cache holds them; else as much as may be),
 * within half the lease's TTL. */
double etcd_campaign_timeout(double tick, double ttl, bool loaded, size_t bytes);
/* Member i alone: its id and the raft leader it knows (0: none). */
int etcd_member_status(struct etcd_conn *c, uint32_t i, double timeout, uint64_t *member,
		       uint64_t *leader, struct ofc_error *err);
/* Names of the members by id (their name, else their first client URL). */
int etcd_member_names(struct etcd_conn *c, double timeout, uint64_t *ids, char (*names)[64],
		      char (*urls)[128], uint32_t max, uint32_t *n, struct ofc_error *err);
/* Watch [key, range_end) from start_rev until *stop or the stream ends
 * (-1 with why); each message goes to on_msg (a negative return ends the
 * watch, 0 returned). */
int etcd_watch(struct etcd_conn *c, const char *key, const char *range_end, int64_t start_rev,
	       const _Atomic bool *stop, int (*on_msg)(void *ctx, struct json_object *msg),
	       void *ctx, struct ofc_error *err);
/* json-c helpers for the gateway's JSON. */
const char *etcd_str(struct json_object *o, const char *key);
int64_t etcd_int(struct json_object *o, const char *key);
struct json_object *etcd_obj(struct json_object *o, const char *key);
int etcd_kv_parse(struct json_object *o, struct etcd_kv *kv);
void etcd_kv_free(struct etcd_kv *kv);
/* A replica's registration (store_etcd.c: a JSON object) into r, name
 * from its key when it says none. */
void etcd_reg_parse(const char *name, const uint8_t *value, struct store_replica *r);

/* store_parts.c: a value over one etcd request, as parts under keys of
 * their own and a head naming them (the why and the crash-safety there).
 * The fence every part's transaction compares, as the item's write does. */
struct parts_fence {
	const char *leader_key;
	uint64_t epoch;
	int64_t lease;
	double timeout;
};
size_t parts_first_size(void);
uint64_t parts_sum(const void *data, size_t len);
/* KEY/part/GEN/NNNN (caller frees). */
char *parts_key(const char *key, const char *gen, uint32_t i);
/* The store's write: the values too large for one request as parts
 * (parts_split), then one transaction fenced by f that writes the heads
 * and the other values and prunes the items' other parts; *ok, *rev and
 * *resp (caller frees) as etcd_txn's. */
int parts_write(struct etcd_conn *c, const struct parts_fence *f, char *const *keys,
		const struct store_write *w, uint32_t n, size_t *part_size, bool *ok, int64_t *rev,
		struct json_object **resp, struct ofc_error *err);
bool parts_is_head(const uint8_t *v, size_t len);
/* A part's bytes by its key (NULL: none), borrowed. */
typedef const uint8_t *parts_lookup(void *ctx, const char *key, size_t *len);
/* The value a head names, reassembled and checked (*data NUL-terminated,
 * caller frees); a missing or damaged part is OFC_R_GARBAGE naming it. */
int parts_join(const char *key, const uint8_t *head, size_t hlen, parts_lookup *look, void *ctx,
	       size_t max, char **data, size_t *len, struct ofc_error *err);
const char *journal_phase_name(enum journal_phase p);
/* states[i] belongs to c->devs[i]; meta says what they realise. */
int record_write(const struct ctl *c, uint64_t generation, const struct device_state *states,
		 const struct txn_meta *meta, struct ofc_error *err);
/* record_write and the journal removed, in one write of the store (one
 * etcd transaction; files: the record first), with `also` (NULL or no
 * data: nothing) written before them (ctl.commit_also). */
int record_commit(const struct ctl *c, uint64_t generation, const struct device_state *states,
		  const struct txn_meta *meta, const struct store_write *also,
		  struct ofc_error *err);
int journal_write(const struct ctl *c, const struct journal *j, struct ofc_error *err);
/* *missing when there is no journal (returns 0). */
int journal_read(struct store *st, const char *fabric, struct journal *j, bool *missing,
		 struct ofc_error *err);
int journal_remove(const struct ctl *c, struct ofc_error *err);
/* The readers' halves that take bytes (path names the file in errors):
 * journal_read and ctl_load_record call them; so does the fuzzer. A
 * message that does not parse, arrays of the wrong length, a device twice,
 * entries twice or ports below 1 are "corrupt file" errors that say how to
 * move the file aside. record_parse fills the state part of r only. */
int journal_parse(const char *path, const uint8_t *data, size_t len, struct journal *j,
		  struct ofc_error *err);
int record_parse(const char *path, const char *fabric, const uint8_t *data, size_t len,
		 struct ctl_record *r, struct ofc_error *err);
void journal_free(struct journal *j);

/* Frees candidate k's target (its graph, ports, circuits; choice.c). */
void ctl_candidate_free(struct ctl_candidate *k);

#endif
