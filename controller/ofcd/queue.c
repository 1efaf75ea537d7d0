/* The mutation queue in etcd (docs/ofcd.md, "Replicas"). A
 * replicated leader writes the mutations it accepted and has not started
 * (ofc.v1.MutationQueue, the store's STORE_QUEUE) whenever that list
 * changes, each write a transaction guarded by its epoch as the record's
 * are; the next leader runs them after its takeover as if their clients
 * had sent them to it (cluster.c, ofcd_replay_queue), answered to nobody: their
 * connections went with the last leader, and watchers see them queued and
 * run. The mutation running is not in it: the journal's repair decides
 * that one (old or new), as a restart's does; one with a request_key
 * leaves the list in the same write that records it started
 * (outcomes.c). Nothing is written while the replica takes over: until
 * its replay has read the last leader's list, that list is etcd's queue,
 * and what clients send meanwhile waits in memory, then goes after it.
 *
 * Loop thread only (the store takes writes from any thread, one at a
 * time). A single ofcd with files keeps its queue in memory, as before. */
#include "controller/ofcd/conn.h"

#include <stdlib.h>
#include <string.h>

#include "proto/state.pb-c.h"

/* etcd refuses a request over 1.5 MiB unless told otherwise */
#define QUEUE_MAX_BYTES (1u << 20)

bool queue_kept(const struct ofcd *d, const struct job *j)
{
	return d->clustered && j->req && !j->dry_run;
}

/* The waiting mutations as a MutationQueue's bytes (*len 0: none waits);
 * NULL when they do not fit in QUEUE_MAX_BYTES. */
static uint8_t *queue_pack(struct ofcd *d, size_t *len)
{
	Ofc__V1__MutationQueue q = OFC__V1__MUTATION_QUEUE__INIT;
	Ofc__V1__MutationQueue__Entry *e = xcalloc(d->loop->nqueue + 1, sizeof(*e));
	Ofc__V1__MutationQueue__Entry **pe = xcalloc(d->loop->nqueue + 1, sizeof(*pe));
	uint8_t *buf = NULL;
	size_t n = 0;

	for (const struct job *j = d->loop->queue; j && n < d->loop->nqueue; j = j->next) {
		if (!queue_kept(d, j))
			continue;
		ofc__v1__mutation_queue__entry__init(&e[n]);
		e[n].has_ticket = e[n].has_request = e[n].has_uid = e[n].has_gid = 1;
		e[n].has_pid = e[n].has_gateway = 1;
		e[n].ticket = j->ticket;
		e[n].request.data = j->req;
		e[n].request.len = j->req_len;
		e[n].uid = j->peer.uid;
		e[n].gid = j->peer.gid;
		e[n].pid = j->peer.pid;
		e[n].gateway = j->via_gateway;
		e[n].kind = (char *)job_kind_name(j->kind);
		e[n].target = j->target;
		e[n].partition = j->partition;
		pe[n] = &e[n];
		n++;
	}
	*len = 0;
	if (n) {
		q.has_epoch = 1;
		q.epoch = store_epoch(d->store);
		q.n_entries = n;
		q.entries = pe;
		*len = ofc__v1__mutation_queue__get_packed_size(&q);
		if (*len <= QUEUE_MAX_BYTES) {
			buf = xmalloc(*len);
			ofc__v1__mutation_queue__pack(&q, buf);
		}
	} else {
		buf = xmalloc(1);
	}
	free(pe);
	free(e);
	return buf;
}

uint8_t *queue_pack_current(struct ofcd *d, size_t *len)
{
	return queue_pack(d, len);
}

/* After a write of what queue_pack made (buf, moved in): every waiting
 * mutation is in etcd now, and a same list need not be written again. */
void queue_written(struct ofcd *d, uint8_t *buf, size_t len)
{
	for (struct job *j = d->loop->queue; j; j = j->next)
		j->stored = queue_kept(d, j);
	free(d->loop->q_written);
	d->loop->q_written = buf;
	d->loop->q_written_len = len;
}

int queue_persist(struct ofcd *d, struct ofc_error *err)
{
	size_t len;
	uint8_t *buf;

	/* Not while taking over either: etcd's queue is the last leader's
	 * until the takeover has read it (queue_takeover_begin); what came
	 * meanwhile waits here and is written after it. */
	if (!d->clustered || d->loop->q_replaying || !d->loop->leading)
		return 0;
	buf = queue_pack(d, &len);
	if (!buf)
		return ofc_error_set(
		    err, OFC_E_RUNTIME,
		    "not queued: the waiting mutations would take %zu bytes in etcd, "
		    "more than %u; try again when the queue is shorter",
		    len, QUEUE_MAX_BYTES);
	/* (the same list as the last write: nothing to say) */
	if (d->loop->q_written && d->loop->q_written_len == len &&
	    memcmp(d->loop->q_written, buf, len) == 0) {
		free(buf);
		return 0;
	}
	struct store_write w = {STORE_QUEUE, len ? buf : NULL, len};
	if (store_write(d->store, d->loop->cfg->f->name, &w, 1, err) < 0) {
		free(buf);
		return -1;
	}
	queue_written(d, buf, len);
	return 0;
}

void queue_forget(struct ofcd *d)
{
	free(d->loop->q_written);
	d->loop->q_written = NULL;
	d->loop->q_written_len = 0;
}

/* What etcd's queue holds: NULL with why[0] 0 when nothing waits, NULL
 * with why set when it cannot be read or is no MutationQueue. */
static Ofc__V1__MutationQueue *queue_read(const struct ofcd *d, char *why, size_t n)
{
	struct ofc_error err = {0};
	char *data = NULL;
	size_t len = 0;
	bool missing = false;
	Ofc__V1__MutationQueue *q = NULL;

	why[0] = 0;
	if (store_get(d->store, d->loop->cfg->f->name, STORE_QUEUE, QUEUE_MAX_BYTES, &data, &len,
		      &missing, &err) < 0) {
		snprintf(why, n, "the queue the last leader left cannot be read (%.300s)", err.msg);
		return NULL;
	}
	if (!missing && len) {
		q = ofc__v1__mutation_queue__unpack(NULL, len, (const uint8_t *)data);
		if (!q)
			snprintf(why, n,
				 "the queue the last leader left in etcd (%zu bytes) is not a "
				 "MutationQueue",
				 len);
	}
	free(data);
	return q;
}

Ofc__V1__MutationQueue *queue_load(struct ofcd *d)
{
	char why[400];
	Ofc__V1__MutationQueue *q = queue_read(d, why, sizeof(why));

	if (why[0])
		ofcd_log(d, OFCD_LOG_ERR,
			 "%s: its mutations are not run (it is written again at the next change)",
			 why);
	/* (what etcd holds now is not what this replica last wrote: the next
	 * persist writes whatever it finds) */
	queue_forget(d);
	return q;
}

size_t queue_at_leader(const struct ofcd *d, struct arena *a,
		       bool (*tenant)(const void *ctx, const char *partition), const void *ctx,
		       Ofc__V1__TransactionInfo ***out)
{
	Ofc__V1__MutationQueue *q = NULL;
	char why[400];
	size_t n = 0;

	*out = NULL;
	/* (unreadable: the leader's own log says so; State shows none) */
	if (!d->clustered || d->loop->leading || !(q = queue_read(d, why, sizeof(why))))
		return 0;
	*out = arena_array(a, q->n_entries + 1, sizeof(**out));
	for (size_t i = 0; i < q->n_entries; i++) {
		const Ofc__V1__MutationQueue__Entry *e = q->entries[i];
		const char *kind = e->kind ? e->kind : "mutation"; /* (an older leader's) */
		Ofc__V1__TransactionInfo *t;

		if (tenant && !(e->partition && tenant(ctx, e->partition)))
			continue;
		t = arena_alloc(a, sizeof(*t));
		ofc__v1__transaction_info__init(t);
		t->state = "queued at the leader";
		t->target = arena_strdup(a, e->target ? e->target : "");
		t->kind = arena_strdup(
		    a, !tenant || !strcmp(kind, "release-partition") ? kind : "reconfigure");
		t->has_ticket = 1;
		t->ticket = e->ticket;
		if (!tenant) {
			t->has_peer_uid = t->has_peer_pid = 1;
			t->peer_uid = e->uid;
			t->peer_pid = (uint32_t)e->pid;
		}
		(*out)[n++] = t;
	}
	ofc__v1__mutation_queue__free_unpacked(q, NULL);
	return n;
}

struct job *queue_takeover_begin(struct ofcd *d)
{
	struct job *mine = d->loop->queue;

	d->loop->queue = d->loop->queue_tail = NULL;
	d->loop->nqueue = 0;
	d->loop->q_replaying = true;
	return mine;
}

void queue_append(struct ofcd *d, struct job *j)
{
	if (d->loop->queue_tail)
		d->loop->queue_tail->next = j;
	else
		d->loop->queue = j;
	d->loop->queue_tail = j;
	d->loop->nqueue++;
}

void queue_takeover_end(struct ofcd *d, struct job *mine)
{
	struct ofc_error err = {0};

	for (struct job *j = mine, *next; j; j = next) {
		next = j->next;
		j->next = NULL;
		queue_append(d, j);
	}
	d->loop->q_replaying = false;
	if (queue_persist(d, &err) < 0)
		ofcd_log(d, OFCD_LOG_WARNING, "etcd's queue not written after the takeover: %s",
			 err.msg);
}
