/* ofc validate, ofc show. */
#include "controller/cli/internal.h"
#include "proto/cli_report.pb-c.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* The cost model prices every link at link_bandwidth; when the config
 * also gives the ports' (or links') rates and they say otherwise, every
 * predicted time is off by their ratio. Validation takes link_bandwidth as
 * given (it may be meant: a slower switch between the ports), so this is a
 * warning at the cost model, with both figures. 0 or 1 warnings in w. */
static int rate_warning(const struct fabric *f, struct ofc_error *w)
{
	double lo = 0, hi = 0;
	char bw[32], r1[32], r2[32];

	if (!f->cost.bandwidth_set)
		return 0;
	for (uint32_t h = 0; h < f->nhosts; h++)
		for (uint32_t j = 0; j < f->hosts[h].ports; j++) {
			double r = fabric_port_rate(f, h, j);

			if (r > 0) {
				lo = lo > 0 && lo < r ? lo : r;
				hi = hi > r ? hi : r;
			}
		}
	for (uint32_t i = 0; i < f->topology.nlink_rates; i++) {
		double r = f->topology.link_rates[i].rate;

		lo = lo > 0 && lo < r ? lo : r;
		hi = hi > r ? hi : r;
	}
	if (!(lo > 0) || f->cost.link_bandwidth == lo)
		return 0;
	fmt_rate(bw, sizeof(bw), f->cost.link_bandwidth);
	fmt_rate(r1, sizeof(r1), lo);
	fmt_rate(r2, sizeof(r2), hi);
	ofc_error_at(w, OFC_E_INPUT, f->file, f->cost.loc.line, f->cost.loc.col,
		     "cost_model link_bandwidth %s, but the ports%s run at %s%s%s: schedules "
		     "are priced at %s a link (without link_bandwidth, at %s)",
		     bw, f->topology.nlink_rates ? " and links" : "", r1, hi > lo ? " to " : "",
		     hi > lo ? r2 : "", bw, r1);
	return 1;
}

/* The warnings validate gives at most (rate_warning's one). */
#define MAX_WARNINGS 1

static Ofc__V1__ConfigIssue *issue(Ofc__V1__ConfigIssue *m, const struct ofc_error *e)
{
	ofc__v1__config_issue__init(m);
	m->file = (char *)e->file;
	m->has_line = m->has_column = 1;
	m->line = e->line;
	m->column = e->col;
	m->message = (char *)e->msg;
	return m;
}

/* ofc.v1.ValidateAnswer (proto/cli_report.proto). */
static void validate_json(const char *file, const struct fabric *f, const struct ofc_error *err,
			  const struct ofc_error *warn, int nwarn)
{
	Ofc__V1__ValidateAnswer m = OFC__V1__VALIDATE_ANSWER__INIT;
	Ofc__V1__ConfigIssue e, w[MAX_WARNINGS], *wp[MAX_WARNINGS];

	m.file = (char *)file;
	m.has_valid = 1;
	m.valid = f != NULL;
	if (!f) {
		m.error = issue(&e, err);
		cli_print_message(stdout, &m.base);
		return;
	}
	m.fabric = f->name;
	m.has_hosts = m.has_switches = m.has_rings = m.has_circuits = 1;
	m.hosts = f->nhosts;
	m.switches = f->nswitches;
	m.rings = f->nrings;
	m.topology = f->graph ? f->graph->spec : NULL;
	m.circuits = f->ncircuits;
	for (int i = 0; i < nwarn && i < MAX_WARNINGS; i++)
		wp[m.n_warnings++] = issue(&w[i], &warn[i]);
	m.warnings = wp;
	cli_print_message(stdout, &m.base);
}

struct validate_opts {
	bool json;
};

static const struct opt validate_table[] = {
    {"json", NULL, offsetof(struct validate_opts, json), NULL,
     "the outcome on stdout as JSON: file, valid, and the fabric's counts and warnings, or the "
     "error (file, line, column, message)",
     .letter = 'j'},
    CLI_OPT_HELP,
    {NULL},
};

const struct cli_table validate_cli_table = {"validate", validate_table,
					     sizeof(struct validate_opts)};

static const struct cli_opts validate_opts = {
    validate_table,
    "Exits 0 when the config is valid; otherwise prints FILE:LINE:COL: message and exits 2.\n"
    "Warnings (the cost model's link_bandwidth against the ports' rates) go to stderr as\n"
    "FILE:LINE:COL: warning: message, and the exit status stays 0.\n",
};

int cmd_validate(const struct cli_cmd *cmd, int argc, char **argv)
{
	struct ofc_error err = {0}, warn[MAX_WARNINGS] = {0};
	struct validate_opts o = {0};
	struct fabric *f = NULL;
	int first, nwarn, rc = 0;

	if (!cli_parse(cmd, &validate_opts, argc, argv, &o, &first, &rc))
		return rc;
	bool json = o.json;

	if (first != argc - 1)
		return cli_usage_error(cmd, first >= argc ? "missing FILE" : "too many arguments");
	if (fabric_open(argv[first], &f, &err) < 0) {
		rc = cli_fail(&err);
		if (json)
			validate_json(argv[first], NULL, &err, NULL, 0);
		return rc;
	}
	nwarn = rate_warning(f, &warn[0]);
	for (int i = 0; i < nwarn; i++)
		fprintf(stderr, "%s:%u:%u: warning: %s\n", warn[i].file, warn[i].line, warn[i].col,
			warn[i].msg);
	if (json) {
		validate_json(argv[first], f, NULL, warn, nwarn);
	} else {
		printf("%s: ok: fabric %s, %u host%s, %u switch%s, %u ring%s", argv[first], f->name,
		       f->nhosts, f->nhosts == 1 ? "" : "s", f->nswitches,
		       f->nswitches == 1 ? "" : "es", f->nrings, f->nrings == 1 ? "" : "s");
		if (f->graph)
			printf(", topology %s (%u circuit%s)", f->graph->spec, f->ncircuits,
			       f->ncircuits == 1 ? "" : "s");
		printf("%s\n", nwarn ? " (with a warning, above)" : "");
	}
	fabric_free(f);
	return 0;
}

struct show_opts {
	struct cli_format_given given;
	const char *output;
};

#define O(f) offsetof(struct show_opts, f)
static const struct opt show_table[] = {
    {"json", cli_row_format_flag, O(given), NULL, "--format json", .letter = 'j', .alt = 1},
    {"dot", cli_row_format_flag, O(given), NULL,
     "--format dot: the hosts, their ports, the switches and the circuits for Graphviz (dot "
     "-Tsvg)",
     .letter = 'd', .alt = 1},
    {"format", cli_row_format, O(given), "text|json|dot|pb",
     "text (default), json, dot or pb (an ofc.v1.Fabric message, proto/fabric.proto; to stdout "
     "only when it is not a terminal)",
     .letter = 'f', .alt = 1},
    {"output", opt_str, O(output), "OUT",
     "write OUT (a temporary name, then renamed); without --format, --json or --dot its "
     "extension says the format (.txt, .json, .dot, .gv, .pb)",
     .flags = OPT_SHORT, .letter = 'o'},
    CLI_OPT_HELP,
    {NULL},
};
#undef O

const struct cli_table show_cli_table = {"show", show_table, sizeof(struct show_opts)};

static const struct cli_opts show_opts = {show_table, NULL};

int cmd_show(const struct cli_cmd *cmd, int argc, char **argv)
{
	struct show_opts o = {0};
	enum out_format fmt;
	const char *outpath;
	struct ofc_error err = {0};
	struct cli_output out;
	struct fabric *f;
	int first, rc = 0;

	if (!cli_parse(cmd, &show_opts, argc, argv, &o, &first, &rc))
		return rc;
	outpath = o.output;
	if (first != argc - 1)
		return cli_usage_error(cmd, first >= argc ? "missing FILE" : "too many arguments");
	if (cli_output_format(cmd, "-o", outpath, o.given.name, o.given.by,
			      FMT_TEXT | FMT_JSON | FMT_DOT | FMT_PB, FMT_TEXT, &fmt))
		return 2;
	if (fmt == FMT_PB && !outpath && cli_binary_to_terminal(cmd))
		return 2;
	if (fabric_open(argv[first], &f, &err) < 0)
		return cli_fail(&err);
	if (cli_output_open(&out, outpath, &err) < 0) {
		fabric_free(f);
		return cli_fail(&err);
	}
	if (fmt == FMT_TEXT) {
		fabric_write_text(f, out.f);
	} else if (fmt == FMT_JSON) {
		rc = fabric_write_json(f, out.f, &err);
	} else if (fmt == FMT_DOT) {
		fabric_write_dot(f, out.f);
	} else {
		uint8_t *buf;
		size_t len;

		rc = fabric_pack(f, &buf, &len, &err);
		if (rc == 0 && fwrite(buf, 1, len, out.f) != len)
			rc = ofc_error_set(&err, OFC_E_RUNTIME, "short write");
		if (rc == 0)
			free(buf);
	}
	if (rc == 0)
		rc = cli_output_commit(&out, &err);
	else
		cli_output_abort(&out);
	fabric_free(f);
	return rc == 0 ? 0 : cli_fail(&err);
}
