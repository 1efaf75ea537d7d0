/* A commit verified by the hosts' LLDP, on the loop thread (Reconfigure's
 * and ApplyConfig's verify_wiring_ms): a switch holding exactly the
 * cross-connects ofc asked for says nothing of the fibres behind it, so
 * the circuits a transaction changed are checked at their ends, by the
 * hosts' agents' reports (host_links.c) newer than the commit. The answer
 * waits until every one of them is confirmed (its end hears its source),
 * or names each that is not when the deadline passes; a circuit heard
 * miswired ends the wait at once. What a port hears counts only from
 * reports read more than the neighbour's LLDP time to live after the
 * commit (port_seen.heard_ms): lldpd holds an entry until it expires, and
 * one of before the commit could confirm a circuit whose fibre is crossed
 * (where the port heard, before the commit, the source its new circuit
 * should have); an entry still there a time to live later was heard
 * again since. So a deadline shorter than the hosts' LLDP time to live
 * (4 s as ofc-hostd sets lldpd; lldpd's own default, 120 s) confirms
 * nothing. Not confirmed, the commit is rolled back: a transaction to
 * the config and topology that ran before it, as they were (for
 * ApplyConfig, the previous config again, as a transaction that fails on
 * a device leaves it). The mutation queue waits meanwhile (the job stays
 * d->loop->running), so nothing else moves the circuits being checked. */
#include "controller/ofcd/conn.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define VERIFY_NAMED 8 /* circuits named in an answer; the rest counted */

struct vcirc {
	char *src;	/* "HOST:PORT" */
	char *dst_host; /* ... its end */
	uint32_t dst_port;
	bool confirmed;
	bool heard_since; /* its end's host reported since the commit */
	enum wiring_verdict last;
	bool stale;  /* ... what its port hears may be held from before the commit */
	char *heard; /* what it heard (miswired, stale) */
};

struct wiring_wait {
	struct job *j; /* the commit, its answer held */
	struct vcirc *c;
	uint32_t n, nconfirmed;
	int64_t commit_ms; /* monotonic, as the reports' */
	uint64_t timer;
	struct job *undo; /* its rollback, on the worker */
	char *why;	  /* why the commit was not confirmed */
};

int wiring_verify_ask(const struct request *rq, bool has, uint32_t ms, struct job *j)
{
	struct ofcd *d = rq->c->d;
	bool agents = false;

	if (!has)
		return 0;
	if (ms == 0 || ms > VERIFY_WIRING_MAX_MS)
		return refuse_req(rq->c, rq->req->id, OFC__V1__STATUS__STATUS_INVALID,
				  "verify_wiring_ms must be 1 to %u (10 minutes), not %u",
				  VERIFY_WIRING_MAX_MS, ms);
	if (j->dry_run || j->staged || j->partition || j->nhosts || j->free_ports)
		return refuse_req(
		    rq->c, rq->req->id, OFC__V1__STATUS__STATUS_INVALID,
		    "verify_wiring checks a commit of the whole fabric's topology or config: not "
		    "with %s",
		    j->dry_run	    ? "dry_run (nothing is committed)"
		    : j->staged	    ? "max_loss_percent (each stage is its own commit)"
		    : j->free_ports ? "free_ports"
				    : "a partition");
	for (uint32_t i = 0; i < d->loop->nhosts_seen && !agents; i++)
		agents = d->loop->hosts_seen[i].lldp_running;
	if (!agents)
		return refuse_req(
		    rq->c, rq->req->id, OFC__V1__STATUS__STATUS_FAILED,
		    "verify_wiring: nothing to verify the wiring against: %s; nothing "
		    "changed",
		    d->loop->nhosts_seen
			? "no host's agent reports an lldpd that answers"
			: "no host's agent (ofc-hostd, with lldpd) has reported to "
			  "this ofcd");
	j->verify_wiring_ms = ms;
	return 0;
}

static void wait_free(struct wiring_wait *w)
{
	if (!w)
		return;
	for (uint32_t i = 0; i < w->n; i++) {
		free(w->c[i].src);
		free(w->c[i].dst_host);
		free(w->c[i].heard);
	}
	free(w->c);
	free(w->why);
	free(w);
}

void wiring_verify_free(struct ofcd *d)
{
	struct wiring_wait *w = d->loop->verify;

	if (!w)
		return;
	if (w->timer)
		loop_timer_del(d->loop->ev, w->timer);
	if (d->loop->running == w->j)
		d->loop->running = NULL;
	job_free(w->j); /* (an undo on the worker is the worker's at close) */
	wait_free(w);
	d->loop->verify = NULL;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static char *circuit_key(const Ofc__V1__Circuit *c)
{
	return xasprintf("%s:%u>%s:%u", c->src_host, c->src_port, c->dst_host, c->dst_port);
}

/* The host circuits of now that old does not have, into w. */
static void changed_circuits(const Ofc__V1__State *old, const Ofc__V1__State *now,
			     struct wiring_wait *w)
{
	size_t n = 0, k = 0, cap = 0;
	char **keys;

	for (size_t i = 0; old && i < old->n_devices; i++)
		n += old->devices[i]->n_circuits;
	keys = xcalloc(n + 1, sizeof(*keys));
	for (size_t i = 0; old && i < old->n_devices; i++)
		for (size_t m = 0; m < old->devices[i]->n_circuits; m++) {
			const Ofc__V1__Circuit *c = old->devices[i]->circuits[m];

			if (c->src_host && c->dst_host)
				keys[k++] = circuit_key(c);
		}
	qsort(keys, k, sizeof(*keys), cmp_str);
	for (size_t i = 0; now && i < now->n_devices; i++)
		for (size_t m = 0; m < now->devices[i]->n_circuits; m++) {
			const Ofc__V1__Circuit *c = now->devices[i]->circuits[m];
			char *key;

			if (!c->src_host || !c->dst_host)
				continue;
			key = circuit_key(c);
			if (!bsearch(&key, keys, k, sizeof(*keys), cmp_str)) {
				GROW(w->c, cap, w->n + 1);
				w->c[w->n++] = (struct vcirc){
				    .src = xasprintf("%s:%u", c->src_host, c->src_port),
				    .dst_host = xstrdup(c->dst_host),
				    .dst_port = c->dst_port,
				    .last = WIRING_NOT_SEEN};
			}
			free(key);
		}
	for (size_t i = 0; i < k; i++)
		free(keys[i]);
	free(keys);
}

/* j's held answer with status st, message msg and (state: not NULL) its
 * transaction's state. */
static void rewrite_answer(struct job *j, Ofc__V1__Status st, const char *msg, const char *state)
{
	Ofc__V1__Response *r = ofc__v1__response__unpack(NULL, j->reply_len, j->reply);

	if (!r)
		return;
	r->status = st;
	free(r->message);
	r->message = xstrdup(msg);
	if (state && r->body_case == OFC__V1__RESPONSE__BODY_TRANSACTION && r->transaction) {
		free(r->transaction->state);
		r->transaction->state = xstrdup(state);
	}
	if (j->reply_buf) /* (reply lies in it) */
		free(j->reply_buf);
	else
		free(j->reply);
	j->reply_buf = NULL;
	j->reply_len = ofc__v1__response__get_packed_size(r);
	j->reply = xmalloc(j->reply_len + 1);
	ofc__v1__response__pack(r, j->reply);
	ofc__v1__response__free_unpacked(r, NULL);
}

/* The held answer's message (the commit's words). */
static char *answer_message(const struct job *j)
{
	Ofc__V1__Response *r = ofc__v1__response__unpack(NULL, j->reply_len, j->reply);
	char *m = xstrdup(r && r->message ? r->message : "");

	if (r)
		ofc__v1__response__free_unpacked(r, NULL);
	return m;
}

/* The wait's end: the queue goes on. */
static void wait_end(struct ofcd *d)
{
	struct wiring_wait *w = d->loop->verify;

	if (w->timer)
		loop_timer_del(d->loop->ev, w->timer);
	wait_free(w);
	d->loop->verify = NULL;
	d->loop->running = NULL;
	changed(d);
	ofcd_planner_check(d);
	ofcd_maybe_start(d);
}

/* Every changed circuit confirmed: the commit's answer says so. */
static void confirmed(struct ofcd *d)
{
	struct wiring_wait *w = d->loop->verify;
	struct job *j = w->j;
	char *was = answer_message(j), *msg;
	double s = (double)(wiring_now_ms() - w->commit_ms) / 1000;

	msg = xasprintf("%s; wiring confirmed: the %u circuit%s it changed heard at their ends "
			"over LLDP in %.1f s",
			was, w->n, w->n == 1 ? "" : "s", s);
	rewrite_answer(j, OFC__V1__STATUS__STATUS_OK, msg, NULL);
	ofcd_broadcast_event(d, OFC__V1__EVENT__KIND__KIND_WIRING_CONFIRMED, j->txn, j->ticket,
			     NULL, msg + strlen(was) + 2, msg, unix_ms(), NULL);
	ofcd_log(d, OFCD_LOG_NOTICE, "ticket %llu: transaction %llu: %s",
		 (unsigned long long)j->ticket, (unsigned long long)j->txn, msg + strlen(was) + 2);
	mutation_answer(d, j);
	job_free(j);
	free(was);
	free(msg);
	wait_end(d);
}

/* Each circuit not confirmed, in words (the first VERIFY_NAMED). */
static char *unconfirmed_words(const struct ofcd *d, const struct wiring_wait *w)
{
	struct strbuf sb = STRBUF_INIT;
	uint32_t named = 0, left = 0;

	for (uint32_t i = 0; i < w->n; i++) {
		const struct vcirc *c = &w->c[i];
		char dst[NAME_MAX_LEN + 16], said[2 * NAME_MAX_LEN + 300];

		if (c->confirmed)
			continue;
		if (named == VERIFY_NAMED) {
			left++;
			continue;
		}
		snprintf(dst, sizeof(dst), "%s:%u", c->dst_host, c->dst_port);
		sb_printf(&sb, "%s%s -> %s ", named++ ? "; " : "", c->src, dst);
		if (!c->heard_since)
			sb_printf(&sb, "not seen: %s's agent has not reported since the commit",
				  c->dst_host);
		else if (c->stale)
			sb_printf(&sb,
				  "not heard anew: %s hears %s, but not yet a time to live after "
				  "the commit",
				  dst, c->heard ? c->heard : "?");
		else if (c->last == WIRING_MISWIRED && c->heard) {
			wiring_difference(d, dst, c->heard, c->src, said, sizeof(said));
			sb_printf(&sb, "miswired: %s", said);
		} else if (c->last == WIRING_DARK)
			sb_printf(&sb, "dark: %s hears no LLDP neighbour", dst);
		else
			sb_printf(&sb, "not seen: %s's lldpd does not answer", c->dst_host);
	}
	if (left)
		sb_printf(&sb, "; and %u more", left);
	return sb_detach(&sb);
}

/* Not confirmed: the rollback handed to the worker (the commit answered
 * when it is back, wiring_verify_undone). */
static void not_confirmed(struct ofcd *d, bool timed_out)
{
	struct wiring_wait *w = d->loop->verify;
	struct job *j = w->j, *u;
	char *words = unconfirmed_words(d, w);

	w->why =
	    xasprintf("%u of the %u circuit%s transaction %llu changed not confirmed by the "
		      "hosts' LLDP %s: %s",
		      w->n - w->nconfirmed, w->n, w->n == 1 ? "" : "s", (unsigned long long)j->txn,
		      timed_out ? "within the deadline" : "(one heard miswired)", words);
	free(words);
	if (w->timer && !timed_out)
		loop_timer_del(d->loop->ev, w->timer);
	w->timer = 0;
	ofcd_log(d, OFCD_LOG_WARNING, "ticket %llu: wiring: %s; rolling back",
		 (unsigned long long)j->ticket, w->why);
	ofcd_broadcast_event(d, OFC__V1__EVENT__KIND__KIND_WIRING_NOT_CONFIRMED, j->txn, j->ticket,
			     NULL, w->why, w->why, unix_ms(), NULL);
	if (!j->undo_cfg) { /* (nothing kept to go back to: said as it is) */
		char *msg =
		    xasprintf("%s; not rolled back: the config before was not kept", w->why);

		rewrite_answer(j, OFC__V1__STATUS__STATUS_FAILED, msg, NULL);
		free(msg);
		mutation_answer(d, j);
		job_free(j);
		wait_end(d);
		return;
	}
	u = xcalloc(1, sizeof(*u));
	u->kind = j->kind;
	u->undo = true;
	u->undo_cfg = j->undo_cfg;
	j->undo_cfg = NULL;
	u->principal = xstrdup(j->principal ? j->principal : "ofcd");
	u->who = j->who ? xstrdup(j->who) : NULL;
	u->peer = j->peer;
	u->filename = xstrdup(u->undo_cfg->path ? u->undo_cfg->path : "the config before");
	u->target = xasprintf("the config and topology before transaction %llu (its wiring not "
			      "confirmed)",
			      (unsigned long long)j->txn);
	w->undo = u;
	ofcd_hand_to_worker(d, u);
	d->loop->running_state = "rolling back: wiring not confirmed";
	changed(d);
}

static int64_t deadline_timer(struct loop *l, uint64_t id, void *ctx)
{
	struct ofcd *d = ctx;

	(void)l;
	(void)id;
	if (d->loop->verify && !d->loop->verify->undo) {
		d->loop->verify->timer = 0;
		not_confirmed(d, true);
	}
	return LOOP_NOMORE;
}

static bool verify_begin(struct ofcd *d, struct job *j)
{
	struct wiring_wait *w;
	Ofc__V1__Response *r;
	bool ok;

	if (!j->verify_wiring_ms || j->undo || !j->snap || d->loop->verify)
		return false;
	r = ofc__v1__response__unpack(NULL, j->reply_len, j->reply);
	ok = r && r->status == OFC__V1__STATUS__STATUS_OK && j->txn;
	if (r)
		ofc__v1__response__free_unpacked(r, NULL);
	if (!ok)
		return false;
	w = xcalloc(1, sizeof(*w));
	changed_circuits(d->loop->snap ? d->loop->snap->state : NULL, j->snap->state, w);
	if (!w->n) {
		char *was = answer_message(j), *msg;

		msg = xasprintf("%s; wiring: no circuit changed, nothing to verify", was);
		rewrite_answer(j, OFC__V1__STATUS__STATUS_OK, msg, NULL);
		free(was);
		free(msg);
		wait_free(w);
		return false;
	}
	mutation_settle(d, j);
	w->j = j;
	w->commit_ms = wiring_now_ms();
	w->timer = loop_timer(d->loop->ev, j->verify_wiring_ms, deadline_timer, d);
	d->loop->verify = w;
	d->loop->running_state = "verifying wiring";
	ofcd_log(d, OFCD_LOG_INFO,
		 "ticket %llu: transaction %llu: waiting up to %.1f s for the hosts' LLDP to "
		 "confirm the %u circuit%s it changed",
		 (unsigned long long)j->ticket, (unsigned long long)j->txn,
		 j->verify_wiring_ms / 1000.0, w->n, w->n == 1 ? "" : "s");
	changed(d);
	return true;
}

void wiring_verify_report(struct ofcd *d, const struct host_seen *h)
{
	struct wiring_wait *w = d->loop->verify;
	bool miswired = false;

	if (!w || w->undo || h->reported_ms <= w->commit_ms)
		return;
	for (uint32_t i = 0; i < w->n; i++) {
		struct vcirc *c = &w->c[i];
		enum wiring_verdict v;

		if (c->confirmed || strcmp(c->dst_host, h->name) != 0)
			continue;
		v = wiring_port_verdict(h, c->src, c->dst_port);
		c->heard_since = true;
		c->last = v;
		c->stale = (v == WIRING_CONFIRMED || v == WIRING_MISWIRED) &&
			   h->ports[c->dst_port].heard_ms < w->commit_ms;
		free(c->heard);
		c->heard = v == WIRING_CONFIRMED || v == WIRING_MISWIRED
			       ? xstrdup(h->ports[c->dst_port].neighbour)
			       : NULL;
		if (c->stale)
			continue;
		if (v == WIRING_CONFIRMED) {
			c->confirmed = true;
			w->nconfirmed++;
		}
		miswired |= v == WIRING_MISWIRED;
	}
	if (w->nconfirmed == w->n)
		confirmed(d);
	else if (miswired)
		not_confirmed(d, false);
}

static bool verify_undone(struct ofcd *d, struct job *u)
{
	struct wiring_wait *w = d->loop->verify;
	struct job *j;
	Ofc__V1__Response *r;
	char *msg;
	bool ok;

	if (!w || w->undo != u)
		return false;
	j = w->j;
	mutation_settle(d, u);
	r = ofc__v1__response__unpack(NULL, u->reply_len, u->reply);
	ok = r && r->status == OFC__V1__STATUS__STATUS_OK;
	if (ok)
		msg =
		    xasprintf("%s; rolled back: transaction %llu restored the config and topology "
			      "before it",
			      w->why, (unsigned long long)u->txn);
	else
		msg = xasprintf("%s; the rollback failed (%s): the devices hold what transaction "
				"%llu made, or what the rollback left (ofc status)",
				w->why, r && r->message ? r->message : "no answer",
				(unsigned long long)j->txn);
	if (r)
		ofc__v1__response__free_unpacked(r, NULL);
	rewrite_answer(j, OFC__V1__STATUS__STATUS_FAILED, msg, ok ? "rolled-back" : "failed");
	d->loop->metrics.txn_rolled_back += ok;
	ofcd_log(d, OFCD_LOG_WARNING, "ticket %llu: %s", (unsigned long long)j->ticket, msg);
	free(msg);
	mutation_answer(d, j);
	job_free(j);
	if (w->timer)
		loop_timer_del(d->loop->ev, w->timer);
	wait_free(w);
	d->loop->verify = NULL;
	return true;
}

bool wiring_verify_took(struct ofcd *d, struct job *j)
{
	if (verify_undone(d, j)) {
		d->loop->running = NULL;
		job_free(j);
		changed(d);
		ofcd_planner_check(d);
		ofcd_maybe_start(d);
		return true;
	}
	return (j->kind == JOB_RECONFIGURE || j->kind == JOB_APPLY_CONFIG) && !j->order &&
	       verify_begin(d, j);
}
