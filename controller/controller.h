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

#include "sched/sched.h"
#include "topo/topo.h"
#include "util/util.h"

#define CONFIG_MAX_BYTES (8u << 20) /* a config larger than this is refused */
#define CONFIG_MAX_DEPTH 64	    /* YAML nesting */
#define CONFIG_MAX_NODES 2000000u   /* YAML nodes visited, aliases expanded */
#define CONFIG_MAX_HOSTS 262144u
#define NAME_MAX_LEN 63

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
};

struct driver_cfg {
	struct src_loc loc;
	bool present;
	char *type;	   /* tl1, patch-panel, mrr, netlink, sim */
	char *address;	   /* "host:port" as written, NULL when none */
	char *credentials; /* path as written, NULL when none */
	char *credentials_path; /* resolved against the config's directory */
	double timeout;	   /* seconds per command */
	uint32_t retries;
	struct src_loc address_loc, credentials_loc;
};

struct ring {
	struct src_loc loc;
	char *name;
	bool all_nodes;	     /* nodes: all */
	char **node_names;   /* as written, when not all */
	struct src_loc *node_locs;
	uint32_t nnode_names;
	uint32_t *members;   /* host indices in ring order (after validation) */
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

	/* Filled by fabric_validate(). */
	bool validated;
	uint32_t *host_index; /* host indices sorted by name, for lookups */
	struct attachment *wiring; /* resolved: one per wired host port */
	uint32_t nwiring;
	struct graph *graph;	   /* target topology, NULL when none */
	struct topo_facts facts;
	struct port_map ports;	   /* its port permutations, when wired */
	struct circuit *circuits;
	uint32_t ncircuits;
};

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

/* ---- CLI ---------------------------------------------------------------- */

/* The whole `ofc` command line; returns the process exit status
 * (0 success, 1 runtime failure, 2 bad input or usage). */
int ofc_cli_main(int argc, char **argv);

#endif
