/* What export/'s files share (private to controller/export/): setting an
 * optional field with its has_ flag, a message made in the arena from its
 * INIT, the protobuf wire walker and a made schedule's steps packed. */
#ifndef OFC_EXPORT_INTERNAL_H
#define OFC_EXPORT_INTERNAL_H

#include "util/util.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define SET(msg, field, value)                                                                     \
	do {                                                                                       \
		(msg)->has_##field = 1;                                                            \
		(msg)->field = (value);                                                            \
	} while (0)

/* NEW(a, Ofc__V1__X, OFC__V1__X__INIT): an initialised message in the arena */
#define NEW(a, type, ...)                                                                          \
	((type *)memcpy(arena_alloc((a), sizeof(type)), &(type)__VA_ARGS__, sizeof(type)))

/* protobuf.c's wire walker: the field at *p (before end), *p moved past
 * it; -1 when it is truncated or of a wire type protobuf does not have. */
struct pb_field {
	uint32_t num;
	unsigned type;
	const uint8_t *start; /* the key */
	const uint8_t *val;   /* type 2: the bytes */
	size_t len;
	uint64_t v; /* type 0 */
};
int pb_next(const uint8_t **p, const uint8_t *end, struct pb_field *f);

/* A stream's steps as they stand in a packed Schedule, each a `steps`
 * field holding one Step, the bytes protobuf-c packs for them (protobuf.c):
 * counted, then packed into exactly that many at buf (-1: the two passes
 * disagree), each step made as it is written and PB_CHUNK transfers'
 * messages held. */
struct sched_stream;
uint64_t pb_steps_size(const struct sched_stream *st);
int pb_steps_pack(const struct sched_stream *st, uint8_t *buf, uint64_t len);

#endif
