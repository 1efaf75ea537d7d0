/* Private to controller/cli/: what every `ofc` command shares. Each command is
 * one function in a cmd_*.c file and one line in the table in cli.c. */
#ifndef OFC_CONTROLLER_CLI_INTERNAL_H
#define OFC_CONTROLLER_CLI_INTERNAL_H

#include <getopt.h>

#include "controller/cli/cli.h"
#include "controller/config/config.h"
#include "controller/export/export.h"
#include "controller/ofcd/ofcd.h"
#include "controller/reconfig/reconfig.h"
#include "controller/schedule/schedule.h"
#include "optree/optree.h"

struct cli_cmd {
	const char *name;
	const char *usage;   /* arguments after "ofc NAME" */
	const char *summary; /* one line for `ofc --help` */
	int (*run)(const struct cli_cmd *cmd, int argc, char **argv);
};

enum out_format { FMT_TEXT = 1, FMT_JSON = 2, FMT_DOT = 4, FMT_PB = 8 };

/* "ofc NAME: message" and the usage line on stderr; returns 2. */
int cli_usage_error(const struct cli_cmd *cmd, const char *fmt, ...) OFC_PRINTF(2, 3);
/* The usage line and options on stdout (for --help); returns 0. */
int cli_help(const struct cli_cmd *cmd, const char *details);
/* An error on stderr: "FILE:LINE:COL: message" for input with a position,
 * "ofc: message" otherwise. Returns the exit status it calls for. */
int cli_fail(const struct ofc_error *err);
/* getopt_long over argv with the command's own long options; reports
 * unknown options and missing arguments as usage errors (returns -2 then). */
int cli_getopt(const struct cli_cmd *cmd, int argc, char **argv, const char *shortopts,
	       const struct option *longopts);
/* Parse --format; `allowed` is a mask of enum out_format. */
int cli_format(const struct cli_cmd *cmd, const char *s, unsigned allowed, enum out_format *out);

/* Output to a file (atomically) or stdout ("-" or NULL). */
struct cli_output {
	struct atomic_file af;
	FILE *f;
};
int cli_output_open(struct cli_output *o, const char *path, struct ofc_error *err);
int cli_output_commit(struct cli_output *o, struct ofc_error *err);
void cli_output_abort(struct cli_output *o);

/* `ofc schedule`: options every algorithm shares, parsed once. */
struct schedule_request {
	const struct cli_cmd *cmd;
	const char *file;      /* FILE, validated into fabric */
	struct fabric *fabric; /* NULL with --topology */
	const char *spec;      /* --topology SPEC */
	struct graph *graph;   /* the topology: from --topology, or the fabric's */
	enum sched_collective collective;
	const char *algo; /* --algo (default chosen per fabric kind) */
	uint64_t size;	  /* --size, bytes per node; 0 = from the config */
	double alpha;	  /* --alpha, seconds per step */
	double bandwidth; /* --bandwidth, a node's egress bits/s */
	bool alpha_set, bandwidth_set;
	uint32_t chunks;	/* --chunks P, 0 = exact fractions */
	bool overlap;		/* --overlap (WDM: pre-tune MRRs) */
	bool json;		/* --json: the summary as JSON */
	enum out_format format; /* --format for -o */
	const char *output;	/* -o FILE: the whole schedule */
	unsigned threads;	/* --threads, 0 = all CPUs */
	const char *lowering;	/* --lowering (all-to-all mcf): steps, paths, single */
	const char *variant; /* --variant (swing, recursive-doubling): auto, bandwidth, latency */
	double hop_latency;  /* --hop-latency, seconds per hop (routed torus schedules) */
	double time_limit;   /* --time-limit (all-to-all mcf), seconds; 0 = none */
};

/* Write the whole schedule to req->output in req->format (json, text, pb).
 * Nothing to do when no -o was given. */
int cli_write_schedule(const struct schedule_request *req, const struct schedule *s,
		       struct ofc_error *err);
/* The two families of schedules; each returns the exit status. */
int schedule_wdm(struct schedule_request *req);	   /* WDM rings (cmd_schedule_wdm.c) */
int schedule_direct(struct schedule_request *req); /* direct-connect (cmd_schedule_dc.c) */

/* Commands that talk to devices (cmd_fabric.c, cmd_status.c, cmd_testbed.c)
 * share FILE, --device, --state-dir and --json (fabric_cmd.c). */
struct fabric_cmd {
	const struct cli_cmd *cmd;
	const char *file;
	const char *overrides[256]; /* "NAME=HOST:PORT" */
	uint32_t noverrides;
	const char *state_dir_opt;
	char *state_dir;
	bool json, dry_run;
	bool progress;	/* events on stderr (when it is a terminal) */
	double timeout; /* try: seconds to wait for confirm */
	struct fabric *fabric;
	struct ctl *ctl;
};
extern const char fabric_cmd_options[];
/* Returns 0 to go on, -1 after --help (exit 0), or an exit status. */
int fabric_cmd_parse(struct fabric_cmd *fc, const struct cli_cmd *cmd, int argc, char **argv,
		     const struct option *extra,
		     int (*on_extra)(struct fabric_cmd *, int, const char *), const char *help,
		     bool file_optional);
int fabric_cmd_extra(struct fabric_cmd *fc, int c, const char *arg);
int fabric_cmd_open(struct fabric_cmd *fc, bool with_testbed, struct ofc_error *err);
/* Take the lock and resolve a journal a crash left. */
int fabric_cmd_repair(struct fabric_cmd *fc, struct ofc_error *err);
/* Print err, free fc, return the exit status. */
int fabric_cmd_fail(struct fabric_cmd *fc, const struct ofc_error *err);
void fabric_cmd_free(struct fabric_cmd *fc);
void json_state(struct json_writer *w, const struct device_state *s);
void json_device(struct json_writer *w, const struct ctl_device *cd, bool with_class);

int cmd_plan(const struct cli_cmd *cmd, int argc, char **argv);
int cmd_apply(const struct cli_cmd *cmd, int argc, char **argv);
int cmd_try(const struct cli_cmd *cmd, int argc, char **argv);
int cmd_confirm(const struct cli_cmd *cmd, int argc, char **argv);
int cmd_status(const struct cli_cmd *cmd, int argc, char **argv);
int cmd_testbed(const struct cli_cmd *cmd, int argc, char **argv);
/* All-gather on a WDM ring (controller/wdm_run.c): the ring, the
 * algorithm ("ring", "ne", "onestage", "optree" or "all") and the outputs.
 * Builds, verifies, prices and prints; returns the exit status. */
struct wdm_request {
	const struct cli_cmd *cmd;
	struct optree_ring ring;
	const char *ring_name; /* from a config, or NULL */
	const char *algo;
	uint32_t radix[OPTREE_MAX_DEPTH]; /* --radices: a forced plan */
	uint32_t depth;			  /* 0 = the planner's best */
	bool overlap;
	bool json;
	enum out_format format; /* for -o */
	const char *output;
};
int wdm_run(const struct wdm_request *q);

int cmd_validate(const struct cli_cmd *cmd, int argc, char **argv);
int cmd_optree(const struct cli_cmd *cmd, int argc, char **argv);
int cmd_rwa(const struct cli_cmd *cmd, int argc, char **argv);
int cmd_schedule(const struct cli_cmd *cmd, int argc, char **argv);
int cmd_show(const struct cli_cmd *cmd, int argc, char **argv);
int cmd_topo(const struct cli_cmd *cmd, int argc, char **argv);
int cmd_finder(const struct cli_cmd *cmd, int argc, char **argv);

/* `ofc --socket PATH COMMAND ...`: the commands ofcd answers (cmd_remote.c). */
int remote_main(int argc, char **argv);
/* reconfigure, watch, cancel without --socket: say they need the daemon. */
int cmd_daemon_only(const struct cli_cmd *cmd, int argc, char **argv);

#endif
