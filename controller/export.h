/* Private to controller/: building protobuf messages from the model. The
 * messages borrow the model's strings and live in the arena. */
#ifndef OFC_CONTROLLER_EXPORT_H
#define OFC_CONTROLLER_EXPORT_H

#include "controller/controller.h"
#include "proto/fabric.pb-c.h"
#include "proto/topology.pb-c.h"

Ofc__V1__Topology *topology_msg(struct arena *a, const struct graph *g, const struct topo_facts *f,
				const struct port_map *pm, bool edges);
Ofc__V1__Fabric *fabric_msg(struct arena *a, const struct fabric *f);

#endif
