/* controller/jobplan — planning for the job, not one collective:
 * a workload (phases of collectives in groups of hosts, or traffic
 * matrices, repeated every iteration; struct workload) on a switched
 * direct-connect fabric, priced on candidate topologies through the one
 * schedule pipeline (schedule_compute: every phase's schedules verified),
 * and three ways to run it compared with the choice among all of them:
 *
 *   static     the best single topology for the whole job;
 *   per-phase  each phase on its own best topology, reconfiguring between
 *              phases (every device's switching time paid, overlapped where
 *              the circuits that change are not in use by the phase
 *              before: make-before-break);
 *   in place   the circuits the switches hold now, if they connect;
 *   chosen     the least iteration time over every assignment of
 *              candidates to phases (a cyclic dynamic programme: static
 *              and per-phase are two of its assignments, so it is never
 *              slower than either).
 *
 * Candidates: the config's topology, the circuits in place, the finder's
 * frontier for the hosts and ports, unions of per-group topologies (each
 * kind of groups its own share of the ports, TopoOpt's way), and
 * topologies built for the traffic (a ring through the heaviest pairs for
 * connectivity, the other ports permutations of the most residual
 * traffic). A phase in groups is priced two ways where they apply: each
 * group on its own links (its induced subgraph, strongly connected), the
 * groups' schedules verified together with their link loads summed
 * (sched_verify_groups); and all groups together as one demand matrix over
 * the whole topology (the all-to-all MCF with per-pair demands). */
#ifndef OFC_CONTROLLER_JOBPLAN_H
#define OFC_CONTROLLER_JOBPLAN_H

#include "controller/schedule/schedule.h"

enum jobplan_origin {
	JOBPLAN_CONFIG = 1, /* the config's topology */
	JOBPLAN_IN_PLACE,   /* the circuits the switches hold */
	JOBPLAN_FINDER,	    /* the finder's frontier */
	JOBPLAN_UNION,	    /* per-group topologies, united */
	JOBPLAN_TRAFFIC,    /* built for a traffic matrix */
};
const char *jobplan_origin_name(enum jobplan_origin o);

/* A candidate topology on the fabric's hosts (node i = host i). */
struct jobplan_topo {
	char name[160]; /* for people: "tp ring:8 + ep hypercube:3", "for a2a's traffic" */
	/* The spec that builds it again exactly, graph, ports and circuits
	 * (what a config, a record or MoveToPhase commits; owned): the
	 * config's, the finder's, a union of the groups' families
	 * ("union(product(ring:8,empty:8),product(empty:8,hypercube:3))"), or
	 * the port permutations written out ("ports:N:..."): NULL for the
	 * circuits in place, which nothing needs to commit. */
	char *spec;
	enum jobplan_origin origin;
	struct graph *g;
	struct port_map pm;	  /* its port permutations */
	struct circuit *circuits; /* on the fabric's wiring */
	uint32_t ncircuits;
	bool connected; /* strongly connected (else only groups' own links serve) */
	/* per arc of g: the host port it leaves from (at its tail) and
	 * arrives on (at its head) */
	uint32_t *arc_tx, *arc_rx;
	bool spec_built; /* g is topo_build(spec)'s: scheduled by its spec */
};

/* One phase on one candidate: its time for one run (count not applied),
 * how, the host ports it uses (for overlap), and its latency and
 * bandwidth parts (time = lat_us + bw_us at the phase's size; --plot
 * scales bw_us with the size). */
struct jobplan_cost {
	bool ok;
	char why[256]; /* when not ok */
	char how[128]; /* "bfb in each tp group, own links", ... */
	char algo[32];
	double us, lat_us, bw_us;
	uint32_t steps;
	bool verified;
	double theta;	/* demand-matrix phases: the MCF's */
	double mcf_s;	/* MCF solve seconds, if any */
	double seconds; /* pricing it took (both ways, for groups) */
	/* host ports (h * ports + j) that carry the phase's data, 1 byte each */
	uint8_t *ports_used;
};

/* A circuit that goes (add false) or comes (add true) between two
 * candidates: its switch and the host ports at its ends. */
struct jobplan_change {
	uint32_t sw, src, srcp, dst, dstp;
	bool add;
};
struct jobplan_diff {
	struct jobplan_change *c;
	uint32_t n;
};

enum jobplan_kind {
	JOBPLAN_STATIC = 0,
	JOBPLAN_PER_PHASE,
	JOBPLAN_KEEP,
	JOBPLAN_CHOSEN,
	JOBPLAN_KINDS
};
const char *jobplan_kind_name(enum jobplan_kind k);

/* One way to run the iteration: a candidate per phase, the switching
 * before each phase (from the phase before it, the last wrapping to the
 * first), what of it the phase before hid. */
struct jobplan_way {
	bool have;
	char why_not[200];
	uint32_t *topo;	     /* nphases: candidate index */
	double *phase_us;    /* nphases: count x one run */
	double *switch_us;   /* nphases: switching before it, exposed */
	double *switch_full; /* nphases: ... in all (hidden + exposed) */
	uint32_t *changes;   /* nphases: circuits that change before it */
	double iter_us;	     /* one iteration: phases + exposed switching */
	double first_us;     /* the switching before the first iteration, from in place */
};

struct jobplan_query {
	const struct fabric *fabric;	 /* validated, with hosts, ports and switches */
	const struct workload *workload; /* validated against it */
	/* What each switch holds now (index as f->switches; NULL entries or
	 * NULL: unknown): the in-place candidate and the first switching. */
	const struct device_state *const *actual;
	double mcf_time_limit; /* seconds per MCF solve; 0: 20 */
	double steps_try;      /* time-stepped MCF's try; 0: 2 s */
	/* The MCF's lowering where groups share the topology (a demand
	 * matrix over every host): NULL is "paths", the fluid MCF's routes,
	 * cut-through (the time-stepped MCF over 64 hosts of skewed demands
	 * takes seconds a candidate); "steps" for store-and-forward, what the
	 * testbed's executor runs. */
	const char *lowering;
	uint32_t alternatives; /* the finder's entries weighed (0: none) */
	/* For a run on the testbed (`ofc testbed run --workload`): every
	 * phase as the executor runs it (groups together as a demand matrix,
	 * which it checks byte for byte; over every host the collective),
	 * priced at the testbed's link rate and alpha (0: the fabric's cost
	 * model). */
	bool executable;
	double link_rate; /* bits/s a link */
	double alpha;	  /* seconds a step */
	/* A switching's cost beyond the switches' own time (reconfig_time,
	 * move_time): the controller's per transaction (reading the devices,
	 * the journal, fsync) and per circuit changed (on the testbed its
	 * veth pair and routes moved in the hosts' namespaces), seconds,
	 * never hidden behind the phase before. 0, 0: the switches' time
	 * alone. `ofc testbed run --workload` measures them (controller/testbed/workload.c). */
	struct jobplan_overhead {
		double txn_s, change_s;
	} overhead;
	/* No make-before-break: every switching waits for the phase before
	 * to end (the testbed's run applies a transaction between phases). */
	bool serial_switching;
	unsigned threads;
	const struct ofc_clock *clock;
};

struct jobplan_result {
	const struct fabric *fabric;
	const struct workload *workload;
	uint32_t ports; /* the fewest ports of a host (circuits use 0..ports-1) */
	struct jobplan_topo *topo;
	uint32_t ntopo;
	uint32_t nphases;
	struct jobplan_cost *cost; /* nphases x ntopo, phase-major */
	struct jobplan_way way[JOBPLAN_KINDS];
	/* The circuits that change from candidate a to b (diff[a * ntopo +
	 * b]), made once by jobplan_compute (NULL: jobplan_switch_us compares
	 * the circuits itself). */
	struct jobplan_diff *diff;
	struct jobplan_overhead overhead; /* the query's (jobplan_ways uses it) */
	bool serial_switching;		  /* the query's */
	enum jobplan_kind chosen_kind;	  /* the way chosen's equal among the others, if any */
	char why[1024];
	/* What the planner left out and why ("for a2a's traffic: not built,
	 * its assignments passed 20 s"); empty when nothing. */
	char notes[512];
	double seconds; /* pricing took */
};

int jobplan_compute(const struct jobplan_query *q, struct jobplan_result *r, struct ofc_error *err);
/* The use case "plan a workload" (plan_workload.c), as `ofc plan
 * --workload`, `ofc testbed run --workload` and GetPlan run it: rq->workload
 * a file (loaded into *own and checked against q.fabric) or "config" /
 * NULL (the config's own section: its absence is an error, which each
 * caller words as its own first); q.alternatives 4 and q.overhead the
 * config's switch_overhead unless set; then jobplan_compute. The caller
 * frees *own with workload_free once it is done with r. */
struct jobplan_request {
	struct jobplan_query q; /* fabric and the knobs; workload is filled here */
	const char *workload;
	bool alternatives_set, overhead_set;
};
int jobplan_plan_workload(const struct jobplan_request *rq, struct workload *own,
			  struct jobplan_result *r, struct ofc_error *err);
void jobplan_result_free(struct jobplan_result *r);

/* The switching between candidates a and b (a == UINT32_MAX: from the
 * circuits in place, else the config's), with every switch's time per
 * change `delay` seconds (< 0: as configured: an OCS's reconfig_time once,
 * a patch panel's move_time a move), plus r->overhead. Returns what the
 * phase before (its cost, and its duration window_us) does not hide (all
 * of it with r->serial_switching); *full_us the switching in all, *changes
 * the moves (the larger of circuits added and removed, per switch). */
double jobplan_switch_us(const struct jobplan_result *r, uint32_t a, uint32_t b,
			 const struct jobplan_cost *before, double window_us, double delay,
			 double *full_us, uint32_t *changes);

/* The ways again for another switching time per change (delay seconds,
 * < 0: as configured) and sizes (every phase's bandwidth part times
 * size_scale), from the prices already made (no schedule computed again):
 * what jobplan_compute does with (-1, 1), and --plot's sweep. *chosen: the
 * way the least job time equals (JOBPLAN_CHOSEN when none of the others). */
void jobplan_ways(const struct jobplan_result *r, double delay, double size_scale,
		  struct jobplan_way way[JOBPLAN_KINDS], enum jobplan_kind *chosen);
void jobplan_way_free(struct jobplan_way *w);

/* What the testbed runs for phase p on candidate t: the schedule priced
 * (its lanes the hosts' ports), run `rounds` times for one run of the
 * phase (an allreduce in groups: its reduce-scatter's and all-gather's
 * traffic), each with size bytes a host and, for an all-to-all of skewed
 * pairs, each block's weight (n x n, owned; NULL: alike). */
struct jobplan_exec {
	struct schedule s;
	uint64_t size;
	double *block_weight;
	uint32_t rounds;
	double predicted_us; /* one run of the phase (rounds included) */
};
int jobplan_exec_phase(const struct jobplan_query *q, const struct jobplan_result *r, uint32_t p,
		       uint32_t t, struct jobplan_exec *x, struct ofc_error *err);
void jobplan_exec_free(struct jobplan_exec *x);

/* --plot FILE: an SVG of the iteration time of each way against the
 * switching time (every switch's scaled from 1 us to 100 s) and against the
 * message size (every phase's size from 1/64 to 64 times), the crossovers
 * marked. jobplan_sweep gives its points (by_delay: the first panel's), for
 * the plan's message (controller/export). */
int jobplan_plot(const struct jobplan_result *r, const char *path, struct ofc_error *err);
#define JOBPLAN_SWEEP_POINTS 41
struct jobplan_series {
	double x[JOBPLAN_SWEEP_POINTS];		       /* seconds a change, or a size's scale */
	double y[JOBPLAN_KINDS][JOBPLAN_SWEEP_POINTS]; /* us; NAN: that way does not run */
	int chosen[JOBPLAN_SWEEP_POINTS];	       /* enum jobplan_kind */
};
void jobplan_sweep(const struct jobplan_result *r, bool by_delay, struct jobplan_series *s);

#endif
