/* A client of etcd 3.4's v3 JSON gateway: POST /v3/... with a
 * JSON body, over libcurl, answers read with json-c. Keys and values travel
 * base64-encoded and 64-bit numbers as strings (the gateway's proto3 JSON
 * mapping). There is no C client of etcd in Debian; the gateway is part of
 * every etcd server, so nothing else needs installing.
 *
 * One struct etcd_conn per thread (a curl handle is not shared): it keeps
 * the connection to the endpoint that answered last and goes round the
 * others when that one fails, within the call's absolute deadline. */
#include "controller/reconfig/internal.h"

#include <curl/curl.h>
#include <dlfcn.h>
#include <json-c/json.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The most one answer may hold: a range of the fabric's keys (records and
 * journals of large fabrics) or one watch message. etcd's own limit on a
 * request is 1.5 MiB by default (--max-request-bytes). */
#define ETCD_MAX_ANSWER (64u << 20)

/* The pause between two rounds of the members within one call when none
 * answered (seconds): short beside a lease (a member back is asked within
 * it), long beside a refused connection's microseconds. */
#define ETCD_ROUND_PAUSE 0.05

/* libcurl is loaded when a store on etcd is opened, not linked: linked,
 * it and the libraries it pulls in (OpenSSL, nghttp2, ...) were mapped
 * into every ofc and ofcd run, and their pages raised the resident memory
 * the schedule engines count in their estimates
 * (controller/cli/https.c loads it the same way). Only its types come from
 * curl/curl.h. */
static struct {
	CURLcode (*global_init)(long);
	CURL *(*easy_init)(void);
	CURLcode (*easy_setopt)(CURL *, CURLoption, ...);
	CURLcode (*easy_perform)(CURL *);
	CURLcode (*easy_getinfo)(CURL *, CURLINFO, ...);
	void (*easy_reset)(CURL *);
	void (*easy_cleanup)(CURL *);
	const char *(*easy_strerror)(CURLcode);
	struct curl_slist *(*slist_append)(struct curl_slist *, const char *);
	void (*slist_free_all)(struct curl_slist *);
	char why[200]; /* "": loaded */
} cu;

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;

static void curl_load(void)
{
	static const char *const names[] = {
	    "curl_global_init",	 "curl_easy_init",     "curl_easy_setopt",  "curl_easy_perform",
	    "curl_easy_getinfo", "curl_easy_reset",    "curl_easy_cleanup", "curl_easy_strerror",
	    "curl_slist_append", "curl_slist_free_all"};
	void **slots[] = {(void **)&cu.global_init,  (void **)&cu.easy_init,
			  (void **)&cu.easy_setopt,  (void **)&cu.easy_perform,
			  (void **)&cu.easy_getinfo, (void **)&cu.easy_reset,
			  (void **)&cu.easy_cleanup, (void **)&cu.easy_strerror,
			  (void **)&cu.slist_append, (void **)&cu.slist_free_all};
	void *h = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);

	if (!h) {
		snprintf(cu.why, sizeof(cu.why), "etcd needs libcurl (Debian's libcurl4): %s",
			 dlerror());
		return;
	}
	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if (!(*slots[i] = dlsym(h, names[i]))) {
			snprintf(cu.why, sizeof(cu.why), "libcurl.so.4 lacks %s", names[i]);
			return;
		}
	cu.global_init(CURL_GLOBAL_DEFAULT);
}

int etcd_curl(struct ofc_error *err)
{
	pthread_once(&curl_once, curl_load);
	return cu.why[0] ? ofc_error_set(err, OFC_E_RUNTIME, "%s", cu.why) : 0;
}

struct etcd_conn {
	CURL *h;
	char **urls; /* "http://HOST:PORT" or "https://HOST:PORT" */
	uint32_t n, cur;
	struct curl_slist *headers; /* Content-Type, and Authorization with a token */
	char *cacert, *cert, *key;  /* NULL: plain http */
	char *user, *password;	    /* NULL: etcd without auth */
	/* Under auth, each member's token (shared, or this connection's
	 * own): a simple token is valid at the member that gave it alone,
	 * and asking for one costs the member a bcrypt of the password, so
	 * each is kept until that member says it is gone. */
	struct etcd_tokens *tokens;
	bool own_tokens;
};

struct etcd_tokens {
	pthread_mutex_t mu;
	uint32_t n;
	char **tok; /* [member] (NULL: none yet) */
};

/* ---- JSON helpers ------------------------------------------------------------------ */

/* A string member, or NULL. */
const char *etcd_str(struct json_object *o, const char *key)
{
	struct json_object *v;

	if (!o || !json_object_object_get_ex(o, key, &v) ||
	    !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

/* An int64 member (a string in the gateway's JSON, a number accepted too);
 * 0 when absent (proto3 leaves zeros out). */
int64_t etcd_int(struct json_object *o, const char *key)
{
	struct json_object *v;

	if (!o || !json_object_object_get_ex(o, key, &v))
		return 0;
	if (json_object_is_type(v, json_type_string))
		return strtoll(json_object_get_string(v), NULL, 10);
	return json_object_get_int64(v);
}

/* A uint64 member (etcd's member and cluster ids use all 64 bits). */
static uint64_t etcd_uint(struct json_object *o, const char *key)
{
	struct json_object *v;

	if (!o || !json_object_object_get_ex(o, key, &v))
		return 0;
	if (json_object_is_type(v, json_type_string))
		return strtoull(json_object_get_string(v), NULL, 10);
	return (uint64_t)json_object_get_int64(v);
}

struct json_object *etcd_obj(struct json_object *o, const char *key)
{
	struct json_object *v;

	return o && json_object_object_get_ex(o, key, &v) ? v : NULL;
}

static void etcd_add_bytes(struct json_object *o, const char *key, const void *data, size_t len)
{
	char *b = b64_encode(data, len);

	json_object_object_add(o, key, json_object_new_string(b));
	free(b);
}

static void etcd_add_int(struct json_object *o, const char *key, int64_t v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%lld", (long long)v);
	json_object_object_add(o, key, json_object_new_string(buf));
}

int etcd_kv_parse(struct json_object *o, struct etcd_kv *kv)
{
	const char *k = etcd_str(o, "key"), *v = etcd_str(o, "value");

	memset(kv, 0, sizeof(*kv));
	if (!k || b64_decode(k, strlen(k), 0, (uint8_t **)&kv->key, &kv->klen) < 0)
		return -1;
	if (v && b64_decode(v, strlen(v), 0, &kv->value, &kv->len) < 0) {
		free(kv->key);
		return -1;
	}
	if (!v) {
		kv->value = xcalloc(1, 1);
		kv->len = 0;
	}
	kv->create_rev = etcd_int(o, "create_revision");
	kv->mod_rev = etcd_int(o, "mod_revision");
	kv->lease = etcd_int(o, "lease");
	return 0;
}

void etcd_kv_free(struct etcd_kv *kv)
{
	free(kv->key);
	free(kv->value);
	memset(kv, 0, sizeof(*kv));
}

/* ---- connections ---------------------------------------------------------------------- */

int etcd_endpoints_parse(const char *spec, char ***urls, uint32_t *n, struct ofc_error *err)
{
	const char *p = spec;

	*urls = NULL;
	*n = 0;
	const char *scheme = "http";

	if (strncmp(p, "etcds://", 8) == 0) {
		scheme = "https";
		p += 8;
	} else if (strncmp(p, "etcd://", 7) == 0) {
		p += 7;
	} else {
		return ofc_error_set(
		    err, OFC_E_USAGE,
		    "--cluster '%s': expected etcds://HOST:PORT[,HOST:PORT...] (TLS) or etcd://...",
		    spec);
	}
	for (;;) {
		size_t len = strcspn(p, ",");
		const char *colon = memchr(p, ':', len);
		uint32_t port;
		char portbuf[8];

		if (!len || !colon || colon == p ||
		    (size_t)(p + len - colon - 1) >= sizeof(portbuf)) {
			etcd_endpoints_free(*urls, *n);
			*urls = NULL;
			*n = 0;
			return ofc_error_set(err, OFC_E_USAGE,
					     "--cluster '%s': each member is HOST:PORT", spec);
		}
		memcpy(portbuf, colon + 1, (size_t)(p + len - colon - 1));
		portbuf[p + len - colon - 1] = 0;
		for (const char *c = p; c < colon; c++)
			if (*c <= ' ' || *c == '/' || *c == '@' || *c == '?' || *c == '#' ||
			    (unsigned char)*c >= 0x7f) {
				etcd_endpoints_free(*urls, *n);
				*urls = NULL;
				*n = 0;
				return ofc_error_set(err, OFC_E_USAGE,
						     "--cluster '%s': a host name or address is "
						     "letters, digits, '.', '-', ':' or '[]'",
						     spec);
			}
		if (parse_u32(portbuf, &port) < 0 || port < 1 || port > 65535 || *n >= 16) {
			etcd_endpoints_free(*urls, *n);
			*urls = NULL;
			*n = 0;
			return ofc_error_set(
			    err, OFC_E_USAGE,
			    "--cluster '%s': up to 16 members, each HOST:PORT with "
			    "a port in 1..65535",
			    spec);
		}
		*urls = xreallocarray(*urls, *n + 1, sizeof(char *));
		(*urls)[(*n)++] = xasprintf("%s://%.*s", scheme, (int)len, p);
		if (!p[len])
			break;
		p += len + 1;
	}
	return 0;
}

void etcd_endpoints_free(char **urls, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		free(urls[i]);
	free(urls);
}

struct etcd_conn *etcd_conn_new(char *const *urls, uint32_t n, const struct etcd_tls *tls)
{
	struct etcd_conn *c = xcalloc(1, sizeof(*c));

	if (tls && tls->cacert && tls->cert && tls->key) {
		c->cacert = xstrdup(tls->cacert);
		c->cert = xstrdup(tls->cert);
		c->key = xstrdup(tls->key);
	}
	if (tls && tls->user && tls->password) {
		c->user = xstrdup(tls->user);
		c->password = xstrdup(tls->password);
	}
	c->own_tokens = !(tls && tls->tokens && tls->tokens->n == n);
	c->tokens = c->own_tokens ? etcd_tokens_new(n) : tls->tokens;

	pthread_once(&curl_once, curl_load);
	c->urls = xcalloc(n + 1, sizeof(char *));
	for (uint32_t i = 0; i < n; i++)
		c->urls[i] = xstrdup(urls[i]);
	c->n = n;
	if (!cu.why[0]) { /* (else every call says why: etcd_curl) */
		c->h = cu.easy_init();
		c->headers = cu.slist_append(NULL, "Content-Type: application/json");
	}
	return c;
}

static void conn_headers(struct etcd_conn *c, const char *token);

struct etcd_tokens *etcd_tokens_new(uint32_t n)
{
	struct etcd_tokens *t = xcalloc(1, sizeof(*t));

	pthread_mutex_init(&t->mu, NULL);
	t->n = n;
	t->tok = xcalloc(n ? n : 1, sizeof(char *));
	return t;
}

static void token_drop(char **tok)
{
	if (*tok)
		explicit_bzero(*tok, strlen(*tok));
	free(*tok);
	*tok = NULL;
}

void etcd_tokens_free(struct etcd_tokens *t)
{
	if (!t)
		return;
	for (uint32_t i = 0; i < t->n; i++)
		token_drop(&t->tok[i]);
	free(t->tok);
	pthread_mutex_destroy(&t->mu);
	free(t);
}

static void forget_token(struct etcd_conn *c, uint32_t i)
{
	pthread_mutex_lock(&c->tokens->mu);
	token_drop(&c->tokens->tok[i]);
	pthread_mutex_unlock(&c->tokens->mu);
}

static void keep_token(struct etcd_conn *c, uint32_t i, const char *token)
{
	pthread_mutex_lock(&c->tokens->mu);
	token_drop(&c->tokens->tok[i]);
	c->tokens->tok[i] = xstrdup(token);
	pthread_mutex_unlock(&c->tokens->mu);
}

/* The headers for member i with its token, if there is one yet. */
static bool token_headers(struct etcd_conn *c, uint32_t i)
{
	pthread_mutex_lock(&c->tokens->mu);
	bool have = c->tokens->tok[i] != NULL;

	if (have)
		conn_headers(c, c->tokens->tok[i]);
	pthread_mutex_unlock(&c->tokens->mu);
	return have;
}

void etcd_conn_free(struct etcd_conn *c)
{
	if (!c)
		return;
	if (c->h)
		cu.easy_cleanup(c->h);
	if (c->headers)
		cu.slist_free_all(c->headers);
	etcd_endpoints_free(c->urls, c->n);
	free(c->cacert);
	free(c->cert);
	free(c->key);
	if (c->own_tokens)
		etcd_tokens_free(c->tokens);
	free(c->user);
	if (c->password)
		explicit_bzero(c->password, strlen(c->password));
	free(c->password);
	free(c);
}

const char *etcd_conn_url(const struct etcd_conn *c)
{
	return c->urls[c->cur];
}

/* The member a URL names, for messages: HOST:PORT. */
static const char *url_member(const char *url)
{
	const char *p = strstr(url, "://");

	return p ? p + 3 : url;
}

/* The protocol, and over TLS the member's certificate checked against
 * the CA and its name (fail closed: a member that cannot prove it is one
 * is not spoken to) and this client's certificate shown, which etcd's
 * --client-cert-auth asks for. An https URL without the files (never
 * made by the store: it refuses etcds:// without them) still verifies,
 * against the system's CAs. Nothing below TLS 1.2, whatever the system's
 * OpenSSL configuration allows (libcurl's own floor is TLS 1.0): etcd
 * speaks 1.2 and 1.3, so an older version is a member that is not etcd or
 * a downgrade. */
static void conn_transport(struct etcd_conn *c)
{
	if (strncmp(c->urls[c->cur], "https://", 8) != 0) {
		cu.easy_setopt(c->h, CURLOPT_PROTOCOLS_STR, "http");
		return;
	}
	cu.easy_setopt(c->h, CURLOPT_PROTOCOLS_STR, "https");
	cu.easy_setopt(c->h, CURLOPT_SSLVERSION, (long)CURL_SSLVERSION_TLSv1_2);
	cu.easy_setopt(c->h, CURLOPT_SSL_VERIFYPEER, 1L);
	cu.easy_setopt(c->h, CURLOPT_SSL_VERIFYHOST, 2L);
	if (c->cacert)
		cu.easy_setopt(c->h, CURLOPT_CAINFO, c->cacert);
	if (c->cert) {
		cu.easy_setopt(c->h, CURLOPT_SSLCERT, c->cert);
		cu.easy_setopt(c->h, CURLOPT_SSLKEY, c->key);
	}
}

static size_t on_data(char *p, size_t size, size_t n, void *ctx)
{
	struct strbuf *sb = ctx;

	if (sb->len + size * n > ETCD_MAX_ANSWER)
		return 0; /* curl stops: CURLE_WRITE_ERROR */
	sb_add(sb, p, size * n);
	return size * n;
}

/* Whether a transfer failed at TLS: the member's certificate not
 * vouched for by --cluster-cacert, or this client's refused by the member
 * (in TLS 1.3 the member's alert arrives at the first read, which curl
 * calls a receive error: its detailed message, OpenSSL's, says SSL). A
 * setting to fix, not a member to wait for. */
static bool tls_failure(CURLcode cc, const char *detail)
{
	switch (cc) {
	case CURLE_SSL_CONNECT_ERROR:
	case CURLE_PEER_FAILED_VERIFICATION:
	case CURLE_SSL_CERTPROBLEM:
	case CURLE_SSL_CIPHER:
	case CURLE_SSL_CACERT_BADFILE:
	case CURLE_SSL_ISSUER_ERROR:
		return true;
	case CURLE_RECV_ERROR:
	case CURLE_SEND_ERROR:
		return strstr(detail, "SSL") != NULL;
	default:
		return false;
	}
}

/* What went wrong with a transfer: curl's detailed message (OpenSSL's
 * reason for a TLS failure) when it has one. */
static const char *transfer_error(CURLcode cc, const char *detail)
{
	return detail[0] ? detail : cu.easy_strerror(cc);
}

/* Whether an etcd error is about the member answering (try another) rather
 * than about the request: gRPC's UNAVAILABLE (14) and DEADLINE_EXCEEDED (4),
 * which a member without a leader or quorum answers. */
static bool member_trouble(int64_t code)
{
	return code == 14 || code == 4;
}

/* One POST of text to PATH at the member c->cur within left seconds:
 * curl's code, *status the HTTP status and sb the answer's bytes. */
static CURLcode member_post(struct etcd_conn *c, const char *path, const char *text, double left,
			    struct strbuf *sb, long *status, char *detail)
{
	char *url = xasprintf("%s%s", c->urls[c->cur], path);
	CURLcode cc;

	*status = 0;
	cu.easy_reset(c->h);
	cu.easy_setopt(c->h, CURLOPT_URL, url);
	cu.easy_setopt(c->h, CURLOPT_POSTFIELDS, text);
	cu.easy_setopt(c->h, CURLOPT_HTTPHEADER, c->headers);
	cu.easy_setopt(c->h, CURLOPT_WRITEFUNCTION, on_data);
	cu.easy_setopt(c->h, CURLOPT_WRITEDATA, sb);
	cu.easy_setopt(c->h, CURLOPT_NOSIGNAL, 1L);
	cu.easy_setopt(c->h, CURLOPT_TIMEOUT_MS, (long)(left * 1000) + 1);
	cu.easy_setopt(c->h, CURLOPT_CONNECTTIMEOUT_MS,
		       (long)(left * 1000 < 1000 ? left * 1000 : 1000) + 1);
	conn_transport(c);
	cu.easy_setopt(c->h, CURLOPT_ERRORBUFFER, detail);
	cc = cu.easy_perform(c->h);
	cu.easy_setopt(c->h, CURLOPT_ERRORBUFFER, NULL);
	free(url);
	if (cc == CURLE_OK)
		cu.easy_getinfo(c->h, CURLINFO_RESPONSE_CODE, status);
	return cc;
}

/* The headers of every request to c->cur: the JSON type, and under auth
 * the token that member gave (NULL: none yet). */
static void conn_headers(struct etcd_conn *c, const char *token)
{
	cu.slist_free_all(c->headers);
	c->headers = cu.slist_append(NULL, "Content-Type: application/json");
	if (token) {
		char *h = xasprintf("Authorization: %s", token);

		c->headers = cu.slist_append(c->headers, h);
		explicit_bzero(h, strlen(h));
		free(h);
	}
}

/* A token from the member c->cur for c->user (auth/authenticate), set in
 * the headers: 0; or -1, with *why (to free) when etcd refused the user
 * or password and otherwise *cc and detail the transfer's failure. No
 * message quotes the password or the token. */
static int conn_auth(struct etcd_conn *c, double left, CURLcode *cc, char *detail, char **why)
{
	struct json_object *body = json_object_new_object();
	struct strbuf sb = STRBUF_INIT;
	long status;
	int rc = -1;

	json_object_object_add(body, "name", json_object_new_string(c->user));
	json_object_object_add(body, "password", json_object_new_string(c->password));
	conn_headers(c, NULL);
	forget_token(c, c->cur);
	const char *text = json_object_to_json_string_ext(body, JSON_C_TO_STRING_PLAIN);

	*cc = member_post(c, "/v3/auth/authenticate", text, left, &sb, &status, detail);
	explicit_bzero((char *)text, strlen(text));
	json_object_put(body);
	struct json_object *o = *cc == CURLE_OK && sb.len ? json_tokener_parse(sb.buf) : NULL;
	const char *token = o ? etcd_str(o, "token") : NULL;

	if (*cc == CURLE_OK && status == 200 && token && *token && !strpbrk(token, "\r\n")) {
		keep_token(c, c->cur, token);
		rc = 0;
	} else if (*cc == CURLE_OK) {
		const char *e = o ? etcd_str(o, "error") : NULL;

		if (o && !member_trouble(etcd_int(o, "code")))
			*why = xasprintf("etcd refused the user %s: %s", c->user,
					 e ? e : "an answer without a token");
		else
			snprintf(detail, CURL_ERROR_SIZE, "%s",
				 e ? e : "an answer to auth/authenticate that is not etcd's");
	}
	if (o)
		json_object_put(o);
	if (sb.buf)
		explicit_bzero(sb.buf, sb.len);
	sb_free(&sb);
	return rc;
}

/* Whether an etcd error says the token is not (or no longer) this
 * member's: it restarted, or the token expired. */
static bool token_lost(const char *emsg)
{
	return emsg && (strstr(emsg, "invalid auth token") || strstr(emsg, "user name is empty"));
}

int etcd_call(struct etcd_conn *c, const char *path, struct json_object *body, double timeout,
	      struct json_object **resp, struct ofc_error *err)
{
	const char *text = json_object_to_json_string_ext(body, JSON_C_TO_STRING_PLAIN);
	double deadline = now_seconds() + timeout;
	struct strbuf errs = STRBUF_INIT;
	bool asked_again = false; /* a lost token renewed once in this call */
	int rc = -1;

	*resp = NULL;
	if (!c->h)
		return ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_LOST, "etcd: curl did not start");
	/* Round the members until the deadline, each try at most try_s: a
	 * member that hangs (no quorum, its own election) leaves time for the
	 * next. (What is retried is idempotent: puts and deletes of the same
	 * values, guarded by the epoch; keepalives; reads.) */
	double try_s = timeout < 0.5	   ? timeout
		       : timeout > 6	   ? 2
		       : timeout / 3 > 0.5 ? timeout / 3
					   : 0.5;
	uint32_t errs_n = 0, tls_n = 0;

	for (;;) {
		struct strbuf sb = STRBUF_INIT;
		double left = deadline - now_seconds();
		long status = 0;
		char detail[CURL_ERROR_SIZE] = "";
		CURLcode cc = CURLE_OK;
		char *why = NULL;

		if (left <= 0.001)
			break;
		if (left > try_s)
			left = try_s;
		/* Under auth, a token of this member's first: the member's
		 * bcrypt may take seconds on a loaded machine, so it has the
		 * call's time up to 3 s, not one try's. */
		double auth_s = deadline - now_seconds() < 3 ? deadline - now_seconds() : 3;
		bool authed =
		    !c->user || token_headers(c, c->cur) ||
		    (conn_auth(c, auth_s > left ? auth_s : left, &cc, detail, &why) == 0 &&
		     token_headers(c, c->cur));

		if (why) {
			ofc_error_setr(
			    err, OFC_E_RUNTIME, OFC_R_CREDENTIALS,
			    "etcd: %s (check --cluster-user and --cluster-password-file)", why);
			free(why);
			sb_free(&errs);
			return -1;
		}
		if (authed) {
			left = deadline - now_seconds();
			if (left > try_s)
				left = try_s;
			cc = member_post(c, path, text, left > 0.001 ? left : 0.001, &sb, &status,
					 detail);
		} else if (cc == CURLE_OK) {
			cc = CURLE_GOT_NOTHING; /* the member's own trouble, in detail */
		}
		struct json_object *o =
		    cc == CURLE_OK && sb.len ? json_tokener_parse(sb.buf) : NULL;

		if (cc == CURLE_OK && status == 200 && o) {
			*resp = o;
			rc = 0;
			sb_free(&sb);
			break;
		}
		/* What went wrong here, then the next member. */
		const char *emsg = o ? etcd_str(o, "error") : NULL;
		if (!emsg && o)
			emsg = etcd_str(o, "message");
		int64_t code = o ? etcd_int(o, "code") : 0;

		if (c->user && token_lost(emsg) && !asked_again) {
			/* Ask this member for a token again, once. */
			asked_again = true;
			forget_token(c, c->cur);
			json_object_put(o);
			sb_free(&sb);
			continue;
		}
		/* (the first round's failures: the message stays short; when
		 * each was TLS's, the error says so) */
		if (errs_n < c->n && cc != CURLE_OK && tls_failure(cc, detail))
			tls_n++;
		if (errs_n++ < c->n)
			sb_printf(&errs, "%s%s: %s", errs.len ? "; " : "",
				  url_member(c->urls[c->cur]),
				  cc != CURLE_OK ? transfer_error(cc, detail)
				  : emsg	 ? emsg
						 : "an answer that is not etcd's");
		sb_free(&sb);
		if (cc == CURLE_OK && emsg && !member_trouble(code)) {
			/* The request itself was refused: another member
			 * would say the same. */
			ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_REFUSED, "etcd: %s", emsg);
			json_object_put(o);
			sb_free(&errs);
			return -1;
		}
		/* (emsg is o's: freed only once it is said) */
		if (o)
			json_object_put(o);
		c->cur = (c->cur + 1) % c->n;
		/* Every member failed this round: a pause before the next. A
		 * member that is down refuses the connection at once, and the
		 * next round at once dialled them in a busy loop until the
		 * deadline (a core for each of a replica's threads while etcd
		 * was down or out of reach). */
		if (errs_n % c->n == 0) {
			double nap = deadline - now_seconds();

			if (nap > ETCD_ROUND_PAUSE)
				nap = ETCD_ROUND_PAUSE;
			if (nap > 0)
				usleep((useconds_t)(nap * 1e6));
		}
	}
	if (rc < 0 && errs_n && tls_n == (errs_n < c->n ? errs_n : c->n))
		ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_CREDENTIALS,
			       "etcd: TLS with no member succeeded (%s): check --cluster-cacert, "
			       "--cluster-cert and --cluster-key",
			       errs.buf);
	else if (rc < 0)
		ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_LOST,
			       "etcd: no member answered within %.1f s (%s)", timeout,
			       errs.len ? errs.buf : "out of time");
	sb_free(&errs);
	return rc;
}

/* ---- leases ----------------------------------------------------------------------------- */

int etcd_lease_grant(struct etcd_conn *c, int64_t ttl, double timeout, int64_t *id,
		     struct ofc_error *err)
{
	struct json_object *req = json_object_new_object(), *resp;
	int rc;

	etcd_add_int(req, "TTL", ttl);
	rc = etcd_call(c, "/v3/lease/grant", req, timeout, &resp, err);
	json_object_put(req);
	if (rc < 0)
		return -1;
	*id = etcd_int(resp, "ID");
	json_object_put(resp);
	if (*id == 0)
		return ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_GARBAGE, "etcd granted no lease");
	return 0;
}

int etcd_lease_keepalive(struct etcd_conn *c, int64_t id, double timeout, int64_t *ttl,
			 int64_t *revision, struct ofc_error *err)
{
	struct json_object *req = json_object_new_object(), *resp;
	int rc;

	etcd_add_int(req, "ID", id);
	rc = etcd_call(c, "/v3/lease/keepalive", req, timeout, &resp, err);
	json_object_put(req);
	if (rc < 0)
		return -1;
	/* A stream of one answer: {"result": {...}}, no TTL when the lease is
	 * gone. */
	struct json_object *r = etcd_obj(resp, "result");

	if (!r) {
		const char *e = etcd_str(etcd_obj(resp, "error"), "message");

		rc = ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_LOST, "etcd: keepalive: %s",
				    e ? e : "no result");
		json_object_put(resp);
		return rc;
	}
	*ttl = etcd_int(r, "TTL");
	*revision = etcd_int(etcd_obj(r, "header"), "revision");
	json_object_put(resp);
	return 0;
}

int etcd_lease_ttl(struct etcd_conn *c, int64_t id, double timeout, int64_t *ttl,
		   struct ofc_error *err)
{
	struct json_object *req = json_object_new_object(), *resp;
	int rc;

	etcd_add_int(req, "ID", id);
	rc = etcd_call(c, "/v3/lease/timetolive", req, timeout, &resp, err);
	json_object_put(req);
	if (rc < 0)
		return -1;
	*ttl = etcd_int(resp, "TTL"); /* -1: expired */
	json_object_put(resp);
	return 0;
}

int etcd_lease_revoke(struct etcd_conn *c, int64_t id, double timeout, struct ofc_error *err)
{
	struct json_object *req = json_object_new_object(), *resp;
	int rc;

	etcd_add_int(req, "ID", id);
	rc = etcd_call(c, "/v3/lease/revoke", req, timeout, &resp, err);
	json_object_put(req);
	if (rc == 0)
		json_object_put(resp);
	return rc;
}

/* ---- ranges and transactions ------------------------------------------------------------- */

int etcd_range(struct etcd_conn *c, const char *key, const char *range_end, double timeout,
	       struct etcd_kv **kvs, uint32_t *n, int64_t *revision, struct ofc_error *err)
{
	struct json_object *req = json_object_new_object(), *resp, *arr;
	int rc;

	*kvs = NULL;
	*n = 0;
	etcd_add_bytes(req, "key", key, strlen(key));
	if (range_end)
		etcd_add_bytes(req, "range_end", range_end, strlen(range_end));
	rc = etcd_call(c, "/v3/kv/range", req, timeout, &resp, err);
	json_object_put(req);
	if (rc < 0)
		return -1;
	*revision = etcd_int(etcd_obj(resp, "header"), "revision");
	arr = etcd_obj(resp, "kvs");
	size_t len =
	    arr && json_object_is_type(arr, json_type_array) ? json_object_array_length(arr) : 0;
	*kvs = xcalloc(len + 1, sizeof(**kvs));
	for (size_t i = 0; i < len; i++)
		if (etcd_kv_parse(json_object_array_get_idx(arr, i), &(*kvs)[*n]) == 0)
			(*n)++;
	json_object_put(resp);
	return 0;
}

struct json_object *etcd_txn_new(void)
{
	struct json_object *t = json_object_new_object();

	json_object_object_add(t, "compare", json_object_new_array());
	json_object_object_add(t, "success", json_object_new_array());
	json_object_object_add(t, "failure", json_object_new_array());
	return t;
}

/* One compare of a txn: KEY's TARGET equals VALUE (its FIELD in etcd's JSON). */
static void compare_equal(struct json_object *t, const char *key, const char *target,
			  const char *field, int64_t value)
{
	struct json_object *c = json_object_new_object();

	etcd_add_bytes(c, "key", key, strlen(key));
	json_object_object_add(c, "target", json_object_new_string(target));
	json_object_object_add(c, "result", json_object_new_string("EQUAL"));
	etcd_add_int(c, field, value);
	json_object_array_add(etcd_obj(t, "compare"), c);
}

void etcd_txn_compare_create(struct json_object *t, const char *key, int64_t create_rev)
{
	compare_equal(t, key, "CREATE", "create_revision", create_rev);
}

/* (a key that is not there has mod revision 0) */
void etcd_txn_compare_mod(struct json_object *t, const char *key, int64_t mod_rev)
{
	compare_equal(t, key, "MOD", "mod_revision", mod_rev);
}

/* (etcd 3.3 and later: target LEASE; a key without a lease has lease 0) */
void etcd_txn_compare_lease(struct json_object *t, const char *key, int64_t lease)
{
	compare_equal(t, key, "LEASE", "lease", lease);
}

void etcd_txn_put(struct json_object *t, bool success, const char *key, const void *value,
		  size_t len, int64_t lease)
{
	struct json_object *op = json_object_new_object(), *put = json_object_new_object();

	etcd_add_bytes(put, "key", key, strlen(key));
	etcd_add_bytes(put, "value", value, len);
	if (lease)
		etcd_add_int(put, "lease", lease);
	json_object_object_add(op, "request_put", put);
	json_object_array_add(etcd_obj(t, success ? "success" : "failure"), op);
}

void etcd_txn_delete(struct json_object *t, bool success, const char *key)
{
	struct json_object *op = json_object_new_object(), *del = json_object_new_object();

	etcd_add_bytes(del, "key", key, strlen(key));
	json_object_object_add(op, "request_delete_range", del);
	json_object_array_add(etcd_obj(t, success ? "success" : "failure"), op);
}

void etcd_txn_delete_range(struct json_object *t, bool success, const char *key,
			   const char *range_end)
{
	struct json_object *op = json_object_new_object(), *del = json_object_new_object();

	etcd_add_bytes(del, "key", key, strlen(key));
	etcd_add_bytes(del, "range_end", range_end, strlen(range_end));
	json_object_object_add(op, "request_delete_range", del);
	json_object_array_add(etcd_obj(t, success ? "success" : "failure"), op);
}

void etcd_txn_range(struct json_object *t, bool success, const char *key, const char *range_end,
		    bool keys_only)
{
	struct json_object *op = json_object_new_object(), *r = json_object_new_object();

	etcd_add_bytes(r, "key", key, strlen(key));
	if (range_end)
		etcd_add_bytes(r, "range_end", range_end, strlen(range_end));
	if (keys_only)
		json_object_object_add(r, "keys_only", json_object_new_boolean(1));
	json_object_object_add(op, "request_range", r);
	json_object_array_add(etcd_obj(t, success ? "success" : "failure"), op);
}

int etcd_txn(struct etcd_conn *c, struct json_object *t, double timeout, bool *succeeded,
	     int64_t *revision, struct json_object **resp, struct ofc_error *err)
{
	struct json_object *r;

	*resp = NULL;
	if (etcd_call(c, "/v3/kv/txn", t, timeout, &r, err) < 0)
		return -1;
	struct json_object *sv = etcd_obj(r, "succeeded");

	*succeeded = sv && json_object_get_boolean(sv);
	*revision = etcd_int(etcd_obj(r, "header"), "revision");
	*resp = r;
	return 0;
}

uint32_t etcd_txn_kvs(struct json_object *resp, uint32_t i, struct etcd_kv **kvs)
{
	struct json_object *rs = etcd_obj(resp, "responses"), *kv;
	uint32_t n = 0;

	*kvs = NULL;
	if (!rs || !json_object_is_type(rs, json_type_array) || i >= json_object_array_length(rs))
		return 0;
	kv = etcd_obj(etcd_obj(json_object_array_get_idx(rs, i), "response_range"), "kvs");
	size_t len =
	    kv && json_object_is_type(kv, json_type_array) ? json_object_array_length(kv) : 0;

	*kvs = xcalloc(len + 1, sizeof(**kvs));
	for (size_t k = 0; k < len; k++)
		if (etcd_kv_parse(json_object_array_get_idx(kv, k), &(*kvs)[n]) == 0)
			n++;
	return n;
}

/* ---- status --------------------------------------------------------------------------------- */

int etcd_member_status(struct etcd_conn *c, uint32_t i, double timeout, uint64_t *member,
		       uint64_t *leader, struct ofc_error *err)
{
	struct json_object *req = json_object_new_object(), *resp;
	char **all = c->urls;
	uint32_t cur = c->cur, n = c->n;
	int rc;

	/* this member alone: no going round the others */
	c->urls = &all[i];
	c->cur = 0;
	c->n = 1;
	rc = etcd_call(c, "/v3/maintenance/status", req, timeout, &resp, err);
	c->urls = all;
	c->cur = cur;
	c->n = n;
	json_object_put(req);
	if (rc < 0)
		return -1;
	*member = etcd_uint(etcd_obj(resp, "header"), "member_id");
	*leader = etcd_uint(resp, "leader");
	json_object_put(resp);
	return 0;
}

int etcd_member_names(struct etcd_conn *c, double timeout, uint64_t *ids, char (*names)[64],
		      char (*urls)[128], uint32_t max, uint32_t *n, struct ofc_error *err)
{
	struct json_object *req = json_object_new_object(), *resp, *ms;
	int rc = etcd_call(c, "/v3/cluster/member/list", req, timeout, &resp, err);

	*n = 0;
	json_object_put(req);
	if (rc < 0)
		return -1;
	ms = etcd_obj(resp, "members");
	for (size_t i = 0; ms && json_object_is_type(ms, json_type_array) &&
			   i < json_object_array_length(ms) && *n < max;
	     i++) {
		struct json_object *m = json_object_array_get_idx(ms, i),
				   *curls = etcd_obj(m, "clientURLs");
		const char *name = etcd_str(m, "name");
		const char *url = curls && json_object_is_type(curls, json_type_array) &&
					  json_object_array_length(curls)
				      ? json_object_get_string(json_object_array_get_idx(curls, 0))
				      : "";

		ids[*n] = etcd_uint(m, "ID");
		snprintf(names[*n], 64, "%s", name && *name ? name : url);
		snprintf(urls[*n], 128, "%s", url ? url : "");
		(*n)++;
	}
	json_object_put(resp);
	return 0;
}

/* ---- watches --------------------------------------------------------------------------------- */

struct watch_ctx {
	struct json_tokener *tok;
	size_t pending; /* bytes of a message not complete yet */
	int (*on_msg)(void *ctx, struct json_object *msg);
	void *ctx;
	bool stop;
};

static size_t on_watch_data(char *p, size_t size, size_t n, void *vctx)
{
	struct watch_ctx *w = vctx;
	size_t len = size * n;

	/* The gateway sends one JSON object per message, with newlines
	 * between them; json-c's tokener takes them as they come. */
	for (size_t off = 0; off < len && !w->stop;) {
		struct json_object *o = json_tokener_parse_ex(
		    w->tok, p + off, (int)(len - off > INT32_MAX ? INT32_MAX : len - off));
		enum json_tokener_error e = json_tokener_get_error(w->tok);

		if (e == json_tokener_continue) {
			w->pending += len - off;
			if (w->pending > ETCD_MAX_ANSWER)
				return 0;
			break;
		}
		if (!o) {
			/* whitespace between messages, or garbage: skip one byte */
			json_tokener_reset(w->tok);
			if (p[off] == ' ' || p[off] == '\n' || p[off] == '\r' || p[off] == '\t') {
				off++;
				continue;
			}
			return 0;
		}
		off += (size_t)json_tokener_get_parse_end(w->tok);
		json_tokener_reset(w->tok);
		w->pending = 0;
		if (w->on_msg(w->ctx, o) < 0)
			w->stop = true;
		json_object_put(o);
	}
	return w->stop ? 0 : len;
}

static int on_watch_progress(void *vctx, curl_off_t a, curl_off_t b, curl_off_t c, curl_off_t d)
{
	const _Atomic bool *stop = vctx;

	(void)a;
	(void)b;
	(void)c;
	(void)d;
	return atomic_load(stop) ? 1 : 0;
}

int etcd_watch(struct etcd_conn *c, const char *key, const char *range_end, int64_t start_rev,
	       const _Atomic bool *stop, int (*on_msg)(void *ctx, struct json_object *msg),
	       void *ctx, struct ofc_error *err)
{
	struct json_object *req, *cr;
	struct watch_ctx w = {.on_msg = on_msg, .ctx = ctx};
	char detail[CURL_ERROR_SIZE] = "";
	char *why = NULL;
	CURLcode cc = CURLE_OK;

	/* Under auth, a token of this member's first (a watch is one
	 * request that lasts). */
	if (c->user && !token_headers(c, c->cur) && conn_auth(c, 3, &cc, detail, &why) < 0) {
		if (why) {
			ofc_error_setr(
			    err, OFC_E_RUNTIME, OFC_R_CREDENTIALS,
			    "etcd: %s (check --cluster-user and --cluster-password-file)", why);
			free(why);
			return -1;
		}
		ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_LOST, "etcd: the watch at %s: %s",
			       url_member(c->urls[c->cur]),
			       cc == CURLE_OK ? detail : transfer_error(cc, detail));
		c->cur = (c->cur + 1) % c->n;
		return -1;
	}
	req = json_object_new_object();
	cr = json_object_new_object();
	w.tok = json_tokener_new_ex(64);
	char *url = xasprintf("%s/v3/watch", c->urls[c->cur]);

	etcd_add_bytes(cr, "key", key, strlen(key));
	etcd_add_bytes(cr, "range_end", range_end, strlen(range_end));
	etcd_add_int(cr, "start_revision", start_rev);
	json_object_object_add(req, "create_request", cr);
	cu.easy_reset(c->h);
	cu.easy_setopt(c->h, CURLOPT_URL, url);
	cu.easy_setopt(c->h, CURLOPT_POSTFIELDS,
		       json_object_to_json_string_ext(req, JSON_C_TO_STRING_PLAIN));
	if (c->user)
		token_headers(c, c->cur);
	cu.easy_setopt(c->h, CURLOPT_HTTPHEADER, c->headers);
	cu.easy_setopt(c->h, CURLOPT_WRITEFUNCTION, on_watch_data);
	cu.easy_setopt(c->h, CURLOPT_WRITEDATA, &w);
	cu.easy_setopt(c->h, CURLOPT_NOSIGNAL, 1L);
	cu.easy_setopt(c->h, CURLOPT_CONNECTTIMEOUT_MS, 1000L);
	conn_transport(c);
	cu.easy_setopt(c->h, CURLOPT_ERRORBUFFER, detail);
	/* A stop is seen within the progress callback's period (curl calls it
	 * about once a second when nothing moves, more often otherwise). */
	cu.easy_setopt(c->h, CURLOPT_NOPROGRESS, 0L);
	cu.easy_setopt(c->h, CURLOPT_XFERINFOFUNCTION, on_watch_progress);
	cu.easy_setopt(c->h, CURLOPT_XFERINFODATA, (void *)stop);
	/* A member that vanishes without a word (a partition) leaves the
	 * stream silent: TCP keepalive finds the dead connection. */
	cu.easy_setopt(c->h, CURLOPT_TCP_KEEPALIVE, 1L);
	cu.easy_setopt(c->h, CURLOPT_TCP_KEEPIDLE, 2L);
	cu.easy_setopt(c->h, CURLOPT_TCP_KEEPINTVL, 1L);
	cc = cu.easy_perform(c->h);
	cu.easy_setopt(c->h, CURLOPT_ERRORBUFFER, NULL);
	free(url);
	json_tokener_free(w.tok);
	json_object_put(req);
	if (atomic_load(stop) || w.stop)
		return 0;
	ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_LOST, "etcd: the watch at %s ended: %s",
		       url_member(c->urls[c->cur]),
		       cc == CURLE_OK ? "the member closed it" : transfer_error(cc, detail));
	/* (a watch a member ended may have been its refusal of the token) */
	if (c->user)
		forget_token(c, c->cur);
	c->cur = (c->cur + 1) % c->n;
	return -1;
}

/* ---- the replicas' registrations ---------------------------------------------------------- */

/* A registration's value into r (name from the key when it says none). */
void etcd_reg_parse(const char *name, const uint8_t *value, struct store_replica *r)
{
	struct json_object *o = json_tokener_parse((const char *)value);
	const char *v;

	memset(r, 0, sizeof(*r));
	snprintf(r->name, sizeof(r->name), "%s", (v = etcd_str(o, "name")) ? v : name);
	snprintf(r->role, sizeof(r->role), "%s", (v = etcd_str(o, "role")) ? v : "?");
	snprintf(r->socket, sizeof(r->socket), "%s", (v = etcd_str(o, "socket")) ? v : "");
	snprintf(r->url, sizeof(r->url), "%s", (v = etcd_str(o, "url")) ? v : "");
	snprintf(r->host, sizeof(r->host), "%s", (v = etcd_str(o, "host")) ? v : "");
	r->epoch = (uint64_t)etcd_int(o, "epoch");
	r->revision = (uint64_t)etcd_int(o, "revision");
	r->pid = (uint32_t)etcd_int(o, "pid");
	r->started_ms = (uint64_t)etcd_int(o, "started_unix_ms");
	r->written_ms = (uint64_t)etcd_int(o, "written_unix_ms");
	r->lease_left = -1;
	if (o)
		json_object_put(o);
}

/* A prefix of keys for etcd: printable, no quote (it goes into commands
 * the messages give), starting and ending with '/'. */
bool etcd_prefix_ok(const char *p)
{
	size_t n = strlen(p);

	if (n < 1 || n > 200 || p[0] != '/' || p[n - 1] != '/')
		return false;
	for (; *p; p++)
		if (*p <= ' ' || *p == '\'' || *p == 0x7f)
			return false;
	return true;
}

double etcd_campaign_timeout(double tick, double ttl, bool loaded, size_t bytes)
{
	double t = tick > 0.2 ? tick : 0.2, most = ttl / 2 > t ? ttl / 2 : t;

	/* A won campaign's answer carries every key of the fabric (a record
	 * and journal of 65,536 hosts: megabytes of base64 JSON), and one that
	 * times out after etcd took it leaves a leader key this replica cannot
	 * tell from a forged one (ours_again): it deletes it and campaigns
	 * again, each time, while the answer outlasts the deadline. So a
	 * second more for each 4 MB the cache holds (all of half a lease when
	 * it holds nothing yet), within half a lease, which the keepalive
	 * waits behind. */
	t += loaded ? (double)bytes / 4e6 : most;
	return t < most ? t : most;
}
