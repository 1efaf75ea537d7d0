/* The testbed through ofcd, the mutation worker's side (testbed.c,
 * testbed_up.c): what work.c calls and the two files share. The requests'
 * handlers on the loop are conn.h's (mutation_requests.c). */
#ifndef OFC_CONTROLLER_OFCD_TESTBED_H
#define OFC_CONTROLLER_OFCD_TESTBED_H

#include "controller/ofcd/worker.h"

/* (mutation worker) JOB_TESTBED_UP (testbed_up.c). */
void ofcd_run_testbed_up(struct ofcd *d, struct job *j);
/* (mutation worker) After the testbed came up or went down: the worker's
 * ctl opened again, so its devices are the switches and, while a testbed
 * is up, its hosts. */
void ofcd_testbed_reopen_ctl(struct ofcd *d);

#endif
