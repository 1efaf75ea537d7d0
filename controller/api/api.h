/* controller/api — the control API's request kinds, one row each: the
 * table ofcd's dispatch, its follower's gate, its authoriser and the
 * read-only socket's filter read, and ofc-gateway's routes come from, so
 * that a request kind is listed once (docs/control.md, "Requests", is
 * checked against it). Adding a request: its message in
 * proto/control.proto's Request oneof, a row here, a handler in ofcd
 * (controller/ofcd/requests.c, `handlers`), a line in docs/control.md.
 *
 * Only data and lookups: both binaries link it, and it knows nothing of
 * either (no handler pointers: ofcd keeps its handlers by the row's kind). */
#ifndef OFC_CONTROLLER_API_H
#define OFC_CONTROLLER_API_H

#include <protobuf-c/protobuf-c.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/control.pb-c.h"

/* The request kinds, in the order of the Request oneof's fields in
 * proto/control.proto (the order a "no body" answer lists them in). */
enum api_kind {
	API_APPLY_CONFIG,
	API_RECONFIGURE,
	API_GET_SCHEDULE,
	API_GET_STATE,
	API_WATCH,
	API_CANCEL,
	API_REPORT_FAILURE,
	API_RELEASE_PARTITION,
	API_GET_METRICS,
	API_GET_PLAN,
	API_MOVE_TO_PHASE,
	API_ADOPT,
	API_TESTBED_RUN,
	API_TESTBED_CHECK,
	API_TESTBED_DOWN,
	API_TESTBED_UP,
	API_DRAIN,
	API_REPORT_MPI,
	API_TESTBED_MPIRUN,
	API_REPORT_LINKS,
	API_NKINDS
};

enum api_flag {
	/* Changes nothing: the read-only socket, a socket peer that is not
	 * an admin and the read-only role may send it. */
	API_READ = 1u << 0,
	/* Changes the fabric or the queue: an admin's (a socket peer that is
	 * root or in --admin-group, or the gateway's admin role). */
	API_MUTATION = 1u << 1,
	/* May be answered with more than one frame (a Watch's events, a
	 * GetSchedule asked with `stream`). */
	API_STREAM = 1u << 2,
	/* A tenant may send it, of its own partitions (the row's `tenant`
	 * says what the request names; ofcd's authz.c holds it to them). */
	API_TENANT = 1u << 3,
	/* Only the leader of a cluster runs it: a follower answers NOT_LEADER
	 * naming the leader. */
	API_LEADER = 1u << 4,
	/* ofcd queues it for the mutation worker and runs it once per
	 * request_key (outcomes.c): a client walking the replicas gives it a
	 * key, so an answer lost with its leader may be asked again. */
	API_KEYED = 1u << 5,
	/* One answer many clients poll (GetState): the gateway keeps the JSON
	 * it wrote for ofcd's bytes (cache.c) and answers a client that holds
	 * it already (If-None-Match) 304. */
	API_CACHED = 1u << 6,
	/* Adds what a job measured to what ofcd shows, and changes nothing of
	 * the fabric or the queue (ReportMpi): a main-socket peer may send it
	 * (a job runs as its user, and the socket's mode says who may open
	 * it), and a tenant of its own partition; not the read-only socket
	 * nor the read-only role. */
	API_REPORT = 1u << 7,
	/* A host's agent (the gateway's host role) may send it, of its own
	 * host only: the row's rule names the body's host field
	 * (API_NAMES_HOST), and the host role may send nothing else. */
	API_HOST = 1u << 8,
};

/* What a tenant's request names, for ofcd's authoriser to hold to the
 * tenant's partitions: the row says where in its body, as Redis's command
 * table says where a command's keys are. Only API_TENANT rows name any. */
enum api_names {
	API_NAMES_NONE,	     /* no tenant may send it */
	API_NAMES_FILTERED,  /* nothing: its answer is filtered to the tenant's */
	API_NAMES_PARTITION, /* a partition (`field`, or its `alias`): the tenant's */
	API_NAMES_TICKET,    /* a ticket (`field`): the queue checks its request
				is the tenant's own */
	API_NAMES_HOST,	     /* a host (`field`): the host role's own host */
};

struct api_tenant_rule {
	enum api_names names;
	/* The body's field that names it: an optional string (a partition)
	 * or an optional uint64 (a ticket). */
	const char *field;
	/* The field's older spelling, taken when `field` is not given (both
	 * given must agree). */
	const char *alias;
	/* A repeated string field: the hosts a partition made at run time
	 * takes, none of which may be another tenant's. */
	const char *hosts;
	/* A tenant's request naming none is refused "NAME is a tenant and
	 * <needs> (<field>)"; NULL: let through, its handler answers it. */
	const char *needs;
	/* A partition neither the config's nor held is refused as none ("no
	 * partition P exists (<absent>)"); NULL: as another tenant's. */
	const char *absent;
};

/* How the gateway reads a route's message: from the query string (GET),
 * from a JSON body (POST), or as a stream it keeps open. */
enum api_route_kind { API_RT_QUERY, API_RT_BODY, API_RT_WATCH, API_RT_METRICS };

struct api_request {
	enum api_kind kind;
	const char *name;  /* the body's message: "GetState" */
	const char *field; /* the oneof's field: "get_state" */
	const char *word;  /* for logs, refusals and metrics labels: "get-state" */
	Ofc__V1__Request__BodyCase body;
	const ProtobufCMessageDescriptor *desc; /* the body's message */
	/* The gateway's route (docs/control.md, "The network API"). */
	const char *method, *route;
	enum api_route_kind rt;
	unsigned flags; /* enum api_flag */
	/* API_STREAM: the body's bool field that asks for the stream
	 * (GetSchedule's `stream`); NULL: every answer is one (a Watch). */
	const char *stream_if;
	struct api_tenant_rule tenant;
};

/* Every kind, indexed by enum api_kind. */
extern const struct api_request api_requests[API_NKINDS];

/* The row of a Request's body case; NULL for none (a Request without a
 * body) or a case this build does not know. */
const struct api_request *api_request_of(Ofc__V1__Request__BodyCase body);
/* The row whose route is path (method: the one asked, NULL for any);
 * NULL: no route is path. */
const struct api_request *api_route(const char *method, const char *path);
/* Whether q is answered as a stream of frames: its kind may be
 * (API_STREAM), and its body asks where the row says it must. */
bool api_streams(const Ofc__V1__Request *q);
/* The partition q names by its row's rule (`tenant.field`, else its
 * `alias`): NULL when it names none, or two that differ (then *two). */
const char *api_named_partition(const Ofc__V1__Request *q, bool *two);
/* The host q names by its row's rule (API_NAMES_HOST); NULL: none. */
const char *api_named_host(const Ofc__V1__Request *q);
/* The ticket q names by its row's rule; 0: none. */
uint64_t api_named_ticket(const Ofc__V1__Request *q);
/* The hosts q names by its row's rule (`tenant.hosts`): their number, the
 * array in *hosts (q's own). */
size_t api_named_hosts(const Ofc__V1__Request *q, char *const **hosts);
/* Set q's body to m (a message of k->desc), as the oneof's case k->body:
 * q borrows m. */
void api_set_body(Ofc__V1__Request *q, const struct api_request *k, ProtobufCMessage *m);

#endif
