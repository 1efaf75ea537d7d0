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

/* One command being run: where it asks, the body of its request and
 * what its options said beyond it (each command reads only its own), what
 * it must free. The rows of a command's table fill it (their offsets are
 * into it): the body's fields directly, their has_ flags set from the
 * message's descriptor as each is given (remote_given). */
struct remote {
	const struct cli_cmd *cmd;
	const struct remote_cmd *row;
	struct cli_targets *t; /* every address given; the walk finds the leader */
	union remote_body body;
	const ProtobufCMessageDescriptor *desc; /* the body's (NULL: set no has_) */
	bool json;
	double timeout;
	/* reconfigure's options; apply's --max-loss and --grace, drain's
	 * --grace (grace_s below 0 until given: 0 is a grace) */
	struct reconfigure_ask ask;
	/* apply: the config read, its real path; testbed run: --schedule's
	 * bytes; testbed mpirun: PROGRAM's whole path */
	char *text, path[PATH_MAX];
	const char *output, *format; /* schedule: -o, --format */
	enum out_format fmt;	     /* schedule: -o's format, by the rule of `ofc schedule` */
	uint32_t count;		     /* watch --count */
	int mpi;		     /* testbed mpirun --mpi: 0 (not given), 1 mpich, 2 openmpi */
	bool yes, all;		     /* adopt --yes, restore --all */
};

/* A row's field: in struct remote, or in the body's message M. */
#define REMOTE_O(f)    offsetof(struct remote, f)
#define REMOTE_B(m, f) offsetof(struct remote, body.m.f)
/* A flag into a message's protobuf_c_boolean (a plain flag writes a bool). */
int remote_row_flag(const struct opt *row, const char *arg, void *base, struct ofc_error *err);
/* The rows every remote command ends with: --json (its help says what it
 * prints), --timeout and --help. */
#define REMOTE_ROWS_END(json_help)                                                                 \
	{"json", NULL, REMOTE_O(json), NULL, json_help},                                           \
	    {"timeout", cli_row_duration, REMOTE_O(timeout), "DUR",                                \
	     "give up waiting for the answer after DUR (each command has its own default)"},       \
	    CLI_OPT_HELP,                                                                          \
	{                                                                                          \
		NULL                                                                               \
	}

/* The operands a command takes after its options. */
enum remote_operands {
	OPERANDS_NONE, /* "unexpected argument 'X'" and the row's `extra` */
	OPERANDS_ONE,  /* exactly one, called `operand` */
	OPERANDS_ANY,  /* the row's build checks them */
};

struct remote_cmd {
	struct cli_cmd cmd; /* name ("status"), usage (its operands) and summary */
	enum api_kind kind; /* the request it sends (controller/api) */
	/* its rows (ending with REMOTE_ROWS_END) and --help's words before them */
	struct cli_opts opts;
	double timeout; /* the default --timeout, s (0: the walk's) */
	unsigned call;	/* CLI_CALL_ flags beyond READ, which the kind's row says */
	enum remote_operands operands;
	const char *operand; /* OPERANDS_ONE: its name ("FILE") */
	const char *extra;   /* OPERANDS_NONE: why none ("" or " (the daemon ...)") */
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

/* The has_ flag of the body's field a row fills, set (cli_opts.given). */
void remote_given(const struct opt *row, void *base);

/* `testbed ACTION`'s row (remote_testbed.c): NULL for an action ofcd does
 * not answer (or none, NULL). */
const struct remote_cmd *remote_testbed_row(const char *action);
/* Why `testbed WORD` is none of them, said on stderr: 2. */
int remote_testbed_refuse(const char *word);
/* A TestbedUpAnswer as `ofc testbed up` prints it, local or through ofcd
 * (remote_testbed.c). */
void testbed_print_up(const Ofc__V1__TestbedUpAnswer *m);
/* A TestbedCheckAnswer as `ofc testbed check` prints it, local or through
 * ofcd. */
void testbed_print_check(const Ofc__V1__TestbedCheckAnswer *m);
/* A TestbedRunAnswer as `ofc testbed run` prints it, local or through
 * ofcd: one printer for both, so the two read the same. */
void testbed_print_run(const Ofc__V1__TestbedRunAnswer *m);

/* r->row's options and operands into r and its body (r->cmd names the
 * command in errors). true: the request is ready; false: the command is
 * over (help, a usage error), *rc its exit status. */
bool remote_parse(struct remote *r, int argc, char **argv, int *rc);

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
