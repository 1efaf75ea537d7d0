/* Any protobuf-c message as JSON, walked through its descriptor, so the
 * JSON ofc prints is by construction the same data as the protobuf it
 * writes. Field names are the .proto names; enums print as their names;
 * 64-bit integers print as numbers; map fields print as objects; only
 * fields that are present are printed. */
#include "controller/export/export.h"

#include <errno.h>
#include <json-c/json.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static const void *at_off(const void *msg, unsigned off)
{
	return (const char *)msg + off;
}

static void members(struct json_writer *w, const ProtobufCMessage *m, bool summary, bool flat,
		    const char *const *skip);

/* One value; a message's as an object (summary: empty lists left out). */
static void scalar(struct json_writer *w, const ProtobufCFieldDescriptor *fd, const void *p,
		   bool summary)
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
		const ProtobufCBinaryData *b = p;
		char *e = b64_encode(b->data, b->len);

		jw_str(w, e);
		free(e);
		break;
	}
	case PROTOBUF_C_TYPE_MESSAGE: {
		const ProtobufCMessage *m = *(const ProtobufCMessage *const *)p;

		if (m) {
			jw_obj_begin(w);
			members(w, m, summary, false, NULL);
			jw_obj_end(w);
		} else {
			jw_null(w);
		}
		break;
	}
	}
}

size_t pb_type_size(ProtobufCType t)
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

static bool skipped(const char *name, const char *const *skip)
{
	for (; skip && *skip; skip++)
		if (strcmp(*skip, name) == 0)
			return true;
	return false;
}

/* m's fields as members of the object w has open: all of them (empty
 * lists too), or (summary) empty lists left out, at every depth; flat:
 * but those named in skip, and a map's entries as members themselves. */
static void members(struct json_writer *w, const ProtobufCMessage *m, bool summary, bool flat,
		    const char *const *skip)
{
	const ProtobufCMessageDescriptor *d = m->descriptor;

	for (unsigned i = 0; i < d->n_fields; i++) {
		const ProtobufCFieldDescriptor *fd = &d->fields[i];

		if (flat && skipped(fd->name, skip))
			continue;
		if (fd->label == PROTOBUF_C_LABEL_REPEATED) {
			size_t n = *(const size_t *)at_off(m, fd->quantifier_offset);
			const char *arr = *(const char *const *)at_off(m, fd->offset);
			size_t sz = pb_type_size(fd->type);

			if (summary && !n)
				continue;
			if (flat && is_map_entry(fd)) {
				const ProtobufCMessageDescriptor *md = fd->descriptor;

				for (size_t k = 0; k < n; k++) {
					const ProtobufCMessage *e =
					    ((const ProtobufCMessage *const *)arr)[k];
					const char *key =
					    *(char *const *)at_off(e, md->fields[0].offset);

					jw_key(w, key ? key : "");
					scalar(w, &md->fields[1], at_off(e, md->fields[1].offset),
					       summary);
				}
				continue;
			}
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
					scalar(w, &md->fields[1], at_off(e, md->fields[1].offset),
					       summary);
				}
				jw_obj_end(w);
				continue;
			}
			jw_arr_begin(w);
			for (size_t k = 0; k < n; k++)
				scalar(w, fd, arr + k * sz, summary);
			jw_arr_end(w);
			continue;
		}
		if (!present(m, fd))
			continue;
		jw_key(w, fd->name);
		scalar(w, fd, at_off(m, fd->offset), summary);
	}
}

void pb_write_json(struct json_writer *w, const ProtobufCMessage *m)
{
	jw_obj_begin(w);
	members(w, m, false, false, NULL);
	jw_obj_end(w);
}

void pb_write_json_flat(struct json_writer *w, const ProtobufCMessage *m, const char *const *skip)
{
	members(w, m, true, true, skip);
}

/* ---- JSON in -----------------------------------------------------------------
 * The network API's request bodies and query strings, into any protobuf-c
 * message through its descriptor: JSON names are the .proto field names,
 * enums their value names (or numbers), 64-bit integers numbers or decimal
 * strings, repeated fields arrays, null an absent field. Anything else is an
 * error naming the field's path: an unknown field, a wrong type, a number
 * out of range, two members of one oneof, a NUL byte in a string, bytes
 * fields (no request has one). json-c parses; the tokener's depth is
 * bounded, and the caller bounds the text. Every part of the message is
 * malloc'd, so protobuf_c_message_free_unpacked(m, NULL) frees it. */
#define JSON_MAX_DEPTH 32

struct jdec {
	bool strings; /* query strings: scalars come as text */
	struct ofc_error *err;
};

static int jfail(struct jdec *j, const char *path, const char *fmt, ...) OFC_PRINTF(3, 4);
static int jfail(struct jdec *j, const char *path, const char *fmt, ...)
{
	char msg[300];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return ofc_error_set(j->err, OFC_E_INPUT, "%s%s%s", path && *path ? path : "",
			     path && *path ? ": " : "", msg);
}

static const char *jtype(json_object *o)
{
	return json_type_to_name(json_object_get_type(o));
}

/* An integer from a JSON number or a decimal string (or any scalar's text
 * in query strings), within [min, max]. */
static int jint(struct jdec *j, const char *path, json_object *o, bool is_signed, int64_t min,
		uint64_t max, void *out, size_t width)
{
	int64_t s = 0;
	uint64_t u = 0;
	bool neg = false;

	if (json_object_is_type(o, json_type_int)) {
		s = json_object_get_int64(o);
		neg = s < 0;
		if (neg)
			u = 0;
		else if (s == INT64_MAX)
			u = json_object_get_uint64(o);
		else
			u = (uint64_t)s;
	} else if (json_object_is_type(o, json_type_string)) {
		const char *t = json_object_get_string(o);
		char *end;

		errno = 0;
		if (*t == '-') {
			neg = true;
			s = strtoll(t, &end, 10);
		} else {
			u = strtoull(t, &end, 10);
		}
		if (!*t || *end || errno || (*t != '-' && (*t < '0' || *t > '9')))
			return jfail(j, path, "'%.40s' is not an integer", t);
	} else {
		return jfail(j, path, "expected an integer, not %s", jtype(o));
	}
	if (neg ? !is_signed || s < min : u > max)
		return jfail(j, path, "out of range (%lld..%llu)", (long long)min,
			     (unsigned long long)max);
	if (width == 4) {
		uint32_t v = neg ? (uint32_t)(int32_t)s : (uint32_t)u;
		memcpy(out, &v, 4);
	} else {
		uint64_t v = neg ? (uint64_t)s : u;
		memcpy(out, &v, 8);
	}
	return 0;
}

static int decode_msg(struct jdec *j, const char *path, const ProtobufCMessageDescriptor *d,
		      json_object *o, ProtobufCMessage **out);

/* One value of field fd (an element of it, when repeated) into p. */
static int decode_value(struct jdec *j, const char *path, const ProtobufCFieldDescriptor *fd,
			json_object *o, void *p)
{
	switch (fd->type) {
	case PROTOBUF_C_TYPE_INT32:
	case PROTOBUF_C_TYPE_SINT32:
	case PROTOBUF_C_TYPE_SFIXED32:
		return jint(j, path, o, true, INT32_MIN, INT32_MAX, p, 4);
	case PROTOBUF_C_TYPE_UINT32:
	case PROTOBUF_C_TYPE_FIXED32:
		return jint(j, path, o, false, 0, UINT32_MAX, p, 4);
	case PROTOBUF_C_TYPE_INT64:
	case PROTOBUF_C_TYPE_SINT64:
	case PROTOBUF_C_TYPE_SFIXED64:
		return jint(j, path, o, true, INT64_MIN, INT64_MAX, p, 8);
	case PROTOBUF_C_TYPE_UINT64:
	case PROTOBUF_C_TYPE_FIXED64:
		return jint(j, path, o, false, 0, UINT64_MAX, p, 8);
	case PROTOBUF_C_TYPE_FLOAT:
	case PROTOBUF_C_TYPE_DOUBLE: {
		double v;

		if (json_object_is_type(o, json_type_double) ||
		    json_object_is_type(o, json_type_int)) {
			v = json_object_get_double(o);
		} else if (j->strings && json_object_is_type(o, json_type_string)) {
			const char *t = json_object_get_string(o);
			char *end;

			errno = 0;
			v = strtod(t, &end);
			if (!*t || *end || errno)
				return jfail(j, path, "'%.40s' is not a number", t);
		} else {
			return jfail(j, path, "expected a number, not %s", jtype(o));
		}
		if (fd->type == PROTOBUF_C_TYPE_FLOAT)
			*(float *)p = (float)v;
		else
			*(double *)p = v;
		return 0;
	}
	case PROTOBUF_C_TYPE_BOOL: {
		bool v;

		if (json_object_is_type(o, json_type_boolean)) {
			v = json_object_get_boolean(o);
		} else if (j->strings && json_object_is_type(o, json_type_string) &&
			   (!strcmp(json_object_get_string(o), "true") ||
			    !strcmp(json_object_get_string(o), "false"))) {
			v = !strcmp(json_object_get_string(o), "true");
		} else {
			return jfail(j, path, "expected true or false, not %s", jtype(o));
		}
		*(protobuf_c_boolean *)p = v;
		return 0;
	}
	case PROTOBUF_C_TYPE_ENUM: {
		const ProtobufCEnumDescriptor *ed = fd->descriptor;
		const ProtobufCEnumValue *v = NULL;

		if (json_object_is_type(o, json_type_string))
			v = protobuf_c_enum_descriptor_get_value_by_name(ed,
									 json_object_get_string(o));
		else if (json_object_is_type(o, json_type_int))
			v = protobuf_c_enum_descriptor_get_value(ed, json_object_get_int(o));
		else
			return jfail(j, path, "expected one of %s's names, not %s", ed->short_name,
				     jtype(o));
		if (!v)
			return jfail(j, path, "not a value of %s", ed->short_name);
		*(int *)p = v->value;
		return 0;
	}
	case PROTOBUF_C_TYPE_STRING: {
		if (!json_object_is_type(o, json_type_string))
			return jfail(j, path, "expected a string, not %s", jtype(o));
		const char *t = json_object_get_string(o);
		if (strlen(t) != (size_t)json_object_get_string_len(o))
			return jfail(j, path, "holds a NUL byte");
		*(char **)p = xstrdup(t);
		return 0;
	}
	case PROTOBUF_C_TYPE_MESSAGE:
		return decode_msg(j, path, fd->descriptor, o, (ProtobufCMessage **)p);
	case PROTOBUF_C_TYPE_BYTES: {
		if (!json_object_is_type(o, json_type_string))
			return jfail(j, path, "expected a base64 string, not %s", jtype(o));
		ProtobufCBinaryData *b = p;

		/* protobuf's JSON mapping: standard or URL-safe, padded or not
		 * (the string is bounded by the JSON read) */
		if (b64_decode(json_object_get_string(o), (size_t)json_object_get_string_len(o),
			       B64_URL_SAFE | B64_UNPADDED, &b->data, &b->len) < 0)
			return jfail(j, path, "not base64 (standard or URL-safe, padded or not)");
		return 0;
	}
	default:
		return jfail(j, path, "this field's type is not taken as JSON");
	}
}

static int decode_field(struct jdec *j, const char *path, ProtobufCMessage *m,
			const ProtobufCFieldDescriptor *fd, json_object *v)
{
	char *at = (char *)m + fd->offset;

	if (fd->label == PROTOBUF_C_LABEL_REPEATED) {
		size_t *n = (size_t *)((char *)m + fd->quantifier_offset);
		size_t sz = pb_type_size(fd->type), len;
		char *arr;

		if (!json_object_is_type(v, json_type_array))
			return jfail(j, path, "expected an array, not %s", jtype(v));
		len = json_object_array_length(v);
		arr = xcalloc(len + 1, sz);
		*(char **)at = arr;
		for (size_t k = 0; k < len; k++) {
			char sub[200];

			snprintf(sub, sizeof(sub), "%.150s[%zu]", path, k);
			if (decode_value(j, sub, fd, json_object_array_get_idx(v, k),
					 arr + k * sz) < 0) {
				/* What the element holds so far is not counted: free it. */
				void **el = (void **)(arr + k * sz);

				if (fd->type == PROTOBUF_C_TYPE_MESSAGE && *el)
					protobuf_c_message_free_unpacked(*el, NULL);
				else if (fd->type == PROTOBUF_C_TYPE_STRING)
					free(*el);
				*el = NULL;
				return -1;
			}
			(*n)++;
		}
		return 0;
	}
	/* A oneof's member is the message's (freed with it) only with its
	 * case set: set first, so a member that fails half way is freed. */
	if (fd->flags & PROTOBUF_C_FIELD_FLAG_ONEOF)
		*(uint32_t *)((char *)m + fd->quantifier_offset) = fd->id;
	if (decode_value(j, path, fd, v, at) < 0)
		return -1;
	if (!(fd->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) && fd->label == PROTOBUF_C_LABEL_OPTIONAL &&
	    fd->type != PROTOBUF_C_TYPE_STRING && fd->type != PROTOBUF_C_TYPE_MESSAGE)
		*(protobuf_c_boolean *)((char *)m + fd->quantifier_offset) = 1;
	return 0;
}

static int decode_msg(struct jdec *j, const char *path, const ProtobufCMessageDescriptor *d,
		      json_object *o, ProtobufCMessage **out)
{
	ProtobufCMessage *m = xcalloc(1, d->sizeof_message);
	struct json_object_iterator it, end;

	d->message_init(m);
	*out = m;
	if (!json_object_is_type(o, json_type_object))
		return jfail(j, path, "expected an object (%s), not %s", d->short_name, jtype(o));
	it = json_object_iter_begin(o);
	end = json_object_iter_end(o);
	for (; !json_object_iter_equal(&it, &end); json_object_iter_next(&it)) {
		const char *key = json_object_iter_peek_name(&it);
		json_object *v = json_object_iter_peek_value(&it);
		const ProtobufCFieldDescriptor *fd =
		    protobuf_c_message_descriptor_get_field_by_name(d, key);
		char sub[200];

		snprintf(sub, sizeof(sub), "%.120s%s%.64s", path, *path ? "." : "", key);
		if (!fd) {
			struct strbuf names = STRBUF_INIT;

			for (unsigned i = 0; i < d->n_fields && i < 24; i++)
				sb_printf(&names, "%s%s", i ? ", " : "", d->fields[i].name);
			jfail(j, sub, "unknown field of %s (it has %s)", d->short_name, names.buf);
			sb_free(&names);
			return -1;
		}
		if (!v || json_object_is_type(v, json_type_null))
			continue;
		if ((fd->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) &&
		    *(uint32_t *)((char *)m + fd->quantifier_offset)) {
			uint32_t was = *(uint32_t *)((char *)m + fd->quantifier_offset);
			const ProtobufCFieldDescriptor *o2 =
			    protobuf_c_message_descriptor_get_field(d, was);

			return jfail(j, sub, "%s and %s are one of: give one", o2 ? o2->name : "?",
				     fd->name);
		}
		if (decode_field(j, sub, m, fd, v) < 0)
			return -1;
	}
	return 0;
}

int pb_read_json_object(const ProtobufCMessageDescriptor *d, void *obj, bool strings,
			ProtobufCMessage **out, struct ofc_error *err)
{
	struct jdec j = {.strings = strings, .err = err};

	*out = NULL;
	if (decode_msg(&j, "", d, obj, out) < 0) {
		if (*out)
			protobuf_c_message_free_unpacked(*out, NULL);
		*out = NULL;
		return -1;
	}
	return 0;
}

int pb_read_json(const ProtobufCMessageDescriptor *d, const char *text, size_t len,
		 ProtobufCMessage **out, struct ofc_error *err)
{
	struct json_tokener *tok = json_tokener_new_ex(JSON_MAX_DEPTH);
	json_object *o;
	int rc;

	*out = NULL;
	if (!tok)
		return ofc_error_set(err, OFC_E_RUNTIME, "out of memory");
	if (len > INT32_MAX) {
		json_tokener_free(tok);
		return ofc_error_set(err, OFC_E_INPUT, "a JSON text of %zu bytes is too long", len);
	}
	o = json_tokener_parse_ex(tok, text, (int)len);
	if (json_tokener_get_error(tok) != json_tokener_success || !o) {
		enum json_tokener_error e = json_tokener_get_error(tok);

		rc = ofc_error_set(err, OFC_E_INPUT, "not JSON: %s at byte %zu",
				   e == json_tokener_continue ? "the text ends early"
							      : json_tokener_error_desc(e),
				   json_tokener_get_parse_end(tok));
		json_object_put(o);
		json_tokener_free(tok);
		return rc;
	}
	/* Only white space may follow the value. */
	for (size_t i = json_tokener_get_parse_end(tok); i < len; i++)
		if (!strchr(" \t\r\n", text[i])) {
			rc = ofc_error_set(err, OFC_E_INPUT,
					   "not JSON: text after the value at byte %zu", i);
			json_object_put(o);
			json_tokener_free(tok);
			return rc;
		}
	json_tokener_free(tok);
	rc = pb_read_json_object(d, o, false, out, err);
	json_object_put(o);
	return rc;
}
