// bliss (Junttila and Kaski) beside nauty for bench/symmetry.c:
// the same coloured digraphs topo/symmetry.c hands nauty, given to bliss's
// Digraph (its C interface has undirected graphs only). For the benchmark
// alone: ofc itself calls nauty (bench/results/symmetry.md, "Symmetry through nauty").
#include <bliss/graph.hh>

#include <cstddef>
#include <cstdint>
#include <cstring>

extern "C" {
#include "bench/bliss_shim.h"
}

namespace {

bliss::Digraph *build(const struct bliss_in *in)
{
	bliss::Digraph *g = new bliss::Digraph(0);

	for (uint32_t v = 0; v < in->n; v++)
		g->add_vertex(in->cell[v]);
	for (uint32_t v = 0; v < in->n; v++)
		for (int i = 0; i < in->deg[v]; i++)
			g->add_edge(v, (unsigned)in->adj[in->off[v] + i]);
	return g;
}

struct gens {
	uint32_t count;
};

void on_gen(void *p, unsigned int, const unsigned int *)
{
	static_cast<gens *>(p)->count++;
}

} // namespace

extern "C" void bliss_shim_automorphisms(const struct bliss_in *in, struct bliss_out *out)
{
	bliss::Digraph *g = build(in);
	bliss::Stats st;
	gens gs = {0};

	g->find_automorphisms(st, on_gen, &gs);
	out->ngens = gs.count;
	out->order = (double)st.get_group_size_approx();
	delete g;
}

extern "C" int bliss_shim_isomorphic(const struct bliss_in *a, const struct bliss_in *b,
				     uint32_t *map)
{
	bliss::Digraph *ga = build(a), *gb = build(b);
	bliss::Stats sa, sb;
	gens gs = {0};
	const unsigned int *la = ga->canonical_form(sa, on_gen, &gs);
	bliss::Digraph *ca = ga->permute(la);
	const unsigned int *lb = gb->canonical_form(sb, on_gen, &gs);
	bliss::Digraph *cb = gb->permute(lb);
	int same = ca->cmp(*cb) == 0;

	if (same) {
		// la[v]: v's place in the canonical graph; map a's v to b's
		// vertex at the same place
		uint32_t *inv = new uint32_t[b->n];

		for (uint32_t v = 0; v < b->n; v++)
			inv[lb[v]] = v;
		for (uint32_t v = 0; v < a->n; v++)
			map[v] = inv[la[v]];
		delete[] inv;
	}
	delete ca;
	delete cb;
	delete ga;
	delete gb;
	return same;
}
