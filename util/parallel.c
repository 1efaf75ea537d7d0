/* A minimal parallel-for over pthreads: the schedule and graph code has
 * embarrassingly parallel loops (one BFS per source, one LP per node and
 * step) and two cores to spread them over. */
#include "util/util.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <unistd.h>

struct pf_job {
	size_t n, grain;
	atomic_size_t next;
	void (*fn)(void *ctx, size_t i, unsigned worker);
	void *ctx;
};

struct pf_worker {
	struct pf_job *job;
	unsigned id;
};

void ofc_thread_name(const char *name)
{
	(void)pthread_setname_np(pthread_self(), name);
}

unsigned ofc_cpu_count(void)
{
	/* The CPUs this process may run on (taskset, a cgroup's cpuset), not
	 * the machine's: ofcd pinned to 2 of 16 cores ran 16 workers on the
	 * two, each with its scratch (8,192 hosts, 1% of the ports failed:
	 * 1,008 MB peak with 16 workers, 901 with 2). More CPUs than a
	 * cpu_set_t holds: the machine's. */
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0)
		return (unsigned)CPU_COUNT(&set);
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n > 0 ? (unsigned)n : 1;
}

static void *pf_run(void *arg)
{
	struct pf_worker *w = arg;
	struct pf_job *job = w->job;

	for (;;) {
		size_t lo = atomic_fetch_add(&job->next, job->grain);

		if (lo >= job->n)
			break;
		size_t hi = lo + job->grain < job->n ? lo + job->grain : job->n;
		for (size_t i = lo; i < hi; i++)
			job->fn(job->ctx, i, w->id);
	}
	return NULL;
}

/* (a worker of its own; the caller's thread runs pf_run under its name) */
static void *pf_thread(void *arg)
{
	ofc_thread_name("parallel-for");
	return pf_run(arg);
}

unsigned parallel_workers(size_t n, size_t grain, unsigned threads)
{
	size_t blocks = grain ? (n + grain - 1) / grain : n;

	if (threads == 0)
		threads = ofc_cpu_count();
	if (threads > PARALLEL_MAX)
		threads = PARALLEL_MAX;
	if ((size_t)threads > blocks)
		threads = blocks ? (unsigned)blocks : 1;
	return threads;
}

void parallel_for(size_t n, size_t grain, unsigned threads,
		  void (*fn)(void *ctx, size_t i, unsigned worker), void *ctx)
{
	struct pf_job job = {.n = n, .grain = grain ? grain : 1, .fn = fn, .ctx = ctx};
	pthread_t tid[PARALLEL_MAX];
	struct pf_worker w[PARALLEL_MAX];
	unsigned started = 0;

	atomic_init(&job.next, 0);
	threads = parallel_workers(n, job.grain, threads);
	if (threads <= 1) {
		for (size_t i = 0; i < n; i++)
			fn(ctx, i, 0);
		return;
	}
	for (unsigned t = 1; t < threads; t++) {
		w[t].job = &job;
		w[t].id = t;
		if (pthread_create(&tid[t], NULL, pf_thread, &w[t]) != 0)
			break;
		started = t;
	}
	w[0].job = &job;
	w[0].id = 0;
	pf_run(&w[0]);
	for (unsigned t = 1; t <= started; t++)
		pthread_join(tid[t], NULL);
}
