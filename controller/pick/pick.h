/* A topology for a workload: the use case every front door calls to pick
 * a direct-connect topology for N hosts of d ports (`topology: auto` in a
 * config, a Reconfigure by workload, the alternatives `ofc plan` weighs,
 * a workload plan's per-group families, `ofc finder`), with the one cost
 * model they price it under and its defaults here, once.
 *
 * The finder (bfb/finder.c, Zhao et al. Sec. 5.4) gives the Pareto
 * frontier of (tau_L, tau_B); each entry's time for a workload is the sum
 * over its collectives of weight x (tau_L alpha + tau_B M / B), where B is
 * a node's egress: its d links at the link rate each (Zhao et al. Sec. 3). Nothing here prints:
 * each door keeps its own words. */
#ifndef OFC_CONTROLLER_PICK_H
#define OFC_CONTROLLER_PICK_H

#include "bfb/bfb.h"
#include "controller/fabric/fabric.h"

struct pick_model {
	double alpha;	  /* seconds per step */
	double link_rate; /* bits/s of one link (a NIC port); 0: not known */
	/* > 0: a node's egress whatever its degree (`ofc finder --bandwidth`).
	 * Else degree x link_rate, or COST_NODE_RATE_DEFAULT (sched.h) without one. */
	double node_rate;
};

/* The cost model and the degree (model.c: arithmetic alone, no finder). */
/* The cost model's defaults (COST_ALPHA_DEFAULT, sched.h), no link rate. */
void pick_model_default(struct pick_model *m);
/* A fabric's model, before or after validation: cost_model.alpha if the
 * config sets it; cost_model.link_bandwidth if it sets it, else the
 * slowest of the hosts' port rates, else no link rate. */
void pick_model_of(const struct fabric *f, struct pick_model *m);
/* The cost of one collective of size bytes at degree d under m. */
struct sched_cost pick_cost(const struct pick_model *m, uint32_t degree, uint64_t size);
/* The degree a topology of the whole fabric may have: the fewest ports
 * any host has, at most BFB_MAX_DEGREE. */
uint32_t pick_degree(const struct fabric *f);

/* One collective of the workload: allgather, reduce-scatter or allreduce
 * of size bytes at each node, weight times (a run's count). */
struct pick_work {
	enum sched_collective op;
	uint64_t size;
	double weight;
};

struct pick_request {
	uint32_t nodes, degree;
	unsigned threads; /* the finder's; 0: every CPU */
	struct pick_model model;
	const struct pick_work *work;
	size_t nwork;
};

struct pick_result {
	struct finder_result front; /* ascending steps, descending tau_B */
	double *time_us;	    /* per frontier entry: the workload's time */
	size_t *rank;		    /* frontier indices, fastest first (ties: fewer steps) */
	size_t pick;		    /* rank[0] */
};

/* Rank the finder's frontier for q (no work: every time 0, the frontier's
 * order). Errors (OFC_E_INPUT): a collective the finder cannot price, a
 * degree with no topology (0, or not below the node count). The result is
 * the caller's (pick_free). */
int pick_run(const struct pick_request *q, struct pick_result *r, struct ofc_error *err);
void pick_free(struct pick_result *r);

/* How a config's `topology: auto` is picked, the hook fabric_validate
 * calls through f->picker (config.h): q is the finder's request (the hosts,
 * the fewest ports any has, the config's collectives under its cost
 * model); the pick's spec into *spec (the caller's to free) and the
 * workload's time on it into *time_us, or -1 with err (validation places
 * its message at the topology). Programs that link the finder pass
 * pick_here (pick_run in this process: the CLI, the planner process, the
 * benches and tests); ofcd passes one that asks a planner process
 * (controller/ofcd/planner_ask.c, ofcd_picker), so it links no finder. */
struct topo_picker {
	int (*pick)(const struct topo_picker *p, const struct pick_request *q, char **spec,
		    double *time_us, struct ofc_error *err);
};
extern const struct topo_picker pick_here;

#endif
