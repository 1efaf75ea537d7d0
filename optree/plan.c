/* The paper's analytic optimum and the planner over integer radices. */
#include "optree/internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const algo_names[] = {
    [OPTREE_RING] = "ring",   [OPTREE_NE] = "ne",     [OPTREE_ONESTAGE] = "onestage",
    [OPTREE_TREE] = "optree", [OPTREE_WRHT] = "wrht",
};

const char *optree_algo_name(enum optree_algo a)
{
	return (size_t)a < ARRAY_SIZE(algo_names) && algo_names[a] ? algo_names[a] : "unknown";
}

int optree_algo_parse(const char *s, enum optree_algo *a)
{
	for (size_t i = 0; i < ARRAY_SIZE(algo_names); i++)
		if (algo_names[i] && strcmp(s, algo_names[i]) == 0) {
			*a = (enum optree_algo)i;
			return 0;
		}
	return -1;
}

int optree_ring_check(const struct optree_ring *r, struct ofc_error *err)
{
	if (r->nodes < 2 || r->nodes > SCHED_MAX_NODES)
		return ofc_error_set(err, OFC_E_INPUT, "a ring has 2..%u nodes, not %u",
				     SCHED_MAX_NODES, r->nodes);
	if (r->wavelengths < 1 || r->wavelengths > 65535)
		return ofc_error_set(err, OFC_E_INPUT, "wavelengths must be 1..65535");
	if (r->fibres < 1 || r->fibres > 255)
		return ofc_error_set(err, OFC_E_INPUT, "fibres per direction must be 1..255");
	if (r->max_add < 1)
		return ofc_error_set(err, OFC_E_INPUT, "a node must add at least one lightpath");
	/* The verifier keeps state per (direction, fibre, wavelength) and node. */
	uint64_t cells = 2ull * r->fibres * r->wavelengths * r->nodes;
	if (cells > OPTREE_MAX_CELLS)
		return ofc_error_set(
		    err, OFC_E_INPUT,
		    "2 x %u fibres x %u wavelengths x %u nodes = %llu channel-nodes: "
		    "too many to verify (limit %u)",
		    r->fibres, r->wavelengths, r->nodes, (unsigned long long)cells,
		    OPTREE_MAX_CELLS);
	if (!(r->rate > 0) || !(r->mrr_delay >= 0) || !(r->oeo_delay >= 0) || !r->block_bytes)
		return ofc_error_set(err, OFC_E_INPUT,
				     "rate and block size must be positive, delays not negative");
	return 0;
}

static double step_us(const struct optree_ring *r)
{
	return (double)r->block_bytes * 8.0 / r->rate * 1e6;
}

double optree_analytic_steps(const struct optree_ring *r, double k)
{
	double m = pow((double)r->nodes, 1.0 / k);

	/* Theorem 1: stage 1 shares the whole ring (load N m / 8 per
	 * direction), stages 2..k live on lines (N m / 4); one block per
	 * wavelength per step. */
	return (double)r->nodes * m * (2 * k - 1) / (8.0 * r->wavelengths * r->fibres);
}

void optree_analytic(const struct optree_ring *r, struct optree_analytic *a)
{
	double ln = log((double)r->nodes), disc = ln * ln - 2 * ln;

	/* Theorem 2: d/dk [N^(1/k) (2k - 1)] = 0 <=> 2k^2 - 2k ln N + ln N = 0.
	 * Below N = e^2 there is no stationary point and one stage is best. */
	a->k_real = disc >= 0 ? (ln + sqrt(disc)) / 2 : 1.0;
	a->depth = (uint32_t)lround(a->k_real);
	if (a->depth < 1)
		a->depth = 1;
	a->radix = pow((double)r->nodes, 1.0 / a->depth);
	a->steps = optree_analytic_steps(r, a->depth);
	/* Eq. 3: T = S b / B_lambda + k (d_mrr + d_oeo). */
	a->time_us = a->steps * step_us(r) + a->depth * (r->mrr_delay + r->oeo_delay) * 1e6;
}

int optree_parse_radices(const char *s, uint32_t *radix, uint32_t *depth, struct ofc_error *err)
{
	const char *p = s;

	*depth = 0;
	for (;;) {
		char buf[16];
		size_t n = strcspn(p, ",x");
		uint32_t v;

		if (n == 0 || n >= sizeof(buf))
			return ofc_error_set(err, OFC_E_USAGE,
					     "bad radices '%s': expected numbers like 4,4,2", s);
		memcpy(buf, p, n);
		buf[n] = 0;
		if (parse_u32(buf, &v) < 0 || v < 2 || v > SCHED_MAX_NODES)
			return ofc_error_set(err, OFC_E_USAGE,
					     "bad radix '%s' in '%s': each is 2..%u", buf, s,
					     SCHED_MAX_NODES);
		if (*depth == OPTREE_MAX_DEPTH)
			return ofc_error_set(err, OFC_E_USAGE, "at most %u radices",
					     OPTREE_MAX_DEPTH);
		radix[(*depth)++] = v;
		p += n;
		if (!*p)
			return 0;
		p++;
	}
}

/* ---- predicting a plan -------------------------------------------------------- */

/* Stage 1 with unequal groups is coloured by a heuristic, which is the
 * expensive part of a prediction: remembered per radix. */
struct s1cache {
	uint32_t radix[64], colours[64], n;
};

static double plan_time(const struct optree_ring *r, uint32_t steps, uint32_t depth)
{
	return steps * step_us(r) + depth * (r->mrr_delay + r->oeo_delay) * 1e6;
}

/* A prediction in progress: the levels so far and the counts before each
 * stage, so a search can extend a prefix without recomputing it. */
struct pred {
	const struct optree_ring *r;
	struct s1cache *cache;
	struct levels L;
	uint32_t *cnt[OPTREE_MAX_DEPTH + 1];
	int64_t *scratch;
	bool uneven[OPTREE_MAX_DEPTH + 1];
	uint32_t radix[OPTREE_MAX_DEPTH];
	uint32_t stage_steps[OPTREE_MAX_DEPTH];
	uint32_t colours[OPTREE_MAX_DEPTH]; /* the larger direction's */
};

static void pred_init(struct pred *P, const struct optree_ring *r, struct s1cache *cache,
		      uint32_t depth)
{
	uint32_t n = r->nodes;

	memset(P, 0, sizeof(*P));
	P->r = r;
	P->cache = cache;
	levels_init(&P->L, n, depth);
	for (uint32_t i = 0; i <= depth; i++)
		P->cnt[i] = xmalloc((size_t)n * sizeof(uint32_t));
	for (uint32_t u = 0; u < n; u++)
		P->cnt[0][u] = 1;
	P->scratch = xmalloc(2 * ((size_t)n + 1) * sizeof(int64_t));
}

static void pred_free(struct pred *P)
{
	levels_free(&P->L);
	for (uint32_t i = 0; i <= OPTREE_MAX_DEPTH; i++)
		free(P->cnt[i]);
	free(P->scratch);
}

/* Stage d + 1 with radix m after the first d: its colour steps, or
 * UINT32_MAX when it would have nothing to do. Same routing and colouring
 * as the builder, so the figure is what the builder realises. */
static uint32_t pred_stage(struct pred *P, uint32_t d, uint32_t m)
{
	uint32_t n = P->r->nodes, FW = ring_channels(P->r), colours = UINT32_MAX;
	int rc = levels_split(&P->L, d, m);

	if (rc < 0)
		return UINT32_MAX;
	P->radix[d] = m;
	P->uneven[d + 1] = P->uneven[d] || rc == 1;
	P->L.depth = d + 1;
	uint64_t most = 0;
	if (d >= 1) {
		colours = (uint32_t)line_stage_load(&P->L, d + 1, P->cnt[d], P->cnt[d + 1],
						    P->scratch, &most);
	} else {
		struct stage_rwa st;

		stage_arcs(&P->L, 1, P->cnt[0], &st);
		if (!st.m && P->cache)
			for (uint32_t c = 0; c < P->cache->n; c++)
				if (P->cache->radix[c] == m)
					colours = P->cache->colours[c];
		if (colours == UINT32_MAX) {
			stage_colour(&P->L, 1, false, &st);
			colours = st.colours;
			if (!st.m && P->cache && P->cache->n < 64) {
				P->cache->radix[P->cache->n] = m;
				P->cache->colours[P->cache->n++] = colours;
			}
		}
		memcpy(P->cnt[1], P->cnt[0], (size_t)n * sizeof(uint32_t));
		stage_counts(&st, P->cnt[1], n);
		for (uint32_t u = 0; u < n; u++)
			if (P->cnt[1][u] - 1 > most)
				most = P->cnt[1][u] - 1; /* stage 1: adds = drops = m - 1 */
		stage_rwa_free(&st);
	}
	P->colours[d] = colours;
	P->stage_steps[d] = (colours + FW - 1) / FW;
	/* A node adds (and drops) at most max_add lightpaths, one block each,
	 * per step: fewer steps than that needs means splits (the builder's
	 * greedy split can take more; the prediction is exact without them). */
	uint32_t per = P->r->max_add < 2 * FW ? P->r->max_add : 2 * FW;
	if ((most + per - 1) / per > P->stage_steps[d])
		P->stage_steps[d] = (uint32_t)((most + per - 1) / per);
	return P->stage_steps[d];
}

static bool pred_done(const struct pred *P, uint32_t d)
{
	for (uint32_t g = 0; g < P->L.ngroups[d]; g++)
		if (P->L.size[d][g] != 1)
			return false;
	return true;
}

static void pred_plan(const struct pred *P, uint32_t depth, struct optree_plan *p)
{
	memset(p, 0, sizeof(*p));
	p->depth = depth;
	p->uneven = P->uneven[depth];
	for (uint32_t i = 0; i < depth; i++) {
		p->radix[i] = P->radix[i];
		p->stage_steps[i] = P->stage_steps[i];
		p->steps += P->stage_steps[i];
	}
	/* The builder merges a stage's partly filled last step with the next
	 * stage's partly filled first one when they fit side by side (build.c),
	 * greedily from the first stage; the step goes to the later stage. */
	uint32_t FW = ring_channels(P->r);
	bool used = false;
	for (uint32_t i = 0; i + 1 < depth; i++) {
		uint32_t a = P->colours[i] % FW, b = P->colours[i + 1] % FW, held = UINT32_MAX;

		for (uint32_t u = 0; a && b && u < P->r->nodes; u++)
			if (P->cnt[i + 1][u] < held)
				held = P->cnt[i + 1][u];
		if (!used && optree_merges(a, b, held, FW)) {
			p->stage_steps[i]--;
			p->steps--;
			used = true;
		} else {
			used = false;
		}
	}
	p->time_us = plan_time(P->r, p->steps, depth);
}

static int evaluate(const struct optree_ring *r, const uint32_t *radix, uint32_t depth,
		    struct optree_plan *p, struct s1cache *cache, struct ofc_error *err)
{
	struct levels L;
	struct pred P;

	/* levels_build for its checks and messages. */
	if (levels_build(r->nodes, radix, depth, &L, err) < 0)
		return -1;
	levels_free(&L);
	pred_init(&P, r, cache, depth);
	for (uint32_t i = 0; i < depth; i++)
		pred_stage(&P, i, radix[i]);
	pred_plan(&P, depth, p);
	pred_free(&P);
	return 0;
}

int optree_plan_radices(const struct optree_ring *r, const uint32_t *radix, uint32_t depth,
			struct optree_plan *p, struct ofc_error *err)
{
	if (optree_ring_check(r, err) < 0)
		return -1;
	return evaluate(r, radix, depth, p, NULL, err);
}

/* ---- searching -------------------------------------------------------------------- */

/* a better than b: less time, then fewer steps, then fewer stages. */
static bool better(const struct optree_plan *a, const struct optree_plan *b)
{
	double eps = 1e-9 * (fabs(b->time_us) + 1);

	if (a->time_us < b->time_us - eps)
		return true;
	if (a->time_us > b->time_us + eps)
		return false;
	if (a->steps != b->steps)
		return a->steps < b->steps;
	return a->depth < b->depth;
}

struct dp {
	uint32_t ndiv, *div;
	double *best;	  /* best time of the line stages for remaining size div[k] */
	uint32_t *choice; /* radix taken first */
	uint32_t *steps, *depth;
};

static uint32_t div_index(const struct dp *d, uint32_t v)
{
	uint32_t lo = 0, hi = d->ndiv;

	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;

		if (d->div[mid] < v)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Exact factorisations: stage 1 with radix m1 (a tiling, counted by
 * rwa_circulant_colours), then line stages whose load does not depend on
 * the level: a group of n = m s nodes holding N/n blocks each has
 * s * (N/n) * floor(m/2) * ceil(m/2) = N floor(m/2) ceil(m/2) / m blocks on
 * its middle segment, and interval colouring reaches exactly that. So the
 * best sequence for the remaining size is a shortest path over divisors. */
static void plan_exact(const struct optree_ring *r, struct optree_plan *best, bool *have)
{
	uint32_t n = r->nodes, FW = ring_channels(r);
	struct dp d = {0};
	double per_stage = (r->mrr_delay + r->oeo_delay) * 1e6;
	uint32_t per = r->max_add < 2 * FW ? r->max_add : 2 * FW;

	d.div = xmalloc(((size_t)n + 1) * sizeof(uint32_t));
	for (uint32_t v = 1; v <= n; v++)
		if (n % v == 0)
			d.div[d.ndiv++] = v;
	d.best = xmalloc(d.ndiv * sizeof(double));
	d.choice = xcalloc(d.ndiv, sizeof(uint32_t));
	d.steps = xcalloc(d.ndiv, sizeof(uint32_t));
	d.depth = xcalloc(d.ndiv, sizeof(uint32_t));
	d.best[0] = 0; /* size 1: done */
	for (uint32_t k = 1; k < d.ndiv; k++) {
		uint32_t v = d.div[k];

		d.best[k] = INFINITY;
		for (uint32_t j = 1; j <= k; j++) {
			uint32_t m = d.div[j];

			if (v % m)
				continue;
			uint32_t rest = div_index(&d, v / m);
			uint64_t load = (uint64_t)n / m * (m / 2) * ((m + 1) / 2);
			uint32_t st = (uint32_t)((load + FW - 1) / FW);
			/* Each node adds N/v blocks to each of m - 1 others. */
			uint64_t adds = (uint64_t)(n / v) * (m - 1);
			if ((adds + per - 1) / per > st)
				st = (uint32_t)((adds + per - 1) / per);
			double t = st * step_us(r) + per_stage + d.best[rest];

			if (d.depth[rest] + 1 > OPTREE_MAX_DEPTH - 1)
				continue;
			if (t < d.best[k] - 1e-9 * (fabs(t) + 1) ||
			    (t <= d.best[k] + 1e-9 * (fabs(t) + 1) &&
			     (st + d.steps[rest] < d.steps[k] ||
			      (st + d.steps[rest] == d.steps[k] &&
			       d.depth[rest] + 1 < d.depth[k])))) {
				d.best[k] = t;
				d.choice[k] = m;
				d.steps[k] = st + d.steps[rest];
				d.depth[k] = d.depth[rest] + 1;
			}
		}
	}
	for (uint32_t j = 1; j < d.ndiv; j++) {
		uint32_t m1 = d.div[j], ofs_n = m1 - 1, col[3];
		/* Stage 1 alone needs its total shortest length over the 2N
		 * segment-directions: s floor(m^2/4) / (2 F W) steps. Skip radices
		 * that cannot beat the best so far (one-stage, mostly). */
		uint64_t need = (uint64_t)(n / m1) * ((uint64_t)m1 * m1 / 4);
		if (*have && plan_time(r, (uint32_t)((need + 2ull * FW - 1) / (2ull * FW)), 1) >
				 best->time_us)
			continue;
		uint32_t *ofs = xmalloc(((size_t)ofs_n + 1) * sizeof(uint32_t));
		struct optree_plan p = {0};

		(void)ofs_n;
		stage1_colours(n, m1, n / m1, col);
		free(ofs);
		uint32_t c = col[RWA_CW] > col[RWA_CCW] ? col[RWA_CW] : col[RWA_CCW];
		p.stage_steps[0] = (c + FW - 1) / FW;
		p.radix[0] = m1;
		p.depth = 1;
		p.steps = p.stage_steps[0];
		if ((uint64_t)(m1 - 1 + per - 1) / per > p.stage_steps[0])
			p.stage_steps[0] = (m1 - 1 + per - 1) / per;
		p.steps = p.stage_steps[0];
		for (uint32_t k = div_index(&d, n / m1); d.div[k] > 1;) {
			uint32_t m = d.choice[k];
			uint64_t load = (uint64_t)n / m * (m / 2) * ((m + 1) / 2);
			uint64_t adds = (uint64_t)(n / d.div[k]) * (m - 1);

			p.radix[p.depth] = m;
			p.stage_steps[p.depth] = (uint32_t)((load + FW - 1) / FW);
			if ((adds + per - 1) / per > p.stage_steps[p.depth])
				p.stage_steps[p.depth] = (uint32_t)((adds + per - 1) / per);
			p.steps += p.stage_steps[p.depth++];
			k = div_index(&d, d.div[k] / m);
		}
		p.time_us = plan_time(r, p.steps, p.depth);
		if (!*have || better(&p, best)) {
			*best = p;
			*have = true;
		}
	}
	free(d.div);
	free(d.best);
	free(d.choice);
	free(d.steps);
	free(d.depth);
}

struct search {
	struct pred P;
	uint32_t k, a;
	struct optree_plan *best;
	bool *have;
};

/* Stages d.. of a sequence of a and a + 1; prod is the product so far. */
static void search(struct search *S, uint32_t d, uint32_t steps, uint64_t prod)
{
	const struct optree_ring *r = S->P.r;

	if (d == S->k) {
		struct optree_plan p;

		if (!pred_done(&S->P, d) || !S->P.uneven[d])
			return;
		pred_plan(&S->P, d, &p);
		if (!*S->have || better(&p, S->best)) {
			*S->best = p;
			*S->have = true;
		}
		return;
	}
	for (uint32_t m = S->a + 1; m >= S->a; m--) {
		/* The rest can multiply by at most (a + 1)^(k - d - 1). */
		uint64_t reach = prod * m;

		for (uint32_t i = d + 1; i < S->k && reach < r->nodes; i++)
			reach *= S->a + 1;
		if (reach < r->nodes)
			continue;
		uint32_t st = pred_stage(&S->P, d, m);
		if (st == UINT32_MAX)
			continue;
		if (*S->have && plan_time(r, steps + st, d + 1) >
				    S->best->time_us + 1e-9 * (fabs(S->best->time_us) + 1))
			continue;
		search(S, d + 1, steps + st, prod * m);
	}
}

int optree_plan_best(const struct optree_ring *r, struct optree_plan *best, struct ofc_error *err)
{
	struct s1cache cache = {0};
	uint32_t n = r->nodes;
	bool have = false;

	if (optree_ring_check(r, err) < 0)
		return -1;
	plan_exact(r, best, &have);

	/* Balanced uneven sequences: k radices of a or a + 1 (a the integer
	 * k-th root of N), in every order: where the larger ones go matters
	 * (stage 1 is the cheaper, N m / 8 against N m / 4, and unequal groups
	 * load some nodes more than others). A depth-first search extends
	 * prefixes stage by stage and drops those already slower than the best
	 * plan (the DP's exact one to start with), for depths within two of
	 * Theorem 2's. */
	struct optree_analytic an;
	optree_analytic(r, &an);
	for (uint32_t k = 2; k <= OPTREE_MAX_DEPTH && (1ull << (k - 1)) < n; k++) {
		uint32_t a = (uint32_t)floor(pow((double)n, 1.0 / k));
		struct search S;

		/* Depths far from Theorem 2's are never close (the exact search
		 * above still covers them); they would dominate the time. */
		if (k + 2 < an.depth || k > an.depth + 2)
			continue;

		while (a > 2 && pow((double)a, k) > n)
			a--;
		while (pow((double)(a + 1), k) <= n)
			a++;
		if (a < 2)
			a = 2;
		pred_init(&S.P, r, &cache, k);
		S.k = k;
		S.a = a;
		S.best = best;
		S.have = &have;
		search(&S, 0, 0, 1);
		pred_free(&S.P);
	}
	if (!have)
		return ofc_error_set(err, OFC_E_RUNTIME, "no plan for %u nodes", n);
	/* The exact search predicted with closed forms; evaluate() is what the
	 * builder does, so use its figures (they agree; tests check it). */
	struct optree_plan check;
	if (evaluate(r, best->radix, best->depth, &check, &cache, err) < 0)
		return -1;
	*best = check;
	return 0;
}

int optree_plan_even(const struct optree_ring *r, struct optree_plan *best, struct ofc_error *err)
{
	struct s1cache cache = {0};
	bool have = false;

	if (optree_ring_check(r, err) < 0)
		return -1;
	plan_exact(r, best, &have);
	if (!have)
		return ofc_error_set(err, OFC_E_RUNTIME, "no exact factorisation of %u nodes",
				     r->nodes);
	/* The reduced schedule's program: N (m_i - 1) transfers per stage (one
	 * group's). A prime N has one stage of radix N, the whole schedule
	 * again; refused here, before evaluating it costs N^2 arcs. */
	uint64_t prog = 0;
	for (uint32_t i = 0; i < best->depth; i++)
		prog += (uint64_t)r->nodes * (best->radix[i] - 1);
	if (prog > (uint64_t)OPTREE_MAX_NODES * (OPTREE_MAX_NODES - 1))
		return ofc_error_set(err, OFC_E_INPUT,
				     "%u nodes: the reduced schedule's program would hold %llu "
				     "transfers (radix %u first), more than an explicit %u-node "
				     "schedule",
				     r->nodes, (unsigned long long)prog, best->radix[0],
				     OPTREE_MAX_NODES);
	struct optree_plan check;
	if (evaluate(r, best->radix, best->depth, &check, &cache, err) < 0)
		return -1;
	*best = check;
	return 0;
}
