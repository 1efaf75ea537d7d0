/* NETCONF notifications (RFC 5277) for the netconf driver
 * (docs/netconf.md): when a caller wants the device's own news
 * (device_cfg.news: ofcd) and the device's hello offers :notification,
 * a thread of the driver's keeps a second session with the device,
 * subscribed with <create-subscription> (on the Polatis stream, else the
 * default NETCONF one), and reads its notifications with libnetconf2's
 * nc_recv_notif. A port power notification of the polatis-switch module
 * (port-power-alarm, -clear, -warn-alarm, -warn-clear) for a port of the
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
 * Bounds: the relay cuts the session past NOTIF_MAX bytes since the last
 * notification taken, and past the driver's timeout once a message has
 * started to come; a reply on this session (none is asked for) cuts it too
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

#define NOTIF_MAX     (1u << 20) /* bytes between two notifications taken */
#define BACKOFF_FIRST 0.5
#define BACKOFF_MAX   60.0

struct nclisten {
	pthread_t thread;
	const struct device *dev;	   /* borrowed: its cfg, read only */
	const struct netconf_login *login; /* borrowed */
	atomic_bool *due;		   /* the driver's: the next read reads health */
	atomic_bool subscribed;		   /* a session is subscribed now */

	pthread_mutex_t mu; /* guards what follows */
	pthread_cond_t cond;
	bool stop;
	struct ncrelay *relay; /* the session's, for a stop to cut */
};

static bool stopping(struct nclisten *l)
{
	bool s;

	pthread_mutex_lock(&l->mu);
	s = l->stop;
	pthread_mutex_unlock(&l->mu);
	return s;
}

/* Wait seconds, or until a stop. */
static void wait_s(struct nclisten *l, double seconds)
{
	struct timespec ts;
	double at;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	at = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9 + seconds;
	ts.tv_sec = (time_t)at;
	ts.tv_nsec = (long)((at - (double)ts.tv_sec) * 1e9);
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

/* Read notifications until the session ends or a stop. */
static void listen_session(struct nclisten *l, struct netconf_session *s)
{
	while (!stopping(l)) {
		struct lyd_node *envp = NULL, *op = NULL;
		NC_MSG_TYPE t;

		ncrelay_arm_span(s->relay, NOTIF_MAX, l->dev->cfg.timeout);
		netconf_clear_log();
		t = nc_recv_notif(s->nc, 1000, &envp, &op);
		if (t == NC_MSG_NOTIF) {
			take(l, op);
		} else if (t == NC_MSG_REPLY) {
			/* nothing was asked: a device that answers anyway is cut
			 * (libnetconf2 queues replies) */
			ncrelay_cut(s->relay);
		}
		/* NC_MSG_ERROR on a session still up: a message libnetconf2
		 * could not read (not well-formed, of a module not loaded),
		 * dropped */
		lyd_free_tree(envp);
		lyd_free_tree(op);
		if (!netconf_session_up(s))
			break;
	}
}

static void publish(struct nclisten *l, struct ncrelay *r)
{
	pthread_mutex_lock(&l->mu);
	l->relay = r;
	if (r && l->stop)
		ncrelay_cut(r);
	pthread_mutex_unlock(&l->mu);
}

static void *listen_main(void *arg)
{
	struct nclisten *l = arg;
	const struct device *dev = l->dev;
	double backoff = BACKOFF_FIRST;

	ofc_thread_name("netconf-listen");
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
			if (offered && subscribe(&s, deadline, &err) == 0) {
				backoff = BACKOFF_FIRST;
				atomic_store(&l->subscribed, true);
				news(l); /* what came while no session listened */
				listen_session(l, &s);
				atomic_store(&l->subscribed, false);
			}
			publish(l, NULL);
			netconf_session_close(&s, stopping(l) ? 0 : now_seconds() + 1);
		}
		if (!offered)
			break; /* polling it is */
		wait_s(l, backoff);
		backoff = backoff * 2 < BACKOFF_MAX ? backoff * 2 : BACKOFF_MAX;
	}
	return NULL;
}

struct nclisten *nclisten_start(const struct device *dev, const struct netconf_login *login,
				atomic_bool *due)
{
	struct nclisten *l = xcalloc(1, sizeof(*l));

	l->dev = dev;
	l->login = login;
	l->due = due;
	pthread_condattr_t ca;

	pthread_mutex_init(&l->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&l->cond, &ca);
	pthread_condattr_destroy(&ca);
	if (pthread_create(&l->thread, NULL, listen_main, l) != 0) {
		pthread_mutex_destroy(&l->mu);
		pthread_cond_destroy(&l->cond);
		free(l);
		return NULL;
	}
	return l;
}

bool nclisten_subscribed(struct nclisten *l)
{
	return l && atomic_load(&l->subscribed);
}

void nclisten_stop(struct nclisten *l)
{
	if (!l)
		return;
	pthread_mutex_lock(&l->mu);
	l->stop = true;
	if (l->relay)
		ncrelay_cut(l->relay);
	pthread_cond_broadcast(&l->cond);
	pthread_mutex_unlock(&l->mu);
	pthread_join(l->thread, NULL);
	pthread_mutex_destroy(&l->mu);
	pthread_cond_destroy(&l->cond);
	free(l);
}
