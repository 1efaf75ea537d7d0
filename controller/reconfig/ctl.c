/* Reconfiguration as a transaction (DESIGN.md §5): plan (read every device,
 * diff against the target), record the intent in the journal (fsync), apply
 * on every device at once (drive.c: one thread a device), read back and
 * compare, commit. On any failure, undo every device, again side by side,
 * and verify again. A crash at
 * any point leaves the journal, which the next changer resolves
 * (ctl_recover): finish when every device already holds the target, else
 * undo back to the recorded "before" states.
 *
 * Undo does not replay inverse operations blindly: the failed operation may
 * or may not have taken effect (a timeout, a lost reply), so each device is
 * read again and diffed against its old state. Because the forward plan is
 * removals-then-additions, that diff is the forward plan reversed. */
#include "controller/config/config.h"
#include "controller/reconfig/internal.h"
#include "controller/testbed/testbed.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

char *ctl_state_dir(const char *dir)
{
	const char *env = getenv("OFC_STATE_DIR");

	if (dir && *dir)
		return xstrdup(dir);
	if (env && *env)
		return xstrdup(env);
	return xstrdup(OFC_STATE_DIR_DEFAULT);
}

/* reason: why a device failed (DEVICE_LOST, ROLLING_BACK, an incomplete
 * rollback), for listeners that must not show the device's own words.
 * cd: the device the event is about, whose thread may be raising it while
 * devices are driven side by side (then it is queued: drive.c). */
static void vemit(struct ctl *c, const struct ctl_device *cd, enum ctl_event_kind kind,
		  const char *device, enum ofc_reason reason, const char *fmt, va_list ap)
{
	char msg[640];

	if (!c->opts.on_event)
		return;
	msg[0] = 0;
	if (fmt)
		vsnprintf(msg, sizeof(msg), fmt, ap);
	struct ctl_event ev = {
	    .kind = kind, .txn = c->txn, .device = device, .message = msg, .reason = reason};
	if (!cd || !ctl_queue_event(c, cd, &ev))
		c->opts.on_event(c->opts.ctx, &ev);
}

static void emit(struct ctl *c, enum ctl_event_kind kind, const char *device,
		 enum ofc_reason reason, const char *fmt, ...) OFC_PRINTF(5, 6);
static void emit(struct ctl *c, enum ctl_event_kind kind, const char *device,
		 enum ofc_reason reason, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vemit(c, NULL, kind, device, reason, fmt, ap);
	va_end(ap);
}

static void emit_dev(struct ctl *c, const struct ctl_device *cd, enum ctl_event_kind kind,
		     enum ofc_reason reason, const char *fmt, ...) OFC_PRINTF(5, 6);
static void emit_dev(struct ctl *c, const struct ctl_device *cd, enum ctl_event_kind kind,
		     enum ofc_reason reason, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vemit(c, cd, kind, cd->cfg.name, reason, fmt, ap);
	va_end(ap);
}

static int mkdir_p(const char *dir, struct ofc_error *err)
{
	char *p = xstrdup(dir);
	int rc = 0;

	for (char *s = p + 1;; s++) {
		if (*s == '/' || !*s) {
			char keep = *s;

			*s = 0;
			if (mkdir(p, 0755) != 0 && errno != EEXIST) {
				rc = ofc_error_at(err, OFC_E_RUNTIME, p, 0, 0,
						  "cannot create the state directory: %s",
						  strerror(errno));
				break;
			}
			*s = keep;
			if (!keep)
				break;
		}
	}
	free(p);
	return rc;
}

/* ---- devices of a fabric ------------------------------------------------------ */

static const char *override_for(const struct ctl_opts *o, const char *name)
{
	size_t n = strlen(name);

	for (uint32_t i = 0; i < o->noverrides; i++)
		if (strncmp(o->overrides[i], name, n) == 0 && o->overrides[i][n] == '=')
			return o->overrides[i] + n + 1;
	return NULL;
}

static int check_overrides(const struct fabric *f, const struct ctl_opts *o, struct ofc_error *err)
{
	for (uint32_t i = 0; i < o->noverrides; i++) {
		const char *eq = strchr(o->overrides[i], '=');
		const char *colon;
		bool found = false;
		uint32_t port;

		if (!eq || eq == o->overrides[i])
			return ofc_error_set(err, OFC_E_USAGE,
					     "--device '%s': expected NAME=HOST:PORT",
					     o->overrides[i]);
		/* unix:/PATH: a NETCONF server's Unix socket */
		bool unix_path = strncmp(eq + 1, "unix:/", 6) == 0;

		colon = strrchr(eq, ':');
		if (!unix_path && (!colon || colon == eq + 1 || parse_u32(colon + 1, &port) < 0 ||
				   port < 1 || port > 65535))
			return ofc_error_set(
			    err, OFC_E_USAGE,
			    "--device '%s': expected NAME=HOST:PORT with a port in "
			    "1..65535",
			    o->overrides[i]);
		for (uint32_t s = 0; s < f->nswitches; s++)
			found |= strlen(f->switches[s].name) == (size_t)(eq - o->overrides[i]) &&
				 strncmp(f->switches[s].name, o->overrides[i],
					 (size_t)(eq - o->overrides[i])) == 0;
		for (uint32_t r = 0; r < f->nrings; r++)
			found |= strlen(f->rings[r].name) == (size_t)(eq - o->overrides[i]) &&
				 strncmp(f->rings[r].name, o->overrides[i],
					 (size_t)(eq - o->overrides[i])) == 0;
		if (!found)
			return ofc_error_set(
			    err, OFC_E_USAGE,
			    "--device '%.*s': %s has no switch or ring of that name",
			    (int)(eq - o->overrides[i]), o->overrides[i], f->file);
	}
	return 0;
}

static struct ctl_device *add_device(struct ctl *c, const struct driver_cfg *d, const char *name,
				     enum dev_class cls)
{
	struct ctl_device *cd;

	c->devs = xreallocarray(c->devs, c->ndevs + 1, sizeof(*c->devs));
	cd = &c->devs[c->ndevs++];
	memset(cd, 0, sizeof(*cd));
	cd->cfg = (struct device_cfg){
	    .name = name,
	    .driver = d ? d->type : "netlink",
	    .dialect = d && strcmp(d->type, "tl1") == 0 ? tl1_dialect_name(d->dialect) : NULL,
	    .port_map = d ? d->port_map : TL1_PORT_MAP_DEFAULT,
	    .address = d ? d->address : NULL,
	    .credentials = d ? d->credentials_path : NULL,
	    .known_hosts = d ? d->known_hosts_path : NULL,
	    .tls = d && d->transport == NETCONF_TLS,
	    .tls_ca = d ? d->tls_ca_path : NULL,
	    .tls_server_name = d ? d->tls_server_name : NULL,
	    .datastore = !d					? NULL
			 : d->datastore == NETCONF_DS_CANDIDATE ? "candidate"
			 : d->datastore == NETCONF_DS_RUNNING	? "running"
								: NULL,
	    .min_power = d ? d->min_power : 0,
	    .min_power_set = d && d->min_power_set,
	    .credentials_dir = c->opts.credentials_dir,
	    .timeout = d ? d->timeout : 5,
	    .retries = d ? d->retries : 0,
	    .cls = cls,
	    .state_dir = c->state_dir,
	    .fence = c->opts.fence,
	    .fence_ctx = c->opts.fence_ctx,
	    .news = c->opts.on_news,
	    .news_ctx = c->opts.ctx,
	};
	if (d && override_for(&c->opts, name))
		cd->cfg.address = override_for(&c->opts, name);
	if (c->opts.sim_lookup && d && strcmp(d->type, "sim") == 0)
		cd->cfg.sim = c->opts.sim_lookup(c->opts.ctx, name);
	state_init(&cd->target, cls);
	state_init(&cd->actual, cls);
	return cd;
}

/* The cross-connects switch s holds when the fabric is at its target. */
void ctl_switch_target(const struct fabric *f, uint32_t s, struct device_state *target)
{
	state_clear(target);
	for (uint32_t k = 0; k < f->ncircuits; k++)
		if (f->circuits[k].sw == s)
			state_add_xconn(target, f->circuits[k].in_port, f->circuits[k].out_port);
	state_sort(target);
}

/* The testbed's circuits and routes at the fabric's target. */
void ctl_hosts_target(const struct fabric *f, const char *state_dir, struct device_state *target)
{
	struct hlink *links = xcalloc(f->ncircuits + 1, sizeof(*links));

	state_clear(target);
	for (uint32_t k = 0; k < f->ncircuits; k++)
		links[k] = (struct hlink){f->circuits[k].src_host, f->circuits[k].src_port,
					  f->circuits[k].dst_host, f->circuits[k].dst_port};
	testbed_target(f, links, f->ncircuits, target);
	/* fibres crossed on the testbed stay crossed whatever is committed */
	testbed_miswired_apply(state_dir, f->name, target);
	free(links);
}

/* Every switch's and the testbed's target again from the fabric's circuits
 * (after they changed: a relabelling, a chosen alternative), and the plan. */
void ctl_retarget(struct ctl *c)
{
	const struct fabric *f = c->fabric;

	for (uint32_t i = 0; i < c->ndevs; i++) {
		struct ctl_device *cd = &c->devs[i];

		if (cd->cfg.cls == DEV_SWITCH)
			ctl_switch_target(f, (uint32_t)fabric_find_switch(f, cd->cfg.name),
					  &cd->target);
		else if (cd->cfg.cls == DEV_HOSTS)
			ctl_hosts_target(f, c->state_dir, &cd->target);
	}
	ctl_diff(c);
}

void ctl_fabric_target(const struct ctl *c, uint32_t i, struct device_state *out)
{
	const struct ctl_device *cd = &c->devs[i];
	const struct fabric *f = c->fabric;

	state_init(out, cd->cfg.cls);
	if (cd->cfg.cls == DEV_SWITCH) {
		ctl_switch_target(f, (uint32_t)fabric_find_switch(f, cd->cfg.name), out);
	} else if (cd->cfg.cls == DEV_HOSTS) {
		ctl_hosts_target(f, c->state_dir, out);
	} else {
		for (uint32_t r = 0; r < f->nrings; r++)
			if (strcmp(f->rings[r].name, cd->cfg.name) == 0)
				ring_target(f, r, out);
	}
}

int ctl_open(struct fabric *f, const struct ctl_opts *o, struct ctl **out, struct ofc_error *err)
{
	struct ctl *c;

	*out = NULL;
	if (check_overrides(f, o, err) < 0)
		return -1;
	c = xcalloc(1, sizeof(*c));
	c->fabric = f;
	c->opts = *o;
	c->opts.principal = NULL; /* (c->principal is the copy) */
	c->principal = o->principal ? xstrdup(o->principal) : NULL;
	c->lock_fd = -1;
	c->state_dir = ctl_state_dir(o->state_dir);
	c->store = o->store;
	if (!c->store) {
		c->store = store_open_files(c->state_dir);
		c->own_store = true;
	}
	if (!o->no_mkdir && mkdir_p(c->state_dir, err) < 0) {
		ctl_close(c);
		return -1;
	}
	for (uint32_t s = 0; s < f->nswitches; s++) {
		const struct fswitch *sw = &f->switches[s];
		struct ctl_device *cd;

		if (!sw->driver.present)
			continue;
		cd = add_device(c, &sw->driver, sw->name, DEV_SWITCH);
		cd->cfg.ports = sw->ports;
		cd->cfg.move_time = sw->kind == SWITCH_PATCH_PANEL ? sw->move_time : 0;
		cd->op_seconds = sw->kind == SWITCH_PATCH_PANEL ? sw->move_time : sw->reconfig_time;
		cd->sw = sw;
		ctl_switch_target(f, s, &cd->target);
	}
	for (uint32_t r = 0; r < f->nrings; r++) {
		const struct ring *ring = &f->rings[r];
		struct ctl_device *cd;

		if (!ring->driver.present)
			continue;
		cd = add_device(c, &ring->driver, ring->name, DEV_RING);
		cd->cfg.ring_nodes = ring->nmembers;
		cd->cfg.interfaces = ring->interfaces;
		cd->cfg.wavelengths = ring->wavelengths;
		cd->cfg.mrrs = ring->mrrs;
		cd->cfg.mrr_delay = ring->mrr_delay;
		cd->op_seconds = ring->mrr_delay;
		ring_target(f, r, &cd->target);
	}
	if (!o->no_testbed && testbed_is_up(c->state_dir, f->name)) {
		struct ctl_device *cd;
		uint32_t maxp = 1;
		c->netns = xcalloc(f->nhosts + 1, sizeof(char *));
		for (uint32_t h = 0; h < f->nhosts; h++) {
			c->netns[h] = testbed_netns_name(f, h);
			maxp = f->hosts[h].ports > maxp ? f->hosts[h].ports : maxp;
		}
		cd = add_device(c, NULL, "testbed", DEV_HOSTS);
		cd->cfg.netns = (const char *const *)c->netns;
		cd->cfg.nhosts = f->nhosts;
		cd->cfg.host_ports = maxp;
		struct testbed_links rec;

		testbed_links_recorded(c->state_dir, f->name, &rec);
		cd->cfg.link_rate = rec.rate;
		cd->cfg.link_latency = rec.latency;
		ctl_hosts_target(f, c->state_dir, &cd->target);
	}
	for (uint32_t i = 0; i < c->ndevs; i++)
		if (device_init(&c->devs[i].dev, &c->devs[i].cfg, err) < 0) {
			ctl_close(c);
			return -1;
		}
	*out = c;
	return 0;
}

void ctl_close(struct ctl *c)
{
	if (!c)
		return;
	for (uint32_t i = 0; i < c->ndevs; i++) {
		device_close(&c->devs[i].dev);
		state_free(&c->devs[i].target);
		state_free(&c->devs[i].actual);
		batch_free(&c->devs[i].plan);
	}
	free(c->devs);
	if (c->netns)
		for (uint32_t h = 0; h < c->fabric->nhosts; h++)
			free(c->netns[h]);
	free(c->netns);
	ctl_unlock(c);
	if (c->own_store)
		store_close(c->store);
	free(c->state_dir);
	txn_meta_free(&c->prev);
	free(c->principal);
	free(c);
}

static bool same_str(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

/* a and b are one device reached one way: what a read of one found holds
 * for the other. */
static bool same_device(const struct device_cfg *a, const struct device_cfg *b)
{
	return strcmp(a->name, b->name) == 0 && a->cls == b->cls && a->sim == b->sim &&
	       same_str(a->driver, b->driver) && same_str(a->dialect, b->dialect) &&
	       memcmp(&a->port_map, &b->port_map, sizeof(a->port_map)) == 0 &&
	       same_str(a->address, b->address) && same_str(a->credentials, b->credentials) &&
	       same_str(a->credentials_dir, b->credentials_dir);
}

void ctl_handover(struct ctl *from, struct ctl *to)
{
	ctl_unlock(to);
	to->lock_fd = from->lock_fd;
	from->lock_fd = -1;
	for (uint32_t i = 0; i < to->ndevs; i++)
		for (uint32_t k = 0; k < from->ndevs; k++)
			if (same_device(&to->devs[i].cfg, &from->devs[k].cfg))
				to->devs[i].lost = from->devs[k].lost;
}

void ctl_quiet(struct ctl *c, const struct ctl *running)
{
	for (uint32_t i = 0; i < c->ndevs; i++) {
		bool same = false;

		for (uint32_t k = 0; running && k < running->ndevs && !same; k++)
			same = same_device(&c->devs[i].cfg, &running->devs[k].cfg);
		c->devs[i].quiet = running && !same;
	}
}

/* ---- reading and planning ---------------------------------------------------- */

static int read_device(struct ctl *c, struct ctl_device *cd, struct ofc_error *err)
{
	struct device_state s;

	/* The driver reconnects and retries on its own; a read that still
	 * fails leaves the device closed, so the next use starts afresh. */
	if (device_read(&cd->dev, &s, err) < 0) {
		device_close(&cd->dev);
		cd->read_ok = false;
		cd->read_err = *err;
		if (!cd->lost && !cd->quiet)
			emit_dev(c, cd, CTL_EV_DEVICE_LOST, err->reason, "%s", err->msg);
		cd->lost = true;
		return -1;
	}
	if (cd->lost && !cd->quiet)
		emit_dev(c, cd, CTL_EV_DEVICE_BACK, OFC_R_NONE, NULL);
	cd->lost = false;
	state_free(&cd->actual);
	cd->actual = s;
	cd->read_ok = true;
	return 0;
}

/* Each device's outcome of a drive side by side (ctl_each): rc[i] and
 * err[i] are device i's, written by its thread alone. */
struct dev_results {
	int *rc;
	struct ofc_error *err;
};

static void dev_results_init(struct dev_results *o, const struct ctl *c)
{
	o->rc = xcalloc(c->ndevs + 1, sizeof(*o->rc));
	o->err = xcalloc(c->ndevs + 1, sizeof(*o->err));
}

/* The first device (in order) that failed, its error in *err; -1: none. */
static int dev_results_first(const struct dev_results *o, const struct ctl *c,
			     struct ofc_error *err)
{
	for (uint32_t i = 0; i < c->ndevs; i++)
		if (o->rc[i] < 0) {
			*err = o->err[i];
			return (int)i;
		}
	return -1;
}

static void dev_results_free(struct dev_results *o)
{
	free(o->rc);
	free(o->err);
}

static void read_one(struct ctl *c, uint32_t i, void *arg)
{
	struct dev_results *o = arg;

	o->rc[i] = read_device(c, &c->devs[i], &o->err[i]);
}

int ctl_read(struct ctl *c, struct ofc_error *err)
{
	struct dev_results o;
	int failed;

	dev_results_init(&o, c);
	ctl_each(c, read_one, &o);
	failed = dev_results_first(&o, c, err);
	dev_results_free(&o);
	return failed < 0 ? 0 : -1;
}

int ctl_plan(struct ctl *c, struct ofc_error *err)
{
	struct ctl_record r;

	/* A damaged record or journal stops the plan with the way out, before
	 * any device is read: what would be applied next would overwrite it. */
	if (ctl_load_record_for(c, &r, err) < 0)
		return -1;
	ctl_record_free(&r);
	if (ctl_read(c, err) < 0)
		return -1;
	ctl_diff(c);
	return 0;
}

double ctl_ops_seconds(const struct ctl_device *cd, const struct op_batch *b)
{
	if (cd->sw && cd->sw->kind != SWITCH_PATCH_PANEL) /* an OCS: all at once */
		return b->n ? cd->op_seconds : 0;
	return b->n * cd->op_seconds;
}

void ctl_diff(struct ctl *c)
{
	for (uint32_t i = 0; i < c->ndevs; i++) {
		struct ctl_device *cd = &c->devs[i];

		batch_free(&cd->plan);
		state_diff(&cd->actual, &cd->target, &cd->plan);
		cd->est_seconds = ctl_ops_seconds(cd, &cd->plan);
	}
}

uint32_t ctl_plan_size(const struct ctl *c)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < c->ndevs; i++)
		n += c->devs[i].plan.n;
	return n;
}

/* ---- applying and undoing ------------------------------------------------------ */

static void mismatch(const struct device_state *want, const struct device_state *got,
		     struct ofc_error *err)
{
	struct op_batch d = {0};
	char what[128] = "";

	state_diff(want, got, &d);
	if (d.n)
		op_describe(&d.ops[0], what, sizeof(what));
	ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_MISMATCH,
		       "read-back does not match: the device differs in %u entr%s (first: "
		       "it would take '%s' to match what it reports)",
		       d.n, d.n == 1 ? "y" : "ies", what);
	batch_free(&d);
}

/* Bring one device to `want`: read, diff, apply, read back, compare. */
static int converge(struct ctl *c, struct ctl_device *cd, const struct device_state *want,
		    uint32_t *applied, struct ofc_error *err)
{
	struct op_batch ops = {0};
	uint32_t done = 0;
	int rc;

	if (read_device(c, cd, err) < 0)
		return -1;
	state_diff(&cd->actual, want, &ops);
	rc = device_apply(&cd->dev, &ops, &done, err);
	if (applied)
		*applied += done;
	batch_free(&ops);
	if (rc < 0) {
		device_close(&cd->dev);
		return -1;
	}
	if (read_device(c, cd, err) < 0)
		return -1;
	if (!state_equal(&cd->actual, want)) {
		mismatch(want, &cd->actual, err);
		ofc_error_prefix(err, "%s", cd->cfg.name);
		return -1;
	}
	return 0;
}

struct undo_arg {
	struct dev_results o;
	const struct device_state *before;
	bool *pending;
};

static void undo_one(struct ctl *c, uint32_t i, void *arg)
{
	struct undo_arg *u = arg;

	if (!u->pending[i])
		return;
	u->o.err[i] = (struct ofc_error){0};
	u->o.rc[i] = converge(c, &c->devs[i], &u->before[i], NULL, &u->o.err[i]);
	u->pending[i] = u->o.rc[i] < 0;
}

/* Undo devices 0..last back to before[], side by side; a device that
 * fails is tried once more after the others. Returns 0 when every device
 * verified, else -1 with the last such device's error (as when they were
 * undone from the last one down). */
static int undo(struct ctl *c, int last, const struct device_state *before, struct ofc_error *err)
{
	struct undo_arg u = {.before = before, .pending = xcalloc(c->ndevs + 1, 1)};
	int rc = 0;

	dev_results_init(&u.o, c);
	for (int i = 0; i <= last && i < (int)c->ndevs; i++)
		u.pending[i] = true;
	for (int round = 0; round < 2; round++) {
		ctl_each(c, undo_one, &u);
		rc = 0;
		for (int i = last; i >= 0 && rc == 0; i--)
			if (u.pending[i]) {
				*err = u.o.err[i];
				rc = -1;
			}
		if (rc == 0)
			break;
	}
	dev_results_free(&u.o);
	free(u.pending);
	return rc;
}

/* The next transaction's id, after every id the store shows used: the
 * record's generation and last_transaction (a rolled-back id, which the
 * generation does not keep), and any journal's. The store is the only
 * memory of ids, so they stay unique across processes, replicas and
 * failovers: a journal is written (the intent, before any device is
 * touched) under the new id before anything else happens under it, and
 * its removal writes the record that keeps the id, in one write of the
 * store. A leader's writes compare its epoch, and a new leader reads the
 * whole store in the transaction that elects it, so it sees every id its
 * predecessors wrote. A record or journal that cannot be read is an
 * error: going on restarted the ids at 1 and overwrote the record. */
static int next_txn_id(struct ctl *c, uint64_t *id, struct ofc_error *err)
{
	struct ctl_record r;

	*id = 1;
	c->prev_generation = 0;
	c->last_txn = 0;
	txn_meta_free(&c->prev);
	if (ctl_load_record_for(c, &r, err) < 0)
		return -1;
	if (r.have_state) {
		c->last_txn = r.last_txn > r.generation ? r.last_txn : r.generation;
		c->prev_generation = r.generation;
		txn_meta_copy(&c->prev, &(struct txn_meta){.topology = r.topology,
							   .config = r.config,
							   .partition = r.partition,
							   .fabric_topology = r.fabric_topology,
							   .relabelled = r.relabelled,
							   .moves = r.moves,
							   .nmoves = r.nmoves,
							   .moves_known = r.moves_known,
							   .principal = r.principal});
	}
	if (r.have_journal && r.journal_id > c->last_txn)
		c->last_txn = r.journal_id;
	*id = c->last_txn + 1;
	ctl_record_free(&r);
	return 0;
}

static void journal_from_ctl(struct ctl *c, struct journal *j, const struct device_state *before)
{
	const struct fabric *f = c->fabric;

	memset(j, 0, sizeof(*j));
	j->id = c->txn;
	j->version = STATE_VERSION;
	j->started_ms = unix_ms();
	/* What the commit will record, from this transaction's fabric: a
	 * repair after a crash records it whatever config the repairing
	 * command has (it used to record its own config's topology). */
	txn_meta_copy(
	    &j->meta,
	    &(struct txn_meta){
		.topology = c->partition ? c->partition->topology.spec : f->topology.spec,
		.config = f->file,
		.partition = c->partition ? c->partition->name : NULL,
		/* the fabric's stays what it is under a partition's */
		.fabric_topology = f->topology.present && f->topology.spec ? f->topology.spec : "",
		.relabelled = c->relabelled,
		.moves = f->moves,
		.nmoves = f->nmoves,
		.moves_known = true,
		.principal = c->principal,
	    });
	/* (in the journal, so that a repair without the callback writes it) */
	if (c->commit_also)
		c->commit_also(c->commit_also_ctx, c, &j->also);
	j->ndevs = c->ndevs;
	j->names = xcalloc(c->ndevs + 1, sizeof(char *));
	j->drivers = xcalloc(c->ndevs + 1, sizeof(char *));
	j->before = xcalloc(c->ndevs + 1, sizeof(struct device_state));
	j->target = xcalloc(c->ndevs + 1, sizeof(struct device_state));
	for (uint32_t i = 0; i < c->ndevs; i++) {
		j->names[i] = xstrdup(c->devs[i].cfg.name);
		j->drivers[i] = xstrdup(c->devs[i].cfg.driver);
		state_copy(&j->before[i], &before[i]);
		state_copy(&j->target[i], &c->devs[i].target);
	}
}

static int set_phase(struct ctl *c, struct journal *j, enum journal_phase p, struct ofc_error *err)
{
	j->phase = p;
	return journal_write(c, j, err);
}

/* Undo everything from device `last` down and settle the records. */
static void roll_back(struct ctl *c, struct journal *j, int last, struct ctl_result *res)
{
	struct ofc_error e = {0};

	set_phase(c, j, JOURNAL_ROLLING_BACK, &e);
	res->rolled_back = true;
	if (undo(c, last, j->before, &e) == 0) {
		res->rollback_ok = true;
		/* The devices are verified at their old state: record it. */
		/* ... under the topology they realise again, not the one
		 * this transaction was for. */
		record_commit(c, c->prev_generation, j->before, &c->prev, NULL, &e);
		emit(c, CTL_EV_TXN_ROLLED_BACK, NULL, OFC_R_NONE,
		     "every device verified at its previous state");
	} else {
		res->rollback_ok = false;
		emit(c, CTL_EV_TXN_ROLLED_BACK, NULL, e.reason ? e.reason : OFC_R_LOST,
		     "rollback incomplete: %s; the journal is kept and the next command that "
		     "touches the fabric retries it",
		     e.msg);
	}
}

/* Record what the journal's transaction applied: its target states and
 * its meta, never the committing ctl's (a repair runs with whatever config
 * the next command has). */
static int commit(struct ctl *c, struct journal *j, struct ofc_error *err)
{
	if (j->version < STATE_VERSION) {
		char *path = store_where(c->store, c->fabric->name, STORE_JOURNAL);
		char *mv = store_aside(c->store, c->fabric->name, STORE_JOURNAL, ".old");
		int rc = ofc_error_at(
		    err, OFC_E_RUNTIME, path, 0, 0,
		    "unfinished transaction %llu: every device holds its target, but the "
		    "journal was written by an older ofc and does not say all the record "
		    "needs (topology, partition, relabelling, moved ports); nothing was "
		    "recorded. Check what the devices hold (ofc status), then move it aside: "
		    "%s",
		    (unsigned long long)j->id, mv);

		free(path);
		free(mv);
		return rc;
	}
	int rc = set_phase(c, j, JOURNAL_COMMITTING, err);

	/* (the journal's: the same whether this transaction's own command
	 * commits it or a repair does) */
	if (rc == 0)
		rc = record_commit(c, c->txn, j->target, &j->meta, &j->also, err);
	if (rc < 0)
		return -1;
	emit(c, CTL_EV_TXN_COMMITTED, NULL, OFC_R_NONE, NULL);
	return 0;
}

/* ---- the devices' own locks and trials -------------------------------------------------- */

static void unlock_one(struct ctl *c, uint32_t i, void *arg)
{
	struct ofc_error e = {0};

	(void)arg;
	if (!c->devs[i].locked)
		return;
	c->devs[i].locked = false;
	if (device_unlock(&c->devs[i].dev, &e) < 0)
		device_close(&c->devs[i].dev);
}

/* Release the devices' own locks. A release that fails is let go: the
 * device drops the lock with the session anyway, and the transaction's
 * outcome is settled by then. */
static void unlock_devices(struct ctl *c)
{
	bool any = false;

	for (uint32_t i = 0; i < c->ndevs; i++)
		any |= c->devs[i].locked;
	if (any)
		ctl_each(c, unlock_one, NULL);
}

/* Take the own lock of a device that has one and will change, and read
 * it again once held. */
static void lock_one(struct ctl *c, uint32_t i, void *arg)
{
	struct dev_results *o = arg;
	struct ctl_device *cd = &c->devs[i];
	bool held = false;

	if (cd->plan.n == 0)
		return;
	o->rc[i] = device_lock(&cd->dev, &held, &o->err[i]);
	cd->locked = o->rc[i] == 0 && held;
	if (cd->locked)
		o->rc[i] = read_device(c, cd, &o->err[i]);
}

/* Take the own lock of every device that has one and will change (a
 * NETCONF <lock>: no other manager changes it until the transaction ends),
 * then read those devices again: what they hold now is what the journal
 * records as before, and the plan starts from it. Nothing is changed on
 * failure (the locks taken are released). */
static int lock_devices(struct ctl *c, struct ofc_error *err)
{
	struct dev_results o;
	bool any = false;
	int failed;

	dev_results_init(&o, c);
	ctl_each(c, lock_one, &o);
	failed = dev_results_first(&o, c, err);
	dev_results_free(&o);
	if (failed >= 0) {
		unlock_devices(c);
		return -1;
	}
	for (uint32_t i = 0; i < c->ndevs; i++)
		any |= c->devs[i].locked;
	if (any)
		ctl_diff(c);
	return 0;
}

/* How long a device keeps a trial by itself (its confirmed commit): the
 * trial's time left, and the time ofc needs after it to undo the trial on
 * its own (a read, an edit and a read-back, each within the device's
 * timeout, and some slack). If ofc dies, the device reverts then (or at
 * once, when the session ends: RFC 6241 8.4.1). */
static double trial_seconds(const struct ctl_device *cd, double trial_deadline)
{
	double left = trial_deadline - (double)unix_ms() / 1000;

	return (left > 0 ? left : 0) + 3 * cd->cfg.timeout + 5;
}

/* A transaction's drive, device by device (ctl_each). */
struct drive {
	double trial_deadline;
	struct dev_results o;
	uint32_t *done; /* per device: operations that took effect for certain */
};

/* Apply device i's plan, read it back and compare. */
static void apply_one(struct ctl *c, uint32_t i, void *arg)
{
	struct drive *dr = arg;
	struct ctl_device *cd = &c->devs[i];
	struct ofc_error *err = &dr->o.err[i];

	if (cd->plan.n == 0)
		return;
	cd->dev.trial_seconds = dr->trial_deadline > 0 ? trial_seconds(cd, dr->trial_deadline) : 0;
	int arc = device_apply(&cd->dev, &cd->plan, &dr->done[i], err);
	cd->dev.trial_seconds = 0; /* undoing is never a trial */
	if (arc < 0 || read_device(c, cd, err) < 0) {
		dr->o.rc[i] = -1;
	} else if (!state_equal(&cd->actual, &cd->target)) {
		mismatch(&cd->target, &cd->actual, err);
		ofc_error_prefix(err, "%s", cd->cfg.name);
		dr->o.rc[i] = -1;
	} else {
		emit_dev(c, cd, CTL_EV_DEVICE_APPLIED, OFC_R_NONE, "%u operation%s, verified",
			 dr->done[i], dr->done[i] == 1 ? "" : "s");
	}
}

int ctl_apply(struct ctl *c, double trial_deadline, struct ctl_result *res, struct ofc_error *err)
{
	struct device_state *before = xcalloc(c->ndevs + 1, sizeof(*before));
	double t0 = now_seconds();
	struct journal j;
	int failed = -1, rc = -1;

	memset(res, 0, sizeof(*res));
	if (ctl_lock(c, err) < 0) {
		free(before);
		return -1;
	}
	if (next_txn_id(c, &c->txn, err) < 0 || lock_devices(c, err) < 0) {
		free(before);
		return -1;
	}
	res->txn = c->txn;
	for (uint32_t i = 0; i < c->ndevs; i++)
		state_copy(&before[i], &c->devs[i].actual);
	journal_from_ctl(c, &j, before);
	/* The intent is on disk (fsynced) before any device is touched. */
	if (set_phase(c, &j, JOURNAL_APPLYING, err) < 0)
		goto out;
	emit(c, CTL_EV_TXN_STARTED, NULL, OFC_R_NONE, "%u operation%s on %u device%s",
	     ctl_plan_size(c), ctl_plan_size(c) == 1 ? "" : "s", c->ndevs,
	     c->ndevs == 1 ? "" : "s");
	struct drive dr = {.trial_deadline = trial_deadline,
			   .done = xcalloc(c->ndevs + 1, sizeof(*dr.done))};
	dev_results_init(&dr.o, c);
	ctl_each(c, apply_one, &dr);
	failed = dev_results_first(&dr.o, c, err);
	for (uint32_t i = 0; i < c->ndevs; i++) {
		res->ops_applied += dr.done[i];
		/* A fenced device stops the whole transaction as it is. */
		if (dr.o.rc[i] < 0 && dr.o.err[i].reason == OFC_R_FENCED) {
			failed = (int)i;
			*err = dr.o.err[i];
			break;
		}
	}
	free(dr.done);
	dev_results_free(&dr.o);
	if (failed >= 0 && err->reason == OFC_R_FENCED) {
		/* This daemon may not drive the devices any more:
		 * the next leader repairs the transaction from its journal,
		 * old or new; undoing it here would be driving them. */
		snprintf(res->failed_device, sizeof(res->failed_device), "%s",
			 c->devs[failed].cfg.name);
		ofc_error_prefix(err,
				 "transaction %llu stopped, nothing undone (the leader repairs it "
				 "from the journal)",
				 (unsigned long long)c->txn);
		goto out;
	}
	if (failed >= 0) {
		snprintf(res->failed_device, sizeof(res->failed_device), "%s",
			 c->devs[failed].cfg.name);
		emit(c, CTL_EV_TXN_ROLLING_BACK, c->devs[failed].cfg.name, err->reason, "%s",
		     err->msg);
		/* every device was driven, so every one goes back */
		roll_back(c, &j, (int)c->ndevs - 1, res);
		goto out;
	}
	if (trial_deadline > 0) {
		j.trial_deadline = trial_deadline;
		if (set_phase(c, &j, JOURNAL_TRIAL, err) < 0)
			goto out;
		emit(c, CTL_EV_TRIAL_STARTED, NULL, OFC_R_NONE, NULL);
		rc = 0;
		goto out;
	}
	rc = commit(c, &j, err);
out:
	/* A trial keeps the locks until ctl_trial_finish. */
	if (rc < 0 || trial_deadline <= 0)
		unlock_devices(c);
	res->seconds = now_seconds() - t0;
	journal_free(&j);
	for (uint32_t i = 0; i < c->ndevs; i++)
		state_free(&before[i]);
	free(before);
	return rc;
}

/* ---- trials ------------------------------------------------------------------------- */

static char *confirm_path(const struct ctl *c)
{
	return ctl_path(c->state_dir, c->fabric->name, "confirm");
}

bool ctl_trial_confirmed(const struct ctl *c)
{
	char *path = confirm_path(c), *data = NULL;
	struct ofc_error e = {0};
	uint64_t id = 0;
	size_t len;
	bool yes = false;

	if (access(path, F_OK) == 0 && read_file(path, 64, &data, &len, &e) == 0) {
		data[strcspn(data, "\n")] = 0;
		yes = parse_u64(data, &id) == 0 && id == c->txn;
	}
	free(data);
	free(path);
	return yes;
}

/* Resolve an open journal j (trial or crash) by committing or undoing it. */
static int settle(struct ctl *c, struct journal *j, bool keep, struct ctl_result *res,
		  struct ofc_error *err)
{
	char *cpath = confirm_path(c);
	int rc;

	if (keep) {
		rc = commit(c, j, err);
	} else {
		roll_back(c, j, (int)c->ndevs - 1, res);
		rc = res->rollback_ok ? 0 : -1;
		if (rc < 0)
			ofc_error_set(err, OFC_E_RUNTIME,
				      "could not restore every device; the journal is kept");
	}
	unlink(cpath);
	free(cpath);
	return rc;
}

int ctl_trial_finish(struct ctl *c, bool confirmed, struct ctl_result *res, struct ofc_error *err)
{
	struct journal j;
	bool missing;
	int rc;

	memset(res, 0, sizeof(*res));
	res->txn = c->txn;
	if (journal_read(c->store, c->fabric->name, &j, &missing, err) < 0)
		return -1;
	if (missing || j.id != c->txn || j.phase != JOURNAL_TRIAL) {
		journal_free(&j);
		unlock_devices(c);
		return ofc_error_set(err, OFC_E_RUNTIME, "no open trial %llu for fabric '%s'",
				     (unsigned long long)c->txn, c->fabric->name);
	}
	/* A device that keeps the trial by itself (a NETCONF confirmed
	 * commit) is told first; one that cannot keep it any more (it
	 * reverted: its session ended, its time ran out) takes the whole
	 * trial back: every device returns to where it was. */
	struct ofc_error lost = {0};
	for (uint32_t i = 0; confirmed && i < c->ndevs; i++)
		if (device_confirm(&c->devs[i].dev, &lost) < 0) {
			emit(c, CTL_EV_TXN_ROLLING_BACK, c->devs[i].cfg.name, lost.reason, "%s",
			     lost.msg);
			confirmed = false;
		}
	rc = settle(c, &j, confirmed, res, err);
	if (rc == 0 && lost.msg[0]) {
		rc = -1;
		*err = lost;
		ofc_error_prefix(err, "the trial was lost and rolled back%s",
				 res->rollback_ok ? " (every device verified)" : "");
	}
	journal_free(&j);
	unlock_devices(c);
	return rc;
}

int ctl_confirm(const char *state_dir, const char *name, char **fabric_out, uint64_t *txn_out,
		struct ofc_error *err)
{
	char **names = NULL, *chosen = NULL;
	uint32_t n = 0, ntrials = 0;
	uint64_t id = 0;
	int rc = 0;

	*fabric_out = NULL;
	if (ctl_list_fabrics(state_dir, &names, &n, err) < 0)
		return -1;
	/* (`ofc confirm` and `ofc try` meet in the state directory: trials
	 * are the command line's, never a daemon's.) */
	struct store *st = store_open_files(state_dir);
	for (uint32_t i = 0; i < n; i++) {
		struct journal j;
		struct ofc_error e = {0};
		bool missing;

		if (name && strcmp(name, names[i]) != 0)
			continue;
		if (journal_read(st, names[i], &j, &missing, &e) == 0 && !missing &&
		    j.phase == JOURNAL_TRIAL) {
			ntrials++;
			free(chosen);
			chosen = xstrdup(names[i]);
			id = j.id;
		}
		if (!missing)
			journal_free(&j);
	}
	store_close(st);
	for (uint32_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	if (ntrials == 0) {
		free(chosen);
		if (name)
			return ofc_error_set(
			    err, OFC_E_RUNTIME,
			    "fabric '%s' has no trial waiting for confirmation in %s", name,
			    state_dir);
		return ofc_error_set(err, OFC_E_RUNTIME,
				     "no trial is waiting for confirmation in %s", state_dir);
	}
	if (ntrials > 1) {
		free(chosen);
		return ofc_error_set(err, OFC_E_USAGE,
				     "several fabrics have trials waiting: name the config");
	}
	char *path = ctl_path(state_dir, chosen, "confirm");
	char buf[32];
	int len = snprintf(buf, sizeof(buf), "%llu\n", (unsigned long long)id);
	rc = atomic_write(path, buf, (size_t)len, err);
	free(path);
	*fabric_out = chosen;
	*txn_out = id;
	return rc;
}

/* ---- recovery ----------------------------------------------------------------------- */

int ctl_recover(struct ctl *c, bool *did, struct ofc_error *err)
{
	struct ctl_result res;
	struct journal j;
	bool missing, at_target = true;
	int rc;

	*did = false;
	if (ctl_lock(c, err) < 0)
		return -1;
	if (journal_read(c->store, c->fabric->name, &j, &missing, err) < 0)
		return -1;
	if (missing)
		return 0;
	*did = true;
	uint64_t ignore;
	if (next_txn_id(c, &ignore, err) < 0) { /* for prev_generation */
		journal_free(&j);
		return -1;
	}
	c->txn = j.id;
	/* The journal's devices must be this config's, in the same order. */
	bool same = j.ndevs == c->ndevs;
	for (uint32_t i = 0; same && i < c->ndevs; i++)
		same = strcmp(j.names[i], c->devs[i].cfg.name) == 0;
	if (!same) {
		rc = ofc_error_set(
		    err, OFC_E_RUNTIME,
		    "unfinished transaction %llu was made with a config whose devices "
		    "differ (%s); run any changing command with that config to "
		    "repair it first",
		    (unsigned long long)j.id, j.meta.config);
		journal_free(&j);
		return rc;
	}
	/* Every value the journal holds must fit its device before a device
	 * is driven to it: egress 4294967042 on a 256-port switch was sent as
	 * port 2. */
	for (uint32_t i = 0; i < c->ndevs; i++) {
		struct ofc_error e = {0};
		bool tgt = false;

		if (state_check(&j.before[i], &c->devs[i].cfg, &e) < 0 ||
		    (tgt = true, state_check(&j.target[i], &c->devs[i].cfg, &e) < 0)) {
			char *path = store_where(c->store, c->fabric->name, STORE_JOURNAL);
			char *mv =
			    store_aside(c->store, c->fabric->name, STORE_JOURNAL, ".corrupt");

			rc = ofc_error_at(
			    err, OFC_E_RUNTIME, path, 0, 0,
			    "unfinished transaction %llu: the %s state of device '%s' "
			    "does not fit the device (%s). Nothing was changed; check "
			    "what the devices hold (ofc status), then move the journal "
			    "aside: %s",
			    (unsigned long long)j.id, tgt ? "target" : "previous",
			    c->devs[i].cfg.name, e.msg, mv);
			free(path);
			free(mv);
			journal_free(&j);
			return rc;
		}
	}
	if (ctl_read(c, err) < 0) {
		ofc_error_prefix(err, "cannot repair unfinished transaction %llu",
				 (unsigned long long)j.id);
		journal_free(&j);
		return -1;
	}
	for (uint32_t i = 0; i < c->ndevs; i++)
		at_target &= state_equal(&c->devs[i].actual, &j.target[i]);
	/* The repair goes the way the journal was going. A rollback is always
	 * finished as a rollback: after "ROLLBACK INCOMPLETE" the devices may
	 * well hold the target (the undo is what failed), and committing it
	 * would reverse what the operator was told. A trial is kept only if it
	 * was confirmed; anything else that already reached its target
	 * everywhere is finished, the rest undone. */
	bool keep = j.phase == JOURNAL_ROLLING_BACK ? false
		    : j.phase == JOURNAL_TRIAL	    ? at_target && ctl_trial_confirmed(c)
						    : at_target;
	memset(&res, 0, sizeof(res));
	enum journal_phase was = j.phase; /* (a rollback rewrites j.phase) */
	rc = settle(c, &j, keep, &res, err);
	if (rc == 0)
		emit(c, CTL_EV_RECOVERED, NULL, OFC_R_NONE, "unfinished transaction %llu (%s) %s",
		     (unsigned long long)j.id, journal_phase_name(was),
		     keep			   ? "finished: every device held its target"
		     : was == JOURNAL_ROLLING_BACK ? "rolled back: devices restored"
						   : "undone: devices restored");
	journal_free(&j);
	return rc;
}

int ctl_list_fabrics(const char *state_dir, char ***names, uint32_t *n, struct ofc_error *err)
{
	DIR *d = opendir(state_dir);
	struct dirent *de;
	size_t cap = 0;

	*names = NULL;
	*n = 0;
	if (!d) {
		if (errno == ENOENT)
			return 0;
		return ofc_error_at(err, OFC_E_RUNTIME, state_dir, 0, 0, "cannot read: %s",
				    strerror(errno));
	}
	while ((de = readdir(d))) {
		const char *dot = strrchr(de->d_name, '.');
		bool dup = false;

		if (!dot || (strcmp(dot, ".state") != 0 && strcmp(dot, ".journal") != 0))
			continue;
		for (uint32_t i = 0; i < *n; i++)
			dup |= strlen((*names)[i]) == (size_t)(dot - de->d_name) &&
			       strncmp((*names)[i], de->d_name, (size_t)(dot - de->d_name)) == 0;
		if (dup)
			continue;
		GROW(*names, cap, (size_t)*n + 1);
		(*names)[(*n)++] = xstrndup(de->d_name, (size_t)(dot - de->d_name));
	}
	closedir(d);
	return 0;
}
