/* What every `ofc` command shares: usage and help text, errors as exit
 * statuses, options from a command's table, --format, and outputs
 * written atomically to a file or to stdout. */
#include "controller/cli/internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

int cli_usage_error(const struct cli_cmd *cmd, const char *fmt, ...)
{
	va_list ap;

	/* The reason and where the options are: a usage line of every option
	 * (600 characters for schedule) would bury the one line that says
	 * what went wrong. */
	fprintf(stderr, "ofc %s: ", cmd->name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry 'ofc %s --help'.\n", cmd->name);
	return 2;
}

/* "usage: ofc NAME " and the usage, wrapped as every usage is (util.h). */
static void print_usage_of(const char *name, const char *usage)
{
	char lead[96];

	snprintf(lead, sizeof(lead), "usage: ofc %s ", name);
	opt_usage_put(stdout, lead, usage);
}

static void print_usage(const struct cli_cmd *cmd)
{
	print_usage_of(cmd->name, cmd->usage);
}

void cli_usage_line(const char *name, const char *operands, const struct opt *const *tables)
{
	char usage[2048];
	size_t k = (size_t)snprintf(usage, sizeof(usage), "%s", operands);

	for (size_t i = 0; tables[i]; i++)
		opt_usage_text(usage, sizeof(usage), &k, tables[i], false);
	print_usage_of(name, usage);
}

int cli_help(const struct cli_cmd *cmd, const char *details)
{
	print_usage(cmd);
	printf("\n%s\n", cmd->summary);
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

static const struct {
	const char *name;
	enum out_format f;
} formats[] = {
    {"text", FMT_TEXT},	  {"json", FMT_JSON}, {"dot", FMT_DOT}, {"pb", FMT_PB},
    {"msccl", FMT_MSCCL}, {"svg", FMT_SVG},   {"png", FMT_PNG},
};

/* What a file's name says it holds (case aside). */
static const struct {
	const char *ext;
	enum out_format f;
} extensions[] = {
    {"pb", FMT_PB},   {"json", FMT_JSON}, {"txt", FMT_TEXT}, {"xml", FMT_MSCCL},
    {"dot", FMT_DOT}, {"gv", FMT_DOT},	  {"svg", FMT_SVG},  {"png", FMT_PNG},
};

static const char *format_name(enum out_format f)
{
	for (size_t i = 0; i < ARRAY_SIZE(formats); i++)
		if (formats[i].f == f)
			return formats[i].name;
	return "?";
}

/* "text, json or pb": the formats in mask. */
static const char *format_list(unsigned mask, char *buf, size_t n)
{
	size_t k = 0, left = 0;

	for (size_t i = 0; i < ARRAY_SIZE(formats); i++)
		left += (mask & formats[i].f) != 0;
	buf[0] = 0;
	for (size_t i = 0; i < ARRAY_SIZE(formats) && k < n; i++) {
		if (!(mask & formats[i].f))
			continue;
		left--;
		k += (size_t)snprintf(buf + k, n - k, "%s%s", formats[i].name,
				      left > 1	  ? ", "
				      : left == 1 ? " or "
						  : "");
	}
	return buf;
}

int cli_format(const struct cli_cmd *cmd, const char *s, unsigned allowed, enum out_format *out)
{
	char list[80];

	for (size_t i = 0; i < ARRAY_SIZE(formats); i++)
		if (strcmp(s, formats[i].name) == 0 && (allowed & formats[i].f)) {
			*out = formats[i].f;
			return 0;
		}
	return cli_usage_error(cmd, "unknown format '%s' (%s)", s,
			       format_list(allowed, list, sizeof(list)));
}

/* The format path's extension names, or 0. */
static enum out_format format_of_name(const char *path, const char **ext)
{
	const char *base = strrchr(path, '/'), *dot;

	base = base ? base + 1 : path;
	dot = strrchr(base, '.');
	if (!dot || dot == base)
		return 0;
	*ext = dot + 1;
	for (size_t i = 0; i < ARRAY_SIZE(extensions); i++)
		if (strcasecmp(dot + 1, extensions[i].ext) == 0)
			return extensions[i].f;
	return 0;
}

int cli_output_format(const struct cli_cmd *cmd, const char *opt, const char *path,
		      const char *given, const char *given_by, unsigned allowed,
		      enum out_format dflt, enum out_format *out)
{
	enum out_format by_name = 0, f = dflt;
	const char *ext = NULL;
	char list[80];

	if (given && cli_format(cmd, given, allowed, &f))
		return 2;
	if (path && strcmp(path, "-") != 0)
		by_name = format_of_name(path, &ext);
	if (given && by_name && by_name != f)
		return cli_usage_error(
		    cmd, "%s%s, but %s '%s' names a %s file: rename the file or drop %s",
		    given_by ? given_by : "--format ", given_by ? "" : given, opt, path,
		    format_name(by_name), given_by ? given_by : "--format");
	if (!given && by_name && !(allowed & by_name))
		return cli_usage_error(cmd,
				       "%s '%s' names a %s file, which ofc %s does not write "
				       "(it writes %s)%s",
				       opt, path, format_name(by_name), cmd->name,
				       format_list(allowed, list, sizeof(list)),
				       by_name == FMT_PNG && allowed == FMT_SVG
					   ? ": name it .svg (rsvg-convert or a browser turn "
					     "SVG into PNG)"
					   : "");
	if (!given && by_name)
		f = by_name;
	*out = f;
	return 0;
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

bool cli_binary_to_terminal(const struct cli_cmd *cmd)
{
	if (!isatty(STDOUT_FILENO))
		return false;
	cli_usage_error(cmd, "--format pb writes binary: give -o OUT, or redirect stdout");
	return true;
}

FILE *cli_summary_stream(const struct schedule_print *p)
{
	return p->output && strcmp(p->output, "-") == 0 ? stderr : stdout;
}

int cli_write_schedule(const struct schedule_print *req, const struct schedule *s,
		       const struct schedule_result *r, struct ofc_error *err)
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
		if (rc == 0 && r) {
			/* the summary's fields, as ofcd's answer has them: protobuf
			 * merges concatenated messages */
			struct arena a = {0};

			rc = schedule_append_pb(schedule_extra_msg(&a, r), out.f, err);
			arena_free(&a);
		}
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

void cli_print_message(FILE *f, const ProtobufCMessage *m)
{
	struct json_writer w;

	jw_init(&w, f, true);
	pb_write_json(&w, m);
	jw_finish(&w);
}

int cli_export_check(const struct schedule_print *p, uint64_t limit, const struct schedule *s,
		     struct ofc_error *err)
{
	uint64_t need = 0, have = mem_held();
	const char *what = NULL;
	char need_s[32], max_s[32];

	if (!p->output)
		return 0;
	if (p->format == FMT_PB) {
		need = schedule_pb_memory(s, false);
		what = "a chunk of transfers as protobuf messages";
	} else if (p->format == FMT_MSCCL) {
		need = schedule_msccl_memory(s);
		what = "every rank's chunks and operations";
	}
	if (!what || (double)have + (double)need <= (double)limit)
		return 0;
	fmt_size(need_s, sizeof(need_s), have + need);
	fmt_size(max_s, sizeof(max_s), limit);
	return ofc_error_set(
	    err, OFC_E_RUNTIME,
	    "writing the %u-node schedule (%zu transfers) as %s needs about %s "
	    "(%s), over the memory limit of %s (--max-memory)%s",
	    s->nodes, s->nxfers, p->format == FMT_PB ? "pb" : "msccl", need_s, what, max_s,
	    /* pb streams as json and text do: only MSCCL holds more */
	    p->format == FMT_MSCCL ? "; --format json, text or pb is written as it goes and fits"
				   : "");
}

/* The line, from pr (its mutex held). */
static void progress_draw(struct cli_progress *pr)
{
	double t = now_seconds() - pr->start;

	if (!pr->phase[0])
		return;
	if (pr->done >= 0)
		fprintf(stderr, "\r\033[K  ofc %s: %s %3.0f%%, %.1f s", pr->cmd, pr->phase,
			100 * pr->done, t);
	else
		fprintf(stderr, "\r\033[K  ofc %s: %s, %.1f s", pr->cmd, pr->phase, t);
	fflush(stderr);
	pr->shown = true;
}

static void *progress_tick(void *arg)
{
	struct cli_progress *pr = arg;

	pthread_mutex_lock(&pr->mu);
	while (!pr->stop) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 500000000;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		pthread_cond_timedwait(&pr->cv, &pr->mu, &ts);
		if (!pr->stop)
			progress_draw(pr);
	}
	pthread_mutex_unlock(&pr->mu);
	return NULL;
}

void cli_clock_init(struct ofc_clock *c, struct cli_progress *pr, const struct cli_cmd *cmd,
		    double time_limit, bool json)
{
	memset(c, 0, sizeof(*c));
	memset(pr, 0, sizeof(*pr));
	pr->cmd = cmd->name;
	c->start = pr->start = now_seconds();
	if (time_limit > 0) {
		c->deadline = c->start + time_limit;
		c->limit = time_limit;
	}
	if (!isatty(STDERR_FILENO) || json)
		return;
	c->progress = cli_progress_show;
	c->ctx = pr;
	pthread_mutex_init(&pr->mu, NULL);
	pthread_cond_init(&pr->cv, NULL);
	/* Without the ticker the line still updates at every phase. */
	pr->ticking = pthread_create(&pr->ticker, NULL, progress_tick, pr) == 0;
}

void cli_progress_show(void *ctx, const char *phase, double done, double elapsed)
{
	struct cli_progress *pr = ctx;

	pthread_mutex_lock(&pr->mu);
	if (!pr->stop) {
		/* A new phase is drawn at once; a new fraction of the same one
		 * (reported per step) at most ten times a second. */
		bool now = phase || elapsed - pr->drawn >= 0.1;

		if (phase)
			snprintf(pr->phase, sizeof(pr->phase), "%s", phase);
		pr->done = done;
		if (now) {
			progress_draw(pr);
			pr->drawn = elapsed;
		}
	}
	pthread_mutex_unlock(&pr->mu);
}

void cli_progress_clear(const struct ofc_clock *c)
{
	struct cli_progress *pr;

	if (!c || c->progress != cli_progress_show)
		return;
	pr = c->ctx;
	pthread_mutex_lock(&pr->mu);
	pr->stop = true;
	pthread_cond_signal(&pr->cv);
	pthread_mutex_unlock(&pr->mu);
	if (pr->ticking)
		pthread_join(pr->ticker, NULL);
	pr->ticking = false;
	if (pr->shown)
		fprintf(stderr, "\r\033[K");
	pr->shown = false;
}

int cli_parse_overhead(const char *arg, struct jobplan_overhead *out, struct ofc_error *err)
{
	const char *comma = strchr(arg, ','), *why = NULL;
	char txn[64];

	if (!comma || (size_t)(comma - arg) >= sizeof(txn))
		return ofc_error_set(err, OFC_E_USAGE,
				     "bad --switch-overhead '%s': expected T,C (a transaction's "
				     "time and a changed circuit's, as 50ms,40ms)",
				     arg);
	memcpy(txn, arg, (size_t)(comma - arg));
	txn[comma - arg] = 0;
	if (parse_duration(txn, &out->txn_s, &why) < 0 ||
	    parse_duration(comma + 1, &out->change_s, &why) < 0)
		return ofc_error_set(err, OFC_E_USAGE, "bad --switch-overhead '%s': %s", arg, why);
	if (out->txn_s > 86400 || out->change_s > 86400)
		return ofc_error_set(err, OFC_E_USAGE,
				     "bad --switch-overhead '%s': at most a day each", arg);
	return 0;
}

/* ---- options from a table ---------------------------------------------------- */

int cli_help_opts(const struct cli_cmd *cmd, const struct cli_opts *o)
{
	cli_usage_line(cmd->name, cmd->usage ? cmd->usage : "",
		       (const struct opt *const[]){o->table, NULL});
	printf("\n%s\n", cmd->summary);
	if (o->help)
		printf("\n%s", o->help);
	printf("\n");
	opt_help(stdout, o->table);
	return 0;
}

bool cli_parse(const struct cli_cmd *cmd, const struct cli_opts *o, int argc, char **argv,
	       void *base, int *first, int *rc)
{
	const struct opt *stop = NULL;
	struct ofc_error err = {0};
	int r = opt_parse_given(o->table, argc, argv, base, &stop, first, o->given, &err);

	*rc = 0;
	if (r == 1)
		*rc = o->help_fn ? o->help_fn(cmd) : cli_help_opts(cmd, o);
	else if (r < 0)
		*rc =
		    err.code == OFC_E_USAGE ? cli_usage_error(cmd, "%s", err.msg) : cli_fail(&err);
	return r == 0;
}

static void *row_field(const struct opt *row, void *base)
{
	return (char *)base + row->off;
}

static int bad(const struct opt *row, const char *arg, struct ofc_error *err, const char *why)
{
	return ofc_error_set(err, OFC_E_USAGE, "bad --%s '%s': %s", row->name, arg, why);
}

int cli_row_u32(const struct opt *row, const char *arg, void *base, struct ofc_error *err)
{
	uint32_t v;

	if (parse_u32(arg, &v) < 0)
		return bad(row, arg, err, "expected a whole number");
	if (v < row->min || v > row->max)
		return ofc_error_set(err, OFC_E_USAGE, "bad --%s '%s': must be %.0f..%.0f%s%s%s",
				     row->name, arg, row->min, row->max, row->expect ? " (" : "",
				     row->expect ? row->expect : "", row->expect ? ")" : "");
	*(uint32_t *)row_field(row, base) = v;
	return 0;
}

int cli_row_size(const struct opt *row, const char *arg, void *base, struct ofc_error *err)
{
	const char *why = NULL;
	uint64_t v;

	if (parse_size(arg, &v, &why) < 0)
		return bad(row, arg, err, why);
	if (v == 0)
		return bad(row, arg, err, "must be more than 0");
	*(uint64_t *)row_field(row, base) = v;
	return 0;
}

int cli_row_rate(const struct opt *row, const char *arg, void *base, struct ofc_error *err)
{
	const char *why = NULL;
	double v;

	if (parse_rate(arg, &v, &why) < 0)
		return bad(row, arg, err, why);
	if (!(v > 0))
		return bad(row, arg, err, "must be more than 0");
	*(double *)row_field(row, base) = v;
	return 0;
}

int cli_row_duration(const struct opt *row, const char *arg, void *base, struct ofc_error *err)
{
	const char *why = NULL;
	double v;

	if (parse_duration(arg, &v, &why) < 0)
		return bad(row, arg, err, why);
	if (row->max > 0 && (v < row->min || v > row->max))
		return bad(row, arg, err, row->expect ? row->expect : "out of range");
	*(double *)row_field(row, base) = v;
	return 0;
}

int cli_row_fraction(const struct opt *row, const char *arg, void *base, struct ofc_error *err)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	if (errno || end == arg || *end || !(v > 0 && v <= 1))
		return bad(row, arg, err, "expected a number above 0 and at most 1");
	*(double *)row_field(row, base) = v;
	return 0;
}

int cli_row_percent(const struct opt *row, const char *arg, void *base, struct ofc_error *err)
{
	char *end;
	double v = 0;
	const char *why = NULL;

	/* digits, a point, an exponent and a sign alone: strtod would take
	 * hex, "inf" and leading blanks too */
	if (!*arg || strspn(arg, "0123456789.eE+-%") != strlen(arg))
		why = "not a percentage";
	else if ((v = strtod(arg, &end)), end == arg || (*end && strcmp(end, "%") != 0))
		why = "not a percentage";
	else if (!(v > 0 && v < 100))
		why = "out of range";
	if (why)
		return ofc_error_set(
		    err, OFC_E_USAGE,
		    "bad --%s '%s': %s; a percentage above 0 and below 100 (25 or "
		    "25%%), the share of the fabric's bandwidth a stage may take away",
		    row->name, arg, why);
	*(double *)row_field(row, base) = v;
	return 0;
}

/* --json, --dot and --format each say the format: two that disagree
 * would leave one silently unheeded. */
static int format_given(const struct opt *row, const char *name, struct cli_format_given *g,
			struct ofc_error *err)
{
	if (g->name && strcmp(g->name, name) != 0)
		return ofc_error_set(err, OFC_E_USAGE,
				     "%s and --%s ask for different formats: give one",
				     g->by ? g->by : "--format", row->name);
	g->name = name;
	g->by = NULL;
	return 0;
}

int cli_row_format_flag(const struct opt *row, const char *arg, void *base, struct ofc_error *err)
{
	struct cli_format_given *g = row_field(row, base);

	(void)arg;
	if (format_given(row, row->name, g, err) < 0)
		return -1;
	snprintf(g->by_buf, sizeof(g->by_buf), "--%s", row->name);
	g->by = g->by_buf;
	return 0;
}

int cli_row_format(const struct opt *row, const char *arg, void *base, struct ofc_error *err)
{
	return format_given(row, arg, row_field(row, base), err);
}

int cli_row_choice(const struct opt *row, const char *arg, void *base, struct ofc_error *err)
{
	if (opt_choice(row, arg, base, err) == 0)
		return 0;
	return bad(row, arg, err, row->expect);
}

int cli_row_collective(const struct opt *row, const char *arg, void *base, struct ofc_error *err)
{
	enum sched_collective c;

	if (sched_collective_parse(arg, &c) < 0)
		return bad(row, arg, err,
			   row->expect
			       ? row->expect
			       : "expected allreduce, allgather, reduce-scatter or alltoall");
	*(enum sched_collective *)row_field(row, base) = c;
	return 0;
}

int cli_row_collective_name(const struct opt *row, const char *arg, void *base,
			    struct ofc_error *err)
{
	enum sched_collective c;
	bool known = sched_collective_parse(arg, &c) == 0;

	for (const struct opt_choice *k = row->choices; !known && k && k->name; k++)
		known = strcmp(k->name, arg) == 0;
	if (!known)
		return bad(row, arg, err,
			   row->expect
			       ? row->expect
			       : "expected allreduce, allgather, reduce-scatter or alltoall");
	*(const char **)row_field(row, base) = arg;
	return 0;
}

int cli_row_lp_solver(const struct opt *row, const char *arg, void *base, struct ofc_error *err)
{
	if (lp_solver_parse(arg, row_field(row, base)) == 0)
		return 0;
	return bad(row, arg, err, "lpsolve or clp");
}
