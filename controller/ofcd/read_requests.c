/* The reads ofcd answers on its loop thread (GetState from the published
 * snapshot, cached per view; GetSchedule's checks, then the schedule
 * worker or a stream; GetPlan; GetMetrics; Watch): the handlers of the
 * request table's read rows (requests.c). */
#include "controller/ofcd/conn.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- reads --------------------------------------------------------------------------- */

/* The packed State answer without its id, for one combination of
 * GetState's options, rebuilt only when something it shows changed. A
 * request's answer is a packed Response holding only the id, then this:
 * protobuf merges concatenated messages, so the two make one Response,
 * whose bytes after the id are the same for every request (ofc-gateway
 * keeps the JSON it wrote for them: controller/gateway/cache.c). */
/* What a read-only client is not shown, swapped out of the snapshot's
 * messages for the pack and back after it: device failures become the
 * reason's word, and the fabric's drivers lose their credentials paths. */
struct ro_hidden {
	const char **errs;
	char **creds;
	size_t nsw, nrg;
};

static void ro_hide(struct snapshot *s, bool with_fabric, struct ro_hidden *h)
{
	*h = (struct ro_hidden){0};
	h->errs = xcalloc(s->ndevs + 1, sizeof(*h->errs));
	for (uint32_t i = 0; i < s->ndevs; i++) {
		h->errs[i] = s->devs[i]->error;
		s->devs[i]->error = s->devs[i]->error ? (char *)s->public_error[i] : NULL;
	}
	h->nsw = s->fabric ? s->fabric->n_switches : 0;
	h->nrg = s->fabric ? s->fabric->n_rings : 0;
	if (!with_fabric)
		return;
	h->creds = xcalloc(h->nsw + h->nrg + 1, sizeof(*h->creds));
	for (size_t i = 0; i < h->nsw + h->nrg; i++) {
		Ofc__V1__Driver *dr = i < h->nsw ? s->fabric->switches[i]->driver
						 : s->fabric->rings[i - h->nsw]->driver;

		if (dr) {
			h->creds[i] = dr->credentials;
			dr->credentials = NULL;
		}
	}
}

static void ro_restore(struct snapshot *s, struct ro_hidden *h)
{
	for (uint32_t i = 0; h->errs && i < s->ndevs; i++)
		s->devs[i]->error = (char *)h->errs[i];
	for (size_t i = 0; h->creds && i < h->nsw + h->nrg; i++) {
		Ofc__V1__Driver *dr = i < h->nsw ? s->fabric->switches[i]->driver
						 : s->fabric->rings[i - h->nsw]->driver;

		if (dr)
			dr->credentials = h->creds[i];
	}
	free(h->errs);
	free(h->creds);
}

/* The answer's one line: the fabric, its generation and topology, the
 * failures in effect, the workload's schedule being computed (since when,
 * also set in st), a transaction, and a replica's standing. */
static void state_message(struct ofcd *d, const struct snapshot *s, Ofc__V1__State *st, char *msg,
			  size_t n)
{
	char nf[64] = "", pl[120] = "", cl[600] = "";

	if (st->n_failed)
		snprintf(nf, sizeof(nf), ", %zu failure%s in effect", st->n_failed,
			 st->n_failed == 1 ? "" : "s");
	/* The planner computes this config's schedule: when it began (the
	 * answer is cached until something changes, so no "N s ago" here:
	 * clients count from the time). */
	uint64_t since_ms = d->loop->planner && d->loop->planner->cfg == s->cfg
				? d->loop->planner->since_ms
				: state_schedule_since(d);
	if (since_ms) {
		time_t since = (time_t)(since_ms / 1000);
		struct tm tm;

		st->has_schedule_computing_since_unix_ms = 1;
		st->schedule_computing_since_unix_ms = since_ms;
		gmtime_r(&since, &tm);
		strftime(pl, sizeof(pl),
			 ", the workload's schedule is being computed (since %H:%M:%S UTC)", &tm);
	}
	if (d->clustered)
		snprintf(
		    cl, sizeof(cl), "; replica %s %s%s%s%.300s", d->loop->cl.name,
		    d->loop->cl.leading	    ? "leads"
		    : d->loop->cl.leader[0] ? "follows "
					    : "follows (no leader now)",
		    d->loop->cl.leading ? "" : d->loop->cl.leader,
		    d->loop->cl.fresh ? "" : "; STALE: ", d->loop->cl.fresh ? "" : d->loop->cl.why);
	snprintf(msg, n, "fabric %s: generation %llu, topology %s%s%s%s%s", st->fabric_name,
		 (unsigned long long)st->config_generation,
		 s->topo ? s->topo->spec : "(none recorded)", nf, pl,
		 st->transaction ? ", a transaction is in progress" : "", cl);
}

/* With w (State.wiring, computed at the request: its ages are now's): the
 * answer packed afresh into *own, not cached. */
static void state_answer(struct ofcd *d, unsigned variant, const Ofc__V1__Wiring *w, uint8_t **own,
			 const uint8_t **buf, size_t *len)
{
	struct snapshot *s = d->loop->snap;
	Ofc__V1__State *st = s->state;
	Ofc__V1__Response r = OFC__V1__RESPONSE__INIT;
	struct arena a = {0};
	char msg[900];

	uint64_t log, seq = event_log_seq(d, &log);

	/* (where in the event log it stands is in the answer: a new event
	 * makes a new one, though nothing else changed) */
	if (!w && d->loop->cache[variant].valid &&
	    d->loop->cache[variant].version == d->loop->version &&
	    d->loop->cache[variant].seq == seq && d->loop->cache[variant].log == log) {
		*buf = d->loop->cache[variant].buf;
		*len = d->loop->cache[variant].len;
		return;
	}
	st->topology = variant & 2 ? s->topo_edges : s->topo;
	st->fabric = !(variant & 1) ? NULL : variant & 8 ? s->fabric_brief : s->fabric;
	metrics_devices_show(d, s); /* (the counts move on with every job: changed) */
	/* Read-only clients: device failures as the reason's word, and no
	 * credentials paths in the fabric. Swapped in for the pack and back. */
	struct ro_hidden hidden = {0};
	if (variant & 4)
		ro_hide(s, st->fabric != NULL, &hidden);
	st->transaction = s->unfinished;
	if (d->loop->running && is_mutation(d->loop->running)) {
		st->transaction = txn_info(&a, d->loop->running, d->loop->running_state,
					   d->loop->running_txn, false);
		ofcd_txn_running(d, st->transaction); /* (running; a replica's name) */
	}
	/* a replica's view of the cluster, as of the last refresh */
	st->cluster = d->clustered ? cluster_msg(&a, d, &d->loop->cl) : NULL;
	st->n_mpi_reports = d->loop->mpi.n;
	st->mpi_reports = d->loop->mpi.v;
	st->n_queue = d->loop->nqueue;
	st->queue = arena_array(&a, d->loop->nqueue, sizeof(*st->queue));
	size_t k = 0;
	for (struct job *j = d->loop->queue; j; j = j->next)
		st->queue[k++] = txn_info(&a, j, "queued", 0, false);
	if (!d->loop->nqueue) /* a follower: the leader's, from etcd */
		st->n_queue = queue_at_leader(d, &a, NULL, NULL, &st->queue);
	state_message(d, s, st, msg, sizeof(msg));
	r.has_status = 1;
	r.status = OFC__V1__STATUS__STATUS_OK;
	r.message = msg;
	r.body_case = OFC__V1__RESPONSE__BODY_STATE;
	r.state = st;
	st->has_event_seq = st->has_event_log = 1;
	st->event_seq = seq;
	st->event_log = log;
	st->wiring = (Ofc__V1__Wiring *)w;
	if (w) {
		response_pack(&r, own, len);
		*buf = *own;
	} else {
		free(d->loop->cache[variant].buf);
		response_pack(&r, &d->loop->cache[variant].buf, &d->loop->cache[variant].len);
		d->loop->cache[variant].valid = true;
		d->loop->cache[variant].version = d->loop->version;
		d->loop->cache[variant].seq = seq;
		d->loop->cache[variant].log = log;
	}
	ro_restore(s, &hidden);
	st->topology = NULL;
	st->fabric = NULL;
	st->has_schedule_computing_since_unix_ms = 0;
	st->schedule_computing_since_unix_ms = 0;
	st->transaction = NULL;
	st->queue = NULL;
	st->n_queue = 0;
	st->mpi_reports = NULL;
	st->n_mpi_reports = 0;
	st->cluster = NULL;
	st->has_event_seq = st->has_event_log = 0;
	st->wiring = NULL;
	arena_free(&a);
	if (!w) {
		*buf = d->loop->cache[variant].buf;
		*len = d->loop->cache[variant].len;
	}
}

/* A tenant's state (authz.c): its partitions' part, built per request. */
static int tenant_state(const struct request *rq)
{
	struct conn *c = rq->c;
	const Ofc__V1__Principal *p = rq->who.p;
	Ofc__V1__Response r = OFC__V1__RESPONSE__INIT;
	struct arena a = {0};
	char msg[400];
	Ofc__V1__State *st = authz_tenant_state(c->d, p, &a);

	snprintf(msg, sizeof(msg), "fabric %s: generation %llu, as tenant %.64s sees it",
		 st->fabric_name, (unsigned long long)st->config_generation,
		 p->identity ? p->identity : "?");
	r.has_id = r.has_status = 1;
	r.id = rq->req->id;
	r.status = OFC__V1__STATUS__STATUS_OK;
	r.message = msg;
	r.body_case = OFC__V1__RESPONSE__BODY_STATE;
	r.state = st;
	send_response(c, &r);
	arena_free(&a);
	return 0;
}

int get_state(const struct request *rq)
{
	struct conn *c = rq->c;
	uint64_t id = rq->req->id;
	const Ofc__V1__GetState *g = rq->req->get_state;
	Ofc__V1__Response idr = OFC__V1__RESPONSE__INIT;
	unsigned variant = (g && g->with_fabric ? 1u : 0u) | (g && g->with_edges ? 2u : 0u) |
			   (authz_sees_all(&rq->who) ? 0u : 4u) |
			   (g && g->with_fabric && g->fabric_brief ? 8u : 0u);
	const uint8_t *body;
	uint8_t idbuf[16], *own = NULL;
	size_t len, idlen;
	struct arena a = {0};

	if (authz_is_tenant(rq->who.p))
		return tenant_state(rq);
	/* A follower computes the state's schedule when asked (state_schedule.c). */
	state_schedule_check(c->d, true);
	state_answer(c->d, variant, g && g->with_wiring ? wiring_msg(c->d, &a) : NULL, &own, &body,
		     &len);
	arena_free(&a);
	idr.has_id = 1;
	idr.id = id;
	idlen = protobuf_c_message_pack(&idr.base, idbuf);
	if (len + idlen > c->d->o.max_frame) {
		reply(c, id, OFC__V1__STATUS__STATUS_INVALID,
		      "the state is %zu bytes, more than the frame limit of %u bytes%s", len,
		      c->d->o.max_frame,
		      (variant & 9) == 1 ? ": ask with fabric_brief, or without with_fabric"
		      : variant & 3	 ? ": ask without with_fabric / with_edges"
					 : "");
		free(own);
		return 0;
	}
	conn_queue(c, idbuf, idlen, body, len);
	free(own);
	return 0;
}

/* GetSchedule of the running workload as the daemon computes it (an
 * all-to-all by the MCF lowered to paths, on the running topology, at the
 * config's size): answered from the config's plan and kept MCF run. */
static bool is_workload(const struct ofcd *d, const Ofc__V1__GetSchedule *g,
			enum sched_collective coll)
{
	const char *lw = workload_lowering(d->loop->cfg->f, NULL, coll);
	const struct a2a_lowering *l = lw ? a2a_lowering_find(lw) : NULL;

	return coll == SCHED_ALLTOALL && d->loop->cfg->coll == coll && l && g->lowering &&
	       a2a_lowering_find(g->lowering) == l && (!g->topology || !*g->topology) &&
	       (!g->partition || !*g->partition) &&
	       (!g->algorithm || !*g->algorithm || schedule_algorithm_lowers(g->algorithm)) &&
	       (!g->has_size_bytes || !g->size_bytes || g->size_bytes == d->loop->cfg->size) &&
	       (!g->has_chunks || !g->chunks);
}

/* The workload's whole schedule as the config keeps it: its packed
 * Response and one holding the id (protobuf merges the two). */
static int answer_full(struct conn *c, uint64_t id, const struct fabcfg *cfg)
{
	Ofc__V1__Response idr = OFC__V1__RESPONSE__INIT;
	uint8_t idbuf[16];
	size_t idlen;

	idr.has_id = 1;
	idr.id = id;
	idlen = protobuf_c_message_pack(&idr.base, idbuf);
	conn_queue(c, idbuf, idlen, cfg->plan_full, cfg->plan_full_len);
	return 0;
}

/* The workload's summary as the config keeps it (not computed again). */
static int answer_plan(struct conn *c, uint64_t id, const struct fabcfg *cfg)
{
	Ofc__V1__Response r = OFC__V1__RESPONSE__INIT;
	Ofc__V1__Schedule *h = ofc__v1__schedule__unpack(NULL, cfg->plan_len, cfg->plan);
	char msg[400];

	if (!h)
		return reply(c, id, OFC__V1__STATUS__STATUS_INTERNAL,
			     "the kept schedule does not unpack");
	snprintf(msg, sizeof(msg),
		 "%s %s on %s: %u steps, %.6g us, verified (the workload's schedule as ofcd keeps "
		 "it, not computed again)",
		 h->algorithm, h->collective, h->topology ? h->topology : "?", h->num_steps,
		 h->time_us);
	r.has_id = r.has_status = 1;
	r.id = id;
	r.status = OFC__V1__STATUS__STATUS_OK;
	r.message = msg;
	r.body_case = OFC__V1__RESPONSE__BODY_SCHEDULE;
	r.schedule = h;
	send_response(c, &r);
	ofc__v1__schedule__free_unpacked(h, NULL);
	return 0;
}

/* The partition held at run time of that name, or NULL: GetSchedule of
 * it is a schedule on the spec it was last committed to, its nodes named
 * by its hosts in the state's order (views.c: its circuits' numbering). */
static const Ofc__V1__HeldPartition *held_of(const struct ofcd *d, const char *name)
{
	const Ofc__V1__State *st = d->loop->snap->state;

	for (size_t i = 0; i < st->n_held; i++)
		if (strcmp(st->held[i]->name, name) == 0 && st->held[i]->topology)
			return st->held[i];
	return NULL;
}

/* What a GetSchedule asks for, once checked. */
struct sched_ask {
	enum sched_collective coll;
	const struct partition *part;	    /* a configured partition's topology */
	const char *held_spec;		    /* a held partition's last committed spec */
	const Ofc__V1__HeldPartition *held; /* ... that partition (the snapshot's) */
};

/* The collective and the algorithm. Answers and returns -1 when refused. */
static int check_collective(struct conn *c, uint64_t id, const Ofc__V1__GetSchedule *g,
			    struct sched_ask *a)
{
	const char *path = c->d->loop->cfg->path;

	if (!g->collective || !*g->collective)
		return refuse_req(c, id, OFC__V1__STATUS__STATUS_INVALID,
				  "get_schedule needs a collective (allgather, reduce-scatter, "
				  "allreduce, alltoall)");
	/* broadcast and reduce: the fluid engine's, on a server fabric. */
	if (strcmp(g->collective, "broadcast") == 0)
		a->coll = SCHED_BROADCAST;
	else if (strcmp(g->collective, "reduce") == 0)
		a->coll = SCHED_REDUCE;
	else if (sched_collective_parse(g->collective, &a->coll) < 0)
		return refuse_req(
		    c, id, OFC__V1__STATUS__STATUS_INVALID,
		    "unknown collective '%.64s' (allgather, reduce-scatter, allreduce, "
		    "alltoall)",
		    g->collective);
	if (g->algorithm && *g->algorithm && schedule_algorithm_cli_only(g->algorithm))
		return refuse_req(
		    c, id, OFC__V1__STATUS__STATUS_INVALID,
		    "%.64s compares algorithms ('ofc schedule %s --collective %s --algo "
		    "%.64s'); ask for one of them",
		    g->algorithm, path, g->collective, g->algorithm);
	if (g->algorithm && *g->algorithm && !schedule_algorithm_known(g->algorithm)) {
		struct strbuf sb = STRBUF_INIT;

		schedule_algorithms_one(&sb, "", "", 0);
		refuse_req(c, id, OFC__V1__STATUS__STATUS_INVALID, "unknown algorithm '%.64s' (%s)",
			   g->algorithm, sb.buf);
		sb_free(&sb);
		return -1;
	}
	return 0;
}

/* The topology: the request's, a partition's (held at run time or
 * configured), else the fabric's. Answers and returns -1 when refused. */
static int check_topology(struct conn *c, uint64_t id, const Ofc__V1__GetSchedule *g,
			  struct sched_ask *a)
{
	const struct fabric *f = c->d->loop->cfg->f;

	if (g->topology && strlen(g->topology) > topo_spec_max(g->topology))
		return refuse_req(c, id, OFC__V1__STATUS__STATUS_INVALID,
				  "topology spec longer than %zu characters",
				  topo_spec_max(g->topology));
	if (!g->partition || !*g->partition)
		return 0;
	a->held = !g->topology ? held_of(c->d, g->partition) : NULL;
	a->held_spec = a->held ? a->held->topology : NULL;
	if (a->held_spec)
		return 0;
	a->part = fabric_find_partition(f, g->partition);
	if (!a->part)
		return refuse_req(c, id, OFC__V1__STATUS__STATUS_NOT_FOUND,
				  "fabric '%s' has no partition '%.64s'", f->name, g->partition);
	if (g->topology && *g->topology)
		return refuse_req(c, id, OFC__V1__STATUS__STATUS_INVALID,
				  "give a partition or a topology, not both");
	if (!a->part->topology.present)
		return refuse_req(c, id, OFC__V1__STATUS__STATUS_NOT_FOUND,
				  "partition '%s' has no topology", a->part->name);
	return 0;
}

/* Chunks and the all-to-all's lowering. Answers and returns -1 when refused. */
static int check_options(struct conn *c, uint64_t id, const Ofc__V1__GetSchedule *g,
			 const struct sched_ask *a)
{
	if (g->has_chunks && g->chunks > 1000000)
		return refuse_req(c, id, OFC__V1__STATUS__STATUS_INVALID,
				  "chunks must be 0..1000000");
	if (!g->lowering || !*g->lowering)
		return 0;
	if (!a2a_lowering_find(g->lowering)) {
		struct strbuf sb = STRBUF_INIT;
		int rc;

		a2a_lowering_names(&sb, false, ", ");
		rc = refuse_req(c, id, OFC__V1__STATUS__STATUS_INVALID,
				"unknown lowering '%.64s' (%s)", g->lowering, sb.buf);
		sb_free(&sb);
		return rc;
	}
	if (a->coll != SCHED_ALLTOALL)
		return refuse_req(c, id, OFC__V1__STATUS__STATUS_INVALID,
				  "lowering is the all-to-all MCF's: not for %s", g->collective);
	/* The engine that answers it, asked as its job will be (an empty
	 * field names nothing; a partition is asked for by its spec). */
	const char *topology = g->topology && *g->topology ? g->topology : NULL;
	struct schedule_query q = {
	    .fabric = c->d->loop->cfg->f,
	    .spec = a->part ? a->part->topology.spec : topology,
	    .algorithm = g->algorithm && *g->algorithm ? g->algorithm : NULL,
	};
	if (schedule_fluid_request(&q))
		return refuse_req(c, id, OFC__V1__STATUS__STATUS_INVALID,
				  "lowering is the all-to-all MCF's: the fluid engine has none");
	return 0;
}

/* Whether the fabric's own topology can be scheduled now, when the request
 * names none. Answers and returns -1 when refused. */
static int check_fabric(struct conn *c, uint64_t id, const Ofc__V1__GetSchedule *g,
			const struct sched_ask *a)
{
	const struct ofcd *d = c->d;
	bool own = !a->part && (!g->topology || !*g->topology);

	if (own && !d->loop->cfg->f->graph && !d->loop->cfg->f->nrings &&
	    !schedule_fluid_fabric(d->loop->cfg->f))
		return refuse_req(c, id, OFC__V1__STATUS__STATUS_NOT_FOUND,
				  "fabric '%s' has no topology: ask for one with topology",
				  d->loop->cfg->f->name);
	if (own && d->loop->cfg->no_schedule)
		return refuse_req(c, id, OFC__V1__STATUS__STATUS_FAILED, "%s",
				  d->loop->cfg->no_schedule);
	if (d->loop->stopping)
		return refuse_req(c, id, OFC__V1__STATUS__STATUS_BUSY, "ofcd is shutting down");
	return 0;
}

/* The workload's schedule: being computed (say so, never block on it nor
 * compute it a second time beside the planner), or kept. True when
 * answered. */
static bool answer_workload(struct conn *c, uint64_t id, const Ofc__V1__GetSchedule *g,
			    const struct sched_ask *a)
{
	struct ofcd *d = c->d;

	if (!is_workload(d, g, a->coll))
		return false;
	if (d->loop->planner && d->loop->planner->cfg == d->loop->cfg)
		reply(c, id, OFC__V1__STATUS__STATUS_BUSY,
		      "the workload's %s schedule is being computed (started %.0f s ago); ask "
		      "again after the schedule re-planned event (ofc --socket PATH watch)",
		      g->collective, (double)(unix_ms() - d->loop->planner->since_ms) / 1000);
	else if (!atomic_load_explicit(&d->loop->cfg->planned, memory_order_acquire) ||
		 !d->loop->cfg->plan)
		return false;
	else if (g->has_summary_only && g->summary_only)
		answer_plan(c, id, d->loop->cfg);
	else if (!d->loop->cfg->plan_full)
		reply(c, id, OFC__V1__STATUS__STATUS_FAILED, "%s",
		      d->loop->cfg->plan_full_why ? d->loop->cfg->plan_full_why
						  : "the workload's schedule is not kept");
	else
		answer_full(c, id, d->loop->cfg);
	return true;
}

/* The job that computes the schedule asked for. */
static struct job *schedule_job(const struct request *rq, const struct sched_ask *a)
{
	struct conn *c = rq->c;
	const Ofc__V1__GetSchedule *g = rq->req->get_schedule;
	struct ofcd *d = c->d;
	struct job *j = request_job(rq);

	j->t0 = now_seconds();
	j->coll = a->coll;
	j->algo = g->algorithm && *g->algorithm ? xstrdup(g->algorithm) : NULL;
	j->lowering = g->lowering && *g->lowering ? xstrdup(g->lowering) : NULL;
	j->size = g->has_size_bytes ? g->size_bytes : 0;
	j->spec = a->part			? xstrdup(a->part->topology.spec)
		  : a->held_spec		? xstrdup(a->held_spec)
		  : g->topology && *g->topology ? xstrdup(g->topology)
						: NULL;
	/* A held partition's spec came from a client too. */
	j->spec_from_client = !a->part && j->spec;
	if (a->held_spec) {
		j->node_names = xcalloc(a->held->n_hosts + 1, sizeof(char *));
		for (size_t k = 0; k < a->held->n_hosts; k++)
			j->node_names[j->nnode_names++] = xstrdup(a->held->hosts[k]);
	}
	/* A partition's schedule is sized by its own collectives. */
	for (uint32_t i = 0; a->part && j->size == 0 && i < a->part->ncollectives; i++)
		if (a->part->collectives[i].op == a->coll)
			j->size = a->part->collectives[i].size;
	j->chunks = g->has_chunks ? g->chunks : 0;
	j->summary_only = g->has_summary_only && g->summary_only;
	j->reduced = g->has_reduced && g->reduced;
	j->cfg = fabcfg_ref(d->loop->cfg);
	j->max_frame = d->o.max_frame;
	/* Anyone may ask on the read-only socket: a smaller budget there. */
	j->max_memory =
	    authz_public(&rq->who) ? d->o.ro_max_request_memory : d->o.max_request_memory;
	j->max_time = authz_public(&rq->who) ? d->o.ro_max_request_time : d->o.max_request_time;
	j->public_caller = authz_public(&rq->who);
	return j;
}

/* A public caller holding SCHEDULES_PER_CALLER jobs is answered BUSY
 * (and j freed): -1. */
static int caller_refused(struct conn *c, uint64_t id, struct job *j)
{
	uint32_t n = sched_caller(c->d, j, 0);
	char who[160];

	if (n < SCHEDULES_PER_CALLER)
		return 0;
	snprintf(who, sizeof(who), "%s", j->principal);
	job_free(j);
	reply(c, id, OFC__V1__STATUS__STATUS_BUSY,
	      "%s has %u schedules being computed already, the most one caller may have at "
	      "once (its others wait for them); try again when one is answered",
	      who, n);
	return -1;
}

/* Hand j to the schedule workers (counted until its answer comes back). */
static void to_schedule_worker(struct ofcd *d, struct job *j)
{
	d->loop->sched_pending++;
	sched_caller(d, j, 1);
	pthread_mutex_lock(&d->jobs.mu);
	if (d->jobs.squeue_tail)
		d->jobs.squeue_tail->next = j;
	else
		d->jobs.squeue = j;
	d->jobs.squeue_tail = j;
	pthread_cond_broadcast(&d->jobs.cond);
	ofcd_schedule_spawn(d);
	pthread_mutex_unlock(&d->jobs.mu);
}

/* Why a public caller's stream is refused ("": it is not): the public
 * callers' share of the streams is taken, or the caller's own. */
static const char *stream_share_full(struct ofcd *d, const struct job *j)
{
	uint32_t pub = 0, mine = 0;

	if (!j->public_caller)
		return "";
	for (uint32_t i = 0; i < d->loop->nstreams; i++) {
		pub += d->loop->stream_who[i] != NULL;
		mine += d->loop->stream_who[i] && j->principal &&
			strcmp(d->loop->stream_who[i], j->principal) == 0;
	}
	if (mine >= STREAMS_PER_CALLER) {
		d->loop->streams_refused[1]++;
		return "it has a schedule being streamed already, the most one caller may have";
	}
	if (pub >= PUBLIC_STREAMS) {
		d->loop->streams_refused[0]++;
		return "the streams public callers may hold are all taken (the others are kept "
		       "for root and the admins)";
	}
	return "";
}

/* Stream job j's schedule from a thread of its own. */
static int schedule_stream(struct conn *c, uint64_t id, struct job *j)
{
	struct ofcd *d = c->d;
	const char *full = stream_share_full(d, j);

	if (*full) {
		job_free(j);
		return reply(c, id, OFC__V1__STATUS__STATUS_BUSY, "%s; try again shortly", full);
	}
	if (d->loop->nstreams >= MAX_STREAMS) {
		job_free(j);
		return reply(c, id, OFC__V1__STATUS__STATUS_BUSY,
			     "%u schedules are being streamed; try again shortly",
			     d->loop->nstreams);
	}
	j->stream = stream_new(d);
	j->streamed = true;
	j->stream->conn_id = c->id;
	if (stream_start(j) < 0) {
		job_free(j);
		return reply(c, id, OFC__V1__STATUS__STATUS_BUSY,
			     "cannot start a thread for the stream");
	}
	d->loop->sched_pending++;
	sched_caller(d, j, 1);
	GROW(d->loop->streams, d->loop->cap_streams, d->loop->nstreams + 1);
	GROW(d->loop->stream_who, d->loop->cap_stream_who, d->loop->nstreams + 1);
	d->loop->stream_who[d->loop->nstreams] =
	    j->public_caller ? xstrdup(j->principal ? j->principal : "?") : NULL;
	d->loop->streams[d->loop->nstreams++] = j->stream;
	return 0;
}

int get_schedule(const struct request *rq)
{
	struct conn *c = rq->c;
	uint64_t id = rq->req->id;
	const Ofc__V1__GetSchedule *g = rq->req->get_schedule;
	struct ofcd *d = c->d;
	struct sched_ask a = {0};

	if (g->job && *g->job && !mpi_job_name_ok(g->job))
		return refuse_req(c, id, OFC__V1__STATUS__STATUS_INVALID,
				  "job: 1 to %d of A-Z a-z 0-9 . _ / : @ -", MPI_JOB_NAME_MAX);
	if (check_collective(c, id, g, &a) < 0 || check_topology(c, id, g, &a) < 0 ||
	    check_options(c, id, g, &a) < 0 || check_fabric(c, id, g, &a) < 0)
		return 0;
	/* (a what-if on another topology runs on no circuit) */
	if (!(g->topology && *g->topology)) {
		char who[80];

		if (rq->who.p)
			snprintf(who, sizeof(who), "%.64s",
				 rq->who.p->identity ? rq->who.p->identity : "?");
		else
			snprintf(who, sizeof(who), "uid:%u", (unsigned)rq->who.peer.uid);
		mpi_jobs_asked(d, g->partition && *g->partition ? g->partition : NULL, g->job, who,
			       g->has_taking && g->taking, atomic_load(&d->loop->cfg->pub_seq));
	}
	if (answer_workload(c, id, g, &a))
		return 0;
	if (d->loop->sched_pending >= MAX_SCHEDULES)
		return reply(c, id, OFC__V1__STATUS__STATUS_BUSY,
			     "%u schedules are being computed; try again shortly",
			     d->loop->sched_pending);
	struct job *j = schedule_job(rq, &a);
	if (caller_refused(c, id, j) < 0)
		return 0;
	/* Streams: every engine's (the fluid engine's from its period). */
	if (g->has_stream && g->stream && !j->summary_only)
		return schedule_stream(c, id, j);
	to_schedule_worker(d, j);
	return 0;
}

/* GetPlan, a read planned on a schedule worker. */
int get_plan(const struct request *rq)
{
	struct conn *c = rq->c;
	uint64_t id = rq->req->id;
	struct ofcd *d = c->d;
	struct job *j;

	if (!d->loop->cfg->f->workload.present)
		return reply(c, id, OFC__V1__STATUS__STATUS_NOT_FOUND,
			     "fabric '%s' has no workload section to plan", d->loop->cfg->f->name);
	if (d->loop->stopping)
		return reply(c, id, OFC__V1__STATUS__STATUS_BUSY, "ofcd is shutting down");
	if (d->loop->sched_pending >= MAX_SCHEDULES)
		return reply(c, id, OFC__V1__STATUS__STATUS_BUSY,
			     "%u schedules are being computed; try again shortly",
			     d->loop->sched_pending);
	j = request_job(rq);
	j->t0 = now_seconds();
	j->get_plan = true;
	j->cfg = fabcfg_ref(d->loop->cfg);
	j->max_frame = d->o.max_frame; /* (the planner's answer's bound) */
	j->public_caller = authz_public(&rq->who);
	if (caller_refused(c, id, j) < 0)
		return 0;
	to_schedule_worker(d, j);
	return 0;
}

static Ofc__V1__Principal *principal_copy(const Ofc__V1__Principal *p)
{
	size_t n = protobuf_c_message_get_packed_size(&p->base);
	uint8_t *b = xmalloc(n ? n : 1);
	Ofc__V1__Principal *q;

	protobuf_c_message_pack(&p->base, b);
	q = ofc__v1__principal__unpack(NULL, n, b);
	free(b);
	if (!q)
		abort(); /* it packed: it unpacks */
	return q;
}

/* GetMetrics: the exposition text, for anyone who may read. */
int get_metrics(const struct request *rq)
{
	struct conn *c = rq->c;
	uint64_t id = rq->req->id;
	struct ofcd *d = c->d;
	Ofc__V1__Response r = OFC__V1__RESPONSE__INIT;
	uint32_t clients[4] = {0};

	for (size_t i = 0; i < d->loop->nconns; i++) {
		const struct conn *k = d->loop->conns[i];

		clients[k->gw ? 3 : k->ro ? 2 : k->admin ? 0 : 1] += !k->dead;
	}
	r.has_id = r.has_status = 1;
	r.id = id;
	r.status = OFC__V1__STATUS__STATUS_OK;
	r.message = "ofcd's metrics (Prometheus text)";
	r.body_case = OFC__V1__RESPONSE__BODY_METRICS;
	r.metrics = metrics_text(d, clients);
	send_response(c, &r);
	free(r.metrics);
	return 0;
}

/* Watch: this connection gets the events from now on; one resuming
 * (after_seq) first the kept events it missed. */
int watch(const struct request *rq)
{
	struct conn *c = rq->c;
	const Ofc__V1__Watch *w = rq->req->watch;
	int rc;

	c->watching = true;
	c->watch_id = rq->req->id;
	if (rq->who.p && !c->watch_principal)
		c->watch_principal = principal_copy(rq->who.p);
	rc = reply(c, rq->req->id, OFC__V1__STATUS__STATUS_OK, "watching the events of fabric %s",
		   c->d->loop->cfg->f->name);
	if (w && w->has_after_seq)
		event_log_resume(c->d, c, w->after_seq, w->has_log ? w->log : 0);
	return rc;
}
