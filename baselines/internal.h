/* Private to baselines/: Swing's peers (swing.c), which the white-box unit
 * tests check against the paper's tables. */
#ifndef OFC_BASELINES_INTERNAL_H
#define OFC_BASELINES_INTERNAL_H

#include "baselines/baselines.h"

/* rho(s) = sum_{i=0..s} (-2)^i (Eq. 2). */
int64_t swing_rho(uint32_t s);

/* Swing's peer of r at step s of collective c (of 2D, c >= D mirrored) on
 * torus dims d[0..D-1]. */
uint32_t swing_peer(const uint32_t *dims, uint32_t D, uint32_t c, uint32_t r, uint32_t s);

#endif
