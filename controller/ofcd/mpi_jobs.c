/* The jobs running ofcd's schedules, for a drain's wait (drain.c): a job
 * of libofc-mpi names itself in each GetSchedule (GetSchedule.job), asks
 * again every few seconds while it runs collectives, says it runs the
 * schedules of its last loads once every rank took them at one collective
 * boundary (ReportMpi.taken) and ends with its report (ReportMpi). A
 * caller that names no job (a CLI, another program) is kept too, by its
 * principal: it cannot say when it took a schedule, so a drain on its
 * partition's ports waits the whole grace for it.
 *
 * Each ask is numbered by the config the loop had when it came (fabcfg's
 * pub_seq, counted here as the loop takes configs), so a job's word says
 * which published schedules it runs: the least of its taking asks since
 * its last word. A drain publishes its schedule, learns the number the
 * loop gave that config, and waits until every job on its ports said it
 * runs that number or a later one.
 *
 * The loop writes the table, the mutation worker reads it, under its own
 * lock (struct mpi_jobs, internal.h); nothing in it is a secret (job
 * names, partitions, principals as the state shows them). Not in the
 * store: kept by the replica that hears the asks. A job that asks a
 * follower is not seen by the leader, whose drain then waits its whole
 * grace (its word, ReportMpi, goes to the leader, which refuses it as a
 * job it has not heard ask); a new leader hears from the jobs within a
 * poll.
 *
 * The table is bounded (MPI_JOBS_MAX): a new caller past it takes the
 * place of the one heard from longest ago, and for MPI_JOB_WINDOW_S after
 * that no drain takes the jobs' words as the whole story (it waits its
 * grace), so that callers asking under made-up names cannot push a
 * running job out of what a drain waits for. */
#include "controller/ofcd/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool mpi_job_name_ok(const char *name)
{
	size_t n = name ? strlen(name) : 0;

	if (!n || n > MPI_JOB_NAME_MAX)
		return false;
	for (; *name; name++)
		if (!strchr("._/:@-", *name) && !(*name >= 'a' && *name <= 'z') &&
		    !(*name >= 'A' && *name <= 'Z') && !(*name >= '0' && *name <= '9'))
			return false;
	return true;
}

/* The entry of (partition, job) or, for a caller naming none, of
 * (partition, who); NULL: none. Under mu. */
static struct mpi_job *find(struct mpi_jobs *m, const char *part, const char *job, const char *who)
{
	for (uint32_t i = 0; i < m->n; i++) {
		struct mpi_job *e = &m->v[i];

		if (strcmp(e->partition, part) == 0 &&
		    (*job ? strcmp(e->name, job) == 0 : !e->name[0] && strcmp(e->who, who) == 0))
			return e;
	}
	return NULL;
}

static void drop(struct mpi_jobs *m, uint32_t i)
{
	memmove(&m->v[i], &m->v[i + 1], (m->n - i - 1) * sizeof(*m->v));
	m->n--;
}

/* Entries not heard from within the window dropped. Under mu. */
static void expire(struct mpi_jobs *m, double now)
{
	for (uint32_t i = m->n; i-- > 0;)
		if (now - m->v[i].asked > MPI_JOB_WINDOW_S)
			drop(m, i);
}

void mpi_jobs_asked(struct ofcd *d, const char *partition, const char *job, const char *who,
		    bool taking, uint64_t seq)
{
	struct mpi_jobs *m = &d->mjobs;
	const char *part = partition ? partition : "";
	double now = now_seconds();
	struct mpi_job *e;

	job = job ? job : "";
	who = who ? who : "?";
	/* (GetSchedule refuses such a job; a longer partition or principal
	 * is no job of the library's) */
	if (strlen(part) > MPI_JOB_NAME_MAX || strlen(who) > MPI_JOB_NAME_MAX ||
	    (*job && !mpi_job_name_ok(job)))
		return;
	pthread_mutex_lock(&m->mu);
	if (!m->v)
		m->v = xcalloc(MPI_JOBS_MAX, sizeof(*m->v));
	expire(m, now);
	if (!(e = find(m, part, job, who))) {
		if (m->n == MPI_JOBS_MAX) {
			uint32_t old = 0;

			for (uint32_t i = 1; i < m->n; i++)
				old = m->v[i].asked < m->v[old].asked ? i : old;
			drop(m, old);
			m->overflow = now;
		}
		e = &m->v[m->n++];
		memset(e, 0, sizeof(*e));
		snprintf(e->name, sizeof(e->name), "%s", job);
		snprintf(e->partition, sizeof(e->partition), "%s", part);
		snprintf(e->who, sizeof(e->who), "%s", who);
		e->taking_min = UINT64_MAX;
	}
	e->asked = now;
	if (taking && seq < e->taking_min)
		e->taking_min = seq;
	pthread_mutex_unlock(&m->mu);
}

int mpi_jobs_taken(struct ofcd *d, const char *partition, const char *job, char *why, size_t n)
{
	struct mpi_jobs *m = &d->mjobs;
	const char *part = partition ? partition : "";
	struct mpi_job *e;
	int rc = 0;

	pthread_mutex_lock(&m->mu);
	if (m->v)
		expire(m, now_seconds());
	if (!m->v || !(e = find(m, part, job, ""))) {
		snprintf(why, n,
			 "job %.64s has not asked for %s%.64s's schedules here in the last %.0f s",
			 job, *part ? "partition " : "the fabric", part, MPI_JOB_WINDOW_S);
		rc = -1;
	} else if (e->taking_min != UINT64_MAX) {
		e->taken = e->taking_min;
		e->taken_at = now_seconds();
		e->taking_min = UINT64_MAX;
	}
	pthread_mutex_unlock(&m->mu);
	return rc;
}

void mpi_jobs_ended(struct ofcd *d, const char *partition, const char *job)
{
	struct mpi_jobs *m = &d->mjobs;
	struct mpi_job *e;

	pthread_mutex_lock(&m->mu);
	if (m->v && (e = find(m, partition ? partition : "", job, "")))
		drop(m, (uint32_t)(e - m->v));
	pthread_mutex_unlock(&m->mu);
}

void mpi_jobs_publish(struct ofcd *d, struct fabcfg *cfg)
{
	pthread_mutex_lock(&d->mjobs.mu);
	atomic_store(&cfg->pub_seq, ++d->mjobs.published);
	pthread_mutex_unlock(&d->mjobs.mu);
}

static void name_job(struct strbuf *sb, const struct mpi_job *e)
{
	sb_printf(sb, "%s%s (%s%s)", sb->len ? ", " : "", e->name[0] ? e->name : e->who,
		  e->partition[0] ? "partition " : "the fabric", e->partition);
}

bool mpi_jobs_done(struct ofcd *d, uint64_t seq, bool (*touches)(void *, const char *), void *ctx,
		   struct strbuf *taken, struct strbuf *grace, uint32_t n[2])
{
	struct mpi_jobs *m = &d->mjobs;
	uint32_t named = 0, waiting = 0;

	sb_reset(taken);
	sb_reset(grace);
	pthread_mutex_lock(&m->mu);
	if (m->v)
		expire(m, now_seconds());
	for (uint32_t i = 0; i < m->n; i++) {
		const struct mpi_job *e = &m->v[i];

		if (touches && !touches(ctx, e->partition))
			continue;
		if (e->name[0] && e->taken_at > 0 && e->taken >= seq) {
			named++;
			name_job(taken, e);
			continue;
		}
		waiting++;
		name_job(grace, e);
	}
	/* (one forgotten lately may still run, unheard) */
	if (m->overflow > 0 && now_seconds() - m->overflow <= MPI_JOB_WINDOW_S) {
		waiting++;
		sb_printf(grace, "%sjobs past the %u ofcd keeps track of", grace->len ? ", " : "",
			  MPI_JOBS_MAX);
	}
	pthread_mutex_unlock(&m->mu);
	n[0] = named;
	n[1] = waiting;
	return named > 0 && waiting == 0;
}
