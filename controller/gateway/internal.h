/* Private to controller/gateway/: the parts of ofc-gateway its files share.
 *
 *   gateway.c   the HTTPS server (libmicrohttpd): connections, the
 *               watchdog that cuts slow ones, routes, answers, streams
 *   tls.c       the clients' certificates: the trust list (CA + CRL), the
 *               check in the handshake, the names a certificate carries
 *   upstream.c  connections to ofcd's gateway socket: a pool for calls,
 *               one of its own for each stream
 *   policy.c    the policy file (gateway.h)
 *   cache.c     answers already written as JSON, by ofcd's bytes */
#ifndef OFC_CONTROLLER_GATEWAY_INTERNAL_H
#define OFC_CONTROLLER_GATEWAY_INTERNAL_H

#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <pthread.h>

#include "controller/gateway/gateway.h"
#include "proto/control.pb-c.h"

/* What the gateway speaks (GnuTLS's priority string): TLS 1.3 and 1.2, and
 * in 1.2 only forward-secret (ECDHE) suites with authenticated encryption
 * (GCM, ChaCha20-Poly1305) as RFC 9325 (BCP 195) recommends, and no SHA-1
 * handshake signature (RFC 9155). GnuTLS's NORMAL alone adds CBC with HMAC
 * (the construction padding oracles such as Lucky 13 read), the static RSA
 * key exchange under an RSA certificate made for key encipherment (no
 * forward secrecy), SHA-1 signatures for a client that offers only those
 * and, in TLS 1.3, ffdhe2048 (112 bits). tests/integration/test_tls_scan.sh
 * scans it with sslscan. */
#define GW_TLS_PRIORITIES                                                                          \
	"NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2:-KX-ALL:+ECDHE-ECDSA:+ECDHE-RSA:"              \
	"-CIPHER-ALL:+AES-256-GCM:+CHACHA20-POLY1305:+AES-128-GCM:-MAC-ALL:+AEAD:-GROUP-DH-ALL:"   \
	"-SIGN-RSA-SHA1:-SIGN-ECDSA-SHA1:-SIGN-DSA-SHA1"

/* ---- tls.c ---- */
/* What a client's certificate is checked against: the CA certificates and
 * the CA's CRL, and when that CRL goes stale. */
struct gw_trust;
/* CA certificates (PEM, one or more) and optionally the CA's CRLs (PEM)
 * into a new trust. A CRL file is refused unless every CRL in it (one at
 * least) is signed by a CA of the CA file, has a nextUpdate that has not
 * passed and a thisUpdate that has. Errors name the file and why. crl is
 * kept (the options' string, for the log). */
int gw_trust_load(const char *ca, const char *crl, struct gw_trust **out, struct ofc_error *err);
void gw_trust_free(struct gw_trust *t);
/* The trust (o->ca, o->crl) and the policy (o->policy), both or neither:
 * what the gateway starts with and a reload swaps in. */
int gw_load_trust_policy(const struct gw_opts *o, struct gw_trust **t, struct gw_policy **pol,
			 struct ofc_error *err);
/* The trust's lines of /metrics (Prometheus text; "" without a CRL); the
 * caller frees them. */
char *gw_trust_metrics(const struct gw_trust *t);
/* The peer's certificate chain against t: 0 when it verifies (signed by
 * the CA, in its validity period, not revoked, made for client
 * authentication) and the CRL is not stale; else -1 with `why` ("no client
 * certificate", "expired", "revoked", "not signed by the CA", "not for
 * client authentication", "the CRL ... is stale ..."), or -2: refused for
 * a stale CRL, which a line logged in the last minute already said (do not
 * log it). `who` gets the subject's DN either way (for the log). Called
 * from the connections' threads at once: t is changed only through
 * atomics. */
int gw_peer_verify(gnutls_session_t s, struct gw_trust *t, char *who, size_t wlen, char *why,
		   size_t ylen);
/* The peer certificate's names as the policy writes them: "cn:NAME", then
 * "dns:", "uri:", "email:" for each subject alternative name. At most
 * GW_MAX_NAMES; the caller frees each and the array. */
#define GW_MAX_NAMES 32
uint32_t gw_peer_names(gnutls_session_t s, char **names);

/* ---- upstream.c ---- */
struct upstream {
	char *path;
	uint32_t max_open;
	double timeout;
	pthread_mutex_t mu;
	pthread_cond_t cond;
	int *idle;
	uint32_t nidle, nopen;
	uint64_t next_id;
};

void up_init(struct upstream *u, const char *path, uint32_t max_open, double timeout);
void up_fini(struct upstream *u);
/* Send req (its id is set here) and wait for its answer, on a pooled
 * connection; reads are retried once on a fresh one when a kept
 * connection turns out closed. Errors: OFC_E_RUNTIME (ofcd unreachable,
 * no answer in time, no free connection in time). */
int up_call(struct upstream *u, Ofc__V1__Request *req, Ofc__V1__Response **resp,
	    struct ofc_error *err);
/* A follower's NOT_LEADER names the leader's socket; through the gateway
 * it must name the leader's URL (Leader.url): the message is rewritten so
 * (true), when the leader has one. up_call does it; up_call_frame's
 * callers do it when they unpack. */
bool up_not_leader_words(Ofc__V1__Response *r);
/* As up_call, the answer left as ofcd sent it: *frame (the caller frees
 * it) of *len bytes. When *skip > 0 the frame begins with the request's id
 * (*skip bytes), and the rest depends on the answer alone: the same bytes
 * are the same answer to any request (a cache's key). *skip 0: it did not
 * (an answer about the connection, id 0, or one packed otherwise). */
/* The bytes a Response answering `id` begins with as protobuf-c packs it
 * (fields in the order of their numbers; id is field 1) into out: their
 * length, 0 if over cap. */
size_t up_id_prefix(uint64_t id, uint8_t *out, size_t cap);
int up_call_frame(struct upstream *u, Ofc__V1__Request *req, uint8_t **frame, size_t *len,
		  size_t *skip, struct ofc_error *err);
/* A stream (Watch, a streamed GetSchedule) has a connection of its own,
 * counted against max_open: opened with the request sent, read frame by
 * frame, closed when done. */
struct up_stream {
	struct upstream *u;
	int fd;
	uint64_t id;
	uint64_t client_id; /* answers carry this id instead (0: id) */
	uint8_t *buf;
	size_t cap;
};
int up_stream_open(struct upstream *u, Ofc__V1__Request *req, struct up_stream *s,
		   struct ofc_error *err);
/* The next Response of the stream, waiting at most `wait` seconds: 1 with
 * *resp, 0 when nothing came in that time, -1 on error or end. */
int up_stream_next(struct up_stream *s, double wait, Ofc__V1__Response **resp,
		   struct ofc_error *err);
void up_stream_close(struct up_stream *s);

/* ---- cache.c ----
 * The JSON of recent answers, keyed by the bytes of ofcd's answer after
 * its id (up_call_frame's): a GetState answered with the same bytes as
 * before (the same state, seen by the same role and partitions, since
 * ofcd's answer says all of it) is not decoded and written again. At most
 * GW_CACHE_ENTRIES, each of a frame of at most GW_CACHE_MAX_KEY bytes, the
 * least recently used replaced. */
#define GW_CACHE_ENTRIES 16
#define GW_CACHE_MAX_KEY (256u << 10)
struct gw_cache_entry {
	uint8_t *key;
	size_t klen;
	char *json;
	size_t jlen;
	unsigned code; /* the HTTP status */
	uint64_t used;
};
struct gw_cache {
	pthread_mutex_t mu;
	struct gw_cache_entry e[GW_CACHE_ENTRIES];
	uint64_t tick;
	uint64_t hits, misses;
};
void gw_cache_init(struct gw_cache *c);
void gw_cache_fini(struct gw_cache *c);
/* A copy of the JSON stored under key (the caller frees it), or NULL. */
char *gw_cache_get(struct gw_cache *c, const uint8_t *key, size_t klen, size_t *jlen,
		   unsigned *code);
/* Store copies of key and json (a key over GW_CACHE_MAX_KEY: nothing). */
void gw_cache_put(struct gw_cache *c, const uint8_t *key, size_t klen, const char *json,
		  size_t jlen, unsigned code);

#endif
