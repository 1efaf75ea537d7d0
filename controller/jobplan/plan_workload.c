/* The use case "plan a workload", written once: the workload named (a
 * file, loaded and checked against the fabric, or the config's own
 * section), the query's knobs the caller leaves to the config (how many of
 * the finder's topologies, the cost model's switch_overhead), then the
 * pricing and the ways (jobplan_compute). `ofc plan --workload`, `ofc
 * testbed run --workload` and ofcd's GetPlan all call it (jobplan.h). */
#include "controller/config/config.h"
#include "controller/jobplan/internal.h"

#include <string.h>

int jobplan_plan_workload(const struct jobplan_request *rq, struct workload *own,
			  struct jobplan_result *r, struct ofc_error *err)
{
	const struct fabric *f = rq->q.fabric;
	struct jobplan_query q = rq->q;

	memset(own, 0, sizeof(*own));
	q.workload = &f->workload;
	if (!rq->workload || strcmp(rq->workload, "config") == 0) {
		if (!f->workload.present)
			return ofc_error_set(err, OFC_E_INPUT, "%s has no workload section",
					     f->file);
	} else {
		if (config_load_workload(rq->workload, own, err) < 0 ||
		    workload_validate(f, own, err) < 0)
			return -1;
		q.workload = own;
	}
	if (!rq->alternatives_set)
		q.alternatives = 4;
	if (!rq->overhead_set)
		q.overhead = (struct jobplan_overhead){f->cost.switch_overhead.transaction,
						       f->cost.switch_overhead.circuit};
	return jobplan_compute(&q, r, err);
}
