/* Topologies as JSON and Graphviz. */
#include "topo/topo.h"

#include <stdlib.h>

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

void topo_write_dot(FILE *out, const struct graph *g, const struct topo_facts *f)
{
	/* Symmetric graphs print each u -- v once: the arcs u->v with u <= v
	 * (a self-loop is its own reverse and prints once per arc). */
	bool undirected = f->symmetric;

	fprintf(out, "%s \"%s\" {\n", undirected ? "graph" : "digraph", g->spec);
	fprintf(out, "  graph [label=\"%s: %u nodes, degree %u", g->spec, g->n, f->degree);
	if (f->strongly_connected && f->diameter_known)
		fprintf(out, ", diameter %u", f->diameter);
	fprintf(out, "\", layout=%s];\n", g->n <= 64 ? "circo" : "sfdp");
	fprintf(out, "  node [shape=circle, fontsize=10];\n");
	for (uint32_t u = 0; u < g->n; u++)
		for (uint32_t a = g->off[u]; a < g->off[u + 1]; a++) {
			uint32_t v = g->adj[a];

			if (undirected && v < u)
				continue;
			fprintf(out, "  %u %s %u;\n", u, undirected ? "--" : "->", v);
		}
	fprintf(out, "}\n");
}
