/* Private to controller/reconfig/: the on-disk records behind struct ctl (state
 * file and journal), shared by ctl.c, testbed.c and the commands. */
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
	uint64_t started_ms;
	double trial_deadline;
	struct txn_meta meta; /* what the commit records */
	uint32_t ndevs;
	char **names, **drivers;
	struct device_state *before, *target;
};

/* What switch s, and the testbed's hosts, hold when f is at its target
 * (f->circuits), into *target (ctl.c; choose.c prices other targets). */
void ctl_switch_target(const struct fabric *f, uint32_t s, struct device_state *target);
void ctl_hosts_target(const struct fabric *f, struct device_state *target);
/* Every device's target again from c->fabric's circuits, then ctl_diff. */
void ctl_retarget(struct ctl *c);

/* The switches' last reads, indexed by the fabric's switch number (NULL
 * where unread), for fabric_relabel and its kin; caller frees the array. */
const struct device_state **ctl_switch_states(const struct ctl *c);
/* ctl_partition's second half: aim partition p at the circuits pc (p's
 * ports' cross-connects replaced by them, everything else as read). */
int ctl_partition_aim(struct ctl *c, const struct partition *p, const struct circuit *pc,
		      uint32_t npc, struct ofc_error *err);

char *ctl_path(const char *state_dir, const char *fabric, const char *ext);

const char *journal_phase_name(enum journal_phase p);
/* states[i] belongs to c->devs[i]; meta says what they realise. */
int record_write(const struct ctl *c, uint64_t generation, const struct device_state *states,
		 const struct txn_meta *meta, struct ofc_error *err);
/* record_write and the journal removed, in one write of the store (one
 * etcd transaction; files: the record first). */
int record_commit(const struct ctl *c, uint64_t generation, const struct device_state *states,
		  const struct txn_meta *meta, struct ofc_error *err);
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

/* The hosts' state for a set of circuits: links and shortest-path routes. */
void testbed_target(const struct fabric *f, const struct hlink *links, uint32_t nlinks,
		    struct device_state *out);
/* Recording the shaping `testbed up` chose (hosts.c; testbed_links_recorded
 * in reconfig.h reads it). */
int testbed_links_write(const char *state_dir, const char *fabric, const struct testbed_links *l,
			struct ofc_error *err);
/* Circuits the switches hold now, as host links (reads the switches). */
int testbed_current_links(struct ctl *c, struct hlink **links, uint32_t *n, struct ofc_error *err);

#endif
