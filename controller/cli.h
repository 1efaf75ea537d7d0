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

int cmd_validate(const struct cli_cmd *cmd, int argc, char **argv);
int cmd_show(const struct cli_cmd *cmd, int argc, char **argv);
int cmd_topo(const struct cli_cmd *cmd, int argc, char **argv);

#endif
