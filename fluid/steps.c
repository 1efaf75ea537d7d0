/* Theorem 4 (notes Sec. 3): the fluid routing as an explicit step
 * schedule. Every origin's unit is cut into K chunks; chunk k follows every
 * piece shifted by k steps, so a transfer of piece q on arc e at layer t
 * moves (hi - lo)/K of the origin's data at step t + k. A capacity set then
 * carries, in any step, 1/K of the pieces' load over a window of K
 * consecutive layers, at most R b(L) / K: steps of R/K, T + K - 1 of them,
 * latency R (T + K - 1)/K, and each layer counted K times at weight 1/K, so
 * the cost is the fluid cost. Reductions are the reversed network's
 * broadcast/allgather run backwards in time, folding (REDUCE) into every
 * vertex that can reduce. */
#include "fluid/internal.h"
#include "fluid/pipe_internal.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

uint32_t fluid_best_chunks(double r, uint32_t hops, double alpha, double size, uint32_t max_k)
{
	uint32_t best = 1;
	double bt = INFINITY;

	if (max_k == 0)
		max_k = 256;
	/* (T + K - 1)(alpha + r M / K) is convex in K (notes Sec. 5.4); a scan
	 * is exact and cheap. */
	for (uint32_t k = 1; k <= max_k; k++) {
		double t = (double)(hops + k - 1) * (alpha + r * size / k);

		if (t < bt * (1 - 1e-12)) {
			bt = t;
			best = k;
		}
	}
	return best;
}

void fluid_verify_network(const struct fluid_net *n, double step_time, struct verify_network *vn)
{
	memset(vn, 0, sizeof(*vn));
	vn->nodes = n->nverts;
	vn->kind = n->kind;
	vn->narcs = n->narcs;
	vn->tail = n->tail;
	vn->head = n->head;
	vn->bw = n->bw;
	vn->cost = n->cost;
	vn->nsets = n->nsets;
	vn->set_off = n->set_off;
	vn->set_arc = n->set_arc;
	vn->set_bw = n->set_bw;
	vn->step_time = step_time;
}

static enum sched_collective sched_coll(enum fluid_collective c)
{
	switch (c) {
	case FLUID_ALLGATHER:
		return SCHED_ALLGATHER;
	case FLUID_BROADCAST:
		return SCHED_BROADCAST;
	case FLUID_REDUCE:
		return SCHED_REDUCE;
	case FLUID_REDUCE_SCATTER:
		return SCHED_REDUCE_SCATTER;
	case FLUID_ALLTOALL:
		break;
	}
	return SCHED_ALLTOALL;
}

/* K, the chunks: as asked, else the fastest for alpha and the size, else
 * enough for the staggering to cost at most epsilon of T - 1 hops. */
static uint32_t choose_chunks(const struct fluid_steps_opts *o, double R, uint32_t T,
			      struct fluid_steps_report *rep)
{
	uint32_t maxk = o->max_chunks ? o->max_chunks : 256, K;

	if (o->chunks)
		return o->chunks;
	rep->chose_chunks = true;
	if (o->alpha > 0)
		return fluid_best_chunks(R, T, o->alpha, o->size > 0 ? o->size : 1, maxk);
	double eps = o->epsilon > 0 ? o->epsilon : 0.1;

	K = (uint32_t)ceil((T > 1 ? T - 1 : 0) / eps);
	return K < 1 ? 1 : K > maxk ? maxk : K;
}

bool fluid_chunk_of(const struct fluid_piece *q, uint32_t k, uint32_t K, uint32_t *lo, uint32_t *hi)
{
	*lo = sched_fix((k + q->lo) / K);
	*hi = sched_fix((k + q->hi) / K);
	return *hi > *lo;
}

bool pipe_cost_units(const double *cost, uint32_t narcs, uint64_t *units, int *x)
{
	int lo = INT_MAX, ex;

	/* each nonzero cost as m 2^e, m odd: X the least e */
	for (uint32_t a = 0; cost && a < narcs; a++) {
		if (cost[a] == 0)
			continue;
		if (!(cost[a] > 0) || !isfinite(cost[a]))
			return false;
		uint64_t m = (uint64_t)ldexp(frexp(cost[a], &ex), 53);

		ex -= 53;
		while (!(m & 1)) {
			m >>= 1;
			ex++;
		}
		if (m >= PIPE_COST_MANT)
			return false;
		lo = ex < lo ? ex : lo;
	}
	if (lo != INT_MAX && (lo - 31 < -1000 || lo > 900))
		return false;
	for (uint32_t a = 0; a < narcs; a++) {
		if (!cost || cost[a] == 0) {
			units[a] = 0;
			continue;
		}
		double u = ldexp(cost[a], -lo); /* an integer: exact */

		if (u >= 0x1p52)
			return false;
		units[a] = (uint64_t)u;
	}
	*x = lo == INT_MAX ? 0 : lo;
	return true;
}

void pipe_cost_add(unsigned __int128 *total, unsigned __int128 units, uint64_t parts)
{
	const unsigned __int128 cap = (unsigned __int128)1 << 53;

	if (!parts || !units)
		return;
	if (units >= cap || *total >= cap) {
		*total = cap;
		return;
	}
	*total += units * parts; /* < 2^53 2^64: no overflow */
	if (*total > cap)
		*total = cap;
}

bool pipe_cost_exact(double start, unsigned __int128 total, int x, double *sum)
{
	double m0 = ldexp(start, 31 - x);

	if (!(m0 >= 0) || m0 != floor(m0) || m0 >= 0x1p53)
		return false;
	total += (unsigned __int128)m0;
	if (total >= (unsigned __int128)1 << 53)
		return false;
	*sum = ldexp((double)(uint64_t)total, x - 31); /* < 2^53 units: exact */
	return true;
}

uint64_t pipe_piece_parts(const struct fluid_piece *q, uint32_t K)
{
	uint64_t s = 0;
	uint32_t lo, hi;

	for (uint32_t k = 0; k < K; k++)
		if (fluid_chunk_of(q, k, K, &lo, &hi))
			s += hi - lo;
	return s;
}

/* The cost summed term by term as fill_steps lays the transfers out: a
 * piece's chunks, each its hops of nonzero cost in turn (the hops of cost
 * 0 each add +0.0, which leaves a sum of costs >= 0 as it is). */
static double serial_cost(const struct fluid_net *n, const struct fluid_routing *rt, uint32_t K)
{
	uint32_t lo, hi, cap = 0;
	double *c = NULL, cost = 0; /* a piece's nonzero costs, in order */

	for (size_t i = 0; i < rt->npieces; i++) {
		const struct fluid_piece *q = &rt->pieces[i];
		uint32_t nc = 0;

		if (q->nhops > cap) {
			cap = q->nhops;
			c = xreallocarray(c, cap, sizeof(double));
		}
		for (uint32_t h = 0; h < q->nhops; h++) {
			double v = n->cost[rt->hop_arc[q->first + h]];

			if (v != 0)
				c[nc++] = v;
		}
		for (uint32_t k = 0; k < K; k++) {
			if (!fluid_chunk_of(q, k, K, &lo, &hi))
				continue;
			double f = sched_frac(hi - lo);

			for (uint32_t h = 0; h < nc; h++)
				cost += c[h] * f;
		}
	}
	free(c);
	return cost;
}

/* Transfers per step (reversed for reductions) into cnt; their total; and
 * their cost, the sum in the order fill_steps lays them out: where no add
 * of it rounds (pipe_cost_exact) that sum is the exact one, counted in
 * whole units by piece (its hops' costs times its chunks' parts), else
 * term by term (serial_cost). A piece's hops are counted by layer (T of
 * them) for each chunk: the expansion's transfers one by one were 4% of
 * the 1,024-GPU allgather, its cost term by term 6%. */
static int count_steps(const struct fluid_net *n, const struct fluid_routing *rt, uint32_t K,
		       uint32_t T, uint32_t S, bool rev, const struct fluid_steps_opts *o,
		       size_t *cnt, double *total, double *cost, struct ofc_error *err)
{
	size_t *per = xcalloc((size_t)T + 1, sizeof(size_t)); /* a piece's hops by layer */
	uint64_t *units = xmalloc(((size_t)n->narcs + 1) * sizeof(uint64_t));
	unsigned __int128 sum = 0;
	int x = 0;
	bool exact = !o->cost_in_order && pipe_cost_units(n->cost, n->narcs, units, &x);

	for (size_t i = 0; i < rt->npieces; i++) {
		const struct fluid_piece *q = &rt->pieces[i];
		unsigned __int128 h = 0;

		if (i % 4096 == 0 && clock_check(o->clock, "Theorem 4", err) < 0) {
			free(per);
			free(units);
			return -1;
		}
		memset(per, 0, ((size_t)T + 1) * sizeof(size_t));
		for (uint32_t j = 0; j < q->nhops; j++) {
			per[rt->hop_layer[q->first + j]]++;
			if (exact)
				h += units[rt->hop_arc[q->first + j]];
		}
		for (uint32_t k = 0; k < K; k++) {
			uint32_t lo, hi;

			if (!fluid_chunk_of(q, k, K, &lo, &hi))
				continue;
			for (uint32_t l = 0; l < T; l++) {
				uint32_t st = l + k;

				cnt[rev ? S - 1 - st : st] += per[l];
			}
		}
		if (exact)
			pipe_cost_add(&sum, h, pipe_piece_parts(q, K));
	}
	free(per);
	free(units);
	if (!exact || !pipe_cost_exact(0, sum, x, cost))
		*cost = serial_cost(n, rt, K);
	*total = 0;
	for (uint32_t t = 0; t < S; t++)
		*total += (double)cnt[t];
	return 0;
}

/* Refuse a schedule over what a schedule holds or the memory left. */
static int check_size(double total, uint32_t K, uint32_t S, const struct fluid_steps_opts *o,
		      struct ofc_error *err)
{
	if (total > UINT32_MAX)
		return ofc_error_set(
		    err, OFC_E_RUNTIME,
		    "Theorem 4's schedule (K = %u chunks) has %.3g transfers, more "
		    "than a schedule holds (%u); fewer chunks (--chunks) have fewer",
		    K, total, UINT32_MAX);
	if (o->max_bytes && total * sizeof(struct xfer) > (double)o->max_bytes) {
		char need_s[32], max_s[32];

		fmt_size(need_s, sizeof(need_s), (uint64_t)(total * sizeof(struct xfer)));
		fmt_size(max_s, sizeof(max_s), o->max_bytes);
		return ofc_error_set(
		    err, OFC_E_RUNTIME,
		    "Theorem 4's schedule (K = %u chunks, %u steps) needs about %s for %.3g "
		    "transfers, over the %s left of the memory limit (ofc --max-memory, ofcd "
		    "--max-request-memory); fewer chunks (--chunks) need proportionally less",
		    K, S, need_s, total, max_s);
	}
	return 0;
}

/* Piece q's hops in the order its chunks' transfers come in a step into
 * o: chunk k ascending is layer descending, then hop by hop. A stable
 * counting sort over the piece's layers (at most T of them): a tree of
 * 655 hops over 8 layers is two passes over its hops, where an insertion
 * sort moved each hop past a quarter of them (model W's 32 servers: 50
 * ms). at: T + 2 entries of scratch. */
static void piece_order(const struct fluid_routing *rt, const struct fluid_piece *q, uint32_t T,
			uint32_t *at, uint32_t *o)
{
	const uint32_t *layer = rt->hop_layer + q->first;
	uint32_t top = T - 1;

	/* at[top - l]: where the hops of layer l start */
	memset(at, 0, ((size_t)T + 2) * sizeof(uint32_t));
	for (uint32_t h = 0; h < q->nhops; h++)
		at[top - layer[h] + 1]++;
	for (uint32_t l = 0; l < T; l++)
		at[l + 1] += at[l];
	for (uint32_t h = 0; h < q->nhops; h++)
		o[at[top - layer[h]]++] = h;
}

/* A piece's sequence of layers, hashed. */
static uint64_t layers_hash(const uint32_t *layer, uint32_t n)
{
	uint64_t h = 0x9e3779b97f4a7c15ull ^ n;

	for (uint32_t i = 0; i < n; i++)
		h = (h ^ layer[i]) * 0xbf58476d1ce4e5b9ull;
	return h ^ (h >> 31);
}

/* Each arc's port (its rank among its tail's out-arcs: a transfer's
 * lane), and each piece's order (piece_order), one per distinct sequence
 * of layers, found by its hash and compared whole: a mirrored routing's
 * images of a piece share their class piece's, where an order per hop
 * was 32 MB of fresh pages at 1,024 GPUs (3 sequences among 3,072
 * pieces). The order array is reserved at one entry a hop and filled
 * only as far as the distinct ones reach. */
static void plan_order(const struct fluid_net *n, const struct fluid_routing *rt,
		       struct fluid_pipe *p)
{
	uint32_t *deg = xcalloc(n->nverts + 1, sizeof(uint32_t));
	uint32_t *at = xmalloc(((size_t)p->hops + 2) * sizeof(uint32_t));
	size_t nb = 16, used = 0;

	while (nb < 2 * rt->npieces)
		nb *= 2;
	size_t *slot = xmalloc(nb * sizeof(size_t)); /* a piece whose order is laid out */
	uint64_t *key = xmalloc(nb * sizeof(uint64_t));

	for (size_t b = 0; b < nb; b++)
		slot[b] = SIZE_MAX;
	p->port = xmalloc((n->narcs + 1) * sizeof(uint32_t));
	for (uint32_t a = 0; a < n->narcs; a++)
		p->port[a] = deg[n->tail[a]]++;
	free(deg);
	p->order = xmalloc((rt->nhops + 1) * sizeof(uint32_t));
	p->order_at = xmalloc((rt->npieces + 1) * sizeof(size_t));
	for (size_t i = 0; i < rt->npieces; i++) {
		const struct fluid_piece *q = &rt->pieces[i];
		const uint32_t *layer = rt->hop_layer + q->first;
		uint64_t h = layers_hash(layer, q->nhops);
		size_t b = h & (nb - 1);

		for (; slot[b] != SIZE_MAX; b = (b + 1) & (nb - 1)) {
			const struct fluid_piece *r = &rt->pieces[slot[b]];

			if (key[b] == h && r->nhops == q->nhops &&
			    !memcmp(rt->hop_layer + r->first, layer, q->nhops * sizeof(uint32_t)))
				break;
		}
		if (slot[b] != SIZE_MAX) {
			p->order_at[i] = p->order_at[slot[b]];
			continue;
		}
		slot[b] = i;
		key[b] = h;
		p->order_at[i] = used;
		piece_order(rt, q, p->hops, at, p->order + used);
		used += q->nhops;
	}
	p->order = xreallocarray(p->order, used + 1, sizeof(uint32_t));
	free(slot);
	free(key);
	free(at);
}

struct xfer *pipe_fill_piece(const struct fluid_pipe *p, const struct fluid_piece *q, uint32_t t,
			     struct xfer *out)
{
	const struct fluid_net *n = p->net;
	const struct fluid_routing *rt = &p->r->routing;
	uint32_t nv = n->nverts, K = p->chunks, lo, hi;
	uint32_t block =
	    p->r->collective == FLUID_ALLTOALL ? q->origin * nv + q->target : q->origin;
	const uint32_t *order = pipe_order(p, q);

	for (uint32_t j = 0; j < q->nhops; j++) {
		uint32_t h = q->first + order[j], l = rt->hop_layer[h];
		uint32_t e = rt->hop_arc[h];

		if (l > t || t - l >= K || !fluid_chunk_of(q, t - l, K, &lo, &hi))
			continue;
		bool red = p->rev && (n->kind[n->head[e]] & FLUID_CAN_REDUCE);

		*out++ = (struct xfer){
		    .src = (uint16_t)n->tail[e],
		    .dst = (uint16_t)n->head[e],
		    .block = block,
		    .offset = lo,
		    .length = hi - lo,
		    .lane = (uint16_t)(p->port[e] < SCHED_NO_LANE ? p->port[e] : SCHED_NO_LANE),
		    .flags = xfer_flags(DIR_NONE, red ? XFER_REDUCE : XFER_COPY),
		};
	}
	return out;
}

void fluid_pipe_fill_step(const struct fluid_pipe *p, uint32_t s, struct xfer *out)
{
	const struct fluid_routing *rt = &p->r->routing;
	uint32_t t = p->rev ? p->steps - 1 - s : s;

	for (size_t i = 0; i < rt->npieces; i++)
		out = pipe_fill_piece(p, &rt->pieces[i], t, out);
}

int fluid_pipeline(const struct fluid_net *n, const struct fluid_result *r,
		   const struct fluid_steps_opts *o, struct fluid_pipe *p,
		   struct fluid_steps_report *rep, struct ofc_error *err)
{
	static const struct fluid_steps_opts none = {0};
	const struct fluid_routing *rt = &r->routing;
	bool rev = r->collective == FLUID_REDUCE || r->collective == FLUID_REDUCE_SCATTER;
	uint32_t T = 0, nv = n->nverts;

	if (!o)
		o = &none;
	memset(rep, 0, sizeof(*rep));
	memset(p, 0, sizeof(*p));
	if (!rt->npieces)
		return ofc_error_set(err, OFC_E_INPUT,
				     "no routing to schedule (solve phase 2 first)");
	/* Trees reverse into reductions whether or not they meet the
	 * relaxation (inexact trees only cost more); paths to one destination
	 * do not. */
	if (rev && rt->deficit > 0)
		return ofc_error_set(err, OFC_E_RUNTIME,
				     "LP 4.2 merged flows that no tree realises (%.3g of a unit): "
				     "a reduction cannot be scheduled from per-destination paths",
				     rt->deficit);
	if (nv > SCHED_MAX_NODES)
		return ofc_error_set(err, OFC_E_INPUT, "%u vertices: a schedule has at most %u", nv,
				     SCHED_MAX_NODES);
	for (size_t i = 0; i < rt->npieces; i++)
		for (uint32_t h = 0; h < rt->pieces[i].nhops; h++)
			if (rt->hop_layer[rt->pieces[i].first + h] + 1 > T)
				T = rt->hop_layer[rt->pieces[i].first + h] + 1;
	/* The staggering bound holds for the pieces' own load: their R. */
	double R = rt->r_actual > 0 ? rt->r_actual : r->rstar, total, cost;
	uint32_t K = choose_chunks(o, R, T, rep), S = T + K - 1;
	/* Count per step, for the expansion to fill in place. */
	size_t *cnt = xcalloc(S + 1, sizeof(size_t));

	if (count_steps(n, rt, K, T, S, rev, o, cnt, &total, &cost, err) < 0) {
		free(cnt);
		return -1;
	}
	*p = (struct fluid_pipe){.net = n,
				 .r = r,
				 .chunks = K,
				 .steps = S,
				 .hops = T,
				 .rev = rev,
				 .step_time = R / K,
				 .ntransfers = total,
				 .count = cnt,
				 .threads = o->threads};
	plan_order(n, rt, p);
	rep->chunks = K;
	rep->steps = S;
	rep->hops = T;
	rep->step_time = R / K;
	rep->latency = S * rep->step_time;
	rep->predicted = S * (o->alpha + rep->step_time * (o->size > 0 ? o->size : 1));
	rep->cost = cost;
	return 0;
}

void fluid_pipe_free(struct fluid_pipe *p)
{
	free(p->count);
	free(p->port);
	free(p->order);
	free(p->order_at);
	memset(p, 0, sizeof(*p));
}

void fluid_pipe_head(const struct fluid_pipe *p, const struct fluid_steps_opts *o,
		     const struct fluid_steps_report *rep, struct schedule *s)
{
	static const struct fluid_steps_opts none = {0};
	const struct fluid_result *r = p->r;

	if (!o)
		o = &none;
	sched_init(s, sched_coll(r->collective), "fluid", p->net->nverts);
	s->root = 0;
	if (r->collective == FLUID_BROADCAST || r->collective == FLUID_REDUCE)
		s->root = r->routing.pieces[0].origin;
	s->size_bytes = (uint64_t)((o->size > 0 ? o->size : 1) * 1e9);
	s->time_us = rep->predicted * 1e6;
	sched_set_metric(s, "rstar", r->rstar);
	sched_set_metric(s, "latency_s_per_gb", rep->latency);
	sched_set_metric(s, "cost", rep->cost);
	sched_set_metric(s, "chunks", p->chunks);
	sched_set_metric(s, "hops", p->hops);
}

int fluid_pipe_expand(const struct fluid_pipe *p, const struct fluid_steps_opts *o,
		      const struct fluid_steps_report *rep, struct schedule *s,
		      struct ofc_error *err)
{
	static const struct fluid_steps_opts none = {0};

	if (!o)
		o = &none;
	memset(s, 0, sizeof(*s));
	if (check_size(p->ntransfers, p->chunks, p->steps, o, err) < 0)
		return -1;
	fluid_pipe_head(p, o, rep, s);
	struct xfer *out = sched_append_steps(s, p->steps, p->count);

	for (uint32_t t = 0; t < p->steps; t++) {
		fluid_pipe_fill_step(p, t, out);
		out += p->count[t];
	}
	return 0;
}

int fluid_schedule(const struct fluid_net *n, const struct fluid_result *r,
		   const struct fluid_steps_opts *o, struct schedule *s,
		   struct fluid_steps_report *rep, struct ofc_error *err)
{
	struct fluid_pipe p;
	int rc;

	memset(s, 0, sizeof(*s));
	if (fluid_pipeline(n, r, o, &p, rep, err) < 0)
		return -1;
	rc = fluid_pipe_expand(&p, o, rep, s, err);
	fluid_pipe_free(&p);
	return rc;
}
