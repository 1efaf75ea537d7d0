/* Private to controller/fabric/: the cross-connects the switches hold, read
 * as host-level arcs (in_place.c), which the renumbering searches over
 * (relabel_target.c) and ofcd's views show as a graph. */
#ifndef OFC_CONTROLLER_FABRIC_INTERNAL_H
#define OFC_CONTROLLER_FABRIC_INTERNAL_H

#include "controller/fabric/fabric.h"

/* The host-level arcs the switches hold: tails[a] -> heads[a], m of them;
 * prefer: port j of u -> v where a switch joins u's port j to v's port j
 * (circuits always join equal port numbers), UINT32_MAX elsewhere. */
struct current {
	uint32_t *tails, *heads, m;
	struct port_map prefer; /* n = f->nhosts, d as asked */
};
/* Read from actual[s] (switch s's read state, NULL when unknown), with
 * prefer over d ports a host; current_free frees it. */
void current_read(const struct fabric *f, const struct device_state *const *actual, uint32_t d,
		  struct current *cur);
void current_free(struct current *cur);

#endif
