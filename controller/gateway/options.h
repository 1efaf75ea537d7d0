/* Private to controller/gateway/: ofc-gateway's command line as a table of
 * options (util.h, "command-line options") and the help written from it. */
#ifndef OFC_CONTROLLER_GATEWAY_OPTIONS_H
#define OFC_CONTROLLER_GATEWAY_OPTIONS_H

#include "controller/gateway/gateway.h"

/* ofc-gateway's options, one row each into struct gw_opts, ending with a
 * NULL name. */
extern const struct opt gw_option_table[];

/* argv into o (its strings are argv's): 0 to go on, 1 for --help or
 * --version (*stop says which), -1 with err (OFC_E_USAGE). */
int gw_args_parse(int argc, char **argv, struct gw_opts *o, const struct opt **stop,
		  struct ofc_error *err);
/* ofc-gateway --help. */
void gw_args_help(FILE *f);

#endif
