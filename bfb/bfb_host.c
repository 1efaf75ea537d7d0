/* BFB with NIC-limited hosts (notes alltoall-mcf.md 2.6 and 7).
 *
 * A host whose injection bandwidth I is below the sum of its links cannot
 * keep them all busy: in a step of time T it sends at most I T. With host
 * forwarding every byte it sends crosses the host (relays included); with
 * NIC forwarding relayed allgather bytes pass the NIC alone, so only a
 * host's own shard counts (and, in reduce-scatter, its partial sums, which
 * the host computes). Units: shards and the rate-1 link, so a step's time
 * is the most a rate-1 link carries (U*), and a host of injection beta
 * (in rate-1 links) sending S shards needs S / beta.
 *
 * Allgather. LP (3) per (u, t) balances u's in-links; with the injection
 * rows the problems of one step share their senders, so a step where some
 * host would exceed beta U* is solved again as one problem over the whole
 * step: min T such that every (u, v) with d(v, u) = t is delivered, in
 * fractions, over candidate in-links (w, u) with d(v, w) = t - 1, every
 * link carries at most r T and every counted sender at most beta T. That
 * is a parametric max flow (source -> demand (u, v) -> link -> sender ->
 * sink, capacities 1, 1, r T, beta T): the min cut is A + B T (A the unit
 * edges it cuts, B the rates and betas), concave in T, so Newton's method
 * from T = U* (a lower bound: the links alone) reaches the least feasible T
 * in a few max flows, exactly: T_next = (demands - A) / B. The last flow,
 * run with capacities scaled to integers, gives the fractions, laid end to
 * end per source as bfb_solve.c lays its own. Steps where no host binds keep
 * bfb.c's transfers, so hosts that can drive all their links leave the
 * schedule byte for byte as it was.
 *
 * Reduce-scatter is allgather on G^T run backwards: in its steps a node
 * sends each shard it holds a part of once in full, whatever the split, so
 * its load is fixed and the step is priced at max(U*, S_u / beta_u). */
#include "bfb/internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- one allgather step ----------------------------------------------------------- */

struct demand {
	uint32_t u, v;
	uint32_t first, n; /* its candidate arcs: cand[first .. first + n) */
};

struct step_problem {
	const struct graph *g;
	const struct bfb_opts *o;
	uint32_t t;
	const uint16_t *dist; /* dist[v * n + x] */
	const uint32_t *tail; /* of every arc */
	struct demand *dem;
	uint32_t ndem;
	uint32_t *cand; /* arcs w -> u */
	size_t ncand;
	int64_t bden;				  /* every inject[v] as bnum[v] / bden */
	int64_t *bnum;				  /* per node; < 0: not limited in this step */
	uint32_t *slot;				  /* each edge's, in build()'s order */
};

/* The demands of step t: every (u, v) with d(v, u) = t and its candidate
 * in-arcs (w, u), d(v, w) = t - 1, in u's arc order. */
static void step_demands(struct step_problem *p, const uint32_t *in_off, const uint32_t *in_arc)
{
	const struct graph *g = p->g;
	uint32_t n = g->n;
	size_t cap_d = 0, cap_c = 0;

	for (uint32_t u = 0; u < n; u++)
		for (uint32_t v = 0; v < n; v++) {
			if (p->dist[(size_t)v * n + u] != p->t)
				continue;
			GROW(p->dem, cap_d, (size_t)p->ndem + 1);
			struct demand *d = &p->dem[p->ndem++];
			d->u = u;
			d->v = v;
			d->first = (uint32_t)p->ncand;
			d->n = 0;
			for (uint32_t k = in_off[u]; k < in_off[u + 1]; k++) {
				uint32_t a = in_arc[k], w = p->tail[a];

				if (w != u && p->dist[(size_t)v * n + w] == p->t - 1) {
					GROW(p->cand, cap_c, p->ncand + 1);
					p->cand[p->ncand++] = a;
					d->n++;
				}
			}
		}
}

static uint32_t arc_rate(const struct step_problem *p, uint32_t a)
{
	return p->o->rate ? p->o->rate[a] : 1;
}

/* The network: nodes 0 source, 1 sink, 2 + w senders, 2 + n + a links,
 * 2 + n + m + i demands; edges numbered per demand its source edge then its
 * candidates, then the links, then the senders (build()'s order). Its shape
 * is the step's, so it is laid out once and only the capacities change
 * between Newton's flows. A node's slots run in the reverse of the edges'
 * order, the order the first solver's linked lists scanned them in: the
 * same augmenting paths, so the same fractions byte for byte. */
static void layout(struct step_problem *p, struct flow_net *f)
{
	const struct graph *g = p->g;
	uint32_t n = g->n, m = g->m, nv = 2 + n + m + p->ndem;
	uint32_t ne = p->ndem + (uint32_t)p->ncand + m + n, k = 0;
	uint32_t *from = xmalloc((size_t)ne * sizeof(uint32_t));
	uint32_t *to = xmalloc((size_t)ne * sizeof(uint32_t));
	uint32_t *next = xmalloc((size_t)nv * sizeof(uint32_t));

#define EDGE(a, b) (from[k] = (a), to[k] = (b), k++)
	for (uint32_t i = 0; i < p->ndem; i++) {
		const struct demand *d = &p->dem[i];

		EDGE(0, 2 + n + m + i);
		for (uint32_t c = 0; c < d->n; c++)
			EDGE(2 + n + m + i, 2 + n + p->cand[d->first + c]);
	}
	for (uint32_t a = 0; a < m; a++)
		EDGE(2 + n + a, 2 + p->tail[a]);
	for (uint32_t w = 0; w < n; w++)
		EDGE(2 + w, 1);
#undef EDGE
	flow_net_reset(f, nv, 2 * ne);
	memset(f->start, 0, ((size_t)nv + 1) * sizeof(uint32_t));
	for (k = 0; k < ne; k++) {
		f->start[from[k] + 1]++;
		f->start[to[k] + 1]++;
	}
	for (uint32_t v = 0; v < nv; v++)
		f->start[v + 1] += f->start[v];
	memcpy(next, f->start, (size_t)nv * sizeof(uint32_t));
	p->slot = xmalloc(((size_t)ne + 1) * sizeof(uint32_t));
	for (k = ne; k-- > 0;) {
		p->slot[k] = next[from[k]]++;
		flow_net_pair(f, p->slot[k], next[to[k]]++, from[k], to[k], 0);
	}
	free(from);
	free(to);
	free(next);
}

/* Edge k of capacity c, nothing flowing. */
static void set_cap(struct flow_net *f, const struct step_problem *p, uint32_t k, int64_t c)
{
	f->cap[p->slot[k]] = c;
	f->cap[f->rev[p->slot[k]]] = 0;
}

/* The capacities at T = P / R, every one times R * bden: demands R bden,
 * links P r bden, limited senders P bnum (an unlimited sender passes what
 * its links bring). false when a capacity would overflow. */
static bool build(const struct step_problem *p, struct flow_net *f, int64_t P, int64_t R)
{
	const struct graph *g = p->g;
	uint32_t n = g->n, m = g->m, k = 0;
	__int128 unit = (__int128)R * p->bden, big = 0;

	if (unit > ((__int128)1 << 40))
		return false;
	for (uint32_t i = 0; i < p->ndem; i++) {
		set_cap(f, p, k++, (int64_t)unit);
		for (uint32_t c = 0; c < p->dem[i].n; c++)
			set_cap(f, p, k++, (int64_t)unit);
	}
	for (uint32_t a = 0; a < m; a++) {
		__int128 c = (__int128)P * arc_rate(p, a) * p->bden;

		if (c > ((__int128)1 << 58))
			return false;
		set_cap(f, p, k++, (int64_t)c);
		big += c;
	}
	for (uint32_t w = 0; w < n; w++) {
		__int128 c = p->bnum[w] >= 0 ? (__int128)P * p->bnum[w] : big;

		if (c > ((__int128)1 << 60))
			return false;
		set_cap(f, p, k++, (int64_t)c);
	}
	return true;
}

/* After a max flow below the demand: the min cut (source side = reachable
 * in the residual network, as flow_net_bfs left the levels) as A + B T, A in
 * shards, B = bnum / bden; the next T = (demands - A) / B. */
static struct frac next_t(const struct step_problem *p, const struct flow_net *f)
{
	const struct graph *g = p->g;
	uint32_t n = g->n, m = g->m;
	int64_t A = 0, Bn = 0; /* B = Bn / bden */

#define SIDE(x) (f->level[(x)] >= 0)
	for (uint32_t i = 0; i < p->ndem; i++) {
		const struct demand *d = &p->dem[i];
		uint32_t x = 2 + n + m + i;

		if (!SIDE(x)) {
			A++;
			continue;
		}
		for (uint32_t k = 0; k < d->n; k++)
			if (!SIDE(2 + n + p->cand[d->first + k]))
				A++;
	}
	for (uint32_t a = 0; a < m; a++)
		if (SIDE(2 + n + a) && !SIDE(2 + p->tail[a]))
			Bn += (int64_t)arc_rate(p, a) * p->bden;
	for (uint32_t w = 0; w < n; w++) {
		if (!SIDE(2 + w))
			continue;
		if (p->bnum[w] >= 0) {
			Bn += p->bnum[w];
		} else {
			/* Unreachable: an unlimited sender's edge holds more than
			 * all links bring, so it is never saturated and never on
			 * the source side of a cut below the demand. */
			for (uint32_t a = g->off[w]; a < g->off[w + 1]; a++)
				Bn += (int64_t)arc_rate(p, a) * p->bden;
		}
	}
#undef SIDE
	return frac_make(((int64_t)p->ndem - A) * p->bden, Bn);
}

/* Pieces of the flow: each demand's flow to its candidate arcs, laid end
 * to end over [0, 1) of v's shard in units of 1 / unit. */
static size_t emit(const struct step_problem *p, const struct flow_net *f, int64_t unit,
		   struct xfer *out)
{
	const struct graph *g = p->g;
	size_t k = 0;

	for (uint32_t i = 0; i < p->ndem; i++) {
		const struct demand *d = &p->dem[i];
		int64_t used = 0;

		/* dem -> link edges follow the demand's source edge */
		for (uint32_t c = 0; c < d->n; c++) {
			uint32_t e = p->slot[i + d->first + 1 + c], a = p->cand[d->first + c];
			int64_t fl = f->cap[f->rev[e]];

			if (fl <= 0)
				continue;
			uint32_t w = p->tail[a];
			uint64_t lo =
			    ((uint64_t)used * SCHED_ONE + (uint64_t)unit / 2) / (uint64_t)unit;
			uint64_t hi = ((uint64_t)(used + fl) * SCHED_ONE + (uint64_t)unit / 2) /
				      (uint64_t)unit;

			used += fl;
			if (hi == lo)
				continue;
			out[k++] = (struct xfer){.src = (uint16_t)w,
						 .dst = (uint16_t)d->u,
						 .block = d->v,
						 .offset = (uint32_t)lo,
						 .length = (uint32_t)(hi - lo),
						 .lane = (uint16_t)(a - g->off[w]),
						 .flags = xfer_flags(DIR_NONE, XFER_COPY)};
		}
	}
	return k;
}

/* Replace step t of s with n transfers. */
static void replace_step(struct schedule *s, uint32_t t, const struct xfer *x, size_t n)
{
	size_t lo = s->step_start[t], hi = s->step_start[t + 1], total = s->nxfers - (hi - lo) + n;
	struct xfer *nx = xmalloc((total + 1) * sizeof(struct xfer));

	memcpy(nx, s->xfers, lo * sizeof(struct xfer));
	memcpy(nx + lo, x, n * sizeof(struct xfer));
	memcpy(nx + lo + n, s->xfers + hi, (s->nxfers - hi) * sizeof(struct xfer));
	free(s->xfers);
	s->xfers = nx;
	s->cap_xfers = total + 1;
	s->nxfers = total;
	for (uint32_t k = t + 1; k <= s->nsteps; k++)
		s->step_start[k] = (uint32_t)(s->step_start[k] - (hi - lo) + n);
}

/* Solve step t (schedule step st) of the allgather on g again with the
 * senders' limits; its cost in *cost. */
static int solve_step(struct step_problem *p, struct schedule *s, uint32_t st, struct frac lo,
		      struct frac *cost, struct ofc_error *err)
{
	struct flow_net f = {0};
	struct frac T = lo;
	int rc = -1;

	layout(p, &f);
	for (int iter = 0;; iter++) {
		if (!frac_valid(T) || iter > 10000 || !build(p, &f, T.num, T.den)) {
			ofc_error_set(err, OFC_E_RUNTIME,
				      "BFB with host injection limits: step %u needs fractions "
				      "finer than the exact solver holds",
				      p->t);
			goto out;
		}
		int64_t unit = T.den * p->bden, want = (int64_t)p->ndem * unit;
		if (flow_net_maxflow(&f, 0, 1) == want)
			break;
		flow_net_bfs(&f, 0, 1, false); /* levels: the residual reach of the source */
		struct frac nt = next_t(p, &f);
		if (!frac_valid(nt) || frac_cmp(nt, T) <= 0) {
			ofc_error_set(err, OFC_E_RUNTIME,
				      "BFB with host injection limits: step %u did not converge",
				      p->t);
			goto out;
		}
		T = nt;
	}
	struct xfer *x = xmalloc((p->ncand + 1) * sizeof(struct xfer));
	size_t nx = emit(p, &f, T.den * p->bden, x);
	replace_step(s, st, x, nx);
	free(x);
	*cost = T;
	rc = 0;
out:
	flow_net_free(&f);
	free(p->slot);
	return rc;
}

/* ---- a phase --------------------------------------------------------------------- */

/* The common denominator of the limits (each reduced), or 0 when it grows
 * past what the exact flows hold. */
static int64_t common_den(const struct frac *b, uint32_t n)
{
	int64_t l = 1;

	for (uint32_t v = 0; v < n; v++) {
		int64_t d = b[v].den, g = (int64_t)gcd_u64((uint64_t)l, (uint64_t)d);

		if (l / g > ((int64_t)1 << 20) / d)
			return 0;
		l = l / g * d;
	}
	return l;
}

bool bfb_host_limited(const struct graph *g, const struct bfb_opts *o)
{
	if (!o->inject)
		return false;
	for (uint32_t w = 0; w < g->n; w++) {
		int64_t out = 0;

		for (uint32_t a = g->off[w]; a < g->off[w + 1]; a++)
			out += o->rate ? o->rate[a] : 1;
		/* a host that can drive all its links never binds */
		if (frac_cmp(o->inject[w], frac_make(out, 1)) < 0)
			return true;
	}
	return false;
}

int bfb_host_phase(const struct graph *g, const struct bfb_opts *o, bool reverse,
		   struct schedule *s, uint32_t first, uint32_t D, struct frac *step,
		   uint32_t *solved, struct ofc_error *err)
{
	uint32_t n = g->n;
	double *out = xcalloc(n, sizeof(double));
	struct step_problem p = {.g = g, .o = o};
	uint16_t *dist = NULL;
	uint32_t *in_off = NULL, *in_arc = NULL;
	int rc = -1;

	for (uint32_t v = 0; v < n; v++)
		if (!frac_valid(o->inject[v]) || o->inject[v].num <= 0) {
			ofc_error_set(err, OFC_E_INPUT, "host %u: injection must be above 0", v);
			goto out;
		}
	p.bden = common_den(o->inject, n);
	if (!p.bden) {
		ofc_error_set(err, OFC_E_INPUT,
			      "host injection limits: their fractions of a link are too fine "
			      "(common denominator above 2^20)");
		goto out;
	}
	p.bnum = xmalloc((size_t)n * sizeof(int64_t));
	for (uint32_t so = 0; so < D; so++) {
		uint32_t st = first + so, t = so + 1;
		struct frac h = frac_make(0, 1);

		memset(out, 0, n * sizeof(double));
		for (size_t i = s->step_start[st]; i < s->step_start[st + 1]; i++) {
			const struct xfer *x = &s->xfers[i];

			/* NIC forwarding: relayed allgather bytes skip the host */
			if (reverse || !o->nic_forwarding || x->block == x->src)
				out[x->src] += (double)x->length / SCHED_ONE;
		}
		if (reverse) {
			/* Whole shards (the pieces of one partial sum cover it),
			 * whatever the split: the load is fixed. */
			for (uint32_t v = 0; v < n; v++) {
				struct frac q =
				    frac_div(frac_make((int64_t)llround(out[v]), 1), o->inject[v]);

				if (frac_cmp(q, h) > 0)
					h = q;
			}
			if (frac_cmp(h, step[so]) > 0)
				step[so] = h;
			continue;
		}
		double hv = 0;
		for (uint32_t v = 0; v < n; v++)
			hv = fmax(hv, out[v] / frac_value(o->inject[v]));
		if (hv <= frac_value(step[so]) * (1 + 1e-9))
			continue;
		/* The limit binds: this step again, links and senders at once. */
		if (!dist) {
			dist = topo_distances(g, o->threads, err);
			if (!dist)
				goto out;
			p.tail = graph_arc_tails(g);
			bfb_in_arcs(g, &in_off, &in_arc);
			p.dist = dist;
		}
		for (uint32_t v = 0; v < n; v++)
			p.bnum[v] = o->nic_forwarding && t > 1
					? -1
					: o->inject[v].num * (p.bden / o->inject[v].den);
		p.t = t;
		p.ndem = 0;
		p.ncand = 0;
		step_demands(&p, in_off, in_arc);
		if (solve_step(&p, s, st, step[so], &step[so], err) < 0)
			goto out;
		(*solved)++;
	}
	rc = 0;
out:
	free(out);
	free(p.bnum);
	free(p.dem);
	free(p.cand);
	free((void *)p.tail);
	free(dist);
	free(in_off);
	free(in_arc);
	return rc;
}

void bfb_in_arcs(const struct graph *g, uint32_t **in_off, uint32_t **in_arc)
{
	uint32_t *off = xcalloc((size_t)g->n + 2, sizeof(uint32_t));
	uint32_t *arc = xmalloc(((size_t)g->m + 1) * sizeof(uint32_t));

	for (uint32_t a = 0; a < g->m; a++)
		off[g->adj[a] + 2]++;
	for (uint32_t u = 0; u < g->n; u++)
		off[u + 2] += off[u + 1];
	for (uint32_t a = 0; a < g->m; a++)
		arc[off[g->adj[a] + 1]++] = a;
	*in_off = off;
	*in_arc = arc;
}
