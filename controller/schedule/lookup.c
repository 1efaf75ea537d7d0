/* The schedule pipeline's lookups: what a request's algorithm is, whether
 * it is a server fabric's, the memory it may hold, whether an outcome is
 * optimal. Data and arithmetic alone, beside the engines' table
 * (engines.c): ofcd reads them to check and describe a request, and they
 * link no engine into it (scripts/check-engines.py, LOOKUPS). */
#include "controller/schedule/internal.h"

#include <math.h>

/* The memory a request may hold: --max-memory (ofcd --max-request-memory),
 * else half the machine's. */
uint64_t schedule_memory_limit(const struct schedule_query *q)
{
	return q->max_memory ? q->max_memory : mem_physical() / 2;
}

bool schedule_fluid_fabric(const struct fabric *f)
{
	return f && f->nservers > 0;
}

bool schedule_fluid_request(const struct schedule_query *q)
{
	const char *a = q->algorithm;

	return (a && engine_find(a, ENGINE_SERVERS)) ||
	       (!a && !q->spec && schedule_fluid_fabric(q->fabric));
}

struct schedule_optimality schedule_optimality(const struct schedule_result *r,
					       const struct schedule_outcome *o)
{
	return (struct schedule_optimality){
	    .moore = o->alphas == o->lb_steps,
	    .bw = frac_valid(o->tau_b) ? frac_cmp(o->tau_b, r->lb.tau_b) == 0
				       : fabs(o->tau_b_value - frac_value(r->lb.tau_b)) < 1e-9};
}

/* The config's entry under collectives for the request's collective that
 * names an algorithm, when the request schedules the fabric's own ring or
 * topology; else NULL. */
const struct collective *schedule_config_collective(const struct fabric *f,
						    enum sched_collective coll)
{
	for (uint32_t i = 0; f && i < f->ncollectives; i++)
		if (f->collectives[i].op == coll && f->collectives[i].algorithm)
			return &f->collectives[i];
	return NULL;
}

/* A query by spec, graph or ring is a topology's: no config's choice. */
const struct collective *engine_config_algorithm(const struct schedule_query *q)
{
	if (q->spec || q->graph || q->ring)
		return NULL;
	return schedule_config_collective(q->fabric, q->collective);
}

const char *schedule_pick_algorithm(const struct schedule_query *q)
{
	const struct collective *c = engine_config_algorithm(q);

	if (q->algorithm && *q->algorithm)
		return q->algorithm;
	if (c)
		return c->algorithm;
	if (q->ring || (!q->spec && !q->graph && q->fabric && q->fabric->nrings))
		return schedule_default_algorithm(ENGINE_RING, q->collective);
	return schedule_default_algorithm(ENGINE_DIRECT, q->collective);
}
