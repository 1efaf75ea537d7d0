/* cli: every command's usage line names every option it takes (its getopt
 * table, caught here by standing in for getopt_long) and every option its
 * --help lists, and nothing else; errors are one line and a pointer to
 * --help. The commands run in this process, their stdout in a file. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>
#include <ctype.h>
#include <dlfcn.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "controller/cli/cli.h"
#include "controller/schedule/internal.h"
#include "tests/unit/words.h"
#include "util/util.h"

#define MAX_OPTS 256

/* An option as a command knows it: "--name" or "-c", and for a long one
 * the short letter getopt returns for it (0 when none). */
struct help_opt {
	char name[48];
	int val;
};

struct help_opts {
	struct help_opt o[MAX_OPTS];
	size_t n;
};

static void opts_add(struct help_opts *s, const char *name, int val)
{
	for (size_t i = 0; i < s->n; i++)
		if (strcmp(s->o[i].name, name) == 0)
			return;
	assert_true(s->n < MAX_OPTS);
	snprintf(s->o[s->n].name, sizeof(s->o[s->n].name), "%s", name);
	s->o[s->n++].val = val;
}

static bool opts_has(const struct help_opts *s, const char *name)
{
	for (size_t i = 0; i < s->n; i++)
		if (strcmp(s->o[i].name, name) == 0)
			return true;
	return false;
}

/* What the commands passed to getopt_long since the last reset. A test
 * stands in for a libc function here, so this one is global. */
static struct help_opts seen;

int getopt_long(int argc, char *const argv[], const char *shortopts, const struct option *longopts,
		int *longindex)
{
	typedef int (*getopt_fn)(int, char *const[], const char *, const struct option *, int *);
	getopt_fn real = (getopt_fn)(uintptr_t)dlsym(RTLD_NEXT, "getopt_long");
	char s[3] = "-";

	for (const char *p = shortopts; *p; p++)
		if (*p != ':' && *p != '+' && *p != '-') {
			s[1] = *p;
			opts_add(&seen, s, *p);
		}
	for (const struct option *o = longopts; o && o->name; o++) {
		char name[48];

		snprintf(name, sizeof(name), "--%s", o->name);
		opts_add(&seen, name, o->flag ? 0 : o->val);
	}
	return real(argc, argv, shortopts, longopts, longindex);
}

/* Run `ofc ARGS...` here; its stdout (and stderr) as a string, the exit
 * status in *rc. Caller frees. */
static char *run(int *rc, const char *const *args, char **err_out)
{
	char out_path[] = "/tmp/ofc-test-cli.XXXXXX", err_path[] = "/tmp/ofc-test-cli.XXXXXX";
	int out = mkstemp(out_path), err = mkstemp(err_path);
	int saved_out = dup(STDOUT_FILENO), saved_err = dup(STDERR_FILENO);
	char *argv[32], *owned[32], *text, *etext;
	int argc = 0;
	size_t len;
	struct ofc_error e = {0};

	assert_true(out >= 0 && err >= 0);
	argv[argc++] = xstrdup("ofc");
	for (const char *const *a = args; *a; a++)
		argv[argc++] = xstrdup(*a);
	argv[argc] = NULL;
	/* ofc takes --socket PATH out of argv, in place */
	memcpy(owned, argv, (size_t)argc * sizeof(*argv));
	fflush(stdout);
	fflush(stderr);
	dup2(out, STDOUT_FILENO);
	dup2(err, STDERR_FILENO);
	*rc = ofc_cli_main(argc, argv);
	fflush(stdout);
	fflush(stderr);
	dup2(saved_out, STDOUT_FILENO);
	dup2(saved_err, STDERR_FILENO);
	close(saved_out);
	close(saved_err);
	close(out);
	close(err);
	assert_int_equal(read_file(out_path, 1 << 20, &text, &len, &e), 0);
	assert_int_equal(read_file(err_path, 1 << 20, &etext, &len, &e), 0);
	unlink(out_path);
	unlink(err_path);
	if (err_out)
		*err_out = etext;
	else
		free(etext);
	for (int i = 0; i < argc; i++)
		free(owned[i]);
	return text;
}

/* The option words of some text: "--name" and "-c" (one letter), each
 * standing alone (not the "-V" of "U-V"). */
static void words(struct help_opts *s, const char *text, size_t len)
{
	size_t i = 0;

	while (i < len) {
		bool alone =
		    text[i] == '-' &&
		    (i == 0 || !(isalnum((unsigned char)text[i - 1]) || text[i - 1] == '-'));
		size_t j = i + 1, dashes = 1, start;

		if (!alone) {
			i++;
			continue;
		}
		if (j < len && text[j] == '-') {
			j++;
			dashes = 2;
		}
		start = j;
		while (j < len && (isalnum((unsigned char)text[j]) || text[j] == '-'))
			j++;
		if (j > start && isalpha((unsigned char)text[start]) &&
		    (dashes == 2 || j - start == 1)) {
			char name[48];

			snprintf(name, sizeof(name), "%.*s", (int)(j - i), text + i);
			opts_add(s, name, 0);
		}
		i = j;
	}
}

/* The usage of `ofc PREFIX ...`, continuation lines included, after the
 * command's own name; and the options --help lists: lines indented one to
 * four spaces that start with an option, whose words up to the first gap
 * of two spaces are the option and its argument ("--format F -o OUT"). */
static void parse_help(const char *help, const char *name, struct help_opts *usage,
		       struct help_opts *listed)
{
	char prefix[96];
	const char *p = help, *nl;

	/* reconfigure, watch, ...: the daemon's commands, --socket PATH or not */
	snprintf(prefix, sizeof(prefix), "usage: ofc %s ", name);
	if (strncmp(help, prefix, strlen(prefix)) != 0)
		snprintf(prefix, sizeof(prefix), "usage: ofc --socket PATH %s ", name);
	if (strncmp(help, prefix, strlen(prefix)) != 0)
		fail_msg("ofc %s --help does not start with its usage: %.80s", name, help);
	p += strlen(prefix);
	for (;;) {
		nl = strchr(p, '\n');
		words(usage, p, nl ? (size_t)(nl - p) : strlen(p));
		if (!nl || strncmp(nl + 1, "       ", 7) != 0)
			break;
		p = nl + 1;
	}
	for (p = nl; p && *p; p = strchr(p, '\n')) {
		const char *line = ++p, *end = strchr(line, '\n'), *gap;
		size_t indent = strspn(line, " ");

		if (!end)
			end = line + strlen(line);
		if (indent < 1 || indent > 4 || line[indent] != '-')
			continue;
		gap = strstr(line + indent, "  ");
		if (!gap || gap > end)
			gap = end;
		words(listed, line + indent, (size_t)(gap - line - indent));
	}
}

struct command {
	char name[64]; /* as in "ofc NAME --help" */
};

/* The commands `ofc --help` lists, and the ones ofcd answers. */
static size_t commands(struct command *c, size_t max)
{
	static const char *const help[] = {"--help", NULL};
	int rc;
	char *text = run(&rc, help, NULL), *p = strstr(text, "\ncommands:\n");
	size_t n = 0;
	const char *sock = strstr(text, "ofc --socket PATH ");

	assert_int_equal(rc, 0);
	assert_non_null(p);
	for (p = strchr(p + 1, '\n') + 1; p[0] == ' ' && p[1] == ' ' && n < max;
	     p = strchr(p, '\n') + 1) {
		size_t k = strspn(p + 2, "abcdefghijklmnopqrstuvwxyz-");

		snprintf(c[n++].name, sizeof(c->name), "%.*s", (int)k, p + 2);
	}
	/* "ofc --socket PATH status|apply|... [ARGS]" */
	assert_non_null(sock);
	sock += strlen("ofc --socket PATH ");
	while (*sock != ' ' && n < max) {
		size_t k = strcspn(sock, "| ");

		snprintf(c[n++].name, sizeof(c->name), "--socket PATH %.*s", (int)k, sock);
		sock += k + (sock[k] == '|');
	}
	free(text);
	return n;
}

static void test_usage_lists_every_option(void **state)
{
	struct command cmds[64];
	size_t n = commands(cmds, 64);
	(void)state;

	int bad = 0;

	assert_true(n > 20);
	for (size_t i = 0; i < n; i++) {
		static struct help_opts usage, listed, known;
		char help_name[64];
		const char *argv[8];
		int rc, k = 0;
		char *text;

		memset(&usage, 0, sizeof(usage));
		memset(&known, 0, sizeof(known));
		/* "--socket PATH status": ofc --socket /nonexistent status --help */
		memcpy(help_name, cmds[i].name, sizeof(help_name));
		char *sp = strstr(help_name, "PATH ");
		if (sp) {
			argv[k++] = "--socket";
			argv[k++] = "/nonexistent/ofcd.sock";
			argv[k++] = sp + 5;
		} else {
			argv[k++] = help_name;
		}
		argv[k++] = "--help";
		argv[k] = NULL;
		memset(&listed, 0, sizeof(listed));
		memset(&seen, 0, sizeof(seen));
		text = run(&rc, argv, NULL);
		assert_int_equal(rc, 0);
		parse_help(text, cmds[i].name, &usage, &listed);
		known = seen;
		/* An action word with its own --help ("testbed run --help"):
		 * its options belong to the same usage line. */
		const char *u = strstr(text, cmds[i].name) + strlen(cmds[i].name) + 1;
		u += *u == '('; /* "(prolog|epilog | topology FILE ...)": one of them */
		size_t w = strcspn(u, " \n");
		if (w && strspn(u, "abcdefghijklmnopqrstuvwxyz|") == w) {
			char acts[128], *save = NULL;

			snprintf(acts, sizeof(acts), "%.*s", (int)w, u);
			for (char *a = strtok_r(acts, "|", &save); a;
			     a = strtok_r(NULL, "|", &save)) {
				/* through ofcd too: "--socket PATH cluster status" */
				const char *av[] = {sp ? "--socket" : help_name,
						    sp ? "/nonexistent/ofcd.sock" : a,
						    sp ? sp + 5 : "--help",
						    sp ? a : NULL,
						    "--help",
						    NULL};
				char *t;
				struct help_opts more = {0};

				memset(&seen, 0, sizeof(seen));
				t = run(&rc, av, NULL);
				assert_int_equal(rc, 0);
				parse_help(t, cmds[i].name, &more, &listed);
				for (size_t j = 0; j < seen.n; j++)
					opts_add(&known, seen.o[j].name, seen.o[j].val);
				free(t);
			}
		}
		/* Every option --help lists is in the usage line. */
		for (size_t j = 0; j < listed.n; j++)
			if (!opts_has(&usage, listed.o[j].name) &&
			    strcmp(listed.o[j].name, "--help"))
				bad++, print_error(
					   "ofc %s: --help lists %s, its usage line does not\n",
					   cmds[i].name, listed.o[j].name);
		/* Every long option getopt knows is in the usage line, itself
		 * or by its letter (--output as -o). */
		for (size_t j = 0; j < known.n; j++) {
			const struct help_opt *o = &known.o[j];
			char letter[3] = {'-', (char)o->val, 0};

			if (strncmp(o->name, "--", 2) || strcmp(o->name, "--help") == 0)
				continue;
			if (!opts_has(&usage, o->name) &&
			    !(o->val > 32 && o->val < 127 && opts_has(&usage, letter)))
				bad++,
				    print_error("ofc %s takes %s, its usage line does not say so\n",
						cmds[i].name, o->name);
		}
		/* And the usage line offers nothing getopt does not know. */
		for (size_t j = 0; j < usage.n; j++)
			if (!opts_has(&known, usage.o[j].name))
				bad++, print_error("ofc %s: the usage line offers %s, which it "
						   "does not take\n",
						   cmds[i].name, usage.o[j].name);
		free(text);
	}
	if (bad)
		fail_msg("%d options missing from usage lines, or offered without being taken",
			 bad);
}
/* A usage error is one line and a pointer to --help, never the usage. */
static void test_usage_error_is_one_line(void **state)
{
	static const char *const bad[][6] = {
	    {"schedule", "--topology", "torus:4x4", NULL},
	    {"plan", NULL},
	    {"topo", "torus:4x4", "--colour", NULL},
	    {"--socket", "/nonexistent", "schedule", NULL},
	};
	static const char *const want[] = {
	    "ofc schedule: missing --collective\nTry 'ofc schedule --help'.\n",
	    "ofc plan: missing FILE\nTry 'ofc plan --help'.\n",
	    "ofc topo: unknown option '--colour'\nTry 'ofc topo --help'.\n",
	    ("ofc --socket PATH schedule: missing --collective\n"
	     "Try 'ofc --socket PATH schedule --help'.\n"),
	};
	(void)state;

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		char *err, *out;
		int rc;

		out = run(&rc, bad[i], &err);
		assert_int_equal(rc, 2);
		assert_string_equal(err, want[i]);
		free(out);
		free(err);
	}
}

/* `ofc CMD ARGS... --help`'s text names every row of the engine table
 * that fabrics holds (but those with a flag of skip), and every lowering
 * where lowerings. */
static void help_names(const char *const *args, unsigned fabrics, unsigned skip, bool lowerings)
{
	const struct engine_ops *e;
	const struct a2a_lowering *l;
	char *out;
	int rc;

	out = run(&rc, args, NULL);
	assert_int_equal(rc, 0);
	for (unsigned i = 0; (e = engine_at(i)); i++)
		if ((e->fabrics & fabrics) && !(e->flags & skip) && !has_word(out, e->name))
			fail_msg("ofc %s --help does not name --algo %s", args[0], e->name);
	for (unsigned i = 0; lowerings && (l = a2a_lowering_at(i)); i++)
		if (!has_word(out, l->name))
			fail_msg("ofc %s --help does not name --lowering %s", args[0], l->name);
	free(out);
}

/* The names a command's --help lists are the ones it takes: every row of
 * the engine table and every lowering, and a name that is none of them is
 * refused with the list. */
static void test_help_names_what_is_taken(void **state)
{
	static const char *const schedule[] = {"schedule", "--help", NULL};
	static const char *const optree[] = {"optree", "--help", NULL};
	static const char *const ring[] = {"ring", "--help", NULL};
	static const char *const remote[] = {"--socket", "/nonexistent", "schedule", "--help",
					     NULL};
	static const char *const bad_lowering[] = {"schedule",	   "--topology", "torus:4x4",
						   "--collective", "alltoall",	 "--lowering",
						   "nope",	   NULL};
	static const char *const bad_algo[] = {"optree", "--nodes", "8",    "--wavelengths",
					       "2",	 "--algo",  "nope", NULL};
	const struct a2a_lowering *l;
	char *out, *err;
	int rc;

	(void)state;
	help_names(schedule, ENGINE_ANY, ENGINE_EVERY, true);
	help_names(optree, ENGINE_RING, 0, false);
	help_names(ring, ENGINE_RING, ENGINE_EVERY, false);
	/* ofcd's: one algorithm a request, no comparisons */
	help_names(remote, ENGINE_ANY, ENGINE_COMPARE, true);
	out = run(&rc, bad_lowering, &err);
	assert_int_equal(rc, 2);
	for (unsigned i = 0; (l = a2a_lowering_at(i)); i++) {
		const char *one[] = {"schedule", "--lowering", l->name, NULL};
		char *o, *e;
		int r;

		if (!has_word(err, l->name))
			fail_msg("'%s' is not in: %s", l->name, err);
		/* taken: what is missing is the topology */
		o = run(&r, one, &e);
		assert_int_equal(r, 2);
		assert_non_null(strstr(e, "give a config FILE or --topology"));
		free(o);
		free(e);
	}
	free(out);
	free(err);
	out = run(&rc, bad_algo, &err);
	assert_int_equal(rc, 2);
	assert_non_null(strstr(err, "'nope'"));
	free(out);
	free(err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_usage_lists_every_option),
	    cmocka_unit_test(test_usage_error_is_one_line),
	    cmocka_unit_test(test_help_names_what_is_taken),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
