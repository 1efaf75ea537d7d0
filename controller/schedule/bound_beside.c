/* The degraded graph's own bound (sched.h degraded_bound) beside the
 * schedule's generation. The bound reads the degraded graph alone and the
 * schedule reads none of it until it is priced (outcome_finish), so a
 * patched BFB, whose generation leaves the second core idle most of the
 * time, computes it on a thread of its own: at 8,192 hosts with 1% of the
 * ports failed it was 0.19-0.24 s of the answer, serial before the
 * patch's 3-4 s. Elsewhere it is computed where it is first read, as
 * before (what it gives is the same either way: it is a pure function of
 * the graph). Who reads r->degraded, r->degraded_us, r->have_degraded or
 * r->lb_us inside an engine waits for it first (bound_beside_wait);
 * schedule_direct waits before it returns, so nothing outside this
 * folder sees a bound not yet in. */
#include "controller/schedule/internal.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>

struct bound_beside {
	const struct graph *g; /* r->g: not freed while r holds it */
	enum sched_collective c;
	uint32_t degree;
	struct degraded_bound b;
	int rc;
	bool started; /* on th; else computed at the wait */
	pthread_t th;
};

static void *bound_run(void *arg)
{
	struct bound_beside *t = arg;

	t->rc = degraded_bound(t->g, t->c, t->degree, 0, &t->b);
	return NULL;
}

void bound_beside_defer(struct schedule_result *r, enum sched_collective c)
{
	struct bound_beside *t = xcalloc(1, sizeof(*t));

	t->g = r->g;
	t->c = c;
	t->degree = r->degree;
	r->bound = t;
}

void bound_beside_start(struct schedule_result *r)
{
	struct bound_beside *t = r->bound;
	unsigned threads = r->bopts.threads ? r->bopts.threads : ofc_cpu_count();

	/* One core (--threads 1, or a process pinned to one): no thread
	 * beside, as asked; the wait computes it. So does a thread that does
	 * not start. */
	if (t && !t->started && threads > 1)
		t->started = pthread_create(&t->th, NULL, bound_run, t) == 0;
}

void bound_beside_wait(struct schedule_result *r)
{
	struct bound_beside *t = r->bound;

	if (!t)
		return;
	if (t->started)
		pthread_join(t->th, NULL);
	else
		bound_run(t);
	r->bound = NULL;
	r->degraded = t->b;
	int rc = t->rc;
	free(t);
	if (rc < 0)
		return;
	if (r->degraded.steps == UINT32_MAX || !isfinite(r->degraded.tau_b))
		return; /* some node cut off: no schedule to bound */
	r->have_degraded = true;
	r->degraded_us = cost_time_us(&r->cost, r->degraded.steps, r->degraded.tau_b);
	if (r->degraded_us > r->lb_us)
		r->lb_us = r->degraded_us;
}
