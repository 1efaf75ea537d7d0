/* Adopting what the devices hold: the end of a transaction whose rollback
 * could not finish. Every later mutation retries the rollback first and is
 * refused while a device refuses the undo (or cannot be read back), so the
 * fabric stays frozen until someone decides what it holds. That decision is
 * the operator's: ofc reads the devices, shows them against the journal,
 * and on confirmation records them as they are. */
#include "controller/reconfig/internal.h"

#include <stdlib.h>
#include <string.h>

int ctl_adopt_read(struct ctl *c, struct ctl_adopt *a, struct ofc_error *err)
{
	struct journal *j = xcalloc(1, sizeof(*j));
	struct ctl_record r;
	bool missing;

	memset(a, 0, sizeof(*a));
	if (ctl_lock(c, err) < 0) {
		free(j);
		return -1;
	}
	if (journal_read(c->store, c->fabric->name, j, &missing, err) < 0) {
		free(j);
		return -1;
	}
	if (missing) {
		free(j);
		return ofc_error_set(err, OFC_E_RUNTIME,
				     "fabric '%s' has no unfinished transaction: nothing to adopt",
				     c->fabric->name);
	}
	a->journal = j;
	a->txn = j->id;
	a->before = j->before;
	a->target = j->target;
	/* Only a rollback that could not finish: any other unfinished
	 * transaction is a running trial or one that the next changing
	 * command finishes or undoes by itself. */
	if (j->phase != JOURNAL_ROLLING_BACK)
		return ofc_error_set(err, OFC_E_RUNTIME,
				     "unfinished transaction %llu of fabric '%s' is %s, not an "
				     "incomplete rollback: any changing command (ofc apply) "
				     "finishes or undoes it",
				     (unsigned long long)j->id, c->fabric->name,
				     journal_phase_name(j->phase));
	bool same = j->ndevs == c->ndevs;
	for (uint32_t i = 0; same && i < c->ndevs; i++)
		same = strcmp(j->names[i], c->devs[i].cfg.name) == 0;
	if (!same)
		return ofc_error_set(err, OFC_E_RUNTIME,
				     "unfinished transaction %llu was made with a config whose "
				     "devices differ (%s): adopt with that config",
				     (unsigned long long)j->id, j->meta.config);
	/* The new generation comes after every id used, the journal's too. */
	if (ctl_load_record_for(c, &r, err) < 0)
		return -1;
	c->last_txn = r.last_txn > r.generation ? r.last_txn : r.generation;
	if (j->id > c->last_txn)
		c->last_txn = j->id;
	c->txn = j->id;
	a->generation = c->last_txn + 1;
	ctl_record_free(&r);
	if (ctl_read(c, err) < 0) {
		ofc_error_prefix(err, "cannot adopt transaction %llu: every device must be read",
				 (unsigned long long)j->id);
		return -1;
	}
	return 0;
}

int ctl_adopt_commit(struct ctl *c, struct ctl_adopt *a, struct ofc_error *err)
{
	struct device_state *held = xcalloc(c->ndevs + 1, sizeof(*held));
	struct txn_meta meta;
	int rc;

	/* The record says who decided, under the transaction's meta: the
	 * devices hold (part of) its target, so its config is the one to
	 * reach from here. */
	meta = a->journal->meta;
	meta.principal = c->principal;
	for (uint32_t i = 0; i < c->ndevs; i++)
		held[i] = c->devs[i].actual;
	rc = record_commit(c, a->generation, held, &meta, NULL, err);
	free(held);
	return rc;
}

void ctl_adopt_free(struct ctl_adopt *a)
{
	if (a->journal) {
		journal_free(a->journal);
		free(a->journal);
	}
	memset(a, 0, sizeof(*a));
}
