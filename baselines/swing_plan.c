/* Swing's detours around failed links, the steps together: each step
 * planned on its own (swing_plan_step) on worker threads, a step whose
 * pairs an earlier one has (the allgather's steps mirror the
 * reduce-scatter's) planned once, the steps merged in order; and the two
 * plans the cost model chooses between (hops free, hops weighed) priced a
 * step at a time, the one that cannot win given up before its dearest
 * steps. See baselines.h, "Swing around failed links". */
#include "baselines/swing_loads.h"

#include <stdlib.h>
#include <string.h>

/* What both plans share: the geometry (hops free; g.p names the failed
 * arcs), the program, the failed arcs, each step's longest healthy half
 * (cost), the first step with its pairs (same), and where plans are
 * priced the least its busiest arc can carry (floor); the workers. */
struct steps {
	struct geo g;
	struct swing_reroute fail;
	const struct schedule *s;
	const struct torus_figures *healthy;
	uint8_t *bad;
	uint64_t busiest, max_det;
	uint64_t *cost, *floor;
	uint32_t *same;
	struct swing_worker *w;
	unsigned nw;
};

/* Whether steps a and b have the same pairs (each sorted by source, then
 * destination): their plans are then the same but for the step. */
static int by_pair(const void *a, const void *b)
{
	const struct rpair *x = a, *y = b;

	if (x->rep != y->rep)
		return x->rep < y->rep ? -1 : 1;
	return x->dst < y->dst ? -1 : x->dst > y->dst;
}

static bool same_pairs(const struct rpair *a, size_t na, const struct rpair *b, size_t nb)
{
	if (na != nb)
		return false;
	for (size_t i = 0; i < na; i++)
		if (a[i].rep != b[i].rep || a[i].dst != b[i].dst || a[i].units != b[i].units)
			return false;
	return true;
}

/* Each step's pairs: its busiest healthy load (relieve's measure), cost,
 * the first step with its pairs and (priced) its floor. */
static int steps_scan(struct steps *S, struct ofc_error *err)
{
	struct loads L;
	struct rpair *pr = NULL, *all = NULL;
	struct swing_detour *tmp = NULL;
	size_t cap_pr = 0, cap_all = 0, cap_tmp = 0, np = 0,
	       *at = xcalloc(S->s->nsteps + 2, sizeof(size_t));
	int rc = 0;

	swing_loads_init(&L, &S->g, S->bad);
	for (uint32_t st = 0; st < S->s->nsteps && rc == 0; st++) {
		rc = swing_step_pairs(&S->g, S->s, st, &pr, &cap_pr, &np, err);
		if (rc < 0)
			break;
		swing_loads_step(&L, pr, np);
		uint64_t m = swing_untouched_max(&L);
		L.busiest = m > L.busiest ? m : L.busiest;
		S->cost[st] = swing_pairs_hops(&S->g, pr, np);
		if (S->floor)
			S->floor[st] = swing_step_floor(&L, st, pr, np, &tmp, &cap_tmp);
		GROW(all, cap_all, at[st] + np + 1);
		memcpy(all + at[st], pr, np * sizeof(*pr));
		qsort(all + at[st], np, sizeof(*pr), by_pair);
		at[st + 1] = at[st] + np;
		S->same[st] = st;
		for (uint32_t e = 0; e < st && S->same[st] == st; e++)
			if (S->same[e] == e &&
			    same_pairs(all + at[e], at[e + 1] - at[e], all + at[st], np))
				S->same[st] = e;
	}
	S->busiest = L.busiest;
	swing_loads_free(&L);
	free(pr);
	free(all);
	free(tmp);
	free(at);
	return rc;
}

static void steps_free(struct steps *S)
{
	for (unsigned i = 0; i < S->nw; i++)
		swing_worker_free(&S->w[i]);
	free(S->w);
	free(S->cost);
	free(S->floor);
	free(S->same);
	free(S->bad);
	free(S->fail.failed);
	free(S->g.xy);
}

static int steps_make(struct steps *S, const struct topo_tree *t, const struct sched_reduced *r,
		      const uint32_t *failed, size_t nfailed, const struct torus_figures *healthy,
		      uint64_t max_bytes, unsigned threads, bool priced, struct ofc_error *err)
{
	memset(S, 0, sizeof(*S));
	if (swing_geo_make(&S->g, t, &r->group, err) < 0)
		return -1;
	S->bad = xcalloc(S->g.narcs, 1);
	for (size_t i = 0; i < nfailed; i++) {
		if (failed[i] >= S->g.narcs) {
			free(S->bad);
			return ofc_error_set(err, OFC_E_INPUT, "failed arc %u: %s has %zu",
					     failed[i], t->spec, S->g.narcs);
		}
		S->bad[failed[i]] = 1;
	}
	swing_geo_coords(&S->g);
	S->fail.failed = xmalloc((nfailed + 1) * sizeof(uint32_t));
	for (size_t a = 0; a < S->g.narcs; a++)
		if (S->bad[a])
			S->fail.failed[S->fail.nfailed++] = (uint32_t)a;
	S->g.p = &S->fail;
	S->s = &r->prog;
	S->healthy = healthy;
	S->max_det = max_bytes / sizeof(struct swing_detour);
	S->cost = xcalloc(S->s->nsteps + 1, sizeof(uint64_t));
	S->same = xcalloc(S->s->nsteps + 1, sizeof(uint32_t));
	S->floor = priced ? xcalloc(S->s->nsteps + 1, sizeof(uint64_t)) : NULL;
	S->nw = parallel_workers(S->s->nsteps, 1, threads);
	S->w = xcalloc(S->nw, sizeof(struct swing_worker));
	if (steps_scan(S, err) < 0) {
		steps_free(S);
		return -1;
	}
	return 0;
}

/* A step planned on its own (each on its own loads): its detours and
 * searched legs, paths counted from 0, merged into the plan in step
 * order. */
struct step_plan {
	struct swing_reroute q;
	size_t cap, cap_legs, crossed_peak[2];
	int rc;
	struct ofc_error err;
};

/* One plan of the detours: its geometry (its hop price), the patch it
 * makes (out: the steps' figures as they are planned), its steps' plans,
 * how far down the order it is, and the least it can cost (lb: its
 * planned steps at their price, the others at their floor's). */
struct plan {
	struct geo g;
	struct swing_reroute out;
	struct step_plan *sp;
	size_t next;
	double lb;
	bool failed;
};

static void plan_init(struct plan *P, const struct steps *S, double hop_tau)
{
	uint32_t n = S->s->nsteps;
	/* tau_B is degree x load / (2 SCHED_ONE n) a step (swing_figures_of) */
	double hu = hop_tau * 2.0 * SCHED_ONE * S->g.n / S->g.degree;

	memset(P, 0, sizeof(*P));
	P->g = S->g;
	P->g.hop_units =
	    hu > 0 ? (hu < (double)INT64_MAX / 4096 ? (int64_t)hu : INT64_MAX / 4096) : 0;
	P->out.failed = xmalloc((S->fail.nfailed + 1) * sizeof(uint32_t));
	memcpy(P->out.failed, S->fail.failed, S->fail.nfailed * sizeof(uint32_t));
	P->out.nfailed = S->fail.nfailed;
	P->out.nsteps = n;
	P->out.step_start = xcalloc(n + 1, sizeof(size_t));
	P->out.step_max = xcalloc(n + 1, sizeof(uint64_t));
	P->out.step_hops = xcalloc(n + 1, sizeof(uint32_t));
	P->sp = xcalloc(n + 1, sizeof(struct step_plan));
}

static void plan_free(struct plan *P, const struct steps *S)
{
	for (uint32_t st = 0; st < S->s->nsteps; st++) {
		free(P->sp[st].q.det);
		free(P->sp[st].q.legs);
	}
	free(P->sp);
	swing_reroute_free(&P->out);
}

struct plan_job {
	struct steps *S;
	struct plan *P;
	const uint32_t *batch;
};

static void plan_one(void *ctx, size_t i, unsigned worker)
{
	struct plan_job *j = ctx;
	struct steps *S = j->S;
	uint32_t st = j->batch[i];
	struct step_plan *sp = &j->P->sp[st];
	struct swing_worker *w = swing_worker_ready(&S->w[worker], &j->P->g, S->bad, S->busiest);
	size_t np = 0;

	sp->q.failed = S->fail.failed;
	sp->q.nfailed = S->fail.nfailed;
	sp->q.step_max = j->P->out.step_max;
	sp->q.step_hops = j->P->out.step_hops;
	w->g.p = &sp->q;
	sp->rc = swing_step_pairs(&w->g, S->s, st, &w->pr, &w->cap_pr, &np, &sp->err);
	if (sp->rc == 0) {
		swing_loads_step(&w->L, w->pr, np);
		sp->rc =
		    swing_plan_step(&w->L, &sp->q, st, w->pr, np, &w->tmp, &w->cap_tmp, &sp->cap,
				    &sp->cap_legs, S->max_det, sp->crossed_peak, &sp->err);
	}
	/* held until merged: the room its placings took given back (the
	 * steps held at once would otherwise need twice the patch) */
	if (sp->q.ndet) {
		sp->q.det = xreallocarray(sp->q.det, sp->q.ndet, sizeof(*sp->q.det));
		sp->cap = sp->q.ndet;
	}
}

/* P's next steps down `order`, a step an earlier one has the pairs of
 * passed over: all of them (limit 0), else as many as the workers. Whether
 * one failed. */
static bool plan_batch(struct steps *S, struct plan *P, const uint32_t *order, size_t limit)
{
	uint32_t n = S->s->nsteps, k = 0, *batch = xmalloc((n + 1) * sizeof(uint32_t));
	struct plan_job j = {.S = S, .P = P, .batch = batch};
	bool failed = false;

	while (P->next < n && (!limit || k < limit)) {
		uint32_t st = order[P->next++];

		if (S->same[st] == st)
			batch[k++] = st;
	}
	P->out.planned += k;
	if (S->nw > 1 && k > 1)
		parallel_for(k, 1, S->nw, plan_one, &j);
	else
		for (uint32_t i = 0; i < k; i++)
			plan_one(&j, i, 0);
	for (uint32_t i = 0; i < k; i++)
		failed = failed || P->sp[batch[i]].rc < 0;
	free(batch);
	return failed;
}

/* A step's plan appended to p, its searched paths moved past p's; the
 * first taken whole (a copy would hold the patch twice). */
static void merge_step(struct swing_reroute *p, size_t *cap, size_t *cap_legs, struct step_plan *sp)
{
	struct swing_reroute *q = &sp->q;

	for (size_t i = 0; i < q->ndet; i++)
		if (q->det[i].way == SWING_WAY_PATH)
			q->det[i].path += (uint32_t)p->nlegs;
	if (!p->det) {
		p->det = q->det;
		p->ndet = q->ndet;
		*cap = sp->cap;
		q->det = NULL;
	} else if (q->ndet) {
		GROW(p->det, *cap, p->ndet + q->ndet);
		memcpy(p->det + p->ndet, q->det, q->ndet * sizeof(*q->det));
		p->ndet += q->ndet;
	}
	if (!p->legs) {
		p->legs = q->legs;
		p->nlegs = q->nlegs;
		*cap_legs = sp->cap_legs;
		q->legs = NULL;
	} else if (q->nlegs) {
		GROW(p->legs, *cap_legs, p->nlegs + q->nlegs);
		memcpy(p->legs + p->nlegs, q->legs, q->nlegs * sizeof(*q->legs));
		p->nlegs += q->nlegs;
	}
	free(q->det);
	free(q->legs);
	q->det = NULL;
	q->legs = NULL;
}

/* Step st's detours those of the earlier step o with its pairs, already
 * in p (their searched paths shared). */
static void copy_step(struct swing_reroute *p, size_t *cap, uint32_t o, uint32_t st)
{
	size_t a = p->step_start[o], n = p->step_start[o + 1] - a;

	GROW(p->det, *cap, p->ndet + n + 1);
	for (size_t i = 0; i < n; i++) {
		p->det[p->ndet + i] = p->det[a + i];
		p->det[p->ndet + i].step = st;
	}
	p->ndet += n;
	p->step_max[st] = p->step_max[o];
	p->step_hops[st] = p->step_hops[o];
}

/* P's steps merged in step order: the patch one worker makes (each step
 * planned in turn straight into it), bit for bit. A step's plan depends
 * on the earlier steps' only through the memory limit: where it was
 * reached given their detours, refused as in turn, and where it may have
 * cut the step's rip-up short, the step planned again after them (and a
 * step with its pairs too). Every step of P planned. */
static int merge_plan(struct steps *S, struct plan *P, struct ofc_error *err)
{
	struct swing_reroute *p = &P->out;
	uint32_t n = S->s->nsteps;
	uint8_t *in_turn = xcalloc(n + 1, 1);
	size_t cap = 0, cap_legs = 0, np = 0, cp[2];
	int rc = 0;

	for (uint32_t st = 0; st < n && rc == 0; st++) {
		uint32_t o = S->same[st];
		struct step_plan *sp = &P->sp[o];

		p->step_start[st] = p->ndet;
		if (p->ndet + sp->crossed_peak[0] * SWING_DETOUR_PARTS > S->max_det) {
			rc = swing_over_limit(st, p->ndet, sp->crossed_peak[0], S->max_det, err);
		} else if (sp->rc < 0) {
			*err = sp->err;
			rc = -1;
		} else if (!in_turn[o] && p->ndet + sp->crossed_peak[1] < S->max_det) {
			if (o == st)
				merge_step(p, &cap, &cap_legs, sp);
			else
				copy_step(p, &cap, o, st);
		} else { /* in turn, straight into p */
			struct swing_worker *w =
			    swing_worker_ready(&S->w[0], &P->g, S->bad, S->busiest);

			in_turn[st] = 1;
			p->planned++;
			w->g.p = p;
			rc = swing_step_pairs(&w->g, S->s, st, &w->pr, &w->cap_pr, &np, err);
			if (rc == 0) {
				swing_loads_step(&w->L, w->pr, np);
				rc = swing_plan_step(&w->L, p, st, w->pr, np, &w->tmp, &w->cap_tmp,
						     &cap, &cap_legs, S->max_det, cp, err);
			}
		}
	}
	p->step_start[n] = p->ndet;
	free(in_turn);
	if (rc == 0)
		swing_figures_of(&S->g, p, S->healthy);
	return rc;
}

int swing_reroute(const struct topo_tree *t, const struct sched_reduced *r, const uint32_t *failed,
		  size_t nfailed, const struct torus_figures *healthy, uint64_t max_bytes,
		  unsigned threads, struct swing_reroute *p, struct ofc_error *err)
{
	return swing_reroute_priced(t, r, failed, nfailed, healthy, 0, max_bytes, threads, p, err);
}

int swing_reroute_priced(const struct topo_tree *t, const struct sched_reduced *r,
			 const uint32_t *failed, size_t nfailed,
			 const struct torus_figures *healthy, double hop_tau, uint64_t max_bytes,
			 unsigned threads, struct swing_reroute *p, struct ofc_error *err)
{
	struct steps S;
	struct plan P;

	memset(p, 0, sizeof(*p));
	if (steps_make(&S, t, r, failed, nfailed, healthy, max_bytes, threads, false, err) < 0)
		return -1;
	uint32_t *order = swing_steps_by_cost(S.cost, S.s->nsteps, true);
	plan_init(&P, &S, hop_tau);
	plan_batch(&S, &P, order, 0);
	int rc = merge_plan(&S, &P, err);
	if (rc == 0) {
		*p = P.out;
		P.out = (struct swing_reroute){0};
	}
	plan_free(&P, &S);
	free(order);
	steps_free(&S);
	return rc;
}

/* A step's price: c's per hop of its longest route and per tau_B of its
 * busiest arc's load (swing_figures_of's). */
static double step_price(const struct steps *S, const struct swing_price *c, uint32_t hops,
			 uint64_t load)
{
	return c->hop_us * hops + c->tau_us * (S->g.degree * (load / (2.0 * SCHED_ONE * S->g.n)));
}

/* P's least price: its planned steps at their price, the others at the
 * least any plan of them costs (their longest healthy half, their floor).
 * *whole: every step planned (the price then P's, and *hops its hops). */
static double plan_bound(const struct steps *S, const struct plan *P, const struct swing_price *c,
			 bool *whole, uint64_t *hops)
{
	double lb = 0;

	*whole = true;
	*hops = 0;
	for (uint32_t st = 0; st < S->s->nsteps; st++) {
		uint32_t o = S->same[st];
		bool done = P->sp[o].q.step_max != NULL && P->sp[o].rc == 0;

		*whole = *whole && done;
		*hops += done ? P->out.step_hops[o] : S->cost[st];
		lb += done ? step_price(S, c, P->out.step_hops[o], P->out.step_max[o])
			   : step_price(S, c, (uint32_t)S->cost[st], S->floor[st]);
	}
	return lb;
}

/* Which plan to take further, best first: the one whose least price is
 * lower (the hops-free where equal); -1 where none need be: both whole,
 * or one whole and the other's least price above its price (given up:
 * *gone). A plan that failed a step is given up where it is the weighed
 * one, taken to its end where it is the hops-free one (its error is the
 * answer). */
static int plan_pick(const struct steps *S, struct plan P[2], const struct swing_price *c,
		     int *gone)
{
	bool whole[2];
	uint64_t hops[2];

	if (P[0].failed || P[1].failed) {
		*gone = 1;
		return P[0].next < S->s->nsteps ? 0 : -1;
	}
	for (int v = 0; v < 2; v++)
		P[v].lb = plan_bound(S, &P[v], c, &whole[v], &hops[v]);
	if (whole[0] && whole[1])
		return -1;
	for (int v = 0; v < 2; v++)
		/* (a margin over the rounding of the two sums; and a plan of
		 * fewer hops than steps pays an alpha a step, unpriced here) */
		if (whole[v] && hops[v] >= S->s->nsteps && P[!v].lb > P[v].lb * (1 + 1e-9)) {
			*gone = !v;
			return -1;
		}
	if (whole[0] || whole[1])
		return whole[0] ? 1 : 0;
	return P[1].lb < P[0].lb ? 1 : 0;
}

int swing_reroute_both(const struct topo_tree *t, const struct sched_reduced *r,
		       const uint32_t *failed, size_t nfailed, const struct torus_figures *healthy,
		       const struct swing_price *c, uint64_t max_bytes, unsigned threads,
		       struct swing_reroute *p, struct swing_reroute *w, struct ofc_error *err)
{
	struct steps S;
	struct plan P[2];
	int v, gone = -1, rc = 0;
	struct ofc_error e = {0};

	memset(p, 0, sizeof(*p));
	memset(w, 0, sizeof(*w));
	if (steps_make(&S, t, r, failed, nfailed, healthy, max_bytes, threads, true, err) < 0)
		return -1;
	uint32_t *order = swing_steps_by_cost(S.cost, S.s->nsteps, false);
	plan_init(&P[0], &S, 0);
	plan_init(&P[1], &S, c->hop_tau);
	while ((v = plan_pick(&S, P, c, &gone)) >= 0)
		P[v].failed = plan_batch(&S, &P[v], order, S.nw) || P[v].failed;
	/* the weighed plan over the memory limit: the hops-free one after all */
	if (gone != 1 && merge_plan(&S, &P[1], &e) < 0) {
		gone = 1;
		plan_batch(&S, &P[0], order, 0);
	}
	if (gone != 0)
		rc = merge_plan(&S, &P[0], err);
	if (rc == 0 && gone != 0) {
		*p = P[0].out;
		P[0].out = (struct swing_reroute){0};
	}
	if (rc == 0 && gone != 1) {
		*w = P[1].out;
		P[1].out = (struct swing_reroute){0};
	}
	if (rc == 0 && gone >= 0)
		(gone ? w : p)->planned = P[gone].out.planned;
	plan_free(&P[0], &S);
	plan_free(&P[1], &S);
	free(order);
	steps_free(&S);
	return rc;
}
