/* What the mutation worker's jobs share: the ctls they open on a fabric
 * (the daemon's store, --device overrides, callbacks and fence), the
 * events those ctls report, turned into notes for the loop, and the running
 * YAML with another topology and the port moves in effect. */
#include "controller/ofcd/worker.h"

#include <stdlib.h>
#include <string.h>

/* A ctl closed, what its devices counted kept first (metrics.c). */
void ofcd_ctl_close(struct ofcd *d, struct ctl *c)
{
	metrics_devices_take(d, c);
	ctl_close(c);
}

/* ---- events from ctl ------------------------------------------------------------ */

/* Events that say how a job ended travel with it, delivered after its
 * snapshot is published; the rest go to the loop at once. */
void ofcd_post_note(struct ofcd *d, struct note *n)
{
	Ofc__V1__Event__Kind kind = n->kind;

	if (d->w->job && (kind == OFC__V1__EVENT__KIND__KIND_TRANSACTION_COMMITTED ||
			  kind == OFC__V1__EVENT__KIND__KIND_TRANSACTION_ROLLED_BACK ||
			  kind == OFC__V1__EVENT__KIND__KIND_CONFIG_APPLIED ||
			  kind == OFC__V1__EVENT__KIND__KIND_RECOVERED ||
			  kind == OFC__V1__EVENT__KIND__KIND_SCHEDULE_REPLANNED)) {
		job_defer(d->w->job, n);
		return;
	}
	ofcd_note(d, n);
}

/* A transaction's own events (not a device's loss or return, nor a
 * repair's): what each member of a batch hears. */
static bool txn_kind(Ofc__V1__Event__Kind kind)
{
	return kind == OFC__V1__EVENT__KIND__KIND_TRANSACTION_STARTED ||
	       kind == OFC__V1__EVENT__KIND__KIND_DEVICE_APPLIED ||
	       kind == OFC__V1__EVENT__KIND__KIND_TRANSACTION_COMMITTED ||
	       kind == OFC__V1__EVENT__KIND__KIND_TRANSACTION_ROLLING_BACK ||
	       kind == OFC__V1__EVENT__KIND__KIND_TRANSACTION_ROLLED_BACK;
}

/* message goes to watchers, detail (NULL: the message) to the log. In a
 * batch's transaction, one event for each member, its ticket and
 * partition (a tenant hears of its own partitions alone, so one event
 * with the first member's ticket told that tenant another's ticket and
 * the others nothing); the log's line once, the first member's (a batch
 * of 28 wrote each line 28 times). */
void ofcd_post_event(struct ofcd *d, Ofc__V1__Event__Kind kind, uint64_t txn, const char *device,
		     const char *message, const char *detail, enum ofc_reason reason)
{
	uint32_t each = txn_kind(kind) ? d->w->ntxn_members : 0;

	for (uint32_t i = 0; i < (each ? each : 1); i++) {
		struct note *n = xcalloc(1, sizeof(*n));

		n->kind = kind;
		n->txn = txn;
		n->device = device ? xstrdup(device) : NULL;
		n->message = xstrdup(message ? message : "");
		n->detail = detail ? xstrdup(detail) : NULL;
		n->reason = reason;
		n->time_ms = unix_ms();
		if (each) {
			const struct job *m = d->w->txn_members[i];

			n->ticket = m->ticket;
			n->partition = m->partition ? xstrdup(m->partition) : NULL;
			n->logged = i > 0;
		}
		ofcd_post_note(d, n);
	}
}

static void on_ctl_event(void *ctx, const struct ctl_event *ev)
{
	static const Ofc__V1__Event__Kind kinds[] = {
	    [CTL_EV_TXN_STARTED] = OFC__V1__EVENT__KIND__KIND_TRANSACTION_STARTED,
	    [CTL_EV_DEVICE_APPLIED] = OFC__V1__EVENT__KIND__KIND_DEVICE_APPLIED,
	    [CTL_EV_TXN_COMMITTED] = OFC__V1__EVENT__KIND__KIND_TRANSACTION_COMMITTED,
	    [CTL_EV_TXN_ROLLING_BACK] = OFC__V1__EVENT__KIND__KIND_TRANSACTION_ROLLING_BACK,
	    [CTL_EV_TXN_ROLLED_BACK] = OFC__V1__EVENT__KIND__KIND_TRANSACTION_ROLLED_BACK,
	    [CTL_EV_DEVICE_LOST] = OFC__V1__EVENT__KIND__KIND_DEVICE_LOST,
	    [CTL_EV_DEVICE_BACK] = OFC__V1__EVENT__KIND__KIND_DEVICE_BACK,
	    [CTL_EV_RECOVERED] = OFC__V1__EVENT__KIND__KIND_RECOVERED,
	};
	struct ofcd *d = ctx;
	char pub[80];

	if ((size_t)ev->kind >= ARRAY_SIZE(kinds) || !kinds[ev->kind])
		return; /* trials are not run by the daemon */
	/* Watchers include anyone on the read-only socket: where a device
	 * failed they get the reason's word, never the device's text (which
	 * may quote what a device sent, or name a credentials file). The log
	 * keeps the text. */
	if (ev->kind == CTL_EV_DEVICE_LOST || ev->kind == CTL_EV_TXN_ROLLING_BACK) {
		ofcd_post_event(d, kinds[ev->kind], ev->txn, ev->device,
				ofcd_public_reason(ev->reason), ev->message, ev->reason);
		return;
	}
	if (ev->kind == CTL_EV_TXN_ROLLED_BACK && ev->reason != OFC_R_NONE) {
		snprintf(pub, sizeof(pub), "rollback incomplete (%s): the journal is kept",
			 ofcd_public_reason(ev->reason));
		ofcd_post_event(d, kinds[ev->kind], ev->txn, ev->device, pub, ev->message,
				ev->reason);
		return;
	}
	/* A replica says which of them ran it, in the log and to watchers. */
	char by[720]; /* (the message is at most 640) */
	if (ofcd_txn_words(d, ev, by, sizeof(by))) {
		ofcd_post_event(d, kinds[ev->kind], ev->txn, ev->device, by, NULL, OFC_R_NONE);
		return;
	}
	ofcd_post_event(d, kinds[ev->kind], ev->txn, ev->device, ev->message, NULL, OFC_R_NONE);
}

/* ---- configs and ctls ------------------------------------------------------------ */

/* The daemon's --device overrides that name a device of f: a new config
 * may drop a device the daemon was started with. */
static uint32_t overrides_for(const struct ofcd *d, const struct fabric *f, const char **out)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < d->o.noverrides; i++) {
		const char *o = d->o.overrides[i], *eq = strchr(o, '=');
		size_t len = eq ? (size_t)(eq - o) : 0;
		bool found = false;

		for (uint32_t s = 0; s < f->nswitches && !found; s++)
			found = strlen(f->switches[s].name) == len &&
				strncmp(f->switches[s].name, o, len) == 0;
		for (uint32_t r = 0; r < f->nrings && !found; r++)
			found = strlen(f->rings[r].name) == len &&
				strncmp(f->rings[r].name, o, len) == 0;
		if (found)
			out[n++] = o;
	}
	return n;
}

static struct sim_device *sim_lookup(void *ctx, const char *device)
{
	struct ofcd *d = ctx;

	return d->o.sim_lookup(d->o.sim_ctx, device);
}

/* An error in ofcd's log, with the file it is about (a state file's path
 * is in err->file: "ofcd: is not a regular file" named none). */
void ofcd_log_error(struct ofcd *d, const char *what, const struct ofc_error *err)
{
	char buf[sizeof(err->file) + sizeof(err->msg) + 32];

	ofcd_log(d, OFCD_LOG_ERR, "%s%s", what, ofc_error_str(err, buf, sizeof(buf)));
}

/* The port moves are over (a new config, or one they do not fit). */
void ofcd_drop_moves(struct ofcd *d)
{
	struct ofc_error err = {0};

	/* (Saved even with none in memory: a .rewired the start-up kept,
	 * not fitting the config, is over too.) */
	if (d->w->nmoves)
		ofcd_log(d, OFCD_LOG_NOTICE,
			 "%u moved host port%s dropped: the config's wiring again", d->w->nmoves,
			 d->w->nmoves == 1 ? "" : "s");
	moves_clear(d);
	if (moves_save(d, &err) < 0)
		ofcd_log_error(d, "", &err);
}

int ofcd_open_ctl(struct ofcd *d, struct fabric *f, bool strict, struct ctl **out,
		  struct ofc_error *err)
{
	const char **ov = xcalloc(d->o.noverrides + 1, sizeof(char *));
	struct ctl_opts co = {
	    .state_dir = d->state_dir,
	    .store = d->store,
	    .credentials_dir = d->cred_dir,
	    .on_event = on_ctl_event,
	    /* a device's notifications wake a probe; without probing
	     * (--probe-interval 0) no device is read unasked, nor subscribed */
	    .on_news = d->o.probe_interval > 0 ? ofcd_device_news : NULL,
	    .ctx = d, /* for both callbacks: sim lookups go on to opts.sim_ctx */
	    .sim_lookup = d->o.sim_lookup ? sim_lookup : NULL,
	    /* the lock names the socket to ask; one systemd handed over has
	     * no path here, and its unit's is the default */
	    .daemon_socket =
		d->o.inherit_fds || !d->o.socket_path ? OFCD_SOCKET_DEFAULT : d->o.socket_path,
	    /* a replica drives devices only while its lease surely holds */
	    .fence = d->clustered ? ofcd_fence : NULL,
	    .fence_ctx = d,
	    .principal = d->w->job ? d->w->job->principal : NULL, /* who asked (the audit) */
	};
	int rc;

	if (strict) {
		co.overrides = d->o.overrides;
		co.noverrides = d->o.noverrides;
	} else {
		co.noverrides = overrides_for(d, f, ov);
		co.overrides = ov;
	}
	rc = ctl_open(f, &co, out, err);
	free(ov);
	return rc;
}

int ofcd_open_next_ctl(struct ofcd *d, struct fabric *f, struct ctl **out, struct ofc_error *err)
{
	if (ofcd_open_ctl(d, f, false, out, err) < 0)
		return -1;
	ctl_handover(d->w->ctl, *out);
	ctl_quiet(*out, d->w->ctl);
	return 0;
}

/* The running YAML with another topology (and the port moves in effect): a
 * new fabric, validated. Errors carry no position (the spec is not in the
 * file): a spec that does not parse names its column in the spec. A spec a
 * client sent reads edge lists only under d->files, and names them by
 * their absolute path from then on (the record, later re-plans). */
int ofcd_fabric_with_topology(const struct ofcd *d, const struct fabcfg *cfg, const char *spec,
			      bool from_client, struct fabric **out, struct ofc_error *err)
{
	const struct topo_files *files = from_client ? &d->files : cfg->f->files;
	struct ofc_error sub = {0};
	struct graph *g;
	struct fabric *f;
	char why[1024];

	*out = NULL;
	if (topo_build_in(spec, files, &g, &sub) < 0)
		return ofc_error_set(err, sub.code == OFC_E_RUNTIME ? OFC_E_RUNTIME : OFC_E_INPUT,
				     "topology %s", topo_spec_error(why, sizeof(why), spec, &sub));
	if (config_parse(cfg->path, cfg->yaml, cfg->yaml_len, &f, err) < 0) {
		graph_free(g);
		return -1;
	}
	f->files = cfg->f->files;
	free(f->dir); /* a config sent without a filename resolves where it did */
	f->dir = xstrdup(cfg->f->dir);
	free(f->topology.spec);
	f->topology.spec = xstrdup(files && strstr(spec, "edges:") ? g->spec : spec);
	graph_free(g);
	f->topology.present = true;
	f->topology.spec_quoted = 0;
	f->topology.auto_picked = false;
	moves_apply(d, f);
	drained_apply(d, f);
	if (fabric_validate(f, err) < 0) {
		fabric_free(f);
		err->file[0] = 0;
		err->line = err->col = 0;
		err->code = OFC_E_INPUT;
		return -1;
	}
	*out = f;
	return 0;
}
