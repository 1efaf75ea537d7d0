/* `ofc show FILE --dot`: the fabric as Graphviz. Hosts are records with
 * one field per NIC port; switches and rings are boxes, each in its own
 * colour; a circuit is an arc from the transmitting host port to the
 * receiving one in its switch's colour, and a dotted line joins every host
 * to each switch or ring it is cabled to. Every node has a pinned position
 * (neato -n style, inches): hosts on the topology's grid when it is a
 * torus, else on a circle; switches and rings beside or inside them. The
 * layout is fixed so two fabrics of the same shape draw alike. */
#include "controller/export/export.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const palette[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd",
				      "#ff7f0e", "#8c564b", "#e377c2", "#17becf"};

/* A name inside a record label or a quoted ID: escape what Graphviz reads
 * as structure. */
static void put_escaped(FILE *out, const char *s)
{
	for (; *s; s++) {
		if (strchr("{}|<>\"\\ ", *s))
			fputc('\\', out);
		fputc(*s, out);
	}
}

static void host_pos(const struct fabric *f, uint32_t h, double *x, double *y)
{
	double gx, gy;

	/* Records are wider than tall: spread the grid by port count. */
	if (f->graph && f->graph->n == f->nhosts && topo_grid_pos(f->graph, h, &gx, &gy)) {
		double sx = 1.0 + 0.35 * (f->hosts[h].ports ? f->hosts[h].ports : 1);

		*x = gx * sx;
		*y = gy * 1.1;
		return;
	}
	double r = fmax(2.5, 1.6 * f->nhosts / (2 * M_PI));
	double a = 2 * M_PI * h / (f->nhosts ? f->nhosts : 1);

	*x = r * sin(a);
	*y = r * cos(a);
}

static void write_hosts(const struct fabric *f, FILE *out, double *maxx)
{
	*maxx = 0;
	for (uint32_t h = 0; h < f->nhosts; h++) {
		const struct host *ho = &f->hosts[h];
		double x, y;

		host_pos(f, h, &x, &y);
		*maxx = fmax(*maxx, x);
		fprintf(out, "  \"h%u\" [label=\"", h);
		put_escaped(out, ho->name);
		if (ho->ports) {
			fprintf(out, "|{");
			for (uint32_t p = 0; p < ho->ports; p++)
				fprintf(out, "%s<p%u>%u", p ? "|" : "", p, p);
			fprintf(out, "}");
		}
		fprintf(out, "\", pos=\"%.2f,%.2f!\"];\n", x, y);
	}
}

/* Switches stand in a column right of the hosts; rings sit inside. */
static void write_devices(const struct fabric *f, FILE *out, double maxx)
{
	for (uint32_t s = 0; s < f->nswitches; s++) {
		const struct fswitch *sw = &f->switches[s];
		const char *c = palette[s % ARRAY_SIZE(palette)];
		uint32_t nc = 0;

		for (uint32_t i = 0; i < f->ncircuits; i++)
			nc += f->circuits[i].sw == s;
		fprintf(out,
			"  \"s%u\" [shape=box, style=\"bold,rounded\", color=\"%s\", "
			"fontcolor=\"%s\", label=\"",
			s, c, c);
		put_escaped(out, sw->name);
		fprintf(out, "\\n%s, %u ports\\n%u circuit%s\", pos=\"%.2f,%.2f!\"];\n",
			sw->kind == SWITCH_PATCH_PANEL ? "patch panel" : "OCS", sw->ports, nc,
			nc == 1 ? "" : "s", maxx + 3.0, -1.5 * s);
	}
	for (uint32_t r = 0; r < f->nrings; r++) {
		const struct ring *ri = &f->rings[r];

		fprintf(out, "  \"r%u\" [shape=doublecircle, color=\"#555555\", label=\"", r);
		put_escaped(out, ri->name);
		fprintf(out, "\\nWDM ring\\n%u x %u wavelengths\", pos=\"%.2f,%.2f!\"];\n",
			ri->fibres, ri->wavelengths, 0.0, -1.2 * r);
	}
}

/* One dotted line per (host, switch) cabled together; its tooltip names
 * the switch ports. */
static void write_wiring(const struct fabric *f, FILE *out)
{
	for (uint32_t s = 0; s < f->nswitches; s++)
		for (uint32_t h = 0; h < f->nhosts; h++) {
			uint32_t k = 0;

			for (uint32_t i = 0; i < f->nwiring; i++) {
				const struct attachment *at = &f->wiring[i];

				if (at->sw != s || at->host != h)
					continue;
				if (!k++)
					fprintf(out,
						"  \"s%u\" -> \"h%u\" [dir=none, style=dotted, "
						"color=\"#999999\", tooltip=\"ports",
						s, h);
				fprintf(out, " %u:%u", at->host_port, at->sw_port);
			}
			if (k)
				fprintf(out, "\"];\n");
		}
}

void fabric_write_dot(const struct fabric *f, FILE *out)
{
	double maxx;

	fprintf(out, "digraph \"");
	put_escaped(out, f->name);
	fprintf(out, "\" {\n  graph [layout=neato, splines=true, overlap=true, fontsize=12, "
		     "label=\"");
	put_escaped(out, f->name);
	fprintf(out, ": %u hosts, %u switch%s, %u ring%s", f->nhosts, f->nswitches,
		f->nswitches == 1 ? "" : "es", f->nrings, f->nrings == 1 ? "" : "s");
	if (f->graph) {
		fprintf(out, ", topology ");
		put_escaped(out, f->graph->spec);
		fprintf(out, " (%u circuits)", f->ncircuits);
	}
	fprintf(out, "\"];\n  node [shape=record, fontsize=10, height=0.3];\n"
		     "  edge [arrowsize=0.5];\n");
	write_hosts(f, out, &maxx);
	write_devices(f, out, maxx);
	write_wiring(f, out);
	for (uint32_t r = 0; r < f->nrings; r++)
		for (uint32_t i = 0; i < f->rings[r].nmembers; i++)
			fprintf(
			    out,
			    "  \"r%u\" -> \"h%u\" [dir=none, style=dotted, color=\"#999999\"];\n",
			    r, f->rings[r].members[i]);
	for (uint32_t i = 0; i < f->ncircuits; i++) {
		const struct circuit *c = &f->circuits[i];
		const char *col = palette[c->sw % ARRAY_SIZE(palette)];

		fprintf(out, "  \"h%u\":p%u -> \"h%u\":p%u [color=\"%s\", tooltip=\"", c->src_host,
			c->src_port, c->dst_host, c->dst_port, col);
		put_escaped(out, f->switches[c->sw].name);
		fprintf(out, " in %u -> out %u\"%s];\n", c->in_port, c->out_port,
			c->src_host == c->dst_host ? ", style=dashed" : "");
	}
	fprintf(out, "}\n");
}
