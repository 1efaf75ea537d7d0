/* Private to controller/ofcd/: the parts of ofcd that its files share.
 *
 *   server.c      the event loop: opening, its notes and timers, stopping;
 *                 clients in conn_io.c (frames, answers) and connections.c
 *                 (accepting, closing), the mutation queue and finished
 *                 jobs in job_queue.c, events to watchers in events.c; the
 *                 requests in requests.c, read_requests.c and
 *                 mutation_requests.c (conn.h)
 *   work.c        the two workers and which job runs where; their jobs:
 *                 mutation.c (ApplyConfig, Reconfigure, probes, failures),
 *                 takeover.c (a replica's takeover and sync), schedule_job.c
 *                 (GetSchedule), startup.c (config, lock, recovery), and
 *                 what they share, work_ctl.c (ctls and their events)
 *   snapshot.c    snapshots: the last committed state as an ofc.v1.State
 *   state_schedule.c  the state's schedule (the workload's on the committed
 *                 topology), computed off the commit's path on a thread of
 *                 its own, symmetry-reduced where it can be, by the leader
 *   planner.c     the workload's schedule: the query, and the planner
 *                 thread that computes an all-to-all's off the start path
 *   jobs.c        jobs, notes and planner tasks handed between the
 *                 threads, the log
 *   setup.c       what ofcd_open does before it serves: sockets bound,
 *                 descriptors, budgets, --topology-dir
 *   loop.c        the event loop (loop.h)
 *   client.c      the client side of the socket (ofcd.h)
 *
 * Threads (struct ofcd's parts say who owns each field): the loop thread
 * owns connections, the queue and the published snapshot (d->loop); the
 * mutation worker owns the running config and its ctl (d->w); the schedule
 * worker and the planner only read configs they hold a reference to. They
 * talk through jobs (handed over under d->jobs.mu) and notes (events and
 * finished jobs, under d->notes.mu, with an eventfd to wake the loop). */
#ifndef OFC_CONTROLLER_OFCD_INTERNAL_H
#define OFC_CONTROLLER_OFCD_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <sys/socket.h>

#include "controller/api/api.h"
#include "controller/config/config.h"
#include "controller/export/export.h"
#include "controller/ofcd/loop.h"
#include "controller/ofcd/ofcd.h"
#include "controller/reconfig/reconfig.h"
#include "controller/schedule/schedule.h"
#include "proto/control.pb-c.h"

/* A validated config, immutable once shared: the mutation worker, the
 * snapshots and the schedule jobs each hold a reference. */
struct fabcfg {
	atomic_uint refs;
	struct fabric *f;
	char *yaml;
	size_t yaml_len;
	char *path; /* the file it came from (messages, relative paths) */
	/* The workload State.schedule describes (collective 0: none). */
	enum sched_collective coll;
	uint64_t size;
	/* Run-time failures in effect (failures.c): "U-V" links and
	 * "HOST:PORT" ports the fabric's degraded graph leaves out, on top of
	 * the config's own; no_schedule when they leave no schedule (the
	 * fabric is then the config without them, for the state alone). */
	char **failed;
	uint32_t nfailed;
	char *no_schedule;
	/* The workload's schedule (packed ofc.v1.Schedule, no steps) once the
	 * planner or a re-plan computed it: the snapshot takes it instead of
	 * computing it again. NULL: not computed. Mutable (with plan_full,
	 * kept and kept_why): written by the mutation worker alone, and only
	 * until `planned` is set; other threads read them only after that. */
	uint8_t *plan;
	size_t plan_len;
	/* ... and the whole of it, steps too, as GetSchedule answers it: a
	 * packed Response{status, message, schedule} without its id, kept by
	 * the planner and the re-plans when it fits a frame (at most
	 * --max-frame bytes); else plan_full_why says why not. Final with
	 * `planned`, like plan. */
	uint8_t *plan_full;
	size_t plan_full_len;
	char *plan_full_why;
	/* An all-to-all workload's healthy MCF run, kept by the
	 * planner (or a re-plan) that computed the workload on this config's
	 * healthy graph:
	 * a re-plan after a failure warm-starts from its solution and prices
	 * "vs healthy" from it instead of solving the healthy graph again. It
	 * dies with the config (ApplyConfig, reload, Reconfigure, a re-wire
	 * make a new one). At most KEPT_MAX_BYTES; kept_why says why none is
	 * kept (for the re-plan's message), "" when none was tried. Mutable
	 * like plan. */
	struct schedule_kept kept;
	char kept_why[240];
	/* plan and kept are final (the planner's result installed, or a
	 * re-plan computed them): from then on nobody writes them, so the
	 * loop and the schedule worker may read them after an acquire load of
	 * this flag (GetSchedule answers the workload from them). Set by the
	 * mutation worker with release. */
	atomic_bool planned;
	/* With failures in effect: the healthy config this one degrades (a
	 * reference; NULL on a healthy config): a planner computing that one
	 * is not let go of when the failures are published. */
	struct fabcfg *healthy;
};

/* The most a config's kept healthy MCF solution may hold. genkautz:1024,4's
 * (mirrored: the group, 51 classes' trees, the lengths) holds 1.2 MiB
 * (bench/RESULTS.md); a plain solution (no symmetry) keeps a
 * class per node, at least n trees of n arcs: 4 MiB and up at 1024 nodes. */
#define KEPT_MAX_BYTES ((size_t)256 << 20)
/* A re-plan's all-to-all MCF on the degraded graph stops here (the target:
 * a re-plan within 10 s of the failure), within the gap its message gives. */
#define REPLAN_MCF_SECONDS 10
/* The lowering of the workload's schedule (State.schedule, re-plans): an
 * all-to-all's MCF is the fluid one lowered to paths, the MCF that keeps
 * its solution and warm-starts from one (the time-stepped MCF of the
 * default "steps" lowering does neither). NULL for any other collective,
 * and for an all-to-all the config names another algorithm for
 * (snapshot.c). */
const char *workload_lowering(const struct fabric *f, const char *spec, enum sched_collective coll);
/* While the planner computes the workload's schedule, mutations (a failure
 * report above all) wait for it at most this long, so a re-plan starts from
 * the kept healthy MCF solution instead of solving the healthy graph again
 * beside the planner (docs/ARCHITECTURE.md, ofcd, "Start-up"). */
#define PLANNER_HOLD_SECONDS 120
/* A GetSchedule answer holds every transfer: each packs to at least this
 * many bytes, so a schedule of more than max_frame / MIN_TRANSFER_BYTES
 * transfers cannot fit a frame and its message tree is not built. */
#define MIN_TRANSFER_BYTES 24
/* What a client asks instead of a schedule too large to send, in words
 * for both its clients: the field and the CLI's flag. Such an answer is
 * STATUS_FAILED: the request was valid, the daemon's limit stopped it. */
#define ASK_SUMMARY "ask for the figures alone (summary_only; ofc --socket PATH schedule --summary)"
/* ... and the whole schedule in frames of a step or less, any engine's. */
#define ASK_STREAM "ask with stream (ofc --socket PATH schedule -o FILE streams)"

/* lp: the daemon's --lp-solver, the config's `lp_solver` unless it names one. */
struct fabcfg *fabcfg_new(struct fabric *f, const char *yaml, size_t len, const char *path,
			  enum lp_solver lp);
struct fabcfg *fabcfg_ref(struct fabcfg *c);
void fabcfg_unref(struct fabcfg *c);

/* The last committed state, as the loop serves it. Built by a worker,
 * then owned by the loop thread (which overlays device reachability on
 * it in place). */
struct snapshot {
	struct arena a;
	struct fabcfg *cfg;    /* borrowed strings live here */
	struct graph *graph;   /* the recorded topology when it is not the config's */
	struct port_map ports; /* ... and its port layers */
	Ofc__V1__State *state; /* without topology, fabric, transaction, queue */
	Ofc__V1__Topology *topo, *topo_edges;
	Ofc__V1__Fabric *fabric;
	Ofc__V1__TransactionInfo *unfinished; /* a journal on disk, if any */
	Ofc__V1__Schedule *plan;	      /* cfg->plan unpacked (state->schedule) */
	/* fabric less its wiring, circuits and logical (GetState.fabric_brief) */
	Ofc__V1__Fabric *fabric_brief;
	/* The workload's schedule on the committed topology is the state
	 * schedule keeper's (state_schedule.c), not computed here: wanted, on
	 * sched_spec (the committed topology when it is not the config's,
	 * else NULL); state->schedule (in plan) or state->schedule_error once
	 * it has it. */
	bool sched_want;
	char *sched_spec;
	uint32_t ndevs;
	Ofc__V1__DeviceState **devs; /* = state->devices */
	/* What read-only clients see of devs[i]->error: the reason's word
	 * (ofcd_public_reason), never the device's own text. */
	const char **public_error;
};

struct snapshot *snapshot_build(const char *state_dir, struct ctl *c, struct fabcfg *cfg, char *why,
				size_t why_len);
void snapshot_free(struct snapshot *s);
/* A schedule's figures without its steps, every string in a. */
Ofc__V1__Schedule *snapshot_schedule_summary(struct arena *a, const struct schedule_result *r);

/* views.c: what every replica shows alike, from the store's state alone */
/* (mutation worker, after held_state on a snapshot of d->w.ctl) The
 * fabric's at_target outside the held partitions' ports, and each one's
 * own at_target and schedule. */
void held_view(const struct ofcd *d, struct snapshot *s);
/* A replica's transaction: t names the replica and epoch that ran it, and
 * buf has " (replica NAME, epoch E)" for its answer ("" for one ofcd). */
void ofcd_txn_by(const struct ofcd *d, Ofc__V1__TransactionInfo *t, char *buf, size_t n);
/* (loop) The transaction running now, as State.transaction shows it. */
void ofcd_txn_running(const struct ofcd *d, Ofc__V1__TransactionInfo *t);
/* A transaction's event on a replica in words naming the replica ("by
 * replica NAME (epoch E): MESSAGE"); false when it names none. */
bool ofcd_txn_words(const struct ofcd *d, const struct ctl_event *ev, char *buf, size_t n);

enum job_kind {
	JOB_APPLY_CONFIG = 1,
	JOB_RECONFIGURE,
	JOB_RELOAD, /* SIGHUP: the config file again */
	JOB_PROBE,  /* read every device (health, drift) */
	JOB_SCHEDULE,
	JOB_FAILURE, /* ReportFailure: the failed set changes, the schedule is re-planned */
	JOB_PLANNER, /* the planner's result: install it on its config, publish */
	JOB_RELEASE, /* ReleasePartition: let go of a run-time partition */
	/* cluster.c: this replica leads now: repair what the last
	 * leader left and serve the store's state as the leader */
	JOB_TAKEOVER,
	JOB_SYNC,  /* a follower: serve the state its watch of etcd delivered */
	JOB_ADOPT, /* Adopt: end an incomplete rollback (adopt.c) */
	/* TestbedRun: collectives on the testbed's hosts (testbed.c) */
	JOB_TESTBED_RUN,
	JOB_TESTBED_CHECK, /* TestbedCheck (testbed.c) */
	JOB_TESTBED_DOWN,  /* TestbedDown (testbed.c) */
};
/* "reconfigure", "release-partition", ... (State's TransactionInfo.kind) */
const char *job_kind_name(enum job_kind k);
/* "transaction committed", "partition held", ... (the log's words) */
const char *event_kind_name(Ofc__V1__Event__Kind k);

struct probe_dev {
	char name[NAME_MAX_LEN + 1];
	bool reachable;
	bool in_sync;  /* the read agrees with the record */
	bool recorded; /* the record has a state for it */
	uint32_t entries;
	char error[512];
	enum ofc_reason reason;
};

struct note;

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

struct job {
	struct job *next;
	enum job_kind kind;
	uint64_t ticket;  /* mutations: the daemon's number (Cancel, State.queue) */
	uint64_t conn_id; /* who to answer; 0: nobody */
	uint64_t req_id;
	struct ucred peer;
	char *who; /* the principal's identity, through the gateway */
	/* Who asked, for the audit (the journal, the record, the log, holds'
	 * owners): who, else "uid:N" of the socket's client. tenant: a
	 * gateway principal of the tenant role (an admin and a socket's
	 * client may change anyone's holds; a tenant only its own). */
	char *principal;
	bool tenant;
	double t0;	       /* metrics: started (schedules: asked for) */
	struct stream *stream; /* a streamed GetSchedule (stream.c) */
	bool dry_run;
	char *target; /* for people: the topology, workload or file */
	/* apply-config; unnamed: sent without a filename, so its relative
	 * paths resolve from the running config's directory (docs/control.md) */
	char *yaml, *filename;
	bool unnamed;
	size_t yaml_len;
	/* reconfigure (spec or workload) and schedule */
	char *spec;
	bool spec_from_client; /* spec came in the request: read under d->files */
	char *partition;       /* reconfigure: that partition alone */
	/* reconfigure: a partition made at run time of these hosts,
	 * renumbered for fewest moves when relabel */
	char **hosts;
	uint32_t nhosts;
	bool relabel;
	bool workload;
	/* reconfigure (spec or workload): on the ports no held partition
	 * has, the held partitions' circuits left as they are */
	bool free_ports;
	/* GetPlan (a schedule worker's read), MoveToPhase (a
	 * reconfigure to the chosen way's topology of phase `phase`, or of the
	 * phase named phase_name). */
	bool get_plan, to_phase;
	uint32_t phase;
	char *phase_name;
	uint32_t nodes;
	enum sched_collective coll;
	uint64_t size;
	char *algo;
	char *lowering; /* GetSchedule: alltoall mcf's (NULL: the default) */
	uint32_t chunks;
	bool summary_only;
	/* GetSchedule, GetPlan: asked by a public caller (authz_public: the
	 * read-only socket, a gateway principal but an admin), who holds one
	 * schedule worker at most and SCHEDULES_PER_CALLER jobs at once */
	bool public_caller;
	bool reduced;		      /* GetSchedule: symmetry-reduced (node 0's program) */
	struct planner_task *planner; /* JOB_PLANNER: the planner's result (a reference) */
	struct fabcfg *cfg;	      /* schedule: the config it runs on */
	uint32_t max_frame;
	uint64_t max_memory; /* GetSchedule: the request's memory limit */
	double max_time;     /* ... and its time limit, seconds (< 0: none) */
	/* report-failure: items ("U-V", "HOST:PORT"), restore them, or clear all */
	char **items;
	uint32_t nitems;
	bool restore, clear;
	/* The Request as its client sent it (a mutation a replica
	 * leading on etcd keeps in etcd's queue while it waits: queue.c) */
	uint8_t *req;
	size_t req_len;
	bool via_gateway;
	bool stored; /* ... and etcd's queue holds it (a write with it succeeded) */
	/* Request.request_key (outcomes.c); answered: from its recorded
	 * outcome (or refused for its key), not run */
	char *key;
	bool answered;
	/* results */
	uint8_t *reply; /* a packed Response for conn_id (no frame header) */
	size_t reply_len;
	/* When set, reply's allocation, with FRAME_ROOM bytes free before
	 * reply (a frame's length): the loop sends it as it is, no copy
	 * (conn_queue_own). */
	uint8_t *reply_buf;
#define FRAME_ROOM 4
	struct snapshot *snap;	/* to publish */
	struct fabcfg *new_cfg; /* the config now running, when it changed */
	struct probe_dev *probe;
	uint32_t nprobe;
	bool startup;	  /* probe: the check once at start, reported in the log */
	uint64_t done_ms; /* takeover: when it finished (unix ms) */
	bool reload;	  /* sync: read etcd whole first (d->loop.cl_reload when it started) */
	bool reloaded;	  /* ... and it did, this replica following */
	uint64_t txn;	  /* the transaction it ran (0: none) */
	/* adopt: commit the transaction adopt_txn as generation adopt_gen
	 * (else a preview) */
	bool adopt_commit;
	uint64_t adopt_txn, adopt_gen;
	double alpha; /* testbed run: seconds a step (0: the testbed's model's) */
	/* Events that say how it ended (committed, rolled back, config
	 * applied): delivered after its snapshot is published, so a client
	 * that sees one and asks for the state sees what it announced. */
	struct note *deferred, *deferred_tail;
	const char *outcome; /* "committed", "rolled-back", ... */
	/* A run-time partition's plan made ahead, off the queue
	 * (plan_ahead.c; NULL: none) */
	struct ahead *ahead;
	/* The jobs handed over with this one to run together (batch.c;
	 * linked by next, freed with it), and the order the worker ran them
	 * in, this one among them, which the loop answers them in (NULL:
	 * this one alone) */
	struct job *batch;
	struct job **order;
	uint32_t norder;
	double queued_s; /* when it was queued (now_seconds) */
};

void job_free(struct job *j);
/* A GetSchedule job the fluid engine answers (schedule_fluid_request): it
 * names it, or names nothing on a server fabric. */
bool job_fluid(const struct job *j);
/* j's client: the socket peer's credentials and the gateway's principal
 * (NULL: none) into peer, who, tenant and principal. */
void job_from(struct job *j, struct ucred peer, const Ofc__V1__Principal *p);
/* "cn:NAME through the gateway (uid U pid P)" or "uid U pid P", for logs. */
const char *job_from_words(const struct job *j, char *buf, size_t n);
/* Keep an event for after the job's snapshot is published (deferred). */
void job_defer(struct job *j, struct note *n);
void note_free(struct note *n);

/* From a worker to the loop: an event, or (job != NULL) a finished job.
 * message is what watchers get (fixed words where a device failed), detail
 * what the log gets (NULL: the message), reason why a device failed. */
struct note {
	struct note *next;
	struct job *job;
	Ofc__V1__Event__Kind kind;
	uint64_t txn, ticket;
	char *device, *message, *detail;
	enum ofc_reason reason;
	uint64_t time_ms;
	/* KIND_SCHEDULE_REPLANNED: the schedule (a packed ofc.v1.Schedule, no
	 * steps; NULL: none survives) and the failures in effect. */
	uint8_t *sched;
	size_t sched_len;
	char **failed;
	uint32_t nfailed;
	struct planner_task *planner;	      /* the planner finished (a reference) */
	struct state_sched_task *state_sched; /* the state's schedule computed (a reference) */
	/* A frame of a streamed GetSchedule (in sched) for the
	 * connection stream_conn; the stream is the job's, not the note's. */
	struct stream *stream;
	uint64_t stream_conn;
	enum store_event cluster; /* what the store said (0: none) */
	char *partition;	  /* KIND_PARTITION_*: which (Event.partition) */
};

/* stream.c: a streamed GetSchedule's thread and the loop agree
 * on how many frames the loop holds for the client (inflight, at most a
 * window); the loop acknowledges each once the client's unsent answers
 * are below OUT_HIGH, and cancels when the client is gone. */
struct stream {
	pthread_mutex_t mu;
	pthread_cond_t cond;
	struct ofcd *d; /* only under mu, and only while !orphan */
	/* What the thread reads of the daemon, copied when the stream is
	 * made: ofcd_close may free d while the thread computes. */
	double wait;		 /* 2 x the client timeout */
	struct topo_files files; /* --topology-dir: its own descriptor */
	uint64_t conn_id;
	uint32_t inflight;
	bool cancel; /* stop sending */
	bool orphan; /* the daemon is gone: the thread frees the job */
};
struct stream *stream_new(struct ofcd *d);
void stream_free(struct stream *st);
/* Run the job (JOB_SCHEDULE with j->stream) on a detached thread. */
int stream_start(struct job *j);

struct conn;
struct allow_entry;

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
	uint64_t received[API_NKINDS]; /* requests decoded, by the request table's kind */
};
/* Per device, by name: commands sent, operations failed and when it last
 * answered (drivers' device_stats), moved here from the devices of a ctl
 * by the thread that holds it (metrics_devices_take: after each job of the
 * mutation worker, and before a ctl is closed) and read by the loop for
 * GetMetrics, under their own mutex. Names beyond METRICS_MAX_DEVICES
 * (configs that renamed thousands of devices) are not counted. */
#define METRICS_MAX_DEVICES 4096
struct dev_counts {
	char *name;
	uint64_t commands, errors;
	double last_contact; /* unix seconds, 0: never */
};
struct dev_metrics {
	pthread_mutex_t mu;
	struct dev_counts *v;
	uint32_t n;
	size_t cap;
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

/* held.c: the held partitions' schedules as the holds' view computed
 * them (packed ofc.v1.Schedule summaries, by topology spec) on config cfg
 * (a reference): a spec's schedule on a config depends on nothing else, so
 * it is computed once, not for every held partition on every commit. */
#define HELD_SCHEDS_MAX 64
struct held_scheds {
	struct fabcfg *cfg;
	char *spec[HELD_SCHEDS_MAX];
	uint8_t *buf[HELD_SCHEDS_MAX];
	size_t len[HELD_SCHEDS_MAX];
	uint32_t n;
};

/* The mutation worker's own: the running config and its ctl, the failures,
 * port moves and holds in effect, what the last sync saw. Only the mutation
 * worker touches them (before ofcd_run, the opening thread; after the
 * workers are joined, ofcd_close); the loop sees them through the snapshots
 * and configs the worker posts with its jobs. */
struct ofcd_worker {
	struct fabcfg *cfg;
	struct ctl *ctl;
	struct job *job; /* the job the mutation worker runs */
	char **trusted;	 /* device addresses of the --config file, as last read */
	uint32_t ntrusted;
	/* Failures (failures.c): reported at run time (persisted in
	 * STATE_DIR/FABRIC.failed), and the host ports of switches found
	 * lost; pub is cfg with them, the config schedules run on. */
	char **reported;
	uint32_t nreported;
	char **lost;
	uint32_t nlost;
	struct fabcfg *pub;
	/* Circuits moved off lost ports onto spare ones (mutation.c rewire;
	 * persisted in STATE_DIR/FABRIC.rewired): part of cfg. */
	struct port_move *moves;
	uint32_t nmoves;
	/* Partitions made at run time and held for their owners (held.c),
	 * kept in the store (STORE_HELD) so a restart or a new leader holds
	 * them too; the last few let go of (gone, for the followers' events)
	 * and the store's bytes as last read (a sync that finds them again
	 * has nothing to do). */
	struct held_part *held;
	uint32_t nheld;
	struct held_gone *gone;
	uint32_t ngone;
	char *held_bytes;
	size_t held_len;
	struct held_scheds hsched; /* (held.c) */
	/* The --config as read, which a replica's state is built on
	 * again when it syncs or takes over; what the last sync saw (the
	 * record's generation, the journal's id and phase, the store's bytes
	 * of the record, .failed and .rewired); a .failed or .rewired in the
	 * store that does not parse (mutations are refused while it is). */
	struct fabcfg *base;
	uint64_t sync_gen, sync_jid;
	const char *sync_phase;
	char *sync_bytes;
	size_t sync_len;
	char *damaged;
};

/* The workers and the jobs the loop hands them: mjob, squeue, srunning
 * and stop under mu (cond wakes the workers); the threads are started and
 * joined by the loop thread alone (ofcd_run). Two schedule workers take
 * squeue's jobs (work.c, take_schedule): public callers' on one of them at
 * a time, a caller with none running first, so a request of root's never
 * waits behind a local user's and one user's never behind another's
 * many. */
#define SCHEDULE_WORKERS 2
struct ofcd_jobs {
	pthread_mutex_t mu;
	pthread_cond_t cond;
	struct job *mjob;		  /* for the mutation worker */
	struct job *squeue, *squeue_tail; /* for the schedule workers */
	struct job *srunning[SCHEDULE_WORKERS];
	bool stop; /* the workers return */
	pthread_t mthread, sthread[SCHEDULE_WORKERS];
	bool started;
};

/* Notes from any thread to the loop (ofcd_note, ofcd_device_news): every
 * field under mu; the loop takes the list whole, woken by wake_fd. */
struct ofcd_notes {
	pthread_mutex_t mu;
	struct note *head, *tail;
	char news_from[NAME_MAX_LEN + 1]; /* the last device with news */
};

/* The loop thread's own (before ofcd_run, the opening thread's): the
 * sockets and connections, the published snapshot and config, the
 * mutation queue and what runs, the planner's hold, the replica's view.
 * No other thread touches them: the workers get what they need in their
 * jobs and answer with notes. */
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
	uint32_t nstreams;
	size_t cap_streams;
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
	 * (cluster_refresh) until a sync that read etcd whole (cluster_sync_start)
	 * or a takeover is done. */
	bool cl_reload;
	/* event_log.c: the fabric's event log as this replica sent it */
	struct event_log *evlog;
	struct state_delta *delta; /* what the last event's delta described (state_delta.c) */
};

/* plan_ahead.c: run-time partitions planned ahead, off the queue, by a
 * pool of threads, on the base the mutation worker publishes after each
 * job; the worker takes a plan when what it read is unchanged. Everything
 * here under mu (cond wakes the pool, done the worker waiting on a plan). */
struct ahead;
struct ahead_base;
struct ofcd_ahead {
	pthread_mutex_t mu;
	pthread_cond_t cond, done;
	struct ahead *head, *tail; /* waiting, in queue order */
	struct ahead_base *base;   /* the last published */
	pthread_t *threads;
	uint32_t nthreads; /* 0: none, every plan made in its turn */
	uint64_t started;  /* plans a thread took (the tests wait on it) */
	bool stop;
};
/* The renumbering search's budget for a run-time partition (a Slurm job's
 * prolog): bench/RESULTS.md, "The renumbering's budget". */
#define RELABEL_BUDGET_S 0.1
void ahead_init(struct ofcd *d);
/* (opening thread, before the workers start) The threads, and the first
 * base; ahead_stop joins them (after the workers), ahead_free at close. */
bool ahead_start(struct ofcd *d); /* false: none started */
void ahead_stop(struct ofcd *d);
void ahead_free(struct ofcd *d);
/* (loop) j, just queued: planned ahead when it is a run-time partition
 * renumbered for fewest moves (j->ahead); ahead_drop: j is freed. */
void ahead_submit(struct ofcd *d, struct job *j);
void ahead_drop(struct ahead *a);
/* (mutation worker) After each job: its config and switches' states as
 * the base for the plans made from now on. */
void ahead_publish(struct ofcd *d);
/* (mutation worker) c read, p made: 1 with a's plan moved into pc, npc
 * and rep when what it read is unchanged (ahead_same); 0: plan it now,
 * *why says why (waits for a plan being made). */
int ahead_take(struct ofcd *d, struct ahead *a, const struct ctl *c, const struct partition *p,
	       struct circuit **pc, uint32_t *npc, struct fabric_relabel *rep, const char **why);
/* (loop) Whether a thread has taken a's plan (being made or made): a
 * prolog joins a batch then, not to be planned in the worker's turn. */
bool ahead_started(struct ahead *a);
/* (loop) Whether a's plan is made, or will not be (failed, dropped). */
bool ahead_done(struct ahead *a);
/* Whether the switches' cross-connects between two of p's ports are the
 * same in then and now (per switch of f, NULL: none known): what p's
 * renumbering reads. */
bool ahead_same(const struct fabric *f, const struct partition *p,
		const struct device_state *const *then, const struct device_state *const *now);

/* The daemon: what every thread reads (set before the threads start), the
 * few fields any thread sets (atomics, devm), and one part per owner: the
 * loop thread's, the jobs handed to the workers (under jobs.mu), the notes
 * back to the loop (under notes.mu) and the mutation worker's. The schedule
 * worker, the streams' threads and the planner own nothing here: they work
 * on the job or task they were handed and the configs it holds. */
struct ofcd {
	/* Set while ofcd_open and ofcd_start run (the opening thread), only
	 * read after that, by any thread. */
	struct ofcd_opts o;
	char *state_dir;
	/* Where the record, journal, .failed and .rewired live (store.h):
	 * the files of state_dir. Every ctl of the daemon uses it. The loop
	 * writes and reads it only when clustered (etcd's store takes any
	 * thread's calls, store.h). */
	struct store *store;
	char *cred_dir; /* o.credentials_dir or the default */
	/* What requests and API configs may read (o.topology_dir opened
	 * O_PATH, its real path; dirfd -1 without one). */
	struct topo_files files;
	char *topo_dir;
	struct allow_entry *allow; /* o.allow_devices, parsed */
	uint32_t nallow;
	bool clustered; /* replicas on etcd: d->store is etcd's (cluster_open) */
	int wake_fd;	/* eventfd: notes, stop and reload requests */

	/* Any thread, without a lock: what the loop is asked to do when
	 * wake_fd wakes it (the loop clears them as it takes them). */
	atomic_int stop_req, reload_req;
	atomic_int news_req; /* a device's news (ofcd_device_news), from a driver's thread */
	atomic_bool cl_change_posted; /* a STORE_EV_CHANGED note is on its way (cluster.c) */
	atomic_bool cl_events_posted; /* ... a STORE_EV_EVENTS note */

	/* Devices' counts: the mutation worker adds, the loop reads, under
	 * devm.mu (metrics.c). */
	struct dev_metrics devm;

	struct ofcd_loop loop;
	struct ofcd_jobs jobs;
	struct ofcd_notes notes;
	struct ofcd_worker w;
	struct ofcd_ahead ahead;
};

void ofcd_log(struct ofcd *d, int level, const char *fmt, ...) OFC_PRINTF(3, 4);
/* (loop thread) A line a client's doing caused: rate-limited (struct log_limit). */
void ofcd_log_peer(struct ofcd *d, int level, const char *fmt, ...) OFC_PRINTF(3, 4);
/* (loop thread) Report the lines the limit dropped, if any and if it may. */
void ofcd_log_flush(struct ofcd *d);
/* (snapshot.c) A device failure as read-only clients and watchers see it: the reason's
 * word ("timeout", "lost", "auth", ...), "error" when there is none. */
const char *ofcd_public_reason(enum ofc_reason r);
/* Queue a note for the loop and wake it (any thread). */
void ofcd_note(struct ofcd *d, struct note *n);
/* A device's own news (device_cfg.news, any thread): the loop probes the
 * devices soon (server.c, news_probe). */
void ofcd_device_news(void *ctx, const char *device);
/* A replica's fence (ctl_opts.fence, ctx the ofcd): store_fence,
 * for the devices. */
double ofcd_fence(void *ctx);

/* policy.c: what a config may make the daemon do (credentials, addresses) */
int ofcd_allow_parse(struct ofcd *d, struct ofc_error *err);
/* Before validation: credentials inside the credentials directory; for a
 * config from the API (from_api), device addresses allowed. Errors are
 * OFC_E_INPUT at the offending node. */
int ofcd_check_config(const struct ofcd *d, const struct fabric *f, bool from_api,
		      struct ofc_error *err);
/* Remember the --config file's device addresses (worker). */
void ofcd_trust_config(struct ofcd *d, const struct fabric *f);

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
/* Move what c's devices counted (commands, errors) into d->devm and take
 * their last contact; c's counts start again from 0. */
void metrics_devices_take(struct ofcd *d, struct ctl *c);
/* What d->devm counted, into s's devices as GetState shows them
 * (last_contact_unix_ms, commands, errors; absent: not talked to). */
void metrics_devices_show(struct ofcd *d, struct snapshot *s);
void metrics_devices_free(struct dev_metrics *m);

/* work_ctl.c: the mutation worker's ctls and events, shared by the files
 * of its jobs (startup.c, takeover.c, mutation.c, planner.c). */
/* A ctl closed, what its devices counted kept first (metrics.c). */
void ofcd_ctl_close(struct ofcd *d, struct ctl *c);
/* A ctl on f with the daemon's store, callbacks and fence; strict: every
 * --device override (else those naming a device of f). */
int ofcd_open_ctl(struct ofcd *d, struct fabric *f, bool strict, struct ctl **out,
		  struct ofc_error *err);
/* The worker's next ctl on f: opened as above, handed what the worker's
 * current ctl knows (ctl_handover) and quiet where it was (ctl_quiet). */
int ofcd_open_next_ctl(struct ofcd *d, struct fabric *f, struct ctl **out, struct ofc_error *err);
/* A note for the loop; one saying how a job ended travels with it. */
void ofcd_post_note(struct ofcd *d, struct note *n);
/* An event: message to watchers, detail (NULL: the message) to the log. */
void ofcd_post_event(struct ofcd *d, Ofc__V1__Event__Kind kind, uint64_t txn, const char *device,
		     const char *message, const char *detail, enum ofc_reason reason);
void ofcd_log_error(struct ofcd *d, const char *what, const struct ofc_error *err);
/* The running YAML with another topology and the port moves in effect: a
 * new fabric, validated (from_client: edge lists only under d->files). */
int ofcd_fabric_with_topology(const struct ofcd *d, const struct fabcfg *cfg, const char *spec,
			      bool from_client, struct fabric **out, struct ofc_error *err);
/* The port moves are over (a new config, or one they do not fit). */
void ofcd_drop_moves(struct ofcd *d);
/* (mutation worker, mutation.c) ApplyConfig, Reconfigure, MoveToPhase
 * and reloads; a device probe (JOB_PROBE). */
void ofcd_run_mutation(struct ofcd *d, struct job *j);
void ofcd_run_probe(struct ofcd *d, struct job *j);
/* The running config from what the store holds, and its snapshot
 * (strict: the start, where damage stops it; leader: it may write). */
int ofcd_adopt(struct ofcd *d, bool strict, bool leader, struct snapshot **snap,
	       struct ofc_error *err); /* startup.c */
/* (schedule worker, schedule_job.c) GetSchedule's answers: the
 * pipeline's, and the fluid engine's on a server fabric. */
void ofcd_run_schedule(const struct ofcd *d, struct job *j);
void ofcd_run_schedule_fluid(struct job *j);
/* The fluid engine's schedule for j (ofcd_run_schedule_fluid, stream.c),
 * planned from its period: 0 with resp's status and message set and
 * resp->schedule its head (every figure, the vertices, no steps) in a; -1
 * with resp's refusal. fa is the caller's to free either way. */
struct fluid_answer;
int ofcd_fluid_compute(struct job *j, struct fluid_answer *fa, Ofc__V1__Response *resp,
		       struct arena *a);
/* GetSchedule's computation for j (ofcd_run_schedule, stream.c): 0 with r
 * computed and resp's status and message set; -1 with resp's refusal.
 * Strings live in a. */
int ofcd_schedule_compute(const struct topo_files *files, struct job *j, struct ofc_clock *clk,
			  struct schedule_result *r, Ofc__V1__Response *resp, struct arena *a);
/* The answer's Schedule without its steps: header, figures, links (and
 * the reduced form's group unless the steps are its expansion). */
Ofc__V1__Schedule *ofcd_schedule_head(struct arena *a, const struct schedule_result *r,
				      bool expanded);
/* Whether j's answer is r's expansion, not the schedule as computed: one
 * kept as structure under failures (the healthy program and a patch), or
 * symmetry-reduced where j did not ask for it (a lost switch's). */
bool ofcd_expanded(const struct job *j, const struct schedule_result *r);
/* Such a schedule (is_patched, or reduced with one program) as the stream
 * of its expansion, p->st, made a step at a time and never held whole
 * (the whole answer's frame, stream.c's frames). o must outlive p; close
 * p after. */
struct ofcd_patched {
	struct sched_reduced red;
	struct sched_patch none; /* a reduced one's: empty */
	struct sched_patched_stream ps;
	struct sched_stream st;
};
void ofcd_patched_open(struct ofcd_patched *p, const struct schedule_outcome *o);
void ofcd_patched_close(struct ofcd_patched *p);
int ofcd_start(struct ofcd *d, struct ofc_error *err); /* startup.c: config, lock, recovery */
/* (mutation worker, takeover.c) JOB_TAKEOVER and JOB_SYNC. */
void ofcd_run_takeover(struct ofcd *d, struct job *j);
void ofcd_run_sync(struct ofcd *d, struct job *j);

/* cluster.c: replicas on etcd */
/* (ofcd_start) d->store becomes etcd's for this fabric; its state read
 * once. */
int cluster_open(struct ofcd *d, const char *fabric, struct ofc_error *err);
/* (ofcd_run) Start campaigning. */
int cluster_start(struct ofcd *d, struct ofc_error *err);
/* (loop) The store's view into d->loop.cl, its changes logged; true when it
 * changed what GetState shows. */
bool cluster_refresh(struct ofcd *d);
/* (loop) STORE_EV_DEPOSED: this replica leads no more; what it shows is
 * stale until a sync read etcd again (the caller asks for one). */
void cluster_deposed(struct ofcd *d);
/* (mutation worker) A sync's start: etcd read whole first when j->reload,
 * so a deposed replica shows what etcd holds, not what it last wrote or
 * what its watch has delivered so far. Returns whether this replica leads. */
bool cluster_sync_start(struct ofcd *d, struct job *j);
/* (loop) A takeover or a sync j is done: a reload's ends the staleness. */
void cluster_synced(struct ofcd *d, const struct job *j);

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
/* Whether a mutation may run here now, by view v: STATUS_OK, else
 * STATUS_NOT_LEADER: a follower (msg says who leads), or a replica that
 * cannot confirm with etcd who leads (msg says why). Either way clients
 * go on to the leader the answer names (cluster_refusal_leader: NULL
 * when there is none to name), or to the next replica. */
Ofc__V1__Status cluster_refusal(const struct ofcd *d, const struct store_cluster *v, char *msg,
				size_t n);
Ofc__V1__Leader *cluster_refusal_leader(struct arena *a, const struct store_cluster *v);
/* Messages of view v (in a): State.cluster and Response.leader (NULL when
 * no replica leads). */
Ofc__V1__Cluster *cluster_msg(struct arena *a, const struct ofcd *d, const struct store_cluster *v);
Ofc__V1__Leader *cluster_leader_msg(struct arena *a, const struct store_cluster *v);
void *ofcd_mutation_worker(void *arg);
void *ofcd_schedule_worker(void *arg);
void *ofcd_schedule_worker_2(void *arg); /* the second (SCHEDULE_WORKERS) */
void ofcd_run_job(struct ofcd *d, struct job *j);

/* planner.c: the workload's schedule computed off the start path.
 * A detached thread computes an all-to-all's schedule (the MCF: minutes on
 * a large fabric) on a config reference; the daemon may let go of it at
 * any time (a new config, shutdown) without waiting: letting go cancels
 * the MCF, which stops within a pivot or so, and the thread drops what it
 * found. */
struct planner_task {
	pthread_mutex_t mu;
	unsigned refs;	    /* under mu: the thread's, the daemon's, notes', jobs' */
	struct ofcd *d;	    /* under mu: NULL once the daemon let go */
	struct fabcfg *cfg; /* the config planned (a reference) */
	uint64_t since_ms;  /* unix ms when it started */
	uint32_t max_frame; /* the daemon's (the thread never reads d->o) */
	atomic_bool cancel; /* set when the daemon lets go: the MCF stops */
	/* The result, the thread's until it posts its note; then read by
	 * the loop and moved out by the mutation worker (JOB_PLANNER). */
	struct planner_out {
		uint8_t *sched; /* packed ofc.v1.Schedule summary, NULL: none */
		size_t sched_len;
		uint8_t *full; /* GetSchedule's answer (fabcfg.plan_full), NULL: */
		size_t full_len;
		char *full_why;		   /* ... why not */
		struct schedule_kept kept; /* healthy all-to-all: the MCF run */
		char kept_why[240];
		char *message; /* what the event says */
		bool ok;       /* a verified schedule */
	} out;
};
/* Whether cfg's workload schedule is left to the planner: an all-to-all on
 * a direct-connect topology, not computed yet. (Mutation worker, or the loop
 * once the config is published: `planned` is read with acquire.) */
bool planner_needed(struct fabcfg *cfg);
/* (loop) Start a planner for cfg; NULL when the thread cannot start. */
struct planner_task *planner_start(struct ofcd *d, struct fabcfg *cfg);
/* Let go of a reference; the daemon's own (ofcd_close, a new config) also
 * cancels the thread's MCF and tells it to drop its result. */
void planner_unref(struct planner_task *t);
void planner_abandon(struct planner_task *t);
/* The workload's schedule on pub (its failures in effect): the same query
 * a re-plan makes; kept: the healthy config's kept run to start from (NULL:
 * none); keep: keep this run's MCF solution in out->kept (pub healthy);
 * cancel: stops the MCF once true (NULL: none; the planner's).
 * What it found is appended to msg ("..., verified, DONE in S s" since t0);
 * GetSchedule's whole answer goes to out->full when it fits max_frame (0:
 * not built). Any thread: reads pub->f only. */
void planner_compute(const struct fabcfg *pub, const struct schedule_kept *kept,
		     const char *kept_why, bool keep, const atomic_bool *cancel, double t0,
		     const char *done, uint32_t max_frame, struct strbuf *msg,
		     struct planner_out *out);
/* (mutation worker) Move out's whole answer (or why there is none) to cfg,
 * not planned yet. */
void planner_keep_full(struct fabcfg *cfg, struct planner_out *out);
void planner_out_free(struct planner_out *o);
/* (mutation worker) JOB_PLANNER: install the planner's result on its config
 * and, when it is the one published, a snapshot and the event. */
void ofcd_run_planner(struct ofcd *d, struct job *j);

/* state_schedule.c: the workload's schedule on the committed topology, as
 * State.schedule shows it, computed off the commit's path (a snapshot
 * leaves it out: snapshot.sched_want), symmetry-reduced where the
 * topology admits it, by the leader (one ofcd, or the replica that leads)
 * when it publishes a state; a follower computes it when a client asks
 * for the state. One computation at a time; a state published meanwhile
 * waits for it. (loop thread) */
/* The published snapshot wants its schedule: show the one kept, or start
 * computing it (asked: a client asks for the state, a follower too). */
void state_schedule_check(struct ofcd *d, bool asked);
/* A computation finished (t: the note's reference, ours now). */
void state_schedule_landed(struct ofcd *d, struct state_sched_task *t);
/* When the computation of the published state's schedule began (unix
 * ms), 0: none runs for it. */
uint64_t state_schedule_since(const struct ofcd *d);
/* Tests' seam: called on the computation's thread with the schedule found,
 * before it is summarised (a slow engine, a schedule the verifier
 * refuses); NULL: none. */
extern void (*state_schedule_test_hook)(struct schedule_result *r);
/* ofcd_close: let go of the computation (its thread drops its result) and
 * of what is kept. */
void state_schedule_stop(struct ofcd *d);
/* (any thread) The workload's schedule (coll, size) on cfg kept as
 * structure: on spec, or the config's healthy graph, its symmetry-reduced
 * form (on the topology's own numbering: the fabric's NIC ports would
 * break the translations); with failures in effect on the config's graph,
 * the fabric's degraded graph asked for its structure (BFB: the healthy
 * program and a patch, else the explicit schedule with r->note saying
 * why). 0 with r computed and checked; -1 with err when it does not
 * apply (the caller computes the explicit schedule). */
int state_schedule_structured(const struct fabcfg *cfg, const char *spec,
			      enum sched_collective coll, uint64_t size, struct schedule_result *r,
			      struct ofc_error *err);
/* How r's main outcome is kept, for a log line or an event: ", kept as
 * structure (...)", ", symmetry-reduced (...)", " (explicit: WHY)" or "". */
void state_schedule_form(const struct schedule_result *r, char *buf, size_t n);
/* (jobs.c: a task is handed between threads, as the planner's) */
void state_sched_task_unref(struct state_sched_task *t);
/* A computation: the loop's and its thread's, handed over in a note. */
struct state_sched_task {
	pthread_mutex_t mu;
	unsigned refs;	    /* under mu: the thread's, the daemon's, a note's */
	struct ofcd *d;	    /* under mu; NULL: the daemon let go */
	struct fabcfg *cfg; /* a reference */
	char *spec;	    /* the committed topology, NULL: the config's */
	uint64_t since_ms;
	/* the result */
	uint8_t *sched; /* packed ofc.v1.Schedule summary, NULL: none */
	size_t sched_len;
	bool verified;
	char *why;  /* no schedule, or not verified: why */
	char *line; /* for the log and the event */
};

/* held.c: partitions made at run time of given hosts */
#define HELD_MAX_HOSTS 65536
struct held_part {
	struct partition p; /* members are host names; member_host as of when it was made */
	uint64_t txn;	    /* the commit that last aimed it */
	uint32_t ops;	    /* ... and what it changed */
	char *owner;	    /* uid:N, or the gateway principal's identity */
	uint64_t since_ms;  /* first held (unix ms) */
};
/* A hold let go of (HeldPartitions.Gone). */
struct held_gone {
	char *name, *reason;
	bool dropped; /* by ofcd, not by its owner */
	uint64_t time_ms;
};
/* What a mutation's commit does to the holds (held_stage): the partitions
 * it holds (add[], each with its owner and its own operations: one, or a
 * batch of prologs committed together) and the holds it drops (their
 * hosts gone from the new config), written with the commit's record
 * (held_commit_also as ctl.commit_also) and made so in memory once it
 * committed (held_committed). */
struct held_stage {
	struct ofcd *d;
	const struct partition **add; /* nadd of them (borrowed) */
	char **owner;		      /* per add */
	uint32_t *ops;		      /* per add; UINT32_MAX: the whole plan's */
	uint32_t nadd;
	char **drop_why; /* per d->w.held as staged (nstaged): NULL kept, else why */
	uint32_t nstaged, ndrop;
	uint64_t now_ms; /* a new hold's since, alike in the store and in memory */
};
void held_stage(struct ofcd *d, const struct job *j, const struct partition *add,
		const struct fabric *f, struct held_stage *hs);
/* ... of n partitions add[k] for jobs j[k], ops[k] operations each. */
void held_stage_many(struct ofcd *d, struct job *const *j, const struct partition *const *add,
		     const uint32_t *ops, uint32_t n, const struct fabric *f,
		     struct held_stage *hs);
void held_commit_also(void *ctx, const struct ctl *c, struct store_write *w);
/* add (moved in when not NULL: *add is left empty) held after its commit
 * txn of ops operations; the drops made; their events posted. */
void held_committed(struct held_stage *hs, struct partition *add, uint64_t txn, uint32_t ops);
/* ... the n partitions staged by held_stage_many (add[k] moved in). */
void held_committed_many(struct held_stage *hs, struct partition *const *add, uint64_t txn);
void held_stage_free(struct held_stage *hs);
/* (mutation worker) The holds as the store keeps them, into d->w.held,
 * checked against d->w.cfg: an entry that does not fit it (a host it
 * lacks, a host held twice, a config partition's name) is dropped, logged
 * and announced, and a leader writes the list again. announce: post
 * events for what changed since the last load (a follower's watchers hear
 * the leader's holds and releases). A damaged item is an error naming it
 * and the command that sets it aside; d->w.held is left as it was. */
int held_adopt(struct ofcd *d, bool leader, bool announce, struct ofc_error *err);
/* (mutation worker) The run-time partition `name` of hosts on f, aimed at
 * spec (read under d->files): hosts known and distinct, none held under
 * another name, the topology one node per host, strongly connected and
 * within the hosts' ports. */
int held_make(const struct ofcd *d, const struct fabric *f, const char *name, char *const *hosts,
	      uint32_t nhosts, const char *spec, struct partition *out, struct ofc_error *err);
/* ... the same without looking at the holds (plan_ahead.c: any thread;
 * the worker's held_make checks them at the commit). */
int held_make_ahead(const struct ofcd *d, const struct fabric *f, const char *name,
		    char *const *hosts, uint32_t nhosts, const char *spec, struct partition *out,
		    struct ofc_error *err);
void held_partition_free(struct partition *p);
/* (mutation worker) c's plan touches no port of a partition held under
 * another name than `name` ("": any held partition). */
int held_check_plan(const struct ofcd *d, const struct ctl *c, const char *name,
		    struct ofc_error *err);
/* ... under none of names[0..n). */
int held_check_plan_many(const struct ofcd *d, const struct ctl *c, const char *const *names,
			 uint32_t n, struct ofc_error *err);
/* (mutation worker) ReleasePartition j->partition, written to the store
 * first: 0 released; -1 with err: OFC_E_INPUT when none of that name is
 * held, else the store's error (nothing changed). */
int held_release(struct ofcd *d, const struct job *j, struct ofc_error *err);
/* ... of n jobs' partitions, each held (distinct names), in one write of
 * the store: 0 all released, -1 none (the store's error). */
int held_release_many(struct ofcd *d, struct job *const *j, uint32_t n, struct ofc_error *err);
/* (mutation worker) Whether j may change or let go of the partition it
 * names when that is held: its owner, an admin or a socket's client may; a
 * tenant whose partitions' pattern matches the name may not (a pattern
 * says which names a tenant may take, not whose holds it may end). false
 * with why (the refusal, which names no owner). */
bool held_may(const struct ofcd *d, const struct job *j, char *why, size_t n);
void held_free_all(struct ofcd *d);
/* (mutation worker) State.held of a snapshot being built. */
void held_state(struct ofcd *d, struct snapshot *s);
void held_scheds_free(struct held_scheds *c);
/* (mutation worker) JOB_RELEASE. */
void ofcd_run_release(struct ofcd *d, struct job *j);
/* (mutation worker) JOB_ADOPT (adopt.c). */
void ofcd_run_adopt(struct ofcd *d, struct job *j);
/* (mutation worker) JOB_TESTBED_RUN, _CHECK and _DOWN (testbed.c). */
void ofcd_run_testbed(struct ofcd *d, struct job *j);

/* ---- the job's plan (jobplan.c) -------------------------------------------- */

/* GetPlan's answer into j->reply: the running config's workload planned. */
void ofcd_run_get_plan(const struct ofcd *d, struct job *j);
/* MoveToPhase's target: the spec of the topology the chosen way gives j's
 * phase (*spec, the caller frees), which the running config then takes as a
 * Reconfigure's (and a restart the record's); j->target says which. */
int ofcd_phase_spec(const struct fabcfg *cfg, struct job *j, char **spec, struct ofc_error *err);

/* failures.c: failures reported at run time and lost switches */
#define FAIL_MAX_ITEMS 4096
/* Syntax alone: "U-V" or "HOST:PORT" with names a config may have. */
bool failure_item_ok(const char *item);
/* STATE_DIR/FABRIC.failed into d->w.reported (none: empty). A damaged file
 * is an error naming it and the mv that sets it aside. */
int failures_load(struct ofcd *d, const char *fabric, struct ofc_error *err);
/* d->w.cfg with d->w.reported and d->w.lost in effect (a new reference). */
struct fabcfg *failures_publish(struct ofcd *d);
/* (mutation worker) ReportFailure: change the set, persist it, re-plan. */
void ofcd_run_failure(struct ofcd *d, struct job *j);
/* (mutation worker) After reading the devices: d->w.lost = the host ports
 * of lost switches and those cabled to switch ports the switch reports
 * failing (port alarms: a FAILED port in use, light under min_power);
 * true when that changed (the caller re-plans), with what changed in
 * cause. */
bool failures_devices(struct ofcd *d, char *cause, size_t n);
/* (mutation worker) Change d->w.reported as a ReportFailure job asks, and
 * persist it; on error nothing changed. */
int failures_report(struct ofcd *d, const struct job *j, struct ofc_error *err);
/* (planner.c, mutation worker) Publish d->w.cfg with the failures in effect:
 * config and snapshot on j, and a KIND_SCHEDULE_REPLANNED event. */
void ofcd_replan(struct ofcd *d, struct job *j, const char *cause, char *sentence, size_t n);
/* Port moves (re-wiring around lost ports): STATE_DIR/FABRIC.rewired into
 * d->w.moves (a damaged file is an error naming it), written back (none: no
 * file), and copied into a fabric before it is validated. */
int moves_load(struct ofcd *d, const char *fabric, struct ofc_error *err);
/* Forget d->w.moves (in memory: the file stays). */
void moves_clear(struct ofcd *d);
/* The readers' halves that take the file's text (len bytes, changed in
 * place; path names it in errors), appending to d->w.reported or
 * d->w.moves (the moves against d->w.cfg's hosts): the loaders call them,
 * and so does the fuzzer. On error the set is emptied. */
int failures_parse(struct ofcd *d, const char *path, char *text, size_t len, struct ofc_error *err);
int moves_parse(struct ofcd *d, const char *path, char *text, size_t len, struct ofc_error *err);
int moves_save(struct ofcd *d, struct ofc_error *err);
void moves_apply(const struct ofcd *d, struct fabric *f);
bool failures_has(const struct ofcd *d, const char *item);
/* (snapshot.c) Free n strings and the array. */
void strv_free(char **v, uint32_t n);

/* wire.c: whether a string field of the packed message p (of type d),
 * nested ones too, holds a NUL byte, which protobuf-c's unpack cuts the
 * string at; *field names the first such field. */
/* ReleasePartition's partition (partition, else its older spelling name;
 * NULL: neither, or both and unlike). */
const char *wire_release_name(const Ofc__V1__ReleasePartition *rp);
bool wire_string_with_nul(const ProtobufCMessageDescriptor *d, const uint8_t *p, size_t len,
			  const char **field);

/* setup.c: what ofcd_open does before it serves. */
int listen_unix(const char *path, unsigned mode, int gid, int *out, struct ofc_error *err);
int check_socket_dir(const char *path, const char *option, struct ofc_error *err);
void fd_limit(struct ofcd *d);
void ro_budget(struct ofcd_opts *o);
int open_topology_dir(struct ofcd *d, struct ofc_error *err);

/* A packed Response (caller frees *buf). */
void response_pack(const Ofc__V1__Response *r, uint8_t **buf, size_t *len);

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

#endif
