/* Queued jobs run together. A round of Slurm jobs submitted at once queues
 * a prolog each; committed one at a time, each paid a read of every
 * switch, a transaction (the journal written, every switch driven and read
 * back, the record written) and a snapshot with the holds' view, and the
 * queue ran some 150 jobs a minute. Prologs on disjoint hosts change
 * disjoint ports, so they commit together: the loop hands the worker the
 * run of them queued behind the head (batch_gather.c); the worker aims one
 * run-time partition made of all their hosts at the union of their plans
 * (each made ahead by plan_ahead.c, or now), in one transaction, takes all
 * their holds in the record's write, and answers each job on its own: its
 * ticket, the transaction they share, its own operations. A prolog that
 * cannot join (refused, or its plan failed) runs on its own as before, and
 * so do all when the batch cannot be planned; a transaction that fails
 * fails every job of it, each with the words a lone one gets (the devices
 * are what failed, for each of them). Releases queued together are let go
 * of in one write of the store and one snapshot.
 *
 * A batch's journal is any transaction's: every device's before and target
 * state, under the name and topology of the batch's last partition (what
 * the record would say after committing them one by one), so a kill -9
 * mid-batch is repaired, finished or undone, as any other; the holds are
 * written with the record, never before it. */
#include "controller/ofcd/batch.h"
#include "controller/ofcd/answer.h"
#include "controller/ofcd/worker.h"

#include <stdlib.h>
#include <string.h>

/* ---- the mutation worker: what the jobs share --------------------------------------------- */

/* x on its own, as it runs outside a batch; answered in this turn. */
static void run_alone(struct ofcd *d, struct job *head, struct job *x)
{
	struct job *const one[1] = {x};

	d->w->job = x;
	d->w->txn_members = one; /* (its transaction's events carry its ticket) */
	d->w->ntxn_members = 1;
	if (x->kind == JOB_RELEASE)
		ofcd_run_release(d, x);
	else if (x->staged) /* (staged.c runs ofcd_run_mutation for an apply's last step) */
		ofcd_run_staged(d, x);
	else
		ofcd_run_mutation(d, x);
	d->w->txn_members = NULL;
	d->w->ntxn_members = 0;
	head->order[head->norder++] = x;
	d->w->job = head;
}

/* The events posted to `from` go to `to` (the job answered first). */
static void move_deferred(struct job *from, struct job *to)
{
	if (from == to || !from->deferred)
		return;
	from->deferred_tail->next = to->deferred;
	if (!to->deferred)
		to->deferred_tail = from->deferred_tail;
	to->deferred = from->deferred;
	from->deferred = from->deferred_tail = NULL;
}

/* The took line of a batch (INFO): its stages, each once for all its jobs. */
static void log_batch_took(struct ofcd *d, struct job *const *v, uint32_t n, const char *kind,
			   const char *stages)
{
	ofcd_log(d, OFCD_LOG_INFO, "ticket %llu: batch of %u %s (tickets %llu..%llu): took: %s",
		 (unsigned long long)v[0]->ticket, n, kind, (unsigned long long)v[0]->ticket,
		 (unsigned long long)v[n - 1]->ticket, stages);
}

/* ---- the prologs -------------------------------------------------------------------------- */

struct member {
	struct job *j;
	struct partition p; /* held_make's, on the running config */
	bool in;	    /* in the batch's transaction */
	bool later;	    /* its plan failed in the batch: on its own after it */
	uint32_t ops;	    /* the batch's operations on its ports */
};

struct batch {
	struct ofcd *d;
	struct member *m;
	uint32_t n;
	struct partition u; /* the partition of every member in */
	struct fabcfg *cfg; /* the running config (the ctl's fabric) */
	struct held_stage hs;
	/* where its time went (the took line), as struct mutation's */
	double t_start, t_target, t_opened, t_read, t_aimed, t_checked;
	double turn;	/* planning in the worker's turn */
	uint32_t ahead; /* plans made ahead taken */
	/* not planned after a repair: its events, for the first to run */
	bool recovered;
	struct note *stub;
};

/* b->u again: every member in, its name and topology the last one's. */
static void make_union(struct batch *b)
{
	struct partition *u = &b->u;
	const struct partition *last = NULL;
	uint32_t n = 0;

	held_partition_free(u);
	for (uint32_t k = 0; k < b->n; k++)
		n += b->m[k].in ? b->m[k].p.nmembers : 0;
	u->runtime = true;
	u->members = xcalloc(n + 1, sizeof(char *));
	u->member_locs = xcalloc(n + 1, sizeof(*u->member_locs));
	u->member_host = xcalloc(n + 1, sizeof(uint32_t));
	u->member_port = xcalloc(n + 1, sizeof(uint32_t));
	for (uint32_t k = 0; k < b->n; k++) {
		const struct partition *p = &b->m[k].p;

		if (!b->m[k].in)
			continue;
		for (uint32_t i = 0; i < p->nmembers; i++) {
			u->members[u->nmembers] = xstrdup(p->members[i]);
			u->member_host[u->nmembers] = p->member_host[i];
			u->member_port[u->nmembers++] = p->member_port[i];
		}
		last = p;
	}
	u->name = xstrdup(last ? last->name : "batch");
	u->topology.present = true;
	u->topology.self_loops = last ? last->topology.self_loops : SELF_LOOPS_LOOPBACK;
	u->topology.spec = xstrdup(last ? last->topology.spec : "");
}

static int batch_target(void *ctx, struct ctl **out, struct ofc_error *err)
{
	struct batch *b = ctx;
	struct ofcd *d = b->d;

	b->t_target = now_seconds();
	b->cfg = fabcfg_ref(d->w->cfg);
	if (ofcd_open_next_ctl(d, b->cfg->f, out, err) < 0)
		return -1;
	b->t_opened = now_seconds();
	return 0;
}

static void batch_event(void *ctx, enum reconfigure_event ev, const struct reconfigure_result *r)
{
	struct batch *b = ctx;

	(void)r;
	if (ev == RECONF_EV_READ)
		b->t_read = now_seconds();
}

/* Member m's circuits: its plan made ahead when what it read is
 * unchanged, else planned now (renumbered when asked, as ctl_partition
 * plans one, by the worker's planner process); -1 when that fails (the
 * log says why). */
static int member_plan(struct batch *b, struct member *m, const struct ctl *c, struct circuit **pc,
		       uint32_t *npc, struct fabric_relabel *rep)
{
	struct ofc_error err = {0};
	const char *why;
	double t = now_seconds();
	int rc;

	if (ahead_take(b->d, m->j->ahead, c, &m->p, pc, npc, rep, &why) == 1) {
		b->ahead++;
		return 0;
	}
	if (m->j->ahead)
		ofcd_log(b->d, OFCD_LOG_INFO, "ticket %llu: %s: planned in its turn: %s",
			 (unsigned long long)m->j->ticket, m->j->target, why);
	if (m->j->relabel) {
		const struct device_state **act = ctl_switch_states(c);

		rc = ofcd_relabel_turn(b->d, b->cfg, m->j, act, RELABEL_BUDGET_S, pc, npc, rep,
				       &err);
		free(act);
	} else {
		rc = partition_circuits(c->fabric, &m->p, pc, npc, &err);
	}
	b->turn += now_seconds() - t;
	if (rc < 0)
		ofcd_log(b->d, OFCD_LOG_INFO, "ticket %llu: %s: left out of the batch: %s",
			 (unsigned long long)m->j->ticket, m->j->target, err.msg);
	return rc;
}

/* reconfigure_run's `ahead`, asked after the read: every member's plan,
 * one after another, as the union's circuits (*p is b->u, made again
 * without a member whose plan failed). */
static int batch_ahead(void *ctx, const struct ctl *c, const struct partition *p,
		       struct circuit **pc, uint32_t *npc, struct fabric_relabel *rep)
{
	struct batch *b = ctx;
	bool dropped = false;

	(void)p;
	*pc = xcalloc(1, sizeof(**pc));
	*npc = 0;
	memset(rep, 0, sizeof(*rep));
	for (uint32_t k = 0; k < b->n; k++) {
		struct member *m = &b->m[k];
		struct circuit *mc = NULL;
		uint32_t mn = 0;
		struct fabric_relabel mr = {0};

		if (!m->in)
			continue;
		if (member_plan(b, m, c, &mc, &mn, &mr) < 0) {
			m->in = false;
			m->later = true;
			dropped = true;
			free(mc);
			continue;
		}
		*pc = xreallocarray(*pc, *npc + mn + 1, sizeof(**pc));
		memcpy(*pc + *npc, mc, mn * sizeof(*mc));
		*npc += mn;
		rep->arcs += mr.arcs;
		rep->kept += mr.kept;
		rep->kept_identity += mr.kept_identity;
		rep->changed |= mr.changed;
		rep->seconds += mr.seconds;
		free(mc);
	}
	if (dropped)
		make_union(b);
	return 1;
}

/* Each member's share of nc's plan: the operations on its ports (a host's
 * member, then one pass over the wiring a switch). */
static void count_ops(struct batch *b, const struct ctl *nc)
{
	const struct fabric *f = nc->fabric;
	uint32_t *host_of = xmalloc(((size_t)f->nhosts + 1) * sizeof(*host_of));

	for (uint32_t h = 0; h < f->nhosts; h++)
		host_of[h] = UINT32_MAX;
	for (uint32_t k = 0; k < b->n; k++)
		for (uint32_t i = 0; b->m[k].in && i < b->m[k].p.nmembers; i++)
			host_of[b->m[k].p.member_host[i]] = k;
	for (uint32_t i = 0; i < nc->ndevs; i++) {
		const struct ctl_device *cd = &nc->devs[i];
		int s = cd->cfg.cls == DEV_SWITCH ? fabric_find_switch(f, cd->cfg.name) : -1;

		if (s < 0 || !cd->plan.n)
			continue;
		uint32_t ports = f->switches[s].ports;
		uint32_t *owner = xmalloc(((size_t)ports + 1) * sizeof(*owner));

		for (uint32_t q = 0; q <= ports; q++)
			owner[q] = UINT32_MAX;
		for (uint32_t w = 0; w < f->nwiring; w++) {
			const struct attachment *a = &f->wiring[w];

			if (a->sw == (uint32_t)s && a->sw_port <= ports)
				owner[a->sw_port] = host_of[a->host];
		}
		for (uint32_t o = 0; o < cd->plan.n; o++) {
			const struct op *op = &cd->plan.ops[o];
			uint32_t k = op->xc.in <= ports ? owner[op->xc.in] : UINT32_MAX;

			if (k == UINT32_MAX && op->xc.out <= ports)
				k = owner[op->xc.out];
			if (k != UINT32_MAX)
				b->m[k].ops++;
		}
		free(owner);
	}
	free(host_of);
}

/* reconfigure_run's `check`: nothing held by another changes; the holds
 * every member takes go with the record's write. */
static int batch_check(void *ctx, struct ctl *nc, struct ofc_error *err)
{
	struct batch *b = ctx;
	const char **names = xcalloc(b->n + 1, sizeof(char *));
	const struct partition **parts = xcalloc(b->n + 1, sizeof(*parts));
	struct job **jobs = xcalloc(b->n + 1, sizeof(*jobs));
	uint32_t *ops = xcalloc(b->n + 1, sizeof(*ops));
	uint32_t n = 0;
	int rc = 0;

	b->t_aimed = now_seconds();
	count_ops(b, nc);
	for (uint32_t k = 0; k < b->n; k++)
		if (b->m[k].in) {
			names[n] = b->m[k].p.name;
			parts[n] = &b->m[k].p;
			jobs[n] = b->m[k].j;
			ops[n++] = b->m[k].ops;
		}
	if (!n)
		rc = ofc_error_set(err, OFC_E_RUNTIME, "no prolog of the batch was planned");
	else if (held_check_plan_many(b->d, nc, names, n, err) < 0)
		rc = -1;
	if (rc == 0) {
		held_stage_many(b->d, jobs, parts, ops, n, nc->fabric, &b->hs);
		nc->commit_also = held_commit_also;
		nc->commit_also_ctx = &b->hs;
	}
	b->t_checked = now_seconds();
	free(names);
	free(parts);
	free(jobs);
	free(ops);
	return rc;
}

/* Member m's answer to the batch's transaction (res, rc and err as
 * ofcd_run_mutation reads them). */
static void answer_member(struct ofcd *d, const struct member *m, const char *fabric,
			  uint32_t ndevs, int rc, const struct ctl_result *res,
			  const struct ofc_error *err)
{
	struct job *j = m->j;
	struct answer an;
	char by[160];

	answer_init(&an, j);
	an.t.fabric = arena_strdup(&an.a, fabric);
	j->txn = res->txn;
	an.t.has_id = 1;
	an.t.id = res->txn;
	an.t.has_operations = an.t.has_seconds = 1;
	an.t.operations = rc == 0 ? m->ops : res->ops_applied;
	an.t.seconds = res->seconds;
	ofcd_txn_by(d, &an.t, by, sizeof(by));
	if (rc == 0) {
		an.t.state = "committed";
		answer_status(
		    &an, OFC__V1__STATUS__STATUS_OK,
		    "committed transaction %llu%s: %u operation%s on %u device%s in %.3f s",
		    (unsigned long long)res->txn, by, m->ops, m->ops == 1 ? "" : "s", ndevs,
		    ndevs == 1 ? "" : "s", res->seconds);
	} else if (answer_fenced(d, &an, err)) {
		an.t.state = "stopped"; /* the leader after it repairs it */
	} else {
		answer_failed(j, &an, res, err);
	}
	j->outcome = an.t.state;
	response_pack(&an.r, &j->reply, &j->reply_len);
	arena_free(&an.a);
}

/* After the batch's transaction (rc, r): the running ctl, config and holds
 * when it committed; every member's answer; the snapshot on `first`. */
static void batch_settle(struct batch *b, struct job *first, int rc, struct reconfigure_result *r,
			 const struct ofc_error *err)
{
	struct ofcd *d = b->d;
	struct ctl *nc = r->planned;
	uint32_t ndevs = nc->ndevs;
	char why[400];

	nc->commit_also = NULL;
	if (rc == 0) {
		struct partition **parts = xcalloc(b->n + 1, sizeof(*parts));
		uint32_t n = 0;

		ofcd_ctl_close(d, d->w->ctl);
		d->w->ctl = nc;
		r->planned = NULL;
		ctl_quiet(d->w->ctl, NULL);
		d->w->ctl->partition = NULL; /* (b->u goes) */
		for (uint32_t k = 0; k < b->n; k++)
			if (b->m[k].in)
				parts[n++] = &b->m[k].p;
		held_committed_many(&b->hs, parts, r->txn.txn);
		free(parts);
		fabcfg_unref(d->w->cfg);
		d->w->cfg = b->cfg;
		b->cfg = NULL;
		fabcfg_unref(d->w->pub);
		d->w->pub = failures_publish(d);
		first->new_cfg = fabcfg_ref(d->w->pub);
	} else {
		ctl_handover(nc, d->w->ctl);
	}
	for (uint32_t k = 0; k < b->n; k++)
		if (b->m[k].in)
			answer_member(d, &b->m[k], d->w->cfg->f->name, ndevs, rc, &r->txn, err);
	first->snap = snapshot_build(d, d->state_dir, d->w->ctl, d->w->pub, why, sizeof(why));
	if (why[0])
		ofcd_log(d, OFCD_LOG_WARNING, "%s", why);
}

static void batch_took(struct batch *b, struct job *const *v, uint32_t n, double t_done,
		       double t_snap)
{
	const double t[] = {b->t_start,	  b->t_target, b->t_opened, b->t_read,	  b->t_aimed,
			    b->t_checked, t_done,      t_snap,	    now_seconds()};
	static const char *const what[] = {"recover", "target",	     "read",	 "aim",
					   "check",   "transaction", "snapshot", "holds"};
	struct strbuf sb = STRBUF_INIT;
	double last = t[0];

	sb_printf(&sb, "total %.3f s", t[ARRAY_SIZE(t) - 1] - t[0]);
	for (uint32_t i = 1; i < ARRAY_SIZE(t); i++) {
		if (t[i] <= 0)
			continue;
		sb_printf(&sb, ", %s %.3f s", what[i - 1], t[i] - last);
		if (i == 4)
			sb_printf(&sb, ", renumbering in its turn %.3f s (%u of %u planned ahead)",
				  b->turn, b->ahead, n);
		last = t[i];
	}
	log_batch_took(b->d, v, n, "reconfigure", sb.buf);
	sb_free(&sb);
}

/* The members in: one transaction. 0: it ran (committed or failed, each
 * member answered); -1: it was not applied (nothing changed, each member
 * to run on its own). */
static int batch_commit(struct batch *b, struct job *head, struct job **first_out)
{
	struct ofcd *d = b->d;
	struct ofc_error err = {0};
	struct reconfigure_result r = {0};
	struct job *first = NULL, **in = xcalloc(b->n + 1, sizeof(*in));
	uint32_t nin = 0;
	bool relabel = false;

	for (uint32_t k = 0; k < b->n; k++)
		relabel |= b->m[k].j->relabel;
	make_union(b);
	struct reconfigure_req q = {
	    .ctl = d->w->ctl,
	    .recover = true,
	    .target = batch_target,
	    .partition = &b->u,
	    .relabel = relabel,
	    .relabel_opts = {.budget_s = RELABEL_BUDGET_S},
	    .ahead = batch_ahead,
	    .check = batch_check,
	    .on_event = batch_event,
	    .ctx = b,
	};
	/* Its events go with the first member answered (below): kept aside
	 * meanwhile, not with a job answered before it. */
	struct job stub = {0};
	for (uint32_t k = 0; k < b->n; k++)
		if (b->m[k].in)
			in[nin++] = b->m[k].j;
	d->w->job = &stub;
	d->w->txn_members = in;
	d->w->ntxn_members = nin;
	int rc = reconfigure_run(&q, &r, &err);
	double t_done = now_seconds();
	d->w->job = head;
	d->w->txn_members = NULL;
	d->w->ntxn_members = 0;

	nin = 0;
	for (uint32_t k = 0; k < b->n; k++)
		if (b->m[k].in)
			in[nin++] = b->m[k].j;
	first = nin ? in[0] : NULL;
	if (rc < 0 && r.stage != RECONF_APPLY) {
		if (r.planned && r.planned != d->w->ctl) {
			ctl_handover(r.planned, d->w->ctl);
			ofcd_ctl_close(d, r.planned);
		}
		ofcd_log(
		    d, OFCD_LOG_INFO,
		    "ticket %llu: a batch of %u prologs not planned (%s): each runs on its own",
		    (unsigned long long)head->ticket, b->n, err.msg);
		/* (a repair's events and state go with the first to run next) */
		b->recovered = r.recovered;
		b->stub = stub.deferred;
		reconfigure_result_free(&r);
		free(in);
		return -1;
	}
	move_deferred(&stub, first);
	batch_settle(b, first, rc, &r, &err);
	double t_snap = now_seconds();
	held_state(d, first->snap);
	batch_took(b, in, nin, t_done, t_snap);
	ofcd_ctl_close(d, r.planned); /* (NULL once it runs) */
	reconfigure_result_free(&r);
	*first_out = first;
	free(in);
	return 0;
}

static void run_prologs(struct ofcd *d, struct job *head, struct job **v, uint32_t n)
{
	struct batch b = {.d = d, .n = n, .t_start = now_seconds()};
	struct job *first = NULL;
	uint32_t nin = 0;

	b.m = xcalloc(n + 1, sizeof(*b.m));
	for (uint32_t k = 0; k < n; k++) {
		struct ofc_error err = {0};
		char why[400];

		b.m[k].j = v[k];
		/* (a refusal, answered on its own as ever) */
		if (d->w->damaged || !held_may(d, v[k], why, sizeof(why)) ||
		    held_make(d, d->w->cfg->f, v[k]->partition, v[k]->hosts, v[k]->nhosts,
			      v[k]->spec, &b.m[k].p, &err) < 0)
			continue;
		b.m[k].in = true;
		nin++;
	}
	for (uint32_t k = 0; k < n; k++)
		if (!b.m[k].in || nin < 2)
			run_alone(d, head, v[k]);
	if (nin >= 2 && batch_commit(&b, head, &first) < 0) {
		struct job *next = NULL;

		for (uint32_t k = 0; k < n; k++)
			if (b.m[k].in) {
				if (!next && b.stub) { /* (events first, as a lone job's) */
					struct job stub = {.deferred = b.stub};

					for (stub.deferred_tail = b.stub; stub.deferred_tail->next;
					     stub.deferred_tail = stub.deferred_tail->next)
						;
					move_deferred(&stub, v[k]);
				}
				next = next ? next : v[k];
				run_alone(d, head, v[k]);
			}
		if (next && b.recovered && !next->snap) {
			char why[400];

			next->snap =
			    snapshot_build(d, d->state_dir, d->w->ctl, d->w->pub, why, sizeof(why));
			held_state(d, next->snap);
		}
	} else if (nin >= 2) {
		for (uint32_t k = 0; k < n; k++)
			if (b.m[k].in)
				head->order[head->norder++] = v[k];
		for (uint32_t k = 0; k < n; k++)
			if (b.m[k].later)
				run_alone(d, head, v[k]);
	}
	for (uint32_t k = 0; k < n; k++)
		held_partition_free(&b.m[k].p);
	held_partition_free(&b.u);
	held_stage_free(&b.hs);
	fabcfg_unref(b.cfg);
	free(b.m);
}

/* ---- the releases ------------------------------------------------------------------------- */

static bool is_held(const struct ofcd *d, const char *name)
{
	for (uint32_t i = 0; i < d->w->nheld; i++)
		if (strcmp(d->w->held[i].p.name, name) == 0)
			return true;
	return false;
}

/* The jobs in ok[0..n): let go of in one write; answered as
 * ofcd_run_release answers each. */
static void release_together(struct ofcd *d, struct job *head, struct job **ok, uint32_t n)
{
	struct ofc_error err = {0};
	double t[4] = {now_seconds()}; /* taken, released, snapshot, holds */
	char why[400];
	int rc;

	d->w->job = ok[0];
	rc = held_release_many(d, ok, n, &err);
	for (uint32_t k = 0; k < n; k++) {
		struct answer an;

		answer_init(&an, ok[k]);
		if (rc == 0) {
			answer_status(&an, OFC__V1__STATUS__STATUS_OK,
				      "released partition '%s': its hosts return to the pool; its "
				      "circuits stay",
				      ok[k]->partition);
			an.t.state = "committed";
		} else {
			if (!answer_fenced(d, &an, &err))
				answer_status(&an,
					      err.code == OFC_E_INPUT
						  ? OFC__V1__STATUS__STATUS_NOT_FOUND
						  : OFC__V1__STATUS__STATUS_FAILED,
					      "%s", err.msg);
			an.t.state = "refused";
		}
		ok[k]->outcome = an.t.state;
		response_pack(&an.r, &ok[k]->reply, &ok[k]->reply_len);
		arena_free(&an.a);
		head->order[head->norder++] = ok[k];
	}
	if (rc == 0) {
		t[1] = now_seconds();
		ok[0]->snap =
		    snapshot_build(d, d->state_dir, d->w->ctl, d->w->pub, why, sizeof(why));
		if (why[0])
			ofcd_log(d, OFCD_LOG_WARNING, "%s", why);
		t[2] = now_seconds();
		held_state(d, ok[0]->snap);
		t[3] = now_seconds();
		snprintf(why, sizeof(why),
			 "total %.3f s, release %.3f s, snapshot %.3f s, holds %.3f s", t[3] - t[0],
			 t[1] - t[0], t[2] - t[1], t[3] - t[2]);
		log_batch_took(d, ok, n, "release-partition", why);
	}
	d->w->job = head;
}

static void run_releases(struct ofcd *d, struct job *head, struct job **v, uint32_t n)
{
	struct job **ok = xcalloc(n + 1, sizeof(*ok));
	uint32_t nok = 0;

	for (uint32_t k = 0; k < n; k++) {
		char why[400];

		if (!d->w->damaged && held_may(d, v[k], why, sizeof(why)) &&
		    is_held(d, v[k]->partition))
			ok[nok++] = v[k];
		else
			run_alone(d, head, v[k]); /* (refused, as ever) */
	}
	if (nok == 1)
		run_alone(d, head, ok[0]);
	else if (nok > 1)
		release_together(d, head, ok, nok);
	free(ok);
}

void ofcd_run_batch(struct ofcd *d, struct job *head)
{
	uint32_t n = 1;

	for (struct job *x = head->batch; x; x = x->next)
		n++;
	struct job **v = xcalloc(n + 1, sizeof(*v));
	v[0] = head;
	n = 1;
	for (struct job *x = head->batch; x; x = x->next)
		v[n++] = x;
	head->order = xcalloc(n + 1, sizeof(*head->order));
	head->norder = 0;
	d->w->batch = head;
	if (head->kind == JOB_RELEASE)
		run_releases(d, head, v, n);
	else
		run_prologs(d, head, v, n);
	d->w->job = head;
	d->w->batch = NULL;
	free(v);
}
