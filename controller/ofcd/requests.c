/* A request through ofcd, one way for every sender: decode (handle_frame)
 * -> principal (a socket's peer or the gateway's principal) -> one
 * authoriser (authz.c, by the request table's flags) -> admission (the
 * follower's gate) -> the row's handler (read_requests.c,
 * mutation_requests.c). ofcd_open plugs this chain into the connections
 * (d->loop->chain). */
#include "controller/ofcd/conn.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* ---- frames -------------------------------------------------------------------------- */

/* Each request kind's handler, by the request table's rows (controller/api):
 * a kind without one is refused at the start (ofcd_open). */
static int (*const handlers[API_NKINDS])(const struct request *rq) = {
    [API_APPLY_CONFIG] = apply_config_request,
    [API_RECONFIGURE] = reconfigure_request,
    [API_GET_SCHEDULE] = get_schedule,
    [API_GET_STATE] = get_state,
    [API_WATCH] = watch,
    [API_CANCEL] = cancel,
    [API_REPORT_FAILURE] = report_failure,
    [API_RELEASE_PARTITION] = release_partition,
    [API_GET_METRICS] = get_metrics,
    [API_GET_PLAN] = get_plan,
    [API_MOVE_TO_PHASE] = move_to_phase,
    [API_ADOPT] = adopt_request,
    [API_TESTBED_RUN] = testbed_run_request,
    [API_TESTBED_CHECK] = testbed_check_request,
    [API_TESTBED_DOWN] = testbed_check_request,
    [API_TESTBED_UP] = testbed_up_request,
    [API_DRAIN] = drain_request,
    [API_REPORT_MPI] = report_mpi,
    [API_TESTBED_MPIRUN] = testbed_mpirun_request,
    [API_REPORT_LINKS] = report_links,
};

/* The chain's second step, who a request is from: the socket's peer, or
 * the principal ofc-gateway names, which it must, and only on the gateway
 * socket. Refused: answered and -1. */
static int principal_of(struct conn *c, const Ofc__V1__Request *req, struct principal *who)
{
	struct ofcd *d = c->d;
	const Ofc__V1__Principal *p = req->principal;

	if (p && !c->gw) {
		ofcd_log_peer(d, OFCD_LOG_WARNING,
			      "uid %u pid %d sent a request with a principal on the %s socket: "
			      "refused",
			      c->peer.uid, c->peer.pid, c->ro ? "read-only" : "main");
		reply(c, req->id, OFC__V1__STATUS__STATUS_DENIED,
		      "permission denied: a principal is taken only from ofc-gateway on the "
		      "gateway socket");
		return -1;
	}
	if (c->gw && (!p || !p->identity || !*p->identity || !p->has_role)) {
		ofcd_log_peer(d, OFCD_LOG_WARNING,
			      "the gateway (pid %d) sent a request without a principal: refused",
			      c->peer.pid);
		reply(c, req->id, OFC__V1__STATUS__STATUS_DENIED,
		      "permission denied: a request on the gateway socket carries its principal");
		return -1;
	}
	*who = (struct principal){
	    .gateway = c->gw, .ro = c->ro, .admin = c->admin, .peer = c->peer, .p = p};
	return 0;
}

/* The third, one authoriser for every sender (authz.c): refused requests
 * are counted, logged as their sender's kind says, and answered. */
static int authorise(const struct request *rq)
{
	struct conn *c = rq->c;
	struct ofcd *d = c->d;
	Ofc__V1__Status st;
	char why[512];

	if (authz_decide(d, &rq->who, rq->k, rq->req, &st, why, sizeof(why)) == 0)
		return 0;
	d->loop->metrics.denied++;
	if (rq->who.gateway)
		ofcd_log_peer(d, OFCD_LOG_WARNING, "denied to %.64s (%s) through the gateway: %s",
			      rq->who.p->identity, authz_role_name(rq->who.p), why);
	else
		ofcd_log_peer(d, OFCD_LOG_WARNING,
			      "denied %s to uid %u gid %u pid %d on the %s socket", rq->k->word,
			      c->peer.uid, c->peer.gid, c->peer.pid, c->ro ? "read-only" : "main");
	reply(c, rq->req->id, st, "%s", why);
	return -1;
}

/* The fourth, admission: a kind only the leader runs (API_LEADER) reaches
 * a replica that does not lead, or leads without etcd's word (ARCHITECTURE,
 * "Seams"). Answered with who leads, and -1. */
static int cluster_gate(const struct request *rq)
{
	struct conn *c = rq->c;
	struct ofcd *d = c->d;
	Ofc__V1__Response r = OFC__V1__RESPONSE__INIT;
	struct arena a = {0};
	char msg[900];

	if (!d->clustered || !rq->k || !(rq->k->flags & API_LEADER))
		return 0;
	if (cluster_refresh(d))
		changed(d);
	r.status = cluster_refusal(d, &d->loop->cl, d->loop->cfg->f->name, msg, sizeof(msg));
	/* Leading but not taken over yet: the takeover runs first, then it. */
	if (r.status == OFC__V1__STATUS__STATUS_OK)
		return 0;
	r.has_id = r.has_status = 1;
	r.id = rq->req->id;
	r.message = msg;
	r.leader = cluster_refusal_leader(&a, &d->loop->cl);
	d->loop->errors++;
	send_response(c, &r);
	arena_free(&a);
	return -1;
}

/* A Request without a body: the answer lists the bodies there are. */
static void no_body(struct conn *c, uint64_t id)
{
	struct strbuf sb = STRBUF_INIT;

	for (size_t i = 0; i < API_NKINDS; i++)
		sb_printf(&sb, "%s%s", i ? ", " : "", api_requests[i].field);
	reply(c, id, OFC__V1__STATUS__STATUS_INVALID,
	      "request %llu has no body: expected one of %s", (unsigned long long)id, sb.buf);
	sb_free(&sb);
}

/* A decoded request through the chain: principal -> authorisation ->
 * admission -> its handler. raw, len: its bytes (a mutation's job keeps
 * them). A takeover's replay of the last leader's queue comes here too,
 * past the cluster's gate (it runs as the leader taking over). */
static void run_request(struct conn *c, const Ofc__V1__Request *req, const uint8_t *raw, size_t len)
{
	struct request rq = {
	    .c = c, .req = req, .raw = raw, .len = len, .k = api_request_of(req->body_case)};

	if (rq.k && !c->replay)
		c->d->loop->metrics.received[rq.k->kind]++;
	if (principal_of(c, req, &rq.who) < 0 || authorise(&rq) < 0 ||
	    (!c->replay && cluster_gate(&rq) < 0))
		return;
	if (!rq.k) {
		no_body(c, req->id);
		return;
	}
	handlers[rq.k->kind](&rq);
}

/* The chain's first step, decoding: bytes that are not a Request, or hold
 * a NUL byte in a string, are answered INVALID here. */
static int handle_frame(struct conn *c, const uint8_t *p, uint32_t len)
{
	struct ofcd *d = c->d;
	Ofc__V1__Request *req = ofc__v1__request__unpack(NULL, len, p);

	d->loop->requests++;
	if (!req) {
		ofcd_log_peer(d, OFCD_LOG_INFO,
			      "uid %u pid %d sent %u bytes that are not a Request", c->peer.uid,
			      c->peer.pid, len);
		return reply(c, 0, OFC__V1__STATUS__STATUS_INVALID,
			     "malformed request: %u bytes that are not an ofc.v1.Request message",
			     len);
	}
	/* A string with a NUL byte would be read up to it ("h0\0x" as h0). */
	const char *field;
	if (wire_string_with_nul(&ofc__v1__request__descriptor, p, len, &field)) {
		reply(c, req->id, OFC__V1__STATUS__STATUS_INVALID,
		      "request %llu: field '%s' holds a NUL byte; names, specs and paths are text "
		      "without one",
		      (unsigned long long)req->id, field);
		ofc__v1__request__free_unpacked(req, NULL);
		return 0;
	}
	run_request(c, req, p, len);
	ofc__v1__request__free_unpacked(req, NULL);
	return 0;
}

/* ofcd.h: the daemon, its connections calling this chain (d->loop->chain). */
int ofcd_open(const struct ofcd_opts *o, struct ofcd **out, struct ofc_error *err)
{
	static const struct ofcd_chain chain = {handle_frame, run_request};

	*out = NULL;
	for (size_t i = 0; i < API_NKINDS; i++)
		if (!handlers[i])
			return ofc_error_set(err, OFC_E_RUNTIME,
					     "the request table's %s has no handler in ofcd",
					     api_requests[i].name);
	for (int k = 1; k < JOB_NKINDS; k++)
		if (job_table[k].thread == JOB_ON_MUTATION && !job_runs_on_worker((enum job_kind)k))
			return ofc_error_set(
			    err, OFC_E_RUNTIME,
			    "the job table's %s has no handler on the mutation worker",
			    job_table[k].name);
	return server_open(o, &chain, out, err);
}
