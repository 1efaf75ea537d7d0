/* Private to controller/config/: what validation calls in its own folder. */
#ifndef OFC_CONTROLLER_CONFIG_INTERNAL_H
#define OFC_CONTROLLER_CONFIG_INTERNAL_H

#include "controller/config/config.h"

/* Check ring r's lightpaths and resolve their ends (called by validation). */
int ring_check_lightpaths(struct fabric *f, uint32_t r, struct ofc_error *err);

#endif
