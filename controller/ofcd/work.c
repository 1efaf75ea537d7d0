/* ofcd's workers. The mutation worker owns the running config and its
 * struct ctl, and runs ApplyConfig, Reconfigure, reloads and device probes
 * one at a time, as the loop hands them over; each mutation is the
 * transaction of controller/reconfig/ctl.c on a new validated fabric (a changed
 * topology is a new fabric: the running YAML with another spec). The
 * schedule worker computes GetSchedule answers. Both hand finished jobs
 * back as notes; the loop answers and publishes. */
#include "controller/export/export.h"
#include "controller/ofcd/internal.h"

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

	if (d->w_job && (kind == OFC__V1__EVENT__KIND__KIND_TRANSACTION_COMMITTED ||
			 kind == OFC__V1__EVENT__KIND__KIND_TRANSACTION_ROLLED_BACK ||
			 kind == OFC__V1__EVENT__KIND__KIND_CONFIG_APPLIED ||
			 kind == OFC__V1__EVENT__KIND__KIND_RECOVERED ||
			 kind == OFC__V1__EVENT__KIND__KIND_SCHEDULE_REPLANNED)) {
		job_defer(d->w_job, n);
		return;
	}
	ofcd_note(d, n);
}

/* message goes to watchers, detail (NULL: the message) to the log. */
void ofcd_post_event(struct ofcd *d, Ofc__V1__Event__Kind kind, uint64_t txn, const char *device,
		     const char *message, const char *detail, enum ofc_reason reason)
{
	struct note *n = xcalloc(1, sizeof(*n));

	n->kind = kind;
	n->txn = txn;
	n->device = device ? xstrdup(device) : NULL;
	n->message = xstrdup(message ? message : "");
	n->detail = detail ? xstrdup(detail) : NULL;
	n->reason = reason;
	n->time_ms = unix_ms();
	ofcd_post_note(d, n);
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
	if (d->nw_moves)
		ofcd_log(d, OFCD_LOG_NOTICE,
			 "%u moved host port%s dropped: the config's wiring again", d->nw_moves,
			 d->nw_moves == 1 ? "" : "s");
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
	    .principal = d->w_job ? d->w_job->principal : NULL, /* who asked (the audit) */
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

/* Reconfigure for a workload: the finder's pick for every host of the
 * fabric at the fewest NIC ports any host has, minimising the workload's
 * time under the config's cost model (Zhao et al. Sec. 5.4). */
static int pick_topology(const struct fabric *f, const struct job *j, char *spec, size_t n,
			 struct ofc_error *err)
{
	struct finder_result r;
	uint32_t d = UINT32_MAX;

	if (j->nodes && j->nodes != f->nhosts)
		return ofc_error_set(
		    err, OFC_E_INPUT,
		    "workload of %u nodes: fabric '%s' has %u hosts, and a topology "
		    "spans all of them",
		    j->nodes, f->name, f->nhosts);
	if (j->coll != SCHED_ALLGATHER && j->coll != SCHED_REDUCE_SCATTER &&
	    j->coll != SCHED_ALLREDUCE)
		return ofc_error_set(err, OFC_E_INPUT,
				     "workload: the finder picks topologies for allgather, "
				     "reduce-scatter and allreduce");
	for (uint32_t h = 0; h < f->nhosts; h++)
		d = f->hosts[h].ports < d ? f->hosts[h].ports : d;
	d = d > BFB_MAX_DEGREE ? BFB_MAX_DEGREE : d;
	if (d == 0 || d >= f->nhosts)
		return ofc_error_set(err, OFC_E_INPUT,
				     "workload: %u hosts with %u ports each have no direct-connect "
				     "topology to choose",
				     f->nhosts, d);
	if (finder_run(f->nhosts, d, 0, &r, err) < 0)
		return -1;
	struct sched_cost cost = {
	    .alpha = f->cost.alpha > 0 ? f->cost.alpha : 10e-6,
	    .bandwidth = (f->cost.link_bandwidth > 0 ? f->cost.link_bandwidth : 100e9) * d,
	    .size = j->size,
	};
	size_t p = finder_pick(&r, &j->coll, &cost, 1);
	snprintf(spec, n, "%s", r.front[p].spec);
	finder_free(&r);
	return 0;
}

/* ---- start-up ---------------------------------------------------------------------- */

static bool same_moves(const struct port_move *a, uint32_t na, const struct port_move *b,
		       uint32_t nb)
{
	if (na != nb)
		return false;
	for (uint32_t i = 0; i < na; i++) {
		bool found = false;

		for (uint32_t k = 0; k < nb && !found; k++)
			found = strcmp(a[i].host, b[k].host) == 0 && a[i].from == b[k].from &&
				a[i].to == b[k].to;
		if (!found)
			return false;
	}
	return true;
}

/* The moves the record says the devices' wiring has, over .rewired's: the
 * file is saved after the commit, so a crash between the two (or a repair
 * by the next command) leaves it behind the record; and a commit by `ofc
 * apply` moves nothing. The file is written again to match. */
static void moves_from_record(struct ofcd *d, const struct ctl_record *rec, bool save)
{
	struct ofc_error err = {0};

	if (same_moves(rec->moves, rec->nmoves, d->w_moves, d->nw_moves))
		return;
	if (save)
		ofcd_log(
		    d, OFCD_LOG_NOTICE,
		    "the record of transaction %llu moves %u host port%s onto spares, %s.rewired "
		    "listed %u: the record's are what the devices hold (%s.rewired written again)",
		    (unsigned long long)rec->generation, rec->nmoves, rec->nmoves == 1 ? "" : "s",
		    d->w_cfg->f->name, d->nw_moves, d->w_cfg->f->name);
	moves_clear(d);
	d->w_moves = xcalloc((size_t)rec->nmoves + 1, sizeof(*d->w_moves));
	for (uint32_t i = 0; i < rec->nmoves; i++)
		d->w_moves[d->nw_moves++] = (struct port_move){
		    xstrdup(rec->moves[i].host), rec->moves[i].from, rec->moves[i].to};
	if (save && moves_save(d, &err) < 0)
		ofcd_log_error(d, "", &err);
}

/* A recorded topology that does not parse as a spec is a damaged record
 * (a restart could not rebuild what the devices hold, and serving the
 * config's instead would overwrite the record at the next commit): the
 * start refuses it, a takeover or a sync keeps it out of effect with
 * mutations refused (damaged_item), the error naming the record, where the
 * spec breaks and the mv that sets it aside. A spec that parses but does
 * not fit the config (a config changed while ofcd was down) is the
 * caller's to weigh. Edge lists are left to it too: a file that is gone is
 * not damage in the record. */
static int recorded_spec_damaged(const struct ofcd *d, const char *spec, struct ofc_error *err)
{
	const char *fabric = d->w_cfg->f->name;
	struct ofc_error e = {0};
	struct graph *g;
	char at[32] = "";

	if (strstr(spec, "edges:"))
		return 0;
	if (topo_build(spec, &g, &e) == 0) {
		graph_free(g);
		return 0;
	}
	if (e.col)
		snprintf(at, sizeof(at), "at column %u: ", e.col);
	char *where = store_where(d->store, fabric, STORE_RECORD);
	char *mv = store_aside(d->store, fabric, STORE_RECORD, ".corrupt");
	ofc_error_at(err, OFC_E_RUNTIME, where, 0, 0,
		     "corrupt %s: its topology ('%.40s%s', %zu characters) does not parse: "
		     "%s%.120s. ofcd cannot tell what the devices hold: look at it, then set it "
		     "aside (ofcd then serves the config's topology): %s",
		     store_noun(d->store), spec, strlen(spec) > 40 ? "..." : "", strlen(spec), at,
		     e.msg, mv);
	free(where);
	free(mv);
	return -1;
}

/* A .failed or .rewired in a replicated store that does not parse: what
 * the start refuses, a takeover or a sync logs and keeps out of effect,
 * and mutations are refused while it is there (they would overwrite it). */
static void damaged_item(struct ofcd *d, const struct ofc_error *e)
{
	char buf[sizeof(e->file) + sizeof(e->msg) + 32];

	ofc_error_str(e, buf, sizeof(buf));
	if (!d->w_damaged)
		d->w_damaged = xstrdup(buf);
	ofcd_log(d, OFCD_LOG_ERR, "%s (mutations are refused until it is fixed)", buf);
}

/* The running config from what the store holds, on top of d->w_cfg (the
 * config as read): the record's topology and moved ports (over .rewired's,
 * which a leader writes again to match), the failures in effect; and its
 * snapshot. strict (the start): a damaged .failed or .rewired stops it
 * (-1); else it is left out of effect (damaged_item). leader: it may
 * write the store. */
int ofcd_adopt(struct ofcd *d, bool strict, bool leader, struct snapshot **snap,
	       struct ofc_error *err)
{
	struct fabric *f = d->w_cfg->f;
	struct ofc_error e = {0};
	char why[400];

	/* Circuits moved off lost ports before a restart are still moved. */
	if (moves_load(d, f->name, &e) < 0) {
		if (strict) {
			*err = e;
			return -1;
		}
		damaged_item(d, &e);
	}
	/* Serve what the devices hold: a Reconfigure before a restart left a
	 * topology the config file does not name (or ports moved). */
	struct ctl_record rec;
	if (ctl_load_record_in(d->store, f->name, &rec, &e) == 0) {
		if (rec.have_state && !rec.have_journal && rec.moves_known)
			moves_from_record(d, &rec, leader);
		/* The fabric's topology, which a partition's commit keeps (its
		 * own topology is the partition's; an older record after one
		 * does not say: the config's then). */
		const char *fab = rec.fabric_topology;
		const char *last = rec.topology;
		bool other = rec.have_state && !rec.have_journal && fab && *fab &&
			     f->topology.present && f->nswitches &&
			     strcmp(fab, f->topology.spec) != 0;
		/* The last commit's topology (a partition's, or the fabric's)
		 * is damage too when it does not parse, even where the fabric's
		 * is served: the record cannot be trusted whole. */
		bool last_bad = rec.have_state && !rec.have_journal && last && *last &&
				(!fab || strcmp(last, fab) != 0) &&
				recorded_spec_damaged(d, last, &e) < 0;
		if (last_bad || (other && recorded_spec_damaged(d, fab, &e) < 0)) {
			ctl_record_free(&rec);
			if (strict) {
				*err = e;
				return -1;
			}
			damaged_item(d, &e);
			memset(&rec, 0, sizeof(rec));
			other = false;
		}
		if (other || (d->nw_moves && f->topology.present && f->nswitches)) {
			const char *spec = other ? fab : f->topology.spec;
			struct fabric *nf;
			struct ctl *nc;
			struct ofc_error e2 = {0};

			if (ofcd_fabric_with_topology(d, d->w_cfg, spec, false, &nf, &e2) == 0 &&
			    ofcd_open_ctl(d, nf, false, &nc, &e2) == 0) {
				struct fabcfg *nc_cfg =
				    fabcfg_new(nf, d->w_cfg->yaml, d->w_cfg->yaml_len,
					       d->w_cfg->path, d->o.lp_solver);

				if (other)
					ofcd_log(d,
						 strict || leader ? OFCD_LOG_NOTICE : OFCD_LOG_INFO,
						 "serving the recorded topology %s (the config "
						 "asks for %s; reload or reconfigure to change it)",
						 fab, f->topology.spec);
				if (d->nw_moves)
					ofcd_log(d,
						 strict || leader ? OFCD_LOG_NOTICE : OFCD_LOG_INFO,
						 "%u host port%s moved to spare ones (%s.rewired)",
						 d->nw_moves, d->nw_moves == 1 ? "" : "s", f->name);
				ctl_handover(d->w_ctl, nc);
				ofcd_ctl_close(d, d->w_ctl);
				fabcfg_unref(d->w_cfg);
				d->w_ctl = nc;
				d->w_cfg = nc_cfg;
			} else {
				/* (A config changed while ofcd was down.) The files
				 * stay: they say what the devices hold. */
				if (nf)
					fabric_free(nf);
				ofcd_log(d, OFCD_LOG_WARNING,
					 "the recorded topology %s (with %u moved port%s) does not "
					 "fit the config: %s; serving the config's %s (the record "
					 "and %s.rewired are kept: ApplyConfig or a reload rewires "
					 "the devices to the config)",
					 spec, d->nw_moves, d->nw_moves == 1 ? "" : "s", e2.msg,
					 f->topology.spec, f->name);
				moves_clear(d);
			}
		}
		ctl_record_free(&rec);
	} else {
		ofcd_log_error(d, "", &e);
		ofc_error_clear(&e);
	}
	/* Failures reported before a restart are still failed. */
	if (failures_load(d, d->w_cfg->f->name, &e) < 0) {
		if (strict) {
			*err = e;
			return -1;
		}
		damaged_item(d, &e);
	}
	/* Partitions held before a restart or a failover are still held. */
	if (held_adopt(d, leader, !strict, &e) < 0) {
		if (strict) {
			*err = e;
			return -1;
		}
		damaged_item(d, &e);
	}
	fabcfg_unref(d->w_pub);
	d->w_pub = failures_publish(d);
	if (d->w_pub->nfailed)
		ofcd_log(d, strict || leader ? OFCD_LOG_NOTICE : OFCD_LOG_INFO,
			 "%u reported failure%s in effect%s%s", d->w_pub->nfailed,
			 d->w_pub->nfailed == 1 ? "" : "s", d->w_pub->no_schedule ? ": " : "",
			 d->w_pub->no_schedule ? d->w_pub->no_schedule : "");
	*snap = snapshot_build(d->state_dir, d->w_ctl, d->w_pub, why, sizeof(why));
	held_state(d, *snap);
	if (why[0])
		ofcd_log(d, OFCD_LOG_WARNING, "%s", why);
	return 0;
}

int ofcd_start(struct ofcd *d, struct ofc_error *err)
{
	struct fabric *f;
	char *text;
	size_t len;
	bool did;

	if (read_file(d->o.config_path, CONFIG_MAX_BYTES, &text, &len, err) < 0)
		return -1;
	if (config_parse(d->o.config_path, text, len, &f, err) < 0 ||
	    ofcd_check_config(d, f, false, err) < 0 || fabric_validate(f, err) < 0) {
		if (f)
			fabric_free(f);
		free(text);
		return -1;
	}
	ofcd_trust_config(d, f);
	d->w_cfg = fabcfg_new(f, text, len, d->o.config_path, d->o.lp_solver);
	d->w_base = fabcfg_ref(d->w_cfg);
	free(text);
	/* A replica's state is etcd's: it leads, locks and
	 * repairs only once it is elected (JOB_TAKEOVER). */
	if (d->o.cluster && cluster_open(d, f->name, err) < 0)
		return -1;
	if (ofcd_open_ctl(d, f, true, &d->w_ctl, err) < 0)
		return -1;
	if (!d->clustered) {
		if (ctl_lock(d->w_ctl, err) < 0)
			return -1;
		/* A transaction a crash left (of ofcd or of `ofc apply`) is
		 * finished or undone before anything else. If the devices
		 * cannot be read now, the daemon serves anyway and every
		 * mutation tries again first. */
		if (ctl_recover(d->w_ctl, &did, err) < 0) {
			ofcd_log_error(d, "recovery of an unfinished transaction failed: ", err);
			ofc_error_clear(err);
		} else if (did) {
			ofcd_log(d, OFCD_LOG_NOTICE,
				 "recovered an unfinished transaction from the journal");
		}
	}
	if (ofcd_adopt(d, true, !d->clustered, &d->snap, err) < 0)
		return -1;
	d->cfg = fabcfg_ref(d->w_pub);
	return 0;
}

/* ---- replicas ------------------------------------------------------------------------ */

/* Back to the config as read (d->w_base) with no moves or failures in
 * effect, before the store's state is adopted again. */
static int reset_to_base(struct ofcd *d, struct ofc_error *err)
{
	if (d->w_cfg != d->w_base) {
		struct ctl *nc;

		if (ofcd_open_ctl(d, d->w_base->f, true, &nc, err) < 0)
			return -1;
		ctl_handover(d->w_ctl, nc);
		ctl_close(d->w_ctl);
		d->w_ctl = nc;
		fabcfg_unref(d->w_cfg);
		d->w_cfg = fabcfg_ref(d->w_base);
	}
	moves_clear(d);
	strv_free(d->w_reported, d->nw_reported);
	d->w_reported = NULL;
	d->nw_reported = 0;
	free(d->w_damaged);
	d->w_damaged = NULL;
	return 0;
}

/* The store's bytes of what a sync builds the config and the holds from,
 * to tell whether anything but the journal changed. */
static char *sync_bytes(struct ofcd *d, size_t *len)
{
	static const enum store_item items[] = {STORE_RECORD, STORE_FAILED, STORE_REWIRED,
						STORE_HELD};
	struct strbuf sb = STRBUF_INIT;

	for (size_t i = 0; i < ARRAY_SIZE(items); i++) {
		struct ofc_error e = {0};
		char *data = NULL;
		size_t n = 0;
		bool missing;

		if (store_get(d->store, d->w_base->f->name, items[i], (size_t)1 << 30, &data, &n,
			      &missing, &e) < 0)
			sb_printf(&sb, "!%s", e.msg);
		sb_printf(&sb, "%zu:", n);
		sb_add(&sb, data ? data : "", n);
		free(data);
	}
	*len = sb.len;
	return sb_detach(&sb);
}

/* A new leader serves the --config file as it is now, as a restarted ofcd
 * would (the operator may have changed it on every machine meanwhile); one
 * that does not load leaves the one read before, logged. */
static void reread_base(struct ofcd *d)
{
	struct ofc_error e = {0};
	struct fabric *f = NULL;
	char *text = NULL;
	size_t len;

	if (read_file(d->o.config_path, CONFIG_MAX_BYTES, &text, &len, &e) < 0 ||
	    config_parse(d->o.config_path, text, len, &f, &e) < 0 ||
	    ofcd_check_config(d, f, false, &e) < 0 || fabric_validate(f, &e) < 0 ||
	    (strcmp(f->name, d->w_base->f->name) != 0 &&
	     ofc_error_set(&e, OFC_E_INPUT, "it is fabric '%s'", f->name) < 0)) {
		char buf[sizeof(e.file) + sizeof(e.msg) + 32];

		ofcd_log(d, OFCD_LOG_WARNING,
			 "takeover: %s does not load (%s): serving the config read before",
			 d->o.config_path, ofc_error_str(&e, buf, sizeof(buf)));
		fabric_free(f);
		free(text);
		return;
	}
	ofcd_trust_config(d, f);
	fabcfg_unref(d->w_base);
	d->w_base = fabcfg_new(f, text, len, d->o.config_path, d->o.lp_solver);
	free(text);
}

void ofcd_run_takeover(struct ofcd *d, struct job *j)
{
	struct ofc_error err = {0};
	double t0 = now_seconds();
	uint64_t epoch = store_epoch(d->store);
	bool did = false;

	if (!epoch) {
		ofcd_log(d, OFCD_LOG_WARNING, "the leadership ended before the takeover began");
		return;
	}
	ofcd_log(d, OFCD_LOG_NOTICE, "leading fabric %s (epoch %llu): taking over",
		 d->w_base->f->name, (unsigned long long)epoch);
	reread_base(d);
	if (reset_to_base(d, &err) < 0) {
		ofcd_log_error(d, "takeover: ", &err);
		return;
	}
	/* Nobody on this machine changes the fabric beside the leader. */
	if (ctl_lock(d->w_ctl, &err) < 0) {
		ofcd_log_error(d, "takeover: ", &err);
		ofc_error_clear(&err);
	}
	/* What the last leader left half-done is finished or undone, as a
	 * restarted ofcd does with its own journal. */
	if (ctl_recover(d->w_ctl, &did, &err) < 0) {
		ofcd_log_error(d, "recovery of an unfinished transaction failed: ", &err);
		ofc_error_clear(&err);
	} else if (did) {
		ofcd_log(d, OFCD_LOG_NOTICE,
			 "recovered an unfinished transaction from the journal the last leader "
			 "left");
	}
	free(d->w_sync_bytes);
	d->w_sync_bytes = NULL;
	/* (the holds checked against the config read again) */
	free(d->w_held_bytes);
	d->w_held_bytes = NULL;
	ofcd_adopt(d, false, true, &j->snap, &err);
	j->new_cfg = fabcfg_ref(d->w_pub);
	j->done_ms = unix_ms();
	ofcd_log(d, OFCD_LOG_NOTICE, "took over fabric %s (epoch %llu) in %.3f s",
		 d->w_base->f->name, (unsigned long long)epoch, now_seconds() - t0);
}

/* Events for a follower's watchers, from what changed in the record and
 * the journal since the last sync (the leader's own events stay on the
 * leader). */
static void sync_events(struct ofcd *d)
{
	struct ctl_record r;
	struct ofc_error e = {0};
	char msg[160];

	if (ctl_load_record_in(d->store, d->w_base->f->name, &r, &e) < 0)
		return;
	uint64_t gen = r.have_state ? r.generation : 0, jid = r.have_journal ? r.journal_id : 0;
	const char *phase = r.have_journal ? r.journal_phase : NULL;
	/* who wrote the journal, and the record */
	char jby[96], rby[96];
	snprintf(jby, sizeof(jby), "by %s%s (seen in etcd)", r.journal_replica ? "replica " : "",
		 r.journal_replica ? r.journal_replica : "the leader");
	snprintf(rby, sizeof(rby), "by %s%s (seen in etcd)", r.replica ? "replica " : "",
		 r.replica ? r.replica : "the leader");

	if (jid && jid != d->w_sync_jid)
		ofcd_post_event(d, OFC__V1__EVENT__KIND__KIND_TRANSACTION_STARTED, jid, NULL, jby,
				NULL, OFC_R_NONE);
	if (jid && phase && strcmp(phase, "rolling-back") == 0 &&
	    (jid != d->w_sync_jid || !d->w_sync_phase ||
	     strcmp(d->w_sync_phase, "rolling-back") != 0))
		ofcd_post_event(d, OFC__V1__EVENT__KIND__KIND_TRANSACTION_ROLLING_BACK, jid, NULL,
				jby, NULL, OFC_R_NONE);
	if (gen != d->w_sync_gen && gen) {
		snprintf(msg, sizeof(msg), "generation %llu, %s", (unsigned long long)gen, rby);
		ofcd_post_event(d, OFC__V1__EVENT__KIND__KIND_TRANSACTION_COMMITTED, gen, NULL, msg,
				NULL, OFC_R_NONE);
	} else if (!jid && d->w_sync_jid && gen == d->w_sync_gen) {
		ofcd_post_event(d, OFC__V1__EVENT__KIND__KIND_TRANSACTION_ROLLED_BACK,
				d->w_sync_jid, NULL, rby, NULL, OFC_R_NONE);
	}
	d->w_sync_gen = gen;
	d->w_sync_jid = jid;
	d->w_sync_phase = phase; /* journal_phase_name's: static strings */
	ctl_record_free(&r);
}

void ofcd_run_sync(struct ofcd *d, struct job *j)
{
	struct ofc_error err = {0};
	bool leading = cluster_sync_start(d, j);
	size_t len;
	char *bytes;

	/* The leader's state is what it wrote, unless a damaged item waits
	 * for an operator's fix. */
	if (leading && !d->w_damaged)
		return;
	sync_events(d);
	bytes = sync_bytes(d, &len);
	if (d->w_sync_bytes && len == d->w_sync_len && memcmp(bytes, d->w_sync_bytes, len) == 0) {
		/* the journal alone: the same config, a new snapshot */
		char why[400];

		free(bytes);
		j->snap = snapshot_build(d->state_dir, d->w_ctl, d->w_pub, why, sizeof(why));
		held_state(d, j->snap);
		return;
	}
	free(d->w_sync_bytes);
	d->w_sync_bytes = bytes;
	d->w_sync_len = len;
	if (reset_to_base(d, &err) < 0) {
		ofcd_log_error(d, "sync: ", &err);
		return;
	}
	ofcd_adopt(d, false, leading, &j->snap, &err);
	j->new_cfg = fabcfg_ref(d->w_pub);
}

/* ---- mutations ------------------------------------------------------------------------ */

struct answer {
	struct arena a;
	Ofc__V1__Response r;
	Ofc__V1__TransactionInfo t;
	Ofc__V1__ConfigError ce;
};

static void answer_init(struct answer *an, const struct job *j)
{
	memset(an, 0, sizeof(*an));
	ofc__v1__response__init(&an->r);
	ofc__v1__transaction_info__init(&an->t);
	ofc__v1__config_error__init(&an->ce);
	an->r.has_id = 1;
	an->r.id = j->req_id;
	an->r.has_status = 1;
	an->t.kind = j->kind == JOB_APPLY_CONFIG ? "apply-config"
		     : j->kind == JOB_RELOAD	 ? "reload"
		     : j->kind == JOB_FAILURE	 ? "report-failure"
		     : j->kind == JOB_RELEASE	 ? "release-partition"
						 : "reconfigure";
	an->t.target = j->target;
	an->t.has_ticket = an->t.has_dry_run = 1;
	an->t.ticket = j->ticket;
	an->t.dry_run = j->dry_run;
	an->t.principal = j->principal;
	an->t.has_peer_uid = an->t.has_peer_pid = 1;
	an->t.peer_uid = j->peer.uid;
	an->t.peer_pid = (uint32_t)j->peer.pid;
	an->r.body_case = OFC__V1__RESPONSE__BODY_TRANSACTION;
	an->r.transaction = &an->t;
}

static void answer_status(struct answer *an, Ofc__V1__Status st, const char *fmt, ...)
    OFC_PRINTF(3, 4);
static void answer_status(struct answer *an, Ofc__V1__Status st, const char *fmt, ...)
{
	va_list ap;
	struct strbuf sb = STRBUF_INIT;

	va_start(ap, fmt);
	sb_vprintf(&sb, fmt, ap);
	va_end(ap);
	an->r.status = st;
	an->r.message = arena_strdup(&an->a, sb.buf ? sb.buf : "");
	sb_free(&sb);
}

/* A config that did not load or validate: status INVALID with its
 * position, so clients can point at the line. */
static void answer_config_error(struct answer *an, const struct ofc_error *err)
{
	char buf[900];

	answer_status(an, OFC__V1__STATUS__STATUS_INVALID, "%s",
		      ofc_error_str(err, buf, sizeof(buf)));
	an->ce.file = arena_strdup(&an->a, err->file);
	an->ce.has_line = an->ce.has_column = err->line > 0;
	an->ce.line = err->line;
	an->ce.column = err->col;
	an->ce.message = arena_strdup(&an->a, err->msg);
	an->r.body_case = OFC__V1__RESPONSE__BODY_CONFIG_ERROR;
	an->r.config_error = &an->ce;
}

/* A mutation stopped because this replica may no longer drive the devices
 * or write the state (OFC_R_FENCED): the answer says so and who
 * leads now. */
static bool answer_fenced(struct ofcd *d, struct answer *an, const struct ofc_error *err)
{
	struct store_cluster v;
	char msg[700];
	Ofc__V1__Status st;

	if (err->reason != OFC_R_FENCED)
		return false;
	store_cluster(d->store, &v);
	st = cluster_refusal(d, &v, msg, sizeof(msg));
	if (st == OFC__V1__STATUS__STATUS_OK) {
		st = OFC__V1__STATUS__STATUS_UNAVAILABLE;
		snprintf(msg, sizeof(msg), "try again");
	}
	answer_status(an, st, "%s; %s", err->msg, msg);
	an->r.leader = cluster_refusal_leader(&an->a, &v);
	return true;
}

/* The new fabric a mutation asks for, and its shared config. */
static int build_target(struct ofcd *d, struct job *j, struct answer *an, struct fabcfg **out)
{
	struct ofc_error err = {0};
	struct fabric *f = NULL;
	const struct fabric *cur = d->w_cfg->f;

	*out = NULL;
	if (j->kind == JOB_RELOAD) {
		free(j->yaml);
		j->yaml = NULL;
		if (read_file(d->o.config_path, CONFIG_MAX_BYTES, &j->yaml, &j->yaml_len, &err) <
		    0) {
			answer_config_error(an, &err);
			return -1;
		}
	}
	if (j->kind == JOB_APPLY_CONFIG || j->kind == JOB_RELOAD) {
		/* A config from the API is checked for what it may make the
		 * daemon do before validation looks at the files it names. */
		bool from_api = j->kind == JOB_APPLY_CONFIG;

		if (config_parse(j->filename, j->yaml, j->yaml_len, &f, &err) == 0) {
			f->files = from_api ? &d->files : NULL;
			/* No filename, no directory of its own: relative
			 * credentials resolve where the running config's do
			 * (ofcd's cwd is / under systemd, never theirs). */
			if (from_api && j->unnamed && cur->dir) {
				free(f->dir);
				f->dir = xstrdup(cur->dir);
			}
		}
		if (!f || ofcd_check_config(d, f, from_api, &err) < 0 ||
		    fabric_validate(f, &err) < 0) {
			fabric_free(f);
			answer_config_error(an, &err);
			return -1;
		}
		if (j->kind == JOB_RELOAD)
			ofcd_trust_config(d, f);
		if (strcmp(f->name, cur->name) != 0) {
			answer_status(
			    an, OFC__V1__STATUS__STATUS_INVALID,
			    "this ofcd serves fabric '%s'; the config is for '%s' (each fabric "
			    "has its own ofcd)",
			    cur->name, f->name);
			fabric_free(f);
			return -1;
		}
		*out = fabcfg_new(f, j->yaml, j->yaml_len, j->filename, d->o.lp_solver);
		return 0;
	}
	/* Reconfigure of a partition: the running config as it is; the plan
	 * (run_mutation) aims at the partition alone (one made of hosts at
	 * run time is built there, held.c). */
	if (j->partition && j->nhosts) {
		*out = fabcfg_ref(d->w_cfg);
		return 0;
	}
	if (j->partition) {
		if (!fabric_find_partition(cur, j->partition)) {
			answer_status(an, OFC__V1__STATUS__STATUS_NOT_FOUND,
				      "fabric '%s' has no partition '%.64s' any more", cur->name,
				      j->partition);
			return -1;
		}
		*out = fabcfg_ref(d->w_cfg);
		return 0;
	}
	/* Reconfigure: the running config with another topology. */
	char spec[TOPO_MAX_SPEC + 1];
	const char *want = spec;
	if (cur->nrings || !cur->nswitches) {
		answer_status(an, OFC__V1__STATUS__STATUS_INVALID,
			      "fabric '%s' has no circuit switch to rewire: change its %s with "
			      "ApplyConfig",
			      cur->name, cur->nrings ? "lightpaths" : "config");
		return -1;
	}
	if (j->to_phase) { /* MoveToPhase, by the phase's spec as a restart
			    * builds the recorded topology */
		char *ps = NULL;

		if (ofcd_phase_spec(d->w_cfg, j, &ps, &err) < 0 ||
		    ofcd_fabric_with_topology(d, d->w_cfg, ps, false, &f, &err) < 0) {
			free(ps);
			answer_status(an,
				      err.code == OFC_E_RUNTIME ? OFC__V1__STATUS__STATUS_FAILED
								: OFC__V1__STATUS__STATUS_INVALID,
				      "%s", err.msg);
			return -1;
		}
		free(ps);
		an->t.target = j->target;
		*out = fabcfg_new(f, d->w_cfg->yaml, d->w_cfg->yaml_len, d->w_cfg->path,
				  d->o.lp_solver);
		(*out)->coll = d->w_cfg->coll;
		(*out)->size = d->w_cfg->size;
		return 0;
	}
	if (j->workload) {
		if (pick_topology(cur, j, spec, sizeof(spec), &err) < 0) {
			answer_status(an,
				      err.code == OFC_E_RUNTIME ? OFC__V1__STATUS__STATUS_FAILED
								: OFC__V1__STATUS__STATUS_INVALID,
				      "%s", err.msg);
			return -1;
		}
		free(j->target);
		j->target = xstrdup(spec);
		an->t.target = j->target;
	} else {
		want = j->spec; /* (a "ports:" spec may be longer than spec[]) */
	}
	if (ofcd_fabric_with_topology(d, d->w_cfg, want, j->spec_from_client, &f, &err) < 0) {
		answer_status(an, OFC__V1__STATUS__STATUS_INVALID, "%s", err.msg);
		return -1;
	}
	*out = fabcfg_new(f, d->w_cfg->yaml, d->w_cfg->yaml_len, d->w_cfg->path, d->o.lp_solver);
	if (j->workload) {
		(*out)->coll = j->coll;
		(*out)->size = j->size;
	} else {
		(*out)->coll = d->w_cfg->coll;
		(*out)->size = d->w_cfg->size;
	}
	return 0;
}

/* A dry run's answer: the counts, the switching time and the plan as `ofc
 * plan` words it (left out when it would not fit a frame, and said). */
static void answer_plan(const struct ofcd *d, struct answer *an, const struct ctl *nc,
			const char *target)
{
	struct strbuf sb = STRBUF_INIT;
	uint32_t room = d->o.max_frame ? d->o.max_frame : OFCD_MAX_FRAME_DEFAULT;
	char est[96];

	an->t.state = "planned";
	an->t.has_operations = an->t.has_switching_seconds = 1;
	an->t.operations = ctl_plan_size(nc);
	an->t.switching_seconds = ctl_plan_seconds(nc);
	ctl_plan_text(nc, &sb);
	/* the rest of the answer is a few hundred bytes */
	if (sb.len + 4096 <= room)
		an->t.plan = arena_strdup(&an->a, sb.buf ? sb.buf : "");
	ctl_plan_seconds_text(nc, est, sizeof(est));
	answer_status(an, OFC__V1__STATUS__STATUS_OK,
		      "%u operation%s on %u device%s would take fabric '%s' to %s%s%s%s%s",
		      an->t.operations, an->t.operations == 1 ? "" : "s", nc->ndevs,
		      nc->ndevs == 1 ? "" : "s", nc->fabric->name, target, est[0] ? " (" : "", est,
		      est[0] ? ")" : "", an->t.plan ? "" : "; the plan's lines do not fit a frame");
	sb_free(&sb);
}

/* A workload's answer, once committed: the schedule it gets on the picked
 * topology (its summary), or the answer as it is when none is found. */
static void answer_workload_schedule(const struct ofcd *d, const struct job *j, struct answer *an)
{
	struct schedule_query q = {.fabric = d->w_pub->f, .collective = j->coll, .size = j->size};
	struct schedule_result r;
	struct ofc_error err = {0};

	if (schedule_compute(&q, &r, NULL, &err) < 0)
		return;
	if (schedule_check(&r, &err) == 0) {
		const struct schedule *s = &r.main->s;

		an->t.schedule = schedule_header_msg(&an->a, s);
		an->t.schedule->algorithm = arena_strdup(&an->a, an->t.schedule->algorithm);
		an->t.schedule->topology = arena_strdup(&an->a, s->topology);
		for (size_t i = 0; i < an->t.schedule->n_metrics; i++)
			an->t.schedule->metrics[i]->key =
			    arena_strdup(&an->a, an->t.schedule->metrics[i]->key);
		schedule_msg_summary(an->t.schedule, schedule_extra_msg(&an->a, &r));
		answer_status(an, OFC__V1__STATUS__STATUS_OK,
			      "%s; topology %s picked for %s: %s takes %u steps, %.6g us "
			      "(verified)",
			      an->r.message, j->target, sched_collective_name(j->coll),
			      s->algorithm, s->nsteps, s->time_us);
	}
	schedule_result_free(&r);
}

/* A run-time partition's plan: its topology over its hosts,
 * renumbered for fewest moves when asked. */
static int aim_runtime(const struct job *j, struct ctl *nc, const struct partition *p,
		       struct ofc_error *err)
{
	/* A tenth of a second: the queue plans 600 jobs a minute; the search
	 * stops sooner at its bound (bench/RESULTS.md, "the renumbering's"). */
	struct relabel_opts o = {.budget_s = 0.1};
	struct fabric_relabel rep = {0};

	return ctl_partition(nc, p, j->relabel ? &o : NULL, &rep, err);
}

/* Read the devices and plan what j asks of them (a partition's ports
 * alone for a partition); a plan that would change a held partition's
 * circuits is refused. -1: refused, an says why. */
static int plan_mutation(const struct ofcd *d, const struct job *j, const struct fabcfg *ncfg,
			 struct ctl *nc, const struct partition *rtp, struct answer *an)
{
	struct ofc_error err = {0};

	if (ctl_plan(nc, &err) < 0) {
		answer_status(an, OFC__V1__STATUS__STATUS_FAILED, "cannot read the devices: %s",
			      err.msg);
		return -1;
	}
	if (j->nhosts
		? aim_runtime(j, nc, rtp, &err) < 0
		: j->partition && ctl_partition(nc, fabric_find_partition(ncfg->f, j->partition),
						NULL, NULL, &err) < 0) {
		answer_status(an, OFC__V1__STATUS__STATUS_FAILED, "%s", err.msg);
		return -1;
	}
	/* Nothing but its owner changes a held partition's circuits: not a
	 * whole-fabric Reconfigure, a config, another partition. */
	if (held_check_plan(d, nc, j->nhosts ? j->partition : "", &err) < 0) {
		answer_status(an, OFC__V1__STATUS__STATUS_FAILED, "%s", err.msg);
		return -1;
	}
	return 0;
}

/* The answer of a transaction that failed (rolled back or not). */
static void answer_failed(struct job *j, struct answer *an, const struct ctl_result *res,
			  const struct ofc_error *err)
{
	an->t.state = res->rolled_back ? "rolled-back" : "failed";
	j->outcome = an->t.state;
	if (res->failed_device[0])
		an->t.failed_device = arena_strdup(&an->a, res->failed_device);
	an->t.has_restored = 1;
	an->t.restored = res->rolled_back && res->rollback_ok;
	answer_status(an, OFC__V1__STATUS__STATUS_FAILED, "transaction %llu failed: %s%s",
		      (unsigned long long)res->txn, err->msg,
		      !res->rolled_back ? ""
		      : res->rollback_ok
			  ? "; rolled back: every device is verified back at its previous state"
			  : "; ROLLBACK INCOMPLETE: the journal is kept and the next mutation "
			    "retries it");
}

/* A reload refused: watchers get where, not what (the reason may quote
 * the file or name a credentials path). The log has it all. */
static void post_reload_rejected(struct ofcd *d, const struct answer *an)
{
	char where[300] = "";

	if (an->r.body_case == OFC__V1__RESPONSE__BODY_CONFIG_ERROR && an->ce.file && *an->ce.file)
		snprintf(where, sizeof(where), an->ce.has_line ? "%s:%u:%u: " : "%s: ", an->ce.file,
			 an->ce.line, an->ce.column ? an->ce.column : 1);
	char *pub = xasprintf("%sthe config was rejected; the running config stays (the "
			      "reason is in ofcd's log)",
			      where);
	ofcd_post_event(d, OFC__V1__EVENT__KIND__KIND_CONFIG_REJECTED, 0, NULL, pub, an->r.message,
			OFC_R_NONE);
	free(pub);
}

void ofcd_run_mutation(struct ofcd *d, struct job *j)
{
	struct answer an;
	struct ofc_error err = {0};
	struct fabcfg *ncfg = NULL;
	struct ctl *nc = NULL;
	struct ctl_result res = {0};
	bool did = false, touched = false;
	char why[400];
	struct partition rtp = {0}; /* a run-time partition (held.c) */
	struct held_stage hs = {0};

	answer_init(&an, j);
	/* Damaged state in etcd is not overwritten. */
	if (d->w_damaged) {
		answer_status(&an, OFC__V1__STATUS__STATUS_FAILED,
			      "refused: %s; fix or remove it first", d->w_damaged);
		goto out;
	}
	if (j->nhosts && !held_may(d, j, why, sizeof(why))) {
		answer_status(&an, OFC__V1__STATUS__STATUS_DENIED, "%s", why);
		goto out;
	}
	/* A journal left by an earlier failure is resolved first. */
	if (ctl_recover(d->w_ctl, &did, &err) < 0) {
		if (!answer_fenced(d, &an, &err))
			answer_status(&an, OFC__V1__STATUS__STATUS_FAILED,
				      "an unfinished transaction could not be repaired first: %s",
				      err.msg);
		touched = did;
		goto out;
	}
	touched = did;
	if (build_target(d, j, &an, &ncfg) < 0)
		goto out;
	if (j->nhosts &&
	    held_make(d, ncfg->f, j->partition, j->hosts, j->nhosts, j->spec, &rtp, &err) < 0) {
		answer_status(&an,
			      err.code == OFC_E_RUNTIME ? OFC__V1__STATUS__STATUS_FAILED
							: OFC__V1__STATUS__STATUS_INVALID,
			      "%s", err.msg);
		goto out;
	}
	an.t.fabric = arena_strdup(&an.a, ncfg->f->name);
	if (ofcd_open_ctl(d, ncfg->f, false, &nc, &err) < 0) {
		answer_status(&an, OFC__V1__STATUS__STATUS_INVALID, "%s", err.msg);
		goto out;
	}
	ctl_handover(d->w_ctl, nc);
	/* Until it commits, nc speaks for the running devices only where it
	 * reaches them as they run: a config's other credentials file or
	 * address failing is its own error (in the answer), not the device
	 * lost for watchers and the state. */
	ctl_quiet(nc, d->w_ctl);
	if (plan_mutation(d, j, ncfg, nc, &rtp, &an) < 0) {
		ctl_handover(nc, d->w_ctl);
		goto out;
	}
	if (j->dry_run) {
		answer_plan(d, &an, nc, j->target);
		j->outcome = "planned";
		ctl_handover(nc, d->w_ctl);
		goto out;
	}
	touched = true;
	/* The holds this commit takes or drops go into its store write. */
	held_stage(d, j, j->nhosts ? &rtp : NULL, ncfg->f, &hs);
	nc->commit_also = held_commit_also;
	nc->commit_also_ctx = &hs;
	int rc = ctl_apply(nc, 0, &res, &err);
	nc->commit_also = NULL;
	j->txn = res.txn;
	an.t.has_id = 1;
	an.t.id = res.txn;
	an.t.has_operations = an.t.has_seconds = 1;
	an.t.operations = res.ops_applied;
	an.t.seconds = res.seconds;
	char by[160];
	ofcd_txn_by(d, &an.t, by, sizeof(by));
	if (rc == 0) {
		an.t.state = "committed";
		j->outcome = "committed";
		answer_status(
		    &an, OFC__V1__STATUS__STATUS_OK,
		    "committed transaction %llu%s: %u operation%s on %u device%s in %.3f s",
		    (unsigned long long)res.txn, by, res.ops_applied,
		    res.ops_applied == 1 ? "" : "s", nc->ndevs, nc->ndevs == 1 ? "" : "s",
		    res.seconds);
		ofcd_ctl_close(d, d->w_ctl);
		d->w_ctl = nc;
		nc = NULL;
		ctl_quiet(d->w_ctl, NULL);
		/* held from now on; the ctl's pointer would outlive rtp */
		if (j->nhosts)
			d->w_ctl->partition = NULL;
		held_committed(&hs, j->nhosts ? &rtp : NULL, res.txn, res.ops_applied);
		fabcfg_unref(d->w_cfg);
		d->w_cfg = ncfg;
		ncfg = NULL;
		/* A new config describes the wiring afresh: its circuits are
		 * what was applied, so the moves are over. */
		if (j->kind == JOB_APPLY_CONFIG || j->kind == JOB_RELOAD)
			ofcd_drop_moves(d);
		/* The failures still in effect apply to the new config too. */
		fabcfg_unref(d->w_pub);
		d->w_pub = failures_publish(d);
		j->new_cfg = fabcfg_ref(d->w_pub);
		if (j->kind != JOB_RECONFIGURE)
			ofcd_post_event(d, OFC__V1__EVENT__KIND__KIND_CONFIG_APPLIED, res.txn, NULL,
					j->filename, NULL, OFC_R_NONE);
	} else if (answer_fenced(d, &an, &err)) {
		/* deposed mid-way: the leader after it repairs it */
		an.t.state = "stopped";
		j->outcome = "stopped";
		ctl_handover(nc, d->w_ctl);
	} else {
		answer_failed(j, &an, &res, &err);
		ctl_handover(nc, d->w_ctl);
	}
	if (an.r.status == OFC__V1__STATUS__STATUS_OK && j->workload && !j->dry_run)
		answer_workload_schedule(d, j, &an);
out:
	if (touched) {
		j->snap = snapshot_build(d->state_dir, d->w_ctl, d->w_pub, why, sizeof(why));
		held_state(d, j->snap);
		if (why[0])
			ofcd_log(d, OFCD_LOG_WARNING, "%s", why);
	}
	if (j->kind == JOB_RELOAD && an.r.status != OFC__V1__STATUS__STATUS_OK)
		post_reload_rejected(d, &an);
	if (!an.t.state)
		an.t.state = an.r.status == OFC__V1__STATUS__STATUS_INVALID ? "refused" : "failed";
	if (!j->outcome)
		j->outcome = an.t.state;
	ofcd_ctl_close(d, nc);
	fabcfg_unref(ncfg);
	held_stage_free(&hs);
	held_partition_free(&rtp);
	response_pack(&an.r, &j->reply, &j->reply_len);
	arena_free(&an.a);
}

void ofcd_run_release(struct ofcd *d, struct job *j)
{
	struct answer an;
	struct ofc_error err = {0};
	char why[400];

	answer_init(&an, j);
	if (!held_may(d, j, why, sizeof(why))) {
		answer_status(&an, OFC__V1__STATUS__STATUS_DENIED, "%s", why);
		an.t.state = "refused";
	} else if (held_release(d, j, &err) < 0) {
		if (!answer_fenced(d, &an, &err))
			answer_status(&an,
				      err.code == OFC_E_INPUT ? OFC__V1__STATUS__STATUS_NOT_FOUND
							      : OFC__V1__STATUS__STATUS_FAILED,
				      "%s", err.msg);
		an.t.state = "refused";
	} else {
		answer_status(&an, OFC__V1__STATUS__STATUS_OK,
			      "released partition '%s': its hosts return to the pool; its "
			      "circuits stay",
			      j->partition);
		an.t.state = "committed";
		j->snap = snapshot_build(d->state_dir, d->w_ctl, d->w_pub, why, sizeof(why));
		if (why[0])
			ofcd_log(d, OFCD_LOG_WARNING, "%s", why);
		held_state(d, j->snap);
	}
	j->outcome = an.t.state;
	response_pack(&an.r, &j->reply, &j->reply_len);
	arena_free(&an.a);
}

/* Read every device: reachability (device lost / back events come from
 * ctl) and whether each still holds what the record says. */
void ofcd_run_probe(struct ofcd *d, struct job *j)
{
	struct ctl *c = d->w_ctl;
	struct ctl_record rec;
	struct ofc_error err = {0};
	bool have = ctl_load_record_for(c, &rec, &err) == 0;

	ctl_read(c, &err);
	j->probe = xcalloc(c->ndevs + 1, sizeof(*j->probe));
	j->nprobe = c->ndevs;
	for (uint32_t i = 0; i < c->ndevs; i++) {
		struct probe_dev *p = &j->probe[i];
		const struct device_state *r = NULL;

		snprintf(p->name, sizeof(p->name), "%s", c->devs[i].cfg.name);
		p->reachable = c->devs[i].read_ok;
		if (!p->reachable) {
			snprintf(p->error, sizeof(p->error), "%s", c->devs[i].read_err.msg);
			p->reason = c->devs[i].read_err.reason;
		}
		for (uint32_t k = 0; have && k < rec.ndevs; k++)
			if (strcmp(rec.dev_names[k], p->name) == 0)
				r = &rec.dev_states[k];
		p->recorded = r != NULL;
		p->entries = p->reachable ? state_size(&c->devs[i].actual) : 0;
		p->in_sync = p->reachable && state_as_recorded(r, &c->devs[i].actual);
	}
	if (have)
		ctl_record_free(&rec);
	/* A switch lost takes the host ports cabled to it along; a switch port
	 * the switch reports failing, the host port cabled to it. */
	char cause[160];
	if (failures_devices(d, cause, sizeof(cause))) {
		char sentence[600];

		ofcd_replan(d, j, cause, sentence, sizeof(sentence));
	}
}

/* ---- failures -------------------------------------------------------------------------- */

/* Publish d->w_cfg with the failures now in effect (failures.c): the config
 * and the snapshot travel on j to the loop, followed by a
 * KIND_SCHEDULE_REPLANNED event with the workload's schedule on the
 * surviving graph, verified (summary: GetSchedule has the steps). sentence
 * gets what happened, for the answer. */
void ofcd_replan(struct ofcd *d, struct job *j, const char *cause, char *sentence, size_t n)
{
	double t0 = now_seconds();
	struct fabcfg *pub = failures_publish(d);
	struct note *ev = xcalloc(1, sizeof(*ev));
	struct strbuf list = STRBUF_INIT, msg = STRBUF_INIT;
	char why[400];

	fabcfg_unref(d->w_pub);
	d->w_pub = pub;
	fabcfg_unref(j->new_cfg);
	j->new_cfg = fabcfg_ref(pub);
	for (uint32_t i = 0; i < pub->nfailed && i < 8; i++)
		sb_printf(&list, "%s%s", i ? ", " : "", pub->failed[i]);
	if (pub->nfailed > 8)
		sb_printf(&list, " and %u more", pub->nfailed - 8);
	sb_printf(&msg, "%s; ", cause);
	if (pub->nfailed)
		sb_printf(&msg, "%u failure%s in effect (%s); ", pub->nfailed,
			  pub->nfailed == 1 ? "" : "s", list.buf);
	else
		sb_printf(&msg, "no failure in effect; ");
	if (pub->no_schedule) {
		sb_printf(&msg, "%s", pub->no_schedule);
	} else if (!pub->f->graph || pub->f->nrings) {
		sb_printf(&msg, "fabric '%s' has no direct-connect topology to re-plan on",
			  pub->f->name);
	} else if (!pub->nfailed && pub->plan && pub->kept.warm) {
		/* Back on the healthy graph: the schedule its snapshot
		 * computed and kept is the answer (not solved again). */
		Ofc__V1__Schedule *h = ofc__v1__schedule__unpack(NULL, pub->plan_len, pub->plan);

		ev->sched = xmalloc(pub->plan_len + 1);
		memcpy(ev->sched, pub->plan, pub->plan_len);
		ev->sched_len = pub->plan_len;
		if (h)
			sb_printf(&msg, "%s %s on %s: %u steps, %.6g us, verified, ", h->algorithm,
				  h->collective, h->topology ? h->topology : "?", h->num_steps,
				  h->time_us);
		sb_printf(&msg, "the kept healthy schedule, re-planned in %.3f s",
			  now_seconds() - t0);
		if (h)
			ofc__v1__schedule__free_unpacked(h, NULL);
	} else {
		/* Back on the healthy graph with nothing kept yet (failures
		 * were in effect since the start): keep this run. */
		bool keep = !pub->nfailed && pub->coll == SCHED_ALLTOALL && !pub->f->degraded &&
			    !pub->kept.warm && !atomic_load(&pub->planned);
		bool from = pub != d->w_cfg && pub->coll == d->w_cfg->coll &&
			    pub->size == d->w_cfg->size && d->w_cfg->kept.warm;
		struct plan_out out = {0};

		/* The whole answer is kept for an all-to-all only (GetSchedule
		 * answers the workload from it: is_workload in server.c). */
		plan_compute(pub, from ? &d->w_cfg->kept : NULL, d->w_cfg->kept_why, keep, NULL, t0,
			     "re-planned", pub->coll == SCHED_ALLTOALL ? d->o.max_frame : 0, &msg,
			     &out);
		if (keep) {
			pub->kept = out.kept;
			memset(&out.kept, 0, sizeof(out.kept));
			snprintf(pub->kept_why, sizeof(pub->kept_why), "%s", out.kept_why);
		}
		ev->sched = out.sched;
		ev->sched_len = out.sched_len;
		/* The snapshot's State.schedule is this one (same workload):
		 * not computed twice. */
		if (out.sched && pub->coll && !pub->plan && !atomic_load(&pub->planned)) {
			pub->plan = xmalloc(out.sched_len + 1);
			memcpy(pub->plan, out.sched, out.sched_len);
			pub->plan_len = out.sched_len;
			plan_keep_full(pub, &out);
		}
		out.sched = NULL;
		plan_out_free(&out);
	}
	/* Final for this config: GetSchedule may answer the workload from it,
	 * and a planner still computing it drops its result. */
	atomic_store_explicit(&pub->planned, true, memory_order_release);
	snprintf(sentence, n, "%s", msg.buf);
	ev->kind = OFC__V1__EVENT__KIND__KIND_SCHEDULE_REPLANNED;
	ev->message = sb_detach(&msg);
	ev->failed = pub->nfailed ? xcalloc(pub->nfailed + 1, sizeof(char *)) : NULL;
	for (uint32_t i = 0; i < pub->nfailed; i++)
		ev->failed[i] = xstrdup(pub->failed[i]);
	ev->nfailed = pub->nfailed;
	ev->time_ms = unix_ms();
	snapshot_free(j->snap);
	j->snap = snapshot_build(d->state_dir, d->w_ctl, pub, why, sizeof(why));
	held_state(d, j->snap);
	if (why[0])
		ofcd_log(d, OFCD_LOG_WARNING, "%s", why);
	ofcd_post_note(d, ev);
	sb_free(&list);
}

void ofcd_run_plan(struct ofcd *d, struct job *j)
{
	struct plan_task *t = j->plan;
	struct fabcfg *c = t->cfg;
	char why[400];

	/* A re-plan computed it meanwhile (the hold ran out), or the config
	 * is no longer running: nothing to install. */
	if (atomic_load(&c->planned) || (c != d->w_pub && c != d->w_cfg)) {
		ofcd_log(d, OFCD_LOG_INFO,
			 "the workload's schedule computed in the background is not needed any "
			 "more (%s)",
			 atomic_load(&c->planned) ? "re-planned meanwhile" : "another config runs");
		return;
	}
	if (t->out.kept.warm) {
		c->kept = t->out.kept;
		memset(&t->out.kept, 0, sizeof(t->out.kept));
		ofcd_log(
		    d, OFCD_LOG_NOTICE,
		    "kept the healthy MCF solution (%.1f MiB) for the re-plans after a failure",
		    c->kept.bytes / 1048576.0);
	} else if (t->out.kept_why[0]) {
		ofcd_log(d, OFCD_LOG_NOTICE, "no healthy MCF solution kept: %s", t->out.kept_why);
	}
	snprintf(c->kept_why, sizeof(c->kept_why), "%s", t->out.kept_why);
	if (t->out.sched && !c->plan) {
		c->plan = xmalloc(t->out.sched_len + 1);
		memcpy(c->plan, t->out.sched, t->out.sched_len);
		c->plan_len = t->out.sched_len;
		plan_keep_full(c, &t->out);
	}
	atomic_store_explicit(&c->planned, true, memory_order_release);
	if (c != d->w_pub) {
		/* The healthy config while failures are in effect: kept for the
		 * next re-plan; what is published does not change. */
		ofcd_log(d, OFCD_LOG_NOTICE,
			 "kept the healthy schedule computed in the background");
		return;
	}
	struct note *ev = xcalloc(1, sizeof(*ev));

	ev->kind = OFC__V1__EVENT__KIND__KIND_SCHEDULE_REPLANNED;
	ev->message = xstrdup(t->out.message ? t->out.message : "");
	if (t->out.sched) {
		ev->sched = xmalloc(t->out.sched_len + 1);
		memcpy(ev->sched, t->out.sched, t->out.sched_len);
		ev->sched_len = t->out.sched_len;
	}
	ev->failed = c->nfailed ? xcalloc(c->nfailed + 1, sizeof(char *)) : NULL;
	for (uint32_t i = 0; i < c->nfailed; i++)
		ev->failed[i] = xstrdup(c->failed[i]);
	ev->nfailed = c->nfailed;
	ev->time_ms = unix_ms();
	j->snap = snapshot_build(d->state_dir, d->w_ctl, c, why, sizeof(why));
	held_state(d, j->snap);
	if (why[0])
		ofcd_log(d, OFCD_LOG_WARNING, "%s", why);
	ofcd_post_note(d, ev);
}

/* The attachment of host port (h, p), or NULL. */
static const struct attachment *attached(const struct fabric *f, uint32_t h, uint32_t p)
{
	for (uint32_t i = 0; i < f->nwiring; i++)
		if (f->wiring[i].host == h && f->wiring[i].host_port == p)
			return &f->wiring[i];
	return NULL;
}

/* Re-wiring around a lost port: when host port `item` (HOST:PORT)
 * carries the topology and the same host has a spare port (one the topology
 * leaves dark, not failed, not moved) cabled to the same switch, move the
 * port's circuits onto the spare in one transaction (the running config
 * with one more port move: validation puts the circuits on the spare's
 * switch port), and keep the move (STATE_DIR/FABRIC.rewired). The failed
 * port is then dark and the graph whole again. What happened goes to say. */
static void rewire(struct ofcd *d, const char *item, struct strbuf *say)
{
	const struct fabric *f = d->w_cfg->f;
	const char *colon = strrchr(item, ':');
	char host[NAME_MAX_LEN + 1], spare_item[NAME_MAX_LEN + 16];
	struct ofc_error err = {0};
	struct fabric *nf = NULL;
	struct ctl *nc = NULL;
	struct ctl_result res = {0};
	bool did;
	int h;

	if (!colon || (size_t)(colon - item) > NAME_MAX_LEN || !f->ports.to || !f->nwiring ||
	    f->nrings || !f->topology.present)
		return;
	memcpy(host, item, (size_t)(colon - item));
	host[colon - item] = 0;
	uint32_t p = (uint32_t)strtoul(colon + 1, NULL, 10), spare = UINT32_MAX;
	if ((h = fabric_find_host(f, host)) < 0 || p >= f->ports.d)
		return; /* a dark port carries nothing */
	for (uint32_t i = 0; i < d->nw_moves; i++)
		if (strcmp(d->w_moves[i].host, host) == 0 &&
		    (d->w_moves[i].from == p || d->w_moves[i].to == p))
			return; /* moved already (or the spare itself failing) */
	const struct attachment *a = attached(f, (uint32_t)h, p);
	if (!a)
		return;
	for (uint32_t q = f->ports.d; q < f->hosts[h].ports && spare == UINT32_MAX; q++) {
		const struct attachment *b = attached(f, (uint32_t)h, q);
		bool used = false;

		for (uint32_t i = 0; i < d->nw_moves; i++)
			used |= strcmp(d->w_moves[i].host, host) == 0 && d->w_moves[i].to == q;
		snprintf(spare_item, sizeof(spare_item), "%s:%u", host, q);
		if (b && b->sw == a->sw && !used && !failures_has(d, spare_item))
			spare = q;
	}
	if (spare == UINT32_MAX) {
		sb_printf(say, "; no spare port of %s on %s to move %s to", host,
			  f->switches[a->sw].name, item);
		return;
	}
	snprintf(spare_item, sizeof(spare_item), "%s:%u", host, spare);
	uint32_t sw = a->sw; /* a is the running config's, which goes */
	if (ctl_recover(d->w_ctl, &did, &err) < 0) {
		sb_printf(say,
			  "; %s not moved: an unfinished transaction could not be repaired "
			  "first: %s",
			  item, err.msg);
		return;
	}
	d->w_moves = xrealloc(d->w_moves, (d->nw_moves + 1) * sizeof(*d->w_moves));
	d->w_moves[d->nw_moves++] = (struct port_move){xstrdup(host), p, spare};
	if (ofcd_fabric_with_topology(d, d->w_cfg, f->topology.spec, false, &nf, &err) < 0 ||
	    ofcd_open_ctl(d, nf, false, &nc, &err) < 0) {
		sb_printf(say, "; %s not moved to %s: %s", item, spare_item, err.msg);
		goto undo;
	}
	ctl_handover(d->w_ctl, nc);
	ctl_quiet(nc, d->w_ctl);
	if (ctl_plan(nc, &err) < 0 || ctl_apply(nc, 0, &res, &err) < 0) {
		sb_printf(say, "; moving %s to %s failed: %s%s", item, spare_item, err.msg,
			  res.rolled_back && res.rollback_ok ? " (rolled back)" : "");
		ctl_handover(nc, d->w_ctl);
		goto undo;
	}
	struct fabcfg *ncfg =
	    fabcfg_new(nf, d->w_cfg->yaml, d->w_cfg->yaml_len, d->w_cfg->path, d->o.lp_solver);
	ncfg->coll = d->w_cfg->coll;
	ncfg->size = d->w_cfg->size;
	nf = NULL;
	ofcd_ctl_close(d, d->w_ctl);
	d->w_ctl = nc;
	ctl_quiet(nc, NULL);
	fabcfg_unref(d->w_cfg);
	d->w_cfg = ncfg;
	if (moves_save(d, &err) < 0)
		ofcd_log_error(d, "", &err);
	sb_printf(say, "; %s moved to spare port %s on %s (transaction %llu, %u operation%s)", item,
		  spare_item, ncfg->f->switches[sw].name, (unsigned long long)res.txn,
		  res.ops_applied, res.ops_applied == 1 ? "" : "s");
	return;
undo:
	ofcd_ctl_close(d, nc);
	if (nf)
		fabric_free(nf);
	d->nw_moves--;
	free(d->w_moves[d->nw_moves].host);
}

/* ReportFailure: the reported set changes (and is persisted) or nothing
 * does; a lost port is re-wired onto a spare where the switch has one
 * (rewire); then the schedule is re-planned. */
void ofcd_run_failure(struct ofcd *d, struct job *j)
{
	struct answer an;
	struct ofc_error err = {0};
	char sentence[1000];

	answer_init(&an, j);
	if (d->w_damaged) {
		err.code = OFC_E_RUNTIME;
		snprintf(err.msg, sizeof(err.msg), "refused: %.400s; fix or remove it first",
			 d->w_damaged);
	}
	if (d->w_damaged || failures_report(d, j, &err) < 0) {
		if (!answer_fenced(d, &an, &err))
			answer_status(&an,
				      err.code == OFC_E_INPUT ? OFC__V1__STATUS__STATUS_INVALID
							      : OFC__V1__STATUS__STATUS_FAILED,
				      "%s", err.msg);
		an.t.state = "refused";
		j->outcome = "refused";
		response_pack(&an.r, &j->reply, &j->reply_len);
		arena_free(&an.a);
		return;
	}
	struct strbuf cause = STRBUF_INIT;
	sb_printf(&cause, "%s %s", j->target,
		  j->clear && !j->nitems ? "cleared"
		  : j->restore		 ? "restored"
					 : "failed");
	for (uint32_t i = 0; !j->restore && !j->clear && i < j->nitems; i++)
		rewire(d, j->items[i], &cause);
	ofcd_replan(d, j, cause.buf, sentence, sizeof(sentence));
	sb_free(&cause);
	an.t.state = "replanned";
	j->outcome = "replanned";
	answer_status(&an,
		      d->w_pub->no_schedule ? OFC__V1__STATUS__STATUS_FAILED
					    : OFC__V1__STATUS__STATUS_OK,
		      "%s", sentence);
	response_pack(&an.r, &j->reply, &j->reply_len);
	arena_free(&an.a);
}

/* ---- schedules ---------------------------------------------------------------------- */

/* The answer to GetSchedule: one Response holding the whole ofc.v1.Schedule.
 * (Concatenated pieces would merge under the protobuf rules, but protobuf-c
 * replaces a oneof member seen twice instead of merging it, so clients
 * built on it would lose all but the last piece.) The message tree is
 * built only when the schedule can fit in a frame: every transfer packs to
 * at least MIN_TRANSFER_BYTES (internal.h). */

/* The reply's message tree holds every transfer at once: true, with resp
 * set to the refusal, when that is over the request's memory limit. */
static bool reply_over_memory(const struct schedule_query *q, const struct schedule *s,
			      struct arena *a, Ofc__V1__Response *resp)
{
	uint64_t need = mem_resident() + schedule_pb_memory(s, true);
	char need_s[32], max_s[32];

	if (need <= schedule_memory_limit(q))
		return false;
	fmt_size(need_s, sizeof(need_s), need);
	fmt_size(max_s, sizeof(max_s), schedule_memory_limit(q));
	resp->status = OFC__V1__STATUS__STATUS_FAILED;
	resp->message = arena_printf(a,
				     "the reply's %zu transfers as messages need about %s, over "
				     "the memory limit of %s (--max-request-memory): " ASK_SUMMARY,
				     s->nxfers, need_s, max_s);
	return true;
}

/* GetSchedule on a server fabric: the fluid engine (docs/fluid.md) with its
 * defaults; the schedule's nodes are the network's vertices. */
void ofcd_run_schedule_fluid(struct job *j)
{
	/* The request's deadline, as run_schedule's: every phase checks it
	 * (the symmetry search ran 21 s past --max-request-time 5s). */
	struct ofc_clock clk = {.start = now_seconds()};
	struct schedule_query q = {
	    .fabric = j->cfg->f,
	    .collective = j->coll,
	    .size = j->size,
	    .chunks = j->chunks,
	    .max_memory = j->max_memory,
	    .clock = &clk,
	};
	struct fluid_query x = {.time_limit = j->max_time > 0 ? j->max_time : 0};
	struct fluid_answer fa;
	struct ofc_error err = {0};
	Ofc__V1__Response resp = OFC__V1__RESPONSE__INIT;
	struct arena a = {0};
	const struct schedule *s;
	char lim[32];

	resp.has_id = resp.has_status = 1;
	resp.id = j->req_id;
	fmt_size(lim, sizeof(lim), j->max_frame);
	if (j->max_time > 0) {
		clk.deadline = clk.start + j->max_time;
		clk.limit = j->max_time;
	}
	if (schedule_fluid(&q, &x, &fa, &err) < 0) {
		resp.status = err.code == OFC_E_RUNTIME ? OFC__V1__STATUS__STATUS_FAILED
							: OFC__V1__STATUS__STATUS_INVALID;
		resp.message = err.msg;
		response_pack(&resp, &j->reply, &j->reply_len);
		fluid_answer_free(&fa);
		return;
	}
	s = &fa.s;
	if (!j->summary_only && (double)s->nxfers * MIN_TRANSFER_BYTES > j->max_frame) {
		resp.status = OFC__V1__STATUS__STATUS_FAILED;
		resp.message =
		    arena_printf(&a,
				 "the fluid schedule (%zu transfers in %u steps) does not "
				 "fit in a frame of %s: " ASK_SUMMARY ", or run ofcd "
				 "with a larger --max-frame",
				 s->nxfers, s->nsteps, lim);
		response_pack(&resp, &j->reply, &j->reply_len);
		arena_free(&a);
		fluid_answer_free(&fa);
		return;
	}
	if (!j->summary_only && reply_over_memory(&q, s, &a, &resp)) {
		response_pack(&resp, &j->reply, &j->reply_len);
		arena_free(&a);
		fluid_answer_free(&fa);
		return;
	}
	resp.status = fa.verified ? OFC__V1__STATUS__STATUS_OK : OFC__V1__STATUS__STATUS_INTERNAL;
	resp.message =
	    !fa.verified
		? arena_printf(&a, "the fluid schedule failed verification: %s", fa.vr.error)
	    : fa.allreduce
		? arena_printf(&a,
			       "fluid allreduce on %s: a reduce-scatter (R* %.10g s/GB of shard at "
			       "T = %u, K = %u chunks) then an allgather (R* %.10g s/GB at T = %u, "
			       "K = %u), %u steps, verified",
			       j->cfg->f->name, fa.r.rstar, fa.r.hops, fa.rep.chunks, fa.r_ag.rstar,
			       fa.r_ag.hops, fa.rep_ag.chunks, s->nsteps)
		: arena_printf(&a,
			       "fluid %s on %s: R* %.10g s/GB at T = %u, objective %.6f, K = %u "
			       "chunks, %u steps, verified",
			       sched_collective_name(s->collective), j->cfg->f->name, fa.r.rstar,
			       fa.r.hops, fa.r.objective, fa.rep.chunks, s->nsteps);
	Ofc__V1__Schedule *h = schedule_header_msg(&a, s);
	Ofc__V1__Schedule *vx = schedule_vertices_msg(&a, fa.net);

	h->n_vertices = vx->n_vertices;
	h->vertices = vx->vertices;
	if (!j->summary_only) {
		h->n_steps = s->nsteps;
		h->steps = arena_array(&a, s->nsteps, sizeof(*h->steps));
		for (uint32_t t = 0; t < s->nsteps; t++)
			h->steps[t] = schedule_step_msg(&a, s, t)->steps[0];
	}
	resp.body_case = OFC__V1__RESPONSE__BODY_SCHEDULE;
	resp.schedule = h;
	if (protobuf_c_message_get_packed_size(&resp.base) > j->max_frame) {
		ofc__v1__response__init(&resp);
		resp.has_id = resp.has_status = 1;
		resp.id = j->req_id;
		resp.status = OFC__V1__STATUS__STATUS_FAILED;
		resp.message =
		    arena_printf(&a,
				 "the fluid schedule does not fit in a frame of %s: " ASK_SUMMARY
				 ", or run ofcd with a larger --max-frame",
				 lim);
	}
	response_pack(&resp, &j->reply, &j->reply_len);
	arena_free(&a);
	fluid_answer_free(&fa);
}

int ofcd_schedule_compute(const struct ofcd *d, struct job *j, struct ofc_clock *clk,
			  struct schedule_result *r, Ofc__V1__Response *resp, struct arena *a)
{
	struct schedule_query q = {
	    .fabric = j->cfg->f,
	    .spec = j->spec,
	    .files = j->spec_from_client ? &d->files : j->cfg->f->files,
	    .collective = j->coll,
	    .algorithm = j->algo,
	    .size = j->size,
	    .chunks = j->chunks,
	    .lowering = j->lowering,
	    .max_memory = j->max_memory,
	    .time_limit = j->max_time,
	    .clock = clk,
	};
	struct ofc_error err = {0};
	bool spec_error;

	clk->start = now_seconds();
	if (j->max_time > 0) {
		clk->deadline = clk->start + j->max_time;
		clk->limit = j->max_time;
	}
	if (schedule_compute(&q, r, &spec_error, &err) < 0 || schedule_check(r, &err) < 0) {
		char why[1024];

		resp->status = err.code == OFC_E_RUNTIME ? OFC__V1__STATUS__STATUS_FAILED
							 : OFC__V1__STATUS__STATUS_INVALID;
		resp->message = spec_error
				    ? arena_printf(a, "topology %s",
						   topo_spec_error(why, sizeof(why), j->spec, &err))
				    : arena_strdup(a, err.msg);
		return -1;
	}
	const struct schedule *s = &r->main->s;
	resp->status = s->verified ? OFC__V1__STATUS__STATUS_OK : OFC__V1__STATUS__STATUS_INTERNAL;
	resp->message = s->verified
			    ? arena_printf(a, "%s %s on %s: %u steps, %.6g us, verified",
					   s->algorithm, sched_collective_name(s->collective),
					   s->topology, s->nsteps, s->time_us)
			    : arena_printf(a, "the %s schedule failed verification: %s",
					   s->algorithm, r->main->verify_error);
	return 0;
}

Ofc__V1__Schedule *ofcd_schedule_head(struct arena *a, const struct schedule_result *r)
{
	Ofc__V1__Schedule *h = schedule_header_msg(a, &r->main->s), *x = schedule_extra_msg(a, r);

	schedule_msg_summary(h, x);
	h->n_links = x->n_links;
	h->links = x->links;
	return h;
}

void ofcd_run_schedule(const struct ofcd *d, struct job *j)
{
	struct ofc_clock clk = {0};
	struct schedule_query q = {.max_memory = j->max_memory};
	struct schedule_result r;
	Ofc__V1__Response resp = OFC__V1__RESPONSE__INIT;
	struct arena a = {0};
	char lim[32];

	resp.has_id = resp.has_status = 1;
	resp.id = j->req_id;
	fmt_size(lim, sizeof(lim), j->max_frame);
	if (ofcd_schedule_compute(d, j, &clk, &r, &resp, &a) < 0) {
		response_pack(&resp, &j->reply, &j->reply_len);
		arena_free(&a);
		return;
	}
	const struct schedule *s = &r.main->s;
	bool steps = !j->summary_only;
	if (steps && (double)s->nxfers * MIN_TRANSFER_BYTES > j->max_frame)
		goto too_big;
	if (steps && reply_over_memory(&q, s, &a, &resp)) {
		response_pack(&resp, &j->reply, &j->reply_len);
		arena_free(&a);
		schedule_result_free(&r);
		return;
	}
	Ofc__V1__Schedule *h = ofcd_schedule_head(&a, &r);
	if (steps) {
		h->n_steps = s->nsteps;
		h->steps = arena_array(&a, s->nsteps, sizeof(*h->steps));
		for (uint32_t t = 0; t < s->nsteps; t++)
			h->steps[t] = schedule_step_msg(&a, s, t)->steps[0];
	}
	resp.body_case = OFC__V1__RESPONSE__BODY_SCHEDULE;
	resp.schedule = h;
	if (protobuf_c_message_get_packed_size(&resp.base) > j->max_frame)
		goto too_big;
	response_pack(&resp, &j->reply, &j->reply_len);
	arena_free(&a);
	schedule_result_free(&r);
	return;
too_big:
	arena_free(&a);
	ofc__v1__response__init(&resp);
	resp.has_id = resp.has_status = 1;
	resp.id = j->req_id;
	resp.status = OFC__V1__STATUS__STATUS_FAILED;
	resp.message = arena_printf(&a,
				    "the %s schedule (%zu transfers in %u steps) does not fit in a "
				    "frame of %s: " ASK_SUMMARY ", ask with stream (ofc --socket "
				    "PATH schedule -o FILE streams), or run ofcd with a larger "
				    "--max-frame",
				    s->algorithm, s->nxfers, s->nsteps, lim);
	response_pack(&resp, &j->reply, &j->reply_len);
	arena_free(&a);
	schedule_result_free(&r);
}

/* ---- the threads ------------------------------------------------------------------------ */

void ofcd_run_job(struct ofcd *d, struct job *j)
{
	switch (j->kind) {
	case JOB_PROBE:
		ofcd_run_probe(d, j);
		break;
	case JOB_FAILURE:
		ofcd_run_failure(d, j);
		break;
	case JOB_PLAN:
		ofcd_run_plan(d, j);
		break;
	case JOB_RELEASE:
		ofcd_run_release(d, j);
		break;
	case JOB_TAKEOVER:
		ofcd_run_takeover(d, j);
		break;
	case JOB_SYNC:
		ofcd_run_sync(d, j);
		break;
	case JOB_SCHEDULE:
		if (j->get_plan)
			ofcd_run_get_plan(d, j);
		else if ((j->algo && strcmp(j->algo, "fluid") == 0) ||
			 (!j->algo && !j->spec && schedule_fluid_fabric(j->cfg->f)))
			ofcd_run_schedule_fluid(j);
		else
			ofcd_run_schedule(d, j);
		break;
	default:
		ofcd_run_mutation(d, j);
		break;
	}
}

static void finished(struct ofcd *d, struct job *j)
{
	struct note *n = xcalloc(1, sizeof(*n));

	n->job = j;
	ofcd_note(d, n);
}

void *ofcd_mutation_worker(void *arg)
{
	struct ofcd *d = arg;

	pthread_mutex_lock(&d->mu);
	for (;;) {
		struct job *j;

		while (!d->mjob && !d->workers_stop)
			pthread_cond_wait(&d->cond, &d->mu);
		if (!d->mjob)
			break;
		j = d->mjob;
		pthread_mutex_unlock(&d->mu);
		d->w_job = j;
		ofcd_run_job(d, j);
		metrics_devices_take(d, d->w_ctl);
		d->w_job = NULL;
		pthread_mutex_lock(&d->mu);
		d->mjob = NULL;
		finished(d, j);
	}
	pthread_mutex_unlock(&d->mu);
	return NULL;
}

void *ofcd_schedule_worker(void *arg)
{
	struct ofcd *d = arg;

	pthread_mutex_lock(&d->mu);
	for (;;) {
		struct job *j;

		while (!d->squeue && !d->workers_stop)
			pthread_cond_wait(&d->cond, &d->mu);
		if (!d->squeue)
			break;
		j = d->squeue;
		d->squeue = j->next;
		if (!d->squeue)
			d->squeue_tail = NULL;
		pthread_mutex_unlock(&d->mu);
		ofcd_run_job(d, j);
		finished(d, j);
		pthread_mutex_lock(&d->mu);
	}
	pthread_mutex_unlock(&d->mu);
	return NULL;
}
