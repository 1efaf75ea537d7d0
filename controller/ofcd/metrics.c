/* ofcd's metrics (issue 36): counters, gauges and histograms with fixed
 * label sets, updated by the loop thread alone (jobs are counted when they
 * come back to it), written in Prometheus's text exposition format for
 * GetMetrics (ofc-gateway serves it at /metrics with its own TLS counters
 * appended). Gauges are read from what the loop already holds: the
 * snapshot's devices, the queue, the connections. */
#include "controller/ofcd/internal.h"

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
	switch (j->kind) {
	case JOB_SCHEDULE:
		m->schedules[ok ? 0 : 1]++;
		observe(&m->schedule_seconds, sched_bounds, seconds);
		break;
	case JOB_FAILURE:
		m->replans++;
		observe(&m->replan_seconds, txn_bounds, seconds);
		break;
	case JOB_APPLY_CONFIG:
	case JOB_RECONFIGURE:
	case JOB_RELOAD:
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

char *metrics_text(const struct ofcd *d, const uint32_t clients[4])
{
	const struct metrics *m = &d->metrics;
	const struct snapshot *s = d->snap;
	struct strbuf sb = STRBUF_INIT;

	head(&sb, "ofc_device_up", "gauge",
	     "1 when the device answered the last time ofcd talked to it, 0 when not, -1 "
	     "before it has");
	for (uint32_t i = 0; i < s->ndevs; i++) {
		sb_printf(&sb, "ofc_device_up{device=\"");
		label(&sb, s->devs[i]->name);
		sb_printf(&sb, "\"} %d\n",
			  s->devs[i]->has_reachable ? (s->devs[i]->reachable ? 1 : 0) : -1);
	}
	head(&sb, "ofc_device_entries", "gauge",
	     "cross-connects, MRR channels or links and routes the record holds for the device");
	for (uint32_t i = 0; i < s->ndevs; i++) {
		sb_printf(&sb, "ofc_device_entries{device=\"");
		label(&sb, s->devs[i]->name);
		sb_printf(&sb, "\"} %u\n", s->devs[i]->entries);
	}
	head(&sb, "ofc_device_port_alarms", "gauge",
	     "switch ports in use the device reports failing at its last read (FAILED, or "
	     "light under min_power)");
	for (uint32_t i = 0; i < s->ndevs; i++) {
		sb_printf(&sb, "ofc_device_port_alarms{device=\"");
		label(&sb, s->devs[i]->name);
		sb_printf(&sb, "\"} %zu\n", s->devs[i]->n_port_alarms);
	}
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
	head(&sb, "ofc_queue_length", "gauge", "mutations waiting");
	sb_printf(&sb, "ofc_queue_length %u\n", d->nqueue);
	head(&sb, "ofc_clients", "gauge", "connections by who they are");
	static const char *const roles[4] = {"admin", "read-only", "read-only-socket", "gateway"};
	for (int i = 0; i < 4; i++)
		sb_printf(&sb, "ofc_clients{role=\"%s\"} %u\n", roles[i], clients[i]);
	head(&sb, "ofc_requests_total", "counter", "requests answered");
	sb_printf(&sb, "ofc_requests_total %llu\n", (unsigned long long)d->requests);
	head(&sb, "ofc_request_errors_total", "counter", "requests answered with an error");
	sb_printf(&sb, "ofc_request_errors_total %llu\n", (unsigned long long)d->errors);
	head(&sb, "ofc_requests_denied_total", "counter", "requests refused by authorisation");
	sb_printf(&sb, "ofc_requests_denied_total %llu\n", (unsigned long long)m->denied);
	head(&sb, "ofc_failures", "gauge", "failed links, ports and hosts in effect");
	sb_printf(&sb, "ofc_failures %zu\n", s->state->n_failed);
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
	return sb_detach(&sb);
}
