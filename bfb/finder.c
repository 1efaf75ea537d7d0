/* The topology finder (Zhao et al. Sec. 5.4, App. G): for N nodes of degree
 * d, the Pareto frontier of (tau_L, tau_B) over base graphs and their
 * expansions, and the pick for a workload.
 *
 * Candidates with exactly N nodes and degree d are enumerated top-down:
 * base families evaluated by BFB (one node suffices for vertex-transitive
 * graphs), line graphs of (N/d, d) candidates, degree expansions of
 * (N/n, d/n), Cartesian powers of (N^(1/n), d/n) and products of
 * BW-optimal BFB factors (Thm 13), each (N', d') solved once and pruned to
 * its frontier (every rule is monotone in both figures, so a dominated
 * candidate never expands into a non-dominated one). Expansions are priced
 * by the paper's formulas (Thm 1/Cor. 1.2, 11, 12, 13); where BFB on the
 * expanded graph is cheap to evaluate and better (degree expansions often
 * are: Table 5's BiRing(2,5)*2), that is used and said.
 *
 * Not here: the Diamond and DBJMod graphs of Tables 4 and 9 (their edge
 * lists are only in figures lost from the paper) and graphs found by
 * exhaustive search. */
#include "bfb/bfb.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define CIRC_EXHAUSTIVE 3000  /* generator sets tried exhaustively up to this many */
#define REFINE_FULL	1024  /* BFB on an expanded graph: any graph up to this size */
#define REFINE_VT	16384 /* ... vertex-transitive ones up to this size */
#define NON_VT_MAX	BFB_MAX_NODES

struct cand {
	char *spec;
	uint32_t steps; /* allgather tau_L */
	struct frac tau;
	double tau_value;
	const char *how;
	bool bfb;      /* the figures are those of a BFB schedule */
	bool bw_opt;   /* tau == (N-1)/N */
	bool simple;   /* no self-loops, no parallel arcs */
	bool no_loops; /* no self-loops (degree expansion needs that) */
	bool exact;    /* formula with equality (else an upper bound) */
};

struct state {
	uint32_t n, d;
	struct cand *c;
	size_t nc, cap;
	bool done;
};

struct search {
	struct state *st;
	size_t nst, cap;
	unsigned threads;
	uint64_t evaluated;
	struct ofc_error *err;
};

static struct state *state_get(struct search *s, uint32_t n, uint32_t d);

static void cand_free(struct cand *c)
{
	free(c->spec);
}

static bool dominates(const struct cand *a, const struct cand *b)
{
	int c = frac_valid(a->tau) && frac_valid(b->tau)
		    ? frac_cmp(a->tau, b->tau)
		    : (a->tau_value > b->tau_value) - (a->tau_value < b->tau_value);

	return a->steps <= b->steps && c <= 0;
}

/* Add unless dominated (ties keep the first); drop what it dominates. */
static void push(struct state *st, struct cand c)
{
	for (size_t i = 0; i < st->nc; i++)
		if (dominates(&st->c[i], &c)) {
			cand_free(&c);
			return;
		}
	size_t k = 0;
	for (size_t i = 0; i < st->nc; i++) {
		if (dominates(&c, &st->c[i]))
			cand_free(&st->c[i]);
		else
			st->c[k++] = st->c[i];
	}
	st->nc = k;
	GROW(st->c, st->cap, st->nc + 1);
	st->c[st->nc++] = c;
}

/* ---- evaluation ----------------------------------------------------------------- */

static void graph_flags(const struct graph *g, bool *simple, bool *no_loops)
{
	struct topo_facts f;

	topo_facts(g, &f, 1);
	*simple = f.self_loops == 0 && f.parallel_arcs == 0;
	*no_loops = f.self_loops == 0;
}

/* BFB figures of a graph spec; false when it cannot be evaluated here. */
static bool evaluate(struct search *s, const char *spec, struct cand *c)
{
	struct graph *g;
	struct bfb_stats st;
	struct ofc_error err = {0};
	struct bfb_opts o = {.threads = s->threads};

	if (topo_build(spec, &g, &err) < 0)
		return false;
	if ((!g->vertex_transitive && g->n > NON_VT_MAX) ||
	    bfb_schedule(g, SCHED_ALLGATHER, &o, NULL, &st, &err) < 0) {
		graph_free(g);
		return false;
	}
	s->evaluated++;
	c->steps = st.steps;
	c->tau = st.tau_b;
	c->tau_value = st.tau_b_value;
	c->bfb = true;
	c->bw_opt = st.bw_optimal;
	c->exact = true;
	graph_flags(g, &c->simple, &c->no_loops);
	graph_free(g);
	return true;
}

static void add_base(struct search *s, struct state *st, const char *spec, const char *how)
{
	struct cand c = {0};

	if (!evaluate(s, spec, &c))
		return;
	c.spec = xstrdup(spec);
	c.how = how;
	push(st, c);
}

/* Eccentricity of node 0 (the diameter of a vertex-transitive graph). */
static uint32_t ecc0(uint32_t n, const uint32_t *gens, uint32_t k, uint16_t *dist, uint32_t *q)
{
	uint32_t head = 0, tail = 0, e = 0;

	for (uint32_t v = 0; v < n; v++)
		dist[v] = UINT16_MAX;
	dist[0] = 0;
	q[tail++] = 0;
	while (head < tail) {
		uint32_t u = q[head++];

		for (uint32_t i = 0; i < 2 * k; i++) {
			uint32_t g = gens[i / 2] % n;
			uint32_t v = i & 1 ? (u + n - g) % n : (u + g) % n;

			if (dist[v] == UINT16_MAX) {
				dist[v] = dist[u] + 1;
				e = dist[v];
				q[tail++] = v;
			}
		}
	}
	return tail == n ? e : UINT32_MAX;
}

static uint64_t binom(uint64_t n, uint64_t k)
{
	uint64_t r = 1;

	for (uint64_t i = 1; i <= k; i++) {
		r = r * (n - k + i) / i;
		if (r > 1000000000)
			return r;
	}
	return r;
}

/* Circulants C(n, {g1..gk}), degree 2k: the generator sets of least
 * diameter (all sets for small n; runs {m, m+1, ..} otherwise, which for
 * k = 2 contain the Boesch-Wang optimum, Thm 22), then BFB on a few. */
static void add_circulants(struct search *s, struct state *st, uint32_t n, uint32_t k)
{
	uint32_t half = n / 2, gens[16], best = UINT32_MAX;
	uint16_t *dist = xmalloc((size_t)n * sizeof(uint16_t));
	uint32_t *q = xmalloc((size_t)n * sizeof(uint32_t));
	uint32_t(*keep)[16] = NULL;
	size_t nkeep = 0, capk = 0;
	bool exhaustive = binom(half, k) <= CIRC_EXHAUSTIVE;

	if (k > 8 || half < k) {
		free(dist);
		free(q);
		return;
	}
	/* Thm 22 (Boesch-Wang): for n > 6, C(n, {m, m+1}) with
	 * m = ceil((-1 + sqrt(2n - 1)) / 2) has the least diameter of any
	 * 2-generator circulant; try it first so that ties keep it. */
	if (k == 2 && n > 6) {
		uint32_t m = (uint32_t)ceil((-1.0 + sqrt(2.0 * n - 1.0)) / 2.0 - 1e-12);

		gens[0] = m;
		gens[1] = m + 1;
		if (m + 1 <= half) {
			best = ecc0(n, gens, k, dist, q);
			if (best != UINT32_MAX) {
				capk = 4;
				keep = xreallocarray(keep, capk, sizeof(*keep));
				memcpy(keep[nkeep++], gens, sizeof(gens));
			}
		}
	}
	for (uint32_t i = 0; i < k; i++)
		gens[i] = i + 1;
	for (;;) {
		uint32_t e = ecc0(n, gens, k, dist, q);

		if (e < best) {
			best = e;
			nkeep = 0;
		}
		if (e == best && nkeep < 4 && !(nkeep && !memcmp(keep[0], gens, sizeof(gens)))) {
			if (nkeep == capk) {
				capk = capk ? capk * 2 : 4;
				keep = xreallocarray(keep, capk, sizeof(*keep));
			}
			memcpy(keep[nkeep++], gens, sizeof(gens));
		}
		/* next set */
		if (exhaustive) {
			int i = (int)k - 1;

			while (i >= 0 && gens[i] == half - (k - 1 - (uint32_t)i))
				i--;
			if (i < 0)
				break;
			gens[i]++;
			for (uint32_t j = (uint32_t)i + 1; j < k; j++)
				gens[j] = gens[j - 1] + 1;
		} else {
			/* Runs {m, .., m+k-1}: every m up to 64, then 192 more spread
			 * over the rest (one BFS each; the range is O(n)). */
			uint32_t m = gens[0], step = half > 256 ? (half - 64) / 192 + 1 : 1;

			m = m < 64 ? m + 1 : m + step;
			if (m + k - 1 > half)
				break;
			for (uint32_t j = 0; j < k; j++)
				gens[j] = m + j;
		}
	}
	for (size_t i = 0; i < nkeep; i++) {
		struct strbuf sb = STRBUF_INIT;

		sb_printf(&sb, "circulant:%u:", n);
		for (uint32_t j = 0; j < k; j++)
			sb_printf(&sb, "%s%u", j ? "," : "", keep[i][j]);
		add_base(s, st, sb.buf, "circulant, BFB");
		sb_free(&sb);
	}
	free(keep);
	free(dist);
	free(q);
}

/* Tori a1 x .. x ak (a_i >= 3, non-decreasing), degree 2k. */
static void add_tori(struct search *s, struct state *st, uint32_t n, uint32_t k, uint32_t lo,
		     uint32_t *dims, uint32_t depth)
{
	if (depth == k - 1) {
		if (n >= lo && n >= 3) {
			struct strbuf sb = STRBUF_INIT;

			dims[depth] = n;
			sb_puts(&sb, "torus:");
			for (uint32_t j = 0; j < k; j++)
				sb_printf(&sb, "%s%u", j ? "x" : "", dims[j]);
			add_base(s, st, sb.buf, "torus, BFB");
			sb_free(&sb);
		}
		return;
	}
	for (uint32_t a = lo; (uint64_t)a * a <= n; a++)
		if (n % a == 0) {
			dims[depth] = a;
			add_tori(s, st, n / a, k, a, dims, depth + 1);
		}
}

static void bases(struct search *s, struct state *st)
{
	uint32_t n = st->n, d = st->d;
	char spec[96];

	if (d == n - 1) {
		snprintf(spec, sizeof(spec), "complete:%u", n);
		add_base(s, st, spec, "complete, BFB");
	}
	if (n == 2 * d) {
		snprintf(spec, sizeof(spec), "bipartite:%u", d);
		add_base(s, st, spec, "complete bipartite, BFB");
	}
	/* Hamming H(m, q): degree m(q - 1), q^m nodes (hypercubes for q = 2). */
	for (uint32_t m = 2; m <= d; m++) {
		if (d % m)
			continue;
		uint32_t q = d / m + 1;
		uint64_t p = 1;
		for (uint32_t i = 0; i < m && p <= n; i++)
			p *= q;
		if (p != n)
			continue;
		if (q == 2)
			snprintf(spec, sizeof(spec), "hypercube:%u", m);
		else
			snprintf(spec, sizeof(spec), "hamming:%u,%u", m, q);
		add_base(s, st, spec, "Hamming, BFB");
	}
	if (d == 1 && n >= 2) {
		snprintf(spec, sizeof(spec), "ring:%u", n);
		add_base(s, st, spec, "ring, BFB");
	}
	if (d == 2 && n >= 3) {
		snprintf(spec, sizeof(spec), "biring:%u", n);
		add_base(s, st, spec, "bidirectional ring, BFB");
	}
	if (d % 2 == 0 && d >= 4) {
		uint32_t dims[16];

		add_circulants(s, st, n, d / 2);
		if (d / 2 <= 16)
			add_tori(s, st, n, d / 2, 3, dims, 0);
	}
	if (n >= d + 1 && n <= NON_VT_MAX) {
		snprintf(spec, sizeof(spec), "genkautz:%u,%u", n, d);
		add_base(s, st, spec, "generalized Kautz, BFB");
	}
	/* de Bruijn: d^m nodes (self-loops). */
	if (d >= 2 && n <= NON_VT_MAX) {
		uint64_t p = d;
		uint32_t m = 1;
		while (p < n) {
			p *= d;
			m++;
		}
		if (p == n && m >= 2) {
			snprintf(spec, sizeof(spec), "debruijn:%u,%u", d, m);
			add_base(s, st, spec, "de Bruijn, BFB");
		}
	}
}

/* "line^k(X)" -> k and X; anything else -> 0. */
static uint32_t line_power(const char *spec, const char **inner)
{
	uint32_t k = 0;

	if (strncmp(spec, "line(", 5) == 0) {
		*inner = spec + 5;
		return 1;
	}
	if (strncmp(spec, "line^", 5) == 0) {
		const char *p = spec + 5;

		while (*p >= '0' && *p <= '9')
			k = k * 10 + (uint32_t)(*p++ - '0');
		if (*p == '(') {
			*inner = p + 1;
			return k;
		}
	}
	return 0;
}

/* Where cheap, BFB on the expanded graph itself; keep it when better. */
static void refine(struct search *s, struct state *st, struct cand *c)
{
	struct cand b = {0};
	uint32_t n = st->n;

	if (n > REFINE_VT)
		return;
	struct graph *g;
	struct ofc_error err = {0};
	if (topo_build(c->spec, &g, &err) < 0)
		return;
	bool ok = g->vertex_transitive || n <= REFINE_FULL;
	graph_free(g);
	if (!ok || !evaluate(s, c->spec, &b))
		return;
	bool better = b.steps < c->steps || (b.steps == c->steps && frac_valid(b.tau) &&
					     frac_valid(c->tau) && frac_cmp(b.tau, c->tau) < 0);
	if (better) {
		c->steps = b.steps;
		c->tau = b.tau;
		c->tau_value = b.tau_value;
		c->bfb = true;
		c->bw_opt = b.bw_opt;
		c->exact = true;
		c->how = "BFB on the expanded graph (beats the construction)";
	}
	c->simple = b.simple;
	c->no_loops = b.no_loops;
}

static void expansions(struct search *s, struct state *st)
{
	uint32_t n = st->n, d = st->d;
	struct frac bw = frac_make((int64_t)n - 1, n);

	/* Line graph: (n/d, d) -> (n, d); Thm 1 / Thm 10. */
	if (d >= 2 && n % d == 0 && n / d > d) {
		struct state *b = state_get(s, n / d, d);

		for (size_t i = 0; b && i < b->nc; i++) {
			const struct cand *x = &b->c[i];
			const char *inner;
			uint32_t k = line_power(x->spec, &inner);
			struct cand c = *x;

			if (k)
				c.spec =
				    xasprintf("line^%u(%.*s", k + 1, (int)(strlen(inner)), inner);
			else
				c.spec = xasprintf("line(%s)", x->spec);
			c.steps = x->steps + 1;
			c.tau = frac_add(x->tau, frac_make(1, b->n));
			c.tau_value = x->tau_value + 1.0 / b->n;
			c.exact = x->exact && x->bfb;
			c.bfb = x->bfb;
			c.bw_opt = false;
			c.simple = false; /* uv -> vu arcs make 2-cycles; parallel arcs stay */
			c.how = "line graph (Cor. 1.2)";
			push(st, c);
		}
	}
	/* Degree expansion: (n/m, d/m) -> (n, d); Thm 11. */
	for (uint32_t m = 2; m <= d; m++) {
		if (d % m || n % m || n / m < 2)
			continue;
		struct state *b = state_get(s, n / m, d / m);

		for (size_t i = 0; b && i < b->nc; i++) {
			const struct cand *x = &b->c[i];
			struct cand c = *x;

			if (!x->no_loops)
				continue;
			c.spec = xasprintf("degree(%s,%u)", x->spec, m);
			c.steps = x->steps + 1;
			c.tau = frac_add(x->tau, frac_make(m - 1, (int64_t)m * b->n));
			c.tau_value = x->tau_value + (double)(m - 1) / ((double)m * b->n);
			c.bw_opt = x->bw_opt;
			c.bfb = false;
			c.how = "degree expansion (Thm 11)";
			refine(s, st, &c);
			push(st, c);
		}
	}
	/* Cartesian power: (r, d/m) -> (r^m, d); Thm 12. */
	for (uint32_t m = 2; m <= d && m <= 16; m++) {
		if (d % m)
			continue;
		uint32_t r = (uint32_t)llround(pow(n, 1.0 / m));
		for (uint32_t rr = r > 1 ? r - 1 : r; rr <= r + 1; rr++) {
			uint64_t p = 1;
			for (uint32_t i = 0; i < m && p <= n; i++)
				p *= rr;
			if (p != n || rr < 2)
				continue;
			struct state *b = state_get(s, rr, d / m);

			for (size_t i = 0; b && i < b->nc; i++) {
				const struct cand *x = &b->c[i];
				struct cand c = *x;

				c.spec = xasprintf("power(%s,%u)", x->spec, m);
				c.steps = m * x->steps;
				c.tau = frac_mul(x->tau, frac_mul(frac_make(rr, (int64_t)rr - 1),
								  frac_make((int64_t)n - 1, n)));
				c.tau_value = x->tau_value * rr / (rr - 1) * (n - 1) / n;
				c.bw_opt = x->bw_opt;
				c.bfb = false;
				c.how = "Cartesian power (Thm 12)";
				refine(s, st, &c);
				push(st, c);
			}
		}
	}
	/* Products of BW-optimal BFB factors: Thm 13. */
	for (uint32_t n1 = 2; (uint64_t)n1 * n1 <= n; n1++) {
		if (n % n1)
			continue;
		uint32_t n2 = n / n1;
		for (uint32_t d1 = 1; d1 < d; d1++) {
			uint32_t d2 = d - d1;
			if (n1 == n2 && d1 > d2)
				continue;
			if (d1 >= n1 || d2 >= n2)
				continue;
			/* The second lookup may move the first: look it up again. */
			state_get(s, n1, d1);
			struct state *b = state_get(s, n2, d2), *a = state_get(s, n1, d1);
			const struct cand *ba = NULL, *bb = NULL;

			for (size_t i = 0; a && i < a->nc; i++)
				if (a->c[i].bfb && a->c[i].bw_opt && a->c[i].simple &&
				    (!ba || a->c[i].steps < ba->steps))
					ba = &a->c[i];
			for (size_t i = 0; b && i < b->nc; i++)
				if (b->c[i].bfb && b->c[i].bw_opt && b->c[i].simple &&
				    (!bb || b->c[i].steps < bb->steps))
					bb = &b->c[i];
			if (!ba || !bb)
				continue;
			struct cand c = {0};
			c.spec = xasprintf("product(%s,%s)", ba->spec, bb->spec);
			c.steps = ba->steps + bb->steps;
			c.tau = bw;
			c.tau_value = frac_value(bw);
			c.bfb = c.bw_opt = c.simple = c.no_loops = c.exact = true;
			c.how = "product of BW-optimal BFB factors (Thm 13)";
			push(st, c);
		}
	}
}

static int cmp_cand(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;

	if (x->steps != y->steps)
		return x->steps < y->steps ? -1 : 1;
	return (x->tau_value > y->tau_value) - (x->tau_value < y->tau_value);
}

static struct state *state_get(struct search *s, uint32_t n, uint32_t d)
{
	for (size_t i = 0; i < s->nst; i++)
		if (s->st[i].n == n && s->st[i].d == d)
			return s->st[i].done ? &s->st[i] : NULL;
	if (n < 2 || d < 1 || n > SCHED_MAX_NODES)
		return NULL;
	GROW(s->st, s->cap, s->nst + 1);
	size_t idx = s->nst++;
	s->st[idx] = (struct state){.n = n, .d = d};
	/* Entries may move while recursing (GROW): work on a copy. */
	struct state st = s->st[idx];
	bases(s, &st);
	expansions(s, &st);
	qsort(st.c, st.nc, sizeof(*st.c), cmp_cand);
	st.done = true;
	s->st[idx] = st;
	return &s->st[idx];
}

int finder_run(uint32_t n, uint32_t d, unsigned threads, struct finder_result *r,
	       struct ofc_error *err)
{
	struct search s = {.threads = threads, .err = err};
	double t0 = now_seconds();

	memset(r, 0, sizeof(*r));
	if (n < 2 || n > SCHED_MAX_NODES)
		return ofc_error_set(err, OFC_E_INPUT, "--nodes must be 2..%u", SCHED_MAX_NODES);
	if (d < 1 || d > BFB_MAX_DEGREE)
		return ofc_error_set(err, OFC_E_INPUT, "--degree must be 1..%u", BFB_MAX_DEGREE);
	struct state *st = state_get(&s, n, d);
	r->nodes = n;
	r->degree = d;
	if (st) {
		r->n = st->nc;
		r->front = xcalloc(st->nc + 1, sizeof(*r->front));
		for (size_t i = 0; i < st->nc; i++) {
			struct finder_entry *e = &r->front[i];
			const struct cand *c = &st->c[i];

			snprintf(e->spec, sizeof(e->spec), "%s", c->spec);
			snprintf(e->how, sizeof(e->how), "%s", c->how);
			e->steps = c->steps;
			e->tau_b = c->tau;
			e->tau_b_value = c->tau_value;
			e->bw_optimal = c->bw_opt;
			e->moore_optimal = c->steps == moore_diameter(n, d);
			e->exact = c->exact;
		}
	}
	r->evaluated = s.evaluated;
	r->states = s.nst;
	for (size_t i = 0; i < s.nst; i++) {
		for (size_t k = 0; k < s.st[i].nc; k++)
			cand_free(&s.st[i].c[k]);
		free(s.st[i].c);
	}
	free(s.st);
	r->seconds = now_seconds() - t0;
	if (r->n == 0)
		return ofc_error_set(err, OFC_E_INPUT,
				     "no topology found with %u nodes of degree %u (degree must be "
				     "below the node count)",
				     n, d);
	return 0;
}

void finder_free(struct finder_result *r)
{
	free(r->front);
	memset(r, 0, sizeof(*r));
}

double finder_time_us(const struct finder_entry *e, enum sched_collective c,
		      const struct sched_cost *cost)
{
	unsigned k = cost_phases(c);

	return cost_time_us(cost, (double)k * e->steps, k * e->tau_b_value);
}
