/* The commands ofcd answers (`ofc --socket PATH COMMAND`), one row each:
 * every one runs the same skeleton (cmd_remote.c): its options parsed
 * into the body of its request (the request table's row says which
 * message, which oneof case and whether any replica may answer), its
 * operands checked, one call, the answer printed. A command whose asking
 * is more than one call (watch's stream, adopt's preview and commit,
 * schedule's streamed steps) gives the skeleton a `run` for that part
 * only. */
#ifndef OFC_CLI_REMOTE_H
#define OFC_CLI_REMOTE_H

#include "controller/api/api.h"
#include "controller/cli/internal.h"
#include "proto/control.pb-c.h"

#include <limits.h>

/* The body of any request a remote command sends: the row's message,
 * initialised from its descriptor. */
union remote_body {
	ProtobufCMessage base;
	Ofc__V1__ApplyConfig apply_config;
	Ofc__V1__Reconfigure reconfigure;
	Ofc__V1__GetSchedule get_schedule;
	Ofc__V1__GetState get_state;
	Ofc__V1__Watch watch;
	Ofc__V1__Cancel cancel;
	Ofc__V1__ReportFailure report_failure;
	Ofc__V1__ReleasePartition release_partition;
	Ofc__V1__GetPlan get_plan;
	Ofc__V1__Adopt adopt;
	Ofc__V1__TestbedRun testbed_run;
	Ofc__V1__TestbedCheck testbed_check;
	Ofc__V1__TestbedDown testbed_down;
	Ofc__V1__TestbedUp testbed_up;
	Ofc__V1__TestbedMpirun testbed_mpirun;
	Ofc__V1__Drain drain;
};

/* One command being run: where it asks, what its options said beyond the
 * body (each command reads only its own), what it must free. */
struct remote {
	const struct cli_cmd *cmd;
	const struct remote_cmd *row;
	struct cli_targets *t; /* every address given; the walk finds the leader */
	bool json;
	double timeout;
	struct reconfigure_ask ask; /* reconfigure's options */
	/* apply: the config read, its real path; testbed run: --schedule's
	 * bytes; testbed mpirun: PROGRAM's whole path */
	char *text, path[PATH_MAX];
	const char *output, *format; /* schedule: -o, --format */
	enum out_format fmt;	     /* schedule: -o's format, by the rule of `ofc schedule` */
	uint32_t count;		     /* watch --count */
	bool yes, all;		     /* adopt --yes, restore --all */
};

/* Options every remote command has, at the end of each row's table. */
#define REMOTE_OPT_JSON	   'j'
#define REMOTE_OPT_TIMEOUT 'W'
#define REMOTE_COMMON_OPTS                                                                         \
	{"json", no_argument, NULL, REMOTE_OPT_JSON},                                              \
	    {"timeout", required_argument, NULL, REMOTE_OPT_TIMEOUT},                              \
	{                                                                                          \
		"help", no_argument, NULL, 'h'                                                     \
	}

/* The operands a command takes after its options. */
enum remote_operands {
	OPERANDS_NONE, /* "unexpected argument 'X'" and the row's `extra` */
	OPERANDS_ONE,  /* exactly one, called `operand` */
	OPERANDS_ANY,  /* the row's build checks them */
};

struct remote_cmd {
	struct cli_cmd cmd;	   /* name ("status"), usage and summary */
	enum api_kind kind;	   /* the request it sends (controller/api) */
	const struct option *opts; /* its own: --json, --timeout and --help are every one's */
	const char *shortopts;	   /* beyond "h" */
	const char *help;	   /* --help's text (or help_fn's) */
	int (*help_fn)(const struct cli_cmd *cmd);
	double timeout; /* the default --timeout, s (0: the walk's) */
	unsigned call;	/* CLI_CALL_ flags beyond READ, which the kind's row says */
	enum remote_operands operands;
	const char *operand; /* OPERANDS_ONE: its name ("FILE") */
	const char *extra;   /* OPERANDS_NONE: why none ("" or " (the daemon ...)") */
	/* One of its own options into b or r: 0, or an exit status. */
	int (*opt)(struct remote *r, union remote_body *b, int c, const char *arg);
	/* The operands into b, and the checks across options: 0, or an exit
	 * status. NULL: nothing to add. */
	int (*build)(struct remote *r, union remote_body *b, int argc, char **argv);
	/* Ask and print where one call does not (req holds b): an exit
	 * status. NULL: one call, then `print` or finish. */
	int (*run)(struct remote *r, Ofc__V1__Request *req);
	/* An OK answer with the body `answer`: printed, an exit status.
	 * NULL, or any other answer: remote_finish. */
	Ofc__V1__Response__BodyCase answer;
	int (*print)(struct remote *r, const Ofc__V1__Response *resp);
};

/* Every command's row lives beside its code; cmd_remote.c lists them. */
extern const struct remote_cmd remote_schedule_cmd, remote_watch_cmd, remote_adopt_cmd;

/* `testbed ACTION`'s row (remote_testbed.c): NULL for an action ofcd does
 * not answer. */
const struct remote_cmd *remote_testbed_row(const char *action);
/* A TestbedUpAnswer as `ofc testbed up` prints it, local or through ofcd
 * (remote_testbed.c). */
void testbed_print_up(const Ofc__V1__TestbedUpAnswer *m);
/* A TestbedCheckAnswer as `ofc testbed check` prints it, local or through
 * ofcd. */
void testbed_print_check(const Ofc__V1__TestbedCheckAnswer *m);
/* A TestbedRunAnswer as `ofc testbed run` prints it, local or through
 * ofcd: one printer for both, so the two read the same. */
void testbed_print_run(const Ofc__V1__TestbedRunAnswer *m);

/* Every command's row, in the order `ofc --help` lists them: their number. */
size_t remote_rows(const struct remote_cmd *const **rows);

/* Exit status of an answer's status: 0 OK, 2 INVALID, 1 else. */
int remote_status_exit(Ofc__V1__Status st);
/* A connection that failed, said on stderr: its exit status. */
int remote_connect_fail(const struct ofc_error *err);
/* m as JSON on out (pretty). */
void remote_print_json(FILE *out, const ProtobufCMessage *m);
/* Neither --socket nor OFC_SOCKET: say which daemon is asked. */
void remote_say_default(const struct remote *r);
/* One request, one answer, from the replica that leads (targets.c walks
 * the addresses); reads may be answered by any replica. 0 with *resp, or
 * an exit status. */
int remote_call(struct remote *r, Ofc__V1__Request *req, unsigned flags, Ofc__V1__Response **resp);
/* The outcome of a mutation or any answer not printed otherwise: the
 * message, the TransactionInfo as JSON, or the error. Frees resp;
 * returns the exit status. */
int remote_finish(struct remote *r, Ofc__V1__Response *resp);

#endif
