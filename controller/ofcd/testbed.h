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

/* (mutation worker) The fabric reconfigured to spec as a Reconfigure
 * would be, for TestbedRun's what-if (testbed_what_if.c): 0, or -1 with
 * why. Its state and config become j's to publish. from_client: spec came
 * in the request (files it names read under the daemon's). */
int ofcd_testbed_reconfigure(struct ofcd *d, struct job *j, const char *spec, bool from_client,
			     struct ofc_error *err);

#endif
