/* What the degraded fabric's bound alone costs: CPU seconds of
 * degraded_bound (sched/bound_degraded.c) on one degraded graph, the
 * mean of REPS runs, and what it gave; bench/degraded_cost.c prices it
 * beside BFB's explicit schedule, which this leaves out (the sizes past
 * 1,024 nodes, where BFB's patch runs beside the bound).
 *
 *   build/bench/degraded_bound SPEC FAILURES [COLLECTIVE [REPS]]
 *
 * FAILURES as ofc schedule --fail writes them (bench/degraded_scale.sh's
 * ports_arcs prints 1% of the ports); COLLECTIVE allgather,
 * reduce-scatter or allreduce (the default); REPS 1 by default. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "sched/sched.h"

static double cpu_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int main(int argc, char **argv)
{
	struct graph *h, *g;
	struct ofc_error err = {0};
	enum sched_collective c = SCHED_ALLREDUCE;
	struct degraded_bound b;

	if (argc < 3 || argc > 5) {
		fprintf(stderr, "usage: %s SPEC FAILURES [COLLECTIVE [REPS]]\n", argv[0]);
		return 2;
	}
	if (argc > 3 && sched_collective_parse(argv[3], &c) < 0) {
		fprintf(stderr, "%s: not a collective\n", argv[3]);
		return 2;
	}
	int reps = argc > 4 ? atoi(argv[4]) : 1;
	if (reps < 1 || reps > 1000) {
		fprintf(stderr, "%s: REPS is 1 to 1000\n", argv[4]);
		return 2;
	}
	if (topo_build(argv[1], &h, &err) < 0 || topo_fail_links(h, argv[2], &g, &err) < 0) {
		fprintf(stderr, "%s\n", err.msg);
		return 1;
	}
	uint32_t d = 0;
	for (uint32_t u = 0; u < h->n; u++)
		if (graph_outdeg(h, u) > d)
			d = graph_outdeg(h, u);

	double t0 = cpu_s();
	for (int i = 0; i < reps; i++)
		if (degraded_bound(g, c, d, 0, &b) < 0) {
			fprintf(stderr, "no degraded bound for this collective\n");
			return 1;
		}
	double t1 = cpu_s();
	printf("bound  %.4f s CPU a run (%d runs): tau_B %.9g, %u steps from %u BFS, %llu max "
	       "flows, balls %u and %u, nodes over the whole graph %u and %u\n",
	       (t1 - t0) / reps, reps, b.tau_b, b.steps, b.ecc_checked, (unsigned long long)b.flows,
	       b.ag.balls, b.rs.balls, b.ag.checked, b.rs.checked);
	graph_free(g);
	graph_free(h);
	return 0;
}
