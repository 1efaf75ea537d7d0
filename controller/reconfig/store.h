/* controller/reconfig/store.h — where a fabric's state lives.
 *
 * What ofc keeps between transactions and across a crash, per fabric: the
 * record of the last commit, the journal of a transaction in progress, and
 * ofcd's failures reported at run time and host ports moved to spares. It
 * is read and written only through a struct store, which has two backends
 * behind one ops table (the kernel's pattern, as drivers/ has):
 *
 *   files  the default: STATE_DIR/FABRIC.state, .journal, .failed,
 *          .rewired and .held, each replaced whole by write-temp, fsync, rename
 *          (store_files.c); `ofc` and a single ofcd use it;
 *   etcd   an etcd 3.4 cluster's keys (store_etcd.c): every write is one
 *          transaction that compares the writer's leader key (its create
 *          revision and lease) first, so a replica that lost its
 *          leadership cannot change anything any more.
 *
 * Values are opaque bytes: the record and journal are protobuf messages
 * (journal.c), .failed and .rewired lines of text (controller/ofcd/
 * failures.c), the queue an ofc.v1.MutationQueue (controller/ofcd/
 * queue.c), the held partitions an ofc.v1.HeldPartitions (controller/
 * ofcd/held.c), the event log an ofc.v1.EventLog (controller/ofcd/
 * event_log.c), the leader's state schedule an ofc.v1.StateScheduleAnswer
 * (controller/ofcd/state_schedule_store.c), the host ports its devices
 * lost lines of text (controller/ofcd/failures.c). A store is used by one thread
 * at a time unless its backend says otherwise: etcd's takes reads and
 * writes from any thread (one write at a time). */
#ifndef OFC_CONTROLLER_RECONFIG_STORE_H
#define OFC_CONTROLLER_RECONFIG_STORE_H

#include "util/util.h"

enum store_item {
	STORE_RECORD = 0, /* FABRIC.state: the record of the last commit */
	STORE_JOURNAL,	  /* FABRIC.journal: a transaction in progress */
	STORE_FAILED,	  /* FABRIC.failed: failures reported to ofcd */
	STORE_REWIRED,	  /* FABRIC.rewired: host ports ofcd moved to spares */
	STORE_QUEUE,	  /* the mutations a replicated leader accepted and has not
			   * started (ofcd with an etcd store only; no file) */
	STORE_HELD,	  /* FABRIC.held: the partitions ofcd holds for their owners */
	STORE_OUTCOMES,	  /* the outcomes of a replicated leader's recent keyed
			   * mutations (etcd only; no file) */
	STORE_EVENTS,	  /* the fabric's last events, for every replica's watchers
			   * (etcd only; no file) */
	STORE_SCHEDULE,	  /* the leader's answer for the state's schedule, for the
			   * other replicas to show (etcd only; no file) */
	STORE_LOST,	  /* the host ports the leader found lost with their switch
			   * or alarmed, for the other replicas (etcd only; no file) */
	STORE_DRAINED,	  /* FABRIC.drained: switch ports out of service (ofc drain) */
	STORE_STAGED,	  /* FABRIC.staged: a staged reconfiguration under way
			   * (an ofc.v1.StagedReconfigure) */
	STORE_NITEMS
};

/* One write of a batch: the item's new value, or (data NULL) its removal. */
struct store_write {
	enum store_item item;
	const void *data;
	size_t len;
};

struct store;

/* The files backend on a state directory (borrowed: it must outlive the
 * store). No I/O here. */
struct store *store_open_files(const char *state_dir);
void store_close(struct store *s);

/* The item's value (*data NUL-terminated, caller frees), or *missing when
 * there is none (0, *data NULL). A value over max bytes is an error. When
 * the item's place holds something that is not a value (a FIFO or a
 * directory where a file should be) the error names it ("is not a regular
 * file (a FIFO)") with reason OFC_R_GARBAGE, so callers can say what to
 * do; other read errors carry OFC_R_NONE. Errors are OFC_E_RUNTIME and name
 * the item's place (err->file). */
int store_get(struct store *s, const char *fabric, enum store_item it, size_t max, char **data,
	      size_t *len, bool *missing, struct ofc_error *err);
/* Apply the writes in order: all of them or none where the backend can
 * (etcd: one transaction), else each whole (files: a crash between two
 * leaves the first done; callers order them so that is safe, as the
 * commit writes the record before it removes the journal). */
int store_write(struct store *s, const char *fabric, const struct store_write *w, uint32_t n,
		struct ofc_error *err);

/* Where the item lives, for messages and err->file: its path, or its etcd
 * key. Caller frees. */
char *store_where(const struct store *s, const char *fabric, enum store_item it);
/* What the item is called in messages: "file" or "etcd key". */
const char *store_noun(const struct store *s);
/* The command that sets a damaged item aside so ofc can go on, keeping its
 * bytes (mv 'PATH' 'PATH<suffix>'). Caller frees. */
char *store_aside(const struct store *s, const char *fabric, enum store_item it,
		  const char *suffix);
/* Whether the process that wrote the fabric's journal (pid, epoch: what
 * the journal says of its writer) still holds the fabric: for files, the
 * fabric's lock in the state directory is taken; for etcd, the leader of
 * that epoch still leads. */
bool store_writer_alive(struct store *s, const char *fabric, uint32_t pid, uint64_t epoch);
/* The state directory of a files store, NULL for another backend. */
const char *store_state_dir(const struct store *s);

/* ---- leadership (the etcd backend; a files store always leads) -----------
 * Replicas of ofcd share one etcd store; the one whose lease holds the
 * fabric's leader key (PREFIX/FABRIC/leader) leads, and its epoch counts the
 * elections won (PREFIX/FABRIC/epoch, raised by the campaign that creates
 * the key). Only the leader writes, and every write compares the key's
 * create revision and lease. */

enum store_event {
	STORE_EV_LEADER = 1, /* this replica leads now (store_epoch) */
	STORE_EV_DEPOSED,    /* ... no longer: a write refused, the lease gone */
	STORE_EV_CHANGED,    /* the watch delivered a change of the fabric's keys */
	STORE_EV_HEALTH,     /* what store_cluster shows changed (members, lease, staleness) */
	/* A leader key bound to this replica's lease that it did not win (written
	 * by someone with etcd's credentials) was found and deleted. */
	STORE_EV_FORGED,
	/* A leader key no replica holds (bound to no lease, naming no
	 * registered replica, or bound to a lease not the named replica's) was
	 * found and deleted; store_cluster's unheld says which and why. */
	STORE_EV_NO_LEADER,
	/* The watch delivered the event log (STORE_EVENTS) anew; not a change of
	 * the state (no STORE_EV_CHANGED for it). Last, so that a change of the
	 * state the same watch answer delivered is fired first. */
	STORE_EV_EVENTS,
	/* The watch delivered the leader's state schedule (STORE_SCHEDULE)
	 * anew; not a change of the state either. */
	STORE_EV_SCHEDULE,
};

struct store_etcd_opts {
	const char *endpoints; /* "etcds://HOST:PORT[,...]" (TLS) or "etcd://..." */
	/* etcds:// needs all three (PEM files): the CA that signed the
	 * members' certificates, this replica's certificate and its key. */
	const char *cacert, *cert, *key;
	/* etcd with auth enabled: the user and its password (NULL: none);
	 * etcds:// alone. */
	const char *user, *password;
	const char *fabric; /* the fabric's keys are PREFIX FABRIC/... */
	const char *prefix; /* NULL: "/ofc/" */
	const char *name;   /* this replica's name, unique among the fabric's replicas */
	/* Where clients reach this replica when it leads (ofcd --advertise):
	 * its control socket and its gateway's URL (NULL: none). */
	const char *advertise_socket, *advertise_url;
	double ttl;    /* the lease, seconds (etcd rounds up to whole seconds) */
	double margin; /* device commands stop this long before the lease may end (0: ttl / 4) */
	/* Called from the store's threads (never under its lock): what
	 * happened. The daemon posts a note and returns. */
	void (*on_event)(void *ctx, enum store_event ev);
	void *ctx;
};

/* Parses the options and opens nothing yet (errors: OFC_E_USAGE). */
int store_open_etcd(const struct store_etcd_opts *o, struct store **out, struct ofc_error *err);
/* Read the fabric's keys once (up to timeout seconds), so what follows
 * sees the state before the threads run; an etcd that does not answer is
 * an error the caller may go on after (the threads keep trying). */
int store_load(struct store *s, double timeout, struct ofc_error *err);
/* Register this replica (PREFIX FABRIC/replicas/NAME, bound to its lease:
 * gone when it dies) so that every replica lists the others
 * (store_cluster.replicas), after any fork. Another replica that runs
 * under the same name is refused (OFC_E_USAGE, naming where it runs) once
 * its registration outlives its lease (a dead one's goes then; one on
 * this machine whose pid is gone is replaced at once). An etcd that does
 * not answer within timeout: 0, the session registers later. Files:
 * nothing. */
int store_register(struct store *s, double timeout, struct ofc_error *err);
/* Start the lease, the campaign and the watch (threads: call it after any
 * fork). A files store has nothing to start. */
int store_start(struct store *s, struct ofc_error *err);
/* Stop campaigning and let go of the leadership (the lease revoked, so a
 * follower takes over at once); then the threads end. */
void store_resign(struct store *s);

struct store_member {
	char name[64];
	char url[128];
	bool reachable;	  /* answered a status request lately */
	bool raft_leader; /* etcd's own leader */
};

#define STORE_MAX_MEMBERS 16
/* A replica as its registration says (the fabric's replicas/NAME key). */
struct store_replica {
	char name[64], role[16], socket[256], url[256], host[128];
	uint64_t epoch;	   /* while it leads */
	uint64_t revision; /* ... and its leader key's create revision */
	uint32_t pid;
	uint64_t started_ms, written_ms; /* unix ms: its start, its registration's last write */
	double lease_left;		 /* seconds its lease surely has left (-1: not known) */
};
#define STORE_MAX_REPLICAS 16
struct store_cluster {
	bool clustered; /* false: files, one ofcd */
	bool leading;	/* this replica leads (its lease may be lapsing: see fresh) */
	bool campaigning;
	char name[64]; /* this replica */
	/* The leader as its key says (empty: none now). */
	char leader[64], leader_socket[256], leader_url[256];
	uint64_t epoch;	   /* the leader's: the elections won so far (0: no leader) */
	double lease_ttl;  /* seconds granted */
	double lease_left; /* seconds this replica's lease surely has left (0: none) */
	bool fresh;	   /* etcd answered within the lease's time, and the watch is current */
	char why[560];	   /* when not fresh: what failed */
	char deposed[160]; /* why this replica last stopped leading ("": never) */
	char unheld[200];  /* the last leader key deleted as no replica's, and why */
	double since_ok;   /* seconds since etcd last answered */
	int64_t revision;  /* of what the store shows */
	uint32_t nmembers;
	struct store_member members[STORE_MAX_MEMBERS];
	/* The fabric's replicas as registered, by name, this one too. */
	uint32_t nreplicas;
	struct store_replica replicas[STORE_MAX_REPLICAS];
	/* Every replica that registered once (the registry, PREFIX FABRIC/
	 * known/NAME, no lease): one not among replicas is missing. */
	uint32_t nknown;
	char known[STORE_MAX_REPLICAS][64];
	uint64_t serial; /* changes whenever any of the above changes but lease_left */
};
/* What the store knows of the cluster (any thread). */
void store_cluster(struct store *s, struct store_cluster *out);
/* The time (now_seconds' clock) until which this replica may send device
 * commands: its lease's end as surely known, less the margin; negative
 * when it may send none (not the leader); 0 for a files store (no
 * fence). Any thread. */
double store_fence(struct store *s);
/* This replica's epoch while it leads, else 0 (files: 0). */
uint64_t store_epoch(struct store *s);
/* This replica's name (store_etcd_opts.name), NULL for a files store:
 * the record and the journal say which replica wrote them. */
const char *store_replica(const struct store *s);

/* When a device last answered this replica, as its registration carries
 * it (the leader's: the replica that talks to the devices), so that a
 * follower, which talks to none, shows the leader's contact instead of
 * none. Bounded: STORE_MAX_CONTACTS devices, names as long as a device's. */
struct store_contact {
	char device[64];
	uint64_t unix_ms;
};
#define STORE_MAX_CONTACTS 256
/* This replica's contacts, written with its registration from now on
 * (every half lease); the first STORE_MAX_CONTACTS. Files: nothing. Any
 * thread. */
void store_set_contacts(struct store *s, const struct store_contact *c, uint32_t n);
/* The leading replica's contacts as its registration has them (the
 * registration that says leader with the highest epoch, not this
 * replica's), into out (up to max), its name into by: the count, 0 when
 * there is none (files: always). Any thread. */
uint32_t store_leader_contacts(struct store *s, struct store_contact *out, uint32_t max,
			       char by[64]);

#endif
