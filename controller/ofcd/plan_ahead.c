/* Run-time partitions planned ahead, off the queue: a Slurm job's prolog
 * asks for a partition of its hosts renumbered for fewest moves, and the
 * renumbering search (up to RELABEL_BUDGET_S) is most of its plan. The
 * mutation worker commits one job at a time, in queue order; while it does,
 * a pool of threads plans the jobs queued behind it, each on the base the
 * worker published after its last job (the running config and what every
 * switch held). When the worker reaches a job it reads the devices as
 * always and takes the plan made ahead only if what the plan read is
 * unchanged: the same config, and on every switch the same cross-connects
 * between the partition's own ports (the only ones the renumbering looks
 * at: others' cross-connects and those leaving the partition do not change
 * its answer). Otherwise, or when no thread has started on it yet, it
 * plans the job itself, as before. The worker still does every check of
 * the commit (holds, the plan against the held partitions) and the one
 * transaction; the threads only compute.
 *
 * Threads: the loop submits (ahead_submit, starting a thread when none is
 * idle) and drops (ahead_drop, as the job is freed); the pool's threads
 * plan, and end after AHEAD_IDLE_SECONDS without a plan; the mutation worker publishes the
 * base (ahead_publish) and takes plans (ahead_take). Everything shared is
 * under d->ahead.mu; a plan's result is its thread's until it is DONE. */
#include "controller/ofcd/worker.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

/* What plans are made on: the running config and each of its switches'
 * cross-connects as the mutation worker last read or applied them. */
struct ahead_base {
	unsigned refs; /* under d->ahead.mu */
	struct fabcfg *cfg;
	struct device_state *sw; /* per switch of cfg->f */
	bool *known;		 /* sw[s] was read (else unknown, as ctl_switch_states) */
};

enum ahead_state { AHEAD_WAITING, AHEAD_RUNNING, AHEAD_DONE, AHEAD_DROPPED };

struct ahead {
	struct ofcd_ahead *q;
	struct ahead *next; /* waiting, under q->mu */
	unsigned refs;	    /* the job's and a running thread's, under q->mu */
	enum ahead_state state;
	/* the job's request, copied */
	char *name, *spec;
	char **hosts;
	uint32_t nhosts;
	/* the plan (the thread's until DONE) */
	struct ahead_base *base;
	struct circuit *pc;
	uint32_t npc;
	struct fabric_relabel rep;
	bool ok;
	char *fail;   /* !ok: why ("its plan ahead failed: ...") */
	bool taken;   /* (the worker's) ahead_take moved the plan out */
	bool reached; /* under q->mu: the worker asked for it, or the job was freed */
};

static void base_unref(struct ahead_base *b, uint32_t nsw)
{
	if (!b || --b->refs)
		return;
	for (uint32_t s = 0; s < nsw; s++)
		state_free(&b->sw[s]);
	free(b->sw);
	free(b->known);
	fabcfg_unref(b->cfg);
	free(b);
}

static void base_put(struct ahead_base *b)
{
	if (b)
		base_unref(b, b->cfg->f->nswitches);
}

static void ahead_unref(struct ahead *a)
{
	if (!a || --a->refs)
		return;
	base_put(a->base);
	free(a->name);
	free(a->spec);
	strv_free(a->hosts, a->nhosts);
	free(a->pc);
	free(a->fail);
	free(a);
}

/* ---- the pool's threads ---------------------------------------------------------------- */

double ahead_budget(uint32_t threads, uint32_t others)
{
	double b =
	    RELABEL_BUDGET_S * (threads ? threads : 1) / ((double)(threads ? threads : 1) + others);

	return b < RELABEL_BUDGET_MIN_S ? RELABEL_BUDGET_MIN_S : b;
}

/* a's partition on its base, renumbered as ctl_partition renumbers it,
 * within budget seconds of search, in the thread's planner process *p
 * (the search out of the process that holds the lease; one kept while
 * the thread lives, and the fabric it rebuilt with it). */
static void plan_one(const struct ofcd *d, struct planner_proc *p, struct ahead *a, double budget)
{
	const struct fabric *f = a->base->cfg->f;
	const struct device_state **actual = xcalloc((size_t)f->nswitches + 1, sizeof(*actual));
	struct ofc_error err = {0};

	for (uint32_t s = 0; s < f->nswitches; s++)
		actual[s] = a->base->known[s] ? &a->base->sw[s] : NULL;
	a->ok = planner_relabel(d, p, "relabel", a->base->cfg, a->name, a->hosts, a->nhosts,
				a->spec, actual, budget, &a->pc, &a->npc, &a->rep, &err) == 0;
	if (!a->ok)
		a->fail = xasprintf("its plan ahead failed: %s", err.msg);
	free(actual);
}

/* How long a plan-ahead thread waits for the next plan before it ends
 * (the loop starts another when one is submitted): a burst of prologs
 * keeps the pool, a daemon at rest holds none of its threads. */
#define AHEAD_IDLE_SECONDS 10

/* (under q->mu) Whether a thread has a plan to make, waiting for one at
 * most AHEAD_IDLE_SECONDS; false: none came, or the daemon stops. */
static bool await_plan(struct ofcd_ahead *q)
{
	struct timespec until;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += AHEAD_IDLE_SECONDS;
	while (!q->stop && !(q->head && q->base)) {
		q->idle++;
		int rc = pthread_cond_timedwait(&q->cond, &q->mu, &until);
		q->idle--;
		if (rc == ETIMEDOUT && !(q->head && q->base))
			return false;
	}
	return !q->stop;
}

/* The thread's page for its planners: its descriptor for the planners
 * *p starts (planner_proc.cut_fd), its first word, where ahead_submit
 * writes a cut while a plan runs, the slot's. None when it cannot be made
 * (then plans run their budget out). */
static void cut_open(struct ahead_slot *slot, struct planner_proc *p)
{
	int fd = memfd_create("ofc-plan-cut", MFD_CLOEXEC);
	void *page = MAP_FAILED;

	if (fd > 0 && ftruncate(fd, sizeof(int32_t)) == 0)
		page = mmap(NULL, sizeof(int32_t), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (page == MAP_FAILED) {
		if (fd >= 0)
			close(fd);
		fd = -1;
		page = NULL;
	}
	p->cut_fd = fd;
	pthread_mutex_lock(&slot->d->ahead.mu);
	slot->cut = page;
	pthread_mutex_unlock(&slot->d->ahead.mu);
}

/* (under mu) A plan's budget now: its share of the burst, every job the
 * worker has yet to reach, planned or not, before it or after (itself
 * among them). */
static double burst_share(const struct ofcd_ahead *q)
{
	return ahead_budget(q->nthreads, q->unreached - 1);
}

/* (under mu) The burst grew: each plan running past its share of it now
 * is cut to that share (its planner's search reads the page). */
static void cut_running(struct ofcd_ahead *q)
{
	double share = burst_share(q);

	for (uint32_t i = 0; i < q->nthreads; i++) {
		struct ahead_slot *s = &q->slots[i];

		if (s->planning && s->cut && share < s->budget) {
			s->budget = share;
			__atomic_store_n(s->cut, (int32_t)(share * 1e6), __ATOMIC_RELAXED);
		}
	}
}

static void *ahead_thread(void *arg)
{
	struct ahead_slot *slot = arg;
	struct ofcd *d = slot->d;
	struct ofcd_ahead *q = &d->ahead;
	struct planner_proc p = {.pid = 0, .fd = -1};

	ofc_thread_name("ofcd-ahead");
	cut_open(slot, &p);
	pthread_mutex_lock(&q->mu);
	while (await_plan(q)) {
		struct ahead *a = q->head;
		uint32_t others = q->unreached - 1; /* (for the log) */

		q->head = a->next;
		a->next = NULL;
		a->state = AHEAD_RUNNING;
		q->started++;
		a->refs++;
		a->base = q->base;
		a->base->refs++;
		double budget = burst_share(q), t0 = now_seconds();
		slot->planning = true;
		slot->budget = budget;
		if (slot->cut) /* (its planner is idle: no search reads it now) */
			__atomic_store_n(slot->cut, 0, __ATOMIC_RELAXED);
		pthread_mutex_unlock(&q->mu);
		plan_one(d, &p, a, budget);
		pthread_mutex_lock(&q->mu);
		slot->planning = false;
		double cut = slot->budget;
		a->state = AHEAD_DONE;
		pthread_cond_broadcast(&q->done);
		pthread_mutex_unlock(&q->mu);
		char cut_to[64] = "";
		if (cut < budget)
			snprintf(cut_to, sizeof(cut_to), ", cut to %.3f s as its burst came", cut);
		ofcd_log(d, OFCD_LOG_DEBUG,
			 "partition %s: planned ahead in %.3f s of a %.3f s budget%s (%u more jobs "
			 "of its burst yet to run)",
			 a->name, now_seconds() - t0, budget, cut_to, others);
		pthread_mutex_lock(&q->mu);
		ahead_unref(a);
	}
	int32_t *page = slot->cut;
	slot->cut = NULL; /* (ahead_submit writes no more) */
	pthread_mutex_unlock(&q->mu);
	planner_end(&p, false, NULL, 0); /* (closed, a planner at rest ends) */
	if (page)
		munmap(page, sizeof(int32_t));
	if (p.cut_fd > 0)
		close(p.cut_fd);
	pthread_mutex_lock(&q->mu);
	slot->ended = true;
	pthread_mutex_unlock(&q->mu);
	return NULL;
}

/* (loop, under q->mu) A thread for a plan just queued when none is idle:
 * in a free place (one whose thread ended is joined first). */
static void ahead_spawn(struct ofcd *d)
{
	struct ofcd_ahead *q = &d->ahead;

	if (q->idle || q->stop)
		return;
	for (uint32_t i = 0; i < q->nthreads; i++) {
		struct ahead_slot *s = &q->slots[i];

		if (s->live && s->ended) {
			pthread_join(s->th, NULL);
			s->live = false;
		}
		if (s->live)
			continue;
		s->d = d;
		s->ended = false;
		s->live = pthread_create(&s->th, NULL, ahead_thread, s) == 0;
		return;
	}
}

/* As many threads as the machine has cores, two to AHEAD_MAX_THREADS: one
 * keeps the next job's plan ready while the worker commits, more plan the
 * jobs behind it on a machine with the cores to. */
#define AHEAD_MAX_THREADS 4

void ahead_init(struct ofcd *d)
{
	pthread_mutex_init(&d->ahead.mu, NULL);
	pthread_cond_init(&d->ahead.cond, NULL);
	pthread_cond_init(&d->ahead.done, NULL);
}

bool ahead_start(struct ofcd *d)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	struct ofcd_ahead *q = &d->ahead;

	n = n < 2 ? 2 : n > AHEAD_MAX_THREADS ? AHEAD_MAX_THREADS : n;
	q->slots = xcalloc((size_t)n, sizeof(*q->slots));
	q->nthreads = (uint32_t)n;
	ahead_publish(d);
	return true;
}

void ahead_stop(struct ofcd *d)
{
	struct ofcd_ahead *q = &d->ahead;

	pthread_mutex_lock(&q->mu);
	q->stop = true;
	pthread_cond_broadcast(&q->cond);
	pthread_mutex_unlock(&q->mu);
	for (uint32_t i = 0; i < q->nthreads; i++)
		if (q->slots[i].live)
			pthread_join(q->slots[i].th, NULL);
	free(q->slots);
	q->slots = NULL;
	q->nthreads = 0;
}

void ahead_free(struct ofcd *d)
{
	struct ofcd_ahead *q = &d->ahead;

	/* (every job is freed by now, and with it what it planned) */
	base_put(q->base);
	q->base = NULL;
	pthread_cond_destroy(&q->done);
	pthread_cond_destroy(&q->cond);
	pthread_mutex_destroy(&q->mu);
}

/* ---- the loop -------------------------------------------------------------------------- */

void ahead_submit(struct ofcd *d, struct job *j)
{
	struct ofcd_ahead *q = &d->ahead;
	struct ahead *a;

	if (!q->nthreads || j->kind != JOB_RECONFIGURE || !j->nhosts || !j->relabel ||
	    !j->partition || !j->spec || j->answered || j->ahead)
		return;
	a = xcalloc(1, sizeof(*a));
	a->q = q;
	a->refs = 1; /* the job's; a thread takes its own */
	a->name = xstrdup(j->partition);
	a->spec = xstrdup(j->spec);
	a->hosts = xcalloc(j->nhosts + 1, sizeof(*a->hosts));
	for (uint32_t i = 0; i < j->nhosts; i++)
		a->hosts[i] = xstrdup(j->hosts[i]);
	a->nhosts = j->nhosts;
	j->ahead = a;
	pthread_mutex_lock(&q->mu);
	q->unreached++;
	cut_running(q);
	if (q->tail && q->head)
		q->tail->next = a;
	else
		q->head = a;
	q->tail = a;
	pthread_cond_signal(&q->cond);
	ahead_spawn(d);
	pthread_mutex_unlock(&q->mu);
}

/* Take a out of the waiting list (under mu). */
static void unwait(struct ofcd_ahead *q, struct ahead *a)
{
	struct ahead *prev = NULL;

	for (struct ahead *x = q->head; x && x != a; x = x->next)
		prev = x;
	if (prev)
		prev->next = a->next;
	else if (q->head == a)
		q->head = a->next;
	if (q->tail == a)
		q->tail = prev;
	a->next = NULL;
	a->state = AHEAD_DROPPED;
}

/* (under mu) The worker has reached a's job, or it is freed: no longer
 * one of the burst a plan's budget is shared with. */
static void reach(struct ofcd_ahead *q, struct ahead *a)
{
	if (!a->reached) {
		a->reached = true;
		q->unreached--;
	}
}

void ahead_drop(struct ahead *a)
{
	struct ofcd_ahead *q = a ? a->q : NULL;

	if (!a)
		return;
	pthread_mutex_lock(&q->mu);
	reach(q, a);
	if (a->state == AHEAD_WAITING)
		unwait(q, a);
	ahead_unref(a);
	pthread_mutex_unlock(&q->mu);
}

bool ahead_started(struct ahead *a)
{
	bool started;

	pthread_mutex_lock(&a->q->mu);
	started = a->state == AHEAD_RUNNING || a->state == AHEAD_DONE;
	pthread_mutex_unlock(&a->q->mu);
	return started;
}

bool ahead_done(struct ahead *a)
{
	bool done;

	pthread_mutex_lock(&a->q->mu);
	done = a->state == AHEAD_DONE || a->state == AHEAD_DROPPED;
	pthread_mutex_unlock(&a->q->mu);
	return done;
}

/* ---- the mutation worker --------------------------------------------------------------- */

void ahead_publish(struct ofcd *d)
{
	const struct ctl *c = d->w->ctl;
	struct ofcd_ahead *q = &d->ahead;
	struct ahead_base *b, *old;

	if (!q->nthreads || !c || !d->w->cfg || c->fabric != d->w->cfg->f)
		return;
	const struct fabric *f = c->fabric;
	b = xcalloc(1, sizeof(*b));
	b->refs = 1;
	b->cfg = fabcfg_ref(d->w->cfg);
	b->sw = xcalloc((size_t)f->nswitches + 1, sizeof(*b->sw));
	b->known = xcalloc((size_t)f->nswitches + 1, sizeof(*b->known));
	for (uint32_t i = 0; i < c->ndevs; i++) {
		int s = c->devs[i].cfg.cls == DEV_SWITCH
			    ? fabric_find_switch(f, c->devs[i].cfg.name)
			    : -1;

		if (s >= 0 && c->devs[i].read_ok) {
			state_copy(&b->sw[s], &c->devs[i].actual);
			b->known[s] = true;
		}
	}
	pthread_mutex_lock(&q->mu);
	old = q->base;
	q->base = b;
	if (q->head)
		pthread_cond_broadcast(&q->cond);
	base_put(old);
	pthread_mutex_unlock(&q->mu);
}

static int cmp_xconn(const void *a, const void *b)
{
	const struct xconn *x = a, *y = b;

	return x->in != y->in	  ? (x->in < y->in ? -1 : 1)
	       : x->out != y->out ? (x->out < y->out ? -1 : 1)
				  : 0;
}

/* The cross-connects of s (NULL: none known) between two of mine's ports
 * (ports + 1 flags), sorted, into *out (caller frees); -1 when s holds a
 * port beyond them (then nothing is compared: planned again). */
static int own_xconns(const struct device_state *s, const uint8_t *mine, uint32_t ports,
		      struct xconn **out, uint32_t *n)
{
	*out = xcalloc((s ? s->nxc : 0) + 1, sizeof(**out));
	*n = 0;
	for (uint32_t k = 0; s && k < s->nxc; k++) {
		struct xconn x = s->xc[k];

		if (x.in > ports || x.out > ports)
			return -1;
		if (mine[x.in] && mine[x.out])
			(*out)[(*n)++] = x;
	}
	qsort(*out, *n, sizeof(**out), cmp_xconn);
	return 0;
}

bool ahead_same(const struct fabric *f, const struct partition *p,
		const struct device_state *const *then, const struct device_state *const *now)
{
	bool same = true;

	for (uint32_t s = 0; s < f->nswitches && same; s++) {
		uint8_t *mine = partition_switch_ports(f, p, s);
		uint32_t ports = f->switches[s].ports, na, nb;
		struct xconn *a = NULL, *b = NULL;

		same = own_xconns(then[s], mine, ports, &a, &na) == 0 &&
		       own_xconns(now[s], mine, ports, &b, &nb) == 0 && na == nb &&
		       (!na || memcmp(a, b, na * sizeof(*a)) == 0);
		free(a);
		free(b);
		free(mine);
	}
	return same;
}

int ahead_take(struct ofcd *d, struct ahead *a, const struct ctl *c, const struct partition *p,
	       struct circuit **pc, uint32_t *npc, struct fabric_relabel *rep, const char **why)
{
	struct ofcd_ahead *q = &d->ahead;

	*why = "not planned ahead";
	if (!a)
		return 0;
	pthread_mutex_lock(&q->mu);
	reach(q, a);
	if (a->state == AHEAD_WAITING)
		unwait(q, a); /* no thread took it yet: planned now, here */
	while (a->state == AHEAD_RUNNING)
		pthread_cond_wait(&q->done, &q->mu);
	pthread_mutex_unlock(&q->mu);
	if (a->state != AHEAD_DONE)
		return 0;
	if (a->taken) { /* (a batch took it, then did not commit: batch.c) */
		*why = "its plan ahead was taken by a batch not committed";
		return 0;
	}
	if (!a->ok) {
		*why = a->fail ? a->fail : "its plan ahead failed";
		return 0;
	}
	if (a->base->cfg->f != c->fabric) {
		*why = "another config runs since it was planned";
		return 0;
	}
	const struct device_state **now = ctl_switch_states(c);
	const struct device_state **then = xcalloc((size_t)c->fabric->nswitches + 1, sizeof(*then));
	for (uint32_t s = 0; s < c->fabric->nswitches; s++)
		then[s] = a->base->known[s] ? &a->base->sw[s] : NULL;
	bool same = ahead_same(c->fabric, p, then, now);
	free(now);
	free(then);
	if (!same) {
		*why = "the circuits between its hosts changed since it was planned";
		return 0;
	}
	*pc = a->pc;
	*npc = a->npc;
	*rep = a->rep;
	a->pc = NULL;
	a->npc = 0;
	a->taken = true;
	*why = NULL;
	return 1;
}
