/* Strings in a request as they came over the wire. protobuf-c hands a
 * string field on as a C string, so one with a NUL byte in it is cut there
 * without a word: ReportFailure's "h0\0x" was taken as "h0".
 * The packed request is walked once more, by its descriptors, and any
 * string field holding a NUL byte is named, so the request is refused
 * instead of read as something shorter. */
#include "controller/ofcd/internal.h"

#include <string.h>

/* Deeper than any message of control.proto nests; a request that nests
 * further does not unpack either. */
#define WIRE_MAX_DEPTH 32

static bool varint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	*v = 0;
	for (unsigned shift = 0; shift < 64 && *p < end; shift += 7) {
		uint8_t b = *(*p)++;

		*v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return true;
	}
	return false;
}

static bool walk(const ProtobufCMessageDescriptor *d, const uint8_t *p, const uint8_t *end,
		 unsigned depth, const char **field)
{
	uint64_t key, n;

	if (depth > WIRE_MAX_DEPTH)
		return false;
	while (p < end) {
		if (!varint(&p, end, &key) || key >> 3 == 0 || key >> 3 > UINT32_MAX)
			return false;
		const ProtobufCFieldDescriptor *f =
		    protobuf_c_message_descriptor_get_field(d, (unsigned)(key >> 3));

		switch (key & 7) {
		case 0: /* varint */
			if (!varint(&p, end, &n))
				return false;
			break;
		case 1: /* 64 bits */
			if (end - p < 8)
				return false;
			p += 8;
			break;
		case 5: /* 32 bits */
			if (end - p < 4)
				return false;
			p += 4;
			break;
		case 2: /* length-delimited: strings, bytes, messages, packed */
			if (!varint(&p, end, &n) || n > (uint64_t)(end - p))
				return false;
			if (f && f->type == PROTOBUF_C_TYPE_STRING && memchr(p, 0, n)) {
				*field = f->name;
				return true;
			}
			if (f && f->type == PROTOBUF_C_TYPE_MESSAGE &&
			    walk(f->descriptor, p, p + n, depth + 1, field))
				return true;
			p += n;
			break;
		default: /* groups: protobuf-c refuses them */
			return false;
		}
	}
	return false;
}

bool wire_string_with_nul(const ProtobufCMessageDescriptor *d, const uint8_t *p, size_t len,
			  const char **field)
{
	*field = NULL;
	return walk(d, p, p + len, 0, field);
}

