/* Connections from accept to close, and the log lines strangers cause
 * (internal.h, "admit.c"; docs/control.md, "Bounds").
 *
 * Before this, 1,100 bare TCP connections from one machine, reopened as
 * the gateway closed them, held every --max-connections slot: each new
 * connection, a real client's too, was accepted and closed at once, and
 * each closing wrote a line (18,000 lines in 25 s). Now an address holds
 * at most its share, connections before their handshake at most half of
 * the slots, the oldest of those giving way to a new one, and a kind of
 * line a stranger causes is written a few times a window. */
#include "controller/gateway/internal.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- the log ------------------------------------------------------------------ */

void gw_log_init(struct gw_log *l, void (*out)(void *, int, const char *), void *ctx)
{
	memset(l, 0, sizeof(*l));
	l->out = out;
	l->ctx = ctx;
	pthread_mutex_init(&l->mu, NULL);
}

void gw_log_fini(struct gw_log *l)
{
	gw_log_flush(l, 1e300);
	pthread_mutex_destroy(&l->mu);
}

/* The line saying what window w left out, if anything; w starts afresh.
 * Called with l->mu held (the line is written under it: lines stay whole
 * and in order). */
static void window_close(struct gw_log *l, struct gw_log_window *w, double now)
{
	if (w->left_out && l->out) {
		char line[600];

		snprintf(line, sizeof(line),
			 "left out %llu more lines of a kind in %.0f s (at most %d a kind are "
			 "written in %.0f s); the last: %s",
			 (unsigned long long)w->left_out, now - w->start, GW_LOG_BURST,
			 GW_LOG_WINDOW, w->last);
		l->out(l->ctx, w->level, line);
	}
	w->start = now;
	w->shown = 0;
	w->left_out = 0;
}

void gw_log_line(struct gw_log *l, enum gw_log_kind kind, int level, double now, const char *msg)
{
	if (!l->out)
		return;
	if (kind < 0 || kind >= GW_LOG_KINDS) {
		l->out(l->ctx, level, msg);
		return;
	}
	pthread_mutex_lock(&l->mu);
	struct gw_log_window *w = &l->k[kind];
	if (now - w->start >= GW_LOG_WINDOW)
		window_close(l, w, now);
	if (w->shown < GW_LOG_BURST) {
		w->shown++;
		l->out(l->ctx, level, msg);
	} else {
		w->left_out++;
		l->suppressed++;
		w->level = level;
		snprintf(w->last, sizeof(w->last), "%s", msg);
	}
	pthread_mutex_unlock(&l->mu);
}

void gw_logf(struct gw_log *l, enum gw_log_kind kind, int level, const char *fmt, ...)
{
	char line[1200];
	va_list ap;

	if (!l->out)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	gw_log_line(l, kind, level, now_seconds(), line);
}

void gw_log_flush(struct gw_log *l, double now)
{
	pthread_mutex_lock(&l->mu);
	for (int k = 0; k < GW_LOG_KINDS; k++)
		if (l->k[k].left_out && now - l->k[k].start >= GW_LOG_WINDOW)
			window_close(l, &l->k[k], now);
	pthread_mutex_unlock(&l->mu);
}

/* ---- addresses ------------------------------------------------------------------ */

/* An IPv4-mapped IPv6 address (a dual-stack listener's IPv4 client) is
 * its IPv4 address: one client, one key. */
static void addr_of(const struct sockaddr *sa, struct gw_addr *a)
{
	memset(a, 0, sizeof(*a));
	if (sa && sa->sa_family == AF_INET) {
		const struct sockaddr_in *s4 = (const void *)sa;

		a->len = 4;
		memcpy(a->b, &s4->sin_addr, 4);
	} else if (sa && sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const void *)sa;

		if (IN6_IS_ADDR_V4MAPPED(&s6->sin6_addr)) {
			a->len = 4;
			memcpy(a->b, s6->sin6_addr.s6_addr + 12, 4);
		} else {
			a->len = 16;
			memcpy(a->b, &s6->sin6_addr, 16);
		}
	}
}

void gw_addr_str(const struct sockaddr *sa, char *buf, size_t len)
{
	char host[64] = "?";
	unsigned port = 0;

	if (sa && sa->sa_family == AF_INET) {
		const struct sockaddr_in *s4 = (const void *)sa;

		inet_ntop(AF_INET, &s4->sin_addr, host, sizeof(host));
		port = ntohs(s4->sin_port);
	} else if (sa && sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const void *)sa;

		inet_ntop(AF_INET6, &s6->sin6_addr, host, sizeof(host));
		port = ntohs(s6->sin6_port);
	}
	snprintf(buf, len, strchr(host, ':') ? "[%s]:%u" : "%s:%u", host, port);
}

static uint32_t addr_hash(const struct gw_addr *a)
{
	uint32_t h = 2166136261u; /* FNV-1a */

	for (unsigned i = 0; i < a->len; i++)
		h = (h ^ a->b[i]) * 16777619u;
	return h ^ a->len;
}

static bool addr_eq(const struct gw_addr *x, const struct gw_addr *y)
{
	return x->len == y->len && memcmp(x->b, y->b, x->len) == 0;
}

/* The slot of a, or the empty one where it would go. The table holds at
 * most one entry a connection, and MHD holds at most max + slack of them:
 * it is at least twice that, so an empty slot is always found. */
static uint32_t slot_find(const struct gw_conns *t, const struct gw_addr *a, uint32_t h)
{
	uint32_t i = h & t->mask;

	while (t->tab[i].n && !(t->tab[i].hash == h && addr_eq(&t->tab[i].a, a)))
		i = (i + 1) & t->mask;
	return i;
}

/* Empty slot i, moving back the entries after it that would no longer be
 * found (linear probing's deletion, without tombstones). */
static void slot_clear(struct gw_conns *t, uint32_t i)
{
	uint32_t j = i;

	for (;;) {
		j = (j + 1) & t->mask;
		if (!t->tab[j].n)
			break;
		uint32_t home = t->tab[j].hash & t->mask;
		/* j stays if its home lies cyclically in (i, j] */
		if (i <= j ? (i < home && home <= j) : (i < home || home <= j))
			continue;
		t->tab[i] = t->tab[j];
		i = j;
	}
	t->tab[i].n = 0;
}

static uint32_t addr_count(const struct gw_conns *t, const struct gw_addr *a)
{
	return t->tab[slot_find(t, a, addr_hash(a))].n;
}

static void addr_add(struct gw_conns *t, const struct gw_addr *a, int d)
{
	uint32_t h = addr_hash(a), i = slot_find(t, a, h);

	if (d > 0) {
		if (!t->tab[i].n) {
			t->tab[i].a = *a;
			t->tab[i].hash = h;
		}
		t->tab[i].n++;
	} else if (t->tab[i].n && --t->tab[i].n == 0) {
		slot_clear(t, i);
	}
}

/* ---- connections -------------------------------------------------------------- */

void gw_conns_init(struct gw_conns *t, uint32_t max, uint32_t per_address, double read_timeout,
		   struct gw_log *log)
{
	uint32_t cap = 16;

	memset(t, 0, sizeof(*t));
	pthread_mutex_init(&t->mu, NULL);
	t->max = max ? max : 1;
	t->per_address = per_address ? per_address : 1;
	t->max_waiting = t->max / 2 ? t->max / 2 : 1;
	t->read_timeout = read_timeout;
	t->log = log;
	while (cap < 2 * (t->max + GW_CONNS_SLACK(t->max)))
		cap *= 2;
	t->tab = xcalloc(cap, sizeof(*t->tab));
	t->mask = cap - 1;
}

void gw_conns_fini(struct gw_conns *t)
{
	free(t->tab);
	t->tab = NULL;
	pthread_mutex_destroy(&t->mu);
}

static void unwait(struct gw_conns *t, struct gw_conn *c)
{
	if (!c->waiting)
		return;
	if (c->wprev)
		c->wprev->wnext = c->wnext;
	else
		t->whead = c->wnext;
	if (c->wnext)
		c->wnext->wprev = c->wprev;
	else
		t->wtail = c->wprev;
	c->wnext = c->wprev = NULL;
	c->waiting = false;
	t->waiting--;
}

/* Shut the connection down: MHD's thread for it wakes, ends it and closes
 * the descriptor (which stays open until gw_conn_end, so this cannot hit
 * another connection's). With t->mu held. */
static void cut(struct gw_conns *t, struct gw_conn *c)
{
	unwait(t, c);
	c->cut = true;
	t->live--;
	if (c->fd >= 0)
		shutdown(c->fd, SHUT_RDWR);
}

bool gw_conns_admit(struct gw_conns *t, const struct sockaddr *sa, socklen_t len)
{
	struct gw_addr a;
	char who[80];
	uint32_t n;

	(void)len;
	addr_of(sa, &a);
	pthread_mutex_lock(&t->mu);
	n = addr_count(t, &a);
	if (n >= t->per_address) {
		t->refused_address++;
		pthread_mutex_unlock(&t->mu);
		gw_addr_str(sa, who, sizeof(who));
		gw_logf(t->log, GW_LOG_ADDRESS, 4,
			"refused a connection from %s: its address holds %u connections "
			"(--max-connections-per-address)",
			who, n);
		return false;
	}
	if (t->live < t->max && t->waiting < t->max_waiting) {
		pthread_mutex_unlock(&t->mu);
		return true;
	}
	struct gw_conn *old = t->whead;
	if (!old) {
		t->refused_full++;
		pthread_mutex_unlock(&t->mu);
		gw_addr_str(sa, who, sizeof(who));
		gw_logf(t->log, GW_LOG_FULL, 4,
			"refused a connection from %s: %u connections are held past their "
			"TLS handshake (--max-connections)",
			who, t->max);
		return false;
	}
	double age = now_seconds() - old->started;
	uint32_t waiting = t->waiting;
	snprintf(who, sizeof(who), "%s", old->peer);
	cut(t, old);
	t->evicted++;
	pthread_mutex_unlock(&t->mu);
	gw_logf(t->log, GW_LOG_EVICTED, 5,
		"closing the connection of %s after %.1f s without a TLS handshake: %u "
		"connections wait for theirs (at most half of --max-connections), and the "
		"oldest makes room for a new one",
		who, age, waiting);
	return true;
}

struct gw_conn *gw_conn_start(struct gw_conns *t, int fd, const struct sockaddr *sa)
{
	struct gw_conn *c = xcalloc(1, sizeof(*c));

	c->fd = fd;
	addr_of(sa, &c->addr);
	gw_addr_str(sa, c->peer, sizeof(c->peer));
	c->since = c->started = now_seconds();
	c->phase = GW_READING;
	pthread_mutex_lock(&t->mu);
	c->next = t->all;
	if (t->all)
		t->all->prev = c;
	t->all = c;
	c->wprev = t->wtail;
	if (t->wtail)
		t->wtail->wnext = c;
	else
		t->whead = c;
	t->wtail = c;
	c->waiting = true;
	t->waiting++;
	t->live++;
	addr_add(t, &c->addr, +1);
	pthread_mutex_unlock(&t->mu);
	return c;
}

bool gw_conn_verified(struct gw_conns *t, struct gw_conn *c)
{
	bool ok;

	pthread_mutex_lock(&t->mu);
	ok = !c->cut;
	if (ok) {
		unwait(t, c);
		c->verified = true;
	}
	pthread_mutex_unlock(&t->mu);
	return ok;
}

void gw_conn_phase(struct gw_conns *t, struct gw_conn *c, enum gw_phase ph)
{
	if (!c)
		return;
	pthread_mutex_lock(&t->mu);
	c->phase = ph;
	c->since = now_seconds();
	pthread_mutex_unlock(&t->mu);
}

bool gw_conn_end(struct gw_conns *t, struct gw_conn *c)
{
	bool silent;

	pthread_mutex_lock(&t->mu);
	if (c->prev)
		c->prev->next = c->next;
	else
		t->all = c->next;
	if (c->next)
		c->next->prev = c->prev;
	unwait(t, c);
	if (!c->cut)
		t->live--;
	addr_add(t, &c->addr, -1);
	silent = !c->verified && !c->refusal_logged && !c->cut;
	pthread_mutex_unlock(&t->mu);
	if (silent)
		gw_logf(t->log, GW_LOG_NO_CERT, 4,
			"refused TLS client %s: no verified client certificate (none sent, or the "
			"handshake failed)",
			c->peer);
	for (uint32_t i = 0; i < c->nnames; i++)
		free(c->names[i]);
	free(c);
	return silent;
}

void gw_conns_sweep(struct gw_conns *t, double now)
{
	pthread_mutex_lock(&t->mu);
	for (struct gw_conn *c = t->all; c; c = c->next)
		if (c->phase == GW_READING && !c->cut && now - c->since > t->read_timeout) {
			const char *what = !c->verified	 ? "its TLS handshake"
					   : c->requests ? "its next request"
							 : "its first request";

			cut(t, c);
			t->cut++;
			gw_logf(t->log, GW_LOG_CUT, 5,
				"closing the connection of %s: %s not complete within %.0f s "
				"(--read-timeout)",
				c->peer, what, t->read_timeout);
		}
	pthread_mutex_unlock(&t->mu);
}

char *gw_conns_metrics(struct gw_conns *t)
{
	pthread_mutex_lock(&t->mu);
	unsigned long long cuts = t->cut, by_addr = t->refused_address, full = t->refused_full,
			   evicted = t->evicted;
	unsigned live = t->live, waiting = t->waiting;
	pthread_mutex_unlock(&t->mu);
	pthread_mutex_lock(&t->log->mu);
	unsigned long long left_out = t->log->suppressed;
	pthread_mutex_unlock(&t->log->mu);
	return xasprintf(
	    "# HELP ofc_gateway_connections_cut_total Connections cut at --read-timeout.\n"
	    "# TYPE ofc_gateway_connections_cut_total counter\n"
	    "ofc_gateway_connections_cut_total %llu\n"
	    "# HELP ofc_gateway_connections Connections held, and of them those waiting for "
	    "their TLS handshake.\n"
	    "# TYPE ofc_gateway_connections gauge\n"
	    "ofc_gateway_connections{state=\"all\"} %u\n"
	    "ofc_gateway_connections{state=\"handshake\"} %u\n"
	    "# HELP ofc_gateway_connections_refused_total Connections closed as they were "
	    "accepted: their address held --max-connections-per-address, or --max-connections "
	    "were held past their TLS handshake.\n"
	    "# TYPE ofc_gateway_connections_refused_total counter\n"
	    "ofc_gateway_connections_refused_total{reason=\"per-address\"} %llu\n"
	    "ofc_gateway_connections_refused_total{reason=\"limit\"} %llu\n"
	    "# HELP ofc_gateway_handshakes_evicted_total Connections closed before their TLS "
	    "handshake ended to make room for a new one.\n"
	    "# TYPE ofc_gateway_handshakes_evicted_total counter\n"
	    "ofc_gateway_handshakes_evicted_total %llu\n"
	    "# HELP ofc_gateway_log_lines_suppressed_total Log lines left out (at most %d of a "
	    "kind in %.0f s), each counted in a line when its window ends.\n"
	    "# TYPE ofc_gateway_log_lines_suppressed_total counter\n"
	    "ofc_gateway_log_lines_suppressed_total %llu\n",
	    cuts, live, waiting, by_addr, full, evicted, GW_LOG_BURST, GW_LOG_WINDOW, left_out);
}
