/* The re-plan's repair (alltoall/mcf_repair.c) by region: the kept
 * healthy MCF solution less the failed arcs, the flow of a region around
 * them rerouted (radius -1: the lost arcs' flow alone, the one mcf_solve
 * tries; r: every arc at a node within r hops of their ends), against the
 * healthy lengths' bound. `build/bench/mcf_repair SPEC FAIL [RADIUS...]`,
 * e.g. `build/bench/mcf_repair genkautz:1024,4 0>1023 -1 0`, on the LP
 * solver $LP names (lpsolve, clp; default: the MCF's). */
#include "alltoall/alltoall.h"
#include "alltoall/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	struct graph *h, *g;
	struct ofc_error err = {0};
	struct mcf_result rh;
	enum lp_solver sv = LP_SOLVER_DEFAULT;

	if (argc < 3) {
		fprintf(stderr, "usage: %s SPEC FAIL [RADIUS...]\n", argv[0]);
		return 2;
	}
	if (getenv("LP") && lp_solver_parse(getenv("LP"), &sv) < 0) {
		fprintf(stderr, "LP=%s: lpsolve or clp\n", getenv("LP"));
		return 2;
	}
	if (topo_build(argv[1], &h, &err) < 0 || topo_fail_links(h, argv[2], &g, &err) < 0) {
		fprintf(stderr, "%s\n", err.msg);
		return 1;
	}
	struct mcf_opts oh = {.keep_warm = true, .lp_solver = sv};
	double t0 = now_seconds();
	if (mcf_solve(h, &oh, &rh, &err) < 0) {
		fprintf(stderr, "healthy: %s\n", err.msg);
		return 1;
	}
	printf("%s less %s: healthy objective %.9g (%s, %.3f s)\n", argv[1], argv[2], rh.objective,
	       rh.optimal ? "optimal" : "not optimal", now_seconds() - t0);
	struct mcf_opts o = {.warm = rh.warm, .lp_solver = sv};
	for (int i = 3; i < argc || i == 3; i++) {
		int radius = i < argc ? atoi(argv[i]) : -1;
		struct mcf_repair rp;

		t0 = now_seconds();
		if (mcf_repair_solve(g, &o, radius, &rp, &err) < 0) {
			fprintf(stderr, "repair: %s\n", err.msg);
			return 1;
		}
		printf("radius %d: %u commodities, objective %.9g, lower %.9g, gap %.4f%%, %.3f "
		       "s%s%s\n",
		       radius, rp.nk, rp.objective, rp.lower, 100 * (rp.objective / rp.lower - 1),
		       now_seconds() - t0, rp.why ? ": " : "", rp.why ? rp.why : "");
		/* The lost arcs' healthy flow: the radius -1 commodities' supply. */
		for (uint32_t k = 0; radius < 0 && rp.b && k < rp.nk; k++)
			for (uint32_t u = 0; u < g->n; u++)
				if (rp.b[(size_t)k * g->n + u] > 0)
					printf("  lost arc %u>%u carried %.9g\n", u, rp.ends[k],
					       rp.b[(size_t)k * g->n + u]);
		mcf_repair_free(&rp);
	}
	mcf_result_free(&rh);
	graph_free(g);
	graph_free(h);
	return 0;
}
