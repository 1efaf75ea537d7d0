/* The option tables (util/opts.c; ofcd's controller/ofcd/options.c and
 * ofc-gateway's controller/gateway/options.c, ofc-hostd's controller/cli/hostd.c): every row has a
 * name, its help and, for a numeric parser, a range that the parser keeps: its ends are taken, a
 * value past either end is refused with the row's words; one loop reads any table (flags, repeats,
 * --help, unknown options, missing values, stray arguments); and the help lists every row. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "controller/cli/internal.h"
#include "controller/gateway/options.h"
#include "controller/ofcd/options.h"

/* A row's value, however the parser stores it, as a double. */
static double stored(const struct opt *r, const void *base)
{
	const char *p = (const char *)base + r->off;

	if (r->parse == opt_size)
		return (double)*(const uint64_t *)p;
	if (r->parse == opt_u32 || r->parse == opt_size32 || r->parse == opt_ms)
		return (double)*(const uint32_t *)p * (r->parse == opt_ms ? 0.001 : 1);
	if (r->parse == opt_octal)
		return (double)*(const unsigned *)p;
	return *(const double *)p;
}

static bool numeric(const struct opt *r)
{
	return r->parse == opt_u32 || r->parse == opt_size || r->parse == opt_size32 ||
	       r->parse == opt_seconds || r->parse == opt_seconds_or_0 ||
	       r->parse == opt_seconds_none || r->parse == opt_ms || r->parse == opt_octal;
}

/* v as the row's parser reads it: integers for counts, sizes and modes
 * (octal), seconds for durations. */
static void text(const struct opt *r, double v, char *buf, size_t n)
{
	if (r->parse == opt_octal)
		snprintf(buf, n, "%llo", (unsigned long long)v);
	else if (r->parse == opt_u32 || r->parse == opt_size || r->parse == opt_size32)
		snprintf(buf, n, "%.0f", v);
	else
		snprintf(buf, n, "%.6g", v);
}

static void expect_taken(const struct opt *r, double v, size_t size)
{
	char *base = calloc(1, size), arg[64];
	struct ofc_error err = {0};

	text(r, v, arg, sizeof(arg));
	if (r->parse(r, arg, base, &err) != 0)
		fail_msg("--%s %s refused: %s", r->name, arg, err.msg);
	double got = stored(r, base);
	if (r->parse == opt_seconds_none && v == 0)
		assert_true(got == -1); /* 0: none */
	else if (fabs(got - v) > 1e-9 * fmax(1, v))
		fail_msg("--%s %s stored %g", r->name, arg, got);
	free(base);
}

static void expect_refused(const struct opt *r, double v, size_t size)
{
	char *base = calloc(1, size), arg[64], want[600];
	struct ofc_error err = {0};

	text(r, v, arg, sizeof(arg));
	if (r->parse(r, arg, base, &err) == 0)
		fail_msg("--%s %s taken, out of [%g, %g]", r->name, arg, r->min, r->max);
	snprintf(want, sizeof(want), "--%s '%s': %s", r->name, arg, r->expect);
	assert_string_equal(err.msg, want);
	assert_int_equal(err.code, OFC_E_USAGE);
	free(base);
}

/* The bytes a row's parser writes at its field. */
static size_t field_size(const struct opt *r)
{
	if (!r->parse)
		return sizeof(bool);
	if (r->parse == opt_u32 || r->parse == opt_size32 || r->parse == opt_ms ||
	    r->parse == cli_row_u32)
		return sizeof(uint32_t);
	if (r->parse == opt_octal || r->parse == opt_choice || r->parse == cli_row_choice ||
	    r->parse == cli_row_collective)
		return sizeof(int);
	if (r->parse == cli_row_format || r->parse == cli_row_format_flag)
		return sizeof(struct cli_format_given);
	return sizeof(double); /* doubles, sizes, pointers; a table's own: at least this */
}

/* What every row of any table holds: a name once, its help, a parser
 * with a placeholder or neither, a field inside the struct. */
static void check_row(const struct opt *table, const struct opt *r, size_t size)
{
	if (r->flags & OPT_OPERAND) {
		/* the usage's words alone: nothing parses it, nothing lists it */
		assert_true(!r->parse && !r->arg && !r->letter && !r->help);
		return;
	}
	{
		/* A name as getopt_long and the docs' check read it, said once. */
		assert_true(r->name[0] >= 'a' && r->name[0] <= 'z');
		assert_int_equal(strspn(r->name, "abcdefghijklmnopqrstuvwxyz0123456789-"),
				 strlen(r->name));
		for (const struct opt *q = table; q < r; q++)
			if (strcmp(q->name, r->name) == 0)
				fail_msg("--%s twice", r->name);
		if (!r->help || strlen(r->help) < 8)
			fail_msg("--%s has no help", r->name);
		/* A value has a placeholder and a parser; a flag no placeholder
		 * (and a parser when it does more than set a bool). */
		if (r->arg && !r->parse)
			fail_msg("--%s: a placeholder without a parser", r->name);
		if (r->off + field_size(r) > size && !(r->flags & OPT_STOP) && r->off)
			fail_msg("--%s: its field is outside the struct", r->name);
		if (r->parse == opt_choice) {
			assert_non_null(r->expect);
			assert_non_null(r->choices);
			assert_non_null(r->choices[0].name);
		}
	}
}

static void check_table(const struct opt *table, size_t size)
{
	size_t n = 0;

	for (const struct opt *r = table; r->name; r++, n++) {
		check_row(table, r, size);
		if (!numeric(r))
			continue;
		/* A range, the words that say it, and a parser that keeps it. */
		if (!r->expect)
			fail_msg("--%s: no words for its range", r->name);
		if (!(r->min >= 0 && r->min <= r->max))
			fail_msg("--%s: range [%g, %g]", r->name, r->min, r->max);
		expect_taken(r, r->min, size);
		if (isfinite(r->max))
			expect_taken(r, r->max, size);
		if (r->min > 0)
			expect_refused(r,
				       r->parse == opt_u32 || r->parse == opt_size ||
					       r->parse == opt_size32
					   ? r->min - 1
					   : r->min / 2,
				       size);
		if (isfinite(r->max))
			expect_refused(r,
				       r->parse == opt_u32 || r->parse == opt_size ||
					       r->parse == opt_size32 || r->parse == opt_octal
					   ? r->max + 1
					   : r->max * 2,
				       size);
	}
	assert_true(n > 10);
}

static void test_ofcd_rows(void **state)
{
	(void)state;
	check_table(ofcd_option_table, sizeof(struct ofcd_args));
}

static void test_gateway_rows(void **state)
{
	(void)state;
	check_table(gw_option_table, sizeof(struct gw_opts));
}

static void test_hostd_rows(void **state)
{
	(void)state;
	check_table(hostd_option_table, hostd_struct_size);
}

/* v given to r: refused as "bad --NAME 'v': ..." (a usage error), or
 * taken. */
static void cli_try(const struct cli_table *t, const struct opt *r, const char *v, bool ok)
{
	char *base = calloc(1, t->size), want[200];
	struct ofc_error err = {0};
	int rc = r->parse(r, v, base, &err);

	if (ok && rc != 0)
		fail_msg("ofc %s --%s %s refused: %s", t->name, r->name, v, err.msg);
	if (!ok) {
		if (rc == 0)
			fail_msg("ofc %s --%s %s taken", t->name, r->name, v);
		snprintf(want, sizeof(want), "bad --%s '%s': ", r->name, v);
		if (strncmp(err.msg, want, strlen(want)) != 0)
			fail_msg("ofc %s --%s %s: '%s' does not start '%s'", t->name, r->name, v,
				 err.msg, want);
		assert_int_equal(err.code, OFC_E_USAGE);
	}
	free(base);
}

/* The CLI's tables (controller/cli/cmd_*.c): every row as any table's,
 * and a bad value of each kind refused with the option's name: a word
 * for a number, a number past either end, a size or a rate of 0, a
 * duration that is none, a choice that is not one; good ones taken. */
static void test_cli_rows(void **state)
{
	size_t ntables = 0, checked = 0;
	char v[32];

	(void)state;
	for (const struct cli_table *const *tp = cli_tables; *tp; tp++, ntables++) {
		const struct cli_table *t = *tp;

		for (const struct opt *r = t->table; r->name; r++) {
			check_row(t->table, r, t->size);
			if (r->parse == cli_row_u32) {
				assert_true(r->min <= r->max && r->max <= UINT32_MAX);
				cli_try(t, r, "x", false);
				snprintf(v, sizeof(v), "%.0f", r->max + 1);
				cli_try(t, r, v, false);
				snprintf(v, sizeof(v), "%.0f", r->max);
				cli_try(t, r, v, true);
				snprintf(v, sizeof(v), "%.0f", r->min);
				cli_try(t, r, v, true);
				if (r->min > 0) {
					snprintf(v, sizeof(v), "%.0f", r->min - 1);
					cli_try(t, r, v, false);
				}
			} else if (r->parse == cli_row_size) {
				cli_try(t, r, "0", false), cli_try(t, r, "1x", false);
				cli_try(t, r, "1MiB", true);
			} else if (r->parse == cli_row_rate) {
				cli_try(t, r, "0Gbps", false), cli_try(t, r, "fast", false);
				cli_try(t, r, "100Gbps", true);
			} else if (r->parse == cli_row_duration) {
				cli_try(t, r, "3q", false), cli_try(t, r, "-1", false);
				cli_try(t, r, "1s", true);
			} else if (r->parse == cli_row_choice) {
				assert_non_null(r->expect);
				cli_try(t, r, "nonesuch", false);
				cli_try(t, r, r->choices[0].name, true);
			} else if (r->parse == cli_row_collective ||
				   r->parse == cli_row_collective_name) {
				cli_try(t, r, "nonesuch", false);
				cli_try(t, r, "allreduce", true);
			} else if (r->parse == cli_row_fraction) {
				cli_try(t, r, "0", false), cli_try(t, r, "1.5", false);
				cli_try(t, r, "x", false), cli_try(t, r, "0.5", true);
				cli_try(t, r, "1", true);
			} else if (r->parse == cli_row_percent) {
				cli_try(t, r, "0", false), cli_try(t, r, "100%", false);
				cli_try(t, r, "lots", false), cli_try(t, r, "25%", true);
				cli_try(t, r, "25", true);
			} else {
				continue;
			}
			checked++;
		}
	}
	assert_true(ntables >= 32); /* the remote commands' 16 too */
	assert_true(checked >= 60);
}

/* Every row is in --help and in the usage, and the help's lines fit. */
static void check_help(const struct opt *table, void (*help)(FILE *))
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	help(f);
	fclose(f);
	for (const struct opt *r = table; r->name; r++) {
		char want[80];

		snprintf(want, sizeof(want), "--%s%s", r->name, r->arg ? " " : "");
		if (!strstr(buf, want))
			fail_msg("--help lacks %s", want);
		snprintf(want, sizeof(want), "\n  --%s", r->name);
		if (!(r->flags & OPT_STOP) && !strstr(buf, want))
			fail_msg("--help has no paragraph for --%s", r->name);
	}
	for (char *line = buf, *nl; (nl = strchr(line, '\n')); line = nl + 1)
		if (nl - line > 80 && !strstr(line, "  --"))
			fail_msg("a help line of %d columns: %.*s", (int)(nl - line),
				 (int)(nl - line), line);
	free(buf);
}

static void ofcd_help(FILE *f)
{
	ofcd_args_help(f);
}

static void gw_help(FILE *f)
{
	gw_args_help(f);
}

static void test_help_lists_every_row(void **state)
{
	(void)state;
	check_help(ofcd_option_table, ofcd_help);
	check_help(gw_option_table, gw_help);
}

/* The loop: flags, repeats, values, --help and -h, and each way to get
 * the command line wrong, said as ofcd's tests expect. */
struct small {
	bool flag;
	const char *name;
	uint32_t n;
};

static int p_count(const struct opt *r, const char *arg, void *base, struct ofc_error *err)
{
	(void)r;
	(void)arg;
	(void)err;
	((struct small *)base)->n++;
	return 0;
}

static const struct opt small_table[] = {
    {"flag", NULL, offsetof(struct small, flag), NULL, "a flag"},
    {"name", opt_str, offsetof(struct small, name), "NAME", "a name", .flags = OPT_REQUIRED},
    {"again", p_count, 0, "X", "counted", .flags = OPT_REPEAT},
    {"help", NULL, 0, NULL, "this", .flags = OPT_STOP, .letter = 'h'},
    {NULL},
};

static int run(struct small *s, const struct opt **stop, struct ofc_error *err, int argc, ...)
{
	char *argv[16] = {"prog"};
	va_list ap;

	va_start(ap, argc);
	for (int i = 1; i < argc; i++)
		argv[i] = va_arg(ap, char *);
	va_end(ap);
	*s = (struct small){0};
	*stop = NULL;
	*err = (struct ofc_error){0};
	return opt_parse(small_table, argc, argv, s, stop, err);
}

static void test_loop(void **state)
{
	struct small s;
	const struct opt *stop;
	struct ofc_error err;

	(void)state;
	assert_int_equal(run(&s, &stop, &err, 6, "--flag", "--name", "x", "--again=1", "--again"),
			 -1);
	assert_string_equal(err.msg, "option '--again' needs a value");
	assert_int_equal(run(&s, &stop, &err, 6, "--flag", "--name", "x", "--again=1", "--again=2"),
			 0);
	assert_true(s.flag);
	assert_string_equal(s.name, "x");
	assert_int_equal(s.n, 2);
	assert_int_equal(run(&s, &stop, &err, 3, "--name", "x"), 0);
	assert_false(s.flag);
	assert_int_equal(run(&s, &stop, &err, 2, "-h"), 1);
	assert_string_equal(stop->name, "help");
	assert_int_equal(run(&s, &stop, &err, 2, "--help"), 1);
	assert_int_equal(run(&s, &stop, &err, 2, "--bogus"), -1);
	assert_string_equal(err.msg, "unknown option '--bogus'");
	assert_int_equal(err.code, OFC_E_USAGE);
	assert_int_equal(run(&s, &stop, &err, 2, "-x"), -1);
	assert_string_equal(err.msg, "unknown option '-x'");
	assert_int_equal(run(&s, &stop, &err, 4, "--name", "x", "stray"), -1);
	assert_string_equal(err.msg, "unexpected argument 'stray'");
}

/* The usage's shape: an alternative one of which must be given, one that
 * may be, a row inside another's item (required there or not), an
 * operand among them, and a repeated row's "..." and "(repeatable)". */
struct shape {
	const char *a, *b, *c;
	bool d;
};

static const struct opt shape_table[] = {
    {"FILE", .flags = OPT_OPERAND | OPT_REQUIRED, .alt = 1},
    {"topology", opt_str, offsetof(struct shape, a), "SPEC", "a topology", .alt = 1},
    {"device", opt_str, offsetof(struct shape, b), "NAME", "a device", .flags = OPT_REPEAT},
    {"json", NULL, offsetof(struct shape, d), NULL, "as JSON", .alt = 2},
    {"dot", NULL, offsetof(struct shape, d), NULL, "as DOT", .alt = 2},
    {"max-loss", opt_str, offsetof(struct shape, c), "P%", "stages"},
    {"grace", opt_str, offsetof(struct shape, c), "DUR", "a wait", .under = "max-loss"},
    {"user", opt_str, offsetof(struct shape, c), "NAME", "a user", .under = "max-loss",
     .flags = OPT_REQUIRED},
    {"port", opt_str, offsetof(struct shape, b), "P", "a port", .flags = OPT_REPEAT, .alt = 3},
    {"ports", opt_str, offsetof(struct shape, b), "N", "ports", .alt = 3},
    {"help", NULL, 0, NULL, "this", .flags = OPT_STOP},
    {NULL},
};

static void test_usage_shape(void **state)
{
	char text[400], *buf = NULL;
	size_t k = 0, len = 0;
	FILE *f;
	struct shape sh = {0};
	const struct opt *stop = NULL;
	struct ofc_error err = {0};
	char *argv[] = {"prog", "--topology", "t", "--grace", "1s", "x.yaml"};
	int first = 0;

	(void)state;
	opt_usage_text(text, sizeof(text), &k, shape_table, false);
	assert_string_equal(text,
			    "(FILE | --topology SPEC) [--device NAME]... [--json | --dot] "
			    "[--max-loss P% [--grace DUR] --user NAME] [--port P... | --ports N]");
	k = 0;
	opt_usage_text(text, sizeof(text), &k, shape_table, true);
	assert_true(strncmp(text, "(FILE | --topology SPEC) [--device NAME]...", 43) == 0);
	f = open_memstream(&buf, &len);
	opt_help(f, shape_table);
	fclose(f);
	assert_non_null(strstr(buf, "  --device NAME            a device (repeatable)\n"));
	assert_null(strstr(buf, "FILE")); /* an operand is the prose's to explain */
	free(buf);
	/* the operand row is no option: the words are operands as before */
	assert_int_equal(opt_parse_args(shape_table, 6, argv, &sh, &stop, &first, &err), 0);
	assert_string_equal(sh.a, "t");
	assert_int_equal(first, 5);
	/* a line too long for one is broken before its inner options */
	buf = NULL;
	f = open_memstream(&buf, &len);
	opt_usage_put(f, "usage: prog ",
		      "(--topology SPEC | --collective C --size M [--nodes N] | --partition NAME "
		      "[--topology SPEC --hosts LIST [--relabel]]) [--json]");
	fclose(f);
	assert_string_equal(
	    buf, "usage: prog (--topology SPEC | --collective C --size M [--nodes N]\n"
		 "            | --partition NAME [--topology SPEC --hosts LIST [--relabel]])\n"
		 "            [--json]\n");
	free(buf);
}

/* ofcd's own rows: the options asked together, and a value into its field. */
static void test_ofcd_args(void **state)
{
	struct ofcd_args a;
	const struct opt *stop = NULL;
	struct ofc_error err = {0};
	char *ok[] = {"ofcd", "--config",    "c.yaml", "--socket", "s",	    "--max-request-time",
		      "0",    "--device",    "a=h:1",  "--device", "b=h:2", "--link-hold-down",
		      "2.5s", "--log-level", "debug"};
	char *gw[] = {"ofcd", "--config", "c.yaml", "--socket", "s", "--gateway-socket", "g"};

	(void)state;
	assert_int_equal(ofcd_args_parse((int)ARRAY_SIZE(ok), ok, &a, &stop, &err), 0);
	assert_true(a.o.max_request_time == -1);
	assert_int_equal(a.o.noverrides, 2);
	assert_string_equal(a.o.overrides[1], "b=h:2");
	assert_int_equal(a.o.link_damp.hold_down_ms, 2500);
	assert_int_equal(a.o.log_level, OFCD_LOG_DEBUG);
	assert_true(a.o.probe_interval == 10); /* the default */
	assert_int_equal(ofcd_args_parse((int)ARRAY_SIZE(gw), gw, &a, &stop, &err), -1);
	assert_string_equal(err.msg, "--gateway-socket and --gateway-uid go together");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_ofcd_rows),  cmocka_unit_test(test_gateway_rows),
	    cmocka_unit_test(test_hostd_rows), cmocka_unit_test(test_help_lists_every_row),
	    cmocka_unit_test(test_loop),       cmocka_unit_test(test_ofcd_args),
	    cmocka_unit_test(test_cli_rows),   cmocka_unit_test(test_usage_shape),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
