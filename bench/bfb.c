/* BFB schedule generation and verification, timed separately, with the peak
 * memory of each case (every case runs in its own child process, so the
 * peak is that case's). Also the expansion construction, the lp_solve path
 * and the topology finder. Usage: bfb [CASE-FILTER]. */
#include "bfb/bfb.h"
#include "sched/sched.h"

#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

struct bcase {
	const char *spec;
	enum sched_collective coll;
	enum bfb_method method;
	unsigned threads;
	bool expansion;
};

static const struct bcase cases[] = {
    {"torus:32x32", SCHED_ALLGATHER, BFB_AUTO, 1, false},
    {"torus:32x32", SCHED_ALLGATHER, BFB_AUTO, 2, false},
    {"hypercube:10", SCHED_ALLGATHER, BFB_AUTO, 1, false},
    {"hypercube:10", SCHED_ALLGATHER, BFB_AUTO, 2, false},
    {"torus:50x50", SCHED_ALLGATHER, BFB_AUTO, 1, false},
    {"torus:50x50", SCHED_ALLGATHER, BFB_AUTO, 2, false},
    {"genkautz:1024,4", SCHED_ALLGATHER, BFB_AUTO, 2, false},
    {"genkautz:1024,4", SCHED_ALLREDUCE, BFB_AUTO, 2, false},
    {"torus:32x32", SCHED_ALLREDUCE, BFB_AUTO, 2, false},
    {"torus:50x50", SCHED_ALLREDUCE, BFB_AUTO, 2, false},
    {"line^3(circulant:16:3,4)", SCHED_ALLREDUCE, BFB_AUTO, 2, false},
    {"line^3(circulant:16:3,4)", SCHED_ALLREDUCE, BFB_AUTO, 2, true},
    {"hypercube:10", SCHED_ALLGATHER, BFB_LP, 2, false},
    {"torus:32x32", SCHED_ALLGATHER, BFB_LP, 2, false},
};

static int run_case(const struct bcase *c)
{
	struct graph *g;
	struct topo_tree *t;
	struct ofc_error err = {0};
	struct schedule s;
	struct bfb_stats st = {0};
	struct expand_figures f;
	struct verify_report r;
	struct bfb_opts o = {.method = c->method, .threads = c->threads};
	char buf[64];

	if (topo_build_tree(c->spec, &g, &t, &err) < 0) {
		fprintf(stderr, "%s: %s\n", c->spec, err.msg);
		return 1;
	}
	double t0 = now_seconds();
	int rc = c->expansion ? expand_schedule(t, c->coll, &o, &s, &f, &err)
			      : bfb_schedule(g, c->coll, &o, &s, &st, &err);
	double gen = now_seconds() - t0;
	if (rc < 0) {
		fprintf(stderr, "%s: %s\n", c->spec, err.msg);
		return 1;
	}
	struct verify_opts vo = {.graph = g};
	t0 = now_seconds();
	rc = sched_verify(&s, &vo, &r);
	double ver = now_seconds() - t0;
	double tau = r.sum_max_link_load * graph_outdeg(g, 0) / g->n;
	struct cost_bound lb;
	cost_lower_bound(c->coll, g->n, graph_outdeg(g, 0), &lb);
	printf("| %-26s | %-14s | %-9s | %u | %8.3f | %8.3f | %9zu | %s | %7.4f%% |", c->spec,
	       sched_collective_name(c->coll),
	       c->expansion	     ? "expansion"
	       : c->method == BFB_LP ? "bfb-lp"
				     : "bfb",
	       c->threads, gen, ver, s.nxfers,
	       c->expansion ? frac_str(f.tau_b, buf, sizeof(buf))
			    : frac_str(st.tau_b, buf, sizeof(buf)),
	       100.0 * (tau / frac_value(lb.tau_b) - 1));
	if (rc < 0)
		printf(" VERIFY FAILED: %s", r.error);
	fflush(stdout);
	sched_free(&s);
	topo_tree_free(t);
	graph_free(g);
	return rc < 0;
}

static int run_finder(uint32_t n, uint32_t d)
{
	struct finder_result r;
	struct ofc_error err = {0};

	if (finder_run(n, d, 0, &r, &err) < 0) {
		fprintf(stderr, "finder: %s\n", err.msg);
		return 1;
	}
	printf("| finder --nodes %u --degree %u | %8.3f | %zu frontier entries, %llu graphs "
	       "evaluated |",
	       n, d, r.seconds, r.n, (unsigned long long)r.evaluated);
	fflush(stdout);
	finder_free(&r);
	return 0;
}

/* Run fn in a child; print its peak RSS. */
static int in_child(int (*fn)(const void *), const void *arg)
{
	pid_t pid = fork();
	int status = 1;
	struct rusage ru;

	if (pid == 0)
		_exit(fn(arg));
	if (pid < 0 || wait4(pid, &status, 0, &ru) < 0)
		return 1;
	printf(" %7.1f |\n", ru.ru_maxrss / 1024.0);
	fflush(stdout);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

static int case_fn(const void *arg)
{
	return run_case(arg);
}

static int finder_fn(const void *arg)
{
	const uint32_t *nd = arg;

	return run_finder(nd[0], nd[1]);
}

int main(int argc, char **argv)
{
	const char *filter = argc > 1 ? argv[1] : NULL;
	int fails = 0;

	printf("BFB: generation and verification (seconds), peak RSS of the case (MiB)\n\n");
	printf("| topology | collective | algorithm | threads | generate s | verify s | transfers "
	       "| tau_B | above (N-1)/N bound | peak MiB |\n");
	printf("|---|---|---|---|---|---|---|---|---|---|\n");
	fflush(stdout);
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++)
		if (!filter || strstr(cases[i].spec, filter))
			fails += in_child(case_fn, &cases[i]);
	printf("\n| finder | seconds | result | peak MiB |\n|---|---|---|---|\n");
	fflush(stdout);
	static const uint32_t finds[][2] = {{1024, 4}, {2000, 4}, {1000, 8}, {4096, 16}};
	for (size_t i = 0; i < ARRAY_SIZE(finds); i++)
		if (!filter || strstr("finder", filter))
			fails += in_child(finder_fn, finds[i]);
	return fails ? 1 : 0;
}
