/* Re-planning the all-to-all MCF after failed links: the healthy
 * graph solved once (keep_warm), then the degraded one warm-started from it
 * with a time limit, routes included; optionally a cold solve of the
 * degraded graph for reference (small graphs: it proves the optimum).
 * `build/bench/mcf_replan SPEC FAIL [LIMIT_S [cold [COLD_LIMIT_S]]]`, e.g.
 * `build/bench/mcf_replan genkautz:1024,4 0>1023 10`: on lp_solve, then on
 * Clp, or on the one $LP names (lpsolve, clp). */
#include "alltoall/alltoall.h"
#include "sched/sched.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void report(const char *what, const struct mcf_result *r, double wall)
{
	printf("%s: theta %.9g objective %.9g lower %.9g gap %.4f%% %s (%s), %u classes, "
	       "%u iterations, %zu columns, warm %d (bound theta %.9g), solve %.3f s, "
	       "mcf %.3f s, wall %.3f s, %zu routes%s",
	       what, r->theta, r->objective, r->lower, 100 * r->gap,
	       r->optimal ? "optimal" : "not optimal", mcf_stop_name(r->stop), r->classes,
	       r->iterations, r->columns, r->warm_started,
	       r->warm_bound > 0 ? 1 / r->warm_bound : 0, r->solve_seconds, r->seconds, wall,
	       r->routes.nroutes, r->repaired ? ", repaired" : "");
	if (r->repair_objective > 0)
		printf(" (repair: objective %.9g in %.3f s)", r->repair_objective,
		       r->repair_seconds);
	printf("\n");
	fflush(stdout);
}

static int run(int argc, char **argv, enum lp_solver sv)
{
	struct graph *h, *g;
	struct ofc_error err = {0};
	struct mcf_result rh, rw, rc;
	double limit = argc > 3 ? atof(argv[3]) : 10, t0;

	if (topo_build(argv[1], &h, &err) < 0 || topo_fail_links(h, argv[2], &g, &err) < 0) {
		fprintf(stderr, "%s\n", err.msg);
		return 1;
	}
	printf("== %s\n", lp_solver_name(sv));
	struct mcf_opts oh = {.keep_warm = true, .lp_solver = sv};
	t0 = now_seconds();
	if (mcf_solve(h, &oh, &rh, &err) < 0) {
		fprintf(stderr, "healthy: %s\n", err.msg);
		return 1;
	}
	report("healthy", &rh, now_seconds() - t0);
	struct mcf_opts ow = {
	    .routes = true, .warm = rh.warm, .time_limit = limit, .lp_solver = sv};
	t0 = now_seconds();
	if (mcf_solve(g, &ow, &rw, &err) < 0) {
		fprintf(stderr, "warm: %s\n", err.msg);
		return 1;
	}
	report("warm", &rw, now_seconds() - t0);
	if (argc > 4 && strcmp(argv[4], "cold") == 0) {
		struct mcf_opts oc = {.time_limit = argc > 5 ? atof(argv[5]) : 0, .lp_solver = sv};

		t0 = now_seconds();
		if (mcf_solve(g, &oc, &rc, &err) < 0) {
			fprintf(stderr, "cold: %s\n", err.msg);
			return 1;
		}
		report("cold", &rc, now_seconds() - t0);
		printf("warm theta / cold theta - 1: %.3g\n", rw.theta / rc.theta - 1);
		mcf_result_free(&rc);
	}
	mcf_result_free(&rw);
	mcf_result_free(&rh);
	graph_free(g);
	graph_free(h);
	return 0;
}

int main(int argc, char **argv)
{
	const char *only = getenv("LP");
	int rc = 0;

	if (argc < 3) {
		fprintf(stderr, "usage: %s SPEC FAIL [LIMIT_S [cold [COLD_LIMIT_S]]]\n", argv[0]);
		return 2;
	}
	if (!only || strcmp(only, "lpsolve") == 0)
		rc |= run(argc, argv, LP_SOLVER_LPSOLVE);
	if (!only || strcmp(only, "clp") == 0)
		rc |= run(argc, argv, LP_SOLVER_CLP);
	return rc;
}
