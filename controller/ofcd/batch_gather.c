/* Queued jobs run together, the loop's half (batch.c says why and how the
 * mutation worker runs them): which jobs queued behind the head go with it,
 * whether a prolog at the head waits for its plan ahead, and which job of
 * the running batch a Cancel names. */
#include "controller/ofcd/batch.h"
#include "controller/ofcd/conn.h"

#include <stdlib.h>
#include <string.h>

static bool is_prolog(const struct job *j)
{
	return j->kind == JOB_RECONFIGURE && j->nhosts && j->partition && j->spec && !j->dry_run &&
	       !j->answered;
}

static bool is_release(const struct job *j)
{
	return j->kind == JOB_RELEASE && j->partition && !j->dry_run && !j->answered;
}

/* A set of names (borrowed), open addressing; cap a power of two. */
struct names {
	const char **v;
	uint32_t cap, n;
};

static uint32_t name_hash(const char *s)
{
	uint32_t h = 2166136261u; /* FNV-1a */

	while (*s)
		h = (h ^ (uint8_t)*s++) * 16777619u;
	return h;
}

static bool names_has(const struct names *t, const char *s)
{
	for (uint32_t i = t->cap ? name_hash(s) & (t->cap - 1) : 0; t->cap && t->v[i];
	     i = (i + 1) & (t->cap - 1))
		if (strcmp(t->v[i], s) == 0)
			return true;
	return false;
}

static void names_add(struct names *t, const char *s)
{
	if (2 * (t->n + 1) > t->cap) {
		struct names g = {xcalloc(t->cap ? 2 * t->cap : 64, sizeof(char *)),
				  t->cap ? 2 * t->cap : 64, 0};

		for (uint32_t i = 0; i < t->cap; i++)
			if (t->v[i])
				names_add(&g, t->v[i]);
		free(t->v);
		*t = g;
	}
	uint32_t i = name_hash(s) & (t->cap - 1);
	while (t->v[i])
		i = (i + 1) & (t->cap - 1);
	t->v[i] = s;
	t->n++;
}

/* x may run with the jobs in hosts and parts (a prolog's or a release's). */
static bool joins(struct ofcd *d, bool prolog, const struct job *x, const struct names *hosts,
		  const struct names *parts)
{
	/* a renumbered prolog no thread has started on would be planned in
	 * the worker's turn: it heads the next batch instead, planned by then */
	bool ok = prolog ? is_prolog(x) && (!x->ahead || ahead_started(x->ahead)) : is_release(x);

	for (uint32_t i = 0; ok && prolog && i < x->nhosts; i++)
		ok = !names_has(hosts, x->hosts[i]);
	return ok && !names_has(parts, x->partition) && !outcome_recorded(d, x);
}

void batch_gather(struct ofcd *d, struct job *head)
{
	bool prolog = is_prolog(head);
	struct names hosts = {0}, parts = {0};
	struct job **tail = &head->batch;
	double t0 = now_seconds();
	struct job *x;

	if (!prolog && !is_release(head))
		return;
	names_add(&parts, head->partition);
	for (uint32_t i = 0; prolog && i < head->nhosts; i++)
		names_add(&hosts, head->hosts[i]);
	for (uint32_t n = 1; n < BATCH_MAX && (x = d->loop->queue); n++) {
		if (!joins(d, prolog, x, &hosts, &parts))
			break;
		d->loop->queue = x->next;
		if (!d->loop->queue)
			d->loop->queue_tail = NULL;
		d->loop->nqueue--;
		x->next = NULL;
		queue_start(d, x); /* (not answered from its outcome: joins said so) */
		x->t0 = t0;
		*tail = x;
		tail = &x->next;
		names_add(&parts, x->partition);
		for (uint32_t i = 0; prolog && i < x->nhosts; i++)
			names_add(&hosts, x->hosts[i]);
	}
	free(hosts.v);
	free(parts.v);
}

bool batch_wait(struct ofcd *d, struct job *j)
{
	double waited = now_seconds() - j->queued_s;

	/* (a turn of the loop at least: the prologs sent with it are read) */
	if (!is_prolog(j) || !j->ahead || d->loop->stopping || waited > BATCH_WAIT_S ||
	    (waited >= BATCH_GATHER_S && ahead_done(j->ahead)))
		return false;
	return true;
}

struct job *batch_running(const struct ofcd *d, uint64_t ticket, uint64_t conn_id, uint64_t req_id)
{
	struct job *r = d->loop->running;

	for (struct job *x = r; x; x = x == r ? r->batch : x->next)
		if (ticket ? x->ticket == ticket : x->conn_id == conn_id && x->req_id == req_id)
			return x;
	return NULL;
}
