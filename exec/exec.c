/* The agents: one thread per host (exec.h says what they do). The run:
 *
 *   every agent enters its namespace and listens        -- barrier
 *   connects to the far ends it sends to, accepts        -- barrier, clock starts
 *   follows the steps (self-timed), then stops its clock -- barrier
 *   checks its data against the expected result
 *
 * Connections are keyed (src, dst, lane) from the schedule's transfers; a
 * connection's send side belongs to src's thread, its receive side to
 * dst's, so no state is shared between agents but the stop flag, the
 * error and the progress counters.
 *
 * Before any of it one pass over the transfers counts what the
 * run will hold (exec_memory: blocks, the expected result, each host's
 * transfers and the steps it takes part in, the connections) and the run
 * is refused with that figure when it does not fit; nothing is held per
 * step and host. A host walks only the steps it sends or receives in, and
 * only its own transfers and connections in each: a schedule of 52 M empty
 * steps costs nothing to run, where every host once stepped through all of
 * them (92 s, past --timeout 60) with 8 bytes each for their times. */
#include "exec/internal.h"

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#define TMP_BYTES   (256u << 10) /* reduce: received bytes are added from here */
#define NO_SLOT	    UINT32_MAX
#define CLOCK_XFERS 65536 /* transfers between two looks at the deadline */

struct seg {
	const uint8_t *p;
	size_t len;
};

struct conn {
	uint64_t key; /* src << 32 | dst << 16 | lane */
	int sfd, rfd;
	/* send side (src's thread): this step's segments */
	struct seg *segs;
	size_t nsegs, cap_segs, cur, done;
	/* receive side (dst's thread): this step's transfers, in order */
	size_t *rx;
	size_t nrx, cap_rx, rcur, rdone;
	uint8_t carry[4]; /* reduce: bytes of an element not yet complete */
	unsigned ncarry;
};

struct agent {
	struct run *run;
	uint32_t u;
	uint32_t *slot; /* block -> slot (NO_SLOT: never touched) */
	uint32_t nslots;
	uint32_t *data;	    /* nslots * E elements (by slot_off under block weights) */
	uint64_t *slot_off; /* block weights: slot -> its first element, nslots + 1 */
	uint8_t *stage;
	size_t cap_stage; /* the largest step's sends (reduce collectives) */
	uint32_t *tmp;
	/* The transfers u sends or receives, in schedule order; the steps it
	 * takes part in (act), their transfers xf[act_off[i], act_off[i + 1])
	 * and when u finished each. */
	uint32_t *xf, nxf;
	uint32_t *act, *act_off, nact;
	double *act_end;
	struct conn **own; /* the connections u sends or receives on */
	uint32_t nown;
	atomic_uint step; /* the first step u has not finished */
	double start;	  /* when it left the barrier: the run's clock starts at the first */
	double end;
	uint64_t sent;
	uint64_t bad, checked;
	char first_bad[200];
};

struct run {
	const struct schedule *s;
	const struct exec_net *net;
	const struct exec_opts *o;
	uint32_t n, nblocks;
	uint64_t E;   /* elements per block (under block weights: a weight of 1's) */
	uint64_t *Eb; /* block weights (all-to-all): each block's elements, else NULL */
	uint64_t seed;
	struct conn *conns;
	size_t nconns;
	uint32_t *xconn; /* transfer -> its connection */
	struct agent *ag;
	uint32_t *expect; /* allgather, reduce-scatter, allreduce: the result, N * E */
	pthread_barrier_t bar;
	int stopfd;
	atomic_bool stop;
	atomic_uint done;
	pthread_mutex_t mu;
	bool failed;
	struct ofc_error err;
	double deadline;
};

static uint64_t conn_key(uint32_t src, uint32_t dst, uint32_t lane)
{
	return (uint64_t)src << 32 | (uint64_t)dst << 16 | (lane & 0xffffu);
}

/* Input element i of block b at node u: splitmix64 of the three. */
static inline uint32_t value(uint64_t seed, uint32_t u, uint32_t b, uint64_t i)
{
	uint64_t x = seed + u * 0x9e3779b97f4a7c15ull + b * 0xd1b54a32d192ed03ull +
		     i * 0xbf58476d1ce4e5b9ull;

	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	x ^= x >> 31;
	return (uint32_t)x;
}

static void fail(struct run *r, const struct ofc_error *e)
{
	uint64_t one = 1;

	pthread_mutex_lock(&r->mu);
	if (!r->failed) {
		r->failed = true;
		r->err = *e;
	}
	pthread_mutex_unlock(&r->mu);
	atomic_store(&r->stop, true);
	(void)!write(r->stopfd, &one, sizeof(one));
}

static struct conn *find_conn(struct run *r, uint64_t key)
{
	size_t lo = 0, hi = r->nconns;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (r->conns[mid].key < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < r->nconns && r->conns[lo].key == key ? &r->conns[lo] : NULL;
}

/* Elements of block b: E, or its own under block weights. */
static inline uint64_t elems(const struct run *r, uint32_t b)
{
	return r->Eb ? r->Eb[b] : r->E;
}

/* Elements [e0, e1) of a block for the fixed-point part [off, off + len). */
static void elem_range(const struct run *r, const struct xfer *x, uint64_t *e0, uint64_t *e1)
{
	uint64_t E = elems(r, x->block);

	*e0 = (uint64_t)(((unsigned __int128)x->offset * E) >> 31);
	*e1 = (uint64_t)(((unsigned __int128)((uint64_t)x->offset + x->length) * E) >> 31);
	if (*e1 > E)
		*e1 = E;
	if (*e0 > *e1)
		*e0 = *e1;
}

static uint32_t *block_at(struct agent *a, uint32_t block)
{
	uint32_t sl = a->slot[block];

	if (sl == NO_SLOT)
		return NULL;
	return a->data + (a->slot_off ? a->slot_off[sl] : (size_t)sl * a->run->E);
}

static bool reduce_collective(const struct schedule *s)
{
	return s->collective == SCHED_REDUCE_SCATTER || s->collective == SCHED_ALLREDUCE;
}

/* ---- one step ------------------------------------------------------------ */

/* What u sends and receives in its i-th step, onto its connections. */
static int plan_step(struct agent *a, uint32_t i, struct ofc_error *err)
{
	struct run *r = a->run;
	const struct schedule *s = r->s;
	bool stage = reduce_collective(s);
	size_t used = 0;

	for (uint32_t j = a->act_off[i]; j < a->act_off[i + 1]; j++) {
		size_t k = a->xf[j];
		const struct xfer *x = &s->xfers[k];
		struct conn *c = &r->conns[r->xconn[k]];
		uint32_t *b = block_at(a, x->block);
		uint64_t e0, e1;

		if (!b)
			return ofc_error_set(err, OFC_E_RUNTIME,
					     "host %u, step %u: no block for transfer %zu", a->u,
					     a->act[i] + 1, k);
		elem_range(r, x, &e0, &e1);
		if (e1 == e0)
			continue;
		if (x->src == a->u) {
			const uint8_t *p = (const uint8_t *)(b + e0);
			size_t len = (size_t)(e1 - e0) * 4;

			if (stage) {
				/* Sized from the same transfers before the clock
				 * started (count_run): they agree. */
				if (used + len > a->cap_stage)
					return ofc_error_set(err, OFC_E_RUNTIME,
							     "host %u, step %u: sends past the "
							     "stage's %zu bytes",
							     a->u, a->act[i] + 1, a->cap_stage);
				memcpy(a->stage + used, p, len);
				p = a->stage + used;
				used += len;
			}
			GROW(c->segs, c->cap_segs, c->nsegs + 1);
			c->segs[c->nsegs++] = (struct seg){p, len};
		} else {
			GROW(c->rx, c->cap_rx, c->nrx + 1);
			c->rx[c->nrx++] = k;
		}
	}
	return 0;
}

static int do_send(struct agent *a, struct conn *c, struct ofc_error *err)
{
	while (c->cur < c->nsegs) {
		const struct seg *g = &c->segs[c->cur];
		ssize_t n =
		    send(c->sfd, g->p + c->done, g->len - c->done, MSG_DONTWAIT | MSG_NOSIGNAL);

		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				return 0;
			return ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_LOST,
					      "host %u sending to host %u: %s", a->u,
					      (uint32_t)(c->key >> 16) & 0xffffu, strerror(errno));
		}
		a->sent += (uint64_t)n;
		c->done += (size_t)n;
		if (c->done == g->len) {
			c->cur++;
			c->done = 0;
		}
	}
	return 0;
}

static int do_recv(struct agent *a, struct conn *c, struct ofc_error *err)
{
	struct run *r = a->run;

	while (c->rcur < c->nrx) {
		const struct xfer *x = &r->s->xfers[c->rx[c->rcur]];
		uint64_t e0, e1;
		uint32_t *b = block_at(a, x->block);
		size_t len;
		ssize_t n;

		elem_range(r, x, &e0, &e1);
		len = (size_t)(e1 - e0) * 4;
		if (xfer_op(x) == XFER_COPY) {
			n = recv(c->rfd, (uint8_t *)(b + e0) + c->rdone, len - c->rdone,
				 MSG_DONTWAIT);
		} else {
			size_t want = len - c->rdone;

			if (want > TMP_BYTES)
				want = TMP_BYTES;
			memcpy(a->tmp, c->carry, c->ncarry);
			n = recv(c->rfd, (uint8_t *)a->tmp + c->ncarry, want, MSG_DONTWAIT);
			if (n > 0) {
				size_t have = c->ncarry + (size_t)n, whole = have / 4;
				uint32_t *d = b + e0 + (c->rdone - c->ncarry) / 4;

				for (size_t i = 0; i < whole; i++)
					d[i] += a->tmp[i];
				c->ncarry = (unsigned)(have % 4);
				memcpy(c->carry, (uint8_t *)a->tmp + whole * 4, c->ncarry);
			}
		}
		if (n == 0)
			return ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_CLOSED,
					      "host %u: host %u closed the connection", a->u,
					      (uint32_t)(c->key >> 32));
		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				return 0;
			return ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_LOST,
					      "host %u receiving from host %u: %s", a->u,
					      (uint32_t)(c->key >> 32), strerror(errno));
		}
		c->rdone += (size_t)n;
		if (c->rdone == len) {
			c->rcur++;
			c->rdone = 0;
			c->ncarry = 0;
		}
	}
	return 0;
}

/* u's i-th step: its sends and receives to the end, within the deadline. */
static int run_step(struct agent *a, uint32_t i, struct pollfd *pf, struct conn **pc,
		    struct ofc_error *err)
{
	struct run *r = a->run;
	uint32_t t = a->act[i];

	for (uint32_t k = 0; k < a->nown; k++) {
		struct conn *c = a->own[k];

		if ((uint32_t)(c->key >> 32) == a->u)
			c->nsegs = c->cur = c->done = 0;
		else
			c->nrx = c->rcur = c->rdone = 0, c->ncarry = 0;
	}
	if (plan_step(a, i, err) < 0)
		return -1;
	for (;;) {
		size_t np = 1;
		double left;
		int pr;

		pf[0] = (struct pollfd){.fd = r->stopfd, .events = POLLIN};
		for (uint32_t k = 0; k < a->nown; k++) {
			struct conn *c = a->own[k];

			if ((uint32_t)(c->key >> 32) == a->u) {
				if (c->cur == c->nsegs)
					continue;
				if (do_send(a, c, err) < 0)
					return -1;
				if (c->cur < c->nsegs) {
					pc[np] = c;
					pf[np++] = (struct pollfd){.fd = c->sfd, .events = POLLOUT};
				}
			} else if (c->rcur < c->nrx) {
				if (do_recv(a, c, err) < 0)
					return -1;
				if (c->rcur < c->nrx) {
					pc[np] = c;
					pf[np++] = (struct pollfd){.fd = c->rfd, .events = POLLIN};
				}
			}
		}
		if (np == 1)
			return 0;
		if (atomic_load(&r->stop))
			return ofc_error_set(err, OFC_E_RUNTIME, "stopped");
		left = r->deadline - now_seconds();
		if (left <= 0)
			return ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_TIMEOUT,
					      "host %u: deadline passed in step %u of %u", a->u,
					      t + 1, r->s->nsteps);
		pr = poll(pf, np, (int)(left * 1000) + 1);
		if (pr < 0 && errno != EINTR)
			return ofc_error_set(err, OFC_E_RUNTIME, "poll: %s", strerror(errno));
	}
}

/* ---- set-up and check ---------------------------------------------------- */

static void fill_input(struct agent *a)
{
	struct run *r = a->run;
	const struct schedule *s = r->s;

	memset(a->data, 0, (a->slot_off ? a->slot_off[a->nslots] : (size_t)a->nslots * r->E) * 4);
	for (uint32_t b = 0; b < r->nblocks; b++) {
		uint32_t *d = block_at(a, b);
		bool mine = s->collective == SCHED_ALLGATHER  ? b == a->u
			    : s->collective == SCHED_ALLTOALL ? b / r->n == a->u
							      : true;

		if (!d || !mine)
			continue;
		for (uint64_t i = 0; i < elems(r, b); i++)
			d[i] = value(r->seed, a->u, b, i);
	}
}

static void check_block(struct agent *a, uint32_t b, const uint32_t *want, uint32_t origin)
{
	struct run *r = a->run;
	const uint32_t *d = block_at(a, b);

	for (uint64_t i = 0; i < elems(r, b); i++) {
		uint32_t w = want ? want[i] : value(r->seed, origin, b, i);
		uint32_t g = d ? d[i] : 0;

		a->checked++;
		if (g == w)
			continue;
		if (!a->bad++)
			snprintf(a->first_bad, sizeof(a->first_bad),
				 "host %u, block %u, element %llu: %08x where %08x was due", a->u,
				 b, (unsigned long long)i, g, w);
	}
}

static void check(struct agent *a)
{
	struct run *r = a->run;

	switch (r->s->collective) {
	case SCHED_ALLGATHER:
	case SCHED_ALLREDUCE:
		for (uint32_t b = 0; b < r->n; b++)
			check_block(a, b, r->expect + (size_t)b * r->E, 0);
		break;
	case SCHED_REDUCE_SCATTER:
		check_block(a, a->u, r->expect + (size_t)a->u * r->E, 0);
		break;
	case SCHED_ALLTOALL:
		for (uint32_t v = 0; v < r->n; v++)
			if (v != a->u && !(r->o->block_weight &&
					   !(r->o->block_weight[(size_t)v * r->n + a->u] > 0)))
				check_block(a, v * r->n + a->u, NULL, v);
		break;
	case SCHED_BROADCAST: /* refused by exec_run */
	case SCHED_REDUCE:
		break;
	}
}

struct expect_ctx {
	struct run *r;
};

static void expect_block(void *ctx, size_t b, unsigned worker)
{
	struct run *r = ((struct expect_ctx *)ctx)->r;
	uint32_t *e = r->expect + b * r->E;

	(void)worker;
	for (uint64_t i = 0; i < r->E; i++) {
		uint32_t v = 0;

		if (r->s->collective == SCHED_ALLGATHER)
			v = value(r->seed, (uint32_t)b, (uint32_t)b, i);
		else
			for (uint32_t u = 0; u < r->n; u++)
				v += value(r->seed, u, (uint32_t)b, i);
		e[i] = v;
	}
}

static void wait_barrier(struct run *r)
{
	pthread_barrier_wait(&r->bar);
}

/* u's connections: it connects the ones it sends on, accepts the others. */
static int connect_all(struct agent *a, int lfd, struct ofc_error *e)
{
	struct run *r = a->run;
	const struct exec_net *net = r->net;
	uint32_t nin = 0;

	for (uint32_t k = 0; k < a->nown && !atomic_load(&r->stop); k++) {
		struct conn *c = a->own[k];
		uint32_t dst = (uint32_t)(c->key >> 16) & 0xffffu, lane = c->key & 0xffffu;
		uint32_t local, addr;

		if ((uint32_t)(c->key >> 32) != a->u) {
			nin++;
			continue;
		}
		if (lane == SCHED_NO_LANE) {
			local = net->host_addr[a->u];
			addr = net->host_addr[dst];
		} else {
			local = net->lane_local[(size_t)a->u * net->lanes + lane];
			addr = net->lane_addr[(size_t)a->u * net->lanes + lane];
		}
		c->sfd = exec_connect(local, addr, net->tcp_port, a->u, lane, r->deadline, e);
		if (c->sfd < 0) {
			ofc_error_prefix(e, "host %u port %u", a->u, lane);
			return -1;
		}
	}
	for (uint32_t k = 0; k < nin && !atomic_load(&r->stop); k++) {
		uint32_t src, lane;
		int fd = exec_accept(lfd, r->stopfd, &src, &lane, r->deadline, e);
		struct conn *c = fd < 0 ? NULL : find_conn(r, conn_key(src, a->u, lane));

		if (fd < 0) {
			ofc_error_prefix(e, "host %u", a->u);
			return -1;
		}
		if (!c || c->rfd >= 0) {
			close(fd);
			return ofc_error_set(e, OFC_E_RUNTIME,
					     "host %u: unexpected connection from host %u lane %u",
					     a->u, src, lane);
		}
		c->rfd = fd;
	}
	return 0;
}

static void *agent_main(void *arg)
{
	struct agent *a = arg;
	struct run *r = a->run;
	struct ofc_error e = {0};
	struct pollfd *pf = xcalloc(2 * (size_t)a->nown + 2, sizeof(*pf));
	struct conn **pc = xcalloc(2 * (size_t)a->nown + 2, sizeof(*pc));
	uint32_t nin = 0, i = 0;
	int lfd = -1;
	bool ok = true;

	a->tmp = xmalloc(TMP_BYTES + 8);
	for (uint32_t k = 0; k < a->nown; k++)
		nin += (uint32_t)(a->own[k]->key >> 32) != a->u;
	if (exec_enter(r->net, a->u, &e) < 0 ||
	    (lfd = exec_listen(r->net, a->u, (int)nin + 16, &e)) < 0)
		ok = false;
	fill_input(a);
	if (a->cap_stage) {
		/* Touched before the clock starts: a fresh buffer would be
		 * faulted in page by page mid-step. */
		a->stage = xmalloc(a->cap_stage);
		memset(a->stage, 0, a->cap_stage);
	}
	if (!ok)
		fail(r, &e);
	wait_barrier(r); /* every agent listens */
	if (ok && connect_all(a, lfd, &e) < 0)
		fail(r, &e);
	wait_barrier(r); /* connected: the clock starts */
	a->start = now_seconds();
	for (; i < a->nact && !atomic_load(&r->stop); i++) {
		if (now_seconds() > r->deadline) {
			ofc_error_setr(&e, OFC_E_RUNTIME, OFC_R_TIMEOUT,
				       "host %u: deadline passed before step %u of %u", a->u,
				       a->act[i] + 1, r->s->nsteps);
			fail(r, &e);
			break;
		}
		if (run_step(a, i, pf, pc, &e) < 0) {
			if (!atomic_load(&r->stop))
				fail(r, &e);
			break;
		}
		a->act_end[i] = now_seconds();
		atomic_store(&a->step, i + 1 < a->nact ? a->act[i + 1] : r->s->nsteps);
	}
	/* The last step's reading ends the run: a second reading could land
	 * after a preemption and make the steps not add up to the run. A
	 * host with no step is done when it starts. */
	a->end = i == a->nact ? (i ? a->act_end[i - 1] : a->start) : now_seconds();
	atomic_fetch_add(&r->done, 1);
	wait_barrier(r); /* everyone is done: close and check */
	if (!atomic_load(&r->stop))
		check(a);
	if (lfd >= 0)
		close(lfd);
	free(pf);
	free(pc);
	return NULL;
}

static int cmp_u64_exec(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* 0, or -1 with "deadline passed in PHASE" once it has. */
static int deadline_check(const struct run *r, const char *phase, struct ofc_error *err)
{
	if (now_seconds() <= r->deadline)
		return 0;
	return ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_TIMEOUT, "deadline passed in %s", phase);
}

/* Transfer k against the hosts and their circuits. */
static int check_transfer(const struct run *r, size_t k, struct ofc_error *err)
{
	const struct xfer *x = &r->s->xfers[k];
	const struct exec_net *net = r->net;

	if (x->src >= r->n || x->dst >= r->n || x->src == x->dst || x->block >= r->nblocks)
		return ofc_error_set(
		    err, OFC_E_INPUT,
		    "transfer %zu (%u -> %u, block %u) is outside the schedule's %u "
		    "nodes",
		    k, x->src, x->dst, x->block, r->n);
	if (x->run) /* the hosts between would forward: not modelled here */
		return ofc_error_set(
		    err, OFC_E_INPUT,
		    "transfer %zu crosses %u arcs cut-through (a run): the testbed "
		    "runs one hop per transfer",
		    k, xfer_arcs(x));
	if (x->lane != SCHED_NO_LANE) {
		size_t i = (size_t)x->src * net->lanes + x->lane;

		if (x->lane >= net->lanes || net->lane_peer[i] != x->dst)
			return ofc_error_set(err, OFC_E_INPUT,
					     "transfer %zu goes from host %u to host %u on port "
					     "%u, but that port %s",
					     k, x->src, x->dst, x->lane,
					     x->lane >= net->lanes ||
						     net->lane_peer[i] == UINT32_MAX
						 ? "has no circuit"
						 : "reaches another host (is the testbed at the "
						   "config's topology?)");
	}
	return 0;
}

/* One pass over the transfers, holding nothing per transfer: each checked,
 * and per host its transfers (nxf), the steps it takes part in (nact) and,
 * for the reduce collectives, its largest step's sends (cap_stage). */
static int count_run(struct run *r, struct ofc_error *err)
{
	const struct schedule *s = r->s;
	bool stage = reduce_collective(s);
	uint32_t *last = xmalloc(((size_t)r->n + 1) * sizeof(uint32_t));
	uint64_t *sends = xcalloc((size_t)r->n + 1, sizeof(uint64_t));
	int rc = 0;

	memset(last, 0xff, ((size_t)r->n + 1) * sizeof(uint32_t));
	for (uint32_t t = 0; t < s->nsteps && rc == 0; t++)
		for (size_t k = s->step_start[t]; k < s->step_start[t + 1] && rc == 0; k++) {
			const struct xfer *x = &s->xfers[k];
			uint32_t end[2] = {x->src, x->dst};
			uint64_t e0, e1;

			if ((k + 1) % CLOCK_XFERS == 0 && deadline_check(r, "set-up", err) < 0)
				rc = -1;
			else if (check_transfer(r, k, err) < 0)
				rc = -1;
			for (int i = 0; i < 2 && rc == 0; i++) {
				struct agent *a = &r->ag[end[i]];

				a->nxf++;
				if (last[end[i]] != t) {
					last[end[i]] = t;
					a->nact++;
					sends[end[i]] = 0;
				}
			}
			if (rc < 0 || !stage)
				continue;
			elem_range(r, x, &e0, &e1);
			sends[x->src] += (e1 - e0) * 4;
			if (sends[x->src] > r->ag[x->src].cap_stage)
				r->ag[x->src].cap_stage = (size_t)sends[x->src];
		}
	free(last);
	free(sends);
	return rc;
}

/* What a run holds beyond the schedule (exec_memory and exec_run share it):
 * the hosts' blocks (slots in all), the expected result, the stages, the
 * slot tables and receive scratch; per transfer its connection, its place
 * in its two hosts' lists, a key while the connections are found and room
 * in a step's segment and receive lists; per (host, step) taken part in 16
 * bytes; per connection its state, its place in two hosts' lists and their
 * poll entries; with step_times 8 bytes a step. */
struct exec_counts {
	uint64_t slots, stage, act, conns;
};

static uint64_t exec_bytes(enum sched_collective c, uint32_t n, uint64_t nsteps, uint64_t nxfers,
			   uint64_t size, const struct exec_counts *k, bool step_times)
{
	uint64_t block = size / n / 4 * 4, nblocks = c == SCHED_ALLTOALL ? (uint64_t)n * n : n;
	double b = (double)k->slots * (double)block + (double)k->stage;

	if (c != SCHED_ALLTOALL)
		b += (double)n * (double)block;
	b += (double)n * ((double)(nblocks + 1) * 4 + TMP_BYTES + 8 + 2 * sizeof(struct agent));
	b += (double)nxfers * (4 + 2 * 4 + 8 + sizeof(struct seg) + sizeof(size_t));
	b += (double)k->act * (4 + 4 + 8);
	b += (double)k->conns * (sizeof(struct conn) + 2 * sizeof(void *) +
				 2 * (sizeof(struct pollfd) + sizeof(void *)));
	b += step_times ? (double)nsteps * sizeof(double) : 0;
	return b < 1.8e19 ? (uint64_t)b : UINT64_MAX;
}

/* Connections: at most one per transfer, and per ordered pair of hosts one
 * per lane and one without. */
static uint64_t conns_bound(uint32_t n, uint32_t lanes, uint64_t nxfers)
{
	uint64_t most = (uint64_t)n * (n - 1) * ((uint64_t)lanes + 1);

	return nxfers < most ? nxfers : most;
}

uint64_t exec_memory_bound(enum sched_collective c, uint32_t nodes, uint32_t lanes, uint64_t nsteps,
			   uint64_t nxfers, uint64_t size, bool step_times)
{
	uint64_t n = nodes < 2 ? 2 : nodes, block = size / n / 4 * 4;
	struct exec_counts k = {.slots = n * n,
				.act = 2 * nxfers < n * nsteps ? 2 * nxfers : n * nsteps,
				.conns = conns_bound((uint32_t)n, lanes, nxfers)};

	if (c == SCHED_ALLTOALL) /* its own blocks, and one per transfer at both ends */
		k.slots = n * n + 2 * nxfers < n * n * n ? n * n + 2 * nxfers : n * n * n;
	if (c == SCHED_REDUCE_SCATTER || c == SCHED_ALLREDUCE)
		k.stage = n * n * block; /* a step sends what a host holds, or less */
	return exec_bytes(c, (uint32_t)n, nsteps, nxfers, size, &k, step_times);
}

/* The blocks each host holds: all N for the gather and reduce collectives;
 * for all-to-all its own, and those it receives or relays. */
static void assign_slots(struct run *r)
{
	const struct schedule *s = r->s;

	for (uint32_t u = 0; u < r->n; u++) {
		struct agent *a = &r->ag[u];

		a->slot = xmalloc(((size_t)r->nblocks + 1) * sizeof(uint32_t));
		for (uint32_t b = 0; b < r->nblocks; b++)
			a->slot[b] = s->collective == SCHED_ALLTOALL && b / r->n != u ? NO_SLOT : 0;
	}
	if (s->collective == SCHED_ALLTOALL)
		for (size_t k = 0; k < s->nxfers; k++) {
			r->ag[s->xfers[k].src].slot[s->xfers[k].block] = 0;
			r->ag[s->xfers[k].dst].slot[s->xfers[k].block] = 0;
		}
	for (uint32_t u = 0; u < r->n; u++) {
		struct agent *a = &r->ag[u];

		for (uint32_t b = 0; b < r->nblocks; b++)
			if (a->slot[b] != NO_SLOT)
				a->slot[b] = a->nslots++;
		if (!r->Eb)
			continue;
		/* block weights: each slot as long as its block */
		a->slot_off = xmalloc(((size_t)a->nslots + 1) * sizeof(uint64_t));
		a->slot_off[0] = 0;
		for (uint32_t b = 0; b < r->nblocks; b++)
			if (a->slot[b] != NO_SLOT)
				a->slot_off[a->slot[b] + 1] = a->slot_off[a->slot[b]] + r->Eb[b];
	}
}

/* The run's figure from count_run's and assign_slots' counts. */
static uint64_t run_bytes(const struct run *r)
{
	struct exec_counts k = {.conns = conns_bound(r->n, r->net->lanes, r->s->nxfers)};

	for (uint32_t u = 0; u < r->n; u++) {
		/* (under block weights: the slots' elements, in blocks of E) */
		k.slots += r->ag[u].slot_off
			       ? (r->ag[u].slot_off[r->ag[u].nslots] + r->E - 1) / r->E
			       : r->ag[u].nslots;
		k.stage += r->ag[u].cap_stage;
		k.act += r->ag[u].nact;
	}
	return exec_bytes(r->s->collective, r->n, r->s->nsteps, r->s->nxfers, r->o->size, &k,
			  r->o->step_times);
}

/* The connections, keyed from the transfers. */
static void find_conns(struct run *r)
{
	const struct schedule *s = r->s;
	uint64_t *keys = xmalloc((s->nxfers + 1) * sizeof(uint64_t));
	size_t nk = 0;

	for (size_t k = 0; k < s->nxfers; k++)
		keys[k] = conn_key(s->xfers[k].src, s->xfers[k].dst, s->xfers[k].lane);
	qsort(keys, s->nxfers, sizeof(uint64_t), cmp_u64_exec);
	for (size_t k = 0; k < s->nxfers; k++)
		nk += k == 0 || keys[k] != keys[k - 1];
	r->conns = xcalloc(nk + 1, sizeof(*r->conns));
	for (size_t k = 0; k < s->nxfers; k++)
		if (k == 0 || keys[k] != keys[k - 1]) {
			struct conn *c = &r->conns[r->nconns++];

			c->key = keys[k];
			c->sfd = c->rfd = -1;
		}
	free(keys);
}

/* Each host's transfers, the steps it takes part in, and its connections,
 * in the room count_run counted. */
static int build_lists(struct run *r, struct ofc_error *err)
{
	const struct schedule *s = r->s;

	find_conns(r);
	if (deadline_check(r, "set-up", err) < 0)
		return -1;
	r->xconn = xmalloc((s->nxfers + 1) * sizeof(uint32_t));
	for (uint32_t u = 0; u < r->n; u++) {
		struct agent *a = &r->ag[u];

		a->xf = xmalloc(((size_t)a->nxf + 1) * sizeof(uint32_t));
		a->act = xmalloc(((size_t)a->nact + 1) * sizeof(uint32_t));
		a->act_off = xmalloc(((size_t)a->nact + 1) * sizeof(uint32_t));
		a->act_end = xcalloc((size_t)a->nact + 1, sizeof(double));
		a->nxf = a->nact = 0;
	}
	for (uint32_t t = 0; t < s->nsteps; t++)
		for (size_t k = s->step_start[t]; k < s->step_start[t + 1]; k++) {
			const struct xfer *x = &s->xfers[k];
			uint32_t end[2] = {x->src, x->dst};

			if ((k + 1) % CLOCK_XFERS == 0 && deadline_check(r, "set-up", err) < 0)
				return -1;
			r->xconn[k] =
			    (uint32_t)(find_conn(r, conn_key(x->src, x->dst, x->lane)) - r->conns);
			for (int i = 0; i < 2; i++) {
				struct agent *a = &r->ag[end[i]];

				if (!a->nact || a->act[a->nact - 1] != t) {
					a->act[a->nact] = t;
					a->act_off[a->nact++] = a->nxf;
				}
				a->xf[a->nxf++] = (uint32_t)k;
			}
		}
	for (size_t i = 0; i < r->nconns; i++) {
		r->ag[r->conns[i].key >> 32].nown++;
		r->ag[(r->conns[i].key >> 16) & 0xffffu].nown++;
	}
	for (uint32_t u = 0; u < r->n; u++) {
		struct agent *a = &r->ag[u];

		a->act_off[a->nact] = a->nxf;
		a->own = xmalloc(((size_t)a->nown + 1) * sizeof(*a->own));
		a->nown = 0;
		atomic_store(&a->step, a->nact ? a->act[0] : s->nsteps);
	}
	for (size_t i = 0; i < r->nconns; i++) {
		struct agent *src = &r->ag[r->conns[i].key >> 32];
		struct agent *dst = &r->ag[(r->conns[i].key >> 16) & 0xffffu];

		src->own[src->nown++] = &r->conns[i];
		dst->own[dst->nown++] = &r->conns[i];
	}
	return 0;
}

/* The run's outcome from the hosts' readings (t0: the clock's start). The
 * last host to finish step t finished it at the latest of every host's
 * last step up to t (a host passes the steps it has no part in at once). */
static void collect(struct run *r, double t0, struct exec_result *res)
{
	const struct schedule *s = r->s;

	res->host_seconds = xcalloc(r->n, sizeof(double));
	res->nsteps = s->nsteps;
	if (r->o->step_times) {
		double most = 0;

		res->step_end = xcalloc((size_t)s->nsteps + 1, sizeof(double));
		for (uint32_t u = 0; u < r->n; u++) {
			const struct agent *a = &r->ag[u];

			most = a->start - t0 > most ? a->start - t0 : most;
			for (uint32_t i = 0; i < a->nact; i++)
				if (a->act_end[i] - t0 > res->step_end[a->act[i]])
					res->step_end[a->act[i]] = a->act_end[i] - t0;
		}
		for (uint32_t t = 0; t < s->nsteps; t++) {
			most = res->step_end[t] > most ? res->step_end[t] : most;
			res->step_end[t] = most;
		}
	}
	res->block_bytes = r->E * 4;
	res->connections = (uint32_t)r->nconns;
	res->data_ok = true;
	for (uint32_t u = 0; u < r->n; u++) {
		struct agent *a = &r->ag[u];

		res->host_seconds[u] = a->end - t0;
		res->seconds = a->end - t0 > res->seconds ? a->end - t0 : res->seconds;
		res->payload_bytes += a->sent;
		res->checked_elements += a->checked;
		if (a->bad && res->data_ok)
			snprintf(res->first_bad, sizeof(res->first_bad), "%s", a->first_bad);
		res->bad_elements += a->bad;
		res->data_ok = res->data_ok && !a->bad;
	}
}

/* The threads: started, waited for through the barriers (progress the
 * while), joined. Returns the run's clock start. */
static double run_agents(struct run *r)
{
	const struct exec_opts *o = r->o;
	pthread_t *th = xcalloc(r->n, sizeof(*th));
	double t0;

	for (uint32_t u = 0; u < r->n; u++)
		if (pthread_create(&th[u], NULL, agent_main, &r->ag[u]) != 0)
			/* Cannot happen short of resource exhaustion; the barrier
			 * counts on every agent, so there is no clean way on. */
			abort();
	wait_barrier(r); /* listening */
	wait_barrier(r); /* connected */
	t0 = now_seconds();
	while (atomic_load(&r->done) < r->n) {
		struct pollfd p = {.fd = r->stopfd, .events = POLLIN};
		uint32_t low = UINT32_MAX;

		poll(&p, 1, 100);
		for (uint32_t u = 0; u < r->n; u++) {
			uint32_t st = atomic_load(&r->ag[u].step);

			low = st < low ? st : low;
		}
		if (o->progress && !atomic_load(&r->stop))
			o->progress(o->ctx, low, r->s->nsteps, now_seconds() - t0);
	}
	wait_barrier(r); /* done */
	for (uint32_t u = 0; u < r->n; u++)
		pthread_join(th[u], NULL);
	free(th);
	/* The clock started when the first host left the barrier, not when
	 * this thread did: preempted there (16 hosts on 2 cores), its reading
	 * came after hosts had finished steps, and a step measured 0 or less. */
	for (uint32_t u = 0; u < r->n; u++)
		t0 = r->ag[u].start < t0 ? r->ag[u].start : t0;
	return t0;
}

static int refuse_memory(uint64_t need, uint64_t limit, const char *what, struct ofc_error *err)
{
	char need_s[32], max_s[32];

	fmt_size(need_s, sizeof(need_s), need);
	fmt_size(max_s, sizeof(max_s), limit);
	return ofc_error_set(err, OFC_E_RUNTIME,
			     "%s needs about %s with what the process holds, over the memory limit "
			     "of %s (--max-memory)",
			     what, need_s, max_s);
}

/* Hosts move a block at a time: spans become a transfer per block, in a
 * copy of the schedule that must fit first. */
static int run_unspanned(const struct schedule *s, const struct exec_net *net,
			 const struct exec_opts *o, uint64_t limit, struct exec_result *res,
			 struct ofc_error *err)
{
	uint64_t nx = sched_block_xfers(s);
	uint64_t need = mem_held() + nx * sizeof(struct xfer) + (uint64_t)s->nsteps * 4;
	struct schedule u;
	int rc;

	if (need > limit) {
		char what[96];

		snprintf(what, sizeof(what), "the schedule's spans as %llu transfers",
			 (unsigned long long)nx);
		return refuse_memory(need, limit, what, err);
	}
	sched_unspan(s, &u);
	rc = exec_run(&u, net, o, res, err);
	sched_free(&u);
	return rc;
}

static void run_free(struct run *r)
{
	for (size_t i = 0; i < r->nconns; i++) {
		if (r->conns[i].sfd >= 0)
			close(r->conns[i].sfd);
		if (r->conns[i].rfd >= 0)
			close(r->conns[i].rfd);
		free(r->conns[i].segs);
		free(r->conns[i].rx);
	}
	for (uint32_t u = 0; r->ag && u < r->n; u++) {
		struct agent *a = &r->ag[u];

		free(a->slot);
		free(a->slot_off);
		free(a->data);
		free(a->stage);
		free(a->tmp);
		free(a->xf);
		free(a->act);
		free(a->act_off);
		free(a->act_end);
		free(a->own);
	}
	if (r->stopfd >= 0)
		close(r->stopfd);
	free(r->ag);
	free(r->conns);
	free(r->xconn);
	free(r->expect);
	free(r->Eb);
}

int exec_run(const struct schedule *s, const struct exec_net *net, const struct exec_opts *o,
	     struct exec_result *res, struct ofc_error *err)
{
	struct run r = {.s = s, .net = net, .o = o, .n = s->nodes, .stopfd = -1};
	uint64_t need, limit = o->max_memory ? o->max_memory : mem_physical() / 2;
	int rc = -1;

	memset(res, 0, sizeof(*res));
	r.deadline = o->deadline;
	if (sched_has_spans(s))
		return run_unspanned(s, net, o, limit, res, err);
	if (s->nodes != net->nhosts)
		return ofc_error_set(err, OFC_E_INPUT,
				     "the schedule is for %u nodes, the testbed has %u hosts",
				     s->nodes, net->nhosts);
	if (s->nodes < 2 || s->nodes > EXEC_MAX_HOSTS)
		return ofc_error_set(err, OFC_E_INPUT, "runs take 2 to %u hosts, not %u",
				     EXEC_MAX_HOSTS, s->nodes);
	if (s->collective == SCHED_BROADCAST || s->collective == SCHED_REDUCE)
		return ofc_error_set(err, OFC_E_INPUT,
				     "the testbed runs allgather, reduce-scatter, allreduce and "
				     "all-to-all, not %s",
				     sched_collective_name(s->collective));
	r.nblocks = s->collective == SCHED_ALLTOALL ? r.n * r.n : r.n;
	r.E = o->size / r.n / 4;
	if (r.E == 0)
		return ofc_error_set(err, OFC_E_INPUT,
				     "--size %llu gives blocks of no whole 4-byte element on %u "
				     "hosts",
				     (unsigned long long)o->size, r.n);
	if (o->block_weight && s->collective != SCHED_ALLTOALL)
		return ofc_error_set(err, OFC_E_INPUT, "block weights are for an all-to-all");
	if (o->block_weight) {
		/* each block its weight's elements (a weight of 1: E); none past
		 * 1e6 times E (the memory check then counts them) */
		r.Eb = xmalloc(((size_t)r.nblocks + 1) * sizeof(uint64_t));
		for (uint32_t b = 0; b < r.nblocks; b++) {
			double w = o->block_weight[b];

			r.Eb[b] = w > 0 && isfinite(w) ? (uint64_t)llround(fmin(w, 1e6) * r.E) : 0;
		}
	}
	r.seed = o->seed ? o->seed : 0x6f6663657865632dull;
	r.ag = xcalloc(r.n, sizeof(*r.ag));
	for (uint32_t u = 0; u < r.n; u++) {
		r.ag[u].run = &r;
		r.ag[u].u = u;
	}
	if (count_run(&r, err) < 0)
		goto out;
	assign_slots(&r);
	need = mem_held() + run_bytes(&r);
	if (need > limit) {
		char what[160];

		snprintf(what, sizeof(what),
			 "the run (%u hosts, %llu KiB blocks, %u steps, %zu transfers)", r.n,
			 (unsigned long long)(r.E * 4 >> 10), s->nsteps, s->nxfers);
		refuse_memory(need, limit, what, err);
		goto out;
	}
	if (build_lists(&r, err) < 0)
		goto out;
	if (s->collective != SCHED_ALLTOALL) {
		struct expect_ctx ec = {&r};

		r.expect = xmalloc((size_t)r.n * r.E * 4);
		parallel_for(r.n, 1, 0, expect_block, &ec);
	}
	for (uint32_t u = 0; u < r.n; u++)
		r.ag[u].data = xmalloc((r.ag[u].slot_off ? r.ag[u].slot_off[r.ag[u].nslots]
							 : (size_t)r.ag[u].nslots * r.E) *
					   4 +
				       4);
	r.stopfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (r.stopfd < 0) {
		ofc_error_set(err, OFC_E_RUNTIME, "eventfd: %s", strerror(errno));
		goto out;
	}
	if (deadline_check(&r, "set-up", err) < 0)
		goto out;
	pthread_mutex_init(&r.mu, NULL);
	pthread_barrier_init(&r.bar, NULL, r.n + 1);
	double t0 = run_agents(&r);
	pthread_barrier_destroy(&r.bar);
	pthread_mutex_destroy(&r.mu);
	if (r.failed) {
		*err = r.err;
		goto out;
	}
	collect(&r, t0, res);
	rc = 0;
out:
	run_free(&r);
	return rc;
}

void exec_result_free(struct exec_result *r)
{
	free(r->host_seconds);
	r->host_seconds = NULL;
	free(r->step_end);
	r->step_end = NULL;
}
