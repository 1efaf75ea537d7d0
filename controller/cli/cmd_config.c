/* ofc validate, ofc show. */
#include "controller/cli/internal.h"

#include <stdlib.h>

int cmd_validate(const struct cli_cmd *cmd, int argc, char **argv)
{
	static const struct option opts[] = {{"help", no_argument, NULL, 'h'}, {0}};
	struct ofc_error err = {0};
	struct fabric *f;
	int c;

	while ((c = cli_getopt(cmd, argc, argv, "h", opts)) != -1) {
		if (c == -2)
			return 2;
		if (c == 'h')
			return cli_help(cmd, "Exits 0 when the config is valid; otherwise prints "
					     "FILE:LINE:COL: message and exits 2.\n");
	}
	if (optind != argc - 1)
		return cli_usage_error(cmd, optind >= argc ? "missing FILE" : "too many arguments");
	if (fabric_open(argv[optind], &f, &err) < 0)
		return cli_fail(&err);
	printf("%s: ok: fabric %s, %u host%s, %u switch%s, %u ring%s", argv[optind], f->name,
	       f->nhosts, f->nhosts == 1 ? "" : "s", f->nswitches, f->nswitches == 1 ? "" : "es",
	       f->nrings, f->nrings == 1 ? "" : "s");
	if (f->graph)
		printf(", topology %s (%u circuit%s)", f->graph->spec, f->ncircuits,
		       f->ncircuits == 1 ? "" : "s");
	printf("\n");
	fabric_free(f);
	return 0;
}

int cmd_show(const struct cli_cmd *cmd, int argc, char **argv)
{
	static const struct option opts[] = {
	    {"json", no_argument, NULL, 'j'},	      {"dot", no_argument, NULL, 'd'},
	    {"format", required_argument, NULL, 'f'}, {"output", required_argument, NULL, 'o'},
	    {"help", no_argument, NULL, 'h'},	      {0},
	};
	enum out_format fmt;
	const char *outpath = NULL, *given = NULL, *given_by = NULL;
	struct ofc_error err = {0};
	struct cli_output out;
	struct fabric *f;
	int c, rc = 0;

	while ((c = cli_getopt(cmd, argc, argv, "jdf:o:h", opts)) != -1) {
		switch (c) {
		case -2:
			return 2;
		case 'j':
			given = "json";
			given_by = "--json";
			break;
		case 'd':
			given = "dot";
			given_by = "--dot";
			break;
		case 'f':
			given = optarg;
			given_by = NULL;
			break;
		case 'o':
			outpath = optarg;
			break;
		case 'h':
			return cli_help(
			    cmd,
			    "  --json        --format json\n"
			    "  --dot         --format dot: the hosts, their ports, the switches "
			    "and "
			    "the\n                circuits for Graphviz (dot -Tsvg)\n"
			    "  --format F    text (default), json, dot or pb (an ofc.v1.Fabric "
			    "message,\n                proto/fabric.proto; to stdout only when it "
			    "is not a terminal)\n"
			    "  -o OUT        write OUT (a temporary name, then renamed); without "
			    "--format,\n                --json or --dot its extension says the "
			    "format (.txt, .json,\n                .dot, .gv, .pb)\n");
		}
	}
	if (optind != argc - 1)
		return cli_usage_error(cmd, optind >= argc ? "missing FILE" : "too many arguments");
	if (cli_output_format(cmd, "-o", outpath, given, given_by,
			      FMT_TEXT | FMT_JSON | FMT_DOT | FMT_PB, FMT_TEXT, &fmt))
		return 2;
	if (fmt == FMT_PB && !outpath && cli_binary_to_terminal(cmd))
		return 2;
	if (fabric_open(argv[optind], &f, &err) < 0)
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
