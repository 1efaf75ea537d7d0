/* The cost model a pick is priced under and the degree it may have (pick.h):
 * arithmetic on a fabric's numbers, no finder. Apart from pick.c because
 * validation reads them to check and describe `topology: auto` in every
 * program, ofcd included, where the pick itself is a planner process's
 * (pick.c links the finder; this file links nothing of an engine). */
#include "controller/pick/pick.h"

void pick_model_default(struct pick_model *m)
{
	*m = (struct pick_model){.alpha = COST_ALPHA_DEFAULT};
}

static void slowest(double *r, double rate)
{
	if (rate > 0 && (*r == 0 || rate < *r))
		*r = rate;
}

void pick_model_of(const struct fabric *f, struct pick_model *m)
{
	double rate = 0;

	pick_model_default(m);
	if (f->cost.alpha_set)
		m->alpha = f->cost.alpha;
	if (f->cost.bandwidth_set && f->cost.link_bandwidth > 0) {
		m->link_rate = f->cost.link_bandwidth;
		return;
	}
	/* The topology's own link_rates are not the hosts': a topology picked
	 * anew has links of the ports' rates. */
	for (uint32_t h = 0; h < f->nhosts; h++) {
		const struct host *ho = &f->hosts[h];

		if (!ho->port_rates.n)
			slowest(&rate, ho->port_rate);
		for (uint32_t j = 0; j < ho->port_rates.n; j++)
			slowest(&rate, ho->port_rates.v[j]);
	}
	m->link_rate = rate;
}

struct sched_cost pick_cost(const struct pick_model *m, uint32_t degree, uint64_t size)
{
	return (struct sched_cost){
	    .alpha = m->alpha,
	    .bandwidth = m->node_rate > 0   ? m->node_rate
			 : m->link_rate > 0 ? m->link_rate * degree
					    : COST_NODE_RATE_DEFAULT,
	    .size = size,
	};
}

uint32_t pick_degree(const struct fabric *f)
{
	uint32_t d = UINT32_MAX;

	for (uint32_t h = 0; h < f->nhosts; h++)
		if (f->hosts[h].ports < d)
			d = f->hosts[h].ports;
	if (d == UINT32_MAX)
		return 0;
	return d > BFB_MAX_DEGREE ? BFB_MAX_DEGREE : d;
}
