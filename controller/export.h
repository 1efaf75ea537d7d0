/* Private to controller/: building protobuf messages from the model. The
 * messages borrow the model's strings and live in the arena. */
#ifndef OFC_CONTROLLER_EXPORT_H
#define OFC_CONTROLLER_EXPORT_H

#include "controller/controller.h"
#include "proto/fabric.pb-c.h"
#include "proto/schedule.pb-c.h"
#include "proto/topology.pb-c.h"

Ofc__V1__Topology *topology_msg(struct arena *a, const struct graph *g, const struct topo_facts *f,
				const struct port_map *pm, bool edges);
Ofc__V1__Fabric *fabric_msg(struct arena *a, const struct fabric *f);

/* ofc.v1.Schedule in pieces that protobuf merges when concatenated (as
 * schedule_write_pb writes them): the header with every figure and no
 * steps, one message per step, and (schedule_api.c) the direct-connect
 * fields of a computed schedule: tau_b_fraction and the links used. */
Ofc__V1__Schedule *schedule_header_msg(struct arena *a, const struct schedule *s);
Ofc__V1__Schedule *schedule_step_msg(struct arena *a, const struct schedule *s, uint32_t t);
Ofc__V1__Schedule *schedule_extra_msg(struct arena *a, const struct schedule_result *r);
/* The same from its parts (f and links only on NIC ports; nlinks 0 else). */
Ofc__V1__Schedule *schedule_fabric_msg(struct arena *a, struct frac tau_b, const struct fabric *f,
				       const struct schedule_link *links, uint32_t nlinks);

#endif
