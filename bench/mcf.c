/* All-to-all theta: how it and its solve time grow with N (tori by the
 * one-source symmetric reduction, generalized Kautz by the mirrored master
 * over its automorphisms, with a time limit that leaves theta certified
 * within a gap), the plain master for comparison, and Swing's congestion
 * deficiency. `build/bench/mcf [full]` (full adds genkautz N = 1024, graphs
 * with small groups, the plain column generation at N = 64 and the plain
 * master LP). Every row on lp_solve and on Clp side by side. */
#include "alltoall/alltoall.h"
#include "baselines/baselines.h"
#include "sched/sched.h"

#include <stdio.h>
#include <string.h>

static void row_on(const char *spec, enum mcf_method m, double limit_s, enum lp_solver sv)
{
	struct graph *g;
	struct ofc_error err = {0};
	struct mcf_result r;
	struct mcf_opts o = {.method = m, .time_limit = limit_s, .lp_solver = sv};

	if (topo_build(spec, &g, &err) < 0)
		return;
	double t0 = now_seconds();
	if (mcf_solve(g, &o, &r, &err) < 0) {
		printf("| %s | %s | %u | - | - | - | - | %s | - |\n", spec, lp_solver_name(sv),
		       g->n, err.msg);
	} else {
		double b = (double)r.degree / (double)moore_tree_cost(g->n, r.degree);
		char gap[32] = "optimal";

		if (!r.optimal)
			snprintf(gap, sizeof(gap), "%.2f%% (%s)", 100 * r.gap,
				 mcf_stop_name(r.stop));
		printf(
		    "| %s | %s | %u | %.6g | %.6g | %.4f | %s | %s, %u/%u sources, |G| %u, %u it "
		    "| %.3f |\n",
		    spec, lp_solver_name(sv), g->n, r.theta, b, r.theta / b, gap,
		    mcf_method_name(r.method), r.classes, g->n, r.group_order, r.iterations,
		    now_seconds() - t0);
		mcf_result_free(&r);
	}
	fflush(stdout);
	graph_free(g);
}

static void row(const char *spec, enum mcf_method m, double limit_s)
{
	row_on(spec, m, limit_s, LP_SOLVER_LPSOLVE);
	row_on(spec, m, limit_s, LP_SOLVER_CLP);
}

int main(int argc, char **argv)
{
	bool quick = !(argc > 1 && strcmp(argv[1], "full") == 0);
	static const char *const tori[] = {"torus:4x4",	  "torus:8x8",	 "torus:16x16",
					   "torus:32x32", "torus:8x8x8", "torus:16x16x4",
					   "hypercube:10"};
	static const char *const gk[] = {"genkautz:16,4",  "genkautz:27,6",  "genkautz:32,4",
					 "genkautz:64,4",  "genkautz:100,4", "genkautz:128,4",
					 "genkautz:256,4", "genkautz:512,4", "genkautz:1024,4"};

	printf("| topology | LP | N | theta | d/L(N,d) | ratio | gap | method | seconds |\n"
	       "|---|---|---|---|---|---|---|---|---|\n");
	for (size_t i = 0; i < ARRAY_SIZE(tori); i++)
		row(tori[i], MCF_AUTO, 0);
	for (size_t i = 0; i < ARRAY_SIZE(gk) && (!quick || i + 1 < ARRAY_SIZE(gk)); i++)
		row(gk[i], MCF_AUTO, 60);
	if (!quick) {
		/* Small automorphism groups: the master stays large. */
		row("genkautz:200,3", MCF_AUTO, 60);
		row("genkautz:300,5", MCF_AUTO, 60);
		row("debruijn:2,8", MCF_AUTO, 60);
		row("genkautz:64,4", MCF_COLGEN, 60);
		row("genkautz:64,4", MCF_MASTER, 0);
	}

	printf("\n| torus | Swing(B) xi | RD(B) xi | seconds |\n|---|---|---|---|\n");
	static const char *const sw[] = {
	    "torus:8x8",   "torus:16x16",   "torus:32x32", "torus:64x64", "torus:128x128",
	    "torus:8x8x8", "torus:8x8x8x8", "torus:64x16", "torus:128x8", "torus:256x4"};
	for (size_t i = 0; i < ARRAY_SIZE(sw); i++) {
		struct topo_tree *t;
		struct ofc_error err = {0};
		struct torus_figures a, b;
		double t0 = now_seconds();

		if (topo_build_tree(sw[i], NULL, &t, &err) < 0)
			continue;
		if (torus_allreduce(t, TORUS_SWING, SWING_BANDWIDTH, true, NULL, &a, &err) == 0 &&
		    torus_allreduce(t, TORUS_RECURSIVE_DOUBLING, SWING_BANDWIDTH, true, NULL, &b,
				    &err) == 0)
			printf("| %s | %.4f | %.4f | %.3f |\n", sw[i], a.xi, b.xi,
			       now_seconds() - t0);
		topo_tree_free(t);
	}
	return 0;
}
