/* A topology for a workload (pick.h): the finder's frontier ranked by the
 * workload's predicted time under one cost model. */
#include "controller/pick/pick.h"

#include <stdlib.h>
#include <string.h>

static int check_request(const struct pick_request *q, struct ofc_error *err)
{
	if (q->degree == 0 || q->degree >= q->nodes)
		return ofc_error_set(err, OFC_E_INPUT,
				     "%u hosts with %u ports each have no direct-connect topology "
				     "to choose",
				     q->nodes, q->degree);
	if (q->degree > BFB_MAX_DEGREE)
		return ofc_error_set(err, OFC_E_INPUT,
				     "degree %u: the finder goes up to %u (BFB's link masks are "
				     "64 bits)",
				     q->degree, BFB_MAX_DEGREE);
	for (size_t w = 0; w < q->nwork; w++) {
		enum sched_collective op = q->work[w].op;

		if (op != SCHED_ALLGATHER && op != SCHED_REDUCE_SCATTER && op != SCHED_ALLREDUCE)
			return ofc_error_set(err, OFC_E_INPUT,
					     "the finder picks topologies for allgather, "
					     "reduce-scatter and allreduce, not %s",
					     sched_collective_name(op));
	}
	return 0;
}

int pick_run(const struct pick_request *q, struct pick_result *r, struct ofc_error *err)
{
	memset(r, 0, sizeof(*r));
	if (check_request(q, err) < 0)
		return -1;
	if (finder_run(q->nodes, q->degree, q->threads, &r->front, err) < 0) {
		finder_free(&r->front); /* (an empty frontier is allocated) */
		return -1;
	}
	size_t n = r->front.n;

	r->time_us = xcalloc(n + 1, sizeof(*r->time_us));
	r->rank = xcalloc(n + 1, sizeof(*r->rank));
	for (size_t i = 0; i < n; i++) {
		for (size_t w = 0; w < q->nwork; w++) {
			const struct pick_work *pw = &q->work[w];
			struct sched_cost cost = pick_cost(&q->model, q->degree, pw->size);

			r->time_us[i] +=
			    pw->weight * finder_time_us(&r->front.front[i], pw->op, &cost);
		}
		/* Insertion by time, an equal time after those already in:
		 * ties go to the entry of fewer steps (the frontier's order). */
		size_t at = i;
		while (at > 0 && r->time_us[r->rank[at - 1]] > r->time_us[i]) {
			r->rank[at] = r->rank[at - 1];
			at--;
		}
		r->rank[at] = i;
	}
	r->pick = n ? r->rank[0] : 0;
	return 0;
}

void pick_free(struct pick_result *r)
{
	finder_free(&r->front);
	free(r->time_us);
	free(r->rank);
	memset(r, 0, sizeof(*r));
}

static int pick_here_fn(const struct topo_picker *p, const struct pick_request *q, char **spec,
			double *time_us, struct ofc_error *err)
{
	struct pick_result r;

	(void)p;
	if (pick_run(q, &r, err) < 0)
		return -1;
	*time_us = r.time_us[r.pick];
	*spec = xstrdup(r.front.front[r.pick].spec);
	pick_free(&r);
	return 0;
}

const struct topo_picker pick_here = {.pick = pick_here_fn};
