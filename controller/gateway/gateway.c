/* ofc-gateway's HTTPS server (gateway.h, docs/control.md "The
 * network API").
 *
 * libmicrohttpd with GnuTLS, a thread per connection: each thread blocks
 * on ofcd for its own requests, streams included, and nothing it waits for
 * holds another connection up. Bounds (all documented in docs/control.md):
 * --max-connections at once, --max-connections-per-address of them from
 * one address, half of them before their handshake (admit.c); a
 * connection's TLS handshake, request line,
 * headers and body must all have arrived within --read-timeout of its
 * start or of its previous answer (the watchdog shuts down what is late:
 * slowloris, a handshake never finished, an idle keep-alive); headers
 * within 32 KiB (MHD's pool); bodies within --max-body; no byte either way
 * for --idle-timeout (a Watch reader that never reads); ofcd's answer
 * within --request-timeout. */
#include "controller/gateway/internal.h"

#include "controller/api/api.h"
#include "controller/export/export.h"

#include <arpa/inet.h>
#include <errno.h>
#include <json-c/json.h>
#include <microhttpd.h>
#include <netdb.h>
#include <poll.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#define HEADER_POOL	(32u << 10) /* MHD's memory per connection: headers fit in it */
#define WATCH_KEEPALIVE 15.0	    /* s: an empty line to a quiet watcher */
#define STREAM_BLOCK	(64u << 10)
#define SEND_BUFFER	(128 << 10) /* SO_SNDBUF of a client connection */

struct gateway {
	struct gw_opts o;
	struct MHD_Daemon *mhd;
	int listen_fd;
	unsigned port;
	char *cert_pem, *key_pem, *ca_pem;
	pthread_rwlock_t lock; /* trust and policy, swapped by a reload */
	struct gw_trust *trust;
	struct gw_policy *policy;
	struct upstream up;
	struct gw_cache cache;
	struct gw_shares shares; /* big states (share.c) */
	struct gw_ui *ui;	 /* the page (NULL: none) */
	struct gw_log log;
	struct gw_conns conns; /* every connection (MHD's socket contexts) */
	pthread_t watchdog;
	bool watchdog_started;
	int wake_fd;
	atomic_int stop_req;
	atomic_ullong n_handshakes, n_refused, n_requests, n_reload_failures;
};

/* A line of the gateway's own; a stranger's (a kind) through gw_logf. */
#define gw_log(g, level, ...) gw_logf(&(g)->log, GW_LOG_ANY, level, __VA_ARGS__)

/* ---- connections and the watchdog ------------------------------------------ */

/* A quiet Watch gets something at least twice per --idle-timeout, so only
 * a client that does not read is cut by it. */
static double keepalive(const struct gateway *g)
{
	return g->o.idle_timeout / 2 < WATCH_KEEPALIVE ? g->o.idle_timeout / 2 : WATCH_KEEPALIVE;
}

/* The handshake's check of the client's certificate (set on each session
 * as it starts): refused here, the connection ends before any HTTP. */
static int verify_peer(gnutls_session_t s)
{
	struct MHD_Connection *mc = gnutls_session_get_ptr(s);
	const union MHD_ConnectionInfo *ci =
	    mc ? MHD_get_connection_info(mc, MHD_CONNECTION_INFO_SOCKET_CONTEXT) : NULL;
	struct gw_conn *c = ci ? ci->socket_context : NULL;
	char who[300], why[200];
	int rc;

	if (!c)
		return GNUTLS_E_CERTIFICATE_ERROR; /* cannot tell: refuse */
	pthread_rwlock_rdlock(&c->g->lock);
	rc = gw_peer_verify(s, c->g->trust, who, sizeof(who), why, sizeof(why));
	pthread_rwlock_unlock(&c->g->lock);
	if (rc < 0) {
		c->refusal_logged = true;
		atomic_fetch_add(&c->g->n_refused, 1);
		if (rc == -1) /* (-2: a stale CRL, said in the last minute) */
			gw_logf(&c->g->log, GW_LOG_CERT, 4,
				"refused TLS client %s: certificate %s: %s", c->peer, who, why);
		return GNUTLS_E_CERTIFICATE_ERROR;
	}
	if (!gw_conn_verified(&c->g->conns, c))
		return GNUTLS_E_CERTIFICATE_ERROR; /* closed meanwhile: it gave way */
	while (c->nnames)
		free(c->names[--c->nnames]);
	c->nnames = gw_peer_names(s, c->names);
	atomic_fetch_add(&c->g->n_handshakes, 1);
	return 0;
}

static void notify_conn(void *cls, struct MHD_Connection *mc, void **socket_context,
			enum MHD_ConnectionNotificationCode code)
{
	struct gateway *g = cls;

	if (code == MHD_CONNECTION_NOTIFY_STARTED) {
		const union MHD_ConnectionInfo *fi =
		    MHD_get_connection_info(mc, MHD_CONNECTION_INFO_CONNECTION_FD);
		const union MHD_ConnectionInfo *ai =
		    MHD_get_connection_info(mc, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
		const union MHD_ConnectionInfo *ti =
		    MHD_get_connection_info(mc, MHD_CONNECTION_INFO_GNUTLS_SESSION);
		struct gw_conn *c =
		    gw_conn_start(&g->conns, fi ? fi->connect_fd : -1, ai ? ai->client_addr : NULL);

		c->g = g;
		/* What the kernel holds for a client that does not read: a
		 * quarter of a MiB (the kernel doubles this), not the several
		 * MiB autotuning grows to, so 1,000 such clients hold little and
		 * a stalled one stops the sender soon (--idle-timeout cuts it). */
		int sndbuf = SEND_BUFFER;
		if (c->fd >= 0)
			setsockopt(c->fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf));
		*socket_context = c;
		if (ti && ti->tls_session) {
			gnutls_session_t s = (gnutls_session_t)ti->tls_session;

			gnutls_certificate_server_set_request(s, GNUTLS_CERT_REQUIRE);
			gnutls_session_set_verify_function(s, verify_peer);
		}
		return;
	}
	if (*socket_context && gw_conn_end(&g->conns, *socket_context))
		atomic_fetch_add(&g->n_refused, 1);
	*socket_context = NULL;
}

static enum MHD_Result admit(void *cls, const struct sockaddr *sa, socklen_t len)
{
	struct gateway *g = cls;

	return gw_conns_admit(&g->conns, sa, len) ? MHD_YES : MHD_NO;
}

static struct gw_conn *conn_of(struct MHD_Connection *mc)
{
	const union MHD_ConnectionInfo *ci =
	    MHD_get_connection_info(mc, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	return ci ? ci->socket_context : NULL;
}

/* Every second: shut down connections whose handshake, request line,
 * headers and body have not all arrived within --read-timeout, and say
 * what the log left out in windows that ended. */
static void *watchdog(void *arg)
{
	struct gateway *g = arg;

	while (!atomic_load(&g->stop_req)) {
		struct pollfd p = {.fd = g->wake_fd, .events = POLLIN};
		double now = now_seconds();

		gw_conns_sweep(&g->conns, now);
		gw_log_flush(&g->log, now);
		poll(&p, 1, 1000);
	}
	return NULL;
}

/* ---- answers ------------------------------------------------------------------ */

static unsigned http_status(Ofc__V1__Status st)
{
	switch (st) {
	case OFC__V1__STATUS__STATUS_OK:
		return MHD_HTTP_OK;
	case OFC__V1__STATUS__STATUS_INVALID:
		return MHD_HTTP_BAD_REQUEST;
	case OFC__V1__STATUS__STATUS_DENIED:
		return MHD_HTTP_FORBIDDEN;
	case OFC__V1__STATUS__STATUS_BUSY:
		return MHD_HTTP_SERVICE_UNAVAILABLE;
	case OFC__V1__STATUS__STATUS_NOT_FOUND:
		return MHD_HTTP_NOT_FOUND;
	case OFC__V1__STATUS__STATUS_FAILED:
	case OFC__V1__STATUS__STATUS_CANCELLED:
		return MHD_HTTP_CONFLICT;
	case OFC__V1__STATUS__STATUS_UNAVAILABLE:
		return MHD_HTTP_NOT_IMPLEMENTED;
	case OFC__V1__STATUS__STATUS_NOT_LEADER: /* (with no URL to send the client to) */
		return MHD_HTTP_SERVICE_UNAVAILABLE;
	default:
		return MHD_HTTP_INTERNAL_SERVER_ERROR;
	}
}

/* close: the connection ends with the answer (a request the gateway could
 * not read: what follows it may not be where the client meant). */
/* (gzipped when the client accepts it: encode.c) */
static enum MHD_Result send_bytes(struct MHD_Connection *mc, unsigned code, const char *type,
				  char *body, size_t len, bool close)
{
	return gw_send_encoded(mc, code, type, body, len, close, NULL);
}

/* A Response as JSON, one line, without its id (the number of the
 * gateway's request to ofcd, nothing the client sent). */
static char *response_json(const Ofc__V1__Response *r, size_t *len)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);
	struct json_writer w;
	Ofc__V1__Response c = *r;

	c.has_id = 0;
	c.id = 0;
	jw_init(&w, f, false);
	pb_write_json(&w, &c.base);
	jw_finish(&w);
	fclose(f);
	*len = n;
	return buf;
}

/* A replica of ofcd that does not lead names the leader: its
 * gateway's URL, as the leader's --advertise gave it, if it is one a
 * Location header can carry (http(s)://, printable, bounded). */
static const char *leader_url(const Ofc__V1__Response *r)
{
	const char *u =
	    r->status == OFC__V1__STATUS__STATUS_NOT_LEADER && r->leader ? r->leader->url : NULL;

	if (!u || (strncmp(u, "https://", 8) != 0 && strncmp(u, "http://", 7) != 0) ||
	    strlen(u) > 512)
		return NULL;
	for (const char *p = u; *p; p++)
		if (*p <= ' ' || *p > '~')
			return NULL;
	return u;
}

/* ofcd's answer as JSON. path: the route asked (a mutation's): a follower's
 * NOT_LEADER that names the leader's URL becomes 307 Temporary Redirect to
 * the same route there (the method and body kept: curl -L, any HTTP
 * client's redirect), the answer still in the body; without a URL it is
 * 503 with the leader in the body. */
static enum MHD_Result send_response(struct MHD_Connection *mc, const Ofc__V1__Response *r,
				     const char *path)
{
	size_t len;
	char *body = response_json(r, &len);
	const char *url = path ? leader_url(r) : NULL;

	if (!url)
		return send_bytes(mc,
				  r->has_over_share && r->over_share ? MHD_HTTP_TOO_MANY_REQUESTS
								     : http_status(r->status),
				  "application/json", body, len, false);
	size_t n = strlen(url);
	char *loc = xasprintf("%.*s%s", (int)(n && url[n - 1] == '/' ? n - 1 : n), url, path);
	struct MHD_Response *resp =
	    MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);

	MHD_add_response_header(resp, "Content-Type", "application/json");
	MHD_add_response_header(resp, "Location", loc);
	enum MHD_Result rc = MHD_queue_response(mc, MHD_HTTP_TEMPORARY_REDIRECT, resp);
	MHD_destroy_response(resp);
	free(loc);
	return rc;
}

/* An answer of the gateway's own (no ofcd behind it): the Response shape. */
static enum MHD_Result send_error(struct MHD_Connection *mc, unsigned code, Ofc__V1__Status st,
				  const char *fmt, ...) OFC_PRINTF(4, 5);
static enum MHD_Result send_error(struct MHD_Connection *mc, unsigned code, Ofc__V1__Status st,
				  const char *fmt, ...)
{
	Ofc__V1__Response r = OFC__V1__RESPONSE__INIT;
	char msg[600];
	va_list ap;
	size_t len;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	r.has_status = 1;
	r.status = st;
	r.message = msg;
	char *body = response_json(&r, &len);
	return send_bytes(mc, code, "application/json", body, len, code == MHD_HTTP_BAD_REQUEST);
}

/* A stream over the streams' budget (upstream.c): 429, and when to ask
 * again (a stream ends when its client goes; a Watch's every 15 s of
 * quiet tells whether it did). */
static enum MHD_Result send_busy(struct MHD_Connection *mc, const char *why)
{
	Ofc__V1__Response r = OFC__V1__RESPONSE__INIT;
	size_t len;

	r.has_status = 1;
	r.status = OFC__V1__STATUS__STATUS_BUSY;
	r.message = (char *)why;
	char *body = response_json(&r, &len);
	struct MHD_Response *resp =
	    MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);

	MHD_add_response_header(resp, "Content-Type", "application/json");
	MHD_add_response_header(resp, "Retry-After", "15");
	enum MHD_Result rc = MHD_queue_response(mc, MHD_HTTP_TOO_MANY_REQUESTS, resp);
	MHD_destroy_response(resp);
	return rc;
}

/* A stream for q, counted under its principal and the client's address. */
static int stream_open(struct gateway *g, struct MHD_Connection *mc, Ofc__V1__Request *q,
		       struct up_stream *s, struct ofc_error *err)
{
	const union MHD_ConnectionInfo *ci =
	    MHD_get_connection_info(mc, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	char addr[INET6_ADDRSTRLEN + 1] = "";
	const struct sockaddr *sa = ci ? ci->client_addr : NULL;

	if (sa)
		getnameinfo(sa,
			    sa->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6)
						      : sizeof(struct sockaddr_in),
			    addr, sizeof(addr), NULL, 0, NI_NUMERICHOST);
	return up_stream_open(&g->up, q, s, q->principal ? q->principal->identity : NULL,
			      addr[0] ? addr : NULL, err);
}

/* ---- routes -------------------------------------------------------------------- */

/* The request kinds' routes are the request table's (controller/api);
 * one more is the gateway's own: the protobuf encoding, a Request in and
 * ofcd's frames out (ofc --server, the Python client). */
#define CALL_ROUTE "/v1/call"

/* One HTTP request (MHD's per-request context). */
struct gw_req {
	const struct api_request *rt; /* NULL: none, or call */
	bool call;		      /* POST /v1/call */
	bool ui;		      /* the page: /ui, /ui/... (ui.c) */
	unsigned early_code;	      /* answered before the body: this status */
	char early_msg[400];
	struct strbuf body;
	bool too_big;
	Ofc__V1__Principal pr;
	char *identity;
	char **parts;
	uint32_t nparts;
};

static void req_free(struct gw_req *r)
{
	if (!r)
		return;
	sb_free(&r->body);
	free(r->identity);
	for (uint32_t i = 0; i < r->nparts; i++)
		free(r->parts[i]);
	free(r->parts);
	free(r);
}

static void completed(void *cls, struct MHD_Connection *mc, void **req_cls,
		      enum MHD_RequestTerminationCode toe)
{
	struct gateway *g = cls;
	struct gw_conn *c = conn_of(mc);

	(void)toe;
	req_free(*req_cls);
	*req_cls = NULL;
	if (c) {
		c->requests++;
		c->nul = false;
	}
	gw_conn_phase(&g->conns, c, GW_READING); /* the next request's window */
}

/* The principal of the connection's certificate, by the policy; false
 * (with r->early_*) when the policy does not name it. */
static bool principal(struct gateway *g, struct MHD_Connection *mc, struct gw_req *r)
{
	const struct gw_conn *c = conn_of(mc);
	char *const *names = c ? c->names : NULL;
	uint32_t n = c && c->verified ? c->nnames : 0;
	const struct gw_policy_entry *e;

	pthread_rwlock_rdlock(&g->lock);
	e = gw_policy_match(g->policy, names, n);
	if (e) {
		r->identity = xstrdup(e->identity);
		r->nparts = e->npartitions;
		r->parts = xcalloc(e->npartitions + 1, sizeof(char *));
		for (uint32_t i = 0; i < e->npartitions; i++)
			r->parts[i] = xstrdup(e->partitions[i]);
		ofc__v1__principal__init(&r->pr);
		r->pr.identity = r->identity;
		r->pr.has_role = 1;
		r->pr.role = e->role == GW_ROLE_ADMIN ? OFC__V1__PRINCIPAL__ROLE__ROLE_ADMIN
			     : e->role == GW_ROLE_READ_ONLY
				 ? OFC__V1__PRINCIPAL__ROLE__ROLE_READ_ONLY
			     : e->role == GW_ROLE_HOST ? OFC__V1__PRINCIPAL__ROLE__ROLE_HOST
						       : OFC__V1__PRINCIPAL__ROLE__ROLE_TENANT;
		if (e->role == GW_ROLE_HOST) {
			r->pr.host = r->parts[0]; /* (the entry's one partition) */
		} else {
			r->pr.n_partitions = r->nparts;
			r->pr.partitions = r->parts;
		}
	}
	pthread_rwlock_unlock(&g->lock);
	if (!e) {
		r->early_code = MHD_HTTP_FORBIDDEN;
		snprintf(r->early_msg, sizeof(r->early_msg),
			 "permission denied: the certificate (%.100s) is not in the gateway's "
			 "policy",
			 n ? names[0] : "no name");
		gw_logf(&g->log, GW_LOG_POLICY, 4,
			"refused %s: certificate %s is in no line of the policy", c ? c->peer : "?",
			n ? names[0] : "(no name)");
	}
	return e != NULL;
}

static enum MHD_Result query_arg(void *cls, enum MHD_ValueKind kind, const char *key,
				 const char *value)
{
	json_object *o = cls;

	(void)kind;
	/* size=1MiB: GetSchedule's size_bytes with units, as ofc's --size. */
	if (strcmp(key, "size") == 0 && value) {
		uint64_t v;
		const char *why;
		char num[32];

		if (parse_size(value, &v, &why) == 0) {
			snprintf(num, sizeof(num), "%llu", (unsigned long long)v);
			json_object_object_add(o, "size_bytes", json_object_new_string(num));
			return MHD_YES;
		}
	}
	json_object_object_add(o, key, value ? json_object_new_string(value) : NULL);
	return MHD_YES;
}

/* The route's message from the query string (GET) or the JSON body. */
static int route_message(struct MHD_Connection *mc, const struct gw_req *r, ProtobufCMessage **m,
			 bool *want_pb, struct ofc_error *err)
{
	const struct api_request *rt = r->rt;

	if (rt->rt == API_RT_BODY)
		return pb_read_json(rt->desc, r->body.buf ? r->body.buf : "", r->body.len, m, err);
	json_object *o = json_object_new_object();
	MHD_get_connection_values(mc, MHD_GET_ARGUMENT_KIND, query_arg, o);
	/* format=pb: the schedule as protobuf (also Accept: application/x-protobuf) */
	json_object *f = NULL;
	if (json_object_object_get_ex(o, "format", &f)) {
		const char *v = f ? json_object_get_string(f) : "";
		if (strcmp(v, "pb") && strcmp(v, "json")) {
			json_object_put(o);
			return ofc_error_set(err, OFC_E_INPUT, "format: pb or json, not '%.20s'",
					     v);
		}
		*want_pb = strcmp(v, "pb") == 0;
		json_object_object_del(o, "format");
	}
	int rc = pb_read_json_object(rt->desc, o, true, m, err);
	json_object_put(o);
	return rc;
}

/* ---- Watch: one JSON Response a line, an empty line when quiet ------------------ */

struct watch_ctx {
	struct gateway *g;
	struct up_stream s;
	char *pending;
	size_t len, off;
	struct gw_zstream *z; /* gzip, when the client takes it */
	bool ended;
};

/* The pending line gzipped, when the client takes gzip; last: the end
 * (zlib failing ends the stream too: plain bytes amid gzip would be
 * garbage to the client). */
static void watch_zip(struct watch_ctx *w, bool last)
{
	size_t n = 0;
	char *z =
	    w->z ? gw_zstream_put(w->z, w->pending ? w->pending : "", w->len, last, &n) : NULL;

	if (!w->z)
		return;
	free(w->pending);
	w->pending = z;
	w->len = n;
	if (!z || last)
		w->ended = true;
}

static ssize_t watch_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct watch_ctx *w = cls;

	(void)pos;
	while (w->off == w->len) {
		if (w->ended)
			return MHD_CONTENT_READER_END_OF_STREAM;
		Ofc__V1__Response *r;
		struct ofc_error err = {0};
		int k = up_stream_next(&w->s, keepalive(w->g), &r, &err);

		free(w->pending);
		w->pending = NULL;
		w->off = w->len = 0;
		if (k < 0 && !w->z)
			return MHD_CONTENT_READER_END_OF_STREAM; /* ofcd went away or stopped */
		if (k < 0) {					 /* (gzip's trailer first) */
			watch_zip(w, true);
			continue;
		}
		if (k == 0) {
			w->pending = xstrdup("\n");
			w->len = 1;
		} else {
			w->pending = response_json(r, &w->len);
			ofc__v1__response__free_unpacked(r, NULL);
		}
		watch_zip(w, false);
	}
	size_t n = w->len - w->off < max ? w->len - w->off : max;
	memcpy(buf, w->pending + w->off, n);
	w->off += n;
	return (ssize_t)n;
}

static void watch_free(void *cls)
{
	struct watch_ctx *w = cls;

	up_stream_close(&w->s);
	free(w->pending);
	gw_zstream_free(w->z);
	free(w);
}

static enum MHD_Result start_watch(struct gateway *g, struct MHD_Connection *mc,
				   Ofc__V1__Request *q)
{
	struct watch_ctx *w = xcalloc(1, sizeof(*w));
	struct ofc_error err = {0};
	Ofc__V1__Response *ack = NULL;

	w->g = g;
	int orc = stream_open(g, mc, q, &w->s, &err);
	if (orc == -2) {
		watch_free(w);
		return send_busy(mc, err.msg);
	}
	if (orc < 0 || up_stream_next(&w->s, g->o.request_timeout, &ack, &err) <= 0) {
		watch_free(w);
		return send_error(mc, MHD_HTTP_BAD_GATEWAY, OFC__V1__STATUS__STATUS_UNAVAILABLE,
				  "ofcd did not answer: %s", err.msg[0] ? err.msg : "no answer");
	}
	if (ack->status != OFC__V1__STATUS__STATUS_OK) {
		enum MHD_Result rc = send_response(mc, ack, NULL);

		ofc__v1__response__free_unpacked(ack, NULL);
		watch_free(w);
		return rc;
	}
	w->pending = response_json(ack, &w->len);
	ofc__v1__response__free_unpacked(ack, NULL);
	w->z = gw_accepts_gzip(mc) ? gw_zstream_new() : NULL;
	watch_zip(w, false);
	struct MHD_Response *r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, STREAM_BLOCK,
								   watch_read, w, watch_free);
	MHD_add_response_header(r, "Content-Type", "application/x-ndjson");
	MHD_add_response_header(r, "Vary", "Accept-Encoding");
	if (w->z)
		MHD_add_response_header(r, "Content-Encoding", "gzip");
	enum MHD_Result rc = MHD_queue_response(mc, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	return rc;
}

/* ---- streamed schedules: one step held at a time ------------------------------------ */

struct sched_ctx {
	struct gateway *g;
	struct up_stream s;
	bool pb, done, first_step;
	char *tail; /* JSON: what follows the steps (the header's rest) */
	struct strbuf out;
	size_t off;
	Ofc__V1__Response **parts; /* the current step's frames */
	size_t nparts, cap;
};

/* The step made of the frames held (a first one and its continuations),
 * as a Schedule holding it (pb, merging into the header) or as JSON. */
static void emit_step(struct sched_ctx *x)
{
	size_t total = 0, k = 0;

	if (!x->nparts)
		return;
	for (size_t i = 0; i < x->nparts; i++)
		total += x->parts[i]->schedule->steps[0]->n_transfers;
	Ofc__V1__Transfer **arr = xcalloc(total + 1, sizeof(*arr));
	for (size_t i = 0; i < x->nparts; i++) {
		const Ofc__V1__Step *p = x->parts[i]->schedule->steps[0];

		for (size_t t = 0; t < p->n_transfers; t++)
			arr[k++] = p->transfers[t];
	}
	Ofc__V1__Step step = OFC__V1__STEP__INIT, *sp = &step;
	step.n_transfers = total;
	step.transfers = arr;
	if (x->pb) {
		Ofc__V1__Schedule m = OFC__V1__SCHEDULE__INIT;
		size_t n;

		m.n_steps = 1;
		m.steps = &sp;
		n = protobuf_c_message_get_packed_size(&m.base);
		uint8_t *b = xmalloc(n ? n : 1);
		protobuf_c_message_pack(&m.base, b);
		sb_add(&x->out, (const char *)b, n);
		free(b);
	} else {
		char *buf = NULL;
		size_t n = 0;
		FILE *f = open_memstream(&buf, &n);
		struct json_writer w;

		jw_init(&w, f, false);
		pb_write_json(&w, &step.base);
		fclose(f);
		if (!x->first_step)
			sb_add(&x->out, ",", 1);
		sb_add(&x->out, buf, n);
		free(buf);
	}
	x->first_step = false;
	free(arr);
	for (size_t i = 0; i < x->nparts; i++)
		ofc__v1__response__free_unpacked(x->parts[i], NULL);
	x->nparts = 0;
}

static ssize_t sched_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct sched_ctx *x = cls;

	(void)pos;
	while (x->off == x->out.len && !x->done) {
		Ofc__V1__Response *r;
		struct ofc_error err = {0};

		x->out.len = x->off = 0;
		if (up_stream_next(&x->s, x->g->o.request_timeout, &r, &err) <= 0) {
			gw_log(x->g, 4, "a streamed schedule broke off: %s",
			       err.msg[0] ? err.msg : "ofcd sent nothing in time");
			return MHD_CONTENT_READER_END_WITH_ERROR;
		}
		if (r->body_case == OFC__V1__RESPONSE__BODY_SCHEDULE && r->schedule->n_steps == 1) {
			if (!r->continues_step)
				emit_step(x);
			GROW(x->parts, x->cap, x->nparts + 1);
			x->parts[x->nparts++] = r;
			continue;
		}
		bool end = !r->more, ok = r->status == OFC__V1__STATUS__STATUS_OK;
		if (end && !ok)
			gw_log(x->g, 4, "a streamed schedule ended with %s",
			       r->message ? r->message : "an error");
		ofc__v1__response__free_unpacked(r, NULL);
		if (!end)
			continue;
		if (!ok) /* the body is cut short: the client sees a broken transfer */
			return MHD_CONTENT_READER_END_WITH_ERROR;
		emit_step(x);
		if (!x->pb)
			sb_printf(&x->out, "%s", x->tail);
		x->done = true;
	}
	if (x->off == x->out.len)
		return MHD_CONTENT_READER_END_OF_STREAM;
	size_t n = x->out.len - x->off < max ? x->out.len - x->off : max;
	memcpy(buf, x->out.buf + x->off, n);
	x->off += n;
	return (ssize_t)n;
}

static void sched_ctx_free(void *cls)
{
	struct sched_ctx *x = cls;

	up_stream_close(&x->s);
	for (size_t i = 0; i < x->nparts; i++)
		ofc__v1__response__free_unpacked(x->parts[i], NULL);
	free(x->parts);
	free(x->tail);
	sb_free(&x->out);
	free(x);
}

/* GET /v1/schedule: asked of ofcd as a stream; answered as one body
 * whatever ofcd sends (a stream, or one frame for an error, a summary or
 * a schedule ofcd keeps). */
static enum MHD_Result start_schedule(struct gateway *g, struct MHD_Connection *mc,
				      Ofc__V1__Request *q, bool pb)
{
	struct sched_ctx *x = xcalloc(1, sizeof(*x));
	struct ofc_error err = {0};
	Ofc__V1__Response *first = NULL;

	x->g = g;
	x->pb = pb;
	x->first_step = true;
	if (!q->get_schedule->summary_only) {
		q->get_schedule->has_stream = 1;
		q->get_schedule->stream = true;
	}
	int orc = stream_open(g, mc, q, &x->s, &err);
	if (orc == -2) {
		sched_ctx_free(x);
		return send_busy(mc, err.msg);
	}
	if (orc < 0 || up_stream_next(&x->s, g->o.request_timeout, &first, &err) <= 0) {
		sched_ctx_free(x);
		return send_error(mc, MHD_HTTP_BAD_GATEWAY, OFC__V1__STATUS__STATUS_UNAVAILABLE,
				  "ofcd did not answer: %s", err.msg[0] ? err.msg : "no answer");
	}
	if (first->status != OFC__V1__STATUS__STATUS_OK ||
	    first->body_case != OFC__V1__RESPONSE__BODY_SCHEDULE || (!first->more && !pb)) {
		enum MHD_Result rc = send_response(mc, first, NULL);

		ofc__v1__response__free_unpacked(first, NULL);
		sched_ctx_free(x);
		return rc;
	}
	if (pb) {
		size_t n = protobuf_c_message_get_packed_size(&first->schedule->base);
		uint8_t *b = xmalloc(n ? n : 1);

		protobuf_c_message_pack(&first->schedule->base, b);
		sb_add(&x->out, (const char *)b, n);
		free(b);
	} else {
		size_t n;
		char *json = response_json(first, &n);
		char *at = strstr(json, "\"steps\":[]");

		if (!at) { /* cannot happen: pb_write_json writes every repeated field */
			free(json);
			ofc__v1__response__free_unpacked(first, NULL);
			sched_ctx_free(x);
			return send_error(mc, MHD_HTTP_INTERNAL_SERVER_ERROR,
					  OFC__V1__STATUS__STATUS_INTERNAL,
					  "no steps in the header");
		}
		at += strlen("\"steps\":[");
		sb_add(&x->out, json, (size_t)(at - json));
		x->tail = xstrdup(at);
		free(json);
	}
	x->done = !first->more;
	ofc__v1__response__free_unpacked(first, NULL);
	struct MHD_Response *r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, STREAM_BLOCK,
								   sched_read, x, sched_ctx_free);
	MHD_add_response_header(r, "Content-Type",
				pb ? "application/x-protobuf" : "application/json");
	enum MHD_Result rc = MHD_queue_response(mc, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	return rc;
}

/* ---- /v1/call: ofcd's frames as they come --------------------------------------------
 * The answer is the frames ofcd sends for the request (4-byte length, a
 * Response), one for most requests, a stream's until one without `more`, a
 * Watch's until either side goes; an empty frame (length 0) after 15 s of
 * quiet keeps a Watch's connection alive. */

struct call_ctx {
	struct gateway *g;
	struct up_stream s;
	bool watch, done;
	struct strbuf out;
	size_t off;
};

static ssize_t call_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct call_ctx *x = cls;

	(void)pos;
	while (x->off == x->out.len && !x->done) {
		Ofc__V1__Response *r;
		struct ofc_error err = {0};
		uint8_t h[4];
		int k = up_stream_next(&x->s, x->watch ? keepalive(x->g) : x->g->o.request_timeout,
				       &r, &err);

		x->out.len = x->off = 0;
		if (k < 0 || (k == 0 && !x->watch))
			return x->watch ? MHD_CONTENT_READER_END_OF_STREAM
					: MHD_CONTENT_READER_END_WITH_ERROR;
		if (k == 0) {
			frame_len_put(h, 0);
			sb_add(&x->out, (const char *)h, 4);
			break;
		}
		size_t n = protobuf_c_message_get_packed_size(&r->base);
		frame_len_put(h, (uint32_t)n);
		sb_add(&x->out, (const char *)h, 4);
		uint8_t *b = xmalloc(n ? n : 1);
		protobuf_c_message_pack(&r->base, b);
		sb_add(&x->out, (const char *)b, n);
		free(b);
		x->done = !x->watch && !r->more;
		ofc__v1__response__free_unpacked(r, NULL);
	}
	if (x->off == x->out.len)
		return MHD_CONTENT_READER_END_OF_STREAM;
	size_t n = x->out.len - x->off < max ? x->out.len - x->off : max;
	memcpy(buf, x->out.buf + x->off, n);
	x->off += n;
	return (ssize_t)n;
}

static void call_free(void *cls)
{
	struct call_ctx *x = cls;

	up_stream_close(&x->s);
	sb_free(&x->out);
	free(x);
}

/* A request of one answer (not a Watch, not a streamed schedule): on a
 * pooled connection to ofcd, its frame passed on with the client's id in
 * place of the gateway's (the rest of the bytes as ofcd packed them). */
static enum MHD_Result call_once(struct gateway *g, struct MHD_Connection *mc, Ofc__V1__Request *q,
				 uint64_t client_id)
{
	struct ofc_error err = {0};
	uint8_t *frame, pre[16];
	size_t len, skip, plen;

	int urc = up_call_frame(&g->up, q, &frame, &len, &skip, &err);
	if (urc == -2)
		return send_busy(mc, err.msg);
	if (urc < 0)
		return send_error(mc, MHD_HTTP_BAD_GATEWAY, OFC__V1__STATUS__STATUS_UNAVAILABLE,
				  "ofcd did not answer: %s", err.msg);
	/* a small answer may be a follower's: its words name the leader's URL */
	if (len < 4096)
		skip = 0;
	if (client_id && skip && (plen = up_id_prefix(client_id, pre, sizeof(pre)))) {
		char *out = xmalloc(4 + plen + len - skip);

		frame_len_put((uint8_t *)out, (uint32_t)(plen + len - skip));
		memcpy(out + 4, pre, plen);
		memcpy(out + 4 + plen, frame + skip, len - skip);
		free(frame);
		return send_bytes(mc, MHD_HTTP_OK, "application/x-ofc-frames", out,
				  4 + plen + len - skip, false);
	}
	Ofc__V1__Response *r = ofc__v1__response__unpack(NULL, len, frame);
	free(frame);
	if (!r)
		return send_error(mc, MHD_HTTP_BAD_GATEWAY, OFC__V1__STATUS__STATUS_UNAVAILABLE,
				  "ofcd sent %zu bytes that are not a Response", len);
	if (client_id && r->id) /* id 0 is about the connection: it stays */
		r->id = client_id;
	up_not_leader_words(r);
	size_t n = protobuf_c_message_get_packed_size(&r->base);
	char *out = xmalloc(4 + n);
	frame_len_put((uint8_t *)out, (uint32_t)n);
	protobuf_c_message_pack(&r->base, (uint8_t *)out + 4);
	ofc__v1__response__free_unpacked(r, NULL);
	return send_bytes(mc, MHD_HTTP_OK, "application/x-ofc-frames", out, 4 + n, false);
}

static enum MHD_Result start_call(struct gateway *g, struct MHD_Connection *mc, struct gw_req *r)
{
	Ofc__V1__Request *q = ofc__v1__request__unpack(
	    NULL, r->body.len, (const uint8_t *)(r->body.buf ? r->body.buf : ""));
	struct call_ctx *x;
	struct ofc_error err = {0};

	if (!q)
		return send_error(mc, MHD_HTTP_BAD_REQUEST, OFC__V1__STATUS__STATUS_INVALID,
				  "bad request: %zu bytes that are not an ofc.v1.Request",
				  r->body.len);
	if (q->principal) {
		ofc__v1__request__free_unpacked(q, NULL);
		return send_error(mc, MHD_HTTP_BAD_REQUEST, OFC__V1__STATUS__STATUS_INVALID,
				  "bad request: principal is the gateway's to set, from the "
				  "certificate");
	}
	uint64_t id = q->id;
	bool stream = api_streams(q); /* (the request table's row says when) */
	q->principal = &r->pr;
	atomic_fetch_add(&g->n_requests, 1);
	if (!stream) {
		enum MHD_Result ret = call_once(g, mc, q, id);

		q->principal = NULL;
		ofc__v1__request__free_unpacked(q, NULL);
		return ret;
	}
	x = xcalloc(1, sizeof(*x));
	x->g = g;
	/* (a stream kept open, its row's route a Watch's: quiet is not its end) */
	x->watch = api_request_of(q->body_case)->rt == API_RT_WATCH;
	int rc = stream_open(g, mc, q, &x->s, &err);
	q->principal = NULL;
	ofc__v1__request__free_unpacked(q, NULL);
	if (rc == -2) {
		call_free(x);
		return send_busy(mc, err.msg);
	}
	if (rc < 0) {
		call_free(x);
		return send_error(mc, MHD_HTTP_BAD_GATEWAY, OFC__V1__STATUS__STATUS_UNAVAILABLE,
				  "ofcd did not answer: %s", err.msg);
	}
	/* ofcd answers with the gateway's id: the client's goes back to it. */
	x->s.client_id = id;
	struct MHD_Response *resp = MHD_create_response_from_callback(
	    MHD_SIZE_UNKNOWN, STREAM_BLOCK, call_read, x, call_free);
	MHD_add_response_header(resp, "Content-Type", "application/x-ofc-frames");
	enum MHD_Result ret = MHD_queue_response(mc, MHD_HTTP_OK, resp);
	MHD_destroy_response(resp);
	return ret;
}

/* ---- the handler ------------------------------------------------------------------- */

/* A big state's answer (share.c): the one kept when ofcd's bytes are the
 * same, else written and kept. Takes frame. */
static enum MHD_Result answer_big_state(struct gateway *g, struct MHD_Connection *mc,
					struct gw_share_turn *turn, uint8_t *frame, size_t len,
					size_t skip)
{
	struct gw_shared *sh = gw_shares_same(&g->shares, turn, frame + skip, len - skip);

	if (!sh) {
		Ofc__V1__Response *resp = ofc__v1__response__unpack(NULL, len, frame);
		size_t jlen;

		if (!resp) {
			gw_shares_end(&g->shares, turn);
			free(frame);
			return send_error(mc, MHD_HTTP_BAD_GATEWAY,
					  OFC__V1__STATUS__STATUS_UNAVAILABLE,
					  "ofcd sent %zu bytes that are not a Response", len);
		}
		char *json = response_json(resp, &jlen);
		unsigned code = http_status(resp->status);
		ofc__v1__response__free_unpacked(resp, NULL);
		sh = gw_shares_put(&g->shares, turn, len - skip, json, jlen, code);
	}
	gw_shares_end(&g->shares, turn);
	free(frame);
	return gw_send_shared(mc, sh);
}

/* A row's answer many poll (API_CACHED: GetState): the JSON written for
 * the same bytes before, if any (cache.c); a big one's, one read at a time
 * and shared (share.c). */
static enum MHD_Result forward_state(struct gateway *g, struct MHD_Connection *mc,
				     Ofc__V1__Request *q)
{
	struct ofc_error err = {0};
	uint8_t *frame;
	size_t len, skip, jlen = 0;
	unsigned code = 0;
	struct gw_share_turn turn;
	/* (half the request's time to wait its turn, half for ofcd's answer) */
	struct gw_shared *sh =
	    gw_shares_begin(&g->shares, q, g->o.request_timeout / 2, &turn, &err);

	if (sh)
		return gw_send_shared(mc, sh);
	if (turn.refused)
		return send_busy(mc, err.msg);
	gw_shares_fetched(&turn);
	int urc = up_call_frame(&g->up, q, &frame, &len, &skip, &err);
	if (urc < 0) {
		gw_shares_end(&g->shares, &turn);
		if (urc == -2)
			return send_busy(mc, err.msg);
		gw_log(g, 3, "ofcd: %s", err.msg);
		return send_error(mc, MHD_HTTP_BAD_GATEWAY, OFC__V1__STATUS__STATUS_UNAVAILABLE,
				  "ofcd did not answer: %s", err.msg);
	}
	if (skip && len - skip > GW_CACHE_MAX_KEY)
		return answer_big_state(g, mc, &turn, frame, len, skip);
	gw_shares_small(&g->shares, &turn);
	gw_shares_end(&g->shares, &turn);
	char *json = skip ? gw_cache_get(&g->cache, frame + skip, len - skip, &jlen, &code) : NULL;
	if (!json) {
		Ofc__V1__Response *resp = ofc__v1__response__unpack(NULL, len, frame);

		if (!resp) {
			free(frame);
			return send_error(mc, MHD_HTTP_BAD_GATEWAY,
					  OFC__V1__STATUS__STATUS_UNAVAILABLE,
					  "ofcd sent %zu bytes that are not a Response", len);
		}
		json = response_json(resp, &jlen);
		code = http_status(resp->status);
		ofc__v1__response__free_unpacked(resp, NULL);
		if (skip)
			gw_cache_put(&g->cache, frame + skip, len - skip, json, jlen, code);
	}
	free(frame);
	/* A client holding this state already gets 304 and no body. */
	char etag[48];
	gw_etag(json, jlen, etag, sizeof(etag));
	if (code == MHD_HTTP_OK && gw_etag_matches(mc, etag)) {
		free(json);
		return gw_send_not_modified(mc, etag);
	}
	return gw_send_encoded(mc, code, "application/json", json, jlen, false,
			       code == MHD_HTTP_OK ? etag : NULL);
}

static enum MHD_Result forward(struct gateway *g, struct MHD_Connection *mc, struct gw_req *r)
{
	Ofc__V1__Request q = OFC__V1__REQUEST__INIT;
	ProtobufCMessage *m = NULL;
	Ofc__V1__Response *resp = NULL;
	struct ofc_error err = {0};
	bool want_pb = false;
	enum MHD_Result rc;

	if (r->call)
		return start_call(g, mc, r);
	if (route_message(mc, r, &m, &want_pb, &err) < 0)
		return send_error(mc, MHD_HTTP_BAD_REQUEST, OFC__V1__STATUS__STATUS_INVALID,
				  "bad request: %s", err.msg);
	const char *accept = MHD_lookup_connection_value(mc, MHD_HEADER_KIND, "Accept");
	if (accept && strstr(accept, "application/x-protobuf"))
		want_pb = true;
	q.principal = &r->pr;
	api_set_body(&q, r->rt, m);
	/* (a client's resend of a mutation, curl -L's too, as the same
	 * request: ofcd runs one key once; it checks the key) */
	q.request_key = (char *)MHD_lookup_connection_value(mc, MHD_HEADER_KIND, "Idempotency-Key");
	atomic_fetch_add(&g->n_requests, 1);
	/* a stream (the row's API_STREAM): kept open (a Watch's route), or
	 * put together into one body (a schedule's steps) */
	if (r->rt->flags & API_STREAM) {
		rc = r->rt->rt == API_RT_WATCH ? start_watch(g, mc, &q)
					       : start_schedule(g, mc, &q, want_pb);
		protobuf_c_message_free_unpacked(m, NULL);
		return rc;
	}
	if (r->rt->flags & API_CACHED) {
		rc = forward_state(g, mc, &q);
		protobuf_c_message_free_unpacked(m, NULL);
		return rc;
	}
	int urc = up_call(&g->up, &q, &resp, &err);
	if (urc < 0) {
		protobuf_c_message_free_unpacked(m, NULL);
		if (urc == -2)
			return send_busy(mc, err.msg);
		gw_log(g, 3, "ofcd: %s", err.msg);
		return send_error(mc, MHD_HTTP_BAD_GATEWAY, OFC__V1__STATUS__STATUS_UNAVAILABLE,
				  "ofcd did not answer: %s", err.msg);
	}
	protobuf_c_message_free_unpacked(m, NULL);
	if (r->rt->rt == API_RT_METRICS && resp->status == OFC__V1__STATUS__STATUS_OK &&
	    resp->body_case == OFC__V1__RESPONSE__BODY_METRICS) {
		pthread_mutex_lock(&g->cache.mu);
		uint64_t hits = g->cache.hits, built, shared;
		pthread_mutex_unlock(&g->cache.mu);
		gw_shares_counts(&g->shares, &built, &shared);
		hits += shared;
		pthread_rwlock_rdlock(&g->lock);
		char *trust = gw_trust_metrics(g->trust);
		pthread_rwlock_unlock(&g->lock);
		char *conns = gw_conns_metrics(&g->conns);
		char *streams = up_stream_metrics(&g->up);
		char *reads = gw_shares_metrics(&g->shares);
		char *text = xasprintf(
		    "%s# HELP ofc_gateway_tls_handshakes_total TLS handshakes with a verified "
		    "client certificate.\n# TYPE ofc_gateway_tls_handshakes_total counter\n"
		    "ofc_gateway_tls_handshakes_total %llu\n"
		    "# HELP ofc_gateway_tls_refused_total TLS clients refused (no, untrusted, "
		    "expired, revoked or non-client certificate, or a stale CRL).\n"
		    "# TYPE ofc_gateway_tls_refused_total "
		    "counter\nofc_gateway_tls_refused_total %llu\n%s"
		    "# HELP ofc_gateway_requests_total Requests forwarded to ofcd.\n"
		    "# TYPE ofc_gateway_requests_total counter\nofc_gateway_requests_total %llu\n"
		    "# HELP ofc_gateway_state_json_reused_total GetState answers whose JSON was "
		    "written before for the same bytes from ofcd.\n"
		    "# TYPE ofc_gateway_state_json_reused_total counter\n"
		    "ofc_gateway_state_json_reused_total %llu\n"
		    "# HELP ofc_gateway_state_json_shared_written_total Big states' answers "
		    "written as JSON, once for all their readers.\n"
		    "# TYPE ofc_gateway_state_json_shared_written_total counter\n"
		    "ofc_gateway_state_json_shared_written_total %llu\n"
		    "# HELP ofc_gateway_trust_reload_failures_total SIGHUP reloads refused (a bad "
		    "CA, CRL or policy file): the old ones stay.\n"
		    "# TYPE ofc_gateway_trust_reload_failures_total counter\n"
		    "ofc_gateway_trust_reload_failures_total %llu\n%s%s%s",
		    resp->metrics, (unsigned long long)atomic_load(&g->n_handshakes),
		    (unsigned long long)atomic_load(&g->n_refused), conns,
		    (unsigned long long)atomic_load(&g->n_requests), (unsigned long long)hits,
		    (unsigned long long)built,
		    (unsigned long long)atomic_load(&g->n_reload_failures), trust, streams, reads);
		free(streams);
		free(reads);
		free(conns);
		free(trust);
		ofc__v1__response__free_unpacked(resp, NULL);
		return send_bytes(mc, MHD_HTTP_OK, "text/plain; version=0.0.4", text, strlen(text),
				  false);
	}
	rc = send_response(mc, resp, r->rt->route);
	ofc__v1__response__free_unpacked(resp, NULL);
	return rc;
}

static enum MHD_Result handler(void *cls, struct MHD_Connection *mc, const char *url,
			       const char *method, const char *version, const char *upload,
			       size_t *upload_size, void **req_cls)
{
	struct gateway *g = cls;
	struct gw_req *r = *req_cls;

	if (!r) {
		bool path_known = false;
		char why[120];

		r = xcalloc(1, sizeof(*r));
		*req_cls = r;
		if (gw_framing_check(mc, conn_of(mc), version, why, sizeof(why)) < 0)
			return send_error(mc, MHD_HTTP_BAD_REQUEST, OFC__V1__STATUS__STATUS_INVALID,
					  "bad request: %s", why);
		if (strcmp(url, CALL_ROUTE) == 0) {
			path_known = true;
			r->call = strcmp(method, "POST") == 0;
		} else if (gw_ui_route(url)) {
			path_known = true;
			r->ui = true;
		} else {
			path_known = api_route(NULL, url) != NULL;
			r->rt = api_route(method, url);
		}
		if (!r->rt && !r->call && !r->ui) {
			r->early_code =
			    path_known ? MHD_HTTP_METHOD_NOT_ALLOWED : MHD_HTTP_NOT_FOUND;
			snprintf(r->early_msg, sizeof(r->early_msg),
				 path_known ? "%.8s is not a method of %.100s (docs/control.md, "
					      "\"The network API\")"
					    : "%.8s %.100s: no such route (docs/control.md, \"The "
					      "network API\")",
				 method, url);
		} else if (gw_ui_cross_site(mc, method, r->ui)) {
			r->early_code = MHD_HTTP_FORBIDDEN;
			snprintf(r->early_msg, sizeof(r->early_msg),
				 "permission denied: a request another site's page started "
				 "(Sec-Fetch-Site or Origin)");
		} else if (principal(g, mc, r)) {
			const char *cl =
			    MHD_lookup_connection_value(mc, MHD_HEADER_KIND, "Content-Length");
			if (cl && strtoull(cl, NULL, 10) > g->o.max_body) {
				r->early_code = MHD_HTTP_CONTENT_TOO_LARGE;
				snprintf(r->early_msg, sizeof(r->early_msg),
					 "a body of %.20s bytes is larger than the limit of %u "
					 "bytes (--max-body)",
					 cl, g->o.max_body);
			}
		}
		if (r->early_code) {
			Ofc__V1__Status st = r->early_code == MHD_HTTP_FORBIDDEN
						 ? OFC__V1__STATUS__STATUS_DENIED
					     : r->early_code == MHD_HTTP_NOT_FOUND
						 ? OFC__V1__STATUS__STATUS_NOT_FOUND
						 : OFC__V1__STATUS__STATUS_INVALID;
			return send_error(mc, r->early_code, st, "%s", r->early_msg);
		}
		return MHD_YES;
	}
	if (*upload_size) {
		if (r->body.len + *upload_size > g->o.max_body)
			r->too_big = true;
		else
			sb_add(&r->body, upload, *upload_size);
		*upload_size = 0;
		return MHD_YES;
	}
	gw_conn_phase(&g->conns, conn_of(mc), GW_HANDLING);
	if (r->too_big)
		return send_error(mc, MHD_HTTP_CONTENT_TOO_LARGE, OFC__V1__STATUS__STATUS_INVALID,
				  "the body is larger than the limit of %u bytes (--max-body)",
				  g->o.max_body);
	if (r->ui) {
		pthread_rwlock_rdlock(&g->lock);
		int64_t crl_next = gw_trust_crl_next_update(g->trust);
		pthread_rwlock_unlock(&g->lock);
		return gw_ui_answer(g->ui, mc, method, url, &r->pr, crl_next);
	}
	return forward(g, mc, r);
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	struct gateway *g = cls;
	char line[600];

	vsnprintf(line, sizeof(line), fmt, ap);
	line[strcspn(line, "\n")] = 0;
	gw_logf(&g->log, GW_LOG_MHD, 6, "libmicrohttpd: %s", line);
}

/* ---- start and stop ------------------------------------------------------------------- */

static int bind_listener(struct gateway *g, struct ofc_error *err)
{
	char host[256];
	const char *colon = strrchr(g->o.listen, ':');
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM,
				 .ai_flags = AI_NUMERICHOST | AI_PASSIVE};
	struct addrinfo *ai;
	int fd, one = 1, rc;

	if (!colon || (size_t)(colon - g->o.listen) >= sizeof(host))
		return ofc_error_set(err, OFC_E_USAGE, "--listen '%s': expected HOST:PORT",
				     g->o.listen);
	memcpy(host, g->o.listen, (size_t)(colon - g->o.listen));
	host[colon - g->o.listen] = 0;
	if (host[0] == '[' && host[strlen(host) - 1] == ']') {
		memmove(host, host + 1, strlen(host));
		host[strlen(host) - 1] = 0;
	}
	rc = getaddrinfo(host, colon + 1, &hints, &ai);
	if (rc != 0)
		return ofc_error_set(err, OFC_E_USAGE, "--listen '%s': %s (a numeric address)",
				     g->o.listen, gai_strerror(rc));
	fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
	    bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 || listen(fd, 1024) != 0) {
		int e = errno;

		if (fd >= 0)
			close(fd);
		freeaddrinfo(ai);
		return ofc_error_set(err, OFC_E_RUNTIME, "cannot listen on %s: %s", g->o.listen,
				     strerror(e));
	}
	freeaddrinfo(ai);
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	getsockname(fd, (struct sockaddr *)&ss, &sl);
	g->port = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
						 : ((struct sockaddr_in *)&ss)->sin_port);
	g->listen_fd = fd;
	return 0;
}

int gw_open(const struct gw_opts *o, struct gateway **out, struct ofc_error *err)
{
	struct gateway *g = xcalloc(1, sizeof(*g));
	size_t len;

	*out = NULL;
	g->o = *o;
	g->listen_fd = -1;
	g->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (!g->o.max_connections)
		g->o.max_connections = GW_MAX_CONNECTIONS_DEFAULT;
	if (!g->o.max_body)
		g->o.max_body = GW_MAX_BODY_DEFAULT;
	if (g->o.read_timeout <= 0)
		g->o.read_timeout = GW_READ_TIMEOUT_DEFAULT;
	if (g->o.idle_timeout <= 0)
		g->o.idle_timeout = GW_IDLE_TIMEOUT_DEFAULT;
	if (g->o.request_timeout <= 0)
		g->o.request_timeout = GW_REQUEST_TIMEOUT_DEFAULT;
	if (!g->o.max_per_address)
		g->o.max_per_address = GW_PER_ADDRESS_DEFAULT(g->o.max_connections);
	pthread_rwlock_init(&g->lock, NULL);
	gw_log_init(&g->log, o->log, o->log_ctx);
	gw_conns_init(&g->conns, g->o.max_connections, g->o.max_per_address, g->o.read_timeout,
		      &g->log);
	struct up_stream_limits lim = {
	    o->max_streams ? o->max_streams : GW_STREAMS_DEFAULT,
	    o->streams_per_principal ? o->streams_per_principal : GW_STREAMS_PER_PRINCIPAL_DEFAULT,
	    o->streams_per_address ? o->streams_per_address : GW_STREAMS_PER_ADDRESS_DEFAULT};
	up_init(&g->up, o->ofcd_socket, o->upstream, g->o.request_timeout, &lim);
	gw_cache_init(&g->cache);
	gw_shares_init(&g->shares);
	if (read_file(o->cert, 4u << 20, &g->cert_pem, &len, err) < 0 ||
	    read_file(o->key, 1u << 20, &g->key_pem, &len, err) < 0 ||
	    read_file(o->ca, 4u << 20, &g->ca_pem, &len, err) < 0 ||
	    gw_load_trust_policy(o, &g->trust, &g->policy, err) < 0 ||
	    (o->ui_dir && gw_ui_open(o->ui_dir, &g->ui, err) < 0) || bind_listener(g, err) < 0) {
		gw_close(g);
		return -1;
	}
	g->mhd = MHD_start_daemon(
	    MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL |
		MHD_USE_TLS | MHD_USE_ERROR_LOG,
	    0, admit, g, handler, g, MHD_OPTION_EXTERNAL_LOGGER, mhd_log, g,
	    MHD_OPTION_LISTEN_SOCKET, g->listen_fd, MHD_OPTION_HTTPS_MEM_KEY, g->key_pem,
	    MHD_OPTION_HTTPS_MEM_CERT, g->cert_pem, MHD_OPTION_HTTPS_MEM_TRUST, g->ca_pem,
	    MHD_OPTION_HTTPS_PRIORITIES, GW_TLS_PRIORITIES, MHD_OPTION_CONNECTION_LIMIT,
	    (unsigned)(g->o.max_connections + GW_CONNS_SLACK(g->o.max_connections)),
	    MHD_OPTION_UNESCAPE_CALLBACK, gw_unescape, g, MHD_OPTION_CONNECTION_TIMEOUT,
	    (unsigned)(g->o.idle_timeout + 0.5), MHD_OPTION_CONNECTION_MEMORY_LIMIT,
	    (size_t)HEADER_POOL, MHD_OPTION_NOTIFY_CONNECTION, notify_conn, g,
	    MHD_OPTION_NOTIFY_COMPLETED, completed, g, MHD_OPTION_THREAD_STACK_SIZE,
	    (size_t)(256u << 10), MHD_OPTION_END);
	if (!g->mhd) {
		gw_close(g);
		return ofc_error_set(err, OFC_E_RUNTIME,
				     "cannot start the HTTPS server on %s (the certificate and "
				     "key must be PEM and belong together)",
				     o->listen);
	}
	g->listen_fd = -1; /* MHD's now */
	if (pthread_create(&g->watchdog, NULL, watchdog, g) == 0)
		g->watchdog_started = true;
	if (o->port_file) {
		char num[16];

		snprintf(num, sizeof(num), "%u\n", g->port);
		if (atomic_write(o->port_file, num, strlen(num), err) < 0) {
			gw_close(g);
			return -1;
		}
	}
	gw_log(g, 5,
	       "serving on port %u (TLS, client certificates of %s; policy %s, %u entries) "
	       "for ofcd at %s",
	       g->port, o->ca, o->policy, g->policy->n, o->ofcd_socket);
	*out = g;
	return 0;
}

static void reload(struct gateway *g)
{
	struct gw_trust *tl, *old_tl;
	struct gw_policy *pol, *old_pol;
	struct ofc_error err = {0};

	if (gw_load_trust_policy(&g->o, &tl, &pol, &err) < 0) {
		atomic_fetch_add(&g->n_reload_failures, 1);
		gw_log(g, 3, "reload refused, the old CA, CRL and policy stay: %s", err.msg);
		return;
	}
	pthread_rwlock_wrlock(&g->lock);
	old_tl = g->trust;
	old_pol = g->policy;
	g->trust = tl;
	g->policy = pol;
	pthread_rwlock_unlock(&g->lock);
	gw_trust_free(old_tl);
	gw_policy_free(old_pol);
	gw_log(g, 5, "reloaded the CA, the CRL and the policy (%u entries)", pol->n);
}

int gw_run(struct gateway *g, struct ofc_error *err)
{
	(void)err;
	while (!atomic_load(&g->stop_req)) {
		struct pollfd p = {.fd = g->wake_fd, .events = POLLIN};
		uint64_t v;

		poll(&p, 1, 1000);
		if (read(g->wake_fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
			break;
	}
	gw_log(g, 5, "stopping");
	return 0;
}

void gw_stop(struct gateway *g)
{
	uint64_t one = 1;

	atomic_store(&g->stop_req, 1);
	(void)!write(g->wake_fd, &one, sizeof(one));
}

void gw_reload(struct gateway *g)
{
	reload(g);
}

void gw_close(struct gateway *g)
{
	if (!g)
		return;
	atomic_store(&g->stop_req, 1);
	if (g->watchdog_started) {
		uint64_t one = 1;

		(void)!write(g->wake_fd, &one, sizeof(one));
		pthread_join(g->watchdog, NULL);
	}
	if (g->mhd)
		MHD_stop_daemon(g->mhd);
	if (g->listen_fd >= 0)
		close(g->listen_fd);
	gw_trust_free(g->trust);
	gw_policy_free(g->policy);
	gw_ui_close(g->ui);
	up_fini(&g->up);
	gw_cache_fini(&g->cache);
	gw_shares_fini(&g->shares);
	free(g->cert_pem);
	if (g->key_pem)
		explicit_bzero(g->key_pem, strlen(g->key_pem));
	free(g->key_pem);
	free(g->ca_pem);
	if (g->wake_fd >= 0)
		close(g->wake_fd);
	pthread_rwlock_destroy(&g->lock);
	gw_conns_fini(&g->conns);
	gw_log_fini(&g->log);
	free(g);
}
