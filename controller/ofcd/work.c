/* ofcd's two worker threads and which job runs where. The mutation worker
 * owns the running config and its struct ctl and runs one job at a time,
 * as the loop hands them over: mutations, probes and ReportFailure
 * (mutation.c), the planner's results (planner.c), a replica's takeover and
 * sync (takeover.c), prologs and releases queued together (batch.c). The
 * schedule workers hand GetSchedule to a planner process each
 * (planner_proc.c) and compute GetPlan (jobplan.c). Both hand finished jobs back as
 * notes; the loop answers and publishes. */
#include "controller/ofcd/batch.h"
#include "controller/ofcd/testbed.h"
#include "controller/ofcd/worker.h"

#include <errno.h>
#include <time.h>

#include <stdlib.h>
#include <string.h>

/* ---- the threads ------------------------------------------------------------------------ */

/* An apply, a reconfigure or a reload: in stages when it asks for them
 * (staged.c runs ofcd_run_mutation for an apply's last step). */
static void run_transaction(struct ofcd *d, struct job *j)
{
	if (j->staged)
		ofcd_run_staged(d, j);
	else
		ofcd_run_mutation(d, j);
}

/* The mutation worker's handler of each job kind the job table
 * (job_table.c) runs there (JOB_ON_MUTATION), as requests.c's handlers[]
 * is of the request table's rows: ofcd_open refuses to start if a row
 * has none (a file of the job table's own would call every worker file,
 * and they read the table: a circle). */
static void (*const runners[JOB_NKINDS])(struct ofcd *d, struct job *j) = {
    [JOB_APPLY_CONFIG] = run_transaction,   [JOB_RECONFIGURE] = run_transaction,
    [JOB_RELOAD] = run_transaction,	    [JOB_PROBE] = ofcd_run_probe,
    [JOB_FAILURE] = ofcd_run_failure,	    [JOB_DRAIN] = ofcd_run_drain,
    [JOB_PLANNER] = ofcd_run_planner,	    [JOB_RELEASE] = ofcd_run_release,
    [JOB_TAKEOVER] = ofcd_run_takeover,	    [JOB_SYNC] = ofcd_run_sync,
    [JOB_ADOPT] = ofcd_run_adopt,	    [JOB_TESTBED_RUN] = ofcd_run_testbed,
    [JOB_TESTBED_CHECK] = ofcd_run_testbed, [JOB_TESTBED_DOWN] = ofcd_run_testbed,
    [JOB_TESTBED_UP] = ofcd_run_testbed_up, [JOB_TESTBED_MPIRUN] = ofcd_run_testbed,
};

bool job_runs_on_worker(enum job_kind k)
{
	return k > 0 && k < JOB_NKINDS && runners[k];
}

void ofcd_run_job(struct ofcd *d, struct job *j)
{
	if (j->batch) { /* (prologs or releases handed over together) */
		ofcd_run_batch(d, j);
		return;
	}
	runners[j->kind](d, j);
}

static void finished(struct ofcd *d, struct job *j)
{
	struct note *n = xcalloc(1, sizeof(*n));

	n->job = j;
	ofcd_note(d, n);
}

void *ofcd_mutation_worker(void *arg)
{
	struct ofcd *d = arg;

	ofc_thread_name("ofcd-mutation");
	pthread_mutex_lock(&d->jobs.mu);
	for (;;) {
		struct job *j;

		while (!d->jobs.mjob && !d->jobs.stop)
			pthread_cond_wait(&d->jobs.cond, &d->jobs.mu);
		if (!d->jobs.mjob)
			break;
		j = d->jobs.mjob;
		pthread_mutex_unlock(&d->jobs.mu);
		d->w->job = j;
		ofcd_run_job(d, j);
		ahead_publish(d);
		metrics_devices_take(d, d->w->ctl);
		d->w->job = NULL;
		pthread_mutex_lock(&d->jobs.mu);
		d->jobs.mjob = NULL;
		finished(d, j);
	}
	pthread_mutex_unlock(&d->jobs.mu);
	planner_end(&d->w->relabel, false, NULL, 0); /* (closed, a planner at rest ends) */
	return NULL;
}

/* (under mu) Whether a job of j's caller runs on a schedule worker, and
 * whether a public caller's does. */
static bool caller_runs(const struct ofcd_jobs *q, const struct job *j, bool *public_runs)
{
	bool yes = false;

	*public_runs = false;
	for (int i = 0; i < SCHEDULE_WORKERS; i++) {
		const struct job *r = q->srunning[i];

		if (!r)
			continue;
		*public_runs |= r->public_caller;
		yes |= r->principal && j->principal && strcmp(r->principal, j->principal) == 0;
	}
	return yes;
}

/* (under mu) The next job for schedule worker `w`, out of squeue, or NULL:
 * a public caller's only while no other public caller's runs (the other
 * worker stays for root's and the admins'), and in a first pass only a
 * job whose caller has none running (one caller's many wait behind each
 * other, not before another's). */
static struct job *take_schedule(struct ofcd_jobs *q, int w)
{
	for (int pass = 0; pass < 2; pass++) {
		struct job *prev = NULL;

		for (struct job *j = q->squeue; j; prev = j, j = j->next) {
			bool public_runs, mine = caller_runs(q, j, &public_runs);

			if ((j->public_caller && public_runs) || (pass == 0 && mine))
				continue;
			if (prev)
				prev->next = j->next;
			else
				q->squeue = j->next;
			if (q->squeue_tail == j)
				q->squeue_tail = prev;
			j->next = NULL;
			q->srunning[w] = j;
			return j;
		}
	}
	return NULL;
}

/* (under q->mu) Worker w's next job, waiting for one at most
 * SCHEDULE_IDLE_SECONDS; NULL: none came, or the daemon stops. */
static struct job *await_schedule(struct ofcd_jobs *q, int w)
{
	struct timespec until;
	struct job *j;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += SCHEDULE_IDLE_SECONDS;
	while (!(j = take_schedule(q, w)) && !q->stop) {
		q->sidle++;
		int rc = pthread_cond_timedwait(&q->cond, &q->mu, &until);
		q->sidle--;
		if (rc == ETIMEDOUT)
			return take_schedule(q, w);
	}
	return j;
}

static void *schedule_worker(struct ofcd *d, int w)
{
	struct job *j;

	ofc_thread_name("ofcd-schedule");
	pthread_mutex_lock(&d->jobs.mu);
	while ((j = await_schedule(&d->jobs, w))) {
		pthread_mutex_unlock(&d->jobs.mu);
		if (job_table[j->kind].thread == JOB_ON_SCHEDULE)
			planner_run_schedule(d, &d->jobs.planner[w], j);
		else
			ofcd_run_job(d, j);
		pthread_mutex_lock(&d->jobs.mu);
		d->jobs.srunning[w] = NULL;
		/* (what waited for this one may run now, on either worker) */
		pthread_cond_broadcast(&d->jobs.cond);
		pthread_mutex_unlock(&d->jobs.mu);
		finished(d, j);
		pthread_mutex_lock(&d->jobs.mu);
	}
	/* (set now: a job queued from here on starts another worker, which
	 * joins this one first, so its planner is ended before it is used) */
	d->jobs.sended[w] = true;
	pthread_mutex_unlock(&d->jobs.mu);
	planner_end(&d->jobs.planner[w], false, NULL, 0);
	return NULL;
}

void *ofcd_schedule_worker(void *arg)
{
	return schedule_worker(arg, 0);
}

void *ofcd_schedule_worker_2(void *arg)
{
	return schedule_worker(arg, 1);
}

void ofcd_schedule_spawn(struct ofcd *d)
{
	struct ofcd_jobs *q = &d->jobs;

	if (q->sidle || q->stop)
		return;
	for (int w = 0; w < SCHEDULE_WORKERS; w++) {
		if (q->slive[w] && q->sended[w]) {
			pthread_join(q->sthread[w], NULL);
			q->slive[w] = false;
		}
		if (q->slive[w])
			continue;
		q->sended[w] = false;
		int rc = w == 0 ? pthread_create(&q->sthread[0], NULL, ofcd_schedule_worker, d)
				: pthread_create(&q->sthread[1], NULL, ofcd_schedule_worker_2, d);
		q->slive[w] = rc == 0;
		return;
	}
}

/* ---- the worker's half of the daemon ---------------------------------------------------- */

void ofcd_worker_new(struct ofcd *d)
{
	d->w = xcalloc(1, sizeof(*d->w));
	d->w->relabel.fd = -1;
}

void ofcd_worker_close_devices(struct ofcd *d)
{
	ctl_close(d->w->ctl);
	d->w->ctl = NULL;
}

void ofcd_worker_free(struct ofcd *d)
{
	planner_end(&d->w->relabel, false, NULL, 0); /* (a worker that never ran: none) */
	fabcfg_unref(d->w->cfg);
	fabcfg_unref(d->w->pub);
	fabcfg_unref(d->w->last_pub);
	fabcfg_unref(d->w->base);
	free(d->w->sync_bytes);
	free(d->w->damaged);
	strv_free(d->w->reported, d->w->nreported);
	failures_by_host_clear(d);
	strv_free(d->w->lost, d->w->nlost);
	for (uint32_t i = 0; i < d->w->nmoves; i++)
		free(d->w->moves[i].host);
	free(d->w->moves);
	drained_clear(d);
	held_free_all(d);
	for (uint32_t i = 0; i < d->w->ntrusted; i++)
		free(d->w->trusted[i]);
	free(d->w->trusted);
	free(d->w);
	d->w = NULL;
}
