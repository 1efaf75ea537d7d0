/* Private to controller/gateway/: the parts of ofc-gateway its files share.
 *
 *   gateway.c   the HTTPS server (libmicrohttpd): its start, the
 *               watchdog's thread, routes, answers, streams
 *   admit.c     connections from accept to close: who is let in, who gives
 *               way, who is cut; log lines strangers cause, limited
 *   framing.c   a request's framing (Content-Length, Transfer-Encoding)
 *               and a NUL decoded into its path or query
 *   tls.c       the clients' certificates: the trust list (CA + CRL), the
 *               check in the handshake, the names a certificate carries
 *   upstream.c  connections to ofcd's gateway socket: a pool for calls,
 *               one of its own for each stream
 *   policy.c    the policy file (gateway.h)
 *   cache.c     answers already written as JSON, by ofcd's bytes
 *   share.c     big states' answers written once, shared, read in turn
 *   encode.c    an answer on the wire: gzip, the state's ETag and 304
 *   ui.c        the operator's page: /ui/ and its files from --ui-dir */
#ifndef OFC_CONTROLLER_GATEWAY_INTERNAL_H
#define OFC_CONTROLLER_GATEWAY_INTERNAL_H

#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <microhttpd.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <sys/socket.h>

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
/* The loaded CRL's nextUpdate (unix s, the earliest of its CRLs'); 0: no
 * CRL. */
int64_t gw_trust_crl_next_update(const struct gw_trust *t);
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
/* The streams' budget, apart from the pool: a Watch gets a line every
 * 15 s, so streams that took pooled connections kept every request
 * waiting. At most `total` at once, `principal` of one principal's and
 * `address` from one client address; holders counts each principal's and
 * address's (keys "p:IDENTITY", "a:ADDRESS"). */
struct up_stream_limits {
	uint32_t total, principal, address;
};
enum up_refusal { UP_REFUSED_TOTAL, UP_REFUSED_PRINCIPAL, UP_REFUSED_ADDRESS, UP_REFUSED_N };
struct up_holder {
	char key[96];
	uint32_t n;
};

struct upstream {
	char *path;
	uint32_t max_open;
	double timeout;
	pthread_mutex_t mu;
	pthread_cond_t cond;
	int *idle;
	uint32_t nidle, nopen;
	uint64_t next_id;
	/* ---- the streams (under mu) ---- */
	struct up_stream_limits lim;
	uint32_t nstreams, nholders;
	struct up_holder *holders; /* 2 * lim.total */
	uint64_t refused[UP_REFUSED_N];
	/* ---- the requests' connections (under mu): those in use by
	 * principals but admins, together (npublic) and each (users,
	 * max_open rows), and the waits that ran out over a share ---- */
	uint32_t npublic, nusers;
	struct up_holder *users;
	uint64_t share_refused;
};

void up_init(struct upstream *u, const char *path, uint32_t max_open, double timeout,
	     const struct up_stream_limits *lim);
/* The streams' gauge and refusals as Prometheus text (the caller frees). */
char *up_stream_metrics(struct upstream *u);
void up_fini(struct upstream *u);
/* Send req (its id is set here) and wait for its answer, on a pooled
 * connection; reads are retried once on a fresh one when a kept
 * connection turns out closed. Errors: OFC_E_RUNTIME (ofcd unreachable,
 * no answer in time, no free connection in time): -1; -2 when the
 * principal's share of the connections (a principal but an admin: a
 * quarter each, three quarters together) stayed full until the timeout. */
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
 * counted against the streams' budget (struct up_stream_limits), never the
 * pool's: opened with the request sent, read frame by frame, closed when
 * done. */
struct up_stream {
	struct upstream *u;
	int fd;
	uint64_t id;
	uint64_t client_id; /* answers carry this id instead (0: id) */
	uint8_t *buf;
	size_t cap;
	bool counted; /* holds a place in the budget under keys */
	char keys[2][96];
};
/* -1: ofcd did not take it (err); -2: over the streams' budget, err says
 * which limit (the caller answers 429). principal: its identity; addr:
 * the client's address (NULL: none counted). */
int up_stream_open(struct upstream *u, Ofc__V1__Request *req, struct up_stream *s,
		   const char *principal, const char *addr, struct ofc_error *err);
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

/* ---- share.c ----
 * Answers to a GetState whose state is bigger than the cache takes
 * (GW_CACHE_MAX_KEY): written once as JSON and gzip, shared by reference
 * with every reader of the same state, and read one at a time in a lane
 * (its turn): one such answer from ofcd in flight and one JSON being
 * written a lane. Admins have a lane of their own, everyone else shares
 * the other, each lane first come first served; a principal but an admin
 * may have reads of at most GW_SHARE_PER_PRINCIPAL distinct requests in
 * its lane at once (more: 429 at once; reads of the same request share
 * one answer), so one principal's reads add at most that many turns to
 * anyone else's wait, and none to an admin's. A read is keyed by its request
 * (options and principal); at most GW_SHARES kept. Whether a read is big
 * is its key's last answer, else its principal's last (GW_SHARE_WHO
 * principals remembered, so another's many distinct reads cannot make a
 * small reader's wait), else the last of anyone's.
 *
 *   sh = gw_shares_begin(...)      kept and fetched after the reader came:
 *                                  answer it (gw_send_shared); NULL: fetch
 *                                  (turn->refused: over its share or the
 *                                  wait ran out, err)
 *   gw_shares_fetched(turn)        just before asking ofcd
 *   gw_shares_same / _put          a big answer: the kept one if the same
 *                                  bytes, else store the JSON (owned now)
 *   gw_shares_small(...)           the answer was small: no turns for it
 *   gw_shares_end(...)             always, after the fetch */
#define GW_SHARES	       4
#define GW_SHARE_MAX_KEY       4096
#define GW_SHARE_WHO	       64
#define GW_SHARE_PER_PRINCIPAL 2
struct gw_shared;
struct gw_share_entry {
	uint8_t *key;
	size_t klen;
	struct gw_shared *sh;
	bool big;	  /* the last answer was over GW_CACHE_MAX_KEY */
	size_t flen_seen; /* its size, for a refusal's words */
	double fetched;	  /* when sh's answer was asked of ofcd (monotonic) */
	uint64_t used;
};
/* A principal's reads in a lane (n[i] of the request whose key hashes to
 * key[i]; n[i] 0: a free slot), and the size of its last answer (0:
 * small; SIZE_MAX: none yet). */
struct gw_share_who {
	char id[128];
	uint64_t key[GW_SHARE_PER_PRINCIPAL];
	uint32_t n[GW_SHARE_PER_PRINCIPAL];
	size_t last;
	uint64_t used;
};
struct gw_share_waiter;
struct gw_share_lane {
	bool busy; /* a read holds the turn */
	struct gw_share_waiter *head, *tail;
};
enum { GW_LANE_ADMIN, GW_LANE_OTHERS, GW_NLANES };
enum { GW_SHARE_REFUSED_PRINCIPAL, GW_SHARE_REFUSED_WAIT, GW_SHARE_NREFUSED };
struct gw_shares {
	pthread_mutex_t mu; /* everything here */
	struct gw_share_lane lane[GW_NLANES];
	struct gw_share_entry e[GW_SHARES];
	struct gw_share_who who[GW_SHARE_WHO];
	uint64_t tick, built, reused, refused[GW_SHARE_NREFUSED];
	size_t any_big; /* the last big answer's size (0: none, or small since) */
};
struct gw_share_turn {
	uint8_t *key;
	size_t klen;
	char id[128];	/* the principal ("": none) */
	int lane, slot; /* slot: of its who row, while counted */
	double came, fetched;
	uint8_t sum[32];
	bool held, counted, refused;
};
void gw_shares_init(struct gw_shares *t);
void gw_shares_fini(struct gw_shares *t);
struct gw_shared *gw_shares_begin(struct gw_shares *t, Ofc__V1__Request *q, double wait,
				  struct gw_share_turn *turn, struct ofc_error *err);
void gw_shares_fetched(struct gw_share_turn *turn);
struct gw_shared *gw_shares_same(struct gw_shares *t, struct gw_share_turn *turn,
				 const uint8_t *body, size_t len);
struct gw_shared *gw_shares_put(struct gw_shares *t, struct gw_share_turn *turn, size_t flen,
				char *json, size_t jlen, unsigned code);
void gw_shares_small(struct gw_shares *t, struct gw_share_turn *turn);
void gw_shares_end(struct gw_shares *t, struct gw_share_turn *turn);
void gw_shares_counts(struct gw_shares *t, uint64_t *built, uint64_t *reused);
/* The refusals' counters as Prometheus text (caller frees). */
char *gw_shares_metrics(struct gw_shares *t);
void gw_shared_unref(struct gw_shared *s);
/* The answer (304 for its ETag, gzip when accepted), sh's reference
 * handed to the response. */
enum MHD_Result gw_send_shared(struct MHD_Connection *mc, struct gw_shared *sh);

/* ---- admit.c: the log ----
 * Lines anyone can cause without end (one a connection or a request of a
 * stranger) are of a kind: at most GW_LOG_BURST of a kind are written per
 * GW_LOG_WINDOW seconds; the rest are counted, and when the window ends
 * one line says how many were left out and repeats the last of them. A
 * flood costs the log a few lines a kind every window, whatever its rate. */
enum gw_log_kind {
	GW_LOG_ANY = -1, /* not limited: the gateway's own events */
	GW_LOG_ADDRESS,	 /* refused: the address holds its share */
	GW_LOG_FULL,	 /* refused: --max-connections held past their handshake */
	GW_LOG_EVICTED,	 /* closed before its handshake ended, to make room */
	GW_LOG_CUT,	 /* cut at --read-timeout */
	GW_LOG_NO_CERT,	 /* a connection that ended without a verified certificate */
	GW_LOG_CERT,	 /* a certificate refused in the handshake */
	GW_LOG_POLICY,	 /* a certificate the policy does not name */
	GW_LOG_MHD,	 /* libmicrohttpd's own lines */
	GW_LOG_KINDS
};
#define GW_LOG_WINDOW 10.0
#define GW_LOG_BURST  10

struct gw_log {
	void (*out)(void *ctx, int level, const char *msg); /* NULL: nothing */
	void *ctx;
	pthread_mutex_t mu;
	struct gw_log_window {
		double start;
		uint32_t shown;
		uint64_t left_out;
		int level;
		char last[400];
	} k[GW_LOG_KINDS];
	uint64_t suppressed; /* lines left out, ever */
};

void gw_log_init(struct gw_log *l, void (*out)(void *, int, const char *), void *ctx);
void gw_log_fini(struct gw_log *l);
void gw_logf(struct gw_log *l, enum gw_log_kind kind, int level, const char *fmt, ...)
    OFC_PRINTF(4, 5);
/* One line at time `now` (gw_logf's core; tests give their own clock). */
void gw_log_line(struct gw_log *l, enum gw_log_kind kind, int level, double now, const char *msg);
/* Windows that ended by `now`: the line saying what each left out. */
void gw_log_flush(struct gw_log *l, double now);

/* ---- admit.c: connections ----
 * Every connection MHD holds, from its start to its close. Admission (MHD's
 * accept policy, in its listening thread, just before the connection's
 * start in the same thread, so what it counts is what is held):
 *   - an address holding --max-connections-per-address is refused;
 *   - connections before their TLS handshake ("waiting") hold at most half
 *     of --max-connections: past that, or at --max-connections, the oldest
 *     waiting one is closed to make room (a real client's handshake takes
 *     milliseconds; a bare connection waits forever), and only when every
 *     connection is past its handshake is the new one refused.
 * So a flood of bare connections from one address holds its share and no
 * more, and one from many addresses holds half the connections and cannot
 * keep a new client from its handshake unless it opens half
 * --max-connections of them within that handshake. */
enum gw_phase { GW_READING, GW_HANDLING };

struct gw_addr {
	uint8_t len; /* 4 (IPv4, IPv4-mapped IPv6 too) or 16; 0: not IP */
	uint8_t b[16];
};

struct gw_conn {
	struct gw_conn *next, *prev;   /* all held, newest first */
	struct gw_conn *wnext, *wprev; /* waiting for their handshake, oldest first */
	struct gateway *g;
	int fd;
	char peer[80];
	struct gw_addr addr;
	enum gw_phase phase;
	double since; /* the current read window began */
	double started;
	bool waiting, verified, refusal_logged, cut;
	bool nul; /* framing.c: a %00 decoded in this request's path or query */
	uint64_t requests;
	/* The names of the certificate verified in the handshake, read once
	 * (parsing it for each request was a third of the gateway's time). */
	char *names[GW_MAX_NAMES];
	uint32_t nnames;
};

struct gw_addr_slot {
	struct gw_addr a;
	uint32_t hash, n; /* n 0: empty */
};

struct gw_conns {
	pthread_mutex_t mu;
	struct gw_conn *all, *whead, *wtail;
	uint32_t max, per_address, max_waiting;
	uint32_t live;		  /* held and not cut */
	uint32_t waiting;	  /* of them, before their handshake */
	struct gw_addr_slot *tab; /* connections held by address (open addressing) */
	uint32_t mask;
	double read_timeout;
	struct gw_log *log;
	uint64_t refused_address, refused_full, evicted, cut;
};

/* MHD's own limit past max: connections cut or evicted whose threads have
 * not ended yet (milliseconds each). */
#define GW_CONNS_SLACK(max) ((max) / 4 + 16)

void gw_conns_init(struct gw_conns *t, uint32_t max, uint32_t per_address, double read_timeout,
		   struct gw_log *log);
void gw_conns_fini(struct gw_conns *t);
/* Let a connection from sa in (MHD's accept policy)? May evict the oldest
 * waiting connection to make room. */
bool gw_conns_admit(struct gw_conns *t, const struct sockaddr *sa, socklen_t len);
/* A connection MHD started (fd -1: none to shut down, for tests). */
struct gw_conn *gw_conn_start(struct gw_conns *t, int fd, const struct sockaddr *sa);
/* Its client's certificate verified: no longer waiting. False when it was
 * closed meanwhile (the handshake fails). */
bool gw_conn_verified(struct gw_conns *t, struct gw_conn *c);
void gw_conn_phase(struct gw_conns *t, struct gw_conn *c, enum gw_phase ph);
/* MHD closed it: forgotten and freed. True when it ended without a verified
 * certificate and without a word so far (logged here, as a refusal). */
bool gw_conn_end(struct gw_conns *t, struct gw_conn *c);
/* The watchdog's: shut down connections whose handshake or request has
 * not arrived within read_timeout of their window's start. */
void gw_conns_sweep(struct gw_conns *t, double now);
/* Prometheus's text of the counters (the caller frees it). */
char *gw_conns_metrics(struct gw_conns *t);
void gw_addr_str(const struct sockaddr *sa, char *buf, size_t len);

/* ---- framing.c ---- */
/* MHD's unescape callback: libmicrohttpd's own decoding, and a %00 decoded
 * into the path, a query key or value marks the connection's request. */
size_t gw_unescape(void *cls, struct MHD_Connection *mc, char *s);
/* The request's framing as RFC 9112 section 6 wants it (one Content-Length
 * at most, none beside a Transfer-Encoding, which is chunked alone, and
 * none in HTTP/1.0), and no NUL decoded into its path or query: 0, or -1
 * with why (a 400 that closes the connection: its body cannot be told
 * from the next request). Clears the NUL mark. */
int gw_framing_check(struct MHD_Connection *mc, struct gw_conn *c, const char *version, char *why,
		     size_t len);

/* ---- ui.c ---- */
/* The page's directory (--ui-dir), opened once: its files are read beneath
 * it, never outside. */
struct gw_ui;
/* OFC_E_INPUT when dir cannot be opened or has no index.html. */
int gw_ui_open(const char *dir, struct gw_ui **out, struct ofc_error *err);
void gw_ui_close(struct gw_ui *ui);
/* A path the page answers: /ui, /ui/... */
bool gw_ui_route(const char *url);
/* The Content-Type a file of the page is served with, or NULL for a name
 * never served (more than one path component, a leading dot, "..", an
 * extension not of the page's). */
const char *gw_ui_type(const char *name);
/* A request a browser sent for a page of another site or origin
 * (Sec-Fetch-Site cross-site or same-site), with the certificate an
 * operator imported: refused, so that no other site can make the
 * operator's browser ask for anything (a form's POST to /v1/apply, a
 * script's to /v1/report-failure); only a link's navigation to the page
 * itself (page) opens. Clients other than browsers do not send the header. */
bool gw_ui_cross_site(struct MHD_Connection *mc, const char *method, bool page);
/* Answer url (gw_ui_route's) to the principal pr, whom the policy named;
 * ui NULL: the gateway serves no page (404). crl_next_update: the loaded
 * CRL's nextUpdate (0: none), which whoami tells the page for its alarm. */
enum MHD_Result gw_ui_answer(const struct gw_ui *ui, struct MHD_Connection *mc, const char *method,
			     const char *url, const Ofc__V1__Principal *pr,
			     int64_t crl_next_update);

/* encode.c: how an answer goes on the wire: gzipped when the client's
 * Accept-Encoding takes gzip (bodies of 1 KiB and more, when smaller so),
 * an ETag (a hash of the body) and If-None-Match's 304. send_encoded owns
 * body (freed). */
bool gw_accepts_gzip(struct MHD_Connection *mc);
char *gw_gzip(const char *body, size_t len, size_t *out_len);
void gw_etag(const char *body, size_t len, char *tag, size_t n);
bool gw_etag_matches(struct MHD_Connection *mc, const char *tag);
enum MHD_Result gw_send_encoded(struct MHD_Connection *mc, unsigned code, const char *type,
				char *body, size_t len, bool close, const char *etag);
/* The seconds a 503 or 429 of ofcd's or the gateway's tells a client to
 * wait (Retry-After) */
#define GW_RETRY_AFTER "5"
enum MHD_Result gw_send_not_modified(struct MHD_Connection *mc, const char *etag);
/* A stream's gzip (the Watch's lines, when the client takes gzip): each
 * put's bytes flushed, readable at once; last: the gzip trailer too (NULL
 * once done). The caller frees what put returns. */
struct gw_zstream;
struct gw_zstream *gw_zstream_new(void);
char *gw_zstream_put(struct gw_zstream *zs, const char *in, size_t len, bool last, size_t *out_len);
void gw_zstream_free(struct gw_zstream *zs);

#endif
