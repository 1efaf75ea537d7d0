/* GetState under load: N clients, each a thread with its own
 * persistent connection, M requests each; prints requests/s, the latency
 * percentiles and the client's CPU time a request. Over ofcd's Unix socket
 * (--socket PATH: framed protobuf, ofcd_call) or through ofc-gateway
 * (--url https://...: GET /v1/state with a client certificate, libcurl
 * keeping the connection; --fresh: a new connection, so a full TLS
 * handshake, per request). --raw: the Unix client reads each answer's
 * frame and does not decode it; --parse: the HTTPS client parses each
 * JSON answer (json-c); --call: it asks by POST /v1/call (ofc's protobuf,
 * as ofc --server does) and decodes each answer.
 *
 * --serve FILE --port-file F [--server-cert C --server-key K --cacert A]:
 * instead, an HTTP server on 127.0.0.1 built as ofc-gateway's (the same
 * libmicrohttpd modes and GnuTLS priorities, a client certificate required
 * when given a certificate) that answers every request with FILE's bytes
 * and asks no one: what HTTP over mutual TLS on loopback costs these
 * clients and this server without ofcd behind it (bench/results/gateway.md). It
 * serves until SIGTERM.
 *
 * bench/gateway.sh starts the daemons and runs it; with no arguments it
 * says so and exits 0 (bench/run.sh runs every binary). */
#include <arpa/inet.h>
#include <curl/curl.h>
#include <gnutls/gnutls.h>
#include <json-c/json.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "controller/client/client.h"
#include "proto/control.pb-c.h"

struct load {
	const char *url, *cert, *key, *cacert, *socket;
	int clients, requests;
	bool fresh;
	bool raw;    /* Unix socket: read each answer's frame, do not decode it */
	bool parse;  /* HTTPS: parse each answer's JSON (json-c) */
	bool call;   /* HTTPS: POST /v1/call, ofc's protobuf, each answer decoded */
	double *lat; /* clients x requests */
	int failures;
	pthread_mutex_t mu;
};

struct worker {
	struct load *l;
	int i;
};

static size_t sink(char *p, size_t s, size_t n, void *ctx)
{
	(void)p;
	(void)ctx;
	return s * n;
}

/* --parse: the body kept, then parsed as a program would. */
static size_t keep(char *p, size_t s, size_t n, void *ctx)
{
	sb_add(ctx, p, s * n);
	return s * n;
}

/* --call: the body is one frame, a Response to request `id`. */
static bool decoded(struct strbuf *b, uint64_t id)
{
	bool ok = false;

	if (b->len >= 4 && frame_len_get((const uint8_t *)b->buf) == b->len - 4) {
		Ofc__V1__Response *r =
		    ofc__v1__response__unpack(NULL, b->len - 4, (const uint8_t *)b->buf + 4);

		ok = r && r->id == id && r->status == OFC__V1__STATUS__STATUS_OK &&
		     r->body_case == OFC__V1__RESPONSE__BODY_STATE;
		if (r)
			ofc__v1__response__free_unpacked(r, NULL);
	}
	b->len = 0;
	return ok;
}

static bool parsed(struct strbuf *b)
{
	json_object *o = json_tokener_parse(b->buf ? b->buf : "");
	bool ok = o && json_object_is_type(o, json_type_object);

	json_object_put(o);
	b->len = 0;
	if (b->buf)
		b->buf[0] = 0;
	return ok;
}

static void *run_https(struct worker *w)
{
	struct load *l = w->l;
	CURL *c = curl_easy_init();
	char url[1024];
	int bad = 0;

	snprintf(url, sizeof(url), "%s/v1/%s", l->url, l->call ? "call" : "state");
	struct curl_slist *hdr = curl_slist_append(NULL, "Content-Type: application/x-protobuf");
	uint8_t packed[64];
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_SSLCERT, l->cert);
	curl_easy_setopt(c, CURLOPT_SSLKEY, l->key);
	curl_easy_setopt(c, CURLOPT_CAINFO, l->cacert);
	struct strbuf body = {0};
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, l->parse || l->call ? keep : sink);
	if (l->call) {
		curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdr);
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, packed);
	}
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &body);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	if (l->fresh) {
		curl_easy_setopt(c, CURLOPT_FRESH_CONNECT, 1L);
		curl_easy_setopt(c, CURLOPT_FORBID_REUSE, 1L);
		curl_easy_setopt(c, CURLOPT_SSL_SESSIONID_CACHE, 0L);
	}
	for (int k = 0; k < l->requests; k++) {
		double t0 = now_seconds();
		long code = 0;

		if (l->call) {
			Ofc__V1__Request req = OFC__V1__REQUEST__INIT;
			Ofc__V1__GetState gs = OFC__V1__GET_STATE__INIT;

			req.has_id = 1;
			req.id = (uint64_t)k + 1;
			req.body_case = OFC__V1__REQUEST__BODY_GET_STATE;
			req.get_state = &gs;
			curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE,
					 (long)protobuf_c_message_pack(&req.base, packed));
		}
		if (curl_easy_perform(c) != CURLE_OK ||
		    (curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code), code != 200) ||
		    (l->parse && !parsed(&body)) || (l->call && !decoded(&body, (uint64_t)k + 1)))
			bad++;
		l->lat[w->i * l->requests + k] = now_seconds() - t0;
	}
	curl_easy_cleanup(c);
	curl_slist_free_all(hdr);
	sb_free(&body);
	pthread_mutex_lock(&l->mu);
	l->failures += bad;
	pthread_mutex_unlock(&l->mu);
	return NULL;
}

static void *run_unix(struct worker *w)
{
	struct load *l = w->l;
	struct ofcd_client cl;
	struct ofc_error err = {0};
	int bad = 0;

	if (ofcd_connect(&cl, l->socket, &err) < 0) {
		fprintf(stderr, "gateway_load: %s\n", err.msg);
		bad = l->requests;
	}
	cl.timeout = 30;
	uint8_t *fb = NULL;
	size_t fcap = 0;
	for (int k = 0; !bad && k < l->requests && l->raw; k++) {
		Ofc__V1__Request req = OFC__V1__REQUEST__INIT;
		Ofc__V1__GetState gs = OFC__V1__GET_STATE__INIT;
		double t0 = now_seconds();
		size_t len;

		req.has_id = 1;
		req.id = (uint64_t)k + 1;
		req.body_case = OFC__V1__REQUEST__BODY_GET_STATE;
		req.get_state = &gs;
		if (ofcd_send(&cl, &req, &err) < 0 ||
		    frame_recv(cl.fd, &fb, &fcap, &len, cl.max_frame, t0 + cl.timeout, &err) < 0)
			bad++;
		l->lat[w->i * l->requests + k] = now_seconds() - t0;
	}
	free(fb);
	for (int k = 0; !bad && k < l->requests && !l->raw; k++) {
		Ofc__V1__Request req = OFC__V1__REQUEST__INIT;
		Ofc__V1__GetState gs = OFC__V1__GET_STATE__INIT;
		Ofc__V1__Response *resp = NULL;
		double t0 = now_seconds();

		req.has_id = 1;
		req.id = (uint64_t)k + 1;
		req.body_case = OFC__V1__REQUEST__BODY_GET_STATE;
		req.get_state = &gs;
		if (ofcd_call(&cl, &req, &resp, &err) < 0 ||
		    resp->status != OFC__V1__STATUS__STATUS_OK)
			bad++;
		if (resp)
			ofc__v1__response__free_unpacked(resp, NULL);
		l->lat[w->i * l->requests + k] = now_seconds() - t0;
	}
	ofcd_disconnect(&cl);
	pthread_mutex_lock(&l->mu);
	l->failures += bad;
	pthread_mutex_unlock(&l->mu);
	return NULL;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;

	return w->l->socket ? run_unix(w) : run_https(w);
}

/* ---- --serve: the fixed answer ---- */

struct fixed {
	char *body;
	size_t len;
};

static void require_cert(void *cls, struct MHD_Connection *mc, void **ctx,
			 enum MHD_ConnectionNotificationCode code)
{
	const union MHD_ConnectionInfo *ti =
	    MHD_get_connection_info(mc, MHD_CONNECTION_INFO_GNUTLS_SESSION);

	(void)cls;
	(void)ctx;
	if (code == MHD_CONNECTION_NOTIFY_STARTED && ti && ti->tls_session)
		gnutls_certificate_server_set_request((gnutls_session_t)ti->tls_session,
						      GNUTLS_CERT_REQUIRE);
}

static enum MHD_Result answer(void *cls, struct MHD_Connection *mc, const char *url,
			      const char *method, const char *version, const char *upload,
			      size_t *upload_size, void **req_cls)
{
	const struct fixed *f = cls;

	(void)url, (void)method, (void)version, (void)upload, (void)upload_size;
	if (!*req_cls) { /* the headers: wait for the (empty) body */
		*req_cls = (void *)1;
		return MHD_YES;
	}
	struct MHD_Response *r =
	    MHD_create_response_from_buffer(f->len, f->body, MHD_RESPMEM_PERSISTENT);
	MHD_add_response_header(r, "Content-Type", "application/json");
	enum MHD_Result rc = MHD_queue_response(mc, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	return rc;
}

static int serve(const char *file, const char *port_file, const char *cert, const char *key,
		 const char *ca)
{
	struct ofc_error err = {0};
	struct fixed f;
	char *cert_pem = NULL, *key_pem = NULL, *ca_pem = NULL;
	size_t len;
	sigset_t set;
	int sig;

	if (read_file(file, 64u << 20, &f.body, &f.len, &err) < 0 ||
	    (cert && (read_file(cert, 1u << 20, &cert_pem, &len, &err) < 0 ||
		      read_file(key, 1u << 20, &key_pem, &len, &err) < 0 ||
		      read_file(ca, 1u << 20, &ca_pem, &len, &err) < 0))) {
		fprintf(stderr, "gateway_load: %s\n", err.msg);
		return 1;
	}
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	unsigned flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD |
			 MHD_USE_POLL | MHD_USE_ERROR_LOG | (cert ? MHD_USE_TLS : 0);
	struct MHD_Daemon *d =
	    cert ? MHD_start_daemon(
		       flags, 0, NULL, NULL, answer, &f, MHD_OPTION_SOCK_ADDR, &sa,
		       MHD_OPTION_HTTPS_MEM_KEY, key_pem, MHD_OPTION_HTTPS_MEM_CERT, cert_pem,
		       MHD_OPTION_HTTPS_MEM_TRUST, ca_pem, MHD_OPTION_HTTPS_PRIORITIES,
		       "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2", MHD_OPTION_NOTIFY_CONNECTION,
		       require_cert, NULL, MHD_OPTION_CONNECTION_LIMIT, 4096u, MHD_OPTION_END)
		 : MHD_start_daemon(flags, 0, NULL, NULL, answer, &f, MHD_OPTION_SOCK_ADDR, &sa,
				    MHD_OPTION_CONNECTION_LIMIT, 4096u, MHD_OPTION_END);
	const union MHD_DaemonInfo *di =
	    d ? MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT) : NULL;
	char num[16];
	if (!di) {
		fprintf(stderr, "gateway_load: cannot start the server\n");
		return 1;
	}
	snprintf(num, sizeof(num), "%u\n", (unsigned)di->port);
	if (atomic_write(port_file, num, strlen(num), &err) < 0) {
		fprintf(stderr, "gateway_load: %s\n", err.msg);
		return 1;
	}
	while (sigwait(&set, &sig) != 0)
		;
	MHD_stop_daemon(d);
	free(f.body);
	free(cert_pem);
	free(key_pem);
	free(ca_pem);
	return 0;
}

static double cpu_seconds(const struct rusage *r)
{
	return (double)r->ru_utime.tv_sec + (double)r->ru_utime.tv_usec / 1e6 +
	       (double)r->ru_stime.tv_sec + (double)r->ru_stime.tv_usec / 1e6;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	struct load l = {.clients = 64, .requests = 200};
	const char *serve_file = NULL, *port_file = NULL, *server_cert = NULL, *server_key = NULL;
	pthread_t *t;
	struct worker *w;

	for (int i = 1; i < argc; i++) {
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(argv[i], "--fresh"))
			l.fresh = true;
		else if (!strcmp(argv[i], "--raw"))
			l.raw = true;
		else if (!strcmp(argv[i], "--parse"))
			l.parse = true;
		else if (!strcmp(argv[i], "--call"))
			l.call = true;
		else if (!v)
			break;
		else if (!strcmp(argv[i], "--url"))
			l.url = v, i++;
		else if (!strcmp(argv[i], "--cert"))
			l.cert = v, i++;
		else if (!strcmp(argv[i], "--key"))
			l.key = v, i++;
		else if (!strcmp(argv[i], "--cacert"))
			l.cacert = v, i++;
		else if (!strcmp(argv[i], "--socket"))
			l.socket = v, i++;
		else if (!strcmp(argv[i], "--clients"))
			l.clients = atoi(v), i++;
		else if (!strcmp(argv[i], "--requests"))
			l.requests = atoi(v), i++;
		else if (!strcmp(argv[i], "--serve"))
			serve_file = v, i++;
		else if (!strcmp(argv[i], "--port-file"))
			port_file = v, i++;
		else if (!strcmp(argv[i], "--server-cert"))
			server_cert = v, i++;
		else if (!strcmp(argv[i], "--server-key"))
			server_key = v, i++;
	}
	if (serve_file) {
		if (!port_file || (server_cert && (!server_key || !l.cacert)))
			return 2;
		return serve(serve_file, port_file, server_cert, server_key, l.cacert);
	}
	if (!l.url && !l.socket) {
		printf("gateway_load: run by bench/gateway.sh (it starts ofcd and ofc-gateway)\n");
		return 0;
	}
	if (l.clients < 1 || l.requests < 1 || l.clients > 4096)
		return 2;
	curl_global_init(CURL_GLOBAL_DEFAULT);
	pthread_mutex_init(&l.mu, NULL);
	l.lat = calloc((size_t)l.clients * (size_t)l.requests, sizeof(double));
	t = calloc((size_t)l.clients, sizeof(*t));
	w = calloc((size_t)l.clients, sizeof(*w));
	struct rusage ru0, ru1;
	getrusage(RUSAGE_SELF, &ru0);
	double t0 = now_seconds();
	for (int i = 0; i < l.clients; i++) {
		w[i] = (struct worker){&l, i};
		pthread_create(&t[i], NULL, worker_main, &w[i]);
	}
	for (int i = 0; i < l.clients; i++)
		pthread_join(t[i], NULL);
	double secs = now_seconds() - t0;
	getrusage(RUSAGE_SELF, &ru1);
	size_t n = (size_t)l.clients * (size_t)l.requests;
	double cpu = cpu_seconds(&ru1) - cpu_seconds(&ru0);
	qsort(l.lat, n, sizeof(double), cmp_d);
	printf("%s%s %d clients x %d requests%s: %.0f req/s, p50 %.3f ms, p99 %.3f ms, max %.3f "
	       "ms, %d failed, client CPU %.0f us a request\n",
	       l.socket			      ? "unix"
	       : !strncmp(l.url, "https:", 6) ? "https"
					      : "http",
	       l.raw	  ? " (frames)"
	       : l.socket ? " (decoded)"
	       : l.parse  ? " (JSON parsed)"
	       : l.call	  ? " /v1/call (decoded)"
			  : " (bytes)",
	       l.clients, l.requests, l.fresh ? " (a new TLS connection each)" : "",
	       (double)n / secs, l.lat[n / 2] * 1e3, l.lat[n * 99 / 100] * 1e3, l.lat[n - 1] * 1e3,
	       l.failures, cpu / (double)n * 1e6);
	free(l.lat);
	free(t);
	free(w);
	return l.failures ? 1 : 0;
}
