/* ofcd's events, on the loop thread: a worker's note (a transaction's
 * progress, a device lost or back, a re-plan) in the log and the published
 * state, and every event sent to the watchers (a tenant's, of its
 * partitions' requests alone). */
#include "controller/ofcd/conn.h"

#include <stdio.h>
#include <string.h>

/* ---- events ------------------------------------------------------------------------------ */

/* The partition an event is about: that of the request whose ticket it
 * carries (a Reconfigure or ReleasePartition of one), else NULL. */
static const char *event_partition(const struct ofcd *d, uint64_t ticket)
{
	if (!ticket)
		return NULL;
	if (d->loop->ev_job && d->loop->ev_job->ticket == ticket)
		return d->loop->ev_job->partition;
	if (d->loop->running && d->loop->running->ticket == ticket)
		return d->loop->running->partition;
	for (const struct job *j = d->loop->queue; j; j = j->next)
		if (j->ticket == ticket)
			return j->partition;
	return NULL;
}

/* r (an event) to the log with what it changed of the state
 * (state_delta.c). */
static void emit_with_delta(struct ofcd *d, Ofc__V1__Response *r, const char *part)
{
	struct arena a = {0};

	state_delta_attach(d, r->event, &a);
	event_log_emit(d, r, part);
	r->event->delta = NULL;
	arena_free(&a);
}

/* r (an event) to every watcher; a tenant's only when part names one of
 * its partitions (NULL: none, so tenants do not hear it). */
void ofcd_send_watchers(struct ofcd *d, Ofc__V1__Response *r, const char *part)
{
	for (size_t i = 0; i < d->loop->nconns; i++) {
		struct conn *c = d->loop->conns[i];

		if (!c->watching || c->dead)
			continue;
		/* A tenant hears of its partitions' requests alone. */
		if (authz_is_tenant(c->watch_principal) &&
		    !(part && authz_owns(c->watch_principal, part)))
			continue;
		r->id = c->watch_id;
		send_response(c, r);
	}
}

/* n (may be NULL): a note with a re-planned schedule and the failures. */
void ofcd_broadcast_event(struct ofcd *d, Ofc__V1__Event__Kind kind, uint64_t txn, uint64_t ticket,
			  const char *device, const char *message, const char *sentence,
			  uint64_t time_ms, const struct note *n)
{
	Ofc__V1__Response r = OFC__V1__RESPONSE__INIT;
	Ofc__V1__Event e = OFC__V1__EVENT__INIT;
	Ofc__V1__Schedule *sched = NULL;

	if (n && n->sched)
		sched = ofc__v1__schedule__unpack(NULL, n->sched_len, n->sched);
	e.schedule = sched;
	if (n) {
		e.n_failed = n->nfailed;
		e.failed = n->failed;
	}

	e.has_kind = e.has_time_unix_ms = 1;
	e.kind = kind;
	e.time_unix_ms = time_ms;
	e.message = (char *)message;
	e.device = (char *)device;
	if (txn) {
		e.has_transaction = 1;
		e.transaction = txn;
	}
	if (ticket) {
		e.has_ticket = 1;
		e.ticket = ticket;
	}
	r.has_id = r.has_status = 1;
	r.status = OFC__V1__STATUS__STATUS_OK;
	r.message = (char *)sentence;
	r.body_case = OFC__V1__RESPONSE__BODY_EVENT;
	r.event = &e;
	/* (a partition event names its own; else the request's, so that
	 * every replica knows which tenant hears it) */
	const char *part = n && n->partition ? n->partition : event_partition(d, ticket);
	e.partition = (char *)part;
	emit_with_delta(d, &r, part);
	if (sched)
		ofc__v1__schedule__free_unpacked(sched, NULL);
}

/* What watchers hear of an answer: its words, but where a device's own
 * text may be in them (the devices were read or driven and failed): those
 * are for the requester and the log, as a device's errors are in the
 * state (the transaction's events say what failed, publicly). */
static const char *public_outcome(const Ofc__V1__Response *r, char *buf, size_t n)
{
	const Ofc__V1__TransactionInfo *t =
	    r->body_case == OFC__V1__RESPONSE__BODY_TRANSACTION ? r->transaction : NULL;
	const char *msg = r->message ? r->message : "";

	if (r->status != OFC__V1__STATUS__STATUS_FAILED || !t)
		return msg;
	if (t->has_id && t->id) {
		snprintf(buf, n, "transaction %llu failed%s%s (its events say how)",
			 (unsigned long long)t->id, t->failed_device ? " on " : "",
			 t->failed_device ? t->failed_device : "");
		return buf;
	}
	if (strncmp(msg, "cannot read the devices", 23) == 0)
		return "cannot read the devices (the state shows which)";
	return msg;
}

/* A queued request's end, for every watcher (a tenant's of its own
 * partition's): done, a failure reported or restored, or refused and why.
 * r: its answer. */
void ofcd_request_event(struct ofcd *d, const struct job *j, const Ofc__V1__Response *r)
{
	Ofc__V1__Response ev = OFC__V1__RESPONSE__INIT;
	Ofc__V1__Event e = OFC__V1__EVENT__INIT;
	const Ofc__V1__TransactionInfo *t =
	    r->body_case == OFC__V1__RESPONSE__BODY_TRANSACTION ? r->transaction : NULL;
	bool ok = r->status == OFC__V1__STATUS__STATUS_OK;
	char buf[200], line[1200], from[160];
	const char *msg = public_outcome(r, buf, sizeof(buf));

	if (!j->ticket)
		return;
	e.has_kind = e.has_time_unix_ms = e.has_ticket = e.has_status = 1;
	e.kind = !ok			  ? OFC__V1__EVENT__KIND__KIND_REQUEST_REFUSED
		 : j->kind == JOB_DRAIN	  ? (j->restore ? OFC__V1__EVENT__KIND__KIND_UNDRAINED
							: OFC__V1__EVENT__KIND__KIND_DRAINED)
		 : j->kind != JOB_FAILURE ? OFC__V1__EVENT__KIND__KIND_REQUEST_DONE
		 : j->restore || j->clear ? OFC__V1__EVENT__KIND__KIND_FAILURE_RESTORED
					  : OFC__V1__EVENT__KIND__KIND_FAILURE_REPORTED;
	e.time_unix_ms = unix_ms();
	e.ticket = j->ticket;
	e.status = r->status;
	e.message = (char *)msg;
	e.partition = j->partition;
	if (t && t->has_id && t->id) {
		e.has_transaction = 1;
		e.transaction = t->id;
	}
	if (j->kind == JOB_FAILURE || j->kind == JOB_DRAIN) {
		e.n_failed = j->nitems;
		e.failed = j->items;
	}
	snprintf(line, sizeof(line), "%s: ticket %llu, %s%s %s from %s: %s",
		 event_kind_name(e.kind), (unsigned long long)j->ticket, job_kind_name(j->kind),
		 j->dry_run ? " (dry run)" : "", j->target ? j->target : "",
		 job_from_words(j, from, sizeof(from)), msg);
	ev.has_status = 1;
	ev.status = OFC__V1__STATUS__STATUS_OK;
	ev.message = line;
	ev.body_case = OFC__V1__RESPONSE__BODY_EVENT;
	ev.event = &e;
	emit_with_delta(d, &ev, j->partition);
}

void ofcd_on_event(struct ofcd *d, struct note *n)
{
	int level = OFCD_LOG_INFO;
	uint64_t ticket = n->ticket ? n->ticket : d->loop->running ? d->loop->running->ticket : 0;

	switch (n->kind) {
	case OFC__V1__EVENT__KIND__KIND_TRANSACTION_STARTED:
		d->loop->running_txn = n->txn;
		d->loop->running_state = "applying";
		changed(d);
		break;
	case OFC__V1__EVENT__KIND__KIND_TRANSACTION_ROLLING_BACK:
		d->loop->running_state = "rolling-back";
		level = OFCD_LOG_WARNING;
		changed(d);
		break;
	case OFC__V1__EVENT__KIND__KIND_TRANSACTION_ROLLED_BACK:
	case OFC__V1__EVENT__KIND__KIND_CONFIG_REJECTED:
	case OFC__V1__EVENT__KIND__KIND_PARTITION_DROPPED:
		level = OFCD_LOG_WARNING;
		break;
	case OFC__V1__EVENT__KIND__KIND_DEVICE_LOST:
		level = OFCD_LOG_WARNING;
		d->loop->metrics.devices_lost++;
		ofcd_set_reachable(d, ofcd_snap_dev(d->loop->snap, n->device), false,
				   n->detail ? n->detail : n->message, n->reason);
		break;
	case OFC__V1__EVENT__KIND__KIND_DEVICE_BACK:
		level = OFCD_LOG_NOTICE;
		ofcd_set_reachable(d, ofcd_snap_dev(d->loop->snap, n->device), true, NULL,
				   OFC_R_NONE);
		break;
	case OFC__V1__EVENT__KIND__KIND_TRANSACTION_COMMITTED:
	case OFC__V1__EVENT__KIND__KIND_CONFIG_APPLIED:
	case OFC__V1__EVENT__KIND__KIND_RECOVERED:
	case OFC__V1__EVENT__KIND__KIND_SCHEDULE_REPLANNED:
	case OFC__V1__EVENT__KIND__KIND_PARTITION_HELD:
	case OFC__V1__EVENT__KIND__KIND_PARTITION_RELEASED:
		level = OFCD_LOG_NOTICE;
		break;
	default:
		break;
	}
	/* One sentence for people (the answer's message, and the log); the
	 * event keeps the bare detail. */
	char txn[48] = "", line[900];
	if (n->txn)
		snprintf(txn, sizeof(txn), " (transaction %llu)", (unsigned long long)n->txn);
	const char *name = event_kind_name(n->kind);
	/* The log gets the detail; watchers the public message. */
	const char *detail = n->detail ? n->detail : n->message;
	snprintf(line, sizeof(line), "%s%s%s%s%s%s", name, txn, n->device ? ": " : "",
		 n->device ? n->device : "", detail && *detail ? ": " : "", detail ? detail : "");
	if (!n->logged)
		ofcd_log(d, level, "%s", line);
	if (n->detail)
		snprintf(line, sizeof(line), "%s%s%s%s%s%s", name, txn, n->device ? ": " : "",
			 n->device ? n->device : "", n->message && *n->message ? ": " : "",
			 n->message ? n->message : "");
	ofcd_broadcast_event(d, n->kind, n->txn, ticket, n->device, n->message, line, n->time_ms,
			     n);
}
