/* `ofc --socket PATH status`: ofcd's State printed for people (the
 * cluster's view, the topology and schedule, devices, partitions, queue,
 * transactions and failures), as cmd_remote.c's status asks it. */
#include "controller/cli/internal.h"
#include "proto/control.pb-c.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

/* A string a message may lack (a tenant's view leaves fields out). */
#define OR_DASH(p) ((p) ? (p) : "-")
/* a principal other than the socket's uid:N, which uid and pid say ("": none) */
#define GATEWAY_PRINCIPAL(p) ((p) && strncmp((p), "uid:", 4) != 0 ? (p) : "")

/* A replica of ofcd on etcd, and the cluster as it sees it. */
static void print_cluster(const Ofc__V1__Cluster *c, bool https)
{
	const Ofc__V1__Leader *l = c->leader;
	/* where this client reaches the leader: through a gateway, its URL */
	const char *at = !l ? NULL : https ? l->url : l->socket;

	printf("  replica    %s, %s", c->name && *c->name ? c->name : "?",
	       c->role && *c->role ? c->role : "?");
	if (l)
		printf("; leader %s, epoch %llu%s%s", l->name ? l->name : "?",
		       (unsigned long long)l->epoch, at && *at ? ", at " : "", at && *at ? at : "");
	else
		printf("; no leader now (an election is under way)");
	printf("\n  lease      %.0f s, %.1f s left\n", c->lease_ttl_seconds, c->lease_left_seconds);
	printf("  etcd      ");
	for (size_t i = 0; i < c->n_members; i++) {
		const char *url = c->members[i]->url ? c->members[i]->url : "";

		/* (HOST:PORT: whether it is TLS is --cluster's business) */
		if (strncmp(url, "http://", 7) == 0)
			url += 7;
		else if (strncmp(url, "https://", 8) == 0)
			url += 8;
		printf("%s %s (%s) %s%s", i ? "," : "", OR_DASH(c->members[i]->name), url,
		       c->members[i]->reachable ? "up" : "DOWN",
		       c->members[i]->leader ? ", raft leader" : "");
	}
	printf("\n");
	if (c->stale) {
		char when[64];

		/* before its first answer there is no "ago" to say */
		if (c->has_since_contact_seconds && c->since_contact_seconds >= 0)
			snprintf(when, sizeof(when), "etcd last answered %.1f s ago",
				 c->since_contact_seconds);
		else
			snprintf(when, sizeof(when), "etcd has not answered yet");
		printf("  STALE      %s (%s): what is shown may be behind%s\n",
		       c->stale_reason ? c->stale_reason : "etcd does not answer", when,
		       c->role && strcmp(c->role, "leader") == 0 ? "; mutations are refused" : "");
	}
}

/* The drained switch ports: a line for each run of ports of one switch
 * drained by the same request (switch, since and by alike). */
static void print_drained(const Ofc__V1__State *s)
{
	for (size_t i = 0, k; i < s->n_drained; i = k) {
		const Ofc__V1__DrainedPort *a = s->drained[i];
		uint64_t now = unix_ms(), t = a->since_unix_ms;
		time_t when = (time_t)(t / 1000);
		struct tm tm;
		char iso[32] = "?";

		if (gmtime_r(&when, &tm))
			strftime(iso, sizeof(iso), "%Y-%m-%dT%H:%M:%SZ", &tm);
		printf("  drained    %s ports ", OR_DASH(a->switch_name));
		for (k = i; k < s->n_drained; k++) {
			const Ofc__V1__DrainedPort *b = s->drained[k];

			if (strcmp(OR_DASH(b->switch_name), OR_DASH(a->switch_name)) ||
			    strcmp(OR_DASH(b->by), OR_DASH(a->by)) ||
			    b->since_unix_ms != a->since_unix_ms)
				break;
			printf("%s%u", k > i ? "," : "", b->port);
		}
		printf(" (%zu), since %s (%.0f s ago), by %s: out of service, no circuits\n", k - i,
		       iso, now > t ? (double)(now - t) / 1000 : 0.0, OR_DASH(a->by));
	}
}

/* The latest libofc-mpi report of each partition: a line per report, one
 * per collective it saw. */
/* The wiring's counts and the age they rest on, after PREFIX. */
static void wiring_counts(const char *prefix, const Ofc__V1__Wiring *w)
{
	printf("%s%u confirmed, %u miswired, %u dark, %u not seen; %u host%s reporting", prefix,
	       w->confirmed, w->miswired, w->dark, w->not_seen, w->hosts_reporting,
	       w->hosts_reporting == 1 ? "" : "s");
	if (w->has_oldest_report_age_seconds)
		printf(", the oldest report %.1f s old", w->oldest_report_age_seconds);
	printf("\n");
}

/* What the hosts' agents hear against the record (none reporting: no
 * line, an ofcd without agents reads as before), each miswired link
 * named. */
static void print_wiring(const Ofc__V1__State *s)
{
	const Ofc__V1__Wiring *w = s->wiring;
	size_t shown = 0;

	if (w && w->follower) {
		print_wiring_leader("  wiring     ", w);
		return;
	}
	if (!w || !w->hosts_reporting)
		return;
	wiring_counts("  wiring     ", w);
	for (size_t i = 0; i < w->n_links; i++) {
		const Ofc__V1__Wiring__Link *k = w->links[i];

		if (!k->verdict || strcmp(k->verdict, "miswired") != 0)
			continue;
		if (shown++ < 8)
			printf("             %s\n", OR_DASH(k->detail));
	}
	if (shown > 8)
		printf("             and %zu more miswired ('ofc wiring' lists them)\n", shown - 8);
}

void print_wiring_leader(const char *prefix, const Ofc__V1__Wiring *w)
{
	const Ofc__V1__Leader *l = w->leader;

	if (!l) {
		printf("%sthe leader's, and none leads now (an election is under way): this "
		       "replica follows and hears no host's agent\n",
		       prefix);
		return;
	}
	printf("%sthe leader's: the hosts' agents report to %s, which has the verdict (this "
	       "replica follows and hears none)",
	       prefix, OR_DASH(l->name));
	if (l->socket)
		printf("; ofc --socket %s wiring", l->socket);
	if (l->url)
		printf("; its page %s/ui/", l->url);
	printf("\n");
}

void print_wiring_links(const Ofc__V1__Wiring *w)
{
	if (w->follower) {
		print_wiring_leader("wiring: ", w);
		return;
	}
	wiring_counts("wiring: ", w);
	for (size_t i = 0; i < w->n_links; i++) {
		const Ofc__V1__Wiring__Link *k = w->links[i];

		printf("  %s -> %s  %s", OR_DASH(k->src), OR_DASH(k->dst), OR_DASH(k->verdict));
		if (k->detail)
			printf(": %s", k->detail);
		if (k->has_age_seconds)
			printf(" (reported %.1f s ago)", k->age_seconds);
		printf("\n");
	}
}

static void print_mpi_reports(const Ofc__V1__State *s)
{
	for (size_t i = 0; i < s->n_mpi_reports; i++) {
		const Ofc__V1__ReportMpi *r = s->mpi_reports[i];
		time_t t = (time_t)(r->received_unix_ms / 1000);
		char when[32] = "?";
		struct tm tm;

		if (r->has_received_unix_ms && gmtime_r(&t, &tm))
			strftime(when, sizeof(when), "%H:%M:%S UTC", &tm);
		printf("  mpi report %s%s: %u ranks, %s, from %s at %s, %llu replan%s\n",
		       r->partition && *r->partition ? "partition " : "the fabric",
		       r->partition && *r->partition ? r->partition : "", r->ranks,
		       OR_DASH(r->mapping), OR_DASH(r->reporter), when,
		       (unsigned long long)r->replans, r->replans == 1 ? "" : "s");
		for (size_t k = 0; k < r->n_collectives; k++) {
			const Ofc__V1__MpiCollective *c = r->collectives[k];

			printf("             %-25s %llu calls, %llu by ofc's schedule, %.3f MB",
			       OR_DASH(c->name), (unsigned long long)c->calls,
			       (unsigned long long)c->ofc_calls, (double)c->bytes / 1e6);
			for (size_t f = 0; f < c->n_fallbacks; f++)
				printf("%s%s %llu",
				       f ? ", " : "; fell back: ", OR_DASH(c->fallbacks[f]->reason),
				       (unsigned long long)c->fallbacks[f]->calls);
			printf("\n");
		}
	}
}

void print_state(const Ofc__V1__State *s, bool https)
{
	/* A tenant through the gateway is not shown the config's path, nor
	 * other fields its policy hides: what is absent is left out. */
	printf("fabric %s", s->fabric_name ? s->fabric_name : "?");
	if (s->config_file)
		printf(" (config %s)", s->config_file);
	printf(", generation %llu%s", (unsigned long long)s->config_generation,
	       s->config_generation ? "" : " (nothing committed yet)");
	/* a replica's commit: which of them made it */
	if (s->committed_by)
		printf(", committed by replica %s (epoch %llu)", s->committed_by,
		       (unsigned long long)s->committed_epoch);
	/* who asked for it (the audit: docs/security.md) */
	if (s->committed_principal)
		printf(", asked for by %s", s->committed_principal);
	if (s->partition)
		printf(", last by partition %s", s->partition);
	printf("\n");
	/* A tenant's state is its partitions' part: the fabric's topology,
	 * target and devices' records are not in it, so nothing is said of
	 * them (not "none recorded", "NOT at target"). */
	if (s->tenant)
		printf("  tenant     %s: its partitions alone (the fabric's topology, target and "
		       "devices are the operator's)\n",
		       s->tenant);
	if (!s->tenant && s->topology) {
		printf("  topology   %s: %u nodes, degree %u", OR_DASH(s->topology->spec),
		       s->topology->nodes, s->topology->degree);
		if (s->topology->has_diameter)
			printf(", diameter %u", s->topology->diameter);
		printf("\n");
	} else if (!s->tenant) {
		printf("  topology   none recorded\n");
	}
	if (!s->tenant)
		printf("  target     %s, %s%s%s\n", s->target_topology ? s->target_topology : "-",
		       s->at_target ? "at target" : "NOT at target",
		       !s->at_target && s->at_target_detail ? ": " : "",
		       !s->at_target && s->at_target_detail ? s->at_target_detail : "");
	if (s->cluster)
		print_cluster(s->cluster, https);
	if (s->schedule)
		printf("  schedule   %s %s: %u steps, %.6g us (lower bound %.6g us), verified "
		       "%s%s%s%s%s\n",
		       OR_DASH(s->schedule->algorithm), OR_DASH(s->schedule->collective),
		       s->schedule->num_steps, s->schedule->time_us, s->schedule->lower_bound_us,
		       s->schedule->verified ? "yes" : "NO", s->schedule->verify_error ? ": " : "",
		       s->schedule->verify_error ? s->schedule->verify_error : "",
		       s->schedule->reduced ? ", symmetry-reduced x " : "",
		       s->schedule->reduced ? OR_DASH(s->schedule->reduced->name) : "");
	if (s->schedule_error)
		printf("  schedule   none: %s\n", s->schedule_error);
	if (s->has_schedule_computing_since_unix_ms) {
		uint64_t now = unix_ms(), t = s->schedule_computing_since_unix_ms;

		printf("  schedule   computing, started %.0f s ago (a watch sees it land)\n",
		       now > t ? (double)(now - t) / 1000 : 0.0);
	}
	if (s->n_failed)
		print_status_items("failed", s->failed, s->n_failed, true, NULL,
				   "schedules run without them");
	print_drained(s);
	if (s->n_moved)
		print_status_items("moved", s->moved, s->n_moved, false, "ports",
				   "circuits re-wired onto spare ports; kept after a restore: "
				   "ApplyConfig or a reload puts them back");
	/* partitions made at run time, held for their owners, each
	 * with its own topology, target and schedule */
	for (size_t i = 0; i < s->n_held; i++) {
		const Ofc__V1__HeldPartition *h = s->held[i];

		printf("  held       %s: %s on %zu host%s, %s (transaction %llu, %u operations)\n",
		       OR_DASH(h->name), OR_DASH(h->topology), h->n_hosts,
		       h->n_hosts == 1 ? "" : "s",
		       !h->has_at_target ? "target unknown"
		       : h->at_target	 ? "at target"
					 : "NOT at target",
		       (unsigned long long)h->transaction, h->operations);
		if (h->schedule)
			printf("             schedule %s %s: %u steps, %.6g us, verified %s\n",
			       OR_DASH(h->schedule->algorithm), OR_DASH(h->schedule->collective),
			       h->schedule->num_steps, h->schedule->time_us,
			       h->schedule->verified ? "yes" : "NO");
	}
	if (s->tenant && !s->n_held)
		printf("  held       none of %s's\n", s->tenant);
	print_mpi_reports(s);
	print_wiring(s);
	if (s->transaction)
		printf("  transaction %llu: %s (%s %s, ticket %llu%s%s)\n",
		       (unsigned long long)s->transaction->id,
		       s->transaction->state ? s->transaction->state : "?",
		       s->transaction->kind ? s->transaction->kind : "-",
		       s->transaction->target ? s->transaction->target : "-",
		       (unsigned long long)s->transaction->ticket,
		       s->transaction->principal ? ", asked for by " : "",
		       s->transaction->principal ? s->transaction->principal : "");
	else
		printf("  no transaction in progress\n");
	for (size_t i = 0; i < s->n_queue; i++)
		printf("  queued     ticket %llu: %s %s (%s%suid %u pid %u)\n",
		       (unsigned long long)s->queue[i]->ticket, OR_DASH(s->queue[i]->kind),
		       OR_DASH(s->queue[i]->target), GATEWAY_PRINCIPAL(s->queue[i]->principal),
		       *GATEWAY_PRINCIPAL(s->queue[i]->principal) ? ", " : "",
		       s->queue[i]->peer_uid, s->queue[i]->peer_pid);
	for (size_t i = 0; i < s->n_devices; i++) {
		const Ofc__V1__DeviceState *d = s->devices[i];

		if (s->tenant) {
			printf("  %s (%s): %zu circuit%s between its hosts%s%s%s\n",
			       OR_DASH(d->name), OR_DASH(d->kind), d->n_circuits,
			       d->n_circuits == 1 ? "" : "s",
			       d->has_reachable ? (d->reachable ? ", reachable" : ", UNREACHABLE")
						: "",
			       d->error ? ": " : "", d->error ? d->error : "");
			continue;
		}
		printf("  %s (%s %s%s%s): %u entr%s recorded, %s", OR_DASH(d->name),
		       OR_DASH(d->kind), OR_DASH(d->driver), d->address ? " at " : "",
		       d->address ? d->address : "", d->entries, d->entries == 1 ? "y" : "ies",
		       d->at_target ? "at target" : "not at target");
		if (d->has_reachable)
			printf(", %s", d->reachable ? "reachable" : "UNREACHABLE");
		if (d->has_in_sync)
			printf(", %s", d->in_sync ? "in sync" : "DIFFERS from the record");
		if (d->error)
			printf(": %s", d->error);
		printf("\n");
		print_port_alarms((const Ofc__V1__PortAlarm *const *)d->port_alarms,
				  d->n_port_alarms);
	}
}
