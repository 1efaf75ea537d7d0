/* A degraded torus's BFB as structure (bfb_patch, sched_verify_patched):
 * the healthy reduced schedule, then the patch for the failures, its
 * check without expansion, and the figures against the healthy schedule.
 *
 *   build/bench/degraded SPEC COLLECTIVE FAILURES [explicit|swapped]
 *
 * FAILURES as ofc schedule --fail writes them (5-6, 7>8, 9), or "1%": that
 * share of the links, picked with a fixed seed, none two at one node.
 * "explicit" also builds and verifies today's explicit degraded BFB (up to
 * 4,096 nodes: the explicit verifier's reach for reductions) for its
 * link loads. "swapped" checks the patch with two transfers of a reduction
 * step swapped: the same schedule, no longer mirrored in order, so a
 * mirrored allreduce gets the check of both phases (against the one phase
 * it gets as it is). Prints seconds, peak RSS, the region, the patch's
 * transfers, the phases checked and the link loads (sum over steps of the
 * busiest link, in blocks). */
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

static char *random_links(const struct graph *g, double share)
{
	size_t cap = 1 << 20, len = 0;
	char *list = malloc(cap);
	uint64_t x = 0x9e3779b97f4a7c15ull;
	uint8_t *used = calloc(g->n, 1);

	list[0] = 0;
	for (uint32_t k = 0; k < (uint32_t)(g->m / 2 * share); k++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		uint32_t u = (uint32_t)(x % g->n), j = (uint32_t)(x >> 32) % graph_outdeg(g, u);
		uint32_t v = graph_out(g, u)[j];

		if (used[u] || used[v] || len + 32 > cap)
			continue;
		used[u] = used[v] = 1;
		len += (size_t)snprintf(list + len, cap - len, "%s%u-%u", len ? "," : "", u, v);
	}
	free(used);
	return list;
}

/* Two different transfers of p's first reduction step that has them
 * swapped (false: none). */
static bool swap_reductions(struct sched_patch *p)
{
	struct schedule *q = &p->prog;

	for (uint32_t t = 0; t < q->nsteps / 2; t++)
		for (size_t i = q->step_start[t] + 1; i < q->step_start[t + 1]; i++)
			if (q->xfers[i].dst != q->xfers[i - 1].dst ||
			    q->xfers[i].block != q->xfers[i - 1].block) {
				struct xfer x = q->xfers[i];

				q->xfers[i] = q->xfers[i - 1];
				q->xfers[i - 1] = x;
				return true;
			}
	return false;
}

int main(int argc, char **argv)
{
	struct ofc_error err = {0};
	struct graph *g, *gd = NULL;
	struct topo_tree *t;
	struct sched_group G;
	struct sched_reduced r;
	struct sched_patch p;
	struct bfb_stats st;
	struct bfb_opts o = {0};
	struct verify_report hr, pr;
	enum sched_collective c;

	if (argc < 4 || sched_collective_parse(argv[2], &c) < 0) {
		fprintf(stderr, "usage: degraded SPEC COLLECTIVE FAILURES|N%% [explicit]\n");
		return 2;
	}
	if (topo_build_tree(argv[1], &g, &t, &err) < 0 || sched_group_of(g, t, &G, &err) < 0) {
		fprintf(stderr, "%s\n", err.msg);
		return 1;
	}
	char *list = strchr(argv[3], '%') ? random_links(g, atof(argv[3]) / 100) : argv[3];
	bool *gone = calloc(g->m + 1, sizeof(bool));
	uint8_t *dead = calloc(g->n, 1);
	if (topo_mark_items(g, list, gone, dead, &err) < 0) {
		fprintf(stderr, "--fail: %s\n", err.msg);
		return 1;
	}
	double t0 = now_seconds();
	if (bfb_reduced(g, &G, c, &o, &r, &st, &err) < 0 ||
	    sched_verify_reduced(&r, &(struct verify_opts){.graph = g}, &hr) < 0) {
		fprintf(stderr, "healthy: %s %s\n", err.msg, hr.error);
		return 1;
	}
	double t1 = now_seconds();
	if (bfb_patch(g, &r, gone, dead, &o, 0, &p, &st, &err) < 0) {
		fprintf(stderr, "patch: %s\n", err.msg);
		return 1;
	}
	if (argc > 4 && strcmp(argv[4], "swapped") == 0 && !swap_reductions(&p)) {
		fprintf(stderr, "swapped: no reduction step with two different transfers\n");
		return 1;
	}
	double t2 = now_seconds();
	int ok = sched_verify_patched(&r, &p, g, gone, &pr);
	double t3 = now_seconds();
	uint32_t ngone = 0;
	for (uint32_t a = 0; a < g->m; a++)
		ngone += gone[a];
	printf("%s %s, %u arcs failed: healthy %.3f s; patch %.3f s (%u nodes solved whole, "
	       "%zu transfers, %.1f MB); verified %s (%s) in %.3f s%s%s; peak RSS %.0f MB\n",
	       argv[1], argv[2], ngone, t1 - t0, t2 - t1, st.whole, p.prog.nxfers,
	       p.prog.nxfers * sizeof(struct xfer) / 1e6, ok == 0 ? "yes" : "NO",
	       pr.one_phase ? "one phase" : "both phases", t3 - t2, ok ? ": " : "",
	       ok ? pr.error : "", rss_mb());
	printf("link loads (sum of the busiest link a step, blocks): healthy %.6f, patched %.6f "
	       "(%+.2f%%)\n",
	       hr.sum_max_link_load, pr.sum_max_link_load,
	       100 * (pr.sum_max_link_load / hr.sum_max_link_load - 1));
	if (argc > 4 && strcmp(argv[4], "explicit") == 0) {
		struct schedule d;
		struct verify_report dr;

		t0 = now_seconds();
		if (topo_fail_items(g, list, &gd, dead, &err) < 0 ||
		    bfb_schedule(gd, c, &o, &d, &st, &err) < 0) {
			fprintf(stderr, "explicit: %s\n", err.msg);
			return 1;
		}
		int eok = sched_verify(&d, &(struct verify_opts){.graph = gd}, &dr);
		printf("explicit degraded BFB: %zu transfers, verified %s, %.3f s; link loads "
		       "%.6f (patched/explicit %.6f); peak RSS %.0f MB\n",
		       d.nxfers, eok == 0 ? "yes" : "NO", now_seconds() - t0, dr.sum_max_link_load,
		       pr.sum_max_link_load / dr.sum_max_link_load, rss_mb());
		sched_free(&d);
		graph_free(gd);
	}
	sched_patch_free(&p);
	sched_reduced_free(&r);
	free(gone);
	free(dead);
	if (list != argv[3])
		free(list);
	graph_free(g);
	topo_tree_free(t);
	return ok == 0 ? 0 : 1;
}
