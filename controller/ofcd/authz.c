/* What a principal may do: requests that came through
 * ofc-gateway carry who sent them (Request.principal: an identity, a role
 * and, for a tenant, its partitions), and ofcd decides here, against the
 * running config's partitions and the partitions held at run time, because
 * it is the one process that knows them (docs/ARCHITECTURE.md, "Seams
 * between the network API and the cluster").
 *
 * The request table's flags (controller/api) say what each role may send:
 * admin everything; read-only the API_READ kinds (GetState, GetSchedule,
 * Watch, GetMetrics, GetPlan); tenant the API_TENANT kinds, checked here
 * against its partitions by the row's rule of what the request names (an
 * answer filtered to them, a partition of its own, a ticket of its own);
 * nothing else. A refusal names the partition and says it belongs to another
 * tenant, and never more: no owner, no host, no state. A socket's peer is
 * decided by the same table (authz_decide): root or --admin-group on the
 * main socket everything, anyone else the API_READ kinds, and on the main
 * socket a job's report (API_REPORT). */
#include "controller/ofcd/conn.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const char *authz_role_name(const Ofc__V1__Principal *p)
{
	switch (p ? p->role : OFC__V1__PRINCIPAL__ROLE__ROLE_UNSPECIFIED) {
	case OFC__V1__PRINCIPAL__ROLE__ROLE_ADMIN:
		return "admin";
	case OFC__V1__PRINCIPAL__ROLE__ROLE_READ_ONLY:
		return "read-only";
	case OFC__V1__PRINCIPAL__ROLE__ROLE_TENANT:
		return "tenant";
	case OFC__V1__PRINCIPAL__ROLE__ROLE_HOST:
		return "host";
	default:
		return "none";
	}
}

/* A tenant's partitions are names, or prefixes ending in '*' ("slurm-job-*":
 * every partition a Slurm controller makes for its jobs, docs/slurm.md);
 * partition names never hold a '*'. */
bool authz_owns(const Ofc__V1__Principal *p, const char *partition)
{
	if (!p || p->role == OFC__V1__PRINCIPAL__ROLE__ROLE_ADMIN)
		return true;
	if (p->role != OFC__V1__PRINCIPAL__ROLE__ROLE_TENANT || !partition)
		return false;
	for (size_t i = 0; i < p->n_partitions; i++) {
		const char *q = p->partitions[i];
		size_t n = strlen(q);

		if (n && q[n - 1] == '*' ? strncmp(q, partition, n - 1) == 0
					 : strcmp(q, partition) == 0)
			return true;
	}
	return false;
}

bool authz_is_tenant(const Ofc__V1__Principal *p)
{
	return p && p->role == OFC__V1__PRINCIPAL__ROLE__ROLE_TENANT;
}

bool authz_may_cancel(const Ofc__V1__Principal *p, const struct job *j)
{
	if (!authz_is_tenant(p))
		return true;
	return j && j->partition && authz_owns(p, j->partition) && j->principal && p->identity &&
	       strcmp(j->principal, p->identity) == 0;
}

/* The host part of a member or failure item: "h3" of "h3:1". */
static bool same_host(const char *member, const char *host)
{
	size_t n = strcspn(member, ":");

	return strlen(host) == n && strncmp(member, host, n) == 0;
}

/* The partition host `name` belongs to (a config partition's member, or a
 * partition held at run time), other than those p owns; NULL: none. */
static const char *foreign_owner(const struct ofcd *d, const Ofc__V1__Principal *p,
				 const char *name)
{
	const struct fabric *f = d->loop->cfg->f;

	for (uint32_t i = 0; i < f->npartitions; i++) {
		const struct partition *pt = &f->partitions[i];

		if (authz_owns(p, pt->name))
			continue;
		for (uint32_t k = 0; k < pt->nmembers; k++)
			if (same_host(pt->members[k], name))
				return pt->name;
	}
	const Ofc__V1__State *st = d->loop->snap ? d->loop->snap->state : NULL;
	for (size_t i = 0; st && i < st->n_held; i++) {
		if (authz_owns(p, st->held[i]->name))
			continue;
		for (size_t k = 0; k < st->held[i]->n_hosts; k++)
			if (strcmp(st->held[i]->hosts[k], name) == 0)
				return st->held[i]->name;
	}
	return NULL;
}

/* Whether a partition of that name is the config's or held. */
static bool partition_named(const struct ofcd *d, const char *name)
{
	const Ofc__V1__State *st = d->loop->snap ? d->loop->snap->state : NULL;
	const struct fabric *f = d->loop->cfg ? d->loop->cfg->f : NULL;

	for (uint32_t i = 0; f && i < f->npartitions; i++)
		if (strcmp(f->partitions[i].name, name) == 0)
			return true;
	for (size_t i = 0; st && i < st->n_held; i++)
		if (st->held[i]->name && strcmp(st->held[i]->name, name) == 0)
			return true;
	return false;
}

bool authz_tenant_host(const struct ofcd *d, const Ofc__V1__Principal *p, const char *name)
{
	const struct fabric *f = d->loop->cfg->f;

	if (!name)
		return false;
	for (uint32_t i = 0; i < f->npartitions; i++) {
		const struct partition *pt = &f->partitions[i];

		if (!authz_owns(p, pt->name))
			continue;
		for (uint32_t k = 0; k < pt->nmembers; k++)
			if (same_host(pt->members[k], name))
				return true;
	}
	const Ofc__V1__State *st = d->loop->snap ? d->loop->snap->state : NULL;
	for (size_t i = 0; st && i < st->n_held; i++) {
		if (!authz_owns(p, st->held[i]->name))
			continue;
		for (size_t k = 0; k < st->held[i]->n_hosts; k++)
			if (strcmp(st->held[i]->hosts[k], name) == 0)
				return true;
	}
	return false;
}

static int refuse(Ofc__V1__Status *st, char *why, size_t len, const char *fmt, ...)
    OFC_PRINTF(4, 5);
static int refuse(Ofc__V1__Status *st, char *why, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, len, fmt, ap);
	va_end(ap);
	*st = OFC__V1__STATUS__STATUS_DENIED;
	return -1;
}

#define OTHER_TENANT "permission denied: partition %.64s belongs to another tenant"

/* A tenant's request that names nothing where its row's rule needs it to:
 * what a tenant sends it with, and the field. */
static int refuse_unnamed(const struct api_tenant_rule *r, const char *name, Ofc__V1__Status *st,
			  char *why, size_t len)
{
	return refuse(st, why, len, "permission denied: %.64s is a tenant and %s (%s)", name,
		      r->needs, r->field);
}

/* A tenant's request of a kind tenants may send (API_TENANT), by its row's
 * rule (api_tenant_rule): what it names must be the tenant's. */
static int tenant_request(const struct ofcd *d, const Ofc__V1__Principal *p,
			  const struct api_request *k, const Ofc__V1__Request *req,
			  Ofc__V1__Status *st, char *why, size_t len)
{
	const struct api_tenant_rule *r = &k->tenant;
	const char *name = p->identity ? p->identity : "?", *part;
	char *const *hosts;
	bool two;

	switch (r->names) {
	case API_NAMES_FILTERED:
		return 0; /* its answer is filtered to the tenant's */
	case API_NAMES_TICKET:
		if (!api_named_ticket(req))
			return refuse_unnamed(r, name, st, why, len);
		return 0; /* the ticket's partition is checked where the queue is */
	case API_NAMES_PARTITION:
		part = api_named_partition(req, &two);
		if (!part && (two || !r->needs))
			return 0; /* the handler's INVALID */
		if (!part)
			return refuse_unnamed(r, name, st, why, len);
		if (!authz_owns(p, part)) {
			if (r->absent && !partition_named(d, part))
				return refuse(st, why, len,
					      "permission denied: no partition %.64s exists (%s), "
					      "and %.64s may name only its own partitions",
					      part, r->absent, name);
			return refuse(st, why, len, OTHER_TENANT, part);
		}
		/* A partition made at run time takes only hosts no other
		 * tenant's partition has. */
		for (size_t i = 0, n = api_named_hosts(req, &hosts); i < n; i++) {
			const char *o = hosts[i] ? foreign_owner(d, p, hosts[i]) : NULL;

			if (o)
				return refuse(st, why, len, OTHER_TENANT, o);
		}
		return 0;
	case API_NAMES_NONE:
	default: /* a kind flagged API_TENANT without its rule (test_requests) */
		return refuse(st, why, len,
			      "permission denied: %.64s is a tenant; this request needs the admin "
			      "role",
			      name);
	}
}

/* A host's agent's request (the host role): only a kind flagged API_HOST,
 * naming by its row's rule the one host the policy gave it. A refusal
 * names the asker's own host and never another's state. */
static int host_request(const Ofc__V1__Principal *p, const struct api_request *k,
			const Ofc__V1__Request *req, Ofc__V1__Status *st, char *why, size_t len)
{
	const char *name = p->identity ? p->identity : "?", *own = p->host ? p->host : "?";
	const char *named;

	if (!k || !(k->flags & API_HOST) || k->tenant.names != API_NAMES_HOST)
		return refuse(st, why, len,
			      "permission denied: %.64s is host %.64s's agent; it may only report "
			      "%.64s's links",
			      name, own, own);
	named = api_named_host(req);
	if (!named)
		return refuse(st, why, len,
			      "permission denied: %.64s is a host's agent and %s (%s)", name,
			      k->tenant.needs, k->tenant.field);
	if (!p->host || strcmp(named, p->host) != 0)
		return refuse(st, why, len,
			      "permission denied: %.64s speaks for host %.64s, not %.64s", name,
			      own, named);
	return 0;
}

/* A principal from the gateway: by its role. */
static int gateway_request(const struct ofcd *d, const Ofc__V1__Principal *p,
			   const struct api_request *k, const Ofc__V1__Request *req,
			   Ofc__V1__Status *st, char *why, size_t len)
{
	const char *name = p->identity ? p->identity : "?";
	unsigned flags = k ? k->flags : 0;

	switch (p->role) {
	case OFC__V1__PRINCIPAL__ROLE__ROLE_ADMIN:
		return 0;
	case OFC__V1__PRINCIPAL__ROLE__ROLE_READ_ONLY:
		if (flags & API_READ)
			return 0;
		return refuse(st, why, len,
			      "permission denied: %.64s has the read-only role; this request "
			      "needs the admin role",
			      name);
	case OFC__V1__PRINCIPAL__ROLE__ROLE_TENANT:
		if (!(flags & API_TENANT))
			return refuse(st, why, len,
				      "permission denied: %.64s is a tenant; this request needs "
				      "the admin role",
				      name);
		return tenant_request(d, p, k, req, st, why, len);
	case OFC__V1__PRINCIPAL__ROLE__ROLE_HOST:
		return host_request(p, k, req, st, why, len);
	default:
		return refuse(st, why, len, "permission denied: %.64s has no role", name);
	}
}

/* A peer of a socket: an admin anything, anyone else what reads. A
 * Request without a body passes: its answer says it has none. */
static int socket_request(const struct ofcd *d, const struct principal *who,
			  const struct api_request *k, Ofc__V1__Status *st, char *why, size_t len)
{
	if (!k || (k->flags & API_READ) || (who->admin && !who->ro))
		return 0;
	/* A job's report: whoever the main socket's mode lets open it (jobs
	 * run as their users); what it names is checked by its handler. */
	if ((k->flags & API_REPORT) && !who->ro)
		return 0;
	if (who->ro)
		return refuse(st, why, len,
			      "permission denied: %s on the read-only socket, which answers reads "
			      "only; mutations go to the main socket",
			      k->word);
	if (d->o.have_admin_group)
		return refuse(st, why, len,
			      "permission denied: %s needs root or membership of group '%s' (you "
			      "are uid %u, pid %d)",
			      k->word, d->o.admin_group ? d->o.admin_group : "?", who->peer.uid,
			      who->peer.pid);
	return refuse(st, why, len,
		      "permission denied: %s needs root (you are uid %u, pid %d; ofcd has no "
		      "--admin-group)",
		      k->word, who->peer.uid, who->peer.pid);
}

int authz_decide(const struct ofcd *d, const struct principal *who, const struct api_request *k,
		 const Ofc__V1__Request *req, Ofc__V1__Status *st, char *why, size_t len)
{
	if (who->gateway)
		return gateway_request(d, who->p, k, req, st, why, len);
	return socket_request(d, who, k, st, why, len);
}

bool authz_sees_all(const struct principal *who)
{
	if (who->gateway)
		return who->p && who->p->role == OFC__V1__PRINCIPAL__ROLE__ROLE_ADMIN;
	return who->admin && !who->ro;
}

bool authz_public(const struct principal *who)
{
	return who->ro || (who->p && who->p->role != OFC__V1__PRINCIPAL__ROLE__ROLE_ADMIN);
}

/* A failure item ("U-V", "HOST:PORT", "HOST") whose hosts are all p's. */
static bool item_visible(const struct ofcd *d, const Ofc__V1__Principal *p, const char *item)
{
	char buf[2 * NAME_MAX_LEN + 16];
	const char *dash;

	if (authz_tenant_host(d, p, item))
		return true; /* a host's name, even one with a '-' */
	snprintf(buf, sizeof(buf), "%s", item);
	buf[strcspn(buf, ":>")] = 0;
	if (authz_tenant_host(d, p, buf))
		return !strchr(item, '>') || authz_tenant_host(d, p, strchr(item, '>') + 1);
	dash = strchr(item, '-');
	if (!dash || (size_t)(dash - item) >= sizeof(buf))
		return false;
	memcpy(buf, item, (size_t)(dash - item));
	buf[dash - item] = 0;
	return authz_tenant_host(d, p, buf) && authz_tenant_host(d, p, dash + 1);
}

/* (queue_at_leader's filter: p is the principal) */
static bool owns(const void *p, const char *partition)
{
	return authz_owns(p, partition);
}

Ofc__V1__TransactionInfo *txn_info(struct arena *a, const struct job *j, const char *state,
				   uint64_t txn, bool tenant)
{
	Ofc__V1__TransactionInfo *t = arena_alloc(a, sizeof(*t));

	ofc__v1__transaction_info__init(t);
	if (txn) {
		t->has_id = 1;
		t->id = txn;
	}
	t->state = (char *)state;
	t->target = j->target;
	t->has_ticket = t->has_dry_run = 1;
	t->ticket = j->ticket;
	t->dry_run = j->dry_run;
	if (tenant) {
		/* (a tenant's own requests on its partitions) */
		t->kind = (char *)(j->kind == JOB_RELEASE ? "release-partition" : "reconfigure");
		return t;
	}
	t->kind = (char *)job_kind_name(j->kind);
	t->has_peer_uid = t->has_peer_pid = 1;
	t->peer_uid = j->peer.uid;
	t->peer_pid = (uint32_t)j->peer.pid;
	t->principal = j->principal;
	return t;
}

/* What a tenant's GetState shows: the fabric's name and generation, each
 * device by name and kind with whether it answers (a failure as the
 * reason's word) and only the circuits joining two of the tenant's hosts,
 * its own held partitions, queued and running requests and failures; none
 * of the fabric's topology, schedule, config or state paths. Built in a,
 * per request (tenants are few; the shared answer is cached). */
Ofc__V1__State *authz_tenant_state(const struct ofcd *d, const Ofc__V1__Principal *p,
				   struct arena *a)
{
	const struct snapshot *s = d->loop->snap;
	const Ofc__V1__State *src = s->state;
	Ofc__V1__State *st = arena_alloc(a, sizeof(*st));

	ofc__v1__state__init(st);
	st->tenant = p->identity ? p->identity : "?";
	st->fabric_name = src->fabric_name;
	st->has_config_generation = src->has_config_generation;
	st->config_generation = src->config_generation;
	st->has_committed_unix_ms = src->has_committed_unix_ms;
	st->committed_unix_ms = src->committed_unix_ms;
	st->devices = arena_array(a, s->ndevs + 1, sizeof(*st->devices));
	for (uint32_t i = 0; i < s->ndevs; i++) {
		const Ofc__V1__DeviceState *o = s->devs[i];
		Ofc__V1__DeviceState *m = arena_alloc(a, sizeof(*m));

		ofc__v1__device_state__init(m);
		m->name = o->name;
		m->kind = o->kind;
		m->has_reachable = o->has_reachable;
		m->reachable = o->reachable;
		m->error = o->error ? (char *)s->public_error[i] : NULL;
		m->circuits = arena_array(a, o->n_circuits + 1, sizeof(*m->circuits));
		for (size_t k = 0; k < o->n_circuits; k++)
			if (authz_tenant_host(d, p, o->circuits[k]->src_host) &&
			    authz_tenant_host(d, p, o->circuits[k]->dst_host))
				m->circuits[m->n_circuits++] = o->circuits[k];
		st->devices[st->n_devices++] = m;
	}
	st->held = arena_array(a, src->n_held + 1, sizeof(*st->held));
	for (size_t i = 0; i < src->n_held; i++)
		if (authz_owns(p, src->held[i]->name))
			st->held[st->n_held++] = src->held[i];
	st->failed = arena_array(a, src->n_failed + 1, sizeof(*st->failed));
	for (size_t i = 0; i < src->n_failed; i++)
		if (item_visible(d, p, src->failed[i]))
			st->failed[st->n_failed++] = src->failed[i];
	st->failed_by_host = arena_array(a, src->n_failed_by_host + 1, sizeof(*st->failed_by_host));
	st->n_failed_by_host = 0;
	for (size_t i = 0; i < src->n_failed_by_host; i++)
		if (item_visible(d, p, src->failed_by_host[i]))
			st->failed_by_host[st->n_failed_by_host++] = src->failed_by_host[i];
	st->moved = arena_array(a, src->n_moved + 1, sizeof(*st->moved));
	for (size_t i = 0; i < src->n_moved; i++)
		if (item_visible(d, p, src->moved[i]))
			st->moved[st->n_moved++] = src->moved[i];
	/* its own partitions' libofc-mpi reports (none of the whole fabric's) */
	st->mpi_reports = arena_array(a, d->loop->mpi.n + 1, sizeof(*st->mpi_reports));
	for (uint32_t i = 0; i < d->loop->mpi.n; i++) {
		Ofc__V1__ReportMpi *r = d->loop->mpi.v[i];

		if (r->partition && *r->partition && authz_owns(p, r->partition))
			st->mpi_reports[st->n_mpi_reports++] = r;
	}
	if (src->partition && authz_owns(p, src->partition))
		st->partition = src->partition;
	st->queue = arena_array(a, d->loop->nqueue + 1, sizeof(*st->queue));
	for (const struct job *j = d->loop->queue; j; j = j->next)
		if (j->partition && authz_owns(p, j->partition))
			st->queue[st->n_queue++] = txn_info(a, j, "queued", 0, true);
	if (!st->n_queue) /* a follower: the leader's, from etcd */
		st->n_queue = queue_at_leader(d, a, owns, p, &st->queue);
	if (d->loop->running && d->loop->running->partition &&
	    authz_owns(p, d->loop->running->partition) &&
	    (d->loop->running->kind == JOB_RECONFIGURE || d->loop->running->kind == JOB_RELEASE)) {
		st->transaction = txn_info(a, d->loop->running, d->loop->running_state,
					   d->loop->running_txn, true);
		st->transaction->has_running = st->transaction->running = 1;
	}
	return st;
}
