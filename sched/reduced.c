/* Symmetry-reduced schedules (see sched.h): the translation group of a
 * Cayley family, a program of orbit representatives, its expansion, and
 * the verifier by symmetry.
 *
 * Why the check by symmetry is the explicit one: the schedule is invariant
 * under G and so is the start (node u holds its own block, or its input to
 * every shard), so by induction over the steps the state is too: node v
 * holds block b (or part of it) exactly when node 0 holds b - v. Each
 * orbit of transfers has exactly one member into node 0 (G acts regularly
 * on the nodes), the translate by -dst; and exactly one out of node 0 on
 * port j for every orbit whose transfers use port j, so the load on any
 * arc of port j in a step is the program's load on port j. Reductions need
 * weights G leaves alone: the input of node u to shard k weighs W(k - u),
 * so the (count, weight-sum) pair of node v's shard k is that of node 0's
 * shard k - v, and for a fixed shard the N inputs still have N independent
 * random weights, which is what catches an input folded in twice or
 * missed. */
#include "sched/internal.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* ---- the group ------------------------------------------------------------------- */

static void group_dims(struct sched_group *G, const uint32_t *radix, uint32_t k)
{
	uint32_t stride = 1;
	bool same = true;

	G->ndims = k;
	G->binary = true;
	for (uint32_t i = 0; i < k; i++) {
		G->radix[i] = radix[i];
		G->stride[i] = stride;
		stride *= radix[i];
		G->binary = G->binary && radix[i] == 2;
		same = same && radix[i] == radix[0];
	}
	G->order = stride;
	if (k > 1 && same) {
		snprintf(G->name, sizeof(G->name), "Z_%u^%u", radix[0], k);
		return;
	}
	size_t len = 0;
	G->name[0] = 0;
	for (uint32_t i = 0; i < k && len < sizeof(G->name); i++)
		len += (size_t)snprintf(G->name + len, sizeof(G->name) - len, "%sZ_%u",
					i ? " x " : "", radix[i]);
}

int sched_group_of(const struct graph *g, const struct topo_tree *t, struct sched_group *G,
		   struct ofc_error *err)
{
	uint32_t radix[SCHED_GROUP_MAX_DIMS], k = 0;
	const char *name = t ? t->name : "";

	memset(G, 0, sizeof(*G));
	if (!t || t->op != TOPO_FAMILY)
		return ofc_error_set(err, OFC_E_INPUT,
				     "%s is not a family with a translation group (torus, "
				     "hypercube, circulant, ring, biring, complete, hamming, "
				     "bipartite)",
				     g->spec ? g->spec : "the topology");
	if (strcmp(name, "torus") == 0) {
		for (k = 0; k < t->nparams && k < SCHED_GROUP_MAX_DIMS; k++)
			radix[k] = t->params[k];
	} else if (strcmp(name, "hypercube") == 0 && t->nparams == 1) {
		for (k = 0; k < t->params[0] && k < SCHED_GROUP_MAX_DIMS; k++)
			radix[k] = 2;
	} else if ((strcmp(name, "circulant") == 0 || strcmp(name, "ring") == 0 ||
		    strcmp(name, "biring") == 0 || strcmp(name, "complete") == 0) &&
		   t->nparams >= 1) {
		radix[k++] = t->params[0];
	} else if (strcmp(name, "hamming") == 0 && t->nparams == 2) {
		for (k = 0; k < t->params[0] && k < SCHED_GROUP_MAX_DIMS; k++)
			radix[k] = t->params[1];
	} else if (strcmp(name, "bipartite") == 0 && t->nparams == 1) {
		radix[k++] = t->params[0];
		radix[k++] = 2;
	} else {
		return ofc_error_set(err, OFC_E_INPUT,
				     "%s: %s graphs have no translation group here (torus, "
				     "hypercube, circulant, ring, biring, complete, hamming, "
				     "bipartite)",
				     g->spec ? g->spec : "the topology", name);
	}
	uint64_t order = 1;
	for (uint32_t i = 0; i < k; i++)
		order *= radix[i] ? radix[i] : 1;
	if (order != g->n)
		return ofc_error_set(
		    err, OFC_E_INPUT, "%s: the group would have %llu elements for %u nodes",
		    g->spec ? g->spec : "the topology", (unsigned long long)order, g->n);
	group_dims(G, radix, k);

	/* The Cayley condition, port by port: port j of u leads to u + s_j. */
	uint32_t d = graph_outdeg(g, 0);
	const uint32_t *s = graph_out(g, 0);
	for (uint32_t u = 0; u < g->n; u++) {
		if (graph_outdeg(g, u) != d)
			return ofc_error_set(err, OFC_E_INPUT,
					     "%s is not regular (node %u has %u links, node 0 %u)",
					     g->spec, u, graph_outdeg(g, u), d);
		const uint32_t *out = graph_out(g, u);
		for (uint32_t j = 0; j < d; j++)
			if (out[j] != sched_group_add(G, u, s[j]))
				return ofc_error_set(err, OFC_E_INPUT,
						     "%s: port %u of node %u leads to %u, not to "
						     "%u + %u: the translations of %s do not keep "
						     "ports",
						     g->spec, j, u, out[j], u, s[j], G->name);
	}
	return 0;
}

/* ---- the program and its expansion ---------------------------------------------- */

void sched_reduced_free(struct sched_reduced *r)
{
	sched_free(&r->prog);
	memset(r, 0, sizeof(*r));
}

struct xfer sched_reduced_move(const struct sched_reduced *r, const struct xfer *x, uint32_t g)
{
	const struct sched_group *G = &r->group;
	struct xfer y = *x;

	y.src = (uint16_t)sched_group_add(G, x->src, g);
	y.dst = (uint16_t)sched_group_add(G, x->dst, g);
	if (r->prog.collective == SCHED_ALLTOALL) {
		uint32_t n = G->order, o = x->block / n, t = x->block % n;

		y.block = sched_group_add(G, o, g) * n + sched_group_add(G, t, g);
	} else {
		y.block = sched_group_add(G, x->block, g);
	}
	return y;
}

int sched_reduced_expand(const struct sched_reduced *r, struct schedule *s, struct ofc_error *err)
{
	const struct schedule *p = &r->prog;
	uint32_t n = r->group.order;

	if (n > SCHED_MAX_NODES || p->nodes != n)
		return ofc_error_set(
		    err, OFC_E_INPUT,
		    "%u nodes: an explicit schedule has at most %u (program of %u)", n,
		    SCHED_MAX_NODES, p->nodes);
	if (sched_reduced_transfers(r) >= UINT32_MAX)
		return ofc_error_set(err, OFC_E_INPUT,
				     "%llu transfers: too many for an explicit schedule",
				     (unsigned long long)sched_reduced_transfers(r));
	sched_init(s, p->collective, p->algorithm, n);
	snprintf(s->topology, sizeof(s->topology), "%s", p->topology);
	s->size_bytes = p->size_bytes;
	s->root = p->root;
	for (uint32_t t = 0; t < p->nsteps; t++) {
		size_t k = sched_step_size(p, t), count = k * n;
		struct xfer *out = sched_append_steps(s, 1, &count);
		const struct xfer *in = p->xfers + p->step_start[t];

		for (uint32_t g = 0; g < n; g++)
			for (size_t i = 0; i < k; i++)
				*out++ = sched_reduced_move(r, &in[i], g);
	}
	return 0;
}

/* ---- the verifier by symmetry ------------------------------------------------------ */

struct rseg {
	uint32_t lo, hi;
	uint32_t count;
	uint64_t hash;
};

struct rlist {
	uint32_t n, cap;
	struct rseg *v;
};

struct rdeliv {
	uint64_t block; /* at node 0 */
	uint32_t lo, hi;
	uint32_t count;
	uint64_t hash;
	uint8_t op;
};

struct rstate {
	const struct sched_reduced *r;
	const struct verify_opts *o;
	struct verify_report *rep;
	uint32_t n;
	bool reduce;
	uint64_t *full;	    /* copy: blocks node 0 holds whole */
	struct rlist *part; /* copy: coverage of the others; reduce: (count, hash) pieces */
	uint64_t total;	    /* reduce: the weight of all N inputs to a shard */
	struct rdeliv *dl;
	size_t ndl, cap_dl;
	uint64_t *port_load; /* node 0's ports, this step */
	double dup;
	/* All-to-all: the blocks (o, t) node 0 holds besides its own (o = 0),
	 * key o * N + t -> what it holds of it (whole, or the interval list). */
	uint64_t *akey;
	struct rlist *aval;
	bool *awhole;
	size_t acap, aused;
};

static int rfail(struct rstate *v, uint32_t step, size_t xi, const char *fmt, ...) OFC_PRINTF(4, 5);
static int rfail(struct rstate *v, uint32_t step, size_t xi, const char *fmt, ...)
{
	const struct schedule *p = &v->r->prog;
	char what[200];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	v->rep->ok = false;
	v->rep->bad_step = step;
	v->rep->bad_xfer = xi;
	if (xi < p->nxfers) {
		const struct xfer *x = &p->xfers[xi];

		snprintf(v->rep->error, sizeof(v->rep->error),
			 "step %u, transfer %u -> %u of block %u [%.6g, %.6g) and its "
			 "translates: %s",
			 step + 1, x->src, x->dst, x->block, sched_frac(x->offset),
			 sched_frac(x->offset) + sched_frac(x->length), what);
	} else {
		snprintf(v->rep->error, sizeof(v->rep->error), "%s", what);
	}
	return -1;
}

static uint64_t mix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static void rpush(struct rlist *l, struct rseg s)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 2;
		l->v = xreallocarray(l->v, l->cap, sizeof(struct rseg));
	}
	l->v[l->n++] = s;
}

static bool covers(const struct rlist *l, uint32_t lo, uint32_t hi)
{
	for (uint32_t i = 0; i < l->n && lo < hi; i++) {
		if (l->v[i].hi <= lo)
			continue;
		if (l->v[i].lo > lo)
			return false;
		lo = l->v[i].hi;
	}
	return lo >= hi;
}

/* Copy mode: add [lo, hi) to a sorted disjoint list; how much was there. */
static uint64_t cover_add(struct rlist *l, uint32_t lo, uint32_t hi)
{
	struct rlist out = {0};
	uint64_t overlap = 0;
	bool placed = false;

	for (uint32_t i = 0; i < l->n; i++) {
		struct rseg s = l->v[i];

		if (s.hi < lo || s.lo > hi) {
			if (!placed && s.lo > hi) {
				rpush(&out, (struct rseg){lo, hi, 1, 0});
				placed = true;
			}
			rpush(&out, s);
			continue;
		}
		uint32_t a = s.lo > lo ? s.lo : lo, b = s.hi < hi ? s.hi : hi;
		if (b > a)
			overlap += b - a;
		lo = s.lo < lo ? s.lo : lo;
		hi = s.hi > hi ? s.hi : hi;
	}
	if (!placed)
		rpush(&out, (struct rseg){lo, hi, 1, 0});
	free(l->v);
	*l = out;
	return overlap;
}

#define NO_KEY UINT64_MAX

/* All-to-all: node 0's entry for block key (created when asked). */
static size_t a2a_slot(struct rstate *v, uint64_t key, bool create)
{
	if (create && (v->aused + 1) * 2 > v->acap) {
		size_t cap = v->acap ? v->acap * 2 : 1024;
		uint64_t *k = xmalloc(cap * sizeof(uint64_t));
		struct rlist *l = xcalloc(cap, sizeof(struct rlist));
		bool *w = xcalloc(cap, sizeof(bool));

		memset(k, 0xff, cap * sizeof(uint64_t));
		for (size_t i = 0; i < v->acap; i++)
			if (v->akey[i] != NO_KEY) {
				size_t h = (v->akey[i] * 0x9e3779b97f4a7c15ull) >> 20;

				for (h &= cap - 1; k[h] != NO_KEY; h = (h + 1) & (cap - 1))
					;
				k[h] = v->akey[i];
				l[h] = v->aval[i];
				w[h] = v->awhole[i];
			}
		free(v->akey);
		free(v->aval);
		free(v->awhole);
		v->akey = k;
		v->aval = l;
		v->awhole = w;
		v->acap = cap;
	}
	if (!v->acap)
		return SIZE_MAX;
	size_t h = ((key * 0x9e3779b97f4a7c15ull) >> 20) & (v->acap - 1);
	while (v->akey[h] != NO_KEY) {
		if (v->akey[h] == key)
			return h;
		h = (h + 1) & (v->acap - 1);
	}
	if (!create)
		return SIZE_MAX;
	v->akey[h] = key;
	v->aused++;
	return h;
}

/* Block (o, t) moved by -u: the block as node 0 sees node u's. */
static uint64_t a2a_rel(const struct rstate *v, uint64_t block, uint32_t u)
{
	const struct sched_group *G = &v->r->group;
	uint32_t n = v->n;

	return (uint64_t)sched_group_sub(G, (uint32_t)(block / n), u) * n +
	       sched_group_sub(G, (uint32_t)(block % n), u);
}

static bool a2a_holds(struct rstate *v, uint64_t rel, uint32_t lo, uint32_t hi)
{
	if (rel / v->n == 0)
		return true; /* node 0's own */
	size_t h = a2a_slot(v, rel, false);
	return h != SIZE_MAX && (v->awhole[h] || covers(&v->aval[h], lo, hi));
}

/* Reduce mode: fold (REDUCE) or write (COPY) d over [d->lo, d->hi). */
static void fold(struct rlist *l, const struct rdeliv *d)
{
	struct rlist out = {0};

	for (uint32_t i = 0; i < l->n; i++) {
		struct rseg s = l->v[i];
		uint32_t cut[4], nc = 0;

		cut[nc++] = s.lo;
		if (d->lo > s.lo && d->lo < s.hi)
			cut[nc++] = d->lo;
		if (d->hi > s.lo && d->hi < s.hi)
			cut[nc++] = d->hi;
		cut[nc++] = s.hi;
		for (uint32_t k = 0; k + 1 < nc; k++) {
			struct rseg p = {cut[k], cut[k + 1], s.count, s.hash};

			if (p.lo >= d->lo && p.hi <= d->hi) {
				p.count = d->op == XFER_REDUCE ? p.count + d->count : d->count;
				p.hash = d->op == XFER_REDUCE ? p.hash + d->hash : d->hash;
			}
			if (out.n && out.v[out.n - 1].hi == p.lo &&
			    out.v[out.n - 1].count == p.count && out.v[out.n - 1].hash == p.hash)
				out.v[out.n - 1].hi = p.hi;
			else
				rpush(&out, p);
		}
	}
	free(l->v);
	*l = out;
}

static void push(struct rstate *v, struct rdeliv d)
{
	if (v->ndl == v->cap_dl)
		GROW(v->dl, v->cap_dl, v->ndl + 1);
	v->dl[v->ndl++] = d;
}

/* One program transfer: its checks where it stands, and what its
 * translate into node 0 delivers there (after the step). */
static int check_xfer(struct rstate *v, uint32_t t, size_t xi)
{
	const struct schedule *p = &v->r->prog;
	const struct sched_group *G = &v->r->group;
	const struct xfer *x = &p->xfers[xi];
	const struct graph *g = v->o->graph;
	uint32_t n = v->n, lo = x->offset, hi;

	if (x->src >= n || x->dst >= n)
		return rfail(v, t, xi, "node out of range (%u nodes)", n);
	if (x->src == x->dst)
		return rfail(v, t, xi, "a node sends to itself");
	bool a2a = p->collective == SCHED_ALLTOALL;
	if (x->block >= (a2a ? (uint64_t)n * n : n))
		return rfail(v, t, xi, "no such block");
	if (a2a && x->block / n == x->block % n)
		return rfail(v, t, xi, "all-to-all has no block from a node to itself");
	if (x->length == 0 || x->offset >= SCHED_ONE || (uint64_t)x->offset + x->length > SCHED_ONE)
		return rfail(v, t, xi, "part outside the block");
	hi = lo + x->length;
	if (g) {
		uint32_t deg = graph_outdeg(g, x->src), mult = 0;
		const uint32_t *out = graph_out(g, x->src);

		if (x->lane != SCHED_NO_LANE) {
			if (x->lane >= deg || out[x->lane] != x->dst)
				return rfail(v, t, xi,
					     "port %u of node %u does not lead to node %u", x->lane,
					     x->src, x->dst);
			v->port_load[x->lane] += x->length;
		} else {
			for (uint32_t k = 0; k < deg; k++)
				mult += out[k] == x->dst;
			if (!mult)
				return rfail(v, t, xi, "there is no link %u -> %u in %s", x->src,
					     x->dst, g->spec);
			for (uint32_t k = 0; k < deg; k++)
				if (out[k] == x->dst)
					v->port_load[k] += x->length / mult;
		}
	}
	if (a2a) {
		if (xfer_op(x) == XFER_REDUCE)
			return rfail(v, t, xi, "a reducing transfer in alltoall");
		if (!a2a_holds(v, a2a_rel(v, x->block, x->src), lo, hi))
			return rfail(v, t, xi,
				     "node %u does not hold that data at the start of the step",
				     x->src);
		push(v, (struct rdeliv){a2a_rel(v, x->block, x->dst), lo, hi, 1, 0, XFER_COPY});
		return 0;
	}
	uint32_t at_src = sched_group_sub(G, x->block, x->src);
	uint32_t at_dst = sched_group_sub(G, x->block, x->dst);
	if (!v->reduce) {
		if (xfer_op(x) == XFER_REDUCE)
			return rfail(v, t, xi, "a reducing transfer in %s",
				     sched_collective_name(p->collective));
		bool held = at_src == 0 || (v->full[at_src >> 6] >> (at_src & 63)) & 1 ||
			    covers(&v->part[at_src], lo, hi);
		if (!held)
			return rfail(v, t, xi,
				     "node %u does not hold that data at the start of the step",
				     x->src);
		push(v, (struct rdeliv){at_dst, lo, hi, 1, 0, XFER_COPY});
		return 0;
	}
	/* The sender's value over [lo, hi): node 0's of shard block - src. */
	const struct rlist *l = &v->part[at_src];
	for (uint32_t i = 0; i < l->n; i++) {
		uint32_t a = l->v[i].lo > lo ? l->v[i].lo : lo;
		uint32_t b = l->v[i].hi < hi ? l->v[i].hi : hi;

		if (b > a)
			push(v, (struct rdeliv){at_dst, a, b, l->v[i].count, l->v[i].hash,
						(uint8_t)xfer_op(x)});
	}
	return 0;
}

/* All-to-all: a delivery to node 0 of block rel (at its target when
 * rel's target is 0, where any overlap is an error). */
static int a2a_deliver(struct rstate *v, uint32_t t, const struct rdeliv *d)
{
	bool at_target = d->block % v->n == 0;
	uint64_t ov;

	if (d->block / v->n == 0) { /* its own block back at its origin */
		v->dup += sched_frac(d->hi - d->lo);
		return 0;
	}
	size_t h = a2a_slot(v, d->block, true);
	if (v->awhole[h])
		ov = d->hi - d->lo;
	else
		ov = cover_add(&v->aval[h], d->lo, d->hi);
	if (ov && at_target)
		return rfail(v, t, SIZE_MAX,
			     "step %u: block %llu delivered to its target twice (node 0 sees it "
			     "as from node %llu; every translate alike)",
			     t + 1, (unsigned long long)d->block,
			     (unsigned long long)(d->block / v->n));
	v->dup += sched_frac((uint32_t)ov);
	struct rlist *l = &v->aval[h];
	if (!v->awhole[h] && l->n == 1 && l->v[0].lo == 0 && l->v[0].hi == SCHED_ONE) {
		v->awhole[h] = true;
		free(l->v);
		memset(l, 0, sizeof(*l));
	}
	return 0;
}

static int deliver(struct rstate *v, uint32_t t)
{
	for (size_t i = 0; i < v->ndl; i++) {
		const struct rdeliv *d = &v->dl[i];

		if (v->r->prog.collective == SCHED_ALLTOALL) {
			if (a2a_deliver(v, t, d) < 0)
				return -1;
			continue;
		}
		struct rlist *l = &v->part[d->block];

		if (v->reduce) {
			fold(l, d);
			continue;
		}
		if (d->block == 0 || (v->full[d->block >> 6] >> (d->block & 63)) & 1) {
			v->dup += sched_frac(d->hi - d->lo);
			continue;
		}
		v->dup += sched_frac((uint32_t)cover_add(l, d->lo, d->hi));
		if (l->n == 1 && l->v[0].lo == 0 && l->v[0].hi == SCHED_ONE) {
			v->full[d->block >> 6] |= 1ull << (d->block & 63);
			free(l->v);
			memset(l, 0, sizeof(*l));
		}
	}
	v->ndl = 0;
	return 0;
}

static bool complete(const struct rstate *v, uint32_t k)
{
	const struct rlist *l = &v->part[k];

	if (!v->reduce)
		return k == 0 || (v->full[k >> 6] >> (k & 63)) & 1;
	for (uint32_t i = 0; i < l->n; i++)
		if (l->v[i].count != v->n || l->v[i].hash != v->total)
			return false;
	return l->n > 0 && l->v[0].lo == 0 && l->v[l->n - 1].hi == SCHED_ONE;
}

static int final_check(struct rstate *v)
{
	uint32_t T = v->r->prog.nsteps;
	enum sched_collective c = v->r->prog.collective;

	if (c == SCHED_ALLTOALL) {
		/* Node 0 has every block (o, 0) whole: node t every (o, t). */
		for (uint32_t o = 1; o < v->n; o++) {
			size_t h = a2a_slot(v, (uint64_t)o * v->n, false);

			if (h == SIZE_MAX || !(v->awhole[h] || covers(&v->aval[h], 0, SCHED_ONE)))
				return rfail(
				    v, T, SIZE_MAX,
				    "incomplete: the block from %u never (fully) reached 0 "
				    "(nor any from u + %u to u)",
				    o, o);
		}
		return 0;
	}
	for (uint32_t k = 0; k < (c == SCHED_REDUCE_SCATTER ? 1 : v->n); k++) {
		if (complete(v, k))
			continue;
		/* Node 0 lacks block k: node v lacks block k + v, every v. */
		if (c == SCHED_ALLGATHER)
			return rfail(v, T, SIZE_MAX,
				     "incomplete: after the last step node 0 lacks (part of) block "
				     "%u (and every node v block %u + v)",
				     k, k);
		if (c == SCHED_REDUCE_SCATTER)
			return rfail(v, T, SIZE_MAX,
				     "node 0 does not end with shard 0 reduced over all %u inputs, "
				     "each exactly once (nor any node its own)",
				     v->n);
		return rfail(v, T, SIZE_MAX,
			     "node 0 does not end with shard %u reduced over all %u inputs, each "
			     "exactly once (nor any node v shard %u + v)",
			     k, v->n, k);
	}
	return 0;
}

int sched_verify_reduced(const struct sched_reduced *r, const struct verify_opts *o,
			 struct verify_report *report)
{
	static const struct verify_opts none = {0};
	const struct schedule *p = &r->prog;
	struct rstate v = {.r = r, .o = o ? o : &none, .rep = report, .n = r->group.order};
	uint32_t n = v.n, d = 0;
	int rc = -1;

	memset(report, 0, sizeof(*report));
	report->ok = true;
	report->nsteps = p->nsteps;
	report->ntransfers = (size_t)sched_reduced_transfers(r);
	if (n < 2 || n > SCHED_REDUCED_MAX_NODES || p->nodes != n)
		return rfail(&v, 0, SIZE_MAX,
			     "%u nodes (program of %u): a reduced schedule has 2..%u", n, p->nodes,
			     SCHED_REDUCED_MAX_NODES);
	if (p->collective != SCHED_ALLGATHER && p->collective != SCHED_REDUCE_SCATTER &&
	    p->collective != SCHED_ALLREDUCE && p->collective != SCHED_ALLTOALL)
		return rfail(&v, 0, SIZE_MAX,
			     "%s: the check by symmetry takes allgather, reduce-scatter, "
			     "allreduce and alltoall",
			     sched_collective_name(p->collective));
	if (v.o->wdm || v.o->network)
		return rfail(&v, 0, SIZE_MAX,
			     "the check by symmetry is for direct-connect topologies");
	if (v.o->graph) {
		if (v.o->graph->n != n)
			return rfail(&v, 0, SIZE_MAX, "the schedule has %u nodes, the topology %u",
				     n, v.o->graph->n);
		d = graph_outdeg(v.o->graph, 0);
		v.port_load = xcalloc((size_t)d + 1, sizeof(uint64_t));
	}
	v.reduce = p->collective != SCHED_ALLGATHER && p->collective != SCHED_ALLTOALL;
	v.part = xcalloc(n, sizeof(struct rlist));
	if (v.reduce) {
		uint64_t seed = v.o->seed ? v.o->seed : 0x0fc;

		/* Node 0's input to shard k weighs W(k - 0) = W(k). */
		for (uint32_t k = 0; k < n; k++) {
			uint64_t w = mix64(seed + k);

			rpush(&v.part[k], (struct rseg){0, SCHED_ONE, 1, w});
			v.total += w;
		}
	} else {
		v.full = xcalloc((size_t)n / 64 + 1, sizeof(uint64_t));
	}
	for (uint32_t t = 0; t < p->nsteps; t++) {
		for (size_t xi = p->step_start[t]; xi < p->step_start[t + 1]; xi++)
			if (check_xfer(&v, t, xi) < 0)
				goto out;
		if (deliver(&v, t) < 0)
			goto out;
		if (v.o->graph) {
			uint64_t max = 0;

			for (uint32_t j = 0; j < d; j++) {
				max = v.port_load[j] > max ? v.port_load[j] : max;
				v.port_load[j] = 0;
			}
			double load = (double)max / SCHED_ONE;
			if (v.o->step_link_load)
				v.o->step_link_load[t] = load;
			report->sum_max_link_load += load;
			if (load > report->max_link_load)
				report->max_link_load = load;
		}
	}
	if (final_check(&v) < 0)
		goto out;
	rc = 0;
out:
	report->duplicate_blocks = v.dup * n;
	for (uint32_t k = 0; k < n; k++)
		free(v.part[k].v);
	free(v.part);
	for (size_t i = 0; i < v.acap; i++)
		if (v.akey[i] != NO_KEY)
			free(v.aval[i].v);
	free(v.akey);
	free(v.aval);
	free(v.awhole);
	free(v.full);
	free(v.dl);
	free(v.port_load);
	return rc;
}

/* ---- the all-to-all MCF, reduced ------------------------------------------------ */

int a2a_reduced(const struct graph *g, const struct sched_group *G, const struct a2a_request *q,
		struct sched_reduced *r, struct a2a_outcome *o, struct ofc_error *err)
{
	const char *low = q->lowering ? q->lowering : "steps";
	bool steps = strcmp(low, "steps") == 0;
	struct mcf_opts mo = q->mcf;
	struct sched_group grp = *G; /* G may be &r->group */
	struct topo_facts f;

	memset(o, 0, sizeof(*o));
	memset(r, 0, sizeof(*r));
	if (strcmp(q->algo, "mcf"))
		return ofc_error_set(err, OFC_E_INPUT,
				     "a reduced all-to-all is the MCF's (mcf), not %s", q->algo);
	if (!steps && strcmp(low, "paths"))
		return ofc_error_set(err, OFC_E_INPUT,
				     "a reduced all-to-all lowers the symmetric routes by steps or "
				     "paths (single-path routing balances every pair's loads at "
				     "once, which no one node's program shows)");
	if (grp.order != g->n)
		return ofc_error_set(err, OFC_E_INPUT, "the group has %u elements, %s %u nodes",
				     grp.order, g->spec ? g->spec : "the topology", g->n);
	if (g->n > A2A_REDUCED_MAX_NODES)
		return ofc_error_set(
		    err, OFC_E_INPUT,
		    "%u nodes: reduced all-to-all schedules are built for up to %u "
		    "nodes (the MCF lists the N x N translations)",
		    g->n, A2A_REDUCED_MAX_NODES);
	topo_facts(g, &f, mo.threads);
	mo.method = MCF_SYMMETRIC;
	mo.steps = steps ? f.diameter : 0;
	mo.routes = true;
	if (mcf_solve(g, &mo, &o->mcf, err) < 0)
		return -1;
	o->have_mcf = true;
	o->cut_through = !steps;
	struct a2a_routes *rt = &o->mcf.routes;
	free(rt->perm); /* node 0's routes are the program: no mirroring */
	rt->perm = NULL;
	if (!steps)
		a2a_routes_limit(rt, graph_outdeg(g, 0));
	struct a2a_routes own = *rt;
	own.symmetric = false;
	if (a2a_schedule(g, &own, steps, "mcf", &r->prog, err) < 0) {
		a2a_outcome_free(o);
		return -1;
	}
	r->group = grp;
	/* The busiest link over all routes: every arc of port j carries what
	 * node 0's routes put on port j (one translate of each hop each). */
	uint32_t d = graph_outdeg(g, 0), *tail = graph_arc_tails(g);
	double *load = xcalloc((size_t)d + 1, sizeof(double));
	for (size_t i = 0; i < rt->nroutes; i++)
		for (size_t h = rt->off[i]; h < rt->off[i + 1]; h++)
			load[rt->arc[h] - g->off[tail[rt->arc[h]]]] += rt->w[i];
	for (uint32_t j = 0; j < d; j++)
		o->max_load = load[j] > o->max_load ? load[j] : o->max_load;
	o->max_paths = a2a_max_paths(rt);
	free(load);
	free(tail);
	return 0;
}
