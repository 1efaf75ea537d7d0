/* libofc-mpi: ofcd's requests through ofc-gateway (OFC_GATEWAY), for a
 * job on a host where ofcd's socket is not (another machine).
 *
 * The gateway's POST /v1/call (docs/control.md, "The network API") takes
 * the same packed ofc.v1.Request the socket does and answers ofcd's frames
 * (a 4-byte big-endian length and a Response each), so the library's
 * GetSchedule and ReportMpi go through it unchanged; the gateway names the
 * caller to ofcd by its client certificate (OFC_CERT, OFC_KEY; the CA that
 * signed the gateway's, OFC_CACERT, as the Python client takes them), and
 * ofcd holds a tenant to its partitions. HTTPS by libcurl, loaded when a
 * call is made (dlopen, as ofc's etcd client does) and let go after, so a
 * job that does not name a gateway never loads it and the library keeps
 * no state of its own here. */
#include "exec/mpi/pmpi.h"

#include <curl/curl.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GW_ANSWER_MAX ((size_t)(512u << 20) + 4) /* a frame, as ofcd's socket answers */

/* The libcurl calls used, from the handle dlopen gave. */
struct curl_api {
	void *h;
	CURL *(*init)(void);
	CURLcode (*setopt)(CURL *, CURLoption, ...);
	CURLcode (*perform)(CURL *);
	CURLcode (*getinfo)(CURL *, CURLINFO, ...);
	void (*cleanup)(CURL *);
	const char *(*strerror)(CURLcode);
	struct curl_slist *(*slist_append)(struct curl_slist *, const char *);
	void (*slist_free_all)(struct curl_slist *);
};

static int curl_load(struct curl_api *c, char *why, size_t n)
{
	static const char *const names[] = {
	    "curl_easy_init",	 "curl_easy_setopt",   "curl_easy_perform", "curl_easy_getinfo",
	    "curl_easy_cleanup", "curl_easy_strerror", "curl_slist_append", "curl_slist_free_all"};
	void **slots[] = {(void **)&c->init,	     (void **)&c->setopt,
			  (void **)&c->perform,	     (void **)&c->getinfo,
			  (void **)&c->cleanup,	     (void **)&c->strerror,
			  (void **)&c->slist_append, (void **)&c->slist_free_all};

	if (!(c->h = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL))) {
		snprintf(why, n, "OFC_GATEWAY needs libcurl (Debian's libcurl4): %s", dlerror());
		return -1;
	}
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!(*slots[i] = dlsym(c->h, names[i]))) {
			snprintf(why, n, "libcurl.so.4 lacks %s", names[i]);
			dlclose(c->h);
			return -1;
		}
	return 0;
}

struct answer {
	uint8_t *buf;
	size_t len, cap;
	bool over;
};

static size_t on_data(char *p, size_t size, size_t nmemb, void *ctx)
{
	struct answer *a = ctx;
	size_t k = size * nmemb;

	if (a->len + k > GW_ANSWER_MAX) {
		a->over = true;
		return 0; /* (libcurl stops: a write error) */
	}
	if (a->len + k > a->cap) {
		size_t cap = a->cap ? a->cap : 4096;
		uint8_t *b;

		while (cap < a->len + k)
			cap *= 2;
		if (!(b = realloc(a->buf, cap)))
			abort();
		a->buf = b;
		a->cap = cap;
	}
	memcpy(a->buf + a->len, p, k);
	a->len += k;
	return k;
}

/* OFC_CERT, OFC_KEY, OFC_CACERT onto the handle; -1 with why when one the
 * gateway needs is missing. */
static int tls_files(const struct curl_api *c, CURL *h, char *why, size_t n)
{
	const char *cert = getenv("OFC_CERT"), *key = getenv("OFC_KEY"), *ca = getenv("OFC_CACERT");

	if (!cert || !*cert || !key || !*key) {
		snprintf(why, n,
			 "OFC_GATEWAY needs the job's client certificate: OFC_CERT and OFC_KEY "
			 "(PEM files)");
		return -1;
	}
	c->setopt(h, CURLOPT_SSLCERT, cert);
	c->setopt(h, CURLOPT_SSLKEY, key);
	if (ca && *ca)
		c->setopt(h, CURLOPT_CAINFO, ca);
	return 0;
}

uint8_t *pmpi_gateway_call(const uint8_t *req, size_t req_len, size_t *len, double timeout,
			   char *why, size_t n)
{
	const char *gw = getenv("OFC_GATEWAY");
	struct curl_api c;
	struct curl_slist *hdr = NULL;
	struct answer a = {0};
	char url[1024];
	long code = 0;
	uint32_t flen;
	CURLcode rc;
	CURL *h;

	size_t gl = strlen(gw);

	if (strncmp(gw, "https://", 8) != 0 || gl <= 8 || gl > sizeof(url) - 16) {
		snprintf(why, n, "OFC_GATEWAY '%.200s' is not https://HOST:PORT", gw);
		return NULL;
	}
	while (gl > 8 && gw[gl - 1] == '/')
		gl--;
	snprintf(url, sizeof(url), "%.*s/v1/call", (int)gl, gw);
	if (curl_load(&c, why, n) < 0)
		return NULL;
	if (!(h = c.init())) {
		snprintf(why, n, "libcurl: no handle");
		dlclose(c.h);
		return NULL;
	}
	if (tls_files(&c, h, why, n) < 0)
		goto out;
	hdr = c.slist_append(hdr, "Content-Type: application/x-protobuf");
	c.setopt(h, CURLOPT_URL, url);
	c.setopt(h, CURLOPT_PROTOCOLS_STR, "https");
	c.setopt(h, CURLOPT_NOSIGNAL, 1L);
	c.setopt(h, CURLOPT_HTTPHEADER, hdr);
	c.setopt(h, CURLOPT_POSTFIELDS, req);
	c.setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)req_len);
	c.setopt(h, CURLOPT_TIMEOUT_MS, (long)(timeout * 1000));
	c.setopt(h, CURLOPT_WRITEFUNCTION, on_data);
	c.setopt(h, CURLOPT_WRITEDATA, &a);
	rc = c.perform(h);
	c.getinfo(h, CURLINFO_RESPONSE_CODE, &code);
	if (rc != CURLE_OK)
		snprintf(why, n, "the gateway at %.200s: %s", gw,
			 a.over ? "an answer over 512 MiB" : c.strerror(rc));
	else if (code != 200 || a.len < 4)
		snprintf(why, n, "the gateway at %.200s answered HTTP %ld%s%.*s", gw, code,
			 a.len ? ": " : "", (int)(a.len < 300 ? a.len : 300),
			 a.buf ? (const char *)a.buf : "");
	else if ((flen = (uint32_t)a.buf[0] << 24 | (uint32_t)a.buf[1] << 16 |
			 (uint32_t)a.buf[2] << 8 | a.buf[3]) > a.len - 4)
		snprintf(why, n, "the gateway at %.200s: its answer was cut short", gw);
	else {
		memmove(a.buf, a.buf + 4, flen);
		*len = flen;
		c.slist_free_all(hdr);
		c.cleanup(h);
		dlclose(c.h);
		return a.buf;
	}
out:
	free(a.buf);
	c.slist_free_all(hdr);
	c.cleanup(h);
	dlclose(c.h);
	return NULL;
}
