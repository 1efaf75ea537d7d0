/* A degraded graph for the tests of degraded fabrics' bounds and schedules
 * (tests/unit/degrade.c): links and arcs failed at random, by a fixed
 * generator, so a seed gives the same graphs on every machine. */
#ifndef OFC_TESTS_UNIT_DEGRADE_H
#define OFC_TESTS_UNIT_DEGRADE_H

#include <stdint.h>

#include "topo/topo.h"

/* g less each link (both its arcs) with probability pl, then each arc left
 * with probability pa; *seed is the generator's state, advanced. NULL when
 * that leaves some node without a link in or out (no collective runs
 * there). The caller frees the graph. */
struct graph *degrade_at_random(const struct graph *g, double pl, double pa, uint64_t *seed);

#endif
