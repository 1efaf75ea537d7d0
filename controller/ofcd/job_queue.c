/* ofcd's jobs on the loop thread: the queue of mutations (enqueue,
 * cancel_job), which job the mutation worker runs next (a replica's
 * takeover or sync first, then the planner's result, then the queue, which
 * waits a while for the planner: the planner's hold), and the finished
 * jobs that come back as notes (ofcd_job_done: publish, answer, tell the
 * watchers, start the next). */
#include "controller/ofcd/batch.h"
#include "controller/ofcd/conn.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const status_names[] = {"ok",	  "invalid",   "denied",    "busy",
					   "failed",	  "not-found", "cancelled", "internal",
					   "unavailable", "not-leader"};

/* ---- the mutation queue -------------------------------------------------------------- */

/* A mutation (a transaction, queued with a ticket), not the daemon's own
 * device probe or installing the planner's result. */
bool is_mutation(const struct job *j)
{
	return job_table[j->kind].mutation;
}

void ofcd_hand_to_worker(struct ofcd *d, struct job *j)
{
	d->loop->running = j;
	d->loop->running_txn = 0;
	d->loop->running_state = "running";
	j->t0 = now_seconds();
	pthread_mutex_lock(&d->jobs.mu);
	d->jobs.mjob = j;
	pthread_cond_broadcast(&d->jobs.cond);
	pthread_mutex_unlock(&d->jobs.mu);
}

static int64_t head_wait_timer(struct loop *l, uint64_t id, void *ctx)
{
	struct ofcd *d = ctx;

	(void)l;
	(void)id;
	d->loop->batch_timer = 0;
	ofcd_maybe_start(d);
	return LOOP_NOMORE;
}

/* A prolog at the head waiting for its plan ahead (batch_wait): looked at
 * again in 5 ms (a plan takes up to RELABEL_BUDGET_S). Harmless once the
 * queue is gone: stopping cancels it. */
static bool head_waits(struct ofcd *d, struct job *j)
{
	if (!batch_wait(d, j))
		return false;
	if (!d->loop->batch_timer)
		d->loop->batch_timer = loop_timer(d->loop->ev, 5, head_wait_timer, d);
	return true;
}

void ofcd_maybe_start(struct ofcd *d)
{
	struct job *j = d->loop->queue;

	if (d->loop->running)
		return;
	/* A replica's takeover or sync first: what it leads or
	 * follows is the state everything after it works on. */
	if (d->loop->cluster_job) {
		j = d->loop->cluster_job;
		d->loop->cluster_job = NULL;
		j->reload = d->loop->cl_reload;
		ofcd_hand_to_worker(d, j);
		changed(d);
		return;
	}
	/* The planner's result first: a failure waiting for it re-plans from
	 * the MCF solution it keeps. */
	if (d->loop->planner_job) {
		j = d->loop->planner_job;
		d->loop->planner_job = NULL;
		ofcd_hand_to_worker(d, j);
		changed(d);
		return;
	}
	/* Mutations wait for the planner (at most PLANNER_HOLD_SECONDS), for
	 * a takeover's replay to queue them all, and for the takeover itself:
	 * the store's view may say this replica leads (the gate let them in)
	 * before the loop has heard so and queued the takeover, and one run
	 * then would work on the state it followed, not the one it takes over
	 * (a release answered "not held" for a hold that state had not seen). */
	if (!j || d->loop->q_replaying ||
	    (d->clustered && d->loop->cl.leading && !d->loop->leading) ||
	    (d->loop->planner && now_seconds() < d->loop->planner_hold_until) || head_waits(d, j))
		return;
	d->loop->queue = j->next;
	if (!d->loop->queue)
		d->loop->queue_tail = NULL;
	d->loop->nqueue--;
	j->next = NULL;
	if (queue_start(d, j)) { /* its key's recorded outcome: not run again */
		ofcd_job_done(d, j);
	} else {
		batch_gather(d, j); /* (the prologs or releases behind it, with it) */
		ofcd_hand_to_worker(d, j);
	}
	changed(d);
}

/* Take the queue's last job out again (its write to etcd's queue failed). */
static void unqueue_tail(struct ofcd *d, struct job *j)
{
	struct job *prev = NULL;

	for (struct job *x = d->loop->queue; x && x != j; x = x->next)
		prev = x;
	if (prev)
		prev->next = NULL;
	else
		d->loop->queue = NULL;
	d->loop->queue_tail = prev;
	d->loop->nqueue--;
}

/* Whether ofcd_maybe_start would hand j, the queue's only job, over at once. */
static bool starts_now(const struct ofcd *d, const struct job *j)
{
	return !d->loop->running && !d->loop->cluster_job && !d->loop->planner_job &&
	       d->loop->queue == j &&
	       !(d->loop->planner && now_seconds() < d->loop->planner_hold_until);
}

struct job *request_job(const struct request *rq)
{
	struct job *j = xcalloc(1, sizeof(*j));

	/* (the job table's row for the request; test_requests holds every
	 * handler that queues a job to one) */
	j->kind = job_kind_of_request(rq->k->kind);
	if (!j->kind) { /* (a handler queueing a job its request has no row for) */
		fprintf(stderr, "ofcd: the job table has no row for a %s request\n", rq->k->name);
		abort();
	}
	j->conn_id = rq->c->id;
	j->req_id = rq->req->id;
	job_from(j, rq->who.peer, rq->who.p);
	return j;
}

/* rq: the request j answers (NULL: none, a reload's). */
void enqueue(struct ofcd *d, struct job *j, const struct request *rq)
{
	char msg[600];
	struct ofc_error err = {0};

	j->ticket = ++d->loop->next_ticket;
	j->queued_s = now_seconds();
	outcome_adopt(d, j, is_mutation(j), rq ? rq->raw : NULL, rq ? rq->len : 0, rq && rq->c->gw);
	queue_append(d, j);
	/* A replica's waiting mutations are in etcd before they are
	 * queued (one that starts at once is the journal's instead). */
	if (queue_kept(d, j) && !starts_now(d, j) && queue_persist(d, &err) < 0) {
		struct conn *c = conn_find(d, j->conn_id);

		unqueue_tail(d, j);
		ofcd_log(d, OFCD_LOG_WARNING, "%s %s not queued: %s", job_kind_name(j->kind),
			 j->target, err.msg);
		if (c)
			reply(c, j->req_id,
			      err.reason == OFC_R_FENCED ? OFC__V1__STATUS__STATUS_NOT_LEADER
							 : OFC__V1__STATUS__STATUS_UNAVAILABLE,
			      "%s", err.msg);
		d->loop->next_ticket--;
		job_free(j);
		return;
	}
	char from[160];
	snprintf(msg, sizeof(msg), "ticket %llu: %s %s from %s (%u ahead)",
		 (unsigned long long)j->ticket, job_kind_name(j->kind), j->target,
		 job_from_words(j, from, sizeof(from)),
		 d->loop->nqueue - 1 + (d->loop->running && is_mutation(d->loop->running)));
	ofcd_log(d, OFCD_LOG_INFO, "queued %s", msg);
	ahead_submit(d, j);
	ofcd_broadcast_event(d, OFC__V1__EVENT__KIND__KIND_REQUEST_QUEUED, 0, j->ticket, NULL, msg,
			     msg, unix_ms(), NULL);
	changed(d);
	ofcd_maybe_start(d);
}

/* Take a queued mutation out; answer its client CANCELLED. */
void cancel_job(struct ofcd *d, struct job *j, const char *why)
{
	struct job **pp = &d->loop->queue, *prev = NULL;
	struct conn *c;

	for (; *pp && *pp != j; pp = &(*pp)->next)
		prev = *pp;
	if (!*pp)
		return;
	*pp = j->next;
	if (d->loop->queue_tail == j)
		d->loop->queue_tail = prev;
	d->loop->nqueue--;
	if (queue_kept(d, j)) {
		struct ofc_error e = {0};

		if (queue_persist(d, &e) < 0)
			ofcd_log(d, OFCD_LOG_WARNING,
				 "ticket %llu is cancelled, but etcd's queue still lists it (%s): "
				 "a next leader may run it",
				 (unsigned long long)j->ticket, e.msg);
	}
	c = conn_find(d, j->conn_id);
	if (c)
		reply(c, j->req_id, OFC__V1__STATUS__STATUS_CANCELLED, "ticket %llu (%s %s) %s",
		      (unsigned long long)j->ticket, job_kind_name(j->kind), j->target, why);
	ofcd_log(d, OFCD_LOG_NOTICE, "ticket %llu (%s %s) %s", (unsigned long long)j->ticket,
		 job_kind_name(j->kind), j->target, why);
	char msg[600];
	snprintf(msg, sizeof(msg), "ticket %llu (%s %s) %s", (unsigned long long)j->ticket,
		 job_kind_name(j->kind), j->target, why);
	d->loop->ev_job = j;
	ofcd_broadcast_event(d, OFC__V1__EVENT__KIND__KIND_REQUEST_CANCELLED, 0, j->ticket, NULL,
			     msg, msg, unix_ms(), NULL);
	d->loop->ev_job = NULL;
	job_free(j);
	changed(d);
}

/* ---- finished jobs ---------------------------------------------------------------------- */

/* A finished job's state and config become the daemon's (what it built
 * while it ran: a committed transaction, a re-plan after a failure). */
static void publish(struct ofcd *d, struct job *j)
{
	if (j->snap) {
		host_links_moved(d, d->loop->snap ? d->loop->snap->state : NULL, j->snap->state);
		snapshot_free(d->loop->snap);
		d->loop->snap = j->snap;
		j->snap = NULL;
	}
	if (j->new_cfg) {
		fabcfg_unref(d->loop->cfg);
		d->loop->cfg = j->new_cfg;
		j->new_cfg = NULL;
		mpi_jobs_publish(d, d->loop->cfg);
	}
}

/* A running job's state and config, published before it ends (a note). */
void ofcd_published(struct ofcd *d, struct note *n)
{
	if (n->snap) {
		host_links_moved(d, d->loop->snap ? d->loop->snap->state : NULL, n->snap->state);
		snapshot_free(d->loop->snap);
		d->loop->snap = n->snap;
		n->snap = NULL;
	}
	if (n->cfg) {
		fabcfg_unref(d->loop->cfg);
		d->loop->cfg = n->cfg;
		n->cfg = NULL;
		mpi_jobs_publish(d, d->loop->cfg);
	}
	changed(d);
	while (n->deferred) {
		struct note *x = n->deferred;

		n->deferred = x->next;
		x->next = NULL;
		ofcd_on_event(d, x);
		note_free(x);
	}
}

/* The events a job held back until its state was published, in order. */
static void flush_deferred(struct ofcd *d, struct job *j)
{
	while (j->deferred) {
		struct note *n = j->deferred;

		j->deferred = n->next;
		ofcd_on_event(d, n);
		note_free(n);
	}
	j->deferred_tail = NULL;
}

/* ---- the planner (planner.c) ------------------------------------------------------------ */

/* Past PLANNER_HOLD_SECONDS the queue goes on without the planner's result. */
static int64_t planner_hold_timer(struct loop *l, uint64_t id, void *ctx)
{
	struct ofcd *d = ctx;

	(void)l;
	(void)id;
	d->loop->planner_timer = 0;
	d->loop->planner_hold_until = 0;
	if (d->loop->planner && d->loop->queue)
		ofcd_log(d, OFCD_LOG_WARNING,
			 "the workload's schedule is still being computed after %d s: the %u "
			 "waiting mutation%s go%s on without it",
			 PLANNER_HOLD_SECONDS, d->loop->nqueue, d->loop->nqueue == 1 ? "" : "s",
			 d->loop->nqueue == 1 ? "es" : "");
	ofcd_maybe_start(d);
	return LOOP_NOMORE;
}

void ofcd_planner_stop(struct ofcd *d)
{
	if (d->loop->planner_timer)
		loop_timer_del(d->loop->ev, d->loop->planner_timer);
	d->loop->planner_timer = 0;
	d->loop->planner_hold_until = 0;
	planner_abandon(d->loop->planner);
	d->loop->planner = NULL;
	changed(d);
}

/* The published config's workload schedule is the planner's to compute
 * (an all-to-all): start one. One computing another config (not the
 * healthy one behind the published failures) is let go of: its MCF is
 * cancelled and its thread, not waited for, drops what it found. */
void ofcd_planner_check(struct ofcd *d)
{
	state_schedule_check(d, false);
	if (d->loop->planner && d->loop->planner->cfg != d->loop->cfg &&
	    d->loop->planner->cfg != d->loop->cfg->healthy)
		ofcd_planner_stop(d);
	if (d->loop->planner || d->loop->stopping || !planner_needed(d->loop->cfg))
		return;
	d->loop->planner = planner_start(d, d->loop->cfg);
	if (!d->loop->planner) {
		ofcd_log(d, OFCD_LOG_ERR,
			 "cannot start a thread for the workload's schedule: State.schedule stays "
			 "empty until the next re-plan");
		return;
	}
	d->loop->planner_hold_until = now_seconds() + PLANNER_HOLD_SECONDS;
	d->loop->planner_timer =
	    loop_timer(d->loop->ev, PLANNER_HOLD_SECONDS * 1000, planner_hold_timer, d);
	ofcd_log(d, OFCD_LOG_NOTICE,
		 "computing the workload's %s schedule on %s in the background (mutations wait "
		 "for it up to %d s)",
		 sched_collective_name(d->loop->cfg->coll), d->loop->cfg->f->topology.spec,
		 PLANNER_HOLD_SECONDS);
	changed(d);
}

/* The planner finished (t: the note's reference, ours now): its result
 * goes to the mutation worker before any queued mutation. */
void ofcd_planner_landed(struct ofcd *d, struct planner_task *t)
{
	struct job *j;

	if (t != d->loop->planner || d->loop->stopping) {
		planner_unref(t);
		return;
	}
	ofcd_planner_stop(d);
	ofcd_log(d, OFCD_LOG_INFO, "the workload's schedule was computed in %.1f s",
		 (double)(unix_ms() - t->since_ms) / 1000);
	j = xcalloc(1, sizeof(*j));
	j->kind = JOB_PLANNER;
	j->planner = t;
	job_free(d->loop->planner_job);
	d->loop->planner_job = j;
	ofcd_maybe_start(d);
}

/* The check once at start (ofcd_run): what each device holds against the
 * record, in the log, so an operator sees at once whether ofcd reaches
 * its devices and whether they were changed while it was down. Reads
 * only: nothing is changed here. */
static void report_start_check(struct ofcd *d, const struct job *j)
{
	uint32_t up = 0, same = 0, fresh = 0;

	for (uint32_t i = 0; i < j->nprobe; i++) {
		const struct probe_dev *p = &j->probe[i];

		up += p->reachable;
		same += p->in_sync && p->recorded;
		fresh += p->reachable && !p->recorded;
		if (!p->reachable)
			ofcd_log(d, OFCD_LOG_WARNING, "start check: %s unreachable: %s", p->name,
				 p->error);
		else if (!p->recorded)
			ofcd_log(
			    d, OFCD_LOG_NOTICE,
			    "start check: %s reachable, %u entries, nothing recorded for it yet",
			    p->name, p->entries);
		else if (p->in_sync)
			ofcd_log(d, OFCD_LOG_NOTICE,
				 "start check: %s reachable, %u entries, as the record says",
				 p->name, p->entries);
		else
			ofcd_log(d, OFCD_LOG_WARNING,
				 "start check: %s reachable, %u entries, NOT as the record says "
				 "(changed while ofcd was down? status shows it; the next change "
				 "takes it to its target)",
				 p->name, p->entries);
	}
	ofcd_log(d,
		 up == j->nprobe && same + fresh == j->nprobe ? OFCD_LOG_NOTICE : OFCD_LOG_WARNING,
		 "start check: %u device%s: %u reachable, %u as recorded, %u not, %u with nothing "
		 "recorded yet",
		 j->nprobe, j->nprobe == 1 ? "" : "s", up, same, up - same - fresh, fresh);
}

/* A mutation's end, but its answer: its state published, its events, the
 * log's line. */
void mutation_settle(struct ofcd *d, struct job *j)
{
	Ofc__V1__Response *r = ofc__v1__response__unpack(NULL, j->reply_len, j->reply);
	char from[160];

	/* Publish first, then tell: whoever hears "committed" and asks
	 * sees the committed state. */
	publish(d, j);
	changed(d);
	flush_deferred(d, j);
	metrics_job_done(&d->loop->metrics, j, r && r->status == OFC__V1__STATUS__STATUS_OK,
			 now_seconds() - j->t0);
	ofcd_log(d,
		 r && r->status == OFC__V1__STATUS__STATUS_OK ? OFCD_LOG_NOTICE : OFCD_LOG_WARNING,
		 "ticket %llu: %s%s %s from %s: %s: %s", (unsigned long long)j->ticket,
		 job_kind_name(j->kind), j->dry_run ? " (dry run)" : "", j->target,
		 job_from_words(j, from, sizeof(from)),
		 r && r->status < ARRAY_SIZE(status_names) ? status_names[r->status] : "?",
		 r && r->message ? r->message : "");
	if (r)
		ofc__v1__response__free_unpacked(r, NULL);
}

/* A settled mutation's answer (j->reply): its event, its recorded
 * outcome, to its client. */
void mutation_answer(struct ofcd *d, struct job *j)
{
	struct conn *c = j->conn_id ? conn_find(d, j->conn_id) : NULL;
	Ofc__V1__Response *r = ofc__v1__response__unpack(NULL, j->reply_len, j->reply);

	if (r && r->status != OFC__V1__STATUS__STATUS_OK && c)
		d->loop->errors++;
	if (r) {
		ofcd_request_event(d, j, r);
		ofc__v1__response__free_unpacked(r, NULL);
	}
	outcome_done(d, j);
	if (c)
		conn_queue(c, j->reply, j->reply_len, NULL, 0);
	else if (j->conn_id)
		ofcd_log(d, OFCD_LOG_INFO, "ticket %llu: its client went away before the answer",
			 (unsigned long long)j->ticket);
	/* A failure report's schedule, for the other replicas, after its
	 * answer (conn_queue has written what the socket takes): the answer
	 * waits on the failures' write alone, which the re-plan followed. A
	 * leader that dies before this write leaves the store the previous
	 * state's answer, which no replica takes for this state (its inputs
	 * differ): the next leader computes it from the failures, as a
	 * follower asked for its state does. */
	if (j->share) {
		state_schedule_publish(d, j->share);
		fabcfg_unref(j->share);
		j->share = NULL;
	}
}

/* A mutation's end: its state published, its events, then its answer. */
static void mutation_done(struct ofcd *d, struct job *j)
{
	mutation_settle(d, j);
	mutation_answer(d, j);
}

void ofcd_job_done(struct ofcd *d, struct job *j)
{
	struct conn *c = j->conn_id ? conn_find(d, j->conn_id) : NULL;

	if (j->kind == JOB_SCHEDULE) {
		/* Only an error's answer is small enough to look into cheaply. */
		Ofc__V1__Response *r = j->reply_len < 4096
					   ? ofc__v1__response__unpack(NULL, j->reply_len, j->reply)
					   : NULL;
		metrics_job_done(&d->loop->metrics, j,
				 j->reply_len >= 4096 ||
				     (r && r->status == OFC__V1__STATUS__STATUS_OK),
				 now_seconds() - j->t0);
		if (r)
			ofc__v1__response__free_unpacked(r, NULL);
		d->loop->sched_pending--;
		sched_caller(d, j, -1);
		if (j->stream) {
			for (uint32_t i = 0; i < d->loop->nstreams; i++)
				if (d->loop->streams[i] == j->stream) {
					uint32_t last = --d->loop->nstreams;

					free(d->loop->stream_who[i]);
					d->loop->streams[i] = d->loop->streams[last];
					d->loop->stream_who[i] = d->loop->stream_who[last];
				}
			if (c && c->stream == j->stream) {
				c->stream = NULL;
				c->stream_owed = 0;
			}
			job_free(j);
			return;
		}
		if (c && j->reply_buf && conn_queue_own(c, j->reply_buf, j->reply_len))
			j->reply_buf = j->reply = NULL; /* the connection's now */
		else if (c)
			conn_queue(c, j->reply, j->reply_len, NULL, 0);
		job_free(j);
		return;
	}
	if (j->kind == JOB_TAKEOVER || j->kind == JOB_SYNC) {
		d->loop->running = NULL;
		cluster_synced(d, j);
		publish(d, j);
		changed(d);
		flush_deferred(d, j);
		if (j->kind == JOB_TAKEOVER && !j->done_ms && store_epoch(d->store) &&
		    !d->loop->stopping)
			cluster_takeover_failed(d, now_seconds());
		if (j->kind == JOB_TAKEOVER && j->done_ms) {
			d->loop->takeover_backoff = 0;
			d->loop->leading = store_epoch(d->store) != 0;
			d->loop->took_over_ms = j->done_ms;
			cluster_refresh(d); /* (the watchers hear it leads now) */
			if (d->loop->leading)
				ofcd_replay_queue(d);
			/* the start check, now that this replica may read them */
			if (d->loop->leading && d->o.probe_interval > 0 && !d->loop->stopping) {
				struct job *p = xcalloc(1, sizeof(*p));

				p->kind = JOB_PROBE;
				p->startup = true;
				job_free(d->loop->planner_job);
				d->loop->planner_job = p;
			}
		}
		if (d->loop->sync_again) {
			d->loop->sync_again = false;
			ofcd_want_cluster_job(d, JOB_SYNC);
		}
		event_log_synced(d);
		job_free(j);
		ofcd_planner_check(d);
		ofcd_maybe_start(d);
		return;
	}
	if (j->kind == JOB_PROBE || j->kind == JOB_PLANNER) {
		d->loop->running = NULL;
		/* A switch lost or back changed the failures: the re-planned
		 * config and state first, then the event. */
		publish(d, j);
		for (uint32_t i = 0; i < j->nprobe; i++) {
			int k = ofcd_snap_dev(d->loop->snap, j->probe[i].name);
			Ofc__V1__DeviceState *m = k >= 0 ? d->loop->snap->devs[k] : NULL;

			if (!m)
				continue;
			/* A leader's first word of a device reachable goes to the
			 * followers too (they read no device: event_log.c), so
			 * every replica shows it, not "not contacted yet". */
			if (!m->has_reachable && j->probe[i].reachable && d->clustered)
				ofcd_broadcast_event(
				    d, OFC__V1__EVENT__KIND__KIND_DEVICE_BACK, 0, 0,
				    j->probe[i].name, "reachable (the leader's first contact)",
				    "device back: reachable (the leader's first contact)",
				    unix_ms(), NULL);
			if (!m->has_reachable || m->reachable != j->probe[i].reachable)
				ofcd_set_reachable(d, k, j->probe[i].reachable, j->probe[i].error,
						   j->probe[i].reason);
			if (!m->has_in_sync || m->in_sync != j->probe[i].in_sync) {
				m->has_in_sync = 1;
				m->in_sync = j->probe[i].in_sync;
				changed(d);
			}
		}
		changed(d);
		flush_deferred(d, j);
		if (j->startup)
			report_start_check(d, j);
	} else if (j->order) {
		/* A batch (batch.c): each job in the order it ran, its snapshot
		 * published before the answers that follow it. */
		for (uint32_t i = 0; i < j->norder; i++)
			mutation_done(d, j->order[i]);
		d->loop->running = NULL;
	} else {
		mutation_done(d, j);
		d->loop->running = NULL;
	}
	job_free(j);
	ofcd_planner_check(d);
	ofcd_maybe_start(d);
}

/* A public caller's schedule jobs handed out (queued, running or
 * streaming), counted by its principal ("uid:N", or the gateway's
 * identity) with delta; returns the count before. */
uint32_t sched_caller(struct ofcd *d, const struct job *j, int delta)
{
	struct sched_caller *c = NULL;
	uint32_t was;

	if (!j->public_caller || !j->principal)
		return 0;
	for (uint32_t i = 0; i < d->loop->nsched_callers && !c; i++)
		if (strcmp(d->loop->sched_callers[i].who, j->principal) == 0)
			c = &d->loop->sched_callers[i];
	if (!c && delta <= 0)
		return 0;
	if (!c) {
		GROW(d->loop->sched_callers, d->loop->cap_sched_callers,
		     d->loop->nsched_callers + 1);
		c = &d->loop->sched_callers[d->loop->nsched_callers++];
		*c = (struct sched_caller){xstrdup(j->principal), 0};
	}
	was = c->n;
	c->n = delta < 0 && c->n < (uint32_t)-delta ? 0 : c->n + (uint32_t)delta;
	if (c->n == 0) {
		free(c->who);
		*c = d->loop->sched_callers[--d->loop->nsched_callers];
	}
	return was;
}
