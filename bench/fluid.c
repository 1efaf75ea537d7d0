/* Fluid engine on model W: solve time and peak memory per size,
 * scenario and method. Each case runs in a child process, so its peak RSS
 * (wait4) is its own; every solve has a time limit.
 *
 *   build/bench/fluid                      the default table
 *   build/bench/fluid SCEN SERVERS METHOD T [allgather|alltoall] [LIMIT_S] [SOLVER] [bound]
 *
 * SOLVER: lpsolve, clp, default (each model's own, fluid/internal.h), both
 * (lpsolve and clp) or all (the three; the default table's):
 * every case runs on each in turn, side by side in one run. bound: also the layers
 * summed (fluid_opts.bound_any_hops), the least objective at that R over
 * every T, after the objective ("any T >= ...", its seconds apart).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fluid/fluid.h"

struct bcase {
	const char *scen;
	uint32_t servers;
	const char *method;
	uint32_t hops;
	const char *coll;
};

static const struct bcase cases[] = {
    {"only-nvlink", 2, "mirrored", 6, "allgather"},
    {"only-nvlink", 4, "mirrored", 6, "allgather"},
    {"only-nvlink", 8, "mirrored", 6, "allgather"},
    {"only-nvlink", 16, "mirrored", 6, "allgather"},
    {"only-nvlink", 32, "mirrored", 6, "allgather"},
    {"all-links", 1, "mirrored", 4, "allgather"},
    {"all-links", 2, "mirrored", 8, "allgather"},
    {"all-links", 4, "mirrored", 8, "allgather"},
    {"no-nvlink", 2, "mirrored", 10, "allgather"},
    {"no-nvlink", 4, "mirrored", 10, "allgather"},
    {"only-nvlink", 2, "dw", 6, "allgather"},
    {"only-nvlink", 2, "full", 6, "allgather"},
    {"all-links", 1, "full", 4, "allgather"},
    {"no-nvlink", 1, "full", 6, "allgather"},
    {"all-links", 2, "mirrored", 8, "alltoall"},
    {"all-links", 4, "mirrored", 8, "alltoall"},
};

static bool with_bound;

static int run_one(const struct bcase *c, double limit, enum lp_solver sv)
{
	struct fluid_net n;
	struct fluid_group g = {0};
	struct fluid_result r;
	struct ofc_error err = {0};
	enum fluid_scenario s;
	struct fluid_opts o = {.hops = c->hops,
			       .time_limit = limit,
			       .slack = 2e-5,
			       .lp_solver = sv,
			       .bound_any_hops = with_bound};

	if (fluid_scenario_parse(c->scen, &s) < 0 || fluid_method_parse(c->method, &o.method) < 0 ||
	    fluid_collective_parse(c->coll, &o.collective) < 0) {
		fprintf(stderr, "bad case\n");
		return 2;
	}
	if (fluid_build_modelw(&n, c->servers, s, &g, &err) < 0) {
		fprintf(stderr, "%s\n", err.msg);
		return 2;
	}
	o.group = &g;
	double t0 = now_seconds();
	int rc = fluid_solve(&n, &o, &r, &err);
	double t = now_seconds() - t0;

	if (rc < 0)
		printf("| %s | %u | %s | %s | %u | %s | failed: %s | | %.2f |", c->scen,
		       8 * c->servers, c->coll, c->method, c->hops, lp_solver_name(sv), err.msg, t);
	else {
		char any[224] = "";

		if (with_bound && !isnan(r.objective_any_hops))
			snprintf(any, sizeof(any), "; any T >= %.7g (%s, %.2f s)",
				 r.objective_any_hops, lp_solver_name(r.lp_any_hops),
				 r.seconds_any_hops);
		else if (with_bound)
			snprintf(any, sizeof(any), "; any T: %s", r.any_hops_note);
		printf("| %s | %u | %s | %s | %u | %s | %.9g | %.7g%s%s | %.2f |", c->scen,
		       8 * c->servers, c->coll, c->method, c->hops, lp_solver_name(sv), r.rstar,
		       r.objective,
		       r.stop == FLUID_STOP_OPTIMAL ? ""
		       : r.stop == FLUID_STOP_STALL ? " (not proven: a pricing LP stalled)"
						    : " (time limit)",
		       any, t);
	}
	fflush(stdout);
	fluid_result_free(&r);
	fluid_group_free(&g);
	fluid_net_free(&n);
	return rc < 0;
}

static int run_child(const struct bcase *c, double limit, enum lp_solver sv)
{
	struct rusage ru;
	int st = 0;
	fflush(stdout);
	pid_t pid = fork();

	if (pid == 0)
		_exit(run_one(c, limit, sv));
	if (pid < 0 || wait4(pid, &st, 0, &ru) < 0)
		return 1;
	printf(" %.1f |\n", ru.ru_maxrss / 1024.0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}

/* The solvers `which` names: one, both or all (with each model's default). */
static int run_both(const struct bcase *c, double limit, const char *which)
{
	static const enum lp_solver all[] = {LP_SOLVER_LPSOLVE, LP_SOLVER_CLP, LP_SOLVER_DEFAULT};
	int status = 0;

	for (size_t k = 0; k < 3; k++)
		if (strcmp(which, "all") == 0 || (strcmp(which, "both") == 0 && k < 2) ||
		    strcmp(which, lp_solver_name(all[k])) == 0)
			status |= run_child(c, limit, all[k]);
	return status;
}

int main(int argc, char **argv)
{
	int status = 0;

	printf("| scenario | GPUs | collective | method | T | LP | R* (s/GB) | objective | "
	       "seconds | peak MiB |\n|---|---:|---|---|---:|---|---:|---:|---:|---:|\n");
	if (argc >= 5) {
		struct bcase c = {argv[1], (uint32_t)atoi(argv[2]), argv[3],
				  (uint32_t)atoi(argv[4]), argc > 5 ? argv[5] : "allgather"};

		with_bound = argc > 8 && strcmp(argv[8], "bound") == 0;
		return run_both(&c, argc > 6 ? atof(argv[6]) : 600, argc > 7 ? argv[7] : "both");
	}
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		status |= run_both(&cases[i], 120, "all");
	return status;
}
