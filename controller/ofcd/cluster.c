/* ofcd's replicas on etcd (docs/ofcd.md, "Replicas"). With
 * --cluster the daemon's store is etcd's (controller/reconfig/store.h):
 * the replica whose lease holds the fabric's leader key leads, repairs what
 * its predecessor left (takeover.c, JOB_TAKEOVER) and alone drives the devices
 * and writes the state, every write guarded by its epoch; the others follow
 * the state as their watch of etcd delivers it (JOB_SYNC) and answer reads
 * from it, mutations with STATUS_NOT_LEADER and where the leader is.
 *
 * The store's threads call on_store; everything else here runs on the loop
 * thread (the notes) or builds messages from the store's view, which any
 * thread may ask for. */
#include "controller/ofcd/conn.h"

#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proto/state.pb-c.h"

/* (a store thread) What the store says goes to the loop as a note; changes
 * of the state are coalesced (one sync at a time reads all of them). */
static void on_store(void *ctx, enum store_event ev)
{
	struct ofcd *d = ctx;
	struct note *n;

	if (ev == STORE_EV_FORGED) {
		ofcd_log(d, OFCD_LOG_WARNING,
			 "the leader key was bound to this replica's lease under an epoch it never "
			 "won (written by someone holding etcd's credentials): deleted it, so that "
			 "the replicas campaign again");
		return;
	}
	if (ev == STORE_EV_NO_LEADER) {
		struct store_cluster v;

		store_cluster(d->store, &v);
		ofcd_log(d, OFCD_LOG_WARNING,
			 "%s (written by someone holding etcd's credentials): no replica leads "
			 "under it; deleted it, so that the replicas campaign again",
			 v.unheld);
		return;
	}
	if (ev == STORE_EV_CHANGED && atomic_exchange(&d->cl_change_posted, true))
		return;
	if (ev == STORE_EV_EVENTS && atomic_exchange(&d->cl_events_posted, true))
		return;
	n = xcalloc(1, sizeof(*n));
	n->cluster = ev;
	ofcd_note(d, n);
}

/* The socket clients are sent to when this replica leads: --advertise's,
 * else --socket made absolute (a follower's answer goes to clients that may
 * run elsewhere in the file system). */
static char *own_socket(const struct ofcd *d)
{
	const char *s = d->o.advertise_socket ? d->o.advertise_socket : d->o.socket_path;
	char cwd[PATH_MAX];

	if (d->o.inherit_fds && !d->o.advertise_socket)
		return xstrdup(OFCD_SOCKET_DEFAULT);
	if (!s)
		return NULL;
	if (s[0] == '/' || !getcwd(cwd, sizeof(cwd)))
		return xstrdup(s);
	return xasprintf("%s/%s", cwd, s);
}

int cluster_open(struct ofcd *d, const char *fabric, struct ofc_error *err)
{
	char host[128] = "replica";
	char *sock = own_socket(d);
	struct store *s;
	struct ofc_error e = {0};

	gethostname(host, sizeof(host) - 1);
	struct store_etcd_opts o = {
	    .endpoints = d->o.cluster,
	    .cacert = d->o.cluster_cacert,
	    .cert = d->o.cluster_cert,
	    .key = d->o.cluster_key,
	    .user = d->o.cluster_user,
	    .password = d->o.cluster_password,
	    .fabric = fabric,
	    .prefix = d->o.cluster_prefix,
	    .name = d->o.cluster_name ? d->o.cluster_name : host,
	    .advertise_socket = sock,
	    .advertise_url = d->o.advertise_url,
	    .ttl = d->o.cluster_ttl > 0 ? d->o.cluster_ttl : OFCD_CLUSTER_TTL_DEFAULT,
	    .on_event = on_store,
	    .ctx = d,
	};
	int rc = store_open_etcd(&o, &s, err);

	free(sock);
	if (rc < 0)
		return -1;
	store_close(d->store);
	d->store = s;
	d->clustered = true;
	/* What etcd holds now, so the first answers show it; an etcd that
	 * does not answer yet leaves the replica serving nothing recorded,
	 * marked stale, while its threads keep asking; one that refuses TLS
	 * (a certificate another CA signed, a CA that does not vouch for
	 * etcd) is a setting to fix, not an etcd to wait for: no start. */
	int lrc = store_load(s, 2.0, &e);

	if (lrc < 0 && e.reason == OFC_R_CREDENTIALS)
		return ofc_error_set(err, OFC_E_USAGE, "--cluster %s: %s", d->o.cluster, e.msg);
	if (lrc < 0)
		ofcd_log(d, OFCD_LOG_WARNING,
			 "etcd does not answer yet (%s): serving nothing recorded, marked stale, "
			 "until it does",
			 e.msg);
	/* Registered under its lease before it serves: a second replica
	 * under a name that runs is refused here, at its start. */
	return store_register(s, 2.0, err);
}

int cluster_start(struct ofcd *d, struct ofc_error *err)
{
	if (!d->clustered)
		return 0;
	ofcd_log(d, OFCD_LOG_NOTICE,
		 "replica %s of fabric %s on etcd %s: campaigning for leadership (lease %.0f s)",
		 d->o.cluster_name ? d->o.cluster_name : "(host name)", d->loop->cfg->f->name,
		 d->o.cluster, d->o.cluster_ttl > 0 ? d->o.cluster_ttl : OFCD_CLUSTER_TTL_DEFAULT);
	return store_start(d->store, err);
}

/* ---- messages ------------------------------------------------------------------------ */

/* State.cluster.replicas: every replica as its registration says, with
 * what this reader computes (lease left, since it was last heard of);
 * this replica's role is its own view (taking-over included). */
static void replicas_msg(struct arena *a, Ofc__V1__Cluster *c, const struct store_cluster *v)
{
	uint64_t now = unix_ms();

	c->n_known_replicas = v->nknown;
	c->known_replicas = arena_array(a, v->nknown + 1, sizeof(*c->known_replicas));
	for (uint32_t i = 0; i < v->nknown; i++)
		c->known_replicas[i] = arena_strdup(a, v->known[i]);
	c->n_replicas = v->nreplicas;
	c->replicas = arena_array(a, v->nreplicas + 1, sizeof(*c->replicas));
	for (uint32_t i = 0; i < v->nreplicas; i++) {
		const struct store_replica *r = &v->replicas[i];
		Ofc__V1__Replica *m = arena_alloc(a, sizeof(*m));
		bool self = strcmp(r->name, v->name) == 0;

		ofc__v1__replica__init(m);
		m->name = arena_strdup(a, r->name);
		m->role = self ? (char *)c->role : arena_strdup(a, r->role);
		m->socket = r->socket[0] ? arena_strdup(a, r->socket) : NULL;
		m->url = r->url[0] ? arena_strdup(a, r->url) : NULL;
		m->host = r->host[0] ? arena_strdup(a, r->host) : NULL;
		m->has_epoch = m->has_pid = m->has_started_unix_ms = 1;
		m->epoch = r->epoch;
		m->pid = r->pid;
		m->started_unix_ms = r->started_ms;
		m->has_lease_left_seconds = r->lease_left >= 0;
		m->lease_left_seconds = r->lease_left;
		m->has_since_contact_seconds = m->has_last_contact_unix_ms = r->written_ms != 0;
		m->last_contact_unix_ms = r->written_ms;
		m->since_contact_seconds =
		    now > r->written_ms ? (double)(now - r->written_ms) / 1000 : 0;
		c->replicas[i] = m;
	}
}

Ofc__V1__Leader *cluster_leader_msg(struct arena *a, const struct store_cluster *v)
{
	Ofc__V1__Leader *l;

	if (!v->leader[0] || (!v->leading && strcmp(v->leader, v->name) == 0))
		return NULL;
	l = arena_alloc(a, sizeof(*l));
	ofc__v1__leader__init(l);
	l->name = arena_strdup(a, v->leader);
	if (v->leader_socket[0])
		l->socket = arena_strdup(a, v->leader_socket);
	if (v->leader_url[0])
		l->url = arena_strdup(a, v->leader_url);
	l->has_epoch = 1;
	l->epoch = v->epoch;
	return l;
}

Ofc__V1__Leader *cluster_refusal_leader(struct arena *a, const struct store_cluster *v)
{
	bool other = v->leader[0] && strcmp(v->leader, v->name) != 0;

	/* (stale: only another replica's key, as last heard, is worth asking) */
	return v->fresh || (!v->leading && other) ? cluster_leader_msg(a, v) : NULL;
}

Ofc__V1__Cluster *cluster_msg(struct arena *a, const struct ofcd *d, const struct store_cluster *v)
{
	Ofc__V1__Cluster *c = arena_alloc(a, sizeof(*c));

	ofc__v1__cluster__init(c);
	/* (leading in etcd, the takeover not done yet: mutations wait for it) */
	c->role = !v->leading ? "follower" : d->loop->leading ? "leader" : "taking-over";
	c->name = arena_strdup(a, v->name);
	c->leader = cluster_leader_msg(a, v);
	c->has_lease_ttl_seconds = c->has_lease_left_seconds = 1;
	c->lease_ttl_seconds = v->lease_ttl;
	c->lease_left_seconds = v->lease_left;
	c->n_members = v->nmembers;
	c->members = arena_array(a, v->nmembers + 1, sizeof(*c->members));
	for (uint32_t i = 0; i < v->nmembers; i++) {
		Ofc__V1__ClusterMember *m = arena_alloc(a, sizeof(*m));

		ofc__v1__cluster_member__init(m);
		m->name = arena_strdup(a, v->members[i].name);
		m->url = arena_strdup(a, v->members[i].url);
		m->has_reachable = m->has_leader = 1;
		m->reachable = v->members[i].reachable;
		m->leader = v->members[i].raft_leader;
		c->members[i] = m;
	}
	c->has_stale = 1;
	c->stale = !v->fresh;
	if (!v->fresh && v->why[0])
		c->stale_reason = arena_strdup(a, v->why);
	if (v->since_ok >= 0) {
		c->has_since_contact_seconds = 1;
		c->since_contact_seconds = v->since_ok;
	}
	if (d->loop->took_over_ms) {
		c->has_took_over_unix_ms = 1;
		c->took_over_unix_ms = d->loop->took_over_ms;
	}
	if (d->loop->elected_ms) {
		c->has_elected_unix_ms = 1;
		c->elected_unix_ms = d->loop->elected_ms;
	}
	c->has_revision = 1;
	c->revision = v->revision;
	c->n_endpoints = 1;
	c->endpoints = arena_array(a, 2, sizeof(*c->endpoints));
	c->endpoints[0] = arena_strdup(a, d->o.cluster);
	replicas_msg(a, c, v);
	return c;
}

/* ---- who may mutate -------------------------------------------------------------------- */

Ofc__V1__Status cluster_refusal(const struct ofcd *d, const struct store_cluster *v,
				const char *fabric, char *msg, size_t n)
{
	/* (its own key, as a cache cut off from etcd may still show it) */
	bool other = v->leader[0] && strcmp(v->leader, v->name) != 0;

	if (!d->clustered || (v->leading && v->fresh))
		return OFC__V1__STATUS__STATUS_OK;
	if (!v->leading && other) {
		snprintf(
		    msg, n,
		    "this replica (%s) follows; the leader of fabric %s is %s (epoch %llu)%s%s%s: "
		    "ask it%s",
		    v->name, fabric, v->leader, (unsigned long long)v->epoch,
		    v->leader_socket[0] ? " at " : "", v->leader_socket,
		    v->leader_socket[0] || v->leader_url[0] ? "" : ", which advertises no address",
		    v->fresh ? "" : " (as this replica last heard: etcd does not answer it)");
		return OFC__V1__STATUS__STATUS_NOT_LEADER;
	}
	if (!v->fresh) {
		/* Leading or not, nobody can be confirmed leader from here:
		 * NOT_LEADER naming none, so that clients go on to the next
		 * replica (one that reaches etcd may lead by now) rather than
		 * take it for the request's answer. */
		char last[48] = "etcd has not answered yet";

		if (v->since_ok >= 0)
			snprintf(last, sizeof(last), "last answer %.1f s ago", v->since_ok);
		snprintf(msg, n,
			 "mutations are refused: this replica (%s) cannot confirm with etcd who "
			 "leads (%s; %s): reads are answered, marked stale, and mutations resume "
			 "when etcd answers; ask another replica",
			 v->name, v->why[0] ? v->why : "no answer", last);
		return OFC__V1__STATUS__STATUS_NOT_LEADER;
	}
	snprintf(
	    msg, n,
	    "this replica (%s) follows and no replica leads fabric %s now (an election is under "
	    "way): try again in a moment",
	    v->name, fabric);
	return OFC__V1__STATUS__STATUS_NOT_LEADER;
}

/* (the staleness of a deposed replica that has not read etcd again) */
#define DEPOSED_WHY "this replica stopped leading"

/* This replica's role as GetState shows it. */
static const char *cluster_role(const struct ofcd *d, const struct store_cluster *v)
{
	return !v->leading ? "follower" : d->loop->leading ? "leader" : "taking-over";
}

/* Tell every watcher who leads now (KIND_LEADER_CHANGED) when it is not
 * what they last heard: the leader key changed hands or went (an election
 * is under way), or this replica's own role moved (elected, took over,
 * deposed). A client shows the replicas again on it instead of reading the
 * state every few seconds. Tenants, who are shown no replicas, do not
 * hear it. */
static void cluster_announce(struct ofcd *d, const struct store_cluster *v, const char *role)
{
	Ofc__V1__Response r = OFC__V1__RESPONSE__INIT;
	Ofc__V1__Event e = OFC__V1__EVENT__INIT;
	struct arena a = {0};
	char msg[400], line[450], said[sizeof(d->loop->cl_said)];

	e.leader = cluster_leader_msg(&a, v);
	snprintf(said, sizeof(said), "%s %llu %s", e.leader ? e.leader->name : "",
		 e.leader ? (unsigned long long)e.leader->epoch : 0ULL, role);
	if (strcmp(said, d->loop->cl_said) == 0) {
		arena_free(&a);
		return;
	}
	memcpy(d->loop->cl_said, said, sizeof(said));
	if (e.leader)
		snprintf(msg, sizeof(msg),
			 "fabric %s is led by %s (epoch %llu); this replica (%s) is %s",
			 d->loop->cfg->f->name, e.leader->name, (unsigned long long)e.leader->epoch,
			 v->name, role);
	else
		snprintf(
		    msg, sizeof(msg),
		    "fabric %s has no leader now (an election is under way); this replica (%s) "
		    "is %s",
		    d->loop->cfg->f->name, v->name, role);
	snprintf(line, sizeof(line), "%s: %s",
		 event_kind_name(OFC__V1__EVENT__KIND__KIND_LEADER_CHANGED), msg);
	e.has_kind = e.has_time_unix_ms = 1;
	e.kind = OFC__V1__EVENT__KIND__KIND_LEADER_CHANGED;
	e.time_unix_ms = unix_ms();
	e.message = msg;
	e.role = (char *)role;
	r.has_id = r.has_status = 1;
	r.status = OFC__V1__STATUS__STATUS_OK;
	r.message = line;
	r.body_case = OFC__V1__RESPONSE__BODY_EVENT;
	r.event = &e;
	ofcd_send_watchers(d, &r, NULL);
	arena_free(&a);
}

/* (loop) The store's view again; logs what changed for an operator, and
 * tells the watchers when who leads changed. Returns whether it changed
 * what GetState shows. */
bool cluster_refresh(struct ofcd *d)
{
	struct store_cluster v;

	store_cluster(d->store, &v);
	/* (before the check below: a takeover done or a replica deposed moves
	 * its role with no new view) */
	cluster_announce(d, &v, cluster_role(d, &v));
	/* (deposed: stale until etcd was read again, takeover.c's sync_start;
	 * also when the store leads again before the loop heard it was
	 * deposed: another replica may have led between, and what this one
	 * shows is the old lead's until its takeover has read etcd) */
	bool reread = d->loop->cl_reload && v.fresh;
	if (reread) {
		v.fresh = false;
		snprintf(v.why, sizeof(v.why), "%s (%s) and has not read etcd again since",
			 DEPOSED_WHY, v.deposed[0] ? v.deposed : "deposed");
	}
	if (v.serial == d->loop->cl.serial && v.leading == d->loop->cl.leading &&
	    v.fresh == d->loop->cl.fresh)
		return false;
	/* (Not fresh before the first answer: cluster_open said so.) */
	if (!v.fresh && d->loop->cl.fresh) {
		ofcd_log(d, OFCD_LOG_WARNING, "%s: what this replica shows is stale%s", v.why,
			 v.leading && !reread ? "; mutations are refused until etcd answers" : "");
		d->loop->cl_stale_said = true;
	} else if (v.fresh && d->loop->cl_stale_said) {
		ofcd_log(d, OFCD_LOG_NOTICE, "%s: what this replica shows is current",
			 strncmp(d->loop->cl.why, DEPOSED_WHY, strlen(DEPOSED_WHY)) == 0
			     ? "etcd read again since this replica stopped leading"
			     : "etcd answers again");
		d->loop->cl_stale_said = false;
	}
	if (strcmp(v.leader, d->loop->cl.leader) != 0 || v.epoch != d->loop->cl.epoch) {
		if (v.leader[0])
			ofcd_log(d, OFCD_LOG_NOTICE, "fabric %s is led by %s (epoch %llu)%s",
				 d->loop->cfg->f->name, v.leader, (unsigned long long)v.epoch,
				 v.leading ? ": this replica" : "");
		else
			ofcd_log(d, OFCD_LOG_NOTICE, "fabric %s has no leader now",
				 d->loop->cfg->f->name);
	}
	for (uint32_t i = 0; i < v.nmembers && i < d->loop->cl.nmembers; i++)
		if (v.members[i].reachable != d->loop->cl.members[i].reachable)
			ofcd_log(d, v.members[i].reachable ? OFCD_LOG_NOTICE : OFCD_LOG_WARNING,
				 "etcd member %s (%s) %s", v.members[i].name, v.members[i].url,
				 v.members[i].reachable ? "answers again" : "does not answer");
	d->loop->cl = v;
	return true;
}

/* ---- deposed ---------------------------------------------------------------------------- */

void cluster_deposed(struct ofcd *d)
{
	struct store_cluster v;

	store_cluster(d->store, &v);
	if (d->loop->leading)
		ofcd_log(d, OFCD_LOG_WARNING,
			 "this replica leads fabric %s no more (%s): it drives no device and "
			 "writes nothing from now on, and shows what etcd holds once it has read "
			 "it again",
			 d->loop->cfg->f->name, v.deposed[0] ? v.deposed : "deposed");
	d->loop->leading = false;
	d->loop->cl_reload = true;
	d->loop->takeover_retry_at = d->loop->takeover_backoff = 0;
	cluster_refresh(d);
}

#define TAKEOVER_RETRY_FIRST 1.0
#define TAKEOVER_RETRY_MAX   30.0

void cluster_takeover_failed(struct ofcd *d, double now)
{
	double wait = d->loop->takeover_backoff * 2;

	if (wait < TAKEOVER_RETRY_FIRST)
		wait = TAKEOVER_RETRY_FIRST;
	if (wait > TAKEOVER_RETRY_MAX)
		wait = TAKEOVER_RETRY_MAX;
	d->loop->takeover_backoff = wait;
	d->loop->takeover_retry_at = now + wait;
	ofcd_log(d, OFCD_LOG_WARNING,
		 "the takeover did not finish: this replica leads in etcd but drives nothing; "
		 "trying again in %.0f s (mutations wait for it)",
		 wait);
}

bool cluster_takeover_retry(struct ofcd *d, double now)
{
	if (!d->loop->takeover_retry_at || now < d->loop->takeover_retry_at)
		return false;
	d->loop->takeover_retry_at = 0;
	if (!d->loop->cl.leading || d->loop->leading)
		return false;
	ofcd_want_cluster_job(d, JOB_TAKEOVER);
	return true;
}

void cluster_synced(struct ofcd *d, const struct job *j)
{
	if (d->loop->cl_reload && (j->reloaded || (j->kind == JOB_TAKEOVER && j->done_ms))) {
		d->loop->cl_reload = false;
		cluster_refresh(d);
	}
}

/* ---- on the loop: a replica's jobs, and the queue refused or replayed ------- */

/* A takeover replaces a sync waiting; a sync asked while one waits or runs
 * is one more sync after it. */
void ofcd_want_cluster_job(struct ofcd *d, enum job_kind kind)
{
	struct job *j;

	if (d->loop->stopping)
		return;
	if (d->loop->cluster_job &&
	    (d->loop->cluster_job->kind == JOB_TAKEOVER || kind == JOB_SYNC))
		return;
	if (kind == JOB_SYNC && d->loop->running && d->loop->running->kind == JOB_SYNC) {
		d->loop->sync_again = true;
		return;
	}
	job_free(d->loop->cluster_job);
	j = xcalloc(1, sizeof(*j));
	j->kind = kind;
	d->loop->cluster_job = j;
}

/* This replica leads no more: what waits is answered with who leads now
 * (the running job ends on its own at its next write or device command). */
void ofcd_refuse_queue(struct ofcd *d)
{
	char msg[900];
	struct arena a = {0};

	cluster_refusal(d, &d->loop->cl, d->loop->cfg->f->name, msg, sizeof(msg));
	while (d->loop->queue) {
		struct job *j = d->loop->queue;
		struct conn *c = conn_find(d, j->conn_id);

		d->loop->queue = j->next;
		d->loop->nqueue--;
		/* One in etcd's queue is the next leader's to run: its client
		 * is told so, and not to send it again (NOT_LEADER would make
		 * ofc and the Python client ask the new leader themselves),
		 * unless it has a request_key: the next leader runs that once
		 * however often it is sent, so its client asks it. */
		bool handed = j->stored && !j->key;
		char hmsg[1100];

		if (handed)
			snprintf(hmsg, sizeof(hmsg),
				 "ticket %llu was not run here: this replica (%s) leads no more; "
				 "it is in etcd's queue, and the next leader runs it after its "
				 "takeover (watch it there; do not send it again)",
				 (unsigned long long)j->ticket, d->loop->cl.name);
		if (c) {
			Ofc__V1__Response r = OFC__V1__RESPONSE__INIT;

			r.has_id = r.has_status = 1;
			r.id = j->req_id;
			r.status = handed ? OFC__V1__STATUS__STATUS_UNAVAILABLE
					  : OFC__V1__STATUS__STATUS_NOT_LEADER;
			r.message = handed ? hmsg : msg;
			if (!handed)
				r.leader = cluster_refusal_leader(&a, &d->loop->cl);
			send_response(c, &r);
		}
		ofcd_log(d, OFCD_LOG_NOTICE, "ticket %llu (%s %s) not run: %s",
			 (unsigned long long)j->ticket, job_kind_name(j->kind), j->target,
			 handed ? "handed to the next leader through etcd's queue" : msg);
		job_free(j);
	}
	d->loop->queue_tail = NULL;
	queue_forget(d);
	arena_free(&a);
}

/* The rights a replayed entry's uid has now: root, or a member of
 * --admin-group by the system's group database (its primary group or a
 * supplementary one). A socket client's rights came from its connection,
 * which went with the last leader; what the entry records is a uid, and
 * whoever can write etcd's queue can write any uid there. */
static bool uid_is_admin(const struct ofcd *d, uid_t uid)
{
	struct passwd pw, *got = NULL;
	char buf[4096];
	gid_t small[64], *g = small;
	int n = ARRAY_SIZE(small);
	bool yes = false;

	if (uid == 0)
		return true;
	if (!d->o.have_admin_group || getpwuid_r(uid, &pw, buf, sizeof(buf), &got) != 0 || !got)
		return false;
	if (getgrouplist(pw.pw_name, pw.pw_gid, g, &n) < 0 && n > 0 && n <= 65536) {
		g = xcalloc((size_t)n, sizeof(*g));
		if (getgrouplist(pw.pw_name, pw.pw_gid, g, &n) < 0)
			n = 0;
	}
	for (int i = 0; i < n; i++)
		yes |= g[i] == (gid_t)d->o.admin_gid;
	if (g != small)
		free(g);
	return yes;
}

/* Who a replayed entry runs as, exactly as its record says and no more:
 * through the gateway, its request's principal (authorised by its role),
 * if the entry names the gateway's uid; else its uid, an admin only if
 * that uid is one now. NULL: runs; else why it does not. */
static const char *replay_peer(const struct ofcd *d, const Ofc__V1__MutationQueue__Entry *e,
			       struct conn *c)
{
	c->gw = e->gateway;
	c->peer.uid = e->uid;
	c->peer.gid = e->gid;
	c->peer.pid = e->pid;
	if (c->gw && !d->o.gateway_socket_path)
		return "it came through a gateway, and this replica has no --gateway-socket";
	if (c->gw && e->uid != d->o.gateway_uid)
		return "it says it came through the gateway, but from a uid that is not "
		       "--gateway-uid";
	c->admin = !c->gw && uid_is_admin(d, e->uid);
	return NULL;
}

/* A new leader's tickets go on past every ticket the last ones gave
 * that the store shows (its event log's, its queue's), so that a ticket
 * names one request in the fabric's history, whichever leader numbered it
 * (the page and the logs key transactions by ticket). */
static void tickets_past(struct ofcd *d, const Ofc__V1__MutationQueue *q)
{
	uint64_t top = event_log_last_ticket(d);

	for (size_t i = 0; q && i < q->n_entries; i++)
		if (q->entries[i]->ticket > top)
			top = q->entries[i]->ticket;
	if (top <= d->loop->next_ticket)
		return;
	ofcd_log(d, OFCD_LOG_INFO, "tickets go on from %llu, the last leaders' highest",
		 (unsigned long long)top + 1);
	d->loop->next_ticket = top;
}

/* One request the last leader left, run here as if its client had sent
 * it (answered to nobody). where and how: where it was and why it is run
 * here, for the log ("in etcd's queue", "queued there and not started").
 * unkeyed: its
 * request_key left out (a staged change resumes: the key's outcome,
 * settled as committed when a stage was, must not answer for it). */
static void replay_one(struct ofcd *d, const Ofc__V1__MutationQueue__Entry *e, const char *where,
		       const char *how, bool unkeyed)
{
	Ofc__V1__Request *req = ofc__v1__request__unpack(NULL, e->request.len, e->request.data);
	struct conn *c;
	uint64_t before = d->loop->next_ticket;
	const char *why;

	if (!req) {
		ofcd_log(d, OFCD_LOG_ERR,
			 "the last leader's ticket %llu in %s is not a Request: not run",
			 (unsigned long long)e->ticket, where);
		return;
	}
	const uint8_t *raw = e->request.data;
	size_t len = e->request.len;
	uint8_t *own = NULL;

	if (unkeyed && req->request_key) {
		free(req->request_key); /* (unpacked with the default allocator) */
		req->request_key = NULL;
		len = ofc__v1__request__get_packed_size(req);
		own = xmalloc(len + 1);
		ofc__v1__request__pack(req, own);
		raw = own;
	}
	c = xcalloc(1, sizeof(*c));
	c->d = d;
	c->dead = c->replay = true;
	if ((why = replay_peer(d, e, c))) {
		d->loop->metrics.denied++;
		ofcd_log(d, OFCD_LOG_WARNING,
			 "the last leader's ticket %llu in %s (uid %u): not run: %s",
			 (unsigned long long)e->ticket, where, e->uid, why);
	} else {
		d->loop->chain.request(c, req, raw, len);
		if (d->loop->next_ticket != before)
			ofcd_log(d, OFCD_LOG_NOTICE,
				 "ticket %llu is the last leader's ticket %llu, %s: run here",
				 (unsigned long long)d->loop->next_ticket,
				 (unsigned long long)e->ticket, how);
	}
	ofc__v1__request__free_unpacked(req, NULL);
	free(own);
	free(c);
}

/* A staged reconfiguration the last leader (or this ofcd's last run) was
 * running (the store's FABRIC.staged): its request first, which resumes at
 * the stage the record is at (staged.c). */
void ofcd_resume_staged(struct ofcd *d)
{
	const char *who = d->clustered ? "the last leader's" : "ofcd's last run's";
	struct ofc_error err = {0};
	char *data = NULL;
	size_t len = 0;
	bool missing = false;
	Ofc__V1__StagedReconfigure *r = NULL;

	if (store_get(d->store, d->loop->cfg->f->name, STORE_STAGED, 4u << 20, &data, &len,
		      &missing, &err) < 0) {
		ofcd_log(d, OFCD_LOG_ERR,
			 "the staged reconfiguration's record cannot be read (%s): "
			 "not resumed",
			 err.msg);
		return;
	}
	if (!missing && (r = ofc__v1__staged_reconfigure__unpack(NULL, len, (uint8_t *)data)) &&
	    r->request && r->request->has_request) {
		ofcd_log(d, OFCD_LOG_NOTICE,
			 "%s staged reconfiguration to %.200s (%u of %u stages committed): "
			 "resumed here",
			 who, r->target ? r->target : "?", r->done, r->stages);
		replay_one(d, r->request, "the staged reconfiguration's record",
			   "its staged reconfiguration resumed", true);
	}
	if (r)
		ofc__v1__staged_reconfigure__free_unpacked(r, NULL);
	free(data);
}

/* After a takeover: the mutations the last leader queued and
 * had not started, from etcd's queue, queued here in their order as if
 * their clients had sent them here, with the rights their record gives
 * (replay_peer: a gateway's principal checked again, a uid's rights
 * looked up again), answered to nobody; then etcd's queue is this
 * leader's. */
void ofcd_replay_queue(struct ofcd *d)
{
	struct Ofc__V1__MutationQueue *q = queue_load(d);
	struct job *mine = queue_takeover_begin(d);

	outcomes_takeover(d); /* (what a resend queued here is answered from) */
	tickets_past(d, q);
	ofcd_resume_staged(d);
	for (size_t i = 0; q && i < q->n_entries; i++)
		replay_one(d, q->entries[i], "etcd's queue", "queued there and not started", false);
	if (q)
		ofc__v1__mutation_queue__free_unpacked(q, NULL);
	queue_takeover_end(d, mine);
}
