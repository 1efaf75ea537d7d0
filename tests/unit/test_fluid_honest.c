/* pricer_honest's trees (fluid/honest.c), which keep the shortest paths
 * from one path of a tree to the next, against a plain reference that
 * computes every pass of the DAG in full (the heuristic as first written):
 * on many random small time-expanded networks (copy, store, switch and
 * store-only vertices, parallel arcs, prices with exact ties and ties
 * within the tolerance, with and without per-arc discounts) the copies per
 * G^T arc and the cost are the same, bit for bit, and so is "no tree".
 * And texp_backward_any's one pass is the union of texp_backward's cones
 * of destinations that can store. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <math.h>

#include "fluid/fluid.h"
#include "fluid/internal.h"

/* ---- the reference: a full pass of the DAG per path -------------------- */

static uint32_t ref_nearest(const struct pricer *pr, const uint32_t *since, const uint32_t *hops,
			    const uint32_t *arr)
{
	uint32_t nv = pr->x->nv, T = pr->x->T, best = UINT32_MAX;
	double bd = INFINITY;

	for (uint32_t j = 0; j < pr->ndest; j++) {
		uint32_t d = pr->dest[j], y = T * nv + d;

		if (since[d] != UINT32_MAX || isinf(pr->dist[y]))
			continue;
		if (pr->dist[y] < bd - 1e-15 ||
		    (pr->dist[y] <= bd + 1e-15 && best != UINT32_MAX &&
		     (hops[y] < hops[T * nv + best] ||
		      (hops[y] == hops[T * nv + best] && arr[y] < arr[T * nv + best])))) {
			bd = pr->dist[y];
			best = d;
		}
	}
	return best;
}

static void ref_trace(struct pricer *pr, uint32_t y, const double *chat, uint32_t *since,
		      uint8_t *busy, double *w, double *value)
{
	const struct problem *p = pr->p;
	const struct texp *x = pr->x;
	uint32_t nv = x->nv;

	while (pr->pred[y] != UINT32_MAX) {
		uint32_t a = pr->pred[y], tl = tx_tail(x, a), v = y % nv, t = y / nv;

		if ((p->net->kind[v] & FLUID_CAN_STORE) && !(p->net->kind[v] & FLUID_CAN_COPY) &&
		    p->conserve[v])
			busy[y] = 1;
		if (!tx_is_hold(x, a)) {
			w[a] += 1;
			*value += chat[tx_phys(x, a)];
			if (since[v] == UINT32_MAX || t < since[v])
				if ((p->net->kind[v] & FLUID_CAN_COPY) || !p->conserve[v])
					since[v] = t;
		} else if (p->conserve[v]) {
			w[a] += 1;
		}
		y = tl;
	}
}

static void ref_relax(struct pricer *pr, uint32_t *hops, uint32_t *arr, uint32_t y, double d,
		      uint32_t hu, uint32_t ar, uint32_t a)
{
	if (d < pr->dist[y] - 1e-15 ||
	    (d <= pr->dist[y] + 1e-15 && (hu < hops[y] || (hu == hops[y] && ar < arr[y])))) {
		pr->dist[y] = d;
		pr->pred[y] = a;
		hops[y] = hu;
		arr[y] = ar;
	}
}

static void ref_pass(struct pricer *pr, const double *chat, const double *disc,
		     const uint32_t *since, const uint8_t *can_src, const uint8_t *busy,
		     uint32_t *hops, uint32_t *arr)
{
	const struct texp *x = pr->x;
	uint32_t nv = x->nv, T = x->T, ne = x->ne;

	for (uint32_t i = 0; i < tx_nnodes(x); i++) {
		pr->dist[i] = INFINITY;
		hops[i] = arr[i] = pr->pred[i] = UINT32_MAX;
	}
	for (uint32_t t = 0; t <= T; t++)
		for (uint32_t v = 0; v < nv; v++) {
			uint32_t u = t * nv + v, sv = since[v];

			if (sv != UINT32_MAX && can_src[v] &&
			    (sv == t || (sv < t && x->hold_of[v] != UINT32_MAX))) {
				pr->dist[u] = 0;
				hops[u] = 0;
				arr[u] = sv;
				pr->pred[u] = UINT32_MAX;
			}
			if (t == T || isinf(pr->dist[u]))
				continue;
			for (uint32_t k = x->out_off[v]; k < x->out_off[v + 1]; k++) {
				uint32_t e = x->out_arc[k], h = x->net->head[e],
					 y = (t + 1) * nv + h;

				if (since[h] != UINT32_MAX || busy[y])
					continue;
				ref_relax(pr, hops, arr, y,
					  pr->dist[u] +
					      (disc ? chat[e] * disc[t * ne + e] : chat[e]),
					  hops[u] + 1, t + 1, t * ne + e);
			}
			uint32_t y = (t + 1) * nv + v;

			if (x->hold_of[v] != UINT32_MAX && !busy[y])
				ref_relax(pr, hops, arr, y, pr->dist[u] + 0.0, hops[u], arr[u],
					  tx_hold(x, v, t));
		}
}

static void ref_honest(struct pricer *pr, const double *chat, const double *disc, double *w,
		       double *value)
{
	const struct problem *p = pr->p;
	const struct texp *x = pr->x;
	uint32_t nn = tx_nnodes(x), nv = x->nv, T = x->T;
	uint32_t *since = malloc(nv * sizeof(uint32_t)), *hops = malloc(nn * sizeof(uint32_t));
	uint32_t *arr = malloc(nn * sizeof(uint32_t));
	uint8_t *busy = calloc(nn, 1), *can_src = malloc(nv);

	for (uint32_t v = 0; v < nv; v++) {
		can_src[v] =
		    (p->net->kind[v] & FLUID_CAN_COPY) || v == pr->origin || !p->conserve[v];
		since[v] = UINT32_MAX;
	}
	memset(w, 0, (size_t)tx_narcs(x) * sizeof(double));
	*value = 0;
	since[pr->origin] = 0;
	for (;;) {
		uint32_t left = 0;

		for (uint32_t j = 0; j < pr->ndest; j++)
			left += since[pr->dest[j]] == UINT32_MAX;
		if (!left)
			break;
		ref_pass(pr, chat, disc, since, can_src, busy, hops, arr);
		uint32_t best = ref_nearest(pr, since, hops, arr);

		if (best == UINT32_MAX) {
			*value = INFINITY;
			break;
		}
		ref_trace(pr, T * nv + best, chat, since, busy, w, value);
	}
	free(since);
	free(hops);
	free(arr);
	free(busy);
	free(can_src);
}

/* ---- random networks ---------------------------------------------------- */

static uint32_t rnd(uint64_t *s, uint32_t n)
{
	*s = *s * 6364136223846793005ull + 1442695040888963407ull;
	return (uint32_t)(*s >> 33) % n;
}

/* Prices from a few values, so that paths tie exactly and within the
 * tolerance (1e-15) as well as differ, and chains of ties within it that
 * reach past it (where the order the arcs are relaxed in decides). */
static double price(uint64_t *s)
{
	static const double v[] = {0, 0.5, 1, 1, 1 + 1e-16, 2, 3, 1e-17, 6e-16, 6e-16, 1 + 6e-16};

	return v[rnd(s, sizeof(v) / sizeof(v[0]))];
}

struct tcase {
	struct fluid_net n;
	struct problem p;
	struct texp x;
	struct pricer pr;
	uint8_t *conserve, *store;
	double *chat, *disc, *w1, *w2;
};

static void tcase_make(struct tcase *c, uint64_t seed)
{
	static const unsigned kinds[] = {FLUID_GPU,    FLUID_GPU,	FLUID_SWITCH,
					 FLUID_SWITCH, FLUID_CAN_STORE, FLUID_CAN_COPY,
					 FLUID_MEMORY};
	struct ofc_error err = {0};
	uint64_t s = seed * 2654435761ull + 1;
	uint32_t nv = 3 + rnd(&s, 10), na = 2 * nv + rnd(&s, 3 * nv), T = 1 + rnd(&s, 5);
	char name[16];

	memset(c, 0, sizeof(*c));
	fluid_net_init(&c->n);
	for (uint32_t v = 0; v < nv; v++) {
		snprintf(name, sizeof(name), "v%u", v);
		/* vertex 0 a GPU: the origin */
		assert_true(
		    fluid_add_vertex(&c->n, name, v ? kinds[rnd(&s, 7)] : FLUID_GPU, &err) >= 0);
	}
	for (uint32_t i = 0; i < na; i++) {
		uint32_t a = rnd(&s, nv), b = rnd(&s, nv);

		if (a != b)
			assert_true(fluid_add_arc(&c->n, a, b, 1, 0, &err) >= 0);
	}
	c->conserve = calloc(nv, 1);
	c->store = calloc(nv, 1);
	for (uint32_t v = 0; v < nv; v++) {
		c->conserve[v] = !(c->n.kind[v] & FLUID_CAN_COPY) && rnd(&s, 4) != 0;
		c->store[v] = (c->n.kind[v] & FLUID_CAN_STORE) != 0;
	}
	c->p.net = &c->n;
	c->p.conserve = c->conserve;
	c->p.store = c->store;
	c->p.copy = true;
	assert_int_equal(texp_init(&c->x, &c->n, c->store, T), 0);
	c->pr.p = &c->p;
	c->pr.x = &c->x;
	c->pr.origin = 0;
	c->pr.dest = malloc(nv * sizeof(uint32_t));
	for (uint32_t v = 1; v < nv; v++)
		if ((c->n.kind[v] & FLUID_CAN_COPY) && rnd(&s, 3) != 0)
			c->pr.dest[c->pr.ndest++] = v;
	c->pr.dist = malloc(((size_t)tx_nnodes(&c->x) + 1) * sizeof(double));
	c->pr.pred = malloc(((size_t)tx_nnodes(&c->x) + 1) * sizeof(uint32_t));
	uint32_t ne = c->n.narcs, narcs = tx_narcs(&c->x);

	c->chat = malloc((ne + 1) * sizeof(double));
	for (uint32_t e = 0; e < ne; e++)
		c->chat[e] = price(&s);
	if (rnd(&s, 2)) {
		c->disc = malloc(((size_t)narcs + 1) * sizeof(double));
		for (uint32_t a = 0; a < narcs; a++)
			c->disc[a] = 0.5 + price(&s);
	}
	c->w1 = malloc(((size_t)narcs + 1) * sizeof(double));
	c->w2 = malloc(((size_t)narcs + 1) * sizeof(double));
}

static void tcase_free(struct tcase *c)
{
	texp_free(&c->x);
	fluid_net_free(&c->n);
	free(c->conserve);
	free(c->store);
	free(c->pr.dest);
	free(c->pr.dist);
	free(c->pr.pred);
	free(c->chat);
	free(c->disc);
	free(c->w1);
	free(c->w2);
}

static void test_honest_same_trees(void **state)
{
	(void)state;
	unsigned trees = 0, none = 0, branched = 0;

	for (uint64_t seed = 0; seed < 20000; seed++) {
		struct tcase c;
		double v1, v2;

		tcase_make(&c, seed);
		ref_honest(&c.pr, c.chat, c.disc, c.w1, &v1);
		pricer_honest(&c.pr, c.chat, c.disc, c.w2, &v2);
		if (memcmp(&v1, &v2, sizeof(v1)) != 0 ||
		    memcmp(c.w1, c.w2, tx_narcs(&c.x) * sizeof(double)) != 0)
			fail_msg("seed %llu: the tree differs from the reference's (cost %.17g "
				 "against %.17g)",
				 (unsigned long long)seed, v2, v1);
		if (isinf(v1)) {
			none++;
		} else if (c.pr.ndest > 0) {
			trees++;
			for (uint32_t a = 0; a < tx_narcs(&c.x); a++)
				branched += c.w1[a] > 1;
		}
		tcase_free(&c);
	}
	/* the cases cover trees, trees through a vertex used twice, and none */
	assert_true(trees > 5000);
	assert_true(none > 500);
	assert_true(branched > 0);
}

static void test_backward_any_union(void **state)
{
	(void)state;
	unsigned differs = 0;

	for (uint64_t seed = 0; seed < 2000; seed++) {
		struct tcase c;

		tcase_make(&c, seed);
		uint32_t words = (tx_nnodes(&c.x) + 63) / 64, n = 0;
		uint64_t *one = malloc(words * 8), *all = calloc(words, 8),
			 *got = malloc(words * 8);

		for (uint32_t j = 0; j < c.pr.ndest; j++)
			if (c.x.hold_of[c.pr.dest[j]] != UINT32_MAX)
				c.pr.dest[n++] = c.pr.dest[j];
		for (uint32_t j = 0; j < n; j++) {
			texp_backward(&c.x, c.pr.dest[j], 0, one);
			for (uint32_t k = 0; k < words; k++)
				all[k] |= one[k];
		}
		texp_backward_any(&c.x, c.pr.dest, n, 0, got);
		if (memcmp(all, got, words * 8) != 0)
			fail_msg("seed %llu: the one pass is not the cones' union",
				 (unsigned long long)seed);
		/* the union is more than any one cone: the check is not empty */
		differs += n > 1 && memcmp(one, got, words * 8) != 0;
		free(one);
		free(all);
		free(got);
		tcase_free(&c);
	}
	assert_true(differs > 100);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_honest_same_trees),
	    cmocka_unit_test(test_backward_any_union),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
