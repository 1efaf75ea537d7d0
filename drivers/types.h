/* drivers/types.h — what other modules name of the drivers by value
 * without their API: a Calient switch's port map, which the fabric model
 * (controller/fabric/fabric.h) keeps per switch and includes only this.
 * drivers.h includes it. */
#ifndef OFC_DRIVERS_TYPES_H
#define OFC_DRIVERS_TYPES_H

#include <stdint.h>

/* How a Calient switch names the ports ofc numbers 1..N (docs/tl1.md):
 * port k is shelf.(first_slot + (k-1) / slot_ports).((k-1) % slot_ports + 1). */
struct tl1_port_map {
	uint32_t shelf, first_slot, slot_ports;
};
#define TL1_PORT_MAP_DEFAULT ((struct tl1_port_map){1, 1, 32})

#endif
