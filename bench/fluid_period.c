/* Theorem 4's period planned and checked on threads: model W's allgather
 * (all links) solved once at T hops (Mirrored DW over the servers'
 * group, ofc schedule's defaults), then fluid_pipeline + fluid_pipe_verify on each thread count in
 * turn, ROUNDS rounds, the counts interleaved so that they share the
 * load. Prints a markdown table: each count's fastest and median seconds
 * (plan, check, both), the speedup of the fastest against the first
 * count's, the median CPU seconds of all threads (the work: on a loaded
 * machine the wall shows only what the load lets run at once), and
 * whether the plan's cost and the check's report are the first count's
 * to the last bit.
 *
 *   build/bench/fluid_period [SERVERS [T [THREADS...]]]
 *       (default 32 8 1 2; ROUNDS=5 in the environment to change;
 *       COLLECTIVE=reduce-scatter for a reduce-scatter's period, whose
 *       pattern is checked a reduce a root)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fluid/fluid.h"

#define MAX_COUNTS 16
#define MAX_ROUNDS 64

struct count {
	unsigned threads;
	double plan[MAX_ROUNDS], check[MAX_ROUNDS], both[MAX_ROUNDS], cpu[MAX_ROUNDS];
	bool same;
};

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void sorted(const double *v, unsigned n, double *out)
{
	memcpy(out, v, n * sizeof(double));
	qsort(out, n, sizeof(double), cmp_double);
}

/* The process's CPU seconds, every thread's: the work, whatever the load
 * lets the threads run at once. */
static double cpu_seconds(void)
{
	struct timespec t;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return (double)t.tv_sec + t.tv_nsec * 1e-9;
}

static bool same_report(const struct verify_report *a, const struct verify_report *b)
{
	return a->ok == b->ok && !strcmp(a->error, b->error) && a->nsteps == b->nsteps &&
	       a->ntransfers == b->ntransfers && a->max_utilisation == b->max_utilisation &&
	       a->network_cost == b->network_cost && a->duplicate_blocks == b->duplicate_blocks;
}

/* One plan and check on c->threads, round r; its reports. */
static int run(const struct fluid_net *n, const struct fluid_result *r, struct count *c,
	       unsigned round, struct fluid_steps_report *rep, struct verify_report *vr)
{
	struct fluid_steps_opts so = {.threads = c->threads};
	struct ofc_error err = {0};
	struct verify_network vn;
	struct fluid_pipe p;
	double t0 = now_seconds(), t1, c0 = cpu_seconds();
	int rc;

	if (fluid_pipeline(n, r, &so, &p, rep, &err) < 0) {
		fprintf(stderr, "fluid_pipeline: %s\n", err.msg);
		return -1;
	}
	t1 = now_seconds();
	fluid_verify_network(n, rep->step_time, &vn);
	rc = fluid_pipe_verify(&p, &vn, vr);
	c->plan[round] = t1 - t0;
	c->check[round] = now_seconds() - t1;
	c->both[round] = c->plan[round] + c->check[round];
	c->cpu[round] = cpu_seconds() - c0;
	fluid_pipe_free(&p);
	return rc;
}

int main(int argc, char **argv)
{
	uint32_t servers = argc > 1 ? (uint32_t)atoi(argv[1]) : 32;
	uint32_t hops = argc > 2 ? (uint32_t)atoi(argv[2]) : 8;
	unsigned rounds = getenv("ROUNDS") ? (unsigned)atoi(getenv("ROUNDS")) : 5, nc = 0;
	struct count c[MAX_COUNTS] = {0};
	struct fluid_steps_report rep0, rep;
	struct verify_report vr0, vr;
	struct fluid_net n;
	struct fluid_group g = {0};
	struct fluid_result r;
	struct ofc_error err = {0};
	const char *coll = getenv("COLLECTIVE");
	struct fluid_opts o = {.collective = coll && !strcmp(coll, "reduce-scatter")
						 ? FLUID_REDUCE_SCATTER
						 : FLUID_ALLGATHER,
			       .method = FLUID_MIRRORED,
			       .hops = hops,
			       .time_limit = 600};

	for (int i = 3; i < argc && nc < MAX_COUNTS; i++)
		c[nc++].threads = (unsigned)atoi(argv[i]);
	if (!nc) {
		c[0].threads = 1;
		c[1].threads = 2;
		nc = 2;
	}
	rounds = rounds < 1 ? 1 : rounds > MAX_ROUNDS ? MAX_ROUNDS : rounds;
	if (fluid_build_modelw(&n, servers, FLUID_ALL_LINKS, &g, &err) < 0 ||
	    (o.group = &g, fluid_solve(&n, &o, &r, &err) < 0)) {
		fprintf(stderr, "%s\n", err.msg);
		return 2;
	}
	fluid_routing_merge(&r.routing);
	for (unsigned i = 0; i < nc; i++)
		c[i].same = true;
	for (unsigned k = 0; k < rounds; k++)
		for (unsigned i = 0; i < nc; i++) {
			bool first = k == 0 && i == 0;

			if (run(&n, &r, &c[i], k, first ? &rep0 : &rep, first ? &vr0 : &vr) < 0 &&
			    first)
				fprintf(stderr, "the check fails: %s\n", vr0.error);
			if (!first && (rep.cost != rep0.cost || !same_report(&vr, &vr0)))
				c[i].same = false;
		}
	printf(
	    "%u GPUs, T %u: K %u, %u steps, %zu transfers, verified %s, cost %.9g; %u rounds\n\n",
	    8 * servers, hops, rep0.chunks, rep0.steps, vr0.ntransfers, vr0.ok ? "yes" : "NO",
	    vr0.network_cost, rounds);
	printf("| threads | plan s (min / median) | check s (min / median) | both s (min / median) "
	       "| speedup (min) | CPU s (median) | same report |\n|---|---|---|---|---|---|---|\n");
	double base = 0;

	for (unsigned i = 0; i < nc; i++) {
		double p[MAX_ROUNDS], ch[MAX_ROUNDS], b[MAX_ROUNDS], cp[MAX_ROUNDS];

		sorted(c[i].plan, rounds, p);
		sorted(c[i].check, rounds, ch);
		sorted(c[i].both, rounds, b);
		sorted(c[i].cpu, rounds, cp);
		if (i == 0)
			base = b[0];
		printf("| %u | %.4f / %.4f | %.4f / %.4f | %.4f / %.4f | %.2fx | %.4f | %s |\n",
		       c[i].threads, p[0], p[rounds / 2], ch[0], ch[rounds / 2], b[0],
		       b[rounds / 2], base / b[0], cp[rounds / 2], c[i].same ? "yes" : "NO");
	}
	fluid_result_free(&r);
	fluid_group_free(&g);
	fluid_net_free(&n);
	return 0;
}
