/* Topologies as JSON and Graphviz. */
#include "topo/topo.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void topo_write_json(struct json_writer *w, const struct graph *g, const struct topo_facts *f,
		     const struct port_map *pm)
{
	jw_obj_begin(w);
	jw_key(w, "spec");
	jw_str(w, g->spec);
	jw_key(w, "nodes");
	jw_uint(w, g->n);
	jw_key(w, "degree");
	jw_uint(w, f->degree);
	jw_key(w, "regular");
	jw_bool(w, f->regular);
	jw_key(w, "edges");
	jw_uint(w, g->m);
	jw_key(w, "symmetric");
	jw_bool(w, f->symmetric);
	jw_key(w, "strongly_connected");
	jw_bool(w, f->strongly_connected);
	jw_key(w, "diameter");
	if (f->strongly_connected && f->diameter_known)
		jw_uint(w, f->diameter);
	else
		jw_null(w);
	jw_key(w, "moore_diameter");
	if (f->moore_diameter != UINT32_MAX)
		jw_uint(w, f->moore_diameter);
	else
		jw_null(w);
	jw_key(w, "self_loops");
	jw_uint(w, f->self_loops);
	jw_key(w, "parallel_edges");
	jw_uint(w, f->parallel_arcs);
	jw_key(w, "vertex_transitive");
	jw_bool(w, g->vertex_transitive);
	jw_key(w, "edge_list");
	jw_arr_begin(w);
	for (uint32_t u = 0; u < g->n; u++)
		for (uint32_t a = g->off[u]; a < g->off[u + 1]; a++) {
			jw_arr_begin(w);
			jw_uint(w, u);
			jw_uint(w, g->adj[a]);
			jw_arr_end(w);
		}
	jw_arr_end(w);
	if (pm) {
		jw_key(w, "ports");
		jw_arr_begin(w);
		for (uint32_t j = 0; j < pm->d; j++) {
			jw_arr_begin(w);
			for (uint32_t u = 0; u < pm->n; u++)
				jw_uint(w, pm->to[(size_t)j * pm->n + u]);
			jw_arr_end(w);
		}
		jw_arr_end(w);
		jw_key(w, "self_loop_ports");
		jw_arr_begin(w);
		for (uint32_t k = 0; k < pm->nself; k++) {
			jw_obj_begin(w);
			jw_key(w, "node");
			jw_uint(w, pm->self_node[k]);
			jw_key(w, "port");
			jw_uint(w, pm->self_port[k]);
			jw_obj_end(w);
		}
		jw_arr_end(w);
	}
	jw_obj_end(w);
}

/* The dimensions of a plain torus spec ("torus:4x8x2"), 0 for anything
 * else: nodes are x0 + A0 (x1 + A1 (x2 + ...)) as topo_torus numbers them. */
static uint32_t torus_dims(const struct graph *g, uint32_t *dims, uint32_t max)
{
	const char *p = g->spec;
	uint32_t k = 0;
	uint64_t n = 1;

	if (strncmp(p, "torus:", 6) != 0)
		return 0;
	p += 6;
	while (k < max) {
		char *end;
		unsigned long v = strtoul(p, &end, 10);

		if (end == p || v < 2 || v > g->n)
			return 0;
		dims[k++] = (uint32_t)v;
		n *= v;
		if (*end == '\0')
			break;
		if (*end != 'x')
			return 0;
		p = end + 1;
	}
	return n == g->n ? k : 0;
}

/* Where node u of a torus sits: x0 across, x1 down, and the slices of
 * higher dimensions side by side, one column apart. */
static void torus_pos(const uint32_t *dims, uint32_t k, uint32_t u, double *x, double *y)
{
	uint32_t x0 = u % dims[0], rest = u / dims[0];
	uint32_t x1 = k > 1 ? rest % dims[1] : 0, slice = k > 1 ? rest / dims[1] : 0;

	*x = 1.2 * ((double)x0 + (double)slice * (dims[0] + 1));
	*y = x1 ? -1.2 * (double)x1 : 0;
}

bool topo_grid_pos(const struct graph *g, uint32_t u, double *x, double *y)
{
	uint32_t dims[32], k = torus_dims(g, dims, 32);

	if (!k || u >= g->n)
		return false;
	torus_pos(dims, k, u, x, y);
	return true;
}

void topo_write_dot(FILE *out, const struct graph *g, const struct topo_facts *f)
{
	/* Symmetric graphs print each u -- v once: the arcs u->v with u <= v
	 * (a self-loop is its own reverse and prints once per arc). */
	bool undirected = f->symmetric;
	uint32_t dims[32], k = torus_dims(g, dims, 32);

	fprintf(out, "%s \"%s\" {\n", undirected ? "graph" : "digraph", g->spec);
	fprintf(out, "  graph [label=\"%s: %u nodes, degree %u", g->spec, g->n, f->degree);
	if (f->strongly_connected && f->diameter_known)
		fprintf(out, ", diameter %u", f->diameter);
	/* A torus is drawn as the grid it is (neato keeps pinned positions);
	 * its wrap-around links are dashed curves. Other families on a circle
	 * (circo) when small, else a force layout. */
	if (k)
		fprintf(out, "\", layout=neato, splines=curved];\n");
	else
		fprintf(out, "\", layout=%s];\n", g->n <= 64 ? "circo" : "sfdp");
	fprintf(out, "  node [shape=circle, fontsize=10];\n");
	for (uint32_t u = 0; k && u < g->n; u++) {
		double x, y;

		torus_pos(dims, k, u, &x, &y);
		fprintf(out, "  %u [pos=\"%.2f,%.2f!\"];\n", u, x, y);
	}
	for (uint32_t u = 0; u < g->n; u++)
		for (uint32_t a = g->off[u]; a < g->off[u + 1]; a++) {
			uint32_t v = g->adj[a];
			bool wrap = false;

			if (undirected && v < u)
				continue;
			if (k) {
				double ux, uy, vx, vy;

				torus_pos(dims, k, u, &ux, &uy);
				torus_pos(dims, k, v, &vx, &vy);
				wrap = fabs(ux - vx) + fabs(uy - vy) > 1.3;
			}
			fprintf(out, "  %u %s %u%s;\n", u, undirected ? "--" : "->", v,
				wrap ? " [style=dashed]" : "");
		}
	fprintf(out, "}\n");
}
