/* Private to ofcd's loop thread: its state (struct ofcd_loop, which
 * struct ofcd holds as d->loop), a connection, the request being
 * answered, what the requests' files (requests.c, read_requests.c,
 * mutation_requests.c) call of the connections' and the queue's, and what
 * the loop's files (server.c, conn_io.c, connections.c, events.c,
 * job_queue.c, cluster.c) call of each other. No other thread touches
 * d->loop: the workers get what they need in their jobs and answer with
 * notes (internal.h). A file that includes this header does not include
 * worker.h (scripts/check-layers.py). The connections call the requests
 * only through d->loop->chain. */
#ifndef OFC_CONTROLLER_OFCD_CONN_H
#define OFC_CONTROLLER_OFCD_CONN_H

#include "controller/ofcd/internal.h"
#include "controller/ofcd/loop.h"

/* outcomes.c: a keyed mutation's outcome, oldest first in the table. */
#define OUTCOMES_MAX	    256		      /* entries kept ... */
#define OUTCOMES_MAX_AGE_MS (10u * 60 * 1000) /* ... none older than this */
#define OUTCOME_KEY_MAX	    128		      /* Request.request_key's length */
struct outcome {
	char *key, *owner;	       /* the client's key; uid:N or gateway:IDENTITY */
	char *kind, *target, *replica; /* what it was, where it ran */
	uint64_t ticket, epoch, gen_before, time_ms;
	bool done;	   /* else started, no answer yet */
	uint8_t *response; /* done: the packed Response, no id (NULL: not kept) */
	size_t response_len;
};
struct outcomes {
	struct outcome *v;
	uint32_t n;
};

/* The request chain as the connections call it: a frame read, and a
 * decoded request (a takeover's replay of the last leader's queue). Set
 * at ofcd_open, so that the connections' code calls up into the
 * requests' without a circle between their files. */
struct ofcd_chain {
	int (*frame)(struct conn *c, const uint8_t *p, uint32_t len);
	void (*request)(struct conn *c, const Ofc__V1__Request *req, const uint8_t *raw,
			size_t len);
};

/* metrics.c: the loop thread's counters and histograms. */
#define METRICS_BUCKETS 10
struct metrics_hist {
	uint64_t bucket[METRICS_BUCKETS]; /* cumulative, as Prometheus counts them */
	uint64_t count;
	double sum;
};
struct metrics {
	uint64_t txn_committed, txn_rolled_back, txn_failed;
	struct metrics_hist txn_seconds;
	uint64_t replans;
	struct metrics_hist replan_seconds;
	uint64_t schedules[2]; /* answered OK, with an error */
	struct metrics_hist schedule_seconds;
	uint64_t denied, devices_lost;
	uint64_t host_link_flaps;      /* up -> down of hosts' reported links */
	uint64_t received[API_NKINDS]; /* requests decoded, by the request table's kind */
};

/* What one user's connections hold: how many, and the bytes of their
 * buffers (requests being received, replies not yet read). Limited by
 * max_clients_per_uid and max_buffer_per_uid, so one local user cannot
 * take every connection or the daemon's memory. */
struct uid_use {
	struct uid_use *next;
	uid_t uid;
	uint32_t conns;
	size_t bytes;
};

/* Log lines a client can cause (connections, refusals, bad frames) go
 * through a token bucket: LOG_BURST at once, LOG_RATE a second after
 * that; what is dropped is counted and reported as "N log messages
 * suppressed" once lines flow again. What the daemon itself does
 * (transactions, reloads, devices) is always logged. */
#define LOG_RATE  20.0
#define LOG_BURST 200.0
struct log_limit {
	double tokens, last;
	uint64_t suppressed;
};

/* The loop thread's own (before ofcd_run, the opening thread's): the
 * sockets and connections, the published snapshot and config, the
 * mutation queue and what runs, the planner's hold, the replica's view.
 * No other thread touches them: the workers get what they need in their
 * jobs and answer with notes. */
/* What a host's agent reported last (host_links.c): per port the link's
 * damping and its LLDP neighbour, the wiring check's input. */
struct port_seen {
	struct link_damp damp;
	char *neighbour; /* "HOST:PORT" heard by LLDP; NULL: none */
	/* monotonic: lldpd heard it again after this time (the report's time
	 * less the neighbour's time to live, which an entry not heard again
	 * outlives by no more, and a second for the report's way; without a
	 * time to live, the report's time) */
	int64_t heard_ms;
	bool reported;
	bool miswired_said; /* its difference from the record is in the log */
	int64_t moved_ms;   /* monotonic, when a published state last changed its circuits */
	bool moving_down;   /* last reported down while its circuits moved: not taken */
};
struct host_seen {
	char *name;
	int64_t reported_ms; /* monotonic, of the last report */
	bool lldp_running;
	char *lldp_error; /* the agent's word when lldpd did not answer */
	struct port_seen *ports;
	uint32_t nports; /* the host's ports in the config of the last report */
};
void host_links_free(struct ofcd *d);
/* A new state published: the ports of reported hosts whose circuits it
 * changed are marked moving (a port down for the hold-down after is the
 * move's, not a failure). */
void host_links_moved(struct ofcd *d, const Ofc__V1__State *old, const Ofc__V1__State *now);
/* The record's circuits by what their ends' hosts hear (wiring.c):
 * confirmed (the end hears the circuit's source), miswired (another),
 * dark (nothing: the port absent, or no LLDP heard) or not seen (its host
 * has not reported, or its lldpd does not answer); *age_s the oldest
 * report's age (-1: none). */
enum wiring_verdict {
	WIRING_CONFIRMED,
	WIRING_MISWIRED,
	WIRING_DARK,
	WIRING_NOT_SEEN,
	WIRING_NVERDICTS
};
void host_links_wiring(const struct ofcd *d, uint32_t counts[WIRING_NVERDICTS], double *age_s);
/* (wiring.c) The record's circuit arriving at host:port ("SRC:P" in buf),
 * or with dst leaving it ("DST:Q"); NULL: none (dark). */
const char *wiring_record_end(const struct ofcd *d, const char *host, uint32_t port, bool dst,
			      char *buf, size_t n);
int64_t wiring_now_ms(void);				/* the reports' clock: monotonic ms */
const char *wiring_verdict_word(enum wiring_verdict v); /* "confirmed", ..., "not-seen" */
/* (wiring.c) here hears heard where the record gives exp (NULL: none), in
 * words: "h0:0 reaches h3:0 where the record's circuits give h1:0 (and
 * h3:0 should hear h2:0)". */
void wiring_difference(const struct ofcd *d, const char *here, const char *heard, const char *exp,
		       char *buf, size_t n);
/* (wiring.c) State.wiring now: every circuit's verdict, in arena a. */
Ofc__V1__Wiring *wiring_msg(const struct ofcd *d, struct arena *a);
/* (wiring.c) The verdict on the circuit from src ("HOST:PORT") to port
 * of the host whose last report h is (NULL: none). */
enum wiring_verdict wiring_port_verdict(const struct host_seen *h, const char *src, uint32_t port);

/* wiring_verify.c: a commit waiting for the hosts' LLDP to confirm the
 * circuits it changed (Reconfigure and ApplyConfig's verify_wiring_ms).
 * The mutation queue waits with it: nothing else changes the circuits
 * while they are checked, or while a miswired commit is rolled back. */
#define VERIFY_WIRING_MAX_MS (600u * 1000)
struct wiring_wait;
struct request;
/* A request's verify_wiring_ms into j (has: given): 0, or -1 answered
 * (out of bounds, with what it cannot check, or no host's agent reports:
 * nothing to verify against). */
int wiring_verify_ask(const struct request *rq, bool has, uint32_t ms, struct job *j);
/* j back from the worker, before ofcd_job_done: a mutation that committed
 * with verify_wiring_ms and changed circuits is settled (published, its
 * events) and kept, still d->loop->running, its answer held until they
 * are confirmed or it is rolled back; a verification's rollback is
 * settled, the commit's client answered, j freed and the queue goes on.
 * true: taken (the caller lets j be); false: ofcd_job_done's. */
bool wiring_verify_took(struct ofcd *d, struct job *j);
/* A host's report taken (h its record): the circuits waiting for it. */
void wiring_verify_report(struct ofcd *d, const struct host_seen *h);
void wiring_verify_free(struct ofcd *d); /* ofcd_close */
/* (job_queue.c) A mutation back from the worker: its state published, its
 * events and log line (settle); then its answer, j->reply (answer). */
void mutation_settle(struct ofcd *d, struct job *j);
void mutation_answer(struct ofcd *d, struct job *j);

struct ofcd_loop {
	struct loop *ev; /* the event loop (loop.h) */
	int listen_fd, ro_fd;
	bool bound_main, bound_ro; /* the socket files are ours to remove */
	int gw_fd;		   /* the gateway socket, -1: none */
	bool bound_gw;
	int sig_fd; /* signalfd with opts.signals, else -1 */
	struct ofcd_chain chain;
	struct conn **conns;
	size_t nconns, cap_conns;
	uint64_t next_conn_id;
	struct snapshot *snap;
	struct fabcfg *cfg; /* the running config, for schedules */
	uint64_t version;   /* of what GetState shows; the cache is keyed by it */
	struct {
		uint8_t *buf;
		size_t len;
		uint64_t version, seq, log; /* seq, log: where in the event log it stands */
		bool valid;
	} cache[16]; /* by GetState's options, and whether the asker reads only */
	struct job *queue, *queue_tail; /* mutations waiting, in order */
	struct job *ev_job;		/* a job taken out of the queue, while its event goes out */
	struct stream **streams;	/* streamed GetSchedules running */
	/* ... their callers (the loop's: NULL for root's and admins') */
	char **stream_who;
	uint32_t nstreams;
	size_t cap_streams, cap_stream_who;
	uint64_t streams_refused[2]; /* by PUBLIC_STREAMS, STREAMS_PER_CALLER */
	/* by the tenants' share together, the tenant's own (mutation_requests.c) */
	uint64_t mutations_refused[2];
	uint32_t nqueue;
	struct job *running; /* on the mutation worker */
	uint64_t running_txn;
	const char *running_state;
	uint32_t sched_pending; /* schedule jobs handed out */
	/* ... of each public caller (job.principal), SCHEDULES_PER_CALLER at
	 * most (job_queue.c, sched_caller) */
	struct sched_caller {
		char *who;
		uint32_t n;
	} * sched_callers;
	uint32_t nsched_callers;
	size_t cap_sched_callers;
	uint64_t next_ticket;
	bool stopping;
	double drain_deadline;
	uint64_t sweep_timer, probe_timer, drain_timer;
	/* A device's news waits for a probe (news_probe): when nothing else
	 * runs, and NEWS_GAP after the last one it caused. */
	bool news_pending;
	double news_probe_at;
	uint64_t news_timer;
	uint64_t requests, errors; /* answered; answered with an error */
	struct uid_use *uids;
	/* accept() failed for want of descriptors (EMFILE, ENFILE): the
	 * listeners rest for accept_backoff_ms, doubling up to a second,
	 * instead of the loop spinning on a listener it cannot serve. */
	uint64_t accept_timer;
	int64_t accept_backoff_ms;
	uint64_t accept_refusals; /* pauses since the last line about them */
	double accept_logged;	  /* when the last line about it was */
	bool accept_told;	  /* this episode was logged: log its end */
	struct log_limit peer_log;
	struct metrics metrics;
	struct host_seen *hosts_seen; /* hosts' agents' reports (host_links.c) */
	uint32_t nhosts_seen;
	struct wiring_wait *verify; /* a commit's wiring being verified (NULL: none) */
	/* The planner computing the workload's schedule of cfg (planner.c), or
	 * NULL; mutations wait for it until planner_hold_until (unix seconds,
	 * 0: not holding). planner_job: its result, to run before the queue. */
	struct planner_task *planner;
	double planner_hold_until;
	uint64_t planner_timer;
	struct job *planner_job;
	/* A prolog at the queue's head waits for its plan ahead (batch.c):
	 * the timer that looks again (0: none). */
	uint64_t batch_timer;
	/* The state's schedule (state_schedule.c): the last one computed
	 * and the computation running now. */
	struct state_sched {
		struct fabcfg *cfg; /* what `sched` is of: the config (a reference) */
		char *spec;	    /* ... and the committed topology (NULL: the config's) */
		uint8_t *sched;	    /* packed ofc.v1.Schedule summary; NULL: none */
		size_t sched_len;
		char *why; /* none, or not verified: why */
		struct state_sched_task *task;
		/* The inputs' fingerprint of the config in_cfg (a reference)
		 * on in_spec, as last asked (state_schedule_store.c). */
		struct fabcfg *in_cfg;
		char *in_spec;
		uint64_t inputs;
	} ss;
	/* cluster.c: replicas on etcd (d->clustered). cl: the store's view as last refreshed
	 * (GetState shows it, the gate decides on it); leading: this replica took over and leads;
	 * cluster_job: a takeover or a sync to run before anything queued; sync_again: a change
	 * came while a sync ran. */
	struct store_cluster cl;
	bool leading;
	/* metrics.c: the replica whose device contacts a follower shows
	 * (DeviceState.last_contact_by points here) */
	char contact_by[64];
	uint64_t took_over_ms;
	uint64_t elected_ms; /* the loop learned it leads (STORE_EV_LEADER) */
	/* a takeover that did not finish: tried again at takeover_retry_at
	 * (0: none due), the wait doubling (cluster_takeover_failed) */
	double takeover_retry_at, takeover_backoff;
	/* etcd's queue (queue.c): the last list written, and a takeover's
	 * replay going on */
	uint8_t *q_written;
	size_t q_written_len;
	bool q_replaying;
	struct outcomes outcomes; /* outcomes.c: keyed mutations' recent outcomes */
	struct job *cluster_job;
	bool sync_again;
	bool cl_stale_said; /* the log said it is stale */
	char cl_said[112];  /* who leads and this replica's role, as watchers last heard */
	uint64_t cluster_timer;
	/* Deposed, and what it shows not read from etcd since: shown stale
	 * (cluster_refresh) until a sync that read etcd whole (takeover.c, sync_start)
	 * or a takeover is done. */
	bool cl_reload;
	/* event_log.c: the fabric's event log as this replica sent it */
	struct event_log *evlog;
	struct state_delta *delta; /* what the last event's delta described (state_delta.c) */
	/* mpi_report.c: the latest libofc-mpi report of each partition,
	 * oldest first; how many were taken and refused */
	struct mpi_reports {
		Ofc__V1__ReportMpi **v;
		uint32_t n;
		uint64_t received, refused;
	} mpi;
};

/* (loop thread) A line a client's doing caused: rate-limited (struct log_limit). */
void ofcd_log_peer(struct ofcd *d, int level, const char *fmt, ...) OFC_PRINTF(3, 4);
/* (loop thread) Report the lines the limit dropped, if any and if it may. */
void ofcd_log_flush(struct ofcd *d);

/* authz.c: who may send what. Who sends a request: a peer of the main or
 * read-only socket (its credentials; an admin when root or in
 * --admin-group on the main socket, decided when it connects), or the
 * principal ofc-gateway names on the gateway socket (identity, role,
 * partitions). One type, so that one authoriser decides for both. */
struct principal {
	bool gateway;		     /* through ofc-gateway: p says who */
	bool ro;		     /* a peer of the read-only socket */
	bool admin;		     /* a socket peer that is root or in --admin-group */
	struct ucred peer;	     /* the socket's peer (the gateway's, for a principal) */
	const Ofc__V1__Principal *p; /* the gateway's principal (NULL: a socket peer) */
};
/* 0: who may send req, of kind k (the request table's row; NULL: a Request
 * without a body, answered INVALID by the caller); -1: refused, with the
 * status and the sentence. By the row's flags: an admin anything, the
 * read-only socket, a socket peer that is not an admin and the read-only
 * role the API_READ kinds, a tenant the API_TENANT kinds of its partitions. */
int authz_decide(const struct ofcd *d, const struct principal *who, const struct api_request *k,
		 const Ofc__V1__Request *req, Ofc__V1__Status *st, char *why, size_t len);
/* who sees the whole state (device errors, credentials' paths): an admin. */
bool authz_sees_all(const struct principal *who);
/* who gets the read-only socket's budgets (GetSchedule's memory and time):
 * a peer of the read-only socket, and every gateway principal but an
 * admin. */
bool authz_public(const struct principal *who);
const char *authz_role_name(const Ofc__V1__Principal *p);
bool authz_is_tenant(const Ofc__V1__Principal *p);
/* p may act on partition `partition` (an admin on any). */
bool authz_owns(const Ofc__V1__Principal *p, const char *partition);
/* p may cancel the queued or running job j (NULL: none): an admin or a
 * socket client any, a tenant only its own requests on its partitions (a
 * policy pattern names what a tenant may ask for, not whose requests it
 * may undo). */
bool authz_may_cancel(const Ofc__V1__Principal *p, const struct job *j);
bool authz_tenant_host(const struct ofcd *d, const Ofc__V1__Principal *p, const char *name);
/* A tenant's GetState: its partitions' part of the snapshot (in a). */
Ofc__V1__State *authz_tenant_state(const struct ofcd *d, const Ofc__V1__Principal *p,
				   struct arena *a);
/* A queued or running job j (txn: its transaction, 0 none) as GetState
 * shows it, in a (authz.c: what each principal sees); tenant: as a tenant's GetState does,
 * without who asked (peer, principal) and the kind as a tenant asks it. */
Ofc__V1__TransactionInfo *txn_info(struct arena *a, const struct job *j, const char *state,
				   uint64_t txn, bool tenant);

/* metrics.c: count a job the loop got back; the exposition,
 * with the connections counted by role (admin, read-only on the main
 * socket, the read-only socket, the gateway). The caller frees it. */
void metrics_job_done(struct metrics *m, const struct job *j, bool ok, double seconds);
char *metrics_text(struct ofcd *d, const uint32_t clients[4]);

/* metrics.c */
/* What d->devm counted, into s's devices as GetState shows them
 * (last_contact_unix_ms, commands, errors; absent: not talked to). */
void metrics_devices_show(struct ofcd *d, struct snapshot *s);
void metrics_devices_free(struct dev_metrics *m);

/* cluster.c: replicas on etcd */
/* (ofcd_run) Start campaigning. */
int cluster_start(struct ofcd *d, struct ofc_error *err);
/* (loop) The store's view into d->loop->cl, its changes logged; true when it
 * changed what GetState shows. */
bool cluster_refresh(struct ofcd *d);
/* (loop) STORE_EV_DEPOSED: this replica leads no more; what it shows is
 * stale until a sync read etcd again (the caller asks for one). */
void cluster_deposed(struct ofcd *d);
/* (loop) A takeover or a sync j is done: a reload's ends the staleness. */
void cluster_synced(struct ofcd *d, const struct job *j);
/* (loop) A takeover did not finish (the fabric's control could not be
 * opened again) while etcd still says this replica leads: it is tried
 * again in 1 s, the wait doubling to 30 s; mutations wait for it. */
void cluster_takeover_failed(struct ofcd *d, double now);
/* (loop, the cluster's timer) A failed takeover's next try, when due and
 * this replica still leads: asked for (ofcd_want_cluster_job); true then. */
bool cluster_takeover_retry(struct ofcd *d, double now);

/* queue.c: the waiting mutations in etcd. queue_kept: whether j
 * goes there (a client's mutation, not a dry run, on a replica); persist
 * writes the list again when it changed (errors: the store's, FENCED when
 * this replica does not lead); queue_load reads what the last leader left
 * (NULL: nothing, or unreadable, logged); queue_forget drops the memory of
 * the last write. */
struct Ofc__V1__MutationQueue;
struct Ofc__V1__TransactionInfo;
bool queue_kept(const struct ofcd *d, const struct job *j);
int queue_persist(struct ofcd *d, struct ofc_error *err);
/* The list queue_persist would write (NULL: too large), and its write
 * done (buf moved in). */
uint8_t *queue_pack_current(struct ofcd *d, size_t *len);
void queue_written(struct ofcd *d, uint8_t *buf, size_t len);
/* A takeover's replay of the last leader's queue: begin sets aside what
 * was queued here meanwhile (returned), so the last leader's mutations,
 * accepted first, run first; end queues those after them and writes
 * etcd's queue. */
struct job *queue_takeover_begin(struct ofcd *d);
void queue_takeover_end(struct ofcd *d, struct job *mine);
/* The job at the queue's end (the loop thread; the queue in memory only). */
void queue_append(struct ofcd *d, struct job *j);
struct Ofc__V1__MutationQueue *queue_load(struct ofcd *d);
void queue_forget(struct ofcd *d);
/* A follower's State.queue: the leader's waiting mutations as etcd's
 * queue holds them, in a (strings too), state "queued at the leader";
 * with tenant set only those of partitions tenant(ctx, partition) says
 * are the caller's (authz.c), with a tenant's words for the kind. *out
 * NULL and 0 when this replica leads or nothing waits. */
size_t queue_at_leader(const struct ofcd *d, struct arena *a,
		       bool (*tenant)(const void *ctx, const char *partition), const void *ctx,
		       struct Ofc__V1__TransactionInfo ***out);

/* cluster.c */
/* Messages of view v (in a): State.cluster and Response.leader (NULL when
 * no replica leads). */
Ofc__V1__Cluster *cluster_msg(struct arena *a, const struct ofcd *d, const struct store_cluster *v);
Ofc__V1__Leader *cluster_leader_msg(struct arena *a, const struct store_cluster *v);

/* state_schedule.c (loop thread) */
/* The published snapshot wants its schedule: show the one kept, or start
 * computing it (asked: a client asks for the state, a follower too). */
void state_schedule_check(struct ofcd *d, bool asked);
/* A computation finished (t: the note's reference, ours now). */
void state_schedule_landed(struct ofcd *d, struct state_sched_task *t);
/* When the computation of the published state's schedule began (unix
 * ms), 0: none runs for it. */
uint64_t state_schedule_since(const struct ofcd *d);
/* ofcd_close: let go of the computation (its thread drops its result) and
 * of what is kept. */
void state_schedule_stop(struct ofcd *d);

/* setup.c: what ofcd_open does before it serves. */
int listen_unix(const char *path, unsigned mode, int gid, int *out, struct ofc_error *err);
int check_socket_dir(const char *path, const char *option, struct ofc_error *err);
void fd_limit(struct ofcd *d);
void ro_budget(struct ofcd_opts *o);
int open_topology_dir(struct ofcd *d, struct ofc_error *err);

/* outcomes.c: the table (pure: unit-tested). trim drops the expired and
 * all but the newest OUTCOMES_MAX; put adds (owner, key) newest, replacing
 * one there; pack/unpack are its ofc.v1.MutationOutcomes (unpack: -1 when
 * buf is none; entries without a key or owner are skipped). */
void outcomes_free(struct outcomes *t);
void outcomes_trim(struct outcomes *t, uint64_t now_ms);
struct outcome *outcomes_find(struct outcomes *t, const char *owner, const char *key);
struct outcome *outcomes_put(struct outcomes *t, const char *owner, const char *key);
uint8_t *outcomes_pack(const struct outcomes *t, uint64_t epoch, size_t *len);
int outcomes_unpack(struct outcomes *t, const uint8_t *buf, size_t len);
bool outcome_key_ok(const char *key);
/* (loop) enqueue: j keeps its Request's bytes (raw, len; a replica's, for
 * etcd's queue; gw: it came through the gateway) and its request_key. ofcd_maybe_start, j just out
 * of the queue: true when j is answered without running (j->reply set: its recorded outcome, or a
 * refusal of its key), else j is marked started (with etcd's queue, one write). ofcd_job_done: j's
 * answer recorded. A takeover: the last leader's table read and its started entries settled. */
void outcome_adopt(struct ofcd *d, struct job *j, bool mutation, const uint8_t *raw, size_t len,
		   bool gw);
bool queue_start(struct ofcd *d, struct job *j);
/* Whether queue_start would answer j without running it (its key refused,
 * or its outcome recorded); changes nothing. */
bool outcome_recorded(struct ofcd *d, const struct job *j);
void outcome_done(struct ofcd *d, struct job *j);
void outcomes_takeover(struct ofcd *d);

#define MAX_QUEUE     OFCD_MAX_QUEUE /* mutations waiting */
#define MAX_SCHEDULES 16	     /* GetSchedule jobs handed out */
#define MAX_STREAMS   4		     /* streamed GetSchedules at once */
/* ... of which public callers (the read-only socket's uids, gateway
 * principals but admins) hold PUBLIC_STREAMS together and
 * STREAMS_PER_CALLER each: two public callers reading slowly once held
 * every stream, and root's and the admins' schedules were refused. */
#define PUBLIC_STREAMS	   2
#define STREAMS_PER_CALLER 1
/* Schedule jobs one public caller (the read-only socket's uid, a gateway
 * principal but an admin) may have handed out at once: with a schedule
 * worker of their own for root's and the admins' (work.c), a local user's
 * heavy requests delay nobody else's by more than one of them. */
#define SCHEDULES_PER_CALLER 2
uint32_t sched_caller(struct ofcd *d, const struct job *j, int delta);

struct obuf {
	uint8_t *b;
	size_t off, len, cap; /* unsent bytes are [off, len) */
};

struct conn {
	/* A mutation the last leader queued, run again after a
	 * takeover (ofcd_replay_queue): not a connection; answers go to the log. */
	bool replay;
	struct ofcd *d;
	uint64_t id;
	int fd;
	bool ro;    /* accepted on the read-only socket */
	bool admin; /* on the main socket, and root or in the admin group */
	/* Accepted on the gateway socket (from --gateway-uid): every
	 * request carries its principal (struct request's who); a
	 * watcher's is kept (a copy). */
	bool gw;
	Ofc__V1__Principal *watch_principal;
	/* The streamed GetSchedule sending to it, and how many of
	 * its frames wait for an acknowledgement (until unsent < OUT_HIGH). */
	struct stream *stream;
	uint32_t stream_owed;
	struct ucred peer;
	struct uid_use *use; /* its user's connections and bytes */
	size_t charged;	     /* of use->bytes: in_cap + out.cap */
	uint8_t *in;
	size_t in_len, in_cap;
	struct obuf out;
	double in_since;  /* a partial frame has been waiting since (0: none) */
	double out_since; /* unsent replies made no progress since */
	bool reading;	  /* LOOP_READ is registered */
	bool watching;
	uint64_t watch_id;
	bool closing; /* send what is queued, then close */
	bool dead;    /* to be closed by conn_reap() */
};

/* A request being answered: what the chain (run_request) hands its
 * handler. The connection it came on, the decoded message and its bytes
 * (a mutation's job keeps them: outcome_adopt), its row of the request
 * table (NULL: no body) and who sent it. It lives on the chain's stack. */
struct request {
	struct conn *c;
	const Ofc__V1__Request *req;
	const uint8_t *raw;
	size_t len;
	const struct api_request *k;
	struct principal who;
};

/* A connection's buffers: the requests of a client whose unsent answers
 * exceed OUT_HIGH wait in the kernel; buffers start at IN_INITIAL and an
 * idle connection's shrink back below BUF_KEEP. */
#define OUT_HIGH   (1u << 20)  /* stop reading a client's requests above this much unsent */
#define IN_INITIAL (16u << 10) /* input buffer to start with */
#define BUF_KEEP   (64u << 10) /* an idle connection's buffers shrink back below this */

/* conn_io.c and job_queue.c: the connections' output and the mutation
 * queue, for the requests' handlers. */
void changed(struct ofcd *d); /* what GetState shows changed */
/* Queue one frame made of parts a and b (either may be empty). */
void conn_queue(struct conn *c, const void *a, size_t alen, const void *b, size_t blen);
/* Queue one frame of n bytes at buf + FRAME_ROOM, taking buf (malloc'd,
 * FRAME_ROOM bytes free before the frame) as the output buffer when
 * nothing else waits to go out: a large answer (a fluid schedule's whole
 * one, hundreds of MB) sent without a copy. false: not taken (the caller
 * queues a copy and keeps buf). */
bool conn_queue_own(struct conn *c, uint8_t *buf, size_t n);
void send_response(struct conn *c, const Ofc__V1__Response *r);
/* Returns 0, so handlers can end with `return reply(...)`. */
int reply(struct conn *c, uint64_t id, Ofc__V1__Status st, const char *fmt, ...) OFC_PRINTF(4, 5);
/* A mutation (a transaction, queued with a ticket), not the daemon's own
 * device probe or installing the planner's result. */
bool is_mutation(const struct job *j);
/* A job of the kind the job table gives rq's request, answering it: who to
 * answer (its connection and id) and
 * who asked (job_from). */
struct job *request_job(const struct request *rq);
/* rq: the request j answers (NULL: none, a reload's). */
void enqueue(struct ofcd *d, struct job *j, const struct request *rq);
/* Take a queued mutation out; answer its client CANCELLED. */
void cancel_job(struct ofcd *d, struct job *j, const char *why);
/* reply(), for a check that refuses: -1. */
int refuse_req(struct conn *c, uint64_t id, Ofc__V1__Status st, const char *fmt, ...)
    OFC_PRINTF(4, 5);
/* The daemon with chain plugged into its connections (ofcd_open). */
int server_open(const struct ofcd_opts *o, const struct ofcd_chain *chain, struct ofcd **out,
		struct ofc_error *err);

/* What the loop's files call of each other, from the bottom up (no
 * circles between them): conn_io.c (a connection's frames), events.c (the
 * watchers), cluster.c (a replica's queue), job_queue.c (the queue and the
 * finished jobs), connections.c (accepting, closing), server.c (the
 * loop). */
size_t conn_unsent(const struct conn *c);
/* Charge buffers of in_cap and out_cap bytes to the connection's user:
 * false (nothing changed) past max_buffer_per_uid. */
bool conn_charge(struct conn *c, size_t in_cap, size_t out_cap);
uint32_t conn_max_frame(const struct conn *c); /* the largest request it may send */
void conn_kill(struct conn *c, int level, const char *fmt, ...) OFC_PRINTF(3, 4);
void conn_read_pause(struct conn *c, bool pause);
void conn_flush(struct conn *c);
void conn_stream_drop(struct conn *c);
void conn_process_input(struct conn *c); /* answer every complete frame in */
struct conn *conn_find(struct ofcd *d, uint64_t id);
void conn_stream_frame(struct ofcd *d, struct note *n); /* a streamed GetSchedule's frame */
void conn_reap(struct ofcd *d);				/* close the connections marked dead */
void conn_listeners(struct ofcd *d, bool on);
void ofcd_hand_to_worker(struct ofcd *d, struct job *j);
void ofcd_maybe_start(struct ofcd *d); /* hand the mutation worker its next job */
void ofcd_job_done(struct ofcd *d, struct job *j);
/* (loop) A note with a running job's state and config (struct note). */
void ofcd_published(struct ofcd *d, struct note *n);
/* n (may be NULL): a note with a re-planned schedule and the failures. */
void ofcd_broadcast_event(struct ofcd *d, Ofc__V1__Event__Kind kind, uint64_t txn, uint64_t ticket,
			  const char *device, const char *message, const char *sentence,
			  uint64_t time_ms, const struct note *n);
void ofcd_on_event(struct ofcd *d, struct note *n);
/* A queued request's end (KIND_REQUEST_DONE, _REFUSED, KIND_FAILURE_*),
 * r its answer. */
void ofcd_request_event(struct ofcd *d, const struct job *j, const Ofc__V1__Response *r);
/* An event to every watcher (a tenant's when part is one of its partitions),
 * unnumbered and not logged: a replica's own KIND_LEADER_CHANGED. */
void ofcd_send_watchers(struct ofcd *d, Ofc__V1__Response *r, const char *part);
/* event_log.c: every other event goes through the fabric's log. emit: r
 * (an event; r->id and the event's seq, log are set here) numbered and
 * sent, or, on a replicated leader, written to the store's log at the
 * end of this loop pass and sent then (dropped on a follower: the
 * leader's log has it). pull: what the store's log holds past the last
 * sent (a follower after the sync in progress, event_log_synced).
 * resume: a new watcher gets the kept events after seq `after` of log
 * `log` (0: any). */
void event_log_emit(struct ofcd *d, Ofc__V1__Response *r, const char *partition);
void event_log_pull(struct ofcd *d);
void event_log_synced(struct ofcd *d);
void event_log_resume(struct ofcd *d, struct conn *c, uint64_t after, uint64_t log);
void event_log_free(struct ofcd *d);
/* The events waiting for the end of the loop pass written (a leader's)
 * and sent now: a stopping ofcd's last, which the pass may not reach. */
void event_log_flush(struct ofcd *d);
/* The last event numbered, sent or seen (its log in *log): where a state
 * read now stands in the log. */
uint64_t event_log_seq(struct ofcd *d, uint64_t *log);
/* The highest ticket an event in the store's log names (0: none, or no
 * store): where a new leader's numbering goes on from. */
uint64_t event_log_last_ticket(struct ofcd *d);
/* state_delta.c: what changed of the state since the last event said,
 * on e (allocated in a; nothing when nothing changed or this replica
 * follows); check: a change no event carried, as KIND_STATE_CHANGED;
 * start: the state at ofcd_run, described. */
void state_delta_attach(struct ofcd *d, Ofc__V1__Event *e, struct arena *a);
void state_delta_check(struct ofcd *d);
void state_delta_start(struct ofcd *d);
void state_delta_free(struct ofcd *d);
int ofcd_snap_dev(struct snapshot *s, const char *name); /* its index, or -1 */
void ofcd_set_reachable(struct ofcd *d, int i, bool up, const char *error, enum ofc_reason reason);
void ofcd_planner_stop(struct ofcd *d);
void ofcd_planner_check(struct ofcd *d); /* start the planner if the config needs one */
void ofcd_planner_landed(struct ofcd *d, struct planner_task *t);
void ofcd_want_cluster_job(struct ofcd *d, enum job_kind kind);
void ofcd_refuse_queue(struct ofcd *d); /* this replica leads no more */
void ofcd_replay_queue(struct ofcd *d); /* after a takeover: the last leader's queue */
/* A staged reconfiguration the store's record says is unfinished, run
 * again from its stage (a new leader's takeover; a single ofcd's start). */
void ofcd_resume_staged(struct ofcd *d);

/* read_requests.c and mutation_requests.c: the request table's handlers
 * (requests.c). */
int get_state(const struct request *rq);
int get_schedule(const struct request *rq);
int get_plan(const struct request *rq);
int get_metrics(const struct request *rq);
int watch(const struct request *rq);
int apply_config_request(const struct request *rq);
int reconfigure_request(const struct request *rq);
int release_partition(const struct request *rq);
int move_to_phase(const struct request *rq);
int adopt_request(const struct request *rq); /* Adopt (the worker's: adopt.c) */
/* TestbedRun, TestbedCheck, TestbedDown (the worker's: testbed.c) and TestbedUp */
int testbed_run_request(const struct request *rq);
int testbed_check_request(const struct request *rq);
int testbed_up_request(const struct request *rq);     /* TestbedUp (the worker's: testbed_up.c) */
int testbed_mpirun_request(const struct request *rq); /* TestbedMpirun (the worker's: testbed.c) */
int cancel(const struct request *rq);
int report_failure(const struct request *rq);
int drain_request(const struct request *rq);
int report_links(const struct request *rq); /* host_links.c */
/* mutation_requests.c: a name or host a request gives, as a config allows
 * them; a mutation's job for rq, of its job row's kind (NULL: refused and answered: ofcd
 * stopping, the queue or the asker's share of it full). */
bool plain_name(const char *s);
struct job *queued_job(const struct request *rq);

/* mpi_report.c: ReportMpi, a job's libofc-mpi report, kept on the loop
 * thread (d->loop->mpi, which GetState shows). */
int report_mpi(const struct request *rq);
void mpi_reports_free(struct ofcd *d);

#endif
