/* ofcd's job table: a row per job kind, as the request table
 * (controller/api/requests.c) has a row per request. The requests whose
 * handlers queue it (request_job and queued_job take the kind from here,
 * never from the handler; test_requests holds every handler that queues a
 * job to exactly one row), where it runs (the mutation worker's handler
 * of each kind is work.c's runners[]), its words, what the metrics count
 * it as. Read by both threads: constant, and calls nothing of ofcd's. */
#include "controller/ofcd/internal.h"

/* A row: the kind, its name, its answer's kind, where it runs, what the
 * metrics count it as, whether the queue holds it as a mutation, then the
 * requests that queue it; OWN: a row no request queues (ofcd's own: a
 * reload, a probe, the planner's result, a takeover). */
#define OWN(KIND, NAME, ANSWER, THREAD, METRIC, MUTATION)                                          \
	[JOB_##KIND] = {.name = NAME,                                                              \
			.answer = ANSWER,                                                          \
			.thread = JOB_ON_##THREAD,                                                 \
			.metric = JOB_METRIC_##METRIC,                                             \
			.mutation = MUTATION}
#define ROW(KIND, NAME, ANSWER, THREAD, METRIC, MUTATION, ...)                                     \
	[JOB_##                                                                                    \
	    KIND] = {.name = NAME,                                                                 \
		     .answer = ANSWER,                                                             \
		     .thread = JOB_ON_##THREAD,                                                    \
		     .metric = JOB_METRIC_##METRIC,                                                \
		     .mutation = MUTATION,                                                         \
		     .requests = {__VA_ARGS__},                                                    \
		     .nrequests = sizeof((enum api_kind[]){__VA_ARGS__}) / sizeof(enum api_kind)}

/* clang-format off */
const struct job_row job_table[JOB_NKINDS] = {
/*  kind            name                 answer               thread    metric    mutation requests */
ROW(APPLY_CONFIG,   "apply-config",      "apply-config",      MUTATION, TXN,      true,  API_APPLY_CONFIG),
ROW(RECONFIGURE,    "reconfigure",       "reconfigure",       MUTATION, TXN,      true,  API_RECONFIGURE, API_MOVE_TO_PHASE),
OWN(RELOAD,         "reload",            "reload",            MUTATION, TXN,      true),
OWN(PROBE,          "probe",             "reconfigure",       MUTATION, NONE,     false),
ROW(SCHEDULE,       "schedule",          "reconfigure",       SCHEDULE, SCHEDULE, true,  API_GET_SCHEDULE, API_GET_PLAN),
ROW(FAILURE,        "report-failure",    "report-failure",    MUTATION, REPLAN,   true,  API_REPORT_FAILURE, API_REPORT_LINKS),
ROW(DRAIN,          "drain",             "drain",             MUTATION, REPLAN,   true,  API_DRAIN),
OWN(PLANNER,        "plan",              "reconfigure",       MUTATION, NONE,     false),
ROW(RELEASE,        "release-partition", "release-partition", MUTATION, NONE,     true,  API_RELEASE_PARTITION),
OWN(TAKEOVER,       "takeover",          "reconfigure",       MUTATION, NONE,     false),
OWN(SYNC,           "sync",              "reconfigure",       MUTATION, NONE,     false),
ROW(ADOPT,          "adopt",             "reconfigure",       MUTATION, NONE,     true,  API_ADOPT),
ROW(TESTBED_RUN,    "testbed-run",       "reconfigure",       MUTATION, NONE,     true,  API_TESTBED_RUN),
ROW(TESTBED_CHECK,  "testbed-check",     "reconfigure",       MUTATION, NONE,     true,  API_TESTBED_CHECK),
ROW(TESTBED_DOWN,   "testbed-down",      "reconfigure",       MUTATION, NONE,     true,  API_TESTBED_DOWN),
ROW(TESTBED_UP,     "testbed-up",        "reconfigure",       MUTATION, NONE,     true,  API_TESTBED_UP),
ROW(TESTBED_MPIRUN, "testbed-mpirun",    "reconfigure",       MUTATION, NONE,     true,  API_TESTBED_MPIRUN),
};
/* clang-format on */

enum job_kind job_kind_of_request(enum api_kind k)
{
	for (int i = 1; i < JOB_NKINDS; i++)
		for (uint8_t r = 0; r < job_table[i].nrequests; r++)
			if (job_table[i].requests[r] == k)
				return (enum job_kind)i;
	return 0;
}

const char *job_kind_name(enum job_kind k)
{
	return k > 0 && k < JOB_NKINDS ? job_table[k].name : "schedule";
}
