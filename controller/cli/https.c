/* `ofc --server URL --cert C --key K --cacert A ...`: the same
 * commands as --socket, through ofc-gateway's POST /v1/call, which takes
 * one ofc.v1.Request and answers ofcd's frames. The connection the
 * commands use is one end of a socketpair; a thread (libcurl) reads the
 * request frame from the other end, posts it, and writes the answer's
 * frames back (skipping the empty ones a quiet Watch gets), so every
 * remote command, the stream of a schedule and a Watch included, runs
 * unchanged on ofcd_send/ofcd_recv. An answer that is not frames (the
 * gateway's own refusal, an HTTP or TLS failure) comes back as one
 * Response with the request's id and the reason. */
#include "controller/cli/internal.h"
#include "controller/export/export.h"
#include "proto/control.pb-c.h"

#include <curl/curl.h>
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* libcurl is loaded when --server is used, not linked: linked, it and the
 * thirty libraries it pulls in (OpenSSL, nghttp2, LDAP, Kerberos, ...) were
 * mapped into every `ofc` run, and their relocated pages raised every
 * run's resident memory. Only its types come from curl/curl.h. */
struct curl_api {
	CURLcode (*global_init)(long);
	CURL *(*easy_init)(void);
	CURLcode (*easy_setopt)(CURL *, CURLoption, ...);
	CURLcode (*easy_perform)(CURL *);
	CURLcode (*easy_getinfo)(CURL *, CURLINFO, ...);
	void (*easy_cleanup)(CURL *);
	const char *(*easy_strerror)(CURLcode);
	struct curl_slist *(*slist_append)(struct curl_slist *, const char *);
	void (*slist_free_all)(struct curl_slist *);
};

static int curl_load(struct curl_api *a, struct ofc_error *err)
{
	void *h = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
	static const char *const names[] = {
	    "curl_global_init",	  "curl_easy_init",    "curl_easy_setopt",
	    "curl_easy_perform",  "curl_easy_getinfo", "curl_easy_cleanup",
	    "curl_easy_strerror", "curl_slist_append", "curl_slist_free_all"};
	void **slots[] = {
	    (void **)&a->global_init,	(void **)&a->easy_init,	   (void **)&a->easy_setopt,
	    (void **)&a->easy_perform,	(void **)&a->easy_getinfo, (void **)&a->easy_cleanup,
	    (void **)&a->easy_strerror, (void **)&a->slist_append, (void **)&a->slist_free_all};

	if (!h)
		return ofc_error_set(err, OFC_E_RUNTIME,
				     "--server needs libcurl (Debian's libcurl4): %s", dlerror());
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!(*slots[i] = dlsym(h, names[i])))
			return ofc_error_set(err, OFC_E_RUNTIME, "libcurl.so.4 lacks %s", names[i]);
	return 0;
}

#define HTTPS_REQUEST_MAX (16u << 20)
#define HTTPS_ERROR_MAX	  (64u << 10)

static atomic_bool exiting; /* ofc is leaving: transfers stop at once */

struct https_call {
	struct curl_api curl;
	struct cli_server srv;
	int fd; /* the thread's end */
	uint64_t id;
	uint8_t *req;
	size_t req_len;
	long code;
	bool frames;	    /* the answer is frames (Content-Type) */
	struct strbuf body; /* frames not yet whole, or an error's body */
	bool gone;	    /* the command hung up */
};

static size_t on_header(char *b, size_t size, size_t n, void *ctx)
{
	struct https_call *h = ctx;
	size_t len = size * n;

	if (len > 13 && strncasecmp(b, "content-type:", 13) == 0)
		h->frames = memmem(b, len, "application/x-ofc-frames", 24) != NULL;
	return len;
}

static bool write_all(int fd, const void *p, size_t n)
{
	return fd_write_all(fd, p, n, 0, &(struct ofc_error){0}) == 0;
}

/* Whole frames go to the command as they arrive; empty ones are dropped. */
static size_t on_body(char *b, size_t size, size_t n, void *ctx)
{
	struct https_call *h = ctx;
	size_t len = size * n, off = 0;

	if (!h->frames) {
		if (h->body.len + len <= HTTPS_ERROR_MAX)
			sb_add(&h->body, b, len);
		return len;
	}
	sb_add(&h->body, b, len);
	while (h->body.len - off >= 4) {
		uint32_t k = frame_len_get((const uint8_t *)h->body.buf + off);

		if (h->body.len - off - 4 < k)
			break;
		if (k && !write_all(h->fd, h->body.buf + off, 4 + (size_t)k)) {
			h->gone = true;
			return 0; /* aborts the transfer */
		}
		off += 4 + (size_t)k;
	}
	memmove(h->body.buf, h->body.buf + off, h->body.len - off);
	h->body.len -= off;
	return len;
}

/* One Response for the command, with the request's id (leader: a
 * follower's, passed on). */
static void answer_leader(struct https_call *h, Ofc__V1__Status st, const char *msg,
			  Ofc__V1__Leader *leader)
{
	Ofc__V1__Response r = OFC__V1__RESPONSE__INIT;
	uint8_t *b;
	size_t n;
	uint8_t hd[4];

	r.has_id = r.has_status = 1;
	r.id = h->id;
	r.status = st;
	r.message = (char *)msg;
	r.leader = leader;
	n = protobuf_c_message_get_packed_size(&r.base);
	b = xmalloc(n + 1);
	protobuf_c_message_pack(&r.base, b);
	frame_len_put(hd, (uint32_t)n);
	if (write_all(h->fd, hd, 4))
		write_all(h->fd, b, n);
	free(b);
}

/* Made up here: the message starts with the URL (cli_https_unreached). */
static void answer(struct https_call *h, Ofc__V1__Status st, const char *msg)
{
	answer_leader(h, st, msg, NULL);
}

bool cli_https_unreached(const Ofc__V1__Response *r, const char *url)
{
	size_t n = strlen(url);

	return r->status == OFC__V1__STATUS__STATUS_UNAVAILABLE && r->message &&
	       strncmp(r->message, url, n) == 0 && strncmp(r->message + n, ": ", 2) == 0;
}

/* The gateway's own answers are a Response in JSON: its status and
 * message; anything else is said by its HTTP status. */
static void answer_body(struct https_call *h)
{
	ProtobufCMessage *m = NULL;
	struct ofc_error err = {0};
	char msg[600];

	if (h->body.len &&
	    pb_read_json(&ofc__v1__response__descriptor, h->body.buf, h->body.len, &m, &err) == 0) {
		Ofc__V1__Response *r = (Ofc__V1__Response *)m;

		snprintf(msg, sizeof(msg), "%s: %s", h->srv.url,
			 r->message ? r->message : "refused");
		answer_leader(h, r->has_status ? r->status : OFC__V1__STATUS__STATUS_UNAVAILABLE,
			      msg, r->leader);
		protobuf_c_message_free_unpacked(m, NULL);
		return;
	}
	snprintf(msg, sizeof(msg), "%s answered HTTP %ld, not ofcd's frames", h->srv.url, h->code);
	answer(h, OFC__V1__STATUS__STATUS_UNAVAILABLE, msg);
}

/* libcurl calls this about once a second even when nothing moves: a
 * transfer the command no longer waits for (a Watch when ofc exits) ends. */
static int on_progress(void *ctx, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
		       curl_off_t ulnow)
{
	(void)ctx, (void)dltotal, (void)dlnow, (void)ultotal, (void)ulnow;
	return atomic_load(&exiting) ? 1 : 0;
}

/* What a TLS failure asks the user to do, before libcurl's words ("" when
 * it is not one of these). */
static const char *tls_advice(CURLcode rc, const struct cli_server *srv)
{
	switch (rc) {
	case CURLE_PEER_FAILED_VERIFICATION:
		return srv->cacert ? "the gateway's certificate is not signed by a CA you gave "
				     "(--cacert): give the CA that signed it: "
				   : "the gateway's certificate is not signed by a CA you gave "
				     "(--cacert): give --cacert FILE, the CA that signed it: ";
	case CURLE_SSL_CACERT_BADFILE:
		return "--cacert: the file is not a readable PEM CA certificate: ";
	case CURLE_SSL_CERTPROBLEM:
		return "--cert/--key: the client certificate or its key cannot be used: ";
	default:
		return "";
	}
}

static void *https_main(void *arg)
{
	struct https_call *h = arg;
	char url[1100], ebuf[CURL_ERROR_SIZE] = "";
	struct curl_slist *hdr = NULL;
	CURL *c = h->curl.easy_init();
	CURLcode rc;

	snprintf(url, sizeof(url), "%s/v1/call", h->srv.url);
	hdr = h->curl.slist_append(hdr, "Content-Type: application/x-protobuf");
	hdr = h->curl.slist_append(hdr, "Accept: application/x-ofc-frames");
	h->curl.easy_setopt(c, CURLOPT_URL, url);
	h->curl.easy_setopt(c, CURLOPT_POSTFIELDS, h->req);
	h->curl.easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)h->req_len);
	h->curl.easy_setopt(c, CURLOPT_HTTPHEADER, hdr);
	h->curl.easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
	h->curl.easy_setopt(c, CURLOPT_HEADERDATA, h);
	h->curl.easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
	h->curl.easy_setopt(c, CURLOPT_WRITEDATA, h);
	h->curl.easy_setopt(c, CURLOPT_ERRORBUFFER, ebuf);
	h->curl.easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	h->curl.easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
	h->curl.easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
	h->curl.easy_setopt(c, CURLOPT_CONNECTTIMEOUT, 30L);
	h->curl.easy_setopt(c, CURLOPT_PROTOCOLS_STR, "https");
	h->curl.easy_setopt(c, CURLOPT_SSLVERSION, (long)CURL_SSLVERSION_TLSv1_2);
	if (h->srv.cert)
		h->curl.easy_setopt(c, CURLOPT_SSLCERT, h->srv.cert);
	if (h->srv.key)
		h->curl.easy_setopt(c, CURLOPT_SSLKEY, h->srv.key);
	if (h->srv.cacert)
		h->curl.easy_setopt(c, CURLOPT_CAINFO, h->srv.cacert);
	rc = h->curl.easy_perform(c);
	h->curl.easy_getinfo(c, CURLINFO_RESPONSE_CODE, &h->code);
	if (!h->gone) {
		if (rc != CURLE_OK && !(h->frames && h->code == 200 && !h->body.len)) {
			char msg[1400];

			/* No HTTP status: the connection or the handshake failed,
			 * and a gateway refuses a certificate by ending the
			 * handshake (its log names the certificate and why). The
			 * message starts with the server's URL: made up here. */
			snprintf(msg, sizeof(msg), "%s: %s%s", h->srv.url, tls_advice(rc, &h->srv),
				 ebuf[0] ? ebuf : h->curl.easy_strerror(rc));
			if (!h->code && !*tls_advice(rc, &h->srv) && rc != CURLE_COULDNT_CONNECT &&
			    rc != CURLE_OPERATION_TIMEDOUT)
				snprintf(msg + strlen(msg), sizeof(msg) - strlen(msg), "%s",
					 " (no answer: a refused client certificate ends the "
					 "TLS handshake; the gateway's log says why)");
			answer(h, OFC__V1__STATUS__STATUS_UNAVAILABLE, msg);
		} else if (!h->frames) {
			answer_body(h);
		}
	}
	h->curl.slist_free_all(hdr);
	h->curl.easy_cleanup(c);
	close(h->fd);
	free(h->req);
	sb_free(&h->body);
	free(h);
	return NULL;
}

/* The thread's first job: the command's request frame. */
static void *https_thread(void *arg)
{
	struct https_call *h = arg;
	struct ofc_error err = {0};
	size_t cap = 0;

	if (frame_recv(h->fd, &h->req, &cap, &h->req_len, HTTPS_REQUEST_MAX, 0, &err) < 0) {
		close(h->fd);
		free(h->req);
		free(h);
		return NULL;
	}
	Ofc__V1__Request *q = ofc__v1__request__unpack(NULL, h->req_len, h->req);
	if (q) {
		h->id = q->id;
		ofc__v1__request__free_unpacked(q, NULL);
	}
	return https_main(h);
}

/* The call threads, joined when ofc exits: a detached one could still be in
 * libcurl's cleanup when the command has its answer and returns from main,
 * and exit() then tore down what it was freeing. A command opens a few
 * connections at most; past HTTPS_THREADS_MAX a thread is detached. */
#define HTTPS_THREADS_MAX  16
#define HTTPS_JOIN_SECONDS 2

static pthread_mutex_t threads_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_t threads[HTTPS_THREADS_MAX];
static size_t nthreads;

/* atexit: every call thread joined, or given up on at an absolute deadline
 * (a Watch the command stopped reading may still be inside libcurl). */
static void https_join_all(void)
{
	struct timespec deadline;

	atomic_store(&exiting, true);
	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += HTTPS_JOIN_SECONDS;
	pthread_mutex_lock(&threads_mu);
	for (size_t i = 0; i < nthreads; i++)
		pthread_timedjoin_np(threads[i], NULL, &deadline);
	nthreads = 0;
	pthread_mutex_unlock(&threads_mu);
}

/* t is kept to be joined at exit, or detached when the list is full. */
static void https_keep(pthread_t t)
{
	static int registered;

	pthread_mutex_lock(&threads_mu);
	if (!registered)
		registered = atexit(https_join_all) == 0;
	if (registered && nthreads < HTTPS_THREADS_MAX)
		threads[nthreads++] = t;
	else
		pthread_detach(t);
	pthread_mutex_unlock(&threads_mu);
}

int cli_https_connect(struct ofcd_client *c, const struct cli_server *srv, struct ofc_error *err)
{
	int sv[2];
	pthread_t t;

	memset(c, 0, sizeof(*c));
	c->fd = -1;
	c->max_frame = 256u << 20;
	snprintf(c->path, sizeof(c->path), "%s", srv->url);
	if (strncmp(srv->url, "https://", 8) != 0)
		return ofc_error_set(err, OFC_E_USAGE, "--server '%s': expected https://HOST:PORT",
				     srv->url);
	struct curl_api api;
	if (curl_load(&api, err) < 0)
		return -1;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
		return ofc_error_set(err, OFC_E_RUNTIME, "socketpair: %s", strerror(errno));
	struct https_call *h = xcalloc(1, sizeof(*h));
	h->curl = api;
	h->srv = *srv;
	h->fd = sv[1];
	api.global_init(CURL_GLOBAL_DEFAULT);
	if (pthread_create(&t, NULL, https_thread, h) != 0) {
		close(sv[0]);
		close(sv[1]);
		free(h);
		return ofc_error_set(err, OFC_E_RUNTIME, "cannot start a thread");
	}
	https_keep(t);
	c->fd = sv[0];
	return 0;
}
