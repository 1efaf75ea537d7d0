/* Private to controller/: what every `ofc` command shares. Each command is
 * one function in a cmd_*.c file and one line in the table in cli.c. */
#ifndef OFC_CONTROLLER_CLI_H
#define OFC_CONTROLLER_CLI_H

#include <getopt.h>

#include "controller/controller.h"

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
	const char *file;	   /* FILE, validated into fabric */
	struct fabric *fabric;	   /* NULL with --topology */
	const char *spec;	   /* --topology SPEC */
	struct graph *graph;	   /* the topology: from --topology, or the fabric's */
	enum sched_collective collective;
	const char *algo;	   /* --algo (default chosen per fabric kind) */
	uint64_t size;		   /* --size, bytes per node; 0 = from the config */
	double alpha;		   /* --alpha, seconds per step */
	double bandwidth;	   /* --bandwidth, a node's egress bits/s */
	bool alpha_set, bandwidth_set;
	uint32_t chunks;	   /* --chunks P, 0 = exact fractions */
	bool overlap;		   /* --overlap (WDM: pre-tune MRRs) */
	bool json;		   /* --json: the summary as JSON */
	enum out_format format;	   /* --format for -o */
	const char *output;	   /* -o FILE: the whole schedule */
	unsigned threads;	   /* --threads, 0 = all CPUs */
	const char *lowering;	   /* --lowering (all-to-all mcf): steps, paths, single */
	const char *variant;	   /* --variant (swing, recursive-doubling): auto, bandwidth, latency */
	double hop_latency;	   /* --hop-latency, seconds per hop (routed torus schedules) */
};

/* Write the whole schedule to req->output in req->format (json, text, pb).
 * Nothing to do when no -o was given. */
int cli_write_schedule(const struct schedule_request *req, const struct schedule *s,
		       struct ofc_error *err);
/* The two families of schedules; each returns the exit status. */
int schedule_wdm(struct schedule_request *req);	   /* WDM rings (cmd_schedule_wdm.c) */
int schedule_direct(struct schedule_request *req); /* direct-connect (cmd_schedule_dc.c) */

int cmd_validate(const struct cli_cmd *cmd, int argc, char **argv);
int cmd_schedule(const struct cli_cmd *cmd, int argc, char **argv);
int cmd_show(const struct cli_cmd *cmd, int argc, char **argv);
int cmd_topo(const struct cli_cmd *cmd, int argc, char **argv);
int cmd_finder(const struct cli_cmd *cmd, int argc, char **argv);

#endif
