/* Command-line options from a table (util.h, "command-line options"): the
 * one getopt_long loop every table goes through, the generic parsers the
 * rows name, and the usage and --help written from the rows, so that the
 * help (and the man page made from it) cannot leave an option out. */
#include "util/util.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#define HELP_COL   27  /* where an option's help starts */
#define HELP_WIDTH 80  /* longest line of the help and the usage */
#define OPT_VAL0   256 /* getopt_long's val of row 0: past every short letter */

static void *field(void *base, size_t off)
{
	return (char *)base + off;
}

int opt_refuse(const struct opt *row, const char *arg, struct ofc_error *err, const char *fmt, ...)
{
	char what[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	return ofc_error_set(err, OFC_E_USAGE, "--%s '%s': %s", row->name, arg, what);
}

static int refused(const struct opt *row, const char *arg, struct ofc_error *err)
{
	return opt_refuse(row, arg, err, "%s", row->expect ? row->expect : "out of range");
}

static bool in_range(const struct opt *row, double v)
{
	return v >= row->min && v <= row->max;
}

/* ---- the generic parsers -------------------------------------------------- */

int opt_str(const struct opt *row, const char *arg, void *base, struct ofc_error *err)
{
	(void)err;
	*(const char **)field(base, row->off) = arg;
	return 0;
}

int opt_u32(const struct opt *row, const char *arg, void *base, struct ofc_error *err)
{
	uint64_t v;

	if (parse_u64(arg, &v) < 0 || !in_range(row, (double)v) || v > UINT32_MAX)
		return refused(row, arg, err);
	*(uint32_t *)field(base, row->off) = (uint32_t)v;
	return 0;
}

int opt_size(const struct opt *row, const char *arg, void *base, struct ofc_error *err)
{
	const char *why;
	uint64_t v;

	if (parse_size(arg, &v, &why) < 0 || !in_range(row, (double)v))
		return refused(row, arg, err);
	*(uint64_t *)field(base, row->off) = v;
	return 0;
}

int opt_size32(const struct opt *row, const char *arg, void *base, struct ofc_error *err)
{
	const char *why;
	uint64_t v;

	if (parse_size(arg, &v, &why) < 0 || !in_range(row, (double)v) || v > UINT32_MAX)
		return refused(row, arg, err);
	*(uint32_t *)field(base, row->off) = (uint32_t)v;
	return 0;
}

int opt_seconds(const struct opt *row, const char *arg, void *base, struct ofc_error *err)
{
	const char *why;
	double v;

	if (parse_duration(arg, &v, &why) < 0 || !in_range(row, v))
		return refused(row, arg, err);
	*(double *)field(base, row->off) = v;
	return 0;
}

int opt_seconds_or_0(const struct opt *row, const char *arg, void *base, struct ofc_error *err)
{
	const char *why;
	double v;

	if (parse_duration(arg, &v, &why) < 0 || (v != 0 && !in_range(row, v)))
		return refused(row, arg, err);
	*(double *)field(base, row->off) = v;
	return 0;
}

int opt_seconds_none(const struct opt *row, const char *arg, void *base, struct ofc_error *err)
{
	if (opt_seconds(row, arg, base, err) < 0)
		return -1;
	if (*(double *)field(base, row->off) == 0)
		*(double *)field(base, row->off) = -1;
	return 0;
}

int opt_ms(const struct opt *row, const char *arg, void *base, struct ofc_error *err)
{
	const char *why;
	double v;

	if (parse_duration(arg, &v, &why) < 0 || !in_range(row, v) || v * 1000 > UINT32_MAX)
		return refused(row, arg, err);
	*(uint32_t *)field(base, row->off) = (uint32_t)(v * 1000 + 0.5);
	return 0;
}

int opt_octal(const struct opt *row, const char *arg, void *base, struct ofc_error *err)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(arg, &end, 8);
	if (errno || !*arg || *end || !in_range(row, (double)v))
		return refused(row, arg, err);
	*(unsigned *)field(base, row->off) = (unsigned)v;
	return 0;
}

int opt_choice(const struct opt *row, const char *arg, void *base, struct ofc_error *err)
{
	for (const struct opt_choice *c = row->choices; c && c->name; c++) {
		if (strcmp(c->name, arg) == 0) {
			*(int *)field(base, row->off) = c->value;
			return 0;
		}
	}
	return refused(row, arg, err);
}

/* ---- the loop --------------------------------------------------------------- */

/* The row getopt_long's c names: its letter, or OPT_VAL0 + its index. */
static const struct opt *row_of(const struct opt *table, size_t n, int c)
{
	if (c >= OPT_VAL0 && c < OPT_VAL0 + (int)n)
		return &table[c - OPT_VAL0];
	for (size_t i = 0; c > 0 && c < OPT_VAL0 && i < n; i++)
		if (table[i].letter == c)
			return &table[i];
	return NULL;
}

/* getopt_long's '?': a known option without its value, or an unknown one. */
static int wrong(const struct opt *table, size_t n, char **argv, struct ofc_error *err)
{
	const struct opt *row = optopt ? row_of(table, n, optopt) : NULL;

	if (row && row->arg)
		return ofc_error_set(err, OFC_E_USAGE, "option '%s' needs a value",
				     argv[optind - 1]);
	if (optopt > 0 && optopt < OPT_VAL0)
		return ofc_error_set(err, OFC_E_USAGE, "unknown option '-%c'", optopt);
	return ofc_error_set(err, OFC_E_USAGE, "unknown option '%s'", argv[optind - 1]);
}

int opt_parse_given(const struct opt *table, int argc, char **argv, void *base,
		    const struct opt **stop, int *first, opt_given_fn given, struct ofc_error *err)
{
	size_t n = 0;

	while (table[n].name)
		n++;
	struct option *lo = xcalloc(n + 1, sizeof(*lo));
	char *shorts = xcalloc(2 * n + 1, 1), *sp = shorts;
	int c, rc = 0;

	for (size_t i = 0; i < n; i++) {
		/* a lettered row's long name says its letter, as getopt's
		 * callers write it (and as a test standing in for it reads) */
		lo[i] =
		    (struct option){table[i].name,
				    !table[i].arg			  ? no_argument
				    : table[i].flags & OPT_OPTIONAL ? optional_argument
								    : required_argument,
				    NULL, table[i].letter ? table[i].letter : OPT_VAL0 + (int)i};
		if (table[i].letter) {
			*sp++ = table[i].letter;
			if (table[i].arg)
				*sp++ = ':';
			if (table[i].arg && (table[i].flags & OPT_OPTIONAL))
				*sp++ = ':';
		}
	}
	opterr = 0;
	optind = 0; /* from argv[1], also when a test parses twice */
	while (rc == 0 && (c = getopt_long(argc, argv, shorts, lo, NULL)) != -1) {
		const struct opt *row = c == '?' ? NULL : row_of(table, n, c);

		if (!row)
			rc = wrong(table, n, argv, err);
		else if (row->flags & OPT_STOP) {
			*stop = row;
			rc = 1;
		} else if (row->parse) {
			rc = row->parse(row, optarg, base, err);
		} else {
			*(bool *)field(base, row->off) = true;
		}
		if (rc == 0 && given)
			given(row, base);
	}
	if (rc == 0 && !first && optind < argc)
		rc = ofc_error_set(err, OFC_E_USAGE, "unexpected argument '%s'", argv[optind]);
	if (first)
		*first = optind;
	free(lo);
	free(shorts);
	return rc;
}

int opt_parse_args(const struct opt *table, int argc, char **argv, void *base,
		   const struct opt **stop, int *first, struct ofc_error *err)
{
	return opt_parse_given(table, argc, argv, base, stop, first, NULL, err);
}

int opt_parse(const struct opt *table, int argc, char **argv, void *base, const struct opt **stop,
	      struct ofc_error *err)
{
	return opt_parse_args(table, argc, argv, base, stop, NULL, err);
}

/* ---- usage and help ------------------------------------------------------- */

/* How usage and help name a row: "--" and its name, or "-X" (OPT_SHORT). */
static const char *opt_shown(const struct opt *row, char letter[3])
{
	if (!(row->flags & OPT_SHORT))
		return "--";
	letter[0] = '-';
	letter[1] = row->letter;
	letter[2] = 0;
	return letter;
}

/* word at *col, wrapped to indent when the line would pass HELP_WIDTH. */
static void put_word(FILE *f, const char *word, size_t len, size_t indent, size_t *col)
{
	if (*col > indent && *col + 1 + len > HELP_WIDTH) {
		fprintf(f, "\n%*s", (int)indent, "");
		*col = indent;
	} else if (*col > indent) {
		fputc(' ', f);
		(*col)++;
	}
	fwrite(word, 1, len, f);
	*col += len;
}

/* What comes between an option's name and its value's placeholder: a
 * blank, or "[=" for a value that may be left out (and so must be joined
 * to the name, as getopt reads it). */
static const char *arg_before(const struct opt *row)
{
	return !row->arg ? "" : row->flags & OPT_OPTIONAL ? "[=" : " ";
}

int opt_item(char *buf, size_t n, const struct opt *row, bool required)
{
	char l[3];

	return snprintf(buf, n, "%s%s%s%s%s%s%s%s", required ? "" : "[", opt_shown(row, l),
			row->flags & OPT_SHORT ? "" : row->name, arg_before(row),
			row->arg ? row->arg : "", row->arg && (row->flags & OPT_OPTIONAL) ? "]" : "",
			required ? "" : "]", row->flags & OPT_REPEAT ? "..." : "");
}

static void put_item(FILE *f, const struct opt *row, bool required, size_t indent, size_t *col)
{
	char item[160];

	opt_item(item, sizeof(item), row, required);
	put_word(f, item, strlen(item), indent, col);
}

void opt_usage(FILE *f, const char *prog, const struct opt *table)
{
	size_t indent = strlen("usage: ") + strlen(prog) + 1, col = indent;
	const char *sep = "|";

	fprintf(f, "usage: %s ", prog);
	for (int pass = 0; pass < 2; pass++)
		for (const struct opt *r = table; r->name; r++)
			if (!(r->flags & (OPT_STOP | OPT_HIDE_USAGE)) &&
			    !!(r->flags & OPT_REQUIRED) == (pass == 0))
				put_item(f, r, pass == 0, indent, &col);
	for (const struct opt *r = table; r->name; r++) {
		if (!(r->flags & OPT_STOP))
			continue;
		char item[80];
		int len = snprintf(item, sizeof(item), "%s --%s", sep, r->name);

		put_word(f, item, (size_t)len, indent, &col);
		sep = "|";
	}
	fputc('\n', f);
}

void opt_help(FILE *f, const struct opt *table)
{
	for (const struct opt *r = table; r->name; r++) {
		if (r->flags & OPT_STOP)
			continue;
		char l[3];
		int head =
		    fprintf(f, "  %s%s%s%s%s", opt_shown(r, l), r->flags & OPT_SHORT ? "" : r->name,
			    arg_before(r), r->arg ? r->arg : "",
			    r->arg && (r->flags & OPT_OPTIONAL) ? "]" : "");
		size_t indent = head + 2 <= HELP_COL ? HELP_COL : (size_t)head + 2;
		size_t col = indent;

		fprintf(f, "%*s", (int)(indent - (size_t)head), "");
		for (const char *p = r->help ? r->help : ""; *p;) {
			size_t len = strcspn(p, " ");

			if (len)
				put_word(f, p, len, indent, &col);
			p += len;
			p += strspn(p, " ");
		}
		fputc('\n', f);
	}
}
