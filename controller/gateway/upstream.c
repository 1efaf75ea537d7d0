/* The gateway's connections to ofcd's gateway socket: a pool
 * of at most max_open, each carrying one request at a time, so an answer
 * is the next frame; streams take a connection of their own from a budget
 * of their own, capped per principal and per client address, so that one
 * tenant's watches never hold the connections an admin's request needs;
 * a principal but an admin holds a quarter of the requests' connections
 * at most, and such principals three quarters together (share_each).
 * Waits are bounded by the request timeout. */
#include "controller/gateway/internal.h"

#include "controller/api/api.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

/* The largest frame ofcd may send (its --max-frame is at most 1 GiB; a
 * streamed schedule's frames are a few MiB). */
#define UP_MAX_FRAME (1u << 30)

void up_init(struct upstream *u, const char *path, uint32_t max_open, double timeout,
	     const struct up_stream_limits *lim)
{
	memset(u, 0, sizeof(*u));
	u->path = xstrdup(path);
	u->max_open = max_open ? max_open : GW_UPSTREAM_DEFAULT;
	u->timeout = timeout;
	u->idle = xcalloc(u->max_open, sizeof(int));
	u->lim = *lim;
	u->holders = xcalloc(2 * (size_t)u->lim.total + 1, sizeof(*u->holders));
	u->users = xcalloc(u->max_open + 1, sizeof(*u->users));
	pthread_mutex_init(&u->mu, NULL);
	pthread_cond_init(&u->cond, NULL);
}

void up_fini(struct upstream *u)
{
	for (uint32_t i = 0; i < u->nidle; i++)
		close(u->idle[i]);
	free(u->idle);
	free(u->holders);
	free(u->users);
	free(u->path);
	pthread_mutex_destroy(&u->mu);
	pthread_cond_destroy(&u->cond);
}

static int up_connect(const struct upstream *u, struct ofc_error *err)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd;

	if (strlen(u->path) >= sizeof(sa.sun_path))
		return ofc_error_set(err, OFC_E_USAGE, "socket path too long: %s", u->path);
	memcpy(sa.sun_path, u->path, strlen(u->path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return ofc_error_set(err, OFC_E_RUNTIME, "socket: %s", strerror(errno));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		int e = errno;

		close(fd);
		return ofc_error_set(err, OFC_E_RUNTIME, "ofcd's gateway socket %s: %s", u->path,
				     strerror(e));
	}
	return fd;
}

/* The requests' connections principals but admins may hold: a quarter of
 * them each, three quarters together, so that a tenant's many requests
 * queued at ofcd (each holds its connection until answered) leave a
 * quarter to the admins and room to the other principals. */
static uint32_t share_each(const struct upstream *u)
{
	return u->max_open / 4 ? u->max_open / 4 : 1;
}

static uint32_t share_public(const struct upstream *u)
{
	return u->max_open > 1 ? u->max_open - share_each(u) : 1;
}

/* (under mu) who's row of the connections in use (make: a new one). */
static struct up_holder *user_of(struct upstream *u, const char *who, bool make)
{
	for (uint32_t i = 0; i < u->nusers; i++)
		if (strcmp(u->users[i].key, who) == 0)
			return &u->users[i];
	if (!make || u->nusers >= u->max_open)
		return NULL;
	struct up_holder *h = &u->users[u->nusers++];
	snprintf(h->key, sizeof(h->key), "%s", who);
	h->n = 0;
	return h;
}

/* (under mu) A connection for who (NULL: an admin, or no principal) within
 * its shares: counted, true; else false. */
static bool share_take(struct upstream *u, const char *who)
{
	if (!who)
		return true;
	struct up_holder *h = user_of(u, who, true);
	if (!h || h->n >= share_each(u) || u->npublic >= share_public(u))
		return false;
	h->n++;
	u->npublic++;
	return true;
}

static void share_give(struct upstream *u, const char *who)
{
	struct up_holder *h = who ? user_of(u, who, false) : NULL;

	if (!h)
		return;
	u->npublic--;
	if (--h->n == 0)
		*h = u->users[--u->nusers];
}

/* A connection: an idle one (*reused), else a new one while fewer than
 * max_open are open, else wait for one until the deadline; for who (a
 * principal but an admin) only within its shares (share_each), waiting
 * for them too. */
static int up_take(struct upstream *u, const char *who, double deadline, bool *reused,
		   struct ofc_error *err)
{
	pthread_mutex_lock(&u->mu);
	for (;;) {
		bool room = u->nidle || u->nopen < u->max_open;

		if (room && !share_take(u, who)) {
			room = false;
			if (deadline - now_seconds() <= 0) {
				u->share_refused++;
				pthread_mutex_unlock(&u->mu);
				ofc_error_set(
				    err, OFC_E_RUNTIME,
				    "%s has %u requests at ofcd, its share of the gateway's %u "
				    "connections to ofcd (a quarter each, the admins' quarter "
				    "kept); "
				    "try again when one is answered",
				    who, share_each(u), u->max_open);
				return -2;
			}
		}
		if (room && u->nidle) {
			int fd = u->idle[--u->nidle];

			pthread_mutex_unlock(&u->mu);
			*reused = true;
			return fd;
		}
		if (room) {
			u->nopen++;
			pthread_mutex_unlock(&u->mu);
			*reused = false;
			int fd = up_connect(u, err);
			if (fd < 0) {
				pthread_mutex_lock(&u->mu);
				u->nopen--;
				share_give(u, who);
				pthread_cond_broadcast(&u->cond);
				pthread_mutex_unlock(&u->mu);
			}
			return fd;
		}
		double left = deadline - now_seconds();
		if (left <= 0) {
			pthread_mutex_unlock(&u->mu);
			return ofc_error_set(err, OFC_E_RUNTIME,
					     "all %u connections to ofcd are busy", u->max_open);
		}
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		double t = (double)ts.tv_sec + ts.tv_nsec / 1e9 + (left < 1 ? left : 1);
		ts.tv_sec = (time_t)t;
		ts.tv_nsec = (long)((t - (double)ts.tv_sec) * 1e9);
		pthread_cond_timedwait(&u->cond, &u->mu, &ts);
	}
}

static void up_give(struct upstream *u, const char *who, int fd, bool keep)
{
	pthread_mutex_lock(&u->mu);
	share_give(u, who);
	if (keep && u->nidle < u->max_open) {
		u->idle[u->nidle++] = fd;
	} else {
		close(fd);
		u->nopen--;
	}
	/* (all: a waiter over its share may not be the one this frees) */
	pthread_cond_broadcast(&u->cond);
	pthread_mutex_unlock(&u->mu);
}

static uint64_t up_id(struct upstream *u)
{
	pthread_mutex_lock(&u->mu);
	uint64_t id = ++u->next_id;
	pthread_mutex_unlock(&u->mu);
	return id;
}

static int send_req(int fd, Ofc__V1__Request *req, double deadline, struct ofc_error *err)
{
	size_t n = protobuf_c_message_get_packed_size(&req->base);
	uint8_t *b = xmalloc(n ? n : 1);
	int rc;

	protobuf_c_message_pack(&req->base, b);
	rc = frame_send(fd, b, n, UP_MAX_FRAME, deadline, err);
	free(b);
	return rc;
}

size_t up_id_prefix(uint64_t id, uint8_t *out, size_t cap)
{
	Ofc__V1__Response r = OFC__V1__RESPONSE__INIT;

	r.has_id = 1;
	r.id = id;
	if (protobuf_c_message_get_packed_size(&r.base) > cap)
		return 0;
	return protobuf_c_message_pack(&r.base, out);
}

/* The next frame answering `id` (or about the connection, id 0), skipping
 * others: *len bytes in *buf; *skip is the length of the id's prefix when
 * the frame begins with it, else 0 (and the frame was decoded to find its
 * id). 0 for an answer to id, 1 for one about the connection, -1 on error. */
static int recv_frame(int fd, uint64_t id, uint8_t **buf, size_t *cap, size_t *len, size_t *skip,
		      double deadline, struct ofc_error *err)
{
	uint8_t pre[16];
	size_t plen = up_id_prefix(id, pre, sizeof(pre));

	for (;;) {
		if (frame_recv(fd, buf, cap, len, UP_MAX_FRAME, deadline, err) < 0)
			return -1;
		*skip = 0;
		if (plen && *len >= plen && memcmp(*buf, pre, plen) == 0) {
			*skip = plen;
			return 0;
		}
		Ofc__V1__Response *r = ofc__v1__response__unpack(NULL, *len, *buf);
		if (!r)
			return ofc_error_set(err, OFC_E_RUNTIME,
					     "ofcd sent %zu bytes that are not a Response", *len);
		/* id 0: about the connection (a limit reached, a refusal) */
		uint64_t got = r->id;
		ofc__v1__response__free_unpacked(r, NULL);
		if (got == id)
			return 0;
		if (got == 0)
			return 1;
	}
}

static int recv_resp(int fd, uint64_t id, uint8_t **buf, size_t *cap, double deadline,
		     Ofc__V1__Response **resp, struct ofc_error *err)
{
	size_t len, skip;

	if (recv_frame(fd, id, buf, cap, &len, &skip, deadline, err) < 0)
		return -1;
	(void)skip;
	*resp = ofc__v1__response__unpack(NULL, len, *buf);
	if (!*resp)
		return ofc_error_set(err, OFC_E_RUNTIME,
				     "ofcd sent %zu bytes that are not a Response", len);
	up_not_leader_words(*resp);
	return 0;
}

int up_call_frame(struct upstream *u, Ofc__V1__Request *req, uint8_t **frame, size_t *len,
		  size_t *skip, struct ofc_error *err)
{
	double deadline = now_seconds() + u->timeout;
	/* A connection is waited for half the timeout at most, leaving ofcd the
	 * other half: one taken later would time out at ofcd after a mutation
	 * was sent, and each such waiter taking the connection the one before it
	 * gave up would pass a full share on until every deadline passed. */
	double take_by = now_seconds() + u->timeout / 2;
	const struct api_request *k = api_request_of(req->body_case);
	bool read = k && (k->flags & API_READ);
	const Ofc__V1__Principal *pr = req->principal;
	/* (admins, and requests of the gateway's own: no share) */
	const char *who =
	    pr && pr->identity &&
		    !(pr->has_role && pr->role == OFC__V1__PRINCIPAL__ROLE__ROLE_ADMIN)
		? pr->identity
		: NULL;

	req->has_id = 1;
	req->id = up_id(u);
	*frame = NULL;
	for (int attempt = 0; attempt < 2; attempt++) {
		bool reused;
		size_t cap = 0;
		int fd = up_take(u, who, take_by, &reused, err);

		if (fd < 0)
			return fd == -2 ? -2 : -1;
		int rc = send_req(fd, req, deadline, err);
		if (rc == 0 &&
		    (rc = recv_frame(fd, req->id, frame, &cap, len, skip, deadline, err)) >= 0) {
			/* an answer about the connection (id 0) ends it */
			up_give(u, who, fd, rc == 0);
			return 0;
		}
		free(*frame);
		*frame = NULL;
		up_give(u, who, fd, false);
		/* ofcd closed a kept connection (it restarted): once more on a
		 * new one, for reads only (a mutation may have been taken). */
		if (!reused || !read || err->reason == OFC_R_TIMEOUT)
			return -1;
	}
	return -1;
}

bool up_not_leader_words(Ofc__V1__Response *r)
{
	const Ofc__V1__Leader *l = r->leader;
	const char *at;
	size_t n;

	if (r->status != OFC__V1__STATUS__STATUS_NOT_LEADER || !l || !r->message || !l->socket ||
	    !*l->socket || !l->url || strncmp(l->url, "https://", 8) != 0)
		return false;
	/* ofcd names where its own clients reach the leader: a socket on the
	 * leader's machine, which means nothing to a client of the gateway;
	 * the leader's gateway is where that client goes. */
	if (!(at = strstr(r->message, l->socket)))
		return false;
	n = strlen(l->socket);
	char *m = xasprintf("%.*s%s%s", (int)(at - r->message), r->message, l->url, at + n);
	free(r->message); /* unpacked with the default allocator */
	r->message = m;
	return true;
}

int up_call(struct upstream *u, Ofc__V1__Request *req, Ofc__V1__Response **resp,
	    struct ofc_error *err)
{
	uint8_t *frame;
	size_t len, skip;

	*resp = NULL;
	int rc = up_call_frame(u, req, &frame, &len, &skip, err);
	if (rc < 0)
		return rc;
	*resp = ofc__v1__response__unpack(NULL, len, frame);
	free(frame);
	if (!*resp)
		return ofc_error_set(err, OFC_E_RUNTIME,
				     "ofcd sent %zu bytes that are not a Response", len);
	up_not_leader_words(*resp);
	return 0;
}

/* (under mu) The holder of key, made when `make` (NULL: none, or no room). */
static struct up_holder *holder(struct upstream *u, const char *key, bool make)
{
	for (uint32_t i = 0; i < u->nholders; i++)
		if (strcmp(u->holders[i].key, key) == 0)
			return &u->holders[i];
	if (!make || u->nholders >= 2 * u->lim.total)
		return NULL;
	struct up_holder *h = &u->holders[u->nholders++];
	snprintf(h->key, sizeof(h->key), "%s", key);
	h->n = 0;
	return h;
}

/* A place in the streams' budget for s, under its principal's and its
 * address's keys; -2 and why when a limit is reached. */
static int stream_admit(struct upstream *u, struct up_stream *s, const char *principal,
			const char *addr, struct ofc_error *err)
{
	const uint32_t lim[2] = {u->lim.principal, u->lim.address};
	struct up_holder *h[2] = {NULL, NULL};
	int rc = 0;

	snprintf(s->keys[0], sizeof(s->keys[0]), "p:%.80s", principal ? principal : "?");
	snprintf(s->keys[1], sizeof(s->keys[1]), "a:%.80s", addr ? addr : "?");
	pthread_mutex_lock(&u->mu);
	for (int i = 0; i < 2; i++) {
		struct up_holder *x = holder(u, s->keys[i], false);

		if (x && x->n >= lim[i]) {
			u->refused[i ? UP_REFUSED_ADDRESS : UP_REFUSED_PRINCIPAL]++;
			rc = ofc_error_set(
			    err, OFC_E_RUNTIME,
			    i ? "%u streams (watches and streamed schedules) from "
				"address %.80s are open, the most one address may "
				"hold (--max-streams-per-address)"
			      : "%u streams (watches and streamed schedules) of %.80s "
				"are open, the most one principal may hold "
				"(--max-streams-per-principal)",
			    x->n, s->keys[i] + 2);
			break;
		}
	}
	if (rc == 0 && u->nstreams >= u->lim.total) {
		u->refused[UP_REFUSED_TOTAL]++;
		rc = ofc_error_set(err, OFC_E_RUNTIME,
				   "%u streams (watches and streamed schedules) are open, the most "
				   "this gateway holds (--max-streams)",
				   u->nstreams);
	}
	if (rc == 0) {
		h[0] = holder(u, s->keys[0], true);
		h[1] = holder(u, s->keys[1], true);
		h[0]->n++;
		h[1]->n++;
		u->nstreams++;
		s->counted = true;
	}
	pthread_mutex_unlock(&u->mu);
	return rc < 0 ? -2 : 0;
}

static void stream_leave(struct up_stream *s)
{
	struct upstream *u = s->u;

	if (!s->counted)
		return;
	pthread_mutex_lock(&u->mu);
	for (int i = 0; i < 2; i++) {
		struct up_holder *h = holder(u, s->keys[i], false);

		if (h && --h->n == 0)
			*h = u->holders[--u->nholders];
	}
	u->nstreams--;
	pthread_mutex_unlock(&u->mu);
	s->counted = false;
}

int up_stream_open(struct upstream *u, Ofc__V1__Request *req, struct up_stream *s,
		   const char *principal, const char *addr, struct ofc_error *err)
{
	double deadline = now_seconds() + u->timeout;

	memset(s, 0, sizeof(*s));
	s->u = u;
	s->fd = -1;
	req->has_id = 1;
	req->id = s->id = up_id(u);
	if (stream_admit(u, s, principal, addr, err) < 0)
		return -2;
	/* A connection of its own, closed after it: never the pool's. */
	s->fd = up_connect(u, err);
	if (s->fd < 0 || send_req(s->fd, req, deadline, err) < 0) {
		up_stream_close(s);
		return -1;
	}
	return 0;
}

char *up_stream_metrics(struct upstream *u)
{
	pthread_mutex_lock(&u->mu);
	char *t = xasprintf(
	    "# HELP ofc_gateway_streams Streams (watches, streamed schedules) open to ofcd, "
	    "apart from the connections that answer requests.\n"
	    "# TYPE ofc_gateway_streams gauge\nofc_gateway_streams %u\n"
	    "# HELP ofc_gateway_streams_refused_total Streams refused with 429, by the limit "
	    "reached.\n# TYPE ofc_gateway_streams_refused_total counter\n"
	    "ofc_gateway_streams_refused_total{limit=\"total\"} %llu\n"
	    "ofc_gateway_streams_refused_total{limit=\"principal\"} %llu\n"
	    "ofc_gateway_streams_refused_total{limit=\"address\"} %llu\n"
	    "# HELP ofc_gateway_upstream_share_refused_total Requests of a principal but an admin "
	    "refused with 429 when their share of the connections to ofcd stayed full until the "
	    "request timeout.\n# TYPE ofc_gateway_upstream_share_refused_total counter\n"
	    "ofc_gateway_upstream_share_refused_total %llu\n",
	    u->nstreams, (unsigned long long)u->refused[UP_REFUSED_TOTAL],
	    (unsigned long long)u->refused[UP_REFUSED_PRINCIPAL],
	    (unsigned long long)u->refused[UP_REFUSED_ADDRESS],
	    (unsigned long long)u->share_refused);
	pthread_mutex_unlock(&u->mu);
	return t;
}

int up_stream_next(struct up_stream *s, double wait, Ofc__V1__Response **resp,
		   struct ofc_error *err)
{
	struct pollfd p = {.fd = s->fd, .events = POLLIN};
	int k;

	*resp = NULL;
	do
		k = poll(&p, 1, (int)(wait * 1000));
	while (k < 0 && errno == EINTR);
	if (k == 0)
		return 0;
	if (recv_resp(s->fd, s->id, &s->buf, &s->cap, now_seconds() + s->u->timeout, resp, err) < 0)
		return -1;
	if (s->client_id && (*resp)->id == s->id)
		(*resp)->id = s->client_id;
	return 1;
}

void up_stream_close(struct up_stream *s)
{
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
	stream_leave(s);
	free(s->buf);
	s->buf = NULL;
}
