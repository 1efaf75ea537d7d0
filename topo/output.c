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

void topo_draw_of(const struct graph *g, struct topo_draw *d)
{
	struct topo_tree *t = NULL;
	struct ofc_error err = {0};
	const uint32_t *dims;

	*d = (struct topo_draw){.g = g};
	/* Only a spec that starts as a torus's can be one: any other graph is
	 * not built again for its tree. */
	if (!g->spec || strncmp(g->spec, "torus:", 6) != 0 ||
	    topo_build_tree(g->spec, NULL, &t, &err) < 0)
		return;
	d->k = topo_torus_dims(t, &dims);
	if (d->k > ARRAY_SIZE(d->dims))
		d->k = 0;
	memcpy(d->dims, dims, d->k * sizeof(*dims));
	topo_tree_free(t);
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

bool topo_grid_pos(const struct topo_draw *d, uint32_t u, double *x, double *y)
{
	if (!d->k || u >= d->g->n)
		return false;
	torus_pos(d->dims, d->k, u, x, y);
	return true;
}

void topo_draw_pos(const struct topo_draw *d, uint32_t u, double *x, double *y)
{
	const struct graph *g = d->g;

	if (topo_grid_pos(d, u, x, y))
		return;
	/* 0.9 in apart on the circle for a labelled node, 0.1 for a point */
	double gap = g->n <= TOPO_DOT_LABELS ? 0.9 : 0.1;
	double r = fmax(2.0, g->n * gap / (2 * M_PI)), a = 2 * M_PI * u / (g->n ? g->n : 1);

	*x = r * sin(a);
	*y = r * cos(a);
}

bool topo_draw_stub(const struct topo_draw *t, uint32_t u, uint32_t v, double *dx, double *dy)
{
	const uint32_t *dims = t->dims, k = t->k;
	uint32_t cu[32], cv[32], d = UINT32_MAX;

	if (!k || u >= t->g->n || v >= t->g->n || u == v)
		return false;
	for (uint32_t i = 0, a = u, b = v; i < k; i++) {
		cu[i] = a % dims[i];
		cv[i] = b % dims[i];
		a /= dims[i];
		b /= dims[i];
		if (cu[i] != cv[i])
			d = d == UINT32_MAX ? i : UINT32_MAX - 1;
	}
	if (d >= k) /* not a torus link: no stub */
		return false;
	uint32_t lo = cu[d] < cv[d] ? cu[d] : cv[d], hi = cu[d] ^ cv[d] ^ lo;

	if (d < 2 && hi - lo == 1)
		return false; /* neighbours on the grid */
	if (d >= 2) {
		double s = cv[d] > cu[d] ? M_SQRT1_2 : -M_SQRT1_2;

		*dx = s;
		*dy = s;
		return true;
	}
	/* a wrap-around: out of the side u sits on (x0 grows to the right,
	 * x1 downwards) */
	double out = cu[d] == lo ? -1 : 1;

	*dx = d == 0 ? out : 0;
	*dy = d == 1 ? -out : 0;
	return true;
}

uint32_t topo_draw_stride(const struct graph *g)
{
	/* at most half the limit, so that a symmetric graph's other ends fit */
	uint32_t half = TOPO_DOT_MAX_LINKS / 2;

	return g->m <= TOPO_DOT_MAX_LINKS ? 1 : (g->m + half - 1) / half;
}

void topo_write_dot(FILE *out, const struct graph *g, const struct topo_facts *f)
{
	/* Symmetric graphs print each u -- v once: the arcs u->v with u <= v
	 * (a self-loop is its own reverse and prints once per arc). */
	bool undirected = f->symmetric, points = g->n > TOPO_DOT_LABELS;
	uint32_t stride = topo_draw_stride(g), stubs = 0;
	struct topo_draw d;

	topo_draw_of(g, &d);
	fprintf(out, "%s \"%s\" {\n", undirected ? "graph" : "digraph", g->spec);
	fprintf(out, "  graph [label=\"%s: %u nodes, degree %u", g->spec, g->n, f->degree);
	if (f->strongly_connected && f->diameter_known)
		fprintf(out, ", diameter %u", f->diameter);
	if (stride > 1)
		fprintf(out, "\\nthe links of every %uth node drawn (of %u links)", stride, g->m);
	/* Pinned positions (neato) and straight lines: a torus is its grid,
	 * the rest a circle in node order, where the chords show the
	 * generators; a force layout of 64 nodes was a tangle. */
	fprintf(out, "\", layout=neato, splines=false, outputorder=edgesfirst];\n");
	if (points)
		fprintf(out, "  node [shape=point, width=0.06];\n");
	else
		fprintf(out, "  node [shape=circle, fontsize=10, width=0.4, fixedsize=true];\n");
	fprintf(out, "  edge [arrowsize=0.4];\n");
	for (uint32_t u = 0; u < g->n; u++) {
		double x, y;

		topo_draw_pos(&d, u, &x, &y);
		fprintf(out, "  %u [pos=\"%.2f,%.2f!\"%s];\n", u, x, y,
			points && u % stride == 0 ? ", shape=circle, width=0.12" : "");
	}
	for (uint32_t u = 0; u < g->n; u += stride)
		for (uint32_t a = g->off[u]; a < g->off[u + 1]; a++) {
			uint32_t v = g->adj[a];
			double dx, dy, x, y;

			if (undirected && v < u && v % stride == 0)
				continue;
			if (!topo_draw_stub(&d, u, v, &dx, &dy)) {
				fprintf(out, "  %u %s %u;\n", u, undirected ? "--" : "->", v);
				continue;
			}
			/* a stub from each end, named after the other */
			for (int e = 0; e < (undirected ? 2 : 1); e++) {
				uint32_t from = e ? v : u, to = e ? u : v;

				topo_draw_stub(&d, from, to, &dx, &dy);
				topo_draw_pos(&d, from, &x, &y);
				fprintf(out,
					"  w%u [shape=plaintext, fontsize=8, fixedsize=false, "
					"margin=0, width=0, height=0, "
					"label=\"%u\", pos=\"%.2f,%.2f!\"];\n",
					stubs, to, x + 0.55 * dx, y + 0.55 * dy);
				fprintf(out, "  %u %s w%u [style=dashed];\n", from,
					undirected ? "--" : "->", stubs++);
			}
		}
	fprintf(out, "}\n");
}
