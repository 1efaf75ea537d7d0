/* What ofcd's threads hand each other: jobs (loop -> worker -> loop),
 * notes (worker or planner -> loop, woken through the eventfd; a device's
 * news too, ofcd_device_news, from a driver's thread) and planner
 * tasks (planner.c), their freeing, and packed replies. The loop
 * (server.c) and the workers (work.c and their jobs) both sit on this
 * file; the log every thread writes through is log.c. */
#include "controller/ofcd/conn.h"

#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void ofcd_note(struct ofcd *d, struct note *n)
{
	uint64_t one = 1;

	pthread_mutex_lock(&d->notes.mu);
	if (d->notes.tail)
		d->notes.tail->next = n;
	else
		d->notes.head = n;
	d->notes.tail = n;
	pthread_mutex_unlock(&d->notes.mu);
	(void)!write(d->wake_fd, &one, sizeof(one));
}

void ofcd_device_news(void *ctx, const char *device)
{
	struct ofcd *d = ctx;
	uint64_t one = 1;

	pthread_mutex_lock(&d->notes.mu);
	snprintf(d->notes.news_from, sizeof(d->notes.news_from), "%s", device ? device : "");
	pthread_mutex_unlock(&d->notes.mu);
	atomic_store(&d->news_req, 1);
	(void)!write(d->wake_fd, &one, sizeof(one));
}

double ofcd_fence(void *ctx)
{
	struct ofcd *d = ctx;

	return store_fence(d->store);
}

void response_pack(const Ofc__V1__Response *r, uint8_t **buf, size_t *len)
{
	*len = protobuf_c_message_get_packed_size(&r->base);
	*buf = xmalloc(*len + 1);
	protobuf_c_message_pack(&r->base, *buf);
}

bool job_fluid(const struct job *j)
{
	struct schedule_query q = {.fabric = j->cfg->f, .spec = j->spec, .algorithm = j->algo};

	return schedule_fluid_request(&q);
}

void job_from(struct job *j, struct ucred peer, const Ofc__V1__Principal *p)
{
	j->peer = peer;
	j->who = p ? xstrdup(p->identity ? p->identity : "?") : NULL;
	j->tenant = p && p->role == OFC__V1__PRINCIPAL__ROLE__ROLE_TENANT;
	j->principal = j->who ? xstrdup(j->who) : xasprintf("uid:%u", (unsigned)peer.uid);
}

const char *job_from_words(const struct job *j, char *buf, size_t n)
{
	if (j->who)
		snprintf(buf, n, "%.64s through the gateway (uid %u pid %d)", j->who, j->peer.uid,
			 j->peer.pid);
	else
		snprintf(buf, n, "uid %u pid %d", j->peer.uid, j->peer.pid);
	return buf;
}

void job_free(struct job *j)
{
	if (!j)
		return;
	free(j->target);
	free(j->yaml);
	free(j->filename);
	free(j->spec);
	free(j->partition);
	free(j->who);
	free(j->principal);
	free(j->req);
	free(j->key);
	stream_free(j->stream);
	free(j->algo);
	free(j->schedule_pb);
	free(j->what_if);
	strv_free(j->argv, j->nargv);
	free(j->lowering);
	free(j->phase_name);
	planner_unref(j->planner);
	strv_free(j->items, j->nitems);
	strv_free(j->hosts, j->nhosts);
	strv_free(j->node_names, j->nnode_names);
	fabcfg_unref(j->cfg);
	free(j->reply_buf ? j->reply_buf : j->reply);
	snapshot_free(j->snap);
	fabcfg_unref(j->new_cfg);
	fabcfg_unref(j->share);
	fabcfg_unref(j->undo_cfg);
	free(j->probe);
	ahead_drop(j->ahead);
	while (j->batch) {
		struct job *b = j->batch;

		j->batch = b->next;
		job_free(b);
	}
	free(j->order);
	while (j->deferred) {
		struct note *n = j->deferred;

		j->deferred = n->next;
		note_free(n);
	}
	free(j);
}

void job_defer(struct job *j, struct note *n)
{
	if (j->deferred_tail)
		j->deferred_tail->next = n;
	else
		j->deferred = n;
	j->deferred_tail = n;
}

/* Planner tasks (planner.c) are handed between threads too. */
void planner_out_free(struct planner_out *o)
{
	free(o->sched);
	free(o->full);
	free(o->full_why);
	free(o->kept.buf);
	free(o->message);
	memset(o, 0, sizeof(*o));
}

void planner_unref(struct planner_task *t)
{
	unsigned left;

	if (!t)
		return;
	pthread_mutex_lock(&t->mu);
	left = --t->refs;
	pthread_mutex_unlock(&t->mu);
	if (left)
		return;
	planner_out_free(&t->out);
	planner_how_free(&t->how);
	fabcfg_unref(t->cfg);
	pthread_mutex_destroy(&t->mu);
	free(t);
}

void planner_abandon(struct planner_task *t)
{
	if (!t)
		return;
	/* The thread's planner process is killed (the task lives on in the
	 * thread's reference, which reaps it), and what it found is dropped. */
	pthread_mutex_lock(&t->mu);
	t->d = NULL;
	if (t->pid > 0)
		kill(t->pid, SIGKILL);
	pthread_mutex_unlock(&t->mu);
	planner_unref(t);
}

/* The state's schedule's tasks (state_schedule.c) are handed between
 * threads too. */
void state_sched_task_unref(struct state_sched_task *t)
{
	unsigned left;

	if (!t)
		return;
	pthread_mutex_lock(&t->mu);
	left = --t->refs;
	pthread_mutex_unlock(&t->mu);
	if (left)
		return;
	pthread_mutex_destroy(&t->mu);
	fabcfg_unref(t->cfg);
	free(t->spec);
	planner_how_free(&t->how);
	free(t->sched);
	free(t->why);
	free(t->line);
	free(t);
}

void note_free(struct note *n)
{
	if (!n)
		return;
	job_free(n->job);
	free(n->device);
	free(n->message);
	free(n->detail);
	free(n->partition);
	free(n->sched);
	strv_free(n->failed, n->nfailed);
	planner_unref(n->planner);
	state_sched_task_unref(n->state_sched);
	snapshot_free(n->snap);
	fabcfg_unref(n->cfg);
	while (n->deferred) {
		struct note *x = n->deferred;

		n->deferred = x->next;
		note_free(x);
	}
	free(n);
}

/* A streamed GetSchedule's handshake with the loop (stream.c):
 * here with the jobs that own it, so freeing a job needs nothing of stream.c. */
void stream_free(struct stream *st)
{
	if (!st)
		return;
	/* The thread may still be leaving the mutex it posted its last note
	 * under: wait for that before it goes. */
	pthread_mutex_lock(&st->mu);
	pthread_mutex_unlock(&st->mu);
	pthread_mutex_destroy(&st->mu);
	pthread_cond_destroy(&st->cond);
	planner_how_free(&st->how);
	free(st);
}

struct stream *stream_new(struct ofcd *d)
{
	struct stream *st = xcalloc(1, sizeof(*st));

	pthread_mutex_init(&st->mu, NULL);
	pthread_cond_init(&st->cond, NULL);
	st->d = d;
	/* A client that reads nothing for twice the client timeout is gone
	 * (the loop cuts it after one, which cancels the stream). */
	st->wait = 2 * d->o.client_timeout;
	planner_how(d, &st->how);
	return st;
}

const char *event_kind_name(Ofc__V1__Event__Kind k)
{
	static const char *const names[] = {
	    [OFC__V1__EVENT__KIND__KIND_TRANSACTION_STARTED] = "transaction started",
	    [OFC__V1__EVENT__KIND__KIND_TRANSACTION_COMMITTED] = "transaction committed",
	    [OFC__V1__EVENT__KIND__KIND_TRANSACTION_ROLLED_BACK] = "transaction rolled back",
	    [OFC__V1__EVENT__KIND__KIND_DEVICE_LOST] = "device lost",
	    [OFC__V1__EVENT__KIND__KIND_DEVICE_BACK] = "device back",
	    [OFC__V1__EVENT__KIND__KIND_CONFIG_APPLIED] = "config applied",
	    [OFC__V1__EVENT__KIND__KIND_TRANSACTION_ROLLING_BACK] = "transaction rolling back",
	    [OFC__V1__EVENT__KIND__KIND_DEVICE_APPLIED] = "device applied",
	    [OFC__V1__EVENT__KIND__KIND_RECOVERED] = "recovered",
	    [OFC__V1__EVENT__KIND__KIND_CONFIG_REJECTED] = "config rejected",
	    [OFC__V1__EVENT__KIND__KIND_SCHEDULE_REPLANNED] = "schedule re-planned",
	    [OFC__V1__EVENT__KIND__KIND_PARTITION_HELD] = "partition held",
	    [OFC__V1__EVENT__KIND__KIND_PARTITION_RELEASED] = "partition released",
	    [OFC__V1__EVENT__KIND__KIND_PARTITION_DROPPED] = "partition dropped",
	    [OFC__V1__EVENT__KIND__KIND_LEADER_CHANGED] = "leader changed",
	    [OFC__V1__EVENT__KIND__KIND_REQUEST_DONE] = "request done",
	    [OFC__V1__EVENT__KIND__KIND_REQUEST_REFUSED] = "request refused",
	    [OFC__V1__EVENT__KIND__KIND_FAILURE_REPORTED] = "failure reported",
	    [OFC__V1__EVENT__KIND__KIND_FAILURE_RESTORED] = "failure restored",
	    [OFC__V1__EVENT__KIND__KIND_DRAINED] = "drained",
	    [OFC__V1__EVENT__KIND__KIND_UNDRAINED] = "undrained",
	    [OFC__V1__EVENT__KIND__KIND_WIRING_CONFIRMED] = "wiring confirmed",
	    [OFC__V1__EVENT__KIND__KIND_WIRING_NOT_CONFIRMED] = "wiring not confirmed",
	};

	if (k == OFC__V1__EVENT__KIND__KIND_STATE_CHANGED)
		return "state changed";
	return (size_t)k < ARRAY_SIZE(names) && names[k] ? names[k] : "event";
}
