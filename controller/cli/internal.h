/* Private to controller/cli/: what every `ofc` command shares. Each command is
 * one function in a cmd_*.c file and one line in the table in main.c. */
#ifndef OFC_CONTROLLER_CLI_INTERNAL_H
#define OFC_CONTROLLER_CLI_INTERNAL_H

#include <getopt.h>
#include <net/if.h>
#include <pthread.h>
#include <sys/types.h>

#include "controller/cli/cli.h"
#include "controller/client/client.h"
#include "controller/config/config.h"
#include "controller/export/export.h"
#include "controller/jobplan/jobplan.h"
#include "controller/reconfig/reconfig.h"
#include "controller/schedule/schedule.h"
#include "controller/testbed/testbed.h"
#include "optree/optree.h"

struct cli_cmd {
	const char *name;
	const char *usage;   /* arguments after "ofc NAME" */
	const char *summary; /* one line for `ofc --help` */
	int (*run)(const struct cli_cmd *cmd, int argc, char **argv);
};

enum out_format {
	FMT_TEXT = 1,
	FMT_JSON = 2,
	FMT_DOT = 4,
	FMT_PB = 8,
	FMT_MSCCL = 16,
	FMT_SVG = 32,
	FMT_PNG = 64, /* a name to refuse: nothing writes PNG */
};

/* "ofc NAME: message" and the usage line on stderr; returns 2. */
int cli_usage_error(const struct cli_cmd *cmd, const char *fmt, ...) OFC_PRINTF(2, 3);
/* "usage: ofc NAME OPERANDS" and the tables' rows (each ending {NULL};
 * the list ends NULL), wrapped as every usage is */
void cli_usage_line(const char *name, const char *operands, const struct opt *const *tables);
/* The usage line and options on stdout (for --help); returns 0. */
int cli_help(const struct cli_cmd *cmd, const char *details);
/* An error on stderr: "FILE:LINE:COL: message" for input with a position,
 * "ofc: message" otherwise. Returns the exit status it calls for. */
int cli_fail(const struct ofc_error *err);
/* A command's options as a table (util/opts.c: a row per option with its
 * name, field, parser, range and help): one parse, and --help and the
 * usage written from the rows, so neither can leave an option out. The
 * command's usage in main.c names only its operands ("SPEC", "[FILE]"). */
#define CLI_OPT_HELP                                                                               \
	{                                                                                          \
		"help", NULL, 0, NULL, "this help", .flags = OPT_STOP, .letter = 'h'               \
	}
struct cli_opts {
	const struct opt *table; /* ending with CLI_OPT_HELP and {NULL} */
	const char *help;	 /* --help's words before the options (or NULL) */
	/* --help written otherwise (rows filled in at the time); NULL: cli_help_opts */
	int (*help_fn)(const struct cli_cmd *cmd);
	opt_given_fn given; /* after each row taken (util.h); NULL: none */
};
/* "-- PROGRAM [ARGS...]" at the end of testbed mpirun's usage (its
 * options come before "--": those after it are PROGRAM's). */
#define MPIRUN_PROGRAM_ROW                                                                         \
	{                                                                                          \
		"-- PROGRAM [ARGS...]", .flags = OPT_OPERAND | OPT_REQUIRED                        \
	}
/* The alternative (struct opt's alt) of --json in the fabric commands'
 * common rows, which a command's own row may join ("[--dot | --json]"). */
#define CLI_ALT_JSON 1
/* argv's options into base. true: read, the operands from argv[*first];
 * false: the command is over (--help printed, or a usage error said), *rc
 * its exit status. */
bool cli_parse(const struct cli_cmd *cmd, const struct cli_opts *o, int argc, char **argv,
	       void *base, int *first, int *rc);
/* "usage: ofc NAME OPERANDS [--OPTION ARG]...", the summary, the help's
 * words and a paragraph per row; returns 0. */
int cli_help_opts(const struct cli_cmd *cmd, const struct cli_opts *o);
/* The CLI's own parsers, refusing as "bad --NAME 'VALUE': why": whole
 * numbers in min..max (uint32_t; the row's expect, if any, says where max
 * comes from), sizes above 0 (uint64_t), rates above 0 (double, bits/s)
 * and durations (double, seconds; in min..max when max is above 0). */
int cli_row_u32(const struct opt *row, const char *arg, void *base, struct ofc_error *err);
int cli_row_size(const struct opt *row, const char *arg, void *base, struct ofc_error *err);
int cli_row_rate(const struct opt *row, const char *arg, void *base, struct ofc_error *err);
int cli_row_duration(const struct opt *row, const char *arg, void *base, struct ofc_error *err);
/* A number above 0 and at most 1 (double): a share of a rate. */
int cli_row_fraction(const struct opt *row, const char *arg, void *base, struct ofc_error *err);
/* A percentage above 0 and below 100, "25" or "25%" (double). */
int cli_row_percent(const struct opt *row, const char *arg, void *base, struct ofc_error *err);
/* The format an output is asked in: --format F (by NULL) or a flag such
 * as --json (by "--json"), the two of cli_output_format. */
struct cli_format_given {
	const char *name, *by;
	char by_buf[24];
};
int cli_row_format_flag(const struct opt *row, const char *arg, void *base, struct ofc_error *err);
int cli_row_format(const struct opt *row, const char *arg, void *base, struct ofc_error *err);
/* One of row->choices (int), or "bad --NAME 'VALUE': " and row->expect. */
int cli_row_choice(const struct opt *row, const char *arg, void *base, struct ofc_error *err);
/* A collective of the schedule engines (enum sched_collective). */
int cli_row_collective(const struct opt *row, const char *arg, void *base, struct ofc_error *err);
/* The same kept as its name (const char *, argv's), for a request that
 * carries the name; row->choices, if any, are names taken besides. */
int cli_row_collective_name(const struct opt *row, const char *arg, void *base,
			    struct ofc_error *err);
/* An LP solver's name (enum lp_solver). */
int cli_row_lp_solver(const struct opt *row, const char *arg, void *base, struct ofc_error *err);
/* --device NAME=HOST:PORT, repeated: into the struct fabric_cmd at the
 * row's field (fabric_common.c). */
int cli_row_device(const struct opt *row, const char *arg, void *base, struct ofc_error *err);
/* Every command's table, for the tests that check each row (cmd_*.c). */
struct cli_table {
	const char *name;
	const struct opt *table;
	size_t size; /* of the struct its rows fill */
};
extern const struct cli_table topo_cli_table, validate_cli_table, show_cli_table, finder_cli_table,
    rwa_cli_table, cluster_cli_table, metrics_cli_table, schedule_cli_table, optree_cli_table,
    ring_cli_table, slurm_cli_table, status_cli_table, fault_cli_table, run_cli_table,
    mpirun_cli_table, up_cli_table;
/* The commands ofcd answers (cmd_remote.c, remote_*.c, cmd_adopt.c). */
extern const struct cli_table remote_cli_tables[8], remote_testbed_cli_tables[5],
    remote_schedule_cli_table, remote_watch_cli_table, remote_adopt_cli_table;
/* NULL-ended */
extern const struct cli_table *const cli_tables[];

/* Parse --format; `allowed` is a mask of enum out_format. */
int cli_format(const struct cli_cmd *cmd, const char *s, unsigned allowed, enum out_format *out);
/* The format of a file a command writes, one rule for all of them: the
 * format given (--format F, or a flag such as --json: `given` is its name,
 * `given_by` the flag as typed, NULL for --format), else what the name of
 * path (the value of option opt) says (.pb .json .txt .xml .dot .gv .svg
 * .png), else dflt. A given format the name contradicts, or a name the
 * command cannot write, is a usage error (returns 2); `allowed` is a mask
 * of enum out_format. "-" and NULL have no name. */
int cli_output_format(const struct cli_cmd *cmd, const char *opt, const char *path,
		      const char *given, const char *given_by, unsigned allowed,
		      enum out_format dflt, enum out_format *out);

/* --switch-overhead T,C: a transaction's and a changed circuit's time
 * beyond the switches' own, into err (OFC_E_USAGE) for a table's row. */
int cli_parse_overhead(const char *arg, struct jobplan_overhead *out, struct ofc_error *err);

/* Output to a file (atomically) or stdout ("-" or NULL). */
struct cli_output {
	struct atomic_file af;
	FILE *f;
};
int cli_output_open(struct cli_output *o, const char *path, struct ofc_error *err);
int cli_output_commit(struct cli_output *o, struct ofc_error *err);
void cli_output_abort(struct cli_output *o);

/* `ofc schedule` and `ofc optree`: what to print of a schedule_result. */
struct schedule_print {
	const struct cli_cmd *cmd;
	bool json;			  /* --json: the summary as JSON */
	enum out_format format;		  /* --format for -o */
	const char *output;		  /* -o FILE: the whole schedule */
	enum msccl_runtime msccl_runtime; /* --msccl-runtime: whose limits */
};

/* A binary format with no -o: stdout is fine unless it is a terminal; then
 * a usage error (returns true after printing it). */
bool cli_binary_to_terminal(const struct cli_cmd *cmd);
/* Where the summary goes: stdout, or stderr when -o - puts the schedule
 * itself on stdout (so a pipe gets one document, never two mixed). */
FILE *cli_summary_stream(const struct schedule_print *p);
/* Compute q through the pipeline (controller/schedule), print the summary
 * or the comparison, write -o; returns the exit status (cmd_schedule.c). */
int cli_schedule(const struct schedule_print *p, const struct schedule_query *q);
/* The same on a server fabric by the fluid engine (print_fluid.c). */
int cli_schedule_fluid(const struct schedule_print *p, const struct schedule_query *q,
		       struct fluid_query *x);
/* ofc plan --workload: the job's plan as text or JSON (print_jobplan.c);
 * sweep: the --plot points too (JSON). */
void print_jobplan_text(const struct jobplan_result *r, FILE *out);
void print_jobplan_json(const struct jobplan_result *r, bool sweep, FILE *out);
/* The two families' printers; each returns the exit status. */
int print_direct(const struct schedule_print *p, const struct schedule_result *r);
int print_ring(const struct schedule_print *p, const struct schedule_result *r);
/* ofc optree --sweep KEY=VALUES...: every ring algorithm over a grid, the
 * table on stdout, and with plot an SVG of time against size
 * (optree_sweep.c). Returns the exit status. */
int optree_sweep(const struct cli_cmd *cmd, const struct schedule_query *q,
		 const struct optree_ring *base, char **args, int nargs, const char *plot);
/* Write a schedule to p->output in p->format (json, text, pb). Nothing to
 * do when no -o was given. */
/* -o with the request's memory limit: 0, or -1 with the export's estimate,
 * the limit and what would fit in err (JSON and text are streamed). */
/* A message as JSON on f, through the encoder every answer's JSON takes
 * (docs/json.md: the .proto's field names, unset fields left out). */
void cli_print_message(FILE *f, const ProtobufCMessage *m);
int cli_export_check(const struct schedule_print *p, uint64_t limit, const struct schedule *s,
		     struct ofc_error *err);
/* A long request's progress on a terminal: one line on stderr that updates
 * in place (phase, percent when known, seconds), cleared before anything
 * else is printed. The engines report at phase boundaries; a ticker thread
 * redraws the line twice a second so the seconds move during a long phase.
 * ctx: a struct cli_progress; cli_progress_clear stops the ticker. */
struct cli_progress {
	const char *cmd;
	bool shown, ticking, stop;
	pthread_t ticker;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	char phase[96];
	double done, start, drawn;
};
void cli_progress_show(void *ctx, const char *phase, double done, double elapsed);
void cli_progress_clear(const struct ofc_clock *c);
/* A request's clock: the deadline of --time-limit T (T > 0), progress on
 * a terminal unless json. */
void cli_clock_init(struct ofc_clock *c, struct cli_progress *pr, const struct cli_cmd *cmd,
		    double time_limit, bool json);
/* -o: s in p's format; protobuf with r's summary fields when r is given
 * (schedule_extra_msg), as ofcd answers. */
int cli_write_schedule(const struct schedule_print *p, const struct schedule *s,
		       const struct schedule_result *r, struct ofc_error *err);

/* Commands that talk to devices (cmd_fabric.c, cmd_status.c, cmd_testbed.c)
 * share FILE, --device, --state-dir and --json (fabric_common.c). */
struct fabric_cmd {
	const struct cli_cmd *cmd;
	const char *file;
	const char *overrides[256]; /* "NAME=HOST:PORT" */
	uint32_t noverrides;
	const char *state_dir_opt;
	char *state_dir;
	bool json, dry_run;
	bool progress;	 /* events on stderr (when it is a terminal) */
	bool reads_only; /* plan, status: never create the state directory */
	double timeout;	 /* try: seconds to wait for confirm */
	bool relabel;	 /* plan, apply, try: renumber to keep circuits */
	double relabel_budget;
	uint32_t max_moves; /* plan, apply, try: refuse plans of more operations (0: none) */
	bool no_relabel;    /* plan, apply, try: the config's numbering, whatever the record */
	bool max_moves_set;
	const char *partition; /* plan, apply, try: this partition alone */
	double horizon;	       /* plan --horizon: runs to weigh moves against */
	bool horizon_set;
	uint32_t alternatives; /* plan --alternatives (default 3) */
	bool alternatives_set;
	/* plan, apply, try: the reconfiguration (what --horizon chose, what
	 * --relabel found, the transaction) */
	struct reconfigure_result result;
	double rate_scale; /* testbed up: --rate-scale (0: the config's) */
	/* The command whose daemon form a locked fabric's refusal names
	 * (ctl_opts.daemon_ask; NULL: apply) */
	const char *daemon_ask;
	/* plan --workload W (`config`: the config's own section), --plot
	 * FILE, --time-limit T (each MCF's) */
	const char *workload, *plot;
	double mcf_time_limit;
	struct jobplan_overhead overhead; /* plan --switch-overhead T,C */
	bool overhead_set;
	bool in_place; /* plan --workload --in-place: read the devices too */
	/* plan --topology T --max-loss P: the stages to T (plan_stages.c) */
	const char *stage_topology;
	double max_loss; /* a percentage, above 0 and below 100 */
	bool max_loss_set;
	/* apply: --max-loss, --grace given without --socket (a staged apply
	 * is ofcd's: refused) */
	const char *daemon_max_loss, *daemon_grace;
	bool dot; /* status: --dot, the circuits for Graphviz */
	bool yes; /* adopt: --yes, no question asked */
	struct fabric *fabric;
	struct ctl *ctl;
};
/* The fabric commands' options as rows (offsets into struct fabric_cmd):
 * --relabel and its kin (plan, apply, try), plan's own (--horizon,
 * --workload, --max-loss ...), apply's --dry-run, try's --timeout;
 * --device, --state-dir and --json are every one's. */
extern const struct opt fabric_cmd_relabel_rows[], fabric_cmd_plan_rows[],
    fabric_cmd_dry_run_rows[], fabric_cmd_trial_rows[];
extern const struct cli_table fabric_cmd_tables[4];
/* FILE and the options into fc: the rows of groups (NULL-ended; offsets
 * from fc, or from a struct whose first member fc is) beside the common
 * rows, --help written from them all after help's words. 0 to go on, -1
 * after --help, else the exit status. */
int fabric_cmd_parse(struct fabric_cmd *fc, const struct cli_cmd *cmd, int argc, char **argv,
		     const struct opt *const *groups, const char *help, bool file_optional);
/* The reconfiguration those options ask for (reconfigure_run into
 * fc->result): repair first (the lock and a crash's journal) when asked;
 * the devices read and planned; with --horizon the cheapest target, with
 * --partition that partition alone, with --relabel (or the last commit's
 * numbering) renumbered to keep circuits, what it saved on stderr (text;
 * the JSON has it later); --max-moves; then, unless dry_run, applied (a
 * trial left open trial_s when > 0). */
int fabric_cmd_reconfigure(struct fabric_cmd *fc, bool repair, bool dry_run, double trial_s,
			   struct ofc_error *err);
int fabric_cmd_open(struct fabric_cmd *fc, bool with_testbed, struct ofc_error *err);
/* Take the lock and resolve a journal a crash left. */
int fabric_cmd_repair(struct fabric_cmd *fc, struct ofc_error *err);
/* Print err, free fc, return the exit status. */
int fabric_cmd_fail(struct fabric_cmd *fc, const struct ofc_error *err);
void fabric_cmd_free(struct fabric_cmd *fc);

int cmd_plan(const struct cli_cmd *cmd, int argc, char **argv);
/* plan FILE --topology T --max-loss P%: the stages, printed (plan_stages.c);
 * an exit status. */
int plan_stages(struct fabric_cmd *fc);
/* try FILE --max-loss P%: the stages from the state directory's committed
 * topology to FILE's, printed as plan_stages prints them (plan_stages.c);
 * nothing applied. An exit status. */
int try_stages(struct fabric_cmd *fc);
int cmd_apply(const struct cli_cmd *cmd, int argc, char **argv);
int cmd_try(const struct cli_cmd *cmd, int argc, char **argv);
int cmd_confirm(const struct cli_cmd *cmd, int argc, char **argv);
int cmd_adopt(const struct cli_cmd *cmd, int argc, char **argv);
/* cmd_adopt.c, for both forms (local, and through ofcd: cmd_remote.c):
 * what the devices hold against the transaction, in words or JSON; the
 * y/N question on stderr (stdin a terminal, checked before). */
void adopt_show(const Ofc__V1__AdoptPreview *p, bool json);
bool adopt_ask(uint64_t txn, uint64_t generation);
int cmd_status(const struct cli_cmd *cmd, int argc, char **argv);
/* `ofc apply|try|confirm --json` (txn_json.c): the transaction as
 * ofc.v1.TransactionInfo, as ofcd answers ApplyConfig; with --dry-run, and
 * for `ofc plan FILE --json`, the plan so (txn_planned_msg: state planned,
 * operations, switching_seconds, plan, device_plan). */
struct ctl_result;
void txn_write_json(const struct fabric_cmd *fc, const struct ctl_result *res, bool ok,
		    const char *outcome, const struct ofc_error *err);
void txn_write_plan_json(const struct fabric_cmd *fc);
/* `ofc confirm --json`: the trial txn of fabric, its outcome as state
 * (confirmed, committed, reverted). */
void txn_write_confirm_json(const struct fabric_cmd *fc, const char *fabric, uint64_t txn,
			    const char *outcome);
/* `ofc status FILE --json`: ofc.v1.State from what fc read and the record
 * r, the shape ofcd answers (status_json.c). */
struct ctl_record;
void status_write_json(const struct fabric_cmd *fc, const struct ctl_record *r, FILE *out);
/* "    port alarm: ingress 2 FAILED (h0:1)", one line each (ofc status, and
 * ofc --socket PATH status). */
struct Ofc__V1__PortAlarm;
void print_port_alarms(const struct Ofc__V1__PortAlarm *const *a, size_t n);
/* status's line of failures or moves: "  LABEL      ITEM ITEM (TAIL)", or
 * past 8 items their count by kind (with kinds: links U-V, ports
 * HOST:PORT, hosts; else NOUN) and the first 6: "... and N more". */
void print_status_items(const char *label, char *const *v, size_t n, bool kinds, const char *noun,
			const char *tail);
/* ofcd's State for people, as `ofc --socket PATH status` prints it
 * (print_state.c); https: reached through a gateway. */
struct Ofc__V1__State;
void print_state(const struct Ofc__V1__State *s, bool https);
struct Ofc__V1__Wiring;
/* (print_state.c) State.wiring's links, one a line, for `ofc wiring`. */
void print_wiring_links(const struct Ofc__V1__Wiring *w);
/* A follower's wiring (Wiring.follower) in words after prefix: the leader
 * that has the verdict, how to ask it. */
void print_wiring_leader(const char *prefix, const struct Ofc__V1__Wiring *w);
int cmd_testbed(const struct cli_cmd *cmd, int argc, char **argv);
/* ofc testbed run --workload (run_workload.c): the job's plan run on the
 * testbed, way by way, by the testbed's use case with a local transaction
 * for each switching; its answer printed for people by print_workload_run. */
struct testbed_workload_opts;
struct Ofc__V1__WorkloadRunAnswer;
void print_workload_run(const struct Ofc__V1__WorkloadRunAnswer *a);
int testbed_run_workload(struct fabric_cmd *fc, const struct testbed_workload_opts *o,
			 struct testbed_net *t);
/* The topology the record says was committed, when it is another than
 * the file's (w->open; not when it was renumbered or a partition's). */
int testbed_topo_committed(const struct fabric_cmd *fc, struct testbed_topo *w,
			   struct ofc_error *err);
/* A transaction to f's topology (the switches and the testbed's hosts). */
int testbed_topo_apply(const struct fabric_cmd *fc, struct fabric *f, struct ofc_error *err);
/* `ofc testbed run` (cmd_run.c): argv[0] is "run". */
int cmd_testbed_run(const struct cli_cmd *cmd, int argc, char **argv);
/* `ofc testbed mpirun` (cmd_testbed_mpirun.c): argv[0] is "mpirun". */
int cmd_testbed_mpirun(const struct cli_cmd *cmd, int argc, char **argv);
/* `ofc testbed link|miswire` (cmd_testbed_fault.c): argv[0] is the action. */
int cmd_testbed_fault(const struct cli_cmd *cmd, int argc, char **argv);
/* A job's result as `ofc testbed mpirun` prints it, run here or by ofcd
 * (TestbedMpirun): the text, or (json) its JSON; the exit status the
 * command gives (the program's; 1 when stopped, 0 when only its
 * MPI_Finalize hung). */
struct mpirun_shown {
	const char *fabric, *topology;
	uint32_t ranks;
	bool openmpi, preload;
	double timeout;
	const struct testbed_mpirun_result *r;
};
int testbed_mpirun_print(const struct mpirun_shown *m, bool json);
int cmd_validate(const struct cli_cmd *cmd, int argc, char **argv);
int cmd_optree(const struct cli_cmd *cmd, int argc, char **argv);
int cmd_ring(const struct cli_cmd *cmd, int argc, char **argv);
int cmd_rwa(const struct cli_cmd *cmd, int argc, char **argv);
int cmd_schedule(const struct cli_cmd *cmd, int argc, char **argv);
int cmd_show(const struct cli_cmd *cmd, int argc, char **argv);
int cmd_topo(const struct cli_cmd *cmd, int argc, char **argv);
int cmd_finder(const struct cli_cmd *cmd, int argc, char **argv);
/* Where ofc asks ofcd (targets.c): every address given, --socket PATH or
 * --server URL (each repeatable, each a comma list), else OFC_SOCKET (a
 * comma list), else the default socket; through gateways, the certificate
 * for all of them. */
struct cli_server {
	const char *url, *cert, *key, *cacert;
};
#define CLI_TARGETS_MAX	 16
#define CLI_TARGET_LEN	 512
#define CLI_WALK_DEFAULT 30.0 /* seconds, when a request has no deadline */
struct cli_targets {
	const char *opt; /* the option or variable the addresses came from, for errors */
	bool https;	 /* --server: through ofc-gateway */
	bool default_socket;
	bool verbose;	       /* say on stderr when a follower sends us on */
	struct cli_server srv; /* --cert, --key, --cacert (url unused) */
	char addr[CLI_TARGETS_MAX][CLI_TARGET_LEN];
	uint32_t n, first; /* first: where the last answer came from */
	/* the last walk: each address asked and what it said */
	struct {
		char addr[CLI_TARGET_LEN];
		char why[300];
	} tried[CLI_TARGETS_MAX + 4];
	uint32_t ntried;
	char hint[CLI_TARGET_LEN];     /* a follower named the leader here */
	char answered[CLI_TARGET_LEN]; /* who gave the last answer */
	bool heard;		       /* in this walk a replica answered, not as leader */
	/* The user's address that named the leader, and the uid of the
	 * process behind it: a socket it names is followed only when root or
	 * that uid answers there (targets.c, peer_trusted). */
	char via[CLI_TARGET_LEN];
	uid_t via_uid;
	char named_by[CLI_TARGET_LEN];		  /* the replica that named t->hint */
	char untrusted[3 * CLI_TARGET_LEN + 300]; /* why the walk stopped there */
	struct ofcd_client cl;			  /* cli_open's connection */
	/* Where this walk lost an answer after sending (the leader killed
	 * under its mutation): the next leader is asked with the same
	 * request_key, and the answer says it came from there. */
	char lost[CLI_TARGET_LEN];
	/* The walk's budget when the request has no deadline (0:
	 * CLI_WALK_DEFAULT), counted again from an answer lost. */
	double walk;
	/* The request_key cli_open gave the last mutation it sent without
	 * one: OFC_REQUEST_KEY, else a fresh random one (docs/control.md,
	 * "Sending a mutation again"). */
	char key[132];
};
/* Append a comma list of addresses (opt names them in errors). */
int cli_targets_add(struct cli_targets *t, const char *opt, const char *list,
		    struct ofc_error *err);
/* With no address given: OFC_SOCKET's list, else the default socket. */
int cli_targets_from_env(struct cli_targets *t, struct ofc_error *err);
/* Before connecting: gateways need https:// URLs and a certificate. */
int cli_targets_check(const struct cli_targets *t, struct ofc_error *err);
/* Flags of a call: READ, any replica's answer will do (a follower answers
 * reads); ONCE, a request that must not be sent twice (an answer lost
 * after sending is an error, not a reason to ask the next replica);
 * PERSIST, keep trying when no address answers at all (otherwise the walk
 * goes on only while some replica answers: an election); QUICK, a request
 * any replica answers at once (GetState, GetMetrics, a Watch's
 * acknowledgement): one that hangs gets a share of the deadline, not all. */
#define CLI_CALL_READ	 1u
#define CLI_CALL_ONCE	 2u
#define CLI_CALL_PERSIST 4u /* addresses that do not answer are tried again until the deadline */
#define CLI_CALL_QUICK	 8u /* answered at once: each address gets a share of the deadline */
/* One request, walked over the addresses until a replica answers as
 * leader (or, READ, at all): a follower names the leader and it is asked;
 * an address that does not answer is skipped; whole passes repeat with a
 * short backoff until `timeout` seconds pass (0: CLI_WALK_DEFAULT, and no
 * limit on the answer). Returns 0 with *resp (the caller frees it), or -1
 * with err naming every address tried and why. cli_open leaves the
 * connection open in t->cl for the rest of a stream (watch). */
int cli_call(struct cli_targets *t, struct Ofc__V1__Request *req, double timeout, unsigned flags,
	     struct Ofc__V1__Response **resp, struct ofc_error *err);
/* A mutation (what only the leader runs) gets a request_key for the whole
 * walk: the leader runs it at most once however often the walk sends it,
 * so an answer lost after sending (the leader killed) is asked of the next
 * replica even with ONCE. The key is t->key (it lives as long as t). */
void cli_request_key(struct cli_targets *t, struct Ofc__V1__Request *req);
int cli_open(struct cli_targets *t, struct Ofc__V1__Request *req, double timeout, unsigned flags,
	     struct Ofc__V1__Response **resp, struct ofc_error *err);

/* What a Reconfigure asks, as `ofc reconfigure`'s options and the Slurm
 * prolog say it (reconfigure_ask.c). Strings are borrowed. */
#define VERIFY_WIRING_DEFAULT_S 10
struct reconfigure_ask {
	const char *topology;  /* --topology SPEC: the target */
	const char *partition; /* --partition NAME */
	/* A partition made now of exactly these hosts (with partition and
	 * topology): a comma list or Slurm hostlist the builder expands
	 * (--hosts), or hosts/nhosts given expanded (borrowed). */
	const char *hostlist;
	char **hosts;
	uint32_t nhosts;
	/* A workload to find the topology for: --collective, --size, --nodes. */
	const char *collective;
	uint64_t size;
	uint32_t nodes;
	bool has_size, has_nodes;
	bool relabel, dry_run;
	bool free_ports; /* --free-ports: only the ports no held partition has */
	/* --max-loss P%: staged, at most P percent of the bandwidth lost at
	 * any moment (0: not staged); --grace DUR: each stage's wait for the
	 * jobs */
	double max_loss;
	double grace_s;
	bool has_grace;
	/* --verify-wiring[=DUR]: the commit confirmed by the hosts' LLDP
	 * within verify_wiring_ms (default VERIFY_WIRING_DEFAULT_S), else
	 * rolled back */
	bool verify_wiring;
	uint32_t verify_wiring_ms;
	/* the builder's: the hosts it expanded, the workload's message */
	char **own;
	Ofc__V1__Workload wl;
};
/* Checks the combination (-1 with a usage error in err, which names the
 * options) and fills rq, which borrows a's strings and a->wl; what the
 * builder expanded is a's until reconfigure_ask_free. */
int reconfigure_build(struct reconfigure_ask *a, Ofc__V1__Reconfigure *rq, struct ofc_error *err);
/* --max-loss and --grace as a staged request carries them (Reconfigure's,
 * ApplyConfig's): *has_loss false when a has no --max-loss; -1 with a
 * usage error for a --grace alone. */
int reconfigure_stages(const struct reconfigure_ask *a, protobuf_c_boolean *has_loss, double *loss,
		       protobuf_c_boolean *has_grace, uint32_t *grace_ms, struct ofc_error *err);
void reconfigure_ask_free(struct reconfigure_ask *a);

/* `ofc slurm` (cmd_slurm.c): to the addresses given (NULL: none,
 * OFC_SOCKET or the default). */
int cmd_slurm(const struct cli_cmd *cmd, int argc, char **argv);
int slurm_main(struct cli_targets *t, const struct cli_cmd *cmd, int argc, char **argv);

/* `ofc --socket PATH COMMAND ...`: the commands ofcd answers
 * (cmd_remote.c); argv[0] is the command. */
int remote_main(struct cli_targets *t, int argc, char **argv);
/* `ofc cluster status` and `ofc metrics` (cmd_cluster.c). */
int cluster_main(struct cli_targets *t, int argc, char **argv);
int metrics_main(struct cli_targets *t, int argc, char **argv);
/* A connection whose frames travel over HTTPS (POST /v1/call). */
int cli_https_connect(struct ofcd_client *c, const struct cli_server *srv, struct ofc_error *err);
/* An answer https.c made up because url gave none of ofcd's (the gateway
 * did not answer, or could not reach its ofcd): its message starts with
 * the URL. */
bool cli_https_unreached(const struct Ofc__V1__Response *r, const char *url);
/* Whether ofcd answers this command. */
bool remote_command(const char *name);
/* reconfigure, watch, cancel without --socket: say they need the daemon. */
int cmd_daemon_only(const struct cli_cmd *cmd, int argc, char **argv);
int cmd_cluster(const struct cli_cmd *cmd, int argc, char **argv);
int cmd_metrics(const struct cli_cmd *cmd, int argc, char **argv);
/* Exit status of a state: 1 when a switch does not answer (what `ofc
 * status FILE` and `ofc --socket S status` both say), else 0. */
struct Ofc__V1__State;
int status_devices_exit(const struct Ofc__V1__State *s);

/* ofc-hostd's options (hostd.c), into its struct hostd of that size. */
extern const struct opt hostd_option_table[];
extern const size_t hostd_struct_size;

/* ofc-hostd (hostd.c): what lldpd hears (hostd_lldp.c) and the links
 * (hostd_links.c). */
struct hostd_neighbour {
	char ifname[IF_NAMESIZE + 1]; /* where it is heard */
	char host[NAME_MAX_LEN + 1];  /* its system name ("": none sent) */
	char port[64];		      /* its port ID */
	bool port_local;	      /* ... of the local subtype (ofc-hostd's: the number) */
	int64_t ttl_s;		      /* its time to live as it advertised it (-1: not said) */
};
struct hostd_neighbours {
	struct hostd_neighbour v[256];
	uint32_t n;
};
/* Run `lldpcli [-u sock] args...` (NULL-terminated), its output (stdout
 * and stderr) in out; -1 with why when it cannot run, exits non-zero
 * (its last line), passes timeout seconds (killed) or prints over 4 MiB. */
int hostd_lldpcli(const char *lldpcli, const char *sock, const char *const *args, double timeout,
		  struct strbuf *out, struct ofc_error *err);
/* `lldpcli -f json show neighbors`'s output: every interface's neighbour
 * (the first 256). */
int hostd_lldp_parse(const char *text, size_t len, struct hostd_neighbours *out,
		     struct ofc_error *err);
struct hostd_links {
	struct nl_cache_mngr *mngr; /* the kernel's link notifications: wake-ups */
	struct nl_cache *events;    /* (the manager's) */
	struct nl_sock *sk;	    /* dumps into cache before each report */
	struct nl_cache *cache;
	bool changed; /* a link changed since the caller last cleared it */
};
int hostd_links_open(struct hostd_links *l, struct ofc_error *err);
int hostd_links_fd(const struct hostd_links *l);
/* Read the kernel's notifications waiting on the fd into the cache. */
int hostd_links_ready(struct hostd_links *l, struct ofc_error *err);
/* The links read again (a dump), for hostd_link. */
int hostd_links_refill(struct hostd_links *l, struct ofc_error *err);
/* Whether ifname exists: *up (IFF_UP and carrier), *ifindex. */
bool hostd_link(struct hostd_links *l, const char *ifname, bool *up, int *ifindex);
void hostd_links_close(struct hostd_links *l);

#endif
