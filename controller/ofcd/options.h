/* Private to controller/ofcd/: ofcd's command line as a table of options
 * (util.h, "command-line options"), what the options ask together, and
 * the help written from the table. ofcd_main.c reads the command line
 * with it; tests/unit/test_opts.c holds every row to its range and help. */
#ifndef OFC_CONTROLLER_OFCD_OPTIONS_H
#define OFC_CONTROLLER_OFCD_OPTIONS_H

#include "controller/ofcd/ofcd.h"

#define OFCD_ARGS_MAX_DEVICES	   256
#define OFCD_ARGS_MAX_SHARE_EXEMPT 8

/* The command line, parsed: ofcd's options and what the main keeps for
 * itself (where it logs, whether it detaches). The strings are argv's. */
struct ofcd_args {
	struct ofcd_opts o;
	const char *devices[OFCD_ARGS_MAX_DEVICES];
	const char *allow[OFCD_ARGS_MAX_DEVICES];
	const char *share_exempt[OFCD_ARGS_MAX_SHARE_EXEMPT];
	const char *config, *sock, *ro, *state, *topo, *log_file, *pid_file;
	bool foreground, use_syslog, use_journal, check;
	bool have_gateway_uid;
	bool have_gateway_group; /* --gateway-group given: not the user's own */
	bool cluster_insecure;	 /* plain etcd:// allowed, said in so many words */
	const char *cluster_password_file;
};

/* ofcd's options, one row each, ending with a NULL name. */
extern const struct opt ofcd_option_table[];

/* The defaults, then argv: 0 to go on, 1 for --help or --version (*stop
 * says which), -1 with err (OFC_E_USAGE: say the usage too; OFC_E_INPUT:
 * exit 2; OFC_E_RUNTIME: exit 1). Reads --cluster-password-file (the
 * password into a->o.cluster_password, owned). */
int ofcd_args_parse(int argc, char **argv, struct ofcd_args *a, const struct opt **stop,
		    struct ofc_error *err);
/* ofcd --help: the usage, the options, what systemd is told. */
void ofcd_args_help(FILE *f);

#endif
