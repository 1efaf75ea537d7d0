/* The explicit degraded BFB (what failures that break the structure fall
 * back to) verified whole or in chunks of its shards (sched/verify_chunk.c),
 * one check a budget, in one run: seconds and peak RSS each.
 *
 *   build/bench/verify_chunk SPEC COLLECTIVE FAILFILE [BUDGETS [THREADS]]
 *
 * FAILFILE holds the links as ofc schedule --fail takes them (5-6,7-8);
 * BUDGETS a comma-separated list of verify_opts.reduce_bytes in MiB (0:
 * the verifier's own, 512 MiB; default "0"); THREADS the check's (0: all
 * CPUs; default 2). Each check's wall and CPU seconds (all threads'); peak
 * RSS is the process's so far: the schedule's, and the largest check's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "bfb/bfb.h"
#include "sched/sched.h"

static double rss_mb(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_maxrss / 1024.0;
}

/* CPU seconds of every thread so far, user and system. */
static double cpu_s(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
	       ru.ru_stime.tv_usec / 1e6;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	size_t cap = 1 << 16, len = 0, k;
	char *buf = malloc(cap);

	if (!f)
		return NULL;
	while ((k = fread(buf + len, 1, cap - len - 1, f)) > 0)
		if ((len += k) + 1 == cap)
			buf = realloc(buf, cap *= 2);
	fclose(f);
	buf[len] = 0;
	while (len && (buf[len - 1] == '\n' || buf[len - 1] == ' '))
		buf[--len] = 0;
	return buf;
}

int main(int argc, char **argv)
{
	struct ofc_error err = {0};
	struct graph *g, *gd;
	struct bfb_opts bo = {0};
	struct bfb_stats st;
	struct schedule s;
	enum sched_collective c;
	char *list;

	if (argc < 4 || sched_collective_parse(argv[2], &c) < 0 || !(list = slurp(argv[3]))) {
		fprintf(stderr,
			"usage: verify_chunk SPEC COLLECTIVE FAILFILE [BUDGETS [THREADS]]\n");
		return 2;
	}
	unsigned threads = argc > 5 ? (unsigned)atoi(argv[5]) : 2;
	if (topo_build(argv[1], &g, &err) < 0 || topo_fail_links(g, list, &gd, &err) < 0) {
		fprintf(stderr, "%s\n", err.msg);
		return 1;
	}
	double t0 = now_seconds();

	bo.threads = threads;
	if (bfb_schedule(gd, c, &bo, &s, &st, &err) < 0) {
		fprintf(stderr, "bfb: %s\n", err.msg);
		return 1;
	}
	printf("%s %s less %u arcs: %u nodes, %zu transfers, %u steps, built in %.2f s, "
	       "peak RSS %.0f MB\n",
	       argv[1], argv[2], g->m - gd->m, s.nodes, s.nxfers, s.nsteps, now_seconds() - t0,
	       rss_mb());
	int rc = 0;
	char *budgets = strdup(argc > 4 ? argv[4] : "0"), *save = NULL;

	for (char *b = strtok_r(budgets, ",", &save); b; b = strtok_r(NULL, ",", &save)) {
		struct verify_opts o = {.graph = gd, .threads = threads};
		struct verify_report r;

		o.reduce_bytes = (uint64_t)atof(b) << 20;
		t0 = now_seconds();
		double c0 = cpu_s();
		int ok = sched_verify(&s, &o, &r);
		printf("budget %s MiB: verified %s in %.2f s (%.2f s of CPU)%s%s; sum of busiest "
		       "links %.6f; peak RSS %.0f MB\n",
		       b, ok == 0 ? "yes" : "NO", now_seconds() - t0, cpu_s() - c0, ok ? ": " : "",
		       ok ? r.error : "", r.sum_max_link_load, rss_mb());
		rc |= ok != 0;
	}
	free(budgets);
	sched_free(&s);
	graph_free(gd);
	graph_free(g);
	free(list);
	return rc;
}
