/* The netconf driver (ops "netconf"; docs/netconf.md): an
 * optical switch or patch panel of the Polatis optical-switch model over
 * NETCONF (RFC 6241), on SSH or a Unix socket (netconf_session.c).
 *
 * Reads are one <get> with a subtree filter for the cross-connects, the
 * ports' status and their optical power (netconf_data.c turns the data
 * into ofc's state; a transaction's reads of the cross-connects alone are
 * read in their plain form where they come in it, netconf_plain.c); every
 * read also says which ports in use are failing.
 * A batch of changes is one <edit-config> (a pair per change, merge or
 * delete, rollback-on-error where offered): on the candidate datastore
 * with a <commit> when the device has one (a confirmed commit under a
 * trial), else on running. The transaction's <lock> (driver_ops lock) is
 * taken again after a lost session, or the transaction fails.
 *
 * A lost session, a timeout or a reply that is not NETCONF drops the
 * session and the exchange is tried again on a new one, up to `retries`
 * times; a batch is then re-planned from what the device holds, since the
 * lost one may or may not have taken effect. An <rpc-error> is an answer:
 * it fails the batch at once (nothing of it took effect with
 * rollback-on-error, and the caller reads back anyway).
 */
#include "drivers/internal.h"

#include <errno.h>
#include <libnetconf2/messages_client.h>
#include <libnetconf2/netconf.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct nc_priv {
	struct netconf_session s;
	struct netconf_login login;
	bool use_candidate;
	bool txn_locked;      /* the caller holds the device's lock (driver_ops lock) */
	bool confirm_pending; /* a confirmed commit waits for its confirming one */
	/* Ports (opsw ids 1..2N) this driver changed since the last read:
	 * their power may still show the light before the change (a switch's
	 * power monitors are slower than its mirrors), so one read of them is
	 * not trusted to be low. */
	uint8_t *settling;
	double health_at; /* when health was last read (0: never) */
	/* Notifications (netconf_notif.c), where the caller wants news
	 * (cfg.news) and the device offers them: the listener sets due. */
	struct nclisten *listen;
	atomic_bool due; /* the next read reads health */
};

/* What a read asks for: the cross-connects, and the ports' status and
 * power when health is due (below). */
static const char filter_xc[] = "<cross-connects xmlns=\"" OPSW_NS "\"/>";
static const char filter_all[] = "<cross-connects xmlns=\"" OPSW_NS "\"/>"
				 "<port-config xmlns=\"" OPSW_NS "\"/>"
				 "<opm-power xmlns=\"" OPSW_NS "\"/>";

/* Port health is read at most this often. A switch's status and power of
 * 2N ports are most of a read (on 384 ports, most of a transaction's time
 * in the driver: bench/results/netconf.md), and the reads inside one transaction
 * (under the lock, the read-back) need only the cross-connects; a probe
 * (ofcd's, every --probe-interval, 10 s by default), a plan's read and
 * `ofc status` get health. */
#define HEALTH_EVERY 1.0

static double exchange_deadline(const struct device *dev, uint32_t changes)
{
	return now_seconds() + dev->cfg.timeout + dev->cfg.move_time * changes;
}

/* Reasons that no new session cures. */
static bool final(enum ofc_reason r)
{
	return r == OFC_R_AUTH || r == OFC_R_IDENTITY || r == OFC_R_CREDENTIALS ||
	       r == OFC_R_REFUSED;
}

static const char *ds_name(NC_DATASTORE ds)
{
	return ds == NC_DATASTORE_CANDIDATE ? "candidate" : "running";
}

/* One RPC built by the caller; freed here. */
static int call(struct device *dev, struct nc_rpc *rpc, const char *what, double deadline,
		char **data, struct netconf_rpc_error *re, struct ofc_error *err)
{
	struct nc_priv *p = dev->priv;
	int rc;

	if (!rpc)
		return ofc_error_set(err, OFC_E_RUNTIME, "%s: cannot build the RPC", what);
	dev->stats.commands++;
	rc = netconf_rpc(&p->s, rpc, what, deadline, data, re, err);
	nc_rpc_free(rpc);
	return rc;
}

/* A lock's refusal: -2 when another session holds the datastore (err
 * names it), else -1 with err as it is. */
static int lock_refused(NC_DATASTORE ds, const struct netconf_rpc_error *re, struct ofc_error *err)
{
	if (re->have && (strcmp(re->tag, "lock-denied") == 0 || strcmp(re->tag, "in-use") == 0)) {
		char by[48] = "another session";

		if (re->session_id)
			snprintf(by, sizeof(by), "session %u", re->session_id);
		ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_REFUSED,
			       "the %s datastore is locked by %s (another manager)%s%.160s",
			       ds_name(ds), by, re->message[0] ? ": " : "", re->message);
		return -2;
	}
	return -1;
}

/* <lock> or <unlock> of the datastores ds[0..n) (running first when
 * locking, last when unlocking), sent together: one round trip. rc[i] is
 * each one's answer (0, or -1: refused); returns 0 when all were done, -2
 * when another session holds one (err names it), else -1 with err (the
 * first refusal, or the session failed: rc[] then -1 where unknown). */
static int lock_many(struct device *dev, const NC_DATASTORE *ds, uint32_t n, bool lock,
		     double deadline, int *rc, struct ofc_error *err)
{
	struct nc_priv *p = dev->priv;
	struct netconf_call c[2];
	char what[2][48];
	int ret = 0;

	for (uint32_t i = 0; i < n; i++) {
		snprintf(what[i], sizeof(what[i]), "<%s> %s", lock ? "lock" : "unlock",
			 ds_name(ds[i]));
		c[i] = (struct netconf_call){
		    .rpc = lock ? nc_rpc_lock(ds[i]) : nc_rpc_unlock(ds[i]), .what = what[i]};
		rc[i] = -1;
		if (!c[i].rpc) {
			for (uint32_t k = 0; k < i; k++)
				nc_rpc_free(c[k].rpc);
			return ofc_error_set(err, OFC_E_RUNTIME, "%s: cannot build the RPC",
					     what[i]);
		}
	}
	dev->stats.commands += n;
	bool lost = netconf_rpc_many(&p->s, c, n, deadline, err) < 0;

	for (uint32_t i = 0; i < n; i++) {
		if (!lost)
			rc[i] = c[i].rc;
		if (!lost && c[i].rc < 0 && ret == 0) {
			*err = c[i].err;
			ret = lock ? lock_refused(ds[i], &c[i].re, err) : -1;
		}
		nc_rpc_free(c[i].rpc);
	}
	return lost ? -1 : ret;
}

/* The datastores a transaction locks: running, and the candidate it
 * edits, both asked at once. -2 when another session holds one; what
 * was taken of the two is given back. */
static int lock_both(struct device *dev, double deadline, struct ofc_error *err)
{
	struct nc_priv *p = dev->priv;
	const NC_DATASTORE ds[2] = {NC_DATASTORE_RUNNING, NC_DATASTORE_CANDIDATE};
	uint32_t n = p->use_candidate ? 2 : 1;
	int rc[2], ret = lock_many(dev, ds, n, true, deadline, rc, err);

	if (ret < 0 && netconf_session_up(&p->s)) {
		for (uint32_t i = 0; i < n; i++) {
			int ignored;

			if (rc[i] == 0)
				lock_many(dev, &ds[i], 1, false, deadline, &ignored,
					  &(struct ofc_error){0});
		}
	}
	return ret;
}

static void sleep_s(double s)
{
	struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};

	while (s > 0 && nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* Both locks, waiting while another session holds one, until the
 * deadline: the holder is often a session that just ended (an ofc killed
 * half-way, whose repair is this) and that the device has not yet seen
 * go. Past the deadline the refusal names the holder. */
static int lock_all(struct device *dev, double deadline, struct ofc_error *err)
{
	for (double wait = 0.02;; wait = fmin(wait * 2, 0.5)) {
		int rc = lock_both(dev, deadline, err);
		double left = deadline - now_seconds();

		if (rc != -2)
			return rc;
		if (left < 2 * wait) /* time for the wait and another round trip */
			return -1;
		sleep_s(wait);
	}
}

static int unlock_all(struct device *dev, double deadline, struct ofc_error *err)
{
	struct nc_priv *p = dev->priv;
	const NC_DATASTORE ds[2] = {NC_DATASTORE_CANDIDATE, NC_DATASTORE_RUNNING};
	int rc[2];

	return lock_many(dev, p->use_candidate ? ds : ds + 1, p->use_candidate ? 2 : 1, false,
			 deadline, rc, err) < 0
		   ? -1
		   : 0;
}

/* ---- sessions ------------------------------------------------------------------- */

/* What the device's hello must offer, and how ofc will change it. */
static int check_caps(struct device *dev, struct ofc_error *err)
{
	struct nc_priv *p = dev->priv;
	const struct netconf_caps *c = &p->s.caps;
	const char *want = dev->cfg.datastore;

	if (!c->model)
		return ofc_error_setr(
		    err, OFC_E_RUNTIME, OFC_R_IDENTITY,
		    "the device's hello names no optical-switch module (%s): not a "
		    "switch of the Polatis model",
		    OPSW_NS);
	if (want && strcmp(want, "candidate") == 0 && !c->candidate)
		return ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_IDENTITY,
				      "the config asks for the candidate datastore, which the "
				      "device does not offer (:candidate)");
	p->use_candidate = c->candidate && !(want && strcmp(want, "running") == 0);
	if (!p->use_candidate && !c->writable_running)
		return ofc_error_setr(
		    err, OFC_E_RUNTIME, OFC_R_IDENTITY,
		    "the device offers neither :candidate nor :writable-running%s: "
		    "ofc cannot change it",
		    c->candidate ? " (and the config says datastore: running)" : "");
	/* The session parses replies against the model of the device's
	 * revision: a <get>'s data comes typed (netconf_rpc_tree) */
	if (opsw_context_add(p->s.ctx, c->rev, err) < 0)
		return -1;
	return 0;
}

static void drop(struct device *dev, double deadline)
{
	struct nc_priv *p = dev->priv;

	netconf_session_close(&p->s, deadline);
}

/* A session that is up: the current one, or a new one (hello checked, and
 * the transaction's lock taken again when the caller held it). */
static int ensure(struct device *dev, double deadline, struct ofc_error *err)
{
	struct nc_priv *p = dev->priv;

	if (netconf_session_up(&p->s))
		return 0;
	drop(dev, 0);
	if (netconf_session_open(dev, &p->login, false, deadline, &p->s, err) < 0)
		return -1;
	if (check_caps(dev, err) < 0) {
		drop(dev, deadline);
		return -1;
	}
	if (p->confirm_pending) {
		/* RFC 6241 8.4.1: the device reverted the confirmed commit when
		 * the session that made it ended. */
		p->confirm_pending = false;
	}
	if (p->txn_locked && lock_all(dev, deadline, err) < 0) {
		ofc_error_prefix(err, "the session was lost and its lock with it");
		drop(dev, deadline);
		return -1;
	}
	return 0;
}

/* ---- reading ----------------------------------------------------------------------- */

static int alarm_cmp(const void *a, const void *b)
{
	const struct port_alarm *x = a, *y = b;

	if (x->port != y->port)
		return x->port < y->port ? -1 : 1;
	return (int)x->egress - (int)y->egress;
}

/* Port id (1..2N) of a light path: FAILED, or under the power floor. */
static void check_port(struct device *dev, const struct opsw_data *d, uint32_t id)
{
	struct nc_priv *p = dev->priv;
	uint32_t n = dev->cfg.ports;
	const struct opsw_port *q = opsw_port_of(d, id);
	struct port_alarm a = {.port = id > n ? id - n : id, .egress = id > n};

	if (!q)
		return;
	if (q->status == OPSW_FAILED) {
		a.kind = ALARM_FAILED;
	} else if (q->has_power && dev->cfg.min_power_set && q->power_dbm < dev->cfg.min_power &&
		   !(p->settling && p->settling[id])) {
		a.kind = ALARM_LOW_POWER;
		a.power_dbm = q->power_dbm;
	} else {
		return;
	}
	GROW(dev->alarms, dev->alarms_cap, (size_t)dev->nalarms + 1);
	dev->alarms[dev->nalarms++] = a;
}

/* The ports in use the device reports failing (struct device's alarms). */
static void take_alarms(struct device *dev, const struct opsw_data *d)
{
	struct nc_priv *p = dev->priv;
	uint32_t n = dev->cfg.ports;

	dev->nalarms = 0;
	for (uint32_t i = 0; i < d->xc.nxc; i++) {
		check_port(dev, d, d->xc.xc[i].in);
		check_port(dev, d, n + d->xc.xc[i].out);
	}
	if (dev->nalarms > 1)
		qsort(dev->alarms, dev->nalarms, sizeof(*dev->alarms), alarm_cmp);
	if (p->settling)
		memset(p->settling, 0, 2 * (size_t)n + 1);
}

/* The ports a batch moves light on settle until the next read. */
static void settle_ports(struct device *dev, const struct op_batch *b)
{
	struct nc_priv *p = dev->priv;
	uint32_t n = dev->cfg.ports;

	if (!p->settling)
		p->settling = xcalloc(2 * (size_t)n + 1, 1);
	for (uint32_t i = 0; i < b->n; i++) {
		p->settling[b->ops[i].xc.in] = 1;
		p->settling[n + b->ops[i].xc.out] = 1;
	}
}

struct get_take {
	uint32_t ports;
	bool pairs;
	struct opsw_data *d;
};

/* A read of the cross-connects alone (a transaction's, under the lock and
 * after its edit) in its plain form: the same pairs without libyang's
 * parse (netconf_plain.c), else the tree below. */
static int plain_data(const char *body, size_t len, uint64_t id, void *arg)
{
	const struct get_take *g = arg;

	return opsw_plain_reply(body, len, id, g->ports, g->pairs, g->d);
}

static int take_data(const struct lyd_node *tree, void *arg, struct ofc_error *err)
{
	const struct get_take *g = arg;

	return opsw_take(tree, g->ports, g->d, err);
}

/* One <get> on the current session; with health, the ports' too. Without
 * health (the reads inside a transaction) a reply in its plain form is
 * read in place (plain_data); any other reply's data is checked on the
 * tree libnetconf2 parsed it into (the session's context holds the model:
 * check_caps), not printed back to XML and parsed again (bench/results/netconf.md,
 * "NETCONF"). */
static int get_once(struct device *dev, struct opsw_data *d, bool health, double deadline,
		    struct ofc_error *err)
{
	struct netconf_rpc_error re;
	struct netconf_session *s = &((struct nc_priv *)dev->priv)->s;
	struct get_take g = {dev->cfg.ports, s->caps.pairs, d};
	struct nc_rpc *rpc =
	    nc_rpc_get(health ? filter_all : filter_xc, NC_WD_UNKNOWN, NC_PARAMTYPE_CONST);

	if (!rpc)
		return ofc_error_set(err, OFC_E_RUNTIME, "<get>: cannot build the RPC");
	dev->stats.commands++;
	int rc = netconf_rpc_plain(s, rpc, "<get>", deadline, health ? NULL : plain_data, take_data,
				   &g, &re, err);
	nc_rpc_free(rpc);
	return rc;
}

/* A <get> with retries on new sessions. */
static int get(struct device *dev, struct opsw_data *d, bool health, struct ofc_error *err)
{
	struct ofc_error last = {0};

	for (uint32_t a = 0; a <= dev->cfg.retries; a++) {
		double deadline = exchange_deadline(dev, 0);

		if (a)
			dev->stats.retries++;
		opsw_data_free(d);
		opsw_data_init(d);
		if (ensure(dev, deadline, &last) == 0 &&
		    get_once(dev, d, health, deadline, &last) == 0)
			return 0;
		if (final(last.reason))
			break;
		drop(dev, 0);
	}
	*err = last;
	return -1;
}

static int nc_read(struct device *dev, struct device_state *out, struct ofc_error *err)
{
	struct nc_priv *p = dev->priv;
	struct opsw_data d;
	bool due = atomic_exchange(&p->due, false);
	bool health = due || !p->health_at || now_seconds() - p->health_at >= HEALTH_EVERY;

	opsw_data_init(&d);
	if (get(dev, &d, health, err) < 0) {
		opsw_data_free(&d);
		dev->nalarms = 0;
		if (due)
			atomic_store(&p->due, true); /* still due */
		return -1;
	}
	/* The device's news, where it offers them and the caller wants them:
	 * from a read with health on (a probe's, a plan's), not the reads
	 * inside a transaction. */
	if (health && nclisten_stalled(p->listen)) {
		nclisten_stop(p->listen);
		p->listen = NULL;
	}
	if (health && dev->cfg.news && !p->listen && p->s.caps.notification)
		p->listen = nclisten_start(dev, &p->login, &p->due);
	dev->news_subscribed = nclisten_subscribed(p->listen);
	/* without health, the alarms are those of the last read that had it */
	if (health) {
		take_alarms(dev, &d);
		p->health_at = now_seconds();
	}
	state_free(out);
	*out = d.xc; /* moved: the data's own copy is not freed below */
	state_init(&d.xc, DEV_SWITCH);
	opsw_data_free(&d);
	return 0;
}

/* ---- changing ----------------------------------------------------------------------- */

/* The error of a refused edit: the change its error-path names, if any. */
static int refused_edit(const struct op_batch *b, const struct netconf_rpc_error *re,
			const char *what, struct ofc_error *err)
{
	uint32_t in;
	char desc[64] = "";

	if (opsw_error_ingress(re->path, &in) == 0)
		for (uint32_t i = 0; i < b->n; i++)
			if (b->ops[i].xc.in == in && (!desc[0] || b->ops[i].kind == OP_CONNECT))
				op_describe(&b->ops[i], desc, sizeof(desc));
	if (!desc[0])
		return ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_REFUSED,
				      "device refused %s of %u change%s (%s%s%.200s)", what, b->n,
				      b->n == 1 ? "" : "s", re->tag[0] ? re->tag : "rpc-error",
				      re->message[0] ? ": " : "", re->message);
	return ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_REFUSED, "device refused %s (%s%s%.200s)",
			      desc, re->tag[0] ? re->tag : "rpc-error", re->message[0] ? ": " : "",
			      re->message);
}

/* The candidate cleared (<discard-changes>) and edited, the two sent
 * together: one round trip. The edit is never committed here: when either
 * is refused, the caller discards the candidate again. edit is freed. */
static int clear_and_edit(struct device *dev, const struct op_batch *b, struct nc_rpc *edit,
			  double deadline, struct ofc_error *err)
{
	struct nc_priv *p = dev->priv;
	struct netconf_call c[2] = {{.rpc = nc_rpc_discard(), .what = "<discard-changes>"},
				    {.rpc = edit, .what = "<edit-config>"}};
	int rc = -1;

	if (!c[0].rpc || !c[1].rpc) {
		ofc_error_set(err, OFC_E_RUNTIME, "<edit-config>: cannot build the RPC");
		goto out;
	}
	dev->stats.commands += 2;
	if (netconf_rpc_many(&p->s, c, 2, deadline, err) < 0)
		goto out;
	if (c[0].rc < 0) {
		*err = c[0].err;
		goto out;
	}
	if (c[1].rc < 0) {
		*err = c[1].err;
		if (c[1].re.have)
			refused_edit(b, &c[1].re, "<edit-config>", err);
		goto out;
	}
	rc = 0;
out:
	if (c[0].rpc)
		nc_rpc_free(c[0].rpc);
	if (c[1].rpc)
		nc_rpc_free(c[1].rpc);
	return rc;
}

/* Edit the datastore; on the candidate, commit it (confirmed under a trial). */
static int edit_once(struct device *dev, const struct op_batch *b, double deadline,
		     struct ofc_error *err)
{
	struct nc_priv *p = dev->priv;
	const struct netconf_caps *c = &p->s.caps;
	NC_DATASTORE ds = p->use_candidate ? NC_DATASTORE_CANDIDATE : NC_DATASTORE_RUNNING;
	struct strbuf xml = STRBUF_INIT;
	struct netconf_rpc_error re;
	struct ofc_error ignore = {0};
	bool took = false;
	int rc = 0;

	if (opsw_edit(b, dev->cfg.ports, c->pairs, &xml) == 0) {
		sb_free(&xml);
		return 0;
	}
	if (p->use_candidate && !p->txn_locked) {
		/* A candidate is shared: never edit it unlocked. */
		if (lock_all(dev, deadline, err) < 0) {
			sb_free(&xml);
			return -1;
		}
		took = true;
	}
	struct nc_rpc *edit =
	    nc_rpc_edit(ds, NC_RPC_EDIT_DFLTOP_UNKNOWN, NC_RPC_EDIT_TESTOPT_UNKNOWN,
			c->rollback ? NC_RPC_EDIT_ERROPT_ROLLBACK : NC_RPC_EDIT_ERROPT_UNKNOWN,
			xml.buf, NC_PARAMTYPE_CONST);

	if (p->use_candidate)
		rc = clear_and_edit(dev, b, edit, deadline, err);
	else if (call(dev, edit, "<edit-config>", deadline, NULL, &re, err) < 0) {
		if (re.have)
			refused_edit(b, &re, "<edit-config>", err);
		rc = -1;
	}
	sb_free(&xml);
	if (rc == 0 && p->use_candidate) {
		bool trial = dev->trial_seconds > 0 && c->confirmed;
		uint32_t secs = trial ? (uint32_t)ceil(dev->trial_seconds) : 0;

		if (call(dev, nc_rpc_commit(trial, secs, NULL, NULL, NC_PARAMTYPE_CONST),
			 "<commit>", deadline, NULL, &re, err) < 0) {
			if (re.have)
				refused_edit(b, &re, "<commit>", err);
			rc = -1;
		} else if (trial) {
			p->confirm_pending = true;
		}
	}
	if (rc < 0 && p->use_candidate && netconf_session_up(&p->s))
		call(dev, nc_rpc_discard(), "<discard-changes>", deadline, NULL, &re, &ignore);
	if (took && netconf_session_up(&p->s))
		unlock_all(dev, deadline, &ignore);
	return rc;
}

/* What of b is still to do on a device that holds cur: the device at b's
 * end (every ingress b touches as b leaves it), diffed against cur. */
static void remaining(const struct device_state *cur, const struct op_batch *b,
		      struct op_batch *out)
{
	struct device_state want;

	state_init(&want, DEV_SWITCH);
	for (uint32_t i = 0; i < cur->nxc; i++) {
		bool touched = false;

		for (uint32_t k = 0; k < b->n && !touched; k++)
			touched = b->ops[k].xc.in == cur->xc[i].in;
		if (!touched)
			state_add_xconn(&want, cur->xc[i].in, cur->xc[i].out);
	}
	for (uint32_t k = 0; k < b->n; k++) {
		bool later = false;

		for (uint32_t j = k + 1; j < b->n && !later; j++)
			later = b->ops[j].xc.in == b->ops[k].xc.in;
		if (!later && b->ops[k].kind == OP_CONNECT)
			state_add_xconn(&want, b->ops[k].xc.in, b->ops[k].xc.out);
	}
	state_sort(&want);
	state_diff(cur, &want, out);
	state_free(&want);
}

/* The ports were checked by the core (device.c's check_ports). */
static int check_ops(const struct device *dev, const struct op_batch *b, struct ofc_error *err)
{
	(void)dev;
	for (uint32_t i = 0; i < b->n; i++)
		if (b->ops[i].kind != OP_CONNECT && b->ops[i].kind != OP_DISCONNECT)
			return ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_REFUSED,
					      "a switch cannot do operation %d",
					      (int)b->ops[i].kind);
	return 0;
}

static int nc_apply(struct device *dev, const struct op_batch *b, uint32_t *done,
		    struct ofc_error *err)
{
	struct ofc_error last = {0};

	if (check_ops(dev, b, err) < 0)
		return -1;
	settle_ports(dev, b);
	for (uint32_t a = 0; a <= dev->cfg.retries; a++) {
		double deadline = exchange_deadline(dev, b->n);
		struct op_batch rest = {0};
		const struct op_batch *todo = b;
		struct opsw_data d;
		int rc;

		if (a)
			dev->stats.retries++;
		if (ensure(dev, deadline, &last) < 0) {
			if (final(last.reason))
				break;
			continue;
		}
		if (a) {
			/* The lost exchange may or may not have taken effect. */
			opsw_data_init(&d);
			rc = get_once(dev, &d, false, deadline, &last);
			if (rc == 0)
				remaining(&d.xc, b, &rest);
			opsw_data_free(&d);
			if (rc < 0) {
				if (final(last.reason))
					break;
				drop(dev, 0);
				continue;
			}
			todo = &rest;
		}
		rc = edit_once(dev, todo, exchange_deadline(dev, todo->n), &last);
		batch_free(&rest);
		if (rc == 0) {
			*done = b->n;
			return 0;
		}
		if (final(last.reason))
			break;
		drop(dev, 0);
	}
	*err = last;
	return -1;
}

/* ---- the transaction's lock and trial ---------------------------------------------------- */

static int nc_lock(struct device *dev, struct ofc_error *err)
{
	struct nc_priv *p = dev->priv;
	struct ofc_error last = {0};

	if (p->txn_locked)
		return 2; /* held already: its taker releases it */
	for (uint32_t a = 0; a <= dev->cfg.retries; a++) {
		double deadline = exchange_deadline(dev, 0);

		if (a)
			dev->stats.retries++;
		if (ensure(dev, deadline, &last) == 0 && lock_all(dev, deadline, &last) == 0) {
			p->txn_locked = true;
			return 0;
		}
		if (final(last.reason))
			break;
		drop(dev, 0);
	}
	*err = last;
	return -1;
}

static int nc_unlock(struct device *dev, struct ofc_error *err)
{
	struct nc_priv *p = dev->priv;

	if (!p->txn_locked)
		return 0;
	p->txn_locked = false;
	if (!netconf_session_up(&p->s))
		return 0; /* the device dropped it with the session */
	return unlock_all(dev, exchange_deadline(dev, 0), err);
}

static int nc_confirm(struct device *dev, struct ofc_error *err)
{
	struct nc_priv *p = dev->priv;
	struct netconf_rpc_error re;

	if (!p->confirm_pending)
		return 0;
	p->confirm_pending = false;
	if (!netconf_session_up(&p->s))
		return ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_LOST,
				      "the session of the confirmed commit ended: the device has "
				      "reverted the trial (RFC 6241 8.4)");
	return call(dev, nc_rpc_commit(0, 0, NULL, NULL, NC_PARAMTYPE_CONST), "confirming <commit>",
		    exchange_deadline(dev, 0), NULL, &re, err);
}

/* ---- open and close ------------------------------------------------------------------------ */

static void nc_close(struct device *dev)
{
	struct nc_priv *p = dev->priv;

	if (!p)
		return;
	nclisten_stop(p->listen); /* before what it borrows goes */
	if (p->txn_locked && netconf_session_up(&p->s)) {
		struct ofc_error ignore = {0};

		unlock_all(dev, now_seconds() + fmin(dev->cfg.timeout, 2), &ignore);
	}
	drop(dev, now_seconds() + fmin(dev->cfg.timeout, 2));
	credentials_wipe(&p->login.cred);
	if (p->login.key_text) {
		explicit_bzero(p->login.key_text, p->login.key_len);
		free(p->login.key_text);
	}
	free(p->login.cert_text);
	free(p->settling);
	free(p);
	dev->priv = NULL;
}

/* Whom to trust and how to log in: SSH, a known-hosts file and a user's
 * key or password; TLS, a CA file and a certificate with its key. A Unix
 * socket's permissions are its login. */
static int load_login(const struct device *dev, struct netconf_login *l, struct ofc_error *err)
{
	const char *path = dev->cfg.credentials, *dir = dev->cfg.credentials_dir;

	if (!dev->cfg.tls && !dev->cfg.known_hosts)
		return ofc_error_setr(
		    err, OFC_E_INPUT, OFC_R_CREDENTIALS,
		    "NETCONF over SSH needs 'known_hosts: FILE' (the device's host "
		    "key)");
	if (dev->cfg.tls && !dev->cfg.tls_ca)
		return ofc_error_setr(
		    err, OFC_E_INPUT, OFC_R_CREDENTIALS,
		    "NETCONF over TLS needs 'tls_ca: FILE' (the CA that signs the "
		    "device's certificate)");
	if (credentials_load(path, dir, &l->cred, err) < 0)
		return -1;
	if (dev->cfg.tls && (!l->cred.cert_file[0] || !l->cred.key_file[0]))
		return ofc_error_setr(err, OFC_E_INPUT, OFC_R_CREDENTIALS,
				      "%s: NETCONF over TLS needs 'certificate: FILE' and "
				      "'private_key: FILE' in the credentials file",
				      path);
	if (l->cred.key_file[0] &&
	    credentials_load_key(path, dir, &l->cred, &l->key_text, &l->key_len, err) < 0)
		return -1;
	if (dev->cfg.tls &&
	    credentials_load_cert(path, dir, &l->cred, &l->cert_text, &l->cert_len, err) < 0)
		return -1;
	return 0;
}

static int nc_open(struct device *dev, struct ofc_error *err)
{
	struct nc_priv *p = xcalloc(1, sizeof(*p));
	bool unix_path = dev->cfg.address && strncmp(dev->cfg.address, "unix:", 5) == 0;

	p->s.lib_fd = -1;
	dev->priv = p;
	if (!unix_path && load_login(dev, &p->login, err) < 0)
		goto fail;
	/* Connect now, so a refused login or a device of another model shows
	 * before any plan. */
	for (uint32_t a = 0; a <= dev->cfg.retries; a++) {
		if (ensure(dev, exchange_deadline(dev, 0), err) == 0)
			return 0;
		if (final(err->reason))
			break;
	}
fail:
	nc_close(dev);
	return -1;
}

const struct driver_ops netconf_driver_ops = {
    .name = "netconf",
    .cls = DEV_SWITCH,
    .open = nc_open,
    .read_state = nc_read,
    .apply = nc_apply,
    .close = nc_close,
    .lock = nc_lock,
    .unlock = nc_unlock,
    .confirm = nc_confirm,
};

/* The plugin's table (drivers/internal.h): the same driver. */
__attribute__((visibility("default"))) const struct netconf_plugin ofc_netconf_plugin = {
    .size = sizeof(struct driver_ops),
    .ops = &netconf_driver_ops,
};
