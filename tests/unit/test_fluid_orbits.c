/* The cut LP on the orbits of the origin's stabiliser (fluid/orbits.c):
 * on model W of 4 servers (the origin's server and three that may be
 * swapped), under prices the servers' group keeps (the master's duals
 * averaged over it, as dw.c's pricing_costs makes them), the LP over the
 * orbits has the optimum of the LP over every column, and its usage is one
 * of the full LP's: (3.12) at every node, and a unit of flow to every
 * destination inside it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <math.h>

#include "fluid/fluid.h"
#include "fluid/internal.h"

#define SERVERS 4
#define SEEDS	12

/* A problem as fluid/solve.c's problem_init makes it for an allgather. */
static void problem_of(struct problem *p, const struct fluid_net *n, const struct fluid_opts *o)
{
	memset(p, 0, sizeof(*p));
	p->net = n;
	p->opts = o;
	p->coll = FLUID_ALLGATHER;
	p->copy = true;
	p->slack = p->gap = 1e-7;
	p->mem_limit = 1ull << 30;
	p->term = malloc((n->nverts + 1) * sizeof(uint32_t));
	p->nterm = fluid_terminals(n, p->term);
	p->conserve = calloc(n->nverts + 1, 1);
	p->store = calloc(n->nverts + 1, 1);
	for (uint32_t v = 0; v < n->nverts; v++) {
		p->store[v] = (n->kind[v] & FLUID_CAN_STORE) != 0;
		p->conserve[v] = !(n->kind[v] & FLUID_CAN_COPY) && !(n->kind[v] & FLUID_TERMINAL);
	}
}

/* Prices the group keeps: random per arc, averaged over the elements. */
static void group_prices(const struct fluid_group *g, uint32_t ne, unsigned seed, double *chat)
{
	double *y = malloc((ne + 1) * sizeof(double));

	for (uint32_t e = 0; e < ne; e++) {
		seed = seed * 1103515245u + 12345u;
		y[e] = (seed >> 16 & 0x7fff) / 32768.0;
	}
	for (uint32_t e = 0; e < ne; e++) {
		chat[e] = 0;
		for (uint32_t h = 0; h < g->order; h++)
			chat[e] += y[g->arc[(size_t)h * ne + e]];
		chat[e] /= g->order;
	}
	free(y);
}

/* (3.12): what enters each node of a vertex that conserves leaves it. */
static void assert_balanced(const struct problem *p, const struct texp *x, const double *w)
{
	uint32_t nn = tx_nnodes(x), na = tx_narcs(x);
	double *bal = calloc(nn + 1, sizeof(double));

	for (uint32_t a = 0; a < na; a++) {
		bal[tx_tail(x, a)] -= w[a];
		bal[tx_head(x, a)] += w[a];
	}
	for (uint32_t u = 0; u < nn; u++)
		if (p->conserve[u % x->nv] && fabs(bal[u]) > 1e-7)
			fail_msg("node %u (vertex %s, layer %u) is off balance by %g", u,
				 fluid_vertex_name(p->net, u % x->nv), u / x->nv, bal[u]);
	free(bal);
}

static void scenario(enum fluid_scenario s)
{
	struct fluid_net n;
	struct fluid_group g = {0}, an = {0}, plain;
	struct fluid_opts o = {.collective = FLUID_ALLGATHER, .method = FLUID_MIRRORED};
	struct ofc_error err = {0};
	struct problem p;
	struct texp x;
	struct pricer orb, all;

	assert_int_equal(fluid_build_modelw(&n, SERVERS, s, &an, &err), 0);
	if (fluid_group_blocks(&n, SERVERS, (n.nverts - 8) / SERVERS, NULL, &g, &err) < 0)
		fail_msg("%s: %s", fluid_scenario_name(s), err.msg);
	problem_of(&p, &n, &o);
	assert_int_equal(texp_init(&x, &n, p.store, 8), 0);
	plain = g;
	plain.nblocks = 0; /* the same group, no orbits: every column its own */
	/* an origin in the middle server: the servers before and after it move */
	uint32_t origin = p.term[p.nterm / 2 + 1];

	if (pricer_init(&orb, &p, &x, origin, &g, &err) < 0 ||
	    pricer_init(&all, &p, &x, origin, &plain, &err) < 0)
		fail_msg("%s: %s", fluid_scenario_name(s), err.msg);
	assert_null(all.col_lp);
	assert_non_null(orb.col_lp);
	assert_true(orb.nlp < orb.ncols);
	assert_int_equal(orb.ncols, all.ncols);
	/* the origin's 7 neighbours, and one of each other GPU position */
	assert_int_equal(orb.nsep, 7 + 8);
	uint32_t na = tx_narcs(&x);
	double *chat = malloc((x.ne + 1) * sizeof(double));
	double *w = malloc((na + 1) * sizeof(double)), *w2 = malloc((na + 1) * sizeof(double));

	for (unsigned seed = 0; seed < SEEDS; seed++) {
		double v1 = 0, b1 = 0, v2 = 0, b2 = 0;

		group_prices(&g, x.ne, seed, chat);
		if (pricer_tree(&orb, chat, INFINITY, w, &v1, &b1, &err) < 0 ||
		    pricer_tree(&all, chat, INFINITY, w2, &v2, &b2, &err) < 0)
			fail_msg("%s, seed %u: %s", fluid_scenario_name(s), seed, err.msg);
		if (fabs(b1 - b2) > 1e-7 * fmax(1, fabs(b2)) || fabs(v1 - v2) > 1e-6 * fmax(1, v2))
			fail_msg("%s, seed %u: the orbits' optimum %.12g (bound %.12g), every "
				 "column's %.12g (%.12g)",
				 fluid_scenario_name(s), seed, v1, b1, v2, b2);
		assert_balanced(&p, &x, w);
		struct origin_flow of = {
		    .origin = origin, .dest = orb.dest, .ndest = orb.ndest, .w = w};

		if (flows_in_usage(&p, &x, &of) < 1 - 1e-6)
			fail_msg("%s, seed %u: a destination gets less than a unit",
				 fluid_scenario_name(s), seed);
		origin_flow_drop(&of);
	}
	free(chat);
	free(w);
	free(w2);
	pricer_free(&orb);
	pricer_free(&all);
	texp_free(&x);
	free(p.term);
	free(p.conserve);
	free(p.store);
	fluid_group_free(&g);
	fluid_group_free(&an);
	fluid_net_free(&n);
}

static void test_orbits_all_links(void **state)
{
	(void)state;
	scenario(FLUID_ALL_LINKS);
}

static void test_orbits_no_nvlink(void **state)
{
	(void)state;
	scenario(FLUID_NO_NVLINK);
}

static void test_orbits_only_nvlink(void **state)
{
	(void)state;
	scenario(FLUID_ONLY_NVLINK);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_orbits_all_links),
	    cmocka_unit_test(test_orbits_no_nvlink),
	    cmocka_unit_test(test_orbits_only_nvlink),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
