/* controller/reconfig — plans, transactions, the journal and recovery. */
#ifndef OFC_CONTROLLER_RECONFIG_H
#define OFC_CONTROLLER_RECONFIG_H

#include "controller/fabric/fabric.h"
#include "controller/reconfig/store.h"
#include "drivers/drivers.h"

struct schedule;

/* ---- reconfiguration: plan, transactions, journal, recovery --------------
 * (reconfig/ctl.c, reconfig/journal.c). A struct ctl holds one fabric's
 * managed devices: its switches and rings that have a driver, and, while a
 * testbed is up, the Linux hosts (netlink). Everything here reports through
 * struct ofc_error and the event callback; nothing prints. ofcd runs the same
 * calls; reads of the last committed state (ctl_load_record) never wait
 * for a transaction.
 *
 * In the store (store.h; files in the state directory unless a daemon
 * gives another): <fabric>.state (the recorded state of the last commit)
 * and <fabric>.journal (a transaction in progress). In the state directory
 * (ctl_state_dir()) always: <fabric>.lock (flock: one changer at a time),
 * <fabric>.confirm (`ofc confirm` for `ofc try`), <fabric>.testbed (the
 * testbed is up: controller/testbed/).
 */

#define OFC_STATE_DIR_DEFAULT "/var/lib/ofc"

enum ctl_event_kind {
	CTL_EV_TXN_STARTED = 1,
	CTL_EV_DEVICE_APPLIED, /* one device changed and verified */
	CTL_EV_TXN_COMMITTED,
	CTL_EV_TXN_ROLLING_BACK, /* message: why */
	CTL_EV_TXN_ROLLED_BACK,	 /* every device verified at its old state */
	CTL_EV_DEVICE_LOST,	 /* message: the error */
	CTL_EV_DEVICE_BACK,
	CTL_EV_RECOVERED, /* a journal left by a crash was resolved */
	CTL_EV_TRIAL_STARTED,
};

struct ctl_event {
	enum ctl_event_kind kind;
	uint64_t txn;
	const char *device; /* NULL when about the whole fabric */
	const char *message;
	/* Why a device failed (DEVICE_LOST, TXN_ROLLING_BACK, an incomplete
	 * TXN_ROLLED_BACK): the fixed vocabulary of ofc_reason_name(), for
	 * listeners that must not see the device's own words. */
	enum ofc_reason reason;
};

struct ctl_opts {
	const char *state_dir;	      /* NULL: ctl_state_dir(NULL) */
	const char *const *overrides; /* "NAME=HOST:PORT" (--device) */
	uint32_t noverrides;
	const char *credentials_dir; /* a daemon's: credentials only from here (NULL: any) */
	/* sim devices: the in-process twin of a device, or NULL for a file in
	 * the state directory. */
	struct sim_device *(*sim_lookup)(void *ctx, const char *device);
	void (*on_event)(void *ctx, const struct ctl_event *ev);
	/* The devices' own news (device_cfg.news), from the drivers' threads. */
	void (*on_news)(void *ctx, const char *device);
	void *ctx;
	bool no_testbed; /* leave the hosts out even when a testbed is up */
	bool no_mkdir;	 /* readers: never create the state directory */
	/* A daemon's control socket (ofcd's): the lock names it after the pid,
	 * so whoever finds the fabric locked is told to ask the daemon. */
	const char *daemon_socket;
	/* The command whose daemon form the lock's refusal names ("testbed
	 * up": `ofc --socket S testbed up`); NULL: apply (or reconfigure). */
	const char *daemon_ask;
	/* Where the record and journal live (borrowed; NULL: the files of
	 * state_dir). */
	struct store *store;
	/* A replicated daemon's fence (device_cfg.fence): its
	 * devices get it, and a transaction whose device command is fenced
	 * stops there, undoing nothing (the leader after it repairs from the
	 * journal). */
	double (*fence)(void *ctx);
	void *fence_ctx;
	/* Who asks for this ctl's transactions (txn_meta.principal): their
	 * journal and record keep it, for the audit. Copied; NULL: not said. */
	const char *principal;
};

struct ctl_device {
	struct device_cfg cfg; /* strings borrowed from the fabric */
	struct device dev;
	struct device_state target; /* what the config wants */
	struct device_state actual; /* last read */
	bool read_ok;
	struct ofc_error read_err;
	struct op_batch plan;	  /* actual -> target */
	double op_seconds;	  /* switching time per operation (config) */
	const struct fswitch *sw; /* a switch: its kind prices the plan */
	double est_seconds;	  /* switching time the plan will take */
	bool lost;		  /* the last read failed */
	/* A candidate's device that the running ctl reaches otherwise (or not
	 * at all): its reads report no DEVICE_LOST / DEVICE_BACK (ctl_quiet). */
	bool quiet;
	bool locked; /* the transaction holds the device's own lock (device_lock) */
};

/* What a commit records beside the devices' states: the topology they
 * realise ("" when none), the config file that asked for it, the one
 * partition the transaction changed (NULL: the whole fabric), whether the
 * topology was renumbered to keep circuits, and the host ports moved onto
 * spares in the wiring applied (ofcd's re-wiring, fabric.moves). A
 * transaction's journal carries it, so that a repair records what the
 * transaction applied, not what the repairing command's config says.
 * moves_known is false for an older ofc's record, which kept no moves
 * (ofcd then has only its .rewired file). fabric_topology is the whole
 * fabric's topology, which a partition's commit leaves as it was (its
 * topology is then the partition's; "" when the fabric has none of its
 * own; NULL: not known, an older ofc's). Owned. */
struct txn_meta {
	char *topology, *config, *partition;
	bool relabelled;
	struct port_move *moves;
	uint32_t nmoves;
	bool moves_known;
	char *fabric_topology;
	/* who asked for it: cn:NAME (a certificate through ofc-gateway),
	 * uid:N (a socket's client); NULL: not said */
	char *principal;
};
void txn_meta_free(struct txn_meta *m);
void txn_meta_copy(struct txn_meta *dst, const struct txn_meta *src);

struct ctl {
	struct fabric *fabric; /* borrowed */
	struct ctl_opts opts;
	char *state_dir;
	struct store *store; /* opts.store, or the files of state_dir (own_store) */
	bool own_store;
	int lock_fd;
	struct ctl_device *devs;
	uint32_t ndevs;
	char **netns;		  /* testbed namespaces, one per host, when up */
	uint64_t txn;		  /* the transaction running or last run */
	uint64_t last_txn;	  /* the highest id the store showed before it */
	uint64_t prev_generation; /* of the record before it (kept by a rollback) */
	struct txn_meta prev;	  /* ... and what it recorded (a rollback records it again) */
	bool relabelled;	  /* ctl_relabel changed this plan's target (rep.changed) */
	/* ctl_partition: the plan changes this partition's ports alone. */
	const struct partition *partition;
	/* What the caller keeps with a commit of this ctl's transaction (ofcd's
	 * held partitions: w->item STORE_HELD, the only item the journal
	 * keeps): called once the transaction's id is set (c->txn) and its
	 * plan made, before the journal is written, it fills *w, which goes
	 * into the journal and into the commit's store write before the record
	 * (etcd: the same transaction; files: its file first), never into a
	 * rollback's. A repair that finishes the transaction (another process,
	 * a new leader, without this callback) writes it from the journal, so
	 * what the commit keeps never depends on who commits. w->data is freed
	 * with the journal. NULL: nothing. */
	void (*commit_also)(void *ctx, const struct ctl *c, struct store_write *w);
	void *commit_also_ctx;
	char *principal; /* opts.principal's copy (owned) */
	/* While devices are driven side by side (drive.c's ctl_each): each
	 * device's events, told in device order when all are done. */
	struct ctl_evq *evq;
};

/* The state directory: `dir` if given, else $OFC_STATE_DIR, else
 * OFC_STATE_DIR_DEFAULT. Returns a new string. */
char *ctl_state_dir(const char *dir);
/* Set up the devices of a validated fabric. No I/O to devices. */
int ctl_open(struct fabric *f, const struct ctl_opts *o, struct ctl **out, struct ofc_error *err);
void ctl_close(struct ctl *c);
/* Take the fabric's lock (non-blocking: a second changer gets an error
 * naming the holder). */
int ctl_lock(struct ctl *c, struct ofc_error *err);

/* Move the fabric's lock, and which devices were lost, from one ctl to
 * another of the same fabric (ofcd swaps configs without letting go of the
 * lock). `from` keeps its devices but no longer holds the lock. Whether a
 * device is lost moves only between devices reached the same way (driver,
 * address, credentials): a config naming another address or credentials
 * file for a device says nothing about the device as it runs. */
void ctl_handover(struct ctl *from, struct ctl *to);
/* c is a candidate (a config being planned or tried) beside the running
 * ctl: its devices that running does not reach the same way go quiet, so a
 * candidate's bad address or credentials file is not reported as the running
 * device lost (the mutation's answer has the error). running NULL: every
 * device of c reports again (c is the running one now). */
void ctl_quiet(struct ctl *c, const struct ctl *running);

/* If a journal is left over and nobody holds the lock, finish or undo that
 * transaction (ctl_lock first). *did is set when there was one to repair. */
int ctl_recover(struct ctl *c, bool *did, struct ofc_error *err);
/* The way out of a rollback that cannot finish (a device refuses the undo,
 * or cannot be restored): rather than retrying it on every mutation, the
 * operator takes what the devices hold as the new record. ctl_adopt_read
 * locks (ctl_lock), checks that the fabric's unfinished transaction is
 * rolling back and reads every device into devs[i].actual; the caller shows
 * that against the journal's before and target (a's, c->devs' order) and
 * asks. ctl_adopt_commit then records devs[i].actual as a new generation
 * (*generation) and ends the transaction, in one store write. a is freed
 * by ctl_adopt_free either way. */
struct ctl_adopt {
	uint64_t txn;				    /* the unfinished transaction */
	uint64_t generation;			    /* the record ctl_adopt_commit writes */
	const struct device_state *before, *target; /* the journal's (owned by a) */
	struct journal *journal;		    /* (private) */
};
int ctl_adopt_read(struct ctl *c, struct ctl_adopt *a, struct ofc_error *err);
int ctl_adopt_commit(struct ctl *c, struct ctl_adopt *a, struct ofc_error *err);
void ctl_adopt_free(struct ctl_adopt *a);
/* Read every device; per-device results in devs[i].actual/read_ok/read_err.
 * Fails (the first error) when any device could not be read. */
int ctl_read(struct ctl *c, struct ofc_error *err);
/* ctl_read, then each device's plan from actual to target. */
int ctl_plan(struct ctl *c, struct ofc_error *err);
/* Each device's plan from its last read to its target (what ctl_plan does
 * after reading). */
void ctl_diff(struct ctl *c);
/* What device cd takes for the operations b: an OCS reconfigures once,
 * in reconfig_time, however many cross-connects change (as `ofc plan
 * --workload` prices it, controller/jobplan/ways.c); a patch panel's and
 * a ring's op_seconds each. */
double ctl_ops_seconds(const struct ctl_device *cd, const struct op_batch *b);
/* Device i's target for the whole fabric, from c->fabric alone (its
 * topology's circuits, its rings' lightpaths), whatever a partition's aim
 * made of devs[i].target since: what every replica computes alike from the
 * same config and record. *out is initialised here (caller frees). */
void ctl_fabric_target(const struct ctl *c, uint32_t i, struct device_state *out);
/* After ctl_plan: renumber the target topology so that the most
 * cross-connects the switches hold stay (ops->fabric(ctx, ...): as
 * fabric_relabel), then the switches' and testbed's targets and plans
 * again. For a topology wanted up to the numbering of its nodes: `ofc
 * plan|apply|try --relabel`. Refused when ops has no fabric's. */
int ctl_relabel(struct ctl *c, const struct relabel_ops *ops, void *ctx,
		const struct relabel_opts *o, struct fabric_relabel *rep, struct ofc_error *err);
uint32_t ctl_plan_size(const struct ctl *c);
/* The switches' last reads, indexed by the fabric's switch number (NULL
 * where unread), for fabric_relabel and its kin; caller frees the array. */
const struct device_state **ctl_switch_states(const struct ctl *c);
/* A plan's operations by kind: removals (cross-connects, MRRs, circuits),
 * additions, routes set and removed (plan_text.c). */
struct ctl_plan_counts {
	uint32_t del, add, rset, rdel;
};
struct ctl_plan_counts ctl_plan_counts(const struct op_batch *b);
/* The switching time the devices' plans will take, in seconds: the
 * slowest device's, as the devices are driven side by side. */
double ctl_plan_seconds(const struct ctl *c);
/* "switching time about 2.05 s[, the devices driven side by side]" into
 * buf, or "" when the plan takes none. */
void ctl_plan_seconds_text(const struct ctl *c, char *buf, size_t n);
/* After ctl_plan: the plan as `ofc plan` prints it, appended to out: the
 * totals and switching time, then per device its counts and one line an
 * operation. */
void ctl_plan_text(const struct ctl *c, struct strbuf *out);
/* After ctl_plan: aim at partition p alone. Each switch's
 * target is what it holds now, less every cross-connect on p's ports,
 * plus the circuits p's own topology needs (partition_circuits); rings
 * keep what they hold. Refused, with nothing planned: a cross-connect
 * joining one of p's ports to a port outside p (the whole fabric must be
 * planned first), and a testbed that is up. The plan is then checked to
 * touch p's ports alone, and the commit records p. With relabel (else
 * NULL), p's topology is renumbered over its members to keep the most
 * cross-connects between p's ports (ops->partition(ctx, ...): as
 * partition_relabel; *rep as ctl_relabel's; refused when ops has none). */
int ctl_partition(struct ctl *c, const struct partition *p, const struct relabel_ops *ops,
		  void *ctx, const struct relabel_opts *relabel, struct fabric_relabel *rep,
		  struct ofc_error *err);
/* After ctl_plan (and a renumbering): aim the whole fabric on the ports
 * of no partition in keep (whole hosts, found by name on c's fabric):
 * each switch's target is what it holds now on those partitions' ports,
 * and the fabric's target on every other port (reconfig/free_ports.c).
 * *kept: the cross-connects left as they are. nkeep 0: the plan stays
 * the whole fabric's. Refused, with nothing planned: a testbed that is
 * up, and a kept cross-connect on a port the target needs (a kept
 * partition's port joined to a free one). The commit is the fabric's. */
int ctl_free_ports_aim(struct ctl *c, const struct partition *const *keep, uint32_t nkeep,
		       uint32_t *kept, struct ofc_error *err);

/* ---- choosing a target (reconfig/choose.c) --------------------------------
 * The trade-off: is the requested topology worth its moves? After
 * ctl_plan, the candidates are the config's topology (renumbered to keep
 * circuits unless o->relabel is false), the circuits in place (no move,
 * when they connect every host), and up to o->alternatives members of the
 * topology finder's Pareto frontier for the hosts' ports (renumbered the
 * same way). Each is priced: its moves (the operations of its plan), its
 * reconfiguration time (moves x each device's time per operation: a patch
 * panel's move_time, an OCS's reconfig_time) and its predicted collective
 * time (the config's collectives, once each, through the schedule
 * pipeline on the candidate's graph under the config's cost model, as `ofc
 * schedule` prices them, all-to-all by the MCF). The choice minimises
 * reconfiguration + horizon x collective time among the candidates of at
 * most o->max_moves moves (when max_moves_set); none fitting is an error
 * listing them. The chosen target becomes the plan (devs' targets and
 * plans; f->graph, ports and circuits for a topology; for a partition,
 * ctl_partition's plan of the chosen circuits). */
enum ctl_choice_kind { CHOICE_REQUESTED = 1, CHOICE_KEEP, CHOICE_ALTERNATIVE };

struct ctl_candidate {
	enum ctl_choice_kind kind;
	char spec[TOPO_MAX_SPEC + 1]; /* the topology ("in place" for KEEP) */
	char label[TOPO_MAX_SPEC + 40];
	uint32_t moves;	      /* operations of its plan */
	double reconfig_s;    /* switching time of those operations (the slowest device's) */
	double collective_us; /* one run of the priced collectives */
	double total_s;	      /* reconfig_s + horizon x collective_us */
	uint32_t steps;	      /* summed over the priced collectives */
	bool relabelled;
	uint64_t arcs, kept; /* links of the target, of them in place */
	bool fits;	     /* within max_moves (true without it) */
	/* private: the target, moved into the fabric when chosen */
	struct graph *g;
	struct port_map pm;
	struct circuit *circuits;
	uint32_t ncircuits;
};

struct ctl_choice_opts {
	double horizon; /* runs of the collectives until the next reconfiguration */
	bool relabel;	/* renumber topologies to keep circuits */
	struct relabel_opts relabel_opts;
	uint32_t alternatives; /* finder entries to consider (0: none) */
	uint32_t max_moves;
	bool max_moves_set;
	/* This partition alone (NULL: the whole fabric): its topology, its
	 * members (the finder for their count), the links between its ports
	 * in place, its collectives (else the config's); the plan is
	 * ctl_partition's, so nothing outside it changes. */
	const struct partition *partition;
};

struct ctl_choice {
	struct ctl_candidate *cand;
	uint32_t n;
	int chosen; /* index into cand */
	double horizon;
	char priced[160];	 /* "allreduce 64MiB" */
	char left_out[160];	 /* collectives not priced, or "" */
	char why[1024];		 /* one sentence: what was chosen and why */
	char not_candidate[320]; /* why the circuits in place are not one, or "" */
};

int ctl_choose(struct ctl *c, const struct ctl_choice_opts *o, struct ctl_choice *ch,
	       struct ofc_error *err);
/* (choice.c, apart from the choosing: what frees a result links no
 * pricing) */
void ctl_choice_free(struct ctl_choice *ch);

struct ctl_result {
	uint64_t txn;
	uint32_t ops_applied;
	bool rolled_back; /* a failure was undone */
	bool rollback_ok; /* ... and every device verified at its old state */
	char failed_device[NAME_MAX_LEN + 1];
	double seconds;
};

/* Apply the plan (ctl_plan first) as one transaction: journal the intent
 * (fsync), apply on every device at once (side by side, each on its own
 * connection), read back and compare, then commit (state file, journal
 * removed). On any failure undo every device, read back again and return
 * -1 with err saying what failed (the first failing device in order);
 * res says whether the fabric is back where it was. With trial_deadline
 * (Unix seconds) > 0 the transaction stays open in PHASE_TRIAL instead of
 * committing: ctl_trial_finish() ends it. */
int ctl_apply(struct ctl *c, double trial_deadline, struct ctl_result *res, struct ofc_error *err);
/* ---- the use case: reconfigure the fabric or a partition (reconfigure.c) --
 * One function for every front door (`ofc plan|apply|try`, `ofc testbed
 * run --workload`, ofcd's mutations and re-wiring): lock and repair a
 * transaction a crash left (q->ctl), make the ctl to plan on (q->target,
 * else q->ctl), read the devices and plan, aim (a choice by cost with
 * choose, a partition, a renumbering kept or asked for), check (max_moves,
 * q->check), then, unless dry_run, apply and record as one transaction.
 * Nothing prints: on_event tells the caller what it may report. -1: r->stage
 * says where it stopped, err why; r->planned is the ctl planned on (NULL
 * before it is made), the caller's to close or keep either way. */
enum reconfigure_stage {
	RECONF_RECOVER = 1, /* the lock and a crash's journal */
	RECONF_TARGET,	    /* q->target */
	RECONF_READ,	    /* reading the devices: ctl_plan */
	RECONF_AIM,	    /* partition, choice, renumbering */
	RECONF_CHECK,	    /* max_moves, q->check */
	RECONF_APPLY,	    /* the transaction (r->txn) */
	RECONF_DONE,
};
enum reconfigure_event {
	RECONF_EV_KEEP_NUMBERING, /* the last commit's renumbering is kept */
	RECONF_EV_AIMED,	  /* the aim is planned (before the checks) */
	RECONF_EV_READ,		  /* the devices are read and the plan diffed */
};
struct reconfigure_result;
struct reconfigure_req {
	struct ctl *ctl; /* repairs; planned on unless target gives another */
	bool lock;	 /* take the fabric's lock first */
	bool recover;	 /* finish or undo a journal left behind */
	/* After the repair: the ctl to plan and apply on (ofcd: a new config's
	 * beside the running one), into *out. NULL: ctl. */
	int (*target)(void *ctx, struct ctl **out, struct ofc_error *err);
	/* the aim: a partition given, else one of the config's by name
	 * (looked up after the read) */
	const struct partition *partition;
	const char *partition_name;
	bool relabel; /* renumber to keep circuits */
	struct relabel_opts relabel_opts;
	/* How a renumbering is done (asked, or the last commit's kept), with
	 * ctx: relabel_direct runs the search here; ofcd's asks a planner
	 * process. A table, not a flag, so that ofcd links no search. NULL:
	 * a renumbering is refused. */
	const struct relabel_ops *relabel_ops;
	bool relabel_before; /* a partition: its plan without renumbering too (r->before) */
	bool no_relabel;     /* never renumber (and no candidate renumbered) */
	/* The fabric's target on the ports of none of these (held
	 * partitions) alone (ctl_free_ports_aim); not with a partition or
	 * choose. */
	bool free_ports;
	const struct partition *const *keep;
	uint32_t nkeep;
	bool keep_numbering; /* keep the last commit's renumbering of this topology */
	/* The cheapest target over horizon runs: ctl_choose (the CLI's
	 * --horizon); NULL: the target as asked. A function, not a flag, so
	 * that only a program that chooses links the pricing (the schedule
	 * pipeline, the finder): ofcd asks for none. */
	int (*choose)(struct ctl *c, const struct ctl_choice_opts *o, struct ctl_choice *ch,
		      struct ofc_error *err);
	double horizon;
	uint32_t alternatives;
	bool alternatives_set;
	uint32_t max_moves; /* refuse larger plans (max_moves_set) */
	bool max_moves_set;
	int (*check)(void *ctx, struct ctl *planned, struct ofc_error *err);
	/* A partition's circuits the caller planned ahead (ofcd plans the
	 * run-time partitions queued behind the one it commits): asked after
	 * the read, with the devices as read; 1: *pc (*npc, *rep) is the plan,
	 * moved to reconfigure_run; 0: planned here as usual (none was, or
	 * what it read has changed). NULL: none. */
	int (*ahead)(void *ctx, const struct ctl *c, const struct partition *p, struct circuit **pc,
		     uint32_t *npc, struct fabric_relabel *rep);
	bool dry_run;	 /* stop at the plan */
	bool skip_empty; /* apply nothing when nothing changes */
	double trial_s;	 /* > 0: leave a trial open that long (ctl_trial_finish) */
	void (*on_event)(void *ctx, enum reconfigure_event ev, const struct reconfigure_result *r);
	void *ctx; /* target's, check's, on_event's, ahead's and relabel_ops' */
};
struct reconfigure_result {
	enum reconfigure_stage stage; /* reached (RECONF_DONE), or where it stopped */
	bool recovered;		      /* a journal was repaired */
	struct ctl *planned;
	const struct partition *partition; /* aimed at (NULL: the whole fabric) */
	uint32_t before;		   /* operations before renumbering */
	bool renumbered;		   /* asked, or kept from the last commit */
	bool kept_numbering;
	uint64_t kept_generation; /* ... the commit's */
	uint32_t kept_circuits;	  /* free_ports: cross-connects left on kept ports */
	struct fabric_relabel relabel;
	bool chose;
	struct ctl_choice choice;
	bool applied; /* the transaction ran (r->txn) */
	double trial_deadline;
	struct ctl_result txn;
};
int reconfigure_run(const struct reconfigure_req *q, struct reconfigure_result *r,
		    struct ofc_error *err);
void reconfigure_result_free(struct reconfigure_result *r);

/* ---- a change in stages under a loss budget (reconfig/stages.c) ----------
 * From the port permutations `from` to `to` (the same hosts and ports) in
 * stages, each one transaction, so that during each stage the topology
 * before it less the host ports its changing circuits end at keeps at
 * least (1 - max_loss) of the bandwidth of the poorer of from and to, as
 * the cost model prices a degraded graph (degraded_bound's tau_B of coll,
 * 0: allgather; work as its). Cycles of each row's change are the units
 * (a row stays a permutation, so every stage's topology is a ports:
 * spec); a cycle too big for one stage is cut, one circuit more a cut.
 * Fewest stages first (greedy, biggest units first; min_stages a lower
 * bound by the nodes alone), then fewest circuits (fewest: the circuits
 * that differ). Deterministic: every replica makes the same plan. */
#define STAGE_MAX 4096
struct stage_req {
	const struct port_map *from, *to;
	double max_loss; /* a fraction, above 0 and below 1 */
	enum sched_collective coll;
	uint64_t work;
	/* Per host (n), or NULL: the hosts of held partitions. Their ports'
	 * circuits are the partitions' own (the devices aimed on the free
	 * ports alone), so a circuit of the permutations with a held end is
	 * the record's alone: it changes with no device circuit moved, takes
	 * no port out of use, and counts in no stage's circuits; the price is
	 * the free hosts' (the circuits between them). */
	const bool *fixed;
};
struct stage {
	struct port_map after; /* the topology once it commits (owned) */
	uint32_t *dark;	       /* host ports out of use during it: row * n + node, sorted */
	uint32_t ndark;
	uint32_t moved; /* circuits it sets on the devices */
	uint32_t ops;	/* device operations: a circuit removed or set, each */
	uint32_t units; /* cycles (or parts) it changes */
	bool cut;	/* one of them is a cycle's first part */
	double loss;	/* the bandwidth share lost during it */
	bool exact;	/* the price checked every cut (else within work) */
	/* The leftovers: circuits the devices hold on free ports that the
	 * record's topology has not (a released partition's stay until their
	 * ports are aimed again), set back to the record's in a stage of
	 * their own before the change (ofcd makes it from the devices'
	 * records: the planner never sees them). Its ports carry nothing the
	 * record's schedule can use before it, so it takes no port in use
	 * away: its loss is the fabric's as it is, not held to the budget. */
	bool leftover;
	uint32_t removed; /* leftover: cross-connects removed */
};
struct stage_plan {
	struct stage *v;
	uint32_t n;
	uint32_t moved, fewest, min_stages;
	double ref_tau_b, max_loss;
};
int stage_plan_make(const struct stage_req *q, struct stage_plan *p, struct ofc_error *err);
void stage_plan_free(struct stage_plan *p);
/* The loss (a fraction; 1: hosts cut off) of cur's free hosts' graph less
 * the host ports in dark (row * n + node), against ref (a tau_B), as a
 * stage is priced; *exact as a stage's. */
double stage_loss(const struct stage_req *q, const struct port_map *cur, const uint32_t *dark,
		  uint32_t ndark, double ref, bool *exact);
/* The plan in words, appended: the totals, then each stage's circuits,
 * ports out of use and loss. */
void stage_plan_text(const struct stage_plan *p, const char *target, struct strbuf *out);

/* Commit (confirmed) or undo the open trial. */
int ctl_trial_finish(struct ctl *c, bool confirmed, struct ctl_result *res, struct ofc_error *err);
/* Whether `ofc confirm` has confirmed the open trial of this ctl. */
bool ctl_trial_confirmed(const struct ctl *c);
/* Confirm the trial of fabric `name` (NULL: the only trial in the
 * directory). *fabric_out gets the fabric's name (caller frees), *txn_out
 * the trial's transaction: once the journal is gone, the record's
 * generation equals it if the trial was kept (a rollback keeps the old
 * generation). */
int ctl_confirm(const char *state_dir, const char *name, char **fabric_out, uint64_t *txn_out,
		struct ofc_error *err);

/* The recorded state and the journal, as read from disk. */
struct ctl_record {
	bool have_state;
	uint64_t generation;
	uint64_t time_unix_ms;
	char *config, *topology;
	bool relabelled; /* the topology was renumbered to keep circuits */
	char *partition; /* the last commit changed this partition alone (NULL: none) */
	/* The whole fabric's topology as committed: topology when the last
	 * commit was the fabric's, the one before a partition's commit ("":
	 * none of its own; NULL: an older ofc's record after a partition's
	 * commit, which did not keep it). */
	char *fabric_topology;
	/* The highest transaction id used (committed or rolled back): the
	 * record's last_transaction, else its generation. */
	uint64_t last_txn;
	/* The host ports moved onto spares in the wiring the devices hold
	 * (moves_known: the record says; an older ofc's does not). */
	struct port_move *moves;
	uint32_t nmoves;
	bool moves_known;
	uint32_t ndevs;
	char **dev_names;
	struct device_state *dev_states;
	bool have_journal;
	uint64_t journal_id;
	const char *journal_phase; /* "applying", "rolling-back", "trial", "committing" */
	uint32_t journal_pid;
	/* A replicated ofcd's: the leadership that committed the
	 * record, and that wrote the journal (0: none, a files store); the
	 * replicas' names (NULL: none). */
	uint64_t epoch, journal_epoch;
	char *replica, *journal_replica;
	/* Who asked for the commit, and for the journal's transaction
	 * (txn_meta.principal; NULL: not recorded). */
	char *principal, *journal_principal;
	bool journal_owner_alive; /* the process that wrote it holds the lock */
	double trial_deadline;
};
int ctl_load_record(const char *state_dir, const char *fabric, struct ctl_record *r,
		    struct ofc_error *err);
/* The same from a store (ctl_load_record is this on the files of
 * state_dir). */
int ctl_load_record_in(struct store *s, const char *fabric, struct ctl_record *r,
		       struct ofc_error *err);
/* The record of c's fabric from c's store, each device's state checked
 * against c's config (its ports, rings, hosts): what is planned or shown
 * beside a config reads it this way. A state that does not fit is a
 * corrupt record, named with its file or key and the way out. */
int ctl_load_record_for(const struct ctl *c, struct ctl_record *r, struct ofc_error *err);
/* The topology r committed when a spec alone says it and f's config
 * names another (r's; NULL: none such, or a renumbered topology or a
 * partition's commit, which is not a spec alone): what a testbed run is
 * for. */
const char *ctl_record_other_spec(const struct fabric *f, const struct ctl_record *r);
void ctl_record_free(struct ctl_record *r);
/* Fabrics with a state or journal file in the directory (caller frees). */
int ctl_list_fabrics(const char *state_dir, char ***names, uint32_t *n, struct ofc_error *err);

/* ---- running a schedule on a WDM ring (reconfig/ring_run.c) ----------------
 * `ofc ring run`: every step of a verified ring schedule becomes a
 * configuration of MRR channels (interface 2f: fibre f clockwise, 2f + 1:
 * counter-clockwise), pushed through the ring's driver one retune per step
 * (one request, one tuning delay), with the next step's idle lightpaths
 * pre-tuned during a step's transmission when overlap is set. Transmission
 * is the cost model's (steps x b / B_lambda); tuning is measured. Holds the
 * fabric's lock; a refused retune or a lost agent stops the run and the
 * ring goes back to its static configuration (read back and compared), as
 * it does at the end. Errors name the stage, the step and the agent's
 * reason. */
struct ring_run_opts {
	bool overlap;
	double step_us; /* b / B_lambda */
	double mrr_us;	/* Eq. 3's d_mrr and d_oeo, for the prediction */
	double oeo_us;
};

struct ring_run_stage {
	uint32_t first_step, steps;
	uint32_t retunes;	 /* steps that waited for a retune */
	uint32_t ops, early_ops; /* MRR changes; of them overlapped */
	double tune_us;		 /* measured, the ring waiting for acknowledgements */
	double pretune_us;	 /* measured, overlapped with transmission */
	double tx_us;		 /* the cost model */
	double idle_us;		 /* the ring dark between steps */
	double start_us, end_us; /* realised timeline */
	double predicted_us;	 /* Eq. 3: steps b / B_lambda + d_mrr + d_oeo */
};

struct ring_run_report {
	struct ring_run_stage *stage;
	uint32_t nstages, steps, retunes;
	uint64_t ops, early_ops;
	double realised_us, predicted_us, tune_us;
	double hidden_us; /* overlapped tuning that transmission covered */
	bool failed;
	uint32_t failed_stage, failed_step; /* 0-based */
	bool restored;			    /* the ring holds its static configuration */
};

int ring_run(struct ctl *c, uint32_t ring_index, const struct schedule *s,
	     const uint32_t *stage_first, uint32_t nstages, const struct ring_run_opts *o,
	     struct ring_run_report *rep, struct ofc_error *err);
void ring_run_report_free(struct ring_run_report *rep);
/* The MRR configuration of every step (nsteps states, caller frees each
 * and the array): what `ofc ring run` tunes, for checking and printing. */
int ring_run_configs(const struct fabric *f, uint32_t ring_index, const struct schedule *s,
		     struct device_state **out, struct ofc_error *err);

#endif
