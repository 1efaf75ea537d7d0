/* Devices driven side by side. A transaction's devices are independent:
 * each has its own driver connection and session, and every command it
 * sends has its own deadline (the driver's timeout and retries), so a
 * fabric of 16 switches need not wait for 15 of them one after another.
 * Reads, locks, applies, read-backs and undos run one thread per device
 * (parallel_for, at most 64 at once), and the thread that called waits for
 * them all; each thread touches only its own struct ctl_device. Every wait
 * in a driver has a deadline, so the join does too: the slowest device's.
 *
 * What a device's thread has to say (DEVICE_LOST, DEVICE_APPLIED, ...)
 * is queued per device and told on the calling thread afterwards, in
 * device order: listeners (ofcd's log and watchers, the CLI's progress)
 * are never called from two threads, and the same failure reads the same
 * whichever switch answered first. The journal is written on the calling
 * thread, before and after a drive, never during one. */
#include "controller/reconfig/internal.h"

#include <stdlib.h>
#include <string.h>

/* One device's queued events. */
struct ctl_evq {
	struct ctl_event *ev; /* message owned, device borrowed */
	uint32_t n;
	size_t cap;
};

struct each {
	struct ctl *c;
	void (*fn)(struct ctl *c, uint32_t i, void *arg);
	void *arg;
};

static void each_one(void *ctx, size_t i, unsigned worker)
{
	struct each *e = ctx;

	(void)worker;
	e->fn(e->c, (uint32_t)i, e->arg);
}

void ctl_each(struct ctl *c, void (*fn)(struct ctl *c, uint32_t i, void *arg), void *arg)
{
	struct each e = {.c = c, .fn = fn, .arg = arg};
	struct ctl_evq *q = xcalloc(c->ndevs + 1, sizeof(*q));

	c->evq = q;
	/* one thread a device: they wait on their devices, not on the CPU */
	parallel_for(c->ndevs, 1, c->ndevs ? c->ndevs : 1, each_one, &e);
	c->evq = NULL;
	for (uint32_t i = 0; i < c->ndevs; i++) {
		for (uint32_t k = 0; k < q[i].n; k++) {
			if (c->opts.on_event)
				c->opts.on_event(c->opts.ctx, &q[i].ev[k]);
			free((char *)q[i].ev[k].message);
		}
		free(q[i].ev);
	}
	free(q);
}

bool ctl_queue_event(struct ctl *c, const struct ctl_device *cd, const struct ctl_event *ev)
{
	struct ctl_evq *q;

	if (!c->evq)
		return false;
	q = &c->evq[cd - c->devs];
	GROW(q->ev, q->cap, (size_t)q->n + 1);
	q->ev[q->n] = *ev;
	q->ev[q->n].message = xstrdup(ev->message ? ev->message : "");
	q->n++;
	return true;
}
