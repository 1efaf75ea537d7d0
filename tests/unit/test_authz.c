/* Who may send what (authz.c): every row of the request table
 * (controller/api) against each kind of sender, by a table of what each
 * may do written out here, apart from the request table's flags; and who
 * may cancel a queued request (authz_may_cancel): an admin and a socket
 * client any; a tenant only its own requests, on partitions its policy
 * names. A pattern another tenant shares (slurm-job-*) names what each may
 * ask for, not whose requests it may undo. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "controller/ofcd/conn.h"

static char *slurm_jobs[] = {"slurm-job-*"};

static Ofc__V1__Principal principal(char *identity, Ofc__V1__Principal__Role role)
{
	Ofc__V1__Principal p;

	ofc__v1__principal__init(&p);
	p.identity = identity;
	p.has_role = 1;
	p.role = role;
	p.n_partitions = 1;
	p.partitions = slurm_jobs;
	return p;
}

static void test_tenant_cancels_only_its_own(void **state)
{
	Ofc__V1__Principal a = principal("cn:tenant-a", OFC__V1__PRINCIPAL__ROLE__ROLE_TENANT);
	Ofc__V1__Principal c = principal("cn:tenant-c", OFC__V1__PRINCIPAL__ROLE__ROLE_TENANT);
	struct job j = {.partition = "slurm-job-77", .principal = "cn:tenant-a"};

	(void)state;
	assert_true(authz_may_cancel(&a, &j));
	/* tenant-c's pattern matches the partition, but the request is a's */
	assert_true(authz_owns(&c, j.partition));
	assert_false(authz_may_cancel(&c, &j));
	/* a's own request on a partition its policy does not name */
	j.partition = "other-77";
	assert_false(authz_may_cancel(&a, &j));
	/* a request of no partition (a whole-fabric change), and none at all */
	j.partition = NULL;
	assert_false(authz_may_cancel(&a, &j));
	assert_false(authz_may_cancel(&a, NULL));
}

static void test_admin_and_socket_cancel_any(void **state)
{
	Ofc__V1__Principal admin = principal("cn:admin", OFC__V1__PRINCIPAL__ROLE__ROLE_ADMIN);
	struct job j = {.partition = "slurm-job-77", .principal = "cn:tenant-a"};

	(void)state;
	assert_true(authz_may_cancel(&admin, &j));
	assert_true(authz_may_cancel(NULL, &j)); /* a socket's client */
	assert_true(authz_may_cancel(&admin, NULL));
}

/* The senders a request can come from. */
enum sender {
	GW_ADMIN,     /* the gateway's admin role */
	GW_TENANT,    /* a tenant, of its own partition */
	GW_READ_ONLY, /* the gateway's read-only role */
	GW_HOST,      /* a host's agent (the host role, host h3), of its own host */
	SOCK_RO,      /* the read-only socket */
	SOCK_PEER,    /* the main socket, neither root nor --admin-group */
	SOCK_ADMIN,   /* the main socket, root or --admin-group */
	NSENDERS
};

/* What each may send, by kind (1: let through to the request's handler;
 * the tenant's requests name a partition of its own, a Cancel a ticket). */
static const struct {
	enum api_kind kind;
	bool may[NSENDERS];
} expected[] = {
    /*                             admin tenant ro-role host ro-sock peer sock-admin */
    {API_APPLY_CONFIG, {1, 0, 0, 0, 0, 0, 1}},	 {API_RECONFIGURE, {1, 1, 0, 0, 0, 0, 1}},
    {API_GET_SCHEDULE, {1, 1, 1, 0, 1, 1, 1}},	 {API_GET_STATE, {1, 1, 1, 0, 1, 1, 1}},
    {API_WATCH, {1, 1, 1, 0, 1, 1, 1}},		 {API_CANCEL, {1, 1, 0, 0, 0, 0, 1}},
    {API_REPORT_FAILURE, {1, 0, 0, 0, 0, 0, 1}}, {API_RELEASE_PARTITION, {1, 1, 0, 0, 0, 0, 1}},
    {API_GET_METRICS, {1, 0, 1, 0, 1, 1, 1}},	 {API_GET_PLAN, {1, 0, 1, 0, 1, 1, 1}},
    {API_MOVE_TO_PHASE, {1, 0, 0, 0, 0, 0, 1}},	 {API_ADOPT, {1, 0, 0, 0, 0, 0, 1}},
    {API_TESTBED_RUN, {1, 0, 0, 0, 0, 0, 1}},	 {API_TESTBED_CHECK, {1, 0, 0, 0, 0, 0, 1}},
    {API_TESTBED_DOWN, {1, 0, 0, 0, 0, 0, 1}},	 {API_TESTBED_UP, {1, 0, 0, 0, 0, 0, 1}},
    {API_DRAIN, {1, 0, 0, 0, 0, 0, 1}},		 {API_REPORT_LINKS, {1, 0, 0, 1, 0, 0, 1}},
    /* a job's report: jobs run as their users on the main socket */
    {API_REPORT_MPI, {1, 1, 0, 0, 0, 1, 1}},	 {API_TESTBED_MPIRUN, {1, 0, 0, 0, 0, 0, 1}},
};

/* Set the field `name` of the body m (of kind k): a string, or a uint64
 * marked given; NULL v clears a string. */
static void set_field(const struct api_request *k, ProtobufCMessage *m, const char *name, char *v,
		      uint64_t u)
{
	const ProtobufCFieldDescriptor *f =
	    protobuf_c_message_descriptor_get_field_by_name(k->desc, name);

	assert_non_null(f);
	if (f->type == PROTOBUF_C_TYPE_STRING) {
		*(char **)((char *)m + f->offset) = v;
		return;
	}
	*(uint64_t *)((char *)m + f->offset) = u;
	*(protobuf_c_boolean *)((char *)m + f->quantifier_offset) = u != 0;
}

/* A Request of kind k, naming the tenant's partition (or a ticket) where
 * the row's rule says a tenant's request names one. */
static ProtobufCMessage *request_of(const struct api_request *k, Ofc__V1__Request *q)
{
	ProtobufCMessage *m = calloc(1, k->desc->sizeof_message);

	protobuf_c_message_init(k->desc, m);
	ofc__v1__request__init(q);
	api_set_body(q, k, m);
	if (k->tenant.names == API_NAMES_PARTITION)
		set_field(k, m, k->tenant.alias ? k->tenant.alias : k->tenant.field, "slurm-job-7",
			  0);
	if (k->tenant.names == API_NAMES_TICKET)
		set_field(k, m, k->tenant.field, NULL, 3);
	if (k->tenant.names == API_NAMES_HOST)
		set_field(k, m, k->tenant.field, "h3", 0);
	return m;
}

static struct principal sender(enum sender s, Ofc__V1__Principal *gw)
{
	struct principal who = {.peer = {.pid = 42, .uid = 1000, .gid = 1000}};

	switch (s) {
	case GW_ADMIN:
		*gw = principal("cn:admin", OFC__V1__PRINCIPAL__ROLE__ROLE_ADMIN);
		break;
	case GW_TENANT:
		*gw = principal("cn:tenant-a", OFC__V1__PRINCIPAL__ROLE__ROLE_TENANT);
		break;
	case GW_READ_ONLY:
		*gw = principal("cn:viewer", OFC__V1__PRINCIPAL__ROLE__ROLE_READ_ONLY);
		break;
	case GW_HOST:
		*gw = principal("cn:hostd-h3", OFC__V1__PRINCIPAL__ROLE__ROLE_HOST);
		gw->n_partitions = 0;
		gw->host = "h3";
		break;
	case SOCK_RO:
		who.ro = true;
		return who;
	case SOCK_PEER:
		return who;
	case SOCK_ADMIN:
	default:
		who.admin = true;
		who.peer.uid = 0;
		return who;
	}
	who.gateway = true;
	who.p = gw;
	return who;
}

static void test_every_request_by_every_sender(void **state)
{
	static struct ofcd_loop l;
	static struct ofcd d = {.loop = &l}; /* (no partition of the config: none is looked up) */
	bool seen[API_NKINDS] = {0};

	(void)state;
	for (size_t e = 0; e < sizeof(expected) / sizeof(expected[0]); e++) {
		const struct api_request *k = &api_requests[expected[e].kind];
		Ofc__V1__Request q;
		ProtobufCMessage *m = request_of(k, &q);

		seen[k->kind] = true;
		for (int s = 0; s < NSENDERS; s++) {
			Ofc__V1__Principal gw;
			struct principal who = sender(s, &gw);
			Ofc__V1__Status st = OFC__V1__STATUS__STATUS_OK;
			char why[512] = "";
			int rc = authz_decide(&d, &who, k, &q, &st, why, sizeof(why));

			if ((rc == 0) != expected[e].may[s])
				fail_msg("%s from sender %d: %s, expected %s (%s)", k->name, s,
					 rc == 0 ? "let through" : "refused",
					 expected[e].may[s] ? "let through" : "refused", why);
			if (rc < 0) {
				assert_int_equal(st, OFC__V1__STATUS__STATUS_DENIED);
				assert_non_null(strstr(why, "permission denied"));
			}
		}
		free(m);
	}
	/* every row of the request table has its line above */
	for (size_t i = 0; i < API_NKINDS; i++)
		if (!seen[i])
			fail_msg("request %s has no line in test_authz's table",
				 api_requests[i].name);
}

/* A socket peer's refusal says which socket and what it needs; a tenant's
 * another tenant's partition, and nothing else. */
static void test_refusals_say_why(void **state)
{
	static struct ofcd_loop l;
	static struct ofcd d = {.loop = &l};
	const struct api_request *k = &api_requests[API_APPLY_CONFIG];
	Ofc__V1__Principal gw;
	struct principal who = sender(SOCK_RO, &gw);
	Ofc__V1__Request q;
	ProtobufCMessage *m = request_of(k, &q);
	Ofc__V1__Status st;
	char why[512];

	(void)state;
	assert_int_equal(authz_decide(&d, &who, k, &q, &st, why, sizeof(why)), -1);
	assert_string_equal(why, "permission denied: apply-config on the read-only socket, which "
				 "answers reads only; mutations go to the main socket");
	who = sender(SOCK_PEER, &gw);
	assert_int_equal(authz_decide(&d, &who, k, &q, &st, why, sizeof(why)), -1);
	assert_string_equal(why,
			    "permission denied: apply-config needs root (you are uid 1000, pid "
			    "42; ofcd has no --admin-group)");
	d.o.have_admin_group = true;
	d.o.admin_group = "ofc";
	assert_int_equal(authz_decide(&d, &who, k, &q, &st, why, sizeof(why)), -1);
	assert_string_equal(why,
			    "permission denied: apply-config needs root or membership of group "
			    "'ofc' (you are uid 1000, pid 42)");
	free(m);

	k = &api_requests[API_RECONFIGURE];
	m = request_of(k, &q);
	q.reconfigure->partition = "other-3";
	who = sender(GW_TENANT, &gw);
	assert_int_equal(authz_decide(&d, &who, k, &q, &st, why, sizeof(why)), -1);
	assert_string_equal(why, "permission denied: partition other-3 belongs to another tenant");
	free(m);

	/* a job's report, of a partition not the tenant's, or of none (the
	 * whole fabric's jobs: an admin's or a socket peer's) */
	k = &api_requests[API_REPORT_MPI];
	m = request_of(k, &q);
	q.report_mpi->partition = "other-3";
	assert_int_equal(authz_decide(&d, &who, k, &q, &st, why, sizeof(why)), -1);
	assert_string_equal(why, "permission denied: no partition other-3 exists (nothing to "
				 "report on), and cn:tenant-a may name only its own partitions");
	q.report_mpi->partition = NULL;
	assert_int_equal(authz_decide(&d, &who, k, &q, &st, why, sizeof(why)), -1);
	assert_string_equal(why, "permission denied: cn:tenant-a is a tenant and reports its own "
				 "partitions' jobs only (partition)");
	free(m);

	/* a Request without a body: through to its INVALID answer, but for
	 * the roles that may not send what a body could hold */
	ofc__v1__request__init(&q);
	who = sender(SOCK_PEER, &gw);
	assert_int_equal(authz_decide(&d, &who, NULL, &q, &st, why, sizeof(why)), 0);
	who = sender(GW_ADMIN, &gw);
	assert_int_equal(authz_decide(&d, &who, NULL, &q, &st, why, sizeof(why)), 0);
	who = sender(GW_READ_ONLY, &gw);
	assert_int_equal(authz_decide(&d, &who, NULL, &q, &st, why, sizeof(why)), -1);
}

/* Who sees the whole state: an admin, by socket or by role. */
static void test_sees_all(void **state)
{
	Ofc__V1__Principal gw;
	struct principal who;

	(void)state;
	who = sender(GW_ADMIN, &gw);
	assert_true(authz_sees_all(&who));
	who = sender(SOCK_ADMIN, &gw);
	assert_true(authz_sees_all(&who));
	for (int s = GW_TENANT; s <= SOCK_PEER; s++) {
		who = sender(s, &gw);
		assert_false(authz_sees_all(&who));
	}
}

/* A queued job as GetState shows it: to a tenant without who asked (peer,
 * principal), its kind as a tenant asks (release-partition, else
 * reconfigure); to others whole. */
static void test_tenant_sees_no_peer(void **state)
{
	struct job j = {.kind = JOB_SCHEDULE,
			.partition = "slurm-job-77",
			.principal = "cn:tenant-a",
			.target = "torus:4x4",
			.ticket = 7,
			.peer = {.uid = 1000, .pid = 42}};
	struct arena a = {0};
	Ofc__V1__TransactionInfo *t;

	(void)state;
	t = txn_info(&a, &j, "queued", 0, false);
	assert_string_equal(t->kind, "schedule");
	assert_true(t->has_peer_uid && t->peer_uid == 1000 && t->has_peer_pid && t->peer_pid == 42);
	assert_string_equal(t->principal, "cn:tenant-a");
	assert_false(t->has_id);
	t = txn_info(&a, &j, "running", 9, true);
	assert_string_equal(t->kind, "reconfigure");
	assert_false(t->has_peer_uid || t->has_peer_pid);
	assert_null(t->principal);
	assert_true(t->has_id && t->id == 9 && t->has_ticket && t->ticket == 7);
	assert_string_equal(t->state, "running");
	assert_string_equal(t->target, "torus:4x4");
	j.kind = JOB_RELEASE;
	assert_string_equal(txn_info(&a, &j, "queued", 0, true)->kind, "release-partition");
	arena_free(&a);
}

/* Each tenant's row by its rule: its own partition (or a ticket) through,
 * another tenant's refused as such (or as none where the row says a name
 * that is nobody's is none), naming nothing refused with the row's words
 * or left to the handler. */
static void test_tenant_rules(void **state)
{
	static struct ofcd_loop l;
	static struct ofcd d = {.loop =
				    &l}; /* (no partition: every name but the tenant's is none) */
	Ofc__V1__Principal gw;
	struct principal who = sender(GW_TENANT, &gw);
	size_t rules = 0;

	(void)state;
	for (size_t i = 0; i < API_NKINDS; i++) {
		const struct api_request *k = &api_requests[i];
		const struct api_tenant_rule *r = &k->tenant;
		Ofc__V1__Request q;
		ProtobufCMessage *m = request_of(k, &q);
		Ofc__V1__Status st = OFC__V1__STATUS__STATUS_OK;
		char why[512] = "", want[512];
		int rc = authz_decide(&d, &who, k, &q, &st, why, sizeof(why));

		if (r->names == API_NAMES_NONE || r->names == API_NAMES_HOST) {
			assert_int_equal(rc, -1); /* (test_every_request_by_every_sender) */
			free(m);
			continue;
		}
		rules++;
		if (rc != 0)
			fail_msg("%s of the tenant's own: refused (%s)", k->name, why);
		if (r->names == API_NAMES_PARTITION) {
			if (r->alias)
				set_field(k, m, r->alias, NULL, 0);
			set_field(k, m, r->field, "other-3", 0);
			assert_int_equal(authz_decide(&d, &who, k, &q, &st, why, sizeof(why)), -1);
			if (r->absent)
				snprintf(want, sizeof(want),
					 "permission denied: no partition other-3 exists (%s), and "
					 "cn:tenant-a may name only its own partitions",
					 r->absent);
			else
				snprintf(want, sizeof(want),
					 "permission denied: partition other-3 "
					 "belongs to another tenant");
			assert_string_equal(why, want);
			set_field(k, m, r->field, NULL, 0);
		}
		if (r->names == API_NAMES_TICKET)
			set_field(k, m, r->field, NULL, 0);
		if (r->names != API_NAMES_FILTERED) {
			/* naming nothing */
			rc = authz_decide(&d, &who, k, &q, &st, why, sizeof(why));
			if (r->needs) {
				snprintf(want, sizeof(want),
					 "permission denied: cn:tenant-a is a tenant and %s (%s)",
					 r->needs, r->field);
				assert_int_equal(rc, -1);
				assert_string_equal(why, want);
			} else {
				assert_int_equal(rc, 0); /* (its handler's INVALID) */
			}
		}
		free(m);
	}
	assert_true(rules >= 5); /* (GetState, Watch, GetSchedule, Reconfigure, ...) */
}

/* A host's agent: its own host's ReportLinks through; another host's, one
 * naming none, and every other request (a read, a failure report, a
 * change of the fabric) refused, naming only its own host. */
static void test_host_role(void **state)
{
	static struct ofcd_loop l;
	static struct ofcd d = {.loop = &l};
	Ofc__V1__Principal gw;
	struct principal who = sender(GW_HOST, &gw);
	const struct api_request *k = &api_requests[API_REPORT_LINKS];
	Ofc__V1__Request q;
	ProtobufCMessage *m = request_of(k, &q);
	Ofc__V1__Status st;
	char why[512];

	(void)state;
	assert_int_equal(authz_decide(&d, &who, k, &q, &st, why, sizeof(why)), 0);
	q.report_links->host = "h9";
	assert_int_equal(authz_decide(&d, &who, k, &q, &st, why, sizeof(why)), -1);
	assert_int_equal(st, OFC__V1__STATUS__STATUS_DENIED);
	assert_string_equal(why, "permission denied: cn:hostd-h3 speaks for host h3, not h9");
	q.report_links->host = NULL;
	assert_int_equal(authz_decide(&d, &who, k, &q, &st, why, sizeof(why)), -1);
	assert_string_equal(why, "permission denied: cn:hostd-h3 is a host's agent and reports "
				 "its own host's links only (host)");
	free(m);
	/* a host role whose policy gave no host reports nothing */
	gw.host = NULL;
	m = request_of(k, &q);
	assert_int_equal(authz_decide(&d, &who, k, &q, &st, why, sizeof(why)), -1);
	free(m);
	gw.host = "h3";
	for (size_t i = 0; i < API_NKINDS; i++) {
		if (i == API_REPORT_LINKS)
			continue;
		k = &api_requests[i];
		m = request_of(k, &q);
		assert_int_equal(authz_decide(&d, &who, k, &q, &st, why, sizeof(why)), -1);
		assert_string_equal(why,
				    "permission denied: cn:hostd-h3 is host h3's agent; it may "
				    "only report h3's links");
		free(m);
	}
	assert_false(authz_sees_all(&who));
	assert_true(authz_public(&who));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_tenant_cancels_only_its_own),
	    cmocka_unit_test(test_admin_and_socket_cancel_any),
	    cmocka_unit_test(test_every_request_by_every_sender),
	    cmocka_unit_test(test_refusals_say_why),
	    cmocka_unit_test(test_tenant_rules),
	    cmocka_unit_test(test_host_role),
	    cmocka_unit_test(test_sees_all),
	    cmocka_unit_test(test_tenant_sees_no_peer),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
