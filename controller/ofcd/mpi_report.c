/* A job's libofc-mpi report (ReportMpi, docs/mpi.md "The report"): what
 * the job measured per collective (calls, calls run by ofc's schedule,
 * fallbacks by reason, bytes) and the bytes each rank sent each other,
 * sent by its rank 0 at MPI_Finalize for the job's partition. Checked
 * here, kept on the loop thread (the latest per partition, the oldest
 * dropped past MPI_REPORTS_MAX), shown in GetState (State.mpi_reports,
 * a tenant's own partitions' in its state) and as metrics (metrics.c).
 *
 * Kept by the replica that takes it, the leader (the row's API_LEADER: a
 * follower answers NOT_LEADER naming it), and not in the store: a report
 * is a finished job's measurement, not the fabric's state, written once
 * per job at its end; putting it in etcd would make every job's end a
 * write of up to MPI_REPORT_MAX_BYTES to the record followers sync, for
 * figures a restart may lose. So a follower's state shows none, and a new
 * leader starts with none. */
#include "controller/ofcd/conn.h"

#include <stdlib.h>
#include <string.h>

#define MPI_REPORT_MAX_BYTES (256u << 10) /* a packed report (256 ranks' matrix fits) */
#define MPI_REPORTS_MAX	     64		  /* partitions whose latest report is kept */
#define MPI_RANKS_MAX	     65536u
#define MPI_PEERS_RANKS_MAX  256u /* ranks past which bytes_per_peer is refused */
#define MPI_REASONS_MAX	     32
#define MPI_WORD_MAX	     32 /* a fallback's reason: [a-z_] */

/* The collectives the library intercepts, as MPI names them. */
static const char *const mpi_names[] = {"MPI_Allreduce", "MPI_Allgather",
					"MPI_Reduce_scatter_block", "MPI_Alltoall", "MPI_Bcast"};
#define MPI_NCOLL (sizeof(mpi_names) / sizeof(mpi_names[0]))

void mpi_reports_free(struct ofcd *d)
{
	struct mpi_reports *m = &d->loop->mpi;

	for (uint32_t i = 0; i < m->n; i++)
		ofc__v1__report_mpi__free_unpacked(m->v[i], NULL);
	free(m->v);
	m->v = NULL;
	m->n = 0;
}

static bool is_word(const char *w)
{
	size_t n = w ? strlen(w) : 0;

	if (!n || n > MPI_WORD_MAX)
		return false;
	for (; *w; w++)
		if (!((*w >= 'a' && *w <= 'z') || *w == '_'))
			return false;
	return true;
}

/* The collectives' counts: known names once each, fallbacks that add up.
 * NULL: fine; else why not (in buf). */
static const char *check_collectives(const Ofc__V1__ReportMpi *r, char *buf, size_t n)
{
	bool seen[MPI_NCOLL] = {false};

	for (size_t i = 0; i < r->n_collectives; i++) {
		const Ofc__V1__MpiCollective *c = r->collectives[i];
		uint64_t fb = 0;
		size_t k = 0;

		while (k < MPI_NCOLL && c->name && strcmp(c->name, mpi_names[k]) != 0)
			k++;
		if (k == MPI_NCOLL || seen[k]) {
			snprintf(buf, n,
				 "collective %zu is %s%.64s%s: not one libofc-mpi intercepts, or "
				 "named twice",
				 i, c->name ? "'" : "", c->name ? c->name : "unnamed",
				 c->name ? "'" : "");
			return buf;
		}
		seen[k] = true;
		if (c->n_fallbacks > MPI_REASONS_MAX) {
			snprintf(buf, n, "%s has %zu fallback reasons, more than %d", c->name,
				 c->n_fallbacks, MPI_REASONS_MAX);
			return buf;
		}
		for (size_t f = 0; f < c->n_fallbacks; f++) {
			if (!is_word(c->fallbacks[f]->reason)) {
				snprintf(
				    buf, n,
				    "%s: a fallback reason that is not a word of a-z and _ (1 to "
				    "%d)",
				    c->name, MPI_WORD_MAX);
				return buf;
			}
			fb += c->fallbacks[f]->calls;
		}
		if (c->ofc_calls + fb != c->calls || c->ofc_calls > c->calls) {
			snprintf(buf, n,
				 "%s: %llu calls, but %llu by ofc's schedule and %llu fallbacks",
				 c->name, (unsigned long long)c->calls,
				 (unsigned long long)c->ofc_calls, (unsigned long long)fb);
			return buf;
		}
	}
	return NULL;
}

/* The hosts of `partition` (NULL: the fabric's) have `host`. *exists:
 * the partition is the config's or held. */
static bool partition_has(const struct ofcd *d, const char *partition, const char *host,
			  bool *exists)
{
	const struct fabric *f = d->loop->cfg->f;
	const Ofc__V1__State *st = d->loop->snap ? d->loop->snap->state : NULL;

	*exists = !partition;
	if (!partition)
		return fabric_find_host(f, host) >= 0;
	for (uint32_t i = 0; i < f->npartitions; i++) {
		const struct partition *p = &f->partitions[i];

		if (strcmp(p->name, partition) != 0)
			continue;
		*exists = true;
		for (uint32_t k = 0; k < p->nmembers; k++)
			if (strcmp(f->hosts[p->member_host[k]].name, host) == 0)
				return true;
		return false;
	}
	for (size_t i = 0; st && i < st->n_held; i++) {
		if (!st->held[i]->name || strcmp(st->held[i]->name, partition) != 0)
			continue;
		*exists = true;
		for (size_t k = 0; k < st->held[i]->n_hosts; k++)
			if (strcmp(st->held[i]->hosts[k], host) == 0)
				return true;
		return false;
	}
	return false;
}

/* The report checked: 0, or the status and why. */
static Ofc__V1__Status check_report(const struct ofcd *d, const Ofc__V1__ReportMpi *r,
				    const char *part, char *why, size_t n)
{
	size_t len = ofc__v1__report_mpi__get_packed_size(r);
	uint64_t ranks = r->ranks;
	bool exists = true;

	if (len > MPI_REPORT_MAX_BYTES)
		snprintf(why, n, "the report is %zu bytes, more than %u", len,
			 MPI_REPORT_MAX_BYTES);
	else if (!r->has_ranks || !ranks || ranks > MPI_RANKS_MAX)
		snprintf(why, n, "ranks: 1 to %u, not %llu", MPI_RANKS_MAX,
			 (unsigned long long)ranks);
	else if (r->n_hosts != ranks)
		snprintf(why, n, "%zu hosts for %llu ranks (one a rank, in rank order)", r->n_hosts,
			 (unsigned long long)ranks);
	else if (r->n_bytes_per_peer &&
		 (ranks > MPI_PEERS_RANKS_MAX || r->n_bytes_per_peer != ranks * ranks))
		snprintf(why, n,
			 "bytes_per_peer holds %zu figures; %llu ranks send %llu (ranks x ranks, "
			 "up to %u ranks)",
			 r->n_bytes_per_peer, (unsigned long long)ranks,
			 (unsigned long long)(ranks * ranks), MPI_PEERS_RANKS_MAX);
	else if (r->n_collectives > MPI_NCOLL)
		snprintf(why, n, "%zu collectives; libofc-mpi intercepts %zu", r->n_collectives,
			 MPI_NCOLL);
	else if (check_collectives(r, why, n))
		;
	else {
		for (size_t i = 0; i < r->n_hosts; i++) {
			const char *h = r->hosts[i] ? r->hosts[i] : "";

			if (partition_has(d, part, h, &exists))
				continue;
			if (!exists) {
				snprintf(
				    why, n,
				    "no partition %.64s: neither the config's nor held; nothing to "
				    "report on",
				    part);
				return OFC__V1__STATUS__STATUS_NOT_FOUND;
			}
			snprintf(
			    why, n,
			    "rank %zu's host '%.64s' is not one of %s%.64s's hosts: a report for "
			    "another partition",
			    i, h, part ? "partition " : "the fabric", part ? part : "");
			return OFC__V1__STATUS__STATUS_INVALID;
		}
		return OFC__V1__STATUS__STATUS_OK;
	}
	return OFC__V1__STATUS__STATUS_INVALID;
}

/* r kept as the latest report of its partition (the oldest partition's
 * dropped when MPI_REPORTS_MAX are kept). */
static void keep(struct ofcd *d, Ofc__V1__ReportMpi *r)
{
	struct mpi_reports *m = &d->loop->mpi;
	const char *p = r->partition && *r->partition ? r->partition : NULL;
	uint32_t i = 0;

	while (i < m->n && !(p ? m->v[i]->partition && strcmp(m->v[i]->partition, p) == 0
			       : !m->v[i]->partition || !*m->v[i]->partition))
		i++;
	if (i == m->n && m->n == MPI_REPORTS_MAX)
		i = 0;
	if (i < m->n) { /* (the one replaced goes; the newest is last) */
		ofc__v1__report_mpi__free_unpacked(m->v[i], NULL);
		memmove(&m->v[i], &m->v[i + 1], (m->n - i - 1) * sizeof(*m->v));
		m->n--;
	}
	if (!m->v)
		m->v = xcalloc(MPI_REPORTS_MAX, sizeof(*m->v));
	m->v[m->n++] = r;
	m->received++;
	changed(d);
}

/* A job's word that every rank runs the schedules of its last loads (not
 * its end: nothing kept but that, for a drain waiting for it). */
static int job_taken(const struct request *rq, const Ofc__V1__ReportMpi *r, const char *part)
{
	struct conn *c = rq->c;
	char why[300];

	if (!r->job || !*r->job)
		return reply(c, rq->req->id, OFC__V1__STATUS__STATUS_INVALID,
			     "report-mpi refused: taken needs the job's name (job)");
	if (mpi_jobs_taken(c->d, part, r->job, why, sizeof(why)) < 0)
		return reply(c, rq->req->id, OFC__V1__STATUS__STATUS_NOT_FOUND,
			     "report-mpi refused: %s", why);
	ofcd_log(c->d, OFCD_LOG_INFO, "job %s of %s%.64s runs the schedules it last asked for",
		 r->job, part ? "partition " : "the fabric", part ? part : "");
	return reply(c, rq->req->id, OFC__V1__STATUS__STATUS_OK,
		     "job %s of %s%.64s: running the schedules it last asked for, noted", r->job,
		     part ? "partition " : "the fabric", part ? part : "");
}

int report_mpi(const struct request *rq)
{
	struct conn *c = rq->c;
	struct ofcd *d = c->d;
	Ofc__V1__ReportMpi *r = rq->req->report_mpi, *copy;
	const char *part = r && r->partition && *r->partition ? r->partition : NULL;
	char why[400], who[96];
	uint64_t calls = 0, ofc = 0;
	Ofc__V1__Status st;
	uint8_t *buf;
	size_t len;

	if (!r || (st = check_report(d, r, part, why, sizeof(why))) != OFC__V1__STATUS__STATUS_OK) {
		d->loop->mpi.refused++;
		return reply(c, rq->req->id, r ? st : OFC__V1__STATUS__STATUS_INVALID,
			     "report-mpi refused: %s", r ? why : "no ReportMpi");
	}
	if (r->job && *r->job && !mpi_job_name_ok(r->job))
		return reply(c, rq->req->id, OFC__V1__STATUS__STATUS_INVALID,
			     "report-mpi refused: job: 1 to %d of A-Z a-z 0-9 . _ / : @ -",
			     MPI_JOB_NAME_MAX);
	if (r->has_taken && r->taken)
		return job_taken(rq, r, part);
	if (r->job && *r->job)
		mpi_jobs_ended(d, part, r->job);
	/* ofcd's own fields, set for the copy kept (the sender's are not
	 * taken) */
	/* (who asked, as a job's principal is written: the gateway's
	 * identity, cn:NAME, else the socket peer's uid) */
	if (rq->who.p)
		snprintf(who, sizeof(who), "%.64s",
			 rq->who.p->identity ? rq->who.p->identity : "?");
	else
		snprintf(who, sizeof(who), "uid:%u", (unsigned)rq->who.peer.uid);
	char *sender_who = r->reporter;
	uint64_t sender_ms = r->received_unix_ms;
	protobuf_c_boolean sender_has = r->has_received_unix_ms;
	r->reporter = who;
	r->has_received_unix_ms = 1;
	r->received_unix_ms = unix_ms();
	len = ofc__v1__report_mpi__get_packed_size(r);
	buf = xmalloc(len + 1);
	ofc__v1__report_mpi__pack(r, buf);
	r->reporter = sender_who;
	r->received_unix_ms = sender_ms;
	r->has_received_unix_ms = sender_has;
	copy = ofc__v1__report_mpi__unpack(NULL, len, buf);
	free(buf);
	if (!copy)
		return reply(c, rq->req->id, OFC__V1__STATUS__STATUS_INTERNAL,
			     "report-mpi: the report does not unpack again");
	keep(d, copy);
	for (size_t i = 0; i < copy->n_collectives; i++) {
		calls += copy->collectives[i]->calls;
		ofc += copy->collectives[i]->ofc_calls;
	}
	ofcd_log(
	    d, OFCD_LOG_INFO,
	    "libofc-mpi report of %u ranks for %s%.64s from %s: %llu calls, %llu by ofc's schedule",
	    copy->ranks, part ? "partition " : "the fabric", part ? part : "", who,
	    (unsigned long long)calls, (unsigned long long)ofc);
	return reply(c, rq->req->id, OFC__V1__STATUS__STATUS_OK,
		     "report of %u ranks kept for %s%.64s: %llu calls, %llu by ofc's schedule",
		     copy->ranks, part ? "partition " : "the fabric", part ? part : "",
		     (unsigned long long)calls, (unsigned long long)ofc);
}
