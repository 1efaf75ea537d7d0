/* What the degraded fabric's bound and BFB's re-balancing cost, alone:
 * CPU seconds and work of degraded_bound (sched/bound_degraded.c: its
 * cuts, and its steps with the BFS run for them) and of
 * bfb_rebalance (bfb/rebalance.c) on BFB's explicit schedule, and what
 * each gave.
 *
 *   build/bench/degraded_cost SPEC FAILURES [COLLECTIVE [STEP_BLOCKS]]
 *
 * FAILURES as ofc schedule --fail writes them (bench/degraded_quality.sh
 * prints the bench's lists); COLLECTIVE allgather, reduce-scatter or
 * allreduce (the default); STEP_BLOCKS what a step more costs in blocks on
 * a link (alpha N / (d M/B): 0.48 for 64 MiB at 10 us and 100 Gb/s on
 * 1,024 nodes of degree 4, the default). The same file built against an
 * older libofc.a gives that version's figures. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bfb/bfb.h"
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

	if (argc < 3 || argc > 5) {
		fprintf(stderr, "usage: %s SPEC FAILURES [COLLECTIVE [STEP_BLOCKS]]\n", argv[0]);
		return 2;
	}
	if (argc > 3 && sched_collective_parse(argv[3], &c) < 0) {
		fprintf(stderr, "%s: not a collective\n", argv[3]);
		return 2;
	}
	double step_blocks = argc > 4 ? atof(argv[4]) : 0.48;
	if (topo_build(argv[1], &h, &err) < 0 || topo_fail_links(h, argv[2], &g, &err) < 0) {
		fprintf(stderr, "%s\n", err.msg);
		return 1;
	}
	uint32_t d = 0;
	for (uint32_t u = 0; u < h->n; u++)
		if (graph_outdeg(h, u) > d)
			d = graph_outdeg(h, u);

	struct degraded_bound b;
	double t0 = cpu_s();
	if (degraded_bound(g, c, d, 0, &b) < 0) {
		fprintf(stderr, "no degraded bound for this collective\n");
		return 1;
	}
	double t1 = cpu_s();
	printf("bound      %.3f s CPU: tau_B %.9g, %llu max flows, every node checked: %s\n",
	       t1 - t0, b.tau_b, (unsigned long long)b.flows,
	       (!b.in || b.ag.exact) && (!b.out || b.rs.exact) ? "yes" : "no");
	printf("           %u steps from %u BFS (%s)\n", b.steps, b.ecc_checked,
	       b.steps_exact ? "every node's: the diameter" : "an eccentricity");

	struct bfb_opts o = {.threads = 1};
	struct bfb_stats bst;
	struct schedule s;
	if (bfb_schedule(g, c, &o, &s, &bst, &err) < 0) {
		fprintf(stderr, "%s\n", err.msg);
		return 1;
	}
	struct bfb_rebalance_stats st;
	double t2 = cpu_s();
	int kept = bfb_rebalance(g, &s, 0, step_blocks, NULL, &st);
	double t3 = cpu_s();
	double scale = (double)d / ((double)SCHED_ONE * g->n);
	printf("rebalance  %.3f s CPU, %llu work: tau_B %.9g -> %.9g (%s), %u receivers, %u steps "
	       "added; the bound %.9g\n",
	       t3 - t2, (unsigned long long)st.work_spent, (double)st.sum_before * scale,
	       (double)st.sum_after * scale, kept == 1 ? "kept" : "BFB as built", st.receivers,
	       st.steps_added, b.tau_b);
	sched_free(&s);
	graph_free(g);
	graph_free(h);
	return 0;
}
