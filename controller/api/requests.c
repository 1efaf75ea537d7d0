/* The request table: one row per kind of ofc.v1.Request body, with what
 * ofcd and ofc-gateway each read from it (api.h). */
#include "controller/api/api.h"

#include <string.h>

/* One row: KIND (enum api_kind's API_KIND and the Request oneof's case
 * BODY_KIND), the body's message and field, the word for people, the
 * gateway's method, route and way of reading it, the flags, and after them
 * the fields few rows have (.stream_if, and a tenant's rule: TENANT). */
#define ROW(KIND, NAME, FIELD, WORD, METHOD, ROUTE, RT, FLAGS, ...)                                \
	[API_##KIND] = {.kind = API_##KIND,                                                        \
			.name = #NAME,                                                             \
			.field = #FIELD,                                                           \
			.word = WORD,                                                              \
			.body = OFC__V1__REQUEST__BODY_##KIND,                                     \
			.desc = &ofc__v1__##FIELD##__descriptor,                                   \
			.method = #METHOD,                                                         \
			.route = ROUTE,                                                            \
			.rt = API_RT_##RT,                                                         \
			.flags = FLAGS,                                                            \
			__VA_ARGS__}

/* What a tenant's request names (api_tenant_rule): NAMES, then the
 * fields and words that kind needs. */
#define TENANT(NAMES, FIELD, ...)                                                                  \
	.tenant = {.names = API_NAMES_##NAMES, .field = FIELD, __VA_ARGS__}

#define MUTATION (API_MUTATION | API_LEADER)
#define QUEUED	 (MUTATION | API_KEYED)

/* clang-format off */
const struct api_request api_requests[API_NKINDS] = {
/*  kind               message           field              word                method route                    reading  flags */
ROW(APPLY_CONFIG,      ApplyConfig,      apply_config,      "apply-config",      POST, "/v1/apply",             BODY,    QUEUED),
ROW(RECONFIGURE,       Reconfigure,      reconfigure,       "reconfigure",       POST, "/v1/reconfigure",       BODY,    QUEUED | API_TENANT,
    TENANT(PARTITION, "partition", .hosts = "hosts", .needs = "reconfigures its partitions only")),
ROW(GET_SCHEDULE,      GetSchedule,      get_schedule,      "get-schedule",      GET,  "/v1/schedule",          QUERY,   API_READ | API_STREAM | API_TENANT, .stream_if = "stream",
    TENANT(PARTITION, "partition", .needs = "asks for its partitions' schedules")),
ROW(GET_STATE,         GetState,         get_state,         "get-state",         GET,  "/v1/state",             QUERY,   API_READ | API_TENANT | API_CACHED,
    TENANT(FILTERED, NULL)),
ROW(WATCH,             Watch,            watch,             "watch",             GET,  "/v1/watch",             WATCH,   API_READ | API_STREAM | API_TENANT,
    TENANT(FILTERED, NULL)),
ROW(CANCEL,            Cancel,           cancel,            "cancel",            POST, "/v1/cancel",            BODY,    MUTATION | API_TENANT,
    TENANT(TICKET, "ticket", .needs = "cancels by ticket, which its state and events show for its requests")),
ROW(REPORT_FAILURE,    ReportFailure,    report_failure,    "report-failure",    POST, "/v1/report-failure",    BODY,    QUEUED),
ROW(RELEASE_PARTITION, ReleasePartition, release_partition, "release-partition", POST, "/v1/release-partition", BODY,    QUEUED | API_TENANT,
    TENANT(PARTITION, "partition", .alias = "name", .absent = "nothing to release")),
ROW(GET_METRICS,       GetMetrics,       get_metrics,       "get-metrics",       GET,  "/metrics",              METRICS, API_READ),
ROW(GET_PLAN,          GetPlan,          get_plan,          "get-plan",          GET,  "/v1/plan",              QUERY,   API_READ),
ROW(MOVE_TO_PHASE,     MoveToPhase,      move_to_phase,     "move-to-phase",     POST, "/v1/move-to-phase",     BODY,    QUEUED),
ROW(ADOPT,             Adopt,            adopt,             "adopt",             POST, "/v1/adopt",             BODY,    QUEUED),
ROW(TESTBED_RUN,       TestbedRun,       testbed_run,       "testbed-run",       POST, "/v1/testbed/run",       BODY,    MUTATION),
ROW(TESTBED_CHECK,     TestbedCheck,     testbed_check,     "testbed-check",     POST, "/v1/testbed/check",     BODY,    MUTATION),
ROW(TESTBED_DOWN,      TestbedDown,      testbed_down,      "testbed-down",      POST, "/v1/testbed/down",      BODY,    MUTATION),
ROW(TESTBED_UP,        TestbedUp,        testbed_up,        "testbed-up",        POST, "/v1/testbed/up",        BODY,    MUTATION),
ROW(DRAIN,             Drain,            drain,             "drain",             POST, "/v1/drain",             BODY,    QUEUED),
ROW(REPORT_MPI,        ReportMpi,        report_mpi,        "report-mpi",        POST, "/v1/mpi-report",        BODY,    API_REPORT | API_LEADER | API_TENANT,
    TENANT(PARTITION, "partition", .needs = "reports its own partitions' jobs only", .absent = "nothing to report on")),
ROW(TESTBED_MPIRUN,    TestbedMpirun,    testbed_mpirun,    "testbed-mpirun",    POST, "/v1/testbed/mpirun",    BODY,    MUTATION),
ROW(REPORT_LINKS,      ReportLinks,      report_links,      "report-links",      POST, "/v1/report-links",      BODY,    MUTATION | API_HOST,
    TENANT(HOST, "host", .needs = "reports its own host's links only")),
};
/* clang-format on */

const struct api_request *api_request_of(Ofc__V1__Request__BodyCase body)
{
	for (size_t i = 0; i < API_NKINDS; i++)
		if (api_requests[i].body == body)
			return &api_requests[i];
	return NULL;
}

const struct api_request *api_route(const char *method, const char *path)
{
	for (size_t i = 0; i < API_NKINDS; i++)
		if (strcmp(api_requests[i].route, path) == 0 &&
		    (!method || strcmp(api_requests[i].method, method) == 0))
			return &api_requests[i];
	return NULL;
}

/* q's body, through the Request's descriptor (the oneof's field of the
 * row's `field`): NULL for none. */
static const ProtobufCMessage *body_of(const Ofc__V1__Request *q, const struct api_request **k)
{
	const ProtobufCFieldDescriptor *f;

	if (!(*k = api_request_of(q->body_case)) ||
	    !(f = protobuf_c_message_descriptor_get_field_by_name(&ofc__v1__request__descriptor,
								  (*k)->field)))
		return NULL;
	return *(const ProtobufCMessage *const *)((const char *)q + f->offset);
}

bool api_streams(const Ofc__V1__Request *q)
{
	const struct api_request *k;
	const ProtobufCMessage *m = body_of(q, &k);
	const ProtobufCFieldDescriptor *f;

	if (!k || !(k->flags & API_STREAM))
		return false;
	if (!k->stream_if)
		return true;
	/* (test_requests checks the field is an optional bool of the body) */
	if (!m || !(f = protobuf_c_message_descriptor_get_field_by_name(k->desc, k->stream_if)) ||
	    f->type != PROTOBUF_C_TYPE_BOOL)
		return false;
	return *(const protobuf_c_boolean *)((const char *)m + f->offset);
}

/* Through the Request's descriptor: the oneof's field of k->field, its
 * case member at the field's quantifier offset (protobuf-c keeps a oneof's
 * case there). */
void api_set_body(Ofc__V1__Request *q, const struct api_request *k, ProtobufCMessage *m)
{
	const ProtobufCFieldDescriptor *f = protobuf_c_message_descriptor_get_field_by_name(
	    &ofc__v1__request__descriptor, k->field);

	if (!f)
		return; /* (a row names a field of the oneof: test_requests checks each) */
	*(ProtobufCMessage **)((char *)q + f->offset) = m;
	*(Ofc__V1__Request__BodyCase *)((char *)q + f->quantifier_offset) = k->body;
}

/* The field `name` of q's body (the row's message), through its
 * descriptor: NULL when the row or the field is not there, or the field
 * is not of the type and label asked. */
static const void *body_field(const Ofc__V1__Request *q, const char *name, ProtobufCType type,
			      ProtobufCLabel label, const ProtobufCFieldDescriptor **fd)
{
	const struct api_request *k;
	const ProtobufCMessage *m = body_of(q, &k);
	const ProtobufCFieldDescriptor *f;

	if (!m || !name || !(f = protobuf_c_message_descriptor_get_field_by_name(k->desc, name)) ||
	    f->type != type || f->label != label)
		return NULL;
	*fd = f;
	return (const char *)m + f->offset;
}

static const char *body_string(const Ofc__V1__Request *q, const char *name)
{
	const ProtobufCFieldDescriptor *f;
	const char *const *v =
	    body_field(q, name, PROTOBUF_C_TYPE_STRING, PROTOBUF_C_LABEL_OPTIONAL, &f);

	return v && *v && **v ? *v : NULL;
}

const char *api_named_partition(const Ofc__V1__Request *q, bool *two)
{
	const struct api_request *k = api_request_of(q->body_case);
	const char *p, *a;

	*two = false;
	if (!k || k->tenant.names != API_NAMES_PARTITION)
		return NULL;
	p = body_string(q, k->tenant.field);
	a = body_string(q, k->tenant.alias);
	if (p && a && strcmp(p, a) != 0) {
		*two = true;
		return NULL;
	}
	return p ? p : a;
}

const char *api_named_host(const Ofc__V1__Request *q)
{
	const struct api_request *k = api_request_of(q->body_case);

	return k && k->tenant.names == API_NAMES_HOST ? body_string(q, k->tenant.field) : NULL;
}

uint64_t api_named_ticket(const Ofc__V1__Request *q)
{
	const struct api_request *k = api_request_of(q->body_case);
	const ProtobufCFieldDescriptor *f;
	const uint64_t *v = k && k->tenant.names == API_NAMES_TICKET
				? body_field(q, k->tenant.field, PROTOBUF_C_TYPE_UINT64,
					     PROTOBUF_C_LABEL_OPTIONAL, &f)
				: NULL;

	/* (proto2: an optional scalar's has_ is at the quantifier offset) */
	if (!v ||
	    !*(const protobuf_c_boolean *)((const char *)v - f->offset + f->quantifier_offset))
		return 0;
	return *v;
}

size_t api_named_hosts(const Ofc__V1__Request *q, char *const **hosts)
{
	const struct api_request *k = api_request_of(q->body_case);
	const ProtobufCFieldDescriptor *f;
	char **const *v = k ? body_field(q, k->tenant.hosts, PROTOBUF_C_TYPE_STRING,
					 PROTOBUF_C_LABEL_REPEATED, &f)
			    : NULL;

	if (!v)
		return 0;
	*hosts = *v;
	return *(const size_t *)((const char *)v - f->offset + f->quantifier_offset);
}
