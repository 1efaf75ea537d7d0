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
/* --algo all: the fluid bound on r->g beside every outcome (certify.c),
 * in about as many seconds as the engines spent (at least 0.25 s, at
 * most 5 s). */
void direct_certify(struct schedule_result *r, const struct schedule_query *q, double spent);
/* The same for a WDM ring's comparison: LP 4.2 on the ring of F x W x
 * B_lambda per segment and direction (bandwidth only: retuning and O/E/O
 * come on top), the bound for any hop count. */
void ring_certify(struct schedule_result *r, const struct schedule_query *q, double spent);

/* OpTree's model of a config's ring for collective c of size-byte blocks
 * (0: the config's first collective of that kind, else its first
 * allgather's, else 4 MiB); a config without
 * mrrs_per_interface has one MRR per wavelength (controller/schedule/ring.c). */
struct optree_ring ring_optree_model(const struct fabric *f, const struct ring *ring,
				     enum sched_collective c, uint64_t size);

/* The fabric view (fabric_view.c). */
/* false (and an empty view) when the fabric has no wiring for g's nodes. */
bool fabric_view_init(const struct fabric *f, const struct graph *g, struct fabric_view *v);
void fabric_view_free(struct fabric_view *v);
/* Transfer lanes from positions among g's arcs to NIC ports. */
void fabric_view_to_nic(const struct fabric_view *v, const struct graph *g, struct schedule *s);
/* The links a schedule on NIC ports uses, in (host, port) order: the count,
 * with *links allocated (free it). */
uint32_t fabric_view_links(const struct fabric_view *v, const struct fabric *f,
			   const struct schedule *s, struct schedule_link **links);
void schedule_outcome_free(struct schedule_outcome *o);

#endif
