/* What export/'s message builders share (private to controller/export/):
 * setting an optional field with its has_ flag, and a message made in the
 * arena from its INIT. */
#ifndef OFC_EXPORT_INTERNAL_H
#define OFC_EXPORT_INTERNAL_H

#include "util/util.h"

#include <string.h>

#define SET(msg, field, value)                                                                     \
	do {                                                                                       \
		(msg)->has_##field = 1;                                                            \
		(msg)->field = (value);                                                            \
	} while (0)

/* NEW(a, Ofc__V1__X, OFC__V1__X__INIT): an initialised message in the arena */
#define NEW(a, type, ...)                                                                          \
	((type *)memcpy(arena_alloc((a), sizeof(type)), &(type)__VA_ARGS__, sizeof(type)))

#endif
