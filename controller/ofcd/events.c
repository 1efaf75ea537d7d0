/* ofcd's events, on the loop thread: a worker's note (a transaction's
 * progress, a device lost or back, a re-plan) in the log and the published
 * state, and every event sent to the watchers (a tenant's, of its
 * partitions' requests alone). */
#include "controller/ofcd/conn.h"
#include "controller/ofcd/internal.h"

#include <stdio.h>
#include <string.h>

/* ---- events ------------------------------------------------------------------------------ */

/* The partition an event is about: that of the request whose ticket it
 * carries (a Reconfigure or ReleasePartition of one), else NULL. */
static const char *event_partition(const struct ofcd *d, uint64_t ticket)
{
	if (!ticket)
		return NULL;
	if (d->loop.ev_job && d->loop.ev_job->ticket == ticket)
		return d->loop.ev_job->partition;
	if (d->loop.running && d->loop.running->ticket == ticket)
		return d->loop.running->partition;
	for (const struct job *j = d->loop.queue; j; j = j->next)
		if (j->ticket == ticket)
			return j->partition;
	return NULL;
}

/* r (an event) to every watcher; a tenant's only when part names one of
 * its partitions (NULL: none, so tenants do not hear it). */
void ofcd_send_watchers(struct ofcd *d, Ofc__V1__Response *r, const char *part)
{
	for (size_t i = 0; i < d->loop.nconns; i++) {
		struct conn *c = d->loop.conns[i];

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
	/* (a partition event names its own; else the request's) */
	const char *part = n && n->partition ? n->partition : event_partition(d, ticket);
	e.partition = (char *)(n ? n->partition : NULL);
	ofcd_send_watchers(d, &r, part);
	if (sched)
		ofc__v1__schedule__free_unpacked(sched, NULL);
}

/* The index of device `name` in the snapshot, or -1. */
int ofcd_snap_dev(struct snapshot *s, const char *name)
{
	for (uint32_t i = 0; name && i < s->ndevs; i++)
		if (strcmp(s->devs[i]->name, name) == 0)
			return (int)i;
	return -1;
}

/* error: the device's text (root and the admin group see it); reason:
 * what read-only clients see instead. */
void ofcd_set_reachable(struct ofcd *d, int i, bool up, const char *error, enum ofc_reason reason)
{
	Ofc__V1__DeviceState *m;

	if (i < 0)
		return;
	m = d->loop.snap->devs[i];
	m->has_reachable = 1;
	m->reachable = up;
	m->error = up || !error ? NULL : arena_strdup(&d->loop.snap->a, error);
	d->loop.snap->public_error[i] = m->error ? ofcd_public_reason(reason) : NULL;
	changed(d);
}

void ofcd_on_event(struct ofcd *d, struct note *n)
{
	int level = OFCD_LOG_INFO;
	uint64_t ticket = d->loop.running ? d->loop.running->ticket : 0;

	switch (n->kind) {
	case OFC__V1__EVENT__KIND__KIND_TRANSACTION_STARTED:
		d->loop.running_txn = n->txn;
		d->loop.running_state = "applying";
		changed(d);
		break;
	case OFC__V1__EVENT__KIND__KIND_TRANSACTION_ROLLING_BACK:
		d->loop.running_state = "rolling-back";
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
		d->loop.metrics.devices_lost++;
		ofcd_set_reachable(d, ofcd_snap_dev(d->loop.snap, n->device), false,
				   n->detail ? n->detail : n->message, n->reason);
		break;
	case OFC__V1__EVENT__KIND__KIND_DEVICE_BACK:
		level = OFCD_LOG_NOTICE;
		ofcd_set_reachable(d, ofcd_snap_dev(d->loop.snap, n->device), true, NULL,
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
	ofcd_log(d, level, "%s", line);
	if (n->detail)
		snprintf(line, sizeof(line), "%s%s%s%s%s%s", name, txn, n->device ? ": " : "",
			 n->device ? n->device : "", n->message && *n->message ? ": " : "",
			 n->message ? n->message : "");
	ofcd_broadcast_event(d, n->kind, n->txn, ticket, n->device, n->message, line, n->time_ms,
			     n);
}
