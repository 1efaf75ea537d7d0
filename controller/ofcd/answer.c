/* A mutation's answer, built by the mutation worker: the Response with
 * its TransactionInfo, its status and words, a config's error with its
 * position, a fenced replica's refusal, a failed transaction's outcome.
 * The loop sends it. */
#include "controller/ofcd/answer.h"
#include "controller/ofcd/worker.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void answer_init(struct answer *an, const struct job *j)
{
	memset(an, 0, sizeof(*an));
	ofc__v1__response__init(&an->r);
	ofc__v1__transaction_info__init(&an->t);
	ofc__v1__config_error__init(&an->ce);
	an->r.has_id = 1;
	an->r.id = j->req_id;
	an->r.has_status = 1;
	an->t.kind =
	    (char *)(j->kind == JOB_DRAIN && j->restore ? "undrain" : job_table[j->kind].answer);
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

void answer_status(struct answer *an, Ofc__V1__Status st, const char *fmt, ...)
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
void answer_config_error(struct answer *an, const struct ofc_error *err)
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
bool answer_fenced(struct ofcd *d, struct answer *an, const struct ofc_error *err)
{
	struct store_cluster v;
	char msg[700];
	Ofc__V1__Status st;

	if (err->reason != OFC_R_FENCED)
		return false;
	store_cluster(d->store, &v);
	st = cluster_refusal(d, &v, d->w->cfg->f->name, msg, sizeof(msg));
	if (st == OFC__V1__STATUS__STATUS_OK) {
		st = OFC__V1__STATUS__STATUS_UNAVAILABLE;
		snprintf(msg, sizeof(msg), "try again");
	}
	answer_status(an, st, "%s; %s", err->msg, msg);
	an->r.leader = cluster_refusal_leader(&an->a, &v);
	return true;
}

/* The answer of a transaction that failed (rolled back or not). */
void answer_failed(struct job *j, struct answer *an, const struct ctl_result *res,
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
