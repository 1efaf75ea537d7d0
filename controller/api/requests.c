/* The request table: one row per kind of ofc.v1.Request body, with what
 * ofcd and ofc-gateway each read from it (api.h). */
#include "controller/api/api.h"

#include <string.h>

/* One row: KIND (enum api_kind's API_KIND and the Request oneof's case
 * BODY_KIND), the body's message and field, the word for people, the
 * gateway's method, route and way of reading it, the flags, and after them
 * the fields few rows have (.stream_if). */
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

#define MUTATION (API_MUTATION | API_LEADER)
#define QUEUED	 (MUTATION | API_KEYED)

/* clang-format off */
const struct api_request api_requests[API_NKINDS] = {
/*  kind               message           field              word                method route                    reading  flags */
ROW(APPLY_CONFIG,      ApplyConfig,      apply_config,      "apply-config",      POST, "/v1/apply",             BODY,    QUEUED),
ROW(RECONFIGURE,       Reconfigure,      reconfigure,       "reconfigure",       POST, "/v1/reconfigure",       BODY,    QUEUED | API_TENANT),
ROW(GET_SCHEDULE,      GetSchedule,      get_schedule,      "get-schedule",      GET,  "/v1/schedule",          QUERY,   API_READ | API_STREAM | API_TENANT, .stream_if = "stream"),
ROW(GET_STATE,         GetState,         get_state,         "get-state",         GET,  "/v1/state",             QUERY,   API_READ | API_TENANT),
ROW(WATCH,             Watch,            watch,             "watch",             GET,  "/v1/watch",             WATCH,   API_READ | API_STREAM | API_TENANT),
ROW(CANCEL,            Cancel,           cancel,            "cancel",            POST, "/v1/cancel",            BODY,    MUTATION | API_TENANT),
ROW(REPORT_FAILURE,    ReportFailure,    report_failure,    "report-failure",    POST, "/v1/report-failure",    BODY,    QUEUED),
ROW(RELEASE_PARTITION, ReleasePartition, release_partition, "release-partition", POST, "/v1/release-partition", BODY,    QUEUED | API_TENANT),
ROW(GET_METRICS,       GetMetrics,       get_metrics,       "get-metrics",       GET,  "/metrics",              METRICS, API_READ),
ROW(GET_PLAN,          GetPlan,          get_plan,          "get-plan",          GET,  "/v1/plan",              QUERY,   API_READ),
ROW(MOVE_TO_PHASE,     MoveToPhase,      move_to_phase,     "move-to-phase",     POST, "/v1/move-to-phase",     BODY,    QUEUED),
ROW(ADOPT,             Adopt,            adopt,             "adopt",             POST, "/v1/adopt",             BODY,    QUEUED),
ROW(TESTBED_RUN,       TestbedRun,       testbed_run,       "testbed-run",       POST, "/v1/testbed/run",       BODY,    MUTATION),
ROW(TESTBED_CHECK,     TestbedCheck,     testbed_check,     "testbed-check",     POST, "/v1/testbed/check",     BODY,    MUTATION),
ROW(TESTBED_DOWN,      TestbedDown,      testbed_down,      "testbed-down",      POST, "/v1/testbed/down",      BODY,    MUTATION),
ROW(TESTBED_UP,        TestbedUp,        testbed_up,        "testbed-up",        POST, "/v1/testbed/up",        BODY,    MUTATION),
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
