/* Symmetry by nauty and by bliss on the same graphs: which
 * library ofc calls was chosen by this table (bench/results/symmetry.md, "Symmetry
 * through nauty"). Each graph goes through topo/symmetry.c's encoding (a
 * simple coloured digraph), then to nauty (the code ofc runs) and to bliss
 * (bench/bliss_shim.cc, its Digraph): the generators of Aut and |Aut|, and
 * a canonical-form isomorphism onto a shuffled copy, checked arc by arc.
 * Then what ofc does with them: graph_automorphisms' listing (capped at
 * 4,096 elements), topo_relabel of a shuffled copy, and model W's server
 * group (fluid_group_blocks) from the configs in examples/modelw.
 * Each time is the best of REPEAT runs (default 3).
 * Usage: build/bench/symmetry [REPEAT] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bliss_shim.h"
#include "controller/config/config.h"
#include "controller/fabric/fabric.h"
#include "fluid/internal.h"
#include "topo/internal.h"

static int repeat = 3;

static struct graph *build(const char *spec)
{
	struct ofc_error err = {0};
	struct graph *g = NULL, *d = NULL;
	char buf[256];
	const char *less = strstr(spec, " less ");

	snprintf(buf, sizeof(buf), "%.*s", less ? (int)(less - spec) : (int)strlen(spec), spec);
	if (topo_build(buf, &g, &err) < 0 || (less && topo_fail_links(g, less + 6, &d, &err) < 0)) {
		fprintf(stderr, "%s: %s\n", spec, err.msg);
		exit(1);
	}
	if (d) {
		graph_free(g);
		g = d;
	}
	return g;
}

static struct graph *shuffled(const struct graph *g, uint64_t seed)
{
	uint32_t n = g->n, *p = xmalloc(((size_t)n + 1) * sizeof(uint32_t));
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

static struct bliss_in bliss_of(const struct sym_graph *s)
{
	return (struct bliss_in){
	    .n = s->n, .off = s->off, .deg = s->deg, .adj = s->adj, .cell = s->cell};
}

/* The encoded map is an isomorphism of the graphs (arc multisets kept). */
static bool is_iso(const struct graph *a, const struct graph *b, const uint32_t *map)
{
	return topo_relabel_kept(a, b, map) == a->m; /* b's arcs kept in a under map */
}

/* nauty and bliss on g: generators and |Aut|; isomorphism onto a shuffled
 * copy. One table row. */
static void row(const char *name, const struct graph *g, bool iso)
{
	struct sym_graph s, t;
	struct sym_gens sy;
	struct bliss_out bo = {0};
	double tn = 1e9, tb = 1e9, in = 1e9, ib = 1e9, t0;
	uint32_t ngn = 0;
	double order = 0;
	bool okn = true, okb = true;

	t0 = now_seconds();
	sym_encode(g, NULL, 0, &s);
	double enc = now_seconds() - t0;
	for (int r = 0; r < repeat; r++) {
		t0 = now_seconds();
		sym_automorphisms(&s, NULL, 0, UINT64_MAX, &sy);
		if (now_seconds() - t0 < tn)
			tn = now_seconds() - t0;
		ngn = sy.ngen;
		order = sy.order;
		sym_gens_free(&sy);
		struct bliss_in bi = bliss_of(&s);
		t0 = now_seconds();
		bliss_shim_automorphisms(&bi, &bo);
		if (now_seconds() - t0 < tb)
			tb = now_seconds() - t0;
	}
	if (iso) {
		struct graph *h = shuffled(g, 42);
		uint32_t *map = xmalloc(((size_t)s.n + 1) * sizeof(uint32_t));

		sym_encode(h, NULL, 0, &t);
		for (int r = 0; r < repeat; r++) {
			t0 = now_seconds();
			okn = sym_isomorphism(&t, &s, 0, map) == 1 && is_iso(g, h, map);
			if (now_seconds() - t0 < in)
				in = now_seconds() - t0;
			struct bliss_in bt = bliss_of(&t), bs = bliss_of(&s);
			t0 = now_seconds();
			okb = bliss_shim_isomorphic(&bt, &bs, map) == 1 && is_iso(g, h, map);
			if (now_seconds() - t0 < ib)
				ib = now_seconds() - t0;
		}
		sym_graph_free(&t);
		graph_free(h);
		free(map);
	}
	printf("| %s | %u | %u | %.4g | %.4g | %u | %.2f | %u | %.2f | %.2f | ", name, g->n, s.n,
	       order, bo.order, ngn, tn * 1e3, bo.ngens, tb * 1e3, enc * 1e3);
	if (iso)
		printf("%.2f%s | %.2f%s |\n", in * 1e3, okn ? "" : " (failed)", ib * 1e3,
		       okb ? "" : " (failed)");
	else
		printf("- | - |\n");
	sym_graph_free(&s);
	fflush(stdout);
}

/* What ofc does with nauty's generators: the group listed (4,096 at most)
 * and relabelling a shuffled copy. */
static void use_row(const char *spec)
{
	struct graph *g = build(spec), *h = shuffled(g, 7);
	struct graph_group grp;
	struct relabel_opts o = {.budget_s = 5};
	struct relabel_result r;
	struct ofc_error err = {0};
	double t0 = now_seconds(), tl, tr;

	graph_automorphisms(g, 4096, NULL, &grp);
	tl = now_seconds() - t0;
	t0 = now_seconds();
	if (topo_relabel(g, h, &o, &r, &err) < 0) {
		fprintf(stderr, "%s: %s\n", spec, err.msg);
		exit(1);
	}
	tr = now_seconds() - t0;
	printf("| %s | %u of %.4g | %u | %.3f | %llu of %llu | %s | %.3f |\n", spec, grp.order,
	       grp.full_order, grp.norbits, tl, (unsigned long long)r.kept,
	       (unsigned long long)r.arcs, r.iso ? "yes" : "no", tr);
	relabel_result_free(&r);
	graph_group_free(&grp);
	graph_free(g);
	graph_free(h);
	fflush(stdout);
}

/* Model W through a config: the server group ofc builds (nauty inside),
 * and nauty against bliss on the whole network's digraph. */
static void modelw_row(const char *cfg, bool network)
{
	struct fabric *f = NULL;
	struct fluid_net n;
	struct fluid_group fg;
	struct ofc_error err = {0};
	struct graph gr;
	char path[256];
	uint32_t blocks = 0, bsize = 0;
	double best = 1e9;

	snprintf(path, sizeof(path), "examples/modelw/%s.yaml", cfg);
	if (fabric_open(path, &f, &err) < 0 || fabric_server_net(f, &n, &err) < 0) {
		fprintf(stderr, "%s: %s\n", path, err.msg);
		exit(1);
	}
	for (uint32_t h = 0; h < f->nhosts; h++)
		blocks += f->hosts[h].server != NULL;
	bsize = f->servers[0].nvertices;
	for (int r = 0; r < repeat && !network; r++) {
		double t0 = now_seconds();

		if (fluid_group_blocks(&n, blocks, bsize, NULL, &fg, &err) < 0) {
			fprintf(stderr, "%s: %s\n", path, err.msg);
			exit(1);
		}
		if (now_seconds() - t0 < best)
			best = now_seconds() - t0;
		if (r + 1 < repeat)
			fluid_group_free(&fg);
		else
			printf("| %s | %u | %.2f |\n", cfg, fg.order, best * 1e3);
	}
	if (!network) {
		fluid_group_free(&fg);
		fluid_net_free(&n);
		fabric_free(f);
		return;
	}
	if (fluid_net_digraph(&n, NULL, &gr, &err) < 0) {
		fprintf(stderr, "%s: %s\n", path, err.msg);
		exit(1);
	}
	char name[64];
	snprintf(name, sizeof(name), "%s network", cfg);
	row(name, &gr, false);
	fluid_digraph_free(&gr);
	fluid_net_free(&n);
	fabric_free(f);
}

/* A hub with two marked "GPUs" and k interchangeable leaves (test_topo's
 * test_automorphism_gens_first): S_2 x S_k. */
static struct graph *hub(uint32_t k)
{
	uint32_t *t = xmalloc((2 * (size_t)k + 8) * 4), *h = xmalloc((2 * (size_t)k + 8) * 4),
		 m = 0;

	for (uint32_t v = 1; v < k + 3; v++) {
		t[m] = 0, h[m++] = v;
		t[m] = v, h[m++] = 0;
	}
	for (uint32_t v = 1; v < 3; v++)
		t[m] = v, h[m++] = v;
	struct graph *g = graph_from_arcs(k + 3, m, t, h, "hub");
	free(t);
	free(h);
	return g;
}

int main(int argc, char **argv)
{
	static const char *const specs[] = {"genkautz:64,4",
					    "genkautz:1024,4",
					    "genkautz:1024,4 less 0>1023",
					    "genkautz:4096,4",
					    "torus:32x32",
					    "torus:8x8x16",
					    "hypercube:10",
					    "kautz:4,5",
					    "circulant:1024:31,32",
					    "debruijn:2,12",
					    "line^2(circulant:64:6,7)"};
	static const char *const modelw[] = {"only-nvlink-2",  "all-links-2",	"no-nvlink-2",
					     "only-nvlink-16", "all-links-16",	"no-nvlink-16",
					     "all-links-32",   "only-nvlink-32"};

	if (argc > 1)
		repeat = atoi(argv[1]) > 0 ? atoi(argv[1]) : 1;
	printf("nauty and bliss on the same encoded digraphs (ms, best of %d)\n\n", repeat);
	printf("| graph | nodes | encoded | |Aut| nauty | |Aut| bliss | nauty gens | nauty ms | "
	       "bliss gens | bliss ms | encode ms | iso nauty ms | iso bliss ms |\n");
	printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
	for (size_t i = 0; i < sizeof(specs) / sizeof(specs[0]); i++) {
		struct graph *g = build(specs[i]);

		row(specs[i], g, true);
		graph_free(g);
	}
	struct graph *g = hub(200);
	row("hub, 200 leaves", g, true);
	graph_free(g);

	printf(
	    "\nofc with nauty: the group listed (4,096 at most), a shuffled copy relabelled\n\n");
	printf("| graph | listed of |Aut| | node orbits | listing s | relabel kept | by "
	       "isomorphism | relabel s |\n|---|---:|---:|---:|---:|---|---:|\n");
	for (size_t i = 0; i < sizeof(specs) / sizeof(specs[0]); i++)
		use_row(specs[i]);

	printf("\nmodel W: the server group ofc builds (fluid_group_blocks, nauty inside)\n\n");
	printf("| config | group order | ms |\n|---|---:|---:|\n");
	for (size_t i = 0; i < sizeof(modelw) / sizeof(modelw[0]); i++)
		modelw_row(modelw[i], false);
	printf("\nmodel W: the whole network's digraph (fluid_group_detect's input)\n\n");
	printf("| graph | nodes | encoded | |Aut| nauty | |Aut| bliss | nauty gens | nauty ms | "
	       "bliss gens | bliss ms | encode ms | iso nauty ms | iso bliss ms |\n");
	printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
	for (size_t i = 0; i < sizeof(modelw) / sizeof(modelw[0]); i++)
		modelw_row(modelw[i], true);
	return 0;
}
