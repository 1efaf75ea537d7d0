/* The mutations ofcd takes on its loop thread (ApplyConfig, Reconfigure,
 * ReleasePartition, MoveToPhase, ReportFailure, Adopt, TestbedRun,
 * TestbedCheck, TestbedDown, TestbedUp: checked, then queued for the
 * mutation worker; Cancel of a queued one): the handlers of the request
 * table's mutation rows (requests.c). The worker runs them in mutation.c,
 * adopt.c, testbed.c and testbed_up.c. */
#include "controller/ofcd/batch.h"
#include "controller/ofcd/conn.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* A drain's and a staged change's wait for the jobs to take the new schedule. */
#define DRAIN_GRACE_MS_DEFAULT 3000u
#define DRAIN_GRACE_MS_MAX     600000u

/* ---- mutations --------------------------------------------------------------------- */

/* A name or a host a request gives, as the config allows them. */
bool plain_name(const char *s)
{
	size_t n = strlen(s);

	if (!n || n > NAME_MAX_LEN)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && !strchr("-_.", s[i]))
			return false;
	return true;
}

/* Reconfigure {partition, topology, hosts, relabel}: a partition made at
 * run time (held.c). Answers and returns -1 when refused. */
static int runtime_partition(struct conn *c, const Ofc__V1__Reconfigure *r, struct job *j)
{
	uint64_t id = j->req_id;

	if (!r->n_hosts || !r->partition || !plain_name(r->partition) ||
	    r->target_case != OFC__V1__RECONFIGURE__TARGET_TOPOLOGY || !r->topology ||
	    !*r->topology || strlen(r->topology) > TOPO_MAX_SPEC)
		return refuse_req(
		    c, id, OFC__V1__STATUS__STATUS_INVALID,
		    "a partition made of hosts needs its hosts, a name (letters, digits, "
		    "'-', '_', '.', up to %u) and a topology spec (up to %u characters)",
		    NAME_MAX_LEN, TOPO_MAX_SPEC);
	if (r->n_hosts > HELD_MAX_HOSTS)
		return refuse_req(c, id, OFC__V1__STATUS__STATUS_INVALID,
				  "a partition takes up to %u hosts", HELD_MAX_HOSTS);
	for (size_t i = 0; i < r->n_hosts; i++)
		if (!plain_name(r->hosts[i]))
			return refuse_req(
			    c, id, OFC__V1__STATUS__STATUS_INVALID,
			    "host %zu is not a host name (letters, digits, '-', '_', '.', "
			    "up to %u)",
			    i + 1, NAME_MAX_LEN);
	j->partition = xstrdup(r->partition);
	j->hosts = xcalloc(r->n_hosts + 1, sizeof(char *));
	for (size_t i = 0; i < r->n_hosts; i++)
		j->hosts[j->nhosts++] = xstrdup(r->hosts[i]);
	j->spec = xstrdup(r->topology);
	j->spec_from_client = true;
	j->relabel = r->has_relabel && r->relabel;
	j->target =
	    xasprintf("partition %s: %s on %u host%s%s", r->partition, r->topology, j->nhosts,
		      j->nhosts == 1 ? "" : "s", j->relabel ? ", relabelled" : "");
	return 0;
}

/* The public principals' share of the queue (OFCD_MUTATION_SHARE_DEFAULT):
 * a tenant of the gateway past its own share, or past the public
 * principals' together, is refused BUSY naming only its own count, the
 * answer marked over_share (the gateway's 429). Root, a socket's admins and
 * the gateway's admins are never refused by it; what is admitted keeps its
 * place in the queue. -1: refused and answered. */
static int over_mutation_share(const struct request *rq)
{
	struct ofcd *d = rq->c->d;
	const Ofc__V1__Principal *p = rq->who.p;
	const char *id = p && p->identity ? p->identity : "?";
	uint32_t mine = 0, public = 0, share = d->o.mutation_share;
	bool exempt = false;

	if (!rq->who.gateway || !authz_public(&rq->who))
		return 0;
	for (uint32_t i = 0; i < d->o.nmutation_share_exempt; i++)
		exempt |= strcmp(d->o.mutation_share_exempt[i], id) == 0;
	for (const struct job *j = d->loop->queue; j; j = j->next) {
		public += j->tenant;
		mine += j->who && strcmp(j->who, id) == 0;
	}
	if (!share)
		share = OFCD_MUTATION_SHARE_DEFAULT;
	Ofc__V1__Response r = OFC__V1__RESPONSE__INIT;
	char msg[400];

	if (!exempt && mine >= share) {
		snprintf(msg, sizeof(msg),
			 "%.200s has %u mutations waiting already, the most one tenant may have "
			 "queued at once; try again when one is answered",
			 id, mine);
		d->loop->mutations_refused[1]++;
	} else if (public >= OFCD_PUBLIC_MUTATIONS) {
		snprintf(msg, sizeof(msg),
			 "the tenants' share of the queue is full (%.200s has %u of them); try "
			 "again later",
			 id, mine);
		d->loop->mutations_refused[0]++;
	} else {
		return 0;
	}
	r.has_id = r.has_status = r.has_over_share = 1;
	r.id = rq->req->id;
	r.status = OFC__V1__STATUS__STATUS_BUSY;
	r.over_share = true;
	r.message = msg;
	d->loop->errors++;
	send_response(rq->c, &r);
	return -1;
}

/* A mutation's job for rq, of its job row's kind: NULL when ofcd is shutting down, the
 * queue is full or the asker's share of it is (answered BUSY). */
struct job *queued_job(const struct request *rq)
{
	struct conn *c = rq->c;
	struct ofcd *d = c->d;
	uint64_t id = rq->req->id;

	if (d->loop->stopping) {
		reply(c, id, OFC__V1__STATUS__STATUS_BUSY, "ofcd is shutting down");
		return NULL;
	}
	if (d->loop->nqueue >= MAX_QUEUE) {
		reply(c, id, OFC__V1__STATUS__STATUS_BUSY,
		      "%u mutations are waiting already; try again later", d->loop->nqueue);
		return NULL;
	}
	if (over_mutation_share(rq) < 0)
		return NULL;
	return request_job(rq);
}

/* ReleasePartition: queued with the mutations, so it lets go
 * after the transactions asked before it. */
int release_partition(const struct request *rq)
{
	struct conn *c = rq->c;
	const Ofc__V1__Request *req = rq->req;
	struct ofcd *d = c->d;
	const Ofc__V1__ReleasePartition *rp = req->release_partition;
	bool two;
	/* (the row's rule, as the authoriser read it) */
	const char *name = api_named_partition(req, &two);
	struct job *j;

	if (two)
		return reply(c, req->id, OFC__V1__STATUS__STATUS_INVALID,
			     "release_partition names two partitions ('%.64s' as partition, "
			     "'%.64s' as name, its older spelling): give one",
			     rp->partition, rp->name);
	if (!name || !plain_name(name))
		return reply(c, req->id, OFC__V1__STATUS__STATUS_INVALID,
			     "release_partition needs the partition's name (partition)");
	if (!(j = queued_job(rq)))
		return 0;
	j->partition = xstrdup(name);
	j->target = xasprintf("partition %s", name);
	enqueue(d, j, rq);
	return 0;
}

static int staged_budget(const struct request *rq, double p, bool has_grace, uint32_t grace_ms,
			 struct job *j);

/* ApplyConfig: the config as sent, queued (in stages: max_loss_percent). */
int apply_config_request(const struct request *rq)
{
	struct conn *c = rq->c;
	const Ofc__V1__ApplyConfig *a = rq->req->apply_config;
	struct job *j;

	if (!(j = queued_job(rq)))
		return 0;
	if (!a->yaml || !*a->yaml) {
		job_free(j);
		return reply(c, rq->req->id, OFC__V1__STATUS__STATUS_INVALID,
			     "apply_config needs the config's yaml");
	}
	j->yaml_len = strlen(a->yaml);
	j->yaml = xstrdup(a->yaml);
	j->unnamed = !a->filename || !*a->filename;
	j->filename = xstrdup(j->unnamed ? "apply-config" : a->filename);
	j->target = xstrdup(j->filename);
	j->dry_run = a->has_dry_run && a->dry_run;
	if (a->has_grace_ms && !a->has_max_loss_percent) {
		job_free(j);
		return reply(c, rq->req->id, OFC__V1__STATUS__STATUS_INVALID,
			     "grace_ms goes with max_loss_percent");
	}
	if ((a->has_max_loss_percent &&
	     staged_budget(rq, a->max_loss_percent, a->has_grace_ms, a->grace_ms, j) < 0) ||
	    wiring_verify_ask(rq, a->has_verify_wiring_ms, a->verify_wiring_ms, j) < 0) {
		job_free(j);
		return 0;
	}
	enqueue(c->d, j, rq);
	return 0;
}

/* A Reconfigure's target into j: a partition made of hosts, a partition of
 * the config, a topology or a workload. Answers and returns -1 when
 * refused. */
static int reconfigure_target(struct conn *c, uint64_t id, const Ofc__V1__Reconfigure *r,
			      struct job *j)
{
	struct ofcd *d = c->d;

	if (r->n_hosts || (r->has_relabel && r->relabel))
		return runtime_partition(c, r, j);
	if (r->partition && *r->partition) {
		if (r->target_case != OFC__V1__RECONFIGURE__TARGET__NOT_SET)
			return refuse_req(c, id, OFC__V1__STATUS__STATUS_INVALID,
					  "a partition goes to its own topology in the config: "
					  "give no topology or workload with it");
		if (!fabric_find_partition(d->loop->cfg->f, r->partition))
			return refuse_req(c, id, OFC__V1__STATUS__STATUS_NOT_FOUND,
					  "fabric '%s' has no partition '%.64s'",
					  d->loop->cfg->f->name, r->partition);
		j->partition = xstrdup(r->partition);
		j->target = xasprintf("partition %s", r->partition);
		return 0;
	}
	if (r->target_case == OFC__V1__RECONFIGURE__TARGET_TOPOLOGY && r->topology &&
	    *r->topology && strlen(r->topology) <= topo_spec_max(r->topology)) {
		j->spec = xstrdup(r->topology);
		j->spec_from_client = true;
		j->target = xstrdup(r->topology);
		return 0;
	}
	if (r->target_case == OFC__V1__RECONFIGURE__TARGET_WORKLOAD) {
		const Ofc__V1__Workload *w = r->workload;
		char sz[32];

		if (!w->collective || sched_collective_parse(w->collective, &j->coll) < 0 ||
		    !w->has_size_bytes || w->size_bytes == 0)
			return refuse_req(c, id, OFC__V1__STATUS__STATUS_INVALID,
					  "a workload needs a collective (allgather, "
					  "reduce-scatter, allreduce) and a size_bytes > 0");
		j->workload = true;
		j->nodes = w->has_nodes ? w->nodes : 0;
		j->size = w->size_bytes;
		fmt_size(sz, sizeof(sz), j->size);
		j->target = xasprintf("workload %s of %s per node", w->collective, sz);
		return 0;
	}
	return refuse_req(c, id, OFC__V1__STATUS__STATUS_INVALID,
			  "reconfigure needs a topology spec (up to %u characters, a "
			  "ports: one up to %u) or a workload",
			  TOPO_MAX_SPEC, TOPO_MAX_PORTS_SPEC);
}

/* A staged change (max_loss_percent; every door that stages one asks
 * here): a loss above 0 and below 100 percent, a grace in bounds. Answers
 * and returns -1 when refused (nothing queued, nothing changed). */
static int staged_budget(const struct request *rq, double p, bool has_grace, uint32_t grace_ms,
			 struct job *j)
{
	if (!(p > 0 && p < 100))
		return refuse_req(
		    rq->c, rq->req->id, OFC__V1__STATUS__STATUS_INVALID,
		    "max_loss_percent must be above 0 and below 100, not %g: the share "
		    "of the fabric's bandwidth a stage may take away; nothing changed",
		    p);
	if (has_grace && grace_ms > DRAIN_GRACE_MS_MAX)
		return refuse_req(rq->c, rq->req->id, OFC__V1__STATUS__STATUS_INVALID,
				  "a stage's grace is at most %u ms, not %u", DRAIN_GRACE_MS_MAX,
				  grace_ms);
	j->staged = true;
	j->max_loss = p;
	j->grace_ms = has_grace ? grace_ms : DRAIN_GRACE_MS_DEFAULT;
	return 0;
}

/* A staged Reconfigure: the fabric's topology, in a budget. */
static int reconfigure_staged(const struct request *rq, const Ofc__V1__Reconfigure *r,
			      struct job *j)
{
	if (!j->spec || j->workload || j->free_ports || j->partition)
		return refuse_req(
		    rq->c, rq->req->id, OFC__V1__STATUS__STATUS_INVALID,
		    "max_loss_percent stages a change of the whole fabric's topology: "
		    "give a topology, not a workload, a partition, hosts or "
		    "free_ports");
	return staged_budget(rq, r->max_loss_percent, r->has_grace_ms, r->grace_ms, j);
}

/* Reconfigure: its target checked, queued. */
int reconfigure_request(const struct request *rq)
{
	const Ofc__V1__Reconfigure *r = rq->req->reconfigure;
	struct job *j;

	if (!(j = queued_job(rq)))
		return 0;
	j->dry_run = r->has_dry_run && r->dry_run;
	j->free_ports = r->has_free_ports && r->free_ports;
	if (j->free_ports && (r->n_hosts || (r->partition && *r->partition))) {
		job_free(j);
		return reply(rq->c, rq->req->id, OFC__V1__STATUS__STATUS_INVALID,
			     "free_ports aims the fabric's topology on the ports no held "
			     "partition has: give a topology or a workload, not a "
			     "partition or hosts");
	}
	if (reconfigure_target(rq->c, rq->req->id, r, j) < 0) {
		job_free(j);
		return 0;
	}
	if ((r->has_max_loss_percent && reconfigure_staged(rq, r, j) < 0) ||
	    wiring_verify_ask(rq, r->has_verify_wiring_ms, r->verify_wiring_ms, j) < 0) {
		job_free(j);
		return 0;
	}
	enqueue(rq->c->d, j, rq);
	return 0;
}

/* MoveToPhase, a reconfigure to the chosen way's topology of a
 * phase (the target is made on the mutation worker: ofcd_phase_spec). */
int move_to_phase(const struct request *rq)
{
	struct conn *c = rq->c;
	const Ofc__V1__Request *req = rq->req;
	struct ofcd *d = c->d;
	const Ofc__V1__MoveToPhase *m = req->move_to_phase;
	struct job *j;

	if (d->loop->stopping)
		return reply(c, req->id, OFC__V1__STATUS__STATUS_BUSY, "ofcd is shutting down");
	if (!d->loop->cfg->f->workload.present)
		return reply(c, req->id, OFC__V1__STATUS__STATUS_NOT_FOUND,
			     "fabric '%s' has no workload section to plan", d->loop->cfg->f->name);
	if (m->name && strlen(m->name) > NAME_MAX_LEN)
		return reply(c, req->id, OFC__V1__STATUS__STATUS_INVALID,
			     "a phase's name is %u "
			     "characters at most",
			     NAME_MAX_LEN);
	if (!(j = queued_job(rq)))
		return 0;
	j->dry_run = m->has_dry_run && m->dry_run;
	j->to_phase = true;
	j->phase = m->has_phase ? m->phase : 0;
	j->phase_name = m->name && *m->name ? xstrdup(m->name) : NULL;
	j->target =
	    j->phase_name ? xasprintf("phase %s", j->phase_name) : xasprintf("phase %u", j->phase);
	if (m->has_grace_ms && !m->has_max_loss_percent) {
		job_free(j);
		return reply(c, req->id, OFC__V1__STATUS__STATUS_INVALID,
			     "grace_ms goes with max_loss_percent");
	}
	if (m->has_max_loss_percent &&
	    staged_budget(rq, m->max_loss_percent, m->has_grace_ms, m->grace_ms, j) < 0) {
		job_free(j);
		return 0;
	}
	enqueue(d, j, rq);
	return 0;
}

int cancel(const struct request *rq)
{
	struct conn *c = rq->c;
	const Ofc__V1__Request *req = rq->req;
	struct ofcd *d = c->d;
	const Ofc__V1__Cancel *k = req->cancel;
	bool by_ticket = k->has_ticket && k->ticket, by_id = k->has_request_id;
	struct job *j;

	if (!by_ticket && !by_id)
		return reply(c, req->id, OFC__V1__STATUS__STATUS_INVALID,
			     "cancel needs a ticket or a request_id");
	for (j = d->loop->queue; j; j = j->next)
		if (by_ticket ? j->ticket == k->ticket
			      : j->conn_id == c->id && j->req_id == k->request_id)
			break;
	/* A tenant's ticket must be one of its own requests on its partitions;
	 * any other is "not waiting" to it, whether it exists or not. */
	struct job *run = batch_running(d, by_ticket ? k->ticket : 0, c->id, k->request_id);
	if (!authz_may_cancel(rq->who.p, j ? j
					 : run && is_mutation(run) && run->ticket == k->ticket
					     ? run
					     : NULL)) {
		return reply(c, req->id, OFC__V1__STATUS__STATUS_NOT_FOUND,
			     "no request of yours with ticket %llu is waiting",
			     (unsigned long long)k->ticket);
	}
	if (j) {
		char why[200];
		uint64_t t = j->ticket;

		snprintf(why, sizeof(why), "cancelled by uid %u pid %d before it started",
			 c->peer.uid, c->peer.pid);
		cancel_job(d, j, why);
		return reply(c, req->id, OFC__V1__STATUS__STATUS_OK, "cancelled ticket %llu",
			     (unsigned long long)t);
	}
	j = run; /* (the one handed over, or one run with it: batch.c) */
	if (j && is_mutation(j))
		return reply(
		    c, req->id, OFC__V1__STATUS__STATUS_BUSY,
		    "ticket %llu is running: a transaction in progress is never cancelled; "
		    "it commits or rolls back",
		    (unsigned long long)j->ticket);
	if (by_ticket)
		return reply(c, req->id, OFC__V1__STATUS__STATUS_NOT_FOUND,
			     "no mutation with ticket %llu is waiting",
			     (unsigned long long)k->ticket);
	return reply(c, req->id, OFC__V1__STATUS__STATUS_NOT_FOUND,
		     "request %llu of this connection is not waiting",
		     (unsigned long long)k->request_id);
}

/* ReportFailure: a mutation of the failed set, queued with the others so it
 * applies to the config that runs when its turn comes. */
int report_failure(const struct request *rq)
{
	struct conn *c = rq->c;
	const Ofc__V1__Request *req = rq->req;
	struct ofcd *d = c->d;
	const Ofc__V1__ReportFailure *rf = req->report_failure;
	bool clear = rf->has_clear && rf->clear, restore = rf->has_restore && rf->restore;
	struct strbuf t = STRBUF_INIT;
	struct job *j;

	if (!rf->n_items && !clear)
		return reply(c, req->id, OFC__V1__STATUS__STATUS_INVALID,
			     "report_failure needs items (links U-V, ports HOST:PORT, hosts HOST) "
			     "or clear");
	if (rf->n_items > FAIL_MAX_ITEMS)
		return reply(c, req->id, OFC__V1__STATUS__STATUS_INVALID,
			     "report_failure takes up to %u items", FAIL_MAX_ITEMS);
	for (size_t i = 0; i < rf->n_items; i++)
		if (!failure_item_ok(rf->items[i]))
			return reply(
			    c, req->id, OFC__V1__STATUS__STATUS_INVALID,
			    "item %zu is not a host, a link U-V or a port HOST:PORT of host "
			    "names",
			    i + 1);
	if (!(j = queued_job(rq)))
		return 0;
	j->restore = restore;
	j->clear = clear;
	j->items = xcalloc(rf->n_items + 1, sizeof(char *));
	for (size_t i = 0; i < rf->n_items; i++) {
		j->items[j->nitems++] = xstrdup(rf->items[i]);
		if (i < 4)
			sb_printf(&t, "%s%s", i ? "," : "", rf->items[i]);
	}
	if (rf->n_items > 4)
		sb_printf(&t, " and %zu more", rf->n_items - 4);
	if (clear)
		sb_printf(&t, "%severy reported failure", rf->n_items ? " and " : "");
	j->target = sb_detach(&t);
	enqueue(d, j, rq);
	return 0;
}

/* Drain and undrain: queued with the mutations; the items are checked
 * against the config that runs when its turn comes (drain.c). */

int drain_request(const struct request *rq)
{
	struct conn *c = rq->c;
	const Ofc__V1__Request *req = rq->req;
	const Ofc__V1__Drain *dr = req->drain;
	bool undrain = dr->has_undrain && dr->undrain;
	struct strbuf t = STRBUF_INIT;
	struct job *j;

	if (!dr->n_items)
		return reply(c, req->id, OFC__V1__STATUS__STATUS_INVALID,
			     "drain needs items: switches SWITCH or switch ports SWITCH:PORT");
	if (dr->n_items > FAIL_MAX_ITEMS)
		return reply(c, req->id, OFC__V1__STATUS__STATUS_INVALID,
			     "drain takes up to %u items", FAIL_MAX_ITEMS);
	if (dr->has_grace_ms && dr->grace_ms > DRAIN_GRACE_MS_MAX)
		return reply(c, req->id, OFC__V1__STATUS__STATUS_INVALID,
			     "drain's grace is at most %u ms, not %u", DRAIN_GRACE_MS_MAX,
			     dr->grace_ms);
	for (size_t i = 0; i < dr->n_items; i++)
		if (!failure_item_ok(dr->items[i]))
			return reply(c, req->id, OFC__V1__STATUS__STATUS_INVALID,
				     "item %zu is not a switch SWITCH or a port SWITCH:PORT",
				     i + 1);
	if (!(j = queued_job(rq)))
		return 0;
	j->restore = undrain;
	j->force = dr->has_force && dr->force;
	j->grace_ms = dr->has_grace_ms ? dr->grace_ms : DRAIN_GRACE_MS_DEFAULT;
	j->items = xcalloc(dr->n_items + 1, sizeof(char *));
	for (size_t i = 0; i < dr->n_items; i++) {
		j->items[j->nitems++] = xstrdup(dr->items[i]);
		if (i < 4)
			sb_printf(&t, "%s%s", i ? "," : "", dr->items[i]);
	}
	if (dr->n_items > 4)
		sb_printf(&t, " and %zu more", dr->n_items - 4);
	j->target = sb_detach(&t);
	enqueue(c->d, j, rq);
	return 0;
}

/* ---- adopt and the testbed --------------------------------------------------------- */

/* (loop) Adopt {commit, transaction, generation}: queued with the
 * mutations, so it runs after the transactions asked before it. */
int adopt_request(const struct request *rq)
{
	struct conn *c = rq->c;
	struct ofcd *d = c->d;
	const Ofc__V1__Adopt *a = rq->req->adopt;
	struct job *j;

	if (a->has_commit && a->commit && (!a->has_transaction || !a->has_generation))
		return reply(c, rq->req->id, OFC__V1__STATUS__STATUS_INVALID,
			     "an adopt's commit needs the transaction and generation its preview "
			     "showed");
	if (!(j = queued_job(rq)))
		return 0;
	j->adopt_commit = a->has_commit && a->commit;
	j->adopt_txn = a->transaction;
	j->adopt_gen = a->generation;
	j->dry_run = !j->adopt_commit;
	j->target = xstrdup(j->adopt_commit ? "adopt" : "adopt (preview)");
	enqueue(d, j, rq);
	return 0;
}

/* A run's bytes per host: what the executor holds is bounded by the
 * request's memory limit too, this keeps a request from asking for hours. */
#define TESTBED_MAX_SIZE (1ull << 30)

/* (loop) TestbedRun {algorithm, collective, size, alpha, timeout, schedule, mpi,
 * topology}. */
int testbed_run_request(const struct request *rq)
{
	struct conn *c = rq->c;
	struct ofcd *d = c->d;
	const Ofc__V1__TestbedRun *q = rq->req->testbed_run;
	enum sched_collective coll = SCHED_ALLREDUCE;
	struct job *j;

	if (q->collective && q->collective[0] && sched_collective_parse(q->collective, &coll) < 0)
		return reply(c, rq->req->id, OFC__V1__STATUS__STATUS_INVALID,
			     "collective '%s': expected allreduce, allgather, reduce-scatter or "
			     "alltoall",
			     q->collective);
	if (q->has_size && (q->size == 0 || q->size > TESTBED_MAX_SIZE))
		return reply(c, rq->req->id, OFC__V1__STATUS__STATUS_INVALID,
			     "size %llu: expected 1 byte to %llu MiB per host",
			     (unsigned long long)q->size, TESTBED_MAX_SIZE >> 20);
	if ((q->has_alpha && !(q->alpha >= 0 && q->alpha < 1)) ||
	    (q->has_timeout && !(q->timeout > 0 && q->timeout <= 3600)))
		return reply(c, rq->req->id, OFC__V1__STATUS__STATUS_INVALID,
			     "alpha must be 0 to 1 s and timeout above 0 and at most 3600 s");
	if (q->algorithm && strlen(q->algorithm) > 64)
		return reply(c, rq->req->id, OFC__V1__STATUS__STATUS_INVALID,
			     "algorithm: a name of at most 64 characters");
	if (q->topology && strlen(q->topology) > TOPO_MAX_SPEC)
		return reply(c, rq->req->id, OFC__V1__STATUS__STATUS_INVALID,
			     "topology: a spec of at most %u characters", TOPO_MAX_SPEC);
	if (q->has_schedule && q->algorithm && q->algorithm[0])
		return reply(c, rq->req->id, OFC__V1__STATUS__STATUS_INVALID,
			     "a schedule and an algorithm exclude each other");
	if (!(j = queued_job(rq)))
		return 0;
	j->coll = coll;
	j->size = q->has_size ? q->size : 1u << 20;
	j->algo = q->algorithm && q->algorithm[0] ? xstrdup(q->algorithm) : NULL;
	j->alpha = q->has_alpha ? q->alpha : 0;
	j->coll_asked = q->collective && q->collective[0];
	j->mpi = q->has_mpi && q->mpi;
	j->what_if = q->topology && q->topology[0] ? xstrdup(q->topology) : NULL;
	if (q->has_schedule) { /* (an empty one is the worker's to refuse, as a file's) */
		j->schedule_pb = xmalloc(q->schedule.len + 1);
		memcpy(j->schedule_pb, q->schedule.data, q->schedule.len);
		j->schedule_pb_len = q->schedule.len;
	}
	j->max_time = q->has_timeout ? q->timeout : 600;
	j->target = xstrdup("testbed run");
	enqueue(d, j, rq);
	return 0;
}

/* The most arguments, and characters an argument, a TestbedMpirun takes. */
#define MPIRUN_MAX_ARGS 256
#define MPIRUN_MAX_ARG	4096

/* (loop) TestbedMpirun {argv, mpi, no_preload, size_bytes, timeout}; the
 * worker's is testbed.c. */
int testbed_mpirun_request(const struct request *rq)
{
	struct conn *c = rq->c;
	struct ofcd *d = c->d;
	const Ofc__V1__TestbedMpirun *q = rq->req->testbed_mpirun;
	struct job *j;

	if (!q->n_argv || q->n_argv > MPIRUN_MAX_ARGS)
		return reply(c, rq->req->id, OFC__V1__STATUS__STATUS_INVALID,
			     "argv: PROGRAM [ARGS...], 1 to %d of them, not %zu", MPIRUN_MAX_ARGS,
			     q->n_argv);
	for (size_t i = 0; i < q->n_argv; i++)
		if (!q->argv[i] || !q->argv[i][0] || strlen(q->argv[i]) > MPIRUN_MAX_ARG)
			return reply(c, rq->req->id, OFC__V1__STATUS__STATUS_INVALID,
				     "argv[%zu]: empty, or over %d characters", i, MPIRUN_MAX_ARG);
	if (strchr(q->argv[0], '/') && q->argv[0][0] != '/')
		return reply(c, rq->req->id, OFC__V1__STATUS__STATUS_INVALID,
			     "PROGRAM '%.200s' is a relative path, and ofcd's working directory "
			     "is not yours: give it whole",
			     q->argv[0]);
	if (q->mpi && q->mpi[0] && strcmp(q->mpi, "mpich") && strcmp(q->mpi, "openmpi"))
		return reply(c, rq->req->id, OFC__V1__STATUS__STATUS_INVALID,
			     "mpi is mpich or openmpi, not '%.64s'", q->mpi);
	if (q->has_size_bytes && (q->size_bytes == 0 || q->size_bytes > TESTBED_MAX_SIZE))
		return reply(c, rq->req->id, OFC__V1__STATUS__STATUS_INVALID,
			     "size_bytes %llu: expected 1 byte to %llu MiB per host",
			     (unsigned long long)q->size_bytes, TESTBED_MAX_SIZE >> 20);
	if (q->has_timeout && !(q->timeout > 0 && q->timeout <= 3600))
		return reply(c, rq->req->id, OFC__V1__STATUS__STATUS_INVALID,
			     "timeout above 0 and at most 3600 s, not %g", q->timeout);
	if (!(j = queued_job(rq)))
		return 0;
	j->argv = xcalloc(q->n_argv + 1, sizeof(*j->argv));
	for (size_t i = 0; i < q->n_argv; i++)
		j->argv[i] = xstrdup(q->argv[i]);
	j->nargv = (uint32_t)q->n_argv;
	j->openmpi = q->mpi && strcmp(q->mpi, "openmpi") == 0;
	j->no_preload = q->has_no_preload && q->no_preload;
	j->size = q->has_size_bytes ? q->size_bytes : 1u << 20;
	j->max_time = q->has_timeout ? q->timeout : 600;
	j->target = xasprintf("testbed mpirun %.200s", q->argv[0]);
	enqueue(d, j, rq);
	return 0;
}

/* (loop) TestbedCheck {} and TestbedDown {}: nothing to read but the
 * kind. */
int testbed_check_request(const struct request *rq)
{
	struct conn *c = rq->c;
	struct ofcd *d = c->d;
	bool down = rq->req->body_case == OFC__V1__REQUEST__BODY_TESTBED_DOWN;
	struct job *j;

	if (!(j = queued_job(rq)))
		return 0;
	j->target = xstrdup(down ? "testbed down" : "testbed check");
	enqueue(d, j, rq);
	return 0;
}

/* (loop) TestbedUp {rate_scale}; the worker's is testbed_up.c. */
int testbed_up_request(const struct request *rq)
{
	struct conn *c = rq->c;
	struct ofcd *d = c->d;
	const Ofc__V1__TestbedUp *q = rq->req->testbed_up;
	struct job *j;

	if (q->has_rate_scale && !(q->rate_scale > 0 && q->rate_scale <= 1))
		return reply(c, rq->req->id, OFC__V1__STATUS__STATUS_INVALID,
			     "rate_scale must be a number in (0, 1], got %g", q->rate_scale);
	if (!(j = queued_job(rq)))
		return 0;
	j->rate_scale = q->has_rate_scale ? q->rate_scale : 0;
	j->target = xstrdup("testbed up");
	enqueue(d, j, rq);
	return 0;
}
