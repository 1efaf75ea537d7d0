/* A replica's mutation worker following the store: taking over when it is
 * elected (JOB_TAKEOVER: the --config file read again, the lock, a repair
 * of what the last leader left, the store's state adopted) and syncing
 * while it follows (JOB_SYNC: the record and the journal's changes logged,
 * the state adopted again when more than the journal changed). */
#include "controller/ofcd/worker.h"

#include <stdlib.h>
#include <string.h>

/* Back to the config as read (d->w->base) with no moves or failures in
 * effect, before the store's state is adopted again (the leader's lost
 * ports with it: failures_load). */
static int reset_to_base(struct ofcd *d, struct ofc_error *err)
{
	if (d->w->cfg != d->w->base) {
		struct ctl *nc;

		if (ofcd_open_ctl(d, d->w->base->f, true, &nc, err) < 0)
			return -1;
		ctl_handover(d->w->ctl, nc);
		ctl_close(d->w->ctl);
		d->w->ctl = nc;
		fabcfg_unref(d->w->cfg);
		d->w->cfg = fabcfg_ref(d->w->base);
	}
	moves_clear(d);
	drained_clear(d);
	strv_free(d->w->reported, d->w->nreported);
	d->w->reported = NULL;
	d->w->nreported = 0;
	failures_by_host_clear(d);
	free(d->w->damaged);
	d->w->damaged = NULL;
	return 0;
}

/* The store's bytes of what a sync builds the config and the holds from,
 * to tell whether anything but the journal changed. */
static char *sync_bytes(struct ofcd *d, size_t *len)
{
	static const enum store_item items[] = {STORE_RECORD, STORE_FAILED, STORE_REWIRED,
						STORE_HELD,   STORE_LOST,   STORE_DRAINED};
	struct strbuf sb = STRBUF_INIT;

	for (size_t i = 0; i < ARRAY_SIZE(items); i++) {
		struct ofc_error e = {0};
		char *data = NULL;
		size_t n = 0;
		bool missing;

		if (store_get(d->store, d->w->base->f->name, items[i], (size_t)1 << 30, &data, &n,
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
	    ofcd_check_config(d, f, false, &e) < 0 || ofcd_validate(d, f, 0, &e) < 0 ||
	    (strcmp(f->name, d->w->base->f->name) != 0 &&
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
	fabcfg_unref(d->w->base);
	d->w->base = fabcfg_new(f, text, len, d->o.config_path, &d->o);
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
		 d->w->base->f->name, (unsigned long long)epoch);
	reread_base(d);
	if (reset_to_base(d, &err) < 0) {
		ofcd_log_error(d, "takeover: ", &err);
		return;
	}
	/* Nobody on this machine changes the fabric beside the leader. */
	if (ctl_lock(d->w->ctl, &err) < 0) {
		ofcd_log_error(d, "takeover: ", &err);
		ofc_error_clear(&err);
	}
	/* What the last leader left half-done is finished or undone, as a
	 * restarted ofcd does with its own journal. */
	if (ctl_recover(d->w->ctl, &did, &err) < 0) {
		ofcd_log_error(d, "recovery of an unfinished transaction failed: ", &err);
		ofc_error_clear(&err);
	} else if (did) {
		ofcd_log(d, OFCD_LOG_NOTICE,
			 "recovered an unfinished transaction from the journal the last leader "
			 "left");
	}
	free(d->w->sync_bytes);
	d->w->sync_bytes = NULL;
	/* (the holds checked against the config read again) */
	free(d->w->held_bytes);
	d->w->held_bytes = NULL;
	ofcd_adopt(d, false, true, &j->snap, &err);
	j->new_cfg = fabcfg_ref(d->w->pub);
	j->done_ms = unix_ms();
	ofcd_log(d, OFCD_LOG_NOTICE, "took over fabric %s (epoch %llu) in %.3f s",
		 d->w->base->f->name, (unsigned long long)epoch, now_seconds() - t0);
}

/* A follower's words for its log of what changed in the record and the
 * journal since the last sync (its watchers get the leader's own events,
 * from the store's event log: event_log.c drops these). */
static void sync_events(struct ofcd *d)
{
	struct ctl_record r;
	struct ofc_error e = {0};
	char msg[160];

	if (ctl_load_record_in(d->store, d->w->base->f->name, &r, &e) < 0)
		return;
	uint64_t gen = r.have_state ? r.generation : 0, jid = r.have_journal ? r.journal_id : 0;
	const char *phase = r.have_journal ? r.journal_phase : NULL;
	/* who wrote the journal, and the record */
	char jby[96], rby[96];
	snprintf(jby, sizeof(jby), "by %s%s (seen in etcd)", r.journal_replica ? "replica " : "",
		 r.journal_replica ? r.journal_replica : "the leader");
	snprintf(rby, sizeof(rby), "by %s%s (seen in etcd)", r.replica ? "replica " : "",
		 r.replica ? r.replica : "the leader");

	if (jid && jid != d->w->sync_jid)
		ofcd_post_event(d, OFC__V1__EVENT__KIND__KIND_TRANSACTION_STARTED, jid, NULL, jby,
				NULL, OFC_R_NONE);
	if (jid && phase && strcmp(phase, "rolling-back") == 0 &&
	    (jid != d->w->sync_jid || !d->w->sync_phase ||
	     strcmp(d->w->sync_phase, "rolling-back") != 0))
		ofcd_post_event(d, OFC__V1__EVENT__KIND__KIND_TRANSACTION_ROLLING_BACK, jid, NULL,
				jby, NULL, OFC_R_NONE);
	if (gen != d->w->sync_gen && gen) {
		snprintf(msg, sizeof(msg), "generation %llu, %s", (unsigned long long)gen, rby);
		ofcd_post_event(d, OFC__V1__EVENT__KIND__KIND_TRANSACTION_COMMITTED, gen, NULL, msg,
				NULL, OFC_R_NONE);
	} else if (!jid && d->w->sync_jid && gen == d->w->sync_gen) {
		ofcd_post_event(d, OFC__V1__EVENT__KIND__KIND_TRANSACTION_ROLLED_BACK,
				d->w->sync_jid, NULL, rby, NULL, OFC_R_NONE);
	}
	d->w->sync_gen = gen;
	d->w->sync_jid = jid;
	d->w->sync_phase = phase; /* journal_phase_name's: static strings */
	ctl_record_free(&r);
}

/* A sync's start: etcd read whole first when j->reload, so a deposed
 * replica shows what etcd holds, not what it last wrote or what its watch
 * has delivered so far. Returns whether this replica leads. */
static bool sync_start(struct ofcd *d, struct job *j)
{
	struct ofc_error e = {0};

	/* A linearizable read: every write that succeeded before it, the
	 * next leader's included, is in what the sync adopts. */
	if (j->reload && store_load(d->store, 2.0, &e) == 0) {
		free(d->w->sync_bytes); /* (adopted whatever they are) */
		d->w->sync_bytes = NULL;
		j->reloaded = store_epoch(d->store) == 0;
	} else if (j->reload) {
		ofcd_log(d, OFCD_LOG_WARNING,
			 "deposed, and etcd could not be read again (%s): shown stale until it is",
			 e.msg);
	}
	return store_epoch(d->store) != 0;
}

void ofcd_run_sync(struct ofcd *d, struct job *j)
{
	struct ofc_error err = {0};
	bool leading = sync_start(d, j);
	size_t len;
	char *bytes;

	/* The leader's state is what it wrote, unless a damaged item waits
	 * for an operator's fix. */
	if (leading && !d->w->damaged)
		return;
	sync_events(d);
	bytes = sync_bytes(d, &len);
	if (d->w->sync_bytes && len == d->w->sync_len &&
	    memcmp(bytes, d->w->sync_bytes, len) == 0) {
		/* the journal alone: the same config, a new snapshot */
		char why[400];

		free(bytes);
		j->snap = snapshot_build(d, d->state_dir, d->w->ctl, d->w->pub, why, sizeof(why));
		held_state(d, j->snap);
		return;
	}
	free(d->w->sync_bytes);
	d->w->sync_bytes = bytes;
	d->w->sync_len = len;
	if (reset_to_base(d, &err) < 0) {
		ofcd_log_error(d, "sync: ", &err);
		return;
	}
	ofcd_adopt(d, false, leading, &j->snap, &err);
	j->new_cfg = fabcfg_ref(d->w->pub);
}
