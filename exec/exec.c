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
 * error and the progress counters. */
#include "exec/internal.h"

#include <errno.h>
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
#define DEFAULT_MEM (16ull << 30)

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
	uint32_t *data; /* nslots * E elements */
	uint8_t *stage;
	size_t cap_stage;
	uint32_t *tmp;
	atomic_uint step;
	double start; /* when it left the barrier: the run's clock starts at the first */
	double end;
	double *step_end; /* [t]: when this host finished step t */
	uint64_t sent;
	uint64_t bad, checked;
	char first_bad[200];
};

struct run {
	const struct schedule *s;
	const struct exec_net *net;
	const struct exec_opts *o;
	uint32_t n, nblocks;
	uint64_t E; /* elements per block */
	uint64_t seed;
	struct conn *conns;
	size_t nconns;
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

/* Elements [e0, e1) of a block for the fixed-point part [off, off + len). */
static void elem_range(const struct run *r, const struct xfer *x, uint64_t *e0, uint64_t *e1)
{
	*e0 = (uint64_t)(((unsigned __int128)x->offset * r->E) >> 31);
	*e1 = (uint64_t)(((unsigned __int128)((uint64_t)x->offset + x->length) * r->E) >> 31);
	if (*e1 > r->E)
		*e1 = r->E;
	if (*e0 > *e1)
		*e0 = *e1;
}

static uint32_t *block_at(struct agent *a, uint32_t block)
{
	uint32_t sl = a->slot[block];

	return sl == NO_SLOT ? NULL : a->data + (size_t)sl * a->run->E;
}

static bool reduce_collective(const struct schedule *s)
{
	return s->collective == SCHED_REDUCE_SCATTER || s->collective == SCHED_ALLREDUCE;
}

/* ---- one step ------------------------------------------------------------ */

/* What u sends and receives in step t, onto its connections. */
static int plan_step(struct agent *a, uint32_t t, struct ofc_error *err)
{
	struct run *r = a->run;
	const struct schedule *s = r->s;
	bool stage = reduce_collective(s);
	size_t need = 0, used = 0;

	for (size_t k = s->step_start[t]; k < s->step_start[t + 1]; k++) {
		const struct xfer *x = &s->xfers[k];
		uint64_t e0, e1;

		if (x->src != a->u)
			continue;
		elem_range(r, x, &e0, &e1);
		need += (size_t)(e1 - e0) * 4;
	}
	if (stage && need > a->cap_stage) {
		/* Normally sized before the clock starts (stage_size): a fresh
		 * buffer here would be faulted in page by page mid-step. */
		free(a->stage);
		a->stage = xmalloc(need);
		a->cap_stage = need;
	}
	for (size_t k = s->step_start[t]; k < s->step_start[t + 1]; k++) {
		const struct xfer *x = &s->xfers[k];
		uint64_t e0, e1;
		struct conn *c;
		uint32_t *b;

		if (x->src != a->u && x->dst != a->u)
			continue;
		c = find_conn(r, conn_key(x->src, x->dst, x->lane));
		b = block_at(a, x->block);
		if (!c || !b)
			return ofc_error_set(err, OFC_E_RUNTIME,
					     "host %u, step %u: no connection or block for "
					     "transfer %zu",
					     a->u, t, k);
		elem_range(r, x, &e0, &e1);
		if (e1 == e0)
			continue;
		if (x->src == a->u) {
			const uint8_t *p = (const uint8_t *)(b + e0);
			size_t len = (size_t)(e1 - e0) * 4;

			if (stage) {
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

static int run_step(struct agent *a, uint32_t t, struct pollfd *pf, struct conn **pc,
		    struct ofc_error *err)
{
	struct run *r = a->run;

	for (size_t i = 0; i < r->nconns; i++) {
		struct conn *c = &r->conns[i];

		if ((uint32_t)(c->key >> 32) == a->u)
			c->nsegs = c->cur = c->done = 0;
		if (((uint32_t)(c->key >> 16) & 0xffffu) == a->u)
			c->nrx = c->rcur = c->rdone = 0, c->ncarry = 0;
	}
	if (plan_step(a, t, err) < 0)
		return -1;
	for (;;) {
		size_t np = 1;
		double left;
		int pr;

		pf[0] = (struct pollfd){.fd = r->stopfd, .events = POLLIN};
		for (size_t i = 0; i < r->nconns; i++) {
			struct conn *c = &r->conns[i];

			if ((uint32_t)(c->key >> 32) == a->u && c->cur < c->nsegs) {
				if (do_send(a, c, err) < 0)
					return -1;
				if (c->cur < c->nsegs) {
					pc[np] = c;
					pf[np++] = (struct pollfd){.fd = c->sfd, .events = POLLOUT};
				}
			}
			if (((uint32_t)(c->key >> 16) & 0xffffu) == a->u && c->rcur < c->nrx) {
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

/* The largest step's sends of host u, so the stage is allocated and
 * touched once, before the clock starts. */
static void stage_size(struct agent *a)
{
	struct run *r = a->run;
	const struct schedule *s = r->s;
	size_t most = 0;

	if (!reduce_collective(s))
		return;
	for (uint32_t t = 0; t < s->nsteps; t++) {
		size_t need = 0;

		for (size_t k = s->step_start[t]; k < s->step_start[t + 1]; k++) {
			const struct xfer *x = &s->xfers[k];
			uint64_t e0, e1;

			if (x->src != a->u)
				continue;
			elem_range(r, x, &e0, &e1);
			need += (size_t)(e1 - e0) * 4;
		}
		most = need > most ? need : most;
	}
	if (most > a->cap_stage) {
		free(a->stage);
		a->stage = xmalloc(most);
		memset(a->stage, 0, most);
		a->cap_stage = most;
	}
}

static void fill_input(struct agent *a)
{
	struct run *r = a->run;
	const struct schedule *s = r->s;

	memset(a->data, 0, (size_t)a->nslots * r->E * 4);
	for (uint32_t b = 0; b < r->nblocks; b++) {
		uint32_t *d = block_at(a, b);
		bool mine = s->collective == SCHED_ALLGATHER  ? b == a->u
			    : s->collective == SCHED_ALLTOALL ? b / r->n == a->u
							      : true;

		if (!d || !mine)
			continue;
		for (uint64_t i = 0; i < r->E; i++)
			d[i] = value(r->seed, a->u, b, i);
	}
}

static void check_block(struct agent *a, uint32_t b, const uint32_t *want, uint32_t origin)
{
	struct run *r = a->run;
	const uint32_t *d = block_at(a, b);

	for (uint64_t i = 0; i < r->E; i++) {
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
			if (v != a->u)
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

/* u's connections: it connects the ones it sends on, accepts nin others. */
static int connect_all(struct agent *a, int lfd, uint32_t nin, struct ofc_error *e)
{
	struct run *r = a->run;
	const struct exec_net *net = r->net;

	for (size_t i = 0; i < r->nconns && !atomic_load(&r->stop); i++) {
		struct conn *c = &r->conns[i];
		uint32_t dst = (uint32_t)(c->key >> 16) & 0xffffu, lane = c->key & 0xffffu;
		uint32_t local, addr;

		if ((uint32_t)(c->key >> 32) != a->u)
			continue;
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
	const struct exec_net *net = r->net;
	struct ofc_error e = {0};
	struct pollfd *pf = xcalloc(2 * r->nconns + 2, sizeof(*pf));
	struct conn **pc = xcalloc(2 * r->nconns + 2, sizeof(*pc));
	uint32_t nin = 0;
	int lfd = -1;
	bool ok = true;

	a->tmp = xmalloc(TMP_BYTES + 8);
	for (size_t i = 0; i < r->nconns; i++)
		if (((uint32_t)(r->conns[i].key >> 16) & 0xffffu) == a->u)
			nin++;
	if (exec_enter(net, a->u, &e) < 0 || (lfd = exec_listen(net, (int)nin + 16, &e)) < 0)
		ok = false;
	fill_input(a);
	stage_size(a);
	if (!ok)
		fail(r, &e);
	wait_barrier(r); /* every agent listens */
	if (ok && connect_all(a, lfd, nin, &e) < 0)
		fail(r, &e);
	wait_barrier(r); /* connected: the clock starts */
	a->start = now_seconds();
	uint32_t t = 0;
	for (; t < r->s->nsteps && !atomic_load(&r->stop); t++) {
		if (run_step(a, t, pf, pc, &e) < 0) {
			if (!atomic_load(&r->stop))
				fail(r, &e);
			break;
		}
		a->step_end[t] = now_seconds();
		atomic_store(&a->step, t + 1);
	}
	/* The last step's reading ends the run: a second reading could land
	 * after a preemption and make the steps not add up to the run. */
	a->end = t == r->s->nsteps && t ? a->step_end[t - 1] : now_seconds();
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

/* Connections from the transfers. */
static int prepare(struct run *r, struct ofc_error *err)
{
	const struct schedule *s = r->s;
	uint64_t *keys = xmalloc((s->nxfers + 1) * sizeof(uint64_t));
	size_t nk = 0;

	for (size_t k = 0; k < s->nxfers; k++) {
		const struct xfer *x = &s->xfers[k];

		if (check_transfer(r, k, err) < 0) {
			free(keys);
			return -1;
		}
		keys[nk++] = conn_key(x->src, x->dst, x->lane);
	}
	qsort(keys, nk, sizeof(uint64_t), cmp_u64_exec);
	r->conns = xcalloc(nk + 1, sizeof(*r->conns));
	for (size_t k = 0; k < nk; k++)
		if (k == 0 || keys[k] != keys[k - 1]) {
			struct conn *c = &r->conns[r->nconns++];

			c->key = keys[k];
			c->sfd = c->rfd = -1;
		}
	free(keys);
	return 0;
}

/* The blocks each host holds: all N for the gather and reduce collectives;
 * for all-to-all its own, and those it receives or relays. */
static uint64_t assign_slots(struct run *r)
{
	const struct schedule *s = r->s;
	uint64_t total = 0;

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
		total += (uint64_t)a->nslots * r->E * 4;
	}
	return total;
}

/* The run's outcome from the hosts' readings (t0: the clock's start). */
static void collect(struct run *r, double t0, struct exec_result *res)
{
	const struct schedule *s = r->s;

	res->host_seconds = xcalloc(r->n, sizeof(double));
	res->nsteps = s->nsteps;
	res->step_end = xcalloc(s->nsteps + 1, sizeof(double));
	for (uint32_t u = 0; u < r->n; u++)
		for (uint32_t t = 0; t < s->nsteps; t++)
			if (r->ag[u].step_end[t] - t0 > res->step_end[t])
				res->step_end[t] = r->ag[u].step_end[t] - t0;
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
		free(r->ag[u].slot);
		free(r->ag[u].data);
		free(r->ag[u].stage);
		free(r->ag[u].tmp);
		free(r->ag[u].step_end);
	}
	if (r->stopfd >= 0)
		close(r->stopfd);
	free(r->ag);
	free(r->conns);
	free(r->expect);
}

int exec_run(const struct schedule *s, const struct exec_net *net, const struct exec_opts *o,
	     struct exec_result *res, struct ofc_error *err)
{
	struct run r = {.s = s, .net = net, .o = o, .n = s->nodes, .stopfd = -1};
	uint64_t mem, limit = o->max_memory ? o->max_memory : DEFAULT_MEM;
	int rc = -1;

	memset(res, 0, sizeof(*res));
	if (sched_has_spans(s)) { /* hosts move a block at a time */
		struct schedule u;

		sched_unspan(s, &u);
		rc = exec_run(&u, net, o, res, err);
		sched_free(&u);
		return rc;
	}
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
	r.seed = o->seed ? o->seed : 0x6f6663657865632dull;
	if (prepare(&r, err) < 0)
		return -1;
	r.ag = xcalloc(r.n, sizeof(*r.ag));
	mem = assign_slots(&r);
	if (s->collective != SCHED_ALLTOALL)
		mem += (uint64_t)r.n * r.E * 4;
	if (mem > limit) {
		ofc_error_set(err, OFC_E_INPUT,
			      "the run needs %.1f MiB of buffers, over the limit of %.1f MiB",
			      (double)mem / 1048576.0, (double)limit / 1048576.0);
		goto out;
	}
	if (s->collective != SCHED_ALLTOALL) {
		struct expect_ctx ec = {&r};

		r.expect = xmalloc((size_t)r.n * r.E * 4);
		parallel_for(r.n, 1, 0, expect_block, &ec);
	}
	for (uint32_t u = 0; u < r.n; u++) {
		r.ag[u].run = &r;
		r.ag[u].u = u;
		r.ag[u].step_end = xcalloc((size_t)s->nsteps + 1, sizeof(double));
		r.ag[u].data = xmalloc((size_t)r.ag[u].nslots * r.E * 4 + 4);
	}
	r.stopfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (r.stopfd < 0) {
		ofc_error_set(err, OFC_E_RUNTIME, "eventfd: %s", strerror(errno));
		goto out;
	}
	pthread_mutex_init(&r.mu, NULL);
	pthread_barrier_init(&r.bar, NULL, r.n + 1);
	r.deadline = now_seconds() + o->timeout;
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
