/* The driver table (drivers are found by the name the config gives them)
 * and the device wrappers every caller goes through. */
#include "drivers/internal.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static const struct driver_ops *const drivers[] = {
    &tl1_driver_ops, &patch_panel_driver_ops, &mrr_driver_ops, &netlink_driver_ops, &sim_driver_ops,
};

/* Weak: a program that links the netconf driver from libofc.a (for its
 * other functions, or with -u netconf_driver_ops as ofc.pc asks) drives
 * netconf devices with it; the others (ofc, ofcd) load it as a plugin
 * the first time a config names one (drivers/internal.h). */
#pragma weak netconf_driver_ops

static const struct driver_ops *netconf_loaded;
static struct ofc_error netconf_why;

static void netconf_load(void)
{
	static const struct plugin_spec spec = {
	    .what = "the netconf driver",
	    .kind = "netconf driver",
	    .file = NETCONF_PLUGIN,
	    .env = "OFC_NETCONF_PLUGIN",
	    .symbol = NETCONF_PLUGIN_API,
	    .size = sizeof(struct driver_ops),
	};
	const struct netconf_plugin *p = plugin_load(&spec, &netconf_why);

	netconf_loaded = p ? p->ops : NULL;
}

/* The netconf driver, linked or loaded (once per process); NULL with err
 * (may be NULL) when neither. */
static const struct driver_ops *netconf_ops(struct ofc_error *err)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	if (&netconf_driver_ops)
		return &netconf_driver_ops;
	pthread_once(&once, netconf_load);
	if (!netconf_loaded && err)
		*err = netconf_why;
	return netconf_loaded;
}

/* Drivers built as plugins: by name, how to get the driver (linked, or
 * loaded the first time a config names it); NULL with err when neither. */
static const struct {
	const char *name;
	const struct driver_ops *(*get)(struct ofc_error *err);
} plugins[] = {
    {"netconf", netconf_ops},
};

/* The driver named, linked or a plugin's; NULL with err (may be NULL) set
 * when a plugin cannot be had, and with err untouched when no driver has
 * that name. */
static const struct driver_ops *driver_get(const char *name, struct ofc_error *err)
{
	for (size_t i = 0; i < ARRAY_SIZE(drivers); i++)
		if (strcmp(drivers[i]->name, name) == 0)
			return drivers[i];
	for (size_t i = 0; i < ARRAY_SIZE(plugins); i++)
		if (strcmp(plugins[i].name, name) == 0)
			return plugins[i].get(err);
	return NULL;
}

const struct driver_ops *driver_find(const char *name)
{
	return driver_get(name, NULL);
}

int device_init(struct device *dev, const struct device_cfg *cfg, struct ofc_error *err)
{
	struct ofc_error why = {0};

	memset(dev, 0, sizeof(*dev));
	dev->cfg = *cfg;
	dev->ops = driver_get(cfg->driver, &why);
	if (!dev->ops && why.code) {
		*err = why;
		ofc_error_prefix(err, "%s", cfg->name);
		return -1;
	}
	if (!dev->ops)
		return ofc_error_set(err, OFC_E_INPUT, "%s: no driver named '%s'", cfg->name,
				     cfg->driver);
	if (dev->ops->cls && dev->ops->cls != cfg->cls)
		return ofc_error_set(err, OFC_E_INPUT, "%s: driver '%s' cannot drive this device",
				     cfg->name, cfg->driver);
	return 0;
}

static int ensure_open(struct device *dev, struct ofc_error *err)
{
	if (dev->open)
		return 0;
	if (dev->ops->open(dev, err) < 0)
		return -1;
	dev->open = true;
	return 0;
}

/* Nothing listening at a device's address is the first thing a new
 * operator meets (a config's address with no switch or emulator behind
 * it): say what to start, or which option reaches the device elsewhere. */
static void hint_unreachable(const struct device *dev, struct ofc_error *err)
{
	size_t n = strlen(err->msg);

	if (err->reason != OFC_R_LOST || !dev->cfg.address ||
	    !strstr(err->msg, "cannot connect to "))
		return;
	snprintf(err->msg + n, sizeof(err->msg) - n,
		 " (is the device, or its emulator %s, listening there? --device %s=HOST:PORT "
		 "reaches it elsewhere)",
		 dev->cfg.cls == DEV_RING		   ? "build/mrr-emu"
		 : strcmp(dev->cfg.driver, "netconf") == 0 ? "build/netconf-emu"
							   : "build/ocs-emu",
		 dev->cfg.name);
}

/* Whether a failed operation got an answer from the device (device_stats). */
static bool answered(const struct ofc_error *err)
{
	switch (err->reason) {
	case OFC_R_AUTH:
	case OFC_R_IDENTITY:
	case OFC_R_REFUSED:
	case OFC_R_GARBAGE:
	case OFC_R_TOO_BIG:
	case OFC_R_MISMATCH:
		return true;
	default:
		return false;
	}
}

/* Count an operation's outcome in dev->stats (`sent`: its commands count
 * before it: an operation that sent nothing heard nothing); rc passes
 * through. */
static int counted(struct device *dev, uint64_t sent, int rc, const struct ofc_error *err)
{
	/* (the controller's own fence refusing is not the device's
	 * error) */
	if (rc < 0 && err->reason != OFC_R_FENCED)
		dev->stats.errors++;
	if ((rc >= 0 && dev->stats.commands > sent) || (rc < 0 && answered(err)))
		dev->stats.last_contact = (double)unix_ms() / 1000;
	return rc;
}

int device_read(struct device *dev, struct device_state *out, struct ofc_error *err)
{
	double t0 = now_seconds();
	uint64_t sent = dev->stats.commands;
	int rc;

	state_init(out, dev->cfg.cls);
	/* (a fenced controller does not even open a session) */
	rc = device_fence(dev, NULL, err);
	if (rc == 0)
		rc = ensure_open(dev, err);
	if (rc == 0)
		rc = dev->ops->read_state(dev, out, err);
	if (rc == 0) /* an answer, even an impossible one */
		dev->stats.last_contact = (double)unix_ms() / 1000;
	if (rc == 0) {
		/* What a device reports is checked like any input: numbers in
		 * range, nothing twice (two cross-connects on one ingress are
		 * not a state to diff against). */
		state_sort(out);
		rc = state_check(out, &dev->cfg, err);
		if (rc < 0)
			ofc_error_prefix(err, "the device reports an impossible state");
	}
	if (rc < 0) {
		/* Nothing half-read goes back: the caller owns no state on error. */
		state_free(out);
		hint_unreachable(dev, err);
		ofc_error_prefix(err, "%s", dev->cfg.name);
	}
	dev->stats.seconds += now_seconds() - t0;
	return counted(dev, sent, rc, err);
}

/* A switch's cross-connects are checked against its ports once, here, for
 * every driver: nothing outside 1..N is sent (N + out would wrap in TL1's
 * egress numbering: egress 4294967042 on 256 ports was sent as port 2). A
 * disconnect is named by its ingress; where a protocol also names the
 * egress (Calient's), its driver says what it lacks. */
static int check_ports(const struct device *dev, const struct op_batch *b, struct ofc_error *err)
{
	uint32_t n = dev->cfg.ports;

	if (dev->cfg.cls != DEV_SWITCH || !n)
		return 0;
	for (uint32_t i = 0; i < b->n; i++) {
		const struct op *op = &b->ops[i];
		bool connect = op->kind == OP_CONNECT;

		if (op->kind != OP_CONNECT && op->kind != OP_DISCONNECT)
			continue; /* (the driver refuses what it cannot do) */
		if (op->xc.in < 1 || op->xc.in > n ||
		    (connect && (op->xc.out < 1 || op->xc.out > n)))
			return ofc_error_setr(
			    err, OFC_E_RUNTIME, OFC_R_REFUSED,
			    "not sent: cross-connect %u -> %u is outside ports 1..%u", op->xc.in,
			    op->xc.out, n);
	}
	return 0;
}

int device_apply(struct device *dev, const struct op_batch *b, uint32_t *done,
		 struct ofc_error *err)
{
	double t0 = now_seconds();
	uint64_t sent = dev->stats.commands;
	int rc;

	*done = 0;
	rc = check_ports(dev, b, err);
	if (rc == 0)
		rc = device_fence(dev, NULL, err);
	if (rc == 0)
		rc = ensure_open(dev, err);
	if (rc == 0 && b->n)
		rc = dev->ops->apply(dev, b, done, err);
	if (rc < 0) {
		hint_unreachable(dev, err);
		ofc_error_prefix(err, "%s", dev->cfg.name);
	}
	dev->stats.seconds += now_seconds() - t0;
	return counted(dev, sent, rc, err);
}

int device_apply_batch(struct device *dev, const struct op_batch *b, struct ofc_error *err)
{
	double t0 = now_seconds();
	uint64_t sent = dev->stats.commands;
	uint32_t done = 0;
	int rc = check_ports(dev, b, err);

	if (rc == 0)
		rc = device_fence(dev, NULL, err);
	if (rc == 0)
		rc = ensure_open(dev, err);
	if (rc == 0 && b->n)
		rc = dev->ops->apply_batch ? dev->ops->apply_batch(dev, b, err)
					   : dev->ops->apply(dev, b, &done, err);
	if (rc < 0) {
		hint_unreachable(dev, err);
		ofc_error_prefix(err, "%s", dev->cfg.name);
	}
	dev->stats.seconds += now_seconds() - t0;
	return counted(dev, sent, rc, err);
}

void device_close(struct device *dev)
{
	if (dev->open && dev->ops)
		dev->ops->close(dev);
	dev->open = false;
	/* what a closed device reported is not known any more */
	free(dev->alarms);
	dev->alarms = NULL;
	dev->nalarms = 0;
	dev->alarms_cap = 0;
}

int device_lock(struct device *dev, bool *held, struct ofc_error *err)
{
	uint64_t sent = dev->stats.commands;
	int rc;

	*held = false;
	if (!dev->ops->lock)
		return 0;
	rc = device_fence(dev, NULL, err);
	if (rc == 0)
		rc = ensure_open(dev, err);
	if (rc == 0)
		rc = dev->ops->lock(dev, err);
	counted(dev, sent, rc, err);
	if (rc < 0) {
		ofc_error_prefix(err, "%s: lock", dev->cfg.name);
		return -1;
	}
	*held = rc == 0;
	return 0;
}

int device_unlock(struct device *dev, struct ofc_error *err)
{
	if (!dev->ops->unlock || !dev->open)
		return 0; /* no lock, or the session (and with it the lock) is gone */
	uint64_t sent = dev->stats.commands;
	/* (fenced: the caller closes the session, and the device drops the
	 * lock with it) */
	if (device_fence(dev, NULL, err) < 0 ||
	    counted(dev, sent, dev->ops->unlock(dev, err), err) < 0) {
		ofc_error_prefix(err, "%s: unlock", dev->cfg.name);
		return -1;
	}
	return 0;
}

int device_confirm(struct device *dev, struct ofc_error *err)
{
	if (!dev->ops->confirm || !dev->open)
		return 0;
	uint64_t sent = dev->stats.commands;
	if (device_fence(dev, NULL, err) < 0 ||
	    counted(dev, sent, dev->ops->confirm(dev, err), err) < 0) {
		ofc_error_prefix(err, "%s", dev->cfg.name);
		return -1;
	}
	return 0;
}
