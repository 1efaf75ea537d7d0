/* Skewed all-to-all: the MCF with per-pair demands against the
 * uniform all-to-all's schedule run on the same skewed traffic, and the
 * MCF's solve time with a demand matrix.
 *
 *   build/bench/skew [DEMAND_FILE [SPEC...]]
 *
 * For each topology: the demand's MCF lowered to paths (theta: every pair
 * gets theta x its demand, the verifier's busiest link weighed), the
 * uniform MCF's paths lowering verified with the same demand weighing its
 * blocks (what a demand-blind schedule does on skewed traffic), and the
 * direct baseline; each time for M = 64 MiB a node on 100 Gb/s links (a
 * cut-through schedule: alpha + busiest link x M/N / b). Without a file:
 * examples/workloads/moe-ep64.txt on torus:8x8, genkautz:64,4; then the
 * solve time at 1,024 hosts: the same skew in 128 groups of 8 (rows of
 * torus:32x32, alike under its translations, and the hosts of equal rank
 * mod 128, alike under none) on torus:32x32 and genkautz:1024,4. */
#include "alltoall/alltoall.h"
#include "sched/sched.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SIZE  (64.0 * 1048576)
#define LINK  100e9
#define ALPHA 10e-6

/* Build a2a by algo (demand NULL: uniform) and verify it with weights w:
 * the busiest link over all steps (blocks); -1 on failure. */
static double busiest(const struct graph *g, enum a2a_algo algo, const double *demand,
		      const double *w, double limit, struct mcf_result *mr, double *solve_s)
{
	struct a2a_request q = {.algo = algo,
				.lowering = a2a_lowering_at(A2A_LOWER_PATHS),
				.mcf = {.demand = demand, .time_limit = limit}};
	struct a2a_outcome o;
	struct schedule s;
	struct ofc_error err = {0};
	struct verify_report rep;
	struct verify_opts vo = {.graph = g, .block_weight = w};
	double t0 = now_seconds();

	if (a2a_build(g, &q, &s, &o, &err) < 0) {
		fprintf(stderr, "%s: %s\n", a2a_algo_name(algo), err.msg);
		return -1;
	}
	if (solve_s)
		*solve_s = now_seconds() - t0;
	if (mr && o.have_mcf)
		*mr = o.mcf, o.have_mcf = false;
	double z = sched_verify(&s, &vo, &rep) == 0 ? rep.max_total_link_load : -1;
	if (z < 0)
		fprintf(stderr, "%s: %s\n", a2a_algo_name(algo), rep.error);
	sched_free(&s);
	a2a_outcome_free(&o);
	return z;
}

static double time_us(double z, uint32_t n)
{
	return (ALPHA + z * (SIZE / n) * 8 / LINK) * 1e6;
}

static void compare(const char *spec, const double *dem, uint32_t n)
{
	struct graph *g;
	struct ofc_error err = {0};
	struct mcf_result mr = {0};
	double solve = 0;

	if (topo_build(spec, &g, &err) < 0 || g->n != n) {
		printf("| %s | - | %s |\n", spec, err.msg);
		return;
	}
	double zs = busiest(g, A2A_MCF, dem, dem, 60, &mr, &solve);
	double zu = busiest(g, A2A_MCF, NULL, dem, 60, NULL, NULL);
	double zd = busiest(g, A2A_DIRECT, dem, dem, 0, NULL, NULL);
	printf("| %s | %.6g | %.6g (%s, %s) | %.6g | %.6g | %.1f | %.1f | %.1f | %.2fx | %.2f |\n",
	       spec, 1 / zs, mr.theta, mcf_method_name(mr.method),
	       mr.optimal ? "optimal" : mcf_stop_name(mr.stop), 1 / zu, 1 / zd, time_us(zs, n),
	       time_us(zu, n), time_us(zd, n), zu / zs, solve);
	fflush(stdout);
	mcf_result_free(&mr);
	graph_free(g);
}

/* The solve alone (fluid MCF with the demand, no routes). */
static void solve_row(const char *spec, const char *what, const double *dem, double limit)
{
	struct graph *g;
	struct ofc_error err = {0};
	struct mcf_result r;
	struct mcf_opts o = {.demand = dem, .time_limit = limit};

	if (topo_build(spec, &g, &err) < 0)
		return;
	double t0 = now_seconds();
	if (mcf_solve(g, &o, &r, &err) < 0) {
		printf("| %s | %s | - | %s |\n", spec, what, err.msg);
	} else {
		char gap[48] = "optimal";

		if (!r.optimal)
			snprintf(gap, sizeof(gap), "%.3g%% (%s)", 100 * r.gap,
				 mcf_stop_name(r.stop));
		printf("| %s | %s | %.6g | %s | %s, %u sources, %u it | %.2f |\n", spec, what,
		       r.theta, gap, mcf_method_name(r.method), r.classes, r.iterations,
		       now_seconds() - t0);
		mcf_result_free(&r);
	}
	fflush(stdout);
	graph_free(g);
}

int main(int argc, char **argv)
{
	const char *file = argc > 1 ? argv[1] : "examples/workloads/moe-ep64.txt";
	double *dem;
	uint32_t n;
	struct ofc_error err = {0};

	if (matrix_read(file, 4096, &dem, &n, &err) < 0) {
		fprintf(stderr, "%s: %s\n", err.file, err.msg);
		return 1;
	}
	/* normalised: the mean pair 1 (M/N), as the pipeline does */
	double sum = 0;
	for (uint32_t s = 0; s < n; s++)
		for (uint32_t t = 0; t < n; t++)
			sum += s != t ? dem[(size_t)s * n + t] : (dem[(size_t)s * n + t] = 0);
	for (size_t i = 0; i < (size_t)n * n; i++)
		dem[i] *= (double)n * (n - 1) / sum;
	printf("%s: %u hosts, M = 64 MiB, 100 Gb/s links, alpha 10 us, paths lowering\n\n", file,
	       n);
	printf("| topology | theta (skew MCF, verified) | MCF theta | theta (uniform MCF on the "
	       "skew) | theta (direct) | us skew MCF | us uniform MCF | us direct | gain | "
	       "solve s |\n|---|---|---|---|---|---|---|---|---|---|\n");
	if (argc > 2)
		for (int i = 2; i < argc; i++)
			compare(argv[i], dem, n);
	else if (n == 64) {
		compare("torus:8x8", dem, n);
		compare("genkautz:64,4", dem, n);
	}
	if (argc > 1 || n != 64) {
		free(dem);
		return 0;
	}
	/* 1,024 hosts: 128 groups of 8 with each group's skew (the 8 x 8
	 * block of moe-ep64's group 0: rank i of group g is host i * 128 + g
	 * for the strided groups, g * 8 + i for the rows of 8). */
	uint32_t N = 1024;
	double *rows = xcalloc((size_t)N * N, sizeof(double));
	double *strided = xcalloc((size_t)N * N, sizeof(double));
	for (uint32_t g = 0; g < 128; g++)
		for (uint32_t i = 0; i < 8; i++)
			for (uint32_t j = 0; j < 8; j++) {
				double v = dem[(size_t)(i * 8) * n + j * 8];

				rows[(size_t)(g * 8 + i) * N + g * 8 + j] = v;
				strided[(size_t)(i * 128 + g) * N + j * 128 + g] = v;
			}
	printf("\n| topology | demand | theta | gap | method | seconds "
	       "|\n|---|---|---|---|---|---|\n");
	solve_row("torus:8x8", "moe-ep64 (8 groups of 8, strided)", dem, 60);
	solve_row("genkautz:64,4", "moe-ep64 (8 groups of 8, strided)", dem, 60);
	solve_row("torus:32x32", "128 groups of 8, each a row's quarter", rows, 120);
	solve_row("torus:32x32", "128 groups of 8, strided by 128", strided, 120);
	solve_row("genkautz:1024,4", "128 groups of 8, strided by 128", strided, 120);
	free(rows);
	free(strided);
	free(dem);
	return 0;
}
