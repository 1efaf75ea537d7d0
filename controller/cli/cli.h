/* controller/cli — the `ofc` command line. */
#ifndef OFC_CONTROLLER_CLI_H
#define OFC_CONTROLLER_CLI_H

/* The whole `ofc` command line; returns the process exit status
 * (0 success, 1 runtime failure, 2 bad input or usage). */
int ofc_cli_main(int argc, char **argv);
/* ofc-hostd, a host's agent (hostd.c, docs/hosts.md): the same exits. */
int ofc_hostd_main(int argc, char **argv);

#endif
