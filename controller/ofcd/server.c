/* ofcd's loop: opening the daemon (its limits, the store, the sockets),
 * running the loop (the workers, signals, the eventfd's notes, the sweep,
 * probe, device-news and lease timers, a replica's leadership events),
 * stopping and reloading, and closing (docs/control.md,
 * docs/ARCHITECTURE.md "ofcd"). The loop's other parts: conn_io.c and
 * connections.c (the clients), job_queue.c (the mutation queue and the
 * finished jobs), events.c (the watchers), cluster.c (replicas). */
#include "controller/ofcd/conn.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "proto/state.pb-c.h"

#define DRAIN_SECONDS  2.0 /* on stop: time to send what is queued */
#define DELTA_CHECK_MS 50  /* a change no event carried goes out within this */

/* ---- stopping and reloading ------------------------------------------------------------ */

static int64_t drain_timer(struct loop *l, uint64_t id, void *ctx)
{
	struct ofcd *d = ctx;
	bool pending = false;

	(void)id;
	/* The last change described and the last events written and sent
	 * before the loop ends (their own timers may come after this one). */
	state_delta_check(d);
	event_log_flush(d);
	for (size_t i = 0; i < d->loop->nconns; i++)
		pending |= !d->loop->conns[i]->dead && conn_unsent(d->loop->conns[i]) > 0;
	if (!pending || now_seconds() > d->loop->drain_deadline) {
		loop_stop(l);
		return LOOP_NOMORE;
	}
	return 20;
}

static void check_drain(struct ofcd *d)
{
	if (!d->loop->stopping || d->loop->running || d->loop->sched_pending ||
	    d->loop->drain_timer)
		return;
	d->loop->drain_deadline = now_seconds() + DRAIN_SECONDS;
	d->loop->drain_timer = loop_timer(d->loop->ev, 0, drain_timer, d);
}

static void begin_stop(struct ofcd *d)
{
	struct job *sq;

	if (d->loop->stopping)
		return;
	d->loop->stopping = true;
	atomic_store(&d->stop_begun, true);
	if (d->o.notify)
		d->o.notify(d->o.log_ctx, "STOPPING=1");
	if (d->loop->running && is_mutation(d->loop->running))
		ofcd_log(d, OFCD_LOG_NOTICE, "stopping after ticket %llu (%s %s) finishes",
			 (unsigned long long)d->loop->running->ticket,
			 job_kind_name(d->loop->running->kind), d->loop->running->target);
	else
		ofcd_log(d, OFCD_LOG_NOTICE, "stopping");
	/* No new clients; the ones connected still get their reads answered
	 * while the running transaction finishes. */
	for (int *fd = &d->loop->listen_fd; fd; fd = fd == &d->loop->listen_fd ? &d->loop->ro_fd
						     : fd == &d->loop->ro_fd   ? &d->loop->gw_fd
									       : NULL)
		if (*fd >= 0) {
			loop_del(d->loop->ev, *fd, LOOP_READ);
			close(*fd);
			*fd = -1;
		}
	while (d->loop->queue)
		cancel_job(d, d->loop->queue, "cancelled: ofcd is shutting down");
	/* Not waited for: plan_stop cancels the MCF, which stops within a
	 * pivot or so, and the detached thread ends on its own. */
	if (d->loop->planner)
		ofcd_log(d, OFCD_LOG_NOTICE,
			 "the workload's schedule, computing for %.0f s, is given up",
			 (double)(unix_ms() - d->loop->planner->since_ms) / 1000);
	ofcd_planner_stop(d);
	job_free(d->loop->planner_job);
	d->loop->planner_job = NULL;
	pthread_mutex_lock(&d->jobs.mu);
	sq = d->jobs.squeue;
	d->jobs.squeue = d->jobs.squeue_tail = NULL;
	pthread_mutex_unlock(&d->jobs.mu);
	while (sq) {
		struct job *next = sq->next;
		struct conn *c = conn_find(d, sq->conn_id);

		if (c)
			reply(c, sq->req_id, OFC__V1__STATUS__STATUS_CANCELLED,
			      "cancelled: ofcd is shutting down");
		d->loop->sched_pending--;
		sched_caller(d, sq, -1);
		job_free(sq);
		sq = next;
	}
	changed(d);
	check_drain(d);
}

static void queue_reload(struct ofcd *d)
{
	struct job *j;

	if (d->loop->stopping)
		return;
	if (d->clustered && !d->loop->leading) {
		ofcd_log(d, OFCD_LOG_NOTICE,
			 "reload asked of a follower: the leader applies its config (reload it); "
			 "this replica reads %s again when it takes over",
			 d->o.config_path);
		return;
	}
	for (j = d->loop->queue; j; j = j->next)
		if (j->kind == JOB_RELOAD)
			return; /* one waiting reload reads the newest file anyway */
	ofcd_log(d, OFCD_LOG_NOTICE, "reloading %s", d->o.config_path);
	j = xcalloc(1, sizeof(*j));
	j->kind = JOB_RELOAD;
	j->peer.pid = getpid();
	j->peer.uid = getuid();
	j->peer.gid = getgid();
	j->filename = xstrdup(d->o.config_path);
	j->target = xstrdup(d->o.config_path);
	enqueue(d, j, NULL);
}

static void cluster_event(struct ofcd *d, enum store_event ev)
{
	switch (ev) {
	case STORE_EV_LEADER:
		d->loop->elected_ms = unix_ms();
		ofcd_want_cluster_job(d, JOB_TAKEOVER);
		break;
	case STORE_EV_DEPOSED:
		cluster_deposed(d);
		ofcd_refuse_queue(d);
		ofcd_want_cluster_job(d, JOB_SYNC);
		break;
	case STORE_EV_CHANGED:
		atomic_store(&d->cl_change_posted, false);
		ofcd_want_cluster_job(d, JOB_SYNC);
		break;
	case STORE_EV_EVENTS:
		atomic_store(&d->cl_events_posted, false);
		event_log_pull(d);
		return; /* (nothing GetState shows) */
	case STORE_EV_SCHEDULE:
		/* The leader's answer for the state's schedule: shown if it is
		 * this state's (state_schedule_store.c). */
		state_schedule_check(d, false);
		return;
	default: /* (health: a deposed replica's reload that found etcd silent, again) */
		if (d->loop->cl_reload)
			ofcd_want_cluster_job(d, JOB_SYNC);
		break;
	}
	if (cluster_refresh(d) || ev != STORE_EV_HEALTH)
		changed(d);
	ofcd_maybe_start(d);
}

/* What GetState shows of the lease moves on by itself. */
static int64_t cluster_timer(struct loop *l, uint64_t id, void *ctx)
{
	struct ofcd *d = ctx;

	(void)l;
	(void)id;
	cluster_refresh(d);
	changed(d);
	if (cluster_takeover_retry(d, now_seconds()))
		ofcd_maybe_start(d);
	return 250;
}

/* A device's news at most this often causes a probe (a device that keeps
 * notifying is read every NEWS_GAP seconds, no more). */
#define NEWS_GAP 1.0

static void news_probe(struct ofcd *d);

static int64_t news_timer(struct loop *l, uint64_t id, void *ctx)
{
	struct ofcd *d = ctx;

	(void)l;
	(void)id;
	d->loop->news_timer = 0;
	news_probe(d);
	return LOOP_NOMORE;
}

/* Probe the devices for a device's news (a notification: a port's health
 * changed) when nothing else runs: the probe reads each device, and the
 * notifying one reads its health (device_cfg.news), so failing ports are
 * failures in effect as at every probe, without waiting for the next. */
static void news_probe(struct ofcd *d)
{
	double now = now_seconds(), at = d->loop->news_probe_at + NEWS_GAP;
	struct job *j;

	if (d->clustered && !d->loop->leading) {
		d->loop->news_pending = false; /* a replica reads devices only while it leads */
		return;
	}
	if (!d->loop->news_pending || d->loop->stopping || d->loop->running || d->loop->queue ||
	    d->loop->planner_job || d->loop->cluster_job)
		return; /* the job's end comes back here */
	if (now < at) {
		if (!d->loop->news_timer)
			d->loop->news_timer = loop_timer(
			    d->loop->ev, (int64_t)((at - now) * 1000) + 1, news_timer, d);
		return;
	}
	char from[sizeof(d->notes.news_from)];

	pthread_mutex_lock(&d->notes.mu);
	snprintf(from, sizeof(from), "%s", d->notes.news_from);
	pthread_mutex_unlock(&d->notes.mu);
	d->loop->news_pending = false;
	d->loop->news_probe_at = now;
	ofcd_log(d, OFCD_LOG_INFO,
		 "device news from %s (a notification, or a new subscription): probing", from);
	j = xcalloc(1, sizeof(*j));
	j->kind = JOB_PROBE;
	ofcd_hand_to_worker(d, j);
}

static void wake_event(struct loop *l, int fd, void *ctx, unsigned mask)
{
	struct ofcd *d = ctx;
	uint64_t v;
	struct note *n;

	(void)l;
	(void)mask;
	(void)!read(fd, &v, sizeof(v));
	if (atomic_exchange(&d->stop_req, 0))
		begin_stop(d);
	if (atomic_exchange(&d->reload_req, 0))
		queue_reload(d);
	if (atomic_exchange(&d->news_req, 0))
		d->loop->news_pending = true;
	pthread_mutex_lock(&d->notes.mu);
	n = d->notes.head;
	d->notes.head = d->notes.tail = NULL;
	pthread_mutex_unlock(&d->notes.mu);
	while (n) {
		struct note *next = n->next;

		if (n->job) {
			/* (a commit whose wiring the hosts confirm first, or its
			 * rollback: wiring_verify.c settles and answers them) */
			if (!wiring_verify_took(d, n->job))
				ofcd_job_done(d, n->job);
		} else if (n->stream)
			conn_stream_frame(d, n);
		else if (n->planner)
			ofcd_planner_landed(d, n->planner);
		else if (n->state_sched)
			state_schedule_landed(d, n->state_sched);
		else if (n->cluster)
			cluster_event(d, n->cluster);
		else if (n->snap || n->cfg)
			ofcd_published(d, n);
		else
			ofcd_on_event(d, n);
		n->job = NULL;	       /* ofcd_job_done freed it */
		n->planner = NULL;     /* ofcd_planner_landed took it */
		n->state_sched = NULL; /* ... state_schedule_landed */
		note_free(n);
		n = next;
	}
	news_probe(d);
	conn_reap(d);
	check_drain(d);
}

static void signal_event(struct loop *l, int fd, void *ctx, unsigned mask)
{
	struct ofcd *d = ctx;
	struct signalfd_siginfo si;

	(void)l;
	(void)mask;
	while (read(fd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		if (si.ssi_signo == SIGHUP) {
			queue_reload(d);
		} else {
			ofcd_log(d, OFCD_LOG_NOTICE, "%s from pid %u", strsignal((int)si.ssi_signo),
				 si.ssi_pid);
			begin_stop(d);
		}
	}
	conn_reap(d);
}

/* Disconnect clients that stalled: half a request, or replies unread, for
 * longer than the client timeout. */
/* A change of the state that no event carried, described
 * (state_delta.c): nothing to do while the state's version stands. */
static int64_t delta_timer(struct loop *l, uint64_t id, void *ctx)
{
	(void)l;
	(void)id;
	state_delta_check(ctx);
	return DELTA_CHECK_MS;
}

static int64_t sweep_timer(struct loop *l, uint64_t id, void *ctx)
{
	struct ofcd *d = ctx;
	double now = now_seconds(), t = d->o.client_timeout;

	(void)l;
	(void)id;
	for (size_t i = 0; i < d->loop->nconns; i++) {
		struct conn *c = d->loop->conns[i];

		if (c->dead)
			continue;
		if (c->in_since && now - c->in_since > t)
			conn_kill(c, OFCD_LOG_WARNING,
				  "half a request (%zu bytes) waited %.0f s for the rest",
				  c->in_len, now - c->in_since);
		else if (conn_unsent(c) && now - c->out_since > t)
			conn_kill(c, OFCD_LOG_WARNING, "%zu bytes of replies unread for %.0f s",
				  conn_unsent(c), now - c->out_since);
	}
	conn_reap(d);
	ofcd_log_flush(d);
	return t < 1 ? 100 : 1000;
}

static int64_t probe_timer(struct loop *l, uint64_t id, void *ctx)
{
	struct ofcd *d = ctx;

	(void)l;
	(void)id;
	/* (a replica reads devices only while it leads) */
	if (!d->loop->stopping && !d->loop->running && !d->loop->queue && !d->loop->planner_job &&
	    !d->loop->cluster_job && (!d->clustered || d->loop->leading)) {
		struct job *j = xcalloc(1, sizeof(*j));

		j->kind = JOB_PROBE;
		ofcd_hand_to_worker(d, j);
	}
	return (int64_t)(d->o.probe_interval * 1000);
}

/* ---- opening and running ------------------------------------------------------------------ */

int server_open(const struct ofcd_opts *o, const struct ofcd_chain *chain, struct ofcd **out,
		struct ofc_error *err)
{
	struct ofcd *d = xcalloc(1, sizeof(*d));

	*out = NULL;
	d->loop = xcalloc(1, sizeof(*d->loop));
	ofcd_worker_new(d);
	d->loop->chain = *chain;
	d->o = *o;
	link_damp_defaults(&d->o.link_damp);
	if (!d->o.max_frame)
		d->o.max_frame = OFCD_MAX_FRAME_DEFAULT;
	if (!d->o.max_clients)
		d->o.max_clients = OFCD_MAX_CLIENTS_DEFAULT;
	if (!d->o.max_clients_per_uid)
		d->o.max_clients_per_uid = OFCD_MAX_CLIENTS_PER_UID_DEFAULT;
	if (!d->o.max_request_memory)
		d->o.max_request_memory = mem_physical() / 4;
	if (!d->o.max_request_time)
		d->o.max_request_time = 60;
	ro_budget(&d->o);
	if (d->o.max_clients_per_uid > d->o.max_clients)
		d->o.max_clients_per_uid = d->o.max_clients;
	if (!d->o.max_ro_frame)
		d->o.max_ro_frame = OFCD_MAX_RO_FRAME_DEFAULT;
	if (d->o.max_ro_frame > d->o.max_frame)
		d->o.max_ro_frame = d->o.max_frame;
	/* One user can always send one largest frame and read its answer. */
	if (!d->o.max_buffer_per_uid)
		d->o.max_buffer_per_uid = 4 * (uint64_t)d->o.max_frame;
	if (d->o.max_buffer_per_uid < (uint64_t)d->o.max_frame + (1u << 20))
		d->o.max_buffer_per_uid = (uint64_t)d->o.max_frame + (1u << 20);
	if (d->o.client_timeout <= 0)
		d->o.client_timeout = 30;
	if (!d->o.socket_mode)
		d->o.socket_mode = 0660;
	if (!d->o.log_level)
		d->o.log_level = OFCD_LOG_NOTICE;
	d->loop->listen_fd = d->loop->ro_fd = d->loop->gw_fd = d->loop->sig_fd = -1;
	d->state_dir = ctl_state_dir(o->state_dir);
	d->store = store_open_files(d->state_dir);
	d->cred_dir =
	    xstrdup(o->credentials_dir && *o->credentials_dir ? o->credentials_dir
							      : OFCD_CREDENTIALS_DIR_DEFAULT);
	d->files.dirfd = -1;
	d->files.why = "ofcd --topology-dir";
	pthread_mutex_init(&d->jobs.mu, NULL);
	pthread_cond_init(&d->jobs.cond, NULL);
	pthread_mutex_init(&d->notes.mu, NULL);
	pthread_mutex_init(&d->devm.mu, NULL);
	pthread_mutex_init(&d->mjobs.mu, NULL);
	ahead_init(d);
	d->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (d->wake_fd < 0) {
		ofc_error_set(err, OFC_E_RUNTIME, "eventfd: %s", strerror(errno));
		goto fail;
	}
	if (!o->config_path || !o->socket_path) {
		ofc_error_set(err, OFC_E_USAGE, "ofcd needs a config and a socket");
		goto fail;
	}
	if (ofcd_allow_parse(d, err) < 0 || open_topology_dir(d, err) < 0)
		goto fail;
	if (!o->inherit_fds &&
	    (check_socket_dir(o->socket_path, "--socket", err) < 0 ||
	     (o->ro_socket_path && check_socket_dir(o->ro_socket_path, "--ro-socket", err) < 0)))
		goto fail;
	if (o->gateway_socket_path &&
	    check_socket_dir(o->gateway_socket_path, "--gateway-socket", err) < 0)
		goto fail;
	if (ofcd_start(d, &d->loop->snap, &d->loop->cfg, err) < 0)
		goto fail;
	if (o->inherit_fds) {
		/* Socket activation: the manager bound them (mode, group). */
		d->loop->listen_fd = o->main_fd;
		d->loop->ro_fd = o->ro_fd;
		fcntl(d->loop->listen_fd, F_SETFL, fcntl(d->loop->listen_fd, F_GETFL) | O_NONBLOCK);
		if (d->loop->ro_fd >= 0)
			fcntl(d->loop->ro_fd, F_SETFL, fcntl(d->loop->ro_fd, F_GETFL) | O_NONBLOCK);
	} else if (listen_unix(o->socket_path, d->o.socket_mode,
			       o->have_admin_group ? (int)o->admin_gid : -1, &d->loop->listen_fd,
			       err) < 0) {
		goto fail;
	} else {
		d->loop->bound_main = true;
	}
	if (o->ro_socket_path && !o->inherit_fds) {
		if (listen_unix(o->ro_socket_path, 0666, -1, &d->loop->ro_fd, err) < 0)
			goto fail;
		d->loop->bound_ro = true;
	}
	/* The gateway's socket, its uid's alone (and checked again
	 * for every connection by SO_PEERCRED). */
	if (o->gateway_socket_path) {
		if (listen_unix(o->gateway_socket_path, 0600, -1, &d->loop->gw_fd, err) < 0)
			goto fail;
		d->loop->bound_gw = true;
		/* root gives it to the gateway's user (0600); ofcd's own user,
		 * to --gateway-group (else the gateway user's own group), of
		 * which it is a member (0660). */
		bool gave =
		    geteuid() == 0
			? chown(o->gateway_socket_path, o->gateway_uid, (gid_t)-1) == 0
			: o->gateway_uid == geteuid() ||
			      (o->have_gateway_gid &&
			       chown(o->gateway_socket_path, (uid_t)-1, o->gateway_gid) == 0 &&
			       chmod(o->gateway_socket_path, 0660) == 0);
		if (!gave) {
			ofc_error_set(
			    err, OFC_E_RUNTIME,
			    "cannot give %s to the gateway (uid %u): %s; ofcd's user must "
			    "be root, the gateway's, or a member of --gateway-group "
			    "(make install's sysusers.d: 'm ofcd ofc-gwsock')",
			    o->gateway_socket_path, o->gateway_uid, strerror(errno));
			goto fail;
		}
		ofcd_log(d, OFCD_LOG_NOTICE, "gateway socket %s for uid %u", o->gateway_socket_path,
			 o->gateway_uid);
	}
	fd_limit(d);
	ofcd_log(d, OFCD_LOG_NOTICE, "serving fabric %s (config %s, state in %s) on %s%s%s",
		 d->loop->cfg->f->name, o->config_path, d->state_dir, o->socket_path,
		 o->ro_socket_path ? " and read-only on " : "",
		 o->ro_socket_path ? o->ro_socket_path : "");
	*out = d;
	return 0;
fail:
	ofcd_close(d);
	return -1;
}

int ofcd_run(struct ofcd *d, struct ofc_error *err)
{
	sigset_t set;
	int rc;

	d->loop->ev = loop_new((int)d->o.max_clients * 2 + 1024, err);
	if (!d->loop->ev)
		return -1;
	if (d->o.signals) {
		sigemptyset(&set);
		sigaddset(&set, SIGTERM);
		sigaddset(&set, SIGINT);
		sigaddset(&set, SIGHUP);
		/* Blocked before the workers start, so they inherit it and
		 * every signal arrives through the signalfd. */
		pthread_sigmask(SIG_BLOCK, &set, NULL);
		d->loop->sig_fd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
		if (d->loop->sig_fd < 0)
			return ofc_error_set(err, OFC_E_RUNTIME, "signalfd: %s", strerror(errno));
		loop_add(d->loop->ev, d->loop->sig_fd, LOOP_READ, signal_event, d);
	}
	conn_listeners(d, true);
	state_delta_start(d);
	loop_timer(d->loop->ev, DELTA_CHECK_MS, delta_timer, d);
	loop_add(d->loop->ev, d->wake_fd, LOOP_READ, wake_event, d);
	d->loop->sweep_timer = loop_timer(d->loop->ev, 1000, sweep_timer, d);
	if (d->o.probe_interval > 0)
		d->loop->probe_timer =
		    loop_timer(d->loop->ev, (int64_t)(d->o.probe_interval * 1000), probe_timer, d);
	if (!ahead_start(d))
		ofcd_log(d, OFCD_LOG_WARNING,
			 "cannot start a thread to plan partitions ahead: each is planned in its "
			 "turn");
	if (pthread_create(&d->jobs.mthread, NULL, ofcd_mutation_worker, d) != 0)
		return ofc_error_set(err, OFC_E_RUNTIME, "cannot start the worker threads");
	d->jobs.started = true;
	if (d->o.notify)
		d->o.notify(d->o.log_ctx, "READY=1");
	/* Read every device once now (the probe, reported in the log), rather
	 * than first after --probe-interval: a device ofcd cannot reach, or
	 * one changed while ofcd was down, shows at start. Probing off (0)
	 * means no device is read unasked, at start either. */
	if (d->o.probe_interval > 0 && !d->clustered) {
		struct job *j = xcalloc(1, sizeof(*j));

		j->kind = JOB_PROBE;
		j->startup = true;
		ofcd_hand_to_worker(d, j);
	}
	/* A staged change this ofcd's last run left between stages (killed,
	 * or a stage that failed) goes on from its stage, as a new leader's
	 * does after a failover (a replica's, once it leads). */
	if (!d->clustered)
		ofcd_resume_staged(d);
	/* A replica campaigns now: it reads its devices once it
	 * leads. */
	if (d->clustered) {
		if (cluster_start(d, err) < 0)
			return -1;
		d->loop->cluster_timer = loop_timer(d->loop->ev, 250, cluster_timer, d);
	}
	/* Ready before the workload's schedule: an all-to-all's is computed
	 * now, in the background. */
	ofcd_planner_check(d);
	/* A stop asked before the loop ran is in the eventfd already. */
	rc = loop_run(d->loop->ev, err);
	/* (what came after the drain's last turn: to the store, for the
	 * replicas' watchers) */
	state_delta_check(d);
	event_log_flush(d);
	pthread_mutex_lock(&d->jobs.mu);
	d->jobs.stop = true;
	pthread_cond_broadcast(&d->jobs.cond);
	pthread_mutex_unlock(&d->jobs.mu);
	pthread_join(d->jobs.mthread, NULL);
	for (int i = 0; i < SCHEDULE_WORKERS; i++)
		if (d->jobs.slive[i])
			pthread_join(d->jobs.sthread[i], NULL);
	d->jobs.started = false;
	ahead_stop(d);
	/* The running transaction has ended: a follower takes over at once
	 * instead of after the lease. */
	store_resign(d->store);
	ofcd_log(d, OFCD_LOG_NOTICE, "stopped: %llu requests answered, %llu with an error",
		 (unsigned long long)d->loop->requests, (unsigned long long)d->loop->errors);
	return rc;
}

void ofcd_stop(struct ofcd *d)
{
	uint64_t one = 1;

	atomic_store(&d->stop_req, 1);
	(void)!write(d->wake_fd, &one, sizeof(one));
}

void ofcd_reload(struct ofcd *d)
{
	uint64_t one = 1;

	atomic_store(&d->reload_req, 1);
	(void)!write(d->wake_fd, &one, sizeof(one));
}

void ofcd_close(struct ofcd *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->loop->nconns; i++) {
		close(d->loop->conns[i]->fd);
		free(d->loop->conns[i]->in);
		free(d->loop->conns[i]->out.b);
		free(d->loop->conns[i]);
	}
	free(d->loop->conns);
	while (d->loop->uids) {
		struct uid_use *u = d->loop->uids;

		d->loop->uids = u->next;
		free(u);
	}
	while (d->loop->queue) {
		struct job *j = d->loop->queue;

		d->loop->queue = j->next;
		job_free(j);
	}
	while (d->jobs.squeue) {
		struct job *j = d->jobs.squeue;

		d->jobs.squeue = j->next;
		job_free(j);
	}
	job_free(d->jobs.mjob);
	job_free(d->loop->planner_job);
	job_free(d->loop->cluster_job);
	event_log_free(d);
	state_delta_free(d);
	host_links_free(d);
	/* The detached threads let go of d: no note of theirs comes after */
	planner_abandon(d->loop->planner);
	state_schedule_stop(d);
	/* Streams still running free themselves (stream.c). */
	for (uint32_t i = 0; i < d->loop->nstreams; i++) {
		pthread_mutex_lock(&d->loop->streams[i]->mu);
		d->loop->streams[i]->orphan = d->loop->streams[i]->cancel = true;
		pthread_cond_signal(&d->loop->streams[i]->cond);
		pthread_mutex_unlock(&d->loop->streams[i]->mu);
	}
	free(d->loop->streams);
	for (uint32_t i = 0; i < d->loop->nstreams; i++)
		free(d->loop->stream_who[i]);
	free(d->loop->stream_who);
	for (uint32_t i = 0; i < d->loop->nsched_callers; i++)
		free(d->loop->sched_callers[i].who);
	free(d->loop->sched_callers);
	if (d->loop->listen_fd >= 0)
		close(d->loop->listen_fd);
	if (d->loop->ro_fd >= 0)
		close(d->loop->ro_fd);
	if (d->loop->bound_main)
		unlink(d->o.socket_path);
	if (d->loop->bound_ro)
		unlink(d->o.ro_socket_path);
	if (d->loop->gw_fd >= 0)
		close(d->loop->gw_fd);
	if (d->loop->bound_gw)
		unlink(d->o.gateway_socket_path);
	if (d->loop->sig_fd >= 0)
		close(d->loop->sig_fd);
	/* the devices first: their drivers' threads (notifications) wake the
	 * loop through wake_fd until they stop */
	ofcd_worker_close_devices(d);
	/* ... and the store's (its watch posts notes and wakes the loop until
	 * its threads are joined); then nothing else posts a note. */
	store_close(d->store);
	d->store = NULL;
	while (d->notes.head) {
		struct note *n = d->notes.head;

		d->notes.head = n->next;
		note_free(n);
	}
	if (d->wake_fd >= 0)
		close(d->wake_fd);
	for (size_t i = 0; i < ARRAY_SIZE(d->loop->cache); i++)
		free(d->loop->cache[i].buf);
	snapshot_free(d->loop->snap);
	fabcfg_unref(d->loop->cfg);
	ofcd_worker_free(d);
	loop_free(d->loop->ev);
	pthread_mutex_destroy(&d->jobs.mu);
	pthread_cond_destroy(&d->jobs.cond);
	pthread_mutex_destroy(&d->notes.mu);
	metrics_devices_free(&d->devm);
	pthread_mutex_destroy(&d->devm.mu);
	pthread_mutex_destroy(&d->mjobs.mu);
	free(d->mjobs.v);
	free(d->allow);
	free(d->cred_dir);
	if (d->files.dirfd >= 0)
		close(d->files.dirfd);
	free(d->topo_dir);
	free(d->state_dir);
	queue_forget(d);
	outcomes_free(&d->loop->outcomes);
	mpi_reports_free(d);
	ahead_free(d);
	free(d->loop);
	free(d);
}
