/* A topology for a workload (pick.h): the finder's frontier ranked by the
 * workload's predicted time under one cost model. */
#include "controller/pick/pick.h"

#include <stdlib.h>
#include <string.h>

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
