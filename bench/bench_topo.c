/* Topology generation: build, facts (diameter), port permutations.
 * Prints one row per spec: the best of `reps` runs of each phase, in ms.
 * Usage: build/bench/bench_topo [SPEC...] */
#include <stdio.h>
#include <stdlib.h>

#include "topo/topo.h"

static const char *const default_specs[] = {
    "genkautz:4096,4",
    "torus:64x64",
    "hypercube:12",
    "kautz:4,5",
    "genkautz:65536,4",
    "torus:256x256",
    "line^3(circulant:16:3,4)",
};

int main(int argc, char **argv)
{
	const char *const *specs = default_specs;
	int nspecs = (int)(sizeof(default_specs) / sizeof(default_specs[0]));
	const int reps = 5;

	if (argc > 1) {
		specs = (const char *const *)argv + 1;
		nspecs = argc - 1;
	}
	printf("%-28s %9s %5s %8s %9s %9s %9s %9s\n", "spec", "nodes", "deg", "diameter",
	       "build_ms", "facts_ms", "ports_ms", "total_ms");
	for (int i = 0; i < nspecs; i++) {
		double best[3] = {1e30, 1e30, 1e30};
		struct topo_facts f = {0};

		for (int r = 0; r < reps; r++) {
			struct ofc_error err = {0};
			struct port_map pm;
			struct graph *g;
			double t0 = now_seconds(), t1, t2, t3;

			if (topo_build(specs[i], &g, &err) < 0) {
				fprintf(stderr, "%s: %s\n", specs[i], err.msg);
				return 1;
			}
			t1 = now_seconds();
			topo_facts(g, &f, 0);
			t2 = now_seconds();
			if (topo_ports(g, &pm, &err) < 0) {
				fprintf(stderr, "%s: %s\n", specs[i], err.msg);
				return 1;
			}
			t3 = now_seconds();
			best[0] = t1 - t0 < best[0] ? t1 - t0 : best[0];
			best[1] = t2 - t1 < best[1] ? t2 - t1 : best[1];
			best[2] = t3 - t2 < best[2] ? t3 - t2 : best[2];
			port_map_free(&pm);
			graph_free(g);
		}
		printf("%-28s %9u %5u %8u %9.2f %9.2f %9.2f %9.2f\n", specs[i], f.nodes, f.degree,
		       f.diameter, best[0] * 1e3, best[1] * 1e3, best[2] * 1e3,
		       (best[0] + best[1] + best[2]) * 1e3);
	}
	printf("peak RSS %.1f MiB\n", (double)peak_rss_bytes() / (1 << 20));
	return 0;
}
