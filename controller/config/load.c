/* YAML fabric configs, read with libyaml's document API and walked with one
 * table per mapping (after netplan's parse.c): each table entry names a key,
 * the handler that reads its value and where the value goes (an offsetof
 * into the struct being filled). cfg_process_mapping() walks any mapping with
 * any table, rejects unknown and duplicate keys, and reports missing ones.
 * Every error is raised on a YAML node and so names FILE:LINE:COL.
 *
 * Hostile input is bounded before the document is built: a pre-pass over
 * the event stream limits nesting depth and the size of the document with
 * its aliases expanded (so aliases that expand without bound, or refer to
 * themselves, are refused); the walk also counts the nodes it visits.
 *
 * This file reads: the size limit, the pre-pass, the document, and the
 * entry points (config_parse, config_parse_workload; fabric_open is
 * open.c's). The walk and the generic handlers are walk.c's, the tables
 * keys_*.c's (loader.h).
 */
#include "controller/config/loader.h"

#include <libgen.h>
#include <stdlib.h>
#include <string.h>

/* ---- syntax --------------------------------------------------------------- */

/* Line and column of a byte offset (reader errors carry only the offset). */
static void offset_to_mark(const char *text, size_t len, size_t off, unsigned *line, unsigned *col)
{
	*line = 1;
	*col = 1;
	for (size_t i = 0; i < off && i < len; i++) {
		if (text[i] == '\n') {
			(*line)++;
			*col = 1;
		} else if (((unsigned char)text[i] & 0xc0) != 0x80) {
			(*col)++;
		}
	}
}

static int yaml_failure(struct loader *L, yaml_parser_t *p)
{
	struct ofc_error *err = L->err;
	unsigned line, col;

	if (p->error == YAML_READER_ERROR) {
		offset_to_mark(L->text, L->len, p->problem_offset, &line, &col);
		return ofc_error_at(err, OFC_E_INPUT, L->file, line, col,
				    "not a text file: %s (byte 0x%02x at offset %zu)",
				    p->problem ? p->problem : "unreadable input",
				    p->problem_value >= 0 ? (unsigned)p->problem_value & 0xff : 0,
				    p->problem_offset);
	}
	if (p->error == YAML_MEMORY_ERROR)
		return ofc_error_at(err, OFC_E_INPUT, L->file, 1, 1, "out of memory parsing YAML");
	line = (unsigned)p->problem_mark.line + 1;
	col = (unsigned)p->problem_mark.column + 1;
	if (p->problem_mark.index < L->len && L->text[p->problem_mark.index] == '\t')
		return ofc_error_at(err, OFC_E_INPUT, L->file, line, col,
				    "tab character: YAML indentation must use spaces");
	if (p->context)
		return ofc_error_at(err, OFC_E_INPUT, L->file, line, col,
				    "YAML syntax error: %s %s (line %u, column %u)", p->problem,
				    p->context, (unsigned)p->context_mark.line + 1,
				    (unsigned)p->context_mark.column + 1);
	return ofc_error_at(err, OFC_E_INPUT, L->file, line, col, "YAML syntax error: %s",
			    p->problem ? p->problem : "unknown");
}

/* Anchors seen by the pre-pass: name -> nodes the anchored subtree expands
 * to (aliases inside it expanded), or OPEN while it is being parsed. */
#define OPEN UINT64_MAX

struct anchors {
	char **names;
	uint64_t *size;
	size_t cap, used;
};

static size_t anchor_slot(const struct anchors *a, const char *name)
{
	uint64_t h = 1469598103934665603ull;

	for (const unsigned char *p = (const unsigned char *)name; *p; p++)
		h = (h ^ *p) * 1099511628211ull;
	size_t i = (size_t)h & (a->cap - 1);
	while (a->names[i] && strcmp(a->names[i], name) != 0)
		i = (i + 1) & (a->cap - 1);
	return i;
}

static void anchor_set(struct anchors *a, const char *name, uint64_t size)
{
	if ((a->used + 1) * 2 > a->cap) {
		struct anchors g = {.cap = a->cap ? a->cap * 2 : 64};

		g.names = xcalloc(g.cap, sizeof(char *));
		g.size = xcalloc(g.cap, sizeof(uint64_t));
		for (size_t i = 0; i < a->cap; i++)
			if (a->names[i]) {
				size_t j = anchor_slot(&g, a->names[i]);

				g.names[j] = a->names[i];
				g.size[j] = a->size[i];
			}
		g.used = a->used;
		free(a->names);
		free(a->size);
		*a = g;
	}
	size_t i = anchor_slot(a, name);
	if (!a->names[i]) {
		a->names[i] = xstrdup(name);
		a->used++;
	}
	a->size[i] = size; /* YAML lets an anchor be redefined; the latest wins */
}

static bool anchor_get(const struct anchors *a, const char *name, uint64_t *size)
{
	if (!a->cap)
		return false;
	size_t i = anchor_slot(a, name);
	if (!a->names[i])
		return false;
	*size = a->size[i];
	return true;
}

static void anchors_free(struct anchors *a)
{
	for (size_t i = 0; i < a->cap; i++)
		free(a->names[i]);
	free(a->names);
	free(a->size);
}

static int mark_error(struct loader *L, yaml_mark_t m, const char *fmt, ...) OFC_PRINTF(3, 4);
static int mark_error(struct loader *L, yaml_mark_t m, const char *fmt, ...)
{
	va_list ap;

	L->err->code = OFC_E_INPUT;
	snprintf(L->err->file, sizeof(L->err->file), "%s", L->file);
	L->err->line = (unsigned)m.line + 1;
	L->err->col = (unsigned)m.column + 1;
	va_start(ap, fmt);
	vsnprintf(L->err->msg, sizeof(L->err->msg), fmt, ap);
	va_end(ap);
	return -1;
}

/* Event pre-pass: syntax, nesting depth, one document, not empty, and the
 * size of the document with every alias expanded. libyaml's loader shares
 * aliased nodes instead of copying them, so a small file can describe an
 * exponentially large tree (or a cycle: "&a [*a]"); anything that walks it
 * would blow up. The pre-pass computes the expanded size from the events and
 * refuses the file before any tree is built. */
static int prepass(struct loader *L)
{
	struct {
		uint64_t count; /* nodes in this collection so far, expanded */
		char *anchor;
	} stack[CONFIG_MAX_DEPTH + 1];
	struct anchors anchors = {0};
	uint64_t total = 0;
	yaml_parser_t p;
	yaml_event_t ev;
	int depth = 0, docs = 0, rc = 0;
	bool done = false;

	yaml_parser_initialize(&p);
	yaml_parser_set_input_string(&p, (const unsigned char *)L->text, L->len);
	while (!done) {
		uint64_t add = 0;
		const char *anchor = NULL;

		if (!yaml_parser_parse(&p, &ev)) {
			rc = yaml_failure(L, &p);
			break;
		}
		switch (ev.type) {
		case YAML_SEQUENCE_START_EVENT:
		case YAML_MAPPING_START_EVENT:
			if (depth + 1 > CONFIG_MAX_DEPTH) {
				rc = mark_error(L, ev.start_mark,
						"nested too deeply (limit %d levels)",
						CONFIG_MAX_DEPTH);
				done = true;
				break;
			}
			anchor = ev.type == YAML_SEQUENCE_START_EVENT
				     ? (const char *)ev.data.sequence_start.anchor
				     : (const char *)ev.data.mapping_start.anchor;
			stack[depth].count = 1;
			stack[depth].anchor = anchor ? xstrdup(anchor) : NULL;
			if (anchor)
				anchor_set(&anchors, anchor, OPEN);
			depth++;
			break;
		case YAML_SEQUENCE_END_EVENT:
		case YAML_MAPPING_END_EVENT:
			depth--;
			add = stack[depth].count;
			if (stack[depth].anchor) {
				anchor_set(&anchors, stack[depth].anchor, add);
				free(stack[depth].anchor);
			}
			break;
		case YAML_SCALAR_EVENT:
			add = 1;
			if (ev.data.scalar.anchor)
				anchor_set(&anchors, (const char *)ev.data.scalar.anchor, 1);
			break;
		case YAML_ALIAS_EVENT: {
			const char *name = (const char *)ev.data.alias.anchor;

			if (!anchor_get(&anchors, name, &add)) {
				rc =
				    mark_error(L, ev.start_mark, "alias '*%s' has no anchor", name);
				done = true;
			} else if (add == OPEN) {
				rc = mark_error(L, ev.start_mark,
						"alias '*%s' refers to a node that contains it",
						name);
				done = true;
			}
			break;
		}
		case YAML_DOCUMENT_START_EVENT:
			if (++docs > 1) {
				rc = mark_error(L, ev.start_mark,
						"more than one YAML document; a config is one");
				done = true;
			}
			break;
		case YAML_STREAM_END_EVENT:
			done = true;
			break;
		default:
			break;
		}
		if (add && rc == 0) {
			uint64_t *into = depth ? &stack[depth - 1].count : &total;

			*into =
			    *into + add > CONFIG_MAX_NODES ? CONFIG_MAX_NODES + 1ull : *into + add;
			if (*into > CONFIG_MAX_NODES) {
				rc = mark_error(L, ev.start_mark,
						"document too large: more than %u nodes once YAML "
						"aliases are expanded",
						CONFIG_MAX_NODES);
				done = true;
			}
		}
		yaml_event_delete(&ev);
	}
	while (depth > 0)
		free(stack[--depth].anchor);
	anchors_free(&anchors);
	yaml_parser_delete(&p);
	if (rc == 0 && docs == 0)
		rc = ofc_error_at(L->err, OFC_E_INPUT, L->file, 1, 1,
				  "empty configuration: expected a mapping with name, hosts, ...");
	return rc;
}

/* The size limit, the event pre-pass, then the document into L->doc. */
static int load_document(struct loader *L)
{
	yaml_parser_t p;
	int rc;

	if (L->len > CONFIG_MAX_BYTES)
		return ofc_error_at(L->err, OFC_E_INPUT, L->file, 1, 1,
				    "file too large (%zu bytes; limit %u)", L->len,
				    CONFIG_MAX_BYTES);
	if (prepass(L) < 0)
		return -1;
	yaml_parser_initialize(&p);
	yaml_parser_set_input_string(&p, (const unsigned char *)L->text, L->len);
	if (!yaml_parser_load(&p, &L->doc)) {
		rc = yaml_failure(L, &p);
		yaml_parser_delete(&p);
		return rc;
	}
	yaml_parser_delete(&p);
	return 0;
}

int config_parse(const char *file, const char *text, size_t len, struct fabric **out,
		 struct ofc_error *err)
{
	struct loader L = {.file = file, .text = text, .len = len, .err = err};
	yaml_node_t *root;
	struct fabric *f;
	int rc;

	*out = NULL;
	if (load_document(&L) < 0)
		return -1;

	f = xcalloc(1, sizeof(*f));
	f->file = xstrdup(file);
	{
		char *copy = xstrdup(file);
		f->dir = xstrdup(strcmp(file, "-") == 0 ? "." : dirname(copy));
		free(copy);
	}
	L.fab = f;
	root = yaml_document_get_root_node(&L.doc);
	if (!root || (root->type == YAML_SCALAR_NODE && root->data.scalar.length == 0 &&
		      root->data.scalar.style == YAML_PLAIN_SCALAR_STYLE)) {
		rc = ofc_error_at(err, OFC_E_INPUT, file,
				  root ? (unsigned)root->start_mark.line + 1 : 1, 1,
				  "empty configuration: expected a mapping with name, hosts, ...");
	} else if (root->type != YAML_MAPPING_NODE) {
		rc = cfg_node_error(&L, root,
				    "a config must be a mapping with name, hosts, ...; this is %s",
				    cfg_type_name(root));
	} else {
		rc = cfg_process_mapping(&L, root, cfg_fabric_keys, f, "the config");
	}
	yaml_document_delete(&L.doc);
	if (rc < 0) {
		fabric_free(f);
		return -1;
	}
	*out = f;
	return 0;
}

int config_load(const char *path, struct fabric **out, struct ofc_error *err)
{
	char *text;
	size_t len;
	int rc;

	*out = NULL;
	if (read_file(path, CONFIG_MAX_BYTES, &text, &len, err) < 0)
		return -1;
	rc = config_parse(path, text, len, out, err);
	free(text);
	return rc;
}

int config_parse_workload(const char *file, const char *text, size_t len, struct workload *w,
			  struct ofc_error *err)
{
	struct loader L = {.file = file, .text = text, .len = len, .err = err};
	struct fabric holder = {.file = (char *)file};
	yaml_node_t *root;
	int rc;

	memset(w, 0, sizeof(*w));
	if (load_document(&L) < 0)
		return -1;
	L.fab = &holder;
	root = yaml_document_get_root_node(&L.doc);
	if (!root || root->type != YAML_MAPPING_NODE) {
		rc = ofc_error_at(err, OFC_E_INPUT, file,
				  root ? (unsigned)root->start_mark.line + 1 : 1, 1,
				  "a workload file is a mapping with phases, groups, ...");
	} else {
		char *copy = xstrdup(file);

		w->present = true;
		w->file = xstrdup(file);
		w->dir = xstrdup(strcmp(file, "-") == 0 ? "." : dirname(copy));
		free(copy);
		rc = cfg_process_mapping(&L, root, cfg_workload_keys, w, "the workload");
	}
	yaml_document_delete(&L.doc);
	if (rc < 0)
		workload_free(w);
	return rc;
}

int config_load_workload(const char *path, struct workload *w, struct ofc_error *err)
{
	char *text;
	size_t len;
	int rc;

	memset(w, 0, sizeof(*w));
	if (read_file(path, CONFIG_MAX_BYTES, &text, &len, err) < 0)
		return -1;
	rc = config_parse_workload(path, text, len, w, err);
	free(text);
	return rc;
}
