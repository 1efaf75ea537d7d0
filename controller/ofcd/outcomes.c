/* The outcomes of recent mutations sent with a request_key (docs/control.md,
 * "Sending a mutation again"): a client that lost its answer (the leader
 * killed, the connection broken) sends the same request with the same key
 * to the next replica, and the leader answers it with what the first run
 * did instead of running it a second time.
 *
 * A keyed mutation is marked started when it leaves the queue for the
 * worker, and done with its answer when the worker is done with it. A
 * replica leading on etcd keeps the table in the store (STORE_OUTCOMES,
 * an ofc.v1.MutationOutcomes): "started" goes in the same etcd
 * transaction that takes the request out of etcd's queue, so no store
 * state shows a request both waiting and started. The next leader reads
 * the table at its takeover and settles what its predecessor left started:
 * the record's generation grew since (the transaction committed, perhaps
 * by the takeover's repair) is recorded as committed; otherwise it did not
 * take effect (rolled back, or never reached the devices) and is
 * forgotten, so that the client's resend runs it, once. A single ofcd
 * keeps the table in memory only: its store is the worker's, and a resend
 * across its restart finds the record as any new request does.
 *
 * Keys are the client's: the same key from another owner (uid, or the
 * gateway principal) is another request, and a key sent again for another
 * request (kind and target) is refused. Loop thread only. */
#include "controller/ofcd/conn.h"

#include <stdlib.h>
#include <string.h>

#include "proto/state.pb-c.h"

/* etcd refuses a request over 1.5 MiB; the table stays well under it */
#define OUTCOMES_MAX_BYTES (1u << 20)
/* An answer kept larger than this is cut to its status, message and the
 * transaction's id and state. */
#define OUTCOME_RESPONSE_MAX 2048

/* ---- the table ------------------------------------------------------------------------ */

static void outcome_clear(struct outcome *o)
{
	free(o->key);
	free(o->owner);
	free(o->kind);
	free(o->target);
	free(o->replica);
	free(o->response);
	memset(o, 0, sizeof(*o));
}

void outcomes_free(struct outcomes *t)
{
	for (uint32_t i = 0; i < t->n; i++)
		outcome_clear(&t->v[i]);
	free(t->v);
	t->v = NULL;
	t->n = 0;
}

static void outcomes_remove(struct outcomes *t, uint32_t i)
{
	outcome_clear(&t->v[i]);
	memmove(&t->v[i], &t->v[i + 1], (t->n - i - 1) * sizeof(*t->v));
	t->n--;
}

void outcomes_trim(struct outcomes *t, uint64_t now_ms)
{
	uint32_t i = 0;

	/* oldest first: the expired and those past the count leave from the front */
	while (i < t->n) {
		bool old = t->v[i].time_ms + OUTCOMES_MAX_AGE_MS < now_ms;

		if (old || t->n - i > OUTCOMES_MAX)
			outcomes_remove(t, i);
		else
			i++;
	}
}

struct outcome *outcomes_find(struct outcomes *t, const char *owner, const char *key)
{
	for (uint32_t i = t->n; i-- > 0;)
		if (strcmp(t->v[i].key, key) == 0 && strcmp(t->v[i].owner, owner) == 0)
			return &t->v[i];
	return NULL;
}

struct outcome *outcomes_put(struct outcomes *t, const char *owner, const char *key)
{
	struct outcome *o = outcomes_find(t, owner, key);

	if (o)
		outcomes_remove(t, (uint32_t)(o - t->v));
	t->v = xreallocarray(t->v, t->n + 1, sizeof(*t->v));
	o = &t->v[t->n++];
	memset(o, 0, sizeof(*o));
	o->key = xstrdup(key);
	o->owner = xstrdup(owner);
	return o;
}

static char *dup_or_null(const char *s)
{
	return s ? xstrdup(s) : NULL;
}

uint8_t *outcomes_pack(const struct outcomes *t, uint64_t epoch, size_t *len)
{
	Ofc__V1__MutationOutcomes m = OFC__V1__MUTATION_OUTCOMES__INIT;
	Ofc__V1__MutationOutcomes__Outcome *e = xcalloc(t->n + 1, sizeof(*e));
	Ofc__V1__MutationOutcomes__Outcome **pe = xcalloc(t->n + 1, sizeof(*pe));
	uint8_t *buf;

	for (uint32_t i = 0; i < t->n; i++) {
		const struct outcome *o = &t->v[i];

		ofc__v1__mutation_outcomes__outcome__init(&e[i]);
		e[i].key = o->key;
		e[i].owner = o->owner;
		e[i].kind = o->kind;
		e[i].target = o->target;
		e[i].replica = o->replica;
		e[i].has_ticket = e[i].has_epoch = e[i].has_done = 1;
		e[i].has_generation_before = e[i].has_time_unix_ms = 1;
		e[i].ticket = o->ticket;
		e[i].epoch = o->epoch;
		e[i].done = o->done;
		e[i].generation_before = o->gen_before;
		e[i].time_unix_ms = o->time_ms;
		e[i].has_response = o->response != NULL;
		e[i].response.data = o->response;
		e[i].response.len = o->response_len;
		pe[i] = &e[i];
	}
	m.has_epoch = epoch != 0;
	m.epoch = epoch;
	m.n_outcomes = t->n;
	m.outcomes = pe;
	*len = ofc__v1__mutation_outcomes__get_packed_size(&m);
	buf = xmalloc(*len + 1);
	ofc__v1__mutation_outcomes__pack(&m, buf);
	free(pe);
	free(e);
	return buf;
}

int outcomes_unpack(struct outcomes *t, const uint8_t *buf, size_t len)
{
	Ofc__V1__MutationOutcomes *m = ofc__v1__mutation_outcomes__unpack(NULL, len, buf);

	outcomes_free(t);
	if (!m)
		return -1;
	for (size_t i = 0; i < m->n_outcomes; i++) {
		const Ofc__V1__MutationOutcomes__Outcome *e = m->outcomes[i];
		struct outcome *o;

		if (!e->key || !e->owner || !*e->key)
			continue; /* (nothing a resend could match) */
		o = outcomes_put(t, e->owner, e->key);
		o->kind = dup_or_null(e->kind);
		o->target = dup_or_null(e->target);
		o->replica = dup_or_null(e->replica);
		o->ticket = e->ticket;
		o->epoch = e->epoch;
		o->done = e->done;
		o->gen_before = e->generation_before;
		o->time_ms = e->time_unix_ms;
		if (e->has_response && e->response.len) {
			o->response = xmalloc(e->response.len);
			memcpy(o->response, e->response.data, e->response.len);
			o->response_len = e->response.len;
		}
	}
	ofc__v1__mutation_outcomes__free_unpacked(m, NULL);
	return 0;
}

/* ---- the daemon's side ----------------------------------------------------------------- */

/* Who sent it: the gateway principal's identity, else the socket peer's
 * uid (a client's resend after a failover comes as the same one). */
static char *owner_of(const struct job *j)
{
	return j->who ? xasprintf("gateway:%s", j->who) : xasprintf("uid:%u", j->peer.uid);
}

void outcome_adopt(struct ofcd *d, struct job *j, bool mutation, const uint8_t *raw, size_t len,
		   bool gw)
{
	Ofc__V1__Request *req;

	if (!raw || !mutation)
		return;
	/* (kept for the queue in etcd; and a staged change's for its record,
	 * from which a new leader or this ofcd's next start resumes it) */
	if (d->clustered || j->staged) {
		j->req = xmalloc(len ? len : 1);
		memcpy(j->req, raw, len);
		j->req_len = len;
		j->via_gateway = gw;
	}
	/* (a dry run changes nothing: nothing to answer twice) */
	if (j->dry_run || !(req = ofc__v1__request__unpack(NULL, len, raw)))
		return;
	if (req->request_key && *req->request_key)
		j->key = xstrndup(req->request_key, OUTCOME_KEY_MAX + 1);
	ofc__v1__request__free_unpacked(req, NULL);
	/* (what an operator sends again by hand, or looks up) */
	if (j->key && outcome_key_ok(j->key))
		ofcd_log(d, OFCD_LOG_INFO, "ticket %llu carries request_key '%s'",
			 (unsigned long long)j->ticket, j->key);
}

/* The table into the store with the queue's new list (NULL: the queue not
 * written), one etcd transaction. A single ofcd writes nothing. */
static int outcomes_write(struct ofcd *d, const uint8_t *q, size_t qlen, struct ofc_error *err)
{
	struct store_write w[2];
	uint32_t n = 0;
	size_t len;
	uint8_t *buf;
	int rc;

	/* (bounded in memory too: a single ofcd writes nothing) */
	outcomes_trim(&d->loop->outcomes, unix_ms());
	if (!d->clustered || !d->loop->leading)
		return 0;
	buf = outcomes_pack(&d->loop->outcomes, store_epoch(d->store), &len);
	if (len > OUTCOMES_MAX_BYTES) {
		free(buf);
		return ofc_error_set(err, OFC_E_RUNTIME,
				     "the outcomes would take %zu bytes in etcd, more than %u", len,
				     OUTCOMES_MAX_BYTES);
	}
	if (q)
		w[n++] = (struct store_write){STORE_QUEUE, qlen ? q : NULL, qlen};
	w[n++] = (struct store_write){STORE_OUTCOMES, d->loop->outcomes.n ? buf : NULL,
				      d->loop->outcomes.n ? len : 0};
	rc = store_write(d->store, d->loop->cfg->f->name, w, n, err);
	free(buf);
	return rc;
}

static uint64_t record_generation(const struct ofcd *d)
{
	return d->loop->snap && d->loop->snap->state ? d->loop->snap->state->config_generation : 0;
}

/* j's answer from o: the recorded one with j's id, or a refusal when the
 * key was sent for another request. */
static void answer_recorded(struct job *j, const struct outcome *o)
{
	Ofc__V1__Response *r = NULL;
	char msg[1400];

	if ((o->kind && strcmp(o->kind, job_kind_name(j->kind)) != 0) ||
	    (o->target && j->target && strcmp(o->target, j->target) != 0)) {
		Ofc__V1__Response e = OFC__V1__RESPONSE__INIT;

		snprintf(msg, sizeof(msg),
			 "request_key '%.100s' was sent before for another request (%s %.200s, "
			 "ticket %llu): a key names one request; this one was not run",
			 j->key, o->kind ? o->kind : "?", o->target ? o->target : "",
			 (unsigned long long)o->ticket);
		e.has_id = e.has_status = 1;
		e.id = j->req_id;
		e.status = OFC__V1__STATUS__STATUS_INVALID;
		e.message = msg;
		response_pack(&e, &j->reply, &j->reply_len);
		return;
	}
	if (o->response)
		r = ofc__v1__response__unpack(NULL, o->response_len, o->response);
	if (!r) {
		r = xcalloc(1, sizeof(*r));
		ofc__v1__response__init(r);
		r->has_status = 1;
		r->status = OFC__V1__STATUS__STATUS_INTERNAL;
	}
	snprintf(msg, sizeof(msg),
		 "%.900s (the recorded outcome of request_key '%.100s', ticket %llu on %.64s: "
		 "not run again)",
		 r->message ? r->message : "", j->key, (unsigned long long)o->ticket,
		 o->replica ? o->replica : "this replica");
	free(r->message);
	r->message = xstrdup(msg);
	r->has_id = 1;
	r->id = j->req_id;
	response_pack(r, &j->reply, &j->reply_len);
	ofc__v1__response__free_unpacked(r, NULL);
}

bool outcome_key_ok(const char *key)
{
	size_t n = strlen(key);

	if (n == 0 || n > OUTCOME_KEY_MAX)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!strchr("._:-", key[i]) &&
		    !((key[i] >= 'a' && key[i] <= 'z') || (key[i] >= 'A' && key[i] <= 'Z') ||
		      (key[i] >= '0' && key[i] <= '9')))
			return false;
	return true;
}

/* j, answered without running, has left the queue: etcd's queue says so. */
static bool unqueued(struct ofcd *d, struct job *j)
{
	struct ofc_error err = {0};

	if (queue_kept(d, j) && queue_persist(d, &err) < 0)
		ofcd_log(d, OFCD_LOG_WARNING,
			 "ticket %llu answered, but etcd's queue still lists "
			 "it (%s)",
			 (unsigned long long)j->ticket, err.msg);
	return true;
}

bool outcome_recorded(struct ofcd *d, const struct job *j)
{
	struct outcome *o;
	char *owner;

	if (!j->key)
		return false;
	if (!outcome_key_ok(j->key))
		return true;
	owner = owner_of(j);
	o = outcomes_find(&d->loop->outcomes, owner, j->key);
	free(owner);
	return o && o->done;
}

bool queue_start(struct ofcd *d, struct job *j)
{
	struct ofc_error err = {0};
	uint8_t *q = NULL;
	size_t qlen = 0;
	char *owner;
	struct outcome *o;

	if (!j->key) {
		if (queue_kept(d, j) && queue_persist(d, &err) < 0)
			ofcd_log(d, OFCD_LOG_WARNING,
				 "ticket %llu starts, but etcd's queue still lists it (%s): a "
				 "next leader may run it again",
				 (unsigned long long)j->ticket, err.msg);
		return false;
	}
	if (!outcome_key_ok(j->key)) {
		Ofc__V1__Response e = OFC__V1__RESPONSE__INIT;
		char msg[200];

		snprintf(msg, sizeof(msg),
			 "request_key: 1 to %d characters of A-Z a-z 0-9 . _ : - (a UUID, say); "
			 "this request was not run",
			 OUTCOME_KEY_MAX);
		e.has_id = e.has_status = 1;
		e.id = j->req_id;
		e.status = OFC__V1__STATUS__STATUS_INVALID;
		e.message = msg;
		response_pack(&e, &j->reply, &j->reply_len);
		j->answered = true;
		return unqueued(d, j);
	}
	owner = owner_of(j);
	o = outcomes_find(&d->loop->outcomes, owner, j->key);
	if (o && o->done) {
		answer_recorded(j, o);
		j->answered = true;
		ofcd_log(d, OFCD_LOG_NOTICE,
			 "ticket %llu: request_key '%s' of %s ran before as ticket %llu: answered "
			 "with its recorded outcome, not run again",
			 (unsigned long long)j->ticket, j->key, owner,
			 (unsigned long long)o->ticket);
		free(owner);
		return unqueued(d, j);
	}
	o = outcomes_put(&d->loop->outcomes, owner, j->key);
	free(owner);
	o->kind = xstrdup(job_kind_name(j->kind));
	o->target = dup_or_null(j->target);
	o->replica = dup_or_null(d->clustered ? d->loop->cl.name : NULL);
	o->ticket = j->ticket;
	o->epoch = store_epoch(d->store);
	o->gen_before = record_generation(d);
	o->time_ms = unix_ms();
	/* (started: the queue's new list and this entry in one write) */
	if (queue_kept(d, j) && !d->loop->q_replaying)
		q = queue_pack_current(d, &qlen);
	if (outcomes_write(d, q, qlen, &err) < 0) {
		ofcd_log(d, OFCD_LOG_WARNING,
			 "ticket %llu starts, but etcd does not record it started (%s): a next "
			 "leader may run it again from its queue",
			 (unsigned long long)j->ticket, err.msg);
		free(q);
	} else if (q) {
		queue_written(d, q, qlen);
	}
	return false;
}

/* r (no id) as o's answer; one over OUTCOME_RESPONSE_MAX is cut to its
 * status, the start of its message and what its transaction was. */
static void keep_answer(struct outcome *o, const Ofc__V1__Response *r)
{
	Ofc__V1__Response cut = OFC__V1__RESPONSE__INIT;
	Ofc__V1__TransactionInfo t = OFC__V1__TRANSACTION_INFO__INIT;
	const Ofc__V1__TransactionInfo *f =
	    r->body_case == OFC__V1__RESPONSE__BODY_TRANSACTION ? r->transaction : NULL;
	char msg[1001];

	response_pack(r, &o->response, &o->response_len);
	if (o->response_len <= OUTCOME_RESPONSE_MAX)
		return;
	free(o->response);
	snprintf(msg, sizeof(msg), "%s", r->message ? r->message : "");
	cut.has_status = r->has_status;
	cut.status = r->status;
	cut.message = msg;
	if (f) {
		t.has_id = f->has_id;
		t.id = f->id;
		t.has_ticket = f->has_ticket;
		t.ticket = f->ticket;
		t.has_operations = f->has_operations;
		t.operations = f->operations;
		t.state = f->state;
		t.kind = f->kind;
		t.target = f->target && strlen(f->target) < 400 ? f->target : NULL;
		cut.body_case = OFC__V1__RESPONSE__BODY_TRANSACTION;
		cut.transaction = &t;
	}
	response_pack(&cut, &o->response, &o->response_len);
}

void outcome_done(struct ofcd *d, struct job *j)
{
	struct ofc_error err = {0};
	Ofc__V1__Response *r;
	char *owner;
	struct outcome *o;

	if (!j->key || j->answered)
		return;
	owner = owner_of(j);
	o = outcomes_find(&d->loop->outcomes, owner, j->key);
	free(owner);
	if (!o || o->ticket != j->ticket)
		return;
	r = ofc__v1__response__unpack(NULL, j->reply_len, j->reply);
	/* Stopped because this replica leads no more: what it did is the
	 * journal's, settled by the next leader's takeover (outcomes_takeover),
	 * not an answer to keep. */
	if (r && r->status == OFC__V1__STATUS__STATUS_NOT_LEADER) {
		ofc__v1__response__free_unpacked(r, NULL);
		return;
	}
	o->done = true;
	o->time_ms = unix_ms();
	free(o->response);
	o->response = NULL;
	o->response_len = 0;
	if (r) {
		r->has_id = 0;
		/* (a resend wants the outcome, not the schedule or the plan) */
		if (r->body_case == OFC__V1__RESPONSE__BODY_TRANSACTION) {
			ofc__v1__schedule__free_unpacked(r->transaction->schedule, NULL);
			r->transaction->schedule = NULL;
			free(r->transaction->plan);
			r->transaction->plan = NULL;
		} else if (r->body_case != OFC__V1__RESPONSE__BODY_CONFIG_ERROR &&
			   r->body_case != OFC__V1__RESPONSE__BODY__NOT_SET) {
			ofc__v1__response__free_unpacked(r, NULL);
			r = NULL;
		}
	}
	if (r) {
		keep_answer(o, r);
		ofc__v1__response__free_unpacked(r, NULL);
	}
	if (outcomes_write(d, NULL, 0, &err) < 0)
		ofcd_log(d, OFCD_LOG_WARNING,
			 "ticket %llu: its outcome is not in etcd (%s): a resend of request_key "
			 "'%.100s' at a next leader is settled from the record",
			 (unsigned long long)j->ticket, err.msg, j->key);
}

/* A started entry another leadership left: committed when the record's
 * generation grew since it started (one mutation runs at a time, and the
 * takeover's repair commits or rolls back the one it left). */
static bool settle(struct ofcd *d, struct outcome *o, uint64_t gen)
{
	Ofc__V1__Response r = OFC__V1__RESPONSE__INIT;
	Ofc__V1__TransactionInfo t = OFC__V1__TRANSACTION_INFO__INIT;
	char msg[600];

	if (gen <= o->gen_before) {
		ofcd_log(d, OFCD_LOG_NOTICE,
			 "request_key '%.100s' (%s %.200s, ticket %llu on %s) had started when its "
			 "leader went away and did not take effect (the record is at generation "
			 "%llu still): not run here; its client's resend runs it once",
			 o->key, o->kind ? o->kind : "?", o->target ? o->target : "",
			 (unsigned long long)o->ticket, o->replica ? o->replica : "?",
			 (unsigned long long)gen);
		return false;
	}
	snprintf(msg, sizeof(msg),
		 "committed transaction %llu (ticket %llu on %.64s, which went away before it "
		 "answered)",
		 (unsigned long long)gen, (unsigned long long)o->ticket,
		 o->replica ? o->replica : "?");
	r.has_status = 1;
	r.status = OFC__V1__STATUS__STATUS_OK;
	r.message = msg;
	t.has_id = t.has_ticket = 1;
	t.id = gen;
	t.ticket = o->ticket;
	t.state = "committed";
	t.target = o->target;
	t.kind = o->kind;
	r.body_case = OFC__V1__RESPONSE__BODY_TRANSACTION;
	r.transaction = &t;
	free(o->response);
	response_pack(&r, &o->response, &o->response_len);
	o->done = true;
	ofcd_log(d, OFCD_LOG_NOTICE, "request_key '%.100s' (%s %.200s): %s", o->key,
		 o->kind ? o->kind : "?", o->target ? o->target : "", msg);
	return true;
}

void outcomes_takeover(struct ofcd *d)
{
	struct ofc_error err = {0};
	char *data = NULL;
	size_t len = 0;
	bool missing = false;
	uint64_t gen = record_generation(d);

	if (!d->clustered)
		return;
	if (store_get(d->store, d->loop->cfg->f->name, STORE_OUTCOMES, OUTCOMES_MAX_BYTES, &data,
		      &len, &missing, &err) < 0) {
		ofcd_log(d, OFCD_LOG_ERR,
			 "the outcomes the last leader left cannot be read (%s): resends of "
			 "its requests run again",
			 err.msg);
		outcomes_free(&d->loop->outcomes);
	} else if (!missing && outcomes_unpack(&d->loop->outcomes, (uint8_t *)data, len) < 0) {
		ofcd_log(d, OFCD_LOG_ERR,
			 "the outcomes the last leader left in etcd (%zu bytes) are no "
			 "MutationOutcomes: resends of its requests run again",
			 len);
	} else if (missing) {
		outcomes_free(&d->loop->outcomes);
	}
	free(data);
	for (uint32_t i = 0; i < d->loop->outcomes.n;) {
		struct outcome *o = &d->loop->outcomes.v[i];

		if (o->done || settle(d, o, gen))
			i++;
		else
			outcomes_remove(&d->loop->outcomes, i);
	}
	if (outcomes_write(d, NULL, 0, &err) < 0)
		ofcd_log(d, OFCD_LOG_WARNING, "the outcomes not written after the takeover: %s",
			 err.msg);
}
