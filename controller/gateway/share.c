/* Whole states too big for cache.c, written once and shared by their
 * readers (internal.h). At 65,536 hosts the state is 11 MB of protobuf,
 * 33 MB of JSON and 4 MB gzipped: ten pages opening at once made the
 * gateway unpack, write and gzip it ten times side by side (935 MB at its
 * peak, 21-24 s each), and their ten 11 MB answers on its connections to
 * ofcd passed ofcd's --max-buffer-per-uid, so four of them got 502.
 *
 * So a read of a state last seen big waits its turn (one at a time, up to
 * half the request timeout, then 429): one answer from ofcd in flight and one JSON being written.
 * A reader that waited while another fetched a state after it came takes
 * that one, and an answer byte for byte the one before (by its SHA-256)
 * takes the JSON already written; both are shared by reference, never
 * copied, until the last reader's response is gone. */
#include "controller/gateway/internal.h"

#include <errno.h>
#include <gnutls/crypto.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct gw_shared {
	atomic_uint refs;
	unsigned code;
	char etag[48];
	char *json, *gz; /* gz: NULL when gzip made it no smaller */
	size_t jlen, gzlen;
	uint8_t sum[32]; /* SHA-256 of ofcd's answer after its id */
	size_t flen;
};

static double mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

void gw_shares_init(struct gw_shares *t)
{
	memset(t, 0, sizeof(*t));
	pthread_mutex_init(&t->turn, NULL);
	pthread_mutex_init(&t->mu, NULL);
}

static struct gw_shared *shared_ref(struct gw_shared *s)
{
	if (s)
		atomic_fetch_add(&s->refs, 1);
	return s;
}

void gw_shared_unref(struct gw_shared *s)
{
	if (!s || atomic_fetch_sub(&s->refs, 1) != 1)
		return;
	free(s->json);
	free(s->gz);
	free(s);
}

void gw_shares_fini(struct gw_shares *t)
{
	for (size_t i = 0; i < GW_SHARES; i++) {
		free(t->e[i].key);
		gw_shared_unref(t->e[i].sh);
	}
	pthread_mutex_destroy(&t->turn);
	pthread_mutex_destroy(&t->mu);
}

/* The entry of key (the request as packed, id 0: its options and the
 * principal, so no one is given another's answer), made when absent in
 * place of the one used least lately. Under t->mu. */
static struct gw_share_entry *entry(struct gw_shares *t, const uint8_t *key, size_t klen, bool make)
{
	struct gw_share_entry *v = &t->e[0];

	for (size_t i = 0; i < GW_SHARES; i++) {
		struct gw_share_entry *e = &t->e[i];

		if (e->key && e->klen == klen && memcmp(e->key, key, klen) == 0) {
			e->used = ++t->tick;
			return e;
		}
		if (!e->key || (v->key && e->used < v->used))
			v = e;
	}
	if (!make)
		return NULL;
	free(v->key);
	gw_shared_unref(v->sh);
	*v = (struct gw_share_entry){.key = xmalloc(klen ? klen : 1), .klen = klen};
	memcpy(v->key, key, klen);
	v->used = ++t->tick;
	return v;
}

struct gw_shared *gw_shares_begin(struct gw_shares *t, Ofc__V1__Request *q, double wait,
				  struct gw_share_turn *turn, struct ofc_error *err)
{
	uint64_t id = q->id;
	bool has_id = q->has_id;

	memset(turn, 0, sizeof(*turn));
	turn->came = mono();
	q->id = 0;
	q->has_id = 0;
	turn->klen = protobuf_c_message_get_packed_size(&q->base);
	if (turn->klen <= GW_SHARE_MAX_KEY) {
		turn->key = xmalloc(turn->klen ? turn->klen : 1);
		protobuf_c_message_pack(&q->base, turn->key);
	}
	q->id = id;
	q->has_id = has_id;
	if (!turn->key)
		return NULL; /* (a request that long: read as any other) */
	pthread_mutex_lock(&t->mu);
	/* (a read not seen before: as big as another's, when one was) */
	struct gw_share_entry *e = entry(t, turn->key, turn->klen, false);
	bool big = e ? e->big : t->any_big;
	size_t flen = e ? e->flen_seen : t->any_big;
	pthread_mutex_unlock(&t->mu);
	if (!big)
		return NULL;

	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += (time_t)wait;
	until.tv_nsec += (long)((wait - (double)(time_t)wait) * 1e9);
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	atomic_fetch_add(&t->waiting, 1);
	int rc = pthread_mutex_timedlock(&t->turn, &until);
	unsigned ahead = atomic_fetch_sub(&t->waiting, 1) - 1;
	if (rc != 0) {
		ofc_error_set(
		    err, OFC_E_RUNTIME,
		    "the state is %zu bytes; %u more reads of it wait, and its turn did not "
		    "come within %.0f s",
		    flen, ahead, wait);
		free(turn->key);
		turn->key = NULL;
		turn->refused = true;
		return NULL;
	}
	turn->held = true;
	/* Fetched after this reader came: as fresh as it asked. */
	pthread_mutex_lock(&t->mu);
	e = entry(t, turn->key, turn->klen, false);
	struct gw_shared *sh = e && e->sh && e->fetched >= turn->came ? shared_ref(e->sh) : NULL;
	if (sh)
		t->reused++;
	pthread_mutex_unlock(&t->mu);
	if (sh)
		gw_shares_end(t, turn);
	return sh;
}

void gw_shares_fetched(struct gw_share_turn *turn)
{
	turn->fetched = mono();
}

/* The kept answer of turn's key when ofcd's bytes are the same, else
 * NULL. */
struct gw_shared *gw_shares_same(struct gw_shares *t, struct gw_share_turn *turn,
				 const uint8_t *body, size_t len)
{
	struct gw_shared *sh = NULL;

	if (!turn->key)
		return NULL;
	gnutls_hash_fast(GNUTLS_DIG_SHA256, body, len, turn->sum);
	pthread_mutex_lock(&t->mu);
	struct gw_share_entry *e = entry(t, turn->key, turn->klen, false);
	if (e && e->sh && e->sh->flen == len && memcmp(e->sh->sum, turn->sum, 32) == 0) {
		sh = shared_ref(e->sh);
		e->fetched = turn->fetched;
		t->reused++;
	}
	pthread_mutex_unlock(&t->mu);
	return sh;
}

struct gw_shared *gw_shares_put(struct gw_shares *t, struct gw_share_turn *turn, size_t flen,
				char *json, size_t jlen, unsigned code)
{
	struct gw_shared *sh = xcalloc(1, sizeof(*sh));

	atomic_init(&sh->refs, 1);
	sh->code = code;
	sh->json = json;
	sh->jlen = jlen;
	sh->gz = gw_gzip(json, jlen, &sh->gzlen);
	gw_etag(json, jlen, sh->etag, sizeof(sh->etag));
	memcpy(sh->sum, turn->sum, 32);
	sh->flen = flen;
	if (!turn->key)
		return sh;
	pthread_mutex_lock(&t->mu);
	struct gw_share_entry *e = entry(t, turn->key, turn->klen, true);
	gw_shared_unref(e->sh);
	e->sh = shared_ref(sh);
	e->big = true;
	e->flen_seen = t->any_big = flen;
	e->fetched = turn->fetched;
	t->built++;
	pthread_mutex_unlock(&t->mu);
	return sh;
}

void gw_shares_small(struct gw_shares *t, struct gw_share_turn *turn)
{
	if (!turn->key)
		return;
	pthread_mutex_lock(&t->mu);
	/* (kept, so that a small one's reads never wait for a big one's) */
	struct gw_share_entry *e = entry(t, turn->key, turn->klen, true);
	if (e->big)
		t->any_big = 0;
	e->big = false;
	gw_shared_unref(e->sh);
	e->sh = NULL;
	pthread_mutex_unlock(&t->mu);
}

void gw_shares_end(struct gw_shares *t, struct gw_share_turn *turn)
{
	if (turn->held)
		pthread_mutex_unlock(&t->turn);
	turn->held = false;
	free(turn->key);
	turn->key = NULL;
}

void gw_shares_counts(struct gw_shares *t, uint64_t *built, uint64_t *reused)
{
	pthread_mutex_lock(&t->mu);
	*built = t->built;
	*reused = t->reused;
	pthread_mutex_unlock(&t->mu);
}

static void release(void *cls)
{
	gw_shared_unref(cls);
}

enum MHD_Result gw_send_shared(struct MHD_Connection *mc, struct gw_shared *sh)
{
	bool ok = sh->code == MHD_HTTP_OK;

	if (ok && gw_etag_matches(mc, sh->etag)) {
		enum MHD_Result rc = gw_send_not_modified(mc, sh->etag);

		gw_shared_unref(sh);
		return rc;
	}
	bool z = sh->gz && gw_accepts_gzip(mc);
	/* (the response holds sh's reference; release() drops it) */
	struct MHD_Response *r = MHD_create_response_from_buffer_with_free_callback_cls(
	    z ? sh->gzlen : sh->jlen, z ? sh->gz : sh->json, release, sh);
	if (!r) {
		gw_shared_unref(sh);
		return MHD_NO;
	}
	MHD_add_response_header(r, "Content-Type", "application/json");
	MHD_add_response_header(r, "Vary", "Accept-Encoding");
	if (z)
		MHD_add_response_header(r, "Content-Encoding", "gzip");
	if (ok)
		MHD_add_response_header(r, "ETag", sh->etag);
	enum MHD_Result rc = MHD_queue_response(mc, sh->code, r);
	MHD_destroy_response(r);
	return rc;
}
