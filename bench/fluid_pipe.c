/* Theorem 4's schedule on model W (all links), explicit against by its
 * period, in one run: each in a child process that solves LP 4.2 at T
 * hops (Mirrored DW over the servers' group), then either lays out every
 * transfer and verifies them one by one (fluid_schedule + sched_verify,
 * what `ofc schedule` does today), or plans the period and verifies it
 * (fluid_pipeline + fluid_pipe_verify). Prints a markdown table: the
 * part's seconds, the child's peak RSS and its RSS after the solve.
 *
 *   build/bench/fluid_pipe [SERVERS [T [K]]]     (default 32 8, K chosen
 *                                                for alpha 10 us and 1 GB)
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fluid/fluid.h"

static int run_one(uint32_t servers, uint32_t hops, uint32_t K, bool period)
{
	struct fluid_net n;
	struct fluid_group g = {0};
	struct fluid_result r;
	struct ofc_error err = {0};
	struct fluid_opts o = {.collective = FLUID_ALLGATHER,
			       .method = FLUID_MIRRORED,
			       .hops = hops,
			       .time_limit = 600,
			       .slack = 2e-5};
	struct fluid_steps_opts so = {.chunks = K, .alpha = K ? 0 : 10e-6, .size = 1};
	struct fluid_steps_report rep;
	struct verify_report vr;
	struct verify_network vn;
	struct rusage ru;
	int rc;

	if (fluid_build_modelw(&n, servers, FLUID_ALL_LINKS, &g, &err) < 0) {
		fprintf(stderr, "%s\n", err.msg);
		return 2;
	}
	o.group = &g;
	if (fluid_solve(&n, &o, &r, &err) < 0) {
		fprintf(stderr, "%s\n", err.msg);
		fflush(stderr);
		return 2;
	}
	fluid_routing_merge(&r.routing);
	getrusage(RUSAGE_SELF, &ru);
	long solved = ru.ru_maxrss;
	double t0 = now_seconds();
	if (period) {
		struct fluid_pipe p;

		rc = fluid_pipeline(&n, &r, &so, &p, &rep, &err);
		if (rc == 0) {
			fluid_verify_network(&n, rep.step_time, &vn);
			rc = fluid_pipe_verify(&p, &vn, &vr);
			fluid_pipe_free(&p);
		}
	} else {
		struct schedule s;

		rc = fluid_schedule(&n, &r, &so, &s, &rep, &err);
		if (rc == 0) {
			struct verify_opts vo = {.network = &vn};

			fluid_verify_network(&n, rep.step_time, &vn);
			rc = sched_verify(&s, &vo, &vr);
			sched_free(&s);
		}
	}
	double t = now_seconds() - t0;
	printf("| %u GPUs, T %u | %s | %u x %u | %zu | %s | %.9g | %.6f | %.2f | %.1f |",
	       8 * servers, hops, period ? "period" : "explicit", rep.chunks, rep.steps,
	       vr.ntransfers,
	       rc == 0	    ? "yes"
	       : err.msg[0] ? err.msg
			    : vr.error,
	       vr.network_cost, vr.max_utilisation, t, solved / 1024.0);
	fflush(stdout);
	fluid_result_free(&r);
	fluid_group_free(&g);
	fluid_net_free(&n);
	return rc < 0;
}

static int run_child(uint32_t servers, uint32_t hops, uint32_t K, bool period)
{
	struct rusage ru;
	int st = 0;

	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0)
		_exit(run_one(servers, hops, K, period));
	if (pid < 0 || wait4(pid, &st, 0, &ru) < 0)
		return 1;
	printf(" %.1f |\n", ru.ru_maxrss / 1024.0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}

int main(int argc, char **argv)
{
	uint32_t servers = argc > 1 ? (uint32_t)atoi(argv[1]) : 32;
	uint32_t hops = argc > 2 ? (uint32_t)atoi(argv[2]) : 8;
	uint32_t K = argc > 3 ? (uint32_t)atoi(argv[3]) : 0;
	int status = 0;

	printf("| model W allgather | schedule | K x steps | transfers | verified | cost | "
	       "utilisation | seconds (layout + check) | MB after the solve | peak MB |\n");
	printf("|---|---|---|---|---|---|---|---|---|---|\n");
	status |= run_child(servers, hops, K, false);
	status |= run_child(servers, hops, K, true);
	return status;
}
