/* The verifier on a general network (verify_opts.network): each transfer
 * on an arc of the network, each step within every arc's and capacity
 * set's bandwidth times the step time, and vertices that cannot store,
 * copy or reduce held to what they may do. */
#include "sched/verify_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_rmove(const void *a, const void *b)
{
	const struct rmove *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return (x->xfer > y->xfer) - (x->xfer < y->xfer);
}

/* The arc a transfer uses (its port, else the first arc to dst), its load
 * in this step, its cost; REDUCE only into a vertex that can reduce. */
int verify_check_net_link(struct vstate *v, uint32_t t, size_t xi)
{
	const struct verify_network *nw = v->net;
	const struct xfer *x = &v->s->xfers[xi];
	uint32_t first = v->out_off[x->src], deg = v->out_off[x->src + 1] - first, arc = UINT32_MAX;

	if (x->lane != SCHED_NO_LANE) {
		if (x->lane >= deg || nw->head[v->out_arc[first + x->lane]] != x->dst)
			return verify_fail(v, t, xi, "port %u of node %u does not lead to node %u",
					   x->lane, x->src, x->dst);
		arc = v->out_arc[first + x->lane];
	} else {
		for (uint32_t k = 0; k < deg && arc == UINT32_MAX; k++)
			if (nw->head[v->out_arc[first + k]] == x->dst)
				arc = v->out_arc[first + k];
		if (arc == UINT32_MAX)
			return verify_fail(v, t, xi, "there is no arc %u -> %u in the network",
					   x->src, x->dst);
	}
	if (xfer_op(x) == XFER_REDUCE && !net_can(v, x->dst, VERIFY_REDUCE))
		return verify_fail(v, t, xi, "node %u cannot reduce", x->dst);
	if (v->a_stamp[arc] != t + 1) {
		v->a_stamp[arc] = t + 1;
		v->a_load[arc] = 0;
		v->a_count[arc] = 0;
		if (v->ntarcs == v->cap_tarcs)
			GROW(v->tarcs, v->cap_tarcs, v->ntarcs + 1);
		v->tarcs[v->ntarcs++] = arc;
	}
	v->a_load[arc] += x->length;
	v->a_count[arc]++;
	if (nw->cost)
		v->r->network_cost += nw->cost[arc] * sched_frac(x->length);
	return 0;
}

/* Per step: every arc and capacity set within step_time x bandwidth. A
 * transfer's length is rounded to 2^-31 of a block, so each one loaded on
 * an arc or set may add that much. */
int verify_check_net_capacity(struct vstate *v, uint32_t t)
{
	const struct verify_network *nw = v->net;
	double tol = nw->tolerance > 0 ? nw->tolerance : 1e-9, ulp = 1.0 / SCHED_ONE;
	double st = nw->step_times ? nw->step_times[t] : nw->step_time;

	for (size_t i = 0; i < v->ntarcs; i++) {
		uint32_t a = v->tarcs[i];
		double load = (double)v->a_load[a] / SCHED_ONE;

		if (!isinf(nw->bw[a])) {
			double lim = st * nw->bw[a];

			if (lim > 0 && load / lim > v->r->max_utilisation)
				v->r->max_utilisation = load / lim;
			if (load > lim * (1 + tol) + ulp * v->a_count[a])
				return verify_fail(
				    v, t, SIZE_MAX,
				    "step %u: arc %u -> %u carries %.9g blocks, over its "
				    "%.9g (step time x bandwidth)",
				    t + 1, nw->tail[a], nw->head[a], load, lim);
		}
		for (uint32_t j = v->aset_off[a]; j < v->aset_off[a + 1]; j++) {
			uint32_t sidx = v->aset[j];

			if (v->s_stamp[sidx] != t + 1) {
				v->s_stamp[sidx] = t + 1;
				v->s_load[sidx] = 0;
				v->s_count[sidx] = 0;
			}
			v->s_load[sidx] += v->a_load[a];
			v->s_count[sidx] += v->a_count[a];
		}
	}
	for (size_t i = 0; i < v->ntarcs; i++) {
		uint32_t a = v->tarcs[i];

		for (uint32_t j = v->aset_off[a]; j < v->aset_off[a + 1]; j++) {
			uint32_t sidx = v->aset[j];
			double load = (double)v->s_load[sidx] / SCHED_ONE;
			double lim = st * nw->set_bw[sidx];

			if (lim > 0 && load / lim > v->r->max_utilisation)
				v->r->max_utilisation = load / lim;
			if (load > lim * (1 + tol) + ulp * v->s_count[sidx])
				return verify_fail(
				    v, t, SIZE_MAX,
				    "step %u: capacity set %u carries %.9g blocks, over its "
				    "%.9g (step time x bandwidth)",
				    t + 1, sidx, load, lim);
		}
	}
	v->ntarcs = 0;
	return 0;
}

/* Copy mode: sends from restricted vertices, against what they may send. A
 * vertex that cannot store sends only what arrived in the step before; one
 * that cannot copy sends each piece at most as often as it arrived. */
int verify_check_rsends(struct vstate *v, uint32_t t)
{
	if (v->nrs > 1)
		qsort(v->rs, v->nrs, sizeof(*v->rs), cmp_rmove);
	for (size_t i = 0; i < v->nrs;) {
		size_t j = i;
		uint64_t key = v->rs[i].key;
		uint32_t node = (uint32_t)(key / v->nblocks);
		bool store = net_can(v, node, VERIFY_STORE), copy = net_can(v, node, VERIFY_COPY);
		struct seglist *avail = verify_map_get(store ? &v->rheld : &v->rprev, key, false);
		struct seglist tmp = {0};

		while (j < v->nrs && v->rs[j].key == key)
			j++;
		if (avail && avail->n) {
			tmp.v = xmalloc(avail->n * sizeof(struct seg));
			memcpy(tmp.v, avail->v, avail->n * sizeof(struct seg));
			tmp.n = tmp.cap = avail->n;
		}
		for (size_t k = i; k < j; k++) {
			const struct rmove *m = &v->rs[k];
			bool held = avail && seglist_covers(avail, m->lo, m->hi);

			if (!held) {
				free(tmp.v);
				if (!store)
					return verify_fail(
					    v, t, m->xfer,
					    "node %u cannot store: it may send only what it "
					    "received in the step before",
					    node);
				return verify_fail(v, t, m->xfer, "node %u does not hold that data",
						   node);
			}
			if (!copy && verify_seg_apply(&tmp, m->lo, m->hi, -1, 0, false) < 0) {
				free(tmp.v);
				return verify_fail(
				    v, t, m->xfer,
				    "node %u cannot copy: it sends that data more often "
				    "than it received it",
				    node);
			}
		}
		if (store && !copy && avail) { /* it moves, not copies: the rest stays */
			free(avail->v);
			*avail = tmp;
		} else {
			free(tmp.v);
		}
		i = j;
	}
	v->nrs = 0;
	return 0;
}

/* Deliveries to restricted vertices, then the step's turnover: what a
 * vertex that cannot store received in the step before is gone. */
void verify_apply_rdeliveries(struct vstate *v)
{
	for (size_t i = 0; i < v->nrd; i++) {
		const struct rmove *m = &v->rd[i];
		uint32_t node = (uint32_t)(m->key / v->nblocks);
		bool store = net_can(v, node, VERIFY_STORE);

		if (v->reduce) {
			/* Vertices that cannot store keep packets: partial results
			 * pass a switch side by side, each forwarded once. A
			 * reduction folds into a packet of the same part. */
			struct seglist *l = verify_map_get(&v->rcur, m->key, true);
			uint32_t k = 0;

			if (m->op == XFER_REDUCE)
				for (k = 0; k < l->n; k++)
					if (l->v[k].lo == m->lo && l->v[k].hi == m->hi)
						break;
			if (m->op == XFER_REDUCE && k < l->n) {
				l->v[k].count += m->count;
				l->v[k].hash += m->hash;
			} else {
				seglist_push(l, (struct seg){m->lo, m->hi, m->count, m->hash});
			}
			continue;
		}
		struct seglist *l = verify_map_get(store ? &v->rheld : &v->rcur, m->key, true);

		verify_seg_apply(l, m->lo, m->hi, 1, 0, false);
	}
	v->nrd = 0;
	struct segmap sw = v->rprev;

	verify_map_clear(&sw);
	v->rprev = v->rcur;
	v->rcur = sw;
}

static uint32_t *csr_by(uint32_t n, uint32_t m, const uint32_t *key, uint32_t **items)
{
	uint32_t *off = xcalloc((size_t)n + 2, sizeof(uint32_t));

	*items = xmalloc(((size_t)m + 1) * sizeof(uint32_t));
	for (uint32_t i = 0; i < m; i++)
		off[key[i] + 2]++;
	for (uint32_t u = 0; u < n; u++)
		off[u + 2] += off[u + 1];
	for (uint32_t i = 0; i < m; i++)
		(*items)[off[key[i] + 1]++] = i;
	return off;
}

int verify_setup_network(struct vstate *v)
{
	const struct verify_network *nw = v->o->network;
	uint32_t n = v->n;

	v->net = nw;
	if (nw->nodes != n)
		return verify_fail(v, 0, SIZE_MAX, "the schedule has %u nodes, the network %u", n,
				   nw->nodes);
	if (!(nw->step_time > 0))
		return verify_fail(v, 0, SIZE_MAX, "the network needs a step time > 0");
	for (uint32_t t = 0; nw->step_times && t < v->s->nsteps; t++)
		if (!(nw->step_times[t] > 0))
			return verify_fail(v, t, SIZE_MAX,
					   "step %u: the network needs a step time > 0", t + 1);
	v->term = xcalloc(n + 1, 1);
	for (uint32_t u = 0; u < n; u++)
		if (nw->kind[u] & VERIFY_TERMINAL) {
			if ((nw->kind[u] & (VERIFY_STORE | VERIFY_COPY)) !=
			    (VERIFY_STORE | VERIFY_COPY))
				return verify_fail(v, 0, SIZE_MAX,
						   "terminal %u must store and copy", u);
			v->term[u] = 1;
			v->nterm++;
		}
	if ((v->s->collective == SCHED_BROADCAST || v->s->collective == SCHED_REDUCE) &&
	    !v->term[v->s->root])
		return verify_fail(v, 0, SIZE_MAX, "the root %u is not a terminal", v->s->root);
	v->ninputs = v->nterm;
	for (uint32_t a = 0; a < nw->narcs; a++)
		if (nw->tail[a] >= n || nw->head[a] >= n)
			return verify_fail(v, 0, SIZE_MAX, "network arc %u has an end out of range",
					   a);
	v->out_off = csr_by(n, nw->narcs, nw->tail, &v->out_arc);
	/* arc -> sets */
	uint32_t total = nw->nsets ? nw->set_off[nw->nsets] : 0;
	uint32_t *owner = xmalloc(((size_t)total + 1) * sizeof(uint32_t));
	uint32_t *arcs = xmalloc(((size_t)total + 1) * sizeof(uint32_t));

	for (uint32_t sidx = 0; sidx < nw->nsets; sidx++)
		for (uint32_t j = nw->set_off[sidx]; j < nw->set_off[sidx + 1]; j++) {
			if (nw->set_arc[j] >= nw->narcs) {
				free(owner);
				free(arcs);
				return verify_fail(v, 0, SIZE_MAX, "capacity set %u names no arc",
						   sidx);
			}
			owner[j] = sidx;
			arcs[j] = nw->set_arc[j];
		}
	uint32_t *idx;

	v->aset_off = csr_by(nw->narcs, total, arcs, &idx);
	v->aset = xmalloc(((size_t)total + 1) * sizeof(uint32_t));
	for (uint32_t j = 0; j < total; j++)
		v->aset[j] = owner[idx[j]];
	free(idx);
	free(owner);
	free(arcs);
	v->a_stamp = xcalloc((size_t)nw->narcs + 1, sizeof(uint32_t));
	v->a_count = xcalloc((size_t)nw->narcs + 1, sizeof(uint32_t));
	v->a_load = xcalloc((size_t)nw->narcs + 1, sizeof(uint64_t));
	v->s_stamp = xcalloc((size_t)nw->nsets + 1, sizeof(uint32_t));
	v->s_count = xcalloc((size_t)nw->nsets + 1, sizeof(uint32_t));
	v->s_load = xcalloc((size_t)nw->nsets + 1, sizeof(uint64_t));
	return 0;
}
