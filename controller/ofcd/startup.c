/* ofcd's start and what a start shares with a takeover: the --config file
 * read and checked, the lock, a repair of what a crash left, and the
 * running config adopted from what the store holds (the record's topology
 * and moved ports, the failures and the holds in effect). */
#include "controller/ofcd/worker.h"

#include <stdlib.h>
#include <string.h>

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

	if (same_moves(rec->moves, rec->nmoves, d->w->moves, d->w->nmoves))
		return;
	if (save)
		ofcd_log(
		    d, OFCD_LOG_NOTICE,
		    "the record of transaction %llu moves %u host port%s onto spares, %s.rewired "
		    "listed %u: the record's are what the devices hold (%s.rewired written again)",
		    (unsigned long long)rec->generation, rec->nmoves, rec->nmoves == 1 ? "" : "s",
		    d->w->cfg->f->name, d->w->nmoves, d->w->cfg->f->name);
	moves_clear(d);
	d->w->moves = xcalloc((size_t)rec->nmoves + 1, sizeof(*d->w->moves));
	for (uint32_t i = 0; i < rec->nmoves; i++)
		d->w->moves[d->w->nmoves++] = (struct port_move){
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
	const char *fabric = d->w->cfg->f->name;
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
	if (!d->w->damaged)
		d->w->damaged = xstrdup(buf);
	ofcd_log(d, OFCD_LOG_ERR, "%s (mutations are refused until it is fixed)", buf);
}

/* The running config from what the store holds, on top of d->w->cfg (the
 * config as read): the record's topology and moved ports (over .rewired's,
 * which a leader writes again to match), the failures in effect; and its
 * snapshot. strict (the start): a damaged .failed or .rewired stops it
 * (-1); else it is left out of effect (damaged_item). leader: it may
 * write the store. */
int ofcd_adopt(struct ofcd *d, bool strict, bool leader, struct snapshot **snap,
	       struct ofc_error *err)
{
	struct fabric *f = d->w->cfg->f;
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
	/* Switch ports drained before a restart (or by the leader) are still. */
	if (drained_load(d, f->name, &e) < 0) {
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
		if (other ||
		    ((d->w->nmoves || d->w->ndrained) && f->topology.present && f->nswitches)) {
			const char *spec = other ? fab : f->topology.spec;
			struct fabric *nf;
			struct ctl *nc;
			struct ofc_error e2 = {0};

			if (ofcd_fabric_with_topology(d, d->w->cfg, spec, false, &nf, &e2) == 0 &&
			    ofcd_open_ctl(d, nf, false, &nc, &e2) == 0) {
				struct fabcfg *nc_cfg =
				    fabcfg_new(nf, d->w->cfg->yaml, d->w->cfg->yaml_len,
					       d->w->cfg->path, &d->o);

				if (other)
					ofcd_log(d,
						 strict || leader ? OFCD_LOG_NOTICE : OFCD_LOG_INFO,
						 "serving the recorded topology %s (the config "
						 "asks for %s; reload or reconfigure to change it)",
						 fab, f->topology.spec);
				if (d->w->nmoves)
					ofcd_log(
					    d, strict || leader ? OFCD_LOG_NOTICE : OFCD_LOG_INFO,
					    "%u host port%s moved to spare ones (%s.rewired)",
					    d->w->nmoves, d->w->nmoves == 1 ? "" : "s", f->name);
				ctl_handover(d->w->ctl, nc);
				ofcd_ctl_close(d, d->w->ctl);
				fabcfg_unref(d->w->cfg);
				d->w->ctl = nc;
				d->w->cfg = nc_cfg;
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
					 spec, d->w->nmoves, d->w->nmoves == 1 ? "" : "s", e2.msg,
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
	if (failures_load(d, d->w->cfg->f->name, &e) < 0) {
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
	fabcfg_unref(d->w->pub);
	d->w->pub = failures_publish(d);
	if (d->w->pub->nfailed)
		ofcd_log(d, strict || leader ? OFCD_LOG_NOTICE : OFCD_LOG_INFO,
			 "%u reported failure%s in effect%s%s", d->w->pub->nfailed,
			 d->w->pub->nfailed == 1 ? "" : "s", d->w->pub->no_schedule ? ": " : "",
			 d->w->pub->no_schedule ? d->w->pub->no_schedule : "");
	*snap = snapshot_build(d, d->state_dir, d->w->ctl, d->w->pub, why, sizeof(why));
	held_state(d, *snap);
	if (why[0])
		ofcd_log(d, OFCD_LOG_WARNING, "%s", why);
	return 0;
}

int ofcd_start(struct ofcd *d, struct snapshot **snap, struct fabcfg **cfg, struct ofc_error *err)
{
	struct fabric *f;
	char *text;
	size_t len;
	bool did;

	if (read_file(d->o.config_path, CONFIG_MAX_BYTES, &text, &len, err) < 0)
		return -1;
	if (config_parse(d->o.config_path, text, len, &f, err) < 0 ||
	    ofcd_check_config(d, f, false, err) < 0 || ofcd_validate(d, f, 0, err) < 0) {
		if (f)
			fabric_free(f);
		free(text);
		return -1;
	}
	ofcd_trust_config(d, f);
	d->w->cfg = fabcfg_new(f, text, len, d->o.config_path, &d->o);
	d->w->base = fabcfg_ref(d->w->cfg);
	free(text);
	/* A replica's state is etcd's: it leads, locks and
	 * repairs only once it is elected (JOB_TAKEOVER). */
	if (d->o.cluster && cluster_open(d, f->name, err) < 0)
		return -1;
	if (ofcd_open_ctl(d, f, true, &d->w->ctl, err) < 0)
		return -1;
	if (!d->clustered) {
		if (ctl_lock(d->w->ctl, err) < 0)
			return -1;
		/* A transaction a crash left (of ofcd or of `ofc apply`) is
		 * finished or undone before anything else. If the devices
		 * cannot be read now, the daemon serves anyway and every
		 * mutation tries again first. */
		if (ctl_recover(d->w->ctl, &did, err) < 0) {
			ofcd_log_error(d, "recovery of an unfinished transaction failed: ", err);
			ofc_error_clear(err);
		} else if (did) {
			ofcd_log(d, OFCD_LOG_NOTICE,
				 "recovered an unfinished transaction from the journal");
		}
	}
	if (ofcd_adopt(d, true, !d->clustered, snap, err) < 0)
		return -1;
	*cfg = fabcfg_ref(d->w->pub);
	return 0;
}
