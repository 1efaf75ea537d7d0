/* controller — the fabric model, its YAML configuration and validation,
 * exports, and the commands of the `ofc` CLI.
 *
 * Data flow: config_load() reads YAML into a struct fabric (syntax, types,
 * units, unknown keys: every error names FILE:LINE:COL); fabric_validate()
 * then checks the model as a whole (names, references, ranges, whether the
 * wiring can realise the topology) and resolves it: hosts are numbered,
 * wiring is explicit, the target topology and its circuits are computed.
 */
#ifndef OFC_CONTROLLER_H
#define OFC_CONTROLLER_H

#include "drivers/drivers.h"
#include "optree/optree.h"
#include "sched/sched.h"
#include "topo/topo.h"
#include "util/util.h"

#define CONFIG_MAX_BYTES (8u << 20) /* a config larger than this is refused */
#define CONFIG_MAX_DEPTH 64	    /* YAML nesting */
#define CONFIG_MAX_NODES 2000000u   /* YAML nodes visited, aliases expanded */
#define CONFIG_MAX_HOSTS 262144u
#define NAME_MAX_LEN	 63

/* Where a value was in the config: 1-based line and column. */
struct src_loc {
	uint32_t line, col;
};

/* Every struct below starts with its own location (the mapping it came
 * from): the loader fills it without knowing the type. */

struct host {
	struct src_loc loc;
	char *name;
	uint32_t ports;	  /* NIC ports */
	double port_rate; /* bits/s per port, 0 when not given */
	char *server;	  /* a server template it instantiates, or NULL */
	struct src_loc server_loc;
};

/* Server fabrics (issue 13, fluid/): a template's vertices, links and
 * capacity sets, instantiated per host as "host/vertex"; and the same at
 * fabric level for rails and circuits between NICs. */
enum server_kind { SK_GPU = 0, SK_MEMORY, SK_SWITCH };
struct sv_vertex {
	struct src_loc loc;
	char *name;
	int kind; /* enum server_kind */
};
struct sv_link {
	struct src_loc loc;
	char *from, *to;
	double bandwidth; /* bits/s per direction */
	double cost;	  /* per unit of data */
	bool one_way;
	struct src_loc from_loc, to_loc;
};
struct sv_set {
	struct src_loc loc;
	char *name;
	double bandwidth; /* bits/s shared by the arcs */
	char **arcs;	  /* "from>to" */
	struct src_loc *arc_locs;
	uint32_t narcs;
};
struct server_template {
	struct src_loc loc;
	char *name;
	struct sv_vertex *vertices;
	uint32_t nvertices;
	struct sv_link *links;
	uint32_t nlinks;
	struct sv_set *sets;
	uint32_t nsets;
};

struct driver_cfg {
	struct src_loc loc;
	bool present;
	char *type;		/* tl1, patch-panel, mrr, netlink, sim */
	char *address;		/* "host:port" as written, NULL when none */
	char *credentials;	/* path as written, NULL when none */
	char *credentials_path; /* resolved against the config's directory */
	double timeout;		/* seconds per command */
	uint32_t retries;
	struct src_loc address_loc, credentials_loc;
};

/* A lightpath a ring should carry (config `lightpaths`): the MRRs of
 * `interface` at `from` add the wavelength and those at `to` drop it. */
struct lightpath_cfg {
	struct src_loc loc;
	char *from, *to;
	uint32_t wavelength, interface;
	uint32_t src, dst; /* ring positions, after validation */
};

struct ring {
	struct src_loc loc;
	char *name;
	bool all_nodes;	   /* nodes: all */
	char **node_names; /* as written, when not all */
	struct src_loc *node_locs;
	uint32_t nnode_names;
	uint32_t *members; /* host indices in ring order (after validation) */
	uint32_t nmembers;
	uint32_t wavelengths; /* per fibre */
	uint32_t fibres;      /* per direction */
	double rate;	      /* bits/s per wavelength */
	uint32_t interfaces;  /* optical interfaces per node */
	uint32_t mrrs;	      /* MRRs per interface */
	double mrr_delay;     /* seconds to retune an MRR */
	double oeo_delay;     /* seconds per O/E/O conversion */
	struct driver_cfg driver;
	struct src_loc nodes_loc;
	struct lightpath_cfg *lightpaths;
	uint32_t nlightpaths;
};

enum switch_kind { SWITCH_OCS = 1, SWITCH_PATCH_PANEL = 2 };

struct fswitch {
	struct src_loc loc;
	char *name;
	enum switch_kind kind;
	uint32_t ports; /* N x N: ingress and egress ports 1..N */
	double reconfig_time;
	double move_time;
	bool reconfig_set, move_set;
	struct driver_cfg driver;
	struct src_loc ports_loc, reconfig_loc, move_loc;
};

/* Host port (host, host_port) is cabled to switch port sw_port: transmit
 * fibre to ingress sw_port, receive fibre from egress sw_port. */
struct attachment {
	struct src_loc loc;
	char *host_name, *switch_name; /* as written (explicit wiring) */
	uint32_t host_port, sw_port;
	uint32_t host, sw; /* indices, after validation */
};

enum wiring_pattern { WIRING_NONE = 0, WIRING_EXPLICIT, WIRING_SEQUENTIAL, WIRING_PER_PORT };

struct wiring_cfg {
	struct src_loc loc;
	enum wiring_pattern pattern;
	char **switch_names;
	struct src_loc *switch_locs;
	uint32_t nswitch_names;
	uint32_t first_port;
	struct attachment *explicit_list;
	uint32_t nexplicit;
};

enum self_loop_mode { SELF_LOOPS_LOOPBACK = 1, SELF_LOOPS_DARK = 2 };

struct topo_target {
	struct src_loc loc;
	bool present;
	char *spec;
	struct src_loc spec_loc;
	unsigned spec_quoted; /* 1 when the scalar was quoted: columns shift */
	enum self_loop_mode self_loops;
	/* spec: auto -> the topology finder's pick for the fabric's collectives
	 * (validation replaces spec with the pick and sets these). */
	bool auto_picked;
	double auto_time_us; /* the workload's predicted time on the pick */
};

enum collective_op {
	COLL_ALLGATHER = 1,
	COLL_REDUCE_SCATTER = 2,
	COLL_ALLREDUCE = 3,
	COLL_ALLTOALL = 4,
};

struct collective {
	struct src_loc loc;
	enum collective_op op;
	uint64_t size; /* bytes per node */
	char *algorithm;
};

struct cost_model {
	struct src_loc loc;
	double alpha;	       /* seconds per step */
	double link_bandwidth; /* bits/s */
	bool alpha_set, bandwidth_set;
};

/* A cross-connect the target topology needs. */
struct circuit {
	uint32_t sw, in_port, out_port;
	uint32_t src_host, src_port, dst_host, dst_port;
};

struct fabric {
	struct src_loc loc; /* first, as in every struct the loader fills */
	char *file;	    /* path as given, for messages */
	char *dir;	    /* directory of the file: relative paths resolve here */
	char *name;
	char *description;
	uint32_t version;
	struct src_loc name_loc;

	struct host *hosts;
	uint32_t nhosts;
	struct src_loc hosts_loc;
	bool hosts_generated;

	struct ring *rings;
	uint32_t nrings;
	struct fswitch *switches;
	uint32_t nswitches;
	struct wiring_cfg wiring_cfg;
	struct topo_target topology;
	struct collective *collectives;
	uint32_t ncollectives;
	struct cost_model cost;
	struct server_template *servers; /* templates */
	uint32_t nservers;
	struct sv_vertex *fvertices; /* fabric-level vertices (rail switches) */
	uint32_t nfvertices;
	struct sv_link *flinks; /* rails, circuits between NICs */
	uint32_t nflinks;
	struct sv_set *fsets;
	uint32_t nfsets;

	/* Filled by fabric_validate(). */
	bool validated;
	uint32_t *host_index;	   /* host indices sorted by name, for lookups */
	struct attachment *wiring; /* resolved: one per wired host port */
	uint32_t nwiring;
	struct graph *graph; /* target topology, NULL when none */
	struct topo_facts facts;
	struct port_map ports; /* its port permutations, when wired */
	struct circuit *circuits;
	uint32_t ncircuits;
};

/* OpTree's model of a config's ring for all-gathers of size-byte blocks
 * (0: the config's first allgather's, else 4 MiB); a config without
 * mrrs_per_interface has one MRR per wavelength. */
struct optree_ring ring_optree_model(const struct fabric *f, const struct ring *ring,
				     uint64_t size);

/* Parse YAML text (named `file` in messages; dir for relative paths). */
int config_parse(const char *file, const char *text, size_t len, struct fabric **out,
		 struct ofc_error *err);
/* Read and parse a file (size-limited). */
int config_load(const char *path, struct fabric **out, struct ofc_error *err);
/* Check the model as a whole and resolve references; see the file comment. */
int fabric_validate(struct fabric *f, struct ofc_error *err);
/* config_load + fabric_validate. */
int fabric_open(const char *path, struct fabric **out, struct ofc_error *err);
void fabric_free(struct fabric *f);
/* The server fabric of a config (hosts with `server`, fabric vertices,
 * links and capacity sets) as fluid's network; errors name FILE:LINE:COL.
 * OFC_E_INPUT when the config has no server hosts. */
struct fluid_net;
int fabric_server_net(const struct fabric *f, struct fluid_net *n, struct ofc_error *err);

int fabric_find_host(const struct fabric *f, const char *name);
int fabric_find_switch(const struct fabric *f, const char *name);
const char *collective_op_name(enum collective_op op);
int collective_op_parse(const char *s, enum collective_op *op);

/* ---- exports ------------------------------------------------------------ */

/* Serialise the validated fabric as ofc.v1.Fabric / a graph as
 * ofc.v1.Topology. The caller frees *buf. */
int fabric_pack(const struct fabric *f, uint8_t **buf, size_t *len, struct ofc_error *err);
int topology_pack(const struct graph *g, const struct topo_facts *facts, const struct port_map *pm,
		  uint8_t **buf, size_t *len);
/* A schedule as ofc.v1.Schedule, written step by step: the header, then one
 * message per step holding only that step (protobuf merges concatenated
 * messages, appending repeated fields), so memory stays one step's worth. */
int schedule_write_pb(const struct schedule *s, FILE *out, struct ofc_error *err);
/* The JSON form of the same ofc.v1.Fabric message (`ofc show --json`). */
int fabric_write_json(const struct fabric *f, FILE *out, struct ofc_error *err);
/* People's form (`ofc show`). */
void fabric_write_text(const struct fabric *f, FILE *out);

/* ---- reconfiguration: plan, transactions, journal, recovery --------------
 * (controller/ctl.c, controller/journal.c). A struct ctl holds one fabric's
 * managed devices: its switches and rings that have a driver, and, while a
 * testbed is up, the Linux hosts (netlink). Everything here reports through
 * struct ofc_error and the event callback; nothing prints. ofcd runs the same
 * calls; reads of the last committed state (ctl_load_record) never wait
 * for a transaction.
 *
 * On disk, in the state directory (ctl_state_dir()): <fabric>.state (the
 * recorded state of the last commit), <fabric>.journal (a transaction in
 * progress), <fabric>.lock (flock: one changer at a time), <fabric>.confirm
 * (`ofc confirm` for `ofc try`), <fabric>.testbed (the testbed is up).
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
};

struct ctl_opts {
	const char *state_dir;	      /* NULL: ctl_state_dir(NULL) */
	const char *const *overrides; /* "NAME=HOST:PORT" (--device) */
	uint32_t noverrides;
	/* sim devices: the in-process twin of a device, or NULL for a file in
	 * the state directory. */
	struct sim_device *(*sim_lookup)(void *ctx, const char *device);
	void (*on_event)(void *ctx, const struct ctl_event *ev);
	void *ctx;
	bool no_testbed; /* leave the hosts out even when a testbed is up */
};

struct ctl_device {
	struct device_cfg cfg; /* strings borrowed from the fabric */
	struct device dev;
	struct device_state target; /* what the config wants */
	struct device_state actual; /* last read */
	bool read_ok;
	struct ofc_error read_err;
	struct op_batch plan; /* actual -> target */
	double op_seconds;    /* switching time per operation (config) */
	double est_seconds;   /* switching time the plan will take */
	bool lost;	      /* the last read failed */
};

struct ctl {
	struct fabric *fabric; /* borrowed */
	struct ctl_opts opts;
	char *state_dir;
	int lock_fd;
	struct ctl_device *devs;
	uint32_t ndevs;
	char **netns;		  /* testbed namespaces, one per host, when up */
	uint64_t txn;		  /* the transaction running or last run */
	uint64_t prev_generation; /* of the record before it (kept by a rollback) */
	char *prev_topology;	  /* ... and its topology (a rollback records it again) */
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
 * lock). `from` keeps its devices but no longer holds the lock. */
void ctl_handover(struct ctl *from, struct ctl *to);

/* If a journal is left over and nobody holds the lock, finish or undo that
 * transaction (ctl_lock first). *did is set when there was one to repair. */
int ctl_recover(struct ctl *c, bool *did, struct ofc_error *err);
/* Read every device; per-device results in devs[i].actual/read_ok/read_err.
 * Fails (the first error) when any device could not be read. */
int ctl_read(struct ctl *c, struct ofc_error *err);
/* ctl_read, then each device's plan from actual to target. */
int ctl_plan(struct ctl *c, struct ofc_error *err);
uint32_t ctl_plan_size(const struct ctl *c);

struct ctl_result {
	uint64_t txn;
	uint32_t ops_applied;
	bool rolled_back; /* a failure was undone */
	bool rollback_ok; /* ... and every device verified at its old state */
	char failed_device[NAME_MAX_LEN + 1];
	double seconds;
};

/* Apply the plan (ctl_plan first) as one transaction: journal the intent
 * (fsync), apply per device in order, read back and compare, then commit
 * (state file, journal removed). On any failure undo what was applied, in
 * reverse order, read back again and return -1 with err saying what failed;
 * res says whether the fabric is back where it was. With trial_deadline
 * (Unix seconds) > 0 the transaction stays open in PHASE_TRIAL instead of
 * committing: ctl_trial_finish() ends it. */
int ctl_apply(struct ctl *c, double trial_deadline, struct ctl_result *res, struct ofc_error *err);
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
	uint32_t ndevs;
	char **dev_names;
	struct device_state *dev_states;
	bool have_journal;
	uint64_t journal_id;
	const char *journal_phase; /* "applying", "rolling-back", "trial", "committing" */
	uint32_t journal_pid;
	bool journal_owner_alive; /* the process that wrote it holds the lock */
	double trial_deadline;
};
int ctl_load_record(const char *state_dir, const char *fabric, struct ctl_record *r,
		    struct ofc_error *err);
void ctl_record_free(struct ctl_record *r);
/* Fabrics with a state or journal file in the directory (caller frees). */
int ctl_list_fabrics(const char *state_dir, char ***names, uint32_t *n, struct ofc_error *err);

/* ---- testbed (controller/testbed.c) ---------------------------------------
 * One network namespace per host, one veth pair per circuit, addresses from
 * 198.18.0.0/15, routes along shortest paths of the circuits. */

/* The MRR channels ring r's lightpaths need (controller/rings.c). */
void ring_target(const struct fabric *f, uint32_t r, struct device_state *out);
/* Check ring r's lightpaths and resolve their ends (called by validation). */
int ring_check_lightpaths(struct fabric *f, uint32_t r, struct ofc_error *err);

/* The hosts' state for a set of circuits: links and shortest-path routes. */
void testbed_target(const struct fabric *f, const struct hlink *links, uint32_t nlinks,
		    struct device_state *out);
/* Namespace name of host h: "ofc-<fabric>-<host>" (caller frees). */
char *testbed_netns_name(const struct fabric *f, uint32_t h);
/* Circuits the switches hold now, as host links (reads the switches). */
int testbed_current_links(struct ctl *c, struct hlink **links, uint32_t *n, struct ofc_error *err);
int testbed_up(struct ctl *c, uint32_t *ncircuits, struct ofc_error *err);
int testbed_down(struct ctl *c, uint32_t *nremoved, struct ofc_error *err);
bool testbed_is_up(const char *state_dir, const char *fabric);

/* ---- schedules for a fabric or a topology (controller/schedule_api.c) ------
 * What `ofc schedule` computes for direct-connect topologies, as a library
 * call for ofcd's GetSchedule and State: build the schedule (BFB, the
 * expansion construction or a baseline), verify it with sched_verify and
 * price it with the alpha-beta model. On a fabric wired through switches the
 * transfer ports are the hosts' NIC ports (the wiring's port permutations)
 * and the links used are listed with the switch ports that carry them.
 * On a fabric with a WDM ring (and no spec): all-gather by OpTree or its
 * baselines on its first ring (algorithm optree, ring, ne, onestage). */
struct schedule_query {
	const struct fabric *fabric; /* validated; NULL with spec alone */
	const char *spec;	     /* a topology instead of the fabric's (no NIC ports) */
	enum sched_collective collective;
	const char *algorithm; /* NULL: bfb (optree on a WDM ring) */
	uint64_t size;	       /* bytes per node; 0: the fabric's collective of that kind */
	uint32_t chunks;       /* BFB: P chunks per shard; 0: exact fractions */
	unsigned threads;      /* 0: all CPUs */
};

struct schedule_link {
	uint32_t src, port, dst;
	int32_t circuit; /* index into fabric->circuits, -1 when none */
};

/* A topology on the fabric's wiring, where port j of host u transmits to
 * ports.to[j * n + u]. arc2port maps the graph's CSR arcs to NIC ports (the
 * k-th parallel arc u -> v takes the k-th port of u that reaches v) and pg
 * is the same graph with arcs in port order, so a transfer's lane is its
 * NIC port and the verifier checks it against the wiring. One for the CLI
 * (`ofc schedule FILE`) and the daemon (schedule_compute). */
struct fabric_view {
	uint32_t *arc2port;
	struct graph *pg;
	int32_t *circuit; /* (u * d + j) -> index into fabric->circuits, -1 when none */
};
/* false (and an empty view) when the fabric has no wiring for g's nodes. */
bool fabric_view_init(const struct fabric *f, const struct graph *g, struct fabric_view *v);
void fabric_view_free(struct fabric_view *v);
/* Transfer lanes from positions among g's arcs to NIC ports. */
void fabric_view_to_nic(const struct fabric_view *v, const struct graph *g, struct schedule *s);
/* The links a schedule on NIC ports uses, in (host, port) order: the count,
 * with *links allocated (free it). */
uint32_t fabric_view_links(const struct fabric_view *v, const struct fabric *f,
			   const struct schedule *s, struct schedule_link **links);

struct schedule_result {
	struct schedule s; /* verified (s.verified) and priced */
	struct frac tau_b; /* exact for BFB, else from the measured link loads */
	double tau_b_value;
	double measured;	/* tau_B from the verifier's link loads */
	char verify_error[320]; /* when !s.verified */
	struct cost_bound lb;
	uint32_t degree;
	bool nic_ports;		     /* transfer ports are NIC ports of the fabric */
	struct schedule_link *links; /* with nic_ports: every link used */
	uint32_t nlinks;
	const struct fabric *fabric;
};

/* Errors: OFC_E_INPUT for requests that cannot be met (unknown algorithm,
 * an algorithm that does not apply, a topology spec that does not parse:
 * err->col is then the column in the spec), OFC_E_RUNTIME otherwise. A
 * schedule the verifier rejects is returned (0) with s.verified false. */
int schedule_compute(const struct schedule_query *q, struct schedule_result *r,
		     struct ofc_error *err);
/* The algorithms schedule_compute knows by name (whether one applies to a
 * given fabric and collective, only schedule_compute tells). */
bool schedule_algorithm_known(const char *algo);
void schedule_result_free(struct schedule_result *r);

/* ---- ofcd: the controller daemon (controller/ofcd*.c) ----------------------
 * Serves the control API (proto/control.proto, docs/control.md) on a Unix
 * socket: frames of a 4-byte big-endian length and one protobuf message.
 * Reads are answered by the event loop from the last committed state;
 * mutations run one at a time, in arrival order, on a worker thread that
 * owns the struct ctl; schedules are computed on a second worker. The
 * daemon holds the fabric's lock for its whole life. Nothing here prints:
 * log lines go to opts.log. */

#define OFCD_MAX_FRAME_DEFAULT (16u << 20)

/* Log levels are syslog's. */
enum ofcd_log_level {
	OFCD_LOG_ERR = 3,
	OFCD_LOG_WARNING = 4,
	OFCD_LOG_NOTICE = 5,
	OFCD_LOG_INFO = 6,
	OFCD_LOG_DEBUG = 7,
};

struct ofcd_opts {
	const char *config_path;
	const char *socket_path;    /* mutations (root, admin group) and reads */
	const char *ro_socket_path; /* reads only, for anyone; NULL: none */
	unsigned socket_mode;	    /* of the main socket (default 0660) */
	bool have_admin_group;
	unsigned admin_gid;	      /* members may mutate */
	const char *admin_group;      /* its name, for messages */
	const char *state_dir;	      /* NULL: ctl_state_dir(NULL) */
	const char *const *overrides; /* "NAME=HOST:PORT" (--device) */
	uint32_t noverrides;
	uint32_t max_frame;    /* bytes, both ways; 0: OFCD_MAX_FRAME_DEFAULT */
	uint32_t max_clients;  /* 0: 1024 */
	double client_timeout; /* seconds a half-sent request or an unread reply may
				  wait; 0: 30 */
	double probe_interval; /* seconds between device reads when idle; 0: never */
	bool signals;	       /* ofcd_run takes SIGTERM/SIGINT (stop), SIGHUP (reload) */
	int log_level;	       /* enum ofcd_log_level: this and more urgent */
	void (*log)(void *ctx, int level, const char *msg);
	void *log_ctx;
	/* Tests: in-process twins of sim devices (ctl_opts.sim_lookup). */
	struct sim_device *(*sim_lookup)(void *ctx, const char *device);
	void *sim_ctx;
};

struct ofcd;

/* Load and validate the config, take the fabric's lock, recover any
 * unfinished transaction, adopt the recorded topology and bind the sockets.
 * No threads yet (the caller may daemonize after this). Errors: OFC_E_INPUT
 * for a bad config (with its position), OFC_E_USAGE for bad options,
 * OFC_E_RUNTIME otherwise. */
int ofcd_open(const struct ofcd_opts *o, struct ofcd **out, struct ofc_error *err);
/* Serve until stopped; then finish the running transaction, answer what
 * can be answered and return 0. */
int ofcd_run(struct ofcd *d, struct ofc_error *err);
/* Ask a running daemon to stop (as SIGTERM) or reload its config (as
 * SIGHUP). Thread-safe and async-signal-safe. */
void ofcd_stop(struct ofcd *d);
void ofcd_reload(struct ofcd *d);
/* Removes the sockets and frees everything. */
void ofcd_close(struct ofcd *d);

/* ---- ofcd clients (controller/ofcd_client.c) -------------------------------
 * One connection; requests and responses are ofc.v1.Request and
 * ofc.v1.Response (include "proto/control.pb-c.h" to build them). */
struct Ofc__V1__Request;
struct Ofc__V1__Response;

struct ofcd_client {
	int fd;
	uint32_t max_frame; /* largest response accepted */
	double timeout;	    /* seconds per send or receive; 0: wait forever */
	char path[108];
};

int ofcd_connect(struct ofcd_client *c, const char *path, struct ofc_error *err);
int ofcd_send(struct ofcd_client *c, const struct Ofc__V1__Request *req, struct ofc_error *err);
/* The next response; free it with ofc__v1__response__free_unpacked. */
int ofcd_recv(struct ofcd_client *c, struct Ofc__V1__Response **resp, struct ofc_error *err);
/* Send req, then receive until the response with req's id. */
int ofcd_call(struct ofcd_client *c, const struct Ofc__V1__Request *req,
	      struct Ofc__V1__Response **resp, struct ofc_error *err);
void ofcd_disconnect(struct ofcd_client *c);

/* A frame's 4-byte big-endian length. */
static inline void frame_put_len(uint8_t h[4], uint32_t n)
{
	h[0] = (uint8_t)(n >> 24);
	h[1] = (uint8_t)(n >> 16);
	h[2] = (uint8_t)(n >> 8);
	h[3] = (uint8_t)n;
}

static inline uint32_t frame_get_len(const uint8_t h[4])
{
	return (uint32_t)h[0] << 24 | (uint32_t)h[1] << 16 | (uint32_t)h[2] << 8 | h[3];
}

/* ---- CLI ---------------------------------------------------------------- */

/* The whole `ofc` command line; returns the process exit status
 * (0 success, 1 runtime failure, 2 bad input or usage). */
int ofc_cli_main(int argc, char **argv);

#endif
