/* controller/schedule — schedules for a fabric or a topology. */
#ifndef OFC_CONTROLLER_SCHEDULE_H
#define OFC_CONTROLLER_SCHEDULE_H

#include "controller/fabric/fabric.h"
#include "optree/optree.h"


/* OpTree's model of a config's ring for all-gathers of size-byte blocks
 * (0: the config's first allgather's, else 4 MiB); a config without
 * mrrs_per_interface has one MRR per wavelength. */
struct optree_ring ring_optree_model(const struct fabric *f, const struct ring *ring,
				     uint64_t size);

/* ---- schedules for a fabric or a topology (controller/schedule_api.c) ------
 * What `ofc schedule` computes for direct-connect topologies, as a library
 * call for ofcd's GetSchedule and State: build the schedule (BFB, the
 * expansion construction or a baseline), verify it with sched_verify and
 * price it with the alpha-beta model. On a fabric wired through switches the
 * transfer ports are the hosts' NIC ports (the wiring's port permutations)
 * and the links used are listed with the switch ports that carry them.
 * On a fabric with a WDM ring (and no spec): all-gather by OpTree or its
 * baselines on its first ring (algorithm optree, ring, ne, onestage). */
struct schedule_query {
	const struct fabric *fabric; /* validated; NULL with spec alone */
	const char *spec;	     /* a topology instead of the fabric's (no NIC ports) */
	enum sched_collective collective;
	const char *algorithm; /* NULL: bfb (optree on a WDM ring) */
	uint64_t size;	       /* bytes per node; 0: the fabric's collective of that kind */
	uint32_t chunks;       /* BFB: P chunks per shard; 0: exact fractions */
	unsigned threads;      /* 0: all CPUs */
};

struct schedule_link {
	uint32_t src, port, dst;
	int32_t circuit; /* index into fabric->circuits, -1 when none */
};

/* A topology on the fabric's wiring, where port j of host u transmits to
 * ports.to[j * n + u]. arc2port maps the graph's CSR arcs to NIC ports (the
 * k-th parallel arc u -> v takes the k-th port of u that reaches v) and pg
 * is the same graph with arcs in port order, so a transfer's lane is its
 * NIC port and the verifier checks it against the wiring. One for the CLI
 * (`ofc schedule FILE`) and the daemon (schedule_compute). */
struct fabric_view {
	uint32_t *arc2port;
	struct graph *pg;
	int32_t *circuit; /* (u * d + j) -> index into fabric->circuits, -1 when none */
};
/* false (and an empty view) when the fabric has no wiring for g's nodes. */
bool fabric_view_init(const struct fabric *f, const struct graph *g, struct fabric_view *v);
void fabric_view_free(struct fabric_view *v);
/* Transfer lanes from positions among g's arcs to NIC ports. */
void fabric_view_to_nic(const struct fabric_view *v, const struct graph *g, struct schedule *s);
/* The links a schedule on NIC ports uses, in (host, port) order: the count,
 * with *links allocated (free it). */
uint32_t fabric_view_links(const struct fabric_view *v, const struct fabric *f,
			   const struct schedule *s, struct schedule_link **links);

struct schedule_result {
	struct schedule s; /* verified (s.verified) and priced */
	struct frac tau_b; /* exact for BFB, else from the measured link loads */
	double tau_b_value;
	double measured;	/* tau_B from the verifier's link loads */
	char verify_error[320]; /* when !s.verified */
	struct cost_bound lb;
	uint32_t degree;
	bool nic_ports;		     /* transfer ports are NIC ports of the fabric */
	struct schedule_link *links; /* with nic_ports: every link used */
	uint32_t nlinks;
	const struct fabric *fabric;
};

/* Errors: OFC_E_INPUT for requests that cannot be met (unknown algorithm,
 * an algorithm that does not apply, a topology spec that does not parse:
 * err->col is then the column in the spec), OFC_E_RUNTIME otherwise. A
 * schedule the verifier rejects is returned (0) with s.verified false. */
int schedule_compute(const struct schedule_query *q, struct schedule_result *r,
		     struct ofc_error *err);
/* The algorithms schedule_compute knows by name (whether one applies to a
 * given fabric and collective, only schedule_compute tells). */
bool schedule_algorithm_known(const char *algo);
void schedule_result_free(struct schedule_result *r);

#endif
