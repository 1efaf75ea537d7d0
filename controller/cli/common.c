/* What every `ofc` command shares: usage and help text, errors as exit
 * statuses, getopt with the command's own options, --format, and outputs
 * written atomically to a file or to stdout. */
#include "controller/cli/internal.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

int cli_usage_error(const struct cli_cmd *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "ofc %s: ", cmd->name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nusage: ofc %s %s\n", cmd->name, cmd->usage);
	return 2;
}

int cli_help(const struct cli_cmd *cmd, const char *details)
{
	printf("usage: ofc %s %s\n\n%s\n", cmd->name, cmd->usage, cmd->summary);
	if (details)
		printf("\n%s", details);
	return 0;
}

int cli_fail(const struct ofc_error *err)
{
	char buf[1024];

	ofc_error_str(err, buf, sizeof(buf));
	if (err->file[0] && err->line)
		fprintf(stderr, "%s\n", buf);
	else
		fprintf(stderr, "ofc: %s\n", buf);
	return ofc_error_exit_code(err) ? ofc_error_exit_code(err) : 1;
}

int cli_getopt(const struct cli_cmd *cmd, int argc, char **argv, const char *shortopts,
	       const struct option *longopts)
{
	int c;

	opterr = 0;
	c = getopt_long(argc, argv, shortopts, longopts, NULL);
	if (c == '?') {
		if (optopt)
			cli_usage_error(cmd, "unknown option '-%c' or missing argument", optopt);
		else
			cli_usage_error(cmd, "unknown option '%s'", argv[optind - 1]);
		return -2;
	}
	if (c == ':') {
		cli_usage_error(cmd, "option '%s' needs a value", argv[optind - 1]);
		return -2;
	}
	return c;
}

int cli_format(const struct cli_cmd *cmd, const char *s, unsigned allowed, enum out_format *out)
{
	static const struct {
		const char *name;
		enum out_format f;
	} fmts[] = {{"text", FMT_TEXT}, {"json", FMT_JSON}, {"dot", FMT_DOT}, {"pb", FMT_PB}, {"msccl", FMT_MSCCL}};

	for (size_t i = 0; i < ARRAY_SIZE(fmts); i++)
		if (strcmp(s, fmts[i].name) == 0 && (allowed & fmts[i].f)) {
			*out = fmts[i].f;
			return 0;
		}
	return cli_usage_error(cmd, "unknown format '%s'", s);
}

int cli_output_open(struct cli_output *o, const char *path, struct ofc_error *err)
{
	memset(o, 0, sizeof(*o));
	if (atomic_open(&o->af, path ? path : "-", err) < 0)
		return -1;
	o->f = o->af.f;
	return 0;
}

int cli_output_commit(struct cli_output *o, struct ofc_error *err)
{
	o->f = NULL;
	return atomic_commit(&o->af, err);
}

void cli_output_abort(struct cli_output *o)
{
	o->f = NULL;
	if (o->af.tmp)
		atomic_abort(&o->af);
	else if (o->af.path)
		atomic_commit(&o->af, &(struct ofc_error){0});
}

int cli_write_schedule(const struct schedule_print *req, const struct schedule *s,
		       struct ofc_error *err)
{
	struct cli_output out;
	int rc = 0;

	if (!req->output)
		return 0;
	if (cli_output_open(&out, req->output, err) < 0)
		return -1;
	switch (req->format) {
	case FMT_PB:
		rc = schedule_write_pb(s, out.f, err);
		break;
	case FMT_TEXT:
		sched_write_text(out.f, s, UINT32_MAX);
		break;
	default: {
		struct json_writer w;

		jw_init(&w, out.f, true);
		sched_write_json(&w, s, true);
		jw_finish(&w);
		break;
	}
	}
	if (rc == 0)
		return cli_output_commit(&out, err);
	cli_output_abort(&out);
	return -1;
}
