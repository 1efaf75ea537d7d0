/* Private to controller/schedule/: the two families of the pipeline. */
#ifndef OFC_CONTROLLER_SCHEDULE_INTERNAL_H
#define OFC_CONTROLLER_SCHEDULE_INTERNAL_H

#include "controller/schedule/schedule.h"

/* Each fills r (outcomes, main, figures) for the algorithm named (never
 * NULL); errors as schedule_compute's. */
int schedule_direct(struct schedule_result *r, const struct schedule_query *q, const char *algo,
		    struct ofc_error *err); /* direct.c */
int schedule_ring(struct schedule_result *r, const struct schedule_query *q, const char *algo,
		  struct ofc_error *err); /* ring.c */
bool direct_algorithm_known(const char *algo);
void schedule_outcome_free(struct schedule_outcome *o);

#endif
