/* controller/fabric — the fabric model: hosts, switches, WDM rings, wiring,
 * the target topology and its circuits, the collectives and cost model a
 * config names. controller/config fills it from YAML and validates it;
 * everything above reads it. Every struct the loader fills starts with its
 * struct src_loc, so errors found later still name FILE:LINE:COL. */
#ifndef OFC_CONTROLLER_FABRIC_H
#define OFC_CONTROLLER_FABRIC_H

#include "drivers/types.h"
#include "rwa/rwa.h"
#include "sched/types.h"
#include "topo/topo.h"
#include "util/util.h"

/* Held by pointer only (drivers/drivers.h defines it). */
struct device_state;

#define CONFIG_MAX_HOSTS 262144u
#define NAME_MAX_LEN	 63

/* Where a value was in the config: 1-based line and column. */
struct src_loc {
	uint32_t line, col;
};

/* Every struct below starts with its own location (the mapping it came
 * from): the loader fills it without knowing the type. */

enum host_forwarding { HOST_FORWARDING = 0, NIC_FORWARDING = 1 };

struct host {
	struct src_loc loc;
	char *name;
	uint32_t ports;	  /* NIC ports */
	double port_rate; /* bits/s per port, 0 when not given */
	/* Per-port rates (port_rates: one per port, bits/s), overriding
	 * port_rate; n = 0 when not given. fabric_port_rate() reads either. */
	struct rate_list {
		double *v;
		uint32_t n;
		struct src_loc loc;
	} port_rates;
	char *server; /* a server template it instantiates, or NULL */
	struct src_loc server_loc;
	/* NIC-limited hosts: the host's injection (= ejection)
	 * bandwidth to its NIC, bits/s (0: not limited, d x port rate), and
	 * whether bytes it relays cross the host (HOST_FORWARDING, the default:
	 * GPU/ML fabrics, store-and-forward) or only the NIC (NIC_FORWARDING). */
	double injection;
	struct src_loc injection_loc;
	int forwarding; /* enum host_forwarding */
	/* Failures: the whole host (`failed: true`, or named in
	 * the topology's failed_hosts: validation sets it and failed_loc), or
	 * some of its NIC ports (both fibres of each: the links they carry are
	 * gone). */
	bool failed;
	struct src_loc failed_loc;
	uint32_t *failed_ports;
	struct src_loc *failed_port_locs;
	uint32_t nfailed_ports;
};

/* A circuit moved off a lost host port onto a spare one (ofcd's
 * re-wiring): host port `from` and the spare port `to`, cabled to the same
 * switch, trade switch ports, so the topology's port `from` runs on the
 * spare's fibre and the lost port is left dark (failed_ports name physical
 * ports: a failed `from` then takes out nothing). Run-time state that ofcd
 * keeps in STATE_DIR/FABRIC.rewired, not a config key. */
struct port_move {
	char *host;
	uint32_t from, to;
};

/* Server fabrics (fluid/): a template's vertices, links and
 * capacity sets, instantiated per host as "host/vertex"; and the same at
 * fabric level for rails and circuits between NICs. */
/* A NIC is a switch to the fluid engine (it stores, copies and reduces
 * nothing), kept apart so `ofc show` can count it. */
enum server_kind { SK_GPU = 0, SK_MEMORY, SK_SWITCH, SK_NIC };
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
	int dialect; /* tl1: TL1_POLATIS or TL1_CALIENT (docs/tl1.md) */
	bool dialect_set, port_map_set;
	struct tl1_port_map port_map; /* tl1 calient: port k's shelf.slot.port */
	struct src_loc dialect_loc, port_map_loc;
	/* netconf (docs/netconf.md) */
	char *known_hosts;	/* path as written, NULL when none */
	char *known_hosts_path; /* resolved against the config's directory */
	int datastore;		/* NETCONF_DS_AUTO, _CANDIDATE or _RUNNING */
	double min_power;	/* dBm: a port in use below it is failing */
	bool known_hosts_set, datastore_set, min_power_set;
	struct src_loc known_hosts_loc, datastore_loc, min_power_loc;
	int transport;	       /* NETCONF_SSH or NETCONF_TLS */
	char *tls_ca;	       /* TLS: the CA file as written, NULL when none */
	char *tls_ca_path;     /* resolved against the config's directory */
	char *tls_server_name; /* TLS: the name the device's certificate is for */
	bool transport_set, tls_ca_set, tls_server_name_set;
	struct src_loc transport_loc, tls_ca_loc, tls_server_name_loc;
};
enum { TL1_POLATIS = 0, TL1_CALIENT = 1 };
enum { NETCONF_DS_AUTO = 0, NETCONF_DS_CANDIDATE = 1, NETCONF_DS_RUNNING = 2 };
enum { NETCONF_SSH = 0, NETCONF_TLS = 1 };
/* The dialect's name as the config and device_cfg say it. */
const char *tl1_dialect_name(int dialect);

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
/* A switch port out of service: its circuits are left out. */
struct drained_port {
	char *sw;
	uint32_t port;
};

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

/* A failed link of the target topology: the arcs between two hosts, both
 * directions (topology: failed_links: [[h0, h1], ...]). */
struct failed_link {
	struct src_loc loc;
	char *a, *b;
};

/* A link's own rate (topology: link_rates: [[h0, h1, 25Gbps], ...]): both
 * arcs between the two hosts run at it, whatever their ports' rates. */
struct link_rate {
	struct src_loc loc;
	char *a, *b;
	double rate;
	uint32_t u, v; /* host indices, after validation */
};

/* A failed host (topology: failed_hosts: [h3, ...]): it neither sends nor
 * receives nor forwards; schedules run among the others. */
struct failed_host {
	struct src_loc loc;
	char *name;
};

struct topo_target {
	struct src_loc loc;
	bool present;
	char *spec;
	struct failed_link *failed_links;
	uint32_t nfailed_links;
	struct failed_host *failed_hosts;
	uint32_t nfailed_hosts;
	struct link_rate *link_rates;
	uint32_t nlink_rates;
	struct src_loc spec_loc;
	unsigned spec_quoted; /* 1 when the scalar was quoted: columns shift */
	enum self_loop_mode self_loops;
	/* spec: auto -> the topology finder's pick for the fabric's collectives
	 * (validation replaces spec with the pick and sets these). */
	bool auto_picked;
	double auto_time_us; /* the workload's predicted time on the pick */
	/* Not strongly connected, and taken because every group of one of the
	 * workload's kinds is connected within it (a phase's
	 * topology, its groups on links of their own). */
	bool split;
};

struct collective {
	struct src_loc loc;
	enum sched_collective op;
	uint64_t size; /* bytes per node */
	char *algorithm;
};

struct cost_model {
	struct src_loc loc;
	double alpha;	       /* seconds per step */
	double link_bandwidth; /* bits/s */
	bool alpha_set, bandwidth_set;
	/* A switching's cost beyond the switches' own time
	 * (jobplan_overhead): the controller's per transaction and per changed
	 * circuit, seconds; what `ofc plan` and ofcd's GetPlan and
	 * MoveToPhase price (0, 0 when not given). */
	struct switch_overhead {
		double transaction, circuit;
	} switch_overhead;
	/* The hosts' port rates (port_rate, port_rates) and the topology's
	 * link_rates when they differ (0 when all are one); without
	 * link_bandwidth in the config, links are priced at the slowest. */
	double rate_min, rate_max;
};

/* How `ofc testbed up` shapes the circuits (docs/testbed.md): every veth
 * to link_rate (else the hosts' port_rate, else the cost model's
 * link_bandwidth) times rate_scale, delayed by link_latency. */
struct testbed_cfg {
	struct src_loc loc;
	double link_rate;    /* bits/s; 0: not given */
	double link_latency; /* seconds */
	double rate_scale;   /* 0: not given (1) */
};

/* A partition: the hosts, or single host ports ("h3:1"), one
 * job owns, with its own topology and collectives. No two partitions
 * claim the same host port (fabric_validate). */
struct partition {
	struct src_loc loc;
	char *name;
	char **members; /* "HOST" (every port) or "HOST:PORT" */
	struct src_loc *member_locs;
	uint32_t nmembers;
	struct topo_target topology;
	struct collective *collectives;
	uint32_t ncollectives;
	/* Filled by fabric_validate(): each member's host index and port
	 * (UINT32_MAX: every port of the host). */
	uint32_t *member_host, *member_port;
	/* Made at run time (ofcd's Reconfigure with hosts), not
	 * from the config: a cross-connect joining one of its ports to a port
	 * outside it is taken down instead of refused (the caller checks that
	 * no other owner's port is among them). */
	bool runtime;
};

/* A training job's workload (docs/config.md "workload"): the
 * phases of one iteration, each a collective in every group of one kind at
 * once (or a traffic matrix over every host), repeated `iterations` times.
 * A kind of groups cuts (some of) the hosts into disjoint groups of one
 * size: written out (`groups`), from parallelism degrees over the hosts in
 * order (`parallelism`: tp, then dp, then pp; ep within dp), or `all` (one
 * group of every host). */
enum { WL_SENDRECV = 16 }; /* besides enum sched_collective: pipeline sends */
struct fabric;
struct topo_picker;

struct wl_group_list {
	struct src_loc loc;
	char *name;
	char **members; /* every group's host names, group after group */
	struct src_loc *member_locs;
	uint32_t nmembers;
	uint32_t *first; /* ngroups + 1 offsets into members */
	uint32_t ngroups;
	struct src_loc members_loc;
};

struct wl_parallelism {
	struct src_loc loc;
	uint32_t tp, pp, dp, ep; /* 0: not given (1) */
	struct src_loc tp_loc, pp_loc, dp_loc, ep_loc;
};

struct wl_phase {
	struct src_loc loc;
	char *name;
	int collective; /* enum sched_collective, WL_SENDRECV, or 0: traffic */
	char *group;	/* a kind's name; NULL: all */
	uint64_t size;	/* bytes per member, as `ofc schedule --size` */
	uint32_t count; /* per iteration, one after another */
	char *demand;	/* alltoall: a k x k relative matrix, every group alike */
	char *traffic;	/* N x N bytes per iteration over every host */
	bool reverse;	/* sendrecv: the last stage to the first (backward) */
	struct src_loc name_loc, collective_loc, group_loc, size_loc, demand_loc, traffic_loc;
	bool collective_set, size_set, count_set;
	/* Filled by workload_validate: the kind, and the matrix read (demand
	 * k x k relative, traffic N x N bytes; NULL otherwise). */
	uint32_t kind;
	double *matrix;
	uint32_t matrix_n;
};

/* A kind of groups as validation resolves it: ngroups groups of size
 * hosts each, host[g * size + i] member i of group g (its order: a
 * pipeline's stages). */
struct wl_kind {
	char name[NAME_MAX_LEN + 1];
	uint32_t ngroups, size;
	uint32_t *host;
	struct src_loc loc;
};

struct workload {
	struct src_loc loc;
	bool present;
	char *name;
	uint32_t iterations; /* 0: not given (1) */
	struct wl_parallelism parallelism;
	bool parallelism_set;
	struct wl_group_list *groups;
	uint32_t ngroups;
	struct wl_phase *phases;
	uint32_t nphases;
	/* The file it was read from (a config's, or --workload's), for errors,
	 * and its directory, where the matrices' relative paths resolve. */
	char *file, *dir;
	/* Filled by workload_validate. */
	bool validated;
	struct wl_kind *kinds;
	uint32_t nkinds;
};

void workload_free(struct workload *w);
/* A kind by name, or -1. */
int workload_find_kind(const struct workload *w, const char *name);
/* Phase p's traffic in one run of it as bytes from host to host (N x N,
 * N = f->nhosts, row s column t: s to t; the diagonal 0), into *out
 * (caller frees): a collective in every group of its kind expressed as
 * what a routed schedule of it moves (all-to-all: M/k to each member,
 * skewed by its demand; allgather and reduce-scatter: M/k to each member;
 * allreduce: both, twice that; sendrecv: M to the next stage), or the
 * traffic matrix. */
void workload_phase_bytes(const struct fabric *f, const struct workload *w, uint32_t p,
			  double **out);
/* The name of a phase's collective ("allgather", ..., "sendrecv",
 * "traffic"). */
const char *workload_collective_name(int collective);

/* A cross-connect the target topology needs. */
struct circuit {
	uint32_t sw, in_port, out_port;
	uint32_t src_host, src_port, dst_host, dst_port;
};

struct fabric {
	struct src_loc loc; /* first, as in every struct the loader fills */
	char *file;	    /* path as given, for messages */
	char *dir;	    /* directory of the file: relative paths resolve here */
	/* Where the topologies' edge lists may be read (not owned): NULL for a
	 * config its reader trusts (a command's user, ofcd's --config), whose
	 * relative edges:FILE resolve in dir; a daemon's policy for a config a
	 * client sent, whose files are read only under it (topo_build_in). */
	const struct topo_files *files;
	/* Validation leaves the drivers unchecked (set before fabric_validate):
	 * ofcd's planner process rebuilds a config ofcd validated already, and
	 * may not read its credentials files (controller/ofcd/planner_serve.c). */
	bool drivers_unchecked;
	/* How `topology: auto` is picked (set before fabric_validate, which
	 * lets go of it; not owned; NULL: such a config is refused): the
	 * finder in this process (pick_here), or ofcd's planner process
	 * (controller/pick/pick.h, struct topo_picker). */
	const struct topo_picker *picker;
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
	struct partition *partitions;
	uint32_t npartitions;
	struct cost_model cost;
	/* `lp_solver`: the LP solver of this fabric's schedules when a request
	 * names none; LP_SOLVER_DEFAULT: each LP's own default. */
	enum lp_solver lp_solver;
	struct testbed_cfg testbed;
	struct server_template *servers; /* templates */
	uint32_t nservers;
	struct sv_vertex *fvertices; /* fabric-level vertices (rail switches) */
	uint32_t nfvertices;
	struct sv_link *flinks; /* rails, circuits between NICs */
	uint32_t nflinks;
	struct sv_set *fsets;
	uint32_t nfsets;
	struct workload workload; /* the config's, or present false */

	/* Port moves to apply (set before fabric_validate; owned). */
	struct port_move *moves;
	uint32_t nmoves;
	/* Switch ports out of service (drained; set before fabric_validate;
	 * owned): no circuit uses them. */
	struct drained_port *drained;
	uint32_t ndrained;

	/* Filled by fabric_validate(). */
	bool validated;
	uint32_t *host_index;	   /* host indices sorted by name, for lookups */
	struct attachment *wiring; /* resolved: one per wired host port */
	uint32_t nwiring;
	struct graph *graph; /* target topology, NULL when none */
	/* graph less its failed links and ports (hosts' failed_ports,
	 * topology's failed_links) and every arc of a failed host (which stays,
	 * without arcs: schedules run among the others, renumbered by
	 * topo_survivors); NULL when nothing failed. Spec "SPEC without
	 * h0-h1,h2:3,h5". nfailed_hosts: the hosts marked failed. */
	struct graph *degraded;
	uint32_t nfailed_hosts;
	struct topo_facts facts;
	struct port_map ports; /* its port permutations, when wired */
	struct circuit *circuits;
	uint32_t ncircuits;
};

/* OpTree's model of a config's ring for all-gathers of size-byte blocks
 * (0: the config's first allgather's, else 4 MiB); a config without
 * mrrs_per_interface has one MRR per wavelength. */
void fabric_free(struct fabric *f);
/* The server fabric of a config (hosts with `server`, fabric vertices,
 * links and capacity sets) as fluid's network (fabric/servers.c); errors
 * name FILE:LINE:COL. OFC_E_INPUT when the config has no server hosts. */
struct fluid_net;
int fabric_server_net(const struct fabric *f, struct fluid_net *n, struct ofc_error *err);
/* What fabric_validate asks of a config with servers, fabric vertices,
 * links or capacity sets: template names unique, every template built on
 * its own (instantiated or not), then the whole network as
 * fabric_server_net builds it; 0 for a config without any. */
int fabric_server_check(const struct fabric *f, struct ofc_error *err);
/* An OFC_E_INPUT error at loc of f's file (line and column 1 when loc has
 * none). The message is formatted before err is written, so it may quote
 * err->msg itself (an error from below, given the config's place). */
int fabric_error_at(struct ofc_error *err, const struct fabric *f, struct src_loc loc,
		    const char *fmt, ...) OFC_PRINTF(4, 5);
int fabric_find_host(const struct fabric *f, const char *name);
/* Bits/s of host h's port (its port_rates entry, else its port_rate; 0:
 * not given). */
double fabric_port_rate(const struct fabric *f, uint32_t h, uint32_t port);
int fabric_find_switch(const struct fabric *f, const char *name);
/* Switch s's ports by the group of the host each is wired to, from
 * group_of (host -> group, UINT32_MAX: none): owner[port] for ports
 * 0..s's ports, UINT32_MAX where no grouped host is (the caller frees). One
 * pass over the wiring; groups are of whole hosts (partitions). */
uint32_t *fabric_port_owners(const struct fabric *f, uint32_t s, const uint32_t *group_of);
/* NULL when f has no partition of that name. */
const struct partition *fabric_find_partition(const struct fabric *f, const char *name);
/* The graph of one of f's topology specs (its own, a partition's): under
 * f->files when set, else with a relative edges:FILE resolved in f->dir.
 * Errors as topo_build's. */
int fabric_topo_build(const struct fabric *f, const char *spec, struct graph **out,
		      struct ofc_error *err);

/* The cross-connects that realise f->ports over f->wiring (replacing
 * f->circuits); FILE:LINE:COL errors at the topology when a port is not
 * wired or a circuit would span two switches (fabric/circuits.c). */
int fabric_circuits(struct fabric *f, struct ofc_error *err);
/* The cross-connects partition p's own topology needs (node i = member i;
 * whole-host members only), allocated into *out (caller frees). Every one
 * joins two ports of p's hosts, so it never touches another partition. */
int partition_circuits(const struct fabric *f, const struct partition *p, struct circuit **out,
		       uint32_t *nout, struct ofc_error *err);
/* Partition p's topology graph (node i = member i), checked as
 * partition_circuits checks it (caller frees). */
int partition_graph(const struct fabric *f, const struct partition *p, struct graph **g,
		    struct ofc_error *err);
/* The cross-connects of port permutations pm over p's members (node i =
 * member i), as partition_circuits makes them. */
int partition_circuits_ports(const struct fabric *f, const struct partition *p,
			     const struct port_map *pm, struct circuit **out, uint32_t *nout,
			     struct ofc_error *err);
/* A fabric without a topology of its own but with partitions: its
 * circuits are the union of theirs (partitions of whole hosts with a
 * topology; the others have none yet). Called by fabric_validate. */
int fabric_partitions_circuits(struct fabric *f, struct ofc_error *err);
/* Switch s's ports wired to host ports p owns: an array of the switch's
 * ports + 1 flags, 1 where owned (caller frees). */
uint8_t *partition_switch_ports(const struct fabric *f, const struct partition *p, uint32_t s);

/* Renumber the target topology so that its circuits keep the most
 * cross-connects the switches hold now (actual[s]: switch s's read state,
 * NULL when unknown), for a topology wanted up to the numbering of its
 * nodes (`ofc plan --relabel`). Replaces f->graph, f->ports and
 * f->circuits when a numbering keeps more cross-connects than the
 * config's circuits (never fewer: the config's are a candidate); the
 * report counts cross-connects (fabric/relabel_target.c). f->degraded is left
 * as it was: the caller derives it again (fabric_failures_renumbered,
 * controller/config/), as ctl_relabel does. */
struct fabric_relabel {
	uint64_t arcs;		/* cross-connects of the target */
	uint64_t kept_identity; /* in place under the config's numbering */
	uint64_t kept;		/* ... under the one chosen (never fewer) */
	uint64_t kept_links;	/* links between hosts the search's numbering keeps */
	uint32_t moved_nodes;	/* topology nodes given another host */
	bool changed;		/* the circuits are not the config's (which kept as many) */
	bool complete;		/* every cross-connect in place: nothing is better */
	bool optimal;		/* the search's links reached its upper bound */
	bool deadline;		/* the clock stopped the search: the best found so far */
	uint32_t rounds;
	double seconds;
};
int fabric_relabel(struct fabric *f, const struct device_state *const *actual,
		   const struct relabel_opts *o, struct fabric_relabel *rep, struct ofc_error *err);

/* The host-level graph the switches hold now (actual[s] as for
 * fabric_relabel): an arc u -> v per cross-connect from a port of u to a
 * port of v, spec "in place" (caller frees; fabric/in_place.c). */
struct graph *fabric_current_graph(const struct fabric *f,
				   const struct device_state *const *actual);

/* Partition p's circuits renumbered like fabric_relabel: which member
 * plays which node of p's topology so that the most cross-connects between
 * p's own ports stay (others' are not looked at), then port permutations
 * seeded with them. topo: another topology for p's members than its own
 * (NULL: p's). *out as partition_circuits (caller frees). */
int partition_relabel(const struct fabric *f, const struct partition *p, const struct graph *topo,
		      const struct device_state *const *actual, const struct relabel_opts *o,
		      struct circuit **out, uint32_t *nout, struct fabric_relabel *rep,
		      struct ofc_error *err);

/* A renumbering as its caller has it done, in the style of the drivers'
 * ops tables: fabric renumbers the whole fabric as fabric_relabel does,
 * partition a partition (its own topology) as partition_relabel does; ctx
 * is the caller's. relabel_direct's run the search here (topo_relabel): a
 * program that may link the engines (the CLI, tests). ofcd's ask a planner
 * process, out of the process that holds the lease. A NULL member: that
 * renumbering is not done by this caller. */
struct relabel_ops {
	int (*fabric)(void *ctx, struct fabric *f, const struct device_state *const *actual,
		      const struct relabel_opts *o, struct fabric_relabel *rep,
		      struct ofc_error *err);
	int (*partition)(void *ctx, const struct fabric *f, const struct partition *p,
			 const struct device_state *const *actual, const struct relabel_opts *o,
			 struct circuit **out, uint32_t *nout, struct fabric_relabel *rep,
			 struct ofc_error *err);
};
extern const struct relabel_ops relabel_direct;

/* The MRR channels ring r's lightpaths need: an MRR adding the wavelength
 * at the source, one dropping it at the destination (fabric/rings.c). */
void ring_target(const struct fabric *f, uint32_t r, struct device_state *out);

#endif
