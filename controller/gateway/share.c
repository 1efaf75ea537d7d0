/* Whole states too big for cache.c, written once and shared by their
 * readers (internal.h). At 65,536 hosts the state is 11 MB of protobuf,
 * 33 MB of JSON and 4 MB gzipped: ten pages opening at once made the
 * gateway unpack, write and gzip it ten times side by side (935 MB at its
 * peak, 21-24 s each), and their ten 11 MB answers on its connections to
 * ofcd passed ofcd's --max-buffer-per-uid, so four of them got 502.
 *
 * So a read of a state last seen big waits its turn (one at a time in its
 * lane, up to half the request timeout, then 429): one answer from ofcd in
 * flight and one JSON being written a lane. One turn for everyone let a
 * read-only certificate's thirty reads of distinct options (nothing to
 * share) hold admins' reads 1-5 s, and their distinct keys pushed a
 * tenant's small read out of the entries, so it waited as a big one: so
 * admins have a lane of their own, each lane is first come first served,
 * a principal has at most GW_SHARE_PER_PRINCIPAL reads in it, and whether
 * a principal's reads are big is remembered per principal (internal.h).
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

/* A read waiting in a lane: its turn comes when go is set. */
struct gw_share_waiter {
	pthread_cond_t cv;
	bool go;
	struct gw_share_waiter *next;
};

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

static struct gw_share_who *who_of(struct gw_shares *t, const char *id, bool make);

static bool in_lane(const struct gw_share_who *w)
{
	for (size_t i = 0; i < GW_SHARE_PER_PRINCIPAL; i++)
		if (w->n[i])
			return true;
	return false;
}

/* FNV-1a of a request's key: which of a principal's reads are the same. */
static uint64_t key_hash(const uint8_t *k, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (size_t i = 0; i < n; i++)
		h = (h ^ k[i]) * 0x100000001b3ULL;
	return h;
}

/* Count turn's read in w's row: a slot of the same request's, else a free
 * one; false: every slot holds another request's (its share is full).
 * Under t->mu. */
static bool who_count(struct gw_share_who *w, struct gw_share_turn *turn)
{
	uint64_t h = key_hash(turn->key, turn->klen);
	int free_slot = -1;

	for (int i = 0; i < GW_SHARE_PER_PRINCIPAL; i++) {
		if (w->n[i] && w->key[i] == h) {
			free_slot = i;
			break;
		}
		if (!w->n[i] && free_slot < 0)
			free_slot = i;
	}
	if (free_slot < 0)
		return false;
	w->key[free_slot] = h;
	w->n[free_slot]++;
	turn->slot = free_slot;
	turn->counted = true;
	return true;
}

/* Its read leaves the lane. Under t->mu. */
static void who_uncount(struct gw_shares *t, struct gw_share_turn *turn)
{
	struct gw_share_who *w = turn->counted ? who_of(t, turn->id, false) : NULL;

	if (w && w->n[turn->slot])
		w->n[turn->slot]--;
	turn->counted = false;
}

/* The principal id's row (made in place of the least lately used one
 * with no read in a lane when absent and make; NULL: none, or every row
 * has reads in a lane). Under t->mu. */
static struct gw_share_who *who_of(struct gw_shares *t, const char *id, bool make)
{
	struct gw_share_who *v = NULL;

	for (size_t i = 0; i < GW_SHARE_WHO; i++) {
		struct gw_share_who *w = &t->who[i];

		if (w->id[0] && strcmp(w->id, id) == 0) {
			w->used = ++t->tick;
			return w;
		}
		if (!in_lane(w) && (!v || !w->id[0] || (v->id[0] && w->used < v->used)))
			v = w;
	}
	if (!make || !v)
		return NULL;
	*v = (struct gw_share_who){.last = SIZE_MAX, .used = ++t->tick};
	snprintf(v->id, sizeof(v->id), "%s", id);
	return v;
}

/* Whether turn's read is big, and how big its principal saw it (0: not
 * known to it). Under t->mu. */
static bool read_big(struct gw_shares *t, const struct gw_share_turn *turn, size_t *flen)
{
	struct gw_share_entry *e = entry(t, turn->key, turn->klen, false);
	struct gw_share_who *w = turn->id[0] ? who_of(t, turn->id, false) : NULL;

	*flen = e ? e->flen_seen : w && w->last != SIZE_MAX ? w->last : 0;
	if (e)
		return e->big;
	if (w && w->last != SIZE_MAX)
		return w->last > 0;
	return t->any_big > 0;
}

/* Wait for the turn of turn's lane until `until` (CLOCK_REALTIME): first
 * come, first served. Under t->mu; false: the wait ran out. */
static bool lane_wait(struct gw_shares *t, struct gw_share_turn *turn, const struct timespec *until)
{
	struct gw_share_lane *l = &t->lane[turn->lane];
	struct gw_share_waiter w = {.go = false};

	if (!l->busy && !l->head) {
		l->busy = true;
		return true;
	}
	pthread_cond_init(&w.cv, NULL);
	if (l->tail)
		l->tail->next = &w;
	else
		l->head = &w;
	l->tail = &w;
	while (!w.go && pthread_cond_timedwait(&w.cv, &t->mu, until) != ETIMEDOUT)
		;
	if (!w.go) { /* (out of the line: it is not its turn yet, so it is in it) */
		struct gw_share_waiter **p = &l->head, *prev = NULL;

		while (*p != &w) {
			prev = *p;
			p = &(*p)->next;
		}
		*p = w.next;
		if (l->tail == &w)
			l->tail = prev;
	}
	pthread_cond_destroy(&w.cv);
	return w.go;
}

/* The turn of turn's lane goes to the next in line. Under t->mu. */
static void lane_pass(struct gw_shares *t, struct gw_share_turn *turn)
{
	struct gw_share_lane *l = &t->lane[turn->lane];
	struct gw_share_waiter *w = l->head;

	if (!w) {
		l->busy = false;
		return;
	}
	l->head = w->next;
	if (!l->head)
		l->tail = NULL;
	w->go = true;
	pthread_cond_signal(&w->cv);
}

/* (under t->mu) A refusal: its words say only what the asker may see (its
 * own state's size, its own reads). */
static void refuse(struct gw_shares *t, struct gw_share_turn *turn, int why, size_t flen,
		   double wait, struct ofc_error *err)
{
	t->refused[why]++;
	if (why == GW_SHARE_REFUSED_PRINCIPAL)
		ofc_error_set(err, OFC_E_RUNTIME,
			      "%s has reads of %u other big states waiting or under way, the most "
			      "one principal may have at once; try again when one is answered",
			      turn->id, GW_SHARE_PER_PRINCIPAL);
	else if (flen)
		ofc_error_set(err, OFC_E_RUNTIME,
			      "the state is %zu bytes; big states are read one at a time, and its "
			      "turn did not come within %.0f s",
			      flen, wait);
	else
		ofc_error_set(
		    err, OFC_E_RUNTIME,
		    "big states are read one at a time, and this read's turn did not come "
		    "within %.0f s",
		    wait);
	free(turn->key);
	turn->key = NULL;
	turn->refused = true;
}

struct gw_shared *gw_shares_begin(struct gw_shares *t, Ofc__V1__Request *q, double wait,
				  struct gw_share_turn *turn, struct ofc_error *err)
{
	uint64_t id = q->id;
	bool has_id = q->has_id;
	const Ofc__V1__Principal *pr = q->principal;

	memset(turn, 0, sizeof(*turn));
	turn->came = mono();
	if (pr && pr->identity)
		snprintf(turn->id, sizeof(turn->id), "%s", pr->identity);
	turn->lane = pr && pr->has_role && pr->role == OFC__V1__PRINCIPAL__ROLE__ROLE_ADMIN
			 ? GW_LANE_ADMIN
			 : GW_LANE_OTHERS;
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
	size_t flen;
	if (!read_big(t, turn, &flen)) {
		pthread_mutex_unlock(&t->mu);
		return NULL;
	}
	/* (admins: a lane of their own, not shared with the public; no
	 * principal: ofcd's own tests; the rows all of principals in a lane:
	 * the lane's wait still bounds it) */
	struct gw_share_who *w =
	    turn->id[0] && turn->lane != GW_LANE_ADMIN ? who_of(t, turn->id, true) : NULL;
	if (w && !who_count(w, turn)) {
		refuse(t, turn, GW_SHARE_REFUSED_PRINCIPAL, 0, wait, err);
		pthread_mutex_unlock(&t->mu);
		return NULL;
	}
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += (time_t)wait;
	until.tv_nsec += (long)((wait - (double)(time_t)wait) * 1e9);
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	if (!lane_wait(t, turn, &until)) {
		who_uncount(t, turn);
		refuse(t, turn, GW_SHARE_REFUSED_WAIT, flen, wait, err);
		pthread_mutex_unlock(&t->mu);
		return NULL;
	}
	turn->held = true;
	/* Fetched after this reader came: as fresh as it asked. */
	struct gw_share_entry *e = entry(t, turn->key, turn->klen, false);
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
	struct gw_share_who *w = turn->id[0] ? who_of(t, turn->id, true) : NULL;
	if (w)
		w->last = flen;
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
	struct gw_share_who *w = turn->id[0] ? who_of(t, turn->id, true) : NULL;
	if (w)
		w->last = 0;
	pthread_mutex_unlock(&t->mu);
}

void gw_shares_end(struct gw_shares *t, struct gw_share_turn *turn)
{
	pthread_mutex_lock(&t->mu);
	if (turn->held)
		lane_pass(t, turn);
	who_uncount(t, turn);
	pthread_mutex_unlock(&t->mu);
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

char *gw_shares_metrics(struct gw_shares *t)
{
	pthread_mutex_lock(&t->mu);
	char *m = xasprintf(
	    "# HELP ofc_gateway_state_reads_refused_total Reads of a big state refused with 429, "
	    "by the limit reached: the principal's reads in its lane, or the wait for its "
	    "turn.\n# TYPE ofc_gateway_state_reads_refused_total counter\n"
	    "ofc_gateway_state_reads_refused_total{limit=\"principal\"} %llu\n"
	    "ofc_gateway_state_reads_refused_total{limit=\"wait\"} %llu\n",
	    (unsigned long long)t->refused[GW_SHARE_REFUSED_PRINCIPAL],
	    (unsigned long long)t->refused[GW_SHARE_REFUSED_WAIT]);
	pthread_mutex_unlock(&t->mu);
	return m;
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
