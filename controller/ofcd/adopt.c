/* Adopt through ofcd: the way out of a transaction whose rollback could not
 * finish, for a daemon whose store only it may write (replicas on etcd: the
 * leader's worker writes under its epoch's fence). While a device refuses
 * the undo, every mutation retries the rollback and is refused with it; an
 * admin asks for a preview (every device read, what each holds against the
 * journal's before and target, nothing changed), then commits it with the
 * transaction and generation the preview showed, which records what the
 * devices hold as that generation. A commit whose transaction or
 * generation no longer matches is refused: the operator confirmed another
 * state than the one that would be recorded. */
#include "controller/ofcd/answer.h"
#include "controller/ofcd/worker.h"

#include <stdlib.h>
#include <string.h>

static const char *holds(const struct device_state *held, const struct device_state *before,
			 const struct device_state *target)
{
	return state_equal(held, before)   ? "before"
	       : state_equal(held, target) ? "target"
					   : "neither";
}

/* The answer's body: what the devices hold (c->devs[i].actual, just read). */
static void preview(struct answer *an, const struct ctl *c, const struct ctl_adopt *a,
		    bool committed)
{
	Ofc__V1__AdoptPreview *p = arena_alloc(&an->a, sizeof(*p));

	ofc__v1__adopt_preview__init(p);
	p->fabric = arena_strdup(&an->a, c->fabric->name);
	p->has_transaction = p->has_generation = p->has_committed = 1;
	p->transaction = a->txn;
	p->generation = a->generation;
	p->committed = committed;
	p->n_devices = c->ndevs;
	p->devices = arena_array(&an->a, c->ndevs + 1, sizeof(*p->devices));
	for (uint32_t i = 0; i < c->ndevs; i++) {
		Ofc__V1__AdoptDevice *v = arena_alloc(&an->a, sizeof(*v));

		ofc__v1__adopt_device__init(v);
		v->name = arena_strdup(&an->a, c->devs[i].cfg.name);
		v->has_circuits = v->has_before_circuits = v->has_target_circuits = 1;
		v->circuits = c->devs[i].actual.nxc;
		v->holds = (char *)holds(&c->devs[i].actual, &a->before[i], &a->target[i]);
		v->before_circuits = a->before[i].nxc;
		v->target_circuits = a->target[i].nxc;
		p->devices[i] = v;
	}
	an->r.body_case = OFC__V1__RESPONSE__BODY_ADOPT;
	an->r.adopt = p;
}

/* (mutation worker) JOB_ADOPT on the worker's own ctl, so the store's
 * fence (an etcd replica's epoch) holds for the record it writes. */
void ofcd_run_adopt(struct ofcd *d, struct job *j)
{
	struct ctl *c = d->w->ctl;
	struct ofc_error err = {0};
	struct ctl_adopt a;
	struct answer an;
	char why[400];
	int rc;

	answer_init(&an, j);
	an.t.kind = "adopt";
	rc = ctl_adopt_read(c, &a, &err);
	if (rc == 0 && j->adopt_commit && (a.txn != j->adopt_txn || a.generation != j->adopt_gen))
		rc = ofc_error_set(&err, OFC_E_RUNTIME,
				   "the preview showed transaction %llu as generation %llu; it is "
				   "now transaction %llu as generation %llu: nothing recorded, "
				   "preview again",
				   (unsigned long long)j->adopt_txn,
				   (unsigned long long)j->adopt_gen, (unsigned long long)a.txn,
				   (unsigned long long)a.generation);
	if (rc == 0 && j->adopt_commit) {
		/* the record names who decided: this job's asker, not the
		 * ctl's opener */
		char *opener = c->principal;

		c->principal = j->principal;
		rc = ctl_adopt_commit(c, &a, &err);
		c->principal = opener;
	}
	if (rc < 0) {
		if (!answer_fenced(d, &an, &err))
			answer_status(&an, OFC__V1__STATUS__STATUS_FAILED, "%s", err.msg);
		an.t.state = "refused";
	} else if (!j->adopt_commit) {
		answer_status(&an, OFC__V1__STATUS__STATUS_OK,
			      "transaction %llu could not be rolled back: the devices' read; "
			      "nothing recorded",
			      (unsigned long long)a.txn);
		an.t.state = "planned";
		preview(&an, c, &a, false);
	} else {
		answer_status(&an, OFC__V1__STATUS__STATUS_OK,
			      "adopted: generation %llu records what the devices hold; "
			      "transaction %llu ended",
			      (unsigned long long)a.generation, (unsigned long long)a.txn);
		an.t.state = "committed";
		preview(&an, c, &a, true);
		j->txn = a.generation;
		j->snap = snapshot_build(d, d->state_dir, c, d->w->pub, why, sizeof(why));
		if (why[0])
			ofcd_log(d, OFCD_LOG_WARNING, "%s", why);
		held_state(d, j->snap);
		ofcd_log(d, OFCD_LOG_INFO,
			 "ticket %llu: adopted what the devices hold as generation %llu; "
			 "transaction %llu ended (by %s)",
			 (unsigned long long)j->ticket, (unsigned long long)a.generation,
			 (unsigned long long)a.txn, j->principal ? j->principal : "?");
	}
	j->outcome = an.t.state;
	response_pack(&an.r, &j->reply, &j->reply_len);
	arena_free(&an.a);
	ctl_adopt_free(&a);
}
