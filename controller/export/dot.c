/* Fabrics as Graphviz pictures: `ofc show --dot` (the target's circuits)
 * and `ofc status --dot` (the circuits the devices hold). Hosts stand where
 * `ofc topo --dot` puts the topology's nodes (topo_draw_pos: a torus on its
 * grid, every other family on a circle in node order; a fabric without one
 * topology, partitions or a WDM ring, on a circle in host or ring order),
 * each pinned (neato), so two fabrics of one shape draw alike. Between two
 * hosts one straight line stands for the circuits joining them (an arrow
 * where only one way; a torus's wrap-around links are stubs at the border
 * named after the host they reach), in its partition's colour, else its
 * switch's. Failed hosts, ports and links are red; circuits the target has
 * and the devices lack are dotted grey. Port numbers and switch ports are
 * in the tooltips (SVG): drawn as records with a line per port, 64 hosts
 * were a tangle of crossing curves. */
#include "controller/export/export.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const palette[] = {"#1f77b4", "#2ca02c", "#9467bd", "#ff7f0e",
				      "#8c564b", "#e377c2", "#17becf", "#bcbd22"};
/* Partitions' hosts are filled with the light shade of their colour. */
static const char *const light[] = {"#c6dbef", "#c7e9c0", "#dadaeb", "#fdd0a2",
				    "#d9c3bc", "#f7cfe6", "#bdeef3", "#edeeb0"};
#define RED  "#d62728"
#define GREY "#999999"

/* A name inside a quoted ID or label: escape what Graphviz reads as
 * structure. */
static void put_escaped(FILE *out, const char *s)
{
	for (; *s; s++) {
		if (strchr("\"\\", *s))
			fputc('\\', out);
		fputc(*s, out);
	}
}

/* What one picture holds, beyond the fabric: where each host stands and
 * the topology it is a node of there (the fabric's, its partition's, or
 * none: a circle), which decides how a link is drawn. */
struct picture {
	const struct fabric *f;
	const struct fabric_dot *d;
	double *x, *y;		     /* per host, inches */
	const struct topo_draw **hg; /* per host: its topology's layout, or NULL */
	uint32_t *node;		     /* per host: its node in hg */
	struct topo_draw whole;	     /* the fabric's topology's */
	struct topo_draw *drawn;     /* each partition's topology's */
	struct graph **owned;	     /* the partitions' topologies */
	int32_t *part;		     /* per host: its partition, -1 none */
	bool points;		     /* too many hosts to name: points */
	uint32_t stride;	     /* the circuits of every stride-th host drawn */
};

static void host_pos(const struct picture *p, uint32_t h, double *x, double *y)
{
	*x = p->x[h];
	*y = p->y[h];
}

static bool port_failed(const struct host *ho, uint32_t port)
{
	for (uint32_t i = 0; i < ho->nfailed_ports; i++)
		if (ho->failed_ports[i] == port)
			return true;
	return false;
}

static bool link_failed(const struct fabric *f, uint32_t a, uint32_t b)
{
	for (uint32_t i = 0; i < f->topology.nfailed_links; i++) {
		int x = fabric_find_host(f, f->topology.failed_links[i].a);
		int y = fabric_find_host(f, f->topology.failed_links[i].b);

		if (((uint32_t)x == a && (uint32_t)y == b) ||
		    ((uint32_t)x == b && (uint32_t)y == a))
			return true;
	}
	return false;
}

/* A circuit that carries nothing: a failed host or port at either end, or
 * a failed link between them. */
static bool circuit_failed(const struct fabric *f, const struct circuit *c)
{
	const struct host *s = &f->hosts[c->src_host], *t = &f->hosts[c->dst_host];

	return s->failed || t->failed || port_failed(s, c->src_port) ||
	       port_failed(t, c->dst_port) || link_failed(f, c->src_host, c->dst_host);
}

/* hosts[0..n-1] on a circle in that order, centred at (cx, 0). */
static void circle(struct picture *p, const uint32_t *hosts, uint32_t n, double cx)
{
	double gap = p->points ? 0.1 : 0.9, r = fmax(2.0, n * gap / (2 * M_PI));

	for (uint32_t i = 0; i < n; i++) {
		double a = 2 * M_PI * i / n;

		p->x[hosts[i]] = cx + r * sin(a);
		p->y[hosts[i]] = r * cos(a);
	}
}

/* Each partition drawn as its own topology is, side by side (hosts of no
 * partition on a circle after them); a partition without a topology, or
 * of single ports, on a circle. */
static void layout_partitions(struct picture *p)
{
	const struct fabric *f = p->f;
	uint32_t *left = xmalloc((f->nhosts + 1) * sizeof(uint32_t)), nleft = 0;
	double cx = 0;

	p->owned = xcalloc(f->npartitions + 1, sizeof(*p->owned));
	p->drawn = xcalloc(f->npartitions + 1, sizeof(*p->drawn));
	for (uint32_t i = 0; i < f->npartitions; i++) {
		const struct partition *pa = &f->partitions[i];
		struct ofc_error err = {0};
		struct graph *g = NULL;
		double lo = INFINITY, hi = -INFINITY;

		if (!pa->member_host || !pa->nmembers)
			continue;
		if (pa->topology.present &&
		    fabric_topo_build(f, pa->topology.spec, &g, &err) == 0 &&
		    g->n == pa->nmembers) {
			p->owned[i] = g;
			topo_draw_of(g, &p->drawn[i]);
		} else {
			graph_free(g);
		}
		if (!p->owned[i])
			circle(p, pa->member_host, pa->nmembers, 0);
		for (uint32_t m = 0; m < pa->nmembers; m++) {
			uint32_t h = pa->member_host[m];

			if (p->owned[i]) {
				topo_draw_pos(&p->drawn[i], m, &p->x[h], &p->y[h]);
				p->hg[h] = &p->drawn[i];
				p->node[h] = m;
			}
			lo = fmin(lo, p->x[h]);
			hi = fmax(hi, p->x[h]);
		}
		/* shift the block right of the last */
		for (uint32_t m = 0; m < pa->nmembers; m++)
			p->x[pa->member_host[m]] += cx - lo;
		cx += hi - lo + 2.5;
	}
	for (uint32_t h = 0; h < f->nhosts; h++)
		if (p->part[h] < 0)
			left[nleft++] = h;
	if (nleft)
		circle(p, left, nleft, cx + fmax(2.0, nleft * 0.9 / (2 * M_PI)));
	free(left);
}

static void layout(struct picture *p)
{
	const struct fabric *f = p->f;
	uint32_t n = f->nhosts, *order = xmalloc((n + 1) * sizeof(uint32_t));

	p->x = xcalloc(n + 1, sizeof(double));
	p->y = xcalloc(n + 1, sizeof(double));
	p->hg = xcalloc(n + 1, sizeof(*p->hg));
	p->node = xcalloc(n + 1, sizeof(uint32_t));
	p->part = xmalloc((n + 1) * sizeof(int32_t));
	p->points = n > TOPO_DOT_LABELS;
	for (uint32_t h = 0; h < n; h++) {
		p->part[h] = -1;
		order[h] = h;
	}
	for (uint32_t i = 0; i < f->npartitions; i++)
		for (uint32_t k = 0; k < f->partitions[i].nmembers; k++)
			if (f->partitions[i].member_host)
				p->part[f->partitions[i].member_host[k]] = (int32_t)i;
	if (f->graph && f->graph->n == n) {
		topo_draw_of(f->graph, &p->whole);
		for (uint32_t h = 0; h < n; h++) {
			topo_draw_pos(&p->whole, h, &p->x[h], &p->y[h]);
			p->hg[h] = &p->whole;
			p->node[h] = h;
		}
	} else if (f->npartitions) {
		layout_partitions(p);
	} else {
		/* a WDM ring in ring order, else hosts in config order */
		if (f->nrings && f->rings[0].nmembers == n)
			memcpy(order, f->rings[0].members, n * sizeof(uint32_t));
		circle(p, order, n, 0);
	}
	free(order);
	/* as `ofc topo --dot` thins a large topology's links */
	uint32_t k = p->d->ncircuits + p->d->nmissing, half = TOPO_DOT_MAX_LINKS / 2;

	p->stride = k > TOPO_DOT_MAX_LINKS ? (k + half - 1) / half : 1;
}

static void picture_free(struct picture *p)
{
	for (uint32_t i = 0; p->owned && i < p->f->npartitions; i++)
		graph_free(p->owned[i]);
	free(p->owned);
	free(p->drawn);
	free(p->x);
	free(p->y);
	free(p->hg);
	free(p->node);
	free(p->part);
}

static void write_hosts(const struct picture *p, FILE *out, double *maxx)
{
	const struct fabric *f = p->f;

	*maxx = 0;
	for (uint32_t h = 0; h < f->nhosts; h++) {
		const struct host *ho = &f->hosts[h];
		bool bad = ho->failed || ho->nfailed_ports;
		double x, y;

		host_pos(p, h, &x, &y);
		*maxx = fmax(*maxx, x);
		fprintf(out, "  \"h%u\" [label=\"", h);
		if (!p->points) {
			put_escaped(out, ho->name);
			if (ho->failed)
				fprintf(out, "\\nfailed");
			for (uint32_t i = 0; i < ho->nfailed_ports; i++)
				fprintf(out, "%s%u", i ? "," : "\\nport ", ho->failed_ports[i]);
			if (ho->nfailed_ports)
				fprintf(out, " failed");
		}
		fprintf(out, "\", tooltip=\"");
		put_escaped(out, ho->name);
		fprintf(out, ": %u port%s%s\"", ho->ports, ho->ports == 1 ? "" : "s",
			ho->failed ? ", failed" : "");
		if (p->part[h] >= 0)
			fprintf(out, ", fillcolor=\"%s\"",
				light[(uint32_t)p->part[h] % ARRAY_SIZE(light)]);
		if (bad)
			fprintf(out, ", color=\"" RED "\", fontcolor=\"" RED "\", penwidth=2");
		if (ho->failed)
			fprintf(out, ", style=\"rounded,filled,dashed\"");
		if (p->points && h % p->stride == 0)
			fprintf(out, ", width=0.14");
		fprintf(out, ", pos=\"%.2f,%.2f!\"];\n", x, y);
	}
}

/* Switches stand in a column right of the hosts, rings in the middle;
 * partitions are named in a legend under the switches. */
static void write_devices(const struct picture *p, FILE *out, double maxx)
{
	const struct fabric *f = p->f;
	double y = 0;

	for (uint32_t s = 0; s < f->nswitches; s++, y -= 1.2) {
		const struct fswitch *sw = &f->switches[s];
		const char *c = palette[s % ARRAY_SIZE(palette)];
		uint32_t nc = 0;

		for (uint32_t i = 0; i < p->d->ncircuits; i++)
			nc += p->d->circuits[i].sw == s;
		fprintf(out,
			"  \"s%u\" [shape=box, style=\"bold,rounded\", color=\"%s\", "
			"fontcolor=\"%s\", label=\"",
			s, c, c);
		put_escaped(out, sw->name);
		fprintf(out, "\\n%s, %u ports\\n%u circuit%s",
			sw->kind == SWITCH_PATCH_PANEL ? "patch panel" : "OCS", sw->ports, nc,
			nc == 1 ? "" : "s");
		if (p->d->unreachable && p->d->unreachable[s])
			fprintf(out, "\\nUNREACHABLE");
		fprintf(out, "\", pos=\"%.2f,%.2f!\"];\n", maxx + 2.5, y);
	}
	for (uint32_t i = 0; i < f->npartitions; i++, y -= 0.6) {
		fprintf(out,
			"  \"p%u\" [shape=box, style=\"rounded,filled\", fillcolor=\"%s\", "
			"color=\"%s\", label=\"partition ",
			i, light[i % ARRAY_SIZE(light)], palette[i % ARRAY_SIZE(palette)]);
		put_escaped(out, f->partitions[i].name);
		fprintf(out, "\", pos=\"%.2f,%.2f!\"];\n", maxx + 2.5, y);
	}
	for (uint32_t r = 0; r < f->nrings; r++) {
		const struct ring *ri = &f->rings[r];

		fprintf(out,
			"  \"r%u\" [shape=doublecircle, style=solid, color=\"#555555\", label=\"",
			r);
		put_escaped(out, ri->name);
		fprintf(out, "\\nWDM ring\\n%u x %u wavelengths\", pos=\"%.2f,%.2f!\"];\n",
			ri->fibres, ri->wavelengths, 0.0, -1.2 * r);
		/* the fibre, node to node */
		for (uint32_t i = 0; i < ri->nmembers; i++)
			fprintf(out,
				"  \"h%u\" -> \"h%u\" [dir=none, color=\"#555555\", penwidth=3, "
				"tooltip=\"%s\"];\n",
				ri->members[i], ri->members[(i + 1) % ri->nmembers], ri->name);
	}
}

/* The circuits between hosts a and b (a < b), both ways, among n. */
struct pair {
	uint32_t a, b;
	uint32_t ab, ba; /* circuits each way */
	const struct circuit *first;
	bool failed, missing;
};

static int cmp_pair(const void *x, const void *y)
{
	const struct pair *p = x, *q = y;

	if (p->a != q->a)
		return p->a < q->a ? -1 : 1;
	if (p->b != q->b)
		return p->b < q->b ? -1 : 1;
	return (p->missing > q->missing) - (p->missing < q->missing);
}

/* Circuits grouped by host pair (missing ones apart), sorted. */
static struct pair *pairs_of(const struct picture *p, uint32_t *np)
{
	const struct fabric_dot *d = p->d;
	size_t n = (size_t)d->ncircuits + d->nmissing, k = 0;
	struct pair *v = xmalloc((n + 1) * sizeof(*v));

	for (size_t i = 0; i < n; i++) {
		bool miss = i >= d->ncircuits;
		const struct circuit *c = miss ? &d->missing[i - d->ncircuits] : &d->circuits[i];
		bool fwd = c->src_host <= c->dst_host;

		v[k++] = (struct pair){.a = fwd ? c->src_host : c->dst_host,
				       .b = fwd ? c->dst_host : c->src_host,
				       .ab = fwd,
				       .ba = !fwd,
				       .first = c,
				       .failed = circuit_failed(p->f, c),
				       .missing = miss};
	}
	qsort(v, k, sizeof(*v), cmp_pair);
	uint32_t m = 0;

	for (size_t i = 0; i < k; i++) {
		if (m && v[m - 1].a == v[i].a && v[m - 1].b == v[i].b &&
		    v[m - 1].missing == v[i].missing) {
			v[m - 1].ab += v[i].ab;
			v[m - 1].ba += v[i].ba;
			v[m - 1].failed |= v[i].failed;
			continue;
		}
		v[m++] = v[i];
	}
	*np = m;
	return v;
}

static const char *pair_colour(const struct picture *p, const struct pair *q)
{
	if (q->missing)
		return GREY;
	if (q->failed)
		return RED;
	if (p->part[q->a] >= 0 && p->part[q->a] == p->part[q->b])
		return palette[(uint32_t)p->part[q->a] % ARRAY_SIZE(palette)];
	return p->f->npartitions ? "#000000" : palette[q->first->sw % ARRAY_SIZE(palette)];
}

static void pair_attrs(const struct picture *p, const struct pair *q, bool back, FILE *out)
{
	const struct circuit *c = q->first;

	fprintf(out, "[color=\"%s\", dir=%s", pair_colour(p, q),
		q->ab && q->ba ? "none" : (q->ab != back ? "forward" : "back"));
	if (q->missing)
		fprintf(out, ", style=dotted");
	else if (q->failed)
		fprintf(out, ", style=dashed, penwidth=2");
	fprintf(out, ", tooltip=\"");
	put_escaped(out, p->f->hosts[c->src_host].name);
	fprintf(out, ":%u -> ", c->src_port);
	put_escaped(out, p->f->hosts[c->dst_host].name);
	fprintf(out, ":%u via ", c->dst_port);
	put_escaped(out, p->f->switches[c->sw].name);
	fprintf(out, " in %u -> out %u%s%s (%u circuit%s)\"];\n", c->in_port, c->out_port,
		q->failed ? ", failed" : "", q->missing ? ", missing on the device" : "",
		q->ab + q->ba, q->ab + q->ba == 1 ? "" : "s");
}

static void write_links(const struct picture *p, FILE *out)
{
	uint32_t n, stubs = 0;
	struct pair *v = pairs_of(p, &n);

	for (uint32_t i = 0; i < n; i++) {
		const struct pair *q = &v[i];
		double dx, dy, x, y;

		if (q->a == q->b) /* a port looped back: said on the host */
			continue;
		if (!(q->ab && q->a % p->stride == 0) && !(q->ba && q->b % p->stride == 0))
			continue;
		if (p->hg[q->a] != p->hg[q->b] || !p->hg[q->a] ||
		    !topo_draw_stub(p->hg[q->a], p->node[q->a], p->node[q->b], &dx, &dy)) {
			fprintf(out, "  \"h%u\" -> \"h%u\" ", q->a, q->b);
			pair_attrs(p, q, false, out);
			continue;
		}
		for (int e = 0; e < 2; e++) {
			uint32_t from = e ? q->b : q->a, to = e ? q->a : q->b;

			topo_draw_stub(p->hg[from], p->node[from], p->node[to], &dx, &dy);
			host_pos(p, from, &x, &y);
			fprintf(out, "  \"w%u\" [shape=plaintext, fontsize=8, label=\"", stubs);
			put_escaped(out, p->f->hosts[to].name);
			fprintf(out, "\", pos=\"%.2f,%.2f!\"];\n", x + 0.6 * dx, y + 0.6 * dy);
			fprintf(out, "  \"h%u\" -> \"w%u\" ", from, stubs++);
			pair_attrs(p, q, e == 1, out);
		}
	}
	free(v);
}

void fabric_write_dot_circuits(const struct fabric *f, const struct fabric_dot *d, FILE *out)
{
	struct picture p = {.f = f, .d = d};
	double maxx;

	layout(&p);
	fprintf(out, "digraph \"");
	put_escaped(out, f->name);
	fprintf(out, "\" {\n  graph [layout=neato, splines=false, outputorder=edgesfirst, "
		     "fontsize=12, label=\"");
	put_escaped(out, f->name);
	fprintf(out, ": %u hosts", f->nhosts);
	if (f->npartitions)
		fprintf(out, ", %u partition%s", f->npartitions, f->npartitions == 1 ? "" : "s");
	if (f->graph) {
		fprintf(out, ", topology ");
		put_escaped(out, f->graph->spec);
	}
	if (f->nswitches)
		fprintf(out, "\\n%u circuits %s", d->ncircuits, d->what);
	if (d->nmissing)
		fprintf(out, "; %u of the target's missing (dotted)", d->nmissing);
	if (p.stride > 1)
		fprintf(out, "\\nthose of every %uth host drawn", p.stride);
	fprintf(out, "\"];\n");
	if (p.points)
		fprintf(out, "  node [shape=point, width=0.08, style=filled];\n");
	else
		fprintf(out, "  node [shape=box, style=\"rounded,filled\", fillcolor=white, "
			     "fontsize=9, height=0.3, width=0.4, margin=\"0.05,0.02\"];\n");
	fprintf(out, "  edge [arrowsize=0.4];\n");
	write_hosts(&p, out, &maxx);
	write_devices(&p, out, maxx);
	write_links(&p, out);
	fprintf(out, "}\n");
	picture_free(&p);
}

void fabric_write_dot(const struct fabric *f, FILE *out)
{
	struct fabric_dot d = {
	    .circuits = f->circuits, .ncircuits = f->ncircuits, .what = "(the target)"};

	fabric_write_dot_circuits(f, &d, out);
}
