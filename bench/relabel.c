/* Relabelling search (topo_relabel): how long until a mapping is found and
 * how many circuits it keeps against the identity, per (current, target)
 * pair at 1024 hosts. "copy" shuffles the target's hosts, so every circuit
 * can stay. Each row runs with a 5 s budget (the goal).
 * Usage: build/bench/relabel [BUDGET_S [SPEC...]]: SPECs given, only a
 * shuffled copy of each (genkautz:4096,4). */
#include <stdio.h>
#include <stdlib.h>

#include "topo/topo.h"

struct pair {
	const char *cur, *target; /* cur NULL: target with its hosts shuffled */
};

static const struct pair pairs[] = {
    {NULL, "torus:32x32"},	       {NULL, "genkautz:1024,4"},
    {NULL, "hypercube:10"},	       {NULL, "torus:8x8x16"},
    {"circulant:1024:31,32", "torus:32x32"}, {"genkautz:1024,4", "torus:32x32"},
    {"torus:32x32", "genkautz:1024,4"},      {"torus:32x32", "torus:16x64"},
};

static struct graph *build(const char *spec)
{
	struct ofc_error err = {0};
	struct graph *g = NULL;

	if (topo_build(spec, &g, &err) < 0) {
		fprintf(stderr, "%s: %s\n", spec, err.msg);
		exit(1);
	}
	return g;
}

static struct graph *shuffled(const struct graph *g, uint64_t seed)
{
	uint32_t n = g->n, *p = xmalloc(n * sizeof(uint32_t));
	uint32_t *tails = graph_arc_tails(g), *heads = xmalloc(((size_t)g->m + 1) * 4);

	for (uint32_t i = 0; i < n; i++)
		p[i] = i;
	for (uint32_t i = n; i > 1; i--) {
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		uint32_t k = (uint32_t)((seed >> 33) % i), t = p[i - 1];
		p[i - 1] = p[k];
		p[k] = t;
	}
	for (uint32_t a = 0; a < g->m; a++) {
		tails[a] = p[tails[a]];
		heads[a] = p[g->adj[a]];
	}
	struct graph *r = graph_from_arcs(n, g->m, tails, heads, "shuffled");
	free(p);
	free(tails);
	free(heads);
	return r;
}

int main(int argc, char **argv)
{
	double budget = argc > 1 ? atof(argv[1]) : 5.0;
	struct pair *want = NULL;
	size_t nwant = sizeof(pairs) / sizeof(pairs[0]);

	if (argc > 2) {
		nwant = (size_t)argc - 2;
		want = xcalloc(nwant, sizeof(*want));
		for (size_t i = 0; i < nwant; i++)
			want[i].target = argv[i + 2];
	}
	const struct pair *rows = want ? want : pairs;

	printf("| current | target | hosts | circuits | identity keeps | relabelled keeps | "
	       "moves saved | complete | rounds | seconds |\n|---|---|---:|---:|---:|---:|---:|---|"
	       "---:|---:|\n");
	for (size_t i = 0; i < nwant; i++) {
		struct graph *t = build(rows[i].target);
		struct graph *cur = rows[i].cur ? build(rows[i].cur) : shuffled(t, 42 + i);
		struct relabel_opts o = {.budget_s = budget};
		struct relabel_result r;
		struct ofc_error err = {0};

		if (topo_relabel(cur, t, &o, &r, &err) < 0) {
			fprintf(stderr, "%s\n", err.msg);
			return 1;
		}
		if (topo_relabel_kept(cur, t, r.map) != r.kept) {
			fprintf(stderr, "%s: the recount disagrees\n", rows[i].target);
			return 1;
		}
		printf("| %s | %s | %u | %llu | %llu | %llu | %llu | %s | %u | %.3f |\n",
		       rows[i].cur ? rows[i].cur : "shuffled copy", rows[i].target, t->n,
		       (unsigned long long)r.arcs, (unsigned long long)r.kept_identity,
		       (unsigned long long)r.kept, (unsigned long long)(r.kept - r.kept_identity),
		       r.complete ? "yes" : "no", r.rounds, r.seconds);
		fflush(stdout);
		relabel_result_free(&r);
		graph_free(cur);
		graph_free(t);
	}
	free(want);
	return 0;
}
