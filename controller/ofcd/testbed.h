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

/* (mutation worker) The testbed's schedules computed in a planner process
 * (testbed_schedules.c), as the shared testbed code takes them: on f, the
 * fabric every query names (cfg's, or spec's topology on its hosts:
 * testbed_topo_open), cfg's fabric rebuilt by the planner, spec opened on
 * it there (NULL: f is cfg's own), within cfg's request memory limit and
 * each query's time limit. t must outlive the source. */
struct testbed_planner {
	const struct ofcd *d;
	const struct fabcfg *cfg;
	const struct fabric *f;
	const char *spec;
};
struct schedule_source testbed_planner_source(const struct testbed_planner *t);

#endif
