/* Any protobuf-c message as JSON, walked through its descriptor, so the
 * JSON ofc prints is by construction the same data as the protobuf it
 * writes. Field names are the .proto names; enums print as their names;
 * 64-bit integers print as numbers; map fields print as objects; only
 * fields that are present are printed. */
#include "controller/export/export.h"

#include <string.h>

static const void *at_off(const void *msg, unsigned off)
{
	return (const char *)msg + off;
}

static void scalar(struct json_writer *w, const ProtobufCFieldDescriptor *fd, const void *p)
{
	switch (fd->type) {
	case PROTOBUF_C_TYPE_INT32:
	case PROTOBUF_C_TYPE_SINT32:
	case PROTOBUF_C_TYPE_SFIXED32:
		jw_int(w, *(const int32_t *)p);
		break;
	case PROTOBUF_C_TYPE_UINT32:
	case PROTOBUF_C_TYPE_FIXED32:
		jw_uint(w, *(const uint32_t *)p);
		break;
	case PROTOBUF_C_TYPE_INT64:
	case PROTOBUF_C_TYPE_SINT64:
	case PROTOBUF_C_TYPE_SFIXED64:
		jw_int(w, *(const int64_t *)p);
		break;
	case PROTOBUF_C_TYPE_UINT64:
	case PROTOBUF_C_TYPE_FIXED64:
		jw_uint(w, *(const uint64_t *)p);
		break;
	case PROTOBUF_C_TYPE_FLOAT:
		jw_double(w, *(const float *)p);
		break;
	case PROTOBUF_C_TYPE_DOUBLE:
		jw_double(w, *(const double *)p);
		break;
	case PROTOBUF_C_TYPE_BOOL:
		jw_bool(w, *(const protobuf_c_boolean *)p);
		break;
	case PROTOBUF_C_TYPE_ENUM: {
		const ProtobufCEnumValue *v =
		    protobuf_c_enum_descriptor_get_value(fd->descriptor, *(const int *)p);
		if (v)
			jw_str(w, v->name);
		else
			jw_int(w, *(const int *)p);
		break;
	}
	case PROTOBUF_C_TYPE_STRING:
		jw_str(w, *(char *const *)p);
		break;
	case PROTOBUF_C_TYPE_BYTES: {
		static const char b64[] =
		    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
		const ProtobufCBinaryData *b = p;
		struct strbuf sb = STRBUF_INIT;

		for (size_t i = 0; i < b->len; i += 3) {
			uint32_t v = (uint32_t)b->data[i] << 16;
			size_t k = b->len - i;

			if (k > 1)
				v |= (uint32_t)b->data[i + 1] << 8;
			if (k > 2)
				v |= b->data[i + 2];
			sb_putc(&sb, b64[(v >> 18) & 63]);
			sb_putc(&sb, b64[(v >> 12) & 63]);
			sb_putc(&sb, k > 1 ? b64[(v >> 6) & 63] : '=');
			sb_putc(&sb, k > 2 ? b64[v & 63] : '=');
		}
		jw_str(w, sb.buf ? sb.buf : "");
		sb_free(&sb);
		break;
	}
	case PROTOBUF_C_TYPE_MESSAGE: {
		const ProtobufCMessage *m = *(const ProtobufCMessage *const *)p;

		if (m)
			pb_write_json(w, m);
		else
			jw_null(w);
		break;
	}
	}
}

static size_t type_size(ProtobufCType t)
{
	switch (t) {
	case PROTOBUF_C_TYPE_INT64:
	case PROTOBUF_C_TYPE_SINT64:
	case PROTOBUF_C_TYPE_SFIXED64:
	case PROTOBUF_C_TYPE_UINT64:
	case PROTOBUF_C_TYPE_FIXED64:
	case PROTOBUF_C_TYPE_DOUBLE:
		return 8;
	case PROTOBUF_C_TYPE_BOOL:
		return sizeof(protobuf_c_boolean);
	case PROTOBUF_C_TYPE_ENUM:
		return sizeof(int);
	case PROTOBUF_C_TYPE_STRING:
	case PROTOBUF_C_TYPE_MESSAGE:
		return sizeof(void *);
	case PROTOBUF_C_TYPE_BYTES:
		return sizeof(ProtobufCBinaryData);
	default:
		return 4;
	}
}

static bool is_map_entry(const ProtobufCFieldDescriptor *fd)
{
	const ProtobufCMessageDescriptor *md = fd->descriptor;
	size_t len;

	if (fd->type != PROTOBUF_C_TYPE_MESSAGE || !md || md->n_fields != 2)
		return false;
	len = strlen(md->name);
	return len > 5 && strcmp(md->name + len - 5, "Entry") == 0 &&
	       strcmp(md->fields[0].name, "key") == 0 && strcmp(md->fields[1].name, "value") == 0;
}

static bool present(const ProtobufCMessage *m, const ProtobufCFieldDescriptor *fd)
{
	const void *p = at_off(m, fd->offset);

	if (fd->flags & PROTOBUF_C_FIELD_FLAG_ONEOF)
		return *(const uint32_t *)at_off(m, fd->quantifier_offset) == fd->id;
	if (fd->label == PROTOBUF_C_LABEL_REQUIRED)
		return true;
	if (fd->type == PROTOBUF_C_TYPE_STRING || fd->type == PROTOBUF_C_TYPE_MESSAGE)
		return *(void *const *)p != NULL;
	if (fd->label == PROTOBUF_C_LABEL_OPTIONAL)
		return *(const protobuf_c_boolean *)at_off(m, fd->quantifier_offset);
	return true; /* proto3 singular: always printed */
}

void pb_write_json(struct json_writer *w, const ProtobufCMessage *m)
{
	const ProtobufCMessageDescriptor *d = m->descriptor;

	jw_obj_begin(w);
	for (unsigned i = 0; i < d->n_fields; i++) {
		const ProtobufCFieldDescriptor *fd = &d->fields[i];

		if (fd->label == PROTOBUF_C_LABEL_REPEATED) {
			size_t n = *(const size_t *)at_off(m, fd->quantifier_offset);
			const char *arr = *(const char *const *)at_off(m, fd->offset);
			size_t sz = type_size(fd->type);

			jw_key(w, fd->name);
			if (is_map_entry(fd)) {
				const ProtobufCMessageDescriptor *md = fd->descriptor;

				jw_obj_begin(w);
				for (size_t k = 0; k < n; k++) {
					const ProtobufCMessage *e =
					    ((const ProtobufCMessage *const *)arr)[k];
					const char *key =
					    *(char *const *)at_off(e, md->fields[0].offset);

					jw_key(w, key ? key : "");
					scalar(w, &md->fields[1], at_off(e, md->fields[1].offset));
				}
				jw_obj_end(w);
				continue;
			}
			jw_arr_begin(w);
			for (size_t k = 0; k < n; k++)
				scalar(w, fd, arr + k * sz);
			jw_arr_end(w);
			continue;
		}
		if (!present(m, fd))
			continue;
		jw_key(w, fd->name);
		scalar(w, fd, at_off(m, fd->offset));
	}
	jw_obj_end(w);
}
