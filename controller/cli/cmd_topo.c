/* ofc topo SPEC: build a topology and print its facts, edges and ports. */
#include "controller/cli/internal.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

static void write_text(FILE *out, const struct graph *g, const struct topo_facts *f,
		       const struct port_map *pm)
{
	fprintf(out, "topology %s\n", g->spec);
	fprintf(out, "  nodes            %u\n", g->n);
	if (f->regular)
		fprintf(out, "  degree           %u (regular)\n", f->degree);
	else
		fprintf(out, "  degree           out %u..%u, in %u..%u (not regular)\n", f->min_out,
			f->max_out, f->min_in, f->max_in);
	fprintf(out, "  links            %u%s\n", g->m,
		f->symmetric ? " (bidirectional: every link has its reverse)" : " (directed)");
	if (!f->strongly_connected)
		fprintf(out, "  diameter         none: not strongly connected\n");
	else if (!f->diameter_known)
		fprintf(out, "  diameter         not computed (above %u nodes)\n",
			TOPO_MAX_APSP_NODES);
	else
		fprintf(out, "  diameter         %u\n", f->diameter);
	if (f->moore_diameter != UINT32_MAX)
		fprintf(out,
			"  Moore bound      %u (lowest diameter any %u-node digraph of degree %u "
			"can have)\n",
			f->moore_diameter, g->n, f->degree);
	fprintf(out, "  self-loops       %u\n", f->self_loops);
	fprintf(out, "  parallel links   %u\n", f->parallel_arcs);
	if (!pm)
		return;
	fprintf(out, "  port permutations %u: port j of node u transmits to ports[j][u]\n", pm->d);
	if (g->n <= 32) {
		for (uint32_t j = 0; j < pm->d; j++) {
			fprintf(out, "    port %-2u", j);
			for (uint32_t u = 0; u < pm->n; u++)
				fprintf(out, " %u", pm->to[(size_t)j * pm->n + u]);
			fprintf(out, "\n");
		}
	} else {
		fprintf(out, "    (%u nodes: --json lists them)\n", g->n);
	}
	for (uint32_t k = 0; k < pm->nself && k < 8; k++)
		fprintf(out, "    self-loop: node %u port %u\n", pm->self_node[k],
			pm->self_port[k]);
	if (pm->nself > 8)
		fprintf(out, "    ... %u self-loops in all\n", pm->nself);
}

struct topo_opts {
	struct cli_format_given given;
	const char *output;
	bool ports;
	uint32_t threads;
};

#define O(f) offsetof(struct topo_opts, f)
static const struct opt topo_table[] = {
    {"json", cli_row_format_flag, O(given), NULL, "--format json", .letter = 'j', .alt = 1},
    {"dot", cli_row_format_flag, O(given), NULL,
     "--format dot: a Graphviz picture, tori laid out as grids", .letter = 'd', .alt = 1},
    {"ports", NULL, O(ports), NULL,
     "the decomposition into port permutations (ports[j][u] = the node port j of u "
     "transmits to)",
     .letter = 'p'},
    {"format", cli_row_format, O(given), "text|json|dot|pb",
     "text (default), json, dot or pb (ofc.v1.Topology; to stdout only when it is not a "
     "terminal)",
     .letter = 'f'},
    {"output", opt_str, O(output), "OUT",
     "write OUT (a temporary name, then renamed); without --format, --json or --dot its "
     "extension says the format (.txt, .json, .dot, .gv, .pb)",
     .flags = OPT_SHORT, .letter = 'o'},
    {"threads", cli_row_u32, O(threads), "N", "threads for the diameter (default 0: all CPUs)", 0,
     64, .letter = 't'},
    CLI_OPT_HELP,
    {NULL},
};
#undef O

const struct cli_table topo_cli_table = {"topo", topo_table, sizeof(struct topo_opts)};

static const struct cli_opts topo_opts = {
    topo_table,
    "Specs: ring:N biring:N torus:AxB[xC...] hypercube:D complete:N bipartite:D\n"
    "  hamming:n,q circulant:N:a,b,... kautz:d,n genkautz:N,d debruijn:d,n\n"
    "Expansions: line(S) line^K(S) degree(S,n) product(S,T,...) power(S,n) reverse(S)\n",
};

int cmd_topo(const struct cli_cmd *cmd, int argc, char **argv)
{
	struct topo_opts o = {0};
	enum out_format fmt;
	struct ofc_error err = {0};
	struct port_map pm = {0};
	struct topo_facts facts;
	struct cli_output out;
	struct graph *g;
	int first, rc = 0;

	if (!cli_parse(cmd, &topo_opts, argc, argv, &o, &first, &rc))
		return rc;
	if (first != argc - 1)
		return cli_usage_error(cmd, first >= argc ? "missing SPEC" : "too many arguments");
	if (cli_output_format(cmd, "-o", o.output, o.given.name, o.given.by,
			      FMT_TEXT | FMT_JSON | FMT_DOT | FMT_PB, FMT_TEXT, &fmt))
		return 2;
	if (fmt == FMT_PB && !o.output && cli_binary_to_terminal(cmd))
		return 2;
	bool want_ports = o.ports || fmt == FMT_PB;
	const char *outpath = o.output;
	unsigned threads = o.threads;

	const char *spec = argv[first];
	if (topo_build(spec, &g, &err) < 0) {
		char why[1024];

		/* Inside an edge-list file: FILE:LINE:COL first, as compilers
		 * say it, so editors can jump there. */
		if (err.line)
			fprintf(stderr, "%s\n", ofc_error_str(&err, why, sizeof(why)));
		else
			fprintf(stderr, "ofc topo: invalid spec %s\n",
				topo_spec_error(why, sizeof(why), spec, &err));
		return ofc_error_exit_code(&err);
	}
	topo_facts(g, &facts, threads);
	if (want_ports && topo_ports(g, &pm, &err) < 0) {
		graph_free(g);
		return cli_fail(&err);
	}
	if (cli_output_open(&out, outpath, &err) < 0) {
		port_map_free(&pm);
		graph_free(g);
		return cli_fail(&err);
	}
	switch (fmt) {
	case FMT_TEXT:
		write_text(out.f, g, &facts, want_ports ? &pm : NULL);
		break;
	case FMT_JSON: {
		struct json_writer w;

		jw_init(&w, out.f, true);
		topo_write_json(&w, g, &facts, want_ports ? &pm : NULL);
		jw_finish(&w);
		break;
	}
	case FMT_DOT:
		topo_write_dot(out.f, g, &facts);
		break;
	case FMT_PB: {
		uint8_t *buf;
		size_t len;

		topology_pack(g, &facts, &pm, &buf, &len);
		if (fwrite(buf, 1, len, out.f) != len)
			rc = ofc_error_set(&err, OFC_E_RUNTIME, "short write");
		free(buf);
		break;
	}
	default: /* not offered for topologies (cli_output_format) */
		break;
	}
	if (rc == 0)
		rc = cli_output_commit(&out, &err);
	else
		cli_output_abort(&out);
	port_map_free(&pm);
	graph_free(g);
	return rc == 0 ? 0 : cli_fail(&err);
}
