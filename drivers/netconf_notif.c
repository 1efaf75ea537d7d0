/* NETCONF notifications (RFC 5277) for the netconf driver
 * (docs/netconf.md): when a caller wants the device's own news
 * (device_cfg.news: ofcd) and the device's hello offers :notification,
 * the driver keeps a second session with the device, subscribed with
 * <create-subscription> (on the Polatis stream, else the default NETCONF
 * one), and reads its notifications with libnetconf2's nc_recv_notif. A port power notification of
 * the polatis-switch module (port-power-alarm, -clear, -warn-alarm, -warn-clear) for a port of the
 * switch sets the driver's flag that the next read must read health, and
 * calls news once until that read: the caller reads the device on its own
 * thread, and the read (not the notification) says what is failing, as
 * every poll does. A notification is a reason to read, promptly.
 *
 * Why a session of its own: the transaction's session is the caller's
 * thread's, one RPC at a time; libnetconf2 2.0 keeps a notification read
 * during an RPC in a queue without bound, and its dispatch thread would
 * hold the session's locks for 10 ms in every poll, in the way of every
 * RPC. Here nothing else uses the session, and nothing is queued.
 *
 * Threads: an opener (open_main) opens and subscribes a session, then
 * hands it to the session's relay (ncrelay_listen) and ends. The relay's
 * thread reads the session from then on: it hands libnetconf2 each
 * message whole, alone, and calls on_msg, whose nc_recv_notif therefore
 * never waits for a rest that only that thread could bring. When the
 * session ends, the relay's last act (on_end) starts the next opener,
 * which closes the session, waits, and opens another. At rest a
 * subscribed session costs its relay's thread alone.
 *
 * Bounds: the relay cuts the session at a message over NOTIF_MAX bytes
 * (at the chunk header that says so), and past the driver's timeout once
 * a message has started to come; a reply on this session (none is asked for) cuts it too
 * (libnetconf2 would queue it). A notification libnetconf2 cannot parse
 * against the session's context (malformed, or of a module ofc does not
 * load), one of another module, or one naming a port the switch does not
 * have is dropped. A lost session is opened again after a
 * wait that doubles from 0.5 s to 60 s, and its first read is a read of
 * health (what happened while no session listened).
 */
#include "drivers/internal.h"

#include <errno.h>
#include <libnetconf2/messages_client.h>
#include <libnetconf2/netconf.h>
#include <libnetconf2/session_client.h>
#include <libyang/libyang.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NOTIF_MAX     (128u << 10) /* bytes of one message on the session */
#define BACKOFF_FIRST 0.5
#define BACKOFF_MAX   60.0
#define STOP_SLACK    5.0 /* seconds past the driver's timeout a stop waits for the relay */

struct nclisten {
	const struct device *dev;	   /* borrowed: its cfg, read only */
	const struct netconf_login *login; /* borrowed */
	atomic_bool *due;		   /* the driver's: the next read reads health */
	atomic_bool subscribed;		   /* a session is subscribed now */

	pthread_mutex_t mu; /* guards what follows */
	pthread_cond_t cond;
	bool stop;
	pthread_t opener;	  /* opens a session, while one is opened */
	bool opener_live;	  /* opener to be joined */
	bool listening;		  /* s is the relay thread's, which reads it */
	struct netconf_session s; /* the subscribed session */
	struct ncrelay *relay;	  /* the session's being opened or s's, for a stop to cut */
	double backoff;		  /* the wait before the next session */
};

static bool stopping(struct nclisten *l)
{
	bool s;

	pthread_mutex_lock(&l->mu);
	s = l->stop;
	pthread_mutex_unlock(&l->mu);
	return s;
}

/* The CLOCK_MONOTONIC time seconds from now, for the condition's waits. */
static struct timespec deadline_ts(double seconds)
{
	struct timespec ts;
	double at;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	at = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9 + seconds;
	ts.tv_sec = (time_t)at;
	ts.tv_nsec = (long)((at - (double)ts.tv_sec) * 1e9);
	return ts;
}

/* Wait seconds, or until a stop. */
static void wait_s(struct nclisten *l, double seconds)
{
	struct timespec ts = deadline_ts(seconds);

	pthread_mutex_lock(&l->mu);
	while (!l->stop && pthread_cond_timedwait(&l->cond, &l->mu, &ts) != ETIMEDOUT)
		;
	pthread_mutex_unlock(&l->mu);
}

/* The device's news: health is due, and the caller is told once until the
 * read that takes it. */
static void news(struct nclisten *l)
{
	if (!atomic_exchange(l->due, true) && l->dev->cfg.news)
		l->dev->cfg.news(l->dev->cfg.news_ctx, l->dev->cfg.name);
}

/* <create-subscription> on the Polatis stream, else (refused) on the
 * default one. */
static int subscribe(struct netconf_session *s, double deadline, struct ofc_error *err)
{
	static const char *const streams[] = {PLTS_STREAM, NULL};
	int rc = -1;

	for (size_t i = 0; i < ARRAY_SIZE(streams); i++) {
		struct netconf_rpc_error re;
		struct nc_rpc *rpc =
		    nc_rpc_subscribe(streams[i], NULL, NULL, NULL, NC_PARAMTYPE_CONST);

		if (!rpc)
			return ofc_error_set(err, OFC_E_RUNTIME,
					     "cannot build <create-subscription>");
		rc = netconf_rpc(s, rpc, "<create-subscription>", deadline, NULL, &re, err);
		nc_rpc_free(rpc);
		if (rc == 0 || err->reason != OFC_R_REFUSED)
			break;
	}
	return rc;
}

/* One notification libnetconf2 parsed: a port power notification for a
 * port of the switch is news; anything else is dropped. */
static void take(struct nclisten *l, const struct lyd_node *op)
{
	struct opsw_notif n;
	struct ofc_error err = {0};

	if (opsw_notif_take(op, l->dev->cfg.ports, &n, &err) == 1)
		news(l);
}

/* The relay's call: a whole message is in libnetconf2's input, read at
 * once. A reply (nothing was asked: libnetconf2 would queue it) cuts the
 * session; NC_MSG_ERROR on a session still up is a message libnetconf2
 * could not read (not well-formed, of a module not loaded), dropped. */
static bool on_msg(void *ctx)
{
	struct nclisten *l = ctx;
	struct lyd_node *envp = NULL, *op = NULL;
	NC_MSG_TYPE t;

	netconf_clear_log();
	t = nc_recv_notif(l->s.nc, 100, &envp, &op);
	if (t == NC_MSG_NOTIF)
		take(l, op);
	lyd_free_tree(envp);
	lyd_free_tree(op);
	/* WOULDBLOCK: the whole message is there, so this cannot be; were it,
	 * the next read could find a part, so the session ends */
	return t != NC_MSG_REPLY && t != NC_MSG_WOULDBLOCK &&
	       nc_session_get_status(l->s.nc) == NC_STATUS_RUNNING;
}

static void *open_main(void *arg);

/* The relay's last call: the session is over. An opener of the next one
 * (its first act is to close this one, which stops the relay) starts.
 * If it cannot (no thread to be had), the listener is stalled: the
 * device's news say health is due, and the driver's read that takes it
 * finds the listener stalled, stops it (closing the session) and starts
 * another; until then the device is polled. */
static void on_end(void *ctx)
{
	struct nclisten *l = ctx;

	atomic_store(&l->subscribed, false);
	pthread_mutex_lock(&l->mu);
	l->listening = false;
	if (l->opener_live)
		pthread_join(l->opener, NULL); /* it returned once it handed over */
	l->opener_live = !l->stop && pthread_create(&l->opener, NULL, open_main, l) == 0;
	if (!l->opener_live && !l->stop)
		news(l);
	pthread_cond_broadcast(&l->cond);
	pthread_mutex_unlock(&l->mu);
}

static void publish(struct nclisten *l, struct ncrelay *r)
{
	pthread_mutex_lock(&l->mu);
	l->relay = r;
	if (r && l->stop)
		ncrelay_cut(r);
	pthread_mutex_unlock(&l->mu);
}

/* The session subscribed: the relay's thread reads it from now on (this
 * thread ends), unless a stop came. */
static bool hand_over(struct nclisten *l, struct netconf_session *s)
{
	pthread_mutex_lock(&l->mu);
	if (l->stop) {
		pthread_mutex_unlock(&l->mu);
		return false;
	}
	l->s = *s;
	l->listening = true;
	l->backoff = BACKOFF_FIRST;
	atomic_store(&l->subscribed, true);
	news(l); /* what came while no session listened */
	ncrelay_listen(s->relay, NOTIF_MAX, l->dev->cfg.timeout, on_msg, on_end, l);
	pthread_mutex_unlock(&l->mu);
	return true;
}

/* The opener: closes the session that ended (if one did), waits, and opens
 * and subscribes the next, until one is handed over to its relay, or a
 * stop, or a device that does not offer notifications. */
static void *open_main(void *arg)
{
	struct nclisten *l = arg;
	const struct device *dev = l->dev;
	struct netconf_session old;

	ofc_thread_name("netconf-listen");
	pthread_mutex_lock(&l->mu);
	old = l->s;
	memset(&l->s, 0, sizeof(l->s));
	l->s.lib_fd = -1;
	l->relay = NULL;
	pthread_mutex_unlock(&l->mu);
	if (old.relay) {
		netconf_session_close(&old, stopping(l) ? 0 : now_seconds() + 1);
		wait_s(l, l->backoff);
		l->backoff = l->backoff * 2 < BACKOFF_MAX ? l->backoff * 2 : BACKOFF_MAX;
	}
	while (!stopping(l)) {
		struct netconf_session s;
		struct ofc_error err = {0};
		double deadline = now_seconds() + dev->cfg.timeout;
		bool offered = true;

		memset(&s, 0, sizeof(s));
		s.lib_fd = -1;
		/* a fenced controller opens no session */
		if (device_fence(dev, &deadline, &err) == 0 &&
		    netconf_session_open(dev, l->login, true, deadline, &s, &err) == 0) {
			publish(l, s.relay);
			offered = s.caps.notification;
			if (offered && subscribe(&s, deadline, &err) == 0 && hand_over(l, &s))
				return NULL;
			publish(l, NULL);
			netconf_session_close(&s, stopping(l) ? 0 : now_seconds() + 1);
		}
		if (!offered)
			break; /* polling it is */
		wait_s(l, l->backoff);
		l->backoff = l->backoff * 2 < BACKOFF_MAX ? l->backoff * 2 : BACKOFF_MAX;
	}
	return NULL;
}

struct nclisten *nclisten_start(const struct device *dev, const struct netconf_login *login,
				atomic_bool *due)
{
	struct nclisten *l = xcalloc(1, sizeof(*l));
	pthread_condattr_t ca;

	l->dev = dev;
	l->login = login;
	l->due = due;
	l->backoff = BACKOFF_FIRST;
	l->s.lib_fd = -1;
	pthread_mutex_init(&l->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&l->cond, &ca);
	pthread_condattr_destroy(&ca);
	if (pthread_create(&l->opener, NULL, open_main, l) != 0) {
		pthread_mutex_destroy(&l->mu);
		pthread_cond_destroy(&l->cond);
		free(l);
		return NULL;
	}
	l->opener_live = true;
	return l;
}

bool nclisten_subscribed(struct nclisten *l)
{
	return l && atomic_load(&l->subscribed);
}

bool nclisten_stalled(struct nclisten *l)
{
	bool stalled;

	if (!l)
		return false;
	pthread_mutex_lock(&l->mu);
	stalled = !l->stop && !l->listening && !l->opener_live;
	pthread_mutex_unlock(&l->mu);
	return stalled;
}

void nclisten_stop(struct nclisten *l)
{
	struct timespec ts;
	pthread_t opener;
	bool live;

	if (!l)
		return;
	ts = deadline_ts(l->dev->cfg.timeout + STOP_SLACK);
	pthread_mutex_lock(&l->mu);
	l->stop = true;
	if (l->relay)
		ncrelay_cut(l->relay);
	pthread_cond_broadcast(&l->cond);
	/* a subscribed session ends at the cut, within the relay's turn,
	 * and its relay's on_end runs; past the deadline the relay still
	 * holds l, which is then left allocated (its on_end may yet come)
	 * rather than freed under it */
	while (l->listening) {
		if (pthread_cond_timedwait(&l->cond, &l->mu, &ts) == ETIMEDOUT && l->listening) {
			pthread_mutex_unlock(&l->mu);
			return;
		}
	}
	opener = l->opener;
	live = l->opener_live;
	l->opener_live = false;
	pthread_mutex_unlock(&l->mu);
	if (live)
		pthread_join(opener, NULL);
	if (l->s.relay) /* no opener could start to close it */
		netconf_session_close(&l->s, 0);
	pthread_mutex_destroy(&l->mu);
	pthread_cond_destroy(&l->cond);
	free(l);
}
