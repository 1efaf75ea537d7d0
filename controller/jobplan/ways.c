/* The ways to run an iteration: which candidate topology each
 * phase runs on, and what switching between them costs.
 *
 * Switching: the circuits of the topology before and after, compared as
 * cross-connects (switch, in, out). A switch works on its own, all at once:
 * an OCS reconfigures in reconfig_time however many cross-connects change,
 * a robotic patch panel makes one move at a time (move_time each, a move
 * taking a fibre to its new port: the larger of the circuits it adds and
 * those it removes). The switches switch in parallel. Make-before-break: a
 * change whose host ports the phase before does not use (its schedules'
 * transfers, jobplan_cost.ports_used) can be made while that phase runs, so
 * only what is left of it after the phase, plus the changes on ports the
 * phase uses, delay the next phase. The controller's own work (a
 * transaction's reads, journal and fsync; on the testbed every changed
 * circuit's veth pair and routes) is jobplan_overhead, after the switches'
 * and never hidden; a run that switches only between phases (the testbed)
 * hides nothing (serial_switching).
 *
 * The choice: every assignment of candidates to phases, the iteration a
 * cycle (the last phase's topology switched to the first's), the job the
 * switching from what is in place to the first phase's topology plus
 * `iterations` iterations. A dynamic programme over the phases for each
 * first topology finds the least job time exactly; the best static
 * topology and a topology per phase are two of the assignments it looks
 * at, so it is never slower than either. */
#include "controller/jobplan/internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct xkey {
	uint32_t sw, in, out, src, srcp, dst, dstp;
};

static int cmp_xkey(const void *a, const void *b)
{
	const struct xkey *x = a, *y = b;

	if (x->sw != y->sw)
		return x->sw < y->sw ? -1 : 1;
	if (x->in != y->in)
		return x->in < y->in ? -1 : 1;
	return (x->out > y->out) - (x->out < y->out);
}

static struct xkey *keys(const struct jobplan_topo *t)
{
	struct xkey *k = xmalloc(((size_t)t->ncircuits + 1) * sizeof(*k));

	for (uint32_t i = 0; i < t->ncircuits; i++) {
		const struct circuit *c = &t->circuits[i];

		k[i] = (struct xkey){c->sw,	  c->in_port,  c->out_port, c->src_host,
				     c->src_port, c->dst_host, c->dst_port};
	}
	qsort(k, t->ncircuits, sizeof(*k), cmp_xkey);
	return k;
}

/* What one switch takes for x changes (moves for a patch panel). */
static double switch_s(const struct fswitch *s, uint32_t x, double delay)
{
	if (!x)
		return 0;
	if (s->kind == SWITCH_PATCH_PANEL)
		return x * (delay >= 0 ? delay : s->move_time);
	return delay >= 0 ? delay : s->reconfig_time;
}

/* The candidate switched from (in place, else the config's). */
static uint32_t origin_topo(const struct jobplan_result *r)
{
	for (uint32_t i = 0; i < r->ntopo; i++)
		if (r->topo[i].origin == JOBPLAN_IN_PLACE)
			return i;
	for (uint32_t i = 0; i < r->ntopo; i++)
		if (r->topo[i].origin == JOBPLAN_CONFIG)
			return i;
	return UINT32_MAX;
}

/* The circuits that change from a to b, into d. */
void jobplan_diff_make(const struct jobplan_topo *A, const struct jobplan_topo *B,
		       struct jobplan_diff *d)
{
	struct xkey *ka = keys(A), *kb = keys(B);
	size_t i = 0, j = 0;

	d->n = 0;
	d->c = xmalloc(((size_t)A->ncircuits + B->ncircuits + 1) * sizeof(*d->c));
	while (i < A->ncircuits || j < B->ncircuits) {
		int c = i == A->ncircuits ? 1 : j == B->ncircuits ? -1 : cmp_xkey(&ka[i], &kb[j]);
		const struct xkey *x = c < 0 ? &ka[i] : &kb[j];

		if (c == 0) {
			i++;
			j++;
			continue;
		}
		d->c[d->n++] =
		    (struct jobplan_change){x->sw, x->src, x->srcp, x->dst, x->dstp, c > 0};
		if (c < 0)
			i++;
		else
			j++;
	}
	free(ka);
	free(kb);
}

double jobplan_switch_us(const struct jobplan_result *r, uint32_t a, uint32_t b,
			 const struct jobplan_cost *before, double window_us, double delay,
			 double *full_us, uint32_t *changes)
{
	const struct fabric *f = r->fabric;
	uint32_t P = r->ports, ns = f->nswitches;
	double exposed = 0, full = 0;
	struct jobplan_diff own = {0};
	const struct jobplan_diff *d;

	*full_us = 0;
	*changes = 0;
	if (a == UINT32_MAX)
		a = origin_topo(r);
	if (a == b || a == UINT32_MAX)
		return 0;
	if (r->diff) {
		d = &r->diff[(size_t)a * r->ntopo + b];
	} else {
		jobplan_diff_make(&r->topo[a], &r->topo[b], &own);
		d = &own;
	}
	/* per switch: removes and adds, on ports free during the phase before
	 * or busy */
	uint32_t *cnt = xcalloc((size_t)ns * 4 + 1, sizeof(uint32_t));

	for (uint32_t i = 0; i < d->n; i++) {
		const struct jobplan_change *x = &d->c[i];
		bool busy = before && before->ports_used && x->srcp < P && x->dstp < P &&
			    (before->ports_used[(size_t)x->src * P + x->srcp] ||
			     before->ports_used[(size_t)x->dst * P + x->dstp]);

		cnt[(size_t)x->sw * 4 + (x->add ? 1 : 0) + (busy ? 2 : 0)]++;
	}
	for (uint32_t s = 0; s < ns; s++) {
		const uint32_t *k = cnt + (size_t)s * 4;
		uint32_t free_moves = k[0] > k[1] ? k[0] : k[1];
		uint32_t busy_moves = k[2] > k[3] ? k[2] : k[3];
		double tf = switch_s(&f->switches[s], free_moves, delay) * 1e6;
		double tb = switch_s(&f->switches[s], busy_moves, delay) * 1e6;
		/* an OCS changes all at once: one reconfiguration if either */
		if (f->switches[s].kind != SWITCH_PATCH_PANEL && free_moves && busy_moves)
			tf = 0;
		*changes += free_moves + busy_moves;
		exposed = fmax(exposed, fmax(0, tf - window_us) + tb);
		full = fmax(full, tf + tb);
	}
	free(cnt);
	free(own.c);
	if (*changes) { /* the controller's work, after the switches' */
		double over = (r->overhead.txn_s + r->overhead.change_s * *changes) * 1e6;

		exposed += over;
		full += over;
	}
	*full_us = full;
	return r->serial_switching ? full : exposed;
}

static struct jobplan_way new_way(uint32_t np)
{
	struct jobplan_way w = {0};

	w.topo = xcalloc(np + 1, sizeof(uint32_t));
	w.phase_us = xcalloc(np + 1, sizeof(double));
	w.switch_us = xcalloc(np + 1, sizeof(double));
	w.switch_full = xcalloc(np + 1, sizeof(double));
	w.changes = xcalloc(np + 1, sizeof(uint32_t));
	return w;
}

void jobplan_way_free(struct jobplan_way *w)
{
	free(w->topo);
	free(w->phase_us);
	free(w->switch_us);
	free(w->switch_full);
	free(w->changes);
	memset(w, 0, sizeof(*w));
}

struct sweep {
	const struct jobplan_result *r;
	double delay, size_scale;
	uint32_t P, K;
	double *T;     /* P x K: count x one run, INFINITY where it cannot run */
	double *S;     /* P x K x K: exposed switching into phase p from a to b */
	double *F;     /* ... in all */
	uint32_t *C;   /* ... changes */
	double *first; /* K: from in place */
	double iters;
};

static double phase_time(const struct sweep *s, uint32_t p, uint32_t t)
{
	const struct jobplan_cost *c = &s->r->cost[(size_t)p * s->K + t];

	if (!c->ok)
		return INFINITY;
	return s->r->workload->phases[p].count * (c->lat_us + c->bw_us * s->size_scale);
}

static void sweep_init(struct sweep *s, const struct jobplan_result *r, double delay,
		       double size_scale)
{
	uint32_t P = r->nphases, K = r->ntopo;

	*s = (struct sweep){.r = r, .delay = delay, .size_scale = size_scale, .P = P, .K = K};
	s->iters = r->workload->iterations ? r->workload->iterations : 1;
	s->T = xmalloc(((size_t)P * K + 1) * sizeof(double));
	s->S = xmalloc(((size_t)P * K * K + 1) * sizeof(double));
	s->F = xmalloc(((size_t)P * K * K + 1) * sizeof(double));
	s->C = xmalloc(((size_t)P * K * K + 1) * sizeof(uint32_t));
	s->first = xmalloc(((size_t)K + 1) * sizeof(double));
	for (uint32_t p = 0; p < P; p++)
		for (uint32_t t = 0; t < K; t++)
			s->T[(size_t)p * K + t] = phase_time(s, p, t);
	for (uint32_t p = 0; p < P; p++) {
		uint32_t prev = (p + P - 1) % P;

		for (uint32_t a = 0; a < K; a++)
			for (uint32_t b = 0; b < K; b++) {
				size_t at = ((size_t)p * K + a) * K + b;
				double win = s->T[(size_t)prev * K + a];

				s->S[at] = jobplan_switch_us(
				    r, a, b, &r->cost[(size_t)prev * K + a],
				    isfinite(win) ? win : 0, delay, &s->F[at], &s->C[at]);
			}
	}
	for (uint32_t b = 0; b < K; b++) {
		uint32_t ch;
		double full;

		s->first[b] = jobplan_switch_us(r, UINT32_MAX, b, NULL, 0, delay, &full, &ch);
	}
}

static void sweep_free(struct sweep *s)
{
	free(s->T);
	free(s->S);
	free(s->F);
	free(s->C);
	free(s->first);
}

/* Fill w from an assignment (its iteration time and switching). */
static void fill(const struct sweep *s, struct jobplan_way *w)
{
	uint32_t P = s->P, K = s->K;

	w->iter_us = 0;
	for (uint32_t p = 0; p < P; p++) {
		uint32_t a = w->topo[(p + P - 1) % P], b = w->topo[p];
		size_t at = ((size_t)p * K + a) * K + b;

		w->phase_us[p] = s->T[(size_t)p * K + b];
		w->switch_us[p] = P > 1 ? s->S[at] : 0;
		w->switch_full[p] = P > 1 ? s->F[at] : 0;
		w->changes[p] = P > 1 ? s->C[at] : 0;
		w->iter_us += w->phase_us[p] + w->switch_us[p];
	}
	w->first_us = s->first[w->topo[0]];
	w->have = isfinite(w->iter_us);
}

static double job(const struct sweep *s, const struct jobplan_way *w)
{
	return w->first_us + s->iters * w->iter_us;
}

/* The least job time over every assignment: for each first topology, a
 * DP over the phases, closing the cycle at the end. */
static void best_assignment(const struct sweep *s, struct jobplan_way *w)
{
	uint32_t P = s->P, K = s->K;
	double *best = xmalloc(((size_t)P * K + 1) * sizeof(double));
	uint32_t *from = xmalloc(((size_t)P * K + 1) * sizeof(uint32_t));
	double top = INFINITY;

	for (uint32_t a0 = 0; a0 < K; a0++) {
		if (!isfinite(s->T[a0]))
			continue;
		for (uint32_t b = 0; b < K; b++)
			best[b] = b == a0 ? s->T[a0] : INFINITY;
		for (uint32_t p = 1; p < P; p++)
			for (uint32_t b = 0; b < K; b++) {
				double bt = INFINITY;
				uint32_t ba = 0;

				for (uint32_t a = 0; a < K; a++) {
					double v = best[(size_t)(p - 1) * K + a] +
						   s->S[((size_t)p * K + a) * K + b];

					if (v < bt) {
						bt = v;
						ba = a;
					}
				}
				best[(size_t)p * K + b] = bt + s->T[(size_t)p * K + b];
				from[(size_t)p * K + b] = ba;
			}
		for (uint32_t a = 0; a < K; a++) {
			double it =
			    best[(size_t)(P - 1) * K + a] + (P > 1 ? s->S[(size_t)a * K + a0] : 0);
			double total = s->first[a0] + s->iters * it;

			if (!(total < top))
				continue;
			top = total;
			w->topo[P - 1] = a;
			for (uint32_t p = P - 1; p > 0; p--)
				w->topo[p - 1] = from[(size_t)p * K + w->topo[p]];
		}
	}
	free(best);
	free(from);
	if (isfinite(top))
		fill(s, w);
}

void jobplan_ways(const struct jobplan_result *r, double delay, double size_scale,
		  struct jobplan_way way[JOBPLAN_KINDS], enum jobplan_kind *chosen)
{
	struct sweep s;
	uint32_t P = r->nphases, K = r->ntopo;

	sweep_init(&s, r, delay, size_scale);
	for (int k = 0; k < JOBPLAN_KINDS; k++)
		way[k] = new_way(P);
	/* static: each candidate on which every phase runs */
	struct jobplan_way tmp = new_way(P);
	for (uint32_t t = 0; t < K; t++) {
		for (uint32_t p = 0; p < P; p++)
			tmp.topo[p] = t;
		fill(&s, &tmp);
		if (tmp.have &&
		    (!way[JOBPLAN_STATIC].have || job(&s, &tmp) < job(&s, &way[JOBPLAN_STATIC]))) {
			struct jobplan_way x = way[JOBPLAN_STATIC];

			way[JOBPLAN_STATIC] = tmp;
			tmp = x;
		}
		if (r->topo[t].origin == JOBPLAN_IN_PLACE) {
			for (uint32_t p = 0; p < P; p++)
				way[JOBPLAN_KEEP].topo[p] = t;
			fill(&s, &way[JOBPLAN_KEEP]);
		}
	}
	jobplan_way_free(&tmp);
	if (!way[JOBPLAN_STATIC].have)
		snprintf(way[JOBPLAN_STATIC].why_not, sizeof(way[JOBPLAN_STATIC].why_not),
			 "no one topology runs every phase");
	/* a topology per phase: each its fastest (a tie keeps the one before) */
	for (uint32_t p = 0; p < P; p++) {
		uint32_t b = UINT32_MAX;

		for (uint32_t t = 0; t < K; t++) {
			double v = s.T[(size_t)p * K + t];

			if (isfinite(v) && (b == UINT32_MAX || v < s.T[(size_t)p * K + b] ||
					    (v == s.T[(size_t)p * K + b] && p > 0 &&
					     t == way[JOBPLAN_PER_PHASE].topo[p - 1])))
				b = t;
		}
		way[JOBPLAN_PER_PHASE].topo[p] = b == UINT32_MAX ? 0 : b;
	}
	fill(&s, &way[JOBPLAN_PER_PHASE]);
	if (!way[JOBPLAN_KEEP].have)
		snprintf(way[JOBPLAN_KEEP].why_not, sizeof(way[JOBPLAN_KEEP].why_not), "%s",
			 origin_topo(r) < K && r->topo[origin_topo(r)].origin == JOBPLAN_IN_PLACE
			     ? "the circuits in place do not run every phase"
			     : "no circuits in place were read");
	best_assignment(&s, &way[JOBPLAN_CHOSEN]);
	*chosen = JOBPLAN_CHOSEN;
	/* The chosen one as the way it equals, if it does (static first). */
	for (int k = JOBPLAN_STATIC; k <= JOBPLAN_KEEP && way[JOBPLAN_CHOSEN].have; k++)
		if (way[k].have &&
		    job(&s, &way[k]) <= job(&s, &way[JOBPLAN_CHOSEN]) * (1 + 1e-12) &&
		    *chosen == JOBPLAN_CHOSEN) {
			*chosen = (enum jobplan_kind)k;
		}
	sweep_free(&s);
}
