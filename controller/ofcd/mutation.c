/* The mutation worker's jobs that change the fabric: ApplyConfig,
 * Reconfigure (of a topology, a workload's pick, a phase, a partition),
 * reloads and releases, each the transaction of controller/reconfig on a
 * new validated fabric; device probes; ReportFailure with the re-wiring of
 * a lost port onto a spare. The answers are built here (answer.c's
 * helpers); the loop sends them. */
#include "controller/export/export.h"
#include "controller/ofcd/answer.h"
#include "controller/ofcd/worker.h"

#include <stdlib.h>
#include <string.h>

/* ---- mutations ------------------------------------------------------------------------ */

/* The new fabric a mutation asks for, and its shared config. */
int ofcd_build_target(struct ofcd *d, struct job *j, struct answer *an, struct fabcfg **out)
{
	struct ofc_error err = {0};
	struct fabric *f = NULL;
	const struct fabric *cur = d->w->cfg->f;

	*out = NULL;
	/* A commit the hosts' LLDP did not confirm, undone: the config (and
	 * its topology) that ran before it, as it was. */
	if (j->undo) {
		*out = fabcfg_ref(j->undo_cfg);
		return 0;
	}
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
		/* Drained switch ports stay dark under a new config too. */
		if (f)
			drained_apply(d, f);
		/* (a request: topology: auto picked within its time limit) */
		if (!f || ofcd_check_config(d, f, from_api, &err) < 0 ||
		    ofcd_validate(d, f, d->o.max_request_time, &err) < 0) {
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
		*out = fabcfg_new(f, j->yaml, j->yaml_len, j->filename, &d->o);
		return 0;
	}
	/* Reconfigure of a partition: the running config as it is; the plan
	 * (ofcd_run_mutation) aims at the partition alone (one made of hosts at
	 * run time is built there, held.c). */
	if (j->partition && j->nhosts) {
		*out = fabcfg_ref(d->w->cfg);
		return 0;
	}
	if (j->partition) {
		if (!fabric_find_partition(cur, j->partition)) {
			answer_status(an, OFC__V1__STATUS__STATUS_NOT_FOUND,
				      "fabric '%s' has no partition '%.64s' any more", cur->name,
				      j->partition);
			return -1;
		}
		*out = fabcfg_ref(d->w->cfg);
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

		if (ofcd_phase_spec(d, d->w->cfg, j, &ps, &err) < 0 ||
		    ofcd_fabric_with_topology(d, d->w->cfg, ps, false, &f, &err) < 0) {
			free(ps);
			answer_status(an,
				      err.code == OFC_E_RUNTIME ? OFC__V1__STATUS__STATUS_FAILED
								: OFC__V1__STATUS__STATUS_INVALID,
				      "%s", err.msg);
			return -1;
		}
		free(ps);
		an->t.target = j->target;
		*out = fabcfg_new(f, d->w->cfg->yaml, d->w->cfg->yaml_len, d->w->cfg->path, &d->o);
		(*out)->coll = d->w->cfg->coll;
		(*out)->size = d->w->cfg->size;
		return 0;
	}
	if (j->workload) {
		if (ofcd_pick_topology(d, d->w->cfg, j, spec, sizeof(spec), &err) < 0) {
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
	if (ofcd_fabric_with_topology(d, d->w->cfg, want, j->spec_from_client, &f, &err) < 0) {
		answer_status(an, OFC__V1__STATUS__STATUS_INVALID, "%s", err.msg);
		return -1;
	}
	*out = fabcfg_new(f, d->w->cfg->yaml, d->w->cfg->yaml_len, d->w->cfg->path, &d->o);
	if (j->workload) {
		(*out)->coll = j->coll;
		(*out)->size = j->size;
	} else {
		(*out)->coll = d->w->cfg->coll;
		(*out)->size = d->w->cfg->size;
	}
	return 0;
}

/* A dry run's answer: the counts, the switching time and the plan as `ofc
 * plan` words it and device by device (its operations, then its words,
 * left out when they would not fit a frame, and said). */
static void answer_plan(const struct ofcd *d, struct answer *an, const struct reconfigure_result *r,
			const char *target)
{
	uint32_t room = d->o.max_frame ? d->o.max_frame : OFCD_MAX_FRAME_DEFAULT;
	const struct ctl *nc = r->planned;
	char est[96];

	/* the rest of the answer is a few hundred bytes */
	txn_planned_msg(&an->a, r, room >= 4096 ? room - 4096 : 0, &an->t);
	ctl_plan_seconds_text(nc, est, sizeof(est));
	answer_status(an, OFC__V1__STATUS__STATUS_OK,
		      "%u operation%s on %u device%s would take fabric '%s' to %s%s%s%s%s",
		      an->t.operations, an->t.operations == 1 ? "" : "s", nc->ndevs,
		      nc->ndevs == 1 ? "" : "s", nc->fabric->name, target, est[0] ? " (" : "", est,
		      est[0] ? ")" : "", an->t.plan ? "" : "; the plan's lines do not fit a frame");
}

/* A workload's answer, once committed: the schedule it gets on the picked
 * topology (its summary), or the answer as it is when none is found. */
static void answer_workload_schedule(const struct ofcd *d, const struct job *j, struct answer *an)
{
	struct planner_summary_ask q = {.plain = true};
	struct ofc_error err = {0};
	Ofc__V1__Schedule *h = planner_summary(d, d->w->pub, j->coll, j->size, &q, &an->a, &err);

	if (!h)
		return;
	an->t.schedule = h;
	answer_status(an, OFC__V1__STATUS__STATUS_OK,
		      "%s; topology %s picked for %s: %s takes %u steps, %.6g us (verified)",
		      an->r.message, j->target, sched_collective_name(j->coll), h->algorithm,
		      h->num_steps, h->time_us);
}

/* A mutation on its way through reconfigure_run: what its callbacks
 * answer into and make. */
struct mutation {
	struct ofcd *d;
	struct job *j;
	struct answer *an;
	struct fabcfg *ncfg;
	struct partition rtp; /* a run-time partition (held.c) */
	struct held_stage hs;
	/* Where its time went (the log's "took" line): now_seconds() as the
	 * worker took it, started and finished making its target, had read
	 * the devices, was aimed, and checked. */
	double t_start, t_target, t_opened, t_read, t_aimed, t_checked;
	double t_snap; /* the snapshot built (then the holds' view, the answer) */
	bool ahead;    /* its plan was made ahead (plan_ahead.c) */
};

/* After the repair: the new fabric j asks for and its ctl beside the
 * running one, which hands it the lock. Until it commits, it speaks for
 * the running devices only where it reaches them as they run: a config's
 * other credentials file or address failing is its own error (in the
 * answer), not the device lost for watchers and the state. -1: m->an says
 * why. */
static int mutation_target(void *ctx, struct ctl **out, struct ofc_error *err)
{
	struct mutation *m = ctx;
	struct ofcd *d = m->d;
	struct job *j = m->j;

	m->t_target = now_seconds();
	if (ofcd_build_target(d, j, m->an, &m->ncfg) < 0)
		return -1;
	if (j->nhosts && held_make(d, m->ncfg->f, j->partition, j->hosts, j->nhosts, j->spec,
				   &m->rtp, err) < 0) {
		answer_status(m->an,
			      err->code == OFC_E_RUNTIME ? OFC__V1__STATUS__STATUS_FAILED
							 : OFC__V1__STATUS__STATUS_INVALID,
			      "%s", err->msg);
		return -1;
	}
	m->an->t.fabric = arena_strdup(&m->an->a, m->ncfg->f->name);
	if (ofcd_open_next_ctl(d, m->ncfg->f, out, err) < 0) {
		answer_status(m->an, OFC__V1__STATUS__STATUS_INVALID, "%s", err->msg);
		return -1;
	}
	m->t_opened = now_seconds();
	return 0;
}

static void mutation_event(void *ctx, enum reconfigure_event ev, const struct reconfigure_result *r)
{
	struct mutation *m = ctx;

	(void)r;
	if (ev == RECONF_EV_READ)
		m->t_read = now_seconds();
}

/* Nothing but its owner changes a held partition's circuits: not a
 * whole-fabric Reconfigure, a config, another partition. A commit takes or
 * drops holds in its store write. */
static int mutation_check(void *ctx, struct ctl *nc, struct ofc_error *err)
{
	struct mutation *m = ctx;
	struct job *j = m->j;

	m->t_aimed = now_seconds();
	if (held_check_plan(m->d, nc, j->nhosts ? j->partition : "", err) < 0) {
		/* The way out, for a whole fabric's topology or workload. */
		if (j->kind == JOB_RECONFIGURE && !j->partition && !j->to_phase) {
			char was[sizeof(err->msg)];

			snprintf(was, sizeof(was), "%s", err->msg);
			ofc_error_set(err, err->code,
				      "%s; reconfigure --free-ports aims only the ports no "
				      "held partition has",
				      was);
		}
		return -1;
	}
	if (!j->dry_run) {
		held_stage(m->d, j, j->nhosts ? &m->rtp : NULL, m->ncfg->f, &m->hs);
		nc->commit_also = held_commit_also;
		nc->commit_also_ctx = &m->hs;
	}
	m->t_checked = now_seconds();
	return 0;
}

/* The partition's plan made ahead (plan_ahead.c), when what it read is
 * unchanged; else it is planned now, and the log says why. */
static int mutation_ahead(void *ctx, const struct ctl *c, const struct partition *p,
			  struct circuit **pc, uint32_t *npc, struct fabric_relabel *rep)
{
	struct mutation *m = ctx;
	const char *why;
	int rc = ahead_take(m->d, m->j->ahead, c, p, pc, npc, rep, &why);

	if (rc == 1)
		m->ahead = true;
	else
		ofcd_log(m->d, OFCD_LOG_INFO, "ticket %llu: %s: planned in its turn: %s",
			 (unsigned long long)m->j->ticket, m->j->target, why);
	return rc;
}

int ofcd_relabel_turn(struct ofcd *d, const struct fabcfg *cfg, const struct job *j,
		      const struct device_state *const *actual, double budget, struct circuit **pc,
		      uint32_t *npc, struct fabric_relabel *rep, struct ofc_error *err)
{
	return planner_relabel(d, &d->w->relabel, "relabel-turn", cfg, j->partition, j->hosts,
			       j->nhosts, j->spec, actual, budget, pc, npc, rep, err);
}

/* reconfigure_run's renumbering of the job's partition (relabel_ops):
 * p is m->rtp, made on m->ncfg's fabric f from the job's hosts and spec,
 * as the planner process makes it again. */
static int mutation_relabel(void *ctx, const struct fabric *f, const struct partition *p,
			    const struct device_state *const *actual, const struct relabel_opts *o,
			    struct circuit **pc, uint32_t *npc, struct fabric_relabel *rep,
			    struct ofc_error *err)
{
	struct mutation *m = ctx;

	if (f != m->ncfg->f || p != &m->rtp) /* (what the planner could not make again) */
		return ofc_error_set(err, OFC_E_RUNTIME,
				     "partition '%s': renumbered on another fabric than the job's",
				     p->name);
	return ofcd_relabel_turn(m->d, m->ncfg, m->j, actual, o->budget_s, pc, npc, rep, err);
}

/* (no whole fabric's: ofcd renumbers none, and keeps no numbering) */
static const struct relabel_ops mutation_relabel_ops = {.partition = mutation_relabel};

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

/* A repair first (a journal left by an earlier failure), then the new
 * fabric planned (a partition's ports alone for a partition: one made of
 * hosts at run time renumbered for fewest moves when asked, in a tenth of
 * a second, as the queue plans 600 jobs a minute), checked against the
 * holds, and answered (a dry run) or applied and committed. */
static int mutation_reconfigure(struct mutation *m, struct reconfigure_result *r,
				struct ofc_error *err)
{
	struct job *j = m->j;
	struct reconfigure_req q = {
	    .ctl = m->d->w->ctl,
	    .recover = true,
	    .target = mutation_target,
	    .partition = j->nhosts ? &m->rtp : NULL,
	    .partition_name = j->nhosts ? NULL : j->partition,
	    .relabel = j->nhosts && j->relabel,
	    .relabel_opts = {.budget_s = RELABEL_BUDGET_S},
	    .relabel_ops = &mutation_relabel_ops,
	    .ahead = j->ahead ? mutation_ahead : NULL,
	    .check = mutation_check,
	    .on_event = mutation_event,
	    .dry_run = j->dry_run,
	    .ctx = m,
	};
	const struct partition **keep = NULL;

	/* (the holds as the worker has them now: it alone changes them) */
	if (j->free_ports && m->d->w->nheld) {
		keep = xcalloc(m->d->w->nheld, sizeof(*keep));
		for (uint32_t i = 0; i < m->d->w->nheld; i++)
			keep[i] = &m->d->w->held[i].p;
		q.free_ports = true;
		q.keep = keep;
		q.nkeep = m->d->w->nheld;
	}
	int rc = reconfigure_run(&q, r, err);
	free(keep);
	return rc;
}

/* A plan or commit on the free ports alone: which partitions kept their
 * circuits, appended to the answer's message. */
static void answer_free_ports(const struct ofcd *d, struct answer *an,
			      const struct reconfigure_result *r)
{
	struct strbuf sb = STRBUF_INIT;

	for (uint32_t i = 0; i < d->w->nheld; i++)
		sb_printf(&sb, "%s'%s'", i ? ", " : "", d->w->held[i].p.name);
	if (!sb.len)
		answer_status(an, OFC__V1__STATUS__STATUS_OK,
			      "%s; on the free ports: no partition is held, so every port is",
			      an->r.message);
	else
		answer_status(an, OFC__V1__STATUS__STATUS_OK,
			      "%s; on the free ports alone: %u cross-connect%s of the held "
			      "partition%s %s left as %s",
			      an->r.message, r->kept_circuits, r->kept_circuits == 1 ? "" : "s",
			      d->w->nheld == 1 ? "" : "s", sb.buf,
			      r->kept_circuits == 1 ? "it is" : "they are");
	sb_free(&sb);
}

/* Where a mutation's time went, for the log (INFO): each stage it reached,
 * from the worker taking it to its answer built. */
static void log_took(struct ofcd *d, const struct job *j, const struct mutation *m,
		     double renumbering, double t_done)
{
	const double t[] = {m->t_start,	  m->t_target, m->t_opened, m->t_read,	  m->t_aimed,
			    m->t_checked, t_done,      m->t_snap,   now_seconds()};
	static const char *const what[] = {"recover", "target",	     "read",	 "aim",
					   "check",   "transaction", "snapshot", "holds"};
	struct strbuf sb = STRBUF_INIT;
	double last = t[0];

	sb_printf(&sb, "total %.3f s", t[ARRAY_SIZE(t) - 1] - t[0]);
	for (uint32_t i = 1; i < ARRAY_SIZE(t); i++) {
		if (t[i] <= 0 || (i == 6 && t[5] <= 0)) /* (a transaction after a check) */
			continue;
		sb_printf(&sb, ", %s %.3f s", what[i - 1], t[i] - last);
		if (i == 4)
			sb_printf(&sb, ", renumbering%s %.3f s", m->ahead ? " ahead" : "",
				  renumbering);
		last = t[i];
	}
	ofcd_log(d, OFCD_LOG_INFO, "ticket %llu: %s %s: took: %s", (unsigned long long)j->ticket,
		 job_kind_name(j->kind), j->target, sb.buf);
	sb_free(&sb);
}

void ofcd_run_mutation(struct ofcd *d, struct job *j)
{
	struct answer an;
	struct ofc_error err = {0};
	struct mutation m = {.d = d, .j = j, .an = &an, .t_start = now_seconds()};
	struct reconfigure_result r = {0};
	struct ctl *nc = NULL;
	bool touched = false;
	char why[400];
	double t_done = 0;

	answer_init(&an, j);
	/* What a rollback returns to, should the hosts not confirm the wiring. */
	if (j->verify_wiring_ms && !j->dry_run && !j->undo_cfg)
		j->undo_cfg = fabcfg_ref(d->w->cfg);
	/* Damaged state in etcd is not overwritten. */
	if (d->w->damaged) {
		answer_status(&an, OFC__V1__STATUS__STATUS_FAILED,
			      "refused: %s; fix or remove it first", d->w->damaged);
		goto out;
	}
	if (j->nhosts && !held_may(d, j, why, sizeof(why))) {
		answer_status(&an, OFC__V1__STATUS__STATUS_DENIED, "%s", why);
		goto out;
	}
	int rc = mutation_reconfigure(&m, &r, &err);
	t_done = now_seconds();
	nc = r.planned;
	touched = r.recovered;
	if (rc < 0 && r.stage == RECONF_RECOVER) {
		if (!answer_fenced(d, &an, &err))
			answer_status(&an, OFC__V1__STATUS__STATUS_FAILED,
				      "an unfinished transaction could not be repaired first: %s",
				      err.msg);
		goto out;
	}
	if (rc < 0 && r.stage == RECONF_TARGET)
		goto out; /* (answered) */
	if (rc < 0 && r.stage != RECONF_APPLY) {
		/* (a read the fence refused: this replica may not lead any more,
		 * and the client's resend goes to the one that does) */
		if (!answer_fenced(d, &an, &err))
			answer_status(&an, OFC__V1__STATUS__STATUS_FAILED, "%s%s",
				      r.stage == RECONF_READ ? "cannot read the devices: " : "",
				      err.msg);
		ctl_handover(nc, d->w->ctl);
		goto out;
	}
	if (j->dry_run) {
		answer_plan(d, &an, &r, j->target);
		if (j->free_ports)
			answer_free_ports(d, &an, &r);
		j->outcome = "planned";
		ctl_handover(nc, d->w->ctl);
		goto out;
	}
	touched = true;
	nc->commit_also = NULL;
	const struct ctl_result res = r.txn;
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
		ofcd_ctl_close(d, d->w->ctl);
		d->w->ctl = nc;
		nc = NULL;
		ctl_quiet(d->w->ctl, NULL);
		/* held from now on; the ctl's pointer would outlive rtp */
		if (j->nhosts)
			d->w->ctl->partition = NULL;
		held_committed(&m.hs, j->nhosts ? &m.rtp : NULL, res.txn, res.ops_applied);
		fabcfg_unref(d->w->cfg);
		d->w->cfg = m.ncfg;
		m.ncfg = NULL;
		/* A new config describes the wiring afresh: its circuits are
		 * what was applied, so the moves are over. */
		if (j->kind == JOB_APPLY_CONFIG || j->kind == JOB_RELOAD)
			ofcd_drop_moves(d);
		/* The failures still in effect apply to the new config too. */
		fabcfg_unref(d->w->pub);
		d->w->pub = failures_publish(d);
		j->new_cfg = fabcfg_ref(d->w->pub);
		if (j->kind != JOB_RECONFIGURE)
			ofcd_post_event(d, OFC__V1__EVENT__KIND__KIND_CONFIG_APPLIED, res.txn, NULL,
					j->filename, NULL, OFC_R_NONE);
	} else if (answer_fenced(d, &an, &err)) {
		/* deposed mid-way: the leader after it repairs it */
		an.t.state = "stopped";
		j->outcome = "stopped";
		ctl_handover(nc, d->w->ctl);
	} else {
		answer_failed(j, &an, &res, &err);
		ctl_handover(nc, d->w->ctl);
	}
	if (an.r.status == OFC__V1__STATUS__STATUS_OK && j->workload && !j->dry_run)
		answer_workload_schedule(d, j, &an);
	if (an.r.status == OFC__V1__STATUS__STATUS_OK && j->free_ports)
		answer_free_ports(d, &an, &r);
out:
	if (touched) {
		j->snap = snapshot_build(d, d->state_dir, d->w->ctl, d->w->pub, why, sizeof(why));
		m.t_snap = now_seconds();
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
	fabcfg_unref(m.ncfg);
	held_stage_free(&m.hs);
	held_partition_free(&m.rtp);
	response_pack(&an.r, &j->reply, &j->reply_len);
	arena_free(&an.a);
	log_took(d, j, &m, r.relabel.seconds, t_done);
	reconfigure_result_free(&r);
}

void ofcd_run_release(struct ofcd *d, struct job *j)
{
	struct answer an;
	struct ofc_error err = {0};
	char why[400];

	double t[4] = {now_seconds()}; /* taken, released, snapshot, holds */

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
		t[1] = now_seconds();
		j->snap = snapshot_build(d, d->state_dir, d->w->ctl, d->w->pub, why, sizeof(why));
		if (why[0])
			ofcd_log(d, OFCD_LOG_WARNING, "%s", why);
		t[2] = now_seconds();
		held_state(d, j->snap);
		t[3] = now_seconds();
		ofcd_log(d, OFCD_LOG_INFO,
			 "ticket %llu: %s %s: took: total %.3f s, release %.3f s, snapshot %.3f s, "
			 "holds %.3f s",
			 (unsigned long long)j->ticket, job_kind_name(j->kind), j->target,
			 t[3] - t[0], t[1] - t[0], t[2] - t[1], t[3] - t[2]);
	}
	j->outcome = an.t.state;
	response_pack(&an.r, &j->reply, &j->reply_len);
	arena_free(&an.a);
}

/* Read every device: reachability (device lost / back events come from
 * ctl) and whether each still holds what the record says. */
void ofcd_run_probe(struct ofcd *d, struct job *j)
{
	struct ctl *c = d->w->ctl;
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
		/* The schedule first, then the lost ports: a follower that
		 * syncs on these finds the leader's schedule for them in the
		 * store already (no client waits on a probe's answer). */
		state_schedule_publish(d, j->share);
		fabcfg_unref(j->share);
		j->share = NULL;
		failures_lost_share(d);
	}
}

/* ---- failures -------------------------------------------------------------------------- */

/* Which attachment of f's wiring holds each host port: at[first[h] + p]
 * (UINT32_MAX: a dark port), built once per failure report and again when
 * a move changes the running config. A scan of the wiring for each failed
 * port was (1% of the ports) x (every port): 6-7 ms at 8,192 hosts, and 64
 * times that at 65,536. */
struct port_wires {
	const struct fabric *f;
	uint32_t *first, *at;
};

static void port_wires_free(struct port_wires *w)
{
	free(w->first);
	free(w->at);
	memset(w, 0, sizeof(*w));
}

static void port_wires_build(struct port_wires *w, const struct fabric *f)
{
	size_t n = 0;

	port_wires_free(w);
	w->f = f;
	w->first = xcalloc((size_t)f->nhosts + 1, sizeof(*w->first));
	for (uint32_t h = 0; h < f->nhosts; h++) {
		w->first[h] = (uint32_t)n;
		n += f->hosts[h].ports;
	}
	w->first[f->nhosts] = (uint32_t)n;
	w->at = xmalloc((n + 1) * sizeof(*w->at));
	memset(w->at, 0xff, (n + 1) * sizeof(*w->at));
	for (uint32_t i = f->nwiring; i-- > 0;) { /* (the first one wins, as a scan found it) */
		const struct attachment *a = &f->wiring[i];

		if (a->host < f->nhosts && a->host_port < f->hosts[a->host].ports)
			w->at[w->first[a->host] + a->host_port] = i;
	}
}

/* The attachment of host port (h, p) of f, or NULL (w built for f first
 * when it was built for none or another). */
static const struct attachment *attached(struct port_wires *w, const struct fabric *f, uint32_t h,
					 uint32_t p)
{
	if (w->f != f)
		port_wires_build(w, f);
	if (h >= f->nhosts || p >= f->hosts[h].ports)
		return NULL;
	uint32_t i = w->at[w->first[h] + p];
	return i == UINT32_MAX ? NULL : &f->wiring[i];
}

/* A re-wiring on its way through reconfigure_run. */
struct rewiring {
	struct ofcd *d;
	struct port_move move; /* (host borrowed) */
	struct fabric *nf;
};

/* After the repair: the running config with one more port move, and its
 * ctl beside the running one (which hands it the lock; quiet where it
 * reaches a device otherwise). */
static int rewired_target(void *ctx, struct ctl **out, struct ofc_error *err)
{
	struct rewiring *rw = ctx;
	struct ofcd *d = rw->d;

	d->w->moves = xrealloc(d->w->moves, (d->w->nmoves + 1) * sizeof(*d->w->moves));
	d->w->moves[d->w->nmoves++] =
	    (struct port_move){xstrdup(rw->move.host), rw->move.from, rw->move.to};
	if (ofcd_fabric_with_topology(d, d->w->cfg, d->w->cfg->f->topology.spec, false, &rw->nf,
				      err) < 0 ||
	    ofcd_open_next_ctl(d, rw->nf, out, err) < 0)
		return -1;
	return 0;
}

/* Re-wiring around a lost port: when host port `item` (HOST:PORT)
 * carries the topology and the same host has a spare port (one the topology
 * leaves dark, not failed, not moved) cabled to the same switch, move the
 * port's circuits onto the spare in one transaction (the running config
 * with one more port move: validation puts the circuits on the spare's
 * switch port), and keep the move (STATE_DIR/FABRIC.rewired). The failed
 * port is then dark and the graph whole again. What happened goes to say. */
#define REWIRE_SAY_MAX 400 /* bytes of the answer for the ports' moves */

static void rewire(struct ofcd *d, const char *item, struct port_wires *wires, struct strbuf *say)
{
	const struct fabric *f = d->w->cfg->f;
	const char *colon = strrchr(item, ':');
	char host[NAME_MAX_LEN + 1], spare_item[NAME_MAX_LEN + 16];
	struct ofc_error err = {0};
	struct fabric *nf = NULL;
	struct ctl *nc = NULL;
	int h;

	if (!colon || (size_t)(colon - item) > NAME_MAX_LEN || !f->ports.to || !f->nwiring ||
	    f->nrings || !f->topology.present)
		return;
	memcpy(host, item, (size_t)(colon - item));
	host[colon - item] = 0;
	uint32_t p = (uint32_t)strtoul(colon + 1, NULL, 10), spare = UINT32_MAX;
	if ((h = fabric_find_host(f, host)) < 0 || p >= f->ports.d)
		return; /* a dark port carries nothing */
	for (uint32_t i = 0; i < d->w->nmoves; i++)
		if (strcmp(d->w->moves[i].host, host) == 0 &&
		    (d->w->moves[i].from == p || d->w->moves[i].to == p))
			return; /* moved already (or the spare itself failing) */
	const struct attachment *a = attached(wires, f, (uint32_t)h, p);
	if (!a)
		return;
	for (uint32_t q = f->ports.d; q < f->hosts[h].ports && spare == UINT32_MAX; q++) {
		const struct attachment *b = attached(wires, f, (uint32_t)h, q);
		bool used = false;

		for (uint32_t i = 0; i < d->w->nmoves; i++)
			used |= strcmp(d->w->moves[i].host, host) == 0 && d->w->moves[i].to == q;
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
	struct rewiring rw = {.d = d, .move = {host, p, spare}};
	struct reconfigure_req q = {
	    .ctl = d->w->ctl, .recover = true, .target = rewired_target, .ctx = &rw};
	struct reconfigure_result r;
	int rc = reconfigure_run(&q, &r, &err);
	const struct ctl_result res = r.txn;

	enum reconfigure_stage stage = r.stage;

	nf = rw.nf;
	nc = r.planned;
	reconfigure_result_free(&r);
	if (rc < 0 && stage == RECONF_RECOVER) {
		sb_printf(say,
			  "; %s not moved: an unfinished transaction could not be repaired "
			  "first: %s",
			  item, err.msg);
		return;
	}
	if (rc < 0 && stage == RECONF_TARGET) {
		sb_printf(say, "; %s not moved to %s: %s", item, spare_item, err.msg);
		goto undo;
	}
	if (rc < 0) {
		sb_printf(say, "; moving %s to %s failed: %s%s", item, spare_item, err.msg,
			  res.rolled_back && res.rollback_ok ? " (rolled back)" : "");
		ctl_handover(nc, d->w->ctl);
		goto undo;
	}
	struct fabcfg *ncfg =
	    fabcfg_new(nf, d->w->cfg->yaml, d->w->cfg->yaml_len, d->w->cfg->path, &d->o);
	ncfg->coll = d->w->cfg->coll;
	ncfg->size = d->w->cfg->size;
	nf = NULL;
	ofcd_ctl_close(d, d->w->ctl);
	d->w->ctl = nc;
	ctl_quiet(nc, NULL);
	fabcfg_unref(d->w->cfg);
	d->w->cfg = ncfg;
	port_wires_free(wires); /* (another wiring now; its address may be the old one's) */
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
	d->w->nmoves--;
	free(d->w->moves[d->w->nmoves].host);
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
	if (d->w->damaged) {
		err.code = OFC_E_RUNTIME;
		snprintf(err.msg, sizeof(err.msg), "refused: %.400s; fix or remove it first",
			 d->w->damaged);
	}
	double t0 = now_seconds();
	if (d->w->damaged || failures_report(d, j, &err) < 0) {
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
	double t_rec = now_seconds() - t0;
	struct strbuf cause = STRBUF_INIT;
	sb_printf(&cause, "%s %s", j->target,
		  j->clear && !j->nitems ? "cleared"
		  : j->restore		 ? "restored"
					 : "failed");
	struct strbuf moves = STRBUF_INIT;
	struct port_wires wires = {0};
	for (uint32_t i = 0; !j->restore && !j->clear && i < j->nitems; i++)
		rewire(d, j->items[i], &wires, &moves);
	port_wires_free(&wires);
	/* Many ports at once (1% of a large fabric's): what became of each
	 * goes to the log, so the answer keeps room for the schedule. */
	if (moves.len > REWIRE_SAY_MAX) {
		ofcd_log(d, OFCD_LOG_NOTICE, "%s%s", cause.buf, moves.buf);
		sb_printf(&cause, "; what became of each port's circuits is in the log");
	} else if (moves.len) {
		sb_printf(&cause, "%s", moves.buf);
	}
	sb_free(&moves);
	ofcd_log(d, OFCD_LOG_DEBUG, "the failures recorded in %.3f s, re-wired in %.3f s", t_rec,
		 now_seconds() - t0 - t_rec);
	ofcd_replan(d, j, cause.buf, sentence, sizeof(sentence));
	sb_free(&cause);
	an.t.state = "replanned";
	j->outcome = "replanned";
	answer_status(&an,
		      d->w->pub->no_schedule ? OFC__V1__STATUS__STATUS_FAILED
					     : OFC__V1__STATUS__STATUS_OK,
		      "%s", sentence);
	response_pack(&an.r, &j->reply, &j->reply_len);
	arena_free(&an.a);
}
