/* Private to ofcd's mutation worker: its state (struct ofcd_worker, which
 * struct ofcd holds as d->w) and what the files of its jobs call of each
 * other (work.c starts it; mutation.c, batch.c, failures.c, held.c,
 * held_store.c, takeover.c, startup.c, work_ctl.c, ...). Only the mutation
 * worker touches d->w (before ofcd_run, the opening thread; after the
 * workers are joined, ofcd_close). A file that includes this header
 * includes neither conn.h nor loop.h (scripts/check-layers.py): what the
 * worker tells the loop goes in a note, what the loop asks of it in a job
 * (internal.h). */
#ifndef OFC_CONTROLLER_OFCD_WORKER_H
#define OFC_CONTROLLER_OFCD_WORKER_H

#include "controller/ofcd/internal.h"

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

/* A drained switch port: since when and by whom. */
struct drain_entry {
	char *sw;
	uint32_t port;
	uint64_t since_ms;
	char *by;
};

/* The mutation worker's own: the running config and its ctl, the failures,
 * port moves and holds in effect, what the last sync saw. Only the mutation
 * worker touches them (before ofcd_run, the opening thread; after the
 * workers are joined, ofcd_close); the loop sees them through the snapshots
 * and configs the worker posts with its jobs. */
struct ofcd_worker {
	struct fabcfg *cfg;
	/* The config ofcd_publish_now last handed the loop (a reference) and
	 * its pub_seq then: the loop numbers it anew when it takes it, the
	 * number a drain's wait waits for running jobs to say they run. */
	struct fabcfg *last_pub;
	uint64_t last_pub_before;
	struct ctl *ctl;
	struct job *job;   /* the job the mutation worker runs */
	struct job *batch; /* ... the head of the batch it runs (NULL: none) */
	/* ... the members of the batch's one transaction while it runs: its
	 * events go to each, with the member's ticket and partition, so every
	 * tenant hears its own and none another's (n 0: none) */
	struct job *const *txn_members;
	uint32_t ntxn_members;
	char **trusted; /* device addresses of the --config file, as last read */
	uint32_t ntrusted;
	/* Failures (failures.c): reported at run time (persisted in
	 * STATE_DIR/FABRIC.failed), and the host ports of switches found
	 * lost; pub is cfg with them, the config schedules run on. */
	char **reported;
	uint32_t nreported;
	/* Those of reported a host's agent made (its port down), written
	 * "ITEM host" in the store, so that a new leader still restores them
	 * on the host's good report. */
	char **by_host;
	uint32_t nby_host;
	char **lost;
	uint32_t nlost;
	struct fabcfg *pub;
	/* Circuits moved off lost ports onto spare ones (mutation.c rewire;
	 * persisted in STATE_DIR/FABRIC.rewired): part of cfg. */
	struct port_move *moves;
	uint32_t nmoves;
	/* Switch ports out of service (drain.c; persisted in
	 * STATE_DIR/FABRIC.drained): no circuit of cfg uses them, and the
	 * host ports cabled to them are failures in pub. */
	struct drain_entry *drained;
	uint32_t ndrained;
	/* The host ports ("HOST:PORT") a staged reconfiguration's stage
	 * takes out of use while its circuits change (staged.c): published
	 * as failures are, in memory only (the stage's record says which). */
	char **staging;
	uint32_t nstaging;
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
	/* The planner process that renumbers a run-time partition in the
	 * worker's turn (ofcd_relabel_turn): started on the first, kept with
	 * the fabric it rebuilt, started again after one that failed, ended
	 * with the worker. */
	struct planner_proc relabel;
};

/* views.c */
/* (mutation worker, after held_state on a snapshot of d->w->ctl) The
 * fabric's at_target outside the held partitions' ports, and each one's
 * own at_target and schedule. */
void held_view(const struct ofcd *d, struct snapshot *s);

/* policy.c */
/* Before validation: credentials inside the credentials directory; for a
 * config from the API (from_api), device addresses allowed. Errors are
 * OFC_E_INPUT at the offending node. */
int ofcd_check_config(const struct ofcd *d, const struct fabric *f, bool from_api,
		      struct ofc_error *err);
/* Remember the --config file's device addresses (worker). */
void ofcd_trust_config(struct ofcd *d, const struct fabric *f);

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
/* (mutation worker, mutation.c) j's run-time partition (j->partition,
 * hosts, spec) renumbered for the fewest moves in the worker's turn, on
 * cfg's fabric and the switches' cross-connects actual, as ctl_partition
 * renumbers one: asked of the worker's planner process (d->w->relabel,
 * `ofc-planner --for relabel-turn`), so that ofcd links no search. 0 and
 * the circuits (*pc, the caller frees) and the search's report; -1 with
 * err when it failed (a planner that ended before it answered, twice:
 * how both ended). */
int ofcd_relabel_turn(struct ofcd *d, const struct fabcfg *cfg, const struct job *j,
		      const struct device_state *const *actual, double budget, struct circuit **pc,
		      uint32_t *npc, struct fabric_relabel *rep, struct ofc_error *err);
/* The new fabric a mutation asks for (an ApplyConfig's config parsed and
 * checked; a Reconfigure's topology over the running config), or -1 with
 * the answer set. */
struct answer;
int ofcd_build_target(struct ofcd *d, struct job *j, struct answer *an, struct fabcfg **out);
void ofcd_run_probe(struct ofcd *d, struct job *j);
/* The running config from what the store holds, and its snapshot
 * (strict: the start, where damage stops it; leader: it may write). */
int ofcd_adopt(struct ofcd *d, bool strict, bool leader, struct snapshot **snap,
	       struct ofc_error *err); /* startup.c */

/* (mutation worker, takeover.c) JOB_TAKEOVER and JOB_SYNC. */
void ofcd_run_takeover(struct ofcd *d, struct job *j);
void ofcd_run_sync(struct ofcd *d, struct job *j);

/* planner.c */
/* (mutation worker) Move out's whole answer (or why there is none) to cfg,
 * not planned yet. */
void planner_keep_full(struct fabcfg *cfg, struct planner_out *out);

/* (mutation worker) JOB_PLANNER: install the planner's result on its config
 * and, when it is the one published, a snapshot and the event. */
void ofcd_run_planner(struct ofcd *d, struct job *j);

/* held.c: partitions made at run time of given hosts (HELD_MAX_HOSTS at most) */
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
	char **drop_why; /* per d->w->held as staged (nstaged): NULL kept, else why */
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
/* (mutation worker) The holds as the store keeps them, into d->w->held,
 * checked against d->w->cfg: an entry that does not fit it (a host it
 * lacks, a host held twice, a config partition's name) is dropped, logged
 * and announced, and a leader writes the list again. announce: post
 * events for what changed since the last load (a follower's watchers hear
 * the leader's holds and releases). A damaged item is an error naming it
 * and the command that sets it aside; d->w->held is left as it was. */
int held_adopt(struct ofcd *d, bool leader, bool announce, struct ofc_error *err);
/* (mutation worker) The run-time partition `name` of hosts on f, aimed at
 * spec (read under d->files): hosts known and distinct, none held under
 * another name, the topology one node per host, strongly connected and
 * within the hosts' ports. */
int held_make(const struct ofcd *d, const struct fabric *f, const char *name, char *const *hosts,
	      uint32_t nhosts, const char *spec, struct partition *out, struct ofc_error *err);
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
/* (mutation worker) JOB_TESTBED_RUN, _CHECK, _DOWN and _MPIRUN (testbed.c). */
void ofcd_run_testbed(struct ofcd *d, struct job *j);

/* failures.c */
/* STATE_DIR/FABRIC.failed into d->w->reported (none: empty). A damaged file
 * is an error naming it and the mv that sets it aside. */
int failures_load(struct ofcd *d, const char *fabric, struct ofc_error *err);
/* d->w->cfg with d->w->reported and d->w->lost in effect (a new reference). */
struct fabcfg *failures_publish(struct ofcd *d);
/* ... of h instead of d->w->cfg (a staged dry run's later stages: the
 * topology an earlier stage leaves). */
struct fabcfg *failures_publish_on(struct ofcd *d, struct fabcfg *h);
/* (mutation worker) ReportFailure: change the set, persist it, re-plan. */
void ofcd_run_failure(struct ofcd *d, struct job *j);
/* (mutation worker) After reading the devices: d->w->lost = the host ports
 * of lost switches and those cabled to switch ports the switch reports
 * failing (port alarms: a FAILED port in use, light under min_power);
 * true when that changed (the caller re-plans), with what changed in
 * cause. */
bool failures_devices(struct ofcd *d, char *cause, size_t n);
/* (mutation worker, a replica) The leader's d->w->lost into the store
 * (STORE_LOST; none: removed) after it changed, for the other replicas;
 * nothing while it does not lead, nor over a damaged one. */
void failures_lost_share(struct ofcd *d);
/* (mutation worker, a replica following or taking over) d->w->lost = the
 * store's (the leader's); a damaged one is an error naming it (and
 * d->w->lost empty). */
int failures_lost_load(struct ofcd *d, const char *fabric, struct ofc_error *err);
/* (mutation worker) Change d->w->reported as a ReportFailure job asks, and
 * persist it; on error nothing changed. */
int failures_report(struct ofcd *d, const struct job *j, struct ofc_error *err);
/* Forget which failures hosts' agents made (with the reported set). */
void failures_by_host_clear(struct ofcd *d);
/* (planner.c, mutation worker) Publish d->w->cfg with the failures in effect:
 * config and snapshot on j, and a KIND_SCHEDULE_REPLANNED event. */
void ofcd_replan(struct ofcd *d, struct job *j, const char *cause, char *sentence, size_t n);
/* Port moves (re-wiring around lost ports): STATE_DIR/FABRIC.rewired into
 * d->w->moves (a damaged file is an error naming it), written back (none: no
 * file), and copied into a fabric before it is validated. */
int moves_load(struct ofcd *d, const char *fabric, struct ofc_error *err);
/* Forget d->w->moves (in memory: the file stays). */
void moves_clear(struct ofcd *d);
/* The readers' halves that take the file's text (len bytes, changed in
 * place; path names it in errors), appending to d->w->reported or
 * d->w->moves (the moves against d->w->cfg's hosts): the loaders call them,
 * and so does the fuzzer. On error the set is emptied. */
int failures_parse(struct ofcd *d, const char *path, char *text, size_t len, struct ofc_error *err);
int moves_parse(struct ofcd *d, const char *path, char *text, size_t len, struct ofc_error *err);
int moves_save(struct ofcd *d, struct ofc_error *err);
void moves_apply(const struct ofcd *d, struct fabric *f);
bool failures_has(const struct ofcd *d, const char *item);

/* drain.c and failures.c: switch ports out of service. */
/* STATE_DIR/FABRIC.drained into d->w->drained (none: empty); a damaged
 * item is an error naming it and the mv that sets it aside. */
int drained_load(struct ofcd *d, const char *fabric, struct ofc_error *err);
int drained_parse(struct ofcd *d, const char *path, char *text, size_t len, struct ofc_error *err);
/* d->w->drained into the store (none: removed). */
int drained_save(struct ofcd *d, struct ofc_error *err);
void drained_clear(struct ofcd *d);
/* f's drained ports = d->w->drained (before fabric_validate). */
void drained_apply(const struct ofcd *d, struct fabric *f);
/* dst's drained ports = src's (before dst is validated). */
void drained_copy(struct fabric *dst, const struct fabric *src);
/* The host port "HOST:PORT" cabled to port `port` of switch `sw` of f, into
 * item: false when none is. */
bool drained_host_port(const struct fabric *f, const char *sw, uint32_t port, char *item, size_t n);
/* (mutation worker) JOB_DRAIN. */
void ofcd_run_drain(struct ofcd *d, struct job *j);
/* The devices to the running config at topology spec (NULL: its own) with
 * d->w->drained's ports dark (held partitions' ports kept as they are),
 * in one transaction verified on the devices; on success that is the
 * running config. say: what it did, or why not; *ops (NULL: not
 * asked) the operations it applied (drain.c). */
int ofcd_apply_topology(struct ofcd *d, const char *spec, struct strbuf *say, uint32_t *ops,
			struct ofc_error *err);
/* What j re-planned so far, published now: the loop makes j's snapshot
 * and config the daemon's and delivers its deferred events, so
 * GetSchedule and watchers have the schedule before circuits go. */
void ofcd_publish_now(struct ofcd *d, struct job *j);
/* A bounded wait (ms), in steps, ended early when the daemon stops. */
void ofcd_grace_wait(struct ofcd *d, uint32_t ms, bool (*touches)(void *, const char *), void *ctx,
		     struct strbuf *say);
/* (mutation worker) a staged Reconfigure, MoveToPhase or ApplyConfig
 * (j->staged, staged.c): the worker runs it instead of ofcd_run_mutation. */
void ofcd_run_staged(struct ofcd *d, struct job *j);

#endif
