/* Command-line options from a table (util.h, "command-line options"): the
 * one getopt_long loop every table goes through, the generic parsers the
 * rows name, and the usage and --help written from the rows, so that the
 * help (and the man page made from it) cannot leave an option out. */
#include "util/util.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define HELP_COL    27	/* where an option's help starts */
#define HELP_WIDTH  80	/* longest line of the help */
#define USAGE_WIDTH 79	/* and of the usage */
#define OPT_VAL0    256 /* getopt_long's val of row 0: past every short letter */

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

	for (size_t i = 0, nl = 0; i < n; i++) {
		if (table[i].flags & OPT_OPERAND)
			continue; /* the usage's words alone */
		/* a lettered row's long name says its letter, as getopt's
		 * callers write it (and as a test standing in for it reads) */
		lo[nl++] =
		    (struct option){table[i].name,
				    !table[i].arg		    ? no_argument
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

/* word at *col, wrapped to indent when the line would pass width. */
static void put_word(FILE *f, const char *word, size_t len, size_t indent, size_t *col,
		     size_t width)
{
	if (*col > indent && *col + 1 + len > width) {
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

/* The usage text being written: buf, n, and k so far (at most n - 1). */
struct usage_buf {
	char *p;
	size_t n, k;
};

static void ub_put(struct usage_buf *b, const char *fmt, ...) OFC_PRINTF(2, 3);
static void ub_put(struct usage_buf *b, const char *fmt, ...)
{
	va_list ap;
	int len;

	if (b->k + 1 >= b->n)
		return;
	va_start(ap, fmt);
	len = vsnprintf(b->p + b->k, b->n - b->k, fmt, ap);
	va_end(ap);
	b->k = len < 0 ? b->k : b->k + (size_t)len >= b->n ? b->n - 1 : b->k + (size_t)len;
}

static bool in_usage(const struct opt *r)
{
	return !(r->flags & (OPT_STOP | OPT_HIDE_USAGE));
}

static bool same_level(const struct opt *a, const char *under)
{
	return a->under == under || (a->under && under && strcmp(a->under, under) == 0);
}

/* m is of r's item: r itself, or a row of its alternative at its level. */
static bool same_item(const struct opt *m, const struct opt *r)
{
	return m == r || (r->alt && m->alt == r->alt && in_usage(m) && same_level(m, r->under));
}

/* r's item must be given: r is OPT_REQUIRED, or one of its alternatives is. */
static bool item_required(const struct opt *table, const struct opt *r)
{
	for (const struct opt *m = table; m->name; m++)
		if (same_item(m, r) && (m->flags & OPT_REQUIRED))
			return true;
	return false;
}

static void put_level(struct usage_buf *b, const struct opt *table, const char *under, int pass);

/* A row's own words ("--NAME ARG", "-o OUT", an operand's name), "..."
 * when it repeats and `repeat` says so here, then the items of the rows
 * under it. */
static void put_words(struct usage_buf *b, const struct opt *table, const struct opt *r,
		      bool repeat)
{
	char l[3];

	if (r->flags & OPT_OPERAND)
		ub_put(b, "%s", r->name);
	else
		ub_put(b, "%s%s%s%s%s", opt_shown(r, l), r->flags & OPT_SHORT ? "" : r->name,
		       arg_before(r), r->arg ? r->arg : "",
		       r->arg && (r->flags & OPT_OPTIONAL) ? "]" : "");
	ub_put(b, "%s", repeat && (r->flags & OPT_REPEAT) ? "..." : "");
	put_level(b, table, r->name, -1);
}

/* r's item: "[--NAME ARG]...", "--NAME ARG" when required, or its
 * alternatives "(A | B...)" / "[A | B]". */
static void put_usage_item(struct usage_buf *b, const struct opt *table, const struct opt *r)
{
	bool req = item_required(table, r), first = true;

	if (!r->alt) {
		ub_put(b, "%s", req ? "" : "[");
		put_words(b, table, r, req);
		ub_put(b, "%s%s", req ? "" : "]", !req && (r->flags & OPT_REPEAT) ? "..." : "");
		return;
	}
	ub_put(b, "%s", req ? "(" : "[");
	for (const struct opt *m = table; m->name; m++) {
		if (!same_item(m, r))
			continue;
		ub_put(b, "%s", first ? "" : " | ");
		put_words(b, table, m, true);
		first = false;
	}
	ub_put(b, "%s", req ? ")" : "]");
}

/* The items of the rows under `under` (NULL: the top), each after a
 * blank: all (pass -1), the required ones (0) or the others (1). An
 * alternative is written at its first row. */
static void put_level(struct usage_buf *b, const struct opt *table, const char *under, int pass)
{
	for (const struct opt *r = table; r->name; r++) {
		const struct opt *m = table;

		if (!in_usage(r) || !same_level(r, under))
			continue;
		while (m != r && !same_item(m, r))
			m++;
		if (m != r || (pass >= 0 && item_required(table, r) != (pass == 0)))
			continue;
		ub_put(b, "%s", b->k ? " " : "");
		put_usage_item(b, table, r);
	}
}

void opt_usage_text(char *buf, size_t n, size_t *k, const struct opt *table, bool required_first)
{
	struct usage_buf b = {buf, n, *k < n ? *k : n ? n - 1 : 0};

	if (!n)
		return;
	buf[b.k] = 0;
	if (required_first) {
		put_level(&b, table, NULL, 0);
		put_level(&b, table, NULL, 1);
	} else {
		put_level(&b, table, NULL, -1);
	}
	*k = b.k;
}

/* Up to a blank outside brackets. */
static size_t usage_span(const char *p)
{
	const char *q = p;
	int depth = 0;

	while (*q && (*q != ' ' || depth > 0)) {
		depth += (*q == '[' || *q == '(') - (*q == ']' || *q == ')');
		q++;
	}
	return (size_t)(q - p);
}

/* The length of the usage word at p: up to a blank outside brackets, an
 * option with its value's placeholder ("--config FILE"), a "|" alone
 * with the word after it. */
static size_t usage_word(const char *p)
{
	size_t len = usage_span(p);

	if (len == 1 && *p == '|' && p[1] == ' ' && p[2])
		return 2 + usage_word(p + 2);
	if (*p == '-' && p[len] == ' ' && p[len + 1] && !strchr(" -[(|", p[len + 1]))
		len += 1 + usage_span(p + len + 1);
	return len;
}

/* A word longer than a line, in pieces: broken at the blanks before an
 * option, a bracket or a bar (not after a bar). */
static void put_long_word(FILE *f, const char *p, size_t len, size_t indent, size_t *col)
{
	const char *end = p + len;

	while (p < end) {
		const char *q = p;

		while ((q = memchr(q, ' ', (size_t)(end - q))) &&
		       !(q + 1 < end && strchr("-[(|", q[1]) && q > p && q[-1] != '|'))
			q++;
		if (!q)
			q = end;
		put_word(f, p, (size_t)(q - p), indent, col, USAGE_WIDTH);
		p = q < end ? q + 1 : end;
	}
}

void opt_usage_put(FILE *f, const char *lead, const char *text)
{
	size_t indent = strlen(lead), col = indent;

	fputs(lead, f);
	for (const char *p = text + strspn(text, " "); *p; p += strspn(p, " ")) {
		size_t len = usage_word(p);

		if (indent + len > USAGE_WIDTH)
			put_long_word(f, p, len, indent, &col);
		else
			put_word(f, p, len, indent, &col, USAGE_WIDTH);
		p += len;
	}
	fputc('\n', f);
}

void opt_usage(FILE *f, const char *prog, const struct opt *table)
{
	char text[4096], lead[96];
	size_t k = 0;

	opt_usage_text(text, sizeof(text), &k, table, true);
	for (const struct opt *r = table; r->name && k < sizeof(text); r++)
		if (r->flags & OPT_STOP)
			k += (size_t)snprintf(text + k, sizeof(text) - k, " | --%s", r->name);
	snprintf(lead, sizeof(lead), "usage: %s ", prog);
	opt_usage_put(f, lead, text);
}

void opt_help(FILE *f, const struct opt *table)
{
	for (const struct opt *r = table; r->name; r++) {
		if (r->flags & (OPT_STOP | OPT_OPERAND))
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
				put_word(f, p, len, indent, &col, HELP_WIDTH);
			p += len;
			p += strspn(p, " ");
		}
		if ((r->flags & OPT_REPEAT) && !(r->help && strstr(r->help, "repeatable")))
			put_word(f, "(repeatable)", strlen("(repeatable)"), indent, &col,
				 HELP_WIDTH);
		fputc('\n', f);
	}
}
