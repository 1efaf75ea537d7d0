/* ofcd's metrics: counters, gauges and histograms with fixed
 * label sets, updated by the loop thread alone (jobs are counted when they
 * come back to it), written in Prometheus's text exposition format for
 * GetMetrics (ofc-gateway serves it at /metrics with its own TLS counters
 * appended). Gauges are read from what the loop already holds: the
 * snapshot's devices, the queue, the connections. */
#include "controller/ofcd/conn.h"

#include <stdlib.h>
#include <string.h>

/* Seconds: transactions take 0.1 s .. minutes, schedules 1 ms .. a minute. */
static const double txn_bounds[METRICS_BUCKETS] = {0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60};
static const double sched_bounds[METRICS_BUCKETS] = {0.001, 0.005, 0.01, 0.05, 0.1,
						     0.5,   1,	   5,	 15,   60};

static void observe(struct metrics_hist *h, const double *bounds, double v)
{
	for (int i = 0; i < METRICS_BUCKETS; i++)
		if (v <= bounds[i])
			h->bucket[i]++;
	h->count++;
	h->sum += v;
}

void metrics_job_done(struct metrics *m, const struct job *j, bool ok, double seconds)
{
	switch (job_table[j->kind].metric) {
	case JOB_METRIC_SCHEDULE:
		m->schedules[ok ? 0 : 1]++;
		observe(&m->schedule_seconds, sched_bounds, seconds);
		break;
	case JOB_METRIC_REPLAN:
		m->replans++;
		observe(&m->replan_seconds, txn_bounds, seconds);
		break;
	case JOB_METRIC_TXN:
		if (j->dry_run)
			break;
		if (j->outcome && strcmp(j->outcome, "committed") == 0)
			m->txn_committed++;
		else if (j->outcome && strcmp(j->outcome, "rolled-back") == 0)
			m->txn_rolled_back++;
		else
			m->txn_failed++;
		observe(&m->txn_seconds, txn_bounds, seconds);
		break;
	default:
		break;
	}
}

static struct dev_counts *dev_counts_of(struct dev_metrics *m, const char *name, bool add)
{
	for (uint32_t i = 0; i < m->n; i++)
		if (strcmp(m->v[i].name, name) == 0)
			return &m->v[i];
	if (!add || m->n >= METRICS_MAX_DEVICES)
		return NULL;
	GROW(m->v, m->cap, m->n + 1);
	m->v[m->n] = (struct dev_counts){.name = xstrdup(name)};
	return &m->v[m->n++];
}

void metrics_devices_take(struct ofcd *d, struct ctl *c)
{
	struct dev_metrics *m = &d->devm;

	if (!c)
		return;
	pthread_mutex_lock(&m->mu);
	for (uint32_t i = 0; i < c->ndevs; i++) {
		struct device_stats *st = &c->devs[i].dev.stats;
		struct dev_counts *k = dev_counts_of(
		    m, c->devs[i].cfg.name, st->commands || st->errors || st->last_contact);

		if (!k)
			continue;
		k->commands += st->commands;
		k->errors += st->errors;
		if (st->last_contact > k->last_contact)
			k->last_contact = st->last_contact;
		st->commands = st->errors = 0;
	}
	/* (the followers show these: store_leader_contacts) */
	uint32_t n = m->n < STORE_MAX_CONTACTS ? m->n : STORE_MAX_CONTACTS;
	struct store_contact *sc = xcalloc(n + 1, sizeof(*sc));
	for (uint32_t i = 0; i < n; i++) {
		snprintf(sc[i].device, sizeof(sc[i].device), "%s", m->v[i].name);
		sc[i].unix_ms = (uint64_t)(m->v[i].last_contact * 1000.0 + 0.5);
	}
	pthread_mutex_unlock(&m->mu);
	if (d->store)
		store_set_contacts(d->store, sc, n);
	free(sc);
}

/* A follower's devices it never talked to: the leader's last contact
 * with each, named (NULL: none known). */
static const struct store_contact *leader_contact(const struct store_contact *c, uint32_t n,
						  const char *dev)
{
	for (uint32_t i = 0; i < n; i++)
		if (strcmp(c[i].device, dev) == 0)
			return &c[i];
	return NULL;
}

void metrics_devices_show(struct ofcd *d, struct snapshot *s)
{
	struct dev_metrics *m = &d->devm;
	struct store_contact *lc = NULL;
	uint32_t nlc = 0;
	char *by = d->loop->contact_by;

	by[0] = 0;
	if (d->store && !d->loop->leading) {
		lc = xcalloc(STORE_MAX_CONTACTS, sizeof(*lc));
		nlc = store_leader_contacts(d->store, lc, STORE_MAX_CONTACTS, by);
	}
	pthread_mutex_lock(&m->mu);
	for (uint32_t i = 0; i < s->ndevs; i++) {
		Ofc__V1__DeviceState *o = s->devs[i];
		const struct dev_counts *k = dev_counts_of(m, o->name, false);

		o->has_commands = o->has_errors = k != NULL;
		o->commands = k ? k->commands : 0;
		o->errors = k ? k->errors : 0;
		o->has_last_contact_unix_ms = k && k->last_contact > 0;
		o->last_contact_unix_ms = k ? (uint64_t)(k->last_contact * 1000.0 + 0.5) : 0;
		o->last_contact_by = NULL;
		const struct store_contact *l = leader_contact(lc, nlc, o->name);
		if (!o->has_last_contact_unix_ms && l) {
			o->has_last_contact_unix_ms = 1;
			o->last_contact_unix_ms = l->unix_ms;
			o->last_contact_by = by;
		}
	}
	pthread_mutex_unlock(&m->mu);
	free(lc);
}

void metrics_devices_free(struct dev_metrics *m)
{
	for (uint32_t i = 0; i < m->n; i++)
		free(m->v[i].name);
	free(m->v);
	m->v = NULL;
	m->n = m->cap = 0;
}

static void hist(struct strbuf *sb, const char *name, const char *help,
		 const struct metrics_hist *h, const double *bounds)
{
	sb_printf(sb, "# HELP %s %s\n# TYPE %s histogram\n", name, help, name);
	for (int i = 0; i < METRICS_BUCKETS; i++)
		sb_printf(sb, "%s_bucket{le=\"%g\"} %llu\n", name, bounds[i],
			  (unsigned long long)h->bucket[i]);
	sb_printf(sb, "%s_bucket{le=\"+Inf\"} %llu\n%s_sum %.6f\n%s_count %llu\n", name,
		  (unsigned long long)h->count, name, h->sum, name, (unsigned long long)h->count);
}

static void head(struct strbuf *sb, const char *name, const char *type, const char *help)
{
	sb_printf(sb, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* A label value: names are plain (letters, digits, '-', '_', '.'), but a
 * quote or a backslash would break the line, so they are escaped. */
static void label(struct strbuf *sb, const char *v)
{
	for (; v && *v; v++) {
		if (*v == '"' || *v == '\\')
			sb_putc(sb, '\\');
		if (*v == '\n')
			sb_printf(sb, "\\n");
		else
			sb_putc(sb, *v);
	}
}

/* The devices' series, from the published snapshot and d->devm. */
static void devices_text(struct strbuf *sb, struct ofcd *d, const struct snapshot *s)
{
	head(sb, "ofc_device_up", "gauge",
	     "1 when the device answered the last time ofcd talked to it, 0 when not, -1 "
	     "before it has");
	for (uint32_t i = 0; i < s->ndevs; i++) {
		sb_printf(sb, "ofc_device_up{device=\"");
		label(sb, s->devs[i]->name);
		sb_printf(sb, "\"} %d\n",
			  s->devs[i]->has_reachable ? (s->devs[i]->reachable ? 1 : 0) : -1);
	}
	head(sb, "ofc_device_entries", "gauge",
	     "cross-connects, MRR channels or links and routes the record holds for the device");
	for (uint32_t i = 0; i < s->ndevs; i++) {
		sb_printf(sb, "ofc_device_entries{device=\"");
		label(sb, s->devs[i]->name);
		sb_printf(sb, "\"} %u\n", s->devs[i]->entries);
	}
	head(sb, "ofc_device_port_alarms", "gauge",
	     "switch ports in use the device reports failing at its last read (FAILED, or "
	     "light under min_power)");
	for (uint32_t i = 0; i < s->ndevs; i++) {
		sb_printf(sb, "ofc_device_port_alarms{device=\"");
		label(sb, s->devs[i]->name);
		sb_printf(sb, "\"} %zu\n", s->devs[i]->n_port_alarms);
	}
	head(sb, "ofc_device_notifications", "gauge",
	     "1 when ofcd is subscribed to the device's own notifications (as of its last "
	     "read), 0 when it polls the device");
	for (uint32_t i = 0; i < s->ndevs; i++) {
		sb_printf(sb, "ofc_device_notifications{device=\"");
		label(sb, s->devs[i]->name);
		sb_printf(sb, "\"} %d\n",
			  s->devs[i]->has_notifications && s->devs[i]->notifications ? 1 : 0);
	}
	struct dev_metrics *dm = &d->devm;
	static const char *const dev_series[3][3] = {
	    {"ofc_device_last_contact_timestamp_seconds", "gauge",
	     "when the device last answered a command (unix seconds; a refusal is an answer, no "
	     "connection or a timeout is not; 0: never)"},
	    {"ofc_device_commands_total", "counter",
	     "commands sent to the device (probes, transactions; retries and reads included)"},
	    {"ofc_device_errors_total", "counter",
	     "operations on the device that failed (a read, a change, a lock or a confirm the "
	     "device refused, answered wrongly or did not answer)"},
	};
	pthread_mutex_lock(&dm->mu);
	for (int k = 0; k < 3; k++) {
		head(sb, dev_series[k][0], dev_series[k][1], dev_series[k][2]);
		for (uint32_t i = 0; i < s->ndevs; i++) {
			const struct dev_counts *c = dev_counts_of(dm, s->devs[i]->name, false);

			sb_printf(sb, "%s{device=\"", dev_series[k][0]);
			label(sb, s->devs[i]->name);
			if (k == 0)
				sb_printf(sb, "\"} %.3f\n", c ? c->last_contact : 0);
			else
				sb_printf(sb, "\"} %llu\n",
					  (unsigned long long)(!c	? 0
							       : k == 1 ? c->commands
									: c->errors));
		}
	}
	pthread_mutex_unlock(&dm->mu);
}

/* ` {partition="P",collective="C"` of a kept report's collective (the
 * fabric's jobs: partition=""). */
static void mpi_labels(struct strbuf *sb, const char *name, const Ofc__V1__ReportMpi *r,
		       const Ofc__V1__MpiCollective *c)
{
	sb_printf(sb, "%s{partition=\"", name);
	label(sb, r->partition);
	sb_printf(sb, "\",collective=\"");
	label(sb, c->name);
	sb_putc(sb, '"');
}

/* The latest libofc-mpi report of each partition (mpi_report.c): gauges,
 * each report's own figures, summed over its ranks. */
static void mpi_text(struct strbuf *sb, const struct ofcd *d)
{
	const struct mpi_reports *m = &d->loop->mpi;
	static const char *const series[4][2] = {
	    {"ofc_mpi_calls", "calls of the collective in the partition's latest libofc-mpi "
			      "report, summed over its ranks"},
	    {"ofc_mpi_ofc_calls", "of those, the calls run by ofc's schedule"},
	    {"ofc_mpi_bytes", "the calls' data (each rank's buffer), summed over the ranks"},
	    {"ofc_mpi_sent_bytes", "what ofc's schedules sent in those calls"},
	};

	head(sb, "ofc_mpi_reports_total", "counter",
	     "libofc-mpi reports taken (ReportMpi), and refused");
	sb_printf(sb,
		  "ofc_mpi_reports_total{result=\"kept\"} %llu\n"
		  "ofc_mpi_reports_total{result=\"refused\"} %llu\n",
		  (unsigned long long)m->received, (unsigned long long)m->refused);
	uint64_t taken = atomic_load(&d->mjobs.waited_taken),
		 grace = atomic_load(&d->mjobs.waited_grace);

	head(sb, "ofc_drain_jobs_waited_total", "counter",
	     "running jobs a drain or a stage waited for: that said they took its schedule, "
	     "and that its grace covered");
	sb_printf(sb,
		  "ofc_drain_jobs_waited_total{outcome=\"taken\"} %llu\n"
		  "ofc_drain_jobs_waited_total{outcome=\"grace\"} %llu\n",
		  (unsigned long long)taken, (unsigned long long)grace);
	for (int k = 0; k < 4; k++) {
		head(sb, series[k][0], "gauge", series[k][1]);
		for (uint32_t i = 0; i < m->n; i++)
			for (size_t j = 0; j < m->v[i]->n_collectives; j++) {
				const Ofc__V1__MpiCollective *c = m->v[i]->collectives[j];
				uint64_t v = k == 0   ? c->calls
					     : k == 1 ? c->ofc_calls
					     : k == 2 ? c->bytes
						      : c->sent_bytes;

				mpi_labels(sb, series[k][0], m->v[i], c);
				sb_printf(sb, "} %llu\n", (unsigned long long)v);
			}
	}
	head(sb, "ofc_mpi_fallbacks", "gauge",
	     "calls of the collective in the partition's latest libofc-mpi report that ran the "
	     "MPI's own, by reason");
	for (uint32_t i = 0; i < m->n; i++)
		for (size_t j = 0; j < m->v[i]->n_collectives; j++) {
			const Ofc__V1__MpiCollective *c = m->v[i]->collectives[j];

			for (size_t f = 0; f < c->n_fallbacks; f++) {
				mpi_labels(sb, "ofc_mpi_fallbacks", m->v[i], c);
				sb_printf(sb, ",reason=\"");
				label(sb, c->fallbacks[f]->reason);
				sb_printf(sb, "\"} %llu\n",
					  (unsigned long long)c->fallbacks[f]->calls);
			}
		}
}

/* A replica on etcd (d->loop->cl, the loop's last view). */
static void cluster_text(struct strbuf *sb, const struct ofcd *d)
{
	if (d->clustered) {
		uint32_t up = 0;

		for (uint32_t i = 0; i < d->loop->cl.nmembers; i++)
			up += d->loop->cl.members[i].reachable;
		head(sb, "ofc_cluster_leader", "gauge",
		     "1 when this replica leads, 0 when it follows");
		sb_printf(sb, "ofc_cluster_leader %d\n", d->loop->cl.leading ? 1 : 0);
		head(sb, "ofc_cluster_epoch", "gauge",
		     "the leader's epoch (the elections won so far, one a won campaign; 0: no "
		     "leader now)");
		sb_printf(sb, "ofc_cluster_epoch %llu\n", (unsigned long long)d->loop->cl.epoch);
		head(sb, "ofc_cluster_lease_left_seconds", "gauge",
		     "seconds this replica's lease on etcd surely has left");
		sb_printf(sb, "ofc_cluster_lease_left_seconds %.3f\n", d->loop->cl.lease_left);
		head(sb, "ofc_cluster_stale", "gauge",
		     "1 when what this replica shows may be behind etcd (unreachable, no quorum)");
		sb_printf(sb, "ofc_cluster_stale %d\n", d->loop->cl.fresh ? 0 : 1);
		head(sb, "ofc_cluster_etcd_members_up", "gauge",
		     "etcd members that answered lately");
		sb_printf(sb, "ofc_cluster_etcd_members_up %u\n", up);
	}
}

/* Hosts' links as their agents report them (host_links.c). */
static void host_links_text(struct strbuf *sb, const struct ofcd *d)
{
	uint32_t held = 0, suppressed = 0;

	for (uint32_t i = 0; i < d->loop->nhosts_seen; i++)
		for (uint32_t p = 0; p < d->loop->hosts_seen[i].nports; p++) {
			held += d->loop->hosts_seen[i].ports[p].damp.failed;
			suppressed += d->loop->hosts_seen[i].ports[p].damp.suppressed;
		}
	head(sb, "ofc_host_link_flaps_total", "counter",
	     "hosts' reported links going down after they were up");
	sb_printf(sb, "ofc_host_link_flaps_total %llu\n",
		  (unsigned long long)d->loop->metrics.host_link_flaps);
	head(sb, "ofc_host_links_failed", "gauge",
	     "host ports failed because their host reported the link down (or damped)");
	sb_printf(sb, "ofc_host_links_failed %u\n", held);
	head(sb, "ofc_host_links_suppressed", "gauge", "host ports held failed by flap damping");
	sb_printf(sb, "ofc_host_links_suppressed %u\n", suppressed);
	head(sb, "ofc_hosts_reporting", "gauge", "hosts whose agent has reported its links");
	sb_printf(sb, "ofc_hosts_reporting %u\n", d->loop->nhosts_seen);
	uint32_t w[WIRING_NVERDICTS];
	double age;
	static const char *const words[WIRING_NVERDICTS] = {"confirmed", "miswired", "dark",
							    "not-seen"};
	host_links_wiring(d, w, &age);
	head(sb, "ofc_wiring_links", "gauge",
	     "the record's circuits by what the hosts' LLDP hears at their ends");
	for (int v = 0; v < WIRING_NVERDICTS; v++)
		sb_printf(sb, "ofc_wiring_links{verdict=\"%s\"} %u\n", words[v], w[v]);
	if (age >= 0) {
		head(sb, "ofc_wiring_report_age_seconds", "gauge",
		     "age of the oldest host report the wiring verdict rests on");
		sb_printf(sb, "ofc_wiring_report_age_seconds %.1f\n", age);
	}
}

char *metrics_text(struct ofcd *d, const uint32_t clients[4])
{
	const struct metrics *m = &d->loop->metrics;
	const struct snapshot *s = d->loop->snap;
	struct strbuf sb = STRBUF_INIT;

	devices_text(&sb, d, s);
	head(&sb, "ofc_device_lost_total", "counter", "times a device was found unreachable");
	sb_printf(&sb, "ofc_device_lost_total %llu\n", (unsigned long long)m->devices_lost);
	head(&sb, "ofc_config_generation", "gauge",
	     "the record's generation (0: nothing committed)");
	sb_printf(&sb, "ofc_config_generation %llu\n",
		  (unsigned long long)s->state->config_generation);
	head(&sb, "ofc_transactions_total", "counter", "transactions by how they ended");
	sb_printf(&sb,
		  "ofc_transactions_total{outcome=\"committed\"} %llu\n"
		  "ofc_transactions_total{outcome=\"rolled-back\"} %llu\n"
		  "ofc_transactions_total{outcome=\"failed\"} %llu\n",
		  (unsigned long long)m->txn_committed, (unsigned long long)m->txn_rolled_back,
		  (unsigned long long)m->txn_failed);
	hist(&sb, "ofc_transaction_duration_seconds", "a transaction from its start to its end",
	     &m->txn_seconds, txn_bounds);
	head(&sb, "ofc_streams_refused_total", "counter",
	     "streamed schedules refused to public callers (BUSY), by the share that was full: "
	     "the public callers' together, or the caller's own");
	sb_printf(&sb,
		  "ofc_streams_refused_total{share=\"public\"} %llu\n"
		  "ofc_streams_refused_total{share=\"caller\"} %llu\n",
		  (unsigned long long)d->loop->streams_refused[0],
		  (unsigned long long)d->loop->streams_refused[1]);
	head(&sb, "ofc_mutations_refused_total", "counter",
	     "mutations refused to tenants (BUSY), by the share that was full: the tenants' "
	     "together, or the tenant's own");
	sb_printf(&sb,
		  "ofc_mutations_refused_total{share=\"public\"} %llu\n"
		  "ofc_mutations_refused_total{share=\"principal\"} %llu\n",
		  (unsigned long long)d->loop->mutations_refused[0],
		  (unsigned long long)d->loop->mutations_refused[1]);
	head(&sb, "ofc_queue_length", "gauge", "mutations waiting");
	sb_printf(&sb, "ofc_queue_length %u\n", d->loop->nqueue);
	head(&sb, "ofc_clients", "gauge", "connections by who they are");
	static const char *const roles[4] = {"admin", "read-only", "read-only-socket", "gateway"};
	for (int i = 0; i < 4; i++)
		sb_printf(&sb, "ofc_clients{role=\"%s\"} %u\n", roles[i], clients[i]);
	head(&sb, "ofc_requests_total", "counter", "requests answered");
	sb_printf(&sb, "ofc_requests_total %llu\n", (unsigned long long)d->loop->requests);
	head(&sb, "ofc_request_errors_total", "counter", "requests answered with an error");
	sb_printf(&sb, "ofc_request_errors_total %llu\n", (unsigned long long)d->loop->errors);
	head(&sb, "ofc_requests_denied_total", "counter", "requests refused by authorisation");
	sb_printf(&sb, "ofc_requests_denied_total %llu\n", (unsigned long long)m->denied);
	head(&sb, "ofc_requests_received_total", "counter",
	     "requests decoded, by the request table's kind");
	for (size_t i = 0; i < API_NKINDS; i++)
		sb_printf(&sb, "ofc_requests_received_total{request=\"%s\"} %llu\n",
			  api_requests[i].word, (unsigned long long)m->received[i]);
	/* What every replica shows alike (views.c): the fabric at its target,
	 * the held partitions and each one's own. */
	head(&sb, "ofc_at_target", "gauge",
	     "1 when the devices hold the fabric's target outside the held partitions' ports "
	     "(State.at_target), else 0");
	sb_printf(&sb, "ofc_at_target %d\n", s->state->at_target ? 1 : 0);
	head(&sb, "ofc_held_partitions", "gauge", "partitions held for their owners (Slurm jobs)");
	sb_printf(&sb, "ofc_held_partitions %zu\n", s->state->n_held);
	head(&sb, "ofc_held_partition_at_target", "gauge",
	     "1 when a held partition's hosts' circuits are its topology's, else 0");
	for (size_t i = 0; i < s->state->n_held; i++) {
		sb_printf(&sb, "ofc_held_partition_at_target{partition=\"");
		label(&sb, s->state->held[i]->name);
		sb_printf(&sb, "\"} %d\n", s->state->held[i]->at_target ? 1 : 0);
	}
	head(&sb, "ofc_failures", "gauge", "failed links, ports and hosts in effect");
	sb_printf(&sb, "ofc_failures %zu\n", s->state->n_failed);
	host_links_text(&sb, d);
	head(&sb, "ofc_replans_total", "counter",
	     "re-plans after failures were reported or restored");
	sb_printf(&sb, "ofc_replans_total %llu\n", (unsigned long long)m->replans);
	hist(&sb, "ofc_replan_duration_seconds", "a failure report's re-plan, queued to answered",
	     &m->replan_seconds, txn_bounds);
	head(&sb, "ofc_schedule_requests_total", "counter", "GetSchedule requests computed");
	sb_printf(&sb,
		  "ofc_schedule_requests_total{result=\"ok\"} %llu\n"
		  "ofc_schedule_requests_total{result=\"error\"} %llu\n",
		  (unsigned long long)m->schedules[0], (unsigned long long)m->schedules[1]);
	hist(&sb, "ofc_schedule_duration_seconds", "a GetSchedule computed and answered",
	     &m->schedule_seconds, sched_bounds);
	mpi_text(&sb, d);
	cluster_text(&sb, d);
	return sb_detach(&sb);
}
