/* GetState under load (issue 36): N clients, each a thread with its own
 * persistent connection, M requests each; prints requests/s and the
 * latency percentiles. Over ofcd's Unix socket (--socket PATH: framed
 * protobuf, ofcd_call) or through ofc-gateway (--url https://...: GET
 * /v1/state with a client certificate, libcurl keeping the connection;
 * --fresh: a new connection, so a full TLS handshake, per request).
 * bench/gateway.sh starts the daemons and runs it; with no arguments it
 * says so and exits 0 (bench/run.sh runs every binary). */
#include <curl/curl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controller/ofcd/ofcd.h"
#include "proto/control.pb-c.h"

struct load {
	const char *url, *cert, *key, *cacert, *socket;
	int clients, requests;
	bool fresh;
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

static void *run_https(struct worker *w)
{
	struct load *l = w->l;
	CURL *c = curl_easy_init();
	char url[1024];
	int bad = 0;

	snprintf(url, sizeof(url), "%s/v1/state", l->url);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_SSLCERT, l->cert);
	curl_easy_setopt(c, CURLOPT_SSLKEY, l->key);
	curl_easy_setopt(c, CURLOPT_CAINFO, l->cacert);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, sink);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	if (l->fresh) {
		curl_easy_setopt(c, CURLOPT_FRESH_CONNECT, 1L);
		curl_easy_setopt(c, CURLOPT_FORBID_REUSE, 1L);
		curl_easy_setopt(c, CURLOPT_SSL_SESSIONID_CACHE, 0L);
	}
	for (int k = 0; k < l->requests; k++) {
		double t0 = now_seconds();
		long code = 0;

		if (curl_easy_perform(c) != CURLE_OK ||
		    (curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code), code != 200))
			bad++;
		l->lat[w->i * l->requests + k] = now_seconds() - t0;
	}
	curl_easy_cleanup(c);
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
	for (int k = 0; !bad && k < l->requests; k++) {
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

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	struct load l = {.clients = 64, .requests = 200};
	pthread_t *t;
	struct worker *w;

	for (int i = 1; i < argc; i++) {
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(argv[i], "--fresh"))
			l.fresh = true;
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
	double t0 = now_seconds();
	for (int i = 0; i < l.clients; i++) {
		w[i] = (struct worker){&l, i};
		pthread_create(&t[i], NULL, worker_main, &w[i]);
	}
	for (int i = 0; i < l.clients; i++)
		pthread_join(t[i], NULL);
	double secs = now_seconds() - t0;
	size_t n = (size_t)l.clients * (size_t)l.requests;
	qsort(l.lat, n, sizeof(double), cmp_d);
	printf("%s %d clients x %d requests%s: %.0f req/s, p50 %.3f ms, p99 %.3f ms, max %.3f "
	       "ms, %d failed\n",
	       l.socket ? "unix" : "mtls", l.clients, l.requests,
	       l.fresh ? " (a new TLS connection each)" : "", (double)n / secs, l.lat[n / 2] * 1e3,
	       l.lat[n * 99 / 100] * 1e3, l.lat[n - 1] * 1e3, l.failures);
	free(l.lat);
	free(t);
	free(w);
	return l.failures ? 1 : 0;
}
