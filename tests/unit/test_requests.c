/* The request table (controller/api) against what it stands for: each
 * row's message, field and case are the Request oneof's (the descriptor
 * says), its flags agree with each other, its route is found by its method
 * and path, and docs/control.md lists every kind in "Requests" and every
 * route in "The network API", and nothing the table lacks; ofcd's job
 * table has a row for every request whose handler queues a job, and for
 * no other. */
#include <ctype.h>
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "controller/api/api.h"
#include "controller/ofcd/internal.h"
#include "util/util.h"

#define DOC "docs/control.md"

/* A field of the body's message of that type and label, or fail. */
static void field_is(const struct api_request *k, const char *name, ProtobufCType type,
		     ProtobufCLabel label)
{
	const ProtobufCFieldDescriptor *f =
	    protobuf_c_message_descriptor_get_field_by_name(k->desc, name);

	if (!f || f->type != type || f->label != label)
		fail_msg("%s's tenant rule names %s, which is no field of that type", k->name,
			 name);
}

/* A row's tenant rule (what a tenant's request names): a tenant's kind
 * has one and no other kind does, and its fields are the body's. */
static void check_tenant_rule(const struct api_request *k)
{
	const struct api_tenant_rule *r = &k->tenant;

	assert_true(!(k->flags & (API_TENANT | API_HOST)) == (r->names == API_NAMES_NONE));
	/* a host's kind names its host, and only a host's kind does */
	assert_true(!(k->flags & API_HOST) == (r->names != API_NAMES_HOST));
	switch (r->names) {
	case API_NAMES_HOST:
		field_is(k, r->field, PROTOBUF_C_TYPE_STRING, PROTOBUF_C_LABEL_OPTIONAL);
		assert_non_null(r->needs);
		assert_null(r->alias);
		assert_null(r->hosts);
		assert_null(r->absent);
		break;
	case API_NAMES_PARTITION:
		field_is(k, r->field, PROTOBUF_C_TYPE_STRING, PROTOBUF_C_LABEL_OPTIONAL);
		if (r->alias)
			field_is(k, r->alias, PROTOBUF_C_TYPE_STRING, PROTOBUF_C_LABEL_OPTIONAL);
		if (r->hosts)
			field_is(k, r->hosts, PROTOBUF_C_TYPE_STRING, PROTOBUF_C_LABEL_REPEATED);
		break;
	case API_NAMES_TICKET:
		field_is(k, r->field, PROTOBUF_C_TYPE_UINT64, PROTOBUF_C_LABEL_OPTIONAL);
		assert_non_null(r->needs); /* (a tenant cancels nothing by another key) */
		assert_null(r->alias);
		assert_null(r->hosts);
		assert_null(r->absent);
		break;
	default: /* names nothing */
		assert_null(r->field);
		assert_null(r->alias);
		assert_null(r->hosts);
		assert_null(r->needs);
		assert_null(r->absent);
	}
}

static void test_rows_are_the_oneof(void **state)
{
	const ProtobufCMessageDescriptor *rd = &ofc__v1__request__descriptor;
	size_t in_oneof = 0;

	(void)state;
	for (size_t i = 0; i < API_NKINDS; i++) {
		const struct api_request *k = &api_requests[i];
		const ProtobufCFieldDescriptor *f =
		    protobuf_c_message_descriptor_get_field_by_name(rd, k->field);

		assert_int_equal(k->kind, i);
		assert_non_null(f);
		assert_true(f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF);
		assert_int_equal(f->id, k->body);
		assert_ptr_equal(f->descriptor, k->desc);
		assert_string_equal(k->desc->short_name, k->name);
		assert_ptr_equal(api_request_of(k->body), k);
		/* a read changes nothing; whatever changes something is the
		 * leader's alone; a job's report is one of the three */
		assert_int_equal(!!(k->flags & API_READ) + !!(k->flags & API_MUTATION) +
				     !!(k->flags & API_REPORT),
				 1);
		assert_true(!(k->flags & API_MUTATION) || (k->flags & API_LEADER));
		assert_true(!(k->flags & API_LEADER) || (k->flags & (API_MUTATION | API_REPORT)));
		assert_ptr_equal(api_route(k->method, k->route), k);
		assert_ptr_equal(api_route(NULL, k->route), k);
		assert_string_equal(k->method, k->flags & API_READ ? "GET" : "POST");
		/* only a mutation is queued and run once per key */
		assert_true(!(k->flags & API_KEYED) || (k->flags & API_MUTATION));
		/* a stream asked by a field: an optional bool of the body */
		if (k->stream_if) {
			const ProtobufCFieldDescriptor *sf =
			    protobuf_c_message_descriptor_get_field_by_name(k->desc, k->stream_if);

			assert_true(k->flags & API_STREAM);
			assert_non_null(sf);
			assert_int_equal(sf->type, PROTOBUF_C_TYPE_BOOL);
			assert_int_equal(sf->label, PROTOBUF_C_LABEL_OPTIONAL);
		}
		check_tenant_rule(k);
		/* the word is the field's, in dashes */
		for (size_t c = 0; k->field[c]; c++)
			assert_int_equal(k->word[c], k->field[c] == '_' ? '-' : k->field[c]);
	}
	for (unsigned i = 0; i < rd->n_fields; i++)
		in_oneof += !!(rd->fields[i].flags & PROTOBUF_C_FIELD_FLAG_ONEOF);
	assert_int_equal(in_oneof, API_NKINDS); /* a body without a row */
	assert_null(api_request_of(OFC__V1__REQUEST__BODY__NOT_SET));
	assert_null(api_route("GET", "/v1/apply"));
	assert_null(api_route(NULL, "/v1/call")); /* the gateway's own */
}

/* Which requests are answered as streams, from their rows: a Watch
 * always, a GetSchedule when it asks (`stream`), nothing else. */
static void test_streams(void **state)
{
	Ofc__V1__Request q = OFC__V1__REQUEST__INIT;
	Ofc__V1__Watch w = OFC__V1__WATCH__INIT;
	Ofc__V1__GetSchedule gs = OFC__V1__GET_SCHEDULE__INIT;
	Ofc__V1__GetState st = OFC__V1__GET_STATE__INIT;

	(void)state;
	assert_false(api_streams(&q)); /* no body */
	api_set_body(&q, &api_requests[API_WATCH], &w.base);
	assert_int_equal(q.body_case, OFC__V1__REQUEST__BODY_WATCH);
	assert_true(api_streams(&q));
	api_set_body(&q, &api_requests[API_GET_SCHEDULE], &gs.base);
	assert_ptr_equal(q.get_schedule, &gs);
	assert_false(api_streams(&q));
	gs.has_stream = gs.stream = 1;
	assert_true(api_streams(&q));
	api_set_body(&q, &api_requests[API_GET_STATE], &st.base);
	assert_false(api_streams(&q));
}

/* The first cells of the table rows under the heading `heading` in the
 * document: each cell's backquoted text, up to the first of `stop`. */
static size_t doc_cells(const char *doc, const char *heading, const char *stop, char out[][64],
			size_t max)
{
	const char *p = strstr(doc, heading);
	size_t n = 0;

	assert_non_null(p);
	p = strchr(p + 1, '\n');
	while (p && p[1] && !(p[1] == '#' && p[2] == '#')) {
		p++;
		if (strncmp(p, "| `", 3) == 0 && n < max) {
			size_t len = strcspn(p + 3, stop);

			snprintf(out[n++], 64, "%.*s", (int)(len < 63 ? len : 63), p + 3);
		}
		p = strchr(p, '\n');
	}
	return n;
}

static char *read_doc(void)
{
	FILE *f = fopen(DOC, "r");
	char *buf = calloc(1, 1u << 20);
	size_t n;

	if (!f)
		fail_msg("%s: cannot open it (run from the source tree)", DOC);
	n = fread(buf, 1, (1u << 20) - 1, f);
	fclose(f);
	buf[n] = 0;
	return buf;
}

static void test_docs_list_every_request(void **state)
{
	char *doc = read_doc();
	char cells[64][64];
	size_t n = doc_cells(doc, "\n## Requests\n", " {`", cells, 64);

	(void)state;
	for (size_t i = 0; i < API_NKINDS; i++) {
		bool found = false;

		for (size_t c = 0; c < n; c++)
			found |= strcmp(cells[c], api_requests[i].name) == 0;
		if (!found)
			fail_msg("%s, \"Requests\": no row for %s", DOC, api_requests[i].name);
	}
	for (size_t c = 0; c < n; c++) {
		bool found = false;

		for (size_t i = 0; i < API_NKINDS; i++)
			found |= strcmp(cells[c], api_requests[i].name) == 0;
		if (!found)
			fail_msg("%s, \"Requests\": %s is in no row of the request table", DOC,
				 cells[c]);
	}
	free(doc);
}

static void test_docs_list_every_route(void **state)
{
	char *doc = read_doc();
	char cells[64][64];
	size_t n = doc_cells(doc, "\n## The network API", "?`", cells, 64);

	(void)state;
	for (size_t i = 0; i < API_NKINDS; i++) {
		char want[64];
		bool found = false;

		snprintf(want, sizeof(want), "%s %s", api_requests[i].method,
			 api_requests[i].route);
		for (size_t c = 0; c < n; c++)
			found |= strcmp(cells[c], want) == 0;
		if (!found)
			fail_msg("%s, \"The network API\": no route %s (%s)", DOC, want,
				 api_requests[i].name);
	}
	for (size_t c = 0; c < n; c++) {
		char method[8], path[56];

		if (sscanf(cells[c], "%7s %55s", method, path) != 2 || path[0] != '/')
			continue; /* another table's row (options, statuses) */
		if (strcmp(path, "/v1/call") && !api_route(method, path))
			fail_msg("%s, \"The network API\": %s %s is no row's route", DOC, method,
				 path);
	}
	free(doc);
}

/* The last cell of a line of "The request table": what a tenant's request
 * names, by the row's rule, and the line's end. */
static void names_cell(const struct api_tenant_rule *r, char *out, size_t len)
{
	switch (r->names) {
	case API_NAMES_FILTERED:
		snprintf(out, len, "filtered |\n");
		break;
	case API_NAMES_PARTITION: {
		size_t n = (size_t)snprintf(out, len, "`%s`", r->field);

		if (r->alias)
			n += (size_t)snprintf(out + n, len - n, " or `%s`", r->alias);
		if (r->hosts)
			n += (size_t)snprintf(out + n, len - n, ", `%s`", r->hosts);
		snprintf(out + n, len - n, " |\n");
		break;
	}
	case API_NAMES_TICKET:
	case API_NAMES_HOST:
		snprintf(out, len, "`%s` |\n", r->field);
		break;
	case API_NAMES_NONE:
	default:
		snprintf(out, len, "- |\n");
	}
}

/* "The request table" in docs/control.md: a row per kind, its route, its
 * flags in words and what a tenant's request names, exactly as the table
 * has them, and no other row. */
static void test_docs_table_is_the_table(void **state)
{
	static const struct {
		unsigned flag;
		const char *word;
	} words[] = {{API_READ, "read"},     {API_MUTATION, "mutation"}, {API_REPORT, "report"},
		     {API_STREAM, "stream"}, {API_TENANT, "tenant"},	 {API_LEADER, "leader"},
		     {API_KEYED, "keyed"},   {API_CACHED, "cached"},	 {API_HOST, "host"}};
	char *doc = read_doc();
	char *sec = strstr(doc, "\n### The request table\n");
	char cells[64][64];
	size_t n;

	(void)state;
	if (!sec)
		fail_msg("%s: no section \"The request table\"", DOC);
	n = doc_cells(doc, "\n### The request table\n", "`", cells, 64);
	for (size_t i = 0; i < API_NKINDS; i++) {
		const struct api_request *k = &api_requests[i];
		char want[200];
		int len = snprintf(want, sizeof(want), "\n| `%s` | `%s %s` | ", k->name, k->method,
				   k->route);
		bool first = true;

		for (size_t w = 0; w < sizeof(words) / sizeof(words[0]); w++)
			if (k->flags & words[w].flag) {
				len += snprintf(want + len, sizeof(want) - (size_t)len, "%s%s",
						first ? "" : ", ", words[w].word);
				first = false;
			}
		len += snprintf(want + len, sizeof(want) - (size_t)len, " | ");
		names_cell(&k->tenant, want + len, sizeof(want) - (size_t)len);
		if (!strstr(sec, want))
			fail_msg("%s, \"The request table\": no line \"%.*s\"", DOC,
				 (int)strlen(want) - 2, want + 1);
	}
	if (n != API_NKINDS)
		fail_msg("%s, \"The request table\": %zu rows for %d kinds", DOC, n, API_NKINDS);
	free(doc);
}

/* docs/ARCHITECTURE.md, "The request table": its list of the requests
 * ("... `ofc.v1.Request` (proto/control.proto): A, B, ..., Z. Each is a
 * row") names every row and nothing else. */
static void test_map_lists_every_request(void **state)
{
	const char *map = "docs/ARCHITECTURE.md", *lead = "(proto/control.proto):";
	FILE *f = fopen(map, "r");
	char *buf = calloc(1, 1u << 20), *sec, *p, *end;
	size_t n, listed = 0;

	(void)state;
	if (!f)
		fail_msg("%s: cannot open it (run from the source tree)", map);
	n = fread(buf, 1, (1u << 20) - 1, f);
	fclose(f);
	buf[n] = 0;
	sec = strstr(buf, "\n## The request table\n");
	p = sec ? strstr(sec, lead) : NULL;
	end = p ? strstr(p, ". Each is a") : NULL;
	if (!end)
		fail_msg("%s, \"The request table\": no list \"%s A, B, ... . Each is a row\"", map,
			 lead);
	*end = 0;
	for (char *w = strtok(p + strlen(lead), ", \n"); w; w = strtok(NULL, ", \n")) {
		bool found = false;

		for (size_t i = 0; i < API_NKINDS; i++)
			found |= strcmp(w, api_requests[i].name) == 0;
		if (!found)
			fail_msg("%s, \"The request table\": %s is in no row of the table", map, w);
		listed++;
	}
	if (listed != API_NKINDS)
		fail_msg("%s, \"The request table\": %zu requests listed for %d rows", map, listed,
			 API_NKINDS);
	free(buf);
}

/* A body of kind k with its string field `name` set to v (through the
 * descriptor, as the request table names it). */
static void set_string(const struct api_request *k, ProtobufCMessage *m, const char *name, char *v)
{
	const ProtobufCFieldDescriptor *f =
	    protobuf_c_message_descriptor_get_field_by_name(k->desc, name);

	*(char **)((char *)m + f->offset) = v;
}

/* What each row's rule names is read from where the rule says, and from
 * nowhere else: a partition from its field, else its older spelling, two
 * that differ from neither; a ticket only when given; the hosts. */
static void test_named_by_the_rule(void **state)
{
	size_t used[API_NAMES_HOST + 1] = {0}; /* (by enum api_names, whose last is HOST) */

	(void)state;
	for (size_t i = 0; i < API_NKINDS; i++) {
		const struct api_request *k = &api_requests[i];
		const struct api_tenant_rule *r = &k->tenant;
		ProtobufCMessage *m = calloc(1, k->desc->sizeof_message);
		Ofc__V1__Request q = OFC__V1__REQUEST__INIT;
		char *hosts_in[] = {"h1", "h2"};
		char *const *hosts = NULL;
		bool two;

		protobuf_c_message_init(k->desc, m);
		api_set_body(&q, k, m);
		used[r->names]++;
		assert_null(api_named_partition(&q, &two));
		assert_false(two);
		assert_int_equal(api_named_ticket(&q), 0);
		assert_int_equal(api_named_hosts(&q, &hosts), 0);
		if (r->names == API_NAMES_PARTITION) {
			set_string(k, m, r->field, "jobA");
			assert_string_equal(api_named_partition(&q, &two), "jobA");
			if (r->alias) {
				set_string(k, m, r->alias, "jobA");
				assert_string_equal(api_named_partition(&q, &two), "jobA");
				set_string(k, m, r->alias, "jobB");
				assert_null(api_named_partition(&q, &two));
				assert_true(two);
				set_string(k, m, r->field, NULL);
				assert_string_equal(api_named_partition(&q, &two), "jobB");
				assert_false(two);
			}
			if (r->hosts) {
				const ProtobufCFieldDescriptor *f =
				    protobuf_c_message_descriptor_get_field_by_name(k->desc,
										    r->hosts);

				*(char ***)((char *)m + f->offset) = hosts_in;
				*(size_t *)((char *)m + f->quantifier_offset) = 2;
				assert_int_equal(api_named_hosts(&q, &hosts), 2);
				assert_ptr_equal(hosts, hosts_in);
				*(size_t *)((char *)m + f->quantifier_offset) = 0;
			}
		}
		if (r->names == API_NAMES_TICKET) {
			const ProtobufCFieldDescriptor *f =
			    protobuf_c_message_descriptor_get_field_by_name(k->desc, r->field);

			*(uint64_t *)((char *)m + f->offset) = 7;
			assert_int_equal(api_named_ticket(&q), 0); /* (not given) */
			*(protobuf_c_boolean *)((char *)m + f->quantifier_offset) = 1;
			assert_int_equal(api_named_ticket(&q), 7);
		}
		free(m);
	}
	/* every kind of rule is some row's (one left unused is a rule no
	 * request needs, or a row that lost it) */
	for (int n = API_NAMES_FILTERED; n <= API_NAMES_HOST; n++)
		if (!used[n])
			fail_msg("no row's tenant rule names kind %d", n);
}

static char *source_text(const char *path)
{
	struct ofc_error err = {0};
	char *data = NULL;
	size_t len;

	return read_file(path, 1u << 20, &data, &len, &err) == 0 ? data : NULL;
}

/* Whether the source file names a kind's enumerator (API_GET_STATE) or a
 * Request body case; its words in *what. */
static bool names_a_kind(const char *path, char *what, size_t len)
{
	char *src = source_text(path);
	bool found = false;

	if (!src)
		fail_msg("%s: cannot open it (run from the source tree)", path);
	if (strstr(src, "OFC__V1__REQUEST__BODY_")) {
		snprintf(what, len, "a Request's body case");
		found = true;
	}
	for (size_t k = 0; k < API_NKINDS && !found; k++) {
		char e[64] = "API_";

		for (size_t c = 0; api_requests[k].field[c] && c < 58; c++)
			e[4 + c] = (char)toupper((unsigned char)api_requests[k].field[c]);
		if (strstr(src, e)) {
			snprintf(what, len, "%s", e);
			found = true;
		}
	}
	free(src);
	return found;
}

/* The authoriser and the gateway decide by the row (its flags, its route
 * kind, its tenant rule), never by which kind a request is: neither names
 * a kind's enumerator nor a Request body case. */
static void test_none_decided_by_kind(void **state)
{
	const char *gw = "controller/gateway";
	DIR *dir = opendir(gw);
	struct dirent *e;
	char what[80], path[300];
	size_t scanned = 0;

	(void)state;
	if (names_a_kind("controller/ofcd/authz.c", what, sizeof(what)))
		fail_msg("controller/ofcd/authz.c decides by %s: say it in the row", what);
	if (!dir)
		fail_msg("%s: cannot open it (run from the source tree)", gw);
	while ((e = readdir(dir))) {
		size_t n = strlen(e->d_name);

		if (n < 3 || e->d_name[0] == '.' ||
		    (strcmp(e->d_name + n - 2, ".c") && strcmp(e->d_name + n - 2, ".h")))
			continue;
		snprintf(path, sizeof(path), "%s/%s", gw, e->d_name);
		if (names_a_kind(path, what, sizeof(what)))
			fail_msg("%s decides by %s: say it in the row", path, what);
		scanned++;
	}
	closedir(dir);
	assert_true(scanned >= 5); /* (the gateway's sources, not an empty folder) */
}

/* ---- the job table against the request table ------------------------------------------ */

#define OFCD_DIR    "controller/ofcd"
#define MAX_SOURCES 128

/* ofcd's sources, read once: where a function is defined and what it calls. */
struct sources {
	char *text[MAX_SOURCES];
	size_t n;
};

static void sources_read(struct sources *s)
{
	DIR *dir = opendir(OFCD_DIR);
	struct dirent *e;
	char path[512];

	if (!dir)
		fail_msg("%s: cannot open it (run from the source tree)", OFCD_DIR);
	while ((e = readdir(dir))) {
		size_t n = strlen(e->d_name);

		if (n < 3 || strcmp(e->d_name + n - 2, ".c") || s->n >= MAX_SOURCES)
			continue;
		snprintf(path, sizeof(path), "%s/%s", OFCD_DIR, e->d_name);
		if (!(s->text[s->n++] = source_text(path)))
			fail_msg("%s: cannot read it", path);
	}
	closedir(dir);
	assert_true(s->n >= 20 && s->n < MAX_SOURCES);
}

/* The body of function name's definition (a line "... name(" at column 0
 * not ending in ';', to the next "\n}"), its length in *len; NULL: none. */
static const char *function_body(const struct sources *s, const char *name, size_t *len)
{
	size_t nl = strlen(name);

	for (size_t i = 0; i < s->n; i++)
		for (const char *p = strstr(s->text[i], name); p; p = strstr(p + 1, name)) {
			const char *bol = p, *eol, *open, *end;

			while (bol > s->text[i] && bol[-1] != '\n')
				bol--;
			if (p[nl] != '(' ||
			    (p > bol && (isalnum((unsigned char)p[-1]) || p[-1] == '_')) ||
			    *bol == ' ' || *bol == '\t' || *bol == '#' || *bol == '/' ||
			    *bol == '*')
				continue;
			eol = strchr(p, '\n');
			open = strstr(p, "\n{");
			if (!eol || !open || (eol > p && eol[-1] == ';') || strchr(p, ';') < open)
				continue;
			if (!(end = strstr(open, "\n}")))
				continue;
			*len = (size_t)(end - open);
			return open;
		}
	return NULL;
}

/* Whether function name, or a function of ofcd's it calls (depth calls
 * down), makes a request's job (queued_job, request_job). */
static bool makes_job(const struct sources *s, const char *name, int depth)
{
	size_t len;
	const char *body = function_body(s, name, &len);
	char called[80];

	if (!body || depth <= 0)
		return false;
	for (size_t i = 0; i < len; i++) {
		size_t n = 0;

		if (!(isalpha((unsigned char)body[i]) || body[i] == '_') ||
		    (i && (isalnum((unsigned char)body[i - 1]) || body[i - 1] == '_')))
			continue;
		while (i + n < len && n < sizeof(called) - 1 &&
		       (isalnum((unsigned char)body[i + n]) || body[i + n] == '_'))
			n++;
		if (body[i + n] != '(' || n >= sizeof(called) - 1)
			continue;
		memcpy(called, body + i, n);
		called[n] = 0;
		if (strcmp(called, "queued_job") == 0 || strcmp(called, "request_job") == 0)
			return true;
		if (strcmp(called, name) && makes_job(s, called, depth - 1))
			return true;
	}
	return false;
}

/* The handler requests.c's handlers[] names for kind k ("[API_X] = fn,"). */
static void handler_of(const char *requests_c, size_t k, char *fn, size_t len)
{
	char e[80] = "[API_";
	const char *p, *q;
	size_t n = 0;

	for (size_t c = 0; api_requests[k].field[c] && c < 60; c++)
		e[5 + c] = (char)toupper((unsigned char)api_requests[k].field[c]);
	strcat(e, "] = ");
	if (!(p = strstr(requests_c, e)))
		fail_msg("%s/requests.c: no handler for %s", OFCD_DIR, api_requests[k].name);
	p += strlen(e);
	for (q = p; (isalnum((unsigned char)*q) || *q == '_') && n < len - 1; q++)
		fn[n++] = *q;
	fn[n] = 0;
}

/* Every request whose handler queues a job (queued_job or request_job,
 * from the handler or what it calls) is a request of exactly one row of
 * the job table, and every request a row names is one that does: a new
 * request that queues a job without its row, or a row naming a request
 * that queues none, fails here. */
static void test_job_table_is_the_request_table(void **state)
{
	struct sources s = {0};
	char *requests_c;
	size_t queues = 0;

	(void)state;
	sources_read(&s);
	requests_c = source_text(OFCD_DIR "/requests.c");
	assert_non_null(requests_c);
	for (size_t k = 0; k < API_NKINDS; k++) {
		const struct api_request *r = &api_requests[k];
		char fn[80];
		int rows = 0;
		enum job_kind jk = job_kind_of_request((enum api_kind)k);

		for (int i = 1; i < JOB_NKINDS; i++)
			for (uint8_t q = 0; q < job_table[i].nrequests; q++)
				rows += job_table[i].requests[q] == (enum api_kind)k;
		handler_of(requests_c, k, fn, sizeof(fn));
		if (makes_job(&s, fn, 4) != (rows == 1))
			fail_msg(
			    "%s (its handler %s) queues %s job but has %d rows in the job table "
			    "(controller/ofcd/work.c)",
			    r->name, fn, rows ? "no" : "a", rows);
		if (rows > 1)
			fail_msg("%s has %d rows in the job table", r->name, rows);
		if (!rows) {
			assert_int_equal(jk, 0);
			assert_false(r->flags & API_KEYED); /* (queued: it has its row) */
			continue;
		}
		queues++;
		assert_true(jk > 0 && jk < JOB_NKINDS);
		/* a read's job runs on a schedule worker, a mutation's on the mutation worker */
		assert_int_equal(job_table[jk].thread,
				 r->flags & API_READ ? JOB_ON_SCHEDULE : JOB_ON_MUTATION);
		assert_true(!(r->flags & API_KEYED) || job_table[jk].mutation);
	}
	assert_true(queues >= 10); /* (the scan found the handlers) */
	for (int i = 1; i < JOB_NKINDS; i++) {
		const struct job_row *j = &job_table[i];

		assert_non_null(j->name);
		assert_non_null(j->answer);
		assert_string_equal(job_kind_name((enum job_kind)i), j->name);
		assert_true(j->nrequests <= JOB_MAX_REQUESTS);
		/* the mutation worker runs a row by its handler; a schedule worker
		 * hands it to a planner process */
		assert_true((j->thread == JOB_ON_MUTATION) == job_runs_on_worker((enum job_kind)i));
		assert_true(j->thread == JOB_ON_MUTATION || j->thread == JOB_ON_SCHEDULE);
		for (int o = 1; o < i; o++)
			if (strcmp(job_table[o].name, j->name) == 0)
				fail_msg("job rows %d and %d are both named %s", o, i, j->name);
		for (uint8_t q = 0; q < j->nrequests; q++)
			assert_int_equal(job_kind_of_request(j->requests[q]), i);
	}
	free(requests_c);
	for (size_t i = 0; i < s.n; i++)
		free(s.text[i]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_rows_are_the_oneof),
	    cmocka_unit_test(test_streams),
	    cmocka_unit_test(test_docs_list_every_request),
	    cmocka_unit_test(test_docs_list_every_route),
	    cmocka_unit_test(test_docs_table_is_the_table),
	    cmocka_unit_test(test_map_lists_every_request),
	    cmocka_unit_test(test_named_by_the_rule),
	    cmocka_unit_test(test_none_decided_by_kind),
	    cmocka_unit_test(test_job_table_is_the_request_table),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
