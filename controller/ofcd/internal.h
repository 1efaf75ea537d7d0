/* Private to controller/ofcd/: what ofcd's threads share. The daemon's
 * state is cut along its threads: the loop thread's half (struct ofcd_loop,
 * d->loop) is complete only in conn.h, the mutation worker's (struct
 * ofcd_worker, d->w) only in worker.h, and no file includes both
 * (scripts/check-layers.py), so a file reaches at most one half. Here is
 * what crosses between them and what any thread reads:
 *
 *   the configs (struct fabcfg, immutable once shared) and snapshots a
 *   worker builds and the loop publishes; the jobs the loop hands the
 *   workers (under d->jobs.mu) and the notes they send back (events and
 *   finished jobs, under d->notes.mu, with an eventfd to wake the loop);
 *   the options and what else is set before the threads start; the few
 *   fields any thread sets (atomics, devm under its mutex); the planner's,
 *   the state schedule's and the streams' tasks, each under its own mutex;
 *   what runs at opening and closing, before and after the threads.
 *
 * The schedule workers, the streams' threads and the planner own nothing
 * of struct ofcd: they work on the job or task they were handed and the
 * configs it holds. docs/ARCHITECTURE.md, "controller/ofcd/, by the thread
 * that runs it", says which file runs on which thread. */
#ifndef OFC_CONTROLLER_OFCD_INTERNAL_H
#define OFC_CONTROLLER_OFCD_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <sys/socket.h>

#include "controller/api/api.h"
#include "controller/config/config.h"
#include "controller/export/export.h"
#include "controller/ofcd/ofcd.h"
#include "controller/pick/pick.h"
#include "controller/reconfig/reconfig.h"
#include "controller/schedule/schedule.h"
#include "proto/control.pb-c.h"
#include "proto/planner.pb-c.h"

/* A healthy run kept for the re-plans (a packed ofc.v1.KeptRun,
 * proto/mcf.proto; buf NULL: none) and what its solution holds in memory
 * once a planner unpacks it. */
struct kept_run {
	uint8_t *buf;
	size_t len, bytes;
};

/* A validated config, immutable once shared: the mutation worker, the
 * snapshots and the schedule jobs each hold a reference. */
struct fabcfg {
	atomic_uint refs;
	/* Set by the loop each time it makes this config its own (mpi_jobs.c,
	 * mpi_jobs_publish): the count of configs it took so far, what a
	 * running job's asks are numbered by; 0: never the loop's. */
	atomic_uint_least64_t pub_seq;
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
	char **failed_by_host; /* those of failed a host's agent made */
	uint32_t nfailed_by_host;
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
	/* A WDM ring's OpTree schedule (packed ofc.v1.Schedule), asked of a
	 * planner once for this config, or why there is none: the snapshot is
	 * built on every change and the answer depends on the config alone.
	 * Under ring_mu. */
	pthread_mutex_t ring_mu;
	bool ring_asked;
	uint8_t *ring_plan;
	size_t ring_plan_len;
	char *ring_why;
	/* An all-to-all workload's healthy MCF run, kept by the
	 * planner (or a re-plan) that computed the workload on this config's
	 * healthy graph:
	 * a re-plan after a failure warm-starts from its solution and prices
	 * "vs healthy" from it instead of solving the healthy graph again. It
	 * dies with the config (ApplyConfig, reload, Reconfigure, a re-wire
	 * make a new one). At most KEPT_MAX_BYTES; kept_why says why none is
	 * kept (for the re-plan's message), "" when none was tried. Mutable
	 * like plan. Kept packed (a KeptRun): only a planner process unpacks
	 * it, ofcd holds no engine's state. */
	struct kept_run kept;
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
	/* What the config's own schedules may hold (the state's, the
	 * planner's, a failure's re-plan): the daemon's --max-request-memory,
	 * as one GetSchedule; 0: half the machine's (schedule_memory_limit). */
	uint64_t max_memory;
};

/* The most a config's kept healthy MCF solution may hold. genkautz:1024,4's
 * (mirrored: the group, 51 classes' trees, the lengths) holds 1.2 MiB
 * (bench/results/replan.md); a plain solution (no symmetry) keeps a
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

/* o: the daemon's options (NULL: the defaults): its --lp-solver, the
 * config's `lp_solver` unless it names one, and its --max-request-memory,
 * what the config's own schedules may hold (max_memory). */
struct fabcfg *fabcfg_new(struct fabric *f, const char *yaml, size_t len, const char *path,
			  const struct ofcd_opts *o);
struct fabcfg *fabcfg_ref(struct fabcfg *c);
void fabcfg_unref(struct fabcfg *c);

/* The last committed state, as the loop serves it. Built by a worker,
 * then owned by the loop thread (which overlays device reachability on
 * it in place). */
struct snapshot {
	struct arena a;
	uint64_t serial;       /* one per snapshot built, in this process */
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

/* (a WDM ring's OpTree schedule asked of a planner process through d) */
struct snapshot *snapshot_build(const struct ofcd *d, const char *state_dir, struct ctl *c,
				struct fabcfg *cfg, char *why, size_t why_len);
void snapshot_free(struct snapshot *s);

/* views.c: what every replica shows alike, from the store's state alone */
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
	JOB_DRAIN,   /* Drain: switch ports out of service or back (drain.c) */
	JOB_PLANNER, /* the planner's result: install it on its config, publish */
	JOB_RELEASE, /* ReleasePartition: let go of a run-time partition */
	/* cluster.c: this replica leads now: repair what the last
	 * leader left and serve the store's state as the leader */
	JOB_TAKEOVER,
	JOB_SYNC,  /* a follower: serve the state its watch of etcd delivered */
	JOB_ADOPT, /* Adopt: end an incomplete rollback (adopt.c) */
	/* TestbedRun: collectives on the testbed's hosts (testbed.c) */
	JOB_TESTBED_RUN,
	JOB_TESTBED_CHECK,  /* TestbedCheck (testbed.c) */
	JOB_TESTBED_DOWN,   /* TestbedDown (testbed.c) */
	JOB_TESTBED_UP,	    /* TestbedUp (testbed_up.c) */
	JOB_TESTBED_MPIRUN, /* TestbedMpirun (testbed.c) */
	JOB_NKINDS
};

/* Where a job runs. */
enum job_thread {
	JOB_ON_MUTATION = 1, /* the mutation worker, one at a time (its row's run) */
	JOB_ON_SCHEDULE,     /* a schedule worker, which hands it to a planner process */
};
/* What ofcd's metrics count a finished job as (metrics_job_done). */
enum job_metric {
	JOB_METRIC_NONE,
	JOB_METRIC_SCHEDULE, /* ofc_schedule_requests_total, ofc_schedule_duration_seconds */
	JOB_METRIC_REPLAN,   /* ofc_replans_total, ofc_replan_duration_seconds */
	JOB_METRIC_TXN,	     /* ofc_transactions_total, ofc_transaction_duration_seconds */
};
#define JOB_MAX_REQUESTS 2
/* The job table (job_table.c), a row per job kind as the request table
 * (controller/api) has a row per request: the requests whose handlers
 * queue it (request_job takes the kind from here, never from the
 * handler), where it runs, its words and what the metrics count it as. A
 * request queues one job kind at most; a row without requests is ofcd's
 * own (a reload, a probe, a takeover). */
struct job_row {
	const char *name;   /* "reconfigure": State's TransactionInfo.kind, the log's */
	const char *answer; /* its answer's TransactionInfo.kind (answer.c) */
	enum job_thread thread;
	enum job_metric metric;
	/* a transaction the queue holds with a ticket (State.queue, Cancel);
	 * not the daemon's own probe, the planner's result, a takeover */
	bool mutation;
	enum api_kind requests[JOB_MAX_REQUESTS];
	uint8_t nrequests;
};
extern const struct job_row job_table[JOB_NKINDS];
/* The job kind a request of kind k queues (its row's), 0: none. */
enum job_kind job_kind_of_request(enum api_kind k);
/* (work.c) Whether the mutation worker has a handler for kind k (its
 * runners[]): every JOB_ON_MUTATION row has one. */
bool job_runs_on_worker(enum job_kind k);
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
	bool streamed;	       /* ... answered a frame at a time (the planner's) */
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
	/* schedule of a held partition: its hosts in its nodes' order (the
	 * state's), named in the answer's links so that a rank maps by host */
	char **node_names;
	uint32_t nnode_names;
	bool relabel;
	bool workload;
	/* reconfigure (spec or workload): on the ports no held partition
	 * has, the held partitions' circuits left as they are */
	bool free_ports;
	/* reconfigure of the fabric's topology in stages (staged.c): at most
	 * max_loss percent of its bandwidth lost at any moment, grace_ms for
	 * the jobs between a stage's schedule and its circuits */
	bool staged;
	double max_loss;
	/* reconfigure (topology, workload) and apply-config: wait up to
	 * verify_wiring_ms after the commit for the hosts' LLDP to confirm
	 * every circuit it changed, else roll back (wiring_verify.c; 0: not
	 * verified). undo_cfg: the config running before, which the worker
	 * keeps for that rollback (a reference); undo: this job is that
	 * rollback, to undo_cfg (its config and topology) as it is. */
	uint32_t verify_wiring_ms;
	struct fabcfg *undo_cfg;
	bool undo;
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
	bool by_host; /* report-failure: made by a host's agent (ReportLinks) */
	/* drain (restore: undrain): items SWITCH or SWITCH:PORT; force: cut
	 * hosts off if it must; grace_ms: between publishing and removing */
	bool force;
	uint32_t grace_ms;
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
	/* A failure report's re-plan: the config whose state's schedule the
	 * loop writes to the store for the other replicas once it has sent
	 * the answer (state_schedule_publish), not before it. */
	struct fabcfg *share;
	struct probe_dev *probe;
	uint32_t nprobe;
	bool startup;	  /* probe: the check once at start, reported in the log */
	uint64_t done_ms; /* takeover: when it finished (unix ms) */
	bool reload;	  /* sync: read etcd whole first (d->loop->cl_reload when it started) */
	bool reloaded;	  /* ... and it did, this replica following */
	uint64_t txn;	  /* the transaction it ran (0: none) */
	/* adopt: commit the transaction adopt_txn as generation adopt_gen
	 * (else a preview) */
	bool adopt_commit;
	uint64_t adopt_txn, adopt_gen;
	double alpha;	   /* testbed run: seconds a step (0: the testbed's model's) */
	double rate_scale; /* testbed up: of the config's link rate (0: not asked) */
	/* testbed run: a schedule's bytes to run (ofc schedule --format pb;
	 * NULL: computed), whether a collective was asked, MPICH's run too */
	uint8_t *schedule_pb;
	size_t schedule_pb_len;
	bool coll_asked, mpi;
	char *what_if; /* testbed run --topology: applied for the runs (NULL: none) */
	/* testbed mpirun: the program and its arguments (NULL-terminated),
	 * the MPI, and whether libofc-mpi runs none of ofc's schedules */
	char **argv;
	uint32_t nargv;
	bool openmpi, no_preload;
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
	/* A batch's member after the first: its watchers hear the event, the
	 * log has it once already (the first member's line) */
	bool logged;
	/* A running job's state and config published before it ends (a
	 * drain's schedule before its circuits go): the loop makes them the
	 * daemon's, then delivers the events deferred with them. */
	struct snapshot *snap;
	struct fabcfg *cfg;
	struct note *deferred;
};

/* stream.c: a streamed GetSchedule's thread and the loop agree
 * on how many frames the loop holds for the client (inflight, at most a
 * window); the loop acknowledges each once the client's unsent answers
 * are below OUT_HIGH, and cancels when the client is gone. */
/* What starting a planner process takes (planner_proc.c), copied from
 * the daemon (planner_how) by whoever may outlive it: the program, the
 * topology directory, the most any request may hold. */
struct planner_how {
	char *path;
	char *topo_dir;
	uint64_t max_memory;
	/* What it computes, a word in its command line (ps, a test picks
	 * it by): "request" (planner_how's), "state", "workload". */
	const char *role;
};
struct stream {
	pthread_mutex_t mu;
	pthread_cond_t cond;
	struct ofcd *d; /* only under mu, and only while !orphan */
	/* What the thread reads of the daemon, copied when the stream is
	 * made: ofcd_close may free d while the thread computes. */
	double wait;		/* 2 x the client timeout */
	struct planner_how how; /* the stream's planner process */
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

/* The jobs running ofcd's schedules (mpi_jobs.c): a caller of GetSchedule
 * within the last MPI_JOB_WINDOW_S seconds, by the job's name
 * (libofc-mpi's GetSchedule.job) or, naming none, by its principal; the
 * loop writes it (asks, acknowledgements, ends), a drain's wait on the
 * mutation worker reads it, under mu. */
#define MPI_JOBS_MAX	 256
#define MPI_JOB_WINDOW_S 30.0
#define MPI_JOB_NAME_MAX 64
struct mpi_job {
	char name[MPI_JOB_NAME_MAX + 1];      /* "": a caller that named no job */
	char partition[MPI_JOB_NAME_MAX + 1]; /* "": the fabric */
	char who[MPI_JOB_NAME_MAX + 1];	      /* its principal */
	double asked;			      /* now_seconds() of its last ask */
	/* The least config (pub_seq) its taking asks saw since it last said
	 * it took them (UINT64_MAX: none), and the one it said it runs. */
	uint64_t taking_min, taken;
	double taken_at; /* now_seconds(), 0: never said */
};
struct mpi_jobs {
	pthread_mutex_t mu;
	struct mpi_job *v; /* [MPI_JOBS_MAX] */
	uint32_t n;
	uint64_t published; /* configs the loop took (fabcfg.pub_seq) */
	double overflow;    /* now_seconds() a job was last pushed out (0: never) */
	/* (metrics, without the lock) jobs a drain or a stage waited for that
	 * said they took its schedule, and that its grace covered */
	atomic_uint_least64_t waited_taken, waited_grace;
};

/* The workers and the jobs the loop hands them: mjob, squeue, srunning
 * and stop under mu (cond wakes the workers); the threads are started and
 * joined by the loop thread alone (ofcd_run). Two schedule workers take
 * squeue's jobs (work.c, take_schedule): public callers' on one of them at
 * a time, a caller with none running first, so a request of root's never
 * waits behind a local user's and one user's never behind another's
 * many. */
#define SCHEDULE_WORKERS 2
/* How long a schedule worker (and its planner process, which keeps the
 * last fabric it rebuilt) waits for the next job before it ends. */
#define SCHEDULE_IDLE_SECONDS 60
/* A schedule worker's planner process (planner_proc.c): pid 0 when none
 * runs (started on the next job); fd the socket to it. Only its worker
 * touches it; pid is atomic so ofcd_close may read it. */
struct planner_proc {
	_Atomic pid_t pid;
	int fd;
	/* (optional) A shared page the planners it starts map read-only
	 * (`--cut-fd`): its first word cuts a renumbering's budget while it
	 * runs (relabel_opts.cut_us; plan_ahead.c writes it). -1 or 0: none
	 * (a zeroed planner_proc has none: 0 is never this descriptor). */
	int cut_fd;
};
struct ofcd_jobs {
	pthread_mutex_t mu;
	pthread_cond_t cond;
	struct job *mjob;		  /* for the mutation worker */
	struct job *squeue, *squeue_tail; /* for the schedule workers */
	struct job *srunning[SCHEDULE_WORKERS];
	bool stop; /* the workers return */
	pthread_t mthread, sthread[SCHEDULE_WORKERS];
	/* A schedule worker is started when a job waits and none is idle
	 * (ofcd_schedule_spawn), and ends, its planner process with it,
	 * after SCHEDULE_IDLE_SECONDS without one: a daemon at rest runs
	 * neither. slive: started, not joined (the loop's); sended: it
	 * returns (under mu); sidle: workers waiting for a job (under mu). */
	bool slive[SCHEDULE_WORKERS], sended[SCHEDULE_WORKERS];
	uint32_t sidle;
	struct planner_proc planner[SCHEDULE_WORKERS];
	bool started;
};

/* Notes from any thread to the loop (ofcd_note, ofcd_device_news): every
 * field under mu; the loop takes the list whole, woken by wake_fd. */
struct ofcd_notes {
	pthread_mutex_t mu;
	struct note *head, *tail;
	char news_from[NAME_MAX_LEN + 1]; /* the last device with news */
};

/* plan_ahead.c: run-time partitions planned ahead, off the queue, by a
 * pool of threads, on the base the mutation worker publishes after each
 * job; the worker takes a plan when what it read is unchanged. Everything
 * here under mu (cond wakes the pool, done the worker waiting on a plan). */
struct ahead;
struct ahead_base;
/* A plan-ahead thread's place: started when a plan waits and no thread
 * is idle, ended after AHEAD_IDLE_SECONDS without one (ended: it returned,
 * to be joined), so a daemon at rest runs none. */
struct ahead_slot {
	struct ofcd *d;
	pthread_t th;
	bool live;  /* started, not joined yet */
	bool ended; /* under mu: it returned */
	/* under mu: a plan running in the thread's planner, its budget (cut
	 * as its burst grows), and the page the planner reads the cut from
	 * (NULL: none could be made) */
	bool planning;
	double budget;
	int32_t *cut;
};
struct ofcd_ahead {
	pthread_mutex_t mu;
	pthread_cond_t cond, done;
	struct ahead *head, *tail; /* waiting, in queue order */
	struct ahead_base *base;   /* the last published */
	struct ahead_slot *slots;  /* nthreads of them */
	uint32_t nthreads;	   /* the pool's size; 0: every plan made in its turn */
	uint32_t idle;		   /* under mu: threads waiting for a plan */
	uint32_t unreached;	   /* under mu: plans whose job the worker has not reached */
	uint64_t started;	   /* plans a thread took (the tests wait on it) */
	bool stop;
};
/* The renumbering search's budget for a run-time partition (a Slurm job's
 * prolog): bench/results/relabel.md, "The renumbering's budget". */
#define RELABEL_BUDGET_S 0.1
/* A burst's share: a job planned ahead while `others` jobs the worker has
 * yet to reach wait before or after it, on `threads` threads, gets
 * RELABEL_BUDGET_S * threads / (threads + others), at least
 * RELABEL_BUDGET_MIN_S, so that a burst of prologs (32 jobs at once) is
 * planned in about one budget's time, not 16 (the search ran its whole
 * budget on most jobs of 32 hosts and more, and that was the prologs' time
 * at 1,024 hosts: bench/results/slurm.md). Those before it count too: the
 * last of a burst, counting only those after it, got the whole budget
 * while the burst's first jobs still waited for the worker, and the round's
 * last answer waited for its 100 ms. The cross-connects kept drop by about
 * 3% at a third of the budget (bench/results/relabel.md); a lone job keeps
 * the whole budget. */
#define RELABEL_BUDGET_MIN_S 0.01
double ahead_budget(uint32_t threads, uint32_t others);
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

/* The two halves, each complete only in its own side's header. */
struct ofcd_loop;
struct ofcd_worker;

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
	atomic_bool stop_begun; /* the loop is stopping: a worker's wait ends early (drain.c) */
	atomic_int news_req;	/* a device's news (ofcd_device_news), from a driver's thread */
	atomic_bool cl_change_posted; /* a STORE_EV_CHANGED note is on its way (cluster.c) */
	atomic_bool cl_events_posted; /* ... a STORE_EV_EVENTS note */

	/* Devices' counts: the mutation worker adds, the loop reads, under
	 * devm.mu (metrics.c). */
	struct dev_metrics devm;
	/* Jobs running its schedules: the loop writes, the worker reads. */
	struct mpi_jobs mjobs;

	struct ofcd_loop *loop; /* the loop thread's (conn.h) */
	struct ofcd_jobs jobs;
	struct ofcd_notes notes;
	struct ofcd_worker *w; /* the mutation worker's (worker.h) */
	struct ofcd_ahead ahead;
};

void ofcd_log(struct ofcd *d, int level, const char *fmt, ...) OFC_PRINTF(3, 4);
/* (snapshot.c) A device failure as read-only clients and watchers see it: the reason's
 * word ("timeout", "lost", "auth", ...), "error" when there is none. */
const char *ofcd_public_reason(enum ofc_reason r);
/* mpi_jobs.c, the running jobs' table (d->mjobs, its own lock). (loop)
 * A GetSchedule's caller, naming job (NULL or "": none) or not, asked
 * partition's (NULL: the fabric's) schedule on the config numbered seq;
 * taking: one the job will run. */
void mpi_jobs_asked(struct ofcd *d, const char *partition, const char *job, const char *who,
		    bool taking, uint64_t seq);
/* (loop) job says every rank runs the schedules of its taking asks: 0, or
 * -1 and why (a job that has not asked). */
int mpi_jobs_taken(struct ofcd *d, const char *partition, const char *job, char *why, size_t n);
/* (loop) job finalized (its report came): no longer running. */
void mpi_jobs_ended(struct ofcd *d, const char *partition, const char *job);
/* (loop) cfg made the loop's config: its pub_seq numbered. */
void mpi_jobs_publish(struct ofcd *d, struct fabcfg *cfg);
/* A job's name as ofcd takes it: 1 to MPI_JOB_NAME_MAX of [A-Za-z0-9._/:@-]. */
bool mpi_job_name_ok(const char *name);
/* (mutation worker) Whether the wait for the config numbered seq is over:
 * every running job on the drained ports (touches(ctx, partition): its
 * partition, "" the fabric, has a host there) named, and has said it runs
 * seq's schedules or later, at least one such, and no caller naming no
 * job asked for one there. taken and grace list the jobs (", "-separated)
 * that did and that did not yet, n[0] and n[1] count them. */
bool mpi_jobs_done(struct ofcd *d, uint64_t seq, bool (*touches)(void *, const char *), void *ctx,
		   struct strbuf *taken, struct strbuf *grace, uint32_t n[2]);
/* Queue a note for the loop and wake it (any thread). */
void ofcd_note(struct ofcd *d, struct note *n);
/* A device's own news (device_cfg.news, any thread): the loop probes the
 * devices soon (server.c, news_probe). */
void ofcd_device_news(void *ctx, const char *device);
/* A replica's fence (ctl_opts.fence, ctx the ofcd): store_fence,
 * for the devices. */
double ofcd_fence(void *ctx);

/* policy.c: what a config may make the daemon do (credentials, addresses);
 * --allow-devices parsed by the opening thread (the worker's checks are in
 * worker.h). */
int ofcd_allow_parse(struct ofcd *d, struct ofc_error *err);
/* metrics.c, the mutation worker's part (on d->devm, under its mutex):
 * move what c's devices counted (commands, errors) into d->devm and take
 * their last contact; c's counts start again from 0. */
void metrics_devices_take(struct ofcd *d, struct ctl *c);
/* (the planner process, schedule_job.c) GetSchedule's answers: the
 * pipeline's (edge lists a client named read under files), and the fluid
 * engine's on a server fabric. */
void ofcd_run_schedule(const struct topo_files *files, struct job *j);
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
 * the reduced form's group unless the steps are its expansion); a held
 * partition's links name its hosts (j->node_names). */
Ofc__V1__Schedule *ofcd_schedule_head(struct arena *a, const struct schedule_result *r,
				      const struct job *j, bool expanded);
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
/* startup.c: config, lock, recovery (the opening thread): the worker's
 * state made, and what the loop publishes first, the snapshot and the
 * running config (a reference), into *snap and *cfg. */
int ofcd_start(struct ofcd *d, struct snapshot **snap, struct fabcfg **cfg, struct ofc_error *err);

/* cluster.c: replicas on etcd (the loop's calls are in conn.h) */
/* (ofcd_start) d->store becomes etcd's for this fabric; its state read
 * once. */
int cluster_open(struct ofcd *d, const char *fabric, struct ofc_error *err);
/* Whether a mutation may run here now, by view v: STATUS_OK, else
 * STATUS_NOT_LEADER: a follower (msg says who leads), or a replica that
 * cannot confirm with etcd who leads (msg says why). Either way clients
 * go on to the leader the answer names (cluster_refusal_leader: NULL
 * when there is none to name), or to the next replica. fabric: its name,
 * as the calling thread's config has it (the loop's or the worker's). */
Ofc__V1__Status cluster_refusal(const struct ofcd *d, const struct store_cluster *v,
				const char *fabric, char *msg, size_t n);
Ofc__V1__Leader *cluster_refusal_leader(struct arena *a, const struct store_cluster *v);

/* work.c: the workers' threads, started and joined by the loop thread */
void *ofcd_mutation_worker(void *arg);
void *ofcd_schedule_worker(void *arg);
void *ofcd_schedule_worker_2(void *arg); /* the second (SCHEDULE_WORKERS) */
/* (loop, under jobs.mu) A schedule worker for a job just queued when none
 * is idle: in a free place (one whose worker ended is joined first). */
void ofcd_schedule_spawn(struct ofcd *d);
void ofcd_run_job(struct ofcd *d, struct job *j);
/* (schedule worker, planner_proc.c) j (GetSchedule) computed by p's
 * planner process: j->reply its answer, or a refusal saying why the
 * planner gave none (ended, killed, past the time limit). */
void planner_run_schedule(struct ofcd *d, struct planner_proc *p, struct job *j);
/* p's planner ended and reaped: told to (its socket closed; killed if it
 * does not end within 2 s) or killed at once (kill_it); how it ended, in
 * words, into why (NULL: not wanted). */
void planner_end(struct planner_proc *p, bool kill_it, char *why, size_t n);
void planner_how(const struct ofcd *d, struct planner_how *h);
/* ... from the daemon's options alone (ofcd --check has no daemon). */
void planner_how_of(const struct ofcd_opts *o, const char *topo_dir, struct planner_how *h);
void planner_how_free(struct planner_how *h);
/* The picker of a config's `topology: auto` that ofcd's config loads set
 * on the fabric before fabric_validate (its start, a new leader's
 * re-read, a reload, ApplyConfig, --check): a planner process of its own
 * (`ofc-planner --for config`, planner_ask.c) runs the finder, within
 * max_time seconds of CPU on each core (<= 0: none) and --max-request-memory;
 * ofcd waits max_time and half a minute at most (a day without one). One
 * that ends before it answers costs one more; a second refuses the
 * config, naming how both ended (ofcd keeps the config it has). */
struct ofcd_picker {
	struct topo_picker ops; /* what f->picker points to */
	struct planner_how how;
	uint64_t max_memory;
	double max_time;
};
void ofcd_picker_init(struct ofcd_picker *p, const struct ofcd_opts *o, double max_time);
void ofcd_picker_free(struct ofcd_picker *p);
/* ofcd_validate_with (ofcd.h) with the daemon's options. */
int ofcd_validate(const struct ofcd *d, struct fabric *f, double max_time, struct ofc_error *err);
/* j sent to p's planner (started where none runs; one that ended at rest
 * is started again once), as a stream's or a whole answer's job; -1 and
 * err the refusal ("the planner process ..."), whole. */
int planner_send(const struct planner_how *h, struct planner_proc *p, const struct job *j,
		 bool stream, double deadline, struct ofc_error *err);
/* ... a packed PlannerJob as it is. -1: none could start or take it;
 * -2: the one started for it ended before it took it, err saying how it
 * ended ("was killed by SIGKILL ..."). */
int planner_send_frame(const struct planner_how *h, struct planner_proc *p, const uint8_t *buf,
		       size_t len, double deadline, struct ofc_error *err);
/* A planner process of its own started for job (a packed PlannerJob),
 * its one answer (at most max_answer bytes, within wait seconds) into
 * *answer (the caller frees it), the planner ended: 0; 1 when wanted
 * (asked with the planner's pid once it runs, and with 0 once it
 * answered or ended: it records the pid for whoever may kill it) says
 * the caller let go; -1 with why (the planner's end in words) when none
 * came. */
int planner_ask(const struct planner_how *h, const uint8_t *job, size_t len, size_t max_answer,
		double wait, bool (*wanted)(void *ctx, pid_t pid), void *ctx, uint8_t **answer,
		size_t *answer_len, char *why, size_t n);
/* (mutation worker) One schedule's summary computed by a planner process
 * of its own (planner_summary.c), as a held partition's view, a staged
 * change's stages and a Reconfigure by workload's answer show it: coll of
 * size on cfg's fabric (its failures in effect) or q->spec, the Schedule
 * (no steps) unpacked into a; NULL with err (the engine's refusal, or how
 * the planner ended) when there is none. */
struct planner_summary_ask {
	const char *spec;	     /* NULL: the fabric's own */
	double max_time;	     /* seconds, <= 0: none */
	enum schedule_reduce reduce; /* SCHEDULE_REDUCED_* */
	bool explicit_after;	     /* the reduced one refused: the explicit one */
	bool plain;		     /* header and figures alone */
};
Ofc__V1__Schedule *planner_summary(const struct ofcd *d, const struct fabcfg *cfg,
				   enum sched_collective coll, uint64_t size,
				   const struct planner_summary_ask *q, struct arena *a,
				   struct ofc_error *err);
/* (the planner process, planner_summary.c) m's summary (PlannerJob.summary)
 * of cfg's coll and size: a packed ofc.v1.PlannerSummary of *len bytes. */
uint8_t *planner_summary_compute(const struct fabcfg *cfg, const struct topo_files *files,
				 const Ofc__V1__PlannerJob *m, size_t *len);
/* (the planner process, planner_summary.c) A schedule's figures without
 * its steps, every string in a. */
Ofc__V1__Schedule *snapshot_schedule_summary(struct arena *a, const struct schedule_result *r);
/* How long ofcd waits for a planner's next frame: j's time limit and
 * PLANNER_GRACE, or a day when it has none. */
double planner_wait(const struct job *j);
/* (the planner process, stream_produce.c) j's schedule as a stream's
 * Responses, each handed to emit (false: stop). */
struct stream_out {
	bool (*emit)(void *ctx, const Ofc__V1__Response *r);
	void *ctx;
};
void stream_produce(const struct topo_files *files, struct job *j, struct stream_out *out);
/* (planner_fabric.c) j's config as the planner rebuilds it
 * (ofc.v1.PlannerFabric, packed; the caller frees it). */
uint8_t *planner_fabric_pack(const struct fabcfg *c, size_t *len);
/* ... and rebuilt, validated but for the drivers (drivers_unchecked):
 * the fabric ofcd's config c had. */
int planner_fabric_build(const Ofc__V1__PlannerFabric *m, const struct topo_files *files,
			 struct fabric **out, struct ofc_error *err);
/* Failure items ("HOST", "HOST:PORT", "U-V", canonical) added to f's
 * failed hosts, ports and links, named as in names (validated: the same
 * YAML, so the same hosts in the same order). */
void fabric_add_failures(struct fabric *f, const struct fabric *names, char *const *items,
			 uint32_t n);
/* (the planner process, planner_serve.c) Serve ofcd's jobs on fd until it
 * closes it: 0, or -1 with err when the planner cannot set itself up. */
struct planner_serve_opts {
	int fd;
	/* the word ofcd cuts a renumbering's budget with (ofc-planner
	 * --cut-fd's page; NULL: none) */
	const volatile int32_t *cut_us;
	const char *topology_dir; /* NULL: none */
	uint64_t max_memory;	  /* the most any request may hold */
	/* Tests: called with the state's schedule found, before it is
	 * summarised (a slow engine, a schedule the verifier refuses). */
	void (*state_hook)(struct schedule_result *r);
};
int planner_serve(const struct planner_serve_opts *o, struct ofc_error *err);
/* The mutation worker's half (d->w), made by ofcd_open; when ofcd_close
 * has joined the workers, its devices closed (before the store: their
 * drivers' threads wake the loop until they stop), then the rest let go
 * of. */
void ofcd_worker_new(struct ofcd *d);
void ofcd_worker_close_devices(struct ofcd *d);
void ofcd_worker_free(struct ofcd *d);

/* planner.c: the workload's schedule computed off the start path.
 * A detached thread computes an all-to-all's schedule (the MCF: minutes on
 * a large fabric) on a config reference; the daemon may let go of it at
 * any time (a new config, shutdown) without waiting: letting go cancels
 * the MCF, which stops within a pivot or so, and the thread drops what it
 * found. */
struct planner_task {
	pthread_mutex_t mu;
	unsigned refs;		/* under mu: the thread's, the daemon's, notes', jobs' */
	struct ofcd *d;		/* under mu: NULL once the daemon let go */
	struct fabcfg *cfg;	/* the config planned (a reference) */
	uint64_t since_ms;	/* unix ms when it started */
	uint32_t max_frame;	/* the daemon's (the thread never reads d->o) */
	struct planner_how how; /* its planner process */
	pid_t pid;		/* under mu: that planner while it computes */
	/* The result, the thread's until it posts its note; then read by
	 * the loop and moved out by the mutation worker (JOB_PLANNER). */
	struct planner_out {
		uint8_t *sched; /* packed ofc.v1.Schedule summary, NULL: none */
		size_t sched_len;
		uint8_t *full; /* GetSchedule's answer (fabcfg.plan_full), NULL: */
		size_t full_len;
		char *full_why;	      /* ... why not */
		struct kept_run kept; /* healthy all-to-all: the MCF run */
		char kept_why[240];
		char *message; /* what the event says */
		bool ok;       /* a verified schedule */
		/* where planner_compute's wall went (the debug log's split):
		 * the schedule's computation and check, of which its
		 * generation and verification, then the summary's packing */
		struct planner_split {
			double compute_s, gen_s, verify_s, summary_s;
		} split;
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
/* The workload's schedule on pub (its failures in effect), computed by a
 * planner process of its own (planner_replan.c; one that ends before it
 * answers costs a second): the same query a re-plan makes; kept: the
 * healthy config's kept run to start from (NULL: none); keep: keep this
 * run's MCF solution in out->kept (pub healthy). What it found is
 * appended to msg ("..., verified, DONE in S s" since t0); GetSchedule's
 * whole answer goes to out->full when it fits max_frame (0: not built).
 * t: the background planner's task, whose daemon may let go (its planner
 * killed: nothing appended); NULL on the mutation worker. */
void planner_compute(const struct planner_how *h, struct planner_task *t, const struct fabcfg *pub,
		     const struct kept_run *kept, const char *kept_why, bool keep, double t0,
		     const char *done, uint32_t max_frame, struct strbuf *msg,
		     struct planner_out *out);
void planner_out_free(struct planner_out *o);

/* state_schedule.c: the workload's schedule on the committed topology, as
 * State.schedule shows it, computed off the commit's path (a snapshot
 * leaves it out: snapshot.sched_want), symmetry-reduced where the
 * topology admits it, by the leader (one ofcd, or the replica that leads)
 * when it publishes a state; a follower computes it when a client asks
 * for the state. One computation at a time; a state published meanwhile
 * waits for it. Computed by a planner process of its own
 * (planner_state.c). The loop thread's calls are in conn.h; here what any
 * thread calls and the task handed over. */
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
/* How r's main outcome is kept, for a log line or an event: ", Swing
 * around the failed links (...) instead of bfb, refused: WHY" (BFB's
 * fallback: its refusal whole), ", kept as structure (...)",
 * ", symmetry-reduced (...)", " (explicit: WHY)" or ""; buf of
 * STATE_FORM_LEN holds any. */
#define STATE_FORM_LEN 800
void state_schedule_form(const struct schedule_result *r, char *buf, size_t n);
/* (the planner process, planner_state.c) cfg's state schedule (its coll
 * and size) on spec (NULL: the config's graph, the failures in effect)
 * computed, hook (tests; NULL: none) called on it before it is
 * summarised: a packed ofc.v1.PlannerStateSchedule of *len bytes. */
uint8_t *state_schedule_compute(const struct fabcfg *cfg, const char *spec,
				void (*hook)(struct schedule_result *r), size_t *len);
/* (the planner process, planner_replan.c) The workload's schedule on cfg
 * (its coll, size, failures) as m asks it (PlannerJob.replan: the kept run
 * to start from, whether to keep this one, the frame GetSchedule's whole
 * answer must fit): a packed ofc.v1.PlannerReplan of *len bytes. */
uint8_t *planner_replan_compute(const struct fabcfg *cfg, const Ofc__V1__PlannerJob *m,
				size_t *len);
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
	struct planner_how how; /* its planner process */
	pid_t pid;		/* under mu: that planner while it computes */
	/* the result */
	uint8_t *sched; /* packed ofc.v1.Schedule summary, NULL: none */
	size_t sched_len;
	bool verified;
	char *why;  /* no schedule, or not verified: why */
	char *line; /* for the log and the event */
};

/* state_schedule_store.c: the leader's answer for the state's schedule,
 * shared with the other replicas through the store (etcd). */
/* The most a written answer may hold (an ofc.v1.Schedule summary is a
 * few hundred bytes). */
#define STATE_SCHED_ANSWER_MAX (64u << 10)
/* (any thread) The fingerprint of what cfg's state schedule on spec (NULL:
 * the config's graph) is computed from. */
uint64_t state_schedule_inputs(const struct fabcfg *c, const char *spec);
/* The leading replica writes pub's schedule (pub->plan, as its failure
 * report or restore computed it) to the store for the others; nothing when
 * not clustered, not leading, or none computed. A write that fails is
 * logged: the others then compute their own. (The loop, once it has sent
 * a failure report's answer: the failures themselves were written before
 * the re-plan, the answer waits for no more; the mutation worker, for a
 * probe's re-plan.) */
void state_schedule_publish(struct ofcd *d, const struct fabcfg *pub);
/* (loop) The store's answer for a state of config c whose inputs are
 * `inputs`: 1 with *sched (packed ofc.v1.Schedule, caller frees) and why
 * saying whose; 0 when there is none, it is another state's or damaged
 * (why says which). */
int state_schedule_answer(struct ofcd *d, const struct fabcfg *c, uint64_t inputs, uint8_t **sched,
			  size_t *len, char *why, size_t n);

/* ---- the job's plan (jobplan.c) -------------------------------------------- */

/* GetPlan's answer into j->reply: the running config's workload planned. */
void ofcd_run_get_plan(struct job *j);
/* (mutation worker) MoveToPhase's target: the spec of the topology the
 * chosen way gives j's phase (*spec, the caller frees), which the running
 * config then takes as a Reconfigure's (and a restart the record's);
 * j->target says which. Planned in a planner process of its own
 * (planner_ask.c, which sends it; jobplan.c's planner_phase_compute). */
int ofcd_phase_spec(const struct ofcd *d, const struct fabcfg *cfg, struct job *j, char **spec,
		    struct ofc_error *err);
/* (mutation worker) A Reconfigure by workload's topology: the finder's
 * pick for every host of cfg's fabric at the fewest NIC ports any host
 * has, minimising j's workload (coll, size) under the config's cost model
 * (controller/pick), into spec; in a planner process of its own
 * (planner_ask.c sends it, planner_summary.c's planner_pick_compute). */
int ofcd_pick_topology(const struct ofcd *d, const struct fabcfg *cfg, const struct job *j,
		       char *spec, size_t n, struct ofc_error *err);
uint8_t *planner_pick_compute(const struct fabcfg *cfg, const Ofc__V1__PlannerJob *m, size_t *len);
/* (the planner process, planner_summary.c) A config's topology: auto
 * (PlannerJob.config_pick): pick_run on m's request, a packed
 * ofc.v1.PlannerPick (spec and time_us, or why) of *len bytes. */
uint8_t *planner_config_pick_compute(const Ofc__V1__PlannerJob *m, size_t *len);
/* (the planner process) m's phase (PlannerJob.to_phase) on cfg: a packed
 * ofc.v1.PlannerPhase of *len bytes. */
uint8_t *planner_phase_compute(const struct fabcfg *cfg, const Ofc__V1__PlannerJob *m, size_t *len);
/* Asks a planner process of role `role` the job m on cfg's fabric (m's
 * fabric and limits set here, the rest by the caller): 0 and its answer
 * in *buf (the caller's to free), else -1 with err "the planner process
 * WHAT ...". A process of its own, or *keep (NULL: none kept); one that
 * ends before it answers costs one more while wait has time left, a second
 * the refusal naming how both ended (planner_ask.c). */
int planner_ask_about(const struct ofcd *d, const struct fabcfg *cfg, Ofc__V1__PlannerJob *m,
		      const char *role, struct planner_proc *keep, size_t answer_max, double wait,
		      const char *what, uint8_t **buf, size_t *got, struct ofc_error *err);
/* (the planner process) m's testbed schedule (PlannerJob.testbed) on
 * cfg's fabric, or on the topology m names on its hosts: a packed
 * ofc.v1.PlannerTestbed of *len bytes (planner_testbed.c). */
uint8_t *planner_testbed_compute(const struct fabcfg *cfg, const Ofc__V1__PlannerJob *m,
				 size_t *len);

/* held.c: a run-time partition's hosts, at most (the request's check, held_make's) */
#define HELD_MAX_HOSTS 65536
/* (any thread, the planner process) held_make's partition without looking
 * at the holds, its spec read under files (a plan made ahead: the
 * worker's held_make checks the holds at the commit). */
int held_make_in(const struct topo_files *files, const struct fabric *f, const char *name,
		 char *const *hosts, uint32_t nhosts, const char *spec, struct partition *out,
		 struct ofc_error *err);
void held_partition_free(struct partition *p);

/* A run-time partition renumbered for the fewest moves, as ctl_partition
 * renumbers it (partition_relabel), on cfg's fabric and the switches'
 * cross-connects actual (NULL: unknown), within budget seconds of search:
 * in the planner process *p, the caller's, kept for its next one
 * (planner_ask.c sends it, planner_relabel.c's planner_relabel_compute
 * answers; planner_end ends it), started as `ofc-planner --for ROLE`
 * (a plan-ahead thread's "relabel", the mutation worker's in its turn
 * "relabel-turn"). 0 and the circuits (*pc, the caller frees) and the
 * search's report, else -1 with err. A planner started with p->cut_fd
 * reads that page's word during the search: the budget cut short
 * (relabel_opts.cut_us; plan_ahead.c writes it). */
int planner_relabel(const struct ofcd *d, struct planner_proc *p, const char *role,
		    const struct fabcfg *cfg, const char *name, char *const *hosts, uint32_t nhosts,
		    const char *spec, const struct device_state *const *actual, double budget,
		    struct circuit **pc, uint32_t *npc, struct fabric_relabel *rep,
		    struct ofc_error *err);
uint8_t *planner_relabel_compute(const struct fabcfg *cfg, const struct topo_files *files,
				 const Ofc__V1__PlannerJob *m, const volatile int32_t *cut_us,
				 size_t *len);

/* failures.c: failures reported at run time and lost switches */
#define FAIL_MAX_ITEMS 4096
/* Switch ports drained at once: every port of a switch of the largest
 * fabrics (65,536 hosts, one switch per NIC port). */
#define DRAIN_MAX_PORTS 65536u
/* Syntax alone: "U-V" or "HOST:PORT" with names a config may have. */
bool failure_item_ok(const char *item);
/* (snapshot.c) Free n strings and the array. */
void strv_free(char **v, uint32_t n);

/* wire.c: whether a string field of the packed message p (of type d),
 * nested ones too, holds a NUL byte, which protobuf-c's unpack cuts the
 * string at; *field names the first such field. */
bool wire_string_with_nul(const ProtobufCMessageDescriptor *d, const uint8_t *p, size_t len,
			  const char **field);

/* A packed Response (caller frees *buf). */
void response_pack(const Ofc__V1__Response *r, uint8_t **buf, size_t *len);

/* link_damp.c: one host port's flap damping (pure logic on the caller's
 * millisecond clock). `failed` is the caller's: whether ofcd holds the port
 * failed on the link's account; the rest is the damping's. Zeroed: a port
 * never reported. */
struct link_damp {
	double penalty;	     /* the figure of merit, decayed to at_ms */
	int64_t at_ms;	     /* the last observation */
	int64_t up_since_ms; /* up continuously since (-1: down) */
	uint32_t flaps;	     /* up -> down transitions seen */
	bool seen, up, suppressed, failed;
};
/* Zero fields of o to their OFCD_LINK_* defaults. */
void link_damp_defaults(struct link_damp_opts *o);
/* The highest penalty a port may hold (suppressed at most max_suppress_ms). */
double link_damp_ceiling(const struct link_damp_opts *o);
/* Observe the link up or down at now_ms: whether ofcd should hold the port
 * failed now (down: always; up: while s->failed and it has been up less
 * than the hold-down or is suppressed). The caller acts on a change and
 * sets s->failed. */
bool link_damp_observe(const struct link_damp_opts *o, struct link_damp *s, bool up,
		       int64_t now_ms);

#endif
