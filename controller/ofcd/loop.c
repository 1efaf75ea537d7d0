/* The event loop of loop.h over epoll. Timers are few (a sweep and a probe
 * in ofcd), so they are an unsorted array scanned once per iteration, as in
 * Redis's ae; epoll_wait sleeps until the nearest one. Level-triggered:
 * a callback that leaves data unread is called again. */
#include "controller/ofcd/loop.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

struct file_ev {
	unsigned mask;
	loop_file_fn *fn;
	void *ctx;
};

struct timer_ev {
	uint64_t id; /* 0: free slot */
	int64_t when_ms;
	loop_timer_fn *fn;
	void *ctx;
};

struct loop {
	int epfd;
	int setsize;
	struct file_ev *files;
	struct epoll_event *fired;
	struct timer_ev *timers;
	size_t ntimers, cap_timers;
	uint64_t next_timer_id;
	bool stop;
};

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

struct loop *loop_new(int setsize, struct ofc_error *err)
{
	struct loop *l;
	int fd = epoll_create1(EPOLL_CLOEXEC);

	if (fd < 0) {
		ofc_error_set(err, OFC_E_RUNTIME, "epoll_create1: %s", strerror(errno));
		return NULL;
	}
	l = xcalloc(1, sizeof(*l));
	l->epfd = fd;
	l->setsize = setsize;
	l->files = xcalloc((size_t)setsize, sizeof(*l->files));
	l->fired = xcalloc((size_t)setsize, sizeof(*l->fired));
	return l;
}

void loop_free(struct loop *l)
{
	if (!l)
		return;
	close(l->epfd);
	free(l->files);
	free(l->fired);
	free(l->timers);
	free(l);
}

static int epoll_set(struct loop *l, int fd, unsigned old, unsigned mask)
{
	struct epoll_event ev = {.data.fd = fd};

	if (mask & LOOP_READ)
		ev.events |= EPOLLIN;
	if (mask & LOOP_WRITE)
		ev.events |= EPOLLOUT;
	if (!mask)
		return epoll_ctl(l->epfd, EPOLL_CTL_DEL, fd, &ev);
	return epoll_ctl(l->epfd, old ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, fd, &ev);
}

int loop_add(struct loop *l, int fd, unsigned mask, loop_file_fn *fn, void *ctx)
{
	struct file_ev *fe;

	if (fd < 0 || fd >= l->setsize)
		return -1;
	fe = &l->files[fd];
	if ((fe->mask | mask) != fe->mask && epoll_set(l, fd, fe->mask, fe->mask | mask) < 0)
		return -1;
	fe->mask |= mask;
	if (fn) {
		fe->fn = fn;
		fe->ctx = ctx;
	}
	return 0;
}

void loop_del(struct loop *l, int fd, unsigned mask)
{
	struct file_ev *fe;

	if (fd < 0 || fd >= l->setsize)
		return;
	fe = &l->files[fd];
	if (!(fe->mask & mask))
		return;
	/* A failure here means the fd is already closed: nothing to undo. */
	(void)epoll_set(l, fd, fe->mask, fe->mask & ~mask);
	fe->mask &= ~mask;
}

unsigned loop_mask(const struct loop *l, int fd)
{
	return fd >= 0 && fd < l->setsize ? l->files[fd].mask : 0;
}

uint64_t loop_timer(struct loop *l, int64_t ms, loop_timer_fn *fn, void *ctx)
{
	size_t i;

	for (i = 0; i < l->ntimers && l->timers[i].id; i++)
		;
	if (i == l->ntimers) {
		GROW(l->timers, l->cap_timers, l->ntimers + 1);
		l->ntimers++;
	}
	l->timers[i] = (struct timer_ev){++l->next_timer_id, now_ms() + ms, fn, ctx};
	return l->timers[i].id;
}

void loop_timer_del(struct loop *l, uint64_t id)
{
	for (size_t i = 0; i < l->ntimers; i++)
		if (l->timers[i].id == id)
			l->timers[i].id = 0;
}

static int next_timeout(const struct loop *l)
{
	int64_t now = now_ms(), best = -1;

	for (size_t i = 0; i < l->ntimers; i++) {
		int64_t d;

		if (!l->timers[i].id)
			continue;
		d = l->timers[i].when_ms - now;
		if (d < 0)
			d = 0;
		if (best < 0 || d < best)
			best = d;
	}
	return best > 1000000 ? 1000000 : (int)best;
}

static int due_cmp(const void *a, const void *b)
{
	const struct timer_ev *x = a, *y = b;

	if (x->when_ms != y->when_ms)
		return x->when_ms < y->when_ms ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* The timers due now, earliest deadline first (ties: first added), each
 * once: a loop that woke late (a loaded machine) still fires them in the
 * order they were due, not in the order of their slots. A callback may
 * add or delete timers: the due ones are found again by id. */
static void run_timers(struct loop *l)
{
	int64_t now = now_ms();
	size_t ndue = 0;

	for (size_t i = 0; i < l->ntimers; i++)
		ndue += l->timers[i].id && l->timers[i].when_ms <= now;
	if (ndue == 0)
		return;
	struct timer_ev *due = xmalloc(ndue * sizeof(*due));

	ndue = 0;
	for (size_t i = 0; i < l->ntimers; i++)
		if (l->timers[i].id && l->timers[i].when_ms <= now)
			due[ndue++] = l->timers[i];
	qsort(due, ndue, sizeof(*due), due_cmp);
	for (size_t k = 0; k < ndue; k++) {
		size_t i = 0;

		while (i < l->ntimers && l->timers[i].id != due[k].id)
			i++;
		if (i == l->ntimers)
			continue; /* deleted by an earlier callback */
		int64_t again = due[k].fn(l, due[k].id, due[k].ctx);

		/* Index, not pointer: a callback may add timers and move the
		 * array. */
		if (l->timers[i].id != due[k].id)
			continue; /* deleted by its own callback */
		if (again == LOOP_NOMORE)
			l->timers[i].id = 0;
		else
			l->timers[i].when_ms = now_ms() + again;
	}
	free(due);
}

int loop_run(struct loop *l, struct ofc_error *err)
{
	l->stop = false;
	while (!l->stop) {
		int n = epoll_wait(l->epfd, l->fired, l->setsize, next_timeout(l));

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return ofc_error_set(err, OFC_E_RUNTIME, "epoll_wait: %s", strerror(errno));
		}
		for (int i = 0; i < n; i++) {
			int fd = l->fired[i].data.fd;
			unsigned ev = l->fired[i].events, mask = 0;
			struct file_ev *fe = &l->files[fd];

			/* Errors and hang-ups are reported as readable: the read
			 * returns 0 or the error, and the callback cleans up. */
			if (ev & (EPOLLIN | EPOLLERR | EPOLLHUP))
				mask |= LOOP_READ;
			if (ev & (EPOLLOUT | EPOLLERR | EPOLLHUP))
				mask |= LOOP_WRITE;
			mask &= fe->mask;
			/* An earlier callback of this batch may have closed fd. */
			if (mask && fe->fn)
				fe->fn(l, fd, fe->ctx, mask);
		}
		run_timers(l);
	}
	return 0;
}

void loop_stop(struct loop *l)
{
	l->stop = true;
}
